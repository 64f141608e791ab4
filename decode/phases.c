/* phases.c - the recording cut into bookmark phases, and each domain's
 * counts apportioned to them.
 *
 * The timeline is a list of spans, each starting where a bookmark took
 * effect and ending where the next one did. Where the log's bookmark
 * packets carry set_ns (the reference time of the bookmark command), the
 * boundaries are exact and a phase shorter than one trigger period still
 * exists. Older logs only say which bookmark each reference packet
 * carried: the interval a trigger closes is labelled by that trigger's
 * bookmark, so a phase then starts at the trigger before the first one
 * that carries it (FORMAT.md section 6).
 *
 * An interval that straddles a boundary gives each phase the share of its
 * counts that its overlap gives, in integers by the largest-remainder
 * rule, so the phases' totals add up exactly to the domain's. Spans are
 * appended only (a late or out-of-order bookmark is clamped to the last
 * boundary) so per-domain totals stay indexed by span. Totals are kept
 * per span for the first DEC_MAX_SPANS spans and per bookmark name for all
 * of them, so an hours-long recording with thousands of phase changes
 * still has exact per-name totals in bounded memory; per name for the
 * first DEC_MAX_NAMES names (later ones have none: a count is never
 * credited to another name, and an allocation that fails is an error).
 * A domain's pieces in one span are summed in its run, added to the
 * totals when the span changes; a piece that continues the run takes the
 * inline path of phases_add_share (decode_int.h): once per interval (the
 * summary's usual interval: dom.c's summed(), which adds to the run
 * itself).
 * Two IDs the log names alike are one bookmark, the first ID's
 * (t4_index_bookmark_holder): one name, one row of totals, one count of
 * occurrences.
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- largest remainder -------------------------------------------------- */

static int key_cmp(const void *a, const void *b)
{
	t4_u128 x = *(const t4_u128 *)a, y = *(const t4_u128 *)b;
	return x < y ? -1 : x > y;
}

void dec_apportion_value(uint64_t value, const uint64_t *w, size_t k, uint64_t wsum,
		  uint64_t *out, t4_u128 *keys)
{
	uint64_t given = 0, left;

	for (size_t j = 0; j < k; j++) {
		t4_u128 share = (t4_u128)value * w[j];
		out[j] = (uint64_t)(share / wsum);
		given += out[j];
		/* sort key: largest remainder first, then lower index */
		keys[j] = ((t4_u128)~(uint64_t)(share % wsum) << 64) | j;
	}
	left = value - given; /* fewer than k: one more for `left` parts */
	if (!left)
		return;
	if (k > 1)
		qsort(keys, k, sizeof(*keys), key_cmp);
	for (uint64_t i = 0; i < left && i < k; i++)
		out[(size_t)(keys[i] & 0xffffffffu)]++;
}

/* Scratch of k entries for dec_apportion_value. */
static int ap_room(struct t4_decoder *d, size_t k)
{
	if (k <= d->ap_cap)
		return 0;
	size_t cap = k < 64 ? 64 : k * 2;
	uint64_t *w = realloc(d->ap_w, cap * sizeof(*w));
	if (w)
		d->ap_w = w;
	uint64_t *o = realloc(d->ap_out, cap * sizeof(*o));
	if (o)
		d->ap_out = o;
	t4_u128 *keys = realloc(d->ap_keys, cap * sizeof(*keys));
	if (keys)
		d->ap_keys = keys;
	if (!w || !o || !keys)
		return t4_err(ENOMEM, "out of memory");
	d->ap_cap = cap;
	return 0;
}

int dec_apportion(struct t4_decoder *d, uint64_t start, uint64_t end, const uint64_t *bounds,
		  size_t k)
{
	/* bounds[0..k]: cell edges; weights = overlap of [start, end) */
	int rc = ap_room(d, k);

	if (rc < 0)
		return rc;
	for (size_t j = 0; j < k; j++) {
		uint64_t lo = bounds[j] > start ? bounds[j] : start;
		uint64_t hi = bounds[j + 1] < end ? bounds[j + 1] : end;
		d->ap_w[j] = hi > lo ? hi - lo : 0;
	}
	return 0;
}

/* ---- the span list ---------------------------------------------------------- */

