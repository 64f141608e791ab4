// SPDX-License-Identifier: GPL-2.0
/* trigger.bpf.c - the trigger path in the kernel: one BPF timer per CPU
 * hosting counters, all on the same absolute CLOCK_MONOTONIC grid, each
 * reading its own CPU's counters and writing one ring-buffer record per
 * trigger. No user-space thread wakes up per trigger.
 *
 * Program type: timers are refused to tracepoint, kprobe and perf_event
 * programs, and SEC("syscall") programs are sleepable (no perf-event
 * array). A BPF_PROG_TYPE_TRACING program needs no trampoline when it is a
 * map iterator: `arm` below is SEC("iter/bpf_map"), run by user space from a
 * thread pinned to each CPU in turn (bpf_iter_create + read), with no
 * system-wide hook. It acts once per run (at the walk's end, map == NULL):
 * T4_OP_READS reads every counter of its CPU once, T4_OP_TIMER initialises
 * the CPU's timer and tries the flags, T4_OP_ARM makes the timer fire now.
 * The timer callback is verified with `arm`, so it may read perf counters;
 * timers keep running after the iterator's run is over, as long as the
 * maps live.
 *
 * The callback (`tick`) takes the current epoch from the seqlocked global
 * `grid` (written by user space through the mmapped .bss, no syscall),
 * answers the point due now (trigger.h arithmetic: the same IDs on every
 * CPU), and re-arms itself for the next point with BPF_F_TIMER_ABS |
 * BPF_F_TIMER_CPU_PIN, so the grid never drifts and a late timer skips to
 * the next point (the record counts the IDs it missed). Each domain's counters
 * are read with bpf_perf_event_read_value (only this CPU's events can be
 * read: uncore PMUs are opened on their cpumask CPU, which is where this
 * timer runs), bracketed by the clock: the read window. The record goes out
 * with BPF_RB_NO_WAKEUP; user space drains the ring on its own schedule. A
 * record the ring refuses is counted in lost[] and its ID counts as
 * missed, so its counts are carried by the CPU's next record.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "trigger.h"

char LICENSE[] SEC("license") = "GPL";

#define T4_CLOCK_MONOTONIC 1
#define T4_TIMER_ABS (1ULL << 0)     /* BPF_F_TIMER_ABS, Linux 6.7 */
#define T4_TIMER_CPU_PIN (1ULL << 1) /* BPF_F_TIMER_CPU_PIN, Linux 6.8 */
#define T4_EBUSY 16
#define T4_RETRY_NS 20000ULL         /* a command is being written */
#define T4_FINAL_RETRY_NS 1000000ULL /* the final record did not fit */
/* Array indexes the verifier can bound (the limits are powers of two). */
#define CPU_IDX(c) ((c) & (T4_BPF_MAX_CPUS - 1))
#define EV_IDX(e) ((e) & (T4_BPF_MAX_EVENTS - 1))
#define W_IDX(w) ((w) & (T4_BPF_CPU_WORDS - 1))

/* The layout, set by user space before load. */
const volatile struct t4_cpu_layout cpus[T4_BPF_MAX_CPUS];
const volatile __u8 ev_mark[T4_BPF_MAX_EVENTS]; /* T4_EV_* */

/* Written by user space at run time (mmapped .bss). */
struct t4_grid grid;
__u64 bookmark; /* gen << 32 | ID: one store, one load */
__u32 op; /* T4_OP_* of the next run of `arm` */

/* Written here, read by user space. */
__u64 fired[T4_BPF_MAX_CPUS];  /* last trigger ID answered + 1 */
__s64 op_err[T4_BPF_MAX_CPUS]; /* last op on each CPU: 1 done, < 0 error */
__u64 lost[T4_BPF_MAX_CPUS];   /* records the ring buffer refused */

struct tstate {
	struct bpf_timer t;
	__u64 last;  /* last trigger ID written + 1, 0 = none */
	__u32 ready; /* timer initialised */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* set to the number of possible CPUs */
	__type(key, __u32);
	__type(value, struct tstate);
} timers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1); /* set to the number of counters */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* set by user space */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct t4_rec);
} scratch SEC(".maps");

/* A consistent copy of the epoch and the clock read inside the same seqlock
 * window; -1 while a command is being written. */
static __always_inline int read_grid(struct t4_epoch *e, __u64 *now)
{
	for (int i = 0; i < 4; i++) {
		__u64 s1 = __sync_fetch_and_add(&grid.seq, 0);

		if (s1 & 1)
			continue;
		__builtin_memcpy(e, &grid.e, sizeof(*e));
		*now = bpf_ktime_get_ns();
		if (__sync_fetch_and_add(&grid.seq, 0) == s1)
			return 0;
	}
	return -1;
}

/* State of one pass over a CPU's counters (a bpf_loop: the verifier checks
 * the body once, whatever the number of counters). */
struct pass {
	struct t4_rec *r; /* NULL: probe, values not kept */
	__u32 first_ev;
	__u32 w;          /* next free word of r->w */
	__u32 hdr;        /* the current domain's header words */
	__s64 err;        /* the current domain's first read error */
	__s64 first_err;  /* the pass's first read error */
};

/* One counter: a domain's first counter opens its header (begin_ns,
 * enabled, running), its last closes it (end_ns, error). */
