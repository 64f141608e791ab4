/* sched.c - the central scheduler(s) of the patent.
 *
 * Triggers fall on an absolute grid t0 + k * period of CLOCK_MONOTONIC,
 * and every CPU hosting counters fires on it by itself (monitor.c: a
 * thread per CPU; kpath.c: a BPF timer per CPU), so no interval is ever
 * stretched and no thread wakes another per trigger. A CPU that wakes late
 * answers the point due then and counts the IDs it missed: a scheduler's
 * CPU reports them as overruns in its next reference packet, any other
 * CPU's are unanswered triggers (the next answer's deltas cover them). Trigger IDs come from the grid (bpf/trigger.h): the grid index
 * until the first command, one more per command-fired trigger after it.
 *
 * Commands (one trigger, start/stop periodic, the final trigger) open an
 * epoch of the grid (grid.c: a seqlock any CPU reads without a syscall),
 * then wake the threads (futex) or the BPF timers (one short run of the
 * arming program per CPU) when a trigger must fire now. Bookmark commands
 * are queued with their reference time (bookmark.c, the same on both
 * paths); scheduler 0 writes one bookmark packet per command, its first
 * trigger exact (the BPF path learns of each command through a word of the
 * program's global data that every record copies).
 *
 * The trigger path: T4_TRIGGER_AUTO takes the kernel's when the BPF program
 * loads and every counter can be read there (not the simulator's: they live
 * in user space; not a task's: it moves between CPUs), and otherwise says
 * why in one line.
 */
#include "sched_internal.h"
#include "util/util.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void kick(struct t4_sched *s)
{
	atomic_fetch_add(&s->cmd_seq, 1);
	sched_futex_wake(&s->cmd_seq, INT32_MAX);
}

clockid_t sched_ref_clockid(const struct t4_sched *s)
{
	return s->k ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_RAW;
}

uint64_t t4_sched_now(const struct t4_sched *s)
{
	return t4_clock_ns(sched_ref_clockid(s));
}

const char *t4_sched_path_note(const struct t4_sched *s)
{
	return s->path_note;
}

uint64_t sched_ref_and_mono(const struct t4_sched *s, uint64_t *mono_ns)
{
	uint64_t best_ref = 0, best_mono = 0, best_gap = UINT64_MAX;

	if (sched_ref_clockid(s) == CLOCK_MONOTONIC)
		return *mono_ns = t4_clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < SCHED_PAIR_TRIES && best_gap > SCHED_PAIR_TIGHT_NS; i++) {
		uint64_t r0 = t4_sched_now(s), m = t4_clock_ns(CLOCK_MONOTONIC);
		uint64_t r1 = t4_sched_now(s);
		if (r1 - r0 < best_gap) {
			best_gap = r1 - r0;
			best_ref = r0 + (r1 - r0) / 2;
			best_mono = m;
		}
	}
	*mono_ns = best_mono;
	return best_ref;
}

uint64_t sched_from_mono(const struct t4_sched *s, uint64_t mono_ns)
{
	uint64_t m, r = sched_ref_and_mono(s, &m);

	return mono_ns + r - m;
}

/* ---- building: monitors per (scheduler, CPU) --------------------------- */

/* The monitor of (scheduler, CPU) for domain d; a domain with a source of
 * its own (it may do I/O) gets one of its own. */
static struct t4_monitor *monitor_for(struct t4_sched *s, uint32_t central,
				      const struct t4_domain *d, uint32_t *owner)
{
	bool sourced = d->source.answer != NULL;

	for (size_t i = 0; i < s->n_monitors && !sourced; i++)
		if (owner[i] == central && s->monitors[i].cpu == d->cpu && !s->monitors[i].sourced)
			return &s->monitors[i];
	struct t4_monitor *m = &s->monitors[s->n_monitors];
	owner[s->n_monitors++] = central;
	m->s = s;
	m->cpu = d->cpu;
	m->sourced = sourced;
	return m;
}

