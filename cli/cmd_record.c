/* cmd_record.c - `t410trace record`: counters of every clock domain on one
 * reference timeline, into a zstd-compressed log.
 *
 * Order of things: discover PMUs (real, fixture or simulated), parse the
 * events, group them into clock domains and open them, open the log, create
 * the scheduler (its rings), start the writer, write the metadata, start
 * the scheduler (baseline trigger 0), start the command, wait for the
 * command / the duration / a signal, stop (final trigger), close the log
 * with the final status, print a summary. The main thread only waits and
 * draws the progress line; it never touches the trigger path.
 */
#include "cli.h"
#include "collector/collector.h"
#include "packets/packets.h"
#include "sched/sched.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_EVENT_ARGS 64

struct record_opts {
	uint64_t period_ns;
	uint64_t duration_ns;
	const char *bookmark;
	const char *events[MAX_EVENT_ARGS];
	size_t n_events;
	const char *output;
	const char *control;
	struct cli_source src;
	bool paused, per_socket, quiet, progress;
	enum t4_trigger_path trigger;
	int zstd_level;
	uint32_t fsync_ms; /* 0: the log's default (1 s) */
	enum t4_log_backend backend;
	char **command; /* NULL-terminated, or NULL */
	struct cli_virtual virt; /* --virtual (record_virtual.c) */
};

struct recording {
	struct record_opts o;
	struct t4_evlist events;
	struct t4_domain_set domains;
	struct t4_log *log;
	struct t4_ring *meta;
	struct t4_sched *sched;
	struct t4_control *control;
	char control_path[256];
	bool control_is_temp;
	char partial[4096];  /* the log while setting up; "" when written in place */
	pid_t child;
	int child_pidfd;     /* -1 when the kernel has no pidfd_open */
	int child_status;
	bool log_failed;
	uint64_t start_ref_ns;
	char cmdline[T4_CMDLINE_MAX];
};

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void record_usage(FILE *f)
{
	fprintf(f,
		"usage: t410trace record [OPTIONS] [-- COMMAND [ARGS...]]\n\n"
		"Fires triggers on an absolute time grid; on each, every clock domain's\n"
		"counters are read and their deltas logged with the reference clock.\n\n"
		"  -e, --event SPEC       counters (repeatable; perf syntax, see 't410trace list');\n"
		"                         default: every Tegra410 PMU's default set, or this\n"
		"                         host's software counters and msr/tsc/\n"
		"  -p, --period DUR       trigger period, e.g. 1ms, 100us (default 1ms)\n"
		"  -b, --bookmark NAME    initial bookmark (phase name)\n"
		"  -d, --duration DUR     stop after DUR, on the trigger grid (default: when\n"
		"                         COMMAND exits, or Ctrl-C); a COMMAND still running\n"
		"                         then gets SIGTERM\n"
		"  -o, --output FILE      log file (default t410trace.t4t)\n"
		"  -c, --control PATH     control socket for 't410trace ctl' (mode 0600)\n"
		"      --sim[=SEED]       record a simulated Tegra410 (output labelled simulated)\n"
		"      --virtual          with --sim and --duration: record it in virtual time, as\n"
		"                         fast as the CPU goes, the same log for the same seed,\n"
		"                         a bookmark at each of its workload's phase changes\n"
		"      --sysfs-root DIR   discover PMUs under DIR instead of sysfs\n"
		"      --paused           start with periodic triggers stopped\n"
		"      --per-socket       one central scheduler per socket\n"
		"      --trigger PATH     where triggers fire: 'bpf' (BPF timers in the kernel,\n"
		"                         no user-space wake-up per trigger), 'user' (a thread\n"
		"                         per CPU), or 'auto' (default: bpf when the kernel can\n"
		"                         read every counter, else user, saying why)\n"
		"      --progress         show the progress line even when not on a terminal\n"
		"      --zstd-level N     compression level (default 1)\n"
		"      --backend NAME     log writes through 'uring' (default) or 'pwrite'\n"
		"      --fsync DUR|close  flush the log to disk every DUR (default 1s) or only\n"
		"                         at the end; chunks reach the file every 100 ms anyway\n"
		"  -q, --quiet            no progress line, no summary\n"
		"  -h, --help\n\n"
		"With COMMAND, recording covers exactly its run, and record exits with its\n"
		"exit code. COMMAND finds the control socket in $%s (libt410trace).\n",
		T4_CONTROL_ENV);
}

