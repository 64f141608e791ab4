/* cmd_record.c - `t410trace record`: counters of every clock domain on one
 * reference timeline, into a zstd-compressed log.
 *
 * Options are parsed in record_opts.c; what record says on stderr is in
 * record_report.c and stat.c. Order of things: decide where the log goes
 * (output.c: nothing existing is destroyed), fork the command (child.c; it
 * waits to be released), discover PMUs (real, fixture or simulated), parse
 * the events (with perf's -C/-p/-t targets, or the command's tasks: without
 * -a/-C its CPU-side events count it, per task and inherited, like perf
 * stat), check the sysfs aliases the catalog encodes otherwise (alias_check.c:
 * one that reads 0 while the catalog's encoding counts is replaced, with a
 * warning), group them into clock domains and open them, open the log under
 * its temporary name (its writer feeding an index of what it logs), create
 * the scheduler on its trigger path (--trigger: the BPF timers, or
 * user-space threads; a notice when auto fell back), start the writer,
 * write the metadata (the session says which path and reference clock),
 * start the scheduler (baseline trigger 0), release the command (its exec
 * checked), publish the log under its name, wait for the command / the
 * duration / a signal / the -p tasks, stop (final trigger), close the log
 * with the final status, print a summary (also when the log stopped early:
 * disk full) and every event's total (perf stat's answer). The main thread
 * only waits and draws the progress line (with --top the view, on the
 * controlling terminal, what else reaches that terminal held meanwhile:
 * hold.c, set up before the command forks); it never touches the trigger
 * path.
 *
 * CPU and GPU activity (the scheduler loads them with its rings, unless
 * --no-activity or there is no workload to follow: COMMAND's tree, -p/-t's
 * processes, or every task with -a) follow the command from its fork, before
 * it execs; libt410trace's "hello" asks the scheduler whether a process's
 * bookmarks may take the uprobe.
 */
#include "cli.h"
#include "collector/collector.h"
#include "control/control.h"
#include "decode/decode.h"
#include "live/live.h"
#include "packets/packets.h"
#include "sched/sched.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <unistd.h>

struct recording {
	struct cli_record_opts o;
	struct t4_evlist events;
	struct t4_domain_set domains;
	struct cli_output out;
	struct cli_child child;
	struct t4_log *log;
	struct t4_ring *meta;
	struct t4_sched *sched;
	struct t4_control *control;
	char control_path[256];
	char control_dir[200]; /* our private directory, "" when none */
	bool log_failed, ran;
	bool not_started;      /* COMMAND could not run (or a signal came
				* first): no log is published */
	int not_started_code;  /* the exit code then */
	char why[512];         /* and the reason */
	uint64_t start_ref_ns;
	char cmdline[T4_CMDLINE_MAX];
	int *activity_pids;       /* -p/-t's processes, followed in the activity */
	size_t n_activity_pids;
	_Atomic bool probe_notice_done;
	int command_pid;       /* the command's CPU-side events count it */
	bool released;         /* the command may exec (cli_child_release) */
	struct t4_live *live;  /* what the log holds (fed by the writer thread):
			        * top, the metrics endpoint, the closing table */
	struct t4_live_http *http; /* --metrics-listen */
	char *live_text;       /* the control socket's last "live" answer, */
	size_t live_len;       /* ... its length */
	uint64_t live_ns;      /* ... and when it was taken (t4_mono_raw_ns) */
	pthread_mutex_t log_lock;  /* r->log for other threads (live_health):
				    * NULL once finish_log takes it */
	struct cli_job job;    /* the Slurm or Open MPI job it runs in */
	char output[4096];     /* -o with its expansions (job.c) */
	char made_dir[4096];   /* the first directory made for it ("" none) */
	uint64_t host_due_ns;  /* when the next host packet is due (t4_mono_raw_ns) */
	struct cli_hold hold;  /* --top: the terminal, what others write to it */
	bool virt_progress;      /* --virtual: its progress line is shown, */
	uint64_t virt_triggers;  /* ... the grid points fired, */
	uint64_t virt_next_draw; /* ... and when it is drawn next (t4_mono_raw_ns) */
};

static volatile sig_atomic_t signals_got, last_signal;

static void on_signal(int sig)
{
	last_signal = sig;
	signals_got++;
}

/* Whether a shell reads arg as it is: a word of these characters only. */
static bool shell_plain(const char *arg)
{
	return *arg && strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				   "0123456789_./:=,%+@-") == strlen(arg);
}

/* The command line as a shell would read it back (info shows it; what
 * was `sh -c 'sleep 1'` must not read `sh -c sleep 1`): each argument
 * that is not a plain word in single quotes, a quote in it as '\''. Cut
 * at cap, as the format's field is. */
static void join_cmdline(int argc, char **argv, char *out, size_t cap)
{
	size_t len = snprintf(out, cap, "t410trace");

	for (int i = 0; i < argc && len < cap; i++) {
		if (shell_plain(argv[i])) {
			len += snprintf(out + len, cap - len, " %s", argv[i]);
			continue;
		}
		len += snprintf(out + len, cap - len, " '");
		for (const char *c = argv[i]; *c && len < cap; c++)
			len += snprintf(out + len, cap - len, *c == '\'' ? "'\\''" : "%c", *c);
		if (len < cap)
			len += snprintf(out + len, cap - len, "'");
	}
}

/* ---- setting up --------------------------------------------------------- */