static int assign_domains(struct t4_sched *s, uint32_t *owner)
{
	struct t4_domain_set *ds = s->opts.domains;

	for (size_t i = 0; i < ds->n; i++) {
		struct t4_domain *d = &ds->v[i];
		struct t4_monitor *m = monitor_for(s, t4_sched_id_of(d, s->opts.per_socket), d, owner);
		struct t4_domain **nd = realloc(m->domains, (m->n_domains + 1) * sizeof(*nd));
		if (!nd)
			return t4_err(ENOMEM, "out of memory");
		m->domains = nd;
		m->domains[m->n_domains++] = d;
	}
	return 0;
}

/* Ring sizes: room for ~512 triggers of the monitor's return packets, at
 * least 1 MiB, so that the writer's idle sleep and a slow chunk never
 * drop. */
static size_t ring_bytes_for(const struct t4_monitor *m)
{
	struct t4_packet p = { .type = T4_PKT_RET };
	size_t per = 0;

	for (size_t i = 0; i < m->n_domains; i++) {
		p.ret.n_counts = (uint32_t)m->domains[i]->n;
		per += t4_ring_record_bytes(&p);
	}
	per *= 512;
	return per < (1u << 20) ? (1u << 20) : per;
}

/* The scheduler of ID id, or NULL. */
static struct central *central_with(struct t4_sched *s, uint32_t id)
{
	for (size_t c = 0; c < s->n_centrals; c++)
		if (s->centrals[c].id == id)
			return &s->centrals[c];
	return NULL;
}

/* One scheduler per ID that fires, in ID order (sched_ids): the first is
 * "scheduler 0" (the bookmark packets, the spread). */
static int make_central_list(struct t4_sched *s)
{
	uint32_t *ids = calloc(s->opts.domains->n, sizeof(*ids));

	s->centrals = calloc(s->opts.domains->n, sizeof(*s->centrals));
	if (!ids || !s->centrals) {
		free(ids);
		return t4_err(ENOMEM, "out of memory");
	}
	s->n_centrals = sched_ids(s->opts.domains, s->opts.per_socket, ids);
	for (size_t c = 0; c < s->n_centrals; c++)
		s->centrals[c] = (struct central){ .id = ids[c], .s = s, .cpu = -1 };
	free(ids);
	return 0;
}

static int make_centrals(struct t4_sched *s, const uint32_t *owner)
{
	int rc = make_central_list(s);

	for (size_t c = 0; c < s->n_centrals && rc == 0; c++)
		rc = t4_log_ring(s->opts.log, 256 << 10, T4_RING_NONBLOCK, &s->centrals[c].ring);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < s->n_monitors; i++) {
		struct t4_monitor *m = &s->monitors[i];
		struct central *ce = central_with(s, owner[i]);
		rc = t4_log_ring(s->opts.log, ring_bytes_for(m), T4_RING_NONBLOCK, &m->ring);
		if (rc < 0)
			return rc;
		/* The scheduler runs on its first monitor's CPU, as that
		 * monitor's thread (or timer); a source's monitor (which may
		 * do I/O) only when the scheduler has no other. */
		if (!ce->mon || (ce->mon->sourced && !m->sourced)) {
			if (ce->mon)
				ce->mon->central = NULL;
			ce->mon = m;
			ce->cpu = m->cpu;
			m->central = ce;
		}
	}
	return 0;
}

/* The simulator's counters live in user space: only the user path reads
 * them. (A domain with a source of its own has no counters: its monitor
 * runs in user space on either path.) */
static bool has_sim_domains(const struct t4_sched *s)
{
	for (size_t i = 0; i < s->opts.domains->n; i++) {
		const struct t4_domain *d = &s->opts.domains->v[i];
		if (d->n && d->counters[0].pmu && d->counters[0].pmu->simulated)
			return true;
	}
	return false;
}

