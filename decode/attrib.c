/* attrib.c - one attribution of counts to phases, used by every output.
 *
 * An interval of a domain (the counts between two of its samples) is cut
 * where a phase boundary falls inside it: one piece per phase it
 * overlaps, each with the share of its counts and of its elapsed time
 * that its overlap gives, in integers by the largest-remainder rule, so
 * the pieces add up exactly to the interval. A gauge (a level, FORMAT 4.3)
 * keeps its level in every piece; its weight in totals is its level x
 * the piece's elapsed ns (exact: the pieces' weights add up to the
 * interval's). Each piece then goes to the same places: the
 * domain's totals, its phase's totals (the summary, `report`) and the
 * sink (CSV, JSONL, Perfetto) or the --bin bins. Every output therefore
 * says the same thing about a phase, by construction: there is no second
 * rule anywhere.
 *
 * Where the phase boundaries come from (phases.c): in logs whose bookmark
 * packets carry set_ns, the time a bookmark was set, so an interval
 * entirely before a boundary keeps the old phase whatever trigger first
 * carries the new bookmark. Logs without set_ns only say which bookmark
 * each trigger carried: an interval goes whole to the phase in force at
 * the trigger that closes it (FORMAT.md section 6).
 *
 * --from/--to and --phase then keep or drop whole pieces (a piece by its
 * middle against --from/--to; a bookmark named by --from/--to is a phase
 * boundary, so its pieces start and end exactly there).
 *
 * Cost: a phase lasts hundreds of intervals, so an interval finds its span
 * through its domain's cursor (the span of its last one and the keys that
 * map there, valid until the spans change: d->span_gen), not a search;
 * an interval inside one span is one piece on a path with no call but
 * the run's sum (phases_add_share) and the sink, inline in the caller
 * (attrib_interval and attrib_piece, decode_int.h); the cut, with its
 * apportioning, is out of line (attrib_any). Tested against the search itself
 * (test_no_cursor: phase_totals/span_cursor_gives_what_the_search_gives).
 * Where no output takes the intervals (the summary), the usual interval
 * skips this file: dom.c's summed() adds it to the run of its cursor's
 * span, by the same rule (phase_totals/totals_alone_are_the_sum_of_the_intervals).
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void attrib_free(struct t4_decoder *d)
{
	free(d->cuts);
	free(d->cut_counts);
	free(d->cut_el);
}

/* Scratch for k pieces of n counts each. */
static int cut_room(struct t4_decoder *d, size_t k, uint32_t n)
{
	size_t vals = k * (size_t)(n ? n : 1);

	if (k > d->cap_cuts) {
		size_t cap = k < 16 ? 16 : 2 * k;
		struct dcut *c = realloc(d->cuts, cap * sizeof(*c));
		uint64_t *el = c ? realloc(d->cut_el, cap * sizeof(*el)) : NULL;
		if (c)
			d->cuts = c;
		if (el)
			d->cut_el = el;
		if (!c || !el)
			return t4_err(ENOMEM, "out of memory for the phase split");
		d->cap_cuts = cap;
	}
	if (vals > d->cap_cut_vals) {
		size_t cap = 2 * vals;
		uint64_t *cc = realloc(d->cut_counts, cap * sizeof(*cc));
		if (cc)
			d->cut_counts = cc;
		if (!cc)
			return t4_err(ENOMEM, "out of memory for the phase split");
		d->cap_cut_vals = cap;
	}
	return 0;
}

/* The domain's span cursor on span s: the keys phases_span_find() maps
 * to it (the first span takes every key before it too). */
static void cursor_set(const struct t4_decoder *d, struct dom *dm, size_t s)
{
	const struct dspan *sp = d->spans;
	bool by_trigger = !d->exact_phases;

	dm->span_hint = s;
	dm->span_gen = d->span_gen;
	dm->span_lo = !s ? 0 : by_trigger ? sp[s].first_trigger : sp[s].start_ns;
	dm->span_hi = s + 1 == d->n_spans ? UINT64_MAX
		      : by_trigger	  ? sp[s + 1].first_trigger
					  : sp[s + 1].start_ns;
}

/* The span that holds the whole interval, or SIZE_MAX when a phase
 * boundary cuts it: by time, or, in logs without bookmark times, the
 * span its trigger carries. The cursor then is on the span of its start. */
