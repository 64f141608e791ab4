/* codec_int.h - internal to the codec (codec.c, codec2.c): the byte-level
 * primitives of docs/FORMAT.md section 3, shared by the packet framing,
 * metadata bodies (every version) and the version-1 trigger packets, and
 * the entry points of the version-2 coder of trigger packets
 * (FORMAT.md section 5a).
 */
#ifndef T4_CODEC_INT_H
#define T4_CODEC_INT_H

#include "packets.h"
#include "util/util.h"

#include <stddef.h>
#include <stdint.h>

#define VARINT_MAX 10

static inline uint64_t zz(uint64_t v) /* zigzag of the two's complement */
{
	return (v << 1) ^ (0 - (v >> 63));
}

static inline uint64_t unzz(uint64_t v)
{
	return (v >> 1) ^ (0 - (v & 1));
}

/* Writer: callers guarantee room (bodies are bounded by construction). */
static inline uint8_t *put_uv(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

/* Reader: a cursor that turns every overrun into a sticky error. `lim`
 * is the end of the readable memory (the chunk's payload), at or after the
 * end of the field being read: varints are read a word at a time where 8
 * bytes are readable, and checked against `end` afterwards. */
struct cur {
	const uint8_t *p, *end, *lim;
	int bad;
};

uint64_t pkt_get_uv_slow(struct cur *c);

static inline uint64_t get_uv(struct cur *c)
{
	if (c->p < c->end && !(*c->p & 0x80))
		return *c->p++; /* one byte: most deltas */
	if (c->lim - c->p < 8)
		return pkt_get_uv_slow(c);
	/* up to 8 bytes from one word: find the last byte, drop the
	 * continuation bits, pack the 7-bit groups */
	uint64_t w = t4_get_le64(c->p), stop = ~w & 0x8080808080808080ull;
	if (!stop)
		return pkt_get_uv_slow(c);
	unsigned len = (unsigned)__builtin_ctzll(stop) / 8 + 1;
	uint64_t x = len == 8 ? w : w & ((1ull << (8 * len)) - 1);
	x &= 0x7f7f7f7f7f7f7f7full;
	x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
	x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
	x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
	if (c->end - c->p < (ptrdiff_t)len) {
		c->bad = 1; /* the varint runs past its field */
		return 0;
	}
	c->p += len;
	return x;
}

/* ---- version 2: trigger packets in batches (codec2.c) ------------------ */

#define T4_PKT_BATCH 20 /* on disk only, version-2 chunks: a run of reference
			 * and return packets as one bit stream */

struct t4_codec2;

struct t4_codec2 *pkt_codec2_new(void);
void pkt_codec2_free(struct t4_codec2 *c);
void pkt_codec2_reset(struct t4_codec2 *c); /* a new chunk: no state */
/* A new chunk of format `version` (2, or 3: quiet records and seeded first
 * records, FORMAT.md 5a.8). */
void pkt_codec2_start(struct t4_codec2 *c, unsigned version);
/* Add a reference or return packet to the open batch; when the batch is
 * full it is written to out first (cap >= T4_CODEC_MAX_OUT). Returns the
 * bytes written (0: buffered) or a negative errno. */
int pkt_codec2_add(struct t4_codec2 *c, const struct t4_packet *p, uint8_t *out, size_t cap);
/* Write the open batch, if any: bytes written (cap >= T4_CODEC_MAX_OUT). */
size_t pkt_codec2_flush(struct t4_codec2 *c, uint8_t *out, size_t cap);
/* Bytes the open batch will take once written. */
size_t pkt_codec2_pending(const struct t4_codec2 *c);
/* Decode a batch (FORMAT.md 5a) packet by packet. pkt_codec2_batch()
 * opens the batch whose body is body[0..len), `total` bytes with its
 * frame, and decodes its first packet; pkt_codec2_next() the next one
 * while pkt_codec2_in_batch(). Both return what t4_codec_decode() does,
 * so that it hands a packet of an open batch straight on (a tail call): 0
 * while more follow, `total` after the last, or -EBADMSG (its message set)
 * for a malformed batch, which closes it. */
int pkt_codec2_batch(struct t4_codec2 *c, const uint8_t *body, size_t len, size_t total,
		     struct t4_packet *p);
int pkt_codec2_next(struct t4_codec2 *c, struct t4_packet *p);

/* The first member of struct t4_codec2, so that codec.c asks whether a
 * batch is open without a call. */
struct pkt_codec2_head {
	uint32_t left; /* records of the open batch not yet read */
};

static inline bool pkt_codec2_in_batch(const struct t4_codec2 *c)
{
	return ((const struct pkt_codec2_head *)(const void *)c)->left != 0;
}

/* The batch coder of a codec (the same from t4_codec_new() on): a reader
 * takes a batch's packets from it straight, as t4_codec_decode() would. */
struct t4_codec2 *pkt_codec_v2(const struct t4_codec *c);

#endif
