/* test_decode_fit.c - the decoder's clock fit (decode/hull.c): the
 * convex-hull fit recovers a line inside every window, finds a kink
 * infeasible, and wide windows cost it nothing.
 */
#include "decode_synth.h"

#include "decode/decode_int.h"

Test(decode_fit, recovers_a_line_inside_every_window)
{
	struct t4_fit_pt p[48];
	struct t4_fit f;
	uint64_t rng = 7;

	for (int i = 0; i < 48; i++) {
		double x = i * 1.7e6; /* ticks */
		double t = 12345 + 0.5882352 * x; /* ns: a 1.7 GHz clock */
		double a = sy_unit(&rng) * 1500, b = sy_unit(&rng) * 1500;
		p[i] = (struct t4_fit_pt){ x, t - a, t + b };
	}
	dec_fit_hull(p, 48, &f);
	cr_assert(f.feasible);
	cr_assert_leq(f.b_min, f.b);
	cr_assert_leq(f.b, f.b_max);
	for (int i = 0; i < 48; i++) {
		double v = f.a + f.b * p[i].x;
		cr_assert(v >= p[i].lo - 1e-3 && v <= p[i].hi + 1e-3, "sample %d off its window", i);
	}
	cr_assert_lt(fabs(f.b / 0.5882352 - 1), 20e-6, "slope %.9f", f.b);
}

Test(decode_fit, a_kink_is_infeasible)
{
	struct t4_fit_pt p[32];
	struct t4_fit f;

	for (int i = 0; i < 32; i++) {
		double x = i * 1e6, t = i < 16 ? x : 16e6 + (x - 16e6) * 1.05; /* 5% step */
		p[i] = (struct t4_fit_pt){ x, t - 500, t + 500 };
	}
	dec_fit_hull(p, 32, &f);
	cr_assert_not(f.feasible);
	dec_fit_hull(p, 16, &f);
	cr_assert(f.feasible);
}

Test(decode_fit, wide_windows_cost_nothing)
{
	struct t4_fit_pt p[48];
	struct t4_fit tight, wide;

	for (int i = 0; i < 48; i++) {
		double t = 1000.0 * i;
		p[i] = (struct t4_fit_pt){ i * 2000.0, t - 100, t + 100 };
	}
	dec_fit_hull(p, 48, &tight);
	p[10].lo -= 50000; /* a read preempted for 50 us */
	p[30].hi += 80000;
	dec_fit_hull(p, 48, &wide);
	cr_assert(wide.feasible);
	cr_assert_float_eq(wide.b, tight.b, 1e-12);
	cr_assert_float_eq(wide.a, tight.a, 1e-6);
}

/* The clock model copies a block's hulls when they start a combined hull
 * (clock.c hulls_of): pushing a hull's own vertices onto nothing must pop
 * none of them, whatever the points (noisy, collinear, repeated, huge). */
static void repush_keeps(const struct t4_hpt *pts, unsigned n, bool upper)
{
	struct t4_hpt h[256], again[256];
	unsigned nh = 0, na = 0;

	for (unsigned i = 0; i < n; i++)
		dec_hull_push(h, &nh, pts[i], upper);
	for (unsigned i = 0; i < nh; i++)
		dec_hull_push(again, &na, h[i], upper);
	cr_assert_eq(na, nh, "%s hull of %u points: %u vertices pushed again gave %u",
		     upper ? "upper" : "lower", n, nh, na);
	cr_assert_eq(memcmp(h, again, nh * sizeof(*h)), 0);
}

Test(decode_fit, a_hull_pushed_again_keeps_every_vertex)
{
	struct t4_hpt p[256];
	uint64_t rng = 19;

	for (int round = 0; round < 2000; round++) {
		unsigned n = 2 + (unsigned)(sy_unit(&rng) * 250);
		double scale = round % 3 == 0 ? 1 : round % 3 == 1 ? 1e9 : 4e15;
		double x = sy_unit(&rng) * scale;
		for (unsigned i = 0; i < n; i++) {
			x += 1 + floor(sy_unit(&rng) * 3) * (round % 5 ? 1e6 : 1); /* some repeat steps */
			double noise = round % 7 == 0 ? 0 : floor(sy_unit(&rng) * 2000); /* collinear too */
			p[i] = (struct t4_hpt){ x, 0.588 * x + noise };
		}
		repush_keeps(p, n, true);
		repush_keeps(p, n, false);
	}
}

/* Inside the hull's x range the unchecked walk and the walk edge by edge
 * (clock.c's over a block, of every sample or some) give the checked
 * one's value to the bit; outside, the checked one NaN. */
Test(decode_fit, the_walk_inside_the_range_is_the_checked_walk)
{
	struct t4_hpt p[64], h[64];
	uint64_t rng = 41;

	for (int round = 0; round < 500; round++) {
		unsigned n = 1 + (unsigned)(sy_unit(&rng) * 63), nh = 0;
		double x = 0;
		for (unsigned i = 0; i < n; i++) {
			x += 1 + floor(sy_unit(&rng) * 1e6);
			p[i] = (struct t4_hpt){ x, 0.7 * x + floor(sy_unit(&rng) * 3000) };
			dec_hull_push(h, &nh, p[i], round % 2);
		}
		unsigned a = 0, b = 0, m = 0, step = 1 + round % 3;
		double xs[64], ys[64], vs[64];
		for (unsigned i = 0; i < n; i++) {
			double v = dec_hull_walk(h, nh, &a, p[i].x), w = dec_hull_walk_in(h, nh, &b, p[i].x);
			cr_assert(memcmp(&v, &w, sizeof(v)) == 0, "round %d sample %u: %g vs %g", round, i, v, w);
			cr_assert_eq(a, b);
			if (i % step == 0 || i == n - 1) {
				xs[m] = p[i].x;
				vs[m++] = v;
			}
		}
		dec_hull_at(h, nh, xs, m, ys);
		cr_assert(memcmp(ys, vs, m * sizeof(*ys)) == 0, "round %d: edge by edge", round);
		a = 0;
		cr_assert(isnan(dec_hull_walk(h, nh, &a, p[0].x - 1)));
		cr_assert(isnan(dec_hull_walk(h, nh, &a, p[n - 1].x + 1)));
	}
}