enum {
	OPT_SIM = 256, OPT_SYSFS, OPT_PAUSED, OPT_PER_SOCKET, OPT_PROGRESS,
	OPT_ZSTD, OPT_BACKEND, OPT_FSYNC, OPT_TRIGGER,
};

static const struct option record_longopts[] = {
	{ "event", required_argument, NULL, 'e' },
	{ "period", required_argument, NULL, 'p' },
	{ "bookmark", required_argument, NULL, 'b' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "control", required_argument, NULL, 'c' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "sim", optional_argument, NULL, OPT_SIM },
	{ "sysfs-root", required_argument, NULL, OPT_SYSFS },
	{ "paused", no_argument, NULL, OPT_PAUSED },
	{ "per-socket", no_argument, NULL, OPT_PER_SOCKET },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "zstd-level", required_argument, NULL, OPT_ZSTD },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "fsync", required_argument, NULL, OPT_FSYNC },
	{ "virtual", no_argument, NULL, CLI_VIRTUAL },
	{ "sim-drift", required_argument, NULL, CLI_SIM_DRIFT },
	{ "sim-wander", required_argument, NULL, CLI_SIM_WANDER },
	{ "sim-preempt", required_argument, NULL, CLI_SIM_PREEMPT },
	{ "trigger", required_argument, NULL, OPT_TRIGGER },
	{ 0 },
};

/* The words of --trigger and --backend, in the order of their enums. */
static const char *const trigger_words[] = { "auto", "user", "bpf", NULL };
static const char *const backend_words[] = { "uring", "pwrite", NULL };

/* Index of arg in the NULL-ended words, -1 when it is none of them. */
static int word_index(const char *arg, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (!strcmp(arg, words[i]))
			return i;
	return -1;
}

