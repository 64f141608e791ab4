/* test_decode_cli.c - `t410trace decode` end to end, as a user runs it
 * (suite "decode_cli").
 *
 * The logs come from tools/t4write.py, the project's independent writer
 * (written from FORMAT.md alone), with what a decoder must survive: returns
 * dropped at a full ring, monitors that answered late, failed reads,
 * duplicated and reordered packets, damaged chunks, a truncated tail, two
 * schedulers, IDs of 4096 and above, bookmarks with set_ns, names that need
 * quoting. t4write.py also writes the truth: what the log delivers per
 * domain and event, what damage lost, the triggers a decoder must report.
 * Every output is read back by readers that are not the writer
 * (tests/decode_cli_check.py: Python's csv and json modules, the summary
 * parsed as text) and compared with that truth exactly. Then the options
 * (-x, --bin, --pmu, --event, --from, --to, --phase), exit codes and
 * messages, the output file's safety, standard input, and a simulated
 * Tegra410 recorded and decoded.
 *
 * Skips only without python3 or zstd (or T4_BIN, outside `make check`).
 */
#include "cli_testutil.h"
#include "craft_log.h"
#include "probe.h"
#include "util/util.h"

#include <stdarg.h>
#include <sys/stat.h>

struct dc {
	const char *bin;
	char *dir;                            /* every command runs there */
	char writer[PATH_MAX], check[PATH_MAX]; /* absolute */
	char out[1 << 16];
};

static void dc_init(struct dc *c, const char *needs)
{
	c->bin = cli_bin();
	if (!t4t_have_cmds(needs))
		cr_skip_test("needs %s (tools/t4write.py writes the logs, Python's csv and json "
			     "modules read decode's outputs)", needs);
	cr_assert_not_null(cli_repo_file("tools/t4write.py", c->writer),
			   "tools/t4write.py not found from here or from T4_BIN");
	cr_assert_not_null(cli_repo_file("tests/decode_cli_check.py", c->check),
			   "tests/decode_cli_check.py not found from here or from T4_BIN");
	c->dir = cli_tmpdir("t4dec");
}

static void dc_fini(struct dc *c)
{
	t4_rmtree(c->dir);
	free(c->dir);
}

/* Run a shell command line in the test's directory; standard output and
 * errors in c->out (a redirection in the line applies to standard output
 * only). Returns the exit status. */
#define dc_sh(c, ...) cli_in_dir((c)->dir, (c)->out, sizeof((c)->out), __VA_ARGS__)

/* `t410trace decode ARGS`. */
static int dc_decode(struct dc *c, const char *args)
{
	return dc_sh(c, "'%s' decode %s", c->bin, args);
}

/* t4write.py NAME.t4 --truth NAME.json OPTS */
static void dc_write(struct dc *c, const char *name, const char *opts)
{
	int st = dc_sh(c, "python3 '%s' %s.t4 --truth %s.json %s", c->writer, name, name, opts);
	cr_assert_eq(st, 0, "t4write.py %s: %s", opts, c->out);
}

/* decode_cli_check.py ARGS must agree. */
static void dc_check(struct dc *c, const char *fmt, ...)
{
	char args[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	int st = dc_sh(c, "python3 '%s' %s", c->check, args);
	cr_assert_eq(st, 0, "decode_cli_check.py %s\n%s", args, c->out);
}

/* Whether the file holds the text. */
static bool dc_file_has(struct dc *c, const char *file, const char *text)
{
	char out[64];

	return cli_run(out, sizeof(out), "cd '%s' && grep -qF -- '%s' '%s'", c->dir, text, file) == 0;
}

/* Decode NAME.t4 to CSV, JSONL (-o) and the summary (standard output): each
 * decode succeeds, whatever the damage, and each output agrees with the
 * truth; with `rates`, every frequency metric is the clock's true one. */
static void dc_formats(struct dc *c, const char *name, bool rates)
{
	char args[512];

	snprintf(args, sizeof(args), "%s.t4 -f csv -o %s.csv", name, name);
	cr_assert_eq(dc_decode(c, args), 0, "decode %s: %s", args, c->out);
	cr_assert(strstr(c->out, "wrote"), "%s", c->out);
	dc_check(c, "csv %s.csv %s.json", name, name);
	snprintf(args, sizeof(args), "%s.t4 --format=jsonl --output %s.jsonl", name, name);
	cr_assert_eq(dc_decode(c, args), 0, "decode %s: %s", args, c->out);
	dc_check(c, "jsonl %s.jsonl %s.json", name, name);
	snprintf(args, sizeof(args), "%s.t4 -v > %s.txt", name, name);
	cr_assert_eq(dc_decode(c, args), 0, "decode %s: %s", args, c->out);
	dc_check(c, "summary %s.txt %s.json", name, name);
	if (rates)
		dc_check(c, "rates %s.jsonl %s.txt %s.json", name, name, name);
}

/* t4write.py OPTS writes NAME.t4; every format agrees with the truth, and
 * the summary holds each text of `has` and none of `lacks` (NULL-ended). */
static void scenario(struct dc *c, const char *name, const char *opts, bool rates,
		     const char *const *has, const char *const *lacks)
{
	char txt[128];

	dc_write(c, name, opts);
	dc_formats(c, name, rates);
	snprintf(txt, sizeof(txt), "%s.txt", name);
	for (; has && *has; has++)
		cr_assert(dc_file_has(c, txt, *has), "%s: no '%s' in the summary", opts, *has);
	for (; lacks && *lacks; lacks++)
		cr_assert_not(dc_file_has(c, txt, *lacks), "%s: '%s' in the summary", opts, *lacks);
}

/* ---- what a log can go through ------------------------------------------- */

Test(decode_cli, clean_log_in_every_format, .timeout = 120)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	scenario(&c, "clean", "--realistic --triggers 600", true,
		 (const char *[]){ "t410trace decode: clean.t4",
				   "every domain answered every trigger", NULL },
		 (const char *[]){ "PARTIAL", "SIMULATED", NULL }); /* not --sim */
	dc_fini(&c);
}

/* Returns dropped at a full ring and triggers a monitor skipped are
 * carried by the domain's next return, failed reads by the next good one:
 * nothing is lost, every total is exact, the summary counts what is
 * missing and does not call the totals partial. */
Test(decode_cli, dropped_late_and_failed_returns_are_carried, .timeout = 120)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	scenario(&c, "drops", "--triggers 700 --seed 2 --drop-returns 0.05 --late 0.03 "
			      "--read-failures 0.02 --drop-refs 0.02", true,
		 (const char *[]){ "unanswered triggers per domain", NULL },
		 (const char *[]){ "PARTIAL", NULL });
	dc_fini(&c);
}

/* Every clock model places the same counts: the totals and the tiling of
 * the timeline do not depend on it. */
Test(decode_cli, every_clock_model_keeps_the_totals, .timeout = 120)
{
	struct dc c;
	static const char *const models[] = { "rate", "offset", "window" };

	dc_init(&c, "python3 zstd");
	dc_write(&c, "cm", "--triggers 500 --seed 12 --drop-returns 0.03 --late 0.03 "
			   "--schedulers 2 --bookmarks");
	for (size_t i = 0; i < T4_ARRAY_LEN(models); i++) {
		char args[256];
		snprintf(args, sizeof(args), "cm.t4 -f csv --clock-model %s -o cm.csv", models[i]);
		cr_assert_eq(dc_decode(&c, args), 0, "decode %s: %s", args, c.out);
		dc_check(&c, "csv cm.csv cm.json");
		snprintf(args, sizeof(args), "cm.t4 -f jsonl --clock-model=%s -o cm.jsonl",
			 models[i]);
		cr_assert_eq(dc_decode(&c, args), 0, "decode %s: %s", args, c.out);
		dc_check(&c, "jsonl cm.jsonl cm.json");
	}
	dc_fini(&c);
}

/* Duplicates and reordering (the packets of a trigger spread over two
 * chunks) decode to exactly the rows of the same recording written
 * cleanly, and info's totals count a duplicated return once too. */
Test(decode_cli, duplicated_and_reordered_packets_change_nothing, .timeout = 120)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	scenario(&c, "mixed", "--triggers 700 --seed 3 --chunk-packets 300 --duplicate 0.05 "
			      "--reorder 64", true, (const char *[]){ "duplicates", NULL }, NULL);
	dc_write(&c, "plain", "--triggers 700 --seed 3 --chunk-packets 300");
	cr_assert_eq(dc_decode(&c, "plain.t4 -f csv -o plain.csv"), 0, "%s", c.out);
	dc_check(&c, "sum plain.csv mixed.csv");
	cr_assert_eq(dc_sh(&c, "\"$B\" info --json mixed.t4 > mixed.info"), 0, "%s", c.out);
	dc_check(&c, "info-totals mixed.csv mixed.info");
	dc_fini(&c);
}

/* A damaged chunk: the decode still succeeds (exit 0) with a warning that
 * names the chunk; totals are lower by exactly the counts in it, the
 * intervals across it are flagged partial and the summary says PARTIAL. */
Test(decode_cli, damaged_chunk_loses_exactly_its_counts, .timeout = 120)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	/* no rates: see damage_leaves_rates_true */
	scenario(&c, "dmg", "--triggers 700 --seed 4 --damage 2 --drop-returns 0.02 --late 0.02",
		 false, (const char *[]){ "TOTALS ARE PARTIAL", NULL }, NULL);
	cr_assert(dc_file_has(&c, "dmg.json", "\"partial\": true"), "the damage lost nothing");
	cr_assert(dc_file_has(&c, "dmg.jsonl", "\"partial\""));
	cr_assert_eq(dc_decode(&c, "dmg.t4 -f csv -o again.csv"), 0, "%s", c.out);
	cr_assert(strstr(c.out, "payload CRC mismatch"), "%s", c.out);
	dc_fini(&c);
}

/* A damaged log with bookmarks (the damaged chunk held a bookmark packet
 * or not) decodes to outputs that agree with the truth, rates included. */
static void damaged_with_bookmarks(const char *chunk, bool bookmark_lost)
{
	struct dc c;
	char opts[128];

	dc_init(&c, "python3 zstd");
	snprintf(opts, sizeof(opts), "--triggers 700 --seed 4 --bookmarks --damage %s", chunk);
	dc_write(&c, "dmg", opts);
	cr_assert_eq(dc_file_has(&c, "dmg.json", "\"lost\": true"), bookmark_lost,
		     "chunk %s holds a bookmark packet: %d", chunk, !bookmark_lost);
	dc_formats(&c, "dmg", true);
	dc_fini(&c);
}