/* dec_fit_prefix() (the clock model's cut, hulls grown a point at a time)
 * finds where dec_fit_hull() of a growing prefix first fails, to the
 * point: kinks anywhere, steps up and down, preempted windows, none. */
Test(decode_fit, the_prefix_that_fits_is_dec_fit_hull_s)
{
	struct t4_fit_pt p[64];
	uint64_t rng = 23;
	int inside = 0, all = 0;

	for (int round = 0; round < 3000; round++) {
		size_t n = 3 + (size_t)(sy_unit(&rng) * 61), kink = (size_t)(sy_unit(&rng) * 80);
		double rate = 0.5 + sy_unit(&rng), step = round % 3 ? 0.8 : 1.001, t = 0;
		for (size_t i = 0; i < n; i++) {
			double x = (double)i * 1.7e6 + floor(sy_unit(&rng) * 1000);
			t = i == kink ? t : i > kink ? t + 1.7e6 * rate * step : x * rate;
			double a = floor(sy_unit(&rng) * 1500), b = floor(sy_unit(&rng) * 1500);
			if (round % 4 == 1 && sy_unit(&rng) < 0.05)
				a += 20000 + floor(sy_unit(&rng) * 80000); /* preempted */
			p[i] = (struct t4_fit_pt){ x, floor(t) - a, floor(t) + b };
		}
		size_t m = 2;
		struct t4_fit f;
		for (; m < n; m++) {
			dec_fit_hull(p, m + 1, &f);
			if (!f.feasible)
				break;
		}
		cr_assert_eq(dec_fit_prefix(p, n), m, "round %d: %zu points, kink at %zu", round, n,
			     kink);
		inside += m > 2 && m < n;
		all += m == n;
	}
	cr_log_info("%d prefixes cut inside, %d whole", inside, all);
	cr_assert_gt(inside, 1000, "the cases cut inside the points");
	cr_assert_gt(all, 300, "and fit whole");
}

/* Andrew's monotone chain, one step, as written in the textbook (and in
 * dec_hull_push() before it kept the top vertex in a register): the
 * reference that the pushes must follow to the bit. */
static void textbook_push(struct t4_hpt *h, unsigned *n, struct t4_hpt p, bool upper)
{
	unsigned k = *n;
	double sign = upper ? 1 : -1;

	while (k >= 2 && sign * ((h[k - 1].x - h[k - 2].x) * (p.y - h[k - 1].y) -
				 (h[k - 1].y - h[k - 2].y) * (p.x - h[k - 1].x)) >= 0)
		k--;
	h[k++] = p;
	*n = k;
}

/* dec_hull_push() keeps the textbook's vertices, whatever the points:
 * noisy, collinear (turns of exactly 0), repeated steps, huge. */
Test(decode_fit, the_push_is_the_textbook_chain)
{
	struct t4_hpt p[256], h[256], ref[256];
	uint64_t rng = 29;

	for (int round = 0; round < 3000; round++) {
		unsigned n = 1 + (unsigned)(sy_unit(&rng) * 255), nh = 0, nr = 0;
		bool upper = round % 2;
		double scale = round % 3 == 0 ? 1 : round % 3 == 1 ? 1e9 : 4e15;
		double x = sy_unit(&rng) * scale;
		for (unsigned i = 0; i < n; i++) {
			x += 1 + floor(sy_unit(&rng) * 3) * (round % 5 ? 1e6 : 1);
			double noise = round % 7 == 0 ? 0 : floor(sy_unit(&rng) * 2000);
			p[i] = (struct t4_hpt){ x, 0.588 * x + noise };
			dec_hull_push(h, &nh, p[i], upper);
			textbook_push(ref, &nr, p[i], upper);
			cr_assert_eq(nh, nr, "round %d point %u", round, i);
		}
		cr_assert_eq(memcmp(h, ref, nh * sizeof(*h)), 0, "round %d", round);
	}
}

/* dec_fmax_n() and dec_fmin_n() (the clock model's clamps, y never NaN)
 * give dec_fmax()'s and dec_fmin()'s values to the bit: equal values and
 * signed zeros (the second), infinities, a NaN x. */
Test(decode_fit, the_clamps_without_nan_tests_are_fmax_and_fmin)
{
	const double v[] = { -INFINITY, -1e300, -2.5, -0.0, 0.0, 1e-310, 2.5, 3.0, 1e300,
			     INFINITY, NAN };
	size_t nv = sizeof(v) / sizeof(v[0]);

	for (size_t i = 0; i < nv; i++)
		for (size_t j = 0; j + 1 < nv; j++) { /* y: every value but NaN */
			double a = dec_fmax(v[i], v[j]), b = dec_fmax_n(v[i], v[j]);
			double c = dec_fmin(v[i], v[j]), d = dec_fmin_n(v[i], v[j]);
			cr_assert(memcmp(&a, &b, sizeof(a)) == 0, "fmax(%g, %g)", v[i], v[j]);
			cr_assert(memcmp(&c, &d, sizeof(c)) == 0, "fmin(%g, %g)", v[i], v[j]);
		}
}
