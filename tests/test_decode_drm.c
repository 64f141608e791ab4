/* test_decode_drm.c - gauges and the DRM domain in the decoder: busy
 * percent from cumulative render time and its capacity, gauges as levels
 * in intervals and time-weighted means in phases and --bin bins.
 */
#include "decode_synth.h"

#include <errno.h>
#include <inttypes.h>
#include <unistd.h>

#include "decode/decode_int.h"

/* ---- gauges and the DRM domain ------------------------------------------------ */

/* A DRM domain (FORMAT 6.2): render busy ns (cumulative), its capacity and a
 * memory level (gauges). Busy % = busy / elapsed / capacity; gauges are
 * levels in intervals, time-weighted means in phases and --bin bins. */
static void drm_stream(struct sy *y, uint64_t n, uint64_t period, uint64_t lo, uint64_t hi)
{
	static const char *const names[] = { "c7.engine.render", "c7.capacity.render",
					     "c7.memory.vram" };
	struct t4_packet *p = sy_push(y);

	y->period = period;
	p->type = T4_PKT_DOMAIN;
	p->domain = (struct t4_domain_pkt){ .domain_id = 3, .kind = T4_DOM_DRM, .cpu = -1,
					    .clock_event = -1 };
	snprintf(p->domain.name, sizeof(p->domain.name), "drm");
	for (uint32_t e = 0; e < 3; e++) {
		p = sy_push(y);
		p->type = T4_PKT_EVENT;
		p->event.domain_id = 3;
		p->event.index = e;
		p->event.flags = e ? T4_EV_GAUGE : 0;
		snprintf(p->event.pmu, sizeof(p->event.pmu), "drm");
		snprintf(p->event.name, sizeof(p->event.name), "%s", names[e]);
	}
	for (uint64_t k = 0; k < n; k++) {
		sy_ref(y, 0, k, 0);
		p = sy_push(y);
		p->type = T4_PKT_RET;
		p->ret.trigger_id = k;
		p->ret.domain_id = 3;
		p->ret.read_begin_ns = y->t0 + k * y->period + 5000;
		p->ret.read_end_ns = p->ret.read_begin_ns;
		p->ret.local_clock = p->ret.read_begin_ns;
		p->ret.n_counts = 3;
		p->ret.flags = k ? 0 : T4_RET_FIRST;
		/* busy 1.5 periods per period on 2 engines: 75%; lo, then hi */
		p->ret.counts[0] = k ? period / 2 * 3 : 0;
		p->ret.counts[1] = 2;
		p->ret.counts[2] = k < n / 2 ? lo : hi;
	}
}

Test(decode_drm, busy_percent_and_gauges)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { .want_metrics = true };

	memset(&y, 0, sizeof(y));
	y.t0 = 5000000000ull;
	drm_stream(&y, 101, 1000000, 1000000000, 3000000000u);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, 0);
	cr_assert_str_eq(d->kind_label, "DRM");
	cr_assert(d->event_gauge[1] && d->event_gauge[2] && !d->event_gauge[0]);
	cr_assert_eq(d->n_metrics, 1);
	cr_assert_str_eq(d->metric_name[0], "c7.render_busy");
	cr_assert_eq(k.n, 100);
	for (size_t i = 0; i < k.n; i++) {
		cr_assert_float_eq(k.v[i].metric0, 75.0, 1e-9, "interval %zu: %f", i, k.v[i].metric0);
		cr_assert_eq(k.v[i].counts[2], k.v[i].trigger < 50 ? 1000000000ull : 3000000000ull,
			     "an interval's gauge is its level");
	}
	/* the phase: mean memory level 2 GB, busy 75% */
	uint64_t el;
	const t4_u128 *tot = t4_decoder_phase_totals(dec, 0, 0, &el);
	double v[T4_MAX_COUNTERS];
	cr_assert(tot);
	t4_decoder_metrics_of(dec, 0, tot, el, v);
	cr_assert_float_eq(v[0], 75.0, 1e-9);
	cr_assert(tot[2] == (t4_u128)1000000000ull * 1000000 * 49 +
				   (t4_u128)3000000000ull * 1000000 * 51,
		  "gauge totals: level x ns");
	t4_decoder_free(dec);
	free(k.v);
	/* --bin 10 ms: busy still 75%, the memory cells 1 GB or 3 GB, the one
	 * across the step their time-weighted mean */
	o.bin_ns = 10000000;
	dec = sy_decode(y.pk, y.n_pk, &o, &k);
	bool mixed = false;
	for (size_t i = 0; i < k.n; i++) {
		cr_assert_float_eq(k.v[i].metric0, 75.0, 1e-6, "cell %zu", i);
		uint64_t m = k.v[i].counts[2];
		cr_assert(m >= 1000000000ull && m <= 3000000000ull, "cell %zu: %llu", i,
			  (unsigned long long)m);
		mixed |= m != 1000000000ull && m != 3000000000ull;
		cr_assert_eq(k.v[i].counts[1], 2, "capacity stays 2");
	}
	cr_assert(mixed, "the cell across the step holds a mean");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* A bin's gauge is the mean of level x ns over the bin, a sum that a u64
 * does not hold for long bins of large levels: 80 GB of VRAM over a
 * 10-minute bin is 4.8e22 byte-ns. Its cells are 80 GB, as its phase. */
