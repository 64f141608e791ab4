/* test_report.c - `t410trace report` (suite "report").
 *
 * The decimation in bounded memory (decode/decimate.c) on its own: a
 * spike in an hour stays, columns merge exactly, sums per trigger. Then
 * the report end to end as a user makes it, read back two ways:
 * tests/report_check.py `tables` (Python's html.parser, no browser) and
 * `open` (Debian's headless Chromium through its DevTools protocol: no
 * console error, the plots and phase spans in the DOM, no request for
 * anything, a screenshot that is not blank). Every report's per-kind
 * tables must equal `t410trace decode`'s summary of the same log, row for
 * row. Logs: the simulated Tegra410 (virtual time), this machine's own
 * PMUs, tools/t4write.py's damaged, truncated and hostile ones, and a log
 * still being recorded. Then the output file's rules.
 *
 * The browser parts skip with the reason the probe met (report_check.py
 * starts Chromium: exit 77 when it cannot); python3 is needed throughout.
 */
#include "cli_testutil.h"
#include "decode/report.h"
#include "probe.h"
#include "util/util.h"

#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>

/* ---- the decimation ------------------------------------------------------------------ */

Test(report, an_hour_keeps_a_one_ms_spike_in_bounded_columns)
{
	struct rpt_grid g = { 0 };
	int e = rpt_env_new(&g), a = rpt_acc_new(&g);
	const uint64_t ms = 1000000, t0 = 5 * ms, spike = t0 + 2345678 * ms;
	uint64_t n = 3600 * 1000; /* an hour of 1 ms intervals */

	cr_assert(e >= 0 && a >= 0);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t s = t0 + k * ms;
		rpt_env_add(&g, (size_t)e, s, s + ms, s == spike ? 100.0 : 1.0 + (double)(k % 2) / 8);
		rpt_acc_add(&g, (size_t)a, s, s + ms / 2);
	}
	cr_assert(g.used <= RPT_COLS && g.used > RPT_COLS / 2, "%u columns", g.used);
	double total = 0;
	int spikes = 0;
	for (uint32_t c = 0; c < g.used; c++) {
		cr_assert(g.env[e].state[c] & RPT_HAS, "column %u empty", c);
		cr_assert_eq(g.env[e].lo[c], 1.0f, "column %u: min %g", c, g.env[e].lo[c]);
		spikes += g.env[e].hi[c] == 100.0f;
		if (g.env[e].hi[c] != 100.0f)
			cr_assert_eq(g.env[e].hi[c], 1.125f, "column %u: max %g", c, g.env[e].hi[c]);
		total += g.acc[a].v[c];
	}
	cr_assert_eq(spikes, 1, "the 1 ms spike is in %d columns", spikes);
	uint32_t c = (uint32_t)((spike - g.origin) / g.width);
	cr_assert_eq(g.env[e].hi[c], 100.0f, "the spike's column %u", c);
	cr_assert_eq(total, (double)n * (ms / 2), "busy time %.0f", total); /* sums stay exact */
	rpt_grid_free(&g);
}

Test(report, merged_columns_keep_which_extreme_came_first)
{
	struct rpt_grid g = { 0 };
	int e = rpt_env_new(&g);

	/* a dip in the first half, a peak in the second: the dip comes first */
	rpt_env_add(&g, (size_t)e, 0, 10, 5);
	rpt_env_add(&g, (size_t)e, 100, 110, 1);
	rpt_env_add(&g, (size_t)e, 2000, 2010, 9);
	rpt_env_add(&g, (size_t)e, (uint64_t)RPT_COLS * 4000, (uint64_t)RPT_COLS * 4000 + 1, 5);
	cr_assert_gt(g.width, RPT_WIDTH0_NS, "the grid widened");
	cr_assert_eq(g.env[e].lo[0], 1.0f);
	cr_assert_eq(g.env[e].hi[0], 9.0f);
	cr_assert_eq(g.env[e].state[0] & RPT_HI_FIRST, 0, "the minimum came first");
	rpt_grid_free(&g);
}

