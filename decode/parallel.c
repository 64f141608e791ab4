/* parallel.c - decode -j: the clock domains decoded by N workers at once.
 *
 * N is the share of -j's CPUs that decodes (the others unpack the log's
 * chunks: readahead.c, dec_unpackers), when it is 2 or more.
 * After the join with the reference packets, one domain's pipeline (dom.c:
 * reorder, clock model, hand-out, totals, phase attribution) reads nothing
 * of another's. So each worker is a whole decoder (struct t4_decoder)
 * that is fed EVERY packet of the log (readahead.c's batches, read once
 * by one reader thread and shared read-only by the workers): its index,
 * its reference rings, its phases, its slices and its damage epochs are
 * therefore exactly those of -j 1; but it hands the returns of a domain
 * to that domain's pipeline only when it owns the domain (slot modulo N,
 * the slot being the order of the domains' first returns, which every
 * worker sees alike). The costly part (the clock model and the hand-out,
 * two thirds of a decode with the reading on its own thread) is thus
 * split N ways; the copies of the shared part (the index, the reference
 * packets: a few percent) are the price.
 *
 * Worker 0 is the caller's decoder, with its sink; the others have none
 * and say nothing (the reader's warnings are said once, by worker 0, in
 * their place among the packets). At the end of the log each worker ends
 * its own domains (dec_finish_domains: their last intervals, their
 * totals) on its thread; then the domains are gathered into worker 0,
 * which finishes (phases, checks, the sink's phase and finish calls) as
 * -j 1 does. Where a worker's state can differ from -j 1's, the gathering
 * puts back -j 1's:
 *   - the origin is fixed by the first output of any domain: -j 1's is
 *     that of the worker whose first output came at the earliest packet
 *     (workers at the same packet have the same index, so the same one);
 *   - the phases, and the slots of the bookmark names' totals, are those
 *     of -j 1 in every worker: spans come from the reference and bookmark
 *     packets only (the span a first output makes when there is none,
 *     phases_ensure(), is never made while packets come: every output
 *     waits for a reference packet of its scheduler, and the first
 *     reference packet of the phase scheduler makes a span; in a log
 *     without a plausible one, the outputs all come at its end, from the
 *     workers that own domains, and gather() gives that span to every
 *     worker), which gather() checks.
 *
 * The origin is fixed at the first output of any domain (or slice): at its
 * first output a worker publishes its packet and origin and waits until
 * every other worker has made its own or passed that packet, then takes
 * the earliest one's (dec_split_origin), so every row in relative time is
 * -j 1's (gather() then finds the workers agreeing).
 *
 * Rows (CSV, JSONL, Perfetto: the sinks with t4_sink_ops.fork) are made
 * by the workers, each into a copy of the sink that writes into memory
 * (worker 0 into the caller's, its writer set aside for the merge), and
 * merged in -j 1's order. -j 1 makes a domain's rows while it handles
 * packet n_fed (a return packet drains its own domain; a reference packet
 * its scheduler's domains in slot order, drain_sched; the end every
 * domain in slot order, dec_finish_domains, key n_fed + 1); slices (worker
 * 0's alone) come before a packet's intervals (a reference packet pairs
 * the clocks before it drains). So (packet, slot + 1, or 0 for a slice,
 * then the order made) orders -j 1's rows totally, and no two workers
 * share a key. A worker's bytes go into blocks with their runs of one
 * key; it hands a block over (hand_over) at PAR_STEP bytes, mid-packet
 * too, with the packet it has fed up to (its mark: `ready`), and when it
 * is about to wait for packets, or reaches the packet another worker
 * waits for. Whichever thread hands over writes every queued run below
 * every worker's mark in key order (merge_locked) to the caller's
 * output: long runs where they lie, short ones copied together, one
 * writev for many (dec_gather_flush, before the lock goes: the blocks
 * written are then reused). A worker with more than PAR_LIMIT queued
 * waits, while it is ahead, until half is written: no deadlock, since a
 * worker behind needs only packets already handed out to reach it
 * (readahead.c keeps the pieces a worker is feeding), hands its runs over
 * before it waits for more, and the worker with the lowest mark never
 * waits. What one thread
 * writes once (the JSONL header, Perfetto's clock snapshot, root and kind
 * group tracks: out_once) is written by each worker at its own first
 * need, marked, and kept the first time in key order, which is where -j 1
 * writes it; at the end the copies' state goes back into the caller's
 * sink (t4_sink_ops.join) for the phases, the slices flushed at the end
 * and the finish. A failed write (a full disk, EPIPE) stops every
 * worker's rows, and the decode ends with -j 1's error (out_close).
 *
 * The report (its tables are made interval by interval, on one sink),
 * --bin (its cells count from the origin while it moves) and --from/--to
 * (measured from the origin) decode on one thread, as with -j 1
 * (dec_parallel_ok), the reading still ahead on its own thread. So every
 * output is the same byte for byte whatever -j.
 */
