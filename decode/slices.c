/* slices.c - what the kernel saw of the workload, on the reference axis:
 * its threads on CPUs and its GPU jobs (bpf/activity, FORMAT.md 4.5a).
 *
 * Slices are timed on CLOCK_MONOTONIC; reference packets carry MONOTONIC
 * next to the reference clock, so the phase scheduler's reference packets
 * give (MONOTONIC, reference) pairs and a slice's instants are converted
 * with the offset interpolated between the pairs around them (MONOTONIC is
 * slewed by NTP, MONOTONIC_RAW is not: the offset moves by ppm). A log
 * whose reference clock is CLOCK_MONOTONIC itself (the session's
 * ref_clock: triggers fired in the kernel) needs no conversion: its pairs
 * are the identity, and its slices keep their instants, placed even
 * before any reference packet. A slice waits until the reference packets
 * reach DEC_BOOKMARK_LAG_NS past its end (bounded; at the end of the log the
 * last offset is used): the bookmarks that label it come with them, and a
 * bookmark timed elsewhere (libt410trace's probe, stamped in the kernel)
 * reaches the log with the trigger that takes it, up to a drain or two
 * after its time, yet its phase starts at its time.
 *
 * A GPU context's jobs run in order: a job that was submitted while the
 * previous one was still running starts when that one signaled, so jobs of
 * one context never overlap (Perfetto needs that of a track) and the
 * context's busy time is their union. Per phase: the workload's on-CPU
 * time and threads, each context's busy time, split by overlap.
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the clock: MONOTONIC -> reference ------------------------------------- */

static int release(struct t4_decoder *d, bool all);

static const struct dpair *pair_at(const struct dslices *sl, size_t i)
{
	return &sl->pairs[(sl->pair_head + i) % DEC_PAIRS];
}

int slices_pair(struct t4_decoder *d, uint64_t mono, uint64_t ref)
{
	struct dslices *sl = &d->sl;

	if (!sl->pairs && !(sl->pairs = calloc(DEC_PAIRS, sizeof(*sl->pairs))))
		return t4_err(ENOMEM, "out of memory");
	if (sl->n_pairs && mono <= pair_at(sl, sl->n_pairs - 1)->mono)
		return 0; /* out of order: the pairs stay sorted */
	if (sl->n_pairs == DEC_PAIRS) {
		sl->pair_head = (sl->pair_head + 1) % DEC_PAIRS;
		sl->n_pairs--;
	}
	sl->pairs[(sl->pair_head + sl->n_pairs) % DEC_PAIRS] = (struct dpair){ mono, ref };
	sl->n_pairs++;
	return release(d, false);
}

/* The log's reference clock is CLOCK_MONOTONIC: slices need no pairs. */
static bool mono_is_ref(const struct t4_decoder *d)
{
	const struct t4_session_pkt *s = t4_index_session(d->ix);

	return s && s->ref_clock == T4_REFCLK_MONOTONIC;
}

/* Reference time of MONOTONIC t: t itself on a MONOTONIC log, else the
 * offset interpolated between the pairs around t (the nearest one outside
 * their range). */
static uint64_t to_ref(const struct t4_decoder *d, uint64_t t)
{
	const struct dslices *sl = &d->sl;
	size_t lo = 0, hi = sl->n_pairs;
	const struct dpair *a, *b;

	if (mono_is_ref(d))
		return t;

	while (hi - lo > 1) { /* the last pair at or before t */
		size_t mid = (lo + hi) / 2;
		if (pair_at(sl, mid)->mono <= t)
			lo = mid;
		else
			hi = mid;
	}
	a = pair_at(sl, lo);
	int64_t off = (int64_t)(a->mono - a->ref);
	if (lo + 1 < sl->n_pairs && t > a->mono) {
		b = pair_at(sl, lo + 1);
		int64_t off_b = (int64_t)(b->mono - b->ref);
		off += (int64_t)((double)(off_b - off) * (double)(t - a->mono) /
				 (double)(b->mono - a->mono));
	}
	return t - (uint64_t)off;
}

