/* dom.c - one clock domain's pipeline: return packets in, intervals out.
 *
 *   returns --(reorder, DEC_REORDER)--> clock model --> placed samples
 *           --(join: wait for the reference packets)--> intervals
 *
 * All of it lives in one ring of samples with three cursors, which
 * doubles as the samples held need it, up to DEC_QCAP: a domain's memory
 * is bounded whatever the length of the log, and small for a domain with
 * few samples (a crafted log's thousands of domains cost little). Returns are
 * kept in trigger order on arrival (a late one is slotted in; one later
 * than the reorder window, or a second copy, is counted and dropped so
 * nothing is counted twice). A read failure is no sample: the next good
 * read's deltas cover it. Consecutive samples make an interval; a trigger
 * the domain did not answer makes the next interval span it, with its
 * counts carried (answered late, dropped at a full ring) or, when a damaged
 * chunk lies between the two samples, lost: the interval is then PARTIAL.
 *
 * Cost: once per return packet, in the usual case (in order, the ring
 * big enough, the domain's scheduler cached, the interval inside one
 * phase), about 330 instructions from the feed to the phase totals for the
 * summary, the reader and the clock model apart (callgrind on the 60 s sim
 * log of issue 19: 328, was 495 by the same count before summed(), and
 * 506, 676 and 914 before that); about 485 for an output that takes
 * every interval (emit()'s way). The rare paths
 * (a wider sample, a bigger or full ring, a late or repeated return, a
 * scheduler to search for, the end of the log) are out of line, so the
 * usual one carries no frame for them; the steps of the usual one that
 * were calls of their own (model_push, emit, the interval's attribution
 * and piece) are inline, the counts are copied in one memcpy, the histogram
 * buckets of small values come from a table (dec_hist_add), and a
 * reference packet visits only the domains that hold placed samples
 * (d->waiting), not all of them. A decode that wants the intervals'
 * totals alone (the summary, -f phases) sums the usual interval in a loop
 * of its own (summed(): about 27 instructions an interval and 4.5 a
 * count, where emit()'s interval, its attribution and the run's sum took
 * about 230), the checks that hold for a whole call of hand_out() made
 * once.
 */
#include "decode_int.h"
#include "collector/collector.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static struct dsample *at(const struct dom *dm, uint64_t seq)
{
	return &dm->q[seq & dm->qmask];
}

static uint64_t *counts_at(const struct dom *dm, uint64_t seq)
{
	return &dm->qc[(seq & dm->qmask) * dm->ncap];
}

/* ---- metadata: names, units, metrics ------------------------------------ */

static int lookup_event(void *ud, const char *name, size_t len)
{
	const struct dom *dm = ud;

	for (uint32_t i = 0; i < dm->pub.n_counts; i++)
		if (strlen(dm->names[i]) == len && !strncmp(dm->names[i], name, len))
			return (int)i;
	return -1;
}

static bool glob_ok(const char *glob, const char *name)
{
	return dec_glob_any(glob, name, 0);
}

/* Room for n compiled metrics (only what the domain's kind has: most have
 * a handful, the reference-clocked ones none). */
static int metric_room(struct dom *dm, size_t n)
{
	struct t4_expr *e;

	if (n <= dm->metric_cap)
		return 0;
	if (!(e = realloc(dm->metric, n * sizeof(*e))))
		return t4_err(ENOMEM, "out of memory");
	dm->metric = e;
	dm->metric_cap = n;
	return 0;
}

/* One metric made from events: name, unit "%", compiled expr. */
static void add_made_metric(struct t4_decoder *d, struct dom *dm, const char *name,
			    const char *expr)
{
	uint32_t m = dm->pub.n_metrics;

	if (m >= T4_MAX_COUNTERS)
		return;
	snprintf(dm->made[m].name, sizeof(dm->made[m].name), "%s", name);
	snprintf(dm->made[m].expr, sizeof(dm->made[m].expr), "%s", expr);
	dm->pub.metric_name[m] = dm->made[m].name;
	dm->pub.metric_formula[m] = dm->made[m].expr;
	dm->pub.metric_unit[m] = "%";
	dm->pub.metric_brief[m] = true;
	dm->pub.metric_selected[m] = glob_ok(d->o.event_glob, dm->made[m].name);
	dm->metric_ok[m] = dec_expr_compile(expr, lookup_event, dm, &dm->metric[m]) == 0;
	dm->pub.n_metrics++;
}

/* The DRM domain's metrics come from its events (FORMAT 6.2:
 * dec_drm_metric, metrics.c). */
static int drm_metrics(struct t4_decoder *d, struct dom *dm)
{
	char name[2 * T4_NAME_MAX], expr[6 * T4_NAME_MAX];
	int rc;

	dm->pub.n_metrics = 0;
	if (!dm->made && !(dm->made = calloc(T4_MAX_COUNTERS, sizeof(*dm->made))))
		return t4_err(ENOMEM, "out of memory");
	if ((rc = metric_room(dm, T4_MAX_COUNTERS)) < 0)
		return rc;
	for (uint32_t i = 0; i < dm->pub.n_counts; i++)
		if (dec_drm_metric(dm->pub.event_name, dm->pub.n_counts, i, name, sizeof(name), expr,
				   sizeof(expr)))
			add_made_metric(d, dm, name, expr);
	return 0;
}

