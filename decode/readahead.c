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
 *
 * decode -j with its domains split over workers (parallel.c): every
 * batch goes to each of n decoders, the first on the calling thread and
 * the others on threads of their own; a batch is free again once all of
 * them have fed it (its count of readers left), and each reader knows
 * the batch it waits for by its number (a batch may still hold the
 * previous round for the slower ones).
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
	unsigned pending; /* decoders still to feed it (0: free) */
	uint64_t seq;     /* its number among the batches published */
};

struct t4_readahead {
	struct t4_reader *r;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ra_batch b[RA_BATCHES];
	unsigned put;       /* next batch to fill */
	unsigned n;         /* decoders fed */
	uint64_t published; /* batches handed out so far */
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
	while (ra->b[ra->put].pending && !ra->stop)
		pthread_cond_wait(&ra->cv, &ra->mu);
	go = !ra->stop;
	pthread_mutex_unlock(&ra->mu);
	return go;
}

/* Hand the batch being filled to the decoder (the lock held). */
static void publish_locked(struct t4_readahead *ra)
{
	ra->b[ra->put].pending = ra->n;
	ra->b[ra->put].seq = ra->published++;
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

/* One decoder's side: feed every batch, in order; after an error, only
 * give the batches back until the reader thread stops. */
struct ra_feeder {
	struct t4_readahead *ra;
	struct t4_decoder *d;
	t4_reader_warn_fn warn;
	bool finish;        /* then dec_finish_domains() */
	pthread_t thread;
	bool started;
	int rc;
	uint64_t failed_at; /* packets fed when it failed */
	char msg[256];      /* its error message (t4_errmsg() is per thread) */
};

static void *feeder_main(void *arg)
{
	struct ra_feeder *f = arg;
	struct t4_readahead *ra = f->ra;
	struct t4_packet *p = malloc(sizeof(*p));
	uint64_t want = 0;

	f->rc = p ? 0 : t4_err(ENOMEM, "out of memory");
	f->failed_at = UINT64_MAX;
	for (;;) {
		struct ra_batch *b = &ra->b[want % RA_BATCHES];
		pthread_mutex_lock(&ra->mu);
		while (!(b->pending && b->seq == want) && !(ra->done && ra->published == want))
			pthread_cond_wait(&ra->cv, &ra->mu);
		bool have = b->pending && b->seq == want;
		pthread_mutex_unlock(&ra->mu);
		if (!have)
			break; /* done, and every batch read */
		if (f->rc >= 0 && (f->rc = feed_batch(f->d, b, p, f->warn)) < 0)
			f->failed_at = f->d->n_fed;
		pthread_mutex_lock(&ra->mu);
		b->pending--;
		ra->stop |= f->rc < 0;
		want++;
		pthread_cond_broadcast(&ra->cv);
		pthread_mutex_unlock(&ra->mu);
	}
	free(p);
	if (f->rc >= 0 && f->finish && (f->rc = dec_finish_domains(f->d)) < 0)
		f->failed_at = UINT64_MAX - 1; /* after every packet */
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

static int ra_run(struct t4_decoder *const *ds, unsigned n, struct t4_reader *r,
		  struct t4_readahead **slot, const t4_reader_warn_fn *warns,
		  struct dec_read_end *end, bool finish)
{
	struct t4_readahead *ra = calloc(1, sizeof(*ra));
	struct ra_feeder *fs = calloc(n, sizeof(*fs));
	int rc = 0, err = 0;

	if (!ra || !fs) {
		free(ra);
		free(fs);
		return t4_err(ENOMEM, "out of memory");
	}
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->cv, NULL);
	ra->r = r;
	ra->n = n;
	for (unsigned i = 0; i < RA_BATCHES; i++)
		if (!(ra->b[i].buf = malloc(RA_BATCH_BYTES)))
			rc = t4_err(ENOMEM, "out of memory");
	for (unsigned k = 0; k < n; k++)
		fs[k] = (struct ra_feeder){ .ra = ra, .d = ds[k], .warn = warns[k],
					    .finish = finish };
	*slot = ra; /* the reader's warnings go to the queue from now on */
	if (rc < 0 || (err = pthread_create(&ra->thread, NULL, reader_main, ra))) {
		*slot = NULL;
		rc = rc < 0 ? rc : t4_err(err, "decode: cannot start the reader thread");
		ra_free(ra);
		free(fs);
		return rc;
	}
	for (unsigned k = 1; k < n; k++) {
		if ((err = pthread_create(&fs[k].thread, NULL, feeder_main, &fs[k]))) {
			/* this one feeds nothing: the others must not wait for it */
			fs[k].rc = t4_err(err, "decode: cannot start a worker thread");
			fs[k].failed_at = 0;
			snprintf(fs[k].msg, sizeof(fs[k].msg), "%s", t4_errmsg());
			pthread_mutex_lock(&ra->mu);
			ra->n--;
			ra->stop = true;
			pthread_cond_broadcast(&ra->cv);
			pthread_mutex_unlock(&ra->mu);
		} else {
			fs[k].started = true;
		}
	}
	feeder_main(&fs[0]);
	for (unsigned k = 1; k < n; k++)
		if (fs[k].started)
			pthread_join(fs[k].thread, NULL);
	pthread_join(ra->thread, NULL);
	*slot = NULL;
	end->rrc = ra->rrc;
	snprintf(end->msg, sizeof(end->msg), "%s", ra->msg);
	end->st = ra->st;
	rc = first_failure(fs, n);
	ra_free(ra);
	free(fs);
	return rc;
}

int dec_readahead_feed(struct t4_decoder *d, struct t4_reader *r, struct t4_readahead **slot,
		       t4_reader_warn_fn warn, struct dec_read_end *end)
{
	return ra_run(&d, 1, r, slot, &warn, end, false);
}

int dec_readahead_feed_n(struct t4_decoder *const *ds, unsigned n, struct t4_reader *r,
			 struct t4_readahead **slot, const t4_reader_warn_fn *warns,
			 struct dec_read_end *end)
{
	return ra_run(ds, n, r, slot, warns, end, true);
}
