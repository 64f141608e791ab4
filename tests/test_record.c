/* test_record.c - `t410trace record` end to end, as a user runs it.
 *
 * Runs the built binary (T4_BIN, set by `make check`) and checks exit codes,
 * one-line errors, and the log through `t410trace info --json`.
 */
#include "cli_testutil.h"
#include "sched_testutil.h" /* t4t_need_bpf_trigger (tests/probe.h), read_back */

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include "util/util.h"
#include "tmpdir_testutil.h"

Test(record, host_duration_period, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	sh(&r, "'%s' record --period 1ms --duration 1s --bookmark phase1 -o '%s/t.t4t'", b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "triggers"), "no summary: %s", r.out);
	sh(&r, "'%s' info --json '%s/t.t4t'", b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	/* The scheduler ends the recording on its grid: the baseline, 999
	 * periodic triggers and the final one at 1 s, late ones counted. The
	 * IDs are the grid's indexes: a skipped grid point is a gap, counted
	 * as an overrun. */
	long long trig = json_num(r.out, "triggers"), over = json_num(r.out, "overruns");
	cr_assert_eq(trig + over, 1001, "triggers %lld overruns %lld", trig, over);
	cr_assert_eq(json_num(r.out, "first_trigger"), 0);
	cr_assert_eq(json_num(r.out, "last_trigger"), 1000);
	cr_assert(strstr(r.out, "\"contiguous\": true"), "gaps beyond the overruns: %s", r.out);
	cr_assert(strstr(r.out, "\"trigger_path\": \"bpf\"") || strstr(r.out, "\"trigger_path\": \"user\""),
		  "%s", r.out);
	cr_assert_eq(json_num(r.out, "dropped"), 0);
	cr_assert(strstr(r.out, "\"name\": \"phase1\", \"first_trigger\": 0"),
		  "bookmark from the command line not on trigger 0: %s", r.out);
	cr_assert(strstr(r.out, "software"), "software domain missing: %s", r.out);
	/* the scheduler reads its own CPU's domains itself: none can be late */
	const char *d0 = strstr(r.out, "\"name\": \"software@cpu0\"");
	cr_assert_not_null(d0, "%s", r.out);
	cr_assert_eq(json_num(d0, "unanswered"), 0, "%s", d0);
	cleanup(&r);
}

Test(record, command_exit_code_and_bookmarks, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "'%s' record -q --sim --period 1ms -o '%s/s.t4t' -- sh -c "
	       "'\"$T4_BIN\" ctl bookmark load && sleep 0.05 && \"$T4_BIN\" ctl bookmark store && "
	       "sleep 0.05; exit 3'",
	   b, r.dir);
	cr_assert_eq(r.status, 3, "exit code not propagated: %d %s", r.status, r.out);
	sh(&r, "'%s' info --json '%s/s.t4t'", b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "\"load\""), "%s", r.out);
	cr_assert(strstr(r.out, "\"store\""), "%s", r.out);
	/* the recording spans the command's 0.1 s of sleeps: grid points
	 * 0..100 at least, fired or (a loaded machine) counted as overruns */
	cr_assert_geq(json_num(r.out, "last_trigger"), 100, "%s", r.out);
	cr_assert_gt(json_num(r.out, "triggers"), 2, "%s", r.out);
	sh(&r, "'%s' info '%s/s.t4t'", b, r.dir);
	cr_assert(strstr(r.out, "SIMULATED") || strstr(r.out, "simulated"), "%s", r.out);
	cleanup(&r);
}

/* -c with a relative path: the command finds the recorder after changing
 * directory (its T410TRACE_CONTROL named "c.sock", which the command then
 * looked for in its own new directory: every bookmark failed). */
Test(record, relative_control_path_found_from_another_directory, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record -q --sim -c c.sock -o s.t4t -- sh -c "
	       "'cd / && \"$T4_BIN\" ctl bookmark moved'", r.dir, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	sh(&r, "'%s' info --json '%s/s.t4t'", b, r.dir);
	cr_assert(strstr(r.out, "\"name\": \"moved\""), "%s", r.out);
	cleanup(&r);
}

/* A recorder paused with a control socket, on trigger path `path`: one
 * bookmark, two triggers, status, Ctrl-C. The triggers are exactly the
 * baseline, the two asked for, and the final one. */
static void control_session(const char *path)
{
	struct run r;
	const char *b = bin();
	char want[64];

	t4t_need_perf();
	tmpdir(&r);
	/* The socket opens before the baseline trigger: wait for trigger 0,
	 * else a slow start puts the bookmark on it. */
	sh(&r, "'%s' record -q --trigger %s --paused --control '%s/c.sock' -o '%s/c.t4t' & rec=$!; "
	       "for i in $(seq 600); do '%s' ctl --control '%s/c.sock' status 2>/dev/null | "
	       "grep -q 'triggers=1 ' && break; sleep 0.05; done; "
	       "'%s' ctl --control '%s/c.sock' bookmark two && "
	       "'%s' ctl --control '%s/c.sock' trigger && "
	       "'%s' ctl --control '%s/c.sock' trigger && sleep 0.1 && "
	       "'%s' ctl --control '%s/c.sock' status; kill -INT $rec; wait $rec",
	   b, path, r.dir, r.dir, b, r.dir, b, r.dir, b, r.dir, b, r.dir, b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "triggers=3"), "status: %s", r.out);
	sh(&r, "'%s' info --json '%s/c.t4t'", b, r.dir);
	cr_assert_eq(json_num(r.out, "triggers"), 4, "%s", r.out); /* + final */
	snprintf(want, sizeof(want), "\"trigger_path\": \"%s\"", path);
	cr_assert(strstr(r.out, want), "%s", r.out);
	/* paused: trigger 0 baseline, "two" set, then triggers 1 and 2 */
	cr_assert(strstr(r.out, "\"name\": \"two\", \"first_trigger\": 1"), "%s", r.out);
	cleanup(&r);
}

Test(record, control_socket_session, .timeout = 60)
{
	control_session("user");
}

static void expect_usage_error(const char *args, const char *needle)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record %s", r.dir, b, args);
	cr_assert_eq(r.status, 2, "'%s' exit %d: %s", args, r.status, r.out);
	cr_assert(strstr(r.out, needle), "'%s': no '%s' in: %s", args, needle, r.out);
	cr_assert_leq(count_lines(r.out), 2, "'%s' not a short error: %s", args, r.out);
	sh(&r, "ls -A '%s' | wc -l", r.dir);
	cr_assert_eq(atoi(r.out), 0, "'%s' left files behind", args);
	cleanup(&r);
}

