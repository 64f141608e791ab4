/* test_safety.c - `record` never loses a user's data (suite "safety"):
 * an existing output is kept as FILE.old (or refused, or replaced with
 * --force), a command that cannot run publishes nothing, messages name
 * the user's file and a full disk still gets the summary, a log that
 * cannot be finished (its disk full, its name taken) exits 1; process
 * hygiene: the workload dies with record (kill -9), temporary directories
 * are reclaimed after kill -9 and removed after SIGPIPE, a workload deaf
 * to Ctrl-C is killed by the third.
 */
#include "cli_testutil.h"
#include "probe.h"

#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>

Test(safety, existing_output_kept_as_old, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	sh_in_dir(&r, "printf precious > k.t4t && \"$B\" record -q -d 50ms -o k.t4t; echo rc=$?; "
		  "cat k.t4t.old; echo; \"$B\" info k.t4t >/dev/null && echo log-ok; ls");
	cr_assert(strstr(r.out, "rc=0"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: k.t4t existed: kept as k.t4t.old"), "%s", r.out);
	cr_assert(strstr(r.out, "precious\n"), "%s", r.out);
	cr_assert(strstr(r.out, "log-ok"), "%s", r.out);
	cr_assert_null(strstr(r.out, "partial"), "%s", r.out);
	cleanup(&r);
}

/* The lines that quote the log's name or the command (its old file
 * kept, the command killed) show control characters as \xNN, as every
 * other line does: they went raw to the terminal (an escape sequence
 * in a file name ran, a newline split the line). */
Test(safety, names_in_notices_move_no_cursor, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "E=$(printf 'k\\033[2J\\nx.t4t') && C=$(printf 's\\033h') && "
		      "printf precious > \"$E\" && ln -s \"$(command -v sh)\" \"$C\" && "
		      "\"$B\" record --sim -q -o \"$E\" -- \"./$C\" -c 'kill -9 $$'; echo rc=$?; "
		      "\"$B\" info \"$E\" >/dev/null && echo log-ok");
	cr_assert(strstr(r.out, "t410trace: k\\x1b[2J\\x0ax.t4t existed: kept as "
				"k\\x1b[2J\\x0ax.t4t.old\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: './s\\x1bh' was killed by signal 9 (Killed)\n"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "rc=137\nlog-ok\n"), "%s", r.out);
	cr_assert_null(strchr(r.out, '\033'), "%s", r.out);
	cleanup(&r);
}

Test(safety, old_exists_too_refused_unless_force, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	sh_in_dir(&r, "printf one > k.t4t && printf two > k.t4t.old && "
		  "\"$B\" record -q -d 50ms -o k.t4t; echo rc=$?; cat k.t4t k.t4t.old; echo; ls");
	cr_assert(strstr(r.out, "rc=2"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: k.t4t exists and so does k.t4t.old: refusing to "
				"replace either (remove or rename one, or use --force to replace "
				"k.t4t)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "onetwo\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "partial"), "%s", r.out);
	sh_in_dir(&r, "\"$B\" record -q -d 50ms --force -o k.t4t; echo rc=$?; cat k.t4t.old; echo; "
		  "\"$B\" info k.t4t >/dev/null && echo log-ok");
	cr_assert(strstr(r.out, "rc=0"), "%s", r.out);
	cr_assert(strstr(r.out, "two\nlog-ok"), "--force replaces FILE only: %s", r.out);
	sh_in_dir(&r, "mkdir dir.t4t; \"$B\" record -q -d 50ms -o dir.t4t; echo rc=$?");
	cr_assert(strstr(r.out, "dir.t4t: is a directory"), "%s", r.out);
	cleanup(&r);
}

/* --force replaces FILE and makes no FILE.old. */
Test(safety, force_makes_no_old, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "printf one > k.t4t && \"$B\" record -q --sim --backend pwrite -d 20ms --force "
		  "-o k.t4t; echo rc=$?; \"$B\" info k.t4t > /dev/null && echo log-ok; ls");
	cr_assert_str_eq(r.out, "rc=0\nlog-ok\nk.t4t\n");
	cleanup(&r);
}

/* A FILE whose private directory (FILE.partial-PID-XXXXXX) cannot be made
 * is refused with the reason that holds for FILE, named: /proc/x.t4t was
 * "No such file or directory" (mkdtemp's ENOENT in a directory that takes
 * no new files), and a name of 250 bytes, which fits NAME_MAX, "File name
 * too long" (its temporary name's). */