/* Returns 0, 1 for --help (exit 0), or 2 after printing a usage error. */
static int parse_record_opts(int argc, char **argv, struct record_opts *o)
{
	uint64_t v;
	int c, i;

	o->period_ns = 1000000;
	o->output = "t410trace.t4t";
	o->zstd_level = 1; /* level 3 costs 2x the CPU for the same size here */
	optind = 1;
	opterr = 0; /* our own one-line messages */
	while ((c = getopt_long(argc, argv, "+:e:p:b:d:o:c:qh", record_longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (o->n_events == MAX_EVENT_ARGS)
				return cli_usage_error("record", "too many -e options (max %d)", MAX_EVENT_ARGS);
			o->events[o->n_events++] = optarg;
			break;
		case 'p':
			if (t4_parse_duration(optarg, &o->period_ns) < 0)
				return cli_usage_error("record", "--period %s", t4_errmsg());
			if (o->period_ns < 10000)
				return cli_usage_error("record", "--period %s: shorter than 10us is not supported", optarg);
			break;
		case 'b':
			o->bookmark = optarg;
			break;
		case 'd':
			if (t4_parse_duration(optarg, &o->duration_ns) < 0)
				return cli_usage_error("record", "--duration %s", t4_errmsg());
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'c':
			o->control = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			record_usage(stdout);
			return 1;
		case OPT_SIM:
			if (cli_source_set_sim("record", &o->src, optarg))
				return 2;
			break;
		case OPT_SYSFS:
			o->src.sysfs_root = optarg;
			break;
		case OPT_PAUSED:
			o->paused = true;
			break;
		case OPT_PER_SOCKET:
			o->per_socket = true;
			break;
		case OPT_PROGRESS:
			o->progress = true;
			break;
		case OPT_ZSTD:
			if (t4_parse_u64(optarg, &v) < 0 || v < 1 || v > 19)
				return cli_usage_error("record", "--zstd-level %s: use 1-19", optarg);
			o->zstd_level = (int)v;
			break;
		case OPT_FSYNC:
			if (!strcmp(optarg, "close")) {
				o->fsync_ms = UINT32_MAX;
				break;
			}
			if (t4_parse_duration(optarg, &v) < 0 || v < 1000000 || v > 3600000000000ull)
				return cli_usage_error("record", "--fsync %s: use 1ms-1h, or 'close'", optarg);
			o->fsync_ms = (uint32_t)(v / 1000000);
			break;
		case OPT_TRIGGER:
			if ((i = word_index(optarg, trigger_words)) < 0)
				return cli_usage_error("record", "--trigger %s: use 'bpf', 'user' or 'auto'", optarg);
			o->trigger = (enum t4_trigger_path)i;
			break;
		case OPT_BACKEND:
			if ((i = word_index(optarg, backend_words)) < 0)
				return cli_usage_error("record", "--backend %s: use 'uring' or 'pwrite'", optarg);
			o->backend = (enum t4_log_backend)i;
			break;
		case CLI_VIRTUAL:
		case CLI_SIM_DRIFT:
		case CLI_SIM_WANDER:
		case CLI_SIM_PREEMPT:
			if (cli_virtual_option("record", c, optarg, &o->virt, &o->src))
				return 2;
			break;
		case ':':
			return cli_usage_error("record", "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("record", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (cli_source_check("record", &o->src) ||
	    cli_virtual_check("record", &o->virt, &o->src,
			      &(struct cli_virtual_live){ o->duration_ns, optind < argc, o->paused,
							  o->control != NULL }))
		return 2;
	if (o->src.sim && o->trigger == T4_TRIGGER_BPF)
		return cli_usage_error("record", "--trigger bpf: the simulator's counters live in "
				       "user space (--sim records through --trigger user)");
	if (optind < argc)
		o->command = argv + optind;
	return 0;
}

static void join_cmdline(int argc, char **argv, char *out, size_t cap)
{
	size_t len = snprintf(out, cap, "t410trace");

	for (int i = 0; i < argc && len < cap; i++)
		len += snprintf(out + len, cap - len, " %s", argv[i]);
}

/* ---- setting up --------------------------------------------------------- */

static int setup_counters(struct recording *r)
{
	struct t4_pmu_set *pmus = &r->o.src.pmus;
	int rc = cli_source_open(&r->o.src);

	for (size_t i = 0; i < r->o.n_events && rc >= 0; i++)
		rc = t4_events_parse(&r->events, pmus, r->o.events[i]);
	if (rc >= 0 && r->o.n_events == 0)
		rc = t4_events_default(&r->events, pmus);
	if (rc < 0)
		return rc;
	if (r->events.n == 0)
		return t4_err(ENOENT, "no counters to record (see 't410trace list')");
	rc = t4_domains_build(&r->domains, &r->events);
	if (rc < 0)
		return rc;
	return t4_domains_open(&r->domains, r->o.src.simulator);
}

/* The log is written under a temporary name next to the output until the
 * recording has started, so that a run that fails while setting up leaves
 * an existing file of that name untouched. A device (-o /dev/null) or a
 * pipe is written in place. */
static const char *log_path(struct recording *r)
{
	struct stat st;

	if (stat(r->o.output, &st) == 0 && !S_ISREG(st.st_mode))
		return r->o.output;
	snprintf(r->partial, sizeof(r->partial), "%s.partial-%ld", r->o.output, (long)getpid());
	return r->partial;
}

static int setup_log(struct recording *r)
{
	struct t4_log_opts lo = {
		.path = log_path(r),
		.zstd_level = r->o.zstd_level,
		.fsync_ms = r->o.fsync_ms,
		.backend = r->o.backend,
		.chunk_ms = r->o.virt.on ? UINT32_MAX : 0, /* virtual: chunks by size only */
	};
	int rc = t4_log_open(&r->log, &lo);

	if (rc < 0)
		return rc;
	/* Created first: the writer drains it first, so metadata precedes
	 * the packets it describes. */
	return t4_log_ring(r->log, 4u << 20, T4_RING_WAIT, &r->meta);
}

/* Give the log its name once the recording runs (or drop it on failure). */
static int publish_log(struct recording *r, bool ok)
{
	if (!r->partial[0])
		return 0;
	if (!ok) {
		unlink(r->partial);
		r->partial[0] = '\0';
		return 0;
	}
	if (rename(r->partial, r->o.output) < 0)
		return t4_err(errno, "%s: cannot create it: %s", r->o.output, strerror(errno));
	r->partial[0] = '\0';
	return 0;
}

static int write_metadata(struct recording *r)
{
	struct t4_session_pkt *s = malloc(sizeof(*s));
	struct t4_sched_status st;
	int rc;

	if (!s)
		return t4_err(ENOMEM, "out of memory");
	t4_sched_status(r->sched, &st);
	/* the start on the packets' reference clock (the BPF path's is MONOTONIC) */
	t4_session_init(s, r->cmdline, t4_sched_now(r->sched) - (t4_ref_ns() - r->start_ref_ns),
			t4_clock_ns(CLOCK_REALTIME), r->o.period_ns, r->o.src.sim);
	s->flags |= st.bpf ? T4_SESSION_BPF_TRIGGER : 0;
	s->ref_clock = st.ref_clock;
	rc = t4_put_metadata(r->meta, s, &r->domains, r->o.per_socket);
	free(s);
	return rc;
}

/* ---- control socket ----------------------------------------------------- */

static int ctl_bookmark(void *ud, const char *name)
{
	return t4_sched_bookmark(ud, name);
}
static int ctl_trigger(void *ud)
{
	return t4_sched_trigger(ud);
}
static int ctl_start(void *ud)
{
	return t4_sched_resume(ud);
}
static int ctl_stop(void *ud)
{
	return t4_sched_pause(ud);
}
static int ctl_status(void *ud, char *buf, size_t cap)
{
	struct t4_sched_status st;

	t4_sched_status(ud, &st);
	snprintf(buf, cap, "triggers=%llu overruns=%llu periodic=%s bookmark=%s",
		 (unsigned long long)st.triggers, (unsigned long long)st.overruns,
		 st.periodic ? "on" : "off", st.bookmark_id ? st.bookmark : "-");
	return 0;
}

static const struct t4_control_ops control_ops = {
	.bookmark = ctl_bookmark,
	.trigger = ctl_trigger,
	.start = ctl_start,
	.stop = ctl_stop,
	.status = ctl_status,
};

/* A command always gets a control socket (for libt410trace): the one the
 * user named, or a private one in a fresh temporary directory. */
static int setup_control(struct recording *r)
{
	if (r->o.control) {
		snprintf(r->control_path, sizeof(r->control_path), "%s", r->o.control);
	} else if (r->o.command) {
		char dir[] = "/tmp/t410trace.XXXXXX";
		if (!mkdtemp(dir))
			return t4_err(errno, "cannot create a directory for the control socket: %s",
				      strerror(errno));
		snprintf(r->control_path, sizeof(r->control_path), "%s/control", dir);
		r->control_is_temp = true;
	} else {
		return 0;
	}
	return t4_control_open(&r->control, r->control_path, &control_ops, r->sched);
}

/* ---- the command ----------------------------------------------------------- */

static void wait_for_baseline(struct recording *r)
{
	struct t4_sched_status st;

	for (int i = 0; i < 2000; i++) {
		t4_sched_status(r->sched, &st);
		if (st.triggers > 0)
			return;
		usleep(500);
	}
}

/* The command starts once trigger 0 (the baseline) is in, so the recording
 * covers all of its run. SIGINT/SIGTERM are blocked across fork(): the
 * child resets them to their defaults before unblocking, and one that
 * arrived meanwhile reaches the parent's handler, which forwards it. */
static int start_command(struct recording *r)
{
	sigset_t stop_sigs, old;
	int go[2];

	if (r->control_path[0] && setenv(T4_CONTROL_ENV, r->control_path, 1) < 0)
		return t4_err(errno, "setenv: %s", strerror(errno));
	if (pipe2(go, O_CLOEXEC) < 0)
		return t4_err(errno, "pipe: %s", strerror(errno));
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_sigs, &old);
	r->child = fork();
	if (r->child == 0) {
		char c;
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(r->o.command[0], r->o.command);
		fprintf(stderr, "t410trace record: cannot run '%s': %s\n", r->o.command[0],
			strerror(errno));
		_exit(127);
	}
	int fork_errno = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(go[0]);
	if (r->child < 0) {
		close(go[1]);
		r->child = 0;
		return t4_err(fork_errno, "fork: %s", strerror(fork_errno));
	}
	r->child_pidfd = (int)syscall(SYS_pidfd_open, r->child, 0);
	wait_for_baseline(r);
	if (write(go[1], "g", 1) != 1)
		t4_warn("could not release the command");
	close(go[1]);
	return 0;
}

/* Reap the command if it has exited. */
static bool command_exited(struct recording *r)
{
	if (r->child <= 0 || waitpid(r->child, &r->child_status, WNOHANG) != r->child)
		return false;
	r->child = 0;
	return true;
}

/* Stop the command after --duration: TERM, then KILL after 5 s. */
static void stop_command(struct recording *r)
{
	if (r->child <= 0)
		return;
	if (!r->o.quiet)
		fprintf(stderr, "t410trace: --duration reached: stopping '%s' (SIGTERM)\n",
			r->o.command[0]);
	kill(r->child, SIGTERM);
	for (int i = 0; i < 500 && !command_exited(r); i++)
		usleep(10000);
	if (r->child > 0) {
		kill(r->child, SIGKILL);
		waitpid(r->child, &r->child_status, 0);
		r->child = 0;
	}
}

/* ---- progress and summary -------------------------------------------------- */

static void progress_line(struct recording *r, bool final)
{
	struct t4_sched_status st;
	struct t4_log_stats ls;
	char b1[32];
	double el = (t4_ref_ns() - r->start_ref_ns) / 1e9;

	t4_sched_status(r->sched, &st);
	t4_log_stats(r->log, &ls);
	fprintf(stderr, "\r%6.1fs  triggers %llu  overruns %llu  drops %llu  written %s  ratio %.1fx \033[K%s",
		el, (unsigned long long)st.triggers, (unsigned long long)st.overruns,
		(unsigned long long)ls.dropped, t4_fmt_bytes(ls.file_bytes, b1, sizeof(b1)),
		ls.file_bytes ? (double)ls.raw_bytes / (double)ls.file_bytes : 0.0,
		final ? "\n" : "");
}

static void summary(struct recording *r, const struct t4_sched_status *st,
		    const struct t4_log_stats *ls, double seconds)
{
	struct rusage ru;
	char b1[32], b2[32], d1[16], d[6][16];
	size_t counters = 0;

	for (size_t i = 0; i < r->domains.n; i++)
		counters += r->domains.v[i].n;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	uint32_t nsched = st->schedulers ? st->schedulers : 1;
	uint64_t grid = st->triggers / nsched; /* triggers of one scheduler */
	char per[64] = "";
	if (nsched > 1)
		snprintf(per, sizeof(per), " (%llu per scheduler x %u)", (unsigned long long)grid, nsched);
	fprintf(stderr, "t410trace: %s%llu triggers%s in %.2f s (period %s), %llu overruns, "
			"%llu dropped, %llu read failures, %llu answered late\n",
		r->o.src.sim ? "SIMULATED Tegra410: " : "",
		(unsigned long long)st->triggers, per, seconds,
		t4_fmt_duration(r->o.period_ns, d1, sizeof(d1)),
		(unsigned long long)st->overruns, (unsigned long long)ls->dropped,
		(unsigned long long)st->read_failures, (unsigned long long)st->superseded);
	fprintf(stderr, "t410trace: triggers fired by %s; reference clock %s; CPU %.1f us/trigger\n",
		st->bpf ? "BPF timers in the kernel" : "user-space threads",
		st->ref_clock == T4_REFCLK_MONOTONIC ? "CLOCK_MONOTONIC" : "CLOCK_MONOTONIC_RAW",
		grid ? cpu * 1e6 / (double)grid : 0.0);
	fprintf(stderr, "t410trace: %zu domains, %zu counters; trigger to sample p50 %s p99 %s "
			"(%.1f%% of the period); spread between CPUs p50 %s p99 %s; "
			"read window p50 %s p99 %s\n",
		r->domains.n, counters, t4_fmt_duration(st->skew_p50, d[0], sizeof(d[0])),
		t4_fmt_duration(st->skew_p99, d[1], sizeof(d[1])),
		100.0 * (double)st->skew_p99 / (double)r->o.period_ns,
		t4_fmt_duration(st->spread_p50, d[2], sizeof(d[2])),
		t4_fmt_duration(st->spread_p99, d[3], sizeof(d[3])),
		t4_fmt_duration(st->window_p50, d[4], sizeof(d[4])),
		t4_fmt_duration(st->window_p99, d[5], sizeof(d[5])));
	if (st->lost)
		fprintf(stderr, "t410trace: %llu records did not fit the kernel's ring buffer "
				"(counted as skipped; the next record covers them)\n",
			(unsigned long long)st->lost);
	if (st->off_cpu)
		fprintf(stderr, "t410trace: %llu monitor reads ran away from their PMU's CPU "
				"(cpuset?): slower reads, more skew\n", (unsigned long long)st->off_cpu);
	fprintf(stderr, "t410trace: wrote %s: %s (raw %s, ratio %.1fx, %.2f bytes/value)\n",
		r->o.output, t4_fmt_bytes(ls->file_bytes, b1, sizeof(b1)),
		t4_fmt_bytes(ls->raw_bytes, b2, sizeof(b2)),
		ls->file_bytes ? (double)ls->raw_bytes / (double)ls->file_bytes : 0.0,
		st->values ? (double)ls->file_bytes / (double)st->values : 0.0);
}

/* ---- running ------------------------------------------------------------------ */

/* Sleep until the command exits (its pidfd becomes readable), a signal
 * arrives (poll returns EINTR), or timeout_ns passes. */
static void nap(struct recording *r, uint64_t timeout_ns)
{
	if (r->child > 0 && r->child_pidfd >= 0) {
		struct pollfd pfd = { .fd = r->child_pidfd, .events = POLLIN };
		poll(&pfd, 1, (int)((timeout_ns + 999999) / 1000000));
		return;
	}
	if (r->child > 0 && timeout_ns > 5000000)
		timeout_ns = 5000000; /* no pidfd: notice the exit promptly */
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ull),
			       (long)(timeout_ns % 1000000000ull) };
	nanosleep(&ts, NULL);
}