/* DECODER BUG, reported and left to decode/'s owner (enable this test with
 * the fix): an interval across a damaged chunk (flagged PARTIAL) holds only
 * the counts since the last return lost with the chunk, but its elapsed time
 * spans the whole gap, so its rates are far too low: ucf_freq 0.026 GHz for
 * a 2.226 GHz clock in its JSONL and CSV rows (the CSV has no flag to tell),
 * and its phase's averages in the summary are biased (pcie_freq 1.208 GHz
 * in the damaged phase, 2.548 GHz in the others). Rates should be absent
 * for a PARTIAL interval, and phase averages should leave such intervals'
 * counts and time out (the phase totals keep the counts). */
Test(decode_cli, damage_leaves_rates_true, .timeout = 120)
{
	damaged_with_bookmarks("4", false);
}

/* DECODER BUG, reported and left to decode/'s owner (enable this test with
 * the fix): a bookmark packet lost with a damaged chunk takes its phase out
 * of the summary (load#1 here: its time and counts go to warmup#1), though
 * the reference packets after it still carry its bookmark ID, whose name a
 * later packet gives, and the CSV and JSONL rows still say "load". With
 * set_ns bookmarks the decoder ignores the references' IDs; a span should
 * come back from them (at trigger-grid precision) where no packet says
 * when the bookmark was set. */
Test(decode_cli, damage_keeps_phases_the_references_carry, .timeout = 120)
{
	damaged_with_bookmarks("2", true); /* fails on the rates too, until both are fixed */
}

/* Issue 16.5: a log whose first chunk is damaged every way (a bit of its
 * magic flipped, its frame garbled) decodes every other chunk with its
 * domains' names, events and clock models, which come back from the copies
 * that open the next chunk: every format agrees with the truth, rates
 * included (before: "not a t410trace log (bad magic)"); `info` says what
 * the copies brought back. */
Test(decode_cli, damaged_first_chunk_keeps_names_and_clocks, .timeout = 120)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	scenario(&c, "head", "--triggers 700 --seed 4 --bookmarks --copies --damage 0 "
			     "--damage-magic 0", true,
		 (const char *[]){ "TOTALS ARE PARTIAL", "1 damaged chunk", NULL }, NULL);
	cr_assert_eq(dc_sh(&c, "'%s' info --json head.t4 > head.info", c.bin), 0, "%s", c.out);
	cr_assert(strstr(c.out, "chunk at offset 0: bad magic"), "%s", c.out);
	cr_assert(dc_file_has(&c, "head.info", "\"damaged_chunks\": 1,"));
	cr_assert_not(dc_file_has(&c, "head.info", "\"restored\": 0,"), "nothing restored");
	cr_assert_not(dc_file_has(&c, "head.info", "\"name\": \"domain"), "a domain unnamed");
	dc_fini(&c);
}

/* The copies count nothing twice: the same recording written with and
 * without them (format 1.1 and 1.0) decodes to the same CSV, and `info`
 * says the same of both but for sizes, the copies and the session ID. */
Test(decode_cli, copies_count_nothing_twice, .timeout = 120)
{
	struct dc c;
	static const char ignore[] = "file,bytes,raw_bytes,compression_ratio,bytes_per_value,"
				     "copies,session_id";

	dc_init(&c, "python3 zstd");
	dc_write(&c, "v10", "--triggers 900 --seed 8 --bookmarks --chunk-packets 200 --duplicate 0.02");
	dc_write(&c, "v11", "--triggers 900 --seed 8 --bookmarks --chunk-packets 200 --duplicate 0.02 "
			    "--copies");
	cr_assert_eq(dc_sh(&c, "for v in v10 v11; do '%s' info --json $v.t4 > $v.info && "
			       "'%s' decode -f csv $v.t4 > $v.csv || exit 1; done", c.bin, c.bin), 0,
		     "%s", c.out);
	cr_assert_eq(dc_sh(&c, "cmp v10.csv v11.csv"), 0, "%s", c.out);
	dc_check(&c, "info-same v10.info v11.info --ignore %s", ignore);
	dc_check(&c, "info-same v11.info v10.info --ignore %s,restored,next_recording", ignore);
	cr_assert_not(dc_file_has(&c, "v11.info", "\"copies\": 0,"), "no copies written");
	dc_fini(&c);
}

/* Issue 16.8: two logs concatenated (`cat a b > c`), of format 1.0 (told
 * apart by the second's session packet) and 1.1 (by its chunks' tag; the
 * other rules: reader/a_second_recording_ends_the_first): decode and info
 * read the first recording only, exit 0, and say where the second starts
 * and how to read it (before: one recording, domains merged by ID, totals
 * of both). */
static void concatenated(const char *opts)
{
	struct dc c;
	char args[256], at[64], out[1 << 16];
	long long off;

	dc_init(&c, "python3 zstd");
	snprintf(args, sizeof(args), "--triggers 700 --seed 6 --second-seed 7 --bookmarks %s", opts);
	dc_write(&c, "two", args);
	snprintf(args, sizeof(args), "--triggers 700 --seed 7 --bookmarks %s", opts);
	dc_write(&c, "second", args);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && python3 -c 'import json; "
			     "print(json.load(open(\"two.json\"))[\"next_recording\"])'", c.dir),
		     0, "%s", out);
	off = atoll(out);
	cr_assert_gt(off, 0);
	snprintf(at, sizeof(at), "another recording starts at offset %lld", off);
	dc_formats(&c, "two", true); /* the first's truth: its totals, not both */
	cr_assert_eq(dc_decode(&c, "two.t4 -f csv -o again.csv"), 0, "%s", c.out);
	cr_assert(strstr(c.out, at), "%s", c.out);
	cr_assert_eq(dc_sh(&c, "'%s' info --json two.t4 > two.info", c.bin), 0, "%s", c.out);
	cr_assert(strstr(c.out, at), "%s", c.out);
	snprintf(args, sizeof(args), "\"next_recording\": %lld,", off);
	cr_assert(dc_file_has(&c, "two.info", args), "info --json lacks %s", args);
	/* the way the warning says to read the second: the second's own decode */
	cr_assert_eq(dc_sh(&c, "tail -c +%lld two.t4 | '%s' decode -f csv - > tail.csv && "
			       "'%s' decode -f csv second.t4 > second.csv && cmp tail.csv second.csv",
			   off + 1, c.bin, c.bin), 0, "%s", c.out);
	dc_fini(&c);
}

Test(decode_cli, two_logs_concatenated_format_1_0, .timeout = 120)
{
	concatenated("");
}

Test(decode_cli, two_logs_concatenated_format_1_1, .timeout = 120)
{
	concatenated("--copies");
}

/* A damaged chunk (dmgF) and a truncated tail (cutF) in format F. */
static void damaged_and_cut(struct dc *c, int format)
{
	char name[16], args[160];

	snprintf(name, sizeof(name), "dmg%d", format);
	snprintf(args, sizeof(args), "--format %d --triggers 700 --seed 4 --damage 2 "
		 "--drop-returns 0.02 --late 0.02 --read-failures 0.01", format);
	scenario(c, name, args, false, (const char *[]){ "TOTALS ARE PARTIAL", NULL }, NULL);
	snprintf(name, sizeof(name), "cut%d", format);
	snprintf(args, sizeof(args), "--format %d --triggers 600 --seed 5 --truncate 5000", format);
	scenario(c, name, args, true,
		 (const char *[]){ "TOTALS ARE PARTIAL", "unknown (no status packet)", NULL }, NULL);
}

/* Format 2 (t4write.py --format 2: batches of bit-packed records) through
 * the same trouble as format 1 above: a damaged chunk loses exactly its
 * counts, a damaged first header and a truncated tail are read past, drops,
 * duplicates, reordering across chunks, two schedulers and IDs without
 * delta state decode to the truth in every output. */
Test(decode_cli, format_2_logs_survive_the_same_trouble, .timeout = 300)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	damaged_and_cut(&c, 2);
	scenario(&c, "magic2", "--format 2 --triggers 700 --seed 8 --copies --damage-magic 0 "
			       "--damage-magic 3", false, NULL, NULL);
	scenario(&c, "dup2", "--format 2 --triggers 700 --seed 3 --duplicate 0.05 --reorder 16 "
			     "--chunk-packets 300", true, NULL, NULL);
	scenario(&c, "socks2", "--format 2 --triggers 700 --seed 6 --schedulers 2 --large-ids "
			       "--bookmarks --drop-returns 0.02 --duplicate 0.02 --reorder 16", true,
		 NULL, NULL);
	cr_assert_eq(dc_sh(&c, "head -c 10 dmg2.t4 | od -An -tu1"), 0);
	cr_assert(strstr(c.out, " 2 "), "not a format-2 log: %s", c.out);
	dc_fini(&c);
}

/* Format 3 (t4write.py --format 3: quiet records, first records seeded from
 * the chunk's latest, FORMAT.md 5a.8) through the same trouble. */
Test(decode_cli, format_3_logs_survive_the_same_trouble, .timeout = 300)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	damaged_and_cut(&c, 3);
	scenario(&c, "socks3", "--format 3 --triggers 700 --seed 6 --schedulers 2 --large-ids "
			       "--bookmarks --drop-returns 0.02 --duplicate 0.02 --reorder 16 "
			       "--copies --damage-magic 3", true, NULL, NULL);
	cr_assert_eq(dc_sh(&c, "head -c 10 dmg3.t4 | od -An -tu1"), 0);
	cr_assert(strstr(c.out, " 3 "), "not a format-3 log: %s", c.out);
	dc_fini(&c);
}

/* Logs of every format, written by the t410trace of their time
 * (tests/fixtures/logs: a virtual, a live simulated and a live host
 * recording in format 1.0 and in 1.1), one in format 2 and one in format 3,
 * the 1.1 virtual recording again (same seed: the same packets), and a live
 * host recording in format 3: `info --json` says everything it said then
 * (saved next to them), decode reads them without a warning, its CSV totals
 * are info's, and the CSV is byte for byte the one decode wrote before
 * format 2 existed (its SHA-256 in csv.sha256; the format-2 and format-3
 * twins' are their 1.1 twin's; the format-3 host log's is what decode wrote
 * when format 3 came). */
