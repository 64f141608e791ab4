/* test_codec.c - packet encoding and the chunk header (suite "codec"):
 * random round trips of every packet type, rejection of malformed packets
 * and malformed bytes, forward compatibility (unknown types, appended
 * fields), the chunk header, CRC32C, and the size of a realistic stream.
 * Packet by packet, these are format 1's codec (which t410trace still
 * writes with `record --format 1`); format 2's batches: test_codec2.c.
 */
#include "packets_testutil.h"

#include <errno.h>
#include <stdio.h>

/* A codec of format 1: one packet, one encoding. */
static struct t4_codec *codec_v1(void)
{
	struct t4_codec *c = t4_codec_new();

	cr_assert(c && t4_codec_start(c, 1) == 0);
	return c;
}

static int encode(struct t4_codec *c, const struct t4_packet *p, uint8_t *out)
{
	int n = t4_codec_encode(c, p, out, T4_PKT_MAX_ENCODED);
	cr_assert(n > 0 && n <= T4_PKT_MAX_ENCODED, "encode type %u: %d %s", p->type, n,
		  t4_errmsg());
	return n;
}

Test(codec, crc32c_vector)
{
	cr_assert_eq(t4_crc32c(0, "123456789", 9), 0xE3069283u);
	/* incremental == one shot */
	cr_assert_eq(t4_crc32c(t4_crc32c(0, "12345", 5), "6789", 4), 0xE3069283u);
	cr_assert_eq(t4_crc32c(0, "", 0), 0u);
	cr_assert_eq(t4_crc32c_portable(0, "123456789", 9), 0xE3069283u);
}

/* The CPU's CRC instruction (where there is one) and the portable tables
 * agree on every length and alignment. */
Test(codec, crc32c_hardware_equals_portable)
{
	uint8_t buf[4096 + 16];
	uint64_t s = 1;

	for (size_t i = 0; i < sizeof(buf); i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (uint8_t)(s >> 56);
	}
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len < sizeof(buf) - 16; len += 1 + len / 3)
			cr_assert_eq(t4_crc32c(0x1234, buf + off, len),
				     t4_crc32c_portable(0x1234, buf + off, len), "off %zu len %zu", off, len);
}

Test(codec, roundtrip_random_all_types)
{
	struct t4_codec *enc = codec_v1(), *dec = codec_v1();
	struct t4_packet *p = malloc(sizeof(*p)), *q = malloc(sizeof(*q));
	uint8_t buf[T4_PKT_MAX_ENCODED];
	uint64_t s = 42;
	int seen[32] = { 0 };

	cr_assert(enc && dec && p && q);
	for (int i = 0; i < 30000; i++) {
		if (tu_below(&s, 500) == 0) { /* chunk boundary on both sides */
			t4_codec_reset(enc);
			t4_codec_reset(dec);
		}
		tu_random_packet(&s, tu_type(&s), p);
		/* metadata, now and then as the copy a writer repeats (4.8) */
		p->copy = p->type != T4_PKT_STATUS && p->type < T4_PKT_REF && tu_below(&s, 3) == 0;
		int n = encode(enc, p, buf);
		memset(q, 0xa5, sizeof(*q));
		int m = t4_codec_decode(dec, buf, (size_t)n, q);
		cr_assert_eq(m, n, "packet %d type %u: decoded %d of %d bytes (%s)", i, p->type,
			     m, n, t4_errmsg());
		cr_assert(tu_pkt_eq(p, q), "packet %d type %u differs after round trip", i,
			  p->type);
		seen[p->type]++;
	}
	for (uint32_t t = T4_PKT_SESSION; t <= T4_PKT_STATUS; t++)
		cr_assert_gt(seen[t], 1000);
	cr_assert_gt(seen[T4_PKT_REF], 3000);
	cr_assert_gt(seen[T4_PKT_RET], 5000);
	free(p);
	free(q);
	t4_codec_free(enc);
	t4_codec_free(dec);
}

/* Counters going down, wrapping, growing and shrinking n_counts, keys with
 * and without delta state, all in one chunk: the delta paths. */
