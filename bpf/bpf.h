/* bpf.h - t410trace's BPF components: the module's one public header.
 * (With -I. this file shadows libbpf's <bpf/bpf.h>: the user sides use
 * <bpf/libbpf.h> only.)
 *
 * Each component is a libbpf-tools trio: x.bpf.c (kernel side), x.c (user
 * side: loads the skeleton that `bpftool gen skeleton` made of x.bpf.o),
 * x.h (what both sides share). This header declares the user-side API of
 * every component; the shared structs come with it.
 *
 * trigger: the in-kernel trigger path (trigger.bpf.c). One BPF timer per CPU
 * hosting counters fires on the absolute CLOCK_MONOTONIC grid, reads that
 * CPU's perf counters and writes one record per trigger into a ring buffer;
 * user space publishes commands (epochs, trigger.h) and the bookmark through
 * the program's mmapped global data, and drains the records when it likes.
 * sched/ turns the records into reference and return packets.
 *
 * activity: what the kernel sees of the workload (activity.bpf.c): its threads
 * on the CPUs (sched_switch, filtered in the kernel to the workload's
 * process tree, or every task), their names, its GPU jobs (dma_fence and
 * GPU scheduler tracepoints), and libt410trace's bookmarks and triggers
 * through a uprobe on its probe point; two ring buffers (the uprobe's
 * records apart), drained by the caller together, each record handed over as a packet (FORMAT.md 4.5a) or as a
 * bookmark or trigger command.
 *
 * Errors follow util.h: 0 or a negative errno with a one-line message that
 * says why (t4_errmsg()), so a caller can fall back and tell the user.
 */
#ifndef T4_BPF_H
#define T4_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "packets/packets.h"
#include "activity.h"
#include "trigger.h"

/* ---- trigger (trigger.c) ------------------------------------------------ */

struct t4_bpf_trigger;

/* One clock domain: its counters, opened on `cpu`, in the order their
 * values are wanted. */
struct t4_bpf_domain {
	int cpu;
	size_t n;
	const int *fds; /* perf event fds, n of them */
};

struct t4_bpf_trigger_opts {
	const struct t4_bpf_domain *domains;
	size_t n_domains;
	uint64_t period_ns; /* sizes the ring buffer */
	uint64_t drain_ns;  /* how often the caller drains; sizes the ring */
	bool verbose;       /* libbpf's own messages on stderr */
};

/* One domain's part of a record. */
struct t4_bpf_read {
	uint32_t domain; /* index into opts.domains */
	int err;         /* 0, or the negative errno of a failed counter read */
	uint64_t begin_ns, end_ns; /* CLOCK_MONOTONIC around the reads */
	uint64_t enabled, running; /* of the domain's first counter */
	const __u64 *values;       /* n raw counter values */
	size_t n;
};

/* One CPU's answer to one trigger. */
struct t4_bpf_record {
	const struct t4_rec *rec; /* trigger ID, point, missed, ... */
	uint64_t real_ns;         /* CLOCK_REALTIME at rec->fire_ns */
	size_t n_reads;
	struct t4_bpf_read reads[T4_BPF_CPU_DOMAINS];
};

typedef void (*t4_bpf_record_fn)(void *ud, const struct t4_bpf_record *r);

/* Load the program, put the counters into it and probe, on every CPU that
 * hosts counters, that each counter can be read in the kernel and that the
 * timer flags exist. Nothing fires yet. Fails with a one-line reason (no
 * privilege, a kernel without the feature, a counter the kernel cannot
 * read there, a layout too large). */
int t4_bpf_trigger_open(struct t4_bpf_trigger **out,
			const struct t4_bpf_trigger_opts *opts);
/* The seqlocked epoch the timers follow (inside the mmapped .bss):
 * publish into it, then t4_bpf_trigger_kick() when point 0 must fire now. */
struct t4_grid *t4_bpf_trigger_grid(struct t4_bpf_trigger *t);
/* The bookmark the next triggers carry: its ID and the number of bookmark
 * commands so far (one store into .bss; records carry both). */
void t4_bpf_trigger_bookmark(struct t4_bpf_trigger *t, uint32_t id, uint32_t gen);
/* Make every CPU's timer look at the epoch now (one short run of the arming
 * program on each CPU: a syscall per CPU, for commands only). */
