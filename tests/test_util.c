/* test_util.c - util/: durations, CPU lists, suggestions, private
 * temporary directories.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tmpdir_testutil.h"
#include "util/util.h"

/* Minutes and hours, as perf users and the help text say them. */
Test(util, durations_minutes_and_hours)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} ok[] = {
		{ "1m", 60000000000ull },     { "1min", 60000000000ull },
		{ "2h", 7200000000000ull },   { "1.5h", 5400000000000ull },
		{ "0.5m", 30000000000ull },   { "250ms", 250000000ull },
	};
	uint64_t ns;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_assert_eq(t4_parse_duration(ok[i].s, &ns), 0, "%s: %s", ok[i].s, t4_errmsg());
		cr_assert_eq(ns, ok[i].ns, "%s: %llu", ok[i].s, (unsigned long long)ns);
	}
	cr_assert_eq(t4_parse_duration("3d", &ns), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "'3d': unknown unit 'd' (use ns, us, ms, s, m (or min), h)");
	cr_assert_eq(t4_parse_duration("30", &ns), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "'30': duration needs a unit (ns, us, ms, s, m (or min), h)");
	/* decimal, as the man page says: strtod read 0x10s as 16 s */
	cr_assert_eq(t4_parse_duration("1e3us", &ns), 0, "%s", t4_errmsg());
	cr_assert_eq(ns, 1000000);
	static const char *const hex[] = { "0x10s", "0X1p3s", "0x.8ms" };
	for (size_t i = 0; i < sizeof(hex) / sizeof(hex[0]); i++) {
		cr_assert_eq(t4_parse_duration(hex[i], &ns), -EINVAL, "%s", hex[i]);
		cr_assert(strstr(t4_errmsg(), "not a duration"), "%s", t4_errmsg());
		cr_assert_eq(t4_parse_offset(hex[i], &ns), -EINVAL, "%s", hex[i]);
	}
}

/* t4_cpulist_first_absent()'s CPU (-1: none), or its error. */
static int first_absent(const char *want, const char *have)
{
	int absent = -2, rc = t4_cpulist_first_absent(want, have, &absent);

	return rc < 0 ? rc : absent;
}

/* The lowest CPU of one list another lacks (-C against the online CPUs). */
Test(util, cpulist_first_absent)
{
	cr_assert_eq(first_absent("0-3,8", "0-8"), -1);
	cr_assert_eq(first_absent("1,1", "0-1"), -1);
	cr_assert_eq(first_absent("9999", "0-1"), 9999);
	cr_assert_eq(first_absent("0,2-3", "0-1"), 2);
	cr_assert_eq(first_absent("70,5,0-65", "0-3,6-69"), 4);
	cr_assert_eq(first_absent("x", "0-1"), -EINVAL);
	cr_assert_eq(first_absent("0", ""), -EINVAL);
}

/* Out of range both ways, said with the range; a number past what a
 * double holds (1e400) is out of range too, not "not a duration", and
 * one under its least (1e-400) is 0: under 1ns, or 0 for a time. */
Test(util, durations_out_of_range_say_the_range)
{
	static const char *const big[] = { "18446744073709551616s", "277778h", "1e19ns",
					   "1e400s", "99999999999999999999999999999999999h" };
	uint64_t ns = 7;

	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		char want[128];

		cr_assert_eq(t4_parse_duration(big[i], &ns), -ERANGE, "%s: %s", big[i], t4_errmsg());
		snprintf(want, sizeof(want), "'%s': duration out of range (at most 1e18ns, 277777h)",
			 big[i]);
		cr_assert_str_eq(t4_errmsg(), want);
		cr_assert_eq(t4_parse_offset(big[i], &ns), -ERANGE, "%s", big[i]);
	}
	cr_assert_eq(t4_parse_duration("277777h", &ns), 0, "%s", t4_errmsg());
	cr_assert_eq(ns, 999997200000000000ull);
	cr_assert_eq(t4_parse_duration("1e-400s", &ns), -ERANGE);
	cr_assert_str_eq(t4_errmsg(), "'1e-400s': duration out of range (under 1ns)");
	cr_assert_eq(t4_parse_offset("1e-400s", &ns), 0, "%s", t4_errmsg());
	cr_assert_eq(ns, 0);
}

Test(util, cpulist_has)
{
	cr_assert_eq(t4_cpulist_has("0-3,8", 2), 1);
	cr_assert_eq(t4_cpulist_has("0-3,8", 8), 1);
	cr_assert_eq(t4_cpulist_has("0-3,8", 5), 0);
	cr_assert_eq(t4_cpulist_has("1", 0), 0);
	cr_assert_eq(t4_cpulist_has("x", 0), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "'x': malformed CPU list");
}

