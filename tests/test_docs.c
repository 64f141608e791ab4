/* test_docs.c - the documentation runs as written (issue 15.9): README's
 * Usage commands in order, LIBRARY.md's example app built (pkg-config on
 * the build folder's t410trace-uninstalled.pc) and recorded, README's
 * Usage outputs as its comments describe them, make demo's files and
 * suggested commands, LIBRARY.md's ctl example, SIMULATOR.md's
 * virtual-time examples, EVENTS.md's
 * examples and error messages against the binary, `make install`'s
 * PATH hint, and the man page against every --help (the same options under
 * the same names).
 *
 * Commands are taken from the documents themselves (their ```sh blocks, the
 * tables' code spans) and run in a private directory that looks like the
 * clone's root to them: `build` there is this build's output folder, `tests`
 * the repository's. A command that fails fails the test, with the trace of
 * the script (sh -x) up to it. README's commands record this machine's own
 * counters system-wide: where perf refuses that (no root, no
 * CAP_PERFMON), the test skips with the probe's reason.
 */
#include "cli_testutil.h"
#include "probe.h"

#include <sys/stat.h>

/* The repository file rel, whole, into a malloc'ed string. */
static char *slurp(const char *rel)
{
	char path[PATH_MAX];
	FILE *f;
	char *buf;
	long n;

	cr_assert_not_null(cli_repo_file(rel, path), "%s not found", rel);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The text of section `heading` ("## Usage") up to the next "\n## ". */
static char *section(char *doc, const char *heading)
{
	char *s = strstr(doc, heading), *end;

	cr_assert_not_null(s, "no section %s", heading);
	s += strlen(heading);
	if ((end = strstr(s, "\n## ")))
		*end = '\0';
	return s;
}

/* Every ```lang block of text, in order, appended to out. */
static void code_blocks(const char *text, const char *lang, FILE *out)
{
	char fence[32];
	const char *p = text;

	snprintf(fence, sizeof(fence), "```%s\n", lang);
	while ((p = strstr(p, fence))) {
		const char *end = strstr(p += strlen(fence), "```");
		cr_assert_not_null(end, "unterminated ```%s block", lang);
		fwrite(p, 1, (size_t)(end - p), out);
		p = end + 3;
	}
}

/* A private directory that looks like the clone's root: build -> this
 * build's output folder, tests -> the repository's. With exec, one where
 * a program can run (t4t_exec_tmpdir: $TMPDIR may be mounted noexec), for
 * commands that build and run one. */
static char *clone_dir(bool exec)
{
	char *dir, path[PATH_MAX], link[PATH_MAX + 16];
	const char *out = getenv("T4_OUT");

	if (!out)
		cr_skip_test("T4_OUT not set (run through make check)");
	if (exec) {
		cr_assert_not_null(dir = malloc(PATH_MAX));
		t4t_exec_tmpdir(dir, PATH_MAX, "t4docs");
	} else {
		dir = cli_tmpdir("t4docs");
	}
	snprintf(link, sizeof(link), "%s/build", dir);
	cr_assert_eq(symlink(out, link), 0, "%s", link);
	cr_assert_not_null(cli_repo_file("tests", path));
	snprintf(link, sizeof(link), "%s/tests", dir);
	cr_assert_eq(symlink(path, link), 0, "%s", link);
	return dir;
}

/* Write script into dir/name and run it with sh -e -x there; fail with
 * the end of its trace when a command fails. */
static void run_script(const char *dir, const char *name, const char *preamble, const char *script)
{
	char path[PATH_MAX], trace[1 << 14];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fprintf(f, "%s%s", preamble, script);
	cr_assert_eq(fclose(f), 0);
	rc = cli_run(trace, sizeof(trace), "cd '%s' && sh -e -x %s > %s.out 2>&1; rc=$?; "
		     "tail -c 12000 %s.out; exit $rc", dir, name, name, name);
	cr_assert_eq(rc, 0, "%s stopped at a failing command (exit %d):\n%s", name, rc, trace);
}

/* The code spans of one markdown table cell, NUL-separated into out. */
static size_t code_spans(const char *cell, size_t len, char out[][512], size_t cap)
{
	size_t n = 0;
	const char *p = cell, *end = cell + len;

	while (n < cap && (p = memchr(p, '`', (size_t)(end - p)))) {
		const char *q = memchr(p + 1, '`', (size_t)(end - p - 1));
		if (!q)
			break;
		snprintf(out[n++], 512, "%.*s", (int)(q - p - 1), p + 1);
		p = q + 1;
	}
	return n;
}

/* Does got match want, "..." in want standing for any text? */
static bool matches(const char *got, const char *want)
{
	const char *dots = strstr(want, "...");

	if (!dots)
		return !strcmp(got, want);
	if (strncmp(got, want, (size_t)(dots - want)))
		return false;
	for (const char *g = got + (dots - want); *g; g++)
		if (matches(g, dots + 3))
			return true;
	return matches("", dots + 3);
}

/* The clone-like directory EVENTS.md's commands run in. */
static const char *events_dir;

/* `t410trace list [--sim] --resolve 'spec'`: its exit status, its output
 * (one line, newline dropped) into out. */
static int resolve(const char *root_opt, const char *spec, char *out, size_t cap)
{
	int rc = cli_run(out, cap, "cd '%s' && '%s' list %s --resolve '%s' 2>&1", events_dir, bin(),
			 root_opt, spec);
	size_t n = strlen(out);

	if (n && out[n - 1] == '\n')
		out[n - 1] = '\0';
	return rc;
}

/* ---- README ----------------------------------------------------------------- */

/* What text says after marker, to the end of its line, into out. */
static void said_after(const char *text, const char *marker, char *out, size_t cap)
{
	const char *p = strstr(text, marker);

	cr_assert_not_null(p, "README's Usage no longer says '%s'", marker);
	p += strlen(marker);
	snprintf(out, cap, "%.*s", (int)strcspn(p, "\n"), p);
}

/* The Usage commands made, in dir, what their comments say: decode's CSV
 * and phase table with the columns named, top's header and 3 CSV lines,
 * report's page beside the log, one reference stream per socket. */
static void usage_made_what_it_says(const char *dir, const char *usage)
{
	char want[512], out[1 << 12];

	said_after(usage, "-o ctl.csv      # tidy rows: ", want, sizeof(want));
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && head -1 ctl.csv", dir), 0, "%s", out);
	cr_expect_str_eq(t4t_chomp(out), want, "README: decode -f csv's columns");
	said_after(usage, "-f phases              # the phase table: ", want, sizeof(want));
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode ctl.t4t -f phases | head -1",
			     dir, bin()), 0, "%s", out);
	cr_expect_str_eq(t4t_chomp(out), want, "README: decode -f phases' columns");
	cr_assert(strstr(usage, "-n 3 > live.csv   # a header and 3 CSV lines, one a second"));
	/* (the header comes again, '#' first, if PMUs appear meanwhile) */
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && grep -c '^[0-9]' live.csv && head -c 7 "
			     "live.csv", dir), 0, "%s", out);
	cr_expect_str_eq(out, "3\ntime_s,", "README: top -n 3 on a pipe: a header and 3 CSV lines: %s",
			 out);
	cr_assert(strstr(usage, "`t410trace report ctl.t4t` writes `ctl.html`"));
	cr_expect_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' report ctl.t4t 2>&1 && test -s "
			     "ctl.html", dir, bin()), 0, "README: report ctl.t4t writes ctl.html: %s",
		     out);
	cr_assert(strstr(usage, "one\n# reference packet stream per socket"));
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' info --json sockets.t4t | "
			     "grep -o '\"schedulers\": [0-9]*'", dir, bin()), 0, "%s", out);
	cr_expect_eq(json_num(out, "schedulers"), 2, "README: --per-socket on two sockets");
}

