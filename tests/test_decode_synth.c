/* test_decode_synth.c - whole synthetic recordings (tests/decode_synth.h)
 * whose every sample instant and count is known exactly: placement
 * accuracy, segments, the three clock models side by side, missing /
 * duplicated / reordered packets, large IDs, several schedulers, phases
 * with exact and grid boundaries, --bin conservation, the time window,
 * grid trigger IDs with gaps at overruns.
 *
 * Tolerances are stated next to each assertion and derived from the
 * synthetic windows (0.3-3 us), never from wall-clock timing.
 */
#include "decode_synth.h"
#include "tmpdir_testutil.h"

#include <errno.h>
#include <inttypes.h>
#include <unistd.h>

#include "collector/collector.h"
#include "decode/decode_int.h"

#define MS 1000000ull

/* ---- whole synthetic recordings ------------------------------------------------- */

/* RMS and max of |placed - true| over domain d's interval ends. */
static void boundary_error(const struct sy *y, const struct keep *k, uint32_t id,
			   double *rms, double *max)
{
	double ss = 0, m = 0;
	size_t n = 0, di = 0;

	while (y->dom[di].id != id)
		di++;
	for (size_t i = 0; i < k->n; i++) {
		const struct civ *c = &k->v[i];
		if (c->domain_id != id)
			continue;
		double e = (double)c->end - (double)y->true_t[c->trigger * y->n_doms + di];
		ss += e * e;
		m = fmax(m, fabs(e));
		n++;
	}
	cr_assert_gt(n, 0);
	*rms = sqrt(ss / (double)n);
	*max = m;
}

/* Sum of counter c of domain id over the decoded intervals. */
static uint64_t sum_of(const struct keep *k, uint32_t id, int c)
{
	uint64_t s = 0;

	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].domain_id == id)
			s += k->v[i].counts[c];
	return s;
}

Test(decode_synth, steady_clocks_placed_exactly_and_totals_conserved)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { .want_metrics = true };
	double rms, max;

	sy_two_clocks(&y, 3000);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(k.n, 2 * 2999);
	for (uint32_t id = 1; id <= 2; id++) {
		size_t di = id - 1, last = (y.n_triggers - 1) * y.n_doms + di;
		boundary_error(&y, &k, id, &rms, &max);
		/* windows of 0.3-3 us: the fit over 48 samples is ~20x tighter */
		cr_assert_lt(rms, 150, "domain %u: RMS %.1f ns", id, rms);
		cr_assert_lt(max, 1000, "domain %u: max %.1f ns", id, max);
		cr_assert_eq(sum_of(&k, id, 0), y.x[last] - y.x[di]);
		cr_assert_eq(sum_of(&k, id, 1), y.bytes[last] - y.bytes[di]);
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, id));
		double truth = y.dom[di].hz * (1 + y.dom[di].ppm / 1e6);
		cr_assert_lt(fabs(d->clock.freq_hz / truth - 1), 1e-6, "%u: %.3f Hz vs %.3f", id,
			     d->clock.freq_hz, truth);
		cr_assert_lt(fabs(d->clock.drift_ppm - y.dom[di].ppm), 1.0);
		cr_assert_eq(d->clock.segments, 1);
		cr_assert_eq(d->unanswered_carried + d->unanswered_lost + d->duplicates, 0);
	}
	/* intervals of a domain tile the axis: each starts where the last ended */
	uint64_t prev_end[3] = { 0 };
	for (size_t i = 0; i < k.n; i++) {
		const struct civ *c = &k.v[i];
		if (prev_end[c->domain_id])
			cr_assert_eq(c->start, prev_end[c->domain_id]);
		cr_assert_gt(c->end, c->start);
		prev_end[c->domain_id] = c->end;
		cr_assert_eq(c->flags, 0);
		cr_assert(isfinite(c->metric0), "rd_bw present: rd_bytes was recorded");
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* A domain that first appears after many others (a DRM client found
 * mid-run, a damaged first chunk) grows the index's tables: the domains
 * decoded so far must stay valid (issue 16: a use-after-free). */
Test(decode_synth, a_domain_appearing_after_many_others_keeps_the_earlier_ones)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	struct t4_packet *pk;
	size_t n = 0, mid = 0;

	sy_two_clocks(&y, 400);
	sy_build(&y);
	for (size_t i = 0; i < y.n_pk && !mid; i++) /* the first packet of trigger 200 */
		if (y.pk[i].type == T4_PKT_REF && y.pk[i].ref.trigger_id == 200)
			mid = i;
	cr_assert_gt(mid, 0);
	pk = calloc(y.n_pk + 200, sizeof(*pk));
	cr_assert(pk);
	memcpy(pk, y.pk, mid * sizeof(*pk));
	n = mid;
	for (uint32_t id = 100; id < 140; id++) { /* 40 late domains: the tables move */
		struct t4_packet *p = &pk[n++];
		p->type = T4_PKT_DOMAIN;
		p->domain.domain_id = id;
		p->domain.kind = T4_DOM_DRM;
		p->domain.cpu = -1;
		p->domain.clock_event = -1;
		snprintf(p->domain.name, sizeof(p->domain.name), "late%u", id);
		p = &pk[n++];
		p->type = T4_PKT_RET;
		p->ret.domain_id = id;
		p->ret.trigger_id = 199;
		p->ret.flags = T4_RET_FIRST;
		p->ret.n_counts = 1;
	}
	memcpy(&pk[n], &y.pk[mid], (y.n_pk - mid) * sizeof(*pk));
	n += y.n_pk - mid;
	struct t4_decoder *dec = sy_decode(pk, n, &o, &k);
	for (uint32_t id = 1; id <= 2; id++) {
		size_t di = id - 1, last = (y.n_triggers - 1) * y.n_doms + di;
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, id));
		cr_assert_str_eq(d->name, id == 1 ? "dom1" : "dom2");
		cr_assert_eq(d->intervals, y.n_triggers - 1);
		cr_assert_eq(sum_of(&k, id, 1), y.bytes[last] - y.bytes[di]);
	}
	cr_assert_eq(t4_decoder_n_domains(dec), 42);
	t4_decoder_free(dec);
	free(k.v);
	free(pk);
	sy_free(&y);
}

