#!/bin/sh
# demo.sh - `make demo`: record something meaningful with no hardware, then
# decode it onto one timeline.
#  1. a SIMULATED Tegra410 (34 uncore PMUs, each its own drifting clock,
#     one central scheduler per socket) while a small workload script moves
#     through three phases (load, compute, store), setting bookmarks through
#     the control socket that record opens for it; decoded to the per-phase
#     summary on the terminal, and to CSV and a Perfetto trace;
#  2. this machine's real PMUs (software counters and msr/tsc) for 1 s,
#     decoded the same way.
set -eu
bin=${1:-build/t410trace}
out=$(dirname "$bin")
phases="$out/demo-phases.sh"
cat > "$phases" <<EOS
#!/bin/sh
for p in load compute store; do
	"$bin" ctl bookmark \$p >/dev/null
	sleep 0.5
done
EOS
chmod +x "$phases"

say() { printf '\n== %s\n$ %s\n' "$1" "$2"; }

say "1. simulated Tegra410 (one scheduler per socket), 1 ms triggers, phases set by the workload" \
    "t410trace record --sim --per-socket --period 1ms --bookmark start -o $out/demo-sim.t4t -- $phases"
"$bin" record --sim --per-socket --period 1ms --bookmark start -o "$out/demo-sim.t4t" -- "$phases"
say "decoded: one timeline, metrics per phase" "t410trace decode $out/demo-sim.t4t"
"$bin" decode "$out/demo-sim.t4t"
"$bin" decode "$out/demo-sim.t4t" -f csv -o "$out/demo-sim.csv" 2>/dev/null
"$bin" decode "$out/demo-sim.t4t" -f perfetto -o "$out/demo-sim.pftrace" 2>/dev/null

say "2. this machine's real PMUs for 1 s" \
    "t410trace record --period 1ms --duration 1s --bookmark host -o $out/demo-host.t4t"
"$bin" record --period 1ms --duration 1s --bookmark host -o "$out/demo-host.t4t"
say "decoded" "t410trace decode $out/demo-host.t4t"
"$bin" decode "$out/demo-host.t4t"
"$bin" decode "$out/demo-host.t4t" -f csv -o "$out/demo-host.csv" 2>/dev/null
"$bin" decode "$out/demo-host.t4t" -f perfetto -o "$out/demo-host.pftrace" 2>/dev/null

cat <<EOT

== files
  $out/demo-sim.t4t, $out/demo-host.t4t          the logs ('t410trace info FILE' describes them)
  $out/demo-sim.csv, $out/demo-host.csv          the timelines, one row per interval and event or metric
  $out/demo-sim.pftrace, $out/demo-host.pftrace  Perfetto traces: open https://ui.perfetto.dev, "Open trace file"

  python3 -c "import csv; r = list(csv.DictReader(open('$out/demo-sim.csv'))); print(len(r), 'rows;', r[0])"
  t410trace decode $out/demo-sim.t4t --pmu 'nvidia_pcie_pmu_0_*' --event '*_bw' -f csv | head
EOT
