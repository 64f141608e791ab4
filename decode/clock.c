/* clock.c - one domain's clock model: where on the reference axis each of
 * its samples was taken.
 *
 * Samples arrive in trigger order: the local clock x (the clock event's
 * raw value) read inside [lo, hi] of the reference clock. Two things are
 * done with them, at two scales.
 *
 * Segments, by hulls (hull.c): samples are cut into blocks of CLOCK_BLOCK,
 * and each block is checked with the convex-hull fit over itself and its
 * two neighbours: every line consistent with every window. When a block
 * does not fit together with the one before it, the clock changed rate
 * (a DVFS step) or restarted: the samples are scanned for the first one
 * that breaks the line and a new segment starts there; a counter going
 * backwards or standing still starts one at once. A preempted read's wide
 * window narrows nothing, so it can neither cut a segment nor mislead a
 * fit. The local hull also bounds where each sample can be: between the
 * upper hull of the lower points and the lower hull of the upper points.
 *
 * Placement, by least squares: each block is placed on the line of a
 * weighted least-squares fit of the window midpoints over the CLOCK_SIDE
 * blocks on each side of it within its segment (about 1000 samples:
 * the noise of one window averages out, while a few ppm of slow wander
 * bends the clock too little over that span to matter), weights 1 /
 * width^2 (a preempted read weighs nothing), clamped into the range the
 * local hull allows. Its stated bound is three standard errors of the fit
 * there (scaled up by how badly the midpoints fit the line: wander), at
 * most that range. Sums are kept per block about the block's own origin
 * and moved to the placed block's when combined, so doubles keep their
 * precision over hours.
 *
 * Segments whose rate differs by less than CLOCK_SAME_RATE from the
 * previous one (a cut by wander, not by a step) are reported together.
 *
 * Memory: three blocks for the hulls, CLOCK_SIDE + 1 blocks waiting for
 * the blocks after them (allocated when the domain is first clocked), the
 * sums of those and of CLOCK_SIDE placed blocks (one ring, in block
 * order), and the statistics; a sample leaves
 * the model CLOCK_SIDE + 2 blocks after it came (at a segment's end, at
 * once). Statistics per reported segment are least squares of the placed
 * instants against the segment's first fitted line, so that the sums stay
 * small enough for doubles over hours.
 *
 * The placement of the simpler models (offset, window: the midpoint of the
 * read window) is done by the caller; the fit still runs for every
 * clocked domain so that frequency, drift and segments are always known.
 *
 * Cost (it runs for every sample of every domain: ~467 instructions a
 * sample on the 60 s sim log, the caller's callback's ~27 included, called
 * once a block (545 when it was called once a sample, ~45); 484 before
 * the sums in pairs and each sample's x kept; 662
 * before the block loops, the walk by edges and the cut's growing hull
 * below, 583 before the hull push with its top vertex in registers, the
 * clamps without NaN tests and the ring of sums, 519 before the fused
 * loops, the two-step hull push and the hull walk by pointer): the three
 * hull blocks change roles by index, never by copy; a combined hull
 * starts as a copy of its first block's (pushing a hull's own vertices
 * again pops none); a hull push takes two pops a turn of its
 * loop, the two vertices trading roles (dec_hull_push(): no vertex copied
 * from step to step); the per-sample work is done block by
 * block: the hulls' range at its samples found edge by edge (dec_hull_at:
 * the block's ends checked once, no cursor per sample, a pointer for a
 * count), then in one loop
 * the block's sums and the ranges narrowed by each window, once when the
 * block is queued (sample_ranges()), so that placing it is one loop too
 * (place_block(): the line, its bound, the clamps, the order and the
 * statistics, summed in locals), the samples handed to the caller after
 * all of them are placed; a cut grows one hull over its
 * points instead of one per prefix (dec_fit_prefix); the window sums run
 * over the ring of sums (at most two runs, no index wrapped per block),
 * the x and y sums of a block moved as pairs (clk_v2: each lane the same
 * operations in the same order; ~42 instructions a block's sums, 60 one
 * double at a time), as are a block's own sums (sample_ranges()) and the
 * statistics of its placements (place_block()), and a sample's x from its
 * block's origin is converted once (sample_ranges(), kept for
 * sample_at());
 * the clamps of a placement are dec_fmax_n()/dec_fmin_n(): their bounds
 * are never NaN (a window's ends, a hull's range: finite or infinite).
 * The floating-point
 * operations and their order are the design's, so every placement is the
 * same to the bit (decode_clock/placements_are_the_recorded_ones):
 * incremental window sums (adding the new block, taking the old one off)
 * would save ~45 a sample (~2.4% of the decode) but round differently, and
 * every CSV would change.
 * What is left is mostly that arithmetic: the hull pushes (~83, ~115 with
 * the combined hulls'), the pairs of the fits of 3 blocks (~34), the hulls
 * at the samples (~30), a block's sums and ranges (~60), the window sums
 * (~41), the line, bound and statistics of each sample (~78), taking a
 * sample in (~60). Tried and left out, as
 * they did not pay in instructions: the pair scan of fit_from_hulls split
 * by x order (cursors cost what the side tests saved), a block's hull
 * vertices copied once they stop popping (they pop until late; again at
 * 85334ff: +0.7 M on the 60 s log), the
 * block hulls built in one loop when a fit needs them, window sums two
 * lanes at a time with the pairs apart in memory (the shuffles cost what
 * the lanes saved: clk_mom keeps them side by side), blk_add()
 * inlined into clk_push() (+6 M; again at stop 44 with clk_push() taking
 * the sample's fields in registers, +9 M, and with blk_add() out of line
 * then, +8 M: its eight arguments), the combined hull of the checked and
 * pending blocks carried to the next block's fit where the open block's
 * pushes stayed above the checked block's vertices (so pushing them onto
 * the pending block alone turns the same way: it held for 1 block in 10,
 * -9 M, not worth its state).
 */
