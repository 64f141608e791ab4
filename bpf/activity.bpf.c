// SPDX-License-Identifier: GPL-2.0
/* activity.bpf.c - what the kernel sees of the workload: its threads on the
 * CPUs, its GPU jobs, and the bookmarks and triggers of libt410trace's
 * probe point, as records in two ring buffers (activity.h).
 *
 * Filtering happens here, so that a busy machine's other tasks cost one
 * map lookup per context switch: `tracked` holds the workload's processes
 * (user space puts in the command's or -p's, sched_process_fork adds the
 * children of tracked ones, the exit of a process's last thread removes
 * it); with `trace_all` (record -a) every task but the idle ones and the
 * recorder's own (`self_tgid`) counts.
 *
 * CPU: sched_switch closes the slice of the thread leaving the CPU (kept
 * per CPU in `oncpu`: switch-in time, pid, tid; PREEMPTED when it leaves
 * runnable) and opens one for the thread arriving. A thread's name goes
 * out when it is first seen and whenever its comm differs from the last
 * one sent (exec, prctl(PR_SET_NAME) seen at the next switch-in); `names`
 * remembers them per thread.
 *
 * GPU: the dma_fence tracepoints are classic ones (their records carry the
 * driver and timeline names, which a BPF program cannot ask the fence's ops
 * for); the GPU scheduler's (gpu_scheduler module) are raw, read with
 * CO-RE through local types, and left out at load where the kernel has
 * none. t4_fence_step (activity.h) decides what each event does.
 *
 * Uprobe: `on_probe` is attached by user space to t410__probe2 in each
 * library a process names in its "hello"; only processes in `uprobe_ok`
 * (those the recorder answered "uprobe") are taken. It stamps the time
 * first, reads the bookmark name from user memory and checks it (control/
 * name.c's rule: a name too long or with another character is refused,
 * never cut), and writes the record into `marks`, a ring of its own; a
 * trigger wakes user space, a bookmark waits for the next drain unless
 * the caller asks for a wake-up. libt410trace makes a call only with a
 * credit from the recorder (control/probe.c), and `marks` has room for all
 * of them: a call the library made is a record. What does not get in (a
 * bad name from a caller that skipped the library's check, a full ring) is
 * counted in `marks_refused` (a trigger: in `triggers_refused`).
 *
 * A record `rb` refuses is counted in `lost` (per CPU).
 *
 * Missed switches: on this project's loaded VM the kernel sometimes does
 * not deliver a sched_switch to the program (no recursion miss counted;
 * about one in a thousand under two spinning loops). A thread switched
 * out with no open slice still gets its slice, its start taken from the
 * scheduler's own run time (START_RUNTIME); a slice left open by a thread
 * whose switch-out was not delivered is counted in `lost`.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "activity.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u32 trace_all = 0;
const volatile __u32 wake_on_bookmark = 0;
const volatile __u32 self_tgid = 0; /* the recorder: never its own workload */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, T4_ACT_MAX_TRACKED);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} tracked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} uprobe_ok SEC(".maps");

struct comm_words {
	__u64 w[T4_ACT_COMM / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct comm_words);
} names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct t4_ph_oncpu);
} oncpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct t4_fence_key);
	__type(value, struct t4_fence);
} fences SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); /* fence context */
	__type(value, __u8);
} contexts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); /* set by user space */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 512 << 10); /* set by user space */
} marks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* A bookmark name as read from the app, longer than a name may be (so
 * that a longer one is seen, never cut). */
struct name_buf {
	char c[T4_ACT_NAME + 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct name_buf);
} scratch SEC(".maps");

/* probe calls not recorded (the mmapped .bss): bookmarks, triggers */
__u64 marks_refused = 0;
__u64 triggers_refused = 0;

/* ---- helpers ------------------------------------------------------------- */

static __always_inline int is_tracked(__u32 tgid)
{
	if (trace_all)
		return tgid != 0 && tgid != self_tgid;
	return bpf_map_lookup_elem(&tracked, &tgid) != NULL;
}

/* A record (or, in on_switch, a slice) that could not be sent. */
static __always_inline void count_lost(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero);

	if (n)
		(*n)++;
}

/* Room for one record of a constant size, or NULL (counted in `lost`). */
static __always_inline void *reserve(__u64 size)
{
	void *r = bpf_ringbuf_reserve(&rb, size, 0);

	if (!r)
		count_lost();
	return r;
}

