/* test_stat.c - `record`'s perf stat answer (issue 15.5): the per-event
 * totals table at the end, what `record -- COMMAND` counts (the command's
 * tasks for CPU-side events, inherited by its children; uncore PMUs
 * system-wide), the trigger path per-task counters need, and the
 * unprivileged fallback to user-only counting. The counts themselves are
 * checked against rusage in test_host_metrics.c.
 */
#include "cli_testutil.h"
#include "probe.h"

#include <sys/stat.h>

/* Sum of the "total" of every event named name in `info --json` text. */
static long long info_total(const char *json, const char *name)
{
	char pat[128];
	long long sum = 0;
	const char *p = json;

	snprintf(pat, sizeof(pat), "\"name\": \"%s\"", name);
	while ((p = strstr(p, pat))) {
		p += strlen(pat);
		sum += json_num(p, "total");
	}
	return sum;
}

/* The TOTAL of the table row of event `name` ("1,234 ns  name ..."). */
static long long table_total(const char *out, const char *unit, const char *name)
{
	char pat[128], digits[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), " %-10s %s ", unit, name);
	p = strstr(out, pat);
	cr_assert_not_null(p, "no row '%s' in:\n%s", pat, out);
	while (p > out && p[-1] != ' ')
		p--;
	for (; *p && *p != ' ' && n + 1 < sizeof(digits); p++)
		if (*p != ',')
			digits[n++] = *p;
	digits[n] = '\0';
	return atoll(digits);
}


#define TASK_SCOPE " counting the command's tasks, and every task they started, from its exec:\n"
#define HEADER "t410trace: every event's total, summed over the CPUs and threads that counted " \
	       "it (perf stat's view; `decode` gives the metrics):\n"

/* The table: the command's tasks (a child and a grandchild busy), their
 * totals the log's (info's), a task's time also in CPUs utilized; none
 * with -q; the same through a pipe. */
Test(stat, record_prints_the_command_totals, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	t4t_need_task_perf_kernel(); /* its rows: task-clock, not :u */
	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record --period 10ms -e task-clock,context-switches -o t.t4t -- "
	       "sh -c 'sh -c \"i=0; while [ \\$i -lt 20000 ]; do i=\\$((i+1)); done\"' 2>err.txt; "
	       "echo rc=$?; cat err.txt; '%s' info --json t.t4t", r.dir, b, b);
	cr_assert(strstr(r.out, "rc=0\n"), "%s", r.out);
	const char *table = strstr(r.out, HEADER);
	cr_assert_not_null(table, "no table:\n%s", r.out);
	cr_assert(strstr(table, TASK_SCOPE), "%s", table);
	cr_assert_null(strstr(table, " counting system-wide:"), "%s", table);
	long long tc = table_total(table, "ns", "task-clock");
	cr_assert_gt(tc, 1000000, "the grandchild's loop: %lld ns", tc);
	cr_assert_eq(tc, info_total(r.out, "task-clock"), "one truth: the table is the log's");
	cr_assert_eq(table_total(table, "switches", "context-switches"),
		     info_total(r.out, "context-switches"));
	cr_assert(strstr(table, " CPUs utilized\n"), "%s", table);
	cr_assert(strstr(r.out, "\"counts\": \"the command's tasks, and every task they started, "
				"from its exec: software\""), "%s", r.out);
	cr_assert(strstr(r.out, "\"name\": \"task-clock\", \"spec\": \"task-clock\", \"unit\": "
				"\"ns\", \"counts\": \"task_and_children\""), "%s", r.out);
	/* -q: nothing; -o - to a pipe: the same table */
	sh(&r, "cd '%s' && '%s' record -q --period 10ms -e task-clock -o q.t4t -- true", r.dir, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_str_eq(r.out, "");
	sh(&r, "cd '%s' && '%s' record --period 10ms -e task-clock -o - -- sh -c 'echo hi' 2>err.txt "
	       "| cat > p.t4t; cat err.txt; '%s' info --json p.t4t", r.dir, b, b);
	table = strstr(r.out, HEADER);
	cr_assert_not_null(table, "no table with -o -:\n%s", r.out);
	cr_assert(strstr(r.out, "hi\n"), "the command's output goes to stderr: %s", r.out);
	cr_assert_eq(table_total(table, "ns", "task-clock"), info_total(r.out, "task-clock"));
	cleanup(&r);
}