Test(docs, readme_usage_runs_as_written, .timeout = 300)
{
	char *doc = slurp("README.md"), *dir, *usage;
	char *script = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&script, &len);

	t4t_need_perf(); /* its recordings count this machine's CPUs */
	code_blocks(usage = section(doc, "\n## Usage\n"), "sh", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert(strstr(script, "t410trace record"), "no commands in README's Usage");
	dir = clone_dir(false);
	run_script(dir, "usage.sh", "", script);
	usage_made_what_it_says(dir, usage);
	free(script);
	free(doc);
	cr_assert_eq(t4_rmtree(dir), 0, "%s", t4_errmsg());
	free(dir);
}

/* README's Quick start: make demo (tools/demo.sh, here with the binary
 * under test in a private folder, where it writes) records and shows three
 * logs and ends with the two reports and the files it lists; the
 * commands it suggests work as printed (its python3 line reads the CSV's
 * head only: it once kept 2.4 M rows in a list, 2.8 GB). */
Test(docs, make_demo_leaves_what_it_lists, .timeout = 300)
{
	char *dir = malloc(PATH_MAX), demo[PATH_MAX], out[1 << 16], *files;

	cr_assert_not_null(dir);
	t4t_need_perf(); /* its third log counts this machine's CPUs */
	cr_assert_not_null(cli_repo_file("tools/demo.sh", demo));
	t4t_exec_tmpdir(dir, PATH_MAX, "t4demo"); /* it runs a script it writes */
	cr_assert_eq(cli_run(out, sizeof(out), "ln -s '%s' '%s/t410trace' && sh '%s' "
			     "'%s/t410trace' > '%s/demo.out' 2>&1 || tail -c 4000 '%s/demo.out'",
			     bin(), dir, demo, dir, dir, dir), 0, "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "sed -n '/^== files$/,$p' '%s/demo.out'", dir), 0);
	cr_assert(strstr(out, "/demo-sim.html, ") && strstr(out, "/demo-host.html "), "%s", out);
	/* every file it lists is there, not empty */
	files = strdup(out);
	cr_assert_not_null(files);
	for (char *p = files; (p = strstr(p, "/demo-"));) {
		size_t n = strcspn(p, ",) \n'");
		cr_expect_eq(cli_run(out, sizeof(out), "test -s '%s%.*s'", dir, (int)n, p), 0,
			     "demo lists %.*s; it is not there", (int)n - 1, p + 1);
		p += n;
	}
	/* the commands it suggests, as printed (t410trace: the one under test) */
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && sed -n 's/^  t410trace /.\\/t410trace "
			     "/p' demo.out > next.sh && test $(wc -l < next.sh) = 2 && "
			     "sh -e next.sh 2>&1", dir), 0, "%s", out);
	cr_expect(strstr(out, ",rd_bw,") && strstr(out, ",gpu_stream,nvidia_ucf_pmu_"), "%s", out);
	if (t4t_have_cmds("python3")) {
		cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && sed -n 's/^  python3 /python3 /p' "
				     "demo.out > py.sh && test $(wc -l < py.sh) = 1 && "
				     "ulimit -v 1000000 && sh -e py.sh 2>&1", dir), 0, "%s", out);
		cr_expect(strstr(out, "'trigger', 'start_ns'") && strstr(out, "'kind': 'counter'"),
			  "%s", out);
	}
	free(files);
	cr_assert_eq(t4_rmtree(dir), 0, "%s", t4_errmsg());
	free(dir);
}

