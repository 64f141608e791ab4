/* grid.c - the seqlock over the trigger grid's current epoch.
 *
 * One writer at a time (commands hold the scheduler's command lock); any
 * number of readers: the user path's monitor threads here, the BPF timers
 * in the kernel (the same struct, in the program's mmapped .bss, read with
 * the same protocol in trigger.bpf.c). The writer reads t_c after making
 * `seq` odd, so a reader whose window saw one even `seq` read its clock
 * before any later command's t_c: the point it answers is always one the
 * command's next_id accounted for (bpf/trigger.h).
 *
 * The epoch is copied as plain memory between two atomic `seq` accesses,
 * the classic seqlock: a torn copy is never used because `seq` changed.
 */
#include "sched_internal.h"
#include "util/util.h"

#include <errno.h>
#include <string.h>

int sched_grid_publish(struct t4_grid *g, struct t4_epoch *e, uint64_t duration_ns)
{
	const struct t4_epoch *cur = &g->e; /* only this writer changes it */
	uint64_t now;

	__atomic_fetch_add(&g->seq, 1, __ATOMIC_SEQ_CST); /* odd: writing */
	now = t4_clock_ns(CLOCK_MONOTONIC);
	if (cur->gen && cur->end && now >= cur->end && cur->end >= cur->t_c) {
		__atomic_fetch_add(&g->seq, 1, __ATOMIC_SEQ_CST);
		return t4_err(ESHUTDOWN, "the recording's end has passed");
	}
	e->gen = cur->gen + 1;
	e->id0 = t4_epoch_next_id(cur, now);
	e->t_c = now;
	if (cur->gen) {
		e->t0 = cur->t0;
		e->period = cur->period;
		e->end = cur->end;
	} else {
		e->t0 = now;
		e->end = duration_ns ? now + duration_ns : 0;
	}
	memcpy(&g->e, e, sizeof(*e));
	__atomic_fetch_add(&g->seq, 1, __ATOMIC_SEQ_CST); /* even: done */
	return 0;
}

bool sched_grid_read(const struct t4_grid *g, struct t4_epoch *e, uint64_t *now)
{
	uint64_t s1 = __atomic_load_n(&g->seq, __ATOMIC_ACQUIRE);

	if (s1 & 1)
		return false;
	memcpy(e, &g->e, sizeof(*e));
	*now = t4_clock_ns(CLOCK_MONOTONIC);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&g->seq, __ATOMIC_RELAXED) == s1;
}