Test(safety, a_file_that_cannot_be_made_says_why_of_its_name, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q --sim -d 20ms -o /proc/x.t4t; echo rc=$?");
	cr_assert_str_eq(r.out, "t410trace: /proc/x.t4t: cannot create a file in /proc: it takes no "
				"new files\nrc=2\n");
	sh_in_dir(&r, "N=$(printf '%0246d' 0).t4t && \"$B\" record -q --sim -d 20ms -o \"$N\"; "
		      "echo rc=$?; ls");
	cr_assert(strstr(r.out, "0.t4t: name too long for the log's temporary name next to it "
				"(FILE.partial-PID-XXXXXX, until the recording runs; 255 bytes at "
				"most): shorten it by "), "%s", r.out);
	cr_assert(strstr(r.out, " bytes\nrc=2\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "File name too long"), "%s", r.out);
	sh_in_dir(&r, "\"$B\" record -q --sim -d 20ms -o no/x.t4t; echo rc=$?");
	cr_assert_str_eq(r.out, "t410trace: no/x.t4t: the directory no: No such file or directory\n"
				"rc=2\n");
	cleanup(&r);
}

/* `-- nosuchcmd` exits 127 as a shell would, and the good log stays. */
Test(safety, command_that_cannot_run_publishes_nothing, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q -d 50ms -o good.t4t && cp good.t4t ref.t4t && "
		  "\"$B\" record -q --sim -o good.t4t -- ./nosuchcmd; echo rc=$?; "
		  "cmp good.t4t ref.t4t && echo same; ls");
	cr_assert(strstr(r.out, "rc=127"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: cannot run './nosuchcmd': No such file or directory; "
				"nothing recorded (good.t4t left as it was)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "same"), "%s", r.out);
	cr_assert_null(strstr(r.out, "good.t4t.old"), "%s", r.out);
	cr_assert_null(strstr(r.out, "partial"), "%s", r.out);
	sh_in_dir(&r, "printf '#!/bin/sh\\n' > noexec; \"$B\" record -q -o new.t4t -- ./noexec; "
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
	sh_in_dir(&r, "sh -c 'trap \"\" XFSZ; ulimit -f 400; exec \"$B\" record --sim -d 2s -o full.t4t'; "
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

/* A 256 KiB tmpfs at r's mnt, which a test fills (the test skips where
 * none can be mounted). */
static void small_fs(struct run *r, char *mnt, size_t cap)
{
	tmpdir(r);
	snprintf(mnt, cap, "%s/mnt", r->dir);
	cr_assert_eq(mkdir(mnt, 0755), 0);
	if (mount("t4test", mnt, "tmpfs", 0, "size=256k")) {
		int e = errno;
		cleanup(r);
		cr_skip_test("cannot mount a tmpfs: %s", strerror(e));
	}
}

/* The same on standard output (a file on a small tmpfs): the advice
 * names what works, 'info -' on what it got; it said "'t410trace info
 * standard output' gives what it holds", a command that reads two missing
 * files. */
Test(safety, disk_full_on_standard_output_advises_info_dash, .timeout = 120)
{
	char mnt[PATH_MAX + 8];
	struct run r;

	small_fs(&r, mnt, sizeof(mnt));
	sh_in_dir(&r, "\"$B\" record --sim -d 2s --backend pwrite -o - > mnt/out; echo rc=$?;"
		  " \"$B\" info - < mnt/out > /dev/null && echo log-ok");
	umount2(mnt, MNT_DETACH);
	cr_assert(strstr(r.out, "rc=1"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: standard output: No space left on device after "),
		  "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: no totals: the log stopped early ('t410trace info -' "
				"on what standard output got gives what it holds)\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "info standard output"), "%s", r.out);
	cr_assert(strstr(r.out, "log-ok"), "%s", r.out);
	cleanup(&r);
}

/* Standard output that takes nothing (/dev/full): nothing was recorded,
 * and said so; it said "the log stopped early; standard output: 0 B ...,
 * all of it readable" and advised 'info -' on what it got (nothing), and
 * the log's line "everything before is intact". */
Test(safety, standard_output_that_takes_nothing_records_nothing, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record --sim -d 50ms --backend pwrite -o - > /dev/full; echo rc=$?");
	cr_assert(strstr(r.out, "rc=1"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: standard output: No space left on device: the log "
				"stopped before its first chunk was on disk\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: the log stopped before its first chunk was on disk: "
				"nothing recorded (standard output got nothing)\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "info standard output"), "%s", r.out);
	cr_assert_null(strstr(r.out, "all of it readable"), "%s", r.out);
	cleanup(&r);
}

/* A log stranded under its partial name (FILE taken while it recorded:
 * the name cannot be given) is no success: exit 1, as t4_exit_code and
 * the man page's EXIT STATUS have it, the log kept as FILE.partial-PID
 * and said. A virtual recording of 100000 h is stopped (SIGSTOP) while its
 * private directory exists and FILE does not (tried again where its first
 * chunk was quicker), FILE is made, and once record has said it cannot
 * name its log, Ctrl-C ends it (every wait bounded, the recorder capped by
 * CLI_BOUND_RUNAWAY and killed when the shell exits). It exited 2, a usage
 * error's status. */
Test(safety, a_stranded_log_exits_1, .timeout = 180)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, CLI_BOUND_RUNAWAY "trap 'kill -CONT $pid 2>/dev/null; kill -9 $pid 2>/dev/null' EXIT; "
		  "for try in $(seq 20); do "
		  "  \"$B\" record --sim=3 --virtual --backend pwrite -d 100000h --period 100ms "
		  "  -o v.t4t 2> err & pid=$!; "
		  "  while kill -0 $pid 2>/dev/null && ! ls -d v.t4t.partial-$pid-* >/dev/null 2>&1; "
		  "  do sleep 0.002; done; kill -STOP $pid; "
		  "  if ls -d v.t4t.partial-$pid-* >/dev/null 2>&1 && [ ! -e v.t4t ]; then "
		  "    : > v.t4t; kill -CONT $pid; i=0; "
		  "    until grep -q 'cannot name' err || [ $i -ge 1500 ]; do sleep 0.02; i=$((i+1)); done; "
		  "    kill -INT $pid; i=0; while kill -0 $pid 2>/dev/null && [ $i -lt 1500 ]; do "
		  "    sleep 0.02; i=$((i+1)); done; kill -9 $pid 2>/dev/null; wait $pid; echo rc=$?; "
		  "    break; fi; "
		  "  kill -CONT $pid; kill -9 $pid; wait $pid; rm -rf v.t4t* err; "
		  "done; cat err; ls; \"$B\" info v.t4t.partial-$pid > /dev/null && echo log-ok");
	cr_assert(strstr(r.out, "rc=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: cannot name the log v.t4t (File exists): it is recorded"
				" as v.t4t.partial-"), "%s", r.out);
	cr_assert(strstr(r.out, "\nv.t4t\nv.t4t.partial-"), "%s", r.out);
	cr_assert(strstr(r.out, "log-ok"), "%s", r.out);
	cleanup(&r);
}

/* A file system that fills while the log is written (a 256 KiB tmpfs,
 * mounted where this test may): exit 1, the log cut back to its whole
 * chunks and said. */
Test(safety, a_full_file_system_exits_1, .timeout = 120)
{
	char mnt[PATH_MAX + 8];
	struct run r;

	small_fs(&r, mnt, sizeof(mnt));
	sh_in_dir(&r, "\"$B\" record --sim -d 2s -o mnt/full.t4t; echo rc=$?; \"$B\" info"
		  " mnt/full.t4t > /dev/null && echo log-ok");
	umount2(mnt, MNT_DETACH);
	cr_assert(strstr(r.out, "rc=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: mnt/full.t4t: No space left on device after "), "%s",
		  r.out);
	cr_assert(strstr(r.out, "log-ok"), "%s", r.out);
	cleanup(&r);
}

/* A disk full before the first chunk: nothing is recorded, and the user's
 * FILE (an older log) stays as it was. The summary said "the log stopped
 * early; FILE: 0 B ..., all of it readable" and "'t410trace info FILE'
 * gives what it holds": info then shows the older log as if it were this
 * recording. */
Test(safety, a_disk_full_from_the_start_points_at_no_older_file, .timeout = 120)
{
	char mnt[PATH_MAX + 8];
	struct run r;

	small_fs(&r, mnt, sizeof(mnt));
	sh_in_dir(&r, "echo yesterday > mnt/x.t4t; head -c 1000000 /dev/zero > mnt/fill 2> /dev/null;"
		  " \"$B\" record --sim -d 300ms --backend pwrite -o mnt/x.t4t; echo rc=$?;"
		  " cat mnt/x.t4t; ls mnt");
	umount2(mnt, MNT_DETACH);
	cr_assert(strstr(r.out, "rc=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: the log stopped before its first chunk was on disk: "
				"nothing recorded (mnt/x.t4t left as it was)\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "gives what it holds"), "%s", r.out);
	cr_assert_null(strstr(r.out, "all of it readable"), "%s", r.out);
	cr_assert(strstr(r.out, "\nyesterday\nfill\nx.t4t\n"), "%s", r.out);
	cleanup(&r);
}

/* The same for a virtual recording, and the log's own line: it said
 * "No space left on device after 0 bytes: log stopped, everything before
 * is intact" and nothing more, with no log left (and, over the user's
 * older file, none of this recording). */
Test(safety, a_disk_full_from_the_start_of_a_virtual_recording, .timeout = 120)
{
	char mnt[PATH_MAX + 8];
	struct run r;

	small_fs(&r, mnt, sizeof(mnt));
	sh_in_dir(&r, "echo yesterday > mnt/x.t4t; head -c 1000000 /dev/zero > mnt/fill 2> /dev/null;"
		  " \"$B\" record --sim --virtual -d 10s --backend pwrite -o mnt/x.t4t; echo rc=$?;"
		  " \"$B\" record --sim --virtual -d 10s --backend pwrite -o mnt/y.t4t; echo rc=$?;"
		  " cat mnt/x.t4t; ls mnt");
	umount2(mnt, MNT_DETACH);
	cr_assert(strstr(r.out, "rc=1\nt410trace: the log stopped before its first chunk was on "
				"disk: nothing recorded (mnt/y.t4t not made)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: the log stopped before its first chunk was on disk: "
				"nothing recorded (mnt/x.t4t left as it was)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: mnt/x.t4t: No space left on device: the log stopped "
				"before its first chunk was on disk\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "intact"), "%s", r.out);
	cr_assert(strstr(r.out, "rc=1\nyesterday\nfill\nx.t4t\n"), "%s", r.out);
	cleanup(&r);
}

/* The same for a virtual recording, whose log is named only once whole:
 * it dropped the unnamed log when the disk filled, after saying
 * "everything before is intact" (nothing was left), and went on
 * generating the hour asked for (72 s here) for nothing. Its whole chunks
 * are kept and named now, with the summary, exit 1, and it stops at the
 * log's error. */
Test(safety, a_full_file_system_keeps_a_virtual_log, .timeout = 120)
{
	char mnt[PATH_MAX + 8];
	struct run r;

	small_fs(&r, mnt, sizeof(mnt));
	sh_in_dir(&r, "\"$B\" record --sim --virtual -d 10min --backend pwrite -o mnt/full.t4t;"
		  " echo rc=$?; \"$B\" info --json mnt/full.t4t | grep -o '\"triggers\": [0-9]*'");
	umount2(mnt, MNT_DETACH);
	cr_assert(strstr(r.out, "rc=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: mnt/full.t4t: No space left on device after "), "%s",
		  r.out);
	cr_assert(strstr(r.out, "t410trace: wrote mnt/full.t4t: "), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: no totals: the log stopped early ('t410trace info "
				"mnt/full.t4t' gives what it holds)\n"), "%s", r.out);
	const char *t = strstr(r.out, "\"triggers\": ");
	cr_assert_not_null(t, "no readable log: %s", r.out);
	cr_assert_gt(atol(t + 12), 0, "%s", r.out);
	cleanup(&r);
}

/* decode -o and report -o cut short by a signal (Ctrl-C, kill, a closed
 * terminal) left their OUT.tmp-XXXXXX behind (hundreds of MB for a long
 * log), which nothing removes. Here each reads a pipe that stays open, so
 * it is surely still writing when the signal comes, once its temporary
 * file is there; it dies of the signal as before (128 + N), OUT untouched
 * and nothing else left. SIGINT is set to its default for the command: a
 * background job of a shell without job control inherits it ignored,
 * which decode keeps (cli/outfile.c). */
Test(safety, a_signal_leaves_no_temporary_output, .timeout = 120)
{
	static const struct { const char *cmd, *sig, *rc; } runs[] = {
		{ "decode - -f csv", "TERM", "143" }, { "decode - -f csv", "INT", "130" },
		{ "decode - -f csv", "HUP", "129" },  { "report -", "TERM", "143" },
		{ "report -", "INT", "130" },	      { "report -", "HUP", "129" },
	};
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q --sim --virtual -d 3s --backend pwrite -o v.t4t");
	cr_assert_eq(r.status, 0, "%s", r.out);
	for (size_t i = 0; i < T4_ARRAY_LEN(runs); i++) {
		char line[1024], want[16];
		snprintf(line, sizeof(line), "rm -f in p.csv*; echo old > p.csv && mkfifo in && "
			 "{ env --default-signal=INT \"$B\" %s -o p.csv < in 2> /dev/null & d=$!; "
			 "exec 3> in; head -c 400000 v.t4t >&3; i=0; "
			 "until [ -n \"$(ls p.csv.tmp-* 2>/dev/null)\" ] || [ $i -ge 1500 ]; do "
			 "sleep 0.02; i=$((i+1)); done; ls p.csv.tmp-* > /dev/null && echo tmp-seen; "
			 "kill -%s $d; wait $d; echo rc=$?; exec 3>&-; }; ls; cat p.csv", runs[i].cmd,
			 runs[i].sig);
		sh_in_dir(&r, line);
		snprintf(want, sizeof(want), "rc=%s\n", runs[i].rc);
		cr_assert(strstr(r.out, "tmp-seen\n"), "%s %s: %s", runs[i].cmd, runs[i].sig, r.out);
		cr_assert(strstr(r.out, want), "%s %s: %s", runs[i].cmd, runs[i].sig, r.out);
		cr_assert_null(strstr(r.out, "p.csv.tmp-"), "%s %s: a temporary file was left: %s",
			       runs[i].cmd, runs[i].sig, r.out);
		cr_assert(strstr(r.out, "\np.csv\n"), "%s %s: %s", runs[i].cmd, runs[i].sig, r.out);
		cr_assert(strstr(r.out, "old\n"), "%s %s: OUT was touched: %s", runs[i].cmd,
			  runs[i].sig, r.out);
	}
	cleanup(&r);
}

/* Past a file size limit (ulimit -f) the kernel sends SIGXFSZ: decode and
 * report died of it (exit 153, the shell's "File size limit exceeded"),
 * their OUT.tmp-XXXXXX left behind. The write's EFBIG is an error now:
 * one line naming the output, exit 1, nothing left, OUT untouched. */
Test(safety, a_file_size_limit_is_an_error_not_a_death, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q --sim --virtual -d 3s --backend pwrite -o v.t4t && "
		  "echo old > p.csv && ( ulimit -f 100; "
		  "\"$B\" decode -f csv -o p.csv v.t4t; echo rc=$?; "
		  "\"$B\" report -o r.html v.t4t; echo rc=$?; "
		  "\"$B\" decode -f jsonl v.t4t > s.jsonl; echo rc=$? ); ls; cat p.csv");
	cr_assert(strstr(r.out, "t410trace decode: p.csv: writing the csv output: File too large\n"
				"rc=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace report: r.html: writing the report output: File too "
				"large\nrc=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace decode: standard output: writing the jsonl output: "
				"File too large\nrc=1\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, ".tmp-"), "a temporary file was left: %s", r.out);
	cr_assert(strstr(r.out, "\np.csv\ns.jsonl\nv.t4t\nold\n"), "%s", r.out);
	cleanup(&r);
}

/* SIGKILL cannot be caught: the temporary file stays (OUT.tmp-PID-XXXXXX),
 * and the next decode or report writing the same OUT removes it (its
 * process gone), while one of a live process stays. */
Test(safety, a_killed_decode_leaves_its_temporary_file_to_the_next_run, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q --sim --virtual -d 3s --backend pwrite -o v.t4t && "
		  "mkfifo in || exit 1; sleep 1000 & live=$!; "
		  "{ \"$B\" decode - -f csv -o p.csv < in 2> /dev/null & d=$!; exec 3> in; "
		  "head -c 400000 v.t4t >&3; i=0; "
		  "until [ -n \"$(ls p.csv.tmp-* 2>/dev/null)\" ] || [ $i -ge 1500 ]; do sleep 0.02; "
		  "i=$((i+1)); done; kill -KILL $d; wait $d; echo rc=$?; exec 3>&-; }; "
		  "ls p.csv.tmp-$d-* > /dev/null && echo tmp-left; "
		  "echo x > p.csv.tmp-$live-abcdef; "
		  "\"$B\" report -o p.csv v.t4t 2> /dev/null; \"$B\" decode -f csv -o p.csv v.t4t; "
		  "echo rc=$?; kill $live; ls");
	cr_assert(strstr(r.out, "rc=137\ntmp-left\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace decode: wrote p.csv\nrc=0\n"), "%s", r.out);
	const char *live = strstr(r.out, "\np.csv\np.csv.tmp-");
	cr_assert(live, "the live process's file went: %s", r.out);
	cr_assert_null(strstr(live + strlen("\np.csv\np.csv.tmp-"), ".tmp-"),
		       "a temporary file was left: %s", r.out);
	cleanup(&r);
}

/* Whether process pid is gone (or a zombie nobody reaped yet): one read
 * of /proc/PID/stat, its state after the last ')'. It looked twice (the
 * directory, then grep on stat), and a zombie reaped between the two was
 * said to be alive: under load the keeper reaped one while grep started,
 * and descendants_end_with_a_killed_record failed ("alive", then kill: No
 * such process). */
static const char *gone_check = "gone() { s=$(cat /proc/$1/stat 2>/dev/null) || return 0; "
				"case \"${s##*) }\" in [ZX]*) return 0;; esac; return 1; }; ";

/* kill -9 of record: the workload gets SIGTERM (from the keeper), and
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
		 "for i in $(seq 600); do w=$(pgrep -P $rec) && c=$(pgrep -P $w sleep) && break; "
		 "sleep 0.05; done; "
		 "[ -n \"$c\" ] || echo no-child; sleep 0.2; ls tmp | sed 's/-[0-9]*-.*//' | sort | "
		 "tr '\\n' ' '; echo; kill -9 $rec; wait $rec; "
		 "for i in $(seq 600); do gone $c && break; sleep 0.05; done; "
		 "gone $c && echo workload-gone; ls tmp | wc -l; "
		 "\"$B\" record -q --sim --backend pwrite -o k2.t4t -- true; echo rc=$?; ls tmp | wc -l",
		 gone_check);
	sh_in_dir(&r, line);
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
	sh_in_dir(&r, "mkdir tmp; (TMPDIR=\"$D/tmp\" \"$B\" list --sim; echo rc=$? > rc) | true; "
		  "cat rc; ls tmp | wc -l");
	cr_assert(strstr(r.out, "rc=141\n0\n"), "%s", r.out);
	cleanup(&r);
}

/* SIGHUP (the terminal or the ssh session closed) ends a recording as
 * Ctrl-C does: the log closed whole (its final status packet), a command
 * sent the signal and its exit code record's. Each signal is sent once the
 * recording runs (its control socket says a trigger is in). */
/* SIGNAL (HUP, TERM) to record: without a command it ends the recording
 * with the log closed whole (its status packet in it), exit 0; with one,
 * the signal goes to the command, whose death by it (`killed`, exit `rc`)
 * ends the recording, the log again whole. */
static void signal_closes_the_log_whole(const char *sig, const char *killed, const char *rc)
{
	struct run r;
	char line[2048], want[256];

	tmpdir(&r);
	snprintf(line, sizeof(line),
		 "up() { for i in $(seq 1200); do \"$B\" ctl --control c.sock status 2>/dev/null |"
		 " grep -q 'triggers=[1-9]' && return; sleep 0.05; done; }; "
		 "\"$B\" record -q --sim -c c.sock -o a.t4t & rec=$!; up; kill -%s $rec; wait $rec; "
		 "echo rc=$?; \"$B\" info --json a.t4t | grep -o '\"status_present\": [a-z]*'; "
		 "\"$B\" record -q --sim -c c.sock -o b.t4t -- sleep 60 & rec=$!; up; kill -%s $rec; "
		 "wait $rec; echo rc=$?; \"$B\" info --json b.t4t | grep -o '\"status_present\": [a-z]*'",
		 sig, sig);
	sh_in_dir(&r, line);
	snprintf(want, sizeof(want), "'sleep' was killed by %s\nrc=%s\n\"status_present\": true\n",
		 killed, rc);
	cr_assert(strstr(r.out, "rc=0\n\"status_present\": true\n") && strstr(r.out, want),
		  "%s", r.out);
	cleanup(&r);
}

Test(safety, a_hangup_closes_the_log_whole, .timeout = 120)
{
	signal_closes_the_log_whole("HUP", "signal 1 (Hangup)", "129");
}

Test(safety, a_sigterm_closes_the_log_whole, .timeout = 120)
{
	signal_closes_the_log_whole("TERM", "signal 15 (Terminated)", "143");
}

/* A shell function: wait until no SIGINT is pending for $rec (delivered:
 * two pending SIGINTs would be one), or $rec is gone. */
#define SH_DELIVERED                                                                   \
	"delivered() { while grep -q '^ShdPnd:.*[2367abef]$' /proc/$rec/status 2>/dev/null; " \
	"do sleep 0.01; done; }; "

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
	sh_in_dir(&r, "\"$B\" record -q -o s.t4t -- sh -c 'trap \"\" INT TERM; : > ready; exec sleep 30' "
		  "& rec=$!; " SH_DELIVERED "for i in $(seq 3000); do [ -e ready ] && break; sleep 0.01; "
		  "done; kill -INT $rec; delivered; kill -INT $rec; delivered; "
		  "kill -INT $rec; wait $rec; echo rc=$?; \"$B\" info s.t4t > /dev/null && echo log-ok");
	cr_assert(strstr(r.out, "t410trace: 'sh' is still running; sent Interrupt again (once "
				"more kills it with SIGKILL)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: killing 'sh' (SIGKILL)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: 'sh' was killed by signal 9 (Killed)\n"), "%s", r.out);
	cr_assert(strstr(r.out, "rc=137\nlog-ok"), "%s", r.out);
	cleanup(&r);
}

/* --duration over a workload that ignores SIGTERM: it is killed 5 s later
 * (exit 137), and the summary counts the recording's time, the duration,
 * not the wait for the workload's end. */
Test(safety, duration_over_a_deaf_workload_summary_says_the_duration, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record --sim --backend pwrite -d 1s -o s.t4t -- "
		  "sh -c 'trap \"\" TERM; exec sleep 30' 2> err; echo rc=$?; "
		  "grep -o 'triggers in [0-9.]* s' err; grep -o \"stopping 'sh' (SIGTERM)\" err; "
		  "\"$B\" info s.t4t > /dev/null && echo log-ok");
	cr_assert(strstr(r.out, "rc=137\n"), "%s", r.out);
	cr_assert(strstr(r.out, "\ntriggers in 1.00 s\nstopping 'sh' (SIGTERM)\nlog-ok"), "%s", r.out);
	cleanup(&r);
}

/* ---- files: never through a planted link, the umask, no litter --------------- */

/* A link planted at the log's old temporary name (FILE.partial-PID, with
 * the PID record will have: exec keeps the shell's) is never followed:
 * the file it points to keeps its bytes. */
Test(safety, planted_link_is_never_followed, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	sh_in_dir(&r, "printf secret > victim; chmod 600 victim; "
		  "sh -c 'ln -s victim k.t4t.partial-$$ && exec \"$B\" record -q -d 50ms -o k.t4t'; "
		  "echo rc=$?; cat victim; echo; stat -c '%a %s' victim; "
		  "\"$B\" info k.t4t > /dev/null && echo log-ok");
	cr_assert(strstr(r.out, "rc=0\nsecret\n600 6\nlog-ok"), "%s", r.out);
	cleanup(&r);
}

/* A folder for a test that gives a file to another user (nobody). */
static void stranger_tmpdir(struct run *r)
{
	if (geteuid() != 0)
		cr_skip_test("needs root (to give the link to another user)");
	tmpdir(r);
}

/* A symbolic link another user planted in a shared (sticky, world-
 * writable) directory, pointing at a device, is not followed even where
 * fs.protected_symlinks is off: root would write its log into the device
 * (/dev/watchdog, a tty). The user's own link there is written through. */
Test(safety, a_stranger_link_to_a_device_is_not_followed, .timeout = 60)
{
	struct run r;

	stranger_tmpdir(&r);
	sh_in_dir(&r, "mkdir pub; chmod 1777 pub; ln -s /dev/zero pub/x.t4t; "
		  "chown -h 65534:65534 pub/x.t4t; ln -s /dev/null pub/mine.t4t; "
		  "\"$B\" record -q --sim --backend pwrite -d 50ms -o pub/x.t4t; echo rc=$?; "
		  "\"$B\" record -q --sim --backend pwrite -d 50ms -o pub/mine.t4t; echo rc=$?; "
		  "ls pub");
	cr_assert(strstr(r.out, "t410trace: pub/x.t4t: a symbolic link another user made in a "
				"shared directory; not followed\nrc=1\nrc=0\nmine.t4t\nx.t4t\n"),
		  "%s", r.out);
	cleanup(&r);
}

/* -o 'pub/job%j/x.t4t' names a directory record makes: one that another
 * user planted there first as a link (to a directory of their choosing)
 * is not followed. Root's log went into the link's target. */
Test(safety, a_stranger_link_at_a_job_directory_is_not_followed, .timeout = 60)
{
	struct run r;

	stranger_tmpdir(&r);
	sh_in_dir(&r, "mkdir pub there; chmod 1777 pub there; ln -s \"$D/there\" pub/job7; "
		  "chown -h 65534:65534 pub/job7; SLURM_JOB_ID=7 SLURM_PROCID=0 "
		  "\"$B\" record -q --sim --backend pwrite -d 50ms -o 'pub/job%j/x.t4t'; echo rc=$?; "
		  "ls there");
	cr_assert_str_eq(r.out, "t410trace: -o 'pub/job7/x.t4t': pub/job7 is a symbolic link "
				"another user made in a shared directory; not followed\nrc=1\n");
	cleanup(&r);
}

/* The same name made ahead of the job as a directory of the stranger's
 * own (job IDs are easy to guess), writable for all: not used, whose
 * owner could remove or replace the log in it. The user's own one there
 * is used, as anywhere. */
Test(safety, a_stranger_directory_at_a_job_directory_is_not_used, .timeout = 60)
{
	struct run r;

	stranger_tmpdir(&r);
	sh_in_dir(&r, "mkdir pub; chmod 1777 pub; mkdir pub/job7 pub/job8; chmod 777 pub/job7; "
		  "chown 65534:65534 pub/job7; for j in 7 8; do SLURM_JOB_ID=$j SLURM_PROCID=0 "
		  "\"$B\" record -q --sim --backend pwrite -d 50ms -o 'pub/job%j/x.t4t'; echo rc=$?; "
		  "done; ls pub/job7 pub/job8");
	cr_assert_str_eq(r.out, "t410trace: -o 'pub/job7/x.t4t': pub/job7 is a directory another "
				"user made in a shared directory; not used\nrc=1\nrc=0\npub/job7:\n\n"
				"pub/job8:\nx.t4t\n");
	cleanup(&r);
}

/* Another user's FILE in a shared sticky directory, which this user may
 * neither keep aside as FILE.old nor replace: refused before recording
 * (the whole run was recorded, then left as FILE.partial-PID, exit 1).
 * The user's own FILE there is kept as FILE.old, as anywhere. */
Test(safety, another_users_file_in_a_sticky_directory_is_refused_up_front, .timeout = 60)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], text[4096], out[PATH_MAX + 16];
	int rc;

	if (geteuid() != 0)
		cr_skip_test("needs root (to run the recording as another user, nobody)");
	t4t_nobody_tmpdir(dir, sizeof(dir), "t4sticky", true);
	cr_assert_eq(chown(dir, T4T_NOBODY, T4T_NOBODY), 0, "%s", strerror(errno)); /* its TMPDIR */
	cli_run(out, sizeof(out), "cd '%s' && mkdir pub && chmod 1777 pub && echo root > pub/x.t4t"
		" && echo nobody > pub/mine.t4t && chown 65534:65534 pub/mine.t4t", dir);
	t4t_copy_program(bin(), dir, path, sizeof(path));
	for (int i = 0; i < 2; i++) {
		char *argv[] = { path, "record", "-q", "--sim", "--virtual", "--backend", "pwrite",
				 "-d", "20ms", "-o", i ? "pub/mine.t4t" : "pub/x.t4t", NULL };
		rc = t4t_run_as_nobody(dir, argv);
		snprintf(out, sizeof(out), "%s/out.txt", dir);
		cr_assert_geq(t4_read_small_file(out, text, sizeof(text)), 0);
		if (!i)
			cr_assert(rc == 1 && !strcmp(text, "t410trace: pub/x.t4t: another user's file in a"
							   " shared (sticky) directory: it can be"
							   " neither kept as pub/x.t4t.old nor replaced;"
							   " name another file"),
				  "rc %d: %s", rc, text);
		else
			cr_assert_eq(rc, 0, "%s", text);
	}
	cli_run(out, sizeof(out), "cd '%s/pub' && ls && cat x.t4t mine.t4t.old", dir);
	cr_assert_str_eq(out, "mine.t4t\nmine.t4t.old\nx.t4t\nroot\nnobody\n");
	t4_rmtree(dir);
}

/* decode's and report's -o: a link another user planted in a shared
 * directory is refused, to a file (root would replace the file) as to a
 * device; the user's own link there is written through. */
Test(safety, decode_does_not_follow_a_stranger_link, .timeout = 60)
{
	struct run r;

	stranger_tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q --sim --virtual -d 20ms -o a.t4t || exit 1; "
		  "mkdir pub; chmod 1777 pub; echo precious > victim; "
		  "ln -s ../victim pub/f.csv; ln -s /dev/null pub/d.csv; ln -s ../new pub/n.html; "
		  "chown -h 65534:65534 pub/f.csv pub/d.csv pub/n.html; ln -s ../mine pub/mine.csv; "
		  "\"$B\" decode a.t4t -f csv -o pub/f.csv; echo rc=$?; "
		  "\"$B\" decode a.t4t -f csv -o pub/d.csv; echo rc=$?; "
		  "\"$B\" report a.t4t -o pub/n.html; echo rc=$?; "
		  "\"$B\" decode a.t4t -f csv -o pub/mine.csv 2>/dev/null; echo rc=$?; "
		  "cat victim; ls; test -L pub/mine.csv && head -c 7 mine");
	cr_assert(strstr(r.out, "pub/f.csv: a symbolic link another user made in a shared "
				"directory; not followed\nrc=2\n"), "%s", r.out);
	cr_assert(strstr(r.out, "pub/d.csv: a symbolic link another user"), "%s", r.out);
	cr_assert(strstr(r.out, "pub/n.html: a symbolic link another user"), "%s", r.out);
	cr_assert(strstr(r.out, "rc=0\nprecious\na.t4t\nmine\npub\nvictim\n"), "%s", r.out);
	cleanup(&r);
}

/* The log and decode's output get 0666 less the umask; a file decode
 * replaces keeps its permissions. */
Test(safety, files_honour_the_umask, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "umask 077; \"$B\" record -q --sim -d 20ms -o a.t4t; \"$B\" decode a.t4t -f csv -o a.csv; "
		  "umask 022; \"$B\" record -q --sim -d 20ms -o b.t4t; \"$B\" decode a.t4t -f csv -o b.csv; "
		  "printf x > c.csv; chmod 600 c.csv; \"$B\" decode a.t4t -f csv -o c.csv; "
		  "stat -c '%a %n' a.t4t a.csv b.t4t b.csv c.csv; ls");
	cr_assert(strstr(r.out, "600 a.t4t\n600 a.csv\n644 b.t4t\n644 b.csv\n600 c.csv\n"), "%s",
		  r.out);
	cr_assert_null(strstr(r.out, "tmp-"), "a temporary file left: %s", r.out);
	cleanup(&r);
}

/* A regular OUT without a write bit is one the user protected: decode and
 * report refuse it (exit 2, one line naming OUT), through a symbolic link
 * too, and leave it as it was. They used to write a temporary file and
 * rename it over (the directory allowed it). The rule is the mode's bits,
 * so it holds for root too. */
Test(safety, a_read_only_output_is_not_replaced, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	/* pwrite: where io_uring is missing (qemu-user) its warning is no
	 * line of this test's */
	sh_in_dir(&r, "\"$B\" record -q --sim --virtual --backend pwrite -d 10ms -o a.t4t ||"
		  " echo record-failed; "
		  "printf precious > ro.csv; chmod 444 ro.csv; ln -s ro.csv link.csv; "
		  "printf precious > ro.html; chmod 400 ro.html; "
		  "\"$B\" decode a.t4t -f csv -o ro.csv; echo rc=$?; "
		  "\"$B\" decode a.t4t -o link.csv; echo rc=$?; "
		  "\"$B\" report a.t4t -o ro.html; echo rc=$?; "
		  "cat ro.csv ro.html; echo; stat -c '%a %n' ro.csv ro.html; ls");
	cr_assert_str_eq(r.out,
			 "t410trace decode: ro.csv: read-only file; not overwritten (remove it or "
			 "chmod u+w first)\nrc=2\n"
			 "t410trace decode: link.csv: read-only file; not overwritten (remove it "
			 "or chmod u+w first)\nrc=2\n"
			 "t410trace report: ro.html: read-only file; not overwritten (remove it "
			 "or chmod u+w first)\nrc=2\n"
			 "preciousprecious\n444 ro.csv\n400 ro.html\n"
			 "a.t4t\nlink.csv\nro.csv\nro.html\n");
	cleanup(&r);
}

/* An output named in a current directory that was deleted (mkdir d; cd d;
 * rmdir ../d) is refused in one line that says so, exit 2, nothing made:
 * decode and report said "out.csv: No such file or directory" of a file
 * they were to make, record "cannot create a file in .: it takes no new
 * files". */
Test(safety, an_output_in_a_deleted_directory_says_so, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q --sim --virtual --backend pwrite -d 10ms -o a.t4t ||"
		  " echo record-failed; mkdir d && cd d && rmdir ../d && "
		  "{ \"$B\" decode \"$D/a.t4t\" -f csv -o out.csv; echo rc=$?; "
		  "\"$B\" report \"$D/a.t4t\" -o out.html; echo rc=$?; "
		  "\"$B\" record -q --sim --virtual --backend pwrite -d 10ms -o b.t4t; echo rc=$?; }; "
		  "cd \"$D\" && ls -A");
	cr_assert_str_eq(r.out,
			 "t410trace decode: out.csv: cannot create a file in the current directory: "
			 "it was deleted\nrc=2\n"
			 "t410trace report: out.html: cannot create a file in the current "
			 "directory: it was deleted\nrc=2\n"
			 "t410trace: b.t4t: cannot create a file in the current directory: it was "
			 "deleted\nrc=2\n"
			 "a.t4t\n");
	cleanup(&r);
}

/* -o naming a character device (here /dev/null) writes it in place, as a
 * FIFO is: no FILE.old, no private directory next to it, the device
 * still a device. */
Test(safety, a_character_device_is_written_in_place, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q --sim --backend pwrite -d 20ms -o /dev/null; echo rc=$?; "
		  "stat -c %F /dev/null; ls -a /dev | grep -c 'null\\.' ; ls");
	cr_assert_str_eq(r.out, "rc=0\ncharacter special file\n0\n");
	cleanup(&r);
}

/* -o naming a socket (no open() takes one) is refused up front in one
 * line saying so, exit 2, by record, decode and report alike; it said
 * "No such device or address" (record after its set-up, exit 1). */
Test(safety, a_socket_is_refused_as_output, .timeout = 60)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct run r;
	int fd;

	tmpdir(&r);
	cr_assert_lt(snprintf(a.sun_path, sizeof(a.sun_path), "%s/s", r.dir),
		     (int)sizeof(a.sun_path));
	cr_assert_geq(fd = socket(AF_UNIX, SOCK_STREAM, 0), 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "%s", strerror(errno));
	close(fd);
	sh_in_dir(&r, "\"$B\" record -q --sim --virtual --backend pwrite -d 10ms -o a.t4t && "
		      "for c in record decode report; do if [ $c = record ]; then "
		      "\"$B\" record -q --sim -d 20ms -o s; else \"$B\" $c a.t4t -o s; fi; "
		      "echo rc=$?; done; stat -c %F s; ls");
	cr_assert_str_eq(r.out,
			 "t410trace: s: is a socket, not a file to write (name a file, a FIFO or a "
			 "device)\nrc=2\n"
			 "t410trace decode: s: is a socket, not a file to write (name a file, a FIFO "
			 "or a device)\nrc=2\n"
			 "t410trace report: s: is a socket, not a file to write (name a file, a FIFO "
			 "or a device)\nrc=2\nsocket\na.t4t\ns\n");
	cleanup(&r);
}

/* -o naming a terminal (/dev/tty, /dev/stdout on one; here a pty's
 * slave) is refused as `-o -` on a terminal is: the binary log went to
 * the screen (nothing read this pty: record hung once its buffer filled).
 * Then `-o -` itself with standard output on that terminal. */
Test(safety, a_terminal_is_refused_as_output, .timeout = 60)
{
	struct run r;
	char tty[256], want[512];
	int m = posix_openpt(O_RDWR | O_NOCTTY);

	/* close-on-exec: record holding the master would never see it close */
	if (m < 0 || fcntl(m, F_SETFD, FD_CLOEXEC) || grantpt(m) || unlockpt(m) ||
	    ptsname_r(m, tty, sizeof(tty)))
		cr_skip_test("no pseudo-terminal here: %s", strerror(errno));
	tmpdir(&r);
	r.status = cli_in_dir(r.dir, r.out, sizeof(r.out),
			      "\"$B\" record -q --sim -d 20ms -o '%s'; echo rc=$?; ls", tty);
	snprintf(want, sizeof(want), "t410trace: %s: is a terminal; a log is binary (redirect "
		 "it or name a file)\nrc=2\n", tty);
	cr_assert_str_eq(r.out, want);
	/* -o - with standard output on the terminal (the man page's -o) */
	r.status = cli_in_dir(r.dir, r.out, sizeof(r.out),
			      "\"$B\" record -q --sim -d 20ms -o - > '%s'; echo rc=$?; ls", tty);
	close(m);
	cr_assert_str_eq(r.out, "t410trace: -o -: standard output is a terminal; redirect it "
			 "(-o - | ...) or name a file\nrc=2\n");
	cleanup(&r);
}

/* What a record killed before its log had a name leaves (its private
 * directory) is removed by the next run writing next to the same FILE:
 * only this user's, of a dead process, holding nothing but the log, and
 * that empty (one with bytes is kept: util/privdir_keeps_*). The
 * kill is made during start-up for sure: record is stopped (SIGSTOP) while
 * its directory exists and FILE does not, then killed. (pwrite: where
 * io_uring is missing, e.g. qemu-user, the fallback's warning would come
 * between the lines compared.) */
Test(safety, startup_litter_is_reclaimed, .timeout = 120)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "sh -c : & dead=$!; wait $dead; "
		  "mkdir k.t4t.partial-$dead-abcdef && : > k.t4t.partial-$dead-abcdef/log && "
		  "mkdir k.t4t.partial-$dead-ghijkl && : > k.t4t.partial-$dead-ghijkl/log && "
		  "printf y > k.t4t.partial-$dead-ghijkl/mine && mkdir k.t4t.partial-1-abcdef && "
		  "mkdir k.t4t.partial-$dead-mnopqr && printf x > k.t4t.partial-$dead-mnopqr/log && "
		  "\"$B\" record -q --sim --backend pwrite -d 20ms -o k.t4t; echo rc=$?; "
		  "ls | sed \"s/-$dead-/-DEAD-/\"");
	cr_assert(strstr(r.out, "rc=0\nk.t4t\nk.t4t.partial-1-abcdef\nk.t4t.partial-DEAD-ghijkl\n"
				"k.t4t.partial-DEAD-mnopqr\n"),
		  "%s", r.out);
	cleanup(&r);
	tmpdir(&r);
	sh_in_dir(&r, "for try in $(seq 20); do "
		  "  \"$B\" record -q --sim --backend pwrite -d 10s -o s.t4t & rec=$!; "
		  "  while kill -0 $rec 2>/dev/null && ! ls -d s.t4t.partial-$rec-* >/dev/null 2>&1; "
		  "  do sleep 0.002; done; kill -STOP $rec; "
		  "  if ls -d s.t4t.partial-$rec-* >/dev/null 2>&1 && [ ! -e s.t4t ]; then "
		  "    kill -9 $rec; wait $rec; echo litter; break; fi; "
		  "  kill -9 $rec; wait $rec; rm -rf s.t4t*; "
		  "done; ls | sed 's/-[0-9]*-.*/-LITTER/'; "
		  "\"$B\" record -q --sim --backend pwrite -d 20ms -o s.t4t; echo rc=$?; ls");
	cr_assert(strstr(r.out, "litter\ns.t4t.partial-LITTER\nrc=0\ns.t4t\n"), "%s", r.out);
	cleanup(&r);
}