Test(decode_synth, a_dvfs_step_cuts_a_segment)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	double rms, max;
	size_t ns;

	sy_two_clocks(&y, 4000);
	y.dom[0].step_at_s = 1.2345;
	y.dom[0].step_factor = 0.85;
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const struct t4_clock_segment *sg = t4_decoder_segments(dec, sy_slot(dec, 1), &ns);
	cr_assert_eq(ns, 2, "segments: %zu", ns);
	double f = 1.7e9 * (1 + 37e-6);
	cr_assert_lt(fabs(sg[0].freq_hz / f - 1), 2e-6, "%.1f", sg[0].freq_hz);
	cr_assert_lt(fabs(sg[1].freq_hz / (f * 0.85) - 1), 2e-6, "%.1f", sg[1].freq_hz);
	cr_assert(sg[0].last_trigger >= 1230 && sg[0].last_trigger <= 1236, "cut at %" PRIu64,
		  sg[0].last_trigger);
	boundary_error(&y, &k, 1, &rms, &max);
	cr_assert_lt(rms, 200, "RMS %.1f ns across the step", rms);
	cr_assert_eq(t4_decoder_segments(dec, sy_slot(dec, 2), &ns) != NULL, true);
	cr_assert_eq(ns, 1);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* The three clock models side by side on hard clocks: +-500 ppm drift, a
 * DVFS step, 5% of the reads preempted for 20-100 us. The rate model's
 * boundary error must be 10x below the offset model's (RMS), and a
 * constant-traffic domain's per-interval bandwidth 5x steadier (CV) than
 * with raw window midpoints. */
static double bw_cv(const struct keep *k, uint32_t id)
{
	double s = 0, ss = 0;
	size_t n = 0;

	for (size_t i = 0; i < k->n; i++) {
		const struct civ *c = &k->v[i];
		if (c->domain_id != id)
			continue;
		double bw = (double)c->counts[1] / (double)c->elapsed;
		s += bw;
		ss += bw * bw;
		n++;
	}
	double mean = s / (double)n;
	return sqrt(ss / (double)n - mean * mean) / mean;
}