Test(decode_cli, fixture_logs_read_as_before, .timeout = 120)
{
	static const char *const logs[] = { "v1.0-virtual-sim", "v1.0-live-host", "v1.0-live-sim",
					    "v1.1-virtual-sim", "v1.1-live-host", "v1.1-live-sim",
					    "v2-virtual-sim", "v3-virtual-sim", "v3-live-host" };
	char fix[PATH_MAX];
	struct dc c;

	dc_init(&c, "python3 zstd sha256sum");
	cr_assert_not_null(cli_repo_file("tests/fixtures/logs", fix));
	for (size_t i = 0; i < T4_ARRAY_LEN(logs); i++) {
		cr_assert_eq(dc_sh(&c, "'%s' info --json '%s/%s.t4t' > %s.info", c.bin, fix, logs[i],
				   logs[i]), 0, "%s", c.out);
		dc_check(&c, "info-same '%s/%s.info.json' %s.info --ignore file", fix, logs[i], logs[i]);
		cr_assert_eq(dc_sh(&c, "'%s' decode -f csv '%s/%s.t4t' > %s.csv", c.bin, fix, logs[i],
				   logs[i]), 0, "%s", c.out);
		cr_assert_eq(c.out[0], '\0', "%s: decode said: %s", logs[i], c.out);
		dc_check(&c, "info-totals %s.csv %s.info", logs[i], logs[i]);
		cr_assert_eq(dc_sh(&c, "grep ' %s.csv$' '%s/csv.sha256' | sha256sum -c --quiet",
				   logs[i], fix), 0, "%s: the CSV is not the one decoded before: %s",
			     logs[i], c.out);
	}
	dc_fini(&c);
}

Test(decode_cli, truncated_log_decodes_what_is_there, .timeout = 120)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	scenario(&c, "cut", "--triggers 600 --seed 5 --truncate 5000", true,
		 (const char *[]){ "TOTALS ARE PARTIAL", "unknown (no status packet)", NULL }, NULL);
	cr_assert_eq(dc_decode(&c, "cut.t4 -f jsonl -o again.jsonl"), 0, "%s", c.out);
	cr_assert(strstr(c.out, "truncated"), "%s", c.out);
	dc_fini(&c);
}

/* Per-socket logs: two schedulers with their own trigger IDs (0, 1, ...
 * both), domains answering either; IDs of 4096 and above everywhere
 * (domains 5000 and 4294967295, scheduler 4242, bookmarks up to
 * 4294967295: abs = 1 packets), with drops, duplicates and reordering. */
Test(decode_cli, two_schedulers_and_large_ids, .timeout = 120)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	scenario(&c, "socks", "--triggers 700 --seed 6 --schedulers 2 --large-ids --bookmarks "
			      "--drop-returns 0.02 --duplicate 0.02 --reorder 16", true, NULL, NULL);
	cr_assert(dc_file_has(&c, "socks.json", "\"id\": 4294967295"));
	scenario(&c, "big", "--triggers 400 --seed 7 --large-ids --bookmarks", true, NULL, NULL);
	dc_fini(&c);
}

/* ---- the formats' details ------------------------------------------------- */

/* RFC 4180: a field holding the separator or a quote is quoted, quotes
 * doubled; -x changes the separator, and what needs quoting with it. A
 * domain name can hold a comma and quotes in a hand-written log. */
Test(decode_cli, separator_and_rfc4180_quoting, .timeout = 120)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	dc_write(&c, "odd", "--triggers 100 --odd-names");
	cr_assert_eq(dc_decode(&c, "odd.t4 -f csv -o comma.csv"), 0, "%s", c.out);
	cr_assert(dc_file_has(&c, "comma.csv", ",\"pcie \"\"rc,1\"\"\",nvidia;pcie,cycles,"));
	dc_check(&c, "csv comma.csv odd.json");
	cr_assert_eq(dc_decode(&c, "odd.t4 -f csv -x ';' -o semi.csv"), 0, "%s", c.out);
	cr_assert(dc_file_has(&c, "semi.csv",
			      "trigger;start_ns;end_ns;bookmark;domain;pmu;event;value;unit"));
	cr_assert(dc_file_has(&c, "semi.csv", ";\"pcie \"\"rc,1\"\"\";\"nvidia;pcie\";cycles;"));
	dc_check(&c, "csv semi.csv odd.json --sep ';'");
	cr_assert_eq(dc_decode(&c, "odd.t4 -f csv -x \"$(printf '\\t')\" -o tab.csv"), 0, "%s",
		     c.out);
	cr_assert(dc_file_has(&c, "tab.csv", "trigger\tstart_ns\tend_ns\tbookmark\t"));
	cr_assert_eq(dc_decode(&c, "odd.t4 -f jsonl -o odd.jsonl"), 0, "%s", c.out);
	dc_check(&c, "jsonl odd.jsonl odd.json");
	/* -x: one ASCII character, a tab or a printable one, not a quote,
	 * CSV only; nor one that numbers and words hold (they are never
	 * quoted) */
	static const char *const bad[] = { "-f csv -x '\"'", "-f csv -x ';;'", "-f csv -x ''",
					   "-f jsonl -x ';'", "-x ';'", "-f csv -x 1",
					   "-f csv -x .", "-f csv -x e", "-f phases -x -",
					   "-f csv -x _", "-f slices -x +",
					   /* not UTF-8; a control byte */
					   "-f csv -x \"$(printf '\\377')\"",
					   "-f csv -x \"$(printf '\\033')\"" };
	for (size_t i = 0; i < T4_ARRAY_LEN(bad); i++) {
		char args[128];
		snprintf(args, sizeof(args), "odd.t4 %s", bad[i]);
		cr_assert_eq(dc_decode(&c, args), 2, "decode %s: %s", args, c.out);
		cr_assert(strstr(c.out, "-x"), "decode %s: %s", args, c.out);
	}
	dc_fini(&c);
}

/* --bin: every domain on one series of bins from the first trigger's time;
 * every total kept exactly, with bins longer, shorter and not dividing
 * the period; --grid, its old name, does the same. */
Test(decode_cli, bins_keep_every_total, .timeout = 120)
{
	struct dc c;
	static const struct { const char *opt, *dur, *ns; } g[] = {
		{ "--bin", "5ms", "5000000" }, { "--bin", "7ms", "7000000" },
		{ "--grid", "250us", "250000" },
	};

	dc_init(&c, "python3 zstd");
	dc_write(&c, "grid", "--triggers 600 --seed 8 --bookmarks --drop-returns 0.03 "
			     "--schedulers 2");
	for (size_t i = 0; i < T4_ARRAY_LEN(g); i++) {
		char args[128];
		snprintf(args, sizeof(args), "grid.t4 -f csv %s %s -o g.csv", g[i].opt, g[i].dur);
		cr_assert_eq(dc_decode(&c, args), 0, "decode %s: %s", args, c.out);
		dc_check(&c, "csv g.csv grid.json --bin %s", g[i].ns);
	}
	dc_fini(&c);
}

/* --pmu selects domains by name, PMU or kind; --event events and metrics
 * by name: exactly the rows of the full output that match. */
Test(decode_cli, pmu_and_event_globs_select_rows, .timeout = 120)
{
	struct dc c;
	static const struct { const char *opt, *check; } sel[] = {
		{ "--pmu 'nvidia_c*'", "--pmu 'nvidia_c*'" },
		{ "--pmu 'software*'", "--pmu 'software*'" },
		{ "--event '*_bytes*'", "--event '*_bytes*'" },
		{ "--event '*_bw'", "--event '*_bw'" },
		{ "--pmu '*pcie*' --event 'rd_*'", "--pmu '*pcie*' --event 'rd_*'" },
		{ "--pmu ucf", "--pmu 'nvidia_ucf_pmu_*'" }, /* by kind, any case */
	};

	dc_init(&c, "python3 zstd");
	dc_write(&c, "sel", "--triggers 300 --seed 9");
	cr_assert_eq(dc_decode(&c, "sel.t4 -f csv -o all.csv"), 0, "%s", c.out);
	for (size_t i = 0; i < T4_ARRAY_LEN(sel); i++) {
		char args[256];
		snprintf(args, sizeof(args), "sel.t4 -f csv %s -o part.csv", sel[i].opt);
		cr_assert_eq(dc_decode(&c, args), 0, "decode %s: %s", args, c.out);
		dc_check(&c, "same all.csv part.csv %s", sel[i].check);
	}
	/* the summary shows the selected kinds only */
	cr_assert_eq(dc_decode(&c, "sel.t4 --pmu ucf > ucf.txt"), 0, "%s", c.out);
	cr_assert(dc_file_has(&c, "ucf.txt", "UCF, per phase"));
	cr_assert_not(dc_file_has(&c, "ucf.txt", "PCIE, per phase"));
	dc_fini(&c);
}

/* --from / --to by duration and by bookmark name, --phase NAME: exactly the
 * rows of the full output whose interval (by its middle) is inside, or
 * whose bookmark is NAME or which overlaps a NAME phase; the phases
 * together give every row, a row twice only where it holds a change. */
Test(decode_cli, time_window_and_phase, .timeout = 120)
{
	struct dc c;
	static const struct { const char *opt, *check; } win[] = {
		{ "--from 100ms --to 250ms", "--from 100000000 --to 250000000" },
		{ "--from 0.3s", "--from 300000000" },
		{ "--to 50ms", "--to 50000000" },
		{ "--from load --to store", "--from load --to store" },
		{ "--from store", "--from store" },
		{ "--to short", "--to short" },
		{ "--phase load", "--bookmark load" },
		{ "--phase store --pmu 'nvidia_ucf*'", "--bookmark store --pmu 'nvidia_ucf*'" },
	};

	dc_init(&c, "python3 zstd");
	dc_write(&c, "ph", "--triggers 800 --seed 10 --bookmarks --schedulers 2");
	cr_assert_eq(dc_decode(&c, "ph.t4 -f csv -o all.csv"), 0, "%s", c.out);
	for (size_t i = 0; i < T4_ARRAY_LEN(win); i++) {
		char args[256];
		snprintf(args, sizeof(args), "ph.t4 -f csv %s -o part.csv", win[i].opt);
		cr_assert_eq(dc_decode(&c, args), 0, "decode %s: %s", args, c.out);
		dc_check(&c, "same all.csv part.csv --truth ph.json %s", win[i].check);
	}
	static const char *const names[] = { "warmup", "load", "short", "store" };
	for (size_t i = 0; i < T4_ARRAY_LEN(names); i++) {
		char args[256];
		snprintf(args, sizeof(args), "ph.t4 -f csv --phase %s -o phase-%s.csv", names[i],
			 names[i]);
		cr_assert_eq(dc_decode(&c, args), 0, "decode %s: %s", args, c.out);
	}
	dc_check(&c, "sum all.csv phase-warmup.csv phase-load.csv phase-short.csv "
		     "phase-store.csv");
	dc_fini(&c);
}