/* The name-totals slot of a bookmark ID into *slot: DEC_NO_NAME past
 * DEC_MAX_NAMES names (their counts go to no name's totals, and
 * t4_decoder_name_totals has none for them: never another name's). 0, or
 * -ENOMEM (d->test_fail_name_alloc: as if). */
static int name_slot(struct t4_decoder *d, uint32_t bookmark_id, uint32_t *slot)
{
	int64_t have = dec_idmap_get(&d->name_map, bookmark_id);
	int rc;

	*slot = have >= 0 ? (uint32_t)have : DEC_NO_NAME;
	if (have >= 0 || d->n_names >= DEC_MAX_NAMES)
		return 0;
	if (d->test_fail_name_alloc)
		return t4_err(ENOMEM, "out of memory for the bookmark names' totals");
	if ((rc = dec_vec_room((void **)&d->name_ids, &d->cap_names, d->n_names,
			      sizeof(*d->name_ids))) < 0 ||
	    (rc = dec_idmap_put(&d->name_map, bookmark_id, (uint32_t)d->n_names)) < 0)
		return rc;
	d->name_ids[d->n_names] = bookmark_id;
	*slot = (uint32_t)d->n_names++;
	return 0;
}

/* Occurrences of a bookmark's spans: the next one's number, counted once
 * per span (near-linear in bookmarks, whatever their names). */
static int occurrence_next(struct t4_decoder *d, uint32_t bookmark_id, uint32_t *occ)
{
	int64_t n = dec_idmap_get(&d->occ_map, bookmark_id);

	*occ = n > 0 ? (uint32_t)n + 1 : 1;
	return dec_idmap_put(&d->occ_map, bookmark_id, *occ);
}

static void occurrence_drop(struct t4_decoder *d, uint32_t bookmark_id)
{
	int64_t n = dec_idmap_get(&d->occ_map, bookmark_id);

	if (n > 0)
		dec_idmap_put(&d->occ_map, bookmark_id, (uint32_t)n - 1);
}

/* The last span takes another bookmark (one set at, or out of order
 * before, its start: the later command wins). */
static int relabel_last(struct t4_decoder *d, uint32_t bookmark_id)
{
	struct dspan *last = &d->spans[d->n_spans - 1];
	uint32_t name;
	int rc = name_slot(d, bookmark_id, &name);

	if (rc < 0)
		return rc;
	occurrence_drop(d, last->bookmark_id);
	last->bookmark_id = bookmark_id;
	last->name = name;
	return occurrence_next(d, bookmark_id, &last->occurrence);
}

static int add_span(struct t4_decoder *d, uint64_t start, uint32_t bookmark_id,
		    uint64_t first_trigger, bool exact)
{
	struct dspan *last = d->n_spans ? &d->spans[d->n_spans - 1] : NULL;
	uint32_t occ, name;
	int rc;

	/* an ID named as an earlier one: the earlier one's phase (index.c) */
	bookmark_id = t4_index_bookmark_holder(d->ix, bookmark_id);
	d->span_gen++; /* the domains' span cursors look again */
	if (last && start <= last->start_ns) {
		/* at (or, out of order, before) the last boundary: it wins */
		if (last->bookmark_id != bookmark_id && d->n_spans > 1 &&
		    d->spans[d->n_spans - 2].bookmark_id == bookmark_id) {
			occurrence_drop(d, last->bookmark_id);
			d->n_spans--; /* back to the previous phase: no span */
			return 0;
		}
		if (last->bookmark_id != bookmark_id && (rc = relabel_last(d, bookmark_id)) < 0)
			return rc;
		last->exact = exact;
		if (first_trigger > last->first_trigger)
			last->first_trigger = first_trigger;
		return 0;
	}
	if (last && last->bookmark_id == bookmark_id)
		return 0; /* the same phase again: no boundary */
	if ((rc = name_slot(d, bookmark_id, &name)) < 0 ||
	    (rc = dec_vec_room((void **)&d->spans, &d->cap_spans, d->n_spans,
			      sizeof(*d->spans))) < 0 ||
	    (rc = occurrence_next(d, bookmark_id, &occ)) < 0)
		return rc;
	d->spans[d->n_spans++] = (struct dspan){
		.start_ns = start,
		.bookmark_id = bookmark_id,
		.name = name,
		.occurrence = occ,
		.first_trigger = first_trigger,
		.exact = exact,
	};
	return 0;
}

