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
 * kept in first-seen order and found through a hash table: usually few
 * (events x PMUs, not x CPUs), but a crafted log's 200,000 domains, each a
 * row of its own, must not cost a quadratic search.
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void t4_event_rows_free(struct t4_event_rows *r)
{
	free(r->v);
	free(r->slot);
	memset(r, 0, sizeof(*r));
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull; /* FNV-1a */
	return h;
}

static size_t row_hash(const struct t4_event_row *row)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = mix(h, &row->kind, sizeof(row->kind));
	h = mix(h, &row->domain, sizeof(row->domain));
	h = mix(h, &row->scope, sizeof(row->scope));
	h = mix(h, row->pmu, strlen(row->pmu) + 1);
	return (size_t)mix(h, row->event, strlen(row->event));
}

/* The table again, twice as large (4 x the rows at least). */
static int rehash(struct t4_event_rows *r)
{
	size_t slots = r->slots ? 2 * r->slots : 64;
	size_t *slot;

	while (slots < 4 * (r->n + 1))
		slots *= 2;
	if (!(slot = calloc(slots, sizeof(*slot))))
		return t4_err(ENOMEM, "out of memory for %zu event rows", r->n + 1);
	for (size_t i = 0; i < r->n; i++) {
		size_t h = row_hash(&r->v[i]) & (slots - 1);
		while (slot[h])
			h = (h + 1) & (slots - 1);
		slot[h] = i + 1;
	}
	free(r->slot);
	r->slot = slot;
	r->slots = slots;
	return 0;
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
	size_t h;
	int rc;

	if (2 * (r->n + 1) > r->slots && (rc = rehash(r)) < 0)
		return rc;
	for (h = row_hash(add) & (r->slots - 1); r->slot[h] && !row; h = (h + 1) & (r->slots - 1))
		if (same_row(&r->v[r->slot[h] - 1], add))
			row = &r->v[r->slot[h] - 1];
	if (!row) {
		if ((rc = dec_vec_room((void **)&r->v, &r->cap, r->n, sizeof(*r->v))) < 0)
			return rc;
		r->slot[h] = r->n + 1;
		row = &r->v[r->n++];
		*row = *add;
		row->domains = 0;
		row->total = 0;
		row->elapsed_ns = 0;
	}
	row->domains++;
	row->total = dec_u128_add_sat(row->total, add->total); /* (gauges: any level) */
	if (add->elapsed_ns > row->elapsed_ns)
		row->elapsed_ns = add->elapsed_ns; /* CPUs count side by side */
	return 0;
}

double t4_event_row_rate(const struct t4_event_row *row)
{
	if (!row->elapsed_ns)
		return 0;
	if (row->gauge) /* level x ns (dec_gauge_weight) over the ns: the mean level */
		return (double)row->total / (double)row->elapsed_ns;
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
				.elapsed_ns = d->elapsed_ns, /* not the span: damage */
			};
			if (row.gauge) /* the last level, held over the span */
				row.total = dec_gauge_weight((uint64_t)d->totals[k], row.elapsed_ns);
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
	default: /* the time the totals cover, as a phase's: not the span */
		*el = d->elapsed_ns;
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