Test(record, bad_input_one_line_exit_2)
{
	expect_usage_error("--period 5 --duration 1s", "unit");
	expect_usage_error("--period 1xs --duration 1s", "1xs");
	expect_usage_error("--period 1us --duration 1s", "10us");
	expect_usage_error("--duration soon", "soon");
	expect_usage_error("-e nosuchpmu/foo/ --duration 1s", "nosuchpmu");
	expect_usage_error("--zstd-level 99", "--zstd-level 99: use -");
	expect_usage_error("--zstd-level 0", "--zstd-level 0: use -");
	expect_usage_error("--zstd-level -0", "--zstd-level -0: use -");
	expect_usage_error("--zstd-level +3", "--zstd-level +3: an integer");
	expect_usage_error("--zstd-level --3", "--zstd-level --3: an integer");
	expect_usage_error("--zstd-level -99999999999", "an integer");
	expect_usage_error("--bogus", "--bogus");
	expect_usage_error("--sim=abc", "abc");
	expect_usage_error("--fsync 5", "--fsync 5");
	expect_usage_error("--backend aio", "aio");
	expect_usage_error("--log-format 4", "--log-format 4: use 1-3");
	expect_usage_error("--log-format 0", "--log-format 0: use 1-3");
	expect_usage_error("--sim --sysfs-root /nonexistent", "/nonexistent: No such file or directory");
	expect_usage_error("-e 'nvidia_pcie_pmu_0_rc_4/rd_bytes,src_rp_mask=1,src_bdf=0x180,src_bdf_en=1/' --sim",
			   "mutually exclusive");
	expect_usage_error("--sim -e cpu-clock", "without --sim");
	expect_usage_error("--trigger kernel", "--trigger kernel");
	expect_usage_error("--sim --trigger bpf", "user space");
	/* empty names: not a log stranded as '.partial-PID' after the whole
	 * run, nor a COMMAND left without its control socket */
	expect_usage_error("--sim -d 10ms -o ''", "-o: an empty file name");
	expect_usage_error("--sim -d 10ms -c '' -- true", "-c: an empty socket path");
	/* a directory's name: it used to record all of the run into
	 * x.partial-PID-XXXXXX/log, then fail to name it and exit 1 */
	expect_usage_error("--sim -d 10ms -o x/", "x/: names a directory");
	/* the socket at the log's name: the log could not be named after the
	 * run (it stayed as FILE.partial-PID, and record said 0) */
	expect_usage_error("--sim -d 10ms -c x.t4t -o x.t4t", "-c x.t4t: names the log");
	expect_usage_error("--sim -d 10ms -c ./x.t4t -o ../$(basename \"$PWD\")/x.t4t",
			   "the control socket needs a name of its own");
}

/* A period longer than --duration: not one period fits. Virtual time
 * used to run on to the next grid point and fail on its bookmark queue
 * ("32768 bookmarks already wait ..."); live, the final trigger cut the
 * only period short. Refused before any file is made; equal is fine. */
Test(record, period_longer_than_duration_refused)
{
	struct run r;
	const char *b = bin();

	expect_usage_error("--sim --virtual --period 100h -d 1s -o X.t4t",
			   "--period 100h is longer than --duration 1s");
	expect_usage_error("--sim --period 2s -d 1s -o X.t4t",
			   "--period 2s is longer than --duration 1s");
	expect_usage_error("--sim -I 20 -d 10ms", "-I 20 is longer than --duration 10ms");
	expect_usage_error("--sim -d 500us", "--period 1ms (the default) is longer than --duration 500us");
	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record -q --sim --virtual --period 1s -d 1s -o e.t4t && "
	       "'%s' info --json e.t4t", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_eq(json_num(r.out, "triggers"), 2, "%s", r.out);
	cleanup(&r);
}

Test(record, help_and_version)
{
	struct run r;
	const char *b = bin();

	sh(&r, "'%s' record --help", b);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "--period"));
	sh(&r, "'%s' --version", b);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "t410trace "));
	sh(&r, "'%s' decode no-such-file.t4t", b);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.out, "no-such-file.t4t"), "%s", r.out);
	sh(&r, "'%s' frobnicate", b);
	cr_assert_eq(r.status, 2);
}

/* libt410trace in a program run by record: each t410_bookmark() applies to
 * the triggers after it, each t410_trigger() fires exactly one trigger. With
 * --paused the only triggers are 0 (baseline), the program's, and the
 * final one, so every bookmark's first trigger is known exactly. */
