/* totals.c - per-event totals as `perf stat` prints them: one row per
 * (PMU, event), summed over the clock domains that count it (the CPUs of
 * a per-CPU software or msr event, the threads of a per-task one; a
 * Tegra410 PMU instance is a domain of its own and keeps its own row),
 * with the rate over the time they cover. A task's counts and a CPU's
 * are rows apart (scope).
 *
 * One piece of code for every place that prints such a table: `record`'s
 * closing table and `info` (whole-log totals from the index), the
 * summary's per-phase EVENTS table (the decoder's phase totals). Rows are
 * kept in first-seen order; lookups are linear over the rows, which are
 * few (events x PMUs, not x CPUs).
 */
#include "decode_int.h"
#include "../util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void t4_event_rows_free(struct t4_event_rows *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static bool same_row(const struct t4_event_row *row, const struct t4_event_row *add)
{
	return row->kind == add->kind && row->domain == add->domain &&
	       row->scope == add->scope && !strcmp(row->pmu, add->pmu) &&
	       !strcmp(row->event, add->event);
}

/* What a row's counts are of, from its event packet's flags. */
static uint32_t scope_of(const struct t4_event_pkt *e)
{
	return e ? e->flags & (T4_EV_TASK | T4_EV_INHERIT) : 0;
}

int t4_event_rows_add(struct t4_event_rows *r, const struct t4_event_row *add)
{
	struct t4_event_row *row = NULL;
	int rc;

	for (size_t i = 0; i < r->n && !row; i++)
		if (same_row(&r->v[i], add))
			row = &r->v[i];
	if (!row) {
		if ((rc = t4_vec_room((void **)&r->v, &r->cap, r->n, sizeof(*r->v))) < 0)
			return rc;
		row = &r->v[r->n++];
		*row = *add;
		row->domains = 0;
		row->total = 0;
		row->elapsed_ns = 0;
	}
	row->domains++;
	row->total += add->total;
	if (add->elapsed_ns > row->elapsed_ns)
		row->elapsed_ns = add->elapsed_ns; /* CPUs count side by side */
	return 0;
}

double t4_event_row_rate(const struct t4_event_row *row)
{
	if (!row->elapsed_ns)
		return 0;
	if (row->gauge) /* level x whole us (t4_gauge_weight) over them: the mean level */
		return row->elapsed_ns >= 1000 ? (double)row->total / (double)(row->elapsed_ns / 1000)
					       : 0;
	return (double)row->total * 1e9 / (double)row->elapsed_ns;
}

/* The PMU of a domain's event (its event packet), else the domain's name. */
static const char *event_pmu(const struct t4_event_pkt *e, const struct t4_index_domain *d)
{
	return e && *e->pmu ? e->pmu : d->d.name;
}

int t4_event_rows_from_index(const struct t4_index *ix, bool per_domain,
			     struct t4_event_rows *out)
{
	char fallback[T4_MAX_COUNTERS][16];
	int rc = 0;

	for (size_t i = 0; i < t4_index_n_domains(ix) && rc >= 0; i++) {
		const struct t4_index_domain *d = t4_index_domain_at(ix, i);
		for (uint32_t k = 0; k < d->n_counts && k < T4_MAX_COUNTERS && rc >= 0; k++) {
			const struct t4_event_pkt *e = t4_index_event(ix, d->d.domain_id, k);
			snprintf(fallback[k], sizeof(fallback[k]), "event%u", k);
			struct t4_event_row row = {
				.kind = d->d.kind,
				.pmu = event_pmu(e, d),
				.event = e ? e->name : fallback[k],
				.unit = e ? e->unit : "",
				.domain = per_domain ? (int64_t)d->d.domain_id : -1,
				.gauge = d->gauges >> k & 1,
				.scope = scope_of(e),
				.total = d->totals[k],
				.elapsed_ns = d->last_ns > d->first_ns ? d->last_ns - d->first_ns : 0,
			};
			if (row.gauge) /* the last level, held over the span */
				row.total = (t4_u128)t4_gauge_weight((uint64_t)d->totals[k],
								     row.elapsed_ns);
			rc = t4_event_rows_add(out, &row);
		}
	}
	return rc;
}

/* Which of the decoder's totals: every interval, one phase, or every
 * phase of one bookmark. */
struct which {
	enum { ALL, PHASE, NAME } by;
	size_t phase;
	uint32_t bookmark_id;
};

static const t4_u128 *totals_of(const struct t4_decoder *dec, size_t i, const struct which *w,
				uint64_t *el)
{
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);

	switch (w->by) {
	case PHASE:
		return t4_decoder_phase_totals(dec, w->phase, i, el);
	case NAME:
		return t4_decoder_name_totals(dec, w->bookmark_id, i, el);
	default:
		*el = d->last_ns > d->first_ns ? d->last_ns - d->first_ns : 0;
		return d->totals;
	}
}

static int from_decoder(const struct t4_decoder *dec, const struct which *w, bool per_domain,
			struct t4_event_rows *out)
{
	int rc = 0;

	for (size_t i = 0; i < t4_decoder_n_domains(dec) && rc >= 0; i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		uint64_t el;
		const t4_u128 *tot;

		if (!d->selected || !d->intervals || !(tot = totals_of(dec, i, w, &el)) || !el)
			continue;
		for (uint32_t k = 0; k < d->n_counts && rc >= 0; k++) {
			if (!d->event_selected[k])
				continue;
			struct t4_event_row row = {
				.kind = d->ix->d.kind,
				.pmu = *d->pmu ? d->pmu : d->name,
				.event = d->event_name[k],
				.unit = d->event_unit[k],
				.domain = per_domain ? (int64_t)d->id : -1,
				.gauge = d->event_gauge[k],
				.scope = scope_of(t4_index_event(t4_decoder_index(dec), d->id, k)),
				.total = tot[k],
				.elapsed_ns = el,
			};
			rc = t4_event_rows_add(out, &row);
		}
	}
	return rc;
}

int t4_event_rows_from_decoder(const struct t4_decoder *dec, size_t phase, bool per_domain,
			       struct t4_event_rows *out)
{
	struct which w = { .by = phase == SIZE_MAX ? ALL : PHASE, .phase = phase };

	return from_decoder(dec, &w, per_domain, out);
}

int t4_event_rows_of_bookmark(const struct t4_decoder *dec, uint32_t bookmark_id,
			      bool per_domain, struct t4_event_rows *out)
{
	struct which w = { .by = NAME, .bookmark_id = bookmark_id };

	return from_decoder(dec, &w, per_domain, out);
}
