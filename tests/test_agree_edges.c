/* test_agree_edges.c - one truth on the logs no recorder makes on
 * purpose: a gauge next to a counter, a domain that never answers, one
 * answer per domain. Each
 * log is crafted packet by packet (craft_log.h), then read by the built
 * binary (T4_BIN); what one output says of a number, the others say too
 * (or, where it has no meaning, none says it).
 */
#include "cli_testutil.h"

#include "craft_log.h"
#include "packets/packets.h"
#include "util/util.h"

/* Run "$B ARGS" in dir, its output and errors in out; the exit status. */
static int run(const char *dir, char *out, size_t cap, const char *args)
{
	cli_bin();
	return cli_exec(&(struct cli_io){ .dir = dir, .out = out, .cap = cap, .merge_err = true },
			"\"$B\" %s", args);
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
 * rate per second (as record's closing table and the summary give none). */
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