/* `record -- COMMAND` without -a or -C counts the command like perf stat:
 * its CPU-side events per task, inherited by its children. */
static bool counts_command(const struct recording *r)
{
	return r->o.command && !r->o.all_cpus && !r->o.target.cpus;
}

static int setup_counters(struct recording *r)
{
	struct t4_pmu_set *pmus = &r->o.src.pmus;
	int rc = cli_target_resolve(&r->o.target);

	if (rc < 0)
		return rc;
	r->events.target = (struct t4_target){
		.cpus = r->o.target.cpus,
		.tids = r->o.target.tids,
		.n_tids = r->o.target.n_tids,
	};
	if (counts_command(r) && r->command_pid > 0)
		r->events.target = (struct t4_target){
			.tids = &r->command_pid, .n_tids = 1, .command = true,
		};
	rc = cli_source_open(&r->o.src);
	for (size_t i = 0; i < r->o.n_events && rc >= 0; i++)
		rc = t4_events_parse(&r->events, pmus, r->o.events[i]);
	if (rc >= 0 && r->o.n_events == 0)
		rc = t4_events_default(&r->events, pmus);
	if (rc < 0)
		return rc;
	if (r->events.n == 0)
		return t4_err(ENOENT, "no counters to record (see 't410trace list')");
	rc = t4_events_check_aliases(&r->events, r->o.src.simulator, r->o.period_ns);
	if (rc >= 0)
		rc = t4_domains_build(&r->domains, &r->events);
	if (rc < 0)
		return rc;
	rc = t4_domains_open(&r->domains, r->o.src.simulator);
	if (rc == 0 && r->domains.user_only && !r->o.quiet)
		fprintf(stderr, "t410trace: notice: %zu per-task counters count user space only "
				"(':u', as perf does): the kernel refuses its share without "
				"CAP_PERFMON when perf_event_paranoid is 2 or more\n",
			r->domains.user_only);
	return rc;
}

/* The writer thread's view of each packet it logs: the live index (the
 * closing table reads it only after the log is closed). */
static void observe(void *ud, const struct t4_packet *p)
{
	t4_live_feed(((struct recording *)ud)->live, p);
}

/* The closing table's index: NULL when the live index ran out of memory. */
static const struct t4_index *closing_index(const struct recording *r)
{
	return r->live ? t4_live_index(r->live) : NULL;
}

static int setup_log(struct recording *r)
{
	struct t4_log_opts lo = {
		.path = cli_output_open_path(&r->out),
		.name = cli_output_name(&r->out),
		.zstd_level = r->o.zstd_level,
		.format = r->o.log_format,
		.fsync_ms = r->o.fsync_ms,
		.backend = r->o.backend,
		.chunk_ms = r->o.virt.on ? UINT32_MAX : 0, /* virtual: chunks by size only */
		.observe = observe,
		.observe_ud = r,
		.quiet = r->o.quiet,
		.stop = &signals_got, /* Ctrl-C while a FIFO waits for its reader */
	};
	int rc = t4_live_new(&r->live);

	if (rc == 0)
		rc = t4_log_open(&r->log, &lo);

	if (rc < 0)
		return rc;
	/* Created first: the writer drains it first, so metadata precedes
	 * the packets it describes. */
	return t4_log_ring(r->log, 4u << 20, T4_RING_WAIT, &r->meta);
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
	t4_session_init(s, r->cmdline, t4_sched_now(r->sched) - (t4_mono_raw_ns() - r->start_ref_ns),
			t4_clock_ns(CLOCK_REALTIME), r->o.period_ns, r->o.src.sim);
	s->flags |= st.bpf ? T4_SESSION_BPF_TRIGGER : 0;
	s->ref_clock = st.ref_clock;
	rc = t4_put_metadata(r->meta, s, &r->domains, r->o.per_socket);
	free(s);
	return rc;
}

/* The host packet (the job, the clock's sync state): at the start, every
 * second and at the end; the main thread is the metadata ring's only
 * producer once the metadata is in. */
#define HOST_EVERY_NS 1000000000ull

static int put_host(struct recording *r)
{
	struct t4_packet *p = malloc(sizeof(*p));
	int rc;

	if (!p)
		return t4_err(ENOMEM, "out of memory");
	cli_job_host_pkt(&r->job, t4_sched_now(r->sched), p);
	rc = t4_ring_put(r->meta, p);
	free(p);
	r->host_due_ns = t4_mono_raw_ns() + HOST_EVERY_NS;
	return rc;
}

/* ---- control socket ----------------------------------------------------- */

/* The ops' ud is the recording. */
static struct t4_sched *sched_of(void *ud)
{
	return ((struct recording *)ud)->sched;
}
static int ctl_bookmark(void *ud, const char *name)
{
	return t4_sched_bookmark(sched_of(ud), name);
}
static int ctl_trigger(void *ud)
{
	return t4_sched_trigger(sched_of(ud));
}
static int ctl_start(void *ud)
{
	return t4_sched_resume(sched_of(ud));
}
static int ctl_stop(void *ud)
{
	return t4_sched_pause(sched_of(ud));
}
/* A process of the workload may call the probe when the uprobe takes it;
 * when the activity runs but the uprobe cannot be had, say why once. */
