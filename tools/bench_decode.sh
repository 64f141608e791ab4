#!/usr/bin/env bash
# bench_decode.sh - what decoding costs (`make bench` runs it):
#   1. a 60 s recording of the simulated Tegra410 (34 PMUs, 1 ms, one
#      scheduler per socket), made in virtual time, decoded stage by stage
#      by bench_decode: counter values per second per core to the summary,
#      CSV rows per second;
#   2. a 1-hour recording at 1 ms (7.2 M triggers, 684 M counter values,
#      about 2.6 GB), decoded to the summary: peak memory (RSS), which must
#      stay bounded by the decoder's windows, not by the log's length;
#   3. `report` on the same log: its time against the summary's (target
#      at most 2x), the HTML file's size (target at most 15 MB) and how long
#      headless Chromium takes to draw its first plot (target 5 s; best of
#      3, tests/report_check.py time).
#
#   With T4_BASE=/path/to/an/older/t410trace (e.g. main's build), part 1 is
#   followed by both decoders side by side on the same log: CPU seconds
#   (user + system, best of 3) of info, decode to the summary, to CSV and
#   JSONL on /dev/null and to a Perfetto file, one core (-j 1 where the
#   binary knows it).
#   4. decode -j: -j 1 against -j N (N: the CPUs available) on the 60 s
#      log, to the summary and to CSV on /dev/null: wall seconds (best of
#      3), CPU seconds, the speed-up, peak RSS, and the load average (on a
#      loaded machine the wall times say little: the CPU seconds do); with
#      T4_BASE, that binary's too, in the same run.
#   5. many small chunks (crafted by tools/t4write.py): -j 1, 2 and 7,
#      wall and CPU seconds and the blocking waits (voluntary context
#      switches: a hand-over between threads per chunk shows there); with
#      T4_BASE, that binary's too.
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

# best CPU seconds (user + system) of 3 runs of a command
best_cpu() {
	local best=
	for _ in 1 2 3; do
		t=$( { /usr/bin/time -f "%U %S" "$@" > /dev/null; } 2>&1 | tail -1 |
			awk '{ print $1 + $2 }')
		best=$(awk -v a="$t" -v b="${best:-1e30}" 'BEGIN { print (a < b ? a : b) }')
	done
	echo "$best"
}
if [ -n "${T4_BASE:-}" ]; then
	echo "side by side on that log (CPU s, user + system, best of 3; one core):"
	echo
	echo "| decoder | info | summary | summary / info | CSV to /dev/null | JSONL | Perfetto |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for b in "$T4_BASE" "$bin"; do
		j=()
		"$b" decode --help | grep -q -- '--jobs' && j=(-j 1)
		i=$(best_cpu "$b" info "$dir/60s.t4t")
		su=$(best_cpu "$b" decode "${j[@]}" "$dir/60s.t4t")
		cs=$(best_cpu "$b" decode "${j[@]}" -f csv -o /dev/null "$dir/60s.t4t")
		js=$(best_cpu "$b" decode "${j[@]}" -f jsonl -o /dev/null "$dir/60s.t4t")
		pf=$(best_cpu "$b" decode "${j[@]}" -f perfetto -o "$dir/60s.pftrace" "$dir/60s.t4t")
		awk -v b="$b" -v i="$i" -v s="$su" -v c="$cs" -v js="$js" -v pf="$pf" \
			'BEGIN { r = i > 0 ? sprintf("%.2fx", s / i) : "-"
			printf "| %s | %.2f | %.2f | %s | %.2f | %.2f | %.2f |\n", b, i, s, r, c, js, pf }'
	done
	echo
fi