/* Per-task counters (a command's, -p, -t) count their task on whatever
 * CPU it runs: a CPU's timer can read only counters bound to its CPU. */
static bool has_task_domains(const struct t4_sched *s)
{
	for (size_t i = 0; i < s->opts.domains->n; i++)
		if (s->opts.domains->v[i].tid > 0)
			return true;
	return false;
}

#define TASK_COUNTERS_WHY "per-task counters (the command's, -p's, -t's) follow their " \
	"tasks from CPU to CPU, and a CPU's BPF timer reads only its own CPU's counters"

static int choose_path(struct t4_sched *s)
{
	enum t4_trigger_path want = s->opts.trigger;
	int rc;

	s->grid = &s->user_grid;
	if (want == T4_TRIGGER_USER)
		return 0;
	if (has_sim_domains(s)) {
		if (want == T4_TRIGGER_BPF)
			return t4_err(EINVAL, "the BPF trigger cannot read simulated counters "
				      "(they live in user space)");
		return 0;
	}
	if (has_task_domains(s)) {
		if (want == T4_TRIGGER_BPF)
			return t4_err(EINVAL, "--trigger bpf: %s (-a counts every CPU instead)",
				      TASK_COUNTERS_WHY);
		snprintf(s->path_note, sizeof(s->path_note), "%s", TASK_COUNTERS_WHY);
		return 0;
	}
	rc = sched_kpath_open(s);
	if (rc == 0 || want == T4_TRIGGER_BPF)
		return rc;
	snprintf(s->path_note, sizeof(s->path_note), "%s", t4_errmsg());
	return 0;
}

/* The bookmark queue, on the chosen path's reference clock; the BPF
 * timers are told of each command. */
static int make_bookmarks(struct t4_sched *s)
{
	struct t4_bookmarks_opts o = {
		.clock = sched_ref_clockid(s),
		.publish = s->k ? sched_kpath_bookmark : NULL,
		.ud = s,
	};
	int rc = sched_bookmarks_new(&s->bm, &o);

	if (rc == 0 && s->opts.bookmark)
		rc = sched_bookmarks_set(s->bm, s->opts.bookmark);
	return rc;
}

int t4_sched_create(struct t4_sched **out, const struct t4_sched_opts *opts)
{
	struct t4_sched *s;
	uint32_t *owner = NULL;
	int rc;

	if (!opts->period_ns)
		return t4_err(EINVAL, "period must be > 0");
	if (!opts->domains || !opts->domains->n || !opts->log)
		return t4_err(EINVAL, "scheduler needs domains and a log");
	s = calloc(1, sizeof(*s));
	if (!s)
		return t4_err(ENOMEM, "out of memory");
	s->opts = *opts;
	s->monitors = calloc(opts->domains->n, sizeof(*s->monitors));
	owner = calloc(opts->domains->n, sizeof(*owner));
	pthread_mutex_init(&s->cmd_lock, NULL);
	if (!s->monitors || !owner) {
		rc = t4_err(ENOMEM, "out of memory");
		goto fail;
	}
	atomic_store(&s->periodic, !opts->paused);
	rc = assign_domains(s, owner);
	if (rc == 0)
		rc = make_centrals(s, owner);
	if (rc == 0)
		rc = choose_path(s);
	if (rc == 0)
		rc = make_bookmarks(s);
	if (rc == 0)
		rc = sched_activity_open(s);
	if (rc < 0)
		goto fail;
	free(owner);
	*out = s;
	return 0;
fail:
	free(owner);
	t4_sched_free(s);
	return rc;
}

/* ---- reference packets ------------------------------------------------------ */

int sched_write_trigger(struct t4_bookmarks *b, const struct sched_fire *f,
			struct t4_ring *ring, struct t4_packet *pkt)
{
	/* Scheduler 0 writes the bookmark packets before its reference
	 * packet, and carries the last bookmark this trigger saw. */
	uint32_t bookmark_id = f->zero ? sched_bookmarks_on_trigger(b, f->p.id, &f->bm, ring)
				       : f->bm.id;

