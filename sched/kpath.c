/* kpath.c - the in-kernel trigger path: BPF timers fire on the grid and
 * read the counters (bpf/ trigger component); a drain thread here turns
 * their records into the usual reference and return packets.
 *
 * No user-space thread wakes up per trigger: the kernel writes one record
 * per CPU per trigger into its ring buffer without waking anybody, and the
 * drain thread empties it every DRAIN_NS (the ring holds several drains'
 * worth). Each record becomes, through collector's t4_domain_take, exactly
 * the return packets a monitor thread would have made of the same reads
 * (deltas against the domain's previous values, a packet the log's ring
 * refuses carried by the next), and, on a scheduler's CPU, the reference
 * packet: ref_ns and mono_ns are the trigger's grid point (the instant every
 * CPU's timer was set for; the reference clock of this path is
 * CLOCK_MONOTONIC, BPF has no MONOTONIC_RAW), real_ns the REALTIME of that
 * instant (from CLOCK_TAI read in the timer), overruns the IDs the
 * scheduler's CPU skipped.
 *
 * Bookmarks: each bookmark command gets its own packet (set_ns = the
 * command's time). The command stores ID and a command count into the BPF
 * program's global data before it reads set_ns; every record carries both,
 * so the packet's first_trigger is exactly the first trigger of scheduler 0
 * that carries this command's bookmark or a later one.
 */
#include "sched_internal.h"
#include "util/util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DRAIN_NS 50000000ull /* how often the drain thread empties the ring */
#define BM_QUEUE 1024        /* bookmark commands waiting for a trigger */

struct bm_cmd {
	uint32_t id, gen;
	uint64_t set_ns;
	uint64_t first; /* UINT64_MAX until a trigger carried it */
};

struct t4_kpath {
	struct t4_bpf_trigger *trig;
	struct t4_bpf_domain *doms; /* per domain of the set, same order */
	int *fds;
	struct t4_monitor **mon_of; /* per domain: its monitor ... */
	size_t *idx_of;             /* ... and its index there */
	pthread_t thread;
	bool thread_started;
	_Atomic uint32_t wake; /* futex: 1 = the final trigger fired, stop */
	pthread_mutex_t bm_lock;
	struct bm_cmd q[BM_QUEUE];
	size_t q_head, q_n;
	uint32_t bm_gen;
	struct t4_sample sample;
};

/* ---- opening ------------------------------------------------------------------ */

static int describe_domains(struct t4_sched *s, struct t4_kpath *k)
{
	const struct t4_domain_set *ds = s->opts.domains;
	size_t total = 0, at = 0;

	for (size_t i = 0; i < ds->n; i++)
		total += ds->v[i].n;
	k->doms = calloc(ds->n ? ds->n : 1, sizeof(*k->doms));
	k->fds = calloc(total ? total : 1, sizeof(*k->fds));
	k->mon_of = calloc(ds->n ? ds->n : 1, sizeof(*k->mon_of));
	k->idx_of = calloc(ds->n ? ds->n : 1, sizeof(*k->idx_of));
	if (!k->doms || !k->fds || !k->mon_of || !k->idx_of)
		return t4_err(ENOMEM, "out of memory");
	for (size_t i = 0; i < ds->n; i++) {
		const struct t4_domain *d = &ds->v[i];
		k->doms[i] = (struct t4_bpf_domain){ .cpu = d->cpu, .n = d->n, .fds = &k->fds[at] };
		for (size_t c = 0; c < d->n; c++)
			if ((k->fds[at++] = t4_domain_fd(d, c)) < 0)
				return t4_err(EBADF, "%s: not open as perf events", d->name);
	}
	for (size_t m = 0; m < s->n_monitors; m++)
		for (size_t i = 0; i < s->monitors[m].n_domains; i++) {
			size_t di = (size_t)(s->monitors[m].domains[i] - ds->v);
			k->mon_of[di] = &s->monitors[m];
			k->idx_of[di] = i;
		}
	return 0;
}

static void kpath_free(struct t4_kpath *k)
{
	if (!k)
		return;
	t4_bpf_trigger_close(k->trig);
	pthread_mutex_destroy(&k->bm_lock);
	free(k->doms);
	free(k->fds);
	free(k->mon_of);
	free(k->idx_of);
	free(k);
}

