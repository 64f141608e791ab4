/* test_decode_contradict.c - a log that contradicts itself: a domain or an
 * event described again, otherwise, halfway through (FORMAT.md 6). Nothing
 * says which description is true, so the first holds, the contradiction is
 * counted and said (summary, info, report, a warning of decode), and the
 * domain's counts after it are not decoded: no value is ever put under a
 * name that may not be its own, and every output and info agree on it.
 *
 * Each log is written with the project's own writer (craft_log.h), then
 * read by the built binary (T4_BIN).
 */
#include "cli_testutil.h"

#include <inttypes.h>
#include <stdint.h>

#include "craft_log.h"
#include "packets/packets.h"
#include "util/util.h"

#define TRIGGERS 100
#define HALF 50 /* the contradiction comes after the packets of this trigger */

/* Event index of domain, PMU "soft". */
static struct t4_packet event_pkt(uint32_t domain, uint32_t index, const char *name,
				  const char *unit)
{
	struct t4_packet p = { .type = T4_PKT_EVENT };

	p.event.domain_id = domain;
	p.event.index = index;
	p.event.scale = 1.0;
	snprintf(p.event.pmu, sizeof(p.event.pmu), "soft");
	snprintf(p.event.name, sizeof(p.event.name), "%s", name);
	snprintf(p.event.unit, sizeof(p.event.unit), "%s", unit);
	return p;
}

static void event(struct lw *w, uint32_t domain, uint32_t index, const char *name,
		  const char *unit)
{
	struct t4_packet p = event_pkt(domain, index, name, unit);

	lw_put(w, &p);
}

/* Run "$B ARGS" in dir; its standard output in out, its errors in err;
 * exit status returned. */
static int t4(const char *dir, char *out, size_t cap, char *err, size_t err_cap,
	      const char *args)
{
	cli_bin();
	return cli_exec(&(struct cli_io){ .dir = dir, .out = out, .cap = cap, .err = err,
					  .err_cap = err_cap },
			"\"$B\" %s", args);
}

/* Domains 1 and 2, one event each ("a" and "b"), counting 5 a trigger;
 * after trigger HALF, `again` (a domain or event packet of domain 1, or
 * NULL) and from then on 7 a trigger. */
static void write_log(const char *path, const struct t4_packet *again)
{
	struct lw w;

	lw_open(&w, path);
	session(&w, 1000000);
	domain(&w, 1);
	event(&w, 1, 0, "a", "bytes");
	domain(&w, 2);
	event(&w, 2, 0, "b", "bytes");
	for (uint64_t k = 0; k < TRIGGERS; k++) {
		uint64_t ns = 1000000000ull + k * 1000000;
		ref(&w, k, ns, 0);
		ret(&w, 1, k, ns, k ? (k <= HALF ? 5 : 7) : 0);
		ret(&w, 2, k, ns, k ? 5 : 0);
		if (k == HALF && again)
			lw_put(&w, again);
	}
	lw_close(&w);
}

/* The sum of column `value` of the CSV rows of event `name` in csv. */
static uint64_t csv_sum(const char *csv, const char *name)
{
	char key[64];
	uint64_t sum = 0;

	snprintf(key, sizeof(key), ",%s,", name);
	for (const char *l = csv; (l = strstr(l, key)); l++)
		sum += strtoull(l + strlen(key), NULL, 10); /* event,value,... */
	return sum;
}

/* Event 0 of domain 1 named "c" halfway: its 49 later returns (7 each)
 * are neither "a"'s nor "c"'s in any output, domain 2 is decoded whole. */
