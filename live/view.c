/* view.c - rates and metrics between two live snapshots: what `top` shows
 * and the metrics endpoint's gauges.
 *
 * A domain's interval runs from its last sample in the previous snapshot
 * to its last sample in this one (both times are reads of the reference
 * clock), its counts are the changes of its totals (a gauge: its level),
 * and its metrics are its kind's formulas over them (decode.h
 * t4_kind_metrics: the decoder's formulas and rules), compiled once per
 * domain and again only when its events change.
 */
#include "live.h"
#include "collector/collector.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct vdom {
	uint32_t id, kind, n_events;
	struct t4_kind_metrics *ms;
};

struct t4_live_view {
	struct t4_live_snap prev, cur;
	bool have_prev;
	struct t4_live_row *rows;
	size_t cap_rows;
	struct vdom *cache;
	size_t n_cache, cap_cache;
};

int t4_live_view_new(struct t4_live_view **out)
{
	return (*out = calloc(1, sizeof(**out))) ? 0 : t4_err(ENOMEM, "out of memory");
}

void t4_live_view_free(struct t4_live_view *v)
{
	if (!v)
		return;
	t4_live_snap_free(&v->prev);
	t4_live_snap_free(&v->cur);
	for (size_t i = 0; i < v->n_cache; i++)
		t4_kind_metrics_free(v->cache[i].ms);
	free(v->cache);
	free(v->rows);
	free(v);
}

/* The compiled formulas of domain d (cached by ID, kind and event count). */
static const struct t4_kind_metrics *metrics_of(struct t4_live_view *v,
						 const struct t4_live_domain *d)
{
	const char *names[T4_MAX_COUNTERS];
	uint32_t flags[T4_MAX_COUNTERS];
	struct vdom *c = NULL;

	for (size_t i = 0; i < v->n_cache && !c; i++)
		if (v->cache[i].id == d->id)
			c = &v->cache[i];
	if (c && c->kind == d->kind && c->n_events == d->n_events)
		return c->ms;
	if (!c) {
		if (v->n_cache == v->cap_cache) {
			size_t cap = v->cap_cache ? 2 * v->cap_cache : 32;
			struct vdom *n = realloc(v->cache, cap * sizeof(*n));
			if (!n)
				return NULL;
			v->cache = n;
			v->cap_cache = cap;
		}
		c = &v->cache[v->n_cache++];
		memset(c, 0, sizeof(*c));
	}
	t4_kind_metrics_free(c->ms);
	c->ms = NULL;
	c->id = d->id;
	c->kind = d->kind;
	c->n_events = d->n_events;
	for (uint32_t k = 0; k < d->n_events; k++) {
		names[k] = d->ev[k].name;
		flags[k] = d->ev[k].flags;
	}
	if (t4_kind_metrics_new(&c->ms, d->kind, names, flags, d->n_events) < 0)
		c->ms = NULL;
	return c->ms;
}

static const struct t4_live_domain *find(const struct t4_live_snap *s, uint32_t id, size_t hint)
{
	if (hint < s->n_domains && s->doms[hint].id == id)
		return &s->doms[hint];
	for (size_t i = 0; i < s->n_domains; i++)
		if (s->doms[i].id == id)
			return &s->doms[i];
	return NULL;
}

static void make_row(struct t4_live_view *v, const struct t4_live_domain *d,
		     const struct t4_live_domain *old, struct t4_live_row *r)
{
	uint64_t delta[T4_MAX_COUNTERS];
	const struct t4_kind_metrics *ms = metrics_of(v, d);

	memset(r, 0, sizeof(*r));
	r->dom = d;
	if (old && d->last_ns > old->last_ns)
		r->elapsed_ns = d->last_ns - old->last_ns;
	for (uint32_t k = 0; k < d->n_events; k++) {
		bool gauge = d->ev[k].flags & T4_EV_GAUGE;
		uint64_t before = old && k < old->n_events ? old->ev[k].total : 0;
		delta[k] = gauge ? d->ev[k].total : d->ev[k].total - before;
		r->rate[k] = gauge ? (double)delta[k]
			     : r->elapsed_ns ? (double)delta[k] * 1e9 / (double)r->elapsed_ns : NAN;
	}
	if (!ms)
		return;
	r->n_metrics = t4_kind_metrics_n(ms);
	t4_kind_metrics_eval(ms, delta, d->n_events, r->elapsed_ns, r->metric);
	for (uint32_t m = 0; m < r->n_metrics; m++) {
		const struct t4_formula *f = t4_kind_metrics_formula(ms, m);
		r->metric_name[m] = f->name;
		r->metric_unit[m] = f->unit;
		r->metric_brief[m] = f->brief;
		if (!r->elapsed_ns)
			r->metric[m] = NAN; /* no interval yet */
	}
}

int t4_live_view_update(struct t4_live_view *v, struct t4_live_snap *s,
			const struct t4_live_row **rows, size_t *n_rows)
{
	t4_live_snap_free(&v->prev);
	v->prev = v->cur;
	v->have_prev = v->cur.now_ns != 0;
	v->cur = *s;
	memset(s, 0, sizeof(*s));
	if (v->cur.n_domains > v->cap_rows) {
		struct t4_live_row *r = realloc(v->rows, v->cur.n_domains * sizeof(*r));
		if (!r)
			return t4_err(ENOMEM, "out of memory");
		v->rows = r;
		v->cap_rows = v->cur.n_domains;
	}
	for (size_t i = 0; i < v->cur.n_domains; i++) {
		const struct t4_live_domain *d = &v->cur.doms[i];
		make_row(v, d, v->have_prev ? find(&v->prev, d->id, i) : NULL, &v->rows[i]);
	}
	*rows = v->rows;
	*n_rows = v->cur.n_domains;
	return 0;
}

const struct t4_live_snap *t4_live_view_snap(const struct t4_live_view *v)
{
	return &v->cur;
}

uint64_t t4_live_view_triggers(const struct t4_live_view *v)
{
	return v->have_prev && v->cur.triggers > v->prev.triggers ? v->cur.triggers - v->prev.triggers
								   : 0;
}

double t4_live_view_cpu_per_trigger(const struct t4_live_view *v)
{
	uint64_t n = t4_live_view_triggers(v);

	if (!n || v->cur.cpu_ns < v->prev.cpu_ns)
		return NAN;
	return (double)(v->cur.cpu_ns - v->prev.cpu_ns) / (double)n;
}