Test(codec, roundtrip_ret_deltas_extremes)
{
	struct t4_codec *enc = codec_v1(), *dec = codec_v1();
	struct t4_packet p, q;
	uint8_t buf[T4_PKT_MAX_ENCODED];
	static const uint64_t vals[] = { 0, UINT64_MAX, 1, UINT64_MAX, 0, 1ull << 63, 5, 3 };
	static const uint32_t ns[] = { 0, 64, 1, 64, 3, 0, 64, 2 };
	static const uint32_t doms[] = { 0, 4095, 4096, UINT32_MAX };

	for (size_t d = 0; d < T4_ARRAY_LEN(doms); d++)
		for (size_t k = 0; k < T4_ARRAY_LEN(vals); k++) {
			memset(&p, 0, sizeof(p));
			p.type = T4_PKT_RET;
			p.ret.domain_id = doms[d];
			p.ret.trigger_id = vals[(k + 3) % T4_ARRAY_LEN(vals)];
			p.ret.local_clock = vals[k];
			p.ret.read_begin_ns = vals[(k + 1) % T4_ARRAY_LEN(vals)];
			p.ret.read_end_ns = vals[(k + 2) % T4_ARRAY_LEN(vals)];
			p.ret.flags = k % 2 ? T4_RET_MULTIPLEXED : UINT32_MAX & ~T4_RET_MULTIPLEXED;
			p.ret.enabled_delta = k % 2 ? vals[k] : 0;
			p.ret.running_delta = k % 2 ? ~vals[k] : 0;
			p.ret.n_counts = ns[k];
			for (uint32_t i = 0; i < p.ret.n_counts; i++)
				p.ret.counts[i] = vals[(k + i) % T4_ARRAY_LEN(vals)] - i;
			int n = encode(enc, &p, buf);
			cr_assert_eq(t4_codec_decode(dec, buf, (size_t)n, &q), n);
			cr_assert(tu_pkt_eq(&p, &q), "domain %u step %zu", doms[d], k);
		}
	t4_codec_free(enc);
	t4_codec_free(dec);
}

/* A steady stream costs few bytes: trigger delta 0, counters near their
 * previous value; and the first packet of a chunk is coded against zero. */
Test(codec, steady_ret_is_compact)
{
	struct t4_codec *c = codec_v1();
	struct t4_packet p = { .type = T4_PKT_RET };
	uint8_t buf[T4_PKT_MAX_ENCODED];

	p.ret.domain_id = 3;
	p.ret.n_counts = 32;
	for (uint64_t t = 100; t < 110; t++) {
		p.ret.trigger_id = t;
		p.ret.local_clock = t * 1000;
		p.ret.read_begin_ns = t * 1000 + 7;
		p.ret.read_end_ns = p.ret.read_begin_ns + 100;
		for (int i = 0; i < 32; i++)
			p.ret.counts[i] = 1000 + (t % 2);
		int n = t4_codec_encode(c, &p, buf, sizeof(buf));
		if (t > 100) /* 2 framing + hdr, dom, n, trig, 2+2 clocks, 1 window, 32 */
			cr_assert_eq(n, 2 + 3 + 1 + 2 + 2 + 1 + 32, "n=%d", n);
	}
	t4_codec_free(c);
}

Test(codec, encode_rejects_malformed)
{
	struct t4_codec *c = codec_v1();
	struct t4_packet p = { .type = T4_PKT_RET };
	uint8_t buf[T4_PKT_MAX_ENCODED];
	static const uint32_t bad_types[] = { 0, 8, 15, 20, 99, UINT32_MAX };

	p.ret.n_counts = T4_MAX_COUNTERS + 1;
	cr_assert_eq(t4_codec_encode(c, &p, buf, sizeof(buf)), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "counts"), "%s", t4_errmsg());
	for (size_t i = 0; i < T4_ARRAY_LEN(bad_types); i++) {
		memset(&p, 0, sizeof(p));
		p.type = bad_types[i];
		cr_assert_eq(t4_codec_encode(c, &p, buf, sizeof(buf)), -EINVAL);
	}
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_BOOKMARK;
	memset(p.bookmark.name, 'x', sizeof(p.bookmark.name)); /* no NUL */
	cr_assert_eq(t4_codec_encode(c, &p, buf, sizeof(buf)), -EINVAL);
	p.bookmark.name[T4_NAME_MAX - 1] = '\0'; /* 63 bytes: the maximum */
	cr_assert_eq(t4_codec_encode(c, &p, buf, sizeof(buf)), 2 + 1 + 1 + 1 + 63 + 1);
	t4_codec_free(c);
}

