#!/usr/bin/env bash
# run.sh - build the libFuzzer harnesses (tools/fuzz/fuzz_*.c) into
# build-fuzz/ and run each for a while, one at a time (docs/FUZZING.md).
#
#   tools/fuzz/run.sh [SECONDS] [NAME...]   default 60 s each, every harness
#   tools/fuzz/run.sh --build               only build
#   tools/fuzz/run.sh --repro NAME FILE     run one input (a crash) again
#   tools/fuzz/run.sh --save [NAME...]      merge what build-fuzz/corpus adds
#                                           into the saved tools/fuzz/corpus
#
# Needs clang with libFuzzer (clang 14 + libclang-rt-14-dev here). Harnesses
# compile the project sources they need directly, with
# -fsanitize=fuzzer,address,undefined. Corpora live in build-fuzz/corpus/NAME
# (seeded from real logs and the fixture tree on first run), crashes in
# build-fuzz/crashes/NAME. The saved corpus (tools/fuzz/corpus/NAME, kept
# small by --save's merge) and the inputs of fixed crashes
# (tools/fuzz/crashes/NAME) seed every run and are replayed by `make check`
# (tools/fuzz/replay.c). Run from anywhere; works in the repository root.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${FUZZ_OUT:-$ROOT/build-fuzz}
CC=${FUZZ_CC:-clang}
ALL=(reader codec events pmu control parse drm decode live)
CFLAGS=(-std=c17 -D_GNU_SOURCE -pthread -g -O1 -I"$ROOT"
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-fno-omit-frame-pointer)