static int ctl_hello(void *ud, int pid, const char *path, int *fd)
{
	struct recording *r = ud;
	int up = t4_sched_probe_route(r->sched, pid, path, fd);
	struct t4_sched_status st;

	t4_sched_status(r->sched, &st);
	if (!up && st.activity && !r->o.quiet && !atomic_exchange(&r->probe_notice_done, true))
		fprintf(stderr, "t410trace: notice: libt410trace in process %d keeps the control "
				"socket: %s\n", pid, t4_errmsg());
	return up;
}
static int ctl_status(void *ud, char *buf, size_t cap)
{
	struct recording *r = ud;
	struct t4_sched_status st;
	int n;

	t4_sched_status(sched_of(ud), &st);
	n = snprintf(buf, cap, "triggers=%llu overruns=%llu periodic=%s bookmark=%s",
		     (unsigned long long)st.triggers, (unsigned long long)st.overruns,
		     st.periodic ? "on" : "off", st.bookmark_id ? st.bookmark : "-");
	/* the port the kernel chose for --metrics-listen :0 (-q says nothing) */
	if (r->http && n >= 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, " metrics_port=%u", t4_live_http_port(r->http));
	return 0;
}

/* What only the recorder knows, for a snapshot (any thread). */
static void live_health(void *ud, struct t4_live_health *h)
{
	struct recording *r = ud;
	struct t4_sched_status st;
	struct t4_log_stats ls;

	t4_sched_status(r->sched, &st);
	pthread_mutex_lock(&r->log_lock);
	h->dropped = r->log ? (t4_log_stats(r->log, &ls), ls.dropped) : 0;
	pthread_mutex_unlock(&r->log_lock);
	h->cpu_ns = t4_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	h->now_ns = t4_ref_clock_now(st.ref_clock);
}

static int live_take(void *ud, struct t4_live_snap *out)
{
	struct recording *r = ud;
	struct t4_live_health h;

	live_health(r, &h);
	return t4_live_take(r->live, &h, out);
}

/* "live" on the control socket: a snapshot as text, for `t410trace top`.
 * A snapshot takes the index's lock from the writer, so a client asking
 * thousands of times a second gets the last one again until it is
 * T4_LIVE_CTL_MIN_MS old (the control socket has one thread: no lock). */
static int ctl_live(void *ud, char **data, size_t *len)
{
	struct recording *r = ud;
	uint64_t now = t4_mono_raw_ns();
	struct t4_live_snap s;
	int rc = 0;

	if (!r->live_text || now - r->live_ns >= T4_LIVE_CTL_MIN_MS * 1000000ull) {
		char *text;
		size_t n;

		if ((rc = live_take(ud, &s)) == 0 && (rc = t4_live_snap_text(&s, &text, &n)) == 0) {
			free(r->live_text);
			r->live_text = text;
			r->live_len = n;
			r->live_ns = now;
		}
		t4_live_snap_free(&s);
		if (rc < 0)
			return rc;
	}
	if (!(*data = malloc(r->live_len ? r->live_len : 1)))
		return t4_err(ENOMEM, "out of memory");
	memcpy(*data, r->live_text, r->live_len);
	*len = r->live_len;
	return 0;
}

static const struct t4_control_ops control_ops = {
	.bookmark = ctl_bookmark,
	.trigger = ctl_trigger,
	.start = ctl_start,
	.stop = ctl_stop,
	.status = ctl_status,
	.hello = ctl_hello,
	.live = ctl_live,
};

/* A command always gets a control socket (for libt410trace): the one the
 * user named, or a private one in a fresh temporary directory (named
 * after this process: a later run reclaims it after a kill -9). Its path
 * is known before the command is forked (its environment names it). */
static int control_path(struct recording *r)
{
	int rc;

	if (r->o.control) {
		snprintf(r->control_path, sizeof(r->control_path), "%s", r->o.control);
	} else if (r->o.command) {
		if ((rc = t4_tmpdir_create(r->control_dir, sizeof(r->control_dir), "t410trace")) < 0)
			return rc;
		snprintf(r->control_path, sizeof(r->control_path), "%s/control", r->control_dir);
	}
	return 0;
}

static int setup_control(struct recording *r)
{
	if (!r->control_path[0])
		return 0;
	return t4_control_open(&r->control, r->control_path, &control_ops, r);
}

/* --metrics-listen: listening before the recording starts, so a port in
 * use stops record before the command runs or a log is published. */