/* ---- LIBRARY.md: the app, built with pkg-config before install ------------- */

Test(docs, library_example_builds_and_records, .timeout = 120)
{
	char *doc = slurp("docs/LIBRARY.md"), *dir, *text, path[PATH_MAX + 16], pre[256] = "";
	char *script = NULL, *app = NULL;
	size_t len = 0, alen = 0;
	FILE *f = open_memstream(&script, &len), *a = open_memstream(&app, &alen);

	text = section(doc, "\n## From a program: libt410trace\n");
	code_blocks(text, "c", a);
	code_blocks(text, "sh", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(fclose(a), 0);
	cr_assert(strstr(app, "int main(void)") && strstr(script, "pkg-config"), "%s\n%s", app, script);
	t4t_need_cmd("pkg-config");
	if (getenv("T4_OUT") && strchr(getenv("T4_OUT"), ' '))
		cr_skip_test("the build folder's path has a space: pkg-config's flags, split at "
			     "spaces by the shell, cannot carry it (%s)", getenv("T4_OUT"));
	dir = clone_dir(true); /* the example builds ./app and runs it */
	snprintf(path, sizeof(path), "%s/app.c", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(app, f);
	cr_assert_eq(fclose(f), 0);
	/* the compiler for the target under test (a cross build's), as `cc` */
	if (strcmp(t4t_cc(), "cc"))
		snprintf(pre, sizeof(pre), "cc() { %s \"$@\"; }\n", t4t_cc());
	run_script(dir, "library.sh", pre, script);
	/* the app found the library without LD_LIBRARY_PATH, and its phases
	 * are in the log */
	char out[1 << 14];
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && env -u LD_LIBRARY_PATH ./app 2>&1 && "
				 "'%s' info --json app.t4t | grep -o '\"name\": \"[a-z]*\", "
				 "\"first_trigger\"'", dir, bin()), 0, "%s", out);
	cr_assert(strstr(out, "\"name\": \"load\", \"first_trigger\"") &&
		  strstr(out, "\"name\": \"compute\", \"first_trigger\""), "the app's bookmarks: %s",
		  out);
	free(script);
	free(app);
	free(doc);
	cr_assert_eq(t4_rmtree(dir), 0, "%s", t4_errmsg());
	free(dir);
}