int t4_bpf_trigger_kick(struct t4_bpf_trigger *t);
/* Last trigger ID the kernel answered on cpu + 1 (0 = none yet). */
uint64_t t4_bpf_trigger_fired(const struct t4_bpf_trigger *t, int cpu);
/* Records the ring buffer refused so far, all CPUs. */
uint64_t t4_bpf_trigger_lost(const struct t4_bpf_trigger *t);
/* Hand every record in the ring to fn, in order; returns how many. */
int t4_bpf_trigger_drain(struct t4_bpf_trigger *t, t4_bpf_record_fn fn, void *ud);
/* Unload (the timers stop with their maps). Accepts NULL. */
void t4_bpf_trigger_close(struct t4_bpf_trigger *t);

/* ---- activity (activity.c) ------------------------------------------------ */

struct t4_bpf_activity;

struct t4_bpf_activity_opts {
	bool all;          /* every task (record -a), else the processes tracked */
	const int *pids;   /* processes tracked from the start (their children
			    * are, from then on) */
	size_t n_pids;
	size_t ring_bytes; /* a power of two; 0: 4 MiB */
	bool wake_on_bookmark; /* a probe bookmark wakes the drain (as a trigger
				* does); else it waits for the next drain */
	bool verbose;      /* libbpf's own messages on stderr */
};

/* One record of the ring buffer, decoded. */
enum t4_bpf_activity_kind {
	T4_BPF_PH_PACKET = 1, /* pkt: a task, CPU slice, GPU slice or GPU context */
	T4_BPF_PH_BOOKMARK,   /* t410_bookmark() through the probe */
	T4_BPF_PH_TRIGGER,    /* t410_trigger() through the probe */
};

struct t4_bpf_activity_rec {
	int kind;               /* enum t4_bpf_activity_kind */
	struct t4_packet pkt;   /* PACKET */
	uint64_t mono_ns;       /* BOOKMARK, TRIGGER: when the probe was hit */
	uint32_t pid, tid;      /* ... by this thread */
	char name[T4_NAME_MAX]; /* BOOKMARK: the name ("" when unreadable) */
};

typedef void (*t4_bpf_activity_fn)(void *ud, const struct t4_bpf_activity_rec *ph);

/* Load and attach. Fails with a one-line reason when the CPU part cannot
 * run (no privilege, no BTF, a kernel without tp_btf); a missing GPU part
 * is left out and said by t4_bpf_activity_note. */
int t4_bpf_activity_open(struct t4_bpf_activity **out, const struct t4_bpf_activity_opts *o);
/* What was left out, one line ("" when nothing). */
const char *t4_bpf_activity_note(const struct t4_bpf_activity *p);
/* Follow process pid (and its children from now on). */
int t4_bpf_activity_track(struct t4_bpf_activity *p, int pid);
/* Take process pid's probe hits: path is the file holding its
 * libt410trace, which pid must map; the file gets the uprobe once. Fails
 * with the reason (not mapped, no t410__probe2 symbol, ...). Any thread. */
int t4_bpf_activity_uprobe(struct t4_bpf_activity *p, int pid, const char *path);
/* Wait up to timeout_ms for a bookmark or trigger (other records never
 * wake), then hand every record to fn, in order. Returns how many. */
int t4_bpf_activity_poll(struct t4_bpf_activity *p, int timeout_ms, t4_bpf_activity_fn fn, void *ud);
/* At the end: a CPU slice, ending now, for each thread still on a CPU. */
int t4_bpf_activity_flush(struct t4_bpf_activity *p, t4_bpf_activity_fn fn, void *ud);
/* Probe calls the program did not record (triggers: t410_trigger()'s,
 * else bookmarks): a bad name (a caller that skipped libt410trace's
 * check), or the marks ring full. */
uint64_t t4_bpf_activity_refused(const struct t4_bpf_activity *p, bool triggers);
/* Records lost before user space: the ring was full (and malformed ones). */
uint64_t t4_bpf_activity_lost(const struct t4_bpf_activity *p);
void t4_bpf_activity_close(struct t4_bpf_activity *p); /* accepts NULL */

/* One record (size bytes, activity.h) into out: returns its kind, or
 * -EPROTO for a record of the wrong size or an unknown type. */
int t4_bpf_activity_decode(const void *data, size_t size, struct t4_bpf_activity_rec *out);
/* Whether one line of /proc/PID/maps maps exactly path: 1 with its device
 * and inode, else 0. */
int t4_bpf_maps_line(const char *line, const char *path, uint64_t *dev, uint64_t *ino);

#endif
