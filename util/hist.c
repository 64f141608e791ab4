/* hist.c - fixed-size log-linear latency histograms.
 *
 * 16 linear sub-buckets per power of two: about 6% resolution from 1 ns to
 * 2^64 ns in 8 KiB, no allocation, so monitors can record every read
 * window on the trigger path and the scheduler merges them at the end; the
 * decoder keeps read windows and model bounds per domain the same way.
 */
#include "util.h"

#include <string.h>

static unsigned bucket_of(uint64_t v)
{
	if (v < T4_HIST_SUB)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	unsigned shift = msb - 4; /* log2(T4_HIST_SUB) */
	unsigned sub = (unsigned)(v >> shift) & (T4_HIST_SUB - 1);
	return (msb - 3) * T4_HIST_SUB + sub;
}

static uint64_t bucket_upper(unsigned b)
{
	if (b < T4_HIST_SUB)
		return b;
	unsigned msb = b / T4_HIST_SUB + 3;
	unsigned sub = b % T4_HIST_SUB;
	unsigned shift = msb - 4;
	return (((uint64_t)(T4_HIST_SUB + sub) + 1) << shift) - 1;
}

void t4_hist_add(struct t4_hist *h, uint64_t v)
{
	unsigned b = bucket_of(v);

	if (b >= T4_HIST_BUCKETS)
		b = T4_HIST_BUCKETS - 1;
	h->bucket[b]++;
	h->n++;
	if (v > h->max)
		h->max = v;
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