Test(util, suggestions)
{
	static const char *const cmds[] = { "record", "decode", "list", "ctl", "info" };
	char buf[64];

	cr_assert_str_eq(t4_suggest("recrod", cmds, 5, t4_strv_at), "record");
	cr_assert_str_eq(t4_suggest("inf", cmds, 5, t4_strv_at), "info");
	cr_assert_null(t4_suggest("frobnicate", cmds, 5, t4_strv_at));
	cr_assert_str_eq(t4_did_you_mean(buf, sizeof(buf), "record"), " (did you mean record?)");
	cr_assert_str_eq(t4_did_you_mean(buf, sizeof(buf), NULL), "");
}

/* The PID of a process that is gone (forked, exited, reaped). */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/* A directory left by a process that died (kill -9) is reclaimed by the
 * next creation of the same prefix; a live process's directory and one
 * of another shape are kept. */
Test(util, tmpdir_reclaims_dead_owners_only)
{
	char root[PATH_MAX], dead[PATH_MAX + 64], live[PATH_MAX + 64], other[PATH_MAX + 64],
	     mine[PATH_MAX + 64];
	struct stat st;
	pid_t pid;

	t4t_tmpdir(root, sizeof(root), "t4util"); /* before the fork: the child makes none */
	pid = gone_pid();
	snprintf(dead, sizeof(dead), "%s/t410test-%d-abcdef", root, (int)pid);
	snprintf(live, sizeof(live), "%s/t410test-%d-abcdef", root, (int)getppid());
	snprintf(other, sizeof(other), "%s/t410test-%d-abc", root, (int)pid);
	cr_assert_eq(t4_mkdirs(dead, 0700), 0);
	cr_assert_eq(t4_write_small_file(strcat(strcpy(mine, dead), "/f"), "x"), 0);
	cr_assert_eq(t4_mkdirs(live, 0700), 0);
	cr_assert_eq(t4_mkdirs(other, 0700), 0);
	setenv("TMPDIR", root, 1);
	cr_assert_eq(t4_tmpdir_create(mine, sizeof(mine), "t410test"), 0, "%s", t4_errmsg());
	unsetenv("TMPDIR");
	cr_assert_neq(stat(dead, &st), 0, "a dead process's directory was kept");
	cr_assert_eq(stat(live, &st), 0, "a live process's directory was removed");
	cr_assert_eq(stat(other, &st), 0, "a directory of another shape was removed");
	cr_assert_eq(stat(mine, &st), 0);
	char want[64];
	snprintf(want, sizeof(want), "/t410test-%d-", (int)getpid());
	cr_assert(strstr(mine, want), "%s", mine);
	cr_assert_eq(t4_rmtree(root), 0);
}

/* Where the caller names the one file its directories keep (record's
 * FILE.partial-*: "log"), a dead owner's directory is reclaimed while that
 * file is empty or absent (a run killed during start-up), never once the
 * file has bytes: a log of a run killed before it was named is data. */
Test(util, privdir_keeps_a_dead_owners_file_with_bytes)
{
	char root[PATH_MAX], empty[PATH_MAX + 64], none[PATH_MAX + 64], data[PATH_MAX + 64],
	     path[PATH_MAX + 80], mine[PATH_MAX + 64];
	struct stat st;
	pid_t pid;

	t4t_tmpdir(root, sizeof(root), "t4util");
	pid = gone_pid();
	snprintf(empty, sizeof(empty), "%s/k.partial-%d-aaaaaa", root, (int)pid);
	snprintf(none, sizeof(none), "%s/k.partial-%d-bbbbbb", root, (int)pid);
	snprintf(data, sizeof(data), "%s/k.partial-%d-cccccc", root, (int)pid);
	cr_assert_eq(t4_mkdirs(empty, 0700), 0);
	cr_assert_eq(t4_mkdirs(none, 0700), 0);
	cr_assert_eq(t4_mkdirs(data, 0700), 0);
	snprintf(path, sizeof(path), "%s/log", empty);
	cr_assert_eq(t4_write_small_file(path, ""), 0);
	snprintf(path, sizeof(path), "%s/log", data);
	cr_assert_eq(t4_write_small_file(path, "T4TRACE"), 0);
	cr_assert_eq(t4_privdir_create(mine, sizeof(mine), root, "k.partial", "log"), 0, "%s",
		     t4_errmsg());
	cr_assert_neq(stat(empty, &st), 0, "a dead run's empty log was kept");
	cr_assert_neq(stat(none, &st), 0, "a dead run's empty directory was kept");
	cr_assert_eq(stat(path, &st), 0, "a dead run's log with bytes was removed");
	cr_assert_eq(st.st_size, 7);
	cr_assert_eq(t4_rmtree(root), 0);
}