/* ---- LIBRARY.md: ctl from a shell --------------------------------------------- */

/* The commands of "From a shell" as written: every ctl is answered (the
 * first ones ran before the recorder listened, each "no recorder
 * listening", and nothing ended the recording), and the bookmark is in
 * the log. */
Test(docs, library_ctl_example_runs_as_written, .timeout = 120)
{
	char *doc = slurp("docs/LIBRARY.md"), *dir, out[1 << 14];
	char *script = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&script, &len);

	t4t_need_perf(); /* it records this machine's counters */
	code_blocks(section(doc, "\n## From a shell: `t410trace ctl`\n"), "sh", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert(strstr(script, "ctl --control rec.sock bookmark warmup"), "%s", script);
	dir = clone_dir(false);
	run_script(dir, "ctl.sh", "export PATH=\"$PWD/build:$PATH\"\n", script);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' info run.t4t", dir, bin()), 0,
		     "%s", out);
	cr_expect(strstr(out, "bookmarks (1):") && strstr(out, " warmup "), "%s", out);
	free(script);
	free(doc);
	cr_assert_eq(t4_rmtree(dir), 0, "%s", t4_errmsg());
	free(dir);
}

/* ---- SIMULATOR.md: the virtual-time examples ---------------------------------- */

/* Its two commands as written, the hour cut to 10 s (an hour at 1 ms is
 * 2.6 GB and half a minute of CPU: make bench's); trigger k at t0 + k x
 * period up to the first grid point at or after the duration: 10,001 per
 * scheduler, two with --per-socket. */
Test(docs, simulator_examples_run_as_written, .timeout = 120)
{
	char *doc = slurp("docs/SIMULATOR.md"), *dir, *hour, out[256];
	char *script = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&script, &len);

	code_blocks(section(doc, "\n## Virtual time\n"), "sh", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_not_null(hour = strstr(script, "--duration 3600s --per-socket -o hour.t4t"),
			   "%s", script);
	memcpy(hour, "--duration   10s", 16);
	cr_assert(strstr(script, "-o hard.t4t"), "%s", script);
	dir = clone_dir(false);
	run_script(dir, "sim.sh", "export PATH=\"$PWD/build:$PATH\"\n", script);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && for f in hour hard; do '%s' info --json "
			     "$f.t4t | grep -o '\"triggers\": [0-9]*, \"first_trigger\": [0-9]*, "
			     "\"last_trigger\": [0-9]*'; done", dir, bin()), 0, "%s", out);
	cr_expect_str_eq(out, "\"triggers\": 20002, \"first_trigger\": 0, \"last_trigger\": 10000\n"
			      "\"triggers\": 10001, \"first_trigger\": 0, \"last_trigger\": 10000\n");
	free(script);
	free(doc);
	cr_assert_eq(t4_rmtree(dir), 0, "%s", t4_errmsg());
	free(dir);
}

/* ---- EVENTS.md: every example resolves, every error is the binary's ---------- */

