/* record_opts.c - the options of `t410trace record` (perf's spelling
 * where perf has one: -e, -I, -a, -C, -p/--pid, -t/--tid, -o, -f, -q) and
 * its --help text; cmd_record.c does the recording.
 *
 * One option table; options with a value that needs checking (durations,
 * numbers, names) are handled apart from the plain ones so that each
 * function stays a screenful. Every error is a one-line usage error
 * naming the option and the value (exit 2).
 */
#include "cli.h"
#include "control/control.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static void record_usage(FILE *f)
{
	fprintf(f,
		"usage: t410trace record [OPTIONS] [-- COMMAND [ARGS...]]\n\n"
		"Fires triggers on an absolute time grid; on each, every clock domain's\n"
		"counters are read and their deltas logged with the reference clock.\n\n"
		"  -e, --event SPEC       counters (repeatable; perf syntax, see 't410trace list',\n"
		"                         modifiers :u :k :h); default: every Tegra410 PMU's\n"
		"                         default set, or this host's software counters and (not\n"
		"                         for tasks: COMMAND's, -p's, -t's) msr/tsc/\n"
		"      --period DUR       trigger period, e.g. 1ms, 100us (default 1ms)\n"
		"  -I MSECS               the same in milliseconds (perf's interval flag)\n"
		"  -b, --bookmark NAME    initial bookmark (phase name)\n"
		"  -d, --duration DUR     stop after DUR, on the trigger grid (default: when\n"
		"                         COMMAND exits, or Ctrl-C); a COMMAND still running\n"
		"                         then gets SIGTERM\n"
		"  -o, --output FILE      log file (default t410trace.t4t; '-' standard output);\n"
		"                         an existing FILE is kept as FILE.old; %%h host, %%j job\n"
		"                         ID, %%t task rank, %%p PID, %%%% a %%: 'job%%j/t.%%h.t4t'\n"
		"      --all-tasks        in a Slurm or Open MPI job, record in every task (by\n"
		"                         default only each node's first task, local rank 0,\n"
		"                         records; the others run COMMAND only)\n"
		"  -f, --force            replace an existing FILE (keep no FILE.old)\n"
		"  -c, --control PATH     control socket for 't410trace ctl' (mode 0600)\n"
		"  -a, --all-cpus         system-wide: with a COMMAND, count every task on every\n"
		"                         CPU instead of the command's tasks; the CPU and GPU\n"
		"                         activity follows every task, not only COMMAND's\n"
		"  -C, --cpu LIST         per-CPU events (software, tracepoints, msr, CPU PMU)\n"
		"                         only on these CPUs, e.g. 0-3,8 (with COMMAND: instead\n"
		"                         of its tasks); uncore PMUs unchanged\n"
		"  -p, --pid PID[,PID]    count these processes' threads only (per-task\n"
		"                         software, tracepoint and CPU-PMU events; uncore PMUs\n"
		"                         and msr count the system: refused); stops when they\n"
		"                         have exited\n"
		"  -t, --tid TID[,TID]    count these threads only\n"
		"      --sim[=SEED]       record a simulated Tegra410 (output labelled simulated)\n"
		"      --virtual          with --sim and --duration: record it in virtual time, as\n"
		"                         fast as the CPU goes, the same log for the same seed,\n"
		"                         a bookmark at each of its workload's phase changes\n"
		"      --sysfs-root DIR   discover PMUs under DIR instead of sysfs (with --sim:\n"
		"                         DIR's Tegra410 PMUs, read from the simulator)\n"
		"      --proc-root DIR    find processes and DRM clients under DIR, not /proc\n"
		"      --no-drm           leave out the GPU usage of DRM clients (fdinfo), on by\n"
		"                         default: the processes of COMMAND or -p/-t and their\n"
		"                         children, or else every process\n"
		"      --no-activity      leave out the CPU and GPU activity (BPF: the threads of\n"
		"                         COMMAND's tree or -p/-t's processes on the CPUs, their\n"
		"                         GPU jobs, and libt410trace's bookmarks through a uprobe\n"
		"                         instead of the socket), on by default where BPF loads\n"
		"      --paused           start with periodic triggers stopped\n"
		"      --per-socket       one central scheduler per socket\n"
		"      --trigger bpf|user|auto\n"
		"                         where triggers fire: 'bpf' (BPF timers in the kernel,\n"
		"                         no user-space wake-up per trigger), 'user' (a thread\n"
		"                         per CPU), or 'auto' (default: bpf when the kernel can\n"
		"                         read every counter: not a task's, which moves between\n"
		"                         CPUs; else user, saying why)\n"
		"      --progress         show the progress line even when not on a terminal\n"
		"      --top              show the live view of 't410trace top' on the terminal\n"
		"                         while recording (what else would reach it is held\n"
		"                         until the view closes); q leaves it, the recording\n"
		"                         goes on. Needs a terminal\n"
		"      --metrics-listen ADDR:PORT\n"
		"                         serve GET /metrics (Prometheus text format) there, e.g.\n"
		"                         127.0.0.1:9400, [::1]:9400, :9400 (every address)\n"
		"      --zstd-level N     zstd level, negative: fast (default -3; 1 for --log-format 1)\n"
		"      --log-format N     write log format N: 3 (default), 2 for readers older\n"
		"                         than format 3 (2-8%% larger files), or 1 for readers\n"
		"                         older than format 2 (2.3x larger files)\n"
		"      --backend NAME     log writes through 'uring' (default) or 'pwrite'\n"
		"      --fsync DUR|close  flush the log to disk every DUR (default 1s) or only\n"
		"                         at the end; chunks reach the file every 100 ms anyway\n"
		"  -q, --quiet            no progress line, no summary, no totals\n"
		"  -h, --help\n\n"
		"DUR is a number with a unit: " T4_DURATION_UNITS ".\n"
		"With COMMAND (and no -a, -C), software, tracepoint and CPU-PMU events count the\n"
		"command's tasks, and every task they start, from its exec, like perf stat\n"
		"COMMAND (per-task counters, read by user-space threads; user space only, with\n"
		"a notice, where perf_event_paranoid refuses the kernel's share); uncore PMUs\n"
		"and msr count the system. record ends with every event's total, summed over\n"
		"CPUs and threads (not with -q).\n"
		"With COMMAND, recording covers exactly its run, and record exits with its\n"
		"exit code (128 + N when signal N killed it; 127 when it could not run, and\n"
		"then no log is written). Ctrl-C goes to COMMAND; a second one says so, a\n"
		"third kills it (SIGKILL). If record itself dies, COMMAND gets SIGTERM.\n"
		"COMMAND finds the control socket in $%s (libt410trace). With -o -,\n"
		"COMMAND's standard output goes to standard error.\n",
		T4_CONTROL_ENV);
}

