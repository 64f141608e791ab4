#!/usr/bin/env bash
# bench_vs_perf.sh - `t410trace record` side by side with `perf stat -I`,
# on the same events for the same duration, in one run; prints one markdown
# table.
#
#   tools/bench_vs_perf.sh [T410TRACE [SECONDS]]   (defaults: build/t410trace, 5)
#
# Runs, one after the other on an otherwise idle machine (running them at the
# same time would make each measure the other):
#   1. t410trace record --period 1ms   2. perf stat -I 1 -a   3. t410trace at
#   100us (perf's -I minimum is 1 ms, so perf has no 100us column);
# then the slowdown of a workload (one bash spin loop pinned to each CPU)
# while each collector runs at 1 ms, against the same loop alone, in
# interleaved rounds.
#
# Measured: intervals delivered (t410trace: `info --json` key triggers; perf:
# distinct interval timestamps in its CSV); interval p50/p99/max (t410trace:
# consecutive periodic reference packets, via bench/bench_intervals; perf:
# differences of its interval timestamps); CPU time of each tool as user+sys
# of the finished child from bash's `times` builtin (getrusage
# RUSAGE_CHILDREN: includes every thread, needs no extra package; perf's
# includes its `sleep` child, about 1 ms); bytes per value on disk (file size
# / values; perf CSV also after `zstd -1`).
# Trade-off: a bash spin loop is a crude workload, but it needs nothing
# installed and its throughput is steady to a few tenths of a percent.
set -euo pipefail

T4=${1:-build/t410trace}
DUR=${2:-5}
INTERVALS=$(dirname "$T4")/bench/bench_intervals
EVENTS="cpu-clock,task-clock,context-switches,page-faults,cpu-migrations,msr/tsc/"
PERF_EVENTS="msr/tsc/,cpu-clock,task-clock,context-switches,page-faults,cpu-migrations"
NCPU=$(nproc)

die() { echo "bench_vs_perf: $*" >&2; exit 1; }
[ -x "$T4" ] || die "$T4: no t410trace binary (build it first)"
[ -x "$INTERVALS" ] || die "$INTERVALS: missing (make $INTERVALS)"
case $DUR in '' | *[!0-9]*) die "$DUR: duration in whole seconds wanted" ;; esac