Test(decode_synth, rate_model_beats_offset_and_window)
{
	struct sy y;
	struct keep kr, ko, kw;
	struct t4_decode_opts o = { 0 };
	double rr, ro, rw, mr, mo, mw;

	sy_two_clocks(&y, 6000);
	y.dom[0].ppm = 500;
	y.dom[1].ppm = -500;
	y.dom[1].step_at_s = 2.5;
	y.dom[1].step_factor = 0.7;
	y.preempt_prob = 0.05;
	y.preempt_min = 20000;
	y.preempt_max = 100000;
	sy_build(&y);
	o.model = T4_CLOCK_RATE;
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &kr));
	o.model = T4_CLOCK_OFFSET;
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &ko));
	o.model = T4_CLOCK_WINDOW;
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &kw));
	for (uint32_t id = 1; id <= 2; id++) {
		boundary_error(&y, &kr, id, &rr, &mr);
		boundary_error(&y, &ko, id, &ro, &mo);
		boundary_error(&y, &kw, id, &rw, &mw);
		cr_log_info("domain %u boundary RMS: rate %.1f ns, offset %.1f ns, window %.1f ns",
			    id, rr, ro, rw);
		cr_assert_lt(rr * 10, ro, "domain %u: rate %.1f vs offset %.1f", id, rr, ro);
		double cr = bw_cv(&kr, id), cw = bw_cv(&kw, id);
		cr_log_info("domain %u bandwidth CV: rate %.5f, window %.5f", id, cr, cw);
		cr_assert_lt(cr * 5, cw, "domain %u: CV rate %.5f vs window %.5f", id, cr, cw);
	}
	free(kr.v);
	free(ko.v);
	free(kw.v);
	sy_free(&y);
}

/* Remove the packets for which drop(p, ud) says so. */
static void drop_packets(struct sy *y, bool (*drop)(const struct t4_packet *p, const void *ud),
			 const void *ud)
{
	size_t w = 0;

	for (size_t i = 0; i < y->n_pk; i++)
		if (!drop(&y->pk[i], ud))
			y->pk[w++] = y->pk[i];
	y->n_pk = w;
}

static bool every_7th_of_1(const struct t4_packet *p, const void *ud)
{
	(void)ud;
	return p->type == T4_PKT_RET && p->ret.domain_id == 1 && p->ret.trigger_id % 7 == 3;
}

Test(decode_synth, a_missing_return_makes_one_spanning_interval)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 1000);
	sy_build(&y);
	/* the next packet carries a dropped one's counts (record does so) */
	for (size_t i = 0; i < y.n_pk; i++) {
		struct t4_packet *p = &y.pk[i];
		if (p->type == T4_PKT_RET && p->ret.domain_id == 1 && p->ret.trigger_id % 7 == 4)
			for (int c = 0; c < 2; c++)
				p->ret.counts[c] = y.bytes[0] * 0 +
					(c ? y.bytes[p->ret.trigger_id * 2] - y.bytes[(p->ret.trigger_id - 2) * 2]
					   : y.x[p->ret.trigger_id * 2] - y.x[(p->ret.trigger_id - 2) * 2]);
	}
	drop_packets(&y, every_7th_of_1, NULL);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, 1));
	size_t last = (y.n_triggers - 1) * 2;
	cr_assert_eq(sum_of(&k, 1, 1), y.bytes[last] - y.bytes[0], "never double-counted");
	cr_assert_eq(d->unanswered_carried, 143);
	cr_assert_eq(d->unanswered_lost, 0);
	size_t spans = 0;
	for (size_t i = 0; i < k.n; i++)
		if (k.v[i].domain_id == 1 && (k.v[i].flags & T4_IV_SPANS)) {
			spans++;
			cr_assert_eq(k.v[i].first_trigger + 1, k.v[i].trigger);
		}
	cr_assert_eq(spans, 143);
	cr_assert_not(t4_decoder_damage_stats(dec)->partial);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

Test(decode_synth, damage_between_samples_marks_the_interval_partial)
{
	struct sy y;
	struct keep k;
	struct t4_decoder *dec;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 600);
	sy_build(&y);
	memset(&k, 0, sizeof(k));
	cr_assert_eq(t4_decoder_new(&dec, &o, &keep_ops, &k), 0);
	for (size_t i = 0; i < y.n_pk; i++) {
		const struct t4_packet *p = &y.pk[i];
		bool lost = p->type == T4_PKT_RET && p->ret.trigger_id >= 300 && p->ret.trigger_id < 305;
		if (p->type == T4_PKT_RET && p->ret.trigger_id == 300 && p->ret.domain_id == 1)
			t4_decoder_damage(dec, 1234, "chunk at offset 1234: payload CRC mismatch");
		if (!lost)
			cr_assert_eq(t4_decoder_feed(dec, p), 0);
	}
	cr_assert_eq(t4_decoder_finish(dec, NULL), 0);
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, 1));
	cr_assert_eq(d->unanswered_lost, 5);
	cr_assert(t4_decoder_damage_stats(dec)->partial);
	size_t partial = 0;
	for (size_t i = 0; i < k.n; i++)
		partial += !!(k.v[i].flags & T4_IV_PARTIAL);
	cr_assert_eq(partial, 2, "one per domain");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* Duplicates and returns out of order within the look-ahead decode to
 * exactly what the clean stream gives. */