Test(record, library_bookmarks_land_on_their_triggers, .timeout = 60)
{
	struct run r;
	const char *b = bin();
	const char *out = getenv("T4_OUT");
	char app[PATH_MAX];

	if (!out)
		cr_skip_test("T4_OUT not set (run through make check)");
	tmpdir(&r);
	t4t_exec_tmpdir(app, sizeof(app), "t4app"); /* $TMPDIR may be noexec */
	/* An app loading a sanitized library must be sanitized too. */
	sh(&r, "%s -std=c17 $(nm -D --undefined-only '%s/libt410trace.so' | grep -q __asan_ && "
	       "echo -fsanitize=address,undefined) -Iinclude tests/apps/lib_app.c -o '%s/lib_app' "
	       "-L'%s' -lt410trace -Wl,-rpath,'%s' -pthread", t4t_cc(), out, app, out, out);
	cr_assert_eq(r.status, 0, "compile: %s", r.out);
	sh(&r, "'%s' record -q --sim --paused -o '%s/l.t4t' -- '%s/lib_app' order 3", b, r.dir, app);
	cr_assert_eq(r.status, 0, "%s", r.out);
	sh(&r, "'%s' info --json '%s/l.t4t'", b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	/* triggers: 0 baseline, 1..3 the program's, 4 final */
	cr_assert_eq(json_num(r.out, "triggers"), 5, "%s", r.out);
	for (int i = 0; i < 3; i++) {
		char want[96];
		snprintf(want, sizeof(want), "\"name\": \"b%d\", \"first_trigger\": %d", i, i + 1);
		cr_assert(strstr(r.out, want), "no '%s' in %s", want, r.out);
	}
	cleanup(&r);
	cr_assert_eq(t4_rmtree(app), 0);
}

/* --per-socket: one scheduler per simulated socket, each with its own
 * contiguous trigger IDs; info counts them per scheduler. */
Test(record, per_socket_schedulers, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "'%s' record -q --sim --per-socket --period 2ms -o '%s/p.t4t' -- sleep 0.2", b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	sh(&r, "'%s' info --json '%s/p.t4t'", b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_eq(json_num(r.out, "schedulers"), 2, "%s", r.out);
	/* each domain names its scheduler: socket 1's PMUs answer scheduler 1 */
	const char *d1 = strstr(r.out, "\"name\": \"nvidia_ucf_pmu_1\"");
	cr_assert_not_null(d1, "%s", r.out);
	cr_assert_eq(json_num(d1, "sched_id"), 1, "%s", d1);
	/* both schedulers fire on the one grid: IDs first..last each, gaps
	 * counted as overruns */
	long long span = json_num(r.out, "last_trigger") - json_num(r.out, "first_trigger") + 1;
	cr_assert_eq(json_num(r.out, "triggers") + json_num(r.out, "overruns"), 2 * span,
		     "%s", r.out);
	cr_assert_eq(json_num(r.out, "dropped"), 0);
	cleanup(&r);
}

/* `list` on this machine: the real software PMU with its events by name,
 * and msr/tsc; with --sim all 34 simulated instances. */
Test(record, list_shows_this_machine_and_the_sim)
{
	struct run r;
	const char *b = bin();

	sh(&r, "'%s' list", b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "software") && strstr(r.out, "context-switches"), "%s", r.out);
	cr_assert(strstr(r.out, "tsc"), "%s", r.out);
	sh(&r, "'%s' list --sim | grep -c '^  nvidia_'", b);
	cr_assert_eq(atoi(r.out), 34, "%s", r.out);
}

/* A recording that fails while setting up leaves an existing file of the
 * output's name untouched. */
Test(record, failed_setup_keeps_existing_output)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "printf 'precious' > '%s/keep.t4t' && '%s' record -b 'bad name' -o '%s/keep.t4t'; "
	       "'%s' record -c /nonexistent/dir/sock -o '%s/keep.t4t'; cat '%s/keep.t4t'; ls '%s'",
	   r.dir, b, r.dir, b, r.dir, r.dir, r.dir);
	cr_assert(strstr(r.out, "precious"), "%s", r.out);
	cr_assert_null(strstr(r.out, "partial"), "temporary file left: %s", r.out);
	cleanup(&r);
}

/* SIGINT right after start (while the command is being started) ends the
 * command and the recording promptly: it is neither lost nor swallowed.
 * A background job of sh starts with SIGINT ignored, unlike one started
 * from a terminal: env gives it the default back, so a signal that comes
 * before the recorder's handler (a slow start, e.g. under qemu) still
 * counts. */
Test(record, sigint_during_startup_stops_the_command, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "start=$(date +%%s%%N); "
	       "env --default-signal=INT '%s' record -q --sim -o '%s/i.t4t' -- sleep 30 & pid=$!; "
	       "sleep 0.05; kill -INT $pid; wait $pid; rc=$?; "
	       "echo rc=$rc ms=$(( ($(date +%%s%%N) - start) / 1000000 ))", b, r.dir);
	cr_assert(strstr(r.out, "rc=130"), "%s", r.out);
	const char *ms = strstr(r.out, "ms=");
	cr_assert_not_null(ms);
	cr_assert_lt(atoi(ms + 3), 20000, "it waited for the command: %s", r.out);
	cleanup(&r);
}

/* --virtual: a simulated recording in virtual time. The same command gives
 * the same bytes (run in two directories, as the command line is in the
 * log), another seed other bytes; info sees a complete recording: two
 * schedulers with contiguous triggers, the final one on the grid, phase
 * bookmarks, no drops; the summary says what it is. */
Test(record, virtual_time_same_log_for_same_seed, .timeout = 120)
{
	struct run r;
	const char *b = bin();
	const char *args = "--virtual --duration 2s --per-socket --sim-drift 500 "
			   "--sim-wander 100 --sim-preempt 0.1 -o v.t4t";

	tmpdir(&r);
	sh(&r, "{ cd '%s' && mkdir a b c && cd a && '%s' record --sim=3 %s && cd ../b && "
	       "'%s' record --sim=3 %s && cd ../c && '%s' record --sim=4 %s && cd .. && "
	       "cmp a/v.t4t b/v.t4t && echo SAME; cmp -s a/v.t4t c/v.t4t || echo OTHER; }",
	   r.dir, b, args, b, args, b, args);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "SAME") && strstr(r.out, "OTHER"), "%s", r.out);
	cr_assert(strstr(r.out, "SIMULATED Tegra410 in VIRTUAL time: 4002 triggers"), "%s", r.out);
	sh(&r, "'%s' info --json '%s/a/v.t4t'", b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_eq(json_num(r.out, "triggers"), 4002, "%s", r.out);
	cr_assert_eq(json_num(r.out, "schedulers"), 2);
	cr_assert_eq(json_num(r.out, "dropped"), 0);
	cr_assert_eq(json_num(r.out, "first_trigger"), 0);
	cr_assert_eq(json_num(r.out, "last_trigger"), 2000);
	cr_assert(strstr(r.out, "\"contiguous\": true"), "%s", r.out);
	cr_assert(strstr(r.out, "\"simulated\": true"), "%s", r.out);
	cr_assert(strstr(r.out, "\"start_ref_ns\": 100010000000"), "%s", r.out);
	const char *d1 = strstr(r.out, "\"name\": \"nvidia_ucf_pmu_1\"");
	cr_assert_not_null(d1, "%s", r.out);
	cr_assert_eq(json_num(d1, "sched_id"), 1, "%s", d1);
	cr_assert_eq(json_num(d1, "unanswered"), 0, "%s", d1);
	cr_assert(strstr(r.out, "\"name\": \"cpu_compute\"") && strstr(r.out, "\"name\": \"gpu_stream\"") &&
		  strstr(r.out, "\"name\": \"pcie_dma\""), "phase bookmarks missing: %s", r.out);
	/* the defaults the man page gives: -o t410trace.t4t, --period 1ms */
	sh(&r, "cd '%s/c' && '%s' record -q --sim=3 --virtual --duration 20ms && "
	       "'%s' info --json t410trace.t4t", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_eq(json_num(r.out, "period_ns"), 1000000, "%s", r.out);
	cr_assert_eq(json_num(r.out, "triggers"), 21, "%s", r.out);
	cleanup(&r);
}

/* The summary's line on domains and timing reads the same live and in
 * virtual time: "trigger to sample" (the man page's and FORMAT.md's word
 * for it; virtual time said "skew (trigger to sample)"), and one domain
 * or counter in the singular ("1 domains, 1 counters" stood). */
Test(record, summary_words_live_and_virtual_alike, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record --sim -e nvidia_ucf_pmu_0/cycles/ -d 20ms -o l.t4t && "
	       "'%s' record --sim --virtual -e nvidia_ucf_pmu_0/cycles/,nvidia_ucf_pmu_1/cycles/ "
	       "-d 20ms -o v.t4t", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: 1 domain, 1 counter; trigger to sample p50 "), "%s",
		  r.out);
	cr_assert(strstr(r.out, "t410trace: 2 domains, 2 counters; trigger to sample p50 "), "%s",
		  r.out);
	cr_assert_null(strstr(r.out, "skew"), "%s", r.out);
	cleanup(&r);
}