tmp=$(mktemp -d /tmp/t4bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

have_perf=0
if command -v perf >/dev/null &&
	perf stat -x, -e cpu-clock true >/dev/null 2>&1; then
	have_perf=1
fi

# ---- helpers ------------------------------------------------------------------

# cpu_of CMD...: run CMD (output to files it names itself), print the
# user+sys CPU seconds of it and its children.
cpu_of() {
	(
		"$@" >/dev/null
		times
	) | awk 'NR == 2 {
		split($1, u, /[ms]/); split($2, s, /[ms]/)
		printf "%.3f\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}

# json_key FILE KEY: a top-level number from `t410trace info --json`.
json_key() {
	grep -o "\"$2\": [0-9.]*" "$1" | head -1 | awk '{ print $2 }'
}

# kv FILE KEY: a value from bench_intervals' key=value output.
kv() { sed -n "s/^$2=//p" "$1"; }

us() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1000 }'; }
# div A B [FORMAT [SCALE]]: A * SCALE / B.
div() {
	awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" -v k="${4:-1}" \
		'BEGIN { printf f, b ? a * k / b : 0 }'
}
cpu_share() { echo "$1 s ($(div "$1" "$DUR" %.1f 100)% of a core)"; }

# perf_intervals CSV: "count p50 p99 min max maxdev" of the interval
# timestamps (ns), period 1 ms.
perf_intervals() {
	awk -F, '/^ *[0-9]/ { t = $1; gsub(/[ .]/, "", t); print t + 0 }' "$1" |
		uniq | awk 'NR > 1 { print $1 - prev } { prev = $1 }' | sort -n |
		awk -v period=1000000 '
		{ v[NR] = $1; d = $1 > period ? $1 - period : period - $1
		  if (d > dev) dev = d }
		function q(p,  i) { i = int(p * NR + 0.999999); return v[i ? i : 1] }
		END { if (!NR) { print "0 0 0 0 0 0"; exit }
		      printf "%d %d %d %d %d %d\n", NR + 1, q(0.5), q(0.99), v[1], v[NR], dev }'
}

# t4_run PERIOD NAME: record; leaves NAME.t4t, NAME.json, NAME.iv, NAME.cpu.
t4_run() {
	cpu_of "$T4" record --period "$1" --duration "${DUR}s" -e "$EVENTS" \
		-o "$tmp/$2.t4t" -q >"$tmp/$2.cpu"
	"$T4" info --json "$tmp/$2.t4t" >"$tmp/$2.json"
	"$INTERVALS" "$tmp/$2.t4t" >"$tmp/$2.iv"
}

perf_run() {
	cpu_of perf stat -I 1 -x, -a -e "$PERF_EVENTS" -o "$tmp/perf.csv" \
		sleep "$DUR" >"$tmp/perf.cpu"
	zstd -q -1 -f "$tmp/perf.csv" -o "$tmp/perf.csv.zst"
}

# spin SECONDS: throughput (iterations) of one bash spin loop per CPU.
spin() {
	local pids=() c total=0
	for ((c = 0; c < NCPU; c++)); do
		# shellcheck disable=SC2016 # expanded by the inner bash
		taskset -c "$c" bash -c 'n=0; trap "echo \$n; exit 0" TERM
			while :; do ((n++)); done' >"$tmp/spin.$c" &
		pids+=($!)
	done
	sleep "$1"
	kill -TERM "${pids[@]}"
	wait "${pids[@]}" || true
	for ((c = 0; c < NCPU; c++)); do total=$((total + $(cat "$tmp/spin.$c"))); done
	echo "$total"
}

# loaded CMD...: spin for WIN seconds while CMD (a collector started half a
# second earlier, running WIN + 1 s) runs; prints the spin throughput.
loaded() {
	local pid n
	"$@" >/dev/null 2>&1 &
	pid=$!
	sleep 0.5
	n=$(spin "$WIN")
	wait "$pid" || true
	echo "$n"
}

# ---- the runs --------------------------------------------------------------------

t4_run 1ms t4
[ $have_perf = 1 ] && perf_run
t4_run 100us t4f

# Slowdown: ROUNDS rounds of (alone, under t410trace, under perf), WIN
# seconds each, interleaved so that drift in the machine's speed (other
# jobs, the host) falls on every column alike.
ROUNDS=3
WIN=2
spun_base=0 spun_t4=0 spun_perf=0 busy_t4=0 busy_perf=0 base_min=0 base_max=0
for ((r = 0; r < ROUNDS; r++)); do
	n=$(spin "$WIN")
	spun_base=$((spun_base + n))
	if ((base_min == 0 || n < base_min)); then base_min=$n; fi
	if ((n > base_max)); then base_max=$n; fi
	n=$(loaded "$T4" record --period 1ms --duration "$((WIN + 1))s" -e "$EVENTS" \
		-o "$tmp/t4load.t4t" -q)
	spun_t4=$((spun_t4 + n))
	"$T4" info --json "$tmp/t4load.t4t" >"$tmp/t4load.json"
	busy_t4=$((busy_t4 + $(json_key "$tmp/t4load.json" triggers)))
	if [ $have_perf = 1 ]; then
		n=$(loaded perf stat -I 1 -x, -a -e "$PERF_EVENTS" \
			-o "$tmp/perfload.csv" sleep "$((WIN + 1))")
		spun_perf=$((spun_perf + n))
		busy_perf=$((busy_perf + $(perf_intervals "$tmp/perfload.csv" | awk '{ print $1 }')))
	fi
done
base_spread=$(div "$((base_max - base_min))" "$((spun_base / ROUNDS))" %.1f 100)

# ---- the table -------------------------------------------------------------------

slow() { div "$((spun_base - $1))" "$spun_base" %.1f%% 100; }

# Column values for a t410trace run NAME with period PERIOD_NS.
t4_col() {
	local n=$1 period=$2 key=$3 trig vals bytes cpu
	trig=$(json_key "$tmp/$n.json" triggers)
	vals=$(json_key "$tmp/$n.json" values)
	bytes=$(stat -c %s "$tmp/$n.t4t")
	cpu=$(cat "$tmp/$n.cpu")
	case $key in
	delivered) echo "$trig of $((DUR * 1000000000 / period))" ;;
	overruns) echo "$(kv "$tmp/$n.iv" overruns) (counted in the log)" ;;
	interval) echo "$(us "$(kv "$tmp/$n.iv" interval_p50)") / $(us "$(kv "$tmp/$n.iv" interval_p99)") / $(us "$(kv "$tmp/$n.iv" interval_max)")" ;;
	maxdev) us "$(kv "$tmp/$n.iv" interval_maxdev)" ;;
	tolast) echo "$(us "$(kv "$tmp/$n.iv" to_last_p50)") / $(us "$(kv "$tmp/$n.iv" to_last_p99)") / $(us "$(kv "$tmp/$n.iv" to_last_max)")" ;;
	window) echo "$(us "$(kv "$tmp/$n.iv" window_p50)") / $(us "$(kv "$tmp/$n.iv" window_p99)") / $(us "$(kv "$tmp/$n.iv" window_max)")" ;;
	cpu) cpu_share "$cpu" ;;
	cpu_per) div "$cpu" "$trig" %.1f 1000000 ;;
	values) echo "$vals ($(div "$vals" "$trig" %.0f) per interval)" ;;
	bpv) echo "$(div "$bytes" "$vals") (zstd level 1 chunks)" ;;
	esac
}