Test(decode_synth, duplicates_and_reordering_change_nothing)
{
	struct sy y;
	struct keep clean, messy;
	struct t4_decode_opts o = { 0 };
	uint64_t rng = 99;

	sy_two_clocks(&y, 1500);
	sy_build(&y);
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &clean));
	struct t4_packet *m = malloc(2 * y.n_pk * sizeof(*m));
	size_t n = 0;
	for (size_t i = 0; i < y.n_pk; i++) {
		m[n++] = y.pk[i];
		if (y.pk[i].type == T4_PKT_RET && sy_rand(&rng) % 20 == 0)
			m[n++] = y.pk[i]; /* a second copy */
	}
	for (size_t i = 10; i + 12 < n; i++) /* swaps a few packets apart */
		if (sy_rand(&rng) % 10 == 0) {
			size_t j = i + 1 + sy_rand(&rng) % 10;
			struct t4_packet t = m[i];
			m[i] = m[j];
			m[j] = t;
		}
	struct t4_decoder *dec = sy_decode(m, n, &o, &messy);
	cr_assert_eq(messy.n, clean.n);
	/* same intervals, possibly emitted in another order across domains */
	for (uint32_t id = 1; id <= 2; id++) {
		size_t a = 0, b = 0;
		for (;;) {
			while (a < clean.n && clean.v[a].domain_id != id)
				a++;
			while (b < messy.n && messy.v[b].domain_id != id)
				b++;
			if (a == clean.n || b == messy.n)
				break;
			cr_assert_eq(clean.v[a].trigger, messy.v[b].trigger);
			cr_assert_eq(clean.v[a].start, messy.v[b].start);
			cr_assert_eq(clean.v[a].end, messy.v[b].end);
			cr_assert_eq(clean.v[a].counts[1], messy.v[b].counts[1]);
			a++;
			b++;
		}
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, id));
		cr_assert_gt(d->duplicates, 0);
	}
	t4_decoder_free(dec);
	free(m);
	free(clean.v);
	free(messy.v);
	sy_free(&y);
}

Test(decode_synth, large_ids_and_two_schedulers)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 800);
	y.dom[0].id = 5000;
	y.dom[1].id = 70001;
	y.dom[1].sched = 1;
	sy_bookmark(&y, 7, "zero", 0, 0);
	sy_bookmark(&y, 100000, "one", 0, 0);
	sy_build(&y);
	/* scheduler 1's references carry another bookmark: the phases are the
	 * phase scheduler's (the lowest ID) for every domain, one timeline */
	for (size_t i = 0; i < y.n_pk; i++)
		if (y.pk[i].type == T4_PKT_REF)
			y.pk[i].ref.bookmark_id = y.pk[i].ref.sched_id ? 100000 : 7;
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(k.n, 2 * 799);
	for (size_t i = 0; i < k.n; i++)
		cr_assert_eq(k.v[i].bookmark, 7u, "domain %u", k.v[i].domain_id);
	cr_assert_str_eq(t4_decoder_bookmark(dec, 100000), "one");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

Test(decode_synth, triggers_without_references_keep_the_bookmark)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	size_t w = 0;

	sy_two_clocks(&y, 500);
	sy_bookmark(&y, 1, "one", 0, 0);
	sy_bookmark(&y, 2, "two", 100, 0);
	sy_build(&y);
	for (size_t i = 0; i < y.n_pk; i++) {
		struct t4_packet *p = &y.pk[i];
		if (p->type == T4_PKT_REF && p->ref.trigger_id >= 200 && p->ref.trigger_id < 210)
			continue; /* lost */
		y.pk[w++] = *p;
	}
	y.n_pk = w;
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	size_t noref = 0;
	for (size_t i = 0; i < k.n; i++) {
		const struct civ *c = &k.v[i];
		cr_assert_eq(c->bookmark, c->trigger >= 100 ? 2u : 1u, "trigger %" PRIu64, c->trigger);
		noref += !!(c->flags & T4_IV_NO_REF);
	}
	cr_assert_eq(noref, 20);
	cr_assert_eq(t4_decoder_damage_stats(dec)->refs_missing, 10);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* Bookmarks with set_ns: phases start exactly there, a phase shorter than
 * one period exists, and the phases' totals add up to the domain's. */