/* A --from/--to window that holds no interval's middle is refused as
 * --to 0 is: exit 2, one line naming the options and the span of the
 * log's triggers, no byte of output (standard output checked by the first
 * pass, from a file or standard input; a file never made). `--to 1ns`
 * used to print an empty table (or CSV's header alone) and exit 0, and so
 * did --from past the last interval's middle, or a window between two.
 * So is a --phase outside the window: the filters together keep nothing;
 * and merged logs (decoded as their hosts come: each host's first pass).
 * A 100 ms virtual recording at 1 ms: middles about 0.5 ms past each
 * trigger. */
Test(decode_cli, a_window_without_an_interval_is_refused, .timeout = 180)
{
	static const char *const empty[] = { "--to 1ns", "--to 400us", "--from 99.6ms",
					     "--from 50ms --to 50.2ms" };
	static const char *const fmts[] = { "csv", "jsonl", "summary", "phases", "slices", "perfetto",
					    "report" };
	static const char *const inputs[] = { "v.t4t", "- < v.t4t" };
	static const char *const held[] = { "--to 600us", "--from 99.4ms",
					    "--from 50.2ms --to 50.7ms" };
	char want[512];
	struct dc c;

	dc_init(&c, "wc");
	cr_assert_eq(dc_sh(&c, "'%s' record -q --sim --virtual --backend pwrite -d 100ms -o v.t4t",
			   c.bin), 0, "%s", c.out);
	for (size_t o = 0; o < T4_ARRAY_LEN(empty); o++) {
		snprintf(want, sizeof(want), "2\n0\nt410trace decode: %s: selects no interval of "
			 "the log (its triggers span 0 to 100ms from the first; an interval is "
			 "in by its middle)\n", empty[o]);
		for (size_t f = 0; f < T4_ARRAY_LEN(fmts); f++)
			for (size_t i = 0; i < T4_ARRAY_LEN(inputs); i++) {
				cr_assert_eq(dc_sh(&c, "'%s' decode %s -f %s %s > out 2> err; "
						   "echo $?; wc -c < out; cat err", c.bin,
						   inputs[i], fmts[f], empty[o]), 0);
				cr_assert_str_eq(c.out, want, "decode %s -f %s %s", inputs[i],
						 fmts[f], empty[o]);
			}
		cr_assert_eq(dc_sh(&c, "'%s' decode v.t4t -f csv %s -o w.csv; echo $?; ls",
				   c.bin, empty[o]), 0);
		cr_assert(strstr(c.out, "\n2\n") && !strstr(c.out, "w.csv"), "%s: %s", empty[o],
			  c.out);
	}
	for (size_t o = 0; o < T4_ARRAY_LEN(held); o++) {
		cr_assert_eq(dc_sh(&c, "'%s' decode v.t4t -f csv %s | wc -l", c.bin, held[o]), 0);
		cr_assert_gt(atoi(c.out), 1, "%s: %s", held[o], c.out);
	}
	/* a phase outside the window (gpu_stream begins at 298 ms): the
	 * filters together keep nothing, refused the same way */
	cr_assert_eq(dc_sh(&c, "'%s' record -q --sim --virtual --backend pwrite -d 400ms -o w.t4t",
			   c.bin), 0, "%s", c.out);
	for (size_t f = 0; f < T4_ARRAY_LEN(fmts); f++) {
		cr_assert_eq(dc_sh(&c, "'%s' decode w.t4t -f %s --to 100ms --phase gpu_stream > out "
				   "2> err; echo $?; wc -c < out; cat err", c.bin, fmts[f]), 0);
		cr_assert_str_eq(c.out, "2\n0\nt410trace decode: --phase gpu_stream --to 100ms: "
				 "selects no interval of the log (its triggers span 0 to 400ms "
				 "from the first; an interval is in by its middle)\n", "-f %s",
				 fmts[f]);
	}
	cr_assert_eq(dc_sh(&c, "'%s' decode w.t4t -f csv --from 100ms --phase gpu_stream | wc -l",
			   c.bin), 0);
	cr_assert_gt(atoi(c.out), 1000, "%s", c.out);
	/* merged logs: a quiet first pass of each host, up to the first interval kept */
	for (size_t f = 0; f < T4_ARRAY_LEN(fmts); f++) {
		cr_assert_eq(dc_sh(&c, "'%s' decode v.t4t w.t4t -f %s --from 500ms > out 2> err; "
				   "echo $?; wc -c < out; grep -v 'clock sync' err", c.bin, fmts[f]), 0);
		cr_assert_str_eq(c.out, "2\n0\nt410trace decode: --from 500ms: selects no interval "
				 "of the logs (an interval is in by its middle)\n", "-f %s", fmts[f]);
	}
	cr_assert_eq(dc_sh(&c, "'%s' decode v.t4t w.t4t -f csv --from 300ms 2>/dev/null | wc -l",
			   c.bin), 0);
	cr_assert_gt(atoi(c.out), 1000, "%s", c.out);
	dc_fini(&c);
}

/* ---- the command -------------------------------------------------------------- */

/* Exit 2 with one line naming the file for what is not a log; 2 for usage
 * errors; 0 for --help. (A damaged log that is still a log exits 0: see
 * damaged_chunk_loses_exactly_its_counts.) */
Test(decode_cli, exit_codes_and_messages)
{
	struct dc c;
	static const struct { const char *args, *needle; } bad[] = {
		{ "notalog.t4", "notalog.t4: not a t410trace log" },
		{ "missing.t4", "missing.t4: No such file" },
		{ "empty.t4", "empty.t4: empty file" },
		/* its size reads 0, yet it is not empty */
		{ "/proc/self/maps", "/proc/self/maps: not a t410trace log (bad magic)" },
		{ "adir", "adir: a directory without any .t4t log" },
		{ "notalog.t4 -f csv -o out.csv", "notalog.t4" },
		/* the log is named, not the output it could not write */
		{ "missing.t4 -o nodir/out.csv", "missing.t4: No such file" },
		{ "notalog.t4 -o nodir/out.csv", "notalog.t4: not a t410trace log" },
		{ "", "missing FILE" },
		{ "a.t4 b.t4", "a.t4: No such file" }, /* several: merged (test_merge.c) */
		{ "notalog.t4 --bogus", "unknown option '--bogus'" },
		{ "--bogus=1 notalog.t4", "unknown option '--bogus'" },
		{ "notalog.t4 -q", "unknown option '-q'" },
		{ "notalog.t4 --bin", "option '--bin' needs a value" },
		{ "notalog.t4 -f xml", "xml" },
		{ "notalog.t4 --bin soon", "soon" },
		{ "notalog.t4 --clock-model best", "best" },
		{ "notalog.t4 -o", "needs a value" },
	};

	c.bin = cli_bin();
	c.dir = cli_tmpdir("t4dec");
	cr_assert_eq(dc_sh(&c, "printf 'hello world\\n' > notalog.t4 && : > empty.t4 && "
			       "mkdir adir"), 0, "%s", c.out);
	for (size_t i = 0; i < T4_ARRAY_LEN(bad); i++) {
		int st = dc_decode(&c, bad[i].args);
		cr_assert_eq(st, 2, "decode %s: exit %d: %s", bad[i].args, st, c.out);
		cr_assert(strstr(c.out, bad[i].needle), "decode %s: no '%s' in: %s", bad[i].args,
			  bad[i].needle, c.out);
		cr_assert_eq(strchr(c.out, '\n'), c.out + strlen(c.out) - 1,
			     "decode %s: not one line: %s", bad[i].args, c.out);
	}
	/* a /sys attribute's size reads 4096, its content a few bytes: it
	 * "shrank while being read" */
	if (access("/sys/devices/system/cpu/online", R_OK) == 0) {
		cr_assert_eq(dc_decode(&c, "/sys/devices/system/cpu/online"), 2, "%s", c.out);
		cr_assert_str_eq(c.out, "t410trace decode: /sys/devices/system/cpu/online: not a "
				 "t410trace log (bad magic)\n");
	}
	cr_assert_eq(dc_sh(&c, "ls"), 0);
	cr_assert_null(strstr(c.out, "out.csv"), "a failed decode left output: %s", c.out);
	cr_assert_eq(dc_decode(&c, "--help"), 0, "%s", c.out);
	cr_assert(strstr(c.out, "usage: t410trace decode FILE"), "%s", c.out);
	dc_fini(&c);
}

/* A filter that matches nothing, or options that do not go together, are
 * refused with exit 2 and one line naming the closest candidates; never an
 * empty output without a word, never an option silently ignored. */
