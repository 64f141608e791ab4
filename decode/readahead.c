/* readahead.c - decode -j: the log read and unpacked on threads of their own.
 *
 * Reading a log (zstd, the checksums, the packet codec) is a third of a
 * decode's work and depends on nothing the decoder does; chunks unpack
 * independently (the codec starts afresh at each). With two threads or
 * more, the reader runs in its three steps (packets.h, "the reader, one
 * step at a time") on threads of their own while the calling thread feeds
 * the packets to the decoder:
 *   - a scanner thread finds the chunks in log order and reads their
 *     compressed bytes (t4_reader_next_chunk), each into a slot; the
 *     reader's warnings it meets on the way go into that slot, before
 *     the chunk;
 *   - unpacker threads take the slots in order, several at once, and
 *     decode their packets (t4_unpacker) into the slot's pieces, the
 *     chunk's warning (damage) after its packets; a chunk of at most
 *     RA_SCAN_UNPACK_RAW raw bytes (empty, or a trigger's packets) the
 *     scanner unpacks itself when it is the next to take, for handing it
 *     over would cost more than unpacking it;
 *   - the slots are handed out strictly in log order (advance_locked, by
 *     whichever thread makes progress): the head slot's warnings, then,
 *     once t4_reader_chunk_begin() has said that its first packet does
 *     not open another recording, its pieces as they fill (a chunk is
 *     handed out while still being unpacked), then t4_reader_chunk_end();
 *   - decoders (feeders) read the pieces published, in order.
 * So the decoder sees the packets and the warnings in exactly the order
 * t4_reader_next() gives them, and every output is byte for byte -j 1's;
 * the reader's end (status, message, statistics, and where another
 * recording starts: t4_reader_end_before() once the scanner has stopped)
 * is handed over at the end.
 *
 * Memory is bounded whatever the log: at most RA_SLOTS(u + h) chunks are
 * in flight (u unpackers and h <= RA_HELPERS decoders that unpack too:
 * each one's chunk, two queued, the one handed out), each holding its compressed bytes (as large as a header may
 * declare: about 16 MiB, 256 KiB as record writes them) and at most
 * RA_SLOT_PIECES pieces of RA_PIECE_BYTES of decoded packets (4 MiB: a
 * chunk of the default 256 KiB unpacks to about 4 MB): an unpacker whose
 * slot has no piece free waits until its slot is handed out and the
 * decoders give pieces back; each unpacker has its raw buffer (the
 * chunk's raw size, at most 16 MiB), and so has each decoder that helps. At -j 2
 * (one unpacker and one decoder, or two workers): 5 slots, at most 20 MiB
 * of pieces. The buffers of pieces
 * fed are kept for the next ones (spare), so memory follows what is in
 * use: at -j 2 mostly the chunk handed out and the one being unpacked.
 * A standard input that is a pipe works alike (the scanner reads it in
 * order and forgets what lies before the chunk it is on).
 *
 * decode -j with its domains split over workers (parallel.c): every
 * piece goes to each of n decoders, the first on the calling thread and
 * the others on threads of their own; a piece is free again once all of
 * them have fed it (its count of readers left), and each feeder knows the
 * piece it waits for by its number among those published. A decoder that
 * stops early (an error) stops the scanner and the unpackers; the others
 * feed what was published.
 *
 * Decoders help (the first RA_HELPERS of them: enough to fill the gaps
 * beside the unpackers, with no more memory than an unpacker each): one
 * whose next piece is not published yet claims the next
 * queued chunk and unpacks it itself (with its own t4_unpacker), so that
 * no CPU idles while there is work, whatever the share of unpacking in
 * the log. While it waits for room in that chunk's pieces, it feeds what is
 * published: the pieces it would wait for may be waiting for it (they are
 * freed only once every decoder has fed them), and any published piece is
 * one it has to feed in turn.
 *
 * Waiting: feeders wait on fed_cv (a piece published, the end; those
 * that help also for a chunk queued or room in theirs), unpackers on
 * work_cv (a chunk queued, room), the scanner on scan_cv (its next slot
 * free), and each event wakes only those who wait for it: a log of
 * 200,000 empty chunks blocks 815 times in all at -j 2, 3,460 at -j 7
 * (190,518 and 532,453 when they shared one condition and the unpackers
 * took every chunk; decode_jobs/many_small_chunks_unpacked_by_the_scanner).
 * A chunk with packets still wakes the feeders once when published.
 *
 * Threads at -j N: the scanner (mostly waiting on reads) and a thread
 * per CPU: u = dec_unpackers(N) unpack, about 35% of them (unpacking is
 * 35-40% of -j 1's instructions on a format-3 log), at most
 * DEC_MAX_UNPACKERS, beside one decoder; with the domains split over
 * workers (parallel.c), the workers take one of the unpackers' threads
 * (decode.c): N - u + 1 workers and u - 1 unpackers; at -j 2, two workers
 * that do all the unpacking between them (docs/PERFORMANCE.md).
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define RA_PIECE_BYTES (256u * 1024)
#define RA_SLOT_PIECES 16 /* decoded packets held per chunk in flight: 4 MiB */
#define RA_SLOTS(unpackers) ((unpackers) + 3)
#define RA_HELPERS 2 /* decoders that unpack too (each has its raw buffer) */
#define RA_MSG_MAX 1024 /* a warning longer is cut (the reader's are under 512) */
/* A chunk this small (raw bytes: empty, or a trigger's packets) is
 * unpacked by the scanner itself: unpacking it costs less than handing it
 * to another thread and waking it (a log of 200,000 empty chunks took 5x
 * -j 1's time at -j 2, 10x at -j 7, when each was handed over: 8 futex
 * calls a chunk; docs/PERFORMANCE.md, "Many small chunks"). */