/* Until the command exits, --duration passes, a signal comes, or the log
 * fails (disk full: stop now rather than record into the void). */
static void wait_until_done(struct recording *r, uint64_t t0, bool show_progress)
{
	const uint64_t redraw_ns = 250000000ull;
	uint64_t end = r->o.duration_ns ? t0 + r->o.duration_ns : 0, next_draw = 0;
	struct t4_log_stats ls;
	struct t4_sched_status st;

	for (;;) {
		if (command_exited(r))
			return;
		if (got_signal) {
			if (r->child <= 0)
				return;
			kill(r->child, got_signal); /* it ends, then we do */
			got_signal = 0;
		}
		t4_log_stats(r->log, &ls);
		if (ls.error) {
			r->log_failed = true;
			return;
		}
		/* The scheduler ends --duration itself, on its grid; the
		 * main thread's clock is only a backstop. */
		uint64_t now = t4_ref_ns();
		t4_sched_status(r->sched, &st);
		if (end && (st.finished || now >= end + 1000000000ull)) {
			stop_command(r);
			return;
		}
		if (show_progress && now >= next_draw) {
			progress_line(r, false);
			next_draw = now + redraw_ns;
		}
		uint64_t timeout = next_draw > now ? next_draw - now : redraw_ns;
		if (end && now >= end)
			timeout = 1000000; /* the final trigger is due any moment */
		else if (end && end - now < timeout)
			timeout = end - now;
		nap(r, timeout);
	}
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static void recording_free(struct recording *r)
{
	if (r->child_pidfd >= 0)
		close(r->child_pidfd);
	t4_control_close(r->control);
	if (r->control_is_temp) {
		char dir[256];
		snprintf(dir, sizeof(dir), "%s", r->control_path);
		char *slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			rmdir(dir);
		}
	}
	t4_sched_free(r->sched);
	t4_domains_free(&r->domains);
	t4_evlist_free(&r->events);
	cli_source_close(&r->o.src);
}