/* A per-task formula (collector.h) reads only events that count a task
 * (T4_EV_TASK): counted per CPU, its events mean something else (per CPU,
 * task-clock runs whether the CPU is busy or idle); elsewhere it is absent. */
struct task_lookup {
	const struct t4_decoder *d;
	struct dom *dm;
};

static int lookup_task_event(void *ud, const char *name, size_t len)
{
	const struct task_lookup *t = ud;
	int i = lookup_event(t->dm, name, len);
	const struct t4_event_pkt *e = i >= 0 ? t4_index_event(t->d->ix, t->dm->pub.id, (uint32_t)i)
					      : NULL;

	return e && (e->flags & T4_EV_TASK) ? i : -1;
}

static int compile_formula(const struct t4_decoder *d, struct dom *dm, const struct t4_formula *f,
			   struct t4_expr *out)
{
	struct task_lookup tl = { d, dm };

	if (f->per_task)
		return dec_expr_compile(f->expr, lookup_task_event, &tl, out);
	return dec_expr_compile(f->expr, lookup_event, dm, out);
}

static int refresh_metrics(struct t4_decoder *d, struct dom *dm, uint32_t kind)
{
	size_t n;
	const struct t4_formula *f = t4_kind_formulas(kind, &n, &dm->pub.kind_label);
	int rc;

	if (kind == T4_DOM_DRM)
		return drm_metrics(d, dm);
	if (n > T4_MAX_COUNTERS)
		n = T4_MAX_COUNTERS;
	dm->pub.n_metrics = 0;
	if ((rc = metric_room(dm, n)) < 0)
		return rc;
	dm->pub.n_metrics = (uint32_t)n;
	for (size_t m = 0; m < n; m++) {
		dm->pub.metric_name[m] = f[m].name;
		dm->pub.metric_unit[m] = f[m].unit;
		dm->pub.metric_formula[m] = f[m].expr;
		dm->pub.metric_brief[m] = f[m].brief;
		dm->pub.metric_selected[m] = glob_ok(d->o.event_glob, f[m].name);
		/* -ENOENT: an input was not recorded, the metric is absent */
		dm->metric_ok[m] = compile_formula(d, dm, &f[m], &dm->metric[m]) == 0;
	}
	return 0;
}

/* Decoders run on several threads (decode -j, merged hosts): one count. */
static _Atomic uint64_t names_ids;

int dom_refresh(struct t4_decoder *d, struct dom *dm)
{
	const struct t4_index_domain *ix = t4_index_domain(d->ix, dm->pub.id);
	int rc;

	dm->pub.ix = ix;
	dm->pub.name = ix->d.name;
	dm->any_gauge = false;
	for (uint32_t i = 0; i < dm->pub.n_counts; i++) {
		const struct t4_event_pkt *e = t4_index_event(d->ix, dm->pub.id, i);
		dm->pub.event_gauge[i] = e && (e->flags & T4_EV_GAUGE);
		dm->any_gauge |= dm->pub.event_gauge[i];
		if (e) {
			snprintf(dm->names[i], sizeof(dm->names[i]), "%s", e->name);
			snprintf(dm->units[i], sizeof(dm->units[i]), "%s", e->unit);
		} else {
			snprintf(dm->names[i], sizeof(dm->names[i]), "event%u", i);
			dm->units[i][0] = '\0';
		}
		dm->pub.event_name[i] = dm->names[i];
		dm->pub.event_unit[i] = dm->units[i];
		dm->pub.event_selected[i] = glob_ok(d->o.event_glob, dm->names[i]);
	}
	snprintf(dm->pmu, sizeof(dm->pmu), "%s", dec_domain_pmu(d->ix, dm->pub.id, dm->pub.n_counts));
	dm->pub.pmu = dm->pmu;
	dm->dirty = false;
	rc = refresh_metrics(d, dm, ix->d.kind);
	dm->pub.names_id = atomic_fetch_add(&names_ids, 1) + 1; /* never 0 */
	return rc;
}

void dom_metrics(const struct dom *dm, const double *counts, double elapsed, double *out)
{
	for (uint32_t m = 0; m < dm->pub.n_metrics; m++)
		out[m] = dm->metric_ok[m] ? dec_expr_eval(&dm->metric[m], counts, elapsed) : NAN;
}

/* ---- storage ---------------------------------------------------------------- */

/* A copy of rows x old totals with n per row (NULL when rows is 0). */
static t4_u128 *restride(const t4_u128 *t, size_t rows, uint32_t old, uint32_t n)
{
	t4_u128 *r = rows ? calloc(rows * n, sizeof(*r)) : NULL;

	for (size_t i = 0; r && i < rows && old; i++)
		memcpy(&r[i * n], &t[i * old], old * sizeof(*r));
	return r;
}

