/* decode_int.h - shared by the files of decode/ only.
 *
 * Small building blocks: an ID map (open addressing, any u32 key), a
 * growable array, the convex-hull clock fit (hull.c), the formula
 * compiler (expr.c), the per-domain clock model (clock.c), the phase
 * timeline (phases.c) and a buffered text writer for the outputs (fmt.c).
 */
#ifndef T4_DECODE_INT_H
#define T4_DECODE_INT_H

#include "decode.h"
#include "util/util.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

/* ---- ID map: u32 key -> u32 value, open addressing (index.c) ----------- */

#define T4_IDMAP_DIRECT 256 /* keys below: a direct table (most logs' IDs) */

struct t4_idmap {
	uint32_t direct[T4_IDMAP_DIRECT]; /* value + 1, 0 = none */
	uint32_t *keys, *vals; /* vals[i] == 0: empty slot; stored value + 1 */
	size_t cap, n;
};
/* Value for key, or -1: inline for a key in the direct table (a domain's
 * ID, once per return packet), else from the hashed part. */
int64_t dec_idmap_get_hashed(const struct t4_idmap *m, uint32_t key);
static inline int64_t dec_idmap_get(const struct t4_idmap *m, uint32_t key)
{
	if (key < T4_IDMAP_DIRECT)
		return (int64_t)m->direct[key] - 1;
	return dec_idmap_get_hashed(m, key);
}
int dec_idmap_put(struct t4_idmap *m, uint32_t key, uint32_t val);
void dec_idmap_free(struct t4_idmap *m);

/* t4_index_add() of a return packet that is no copy (index.c): the
 * decoder's usual packet, without the switch. */
int dec_index_ret(struct t4_index *ix, const struct t4_ret_pkt *r);
/* The tables it adds to, for the decoder to add a packet of a domain it
 * decodes itself, inline (dec_index_ret_to): only in an index without
 * totals (t4_index_no_totals: the decoder's), else NULL; a domain's stays
 * put while the index grows (NULL: not in the index). */
struct t4_index_counts *dec_index_counts_rw(struct t4_index *ix);
struct t4_index_domain *dec_index_domain_rw(struct t4_index *ix, uint32_t id);
/* Whether trigger ID t is new to stream s (not among the IDs it saw of its
 * latest 64; one further back than that is taken as new), marking it
 * seen. */
static inline bool dec_seen_first(struct t4_index_seen *s, uint64_t t)
{
	uint64_t back;

	if (t == s->top + 1 && s->bits) { /* the usual: the next one */
		s->bits = s->bits << 1 | 1;
		s->top = t;
		return true;
	}
	if (!s->bits || t > s->top) {
		back = s->bits ? t - s->top : 64; /* the window slides */
		s->bits = (back >= 64 ? 0 : s->bits << back) | 1;
		s->top = t;
		return true;
	}
	back = s->top - t;
	if (back >= 64)
		return true;
	if (s->bits >> back & 1)
		return false;
	s->bits |= (uint64_t)1 << back;
	return true;
}

/* What a return packet adds to the log's counts c and its domain's d (NULL:
 * a domain past the index's cap), totals apart. Always inline: once per
 * return packet (left to the compiler, decode.c's feed loop calls it); the
 * flags a usual return lacks cost it one test (9 instructions less). The
 * rest of the usual return (its domain's next trigger, later than its
 * latest, no damage since) is one run of tests and stores, without the
 * cases of a first return, of damage and of a duplicate
 * (dec_seen_first()'s usual step inline): 20 instructions less a return
 * packet on `decode -j 1` of the 60 s sim log. */
static inline __attribute__((always_inline)) void
dec_index_ret_to(struct t4_index_counts *c, struct t4_index_domain *d, const struct t4_ret_pkt *r)
{
	const uint32_t odd = T4_RET_READ_FAILED | T4_RET_BACKWARDS | T4_RET_MULTIPLEXED;
	uint64_t t = r->trigger_id, at = r->read_begin_ns;
	uint32_t n = r->n_counts;

	c->rets++;
	if (r->flags & odd) { /* one test for the usual return, which has none */
		bool failed = r->flags & T4_RET_READ_FAILED;
		c->read_failed_rets += failed;
		c->backwards_rets += (r->flags & T4_RET_BACKWARDS) != 0;
		c->multiplexed_rets += (r->flags & T4_RET_MULTIPLEXED) != 0;
		if (d)
			d->read_failed += failed;
	}
	c->values += n;
	if (!d)
		return;
	/* (answered.bits is 0 until its first return, never after) */
	if (__builtin_expect(t == d->answered.top + 1 && d->answered.bits && at > d->covered_to &&
			     d->epoch == c->damage && t > d->first_trigger, 1)) {
		uint64_t dt = at - d->covered_to;
		d->last_dt = dt;
		d->elapsed_ns += dt;
		d->covered_to = at;
		d->answered.bits = d->answered.bits << 1 | 1;
		d->answered.top = t;
	} else {
		if (d->rets == 0) {
			d->first_ns = d->covered_to = at;
		} else if (at > d->covered_to) {
			/* the time since its latest return; across damage that took
			 * returns of it (a gap in its trigger IDs), its last interval's */
			uint64_t dt = at - d->covered_to;
			if (d->epoch == c->damage || t <= d->answered.top + 1)
				d->last_dt = dt;
			else if (d->last_dt && d->last_dt < dt)
				dt = d->last_dt;
			d->elapsed_ns += dt;
			d->covered_to = at;
		}
		d->epoch = c->damage;
		if (d->rets == 0 || t < d->first_trigger)
			d->first_trigger = t;
		if (!dec_seen_first(&d->answered, t)) {
			d->duplicates++; /* a copy: one answer */
			c->duplicates++;
		}
	}
	d->last_ns = at;
	d->rets++;
	d->values += n;
	if (n > d->n_counts)
		d->n_counts = n;
}

/* Make room for one more element of a growing array (index.c). */
int dec_vec_room(void **v, size_t *cap, size_t n, size_t elem);

/* Nearest integer, halves away from zero: inline, unlike llround();
 * saturating (a damaged or crafted log gives any double: NaN is 0). */
