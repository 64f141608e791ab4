/* test_codec2.c - formats 2's and 3's coding of trigger packets (suite
 * "codec2", docs/FORMAT.md 5a; format 3's quiet records and seeded first
 * records, 5a.8, in both where it matters): batches round trip every
 * packet exactly (random
 * fields, extremes, keys without state, counts that grow and shrink,
 * batches larger than the writer's scratch), in the order they came; the
 * coder's predictions earn what they promise (steady clocks and rates cost
 * a few bits, a granularity costs nothing); damaged batches fail cleanly,
 * and a batch cut at any byte gives exactly its packets before the cut (the
 * decoder's fast bit reader at the end of the stream); monitors at work
 * take every path of the record decoder (its fast paths for keys with a
 * history and records that are not quiet, and the general ones) and come
 * back exactly; and a log written in format 1 and in format 2 reads back
 * the same.
 */
#include "packets_testutil.h"
#include "cli_testutil.h"
#include "probe.h"

#include <errno.h>
#include <stdio.h>

#define PAYLOAD_MAX (8u << 20)

/* Packets encoded in format 2 or 3 as one chunk's payload. */
struct pay {
	struct t4_codec *c;
	uint8_t *b;
	size_t len;
	unsigned version;
};

static void pay_init(struct pay *y, unsigned version)
{
	y->c = t4_codec_new();
	y->b = malloc(PAYLOAD_MAX);
	y->len = 0;
	y->version = version;
	cr_assert(y->c && y->b && t4_codec_start(y->c, version) == 0);
	cr_assert_eq(t4_codec_version(y->c), version);
}

static void pay_add(struct pay *y, const struct t4_packet *p)
{
	int n = t4_codec_encode(y->c, p, y->b + y->len, PAYLOAD_MAX - y->len);

	cr_assert_geq(n, 0, "encode type %u: %s", p->type, t4_errmsg());
	y->len += (size_t)n;
}

/* The end of the chunk: the open batch written, the state reset. */
static void pay_end(struct pay *y)
{
	y->len += t4_codec_flush(y->c, y->b + y->len, PAYLOAD_MAX - y->len);
	cr_assert_eq(t4_codec_pending(y->c), 0u);
}

static void pay_free(struct pay *y)
{
	t4_codec_free(y->c);
	free(y->b);
}

/* Decode a payload; the packets into out[0..cap). Returns how many, or -1
 * at the first malformed packet. */
static long decode_all(unsigned version, const uint8_t *b, size_t len, struct t4_packet *out,
		       size_t cap)
{
	/* one codec, started afresh each call as the reader does per chunk (a
	 * new one each call cost the damage tests a minute under ASan, which
	 * clears its megabytes of key state on every calloc) */
	static struct t4_codec *c;
	struct t4_packet scratch;
	size_t off = 0, n = 0;
	long guard = 0;

	if (!c)
		c = t4_codec_new();
	cr_assert(c && t4_codec_start(c, version) == 0);
	while (off < len) {
		struct t4_packet *p = n < cap ? &out[n] : &scratch;
		int k = t4_codec_decode(c, b + off, len - off, p);
		if (k < 0)
			return -1;
		off += (size_t)k;
		n++;
		cr_assert_lt(++guard, 100000000, "decoding does not end");
	}
	return (long)n;
}

static void expect_same(const struct pay *y, const struct t4_packet *exp, size_t n)
{
	struct t4_packet *got = malloc((n + 1) * sizeof(*got));
	long m;

	cr_assert(got);
	m = decode_all(y->version, y->b, y->len, got, n + 1);
	cr_assert_eq(m, (long)n, "%ld packets decoded, %zu written (%s)", m, n, t4_errmsg());
	for (size_t i = 0; i < n; i++)
		cr_assert(tu_pkt_eq(&exp[i], &got[i]), "packet %zu (type %u) differs", i,
			  exp[i].type);
	free(got);
}

/* Every field random (extremes, keys with and without state, 0..64
 * counts, every metadata type and copies between them): each chunk's
 * packets come back exactly and in order, a batch's packets but its last
 * consuming no bytes. */
