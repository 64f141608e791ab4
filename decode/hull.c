/* hull.c - fitting one clock against the reference clock from bounded
 * samples: Duda's convex-hull method, as in Trace Compass's fully
 * incremental synchronisation.
 *
 * Every sample says: the local clock read x at some instant inside
 * [lo, hi] of the reference clock. Under a linear clock t = a + b * x,
 * each sample gives lo <= a + b * x <= hi: two half-planes in (a, b). Their
 * intersection is every line consistent with every window, the tightest
 * possible answer; a wide window (a read preempted for 50 us) narrows
 * nothing and costs nothing, and an empty region means the clock was not
 * linear over the samples.
 *
 * Only the upper hull of the lower points (x, lo) and the lower hull of the
 * upper points (x, hi) matter. The feasible line of maximum slope touches
 * a lower point on its left and an upper point on its right; the one of
 * minimum slope the other way round. Each is the best over pairs of hull
 * vertices; hulls of noisy samples have a handful of vertices, so the pair
 * scan is cheap. The result is the line midway between the two, taken at
 * the middle of the samples' x range so that the choice of origin does not
 * matter. O(n) for the hulls plus O(|U| |D|) for the pairs.
 */
#include "decode_int.h"

#include <math.h>

#define FIT_MAX 512 /* points in one fit: callers stay below */

/* The line midway between the separating lines of extreme slopes, from the
 * upper hull `up` of the lower points and the lower hull `dn` of the upper
 * points; xc: the middle of the x range. */
static void fit_from_hulls(const struct t4_hpt *up, unsigned nu, const struct t4_hpt *dn,
			   unsigned nd, double xc, struct t4_fit *out)
{
	double bmax = INFINITY, bmin = -INFINITY;
	struct t4_hpt umax = { 0, 0 }, dmin = { 0, 0 };

	*out = (struct t4_fit){ .feasible = false };
	for (unsigned i = 0; i < nu; i++)
		for (unsigned j = 0; j < nd; j++) {
			double dx = dn[j].x - up[i].x;
			if (dx > 0) { /* lower point left, upper point right */
				double s = (dn[j].y - up[i].y) / dx;
				if (s < bmax) {
					bmax = s;
					umax = up[i];
				}
			} else if (dx < 0) { /* upper point left, lower point right */
				double s = (up[i].y - dn[j].y) / -dx;
				if (s > bmin) {
					bmin = s;
					dmin = dn[j];
				}
			}
		}
	if (!isfinite(bmax) || !isfinite(bmin) || bmin > bmax)
		return;
	out->b_max = bmax;
	out->a_max = umax.y - bmax * umax.x;
	out->b_min = bmin;
	out->a_min = dmin.y - bmin * dmin.x;
	double yc = (out->a_max + bmax * xc + out->a_min + bmin * xc) / 2;
	out->b = (bmax + bmin) / 2;
	out->a = yc - out->b * xc;
	/* Pairwise bounds can agree while the region is empty (three
	 * windows can clash where no two do): check the chosen line
	 * against every hull vertex, with a rounding margin. */
	double lo_max = -INFINITY, hi_min = INFINITY;
	for (unsigned i = 0; i < nu; i++) /* finite vertices, b: never NaN */
		lo_max = dec_fmax_n(lo_max, up[i].y - out->b * up[i].x);
	for (unsigned j = 0; j < nd; j++)
		hi_min = dec_fmin_n(hi_min, dn[j].y - out->b * dn[j].x);
	double eps = 1e-9 * (fabs(lo_max) + fabs(hi_min)) + 1e-6;
	out->feasible = lo_max <= out->a + eps && out->a <= hi_min + eps;
}

void dec_fit_hull(const struct t4_fit_pt *pts, size_t n, struct t4_fit *out)
{
	struct t4_hpt up[FIT_MAX], dn[FIT_MAX];
	unsigned nu = 0, nd = 0;

	*out = (struct t4_fit){ .feasible = false };
	if (n < 2 || n > FIT_MAX)
		return;
	for (size_t i = 0; i < n; i++) {
		dec_hull_push(up, &nu, (struct t4_hpt){ pts[i].x, pts[i].lo }, true);
		dec_hull_push(dn, &nd, (struct t4_hpt){ pts[i].x, pts[i].hi }, false);
	}
	fit_from_hulls(up, nu, dn, nd, (pts[0].x + pts[n - 1].x) / 2, out);
}

size_t dec_fit_prefix(const struct t4_fit_pt *pts, size_t n)
{
	struct t4_hpt up[FIT_MAX], dn[FIT_MAX];
	unsigned nu = 0, nd = 0;
	struct t4_fit f;
	size_t m = 0;

	/* the hulls of each prefix are those of the one before with one
	 * more point pushed: dec_fit_hull()'s, built once */
	for (; m < n && m < FIT_MAX; m++) {
		dec_hull_push(up, &nu, (struct t4_hpt){ pts[m].x, pts[m].lo }, true);
		dec_hull_push(dn, &nd, (struct t4_hpt){ pts[m].x, pts[m].hi }, false);
		if (m < 2)
			continue;
		fit_from_hulls(up, nu, dn, nd, (pts[0].x + pts[m].x) / 2, &f);
		if (!f.feasible)
			break;
	}
	return m;
}

void dec_hull_fit(const struct t4_hpt *up, unsigned nu, const struct t4_hpt *dn, unsigned nd,
		 double xc, struct t4_fit *out)
{
	*out = (struct t4_fit){ .feasible = false };
	if (nu + nd < 3)
		return;
	fit_from_hulls(up, nu, dn, nd, xc, out);
}

void dec_hull_at(const struct t4_hpt *h, unsigned n, const double *x, unsigned m, double *y)
{
	const double *end_x = x + m; /* by pointer: one count a sample */
	unsigned e = 0;

	if (n == 1) {
		while (x++ < end_x)
			*y++ = h[0].y;
		return;
	}
	while (x < end_x) {
		while (e + 2 < n && h[e + 1].x <= *x)
			e++;
		/* x and the x after it before the edge's end (the last
		 * edge: all) */
		double x0 = h[e].x, y0 = h[e].y, dx = h[e + 1].x - x0, dy = h[e + 1].y - y0;
		double end = e + 2 < n ? h[e + 1].x : INFINITY;
		if (!(dx > 0)) {
			do
				*y++ = y0;
			while (++x < end_x && *x < end);
			continue;
		}
		do
			*y++ = y0 + dy * (*x - x0) / dx;
		while (++x < end_x && *x < end);
	}
}