Test(report, sums_add_the_instances_of_one_trigger)
{
	struct rpt_grid g = { 0 };
	struct rpt_sum *s = calloc(1, sizeof(*s));
	int e = rpt_env_new(&g);

	cr_assert_not_null(s);
	s->env = (size_t)e;
	/* 20 domains on two schedulers, 3000 triggers: the sum at a trigger
	 * is 20 except at trigger 1500, where one domain doubles */
	for (uint64_t k = 0; k < 3000; k++)
		for (uint32_t d = 0; d < 20; d++)
			rpt_sum_add(&g, s, d % 2, k, k * 1000000, (k + 1) * 1000000,
				    k == 1500 && d == 7 ? 2.0 : 1.0);
	rpt_sum_flush(&g, s);
	float lo = INFINITY, hi = -INFINITY;
	for (uint32_t c = 0; c < g.used; c++)
		if (g.env[e].state[c] & RPT_HAS) {
			lo = fminf(lo, g.env[e].lo[c]);
			hi = fmaxf(hi, g.env[e].hi[c]);
		}
	cr_assert_eq(lo, 10.0f, "per scheduler: 10 domains each (%g)", lo);
	cr_assert_eq(hi, 11.0f, "the doubled domain's trigger (%g)", hi);
	free(s);
	rpt_grid_free(&g);
}

/* ---- end to end ------------------------------------------------------------------------ */

struct rp {
	const char *bin;
	char *dir;
	char check[PATH_MAX], writer[PATH_MAX];
	char out[1 << 16];
};

static void rp_init(struct rp *c)
{
	c->bin = cli_bin();
	if (!t4t_have_cmds("python3"))
		cr_skip_test("needs python3 (tests/report_check.py reads the report)");
	cr_assert_not_null(cli_repo_file("tests/report_check.py", c->check));
	cr_assert_not_null(cli_repo_file("tools/t4write.py", c->writer));
	c->dir = cli_tmpdir("t4rpt");
}

static void rp_fini(struct rp *c)
{
	t4_rmtree(c->dir);
	free(c->dir);
}

/* A shell line in the test's directory, its output and errors in c->out. */
#define rp_sh(c, ...) cli_in_dir((c)->dir, (c)->out, sizeof((c)->out), __VA_ARGS__)

/* decode's summary of LOG into LOG.txt, the report into LOG.html, and
 * the tables of the one equal to the other's (no browser). */
static void rp_report(struct rp *c, const char *log)
{
	cr_assert_eq(rp_sh(c, "'%s' decode %s.t4t > %s.txt", c->bin, log, log), 0, "%s", c->out);
	cr_assert_eq(rp_sh(c, "'%s' report %s.t4t", c->bin, log), 0, "%s", c->out);
	cr_assert(strstr(c->out, "wrote ") && strstr(c->out, ".html"), "%s", c->out);
	cr_assert_eq(rp_sh(c, "python3 '%s' tables %s.html %s.txt", c->check, log, log), 0, "%s",
		     c->out);
}

/* The phase occurrences the summary lists ("PHASES (N occurrences"; it
 * said spans, the man page's occurrences: the report's band draws one span
 * for each). */
static int rp_spans(struct rp *c, const char *log)
{
	int n = -1;

	cr_assert_eq(rp_sh(c, "sed -n 's/^PHASES (\\([0-9]*\\) occurrence.*/\\1/p' %s.txt", log), 0);
	cr_assert_eq(sscanf(c->out, "%d", &n), 1, "no PHASES line in the summary");
	return n;
}