static void roundtrip_random(unsigned version)
{
	struct t4_packet *exp = malloc(3000 * sizeof(*exp));
	uint64_t s = 19;
	struct pay y;

	cr_assert(exp);
	pay_init(&y, version);
	for (int chunk = 0; chunk < 40; chunk++) {
		size_t n = 1 + tu_below(&s, 2999);
		y.len = 0;
		t4_codec_reset(y.c);
		for (size_t i = 0; i < n; i++) {
			/* mostly trigger packets: long batches between the others */
			uint32_t t = tu_below(&s, 4) ? (tu_below(&s, 3) ? T4_PKT_RET : T4_PKT_REF)
						     : tu_type(&s);
			tu_random_packet(&s, t, &exp[i]);
			exp[i].copy = t != T4_PKT_STATUS && t < T4_PKT_REF && tu_below(&s, 3) == 0;
			pay_add(&y, &exp[i]);
		}
		pay_end(&y);
		expect_same(&y, exp, n);
	}
	pay_free(&y);
	free(exp);
}

Test(codec2, roundtrip_random_through_batches)
{
	roundtrip_random(2);
	roundtrip_random(3);
}

/* A domain whose clock, windows and counters do everything at once:
 * counters going down and wrapping, n_counts growing and shrinking, flags
 * changing, huge and zero deltas, keys at the edges of the state table. */
static void roundtrip_extremes(unsigned version)
{
	static const uint64_t vals[] = { 0, UINT64_MAX, 1, UINT64_MAX, 0, 1ull << 63, 5, 3,
					 1ull << 32, (1ull << 32) - 1 };
	static const uint32_t ns[] = { 0, 64, 1, 64, 3, 0, 64, 2, 5, 5 };
	static const uint32_t doms[] = { 0, 4095, 4096, UINT32_MAX };
	size_t nv = T4_ARRAY_LEN(vals), n = 0;
	struct t4_packet *exp = calloc(4 * 3 * 10 * 2, sizeof(*exp));
	struct pay y;

	cr_assert(exp);
	pay_init(&y, version);
	for (size_t rep = 0; rep < 3; rep++)
		for (size_t d = 0; d < T4_ARRAY_LEN(doms); d++)
			for (size_t k = 0; k < nv; k++) {
				struct t4_packet *p = &exp[n++];
				p->type = T4_PKT_RET;
				p->ret.domain_id = doms[d];
				p->ret.trigger_id = vals[(k + 3) % nv] + rep;
				p->ret.local_clock = vals[k] * (rep + 1);
				p->ret.read_begin_ns = vals[(k + 1) % nv];
				p->ret.read_end_ns = vals[(k + 2) % nv];
				p->ret.flags = k % 2 ? T4_RET_MULTIPLEXED : UINT32_MAX & ~T4_RET_MULTIPLEXED;
				p->ret.enabled_delta = k % 2 ? vals[k] : 0;
				p->ret.running_delta = k % 2 ? ~vals[k] : 0;
				p->ret.n_counts = ns[k];
				for (uint32_t i = 0; i < p->ret.n_counts; i++)
					p->ret.counts[i] = vals[(k + i + rep) % nv] - i;
				pay_add(&y, p);
				p = &exp[n++]; /* and a reference packet of a scheduler */
				p->type = T4_PKT_REF;
				p->ref = (struct t4_ref_pkt){ vals[k], doms[(d + k) % 4], (uint32_t)k,
							      vals[(k + 1) % nv], vals[(k + 2) % nv],
							      vals[(k + 5) % nv], vals[(k + 7) % nv],
							      (uint32_t)vals[k], (uint32_t)k % 2 };
				pay_add(&y, p);
			}
	pay_end(&y);
	expect_same(&y, exp, n);
	pay_free(&y);
	free(exp);
}

Test(codec2, roundtrip_extremes)
{
	roundtrip_extremes(2);
	roundtrip_extremes(3);
}

/* Residuals of 2^48..2^58, so that the Rice states reach every k up to
 * the largest (56): the decoder's fast path takes codes only while
 * k <= K_FAST (52), where the residual it feeds needs no cap; above, its
 * slow path caps them as the encoder does (5a.2). A state whose k is
 * above K_FAST but taken by the fast path learns uncapped residuals and
 * decodes the next ones wrong. */
