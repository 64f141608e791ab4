/* trigger.h - what the kernel side (trigger.bpf.c) and the user side share:
 * the trigger grid's epochs, the per-CPU layout of the counters, and the
 * record one CPU writes per trigger.
 *
 * The grid (claim 4: every CPU derives the trigger ID itself). Triggers fall
 * on the absolute CLOCK_MONOTONIC grid t0 + k * period. A command (the
 * recording's start, one trigger, start/stop periodic, the final trigger)
 * opens an *epoch*: its point 0 fires at the command's time t_c with ID id0,
 * then, when periodic, every later grid point k fires with ID
 * id0 + k - g(t_c) (g = grid index), and the end of a --duration is the last
 * point. A CPU that wakes at `now` answers the latest point due at `now` and
 * counts the IDs it missed. The first epoch has t_c = t0 and id0 = 0, so
 * trigger ID = grid index until the first command; a command's epoch takes
 * the next ID after every point the previous epoch could have fired, so IDs
 * stay unique, increase in time, and trigger ID - (fired + missed) = 0 on
 * every CPU. The arithmetic below is compiled into both sides, so the kernel
 * timers and the user-space monitor threads agree exactly.
 *
 * Publication is a seqlock (struct t4_grid): the commander makes `seq` odd,
 * reads t_c, writes the epoch and makes `seq` even again. A reader takes
 * `seq`, copies the epoch, reads its clock, and takes `seq` again: equal
 * and even means the copy is whole and no command started before the clock
 * was read, so the point it picks can never carry an ID that the command's
 * epoch hands out too. Both `seq` reads are atomic read-modify-writes on the
 * BPF side (fully ordered on every JIT; BPF has no load-acquire before
 * clang 21).
 *
 * Types are __u32/__u64 only (libbpf-tools habit): the BPF side gets them
 * from vmlinux.h, the user side from <linux/types.h>.
 */
#ifndef T4_BPF_TRIGGER_H
#define T4_BPF_TRIGGER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define T4_BPF_MAX_CPUS 1024    /* CPU numbers the trigger path handles */
#define T4_BPF_MAX_DOMAINS 1024 /* domains over all CPUs */
#define T4_BPF_MAX_EVENTS 8192  /* counters over all CPUs */
#define T4_BPF_DOM_EVENTS 64    /* counters of one domain (T4_MAX_COUNTERS) */
#define T4_BPF_CPU_DOMAINS 64   /* domains read on one CPU */
#define T4_BPF_CPU_EVENTS 1024  /* counters read on one CPU */
#define T4_BPF_CPU_WORDS 2048   /* body words of one CPU's record */
#define T4_BPF_DOM_HDR 5        /* body words before a domain's values */

/* ---- the grid and its epochs ------------------------------------------- */

enum {
	T4_EP_PERIODIC = 1u << 0, /* grid points after point 0 fire */
	T4_EP_FIRE0 = 1u << 1,    /* point 0 fires (not for "stop periodic") */
	T4_EP_FINAL0 = 1u << 2,   /* point 0 is the final trigger */
};

struct t4_epoch {
	__u64 gen;     /* 1, 2, ... per command; 0 = none published yet */
	__u64 id0;     /* trigger ID of point 0 */
	__u64 t_c;     /* CLOCK_MONOTONIC of the command: point 0 */
	__u64 t0;      /* the grid's origin, the same in every epoch */
	__u64 period;  /* the grid's period, ns (> 0) */
	__u64 end;     /* the final trigger's time (--duration), 0 = none */
	__u32 mode;    /* T4_EP_* */
	__u32 flags0;  /* reference flags of point 0 */
	__u32 grid_flags; /* reference flags of the later grid points */
	__u32 end_flags;  /* reference flags of the point at `end` */
};

struct t4_grid {
	__u64 seq; /* odd while a command writes the epoch */
	struct t4_epoch e;
};

/* One trigger point: what a CPU answers. */
struct t4_point {
	__u64 id;
	__u64 ns;     /* its time on CLOCK_MONOTONIC */
	__u32 flags;  /* reference flags */
	__u32 final;  /* the last trigger: stop after answering it */
};

#ifndef T4_INLINE
#define T4_INLINE static inline __attribute__((always_inline))
#endif

/* Grid index of t: the last grid point at or before t. */
T4_INLINE __u64 t4_grid_index(const struct t4_epoch *e, __u64 t)
{
	return t > e->t0 ? (t - e->t0) / e->period : 0;
}

/* Grid points strictly after t_c and strictly before t. */
T4_INLINE __u64 t4_grid_between(const struct t4_epoch *e, __u64 t)
{
	__u64 first = t4_grid_index(e, e->t_c) + 1; /* first point after t_c */
	__u64 up = t > e->t0 ? (t - e->t0 + e->period - 1) / e->period : 0;

	return up > first ? up - first : 0;
}

/* The latest point of e due at now; 0 when none is (nothing fired yet, or
 * the epoch has no point at or before now). */
