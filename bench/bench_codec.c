/* bench_codec.c - formats 1, 2 and 3 on the same recordings, and against
 * the entropy floor of their deltas (issue 19.1; tools/bench_codec.sh
 * records the logs and runs this on them).
 *
 * Each log is read with the reader, chunk by chunk; each chunk's packets
 * (copies included) are coded again in formats 1, 2 and 3, chunk for
 * chunk as the writer cut them, and compressed at the zstd levels asked.
 * Per format and level: file bytes per counter value (64-byte headers
 * included), the coder's time per value (encode alone; encode + zstd), and
 * reading's (zstd + CRC32C + decode, what t4_reader does per chunk), each
 * the fastest of 3 runs per chunk (the machine is shared: the fastest run
 * is the one nothing else interrupted).
 *
 * The floor: the "ideal residuals" of the same packets, per chunk as the
 * codecs see them: for each domain and event, the count minus the better
 * (with hindsight, per block of 16 records) of the previous count and the
 * previous count times the ratio of the local-clock deltas, divided by the
 * block's true granularity (the gcd of its counts); for the clocks the
 * second-order deltas of read_begin, the read window, the local clock
 * against its previous rate, the trigger step; the same for reference
 * packets. Two estimates of what they must cost:
 *   - entropy: per stream (a field of a key), the empirical entropy of the
 *     residuals' bit lengths plus their mantissa bits (a model exact for
 *     values uniform within each power of two, close for any smooth law);
 *   - zstd -19: every stream's residuals as zigzag varints, stream after
 *     stream, compressed at level 19 in one frame (long matches across the
 *     streams allowed).
 * "x floor" is format 2's and format 3's file size over the smaller of the
 * two; and the same for the trigger packets alone (each chunk without its
 * metadata and copies of it: what the floor is of, chunk headers kept). And the
 * same residuals coded two ways, to compare the codes alone (no framing,
 * keys or first records): format 2's adaptive Rice code, and PFor (NewPFD,
 * blocks of 128 at the cheapest width, exceptions' positions and high bits
 * apart), what issue 19 proposed.
 *
 * A second table: how fast each code decodes (speed_log). Each stream's
 * residuals are coded for real into a bit buffer, in exactly the bits
 * counted above (else an error), and decoded back into values, value =
 * previous + unzz(residual): the prefix sum a column-wise format adds, in
 * both timings. Every decoded value is checked, untimed: a decoder that is
 * wrong is an error exit, never a number. Each stream's decoding is the
 * fastest of 3 runs (a stream's run, well under a millisecond, is what can
 * go uninterrupted on a shared machine; a whole log's cannot), summed over
 * the streams; per counter value like the first table (the clock and
 * reference streams' time and bits included).
 *   - Rice: this file's own reader (packets/ exports none), codec2.c's
 *     get_res() in small: a 64-bit buffer, one ctz for the unary part, three
 *     shifts when the code fits, an unaligned 8-byte refill; escapes, codes
 *     that do not fit and k > 52 out of line.
 *   - PFor, per block: b (6 bits, 0..63), the exceptions (8), when there are
 *     any the width of their high bits less one (6: what makes a block
 *     decodable; the size above counts it), the values' low b bits, then
 *     each exception's position (7) and high bits. Unpacked with one
 *     unaligned 8-byte load per value at its bit offset (the values are
 *     independent: no chain through a bit buffer), then the exceptions
 *     patched and the block's prefix sum taken. Against it (host log, 25 runs
 *     a stream): a switch of one such loop per constant width was 3-7%
 *     faster, a 64-bit-buffer loop 8% slower; the generic loop is kept.
 *
 * usage: bench_codec [-l L1,L2,...] LOG...   (markdown: the formats and the
 *        floor, then the residuals' decode speed, Rice against PFor)
 */
#include "packets/packets.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define MAX_LEVELS 6
#define FORMATS 3 /* formats 1, 2 and 3 (2 with quiet and seeded records) */
#define BLOCK 16
#define STREAMS_MAX (1u << 16)
#define RICE_ESC 12       /* this many 1 bits: an escape, raw() follows (5a.2) */
#define RAW_LEN_BITS 7    /* raw(): the bit length of the value */
#define RICE_CAP (1ull << 56) /* residual magnitudes fed to the Rice state */
#define K_FAST 52         /* the largest k the Rice reader's fast path takes */
#define PFOR_BLOCK 128
#define PFOR_WIDTH 6      /* bits: a block's width b (0..63) */
#define PFOR_COUNT 8      /* bits: its exceptions (0..128) */
#define PFOR_HEADER (PFOR_WIDTH + PFOR_COUNT)
#define PFOR_HIGH 6       /* bits: the width of the exceptions' high bits - 1 */
#define PFOR_POS 7        /* bits: an exception's position in its block */
#define PAD 16            /* zero bytes after a coded stream: readers load 8 at a time */

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

__extension__ typedef unsigned __int128 u128;

struct pkts {
	struct t4_packet *p;
	size_t n, cap;
};

/* An adaptive Rice state (5a.2): m ~ 4 x the recent residuals. */
struct rice {
	uint64_t m;
	bool has;
};

/* One stream of residuals (a field of a key): bit-length histogram and the
 * varints of its residuals for zstd. */