/* FILE taken by someone else while the log was still unnamed: the log
 * stays under FILE.partial-PID (readable), record says so and exits 1,
 * and the other FILE keeps its bytes. Record is stopped (SIGSTOP) while
 * its private directory exists and FILE does not, FILE is made, then it
 * goes on. */
static void take_the_name_meanwhile(struct run *r, const char *opts)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "for try in $(seq 20); do "
		  "  \"$B\" record -q --sim --backend pwrite -d 300ms %s -o s.t4t 2> err & rec=$!; "
		  "  while kill -0 $rec 2>/dev/null && ! ls -d s.t4t.partial-$rec-* >/dev/null 2>&1; "
		  "  do sleep 0.002; done; kill -STOP $rec; "
		  "  if ls -d s.t4t.partial-$rec-* >/dev/null 2>&1 && [ ! -e s.t4t ]; then "
		  "    printf mine > s.t4t; kill -CONT $rec; wait $rec; echo rc=$?; break; fi; "
		  "  kill -CONT $rec; kill -9 $rec; wait $rec; rm -rf s.t4t* err; "
		  "done; sed \"s/-$rec/-PID/\" err; cat s.t4t; echo; "
		  "\"$B\" info s.t4t.partial-$rec > /dev/null && echo readable; "
		  "ls | sed \"s/-$rec/-PID/\"", opts);
	sh_in_dir(r, cmd);
	cr_assert_str_eq(r->out, "rc=1\nt410trace: cannot name the log s.t4t (File exists): it is "
				 "recorded as s.t4t.partial-PID\nmine\nreadable\nerr\ns.t4t\n"
				 "s.t4t.partial-PID\n", "%s: %s", opts, r->out);
}