Test(decode_cli, filters_that_match_nothing_are_errors, .timeout = 120)
{
	char want[512];
	struct dc c;
	static const struct { const char *args, *needle; } bad[] = {
		{ "f.t4 --pmu nvidia_ucf_pmu_9", "did you mean nvidia_ucf_pmu_1?" },
		{ "f.t4 --pmu 'ucf,nosuch*'", "--pmu nosuch*: matches no domain" },
		{ "f.t4 --event mem_bytes_rdd", "did you mean mem_bytes_rd?" },
		{ "f.t4 --event '*_latency_xx'", "--event *_latency_xx: matches no event or metric" },
		{ "f.t4 --pmu ''", "--pmu : matches no domain" },
		{ "f.t4 --event ''", "--event : matches no event or metric" },
		{ "f.t4 --from 9s", "--from 9s: selects no interval of the log (its triggers span 0 to " },
		{ "f.t4 --from 3ms --to 1ms", "--to must come after --from" },
		{ "f.t4 --from 3ms --to 3ms", "--to must come after --from" },
		/* warmup only before load: --to never found, the rest of the log kept */
		{ "f.t4 --from load --to warmup", "--to warmup: every occurrence of it starts "
						  "before --from load" },
		{ "f.t4 -f csv --from 100ms --to warmup -o w.csv", "--to warmup: every occurrence" },
		{ "f.t4 --from -1s", "never negative" },
		{ "f.t4 --to 0", "--to 0: selects no interval of the log" },
		{ "f.t4 --to 1ns", "--to 1ns: selects no interval of the log" },
		/* the time as typed (it said "--from 60s", "--to 0") */
		{ "f.t4 --from 1m", "--from 1m: selects no interval of the log" },
		{ "f.t4 --to 0ms", "--to 0ms: selects no interval of the log" },
		{ "f.t4 --phase lod", "did you mean load?" },
		{ "f.t4 --bin 10ms", "--bin applies to csv, jsonl and perfetto" },
		{ "f.t4 -f csv -f jsonl", "one format per run" },
		{ "f.t4 -f csv --per-cpu", "--per-cpu applies to the summary only" },
		{ "f.t4 -f perfetto -o x.pf --time rel", "--time applies to" },
		{ "f.t4 -f jsonl -x ';'", "-x applies to the CSV formats" },
		{ "f.t4 --time utc", "ref, rel or real" },
		{ "f.t4 -f csv --bin 0ns", "duration out of range" },
	};

	dc_init(&c, "python3 zstd");
	dc_write(&c, "f", "--triggers 300 --seed 11 --bookmarks");
	for (size_t i = 0; i < T4_ARRAY_LEN(bad); i++) {
		int st = dc_decode(&c, bad[i].args);
		cr_assert_eq(st, 2, "decode %s: exit %d: %s", bad[i].args, st, c.out);
		cr_assert(strstr(c.out, bad[i].needle), "decode %s: no '%s' in: %s", bad[i].args,
			  bad[i].needle, c.out);
		cr_assert_eq(strchr(c.out, '\n'), c.out + strlen(c.out) - 1,
			     "decode %s: not one line: %s", bad[i].args, c.out);
	}
	/* merged: the host is named (each has both names) */
	dc_write(&c, "m1", "--triggers 300 --seed 12 --bookmarks --copies");
	dc_write(&c, "m2", "--triggers 300 --seed 13 --bookmarks --copies");
	cr_assert_eq(dc_decode(&c, "m1.t4 m2.t4 --from load --to warmup -f phases -o m.csv "
				   "2> err; r=$?; grep -v warning err; exit $r"), 2, "%s", c.out);
	cr_assert_str_eq(c.out, "t410trace decode: m1.t4: --to warmup: every occurrence of it "
				"starts before --from load (--to is the end of its first occurrence "
				"after --from)\n");
	/* to standard output: before any row (it had them all, then the error) */
	for (size_t i = 0; i < 2; i++) {
		const char *from = i ? "100ms" : "load";
		cr_assert_eq(dc_sh(&c, "'%s' decode m1.t4 m2.t4 --from %s --to warmup -f csv > out"
				       " 2> err; echo $?; wc -c < out; grep -v warning err", c.bin,
				   from), 0, "%s", c.out);
		snprintf(want, sizeof(want), "2\n0\nt410trace decode: m1.t4: --to warmup: every "
			 "occurrence of it starts before --from %s (--to is the end of its first "
			 "occurrence after --from)\n", from);
		cr_assert_str_eq(c.out, want);
	}
	/* what does match still works: the same options, spelled right */
	cr_assert_eq(dc_decode(&c, "f.t4 --pmu ucf --event mem_bytes_rd --from 3ms --to 200ms "
				   "--phase load -f csv -o ok.csv"), 0, "%s", c.out);
	cr_assert_eq(dc_decode(&c, "f.t4 -f csv -f csv --bin 5ms -o ok.csv"), 0, "%s", c.out);
	dc_fini(&c);
}

/* In a log with dropped packets the bookmark packets may not be the phases
 * (a lost one's phase is rebuilt from the triggers), so a --to found only
 * before --from is not refused up front: the decode's end says it, as the
 * man page promises: standard output has the rows already, a file is not
 * written, the exit is 2 and the error one line. (In the same log without
 * drops it is refused before the first byte: the test above.) */
Test(decode_cli, a_log_with_drops_refuses_to_at_its_end, .timeout = 120)
{
	static const char *const want = "t410trace decode: --to warmup: every occurrence of it "
					"starts before --from load (--to is the end of its first "
					"occurrence after --from)\n";
	struct dc c;

	dc_init(&c, "python3 zstd");
	dc_write(&c, "f", "--triggers 300 --seed 11 --bookmarks --drop-returns 0.05");
	cr_assert_eq(dc_sh(&c, "'%s' info f.t4 | grep '^  dropped'", c.bin), 0, "%s", c.out);
	cr_assert_neq(strcmp(c.out, "  dropped          0\n"), 0, "no drops: %s", c.out);
	cr_assert_eq(dc_sh(&c, "'%s' decode f.t4 -f csv --from load --to warmup > out 2> err;"
			       " echo $?; head -c 8 out; echo; cat err", c.bin), 0, "%s", c.out);
	char expect[512];
	snprintf(expect, sizeof(expect), "2\ntrigger,\n%s", want);
	cr_assert_str_eq(c.out, expect);
	cr_assert_eq(dc_decode(&c, "f.t4 -f csv --from load --to warmup -o w.csv 2>&1;"
				   " r=$?; [ ! -e w.csv ] && exit $r"), 2, "%s", c.out);
	cr_assert_str_eq(c.out, want);
	dc_fini(&c);
}

/* An option the log refuses (a name it does not hold, an offset past its
 * end, --time real without the session's anchor) is found before the
 * first output byte: standard output stays empty in every format, with
 * one thread or several, from a file, a pipe or a file on standard input.
 * It used to get CSV's header, or every row up to the end where a --to
 * bookmark was missing or had no occurrence after --from, then exit 2. */
Test(decode_cli, a_refused_option_writes_no_byte, .timeout = 300)
{
	static const char *const fmts[] = { "csv",    "jsonl",  "perfetto", "summary",
					    "phases", "slices", "report" };
	static const char *const opts[] = {
		"--phase lod",	    "--pmu 'ucf,nosuch*'", "--event 'mem_bytes_rd,nope'",
		"--to nope",	    "--from nope",	  "--from 9s",
		"--bin 1ns",
		/* warmup only before load (and 100ms): said at the end, after the rows */
		"--from load --to warmup", "--from 100ms --to warmup",
	};
	static const char *const inputs[] = { "f.t4", "- < f.t4", "- 0< f.t4 -j 4", "f.t4 -j 4" };
	char path[PATH_MAX + 16];
	struct dc c;
	struct lw w;

	dc_init(&c, "python3 zstd");
	dc_write(&c, "f", "--triggers 300 --seed 11 --bookmarks");
	for (size_t o = 0; o < T4_ARRAY_LEN(opts); o++)
		for (size_t f = 0; f < T4_ARRAY_LEN(fmts); f++)
			for (size_t i = 0; i < T4_ARRAY_LEN(inputs); i++) {
				if (!strcmp(opts[o], "--bin 1ns") && strcmp(fmts[f], "csv"))
					continue; /* (a usage error for the others) */
				int st = dc_sh(&c, "'%s' decode %s -f %s %s > out 2> err; echo $?;"
						   " wc -c < out; cat err", c.bin, inputs[i], fmts[f],
					       opts[o]);
				cr_assert_eq(st, 0);
				cr_assert(!strncmp(c.out, "2\n0\nt410trace decode: ", 22),
					  "decode %s -f %s %s: exit, bytes, errors: %s", inputs[i],
					  fmts[f], opts[o], c.out);
				if (!strstr(opts[o], "warmup"))
					continue;
				cr_assert(strstr(c.out, ": --to warmup: every occurrence of it "
							"starts before --from ") &&
					  strchr(c.out + 4, '\n') == c.out + strlen(c.out) - 1,
					  "decode %s -f %s %s: not its one line: %s", inputs[i],
					  fmts[f], opts[o], c.out);
			}
	/* a pipe is read whole first (into $TMPDIR), then decoded as usual */
	cr_assert_eq(dc_sh(&c, "cat f.t4 | '%s' decode - -f csv --to nope > out 2> err; echo $?;"
			       " wc -c < out", c.bin), 0);
	cr_assert_str_eq(c.out, "2\n0\n");
	cr_assert_eq(dc_sh(&c, "cat f.t4 | '%s' decode - -f csv --phase load > pipe.csv && '%s'"
			       " decode f.t4 -f csv --phase load > file.csv && cmp pipe.csv file.csv"
			       " && [ -s file.csv ]", c.bin, c.bin), 0, "%s", c.out);
	/* --time real, a log without a session packet: no anchor */
	snprintf(path, sizeof(path), "%s/nosession.t4t", c.dir);
	lw_open(&w, path);
	domain(&w, 1);
	for (uint64_t k = 0; k < 20; k++) {
		ref(&w, k, 1000000000ull + k * 1000000, 0);
		ret(&w, 1, k, 1000000000ull + k * 1000000, 5);
	}
	lw_close(&w);
	for (size_t f = 0; f < 2; f++) {
		cr_assert_eq(dc_sh(&c, "'%s' decode nosession.t4t -f %s --time real > out 2> err; echo"
				       " $?; wc -c < out; cat err", c.bin, fmts[f]), 0);
		cr_assert(!strncmp(c.out, "2\n0\nt410trace decode: --time real: the log has no"
					  " session packet", 50), "%s", c.out);
	}
	dc_fini(&c);
}

/* -o never replaces the log being decoded nor any other log; a failed
 * decode leaves an existing output as it was and no temporary file; a
 * second decode to the same output replaces it; a symbolic link or a
 * device given as -o stays what it is. */
/* A warning names the log, the one the reader gives while it opens it
 * too (a first chunk without its magic said "chunk at offset 0: bad
 * magic" of no log: the decoder learnt the name only once open). */