#include "decode_int.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CLOCK_SAME_RATE 2e-3 /* rate change below which a cut is wander */
#define CLOCK_WIDTH_FLOOR 20.0 /* ns: a window is never taken as exact */
#define CLOCK_SIGMAS 3.0       /* the stated bound: standard errors of the fit */
#define CLOCK_QLEN (CLOCK_SIDE + 1)

static void seg_stats_reset(struct clk_seg_acc *s)
{
	memset(s, 0, sizeof(*s));
}

void clk_init(struct clk *c, double nominal_hz, clk_place_fn place, void *ud)
{
	memset(c, 0, sizeof(*c));
	c->nominal_hz = nominal_hz;
	c->place = place;
	c->ud = ud;
	for (uint8_t b = 0; b < 3; b++)
		c->role[b] = b;
	seg_stats_reset(&c->acc);
}

void clk_free(struct clk *c)
{
	free(c->q);
	c->q = NULL;
}

/* Roles of the three blocks: 0 the last placed one (kept for fits), 1
 * pending, 2 open; c->role[] says which storage holds each. */
enum { B_DONE = 0, B_PEND = 1, B_OPEN = 2 };
#define BLK(c, r) (&(c)->blk[(c)->role[r]])

/* Append sample p to block b, its hulls updated (relative to the origin). */
static void blk_add(struct clk *c, struct clk_blk *b, const struct clk_pt *p)
{
	double x = (double)(p->x - c->x0);

	b->x[b->n] = x;
	b->p[b->n++] = *p;
	dec_hull_push(b->up, &b->nu, (struct t4_hpt){ x, (double)(int64_t)(p->lo - c->t0) }, true);
	dec_hull_push(b->dn, &b->nd, (struct t4_hpt){ x, (double)(int64_t)(p->hi - c->t0) }, false);
}

static void blk_clear(struct clk_blk *b)
{
	b->n = b->nu = b->nd = 0;
}

/* The hulls of consecutive blocks together, and their samples' x range. */
struct clk_hulls {
	struct t4_hpt up[3 * CLOCK_BLOCK], dn[3 * CLOCK_BLOCK];
	unsigned nu, nd, n;
	uint64_t xlo, xhi;
};