#include "decode_int.h"
#include "out.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#define PAR_STEP (256u * 1024)        /* a worker's rows handed over at this size */
#define PAR_LIMIT (4u * 1024 * 1024)  /* a worker ahead waits with this much queued */
#define PAR_DONE UINT64_MAX           /* a worker's packets fed: all, and finished */
#define PAR_RECHECK_NS 10000000L      /* a waiter looks again at least this often */

bool dec_parallel_ok(const struct t4_decoder *d, unsigned workers)
{
	return workers > 1 && (!d->ops.interval || d->ops.fork) && !d->o.bin_ns &&
	       !d->o.from.set && !d->o.to.set;
}

/* ---- the rows' merge ---------------------------------------------------------- */

/* A run of a worker's bytes under one key: made while the decoder fed
 * packet pkt (the packets after the last: the end), for the domain in
 * slot key_slot - 1 (0: a slice); once: 1 + the id of bytes written once
 * (0: none). It ends where the next run of its block starts. */
struct par_run {
	uint64_t pkt;
	uint32_t key_slot;
	uint32_t once;
	size_t start;
};

/* Rows handed over: the bytes and their runs. */
struct par_block {
	struct par_block *next;
	char *buf;
	size_t len, cap;
	struct par_run *runs;
	size_t n_runs, cap_runs;
	size_t at; /* the next run to write */
};

struct par;

struct dec_split {
	struct par *par;
	struct t4_decoder *d;
	struct t4_output *x;   /* its sink (NULL: it makes no rows) */
	struct t4_wbuf saved;  /* x's own writer (worker 0's: par's out) */
	struct par_block *cur; /* being filled: its buffer is x->w's */
	uint64_t pkt;          /* the key of the rows being made */
	uint32_t key_slot;
	_Atomic uint64_t done;  /* packets fed (PAR_DONE: over) */
	_Atomic uint64_t ready; /* its rows of packets up to this one are queued */
	/* under the lock: */
	struct par_block *head, *tail; /* queued, in its order */
	size_t queued;                 /* their bytes */
	uint64_t first;                /* the packet of its first output (UINT64_MAX) */
	uint64_t first_origin;         /* and the origin then */
	uint64_t need;                 /* waiting for the others to reach this
					* packet (0: not waiting) */
	uint64_t told;                 /* (its own) the last need it woke for */
};

struct par {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	_Atomic uint64_t need;    /* the least packet a worker waits for the
				   * others to reach (PAR_DONE: none waits) */
	_Atomic int werr;         /* the output failed: rows are refused */
	bool test_untimed;        /* (t4_decoder.test_untimed_waits) */
	unsigned n;
	struct dec_gather out;    /* the output's writer (worker 0's sink's) */
	uint64_t once[DEC_ONCE_IDS / 64];
	struct par_block *spare;
	struct dec_split w[DEC_MAX_WORKERS];
};

static void block_free(struct par_block *b)
{
	if (b) {
		free(b->buf);
		free(b->runs);
		free(b);
	}
}

/* A block to fill: a spare one, or new (NULL: out of memory). */
static struct par_block *block_get(struct par *p)
{
	struct par_block *b;

	pthread_mutex_lock(&p->mu);
	if ((b = p->spare))
		p->spare = b->next;
	pthread_mutex_unlock(&p->mu);
	if (b && b->cap > 2 * PAR_STEP) { /* (grown by a long row: not kept) */
		free(b->buf);
		b->buf = NULL;
	}
	if (!b)
		b = calloc(1, sizeof(*b));
	if (b && !b->buf && !(b->buf = malloc(b->cap = PAR_STEP + PAR_STEP / 4))) {
		block_free(b);
		b = NULL;
	}
	if (b) {
		b->next = NULL;
		b->len = b->n_runs = b->at = 0;
	}
	return b;
}

