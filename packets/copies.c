/* copies.c - the metadata the log writer repeats in later chunks (the
 * rules and the trade-off are in copies.h).
 *
 * The description is a table of domains and events in the order first
 * seen (so a full copy lists each domain before its events, as the
 * recorder wrote them), found by key through a small open-addressing index;
 * a packet that redescribes a key replaces its bytes (appended to the
 * arena; the arena is compacted when half of it is dead).
 */
#include "copies.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CP_INIT_ENT 512
#define CP_INIT_ARENA (64u << 10)

struct cp_ent {
	uint64_t key;     /* domain: its ID; event: domain << 32 | index */
	uint32_t type;    /* T4_PKT_DOMAIN or T4_PKT_EVENT */
	uint32_t off, len;
	uint64_t recent;  /* seq + 1 of the chunk whose recent copies hold
			   * its latest bytes, 0 = none */
};

int pkt_copies_init(struct t4_copies *c, size_t budget)
{
	memset(c, 0, sizeof(*c));
	c->budget = budget;
	c->recent = malloc(budget);
	c->ent = malloc(CP_INIT_ENT * sizeof(*c->ent));
	c->slots = calloc(2 * CP_INIT_ENT, sizeof(*c->slots));
	c->arena = malloc(CP_INIT_ARENA);
	if (!c->recent || !c->ent || !c->slots || !c->arena)
		return t4_err(ENOMEM, "out of memory for the log's metadata copies");
	c->cap_ent = CP_INIT_ENT;
	c->cap_slots = 2 * CP_INIT_ENT;
	c->arena_cap = CP_INIT_ARENA;
	return 0;
}

void pkt_copies_free(struct t4_copies *c)
{
	free(c->recent);
	free(c->ent);
	free(c->slots);
	free(c->arena);
	memset(c, 0, sizeof(*c));
}

/* ---- the description table ------------------------------------------- */

static size_t slot_of(uint32_t type, uint64_t key, size_t cap)
{
	return (size_t)t4_mix64(key * 4 + type) & (cap - 1);
}

/* The slot holding (type, key), or the empty one where it would go. */
static uint32_t *find_slot(const struct t4_copies *c, uint32_t type, uint64_t key)
{
	for (size_t i = slot_of(type, key, c->cap_slots);; i = (i + 1) & (c->cap_slots - 1)) {
		uint32_t v = c->slots[i];
		if (!v || (c->ent[v - 1].type == type && c->ent[v - 1].key == key))
			return &c->slots[i];
	}
}

/* Room for one more entry: the table at most half full. */
static int grow_table(struct t4_copies *c)
{
	if (c->n_ent == c->cap_ent) {
		struct cp_ent *e = realloc(c->ent, 2 * c->cap_ent * sizeof(*e));
		if (!e)
			return -ENOMEM;
		c->ent = e;
		c->cap_ent *= 2;
	}
	if ((c->n_ent + 1) * 2 <= c->cap_slots)
		return 0;
	uint32_t *old = c->slots;
	size_t old_cap = c->cap_slots;
	if (!(c->slots = calloc(2 * old_cap, sizeof(*c->slots)))) {
		c->slots = old;
		return -ENOMEM;
	}
	c->cap_slots = 2 * old_cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			*find_slot(c, c->ent[old[i] - 1].type, c->ent[old[i] - 1].key) = old[i];
	free(old);
	return 0;
}

/* Room for len more bytes in the arena: compact it when half of it is
 * dead, else double it. */
static int grow_arena(struct t4_copies *c, size_t len)
{
	size_t cap = c->arena_cap;
	uint8_t *a;

	if (c->arena_len + len <= cap)
		return 0;
	while (cap - (c->arena_len - c->arena_dead) < len || cap < c->arena_dead * 2)
		cap *= 2;
	if (!(a = malloc(cap)))
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < c->n_ent; i++) {
		memcpy(a + n, c->arena + c->ent[i].off, c->ent[i].len);
		c->ent[i].off = (uint32_t)n;
		n += c->ent[i].len;
	}
	free(c->arena);
	c->arena = a;
	c->arena_cap = cap;
	c->arena_len = n;
	c->arena_dead = 0;
	return 0;
}