int phases_bookmark(struct t4_decoder *d, const struct t4_bookmark_pkt *b)
{
	if (!b->set_ns)
		return 0; /* an older log: the reference packets tell */
	if (!d->exact_phases && d->n_spans <= 1) {
		if (d->n_spans) /* nothing was cut by reference packets yet */
			occurrence_drop(d, d->spans[0].bookmark_id);
		d->n_spans = 0;
	}
	if (!d->exact_phases)
		d->span_gen++; /* keys turn from triggers into times: cursors look again */
	d->exact_phases = true;
	if (!d->n_spans) {
		int rc = add_span(d, 0, 0, 0, true);
		if (rc < 0)
			return rc;
	}
	return add_span(d, b->set_ns, b->bookmark_id, b->first_trigger, true);
}

/* The last span whose key (start time, or first trigger: by_trigger) is
 * at or before v, the first one if none is; span `hint` and the one after
 * it are tried first. Keys only grow along the spans: start times
 * strictly, first triggers never go back. */
size_t phases_span_find(const struct t4_decoder *d, size_t hint, uint64_t v, bool by_trigger)
{
	const struct dspan *sp = d->spans;
	size_t n = d->n_spans, lo = 0, hi = n;

#define KEY(i) (by_trigger ? sp[i].first_trigger : sp[i].start_ns)
	if (hint < n && KEY(hint) <= v) {
		if (hint + 1 == n || KEY(hint + 1) > v)
			return hint;
		if (hint + 2 == n || KEY(hint + 2) > v)
			return hint + 1;
	}
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (KEY(mid) <= v)
			lo = mid;
		else
			hi = mid;
	}
#undef KEY
	return lo;
}

/* The span in force at trigger k by the bookmark packets: the last one
 * whose first trigger is at or before k. By trigger, not by time: a
 * trigger carries what its scheduler saw when it fired, and on the
 * in-kernel path that is later than its ref_ns (the grid point), so a
 * bookmark set in between is carried by a trigger whose ref_ns precedes
 * its set_ns. */
size_t phases_span_at_trigger(const struct t4_decoder *d, uint64_t k)
{
	return phases_span_find(d, d->n_spans - 1, k, true); /* the last: usual */
}

/* One reference packet of the phase scheduler, in trigger order: the
 * interval it closes is in its bookmark's phase, which therefore started
 * at the trigger before it. */
static int ref_phase(struct t4_decoder *d, const struct refent *e)
{
	uint64_t start;
	uint32_t have;

	if (!d->pk_started) {
		d->pk_started = true;
		d->pk_prev_ns = e->ref_ns;
		if (!d->exact_phases)
			return add_span(d, 0, e->bookmark_id, e->trigger, false);
	}
	start = d->pk_prev_ns;
	d->pk_prev_ns = e->ref_ns;
	/* With exact phases, the bookmark packets already read say which
	 * bookmark was in force at this trigger; a reference packet that
	 * carries another one means its bookmark packet was lost (damage):
	 * the phase comes back from the references, at trigger precision. */
	have = d->n_spans ? d->spans[d->exact_phases ? phases_span_at_trigger(d, e->trigger)
						     : d->n_spans - 1].bookmark_id
			  : UINT32_MAX;
	if (have == t4_index_bookmark_holder(d->ix, e->bookmark_id))
		return 0;
	if (d->exact_phases && d->n_spans && start <= d->spans[d->n_spans - 1].start_ns) {
		d->dmg.phases_unplaced++; /* spans are appended only: say so */
		return 0;
	}
	return add_span(d, start, e->bookmark_id, e->trigger, false);
}

int phases_ref(struct t4_decoder *d, struct dsched *s, bool all)
{
	int rc = 0;

	if (!d->have_phase_sched || s->id != d->phase_sched || !s->any)
		return 0;
	if (!d->pk_set) {
		d->pk_set = true;
		d->pk = s->watermark; /* the first reference packet seen */
	}
	/* With exact phases a reference packet is only checked once the
	 * packets around it have been read (bookmark packets may come a few
	 * packets after it), and before the next phases are appended. */
	uint64_t lag = d->exact_phases ? DEC_EXACT_LAG : d->o.lookahead;
	if (s->watermark >= DEC_RCAP && d->pk < s->watermark - DEC_RCAP + 1)
		d->pk = s->watermark - DEC_RCAP + 1; /* older ones left the ring */
	while (rc >= 0 && d->pk <= s->watermark) {
		const struct refent *e = dec_ref(s, d->pk);
		if (!all && d->exact_phases && d->pk + lag > s->watermark)
			break;
		if (e)
			rc = ref_phase(d, e);
		else if (!all && d->pk + lag > s->watermark)
			break; /* it may still come */
		d->pk++;
	}
	return rc;
}

