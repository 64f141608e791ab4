#!/usr/bin/env bash
# bench_live.sh - what watching a recording costs it: `record --sim` with
# nothing attached, with `t410trace top` attached (refreshing every 100 ms,
# ten times its default), and with its metrics endpoint scraped ten times a
# second, RUNS runs each, alternated (base, top, scrape, base, ...) so that
# a change in the machine's load falls on all three alike. Prints the
# overruns and the recorder's CPU per trigger of each run (from `info
# --json` of its log and its own summary line), their medians, and the cost
# of one scrape (the recorder's extra CPU over the scrapes it answered).
#
#   tools/bench_live.sh OUT [RUNS] [SECONDS]     (OUT: the build folder)
set -euo pipefail

OUT=${1:?usage: tools/bench_live.sh OUT [RUNS] [SECONDS]}
RUNS=${2:-5}
SECS=${3:-5}
BIN=$OUT/t410trace
command -v curl > /dev/null || { echo "bench_live: curl is needed" >&2; exit 1; }
D=$(mktemp -d "${TMPDIR:-/tmp}/t4live.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$D"' EXIT

# One run: record for SECS s; "$1" says what watches it. Prints
# "overruns cpu_us_per_trigger cpu_s scrapes".
run() {
	local mode=$1 log=$D/r.t4t err=$D/r.err scrapes=0
	rm -f "$log" "$D/c.sock"
	case $mode in
	base) "$BIN" record --sim -d "${SECS}s" -o "$log" 2> "$err" & ;;
	top) "$BIN" record --sim -d "${SECS}s" -c "$D/c.sock" -o "$log" 2> "$err" & ;;
	scrape) "$BIN" record --sim -d "${SECS}s" --metrics-listen 127.0.0.1:0 -o "$log" \
		2> "$err" & ;;
	esac
	local rec=$!
	case $mode in
	top)
		for _ in $(seq 600); do [ -S "$D/c.sock" ] && break; sleep 0.01; done
		"$BIN" top --control "$D/c.sock" -i 100ms > /dev/null 2>&1 || true ;;
	scrape)
		local port=""
		for _ in $(seq 600); do
			port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$err")
			[ -n "$port" ] && break; sleep 0.01
		done
		while kill -0 $rec 2> /dev/null; do
			curl -s -o /dev/null "http://127.0.0.1:$port/metrics" && scrapes=$((scrapes + 1))
			sleep 0.1
		done ;;
	esac
	wait $rec
	local ov cpu_us cpu_s
	ov=$("$BIN" info --json "$log" | python3 -c 'import json, sys; print(json.load(sys.stdin)["overruns"])')
	cpu_us=$(sed -n 's/.*CPU \([0-9.]*\) us\/trigger.*/\1/p' "$err")
	cpu_s=$(sed -n 's/.* in \([0-9.]*\) s (period.*/\1/p' "$err" | head -1)
	echo "$ov $cpu_us $scrapes $cpu_s"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "\`\$ tools/bench_live.sh $OUT $RUNS $SECS\` ($(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| run | base: overruns | base: CPU us/trigger | top -i 100ms: overruns | top: CPU us/trigger | 10 scrapes/s: overruns | scrape: CPU us/trigger | scrapes |"
echo "|---|---|---|---|---|---|---|---|"
: > "$D/base"; : > "$D/top"; : > "$D/scrape"
for i in $(seq "$RUNS"); do
	b=$(run base); t=$(run top); s=$(run scrape)
	echo "$b" >> "$D/base"; echo "$t" >> "$D/top"; echo "$s" >> "$D/scrape"
	set -- $b; bo=$1 bc=$2; set -- $t; to=$1 tc=$2; set -- $s; so=$1 sc=$2 sn=$3
	echo "| $i | $bo | $bc | $to | $tc | $so | $sc | $sn |"
done
mb_o=$(cut -d' ' -f1 "$D/base" | median); mb_c=$(cut -d' ' -f2 "$D/base" | median)
mt_o=$(cut -d' ' -f1 "$D/top" | median); mt_c=$(cut -d' ' -f2 "$D/top" | median)
ms_o=$(cut -d' ' -f1 "$D/scrape" | median); ms_c=$(cut -d' ' -f2 "$D/scrape" | median)
ms_n=$(cut -d' ' -f3 "$D/scrape" | median)
echo "| median | $mb_o | $mb_c | $mt_o | $mt_c | $ms_o | $ms_c | $ms_n |"
echo
awk -v b="$mb_c" -v s="$ms_c" -v n="$ms_n" -v secs="$SECS" 'BEGIN {
	trig = secs * 1000; extra = (s - b) * trig
	printf "One scrape costs the recorder about %.0f us of CPU (median CPU per trigger %+.1f us over %d triggers, %d scrapes; below the runs'"'"' spread when it is negative).\n", n ? extra / n : 0, s - b, trig, n }'