int t4_kpath_open(struct t4_sched *s)
{
	struct t4_kpath *k = calloc(1, sizeof(*k));
	int rc;

	if (!k)
		return t4_err(ENOMEM, "out of memory");
	pthread_mutex_init(&k->bm_lock, NULL);
	rc = describe_domains(s, k);
	if (rc == 0) {
		struct t4_bpf_trigger_opts o = {
			.domains = k->doms,
			.n_domains = s->opts.domains->n,
			.period_ns = s->opts.period_ns,
			.drain_ns = DRAIN_NS,
			.verbose = getenv("T410TRACE_BPF_DEBUG") != NULL,
		};
		rc = t4_bpf_trigger_open(&k->trig, &o);
	}
	if (rc < 0) {
		kpath_free(k);
		return rc;
	}
	s->k = k;
	s->grid = t4_bpf_trigger_grid(k->trig);
	return 0;
}

void t4_kpath_close(struct t4_sched *s)
{
	kpath_free(s->k);
	s->k = NULL;
	s->grid = &s->user_grid;
}

/* ---- commands ------------------------------------------------------------------ */

int t4_kpath_kick(struct t4_sched *s)
{
	return t4_bpf_trigger_kick(s->k->trig);
}

uint64_t t4_kpath_fired(const struct t4_sched *s, int cpu)
{
	return t4_bpf_trigger_fired(s->k->trig, cpu);
}

uint64_t t4_kpath_lost(const struct t4_sched *s)
{
	return t4_bpf_trigger_lost(s->k->trig);
}

int t4_kpath_bookmark(struct t4_sched *s, uint32_t id)
{
	struct t4_kpath *k = s->k;
	int rc = 0;

	pthread_mutex_lock(&k->bm_lock);
	if (k->q_n == BM_QUEUE) {
		rc = t4_err(EBUSY, "%d bookmark commands wait for a trigger: fire one first",
			    BM_QUEUE);
	} else {
		struct bm_cmd *c = &k->q[(k->q_head + k->q_n++) % BM_QUEUE];
		c->id = id;
		c->gen = ++k->bm_gen;
		c->first = UINT64_MAX;
		/* stored before set_ns is read: a trigger that fires after set_ns
		 * carries it (or a later one) */
		t4_bpf_trigger_bookmark(k->trig, id, c->gen);
		c->set_ns = t4_clock_ns(CLOCK_MONOTONIC);
	}
	pthread_mutex_unlock(&k->bm_lock);
	return rc;
}

/* Scheduler 0's record carries bookmark command gen: every command up to
 * it has its first trigger, and its packet goes out (a full ring: the
 * next record tries again, with the same first_trigger). */
static void send_bookmarks(struct t4_sched *s, const struct t4_rec *rec)
{
	struct t4_kpath *k = s->k;
	struct central *c = &s->centrals[0];
	struct t4_bookmark_pkt *b = &c->bm_pkt.bookmark;

	pthread_mutex_lock(&k->bm_lock);
	while (k->q_n) {
		struct bm_cmd *q = &k->q[k->q_head];
		if (q->gen > rec->bookmark_gen)
			break;
		if (q->first == UINT64_MAX)
			q->first = rec->trigger_id;
		memset(&c->bm_pkt, 0, sizeof(c->bm_pkt));
		c->bm_pkt.type = T4_PKT_BOOKMARK;
		b->bookmark_id = q->id;
		b->first_trigger = q->first;
		b->set_ns = q->set_ns;
		memcpy(b->name, s->bm->names[q->id - 1], T4_NAME_MAX);
		if (t4_ring_put(c->ring, &c->bm_pkt) < 0)
			break;
		k->q_head = (k->q_head + 1) % BM_QUEUE;
		k->q_n--;
	}
	pthread_mutex_unlock(&k->bm_lock);
}

/* ---- records -> packets ---------------------------------------------------------- */