/* Too small an output buffer: -ENOBUFS, nothing written, state unchanged. */
Test(codec, encode_small_buffer_keeps_state)
{
	struct t4_codec *a = codec_v1(), *b = codec_v1();
	struct t4_packet p;
	uint8_t x[T4_PKT_MAX_ENCODED], y[T4_PKT_MAX_ENCODED];
	uint64_t s = 7;

	for (int i = 0; i < 2000; i++) {
		tu_random_packet(&s, tu_below(&s, 2) ? T4_PKT_RET : T4_PKT_REF, &p);
		int full = encode(b, &p, y);
		memset(x, 0xee, sizeof(x));
		int n = t4_codec_encode(a, &p, x, (size_t)full - 1);
		cr_assert_eq(n, -ENOBUFS);
		cr_assert_eq(x[0], 0xee);
		cr_assert_eq(t4_codec_encode(a, &p, x, (size_t)full), full);
		cr_assert(!memcmp(x, y, (size_t)full));
	}
	t4_codec_free(a);
	t4_codec_free(b);
}

/* Every proper prefix of a valid packet is refused; random bytes never
 * crash, never make the decoder consume more than it was given. */
Test(codec, decode_truncated_and_garbage)
{
	struct t4_codec *enc = codec_v1(), *dec = codec_v1();
	struct t4_packet p, q;
	uint8_t buf[T4_PKT_MAX_ENCODED], junk[600];
	uint64_t s = 99;

	for (int i = 0; i < 1500; i++) {
		t4_codec_reset(enc);
		tu_random_packet(&s, tu_type(&s), &p);
		int n = encode(enc, &p, buf);
		for (int cut = 0; cut < n; cut++) {
			t4_codec_reset(dec);
			cr_assert_eq(t4_codec_decode(dec, buf, (size_t)cut, &q), -EBADMSG,
				     "type %u cut at %d of %d", p.type, cut, n);
		}
	}
	for (int i = 0; i < 20000; i++) {
		size_t len = tu_below(&s, sizeof(junk));
		for (size_t k = 0; k < len; k++)
			junk[k] = (uint8_t)tu_rand(&s);
		if (len && tu_below(&s, 2)) /* a known type most of the time */
			junk[0] = (uint8_t)(tu_below(&s, 2) ? 16 + tu_below(&s, 2) : 1 + tu_below(&s, 5));
		if (len > 1 && tu_below(&s, 2))
			junk[1] = (uint8_t)tu_below(&s, len);
		size_t pos = 0;
		while (pos < len) {
			int m = t4_codec_decode(dec, junk + pos, len - pos, &q);
			if (m < 0) {
				cr_assert_eq(m, -EBADMSG);
				break;
			}
			cr_assert(m > 0 && (size_t)m <= len - pos);
			pos += (size_t)m;
		}
	}
	t4_codec_free(enc);
	t4_codec_free(dec);
}

static int decode_bytes(const uint8_t *b, size_t n, struct t4_packet *q)
{
	struct t4_codec *c = codec_v1();
	int rc = t4_codec_decode(c, b, n, q);
	t4_codec_free(c);
	return rc;
}

