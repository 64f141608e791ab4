#!/usr/bin/env bash
# bench.sh - `make bench`: run every benchmark and print the results as
# markdown (what docs/PERFORMANCE.md is made of).
#
#   tools/bench.sh OUT     (OUT: the build folder, e.g. build)
#
# Runs each program in OUT/bench/ with no arguments (their defaults are the
# documented runs), then tools/bench_vs_perf.sh OUT/t410trace. Helpers that
# other scripts drive with arguments (bench_intervals, bench_spin) are not run on their
# own. Trade-off: everything runs one after the other, never in parallel,
# so that no benchmark disturbs another; the whole takes about a minute.
set -euo pipefail

OUT=${1:?usage: tools/bench.sh OUT}
HERE=$(cd "$(dirname "$0")" && pwd)
HELPERS=" bench_intervals bench_decode bench_spin bench_copies bench_codec "

[ -d "$OUT/bench" ] || { echo "bench: $OUT/bench: no benchmarks built" >&2; exit 1; }

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
[ -n "$cpu_model" ] || cpu_model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)

echo "## t410trace benchmarks"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- host: $(uname -n), kernel $(uname -r) $(uname -m)"
echo "- CPU: ${cpu_model:-unknown}, $(nproc) CPUs online"
echo "- t410trace: $("$OUT/t410trace" --version 2>/dev/null | head -1)"
echo

for b in "$OUT"/bench/*; do
	name=$(basename "$b")
	# skip non-programs (the compiler's .d files live here too)
	if [ ! -f "$b" ] || [ ! -x "$b" ]; then continue; fi
	case $HELPERS in *" $name "*) continue ;; esac
	echo "\`\$ $b\`"
	echo
	"$b"
	echo
done

"$HERE/bench_decode.sh" "$OUT"
echo

# decode on cores nothing else uses: only where there are spare ones
if [ "$(nproc)" -ge 3 ]; then
	echo "\`\$ tools/bench_cores.sh now=$OUT/t410trace${T4_BASE:+ base=$T4_BASE}\`"
	echo
	"$HERE/bench_cores.sh" "now=$OUT/t410trace" ${T4_BASE:+"base=$T4_BASE"}
else
	echo "tools/bench_cores.sh: skipped ($(nproc) CPUs: a decoder pinned to one or two"
	echo "cores would share them with everything else; see tools/bench_decode.sh's CPU seconds)"
fi
echo

"$HERE/bench_copies.sh" "$OUT"
echo

"$HERE/bench_live.sh" "$OUT"
echo

"$HERE/bench_codec.sh" "$OUT"
echo

echo "\`\$ tools/bench_bookmark.sh $OUT\`"
echo
"$HERE/bench_bookmark.sh" "$OUT"
echo

echo "\`\$ tools/bench_vs_perf.sh $OUT/t410trace\`"
echo
"$HERE/bench_vs_perf.sh" "$OUT/t410trace"