static void hand_over(struct dec_split *s, uint64_t ready);

/* The rows that follow have the split's key, or are written once (id). */
static void mark(struct dec_split *s, uint32_t once)
{
	struct par_block *b = s->cur;
	size_t at = s->x->w.len;

	if (b->n_runs) {
		struct par_run *r = &b->runs[b->n_runs - 1];
		if (r->pkt == s->pkt && r->key_slot == s->key_slot && r->once == once)
			return; /* the same run goes on */
		if (r->start == at) { /* the last one is empty: this one instead */
			*r = (struct par_run){ s->pkt, s->key_slot, once, at };
			return;
		}
	}
	if (dec_vec_room((void **)&b->runs, &b->cap_runs, b->n_runs, sizeof(*b->runs)) < 0) {
		s->x->w.error = -ENOMEM; /* (the sink's next status says it) */
		return;
	}
	b->runs[b->n_runs++] = (struct par_run){ s->pkt, s->key_slot, once, at };
}

int dec_split_row(struct t4_decoder *d, uint32_t key_slot)
{
	struct dec_split *s = d->split;

	if (!s->x)
		return 0;
	if (atomic_load_explicit(&s->par->werr, memory_order_relaxed))
		return -ECANCELED; /* the merge's writer failed: its error is the decode's */
	s->pkt = d->finishing ? d->n_fed + 1 : d->n_fed;
	s->key_slot = key_slot;
	if (s->x->w.len >= PAR_STEP && s->cur->n_runs) /* one packet's rows can be */
		hand_over(s, s->pkt - 1);	      /* megabytes: in small steps */
	mark(s, 0);
	return 0;
}

void dec_split_once(struct dec_split *s, int id)
{
	if (s->x)
		mark(s, id == DEC_ONCE_END ? 0 : 1 + (uint32_t)id);
}

static uint64_t min_ready(const struct par *p)
{
	uint64_t m = PAR_DONE;

	for (unsigned k = 0; k < p->n; k++) {
		uint64_t r = atomic_load_explicit(&p->w[k].ready, memory_order_acquire);
		m = r < m ? r : m;
	}
	return m;
}

/* The next run of worker k to write, if its packet is at most upto
 * (blocks written through given back as spare). */
static struct par_run *next_run_locked(struct par *p, struct dec_split *s, uint64_t upto)
{
	struct par_block *b;

	while ((b = s->head) && b->at == b->n_runs) {
		s->head = b->next;
		if (!s->head)
			s->tail = NULL;
		s->queued -= b->len;
		b->next = p->spare; /* (its bytes may be in p->out.iov until flushed) */
		p->spare = b;
	}
	return b && b->runs[b->at].pkt <= upto ? &b->runs[b->at] : NULL;
}

/* Write the runs gathered: one writev, no copy (the output's stdio
 * buffer flushed first; a stream without a file descriptor, e.g. a memory
 * stream, by fwrite). The error is the writer's, sticky. */
void dec_gather_flush(struct dec_gather *g)
{
	struct t4_wbuf *w = &g->w;
	struct iovec *v = g->iov;
	int n = g->n_iov, fd;

	if (!n)
		return; /* (nothing: or no rows made at all, no writer) */
	fd = w->error ? -1 : fileno(w->f);
	if (!w->error && fflush(w->f) != 0)
		w->error = -(errno ? errno : EIO);
	for (; n > 0 && !w->error && fd < 0; v++, n--)
		if (fwrite(v->iov_base, 1, v->iov_len, w->f) != v->iov_len)
			w->error = -(errno ? errno : EIO);
	while (n > 0 && !w->error) {
		ssize_t k = writev(fd, v, n < IOV_MAX ? n : IOV_MAX);
		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			w->error = k < 0 ? -errno : -EIO;
			break;
		}
		for (; n > 0 && (size_t)k >= v->iov_len; v++, n--)
			k -= (ssize_t)v->iov_len;
		if (n > 0) {
			v->iov_base = (char *)v->iov_base + k;
			v->iov_len -= (size_t)k;
		}
	}
	g->n_iov = 0;
	w->len = 0;
}

/* One run to write: a short one copied after the last (one write for
 * many), a long one where it lies. The room for its iovec is made first:
 * a flush empties the buffer, and a copy made before it would be
 * overwritten by the next ones before it is written. */
