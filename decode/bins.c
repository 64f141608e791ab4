/* bins.c - `decode --bin DUR`: every domain resampled onto one common
 * grid of bins [origin + i * DUR, origin + (i + 1) * DUR), so that rows
 * line up across clock domains. A row says the time its counts cover: the
 * whole bin, but at the edges of the recording, across a gap, or where a
 * phase boundary cuts the bin; and from the start of an interval too long
 * to spread (spreads()), whose counts its last bin holds whole.
 *
 * Each interval gives each bin it overlaps the share of its counts that
 * the overlap gives, in integers by the largest-remainder rule: every
 * counter's total is conserved exactly. A domain keeps one open bin; a
 * bin is handed out as soon as an interval starts after it, so memory is
 * one bin per domain. A bin's elapsed time is the time the domain's
 * intervals covered in it (less than DUR at the edges of the recording or
 * across a gap), which is what its metrics divide by. A gauge (a level,
 * not a count: FORMAT 4.3) is not split: the bin gets its time-weighted
 * mean level. A bin never straddles a phase boundary: where one falls
 * inside it, it is cut there into two rows (the pieces of attrib.c never
 * straddle one, so the cut is where a piece of another phase starts).
 *
 * Merged (several hosts' logs, merge.c), the grid is the merged
 * timeline's: bins of DUR of UTC from the first trigger of any host,
 * through each host's line (t4_place), so a bin of one host is the same
 * span of time as the same bin of every other; a grid from each host's
 * own first trigger, in its own clock's ns, lined up with no other host.
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int64_t floor_div(int64_t a, int64_t g)
{
	return a >= 0 ? a / g : -((-a + g - 1) / g);
}

static int64_t bin_of(const struct t4_decoder *d, uint64_t t)
{
	if (d->place) /* merged: ns from the merged origin, on UTC */
		return floor_div(t4_place_rel(d->place, t), (int64_t)d->o.bin_ns);
	return floor_div((int64_t)(t - d->origin_ns), (int64_t)d->o.bin_ns);
}

/* Merged: bin i's start, the first reference time of this host that the
 * host's line puts in bin i or later (the line rounds to the ns: the
 * inverse is nudged by a step or two so that bin_of() agrees; a few at
 * most, where the line saturates (a crafted log's times near 2^64)
 * no step would). */
static uint64_t bin_start_placed(const struct t4_decoder *d, int64_t i)
{
	int64_t off, real;
	uint64_t t;

	if (__builtin_mul_overflow(i, (int64_t)d->o.bin_ns, &off) ||
	    __builtin_add_overflow(d->place->origin_real_ns, off, &real))
		return i < 0 ? 0 : UINT64_MAX;
	t = t4_place_ref(d->place, real);
	for (int k = 0; k < 4 && t < UINT64_MAX && bin_of(d, t) < i; k++)
		t++;
	for (int k = 0; k < 4 && t > 0 && bin_of(d, t - 1) >= i; k++)
		t--;
	return t;
}

/* Bin i's start; one before the reference clock's 0 (a bin before the
 * first trigger longer than the time up to it: --bin 1e18ns) starts at
 * 0, where no sample can precede it, instead of wrapping to 2^64 - x;
 * one past its end (a log near 2^64 ns) at its end, as no sample follows. */
static uint64_t bin_start(const struct t4_decoder *d, int64_t i)
{
	uint64_t back = i < 0 ? (uint64_t)-i * d->o.bin_ns : 0;

	if (d->place)
		return bin_start_placed(d, i);
	if (i < 0)
		return back > d->origin_ns ? 0 : d->origin_ns - back;
	if ((uint64_t)i > (UINT64_MAX - d->origin_ns) / d->o.bin_ns)
		return UINT64_MAX;
	return d->origin_ns + (uint64_t)i * d->o.bin_ns;
}

/* Emit the open bin: the time its counts cover, [lo, hi) (the whole
 * bin, less what lies before the first or after the last interval,
 * or across a phase boundary, where the bin is cut). */
static int bin_emit(struct t4_decoder *d, struct dom *dm)
{
	struct dbin *c = &dm->bin;
	const struct dspan *sp = &d->spans[c->span];

	for (uint32_t i = 0; i < dm->pub.n_counts && dm->any_gauge; i++)
		if (dm->pub.event_gauge[i]) { /* level x ns -> the mean level, exact */
			t4_u128 mean = c->elapsed ? c->level_ns[i] / c->elapsed : 0;
			c->counts[i] = mean > UINT64_MAX ? UINT64_MAX : (uint64_t)mean;
			c->level_ns[i] = 0;
		}
	struct t4_interval iv = {
		.domain = dm->slot,
		.trigger = c->trigger,
		.first_trigger = c->first_trigger,
		.start_ns = c->lo,
		.end_ns = c->hi,
		.elapsed_ns = c->elapsed,
		.bookmark_id = sp->bookmark_id,
		.occurrence = sp->occurrence,
		.flags = c->flags | T4_IV_BIN,
		.n_counts = dm->pub.n_counts,
		.counts = c->counts,
	};
	int rc = dom_output(d, dm, &iv);

	memset(c->counts, 0, dm->ncap * sizeof(*c->counts));
	c->open = false;
	c->elapsed = 0;
	c->flags = 0;
	return rc;
}

