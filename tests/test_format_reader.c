/* test_format_reader.c - docs/FORMAT.md is enough to read every log
 * t410trace writes (suite "format_reader").
 *
 * tools/t4read.py is a reader written from FORMAT.md alone, not from the C
 * sources. Each test has it read logs and compares what it read with what
 * `t410trace info --json` read (tests/format_reader_check.py): chunks read
 * and damaged, packets, reference and return packets, copies, unknown
 * packets, values, duplicates, first and last trigger, return packets per
 * domain and every event's total, exactly; and for undamaged logs, packet
 * by packet, each return packet's counts against the interval `decode -f
 * jsonl` made of it. The logs: the committed fixtures (older writers), a
 * simulated Tegra410 recorded in virtual time and a host's software
 * counters in each log format (1, 2, 3), simulated logs damaged (a chunk's
 * payload, a chunk's header, a cut tail, garbage after the end, a chunk of
 * a newer version, the log twice in a file), and t4write.py's logs of what
 * a live recording rarely writes (IDs of 4096 and above, two schedulers,
 * copies, a damaged first header, two recordings in a file, empty chunks,
 * duplicated and reordered packets). A gap in FORMAT.md shows up as a
 * disagreement here.
 *
 * Skips only without python3 or zstd (or T4_BIN, outside `make check`);
 * the host logs without CPU-wide perf counters.
 */
#include "cli_testutil.h"
#include "probe.h"
#include "util/util.h"

#include <stdint.h>

struct fr {
	char *dir;                            /* every command runs there */
	char check[PATH_MAX], writer[PATH_MAX]; /* absolute */
	char out[1 << 16];
};

static void fr_init(struct fr *c)
{
	cli_bin();
	if (!t4t_have_cmds("python3 zstd"))
		cr_skip_test("needs python3 and zstd (tools/t4read.py reads the logs)");
	cr_assert_not_null(cli_repo_file("tests/format_reader_check.py", c->check),
			   "tests/format_reader_check.py not found from here or from T4_BIN");
	cr_assert_not_null(cli_repo_file("tools/t4write.py", c->writer),
			   "tools/t4write.py not found from here or from T4_BIN");
	c->dir = cli_tmpdir("t4fr");
}

static void fr_fini(struct fr *c)
{
	t4_rmtree(c->dir);
	free(c->dir);
}

/* A shell line in the test's directory; output and errors in c->out. */
#define fr_sh(c, ...) cli_in_dir((c)->dir, (c)->out, sizeof((c)->out), __VA_ARGS__)

/* t4read.py and `info --json` read LOG alike; damaged >= 0: and both
 * found that many damaged chunks; samples: and every return packet is
 * `decode -f jsonl`'s interval (an undamaged log). */
static void agree_on(struct fr *c, const char *log, int damaged, bool samples)
{
	char more[64] = "";
	size_t n = 0;

	if (damaged >= 0)
		n += (size_t)snprintf(more, sizeof(more), " --damaged %d", damaged);
	if (samples) {
		snprintf(more + n, sizeof(more) - n, " --jsonl decode.jsonl");
		cr_assert_eq(fr_sh(c, "\"$B\" decode '%s' -f jsonl -o decode.jsonl", log), 0,
			     "decode -f jsonl %s: %s", log, c->out);
	}
	cr_assert_eq(fr_sh(c, "\"$B\" info --json '%s' > info.json", log), 0,
		     "info --json %s: %s", log, c->out);
	cr_assert_eq(fr_sh(c, "python3 '%s' '%s' info.json%s", c->check, log, more), 0,
		     "%s: t4read.py and t410trace disagree:\n%s", log, c->out);
}

static void agree(struct fr *c, const char *log, int damaged)
{
	agree_on(c, log, damaged, false);
}

/* `record ARGS -o NAME` in the test's directory. */
static void record(struct fr *c, const char *name, const char *args)
{
	cr_assert_eq(fr_sh(c, "\"$B\" record -q %s -o %s", args, name), 0, "record %s: %s",
		     args, c->out);
}

/* The offset of chunk k of the log (its header), read from the headers
 * before it (FORMAT.md section 2: hdr_size at 10, comp_size at 44). */
static long chunk_at(FILE *f, int k)
{
	long off = 0;

	for (int i = 0; i < k; i++) {
		uint8_t h[64];

		cr_assert_eq(fseek(f, off, SEEK_SET), 0);
		cr_assert_eq(fread(h, 1, sizeof(h), f), sizeof(h), "chunk %d: no header", i);
		off += (long)(h[10] | h[11] << 8) +
		       (long)((uint32_t)h[44] | (uint32_t)h[45] << 8 | (uint32_t)h[46] << 16 |
			      (uint32_t)h[47] << 24);
	}
	return off;
}

/* Inverts n bytes of the log's chunk k, from `at` bytes into it (at >= 64:
 * its zstd frame, so its payload CRC fails; below: its header). */