perf_col() {
	[ $have_perf = 1 ] || { echo "perf not available"; return; }
	local key=$1 iv vals bytes zbytes cpu
	read -r -a iv <<<"$(perf_intervals "$tmp/perf.csv")"
	vals=$(grep -c '^ *[0-9]' "$tmp/perf.csv" || true)
	bytes=$(stat -c %s "$tmp/perf.csv")
	zbytes=$(stat -c %s "$tmp/perf.csv.zst")
	cpu=$(cat "$tmp/perf.cpu")
	case $key in
	delivered) echo "${iv[0]} of $((DUR * 1000))" ;;
	overruns) echo "not counted (intervals stretch)" ;;
	interval) echo "$(us "${iv[1]}") / $(us "${iv[2]}") / $(us "${iv[4]}")" ;;
	maxdev) us "${iv[5]}" ;;
	tolast | window) echo "n/a (one timestamp per interval)" ;;
	cpu) cpu_share "$cpu" ;;
	cpu_per) div "$cpu" "${iv[0]}" %.1f 1000000 ;;
	values) echo "$vals ($(div "$vals" "${iv[0]}" %.0f) per interval)" ;;
	bpv) echo "$(div "$bytes" "$vals") CSV, $(div "$zbytes" "$vals") after zstd -1" ;;
	esac
}

perf_hdr="perf stat -I 1"
[ $have_perf = 1 ] || perf_hdr="perf stat -I 1 (not run: perf missing)"
echo "### t410trace record vs perf stat -I, ${DUR} s each, $NCPU CPUs"
echo
echo "| | t410trace 1 ms | $perf_hdr | t410trace 100 us (perf: -I min is 1 ms) |"
echo "|---|---|---|---|"
row() {
	echo "| $1 | $(t4_col t4 1000000 "$2") | $(perf_col "$2") | $(t4_col t4f 100000 "$2") |"
}
row "intervals delivered" delivered
row "missed deadlines" overruns
row "interval p50 / p99 / max, us" interval
row "largest deviation from the period, us" maxdev
row "trigger -> last return p50 / p99 / max, us" tolast
row "read window p50 / p99 / max, us" window
row "CPU time (user+sys)" cpu
row "CPU per interval, us" cpu_per
row "values recorded" values
row "bytes per value on disk" bpv
perf_slow="n/a" perf_busy="n/a"
if [ $have_perf = 1 ]; then
	perf_slow=$(slow "$spun_perf")
	perf_busy="$busy_perf of $((ROUNDS * (WIN + 1) * 1000))"
fi
echo "| workload slowdown at 1 ms: a spin loop on each CPU, $ROUNDS x $WIN s (alone: spread ${base_spread}%) | $(slow "$spun_t4") | $perf_slow | not measured |"
echo "| intervals delivered with every CPU busy, $ROUNDS x $((WIN + 1)) s | $busy_t4 of $((ROUNDS * (WIN + 1) * 1000)) | $perf_busy | not measured |"
echo
echo "t410trace keeps one clock domain per CPU for software events and msr/tsc (each"
echo "event once per CPU per trigger); \`perf stat -a\` sums the CPUs (each event once per"
echo "interval). Interval statistics exclude nothing: a late trigger shows as a long"
echo "interval and the next one, back on the grid, as a short one."