static void roundtrip_huge_residuals(unsigned version)
{
	enum { N = 3000 };
	struct t4_packet *exp = calloc(N, sizeof(*exp));
	uint64_t s = 52, begin = 0, local = 0, count[4] = { 0 };
	struct pay y;

	cr_assert(exp);
	pay_init(&y, version);
	for (size_t t = 0; t < N; t++) {
		struct t4_packet *p = &exp[t];
		/* a magnitude that wanders, so that m crosses every k */
		unsigned bits = 48 + (unsigned)(t / 50 % 11);
		p->type = T4_PKT_RET;
		p->ret.domain_id = 7;
		p->ret.trigger_id = t;
		begin += tu_below(&s, 1ull << bits);
		local += tu_below(&s, 1ull << bits);
		p->ret.read_begin_ns = begin;
		p->ret.read_end_ns = begin + tu_below(&s, 1ull << bits);
		p->ret.local_clock = local;
		p->ret.n_counts = 4;
		for (int i = 0; i < 4; i++)
			p->ret.counts[i] = count[i] += tu_below(&s, 1ull << bits);
		pay_add(&y, p);
	}
	pay_end(&y);
	expect_same(&y, exp, N);
	pay_free(&y);
	free(exp);
}

Test(codec2, huge_residuals_round_trip)
{
	roundtrip_huge_residuals(2);
	roundtrip_huge_residuals(3);
}

/* One domain of 32 counters read every 1 ms on the grid (a few us of
 * jitter), its clock at 1.5 GHz; counters at fixed rates, one of them in
 * 64-byte units. Returns the batch bytes per record after the first 100. */
static double steady_bytes(unsigned version, uint64_t jitter, unsigned unit, bool rate)
{
	struct pay y;
	struct t4_packet p = { .type = T4_PKT_RET };
	uint64_t s = 5;
	size_t at100 = 0;
	const int n = 2000;

	pay_init(&y, version);
	p.ret.domain_id = 3;
	p.ret.n_counts = 32;
	for (int t = 0; t < n; t++) {
		uint64_t begin = 1000000000ull + (uint64_t)t * 1000000 + tu_below(&s, jitter + 1);
		uint64_t local = begin * 3 / 2, dl = local - p.ret.local_clock;
		p.ret.trigger_id = (uint64_t)t;
		p.ret.read_begin_ns = begin;
		p.ret.read_end_ns = begin + 700 + tu_below(&s, 64);
		for (int i = 0; i < 32; i++) /* counts: i x 1000 per ms of the clock */
			p.ret.counts[i] = rate ? dl * (uint64_t)i * 2 / 3000 * unit
					       : (uint64_t)i * 1000 * unit;
		p.ret.local_clock = local;
		pay_add(&y, &p);
		if (t == 99)
			at100 = y.len + t4_codec_pending(y.c);
	}
	pay_end(&y);
	pay_free(&y);
	return (double)(y.len - at100) / (n - 100);
}

/* Steady clocks cost a few bits: a record of 32 constant counts on a
 * jitter-free grid is about a bit per field. */
Test(codec2, steady_stream_costs_bits)
{
	double b = steady_bytes(2, 0, 1, false), q = steady_bytes(3, 0, 1, false);

	cr_assert_lt(b, 6.0, "%.2f bytes per record of 32 constant counts", b);
	/* format 3: a record whose every field is as predicted is its one
	 * quiet bit (5a.8) */
	cr_assert_lt(q, b / 3, "format 3: %.2f bytes per record of 32 constant counts, format "
		     "2: %.2f", q, b);
}

/* Counts that follow the clock (a rate times the elapsed local time, the
 * reads jittered by 3 us): the rate predictor takes the jitter out. */
Test(codec2, counts_follow_the_clock)
{
	double b = steady_bytes(3, 3000, 1, true);

	/* 3 us of jitter at 1.5 GHz: 12 bits for the local clock and the
	 * begin, and 32 counts predicted to within a unit or two */
	cr_assert_lt(b, 20.0, "%.2f bytes per record", b);
}

/* Counts in 64-byte units cost what counts in units cost. */
Test(codec2, granularity_is_free)
{
	double one = steady_bytes(3, 3000, 1, true), g = steady_bytes(3, 3000, 64, true);

	cr_assert_lt(g, one * 1.05 + 0.5, "units of 64: %.2f, units of 1: %.2f", g, one);
}