/* Uncore PMUs count the system even for a command, and say so; -a counts
 * the CPU-side events per CPU. */
Test(stat, uncore_and_all_cpus_count_the_system, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record --sim --period 10ms -e nvidia_ucf_pmu_0/cycles/ -o s.t4t -- "
	       "sleep 0.05 && '%s' info s.t4t", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	const char *table = strstr(r.out, HEADER);
	cr_assert_not_null(table, "%s", r.out);
	cr_assert(strstr(table, " counting system-wide:\n"), "%s", table);
	cr_assert(strstr(table, " cycles     cycles  nvidia_ucf_pmu_0 "), "%s", table);
	cr_assert(strstr(r.out, "  counts           system-wide: ucf\n"), "%s", r.out);
	cleanup(&r);
	t4t_need_perf();
	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record -a --period 10ms -e cpu-clock -o a.t4t -- sleep 0.05 && "
	       "'%s' info a.t4t", r.dir, b, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, " counting system-wide:\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "CPUs utilized"), "a CPU's clock runs busy or idle: %s", r.out);
	cr_assert(strstr(r.out, "  counts           system-wide: software\n"), "%s", r.out);
	cleanup(&r);
}

/* The table shows names as every output does (util/text.c): an event's
 * name= with an escape sequence and a byte that is not UTF-8 (or a PMU
 * so named in a crafted sysfs) is escaped, the columns still aligned. It
 * was written raw to the terminal. */
Test(stat, names_escaped_for_the_terminal, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record --sim --period 10ms -d 50ms -o e.t4t "
	       "-e \"nvidia_ucf_pmu_0/cycles,name=$(printf 'a\\033[2Jb\\377')/\"", r.dir, b);
	cr_assert_eq(r.status, 0, "%s", r.out);
	const char *table = strstr(r.out, HEADER);
	cr_assert_not_null(table, "%s", r.out);
	cr_assert(strstr(table, "  TOTAL UNIT       EVENT          PMU                PER SECOND\n"),
		  "%s", table);
	cr_assert(strstr(table, " cycles     a\\x1b[2Jb\\xff  nvidia_ucf_pmu_0 "), "%s", table);
	cr_assert_null(strchr(r.out, '\033'), "%s", r.out);
	cleanup(&r);
}

/* The rate of a table row: its number, in the last column. */
static const char *rate_of_row(const char *l, const char *end, size_t *len)
{
	const char *stop = end - 2; /* "/s" */

	if (end - l < 8 || memcmp(stop, "/s", 2))
		return NULL;
	if (stop[-1] != ' ') /* a prefix: K, M, G... */
		stop -= 2;
	else
		stop -= 1;
	const char *start = stop;
	while (start > l && start[-1] != ' ')
		start--;
	*len = (size_t)(stop - start);
	return start;
}

/* Every rate of the closing table in four significant digits, its
 * trailing zeros kept: "745.0 M/s" stood as "745 M/s" beside "649.6 M/s"
 * (190 events: some rate ends in a 0). */
Test(stat, rates_keep_four_digits, .timeout = 60)
{
	struct run r;
	size_t rates = 0;

	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record --sim --period 10ms -d 50ms -o e.t4t", r.dir, bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	const char *table = strstr(r.out, HEADER);
	cr_assert_not_null(table, "%s", r.out);
	for (const char *l = table, *end; (end = strchr(l, '\n')) != NULL; l = end + 1) {
		size_t len;
		const char *rate = rate_of_row(l, end, &len);
		if (!rate)
			continue;
		cr_assert(len == 5 && strspn(rate, "0123456789.") == 5 && memchr(rate, '.', 5),
			  "%.*s", (int)(end - l), l);
		rates++;
	}
	cr_assert_eq(rates, 190, "%s", table);
	cleanup(&r);
}