Test(codec, decode_rejects_invalid_fields)
{
	struct t4_packet q;
	/* return packet, delta-coded (abs bit 0), domain 4096: no state allowed */
	static const uint8_t delta_big_key[] = { 17, 10, 0, 0x80, 0x20, 0, 0, 0, 0, 0, 0, 0 };
	/* return packet with n_counts = 65 */
	static const uint8_t too_many[] = { 17, 8, 1, 0, 65, 0, 0, 0, 0, 0 };
	/* domain packet whose name length is 64 (max 63) */
	uint8_t long_name[2 + 6 + 1 + 64] = { 2, 6 + 1 + 64, 0, 0, 0, 0, 0, 64 };
	/* status packet with an 11-byte varint */
	static const uint8_t overlong[] = { 5, 15, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					    0x80, 0x80, 0x80, 0x80, 0, 0, 0, 0, 0 };
	/* a 10-byte varint above 2^64 */
	static const uint8_t overflow[] = { 5, 14, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					    0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0 };
	/* bookmark id above UINT32_MAX */
	static const uint8_t big_u32[] = { 4, 8, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0 };
	/* string containing a NUL */
	static const uint8_t nul_str[] = { 4, 6, 1, 0, 3, 'a', 0, 'b' };
	/* body length beyond the input */
	static const uint8_t short_body[] = { 5, 9, 0, 0, 0, 0, 0 };

	memset(long_name + 8, 'a', 64);
	cr_assert_eq(decode_bytes(delta_big_key, sizeof(delta_big_key), &q), -EBADMSG);
	cr_assert_eq(decode_bytes(too_many, sizeof(too_many), &q), -EBADMSG);
	cr_assert_eq(decode_bytes(long_name, sizeof(long_name), &q), -EBADMSG);
	cr_assert_eq(decode_bytes(overlong, sizeof(overlong), &q), -EBADMSG);
	cr_assert_eq(decode_bytes(overflow, sizeof(overflow), &q), -EBADMSG);
	cr_assert_eq(decode_bytes(big_u32, sizeof(big_u32), &q), -EBADMSG);
	cr_assert_eq(decode_bytes(nul_str, sizeof(nul_str), &q), -EBADMSG);
	cr_assert_eq(decode_bytes(short_body, sizeof(short_body), &q), -EBADMSG);
	/* the same domain packet with a 63-byte name is fine */
	long_name[1] = 6 + 1 + 63;
	long_name[7] = 63;
	cr_assert_eq(decode_bytes(long_name, sizeof(long_name) - 1, &q),
		     (int)sizeof(long_name) - 1);
	cr_assert_eq(strlen(q.domain.name), 63u);
	/* a 10-byte varint of exactly UINT64_MAX is valid */
	static const uint8_t max64[] = { 5, 14, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0 };
	cr_assert_eq(decode_bytes(max64, sizeof(max64), &q), (int)sizeof(max64));
	cr_assert_eq(q.status.triggers, UINT64_MAX);
}

/* Forward compatibility: unknown types are skipped by length, fields
 * appended to a known body are ignored. */
Test(codec, unknown_type_and_appended_fields)
{
	struct t4_codec *c = codec_v1();
	struct t4_packet p = { .type = T4_PKT_STATUS }, q;
	uint8_t buf[64], stream[128];
	size_t len = 0;

	p.status = (struct t4_status_pkt){ 1, 2, 3, 4, 5, 6, 7, 8 };
	int n = t4_codec_encode(c, &p, buf, sizeof(buf));
	cr_assert_eq(n, 10);
	/* type 200 (2-byte varint), 3-byte body */
	static const uint8_t unk[] = { 0xc8, 0x01, 3, 9, 9, 9 };
	memcpy(stream, unk, sizeof(unk));
	len = sizeof(unk);
	/* the status packet with 2 extra body bytes */
	memcpy(stream + len, buf, (size_t)n);
	stream[len + 1] += 2;
	stream[len + n] = 0x7f;
	stream[len + n + 1] = 0x01;
	len += (size_t)n + 2;

	cr_assert_eq(t4_codec_decode(c, stream, len, &q), 6);
	cr_assert_eq(q.type, 0u);
	cr_assert_eq(t4_codec_decode(c, stream + 6, len - 6, &q), n + 2);
	cr_assert(tu_pkt_eq(&p, &q));
	/* an older writer's: no triggers_refused (then bookmarks_refused, then
	 * lost_events) at the end */
	for (int cut = 1; cut <= 3; cut++) {
		memcpy(stream, buf, (size_t)n);
		stream[1] -= (uint8_t)cut;
		cr_assert_eq(t4_codec_decode(c, stream, (size_t)n - cut, &q), n - cut);
		cr_assert_eq(q.status.triggers_refused, 0);
		cr_assert_eq(q.status.bookmarks_refused, cut == 1 ? 7 : 0);
		cr_assert_eq(q.status.lost_events, cut <= 2 ? 6 : 0);
		cr_assert_eq(q.status.ref_ns, 5);
	}
	t4_codec_free(c);
}

/* The host packet (type 9, FORMAT.md 4.5b): random round trips, the bytes
 * of FORMAT.md's example, fields a newer writer appends ignored, a body
 * cut short refused, never a copy; an older reader skips it by its frame
 * (type 9 was unknown to it) and reads on. */