void dec_gather_put(struct dec_gather *g, const char *b, size_t n)
{
	struct t4_wbuf *w = &g->w;

	if (!n)
		return; /* (writev writes nothing of empty ones: no EIO for them) */
	if (g->n_iov == DEC_GATHER_IOV || (n < DEC_GATHER_SMALL && w->cap - w->len < n))
		dec_gather_flush(g);
	if (n < DEC_GATHER_SMALL) {
		struct iovec *last = g->n_iov ? &g->iov[g->n_iov - 1] : NULL;
		char *at = w->buf + w->len;
		memcpy(at, b, n);
		w->len += n;
		if (last && (char *)last->iov_base + last->iov_len == at) {
			last->iov_len += n;
			return;
		}
		b = at;
	}
	g->iov[g->n_iov++] = (struct iovec){ (void *)b, n };
}

static bool key_before(const struct par_run *a, const struct par_run *b)
{
	return a->pkt < b->pkt || (a->pkt == b->pkt && a->key_slot < b->key_slot);
}

/* Write every queued run that no worker can precede any more, in -j 1's
 * order: by packet, then by domain slot (one worker's, so no two workers
 * tie), then in the order made; bytes written once kept the first time. */
static void merge_locked(struct par *p)
{
	uint64_t upto = min_ready(p);

	for (;;) {
		struct dec_split *best = NULL;
		struct par_run *r = NULL;
		for (unsigned k = 0; k < p->n; k++) {
			struct par_run *c = next_run_locked(p, &p->w[k], upto);
			if (c && (!r || key_before(c, r))) {
				r = c;
				best = &p->w[k];
			}
		}
		if (!r)
			break;
		struct par_block *b = best->head;
		size_t end = b->at + 1 < b->n_runs ? b->runs[b->at + 1].start : b->len;
		uint32_t id = r->once ? (r->once - 1) % DEC_ONCE_IDS : 0;
		uint64_t bit = 1ull << (id % 64);
		if (!r->once || !(p->once[id / 64] & bit)) {
			dec_gather_put(&p->out, b->buf + r->start, end - r->start);
			if (r->once)
				p->once[id / 64] |= bit;
		}
		b->at++;
	}
	dec_gather_flush(&p->out); /* (before the lock goes: the blocks may be reused) */
	if (p->out.w.error)
		atomic_store(&p->werr, p->out.w.error);
}

static void wake_locked(struct par *p)
{
	if (atomic_load(&p->need) != PAR_DONE)
		pthread_cond_broadcast(&p->cv);
}

/* What a waiter waits for (its argument: the packet it waits at), checked
 * under the lock; it may merge first. */
typedef bool par_cond_fn(struct par *p, struct dec_split *s, uint64_t pk);

/* Publish that s waits for the others to reach packet `need` (p->need:
 * the least need of the waiters; every store to it is made under the
 * lock, so the least is kept without a compare-and-swap). */
static void need_locked(struct par *p, struct dec_split *s, uint64_t need)
{
	uint64_t least = atomic_load_explicit(&p->need, memory_order_relaxed);

	s->need = need < 1 ? 1 : need < PAR_DONE ? need : PAR_DONE - 1; /* (PAR_DONE: none) */
	atomic_store_explicit(&p->need, s->need < least ? s->need : least, memory_order_relaxed);
}

/* Wait until cond holds. A worker decides without the lock whether to
 * wake the waiters (dec_split_fed: it stores how far it got, then reads
 * p->need), so a waiter stores its need and only then reads how far the
 * others got (cond), each side with a sequentially consistent fence
 * between its store and its load: one of the two sees the other's store,
 * and either the waiter does not sleep or the worker wakes it (under the
 * lock, which the waiter holds from its check until it sleeps). A waiter
 * that leaves raises p->need; a worker may have read the lower need,
 * woken for it and so not wake again (s->told), so the waiters left are
 * woken to look again. The wait is timed all the same (PAR_RECHECK_NS):
 * what the protocol above misses costs a stall, never a hang (a condition
 * wait may wake without cause anyway, and every cond is looked at again). */