/* report_check.py open LOG.html ARGS: skips where Chromium cannot run. */
static void rp_browser(struct rp *c, const char *log, const char *fmt, ...)
{
	char args[2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	st = rp_sh(c, "python3 '%s' open %s.html --summary %s.txt %s", c->check, log, log, args);
	if (st == 77)
		cr_skip_test("%s", c->out);
	cr_assert_eq(st, 0, "%s", c->out);
}

Test(report, simulated_tegra410_in_a_browser, .timeout = 300)
{
	struct rp c;

	rp_init(&c);
	cr_assert_eq(rp_sh(&c, "'%s' record -q --sim --virtual --per-socket --period 1ms "
			       "--duration 3s -o sim.t4t", c.bin), 0, "%s", c.out);
	rp_report(&c, "sim");
	/* the 7 kinds' headline metrics: CMEM 3, NV-CLink 3, NV-DLink 2,
	 * NVLink-C2C 5, PCIE 4, PCIE-TGT 3, UCF 5 */
	rp_browser(&c, "sim", "--plots 25 --spans %d --text 'SIMULATED Tegra410' --probe-fetch "
		   "--ok overruns,drops,readfail,damage,truncated --screenshot sim.png",
		   rp_spans(&c, "sim"));
	rp_fini(&c);
}

Test(report, this_machines_pmus_in_a_browser, .timeout = 300)
{
	struct rp c;

	t4t_need_perf();
	rp_init(&c);
	cr_assert_eq(rp_sh(&c, "export B='%s'; \"$B\" record -q --period 1ms --bookmark first "
			       "-o host.t4t -- sh -c 'sleep 0.3; \"$B\" ctl bookmark second; sleep 0.3'",
			   c.bin), 0, "%s", c.out);
	rp_report(&c, "host");
	rp_browser(&c, "host", "--plots summary --spans %d --probe-fetch --screenshot host.png",
		   rp_spans(&c, "host"));
	rp_fini(&c);
}

/* Names that attack the page: escaped everywhere, shown as text, no
 * dialog, no script but the report's; bytes that are not UTF-8 as \xNN. */
Test(report, hostile_names_are_text, .timeout = 300)
{
	struct rp c;

	rp_init(&c);
	cr_assert_eq(rp_sh(&c, "python3 '%s' h.t4t --hostile-names --bookmarks", c.writer), 0, "%s",
		     c.out);
	rp_report(&c, "h");
	cr_assert_neq(rp_sh(&c, "grep -c '<script>alert\\|<img src=x' h.html"), 0,
		      "markup from a name reached the page: %s", c.out);
	cr_assert_eq(rp_sh(&c, "grep -cF 'load\\xff&lt;b&gt;&amp;' h.html"), 0, "%s", c.out);
	rp_browser(&c, "h", "--text '</script><script>alert(1)</script>' --spans %d --plots summary",
		   rp_spans(&c, "h"));
	rp_fini(&c);
}

/* A damaged and truncated log: the report of its intact part, the
 * damage in the warning colour. */
Test(report, damaged_and_truncated_logs_report_what_is_intact, .timeout = 300)
{
	struct rp c;

	rp_init(&c);
	cr_assert_eq(rp_sh(&c, "python3 '%s' d.t4t --bookmarks --damage 2 --truncate 300",
			   c.writer), 0, "%s", c.out);
	rp_report(&c, "d");
	cr_assert_eq(rp_sh(&c, "grep -c 'id=\"t4-h-damage\" class=\"warn\"' d.html"), 0, "%s", c.out);
	cr_assert_eq(rp_sh(&c, "grep -c 'id=\"t4-h-truncated\" class=\"warn\"' d.html"), 0, "%s",
		     c.out);
	rp_browser(&c, "d", "--warn damage,truncated,drops --plots summary --spans %d",
		   rp_spans(&c, "d"));
	rp_fini(&c);
}

/* A log still being written: the report of what is there, said so. */
Test(report, a_log_still_being_recorded, .timeout = 300)
{
	struct rp c;

	rp_init(&c);
	/* until interrupted: the report surely reads it while it is written */
	cr_assert_eq(rp_sh(&c, "'%s' record -q --sim --no-activity --period 1ms -o live.t4t & pid=$!; "
			       "i=0; while [ $i -lt 600 ] && ! [ -s live.t4t ]; do sleep 0.05; "
			       "i=$((i+1)); done; sleep 1.5; '%s' report live.t4t -o live.html; rc=$?; "
			       "kill -INT $pid; wait $pid; exit $rc", c.bin, c.bin), 0, "%s", c.out);
	cr_assert_eq(rp_sh(&c, "grep -c 'no status packet' live.html"), 0,
		     "the report does not say the recording was still running: %s", c.out);
	cr_assert_eq(rp_sh(&c, "grep -c 't4-kind' live.html"), 0, "no tables: %s", c.out);
	rp_fini(&c);
}

Test(report, the_output_files_rules, .timeout = 120)
{
	struct rp c;
	struct stat sb;
	char path[PATH_MAX + 32];

	rp_init(&c);
	cr_assert_eq(rp_sh(&c, "python3 '%s' a.t4t --bookmarks && cp a.t4t b.t4t", c.writer), 0,
		     "%s", c.out);
	/* next to the log by default, mode 0666 less the umask, no leftovers */
	cr_assert_eq(rp_sh(&c, "umask 027; '%s' report a.t4t", c.bin), 0, "%s", c.out);
	snprintf(path, sizeof(path), "%s/a.html", c.dir);
	cr_assert_eq(stat(path, &sb), 0, "report a.t4t wrote no a.html");
	cr_assert_eq(sb.st_mode & 0777, 0640, "mode %o", sb.st_mode & 0777);
	cr_assert_eq(rp_sh(&c, "ls | grep -c tmp"), 1, "leftovers: %s", c.out);
	/* never over the log it reads, nor another log: exit 2, untouched */
	cr_assert_eq(rp_sh(&c, "'%s' report a.t4t -o a.t4t", c.bin), 2, "%s", c.out);
	cr_assert(strstr(c.out, "not overwritten"), "%s", c.out);
	cr_assert_eq(rp_sh(&c, "'%s' report a.t4t -o b.t4t", c.bin), 2, "%s", c.out);
	cr_assert_eq(rp_sh(&c, "cmp a.t4t b.t4t"), 0, "b.t4t changed");
	/* nor under a log's name (decode DIR/ read it as a damaged log), new
	 * or not: one line, nothing made */
	cr_assert_eq(rp_sh(&c, "'%s' report a.t4t -o r.t4t; '%s' decode a.t4t -f csv -o c.t4t; "
			   ": > e.t4t; '%s' decode a.t4t -o e.t4t; ls r.t4t c.t4t; wc -c < e.t4t",
			   c.bin, c.bin, c.bin), 0, "%s", c.out);
	cr_assert(strstr(c.out, "report: r.t4t: a .t4t name is a log's; decode and report write "
			 "none (choose another -o)\n") && strstr(c.out, "decode: c.t4t: a .t4t") &&
		  strstr(c.out, "decode: e.t4t: a .t4t") && strstr(c.out, "\n0\n"), "%s", c.out);
	/* a file that is not a log, a missing one: one line, exit 2 */
	cr_assert_eq(rp_sh(&c, "echo hello > not.t4t; '%s' report not.t4t", c.bin), 2, "%s", c.out);
	cr_assert(strstr(c.out, "not.t4t") && !strchr(strchr(c.out, '\n') + 1, '\n'), "%s", c.out);
	cr_assert_eq(rp_sh(&c, "ls not.html"), 2, "a report of a non-log was left: %s", c.out);
	/* a missing log is named, not the report it would have given (it said
	 * "nodir/x.html: No such file or directory") */
	cr_assert_eq(rp_sh(&c, "'%s' report missing.t4t", c.bin), 2, "%s", c.out);
	cr_assert(strstr(c.out, "missing.t4t: No such file"), "%s", c.out);
	cr_assert_eq(rp_sh(&c, "'%s' report nodir/x.t4t", c.bin), 2, "%s", c.out);
	cr_assert(strstr(c.out, "nodir/x.t4t: No such file"), "%s", c.out);
	cr_assert_eq(rp_sh(&c, "'%s' report missing.t4t -o nodir/x.html", c.bin), 2, "%s", c.out);
	cr_assert(strstr(c.out, "missing.t4t: No such file"), "%s", c.out);
	/* a file that is no log is named before any report is made: one that
	 * could not be (/proc/self/maps.html, a directory) was named instead */
	cr_assert_eq(rp_sh(&c, "'%s' report /proc/self/maps", c.bin), 2, "%s", c.out);
	cr_assert_str_eq(c.out, "t410trace report: /proc/self/maps: not a t410trace log (bad magic)\n");
	cr_assert_eq(rp_sh(&c, "mkdir not.html && '%s' report not.t4t; r=$?; rmdir not.html; "
			       "exit $r", c.bin), 2, "%s", c.out);
	cr_assert(strstr(c.out, "not.t4t: not a t410trace log") && !strstr(c.out, "not.html"), "%s",
		  c.out);
	/* standard input needs -o; -o - writes standard output */
	cr_assert_eq(rp_sh(&c, "'%s' report - < a.t4t", c.bin), 2, "%s", c.out);
	cr_assert_eq(rp_sh(&c, "'%s' report - -o in.html < a.t4t && grep -q t4-kind in.html && "
			       "'%s' report a.t4t -o - > out.html && cmp out.html a.html",
			   c.bin, c.bin), 0, "%s", c.out);
	/* an HTML page is never written to a terminal: -o - there, or decode
	 * -f report without -o, is refused (exit 2) */
	if (t4t_have_cmds("script")) {
		cr_assert_eq(rp_sh(&c, "script -qec \"'%s' report a.t4t -o -\" /dev/null; echo rc=$?",
				   c.bin), 0, "%s", c.out);
		cr_assert(strstr(c.out, "-o - on a terminal") && strstr(c.out, "rc=2\n"), "%s", c.out);
		cr_assert_eq(rp_sh(&c, "script -qec \"'%s' decode a.t4t -f report\" /dev/null; "
				       "echo rc=$?", c.bin), 0, "%s", c.out);
		cr_assert(strstr(c.out, "give -o FILE") && strstr(c.out, "rc=2\n"), "%s", c.out);
	}
	/* decode -f report is the same report */
	cr_assert_eq(rp_sh(&c, "'%s' decode a.t4t -f report -o d.html && cmp d.html a.html",
			   c.bin), 0, "%s", c.out);
	/* a symbolic link keeps pointing where it did */
	cr_assert_eq(rp_sh(&c, "echo old > target.html && ln -s target.html link.html && "
			       "'%s' report a.t4t -o link.html && test -L link.html && "
			       "cmp target.html a.html", c.bin), 0, "%s", c.out);
	rp_fini(&c);
}

/* In a directory deeper than PATH_MAX (no absolute name to be had) the
 * report is written and said without a link: "file://a.html" named a
 * host a.html, not the file. */
Test(report, no_link_where_the_directory_has_no_absolute_name, .timeout = 120)
{
	struct rp c;

	rp_init(&c);
	cr_assert_eq(rp_sh(&c, "python3 '%s' a.t4t", c.writer), 0, "%s", c.out);
	cr_assert_eq(rp_sh(&c, "python3 -c 'import os, shutil, subprocess, sys\n"
			       "d, n = os.getcwd(), \"0\" * 200\n"
			       "for i in range(25): os.mkdir(n); os.chdir(n)\n"
			       "shutil.copy(d + \"/a.t4t\", \"a.t4t\")\n"
			       "rc = subprocess.call([sys.argv[1], \"report\", \"a.t4t\"])\n"
			       "rc = rc or not os.path.getsize(\"a.html\")\n"
			       "os.chdir(d); shutil.rmtree(n); sys.exit(rc)' '%s' 2>&1", c.bin),
		     0, "%s", c.out);
	cr_assert(strstr(c.out, "t410trace report: wrote a.html\n"), "%s", c.out);
	cr_assert_null(strstr(c.out, "file:"), "%s", c.out);
	rp_fini(&c);
}

/* The link the report prints opens the file it wrote, whatever its name:
 * spaces, '#' (a fragment), '%' (an escape), '?' and bytes that are not
 * ASCII are percent-encoded, the rest kept. */
Test(report, the_printed_link_opens_the_file, .timeout = 120)
{
	struct rp c;

	rp_init(&c);
	cr_assert_eq(rp_sh(&c, "python3 '%s' a.t4t", c.writer), 0, "%s", c.out);
	cr_assert_eq(rp_sh(&c, "cp a.t4t \"$(printf 'my run #2 50%%%%?\\303\\251.t4t')\" && "
			       "'%s' report my*.t4t 2>&1 | sed -n 's/.*(open it in a browser: //p' | "
			       "python3 -c 'import os, sys, urllib.parse\n"
			       "url = sys.stdin.read().strip()[:-1]\n"
			       "assert url.startswith(\"file:///\") and \" \" not in url, url\n"
			       "assert \"#\" not in url and \"?\" not in url, url\n"
			       "p = urllib.parse.unquote_to_bytes(url[len(\"file://\"):])\n"
			       "want = os.path.realpath(os.fsencode(\"my run #2 50%%?\\u00e9.html\"))\n"
			       "assert p == want, (p, want)\n"
			       "assert \"/my%%20run%%20%%232%%2050%%25%%3F%%C3%%A9.html\" in url, url'",
			   c.bin), 0, "%s", c.out);
	rp_fini(&c);
}
