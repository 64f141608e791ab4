/* trigger.c - user side of the in-kernel trigger path: load trigger.bpf.o
 * through its skeleton, give it the counters, probe, arm, drain.
 *
 * Layout: the domains are grouped per CPU (the order of the domains of one
 * CPU is kept); their perf fds go into the perf-event array, each domain's
 * counters contiguous, and the grouping into the program's rodata before
 * load. The arming program is a map iterator run from this thread pinned to
 * each CPU in turn (bpf_iter_create + read): three short runs per CPU at
 * open (counters readable, timer flags), one per CPU for each command that
 * must fire now. The calling thread's CPU affinity is restored after each.
 *
 * libbpf's own messages go to stderr only with opts.verbose; otherwise the
 * last one is kept for the one-line reason of a failure (common.c).
 * Errors follow util.h.
 */
#include "bpf.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpf/trigger.skel.h" /* generated: $(OUT)/bpf */
#include "common.h"
#include "util/util.h"

/* Enough ring for four drain intervals of every CPU's records. */
#define MIN_RING_BYTES (256u << 10)
#define MAX_RING_BYTES (256u << 20)

struct t4_bpf_trigger {
	struct trigger_bpf *skel;
	struct bpf_link *link;
	struct ring_buffer *ring;
	const struct t4_bpf_domain *domains;
	size_t n_domains;
	uint32_t *order;       /* layout slot -> index into domains */
	int cpus[T4_BPF_MAX_CPUS]; /* CPUs with counters, ascending */
	size_t n_cpus;
	struct {
		uint32_t first_slot, n_doms; /* its domains in order[] */
		size_t words;                /* body words of its records */
	} per[T4_BPF_MAX_CPUS];
	int64_t tai_offset_ns; /* CLOCK_TAI - CLOCK_REALTIME, whole seconds */
	pthread_mutex_t run_lock; /* one arming run at a time */
	t4_bpf_record_fn fn;
	void *ud;
	struct t4_bpf_record rec;
	int drain_err;
};

/* ---- layout ------------------------------------------------------------------ */

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int note_cpu(struct t4_bpf_trigger *t, const struct t4_bpf_domain *d)
{
	if (d->cpu < 0 || d->cpu >= T4_BPF_MAX_CPUS)
		return t4_err(EINVAL, "a domain is not bound to a CPU below %d: its counters "
			      "cannot be read by a CPU's timer", T4_BPF_MAX_CPUS);
	if (d->n == 0 || d->n > T4_BPF_DOM_EVENTS)
		return t4_err(EINVAL, "a domain on CPU %d has %zu counters (1-%d)", d->cpu, d->n,
			      T4_BPF_DOM_EVENTS);
	for (size_t i = 0; i < t->n_cpus; i++)
		if (t->cpus[i] == d->cpu)
			return 0;
	t->cpus[t->n_cpus++] = d->cpu;
	return 0;
}

/* Put one CPU's domains into the layout, from slot and counter ev on. */
static int lay_out_cpu(struct t4_bpf_trigger *t, int cpu, uint32_t *slot, uint32_t *ev)
{
	struct trigger_bpf__rodata *ro = t->skel->rodata;
	struct t4_cpu_layout *cl = (struct t4_cpu_layout *)&ro->cpus[cpu];

	t->per[cpu].first_slot = *slot;
	cl->first_ev = *ev;
	for (size_t i = 0; i < t->n_domains; i++) {
		const struct t4_bpf_domain *d = &t->domains[i];
		if (d->cpu != cpu)
			continue;
		if (*ev + d->n > T4_BPF_MAX_EVENTS)
			return t4_err(E2BIG, "more than %d counters for the BPF trigger",
				      T4_BPF_MAX_EVENTS);
		ro->ev_mark[*ev] |= T4_EV_FIRST;
		ro->ev_mark[*ev + d->n - 1] |= T4_EV_LAST;
		t->order[(*slot)++] = (uint32_t)i;
		*ev += (uint32_t)d->n;
		t->per[cpu].n_doms++;
		t->per[cpu].words += T4_BPF_DOM_HDR + d->n;
	}
	cl->n_ev = *ev - cl->first_ev;
	cl->n_words = (uint32_t)t->per[cpu].words;
	if (t->per[cpu].n_doms > T4_BPF_CPU_DOMAINS || cl->n_ev > T4_BPF_CPU_EVENTS ||
	    t->per[cpu].words > T4_BPF_CPU_WORDS)
		return t4_err(E2BIG, "CPU %d hosts %u domains with %u counters: the BPF "
			      "trigger reads up to %d domains, %d counters, %d words per CPU",
			      cpu, t->per[cpu].n_doms, cl->n_ev, T4_BPF_CPU_DOMAINS,
			      T4_BPF_CPU_EVENTS, T4_BPF_CPU_WORDS);
	return 0;
}