struct stream {
	uint64_t key; /* kind << 40 | id << 8 | field */
	uint64_t hist[65];
	uint8_t *vbuf;
	size_t vlen, vcap;
	/* the same residuals coded two ways (bits): format 2's adaptive Rice
	 * code (5a.2), and PFor (NewPFD: blocks of PFOR_BLOCK at the best width
	 * b, the exceptions' positions and high bits apart) */
	struct rice rice;
	uint64_t rice_bits, pfor_bits;
	uint32_t blk_n, blk_hist[65];
	size_t n; /* residuals (speed_log) */
};

struct floor {
	struct stream *s;
	size_t n;
	uint64_t values;
};

struct fmt_result {
	uint64_t raw, file[MAX_LEVELS];
	uint64_t trig; /* the chunks' trigger packets alone, at the first level */
	double enc_s, zstd_s[MAX_LEVELS], read_s;
};

#define REPEATS 3 /* each timing the fastest of 3: the machine is shared */

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the floor ---------------------------------------------------------- */

static struct stream *stream_of(struct floor *f, uint64_t key)
{
	for (size_t i = f->n; i-- > 0;) /* recent streams first: cheap enough here */
		if (f->s[i].key == key)
			return &f->s[i];
	if (f->n == STREAMS_MAX)
		return NULL;
	f->s[f->n] = (struct stream){ .key = key };
	return &f->s[f->n++];
}

static uint64_t zz(uint64_t v)
{
	return (v << 1) ^ (0 - (v >> 63));
}

static unsigned bitlen(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0;
}

/* The Rice parameter of a state: 0 before its first residual, else
 * bitlen(m) - 3 (at least 0; m <= 2^58 keeps it <= 56). */
static unsigned rice_k(const struct rice *r)
{
	return r->has && bitlen(r->m) > 3 ? bitlen(r->m) - 3 : 0;
}

static void rice_feed(struct rice *r, uint64_t v)
{
	uint64_t u = v < RICE_CAP ? v : RICE_CAP;

	r->m = r->has ? r->m - (r->m >> 2) + u : 4 * u;
	r->has = true;
}

/* Format 2's res() with its adaptive parameter (FORMAT.md 5a.2), s = 0. */
static void rice_add(struct stream *s, uint64_t v)
{
	unsigned k = rice_k(&s->rice);

	s->rice_bits += (v >> k) < RICE_ESC ? (v >> k) + 1 + k : RICE_ESC + RAW_LEN_BITS + bitlen(v);
	rice_feed(&s->rice, v);
}

/* A PFor block's layout: width b, the exceptions (values longer than b)
 * and the width of their high bits (top - b, top the longest value), and
 * its bits: the header, n x b bits, then when there are exceptions the
 * width of their high bits and each one's position and high bits. */
struct pfor_plan {
	unsigned b, top, e;
	uint64_t bits;
};

/* The cheapest width for a block of n values of bit-length histogram h. */
static struct pfor_plan pfor_plan(const uint32_t h[65], uint32_t n)
{
	struct pfor_plan best = { .bits = UINT64_MAX };
	unsigned top = 64;

	while (top && !h[top])
		top--;
	for (unsigned b = 0; b < (1u << PFOR_WIDTH) && b <= top; b++) {
		struct pfor_plan p = { b, top, 0, PFOR_HEADER + (uint64_t)n * b };
		for (unsigned l = b + 1; l <= top; l++)
			p.e += h[l];
		if (p.e)
			p.bits += PFOR_HIGH + (uint64_t)p.e * (PFOR_POS + top - b);
		if (p.bits < best.bits)
			best = p;
	}
	return best;
}

/* A block of PFor at the width that costs least. */
static void pfor_flush(struct stream *s)
{
	if (!s->blk_n)
		return;
	s->pfor_bits += pfor_plan(s->blk_hist, s->blk_n).bits;
	s->blk_n = 0;
	memset(s->blk_hist, 0, sizeof(s->blk_hist));
}