Test(decode_synth, exact_phases_apportion_by_overlap)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 1000);
	uint64_t t0 = y.t0 = 5000000000ull;
	/* a: from the start; b: 300.4 ms; c: 300.7 ms (0.3 ms long); b again 301.0 */
	sy_bookmark(&y, 1, "a", 0, t0 - 5000);
	sy_bookmark(&y, 2, "b", 301, t0 + 300400000);
	sy_bookmark(&y, 3, "c", 301, t0 + 300700000);
	sy_bookmark(&y, 2, "b", 302, t0 + 301000000);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_n_phases(dec), 4);
	const struct t4_dec_phase *c = t4_decoder_phase_at(dec, 2);
	cr_assert_str_eq(c->name, "c");
	cr_assert(c->exact);
	cr_assert_eq(c->start_ns, t0 + 300700000);
	cr_assert_eq(c->end_ns - c->start_ns, 300000);
	cr_assert_eq(t4_decoder_phase_at(dec, 3)->occurrence, 2);
	for (uint32_t id = 1; id <= 2; id++) {
		size_t slot = sy_slot(dec, id);
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, slot);
		t4_u128 sum = 0;
		uint64_t el, el_sum = 0;
		for (size_t p = 0; p < t4_decoder_n_phases(dec); p++) {
			const t4_u128 *tot = t4_decoder_phase_totals(dec, p, slot, &el);
			cr_assert(tot);
			sum += tot[1];
			el_sum += el;
		}
		cr_assert(sum == d->totals[1], "phases add up exactly");
		const t4_u128 *tc = t4_decoder_phase_totals(dec, 2, slot, &el);
		/* 0.3 ms of traffic, within one interval's rounding */
		double want = y.dom[id - 1].bytes_per_ns * 300000;
		cr_assert_lt(fabs((double)tc[1] - want), want * 0.02 + 2, "%g vs %g", (double)tc[1], want);
		cr_assert_eq(el, 300000);
		cr_assert_eq(el_sum, d->last_ns - d->first_ns);
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* A bookmark timed elsewhere (libt410trace's probe) reaches the log with
 * the trigger that takes it, here 200 triggers after its time (the
 * reference packets in between still carry the old one): the counters are
 * split at its time all the same. */
Test(decode_synth, a_late_timed_bookmark_splits_the_counters_at_its_time)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 600);
	uint64_t t0 = y.t0 = 5000000000ull;
	sy_bookmark(&y, 1, "a", 0, t0 - 5000);
	sy_bookmark(&y, 2, "b", 501, t0 + 300400000); /* set at 300.4 ms */
	sy_build(&y);
	/* a log with the CPU/GPU activity (where probe bookmarks come from):
	 * a thread's name right after the session */
	struct t4_packet *pk = calloc(y.n_pk + 1, sizeof(*pk));
	cr_assert_not_null(pk);
	pk[0] = y.pk[0];
	pk[1].type = T4_PKT_TASK;
	pk[1].task = (struct t4_task_pkt){ .pid = 77, .tid = 77, .ppid = 1, .mono_ns = t0 };
	memcpy(pk + 2, y.pk + 1, (y.n_pk - 1) * sizeof(*pk));
	struct t4_decoder *dec = sy_decode(pk, y.n_pk + 1, &o, &k);
	cr_assert_eq(t4_decoder_n_phases(dec), 2);
	cr_assert_eq(t4_decoder_phase_at(dec, 1)->start_ns, t0 + 300400000);
	for (uint32_t id = 1; id <= 2; id++) {
		size_t slot = sy_slot(dec, id);
		uint64_t el_a, el_b;
		const t4_u128 *ta = t4_decoder_phase_totals(dec, 0, slot, &el_a);
		const t4_u128 *tb = t4_decoder_phase_totals(dec, 1, slot, &el_b);
		cr_assert(ta && tb);
		/* a: the domain's intervals from its first sample to 300.4 ms */
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, slot);
		cr_assert_eq(el_a, t0 + 300400000 - d->first_ns, "domain %u: a has %llu ns", id,
			     (unsigned long long)el_a);
		double want = y.dom[id - 1].bytes_per_ns * 300400000;
		cr_assert_lt(fabs((double)ta[1] - want), want * 0.01, "%g vs %g", (double)ta[1], want);
		cr_assert_gt(el_b, 0);
	}
	t4_decoder_free(dec);
	free(k.v);
	free(pk);
	sy_free(&y);
}