Test(decode_cli, a_warning_at_open_names_the_log, .timeout = 60)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	dc_write(&c, "z", "--triggers 300 --chunk-packets 100 --damage-magic 0");
	cr_assert_eq(dc_decode(&c, "z.t4 -f csv -o z.csv"), 0, "%s", c.out);
	cr_assert(!strncmp(c.out, "t410trace: warning: z.t4: chunk at offset 0: bad magic, ", 56),
		  "%s", c.out);
	dc_fini(&c);
}

Test(decode_cli, output_file_safety, .timeout = 120)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	dc_write(&c, "x", "--triggers 200");
	dc_write(&c, "y", "--triggers 50 --seed 2");
	dc_write(&c, "z", "--triggers 300 --chunk-packets 100 --damage-magic 0"); /* no magic */
	cr_assert_eq(dc_sh(&c, "cp x.t4 x.orig && cp y.t4 y.orig && cp z.t4 z.orig && "
			       "ln -s x.t4 xlink.t4 && "
			       "printf 'hello\\n' > notalog && printf 'precious\\n' > out.csv"),
		     0, "%s", c.out);
	/* z's first chunk has no magic: another log all the same */
	static const char *const refuse[] = {
		"x.t4 -f csv -o x.t4", "x.t4 -o ./x.t4", "xlink.t4 -f jsonl -o x.t4",
		"x.t4 -o xlink.t4", "x.t4 -f csv -o y.t4", "z.t4 -f csv -o z.t4",
		"- -f csv -o z.t4 < z.t4", "- -f csv -o xlink.t4 < x.t4", "x.t4 -f csv -o z.t4",
	};
	for (size_t i = 0; i < T4_ARRAY_LEN(refuse); i++) {
		cr_assert_eq(dc_decode(&c, refuse[i]), 2, "decode %s: %s", refuse[i], c.out);
		cr_assert(strstr(c.out, "not overwritten"), "decode %s: %s", refuse[i], c.out);
	}
	cr_assert_eq(dc_sh(&c, "cmp x.t4 x.orig && cmp y.t4 y.orig && cmp z.t4 z.orig && "
			       "test -L xlink.t4"), 0,
		     "a log was changed: %s", c.out);
	/* a failed decode: the old output stays, no temporary file */
	cr_assert_eq(dc_decode(&c, "notalog -f csv -o out.csv"), 2, "%s", c.out);
	cr_assert_eq(dc_sh(&c, "cat out.csv; ls -A"), 0);
	cr_assert(strstr(c.out, "precious"), "%s", c.out);
	cr_assert_null(strstr(c.out, ".tmp-"), "temporary file left: %s", c.out);
	/* two decodes to one output: the second replaces the first */
	cr_assert_eq(dc_decode(&c, "x.t4 -f csv -o out.csv"), 0, "%s", c.out);
	dc_check(&c, "csv out.csv x.json");
	cr_assert_eq(dc_sh(&c, "cp out.csv all.csv"), 0);
	cr_assert_eq(dc_decode(&c, "x.t4 -f csv --event cycles -o out.csv"), 0, "%s", c.out);
	dc_check(&c, "same all.csv out.csv --event cycles");
	/* a link to a file: the file is replaced, the link kept; a link to a
	 * device: written to, kept */
	cr_assert_eq(dc_sh(&c, "ln -s all.csv link.csv && ln -s /dev/null null.csv"), 0);
	cr_assert_eq(dc_decode(&c, "x.t4 -f csv --event rd_bytes -o link.csv"), 0, "%s", c.out);
	cr_assert_eq(dc_decode(&c, "x.t4 -f jsonl -o null.csv"), 0, "%s", c.out);
	cr_assert_eq(dc_sh(&c, "test -L link.csv && test -L null.csv && test -c null.csv"), 0,
		     "-o replaced a link: %s", c.out);
	cr_assert_eq(dc_sh(&c, "cp all.csv rd.csv && '%s' decode x.t4 -f csv -o all.csv",
			   c.bin), 0, "%s", c.out);
	dc_check(&c, "same all.csv rd.csv --event rd_bytes");
	/* a link to nothing yet (through another): what it names is made, the
	 * links kept, as a shell's redirection does */
	cr_assert_eq(dc_sh(&c, "mkdir sub && ln -s sub/made.csv to.csv && ln -s to.csv via.csv && "
			       "'%s' decode x.t4 -f csv -o via.csv && test -L via.csv && "
			       "test -L to.csv && cmp sub/made.csv all.csv && ls -A sub", c.bin),
		     0, "%s", c.out);
	cr_assert_null(strstr(c.out, ".tmp-"), "temporary file left: %s", c.out);
	/* a loop of links: refused, as a shell's redirection refuses it, the
	 * links kept */
	cr_assert_eq(dc_sh(&c, "ln -s lb la && ln -s la lb"), 0, "%s", c.out);
	cr_assert_eq(dc_decode(&c, "x.t4 -f csv -o la"), 2, "%s", c.out);
	cr_assert(strstr(c.out, "la: Too many levels of symbolic links"), "%s", c.out);
	cr_assert_eq(dc_sh(&c, "test -L la && test -L lb"), 0, "a link replaced");
	/* an output in a directory that is not there: exit 2 (a path the user
	 * named), named */
	cr_assert_eq(dc_decode(&c, "x.t4 -f csv -o no/such/dir/out.csv"), 2, "%s", c.out);
	cr_assert(strstr(c.out, "no/such/dir/out.csv"), "%s", c.out);
	cr_assert_eq(dc_sh(&c, "ls -A"), 0);
	cr_assert_null(strstr(c.out, ".tmp-"), "temporary file left: %s", c.out);
	dc_fini(&c);
}

/* Standard output redirected to the log itself (appended to, or opened
 * read-write) is refused before a byte is read, by decode, report and
 * info alike, as cat refuses it: the log stays as it was. */
Test(decode_cli, standard_output_onto_the_log_is_refused, .timeout = 60)
{
	struct dc c;
	static const char *const lines[] = {
		"\"$B\" decode x.t4 -f csv >> x.t4",
		"\"$B\" decode x.t4 -f jsonl -j 1 1<> x.t4",
		"\"$B\" decode - -f csv < x.t4 >> x.t4",
		"\"$B\" decode x.t4 y.t4 -f csv >> y.t4",
		"\"$B\" report x.t4 -o - >> x.t4",
		"\"$B\" info x.t4 >> x.t4",
	};

	dc_init(&c, "python3 zstd");
	dc_write(&c, "x", "--triggers 50 --copies --seed 1");
	dc_write(&c, "y", "--triggers 50 --copies --seed 2");
	cr_assert_eq(dc_sh(&c, "cp x.t4 x.orig && cp y.t4 y.orig"), 0, "%s", c.out);
	for (size_t i = 0; i < T4_ARRAY_LEN(lines); i++) {
		int st = dc_sh(&c, "%s", lines[i]);
		cr_assert_eq(st, 2, "%s: exit %d: %s", lines[i], st, c.out);
		cr_assert(strstr(c.out, "standard output: is the log being read"), "%s: %s",
			  lines[i], c.out);
		cr_assert_eq(strchr(c.out, '\n'), c.out + strlen(c.out) - 1, "%s: not one line: %s",
			     lines[i], c.out);
		cr_assert_eq(dc_sh(&c, "cmp x.t4 x.orig && cmp y.t4 y.orig"), 0, "%s: %s", lines[i],
			     c.out);
	}
	/* another file, even the log's copy, is standard output as always */
	cr_assert_eq(dc_sh(&c, "\"$B\" decode x.t4 -f csv >> out.csv && \"$B\" info x.t4 > i.txt"),
		     0, "%s", c.out);
	dc_fini(&c);
}

/* -o '' names no file: decode and report refuse it with one line saying
 * so, as record does (it was ": No such file or directory", naming
 * nothing), and write nothing. */
Test(decode_cli, an_empty_output_name_is_refused, .timeout = 60)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	dc_write(&c, "x", "--triggers 50");
	cr_assert_eq(dc_decode(&c, "x.t4 -f csv -o ''"), 2, "%s", c.out);
	cr_assert_str_eq(c.out, "t410trace decode: -o: an empty file name ('-' is standard "
			 "output)\n");
	cr_assert_eq(dc_sh(&c, "'%s' report x.t4 -o ''", c.bin), 2, "%s", c.out);
	cr_assert_str_eq(c.out, "t410trace report: -o: an empty file name ('-' is standard "
			 "output)\n");
	cr_assert_eq(dc_sh(&c, "ls"), 0);
	cr_assert_str_eq(c.out, "x.json\nx.t4\n", "a refused run wrote: %s", c.out);
	dc_fini(&c);
}

/* A log named '' is refused by info, decode and report with one line
 * saying so and exit 2 (it was ": No such file or directory", naming
 * nothing). */
Test(decode_cli, an_empty_log_name_is_refused, .timeout = 60)
{
	static const char *const cmds[] = { "info", "decode", "report -o x.html" };
	struct dc c;

	c.bin = cli_bin();
	c.dir = cli_tmpdir("t4dec");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char want[160];
		int st = dc_sh(&c, "'%s' %s ''", c.bin, cmds[i]);

		snprintf(want, sizeof(want), "t410trace %.6s: an empty file name is no log ('-' is "
			 "standard input)\n", cmds[i]);
		cr_assert_eq(st, 2, "%s '': exit %d: %s", cmds[i], st, c.out);
		cr_assert_str_eq(c.out, want, "%s ''", cmds[i]);
	}
	dc_fini(&c);
}

/* An output named with a line break and an escape sequence: written under
 * that name, and said on one line that cannot garble the terminal. */
Test(decode_cli, output_named_on_one_line, .timeout = 60)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	dc_write(&c, "x", "--triggers 50");
	cr_assert_eq(dc_decode(&c, "x.t4 -f csv -o \"$(printf 'o\\nut\\033[1m.csv')\""), 0, "%s",
		     c.out);
	cr_assert_str_eq(c.out, "t410trace decode: wrote o\\x0aut\\x1b[1m.csv\n");
	cr_assert_eq(dc_sh(&c, "test -s \"$(printf 'o\\nut\\033[1m.csv')\""), 0, "%s", c.out);
	/* record's and report's closing lines, and an error that names it */
	cr_assert_eq(dc_sh(&c, "\"$B\" record --sim --virtual -d 1s -o \"$(printf 'r\\033[2J.t4t')\""
			       " 2>&1 | grep wrote"), 0, "%s", c.out);
	cr_assert(strstr(c.out, "t410trace: wrote r\\x1b[2J.t4t: ") && !strchr(c.out, '\033'), "%s",
		  c.out);
	cr_assert_eq(dc_sh(&c, "\"$B\" report \"$(printf 'r\\033[2J.t4t')\" -o \"$(printf 'h\\nt.html')\""
			       " 2>&1"), 0, "%s", c.out);
	cr_assert(strstr(c.out, "report: wrote h\\x0at.html (") && !strchr(c.out, '\033'), "%s",
		  c.out);
	cr_assert_neq(dc_decode(&c, "\"$(printf 'no\\033[2Jne.t4')\""), 0);
	cr_assert(!strchr(c.out, '\033') && strstr(c.out, "no [2Jne.t4"), "%s", c.out);
	dc_fini(&c);
}

