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
 * Errors follow util.h: 0 or a negative errno with a one-line message that
 * says why (t4_errmsg()), so a caller can fall back and tell the user.
 */
#ifndef T4_BPF_H
#define T4_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