Test(decode_synth, phases_from_reference_packets_in_older_logs)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 900);
	sy_bookmark(&y, 1, "p1", 0, 0);
	sy_bookmark(&y, 2, "p2", 300, 0);
	sy_bookmark(&y, 1, "p1", 600, 0);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_n_phases(dec), 3);
	const struct t4_dec_phase *p = t4_decoder_phase_at(dec, 1);
	cr_assert_str_eq(p->name, "p2");
	cr_assert_not(p->exact);
	/* closing convention: trigger 300's interval starts at trigger 299 */
	cr_assert_eq(p->start_ns, y.t0 + 299 * y.period);
	cr_assert_eq(p->triggers, 300);
	cr_assert_eq(t4_decoder_phase_at(dec, 2)->occurrence, 2);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* A bin longer than the reference clock's time before the first trigger
 * (--bin 1e18ns) with a domain read just before that trigger: its bin -1
 * starts at the clock's 0 instead of wrapping below it, so the row starts
 * where its counts do and keeps them (it said a start 10^18 ns before the
 * first trigger and lost all but 1 of its counts). */
Test(decode_synth, a_bin_longer_than_the_clock_keeps_counts_before_the_first_trigger)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { .bin_ns = 1000000000000000000ull, .model = T4_CLOCK_WINDOW };
	uint64_t early = 100000;

	sy_two_clocks(&y, 100);
	sy_build(&y);
	for (size_t i = 0; i < y.n_pk; i++) { /* domain 1's first read: before trigger 0 */
		struct t4_packet *p = &y.pk[i];
		if (p->type == T4_PKT_RET && p->ret.trigger_id == 0 && p->ret.domain_id == 1) {
			p->ret.read_begin_ns = y.t0 - early;
			p->ret.read_end_ns = y.t0 - early + 1000;
		}
	}
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &k));
	for (uint32_t id = 1; id <= 2; id++) {
		size_t di = id - 1, last = (y.n_triggers - 1) * 2 + di;
		cr_assert_eq(sum_of(&k, id, 0), y.x[last] - y.x[di], "domain %u's clock total", id);
		cr_assert_eq(sum_of(&k, id, 1), y.bytes[last] - y.bytes[di], "domain %u's bytes", id);
	}
	for (size_t i = 0; i < k.n; i++)
		cr_assert(k.v[i].start >= y.t0 - early && k.v[i].start < k.v[i].end,
			  "row %zu of domain %u: [%" PRIu64 ", %" PRIu64 ")", i, k.v[i].domain_id,
			  k.v[i].start, k.v[i].end);
	cr_assert_eq(k.v[0].start, y.t0 - early + 500, "the first row starts at its read");
	free(k.v);
	sy_free(&y);
}