#define RA_SCAN_UNPACK_RAW 256u

/* One record of a piece: a packet (len bytes of it) or a warning (len
 * bytes of text, no NUL); its payload follows, padded to 8 bytes. */
struct ra_rec {
	uint32_t is_warning, len;
	uint64_t offset; /* a warning's offset in the log */
};

_Static_assert(RA_PIECE_BYTES >= 4 * (sizeof(struct ra_rec) + sizeof(struct t4_packet) + RA_MSG_MAX),
	       "a piece holds several of the largest records");

struct ra_slot;

struct ra_piece {
	unsigned char *buf; /* RA_PIECE_BYTES while filled or published */
	size_t used;
	unsigned pending;   /* feeders still to feed it (once published) */
	uint64_t seq;       /* its number among the pieces published */
	struct ra_slot *slot;
};

enum ra_state {
	RA_IDLE,      /* never used */
	RA_SCANNING,  /* the scanner looks for its chunk */
	RA_QUEUED,    /* its chunk read, waiting for an unpacker */
	RA_UNPACKING,
	RA_DONE,      /* unpacked (or the end of the log: is_end) */
};

/* One chunk in flight, with the reader's warnings before it. Its pieces
 * are a ring: piece k is piece[k % RA_SLOT_PIECES]; closed, published
 * and freed count them (freed <= published <= closed). */
struct ra_slot {
	enum ra_state state;
	uint64_t no;             /* its place in the log's order */
	bool has_chunk, is_end;
	bool first_known;        /* res tells whether its first packet is a session */
	bool begun;              /* t4_reader_chunk_begin() said yes */
	struct t4_chunk chunk;
	struct t4_chunk_result res; /* the unpacker's, copied under the lock */
	struct ra_piece piece[RA_SLOT_PIECES];
	unsigned closed, published, freed;
	unsigned pkts_from;      /* pieces before the chunk's packets (warnings) */
};

/* What a scanner or an unpacker is filling. */
struct ra_fill {
	struct ra_slot *s;
	struct ra_piece *p; /* NULL: none taken yet */
};

struct t4_readahead {
	struct t4_reader *r;
	pthread_mutex_t mu;
	pthread_cond_t fed_cv;  /* feeders wait: a piece published, or over */
	pthread_cond_t work_cv; /* unpackers wait: a slot queued, a piece fed */
	pthread_cond_t scan_cv; /* the scanner waits: its next slot free */
	unsigned fed_waiting, work_waiting, scan_waiting; /* (no wake-up when
							      * nobody waits) */
	unsigned room_waiting;  /* of fed_waiting: decoders that wait for room */
	unsigned n;             /* decoders fed */
	bool help;              /* decoders unpack queued chunks while they wait */
	unsigned k;             /* slots */
	struct ra_slot *slots;
	struct ra_piece **pub;  /* published pieces by seq % (k * RA_SLOT_PIECES) */
	uint64_t n_pub;         /* pieces published */
	void *spare;            /* buffers of pieces fed: a list through their
				 * first bytes (memory follows what is in use) */
	uint64_t scan_no;       /* slots the scanner has started */
	uint64_t claim_no;      /* the next slot for an unpacker */
	uint64_t head;          /* the slot being handed out */
	struct ra_fill scan;    /* (scanner) where its warnings go */
	struct t4_unpacker *scan_u; /* (scanner) for the small chunks */
	bool over;              /* nothing more will be published */
	bool halt;              /* the scanner and the unpackers stop */
	struct ra_slot *other;  /* its chunk opens another recording */
	int err;                /* the read-ahead's own failure (memory) */
	char errmsg[256];
	/* the reader's end, valid once over */
	int rrc;
	char msg[256];
};

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static unsigned n_pieces(const struct t4_readahead *ra)
{
	return ra->k * RA_SLOT_PIECES;
}