static void residual(struct floor *f, uint64_t key, uint64_t r)
{
	struct stream *s = stream_of(f, key);
	uint64_t v = zz(r);

	if (!s)
		return;
	s->hist[bitlen(v)]++;
	rice_add(s, v);
	s->blk_hist[bitlen(v)]++;
	if (++s->blk_n == PFOR_BLOCK)
		pfor_flush(s);
	if (s->vlen + 10 > s->vcap) {
		s->vcap = s->vcap ? 2 * s->vcap : 4096;
		s->vbuf = realloc(s->vbuf, s->vcap);
		if (!s->vbuf)
			abort();
	}
	while (v >= 0x80) {
		s->vbuf[s->vlen++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	s->vbuf[s->vlen++] = (uint8_t)v;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static uint64_t rate_pred(uint64_t prev, uint64_t dl, uint64_t pdl)
{
	if (!pdl || dl >> 32)
		return prev;
	return (uint64_t)(((u128)prev * ((dl << 32) / pdl) + (1u << 31)) >> 32);
}

/* Count i of record j predicted from record j - 1: as it was, or at its
 * rate times the elapsed local time. */
static uint64_t predict(const struct t4_ret_pkt **r, size_t j, uint32_t i, bool rate)
{
	uint64_t pv = r[j - 1]->counts[i];
	uint64_t dl = r[j]->local_clock - r[j - 1]->local_clock;
	uint64_t pdl = j >= 2 ? r[j - 1]->local_clock - r[j - 2]->local_clock : 0;

	return rate ? rate_pred(pv, dl, pdl) : pv;
}

/* The ideal residuals of one domain's returns in one chunk (in order). */
static void floor_domain(struct floor *f, const struct t4_ret_pkt **r, size_t n)
{
	uint64_t id = (uint64_t)r[0]->domain_id << 8 | 1ull << 40;

	for (size_t j = 1; j < n; j++) { /* clocks: second order */
		uint64_t dt = r[j]->trigger_id - r[j - 1]->trigger_id;
		uint64_t db = r[j]->read_begin_ns - r[j - 1]->read_begin_ns;
		uint64_t dl = r[j]->local_clock - r[j - 1]->local_clock;
		uint64_t step = 0, pl = 0; /* pl: the local delta predicted */
		if (j >= 2) {
			uint64_t pdb = r[j - 1]->read_begin_ns - r[j - 2]->read_begin_ns;
			uint64_t pdl = r[j - 1]->local_clock - r[j - 2]->local_clock;
			step = pdb;
			pl = rate_pred(pdl, db, pdb); /* the previous rate x elapsed */
		}
		residual(f, id | 0, dt - 1);
		residual(f, id | 1, db - step * dt);
		residual(f, id | 2, (r[j]->read_end_ns - r[j]->read_begin_ns) -
				    (r[j - 1]->read_end_ns - r[j - 1]->read_begin_ns));
		residual(f, id | 3, dl - pl);
	}
	for (uint32_t i = 0; i < T4_MAX_COUNTERS; i++) {
		for (size_t b0 = 1; b0 < n; b0 += BLOCK) {
			size_t b1 = b0 + BLOCK < n ? b0 + BLOCK : n;
			uint64_t g = 0, cost[2] = { 0, 0 };
			int best;
			bool any = false;
			for (size_t j = b0; j < b1; j++) {
				if (i >= r[j]->n_counts || i >= r[j - 1]->n_counts)
					continue;
				any = true;
				g = gcd(g, r[j]->counts[i]);
			}
			if (!any)
				continue;
			g = g ? g : 1;
			for (size_t j = b0; j < b1; j++) {
				uint64_t a, b;
				if (i >= r[j]->n_counts || i >= r[j - 1]->n_counts)
					continue;
				a = zz(r[j]->counts[i] - predict(r, j, i, false));
				b = zz(r[j]->counts[i] - predict(r, j, i, true));
				cost[0] += a ? 64 - (uint64_t)__builtin_clzll(a) : 0;
				cost[1] += b ? 64 - (uint64_t)__builtin_clzll(b) : 0;
			}
			best = cost[1] < cost[0];
			for (size_t j = b0; j < b1; j++) {
				if (i >= r[j]->n_counts || i >= r[j - 1]->n_counts)
					continue;
				uint64_t c = r[j]->counts[i], p = predict(r, j, i, best);
				/* in units of g: the prediction rounded to one */
				uint64_t q = (p + g / 2) / g;
				residual(f, id | (8 + i), c / g - q);
				f->values++;
			}
		}
	}
}

static int cmp_ret(const void *a, const void *b)
{
	const struct t4_ret_pkt *x = *(const struct t4_ret_pkt *const *)a;
	const struct t4_ret_pkt *y = *(const struct t4_ret_pkt *const *)b;

	if (x->domain_id != y->domain_id)
		return x->domain_id < y->domain_id ? -1 : 1;
	return 0;
}

static void floor_chunk(struct floor *f, const struct pkts *k)
{
	const struct t4_ret_pkt **r = malloc(k->n * sizeof(*r));
	size_t n = 0;

	if (!r)
		abort();
	for (size_t i = 0; i < k->n; i++)
		if (k->p[i].type == T4_PKT_RET && !k->p[i].copy)
			r[n++] = &k->p[i].ret;
	/* stable by domain: a merge sort keeps the order within a domain */
	for (size_t w = 1; w < n; w *= 2) {
		const struct t4_ret_pkt **t = malloc(n * sizeof(*t));
		if (!t)
			abort();
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, o = lo;
			while (a < mid || b < hi)
				t[o++] = (b >= hi || (a < mid && cmp_ret(&r[a], &r[b]) <= 0)) ? r[a++]
											: r[b++];
		}
		memcpy(r, t, n * sizeof(*t));
		free(t);
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && r[j]->domain_id == r[i]->domain_id)
			j++;
		floor_domain(f, r + i, j - i);
		i = j;
	}
	/* reference packets: trigger step, ref second order, offsets */
	for (size_t i = 0, prev = SIZE_MAX; i < k->n; i++) {
		const struct t4_ref_pkt *a;
		if (k->p[i].type != T4_PKT_REF || k->p[i].copy)
			continue;
		a = &k->p[i].ref;
		if (prev != SIZE_MAX && k->p[prev].ref.sched_id == a->sched_id) {
			const struct t4_ref_pkt *b = &k->p[prev].ref;
			uint64_t id = (uint64_t)a->sched_id << 8 | 2ull << 40;
			residual(f, id | 0, a->trigger_id - b->trigger_id - 1);
			residual(f, id | 1, (a->mono_ns - a->ref_ns) - (b->mono_ns - b->ref_ns));
			residual(f, id | 2, (a->real_ns - a->ref_ns) - (b->real_ns - b->ref_ns));
		}
		prev = i;
	}
	free(r);
}

/* Bits by the bit-length model; bytes by zstd -19 of the varints; bytes of
 * the residuals Rice coded and PFor coded. */
static void floor_totals(struct floor *f, double *ent_bytes, double *zstd_bytes,
			 double *rice_bytes, double *pfor_bytes)
{
	double bits = 0, rice = 0, pfor = 0;
	size_t all = 0, off = 0, cap, z;
	uint8_t *cat, *out;

	for (size_t i = 0; i < f->n; i++) {
		uint64_t tot = 0;
		for (int b = 0; b <= 64; b++)
			tot += f->s[i].hist[b];
		for (int b = 0; b <= 64; b++) {
			double c = (double)f->s[i].hist[b];
			if (c)
				bits += c * (-log2(c / (double)tot) + (b > 1 ? b - 1 : 0));
		}
		all += f->s[i].vlen;
		pfor_flush(&f->s[i]);
		rice += (double)f->s[i].rice_bits;
		pfor += (double)f->s[i].pfor_bits;
	}
	*ent_bytes = bits / 8;
	*rice_bytes = rice / 8;
	*pfor_bytes = pfor / 8;
	cat = malloc(all ? all : 1);
	cap = ZSTD_compressBound(all);
	out = malloc(cap);
	if (!cat || !out)
		abort();
	for (size_t i = 0; i < f->n; i++) {
		memcpy(cat + off, f->s[i].vbuf, f->s[i].vlen);
		off += f->s[i].vlen;
	}
	z = ZSTD_compress(out, cap, cat, all, 19);
	*zstd_bytes = ZSTD_isError(z) ? (double)all : (double)z;
	free(cat);
	free(out);
}

/* ---- the residuals coded for real: decode speed ------------------------ */

static uint64_t unzz(uint64_t v)
{
	return (v >> 1) ^ (0 - (v & 1));
}

/* A stream's residuals (zigzagged) from its varints. */
static void stream_values(const struct stream *s, uint64_t *v)
{
	for (size_t i = 0, n = 0; i < s->vlen; n++) {
		uint64_t x = 0;
		for (unsigned sh = 0;; sh += 7) {
			x |= (uint64_t)(s->vbuf[i] & 0x7f) << sh;
			if (!(s->vbuf[i++] & 0x80))
				break;
		}
		v[n] = x;
	}
}

struct bw { /* bit writer, LSB first (5a.2) */
	uint8_t *p;
	uint64_t buf;
	unsigned n; /* bits in buf, < 8 between calls */
};

/* The k <= 64 low bits of v. */
static void bw_put(struct bw *w, uint64_t v, unsigned k)
{
	if (k > 32) {
		bw_put(w, v, 32);
		v >>= 32;
		k -= 32;
	}
	w->buf |= (v & ((1ull << k) - 1)) << w->n;
	w->n += k;
	for (; w->n >= 8; w->n -= 8, w->buf >>= 8)
		*w->p++ = (uint8_t)w->buf;
}

/* Bits written since start; the last byte flushed. */
static uint64_t bw_end(struct bw *w, const uint8_t *start)
{
	uint64_t bits = (uint64_t)(w->p - start) * 8 + w->n;

	if (w->n)
		*w->p++ = (uint8_t)w->buf;
	return bits;
}

/* res() as a writer codes it (5a.2), s = 0. */
static void rice_put(struct bw *w, struct rice *st, uint64_t v)
{
	unsigned k = rice_k(st);

	if ((v >> k) < RICE_ESC) {
		bw_put(w, (1ull << (v >> k)) - 1, (unsigned)(v >> k) + 1); /* q 1s, a 0 */
		bw_put(w, v, k);
	} else {
		bw_put(w, (1ull << RICE_ESC) - 1, RICE_ESC);
		bw_put(w, bitlen(v), RAW_LEN_BITS);
		bw_put(w, v, bitlen(v));
	}
	rice_feed(st, v);
}

static uint64_t rice_encode(uint8_t *out, const uint64_t *v, size_t n)
{
	struct bw w = { .p = out };
	struct rice st = { 0 };

	for (size_t i = 0; i < n; i++)
		rice_put(&w, &st, v[i]);
	return bw_end(&w, out);
}

/* A block: b, the exceptions, [their high bits' width - 1], the n values'
 * low b bits, then each exception's position and high bits. */
static void pfor_put(struct bw *w, const uint64_t *v, uint32_t n)
{
	uint32_t h[65] = { 0 };
	struct pfor_plan p;

	for (uint32_t i = 0; i < n; i++)
		h[bitlen(v[i])]++;
	p = pfor_plan(h, n);
	bw_put(w, p.b, PFOR_WIDTH);
	bw_put(w, p.e, PFOR_COUNT);
	if (p.e)
		bw_put(w, p.top - p.b - 1, PFOR_HIGH);
	for (uint32_t i = 0; i < n; i++)
		bw_put(w, v[i], p.b);
	for (uint32_t i = 0; i < n; i++) {
		if (v[i] >> p.b) {
			bw_put(w, i, PFOR_POS);
			bw_put(w, v[i] >> p.b, p.top - p.b);
		}
	}
}

static uint64_t pfor_encode(uint8_t *out, const uint64_t *v, size_t n)
{
	struct bw w = { .p = out };

	for (size_t i = 0; i < n; i += PFOR_BLOCK)
		pfor_put(&w, v + i, n - i < PFOR_BLOCK ? (uint32_t)(n - i) : PFOR_BLOCK);
	return bw_end(&w, out);
}

/* The Rice reader: codec2.c's get_res() in small (a 64-bit buffer, a ctz
 * for the unary part, three shifts for the rest when the code fits). */
struct rd { /* bit reader, LSB first, over a stream followed by PAD zero bytes */
	const uint8_t *p;
	uint64_t buf; /* n bits, then the stream's next bits or 0 */
	unsigned n;   /* <= 63 */
	uint64_t v;   /* rice_slow's value */
};

/* Top the buffer up to 56..63 bits: one unaligned load (codec2.c's br_fill). */
static inline void rd_fill(struct rd *r)
{
	r->buf |= t4_get_le64(r->p) << r->n;
	r->p += (63 - r->n) >> 3;
	r->n |= 56;
}

/* k <= 56 bits. */
static inline uint64_t rd_get(struct rd *r, unsigned k)
{
	uint64_t v;

	if (r->n < k)
		rd_fill(r);
	v = r->buf & ((1ull << k) - 1);
	r->buf >>= k;
	r->n -= k;
	return v;
}

/* A code that is an escape, does not fit the buffer or has k > K_FAST: out
 * of line, the reader by value (its address never escapes the hot loop). */
static __attribute__((noinline)) struct rd rice_slow(struct rd r, unsigned k)
{
	unsigned q, len;

	rd_fill(&r);
	q = (unsigned)__builtin_ctzll(~r.buf | 1ull << RICE_ESC);
	r.buf >>= q + (q < RICE_ESC);
	r.n -= q + (q < RICE_ESC);
	if (q < RICE_ESC) {
		r.v = (uint64_t)q << k | rd_get(&r, k);
		return r;
	}
	len = (unsigned)rd_get(&r, RAW_LEN_BITS);
	len = len < 64 ? len : 64;
	r.v = rd_get(&r, len < 32 ? len : 32);
	if (len > 32)
		r.v |= rd_get(&r, len - 32) << 32;
	return r;
}

/* n residuals into values: out[i] = out[i - 1] + unzz(residual). */
static void rice_decode(const uint8_t *code, uint64_t *out, size_t n)
{
	struct rd r = { .p = code };
	uint64_t m, prev;
	unsigned k;

	if (!n)
		return;
	r = rice_slow(r, 0); /* the first: k = 0, m = 4u */
	m = 4 * (r.v < RICE_CAP ? r.v : RICE_CAP);
	prev = out[0] = unzz(r.v);
	for (size_t i = 1; i < n; i++) {
		unsigned q, len;
		uint64_t t, v, u;

		k = 61 - (unsigned)__builtin_clzll(m | 7); /* bitlen(m) - 3, >= 0 */
		q = (unsigned)__builtin_ctzll(~r.buf | 1ull << RICE_ESC);
		len = q + 1 + k;
		if (unlikely(len > r.n)) {
			rd_fill(&r);
			q = (unsigned)__builtin_ctzll(~r.buf | 1ull << RICE_ESC);
			len = q + 1 + k;
		}
		if (unlikely(q == RICE_ESC || len > r.n || k > K_FAST)) {
			r = rice_slow(r, k);
			v = r.v;
			u = v < RICE_CAP ? v : RICE_CAP;
		} else { /* v = q 2^k + the k bits after the 0 */
			t = r.buf >> (q + 1);
			r.buf = t >> k;
			v = u = t - ((r.buf - q) << k);
			r.n -= len;
		}
		m = m - (m >> 2) + u;
		prev += unzz(v);
		out[i] = prev;
	}
}

/* The k <= 57 bits at bit pos. */
static inline uint64_t bits_at(const uint8_t *p, uint64_t pos, unsigned k)
{
	return (t4_get_le64(p + (pos >> 3)) >> (pos & 7)) & ((1ull << k) - 1);
}

static inline uint64_t bits_at64(const uint8_t *p, uint64_t pos, unsigned k)
{
	if (k <= 57)
		return bits_at(p, pos, k);
	return bits_at(p, pos, 32) | bits_at(p, pos + 32, k - 32) << 32;
}

/* n values of b bits from bit pos. */
static inline void unpack(const uint8_t *p, uint64_t pos, unsigned b, uint64_t *out, uint32_t n)
{
	if (unlikely(b > 57)) {
		for (uint32_t i = 0; i < n; i++)
			out[i] = bits_at64(p, pos + (uint64_t)i * b, b);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		out[i] = bits_at(p, pos + (uint64_t)i * b, b);
}

/* A block of n values into out (which has room for PFOR_BLOCK), after prev;
 * returns the bit after it. */
static uint64_t pfor_block(const uint8_t *p, uint64_t pos, uint64_t *out, uint32_t n,
			   uint64_t *prev)
{
	unsigned b = (unsigned)bits_at(p, pos, PFOR_WIDTH);
	unsigned e = (unsigned)bits_at(p, pos + PFOR_WIDTH, PFOR_COUNT), high = 0;
	uint64_t sum = *prev;

	pos += PFOR_HEADER;
	if (e) {
		high = (unsigned)bits_at(p, pos, PFOR_HIGH) + 1;
		pos += PFOR_HIGH;
	}
	unpack(p, pos, b, out, n);
	pos += (uint64_t)n * b;
	for (unsigned j = 0; j < e; j++, pos += PFOR_POS + high)
		out[bits_at(p, pos, PFOR_POS)] |= bits_at64(p, pos + PFOR_POS, high) << b;
	for (uint32_t i = 0; i < n; i++)
		out[i] = sum += unzz(out[i]);
	*prev = sum;
	return pos;
}

static void pfor_decode(const uint8_t *code, uint64_t *out, size_t n)
{
	uint64_t pos = 0, prev = 0;

	for (size_t i = 0; i < n; i += PFOR_BLOCK)
		pos = pfor_block(code, pos, out + i, n - i < PFOR_BLOCK ? (uint32_t)(n - i) : PFOR_BLOCK,
				 &prev);
}

struct speed {
	uint64_t residuals, rice_bits, pfor_bits;
	double rice_s, pfor_s; /* decoding every stream, each the fastest of REPEATS */
};

/* A stream decoded REPEATS times, the fastest timed; each run checked
 * against its residuals v, untimed: a decoder that is wrong is an error. */
static double decode_stream(const struct stream *s, const uint8_t *code, bool pfor,
			    const uint64_t *v, uint64_t *out)
{
	double best = 1e9;

	for (int r = 0; r < REPEATS; r++) {
		uint64_t prev = 0;
		double t0 = wall_now();
		if (pfor)
			pfor_decode(code, out, s->n);
		else
			rice_decode(code, out, s->n);
		best = fmin(best, wall_now() - t0);
		for (size_t j = 0; j < s->n; j++) {
			prev += unzz(v[j]);
			if (out[j] != prev) {
				fprintf(stderr, "bench_codec: stream %llx: %s decoded value %zu wrong\n",
					(unsigned long long)s->key, pfor ? "PFor" : "Rice", j);
				exit(1);
			}
		}
	}
	return best;
}

/* A code's bits must be what floor_totals counted. */
static void sized(const struct stream *s, const char *code, uint64_t bits, uint64_t model)
{
	if (bits != model) {
		fprintf(stderr, "bench_codec: stream %llx: %s coded in %llu bits, not %llu\n",
			(unsigned long long)s->key, code, (unsigned long long)bits,
			(unsigned long long)model);
		exit(1);
	}
}

/* After floor_totals: each stream coded both ways (in the bits it counted:
 * else an error) and decoded, timed. */
static struct speed speed_log(struct floor *f)
{
	struct speed sp = { 0 };
	size_t most = 0;
	uint64_t *v, *out, code_most = 0;
	uint8_t *code;

	for (size_t i = 0; i < f->n; i++) {
		struct stream *s = &f->s[i];
		s->n = 0;
		for (int b = 0; b <= 64; b++)
			s->n += s->hist[b];
		most = s->n > most ? s->n : most;
		code_most = s->rice_bits > code_most ? s->rice_bits : code_most;
		code_most = s->pfor_bits > code_most ? s->pfor_bits : code_most;
	}
	v = malloc((most + PFOR_BLOCK) * sizeof(*v));
	out = malloc((most + PFOR_BLOCK) * sizeof(*out));
	code = malloc(code_most / 8 + 1 + PAD);
	if (!v || !out || !code)
		abort();
	for (size_t i = 0; i < f->n; i++) {
		const struct stream *s = &f->s[i];
		stream_values(s, v);
		memset(code, 0, code_most / 8 + 1 + PAD);
		sized(s, "Rice", rice_encode(code, v, s->n), s->rice_bits);
		sp.rice_s += decode_stream(s, code, false, v, out);
		memset(code, 0, code_most / 8 + 1 + PAD);
		sized(s, "PFor", pfor_encode(code, v, s->n), s->pfor_bits);
		sp.pfor_s += decode_stream(s, code, true, v, out);
		sp.residuals += s->n;
		sp.rice_bits += s->rice_bits;
		sp.pfor_bits += s->pfor_bits;
	}
	free(v);
	free(out);
	free(code);
	return sp;
}

/* ---- the formats -------------------------------------------------------- */

static bool is_trigger(const struct t4_packet *p)
{
	return p->type == T4_PKT_REF || p->type == T4_PKT_RET;
}

/* The chunk's packets coded again (only its trigger packets: what the
 * floor is of, without the metadata and its copies). */
static size_t encode_chunk(struct t4_codec *c, unsigned version, const struct pkts *k,
			   uint8_t *raw, bool triggers_only)
{
	size_t len = 0;

	t4_codec_start(c, version);
	for (size_t i = 0; i < k->n; i++) {
		if (triggers_only && !is_trigger(&k->p[i]))
			continue;
		int n = t4_codec_encode(c, &k->p[i], raw + len, T4_CHUNK_MAX_RAW - len);
		if (n < 0) {
			t4_report(n);
			exit(1);
		}
		len += (size_t)n;
	}
	return len + t4_codec_flush(c, raw + len, T4_CHUNK_MAX_RAW - len);
}

static void read_chunk(struct t4_codec *c, unsigned version, const uint8_t *comp, size_t clen,
		       uint8_t *raw, size_t rlen, ZSTD_DCtx *dctx, uint64_t *sum)
{
	struct t4_packet p;
	size_t pos = 0;

	if (t4_crc32c(0, comp, clen) == 1)
		*sum += 1;
	if (ZSTD_decompressDCtx(dctx, raw, rlen, comp, clen) != rlen)
		abort();
	t4_codec_start(c, version);
	while (pos < rlen) {
		int n = t4_codec_decode(c, raw + pos, rlen - pos, &p);
		if (n < 0)
			abort();
		pos += (size_t)n;
		if (p.type == T4_PKT_RET && p.ret.n_counts)
			*sum += p.ret.counts[0];
	}
}

struct ctx {
	int levels[MAX_LEVELS], n_levels;
	struct t4_codec *c;
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	uint8_t *raw, *comp, *back;
	size_t comp_cap;
	struct fmt_result f[FORMATS];
	struct floor fl;
	uint64_t sum;
	struct speed_row { /* the second table's, one per log */
		const char *path;
		uint64_t values;
		struct speed sp;
	} *rows;
	int n_rows;
};

static void chunk(struct ctx *x, const struct pkts *k)
{
	for (unsigned v = 1; v <= FORMATS; v++) {
		struct fmt_result *r = &x->f[v - 1];
		double best = 1e9, t0;
		size_t len = 0, clen = 0;

		for (int i = 0; i < REPEATS; i++) {
			t0 = wall_now();
			len = encode_chunk(x->c, v, k, x->raw, false);
			best = fmin(best, wall_now() - t0);
		}
		clen = encode_chunk(x->c, v, k, x->comp, true);
		r->trig += T4_CHUNK_HDR_SIZE + ZSTD_compressCCtx(x->cctx, x->back, x->comp_cap,
								 x->comp, clen, x->levels[0]);
		r->enc_s += best;
		r->raw += len;
		for (int l = 0; l < x->n_levels; l++) {
			best = 1e9;
			for (int i = 0; i < (l ? 1 : REPEATS); i++) {
				t0 = wall_now();
				clen = ZSTD_compressCCtx(x->cctx, x->comp, x->comp_cap, x->raw, len,
							 x->levels[l]);
				best = fmin(best, wall_now() - t0);
			}
			r->zstd_s[l] += best;
			r->file[l] += T4_CHUNK_HDR_SIZE + clen;
			if (l == 0) { /* read back the first level's */
				best = 1e9;
				for (int i = 0; i < REPEATS; i++) {
					t0 = wall_now();
					read_chunk(x->c, v, x->comp, clen, x->back, len, x->dctx,
						   &x->sum);
					best = fmin(best, wall_now() - t0);
				}
				r->read_s += best;
			}
		}
	}
	floor_chunk(&x->fl, k);
}

static int bench_log(struct ctx *x, const char *path)
{
	struct t4_reader *rd;
	struct t4_reader_stats st;
	struct pkts k = { 0 };
	uint64_t chunks = 0, values = 0;
	int rc;

	memset(x->f, 0, sizeof(x->f));
	for (size_t i = 0; i < x->fl.n; i++)
		free(x->fl.s[i].vbuf);
	x->fl.n = 0;
	x->fl.values = 0;
	if ((rc = t4_reader_open(&rd, path, NULL, NULL)) < 0)
		return rc;
	for (;;) {
		if (k.n == k.cap) {
			k.cap = k.cap ? 2 * k.cap : 4096;
			k.p = realloc(k.p, k.cap * sizeof(*k.p));
			if (!k.p)
				abort();
		}
		rc = t4_reader_next(rd, &k.p[k.n]);
		t4_reader_stats(rd, &st);
		if (rc <= 0 || st.chunks != chunks) { /* a chunk ended */
			if (k.n)
				chunk(x, &k);
			if (rc > 0)
				k.p[0] = k.p[k.n];
			k.n = rc > 0;
			chunks = st.chunks;
		} else {
			k.n++;
		}
		if (rc <= 0)
			break;
		if (k.p[k.n - 1].type == T4_PKT_RET && !k.p[k.n - 1].copy)
			values += k.p[k.n - 1].ret.n_counts;
	}
	t4_reader_close(rd);
	free(k.p);
	if (rc < 0)
		return rc;
	double ent, zst, fl, rice, pfor;
	floor_totals(&x->fl, &ent, &zst, &rice, &pfor);
	fl = ent < zst ? ent : zst;
	x->rows[x->n_rows++] = (struct speed_row){ path, values, speed_log(&x->fl) };
	printf("| %s | %llu | %llu |", path, (unsigned long long)chunks,
	       (unsigned long long)values);
	for (int v = 0; v < FORMATS; v++) {
		const struct fmt_result *r = &x->f[v];
		for (int l = 0; l < x->n_levels; l++)
			printf(" %.3f |", (double)r->file[l] / (double)values);
		printf(" %.1f | %.1f | %.1f |", r->enc_s * 1e9 / (double)values,
		       (r->enc_s + r->zstd_s[0]) * 1e9 / (double)values,
		       r->read_s * 1e9 / (double)values);
	}
	printf(" %.3f | %.3f | %.2fx | %.2fx | %.3f / %.3f | %.2fx / %.2fx | %.3f | %.3f |\n",
	       ent / (double)values, zst / (double)values, (double)x->f[1].file[0] / fl,
	       (double)x->f[2].file[0] / fl, (double)x->f[1].trig / (double)values,
	       (double)x->f[2].trig / (double)values, (double)x->f[1].trig / fl,
	       (double)x->f[2].trig / fl, rice / (double)values, pfor / (double)values);
	fflush(stdout);
	return 0;
}

/* The second table: the residuals' codes decoded (speed_log), per counter
 * value as the first table (the clock and reference streams' time and bits
 * included). */
static void print_speed(const struct ctx *x)
{
	printf("\n| log | values | residuals | Rice bits/value | PFor bits/value "
	       "| Rice decode ns/value | Rice M values/s | PFor decode ns/value "
	       "| PFor M values/s | PFor speed-up |\n|");
	for (int i = 0; i < 10; i++)
		printf("---|");
	printf("\n");
	for (int i = 0; i < x->n_rows; i++) {
		const struct speed_row *r = &x->rows[i];
		double n = (double)r->values;
		printf("| %s | %llu | %llu | %.3f | %.3f | %.2f | %.1f | %.2f | %.1f | %.2fx |\n",
		       r->path, (unsigned long long)r->values,
		       (unsigned long long)r->sp.residuals, (double)r->sp.rice_bits / n,
		       (double)r->sp.pfor_bits / n, r->sp.rice_s * 1e9 / n, n / r->sp.rice_s / 1e6,
		       r->sp.pfor_s * 1e9 / n, n / r->sp.pfor_s / 1e6, r->sp.rice_s / r->sp.pfor_s);
	}
}

/* Everything main allocated (so that a sanitizer's leak check is quiet). */
static void ctx_free(struct ctx *x)
{
	for (size_t i = 0; i < x->fl.n; i++)
		free(x->fl.s[i].vbuf);
	free(x->fl.s);
	free(x->rows);
	free(x->raw);
	free(x->back);
	free(x->comp);
	t4_codec_free(x->c);
	ZSTD_freeCCtx(x->cctx);
	ZSTD_freeDCtx(x->dctx);
}

int main(int argc, char **argv)
{
	struct ctx x = { .levels = { 1, 3, 19 }, .n_levels = 3 };
	int opt;

	while ((opt = getopt(argc, argv, "l:")) != -1) {
		char *s = optarg, *end;
		x.n_levels = 0;
		while (*s && x.n_levels < MAX_LEVELS) {
			x.levels[x.n_levels++] = (int)strtol(s, &end, 10);
			s = *end == ',' ? end + 1 : end;
			if (end == s && *s)
				break;
		}
		if (!x.n_levels) {
			fprintf(stderr, "usage: %s [-l L1,L2,...] LOG...\n", argv[0]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: %s [-l L1,L2,...] LOG...\n", argv[0]);
		return 2;
	}
	x.c = t4_codec_new();
	x.cctx = ZSTD_createCCtx();
	x.dctx = ZSTD_createDCtx();
	x.comp_cap = ZSTD_compressBound(T4_CHUNK_MAX_RAW);
	x.raw = malloc(T4_CHUNK_MAX_RAW);
	x.back = malloc(x.comp_cap); /* a chunk, or one compressed */
	x.comp = malloc(x.comp_cap);
	x.fl.s = calloc(STREAMS_MAX, sizeof(*x.fl.s));
	x.rows = calloc((size_t)(argc - optind), sizeof(*x.rows));
	if (!x.c || !x.cctx || !x.dctx || !x.raw || !x.back || !x.comp || !x.fl.s || !x.rows)
		return t4_report(-ENOMEM);
	printf("| log | chunks | values |");
	for (int v = 1; v <= FORMATS; v++) {
		for (int l = 0; l < x.n_levels; l++)
			printf(" format %d B/value, zstd %d |", v, x.levels[l]);
		printf(" format %d encode ns/value | + zstd %d | read ns/value |", v, x.levels[0]);
	}
	printf(" floor: entropy B/value | floor: zstd -19 of the residuals | format 2 x floor "
	       "| format 3 x floor | trigger packets alone B/value, format 2 / 3 | their x floor "
	       "| residuals Rice coded B/value | residuals PFor coded B/value |\n|");
	for (int i = 0; i < 3 + FORMATS * (x.n_levels + 3) + 8; i++)
		printf("---|");
	printf("\n");
	for (int i = optind; i < argc; i++) {
		int rc = bench_log(&x, argv[i]);
		if (rc < 0) {
			ctx_free(&x);
			return t4_report(rc);
		}
	}
	print_speed(&x);
	if (x.sum == 42)
		printf("\n");
	ctx_free(&x);
	return 0;
}