Test(decode_synth, grid_cells_line_up_and_conserve_every_total)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { .bin_ns = 2500000 }; /* 2.5 ms cells, 1 ms period */

	sy_two_clocks(&y, 1200);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	uint64_t origin = t4_decoder_origin_ns(dec);
	for (uint32_t id = 1; id <= 2; id++) {
		size_t di = id - 1, last = (y.n_triggers - 1) * 2 + di;
		cr_assert_eq(sum_of(&k, id, 0), y.x[last] - y.x[di]);
		cr_assert_eq(sum_of(&k, id, 1), y.bytes[last] - y.bytes[di]);
	}
	/* whole cells but the first and the last of each domain, which cover
	 * only the time from its first sample, to its last */
	size_t first[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX }, last[3] = { 0 };
	for (size_t i = 0; i < k.n; i++) {
		uint32_t id = k.v[i].domain_id;
		first[id] = first[id] == SIZE_MAX ? i : first[id];
		last[id] = i;
	}
	for (size_t i = 0; i < k.n; i++) {
		const struct civ *c = &k.v[i];
		bool edge = i == first[c->domain_id] || i == last[c->domain_id];
		cr_assert(c->flags & T4_IV_BIN);
		cr_assert_eq((c->start - origin) / o.bin_ns, (c->end - 1 - origin) / o.bin_ns,
			     "a cell across the grid");
		if (!edge) {
			cr_assert_eq((c->start - origin) % o.bin_ns, 0);
			cr_assert_eq(c->end - c->start, o.bin_ns);
		}
		cr_assert_eq(c->elapsed, c->end - c->start, "the time its counts cover");
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

Test(decode_synth, time_window_and_phase_filters)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 1000);
	y.t0 = 5000000000ull;
	sy_bookmark(&y, 1, "warm", 0, y.t0 - 1000);
	sy_bookmark(&y, 2, "hot", 401, y.t0 + 400500000);
	sy_bookmark(&y, 1, "warm", 701, y.t0 + 700500000);
	sy_build(&y);
	cr_assert_eq(t4_timepoint_parse("200ms", &o.from), 0);
	cr_assert_eq(t4_timepoint_parse("0.3s", &o.to), 0);
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &k));
	cr_assert(k.n >= 2 * 98 && k.n <= 2 * 101, "%zu intervals in 100 ms", k.n);
	for (size_t i = 0; i < k.n; i++) {
		uint64_t mid = k.v[i].start + (k.v[i].end - k.v[i].start) / 2;
		cr_assert(mid >= y.t0 + 200 * MS && mid < y.t0 + 300 * MS);
	}
	free(k.v);
	memset(&o, 0, sizeof(o));
	cr_assert_eq(t4_timepoint_parse("hot", &o.from), 0);
	cr_assert_eq(t4_timepoint_parse("hot", &o.to), 0);
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &k));
	cr_assert(k.n >= 2 * 298 && k.n <= 2 * 301, "%zu intervals of 'hot'", k.n);
	free(k.v);
	memset(&o, 0, sizeof(o));
	o.phase = "warm";
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &k));
	size_t cut = 0;
	for (size_t i = 0; i < k.n; i++) {
		/* only warm: the intervals holding a change at 400.5 or 700.5 ms
		 * give their warm piece, cut at the change */
		uint64_t s = k.v[i].start, e = k.v[i].end;
		cr_assert_eq(k.v[i].bookmark, 1);
		cr_assert(e <= y.t0 + 400500000 || s >= y.t0 + 700500000, "[%" PRIu64 ", %" PRIu64
			  ") outside the warm phases", s - y.t0, e - y.t0);
		cut += e == y.t0 + 400500000 || s == y.t0 + 700500000;
	}
	cr_assert_eq(cut, 4, "%zu pieces cut at a change (2 domains x 2 changes)", cut);
	cr_assert_eq(k.n, 2 * (999 - 300) + 2, "%zu warm pieces", k.n);
	free(k.v);
	cr_assert_eq(t4_timepoint_parse("", &o.from), -EINVAL);
	cr_assert_eq(t4_timepoint_parse("12parsecs", &o.from), -EINVAL);
	sy_free(&y);
}

/* --from 0s is the first trigger, as --from 0 is: a zero time in any unit
 * is a time (was refused as "duration out of range"). */
Test(decode_synth, a_zero_time_in_any_unit_is_the_first_trigger)
{
	static const char *const zeros[] = { "0", "0s", "0ms", "0.0us", "0ns", "0h" };
	struct t4_timepoint tp;

	for (size_t i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++) {
		cr_assert_eq(t4_timepoint_parse(zeros[i], &tp), 0, "%s: %s", zeros[i], t4_errmsg());
		cr_assert(tp.set && !tp.is_bookmark, "%s: a time", zeros[i]);
		cr_assert_eq(tp.offset_ns, 0, "%s: %" PRIu64 " ns", zeros[i], tp.offset_ns);
	}
	cr_assert_eq(t4_timepoint_parse("1.5s", &tp), 0);
	cr_assert_eq(tp.offset_ns, 1500000000ull);
}