static void wait_until_locked(struct par *p, struct dec_split *s, uint64_t pk, par_cond_fn *cond)
{
	uint64_t least = PAR_DONE;
	struct timespec until;

	if (cond(p, s, pk))
		return;
	for (;;) {
		need_locked(p, s, pk);
		atomic_thread_fence(memory_order_seq_cst); /* (dec_split_fed's pair) */
		if (cond(p, s, pk))
			break;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PAR_RECHECK_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (p->test_untimed)
			pthread_cond_wait(&p->cv, &p->mu);
		else
			pthread_cond_timedwait(&p->cv, &p->mu, &until);
	}
	s->need = 0;
	for (unsigned k = 0; k < p->n; k++)
		if (p->w[k].need && p->w[k].need < least)
			least = p->w[k].need;
	atomic_store_explicit(&p->need, least, memory_order_relaxed);
	if (least != PAR_DONE)
		pthread_cond_broadcast(&p->cv);
}

/* hand_over()'s wait: what the marks allow merged; done when half of s's
 * queue is written, s is no longer ahead (pk: its mark), or the output
 * failed. */
static bool rows_written_locked(struct par *p, struct dec_split *s, uint64_t pk)
{
	merge_locked(p);
	return s->queued <= PAR_LIMIT / 2 || pk <= min_ready(p) || atomic_load(&p->werr);
}

/* Queue the block being filled (rows of packets up to `ready`; at the
 * end, PAR_DONE: the last), merge, and wait while this worker is ahead
 * with too much queued (until half of it is written). */
static void hand_over(struct dec_split *s, uint64_t ready)
{
	struct par *p = s->par;
	struct par_block *b = s->cur, *next = NULL;

	if (b->n_runs && ready != PAR_DONE && !(next = block_get(p))) {
		atomic_store(&p->werr, -ENOMEM); /* every worker stops: none waits for it */
		pthread_mutex_lock(&p->mu);
		wake_locked(p);
		pthread_mutex_unlock(&p->mu);
		return;
	}
	b->buf = s->x->w.buf; /* (the end: x's writer is put back by the caller) */
	b->cap = s->x->w.cap;
	b->len = s->x->w.len;
	pthread_mutex_lock(&p->mu);
	if (b->n_runs) {
		if (s->tail)
			s->tail->next = b;
		else
			s->head = b;
		s->tail = b;
		s->queued += b->len;
		s->cur = next;
		if (next) {
			s->x->w.buf = next->buf;
			s->x->w.cap = next->cap;
			s->x->w.len = 0;
		}
	}
	atomic_store_explicit(&s->ready, ready, memory_order_release);
	merge_locked(p);
	wake_locked(p);
	if (s->queued > PAR_LIMIT)
		wait_until_locked(p, s, ready, rows_written_locked);
	pthread_mutex_unlock(&p->mu);
}