static inline int64_t dec_round(double v)
{
	if (!(v > -9.2e18))
		return v != v ? 0 : INT64_MIN;
	if (v >= 9.2e18)
		return INT64_MAX;
	return (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
}

/* ---- the clock fit (hull.c) --------------------------------------------- */

/* A bounded sample: the local clock x was read at some instant inside
 * [lo, hi] of the reference clock. Coordinates are relative to the fit's
 * origin (doubles: cycles and ns well inside 2^53). */
struct t4_fit_pt {
	double x, lo, hi;
};

/* The line t = a + b * x midway between the feasible lines of maximum and
 * minimum slope (Duda's convex-hull method), or infeasible. */
struct t4_fit {
	bool feasible;
	double a, b;             /* the chosen line */
	double a_min, b_min;     /* the minimum-slope separating line */
	double a_max, b_max;     /* the maximum-slope separating line */
};
/* pts sorted by strictly increasing x; n >= 2. */
void dec_fit_hull(const struct t4_fit_pt *pts, size_t n, struct t4_fit *out);

/* How many of the n >= 2 points (as above) fit one line: the first m
 * points, where dec_fit_hull() of the first m + 1 is the first infeasible
 * one from 3 on (its verdicts, to the bit, in O(n) pushes); n when all
 * fit (at most 512). */
size_t dec_fit_prefix(const struct t4_fit_pt *pts, size_t n);

/* The same from hulls kept by the caller: a point of a hull. */
struct t4_hpt {
	double x, y;
};
/* Whether p makes top, on vertex below, pop from an upper (or lower)
 * hull: the turn below, top, p, (top - below) x (p - top), is not the
 * hull's way (upper: >= 0, lower: <= 0). Written with top - p for p - top
 * and the products the other way round: the same value to the bit (a
 * negation is exact and rounding symmetric), with top's coordinates the
 * only ones subtracted from (fewer register copies). */
static inline bool dec_hull_pops(struct t4_hpt below, struct t4_hpt top, struct t4_hpt p,
				 bool upper)
{
	double turn = (top.y - below.y) * (top.x - p.x) - (top.x - below.x) * (top.y - p.y);

	return upper ? turn >= 0 : turn <= 0;
}

/* Add p (x increasing) to an upper (or lower) convex hull of n vertices:
 * Andrew's monotone chain, one step; inline, it runs for every sample. */
static inline void dec_hull_push(struct t4_hpt *h, unsigned *n, struct t4_hpt p, bool upper)
{
	unsigned k = *n;

	/* pop while the top does not stay (dec_hull_pops()); two steps a
	 * turn of the loop, the top of each the vertex below the one
	 * before (in registers: no copy of a vertex from step to step),
	 * each step loading only the vertex below; k counts along */
	if (k >= 2) {
		const struct t4_hpt *at = &h[k - 1];
		struct t4_hpt a = *at, b;
		for (;;) {
			b = *--at;
			if (!dec_hull_pops(b, a, p, upper) || --k < 2)
				break;
			a = *--at;
			if (!dec_hull_pops(a, b, p, upper) || --k < 2)
				break;
		}
	}
	h[k++] = p;
	*n = k;
}
/* Fit from hulls already built (dec_hull_push): up, the upper hull of the
 * lower points (x, lo) of consecutive blocks, dn the lower hull of their
 * upper points (x, hi), each in x order; xc the middle of the x range. */
void dec_hull_fit(const struct t4_hpt *up, unsigned nu, const struct t4_hpt *dn, unsigned nd,
		 double xc, struct t4_fit *out);

/* A hull evaluated at x by linear interpolation (NaN outside its x
 * range); *i: a cursor, 0 at first, for points of increasing x. With up
 * and dn as above, the range of the lines consistent with the points.
 * Inline: it runs twice for every sample. */
static inline double dec_hull_walk_in(const struct t4_hpt *h, unsigned n, unsigned *i, double x);
static inline double dec_hull_walk(const struct t4_hpt *h, unsigned n, unsigned *i, double x)
{
	if (!n || x < h[0].x || x > h[n - 1].x)
		return NAN;
	return dec_hull_walk_in(h, n, i, x);
}

/* The same for x known to be inside the hull's x range (n >= 1). */
static inline double dec_hull_walk_in(const struct t4_hpt *h, unsigned n, unsigned *i, double x)
{
	unsigned lo = *i;

	if (n == 1)
		return h[0].y;
	/* the last vertex at or before x, short of the last one: what a
	 * binary search finds, in O(1) amortised for increasing x */
	while (lo + 2 < n && h[lo + 1].x <= x)
		lo++;
	*i = lo;
	double dx = h[lo + 1].x - h[lo].x;
	return dx > 0 ? h[lo].y + (h[lo + 1].y - h[lo].y) * (x - h[lo].x) / dx : h[lo].y;
}

/* The hull (n >= 1 vertices) at each of the m increasing x inside its x
 * range, into y: dec_hull_walk_in()'s values to the bit, found edge by edge
 * (the x of an edge in one loop, no cursor step per x): the clock model's
 * walk over a block. */
void dec_hull_at(const struct t4_hpt *h, unsigned n, const double *x, unsigned m, double *y);

/* fmax() and fmin() inline, with their NaN rule (a NaN argument gives the
 * other one) and x86's choice between equal values (the second). */
static inline double dec_fmax(double x, double y)
{
	return x > y || y != y ? x : y;
}

static inline double dec_fmin(double x, double y)
{
	return x < y || y != y ? x : y;
}

/* The same where y is known not to be NaN (a window's end, a hull's value,
 * a finite difference): their values without the NaN test, which is then
 * false (a NaN x still gives y: a comparison with NaN fails). */
static inline double dec_fmax_n(double x, double y)
{
	return x > y ? x : y;
}

static inline double dec_fmin_n(double x, double y)
{
	return x < y ? x : y;
}

/* ---- one domain's clock model (clock.c) ------------------------------------ */

#define CLOCK_BLOCK 32 /* samples per block; hull fits span three blocks */
#define CLOCK_SIDE 16  /* blocks on each side of a block in its least squares */

struct clk_pt {
	uint64_t seq;     /* the caller's sample number */
	uint64_t trigger;
	uint64_t x, lo, hi;
};

/* Least-squares sums of one reported segment, against a reference line. */
struct clk_seg_acc {
	bool open, have_ref;
	uint64_t x0, t0;
	double ref_b;
	uint64_t n;
	double sx, sr, sxx, sxr, srr;
	uint64_t first_trigger, last_trigger, start_ns, end_ns;
};

/* The n samples p placed at t[i] (reference clock), with the model's
 * half-width uncertainty there, bound[i]; nonlinear when no line fitted
 * (window midpoints). Once a block, not once a sample: a call less each. */
typedef void (*clk_place_fn)(void *ud, const struct clk_pt *p, unsigned n, const uint64_t *t,
			     const uint64_t *bound, bool nonlinear);
typedef void (*clk_segment_fn)(void *ud, const struct t4_clock_segment *seg);

/* One block of samples, with the two hulls of its points (relative to
 * the segment's origin) kept as they arrive. */
struct clk_blk {
	struct clk_pt p[CLOCK_BLOCK];
	double x[CLOCK_BLOCK]; /* p[].x from the segment's origin */
	unsigned n, nu, nd;
	struct t4_hpt up[CLOCK_BLOCK], dn[CLOCK_BLOCK];
};

/* Weighted least-squares sums of a block's window midpoints, about its
 * first sample (x0 ticks, t0 ns): weights 1 / (width^2 + floor^2). */
struct clk_mom {
	uint64_t x0, t0;
	double s0, sx, sy, sxx, syy, sxy; /* sx, sy and sxx, syy in pairs:
					   * window_sums() moves each pair as one */
	unsigned n;
};

/* A block waiting for the blocks after it (its least squares is centred
 * on it): its samples and the range each may be placed in (its window and
 * what the local hull allows); its sums are in the clock's ring. */
struct clk_qblk {
	struct clk_pt p[CLOCK_BLOCK];
	double lo[CLOCK_BLOCK], hi[CLOCK_BLOCK]; /* ns from its sums' t0 */
	double x[CLOCK_BLOCK];  /* ticks from its sums' x0 */
	unsigned n;
	bool ok;     /* the local hull is feasible */
};

/* The sums of the placed blocks of a segment kept for the least squares
 * and of the waiting ones, in block order: one ring. */
#define CLOCK_MOMS (2 * CLOCK_SIDE + 1)

struct clk {
	double nominal_hz;
	clk_place_fn place;
	clk_segment_fn on_segment;
	void *ud;
	bool in_segment, have_last_t;
	bool decide;          /* a cut: is the next fit a new rate? */
	double decide_b;      /* the slope before the cut */
	uint64_t x0, t0;      /* origin of the segment's fits */
	uint64_t prev_x, last_t;
	double last_b;        /* slope of the last fit, ns per tick */
	struct clk_blk blk[3]; /* checked, pending, open: in role[] order */
	uint8_t role[3];       /* the blk[] of each role */
	/* blocks waiting to be placed (a ring of CLOCK_SIDE + 1); the sums
	 * of each (from mom[m_head] on) and of the last h_n <= CLOCK_SIDE
	 * placed ones of the segment (just before it) */
	struct clk_qblk *q;
	unsigned q_head, q_n;
	struct clk_mom mom[CLOCK_MOMS];
	unsigned m_head, h_n;
	struct clk_seg_acc acc;
	uint64_t segments;
};

void clk_init(struct clk *c, double nominal_hz, clk_place_fn place, void *ud);
void clk_free(struct clk *c);
/* Next sample, in trigger order. */
void clk_push(struct clk *c, const struct clk_pt *p);
/* Place every sample still held (end of the log). */
void clk_flush(struct clk *c);

/* ---- formulas (expr.c) ---------------------------------------------------- */

#define T4_EXPR_MAX 32 /* instructions in one compiled formula */

/* A compiled formula: postfix code over event indexes and elapsed_ns. */
struct t4_expr {
	uint8_t n;
	uint8_t shape; /* a common form evaluated without the stack (expr.c) */
	struct {
		uint8_t op;     /* T4_OP_* (expr.c) */
		uint8_t event;  /* for loads */
		double k;       /* for constants */
	} code[T4_EXPR_MAX];
};
/* Look-up of an event name in a domain: its index, or -1. */
typedef int (*t4_expr_lookup)(void *ud, const char *name, size_t len);
/* Compile expr; -ENOENT when an event it uses is not recorded (the metric
 * is then absent), -EINVAL for a malformed formula. */
int dec_expr_compile(const char *expr, t4_expr_lookup lookup, void *ud, struct t4_expr *out);
/* Evaluate with counts as doubles; NaN when a division has a zero
 * denominator. */
double dec_expr_eval(const struct t4_expr *e, const double *counts, double elapsed_ns);

/* ---- apportioning (phases.c) --------------------------------------------- */

/* Split value into k integer parts in proportion to weights w (summing to
 * wsum > 0) so that the parts add up to value exactly: floors, then the
 * largest remainders get one more (ties to the lower index). keys: k
 * entries of scratch. */
void dec_apportion_value(uint64_t value, const uint64_t *w, size_t k, uint64_t wsum,
		  uint64_t *out, t4_u128 *keys);

/* ---- the decoder's state (decode.c, dom.c, phases.c, bins.c) ------------- */

struct dec_split; /* parallel.c */

#define DEC_REORDER 32       /* returns held to put late ones in order */
#define DEC_QCAP 1024        /* samples held per domain, at most (power of two) */
#define DEC_QCAP_FIRST 64    /* and at first: the ring doubles as needed */
#define DEC_RCAP 4096        /* reference packets kept per scheduler */
#define DEC_MAX_SPANS 4096   /* phase spans whose totals are kept one by one */
#define DEC_MAX_NAMES 4096   /* bookmark names whose totals are kept */
#define DEC_NO_NAME UINT32_MAX /* a span's name slot past DEC_MAX_NAMES */
/* A recorder may write T4_BOOKMARK_NAMES names; the decoder keeps the totals
 * of the first DEC_MAX_NAMES (memory: names x domains x counters) and none,
 * never another's, for later ones (phases.c:name_slot). */
_Static_assert(DEC_MAX_NAMES <= T4_BOOKMARK_NAMES, "no more name slots than names a log may hold");
#define DEC_EXACT_LAG 32     /* triggers before a reference checks exact phases */
#define DEC_MAX_SEGMENTS 256 /* clock segments listed per domain */
#define DEC_MAX_BINS 65536   /* --bin bins one interval may span */
#define DEC_BIN_SLACK 4096 /* and beyond its triggers' time (late reads) */
#define DEC_MAX_BINS_PER_PERIOD 1000 /* --bin finer than period / this: refused */
#define DEC_MAX_DOMAINS T4_MAX_DOMAINS /* clock domains decoded (packets.h) */
_Static_assert(DEC_MAX_DOMAINS % 64 == 0, "t4_decoder.waiting: a bit per domain slot");

struct dsample {
	uint64_t trigger, x, lo, hi;
	uint64_t t, bound;  /* placed instant and its uncertainty */
	uint32_t flags;     /* T4_RET_* */
	uint32_t epoch;     /* damage epoch when it was read */
	uint32_t n;         /* counts */
	bool nonlinear;
};

struct refent {
	uint64_t trigger, ref_ns;
	uint32_t bookmark_id, flags;
	bool present;
};

struct dsched {
	uint32_t id;
	bool any;
	uint64_t watermark;   /* largest trigger seen */
	uint64_t refs;
	struct refent *ring;  /* DEC_RCAP, by trigger */
};

/* --bin: the open cell of one domain: bin `index` within span
 * `span` (a cell never straddles a phase boundary: it is cut there),
 * covering [lo, hi) so far. */
struct dbin {
	bool open;
	int64_t index;
	size_t span;
	uint64_t lo, hi;
	uint64_t elapsed, first_trigger, trigger;
	uint32_t flags;
	uint64_t *counts;
	t4_u128 *level_ns; /* a gauge's level x ns over the bin: a u64 wraps
			    * (80 GB held over a 10-minute bin) */
};

struct dom {
	struct t4_dec_domain pub;
	struct t4_decoder *d;
	struct t4_index_domain *ixw; /* pub.ix, to add its returns to (feed_ret) */
	uint32_t slot;       /* index in the decoder's domain list */
	int sched_idx;       /* cached index of its scheduler, -1 */
	bool have_last_t;
	uint64_t last_t;     /* the last placed instant */
	uint64_t last_elapsed; /* of the last whole interval handed out */
	size_t cap_segs;
	double freq_w, dur_w, res_ss, res_n; /* segment statistics sums */
	char names[T4_MAX_COUNTERS][T4_NAME_MAX];
	char units[T4_MAX_COUNTERS][32];
	struct {
		char name[2 * T4_NAME_MAX], expr[6 * T4_NAME_MAX];
	} *made;             /* metrics made from events (DRM domains only) */
	bool any_gauge;
	char pmu[T4_NAME_MAX];
	bool dirty;          /* metadata changed: refresh names and metrics */
	bool clocked;        /* a clock event: the fit runs */
	struct clk clk;
	struct t4_expr *metric; /* metric_cap compiled formulas */
	size_t metric_cap;
	bool metric_ok[T4_MAX_COUNTERS];
	/* samples: [head, pcur) placed, [pcur, mcur) in the model,
	 * [mcur, tail) held for reordering */
	struct dsample *q;
	uint64_t *qc;        /* counts, ncap per sample */
	uint32_t ncap;
	uint32_t qcap;       /* ring size: DEC_QCAP_FIRST .. DEC_QCAP */
	uint64_t qmask;      /* qcap - 1: a sample's place, seq & qmask */
	uint64_t head, pcur, mcur, tail;
	bool have_prev, have_modeled;
	struct dsample prev; /* the last sample an interval ended at */
	uint64_t last_modeled;
	struct t4_hist window, bound;
	struct t4_clock_segment *segs;
	size_t n_segs;
	/* phases: per listed span, and per bookmark name: ncap totals and the
	 * elapsed time */
	t4_u128 *ptot, *ntot;
	uint64_t *pel, *nel;
	size_t n_ptot, n_ntot;
	/* the run: pieces of consecutive intervals in one span (of one name),
	 * summed (ncap) until the span changes, then added to pub.totals and
	 * the span's and the name's totals at once (phases_flush) */
	t4_u128 *run;        /* what carried out of run_lo: multiples of 2^64 */
	uint64_t *run_lo;    /* ncap: the run's sums modulo 2^64 */
	uint64_t run_el;
	size_t run_span;
	uint32_t run_name;
	uint64_t run_gen;    /* the decoder's span_gen when the run's span
			      * (its name, the tables' rows) was checked */
	bool run_open;
	/* the span cursor: the span its last interval started in, and the
	 * keys (times; triggers in logs without bookmark times) that map to
	 * it, [span_lo, span_hi), while the spans are the decoder's
	 * span_gen (attrib.c) */
	size_t span_hint;
	uint64_t span_lo, span_hi, span_gen;
	struct dbin bin;
	uint64_t *scratch;   /* ncap */
	double *dcounts, *metrics;
};

struct dspan {
	uint64_t start_ns;
	uint32_t bookmark_id;
	uint32_t name;            /* its bookmark's slot in the name totals
				   * (DEC_NO_NAME: none) */
	uint32_t occurrence;      /* 1 + earlier spans of its bookmark */
	uint64_t first_trigger;
	bool exact;
	uint64_t cpu_ns, threads; /* CPU slices inside (slices.c) */
};

/* A piece of an interval inside one span (attrib.c). */
struct dcut {
	size_t span;
	uint64_t start, end;
};

/* ---- CPU and GPU slices (slices.c) -------------------------------------- */

#define DEC_PAIRS 8192        /* (MONOTONIC, reference) pairs kept */
#define DEC_SLICE_HOLD 65536  /* slices waiting for later reference packets */
/* How far past a slice or an interval the reference packets must reach
 * before it is placed in the phases: a probe bookmark's lateness (it
 * reaches the log with the trigger that takes it), the format's bound. */
#define DEC_BOOKMARK_LAG_NS T4_BOOKMARK_LATE_NS

struct dpair {
	uint64_t mono, ref;
};

/* A CPU or GPU slice packet as held (the packet's own union is kilobytes). */
struct dslice_pkt {
	uint32_t type; /* T4_PKT_CPU_SLICE or T4_PKT_GPU_SLICE */
	union {
		struct t4_cpu_slice_pkt cpu;
		struct t4_gpu_slice_pkt gpu;
	};
};

struct dtask {
	uint32_t tid, pid;
	char name[T4_NAME_MAX];
	size_t last_span;     /* span + 1 it was last counted in */
};

struct dgpu {
	uint64_t context;
	char driver[T4_NAME_MAX], timeline[T4_NAME_MAX];
	uint64_t last_end;    /* jobs of one context run in order */
	uint64_t *busy;       /* per span */
	size_t n_busy;
};

struct dslices {
	struct dpair *pairs;  /* ring, MONOTONIC increasing */
	size_t n_pairs, pair_head;
	struct dslice_pkt *hold; /* slices not yet convertible: a ring that */
	size_t n_hold, hold_head, cap_hold; /* grows up to DEC_SLICE_HOLD */
	struct dtask *tasks;
	size_t n_tasks, cap_tasks;
	struct t4_idmap task_map;
	struct dgpu *gpus;
	size_t n_gpus, cap_gpus;
	struct t4_dec_slices st;
};

struct t4_decoder {
	struct t4_decode_opts o;
	struct t4_sink_ops ops;
	void *ud;
	struct t4_index *ix;
	struct t4_index_counts *ix_counts; /* ix's, to add returns to (feed_ret) */
	struct t4_reader_stats rst;
	struct t4_dec_damage dmg;
	uint32_t epoch;
	int error;           /* sticky: a sink's error */
	bool finishing;
	uint64_t period_ns;
	/* domains: by ID through the map */
	struct dom **doms;
	size_t n_doms, cap_doms;
	struct t4_idmap dom_map;
	/* bit per slot: the domain may hold placed samples the join has not
	 * let out (dom_drain() sets and clears it), so a reference packet
	 * visits only those (drain_sched), not every domain */
	uint64_t waiting[DEC_MAX_DOMAINS / 64];
	struct dsched *scheds;
	size_t n_scheds, cap_scheds;
	/* phases */
	struct dspan *spans;
	size_t n_spans, cap_spans;
	uint64_t span_gen;   /* changes with every change of the spans */
	bool exact_phases;   /* bookmark packets carry set_ns */
	uint32_t phase_sched;
	bool have_phase_sched;
	uint64_t pk;         /* next trigger the ref-mode phases examine */
	bool pk_started, pk_set;
	uint64_t pk_prev_ns;
	struct t4_idmap name_map; /* bookmark ID -> name slot */
	struct t4_idmap occ_map;  /* bookmark ID -> spans of it so far */
	struct dcut *cuts;        /* attrib.c's scratch: pieces of one interval */
	size_t cap_cuts;
	uint64_t *cut_counts, *cut_el; /* and their shares */
	size_t cap_cut_vals;
	bool window_resolved;     /* --from/--to bookmarks found (decode.c) */
	uint64_t window_from, window_to;
	int64_t window_to_span;   /* --to's span once found, -1 */
	size_t window_from_scan, window_to_scan; /* spans looked at for them */
	uint64_t selected;        /* intervals and slices the filters keep (--from/--to,
				   * --phase; --pmu feeds only its domains): with a
				   * filter, none is an error (check_names) */
	uint32_t *name_ids;
	size_t n_names, cap_names;
	bool test_fail_name_alloc; /* a test's seam: the next name slot's
				    * allocation fails (phases.c) */
	bool test_no_cursor;       /* a test's seam: every interval searches
				    * for its span, no cursor (attrib.c) */
	bool test_untimed_waits;   /* a test's seam: decode -j's waits are
				    * not timed (parallel.c: a lost wake-up
				    * hangs instead of stalling) */
	struct t4_dec_phase *phases; /* built at finish */
	size_t *phase_span;          /* the span of each phase */
	size_t n_phases;
	/* apportioning scratch */
	uint64_t *ap_w, *ap_out;
	t4_u128 *ap_keys;
	size_t ap_cap;
	struct dslices sl;
	/* time window */
	const struct t4_place *place; /* merged: where its host lies on UTC */
	const char *log_name; /* the file being read, for its warnings (the
			       * path, or "standard input" for -) */
	bool have_origin;    /* fixed: something was output */
	uint64_t origin_ns;
	uint64_t last_end_ns;
	/* decode -j (parallel.c): this decoder is worker par_k of par_n (0:
	 * alone) and decodes the domains whose slot is par_k modulo par_n
	 * (the others' slots are NULL in doms); the packets fed so far, and how many had been fed at
	 * its first output (UINT64_MAX: none yet) */
	uint32_t par_n, par_k;
	struct dec_split *split; /* decode -j: its share of the origin and of
				  * the rows' merge (parallel.c), NULL alone */
	bool quiet;          /* a worker that says nothing (worker 0 speaks) */
	bool said_redescribed; /* a domain described again, otherwise: said */
	bool said_renamed;   /* a bookmark ID named otherwise: said */
	bool said_reused;    /* a name given to a second ID: said */
	bool doms_finished;  /* dec_finish_domains() done */
	uint64_t n_fed, first_out;
};

/* The weight of a gauge's level in totals: level x elapsed ns, exact
 * (FORMAT 4.3: any level, any length; the mean level is a sum of them
 * over the sum of the lengths). */
static inline t4_u128 dec_gauge_weight(uint64_t level, uint64_t elapsed_ns)
{
	return (t4_u128)level * elapsed_ns;
}

/* a + b, saturating: a domain's gauge weights sum exactly while its
 * lengths sum below 2^64 ns (time on the reference axis always does; a
 * crafted log's nominal lengths, --clock-model offset, may not). */
static inline t4_u128 dec_u128_add_sat(t4_u128 a, t4_u128 b)
{
	t4_u128 r;

	return __builtin_add_overflow(a, b, &r) ? ~(t4_u128)0 : r;
}

/* Histogram buckets of the values under DEC_HIST_SMALL from a table
 * (dom.c): a domain adds two values a sample (its read window and its
 * bound, mostly under 4 us), and a load costs less than t4_hist_bucket().
 * dec_hist_init() fills the table once (a new domain calls it). */
#define DEC_HIST_SMALL 4096
extern uint8_t dec_hist_small[DEC_HIST_SMALL];
_Static_assert(DEC_HIST_SMALL <= 1u << 12, "t4_hist_bucket(v) < 256 for v < 4096");
void dec_hist_init(void);
/* t4_hist_bucket(v), within the histogram's buckets (t4_hist_add_at()). */
static inline unsigned dec_hist_bucket(uint64_t v)
{
	unsigned b = v < DEC_HIST_SMALL ? dec_hist_small[v] : t4_hist_bucket(v);

	return b < T4_HIST_BUCKETS ? b : T4_HIST_BUCKETS - 1;
}
/* t4_hist_add(h, v), the same buckets to the bit (tested). */
static inline void dec_hist_add(struct t4_hist *h, uint64_t v)
{
	t4_hist_add_at(h, dec_hist_bucket(v), v);
}

/* decode.c */
struct dsched *dec_sched(struct t4_decoder *d, uint32_t id);
const struct dsched *dec_sched_find(const struct t4_decoder *d, uint32_t id);
/* Scheduler s's reference packet of trigger, or NULL (inline: the join
 * asks it for every interval). */
static inline const struct refent *dec_ref(const struct dsched *s, uint64_t trigger)
{
	const struct refent *e;

	if (!s)
		return NULL;
	e = &s->ring[trigger & (DEC_RCAP - 1)];
	return e->present && e->trigger == trigger ? e : NULL;
}
bool dec_time_window(struct t4_decoder *d, uint64_t start, uint64_t end);
/* The same, inline for the usual case (no --from/--to, the origin
 * fixed: every interval is in): an interval's piece asks it. */
static inline bool dec_in_window(struct t4_decoder *d, uint64_t start, uint64_t end)
{
	if (d->have_origin && !d->o.from.set && !d->o.to.set)
		return true;
	return dec_time_window(d, start, end);
}
/* filters.c */
/* Whether --pmu's globs (NULL: all) select a domain by its name, PMU
 * or kind. */
bool dec_domain_selected(const char *pmu_glob, const char *name, const char *pmu,
			 const char *kind, uint32_t kind_id);
/* Whether name matches one of the comma-separated shell globs (NULL: all). */
bool dec_glob_any(const char *globs, const char *name, int flags);
/* Whether o holds a filter that selects intervals (--from, --to, --phase,
 * --pmu): with one, a decode that keeps none is refused, where the log
 * has intervals to keep (dec_log_has_intervals: else no filter is to
 * blame, and the summary says why there are none). */
bool dec_filters_select(const struct t4_decode_opts *o);
/* Whether a domain of the log answered twice (an interval needs two). */
bool dec_log_has_intervals(const struct t4_index *ix);
/* The error of filters that select no interval of the log ix: the options
 * as given and the span of the log's triggers (ERANGE; ix NULL: of merged
 * logs, no span). */
int dec_selection_empty(const struct t4_index *ix, const struct t4_decode_opts *o);
/* The error of a --to NAME with no occurrence after --from (ERANGE): the
 * one line said whether the log's index finds it (t4_decode_check, before
 * any output) or the decoder's spans at its end (decode.c). log: a merged
 * host's log, named; NULL for one log. */
int dec_window_to_error(const char *log, const struct t4_decode_opts *o);
/* --to NAME whose every occurrence starts before --from, found from the
 * index ix (its bookmark packets: the phases, where each is kept, with its
 * set time, in set order, in a log without damage; else 0, left to the
 * decoder's spans at its end), so before any output byte: a stream to
 * standard output had every row past --from, then the decoder's error.
 * pl NULL: one log; else a merged host's place (its log named, a --from
 * offset on the merged axis). A name the log lacks is t4_decode_check's.
 * 0, or dec_window_to_error(). */
int dec_window_to_check(const struct t4_index *ix, const struct t4_decode_opts *o,
			const struct t4_place *pl);
/* decode.c: a --from/--to offset as a reference time: from origin_ns
 * (past the reference clock's end: its end), or merged (pl), from the
 * merged timeline's origin (before this host's log: its start). */
uint64_t dec_window_offset(uint64_t origin_ns, const struct t4_place *pl, uint64_t offset_ns);
/* decode.c: a quiet decode of the log at path, without output, until the
 * filters keep an interval (*kept): 0, or dec_selection_empty()'s error
 * when they keep none (or the decoder's own). pl: a merged host's place
 * (its times on the merged axis), whose decode leaves the error to the
 * caller (0, *kept false). */
int dec_selection_check_file(const char *path, const struct t4_decode_opts *o,
			     const struct t4_place *pl, bool *kept);
/* --bin against the log's period: refused (a thousand bins and more per
 * period), or said unless quiet (finer than the period), or 0. */
int dec_check_bins(uint64_t bin_ns, uint64_t period_ns, bool quiet);
/* index.c: the PMU of a domain's first n events: the first that names
 * one ("" if none); valid until the index changes. */
const char *dec_domain_pmu(const struct t4_index *ix, uint32_t id, uint32_t n);
/* metrics.c: the metric event i of a DRM domain makes (FORMAT 6.2: per
 * client and engine, busy % from its engine ns, or from its cycles and
 * total cycles, over its capacity): its name and formula; false when
 * it makes none. names: the domain's n event names. */
bool dec_drm_metric(const char *const *names, uint32_t n, uint32_t i, char *name, size_t name_cap,
		    char *expr, size_t expr_cap);
/* dom.c */
struct dom *dom_of(struct t4_decoder *d, uint32_t id);
/* decode -j: the next slot is domain id's, decoded by another worker
 * (NULL in d->doms: no memory spent on it here) */
int dom_elsewhere(struct t4_decoder *d, uint32_t id);
int dom_take(struct t4_decoder *d, struct dom *dm, const struct t4_ret_pkt *r);
int dom_drain(struct t4_decoder *d, struct dom *dm, bool all);
int dom_refresh(struct t4_decoder *d, struct dom *dm);
void dom_free(struct dom *dm);
/* A finished domain's decoding memory (its sample ring, its clock model's
 * queue) freed; what queries read stays. Nothing may be fed after. */
void dom_trim(struct dom *dm);
void dom_metrics(const struct dom *dm, const double *counts, double elapsed, double *out);
/* readahead.c: the log read and unpacked on threads of their own (decode
 * -j 2 and up) */
struct t4_readahead;
struct dec_read_end {
	int rrc;        /* t4_reader_next()'s last status */
	char msg[256];  /* its error message (rrc < 0) */
	struct t4_reader_stats st;
};
/* How many of -j jobs unpack chunks (at least one; the others decode). */
unsigned dec_unpackers(unsigned jobs);
#define DEC_MAX_WORKERS 64   /* decode -j's domain workers at most (parallel.c) */
#define DEC_MAX_UNPACKERS 16 /* its chunk unpackers at most (readahead.c; memory:
			      * 21 slots, 84 MiB of pieces at most) */