/* Room for n counts per sample (a domain's packets may grow). */
static int grow_counts(struct t4_decoder *d, struct dom *dm, uint32_t n)
{
	uint32_t old = dm->ncap;
	uint64_t *qc = calloc((size_t)dm->qcap * n, sizeof(*qc));
	uint64_t *cell = calloc(n, sizeof(*cell)), *scratch = calloc(n, sizeof(*scratch));
	t4_u128 *level_ns = calloc(n, sizeof(*level_ns));
	double *dc = calloc(n, sizeof(*dc));
	t4_u128 *run = calloc(n, sizeof(*run)), *ptot, *ntot;
	uint64_t *run_lo = calloc(n, sizeof(*run_lo));

	phases_flush(dm); /* the totals are restrided */
	ptot = restride(dm->ptot, dm->n_ptot, old, n);
	ntot = restride(dm->ntot, dm->n_ntot, old, n);
	if (!qc || !cell || !scratch || !dc || !run || !run_lo || !level_ns ||
	    (dm->n_ptot && !ptot) || (dm->n_ntot && !ntot)) {
		free(level_ns);
		free(run);
		free(run_lo);
		free(qc);
		free(cell);
		free(scratch);
		free(dc);
		free(ptot);
		free(ntot);
		return t4_err(ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < dm->qcap && old; i++)
		memcpy(&qc[i * n], &dm->qc[i * old], old * sizeof(*qc));
	if (old) {
		memcpy(cell, dm->bin.counts, old * sizeof(*cell));
		memcpy(level_ns, dm->bin.level_ns, old * sizeof(*level_ns));
	}
	free(dm->qc);
	free(dm->bin.counts);
	free(dm->bin.level_ns);
	free(dm->scratch);
	free(dm->dcounts);
	free(dm->ptot);
	free(dm->ntot);
	free(dm->run);
	free(dm->run_lo);
	dm->run = run;
	dm->run_lo = run_lo;
	dm->ntot = ntot;
	dm->qc = qc;
	dm->bin.counts = cell;
	dm->bin.level_ns = level_ns;
	dm->scratch = scratch;
	dm->dcounts = dc;
	dm->ptot = ptot;
	dm->ncap = n;
	if (n > dm->pub.n_counts) {
		dm->pub.n_counts = n;
		return dom_refresh(d, dm);
	}
	return 0;
}

void dom_free(struct dom *dm)
{
	if (!dm)
		return;
	free(dm->q);
	free(dm->qc);
	free(dm->segs);
	free(dm->ptot);
	free(dm->pel);
	free(dm->ntot);
	free(dm->nel);
	free(dm->run);
	free(dm->run_lo);
	free(dm->bin.counts);
	free(dm->bin.level_ns);
	free(dm->scratch);
	free(dm->dcounts);
	free(dm->metrics);
	free(dm->metric);
	free(dm->made);
	clk_free(&dm->clk);
	free(dm);
}

void dom_trim(struct dom *dm)
{
	free(dm->q);
	free(dm->qc);
	dm->q = NULL;
	dm->qc = NULL;
	dm->qcap = 0;
	dm->qmask = 0;
	clk_free(&dm->clk);
}

static void on_place(void *ud, const struct clk_pt *p, unsigned n, const uint64_t *t,
		     const uint64_t *bound, bool nonlinear);
static void on_segment(void *ud, const struct t4_clock_segment *seg);

static struct dom *dom_new(struct t4_decoder *d, uint32_t id)
{
	const struct t4_index_domain *ix = t4_index_domain(d->ix, id);
	struct dom *dm = calloc(1, sizeof(*dm));

	dec_hist_init();
	if (dm) {
		dm->qcap = DEC_QCAP_FIRST;
		dm->qmask = DEC_QCAP_FIRST - 1;
	}
	if (!dm || !(dm->q = calloc(dm->qcap, sizeof(*dm->q))) ||
	    !(dm->metrics = calloc(T4_MAX_COUNTERS, sizeof(*dm->metrics))) ||
	    !(dm->pub.ix = ix)) {
		dom_free(dm);
		t4_err(ENOMEM, "out of memory");
		return NULL;
	}
	dm->d = d;
	dm->ixw = ix->redescribed ? NULL : dec_index_domain_rw(d->ix, id); /* (decode.c) */
	dm->pub.id = id;
	dm->sched_idx = -1;
	dm->clocked = ix->described && ix->d.clock_event >= 0;
	clk_init(&dm->clk, (double)ix->d.nominal_hz, on_place, dm);
	dm->clk.on_segment = on_segment;
	if (dom_refresh(d, dm) < 0) {
		dom_free(dm);
		return NULL;
	}
	dm->pub.selected = dec_domain_selected(d->o.pmu_glob, ix->d.name, dm->pmu,
					       dm->pub.kind_label, ix->d.kind);
	dm->pub.clock.reference_clocked = !dm->clocked;
	dm->pub.clock.model = dm->clocked ? d->o.model : T4_CLOCK_WINDOW;
	if (grow_counts(d, dm, ix->n_counts ? ix->n_counts : 1) < 0) {
		dom_free(dm);
		return NULL;
	}
	return dm;
}

struct dom *dom_of(struct t4_decoder *d, uint32_t id)
{
	int64_t slot = dec_idmap_get(&d->dom_map, id);
	struct dom *dm;

	if (slot >= 0)
		return d->doms[slot];
	if (dec_vec_room((void **)&d->doms, &d->cap_doms, d->n_doms, sizeof(*d->doms)) < 0 ||
	    !(dm = dom_new(d, id)))
		return NULL;
	if (dec_idmap_put(&d->dom_map, id, (uint32_t)d->n_doms) < 0) {
		dom_free(dm);
		return NULL;
	}
	dm->slot = (uint32_t)d->n_doms;
	d->doms[d->n_doms++] = dm;
	return dm;
}

int dom_elsewhere(struct t4_decoder *d, uint32_t id)
{
	int rc = dec_vec_room((void **)&d->doms, &d->cap_doms, d->n_doms, sizeof(*d->doms));

	if (rc < 0 || (rc = dec_idmap_put(&d->dom_map, id, (uint32_t)d->n_doms)) < 0)
		return rc;
	d->doms[d->n_doms++] = NULL;
	return 0;
}

/* ---- the clock model's callbacks ------------------------------------------ */

uint8_t dec_hist_small[DEC_HIST_SMALL];

static void hist_small_fill(void)
{
	for (uint64_t v = 0; v < DEC_HIST_SMALL; v++)
		dec_hist_small[v] = (uint8_t)t4_hist_bucket(v);
}

void dec_hist_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, hist_small_fill);
}