/* ---- handing out in order ------------------------------------------------ */

static void wait_locked(struct t4_readahead *ra, pthread_cond_t *cv, unsigned *waiting)
{
	(*waiting)++;
	pthread_cond_wait(cv, &ra->mu);
	(*waiting)--;
}

static void wake_locked(pthread_cond_t *cv, unsigned waiting)
{
	if (waiting)
		pthread_cond_broadcast(cv);
}

/* Wake those waiting for a slot to unpack: the unpackers, and the
 * decoders that help them. Each wait has its own condition, so that nobody
 * wakes for what it does not wait for (a wake-up per chunk for nothing is
 * most of a log of tiny chunks' time). */
static void wake_queued_locked(struct t4_readahead *ra)
{
	wake_locked(&ra->work_cv, ra->work_waiting);
	if (ra->help)
		wake_locked(&ra->fed_cv, ra->fed_waiting);
}

/* Wake those waiting for room in a slot (a piece fed): the unpackers,
 * the decoders unpacking, and the scanner (the slot may be free). */
static void wake_room_locked(struct t4_readahead *ra)
{
	wake_locked(&ra->work_cv, ra->work_waiting);
	wake_locked(&ra->fed_cv, ra->room_waiting);
	wake_locked(&ra->scan_cv, ra->scan_waiting);
}

static void publish_locked(struct t4_readahead *ra, struct ra_slot *s)
{
	struct ra_piece *p = &s->piece[s->published++ % RA_SLOT_PIECES];

	p->pending = ra->n;
	p->seq = ra->n_pub++;
	ra->pub[p->seq % n_pieces(ra)] = p;
}

static void stop_locked(struct t4_readahead *ra)
{
	ra->over = ra->halt = true;
	wake_locked(&ra->fed_cv, ra->fed_waiting);
	wake_locked(&ra->work_cv, ra->work_waiting);
	wake_locked(&ra->scan_cv, ra->scan_waiting);
}

/* Publish what the head slots have ready, in log order (the lock held). */
static void hand_out_locked(struct t4_readahead *ra)
{
	while (!ra->over) {
		struct ra_slot *s = &ra->slots[ra->head % ra->k];

		if (s->no != ra->head || s->state == RA_IDLE)
			return; /* not started */
		while (s->published < s->closed && (s->published < s->pkts_from || s->begun))
			publish_locked(ra, s);
		if (s->state == RA_SCANNING)
			return;
		if (s->has_chunk && !s->begun) {
			if (!s->first_known)
				return;
			if (!t4_reader_chunk_begin(ra->r, &s->res)) {
				ra->other = s; /* another recording: nothing of it */
				stop_locked(ra);
				return;
			}
			s->begun = true;
			continue;
		}
		if (s->state != RA_DONE)
			return;
		if (s->is_end) {
			ra->over = true;
			return;
		}
		t4_reader_chunk_end(ra->r, &s->res);
		ra->head++;
	}
}

/* hand_out_locked(), waking whom it concerns. */
static void advance_locked(struct t4_readahead *ra)
{
	uint64_t pub = ra->n_pub, head = ra->head;
	bool over = ra->over;

	hand_out_locked(ra);
	if (ra->n_pub != pub || ra->over != over)
		wake_locked(&ra->fed_cv, ra->fed_waiting);
	if (ra->head != head)
		wake_locked(&ra->scan_cv, ra->scan_waiting); /* a slot may be free */
}

/* ---- filling pieces -------------------------------------------------------- */

static void fail_locked(struct t4_readahead *ra, int err, const char *msg)
{
	if (!ra->err) {
		ra->err = -err;
		snprintf(ra->errmsg, sizeof(ra->errmsg), "%s", msg);
	}
	stop_locked(ra);
}