/* Monitors at work, where every path of the record decoder runs (its
 * specialised fast paths and the general ones, codec2.c): steady records
 * of keys with a history, quiet records (format 3) with some fields left
 * out, keys' first records, keys out of their usual order, skipped
 * triggers, multiplexed records and domains that switch it on and off,
 * events added and dropped, counts that stay 0, follow the clock, jitter
 * with residuals from 0 to 2^64 (escapes, Rice parameters up to 56) and
 * change granularity (a new block restarts a Rice state, whose next
 * residual takes the slow path): records whose events all predict by rate
 * without a granularity (the count loop's plain path) and others. Every
 * packet comes back exactly. */
static size_t monitor_trigger(uint64_t *s, uint64_t t, struct t4_packet *out)
{
	static const uint32_t events[] = { 1, 3, 4, 8, 2, 5 };
	size_t n = 0;

	out[n] = (struct t4_packet){ .type = T4_PKT_REF };
	out[n].ref = (struct t4_ref_pkt){ .trigger_id = t, .ref_ns = t * 1000000,
					  .mono_ns = t * 1000000 + 7, .real_ns = t * 1000000 + 99,
					  .local_clock = t * 3000000 };
	n++;
	for (uint32_t d = 0; d < T4_ARRAY_LEN(events); d++) {
		struct t4_ret_pkt *r = &out[n].ret;
		uint64_t begin = t * 1000000 + d * 1000 + (d < 2 ? 0 : tu_below(s, 3000));

		out[n] = (struct t4_packet){ .type = T4_PKT_RET };
		*r = (struct t4_ret_pkt){ .domain_id = d, .trigger_id = t, .read_begin_ns = begin,
					  .read_end_ns = begin + 700 + (d == 3 ? tu_below(s, 9) : 0),
					  .local_clock = begin / 2 * (d + 1) };
		if (d == 2 && tu_below(s, 50) == 0)
			r->trigger_id++; /* a trigger it missed */
		if (d == 5 || (d == 4 && t / 300 % 2)) {
			r->flags = T4_RET_MULTIPLEXED;
			r->enabled_delta = 1000000;
			r->running_delta = tu_below(s, 4) ? 1000000 : tu_below(s, 1000000);
		}
		r->n_counts = t / 97 % 5 == 4 ? events[d] + (uint32_t)(t % 3) : events[d];
		for (uint32_t i = 0; i < r->n_counts; i++) {
			switch ((d + i) % 4) {
			case 0: r->counts[i] = i == 1 && tu_below(s, 20) == 0; break;
			case 1: r->counts[i] = begin / 500 * (i + 1); break;
			case 2: r->counts[i] = tu_below(s, 30) ? tu_rand(s) >> (t / 50 % 64) : ~0ull; break;
			default: r->counts[i] = tu_below(s, 1000) << (t / 40 % 8); break;
			}
		}
		n++;
	}
	if (tu_below(s, 30) == 0) { /* two domains read the other way round */
		struct t4_packet tmp = out[2];
		out[2] = out[3];
		out[3] = tmp;
	}
	return n;
}

static void roundtrip_monitors(unsigned version)
{
	const size_t per = 7, triggers = 2500;
	struct t4_packet *exp = malloc(triggers * per * sizeof(*exp));
	uint64_t s = 11;
	struct pay y;

	cr_assert(exp);
	pay_init(&y, version);
	for (int chunk = 0; chunk < 3; chunk++) {
		size_t n = 0;
		y.len = 0;
		t4_codec_reset(y.c);
		for (uint64_t t = (uint64_t)chunk * 1000; t < (uint64_t)chunk * 1000 + triggers; t++) {
			size_t k = monitor_trigger(&s, t, &exp[n]);
			for (size_t i = 0; i < k; i++)
				pay_add(&y, &exp[n + i]);
			n += k;
		}
		pay_end(&y);
		expect_same(&y, exp, n);
	}
	pay_free(&y);
	free(exp);
}

Test(codec2, monitors_round_trip_through_every_record_path)
{
	roundtrip_monitors(2);
	roundtrip_monitors(3);
}

/* More records than the writer's scratch holds: several batches, written
 * in order, the delta state running on across them. */