static void scheduler_record(struct t4_sched *s, struct central *c, const struct t4_bpf_record *r)
{
	const struct t4_rec *rec = r->rec;
	struct t4_point p = { rec->trigger_id, rec->point_ns, rec->flags, rec->final };
	uint64_t late = rec->fire_ns - rec->point_ns;
	struct t4_ref_clocks clk = {
		.ref = rec->point_ns,
		.mono = rec->point_ns,
		.real = r->real_ns - late,
	};

	if (c->id == 0)
		send_bookmarks(s, rec);
	t4_central_fire(c, &p, rec->skipped, rec->bookmark_id, &clk);
	if (rec->final)
		atomic_store_explicit(&c->finished, true, memory_order_release);
}

/* The monitors a record's reads belong to: one, unless the CPU hosts
 * domains of two schedulers (--per-socket: a host domain on the second
 * socket's CPU answers scheduler 0). Returns how many. */
static size_t monitors_of(const struct t4_kpath *k, const struct t4_bpf_record *r,
			  struct t4_monitor **out)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_reads; i++) {
		struct t4_monitor *m = k->mon_of[r->reads[i].domain];
		size_t j = 0;
		while (j < n && out[j] != m)
			j++;
		if (j == n)
			out[n++] = m;
	}
	return n;
}

static void on_record(void *ud, const struct t4_bpf_record *r)
{
	struct t4_sched *s = ud;
	struct t4_kpath *k = s->k;
	struct t4_monitor *mons[T4_BPF_CPU_DOMAINS];
	struct t4_sample *smp = &k->sample;
	const struct t4_rec *rec = r->rec;
	size_t n = monitors_of(k, r, mons);

	for (size_t i = 0; i < n; i++)
		if (mons[i]->central)
			scheduler_record(s, mons[i]->central, r);
	for (size_t i = 0; i < r->n_reads; i++) {
		const struct t4_bpf_read *rd = &r->reads[i];
		struct t4_domain *d = &s->opts.domains->v[rd->domain];
		struct t4_monitor *m = k->mon_of[rd->domain];
		memcpy(smp->v, rd->values, rd->n * sizeof(smp->v[0]));
		smp->enabled = rd->enabled;
		smp->running = rd->running;
		smp->begin = rd->begin_ns;
		smp->end = rd->end_ns;
		int err = t4_domain_take(d, rec->trigger_id, smp, rd->err, &m->pkt.ret);
		t4_monitor_put(m, k->idx_of[rd->domain], rec->point_ns, err);
	}
	for (size_t i = 0; i < n; i++)
		t4_monitor_done(mons[i], rec->trigger_id, rec->skipped);
}

/* Every monitor has its final record drained. */
static bool all_final(struct t4_sched *s)
{
	struct t4_epoch e;
	struct t4_point p;
	uint64_t now;
	size_t done = 0;

	if (!t4_grid_read(s->grid, &e, &now) || !t4_epoch_due(&e, now, &p) || !p.final)
		return false;
	for (size_t i = 0; i < s->n_monitors; i++)
		done += atomic_load(&s->monitors[i].done) > p.id;
	return done == s->n_monitors;
}

/* Drain every DRAIN_NS; once told to quit (the final trigger has fired),
 * drain until every CPU's final record is in (up to 1 s more). */
static void *drain_main(void *arg)
{
	struct t4_sched *s = arg;
	struct t4_kpath *k = s->k;

	for (;;) {
		uint32_t w = atomic_load(&k->wake);
		t4_bpf_trigger_drain(k->trig, on_record, s);
		if (w)
			break;
		t4_futex_wait(&k->wake, 0, t4_clock_ns(CLOCK_MONOTONIC) + DRAIN_NS);
	}
	for (int ms = 0; ms < 1000 && !all_final(s); ms++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
		t4_bpf_trigger_drain(k->trig, on_record, s);
	}
	return NULL;
}

int t4_kpath_start(struct t4_sched *s)
{
	struct t4_kpath *k = s->k;
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&k->thread, NULL, drain_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return t4_err(rc, "cannot start the drain thread: %s", strerror(rc));
	pthread_setname_np(k->thread, "t4-drain");
	k->thread_started = true;
	return 0;
}

void t4_kpath_stop(struct t4_sched *s)
{
	struct t4_kpath *k = s->k;

	if (!k->thread_started)
		return;
	atomic_store(&k->wake, 1);
	t4_futex_wake(&k->wake, 1);
	pthread_join(k->thread, NULL);
	k->thread_started = false;
}