static size_t whole_span(struct t4_decoder *d, struct dom *dm, const struct t4_interval *iv)
{
	uint64_t key = d->exact_phases ? iv->start_ns : iv->trigger;

	if (d->test_no_cursor || !attrib_cursor_holds(d, dm, key))
		cursor_set(d, dm, phases_span_find(d, dm->span_hint, key, !d->exact_phases));
	if (!d->exact_phases)
		return dm->span_hint;
	/* the last span's end is UINT64_MAX, as phases_span_end() says */
	return iv->end_ns <= dm->span_hi ? dm->span_hint : SIZE_MAX;
}

/* The pieces of [start, end) into d->cuts: one per span it overlaps,
 * from span `first` on. Returns how many. */
static int cut(struct t4_decoder *d, size_t first, const struct t4_interval *iv, size_t *k)
{
	size_t last = phases_span_find(d, first, iv->end_ns - 1, false);
	int rc;

	if ((rc = cut_room(d, last - first + 1, 0)) < 0)
		return rc;
	for (size_t i = first; i <= last; i++) {
		uint64_t lo = d->spans[i].start_ns, hi = phases_span_end(d, i);
		d->cuts[i - first] = (struct dcut){ i, lo > iv->start_ns ? lo : iv->start_ns,
						    hi < iv->end_ns ? hi : iv->end_ns };
	}
	*k = last - first + 1;
	return 0;
}

/* attrib_piece() for the pieces of a cut interval and the rest of
 * attrib_any()'s (out of line: one copy of it, in emit(), is the usual
 * path's). */
static __attribute__((noinline)) int piece(struct t4_decoder *d, struct dom *dm,
					   struct t4_interval *iv, size_t span)
{
	return attrib_piece(d, dm, iv, span);
}

/* Split value by the pieces' overlaps into out (stride n, column c). */
static void split(struct t4_decoder *d, uint64_t value, size_t k, uint64_t len, uint64_t *out,
		  uint32_t n, uint32_t c)
{
	dec_apportion_value(value, d->ap_w, k, len, d->ap_out, d->ap_keys);
	for (size_t j = 0; j < k; j++)
		out[j * n + c] = d->ap_out[j];
}

/* An interval that phase boundaries cut: one piece per span it overlaps,
 * each with its shares (out of line: the usual interval, inside one span,
 * needs none of this, nor its stack frame). */
static __attribute__((noinline)) int attrib_cut(struct t4_decoder *d, struct dom *dm,
						struct t4_interval *iv)
{
	uint32_t n = iv->n_counts;
	size_t k;
	int rc;

	if ((rc = cut(d, dm->span_hint, iv, &k)) < 0 || (rc = cut_room(d, k + 1, n)) < 0)
		return rc;
	/* overlap weights (the pieces tile [start, end)), then every share */
	uint64_t len = iv->end_ns - iv->start_ns;
	for (size_t j = 0; j < k; j++)
		d->cut_el[j] = d->cuts[j].start;
	d->cut_el[k] = iv->end_ns;
	if ((rc = dec_apportion(d, iv->start_ns, iv->end_ns, d->cut_el, k)) < 0)
		return rc;
	for (uint32_t c = 0; c < n; c++) {
		if (dm->pub.event_gauge[c]) /* a level holds in every piece */
			for (size_t j = 0; j < k; j++)
				d->cut_counts[j * n + c] = iv->counts[c];
		else
			split(d, iv->counts[c], k, len, d->cut_counts, n, c);
	}
	split(d, iv->elapsed_ns, k, len, d->cut_el, 1, 0);
	/* the shares are final: the outputs may reuse the apportioning scratch */
	for (size_t j = 0; j < k && rc >= 0; j++) {
		struct t4_interval p = *iv;
		uint64_t *pc = &d->cut_counts[j * n];
		p.start_ns = d->cuts[j].start;
		p.end_ns = d->cuts[j].end;
		p.elapsed_ns = d->cut_el[j];
		p.counts = pc;
		rc = piece(d, dm, &p, d->cuts[j].span);
	}
	return rc;
}

int attrib_any(struct t4_decoder *d, struct dom *dm, struct t4_interval *iv)
{
	int rc;

	if (!d->n_spans && (rc = phases_ensure(d)) < 0)
		return rc;
	size_t whole = whole_span(d, dm, iv);
	if (whole != SIZE_MAX) /* the usual case: one piece, the interval itself */
		return piece(d, dm, iv, whole);
	return attrib_cut(d, dm, iv);
}
