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
 * scheduler's CPU missed (other CPUs' missed IDs are unanswered triggers).
 *
 * Bookmarks go through the one queue of both paths (bookmark.c): each
 * command stores its ID and the command count into the BPF program's
 * global data (sched_kpath_bookmark, before its set_ns is read); every record
 * carries both, and scheduler 0's records hand the count to the queue, so
 * each command's packet gets exactly the first trigger of scheduler 0 that
 * carries its bookmark or a later one.
 */
#include "sched_internal.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DRAIN_NS SCHED_DRAIN_NS /* how often the drain thread empties the ring */

struct t4_kpath {
	struct t4_bpf_trigger *trig;
	struct t4_bpf_domain *doms; /* per domain of the set, same order */
	int *fds;
	size_t n_doms;              /* the domains the kernel reads: */
	struct t4_domain **dom_of;  /* each one, by its index in doms, */
	struct t4_monitor **mon_of; /* its monitor ... */
	size_t *idx_of;             /* ... and its index there */
	pthread_t thread;
	bool thread_started;
	_Atomic uint32_t wake; /* futex: 1 = the final trigger fired, stop */
	struct t4_sample sample;
};

/* ---- opening ------------------------------------------------------------------ */

/* Every domain the kernel reads: the domains of every monitor but the
 * sources' (theirs run in user space on the same grid), in monitor order. */
static int describe_domains(struct t4_sched *s, struct t4_kpath *k)
{
	size_t n = s->opts.domains->n, total = 0, at = 0;

	for (size_t i = 0; i < n; i++)
		total += s->opts.domains->v[i].n;
	k->doms = calloc(n, sizeof(*k->doms));
	k->fds = calloc(total ? total : 1, sizeof(*k->fds));
	k->dom_of = calloc(n, sizeof(*k->dom_of));
	k->mon_of = calloc(n, sizeof(*k->mon_of));
	k->idx_of = calloc(n, sizeof(*k->idx_of));
	if (!k->doms || !k->fds || !k->dom_of || !k->mon_of || !k->idx_of)
		return t4_err(ENOMEM, "out of memory");
	for (size_t m = 0; m < s->n_monitors; m++) {
		struct t4_monitor *mon = &s->monitors[m];
		for (size_t i = 0; i < mon->n_domains && !mon->sourced; i++, k->n_doms++) {
			struct t4_domain *d = mon->domains[i];
			k->doms[k->n_doms] = (struct t4_bpf_domain){ .cpu = d->cpu, .n = d->n,
								     .fds = &k->fds[at] };
			k->dom_of[k->n_doms] = d;
			k->mon_of[k->n_doms] = mon;
			k->idx_of[k->n_doms] = i;
			for (size_t c = 0; c < d->n; c++)
				if ((k->fds[at++] = t4_domain_fd(d, c)) < 0)
					return t4_err(EBADF, "%s: not open as perf events", d->name);
		}
	}
	return 0;
}

static void kpath_free(struct t4_kpath *k)
{
	if (!k)
		return;
	t4_bpf_trigger_close(k->trig);
	free(k->doms);
	free(k->fds);
	free(k->dom_of);
	free(k->mon_of);
	free(k->idx_of);
	free(k);
}

