/* test_agree_edges.c - one truth on the logs no recorder makes on
 * purpose: a gauge next to a counter, a domain that never answers, one
 * answer per domain, a clock that stands still, a counter that went
 * backwards or was multiplexed. Each log is crafted packet by packet
 * (craft_log.h), then read by the built binary (T4_BIN); what one output says of a number, the others say too
 * (or, where it has no meaning, none says it).
 */
#include "cli_testutil.h"

#include "craft_log.h"
#include "packets/packets.h"
#include "util/util.h"

#include <inttypes.h>
#include <math.h>

/* Run "$B ARGS" in dir, its output and errors in out; the exit status. */
static int run(const char *dir, char *out, size_t cap, const char *args)
{
	cli_bin();
	return cli_exec(&(struct cli_io){ .dir = dir, .out = out, .cap = cap, .merge_err = true },
			"\"$B\" %s", args);
}

/* `t410trace ARGS` in dir exits 0 and says each of the NULL-ended lines. */
static void run_says(const char *dir, const char *args, const char *const *lines)
{
	static char out[1 << 16];

	cr_assert_eq(run(dir, out, sizeof(out), args), 0, "%s: %s", args, out);
	for (; *lines; lines++)
		cr_assert_not_null(strstr(out, *lines), "%s: no '%s' in %s", args, *lines, out);
}

static void event(struct lw *w, uint32_t domain, const char *name, uint32_t flags)
{
	struct t4_packet p = { .type = T4_PKT_EVENT };

	p.event.domain_id = domain;
	p.event.flags = flags;
	p.event.scale = 1.0;
	snprintf(p.event.pmu, sizeof(p.event.pmu), "software");
	snprintf(p.event.name, sizeof(p.event.name), "%s", name);
	lw_put(w, &p);
}

/* A new log dir/name, its session at 1 ms and domain 1 counting "ops". */
static void log_start(struct lw *w, const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	lw_open(w, path);
	session(w, 1000000);
	domain(w, 1);
	event(w, 1, "ops", 0);
}

/* Domain 1 counts 1000 a trigger; domain 2 is a gauge at level 100 + k;
 * domain 3 never answers. 10 triggers 1 ms apart. */
static char *edge_log(void)
{
	char *dir = cli_tmpdir("t4edges");
	struct lw w;

	log_start(&w, dir, "e.t4t");
	domain(&w, 2);
	event(&w, 2, "level", T4_EV_GAUGE);
	domain(&w, 3);
	event(&w, 3, "silent", 0);
	for (uint64_t k = 0; k < 10; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		ref(&w, k, t, 0);
		ret(&w, 1, k, t, k ? 1000 : 0);
		ret(&w, 2, k, t, 100 + k);
	}
	lw_close(&w);
	return dir;
}

/* A gauge is a level: info gives its last level as its total, and no
 * rate per second (as record's closing table gives none); the summary
 * gives its mean level as TOTAL and no rate either. */
