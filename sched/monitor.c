/* monitor.c - the patent's performance monitors and routers, and the
 * user-space trigger path.
 *
 * A monitor owns the clock domains that live on one CPU. On a trigger it
 * reads each domain with one group read (collector's t4_domain_read) and
 * puts one aggregated return packet per domain into its ring: the router of
 * claim 2 is this loop. Reading on the PMU's own CPU avoids an
 * inter-processor interrupt per read (measured: 1.7 us vs 9.1 us for an
 * 8-counter group).
 *
 * User path (claim 4): each monitor thread, pinned to its CPU, sleeps on
 * the shared absolute grid by itself (FUTEX_WAIT_BITSET on the command word
 * with the next grid point as deadline, 1 ns timer slack) and derives the
 * trigger ID from the grid (bpf/trigger.h): no thread wakes another per
 * trigger. A late monitor answers the point due when it read the clocks
 * (its deltas then cover the points it missed: nothing is lost; a reference
 * packet is never a period or more after its point) and counts the IDs it
 * missed as unanswered triggers (the one name for this in the code, the
 * summary, info and the docs; on a scheduler's CPU they are that
 * scheduler's overruns). The monitor of a scheduler's CPU is that
 * scheduler's thread: it writes the reference packet (and, scheduler 0,
 * the bookmark packets: bookmark.c), then reads its domains. Commands (one
 * trigger, start/stop, the final trigger) wake every thread through the
 * futex; they are rare.
 *
 * sched_monitor_put() is shared with the in-kernel path (kpath.c), whose drain
 * thread forms the same return packets from the BPF records.
 *
 * A domain read by a source of its own (the DRM source: cpu -1) has a
 * monitor of its own (m->sourced), a thread on any CPU at normal priority
 * that follows the same grid on either path (the BPF timers cannot read
 * it); it answers through its source, which puts its packets, metadata
 * found while recording included, into this ring, read windows on the
 * log's reference clock. While its source has nothing to read (no DRM
 * client yet) it rests T4_SOURCE_REST_NS between answers.
 */
#include "sched_internal.h"
#include "util/util.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void sched_futex_wait(_Atomic uint32_t *word, uint32_t expected,
		   uint64_t deadline_mono_ns)
{
	struct timespec ts, *tsp = NULL;

	if (deadline_mono_ns) {
		ts.tv_sec = (time_t)(deadline_mono_ns / 1000000000ull);
		ts.tv_nsec = (long)(deadline_mono_ns % 1000000000ull);
		tsp = &ts;
	}
	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so
	 * the trigger grid never drifts by the time spent computing it. */
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG,
		expected, tsp, NULL, FUTEX_BITSET_MATCH_ANY);
}

void sched_futex_wake(_Atomic uint32_t *word, int n)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n,
		NULL, NULL, 0);
}

/* ---- return packets (both paths) -------------------------------------------- */

/* A read failure of domain i: counted, the first one kept with its
 * reason, for record to say why (a count alone says nothing). */
static void count_failure(struct t4_monitor *m, size_t i, int err)
{
	if (!atomic_load_explicit(&m->read_failures, memory_order_relaxed)) {
		m->first_failure_err = err < 0 ? -err : err;
		m->first_failure_trigger = m->pkt.ret.trigger_id;
		m->first_failure_domain = m->domains[i]->name;
	}
	atomic_fetch_add_explicit(&m->read_failures, 1, memory_order_release);
}

void sched_monitor_put(struct t4_monitor *m, size_t i, uint64_t point_ref_ns, int err)
{
	const struct t4_ret_pkt *ret = &m->pkt.ret;
	uint64_t mid = ret->read_begin_ns + (ret->read_end_ns - ret->read_begin_ns) / 2;

	m->pkt.type = T4_PKT_RET;
	if (err)
		count_failure(m, i, err);
	t4_hist_add(&m->window, ret->read_end_ns - ret->read_begin_ns);
	/* The patent's t1: from the trigger's grid point to the sample. */
	t4_hist_add(&m->skew, mid > point_ref_ns ? mid - point_ref_ns : 0);
	if (i == 0)
		sched_stamps_put(&m->stamps, ret->trigger_id, mid);
	/* A full ring drops and counts the packet inside the log; the domain's
	 * next packet then carries its counts. */
	if (t4_ring_put(m->ring, &m->pkt) == 0)
		atomic_fetch_add_explicit(&m->values, ret->n_counts, memory_order_relaxed);
	else
		t4_domain_unread(m->domains[i]);
}

void sched_monitor_done(struct t4_monitor *m, uint64_t id, uint64_t missed)
{
	m->last = id + 1;
	if (missed)
		atomic_fetch_add_explicit(&m->unanswered, missed, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->answered, 1, memory_order_relaxed);
	atomic_store_explicit(&m->done, id + 1, memory_order_release);
}

/* ---- stamps: when each monitor sampled its recent triggers ---------------------
 *
 * A small ring per monitor indexed by trigger ID (the ID is stored after the
 * time, so a reader that finds the ID finds its time). Scheduler 0 takes the
 * spread between CPUs of trigger k - 1 when it fires trigger k: by then
 * every monitor has had a period to answer, and the slot still holds it. */

void sched_stamps_put(struct t4_stamps *s, uint64_t id, uint64_t ns)
{
	size_t i = id % T4_STAMPS;

	atomic_store_explicit(&s->id[i], 0, memory_order_relaxed);
	atomic_store_explicit(&s->ns[i], ns, memory_order_release);
	atomic_store_explicit(&s->id[i], id + 1, memory_order_release);
}