/* The threads decode -j starts at most, a scanner with them (every worker
 * but the caller, every unpacker but one, which is a worker's work) */
#define DEC_JOBS_THREADS_MAX (DEC_MAX_WORKERS + DEC_MAX_UNPACKERS - 1)
/* How many of want threads this process can start at once (a per-user
 * limit, RLIMIT_NPROC, or memory may allow fewer: *err says why), each
 * started, held until the last, and joined. */
unsigned dec_threads_startable(unsigned want, int *err);
/* Feed every packet of r to d, read ahead on another thread and unpacked
 * on `unpackers` threads; *slot points at the read-ahead while it runs, for the
 * reader's warning callback to queue its warnings in place
 * (dec_readahead_warning), which are replayed through warn(d, ...) in
 * order. Returns the decoder's status; the reader's end in *end. */
int dec_readahead_feed(struct t4_decoder *d, struct t4_reader *r, unsigned unpackers,
		       struct t4_readahead **slot, t4_reader_warn_fn warn,
		       struct dec_read_end *end);
void dec_readahead_warning(struct t4_readahead *ra, uint64_t offset, const char *msg);
/* The same for n decoders at once (decode -j: parallel.c), each fed every
 * packet, ds[0] on the calling thread and the others on threads of their
 * own; warns[k] replays the warnings for ds[k]; then ds[k] is finished
 * up to its domains (dec_finish_domains) on its thread. Returns the
 * status of the decoder that failed first in the log's order (its
 * message passed on), or 0. */