/* record --virtual: counters and log as for a live recording, then the
 * whole recording at once (record_virtual.c); the log gets its name once
 * complete. */
static int run_virtual(struct recording *r)
{
	struct cli_virtual_run vr = {
		.v = &r->o.virt, .domains = &r->domains, .period_ns = r->o.period_ns,
		.duration_ns = r->o.duration_ns, .seed = r->o.src.seed,
		.per_socket = r->o.per_socket, .bookmark = r->o.bookmark, .cmdline = r->cmdline,
	};
	struct t4_sched_status st = { 0 };
	struct t4_status_pkt fin;
	struct t4_log_stats ls;
	uint64_t t0 = t4_ref_ns();
	int rc = setup_counters(r), crc = 0;

	if (rc >= 0 && (rc = setup_log(r)) >= 0 && (rc = t4_log_start(r->log)) >= 0) {
		vr.ring = r->meta;
		rc = cli_virtual_record(&vr, &st);
	}
	cli_virtual_final(&st, &fin);
	if (r->log)
		crc = t4_log_close(r->log, &fin, &ls);
	r->log = NULL;
	if (rc == 0 && crc < 0)
		rc = crc;
	if (rc == 0)
		rc = publish_log(r, true);
	publish_log(r, false); /* failed: drop the unnamed log */
	if (rc == 0 && !r->o.quiet)
		cli_virtual_summary(r->o.output, &r->domains, &st, &ls,
				    (double)(t4_ref_ns() - t0) / 1e9);
	return rc;
}

