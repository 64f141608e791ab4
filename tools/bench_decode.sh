#!/usr/bin/env bash
# bench_decode.sh - what decoding costs (`make bench` runs it):
#   1. a 60 s recording of the simulated Tegra410 (34 PMUs, 1 ms, one
#      scheduler per socket), made in virtual time, decoded stage by stage
#      by bench_decode: counter values per second per core to the summary,
#      CSV rows per second;
#   2. a 1-hour recording at 1 ms (7.2 M triggers, 684 M counter values,
#      about 2.6 GB), decoded to the summary: peak memory (RSS), which must
#      stay bounded by the decoder's windows, not by the log's length.
#
#   tools/bench_decode.sh OUT     (OUT: the build folder, e.g. build)
#
# The logs go to a temporary directory (TMPDIR, default /tmp; 3 GB free
# needed) and are removed. Prints markdown.
set -euo pipefail

OUT=${1:?usage: tools/bench_decode.sh OUT}
bin="$OUT/t410trace"
dir=$(mktemp -d "${TMPDIR:-/tmp}/t4bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

echo "\`\$ $bin record --sim --virtual --per-socket --period 1ms --duration 60s -o LOG; $OUT/bench/bench_decode LOG\`"
echo
"$bin" record --sim --virtual --per-socket --period 1ms --duration 60s -q -o "$dir/60s.t4t"
T4_OUT="$OUT" "$OUT/bench/bench_decode" "$dir/60s.t4t" -r 3
echo

echo "\`\$ $bin record --sim --virtual --per-socket --period 1ms --duration 1h -o LOG; /usr/bin/time $bin decode LOG\`"
echo
"$bin" record --sim --virtual --per-socket --period 1ms --duration 3600s -q -o "$dir/1h.t4t"
size=$(stat -c %s "$dir/1h.t4t")
stats=$( { /usr/bin/time -f "%M %e %U %S" "$bin" decode "$dir/1h.t4t" > "$dir/summary.txt"; } 2>&1 | tail -1)
read -r rss_kb wall user sys <<< "$stats"
phases=$(grep -c '#' "$dir/summary.txt" || true)
echo "| log | values | peak RSS | wall | CPU |"
echo "|---|---:|---:|---:|---:|"
values=$("$bin" info --json "$dir/1h.t4t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["values"])')
printf '| 1 h at 1 ms, %s MB | %s M | %s MB | %s s | %.1f s |\n' "$((size / 1000000))" \
	"$((values / 1000000))" "$((rss_kb / 1024))" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
echo
echo "(the summary has $phases phase rows; the target is under 64 MB of RSS)"