Test(codec2, long_runs_span_batches)
{
	struct t4_packet *exp = malloc(20000 * sizeof(*exp));
	uint64_t s = 7;
	size_t n = 0, batches = 0;
	struct pay y;

	cr_assert(exp);
	pay_init(&y, T4_FORMAT_VERSION);
	for (uint64_t t = 0; n + 1 + TU_DOMAINS <= 20000; t++) {
		size_t k = tu_trigger_noise(&s, t, 1u << 20, &exp[n]);
		for (size_t i = 0; i < k; i++)
			pay_add(&y, &exp[n + i]);
		n += k;
	}
	pay_end(&y);
	struct t4_codec *c = t4_codec_new();
	for (size_t off = 0; off < y.len; batches++) {
		struct t4_packet q;
		int m;
		cr_assert_eq(y.b[off], 20, "a run of trigger packets is batches only");
		while ((m = t4_codec_decode(c, y.b + off, y.len - off, &q)) == 0)
			;
		cr_assert_gt(m, 0, "%s", t4_errmsg());
		off += (size_t)m;
	}
	t4_codec_free(c);
	cr_assert_geq(batches, 3u, "%zu batches in %zu bytes", batches, y.len);
	expect_same(&y, exp, n);
	pay_free(&y);
	free(exp);
}

/* A hand-made batch packet: type 20, its body. */
static size_t batch(uint8_t *out, const uint8_t *body, size_t len)
{
	out[0] = 20;
	out[1] = (uint8_t)len;
	memcpy(out + 2, body, len);
	return 2 + len;
}

static int decode_one(unsigned version, const uint8_t *b, size_t len, struct t4_packet *p)
{
	struct t4_codec *c = t4_codec_new();
	int rc;

	cr_assert(c && t4_codec_start(c, version) == 0);
	while ((rc = t4_codec_decode(c, b, len, p)) == 0)
		;
	t4_codec_free(c);
	return rc;
}

/* Batches that lie: refused with EBADMSG, never read past their body. */
Test(codec2, malformed_batches_are_refused)
{
	uint8_t b[64];
	struct t4_packet p;
	struct {
		const char *what;
		uint8_t body[12];
		size_t len;
	} bad[] = {
		{ "no record", { 0x00 }, 1 },
		{ "more records than bits", { 0x09, 0xff }, 2 },
		{ "a predicted key with nothing to predict from", { 0x01, 0x01 }, 2 },
		/* explicit return of domain 0, raw flags 0, then raw n_counts 65 */
		{ "65 counts", { 0x01, 0x02, 0x00, 0x87, 0x20 }, 5 },
		/* explicit key whose raw length says 127 bits */
		{ "a raw length above 64", { 0x01, 0xfc, 0xff }, 3 },
		{ "the bits run out", { 0x01, 0x02 }, 2 },
	};

	for (size_t i = 0; i < T4_ARRAY_LEN(bad); i++) {
		size_t n = batch(b, bad[i].body, bad[i].len);
		cr_assert_eq(decode_one(2, b, n, &p), -EBADMSG, "%s", bad[i].what);
	}
	/* format 3: the same with a 0 quiet bit in front (the bits shifted
	 * by one) */
	for (size_t i = 0; i < T4_ARRAY_LEN(bad); i++) {
		uint8_t body[13] = { bad[i].body[0] }, carry = 0;
		for (size_t k = 1; k < bad[i].len; k++) {
			body[k] = (uint8_t)(bad[i].body[k] << 1 | carry);
			carry = bad[i].body[k] >> 7;
		}
		body[bad[i].len] = carry;
		size_t n = batch(b, body, bad[i].len + (carry != 0));
		cr_assert_eq(decode_one(3, b, n, &p), -EBADMSG, "format 3: %s", bad[i].what);
	}
	/* format 3: a quiet record with nothing to predict its key from */
	cr_assert_eq(decode_one(3, b, batch(b, (const uint8_t[]){ 0x01, 0x01 }, 2), &p),
		     -EBADMSG);
	/* format 1's packets of types 16 and 17 have no place in format 2 */
	memcpy(b, "\x11\x03\x00\x00\x00", 5);
	cr_assert_eq(decode_one(2, b, 5, &p), -EBADMSG);
	cr_assert(strstr(t4_errmsg(), "format-2"), "%s", t4_errmsg());
}

/* Every truncation and every single bit flip of a real chunk's batches:
 * decoding ends, with an error or with packets, and never reads outside
 * the buffer (ASan: make check SAN=1). */