static void flip(struct fr *c, const char *name, int k, long at, int n)
{
	char path[PATH_MAX + 64];
	uint8_t b[16];

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	FILE *f = fopen(path, "r+b");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	long off = chunk_at(f, k) + at;
	cr_assert_eq(fseek(f, off, SEEK_SET), 0);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n, "%s: chunk %d too short", name, k);
	for (int i = 0; i < n; i++)
		b[i] ^= 0xff;
	cr_assert_eq(fseek(f, off, SEEK_SET), 0);
	cr_assert_eq(fwrite(b, 1, (size_t)n, f), (size_t)n);
	cr_assert_eq(fclose(f), 0);
}

/* Makes chunk k of the log say version 4 (a newer format: skipped by
 * its declared size), its hdr_crc made to match. */
static void newer(struct fr *c, const char *name, int k)
{
	char path[PATH_MAX + 64];
	uint8_t h[64];

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	FILE *f = fopen(path, "r+b");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	long off = chunk_at(f, k);
	cr_assert_eq(fseek(f, off, SEEK_SET), 0);
	cr_assert_eq(fread(h, 1, sizeof(h), f), sizeof(h), "%s: no chunk %d", name, k);
	h[8] = 4;
	h[9] = 0;
	uint32_t crc = t4_crc32c(0, h, 60);
	for (int i = 0; i < 4; i++)
		h[60 + i] = (uint8_t)(crc >> (8 * i));
	cr_assert_eq(fseek(f, off, SEEK_SET), 0);
	cr_assert_eq(fwrite(h, 1, sizeof(h), f), sizeof(h));
	cr_assert_eq(fclose(f), 0);
}

/* The committed logs of older writers (1.0, 1.1, 2, 3; virtual, live
 * simulated, live host). */
Test(format_reader, fixture_logs_read_alike, .timeout = 120)
{
	static const char *const logs[] = {
		"v1.0-live-host", "v1.0-live-sim", "v1.0-virtual-sim", "v1.1-live-host",
		"v1.1-live-sim",  "v1.1-virtual-sim", "v2-virtual-sim", "v3-live-host",
		"v3-virtual-sim",
	};
	char fix[PATH_MAX], log[PATH_MAX + 64];
	struct fr c;

	fr_init(&c);
	cr_assert_not_null(cli_repo_file("tests/fixtures/logs", fix));
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		snprintf(log, sizeof(log), "%s/%s.t4t", fix, logs[i]);
		agree_on(&c, log, 0, true);
	}
	/* a 1.0 log of one chunk twice: no tag, no lower seq; its second
	 * session packet says where the second recording starts (7 step 3a) */
	cr_assert_eq(fr_sh(&c, "cat '%s/v1.0-virtual-sim.t4t' '%s/v1.0-virtual-sim.t4t' "
			       "> twice.t4t", fix, fix), 0, "%s", c.out);
	agree(&c, "twice.t4t", 0);
	fr_fini(&c);
}

/* A simulated Tegra410 in virtual time (34 domains, 190 events, phases
 * cut at bookmarks' set times), one log per format. */
Test(format_reader, simulated_logs_of_each_format_read_alike, .timeout = 120)
{
	struct fr c;
	char args[96], log[16];

	fr_init(&c);
	for (int v = 1; v <= 3; v++) {
		snprintf(args, sizeof(args), "--sim=7 --virtual -d 500ms --log-format %d", v);
		snprintf(log, sizeof(log), "s%d.t4t", v);
		record(&c, log, args);
		agree_on(&c, log, 0, true);
	}
	fr_fini(&c);
}

/* This host's software counters (live: few values per trigger, format 3's
 * quiet records at their most), one log per format. */
Test(format_reader, host_logs_of_each_format_read_alike, .timeout = 120)
{
	struct fr c;
	char args[96], log[16];

	fr_init(&c);
	t4t_need_perf();
	for (int v = 1; v <= 3; v++) {
		snprintf(args, sizeof(args), "-d 200ms -e cpu-clock,context-switches "
			 "--log-format %d", v);
		snprintf(log, sizeof(log), "h%d.t4t", v);
		record(&c, log, args);
		agree_on(&c, log, 0, true);
	}
	fr_fini(&c);
}

/* A simulated log of format v with at least 3 chunks, as d.t4t (format 1
 * takes 2.6 times the room of format 3). */
static void three_chunks(struct fr *c, int v)
{
	char args[96];

	snprintf(args, sizeof(args), "--sim=11 --virtual -d %s --log-format %d",
		 v == 1 ? "1s" : "2s", v);
	cr_assert_eq(fr_sh(c, "rm -f d.t4t"), 0, "%s", c->out);
	record(c, "d.t4t", args);
}

/* Damage (FORMAT.md section 7) in formats 1 and 3: a middle chunk's
 * payload (its CRC fails: the chunk is skipped, the rest read) and a
 * chunk's header (the readers scan for the next one). Both readers count
 * one damaged chunk and keep the same totals. */