sources() {
	local util=("$ROOT"/util/*.c)
	case $1 in
	reader|codec) echo "${util[@]}" "$ROOT"/packets/{reader,codec,codec2,chunk}.c ;;
	events|pmu) echo "${util[@]}" "$ROOT"/collector/*.c "$ROOT"/packets/{codec,codec2,chunk}.c ;;
	control) echo "${util[@]}" "$ROOT"/control/{control,name}.c ;;
	parse) echo "${util[@]}" ;;
	drm) echo "${util[@]}" "$ROOT"/collector/drm.c ;;
	decode) echo "${util[@]}" "$ROOT"/packets/{reader,codec,codec2,chunk}.c "$ROOT"/decode/*.c \
		"$ROOT"/collector/kinds.c "$ROOT"/build/gen/decode/{perfetto.pb-c,report_assets}.c ;;
	live) echo "${util[@]}" "$ROOT"/packets/{reader,codec,codec2,chunk}.c "$ROOT"/decode/*.c \
		"$ROOT"/live/{live,live_text,view,prom}.c "$ROOT"/collector/kinds.c \
		"$ROOT"/build/gen/decode/{perfetto.pb-c,report_assets}.c ;;
	*) echo "run.sh: unknown harness '$1' (have: ${ALL[*]})" >&2; exit 2 ;;
	esac
}

build() {
	mkdir -p "$OUT"
	[[ $1 != decode && $1 != live ]] ||
		make -C "$ROOT" --no-print-directory build/gen/decode/perfetto.pb-c.c \
			build/gen/decode/report_assets.c
	# shellcheck disable=SC2046
	"$CC" "${CFLAGS[@]}" -I"$ROOT/build/gen" "$ROOT/tools/fuzz/fuzz_$1.c" $(sources "$1") \
		-lzstd -lprotobuf-c -lm -o "$OUT/fuzz_$1"
}

# A seed file per argument: seed DIR NAME CONTENT
seed() { mkdir -p "$1"; printf '%s' "$3" > "$1/$2"; }

seed_reader() {
	local d=$1 bin=$ROOT/build/t410trace tmp
	tmp=$(mktemp -d)
	if [[ -x $bin ]]; then
		"$bin" record -q --duration 20ms -o "$tmp/real.t4t" || true
		"$bin" record -q --sim --duration 5ms -o "$tmp/sim.t4t" || true
	fi
	python3 "$ROOT/tools/t4write.py" "$tmp/py.t4t" --triggers 20 --per-chunk 4 \
		>/dev/null 2>&1 || true
	# format 1.1: copies, a damaged first chunk, two recordings in one file
	python3 "$ROOT/tools/t4write.py" "$tmp/copies.t4t" --triggers 40 --chunk-packets 30 \
		--copies --bookmarks >/dev/null 2>&1 || true
	python3 "$ROOT/tools/t4write.py" "$tmp/head.t4t" --triggers 40 --chunk-packets 30 \
		--copies --damage-magic 0 >/dev/null 2>&1 || true
	python3 "$ROOT/tools/t4write.py" "$tmp/two.t4t" --triggers 20 --chunk-packets 30 \
		--second-seed 2 >/dev/null 2>&1 || true
	# format 2: batches
	python3 "$ROOT/tools/t4write.py" "$tmp/py2.t4t" --format 2 --triggers 20 --per-chunk 4 \
		>/dev/null 2>&1 || true
	python3 "$ROOT/tools/t4write.py" "$tmp/f2.t4t" --format 2 --triggers 60 --chunk-packets 80 \
		--copies --bookmarks --schedulers 2 --large-ids --drop-returns 0.05 \
		>/dev/null 2>&1 || true
	# format 3: quiet records (record writes it by default)
	python3 "$ROOT/tools/t4write.py" "$tmp/f3.t4t" --format 3 --triggers 60 --chunk-packets 80 \
		--copies --bookmarks --schedulers 2 --large-ids --drop-returns 0.05 \
		>/dev/null 2>&1 || true
	if [[ -x $bin ]]; then
		"$bin" record -q --sim --duration 5ms --log-format 2 -o "$tmp/sim2.t4t" || true
	fi
	if [[ -x $bin ]]; then
		"$bin" record -q --sim --duration 5ms --log-format 1 -o "$tmp/sim1.t4t" || true
	fi
	for f in "$tmp"/*.t4t; do [[ -s $f ]] && cp "$f" "$d/"; done
	rm -rf "$tmp"
}

# The decompressed payload of the first chunk of each reader seed.
seed_codec() {
	local d=$1 f csz
	for f in "$OUT/corpus/reader"/*.t4t; do
		[[ -s $f ]] || continue
		csz=$(od -An -tu4 -j44 -N4 "$f" | tr -d ' ')
		dd if="$f" bs=1 skip=64 count="$csz" status=none | zstd -dq -c \
			> "$d/$(basename "$f" .t4t).raw" 2>/dev/null || true
	done
	seed "$d" empty ''
}

seed_events() {
	local d=$1 i=0 s
	for s in 'nvidia_pcie_pmu_0_rc_0/rd_bytes/' 'nvidia_pcie_pmu_*/cycles,rd_req/' \
		'{nvidia_ucf_pmu_0/cycles/,cs}' 'nvidia_pcie_pmu_0_rc_0/event=0x4,src_bdf=0x100,src_bdf_en/' \
		'nvidia_pcie_pmu_0_rc_0/src_rp_mask=3,event=1/' 'acme_pmu/energy/' 'msr/tsc/' \
		'cpu-clock,task-clock,page-faults' 'sched:sched_switch' 'acme_pmu/config=1,config1=2,name=x/' \
		'nvidia_cmem_latency_pmu_?/rd_cum_outs/' 'nvidia_nvlink_c2c_pmu_[0-1]/in_rd_req/'; do
		seed "$d" "s$((i++))" "$s"
	done
}

seed_pmu() {
	local d=$1
	seed "$d" a $'config1:0-7,32-35\0000-3,8\0000x12\00012\0000-1\000config:0-15\000event=0x1\0000.5\000bytes\000id'
	seed "$d" b $'config:63\0001\0001'
	seed "$d" c $'config2:0-63\0000\000-1'
}

seed_control() {
	local d=$1
	seed "$d" a $'\0\1bookmark phase_1'
	seed "$d" b $'\4\1status'
	seed "$d" c $'\1\2trigger\n'
	seed "$d" d $'\10\3start extra'
}

seed_parse() {
	local d=$1 i=0 s
	for s in 1ms 100us 2.5s 1e3ns 0x10 010 1min 18446744073709551615 0.5ns; do
		seed "$d" "s$((i++))" "$s"
	done
}

# The decompressed payload of the first chunk of real logs (bookmarked,
# simulated, with CPU slices where BPF loads), each behind option bytes
# that pick every format (the harness's first byte).
seed_decode() {
	local d=$1 bin=$ROOT/build/t410trace tmp f csz b
	tmp=$(mktemp -d)
	if [[ -x $bin ]]; then
		"$bin" record -q --sim --period 1ms --duration 30ms --bookmark a -o "$tmp/sim.t4t" || true
		"$bin" record -q --period 1ms --duration 20ms -o "$tmp/host.t4t" || true
		"$bin" record -q -a --period 1ms --duration 20ms -o "$tmp/slices.t4t" || true
	fi
	python3 "$ROOT/tools/t4write.py" "$tmp/py.t4t" --triggers 40 --bookmarks \
		--schedulers 2 >/dev/null 2>&1 || true
	for f in "$tmp"/*.t4t; do
		[[ -s $f ]] || continue
		csz=$(od -An -tu4 -j44 -N4 "$f" | tr -d ' ')
		dd if="$f" bs=1 skip=64 count="$csz" status=none | zstd -dq -c > "$tmp/raw" \
			2>/dev/null || continue
		for b in 00 01 02 03 04 05 3c 49 7a; do
			{ printf "\\x$b"; cat "$tmp/raw"; } > "$d/$b-$(basename "$f" .t4t)"
		done
	done
	rm -rf "$tmp"
}

seed_drm() {
	cp "$ROOT"/tests/fixtures/fdinfo/*.txt "$1/"
	seed "$1" bad $'drm-driver: x\ndrm-engine-a: 1 KiB\ndrm-engine-capacity-a: 0\ndrm-total-r: 2 GiB\n'
}

# Snapshots of real simulated recordings as top reads them (a small
# client of the control socket: python3), and a hostile one by hand.
seed_live() {
	local d=$1 bin=$ROOT/build/t410trace tmp
	tmp=$(mktemp -d)
	if [[ -x $bin ]]; then
		"$bin" record -q --sim --period 1ms --duration 3s -b a -c "$tmp/c.sock" \
			-o "$tmp/s.t4t" & local rec=$!
		for _ in $(seq 200); do [[ -S $tmp/c.sock ]] && break; sleep 0.05; done
		sleep 1
		python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"live\n")
d = b""
while b"\n" not in d: d += s.recv(65536)
head, rest = d.split(b"\n", 1); n = int(head.split()[2])
while len(rest) < n: rest += s.recv(65536)
open(sys.argv[2], "wb").write(rest[:n])' "$tmp/c.sock" "$d/sim" || true
		wait $rec || true
	fi
	seed "$d" hostile $'t410trace-live 2\nnow_ns\t5\nhost\th\\x1b\\t"\nsimulated\t1\nref_clock\t0\nperiod_ns\t1000000\ntriggers\t3\noverruns\t0\ndropped\t0\nread_failures\t0\ncpu_ns\t1\nphase\tp,"q\nphase_set_ns\t1\ndomains\t1\ndomain\t3\t2\t-1\t1\t9\t2\t1\tnvidia_ucf_pmu_0\tnvidia_ucf_pmu_0\nevent\t0\t18446744073709551615\tmem_bytes_rd\tbytes\nend\n'
	rm -rf "$tmp"
}

run() {
	local name=$1 secs=$2 corpus=$OUT/corpus/$1 crashes=$OUT/crashes/$1
	mkdir -p "$corpus" "$crashes"
	[[ -n $(ls -A "$corpus") ]] || "seed_$name" "$corpus"
	echo "== fuzz_$name: $secs s"
	(cd "$ROOT" && FUZZ_FIXTURE="$ROOT/tests/fixtures/sysfs/t410" \
		"$OUT/fuzz_$name" "$corpus" "$ROOT/tools/fuzz/corpus/$name" \
		"$ROOT/tools/fuzz/crashes/$name" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -close_fd_mask=2 \
		-artifact_prefix="$crashes/" 2>&1 | grep -E '^(#[0-9]+ +DONE|stat::|==|SUMMARY|fuzz check|.*ERROR)' || true)
}

case ${1:-} in
--build)
	for n in "${ALL[@]}"; do build "$n"; done
	exit 0 ;;
--repro)
	build "$2"
	cd "$ROOT" && exec "$OUT/fuzz_$2" "$3" ;;
--save)
	shift
	NAMES=("$@")
	[[ ${#NAMES[@]} -gt 0 ]] || NAMES=("${ALL[@]}")
	for n in "${NAMES[@]}"; do
		build "$n"
		mkdir -p "$ROOT/tools/fuzz/corpus/$n"
		(cd "$ROOT" && FUZZ_FIXTURE="$ROOT/tests/fixtures/sysfs/t410" \
			"$OUT/fuzz_$n" -merge=1 -max_len=65536 "$ROOT/tools/fuzz/corpus/$n" \
			"$OUT/corpus/$n" 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new files' || true)
	done
	exit 0 ;;
esac
SECS=${1:-60}
shift || true
NAMES=("$@")
[[ ${#NAMES[@]} -gt 0 ]] || NAMES=("${ALL[@]}")
for n in "${NAMES[@]}"; do build "$n"; done
for n in "${NAMES[@]}"; do run "$n" "$SECS"; done
