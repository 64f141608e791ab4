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

/* Enum of the three blocks: 0 the last placed one (kept for fits), 1
 * pending, 2 open. */
enum { B_DONE = 0, B_PEND = 1, B_OPEN = 2 };

/* Append sample p to block b, its hulls updated (relative to the origin). */
static void blk_add(struct clk *c, struct clk_blk *b, const struct clk_pt *p)
{
	double x = (double)(p->x - c->x0);

	b->p[b->n++] = *p;
	t4_hull_push(b->up, &b->nu, (struct t4_hpt){ x, (double)(int64_t)(p->lo - c->t0) }, true);
	t4_hull_push(b->dn, &b->nd, (struct t4_hpt){ x, (double)(int64_t)(p->hi - c->t0) }, false);
}

static void blk_clear(struct clk_blk *b)
{
	b->n = b->nu = b->nd = 0;
}

/* Fit over blocks from..to, from their hulls only. */
static bool fit_blocks(const struct clk *c, int from, int to, struct t4_fit *f)
{
	struct t4_hpt up[3 * CLOCK_BLOCK], dn[3 * CLOCK_BLOCK];
	unsigned nu = 0, nd = 0, n = 0;
	uint64_t xlo = 0, xhi = 0;

	for (int b = from; b <= to; b++) {
		const struct clk_blk *k = &c->blk[b];
		if (!k->n)
			continue;
		if (!n)
			xlo = k->p[0].x;
		xhi = k->p[k->n - 1].x;
		n += k->n;
		memcpy(up + nu, k->up, k->nu * sizeof(up[0]));
		memcpy(dn + nd, k->dn, k->nd * sizeof(dn[0]));
		nu += k->nu;
		nd += k->nd;
	}
	if (n < 2)
		return false;
	t4_fit_hulls(up, nu, dn, nd, ((double)(xlo - c->x0) + (double)(xhi - c->x0)) / 2, f);
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
	for (unsigned i = 0; i < c->blk[b].n; i++) {
		const struct clk_pt *p = &c->blk[b].p[i];
		double X = (double)(p->x - c->x0);
		uint64_t t, bound = 0;
		bool nonlinear = !ok;

		if (ok) {
			double v = f->a + f->b * X;
			t = c->t0 + (uint64_t)t4_round(v);
			double w = fabs((f->a_max + f->b_max * X) - (f->a_min + f->b_min * X)) / 2;
			bound = (uint64_t)t4_round(w);
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

/* Place block b with fit f (ok: f is feasible; else window midpoints). */
static void place_fit(struct clk *c, int b, const struct t4_fit *fp, bool ok)
{
	struct t4_fit f = *fp;

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
				report_open(c, &c->blk[b].p[0]);
			c->acc.ref_b = f.b;
			c->acc.have_ref = true;
		}
	}
	place_block(c, b, &f, ok);
}

/* Place block b with the fit over blocks from..to, falling back to the
 * block alone, then to the window midpoints. */
static void place_with(struct clk *c, int b, int from, int to)
{
	struct t4_fit f;
	bool ok = fit_blocks(c, from, to, &f) || fit_blocks(c, b, b, &f);

	place_fit(c, b, &f, ok);
}

/* Move block `from` into slot `to`; `from` is left empty. */
static void move_block(struct clk *c, int to, int from)
{
	c->blk[to] = c->blk[from];
	blk_clear(&c->blk[from]);
}

/* Place everything still held and forget the segment. */
static void close_segment(struct clk *c)
{
	if (c->blk[B_PEND].n)
		place_with(c, B_PEND, B_DONE, B_OPEN);
	if (c->blk[B_OPEN].n)
		place_with(c, B_OPEN, B_PEND, B_OPEN);
	for (int b = 0; b < 3; b++)
		blk_clear(&c->blk[b]);
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
		for (unsigned i = 0; i < c->blk[b].n; i++) {
			const struct clk_pt *p = &c->blk[b].p[i];
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
	blk_clear(&c->blk[B_PEND]);
	blk_clear(&c->blk[B_OPEN]);
	for (size_t i = 0; i < m; i++)
		blk_add(c, &c->blk[i < CLOCK_BLOCK ? B_PEND : B_OPEN], &raw[i]);
}

/* The pending and open blocks do not fit one line: find the first point
 * that breaks it, end the segment before it, start a new one there. The
 * statistics decide at the new segment's first fit whether its rate is a
 * new one or the cut came from wander. */
static void cut(struct clk *c)
{
	struct t4_fit_pt pts[2 * CLOCK_BLOCK];
	struct clk_pt raw[2 * CLOCK_BLOCK];
	size_t n = gather(c, pts, raw), m = 2;
	struct t4_fit f;

	for (; m < n; m++) {
		t4_fit_hull(pts, m + 1, &f);
		if (!f.feasible)
			break;
	}
	/* points [0, m) fit one line; m starts the new segment */
	truncate_to(c, raw, m);
	c->decide_b = c->last_b;
	close_segment(c);
	c->decide = true;
	open_segment(c, &raw[m]);
	for (size_t i = m; i < n; i++)
		blk_add(c, &c->blk[i - m < CLOCK_BLOCK ? B_PEND : B_OPEN], &raw[i]);
	if (c->blk[B_PEND].n < CLOCK_BLOCK)
		move_block(c, B_OPEN, B_PEND); /* fewer than a block: still open */
}

/* The open block is full: check it against the pending one, then place
 * the pending one with its neighbours. */
static void block_full(struct clk *c)
{
	struct t4_fit f;

	if (c->blk[B_PEND].n) {
		/* one fit over the three blocks usually settles it; only when
		 * it fails is the pending block checked against the open one */
		if (!fit_blocks(c, B_DONE, B_OPEN, &f) && !fit_blocks(c, B_PEND, B_OPEN, &f)) {
			cut(c);
			return;
		}
		place_fit(c, B_PEND, &f, true);
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
	blk_add(c, &c->blk[B_OPEN], p);
	if (c->blk[B_OPEN].n == CLOCK_BLOCK)
		block_full(c);
}

void clk_flush(struct clk *c)
{
	restart(c);
}
