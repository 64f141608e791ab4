#!/usr/bin/env bash
# bench_codec.sh - log formats 1, 2 and 3 on the same recordings, and
# against the entropy floor of their deltas (`make bench` runs it; issue
# 19.1, docs/FORMAT.md 5a, docs/PERFORMANCE.md "Codec v2"):
#   60 s at 1 ms of the simulated Tegra410 in virtual time, one scheduler
#   per socket (256 KiB chunks), 10 s of it live (100 ms chunks), and 10 s
#   at 1 ms of this host's default counters, each coded again chunk for
#   chunk in every format by bench_codec at zstd levels 1, 3, 9 and 19.
#
#   tools/bench_codec.sh OUT [SECONDS]   (OUT: the build folder, e.g. build;
#                                         SECONDS of the virtual recording)
#
# The logs go to a temporary directory and are removed. Prints markdown.
set -euo pipefail

OUT=${1:?usage: tools/bench_codec.sh OUT [SECONDS]}
secs=${2:-60}
bin="$OUT/t410trace"
measure="$(cd "$OUT" && pwd)/bench/bench_codec"
dir=$(mktemp -d "${TMPDIR:-/tmp}/t4bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

"$bin" record -q --sim=7 --virtual --per-socket --period 1ms --duration "${secs}s" \
	-o "$dir/sim-virtual-${secs}s.t4t"
"$bin" record -q --sim=7 --per-socket --period 1ms --duration 10s -o "$dir/sim-live-10s.t4t"
"$bin" record -q --period 1ms --duration 10s -o "$dir/host-10s.t4t"
echo "\`\$ $bin record --sim=7 --virtual --per-socket -d ${secs}s; $bin record --sim=7" \
	"--per-socket -d 10s; $bin record -d 10s; $OUT/bench/bench_codec -l 1,3,9,19 LOG...\`"
echo
echo "- load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
(cd "$dir" && "$measure" -l 1,3,9,19 sim-virtual-"${secs}"s.t4t sim-live-10s.t4t host-10s.t4t)
echo
echo "- load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