/* -p on a process of more threads than a log holds clock domains (4096,
 * a domain per thread and PMU) is refused at the start with one line and
 * exit 2, writing nothing: before, it recorded, and decode left every
 * thread past the 4096th out with a warning. */
Test(stat, more_threads_than_a_log_holds_are_refused, .timeout = 120)
{
	struct run r;

	t4t_need_task_perf();
	tmpdir(&r);
	sh(&r, "cd '%s' || exit 1; python3 -c '\n"
	       "import threading, time\n"
	       "threading.stack_size(65536)\n"
	       "ev = threading.Event()\n"
	       "try:\n"
	       "    for i in range(4100): threading.Thread(target=ev.wait, daemon=True).start()\n"
	       "    print(\"ready\", flush=True)\n"
	       "except RuntimeError as e: print(e, flush=True)\n"
	       "time.sleep(100)' > ready & p=$!\n"
	       "i=0; while [ ! -s ready ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
	       "if ! grep -q ready ready; then echo \"SKIP $(cat ready)\"; kill $p; exit 0; fi\n"
	       "'%s' record -p $p -e task-clock -d 1s -o p.t4t; echo rc=$?; kill $p\n"
	       "test -e p.t4t && echo written", r.dir, bin());
	if (strstr(r.out, "SKIP "))
		cr_skip_test("cannot start 4100 threads here: %s", strstr(r.out, "SKIP ") + 5);
	cr_assert(strstr(r.out, "t410trace: task-clock: more than 4096 clock domains (what decode"
			  " reads); count fewer PMUs, CPUs or threads\nrc=2\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "written"), "%s", r.out);
	cleanup(&r);
}

/* -p counts the threads it names (per task, no children; the task ends
 * once the recorder has fired: CLI_END_TASK_WHEN_RECORDING); a level (a
 * DRM client's memory, from a fixture /proc) is shown as its last level,
 * not a rate, as info shows it. */
Test(stat, threads_and_levels, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	t4t_need_task_perf();
	tmpdir(&r);
	sh(&r, "B='%s'; cd '%s' || exit 1; sleep 30 & s=$!; "
	       "\"$B\" record --period 10ms -e task-clock -c c.sock -o p.t4t -p $s & rec=$!; "
	       CLI_END_TASK_WHEN_RECORDING "\"$B\" info p.t4t | grep counts", b, r.dir);
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert(strstr(r.out, "rc=0\n"), "%s", r.out);
	cr_assert(strstr(r.out, " counting the threads of -p/-t:\n"), "%s", r.out);
	cr_assert(strstr(r.out, "  counts           the threads of -p/-t: software\n"), "%s", r.out);
	char fixture[PATH_MAX];
	cr_assert_not_null(cli_repo_file("tests/fixtures/proc", fixture));
	sh(&r, "cd '%s' && '%s' record --sim --period 10ms -d 200ms --proc-root '%s' -o d.t4t", r.dir,
	   b, fixture);
	cr_assert_eq(r.status, 0, "%s", r.out);
	/* drm-memory-vram: 1003520 KiB all along */
	const char *vram = strstr(r.out, " 1,027,604,480 bytes      c9.memory.vram ");
	cr_assert_not_null(vram, "%s", r.out);
	const char *eol = strchr(vram, '\n');
	cr_assert(eol && !strncmp(eol - 10, "last level", 10), "%.*s", (int)(eol - vram), vram);
	cleanup(&r);
}

/* Per-task counters follow their task across CPUs: a CPU's BPF timer
 * cannot read them. auto says so and takes the user path; bpf refuses. */
Test(stat, task_counters_take_the_user_path, .timeout = 60)
{
	struct run r;
	const char *b = bin();

	t4t_need_task_perf_kernel(); /* its first line: this notice */
	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record --period 10ms -e task-clock -o t.t4t -- true 2>&1 | head -1; "
	       "'%s' info --json t.t4t", r.dir, b, b);
	cr_assert(strstr(r.out, "t410trace: notice: triggers fire in user space: per-task counters "
				"(the command's, -p's, -t's) follow their tasks from CPU to CPU, and a "
				"CPU's BPF timer reads only its own CPU's counters\n"), "%s", r.out);
	cr_assert(strstr(r.out, "\"trigger_path\": \"user\""), "%s", r.out);
	sh(&r, "cd '%s' && '%s' record --trigger bpf --period 10ms -e task-clock -o b.t4t -- true; "
	       "echo rc=$?; ls", r.dir, b);
	cr_assert(strstr(r.out, "t410trace: --trigger bpf: per-task counters (the command's, -p's, "
				"-t's) follow their tasks from CPU to CPU, and a CPU's BPF timer reads "
				"only its own CPU's counters (-a counts every CPU instead)\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "rc=0"), "%s", r.out);
	cr_assert_null(strstr(r.out, "b.t4t"), "nothing published: %s", r.out);
	cleanup(&r);
}

/* A recording that fails after the command was forked (bad event) ends at
 * once, the command never run. */
Test(stat, failed_setup_never_runs_the_command, .timeout = 30)
{
	struct run r;

	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record -e bogus -o x.t4t -- touch ran; echo rc=$?; ls", r.dir, bin());
	cr_assert(strstr(r.out, "t410trace: bogus: unknown event"), "%s", r.out);
	cr_assert(strstr(r.out, "rc=2\n"), "%s", r.out);
	cr_assert_null(strstr(r.out, "ran"), "the command ran: %s", r.out);
	cleanup(&r);
}

/* perf_event_paranoid 2 without CAP_PERFMON: the kernel refuses a task's
 * kernel-side counts; the counters fall back to user space, as perf does,
 * with one notice, instead of failing. Run as nobody (a copy of the
 * binary where nobody can run it: the checkout may lie under /root), the
 * sysctl at 2 (set for the test when it is not, and put back). */
Test(stat, unprivileged_counts_user_space, .timeout = 60)
{
	const char *path = "/proc/sys/kernel/perf_event_paranoid";
	char was[16] = "", copy[PATH_MAX + 32], out[PATH_MAX + 16];
	struct run r;
	int rc;

	t4t_need_task_perf();
	if (geteuid() != 0)
		cr_skip_test("needs root to run the recorder as another user (euid %d)", (int)geteuid());
	t4t_nobody_tmpdir(r.dir, sizeof(r.dir), "t4stat", true);
	cr_assert_eq(chown(r.dir, T4T_NOBODY, T4T_NOBODY), 0, "%s", strerror(errno));
	t4t_copy_program(bin(), r.dir, copy, sizeof(copy));
	cr_assert_geq(t4_read_small_file(path, was, sizeof(was)), 0);
	if (atoi(was) != 2 && t4_write_small_file(path, "2") < 0)
		cr_skip_test("cannot set %s to 2: %s", path, t4_errmsg());
	char *argv[] = { copy, "record", "--period", "10ms", "-o", "n.t4t", "--", "sh", "-c",
			 "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done", NULL };
	rc = t4t_run_as_nobody(r.dir, argv);
	if (atoi(was) != 2)
		cr_assert_geq(t4_write_small_file(path, was), 0, "cannot put %s back to %s", path, was);
	snprintf(out, sizeof(out), "%s/out.txt", r.dir);
	cr_assert_geq(t4_read_small_file(out, r.out, sizeof(r.out)), 0, "%s", t4_errmsg());
	cr_assert_eq(rc, 0, "%s", r.out);
	cr_assert(strstr(r.out, "t410trace: notice: 5 per-task counters count user space only (':u', "
				"as perf does): the kernel refuses its share without CAP_PERFMON when "
				"perf_event_paranoid is 2 or more\n"), "%s", r.out);
	cr_assert(table_total(strstr(r.out, HEADER), "ns", "task-clock:u") > 1000000, "%s", r.out);
	cleanup(&r);
}