Test(safety, a_name_taken_meanwhile_strands_the_log_and_exits_1, .timeout = 120)
{
	struct run r;

	tmpdir(&r);
	take_the_name_meanwhile(&r, "");
	cleanup(&r);
}

/* --force replaces the FILE there at the start, not one that took the
 * name meanwhile: two `record --force -o x.t4t` at once both said "wrote
 * x.t4t", the first log silently replaced by the second. */
Test(safety, force_replaces_no_file_made_meanwhile, .timeout = 120)
{
	struct run r;

	tmpdir(&r);
	take_the_name_meanwhile(&r, "--force");
	cleanup(&r);
}

/* A record killed right after it gave FILE its name (FILE.old there, its
 * private directory gone) leaves a readable log there, never an empty
 * FILE next to FILE.old (info's word on a last chunk the kill cut short
 * is not compared). */
Test(safety, killed_after_naming_leaves_a_readable_log, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "printf old > k.t4t; \"$B\" record -q --sim -d 10s -o k.t4t & rec=$!; "
		  "while kill -0 $rec 2>/dev/null && { [ ! -e k.t4t.old ] || "
		  "ls -d k.t4t.partial-* > /dev/null 2>&1; }; do sleep 0.001; done; "
		  "kill -9 $rec; wait $rec; cat k.t4t.old; echo; "
		  "\"$B\" info k.t4t > /dev/null 2>&1 && echo readable");
	cr_assert(strstr(r.out, "old\nreadable\n"), "%s", r.out);
	cleanup(&r);
}