/* Keep the bytes of a domain or event as its description. */
static int describe(struct t4_copies *c, uint32_t type, uint64_t key, const uint8_t *enc,
		    size_t len, uint64_t recent)
{
	uint32_t *slot = find_slot(c, type, key);
	struct cp_ent *e;

	if (grow_arena(c, len) < 0)
		return -ENOMEM;
	if (!*slot) {
		if (grow_table(c) < 0)
			return -ENOMEM;
		slot = find_slot(c, type, key); /* the index may have moved */
		c->ent[c->n_ent] = (struct cp_ent){ .key = key, .type = type };
		*slot = (uint32_t)++c->n_ent;
	} else {
		c->arena_dead += c->ent[*slot - 1].len;
	}
	e = &c->ent[*slot - 1];
	memcpy(c->arena + c->arena_len, enc, len);
	e->off = (uint32_t)c->arena_len;
	e->len = (uint32_t)len;
	e->recent = recent;
	c->arena_len += len;
	return 0;
}

/* ---- noting and emitting ---------------------------------------------- */

int pkt_copies_note(struct t4_copies *c, const struct t4_packet *p, const uint8_t *enc,
		   size_t len, uint64_t seq)
{
	size_t need = pkt_codec_wrap_copy(enc, len, NULL);
	uint64_t recent = 0;
	int rc = 0;

	if (p->copy || !pkt_codec_copyable(p->type))
		return 0;
	if (c->recent_need + need <= c->budget) {
		memcpy(c->recent + c->recent_len, enc, len);
		c->recent_len += len;
		c->recent_need += need;
		recent = seq + 1;
	}
	switch (p->type) {
	case T4_PKT_SESSION:
		memcpy(c->session, enc, len);
		c->session_len = len;
		break;
	case T4_PKT_BOOKMARK:
		memcpy(c->bookmark, enc, len);
		c->bookmark_len = len;
		c->bookmark_recent = recent;
		break;
	case T4_PKT_DOMAIN:
		rc = describe(c, T4_PKT_DOMAIN, p->domain.domain_id, enc, len, recent);
		break;
	case T4_PKT_EVENT:
		rc = describe(c, T4_PKT_EVENT, (uint64_t)p->event.domain_id << 32 | p->event.index,
			      enc, len, recent);
		break;
	default: /* tasks, GPU contexts: only the next chunk repeats them */
		break;
	}
	if (rc < 0 && !c->full_failed) {
		c->full_failed = true;
		return t4_err(ENOMEM, "out of memory for the metadata repeated in the log: "
			      "later chunks describe fewer domains");
	}
	return 0;
}

/* One copy of the packet enc[0..len) at out, if `room` allows. */
static size_t wrap(const uint8_t *enc, size_t len, uint8_t *out, size_t room, uint32_t *n)
{
	size_t w = pkt_codec_wrap_copy(enc, len, NULL);

	if (w > room)
		return 0;
	(*n)++;
	return pkt_codec_wrap_copy(enc, len, out);
}

/* The next item of a full copy: its bytes, or NULL at the end. Items the
 * previous chunk's copies already hold (skip) are passed over. */
static const uint8_t *full_item(const struct t4_copies *c, size_t pos, uint64_t seq,
				size_t *len, bool *skip)
{
	*skip = false;
	if (pos == 1) {
		*len = c->session_len;
		*skip = !c->session_len;
		return c->session;
	}
	if (pos - 2 < c->n_ent) {
		const struct cp_ent *e = &c->ent[pos - 2];
		*len = e->len;
		*skip = e->recent == seq;
		return c->arena + e->off;
	}
	if (pos - 2 == c->n_ent) {
		*len = c->bookmark_len;
		*skip = !c->bookmark_len || c->bookmark_recent == seq;
		return c->bookmark;
	}
	return NULL;
}

size_t pkt_copies_emit(struct t4_copies *c, uint64_t seq, uint8_t *out, uint32_t *n)
{
	size_t used = 0, len, w;
	const uint8_t *p;
	bool skip;

	/* the previous chunk's packets: the budget was kept when noting them */
	for (size_t off = 0; off < c->recent_len; off += len) {
		len = pkt_codec_frame_len(c->recent + off, c->recent_len - off);
		used += wrap(c->recent + off, len, out + used, c->budget - used, n);
	}
	c->recent_len = c->recent_need = 0;
	if (!c->full_pos && seq && seq % T4_COPIES_FULL_EVERY == 0)
		c->full_pos = 1;
	while (c->full_pos && (p = full_item(c, c->full_pos, seq, &len, &skip))) {
		/* one that no chunk can hold (a long command line in a tiny
		 * chunk) is passed over, lest it hold up the rest for ever */
		if (!skip && pkt_codec_wrap_copy(p, len, NULL) <= c->budget) {
			if (!(w = wrap(p, len, out + used, c->budget - used, n)))
				return used; /* the rest in the next chunk */
			used += w;
		}
		c->full_pos++;
	}
	c->full_pos = 0;
	return used;
}
