/* test_safety.c - `record` never loses a user's data (suite "safety"):
 * an existing output is kept as FILE.old (or refused, or replaced with
 * --force), a command that cannot run publishes nothing, messages name
 * the user's file and a full disk still gets the summary; process
 * hygiene: the workload dies with record (kill -9), temporary directories
 * are reclaimed after kill -9 and removed after SIGPIPE, a workload deaf
 * to Ctrl-C is killed by the third.
 */
#include "cli_testutil.h"
#include "tests/probe.h"

/* Run `record` in r.dir; the shell line may use "$B" (the binary) and
 * "$D" (exported: quote them, a checkout path may have spaces). */
static void rec_sh(struct run *r, const char *line)
{
	sh(r, "export B='%s' D='%s'; cd \"$D\" || exit 99; %s", bin(), r->dir, line);
}

Test(safety, existing_output_kept_as_old, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	rec_sh(&r, "printf precious > k.t4t && \"$B\" record -q -d 50ms -o k.t4t; echo rc=$?; "
		   "cat k.t4t.old; echo; \"$B\" info k.t4t >/dev/null && echo log-ok; ls");
	cr_assert(strstr(r.out, "rc=0"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: k.t4t existed: kept as k.t4t.old"), "%s", r.out);
	cr_assert(strstr(r.out, "precious\n"), "%s", r.out);
	cr_assert(strstr(r.out, "log-ok"), "%s", r.out);
	cr_assert_null(strstr(r.out, "partial"), "%s", r.out);
	cleanup(&r);
}

Test(safety, old_exists_too_refused_unless_force, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	rec_sh(&r, "printf one > k.t4t && printf two > k.t4t.old && "
		   "\"$B\" record -q -d 50ms -o k.t4t; echo rc=$?; cat k.t4t k.t4t.old; echo; ls");
	cr_assert(strstr(r.out, "rc=2"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: k.t4t exists and so does k.t4t.old: refusing to "
				"replace either (remove or rename one, or use --force to replace "
				"k.t4t)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "onetwo\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "partial"), "%s", r.out);
	rec_sh(&r, "\"$B\" record -q -d 50ms --force -o k.t4t; echo rc=$?; cat k.t4t.old; echo; "
		   "\"$B\" info k.t4t >/dev/null && echo log-ok");
	cr_assert(strstr(r.out, "rc=0"), "%s", r.out);
	cr_assert(strstr(r.out, "two\nlog-ok"), "--force replaces FILE only: %s", r.out);
	rec_sh(&r, "mkdir dir.t4t; \"$B\" record -q -d 50ms -o dir.t4t; echo rc=$?");
	cr_assert(strstr(r.out, "dir.t4t: is a directory"), "%s", r.out);
	cleanup(&r);
}

/* `-- nosuchcmd` exits 127 as a shell would, and the good log stays. */
Test(safety, command_that_cannot_run_publishes_nothing, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	rec_sh(&r, "\"$B\" record -q -d 50ms -o good.t4t && cp good.t4t ref.t4t && "
		   "\"$B\" record -q --sim -o good.t4t -- ./nosuchcmd; echo rc=$?; "
		   "cmp good.t4t ref.t4t && echo same; ls");
	cr_assert(strstr(r.out, "rc=127"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: cannot run './nosuchcmd': No such file or directory; "
				"nothing recorded (good.t4t left as it was)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "same"), "%s", r.out);
	cr_assert_null(strstr(r.out, "good.t4t.old"), "%s", r.out);
	cr_assert_null(strstr(r.out, "partial"), "%s", r.out);
	rec_sh(&r, "printf '#!/bin/sh\\n' > noexec; \"$B\" record -q -o new.t4t -- ./noexec; "
		   "echo rc=$?; ls");
	cr_assert(strstr(r.out, "rc=126"), "%s", r.out);
	cr_assert(strstr(r.out, "Permission denied; nothing recorded\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "new.t4t"), "%s", r.out);
	cleanup(&r);
}

/* A full disk (here: a file size limit): the summary as usual, saying how
 * much the log holds, and messages naming the user's file. */
Test(safety, disk_full_summary_names_the_file, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	rec_sh(&r, "sh -c 'trap \"\" XFSZ; ulimit -f 400; exec \"$B\" record --sim -d 2s -o full.t4t'; "
		   "echo rc=$?; \"$B\" info --json full.t4t | grep -o '\"damaged_chunks\": [0-9]*'; "
		   "stat -c size=%s full.t4t");
	cr_assert(strstr(r.out, "rc=1"), "%s", r.out);
	cr_assert_null(strstr(r.out, "partial"), "a message names the temporary file: %s", r.out);
	cr_assert(strstr(r.out, "triggers in"), "no summary: %s", r.out);
	const char *held = strstr(r.out, "t410trace: the log stopped early; full.t4t: ");
	cr_assert_not_null(held, "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: full.t4t: File too large after "), "%s", r.out);
	cr_assert(strstr(r.out, "\"damaged_chunks\": 0"), "%s", r.out);
	/* the writer counted chunks the disk refused: no totals, info has them */
	cr_assert(strstr(r.out, "t410trace: no totals: the log stopped early ('t410trace info "
				"full.t4t' gives what it holds)\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "every event's total"), "%s", r.out);
	cleanup(&r);
}

/* Whether process pid is gone (or a zombie nobody reaped yet). */
static const char *gone_check = "gone() { [ ! -e /proc/$1 ] || grep -q '^[0-9]* ([^)]*) Z' /proc/$1/stat; }; ";

/* kill -9 of record: the workload gets SIGTERM (PR_SET_PDEATHSIG), and
 * the next run reclaims the temporary directories left behind. (pwrite:
 * where io_uring is missing, e.g. qemu-user, the fallback's warning would
 * come between the lines compared.) */
Test(safety, kill9_kills_the_workload_and_the_next_run_reclaims, .timeout = 60)
{
	struct run r;
	char line[2048];

	tmpdir(&r);
	snprintf(line, sizeof(line),
		 "%s mkdir tmp; export TMPDIR=\"$D/tmp\"; "
		 "\"$B\" record -q --sim --backend pwrite -o k.t4t -- sleep 30 & rec=$!; "
		 "for i in $(seq 600); do c=$(pgrep -P $rec sleep) && break; sleep 0.05; done; "
		 "[ -n \"$c\" ] || echo no-child; sleep 0.2; ls tmp | sed 's/-[0-9]*-.*//' | sort | "
		 "tr '\\n' ' '; echo; kill -9 $rec; wait $rec; "
		 "for i in $(seq 600); do gone $c && break; sleep 0.05; done; "
		 "gone $c && echo workload-gone; ls tmp | wc -l; "
		 "\"$B\" record -q --sim --backend pwrite -o k2.t4t -- true; echo rc=$?; ls tmp | wc -l",
		 gone_check);
	rec_sh(&r, line);
	cr_assert_null(strstr(r.out, "no-child"), "%s", r.out);
	cr_assert(strstr(r.out, "t410sim t410trace \n"), "the run's directories: %s", r.out);
	cr_assert(strstr(r.out, "workload-gone\n2\nrc=0\n0\n"), "%s", r.out);
	cleanup(&r);
}

/* `list --sim | head`: SIGPIPE no longer kills list before it removes its
 * simulated tree (`| true`: the reader is gone before the first write). */
Test(safety, sigpipe_leaves_no_tree, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	rec_sh(&r, "mkdir tmp; (TMPDIR=\"$D/tmp\" \"$B\" list --sim; echo rc=$? > rc) | true; "
		   "cat rc; ls tmp | wc -l");
	cr_assert(strstr(r.out, "rc=141\n0\n"), "%s", r.out);
	cleanup(&r);
}

/* A workload that ignores SIGINT: the second Ctrl-C says so, the third
 * kills it, and the exit code says it was killed. Each Ctrl-C is sent once
 * the workload runs (record's handler is set) and the one before has been
 * delivered (no longer pending in /proc/PID/status: two pending SIGINTs
 * would be one), however slow the machine. */
Test(safety, third_interrupt_kills_a_deaf_workload, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	rec_sh(&r, "\"$B\" record -q -o s.t4t -- sh -c 'trap \"\" INT TERM; : > ready; exec sleep 30' "
		   "& rec=$!; delivered() { while grep -q '^ShdPnd:.*[2367abef]$' /proc/$rec/status; "
		   "do sleep 0.01; done; }; for i in $(seq 3000); do [ -e ready ] && break; sleep 0.01; "
		   "done; kill -INT $rec; delivered; kill -INT $rec; delivered; "
		   "kill -INT $rec; wait $rec; echo rc=$?; \"$B\" info s.t4t > /dev/null && echo log-ok");
	cr_assert(strstr(r.out, "t410trace: 'sh' is still running; sent Interrupt again (once "
				"more kills it with SIGKILL)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: killing 'sh' (SIGKILL)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: 'sh' was killed by signal 9 (Killed)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "rc=137\nlog-ok"), "%s", r.out);
	cleanup(&r);
}
