/* sched_internal.h - shared by sched.c, monitor.c and hist.c only.
 *
 * The broadcast primitive is a futex word per monitor: the scheduler stores
 * the trigger ID, bumps the word and wakes the one waiter. Measured against
 * eventfd and a condition variable by bench/bench_wake.c: the futex is the
 * cheapest (one syscall on each side, no fd, no mutex).
 */
#ifndef T4_SCHED_INTERNAL_H
#define T4_SCHED_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sched.h"
#include "../util/util.h"

/* ---- bookmarks (bookmark.c) ------------------------------------------- */

struct t4_bookmarks;

int t4_bookmarks_new(struct t4_bookmarks **out);
void t4_bookmarks_free(struct t4_bookmarks *b); /* accepts NULL */
/* A bookmark command (any thread): queued with its reference time; fails
 * (message set) for a bad name, a full queue, or after the end. */
int t4_bookmarks_set(struct t4_bookmarks *b, const char *name);
/* Scheduler 0, trigger_id broadcast at ref_ns: the queued bookmarks set
 * before it get it as first_trigger, their packets go into ring (those
 * that do not fit wait for the next trigger). Returns the bookmark ID the
 * trigger carries. */
uint32_t t4_bookmarks_on_trigger(struct t4_bookmarks *b, uint64_t trigger_id,
				 uint64_t ref_ns, struct t4_ring *ring);
/* The last bookmark set (0 = none): what other schedulers carry. */
uint32_t t4_bookmarks_current(const struct t4_bookmarks *b);
void t4_bookmarks_name(struct t4_bookmarks *b, uint32_t id, char *buf, size_t cap);
/* After the final trigger, once scheduler 0 has stopped (its ring is then
 * the caller's): write what is still queued with first_trigger
 * next_trigger (none carries it) and refuse later commands. */
void t4_bookmarks_close(struct t4_bookmarks *b, uint64_t next_trigger, struct t4_ring *ring);

/* ---- futex ------------------------------------------------------------- */

/* Wait while *word == expected, until woken or the absolute
 * CLOCK_MONOTONIC deadline (0 = none). */
void t4_futex_wait(_Atomic uint32_t *word, uint32_t expected,
		   uint64_t deadline_mono_ns);
void t4_futex_wake(_Atomic uint32_t *word, int n);

/* ---- monitors (monitor.c) --------------------------------------------- */

/* One monitor: the domains read on one CPU. When the monitor shares its
 * CPU with a scheduler, that scheduler reads it inline (no extra wake-up);
 * otherwise a thread pinned to the CPU waits for the futex. */
struct t4_monitor {
	int cpu;                  /* -1: any CPU */
	struct t4_domain **domains;
	size_t n_domains;
	struct t4_ring *ring;     /* to the log writer */
	bool inline_read;         /* read by its scheduler's thread */
	pthread_t thread;
	bool thread_started;

	_Atomic uint32_t seq;        /* bumped once per trigger (futex word) */
	_Atomic uint32_t pub;        /* seqlock over trigger_id + ref_ns */
	_Atomic uint64_t trigger_id; /* the trigger to answer */
	_Atomic uint64_t trigger_ref_ns;
	_Atomic bool quit;

	/* written by the reading thread only; read after join / racily for
	 * progress (monotonic counters) */
	_Atomic uint64_t answered;   /* triggers answered */
	_Atomic uint64_t unanswered; /* triggers left unanswered: the next
				      * came first; its answer covers them */
	_Atomic uint64_t read_failures;
	_Atomic uint64_t values;     /* counts put into return packets */
	_Atomic uint64_t off_cpu;    /* answers read on another CPU than cpu */
	_Atomic uint64_t done_trigger;
	_Atomic uint64_t done_ns;    /* read_end of the last domain */
	uint64_t last_seen;          /* reader-private */
	struct t4_hist window;       /* read window per domain, ns */
	struct t4_hist skew;         /* trigger to mid-read per domain, ns */
	struct t4_packet pkt;
	int error;                   /* pinning failure (reported at start) */
};

/* Scheduler side: publish the trigger a monitor must answer, as one unit
 * (a seqlock), so that the monitor never pairs one trigger's ID with
 * another's reference time. */
void t4_monitor_publish(struct t4_monitor *m, uint64_t id, uint64_t ref_ns);
/* Monitor side: the last trigger published, both fields from the same
 * t4_monitor_publish() (spins while the scheduler is between its stores). */
void t4_monitor_read_published(struct t4_monitor *m, uint64_t *id, uint64_t *ref_ns);

/* Read every domain of m for trigger_id (broadcast at reference time
 * ref_ns) and put the return packets. */
void t4_monitor_answer(struct t4_monitor *m, uint64_t trigger_id, uint64_t ref_ns);
/* Thread body for non-inline monitors. */
void *t4_monitor_main(void *arg);
/* Pin the calling thread to cpu (no-op for -1). */
int t4_pin_to_cpu(int cpu);

#endif
