/* test_phase_totals.c - the bookmark phases' totals per name
 * (decode/phases.c): a count is credited to its own bookmark name or to
 * none, never to another one; when the name table cannot grow (out of
 * memory: forced through the decoder's test seam, test_fail_name_alloc),
 * decoding fails with the error instead. The span cursor and the summary's
 * own loop (decode/dom.c: summed) give the totals the search and the
 * intervals give.
 */
#include "decode_synth.h"

#include <criterion/redirect.h>
#include <errno.h>

#include "decode/decode_int.h"

/* Bookmark "a" from trigger 10, "b" from trigger 20 (set mid-interval);
 * the name table cannot grow when "b" comes: feeding "b" fails with
 * -ENOMEM and says so; nothing is decoded after it (before: b's counts
 * went into a's totals, and decoding went on). */
Test(phase_totals, out_of_memory_is_an_error_not_another_names_totals)
{
	struct sy y;
	struct keep k = { 0 };
	struct t4_decoder *dec;
	struct t4_decode_opts o = { 0 };
	int rc = 0;

	sy_one_domain(&y, 40, 9);
	sy_bookmark(&y, 300, "a", 10, y.t0 + 9 * y.period + 500000);
	sy_bookmark(&y, 301, "b", 20, y.t0 + 19 * y.period + 500000);
	sy_build(&y);
	cr_assert_eq(t4_decoder_new(&dec, &o, &keep_ops, &k), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < y.n_pk && rc == 0; i++) {
		const struct t4_packet *p = &y.pk[i];
		bool b = p->type == T4_PKT_BOOKMARK && p->bookmark.bookmark_id == 301;
		dec->test_fail_name_alloc = b;
		rc = t4_decoder_feed(dec, p);
		cr_assert(rc == 0 || b, "packet %zu: %s", i, t4_errmsg());
	}
	cr_assert_eq(rc, -ENOMEM, "the failed allocation went unsaid");
	cr_assert(strstr(t4_errmsg(), "out of memory"), "%s", t4_errmsg());
	cr_assert_eq(t4_decoder_finish(dec, NULL), -ENOMEM, "finish repeats the error");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* More distinct names than the decoder keeps totals for (DEC_MAX_NAMES):
 * the names past them have no per-name totals, and every name that has
 * them holds its own counts only (before: the last name kept took every
 * later name's counts). */
Test(phase_totals, names_past_the_limit_have_none_not_anothers)
{
	const uint64_t n = DEC_MAX_NAMES + 8;
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	char name[32];
	uint64_t el;

	sy_one_domain(&y, n + 2, 9);
	for (uint64_t t = 1; t <= n; t++) { /* name t from trigger t on */
		snprintf(name, sizeof(name), "n%llu", (unsigned long long)t);
		sy_bookmark(&y, (uint32_t)t, name, t, y.t0 + (t - 1) * y.period + 500000);
	}
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_n_domains(dec), 1);
	for (uint32_t b = 1; b <= n; b++) {
		const t4_u128 *t = t4_decoder_name_totals(dec, b, 0, &el);
		if (b > DEC_MAX_NAMES - 1) { /* slot 0 is the time before any bookmark */
			cr_assert_null(t, "name %u past the limit has totals", b);
			continue;
		}
		cr_assert_not_null(t, "name %u", b);
		/* its one 1 ms phase: about 2 bytes per ns of it */
		cr_assert_eq(el, y.period, "name %u: %llu ns", b, (unsigned long long)el);
		cr_assert(t[1] > 1900000 && t[1] < 2100000, "name %u: %llu bytes", b,
			  (unsigned long long)t[1]);
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* ---- the span cursor (attrib.c) ------------------------------------------- */

/* Decode y's stream with options o into sink ops (NULL: none, the
 * summary's decode: the intervals' totals alone), every interval searching
 * for its span (no_cursor: the decoder's test seam) or through the domain's
 * cursor. */
static struct t4_decoder *decode_spans(const struct sy *y, const struct t4_decode_opts *o,
				       const struct t4_sink_ops *ops, bool no_cursor,
				       struct keep *k)
{
	struct t4_decoder *dec;

	memset(k, 0, sizeof(*k));
	cr_assert_eq(t4_decoder_new(&dec, o, ops, k), 0, "%s", t4_errmsg());
	dec->test_no_cursor = no_cursor;
	for (size_t i = 0; i < y->n_pk; i++)
		cr_assert_eq(t4_decoder_feed(dec, &y->pk[i]), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_decoder_finish(dec, NULL), 0, "%s", t4_errmsg());
	return dec;
}

/* The same phases, and totals per phase and per name. */
static void same_phase_totals(const struct t4_decoder *a, const struct t4_decoder *b,
			      const char *what)
{
	uint64_t ea, eb;

	cr_assert_eq(t4_decoder_n_phases(a), t4_decoder_n_phases(b), "%s", what);
	for (size_t d = 0; d < t4_decoder_n_domains(a); d++) {
		for (size_t p = 0; p < t4_decoder_n_phases(a); p++) {
			const t4_u128 *ta = t4_decoder_phase_totals(a, p, d, &ea);
			const t4_u128 *tb = t4_decoder_phase_totals(b, p, d, &eb);
			cr_assert_eq(!ta, !tb, "%s: phase %zu", what, p);
			cr_assert(!ta || (ea == eb && ta[0] == tb[0] && ta[1] == tb[1]),
				  "%s: domain %zu phase %zu totals differ", what, d, p);
		}
		for (uint32_t id = 0; id < 8; id++) {
			const t4_u128 *ta = t4_decoder_name_totals(a, id, d, &ea);
			const t4_u128 *tb = t4_decoder_name_totals(b, id, d, &eb);
			cr_assert_eq(!ta, !tb, "%s: name %u", what, id);
			cr_assert(!ta || (ea == eb && ta[0] == tb[0] && ta[1] == tb[1]),
				  "%s: domain %zu name %u totals differ", what, d, id);
		}
	}
}

/* The same intervals (every field kept), phases and totals per phase and
 * per name. */
static void same_decode(const struct t4_decoder *a, const struct keep *ka,
			const struct t4_decoder *b, const struct keep *kb, const char *what)
{
	cr_assert_eq(ka->n, kb->n, "%s: %zu vs %zu intervals", what, ka->n, kb->n);
	for (size_t i = 0; i < ka->n; i++)
		cr_assert(!memcmp(&ka->v[i], &kb->v[i], sizeof(ka->v[i])),
			  "%s: interval %zu (trigger %llu) differs", what, i,
			  (unsigned long long)ka->v[i].trigger);
	same_phase_totals(a, b, what);
}

/* Two clock domains and one placed at once, no clock model holding it back
 * (its cursor is on the last span when the next one comes), over 1200
 * triggers with returns dropped and reads preempted; 42 phases of 1 to 60
 * triggers, cut by bookmark times (exact; mixed: from the 20th bookmark
 * on) or by triggers. */
static void phased_stream(struct sy *y, bool exact, bool mixed)
{
	sy_two_clocks(y, 1200);
	y->dom[y->n_doms++] = (struct sy_dom){ .id = 3, .hz = 1e9, .bytes_per_ns = 7,
					       .reference_clocked = true };
	y->drop_prob = 0.05;
	y->preempt_prob = 0.02, y->preempt_min = 20000, y->preempt_max = 100000;
	for (uint32_t i = 0; i < 40; i++) {
		uint64_t first = 20 + i * 29 + (i % 3 ? 0 : 1);
		uint64_t set = y->t0 + (first - 1) * y->period + 137000 * (i % 7);
		/* four names for four IDs: a name given to two IDs is a
		 * warning (test_decode_contradict.c tests it), not these tests' */
		static const char *const names[] = { "a", "b", "c", "d" };
		bool timed = exact && (!mixed || i >= 20);
		sy_bookmark(y, 1 + i % 4, names[i % 4], first, timed ? set : 0);
	}
	sy_bookmark(y, 5, "short", 1000, exact ? y->t0 + 999 * y->period + 10 : 0);
	sy_bookmark(y, 6, "shorter", 1000, exact ? y->t0 + 999 * y->period + 20 : 0);
	sy_build(y);
}

/* An interval looks its span up through its domain's cursor (the span of
 * its last interval and the keys that map to it) instead of a search:
 * the same spans, pieces and totals as the search (a cursor the new
 * spans made stale included), whether the phases
 * are cut by bookmark times (intervals inside one span take the cursor,
 * those across a boundary are cut) or by triggers (older logs), with
 * returns dropped (intervals spanning triggers), preempted reads, phases
 * shorter than an interval, --from/--to, and bookmarks that gain set times
 * part-way (the keys turn from triggers into times). */
Test(phase_totals, span_cursor_gives_what_the_search_gives, .init = cr_redirect_stderr)
{
	static const struct {
		bool exact, mixed; /* mixed: set times from the 20th bookmark on */
		const char *from, *to;
	} runs[] = {
		{ true, false, NULL, NULL },	  { false, false, NULL, NULL },
		{ true, false, "150ms", "900ms" }, { false, false, "150ms", "900ms" },
		{ true, true, NULL, NULL },
	};

	for (size_t r = 0; r < T4_ARRAY_LEN(runs); r++) {
		struct sy y;
		struct keep ka, kb;
		struct t4_decode_opts o = { 0 };
		char what[64];

		phased_stream(&y, runs[r].exact, runs[r].mixed);
		if (runs[r].from) {
			cr_assert_eq(t4_timepoint_parse(runs[r].from, &o.from), 0);
			cr_assert_eq(t4_timepoint_parse(runs[r].to, &o.to), 0);
		}
		snprintf(what, sizeof(what), "run %zu", r);
		struct t4_decoder *a = decode_spans(&y, &o, &keep_ops, false, &ka);
		struct t4_decoder *b = decode_spans(&y, &o, &keep_ops, true, &kb);
		cr_assert_gt(ka.n, 1000 * (runs[r].from ? 0.5 : 0.9), "%s: %zu intervals", what,
			     ka.n);
		cr_assert_geq(t4_decoder_n_phases(a), 20, "%s", what);
		same_decode(a, &ka, b, &kb, what);
		t4_decoder_free(a);
		t4_decoder_free(b);
		free(ka.v);
		free(kb.v);
		sy_free(&y);
	}
	fflush(stderr);
	cr_assert_stderr_eq_str("", "a consistent log decodes without a word");
}

/* A bookmark set at the time of the last boundary relabels that span
 * (phases.c: add_span): a domain's run in it, open under the old name,
 * keeps what it summed for the old name, and what is added from then on
 * goes to the new one: a run that continues in the same span checks its
 * name again (by the decoder's span_gen, which every change of the spans
 * moves: phases_add_share's inline path). */
Test(phase_totals, a_relabelled_span_s_later_pieces_go_to_its_new_name)
{
	struct t4_decode_opts o = { 0 };
	struct t4_decoder *dec;
	struct t4_packet p = { 0 };
	struct t4_bookmark_pkt b = { 0 };
	const uint64_t c1[1] = { 5 }, c2[1] = { 7 };
	uint64_t el;

	cr_assert_eq(t4_decoder_new(&dec, &o, NULL, NULL), 0, "%s", t4_errmsg());
	p.type = T4_PKT_RET; /* the domain, in the index */
	p.ret.domain_id = 1;
	p.ret.n_counts = 1;
	cr_assert_eq(t4_decoder_feed(dec, &p), 0, "%s", t4_errmsg());
	struct dom *dm = dom_of(dec, 1);
	cr_assert(dm);
	b.bookmark_id = 1, b.set_ns = 1000;
	cr_assert_eq(phases_bookmark(dec, &b), 0); /* "a" from 1000 on */
	size_t span = dec->n_spans - 1;
	for (int i = 0; i < 3; i++)
		cr_assert_eq(phases_add_share(dec, dm, span, 10, c1, 1), 0);
	b.bookmark_id = 2; /* "b", set at the same time: the span is b's */
	cr_assert_eq(phases_bookmark(dec, &b), 0);
	cr_assert_eq(dec->n_spans - 1, span);
	cr_assert_eq(dec->spans[span].bookmark_id, 2);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(phases_add_share(dec, dm, span, 20, c2, 1), 0);
	phases_flush(dm);
	const t4_u128 *ta = t4_decoder_name_totals(dec, 1, dm->slot, &el);
	cr_assert(ta && ta[0] == 15 && el == 30, "a: %llu ns", (unsigned long long)el);
	const t4_u128 *tb = t4_decoder_name_totals(dec, 2, dm->slot, &el);
	cr_assert(tb && tb[0] == 14 && el == 40, "b: %llu ns", (unsigned long long)el);
	t4_decoder_free(dec);
}

/* ---- totals alone (dom.c: summed) ------------------------------------------ */

/* The same counters and totals per domain (the rest as same_decode). */
static void same_totals(const struct t4_decoder *a, const struct t4_decoder *b, const char *what)
{
	cr_assert_eq(t4_decoder_n_domains(a), t4_decoder_n_domains(b), "%s", what);
	for (size_t d = 0; d < t4_decoder_n_domains(a); d++) {
		const struct t4_dec_domain *x = t4_decoder_domain_at(a, d);
		const struct t4_dec_domain *y = t4_decoder_domain_at(b, d);
		cr_assert(x->intervals == y->intervals && x->elapsed_ns == y->elapsed_ns &&
				  x->first_ns == y->first_ns && x->last_ns == y->last_ns &&
				  x->unanswered_carried == y->unanswered_carried &&
				  x->unanswered_lost == y->unanswered_lost &&
				  x->unplaced == y->unplaced,
			  "%s: domain %zu: %llu vs %llu intervals, %llu vs %llu ns", what, d,
			  (unsigned long long)x->intervals, (unsigned long long)y->intervals,
			  (unsigned long long)x->elapsed_ns, (unsigned long long)y->elapsed_ns);
		cr_assert(x->intervals > 0, "%s: domain %zu has no interval", what, d);
		for (uint32_t k = 0; k < x->n_counts; k++)
			cr_assert(x->totals[k] == y->totals[k], "%s: domain %zu count %u", what, d, k);
	}
}

/* A decode that wants the intervals' totals alone (the summary's: no sink
 * takes them, no metric, no filter) sums the usual interval in a loop of
 * its own (dom.c: summed), not through the interval emit() builds: the
 * same totals per domain, per phase and per bookmark name, the same
 * lengths and counters, as a decode whose sink takes every interval;
 * with phases cut by bookmark times or by triggers, returns dropped (gaps),
 * preempted reads, a domain placed without a clock model, sums past 2^64
 * (a carry every other interval), the window and offset clock models, and
 * --from/--to (which keep the usual path). */
Test(phase_totals, totals_alone_are_the_sum_of_the_intervals, .init = cr_redirect_stderr)
{
	static const struct {
		bool exact, huge;
		enum t4_clock_model model;
		const char *from, *to;
	} runs[] = {
		{ true, false, T4_CLOCK_RATE, NULL, NULL },
		{ false, false, T4_CLOCK_RATE, NULL, NULL },
		{ true, true, T4_CLOCK_RATE, NULL, NULL },
		{ false, true, T4_CLOCK_WINDOW, NULL, NULL },
		{ true, false, T4_CLOCK_OFFSET, NULL, NULL },
		{ true, false, T4_CLOCK_RATE, "150ms", "900ms" },
	};

	for (size_t r = 0; r < T4_ARRAY_LEN(runs); r++) {
		struct sy y;
		struct keep ka, kb;
		struct t4_decode_opts o = { .model = runs[r].model };
		char what[64];

		phased_stream(&y, runs[r].exact, false);
		for (size_t i = 0; runs[r].huge && i < y.n_pk; i++)
			if (y.pk[i].type == T4_PKT_RET && !(y.pk[i].ret.flags & T4_RET_FIRST))
				y.pk[i].ret.counts[1] |= 1ull << 63;
		if (runs[r].from) {
			cr_assert_eq(t4_timepoint_parse(runs[r].from, &o.from), 0);
			cr_assert_eq(t4_timepoint_parse(runs[r].to, &o.to), 0);
		}
		snprintf(what, sizeof(what), "run %zu", r);
		struct t4_decoder *a = decode_spans(&y, &o, NULL, false, &ka);
		struct t4_decoder *b = decode_spans(&y, &o, &keep_ops, false, &kb);
		cr_assert_eq(ka.n, 0, "%s", what);
		cr_assert_gt(kb.n, 3000 * (runs[r].from ? 0.5 : 0.9), "%s: %zu intervals", what,
			     kb.n);
		cr_assert_geq(t4_decoder_n_phases(a), 20, "%s", what);
		same_totals(a, b, what);
		same_phase_totals(a, b, what);
		t4_decoder_free(a);
		t4_decoder_free(b);
		free(kb.v);
		sy_free(&y);
	}
	fflush(stderr);
	cr_assert_stderr_eq_str("", "a consistent log decodes without a word");
}