enum {
	OPT_SIM = 256, OPT_SYSFS, OPT_PAUSED, OPT_PER_SOCKET, OPT_PROGRESS,
	OPT_ZSTD, OPT_LOG_FORMAT, OPT_BACKEND, OPT_FSYNC, OPT_PERIOD, OPT_TRIGGER, OPT_PROC_ROOT,
	OPT_NO_DRM, OPT_NO_ACTIVITY, OPT_TOP, OPT_METRICS_LISTEN, OPT_ALL_TASKS,
};

static const struct option record_longopts[] = {
	{ "event", required_argument, NULL, 'e' },
	{ "period", required_argument, NULL, OPT_PERIOD },
	{ "bookmark", required_argument, NULL, 'b' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "control", required_argument, NULL, 'c' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "sim", optional_argument, NULL, OPT_SIM },
	{ "sysfs-root", required_argument, NULL, OPT_SYSFS },
	{ "paused", no_argument, NULL, OPT_PAUSED },
	{ "per-socket", no_argument, NULL, OPT_PER_SOCKET },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "zstd-level", required_argument, NULL, OPT_ZSTD },
	{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "fsync", required_argument, NULL, OPT_FSYNC },
	{ "virtual", no_argument, NULL, CLI_VIRTUAL },
	{ "sim-drift", required_argument, NULL, CLI_SIM_DRIFT },
	{ "sim-wander", required_argument, NULL, CLI_SIM_WANDER },
	{ "sim-preempt", required_argument, NULL, CLI_SIM_PREEMPT },
	{ "trigger", required_argument, NULL, OPT_TRIGGER },
	{ "proc-root", required_argument, NULL, OPT_PROC_ROOT },
	{ "no-drm", no_argument, NULL, OPT_NO_DRM },
	{ "no-activity", no_argument, NULL, OPT_NO_ACTIVITY },
	{ "no-phases", no_argument, NULL, OPT_NO_ACTIVITY }, /* its old name */
	{ "top", no_argument, NULL, OPT_TOP },
	{ "metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN },
	{ "all-tasks", no_argument, NULL, OPT_ALL_TASKS },
	{ 0 },
};

/* The words of --trigger and --backend, in the order of their enums. */
static const char *const trigger_words[] = { "auto", "user", "bpf", NULL };
static const char *const backend_words[] = { "uring", "pwrite", NULL };

/* One of the NULL-ended words into *out (its index): 0, or 2 after a
 * usage error naming the option and the words it takes. */