/* Close the piece being filled (res: the unpacker's result so far, which
 * then tells the chunk's first packet). */
static void close_piece(struct t4_readahead *ra, struct ra_fill *f,
			const struct t4_chunk_result *res)
{
	pthread_mutex_lock(&ra->mu);
	if (res) {
		f->s->res = *res;
		f->s->first_known = true;
	}
	f->s->closed++;
	advance_locked(ra);
	pthread_mutex_unlock(&ra->mu);
	f->p = NULL;
}

struct ra_feeder;
static bool feed_next_locked(struct t4_readahead *ra, struct ra_feeder *f);
static void hand_over_rows(struct t4_readahead *ra, struct ra_feeder *f);

/* Room for need bytes in f's piece, taking the slot's next one when it
 * is full (waiting for it to be fed when all are out): the place, or
 * NULL when the read-ahead stops. self: the decoder unpacking (helping),
 * which feeds what is published while it waits, for the pieces it waits
 * for may be waiting for it; NULL for an unpacker or the scanner. */
static void *reserve(struct t4_readahead *ra, struct ra_fill *f, size_t need,
		     const struct t4_chunk_result *res, struct ra_feeder *self)
{
	struct ra_slot *s = f->s;

	if (f->p && f->p->used + need > RA_PIECE_BYTES)
		close_piece(ra, f, res);
	if (!f->p) {
		struct ra_piece *p;
		pthread_mutex_lock(&ra->mu);
		bool idle = false;
		while (s->closed - s->freed >= RA_SLOT_PIECES && !ra->halt) {
			if (self && feed_next_locked(ra, self)) {
				idle = false;
				continue;
			}
			if (self && !idle) {
				hand_over_rows(ra, self); /* (a worker ahead may wait for them) */
				idle = true;
				continue;
			}
			if (self) {
				ra->room_waiting++;
				wait_locked(ra, &ra->fed_cv, &ra->fed_waiting);
				ra->room_waiting--;
			} else
				wait_locked(ra, &ra->work_cv, &ra->work_waiting);
		}
		p = ra->halt ? NULL : &s->piece[s->closed % RA_SLOT_PIECES];
		if (p && !p->buf && ra->spare) { /* (one never closed keeps its own) */
			p->buf = ra->spare;
			memcpy(&ra->spare, p->buf, sizeof(ra->spare));
		} else if (p && !p->buf && !(p->buf = malloc(RA_PIECE_BYTES))) {
			fail_locked(ra, ENOMEM, "decode: out of memory");
			p = NULL;
		}
		pthread_mutex_unlock(&ra->mu);
		if (!p)
			return NULL;
		p->used = 0;
		p->slot = s;
		f->p = p;
	}
	return f->p->buf + f->p->used;
}

static void put_warning(struct t4_readahead *ra, struct ra_fill *f, uint64_t offset,
			const char *msg, const struct t4_chunk_result *res, struct ra_feeder *self)
{
	size_t len = strnlen(msg, RA_MSG_MAX);
	struct ra_rec *rec = reserve(ra, f, sizeof(*rec) + pad8(len), res, self);

	if (!rec)
		return;
	*rec = (struct ra_rec){ .is_warning = 1, .len = (uint32_t)len, .offset = offset };
	memcpy(rec + 1, msg, len);
	f->p->used += sizeof(*rec) + pad8(len);
}

void dec_readahead_warning(struct t4_readahead *ra, uint64_t offset, const char *msg)
{
	put_warning(ra, &ra->scan, offset, msg, NULL, NULL);
}

/* ---- the scanner ------------------------------------------------------------ */

static bool slot_free_locked(const struct t4_readahead *ra, const struct ra_slot *s)
{
	return s->state == RA_IDLE || (s->no < ra->head && s->freed == s->closed);
}

static void unpack_slot(struct t4_readahead *ra, struct t4_unpacker *u, struct ra_slot *s,
			struct ra_feeder *self);

/* The scanner claims slot s, just queued, to unpack it itself when its
 * chunk is small and it is the next to claim (claims stay in log order). */
static bool claim_small_locked(struct t4_readahead *ra, struct ra_slot *s)
{
	if (!ra->scan_u || s->chunk.h.raw_size > RA_SCAN_UNPACK_RAW || ra->claim_no != s->no)
		return false;
	s->state = RA_UNPACKING;
	ra->claim_no++;
	return true;
}