Test(codec, host_packet)
{
	struct t4_codec *c = t4_codec_new();
	struct t4_packet *p = malloc(sizeof(*p)), *q = malloc(sizeof(*q));
	uint8_t buf[T4_PKT_MAX_ENCODED + 8];
	uint64_t s = 9;

	cr_assert(c && p && q);
	for (int i = 0; i < 3000; i++) {
		tu_random_packet(&s, T4_PKT_HOST, p);
		int n = encode(c, p, buf);
		cr_assert_eq(t4_codec_decode(c, buf, (size_t)n, q), n, "%s", t4_errmsg());
		cr_assert(tu_pkt_eq(p, q), "host packet %d differs after round trip", i);
		/* the frame an older reader skips it by: type 9, then the body's length */
		cr_assert(buf[0] == T4_PKT_HOST && (n < 130 ? buf[1] == n - 2 : buf[1] & 0x80));
	}
	memset(p, 0, sizeof(*p));
	p->type = T4_PKT_HOST;
	p->host = (struct t4_host_pkt){ .ref_ns = 1000, .real_ns = 2000,
					.sync_flags = T4_HOST_SYNC_KNOWN | T4_HOST_SYNCED,
					.clock_state = 0, .maxerror_us = 16000, .esterror_us = 2,
					.rank = -1 };
	strcpy(p->host.host, "n1");
	strcpy(p->host.job_id, "42");
	strcpy(p->host.step, "0");
	strcpy(p->host.nodelist, "n[1-2]");
	static const uint8_t want[] = { 0x09, 0x19, 0xe8, 0x07, 0xd0, 0x0f, 0x03, 0x00, 0x80,
					0x7d, 0x02, 0x01, 0x02, 'n', '1', 0x02, '4', '2',
					0x01, '0', 0x06, 'n', '[', '1', '-', '2', ']' };
	int n = encode(c, p, buf);
	cr_assert_eq(n, (int)sizeof(want));
	cr_assert_arr_eq(buf, want, sizeof(want), "FORMAT.md 4.5b's example");
	/* a newer writer's appended field */
	buf[1] += 2;
	buf[n] = 0x85;
	buf[n + 1] = 0x01;
	cr_assert_eq(t4_codec_decode(c, buf, (size_t)n + 2, q), n + 2);
	cr_assert(tu_pkt_eq(p, q));
	/* the body cut before nodelist ends: malformed */
	buf[1] -= 4;
	cr_assert_lt(t4_codec_decode(c, buf, (size_t)n - 2, q), 0);
	/* metadata that is not repeated: no copy of it */
	p->copy = true;
	cr_assert_lt(t4_codec_encode(c, p, buf, sizeof(buf)), 0);
	free(p);
	free(q);
	t4_codec_free(c);
}

/* A copy (FORMAT.md 4.8) is the whole packet inside a packet of type 8:
 * it decodes to the same packet flagged copy; only metadata may be copied;
 * a copy of a type the reader does not know is skipped like that type. */