/* Records the same 300 ms of simulated Tegra410 once without opt and once
 * with each of vals (opt VAL), and checks each log decodes to the default
 * one's CSV rows. */
static void logs_decode_alike(const char *opt, const char *vals)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "{ cd '%s' && for v in default %s; do "
	       "if [ $v = default ]; then o=''; else o=\"%s $v\"; fi; "
	       "'%s' record -q --sim=3 --virtual --duration 300ms $o -o l$v.t4t && "
	       "'%s' decode l$v.t4t -f csv -o l$v.csv 2>/dev/null || exit 1; "
	       "cmp ldefault.csv l$v.csv || exit 1; done; echo SAME; }", r.dir, vals, opt, b, b);
	cr_assert_eq(r.status, 0, "%s %s: %s", opt, vals, r.out);
	cr_assert(strstr(r.out, "SAME"), "%s", r.out);
	cleanup(&r);
}

/* Every zstd level the option takes, fast (negative) ones too, writes a
 * log that decodes to the same rows as the default's. */
Test(record, zstd_levels_decode_alike, .timeout = 120)
{
	logs_decode_alike("--zstd-level", "-7 1 19");
}

/* --fsync DUR or close (the man page's RECORD OPTIONS): either writes the
 * log the default does; a DUR out of 1ms-1h is refused saying the range. */
Test(record, fsync_every_duration_or_at_close, .timeout = 120)
{
	logs_decode_alike("--fsync", "close 10ms 1h");
	expect_usage_error("--sim -d 10ms --fsync 2h", "--fsync 2h: use 1ms-1h, or 'close'");
	expect_usage_error("--sim -d 10ms --fsync 0ms", "--fsync 0ms");
}

/* --progress forces the progress line on a pipe (the man page), a
 * --virtual recording's too (it had none: an hour at 1 ms ran 80 s
 * without a word); -q wins; without either a pipe gets none. */
Test(record, progress_line_on_a_pipe_live_and_virtual, .timeout = 120)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record --sim -d 300ms --progress --backend pwrite -o l.t4t 2>&1 | "
	       "tr '\r\033' '|~' | head -c 300", r.dir, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(!strncmp(r.out, "|", 1) && strstr(r.out, "s  triggers ") &&
		  strstr(r.out, "~[K\nt410trace: SIMULATED"), "%s", r.out);
	sh(&r, "cd '%s' && '%s' record --sim=3 --virtual -d 1s --progress --backend pwrite "
	       "-o v.t4t 2>&1 | "
	       "tr '\r\033' '|~'", r.dir, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(!strncmp(r.out, "|", 1) &&
		  strstr(r.out, "|   1.0s of 1s virtual  triggers 1001  drops 0  written ") &&
		  strstr(r.out, "~[K\nt410trace: SIMULATED Tegra410 in VIRTUAL time"), "%s", r.out);
	sh(&r, "cd '%s' && '%s' record --sim=3 --virtual -d 1s -q --progress --backend pwrite "
	       "-o q.t4t 2>&1 && '%s' record --sim=3 --virtual -d 1s --backend pwrite -o n.t4t "
	       "2>&1 | grep -c \"$(printf '\r')\"",
	   r.dir, b, b);
	cr_assert_str_eq(r.out, "0\n");
	cleanup(&r);
}

/* Ctrl-C stops a virtual recording as it stops a live one: the next
 * trigger is the final one and the log is published. It used to be
 * ignored: `--virtual -d 100000h` ran on, writing GBs, until SIGKILL.
 * The signal goes once the log has bytes, private or named (waiting for the
 * private one only, the test wrote for 30 s: 500 MB); the handler is set
 * before the log is opened; every wait is bounded, and a recorder still
 * running after 30 s is killed and said. */
static void interrupt_virtual(struct run *r, const char *opts)
{
	sh(r, CLI_BOUND_RUNAWAY "cd '%s' && { '%s' record %s --sim=3 --virtual -d 100000h --period 100ms -o v.t4t "
	      "2> err & pid=$!; i=0; until [ -s v.t4t ] || "
	      "[ -s \"$(ls -d v.t4t.partial-*/log 2>/dev/null)\" ] || "
	      "[ $i -ge 1500 ]; do sleep 0.02; i=$((i+1)); done; kill -INT $pid; i=0; "
	      "while kill -0 $pid 2>/dev/null && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done; "
	      "if kill -0 $pid 2>/dev/null; then kill -KILL $pid; echo STILL-RUNNING; fi; "
	      "wait $pid; echo rc=$?; echo ---; cat err; rm -rf v.t4t.partial-*; }",
	   r->dir, bin(), opts);
}

Test(record, virtual_time_stops_on_sigint, .timeout = 120)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	interrupt_virtual(&r, "");
	cr_assert_null(strstr(r.out, "STILL-RUNNING"), "Ctrl-C ignored: %s", r.out);
	cr_assert(strstr(r.out, "rc=0"), "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: warning: interrupted: the virtual recording ends "
				"early, at "), "%s", r.out);
	sh(&r, "'%s' info --json '%s/v.t4t'", b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "\"contiguous\": true"), "%s", r.out);
	cr_assert_lt(json_num(r.out, "last_trigger"), 3600000000.0, "%s", r.out);
	cleanup(&r);
}

/* -q keeps warnings, and a virtual recording cut short by a signal is
 * one: its log holds less than --duration asked. The line was dropped
 * with the summary, so a quiet script never learnt the log was short. */