Test(decode_drm, long_bins_of_a_large_gauge)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { .want_metrics = true, .bin_ns = 600000000000ull };

	memset(&y, 0, sizeof(y));
	y.t0 = 5000000000ull;
	drm_stream(&y, 61, 10000000000ull, 80000000000ull, 80000000000ull); /* 10 minutes */
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_geq(k.n, 1);
	for (size_t i = 0; i < k.n; i++) {
		cr_assert_eq(k.v[i].counts[2], 80000000000ull, "cell %zu: %" PRIu64 " bytes", i,
			     k.v[i].counts[2]);
		cr_assert_float_eq(k.v[i].metric0, 75.0, 1e-6, "cell %zu", i);
	}
	uint64_t el;
	const t4_u128 *tot = t4_decoder_phase_totals(dec, 0, 0, &el);
	cr_assert(tot && tot[2] / el == 80000000000ull, "the phase's mean level");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* The mean level of a gauge, wherever it is shown (the summary's EVENTS
 * and phases, record's and info's totals, --bin cells, the report), is
 * its level x elapsed ns summed, over the ns: exact for any level and any
 * length. It used to be level x whole us, saturating at 2^64: a level
 * near UINT64_MAX came out 1000 times too small (each interval's weight
 * stuck at 2^64), and intervals of 1.5 us counted 1 us each (a third too
 * small). */
static void exact_mean(uint64_t n, uint64_t period, uint64_t level, uint64_t bin)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { .want_metrics = true };
	struct t4_event_rows rows = { 0 };
	struct t4_index *ix;
	uint64_t el;

	memset(&y, 0, sizeof(y));
	y.t0 = 5000000000ull;
	drm_stream(&y, n, period, level, level);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const t4_u128 *tot = t4_decoder_phase_totals(dec, 0, 0, &el);
	cr_assert_eq(t4_event_rows_from_decoder(dec, SIZE_MAX, false, &rows), 0);
	cr_assert_eq(rows.n, 3);
	cr_assert_str_eq(rows.v[2].event, "c7.memory.vram");
	cr_assert_float_eq(t4_event_row_rate(&rows.v[2]), (double)level, (double)level * 1e-12,
			   "the mean level: %g", t4_event_row_rate(&rows.v[2]));
	t4_event_rows_free(&rows);
	cr_assert(tot && el == (n - 1) * period, "%" PRIu64, el);
	cr_assert(tot[2] == (t4_u128)level * el, "level x ns, exact");
	t4_decoder_free(dec);
	free(k.v);
	/* info and record's totals: the last level over the span */
	cr_assert_eq(t4_index_new(&ix), 0);
	for (size_t i = 0; i < y.n_pk; i++)
		cr_assert_geq(t4_index_add(ix, &y.pk[i]), 0);
	cr_assert_eq(t4_event_rows_from_index(ix, false, &rows), 0);
	cr_assert_float_eq(t4_event_row_rate(&rows.v[2]), (double)level, (double)level * 1e-12,
			   "info's mean level: %g", t4_event_row_rate(&rows.v[2]));
	t4_event_rows_free(&rows);
	t4_index_free(ix);
	/* --bin: every cell the level itself */
	o.bin_ns = bin;
	dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_gt(k.n, 0);
	for (size_t i = 0; i < k.n; i++)
		cr_assert_eq(k.v[i].counts[2], level, "cell %zu: %" PRIu64, i, k.v[i].counts[2]);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

Test(decode_drm, gauges_of_any_level_over_any_length_are_exact)
{
	exact_mean(101, 1000000, UINT64_MAX - 12345, 10000000);   /* huge, 1 ms */
	exact_mean(101, 1000000000, UINT64_MAX, 10000000000ull);  /* the largest, 1 s */
	exact_mean(1001, 1500, 7, 15000);                         /* tiny: 1.5 us */
	exact_mean(1001, 999, 1, 9990);                           /* under 1 us */
}
