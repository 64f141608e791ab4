/* monitor.c - the patent's performance monitors and routers.
 *
 * A monitor owns the clock domains that live on one CPU. On a trigger it
 * reads each domain with one group read (collector's t4_domain_read) and
 * puts one aggregated return packet per domain into its ring: the router of
 * claim 2 is this loop. Reading on the PMU's own CPU avoids an
 * inter-processor interrupt per read (measured: 1.7 us vs 9.1 us for an
 * 8-counter group).
 *
 * A monitor thread waits on its futex word. If the scheduler fires again
 * before the monitor got to the previous trigger, the monitor answers only
 * the newest one (its deltas then cover both intervals: nothing is lost)
 * and counts the older one as an unanswered trigger (the one name for
 * this in the code, the summary, info and the docs).
 *
 * A domain read by a source of its own (the DRM source: cpu -1, so an
 * unpinned monitor of its own) answers through its source, which puts its
 * packets, metadata found while recording included, into this ring.
 */
#include "sched_internal.h"
#include "util/util.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void t4_futex_wait(_Atomic uint32_t *word, uint32_t expected,
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

void t4_futex_wake(_Atomic uint32_t *word, int n)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n,
		NULL, NULL, 0);
}

int t4_pin_to_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return t4_err(errno, "cannot run on CPU %d: %s", cpu, strerror(errno));
	return 0;
}

static int put_in_ring(void *ring, const struct t4_packet *p)
{
	return t4_ring_put(ring, p);
}

/* A domain with a source of its own (DRM) puts its packets itself; its
 * slow reads stay out of the skew and window statistics. */
static uint64_t answer_source(struct t4_monitor *m, struct t4_domain *d,
			      uint64_t trigger_id)
{
	int n = d->source.answer(d->source.ctx, trigger_id, put_in_ring, m->ring);

	if (n > 0)
		atomic_fetch_add_explicit(&m->values, (uint64_t)n, memory_order_relaxed);
	return t4_ref_ns();
}

void t4_monitor_answer(struct t4_monitor *m, uint64_t trigger_id, uint64_t ref_ns)
{
	struct t4_ret_pkt *ret = &m->pkt.ret;
	uint64_t end = 0;

	m->pkt.type = T4_PKT_RET;
	/* Pinned monitors read on their PMUs' CPU; count where that failed
	 * (a cpuset without the CPU): those reads cost an IPI each. */
	if (m->cpu >= 0 && sched_getcpu() != m->cpu)
		atomic_fetch_add_explicit(&m->off_cpu, 1, memory_order_relaxed);
	for (size_t i = 0; i < m->n_domains; i++) {
		if (m->domains[i]->source.answer) {
			end = answer_source(m, m->domains[i], trigger_id);
			continue;
		}
		if (t4_domain_read(m->domains[i], trigger_id, ret) < 0)
			atomic_fetch_add_explicit(&m->read_failures, 1, memory_order_relaxed);
		t4_hist_add(&m->window, ret->read_end_ns - ret->read_begin_ns);
		/* The patent's t1: from the reference time to the sample. */
		uint64_t mid = ret->read_begin_ns + (ret->read_end_ns - ret->read_begin_ns) / 2;
		t4_hist_add(&m->skew, mid > ref_ns ? mid - ref_ns : 0);
		end = ret->read_end_ns;
		/* A full ring drops and counts the packet inside the log; the
		 * domain's next packet then carries its counts. */
		if (t4_ring_put(m->ring, &m->pkt) == 0)
			atomic_fetch_add_explicit(&m->values, ret->n_counts, memory_order_relaxed);
		else
			t4_domain_unread(m->domains[i]);
	}
	atomic_store_explicit(&m->done_ns, end, memory_order_relaxed);
	atomic_store_explicit(&m->done_trigger, trigger_id, memory_order_release);
	atomic_fetch_add_explicit(&m->answered, 1, memory_order_relaxed);
}

void t4_monitor_publish(struct t4_monitor *m, uint64_t id, uint64_t ref_ns)
{
	uint32_t p = atomic_load_explicit(&m->pub, memory_order_relaxed);

	atomic_store_explicit(&m->pub, p + 1, memory_order_relaxed); /* odd: writing */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&m->trigger_ref_ns, ref_ns, memory_order_relaxed);
	atomic_store_explicit(&m->trigger_id, id, memory_order_relaxed);
	atomic_store_explicit(&m->pub, p + 2, memory_order_release);
}

void t4_monitor_read_published(struct t4_monitor *m, uint64_t *id, uint64_t *ref_ns)
{
	for (;;) {
		uint32_t p1 = atomic_load_explicit(&m->pub, memory_order_acquire);
		if (p1 & 1)
			continue; /* the scheduler is between two stores */
		*id = atomic_load_explicit(&m->trigger_id, memory_order_relaxed);
		*ref_ns = atomic_load_explicit(&m->trigger_ref_ns, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&m->pub, memory_order_relaxed) == p1)
			return;
	}
}

void *t4_monitor_main(void *arg)
{
	struct t4_monitor *m = arg;
	uint32_t seen = 0; /* seq starts at 0: answer from the very first bump */
	uint64_t last_id = UINT64_MAX, id, ref_ns;

	for (;;) {
		uint32_t now = atomic_load_explicit(&m->seq, memory_order_acquire);

		if (now == seen) {
			if (atomic_load(&m->quit))
				break;
			t4_futex_wait(&m->seq, seen, 0);
			continue;
		}
		seen = now;
		/* The published trigger may already be newer than the bump
		 * that woke us: answer the newest once, count what it
		 * left unanswered, and skip the bump that announces it. */
		t4_monitor_read_published(m, &id, &ref_ns);
		if (id == last_id)
			continue;
		if (last_id != UINT64_MAX && id > last_id + 1)
			atomic_fetch_add_explicit(&m->unanswered, id - last_id - 1,
						  memory_order_relaxed);
		last_id = id;
		t4_monitor_answer(m, id, ref_ns);
	}
	return NULL;
}
