# t410trace - build, test, demo, bench.
#
#   make            build build/t410trace and libt410trace, and
#                   build/t410trace-uninstalled.pc (PKG_CONFIG_PATH=build)
#   make check      build everything (on every CPU unless make is given -j)
#                   and run every test (Criterion), the fuzz harnesses'
#                   saved corpora and crash inputs included
#   make check SAN=1  the same with -fsanitize=address,undefined
#   make demo       record a simulated Tegra410 and show what was recorded
#   make bench      run the benchmarks (results: docs/PERFORMANCE.md)
#   make deps       install missing Debian packages (as root)
#   make check-arm64  build everything for aarch64 (the real target) into
#                   build-arm64/ and run every test under qemu-user
#   make install    PREFIX=/usr/local DESTDIR= (says what to add to PATH when
#                   PREFIX/bin is not in it)
#
# V=1 shows full commands. CC=clang works. CI=true adds -Werror.
# BPF components (bpf/x.bpf.c) are built with CLANG, LLVM_STRIP and BPFTOOL
# against VMLINUX_BTF (default: the running kernel's); ARCH picks the BPF
# target arch (default: this machine's).
# Cross builds set CC, PKG_CONFIG, OUT, ARCH and, for the tests,
# CRITERION_CFLAGS, CRITERION_LIBS (check-arm64 does, through a recursive
# make check).

CC ?= cc
PKG_CONFIG ?= pkg-config
PREFIX ?= /usr/local
DESTDIR ?=
V ?= 0
SAN ?= 0

ifeq ($(SAN),1)
OUT ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
OUT ?= build
SANFLAGS :=
endif

VERSION := $(shell sed -n 's/^\#define T4_VERSION "\(.*\)"/\1/p' util/util.h)
PKGS := liburing libzstd libprotobuf-c libbpf libmicrohttpd
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
ifeq ($(CI),true)
WARN += -Werror
endif
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c17 -D_GNU_SOURCE -pthread $(WARN) $(CFLAGS) $(SANFLAGS) $(EXTRA_CFLAGS) \
  -I$(OUT)/gen -MMD -MP
LDLIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null || echo -luring -lzstd -lprotobuf-c -lbpf -lelf -lz -lmicrohttpd) -lm -pthread
LDFLAGS += $(SANFLAGS)
CRITERION_CFLAGS ?=
CRITERION_LIBS ?= -lcriterion

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2);
endif