Test(decode_contradict, an_event_described_again_otherwise_is_counted_and_said, .timeout = 120)
{
	char *dir = cli_tmpdir("t4contra"), path[PATH_MAX + 16], err[8192];
	static char out[1 << 20];
	struct t4_packet again = event_pkt(1, 0, "c", "bytes");

	snprintf(path, sizeof(path), "%s/re.t4t", dir);
	write_log(path, &again);

	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode re.t4t -f csv -j 1"), 0,
		     "%s", err);
	cr_assert_eq(csv_sum(out, "a"), 5 * HALF, "%s", out);
	cr_assert_eq(csv_sum(out, "b"), 5 * (TRIGGERS - 1));
	cr_assert_null(strstr(out, ",c,"), "a value under the second name: %s", out);
	cr_assert(strstr(err, "domain d1 (ID 1): its event 0 describes it again, otherwise ('c', "
			      "was 'a'): the first description holds"), "%s", err);
	cr_assert_eq(count_lines(err), 1, "said once: %s", err);
	/* -j 4 decodes the same, and says it once */
	char *csv1 = strdup(out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode re.t4t -f csv -j 4"), 0);
	cr_assert_str_eq(out, csv1);
	cr_assert_eq(count_lines(err), 1, "said once: %s", err);
	free(csv1);

	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode re.t4t -f jsonl"), 0);
	cr_assert_null(strstr(out, "\"c\""), "%s", out);

	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode re.t4t"), 0);
	cr_assert(strstr(out, "re-described      1 domain described again, otherwise (d1): the"
			      " first description holds; 49 return packets after it not decoded"),
		  "%s", out);
	cr_assert(strstr(out, "TOTALS ARE PARTIAL"), "%s", out);
	cr_assert(strstr(out, " 250 "), "a's total: %s", out);

	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "info --json re.t4t"), 0);
	cr_assert_eq(json_num(out, "redescribed"), 1, "%s", out);
	cr_assert_eq(json_num(out, "redescribed_rets"), TRIGGERS - 1 - HALF, "%s", out);
	cr_assert(strstr(out, "\"name\": \"a\", \"spec\": \"\", \"unit\": \"bytes\", \"counts\": "
			      "\"system\", \"perf_type\": 0, \"config\": \"0x0\", \"config1\": \"0x0\","
			      " \"config2\": \"0x0\", \"scale\": 1, \"total\": 250,"), "%s", out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "info re.t4t"), 0);
	cr_assert(strstr(out, "re-described"), "%s", out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "report re.t4t -o re.html"), 0,
		     "%s", err);
	cr_assert_eq(cli_run(out, sizeof(out), "grep -c 't4-h-redescribed' '%s/re.html'", dir), 0);
	t4_rmtree(dir);
	free(dir);
}

/* The domain packet again with another name: the first name holds, the
 * later counts are not decoded; the same description again (not a copy)
 * is no contradiction: nothing counted, everything decoded. */
