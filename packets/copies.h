/* copies.h - internal to the log writer: the metadata it repeats at the
 * start of later chunks (docs/FORMAT.md 4.8), so that a damaged chunk
 * loses only its own packets and a reader that starts anywhere learns
 * the names, events and clocks again.
 *
 * A chunk opens with, in this order:
 *   - a copy of every metadata packet of the chunk before it (session,
 *     domain, event, bookmark, task, GPU context): each such packet is in
 *     two consecutive chunks, so no single damaged chunk takes it away;
 *   - every T4_COPIES_FULL_EVERY chunks, the whole description: the
 *     session, the last packet of every domain and event, and the latest
 *     bookmark (the one in force), for reading after a longer damaged
 *     stretch or from the middle of a file.
 * Why not the whole description in every chunk: it costs 3% of a 1 ms
 * simulated log and 7% of a host log, against 0.4% and 0.9% this way
 * (docs/PERFORMANCE.md, "Self-describing logs").
 *
 * Copies are the bytes of the packets as already encoded (metadata has no
 * delta state, so they are valid in any chunk), each wrapped in a packet
 * of type 8. A chunk spends at most `budget` bytes on copies: the previous
 * chunk's packets past it are not copied, and a full copy that does not fit
 * goes on in the next chunk.
 *
 * Memory: the previous chunk's packets in a buffer of `budget` bytes and
 * the session and latest bookmark in fixed buffers, all allocated at init;
 * the domains and events in a table that grows only when a new one appears
 * (a metadata packet, never a trigger's). Writer thread only.
 */
#ifndef T4_COPIES_H
#define T4_COPIES_H

#include "packets.h"

#define T4_COPIES_FULL_EVERY 8 /* chunks between full copies of the description */

struct cp_ent; /* a domain or event: its key and where its bytes are */

struct t4_copies {
	size_t budget;
	uint8_t *recent;        /* packets of the chunk being filled, encoded */
	size_t recent_len;
	size_t recent_need;     /* their copies' size */
	uint8_t session[T4_PKT_MAX_ENCODED], bookmark[T4_PKT_MAX_ENCODED];
	size_t session_len, bookmark_len;
	uint64_t bookmark_recent; /* seq + 1 of the chunk whose recent copies
				   * hold the latest bookmark, 0 = none */
	struct cp_ent *ent;     /* domains and events, in the order first seen */
	size_t n_ent, cap_ent;
	uint32_t *slots;        /* open addressing: entry index + 1, 0 = empty */
	size_t cap_slots;
	uint8_t *arena;         /* their encoded bytes */
	size_t arena_len, arena_cap, arena_dead;
	size_t full_pos;        /* next item of a full copy in progress, 0 = none
				 * (1 session, 2.. entries, then the bookmark) */
	bool full_failed;       /* a table could not grow: said once */
};

int pkt_copies_init(struct t4_copies *c, size_t budget);
void pkt_copies_free(struct t4_copies *c);
/* An original metadata packet p, encoded as enc[0..len), went into chunk
 * seq. 0, or -ENOMEM when the description could not grow (the packet is
 * then left out of full copies; message in t4_errmsg()). */
int pkt_copies_note(struct t4_copies *c, const struct t4_packet *p, const uint8_t *enc,
		   size_t len, uint64_t seq);
/* Write the copies that open chunk seq into out (at least `budget` bytes
 * of room); returns the bytes written and adds the packets to *n. */
size_t pkt_copies_emit(struct t4_copies *c, uint64_t seq, uint8_t *out, uint32_t *n);

/* codec.c: the copy of an encoded packet enc[0..len) into out (NULL: only
 * its size); the length of the packet we encoded at in[0..len). */
size_t pkt_codec_wrap_copy(const uint8_t *enc, size_t len, uint8_t *out);
size_t pkt_codec_frame_len(const uint8_t *in, size_t len);
/* Whether packets of this type are repeated as copies (metadata without
 * delta state or totals). */
bool pkt_codec_copyable(uint32_t type);

#endif
