#!/bin/sh
# demo.sh - `make demo`: record something meaningful with no hardware, then
# decode it onto one timeline.
#  1. a SIMULATED Tegra410 (34 uncore PMUs, each its own drifting clock with
#     DVFS steps, one central scheduler per socket) recorded in virtual time
#     for 6 s of its workload (cpu_compute, gpu_stream, pcie_dma phases,
#     bookmarked as they change), decoded to per-phase tables on the
#     terminal, to CSV and to a Perfetto trace;
#  2. the same simulator live for 1.5 s while a small script sets bookmarks
#     through the control socket that record opens for it;
#  3. this machine's real PMUs (software counters and msr/tsc) while a
#     small shell workload runs two phases (its CPU slices where BPF loads);
#  4. a self-contained HTML report of 1 and 3 (t410trace report), to open
#     in a browser: build/demo-sim.html and build/demo-host.html.
# Each run replaces the logs of the one before (-f): they are the demo's.
set -eu
bin=${1:-build/t410trace}
out=$(dirname "$bin")

say() { printf '\n== %s\n$ %s\n' "$1" "$2"; }

say "1. simulated Tegra410, 6 s of its workload in virtual time, 1 ms triggers" \
    "t410trace record -f --sim --virtual --per-socket --period 1ms --duration 6s -o $out/demo-sim.t4t"
"$bin" record -f --sim --virtual --per-socket --period 1ms --duration 6s -o "$out/demo-sim.t4t"
say "decoded: UCF memory traffic and NVLink-C2C latency per phase on one timeline" \
    "t410trace decode $out/demo-sim.t4t --pmu ucf,nvlink_c2c"
"$bin" decode "$out/demo-sim.t4t" --pmu ucf,nvlink_c2c
"$bin" decode "$out/demo-sim.t4t" -f csv -o "$out/demo-sim.csv" 2>/dev/null
"$bin" decode "$out/demo-sim.t4t" -f perfetto -o "$out/demo-sim.pftrace" 2>/dev/null

phases="$out/demo-phases.sh"
cat > "$phases" <<EOS
#!/bin/sh
for p in load compute store; do
	"$bin" ctl bookmark \$p >/dev/null
	sleep 0.5
done
EOS
chmod +x "$phases"
say "2. the simulator live, phases set by a workload through the control socket" \
    "t410trace record -f --sim --per-socket --period 1ms -o $out/demo-live.t4t -- $phases"
"$bin" record -f --sim --per-socket --period 1ms -o "$out/demo-live.t4t" -- "$phases"
say "its phases" "t410trace decode $out/demo-live.t4t --pmu 'cmem*' --event '*_bw,*latency_ns'"
"$bin" decode "$out/demo-live.t4t" --pmu 'cmem*' --event '*_bw,*latency_ns' | sed -n '/^PHASES/,/^CLOCK/p'

work="i=0; while [ \$i -lt 300000 ]; do i=\$((i+1)); done; $bin ctl bookmark sleep; sleep 0.5"
say "3. this machine's real PMUs while a shell loop spins, then sleeps" \
    "t410trace record -f --period 1ms --bookmark spin -o $out/demo-host.t4t -- sh -c '$work'"
"$bin" record -f --period 1ms --bookmark spin -o "$out/demo-host.t4t" -- sh -c "$work"
say "decoded" "t410trace decode $out/demo-host.t4t"
"$bin" decode "$out/demo-host.t4t"
"$bin" decode "$out/demo-host.t4t" -f csv -o "$out/demo-host.csv" 2>/dev/null
"$bin" decode "$out/demo-host.t4t" -f perfetto -o "$out/demo-host.pftrace" 2>/dev/null

say "4. the reports: plots over time with the phases, the same tables as decode" \
    "t410trace report $out/demo-sim.t4t; t410trace report $out/demo-host.t4t"
"$bin" report "$out/demo-sim.t4t"
"$bin" report "$out/demo-host.t4t"

cat <<EOT

== files
  $out/demo-sim.t4t, $out/demo-live.t4t, $out/demo-host.t4t   the logs ('t410trace info FILE')
  $out/demo-sim.csv, $out/demo-host.csv       timelines: one row per interval and event or metric
  $out/demo-sim.pftrace, $out/demo-host.pftrace  Perfetto traces: https://ui.perfetto.dev, "Open trace file"
  $out/demo-sim.html, $out/demo-host.html     reports: open them in any browser, from disk
                                              (e.g. xdg-open $out/demo-sim.html, or file://$(cd "$out" && pwd)/demo-sim.html)

  python3 -c "import csv; r = csv.DictReader(open('$out/demo-sim.csv')); print(r.fieldnames); print(next(r))"
  t410trace decode $out/demo-sim.t4t --pmu 'nvidia_pcie_pmu_0_*' --event '*_bw' -f csv | head
  t410trace decode $out/demo-sim.t4t --bin 10ms --pmu ucf --from gpu_stream --to gpu_stream -f csv | head
EOT
