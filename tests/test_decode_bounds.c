/* test_decode_bounds.c - decode's time and memory are bounded by the log's
 * size and the output asked for, whatever a small crafted log claims
 * (issue 16): 200,000 domain IDs in a few hundred kilobytes, a reference
 * packet whose trigger ID jumps by 2^40, --bin far finer than the
 * period, 100,000 bookmarks; and what a log names (hosts, domains,
 * events, bookmarks, threads: any bytes) reaches no output as anything
 * but valid UTF-8, and no terminal as a control character.
 *
 * Each log is written with the project's own writer, then decoded by the
 * built binary (T4_BIN); its peak memory comes from getrusage of the
 * children. Time is bounded only by each test's timeout, generous on
 * purpose: it tells a hang from a decode, never a fast machine from a slow
 * one (the speed targets are benchmarks: docs/PERFORMANCE.md).
 */
#include "cli_testutil.h"

#include <stdint.h>
#include <sys/resource.h>

#include "craft_log.h"
#include "packets/packets.h"
#include "util/util.h"

#if defined(__SANITIZE_ADDRESS__)
#define RSS_LIMIT_KB (3u << 20) /* AddressSanitizer's shadow and quarantine */
#else
#define RSS_LIMIT_KB (1u << 20)
#endif

/* Run "$B ARGS 2>&1" in dir (errors follow a redirection of the output
 * in ARGS); its output in out; exit status returned. */
static int run(const char *dir, char *out, size_t cap, const char *args)
{
	cli_bin();
	return cli_exec(&(struct cli_io){ .dir = dir, .out = out, .cap = cap, .merge_err = true },
			"\"$B\" %s 2>&1", args);
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	cr_assert_eq(getrusage(RUSAGE_CHILDREN, &ru), 0);
	return ru.ru_maxrss;
}

/* 200,000 domains, one baseline and one return each: a few hundred
 * kilobytes of log; the decoder decodes the first DEC_MAX_DOMAINS and
 * says it left the others out, in bounded memory. */
Test(decode_bounds, two_hundred_thousand_domains_stay_bounded, .timeout = 300)
{
	char *dir = cli_tmpdir("t4bounds"), path[4200], out[8192];
	struct lw w;

	snprintf(path, sizeof(path), "%s/many.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	for (uint32_t id = 0; id < 200000; id++)
		domain(&w, id);
	ref(&w, 0, 1000000000ull, 0);
	ref(&w, 1, 1001000000ull, 0);
	for (uint32_t id = 0; id < 200000; id++) {
		ret(&w, id, 0, 1000000000ull, 0);
		ret(&w, id, 1, 1001000000ull, 7);
	}
	lw_close(&w);
	cr_assert_eq(run(dir, out, sizeof(out), "decode many.t4t > s.txt"), 0, "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "grep -e 'too many domains' -e 'TOTALS ARE PARTIAL'"
					       " -e 'more than 4096 clock domains' '%s/s.txt' | wc -l", dir),
		     0, "%s", out);
	cr_assert_eq(atoi(out), 3, "the summary says what it left out: %s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode many.t4t -f csv -o many.csv"), 0, "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info many.t4t > /dev/null"), 0, "%s", out);
	cr_assert_lt(peak_rss_kb(), RSS_LIMIT_KB, "peak RSS %ld kB", peak_rss_kb());
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A reference packet whose trigger ID jumps by 2^40 a millisecond after
 * the last: no scheduler gets there in a millisecond. It is damage, left
 * out of info and decode alike, and costs nothing. */