static void *scanner_main(void *arg)
{
	struct t4_readahead *ra = arg;

	for (int rc = 1; rc > 0;) {
		struct ra_slot *s = &ra->slots[ra->scan_no % ra->k];
		pthread_mutex_lock(&ra->mu);
		while (!slot_free_locked(ra, s) && !ra->halt)
			wait_locked(ra, &ra->scan_cv, &ra->scan_waiting);
		if (ra->halt) {
			pthread_mutex_unlock(&ra->mu);
			break;
		}
		s->no = ra->scan_no++;
		s->state = RA_SCANNING;
		s->has_chunk = s->is_end = s->first_known = s->begun = false;
		s->closed = s->published = s->freed = 0;
		s->pkts_from = UINT32_MAX;
		pthread_mutex_unlock(&ra->mu);

		ra->scan = (struct ra_fill){ .s = s };
		rc = t4_reader_next_chunk(ra->r, &s->chunk);
		char msg[sizeof(ra->msg)];
		snprintf(msg, sizeof(msg), "%s", rc < 0 ? t4_errmsg() : "");
		if (ra->scan.p && ra->scan.p->used)
			close_piece(ra, &ra->scan, NULL);
		pthread_mutex_lock(&ra->mu);
		s->pkts_from = s->closed;
		s->has_chunk = rc > 0;
		s->is_end = rc <= 0;
		s->state = rc > 0 ? RA_QUEUED : RA_DONE;
		if (rc <= 0) {
			ra->rrc = rc;
			memcpy(ra->msg, msg, sizeof(msg));
		}
		bool mine = rc > 0 && claim_small_locked(ra, s);
		advance_locked(ra);
		if (!mine)
			wake_queued_locked(ra);
		pthread_mutex_unlock(&ra->mu);
		if (mine)
			unpack_slot(ra, ra->scan_u, s, NULL);
	}
	return NULL;
}

/* ---- the unpackers ------------------------------------------------------------ */

struct ra_unpacker {
	struct t4_readahead *ra;
	struct t4_unpacker *u;
	pthread_t thread;
	bool started;
};

/* Decode slot s's chunk into its pieces, its warning after them (self:
 * the decoder doing it, or NULL: an unpacker). */
static void unpack_slot(struct t4_readahead *ra, struct t4_unpacker *u, struct ra_slot *s,
			struct ra_feeder *self)
{
	const struct t4_chunk_result *res = t4_unpacker_result(u);
	struct ra_fill f = { .s = s };

	t4_unpacker_start(u, &s->chunk);
	for (;;) {
		struct ra_rec *rec = reserve(ra, &f, sizeof(*rec) + pad8(sizeof(struct t4_packet)),
					     res, self);
		if (!rec)
			return; /* stopped */
		struct t4_packet *p = (struct t4_packet *)(rec + 1);
		if (!t4_unpacker_next(u, p))
			break;
		*rec = (struct ra_rec){ .len = (uint32_t)t4_packet_size(p) };
		f.p->used += sizeof(*rec) + pad8(rec->len);
	}
	if (res->warning[0])
		put_warning(ra, &f, res->offset, res->warning, res, self);
	pthread_mutex_lock(&ra->mu);
	if (f.p && f.p->used)
		s->closed++;
	s->res = *res;
	s->first_known = true;
	s->state = RA_DONE;
	advance_locked(ra);
	pthread_mutex_unlock(&ra->mu);
}

/* The next slot to unpack, claimed; NULL when there is none yet (*end:
 * nor will there be, the log or the read-ahead is over). */
static struct ra_slot *claim_locked(struct t4_readahead *ra, bool *end)
{
	struct ra_slot *s = &ra->slots[ra->claim_no % ra->k];

	*end = ra->halt || (s->no == ra->claim_no && s->state == RA_DONE && s->is_end);
	if (*end || s->no != ra->claim_no || s->state != RA_QUEUED)
		return NULL;
	s->state = RA_UNPACKING;
	ra->claim_no++;
	return s;
}

static void *unpacker_main(void *arg)
{
	struct ra_unpacker *w = arg;
	struct t4_readahead *ra = w->ra;
	bool end = false;

	pthread_mutex_lock(&ra->mu);
	while (!end) {
		struct ra_slot *s = claim_locked(ra, &end);
		if (!s) {
			if (!end)
				wait_locked(ra, &ra->work_cv, &ra->work_waiting);
			continue;
		}
		pthread_mutex_unlock(&ra->mu);
		unpack_slot(ra, w->u, s, NULL);
		pthread_mutex_lock(&ra->mu);
	}
	pthread_mutex_unlock(&ra->mu);
	return NULL;
}