/* A virtual recording is named as a live one is, once its first chunk is
 * on disk, not at its end: killed midway (SIGKILL, the OOM killer), it
 * leaves a named, readable log (FILE.old kept), not a private directory
 * that the next run writing to FILE would have removed. Its 100000 h are
 * killed once it is named, FILE.old there and its private directory gone
 * (or after about 10 s: the test then fails). It was killed once FILE.old
 * was there: between the two renames that named it, FILE was missing
 * (the test failed on a busy machine); FILE now names the older file or
 * the log at every instant (a hard link, then one rename). */
Test(safety, a_killed_virtual_recording_leaves_a_named_log, .timeout = 120)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, CLI_BOUND_RUNAWAY "printf old > k.t4t; "
		  "\"$B\" record -q --sim=3 --virtual --backend pwrite "
		  "--period 100ms -d 100000h -o k.t4t & rec=$!; i=0; "
		  "while kill -0 $rec 2>/dev/null && { [ ! -e k.t4t.old ] || "
		  "ls -d k.t4t.partial-* > /dev/null 2>&1; } && [ $i -lt 1000 ]; do "
		  "sleep 0.01; i=$((i+1)); done; "
		  "kill -9 $rec; wait $rec; cat k.t4t.old; echo; "
		  "\"$B\" info k.t4t > /dev/null 2>&1 && echo readable; "
		  "ls -d k.t4t.partial-* 2>/dev/null || echo no-partial");
	cr_assert(strstr(r.out, "old\nreadable\nno-partial\n"), "%s", r.out);
	cleanup(&r);
}