static int run(struct recording *r)
{
	struct t4_sched_opts so = {
		.period_ns = r->o.period_ns,
		.paused = r->o.paused,
		.per_socket = r->o.per_socket,
		.bookmark = r->o.bookmark,
		.duration_ns = r->o.duration_ns,
		.quiet = r->o.quiet,
		.trigger = r->o.trigger,
	};
	struct t4_sched_status st;
	struct t4_log_stats ls;
	bool show_progress;
	uint64_t t0 = 0, t_end = 0; /* baseline and final trigger, about */
	int rc;

	if ((rc = setup_counters(r)) < 0)
		return rc;
	if ((rc = setup_log(r)) < 0)
		goto close_log;
	so.domains = &r->domains;
	so.log = r->log;
	if ((rc = t4_sched_create(&r->sched, &so)) < 0 || (rc = t4_log_start(r->log)) < 0 ||
	    (rc = write_metadata(r)) < 0 || (rc = setup_control(r)) < 0)
		goto close_log;
	if (t4_sched_path_note(r->sched)[0] && !r->o.quiet)
		fprintf(stderr, "t410trace: notice: triggers fire in user space: %s\n",
			t4_sched_path_note(r->sched));
	show_progress = !r->o.quiet && (r->o.progress || isatty(STDERR_FILENO));
	t0 = t4_ref_ns(); /* the baseline trigger: --duration counts from it */
	if ((rc = t4_sched_start(r->sched)) < 0 || (rc = publish_log(r, true)) < 0)
		goto stop;
	if (r->o.command && got_signal) { /* interrupted: don't start it */
		r->child_status = W_EXITCODE(128 + got_signal, 0); /* as a shell would */
		goto stop;
	}
	if (r->o.command && (rc = start_command(r)) < 0)
		goto stop;
	wait_until_done(r, t0, show_progress);
stop:
	t4_sched_stop(r->sched);
	t_end = t4_ref_ns();
	if (show_progress)
		progress_line(r, true);
close_log:;
	double seconds = t_end > t0 ? (double)(t_end - t0) / 1e9 : 0.0;
	if (r->sched)
		t4_sched_status(r->sched, &st);
	else
		memset(&st, 0, sizeof(st));
	struct t4_status_pkt fin = {
		.triggers = st.triggers,
		.overruns = st.overruns,
		.read_failures = st.read_failures,
		.ref_ns = r->sched ? t4_sched_now(r->sched) : t4_ref_ns(),
	};
	int crc = r->log ? t4_log_close(r->log, &fin, &ls) : 0;
	r->log = NULL;
	if (rc == 0 && crc < 0)
		rc = crc;
	publish_log(r, false); /* still unnamed: setup failed, drop it */
	if (rc == 0 && !r->o.quiet)
		summary(r, &st, &ls, seconds);
	return rc;
}