/* The rows of the markdown table after heading: each row's cells. */
static void table_rows(char *doc, const char *heading,
		       void (*row)(const char *c1, size_t n1, const char *c2, size_t n2))
{
	char *text = section(doc, heading), *line = strstr(text, "\n|---");

	cr_assert_not_null(line, "no table under %s", heading);
	for (line = strchr(line + 1, '\n'); line && line[1] == '|'; line = strchr(line + 1, '\n')) {
		const char *c1 = line + 2, *bar = strstr(c1, " | "), *c2, *end;
		cr_assert_not_null(bar);
		c2 = bar + 3;
		end = strstr(c2, " |");
		cr_assert_not_null(end);
		row(c1, (size_t)(bar - c1), c2, (size_t)(end - c2));
	}
}

static size_t n_checked;

/* Forms: every example of the second column resolves against the test
 * fixture tree (it has every kind, the host's PMUs and an unknown one). */
static void form_row(const char *c1, size_t n1, const char *c2, size_t n2)
{
	char ex[16][512], out[4096];
	size_t n = code_spans(c2, n2, ex, 16);

	(void)c1;
	(void)n1;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(ex[i], "sched:", 6) && geteuid() != 0) {
			cr_log_info("%s: a tracepoint: tracefs needs root here; not checked", ex[i]);
			continue;
		}
		int rc = resolve("--sysfs-root tests/fixtures/sysfs/t410", ex[i], out, sizeof(out));
		cr_expect_eq(rc, 0, "EVENTS.md's example %s does not resolve: %s", ex[i], out);
		n_checked++;
	}
}

/* Errors: the binary's message for each input, "..." for elided text. */
static void error_row(const char *c1, size_t n1, const char *c2, size_t n2)
{
	char in[4][512], want[4][512], got[4096], msg[1100];

	cr_assert_geq(code_spans(c1, n1, in, 4), 1, "%.*s", (int)n1, c1);
	cr_assert_eq(code_spans(c2, n2, want, 4), 1, "%.*s", (int)n2, c2);
	if (!strncmp(in[0], "sched:", 6) && geteuid() != 0) {
		cr_log_info("%s: a tracepoint: tracefs needs root here; not checked", in[0]);
		return;
	}
	/* Tegra410 PMUs through the simulator, the rest on this machine */
	int rc = resolve(strstr(in[0], "nvidia_") ? "--sim" : "", in[0], got, sizeof(got));
	snprintf(msg, sizeof(msg), "t410trace: %s", want[0]);
	cr_expect_eq(rc, 2, "%s: exit %d", in[0], rc);
	cr_expect(matches(got, msg), "EVENTS.md says for %s:\n  %s\nthe binary:\n  %s", in[0], msg,
		  got);
	n_checked++;
}

Test(docs, events_examples_and_errors_are_the_binarys, .timeout = 120)
{
	char *doc = slurp("docs/EVENTS.md"), *dir = clone_dir(false), out[4096];

	events_dir = dir;
	n_checked = 0;
	table_rows(doc, "\n## Forms\n", form_row);
	cr_expect_gt(n_checked, 15, "the forms' examples");
	free(doc);
	doc = slurp("docs/EVENTS.md");
	n_checked = 0;
	table_rows(doc, "\n## Errors\n", error_row);
	cr_expect_gt(n_checked, 15, "the error table");
	free(doc);
	/* "Checking an encoding": the command and its output, as shown */
	doc = slurp("docs/EVENTS.md");
	char *cmd = strstr(section(doc, "\n## Checking an encoding\n"), "    $ t410trace ");
	cr_assert_not_null(cmd);
	char *end = strchr(cmd, '\n'), *shown = end + 1, *stop = strstr(shown, "\n\n");
	cr_assert_not_null(stop);
	*end = '\0';
	stop[1] = '\0';
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' %s", dir, bin(),
			     cmd + strlen("    $ t410trace ")), 0, "%s", out);
	for (char *l = shown; *l; l = strchr(l, '\n') + 1) /* drop the 4-space indent */
		memmove(l, l + 4, strlen(l + 4) + 1);
	cr_expect_str_eq(out, shown, "EVENTS.md shows:\n%s\nthe binary prints:\n%s", shown, out);
	free(doc);
	cr_assert_eq(t4_rmtree(dir), 0, "%s", t4_errmsg());
	free(dir);
}

/* ---- the man page and --help: one set of options, one name for each ------- */

/* The man page as text: font escapes (\fB, \fI, \fR, \fP) and quotes
 * dropped, \- as -, runs of blanks as one space. */