bool phases_named(const struct t4_decoder *d, uint64_t start, uint64_t end, const char *name)
{
	if (!d->n_spans || end <= start)
		return false;
	for (size_t i = phases_span_at(d, start); i < d->n_spans; i++) {
		if (d->spans[i].start_ns >= end)
			break;
		if (!strcmp(t4_decoder_bookmark(d, d->spans[i].bookmark_id), name))
			return true;
	}
	return false;
}

size_t phases_span_at(const struct t4_decoder *d, uint64_t t)
{
	return phases_span_find(d, d->n_spans - 1, t, false); /* the last: usual */
}

uint64_t phases_span_end(const struct t4_decoder *d, size_t i)
{
	return i + 1 < d->n_spans ? d->spans[i + 1].start_ns : UINT64_MAX;
}

/* ---- per-domain totals ------------------------------------------------------- */

/* Room for n entries of ncap totals and an elapsed time each. */
static int table_room(const struct dom *dm, t4_u128 **tot, uint64_t **el, size_t *have,
		      size_t n)
{
	if (*have >= n)
		return 0;
	n += 16;
	t4_u128 *t = realloc(*tot, n * dm->ncap * sizeof(*t));
	if (t)
		*tot = t;
	uint64_t *e = realloc(*el, n * sizeof(*e));
	if (e)
		*el = e;
	if (!t || !e)
		return t4_err(ENOMEM, "out of memory for the phase table");
	memset(&(*tot)[*have * dm->ncap], 0, (n - *have) * dm->ncap * sizeof(*t));
	memset(&(*el)[*have], 0, (n - *have) * sizeof(*e));
	*have = n;
	return 0;
}

/* The run's totals into the domain's, its span's (when listed) and its
 * name's. */
void phases_flush(struct dom *dm)
{
	if (!dm->run_open)
		return; /* (no run yet: its tables may not exist) */
	t4_u128 *n = dm->run_name != DEC_NO_NAME ? &dm->ntot[dm->run_name * dm->ncap] : NULL;
	t4_u128 *p = dm->run_span < DEC_MAX_SPANS ? &dm->ptot[dm->run_span * dm->ncap] : NULL;

	dm->run_open = false;
	dm->pub.elapsed_ns += dm->run_el; /* beside pub.totals: one time for both */
	if (n)
		dm->nel[dm->run_name] += dm->run_el;
	if (p)
		dm->pel[dm->run_span] += dm->run_el;
	for (uint32_t k = 0; k < dm->ncap; k++) {
		t4_u128 sum = dm->run[k] + dm->run_lo[k]; /* (a gauge's: run[k] alone) */
		dm->pub.totals[k] = dec_u128_add_sat(dm->pub.totals[k], sum);
		if (n)
			n[k] = dec_u128_add_sat(n[k], sum);
		if (p)
			p[k] = dec_u128_add_sat(p[k], sum);
		dm->run[k] = 0;
		dm->run_lo[k] = 0;
	}
	dm->run_el = 0;
}

/* A sum of the run that passed 2^64 (out of line: seldom). */
static __attribute__((noinline)) void run_carry(struct dom *dm, uint32_t k)
{
	dm->run[k] += (t4_u128)1 << 64;
}

/* The same for a domain with gauges: a gauge's level x elapsed ns, exact,
 * into the run's 128-bit sums (out of line: most domains have none). */
static __attribute__((noinline)) void run_add_gauges(struct dom *dm, uint64_t elapsed,
						     const uint64_t *c, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if (dm->pub.event_gauge[k])
			dm->run[k] = dec_u128_add_sat(dm->run[k], dec_gauge_weight(c[k], elapsed));
		else if (__builtin_add_overflow(dm->run_lo[k], c[k], &dm->run_lo[k]))
			run_carry(dm, k);
}