static int setup_metrics(struct recording *r)
{
	int rc;

	if (!r->o.metrics_listen)
		return 0;
	if ((rc = t4_live_http_start(&r->http, r->o.metrics_listen, r->live, live_health, r)) < 0)
		return rc;
	if (!r->o.quiet)
		fprintf(stderr, "t410trace: serving /metrics on %s (port %u)\n",
			r->o.metrics_listen, t4_live_http_port(r->http));
	return 0;
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

/* The command's T410TRACE_CONTROL: the socket's path made absolute, so
 * that a command that changes directory still finds it (kept as given
 * only where the absolute one would not fit a socket address). */
static int export_control(const struct recording *r)
{
	char abs[sizeof(((struct sockaddr_un *)0)->sun_path)];

	if (setenv(T4_CONTROL_ENV, t4_control_abspath(r->control_path, abs, sizeof(abs)), 1) < 0)
		return t4_err(errno, "setenv: %s", strerror(errno));
	return 0;
}

/* The command is forked first, before any thread or counter exists: its
 * per-task counters are opened on it (counts_command) and it waits until
 * it is released. */
static int fork_command(struct recording *r)
{
	int rc;

	if (!r->o.command)
		return 0;
	if (r->control_path[0] && (rc = export_control(r)) < 0)
		return rc;
	if ((rc = cli_child_fork(&r->child)) < 0)
		return rc;
	r->command_pid = r->child.pid;
	return 0;
}

/* The command execs once trigger 0 (the baseline) is in, so the recording
 * covers all of its run; its exec is checked before the log is published. */
static int start_command(struct recording *r)
{
	int rc;

	if ((rc = t4_sched_follow(r->sched, r->child.pid)) < 0)
		t4_warn("the CPU activity will miss '%s': %s", r->o.command[0], t4_errmsg());
	wait_for_baseline(r);
	r->released = true;
	return cli_child_release(&r->child);
}

/* ---- running ------------------------------------------------------------------ */

/* SIGINT/SIGTERM/SIGHUP (a terminal or ssh session closed): the command
 * gets them (child.c counts); without one the recording stops, the log
 * closed as for Ctrl-C. Returns true when the recording should stop. */
static bool take_signals(struct recording *r, sig_atomic_t *handled)
{
	while (*handled < signals_got) {
		(*handled)++;
		if (!cli_child_running(&r->child))
			return true;
		cli_child_interrupt(&r->child, last_signal);
	}
	return false;
}

/* The -p/-t tasks have all exited (checked at most every 250 ms). */
static bool targets_gone(struct recording *r)
{
	if (!r->o.target.n_tids || cli_target_alive(&r->o.target))
		return false;
	if (!r->o.quiet)
		fprintf(stderr, "t410trace: the tasks of -p/-t have exited\n");
	return true;
}

/* The progress line: on a terminal, or asked for (--progress); not -q. */
static bool progress_wanted(const struct recording *r)
{
	return !r->o.quiet && (r->o.progress || isatty(STDERR_FILENO));
}

/* Until the command exits, --duration passes, a signal comes, the -p
 * tasks exit, or the log fails (disk full: stop now rather than record
 * into the void). */
/* Where the wait for the recording's end stands. */
struct waiting {
	uint64_t end;       /* --duration's end (0: none) */
	uint64_t next_draw; /* of the progress line; the targets' check */
	sig_atomic_t handled;
	bool show_progress;
};

/* One look at everything that ends the recording: true when it is over;
 * else *timeout_ns is how long to wait before the next look. */
static bool recording_over(struct recording *r, struct waiting *w, uint64_t *timeout_ns)
{
	const uint64_t redraw_ns = 250000000ull;
	struct t4_log_stats ls;
	struct t4_sched_status st;

	cli_hold_follow(&r->hold); /* a resized terminal: the command's pty too */
	if (cli_child_exited(&r->child) || take_signals(r, &w->handled))
		return true;
	t4_log_stats(r->log, &ls);
	if (ls.error) {
		r->log_failed = true;
		return true;
	}
	/* The scheduler ends --duration itself, on its grid; the main
	 * thread's clock is only a backstop. */
	uint64_t now = t4_mono_raw_ns();
	if (now >= r->host_due_ns && put_host(r) < 0)
		t4_warn("host packet: %s", t4_errmsg()); /* the recording goes on */
	t4_sched_status(r->sched, &st);
	if (w->end && (st.finished || now >= w->end + 1000000000ull)) {
		if (cli_child_running(&r->child) && !r->o.quiet)
			cli_say("--duration reached: stopping '%s' (SIGTERM)", r->o.command[0]);
		cli_child_stop(&r->child);
		return true;
	}
	if (now >= w->next_draw) {
		if (w->show_progress)
			cli_record_progress(r->sched, r->log, r->start_ref_ns, false);
		if (targets_gone(r))
			return true;
		w->next_draw = now + redraw_ns;
	}
	*timeout_ns = w->next_draw > now ? w->next_draw - now : redraw_ns;
	if (r->host_due_ns > now && r->host_due_ns - now < *timeout_ns)
		*timeout_ns = r->host_due_ns - now;
	if (w->end && now >= w->end)
		*timeout_ns = 1000000; /* the final trigger is due any moment */
	else if (w->end && w->end - now < *timeout_ns)
		*timeout_ns = w->end - now;
	return false;
}

static void wait_until_done(struct recording *r, struct waiting *w)
{
	uint64_t timeout;

	while (!recording_over(r, w, &timeout))
		cli_child_nap(&r->child, timeout);
}

/* record --top: the live view asks between its refreshes. */
struct top_wait {
	struct recording *r;
	struct waiting *w;
	bool over;
};

static bool top_over(void *ud)
{
	struct top_wait *tw = ud;
	uint64_t timeout;

	return tw->over || (tw->over = recording_over(tw->r, tw->w, &timeout));
}

static int top_take(void *ud, struct t4_live_snap *out)
{
	return live_take(((struct top_wait *)ud)->r, out);
}

/* The live view on the terminal until the recording is over, or until
 * q: then what was held is shown and the recording goes on as without
 * --top. */
static void wait_with_top(struct recording *r, struct waiting *w)
{
	struct top_wait tw = { .r = r, .w = w };
	struct top tp = { .take = top_take, .done = top_over, .ud = &tw,
			  .interval_ns = 1000000000ull, .keep_signals = true, .in = r->hold.tty };
	bool progress = w->show_progress;
	int fd = fcntl(r->hold.tty, F_DUPFD_CLOEXEC, 3), rc;

	w->show_progress = false; /* the view has the terminal */
	if (fd < 0 || !(tp.out = fdopen(fd, "w")))
		rc = t4_err(errno, "the terminal: %s", strerror(errno));
	else
		rc = cli_top_run(&tp);
	if (tp.out)
		fclose(tp.out);
	else if (fd >= 0)
		close(fd);
	cli_hold_release(&r->hold);
	w->show_progress = progress;
	if (rc < 0 && !r->o.quiet)
		fprintf(stderr, "t410trace: --top: %s (the recording goes on)\n", t4_errmsg());
	if (!tw.over)
		wait_until_done(r, w);
}

static void recording_free(struct recording *r)
{
	cli_child_free(&r->child);
	cli_hold_close(&r->hold); /* its last writers are gone */
	t4_control_close(r->control); /* before r->http, which its status reads */
	t4_live_http_stop(r->http);   /* both before the index they read */
	free(r->live_text);
	t4_live_free(r->live);
	if (r->control_dir[0])
		rmdir(r->control_dir);
	t4_sched_free(r->sched);
	t4_domains_free(&r->domains);
	t4_evlist_free(&r->events);
	cli_target_free(&r->o.target);
	free(r->activity_pids);
	cli_source_close(&r->o.src);
	cli_drm_close(&r->o.drm);
}

/* The log is given its name only with its first chunk (the metadata) on
 * disk: a record killed right after cannot leave an empty FILE next to
 * FILE.old. The writer closes a chunk within chunk_ms (100 ms); 0 (also
 * after 5 s of a disk that slow), or the log's error. */
static int wait_for_first_chunk(struct recording *r)
{
	struct t4_log_stats ls;

	for (int i = 0; i < 5000; i++) {
		t4_log_stats(r->log, &ls);
		if (ls.error)
			return ls.error;
		if (ls.file_bytes)
			return 0;
		usleep(1000);
	}
	return 0;
}

/* Start the scheduler and the command; publish the log once both run.
 * A command that cannot run (or a signal before it could start) leaves
 * the output as it was: r->not_started. */
static int start(struct recording *r)
{
	int rc;

	if ((rc = t4_sched_start(r->sched)) < 0)
		return rc;
	r->ran = true;
	if ((rc = cli_drm_start(&r->o.drm)) < 0)
		return rc;
	if (r->o.command && signals_got) { /* interrupted: don't start it */
		r->not_started = true;
		r->not_started_code = 128 + (int)last_signal; /* as a shell would */
		snprintf(r->why, sizeof(r->why), "interrupted before '%s' started", r->o.command[0]);
		return 0;
	}
	if (r->o.command && (rc = start_command(r)) < 0) {
		r->not_started = true;
		/* 127 or 126 from a child that could not exec, as a shell */
		r->not_started_code = cli_child_exit_code(&r->child);
		if (r->not_started_code == 0)
			r->not_started_code = 1;
		snprintf(r->why, sizeof(r->why), "%s", t4_errmsg());
		return 0;
	}
	/* The DRM scanner learns the command's tree at once, before the wait
	 * for the first chunk: a process it meets first is judged once. */
	int drm = r->o.command ? cli_drm_workload(&r->o.drm, r->child.pid) : 0;
	if (wait_for_first_chunk(r) < 0)
		r->log_failed = true; /* not published: the log's error is said at the end */
	else if ((rc = cli_output_publish(&r->out)) < 0)
		t4_report(rc); /* stranded under its partial name, which is said */
	return drm;
}

/* Close the log with the final totals; 0 or the log's sticky error. */
static int finish_log(struct recording *r, struct t4_sched_status *st, struct t4_log_stats *ls)
{
	struct t4_status_pkt fin = { 0 };
	struct t4_log *log;
	int rc;

	memset(st, 0, sizeof(*st));
	memset(ls, 0, sizeof(*ls));
	if (r->sched)
		t4_sched_status(r->sched, st);
	fin.triggers = st->triggers;
	fin.overruns = st->overruns;
	fin.read_failures = st->read_failures;
	fin.lost_events = st->activity_lost;
	fin.bookmarks_refused = st->bookmarks_refused;
	fin.triggers_refused = st->triggers_refused;
	fin.ref_ns = r->sched ? t4_sched_now(r->sched) : t4_mono_raw_ns();
	pthread_mutex_lock(&r->log_lock); /* no snapshot reads it from here on */
	log = r->log;
	r->log = NULL;
	pthread_mutex_unlock(&r->log_lock);
	rc = log ? t4_log_close(log, &fin, ls) : 0;
	if (rc < 0)
		r->log_failed = true;
	cli_output_drop(&r->out); /* unless it has its name (or was stranded) */
	return rc;
}

/* A failure's message (rc < 0), kept from its first call on: stopping the
 * schedulers and closing the log said their own after it ("the final
 * trigger did not fire", "the log stopped before its first chunk"), which
 * hid the cause (a thread that could not start under ulimit -u). */
static void keep_cause(int rc, char *why, size_t cap)
{
	if (rc < 0 && !why[0])
		snprintf(why, cap, "%s", t4_errmsg());
}

static void summary(struct recording *r, const struct t4_sched_status *st,
		    const struct t4_log_stats *ls, double seconds)
{
	struct cli_record_summary in = {
		.domains = &r->domains,
		.output = cli_output_name(&r->out),
		.period_ns = r->o.period_ns,
		.seconds = seconds,
		.simulated = r->o.src.sim,
		.log_failed = r->log_failed,
		/* a log that never had its name: FILE, if there, is an older one */
		.nothing_kept = r->log_failed &&
				((!r->out.published && !r->out.stranded && !r->out.in_place) ||
				 (r->out.to_stdout && !ls->file_bytes)),
		.fate = cli_record_fate(&r->out),
	};

	cli_record_summary(&in, st, ls);
	/* the writer's index saw the chunks a failed write lost too */
	if (in.nothing_kept)
		;
	else if (closing_index(r) && r->log_failed && r->out.to_stdout)
		fprintf(stderr, "t410trace: no totals: the log stopped early ('t410trace info -' "
				"on what standard output got gives what it holds)\n");
	else if (closing_index(r) && r->log_failed)
		cli_say("no totals: the log stopped early ('t410trace info %s' gives what it holds)",
			cli_output_name(&r->out));
	else if (closing_index(r))
		cli_stat_print(stderr, closing_index(r));
}

/* A signal ended a virtual recording before its --duration: a warning,
 * also with -q (which keeps warnings), since the log then holds less
 * than asked. */
static void virtual_interrupted(const struct t4_sched_status *st, uint64_t duration_ns)
{
	uint64_t grid = st->schedulers ? (st->triggers + st->overruns) / st->schedulers : 0;
	char d1[16], d2[16];

	t4_warn("interrupted: the virtual recording ends early, at %s of virtual time (of %s "
		"asked)",
		t4_fmt_duration(grid > 1 ? (grid - 1) * st->period_ns : 0, d1, sizeof(d1)),
		t4_fmt_duration(duration_ns, d2, sizeof(d2)));
}

/* A virtual recording's log gets its name as a live one's does, once its
 * first chunk is on disk (checked after each trigger until then): a run
 * killed later leaves a named, readable log, not a private directory that
 * the next run writing to FILE would reclaim. */
static void name_when_on_disk(void *ud)
{
	struct recording *r = ud;
	struct t4_log_stats ls;
	int rc;

	if (r->out.published || r->out.stranded || r->out.in_place)
		return;
	t4_log_stats(r->log, &ls);
	if (ls.error || !ls.file_bytes)
		return;
	if ((rc = cli_output_publish(&r->out)) < 0)
		t4_report(rc); /* stranded under its partial name, which is said */
}

/* After each of a --virtual recording's grid points: its log's name, and
 * its progress line every 250 ms, as a live recording's. */
static void virtual_trigger(void *ud)
{
	struct recording *r = ud;
	uint64_t now;

	name_when_on_disk(r);
	r->virt_triggers++;
	if (!r->virt_progress || (now = t4_mono_raw_ns()) < r->virt_next_draw)
		return;
	cli_record_progress_virtual(r->virt_triggers, r->o.period_ns, r->o.duration_ns, r->log,
				    false);
	r->virt_next_draw = now + 250000000ull;
}

/* record --virtual: counters and log as for a live recording, then the
 * whole recording at once (record_virtual.c); the log gets its name once
 * its first chunk is on disk (name_when_on_disk), or at its end. */
static int run_virtual(struct recording *r)
{
	struct cli_virtual_run vr = {
		.v = &r->o.virt, .domains = &r->domains, .period_ns = r->o.period_ns,
		.duration_ns = r->o.duration_ns, .seed = r->o.src.seed,
		.per_socket = r->o.per_socket, .bookmark = r->o.bookmark, .cmdline = r->cmdline,
		.stop = &signals_got, .on_trigger = virtual_trigger, .ud = r,
	};
	struct t4_sched_status st = { 0 };
	struct t4_status_pkt fin;
	struct t4_log_stats ls;
	uint64_t t0 = t4_mono_raw_ns();
	int rc, crc = 0;

	if ((rc = cli_output_prepare(&r->out, r->o.output, r->o.force)) >= 0 &&
	    (rc = setup_counters(r)) >= 0 && (rc = setup_log(r)) >= 0 &&
	    (rc = t4_log_start(r->log)) >= 0) {
		vr.ring = r->meta;
		vr.log = r->log;
		r->virt_progress = progress_wanted(r);
		rc = cli_virtual_record(&vr, &st);
		if (r->virt_progress)
			cli_record_progress_virtual(r->virt_triggers, r->o.period_ns,
						    r->o.duration_ns, r->log, true);
	}
	cli_virtual_final(&st, &fin);
	memset(&ls, 0, sizeof(ls));
	if (r->log)
		crc = t4_log_close(r->log, &fin, &ls);
	r->log = NULL;
	/* The log stopped (a full disk, said by it) with whole chunks on disk:
	 * they are kept and named, as a live recording's are, and the exit is
	 * 1. The unnamed log was dropped, and its "everything before is
	 * intact" with it. */
	r->log_failed = rc == 0 && crc < 0;
	if (rc == 0 && crc < 0)
		rc = crc;
	if (rc != 0 && !(r->log_failed && ls.file_bytes > 0))
		cli_output_drop(&r->out); /* failed: drop the unnamed log */
	else if ((crc = cli_output_publish(&r->out)) < 0)
		t4_report(crc); /* stranded under its partial name, which is said and
				 * summarised: exit 1 (exit_code), as a live recording */
	if (r->log_failed && !ls.file_bytes && !r->o.quiet)
		cli_record_nothing_kept(cli_output_name(&r->out), cli_record_fate(&r->out));
	if ((rc == 0 || (r->log_failed && r->out.published)) && signals_got)
		virtual_interrupted(&st, r->o.duration_ns);
	if ((rc == 0 || (r->log_failed && r->out.published)) && !r->o.quiet) {
		cli_virtual_summary(cli_output_name(&r->out), &r->domains, &st, &ls,
				    (double)(t4_mono_raw_ns() - t0) / 1e9);
		if (r->log_failed)
			cli_say("no totals: the log stopped early ('t410trace info %s' gives what "
				"it holds)", cli_output_name(&r->out));
		else if (closing_index(r))
			cli_stat_print(stderr, closing_index(r));
	}
	return rc;
}

/* CPU and GPU activity: when asked for (not --no-activity) and there is a
 * workload to follow. */
static int activity_opts(struct recording *r, struct t4_activity_opts *po)
{
	int rc = cli_target_processes(&r->o.target, NULL, &r->activity_pids, &r->n_activity_pids);

	po->all = r->o.all_cpus;
	po->pids = r->activity_pids;
	po->n_pids = r->n_activity_pids;
	po->on = !r->o.no_activity && (po->all || po->n_pids || r->o.command);
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
	bool show_progress = progress_wanted(r);
	uint64_t t0 = 0, t_end = 0; /* baseline and final trigger, about */
	char why[512] = ""; /* a failure's message, said at the end */
	int rc, lrc;

	if (r->o.top && cli_hold_start(&r->hold) < 0)
		t4_warn("%s: what else reaches the terminal will show through the view",
			t4_errmsg());
	if ((rc = cli_output_prepare(&r->out, r->o.output, r->o.force)) < 0 ||
	    (rc = control_path(r)) < 0 || (rc = fork_command(r)) < 0 ||
	    (rc = setup_counters(r)) < 0 ||
	    (rc = cli_drm_open(&r->o.drm, r->o.src.sim, r->o.command != NULL, &r->o.target,
				&r->domains)) < 0 ||
	    (rc = setup_log(r)) < 0 || (rc = activity_opts(r, &so.activity)) < 0)
		goto close_log;
	so.domains = &r->domains;
	so.log = r->log;
	if ((rc = t4_sched_create(&r->sched, &so)) < 0 || (rc = t4_log_start(r->log)) < 0 ||
	    (rc = write_metadata(r)) < 0 || (rc = put_host(r)) < 0 ||
	    (rc = setup_metrics(r)) < 0 || (rc = setup_control(r)) < 0)
		goto close_log; /* metrics first: the control thread's status reads r->http */
	cli_record_path_notice(r->sched, r->o.quiet);
	t0 = t4_mono_raw_ns(); /* the baseline trigger: --duration counts from it */
	struct waiting w = { .end = r->o.duration_ns ? t0 + r->o.duration_ns : 0,
			     .show_progress = show_progress };
	if ((rc = start(r)) == 0 && !r->not_started) {
		if (r->o.top)
			wait_with_top(r, &w);
		else
			wait_until_done(r, &w);
	}
	keep_cause(rc, why, sizeof(why));
	if (t4_sched_stop(r->sched) < 0) /* the log holds what came; say what did not */
		t4_warn("%s", t4_errmsg());
	cli_drm_stop(&r->o.drm);
	t_end = t4_mono_raw_ns();
	if (w.end && t_end > w.end) /* the grid ended there; the rest was the command's end */
		t_end = w.end;
	if (put_host(r) < 0)
		t4_warn("host packet: %s", t4_errmsg());
	if (show_progress)
		cli_record_progress(r->sched, r->log, r->start_ref_ns, true);
close_log:
	cli_hold_release(&r->hold); /* the view is over, or never began */
	keep_cause(rc, why, sizeof(why));
	lrc = finish_log(r, &st, &ls);
	if (rc < 0) /* what the stop and the log's close said after it is its consequence */
		t4_err(rc, "%s", why);
	if (r->ran && !r->not_started && !r->o.quiet) {
		summary(r, &st, &ls, t_end > t0 ? (double)(t_end - t0) / 1e9 : 0.0);
		cli_drm_summary(&r->o.drm);
		cli_record_activity_summary(&st);
		cli_record_refusals(&st);
	}
	return rc < 0 ? rc : lrc;
}

/* The exit code once the recording is over: the command's, or the error's.
 * A command that could not run writes no log (exit 126/127, as a shell);
 * one that failed to record waits for the command (a full disk is no
 * reason to kill the user's work). */
static int exit_code(struct recording *r, int rc)
{
	int code;

	if (rc == -EINTR && signals_got && !r->ran) { /* a wait before the start: a FIFO's reader */
		r->not_started = true;
		r->not_started_code = 128 + (int)last_signal; /* as a shell would */
		snprintf(r->why, sizeof(r->why), "interrupted before the recording started");
	}
	if (r->not_started) {
		cli_say("%s; nothing recorded%s%s%s", r->why, r->out.exists ? " (" : "",
			r->out.exists ? r->o.output : "", r->out.exists ? " left as it was)" : "");
		return r->not_started_code;
	}
	if (rc < 0) {
		/* the reader of -o - (or of the FIFO) went away: quietly */
		code = rc == -EPIPE && r->out.in_place ? CLI_EXIT_READER_GONE : t4_report(rc);
		if (!cli_child_running(&r->child) || !r->released)
			return code; /* a command never released exits at once */
		if (!r->o.quiet) /* a notice, not an error: the error was said */
			cli_say("recording stopped; waiting for '%s' to finish", r->o.command[0]);
		cli_child_reap(&r->child);
		return code;
	}
	/* a log stranded under its partial name (said) is no success */
	code = r->out.stranded ? 1 : 0;
	if (!r->o.command)
		return code;
	cli_child_report(&r->child);
	int child = cli_child_exit_code(&r->child);
	return child ? child : code;
}

/* Not this node's recorder (job.c): COMMAND runs as if record were not
 * there (its exit code is the task's), and without one there is nothing
 * to do. Never returns when COMMAND runs. */
static int run_command_only(const struct recording *r)
{
	/* the job ID is the launcher's variable, the host uname's: any bytes
	 * (a line break, an escape sequence) reach the terminal escaped */
	char id[4 * sizeof(r->job.id)], host[4 * sizeof(r->job.host)];

	if (!r->o.command) {
		if (!r->o.quiet)
			fprintf(stderr, "t410trace: not recording in this task (local rank %d of %s's job "
					"%s on %s): the node's first task records (--all-tasks: every "
					"task)\n", r->job.local_rank, r->job.launcher,
				r->job.id[0] ? t4_text(r->job.id, T4_TEXT_CONTROL, id, sizeof(id)) : "-",
				t4_text(r->job.host, T4_TEXT_CONTROL, host, sizeof(host)));
		return 0;
	}
	cli_signals_restore(); /* as if record were not there */
	execvp(r->o.command[0], r->o.command);
	int e = errno;
	cli_say("cannot run '%s': %s", r->o.command[0], strerror(e));
	return e == ENOENT ? 127 : 126;
}

/* Whether paths a and b name one file (which need not exist yet): the
 * same name in the same directory, however written (x, ./x, d/../x). */
static bool names_one_file(const char *a, const char *b)
{
	char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
	char fa[PATH_MAX], fb[PATH_MAX];

	if (!strcmp(a, b))
		return true;
	snprintf(da, sizeof(da), "%s", a);
	snprintf(db, sizeof(db), "%s", b);
	snprintf(fa, sizeof(fa), "%s", a);
	snprintf(fb, sizeof(fb), "%s", b);
	return realpath(dirname(da), ra) && realpath(dirname(db), rb) && !strcmp(ra, rb) &&
	       !strcmp(basename(fa), basename(fb));
}

/* In a job (or not): the output name expanded, refused before anything
 * starts; its directories made when an expansion names them. -1: go on
 * recording; else the exit code (a task that does not record). */
static int job_setup(struct recording *r)
{
	int rc = cli_job_detect(&r->job);

	if (rc == 0)
		rc = cli_job_expand(&r->job, r->o.output, r->o.all_tasks, r->output,
				    sizeof(r->output));
	if (rc < 0)
		return t4_report(rc);
	if (!cli_job_records(&r->job, r->o.all_tasks))
		return run_command_only(r);
	if ((rc = cli_job_make_dirs(r->o.output, r->output, r->made_dir, sizeof(r->made_dir))) < 0)
		return t4_report(rc);
	r->o.output = r->output;
	if (r->o.control && names_one_file(r->o.control, r->o.output))
		return t4_report(t4_err(EINVAL, "-c %s: names the log (-o %s): the control socket "
					"needs a name of its own", r->o.control, r->o.output));
	return -1;
}

/* Counters, rings and every control client take an fd: the soft limit
 * goes up to the hard one (record polls, never select()s); the command
 * gets the limit record was given. */
static void raise_fd_limit(struct cli_child *child)
{
	struct rlimit rl, raised;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	raised = (struct rlimit){ .rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max };
	if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
		cli_child_nofile(child, &rl);
}

int cmd_record(int argc, char **argv)
{
	struct recording r;
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t hold_max;
	int rc;

	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.log_lock, NULL);
	rc = cli_record_parse(argc, argv, &r.o);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (r.o.top && (rc = cli_hold_limit(&hold_max)) < 0)
		return t4_report(rc); /* before job_setup() makes a directory */
	if ((rc = job_setup(&r)) >= 0)
		return rc;
	if (r.o.top && cli_hold_open_tty(&r.hold, hold_max) < 0)
		return cli_usage_error("record", "%s", t4_errmsg());
	join_cmdline(argc, argv, r.cmdline, sizeof(r.cmdline));
	cli_child_init(&r.child, r.o.command, !strcmp(r.o.output, "-"));
	raise_fd_limit(&r.child);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!cli_signal_ignored_at_start(SIGHUP)) /* nohup: record and COMMAND keep on */
		sigaction(SIGHUP, &sa, NULL);
	r.start_ref_ns = t4_mono_raw_ns();
	rc = r.o.virt.on ? run_virtual(&r) : run(&r);
	if (!r.out.published && !r.out.in_place)
		cli_job_drop_dirs(r.output, r.made_dir); /* nothing written: as it was */
	rc = exit_code(&r, rc);
	recording_free(&r);
	pthread_mutex_destroy(&r.log_lock);
	/* The summary could not be written (stderr on a full disk): no one to
	 * tell, but not a success either. */
	if (ferror(stderr) && rc == 0)
		rc = 1;
	return rc;
}