static char *man_text(void)
{
	char *doc = slurp("docs/t410trace.1"), *o = doc;

	for (const char *p = doc; *p; p++) {
		if (p[0] == '\\' && p[1] == 'f' && p[2]) {
			p += 2;
			continue;
		}
		if (p[0] == '\\' && p[1] == '-') {
			*o++ = '-';
			p++;
			continue;
		}
		if (*p == '"' || ((*p == ' ' || *p == '\t') && o > doc && o[-1] == ' '))
			continue;
		*o++ = *p == '\t' ? ' ' : *p;
	}
	*o = '\0';
	return doc;
}

static bool opt_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* Where text holds the option opt (--name) as a whole word, from p on. */
static const char *has_opt_from(const char *text, const char *p, const char *opt)
{
	size_t n = strlen(opt);

	for (; (p = strstr(p, opt)); p++)
		if ((p == text || !opt_char(p[-1])) && !opt_char(p[n]))
			return p;
	return NULL;
}

static const char *has_opt(const char *text, const char *opt)
{
	return has_opt_from(text, text, opt);
}

/* The next --option in text from p on, into opt; its end, NULL at the end
 * of text. */
static const char *next_opt(const char *text, const char *p, char *opt, size_t cap)
{
	for (; (p = strstr(p, "--")); p += 2) {
		if (p[2] < 'a' || p[2] > 'z' || (p > text && opt_char(p[-1])))
			continue;
		size_t n = 2;
		while (opt_char(p[n]) && n + 1 < cap)
			n++;
		snprintf(opt, cap, "%.*s", (int)n, p);
		return p + n;
	}
	return NULL;
}

/* Every option a command's --help lists is in the man page, under the
 * same argument name (DUR, FORMAT, ...: "-i DURATION" stood beside the man
 * page's "-i DUR", "--format FMT" beside "FORMAT"), or the man page spells
 * its values out (bpf|user|auto); every option the man page names is in
 * some --help, but an old name that still works or a knob the man page
 * says --help leaves out. Every command of t410trace --help has its
 * synopsis. */
Test(docs, man_page_and_help_name_the_same_options, .timeout = 60)
{
	static const char *const cmds[] = { "", "record", "decode", "list", "ctl",
					    "info", "report", "top" };
	char *man = man_text(), *helps = NULL, opt[64];
	size_t hlen = 0, n_opts = 0;
	FILE *h = open_memstream(&helps, &hlen);

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char out[1 << 14];
		cr_assert_eq(cli_run(out, sizeof(out), "'%s' %s --help", bin(), cmds[i]), 0,
			     "%s --help: %s", cmds[i], out);
		fputs(out, h);
		for (const char *p = out; (p = next_opt(out, p, opt, sizeof(opt)));) {
			cr_expect(has_opt(man, opt), "%s --help lists %s; the man page does not",
				  cmds[i], opt);
			n_opts++;
			if ((*p != ' ' && *p != '=') || p[1] < 'A' || p[1] > 'Z' || p[2] < 'A' ||
			    p[2] > 'Z')
				continue;
			char arg[32], want[128];
			size_t n = 0;
			while (p[1 + n] >= 'A' && p[1 + n] <= 'Z' && n + 1 < sizeof(arg))
				n++;
			snprintf(arg, sizeof(arg), "%.*s", (int)n, p + 1);
			snprintf(want, sizeof(want), "%s %s", opt, arg);
			bool same = false;
			for (const char *m = man; !same && (m = has_opt_from(man, m, opt)); m++) {
				const char *a = m + strlen(opt) + 1;
				same = !strncmp(m, want, strlen(want)) && !(a[n] >= 'A' && a[n] <= 'Z');
				/* values spelled out: --trigger bpf|user|auto */
				size_t w = strspn(a, "abcdefghijklmnopqrstuvwxyz0-9");
				same = same || (m[strlen(opt)] == ' ' && w && a[w] == '|');
			}
			cr_expect(same, "%s --help writes %s; the man page names that argument "
				  "otherwise", cmds[i], want);
		}
	}
	cr_assert_eq(fclose(h), 0);
	cr_expect_gt(n_opts, 60, "the options of --help");
	/* the project's own names for its sources are no user's words: the
	 * formulas are those list --metrics lists ("the seed-000 formulas") */
	cr_expect_null(strstr(helps, "seed-0"), "a --help speaks of seed-000");
	cr_expect_null(strstr(man, "seed-0"), "the man page speaks of seed-000");
	cr_expect_null(strstr(man, "patent"), "the man page speaks of the patent, which no user has");
	for (const char *p = man; (p = next_opt(man, p, opt, sizeof(opt)));) {
		if (has_opt(helps, opt))
			continue;
		char old[80];
		snprintf(old, sizeof(old), "old name %s", opt);
		const char *at = has_opt(man, opt), *hidden = strstr(at, "not listed by --help");
		cr_expect(strstr(man, old) || (hidden && hidden - at < 300),
			  "the man page names %s; no --help lists it (nor does the man page say "
			  "it is an old name, or left out of --help)", opt);
	}
	/* the commands */
	const char *list = strstr(helps, "commands:\n");
	cr_assert_not_null(list, "%s", helps);
	size_t n_cmds = 0;
	for (const char *l = strchr(list, '\n') + 1; !strncmp(l, "  ", 2) && l[2] != ' ';
	     l = strchr(l, '\n') + 1) {
		char want[64];
		snprintf(want, sizeof(want), ".B t410trace %.*s", (int)strcspn(l + 2, " \n"), l + 2);
		cr_expect(strstr(man, want), "the man page's synopsis lacks %s", want + 3);
		n_cmds++;
	}
	cr_expect_eq(n_cmds, 7, "t410trace --help's commands");
	free(helps);
	free(man);
}

