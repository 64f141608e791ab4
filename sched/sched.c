/* sched.c - the central scheduler(s) of the patent.
 *
 * A scheduler thread fires triggers on an absolute grid t0 + k * period of
 * CLOCK_MONOTONIC (a futex wait with an absolute deadline, 1 ns timer
 * slack, SCHED_FIFO when permitted), so no interval is ever stretched: a
 * wake-up later than a whole period counts the skipped grid points as
 * overruns, reports them in the next reference packet, and keeps the grid.
 * Trigger IDs count the triggers broadcast so far (claim 7), so IDs stay
 * contiguous whatever the overruns.
 *
 * On each trigger the scheduler reads the reference clock (MONOTONIC_RAW)
 * together with MONOTONIC, REALTIME and its own TSC, wakes the monitors of
 * other CPUs, writes the reference packet, and then reads the monitor that
 * shares its CPU itself: one wake-up fewer per trigger.
 *
 * Commands (bookmark, one trigger, start/stop periodic) come from any
 * thread: they update atomics and wake the scheduler's futex. Bookmark
 * commands are queued with their reference time (bookmark.c); scheduler 0
 * writes one bookmark packet per command.
 */
#include "sched_internal.h"
#include "util/util.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

struct central {
	uint32_t id;
	int cpu;
	struct t4_sched *s;
	struct t4_monitor **wake;  /* monitors with their own thread */
	size_t n_wake;
	struct t4_monitor *inline_mon; /* read on this thread; may be NULL */
	struct t4_ring *ring;
	pthread_t thread;
	bool started;
	uint64_t next_id;
	uint64_t prev_ref_ns;
	uint64_t pending_overruns;
	_Atomic uint64_t singles_fired; /* one-trigger commands answered */
	_Atomic bool finished;          /* fired its final trigger */
	_Atomic uint64_t triggers;
	_Atomic uint64_t overruns;
	struct t4_hist latency; /* trigger to last return, ns */
	struct t4_packet pkt;    /* the reference packet being formed */
};

struct t4_sched {
	struct t4_sched_opts opts;
	struct central *centrals;
	size_t n_centrals;
	struct t4_monitor *monitors;
	size_t n_monitors;
	struct t4_bookmarks *bm;

	_Atomic uint32_t cmd_seq;     /* schedulers sleep on this futex */
	_Atomic bool periodic;
	_Atomic uint32_t grid_epoch;  /* bumped by resume: restart the grid */
	_Atomic uint64_t singles;     /* one-trigger commands so far */
	_Atomic bool stopping;
	bool started;
	bool joined; /* t4_sched_stop joined every thread */
	uint64_t start_mono; /* the grid's origin: every scheduler shares it */
	uint64_t end_mono; /* CLOCK_MONOTONIC end of opts.duration_ns, 0 = none */
	bool fifo_notice_done;
};

static uint64_t mono_ns(void)
{
	return t4_clock_ns(CLOCK_MONOTONIC);
}

static void kick(struct t4_sched *s)
{
	atomic_fetch_add(&s->cmd_seq, 1);
	t4_futex_wake(&s->cmd_seq, (int)s->n_centrals);
}

/* ---- building: monitors per (scheduler, CPU) --------------------------- */

static uint32_t central_of(const struct t4_sched *s, const struct t4_domain *d)
{
	return t4_sched_id_of(d, s->opts.per_socket);
}

uint32_t t4_sched_owner(const struct t4_sched *s, const struct t4_domain *d)
{
	return central_of(s, d);
}

static struct t4_monitor *monitor_for(struct t4_sched *s, uint32_t central,
				      int cpu, uint32_t *owner)
{
	for (size_t i = 0; i < s->n_monitors; i++)
		if (owner[i] == central && s->monitors[i].cpu == cpu)
			return &s->monitors[i];
	struct t4_monitor *m = &s->monitors[s->n_monitors];
	owner[s->n_monitors++] = central;
	m->cpu = cpu;
	return m;
}