/* Out of line, where the loop keeps its registers (inline in a piece's
 * code, it spills the sums to the stack); 64-bit sums, the carries apart
 * (a 128-bit add costs twice a 64-bit one, with the loop's own steps), in
 * phases_run_counts(), which dom.c's summed() runs inline for the
 * summary's intervals (a carry there is no call: about 4.5 instructions a
 * count, was 6 and a call a piece). */
void phases_run_add(struct dom *dm, uint64_t elapsed, const uint64_t *c, uint32_t n)
{
	dm->run_el += elapsed;
	if (dm->any_gauge) {
		run_add_gauges(dm, elapsed, c, n);
		return;
	}
	phases_run_counts(dm->run_lo, dm->run, c, n);
}

/* One piece's totals in span i, added to the run of pieces in one span
 * (consecutive intervals of a domain mostly are), one sum instead of
 * three per count; a new run when the span (or its name) changed. */
static void add_share(const struct t4_decoder *d, struct dom *dm, size_t i, uint64_t elapsed,
		      const uint64_t *c, uint32_t n)
{
	uint32_t name = d->spans[i].name;

	if (dm->run_open && (dm->run_span != i || dm->run_name != name))
		phases_flush(dm);
	dm->run_open = true;
	dm->run_span = i;
	dm->run_name = name;
	phases_run_add(dm, elapsed, c, n);
}

int phases_ensure(struct t4_decoder *d)
{
	return d->n_spans ? 0 : add_span(d, 0, 0, 0, false);
}

int phases_add_share_new(struct t4_decoder *d, struct dom *dm, size_t span, uint64_t elapsed,
			 const uint64_t *counts, uint32_t n_counts)
{
	size_t listed = d->n_spans < DEC_MAX_SPANS ? d->n_spans : DEC_MAX_SPANS;
	int rc;

	if ((dm->n_ptot < listed &&
	     (rc = table_room(dm, &dm->ptot, &dm->pel, &dm->n_ptot, listed)) < 0) ||
	    (dm->n_ntot < d->n_names &&
	     (rc = table_room(dm, &dm->ntot, &dm->nel, &dm->n_ntot, d->n_names)) < 0))
		return rc;
	add_share(d, dm, span, elapsed, counts, n_counts);
	/* until the spans change (every change moves span_gen), the run's
	 * name is its span's and the tables have every row */
	dm->run_gen = d->span_gen;
	return 0;
}

/* ---- the phase list ------------------------------------------------------------ */

/* Where no interval passed the filters (a --from window that only CPU
 * slices reach): the phase scheduler's triggers, within the window, so
 * that a phase row never says the empty range's sentinels. */
static void trigger_range(const struct t4_decoder *d, uint64_t *lo, uint64_t *hi)
{
	const struct t4_index_sched *s = t4_index_sched(d->ix, d->phase_sched);

	if (!s || !s->refs)
		return;
	*lo = s->first_ns;
	*hi = s->last_ns;
	if (d->window_resolved) {
		*lo = *lo > d->window_from ? *lo : d->window_from;
		*hi = *hi < d->window_to ? *hi : d->window_to;
	}
}

/* The data range: first and last placed instants over the domains. */
static void data_range(const struct t4_decoder *d, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < d->n_doms; i++) {
		const struct t4_dec_domain *p = &d->doms[i]->pub;
		if (!p->intervals)
			continue;
		if (p->first_ns < *lo)
			*lo = p->first_ns;
		if (p->last_ns > *hi)
			*hi = p->last_ns;
	}
	if (*lo > *hi)
		trigger_range(d, lo, hi);
}

/* Whether any domain has time in span i (spans past the listed ones:
 * whether they lie inside the data). */
static bool span_has_data(const struct t4_decoder *d, size_t i, uint64_t lo, uint64_t hi)
{
	if (d->spans[i].cpu_ns)
		return true;
	if (i >= DEC_MAX_SPANS)
		return d->spans[i].start_ns < hi && phases_span_end(d, i) > lo;
	for (size_t k = 0; k < d->n_doms; k++)
		if (i < d->doms[k]->n_ptot && d->doms[k]->pel[i])
			return true;
	return false;
}

/* How many triggers span i has, the first at *from: from its first to
 * the next span's first, of those the phase scheduler has in the log (a
 * bookmark said to come before the log's first trigger or after its last
 * counts none that the log lacks). */
