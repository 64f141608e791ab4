#!/bin/sh
# demo.sh - `make demo`: record something meaningful with no hardware.
#  1. a SIMULATED Tegra410 (34 uncore PMUs, each its own drifting clock,
#     one central scheduler per socket) while a small workload script moves
#     through phases (load, compute, store), setting bookmarks through the
#     control socket that record opens for it;
#  2. this machine's real PMUs (software counters and msr/tsc) for 1 s.
# Then `t410trace info` shows what each log holds.
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

echo "== 1. simulated Tegra410 (one scheduler per socket), 1 ms triggers, phases set by the workload"
echo "\$ t410trace record --sim --per-socket --period 1ms --bookmark start -o $out/demo-sim.t4t -- $phases"
"$bin" record --sim --per-socket --period 1ms --bookmark start -o "$out/demo-sim.t4t" -- "$phases"
echo
"$bin" info "$out/demo-sim.t4t"
echo
echo "== 2. this machine's real PMUs for 1 s"
echo "\$ t410trace record --period 1ms --duration 1s --bookmark host -o $out/demo-host.t4t"
"$bin" record --period 1ms --duration 1s --bookmark host -o "$out/demo-host.t4t"
echo
"$bin" info "$out/demo-host.t4t"
