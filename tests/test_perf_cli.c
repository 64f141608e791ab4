/* test_perf_cli.c - the command line speaks perf (suite "perf_cli"):
 * option errors name the wrong argument, perf's record flags (-a, -C,
 * -I, -p/--pid, -t), event modifiers and the CPU-PMU message, durations
 * in minutes and hours, suggestions for misspelled subcommands.
 */
#include "cli_testutil.h"
#include "probe.h"

/* `t410trace ARGS` in a fresh directory: exit code and the first line. */
static void expect_line(const char *args, int code, const char *line)
{
	struct run r;

	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' %s", r.dir, bin(), args);
	cr_expect_eq(r.status, code, "'%s' exit %d: %s", args, r.status, r.out);
	cr_expect_eq(strncmp(r.out, line, strlen(line)), 0, "'%s':\n got: %s\nwant: %s", args,
		     r.out, line);
	cleanup(&r);
}

#define SEE_HELP " (see 't410trace record --help')\n"

Test(perf_cli, option_errors_name_the_argument)
{
	expect_line("record -o a.t4t -d 100ms -q -x,", 2,
		    "t410trace record: unknown option '-x' (in '-x,')" SEE_HELP);
	expect_line("record -qx", 2, "t410trace record: unknown option '-x' (in '-qx')" SEE_HELP);
	expect_line("record -Z", 2, "t410trace record: unknown option '-Z'" SEE_HELP);
	expect_line("record --duraton 1s", 2,
		    "t410trace record: unknown option '--duraton' (did you mean --duration?)" SEE_HELP);
	expect_line("record -q -o", 2, "t410trace record: option '-o' needs a value" SEE_HELP);
	expect_line("record --period", 2, "t410trace record: option '--period' needs a value" SEE_HELP);
	expect_line("record --quiet=yes", 2,
		    "t410trace record: option '--quiet' takes no value ('--quiet=yes')" SEE_HELP);
	expect_line("record --p 1", 2, "t410trace record: option '--p' is ambiguous (spell it out)" SEE_HELP);
	expect_line("list --jsn", 2, "t410trace list: unknown option '--jsn' (did you mean --json?) "
				     "(see 't410trace list --help')\n");
	expect_line("recrod -d 1s", 2, "t410trace: 'recrod' is not a command (did you mean record?) "
				       "(see 't410trace --help')\n");
	/* the commands that parse their options by hand suggest too (they
	 * said only "unknown option"), and t410trace's own options are
	 * options, not commands ("'--verison' is not a command") */
	expect_line("info --jsn x.t4t", 2, "t410trace info: unknown option '--jsn' (did you mean "
					   "--json?) (see 't410trace info --help')\n");
	expect_line("ctl --contrl x.sock status", 2, "t410trace ctl: unknown option '--contrl' (did "
						     "you mean --control?) (see 't410trace ctl --help')\n");
	expect_line("--verison", 2, "t410trace: unknown option '--verison' (did you mean --version?) "
				    "(see 't410trace --help')\n");
	expect_line("-x", 2, "t410trace: unknown option '-x' (see 't410trace --help')\n");
	/* -a and -C count CPUs: with -p/-t they were ignored without a word
	 * (the threads counted on every CPU, an offline CPU of -C taken) */
	expect_line("record -C 0 -p 1 -d 10ms", 2, "t410trace record: -C counts CPUs, -p/-t count "
						   "tasks: use one or the other" SEE_HELP);
	expect_line("record -a -t 1 -d 10ms", 2, "t410trace record: -a counts CPUs, -p/-t count "
						 "tasks: use one or the other" SEE_HELP);
}

/* An empty directory option is a usage error naming the option (it was
 * ": No such file or directory", a line naming nothing). */
Test(perf_cli, an_empty_directory_option_is_named)
{
	expect_line("record --sim -q -d 10ms --sysfs-root ''", 2,
		    "t410trace record: --sysfs-root: an empty directory name" SEE_HELP);
	expect_line("record -q -d 10ms --proc-root ''", 2,
		    "t410trace record: --proc-root: an empty directory name" SEE_HELP);
	expect_line("list --sysfs-root ''", 2, "t410trace list: --sysfs-root: an empty directory "
		    "name (see 't410trace list --help')\n");
	expect_line("list --pci --pci-root ''", 2, "t410trace list: --pci-root: an empty directory "
		    "name (see 't410trace list --help')\n");
}

