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
 * blocks of 128 at the cheapest width, exceptions' high bits and positions
 * apart), what issue 19 proposed.
 *
 * usage: bench_codec [-l L1,L2,...] LOG...
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
#define PFOR_BLOCK 128
#define PFOR_HEADER 14 /* bits: the width (6), the exceptions (8) */
#define PFOR_POS 7     /* bits: an exception's position in its block */

__extension__ typedef unsigned __int128 u128;

struct pkts {
	struct t4_packet *p;
	size_t n, cap;
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
	 * b, an exception's high bits and its position apart) */
	uint64_t rice_m, rice_bits, pfor_bits;
	bool rice_has;
	uint32_t blk_n, blk_hist[65];
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

/* Format 2's res() with its adaptive parameter (FORMAT.md 5a.2), s = 0. */
static void rice_add(struct stream *s, uint64_t v)
{
	unsigned k = s->rice_has && bitlen(s->rice_m) > 3 ? bitlen(s->rice_m) - 3 : 0;
	uint64_t u = v < (1ull << 56) ? v : 1ull << 56;

	k = k < 56 ? k : 56;
	s->rice_bits += (v >> k) < 12 ? (v >> k) + 1 + k : 12 + 7 + bitlen(v);
	s->rice_m = s->rice_has ? s->rice_m - (s->rice_m >> 2) + u : 4 * u;
	s->rice_has = true;
}

/* A block of PFor at the width that costs least. */
static void pfor_flush(struct stream *s)
{
	uint64_t best = UINT64_MAX;

	if (!s->blk_n)
		return;
	for (unsigned b = 0; b <= 64; b++) {
		uint64_t bits = PFOR_HEADER + (uint64_t)s->blk_n * b;
		for (unsigned l = b + 1; l <= 64; l++)
			bits += (uint64_t)s->blk_hist[l] * (PFOR_POS + l - b);
		best = bits < best ? bits : best;
	}
	s->pfor_bits += best;
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
};

#define REPEATS 3 /* each timing the fastest of 3: the machine is shared */

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
	if (!x.c || !x.cctx || !x.dctx || !x.raw || !x.back || !x.comp || !x.fl.s)
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
		if (rc < 0)
			return t4_report(rc);
	}
	if (x.sum == 42)
		printf("\n");
	return 0;
}