int dec_readahead_feed_n(struct t4_decoder *const *ds, unsigned n, unsigned unpackers,
			 struct t4_reader *r, struct t4_readahead **slot,
			 const t4_reader_warn_fn *warns, struct dec_read_end *end);
/* decode.c: the end of the log for the domains (their last intervals,
 * their totals), the first half of t4_decoder_finish(), which does the
 * rest (once, on the decoder the domains were gathered in). */
int dec_finish_domains(struct t4_decoder *d);
/* parallel.c: feed r to d with its domains split over `workers` workers
 * (2 and up; false from dec_parallel_ok(): one decoder), the chunks
 * unpacked on `unpackers` threads */
bool dec_parallel_ok(const struct t4_decoder *d, unsigned workers);
int dec_parallel_feed(struct t4_decoder *d, struct t4_reader *r, struct t4_readahead **slot,
		      unsigned workers, unsigned unpackers, t4_reader_warn_fn warn,
		      struct dec_read_end *end);

/* parallel.c, for the workers of decode -j (d->split set): */
/* packet n_fed is fed: the rows made so far may be merged */
void dec_split_fed(struct dec_split *s, uint64_t n_fed);
/* the worker waits for packets: its rows so far merged */
void dec_split_idle(struct dec_split *s);
/* the worker feeds nothing more (its end, or its failure) */
void dec_split_end(struct dec_split *s);
/* the first output of this worker: take -j 1's origin (every worker's
 * first output before this packet known) */