Test(record, virtual_time_interrupted_is_said_with_q, .timeout = 120)
{
	struct run r;

	tmpdir(&r);
	interrupt_virtual(&r, "-q --backend pwrite");
	cr_assert_null(strstr(r.out, "STILL-RUNNING"), "Ctrl-C ignored: %s", r.out);
	const char *err = strstr(r.out, "rc=0\n---\n");
	cr_assert_not_null(err, "%s", r.out);
	err += strlen("rc=0\n---\n");
	cr_assert(!strncmp(err, "t410trace: warning: interrupted: the virtual recording ends "
				"early, at ", 70), "%s", r.out);
	cr_assert(strstr(err, " of virtual time (of 360000000s asked)\n"), "%s", r.out);
	cr_assert_eq(count_lines(err), 1, "-q printed more than the warning: %s", err);
	cleanup(&r);
}

Test(record, virtual_time_refusals)
{
	struct run r;
	const char *b = bin();

	expect_usage_error("--virtual --duration 1s", "--virtual records the simulator only: add --sim");
	expect_usage_error("--sim --virtual", "--virtual needs --duration");
	expect_usage_error("--sim --virtual --duration 1s -- true", "--virtual runs no command");
	expect_usage_error("--sim --virtual --duration 1s --paused", "--virtual takes no commands");
	expect_usage_error("--sim --virtual --duration 1s -c x.sock", "--virtual takes no commands");
	expect_usage_error("--sim --virtual --duration 1s --top", "--top: a live view of a live recording");
	expect_usage_error("--sim --duration 1s --sim-preempt 0.1", "--sim-preempt needs --virtual");
	expect_usage_error("--sim --virtual --duration 1s --sim-preempt 2", "--sim-preempt 2: use a probability");
	expect_usage_error("--duration 1s --sim-drift 500", "--sim-drift and --sim-wander need --sim");
	expect_usage_error("--sim --duration 1s --sim-wander 200000", "--sim-wander 200000: use 0-100000 ppm");
	/* preempted reads that do not fit the period: refused, no file left */
	tmpdir(&r);
	/* (messages may name p.t4t.partial-PID: look at the listing only) */
	sh(&r, "{ cd '%s' && '%s' record --sim --virtual --duration 1s --period 20us --sim-preempt 0.5 "
	       "-o p.t4t; echo rc=$?; ls | sed 's/^/file: /'; }", r.dir, b);
	cr_assert(strstr(r.out, "period 20us too short") && strstr(r.out, "rc=2"), "%s", r.out);
	cr_assert_null(strstr(r.out, "file: p.t4t"), "%s", r.out);
	cleanup(&r);
}

/* 200 bookmark commands through the control socket between two triggers,
 * on trigger path `path`: every one is in the log (info lists each name
 * with the trigger after it); before, only the last before each trigger
 * survived. The socket opens before the baseline trigger: the bookmarks
 * start once trigger 0 has fired, else a slow start puts some on it. */