Test(codec, copies_wrap_metadata)
{
	struct t4_codec *c = codec_v1();
	struct t4_packet p = { .type = T4_PKT_DOMAIN }, q;
	uint8_t orig[T4_PKT_MAX_ENCODED], copy[T4_PKT_MAX_ENCODED];
	static const uint8_t of_ref[] = { 8, 13, 16, 11, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 },
			     of_status[] = { 8, 3, 5, 1, 0 }, of_copy[] = { 8, 5, 8, 3, 4, 1, 0 },
			     of_future[] = { 8, 4, 100, 2, 0xab, 0xcd },
			     appended[] = { 8, 7, 6, 4, 1, 2, 0, 0, 0xee }, /* a short task: bad */
			     too_long[] = { 8, 3, 4, 9, 1 };

	p.domain.domain_id = 5;
	strcpy(p.domain.name, "ucf");
	int n = encode(c, &p, orig);
	p.copy = true;
	int m = encode(c, &p, copy);
	cr_assert_eq(m, n + 2);
	cr_assert(copy[0] == T4_PKT_COPY && copy[1] == n && !memcmp(copy + 2, orig, (size_t)n),
		  "a copy is 08, the packet's length, the packet");
	cr_assert_eq(decode_bytes(copy, (size_t)m, &q), m);
	cr_assert(q.copy && tu_pkt_eq(&p, &q));
	cr_assert_eq(decode_bytes(orig, (size_t)n, &q), n);
	cr_assert(!q.copy, "an original is no copy");

	p = (struct t4_packet){ .type = T4_PKT_REF, .copy = true };
	cr_assert_eq(t4_codec_encode(c, &p, copy, sizeof(copy)), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "cannot be a copy"), "%s", t4_errmsg());
	p.type = T4_PKT_STATUS;
	cr_assert_eq(t4_codec_encode(c, &p, copy, sizeof(copy)), -EINVAL);

	cr_assert_eq(decode_bytes(of_ref, sizeof(of_ref), &q), -EBADMSG, "a copy of a reference");
	cr_assert_eq(decode_bytes(of_status, sizeof(of_status), &q), -EBADMSG);
	cr_assert_eq(decode_bytes(of_copy, sizeof(of_copy), &q), -EBADMSG, "a copy of a copy");
	cr_assert_eq(decode_bytes(too_long, sizeof(too_long), &q), -EBADMSG);
	cr_assert_eq(decode_bytes(appended, sizeof(appended), &q), -EBADMSG);
	cr_assert_eq(decode_bytes(of_future, sizeof(of_future), &q), (int)sizeof(of_future));
	cr_assert_eq(q.type, 0u, "a copy of a future type is skipped as unknown");

	/* a body longer than its packet: a newer writer's bytes, ignored */
	p = (struct t4_packet){ .type = T4_PKT_BOOKMARK, .copy = true };
	p.bookmark.bookmark_id = 3;
	strcpy(p.bookmark.name, "load");
	m = encode(c, &p, copy);
	copy[1]++;
	copy[m] = 0x77;
	cr_assert_eq(decode_bytes(copy, (size_t)m + 1, &q), m + 1);
	cr_assert(q.copy && tu_pkt_eq(&p, &q));
	t4_codec_free(c);
}

/* A session packet of an older writer ends after flags (before 0.1.0: its
 * reference clock is CLOCK_MONOTONIC_RAW) or after ref_clock (format 1.0:
 * no session ID, 0). */
Test(codec, session_without_appended_fields)
{
	struct t4_codec *c = codec_v1();
	struct t4_packet p = { .type = T4_PKT_SESSION }, q;
	uint8_t buf[T4_PKT_MAX_ENCODED];

	strcpy(p.session.host, "h");
	p.session.flags = T4_SESSION_BPF_TRIGGER;
	p.session.ref_clock = T4_REFCLK_MONOTONIC;
	p.session.session_id = 0x1234; /* varint b4 24 */
	int n = encode(c, &p, buf);
	cr_assert_eq(decode_bytes(buf, (size_t)n, &q), n);
	cr_assert(tu_pkt_eq(&p, &q));
	cr_assert_eq(q.session.session_id, 0x1234u);
	cr_assert(buf[n - 3] == T4_REFCLK_MONOTONIC && buf[n - 2] == 0xb4 && buf[n - 1] == 0x24,
		  "ref_clock, then session_id: the body's last fields");
	buf[1] -= 2; /* body_len (one byte here), without session_id: format 1.0 */
	cr_assert_eq(decode_bytes(buf, (size_t)n - 2, &q), n - 2);
	cr_assert_eq(q.session.session_id, 0u);
	cr_assert_eq(q.session.ref_clock, T4_REFCLK_MONOTONIC);
	buf[1]--; /* and without ref_clock */
	cr_assert_eq(decode_bytes(buf, (size_t)n - 3, &q), n - 3);
	cr_assert_eq(q.session.ref_clock, T4_REFCLK_MONOTONIC_RAW);
	cr_assert_eq(q.session.flags, T4_SESSION_BPF_TRIGGER);
	t4_codec_free(c);
}

/* Delta state is per chunk: after a reset the same packet encodes to the
 * same bytes as with a fresh codec. */
Test(codec, reset_makes_chunks_independent)
{
	struct t4_codec *a = codec_v1(), *b = codec_v1();
	struct t4_packet p;
	uint8_t x[T4_PKT_MAX_ENCODED], y[T4_PKT_MAX_ENCODED];
	uint64_t s = 5;

	for (int i = 0; i < 50; i++) {
		tu_random_packet(&s, T4_PKT_RET, &p);
		encode(a, &p, x);
	}
	t4_codec_reset(a);
	tu_random_packet(&s, T4_PKT_RET, &p);
	int n = encode(a, &p, x);
	cr_assert_eq(encode(b, &p, y), n);
	cr_assert(!memcmp(x, y, (size_t)n));
	t4_codec_free(a);
	t4_codec_free(b);
}