static long read_one(__u32 i, struct pass *c)
{
	__u32 ev = c->first_ev + i;
	__u8 mark = ev_mark[EV_IDX(ev)];
	struct bpf_perf_event_value v = {};
	struct t4_rec *r = c->r;
	long e;

	if ((mark & T4_EV_FIRST) && r) {
		c->hdr = c->w;
		c->w += T4_BPF_DOM_HDR;
		c->err = 0;
		r->w[W_IDX(c->hdr)] = bpf_ktime_get_ns();
	}
	e = bpf_perf_event_read_value(&events, ev, &v, sizeof(v));
	if (e && !c->err)
		c->err = e;
	if (e && !c->first_err)
		c->first_err = e;
	if (!r)
		return 0;
	if (mark & T4_EV_FIRST) {
		r->w[W_IDX(c->hdr + 2)] = v.enabled;
		r->w[W_IDX(c->hdr + 3)] = v.running;
	}
	r->w[W_IDX(c->w)] = v.counter;
	c->w++;
	if (mark & T4_EV_LAST) {
		r->w[W_IDX(c->hdr + 1)] = bpf_ktime_get_ns();
		r->w[W_IDX(c->hdr + 4)] = (__u64)c->err;
	}
	return c->w >= T4_BPF_CPU_WORDS; /* 1 stops the loop (never: user space checked) */
}

/* Read every counter of cpu into r (NULL: only try them); first error. */
static __always_inline long read_cpu(__u32 cpu, struct t4_rec *r, __u32 *words)
{
	struct pass c = { .r = r, .first_ev = cpus[CPU_IDX(cpu)].first_ev };
	__u32 n = cpus[CPU_IDX(cpu)].n_ev;

	bpf_loop(n < T4_BPF_CPU_EVENTS ? n : T4_BPF_CPU_EVENTS, read_one, &c, 0);
	*words = c.w;
	return c.first_err;
}

/* Answer point p on this CPU: one record. 0, or -1 when the ring was full. */
static __always_inline int answer(__u32 cpu, struct tstate *st,
				  const struct t4_point *p, __u64 now)
{
	__u32 zero = 0, w = 0;
	struct t4_rec *r = bpf_map_lookup_elem(&scratch, &zero);
	__u64 size, bm;

	if (!r)
		return 0;
	r->trigger_id = p->id;
	r->point_ns = p->ns;
	r->fire_ns = now;
	r->tai_ns = bpf_ktime_get_tai_ns();
	r->missed = p->id - st->last;
	r->cpu = cpu;
	r->flags = p->flags;
	r->final = p->final;
	bm = *(volatile __u64 *)&bookmark;
	r->bookmark_id = (__u32)bm;
	r->bookmark_gen = (__u32)(bm >> 32);
	read_cpu(cpu, r, &w);
	r->n_words = w;
	size = sizeof(*r) - sizeof(r->w) + (__u64)(w & (2 * T4_BPF_CPU_WORDS - 1)) * sizeof(__u64);
	if (size > sizeof(*r))
		size = sizeof(*r);
	if (bpf_ringbuf_output(&rb, r, size, BPF_RB_NO_WAKEUP)) {
		__sync_fetch_and_add(&lost[CPU_IDX(cpu)], 1);
		return -1;
	}
	st->last = p->id + 1;
	fired[CPU_IDX(cpu)] = p->id + 1;
	return 0;
}

static int tick(void *map, __u32 *key, struct tstate *st)
{
	__u32 cpu = *key;
	struct t4_epoch e;
	struct t4_point p;
	__u64 now, next;

	if (read_grid(&e, &now) < 0) {
		bpf_timer_start(&st->t, T4_RETRY_NS, T4_TIMER_CPU_PIN);
		return 0;
	}
	if (t4_epoch_answer(&e, now, st->last, &p)) {
		if (answer(cpu, st, &p, now) < 0 && p.final) {
			bpf_timer_start(&st->t, T4_FINAL_RETRY_NS, T4_TIMER_CPU_PIN);
			return 0;
		}
		if (p.final)
			return 0;
	}
	next = t4_epoch_next(&e, now);
	if (next)
		bpf_timer_start(&st->t, next, T4_TIMER_ABS | T4_TIMER_CPU_PIN);
	return 0;
}

/* Initialise this CPU's timer once and try the flags the grid needs (an
 * absolute, pinned expiry far away, cancelled at once). */
static __always_inline long probe_timer(struct tstate *st)
{
	long err;

	if (st->ready)
		return 0;
	err = bpf_timer_init(&st->t, &timers, T4_CLOCK_MONOTONIC);
	if (err && err != -T4_EBUSY)
		return err;
	err = bpf_timer_set_callback(&st->t, tick);
	if (!err)
		err = bpf_timer_start(&st->t, 1ULL << 62, T4_TIMER_ABS | T4_TIMER_CPU_PIN);
	if (err)
		return err;
	bpf_timer_cancel(&st->t);
	st->ready = 1;
	return 0;
}

/* Make the timer fire now (bpf_timer_cancel dropped its callback). */
static __always_inline long fire_now(struct tstate *st)
{
	long err = bpf_timer_set_callback(&st->t, tick);

	return err ? err : bpf_timer_start(&st->t, 0, T4_TIMER_CPU_PIN);
}

SEC("iter/bpf_map")
int arm(struct bpf_iter__bpf_map *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct tstate *st;
	__u32 words;
	long err;

	if (ctx->map || cpu >= T4_BPF_MAX_CPUS)
		return 0; /* act once per run: at the end of the walk */
	st = bpf_map_lookup_elem(&timers, &cpu);
	if (!st)
		return 0;
	if (op == T4_OP_READS)
		err = read_cpu(cpu, NULL, &words);
	else if (op == T4_OP_TIMER)
		err = probe_timer(st);
	else if (op == T4_OP_ARM && st->ready)
		err = fire_now(st);
	else
		err = -22; /* -EINVAL: unknown op, or ARM before TIMER */
	op_err[CPU_IDX(cpu)] = err ? err : 1;
	return 0;
}