void dec_split_fed(struct dec_split *s, uint64_t n_fed)
{
	struct par *p = s->par;
	bool rows = s->x && s->cur->n_runs; /* rows made, not yet handed over */

	/* how far this worker got, stored before p->need is read: the pair
	 * of wait_until_locked()'s, which stores a need, then reads these */
	atomic_store_explicit(&s->done, n_fed, memory_order_release);
	if (!rows)
		atomic_store_explicit(&s->ready, n_fed, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	uint64_t need = atomic_load_explicit(&p->need, memory_order_relaxed);
	bool tell = n_fed >= need && need != s->told; /* a waiter waits for this packet */

	if (tell)
		s->told = need;
	if (rows && (s->x->w.len >= PAR_STEP || tell)) {
		hand_over(s, n_fed);
		return;
	}
	if (tell) {
		pthread_mutex_lock(&p->mu);
		merge_locked(p);
		wake_locked(p);
		pthread_mutex_unlock(&p->mu);
	}
}

void dec_split_idle(struct dec_split *s)
{
	uint64_t done = atomic_load_explicit(&s->done, memory_order_relaxed);

	if (s->x && s->cur && s->cur->n_runs)
		hand_over(s, done);
}

void dec_split_end(struct dec_split *s)
{
	struct par *p = s->par;

	atomic_store_explicit(&s->done, PAR_DONE, memory_order_release);
	if (s->x && s->cur) {
		hand_over(s, PAR_DONE);
		return;
	}
	atomic_store_explicit(&s->ready, PAR_DONE, memory_order_release);
	pthread_mutex_lock(&p->mu);
	merge_locked(p);
	wake_locked(p);
	pthread_mutex_unlock(&p->mu);
}

/* Whether every other worker's first output before packet pk is known:
 * made, or the worker past pk. */
static bool firsts_known_locked(struct par *p, struct dec_split *s, uint64_t pk)
{
	for (unsigned k = 0; k < p->n; k++) {
		const struct dec_split *o = &p->w[k];
		if (o != s && o->first == UINT64_MAX &&
		    atomic_load_explicit(&o->done, memory_order_acquire) < pk)
			return false;
	}
	return true;
}

void dec_split_origin(struct t4_decoder *d)
{
	struct dec_split *s = d->split;
	struct par *p = s->par;
	uint64_t pk = d->finishing ? d->n_fed + 1 : d->n_fed;
	const struct dec_split *first = s;

	pthread_mutex_lock(&p->mu);
	s->first = pk;
	s->first_origin = d->origin_ns;
	wake_locked(p);
	wait_until_locked(p, s, pk, firsts_known_locked);
	for (unsigned k = 0; k < p->n; k++)
		if (p->w[k].first < first->first)
			first = &p->w[k];
	/* (workers at one packet have one index, so one origin) */
	d->origin_ns = first->first_origin;
	pthread_mutex_unlock(&p->mu);
}

/* A worker's reader warnings: damage counted, nothing said (worker 0
 * says it). */
static void damage_only(void *ud, uint64_t offset, const char *msg)
{
	t4_decoder_damage(ud, offset, msg);
}

static int worker_new(struct t4_decoder **out, const struct t4_decoder *d, unsigned n,
		      unsigned k)
{
	int rc = t4_decoder_new(out, &d->o, NULL, NULL);

	if (rc < 0)
		return rc;
	(*out)->place = d->place;
	(*out)->log_name = d->log_name;
	(*out)->par_n = n;
	(*out)->par_k = k;
	(*out)->quiet = true;
	(*out)->test_fail_name_alloc = d->test_fail_name_alloc;
	return 0;
}

/* Whether two decoders have the same spans and number the bookmark names'
 * totals alike. */
static bool same_phases(const struct t4_decoder *a, const struct t4_decoder *b)
{
	if (a->n_names != b->n_names || a->n_spans != b->n_spans ||
	    (a->n_names && memcmp(a->name_ids, b->name_ids, a->n_names * sizeof(*a->name_ids))))
		return false;
	for (size_t i = 0; i < a->n_spans; i++) {
		const struct dspan *x = &a->spans[i], *y = &b->spans[i];
		if (x->start_ns != y->start_ns || x->bookmark_id != y->bookmark_id ||
		    x->name != y->name || x->occurrence != y->occurrence)
			return false;
	}
	return true;
}

/* Move worker w's own domains into d (whose slots of them are NULL). */
static void take_domains(struct t4_decoder *d, struct t4_decoder *w)
{
	for (size_t i = w->par_k; i < w->n_doms && i < d->n_doms; i += w->par_n) {
		struct dom *dm = w->doms[i];
		w->doms[i] = NULL;
		if (!dm)
			continue; /* (none: cannot be, a failure to make it ends the decode) */
		d->doms[i] = dm;
		dm->d = d;
		dm->sched_idx = -1;
		/* the index is d's: the same content, d's memory */
		dm->pub.ix = t4_index_domain(d->ix, dm->pub.id);
		dm->pub.name = dm->pub.ix->d.name;
	}
}

/* A log without a plausible reference packet: the workers whose domains
 * made outputs at its end made -j 1's one span (phases_ensure()), the
 * others none; every worker gets it. */
static int ensure_spans(struct t4_decoder *const *ws, unsigned n)
{
	bool any = false;
	int rc;

	for (unsigned k = 0; k < n; k++)
		any |= ws[k]->n_spans > 0;
	for (unsigned k = 0; k < n && any; k++)
		if ((rc = phases_ensure(ws[k])) < 0)
			return rc;
	return 0;
}

/* Put -j 1's shared state back into d (see the top of the file), then
 * every domain in it. */
static int gather(struct t4_decoder *d, struct t4_decoder *const *ws, unsigned n)
{
	const struct t4_decoder *first = NULL;
	int rc;

	for (unsigned k = 0; k < n; k++)
		if (ws[k]->first_out != UINT64_MAX &&
		    (!first || ws[k]->first_out < first->first_out))
			first = ws[k];
	if (first && first != d) {
		d->origin_ns = first->origin_ns;
		d->have_origin = true;
		d->first_out = first->first_out;
	}
	if ((rc = ensure_spans(ws, n)) < 0)
		return rc;
	for (unsigned k = 1; k < n; k++)
		if (!same_phases(d, ws[k]))
			return t4_err(EPROTO, "decode -j: the workers disagree on the phases"
				      " (a bug: decode with -j 1, and report it)");
	for (unsigned k = 1; k < n; k++) {
		take_domains(d, ws[k]);
		d->selected += ws[k]->selected;
	}
	return 0;
}

/* Worker k's share of the merge (d: worker 0, the caller's decoder, w
 * the worker's): rows into memory (worker 0's sink's writer becomes the
 * merge's), or, for a sink that makes none during the decode, the origin
 * alone. */
static int split_start(struct par *p, struct t4_decoder *d, struct t4_decoder *w, unsigned k)
{
	struct dec_split *s = &p->w[k];
	void *copy = d->ud;
	int rc;

	s->par = p;
	s->d = w;
	s->first = UINT64_MAX;
	w->split = s;
	if (!d->ops.fork)
		return 0;
	if (k && (rc = d->ops.fork(d->ud, &copy)) < 0)
		return rc;
	s->x = copy;
	s->saved = s->x->w;
	if (k) {
		w->ops.interval = d->ops.interval; /* (slices, phases: worker 0's alone) */
		w->ud = copy;
	} else {
		p->out.w = s->x->w;
		if (p->out.w.len) /* (a header: the first bytes to write) */
			p->out.iov[p->out.n_iov++] = (struct iovec){ p->out.w.buf, p->out.w.len };
	}
	if (!(s->cur = block_get(p)))
		return t4_err(ENOMEM, "out of memory");
	s->x->w = (struct t4_wbuf){ .buf = s->cur->buf, .cap = s->cur->cap };
	s->x->split = s;
	return 0;
}

/* Every worker has ended (its rows merged): their sinks as they were,
 * worker 0's with every row merged into it, the others' state joined. */
static void split_stop(struct par *p, struct t4_decoder *d)
{
	for (unsigned k = 0; k < p->n; k++) {
		struct dec_split *s = &p->w[k];
		if (!s->x)
			continue;
		if (s->cur) { /* never handed over */
			s->cur->buf = s->x->w.buf;
			block_free(s->cur);
		}
		for (struct par_block *b = s->head, *n; b; b = n) { /* (none: a failure) */
			n = b->next;
			block_free(b);
		}
		s->x->w = k ? s->saved : p->out.w;
		s->x->split = NULL;
		if (k)
			d->ops.join(d->ud, s->x);
	}
	for (struct par_block *b = p->spare, *n; b; b = n) {
		n = b->next;
		block_free(b);
	}
}

int dec_parallel_feed(struct t4_decoder *d, struct t4_reader *r, struct t4_readahead **slot,
		      unsigned workers, unsigned unpackers, t4_reader_warn_fn warn,
		      struct dec_read_end *end)
{
	unsigned n = workers < DEC_MAX_WORKERS ? workers : DEC_MAX_WORKERS;
	struct t4_decoder *ws[DEC_MAX_WORKERS] = { d };
	t4_reader_warn_fn warns[DEC_MAX_WORKERS] = { warn };
	struct par *p = calloc(1, sizeof(*p));
	int rc = p ? 0 : t4_err(ENOMEM, "out of memory");

	d->par_n = n;
	d->par_k = 0;
	for (unsigned k = 1; k < n && rc >= 0; k++) {
		rc = worker_new(&ws[k], d, n, k);
		warns[k] = damage_only;
	}
	if (p) {
		atomic_init(&p->need, PAR_DONE);
		p->test_untimed = d->test_untimed_waits;
		pthread_mutex_init(&p->mu, NULL);
		pthread_cond_init(&p->cv, NULL);
		for (unsigned k = 0; k < n && rc >= 0; k++, p->n = k)
			rc = split_start(p, d, ws[k], k);
	}
	if (rc >= 0)
		rc = dec_readahead_feed_n(ws, n, unpackers, r, slot, warns, end);
	if (p) {
		split_stop(p, d);
		int werr = atomic_load(&p->werr);
		if (werr && (rc >= 0 || rc == -ECANCELED)) /* the output failed: as -j 1 says it */
			rc = p->out.w.error ? out_close(d->ud) : t4_err(-werr, "out of memory");
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		free(p);
	}
	d->split = NULL;
	if (rc >= 0)
		rc = gather(d, ws, n);
	for (unsigned k = 1; k < n; k++)
		t4_decoder_free(ws[k]);
	d->par_n = 0;
	return rc;
}