Test(decode_contradict, a_domain_described_again, .timeout = 120)
{
	char *dir = cli_tmpdir("t4contra"), path[PATH_MAX + 16], err[8192];
	static char out[1 << 20];
	struct t4_packet again = { .type = T4_PKT_DOMAIN };

	again.domain.domain_id = 1;
	again.domain.kind = T4_DOM_SOFTWARE;
	again.domain.cpu = -1;
	again.domain.clock_event = -1;
	snprintf(again.domain.name, sizeof(again.domain.name), "other");
	snprintf(path, sizeof(path), "%s/dom.t4t", dir);
	write_log(path, &again);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode dom.t4t -f csv"), 0);
	cr_assert_eq(csv_sum(out, "a"), 5 * HALF, "%s", out);
	cr_assert_null(strstr(out, "other"), "%s", out);
	cr_assert(strstr(err, "domain d1 (ID 1): its domain packet describes it again, otherwise "
			      "('other', was 'd1')"), "%s", err);

	snprintf(again.domain.name, sizeof(again.domain.name), "d1");
	snprintf(path, sizeof(path), "%s/same.t4t", dir);
	write_log(path, &again);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode same.t4t -f csv"), 0);
	cr_assert_eq(csv_sum(out, "a"), 5 * HALF + 7 * (TRIGGERS - 1 - HALF));
	cr_assert_str_eq(err, "");
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "info --json same.t4t"), 0);
	cr_assert_eq(json_num(out, "redescribed"), 0, "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* dir/name: domain 1 counting 5 a trigger, and three bookmarks, ids[i]
 * named names[i], in force from triggers 10, 30 and 60. */
static void bookmark_log(const char *dir, const char *name, const uint32_t ids[3],
			 const char *const names[3])
{
	static const uint64_t from[3] = { 10, 30, 60 };
	char path[PATH_MAX + 16];
	struct lw w;
	uint32_t id = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	lw_open(&w, path);
	session(&w, 1000000);
	domain(&w, 1);
	event(&w, 1, 0, "a", "bytes");
	for (uint64_t k = 0; k < TRIGGERS; k++) {
		uint64_t ns = 1000000000ull + k * 1000000;
		for (int i = 0; i < 3; i++)
			if (k == from[i])
				bookmark(&w, id = ids[i], names[i], k, ns - 500000);
		ref(&w, k, ns, id);
		ret(&w, 1, k, ns, k ? 5 : 0);
	}
	lw_close(&w);
}

/* Bookmark ID 1 named "alpha" at trigger 10, "gamma" at 60 (ID 2 "beta"
 * between): an ID keeps its first name (FORMAT.md 4.4), so the third
 * phase is alpha#2 in every output and in info, and "gamma" is no
 * bookmark of the log; counted and said. */
Test(decode_contradict, a_bookmark_id_named_twice_keeps_its_first_name, .timeout = 120)
{
	char *dir = cli_tmpdir("t4contra"), err[8192];
	static char out[1 << 20];

	bookmark_log(dir, "bm.t4t", (const uint32_t[]){ 1, 2, 1 },
		     (const char *const[]){ "alpha", "beta", "gamma" });
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode bm.t4t -f phases"), 0);
	cr_assert(strstr(out, "\nalpha,1,") && strstr(out, "\nbeta,1,") && strstr(out, "\nalpha,2,"),
		  "%s", out);
	cr_assert_null(strstr(out, "gamma"), "%s", out);
	cr_assert(strstr(err, "bookmark ID 1 is named 'gamma' here, 'alpha' before: an ID keeps its"
			      " first name"), "%s", err);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode bm.t4t -f csv"), 0);
	cr_assert_null(strstr(out, "gamma"), "%s", out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode bm.t4t -f csv --phase gamma"),
		     2);
	cr_assert(strstr(err, "--phase gamma: no such bookmark in the log") && !strstr(err, "has: gamma")
		  && !strstr(err, ", gamma"), "%s", err);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode bm.t4t"), 0);
	cr_assert(strstr(out, "renamed           1 bookmark packet naming an ID otherwise than its"
			      " first (one ID per name): the first name holds"), "%s", out);
	cr_assert_null(strstr(out, "gamma"), "%s", out);
	cr_assert_null(strstr(out, "PARTIAL"), "no count is lost: %s", out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "info --json bm.t4t"), 0);
	cr_assert_eq(json_num(out, "bookmarks_renamed"), 1, "%s", out);
	cr_assert_null(strstr(out, "gamma"), "%s", out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "info bm.t4t"), 0);
	cr_assert(strstr(out, "  renamed          1 bookmark packets"), "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* The mirror case: IDs 1 and 3 both named "alpha" (ID 2 "beta" between):
 * a name keeps its first ID (FORMAT.md 4.4: one ID per name), so ID 3's
 * phase is alpha#2, ID 1's second occurrence, in every output, its counts
 * in alpha's totals (one row, "alpha (all 2)"), never a second "alpha#1";
 * counted and said like a renamed ID (summary, info, report, a warning). */
Test(decode_contradict, a_name_given_to_two_bookmark_ids_keeps_its_first_id, .timeout = 120)
{
	char *dir = cli_tmpdir("t4contra"), err[8192];
	static char out[1 << 20];

	bookmark_log(dir, "re.t4t", (const uint32_t[]){ 1, 2, 3 },
		     (const char *const[]){ "alpha", "beta", "alpha" });
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode re.t4t -f phases"), 0);
	cr_assert(strstr(out, "\nalpha,1,") && strstr(out, "\nbeta,1,") && strstr(out, "\nalpha,2,"),
		  "%s", out);
	cr_assert_eq(count_lines(out), 5, "a header and 4 phases: %s", out);
	cr_assert(strstr(err, "bookmark ID 3 is named 'alpha', as ID 1 is: a name keeps its first"
			      " ID (one ID per name: FORMAT.md 4.4), and its phases are ID 1's"),
		  "%s", err);
	cr_assert_eq(count_lines(err), 1, "said once: %s", err);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode re.t4t -f csv"), 0);
	cr_assert_eq(csv_sum(out, "a"), 5 * (TRIGGERS - 1), "%s", out);
	cr_assert(strstr(out, ",alpha,d1,soft,a,5,bytes,counter,2\n"), "%s", out);
	uint64_t alpha = csv_sum(out, "alpha,d1,soft,a"); /* (rows: ...,bookmark,domain,...) */
	cr_assert(alpha > 5 * (20 + 38) && alpha < 5 * (20 + 41), "%" PRIu64, alpha);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err),
			"decode re.t4t -f csv --phase alpha"), 0, "%s", err);
	cr_assert_eq(csv_sum(out, "a"), alpha, "both IDs' phases: %s", out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode re.t4t"), 0);
	cr_assert(strstr(out, "\n  reused            1 bookmark packet naming an ID as an earlier ID"
			      " was named (one ID per name): the first ID holds, the phases of both"
			      " are its own\n"), "%s", out);
	const char *first = strstr(out, "\n  alpha#1 "); /* the phase table's row alone */
	cr_assert(first && !strstr(first + 10, " alpha#1 ") && strstr(out, "\n  alpha#2 "), "%s",
		  out);
	cr_assert(strstr(out, " alpha (all 2) d1 ") && strstr(out, " bytes alpha (all 2) "), "%s",
		  out);
	cr_assert_null(strstr(out, "PARTIAL"), "no count is lost: %s", out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode -v re.t4t"), 0);
	cr_assert(strstr(out, " alpha#1 ") && strstr(out, " alpha#2 "), "%s", out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "info --json re.t4t"), 0);
	cr_assert_eq(json_num(out, "bookmarks_reused"), 1, "%s", out);
	cr_assert_eq(json_num(out, "phases_of"), 1, "%s", out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "info re.t4t"), 0);
	cr_assert(strstr(out, "\n  reused           1 bookmark packets naming an ID as an earlier"), "%s",
		  out);
	cr_assert(strstr(out, "(named as ID 1: its phases are ID 1's)"), "%s", out);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err),
			"report re.t4t && grep -c 'id=\"t4-h-reused\" class=\"warn\"><b>1</b>' re.html"),
		     0, "%s", err);
	t4_rmtree(dir);
	free(dir);
}