static int assign_domains(struct t4_sched *s, uint32_t *owner)
{
	struct t4_domain_set *ds = s->opts.domains;

	for (size_t i = 0; i < ds->n; i++) {
		struct t4_domain *d = &ds->v[i];
		uint32_t c = central_of(s, d);
		if (c >= s->n_centrals)
			s->n_centrals = c + 1;
		struct t4_monitor *m = monitor_for(s, c, d->cpu, owner);
		struct t4_domain **nd = realloc(m->domains, (m->n_domains + 1) * sizeof(*nd));
		if (!nd)
			return t4_err(ENOMEM, "out of memory");
		m->domains = nd;
		m->domains[m->n_domains++] = d;
	}
	return 0;
}

/* Ring sizes: room for ~512 triggers of the monitor's packets, at least
 * 1 MiB, so that the writer's idle sleep and a slow chunk never drop. */
static size_t ring_bytes_for(const struct t4_monitor *m)
{
	size_t per = 0;

	for (size_t i = 0; i < m->n_domains; i++)
		per += 96 + 8 * m->domains[i]->n;
	per *= 512;
	return per < (1u << 20) ? (1u << 20) : per;
}

static int make_centrals(struct t4_sched *s, const uint32_t *owner)
{
	s->centrals = calloc(s->n_centrals, sizeof(*s->centrals));
	if (!s->centrals)
		return t4_err(ENOMEM, "out of memory");
	for (size_t c = 0; c < s->n_centrals; c++) {
		struct central *ce = &s->centrals[c];
		ce->id = (uint32_t)c;
		ce->s = s;
		ce->cpu = -1;
		ce->wake = calloc(s->n_monitors ? s->n_monitors : 1, sizeof(*ce->wake));
		if (!ce->wake)
			return t4_err(ENOMEM, "out of memory");
		int rc = t4_log_ring(s->opts.log, 256 << 10, T4_RING_NONBLOCK, &ce->ring);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < s->n_monitors; i++) {
		struct t4_monitor *m = &s->monitors[i];
		struct central *ce = &s->centrals[owner[i]];
		int rc = t4_log_ring(s->opts.log, ring_bytes_for(m), T4_RING_NONBLOCK, &m->ring);
		if (rc < 0)
			return rc;
		/* The scheduler runs on its first monitor's CPU and reads that
		 * monitor itself; an unpinned monitor (a source's own, which
		 * may do I/O) always has a thread of its own. */
		if (!ce->inline_mon && ce->cpu == -1 && m->cpu >= 0) {
			ce->inline_mon = m;
			ce->cpu = m->cpu;
			m->inline_read = true;
		} else {
			ce->wake[ce->n_wake++] = m;
		}
	}
	return 0;
}