MODULES := util packets collector control bpf sched decode live
CORE_SRC := $(filter-out %.bpf.c,$(foreach m,$(MODULES),$(wildcard $(m)/*.c)))
# m/x.proto -> $(OUT)/gen/m/x.pb-c.{c,h} (protoc-c), compiled into the core
PROTO := $(foreach m,$(MODULES),$(wildcard $(m)/*.proto))
PROTO_C := $(PROTO:%.proto=$(OUT)/gen/%.pb-c.c)
PROTO_H := $(PROTO_C:.c=.h)
# The report's assets (decode/out_report.c): uPlot's script, stylesheet and
# licence from the npm package that `make deps` installs into .deps/ (never
# committed), and the report's own script and style, embedded into the
# binary as one generated C file (tools/embed.py, run on the build host:
# a cross build embeds the same bytes; offline once installed).
UPLOT_DIR ?= .deps/node_modules/uplot
UPLOT_FILES := $(UPLOT_DIR)/dist/uPlot.iife.min.js $(UPLOT_DIR)/dist/uPlot.min.css \
  $(UPLOT_DIR)/LICENSE $(UPLOT_DIR)/package.json
REPORT_ASSETS_C := $(OUT)/gen/decode/report_assets.c
CORE_OBJ := $(CORE_SRC:%.c=$(OUT)/%.o) $(PROTO_C:.c=.o) $(REPORT_ASSETS_C:.c=.o)
CLI_SRC := $(wildcard cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(OUT)/%.o)
# libt410trace: the app API over control/ (its client, name rule and probe
# page) and util/ (its errors, and the text rule they follow)
LIB_SRC := $(wildcard lib/*.c) control/client.c control/name.c control/probe.c util/env.c util/err.c util/text.c
LIB_PIC := $(LIB_SRC:%.c=$(OUT)/pic/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(OUT)/%.o)
# The fuzz harnesses, built with a plain main() that replays their saved
# corpus and crash inputs (tools/fuzz/replay.c), run by `make check`.
FUZZ_NAMES := reader codec events pmu control parse drm decode live
FUZZ_BIN := $(FUZZ_NAMES:%=$(OUT)/fuzz/replay_%)
FUZZ_CFLAGS := $(filter-out -MMD -MP,$(ALL_CFLAGS))
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(OUT)/bench/%)
# Programs built against libt410trace.so and include/ only, as a user's
# (tests/apps/lib_app.c is compiled by its test instead): the tests' and the
# bookmark benchmark's workloads. They find the library next to them.
APPS := phase_app duty_app
APP_BIN := $(APPS:%=$(OUT)/apps/%)

BIN := $(OUT)/t410trace
CORE_LIB := $(OUT)/libt4core.a
SOLIB := $(OUT)/libt410trace.so
TEST_BIN := $(OUT)/t4test

.PHONY: all check check-arm64 demo bench deps deps-quiet install clean tests
.DELETE_ON_ERROR:

all: $(BIN) $(SOLIB) $(OUT)/t410trace.pc $(OUT)/t410trace-uninstalled.pc

$(OUT)/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -I. -I$(OUT) -c $< -o $@

# ---- BPF components: bpf/x.bpf.c -> OUT/bpf/x.bpf.o -> OUT/bpf/x.skel.h,
# included by bpf/x.c (libbpf-tools style). vmlinux.h comes from the BTF of
# the kernel the programs are built for; CO-RE relocates them at load.
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
ARCH ?= $(shell uname -m)
BPF_ARCH := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(ARCH)))
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -Wall -MMD -MP
BPF_SRC := $(wildcard bpf/*.bpf.c)
BPF_OBJ := $(BPF_SRC:bpf/%.bpf.c=$(OUT)/bpf/%.bpf.o)
BPF_SKEL := $(BPF_SRC:bpf/%.bpf.c=$(OUT)/bpf/%.skel.h)

$(OUT)/bpf/vmlinux.h:
	$(call msg,BTF,$@)
	@mkdir -p $(@D)
	$(Q)test -r "$(VMLINUX_BTF)" || { echo "no kernel BTF at $(VMLINUX_BTF) (a kernel with CONFIG_DEBUG_INFO_BTF=y, or VMLINUX_BTF=FILE)" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file "$(VMLINUX_BTF)" format c > $@

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c bpf/%.h $(OUT)/bpf/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -I$(OUT)/bpf -Ibpf -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUT)/bpf/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# each component's user side includes its skeleton; keep the objects
.SECONDARY: $(BPF_OBJ)
$(BPF_SRC:bpf/%.bpf.c=$(OUT)/bpf/%.o): $(OUT)/bpf/%.o: $(OUT)/bpf/%.skel.h

$(OUT)/gen/%.pb-c.c $(OUT)/gen/%.pb-c.h: %.proto
	$(call msg,PROTOC,$@)
	@mkdir -p $(@D)
	$(Q)protoc-c --proto_path=. --c_out=$(OUT)/gen $<

$(REPORT_ASSETS_C): tools/embed.py decode/report.js decode/report.css $(UPLOT_FILES)
	$(call msg,EMBED,$@)
	$(Q)python3 tools/embed.py $@ t4_rpt_uplot_js=$(UPLOT_DIR)/dist/uPlot.iife.min.js \
	  t4_rpt_uplot_css=$(UPLOT_DIR)/dist/uPlot.min.css t4_rpt_uplot_license=$(UPLOT_DIR)/LICENSE \
	  t4_rpt_uplot_version=json:$(UPLOT_DIR)/package.json:version \
	  t4_rpt_js=decode/report.js t4_rpt_css=decode/report.css

$(UPLOT_FILES):
	@echo "uPlot not found at $(UPLOT_DIR): run 'make deps' (it installs the npm package uplot there)" >&2
	@exit 1

$(OUT)/gen/%.o: $(OUT)/gen/%.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I. -c $< -o $@

# sources include generated headers: generate them first
$(CORE_OBJ) $(CLI_OBJ) $(TEST_OBJ): | $(PROTO_H)

$(OUT)/pic/%.o: %.c
	$(call msg,CC-PIC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -I. -Iinclude -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(SOLIB): $(LIB_PIC)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libt410trace.so.0 $^ -pthread -o $@
	$(Q)ln -sf libt410trace.so $(OUT)/libt410trace.so.0

$(OUT)/t410trace.pc: lib/t410trace.pc.in
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|' $< > $@

# PKG_CONFIG_PATH=$(OUT) pkg-config --cflags --libs t410trace before install
$(OUT)/t410trace-uninstalled.pc: lib/t410trace-uninstalled.pc.in Makefile
	$(Q)sed -e 's|@LIBDIR@|$(abspath $(OUT))|g' -e 's|@INCLUDEDIR@|$(abspath include)|g' \
	  -e 's|@VERSION@|$(VERSION)|' -e 's|@SANFLAGS@|$(SANFLAGS)|' $< > $@

$(TEST_OBJ): ALL_CFLAGS += $(CRITERION_CFLAGS)

$(TEST_BIN): $(TEST_OBJ) $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) $(CRITERION_LIBS) -o $@

$(OUT)/fuzz/replay_%: tools/fuzz/fuzz_%.c tools/fuzz/replay.c tools/fuzz/fuzz_common.h $(CORE_LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(FUZZ_CFLAGS) -I. $(LDFLAGS) $< tools/fuzz/replay.c $(CORE_LIB) $(LDLIBS) -o $@

$(OUT)/bench/%: bench/%.c $(CORE_LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -I. $(LDFLAGS) $< $(CORE_LIB) $(LDLIBS) -o $@

$(OUT)/apps/%: tests/apps/%.c include/t410trace.h $(SOLIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) -Iinclude $(LDFLAGS) $< -L$(OUT) -lt410trace \
	  -Wl,-rpath,'$$ORIGIN/..' -o $@

tests: deps-quiet $(TEST_BIN) $(FUZZ_BIN) $(APP_BIN) all

# Criterion runs tests in parallel workers (TEST_JOBS); no test depends on
# having the CPUs to itself. T4_BIN lets CLI tests find the binary, T4_CC and
# T4_CXX compile test programs for the same target. The TAP copy of the
# results gives each skipped test with its reason (tests left out by a
# --filter in CRITERION_FLAGS are not listed), each failed test with its
# first lines of diagnosis (a CI log shows only its tail) and a closing line.
# The build on every CPU unless make was given -j (a plain `make check`,
# as README and .ci/run's three steps give it, built on one CPU before).
CHECK_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
# Tests in two workers. Three finish the native suite sooner (229 s
# against 280 s) but load a 2-CPU machine past what two timing-bound tests
# allow (docs/PERFORMANCE.md, "CI time").
TEST_JOBS = 2
check: deps-quiet
	$(Q)$(MAKE) $(CHECK_JOBS) --no-print-directory tests
	$(Q)rm -f $(TEST_BIN).tap; out=$$(cd $(OUT) && pwd) || exit 1; \
	T4_BIN="$$out/$(notdir $(BIN))" T4_OUT="$$out" T4_SOLIB="$$out/$(notdir $(SOLIB))" \
	  T4_CC='$(CC)' T4_CXX='$(CXX)' LSAN_OPTIONS="suppressions='$$PWD/tests/lsan.supp'" \
	  $(TEST_BIN) --jobs $(TEST_JOBS) --tap=$(TEST_BIN).tap $(CRITERION_FLAGS); rc=$$?; \
	awk '/^not ok / { f++; fail = fail "  failed " substr($$0, 10) "\n"; diag = 6; next } \
	  diag && /^  / { diag--; if (diag) fail = fail "  " $$0 "\n"; next } { diag = 0 } \
	  /^ok / && !/ # SKIP / { p++ } \
	  / # SKIP / && !/ # SKIP test was skipped$$/ { s++; sub(/^ok - /, ""); sub(/  # SKIP /, ": "); \
	    print "  skipped " $$0 } \
	  END { printf "%s", fail; printf "$(notdir $(OUT)): %d passed, %d failed, %d skipped\n", p, f, s }' \
	  $(TEST_BIN).tap; exit $$rc

# The same build and tests for aarch64 on an x86_64 host: Debian's cross
# compiler and arm64 multiarch libraries, one recursive make check into its
# own folder (same rules), the aarch64 binaries run by qemu-user through
# binfmt_misc; the BPF objects are built for arm64 (ARCH) against this
# machine's vmlinux.h (CO-RE relocates them on the target). tools/deps.sh --arm64 installs all that (as root) and
# unpacks Criterion's arm64 build into $(ARM64_OUT)/deb (why: deps.sh).
# Tests that need what qemu-user lacks (perf_event_open, io_uring, BPF)
# skip with the reason their probe found (tests/probe.h).
ARM64_OUT ?= build-arm64
ARM64_CROSS ?= aarch64-linux-gnu-
ARM64_DEB := $(ARM64_OUT)/deb
ARM64_LIB := $(ARM64_DEB)/usr/lib/aarch64-linux-gnu
check-arm64:
	$(Q)tools/deps.sh --quiet --arm64=$(ARM64_DEB)
	$(Q)$(MAKE) --no-print-directory check SAN=0 OUT=$(ARM64_OUT) ARCH=aarch64 CC=$(ARM64_CROSS)gcc \
	  CXX=$(ARM64_CROSS)g++ PKG_CONFIG=$(ARM64_CROSS)pkg-config \
	  CRITERION_CFLAGS='-isystem $(ARM64_DEB)/usr/include' \
	  CRITERION_LIBS='-L$(ARM64_LIB) -Wl,-rpath-link,$(ARM64_LIB) -Wl,--disable-new-dtags,-rpath,"\$$$$ORIGIN/$(ARM64_LIB:$(ARM64_OUT)/%=%)" -lcriterion'

demo: deps-quiet all
	$(Q)tools/demo.sh $(BIN)

bench:
	$(Q)tools/deps.sh --quiet --bench
	$(Q)$(MAKE) --no-print-directory all $(BENCH_BIN) $(APP_BIN)
	$(Q)tools/bench.sh $(OUT)

deps:
	$(Q)tools/deps.sh

deps-quiet:
	$(Q)tools/deps.sh --quiet

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
	  $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/t410trace
	install -m 0755 $(SOLIB) $(DESTDIR)$(PREFIX)/lib/libt410trace.so.0
	ln -sf libt410trace.so.0 $(DESTDIR)$(PREFIX)/lib/libt410trace.so
	install -m 0644 include/t410trace.h $(DESTDIR)$(PREFIX)/include/t410trace.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|' lib/t410trace.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/t410trace.pc
	install -m 0644 docs/t410trace.1 $(DESTDIR)$(PREFIX)/share/man/man1/t410trace.1
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) [ -n "$(DESTDIR)" ] || \
	  printf 't410trace: %s is not in PATH; add it: export PATH="%s:$$PATH"\n' \
	  "$(PREFIX)/bin" "$(PREFIX)/bin";; esac

clean:
	rm -rf build build-san $(ARM64_OUT)

-include $(CORE_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(LIB_PIC:.o=.d) $(BPF_OBJ:.o=.d)