/* The window midpoints of the n samples p, and their half-widths, into t
 * and bound: the placement of --clock-model offset and window (out of
 * line: on_place()'s loop stays the rate model's). */
static __attribute__((noinline)) void midpoints(const struct dom *dm, const struct clk_pt *p,
						unsigned n, uint64_t *t, uint64_t *bound)
{
	for (unsigned i = 0; i < n; i++) {
		const struct dsample *s = at(dm, p[i].seq);
		t[i] = s->lo + (s->hi - s->lo) / 2;
		bound[i] = (s->hi - s->lo) / 2;
	}
}

/* The n >= 1 samples p placed at t[i] with bound[i] (clk_place_fn: the
 * clock model places a block at a time, n <= CLOCK_BLOCK; a domain
 * without a clock, one sample). The domain's last instant, and the bound
 * histogram's count and maximum, are kept in locals across the block. */
static void on_place(void *ud, const struct clk_pt *p, unsigned n, const uint64_t *t,
		     const uint64_t *bound, bool nonlinear)
{
	struct dom *dm = ud;
	uint64_t mt[CLOCK_BLOCK], mb[CLOCK_BLOCK];
	bool have = dm->have_last_t;
	uint64_t last = dm->last_t, max = dm->bound.max, *bucket = dm->bound.bucket;

	if (dm->pub.clock.model != T4_CLOCK_RATE) {
		midpoints(dm, p, n, mt, mb);
		t = mt;
		bound = mb;
	}
	for (unsigned i = 0; i < n; i++) {
		struct dsample *s = at(dm, p[i].seq);
		uint64_t ti = t[i], b = bound[i];
		if (ti <= last && (i || have))
			ti = last + 1; /* never a zero or negative interval */
		last = ti;
		s->t = ti;
		s->bound = b;
		s->nonlinear = nonlinear;
		bucket[dec_hist_bucket(b)]++; /* dec_hist_add(), its count and
					       * maximum once a block */
		max = b > max ? b : max;
	}
	dm->bound.n += n;
	dm->bound.max = max;
	dm->last_t = last;
	dm->have_last_t = true;
	dm->pub.clock.nonlinear += nonlinear ? n : 0;
	dm->pcur = p[n - 1].seq + 1;
}

static void on_segment(void *ud, const struct t4_clock_segment *seg)
{
	struct dom *dm = ud;
	struct t4_clock_stats *c = &dm->pub.clock;
	double dur = (double)(seg->end_ns - seg->start_ns);

	if (dm->n_segs < DEC_MAX_SEGMENTS &&
	    dec_vec_room((void **)&dm->segs, &dm->cap_segs, dm->n_segs, sizeof(*seg)) == 0)
		dm->segs[dm->n_segs++] = *seg;
	if (isfinite(seg->freq_hz) && dur > 0) {
		dm->freq_w += seg->freq_hz * dur;
		dm->dur_w += dur;
	}
	dm->res_ss += seg->residual_ns * seg->residual_ns * (double)seg->samples;
	dm->res_n += (double)seg->samples;
	c->segments++;
}

/* A sample of a domain without a clock, placed at its window's middle
 * (out of line: its frame is not the clocked sample's). */
static __attribute__((noinline)) void place_unclocked(struct dom *dm, const struct clk_pt *p)
{
	uint64_t t = p->lo + (p->hi - p->lo) / 2, bound = (p->hi - p->lo) / 2;

	on_place(dm, p, 1, &t, &bound, false);
}

/* Give sample seq to the clock model (or place it: no clock). Inline:
 * once per return packet, a call and its frame less. */
static inline __attribute__((always_inline)) void model_push(struct dom *dm, uint64_t seq)
{
	struct dsample *s = at(dm, seq);

	dm->last_modeled = s->trigger;
	dm->have_modeled = true;
	dm->pub.clock.samples++;
	dec_hist_add(&dm->window, s->hi - s->lo);
	struct clk_pt p = { seq, s->trigger, s->x, s->lo, s->hi };
	if (dm->clocked)
		clk_push(&dm->clk, &p);
	else
		place_unclocked(dm, &p);
}

/* ---- intervals ------------------------------------------------------------ */