/* The warnings that name a damaged log (info's, a second recording's) are
 * one line each, whatever its file name holds, as its errors are; info
 * shows the name escaped. */
Test(decode_cli, warnings_name_a_log_on_one_line, .timeout = 60)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	dc_write(&c, "x", "--triggers 300 --chunk-packets 100 --truncate 9");
	cr_assert_eq(dc_sh(&c, "cp x.t4 \"$(printf 'd\\nam\\033[2J.t4')\" && "
			       "cat x.t4 x.t4 > \"$(printf 'tw\\no\\033[2J.t4')\""), 0, "%s", c.out);
	cr_assert_eq(dc_sh(&c, "\"$B\" info \"$(printf 'd\\nam\\033[2J.t4')\" 2>&1 >/dev/null"),
		     0, "%s", c.out);
	cr_assert(strstr(c.out, "t410trace: warning: d am [2J.t4: chunk at offset "), "%s", c.out);
	cr_assert(!strchr(c.out, '\033') && count_lines(c.out) == 1, "%s", c.out);
	/* decode's says it the same way (it named no log) */
	cr_assert_eq(dc_sh(&c, "\"$B\" decode \"$(printf 'd\\nam\\033[2J.t4')\" 2>&1 >/dev/null"),
		     0, "%s", c.out);
	cr_assert(strstr(c.out, "t410trace: warning: d am [2J.t4: chunk at offset "), "%s", c.out);
	cr_assert(!strchr(c.out, '\033'), "%s", c.out);
	/* and info's first line, the name, as the summary's header shows it */
	cr_assert_eq(dc_sh(&c, "\"$B\" info \"$(printf 'd\\nam\\033[2J.t4')\" 2>/dev/null | head -n 1"),
		     0, "%s", c.out);
	cr_assert_str_eq(c.out, "d\\x0aam\\x1b[2J.t4\n");
	cr_assert_eq(dc_sh(&c, "\"$B\" decode \"$(printf 'tw\\no\\033[2J.t4')\" 2>&1 >/dev/null"),
		     0, "%s", c.out);
	cr_assert(strstr(c.out, "warning: tw o [2J.t4: another recording starts at offset"), "%s",
		  c.out);
	cr_assert(!strchr(c.out, '\033'), "%s", c.out);
	dc_fini(&c);
}

/* `decode -` reads standard input, from a file or a pipe, and gives what
 * decoding the file gives. Skipped while the reader cannot open "-". */
Test(decode_cli, standard_input, .timeout = 120)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	dc_write(&c, "in", "--triggers 300 --seed 11 --bookmarks --drop-returns 0.02");
	cr_assert_eq(dc_decode(&c, "in.t4 -f csv -o file.csv"), 0, "%s", c.out);
	int st = dc_decode(&c, "- -f csv -o stdin.csv < in.t4");
	if (st != 0 && (strstr(c.out, "-: No such file") || strstr(c.out, "not supported"))) {
		char why[512];
		snprintf(why, sizeof(why), "%.400s", c.out);
		dc_fini(&c);
		cr_skip_test("decode - does not read standard input yet (t4_reader_open of "
			     "\"-\" is coming): %s", why);
	}
	cr_assert_eq(st, 0, "decode - < in.t4: %s", c.out);
	cr_assert_eq(dc_sh(&c, "cmp file.csv stdin.csv"), 0, "%s", c.out);
	st = dc_sh(&c, "cat in.t4 | '%s' decode - -f csv > pipe.csv", c.bin);
	cr_assert_eq(st, 0, "cat in.t4 | decode -: %s", c.out);
	cr_assert_eq(dc_sh(&c, "cmp file.csv pipe.csv"), 0, "%s", c.out);
	dc_check(&c, "csv pipe.csv in.json");
	dc_fini(&c);
}

/* A closed standard input is said, by every reader; the output opened
 * meanwhile does not take its number (report read its own output as an
 * empty log). Skipped where the process does not start with it closed:
 * under qemu-user the emulator opens files of its own at fd 0 first (the
 * readers then say "bad magic" of what they find there). */
Test(decode_cli, a_closed_standard_input_is_said, .timeout = 60)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	dc_sh(&c, "for cmd in 'decode -' 'info -' 'report - -o r.html'; do "
		  "'%s' $cmd <&- 2>&1; echo \"rc=$?\"; done; ls r.html 2>&1", c.bin);
	if (strstr(c.out, "info: standard input: not a t410trace log (bad magic)")) {
		char why[256];
		snprintf(why, sizeof(why), "fd 0 is open when the process starts: %.160s", c.out);
		dc_fini(&c);
		cr_skip_test("%s", why);
	}
	cr_assert_eq(count_lines(c.out), 7, "%s", c.out);
	cr_assert(strstr(c.out, "decode: standard input: read: Bad file descriptor\nrc=1\n") &&
		  strstr(c.out, "info: standard input: read: Bad file descriptor\nrc=1\n") &&
		  strstr(c.out, "report: standard input: read: Bad file descriptor\nrc=1\n") &&
		  strstr(c.out, "cannot access 'r.html'"), "%s", c.out);
	dc_fini(&c);
}

/* One rule for every command's exit code (the man page's EXIT STATUS): 2 where
 * what the user named cannot be used (a log that is not there, an output in a
 * "directory" that is a file), 1 where the work itself failed (a full disk, a
 * closed standard output). */
Test(decode_cli, exit_codes_follow_one_rule_across_commands, .timeout = 60)
{
	struct dc c;

	dc_init(&c, "python3");
	dc_write(&c, "a", "--triggers 20");
	dc_sh(&c, "touch file; for cmd in 'decode nothere.t4' 'info nothere.t4' "
		  "'report nothere.t4' 'decode a.t4 -f csv -o file/x.csv' "
		  "'report a.t4 -o file/x.html' 'record --sim=7 --duration 10ms -q -o file/x.t4t' "
		  "'decode a.t4 -f csv -o /dev/full' 'report a.t4 -o /dev/full'; do "
		  "'%s' $cmd >/dev/null 2>err; echo \"$? $(head -c 60 err)\"; done; "
		  "for cmd in 'decode a.t4' 'info a.t4' 'report a.t4 -o -' list; do "
		  "'%s' $cmd >&- 2>/dev/null; echo \"closed $cmd: $?\"; done", c.bin, c.bin);
	const char *want[] = { "2 t410trace decode: nothere.t4: No such file",
			       "2 t410trace info: nothere.t4: No such file",
			       "2 t410trace report: nothere.t4: No such file",
			       "2 t410trace decode: file/x.csv: Not a directory",
			       "2 t410trace report: file/x.html: Not a directory",
			       "2 t410trace: file/x.t4t",
			       "1 t410trace decode: /dev/full: writing the csv output: No",
			       "1 t410trace report: /dev/full: ",
			       "closed decode a.t4: 1\n", "closed info a.t4: 1\n",
			       "closed report a.t4 -o -: 1\n", "closed list: 1\n" };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_assert(strstr(c.out, want[i]), "no '%s' in:\n%s", want[i], c.out);
	dc_fini(&c);
}

/* ---- a simulated Tegra410, recorded then decoded -------------------------------- */

/* Each PMU kind's table: its title and headline metric columns (bandwidth,
 * latency, frequency) with their units. */
static void expect_kind_table(const char *summary, const char *title,
			      const char *const *cols, const char *units)
{
	char head[64];
	const char *t, *end;

	snprintf(head, sizeof(head), "\n%s, per phase", title);
	t = strstr(summary, head);
	cr_assert_not_null(t, "no %s table in:\n%s", title, summary);
	end = strstr(t + 1, "\n\n");
	cr_assert_not_null(end);
	size_t len = (size_t)(end - t);
	char *tab = strndup(t, len);
	cr_assert_not_null(tab);
	for (size_t i = 0; cols[i]; i++)
		cr_assert(strstr(tab, cols[i]), "%s: no column %s in:\n%s", title, cols[i], tab);
	for (const char *u = units; *u; u += strlen(u) + 1)
		cr_assert(strstr(tab, u), "%s: no unit %s in:\n%s", title, u, tab);
	cr_assert(strstr(tab, "nvidia_"), "%s: no PMU rows in:\n%s", title, tab);
	free(tab);
}