Test(decode_bounds, a_trigger_id_jump_of_2_40_is_damage, .timeout = 120)
{
	char *dir = cli_tmpdir("t4bounds"), path[4200], out[8192];
	struct lw w;

	snprintf(path, sizeof(path), "%s/jump.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	domain(&w, 1);
	for (uint64_t k = 0; k < 50; k++) {
		ref(&w, k == 20 ? k + (1ull << 40) : k, 1000000000ull + k * 1000000, 0);
		ret(&w, 1, k, 1000000000ull + k * 1000000, 5);
	}
	lw_close(&w);
	cr_assert_eq(run(dir, out, sizeof(out), "decode jump.t4t"), 0, "%s", out);
	cr_assert(strstr(out, "1 reference packet whose trigger ID jumps"), "%s", out);
	cr_assert(strstr(out, "1 trigger without a reference packet"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info --json jump.t4t"), 0, "%s", out);
	cr_assert(strstr(out, "\"implausible_refs\": 1,"), "%s", out);
	cr_assert(strstr(out, "\"last_trigger\": 49,"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* --bin far finer than the period is refused before any work; finer is
 * said and done. */
Test(decode_bounds, bins_far_finer_than_the_period_are_refused, .timeout = 120)
{
	char *dir = cli_tmpdir("t4bounds"), path[4200], out[8192];
	struct lw w;

	snprintf(path, sizeof(path), "%s/g.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	domain(&w, 1);
	for (uint64_t k = 0; k < 5000; k++) {
		ref(&w, k, 1000000000ull + k * 1000000, 0);
		ret(&w, 1, k, 1000000000ull + k * 1000000, 5);
	}
	lw_close(&w);
	cr_assert_eq(run(dir, out, sizeof(out), "decode g.t4t --bin 1ns -f csv -o g.csv"), 2,
		     "%s", out);
	cr_assert(strstr(out, "--bin 1ns: a thousand bins"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode g.t4t --bin 1us -f csv -o g.csv"), 2,
		     "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode g.t4t --bin 100us -f csv -o g.csv"), 0,
		     "%s", out);
	cr_assert(strstr(out, "finer than the log's period (1ms)"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* 100,000 bookmarks, each set once, a millisecond apart: the summary,
 * every format and info finish (near-linear work), and the phases are all
 * there. */
/* Trigger k's bookmark ID in bookmarks_log(): k, or with cycle, one of
 * cycle IDs but for the last four triggers' (a log names at most 65,536). */
static uint32_t bookmark_id_of(uint64_t k, uint64_t n, uint64_t cycle)
{
	return (uint32_t)(!cycle ? k : k + 4 < n ? 1 + k % cycle : cycle + k - (n - 5));
}

/* A log of n triggers of one domain, a bookmark at each but the first and
 * the last, named b<its ID>: dir/bm.t4t. */
static void bookmarks_log(const char *dir, uint64_t n, uint64_t cycle)
{
	char path[4200];
	struct lw w;

	snprintf(path, sizeof(path), "%s/bm.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	domain(&w, 1);
	for (uint64_t k = 0; k <= n; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		uint32_t id = bookmark_id_of(k < n ? k : n - 1, n, cycle);
		if (k && k < n) {
			struct t4_packet b = { .type = T4_PKT_BOOKMARK };
			b.bookmark.bookmark_id = id;
			b.bookmark.first_trigger = k;
			b.bookmark.set_ns = t - 500000;
			snprintf(b.bookmark.name, sizeof(b.bookmark.name), "b%u", id);
			lw_put(&w, &b);
		}
		ref(&w, k, t, id);
		ret(&w, 1, k, t, 3);
	}
	lw_close(&w);
}

Test(decode_bounds, a_hundred_thousand_bookmarks, .timeout = 300)
{
	char *dir = cli_tmpdir("t4bounds"), out[16384];
	const uint64_t n = 100000;

	bookmarks_log(dir, n, 0);
	cr_assert_eq(run(dir, out, sizeof(out), "decode bm.t4t | head -3"), 0, "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out),
			 "decode bm.t4t -f phases | tail -n +2 | wc -l"), 0, "%s", out);
	cr_assert_eq(strtoull(out, NULL, 10), n, "phases: %s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode bm.t4t -f jsonl -o bm.jsonl"), 0, "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info bm.t4t | tail -2"), 0, "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* --from and --to naming bookmarks the log has late or not at all: each
 * piece of an interval looked for them through every phase so far (72 s for 87,000
 * bookmarks to say that --from's was missing; minutes here), now through
 * the newest phases only. The timeout tells that from a decode (a second
 * or two). And a name first set after the index's 100,000th bookmark
 * packet was "no such bookmark": the names are checked by ID now. */
Test(decode_bounds, a_window_named_late_or_never_among_200_000_bookmarks, .timeout = 150)
{
	char *dir = cli_tmpdir("t4bounds"), out[16384];

	bookmarks_log(dir, 200000, 16);
	/* (to a file: the names are checked as the decode ends) */
	cr_assert_eq(run(dir, out, sizeof(out), "decode bm.t4t --from nosuch -f csv -o x.csv"), 2,
		     "%s", out);
	cr_assert(strstr(out, "--from nosuch: no such bookmark in the log"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out),
			 "decode bm.t4t --from b17 --to b19 -f csv -o w.csv 2>/dev/null && "
			 "cut -d, -f4 w.csv | tail -n +2 | uniq -c"),
		     0, "%s", out);
	cr_assert_str_eq(out, "      2 b17\n      2 b18\n      2 b19\n");
	cr_assert_eq(run(dir, out, sizeof(out), "decode bm.t4t --from b17 --to nosuch -f csv -o y.csv"),
		     2, "%s", out);
	cr_assert(strstr(out, "--to nosuch: no such bookmark in the log"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A bookmark set a second before the first trigger, and one a crafted log
 * claims was set at the clock's far end: info's relative times keep their
 * sign and size (a signed cast of the difference made the second -1 s). */
Test(decode_bounds, bookmark_times_far_from_the_first_trigger, .timeout = 120)
{
	char *dir = cli_tmpdir("t4bounds"), path[4200], out[8192];
	const uint64_t t0 = 5000000000ull, far = UINT64_MAX - 5;
	struct lw w;

	snprintf(path, sizeof(path), "%s/far.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	domain(&w, 1);
	for (uint32_t k = 0; k < 2; k++) {
		struct t4_packet b = { .type = T4_PKT_BOOKMARK };
		b.bookmark.bookmark_id = k + 1;
		b.bookmark.first_trigger = 10 * k;
		b.bookmark.set_ns = k ? far : t0 - 1000000000ull;
		snprintf(b.bookmark.name, sizeof(b.bookmark.name), "%s", k ? "far" : "early");
		lw_put(&w, &b);
	}
	for (uint64_t k = 0; k < 20; k++) {
		ref(&w, k, t0 + k * 1000000, k < 10 ? 1 : 2);
		ret(&w, 1, k, t0 + k * 1000000, 3);
	}
	lw_close(&w);
	cr_assert_eq(run(dir, out, sizeof(out), "info --json far.t4t"), 0, "%s", out);
	cr_assert(strstr(out, "\"set_rel_ns\": -1000000000}"), "%s", out);
	char want[128];
	snprintf(want, sizeof(want), "\"set_rel_ns\": %llu}", (unsigned long long)(far - t0));
	cr_assert(strstr(out, want), "no %s in %s", want, out);
	cr_assert_eq(run(dir, out, sizeof(out), "info far.t4t"), 0, "%s", out);
	cr_assert(strstr(out, "  -1.000000000\n"), "%s", out);
	cr_assert(strstr(out, "  18446744068.7095"), "%s", out); /* a double's digits */
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A reference clock past 2^63 (the format's u64; a crafted log): --time
 * ref writes its times as they are, in CSV, JSONL and the phase table as
 * in JSONL's header (its intervals said start_ns -99998500 under an
 * origin_ns of 18446744073609551616). */
/* A new directory with top.t4t: 10 triggers of 1 ms from `before` ns
 * before the reference clock's end (2^64 ns), domain 1 counting 5 a
 * trigger. */
static char *log_at_the_clocks_end(uint64_t before)
{
	char *dir = cli_tmpdir("t4bounds"), path[4200];
	const uint64_t t0 = UINT64_MAX - before + 1;
	struct lw w;

	snprintf(path, sizeof(path), "%s/top.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	domain(&w, 1);
	for (uint64_t k = 0; k < 10; k++) {
		ref(&w, k, t0 + k * 1000000, 0);
		ret(&w, 1, k, t0 + k * 1000000, k ? 5 : 0);
	}
	lw_close(&w);
	return dir;
}

Test(decode_bounds, reference_times_past_2_63_stay_unsigned, .timeout = 120)
{
	char *dir = log_at_the_clocks_end(100000000), out[8192];
	cr_assert_eq(run(dir, out, sizeof(out), "decode -f csv top.t4t | sed -n 2p"), 0, "%s", out);
	cr_assert_str_eq(out, "1,18446744073609553116,18446744073610553116,,d1,,event0,5,,"
			 "counter,1\n", "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode -f jsonl top.t4t | grep -o "
			 "'\"origin_ns\": [0-9]*\\|\"start_ns\": [-0-9]*' | sed -n '1,2p'"), 0,
		     "%s", out);
	cr_assert_str_eq(out, "\"origin_ns\": 18446744073609551616\n"
			 "\"start_ns\": 18446744073609553116\n", "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode -f phases top.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n,1,18446744073609553116,18446744073618553116,9000000,10,"),
			   "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode -f phases --time rel top.t4t"), 0, "%s",
		     out);
	cr_assert_not_null(strstr(out, "\n,1,1500,9001500,9000000,10,"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* --to past the reference clock's end (0.2 s of a log 0.1 s before it)
 * keeps the whole log (it wrapped: "--to 200ms: selects no interval of
 * the log (its triggers span 0 to 9ms ...)", exit 2). */
Test(decode_bounds, a_window_past_the_clocks_end_keeps_the_log, .timeout = 120)
{
	char *dir = log_at_the_clocks_end(100000000), out[8192];

	cr_assert_eq(run(dir, out, sizeof(out), "decode -f phases --time rel --to 200ms top.t4t"),
		     0, "%s", out);
	cr_assert_not_null(strstr(out, "\n,1,1500,9001500,9000000,10,"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode -f phases --time rel --from 2ms --to 1h "
			 "top.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n,1,2001500,9001500,7000000,7,"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* Bins past the reference clock's end (a log ending 1 ms before 2^64 ns,
 * bins of 3 ms): the last row ends where the log does (it ended at the
 * wrapped bin end, 12 ms from the first trigger). */
Test(decode_bounds, a_bin_past_the_clocks_end_ends_with_the_log, .timeout = 120)
{
	char *dir = log_at_the_clocks_end(10005000), out[8192];

	cr_assert_eq(run(dir, out, sizeof(out), "decode -f csv --bin 3ms --time rel top.t4t"), 0,
		     "%s", out);
	cr_assert(strstr(out, "\n9,6000000,9000000,") && strstr(out, "\n9,9000000,9001500,"), "%s",
		  out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A log without a period (triggers by command only) and --bin 10ns: an
 * interval of 1 ms spans 100,000 bins, too many to spread, so its last
 * bin holds its counts whole, and its row says the interval's time (it
 * said 10 ns: '1,1001001490,1001001500,...,1000', its JSONL elapsed_ns
 * 1000000). */
Test(decode_bounds, an_interval_too_long_to_spread_keeps_its_time, .timeout = 120)
{
	char *dir = cli_tmpdir("t4bounds"), path[4200], out[8192];
	struct lw w;

	snprintf(path, sizeof(path), "%s/p0.t4t", dir);
	lw_open(&w, path);
	session(&w, 0);
	domain(&w, 1);
	for (uint64_t k = 0; k < 10; k++) {
		ref(&w, k, 1000000000ull + k * 1000000, 0);
		ret(&w, 1, k, 1000000000ull + k * 1000000, k ? 1000 : 0);
	}
	lw_close(&w);
	cr_assert_eq(run(dir, out, sizeof(out), "decode -f csv --bin 10ns p0.t4t | sed -n 2,3p"), 0,
		     "%s", out);
	cr_assert_str_eq(out, "1,1000001500,1001001500,,d1,,event0,1000,,counter,1\n"
			 "2,1001001500,1002001500,,d1,,event0,1000,,counter,1\n", "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

static void task(struct lw *w, uint32_t tid, const char *name, uint64_t ns)
{
	struct t4_packet p = { .type = T4_PKT_TASK };

	p.task.pid = p.task.tid = tid;
	p.task.mono_ns = ns;
	snprintf(p.task.name, sizeof(p.task.name), "%s", name);
	lw_put(w, &p);
}

static void cpu_slice(struct lw *w, uint32_t tid, uint64_t start, uint64_t end)
{
	struct t4_packet p = { .type = T4_PKT_CPU_SLICE };

	p.cpu_slice.pid = p.cpu_slice.tid = tid;
	p.cpu_slice.start_ns = start;
	p.cpu_slice.end_ns = end;
	lw_put(w, &p);
}

/* Names with bytes that are not UTF-8, control characters, an escape
 * sequence, commas and quotes: JSONL parses line by line, CSV by RFC
 * 4180, both all UTF-8 with the bad bytes as the text \\xNN; Perfetto's
 * strings are UTF-8 for protobuf; the summary and info print no control
 * character. */
Test(decode_bounds, names_that_are_not_text_stay_out_of_outputs, .timeout = 120)
{
	char *dir = cli_tmpdir("t4bounds"), path[16384], out[8192];
	struct lw w;
	struct t4_packet p;

	snprintf(path, sizeof(path), "%s/odd.t4t", dir);
	lw_open(&w, path);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_SESSION;
	snprintf(p.session.host, sizeof(p.session.host), "host\x1b[31mred\xff");
	p.session.start_ref_ns = 1000000000ull;
	p.session.start_real_ns = 1700000000000000000ull;
	p.session.period_ns = 1000000;
	lw_put(&w, &p);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_DOMAIN;
	p.domain.domain_id = 1;
	p.domain.kind = T4_DOM_SOFTWARE;
	p.domain.cpu = -1;
	p.domain.clock_event = -1;
	snprintf(p.domain.name, sizeof(p.domain.name), "dom\xff\x01,\"x\"");
	lw_put(&w, &p);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_EVENT;
	p.event.domain_id = 1;
	snprintf(p.event.pmu, sizeof(p.event.pmu), "pmu\xc3");
	snprintf(p.event.name, sizeof(p.event.name), "ev\xfe\n2");
	snprintf(p.event.unit, sizeof(p.event.unit), "u\x80");
	lw_put(&w, &p);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_BOOKMARK;
	p.bookmark.bookmark_id = 1;
	p.bookmark.first_trigger = 10;
	p.bookmark.set_ns = 1000000000ull + 9500000;
	snprintf(p.bookmark.name, sizeof(p.bookmark.name), "\x1b]0;pwned\x07\xed\xa0\x80");
	lw_put(&w, &p);
	task(&w, 77, "\xff\xfe\x1b[2J", 1000000000ull);
	for (uint64_t k = 0; k < 40; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		ref(&w, k, t, k >= 10);
		ret(&w, 1, k, t, 9);
		if (k && k < 39)
			cpu_slice(&w, 77, t + 100000, t + 600000);
	}
	lw_close(&w);
	snprintf(path, sizeof(path),
		 "cd '%s' && B='%s' && \"$B\" decode odd.t4t -f jsonl -o o.jsonl && "
		 "\"$B\" decode odd.t4t -f csv -o o.csv && \"$B\" decode odd.t4t -f slices -o s.csv && "
		 "\"$B\" decode odd.t4t -f phases -o p.csv && \"$B\" decode odd.t4t -v > sum.txt && "
		 "\"$B\" info odd.t4t > info.txt && \"$B\" info --json odd.t4t > info.json && "
		 "python3 - <<'EOF'\n"
		 "import csv, json\n"
		 "lines = open('o.jsonl', 'rb').read().decode('utf-8').splitlines()\n"
		 "recs = [json.loads(l) for l in lines]\n"
		 "doms = {r['domain'] for r in recs if r['type'] == 'interval'}\n"
		 "assert doms == {'dom\\\\xff\\x01,\"x\"'}, doms\n"
		 "assert any(r.get('bookmark', '').startswith('\\x1b]0;pwned') for r in recs)\n"
		 "json.load(open('info.json', 'rb'))\n"
		 "for f in ('o.csv', 's.csv', 'p.csv'):\n"
		 "    rows = list(csv.reader(open(f, encoding='utf-8', newline='')))\n"
		 "    assert len(rows) > 1, f\n"
		 "names = {r[6] for r in csv.reader(open('o.csv', encoding='utf-8', newline=''))}\n"
		 "assert 'ev\\\\xfe\\n2' in names, names\n"
		 CLI_PY_CLEAN "clean('sum.txt', 'info.txt')\n"
		 "print('clean')\n"
		 "EOF\n",
		 dir, cli_bin());
	cr_assert_eq(cli_run(out, sizeof(out), "%s 2>&1", path), 0, "%s", out);
	char schema[PATH_MAX];
	if (realpath("decode", schema) && !access("decode/perfetto.proto", R_OK)) {
		snprintf(path, sizeof(path),
			 "cd '%s' && '%s' decode odd.t4t -f perfetto -o o.pftrace && "
			 "protoc --proto_path='%s' --decode=perfetto.protos.Trace perfetto.proto "
			 "< o.pftrace > /dev/null",
			 dir, cli_bin(), schema);
		cr_assert_eq(cli_run(out, sizeof(out), "%s 2>&1", path), 0, "%s", out);
		cr_assert_eq(out[0], '\0', "protoc: %s", out);
	}
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}