/* t4_create_unique names its file <base>.tmp-<pid>-XXXXXX and first removes
 * those names' files of dead processes of this user next to base: not a
 * live process's, nor another shape, nor a link or a directory. */
Test(util, unique_names_reclaim_dead_writers_files)
{
	char root[PATH_MAX], base[PATH_MAX + 8], p[6][PATH_MAX + 64], made[PATH_MAX + 64];
	struct stat st;
	pid_t pid;

	t4t_tmpdir(root, sizeof(root), "t4util");
	pid = gone_pid();
	snprintf(base, sizeof(base), "%s/out.csv", root);
	snprintf(p[0], sizeof(p[0]), "%s.tmp-%d-abcdef", base, (int)pid);       /* reclaimed */
	snprintf(p[1], sizeof(p[1]), "%s.tmp-%d-abcdef", base, (int)getppid()); /* alive */
	snprintf(p[2], sizeof(p[2]), "%s.tmp-%d-abc", base, (int)pid);          /* shape */
	snprintf(p[3], sizeof(p[3]), "%s.tmp-%d-linkxx", base, (int)pid);       /* a link */
	snprintf(p[4], sizeof(p[4]), "%s.tmp-%d-dirxxx", base, (int)pid);       /* a dir */
	snprintf(p[5], sizeof(p[5]), "%s/other.tmp-%d-abcdef", root, (int)pid); /* other OUT */
	for (int i = 0; i < 6; i++)
		if (i == 3)
			cr_assert_eq(symlink(p[0], p[3]), 0);
		else if (i == 4)
			cr_assert_eq(mkdir(p[4], 0700), 0);
		else
			cr_assert_eq(t4_write_small_file(p[i], "x"), 0);
	int fd = t4_create_unique(made, sizeof(made), base, 0600);
	cr_assert_geq(fd, 0, "%s", t4_errmsg());
	close(fd);
	cr_assert_neq(lstat(p[0], &st), 0, "a dead writer's file was kept");
	for (int i = 1; i < 6; i++)
		cr_assert_eq(lstat(p[i], &st), 0, "%s was removed", p[i]);
	char want[64];
	snprintf(want, sizeof(want), ".tmp-%d-", (int)getpid());
	cr_assert(strstr(made, want), "%s", made);
	cr_assert_eq(t4_rmtree(root), 0);
}

/* A number or a duration starts with a digit (a duration also with a
 * point): a leading tab or line break was skipped by strtoull and strtod,
 * so "\t-1" was 2^64 - 1 (--sim=SEED, -j, T410TRACE_HOLD_MAX) where "-1"
 * is refused. */
Test(util, numbers_and_durations_refuse_leading_blanks_and_signs)
{
	static const char *const bad[] = { "\t-1", "\n5", " 5", "\v7", "-1", "+1", "", "x1" };
	static const char *const bad_dur[] = { "\t1ms", "\n-1s", " 1s", "-1s", "+1s", "infs", "nans" };
	uint64_t v;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(t4_parse_u64(bad[i], &v), -EINVAL, "'%s' taken as %llu", bad[i],
			     (unsigned long long)v);
	for (size_t i = 0; i < sizeof(bad_dur) / sizeof(bad_dur[0]); i++)
		cr_assert_eq(t4_parse_duration(bad_dur[i], &v), -EINVAL, "'%s' taken as %llu ns",
			     bad_dur[i], (unsigned long long)v);
	cr_assert_eq(t4_parse_u64("0x10", &v), 0);
	cr_assert_eq(v, 16);
	cr_assert_eq(t4_parse_duration(".5ms", &v), 0);
	cr_assert_eq(v, 500000);
}

/* A leading 0 is not octal, as in event terms (pmu/event=010/) and perf's
 * -I: -I 010 was an 8 ms period and -j 08 "not a number". */
