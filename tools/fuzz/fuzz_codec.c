/* fuzz_codec.c - libFuzzer harness for the packet codec (codec.c), and the
 * reader on top of it, with the input taken as a chunk's raw payload.
 *
 * Three checks per input:
 *   1. t4_codec_decode over the bytes until the end or the first error:
 *      every step consumes at least one byte, errors carry a message;
 *   2. round trip: each packet decoded is encoded again (own delta state)
 *      and decoded again; the two decodings must be equal;
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
	struct t4_packet *pkts; /* the packets of step 1, for step 3 */
};

static struct state *state(void)
{
	static struct state s;

	if (!s.dec) {
		s.dec = t4_codec_new();
		s.enc = t4_codec_new();
		s.dec2 = t4_codec_new();
		s.pkts = calloc(MAX_PKTS, sizeof(*s.pkts));
		if (!s.dec || !s.enc || !s.dec2 || !s.pkts)
			abort();
	}
	return &s;
}

static void round_trip(struct state *s, const struct t4_packet *p)
{
	static uint8_t buf[T4_PKT_MAX_ENCODED];
	struct t4_packet q;
	int n, m;

	n = t4_codec_encode(s->enc, p, buf, sizeof(buf));
	fuzz_check_rc(n, "t4_codec_encode");
	FUZZ_CHECK(n > 0, "encoding a decoded packet of type %u failed: %s", p->type,
		   t4_errmsg());
	memset(&q, 0, sizeof(q));
	m = t4_codec_decode(s->dec2, buf, (size_t)n, &q);
	FUZZ_CHECK(m == n, "re-decoding type %u: %d of %d bytes (%s)", p->type, m, n,
		   t4_errmsg());
	FUZZ_CHECK(!memcmp(p, &q, t4_packet_size(p)), "type %u differs after a round trip",
		   p->type);
}

/* Steps 1 and 2; returns the number of known packets before the first
 * error (or the end), stored in s->pkts. */
static size_t decode_all(struct state *s, const uint8_t *in, size_t len, uint32_t *all)
{
	size_t pos = 0, n = 0;

	t4_codec_reset(s->dec);
	t4_codec_reset(s->enc);
	t4_codec_reset(s->dec2);
	*all = 0;
	while (pos < len) {
		struct t4_packet p;
		int rc;

		memset(&p, 0, sizeof(p));
		rc = t4_codec_decode(s->dec, in + pos, len - pos, &p);
		fuzz_check_rc(rc, "t4_codec_decode");
		if (rc < 0)
			return n;
		FUZZ_CHECK(rc > 0 && (size_t)rc <= len - pos, "decode consumed %d of %zu",
			   rc, len - pos);
		pos += (size_t)rc;
		(*all)++;
		if (p.type == 0)
			continue;
		round_trip(s, &p);
		if (n < MAX_PKTS)
			memcpy(&s->pkts[n], &p, sizeof(p));
		n++;
	}
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
		       uint32_t n_all)
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
	h.version = T4_FORMAT_VERSION;
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
	n_ok = decode_all(s, copy, len, &n_all);
	if (len <= T4_CHUNK_MAX_RAW)
		via_reader(s, copy, len, n_ok, n_all);
	free(copy);
	return 0;
}
