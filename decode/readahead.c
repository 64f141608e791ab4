/* readahead.c - decode -j: the log read and unpacked on a thread of its own.
 *
 * Reading a log (zstd, the checksums, the packet codec) is a third of a
 * decode's work and depends on nothing the decoder does, so with two
 * threads or more a reader thread runs t4_reader_next() ahead while the
 * calling thread feeds the packets to the decoder. The packets pass
 * through RA_BATCHES batches of RA_BATCH_BYTES each (t4_packet_size()
 * bytes of every packet, so memory stays bounded whatever the log), and
 * the reader's warnings travel in the same stream, in place: the decoder
 * sees packets and damage in exactly the order a single thread would, so
 * every output is byte for byte the same. The reader's end (its status,
 * its error message, its statistics) is handed over once the reader
 * thread is done.
 * A decoder that stops early (an error) tells the reader thread to stop
 * and waits for it.
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define RA_BATCHES 4
#define RA_BATCH_BYTES (256u * 1024)
#define RA_MSG_MAX 1024 /* a warning longer is cut (the reader's are under 512) */

_Static_assert(RA_BATCH_BYTES >= 4 * (sizeof(struct t4_packet) + RA_MSG_MAX),
	       "a batch holds several of the largest records");

/* One record of a batch: a packet (len bytes of it) or a warning (len
 * bytes of text, no NUL); its payload follows, padded to 8 bytes. */
struct ra_rec {
	uint32_t is_warning, len;
	uint64_t offset; /* a warning's offset in the log */
};

struct ra_batch {
	unsigned char *buf;
	size_t used;
	bool full; /* handed to the decoder */
};

struct t4_readahead {
	struct t4_reader *r;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ra_batch b[RA_BATCHES];
	unsigned put, take; /* next batch to fill, to read */
	bool stop;          /* the decoder wants no more */
	bool done;          /* the reader thread has published its last batch */
	bool halted;        /* (reader thread) stop seen: nothing more is queued */
	/* the reader's end, valid once done */
	int rrc;
	char msg[256];
	struct t4_reader_stats st;
};

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Wait until batch ra->put is free (false: stop). */
static bool wait_free(struct t4_readahead *ra)
{
	bool go;

	pthread_mutex_lock(&ra->mu);
	while (ra->b[ra->put].full && !ra->stop)
		pthread_cond_wait(&ra->cv, &ra->mu);
	go = !ra->stop;
	pthread_mutex_unlock(&ra->mu);
	return go;
}

/* Hand the batch being filled to the decoder (the lock held). */
static void publish_locked(struct t4_readahead *ra)
{
	ra->b[ra->put].full = true;
	ra->put = (ra->put + 1) % RA_BATCHES;
	pthread_cond_broadcast(&ra->cv);
}

/* Room for a record of len payload bytes in the batch being filled,
 * publishing it first when full; NULL: stop. */
static struct ra_rec *room(struct t4_readahead *ra, size_t len)
{
	struct ra_batch *b = &ra->b[ra->put];
	size_t need = sizeof(struct ra_rec) + pad8(len);

	if (ra->halted)
		return NULL;
	if (b->used + need > RA_BATCH_BYTES) {
		pthread_mutex_lock(&ra->mu);
		publish_locked(ra);
		pthread_mutex_unlock(&ra->mu);
		if (!wait_free(ra)) {
			ra->halted = true;
			return NULL;
		}
		b = &ra->b[ra->put];
		b->used = 0;
	}
	struct ra_rec *rec = (struct ra_rec *)(b->buf + b->used);
	b->used += need;
	return rec;
}

void dec_readahead_warning(struct t4_readahead *ra, uint64_t offset, const char *msg)
{
	size_t len = strnlen(msg, RA_MSG_MAX);
	struct ra_rec *rec = room(ra, len);

	if (!rec)
		return;
	*rec = (struct ra_rec){ .is_warning = 1, .len = (uint32_t)len, .offset = offset };
	memcpy(rec + 1, msg, len);
}