/* The stamp of trigger id, if s still has it. */
static bool stamp_get(struct t4_stamps *s, uint64_t id, uint64_t *ns)
{
	size_t i = id % T4_STAMPS;

	if (atomic_load_explicit(&s->id[i], memory_order_acquire) != id + 1)
		return false;
	*ns = atomic_load_explicit(&s->ns[i], memory_order_acquire);
	return atomic_load_explicit(&s->id[i], memory_order_acquire) == id + 1;
}

void sched_spread_note(struct t4_hist *h, struct t4_monitor *ms, size_t n, uint64_t id)
{
	uint64_t lo = UINT64_MAX, hi = 0, ns;
	size_t stamped = 0;

	for (size_t i = 0; i < n; i++) {
		if (ms[i].sourced)
			continue; /* a source's reads: no sample instant */
		if (!stamp_get(&ms[i].stamps, id, &ns))
			return; /* a monitor left it unanswered: no sample */
		lo = ns < lo ? ns : lo;
		hi = ns > hi ? ns : hi;
		stamped++;
	}
	if (stamped >= 2)
		t4_hist_add(h, hi - lo);
}

/* ---- the user path ------------------------------------------------------------ */

static int put_in_ring(void *ring, const struct t4_packet *p)
{
	return t4_ring_put(ring, p);
}

/* A domain with a source of its own (DRM) puts its packets itself; its
 * slow reads stay out of the skew and window statistics. */
static void answer_source(struct t4_monitor *m, struct t4_domain *d, uint64_t id)
{
	int n = d->source.answer(d->source.ctx, id, sched_ref_clockid(m->s), put_in_ring,
				 m->ring);

	if (n > 0)
		atomic_fetch_add_explicit(&m->values, (uint64_t)n, memory_order_relaxed);
}

/* Read every domain of m for trigger id (its point at point_ref_ns). */
static void read_domains(struct t4_monitor *m, uint64_t id, uint64_t point_ref_ns)
{
	/* Pinned monitors read on their PMUs' CPU; count where that failed
	 * (a cpuset without the CPU): those reads cost an IPI each. */
	if (m->cpu >= 0 && sched_getcpu() != m->cpu)
		atomic_fetch_add_explicit(&m->off_cpu, 1, memory_order_relaxed);
	for (size_t i = 0; i < m->n_domains; i++) {
		if (m->sourced) {
			answer_source(m, m->domains[i], id);
			continue;
		}
		int err = t4_domain_read(m->domains[i], id, &m->pkt.ret);
		sched_monitor_put(m, i, point_ref_ns, err);
	}
}

/* Answer point p of epoch e (p becomes the point answered). */
static void answer(struct t4_monitor *m, const struct t4_epoch *e, struct t4_point *p)
{
	struct t4_ref_clocks clk;
	struct t4_trigger_bm bm;
	struct t4_point later;

	/* Before the clocks: every bookmark command seen was set before
	 * clk.ref (bookmark.c). */
	bm.id = sched_bookmarks_current(m->s->bm);
	bm.seen = sched_bookmarks_seen(m->s->bm);
	/* The four clocks back to back: they describe one instant. */
	clk.ref = sched_ref_and_mono(m->s, &clk.mono);
	clk.real = t4_clock_ns(CLOCK_REALTIME);
	clk.local = t4_cpu_ticks();
	bm.at_ns = clk.ref;
	/* Preempted since p was chosen, past the next point: the point due at
	 * the clocks is answered, so a reference packet is never a period or
	 * more after its grid point (a preemption of 1.04 ms was seen). */
	if (t4_epoch_answer(e, clk.mono, m->last, &later) && later.id > p->id)
		*p = later;
	uint64_t missed = m->resting ? 0 : p->id - m->last;
	if (m->central)
		sched_central_fire(m->central, p, missed, &bm, &clk);
	/* the grid point on the reference clock: now, less the lateness */
	read_domains(m, p->id, clk.ref - (clk.mono > p->ns ? clk.mono - p->ns : 0));
	sched_monitor_done(m, p->id, missed);
}

/* The next grid point; a source with nothing to answer rests up to
 * T4_SOURCE_REST_NS (but not past the end) and does not count the points
 * it sleeps through as unanswered: it had nothing for them. Commands wake
 * it as they wake every monitor. */
static uint64_t wake_at(struct t4_monitor *m, const struct t4_epoch *e, uint64_t now)
{
	uint64_t next = t4_epoch_next(e, now);
	const struct t4_domain_source *src = m->sourced ? &m->domains[0]->source : NULL;

	m->resting = src && src->idle && next && src->idle(src->ctx);
	if (!m->resting || next >= now + T4_SOURCE_REST_NS)
		return next;
	if (e->end && e->end > now && e->end < now + T4_SOURCE_REST_NS)
		return e->end;
	return now + T4_SOURCE_REST_NS;
}

void *sched_monitor_main(void *arg)
{
	struct t4_monitor *m = arg;
	struct t4_sched *s = m->s;
	struct t4_epoch e;
	struct t4_point p;
	uint64_t now;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (;;) {
		uint32_t cmd = atomic_load_explicit(&s->cmd_seq, memory_order_acquire);

		if (!sched_grid_read(s->grid, &e, &now)) {
			sched_yield(); /* a command is being written */
			continue;
		}
		if (t4_epoch_answer(&e, now, m->last, &p)) {
			answer(m, &e, &p);
			if (p.final)
				break;
		}
		sched_futex_wait(&s->cmd_seq, cmd, wake_at(m, &e, now));
	}
	if (m->central)
		atomic_store_explicit(&m->central->finished, true, memory_order_release);
	return NULL;
}