void dec_split_origin(struct t4_decoder *d);
/* the rows that follow are domain slot's (slot + 1; 0: a slice); an
 * error when the merged output failed */
int dec_split_row(struct t4_decoder *d, uint32_t key_slot);
/* the bytes that follow are written once whatever the worker (id >= 0:
 * a JSONL header, a Perfetto group track; DEC_ONCE_END: its end) */
#define DEC_ONCE_END (-1)
#define DEC_ONCE_IDS 128
void dec_split_once(struct dec_split *s, int id);

/* phases.c */
int phases_bookmark(struct t4_decoder *d, const struct t4_bookmark_pkt *b);
int phases_ref(struct t4_decoder *d, struct dsched *s, bool all);
/* Add one piece's totals to span `span` (its counts; a gauge's level
 * weighted by the piece's elapsed ns, dec_gauge_weight): to the domain's
 * run, which phases_flush() adds to the totals (before they are read: at
 * the end, and when the counts per sample grow). */
void phases_flush(struct dom *dm);
int phases_add_share_new(struct t4_decoder *d, struct dom *dm, size_t span, uint64_t elapsed,
			 const uint64_t *counts, uint32_t n);
/* A piece's totals into the domain's open run. */
void phases_run_add(struct dom *dm, uint64_t elapsed, const uint64_t *c, uint32_t n);
/* The n counts c into a run's 64-bit sums lo, their carries into run. */
static inline void phases_run_counts(uint64_t *lo, t4_u128 *run, const uint64_t *c, uint32_t n)
{
#pragma GCC unroll 2
	for (uint32_t k = 0; k < n; k++)
		if (__builtin_expect(__builtin_add_overflow(lo[k], c[k], &lo[k]), 0))
			run[k] += (t4_u128)1 << 64; /* no call: the loop keeps its registers */
}