static void *reader_main(void *arg)
{
	struct t4_readahead *ra = arg;
	struct t4_packet *p = malloc(sizeof(*p));
	int rrc = -ENOMEM;

	if (!p)
		t4_err(ENOMEM, "out of memory");
	else {
		ra->b[ra->put].used = 0; /* every batch is free at first */
		while ((rrc = t4_reader_next(ra->r, p)) > 0) {
			size_t n = t4_packet_size(p);
			struct ra_rec *rec = room(ra, n);
			if (!rec)
				break;
			*rec = (struct ra_rec){ .len = (uint32_t)n };
			memcpy(rec + 1, p, n);
		}
	}
	free(p);
	ra->rrc = rrc;
	snprintf(ra->msg, sizeof(ra->msg), "%s", rrc < 0 ? t4_errmsg() : "");
	t4_reader_stats(ra->r, &ra->st);
	pthread_mutex_lock(&ra->mu);
	if (!ra->halted && ra->b[ra->put].used)
		publish_locked(ra);
	ra->done = true;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
	return NULL;
}

/* Feed the records of one batch; the first decoder error ends it. */
static int feed_batch(struct t4_decoder *d, const struct ra_batch *b, struct t4_packet *p,
		      t4_reader_warn_fn warn)
{
	for (size_t at = 0; at < b->used;) {
		const struct ra_rec *rec = (const struct ra_rec *)(b->buf + at);
		at += sizeof(*rec) + pad8(rec->len);
		if (rec->is_warning) {
			char msg[RA_MSG_MAX + 1];
			memcpy(msg, rec + 1, rec->len);
			msg[rec->len] = 0;
			warn(d, rec->offset, msg);
			continue;
		}
		memcpy(p, rec + 1, rec->len);
		int rc = t4_decoder_feed(d, p);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void ra_free(struct t4_readahead *ra)
{
	for (unsigned i = 0; i < RA_BATCHES; i++)
		free(ra->b[i].buf);
	pthread_cond_destroy(&ra->cv);
	pthread_mutex_destroy(&ra->mu);
	free(ra);
}

int dec_readahead_feed(struct t4_decoder *d, struct t4_reader *r, struct t4_readahead **slot,
		       t4_reader_warn_fn warn, struct dec_read_end *end)
{
	struct t4_readahead *ra = calloc(1, sizeof(*ra));
	struct t4_packet *p = malloc(sizeof(*p));
	int rc = 0, err = 0;

	if (!ra || !p) {
		free(ra);
		free(p);
		return t4_err(ENOMEM, "out of memory");
	}
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->cv, NULL);
	ra->r = r;
	for (unsigned i = 0; i < RA_BATCHES; i++)
		if (!(ra->b[i].buf = malloc(RA_BATCH_BYTES)))
			rc = t4_err(ENOMEM, "out of memory");
	*slot = ra; /* the reader's warnings go to the queue from now on */
	if (rc < 0 || (err = pthread_create(&ra->thread, NULL, reader_main, ra))) {
		*slot = NULL;
		rc = rc < 0 ? rc : t4_err(err, "decode: cannot start the reader thread");
		ra_free(ra);
		free(p);
		return rc;
	}
	for (;;) {
		struct ra_batch *b = &ra->b[ra->take];
		pthread_mutex_lock(&ra->mu);
		while (!b->full && !ra->done)
			pthread_cond_wait(&ra->cv, &ra->mu);
		bool have = b->full;
		pthread_mutex_unlock(&ra->mu);
		if (!have)
			break; /* done, and every batch read */
		if (rc >= 0)
			rc = feed_batch(d, b, p, warn);
		pthread_mutex_lock(&ra->mu);
		b->full = false;
		ra->stop |= rc < 0;
		ra->take = (ra->take + 1) % RA_BATCHES;
		pthread_cond_broadcast(&ra->cv);
		pthread_mutex_unlock(&ra->mu);
	}
	pthread_join(ra->thread, NULL);
	*slot = NULL;
	end->rrc = ra->rrc;
	snprintf(end->msg, sizeof(end->msg), "%s", ra->msg);
	end->st = ra->st;
	ra_free(ra);
	free(p);
	return rc;
}