/* Build the combined hulls of blocks from..to. */
static void hulls_of(const struct clk *c, int from, int to, struct clk_hulls *h)
{
	h->nu = h->nd = h->n = 0;
	for (int b = from; b <= to; b++) {
		const struct clk_blk *k = BLK(c, b);
		if (!k->n)
			continue;
		if (!h->n)
			h->xlo = k->p[0].x;
		h->xhi = k->p[k->n - 1].x;
		h->n += k->n;
		if (!h->nu && !h->nd) {
			/* onto nothing, a hull's own vertices are pushed
			 * through the same turns that kept them: a copy */
			memcpy(h->up, k->up, k->nu * sizeof(*k->up));
			memcpy(h->dn, k->dn, k->nd * sizeof(*k->dn));
			h->nu = k->nu;
			h->nd = k->nd;
			continue;
		}
		for (unsigned i = 0; i < k->nu; i++)
			dec_hull_push(h->up, &h->nu, k->up[i], true);
		for (unsigned i = 0; i < k->nd; i++)
			dec_hull_push(h->dn, &h->nd, k->dn[i], false);
	}
}

/* Fit over blocks from..to, from their hulls only (kept in h for the
 * ranges of the samples). */
static bool fit_blocks(const struct clk *c, int from, int to, struct clk_hulls *h)
{
	struct t4_fit f;

	hulls_of(c, from, to, h);
	if (h->n < 2)
		return false;
	dec_hull_fit(h->up, h->nu, h->dn, h->nd,
		    ((double)(h->xlo - c->x0) + (double)(h->xhi - c->x0)) / 2, &f);
	return f.feasible;
}

/* ---- statistics ----------------------------------------------------------- */

static void report_open(struct clk_seg_acc *s, const struct clk_pt *p)
{
	seg_stats_reset(s);
	s->open = true;
	s->x0 = p->x;
	s->t0 = p->lo;
	s->first_trigger = p->trigger;
}

/* Close the reported segment: one more row of statistics. */
static void report_close(struct clk *c)
{
	struct clk_seg_acc *s = &c->acc;
	struct t4_clock_segment seg = { 0 };

	if (!s->open || !s->n)
		return;
	double n = (double)s->n;
	double mx = s->sx / n, mr = s->sr / n;
	double vx = s->sxx / n - mx * mx, cxr = s->sxr / n - mx * mr;
	double corr = vx > 0 ? cxr / vx : 0;
	double rss = s->srr - n * mr * mr - corr * cxr * n;
	double slope = s->ref_b + corr; /* ns per tick */

	seg.first_trigger = s->first_trigger;
	seg.last_trigger = s->last_trigger;
	seg.start_ns = s->start_ns;
	seg.end_ns = s->end_ns;
	seg.samples = s->n;
	seg.freq_hz = s->n > 1 && slope > 0 ? 1e9 / slope : NAN;
	seg.drift_ppm = c->nominal_hz > 0 ? (seg.freq_hz / c->nominal_hz - 1) * 1e6 : NAN;
	seg.residual_ns = sqrt(rss > 0 ? rss / n : 0);
	c->segments++;
	if (c->on_segment)
		c->on_segment(c->ud, &seg);
	s->open = false;
}

/* Before sample p is reported: the reported segment open, with its
 * reference line. */
static void report_ready(struct clk *c, const struct clk_pt *p)
{
	struct clk_seg_acc *s = &c->acc;

	if (!s->open)
		report_open(s, p);
	if (!s->have_ref) {
		/* the reference line: the segment's first fit, else the
		 * last one, else the nominal rate */
		s->ref_b = c->last_b > 0 ? c->last_b : c->nominal_hz > 0 ? 1e9 / c->nominal_hz : 1;
		s->have_ref = true;
	}
}

/* Sample p placed at t into the statistics s (ready: c->acc, or a copy of
 * it in a block's loop). */
static inline void report_add(struct clk_seg_acc *s, const struct clk_pt *p, uint64_t t)
{
	double dx = (double)(p->x - s->x0);
	double r = (double)(int64_t)(t - s->t0) - s->ref_b * dx;
	s->n++;
	s->sx += dx;
	s->sr += r;
	s->sxx += dx * dx;
	s->sxr += dx * r;
	s->srr += r * r;
	if (s->n == 1)
		s->start_ns = t;
	s->end_ns = t;
	s->last_trigger = p->trigger;
}