/* ---- processes: every descendant of the command ends with record ------------ */

/* The command leaves grandchildren: one in the background, one in a session
 * of its own (setsid), one deaf to SIGTERM. However record ends (`how`: a
 * shell line acting on $rec), none of them survives it (the keeper's
 * SIGTERM, then its SIGKILL 2 s later). A survivor is killed by its PID
 * after the check. Every way but a SIGKILL of record (where they are all
 * still under the command) needs the keeper to be a child subreaper, to
 * find them once the command has died. The third is deaf from its fork
 * (the command ignores SIGTERM around it; c.pid is written once the
 * command takes SIGTERM again), not from a trap it ran after c.pid was
 * written, and the waits are bounded as the project's others
 * (600 x 0.05 s at least): record was given 400 x 0.025 s to start the
 * command (--sim builds a sysfs tree first: up to 11 s seen on a loaded
 * machine) and was then killed even if the PIDs were not written. */
static void descendants_end(const char *cmd, const char *how)
{
	struct run r;
	char line[2048];
	bool deaf = strstr(how, "INT"); /* the command ignores SIGINT and SIGTERM */

	tmpdir(&r);
	snprintf(line, sizeof(line),
		 "%s \"$B\" record -q --sim --backend pwrite -o k.t4t -- sh -c '%s exec >/dev/null 2>&1; "
		 "sleep 1001 & echo $! > a.pid; setsid sleep 1002 & echo $! > b.pid; "
		 "trap \"\" TERM; sleep 1003 & c=$!; %secho $c > c.pid; %s' & rec=$!; "
		 "for i in $(seq 600); do [ -s c.pid ] && break; sleep 0.05; done; "
		 "%s; wait $rec; echo rc=$?; P=$(cat a.pid b.pid c.pid); "
		 "for i in $(seq 600); do n=0; for p in $P; do gone $p || n=1; done; "
		 "  [ $n = 0 ] && break; sleep 0.05; done; "
		 "for p in $P; do gone $p && echo gone || { echo alive; kill -9 $p; }; done",
		 gone_check, deaf ? "trap \"\" INT TERM; " : "", deaf ? "" : "trap - TERM; ", cmd,
		 how);
	sh_in_dir(&r, line);
	cr_assert(strstr(r.out, "\ngone\ngone\ngone\n"), "%s: %s", how, r.out);
	cleanup(&r);
}