/* A hostile log: 3000 domains, every other one's event described again
 * under a name that is no text (an escape sequence, a line break, bytes
 * that are not UTF-8), a bookmark ID named again likewise. Each
 * contradiction is said once, on one line with no control character; the
 * summary counts 1500 domains; every output and info stay valid text. */
Test(decode_contradict, contradictions_in_thousands_of_domains_and_names_that_are_no_text,
     .timeout = 300)
{
	char *dir = cli_tmpdir("t4contra"), path[PATH_MAX + 16], err[8192];
	static char out[1 << 20];
	static const char hostile[] = "\x1b[2J\xff\n\x07x";
	struct t4_packet again = event_pkt(0, 0, hostile, "bytes");
	struct lw w;

	snprintf(path, sizeof(path), "%s/many.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	for (uint32_t id = 1; id <= 3000; id++) {
		domain(&w, id);
		event(&w, id, 0, "a", "bytes");
	}
	for (uint64_t k = 0; k < 20; k++) {
		uint64_t ns = 1000000000ull + k * 1000000;
		if (k == 5 || k == 12)
			bookmark(&w, 1, k == 5 ? "ok" : hostile, k, ns - 500000);
		ref(&w, k, ns, k >= 5);
		for (uint32_t id = 1; id <= 3000; id++)
			ret(&w, id, k, ns, k ? 5 : 0);
		for (uint32_t id = 2; k == 10 && id <= 3000; id += 2) {
			again.event.domain_id = id;
			lw_put(&w, &again);
		}
	}
	lw_close(&w);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode many.t4t -f csv -o m.csv"),
		     0, "%s", err);
	cr_assert_eq(count_lines(err), 3, "one line each (and 'wrote'): %s", err);
	cr_assert(strstr(err, "domain d2 (ID 2): its event 0 describes it again, otherwise"), "%s",
		  err);
	cr_assert(strstr(err, "bookmark ID 1 is named '"), "%s", err);
	cr_assert_eq(t4(dir, out, sizeof(out), err, sizeof(err), "decode many.t4t -v"), 0);
	cr_assert(strstr(out, "re-described      1500 domains described again, otherwise (d2 and"
			      " others): the first description holds; 13500 return packets after it"
			      " not decoded"), "%s", out);
	snprintf(path, sizeof(path),
		 "cd '%s' && B='%s' && \"$B\" decode many.t4t -f jsonl -o m.jsonl 2> e1 && "
		 "\"$B\" decode many.t4t > sum.txt 2> e2 && \"$B\" info many.t4t > info.txt && "
		 "\"$B\" info --json many.t4t > info.json && \"$B\" decode many.t4t -f phases"
		 " > p.csv 2> e3 && python3 - <<'EOF'\n"
		 "import csv, json\n"
		 "recs = [json.loads(l) for l in open('m.jsonl', 'rb').read().decode('utf-8').splitlines()]\n"
		 "assert all(list(r['counts']) == ['a'] for r in recs if r['type'] == 'interval')\n"
		 "j = json.load(open('info.json', 'rb'))\n"
		 "assert j['redescribed'] == 1500 and j['bookmarks_renamed'] == 1, j['redescribed']\n"
		 "assert {b['name'] for b in j['bookmarks']} == {'ok'}\n"
		 "assert [r[0] for r in csv.reader(open('p.csv', encoding='utf-8'))][1:] == ['', 'ok']\n"
		 CLI_PY_CLEAN "clean('sum.txt', 'info.txt', 'e1', 'e2', 'e3')\n"
		 "print('clean')\n"
		 "EOF\n",
		 dir, cli_bin());
	cr_assert_eq(cli_run(out, sizeof(out), "%s 2>&1", path), 0, "%s", out);
	t4_rmtree(dir);
	free(dir);
}