/* Group the domains per CPU into the rodata; returns the counters. */
static int lay_out(struct t4_bpf_trigger *t)
{
	uint32_t slot = 0, ev = 0;
	int rc;

	if (t->n_domains == 0 || t->n_domains > T4_BPF_MAX_DOMAINS)
		return t4_err(EINVAL, "%zu domains: the BPF trigger takes 1-%d", t->n_domains,
			      T4_BPF_MAX_DOMAINS);
	for (size_t i = 0; i < t->n_domains; i++)
		if ((rc = note_cpu(t, &t->domains[i])) < 0)
			return rc;
	qsort(t->cpus, t->n_cpus, sizeof(t->cpus[0]), cmp_int);
	for (size_t c = 0; c < t->n_cpus; c++)
		if ((rc = lay_out_cpu(t, t->cpus[c], &slot, &ev)) < 0)
			return rc;
	return (int)ev;
}

static size_t ring_bytes(const struct t4_bpf_trigger *t, const struct t4_bpf_trigger_opts *o)
{
	uint64_t per = 0, drain = o->drain_ns ? o->drain_ns : 50000000ull;
	uint64_t period = o->period_ns ? o->period_ns : 1000000ull;
	size_t bytes = MIN_RING_BYTES;

	for (size_t c = 0; c < t->n_cpus; c++)
		per += sizeof(struct t4_rec) - sizeof(((struct t4_rec *)0)->w) + 8 +
		       8 * t->per[t->cpus[c]].words;
	uint64_t want = per * (4 * drain / period + 16);
	while (bytes < want && bytes < MAX_RING_BYTES)
		bytes <<= 1;
	return bytes;
}

static int fill_events(struct t4_bpf_trigger *t)
{
	struct bpf_map *map = t->skel->maps.events;
	uint32_t key = 0;

	for (size_t s = 0; s < t->n_domains; s++) {
		const struct t4_bpf_domain *d = &t->domains[t->order[s]];
		for (size_t i = 0; i < d->n; i++, key++) {
			int rc = bpf_map__update_elem(map, &key, sizeof(key), &d->fds[i],
						      sizeof(d->fds[i]), BPF_ANY);
			if (rc < 0)
				return t4_bpf_fail(rc, "perf-event array");
		}
	}
	return 0;
}

/* A new run of the iterator behind link (bpf_iter_create, which lives in
 * libbpf's bpf.h: see bpf.h's note). */
static int iter_create(const struct bpf_link *link)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.iter_create.link_fd = (uint32_t)bpf_link__fd(link);
	return (int)syscall(SYS_bpf, BPF_ITER_CREATE, &a, sizeof(a));
}

/* ---- running the arming program on one CPU ------------------------------------ */

/* Run the arming program once on cpu with op. Returns a negative errno
 * (message set) when it could not run there; otherwise 0 and *result gets
 * what the program reported: 1 done, or a negative errno. */
