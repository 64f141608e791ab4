#!/usr/bin/env bash
# bench_bookmark.sh - what one t410_bookmark() / t410_trigger() call costs
# the application: with no recorder, through the control socket (record
# --no-phases), and through the uprobe (record with the CPU/GPU activity,
# which needs BPF privilege; said and left out otherwise).
#
#   tools/bench_bookmark.sh OUT     (OUT: the build folder, e.g. build)
#
# The workload is OUT/apps/phase_app's "cost" mode: N calls of each, paced
# (1 ms, 2 ms) so that the recorder's queue stays short, each timed alone
# with CLOCK_MONOTONIC; the median is the cost of a call, p99 its tail.
set -euo pipefail

OUT=${1:?usage: tools/bench_bookmark.sh OUT}
N=${N:-1000}
APP="$OUT/apps/phase_app"
T4="$OUT/t410trace"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

[ -x "$APP" ] || { echo "bench_bookmark: $APP not built" >&2; exit 1; }

row() { # route, output of phase_app cost
	awk -v r="$1" '{ printf "| %s | %s | %.2f | %.2f |\n", r, $1, $3 / 1000, $5 / 1000 }' <<<"$2"
}

echo "| route | call | p50 us | p99 us |"
echo "|---|---|---:|---:|"
row "no recorder" "$(env -u T410TRACE_CONTROL "$APP" cost "$N")"
row "control socket" "$("$T4" record -q --no-phases --period 1ms -o "$TMP/s.t4t" -- "$APP" cost "$N")"
out=$("$T4" record --period 1ms -o "$TMP/u.t4t" -- "$APP" cost "$N" 2>"$TMP/err") || true
if grep -q "bookmarks and $N triggers through the uprobe" "$TMP/err"; then
	row "uprobe" "$out"
else
	echo "| uprobe | (not measured: $(grep -m1 -o 'no CPU/GPU activity[^;]*' "$TMP/err" || echo 'the calls did not take the uprobe')) | | |"
fi