/* The log failed while the command runs: say so now and let the command
 * finish (a full disk is no reason to kill the user's work). Returns the
 * exit code, or -1 when this does not apply. */
static int outlive_failed_log(struct recording *r, int rc)
{
	int code;

	if (rc >= 0 || r->child <= 0 || !r->log_failed)
		return -1;
	code = t4_report(rc);
	fprintf(stderr, "t410trace: recording stopped; waiting for '%s' to finish\n",
		r->o.command[0]);
	waitpid(r->child, &r->child_status, 0);
	r->child = 0;
	return code;
}

int cmd_record(int argc, char **argv)
{
	struct recording r;
	struct sigaction sa = { .sa_handler = on_signal };
	int rc;

	memset(&r, 0, sizeof(r));
	rc = parse_record_opts(argc, argv, &r.o);
	if (rc)
		return rc == 1 ? 0 : rc;
	join_cmdline(argc, argv, r.cmdline, sizeof(r.cmdline));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	r.start_ref_ns = t4_ref_ns();
	r.child_pidfd = -1;
	rc = r.o.virt.on ? run_virtual(&r) : run(&r);
	int code = outlive_failed_log(&r, rc);
	if (r.child > 0) { /* failed after starting it: don't orphan it */
		kill(r.child, SIGTERM);
		waitpid(r.child, &r.child_status, 0);
		r.child = 0;
	}
	recording_free(&r);
	if (code >= 0)
		return code;
	if (rc < 0)
		return t4_report(rc);
	if (r.o.command)
		return exit_code_of(r.child_status);
	return 0;
}