static int run_on_cpu(struct t4_bpf_trigger *t, int cpu, uint32_t op, int64_t *result)
{
	cpu_set_t old, one;
	char buf[64];
	int fd;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_getaffinity(0, sizeof(old), &old) < 0 || sched_setaffinity(0, sizeof(one), &one) < 0)
		return t4_err(errno, "cannot run on CPU %d to arm its timer: %s", cpu, strerror(errno));
	__atomic_store_n(&t->skel->bss->op, op, __ATOMIC_RELAXED);
	__atomic_store_n(&t->skel->bss->op_err[cpu], 0, __ATOMIC_RELEASE);
	fd = iter_create(t->link);
	int e = errno;
	if (fd >= 0) {
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	sched_setaffinity(0, sizeof(old), &old);
	if (fd < 0)
		return t4_bpf_fail(e, "iterator");
	*result = __atomic_load_n(&t->skel->bss->op_err[cpu], __ATOMIC_ACQUIRE);
	if (*result == 0)
		return t4_err(EIO, "the BPF arming program did not run on CPU %d", cpu);
	return 0;
}

/* Run op on every CPU with counters; what to say when the program fails. */
static int run_everywhere(struct t4_bpf_trigger *t, uint32_t op, const char *what)
{
	int rc = 0;
	int64_t res = 1;

	pthread_mutex_lock(&t->run_lock);
	for (size_t c = 0; c < t->n_cpus && rc == 0 && res > 0; c++) {
		rc = run_on_cpu(t, t->cpus[c], op, &res);
		if (rc == 0 && res < 0)
			rc = t4_err((int)-res, what, t->cpus[c], strerror((int)-res));
	}
	pthread_mutex_unlock(&t->run_lock);
	return rc;
}

/* Every counter readable by its CPU's timer, and the timer flags there. */
static int probe(struct t4_bpf_trigger *t)
{
	int rc = run_everywhere(t, T4_OP_READS,
				"a counter on CPU %d cannot be read in the kernel: %s");

	if (rc == 0)
		rc = run_everywhere(t, T4_OP_TIMER, "the BPF timer of CPU %d: %s "
				    "(absolute, CPU-pinned BPF timers need Linux 6.8)");
	return rc;
}

/* ---- the API -------------------------------------------------------------------- */

static int load(struct t4_bpf_trigger *t, const struct t4_bpf_trigger_opts *o)
{
	int n_ev, rc, ncpu = libbpf_num_possible_cpus();

	if (ncpu <= 0)
		return t4_bpf_fail(-ncpu, "possible CPUs");
	t->skel = trigger_bpf__open();
	if (!t->skel)
		return t4_bpf_fail(errno, "open");
	if ((n_ev = lay_out(t)) < 0)
		return n_ev;
	bpf_map__set_max_entries(t->skel->maps.timers, (uint32_t)ncpu);
	bpf_map__set_max_entries(t->skel->maps.events, (uint32_t)n_ev);
	bpf_map__set_max_entries(t->skel->maps.rb, (uint32_t)ring_bytes(t, o));
	if (o->verbose)
		bpf_program__set_log_level(t->skel->progs.arm, 4);
	if ((rc = trigger_bpf__load(t->skel)) < 0)
		return t4_bpf_fail(rc, "load");
	if ((rc = fill_events(t)) < 0)
		return rc;
	t->link = bpf_program__attach_iter(t->skel->progs.arm, NULL);
	if (!t->link)
		return t4_bpf_fail(errno, "iterator attach");
	return 0;
}

static int64_t tai_offset(void)
{
	int64_t d = (int64_t)(t4_clock_ns(CLOCK_TAI) - t4_clock_ns(CLOCK_REALTIME));

	return (d + 500000000) / 1000000000 * 1000000000; /* whole seconds */
}

static int on_record(void *ctx, void *data, size_t size);

int t4_bpf_trigger_open(struct t4_bpf_trigger **out, const struct t4_bpf_trigger_opts *o)
{
	struct t4_bpf_trigger *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return t4_err(ENOMEM, "out of memory");
	t4_bpf_messages(o->verbose);
	pthread_mutex_init(&t->run_lock, NULL);
	t->domains = o->domains;
	t->n_domains = o->n_domains;
	t->tai_offset_ns = tai_offset();
	t->order = calloc(o->n_domains ? o->n_domains : 1, sizeof(*t->order));
	if (!t->order) {
		rc = t4_err(ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = load(t, o)) < 0 || (rc = probe(t)) < 0)
		goto fail;
	t->ring = ring_buffer__new(bpf_map__fd(t->skel->maps.rb), on_record, t, NULL);
	if (!t->ring) {
		rc = t4_bpf_fail(errno, "ring buffer");
		goto fail;
	}
	*out = t;
	return 0;
fail:
	t4_bpf_trigger_close(t);
	return rc;
}