static void damaged_batches(unsigned version)
{
	struct t4_packet *exp = malloc(400 * sizeof(*exp)), *got = malloc(800 * sizeof(*got));
	uint64_t s = 3;
	size_t n = 0;
	struct pay y;
	uint8_t *copy;

	cr_assert(exp && got);
	pay_init(&y, version);
	for (uint64_t t = 0; n + 1 + TU_DOMAINS <= 400; t++) {
		size_t k = tu_trigger(&s, t, &exp[n]);
		for (size_t i = 0; i < k; i++)
			pay_add(&y, &exp[n + i]);
		n += k;
	}
	pay_end(&y);
	copy = malloc(y.len);
	cr_assert(copy);
	for (size_t cut = 0; cut < y.len; cut += 1 + cut / 50) {
		uint8_t *tail = malloc(cut ? cut : 1); /* exactly `cut` readable bytes */
		memcpy(tail, y.b, cut);
		cr_assert_lt(decode_all(version, tail, cut, got, 800), (long)n + 1);
		free(tail);
	}
	for (size_t bit = 0; bit < y.len * 8; bit += 7) {
		memcpy(copy, y.b, y.len);
		copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		decode_all(version, copy, y.len, got, 800);
	}
	free(copy);
	pay_free(&y);
	free(exp);
	free(got);
}

/* One test per format: the two run side by side (each is long under ASan). */
Test(codec2, damaged_batches_end_cleanly)
{
	damaged_batches(2);
}

Test(codec2, damaged_format_3_batches_end_cleanly)
{
	damaged_batches(3);
}

/* A batch's body cut to its first `cut` bytes, framed again (type 20, its
 * length) in a buffer of exactly the bytes a reader may read, decoded by c
 * as a new chunk: the packets before the first error go to got[]. Returns
 * how many; *failed says whether decoding stopped at an error. */
static size_t decode_cut(struct t4_codec *c, unsigned version, const uint8_t *body, size_t cut,
			 struct t4_packet *got, size_t cap, bool *failed)
{
	uint8_t *b = malloc(cut + 12), *o = b;
	size_t n = 0, len;
	int rc;

