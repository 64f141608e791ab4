/* chunk.c - the 64-byte chunk header (docs/FORMAT.md, "Chunks").
 *
 * Shared by the writer and the reader. The header carries its own CRC32C
 * so that a reader can tell a real chunk start from payload bytes that
 * happen to contain the magic, which is what makes resynchronisation after
 * damage safe. Unpack validates everything a reader needs to trust before
 * it allocates or seeks (sizes within the format's limits), so callers
 * never act on an unchecked length. Bytes 56..59, reserved in format 1.0,
 * carry the recording's tag since 1.1 (old readers never looked at them).
 */
#include "packets.h"
#include "util/util.h"

#include <errno.h>
#include <string.h>

#define HDR_CRC_OFF 60
#define HDR_SIZE_MAX 4096 /* larger hdr_size values are refused */

/* Largest compressed size accepted for a raw size: above zstd's own
 * compress bound, simple enough to state in FORMAT.md. */
static uint64_t comp_limit(uint32_t raw)
{
	return (uint64_t)raw + raw / 128 + 512;
}

void t4_chunk_hdr_pack(const struct t4_chunk_hdr *h, uint8_t out[T4_CHUNK_HDR_SIZE])
{
	memcpy(out, T4_CHUNK_MAGIC, T4_CHUNK_MAGIC_LEN);
	t4_put_le16(out + 8, h->version);
	t4_put_le16(out + 10, h->hdr_size);
	t4_put_le32(out + 12, h->flags);
	t4_put_le64(out + 16, h->seq);
	t4_put_le64(out + 24, h->first_trigger);
	t4_put_le64(out + 32, h->last_trigger);
	t4_put_le32(out + 40, h->raw_size);
	t4_put_le32(out + 44, h->comp_size);
	t4_put_le32(out + 48, h->packets);
	t4_put_le32(out + 52, h->payload_crc);
	t4_put_le32(out + 56, h->tag);
	t4_put_le32(out + HDR_CRC_OFF, t4_crc32c(0, out, HDR_CRC_OFF));
}

int t4_chunk_hdr_unpack(const uint8_t in[T4_CHUNK_HDR_SIZE], struct t4_chunk_hdr *h)
{
	if (memcmp(in, T4_CHUNK_MAGIC, T4_CHUNK_MAGIC_LEN))
		return t4_err(EBADMSG, "chunk header: bad magic");
	if (t4_get_le32(in + HDR_CRC_OFF) != t4_crc32c(0, in, HDR_CRC_OFF))
		return t4_err(EBADMSG, "chunk header: CRC mismatch");
	h->version = t4_get_le16(in + 8);
	h->hdr_size = t4_get_le16(in + 10);
	h->flags = t4_get_le32(in + 12);
	h->seq = t4_get_le64(in + 16);
	h->first_trigger = t4_get_le64(in + 24);
	h->last_trigger = t4_get_le64(in + 32);
	h->raw_size = t4_get_le32(in + 40);
	h->comp_size = t4_get_le32(in + 44);
	h->packets = t4_get_le32(in + 48);
	h->payload_crc = t4_get_le32(in + 52);
	h->tag = t4_get_le32(in + 56);
	if (h->version == 0)
		return t4_err(EBADMSG, "chunk header: format version 0");
	if (h->hdr_size < T4_CHUNK_HDR_SIZE || h->hdr_size > HDR_SIZE_MAX)
		return t4_err(EBADMSG, "chunk header: header size %u out of range "
			      "(%d..%d)", h->hdr_size, T4_CHUNK_HDR_SIZE, HDR_SIZE_MAX);
	if (h->raw_size > T4_CHUNK_MAX_RAW)
		return t4_err(EBADMSG, "chunk header: raw size %u above the limit %u",
			      h->raw_size, T4_CHUNK_MAX_RAW);
	if (h->comp_size > comp_limit(h->raw_size))
		return t4_err(EBADMSG, "chunk header: compressed size %u too large "
			      "for raw size %u", h->comp_size, h->raw_size);
	/* after the limits: a newer chunk is skipped by its size, which must
	 * be trustworthy (a hdr_size of 0 would never move the reader) */
	if (h->version > T4_FORMAT_VERSION)
		return t4_err(EPROTO, "chunk header: format version %u is newer than "
			      "this t410trace supports (%d)", h->version, T4_FORMAT_VERSION);
	return 0;
}