Test(codec, packet_size)
{
	struct t4_packet p = { .type = T4_PKT_RET };

	p.ret.n_counts = 4;
	cr_assert_eq(t4_packet_size(&p), offsetof(struct t4_packet, ret.counts) + 32);
	p.ret.n_counts = 0;
	cr_assert_eq(t4_packet_size(&p), offsetof(struct t4_packet, ret.counts));
	p.ret.n_counts = 1000;
	cr_assert_eq(t4_packet_size(&p), sizeof(p));
	p.type = T4_PKT_REF;
	cr_assert_eq(t4_packet_size(&p), offsetof(struct t4_packet, ref) + sizeof(p.ref));
	p.type = T4_PKT_SESSION;
	cr_assert_geq(t4_packet_size(&p), offsetof(struct t4_packet, session.flags) + 4);
	cr_assert_leq(t4_packet_size(&p), sizeof(p));
}

/* ---- chunk header ------------------------------------------------------ */

static struct t4_chunk_hdr sample_hdr(void)
{
	return (struct t4_chunk_hdr){ .version = 1, .hdr_size = 64, .flags = 0, .seq = 2,
				      .first_trigger = 1000, .last_trigger = 1099,
				      .raw_size = 5000, .comp_size = 900, .packets = 400,
				      .payload_crc = 0xdeadbeef, .tag = 0x11223344 };
}

static bool hdr_eq(const struct t4_chunk_hdr *a, const struct t4_chunk_hdr *b)
{
	return a->version == b->version && a->hdr_size == b->hdr_size && a->flags == b->flags &&
	       a->seq == b->seq && a->first_trigger == b->first_trigger &&
	       a->last_trigger == b->last_trigger && a->raw_size == b->raw_size &&
	       a->comp_size == b->comp_size && a->packets == b->packets &&
	       a->payload_crc == b->payload_crc && a->tag == b->tag;
}

Test(codec, chunk_hdr_roundtrip_and_bytes)
{
	struct t4_chunk_hdr h = sample_hdr(), g;
	uint8_t b[T4_CHUNK_HDR_SIZE];
	static const uint8_t expect_start[] = { 'T', '4', 'T', 'R', 'A', 'C', 'E', 0x1a,
						1, 0, 64, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0 };

	t4_chunk_hdr_pack(&h, b);
	cr_assert(!memcmp(b, expect_start, sizeof(expect_start)));
	cr_assert_eq(t4_get_le64(b + 24), 1000u);
	cr_assert_eq(t4_get_le64(b + 32), 1099u);
	cr_assert_eq(t4_get_le32(b + 40), 5000u);
	cr_assert_eq(t4_get_le32(b + 44), 900u);
	cr_assert_eq(t4_get_le32(b + 48), 400u);
	cr_assert_eq(t4_get_le32(b + 52), 0xdeadbeefu);
	cr_assert_eq(t4_get_le32(b + 56), 0x11223344u, "the recording's tag (format 1.1)");
	cr_assert_eq(t4_get_le32(b + 60), t4_crc32c(0, b, 60));
	cr_assert_eq(t4_chunk_hdr_unpack(b, &g), 0);
	cr_assert(hdr_eq(&h, &g));
}