/* Older kernels call a task's state `state`, newer ones `__state`. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___old *)t, state);
}

/* Send t's name if it is new or changed since the last one sent. */
static __always_inline void note_name(struct task_struct *t, __u64 now)
{
	__u32 tid = t->pid;
	struct comm_words cur = {}, *old;
	struct t4_ph_task *r;

	bpf_probe_read_kernel_str(&cur, sizeof(cur), t->comm);
	old = bpf_map_lookup_elem(&names, &tid);
	if (old && old->w[0] == cur.w[0] && old->w[1] == cur.w[1])
		return;
	r = reserve(sizeof(*r));
	if (!r)
		return; /* tried again at its next switch-in */
	r->type = T4_ACT_TASK;
	r->pid = t->tgid;
	r->tid = tid;
	r->ppid = t->real_parent->tgid;
	r->ns = now;
	__builtin_memcpy(r->comm, &cur, sizeof(r->comm));
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	bpf_map_update_elem(&names, &tid, &cur, BPF_ANY);
}

/* ---- CPU ----------------------------------------------------------------- */

/* The run time of t since it last went on a CPU, by the scheduler's own
 * accounting (updated before sched_switch fires): a switch-out whose
 * switch-in never reached us still has its length. */
static __always_inline __u64 run_since_switch_in(struct task_struct *t)
{
	__u64 sum = BPF_CORE_READ(t, se.sum_exec_runtime);
	__u64 prev = BPF_CORE_READ(t, se.prev_sum_exec_runtime);

	return sum > prev ? sum - prev : 0;
}