T4_INLINE int t4_epoch_due(const struct t4_epoch *e, __u64 now, struct t4_point *p)
{
	__u64 fire0 = (e->mode & T4_EP_FIRE0) ? 1 : 0, k, kc;

	if (!e->gen || !e->period || now < e->t_c)
		return 0;
	k = t4_grid_index(e, now);
	kc = t4_grid_index(e, e->t_c);
	if (e->end && now >= e->end && e->end >= e->t_c) {
		p->id = e->id0 + fire0;
		if (e->mode & T4_EP_PERIODIC)
			p->id += t4_grid_between(e, e->end);
		p->ns = e->end;
		p->flags = e->end_flags;
		p->final = 1;
		return 1;
	}
	if ((e->mode & T4_EP_PERIODIC) && k > kc) {
		p->id = e->id0 + fire0 + (k - kc - 1);
		p->ns = e->t0 + k * e->period;
		p->flags = e->grid_flags;
		p->final = 0;
		return 1;
	}
	if (!fire0)
		return 0;
	p->id = e->id0;
	p->ns = e->t_c;
	p->flags = e->flags0;
	p->final = (e->mode & T4_EP_FINAL0) ? 1 : 0;
	return 1;
}

/* The point a CPU answers at now, having answered up to ID last - 1 (last
 * = 0: nothing yet): the latest point due, except that the first epoch's
 * point 0 (the baseline read of every domain) is answered however late.
 * 0 when there is nothing new to answer. */
T4_INLINE int t4_epoch_answer(const struct t4_epoch *e, __u64 now, __u64 last,
			      struct t4_point *p)
{
	if (!t4_epoch_due(e, now, p))
		return 0;
	if (last == 0 && e->gen == 1 && (e->mode & T4_EP_FIRE0) && !p->final) {
		p->id = e->id0;
		p->ns = e->t_c;
		p->flags = e->flags0;
	}
	return p->id + 1 > last;
}

/* When the next point of e after now falls; 0 = none (wait for a command). */
T4_INLINE __u64 t4_epoch_next(const struct t4_epoch *e, __u64 now)
{
	__u64 next = 0;

	if (!e->gen || !e->period || (e->end && now >= e->end && e->end >= e->t_c))
		return 0;
	if (now < e->t_c && (e->mode & T4_EP_FIRE0))
		return e->t_c;
	if (e->mode & T4_EP_PERIODIC)
		next = e->t0 + (t4_grid_index(e, now) + 1) * e->period;
	if (e->end && e->end > now && (!next || e->end < next))
		next = e->end;
	return next;
}

/* The first ID a command published at t may take: one past every point of
 * e at or before t. */
T4_INLINE __u64 t4_epoch_next_id(const struct t4_epoch *e, __u64 t)
{
	struct t4_point p;

	if (!e->gen)
		return 0;
	return t4_epoch_due(e, t, &p) ? p.id + 1 : e->id0;
}

/* ---- the counters' layout (rodata of the BPF program) --------------------- */

/* A CPU's counters are contiguous in the perf-event array, domain after
 * domain; each counter is marked where its domain starts and ends. */
struct t4_cpu_layout {
	__u32 first_ev; /* key of its first counter */
	__u32 n_ev;
	__u32 n_words;  /* body words of this CPU's record */
	__u32 pad;
};

enum {
	T4_EV_FIRST = 1u << 0, /* first counter of a domain */
	T4_EV_LAST = 1u << 1,  /* last counter of a domain */
};

/* ---- commands to the arming program (.bss) --------------------------------- */

enum {
	T4_OP_READS = 1, /* read every counter of this CPU once */
	T4_OP_TIMER = 2, /* init this CPU's timer, try the flags the grid needs */
	T4_OP_ARM = 3,   /* fire this CPU's timer now */
};

/* ---- the record: one per CPU per trigger (the ring buffer) ---------------- */

struct t4_rec {
	__u64 trigger_id;
	__u64 point_ns;    /* the trigger's time (grid point or command) */
	__u64 fire_ns;     /* CLOCK_MONOTONIC when this CPU's timer ran */
	__u64 tai_ns;      /* CLOCK_TAI read right after fire_ns */
	__u64 missed;      /* IDs this CPU missed since its previous record
			    * (overruns on a scheduler's CPU, else
			    * unanswered triggers) */
	__u32 cpu;
	__u32 flags;       /* reference flags of the point */
	__u32 final;
	__u32 bookmark_id; /* the bookmark current when the timer ran ... */
	__u32 bookmark_gen; /* ... and how many bookmark commands set it */
	__u32 n_words;     /* words of w[] that follow */
	/* per domain of the CPU, in layout order: begin_ns, end_ns, enabled,
	 * running (of the domain's first counter), error (0 or the negative
	 * errno of a failed read), then its n_ev counter values */
	__u64 w[T4_BPF_CPU_WORDS];
};

#endif
