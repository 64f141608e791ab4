/* test_decode_clock.c - where the rate clock model places samples, on
 * synthetic recordings whose every true instant is known (decode_synth.h):
 * four domains at 1-2 GHz, +-500 ppm of drift with a few ppm of slow
 * wander, a -20% DVFS step, 2% of reads preempted by 20-100 us, 0.5% of
 * returns dropped. The stated accuracy (docs/PERFORMANCE.md, "Clock
 * placement"): RMS <= 10 ns and p99 <= 40 ns over every sample, and the
 * model's stated bound (end_ns +- bound_ns) holds the true instant for at
 * least 99% of them.
 */
#include "decode_synth.h"

#include <inttypes.h>

/* The recording: 30 s at 1 ms. Slow wander: a sine of a few ppm over
 * minutes (an oscillator following its temperature). */
static void hard_clocks(struct sy *y, uint64_t seed)
{
	memset(y, 0, sizeof(*y));
	y->seed = seed;
	y->n_triggers = 30000;
	y->n_doms = 4;
	y->preempt_prob = 0.02;
	y->preempt_min = 20000;
	y->preempt_max = 100000;
	y->drop_prob = 0.005;
	y->dom[0] = (struct sy_dom){ .id = 1, .hz = 1.0e9, .ppm = 500, .bytes_per_ns = 3,
				     .wander_ppm = 3, .wander_period_s = 300 };
	y->dom[1] = (struct sy_dom){ .id = 2, .hz = 1.4e9, .ppm = -500, .bytes_per_ns = 7,
				     .wander_ppm = 2, .wander_period_s = 240 };
	y->dom[2] = (struct sy_dom){ .id = 3, .hz = 1.7e9, .ppm = 230, .bytes_per_ns = 1,
				     .step_at_s = 12.3456, .step_factor = 0.8,
				     .wander_ppm = 2.5, .wander_period_s = 400 };
	y->dom[3] = (struct sy_dom){ .id = 4, .hz = 2.0e9, .ppm = -120, .bytes_per_ns = 11,
				     .wander_ppm = 3, .wander_period_s = 180 };
}

struct errs {
	double rms, p99, covered;
	size_t n;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Placement error over every sample (the end of the last piece of each
 * interval) of every domain, and the share inside the stated bound. */
static struct errs placement(const struct sy *y, const struct keep *k)
{
	double *e = malloc(k->n * sizeof(*e)), ss = 0;
	struct errs out = { 0 };
	size_t in = 0;

	cr_assert(e);
	for (size_t i = 0; i < k->n; i++) {
		const struct civ *c = &k->v[i];
		size_t di = 0;
		if (i + 1 < k->n && k->v[i + 1].trigger == c->trigger &&
		    k->v[i + 1].domain_id == c->domain_id)
			continue; /* a piece cut at a phase boundary */
		while (y->dom[di].id != c->domain_id)
			di++;
		double d = fabs((double)c->end - (double)y->true_t[c->trigger * y->n_doms + di]);
		e[out.n++] = d;
		ss += d * d;
		in += d <= (double)c->bound;
	}
	qsort(e, out.n, sizeof(*e), cmp_double);
	out.rms = sqrt(ss / (double)out.n);
	out.p99 = e[out.n * 99 / 100];
	out.covered = (double)in / (double)out.n;
	free(e);
	return out;
}

Test(decode_clock, rate_model_places_within_10ns, .timeout = 240)
{
	struct t4_decode_opts o = { .model = T4_CLOCK_RATE };
	static const uint64_t seeds[] = { 7, 1234 };

	for (size_t s = 0; s < T4_ARRAY_LEN(seeds); s++) {
		struct sy y;
		struct keep k;
		hard_clocks(&y, seeds[s]);
		sy_build(&y);
		struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
		struct errs e = placement(&y, &k);
		cr_log_info("seed %" PRIu64 ": %zu samples, RMS %.2f ns, p99 %.2f ns, bound holds"
			    " for %.3f%%", seeds[s], e.n, e.rms, e.p99, 100 * e.covered);
		fprintf(stderr, "clock placement, seed %" PRIu64 ": %zu samples, RMS %.2f ns, p99 %.2f"
			" ns, bound holds for %.3f%%\n", seeds[s], e.n, e.rms, e.p99, 100 * e.covered);
		cr_assert_lt(e.rms, 10, "RMS %.2f ns", e.rms);
		cr_assert_lt(e.p99, 40, "p99 %.2f ns", e.p99);
		cr_assert_geq(e.covered, 0.99, "the bound holds for %.3f%%", 100 * e.covered);
		const struct t4_dec_domain *d3 = t4_decoder_domain_at(dec, sy_slot(dec, 3));
		cr_assert_geq(d3->clock.segments, 2, "the DVFS step is a segment of its own");
		t4_decoder_free(dec);
		free(k.v);
		sy_free(&y);
	}
}