Test(safety, descendants_end_with_a_killed_record, .timeout = 120)
{
	descendants_end("wait", "kill -9 $rec");
}

Test(safety, descendants_end_with_a_terminated_record, .timeout = 120)
{
	t4t_need_subreaper();
	descendants_end("wait", "kill -TERM $rec");
}

Test(safety, descendants_end_after_a_third_interrupt, .timeout = 120)
{
	t4t_need_subreaper();
	descendants_end("wait", SH_DELIVERED "for i in 1 2 3; do kill -INT $rec; delivered; done");
}

Test(safety, descendants_end_when_the_command_exits, .timeout = 120)
{
	t4t_need_subreaper();
	descendants_end("exit 0", "true");
}

/* ---- exit statuses: the reader gone, a full disk ----------------------------- */

/* The exit status of each of the shell lines (run in r.dir, $B the binary,
 * stdout a pipe whose reader is gone: every write fails with EPIPE), and
 * what they said on stderr. */
static void with_reader_gone(struct run *r, const char *const *lines, int n, int *rc)
{
	char cmd[2 * PATH_MAX + 2048], path[PATH_MAX + 16];
	int p[2], st;

	for (int i = 0; i < n; i++) {
		cr_assert_eq(pipe(p), 0);
		close(p[0]);
		pid_t kid = fork();
		cr_assert_geq(kid, 0);
		if (kid == 0) {
			snprintf(cmd, sizeof(cmd), "B='%s'; cd '%s' && exec 2>>err && %s", bin(), r->dir,
				 lines[i]);
			dup2(p[1], STDOUT_FILENO);
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			_exit(99);
		}
		close(p[1]);
		cr_assert_eq(waitpid(kid, &st, 0), kid);
		rc[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	snprintf(path, sizeof(path), "%s/err", r->dir);
	r->out[0] = '\0';
	t4_read_small_file(path, r->out, sizeof(r->out));
}

/* A recorder in r.dir serving c.sock (its PID in rec.pid), and its end. */
static void start_recorder(struct run *r)
{
	char out[sizeof(r->out)];

	memcpy(out, r->out, sizeof(out));
	sh_in_dir(r, "\"$B\" record -q --sim --control c.sock -o c.t4t > rec.log 2>&1 & echo $! > rec.pid; "
		  "for i in $(seq 500); do \"$B\" ctl --control c.sock status >/dev/null 2>&1 && "
		  "echo started && break; sleep 0.01; done");
	cr_assert(strstr(r->out, "started"), "%s", r->out);
	memcpy(r->out, out, sizeof(out));
}

static void stop_recorder(struct run *r)
{
	char out[sizeof(r->out)];

	memcpy(out, r->out, sizeof(out));
	sh_in_dir(r, "rec=$(cat rec.pid); kill -INT $rec; while kill -0 $rec 2>/dev/null; do "
		  "sleep 0.02; done");
	memcpy(r->out, out, sizeof(out));
}

/* Every command whose standard output's reader went away exits 141 (as if
 * SIGPIPE had killed it, as the shell says `| head`), quietly. */
Test(safety, every_command_exits_141_when_its_reader_goes, .timeout = 60)
{
	static const char *const lines[] = {
		"\"$B\" list",
		"\"$B\" info s.t4t",
		"\"$B\" info --json s.t4t",
		"\"$B\" decode s.t4t -f csv",
		"\"$B\" ctl --control c.sock status",
		"\"$B\" top --control c.sock -i 100ms",
		"\"$B\" record -q --sim --backend pwrite -d 100ms -o -",
		/* a command still running when the log stopped is waited for,
		 * quietly: it ends once the recorder's status stands still */
		"\"$B\" record -q --sim --backend pwrite -o - -- sh -c 'p=; n=0; while [ $n -lt 3 ]; "
		"do s=$(\"$T4_BIN\" ctl status 2>&1); if [ \"$s\" = \"$p\" ]; then n=$((n+1)); "
		"else n=0; fi; p=$s; sleep 0.1; done'",
	};
	int rc[T4_ARRAY_LEN(lines)];
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q --sim -d 50ms -o s.t4t");
	start_recorder(&r);
	with_reader_gone(&r, lines, T4_ARRAY_LEN(lines), rc);
	stop_recorder(&r);
	for (size_t i = 0; i < T4_ARRAY_LEN(lines); i++)
		cr_expect_eq(rc[i], 141, "%s: exit %d", lines[i], rc[i]);
	cr_assert_str_eq(r.out, "", "not quiet");
	cleanup(&r);
}

/* The same for report -o - and --help (a test of their own: under
 * qemu-user the report alone takes seconds). */
Test(safety, report_and_help_exit_141_when_their_reader_goes, .timeout = 60)
{
	static const char *const lines[] = {
		"\"$B\" report s.t4t -o -",
		"\"$B\" --help",
	};
	int rc[T4_ARRAY_LEN(lines)];
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "\"$B\" record -q --sim --backend pwrite -d 50ms -o s.t4t");
	with_reader_gone(&r, lines, T4_ARRAY_LEN(lines), rc);
	for (size_t i = 0; i < T4_ARRAY_LEN(lines); i++)
		cr_expect_eq(rc[i], 141, "%s: exit %d", lines[i], rc[i]);
	cr_assert_str_eq(r.out, "", "not quiet");
	cleanup(&r);
}

/* A full disk under standard output (or, for record's summary, standard
 * error): exit 1, and the error said where it can be. */
Test(safety, write_errors_exit_1, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	start_recorder(&r);
	sh_in_dir(&r, "\"$B\" record -q --sim -d 50ms -o s.t4t; "
		  "\"$B\" ctl --control c.sock status > /dev/full; echo ctl=$?; "
		  "\"$B\" top --control c.sock -i 100ms -n 1 > /dev/full; echo top=$?; "
		  "\"$B\" info s.t4t > /dev/full; echo info=$?; "
		  "\"$B\" info --json s.t4t > /dev/full; echo json=$?; "
		  "\"$B\" list > /dev/full; echo list=$?; "
		  "\"$B\" decode s.t4t > /dev/full; echo decode=$?; "
		  "\"$B\" record --sim -d 20ms -o t.t4t 2> /dev/full; echo record=$?; "
		  "\"$B\" --help > /dev/full; echo help=$?; "
		  "\"$B\" --version > /dev/full; echo version=$?; "
		  "\"$B\" record --help > /dev/full; echo record-help=$?");
	stop_recorder(&r);
	cr_assert(strstr(r.out, "ctl=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "top=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace top: standard output: No space left on device\n"),
		  "the error said (it was 'standard output', no reason): %s", r.out);
	cr_assert(strstr(r.out, "info=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "json=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "list=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "decode=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "record=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "help=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "version=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "record-help=1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: standard output: No space left on device\n"), "%s",
		  r.out);
	cleanup(&r);
}