static void rapid_bookmarks_in_info(const char *path)
{
	struct run r;
	const char *b = bin();

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	sh(&r, "cd '%s' || exit 1; '%s' record -q --trigger %s --paused --control c.sock -o b.t4t & "
	       "rec=$!; for i in $(seq 600); do '%s' ctl --control c.sock status 2>/dev/null | "
	       "grep -q 'triggers=1 ' && break; sleep 0.05; done; "
	       "i=0; while [ $i -lt 200 ]; do '%s' ctl --control c.sock bookmark b$i > /dev/null || "
	       "echo failed $i; i=$((i + 1)); done; '%s' ctl --control c.sock trigger; "
	       "kill -INT $rec; wait $rec; '%s' info --json b.t4t",
	   r.dir, b, path, b, b, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_null(strstr(r.out, "failed"), "%s", r.out);
	for (int i = 0; i < 200; i++) {
		char want[96];
		snprintf(want, sizeof(want), "\"name\": \"b%d\", \"first_trigger\": 1, \"set_ns\": ", i);
		cr_assert(strstr(r.out, want), "no '%s' in %.2000s", want, r.out);
	}
	cleanup(&r);
}

Test(record, rapid_bookmarks_all_in_info, .timeout = 120)
{
	rapid_bookmarks_in_info("user");
}

/* ---- trigger paths ---------------------------------------------------------- */

/* Record 300 ms at 1 ms with `args`, the command line put into `wrap` (a
 * format with one %s); the summary names the path, and the log's session
 * says it too, with its reference clock. */
static void record_on_path(struct run *r, const char *wrap, const char *args, const char *says,
			   const char *path, const char *clock)
{
	const char *b = bin();
	char cmd[2 * PATH_MAX + 100], want[64];

	t4t_need_perf(); /* this machine's counters, on either path */
	tmpdir(r);
	snprintf(cmd, sizeof(cmd), "'%s' record --period 1ms --duration 300ms %s -o '%s/t.t4t'", b,
		 args, r->dir);
	sh(r, wrap, cmd);
	cr_assert_eq(r->status, 0, "%s", r->out);
	cr_assert(strstr(r->out, says), "no '%s' in: %s", says, r->out);
	sh(r, "'%s' info '%s/t.t4t'", b, r->dir);
	cr_assert(strstr(r->out, clock), "%s", r->out);
	sh(r, "'%s' info --json '%s/t.t4t'", b, r->dir);
	snprintf(want, sizeof(want), "\"trigger_path\": \"%s\"", path);
	cr_assert(strstr(r->out, want), "no %s in %s", want, r->out);
	snprintf(want, sizeof(want), "\"ref_clock\": \"%s\"", clock);
	cr_assert(strstr(r->out, want), "no %s in %s", want, r->out);
	cr_assert_eq(json_num(r->out, "triggers") + json_num(r->out, "overruns"), 301, "%s", r->out);
	cr_assert(strstr(r->out, "\"contiguous\": true"), "%s", r->out);
}

/* Where the kernel can, the default records through BPF timers. */
Test(record_trigger, auto_records_through_bpf, .timeout = 60)
{
	struct run r;

	t4t_need_bpf_trigger();
	record_on_path(&r, "%s", "", "triggers fired by BPF timers in the kernel", "bpf",
		       "CLOCK_MONOTONIC");
	cr_assert_null(strstr(r.out, "notice"), "%s", r.out);
	cleanup(&r);
}

Test(record_trigger, user_path_on_request, .timeout = 60)
{
	struct run r;

	record_on_path(&r, "%s", "--trigger user", "triggers fired by user-space threads", "user",
		       "CLOCK_MONOTONIC_RAW");
	cleanup(&r);
}

/* Without CAP_BPF and CAP_SYS_ADMIN (CAP_PERFMON kept, so the counters
 * still open) auto falls back with one line saying why, and records;
 * --trigger bpf fails with that line. */
Test(record_trigger, falls_back_without_privilege, .timeout = 60)
{
	struct run r;
	const char *drop = "setpriv --bounding-set=-bpf,-sys_admin -- %s";
	char cmd[2 * PATH_MAX + 100];
	const char *b = bin();

	if (geteuid() != 0)
		cr_skip_test("needs root (it drops CAP_BPF and CAP_SYS_ADMIN to test the fallback)");
	sh(&r, "command -v setpriv");
	if (r.status != 0)
		cr_skip_test("setpriv (util-linux) not installed");
	record_on_path(&r, drop, "", "triggers fired by user-space threads", "user",
		       "CLOCK_MONOTONIC_RAW");
	cleanup(&r);
	tmpdir(&r);
	snprintf(cmd, sizeof(cmd), "'%s' record --period 1ms --duration 100ms -o '%s/t.t4t'", b,
		 r.dir);
	sh(&r, drop, cmd);
	cr_assert_eq(r.status, 0, "%s", r.out);
	const char *notice = strstr(r.out, "t410trace: notice: triggers fire in user space: ");
	cr_assert_not_null(notice, "%s", r.out);
	cr_assert_null(strstr(strchr(notice, '\n'), "notice"), "more than one notice: %s", r.out);
	cr_assert(strstr(r.out, "not permitted"), "%s", r.out);
	snprintf(cmd, sizeof(cmd), "'%s' record --trigger bpf --duration 100ms -o '%s/u.t4t'", b,
		 r.dir);
	sh(&r, drop, cmd);
	cr_assert_neq(r.status, 0, "%s", r.out);
	cr_assert_eq(count_lines(r.out), 1, "%s", r.out);
	cr_assert(strstr(r.out, "not permitted"), "%s", r.out);
	cleanup(&r);
}

/* A thread that cannot start (a small ulimit -u, as an unprivileged
 * user: nobody, with RLIMIT_NPROC 1 (the log's writer) or 2 (a monitor))
 * fails record with that one line and exit 1; the log closed after it,
 * whose writes could not start either, said "Operation canceled: the log
 * stopped before its first chunk" in its place, naming nothing missing. */
Test(record, a_thread_that_cannot_start_is_said, .timeout = 60)
{
	struct run r;

	if (geteuid() != 0)
		cr_skip_test("needs root (it records as nobody under RLIMIT_NPROC 1)");
	tmpdir(&r);
	sh_in_dir(&r, "command -v setpriv && command -v prlimit && chmod 0777 \"$D\" && "
		      "setpriv --reuid=65534 --regid=65534 --clear-groups \"$B\" --version");
	if (r.status != 0)
		cr_skip_test("no setpriv or prlimit, or nobody cannot run the binary: %s", r.out);
	/* (LeakSanitizer's own thread cannot start there either) */
	sh_in_dir(&r, "export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0; "
		      "for n in 1 2; do prlimit --nproc=$n setpriv --reuid=65534 --regid=65534 "
		      "--clear-groups \"$B\" record --sim -d 1s -o x.t4t 2>err >/dev/null; "
		      "echo rc=$?; grep -v '^t410trace: \\(warning\\|notice\\): ' err; done");
	if (strstr(r.out, "qemu: qemu_thread_create"))
		cr_skip_test("qemu-user itself aborts where a thread cannot start: %s", r.out);
	cr_assert_eq(count_lines(r.out), 4, "not one line each: %s", r.out);
	cr_assert(!strncmp(r.out, "rc=1\nt410trace: x.t4t: cannot start the writer thread: ", 55) ||
		  !strncmp(r.out, "rc=1\nt410trace: cannot start ", 29), "%s", r.out);
	cr_assert_not_null(strstr(r.out, "\nrc=1\nt410trace: cannot start "), "%s", r.out);
	cleanup(&r);
}

/* T410TRACE_BPF_DEBUG=1, as the man page and bpf/README.md say, shows
 * libbpf's messages and the verifier's statistics of the trigger's
 * program; without it, or set to 0, a quiet recording on the BPF path
 * says nothing. */
Test(record_trigger, bpf_debug_shows_libbpf_and_the_verifier, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	t4t_need_bpf_trigger();
	tmpdir(&r);
	sh(&r, "cd '%s' && for d in 1 0 ''; do if [ \"$d\" ]; then export T410TRACE_BPF_DEBUG=$d; "
	       "else unset T410TRACE_BPF_DEBUG; fi; '%s' record -q --backend pwrite --trigger bpf "
	       "-e cpu-clock -d 20ms -o d$d.t4t 2> err$d; echo rc=$?; done; "
	       "echo ---; cat err1; echo ---; cat err0; echo ---; cat err",
	   r.dir, b);
	const char *dbg = strstr(r.out, "rc=0\nrc=0\nrc=0\n---\n");
	cr_assert_not_null(dbg, "%s", r.out);
	cr_assert(strstr(dbg, "\nlibbpf: ") || !strncmp(dbg + 19, "libbpf: ", 8),
		  "no libbpf message: %s", r.out);
	const char *log = strstr(dbg, "-- BEGIN PROG LOAD LOG --\n");
	cr_assert_not_null(log, "no verifier log: %s", r.out);
	cr_assert(strstr(log, "\nprocessed ") && strstr(log, " insns "), "no statistics: %s",
		  r.out);
	size_t n = strlen(r.out); /* "---" twice ends it: err0 and err are empty */
	cr_assert(n > 9 && !strcmp(r.out + n - 9, "\n---\n---\n"),
		  "said without the variable or with it 0: %s", r.out);
	cleanup(&r);
}

/* The control socket on the BPF path: the commands reach the timers
 * through the program's global data. */
Test(record_trigger, bpf_control_socket_session, .timeout = 60)
{
	t4t_need_bpf_trigger();
	control_session("bpf");
}

Test(record_trigger, bpf_rapid_bookmarks_all_in_info, .timeout = 120)
{
	t4t_need_bpf_trigger();
	rapid_bookmarks_in_info("bpf");
}

/* ---- what a kill -9 loses on the BPF path ----------------------------------- */

static int64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Record a command at 1 ms through the BPF timers (the CPU activity too, where
 * they load), kill -9 at a known CLOCK_MONOTONIC instant (the path's
 * reference clock) and compare with the log's last trigger. The man page's bound: a chunk reaches the file within chunk_ms
 * (100 ms) of its oldest trigger, so the loss is under 100 ms plus one
 * period (the first trigger of the chunk not written), plus however late
 * the machine ran the writer thread, plus the write under way at the kill.
 * The writer's lateness is not visible from here; this process's is, under
 * the same load and scheduler: a thread sleeping 1 ms at a time for the
 * last 300 ms before the kill, its worst oversleep added. 20 ms cover the
 * write itself (a chunk of ~20 kB to the page cache). Before chunks were
 * aged by when their triggers fired, the BPF path's 50 ms drain came on
 * top: 68-147 ms measured here (14-95 ms since); log/chunk_aged_from_its_
 * oldest_trigger checks the rule itself without a clock race. */
Test(record_trigger, bpf_kill_loses_at_most_the_chunk_interval, .timeout = 60)
{
	const char *b = bin();
	char dir[PATH_MAX], path[PATH_MAX + 16];
	int64_t late = 0, kill_at, last = 0;
	struct readback rb;
	struct stat st;
	pid_t rec;

	t4t_need_bpf_trigger();
	t4t_tmpdir(dir, sizeof(dir), "t4kill");
	snprintf(path, sizeof(path), "%s/k.t4t", dir);
	rec = fork();
	cr_assert_geq(rec, 0);
	if (rec == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(b, b, "record", "-q", "--trigger", "bpf", "-a", "--period", "1ms", "-o", path,
		      "--", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1000 && (stat(path, &st) < 0 || st.st_size == 0); i++)
		usleep(10000);
	for (int i = 0; i < 600; i++) {
		int64_t t = mono_now();
		usleep(1000);
		if (i >= 300 && mono_now() - t - 1000000 > late)
			late = mono_now() - t - 1000000;
	}
	kill_at = mono_now();
	kill(rec, SIGKILL);
	cr_assert_eq(waitpid(rec, NULL, 0), rec);
	read_back(path, &rb);
	for (size_t i = 0; i < rb.n_refs; i++)
		if ((int64_t)rb.refs[i].ref_ns > last)
			last = (int64_t)rb.refs[i].ref_ns;
	free(rb.refs);
	free(rb.rets);
	free(rb.bms);
	t4_rmtree(dir);
	cr_assert_gt(last, 0, "no trigger in the log");
	cr_assert_leq(kill_at - last, 101000000 + 20000000 + late,
		      "lost %.1f ms (this process ran up to %.1f ms late)",
		      (double)(kill_at - last) / 1e6, (double)late / 1e6);
}

/* The command line in the log reads back through a shell as it was typed:
 * an argument with spaces or quotes, and an empty one, quoted. */
Test(record, command_line_reads_back_through_a_shell, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record -q --sim -d 20ms -o q.t4t -- sh -c 'echo \"it'\\''s\"' '' "
	       ">/dev/null && '%s' info q.t4t | sed -n 's/^  command *//p' > cmd && cat cmd && "
	       "eval \"set -- $(cat cmd)\" && printf '[%%s]' \"$@\"", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "-- sh -c 'echo \"it'\\''s\"' ''\n"), "%s", r.out);
	cr_assert(strstr(r.out, "[--][sh][-c][echo \"it's\"][]"), "%s", r.out);
	cleanup(&r);
}