struct t4_grid *t4_bpf_trigger_grid(struct t4_bpf_trigger *t)
{
	return &t->skel->bss->grid;
}

void t4_bpf_trigger_bookmark(struct t4_bpf_trigger *t, uint32_t id, uint32_t gen)
{
	__atomic_store_n(&t->skel->bss->bookmark, (uint64_t)gen << 32 | id, __ATOMIC_SEQ_CST);
}

int t4_bpf_trigger_kick(struct t4_bpf_trigger *t)
{
	return run_everywhere(t, T4_OP_ARM, "cannot start the BPF timer of CPU %d: %s");
}

uint64_t t4_bpf_trigger_fired(const struct t4_bpf_trigger *t, int cpu)
{
	if (cpu < 0 || cpu >= T4_BPF_MAX_CPUS)
		return 0;
	return __atomic_load_n(&t->skel->bss->fired[cpu], __ATOMIC_ACQUIRE);
}

uint64_t t4_bpf_trigger_lost(const struct t4_bpf_trigger *t)
{
	uint64_t n = 0;

	for (size_t c = 0; c < t->n_cpus; c++)
		n += __atomic_load_n(&t->skel->bss->lost[t->cpus[c]], __ATOMIC_RELAXED);
	return n;
}

/* Split a record into its domains' reads (the layout of lay_out). */
static int on_record(void *ctx, void *data, size_t size)
{
	struct t4_bpf_trigger *t = ctx;
	const struct t4_rec *r = data;
	const size_t hdr = sizeof(*r) - sizeof(r->w);
	struct t4_bpf_record *out = &t->rec;
	size_t w = 0;

	if (size < hdr || r->cpu >= T4_BPF_MAX_CPUS || r->n_words != t->per[r->cpu].words ||
	    size < hdr + 8 * (size_t)r->n_words) {
		t->drain_err = t4_err(EPROTO, "BPF record of %zu bytes does not match the layout", size);
		return 0;
	}
	out->rec = r;
	out->real_ns = r->tai_ns - (uint64_t)t->tai_offset_ns;
	out->n_reads = t->per[r->cpu].n_doms;
	for (size_t i = 0; i < out->n_reads; i++) {
		struct t4_bpf_read *rd = &out->reads[i];
		rd->domain = t->order[t->per[r->cpu].first_slot + i];
		rd->begin_ns = r->w[w];
		rd->end_ns = r->w[w + 1];
		rd->enabled = r->w[w + 2];
		rd->running = r->w[w + 3];
		rd->err = (int)(int64_t)r->w[w + 4];
		rd->values = &r->w[w + T4_BPF_DOM_HDR];
		rd->n = t->domains[rd->domain].n;
		w += T4_BPF_DOM_HDR + rd->n;
	}
	t->fn(t->ud, out);
	return 0;
}

int t4_bpf_trigger_drain(struct t4_bpf_trigger *t, t4_bpf_record_fn fn, void *ud)
{
	int n;

	t->fn = fn;
	t->ud = ud;
	t->drain_err = 0;
	n = ring_buffer__consume(t->ring);
	if (n < 0)
		return t4_bpf_fail(n, "ring buffer");
	return t->drain_err ? t->drain_err : n;
}

void t4_bpf_trigger_close(struct t4_bpf_trigger *t)
{
	if (!t)
		return;
	ring_buffer__free(t->ring);
	bpf_link__destroy(t->link);
	trigger_bpf__destroy(t->skel);
	pthread_mutex_destroy(&t->run_lock);
	free(t->order);
	free(t);
}