/* Add a share of interval iv (of span `span`), covering [lo, hi), to
 * bin i (opening it). */
static void bin_add(struct dom *dm, int64_t i, size_t span, uint64_t lo, uint64_t hi,
		     const struct t4_interval *iv, uint64_t elapsed)
{
	struct dbin *c = &dm->bin;

	if (!c->open) {
		c->open = true;
		c->index = i;
		c->span = span;
		c->lo = lo;
		c->first_trigger = iv->first_trigger;
	}
	c->hi = hi;
	c->trigger = iv->trigger;
	c->flags |= iv->flags;
	c->elapsed += elapsed;
}

/* Counter k's share of an interval into the open bin: its part of the
 * count, or for a gauge its level weighted by the time it covers there. */
static void share(struct dom *dm, uint32_t k, uint64_t part, uint64_t level, uint64_t elapsed_ns)
{
	if (dm->pub.event_gauge[k])
		dm->bin.level_ns[k] =
			dec_u128_add_sat(dm->bin.level_ns[k], dec_gauge_weight(level, elapsed_ns));
	else
		dm->bin.counts[k] += part;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Whether an interval may spread over n bins: at most DEC_MAX_BINS, and
 * no more than its triggers' time allows (a read late by seconds
 * included). More is a long silence of its domain, or a damaged or crafted
 * log's times (an interval of one trigger claiming a day): its counts go
 * whole into its last bin instead of a million made-up rows, the bin's row
 * starting where the interval does (the time those counts cover). */
static bool spreads(const struct t4_decoder *d, const struct t4_interval *iv, uint64_t n)
{
	uint64_t triggers = iv->trigger - iv->first_trigger + 1;
	uint64_t per = d->period_ns ? d->period_ns / d->o.bin_ns + 1 : DEC_MAX_BINS;

	if (n > DEC_MAX_BINS)
		return false;
	return triggers >= DEC_MAX_BINS || n <= DEC_BIN_SLACK + 4 * triggers * per;
}

int dec_bins_add(struct t4_decoder *d, struct dom *dm, const struct t4_interval *iv, size_t span)
{
	int64_t first = bin_of(d, iv->start_ns), last = bin_of(d, iv->end_ns - 1);
	struct dbin *c = &dm->bin;
	bool whole = !spreads(d, iv, (uint64_t)(last - first) + 1);
	int rc;

	if (whole)
		first = last;

	/* a later bin, or the same one in another phase: the open one is done */
	if (c->open && (c->index != first || c->span != span) && (rc = bin_emit(d, dm)) < 0)
		return rc;
	if (first == last) {
		bin_add(dm, first, span, whole ? iv->start_ns : max_u64(iv->start_ns, bin_start(d, first)),
			iv->end_ns, iv, iv->elapsed_ns);
		for (uint32_t k = 0; k < iv->n_counts; k++)
			share(dm, k, iv->counts[k], iv->counts[k], iv->elapsed_ns);
		return 0;
	}
	size_t n = (size_t)(last - first + 1);
	uint64_t *b = malloc((n + 1) * sizeof(*b)), *parts = malloc(n * iv->n_counts * sizeof(*parts));
	uint64_t *el = malloc(n * sizeof(*el));
	if (!b || !parts || !el) {
		rc = t4_err(ENOMEM, "out of memory for --bin");
		goto out;
	}
	for (size_t j = 0; j <= n; j++)
		b[j] = bin_start(d, first + (int64_t)j);
	if ((rc = dec_apportion(d, iv->start_ns, iv->end_ns, b, n)) < 0)
		goto out;
	uint64_t len = iv->end_ns - iv->start_ns;
	dec_apportion_value(iv->elapsed_ns, d->ap_w, n, len, el, d->ap_keys);
	for (uint32_t k = 0; k < iv->n_counts; k++) {
		dec_apportion_value(iv->counts[k], d->ap_w, n, len, d->ap_out, d->ap_keys);
		for (size_t j = 0; j < n; j++)
			parts[j * iv->n_counts + k] = d->ap_out[j];
	}
	for (size_t j = 0; j < n && rc >= 0; j++) {
		bin_add(dm, first + (int64_t)j, span, max_u64(b[j], iv->start_ns),
			 min_u64(b[j + 1], iv->end_ns), iv, el[j]);
		for (uint32_t k = 0; k < iv->n_counts; k++)
			share(dm, k, parts[j * iv->n_counts + k], iv->counts[k], el[j]);
		if (j + 1 < n)
			rc = bin_emit(d, dm);
	}
out:
	free(b);
	free(parts);
	free(el);
	return rc;
}

int dec_bins_flush(struct t4_decoder *d, struct dom *dm)
{
	return dm->bin.open ? bin_emit(d, dm) : 0;
}