static inline int phases_add_share(struct t4_decoder *d, struct dom *dm, size_t span,
				   uint64_t elapsed, const uint64_t *counts, uint32_t n)
{
	/* the usual case, inline: the piece continues the run, and the spans
	 * are those phases_add_share_new() found the run's name and the
	 * tables' rows for (else it, out of line) */
	if (dm->run_open && dm->run_gen == d->span_gen && dm->run_span == span) {
		phases_run_add(dm, elapsed, counts, n);
		return 0;
	}
	return phases_add_share_new(d, dm, span, elapsed, counts, n);
}
size_t phases_span_at(const struct t4_decoder *d, uint64_t t);
/* The span in force at v, a time (or a trigger: by_trigger), trying span
 * `hint` and the next one first (a domain's intervals come in order: the
 * span of its last one). */
size_t phases_span_find(const struct t4_decoder *d, size_t hint, uint64_t v, bool by_trigger);
/* The span an interval closed by trigger k is in, by the trigger rule of
 * logs without bookmark times: the last span that trigger k carries. */
size_t phases_span_at_trigger(const struct t4_decoder *d, uint64_t k);
/* Whether [start, end) overlaps a phase of bookmark `name`. */
bool phases_named(const struct t4_decoder *d, uint64_t start, uint64_t end, const char *name);
/* Make sure a span exists (the one before any bookmark). */
int phases_ensure(struct t4_decoder *d);
/* Overlap weights of [start, end) with the k cells bounds[0..k] into the
 * decoder's apportioning scratch (d->ap_w). */
