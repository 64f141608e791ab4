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

#include "decode/decode_int.h"

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

/* ---- the model's placements, to the bit ------------------------------------ */

/* Every placement and segment the model hands out, folded into one
 * FNV-1a hash (doubles by their bits), with counts of the paths taken. */
struct trace {
	uint64_t hash, placed, nonlinear, segments;
};

static void fold(struct trace *tr, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		tr->hash = (tr->hash ^ (v & 0xff)) * 0x100000001b3ull;
}

static uint64_t bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static void trace_place(void *ud, const struct clk_pt *p, unsigned n, const uint64_t *t,
			const uint64_t *bound, bool nonlinear)
{
	struct trace *tr = ud;

	for (unsigned i = 0; i < n; i++) {
		fold(tr, p[i].seq);
		fold(tr, t[i]);
		fold(tr, bound[i]);
		fold(tr, nonlinear);
		tr->placed++;
		tr->nonlinear += nonlinear;
	}
}

static void trace_segment(void *ud, const struct t4_clock_segment *s)
{
	struct trace *tr = ud;
	const uint64_t v[] = { s->first_trigger, s->last_trigger, s->start_ns, s->end_ns,
			       s->samples, bits(s->freq_hz), bits(s->drift_ppm),
			       bits(s->residual_ns) };

	for (size_t i = 0; i < T4_ARRAY_LEN(v); i++)
		fold(tr, v[i]);
	tr->segments++;
}

/* A crafted stream of one domain: n samples at 1 ms, clock hz with noisy
 * read windows; every `preempt`-th read preempted (a wide window), a DVFS
 * step of `step` at sample n/3 and back at 2n/3, the counter restarting
 * every `restart` samples (0: never) and standing still every `still`
 * samples (0: never), and every `drop`-th return dropped. */
struct craft {
	unsigned n;
	double hz, step;
	unsigned preempt, restart, still, drop;
	uint64_t seed;
};

static struct trace run_craft(const struct craft *k)
{
	struct trace tr = { .hash = 0xcbf29ce484222325ull };
	struct clk c;
	uint64_t rng = k->seed, x = 1000000, t = 5000000000ull, xbase = 0;
	double rate = k->hz / 1e9; /* ticks per ns */

	clk_init(&c, k->hz, trace_place, &tr);
	c.on_segment = trace_segment;
	for (unsigned i = 0; i < k->n; i++) {
		t += 1000000;
		if (i == k->n / 3)
			rate *= k->step;
		if (i == 2 * k->n / 3)
			rate /= k->step;
		x = xbase + (uint64_t)((double)(t - 5000000000ull) * rate);
		if (k->restart && i % k->restart == k->restart - 1)
			xbase -= x - 17; /* the counter starts again near 17 */
		if (k->drop && i % k->drop == 3)
			continue;
		uint64_t before = 200 + (sy_rand(&rng) % 900), after = 150 + (sy_rand(&rng) % 700);
		if (k->preempt && i % k->preempt == 1)
			before += 20000 + sy_rand(&rng) % 80000;
		struct clk_pt p = { i, i, x, t - before, t + after };
		if (k->still && i % k->still == 0 && i)
			p.x = c.prev_x; /* the counter stood still */
		clk_push(&c, &p);
	}
	clk_flush(&c);
	clk_free(&c);
	return tr;
}

/* Recorded from the model as it was before its per-sample work was
 * restructured for speed (issue 19, at 803230b): a change of a single
 * placed instant, bound or segment figure changes the hash. The cases
 * take every path: cuts at DVFS steps (both ways), preempted reads,
 * restarts every few samples (segments shorter than a block, than two),
 * counters standing still, dropped returns, no line (window midpoints). */
Test(decode_clock, placements_are_the_recorded_ones)
{
	static const struct {
		struct craft k;
		uint64_t hash, placed, nonlinear, segments;
	} cases[] = {
		{ { 6000, 1.7e9, 1, 0, 0, 0, 0, 1 }, 0x9df072f38d69a3ebull, 6000, 0, 1 },
		{ { 6000, 1.7e9, 0.8, 37, 0, 0, 0, 2 }, 0x50e9cd3b568c4986ull, 6000, 0, 3 },
		{ { 6000, 1.0e9, 1.25, 13, 0, 0, 101, 3 }, 0x15c4e108c17623a1ull, 5940, 0, 3 },
		{ { 4000, 2.0e9, 0.8, 29, 700, 0, 0, 4 }, 0xe794a02ba06845f8ull, 4000, 0, 8 },
		{ { 4000, 1.4e9, 1, 0, 0, 333, 0, 5 }, 0x824efb6fdb5ba4d5ull, 4000, 26, 13 },
		{ { 3000, 1.4e9, 0.9, 7, 45, 0, 0, 6 }, 0xa62f859fc4131e1bull, 3000, 77, 67 },
		{ { 3000, 1.9e9, 0.8, 3, 70, 31, 17, 7 }, 0x65ad0f9976832e1full, 2823, 2021, 134 },
		{ { 3000, 1.1e9, 1, 2, 0, 0, 0, 8 }, 0x8e9e93eb2e6903dfull, 3000, 0, 1 },
		{ { 900, 1.5e9, 0.5, 0, 10, 0, 0, 9 }, 0xc1cfde86e212dfd9ull, 900, 40, 88 },
		{ { 40, 1.5e9, 1, 0, 0, 0, 0, 10 }, 0x0d64bfca49d2281full, 40, 0, 1 },
	};

	for (size_t i = 0; i < T4_ARRAY_LEN(cases); i++) {
		struct trace tr = run_craft(&cases[i].k);
		cr_expect_eq(tr.hash, cases[i].hash, "case %zu: hash %" PRIx64, i, tr.hash);
		cr_expect_eq(tr.placed, cases[i].placed, "case %zu", i);
		cr_expect_eq(tr.nonlinear, cases[i].nonlinear, "case %zu", i);
		cr_expect_eq(tr.segments, cases[i].segments, "case %zu", i);
	}
}