	cr_assert(b && t4_codec_start(c, version) == 0);
	*o++ = 20;
	for (uint64_t v = cut; ; v >>= 7) {
		*o++ = (uint8_t)(v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
		if (v < 0x80)
			break;
	}
	memcpy(o, body, cut);
	len = (size_t)(o - b) + cut;
	while (n < cap && (rc = t4_codec_decode(c, b, len, &got[n])) >= 0) {
		n++;
		if (rc > 0)
			break;
	}
	*failed = rc < 0;
	free(b);
	return n;
}

/* The decoder's bit reader at the end of a batch (8-byte loads while 8
 * bytes are left, then byte by byte; codes longer than what it holds: Rice
 * parameters up to 56 and escapes, from counts near 2^60): a batch cut at
 * every byte decodes exactly its packets before the cut, in order, then
 * fails (its last record lacks bits), and reads nothing past the cut
 * (ASan: make check SAN=1). */
static void cut_batches(unsigned version)
{
	struct t4_packet *exp = malloc(300 * sizeof(*exp)), *got = malloc(300 * sizeof(*got));
	uint64_t s = 5;
	size_t n = 0, hdr, blen, prev = 0;
	struct t4_codec *c = t4_codec_new();
	struct pay y;

	cr_assert(exp && got && c);
	pay_init(&y, version);
	for (uint64_t t = 0; n + 1 + TU_DOMAINS <= 300; t++) {
		size_t k = tu_trigger(&s, t, &exp[n]);
		for (size_t i = 0; i < k; i++) {
			struct t4_ret_pkt *r = &exp[n + i].ret;
			if (exp[n + i].type == T4_PKT_RET && r->n_counts > 8 && t % 3)
				for (uint32_t j = 0; j < 8; j++) /* huge, noisy: k 56, escapes */
					r->counts[j] = (1ull << 60) + tu_below(&s, 1ull << (52 + j));
			pay_add(&y, &exp[n + i]);
		}
		n += k;
	}
	pay_end(&y);
	/* one batch: type 20, its length (a varint), the body */
	cr_assert_eq(y.b[0], 20);
	for (hdr = 1, blen = 0; ; hdr++) {
		blen |= (size_t)(y.b[hdr] & 0x7f) << (7 * (hdr - 1));
		if (!(y.b[hdr] & 0x80))
			break;
	}
	hdr++;
	cr_assert_eq(hdr + blen, y.len, "one batch in the payload");
	for (size_t cut = 1; cut <= blen; cut++) {
		bool failed;
		size_t m = decode_cut(c, version, y.b + hdr, cut, got, 300, &failed);
		cr_assert_eq(failed, cut < blen, "cut at %zu of %zu bytes", cut, blen);
		cr_assert_geq(m, prev, "cut at %zu: %zu packets, %zu at the cut before", cut, m, prev);
		for (size_t i = 0; i < m; i++)
			cr_assert(tu_pkt_eq(&exp[i], &got[i]), "cut at %zu: packet %zu differs", cut, i);
		prev = m;
	}
	cr_assert_eq(prev, n);
	t4_codec_free(c);
	pay_free(&y);
	free(exp);
	free(got);
}

Test(codec2, cut_batches_decode_their_packets_before_the_cut)
{
	cut_batches(2);
	cut_batches(3);
}

/* The same log in format 1 and in format 2 or 3: the reader returns the
 * same packets, and formats 2 and 3 are the smaller files (this log's counts
 * are random noise: only a little smaller). */
static void same_as_format_1(unsigned version)
{
	struct tu_log l1, l2;
	struct t4_packet *e1, *e2, p, q;
	struct t4_reader *r1, *r2;
	size_t n1, n2, n = 0;
	int a, b;

	tu_log_init(&l1);
	tu_log_init(&l2);
	l1.format = 1;
	l2.format = version;
	tu_realistic_log(&l1, 11, 3000, 700, &e1, &n1);
	tu_realistic_log(&l2, 11, 3000, 700, &e2, &n2);
	cr_assert_eq(t4_get_le16(l1.buf + 8), 1);
	cr_assert_eq(t4_get_le16(l2.buf + 8), version);
	cr_assert_eq(t4_reader_open_mem(&r1, l1.buf, l1.len, NULL, NULL), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_reader_open_mem(&r2, l2.buf, l2.len, NULL, NULL), 0, "%s", t4_errmsg());
	while ((a = t4_reader_next(r1, &p)) == 1) {
		b = t4_reader_next(r2, &q);
		cr_assert_eq(b, 1, "format %u ends at packet %zu", version, n);
		cr_assert(tu_pkt_eq(&p, &q), "format %u: packet %zu differs", version, n);
		n++;
	}
	cr_assert_eq(a, 0);
	cr_assert_eq(t4_reader_next(r2, &q), 0);
	cr_assert_eq(n, n1);
	cr_assert_lt(l2.len, l1.len * 9 / 10, "format %u: %zu bytes, format 1: %zu", version,
		     l2.len, l1.len);
	t4_reader_close(r1);
	t4_reader_close(r2);
	free(e1);
	free(e2);
	tu_log_free(&l1);
	tu_log_free(&l2);
}

Test(codec2, formats_1_and_2_read_the_same)
{
	same_as_format_1(2);
	same_as_format_1(3);
}

/* ---- the independent writer: the same bytes ------------------------------ */

/* The batches of a payload, concatenated (format 2's bytes; metadata is
 * format 1's and tested there). */
static uint64_t varint_at(const uint8_t *b, size_t *off)
{
	uint64_t v = 0;

	for (int sh = 0; sh < 64; sh += 7) {
		uint8_t x = b[(*off)++];
		v |= (uint64_t)(x & 0x7f) << sh;
		if (!(x & 0x80))
			break;
	}
	return v;
}

static size_t batches_of(const uint8_t *raw, size_t len, uint8_t *out)
{
	size_t off = 0, n = 0;

	while (off < len) {
		size_t at = off, k;
		varint_at(raw, &at);
		k = (size_t)varint_at(raw, &at) + (at - off);
		if (raw[off] == 20) {
			memcpy(out + n, raw + off, k);
			n += k;
		}
		off += k;
	}
	return n;
}

/* tools/t4write.py --format 2 and 3, written from FORMAT.md 5a alone, and
 * t410trace's coder write the same bits: every chunk of its logs decoded
 * by the C reader and coded again by the C writer gives the same batches,
 * byte for byte (so both follow 5a.7's choices). */
static void same_as_t4write(unsigned version, const char *opts)
{
	char *dir = cli_tmpdir("t4c2"), writer[PATH_MAX], out[4096], path[PATH_MAX + 64];
	uint8_t *file = malloc(64u << 20), *raw = malloc(T4_CHUNK_MAX_RAW);
	uint8_t *mine = malloc(T4_CHUNK_MAX_RAW), *a = malloc(T4_CHUNK_MAX_RAW);
	uint8_t *b = malloc(T4_CHUNK_MAX_RAW);
	struct t4_codec *dec = t4_codec_new(), *enc = t4_codec_new();
	size_t len, off = 0, chunks = 0, batches = 0;
	FILE *f;

	cr_assert(file && raw && mine && a && b && dec && enc);
	cr_assert_not_null(cli_repo_file("tools/t4write.py", writer));
	cr_assert_eq(cli_run(out, sizeof(out), "python3 '%s' '%s/w.t4' --format %u %s 2>&1",
			     writer, dir, version, opts), 0, "%s", out);
	snprintf(path, sizeof(path), "%s/w.t4", dir);
	cr_assert_not_null(f = fopen(path, "rb"));
	len = fread(file, 1, 64u << 20, f);
	fclose(f);
	while (off + T4_CHUNK_HDR_SIZE <= len) {
		struct t4_chunk_hdr h;
		struct t4_packet p;
		size_t pos = 0, mlen = 0, na, nb;

		cr_assert_eq(t4_chunk_hdr_unpack(file + off, &h), 0, "%s", t4_errmsg());
		cr_assert_eq(h.version, version);
		cr_assert_eq(ZSTD_decompress(raw, T4_CHUNK_MAX_RAW, file + off + h.hdr_size,
					     h.comp_size), h.raw_size);
		t4_codec_start(dec, version);
		t4_codec_start(enc, version);
		while (pos < h.raw_size) {
			int n = t4_codec_decode(dec, raw + pos, h.raw_size - pos, &p);
			cr_assert_geq(n, 0, "chunk %zu: %s", chunks, t4_errmsg());
			pos += (size_t)n;
			if (!p.type) { /* unknown: it ends a batch all the same */
				mlen += t4_codec_flush(enc, mine + mlen, T4_CHUNK_MAX_RAW - mlen);
				continue;
			}
			n = t4_codec_encode(enc, &p, mine + mlen, T4_CHUNK_MAX_RAW - mlen);
			cr_assert_geq(n, 0, "%s", t4_errmsg());
			mlen += (size_t)n;
		}
		mlen += t4_codec_flush(enc, mine + mlen, T4_CHUNK_MAX_RAW - mlen);
		na = batches_of(raw, h.raw_size, a);
		nb = batches_of(mine, mlen, b);
		cr_assert_eq(nb, na, "chunk %zu: %zu bytes of batches from C, %zu from "
			     "t4write.py", chunks, nb, na);
		cr_assert_eq(memcmp(a, b, na), 0, "chunk %zu: the batches differ", chunks);
		batches += na > 0;
		off += h.hdr_size + h.comp_size;
		chunks++;
	}
	cr_assert_eq(off, len);
	cr_assert_gt(batches, 1u);
	t4_codec_free(dec);
	t4_codec_free(enc);
	free(file);
	free(raw);
	free(mine);
	free(a);
	free(b);
	t4_rmtree(dir);
	free(dir);
}

Test(codec2, same_bytes_as_the_independent_writer, .timeout = 300)
{
	if (!t4t_have_cmds("python3 zstd"))
		cr_skip_test("needs python3 and zstd (tools/t4write.py)");
	static const char *hostile =
		"--triggers 2500 --seed 4 --schedulers 2 --large-ids --bookmarks "
		"--drop-returns 0.03 --late 0.03 --read-failures 0.02 --duplicate 0.02 "
		"--reorder 8 --copies --chunk-packets 4000";

	for (unsigned v = 2; v <= 3; v++) {
		same_as_t4write(v, "");       /* the default recording: every field's path */
		same_as_t4write(v, "--grid"); /* BPF path: on the grid, MONOTONIC */
		same_as_t4write(v, hostile);
	}
}