int dec_apportion(struct t4_decoder *d, uint64_t start, uint64_t end, const uint64_t *bounds,
		  size_t k);
uint64_t phases_span_end(const struct t4_decoder *d, size_t i);
int phases_build(struct t4_decoder *d);
/* slices.c */
int slices_pair(struct t4_decoder *d, uint64_t mono, uint64_t ref);
int slices_take(struct t4_decoder *d, const struct t4_packet *p);
int slices_flush(struct t4_decoder *d);
void slices_free(struct dslices *sl);
/* bins.c */
/* Add a piece of an interval, inside span `span`, to the domain's cells. */
int dec_bins_add(struct t4_decoder *d, struct dom *dm, const struct t4_interval *iv, size_t span);
int dec_bins_flush(struct t4_decoder *d, struct dom *dm);
/* dom.c: hand one interval (or bin) to the sink */
int dom_output(struct t4_decoder *d, struct dom *dm, struct t4_interval *iv);
/* attrib.c: an interval cut at phase boundaries, each piece to the
 * totals and the outputs: any interval (attrib_interval() takes the
 * usual one inline) */
int attrib_any(struct t4_decoder *d, struct dom *dm, struct t4_interval *iv);

/* Whether the domain's span cursor (attrib.c) holds key, with no search:
 * a span lasts hundreds of intervals. */
static inline bool attrib_cursor_holds(const struct t4_decoder *d, const struct dom *dm,
				       uint64_t key)
{
	return dm->span_gen == d->span_gen && key >= dm->span_lo && key < dm->span_hi;
}

/* One piece of an interval, inside span `span`: totals, then the outputs
 * (inline, always: the usual interval is one piece, once per return
 * packet, in dom.c's hand_out() loop). */
static inline __attribute__((always_inline)) int attrib_piece(struct t4_decoder *d, struct dom *dm, struct t4_interval *iv,
			       size_t span)
{
	const struct dspan *sp = &d->spans[span];
	int rc;

	iv->bookmark_id = sp->bookmark_id;
	iv->occurrence = sp->occurrence;
	if (!dec_in_window(d, iv->start_ns, iv->end_ns) ||
	    (d->o.phase && strcmp(t4_decoder_bookmark(d, sp->bookmark_id), d->o.phase)))
		return 0;
	d->selected++;
	dm->pub.intervals++;
	if (!dm->pub.first_ns)
		dm->pub.first_ns = iv->start_ns;
	dm->pub.last_ns = iv->end_ns;
	if ((rc = phases_add_share(d, dm, span, iv->elapsed_ns, iv->counts, iv->n_counts)) < 0)
		return rc;
	if (d->o.bin_ns)
		return dec_bins_add(d, dm, iv, span);
	/* the summary alone wants neither metrics nor rows: no call */
	return d->o.want_metrics || d->ops.interval ? dom_output(d, dm, iv) : 0;
}

/* attrib_any(), inline for the usual interval (emit(): once per return
 * packet, a call less): the one piece inside the span the domain's
 * cursor is on, by its time or, in logs without bookmark times, its
 * trigger (attrib.c: whole_span()). */
static inline __attribute__((always_inline)) int attrib_interval(struct t4_decoder *d, struct dom *dm, struct t4_interval *iv)
{
	uint64_t key = d->exact_phases ? iv->start_ns : iv->trigger;

	if (d->n_spans && !d->test_no_cursor && attrib_cursor_holds(d, dm, key) &&
	    (!d->exact_phases || iv->end_ns <= dm->span_hi))
		return attrib_piece(d, dm, iv, dm->span_hint);
	return attrib_any(d, dm, iv);
}
void attrib_free(struct t4_decoder *d);

