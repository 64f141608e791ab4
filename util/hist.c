/* hist.c - fixed-size log-linear latency histograms.
 *
 * 16 linear sub-buckets per power of two: about 6% resolution from 1 ns to
 * 2^64 ns in 8 KiB, no allocation, so monitors can record every read
 * window on the trigger path and the scheduler merges them at the end; the
 * decoder keeps read windows and model bounds per domain the same way.
 * t4_hist_add() is inline in util.h: the decoder adds two values per
 * sample.
 */
#include "util.h"

#include <string.h>

static uint64_t bucket_upper(unsigned b)
{
	if (b < T4_HIST_SUB)
		return b;
	unsigned msb = b / T4_HIST_SUB + 3;
	unsigned sub = b % T4_HIST_SUB;
	unsigned shift = msb - 4;
	return (((uint64_t)(T4_HIST_SUB + sub) + 1) << shift) - 1;
}

void t4_hist_merge(struct t4_hist *into, const struct t4_hist *from)
{
	for (unsigned i = 0; i < T4_HIST_BUCKETS; i++)
		into->bucket[i] += from->bucket[i];
	into->n += from->n;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t t4_hist_quantile(const struct t4_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->n)
		return 0;
	rank = (uint64_t)(q * (double)h->n);
	if (rank >= h->n)
		rank = h->n - 1;
	for (unsigned i = 0; i < T4_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen > rank) {
			uint64_t up = bucket_upper(i);
			return up < h->max ? up : h->max;
		}
	}
	return h->max;
}