/* ---- the decoders --------------------------------------------------------------- */

/* Feed the records of one piece; the first decoder error ends it. A
 * packet is fed where it lies: sizeof(struct t4_packet) bytes from it are
 * inside the piece (reserve), those past its t4_packet_size() are the
 * next record's, which nothing reads. */
static int feed_piece(struct t4_decoder *d, const struct ra_piece *pc, t4_reader_warn_fn warn)
{
	for (size_t at = 0; at < pc->used;) {
		const struct ra_rec *rec = (const struct ra_rec *)(pc->buf + at);
		at += sizeof(*rec) + pad8(rec->len);
		if (rec->is_warning) {
			char msg[RA_MSG_MAX + 1];
			memcpy(msg, rec + 1, rec->len);
			msg[rec->len] = 0;
			warn(d, rec->offset, msg);
			continue;
		}
		int rc = t4_decoder_feed(d, (const struct t4_packet *)(rec + 1));
		if (rc < 0)
			return rc;
		if (d->split)
			dec_split_fed(d->split, d->n_fed);
	}
	return 0;
}

/* One decoder's side: feed every piece, in order; after an error, only
 * give the pieces back until nothing more is published. With help, it
 * unpacks the next queued chunk whenever the piece it wants is not there
 * yet (its own unpacker u). */
struct ra_feeder {
	struct t4_readahead *ra;
	struct t4_decoder *d;
	t4_reader_warn_fn warn;
	struct t4_unpacker *u; /* NULL: it does not help */
	bool finish;        /* then dec_finish_domains() */
	pthread_t thread;
	bool started;
	int rc;
	uint64_t want;      /* the next piece it feeds, by seq */
	uint64_t failed_at; /* packets fed when it failed */
	char msg[256];      /* its error message (t4_errmsg() is per thread) */
};

/* Feed f's next piece if it is published (the lock held, released while
 * feeding), and give it back; false if it is not there yet. */
static bool feed_next_locked(struct t4_readahead *ra, struct ra_feeder *f)
{
	struct ra_piece *pc = ra->pub[f->want % n_pieces(ra)];

	if (!pc || pc->seq != f->want || !pc->pending)
		return false;
	pthread_mutex_unlock(&ra->mu);
	if (f->rc >= 0 && (f->rc = feed_piece(f->d, pc, f->warn)) < 0)
		f->failed_at = f->d->n_fed;
	pthread_mutex_lock(&ra->mu);
	f->want++;
	if (!--pc->pending) {
		pc->slot->freed++; /* (pieces are fed in order: freed in order) */
		memcpy(pc->buf, &ra->spare, sizeof(ra->spare));
		ra->spare = pc->buf;
		pc->buf = NULL;
		wake_room_locked(ra);
	}
	if (f->rc < 0)
		stop_locked(ra);
	return true;
}

/* Decode -j with rows made by the workers (parallel.c): f's rows so far
 * handed over, the lock released meanwhile. */
static void hand_over_rows(struct t4_readahead *ra, struct ra_feeder *f)
{
	if (!f->d->split)
		return;
	pthread_mutex_unlock(&ra->mu);
	dec_split_idle(f->d->split);
	pthread_mutex_lock(&ra->mu);
}

static void *feeder_main(void *arg)
{
	struct ra_feeder *f = arg;
	struct t4_readahead *ra = f->ra;
	bool end = false, idle = false;

	f->rc = 0;
	f->want = 0;
	f->failed_at = UINT64_MAX;
	pthread_mutex_lock(&ra->mu);
	while (!(ra->over && ra->n_pub == f->want)) { /* over, and every piece fed */
		if (feed_next_locked(ra, f)) {
			idle = false;
			continue;
		}
		if (!idle) {
			/* its rows merged before it waits or unpacks: a worker
			 * ahead may wait for them */
			hand_over_rows(ra, f);
			idle = true;
			continue;
		}
		struct ra_slot *s = f->u && !end ? claim_locked(ra, &end) : NULL;
		if (!s) {
			wait_locked(ra, &ra->fed_cv, &ra->fed_waiting);
			continue;
		}
		pthread_mutex_unlock(&ra->mu);
		unpack_slot(ra, f->u, s, f);
		pthread_mutex_lock(&ra->mu);
	}
	pthread_mutex_unlock(&ra->mu);
	if (f->rc >= 0 && f->finish && (f->rc = dec_finish_domains(f->d)) < 0)
		f->failed_at = UINT64_MAX - 1; /* after every packet */
	if (f->d->split)
		dec_split_end(f->d->split); /* (its rows merged; nobody waits for it) */
	snprintf(f->msg, sizeof(f->msg), "%s", f->rc < 0 ? t4_errmsg() : "");
	return NULL;
}