Test(decode_cli, record_sim_then_decode, .timeout = 180)
{
	struct dc c;
	static const char *const ucf[] = { "slc_read_bw", "mem_read_bw", "ucf_freq", NULL };
	static const char *const pcie[] = { "rd_bw", "wr_bw", "pcie_freq", "rd_latency_ns", NULL };
	static const char *const tgt[] = { "rd_bw", "wr_bw", "pcie_tgt_freq", NULL };
	static const char *const cmem[] = { "cmem_freq", "rd_latency_ns", "rd_bw", NULL };
	static const char *const c2c[] = { "c2c_freq", "in_rd_latency_ns", "out_wr_latency_ns",
					   NULL };
	static const char *const clink[] = { "clink_freq", "in_rd_latency_ns", NULL };
	static const char *const dlink[] = { "dlink_freq", "in_rd_latency_ns", NULL };

	dc_init(&c, "python3");
	cr_assert_eq(dc_sh(&c, "'%s' record -q --sim --period 1ms --duration 1s -o sim.t4t",
			   c.bin), 0, "%s", c.out);
	cr_assert_eq(dc_decode(&c, "sim.t4t"), 0, "%s", c.out);
	cr_assert(strstr(c.out, "SIMULATED"), "%s", c.out);
	expect_kind_table(c.out, "UCF", ucf, "GB/s\0GHz\0");
	expect_kind_table(c.out, "PCIE", pcie, "GB/s\0GHz\0ns\0");
	expect_kind_table(c.out, "PCIE-TGT", tgt, "GB/s\0GHz\0");
	expect_kind_table(c.out, "CMEM latency", cmem, "GB/s\0GHz\0ns\0");
	expect_kind_table(c.out, "NVLink-C2C", c2c, "GHz\0ns\0");
	expect_kind_table(c.out, "NV-CLink", clink, "GHz\0ns\0");
	expect_kind_table(c.out, "NV-DLink", dlink, "GHz\0ns\0");
	/* a loaded machine makes monitors late (carried, said), a quiet one
	 * may miss nothing ("MISSING     nothing: ..."): never PARTIAL */
	cr_assert(strstr(c.out, "\nMISSING\n") || strstr(c.out, "\nMISSING     nothing: "), "%s",
		  c.out);
	cr_assert_null(strstr(c.out, "PARTIAL"), "%s", c.out);
	/* CSV totals per event are info's totals */
	cr_assert_eq(dc_decode(&c, "sim.t4t -f csv -o sim.csv"), 0, "%s", c.out);
	cr_assert_eq(dc_sh(&c, "'%s' info --json sim.t4t > info.json", c.bin), 0, "%s", c.out);
	dc_check(&c, "info-totals sim.csv info.json");
	/* info's events table keeps its columns under their heads with PMU
	 * names longer than the head's width (nvidia_pcie_tgt_pmu_0_rc_0);
	 * the event's column is EVENT, as in record's and decode's tables
	 * (it said NAME) */
	cr_assert_eq(dc_sh(&c, "'%s' info sim.t4t > info.txt && python3 - <<'EOF'\n"
			   "s = open('info.txt').read().split('\\nevents (')[1].split('\\n\\n')[0]\n"
			   "head, rows = s.split('\\n')[1], s.split('\\n')[2:]\n"
			   "assert len(rows) == 190, len(rows)\n"
			   "for h in ('PMU', 'EVENT', 'UNIT'):\n"
			   "    i = head.index(' ' + h + ' ') + 1\n"
			   "    assert all(r[i - 1] == ' ' and r[i] != ' ' for r in rows), (h, head, rows)\n"
			   "i = head.index('TOTAL') + 5\n"
			   "assert all(r[i - 1].isdigit() and r[i] == ' ' for r in rows), (head, rows)\n"
			   "EOF", c.bin), 0, "%s", c.out);
	/* with many names, the error lists the first ones whole and ends the
	 * list with "...": the message fits, so it is never cut in its middle */
	cr_assert_eq(dc_decode(&c, "sim.t4t --pmu nope"), 2, "%s", c.out);
	const char *dots = strstr(c.out, "...");
	cr_assert(dots && !strcmp(dots, "...)\n") && dots[-2] == ',', "%s", c.out);
	cr_assert(strstr(c.out, "the log has: nvidia_"), "%s", c.out);
	dc_fini(&c);
}

/* ---- decode -j ------------------------------------------------------------------ */

/* LOG decoded with -j 1, -j 2, --jobs=7 and the default -j (the
 * CPUs: 2 in CI): every format's output and what is said on standard error
 * (the damage) are the same, byte for byte (from -j 2 on, the summary's and
 * the phase table's domains are decoded by that many workers:
 * decode/parallel.c). */
static void same_for_every_jobs(struct dc *c, const char *log)
{
	static const char *const fmt[] = { "summary", "phases", "csv", "jsonl", "perfetto" };
	static const char *const jobs[] = { "-j 2", "--jobs=7", "" };

	for (size_t f = 0; f < T4_ARRAY_LEN(fmt); f++) {
		/* -v: the summary's clock section in full */
		const char *v = strcmp(fmt[f], "summary") ? "" : "-v";
		cr_assert_eq(dc_sh(c, "'%s' decode %s -f %s %s -j 1 -o one.out 2>one.err", c->bin, log,
				   fmt[f], v),
			     0, "decode %s -f %s -j 1: %s", log, fmt[f], c->out);
		for (size_t j = 0; j < T4_ARRAY_LEN(jobs); j++) {
			cr_assert_eq(dc_sh(c, "rm -f n.out && '%s' decode %s -f %s %s %s -o n.out 2>n.err",
					   c->bin, log, fmt[f], v, jobs[j]),
				     0, "decode %s -f %s %s: %s", log, fmt[f], jobs[j], c->out);
			cr_assert_eq(dc_sh(c, "cmp one.out n.out && sed 's/n[.]out/one.out/' n.err |"
					      " cmp one.err -"),
				     0, "decode %s -f %s: -j 1 and %s differ: %s", log, fmt[f], jobs[j],
				     c->out);
		}
		dc_sh(c, "rm -f one.out");
	}
}

/* A simulated Tegra410 and a damaged, reordered log with bookmarks (its
 * warnings on standard error among the packets, in their place). */
Test(decode_cli, threads_change_no_output_sim_and_damaged, .timeout = 300)
{
	struct dc c;

	dc_init(&c, "python3 zstd");
	cr_assert_eq(dc_sh(&c, "'%s' record -q --sim=7 --virtual --per-socket --duration 3s"
			       " -o sim.t4t", c.bin), 0, "%s", c.out);
	same_for_every_jobs(&c, "sim.t4t");
	dc_write(&c, "dmg", "--triggers 3000 --seed 4 --bookmarks --damage 2 --damage 5 --drop-returns 0.02"
			    " --late 0.02 --duplicate 0.01 --reorder 40");
	cr_assert_eq(dc_decode(&c, "dmg.t4 -j 1 -o /dev/null"), 0, "%s", c.out);
	cr_assert(strstr(c.out, "payload CRC mismatch"), "the log is not damaged: %s", c.out);
	same_for_every_jobs(&c, "dmg.t4");
	/* and from standard input */
	cr_assert_eq(dc_sh(&c, "'%s' decode - -f csv -j 1 < dmg.t4 > a.csv 2>/dev/null && '%s' decode"
			       " - -f csv -j 3 < dmg.t4 > b.csv 2>/dev/null && cmp a.csv b.csv",
			   c.bin, c.bin), 0, "%s", c.out);
	dc_fini(&c);
}

/* The host's own PMUs, recorded live. */
Test(decode_cli, threads_change_no_output_host, .timeout = 300)
{
	struct dc c;

	t4t_need_perf();
	dc_init(&c, "python3");
	cr_assert_eq(dc_sh(&c, "'%s' record -q --period 1ms --duration 1s -o host.t4t", c.bin), 0,
		     "%s", c.out);
	same_for_every_jobs(&c, "host.t4t");
	dc_fini(&c);
}

/* -j takes a number of threads from 1 on. */
Test(decode_cli, jobs_refusals, .timeout = 60)
{
	struct dc c;
	static const char *const bad[] = { "0", "-1", "x", "2x", "1025", "" };

	dc_init(&c, "python3");
	for (size_t i = 0; i < T4_ARRAY_LEN(bad); i++) {
		char args[64];
		snprintf(args, sizeof(args), "no.t4 -j '%s'", bad[i]);
		cr_assert_eq(dc_decode(&c, args), 2, "-j '%s': %s", bad[i], c.out);
		cr_assert(strstr(c.out, "give a number of threads from 1 to 1024"), "%s", c.out);
	}
	dc_fini(&c);
}

/* -f phases: the header as documented; one row per occurrence, numbered
 * per name; each boundary where its bookmark was set (info's set_ns) and
 * said exact; end = the next row's start, duration = end - start; the
 * triggers of the rows add up to the log's. */
Test(decode_cli, phases_table_as_documented, .timeout = 60)
{
	struct dc c;

	dc_init(&c, "python3");
	cr_assert_eq(dc_sh(&c, "'%s' record -q --sim=3 --virtual -d 2s -o p.t4t && "
			       "'%s' decode p.t4t -f phases > p.csv && '%s' info --json p.t4t > p.json",
			   c.bin, c.bin, c.bin), 0, "%s", c.out);
	cr_assert_eq(dc_sh(&c, "python3 -c '%s'",
			   "import csv, json, collections\n"
			   "r = list(csv.reader(open(\"p.csv\")))\n"
			   "info = json.load(open(\"p.json\"))\n"
			   "assert r[0] == [\"phase\", \"occurrence\", \"start_ns\", \"end_ns\", "
			   "\"duration_ns\", \"triggers\", \"boundary\"], r[0]\n"
			   "rows = r[1:]\n"
			   "assert len(rows) >= 4, rows\n"
			   "seen = collections.Counter()\n"
			   "for i, (n, o, a, b, d, t, how) in enumerate(rows):\n"
			   "    seen[n] += 1\n"
			   "    assert int(o) == seen[n], (i, rows)\n"
			   "    assert int(d) == int(b) - int(a) and how == \"exact\", rows[i]\n"
			   "    if i + 1 < len(rows): assert b == rows[i + 1][2], (rows[i], rows[i + 1])\n"
			   "sets = [(m[\"name\"], m[\"set_ns\"]) for m in info[\"bookmarks\"]][1:]\n"
			   "assert [(n, int(a)) for n, o, a, *_ in rows[1:]] == sets, (rows, sets)\n"
			   "assert sum(int(x[5]) for x in rows) == info[\"triggers\"], rows\n"),
		     0, "%s", c.out);
	dc_fini(&c);
}

/* A metric whose events were not recorded is absent, never zero: with only
 * a UCF's cycles and mem_bytes_rd, the CSV's metrics are exactly the two
 * those make (ucf_freq, mem_read_bw), on every interval. */
Test(decode_cli, metrics_without_their_events_are_absent, .timeout = 60)
{
	struct dc c;

	dc_init(&c, "awk");
	cr_assert_eq(dc_sh(&c, "'%s' record -q --sim --virtual --backend pwrite -d 50ms -e "
			       "'nvidia_ucf_pmu_0/cycles/,nvidia_ucf_pmu_0/mem_bytes_rd/' -o m.t4t && "
			       "'%s' decode m.t4t -f csv | awk -F, '$10 == \"metric\" { print $7 }' | "
			       "sort -u", c.bin, c.bin), 0, "%s", c.out);
	cr_assert_str_eq(c.out, "mem_read_bw\nucf_freq\n");
	dc_fini(&c);
}