Test(decode_synth, reference_clocked_domains_use_their_windows)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 300);
	y.dom[1].reference_clocked = true;
	y.dom[1].kind = T4_DOM_SOFTWARE;
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, 2));
	cr_assert(d->clock.reference_clocked);
	cr_assert_eq(d->clock.model, T4_CLOCK_WINDOW);
	cr_assert_str_eq(d->kind_label, "software");
	for (size_t i = 0; i < y.n_pk; i++) {
		const struct t4_packet *p = &y.pk[i];
		if (p->type != T4_PKT_RET || p->ret.domain_id != 2 || !p->ret.trigger_id)
			continue;
		bool found = false;
		for (size_t j = 0; j < k.n && !found; j++)
			if (k.v[j].domain_id == 2 && k.v[j].trigger == p->ret.trigger_id) {
				cr_assert_eq(k.v[j].end, p->ret.read_begin_ns +
						 (p->ret.read_end_ns - p->ret.read_begin_ns) / 2);
				found = true;
			}
		cr_assert(found);
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* Thousands of phase changes (more than the per-phase totals kept one by
 * one): every phase name's totals still add up exactly to the domain's. */
Test(decode_synth, many_phases_keep_exact_name_totals)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 5000);
	y.t0 = 5000000000ull;
	y.period = 1000000;
	for (uint64_t t = 0; t < 4999; t++) /* a, b, c, a, ... set mid-interval */
		sy_bookmark(&y, 1 + (uint32_t)(t % 3), t % 3 == 0 ? "a" : t % 3 == 1 ? "b" : "c",
			    t + 1, y.t0 + t * y.period + 400000);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_gt(t4_decoder_n_phases(dec), 4096);
	uint64_t el;
	cr_assert_null(t4_decoder_phase_totals(dec, 4500, 0, &el), "past the listed ones");
	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		t4_u128 sum = 0;
		uint64_t el_sum = 0;
		for (uint32_t b = 0; b <= 3; b++) { /* 0: before the first bookmark */
			const t4_u128 *t = t4_decoder_name_totals(dec, b, i, &el);
			cr_assert(t);
			sum += t[1];
			el_sum += el;
			cr_assert(!b || el > (d->last_ns - d->first_ns) / 3 - 1000000, "%u: %llu", b,
				  (unsigned long long)el);
		}
		cr_assert(sum == d->totals[1], "name totals add up exactly");
		cr_assert_eq(el_sum, d->last_ns - d->first_ns);
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* ---- grid trigger IDs, a MONOTONIC reference clock (the in-kernel path) ---------- */

struct id_range {
	uint64_t first, n;
};

static bool ref_in(const struct t4_packet *p, const void *ud)
{
	const struct id_range *r = ud;

	return p->type == T4_PKT_REF && p->ref.trigger_id - r->first < r->n;
}

/* The scheduler missed triggers k..k+n-1: no reference packets; with
 * overrun, its next one says so (grid IDs leave the gap, FORMAT.md 6). */
static void miss_refs(struct sy *y, uint64_t k, uint64_t n, bool overrun)
{
	for (size_t i = 0; overrun && i < y->n_pk; i++)
		if (y->pk[i].type == T4_PKT_REF && y->pk[i].ref.trigger_id == k + n)
			y->pk[i].ref.overruns += (uint32_t)n;
	drop_packets(y, ref_in, &(struct id_range){ k, n });
}

/* Gaps that the next reference packet reports as overruns are no missing
 * reference packets; a gap nobody reports is; overruns the first packet
 * reports fall before the log. */
Test(decode_synth, overrun_gaps_are_not_missing_references)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 1000);
	sy_build(&y);
	miss_refs(&y, 100, 1, true);
	miss_refs(&y, 200, 3, true);
	miss_refs(&y, 0, 2, true); /* the log starts at trigger 2, overruns 2 */
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_damage_stats(dec)->refs_missing, 0);
	cr_assert_eq(t4_index_sched(t4_decoder_index(dec), 0)->overruns, 6);
	t4_decoder_free(dec);
	free(k.v);

	miss_refs(&y, 500, 1, false);
	dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_damage_stats(dec)->refs_missing, 1);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* On the in-kernel path a reference packet's ref_ns is its grid point and
 * the timer reads the bookmark a little later: a bookmark set in between
 * is carried by that trigger (its first_trigger) though set after its
 * ref_ns. That is no lost bookmark packet: one exact phase from set_ns. */
Test(decode_synth, a_bookmark_set_after_its_grid_point_is_no_damage)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	sy_two_clocks(&y, 300);
	y.t0 = 5000000000ull;
	y.period = 1000000;
	sy_bookmark(&y, 1, "a", 100, y.t0 + 100 * y.period + 5000);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_damage_stats(dec)->phases_unplaced, 0);
	cr_assert_eq(t4_decoder_n_phases(dec), 2);
	const struct t4_dec_phase *a = t4_decoder_phase_at(dec, 1);
	cr_assert_str_eq(a->name, "a");
	cr_assert(a->exact);
	cr_assert_eq(a->start_ns, y.t0 + 100 * y.period + 5000);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}