Test(codec, chunk_hdr_rejects)
{
	struct t4_chunk_hdr h = sample_hdr(), g;
	uint8_t b[T4_CHUNK_HDR_SIZE], c[T4_CHUNK_HDR_SIZE];

	t4_chunk_hdr_pack(&h, b);
	for (int i = 0; i < T4_CHUNK_HDR_SIZE * 8; i++) { /* every single bit */
		memcpy(c, b, sizeof(c));
		c[i / 8] ^= (uint8_t)(1u << (i % 8));
		cr_assert_eq(t4_chunk_hdr_unpack(c, &g), -EBADMSG, "bit %d", i);
	}
	h.version = T4_FORMAT_VERSION + 1; /* newer, valid CRC */
	t4_chunk_hdr_pack(&h, c);
	cr_assert_eq(t4_chunk_hdr_unpack(c, &g), -EPROTO);
	cr_assert_eq(g.version, T4_FORMAT_VERSION + 1);
	cr_assert(strstr(t4_errmsg(), "version 4"), "%s", t4_errmsg());
	h = sample_hdr();
	h.hdr_size = 63;
	t4_chunk_hdr_pack(&h, c);
	cr_assert_eq(t4_chunk_hdr_unpack(c, &g), -EBADMSG);
	h.hdr_size = 128; /* future fields: fine */
	t4_chunk_hdr_pack(&h, c);
	cr_assert_eq(t4_chunk_hdr_unpack(c, &g), 0);
	cr_assert_eq(g.hdr_size, 128);
	h = sample_hdr();
	h.raw_size = T4_CHUNK_MAX_RAW + 1;
	t4_chunk_hdr_pack(&h, c);
	cr_assert_eq(t4_chunk_hdr_unpack(c, &g), -EBADMSG);
	h = sample_hdr();
	h.comp_size = h.raw_size + h.raw_size / 128 + 513;
	t4_chunk_hdr_pack(&h, c);
	cr_assert_eq(t4_chunk_hdr_unpack(c, &g), -EBADMSG);
	h.comp_size--;
	t4_chunk_hdr_pack(&h, c);
	cr_assert_eq(t4_chunk_hdr_unpack(c, &g), 0);
	h = sample_hdr();
	h.version = 0;
	t4_chunk_hdr_pack(&h, c);
	cr_assert_eq(t4_chunk_hdr_unpack(c, &g), -EBADMSG);
}

/* Bytes per counter value of a stream of one 32-counter domain (plus its
 * reference packets), before and after zstd, for a given counter noise. */
static void stream_size(unsigned format, uint64_t noise, double *before, double *after)
{
	struct tu_log l;
	struct t4_packet p[1 + TU_DOMAINS];
	uint64_t s = 1, values = 0, raw = 0;

	tu_log_init(&l);
	l.format = format;
	for (uint64_t t = 0; t < 20000; t++) {
		tu_trigger_noise(&s, t, noise, p);
		tu_log_add(&l, &p[0]);
		tu_log_add(&l, &p[3]); /* the 32-counter domain */
		values += p[3].ret.n_counts;
		if ((t + 1) % 2000 == 0)
			tu_log_flush(&l);
	}
	for (size_t c = 0; c < l.nchunks; c++)
		raw += t4_get_le32(l.buf + l.chunk_off[c] + 40);
	*before = (double)raw / (double)values;
	*after = (double)l.len / (double)values;
	fprintf(stderr, "codec/stream_size: format %u, 20000 triggers x 32 counters, noise "
		"%llu: %.3f bytes/value encoded, %.3f on disk (zstd 3)\n", format,
		(unsigned long long)noise, *before, *after);
	tu_log_free(&l);
}

Test(codec, realistic_stream_size)
{
	double before, after;

	/* slowly varying: 1-byte count deltas; about 31 bytes per trigger go
	 * to the reference packet and the return header (clocks with timer
	 * jitter of tens of us), so 32 counters cost about 2 bytes each */
	stream_size(1, 64, &before, &after);
	cr_assert_lt(before, 2.1);
	cr_assert_lt(after, before);
	stream_size(1, 2000, &before, &after); /* noisy: 2-byte count deltas */
	cr_assert_lt(before, 3.1);
	cr_assert_lt(after, before);
}

/* Format 2 on the same streams: bit-packed residuals, second-order
 * clocks; zstd then has little left to find. */
Test(codec, realistic_stream_size_format_2)
{
	double b1, a1, b2, a2;

	stream_size(1, 64, &b1, &a1);
	stream_size(2, 64, &b2, &a2);
	cr_assert_lt(a2, 0.85 * a1, "format 2 %.3f, format 1 %.3f bytes/value", a2, a1);
	cr_assert_lt(b2, 1.05 * a2 + 0.02, "zstd gains little on format 2");
	stream_size(1, 2000, &b1, &a1);
	stream_size(2, 2000, &b2, &a2);
	cr_assert_lt(a2, 0.85 * a1, "format 2 %.3f, format 1 %.3f bytes/value", a2, a1);
}