/* ---- tasks and contexts ------------------------------------------------- */

static struct dtask *task_of(struct dslices *sl, uint32_t tid)
{
	int64_t i = dec_idmap_get(&sl->task_map, tid);
	return i >= 0 ? &sl->tasks[i] : NULL;
}

static int take_task(struct dslices *sl, const struct t4_task_pkt *t)
{
	struct dtask *k = task_of(sl, t->tid);
	int rc;

	if (!k) {
		if ((rc = dec_vec_room((void **)&sl->tasks, &sl->cap_tasks, sl->n_tasks,
				      sizeof(*sl->tasks))) < 0 ||
		    (rc = dec_idmap_put(&sl->task_map, t->tid, (uint32_t)sl->n_tasks)) < 0)
			return rc;
		k = &sl->tasks[sl->n_tasks++];
		memset(k, 0, sizeof(*k));
		sl->st.tasks++;
	}
	k->tid = t->tid;
	k->pid = t->pid;
	snprintf(k->name, sizeof(k->name), "%s", t->name);
	return 0;
}

static struct dgpu *gpu_of(struct dslices *sl, uint64_t context, bool create)
{
	for (size_t i = 0; i < sl->n_gpus; i++)
		if (sl->gpus[i].context == context)
			return &sl->gpus[i];
	if (!create || dec_vec_room((void **)&sl->gpus, &sl->cap_gpus, sl->n_gpus,
				   sizeof(*sl->gpus)) < 0)
		return NULL;
	struct dgpu *g = &sl->gpus[sl->n_gpus++];
	memset(g, 0, sizeof(*g));
	g->context = context;
	return g;
}

static int take_gpu_ctx(struct dslices *sl, const struct t4_gpu_ctx_pkt *c)
{
	struct dgpu *g = gpu_of(sl, c->context, true);

	if (!g)
		return -ENOMEM;
	snprintf(g->driver, sizeof(g->driver), "%s", c->driver);
	snprintf(g->timeline, sizeof(g->timeline), "%s", c->timeline);
	return 0;
}

/* ---- per phase ---------------------------------------------------------- */

/* Call add(span, overlap) for every span [start, end) overlaps. */
static void by_span(const struct t4_decoder *d, uint64_t start, uint64_t end,
		    void (*add)(void *ud, size_t span, uint64_t ns), void *ud)
{
	if (!d->n_spans || end <= start)
		return;
	for (size_t i = phases_span_at(d, start); i < d->n_spans; i++) {
		uint64_t s0 = d->spans[i].start_ns, s1 = phases_span_end(d, i);
		uint64_t lo = start > s0 ? start : s0, hi = end < s1 ? end : s1;
		if (lo >= end)
			break;
		if (hi > lo)
			add(ud, i, hi - lo);
	}
}

struct cpu_add {
	struct t4_decoder *d;
	struct dtask *task;
};

static void add_cpu(void *ud, size_t span, uint64_t ns)
{
	struct cpu_add *a = ud;
	struct dspan *sp = &a->d->spans[span];

	sp->cpu_ns += ns;
	if (a->task && a->task->last_span != span + 1) {
		a->task->last_span = span + 1;
		sp->threads++;
	}
}

static void add_gpu(void *ud, size_t span, uint64_t ns)
{
	struct dgpu *g = ud;

	if (span >= g->n_busy) {
		size_t n = span + 16;
		uint64_t *b = realloc(g->busy, n * sizeof(*b));
		if (!b)
			return; /* the phase table loses this job: out of memory */
		memset(b + g->n_busy, 0, (n - g->n_busy) * sizeof(*b));
		g->busy = b;
		g->n_busy = n;
	}
	g->busy[span] += ns;
}

/* ---- slices in ---------------------------------------------------------- */