/* ---- least squares over blocks ---------------------------------------------- */

/* Two doubles as one value (GCC's and Clang's vector extension: SSE2 on
 * x86-64, NEON on arm64), at any double's alignment: the x and y sums of
 * a block moved together, each lane the same operations in the same
 * order as one double (ISO C: never contracted into a fused multiply-add). */
typedef double clk_v2 __attribute__((vector_size(16), aligned(8)));

static inline clk_v2 v2_at(const double *p)
{
	clk_v2 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The sums of a window (window_sums()), in registers: sx, sy and sxx, syy
 * as pairs. */
struct clk_wsum {
	clk_v2 s1, s2;
	double s0, sxy;
	unsigned n;
};

/* Add m's sums, moved from its origin to (x0, t0), into acc: per lane,
 * acc.sx += m.sx + dx * m.s0 and acc.sxx += m.sxx + 2 * dx * m.sx + dx *
 * dx * m.s0 (and the same in y); acc.sxy += m.sxy + dx * m.sy + dy * m.sx +
 * dx * dy * m.s0. */
static inline void mom_merge(struct clk_wsum *acc, const struct clk_mom *m, uint64_t x0,
			     uint64_t t0)
{
	double dx = (double)(int64_t)(m->x0 - x0), dy = (double)(int64_t)(m->t0 - t0);
	clk_v2 d = { dx, dy }, w = { m->s0, m->s0 }, s1 = v2_at(&m->sx);

	acc->n += m->n;
	acc->s0 += m->s0;
	acc->s1 += s1 + d * w;
	acc->s2 += v2_at(&m->sxx) + (d + d) * s1 + d * d * w; /* 2 * dx: exact either way */
	acc->sxy += m->sxy + dx * m->sy + dy * m->sx + dx * dy * m->s0;
}

/* The weighted line through the sums (about their origin): t = my + b (x -
 * mx), with the variance of a prediction at x. False without a slope. */
struct clk_line {
	double mx, my, b, cxx, s0, scale;
};

static bool mom_line(const struct clk_mom *m, struct clk_line *l)
{
	if (m->n < 3 || m->s0 <= 0)
		return false;
	l->s0 = m->s0;
	l->mx = m->sx / m->s0;
	l->my = m->sy / m->s0;
	l->cxx = m->sxx - m->s0 * l->mx * l->mx;
	double cxy = m->sxy - m->s0 * l->mx * l->my, cyy = m->syy - m->s0 * l->my * l->my;
	if (!(l->cxx > 0))
		return false;
	l->b = cxy / l->cxx;
	/* how far the midpoints stray from the line, against their widths
	 * (a midpoint's variance is width^2 / 12): above 1, the clock bent */
	double chi2 = 12 * (cyy - l->b * cxy) / (double)(m->n - 2);
	l->scale = chi2 > 1 ? chi2 : 1;
	return isfinite(l->b) && l->b > 0;
}

/* Standard error (ns) of the line's value at x (from the line's origin). */
static double line_sigma(const struct clk_line *l, double x)
{
	double d = x - l->mx;

	return sqrt((1 / l->s0 + d * d / l->cxx) / 12 * l->scale);
}

/* ---- placement ------------------------------------------------------------- */

/* Place one sample at t with its bound (nonlinear: no line). */
static void place_one(struct clk *c, const struct clk_pt *p, uint64_t t, uint64_t bound,
		      bool nonlinear)
{
	if (c->have_last_t && t <= c->last_t)
		t = c->last_t + 1;
	c->last_t = t;
	c->have_last_t = true;
	report_ready(c, p);
	report_add(&c->acc, p, t);
	c->place(c->ud, p, 1, &t, &bound, nonlinear);
}

/* The sums of every block within CLOCK_SIDE of the head of the queue (the
 * placed ones before it, the waiting ones after it), about its origin:
 * the ring from h_n before its head's sums, in block order, in at most
 * two runs (no index wrapped per block). */
static void window_sums(const struct clk *c, struct clk_mom *out)
{
	const struct clk_mom *head = &c->mom[c->m_head];
	uint64_t x0 = head->x0, t0 = head->t0;
	struct clk_wsum acc = { { 0, 0 }, { 0, 0 }, 0, 0, 0 };
	unsigned from = (c->m_head + CLOCK_MOMS - c->h_n) % CLOCK_MOMS, n = c->h_n + c->q_n;
	unsigned run = n < CLOCK_MOMS - from ? n : CLOCK_MOMS - from;

	/* summed in a local (in registers, not through *out) */
	for (const struct clk_mom *m = &c->mom[from]; m < &c->mom[from + run]; m++)
		mom_merge(&acc, m, x0, t0);
	for (const struct clk_mom *m = c->mom; m < &c->mom[n - run]; m++)
		mom_merge(&acc, m, x0, t0);
	*out = (struct clk_mom){ .x0 = x0, .t0 = t0, .s0 = acc.s0, .sx = acc.s1[0], .sy = acc.s1[1],
				 .sxx = acc.s2[0], .syy = acc.s2[1], .sxy = acc.sxy, .n = acc.n };
}

/* Decide at a segment's first placed block whether its rate is a new one
 * or the cut came from wander (statistics only). */
static void decide_rate(struct clk *c, double b)
{
	if (!c->decide)
		return;
	c->decide = false;
	if (!(c->decide_b > 0 && fabs(b / c->decide_b - 1) < CLOCK_SAME_RATE))
		report_close(c);
}

/* (uint64_t)ceil(b), without a call into libm for the usual bound (a few
 * ns: below 2^52 a double's integer part is exact). */
static uint64_t ceil_u64(double b)
{
	if (!(b >= 0 && b < 4503599627370496.0))
		return (uint64_t)ceil(b);
	int64_t i = (int64_t)b;

	return (uint64_t)((double)i < b ? i + 1 : i);
}

/* Block k's sample i on the line l (its sums about the block's origin:
 * its first sample's x, k->x[i] from it, and t0), inside its range, with
 * its bound; without l, at its window's midpoint. */
static inline __attribute__((always_inline)) uint64_t sample_at(const struct clk_qblk *k,
								unsigned i,
								const struct clk_line *l,
								uint64_t t0, uint64_t *bound)
{
	const struct clk_pt *p = &k->p[i];

	if (!l) {
		*bound = (p->hi - p->lo) / 2;
		return p->lo + (p->hi - p->lo) / 2;
	}
	double x = k->x[i], lo = k->lo[i], hi = k->hi[i];
	/* lo, hi and so v finite (sample_ranges()): no NaN tests */
	double v = dec_fmin_n(dec_fmax_n(l->my + l->b * (x - l->mx), lo), hi);
	double b = dec_fmin_n(CLOCK_SIGMAS * line_sigma(l, x), dec_fmax_n(v - lo, hi - v));
	*bound = ceil_u64(b);
	return t0 + (uint64_t)dec_round(v);
}

/* Place block k (place_one() for each sample: sample_at()), in one pass:
 * the order kept and the statistics summed in locals (report_add()'s
 * operations in its order; the counts and ends once a block), then handed
 * out (the callback knows nothing of the model's state). Inline, called
 * with l and with NULL: one loop of each. */
static inline __attribute__((always_inline)) void place_block(struct clk *c,
							      const struct clk_qblk *k,
							      const struct clk_line *l, uint64_t t0)
{
	const struct clk_pt *p = k->p;
	uint64_t t[CLOCK_BLOCK], bound[CLOCK_BLOCK], prev = c->last_t;
	unsigned n = k->n;
	bool have = c->have_last_t;

	report_ready(c, &p[0]); /* then stays ready for the block */
	struct clk_seg_acc *s = &c->acc;
	/* sx, sr and sxx, srr as pairs (clk_v2) */
	double ref_b = s->ref_b, sxr = s->sxr;
	clk_v2 s1 = { s->sx, s->sr }, s2 = { s->sxx, s->srr };
	for (unsigned i = 0; i < n; i++) {
		uint64_t ti = sample_at(k, i, l, t0, &bound[i]);
		if (ti <= prev && (i || have))
			ti = prev + 1;
		t[i] = prev = ti;
		double dx = (double)(p[i].x - s->x0);
		double r = (double)(int64_t)(ti - s->t0) - ref_b * dx;
		clk_v2 v = { dx, r };
		s1 += v;
		s2 += v * v;
		sxr += dx * r;
	}
	if (!s->n)
		s->start_ns = t[0];
	s->n += n;
	s->sx = s1[0];
	s->sr = s1[1];
	s->sxx = s2[0];
	s->sxr = sxr;
	s->srr = s2[1];
	s->end_ns = t[n - 1];
	s->last_trigger = p[n - 1].trigger;
	c->last_t = t[n - 1];
	c->have_last_t = true;
	c->place(c->ud, p, n, t, bound, !l);
}

/* Place the block at the head of the queue; its sums stay in the ring for
 * the next CLOCK_SIDE blocks. */
static void place_head(struct clk *c)
{
	const struct clk_qblk *k = &c->q[c->q_head];
	struct clk_mom acc;
	struct clk_line l;
	bool line;

	window_sums(c, &acc);
	line = k->ok && mom_line(&acc, &l);
	if (line) {
		decide_rate(c, l.b);
		c->last_b = l.b;
		if (!c->acc.open || !c->acc.have_ref) {
			if (!c->acc.open)
				report_open(&c->acc, &k->p[0]);
			c->acc.ref_b = l.b;
			c->acc.have_ref = true;
		}
		place_block(c, k, &l, acc.t0); /* acc.x0: k->p[0].x */
	} else {
		place_block(c, k, NULL, 0);
	}
	if (c->h_n < CLOCK_SIDE)
		c->h_n++; /* else the oldest placed sums leave the window */
	c->m_head = (c->m_head + 1) % CLOCK_MOMS;
	c->q_head = (c->q_head + 1) % CLOCK_QLEN;
	c->q_n--;
}

/* Place what the queue allows: a block once CLOCK_SIDE blocks follow it,
 * or every one (the segment ends). */
static void drain(struct clk *c, bool all)
{
	while (c->q_n && (all || c->q_n > CLOCK_SIDE))
		place_head(c);
	if (all)
		c->h_n = 0; /* a segment's sums stay its own */
}

/* Whether the x of block k's first and last samples, so of all of them (x
 * increases within a segment: clk_push restarts it otherwise), are inside
 * the x range of hull h (n >= 1 vertices). */
static bool inside_x(const struct t4_hpt *h, unsigned n, const struct clk_blk *k)
{
	return k->x[0] >= h[0].x && k->x[k->n - 1] <= h[n - 1].x;
}

/* The range that the combined hulls h allow at each of block k's samples
 * (ns from the segment origin; infinite where a hull says nothing, or
 * without h: no feasible hull). */
static void hull_ranges(const struct clk_blk *k, const struct clk_hulls *h, double *tmin,
			double *tmax)
{
	unsigned iu = 0, id = 0;

	if (!h) {
		for (unsigned i = 0; i < k->n; i++) {
			tmin[i] = -INFINITY;
			tmax[i] = INFINITY;
		}
	} else if (h->nu && h->nd && inside_x(h->up, h->nu, k) && inside_x(h->dn, h->nd, k)) {
		/* the block inside both hulls' x range (as it always is: they
		 * span the blocks around it): no range check per sample, and
		 * a value between two finite vertices is finite */
		dec_hull_at(h->up, h->nu, k->x, k->n, tmin);
		dec_hull_at(h->dn, h->nd, k->x, k->n, tmax);
	} else {
		for (unsigned i = 0; i < k->n; i++) {
			double lo = dec_hull_walk(h->up, h->nu, &iu, k->x[i]);
			double hi = dec_hull_walk(h->dn, h->nd, &id, k->x[i]);
			tmin[i] = isfinite(lo) ? lo : -INFINITY;
			tmax[i] = isfinite(hi) ? hi : INFINITY;
		}
	}
}

/* Where each of block k's samples may be placed (into lo, hi): its window
 * narrowed to the range of the hulls h (hull_ranges()), else the window's
 * midpoint; in ns from the block's origin, its first window's start,
 * where place_head() centres its sums (the segment's origin stays while
 * the block waits: a segment ends with its queue placed). In the same
 * loop, the block's weighted sums about its first sample (into m: the
 * same operations in the same order as adding one sample at a time), and
 * each sample's x from it (into xs: what sample_at() takes). */
static void sample_ranges(const struct clk *c, const struct clk_blk *k, const struct clk_hulls *h,
			  double *lo, double *hi, double *xs, struct clk_mom *m)
{
	uint64_t x0 = k->p[0].x, t0 = k->p[0].lo;
	double off = (double)(int64_t)(c->t0 - t0); /* the hulls' origin from t0 */
	double s0 = 0, sxy = 0;
	clk_v2 s1 = { 0, 0 }, s2 = { 0, 0 }; /* sx, sy and sxx, syy as pairs */
	unsigned n = k->n; /* not read again after each store */

	hull_ranges(k, h, lo, hi);
	for (unsigned i = 0; i < n; i++) {
		const struct clk_pt *p = &k->p[i];
		double width = (double)(p->hi - p->lo), lo_t = (double)(int64_t)(p->lo - t0);
		double w = 1 / (width * width + CLOCK_WIDTH_FLOOR * CLOCK_WIDTH_FLOOR);
		double x = (double)(p->x - x0), y = lo_t + width / 2;
		xs[i] = x;
		clk_v2 v = { x, y }, wv = (clk_v2){ w, w } * v; /* w * x, w * y */
		s0 += w;
		s1 += wv;
		s2 += wv * v;
		sxy += wv[0] * y;
		/* a hull's range is never NaN (finite, or infinite where it
		 * says nothing): no NaN tests, and the result finite */
		double l = dec_fmax_n(lo_t, lo[i] + off);
		double u = dec_fmin_n((double)(int64_t)(p->hi - t0), hi[i] + off);
		if (!(l <= u))
			l = u = lo_t + width / 2;
		lo[i] = l;
		hi[i] = u;
	}
	*m = (struct clk_mom){ .x0 = x0, .t0 = t0, .s0 = s0, .sx = s1[0], .sy = s1[1],
			       .sxx = s2[0], .syy = s2[1], .sxy = sxy, .n = n };
}

/* Queue block b (its samples leave the hull blocks), with the range that
 * the combined hulls h allow at each sample (h NULL: no feasible hull). Out
 * of memory for the queue: window midpoints. */
static void enqueue(struct clk *c, int b, const struct clk_hulls *h)
{
	const struct clk_blk *k = BLK(c, b);
	struct clk_qblk *q;

	if (!k->n)
		return;
	if (!c->q && !(c->q = calloc(CLOCK_QLEN, sizeof(*c->q)))) {
		for (unsigned i = 0; i < k->n; i++)
			place_one(c, &k->p[i], k->p[i].lo + (k->p[i].hi - k->p[i].lo) / 2,
				  (k->p[i].hi - k->p[i].lo) / 2, true);
		return;
	}
	if (c->q_n == CLOCK_QLEN)
		place_head(c);
	q = &c->q[(c->q_head + c->q_n++) % CLOCK_QLEN];
	q->n = k->n;
	q->ok = h != NULL;
	memcpy(q->p, k->p, k->n * sizeof(*k->p));
	sample_ranges(c, k, h, q->lo, q->hi, q->x, &c->mom[(c->m_head + c->q_n - 1) % CLOCK_MOMS]);
	drain(c, false);
}

/* Block b leaves the hull blocks, bounded by the hull over blocks
 * from..to, else by its own, else by its windows alone. */
static void place_with(struct clk *c, int b, int from, int to)
{
	struct clk_hulls h;

	if (fit_blocks(c, from, to, &h) || fit_blocks(c, b, b, &h))
		enqueue(c, b, &h);
	else
		enqueue(c, b, NULL);
}

/* Move block `from` into role `to`; `from` is left empty (it takes what
 * was `to`'s storage: roles swap, no samples are copied). */
static void move_block(struct clk *c, int to, int from)
{
	uint8_t k = c->role[to];

	c->role[to] = c->role[from];
	c->role[from] = k;
	blk_clear(BLK(c, from));
}

/* Place everything still held and forget the segment. */
static void close_segment(struct clk *c)
{
	if (BLK(c, B_PEND)->n)
		place_with(c, B_PEND, B_DONE, B_OPEN);
	if (BLK(c, B_OPEN)->n)
		place_with(c, B_OPEN, B_PEND, B_OPEN);
	drain(c, true);
	for (int b = 0; b < 3; b++)
		blk_clear(BLK(c, b));
	c->in_segment = false;
}

static void open_segment(struct clk *c, const struct clk_pt *p)
{
	c->in_segment = true;
	c->x0 = p->x;
	c->t0 = p->lo;
}

/* Raw points of the pending and open blocks, relative to the origin. */
static size_t gather(const struct clk *c, struct t4_fit_pt *out, struct clk_pt *raw)
{
	size_t n = 0;

	for (int b = B_PEND; b <= B_OPEN; b++)
		for (unsigned i = 0; i < BLK(c, b)->n; i++) {
			const struct clk_pt *p = &BLK(c, b)->p[i];
			out[n].x = (double)(p->x - c->x0);
			out[n].lo = (double)(int64_t)(p->lo - c->t0);
			out[n].hi = (double)(int64_t)(p->hi - c->t0);
			raw[n++] = *p;
		}
	return n;
}

/* Keep only the first m raw points in the pending and open blocks. */
static void truncate_to(struct clk *c, const struct clk_pt *raw, size_t m)
{
	blk_clear(BLK(c, B_PEND));
	blk_clear(BLK(c, B_OPEN));
	for (size_t i = 0; i < m; i++)
		blk_add(c, BLK(c, i < CLOCK_BLOCK ? B_PEND : B_OPEN), &raw[i]);
}

/* The pending and open blocks do not fit one line: find the first point
 * that breaks it, end the segment before it, start a new one there. The
 * statistics decide at the new segment's first fit whether its rate is a
 * new one or the cut came from wander. */
static void cut(struct clk *c)
{
	struct t4_fit_pt pts[2 * CLOCK_BLOCK];
	struct clk_pt raw[2 * CLOCK_BLOCK];
	size_t n = gather(c, pts, raw), m = dec_fit_prefix(pts, n);

	/* points [0, m) fit one line; m starts the new segment. The blocks'
	 * fit said they do not all fit; should the point-by-point fit differ
	 * by a rounding and take them all, the last one starts it: raw[m]
	 * must be one of the points gathered */
	if (m >= n)
		m = n - 1;
	truncate_to(c, raw, m);
	c->decide_b = c->last_b;
	close_segment(c);
	c->decide = true;
	open_segment(c, &raw[m]);
	for (size_t i = m; i < n; i++)
		blk_add(c, BLK(c, i - m < CLOCK_BLOCK ? B_PEND : B_OPEN), &raw[i]);
	if (BLK(c, B_PEND)->n < CLOCK_BLOCK)
		move_block(c, B_OPEN, B_PEND); /* fewer than a block: still open */
}

/* The open block is full: check it against the pending one, then place
 * the pending one with its neighbours. */
static void block_full(struct clk *c)
{
	struct clk_hulls h;

	if (BLK(c, B_PEND)->n) {
		/* one fit over the three blocks usually settles it; only when
		 * it fails is the pending block checked against the open one */
		if (!fit_blocks(c, B_DONE, B_OPEN, &h) && !fit_blocks(c, B_PEND, B_OPEN, &h)) {
			cut(c);
			return;
		}
		enqueue(c, B_PEND, &h);
		move_block(c, B_DONE, B_PEND);
	}
	move_block(c, B_PEND, B_OPEN);
}

/* A restart: the counter went backwards or stood still. */
static void restart(struct clk *c)
{
	close_segment(c);
	report_close(c);
	c->decide = false;
}

void clk_push(struct clk *c, const struct clk_pt *p)
{
	/* in a segment, the sample before is its last (prev_x) */
	if (c->in_segment && p->x <= c->prev_x)
		restart(c);
	if (!c->in_segment)
		open_segment(c, p);
	c->prev_x = p->x;
	blk_add(c, BLK(c, B_OPEN), p);
	if (BLK(c, B_OPEN)->n == CLOCK_BLOCK)
		block_full(c);
}

void clk_flush(struct clk *c)
{
	restart(c);
}