static uint64_t span_triggers(const struct t4_decoder *d, size_t i, uint64_t *from)
{
	const struct t4_index_sched *s = t4_index_sched(d->ix, d->phase_sched);
	uint64_t to = i + 1 < d->n_spans ? d->spans[i + 1].first_trigger : UINT64_MAX;

	*from = d->spans[i].first_trigger;
	if (!s || !s->refs)
		return 0;
	*from = *from > s->first ? *from : s->first;
	to = to < s->last + 1 ? to : s->last + 1;
	return to > *from ? to - *from : 0;
}

/* The first trigger ID of scheduler s whose grid point (trigger IDs are
 * grid indexes: FORMAT.md 6) is at or after t. */
static uint64_t grid_id_at(const struct t4_index_sched *s, uint64_t period, uint64_t t)
{
	if (t <= s->first_ns)
		return s->first;
	uint64_t dt = t - s->first_ns, k = dt / period + (dt % period != 0);

	return k > UINT64_MAX - s->first ? UINT64_MAX : s->first + k;
}

/* The triggers of span i that a row cut to [a, b) shows: where --from/--to
 * cut a span, those of its triggers whose grid point lies in the cut (the
 * span's own are its triggers from its first to the next span's first:
 * a row of 0.287 s said 538 triggers at 1 ms). */
static uint64_t cut_triggers(const struct t4_decoder *d, size_t i, uint64_t a, uint64_t b)
{
	const struct t4_index_sched *s = t4_index_sched(d->ix, d->phase_sched);
	uint64_t from, n = span_triggers(d, i, &from);

	if (!s || !s->refs || !d->period_ns)
		return n;
	uint64_t lo = grid_id_at(s, d->period_ns, a), hi = grid_id_at(s, d->period_ns, b);
	lo = lo > from ? lo : from;
	hi = hi < from + n ? hi : from + n;
	return hi > lo ? hi - lo : 0;
}

/* Whether --from/--to cut span i, [start, end), within the phase
 * scheduler's triggers (a window from the first trigger on, --from 0,
 * cuts no span: its rows count what they count without it). */
static bool window_cuts(const struct t4_decoder *d, uint64_t start, uint64_t end)
{
	const struct t4_index_sched *s = t4_index_sched(d->ix, d->phase_sched);

	if (!d->window_resolved)
		return false;
	if (s && s->refs) {
		start = start > s->first_ns ? start : s->first_ns;
		end = end <= s->last_ns ? end : s->last_ns + (s->last_ns < UINT64_MAX);
	}
	return d->window_from > start || d->window_to < end;
}

int phases_build(struct t4_decoder *d)
{
	uint64_t lo, hi;

	data_range(d, &lo, &hi);
	free(d->phases);
	free(d->phase_span);
	d->n_phases = 0;
	d->phases = calloc(d->n_spans ? d->n_spans : 1, sizeof(*d->phases));
	d->phase_span = calloc(d->n_spans ? d->n_spans : 1, sizeof(*d->phase_span));
	if (!d->phases || !d->phase_span)
		return t4_err(ENOMEM, "out of memory");
	for (size_t i = 0; i < d->n_spans; i++) {
		const struct dspan *sp = &d->spans[i];
		struct t4_dec_phase *ph = &d->phases[d->n_phases];
		uint64_t end = phases_span_end(d, i);

		/* (a span that lies outside the range has no time to show) */
		if (!span_has_data(d, i, lo, hi) || sp->start_ns >= hi || end <= lo)
			continue;
		ph->bookmark_id = sp->bookmark_id;
		ph->name = t4_decoder_bookmark(d, sp->bookmark_id);
		ph->start_ns = sp->start_ns > lo ? sp->start_ns : lo;
		ph->end_ns = end < hi ? end : hi;
		ph->exact = sp->exact;
		uint64_t first;
		ph->triggers = window_cuts(d, sp->start_ns, end)
				       ? cut_triggers(d, i, ph->start_ns, ph->end_ns)
				       : span_triggers(d, i, &first);
		ph->cpu_ns = sp->cpu_ns;
		ph->threads = sp->threads;
		ph->occurrence = sp->occurrence;
		d->phase_span[d->n_phases++] = i;
	}
	return 0;
}