/* The status of the feeder that failed first in the log's order (the
 * lowest worker of those that failed at the same packet), its message
 * made this thread's. */
static int first_failure(const struct ra_feeder *fs, unsigned n)
{
	const struct ra_feeder *first = NULL;

	for (unsigned k = 0; k < n; k++)
		if (fs[k].rc < 0 && (!first || fs[k].failed_at < first->failed_at))
			first = &fs[k];
	return first ? t4_err(-first->rc, "%s", first->msg) : 0;
}

/* ---- the whole ---------------------------------------------------------------- */

unsigned dec_unpackers(unsigned jobs)
{
	unsigned u = (7 * jobs + 10) / 20; /* 35%, rounded */

	return u < 1 ? 1 : u > DEC_MAX_UNPACKERS ? DEC_MAX_UNPACKERS : u;
}

static void ra_free(struct t4_readahead *ra, struct ra_unpacker *us, unsigned n_us)
{
	for (unsigned i = 0; i < ra->k; i++) {
		for (unsigned j = 0; j < RA_SLOT_PIECES; j++)
			free(ra->slots[i].piece[j].buf);
		t4_chunk_free(&ra->slots[i].chunk);
	}
	while (ra->spare) {
		void *b = ra->spare;
		memcpy(&ra->spare, b, sizeof(ra->spare));
		free(b);
	}
	for (unsigned i = 0; i < n_us; i++)
		t4_unpacker_free(us[i].u);
	t4_unpacker_free(ra->scan_u);
	free(us);
	free(ra->slots);
	free(ra->pub);
	pthread_cond_destroy(&ra->fed_cv);
	pthread_cond_destroy(&ra->work_cv);
	pthread_cond_destroy(&ra->scan_cv);
	pthread_mutex_destroy(&ra->mu);
	free(ra);
}

/* (help: the first RA_HELPERS of the n decoders unpack too, as many
 * chunks more at once) */
static struct t4_readahead *ra_new(struct t4_reader *r, unsigned n, unsigned n_us, bool help)
{
	struct t4_readahead *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return NULL;
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->fed_cv, NULL);
	pthread_cond_init(&ra->work_cv, NULL);
	pthread_cond_init(&ra->scan_cv, NULL);
	ra->r = r;
	ra->n = n;
	ra->help = help;
	ra->k = RA_SLOTS(n_us + (help ? (n < RA_HELPERS ? n : RA_HELPERS) : 0));
	ra->slots = calloc(ra->k, sizeof(*ra->slots));
	ra->pub = calloc(n_pieces(ra), sizeof(*ra->pub));
	if (!ra->slots || !ra->pub || t4_unpacker_new(&ra->scan_u) < 0) {
		ra_free(ra, NULL, 0);
		return NULL;
	}
	return ra;
}

/* Start the threads (feeders first: nothing is published before they
 * are counted). A failure to start one stops the read-ahead. */
static void ra_start(struct t4_readahead *ra, struct ra_feeder *fs, unsigned n,
		     struct ra_unpacker *us, unsigned n_us, pthread_t *scanner, bool *scanning)
{
	int err = 0;

	for (unsigned k = 1; k < n; k++) {
		if ((err = pthread_create(&fs[k].thread, NULL, feeder_main, &fs[k]))) {
			/* this one feeds nothing: the others must not wait for it */
			fs[k].rc = t4_err(err, "cannot start a worker thread: %s", strerror(err));
			fs[k].failed_at = 0;
			snprintf(fs[k].msg, sizeof(fs[k].msg), "%s", t4_errmsg());
			if (fs[k].d->split)
				dec_split_end(fs[k].d->split);
			pthread_mutex_lock(&ra->mu);
			ra->n--;
			stop_locked(ra);
			pthread_mutex_unlock(&ra->mu);
		} else {
			fs[k].started = true;
		}
	}
	for (unsigned i = 0; i < n_us && !err; i++) {
		us[i].ra = ra;
		if (!(err = t4_unpacker_new(&us[i].u) < 0 ? ENOMEM : 0) &&
		    !(err = pthread_create(&us[i].thread, NULL, unpacker_main, &us[i])))
			us[i].started = true;
	}
	if (!err && !(err = pthread_create(scanner, NULL, scanner_main, ra)))
		*scanning = true;
	if (err) {
		pthread_mutex_lock(&ra->mu);
		fail_locked(ra, err, "cannot start the reader threads");
		pthread_mutex_unlock(&ra->mu);
	}
}

