#!/usr/bin/env bash
# bench_copies.sh - what the metadata copies cost (`make bench` runs it;
# docs/FORMAT.md 4.8, docs/PERFORMANCE.md "Self-describing logs"):
#   3 s at 1 ms of the simulated Tegra410 (34 PMUs, live: 100 ms chunks),
#   3 s at 1 ms of this host's default counters, and 60 s of the simulated
#   Tegra410 in virtual time (256 KiB chunks), each measured by
#   bench_copies: the log as written, without its copies, and with the
#   whole description in every chunk instead.
#
#   tools/bench_copies.sh OUT     (OUT: the build folder, e.g. build)
#
# The logs go to a temporary directory and are removed. Prints markdown.
set -euo pipefail

OUT=${1:?usage: tools/bench_copies.sh OUT}
bin="$OUT/t410trace"
measure="$(cd "$OUT" && pwd)/bench/bench_copies"
dir=$(mktemp -d "${TMPDIR:-/tmp}/t4bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

"$bin" record -q --sim=7 --period 1ms --duration 3s -o "$dir/sim-1ms-3s.t4t"
"$bin" record -q --period 1ms --duration 3s -o "$dir/host-1ms-3s.t4t"
"$bin" record -q --sim=7 --virtual --period 1ms --duration 60s -o "$dir/sim-virtual-60s.t4t"
echo "\`\$ $bin record --sim=7 -d 3s; $bin record -d 3s;" \
	"$bin record --sim=7 --virtual -d 60s; $OUT/bench/bench_copies LOG...\`"
echo
(cd "$dir" && "$measure" sim-1ms-3s.t4t host-1ms-3s.t4t sim-virtual-60s.t4t)
