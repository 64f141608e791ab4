/* fuzz_codec.c - libFuzzer harness for the packet codec (codec.c and
 * formats 2's and 3's batches, codec2.c), and the reader on top of it, with
 * the input taken as a chunk's raw payload, once as a chunk of each format
 * (1, 2 and 3: quiet records and seeded first records).
 *
 * Three checks per input and format:
 *   1. t4_codec_decode over the bytes until the end or the first error:
 *      it ends (a batch's packets but its last consume no bytes, and a
 *      batch holds at most 8 per byte), errors carry a message;
 *   2. round trip: the packets decoded are encoded again (own delta state,
 *      batches and all) and the result decoded again: the same packets;
 *   3. the payload is wrapped into a valid chunk (zstd, CRCs) and read with
 *      t4_reader_open_mem: the reader must return exactly the packets of
 *      step 1 (up to the first one that does not decode).
 */
#include "fuzz_common.h"
#include "packets/packets.h"

#include <stdint.h>
#include <zstd.h>

#define MAX_PKTS 4096

struct state {
	struct t4_codec *dec, *enc, *dec2;
	struct t4_packet *pkts; /* the packets of step 1, for steps 2 and 3 */
	uint8_t *re;            /* step 2's encoding */
	size_t re_cap;
};

static struct state *state(void)
{
	static struct state s;

	if (!s.dec) {
		s.dec = t4_codec_new();
		s.enc = t4_codec_new();
		s.dec2 = t4_codec_new();
		s.pkts = calloc(MAX_PKTS, sizeof(*s.pkts));
		s.re_cap = MAX_PKTS * (size_t)T4_PKT_MAX_ENCODED + T4_CODEC_MAX_OUT;
		s.re = malloc(s.re_cap);
		if (!s.dec || !s.enc || !s.dec2 || !s.pkts || !s.re)
			abort();
	}
	return &s;
}

/* Step 2: the first n packets of step 1 encoded again, then decoded. */
static void round_trip(struct state *s, size_t n, unsigned version)
{
	size_t len = 0, pos = 0, got = 0;
	struct t4_packet q;

	t4_codec_start(s->enc, version);
	t4_codec_start(s->dec2, version);
	for (size_t i = 0; i < n; i++) {
		int k = t4_codec_encode(s->enc, &s->pkts[i], s->re + len, s->re_cap - len);
		fuzz_check_rc(k, "t4_codec_encode");
		FUZZ_CHECK(k >= 0, "encoding a decoded packet of type %u failed: %s",
			   s->pkts[i].type, t4_errmsg());
		len += (size_t)k;
	}
	len += t4_codec_flush(s->enc, s->re + len, s->re_cap - len);
	while (pos < len) {
		int m;
		memset(&q, 0, sizeof(q));
		m = t4_codec_decode(s->dec2, s->re + pos, len - pos, &q);
		FUZZ_CHECK(m >= 0, "re-decoding packet %zu: %s", got, t4_errmsg());
		FUZZ_CHECK(got < n, "re-decoding gave more than %zu packets", n);
		FUZZ_CHECK(!memcmp(&s->pkts[got], &q, t4_packet_size(&q)),
			   "packet %zu (type %u) differs after a round trip", got, q.type);
		pos += (size_t)m;
		got++;
	}
	FUZZ_CHECK(got == n, "round trip: %zu of %zu packets", got, n);
}

/* Steps 1 and 2; returns the number of known packets before the first
 * error (or the end), stored in s->pkts. */
static size_t decode_all(struct state *s, const uint8_t *in, size_t len, uint32_t *all,
			 unsigned version)
{
	size_t pos = 0, n = 0, steps = 0;

	t4_codec_start(s->dec, version);
	*all = 0;
	while (pos < len) {
		struct t4_packet p;
		int rc;

		memset(&p, 0, sizeof(p));
		rc = t4_codec_decode(s->dec, in + pos, len - pos, &p);
		fuzz_check_rc(rc, "t4_codec_decode");
		if (rc < 0)
			break;
		FUZZ_CHECK((size_t)rc <= len - pos, "decode consumed %d of %zu", rc, len - pos);
		FUZZ_CHECK(++steps <= 8 * len + 1, "decoding does not end");
		pos += (size_t)rc;
		(*all)++;
		if (p.type == 0)
			continue;
		if (n < MAX_PKTS)
			memcpy(&s->pkts[n], &p, sizeof(p));
		n++;
	}
	round_trip(s, n < MAX_PKTS ? n : MAX_PKTS, version);
	return n;
}

static void quiet(void *ud, uint64_t off, const char *msg)
{
	(void)ud;
	(void)off;
	FUZZ_CHECK(msg[0] && !strchr(msg, '\n'), "bad warning '%s'", msg);
}

/* Step 3. */
static void via_reader(struct state *s, const uint8_t *raw, size_t len, size_t n_ok,
		       uint32_t n_all, unsigned version)
{
	size_t bound = ZSTD_compressBound(len), got = 0;
	uint8_t *file = malloc(T4_CHUNK_HDR_SIZE + bound);
	struct t4_chunk_hdr h = { 0 };
	struct t4_reader *r;
	struct t4_packet p;
	size_t csz;
	int rc;

	if (!file)
		abort();
	csz = ZSTD_compress(file + T4_CHUNK_HDR_SIZE, bound, raw, len, 1);
	FUZZ_CHECK(!ZSTD_isError(csz), "zstd: %s", ZSTD_getErrorName(csz));
	h.version = (uint16_t)version;
	h.hdr_size = T4_CHUNK_HDR_SIZE;
	h.first_trigger = UINT64_MAX;
	h.raw_size = (uint32_t)len;
	h.comp_size = (uint32_t)csz;
	h.packets = n_all;
	h.payload_crc = t4_crc32c(0, file + T4_CHUNK_HDR_SIZE, csz);
	t4_chunk_hdr_pack(&h, file);
	rc = t4_reader_open_mem(&r, file, T4_CHUNK_HDR_SIZE + csz, quiet, NULL);
	FUZZ_CHECK(rc == 0, "open of a valid chunk failed: %s", t4_errmsg());
	for (;;) {
		memset(&p, 0, sizeof(p));
		if ((rc = t4_reader_next(r, &p)) != 1)
			break;
		FUZZ_CHECK(got < n_ok, "reader returned more than %zu packets", n_ok);
		if (got < MAX_PKTS)
			FUZZ_CHECK(!memcmp(&p, &s->pkts[got], t4_packet_size(&p)),
				   "reader's packet %zu (type %u) differs", got, p.type);
		got++;
	}
	FUZZ_CHECK(rc == 0, "reader: %d (%s)", rc, t4_errmsg());
	FUZZ_CHECK(got == n_ok, "reader returned %zu of %zu packets", got, n_ok);
	t4_reader_close(r);
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct state *s = state();
	uint8_t *copy = malloc(len ? len : 1);
	uint32_t n_all;
	size_t n_ok;

	if (!copy)
		abort();
	memcpy(copy, data, len);
	for (unsigned v = 1; v <= T4_FORMAT_VERSION; v++) {
		n_ok = decode_all(s, copy, len, &n_all, v);
		if (len <= T4_CHUNK_MAX_RAW)
			via_reader(s, copy, len, n_ok, n_all, v);
	}
	free(copy);
	return 0;
}