Test(format_reader, damaged_chunks_read_alike, .timeout = 120)
{
	struct fr c;

	fr_init(&c);
	for (int v = 1; v <= 3; v += 2) {
		three_chunks(&c, v);
		cr_assert_eq(fr_sh(&c, "cp d.t4t p.t4t && cp d.t4t h.t4t"), 0, "%s", c.out);
		flip(&c, "p.t4t", 1, 64 + 500, 8);
		agree(&c, "p.t4t", 1);
		flip(&c, "h.t4t", 1, 20, 1);
		agree(&c, "h.t4t", 1);
	}
	fr_fini(&c);
}

/* t4read.py decompresses a chunk by the zstandard module where it can be
 * imported, else by the zstd command: both ways it reads a log as info
 * does, a damaged chunk too. The command: `import zstandard` made to fail
 * (a module of that name first on PYTHONPATH raises ImportError). The
 * module: the first python3 on PATH that has it, run where no zstd command
 * can be found (PATH an empty directory); tools/deps.sh installs
 * python3-zstandard, so this skips only where it was not installed. */
Test(format_reader, both_decompressors_read_alike, .timeout = 120)
{
	static const char *const with_module =
		"for p in $(which -a python3); do \"$p\" -c 'import zstandard' 2> /dev/null &&"
		" { echo \"$p\"; exit 0; }; done; exit 1";
	static const char *const logs[] = { "d.t4t", "p.t4t" };
	char py[PATH_MAX];
	struct fr c;

	fr_init(&c);
	three_chunks(&c, 3);
	cr_assert_eq(fr_sh(&c, "cp d.t4t p.t4t && mkdir nomod empty && echo 'raise "
			       "ImportError(\"no\")' > nomod/zstandard.py"), 0, "%s", c.out);
	flip(&c, "p.t4t", 1, 64 + 500, 8);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(fr_sh(&c, "\"$B\" info --json %s > info.json; [ $? -le 1 ]", logs[i]),
			     0, "info --json %s: %s", logs[i], c.out);
		cr_assert_eq(fr_sh(&c, "PYTHONPATH=\"$PWD/nomod\" python3 '%s' %s info.json "
				       "--damaged %d", c.check, logs[i], i), 0,
			     "the zstd command, %s: %s", logs[i], c.out);
	}
	if (fr_sh(&c, "%s", with_module) != 0)
		cr_skip_test("no python3 on PATH imports zstandard (tools/deps.sh installs "
			     "python3-zstandard)");
	cr_assert_lt(strlen(c.out), sizeof(py));
	snprintf(py, sizeof(py), "%.*s", (int)strcspn(c.out, "\n"), c.out);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(fr_sh(&c, "\"$B\" info --json %s > info.json; [ $? -le 1 ]", logs[i]),
			     0, "info --json %s: %s", logs[i], c.out);
		cr_assert_eq(fr_sh(&c, "PATH=\"$PWD/empty\" '%s' '%s' %s info.json --damaged %d", py,
				   c.check, logs[i], i), 0, "the zstandard module, %s: %s", logs[i],
			     c.out);
	}
	fr_fini(&c);
}

/* The rest of section 7, on a format-1 log: a cut tail (truncated: not
 * damage), a few bytes of garbage after the last chunk (one damaged
 * chunk), a middle chunk of a newer version (skipped: one damaged chunk),
 * the log twice in a file (the second recording is not read). Both
 * readers count the same damaged chunks, stop at the same offset and keep
 * the same totals. */
Test(format_reader, ends_and_newer_chunks_read_alike, .timeout = 120)
{
	struct fr c;

	fr_init(&c);
	three_chunks(&c, 1);
	cr_assert_eq(fr_sh(&c, "cp d.t4t n.t4t && head -c -1000 d.t4t > t.t4t && "
			       "{ cat d.t4t; printf garbage; } > g.t4t && cat d.t4t d.t4t > 2.t4t"),
		     0, "%s", c.out);
	agree(&c, "t.t4t", 0);
	agree(&c, "g.t4t", 1);
	newer(&c, "n.t4t", 1);
	agree(&c, "n.t4t", 1);
	agree(&c, "2.t4t", 0);
	fr_fini(&c);
}

/* t4write.py's logs, each format: what a live recording rarely writes. */
Test(format_reader, written_logs_read_alike, .timeout = 120)
{
	static const char *const opts[] = {
		"--large-ids --copies --schedulers 2 --bookmarks --odd-names",
		"--damage 2 --damage-magic 1 --second-seed 9 --copies",
		"--empty-chunks 2",
		"--duplicate 0.05 --reorder 5 --drop-returns 0.05 --late 0.05 --read-failures 0.05",
	};
	struct fr c;

	fr_init(&c);
	for (int v = 1; v <= 3; v++)
		for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
			cr_assert_eq(fr_sh(&c, "python3 '%s' w.t4t --format %d %s", c.writer, v,
					   opts[i]), 0, "t4write.py %s: %s", opts[i], c.out);
			agree(&c, "w.t4t", -1);
		}
	fr_fini(&c);
}
