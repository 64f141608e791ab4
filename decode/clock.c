/* clock.c - one domain's clock model: where on the reference axis each of
 * its samples was taken.
 *
 * Samples arrive in trigger order: the local clock x (the clock event's
 * raw value) read inside [lo, hi] of the reference clock. They are cut
 * into blocks of CLOCK_BLOCK samples. Each block is placed with a local
 * fit (hull.c) over itself and its two neighbours, so a clock that wanders
 * by a few ppm is followed, while 3 blocks are enough samples to bound
 * the line tightly. When a block does not fit together with the one
 * before it, the clock changed rate (DVFS step) or restarted: the samples
 * are scanned for the first one that breaks the line and a new segment
 * starts there; a counter going backwards or standing still starts one
 * at once. Segments whose rate differs by less than CLOCK_SAME_RATE from
 * the previous one (a fit broken by wander, not by a step) are reported
 * together.
 *
 * Memory: three blocks of points and the statistics; samples leave the
 * model as soon as the block after theirs is complete (one block of delay,
 * two at a segment end). Statistics per reported segment are least squares
 * of the placed instants against the segment's first fitted line, so that
 * the sums stay small enough for doubles over hours.
 *
 * The placement of the simpler models (offset, window: the midpoint of the
 * read window) is done by the caller; the fit still runs for every
 * clocked domain so that frequency, drift and segments are always known.
 */
#include "decode_int.h"
#include "../util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CLOCK_SAME_RATE 2e-3 /* rate change below which a cut is wander */

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
	seg_stats_reset(&c->acc);
}

/* Points of blocks [from..] of the window, relative to the origin. */
static size_t gather(const struct clk *c, int from, int to, struct t4_fit_pt *out)
{
	size_t n = 0;

	for (int b = from; b <= to; b++)
		for (unsigned i = 0; i < c->n[b]; i++) {
			const struct clk_pt *p = &c->blk[b][i];
			out[n].x = (double)(p->x - c->x0);
			out[n].lo = (double)(int64_t)(p->lo - c->t0);
			out[n].hi = (double)(int64_t)(p->hi - c->t0);
			n++;
		}
	return n;
}

static bool fit_blocks(const struct clk *c, int from, int to, struct t4_fit *f)
{
	struct t4_fit_pt pts[3 * CLOCK_BLOCK];
	size_t n = gather(c, from, to, pts);

	if (n < 2)
		return false;
	t4_fit_hull(pts, n, f);
	return f->feasible;
}

/* ---- statistics ----------------------------------------------------------- */