static int parse_word(const char *opt, const char *arg, const char *const *words, int *out)
{
	char list[128];
	size_t len = 0;

	for (int i = 0; words[i]; i++) {
		if (!strcmp(arg, words[i])) {
			*out = i;
			return 0;
		}
		len += snprintf(list + len, sizeof(list) - len, "%s'%s'",
				!i ? "" : words[i + 1] ? ", " : " or ", words[i]);
	}
	return cli_usage_error("record", "%s %s: use %s", opt, arg, list);
}

static int set_period(struct cli_record_opts *o, uint64_t ns, const char *opt, const char *arg)
{
	if (ns < 10000)
		return cli_usage_error("record", "%s %s: shorter than 10us is not supported", opt, arg);
	o->period_ns = ns;
	o->period_opt = opt;
	o->period_arg = arg;
	return 0;
}

/* --zstd-level: an integer, negative for zstd's fast levels; unset (0),
 * the log's default for its format (t4_log_zstd_default). */
static int set_zstd_level(struct cli_record_opts *o, const char *arg)
{
	bool neg = arg[0] == '-';
	uint64_t v;

	if (t4_parse_u64(arg + neg, &v) < 0 || v > INT_MAX ||
	    t4_log_zstd_check(neg ? -(int)v : (int)v) < 0)
		return cli_usage_error("record", "--zstd-level %s: %s", arg,
				       t4_parse_u64(arg + neg, &v) < 0 || v > INT_MAX ?
				       "an integer" : t4_errmsg());
	o->zstd_level = neg ? -(int)v : (int)v;
	return 0;
}

/* The options that take a duration or a number: 0 or 2. */
static int parse_valued(struct cli_record_opts *o, int c, const char *arg)
{
	uint64_t v;
	int w, rc;

	switch (c) {
	case OPT_PERIOD:
		if (t4_parse_duration(arg, &v) < 0)
			return cli_usage_error("record", "--period %s", t4_errmsg());
		return set_period(o, v, "--period", arg);
	case 'I':
		if (t4_parse_u64(arg, &v) < 0 || v == 0 || v > 3600000)
			return cli_usage_error("record", "-I %s: an interval in milliseconds "
					       "(1-3600000; --period takes other units)", arg);
		return set_period(o, v * 1000000, "-I", arg);
	case 'd':
		if (t4_parse_duration(arg, &o->duration_ns) < 0)
			return cli_usage_error("record", "--duration %s", t4_errmsg());
		o->duration_arg = arg;
		return 0;
	case OPT_ZSTD:
		return set_zstd_level(o, arg);
	case OPT_LOG_FORMAT:
		if (t4_parse_u64(arg, &v) < 0 || v < 1 || v > T4_FORMAT_VERSION)
			return cli_usage_error("record", "--log-format %s: use 1-%d", arg,
					       T4_FORMAT_VERSION);
		o->log_format = (unsigned)v;
		return 0;
	case OPT_FSYNC:
		if (!strcmp(arg, "close")) {
			o->fsync_ms = UINT32_MAX;
			return 0;
		}
		if (t4_parse_duration(arg, &v) < 0 || v < 1000000 || v > 3600000000000ull)
			return cli_usage_error("record", "--fsync %s: use 1ms-1h, or 'close'", arg);
		o->fsync_ms = (uint32_t)(v / 1000000);
		return 0;
	case OPT_TRIGGER:
		if ((rc = parse_word("--trigger", arg, trigger_words, &w)) == 0)
			o->trigger = (enum t4_trigger_path)w;
		return rc;
	default: /* OPT_BACKEND */
		if ((rc = parse_word("--backend", arg, backend_words, &w)) == 0)
			o->backend = (enum t4_log_backend)w;
		return rc;
	}
}