/* The domain's scheduler, searched for (its index cached). */
static __attribute__((noinline)) const struct dsched *sched_find(struct t4_decoder *d,
								 struct dom *dm)
{
	uint32_t id = dm->pub.ix->d.sched_id;

	for (size_t i = 0; i < d->n_scheds; i++)
		if (d->scheds[i].id == id) {
			dm->sched_idx = (int)i;
			return &d->scheds[i];
		}
	return NULL;
}

static inline const struct dsched *sched_of(struct t4_decoder *d, struct dom *dm)
{
	if (dm->sched_idx >= 0 && (size_t)dm->sched_idx < d->n_scheds &&
	    d->scheds[dm->sched_idx].id == dm->pub.ix->d.sched_id)
		return &d->scheds[dm->sched_idx];
	return sched_find(d, dm);
}

int dom_output(struct t4_decoder *d, struct dom *dm, struct t4_interval *iv)
{
	iv->metrics = NULL;
	if (d->o.want_metrics) {
		for (uint32_t i = 0; i < iv->n_counts; i++)
			dm->dcounts[i] = (double)iv->counts[i];
		dom_metrics(dm, dm->dcounts, (double)iv->elapsed_ns, dm->metrics);
		iv->metrics = dm->metrics;
	}
	if (!d->ops.interval)
		return 0;
	int rc = d->split ? dec_split_row(d, dm->slot + 1) : 0; /* decode -j: merged in order */
	return rc < 0 ? rc : d->ops.interval(d->ud, d, iv);
}

static inline uint64_t elapsed_of(const struct dom *dm, const struct dsample *s, uint64_t start,
			   uint64_t end)
{
	if (dm->pub.clock.model != T4_CLOCK_OFFSET || !dm->clocked)
		return end - start;
	double hz = (double)dm->pub.ix->d.nominal_hz;
	if (hz > 0 && s->x > dm->prev.x)
		return (uint64_t)dec_round((double)(s->x - dm->prev.x) * 1e9 / hz);
	return end - start;
}

/* Flags of the interval that sample s closes, and the missing-trigger
 * accounting of the gap before it. */
static inline uint32_t interval_flags(struct dom *dm, const struct dsample *s)
{
	uint32_t f = 0;
	uint64_t gap = s->trigger > dm->prev.trigger + 1 ? s->trigger - dm->prev.trigger - 1 : 0;

	if (gap) {
		f |= T4_IV_SPANS;
		if (s->epoch != dm->prev.epoch) {
			f |= T4_IV_PARTIAL;
			dm->pub.unanswered_lost += gap;
		} else {
			dm->pub.unanswered_carried += gap;
		}
	}
	if (s->flags & T4_RET_MULTIPLEXED)
		f |= T4_IV_MULTIPLEXED;
	if (s->flags & T4_RET_BACKWARDS)
		f |= T4_IV_BACKWARDS;
	if (s->nonlinear)
		f |= T4_IV_NONLINEAR;
	return f;
}

/* An interval across a damaged stretch of the file holds only the counts
 * read after the last packet the damage took: it keeps the time those
 * counts cover, at its end (its clock's count at the model's rate, or the
 * domain's last interval's length), and the stretch before it is a hole:
 * rates stay true, and no time is counted without its counts. */
static __attribute__((noinline)) void counted_part(const struct t4_decoder *d,
						   const struct dom *dm, const uint64_t *counts,
						   struct t4_interval *iv)
{
	int32_t ce = dm->pub.ix->d.clock_event;
	uint64_t len = iv->end_ns - iv->start_ns, dt;

	if (dm->clocked && ce >= 0 && (uint32_t)ce < iv->n_counts && dm->clk.last_b > 0)
		dt = (uint64_t)dec_round((double)counts[ce] * dm->clk.last_b);
	else if (dm->last_elapsed)
		dt = dm->last_elapsed;
	else
		dt = d->period_ns;
	if (!dt || dt > len)
		dt = len;
	iv->start_ns = iv->end_ns - dt;
	iv->elapsed_ns = dt;
}

/* emit() sets an interval field by field (no zeroing): a field added to
 * struct t4_interval must be set there too. */
_Static_assert(sizeof(struct t4_interval) == 88, "emit(): set every field of an interval");

/* The interval sample s closes (sc: the domain's scheduler, for its
 * reference packet) to the totals and the outputs. Inline in hand_out()'s
 * loop, with the attribution of the usual interval (attrib_interval(),
 * attrib_piece()): once per return packet, a call and its frame less;
 * should the compiler leave either out of line, the loop spills. */