Test(util, numbers_with_a_leading_zero_are_decimal)
{
	uint64_t v;

	cr_assert_eq(t4_parse_u64("010", &v), 0);
	cr_assert_eq(v, 10);
	cr_assert_eq(t4_parse_u64("08", &v), 0, "%s", t4_errmsg());
	cr_assert_eq(v, 8);
	cr_assert_eq(t4_parse_u64("0", &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(t4_parse_u64("0X1f", &v), 0);
	cr_assert_eq(v, 31);
	cr_assert_eq(t4_parse_u64("0x", &v), -EINVAL);
	cr_assert_eq(t4_parse_u64("0x-1", &v), -EINVAL);
	cr_assert_eq(t4_parse_u64("1x10", &v), -EINVAL);
}

/* An error path that returns a negative errno sets its own message: a
 * stale one from an earlier error is never what gets printed. */
Test(util, errors_set_their_message)
{
	uint64_t v;

	(void)t4_err(EIO, "stale");
	cr_assert_eq(t4_parse_u64("12x", &v), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "'12x': not a number");
	(void)t4_err(EIO, "stale");
	cr_assert_eq(t4_parse_u64("99999999999999999999", &v), -ERANGE);
	cr_assert_str_eq(t4_errmsg(), "'99999999999999999999': too large for 64 bits");
	(void)t4_err(EIO, "stale");
	cr_assert_lt(t4_rmtree("/proc/self/status"), 0);
	cr_assert(strstr(t4_errmsg(), "/proc/self/status: cannot remove: "), "%s", t4_errmsg());
	/* a name's line break or escape sequence reaches no terminal */
	(void)t4_err(ENOENT, "'%s': cannot open", "a\nb\x1b[31mc\x7f\td");
	cr_assert_str_eq(t4_errmsg(), "'a b [31mc  d': cannot open");
	/* nor a byte that is not UTF-8 (shown as \xNN: text, for JSON too), nor
	 * a C1 control (U+009B is a terminal's CSI); other UTF-8 stays */
	(void)t4_err(ENOENT, "'%s': cannot open", "n\xffo\xc2\x9b[2J\xe2\x82\xac\xc0\xaf");
	cr_assert_str_eq(t4_errmsg(), "'n\\xffo [2J\xe2\x82\xac\\xc0\\xaf': cannot open");
	/* a message given its own t4_errmsg() keeps it as it was */
	(void)t4_err(EIO, "again: %s", t4_errmsg());
	cr_assert_str_eq(t4_errmsg(), "again: 'n\\xffo [2J\xe2\x82\xac\\xc0\\xaf': cannot open");
}

/* A message longer than its buffer loses its middle, never its end (the
 * reason), even when the input it quotes is longer than any stack buffer;
 * a CPU listed twice counts once. */
Test(util, long_messages_keep_their_end)
{
	static char input[20000];
	const char *m;
	int n = 0;

	memset(input, 'x', sizeof(input) - 1);
	for (size_t len = 100; len < sizeof(input); len = len * 3 + 1) {
		input[len] = '\0';
		cr_assert_eq(t4_err(EINVAL, "'%s': the reason", input), -EINVAL);
		m = t4_errmsg();
		cr_assert_lt(strlen(m), 512);
		cr_assert(!strcmp(m + strlen(m) - 13, "': the reason"), "%zu: %s", len, m);
		cr_assert_eq(m[0], '\'');
		input[len] = 'x';
	}
	/* the cut falls between characters, never inside one: every "\xe2\x82\xac" whole */
	for (size_t i = 0; i + 3 < sizeof(input); i += 3)
		memcpy(input + i, "\xe2\x82\xac", 3);
	for (size_t len = 3000; len < 3003; len++) {
		input[len] = '\0';
		(void)t4_err(EINVAL, "%s", input + (len - 3000));
		m = t4_errmsg();
		cr_assert(strstr(m, "...") && t4_text_clean(m, 0), "%zu: %s", len, m);
		input[len] = (char)"\xe2\x82\xac"[len % 3];
	}
	cr_assert_eq(t4_cpulist_first("0,0", &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(t4_cpulist_first("3-5,4,0-1", &n), 3);
	cr_assert_eq(n, 5);
}

/* An environment switch (T410TRACE_BPF_DEBUG): on when set to anything
 * but nothing or 0. */
Test(util, env_switches_are_off_unset_empty_or_0)
{
	const char *name = "T4_TEST_SWITCH";
	static const struct {
		const char *v;
		bool on;
	} cases[] = { { "", false }, { "0", false }, { "1", true }, { "yes", true }, { "00", true } };

	unsetenv(name);
	cr_assert(!t4_env_on(name));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv(name, cases[i].v, 1);
		cr_assert_eq(t4_env_on(name), cases[i].on, "'%s'", cases[i].v);
	}
	unsetenv(name);
}

/* Every variable t410trace reads (TMPDIR, T410TRACE_CONTROL, the
 * launchers', T410TRACE_HOLD_MAX, T410TRACE_TRACEFS) is read through
 * t4_env: empty is unset, anything else is the value as it is. */
Test(util, an_empty_variable_is_unset)
{
	const char *name = "T4_TEST_VAR";

	unsetenv(name);
	cr_assert_null(t4_env(name));
	setenv(name, "", 1);
	cr_assert_null(t4_env(name));
	setenv(name, " ", 1);
	cr_assert_str_eq(t4_env(name), " ");
	setenv(name, "0", 1);
	cr_assert_str_eq(t4_env(name), "0");
	unsetenv(name);
	setenv("TMPDIR", "", 1);
	cr_assert_str_eq(t4_tmp_root(), "/tmp");
	unsetenv("TMPDIR");
}