	pkt->type = T4_PKT_REF;
	pkt->ref = (struct t4_ref_pkt){
		.trigger_id = f->p.id,
		.sched_id = f->sched_id,
		.bookmark_id = bookmark_id,
		.ref_ns = f->clk.ref,
		.mono_ns = f->clk.mono,
		.real_ns = f->clk.real,
		.local_clock = f->clk.local,
		.flags = f->p.flags,
		.overruns = (uint32_t)(f->missed > UINT32_MAX ? UINT32_MAX : f->missed),
	};
	return t4_ring_put(ring, pkt);
}

void sched_central_fire(struct central *c, const struct t4_point *p, uint64_t missed,
		     const struct t4_trigger_bm *bm, const struct t4_ref_clocks *clk)
{
	struct t4_sched *s = c->s;
	struct sched_fire f = { .sched_id = c->id, .zero = c == &s->centrals[0], .p = *p,
				.missed = missed, .bm = *bm, .clk = *clk };

	if (f.zero && p->id > 0)
		sched_spread_note(&c->spread, s->monitors, s->n_monitors, p->id - 1);
	atomic_fetch_add(&c->overruns, missed);
	c->next_id = p->id + 1;
	sched_write_trigger(s->bm, &f, c->ring, &c->pkt);
	atomic_store_explicit(&c->triggers, atomic_load(&c->triggers) + 1, memory_order_release);
}

/* ---- commands: each opens an epoch of the grid ---------------------------- */

static int command(struct t4_sched *s, uint32_t mode, uint32_t flags0, uint64_t *id0)
{
	struct t4_epoch e = {
		.period = s->opts.period_ns,
		.mode = mode,
		.flags0 = flags0,
		.grid_flags = T4_REF_PERIODIC,
		.end_flags = T4_REF_FINAL,
	};
	int rc = sched_grid_publish(s->grid, &e, s->opts.duration_ns);

	if (rc < 0)
		return rc;
	if (id0)
		*id0 = e.id0;
	if (!(mode & T4_EP_FIRE0))
		return 0; /* nothing fires now: every CPU sees it at its next wake */
	kick(s); /* the threads (on the BPF path: the sources' monitors) */
	return s->k ? sched_kpath_kick(s) : 0;
}

/* The last trigger ID + 1 that scheduler c's CPU answered. */
static uint64_t answered(const struct t4_sched *s, const struct central *c)
{
	if (s->k && !c->mon->sourced)
		return sched_kpath_fired(s, c->cpu);
	return atomic_load_explicit(&c->mon->done, memory_order_acquire);
}

/* How long a command's trigger (and the final one) may take to be answered:
 * a monitor preempted on a loaded machine answers late, not never. */
#define SCHED_ANSWER_WAIT_NS 2000000000ull

/* Wait (up to SCHED_ANSWER_WAIT_NS by the clock: a sleep takes longer than
 * asked, more so on a loaded machine) until every scheduler answered
 * trigger id. */