/* ---- aligned text tables (table.c) ---------------------------------------- */

#define T4_TABLE_LABELS 4
#define T4_TABLE_COLS 24
/* a label whole: a name of the log escaped (a byte written \xNN takes
 * four) and what follows it ("#OCCURRENCE", " (all N)", "/N"); cut short,
 * NAME#1 and NAME#2 read the same */
#define T4_TABLE_LABEL_MAX (4 * T4_NAME_MAX + 32)

struct t4_table {
	size_t nl, nc, nrows, cap;
	const char *lhead[T4_TABLE_LABELS];
	const char *chead[T4_TABLE_COLS], *cunit[T4_TABLE_COLS];
	char head_text[T4_TABLE_COLS][2][T4_TABLE_LABEL_MAX]; /* a head or unit escaped */
	char (*label)[T4_TABLE_LABELS][T4_TABLE_LABEL_MAX];
	double *v;                        /* nrows x T4_TABLE_COLS */
	char (*integer)[T4_TABLE_COLS][44]; /* exact integers, where set */
	int decimals[T4_TABLE_COLS];        /* -1: from the column's largest value */
	bool span[T4_TABLE_COLS];           /* a duration: never a 0.000 that is not 0 */
};
/* nl label columns and nc number columns with their heads (and units, a
 * second head line; NULL: none). Heads, units and labels may come from a
 * log (a metric's, a GPU timeline's name): each is made safe for a
 * terminal (util/text.c). The table does not move once made. */
int dec_table_init(struct t4_table *t, size_t nl, const char *const *lhead, size_t nc,
		  const char *const *chead, const char *const *cunit);
void dec_table_free(struct t4_table *t);
/* A row: nl labels, nc values (NaN: absent; v NULL: all absent). */
int dec_table_row(struct t4_table *t, const char *const *labels, const double *v);
/* Column c of the last row is the exact integer v (totals). */
void dec_table_set_integer(struct t4_table *t, size_t c, t4_u128 v);
/* Columns from .. from + n - 1 are times in seconds: 3 decimals whatever
 * their size (a host an hour into the merged timeline starts at 3600.123,
 * not 3600, beside a host at 0.456). */
void dec_table_times(struct t4_table *t, size_t from, size_t n);
/* Column c is a duration in seconds (a time column too): one above 0 that
 * its decimals would print 0.000 prints "<0.001", for -f phases, CSV and
 * JSONL give it in ns, and 0.000 would say it had none. */
void dec_table_span(struct t4_table *t, size_t c);
void dec_table_print(const struct t4_table *t, FILE *f);
/* Cell (r, c) as dec_table_print() prints it (the column's decimals, the
 * exact integer where set, "-" when absent); labels are t->label[r]. */
void dec_table_cell(const struct t4_table *t, size_t r, size_t c, char *buf, size_t cap);
/* v with `decimals` decimals into buf, as the tables print a value: one
 * that rounds to zero is 0.000, never -0.000 (a drift of -0.0003 ppm). */
const char *dec_fixed(double v, int decimals, char *buf, size_t cap);

/* ---- buffered text output (fmt.c) --------------------------------------- */

struct t4_wbuf {
	FILE *f;
	char *buf;
	size_t len, cap;
	int error; /* sticky: first write error (negative errno) */
};
int dec_wbuf_init(struct t4_wbuf *w, FILE *f, size_t cap);
void dec_wbuf_free(struct t4_wbuf *w);
int dec_wbuf_flush(struct t4_wbuf *w);
/* The slow paths of put and ch: the buffer is full (written out, or grown
 * when it has no file: a scratch line). */
void dec_wbuf_put_more(struct t4_wbuf *w, const char *s, size_t n);
void dec_wbuf_ch_more(struct t4_wbuf *w, char c);

/* The merged rows' writer of decode -j (parallel.c): runs gathered for
 * one writev, the short ones (under DEC_GATHER_SMALL bytes) copied one
 * after the other into w's buffer, the long ones written where they lie
 * (which must stay put until the flush). */
#define DEC_GATHER_IOV 256
#define DEC_GATHER_SMALL 2048
struct dec_gather {
	struct t4_wbuf w; /* its buffer at least DEC_GATHER_SMALL bytes */
	struct iovec iov[DEC_GATHER_IOV];
	int n_iov;
};
void dec_gather_put(struct dec_gather *g, const char *b, size_t n);
void dec_gather_flush(struct dec_gather *g);

/* Inline: a CSV row is a dozen of these, millions of times. */
static inline void dec_wbuf_put(struct t4_wbuf *w, const char *s, size_t n)
{
	if (__builtin_expect(n <= w->cap - w->len, 1)) {
		memcpy(w->buf + w->len, s, n);
		w->len += n;
		return;
	}
	dec_wbuf_put_more(w, s, n);
}

static inline void dec_wbuf_ch(struct t4_wbuf *w, char c)
{
	if (__builtin_expect(w->len < w->cap, 1)) {
		w->buf[w->len++] = c;
		return;
	}
	dec_wbuf_ch_more(w, c);
}

static inline void dec_wbuf_str(struct t4_wbuf *w, const char *s)
{
	dec_wbuf_put(w, s, strlen(s));
}

/* Numbers written straight into a buffer with DEC_FMT_MAX bytes of room
 * (the longest: a metric's 9 digits, sign, point, zeros and exponent);
 * their length. */
#define DEC_FMT_MAX 48
size_t dec_fmt_u64(char *out, uint64_t v);
size_t dec_fmt_f64(char *out, double v);
void dec_wbuf_u64(struct t4_wbuf *w, uint64_t v);
void dec_wbuf_i64(struct t4_wbuf *w, int64_t v);
/* Reference time t in base b (t4_decoder_time), the reference clock's own
 * as it is: unsigned, past 2^63 too (CSV's and JSONL's times). */
void dec_wbuf_time(struct t4_wbuf *w, const struct t4_decoder *d, uint64_t t,
		   enum t4_time_base b);
/* A metric value: up to 9 significant digits, no exponent for the usual
 * range, "nan" never written (callers skip absent values). */
void dec_wbuf_f64(struct t4_wbuf *w, double v);
/* A JSON string literal (util/text.c:t4_json_next, flags 0). */
void dec_wbuf_json_str(struct t4_wbuf *w, const char *s);
/* An RFC 4180 field, the one rule of every CSV output: bytes that are not
 * UTF-8 as the text \\xNN (with flags T4_TEXT_CONTROL, for a terminal,
 * control characters too: util/text.c), quoted when what is written holds
 * sep, a quote, CR or LF. */
void dec_wbuf_csv_field(struct t4_wbuf *w, const char *s, char sep, unsigned flags);

#endif