/* One option: 0, 1 for --help, or 2 after a usage error. */
static int parse_one(struct cli_record_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'e':
		if (o->n_events == CLI_MAX_EVENT_ARGS)
			return cli_usage_error("record", "too many -e options (max %d)", CLI_MAX_EVENT_ARGS);
		o->events[o->n_events++] = arg;
		return 0;
	case 'b': o->bookmark = arg; return 0;
	case 'o':
		if (!arg[0])
			return cli_usage_error("record", "-o: an empty file name ('-' is standard "
					       "output)");
		o->output = arg;
		return 0;
	case 'f': o->force = true; return 0;
	case 'c':
		if (!arg[0])
			return cli_usage_error("record", "-c: an empty socket path");
		o->control = arg;
		return 0;
	case 'a': o->all_cpus = true; return 0; /* counters: the default already */
	case 'C': /* the list's form now: only per-CPU events read it later */
		if (t4_cpulist_first(arg, NULL) < 0)
			return cli_usage_error("record", "-C %s: %s", arg, t4_errmsg());
		o->target.cpus = arg;
		return 0;
	case 'p': o->target.pids = arg; return 0;
	case 't': o->target.tids_arg = arg; return 0;
	case 'q': o->quiet = true; return 0;
	case 'h':
		record_usage(stdout);
		return 1;
	case OPT_SIM: return cli_source_set_sim("record", &o->src, arg) ? 2 : 0;
	case OPT_SYSFS: return cli_dir_arg("record", "--sysfs-root", arg, &o->src.sysfs_root);
	case OPT_PAUSED: o->paused = true; return 0;
	case OPT_PER_SOCKET: o->per_socket = true; return 0;
	case OPT_PROGRESS: o->progress = true; return 0;
	case OPT_PROC_ROOT: return cli_dir_arg("record", "--proc-root", arg, &o->drm.proc_root);
	case OPT_NO_DRM: o->drm.off = true; return 0;
	case OPT_NO_ACTIVITY: o->no_activity = true; return 0;
	case OPT_TOP: o->top = true; return 0;
	case OPT_METRICS_LISTEN: o->metrics_listen = arg; return 0;
	case OPT_ALL_TASKS: o->all_tasks = true; return 0;
	case CLI_VIRTUAL:
	case CLI_SIM_DRIFT:
	case CLI_SIM_WANDER:
	case CLI_SIM_PREEMPT:
		return cli_virtual_option("record", c, arg, &o->virt, &o->src) ? 2 : 0;
	default: return parse_valued(o, c, arg);
	}
}

/* -C's CPUs must be online, whatever reads the list: a CPU past the
 * machine's (the simulated Tegra410's PMUs sit on this machine's CPUs too)
 * was taken without a word where no per-CPU event read it (--sim,
 * --virtual, uncore PMUs only). A machine whose online CPUs cannot be read
 * is left to the per-CPU events, which say so where they need them. */
static int check_cpus(const struct cli_record_opts *o)
{
	if (o->target.cpus && t4_cpus_check_online(o->target.cpus) == -EINVAL)
		return cli_usage_error("record", "-C %s: %s", o->target.cpus, t4_errmsg());
	return 0;
}

int cli_record_parse(int argc, char **argv, struct cli_record_opts *o)
{
	struct cli_getopt g;
	int c, rc;

	o->period_ns = 1000000;
	o->output = "t410trace.t4t";
	optind = 1;
	opterr = 0; /* our own one-line messages */
	while ((c = cli_getopt(&g, argc, argv, "+:e:I:b:d:o:fc:aC:p:t:qh", record_longopts)) != -1) {
		if (c == '?' || c == ':')
			return cli_opt_error("record", &g, argv, c);
		if ((rc = parse_one(o, c, optarg)))
			return rc;
	}
	/* the final trigger is --duration's point of the grid: a period
	 * longer than that has no trigger but the baseline in it (virtual
	 * time used to run on to the next grid point, hours past the end) */
	if (o->duration_ns && o->period_ns > o->duration_ns)
		return cli_usage_error("record", "%s %s is longer than --duration %s: not one "
				       "period fits; use a period of at most the duration",
				       o->period_opt ? o->period_opt : "--period",
				       o->period_arg ? o->period_arg : "1ms (the default)",
				       o->duration_arg);
	if (cli_virtual_check("record", &o->virt, &o->src,
			      &(struct cli_virtual_live){ o->duration_ns, optind < argc, o->paused,
							  o->control != NULL }))
		return 2;
	if (o->virt.on && (o->top || o->metrics_listen))
		return cli_usage_error("record", "%s: a live view of a live recording (--virtual runs "
				       "in virtual time)", o->top ? "--top" : "--metrics-listen");
	if (o->virt.on && o->drm.proc_root)
		return cli_usage_error("record", "--proc-root: DRM clients are read live, not in virtual time");
	if (optind < argc)
		o->command = argv + optind;
	if (o->command && (o->target.pids || o->target.tids_arg))
		return cli_usage_error("record", "-p/-t count running tasks; they exclude a COMMAND");
	if ((o->target.pids || o->target.tids_arg) && o->src.sim)
		return cli_usage_error("record", "-p/-t count this host's tasks; they exclude --sim");
	if ((o->target.pids || o->target.tids_arg) && (o->all_cpus || o->target.cpus))
		/* their counters are the tasks': -a or -C was ignored, silently */
		return cli_usage_error("record", "%s counts CPUs, -p/-t count tasks: use one or "
				       "the other", o->target.cpus ? "-C" : "-a");
	if (o->src.sim && o->trigger == T4_TRIGGER_BPF)
		return cli_usage_error("record", "--trigger bpf: the simulator's counters live in "
				       "user space (--sim records through --trigger user)");
	return check_cpus(o);
}