static __always_inline void put_cpu_slice(const struct t4_ph_oncpu *oc, __u64 now, __u32 flags)
{
	struct t4_ph_cpu *r = reserve(sizeof(*r));

	if (!r)
		return;
	r->type = T4_ACT_CPU;
	r->cpu = bpf_get_smp_processor_id();
	r->pid = oc->pid;
	r->tid = oc->tid;
	r->start_ns = oc->start_ns;
	r->end_ns = now;
	r->flags = flags;
	r->pad = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 zero = 0;
	struct t4_ph_oncpu *oc = bpf_map_lookup_elem(&oncpu, &zero);
	__u32 flags;

	if (!oc)
		return 0;
	flags = task_state(prev) == 0 ? T4_ACT_PREEMPTED : 0;
	if (oc->tid && oc->tid != (__u32)prev->pid)
		count_lost(); /* oc's thread left unseen: its slice is lost */
	if (oc->tid == (__u32)prev->pid && oc->tid) {
		put_cpu_slice(oc, now, flags);
	} else if (prev->pid && is_tracked(prev->tgid)) {
		/* The kernel did not deliver prev's switch-in (seen on a
		 * loaded VM, with no recursion miss counted). */
		struct t4_ph_oncpu late = { .pid = prev->tgid, .tid = prev->pid };
		__u64 ran = run_since_switch_in(prev);

		late.start_ns = ran < now ? now - ran : 0;
		put_cpu_slice(&late, now, flags | T4_ACT_START_RUNTIME);
	}
	oc->tid = 0;
	if (next->pid && is_tracked(next->tgid)) {
		oc->start_ns = now;
		oc->pid = next->tgid;
		oc->tid = next->pid;
		note_name(next, now);
	}
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (trace_all || ctgid == ptgid)
		return 0; /* everything, or a thread: its process is known */
	if (bpf_map_lookup_elem(&tracked, &ptgid))
		bpf_map_update_elem(&tracked, &ctgid, &one, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	if (is_tracked(p->tgid))
		note_name(p, bpf_ktime_get_ns());
	return 0;
}

/* A process is gone when its last thread exits (signal->live reached 0
 * before this tracepoint); its PID may come back as someone else's. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tid = p->pid, tgid = p->tgid;

	bpf_map_delete_elem(&names, &tid);
	if (BPF_CORE_READ(p, signal, live.counter) == 0) {
		bpf_map_delete_elem(&tracked, &tgid);
		bpf_map_delete_elem(&uprobe_ok, &tgid);
	}
	return 0;
}

/* ---- GPU ------------------------------------------------------------------- */

/* A context's names, the first time one of its fences is the workload's. */
static __always_inline void note_context(__u64 context, struct trace_event_raw_dma_fence *tp)
{
	__u32 drv = tp->__data_loc_driver, tl = tp->__data_loc_timeline;
	__u8 one = 1;
	struct t4_ph_ctx *r;

	if (bpf_map_lookup_elem(&contexts, &context))
		return;
	r = reserve(sizeof(*r));
	if (!r)
		return;
	r->type = T4_ACT_GPU_CTX;
	r->pad = 0;
	r->context = context;
	r->driver[0] = r->timeline[0] = '\0';
	bpf_probe_read_kernel_str(r->driver, sizeof(r->driver), (void *)tp + (drv & 0xffff));
	bpf_probe_read_kernel_str(r->timeline, sizeof(r->timeline), (void *)tp + (tl & 0xffff));
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	bpf_map_update_elem(&contexts, &context, &one, BPF_ANY);
}

static __always_inline void put_gpu_slice(const struct t4_fence_key *k, const struct t4_fence *f,
					  __u64 now)
{
	struct t4_ph_gpu *r = reserve(sizeof(*r));

	if (!r)
		return;
	r->type = T4_ACT_GPU;
	r->pid = f->pid;
	r->tid = f->tid;
	r->flags = f->flags;
	r->context = k->context;
	r->seqno = k->seqno;
	r->start_ns = f->start_ns;
	r->end_ns = now > f->start_ns ? now : f->start_ns;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* Event ev on fence k; tp (a dma_fence tracepoint's record, or NULL)
 * names its context. */
static __always_inline void fence_event(int ev, const struct t4_fence_key *k,
					struct trace_event_raw_dma_fence *tp)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	struct t4_fence f = {}, *cur = bpf_map_lookup_elem(&fences, k);
	int tracked = (ev == T4_FEV_INIT || ev == T4_FEV_QUEUE) && is_tracked(id >> 32);

	if (cur)
		f = *cur;
	switch (t4_fence_step(ev, cur != 0, tracked, &f, now, id >> 32, (__u32)id)) {
	case T4_FA_PUT:
		bpf_map_update_elem(&fences, k, &f, BPF_ANY);
		if (!cur && tp)
			note_context(k->context, tp);
		break;
	case T4_FA_SLICE:
		put_gpu_slice(k, &f, now);
		bpf_map_delete_elem(&fences, k);
		break;
	case T4_FA_DELETE:
		bpf_map_delete_elem(&fences, k);
		break;
	}
}

static __always_inline int dma_fence_event(int ev, struct trace_event_raw_dma_fence *tp)
{
	struct t4_fence_key k = { .context = tp->context, .seqno = tp->seqno };

	fence_event(ev, &k, tp);
	return 0;
}

SEC("tp/dma_fence/dma_fence_init")
int on_fence_init(struct trace_event_raw_dma_fence *tp)
{
	return dma_fence_event(T4_FEV_INIT, tp);
}

SEC("tp/dma_fence/dma_fence_emit")
int on_fence_emit(struct trace_event_raw_dma_fence *tp)
{
	return dma_fence_event(T4_FEV_EMIT, tp);
}

SEC("tp/dma_fence/dma_fence_signaled")
int on_fence_signaled(struct trace_event_raw_dma_fence *tp)
{
	return dma_fence_event(T4_FEV_DONE, tp);
}

SEC("tp/dma_fence/dma_fence_destroy")
int on_fence_destroy(struct trace_event_raw_dma_fence *tp)
{
	return dma_fence_event(T4_FEV_FORGET, tp);
}

/* The GPU scheduler's types live in its module (gpu_sched): local
 * flavours, relocated against the running kernel's BTF at load. */
struct drm_sched_fence___t4 {
	struct dma_fence scheduled;
	struct dma_fence finished;
} __attribute__((preserve_access_index));

struct drm_sched_job___t4 {
	struct drm_sched_fence___t4 *s_fence;
} __attribute__((preserve_access_index));

/* A scheduler job's "scheduled" fence marks its start, not a job: it is
 * forgotten; its "finished" fence is the job. */
static __always_inline void sched_fence_event(int ev, struct drm_sched_fence___t4 *sf)
{
	struct t4_fence_key sched = {
		.context = BPF_CORE_READ(sf, scheduled.context),
		.seqno = BPF_CORE_READ(sf, scheduled.seqno),
	};
	struct t4_fence_key fin = {
		.context = BPF_CORE_READ(sf, finished.context),
		.seqno = BPF_CORE_READ(sf, finished.seqno),
	};

	if (ev != T4_FEV_DONE)
		fence_event(T4_FEV_FORGET, &sched, 0);
	fence_event(ev, &fin, 0);
}

SEC("raw_tp/drm_sched_job")
int BPF_PROG(on_sched_job, struct drm_sched_job___t4 *job)
{
	sched_fence_event(T4_FEV_QUEUE, BPF_CORE_READ(job, s_fence));
	return 0;
}

SEC("raw_tp/drm_run_job")
int BPF_PROG(on_run_job, struct drm_sched_job___t4 *job)
{
	sched_fence_event(T4_FEV_RUN, BPF_CORE_READ(job, s_fence));
	return 0;
}

SEC("raw_tp/drm_sched_process_job")
int BPF_PROG(on_job_done, struct drm_sched_fence___t4 *sf)
{
	sched_fence_event(T4_FEV_DONE, sf);
	return 0;
}

/* ---- the probe point of libt410trace ------------------------------------ */

/* t410__probe2(int op, const char *name): its two arguments. struct
 * user_pt_regs is arm64's UAPI (stable), and a vmlinux.h made on another
 * architecture lacks it: a copy of our own, under our own name. */
#if defined(__TARGET_ARCH_arm64)
struct t4_arm64_regs {
	__u64 regs[31];
	__u64 sp, pc, pstate;
};
#define PROBE_ARG1(ctx) (((const struct t4_arm64_regs *)(ctx))->regs[0])
#define PROBE_ARG2(ctx) (((const struct t4_arm64_regs *)(ctx))->regs[1])
#elif defined(__TARGET_ARCH_x86)
#define PROBE_ARG1(ctx) ((ctx)->di)
#define PROBE_ARG2(ctx) ((ctx)->si)
#else
#error "activity.bpf.c: the probe's arguments on this architecture: add them here"
#endif

/* The bookmark name at user address name into b: whether it is a name
 * (readable, 1 to T4_ACT_NAME - 1 characters of the rule's). */
static __always_inline int read_name(const char *name, struct name_buf *b)
{
	long n = bpf_probe_read_user_str(b->c, T4_ACT_NAME + 1, name);

	if (n < 2 || n > T4_ACT_NAME)
		return 0;
	for (int i = 0; i < T4_ACT_NAME; i++) {
		if (!b->c[i])
			break;
		if (!t4_ph_name_char(b->c[i]))
			return 0;
	}
	return 1;
}

SEC("uprobe")
int on_probe(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, op = (__u32)PROBE_ARG1(ctx), zero = 0;
	const char *name = (const char *)PROBE_ARG2(ctx);
	int bm = (op & 0xff) == T4_ACT_PROBE_BOOKMARK;
	struct name_buf *b = NULL;
	struct t4_ph_mark *r;

	if (!bpf_map_lookup_elem(&uprobe_ok, &tgid))
		return 0; /* not told to use the probe: another recorder's process */
	if (bm && (!(b = bpf_map_lookup_elem(&scratch, &zero)) || !read_name(name, b)))
		goto refused;
	r = bpf_ringbuf_reserve(&marks, sizeof(*r), 0);
	if (!r)
		goto refused;
	r->type = bm ? T4_ACT_BOOKMARK : T4_ACT_TRIGGER;
	r->pid = tgid;
	r->tid = (__u32)id;
	r->pad = 0;
	r->ns = now;
	__builtin_memset(r->name, 0, sizeof(r->name));
	if (b)
		__builtin_memcpy(r->name, b->c, sizeof(r->name) - 1);
	/* A trigger must fire now: wake the drain. A bookmark carries its own
	 * time and waits for the next drain (or a trigger's wake-up): the
	 * decoder places it by that time when it reaches the log within its
	 * lag, and the app pays no cross-CPU wake-up per bookmark. Periods
	 * under 1 ms (a lag of fewer triggers than a drain's wait) wake, and so
	 * does a caller that found the credits running low. */
	bpf_ringbuf_submit(r, !bm || wake_on_bookmark || (op & T4_ACT_PROBE_WAKE)
				      ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
refused:
	__sync_fetch_and_add(bm ? &marks_refused : &triggers_refused, 1);
	return 0;
}