static inline __attribute__((always_inline)) int emit(struct t4_decoder *d, struct dom *dm,
						      const struct dsched *sc,
						      const struct dsample *s,
						      const uint64_t *counts)
{
	int rc = 0;

	if (!dm->have_prev || (s->flags & T4_RET_FIRST)) {
		/* a baseline; without one, this sample's counts have no start */
		dm->pub.unplaced += !dm->have_prev && !(s->flags & T4_RET_FIRST);
		goto done;
	}
	if (dm->dirty && (rc = dom_refresh(d, dm)) < 0)
		return rc;
	const struct refent *ref = dec_ref(sc, s->trigger);
	/* field by field: a zeroed struct costs a loop of stores */
	struct t4_interval iv;
	iv.domain = dm->slot;
	iv.trigger = s->trigger;
	iv.first_trigger = dm->prev.trigger + 1;
	iv.start_ns = dm->prev.t;
	iv.end_ns = s->t;
	iv.elapsed_ns = elapsed_of(dm, s, iv.start_ns, iv.end_ns);
	iv.bound_ns = s->bound;
	iv.bookmark_id = iv.occurrence = 0; /* the phase's: attrib.c */
	iv.flags = interval_flags(dm, s);
	iv.n_counts = s->n;
	iv.counts = counts;
	iv.metrics = NULL; /* dom_output()'s */
	if (iv.flags & T4_IV_PARTIAL)
		counted_part(d, dm, counts, &iv);
	else
		dm->last_elapsed = iv.elapsed_ns;
	if (!ref)
		iv.flags |= T4_IV_NO_REF;
	rc = attrib_interval(d, dm, &iv);
done:
	dm->prev = *s;
	dm->have_prev = true;
	return rc;
}

/* emit() for the rare paths (a full ring): one copy of it out of line. */
static __attribute__((noinline)) int emit_rare(struct t4_decoder *d, struct dom *dm)
{
	return emit(d, dm, sched_of(d, dm), at(dm, dm->head), counts_at(dm, dm->head));
}

static void finish_stats(struct dom *dm)
{
	struct t4_clock_stats *c = &dm->pub.clock;

	c->window_p50 = t4_hist_quantile(&dm->window, 0.5);
	c->window_p99 = t4_hist_quantile(&dm->window, 0.99);
	c->bound_p50 = t4_hist_quantile(&dm->bound, 0.5);
	c->bound_p99 = t4_hist_quantile(&dm->bound, 0.99);
	c->freq_hz = dm->dur_w > 0 ? dm->freq_w / dm->dur_w : NAN;
	c->drift_ppm = dm->pub.ix->d.nominal_hz && isfinite(c->freq_hz)
			       ? (c->freq_hz / (double)dm->pub.ix->d.nominal_hz - 1) * 1e6
			       : NAN;
	c->residual_ns = dm->res_n > 0 ? sqrt(dm->res_ss / dm->res_n) : NAN;
}

/* How many triggers past k the phase scheduler's stream must be before the
 * interval k closes is handed out: those a writer may let a late bookmark
 * trail (t4_bookmark_late_triggers: FORMAT.md 6.1), for a bookmark timed
 * elsewhere (the probe's) reaches the log with the trigger that takes it,
 * after its time; within the look-ahead. Only in logs with the CPU/GPU
 * phases (the probe's condition): holding samples longer costs the join
 * its cache (~8% of the decode's time). */
static uint64_t bookmark_lag(const struct t4_decoder *d)
{
	uint64_t lag = d->period_ns && d->sl.n_tasks ? t4_bookmark_late_triggers(d->period_ns) : 0;

	return lag < d->o.lookahead ? lag : d->o.lookahead - 1;
}

/* Whether the interval trigger k closes can be handed out: its reference
 * packet is here and the phase scheduler's stream has passed k far enough
 * (so every bookmark set before it has been read: bookmark_lag), or the
 * reference packets have run the whole look-ahead past k without it. */
static bool joinable(const struct t4_decoder *d, const struct dsched *s, uint64_t k)
{
	const struct dsched *ps;

	if (!s || !s->any)
		return false;
	if (k + d->o.lookahead <= s->watermark)
		return true;
	if (!dec_ref(s, k))
		return false;
	ps = d->have_phase_sched ? dec_sched_find(d, d->phase_sched) : NULL;
	return !ps || ps->watermark > k + bookmark_lag(d);
}

/* Whether the domain holds placed samples the join has not let out, in
 * the decoder's bitmap (drain_sched visits those): every path that places
 * samples ends in hand_out(), which says it. */
static void mark_waiting(struct t4_decoder *d, const struct dom *dm)
{
	uint64_t bit = (uint64_t)1 << (dm->slot % 64);

	if (dm->head < dm->pcur)
		d->waiting[dm->slot / 64] |= bit;
	else
		d->waiting[dm->slot / 64] &= ~bit;
}

/* Whether the decode wants of an interval no more than its totals: no
 * output takes intervals one by one (rows, metrics, bins), and no filter
 * may drop one (--from/--to, --phase; the origin is fixed, so the window
 * asks nothing). The summary's (and -f phases') decode: constant from its
 * first interval on. */
static bool totals_only(const struct t4_decoder *d)
{
	return !d->ops.interval && !d->o.want_metrics && !d->o.bin_ns && !d->o.phase &&
	       !d->o.from.set && !d->o.to.set && d->have_origin && !d->test_no_cursor;
}

/* Whether the domain's next intervals may be summed (summed()): its
 * previous sample known, its first interval had, no gauge, no --clock-model
 * offset lengths, its names current, and its span cursor and run on the
 * spans as they are (a piece in the cursor's span continues the run). */
static bool summable(const struct t4_decoder *d, const struct dom *dm)
{
	return dm->have_prev && dm->pub.first_ns && !dm->any_gauge && !dm->dirty &&
	       (dm->pub.clock.model != T4_CLOCK_OFFSET || !dm->clocked) && d->n_spans &&
	       dm->span_gen == d->span_gen && dm->run_open && dm->run_gen == d->span_gen &&
	       dm->run_span == dm->span_hint;
}