Test(agree_edges, a_gauge_has_no_rate_per_second, .timeout = 60)
{
	char *dir = edge_log(), out[16384];

	cr_assert_eq(run(dir, out, sizeof(out),
			 "info --json e.t4t | python3 -c 'import json, sys\n"
			 "d = {x[\"id\"]: x for x in json.load(sys.stdin)[\"domains\"]}\n"
			 "ops, lvl = d[1][\"events\"][0], d[2][\"events\"][0]\n"
			 "assert (ops[\"total\"], round(ops[\"rate_per_s\"])) == (9000, 1000000), ops\n"
			 "assert (lvl[\"total\"], lvl[\"rate_per_s\"]) == (109, None), lvl'"),
		     0, "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info e.t4t | grep -E ' (ops|level) '"), 0, "%s",
		     out);
	cr_assert(strstr(out, " 9000 ") && strstr(out, "1000000.000\n"), "%s", out);
	cr_assert_not_null(strstr(out, " 109                      -\n"), "%s", out);
	/* the summary: its mean level (101..109 over 9 equal intervals) as
	 * TOTAL, said so, and no rate per second */
	cr_assert_eq(run(dir, out, sizeof(out), "decode e.t4t | grep -E ' (ops|level) '"), 0, "%s",
		     out);
	cr_assert_not_null(strstr(out, " level mean level (all phases) 105.0       -\n"), "%s", out);
	cr_assert_not_null(strstr(out, " ops   -          (all phases)  9000 1000000\n"), "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* A domain the log describes that never answered: info counts its
 * scheduler's 10 triggers as unanswered, and the summary and the report
 * say so rather than "every domain answered every trigger"; a filter
 * that leaves it out leaves it out of what is missing too. */
Test(agree_edges, a_domain_that_never_answered_is_missing_everywhere, .timeout = 60)
{
	char *dir = edge_log(), out[16384];

	cr_assert_eq(run(dir, out, sizeof(out), "info e.t4t | grep -E '^ +3 +d3 '"), 0, "%s", out);
	cr_assert_not_null(strstr(out, " 0       10\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode e.t4t"), 0, "%s", out);
	cr_assert_null(strstr(out, "every domain answered"), "%s", out);
	cr_assert_not_null(strstr(out, "\n  never answered    d3 (none of its scheduler's 10 "
				       "triggers: no counts)\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode e.t4t --pmu 'd[12]'"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "MISSING     nothing: every domain answered"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "report e.t4t && grep -c 'id=\"t4-h-silent\" "
			 "class=\"warn\"><b>1</b> domains that never answered' e.html"), 0, "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* A log whose domains answered one trigger each (a recording killed at
 * its start): no interval, and no filter to blame for it. */
Test(agree_edges, one_answer_each_is_no_interval_and_no_filter, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges"), out[16384];
	struct lw w;

	log_start(&w, dir, "one.t4t");
	ref(&w, 0, 1000000000ull, 0);
	ret(&w, 1, 0, 1000000000ull, 0);
	lw_close(&w);
	cr_assert_eq(run(dir, out, sizeof(out), "decode one.t4t"), 0, "%s", out);
	cr_assert_null(strstr(out, "filters"), "%s", out);
	cr_assert_not_null(strstr(out, "\n  no intervals: each domain's returns start its timeline"
				       " and end none (an interval needs two)\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode one.t4t --pmu d1"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  no intervals: the log holds no return packets that pass"
				       " the filters\n"), "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* Domains 1 and 2 counting 1000 a trigger, 20 triggers 1 ms apart; domain
 * 2 answers triggers 0..`upto` only (it stops answering, the references
 * go on); `twice`: every return of domain 2 is in the log twice,
 * `refs`: each reference packet is there that many times, but those of
 * triggers 3 and 4 none when `lost`. */
static void stop_log(const char *dir, const char *name, uint64_t upto, bool twice, int refs,
		     bool lost)
{
	struct lw w;

	log_start(&w, dir, name);
	domain(&w, 2);
	event(&w, 2, "ops", 0);
	for (uint64_t k = 0; k < 20; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		for (int c = 0; c < refs && !(lost && (k == 3 || k == 4)); c++)
			ref(&w, k, t, 0);
		ret(&w, 1, k, t, k ? 1000 : 0);
		for (int c = 0; k <= upto && c <= twice; c++)
			ret(&w, 2, k, t, k ? 1000 : 0);
	}
	lw_close(&w);
}

/* Domain 2's line of `info` (its UNANSWERED column last) into out. */
static void info_line(const char *dir, const char *log, char *out, size_t cap)
{
	char args[256];

	snprintf(args, sizeof(args), "info %s | grep -E '^ +2 +d2 '", log);
	cr_assert_eq(run(dir, out, cap, args), 0, "%s", out);
}

/* A domain that stops answering before the end of the log: info counts
 * the 12 triggers after its last answer, and the summary and the report
 * say which domain stopped, where, and how many went unanswered after
 * it, the same 12, rather than "every domain answered every trigger". */
Test(agree_edges, a_domain_that_stops_answering_is_said_alike, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges"), out[16384];

	stop_log(dir, "s.t4t", 7, false, 1, false);
	info_line(dir, "s.t4t", out, sizeof(out));
	cr_assert_not_null(strstr(out, " 8       12\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode s.t4t"), 0, "%s", out);
	cr_assert_null(strstr(out, "every domain answered"), "%s", out);
	cr_assert_not_null(strstr(out, "\n  stopped answering d2 after trigger 7 (0.007 s): 12"
				       " triggers after it unanswered\n"), "%s", out);
	cr_assert_not_null(strstr(out, "    d2                           unanswered 12,"), "%s",
			   out);
	cr_assert_eq(run(dir, out, sizeof(out), "report s.t4t && grep -o 'id=\"t4-h-[a-z]*\" "
			 "class=\"warn\"><b>[0-9]*</b>[^<]*' s.html && grep -c 'stopped answering"
			 " <small>d2 after trigger 7 (0.007 s): 12 triggers after it unanswered"
			 "</small>' s.html"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "t4-h-unanswered\" class=\"warn\"><b>12</b> unanswered"
				       " triggers "), "%s", out);
	cr_assert_not_null(strstr(out, "t4-h-stopped\" class=\"warn\"><b>1</b> domains that"
				       " stopped answering "), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info s.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  stopped          1 domain: d2 after trigger 7, 12 triggers"
				       " after it unanswered\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode s.t4t -j 2"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "d2 after trigger 7 (0.007 s): 12 triggers"), "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* A domain that misses only the last trigger: one trigger after its last
 * answer, said in the singular by info as by the summary (info said "1
 * triggers"). */
Test(agree_edges, one_trigger_after_a_stop_is_said_alike, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges"), out[16384];

	stop_log(dir, "s.t4t", 18, false, 1, false);
	cr_assert_eq(run(dir, out, sizeof(out), "decode s.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  stopped answering d2 after trigger 18 (0.018 s): 1"
				       " trigger after it unanswered\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info s.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  stopped          1 domain: d2 after trigger 18, 1 trigger"
				       " after it unanswered\n"), "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* info's tables pad a name by terminal columns, not bytes: an event named
 * "lé日本" (9 bytes, 6 columns) left its row's TOTAL and PER SECOND 3
 * columns left of the other rows'; the domain and bookmark tables the
 * same. */
Test(agree_edges, info_keeps_names_that_are_not_ascii_in_line, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges"), out[16384];
	struct lw w;

	log_start(&w, dir, "u.t4t");
	domain(&w, 2);
	event(&w, 2, "l\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac", 0);
	for (uint64_t k = 0; k < 10; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		ref(&w, k, t, 0);
		ret(&w, 1, k, t, k ? 1000 : 0);
		ret(&w, 2, k, t, k ? 1000 : 0);
	}
	lw_close(&w);
	cr_assert_eq(run(dir, out, sizeof(out), "info u.t4t > i.txt && python3 -c \""
			 "import unicodedata as u\n"
			 "c = lambda s: sum(1 + (u.east_asian_width(x) in 'WF') for x in s)\n"
			 "rows = [l for l in open('i.txt') if ' 9000 ' in l]\n"
			 "assert len(rows) == 2 and c(rows[0]) == c(rows[1]), rows\n"
			 "print('aligned')\""), 0, "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* The same log with every return of domain 2 (or every reference packet)
 * written twice: a copy neither hides an unanswered trigger nor invents
 * one (12 still), and info, the summary and the report count the same
 * duplicates; nor does a trigger whose reference packet is lost hide
 * one. */
Test(agree_edges, duplicates_neither_hide_nor_invent_unanswered_triggers, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges"), out[16384];

	stop_log(dir, "r.t4t", 7, true, 1, false);
	stop_log(dir, "f.t4t", 7, false, 2, false);
	stop_log(dir, "m.t4t", 7, false, 1, true);
	info_line(dir, "r.t4t", out, sizeof(out));
	cr_assert_not_null(strstr(out, " 16       12\n"), "%s", out);
	info_line(dir, "f.t4t", out, sizeof(out));
	cr_assert_not_null(strstr(out, " 8       12\n"), "%s", out);
	info_line(dir, "m.t4t", out, sizeof(out));
	cr_assert_not_null(strstr(out, " 8       12\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info f.t4t | grep -E '^ +1 +d1 '"), 0, "%s", out);
	cr_assert_not_null(strstr(out, " 20        0\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info --json r.t4t | python3 -c 'import json, sys\n"
			 "d = {x[\"id\"]: x for x in json.load(sys.stdin)[\"domains\"]}\n"
			 "assert (d[2][\"unanswered\"], d[2][\"duplicates\"]) == (12, 8), d[2]\n"
			 "assert (d[1][\"unanswered\"], d[1][\"duplicates\"]) == (0, 0), d[1]'"),
		     0, "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info r.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  duplicates       8 reference and return packets of a"
				       " trigger seen already"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode r.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "    d2                           unanswered 12, duplicates 8,"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "d2 after trigger 7 (0.007 s): 12 triggers"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode m.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "    d2                           unanswered 12,"), "%s", out);
	cr_assert_not_null(strstr(out, "\n  no reference      2 triggers without"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode f.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "    d2                           unanswered 12,"), "%s", out);
	cr_assert_null(strstr(out, "    d1 "), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "report r.t4t && grep -o 'id=\"t4-h-[a-z]*\" "
			 "class=\"warn\"><b>[0-9]*</b>[^<]*' r.html"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "t4-h-unanswered\" class=\"warn\"><b>12</b>"), "%s", out);
	cr_assert_not_null(strstr(out, "t4-h-duplicates\" class=\"warn\"><b>8</b>"), "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* How many lines of text hold needle. */
static int lines_with(const char *text, const char *needle)
{
	int n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *end = strchr(l, '\n'), *at = strstr(l, needle);
		n += at && (!end || at < end);
	}
	return n;
}

/* Domain 1 counting, 10 triggers with no bookmark, then 10 for each
 * bookmark of `names` (one a letter, ID its code: "aba" is a, b, then a
 * again). */
static void phase_log(const char *dir, const char *name, const char *names)
{
	struct lw w;
	uint32_t id = 0;

	log_start(&w, dir, name);
	for (uint64_t k = 0; k < 10 * (strlen(names) + 1); k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		size_t at = k / 10;
		if (k % 10 == 0 && at) {
			char nm[2] = { names[at - 1], 0 };
			bookmark(&w, id = (uint32_t)names[at - 1], nm, k, t - 500000);
		}
		ref(&w, k, t, id);
		ret(&w, 1, k, t, k ? 1000 : 0);
	}
	lw_close(&w);
}

/* Each phase once: the EVENTS table and the kind table show each phase's
 * row once, with -v too (before, -v gave a#1's row twice: once as the
 * occurrence, once as the name); a recurring name: its every occurrence
 * under -v, its name's row, and the names that occur once, with or
 * without -v, in the summary's tables and the report's alike. */
/* A row label and how many lines of the summary hold it, without and with
 * -v (PHASES, the kind table and EVENTS: 3 for a row in each). */
struct rows {
	const char *label;
	int plain, verbose;
};

static void rows_each(const char *dir, const char *log, const struct rows *r, size_t n)
{
	static char out[1 << 16];
	char args[128];

	for (int v = 0; v < 2; v++) {
		snprintf(args, sizeof(args), "decode %s%s", v ? "-v " : "", log);
		cr_assert_eq(run(dir, out, sizeof(out), args), 0, "%s", out);
		for (size_t i = 0; i < n; i++)
			cr_assert_eq(lines_with(out, r[i].label), v ? r[i].verbose : r[i].plain,
				     "%s: '%s': %s", args, r[i].label, out);
	}
}

Test(agree_edges, a_phase_row_is_shown_once_in_every_table, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");
	static char out[1 << 16];
	static const struct rows once[] = {
		{ " (none)#1 ", 3, 3 }, { " a#1 ", 3, 3 }, { " b#1 ", 3, 3 },
		{ "-v: every occurrence", 0, 0 }, { "-v: per occurrence", 0, 0 },
	};
	/* a#2 in PHASES, and under -v in the two others, next to "a (all 2)" */
	static const struct rows twice[] = {
		{ " (none)#1 ", 3, 3 }, { " b#1 ", 3, 3 }, { " a (all 2) ", 2, 2 },
		{ " a#1 ", 1, 3 }, { " a#2 ", 1, 3 },
	};

	phase_log(dir, "once.t4t", "ab");
	rows_each(dir, "once.t4t", once, T4_ARRAY_LEN(once));
	phase_log(dir, "twice.t4t", "aba");
	rows_each(dir, "twice.t4t", twice, T4_ARRAY_LEN(twice));
	cr_assert_eq(run(dir, out, sizeof(out), "report twice.t4t && grep -o '<td>[ab(][^<]*</td><td>d1<'"
			 " twice.html"), 0, "%s", out);
	cr_assert_str_eq(strchr(out, '\n') + 1, "<td>(none)#1</td><td>d1<\n<td>a (all 2)</td><td>d1<\n"
			 "<td>b#1</td><td>d1<\n", "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* The rate (the last column) of the summary's EVENTS row of event "ops"
 * in phase `label`. */
static long long events_rate(const char *out, const char *label)
{
	char want[128];

	snprintf(want, sizeof(want), "\n  software ops   -    %s ", label);
	const char *at = strstr(out, want);
	cr_assert_not_null(at, "no EVENTS row '%s':\n%s", want + 1, out);
	const char *nl = strchr(at + 1, '\n'), *sp = nl ? nl : at + strlen(at);
	while (sp > at && sp[-1] != ' ')
		sp--;
	return atoll(sp);
}

/* A filter that keeps the phase a, which occurs twice with b between:
 * the rate over the whole decode, "(all phases)" in EVENTS, is over the
 * time the totals cover (a's 20 ms, about 1,000,000 /s, as a's own row
 * says), not over the span from a's first interval to its last, b's
 * 10 ms included (661,017 /s before); without the filter too. */
Test(agree_edges, the_whole_decodes_rate_is_over_the_time_its_totals_cover, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");
	static char out[1 << 16];

	phase_log(dir, "twice.t4t", "aba");
	cr_assert_eq(run(dir, out, sizeof(out), "decode --phase a twice.t4t"), 0, "%s", out);
	long long a = events_rate(out, "a (all 2)   ");
	cr_assert(a > 999000 && a < 1001000, "%lld: %s", a, out);
	cr_assert_eq(events_rate(out, "(all phases)"), a, "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode twice.t4t"), 0, "%s", out);
	a = events_rate(out, "(all phases)");
	cr_assert(a > 999000 && a < 1001000, "%lld: %s", a, out);
	t4_rmtree(dir);
	free(dir);
}

/* A window that cuts a phase: its row (the summary's PHASES, -f phases,
 * JSONL's phase record) is cut to the window, and so is its count of
 * triggers, those of the cut's grid points (a: 10 triggers from 9.5 ms;
 * --from 15ms keeps 15.0-19.5 ms, triggers 16 to 19). Before, the row
 * said 4.5 ms and the whole phase's 10 triggers. */
Test(agree_edges, a_phase_cut_by_the_window_counts_the_triggers_it_shows, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");
	static char out[1 << 16];

	phase_log(dir, "ab.t4t", "ab");
	cr_assert_eq(run(dir, out, sizeof(out), "decode -f phases --time rel ab.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\na,1,9500000,19500000,10000000,10,exact\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode -f phases --time rel --from 15ms ab.t4t"),
		     0, "%s", out);
	cr_assert_not_null(strstr(out, "\na,1,15001500,19500000,4498500,4,exact\n"), "%s", out);
	cr_assert_not_null(strstr(out, "\nb,1,19500000,"), "%s", out);
	cr_assert_not_null(strstr(out, ",10,exact\n"), "b keeps its 10: %s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode -f jsonl --time rel --from 15ms --to 17ms "
			 "ab.t4t | grep '\"phase\"'"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\"duration_ns\": 2000000, \"triggers\": 2,"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode --from 15ms ab.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  a#1              0.015 0.019    0.004        4\n"), "%s",
			   out);
	t4_rmtree(dir);
	free(dir);
}

/* One truth for a phase's duration: each row of the summary's PHASES
 * (text, out) says the duration_ns of -f phases (csv) to its 3 decimals,
 * and a duration above 0 that rounds to 0.000 says "<0.001". */
static void durations_agree(const char *out, const char *csv)
{
	const char *s = strstr(out, "\nPHASES"), *c = strchr(csv, '\n');
	char label[64], dur[32];
	unsigned occ;
	uint64_t a, b, d;
	int rows = 0;

	cr_assert_not_null(s, "%s", out);
	s = strstr(s, "PHASE#OCCURRENCE"); /* past the heads and their units */
	s = s && (s = strchr(s, '\n')) ? strchr(s + 1, '\n') : NULL;
	for (; s && c && sscanf(s, " %63s %*s %*s %31s", label, dur) == 2 &&
				   strchr(label, '#');
	     s = strstr(s + 1, "\n  "), c = strchr(c + 1, '\n'), rows++) {
		const char *f = strchr(c, ','); /* after the name, "" for (none) */
		cr_assert(f && sscanf(f, ",%u,%" SCNu64 ",%" SCNu64 ",%" SCNu64, &occ, &a, &b, &d) == 4,
			  "%s", c);
		if (!strcmp(dur, "<0.001"))
			cr_assert(d > 0 && d < 500000, "%s: <0.001 for %" PRIu64 " ns", label, d);
		else
			cr_assert(fabs(atof(dur) - (double)d / 1e9) <= 0.0005 + 1e-12,
				  "%s: %s s for %" PRIu64 " ns", label, dur, d);
	}
	cr_assert_gt(rows, 0, "%s", out);
}

/* A phase of 0.4 ms (b, between two bookmarks set 0.4 ms apart) said
 * 0.000 s in the summary, as if it had no duration, while -f phases,
 * CSV and JSONL said 400000 ns: it says "<0.001" now (a too, 0.1 ms),
 * the columns still in line. */
Test(agree_edges, a_phase_under_a_millisecond_is_not_said_to_last_0, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");
	static char out[1 << 16], csv[1 << 16];
	struct lw w;

	log_start(&w, dir, "short.t4t");
	for (uint64_t k = 0; k < 10; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		if (k == 5) {
			bookmark(&w, 1, "a", k, t - 600000);
			bookmark(&w, 2, "b", k, t - 500000);
			bookmark(&w, 3, "c", k, t - 100000);
			bookmark(&w, 4, "d", k, t - 100000);
		}
		ref(&w, k, t, k < 5 ? 0 : 4);
		ret(&w, 1, k, t, k ? 1000 : 0);
	}
	lw_close(&w);
	cr_assert_eq(run(dir, csv, sizeof(csv), "decode -f phases short.t4t"), 0, "%s", csv);
	cr_assert_not_null(strstr(csv, "\nb,1,1004500000,1004900000,400000,"), "%s", csv);
	cr_assert_eq(run(dir, out, sizeof(out), "decode short.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  a#1              0.004 0.004   <0.001        0\n"
				       "  b#1              0.004 0.005   <0.001        0\n"
				       "  d#1              0.005 0.009    0.004        5\n"), "%s", out);
	durations_agree(out, csv);
	/* and on phases of whole milliseconds */
	phase_log(dir, "ab.t4t", "ab");
	cr_assert_eq(run(dir, csv, sizeof(csv), "decode -f phases ab.t4t"), 0, "%s", csv);
	cr_assert_eq(run(dir, out, sizeof(out), "decode ab.t4t"), 0, "%s", out);
	durations_agree(out, csv);
	t4_rmtree(dir);
	free(dir);
}

/* Triggers 100..119; bookmark "pre" said to come from trigger 3 (before
 * the log's first), "mid" from trigger 110, "post" from trigger 125 (after
 * its last): each phase counts the log's triggers it holds, 10 and 10, as
 * info counts 20 in all (before: pre 107, mid 15). */
Test(agree_edges, a_phases_triggers_are_the_logs, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges"), path[PATH_MAX];
	static char out[1 << 16];
	struct lw w;

	snprintf(path, sizeof(path), "%s/b.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	domain(&w, 1);
	for (uint64_t i = 0; i < 20; i++) {
		uint64_t t = 1000000000ull + i * 1000000;
		if (i == 0)
			bookmark(&w, 1, "pre", 3, t - 500000);
		if (i == 10)
			bookmark(&w, 2, "mid", 100 + i, t - 500000);
		ref(&w, 100 + i, t, i < 10 ? 1 : 2);
		ret_with(&w, 1, 100 + i, t, 0, i ? 0 : T4_RET_FIRST, i ? 1000 : 0);
	}
	bookmark(&w, 3, "post", 125, 1000000000ull + 25 * 1000000);
	lw_close(&w);
	cr_assert_eq(run(dir, out, sizeof(out), "info b.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  triggers         20 (IDs 100..119, contiguous)\n"), "%s",
			   out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode -f phases b.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\npre,1,1000001500,1009500000,9498500,10,exact\n"
				       "mid,1,1009500000,1019001500,9501500,10,exact\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode b.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  pre#1            0.000 0.009    0.009       10\n"
				       "  mid#1            0.009 0.019    0.010       10\n"), "%s", out);
	cr_assert_not_null(strstr(out, "\nMISSING     nothing: "), "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* A window from the first trigger on (--from 0, or to the last trigger)
 * cuts no phase: each row counts the triggers it counts without it (the
 * first phase, which starts before the log's first interval, said 9 of
 * its 10 under --from 0). */
Test(agree_edges, a_window_over_the_whole_log_cuts_no_phase, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");
	static char out[1 << 16], whole[1 << 16];
	static const char *const windows[] = { "--from 0", "--to 29ms", "--from 0 --to 1h" };

	phase_log(dir, "ab.t4t", "ab");
	cr_assert_eq(run(dir, whole, sizeof(whole), "decode -f phases --time rel ab.t4t"), 0, "%s",
		     whole);
	cr_assert_not_null(strstr(whole, "\n,1,1500,9500000,9498500,10,exact\n"), "%s", whole);
	for (size_t i = 0; i < T4_ARRAY_LEN(windows); i++) {
		char args[128];
		snprintf(args, sizeof(args), "decode -f phases --time rel %s ab.t4t", windows[i]);
		cr_assert_eq(run(dir, out, sizeof(out), args), 0, "%s", out);
		cr_assert_str_eq(out, whole, "%s", args);
	}
	cr_assert_eq(run(dir, out, sizeof(out), "decode --from 0 ab.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  (none)#1         0.000 0.009    0.009       10\n"), "%s",
			   out);
	t4_rmtree(dir);
	free(dir);
}

/* 10 triggers 1 ms apart, domain 1 counting 1000 a trigger; the returns
 * of triggers first..last carry flag (BACKWARDS: with counts 0, as the
 * recorder writes them; else 1000). */
static void flagged_log(const char *dir, const char *name, uint32_t flag, uint64_t first,
			uint64_t last)
{
	struct lw w;

	log_start(&w, dir, name);
	for (uint64_t k = 0; k < 10; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		bool flagged = k >= first && k <= last;
		ref(&w, k, t, 0);
		ret_with(&w, 1, k, t, 0, !k ? T4_RET_FIRST : flagged ? flag : 0,
			 !k || (flagged && flag == T4_RET_BACKWARDS) ? 0 : 1000);
	}
	lw_close(&w);
}

/* A counter that went backwards at trigger 5 (the recorder writes its
 * delta 0, flagged BACKWARDS): its counts are lost, which info, the
 * summary and the report say alike, the totals partial (before: "MISSING
 * nothing", a total 1000 short and nothing said). */
Test(agree_edges, a_counter_that_went_backwards_is_said_alike, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");
	static char out[1 << 16];

	flagged_log(dir, "back.t4t", T4_RET_BACKWARDS, 5, 5);
	cr_assert_eq(run(dir, out, sizeof(out), "info back.t4t"), 0, "%s", out);
	/* one packet: singular, as the summary says it */
	cr_assert_not_null(strstr(out, "\n  backwards        1 return packet with a counter that"
				       " went backwards (its delta 0: those counts are lost)\n"),
			   "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info --json back.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\"backwards_rets\": 1,"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode back.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  backwards         1 return packet with a counter that"
				       " went backwards (its delta 0: those counts are lost)\n"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "\n  TOTALS ARE PARTIAL: "), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "report back.t4t && grep -o 'id=\"t4-h-[a-z]*\" "
			 "class=\"warn\"><b>[^<]*</b>' back.html"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "t4-h-backwards\" class=\"warn\"><b>1</b>"), "%s", out);
	cr_assert_not_null(strstr(out, "t4-h-partial\" class=\"warn\"><b>TOTALS ARE PARTIAL</b>"),
			   "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* Counters multiplexed at triggers 3 and 4 (flag MULTIPLEXED: they ran
 * part of the time; the decoder does not scale them): info, the summary
 * and the report say how many returns, alike, the totals not partial
 * (before: "MISSING nothing" and nothing said anywhere). */
Test(agree_edges, a_multiplexed_counter_is_said_alike, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");
	static char out[1 << 16];

	flagged_log(dir, "mux.t4t", T4_RET_MULTIPLEXED, 3, 4);
	cr_assert_eq(run(dir, out, sizeof(out), "info mux.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  multiplexed      2 return packets whose counters ran part"
				       " of the time (time running < enabled): counts as counted,"
				       " not scaled\n"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "info --json mux.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\"multiplexed_rets\": 2,"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "decode mux.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  multiplexed       2 return packets whose counters ran part"
				       " of the time (time running < enabled): counts as counted,"
				       " not scaled\n"), "%s", out);
	cr_assert_null(strstr(out, "PARTIAL"), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "report mux.t4t > /dev/null 2>&1 && grep -o "
			 "'id=\"t4-h-multiplexed\" class=\"warn\"><b>[^<]*</b>' mux.html"), 0, "%s",
		     out);
	cr_assert_str_eq(out, "id=\"t4-h-multiplexed\" class=\"warn\"><b>2</b>\n", "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* Domain 1 clocked at 999,999,999.7 Hz (nominal 1 GHz: a drift of -0.0003
 * ppm) over 10,000 triggers of 1 ms: the tables say a drift of 0.000 ppm,
 * in the summary and the report alike (they said -0.000). */
Test(agree_edges, a_drift_that_rounds_to_zero_has_no_sign, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges"), path[PATH_MAX];
	static char out[1 << 16];
	uint64_t prev = 0;
	struct lw w;

	snprintf(path, sizeof(path), "%s/z.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	clocked_domain(&w, 1, 1000000000);
	event(&w, 1, "cycles", 0);
	for (uint64_t k = 0; k < 10000; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		uint64_t x = 1000000000ull + (uint64_t)((unsigned __int128)(t + 1500 - 1000000000ull) *
							9999999997ull / 10000000000ull);
		ret_with(&w, 1, k, t, x, k ? 0 : T4_RET_FIRST, k ? x - prev : 0);
		ref(&w, k, t, 0);
		prev = x;
	}
	lw_close(&w);
	cr_assert_eq(run(dir, out, sizeof(out), "decode -v z.t4t | grep -A3 '^CLOCK DOMAINS'"), 0,
		     "%s", out);
	cr_assert_not_null(strstr(out, "\n  c1     rate   1000.0  1000.0    1000 0.000 "), "%s", out);
	cr_assert_eq(run(dir, out, sizeof(out), "report z.t4t > /dev/null 2>&1 && grep -o '<td>c1</td>"
			 "<td>rate</td><td></td>\\(<td class=\"num\">[^<]*</td>\\)\\{4\\}' z.html"),
		     0, "%s", out);
	cr_assert_str_eq(out, "<td>c1</td><td>rate</td><td></td><td class=\"num\">1000.0</td><td"
			 " class=\"num\">1000.0</td><td class=\"num\">1000</td><td class=\"num\">"
			 "0.000</td>\n", "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* A hostile log: 3000 domains named with what is no text (an escape
 * sequence, a byte that is not UTF-8, a line break, a comma, a quote);
 * the even ones stop answering after trigger ID % 10, the odd ones answer
 * twice; bookmark ID 2's name is given again to IDs 3..1002 (and to ID 0,
 * which is no bookmark). Every output stays text, says each count once
 * (the stopped domains: 16 lines and how many more), and info, the
 * summary and the report agree on the numbers. */
Test(agree_edges, thousands_of_stops_copies_and_reused_names_that_are_no_text, .timeout = 300)
{
	char *dir = cli_tmpdir("t4edges"), path[PATH_MAX + 16];
	static char out[1 << 20], script[8192];
	static const char hostile[] = "\x1b[2J\xff\n,\"q\"";
	struct lw w;

	snprintf(path, sizeof(path), "%s/h.t4t", dir);
	lw_open(&w, path);
	session(&w, 1000000);
	for (uint32_t id = 1; id <= 3000; id++) {
		struct t4_packet p = { .type = T4_PKT_DOMAIN };
		p.domain.domain_id = id;
		p.domain.kind = T4_DOM_SOFTWARE;
		p.domain.cpu = p.domain.clock_event = -1;
		snprintf(p.domain.name, sizeof(p.domain.name), "%u%s", id, hostile);
		lw_put(&w, &p);
		event(&w, id, "ops", 0);
	}
	for (uint64_t k = 0; k < 20; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		uint32_t bm = k >= 12 ? 1002 : k >= 8 ? 2 : k >= 5;
		if (k == 5)
			bookmark(&w, 1, "ok", k, t - 500000);
		if (k == 8)
			bookmark(&w, 2, hostile, k, t - 500000);
		for (uint32_t id = 3; k == 12 && id <= 1002; id++)
			bookmark(&w, id, hostile, k, t - 500000 + id);
		if (k == 15)
			bookmark(&w, 0, "ok", k, t - 500000);
		ref(&w, k, t, bm);
		for (uint32_t id = 1; id <= 3000; id++)
			for (int c = 0; c < (id % 2 ? 2 : k <= id % 10); c++)
				ret(&w, id, k, t, k ? 1000 : 0);
	}
	lw_close(&w);
	snprintf(script, sizeof(script),
		 "cd '%s' && B='%s' && \"$B\" decode h.t4t > sum.txt 2> e1 && \"$B\" info h.t4t >"
		 " info.txt && \"$B\" info --json h.t4t > info.json && \"$B\" report h.t4t 2> e2 &&"
		 " \"$B\" decode -v h.t4t > v.txt 2> e3 && python3 - <<'EOF'\n"
		 "import json, re\n"
		 CLI_PY_CLEAN "clean('sum.txt', 'info.txt', 'e1', 'e2', 'v.txt', 'e3')\n"
		 "j = json.load(open('info.json', 'rb'))\n"
		 "d = {x['id']: x for x in j['domains']}\n"
		 "un = sum(x['unanswered'] for x in d.values())\n"
		 "assert un == 300 * (19 + 17 + 15 + 13 + 11), un\n"
		 "assert all(d[i]['duplicates'] == 20 * (i %% 2) for i in d), 'duplicates'\n"
		 "assert all(d[i].get('stopped_after_trigger', -1) == (i %% 10 if i %% 2 == 0 else -1)"
		 " for i in d), 'stopped'\n"
		 "assert (j['duplicates'], j['bookmarks_reused']) == (30000, 1000), j['duplicates']\n"
		 "s = open('sum.txt', encoding='utf-8').read()\n"
		 "stops = [l for l in s.splitlines() if l.startswith('  stopped answering ')]\n"
		 "assert len(stops) == 17 and stops[-1].endswith('... and 1484 more domains"
		 " (info: UNANSWERED)'), stops[-3:]\n"
		 "per = [int(m) for m in re.findall(r' unanswered (\\d+), duplicates', s)]\n"
		 "assert sum(per) == un, sum(per)\n"
		 "assert ' reused            1000 bookmark packets ' in s\n"
		 "e = open('e1', encoding='utf-8').read()\n"
		 "assert e.count('is named') == 1 and 'as ID 2 is' in e, e\n"
		 "h = open('h.html', encoding='utf-8').read()\n"
		 "assert 't4-h-unanswered\" class=\"warn\"><b>%%d</b>' %% un in h\n"
		 "assert 't4-h-stopped\" class=\"warn\"><b>1500</b>' in h\n"
		 "assert 't4-h-reused\" class=\"warn\"><b>1000</b>' in h\n"
		 "assert 't4-h-duplicates\" class=\"warn\"><b>30000</b>' in h\n"
		 "v = open('v.txt', encoding='utf-8').read()\n"
		 "assert v.count('\\\\x1b[2J') > 0 and '\\x1b' not in v\n"
		 "print('agree')\n"
		 "EOF\n",
		 dir, cli_bin());
	cr_assert_eq(cli_exec(&(struct cli_io){ .out = out, .cap = sizeof(out), .merge_err = true },
			      "%s", script), 0, "%s", out);
	cr_assert_not_null(strstr(out, "agree\n"), "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* Domain 1 clocked by its event 0 at 1 Hz (nominal), which stands still
 * over the log's 300 triggers of 1 ms: each sample is a segment of its
 * own (decode/clock.c), with no rate. */
static void still_log(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct lw w;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	lw_open(&w, path);
	session(&w, 1000000);
	clocked_domain(&w, 1, 1);
	event(&w, 1, "cycles", 0);
	for (uint64_t k = 0; k < 300; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		ref(&w, k, t, 0);
		ret_with(&w, 1, k, t, 5000, k ? 0 : T4_RET_FIRST, 0);
	}
	lw_close(&w);
}

/* A segment without a rate says so (its line said "nan MHz, nominal
 * unknown", of a clock whose nominal rate the log gives). */
Test(agree_edges, a_clock_that_stands_still_has_no_rate, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");
	static char out[1 << 16];

	still_log(dir, "still.t4t");
	cr_assert_eq(run(dir, out, sizeof(out), "decode -v still.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  c1 segment 1: triggers 0..0, rate unknown (one sample, or"
				       " the clock stood still), residual 0.0 ns\n"), "%s", out);
	cr_assert_null(strstr(out, "nan"), "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* Past the 256 segments a domain lists, "... N more" counts every one,
 * as the SEGMENTS column does (it said "... 248 more" next to 300). */
Test(agree_edges, more_segments_than_listed_are_counted_alike, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");
	static char out[1 << 16];

	still_log(dir, "still.t4t");
	cr_assert_eq(run(dir, out, sizeof(out), "decode -v still.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\n  c1     rate  (steps)    -   0.000   0.000     -    0.000"
				       "      300 "), "%s", out);
	cr_assert_not_null(strstr(out, "\n  ... 292 more segments\n"), "%s", out);
	t4_rmtree(dir);
	free(dir);
}

/* dir/to: dir/from up to its last chunk's start (FORMAT.md 2: the next
 * chunk at hdr_size + comp_size), as a file cut after a whole chunk is.
 * Returns the chunks kept. */
static int cut_at_last_chunk(const char *dir, const char *from, const char *to)
{
	char path[PATH_MAX];
	static unsigned char buf[8 << 20];
	size_t n, off = 0, last = 0;
	int chunks = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, from);
	cr_assert_not_null(f = fopen(path, "rb"), "%s", path);
	n = fread(buf, 1, sizeof(buf), f);
	cr_assert(feof(f), "%s: over %zu bytes", path, sizeof(buf));
	fclose(f);
	while (off + 64 <= n) {
		const unsigned char *h = buf + off;
		last = off;
		off += (h[10] | (size_t)h[11] << 8) +
		       (h[44] | (size_t)h[45] << 8 | (size_t)h[46] << 16 | (size_t)h[47] << 24);
		chunks++;
	}
	cr_assert_eq(off, n, "%s: not whole chunks", path);
	snprintf(path, sizeof(path), "%s/%s", dir, to);
	cr_assert_not_null(f = fopen(path, "wb"), "%s", path);
	cr_assert_eq(fwrite(buf, 1, last, f), last);
	cr_assert_eq(fclose(f), 0);
	return chunks - 1;
}

/* The words every output gives a log that was not closed. */
#define UNCLOSED "no closing status packet (the recorder was killed or is still running, or " \
		 "the file was cut after a whole chunk)"

/* What info, info --json, the summary and the report say of log (closed
 * or not): one answer, in the same words. */
static void says_closed(const char *dir, const char *log, bool closed)
{
	char out[1 << 16], args[PATH_MAX];

	snprintf(args, sizeof(args), "info %s", log);
	cr_assert_eq(run(dir, out, sizeof(out), args), 0, "%s", out);
	cr_assert_not_null(strstr(out, closed ? "\n  closed           yes\n"
					      : "\n  closed           no: " UNCLOSED "\n"), "%s", out);
	cr_assert_not_null(strstr(out, "\n  damage           none\n"), "%s", out);
	snprintf(args, sizeof(args), "info --json %s", log);
	cr_assert_eq(run(dir, out, sizeof(out), args), 0, "%s", out);
	cr_assert_not_null(strstr(out, closed ? "\"closed\": true," : "\"closed\": false,"), "%s",
			   out);
	/* (the MISSING section's lines: a recording's tables come first) */
	snprintf(args, sizeof(args), "decode %s | grep -E '^(MISSING|  closed )'", log);
	cr_assert_eq(run(dir, out, sizeof(out), args), 0, "%s", out);
	cr_assert(closed || !strstr(out, "MISSING     nothing:"), "%s", out);
	cr_assert_eq(strstr(out, "\n  closed            no: " UNCLOSED "\n") != NULL, !closed,
		     "%s", out);
	snprintf(args, sizeof(args), "report %s -o r.html && grep -o 'id=\"t4-h-closed\".\\{0,250\\}'"
		 " r.html", log);
	cr_assert_eq(run(dir, out, sizeof(out), args), 0, "%s", out);
	cr_assert_not_null(strstr(out, closed ? "id=\"t4-h-closed\" class=\"ok\"><b>yes</b> log closed"
						"</li>"
					      : "id=\"t4-h-closed\" class=\"warn\"><b>no</b> log closed"
						" <small>" UNCLOSED "</small></li>"), "%s", out);
}

/* A host packet (not copied into later chunks, no trigger packet): what
 * fills a chunk after a log's last trigger. */
static void host(struct lw *w)
{
	struct t4_packet p = { .type = T4_PKT_HOST };

	p.host.clock_state = -1;
	p.host.rank = -1;
	memset(p.host.nodelist, 'n', 200);
	lw_put(w, &p);
}

/* A log closes with a status packet after its last trigger packet; one
 * written mid-log (after drops) and followed by triggers is no close. A
 * log cut after a whole chunk (here after its last trigger: every domain
 * answered every trigger, no drop, no damage) lost its closing status, and
 * info, the summary and the report say so alike, not "MISSING nothing". */
/* dir/whole.t4t: 20 triggers of one domain, a mid-log status packet after
 * the 10th (its totals so far: dropped), a READ_FAILED return at
 * read_failed (0: none) after it, and a last chunk of host packets only;
 * dir/cut.t4t: the same without that last chunk. */
static void write_whole_and_cut(const char *dir, uint64_t dropped, uint64_t read_failed)
{
	struct t4_packet st = { .type = T4_PKT_STATUS };
	char path[PATH_MAX];
	struct lw w;

	snprintf(path, sizeof(path), "%s/whole.t4t", dir);
	/* chunks closed by size only: where they end does not hang on time */
	lw_open_opts(&w, &(struct t4_log_opts){ .path = path, .chunk_bytes = 4096,
						.chunk_ms = UINT32_MAX });
	session(&w, 1000000);
	domain(&w, 1);
	event(&w, 1, "ops", 0);
	for (uint64_t k = 0; k < 20; k++) {
		uint64_t t = 1000000000ull + k * 1000000;
		ref(&w, k, t, 0);
		if (k && k == read_failed)
			ret_with(&w, 1, k, t, 0, T4_RET_READ_FAILED, 0);
		else
			ret(&w, 1, k, t, k ? 1000 * k : 0);
		if (k == 9) { /* a mid-log status, its totals so far */
			st.status.triggers = 10;
			st.status.dropped = dropped;
			st.status.ref_ns = t;
			lw_put(&w, &st);
		}
	}
	for (int i = 0; i < 60; i++) /* 12 KB: a chunk ends after the last trigger */
		host(&w);
	lw_close(&w);
	cr_assert_geq(cut_at_last_chunk(dir, "whole.t4t", "cut.t4t"), 1);
}

Test(agree_edges, a_log_cut_after_a_whole_chunk_is_said_not_closed, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");

	write_whole_and_cut(dir, 0, 0);
	says_closed(dir, "whole.t4t", true);
	says_closed(dir, "cut.t4t", false);
	run_says(dir, "decode whole.t4t", (const char *[]){ "\nMISSING     nothing:", NULL });
	run_says(dir, "info --json cut.t4t", (const char *[]){ "\"triggers\": 20,",
		 "\"status_present\": true, \"closed\": false,", NULL });
	t4_rmtree(dir);
	free(dir);
}

/* A log not closed counts what it holds: its read failures from its
 * returns, not from a mid-log status packet that came before them (it
 * said 0), and that packet's dropped as "at least" (it said 3 as final),
 * in info and the summary alike. */
Test(agree_edges, a_log_not_closed_counts_what_it_holds, .timeout = 60)
{
	char *dir = cli_tmpdir("t4edges");

	write_whole_and_cut(dir, 3, 14);
	run_says(dir, "info cut.t4t", (const char *[]){
		 "\n  read failures    1 (counted from return packets)\n",
		 "\n  dropped          3 (at least: the last status packet's, before the log's end)\n",
		 NULL });
	run_says(dir, "info --json cut.t4t", (const char *[]){ "\"read_failures\": 1,", NULL });
	run_says(dir, "decode cut.t4t", (const char *[]){
		 "\n  dropped packets   at least 3 (their counts", "\n  read failures     1\n", NULL });
	t4_rmtree(dir);
	free(dir);
}

/* A simulated recording cut after a whole chunk (as `head -c` cuts it):
 * no status packet at all, no damage; not closed, said alike. */
Test(agree_edges, a_recording_cut_after_a_whole_chunk_is_said_not_closed, .timeout = 120)
{
	char *dir = cli_tmpdir("t4edges"), out[4096];

	cr_assert_eq(run(dir, out, sizeof(out), "record -q --sim=7 --virtual --per-socket -d 3s "
			 "-o f.t4t"), 0, "%s", out);
	cr_assert_geq(cut_at_last_chunk(dir, "f.t4t", "cut.t4t"), 1);
	says_closed(dir, "f.t4t", true);
	says_closed(dir, "cut.t4t", false);
	cr_assert_eq(run(dir, out, sizeof(out), "info --json cut.t4t"), 0, "%s", out);
	cr_assert_not_null(strstr(out, "\"status_present\": false, \"closed\": false,"), "%s", out);
	t4_rmtree(dir);
	free(dir);
}