/* -I MSECS is --period MSECS ms; -a is accepted; --period has no short
 * form any more (-p is perf's --pid). */
Test(perf_cli, interval_and_all_cpus, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record -q -a -I 5 -d 100ms -o i.t4t && '%s' info --json i.t4t", r.dir,
	   bin(), bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_eq(json_num(r.out, "period_ns"), 5000000, "%s", r.out);
	cr_assert_eq(json_num(r.out, "triggers") + json_num(r.out, "overruns"), 21, "%s", r.out);
	cleanup(&r);
	expect_line("record -I 0", 2, "t410trace record: -I 0: an interval in milliseconds (1-3600000; "
				      "--period takes other units)" SEE_HELP);
	expect_line("record -p 1ms", 2, "t410trace: -p 1ms: use a process or thread ID (or a "
					"comma-separated list)\n");
	/* digits only: an empty list, a trailing comma, a blank were taken
	 * (-p '' recorded the whole system) */
	expect_line("record -p '' -d 10ms", 2, "t410trace: -p : use a process or thread ID (or a "
					      "comma-separated list)\n");
	expect_line("record -p 1, -d 10ms", 2, "t410trace: -p 1,: use a process or thread ID (or a "
					      "comma-separated list)\n");
	expect_line("record -t '1, 2' -d 10ms", 2, "t410trace: -t 1, 2: use a process or thread ID "
						  "(or a comma-separated list)\n");
}