int sched_kpath_open(struct t4_sched *s)
{
	struct t4_kpath *k = calloc(1, sizeof(*k));
	int rc;

	if (!k)
		return t4_err(ENOMEM, "out of memory");
	rc = describe_domains(s, k);
	if (rc == 0) {
		struct t4_bpf_trigger_opts o = {
			.domains = k->doms,
			.n_domains = k->n_doms,
			.period_ns = s->opts.period_ns,
			.drain_ns = DRAIN_NS,
			.verbose = t4_env_on("T410TRACE_BPF_DEBUG"),
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

void sched_kpath_close(struct t4_sched *s)
{
	kpath_free(s->k);
	s->k = NULL;
	s->grid = &s->user_grid;
}

/* ---- commands ------------------------------------------------------------------ */

int sched_kpath_kick(struct t4_sched *s)
{
	return t4_bpf_trigger_kick(s->k->trig);
}

uint64_t sched_kpath_fired(const struct t4_sched *s, int cpu)
{
	return t4_bpf_trigger_fired(s->k->trig, cpu);
}

uint64_t sched_kpath_lost(const struct t4_sched *s)
{
	return t4_bpf_trigger_lost(s->k->trig);
}

void sched_kpath_bookmark(void *ud, uint32_t id, uint64_t count)
{
	struct t4_sched *s = ud;

	t4_bpf_trigger_bookmark(s->k->trig, id, (uint32_t)count);
}

/* What a record says of the bookmark commands: the count it carries is
 * the low 32 bits of one near the queue's (at most one command ahead, when
 * that command is between its publish and its queueing): unwrapped
 * against it. */
static struct t4_trigger_bm record_bm(const struct t4_sched *s, const struct t4_rec *rec)
{
	uint64_t queued = sched_bookmarks_seen(s->bm);
	int32_t behind = (int32_t)((uint32_t)queued - rec->bookmark_gen);

	return (struct t4_trigger_bm){
		.seen = (uint64_t)((int64_t)queued - behind),
		.at_ns = rec->fire_ns, /* the timer read the bookmark word after it */
		.id = rec->bookmark_id,
	};
}

/* ---- records -> packets ---------------------------------------------------------- */

static void scheduler_record(struct t4_sched *s, struct central *c, const struct t4_bpf_record *r)
{
	const struct t4_rec *rec = r->rec;
	struct t4_point p = { rec->trigger_id, rec->point_ns, rec->flags, rec->final };
	struct t4_trigger_bm bm = record_bm(s, rec);
	uint64_t late = rec->fire_ns - rec->point_ns;
	struct t4_ref_clocks clk = {
		.ref = rec->point_ns,
		.mono = rec->point_ns,
		.real = r->real_ns - late,
	};

	sched_central_fire(c, &p, rec->missed, &bm, &clk);
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
		struct t4_domain *d = k->dom_of[rd->domain];
		struct t4_monitor *m = k->mon_of[rd->domain];
		memcpy(smp->v, rd->values, rd->n * sizeof(smp->v[0]));
		smp->enabled = rd->enabled;
		smp->running = rd->running;
		smp->begin = rd->begin_ns;
		smp->end = rd->end_ns;
		int err = t4_domain_take(d, rec->trigger_id, smp, rd->err, &m->pkt.ret);
		sched_monitor_put(m, k->idx_of[rd->domain], rec->point_ns, err);
	}
	for (size_t i = 0; i < n; i++)
		sched_monitor_done(mons[i], rec->trigger_id, rec->missed);
}

/* Every monitor has its final record drained. */
static bool all_final(struct t4_sched *s)
{
	struct t4_epoch e;
	struct t4_point p;
	uint64_t now;
	size_t done = 0;

	if (!sched_grid_read(s->grid, &e, &now) || !t4_epoch_due(&e, now, &p) || !p.final)
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
		sched_futex_wait(&k->wake, 0, t4_clock_ns(CLOCK_MONOTONIC) + DRAIN_NS);
	}
	for (int ms = 0; ms < 1000 && !all_final(s); ms++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
		t4_bpf_trigger_drain(k->trig, on_record, s);
	}
	return NULL;
}

int sched_kpath_start(struct t4_sched *s)
{
	struct t4_kpath *k = s->k;
	int rc;

	if ((rc = t4_thread_start(&k->thread, drain_main, s, "t4-drain", "drain thread")) < 0)
		return rc;
	k->thread_started = true;
	return 0;
}

void sched_kpath_stop(struct t4_sched *s)
{
	struct t4_kpath *k = s->k;

	if (!k->thread_started)
		return;
	atomic_store(&k->wake, 1);
	sched_futex_wake(&k->wake, 1);
	pthread_join(k->thread, NULL);
	k->thread_started = false;
}