static void report_open(struct clk *c, const struct clk_pt *p)
{
	struct clk_seg_acc *s = &c->acc;

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

static void report_sample(struct clk *c, const struct clk_pt *p, uint64_t t)
{
	struct clk_seg_acc *s = &c->acc;

	if (!s->open)
		report_open(c, p);
	if (!s->have_ref) {
		/* the reference line: the segment's first fit, else the
		 * last one, else the nominal rate */
		s->ref_b = c->last_b > 0 ? c->last_b : c->nominal_hz > 0 ? 1e9 / c->nominal_hz : 1;
		s->have_ref = true;
	}
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

/* ---- placement ------------------------------------------------------------- */

static void place_block(struct clk *c, int b, const struct t4_fit *f, bool ok)
{
	for (unsigned i = 0; i < c->n[b]; i++) {
		const struct clk_pt *p = &c->blk[b][i];
		double X = (double)(p->x - c->x0);
		uint64_t t, bound = 0;
		bool nonlinear = !ok;

		if (ok) {
			double v = f->a + f->b * X;
			t = c->t0 + (uint64_t)(int64_t)llround(v);
			double w = fabs((f->a_max + f->b_max * X) - (f->a_min + f->b_min * X)) / 2;
			bound = (uint64_t)llround(w);
			if (t < p->lo)
				t = p->lo;
			if (t > p->hi)
				t = p->hi;
		} else {
			t = p->lo + (p->hi - p->lo) / 2;
			bound = (p->hi - p->lo) / 2;
		}
		if (c->have_last_t && t <= c->last_t)
			t = c->last_t + 1;
		c->last_t = t;
		c->have_last_t = true;
		report_sample(c, p, t);
		c->place(c->ud, p->seq, t, bound, nonlinear);
	}
}

/* Place block b with the fit over blocks from..to, falling back to the
 * block alone, then to the window midpoints. */
static void place_with(struct clk *c, int b, int from, int to)
{
	struct t4_fit f;
	bool ok = fit_blocks(c, from, to, &f) || fit_blocks(c, b, b, &f);

	if (ok && c->decide) {
		/* first fit after a cut: a new rate, or the same one (wander) */
		c->decide = false;
		if (!(c->decide_b > 0 && fabs(f.b / c->decide_b - 1) < CLOCK_SAME_RATE))
			report_close(c);
	}
	if (ok) {
		c->last_b = f.b;
		if (!c->acc.open || !c->acc.have_ref) {
			if (!c->acc.open)
				report_open(c, &c->blk[b][0]);
			c->acc.ref_b = f.b;
			c->acc.have_ref = true;
		}
	}
	place_block(c, b, &f, ok);
}

/* Move block `from` into slot `to` (both within blk[]). */
static void move_block(struct clk *c, int to, int from)
{
	memcpy(c->blk[to], c->blk[from], c->n[from] * sizeof(c->blk[0][0]));
	c->n[to] = c->n[from];
	c->n[from] = 0;
}

/* Blocks: 0 the last placed one (kept for fits), 1 pending, 2 open. */
enum { B_DONE = 0, B_PEND = 1, B_OPEN = 2 };

/* Place everything still held and forget the segment. */
static void close_segment(struct clk *c)
{
	if (c->n[B_PEND])
		place_with(c, B_PEND, B_DONE, B_OPEN);
	if (c->n[B_OPEN])
		place_with(c, B_OPEN, B_PEND, B_OPEN);
	c->n[B_DONE] = c->n[B_PEND] = c->n[B_OPEN] = 0;
	c->in_segment = false;
}

static void open_segment(struct clk *c, const struct clk_pt *p)
{
	c->in_segment = true;
	c->x0 = p->x;
	c->t0 = p->lo;
}

/* The pending and open blocks do not fit one line: find the first point
 * that breaks it, end the segment before it, start a new one there. The
 * statistics decide at the new segment's first fit whether its rate is a
 * new one or the cut came from wander. */
static void cut(struct clk *c)
{
	struct t4_fit_pt pts[2 * CLOCK_BLOCK];
	struct clk_pt rest[2 * CLOCK_BLOCK];
	size_t n = gather(c, B_PEND, B_OPEN, pts), m = 2, nrest = 0;
	unsigned np = c->n[B_PEND];
	struct t4_fit f;

	for (; m < n; m++) {
		t4_fit_hull(pts, m + 1, &f);
		if (!f.feasible)
			break;
	}
	/* points [0, m) fit one line; m starts the new segment */
	for (size_t i = m; i < n; i++)
		rest[nrest++] = i < np ? c->blk[B_PEND][i] : c->blk[B_OPEN][i - np];
	if (m < np) {
		c->n[B_PEND] = (unsigned)m;
		c->n[B_OPEN] = 0;
	} else {
		c->n[B_OPEN] = (unsigned)(m - np);
	}
	c->decide_b = c->last_b;
	close_segment(c);
	c->decide = true;
	open_segment(c, &rest[0]);
	size_t first = nrest >= CLOCK_BLOCK ? CLOCK_BLOCK : 0;
	memcpy(c->blk[B_PEND], rest, first * sizeof(rest[0]));
	c->n[B_PEND] = (unsigned)first;
	memcpy(c->blk[B_OPEN], rest + first, (nrest - first) * sizeof(rest[0]));
	c->n[B_OPEN] = (unsigned)(nrest - first);
}

/* The open block is full: check it against the pending one, then place
 * the pending one with its neighbours. */
static void block_full(struct clk *c)
{
	struct t4_fit f;

	if (c->n[B_PEND] && !fit_blocks(c, B_PEND, B_OPEN, &f)) {
		cut(c);
		return;
	}
	if (c->n[B_PEND]) {
		place_with(c, B_PEND, B_DONE, B_OPEN);
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
	if (c->in_segment && c->have_prev && p->x <= c->prev_x)
		restart(c);
	if (!c->in_segment)
		open_segment(c, p);
	c->prev_x = p->x;
	c->have_prev = true;
	c->blk[B_OPEN][c->n[B_OPEN]++] = *p;
	if (c->n[B_OPEN] == CLOCK_BLOCK)
		block_full(c);
}

void clk_flush(struct clk *c)
{
	restart(c);
}