/* ---- make install: what to add to PATH ---------------------------------------- */

/* OUT for `make -C repo`: the build folder relative to the checkout where
 * it lies inside (make cannot take a path with spaces; the checkout's
 * may have some), else as it is. */
static const char *out_for_make(const char *repo, const char *out)
{
	size_t n = strlen(repo);

	return !strncmp(out, repo, n) && out[n] == '/' ? out + n + 1 : out;
}

Test(docs, install_says_what_to_add_to_path, .timeout = 120)
{
	const char *out = getenv("T4_OUT");
	char repo[PATH_MAX], real_out[PATH_MAX], text[1 << 14], *dir = malloc(PATH_MAX);

	if (!out || !realpath(out, real_out))
		cr_skip_test("T4_OUT not set (run through make check)");
	cr_assert_not_null(dir);
	t4t_exec_tmpdir(dir, PATH_MAX, "t4inst"); /* PREFIX/bin/t410trace runs */
	cr_assert_not_null(cli_repo_file("Makefile", repo));
	*strrchr(repo, '/') = '\0';
	t4t_need_cmd("make");
	out = out_for_make(repo, real_out);
	if (strchr(out, ' ') || strchr(dir, ' ')) {
		t4_rmtree(dir);
		cr_skip_test("make cannot take a path with a space in OUT or PREFIX (%s, %s)", out,
			     dir);
	}
	/* nothing to build: the install copies what make check built */
	if (cli_run(text, sizeof(text), "make -C '%s' -q OUT=%s all 2>&1", repo, out) != 0)
		cr_skip_test("%s is not up to date for %s: not installing from it", out, repo);
	int rc = cli_run(text, sizeof(text), "PATH=/usr/bin:/bin make -s -C '%s' OUT=%s PREFIX=%s "
			 "install 2>&1", repo, out, dir);
	cr_assert_eq(rc, 0, "%s", text);
	char want[PATH_MAX * 3];
	snprintf(want, sizeof(want), "t410trace: %s/bin is not in PATH; add it: export "
		 "PATH=\"%s/bin:$PATH\"\n", dir, dir);
	cr_expect(strstr(text, want), "no PATH hint:\n%s", text);
	rc = cli_run(text, sizeof(text), "PATH=%s/bin:/usr/bin:/bin make -s -C '%s' OUT=%s PREFIX=%s "
		     "install 2>&1 && %s/bin/t410trace --help >/dev/null", dir, repo, out, dir, dir);
	cr_assert_eq(rc, 0, "%s", text);
	cr_expect_null(strstr(text, "is not in PATH"), "a hint though it is in PATH:\n%s", text);
	cr_assert_eq(t4_rmtree(dir), 0, "%s", t4_errmsg());
	free(dir);
}