/* Domain names are unique in a log (docs/FORMAT.md 4.2): two CPU-less PMUs
 * whose names share a 48-byte prefix (tests/fixtures/sysfs/long_names, the
 * software PMU's type so that this machine counts them) showed, in info
 * and in decode's JSONL, as two domains of one name. */
Test(record, long_pmu_names_are_domains_apart, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	t4t_need_perf();
	tmpdir(&r);
	sh(&r, "'%s' record -q --sysfs-root tests/fixtures/sysfs/long_names -e 'acme_*/clock/' "
	       "-C 0 -d 50ms -o '%s/l.t4t' && '%s' info --json '%s/l.t4t' | "
	       "grep -o '\"name\": \"acme_[^\"]*@cpu0\"' | sort | uniq -c && "
	       "'%s' decode -f jsonl '%s/l.t4t' | grep -c '\"type\": \"domain\"'",
	       b, r.dir, b, r.dir, b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "      1 \"name\": \"acme_coherent_fabric_performance_monitoring_unit@cpu0\"\n"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "      1 \"name\": \"acme_coherent_fabric_performance_monitoring_unit_~"),
		  "%s", r.out);
	cr_assert_eq(count_lines(r.out), 4, "%s", r.out); /* three names once each, 3 domains */
	cr_assert(strstr(r.out, "\n3\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "      2 "), "%s", r.out);
	cleanup(&r);
}

/* A PMU whose name holds a comma (tests/fixtures/sysfs/comma_name) is
 * logged under specs that -e takes back: recorded again from the first
 * log's specs, the second log counts the same PMU with the same encoding. */
#define SPECS_PY                                                                            \
	"import json, sys\n"                                                                \
	"d = json.load(sys.stdin)['domains'][0]['events']\n"                                \
	"print(','.join(e['spec'] for e in d) if sys.argv[1] == 'specs' else "              \
	"[(e['pmu'], e['name'], e['config']) for e in d])\n"

Test(record, a_comma_pmu_spec_records_again, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	t4t_need_perf();
	t4t_need_cmd("python3");
	tmpdir(&r);
	sh(&r, "S=tests/fixtures/sysfs/comma_name; printf '%%s' \"" SPECS_PY "\" > '%s/specs.py' && "
	       "'%s' record -q --sysfs-root $S -e 'acme*/clock/,acme*/\"sw,ctx\"/' -d 50ms "
	       "-o '%s/1.t4t' && '%s' info --json '%s/1.t4t' | python3 '%s/specs.py' specs > "
	       "'%s/specs' && cat '%s/specs' && '%s' record -q --sysfs-root $S -e \"$(cat '%s/specs')\" "
	       "-d 50ms -o '%s/2.t4t' && for l in 1 2; do '%s' info --json \"%s/$l.t4t\" | "
	       "python3 '%s/specs.py' events; done",
	       r.dir, b, r.dir, b, r.dir, r.dir, r.dir, r.dir, b, r.dir, r.dir, b, r.dir, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "\"acme,fabric\"/clock/,\"acme,fabric\"/\"sw,ctx\"/\n"
				"[('acme,fabric', 'clock', '0x0'), ('acme,fabric', 'sw,ctx', '0x3')]\n"
				"[('acme,fabric', 'clock', '0x0'), ('acme,fabric', 'sw,ctx', '0x3')]\n"),
		  "%s", r.out);
	cleanup(&r);
}