# decode -j: wall seconds (best of 3) and CPU seconds of -j 1 and -j N,
# N the CPUs available, and peak RSS (the load: uptime's, said)
jobs=$(nproc)
echo "decode -j on that log, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (wall s best of 3; CPU s and peak RSS of that run):"
echo
echo "| decoder | output | -j 1 wall | -j 1 CPU | -j $jobs wall | -j $jobs CPU | speed-up | -j $jobs RSS |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
best_of_3() { # best_of_3 %X CMD...: "wall cpu X" (time(1)'s %X) of the fastest of 3 runs
	local best= line x=$1
	shift
	for _ in 1 2 3; do
		line=$( { /usr/bin/time -f "%e %U %S $x" "$@" > /dev/null; } 2>&1 | tail -1 |
			awk '{ print $1, $2 + $3, $4 }')
		if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
			best=$line
		fi
	done
	echo "$best"
}
for b in ${T4_BASE:+"$T4_BASE"} "$bin"; do
	for f in summary csv; do
		o=(); [ "$f" = csv ] && o=(-f csv -o /dev/null)
		read -r w1 c1 _ <<< "$(best_of_3 %M "$b" decode -j 1 "${o[@]}" "$dir/60s.t4t")"
		read -r wn cn rn <<< "$(best_of_3 %M "$b" decode -j "$jobs" "${o[@]}" "$dir/60s.t4t")"
		awk -v b="$b" -v f="$f" -v w1="$w1" -v c1="$c1" -v wn="$wn" -v cn="$cn" -v rn="$rn" -v j="$jobs" \
			'BEGIN { printf "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2fx | %d MB |\n",
				 b, f, w1, c1, wn, cn, (wn > 0 ? w1 / wn : 0), rn / 1024 }'
	done
done
echo

# many small chunks: crafted by the independent writer, 200,000 empty
# chunks between chunks of 10 triggers, and 5,000 chunks of one trigger;
# wall (best of 3), CPU, and the blocking waits (voluntary context
# switches) of that run, -j 1, 2 and 7
w="$(dirname "$0")/t4write.py"
python3 "$w" "$dir/empty.t4t" --triggers 2010 --per-chunk 10 --empty-chunks 1000 --format 3
python3 "$w" "$dir/single.t4t" --triggers 5000 --per-chunk 1 --format 3
echo "many small chunks (tools/t4write.py: 200,000 empty chunks between chunks of 10 triggers; 5,000 chunks of one trigger), load average $(cut -d' ' -f1-3 /proc/loadavg) (wall s best of 3; CPU s and blocking waits of that run):"
echo
echo "| decoder | log | -j 1 wall / CPU / waits | -j 2 wall / CPU / waits | -j 7 wall / CPU / waits |"
echo "|---|---|---:|---:|---:|"
for b in ${T4_BASE:+"$T4_BASE"} "$bin"; do
	for l in empty single; do
		row="| $b | $l |"
		for j in 1 2 7; do
			read -r wj cj nj <<< "$(best_of_3 %w "$b" decode -j "$j" -f csv -o /dev/null "$dir/$l.t4t")"
			row="$row $wj / $cj / $nj |"
		done
		echo "$row"
	done
done
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
echo

echo "\`\$ /usr/bin/time $bin report LOG -o LOG.html; tests/report_check.py time LOG.html\`"
echo
stats=$( { /usr/bin/time -f "%M %e %U %S" "$bin" report "$dir/1h.t4t" -o "$dir/1h.html"; } 2>&1 | tail -1)
read -r rrss rwall ruser rsys <<< "$stats"
html=$(stat -c %s "$dir/1h.html")
draw=$(python3 "$(dirname "$0")/../tests/report_check.py" time "$dir/1h.html" --runs 3 |
	python3 -c 'import json,sys; v = json.load(sys.stdin)["first_draw_ms"]; print("-" if v is None else "%.0f ms" % v)' ||
	echo "no browser")
echo "| output | peak RSS | wall | CPU | vs summary (CPU) | file | first plot drawn |"
echo "|---|---:|---:|---:|---:|---:|---:|"
awk -v u="$user" -v s="$sys" -v ru="$ruser" -v rs="$rsys" -v w="$wall" -v rw="$rwall" \
	-v m="$rss_kb" -v rm="$rrss" -v h="$html" -v d="$draw" 'BEGIN {
	printf "| summary | %d MB | %s s | %.1f s | 1.00x | | |\n", m / 1024, w, u + s
	printf "| report | %d MB | %s s | %.1f s | %.2fx | %.1f MB | %s |\n", rm / 1024, rw, ru + rs,
		(ru + rs) / (u + s), h / 1e6, d }'
echo
echo "(targets: report at most 2x the summary's time, at most 15 MB, first plot within 5 s)"
echo "(load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