static bool slice_wanted(struct t4_decoder *d, const struct t4_slice *s)
{
	const char *ph = d->o.phase;

	uint64_t end = s->end_ns > s->start_ns ? s->end_ns : s->start_ns + 1;

	if (!dec_time_window(d, s->start_ns, end))
		return false;
	if (ph && strcmp(t4_decoder_bookmark(d, s->bookmark_id), ph) &&
	    !phases_named(d, s->start_ns, end, ph))
		return false;
	d->selected++;
	return true;
}

/* To the sink; decode -j: merged before the packet's intervals, as -j 1
 * makes them (a reference packet pairs clocks before it drains). */
static int slice_out(struct t4_decoder *d, const struct t4_slice *s)
{
	if (!d->ops.slice)
		return 0;
	int rc = d->split ? dec_split_row(d, 0) : 0;
	return rc < 0 ? rc : d->ops.slice(d->ud, d, s);
}

static int emit_cpu(struct t4_decoder *d, const struct t4_cpu_slice_pkt *c)
{
	struct dtask *k = task_of(&d->sl, c->tid);
	struct t4_slice s = {
		.kind = T4_SLICE_CPU, .start_ns = to_ref(d, c->start_ns),
		.end_ns = to_ref(d, c->end_ns), .cpu = c->cpu, .pid = c->pid,
		.tid = c->tid, .name = k ? k->name : "", .driver = "", .timeline = "",
		.flags = c->flags,
	};

	if (d->n_spans)
		s.bookmark_id = d->spans[phases_span_at(d, s.start_ns)].bookmark_id;
	if (!slice_wanted(d, &s))
		return 0;
	struct cpu_add a = { d, k };
	by_span(d, s.start_ns, s.end_ns, add_cpu, &a);
	d->sl.st.cpu++;
	return slice_out(d, &s);
}

static int emit_gpu(struct t4_decoder *d, const struct t4_gpu_slice_pkt *j)
{
	struct dgpu *g = gpu_of(&d->sl, j->context, true);
	struct t4_slice s = {
		.kind = T4_SLICE_GPU, .start_ns = to_ref(d, j->start_ns),
		.end_ns = to_ref(d, j->end_ns), .pid = j->pid, .tid = j->tid, .name = "",
		.context = j->context, .seqno = j->seqno, .flags = j->flags,
		.driver = g ? g->driver : "", .timeline = g ? g->timeline : "",
	};

	if (!g)
		return -ENOMEM;
	if (s.start_ns < g->last_end)
		s.start_ns = g->last_end < s.end_ns ? g->last_end : s.end_ns; /* queued behind */
	if (s.end_ns > g->last_end)
		g->last_end = s.end_ns;
	if (d->n_spans)
		s.bookmark_id = d->spans[phases_span_at(d, s.start_ns)].bookmark_id;
	if (!slice_wanted(d, &s))
		return 0;
	by_span(d, s.start_ns, s.end_ns, add_gpu, g);
	d->sl.st.gpu++;
	return slice_out(d, &s);
}

static int emit(struct t4_decoder *d, const struct dslice_pkt *p)
{
	if (!d->sl.n_pairs && !mono_is_ref(d)) {
		d->sl.st.unplaced++; /* no reference packet: nowhere to put it */
		return 0;
	}
	return p->type == T4_PKT_CPU_SLICE ? emit_cpu(d, &p->cpu) : emit_gpu(d, &p->gpu);
}

static uint64_t end_of(const struct dslice_pkt *p)
{
	return p->type == T4_PKT_CPU_SLICE ? p->cpu.end_ns : p->gpu.end_ns;
}

/* The reference packets seen reach DEC_BOOKMARK_LAG_NS past p's end. */
static bool covered(const struct dslices *sl, const struct dslice_pkt *p)
{
	return sl->n_pairs && end_of(p) + DEC_BOOKMARK_LAG_NS <= pair_at(sl, sl->n_pairs - 1)->mono;
}

/* Hand out held slices that the pairs now cover (all: the log ended). */
static int release(struct t4_decoder *d, bool all)
{
	struct dslices *sl = &d->sl;
	int rc = 0;

	while (sl->n_hold && rc >= 0) {
		const struct dslice_pkt *p = &sl->hold[sl->hold_head];
		if (!all && !covered(sl, p))
			break;
		rc = emit(d, p);
		sl->hold_head = (sl->hold_head + 1) % sl->cap_hold;
		sl->n_hold--;
	}
	return rc;
}