static int wait_answered(struct t4_sched *s, uint64_t id)
{
	uint64_t deadline = t4_clock_ns(CLOCK_MONOTONIC) + SCHED_ANSWER_WAIT_NS;

	for (;;) {
		size_t done = 0;
		for (size_t c = 0; c < s->n_centrals; c++)
			done += answered(s, &s->centrals[c]) > id;
		if (done == s->n_centrals)
			return 0;
		if (t4_clock_ns(CLOCK_MONOTONIC) >= deadline)
			break;
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
	return t4_err(ETIMEDOUT, "trigger %llu did not fire within 2 s", (unsigned long long)id);
}

static uint32_t periodic_mode(struct t4_sched *s)
{
	return atomic_load(&s->periodic) ? T4_EP_PERIODIC : 0;
}

/* Returns once every scheduler has fired the trigger, so that a caller's
 * next command (a bookmark, typically) applies to later triggers only. */
int t4_sched_trigger(struct t4_sched *s)
{
	uint64_t id;
	int rc;

	if (atomic_load(&s->stopping))
		return t4_err(ESHUTDOWN, "recording is stopping");
	/* a command that came before the grid opened (the control socket
	 * listens from before the start) waits for it */
	for (int ms = 0; !atomic_load(&s->started) && ms < 1000; ms++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	pthread_mutex_lock(&s->cmd_lock);
	if (!atomic_load(&s->started))
		rc = t4_err(EAGAIN, "the recording has not started");
	else
		rc = command(s, T4_EP_FIRE0 | periodic_mode(s), T4_REF_SINGLE | T4_REF_COMMAND, &id);
	pthread_mutex_unlock(&s->cmd_lock);
	return rc < 0 ? rc : wait_answered(s, id);
}

int t4_sched_resume(struct t4_sched *s)
{
	int rc = 0;

	pthread_mutex_lock(&s->cmd_lock);
	if (!atomic_exchange(&s->periodic, true) && atomic_load(&s->started))
		rc = command(s, T4_EP_FIRE0 | T4_EP_PERIODIC, T4_REF_PERIODIC | T4_REF_COMMAND, NULL);
	pthread_mutex_unlock(&s->cmd_lock);
	return rc;
}

int t4_sched_pause(struct t4_sched *s)
{
	int rc = 0;

	pthread_mutex_lock(&s->cmd_lock);
	if (atomic_exchange(&s->periodic, false) && atomic_load(&s->started))
		rc = command(s, 0, 0, NULL);
	pthread_mutex_unlock(&s->cmd_lock);
	return rc;
}

int t4_sched_bookmark(struct t4_sched *s, const char *name)
{
	return sched_bookmarks_set(s->bm, name);
}

/* ---- lifecycle -------------------------------------------------------------- */

static void try_fifo(struct t4_sched *s, pthread_t t)
{
	struct sched_param sp = { .sched_priority = 50 };
	int rc = pthread_setschedparam(t, SCHED_FIFO, &sp);

	if (rc && !s->fifo_notice_done && !s->opts.quiet) {
		fprintf(stderr, "t410trace: notice: SCHED_FIFO not permitted (%s); "
				"triggers run at normal priority\n", strerror(rc));
		s->fifo_notice_done = true;
	}
}

/* Start a monitor thread already pinned to its CPU (so that not even its
 * first read runs elsewhere). A monitor that cannot be pinned (a cpuset
 * without its PMU's CPU) still works, reading from another CPU at the cost
 * of an IPI per read. */
static int start_monitor(struct t4_sched *s, struct t4_monitor *m)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int rc;

	pthread_attr_init(&attr);
	if (m->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(m->cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	rc = pthread_create(&m->thread, &attr, sched_monitor_main, m);
	pthread_attr_destroy(&attr);
	if (rc == EINVAL && m->cpu >= 0) {
		if (!s->opts.quiet)
			t4_warn("cannot run the monitor of CPU %d there: reading it from "
				"another CPU, slower and with more skew", m->cpu);
		rc = pthread_create(&m->thread, NULL, sched_monitor_main, m);
	}
	if (rc)
		return t4_err(rc, "cannot start a monitor thread: %s", strerror(rc));
	char name[16] = "t4-source";
	if (!m->sourced && m->cpu < 0)
		snprintf(name, sizeof(name), "t4-tasks"); /* per-task counters */
	else if (!m->sourced)
		snprintf(name, sizeof(name), "t4-cpu%u", (unsigned)m->cpu & 0xfffffu);
	pthread_setname_np(m->thread, name);
	m->thread_started = true;
	return 0;
}

/* The monitor threads of user space: every monitor on the user path, the
 * sources' monitors on the BPF path. A source's may do I/O: normal
 * priority; the others (pinned to their CPU, or the unpinned one of
 * per-task counters, which follow their tasks) SCHED_FIFO where permitted. */
static int start_threads(struct t4_sched *s)
{
	sigset_t all, old;
	int rc = 0;

	/* Signals belong to the main thread: the trigger path never runs a
	 * handler. The threads inherit this mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (size_t i = 0; i < s->n_monitors && rc == 0; i++) {
		struct t4_monitor *m = &s->monitors[i];
		if (s->k && !m->sourced)
			continue; /* its CPU's BPF timer reads it */
		rc = start_monitor(s, m);
		if (rc == 0 && !m->sourced)
			try_fifo(s, m->thread);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* On failure the threads already started keep running until
 * t4_sched_stop() (or t4_sched_free()) joins them. The threads (or timers)
 * wait for the first epoch, which opens the grid: the baseline trigger 0. */
int t4_sched_start(struct t4_sched *s)
{
	int rc;

	if (atomic_load(&s->started) || s->launched)
		return t4_err(EALREADY, "scheduler already started");
	s->launched = true;
	rc = s->k ? sched_kpath_start(s) : 0;
	if (rc == 0)
		rc = start_threads(s);
	if (rc == 0)
		rc = sched_activity_start(s);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&s->cmd_lock);
	atomic_store(&s->started, true);
	rc = command(s, T4_EP_FIRE0 | periodic_mode(s),
		     periodic_mode(s) ? T4_REF_PERIODIC : T4_REF_SINGLE, NULL);
	pthread_mutex_unlock(&s->cmd_lock);
	return rc;
}

static bool all_finished(const struct t4_sched *s)
{
	for (size_t c = 0; c < s->n_centrals; c++)
		if (!atomic_load_explicit(&s->centrals[c].finished, memory_order_acquire))
			return false;
	return true;
}

void t4_sched_status(struct t4_sched *s, struct t4_sched_status *st)
{
	memset(st, 0, sizeof(*st));
	st->schedulers = (uint32_t)s->n_centrals;
	st->finished = atomic_load(&s->started) && all_finished(s);
	for (size_t c = 0; c < s->n_centrals; c++) {
		st->triggers += atomic_load(&s->centrals[c].triggers);
		st->overruns += atomic_load(&s->centrals[c].overruns);
	}
	for (size_t i = 0; i < s->n_monitors; i++) {
		struct t4_monitor *m = &s->monitors[i];
		uint64_t failures = atomic_load_explicit(&m->read_failures, memory_order_acquire);
		if (failures && (!st->read_failures ||
				 m->first_failure_trigger < st->first_failure_trigger)) {
			st->first_failure_err = m->first_failure_err;
			st->first_failure_trigger = m->first_failure_trigger;
			t4_strlcpy(st->first_failure_domain, m->first_failure_domain,
				   sizeof(st->first_failure_domain));
		}
		st->read_failures += failures;
		st->unanswered += m->central ? 0 : atomic_load(&m->unanswered);
		st->values += atomic_load(&m->values);
		st->off_cpu += atomic_load(&m->off_cpu);
	}
	st->periodic = atomic_load(&s->periodic);
	st->period_ns = s->opts.period_ns;
	st->bpf = s->k != NULL;
	st->lost = s->k ? sched_kpath_lost(s) : 0;
	st->ref_clock = s->k ? T4_REFCLK_MONOTONIC : T4_REFCLK_MONOTONIC_RAW;
	st->bookmarks_refused = sched_bookmarks_refused(s->bm);
	sched_activity_status(s, st);
	st->bookmark_id = sched_bookmarks_current(s->bm);
	sched_bookmarks_name(s->bm, st->bookmark_id, st->bookmark, sizeof(st->bookmark));
	/* The histograms are written by the threads: read them only once
	 * t4_sched_stop has joined them. */
	if (s->joined) {
		struct t4_hist window = { 0 }, skew = { 0 };
		const struct t4_hist *spread = &s->centrals[0].spread;
		for (size_t i = 0; i < s->n_monitors; i++) {
			t4_hist_merge(&window, &s->monitors[i].window);
			t4_hist_merge(&skew, &s->monitors[i].skew);
		}
		st->skew_p50 = t4_hist_quantile(&skew, 0.5);
		st->skew_p99 = t4_hist_quantile(&skew, 0.99);
		st->skew_max = skew.max;
		st->window_p50 = t4_hist_quantile(&window, 0.5);
		st->window_p99 = t4_hist_quantile(&window, 0.99);
		st->window_max = window.max;
		st->spread_p50 = t4_hist_quantile(spread, 0.5);
		st->spread_p99 = t4_hist_quantile(spread, 0.99);
		st->spread_max = spread->max;
	}
}

/* The final trigger, unless --duration's end already fired it (then 0,
 * *id UINT64_MAX); waits up to 2 s for every scheduler's answer. */
static int fire_final(struct t4_sched *s, uint64_t *id)
{
	pthread_mutex_lock(&s->cmd_lock);
	int rc = all_finished(s) ? -ESHUTDOWN
				 : command(s, T4_EP_FIRE0 | T4_EP_FINAL0, T4_REF_FINAL, id);
	pthread_mutex_unlock(&s->cmd_lock);
	if (rc == -ESHUTDOWN) { /* the end came first: it is the final trigger */
		*id = UINT64_MAX;
		return 0;
	}
	return rc < 0 ? rc : wait_answered(s, *id);
}

/* Once every thread is joined: what became of a final trigger that was
 * not answered in time (rc, from fire_final). Late but answered, it is in
 * the log (ETIMEDOUT still: the recording's end came late); unanswered,
 * the log ends at the previous trigger of the schedulers that missed it. */
static int final_missed(struct t4_sched *s, uint64_t id, int rc)
{
	size_t missed = 0, first = 0;

	if (id == UINT64_MAX)
		return t4_err(-rc, "the final trigger did not fire: %s", t4_errmsg());
	for (size_t c = s->n_centrals; c-- > 0;)
		if (answered(s, &s->centrals[c]) <= id)
			missed++, first = c;
	if (!missed)
		return rc == -ETIMEDOUT ? t4_err(ETIMEDOUT, "the final trigger (%llu) was answered "
						 "more than 2 s late", (unsigned long long)id)
					: 0;
	return t4_err(-rc, "the final trigger (%llu) did not fire on %zu of %zu schedulers "
			   "(first: scheduler %u; %s): their counts since their last trigger "
			   "are not in the log", (unsigned long long)id, missed, s->n_centrals,
		      s->centrals[first].id, t4_errmsg());
}

int t4_sched_stop(struct t4_sched *s)
{
	uint64_t final = UINT64_MAX;
	int rc;

	if (!s->launched || s->joined)
		return 0;
	sched_activity_stop(s); /* its last bookmarks and triggers first */
	atomic_store(&s->stopping, true);
	rc = fire_final(s, &final);
	if (s->k)
		sched_kpath_stop(s);
	for (size_t i = 0; i < s->n_monitors; i++) {
		struct t4_monitor *m = &s->monitors[i];
		if (!m->thread_started)
			continue;
		pthread_join(m->thread, NULL);
		m->thread_started = false;
	}
	/* Scheduler 0 is gone: its ring is ours for what is still queued. */
	sched_bookmarks_close(s->bm, s->centrals[0].next_id, s->centrals[0].ring);
	s->joined = true;
	return rc < 0 ? final_missed(s, final, rc) : 0;
}

void t4_sched_free(struct t4_sched *s)
{
	if (!s)
		return;
	t4_sched_stop(s);
	sched_activity_close(s);
	sched_kpath_close(s);
	for (size_t i = 0; s->monitors && i < s->n_monitors; i++)
		free(s->monitors[i].domains);
	sched_bookmarks_free(s->bm);
	pthread_mutex_destroy(&s->cmd_lock);
	free(s->centrals);
	free(s->monitors);
	free(s);
}