/* -C LIST: the per-CPU domains of those CPUs only. */
Test(perf_cli, cpu_list, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record -q -C 0 -d 50ms -o c.t4t && '%s' info c.t4t | grep -c '@cpu'; "
	       "'%s' info c.t4t | grep -c '@cpu0 '", r.dir, bin(), bin(), bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	int all = atoi(r.out), on0 = atoi(strchr(r.out, '\n') + 1);
	cr_assert_gt(all, 0, "%s", r.out);
	cr_assert_eq(all, on0, "domains on other CPUs than -C 0: %s", r.out);
	/* a CPU listed twice is one CPU */
	sh(&r, "cd '%s' && '%s' record -q -C 0,0 -d 50ms -o d.t4t && '%s' info d.t4t | grep -c '@cpu0 '",
	   r.dir, bin(), bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_eq(atoi(r.out), on0, "%s", r.out);
	cleanup(&r);
	expect_line("record -C 4000 -d 10ms", 2,
		    "t410trace record: -C 4000: CPU 4000 is not online (online: ");
	expect_line("record -C 0,0-1,4000 -d 10ms", 2,
		    "t410trace record: -C 0,0-1,4000: CPU 4000 is not online (online: ");
}

/* A CPU that is not online is refused before anything is recorded, with
 * the CPU named, whatever reads the list: --sim and --virtual (only
 * uncore PMUs, on this machine's CPUs) recorded and exited 0, silently. */
Test(perf_cli, offline_cpu_refused_up_front)
{
	expect_line("record -q --sim --virtual -d 10ms -C 9999", 2,
		    "t410trace record: -C 9999: CPU 9999 is not online (online: ");
	expect_line("record -q --sim -d 10ms -C 0,9999", 2,
		    "t410trace record: -C 0,9999: CPU 9999 is not online (online: ");
	/* the lowest one missing, wherever the list names it */
	expect_line("record -q --sim -d 10ms -C 9999,65535,9000-9001", 2,
		    "t410trace record: -C 9999,65535,9000-9001: CPU 9000 is not online (online: ");
	expect_line("record -q -e cpu-clock -d 10ms -C 9999", 2,
		    "t410trace record: -C 9999: CPU 9999 is not online (online: ");
}

/* A malformed -C is refused whatever the events: with only uncore PMUs
 * (--sim), where no counter reads the list, it used to record and exit 0. */
Test(perf_cli, malformed_cpu_list_refused_up_front)
{
	expect_line("record --sim -C abc -d 10ms", 2,
		    "t410trace record: -C abc: 'abc': malformed CPU list" SEE_HELP);
	expect_line("record --sim -C 1-0 -d 10ms", 2,
		    "t410trace record: -C 1-0: '1-0': malformed CPU list" SEE_HELP);
	expect_line("record -C '' -d 10ms", 2, "t410trace record: -C : '': empty CPU list" SEE_HELP);
	/* digits only: a trailing comma, an empty item, a sign were taken */
	expect_line("record -C 0, -d 10ms", 2,
		    "t410trace record: -C 0,: '0,': malformed CPU list" SEE_HELP);
	expect_line("record -C 0,,1 -d 10ms", 2,
		    "t410trace record: -C 0,,1: '0,,1': malformed CPU list" SEE_HELP);
	expect_line("record -C +0 -d 10ms", 2,
		    "t410trace record: -C +0: '+0': malformed CPU list" SEE_HELP);
	/* a number past what strtol holds is said as written */
	expect_line("record -C 99999999999999999999 -d 10ms", 2,
		    "t410trace record: -C 99999999999999999999: '99999999999999999999': CPU "
		    "99999999999999999999 above 65535" SEE_HELP);
}

/* An error about a long -e list keeps its reason: the middle of what it
 * quotes gives way, never the end of the line. */
Test(perf_cli, a_long_event_list_error_keeps_its_reason)
{
	struct run r;
	char list[4096] = "";

	for (int i = 0; i < 200; i++)
		strcat(list, "cpu-clock,");
	strcat(list, ",");
	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record -q -e '%s' -d 10ms", r.dir, bin(), list);
	cr_assert_eq(r.status, 2, "%s", r.out);
	cr_assert_eq(count_lines(r.out), 1, "%s", r.out);
	cr_assert(strstr(r.out, "': empty event (a stray ',' or an empty group?)\n"), "%s", r.out);
	cr_assert(!strncmp(r.out, "t410trace: 'cpu-clock,cpu-clock,", 32), "%s", r.out);
	cleanup(&r);
}

/* -p PID / -t TID: per-task counters of those threads, and the recording
 * ends when they have exited (CLI_END_TASK_WHEN_RECORDING). */
Test(perf_cli, pid_and_tid, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	sh(&r, "B='%s'; cd '%s' || exit 1; sleep 30 & s=$!; "
	       "\"$B\" record -q -p $s -c c.sock -o p.t4t & rec=$!; " CLI_END_TASK_WHEN_RECORDING
	       "\"$B\" info p.t4t | grep -c \"@tid$s \"; \"$B\" info p.t4t | grep -c '@cpu'",
	   bin(), r.dir);
	cr_assert(strstr(r.out, "rc=0\n1\n0\n"), "one per-task domain, none per CPU: %s", r.out);
	sh(&r, "B='%s'; cd '%s' || exit 1; sleep 30 & s=$!; "
	       "\"$B\" record -p $s -t $s -e cpu-clock -c c.sock -o t.t4t & rec=$!; "
	       CLI_END_TASK_WHEN_RECORDING, bin(), r.dir);
	cr_assert(strstr(r.out, "t410trace: the tasks of -p/-t have exited\n"), "%s", r.out);
	cr_assert(strstr(r.out, "rc=0"), "%s", r.out);
	cleanup(&r);
	expect_line("record -p 999999999 -d 10ms", 2, "t410trace: -p 999999999: no such process\n");
	expect_line("record -p 2000000000 -d 10ms", 2, "t410trace: -p 2000000000: use a process "
						       "or thread ID");
	expect_line("record -t 1 --sim", 2, "t410trace record: -p/-t count this host's tasks; they "
					    "exclude --sim" SEE_HELP);
	expect_line("record -p 1 -- true", 2, "t410trace record: -p/-t count running tasks; they "
					      "exclude a COMMAND" SEE_HELP);
	expect_line("record -p 1 --sysfs-root \"$OLDPWD/tests/fixtures/sysfs/t410\" "
		    "-e nvidia_ucf_pmu_0/cycles/", 2,
		    "t410trace: nvidia_ucf_pmu_0/cycles/: nvidia_ucf_pmu_0 counts the whole system, "
		    "not one task: it cannot be used with -p/-t\n");
	/* msr counts the system too: a COMMAND's msr/tsc is system-wide, and -p's
	 * was a per-task counter (0 for a sleeping task) in a "threads" total */
	expect_line("record -p 1 --sysfs-root \"$OLDPWD/tests/fixtures/sysfs/t410\" "
		    "-e msr/tsc/ -d 10ms", 2,
		    "t410trace: msr/tsc/: msr counts the whole system, not one task: it cannot be "
		    "used with -p/-t\n");
}

Test(perf_cli, modifiers_and_cpu_pmu)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	expect_line("record -e cycles:ppp -d 10ms", 2,
		    "t410trace: cycles:ppp: ':p' asks for precise sampling; t410trace counts, it "
		    "does not sample (drop the modifier)\n");
	expect_line("record --sim -e nvidia_ucf_pmu_0/cycles/:u -d 10ms", 2,
		    "t410trace: nvidia_ucf_pmu_0/cycles/:u: nvidia_ucf_pmu_0 is an uncore PMU; it "
		    "counts every privilege level, so ':u' cannot apply\n");
	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record -q -e cpu-clock:u -d 50ms -o u.t4t && '%s' info --json u.t4t | "
	       "grep -o '\"spec\": \"cpu-clock:u\"' | wc -l", r.dir, bin(), bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_gt(atoi(r.out), 0, "%s", r.out);
	/* the modifier is part of the event's name in every output: two
	 * events, not two cpu-clocks (issue 15.3) */
	sh(&r, "cd '%s' && '%s' record -q -e cpu-clock:u,cpu-clock:k -d 50ms -o uk.t4t && "
	       "'%s' info --json uk.t4t | grep -o '\"name\": \"cpu-clock[:uk]*\"' | sort | uniq -c && "
	       "'%s' decode uk.t4t -f csv | cut -d, -f7 | grep cpu-clock | sort -u",
	       r.dir, bin(), bin(), bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	char want[256];
	snprintf(want, sizeof(want), "%7d \"name\": \"cpu-clock:k\"\n%7d \"name\": \"cpu-clock:u\"\n"
		 "cpu-clock:k\ncpu-clock:u\n", ncpu, ncpu);
	cr_expect_str_eq(r.out, want);
	sh(&r, "ls /sys/bus/event_source/devices | grep -qx -e cpu -e cpu_core -e 'armv[89]_.*' "
	       "&& echo has-cpu-pmu");
	bool has_cpu_pmu = strstr(r.out, "has-cpu-pmu") != NULL;
	cleanup(&r);
	if (!has_cpu_pmu)
		expect_line("record -e instructions -d 10ms", 2,
			    "t410trace: instructions: this machine has no CPU PMU (a VM?); software "
			    "events count here: cpu-clock, task-clock, context-switches, page-faults "
			    "(see 't410trace list')\n");
}

/* Durations in minutes and hours, as the help says. */
Test(perf_cli, durations_minutes_hours_and_help, .timeout = 60)
{
	struct run r;

	t4t_need_perf(); /* this machine's own counters */
	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record -q --period 0.001m -d 0.0001h -o m.t4t && '%s' info --json m.t4t",
	   r.dir, bin(), bin());
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_eq(json_num(r.out, "period_ns"), 60000000, "%s", r.out);
	cr_assert_eq(json_num(r.out, "triggers") + json_num(r.out, "overruns"), 7, "%s", r.out);
	sh(&r, "'%s' record --help", bin());
	cr_assert(strstr(r.out, "DUR is a number with a unit: ns, us, ms, s, m (or min), h."),
		  "%s", r.out);
	cr_assert(strstr(r.out, "-C, --cpu LIST") && strstr(r.out, "-p, --pid PID") &&
		  strstr(r.out, "-t, --tid TID") && strstr(r.out, "-I MSECS") &&
		  strstr(r.out, "-a, --all-cpus"), "%s", r.out);
	cleanup(&r);
	expect_line("record -d 2d", 2, "t410trace record: --duration '2d': unknown unit 'd' (use ns, "
				       "us, ms, s, m (or min), h)" SEE_HELP);
}