/* Room for one more held slice: the ring doubles up to DEC_SLICE_HOLD
 * (memory as the lag needs it, not as the worst case would). */
static int hold_room(struct dslices *sl)
{
	size_t cap = sl->cap_hold ? 2 * sl->cap_hold : 256;
	struct dslice_pkt *h;

	if (sl->n_hold < sl->cap_hold || sl->cap_hold >= DEC_SLICE_HOLD)
		return 0;
	if (!(h = malloc(cap * sizeof(*h))))
		return t4_err(ENOMEM, "out of memory");
	for (size_t i = 0; i < sl->n_hold; i++)
		h[i] = sl->hold[(sl->hold_head + i) % sl->cap_hold];
	free(sl->hold);
	sl->hold = h;
	sl->hold_head = 0;
	sl->cap_hold = cap;
	return 0;
}

static int hold(struct t4_decoder *d, const struct dslice_pkt *p)
{
	struct dslices *sl = &d->sl;
	int rc;

	if ((rc = hold_room(sl)) < 0)
		return rc;
	if (sl->n_hold == sl->cap_hold) { /* full: the oldest goes as it is */
		if ((rc = emit(d, &sl->hold[sl->hold_head])) < 0)
			return rc;
		sl->hold_head = (sl->hold_head + 1) % sl->cap_hold;
		sl->n_hold--;
	}
	sl->hold[(sl->hold_head + sl->n_hold) % sl->cap_hold] = *p;
	sl->n_hold++;
	return 0;
}

int slices_take(struct t4_decoder *d, const struct t4_packet *p)
{
	struct dslices *sl = &d->sl;

	switch (p->type) {
	case T4_PKT_TASK:
		return take_task(sl, &p->task);
	case T4_PKT_GPU_CTX:
		return take_gpu_ctx(sl, &p->gpu_ctx);
	case T4_PKT_CPU_SLICE:
	case T4_PKT_GPU_SLICE: {
		struct dslice_pkt sp = { .type = p->type };
		if (p->type == T4_PKT_CPU_SLICE)
			sp.cpu = p->cpu_slice;
		else
			sp.gpu = p->gpu_slice;
		if (!sl->n_hold && covered(sl, &sp))
			return emit(d, &sp);
		return hold(d, &sp);
	}
	default:
		return 0;
	}
}

int slices_flush(struct t4_decoder *d)
{
	return release(d, true);
}

void slices_free(struct dslices *sl)
{
	for (size_t i = 0; i < sl->n_gpus; i++)
		free(sl->gpus[i].busy);
	free(sl->gpus);
	free(sl->tasks);
	dec_idmap_free(&sl->task_map);
	free(sl->pairs);
	free(sl->hold);
}

/* ---- queries --------------------------------------------------------------- */

size_t t4_decoder_phase_gpu(const struct t4_decoder *d, size_t p,
			    struct t4_dec_gpu_busy *out, size_t cap)
{
	const struct dslices *sl = &d->sl;

	if (p >= d->n_phases)
		return 0;
	size_t span = d->phase_span[p];
	for (size_t i = 0; i < sl->n_gpus && i < cap; i++) {
		const struct dgpu *g = &sl->gpus[i];
		out[i] = (struct t4_dec_gpu_busy){
			g->context, g->driver, g->timeline, span < g->n_busy ? g->busy[span] : 0,
		};
	}
	return sl->n_gpus;
}

const struct t4_dec_slices *t4_decoder_slice_stats(const struct t4_decoder *d)
{
	return &d->sl.st;
}

const char *t4_decoder_thread_name(const struct t4_decoder *d, uint32_t tid)
{
	int64_t i = dec_idmap_get(&d->sl.task_map, tid);

	return i >= 0 ? d->sl.tasks[i].name : "";
}