/* emit() of the placed samples from head on while each is the usual one
 * for a decode that wants totals only (totals_only, summable): joinable by
 * the watermark alone (all: the log has ended), the next trigger after the
 * previous sample (no gap, no first of a recording), and closing an
 * interval whole inside the span of the domain's cursor. Such an interval
 * is only its counts and length added to the run, with the domain's
 * counters: in a loop of its own, without the interval emit() builds for
 * the outputs, its flags, its reference packet and the checks that are
 * constant here (out of line: the loop keeps its registers). Returns how
 * many it took; the first it leaves is emit()'s. */
static __attribute__((noinline)) uint64_t summed(struct t4_decoder *d, struct dom *dm,
						 const struct dsched *s, bool all)
{
	uint64_t wm = all ? UINT64_MAX : s->watermark, ahead = all ? 0 : d->o.lookahead;
	uint64_t lo = dm->span_lo, hi = dm->span_hi, trig = dm->prev.trigger, t = dm->prev.t;
	bool exact = d->exact_phases;

	/* the triggers it may take, from trig + 1 on (consecutive): joinable,
	 * k + ahead <= wm, and, by trigger, in the cursor's span [lo, hi); by
	 * time, each ends in it (t <= hi; the first starts in it: times only
	 * grow) */
	if (wm < ahead || trig == UINT64_MAX ||
	    (exact ? t < lo : trig + 1 < lo || trig + 1 >= hi))
		return 0;
	uint64_t tmax = wm - ahead, tlim = exact ? hi : UINT64_MAX;
	if (!exact && hi - 1 < tmax) /* (hi > trig + 1) */
		tmax = hi - 1;
	if (tmax <= trig)
		return 0;
	uint64_t head = dm->head, seq = head, end = dm->pcur, mask = dm->qmask;
	if (end - seq > tmax - trig)
		end = seq + (tmax - trig);
	const struct dsample *q = dm->q;
	const uint64_t *qc = dm->qc;
	uint32_t ncap = dm->ncap;
	uint64_t base = trig + 1 - head; /* sample seq's trigger, less seq */
	uint64_t *run_lo = dm->run_lo;
	t4_u128 *run = dm->run;

	/* as attrib_interval() takes the span's own: by time, each starts
	 * before the span's end (at < hi) and ends in it; one that ends before
	 * it starts (a crafted log's times) is cut by attrib_any(): emit()'s */
	for (uint64_t at = t; seq < end; seq++) {
		const struct dsample *y = &q[seq & mask];
		if (y->trigger - seq != base || (y->flags & T4_RET_FIRST) || y->t > tlim ||
		    y->t < at || (exact && at >= hi))
			break;
		at = y->t;
		phases_run_counts(run_lo, run, &qc[(seq & mask) * ncap], y->n);
	}
	uint64_t n = seq - head;
	if (!n)
		return 0;
	/* the lengths, end to start, add up to the last end less the first start */
	const struct dsample *x = &q[(seq - 1) & mask];
	dm->last_elapsed = x->t - (n > 1 ? q[(seq - 2) & mask].t : t);
	dm->run_el += x->t - t;
	d->selected += n;
	dm->pub.intervals += n;
	dm->pub.last_ns = x->t;
	dm->prev = *x;
	dm->head = seq;
	return n;
}

/* Hand out the placed samples the join allows (all: every one). */
static int hand_out(struct t4_decoder *d, struct dom *dm, bool all)
{
	const struct dsched *s = sched_of(d, dm);
	bool sum = (all || (s && s->any)) && totals_only(d);
	int rc = 0;

	while (dm->head < dm->pcur && rc >= 0) {
		if (sum && summable(d, dm) && summed(d, dm, s, all))
			continue;
		const struct dsample *x = at(dm, dm->head);
		if (!all && !joinable(d, s, x->trigger) && dm->tail - dm->head < DEC_QCAP / 2)
			break;
		rc = emit(d, dm, s, x, counts_at(dm, dm->head));
		dm->head++;
	}
	mark_waiting(d, dm);
	return rc;
}

/* The log has ended: every sample placed and handed out (out of line). */
static __attribute__((noinline)) int drain_all(struct t4_decoder *d, struct dom *dm)
{
	int rc;

	while (dm->mcur < dm->tail)
		model_push(dm, dm->mcur++);
	if (dm->clocked)
		clk_flush(&dm->clk);
	rc = hand_out(d, dm, true);
	finish_stats(dm);
	return rc;
}

/* Hand out the placed samples the join allows; all: the log has ended. */
int dom_drain(struct t4_decoder *d, struct dom *dm, bool all)
{
	if (all)
		return drain_all(d, dm);
	if (dm->head == dm->pcur)
		return 0; /* nothing placed since: the usual case */
	return hand_out(d, dm, false);
}

/* ---- returns in -------------------------------------------------------------- */

/* Double the ring: the samples held, [head, tail), keep their sequence
 * numbers at their new places. */