int t4_sched_create(struct t4_sched **out, const struct t4_sched_opts *opts)
{
	struct t4_sched *s;
	uint32_t *owner = NULL;
	int rc;

	if (!opts->period_ns)
		return t4_err(EINVAL, "period must be > 0");
	if (!opts->domains || !opts->log)
		return t4_err(EINVAL, "scheduler needs domains and a log");
	s = calloc(1, sizeof(*s));
	if (!s)
		return t4_err(ENOMEM, "out of memory");
	s->opts = *opts;
	s->n_centrals = 1;
	s->monitors = calloc(opts->domains->n ? opts->domains->n : 1, sizeof(*s->monitors));
	owner = calloc(opts->domains->n ? opts->domains->n : 1, sizeof(*owner));
	if (!s->monitors || !owner) {
		rc = t4_err(ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = t4_bookmarks_new(&s->bm)) < 0)
		goto fail;
	atomic_store(&s->periodic, !opts->paused);
	rc = assign_domains(s, owner);
	if (rc == 0)
		rc = make_centrals(s, owner);
	if (rc == 0 && opts->bookmark)
		rc = t4_sched_bookmark(s, opts->bookmark);
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

/* ---- the trigger path ---------------------------------------------------- */

/* Trigger-to-last-return of the previous trigger, measured when the next
 * one fires (the monitors have had a whole period to answer). */
static void note_latency(struct central *c, uint64_t prev_id)
{
	uint64_t last = 0;

	if (c->inline_mon)
		last = atomic_load(&c->inline_mon->done_ns);
	for (size_t i = 0; i < c->n_wake; i++) {
		struct t4_monitor *m = c->wake[i];
		if (atomic_load_explicit(&m->done_trigger, memory_order_acquire) != prev_id)
			return; /* not answered yet: no sample */
		uint64_t d = atomic_load(&m->done_ns);
		if (d > last)
			last = d;
	}
	if (last > c->prev_ref_ns)
		t4_hist_add(&c->latency, last - c->prev_ref_ns);
}

static void fire(struct central *c, uint32_t flags)
{
	struct t4_sched *s = c->s;
	struct t4_ref_pkt *r = &c->pkt.ref;
	uint64_t id = c->next_id++;

	if (id > 0)
		note_latency(c, id - 1);
	/* The four clocks back to back, before any wake-up (a cross-CPU wake
	 * costs tens of microseconds here), so they describe one instant. */
	uint64_t ref = t4_ref_ns();
	r->mono_ns = t4_clock_ns(CLOCK_MONOTONIC);
	r->real_ns = t4_clock_ns(CLOCK_REALTIME);
	r->local_clock = t4_cpu_ticks();
	for (size_t i = 0; i < c->n_wake; i++) {
		struct t4_monitor *m = c->wake[i];
		t4_monitor_publish(m, id, ref);
		atomic_fetch_add_explicit(&m->seq, 1, memory_order_release);
		t4_futex_wake(&m->seq, 1);
	}
	/* Scheduler 0 writes the bookmark packets (before its reference
	 * packet) and carries the last bookmark set before this broadcast. */
	uint32_t bid = c->id == 0 ? t4_bookmarks_on_trigger(s->bm, id, ref, c->ring)
				  : t4_bookmarks_current(s->bm);
	c->pkt.type = T4_PKT_REF;
	r->trigger_id = id;
	r->sched_id = c->id;
	r->ref_ns = ref;
	r->bookmark_id = bid;
	r->flags = flags;
	r->overruns = (uint32_t)(c->pending_overruns > UINT32_MAX ? UINT32_MAX : c->pending_overruns);
	atomic_fetch_add(&c->overruns, c->pending_overruns);
	c->pending_overruns = 0;
	t4_ring_put(c->ring, &c->pkt);
	if (c->inline_mon)
		t4_monitor_answer(c->inline_mon, id, ref);
	c->prev_ref_ns = ref;
	atomic_store_explicit(&c->triggers, id + 1, memory_order_release);
}

/* Wait (bounded) until every monitor answered the final trigger. */
static void wait_answers(struct central *c, uint64_t id)
{
	for (int spins = 0; spins < 20000; spins++) {
		size_t done = 0;
		for (size_t i = 0; i < c->n_wake; i++)
			done += atomic_load(&c->wake[i]->done_trigger) == id &&
				atomic_load(&c->wake[i]->answered) > 0;
		if (done == c->n_wake)
			return;
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
	}
}

static void *central_main(void *arg)
{
	struct central *c = arg;
	struct t4_sched *s = c->s;
	uint64_t period = s->opts.period_ns, t0 = s->start_mono, k = 0;
	uint32_t epoch = atomic_load(&s->grid_epoch);
	uint64_t singles_done = 0; /* also fire those asked for before start */

	t4_pin_to_cpu(c->cpu);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	fire(c, atomic_load(&s->periodic) ? T4_REF_PERIODIC : T4_REF_SINGLE);
	for (;;) {
		uint32_t cmd = atomic_load(&s->cmd_seq);
		if (atomic_load(&s->stopping) || (s->end_mono && mono_ns() >= s->end_mono))
			break;
		uint64_t singles = atomic_load(&s->singles);
		if (singles != singles_done) {
			singles_done++;
			fire(c, T4_REF_SINGLE | T4_REF_COMMAND);
			atomic_store_explicit(&c->singles_fired, singles_done, memory_order_release);
			continue;
		}
		uint32_t ep = atomic_load(&s->grid_epoch);
		if (ep != epoch) { /* periodic (re)started: new grid from now */
			epoch = ep;
			t0 = mono_ns();
			k = 0;
			fire(c, T4_REF_PERIODIC | T4_REF_COMMAND);
			continue;
		}
		if (!atomic_load(&s->periodic)) {
			t4_futex_wait(&s->cmd_seq, cmd, s->end_mono);
			continue;
		}
		/* The duration's end is the last grid point: the final trigger
		 * fires there, whatever the main thread is doing. */
		uint64_t deadline = t0 + (k + 1) * period, now = mono_ns();
		bool last = s->end_mono && deadline >= s->end_mono;
		if (last)
			deadline = s->end_mono;
		if (now < deadline) {
			t4_futex_wait(&s->cmd_seq, cmd, deadline);
			continue;
		}
		uint64_t late = (now - deadline) / period; /* whole slots missed */
		c->pending_overruns += late;
		if (last)
			break;
		k += late + 1;
		fire(c, T4_REF_PERIODIC);
	}
	uint64_t final_id = c->next_id;
	fire(c, T4_REF_FINAL);
	wait_answers(c, final_id);
	note_latency(c, final_id);
	atomic_store_explicit(&c->finished, true, memory_order_release);
	return NULL;
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
	rc = pthread_create(&m->thread, &attr, t4_monitor_main, m);
	pthread_attr_destroy(&attr);
	if (rc == EINVAL && m->cpu >= 0) {
		if (!s->opts.quiet)
			t4_warn("cannot run the monitor of CPU %d there: reading it from "
				"another CPU, slower and with more skew", m->cpu);
		rc = pthread_create(&m->thread, NULL, t4_monitor_main, m);
	}
	if (rc)
		return t4_err(rc, "cannot start a monitor thread: %s", strerror(rc));
	m->thread_started = true;
	return 0;
}

static int start_threads(struct t4_sched *s)
{
	int rc;

	for (size_t i = 0; i < s->n_monitors; i++) {
		struct t4_monitor *m = &s->monitors[i];
		if (m->inline_read)
			continue;
		rc = start_monitor(s, m);
		if (rc)
			return rc;
		if (m->cpu >= 0) /* an unpinned one does I/O: normal priority */
			try_fifo(s, m->thread);
	}
	for (size_t c = 0; c < s->n_centrals; c++) {
		struct central *ce = &s->centrals[c];
		rc = pthread_create(&ce->thread, NULL, central_main, ce);
		if (rc)
			return t4_err(rc, "cannot start a scheduler thread: %s", strerror(rc));
		ce->started = true;
		try_fifo(s, ce->thread);
	}
	return 0;
}

/* On failure the threads already started keep running until
 * t4_sched_stop() (or t4_sched_free()) joins them. */
int t4_sched_start(struct t4_sched *s)
{
	sigset_t all, old;
	int rc;

	if (s->started)
		return t4_err(EALREADY, "scheduler already started");
	s->started = true;
	s->start_mono = mono_ns();
	if (s->opts.duration_ns)
		s->end_mono = s->start_mono + s->opts.duration_ns;
	/* Signals belong to the main thread: the trigger path never runs a
	 * handler. The threads inherit this mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = start_threads(s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int t4_sched_bookmark(struct t4_sched *s, const char *name)
{
	return t4_bookmarks_set(s->bm, name);
}

/* Returns once every scheduler has fired the trigger, so that a caller's
 * next command (a bookmark, typically) applies to later triggers only. */
int t4_sched_trigger(struct t4_sched *s)
{
	uint64_t mine;

	if (atomic_load(&s->stopping))
		return t4_err(ESHUTDOWN, "recording is stopping");
	mine = atomic_fetch_add(&s->singles, 1) + 1;
	kick(s);
	if (!s->started)
		return 0;
	for (int waited_us = 0; waited_us < 1000000; waited_us += 20) {
		size_t done = 0;
		for (size_t c = 0; c < s->n_centrals; c++)
			done += atomic_load_explicit(&s->centrals[c].singles_fired,
						     memory_order_acquire) >= mine;
		if (done == s->n_centrals || atomic_load(&s->stopping))
			return 0;
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
	return t4_err(ETIMEDOUT, "the trigger did not fire within 1 s");
}

int t4_sched_resume(struct t4_sched *s)
{
	if (atomic_exchange(&s->periodic, true))
		return 0; /* already running: keep the grid */
	atomic_fetch_add(&s->grid_epoch, 1);
	kick(s);
	return 0;
}

int t4_sched_pause(struct t4_sched *s)
{
	atomic_store(&s->periodic, false);
	kick(s);
	return 0;
}

void t4_sched_status(struct t4_sched *s, struct t4_sched_status *st)
{
	struct t4_hist window = { 0 };

	memset(st, 0, sizeof(*st));
	st->schedulers = (uint32_t)s->n_centrals;
	st->finished = s->started || s->joined;
	for (size_t c = 0; c < s->n_centrals; c++) {
		st->triggers += atomic_load(&s->centrals[c].triggers);
		st->overruns += atomic_load(&s->centrals[c].overruns);
		st->finished = st->finished && atomic_load(&s->centrals[c].finished);
	}
	for (size_t i = 0; i < s->n_monitors; i++) {
		st->read_failures += atomic_load(&s->monitors[i].read_failures);
		st->unanswered += atomic_load(&s->monitors[i].unanswered);
		st->values += atomic_load(&s->monitors[i].values);
		st->off_cpu += atomic_load(&s->monitors[i].off_cpu);
	}
	st->periodic = atomic_load(&s->periodic);
	st->period_ns = s->opts.period_ns;
	st->bookmark_id = t4_bookmarks_current(s->bm);
	t4_bookmarks_name(s->bm, st->bookmark_id, st->bookmark, sizeof(st->bookmark));
	/* The histograms are written by the threads: read them only once
	 * t4_sched_stop has joined them. */
	if (s->joined) {
		struct t4_hist lat = { 0 }, skew = { 0 };
		for (size_t c = 0; c < s->n_centrals; c++)
			t4_hist_merge(&lat, &s->centrals[c].latency);
		for (size_t i = 0; i < s->n_monitors; i++) {
			t4_hist_merge(&window, &s->monitors[i].window);
			t4_hist_merge(&skew, &s->monitors[i].skew);
		}
		st->skew_p50 = t4_hist_quantile(&skew, 0.5);
		st->skew_p99 = t4_hist_quantile(&skew, 0.99);
		st->skew_max = skew.max;
		st->latency_p50 = t4_hist_quantile(&lat, 0.5);
		st->latency_p99 = t4_hist_quantile(&lat, 0.99);
		st->latency_max = lat.max;
		st->window_p50 = t4_hist_quantile(&window, 0.5);
		st->window_p99 = t4_hist_quantile(&window, 0.99);
		st->window_max = window.max;
	}
}

int t4_sched_stop(struct t4_sched *s)
{
	if (!s->started)
		return 0;
	atomic_store(&s->stopping, true);
	kick(s);
	for (size_t c = 0; c < s->n_centrals; c++)
		if (s->centrals[c].started)
			pthread_join(s->centrals[c].thread, NULL);
	/* Scheduler 0 is gone: its ring is ours for what is still queued. */
	t4_bookmarks_close(s->bm, s->centrals[0].next_id, s->centrals[0].ring);
	for (size_t i = 0; i < s->n_monitors; i++) {
		struct t4_monitor *m = &s->monitors[i];
		if (!m->thread_started)
			continue;
		atomic_store(&m->quit, true);
		atomic_fetch_add(&m->seq, 1); /* so a thread about to sleep sees it */
		t4_futex_wake(&m->seq, 1);
		pthread_join(m->thread, NULL);
		m->thread_started = false;
	}
	s->started = false;
	s->joined = true;
	return 0;
}

void t4_sched_free(struct t4_sched *s)
{
	if (!s)
		return;
	t4_sched_stop(s);
	for (size_t c = 0; s->centrals && c < s->n_centrals; c++)
		free(s->centrals[c].wake);
	for (size_t i = 0; s->monitors && i < s->n_monitors; i++)
		free(s->monitors[i].domains);
	t4_bookmarks_free(s->bm);
	free(s->centrals);
	free(s->monitors);
	free(s);
}