/* A read that fails is counted, and the summary says which domain failed
 * first, at which trigger and why, in one line (tests/test_sched.c checks
 * the status fields only). Every read fails here: the shim
 * (tests/apps/perf_open_log.c) fails the counter's read() with EIO, on
 * the user path (the BPF one reads in the kernel). The domain's PMU is
 * named with an escape and a tab (a --sysfs-root tree of the software
 * PMU's type, so that this machine counts it): the line shows them
 * escaped, never raw to the terminal. */
Test(record, the_first_read_failure_is_said_in_one_line, .timeout = 60)
{
	struct run r;
	char want[256];

	t4t_need_perf();
	t4t_exec_tmpdir(r.dir, sizeof(r.dir), "t4shim");
	cli_build_shim(&r);
	sh_in_dir(&r, "P=$(printf 'ev\\033[31mil\\tx') && mkdir -p \"fx/$P/events\" \"fx/$P/format\" && "
		      "echo 1 > \"fx/$P/type\" && echo 0 > \"fx/$P/cpumask\" && "
		      "echo config:0-63 > \"fx/$P/format/event\" && echo event=0x0 > \"fx/$P/events/clk\" && "
		      "T4_PERF_READ_ERRNO=5 LD_PRELOAD=./shim.so "
		      "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 "
		      "\"$B\" record --trigger user --sysfs-root fx -e \"$P/clk/\" -d 50ms -o x.t4t "
		      "2>&1 >/dev/null; echo rc=$?");
	cr_assert(strstr(r.out, "\nrc=0\n"), "%s", r.out);
	cr_assert(strstr(r.out, " read failures, 0 unanswered\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, " 0 read failures"), "%s", r.out);
	snprintf(want, sizeof(want), "\nt410trace: first read failure: ev\\x1b[31mil\\x09x at "
		 "trigger 0: %s (its counts are in the domain's next sample)\n", strerror(EIO));
	cr_assert(strstr(r.out, want), "%s", r.out);
	cr_assert_null(strchr(r.out, '\033'), "%s", r.out);
	cleanup(&r);
}

/* record's COMMAND gets the descriptors record was given, as if record
 * were not there (3>file, a make jobserver's pipe): the keeper closed
 * every one above 2, and the command's `echo >&3` failed with "Bad file
 * descriptor". Its descriptors are exactly those it has without record:
 * none of record's own (the log, the keeper's pipes) either. */
Test(record, the_command_gets_the_descriptors_record_was_given, .timeout = 60)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, "L='echo three >&3; echo seven >&7; ls /proc/self/fd | tr \"\\n\" \" \"'; "
		      "sh -c \"$L\" 3>a3 7>a7; echo; \"$B\" record -q --sim --backend pwrite -d 10s "
		      "-o x.t4t -- sh -c \"$L\" 3>b3 7>b7; rc=$?; echo; echo rc=$rc; cat a3 a7 b3 b7");
	const char *l2 = strchr(r.out, '\n');
	cr_assert_not_null(l2, "%s", r.out);
	l2++;
	cr_assert(!strncmp(r.out, l2, (size_t)(l2 - r.out)), "not the same descriptors: %s", r.out);
	cr_assert(strstr(l2, "\nrc=0\nthree\nseven\nthree\nseven\n"), "%s", r.out);
	cleanup(&r);
}

/* perl, as a parent that ignores SIGHUP (nohup) and SIGCHLD, then execs
 * the rest of the line. */
#define IGNORING "perl -e '$SIG{HUP} = $SIG{CHLD} = \"IGNORE\"; exec @ARGV or exit 127' "
#define SIGIGN "grep SigIgn /proc/self/status"

/* record's COMMAND gets the signal dispositions record found, as if record
 * were not there: t410trace ignores SIGPIPE and SIGXFSZ, which the
 * command inherited ignored; a parent's ignored SIGCHLD made record wait
 * for ever for its command's status (the kernel reaped it), deaf to
 * SIGTERM; under nohup, record caught the SIGHUP of a closed terminal and
 * passed it on to the command, which died of it (exit 129). */
Test(record, the_command_gets_the_signals_record_found, .timeout = 120)
{
	struct run r;

	tmpdir(&r);
	sh_in_dir(&r, SIGIGN "; \"$B\" record -q --sim --backend pwrite -o a.t4t -- " SIGIGN ";"
		  IGNORING SIGIGN "; timeout -k 5 30 " IGNORING "\"$B\" record -q --sim --backend "
		  "pwrite -o b.t4t -- " SIGIGN "; echo rc=$?");
	const char *l1 = r.out, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1,
		   *l4 = strchr(l3, '\n') + 1;
	cr_assert(!strncmp(l1, "SigIgn:", 7) && !strncmp(l1, l2, (size_t)(l3 - l2)), "%s", r.out);
	cr_assert(!strncmp(l3, "SigIgn:", 7) && !strncmp(l3, l4, (size_t)(l4 - l3)), "%s", r.out);
	cr_assert(strstr(l4, "\nrc=0\n"), "%s", r.out);
	cr_assert_neq(strncmp(l1, l3, (size_t)(l2 - l1)), 0, "perl ignored nothing: %s", r.out);
	/* nohup: a SIGHUP once the command runs; it carries on */
	sh_in_dir(&r, "nohup \"$B\" record -q --sim --backend pwrite -o c.t4t -- sh -c "
		  "': > started; i=0; while [ ! -e go ] && [ $i -lt 3000 ]; do sleep 0.01; "
		  "i=$((i+1)); done; echo carried on > out' > /dev/null 2>&1 & rec=$!; i=0; "
		  "while [ ! -e started ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; "
		  "kill -HUP $rec; : > go; wait $rec; echo rc=$?; cat out");
	cr_assert(strstr(r.out, "rc=0\ncarried on\n"), "%s", r.out);
	cleanup(&r);
}
