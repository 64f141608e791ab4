/* activity.h - what the kernel side (activity.bpf.c) and the user side share:
 * the records of the CPU and GPU activity ring buffer, the per-CPU on-CPU
 * state, and the GPU job matching (one function compiled into both sides,
 * so that user space tests the rule the kernel runs, as trigger.h does for
 * the grid).
 *
 * Records: two ring buffers, each record starting with its __u32 type:
 * `rb` for CPU slices, task names, GPU jobs and contexts (BPF_RB_NO_WAKEUP:
 * user space drains on its own schedule), `marks` for the uprobe's
 * bookmarks and triggers (a trigger wakes user space at once), so that a
 * flood of slices never takes a bookmark's room. Times are
 * bpf_ktime_get_ns() (CLOCK_MONOTONIC).
 *
 * GPU jobs: a fence made (dma_fence_init) or queued (drm_sched_job) by a
 * thread of the workload is a job, from its submission; dma_fence_emit
 * (handed to the hardware) moves its start there, the GPU scheduler's
 * drm_run_job moves it to when the job ran (FROM_RUN), and the fence's
 * signal (dma_fence_signaled, drm_sched_process_job) ends it: one GPU
 * slice. A fence destroyed unsignaled is forgotten. Fences of other
 * processes are never entered, so their signals cost one lookup.
 *
 * Types are __u32/__u64 only (libbpf-tools habit).
 */
#ifndef T4_BPF_ACTIVITY_H
#define T4_BPF_ACTIVITY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define T4_ACT_COMM 16        /* a task's comm (TASK_COMM_LEN) */
#define T4_ACT_NAME 64        /* driver, timeline, bookmark names (T4_NAME_MAX) */
#define T4_ACT_MAX_TRACKED 16384 /* processes followed at once */

/* The probe point libt410trace calls when the recorder said "uprobe"
 * (control.h repeats these: static assertions in activity.c keep them
 * equal). op may carry WAKE: the caller found the recorder's credits
 * running low, so the drain is woken to queue what it has and lend more. */
#define T4_ACT_PROBE_SYMBOL "t410__probe2"
#define T4_ACT_PROBE_BOOKMARK 1 /* t410__probe2(1, name) */
#define T4_ACT_PROBE_TRIGGER 2  /* t410__probe2(2, NULL) */
#define T4_ACT_PROBE_WAKE 0x100

/* Bookmark and trigger records the `marks` ring holds: at least the calls
 * libt410trace may make before the drain takes them (control.h's
 * T4_PROBE_CREDIT), so a call it was let make always finds room. */
#define T4_ACT_MARKS_MAX 16384

enum {
	T4_ACT_TASK = 1,     /* a thread's name: first seen, renamed, exec */
	T4_ACT_CPU = 2,      /* a thread on a CPU, switch-in to switch-out */
	T4_ACT_GPU = 3,      /* a GPU job, start to signal */
	T4_ACT_GPU_CTX = 4,  /* a fence context's driver and timeline, once */
	T4_ACT_BOOKMARK = 5, /* t410_bookmark() through the uprobe */
	T4_ACT_TRIGGER = 6,  /* t410_trigger() through the uprobe */
};

enum {
	T4_ACT_PREEMPTED = 1u << 0,     /* switched out still runnable */
	T4_ACT_START_RUNTIME = 1u << 1, /* switch-in not seen: start is the end
					* less the scheduler's run time */
};

enum {
	T4_ACT_FROM_SUBMIT = 1u << 0, /* start: submitted (or emitted) */
	T4_ACT_FROM_RUN = 1u << 1,    /* start: the GPU scheduler ran it */
};

struct t4_ph_task {
	__u32 type, pid, tid, ppid;
	__u64 ns;
	char comm[T4_ACT_COMM];
};

struct t4_ph_cpu {
	__u32 type, cpu, pid, tid;
	__u64 start_ns, end_ns;
	__u32 flags, pad;
};

struct t4_ph_gpu {
	__u32 type, pid, tid, flags;
	__u64 context, seqno, start_ns, end_ns;
};

struct t4_ph_ctx {
	__u32 type, pad;
	__u64 context;
	char driver[T4_ACT_NAME];
	char timeline[T4_ACT_NAME];
};

struct t4_ph_mark {
	__u32 type, pid, tid, pad;
	__u64 ns;
	char name[T4_ACT_NAME]; /* "" for a trigger, or when unreadable */
};

/* The thread on each CPU now (a per-CPU array of one): tid 0 = none of the
 * workload's. */
struct t4_ph_oncpu {
	__u64 start_ns;
	__u32 pid, tid;
};

/* ---- GPU jobs: one fence's state and what an event does to it ---------- */

struct t4_fence_key {
	__u64 context, seqno;
};

struct t4_fence {
	__u64 start_ns;
	__u32 pid, tid, flags, pad;
};

enum t4_fence_ev {
	T4_FEV_INIT,    /* dma_fence_init: made (in the submitting thread) */
	T4_FEV_QUEUE,   /* drm_sched_job: pushed to its queue (submitting thread) */
	T4_FEV_EMIT,    /* dma_fence_emit: handed to the hardware */
	T4_FEV_RUN,     /* drm_run_job: the GPU scheduler ran it */
	T4_FEV_DONE,    /* dma_fence_signaled, drm_sched_process_job */
	T4_FEV_FORGET,  /* dma_fence_destroy; a scheduler's "scheduled" fence */
};

enum t4_fence_act {
	T4_FA_NONE,   /* nothing to do */
	T4_FA_PUT,    /* store *f under the fence's key */
	T4_FA_SLICE,  /* a GPU slice from f->start_ns to now; forget the fence */
	T4_FA_DELETE, /* forget the fence */
};

#ifndef T4_INLINE
#define T4_INLINE static inline __attribute__((always_inline))
#endif

/* A character a bookmark name may hold: A-Z a-z 0-9 _ . : - (control/name.c's
 * rule, for the kernel side; a test checks that both agree on every byte). */
T4_INLINE int t4_ph_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == ':' || c == '-';
}

/* Event ev on a fence: `have` says whether it is known (then *f holds its
 * state), `tracked` whether the current thread (pid, tid) is the
 * workload's. Returns what to do; *f is updated for T4_FA_PUT. */
T4_INLINE int t4_fence_step(int ev, int have, int tracked, struct t4_fence *f, __u64 now,
			    __u32 pid, __u32 tid)
{
	switch (ev) {
	case T4_FEV_INIT:
	case T4_FEV_QUEUE:
		if (have || !tracked)
			return T4_FA_NONE; /* the first submission counts */
		f->start_ns = now;
		f->pid = pid;
		f->tid = tid;
		f->flags = T4_ACT_FROM_SUBMIT;
		f->pad = 0;
		return T4_FA_PUT;
	case T4_FEV_EMIT:
		if (!have || (f->flags & T4_ACT_FROM_RUN))
			return T4_FA_NONE; /* a run beats an emission */
		f->start_ns = now;
		return T4_FA_PUT;
	case T4_FEV_RUN:
		if (!have)
			return T4_FA_NONE;
		f->start_ns = now;
		f->flags = T4_ACT_FROM_RUN;
		return T4_FA_PUT;
	case T4_FEV_DONE:
		return have ? T4_FA_SLICE : T4_FA_NONE;
	case T4_FEV_FORGET:
		return have ? T4_FA_DELETE : T4_FA_NONE;
	}
	return T4_FA_NONE;
}

#endif
