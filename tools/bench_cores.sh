#!/usr/bin/env bash
# bench_cores.sh - decode's speed on cores nothing else uses: each decoder
# pinned (taskset) to one core, to two, and given every CPU, side by side
# in one run. For a machine with spare cores (on a busy 2-CPU VM the wall
# times say little: tools/bench_decode.sh gives CPU seconds there).
#
#   tools/bench_cores.sh NAME=BIN [NAME=BIN ...]
#
# Each BIN records its own logs of the same simulated Tegra410 (--sim=7:
# the same counts, each in its own format), 600 s and 60 s at 1 ms in
# virtual time, in TMPDIR (default /tmp; 1 GB free needed; removed after).
# Then, alternated between the decoders, best of 3 wall seconds:
#   info on the 600 s log (one core);
#   decode to the summary of the 600 s log: one core (-j 1 where BIN
#   knows -j), two cores (-j 2), every CPU (the default -j);
#   decode -f csv -o /dev/null of the 60 s log: one core, two, every CPU.
# T4_LONG_S (default 600) sets the long log's seconds (the short one's are
# a tenth). T4_ONE_CORE and T4_TWO_CORES (default 1 and 1,2) name the cores pinned
# to. Prints markdown: seconds, counter values per second, CSV rows per
# second, summary / info, and the speed-up of two cores over one.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: tools/bench_cores.sh NAME=BIN [NAME=BIN ...]" >&2; exit 2; }
ncpu=$(nproc)
one=${T4_ONE_CORE:-1} two=${T4_TWO_CORES:-1,2} # the cores pinned to
long=${T4_LONG_S:-600} short=$(( ${T4_LONG_S:-600} / 10 )) # the logs' seconds
[ "$ncpu" -ge 3 ] || [ -n "${T4_TWO_CORES:-}" ] ||
	{ echo "bench_cores.sh: needs 3 CPUs or more (this has $ncpu)" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/t4cores.XXXXXX")
trap 'rm -rf "$dir"' EXIT

names=() bins=()
for a in "$@"; do
	names+=("${a%%=*}")
	bins+=("${a#*=}")
done

# -j 1/-j 2 only where the decoder has -j
jobs_arg() { # BIN N
	if "$1" decode --help 2>&1 | grep -q -- '--jobs'; then echo "-j $2"; fi
}

declare -A best
run() { # KEY CMD...: keeps the best wall seconds under KEY
	/usr/bin/time -f "%e" -o "$dir/t" "${@:2}" > /dev/null 2> "$dir/err" ||
		{ echo "$1: failed: $(head -c 300 "$dir/err")" >&2; return 1; }
	local t
	t=$(tail -1 "$dir/t")
	if [ -z "${best[$1]:-}" ] || awk -v a="$t" -v b="${best[$1]}" 'BEGIN { exit !(a < b) }'; then
		best[$1]=$t
	fi
}

for i in "${!bins[@]}"; do
	for d in "$long" "$short"; do
		"${bins[$i]}" record --sim=7 --virtual --per-socket --period 1ms -d "${d}s" -q \
			-o "$dir/$i-$d.t4t"
	done
done
values=$("${bins[0]}" info "$dir/0-$long.t4t" | awk '$1 == "values" { print $2 }')
rows=$("${bins[0]}" decode $(jobs_arg "${bins[0]}" 1) -f csv "$dir/0-$short.t4t" | tail -n +2 | wc -l)
all=$((ncpu - 1))
for _ in 1 2 3; do
	for i in "${!bins[@]}"; do
		b=${bins[$i]}
		run "$i info" taskset -c "$one" "$b" info "$dir/$i-$long.t4t"
		run "$i sum1" taskset -c "$one" "$b" decode $(jobs_arg "$b" 1) "$dir/$i-$long.t4t"
		run "$i sum2" taskset -c "$two" "$b" decode $(jobs_arg "$b" 2) "$dir/$i-$long.t4t"
		run "$i sumN" taskset -c 0-$all "$b" decode "$dir/$i-$long.t4t"
		run "$i csv1" taskset -c "$one" "$b" decode $(jobs_arg "$b" 1) -f csv -o /dev/null "$dir/$i-$short.t4t"
		run "$i csv2" taskset -c "$two" "$b" decode $(jobs_arg "$b" 2) -f csv -o /dev/null "$dir/$i-$short.t4t"
		run "$i csvN" taskset -c 0-$all "$b" decode -f csv -o /dev/null "$dir/$i-$short.t4t"
	done
done

echo "$ncpu CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), load average before the last run $(cut -d' ' -f1-3 /proc/loadavg); ${long} s log: $values values; ${short} s log: $rows CSV rows. Wall seconds, best of 3."
echo
echo "| decoder | info | summary 1 core | 2 cores | $ncpu | M values/s 1 core | summary / info 1 core, $ncpu | 2 cores / 1 | CSV 1 core | 2 cores | $ncpu | M rows/s 1 core | 2 cores / 1 |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for i in "${!bins[@]}"; do
	awk -v n="${names[$i]}" -v v="$values" -v r="$rows" -v inf="${best[$i info]}" \
		-v s1="${best[$i sum1]}" -v s2="${best[$i sum2]}" -v sn="${best[$i sumN]}" \
		-v c1="${best[$i csv1]}" -v c2="${best[$i csv2]}" -v cn="${best[$i csvN]}" 'BEGIN {
		printf "| %s | %.2f | %.2f | %.2f | %.2f | %.1f | %.2fx, %.2fx | %.2fx | %.2f | %.2f | %.2f | %.1f | %.2fx |\n",
			n, inf, s1, s2, sn, v / s1 / 1e6, s1 / inf, sn / inf, s1 / s2,
			c1, c2, cn, r / c1 / 1e6, c1 / c2 }'
done