static int ring_grow(struct dom *dm)
{
	uint32_t cap = dm->qcap * 2;
	/* only [head, tail) is ever read: no need to clear */
	struct dsample *q = malloc(cap * sizeof(*q));
	uint64_t *qc = malloc((size_t)cap * dm->ncap * sizeof(*qc));

	if (!q || !qc) {
		free(q);
		free(qc);
		return t4_err(ENOMEM, "out of memory");
	}
	for (uint64_t seq = dm->head; seq < dm->tail; seq++) {
		q[seq & (cap - 1)] = *at(dm, seq);
		memcpy(&qc[(seq & (cap - 1)) * dm->ncap], counts_at(dm, seq),
		       dm->ncap * sizeof(*qc));
	}
	free(dm->q);
	free(dm->qc);
	dm->q = q;
	dm->qc = qc;
	dm->qcap = cap;
	dm->qmask = cap - 1;
	return 0;
}

/* Where a return of this trigger goes among the samples held for
 * reordering, when it is not the next in order; -1: a second copy or
 * too late (counted). */
static __attribute__((noinline)) int64_t slot_late(struct dom *dm, uint64_t trigger)
{
	uint64_t pos = dm->tail;

	if (dm->have_modeled && trigger <= dm->last_modeled) {
		for (uint64_t i = dm->head; i < dm->mcur; i++)
			if (at(dm, i)->trigger == trigger) {
				dm->pub.duplicates++;
				return -1;
			}
		dm->pub.too_late++;
		return -1;
	}
	while (pos > dm->mcur && at(dm, pos - 1)->trigger > trigger)
		pos--;
	if (pos > dm->mcur && at(dm, pos - 1)->trigger == trigger) {
		dm->pub.duplicates++;
		return -1;
	}
	return (int64_t)pos;
}

static inline int64_t slot_for(struct dom *dm, uint64_t trigger)
{
	uint64_t pos = dm->tail;

	if (pos > dm->mcur && at(dm, pos - 1)->trigger < trigger)
		return (int64_t)pos; /* in order: the usual case */
	return slot_late(dm, trigger);
}

/* Room at pos for a late return: the samples from pos on move up one
 * (out of line: seldom). */
static __attribute__((noinline)) void make_gap(struct dom *dm, uint64_t pos)
{
	for (uint64_t i = dm->tail; i > pos; i--) {
		*at(dm, i) = *at(dm, i - 1);
		memcpy(counts_at(dm, i), counts_at(dm, i - 1), dm->ncap * sizeof(uint64_t));
	}
}

static void insert_at(struct dom *dm, uint64_t pos, const struct t4_ret_pkt *r, uint32_t epoch)
{
	if (pos < dm->tail)
		make_gap(dm, pos);
	struct dsample *s = at(dm, pos);
	s->trigger = r->trigger_id;
	s->x = r->local_clock;
	s->lo = r->read_begin_ns;
	s->hi = r->read_end_ns >= r->read_begin_ns ? r->read_end_ns : r->read_begin_ns;
	s->flags = r->flags;
	s->epoch = epoch;
	s->n = r->n_counts;
	s->nonlinear = false;
	uint64_t *c = counts_at(dm, pos);
	/* n_counts <= ncap (grow_counts); one call, not a loop of five
	 * instructions a count */
	memcpy(c, r->counts, r->n_counts * sizeof(*c));
	for (uint32_t i = r->n_counts; i < dm->ncap; i++)
		c[i] = 0;
	dm->tail++;
}

/* Room for a return of n counts: wider samples, a bigger ring, or, at
 * DEC_QCAP, samples pushed through the model and handed out without
 * waiting (out of line: a domain's ring soon has the room it needs). */
static __attribute__((noinline)) int make_room(struct t4_decoder *d, struct dom *dm, uint32_t n)
{
	int rc;

	if (n > dm->ncap && (rc = grow_counts(d, dm, n)) < 0)
		return rc;
	if (dm->tail - dm->head >= dm->qmask && dm->qcap < DEC_QCAP &&
	    (rc = ring_grow(dm)) < 0)
		return rc;
	while (dm->tail - dm->head >= dm->qmask) {
		/* full: push the model and hand out without waiting */
		if (dm->mcur < dm->tail)
			model_push(dm, dm->mcur++);
		if (dm->head < dm->pcur) {
			if ((rc = emit_rare(d, dm)) < 0)
				return rc;
			dm->head++;
		} else if (dm->mcur == dm->tail) {
			clk_flush(&dm->clk);
		}
	}
	return 0;
}

int dom_take(struct t4_decoder *d, struct dom *dm, const struct t4_ret_pkt *r)
{
	int64_t pos;
	int rc;

	if (r->flags & T4_RET_READ_FAILED) {
		dm->pub.read_failed++; /* the next good read covers it */
		return 0;
	}
	if ((r->n_counts > dm->ncap || dm->tail - dm->head >= dm->qmask) &&
	    (rc = make_room(d, dm, r->n_counts)) < 0)
		return rc;
	if ((pos = slot_for(dm, r->trigger_id)) < 0)
		return 0;
	insert_at(dm, (uint64_t)pos, r, d->epoch);
	while (dm->tail - dm->mcur > DEC_REORDER)
		model_push(dm, dm->mcur++);
	return dom_drain(d, dm, false);
}