/* ---- how many threads can start ------------------------------------------- */

struct probe {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool go;
};

/* A probe's thread: it lives until every probe has been started. */
static void *probe_main(void *arg)
{
	struct probe *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->go)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

unsigned dec_threads_startable(unsigned want, int *err)
{
	struct probe p = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false };
	pthread_t *t = calloc(want ? want : 1, sizeof(*t));
	unsigned n = 0;

	*err = t ? 0 : ENOMEM;
	while (t && n < want && !(*err = pthread_create(&t[n], NULL, probe_main, &p)))
		n++;
	pthread_mutex_lock(&p.mu);
	p.go = true;
	pthread_cond_broadcast(&p.cv);
	pthread_mutex_unlock(&p.mu);
	for (unsigned i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	return n;
}

static void feeders_free(struct ra_feeder *fs, unsigned n)
{
	for (unsigned k = 0; fs && k < n; k++)
		t4_unpacker_free(fs[k].u);
	free(fs);
}

static int ra_run(struct t4_decoder *const *ds, unsigned n, unsigned n_us, struct t4_reader *r,
		  struct t4_readahead **slot, const t4_reader_warn_fn *warns,
		  struct dec_read_end *end, bool finish)
{
	struct t4_readahead *ra = ra_new(r, n, n_us, true);
	struct ra_feeder *fs = calloc(n, sizeof(*fs));
	struct ra_unpacker *us = calloc(n_us ? n_us : 1, sizeof(*us));
	pthread_t scanner;
	bool scanning = false;
	int rc = 0;

	for (unsigned k = 0; fs && k < n && rc >= 0; k++) {
		fs[k] = (struct ra_feeder){ .ra = ra, .d = ds[k], .warn = warns[k],
					    .finish = finish };
		if (k < RA_HELPERS)
			rc = t4_unpacker_new(&fs[k].u);
	}
	if (!ra || !fs || !us || rc < 0) {
		if (ra)
			ra_free(ra, us, 0);
		else
			free(us);
		feeders_free(fs, n);
		return t4_err(ENOMEM, "out of memory");
	}
	*slot = ra; /* the reader's warnings go to the scanner's slot from now on */
	ra_start(ra, fs, n, us, n_us, &scanner, &scanning);
	feeder_main(&fs[0]);
	for (unsigned k = 1; k < n; k++)
		if (fs[k].started)
			pthread_join(fs[k].thread, NULL);
	pthread_mutex_lock(&ra->mu);
	stop_locked(ra); /* (a decoder failed before the end: the others stop) */
	pthread_mutex_unlock(&ra->mu);
	for (unsigned i = 0; i < n_us; i++)
		if (us[i].started)
			pthread_join(us[i].thread, NULL);
	if (scanning)
		pthread_join(scanner, NULL);
	*slot = NULL;
	if (ra->other) {
		t4_reader_end_before(r, &ra->other->chunk);
		ra->rrc = 0;
	}
	end->rrc = ra->rrc;
	snprintf(end->msg, sizeof(end->msg), "%s", ra->msg);
	t4_reader_stats(r, &end->st);
	rc = first_failure(fs, n);
	if (rc >= 0 && ra->err)
		rc = t4_err(-ra->err, "%s", ra->errmsg);
	ra_free(ra, us, n_us);
	feeders_free(fs, n);
	return rc;
}

int dec_readahead_feed(struct t4_decoder *d, struct t4_reader *r, unsigned unpackers,
		       struct t4_readahead **slot, t4_reader_warn_fn warn,
		       struct dec_read_end *end)
{
	return ra_run(&d, 1, unpackers, r, slot, &warn, end, false);
}

int dec_readahead_feed_n(struct t4_decoder *const *ds, unsigned n, unsigned unpackers,
			 struct t4_reader *r, struct t4_readahead **slot,
			 const t4_reader_warn_fn *warns, struct dec_read_end *end)
{
	return ra_run(ds, n, unpackers, r, slot, warns, end, true);
}
