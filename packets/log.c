/* log.c - the log writer: one thread drains the producers' rings, encodes
 * packets into chunks, compresses each chunk into one zstd frame and
 * writes header + frame as one write at an explicit offset through a
 * backend (io_uring or pwrite, log_io.h).
 *
 * Trade-offs:
 * - Producers never block and never make a syscall on the normal path;
 *   an idle writer sleeps until its next deadline (chunk_ms, fsync_ms) or
 *   at most LOG_IDLE_MAX_NS, and is woken early (futex) when a ring
 *   crosses half full. A packet may wait in its ring up to 50 ms before
 *   the writer sees it, so a chunk is aged from the poll before the one
 *   that found its first packet, or from the oldest trigger in it (a
 *   reference packet's MONOTONIC time: the BPF path hands its triggers
 *   over up to 50 ms after they fired), whichever is earlier, and closes
 *   chunk_ms after that: a crash loses at most chunk_ms of recording
 *   (plus a period, and however late the machine runs the writer). An idle writer
 *   costs 20 wake-ups a second (the BPF path's drain fills the rings
 *   20 times a second too).
 * - Memory is bounded: `inflight` compressed buffers, one raw chunk, the
 *   rings, and in format 2 the codec's open batch (32 KiB; trigger packets
 *   are coded as they come, never held back as packets). When every buffer
 *   is in flight the writer waits for the disk; the rings then fill and
 *   producers drop, counted exactly.
 * - Format 2's batches live inside the chunk being filled, so they delay
 *   nothing a reader sees: a chunk reaches the file whole or not at all,
 *   its packets in the order they came (FORMAT.md 5a).
 * - Chunks are retired in file order, even though io_uring may complete
 *   them out of order. On the first write error (ENOSPC...) the file is
 *   truncated to the end of the last chunk written completely before it,
 *   so the log stays valid up to there, and everything later is counted
 *   as dropped. The error is sticky and returned by t4_log_close().
 * - Drops are written into the log itself: a status packet whenever the
 *   total changed, and an exact final one at close.
 * - The log describes itself chunk by chunk (copies.h): each chunk opens
 *   with copies of the previous chunk's metadata, and every few chunks of
 *   the whole description; every chunk header carries the recording's tag
 *   (from its session packet), so two recordings in one file are told
 *   apart. Copies cost a memcpy per metadata packet and one per chunk;
 *   trigger packets never allocate.
 * - An output that cannot seek (pipe, FIFO, socket, stdout on a pipe) is
 *   a stream: one chunk in flight, written at the file's position, so the
 *   bytes go out strictly in order; a slow reader backs up into the rings,
 *   which drop and count. Messages name opts.name (the user's file) rather
 *   than the path written (record's FILE.partial-PID-XXXXXX/log).
 * - opts.observe sees each packet as it goes into a chunk (record keeps
 *   the index of its closing table so, a pipe included); after a write
 *   error it has seen packets of the chunks the log lost (record then
 *   prints no table).
 */
#include "packets.h"
#include "copies.h"
#include "log_io.h"
#include "ring.h"

#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define LOG_IDLE_MAX_NS 50000000ull     /* longest sleep of an idle writer */
#define LOG_REAP_NS 1000000ull          /* sleep while writes are in flight */
#define LOG_RELEASE_BYTES (64u << 10)   /* give ring space back this often */
#define LOG_MIN_CHUNK 4096u
#define LOG_MAX_CHUNK (T4_CHUNK_MAX_RAW - T4_CODEC_MAX_OUT)
#define LOG_MAX_INFLIGHT 64u
#define LOG_FSYNC_AT_CLOSE UINT32_MAX   /* fsync_ms: only at close */

enum slot_state { SLOT_FREE, SLOT_PENDING, SLOT_OK, SLOT_FAILED };

/* One compressed chunk: header + zstd frame, written as one request. */
struct slot {
	struct t4_wreq req; /* first: the completion gets &req */
	uint8_t *buf;
	size_t cap;
	enum slot_state state;
	int err;
	uint32_t packets;   /* original packets (copies are not counted) */
	uint32_t copies;
	uint32_t raw;
};

/* The chunk being filled (writer thread only). */
struct chunk {
	uint8_t *raw;
	size_t cap, len;
	uint32_t packets;       /* all of them: the header's count */
	uint32_t copies;        /* of which copies (chunk_open's) */
	uint64_t first_trigger, last_trigger;
	uint64_t start_ns;
};

struct t4_log {
	struct t4_log_opts opts; /* defaults filled in; path points to `path` */
	char *path;
	char *name;             /* for messages */
	int fd;
	bool stream;            /* cannot seek: one write in flight, in order */
	struct t4_wio io;
	struct t4_ring **rings; /* drained in creation order */
	size_t n_rings;
	pthread_t thread;
	bool started;
	_Atomic uint32_t wake;  /* 1 while the writer sleeps (futex word) */
	_Atomic uint32_t stop;
	struct t4_status_pkt final_status;

	/* writer thread only */
	struct t4_codec *codec;
	ZSTD_CCtx *cctx;
	struct chunk ck;
	struct t4_copies copies; /* metadata repeated in later chunks */
	uint32_t tag;           /* the recording's, from its session packet */
	uint32_t ref_clock;     /* its reference clock (status packets' ref_ns) */
	struct slot *slots;     /* FIFO: submitted at sub, retired at ret */
	unsigned n_slots;
	uint64_t sub, ret, seq, file_off;
	uint64_t last_fsync_ns;
	uint64_t prev_poll_ns; /* start of the previous drain round */
	int64_t mono_to_ref;   /* CLOCK_MONOTONIC -> t4_mono_raw_ns(), this round */
	bool regular;          /* a regular file (not /dev/null): fsync, truncate */
	bool dirty;             /* written since the last fsync */
	uint64_t reported_drops;
	bool warned_bad;
	bool err_settled;
	char errmsg[400];
	struct t4_packet pkt;   /* aligned copy of a ring record */

	/* shared with t4_log_stats() */
	_Atomic int error;
	_Atomic uint64_t st_packets, st_copies, st_chunks, st_raw, st_file, st_lost;
};

/* ---- errors and completions ------------------------------------------ */

/* The first error sticks. */
static void log_fail(struct t4_log *log, int err)
{
	int none = 0;

	atomic_compare_exchange_strong(&log->error, &none, err);
}

static void lost(struct t4_log *log, uint64_t n)
{
	atomic_fetch_add_explicit(&log->st_lost, n, memory_order_relaxed);
}

static void on_write_done(void *ud, struct t4_wreq *req, int err)
{
	struct slot *s = (struct slot *)req;

	(void)ud;
	s->state = err ? SLOT_FAILED : SLOT_OK;
	s->err = err;
}

/* Account for finished chunks in file order. */
static void log_retire(struct t4_log *log)
{
	while (log->ret < log->sub) {
		struct slot *s = &log->slots[log->ret % log->n_slots];

		if (s->state == SLOT_PENDING)
			break;
		if (s->state == SLOT_FAILED)
			log_fail(log, s->err);
		if (s->state == SLOT_OK && !atomic_load(&log->error)) {
			atomic_fetch_add_explicit(&log->st_packets, s->packets, memory_order_relaxed);
			atomic_fetch_add_explicit(&log->st_copies, s->copies, memory_order_relaxed);
			atomic_fetch_add_explicit(&log->st_raw, s->raw, memory_order_relaxed);
			atomic_fetch_add_explicit(&log->st_file, s->req.len, memory_order_relaxed);
			atomic_fetch_add_explicit(&log->st_chunks, 1, memory_order_relaxed);
		} else {
			lost(log, s->packets);
		}
		s->state = SLOT_FREE;
		log->ret++;
	}
}

/* Collect completions; < 0 when the backend itself failed. */
static int log_reap(struct t4_log *log, bool wait)
{
	int n = log->io.ops.reap(log->io.be, wait && log->sub > log->ret);

	if (n < 0)
		log_fail(log, n);
	log_retire(log);
	return n;
}

static void log_wait_all(struct t4_log *log)
{
	while (log->sub > log->ret)
		if (log_reap(log, true) < 0)
			break; /* the backend itself failed: nothing will come */
}

/* After the first error: let every write finish, cut the file back to the
 * last chunk written completely, and word the message once. */
static void log_settle(struct t4_log *log)
{
	int err = atomic_load(&log->error);
	uint64_t intact;

	if (!err || log->err_settled)
		return;
	log_wait_all(log);
	log->err_settled = true;
	/* chunks retire in file order and stop counting at the first error,
	 * so st_file is the end of the chunks written completely before it */
	intact = atomic_load(&log->st_file);
	if (log->regular && ftruncate(log->fd, (off_t)intact) < 0)
		t4_warn("%s: cannot cut the log back to %llu bytes: %s", log->name,
			(unsigned long long)intact, strerror(errno));
	if (intact) /* (nothing before: "intact" would promise a log) */
		snprintf(log->errmsg, sizeof(log->errmsg),
			 "%s: %s after %llu bytes: log stopped, everything before is intact",
			 log->name, strerror(-err), (unsigned long long)intact);
	else
		snprintf(log->errmsg, sizeof(log->errmsg),
			 "%s: %s: the log stopped before its first chunk was on disk",
			 log->name, strerror(-err));
}

/* ---- chunks ----------------------------------------------------------- */

/* A free slot, waiting for the oldest write when all are in flight. NULL
 * after an error. */
static struct slot *log_slot(struct t4_log *log)
{
	while (log->sub - log->ret >= log->n_slots && !atomic_load(&log->error))
		log_reap(log, true);
	if (atomic_load(&log->error))
		return NULL;
	return &log->slots[log->sub % log->n_slots];
}

static void chunk_reset(struct chunk *ck)
{
	ck->len = 0;
	ck->packets = ck->copies = 0;
	ck->first_trigger = UINT64_MAX;
	ck->last_trigger = 0;
}

static void log_submit(struct t4_log *log, struct slot *s, size_t len)
{
	int err;

	s->req.buf = s->buf;
	s->req.len = len;
	s->req.off = log->file_off;
	s->state = SLOT_PENDING;
	s->packets = log->ck.packets - log->ck.copies;
	s->copies = log->ck.copies;
	s->raw = (uint32_t)log->ck.len;
	log->sub++;
	log->seq++;
	log->file_off += len;
	log->dirty = true;
	err = log->io.ops.write(log->io.be, &s->req);
	if (err) {
		s->state = SLOT_FAILED;
		s->err = err;
	}
	log_retire(log);
}

/* Compress the current chunk into a slot and write it. */
static void chunk_close(struct t4_log *log)
{
	struct chunk *ck = &log->ck;
	struct t4_chunk_hdr h = { 0 };
	struct slot *s;
	size_t comp;

	if (!ck->packets)
		return;
	ck->len += t4_codec_flush(log->codec, ck->raw + ck->len, ck->cap - ck->len);
	s = log_slot(log);
	if (!s) {
		lost(log, ck->packets - ck->copies);
		chunk_reset(ck);
		return;
	}
	comp = ZSTD_compressCCtx(log->cctx, s->buf + T4_CHUNK_HDR_SIZE,
				 s->cap - T4_CHUNK_HDR_SIZE, ck->raw, ck->len,
				 log->opts.zstd_level);
	if (ZSTD_isError(comp)) {
		t4_warn("%s: zstd: %s", log->name, ZSTD_getErrorName(comp));
		log_fail(log, -EIO);
		lost(log, ck->packets - ck->copies);
		chunk_reset(ck);
		return;
	}
	h.version = (uint16_t)log->opts.format;
	h.hdr_size = T4_CHUNK_HDR_SIZE;
	h.seq = log->seq;
	h.first_trigger = ck->first_trigger;
	h.last_trigger = ck->last_trigger;
	h.raw_size = (uint32_t)ck->len;
	h.comp_size = (uint32_t)comp;
	h.packets = ck->packets;
	h.payload_crc = t4_crc32c(0, s->buf + T4_CHUNK_HDR_SIZE, comp);
	h.tag = log->tag;
	t4_chunk_hdr_pack(&h, s->buf);
	log_submit(log, s, T4_CHUNK_HDR_SIZE + comp);
	chunk_reset(ck);
}

static void chunk_note_trigger(struct chunk *ck, const struct t4_packet *p)
{
	uint64_t id;

	if (p->type == T4_PKT_REF)
		id = p->ref.trigger_id;
	else if (p->type == T4_PKT_RET)
		id = p->ret.trigger_id;
	else
		return;
	if (id < ck->first_trigger)
		ck->first_trigger = id;
	if (id > ck->last_trigger)
		ck->last_trigger = id;
}

/* A new chunk: fresh delta state, then the copies that open it. */
static void chunk_open(struct t4_log *log)
{
	struct chunk *ck = &log->ck;

	t4_codec_start(log->codec, log->opts.format);
	/* The packet may have waited in its ring since the previous poll: age
	 * the chunk from then, so that chunk_ms bounds what a crash loses,
	 * wait included. */
	ck->start_ns = log->prev_poll_ns;
	ck->copies = 0;
	ck->len = pkt_copies_emit(&log->copies, log->seq, ck->raw, &ck->copies);
	ck->packets = ck->copies;
}

/* Remember what an original metadata packet says for later chunks. */
static void log_note_meta(struct t4_log *log, const struct t4_packet *p, size_t off, int n)
{
	if (p->copy)
		return;
	if (p->type == T4_PKT_SESSION) {
		log->tag = t4_session_tag(&p->session);
		log->ref_clock = p->session.ref_clock;
	}
	if (pkt_copies_note(&log->copies, p, log->ck.raw + off, (size_t)n, log->seq) < 0)
		t4_warn("%s: %s", log->name, t4_errmsg());
}

/* A trigger older than the chunk's start ages the chunk from it (not when
 * chunks close by size only: virtual time's triggers are not now's). */
static void chunk_note_age(struct t4_log *log, const struct t4_packet *p)
{
	uint64_t fired;

	if (p->type != T4_PKT_REF || !p->ref.mono_ns || log->opts.chunk_ms == UINT32_MAX)
		return;
	fired = (uint64_t)((int64_t)p->ref.mono_ns + log->mono_to_ref);
	if (fired < log->ck.start_ns)
		log->ck.start_ns = fired;
}

/* Encode one packet into the current chunk (closing it when full). */
static void log_add(struct t4_log *log, const struct t4_packet *p)
{
	struct chunk *ck = &log->ck;
	int n;

	if (atomic_load_explicit(&log->error, memory_order_relaxed)) {
		lost(log, 1);
		return;
	}
	if (!ck->packets)
		chunk_open(log);
	if (p->type != T4_PKT_REF && p->type != T4_PKT_RET) /* its own bytes */
		ck->len += t4_codec_flush(log->codec, ck->raw + ck->len, ck->cap - ck->len);
	chunk_note_age(log, p);
	n = t4_codec_encode(log->codec, p, ck->raw + ck->len, ck->cap - ck->len);
	if (n < 0) {
		if (!log->warned_bad)
			t4_warn("%s: dropped a malformed packet: %s", log->name, t4_errmsg());
		log->warned_bad = true;
		lost(log, 1); /* the copies stay: a chunk of copies alone is valid */
		return;
	}
	log_note_meta(log, p, ck->len, n);
	ck->len += (size_t)n;
	ck->packets++;
	chunk_note_trigger(ck, p);
	if (log->opts.observe)
		log->opts.observe(log->opts.observe_ud, p);
	if (ck->len + t4_codec_pending(log->codec) >= log->opts.chunk_bytes)
		chunk_close(log);
}

/* ---- the writer thread ------------------------------------------------ */

static uint64_t log_drops(const struct t4_log *log)
{
	uint64_t n = atomic_load_explicit(&log->st_lost, memory_order_relaxed);

	for (size_t i = 0; i < log->n_rings; i++)
		n += t4_ring_dropped(log->rings[i]);
	return n;
}

static void log_add_status(struct t4_log *log, const struct t4_status_pkt *st)
{
	struct t4_packet p = { .type = T4_PKT_STATUS };

	if (st)
		p.status = *st; /* its dropped: the caller's own (final status) */
	log->reported_drops = log_drops(log);
	p.status.dropped += log->reported_drops;
	if (!p.status.ref_ns)
		p.status.ref_ns = t4_ref_clock_now(log->ref_clock); /* FORMAT.md 4.1 */
	log_add(log, &p);
}

/* Drain one ring up to its current head. Returns packets taken. */
static size_t log_drain_ring(struct t4_log *log, struct t4_ring *r)
{
	uint64_t head = pkt_ring_head(r);
	uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t released = pos;
	const uint8_t *data;
	uint32_t len;
	size_t n = 0;

	while ((len = pkt_ring_peek(r, &pos, head, &data))) {
		memcpy(&log->pkt, data, len);
		log->pkt.copy = false; /* copies are the writer's own, never a producer's */
		log_add(log, &log->pkt);
		n++;
		if (pos - released >= LOG_RELEASE_BYTES) {
			pkt_ring_release(r, pos);
			released = pos;
		}
	}
	pkt_ring_release(r, pos);
	return n;
}

static bool log_rings_empty(struct t4_log *log)
{
	for (size_t i = 0; i < log->n_rings; i++)
		if (!pkt_ring_empty(log->rings[i]))
			return false;
	return true;
}

static uint64_t until(uint64_t now, uint64_t deadline, uint64_t t)
{
	if (deadline <= now)
		return 0;
	return deadline - now < t ? deadline - now : t;
}

/* How long an idle writer may sleep: until the open chunk must close,
 * the next fsync is due, or soon when writes are in flight. */
static uint64_t log_idle_ns(const struct t4_log *log)
{
	uint64_t now = t4_mono_raw_ns(), t = LOG_IDLE_MAX_NS;
	uint32_t fs = log->opts.fsync_ms;

	if (log->ck.packets)
		t = until(now, log->ck.start_ns + log->opts.chunk_ms * 1000000ull, t);
	if (log->dirty && fs != LOG_FSYNC_AT_CLOSE)
		t = until(now, log->last_fsync_ns + fs * 1000000ull, t);
	if (log->sub > log->ret && t > LOG_REAP_NS)
		t = LOG_REAP_NS;
	return t;
}

static void log_idle(struct t4_log *log)
{
	uint64_t t = log_idle_ns(log);

	atomic_store(&log->wake, 1);
	atomic_thread_fence(memory_order_seq_cst); /* pairs with pkt_ring_wake */
	if (t && log_rings_empty(log) && !atomic_load(&log->stop))
		pkt_ring_sleep(&log->wake, t);
	atomic_store(&log->wake, 0);
}

static void log_fsync(struct t4_log *log, uint64_t now)
{
	int err;

	if (!log->dirty || atomic_load(&log->error))
		return;
	if (!log->regular) { /* a device (/dev/null) has nothing to sync */
		log->dirty = false;
		return;
	}
	log_retire(log);
	err = log->io.ops.fsync(log->io.be);
	if (err)
		log_fail(log, err);
	log->dirty = false;
	log->last_fsync_ns = now;
}

/* Time-driven work: close an old chunk, fsync on the interval. */
static void log_timers(struct t4_log *log)
{
	uint64_t now = t4_mono_raw_ns();
	uint32_t fs = log->opts.fsync_ms;

	if (log->ck.packets && now - log->ck.start_ns >= log->opts.chunk_ms * 1000000ull)
		chunk_close(log);
	if (fs != LOG_FSYNC_AT_CLOSE && now - log->last_fsync_ns >= fs * 1000000ull)
		log_fsync(log, now);
}

/* The end: final status, last chunk, every write done, fsync. */
static void log_finish(struct t4_log *log)
{
	log_add_status(log, &log->final_status);
	chunk_close(log);
	log_wait_all(log);
	log->dirty = true;
	log_fsync(log, t4_mono_raw_ns());
	log_settle(log);
}

static void *log_main(void *arg)
{
	struct t4_log *log = arg;

	log->last_fsync_ns = log->prev_poll_ns = t4_mono_raw_ns();
	for (;;) {
		bool stopping = atomic_load(&log->stop);
		uint64_t poll_ns = t4_mono_raw_ns();
		size_t got = 0;

		log->mono_to_ref = (int64_t)(poll_ns - t4_clock_ns(CLOCK_MONOTONIC));
		for (size_t i = 0; i < log->n_rings; i++)
			got += log_drain_ring(log, log->rings[i]);
		if (log_drops(log) != log->reported_drops && !atomic_load(&log->error))
			log_add_status(log, NULL);
		log_timers(log);
		log_reap(log, false);
		log_settle(log);
		log->prev_poll_ns = poll_ns;
		if (stopping)
			break;
		if (!got)
			log_idle(log);
	}
	log_finish(log);
	return NULL;
}

/* ---- public API ------------------------------------------------------- */

int t4_log_zstd_default(unsigned format)
{
	return format == 1 ? 1 : -3;
}

int t4_log_zstd_check(int level)
{
	if (!level || level < ZSTD_minCLevel() || level > ZSTD_maxCLevel())
		return t4_err(EINVAL, "use %d..-1 or 1..%d", ZSTD_minCLevel(), ZSTD_maxCLevel());
	return 0;
}

static int log_fill_opts(struct t4_log_opts *o, const struct t4_log_opts *in)
{
	*o = *in;
	if (!o->path || !*o->path)
		return t4_err(EINVAL, "log: no file name given");
	if (!o->format)
		o->format = T4_FORMAT_VERSION;
	if (o->format > T4_FORMAT_VERSION)
		return t4_err(EINVAL, "log format %u: this t410trace writes 1..%d", o->format,
			      T4_FORMAT_VERSION);
	if (!o->zstd_level)
		o->zstd_level = t4_log_zstd_default(o->format);
	if (t4_log_zstd_check(o->zstd_level) < 0) {
		char why[64];

		snprintf(why, sizeof(why), "%s", t4_errmsg());
		return t4_err(EINVAL, "zstd level %d: %s", o->zstd_level, why);
	}
	if (!o->chunk_bytes)
		o->chunk_bytes = 256u << 10;
	if (o->chunk_bytes < LOG_MIN_CHUNK || o->chunk_bytes > LOG_MAX_CHUNK)
		return t4_err(EINVAL, "chunk size %u: out of range (%u..%u bytes)",
			      o->chunk_bytes, LOG_MIN_CHUNK, LOG_MAX_CHUNK);
	if (!o->chunk_ms)
		o->chunk_ms = 100;
	if (!o->fsync_ms)
		o->fsync_ms = 1000;
	if (!o->inflight)
		o->inflight = 4;
	if (o->inflight > LOG_MAX_INFLIGHT)
		return t4_err(EINVAL, "%u chunks in flight: at most %u", o->inflight,
			      LOG_MAX_INFLIGHT);
	if (o->backend != T4_LOG_URING && o->backend != T4_LOG_PWRITE)
		return t4_err(EINVAL, "log backend %d: unknown", (int)o->backend);
	return 0;
}

static int log_open_io(struct t4_log *log)
{
	int err;

	if (log->opts.backend == T4_LOG_URING) {
		err = pkt_wio_uring_open(&log->io, log->fd, log->opts.inflight, log->stream,
					on_write_done, log);
		if (!err)
			return 0;
		t4_warn("%s: %s; writing with pwrite instead", log->name, t4_errmsg());
	}
	return pkt_wio_pwrite_open(&log->io, log->fd, log->stream, on_write_done, log);
}

static void log_free(struct t4_log *log)
{
	if (!log)
		return;
	if (log->io.be)
		log->io.ops.close(log->io.be);
	if (log->fd >= 0)
		close(log->fd);
	for (size_t i = 0; i < log->n_rings; i++)
		pkt_ring_free(log->rings[i]);
	free(log->rings);
	for (unsigned i = 0; log->slots && i < log->n_slots; i++)
		free(log->slots[i].buf);
	free(log->slots);
	free(log->ck.raw);
	pkt_copies_free(&log->copies);
	ZSTD_freeCCtx(log->cctx);
	t4_codec_free(log->codec);
	free(log->path);
	free(log->name);
	free(log);
}

static int log_alloc(struct t4_log *log)
{
	size_t bound;

	log->ck.cap = log->opts.chunk_bytes + T4_CODEC_MAX_OUT;
	log->ck.raw = malloc(log->ck.cap);
	log->n_slots = log->opts.inflight;
	log->slots = calloc(log->n_slots, sizeof(*log->slots));
	log->cctx = ZSTD_createCCtx();
	log->codec = t4_codec_new();
	if (!log->ck.raw || !log->slots || !log->cctx || !log->codec ||
	    pkt_copies_init(&log->copies, log->opts.chunk_bytes / 2) < 0)
		return t4_err(ENOMEM, "%s: out of memory", log->name);
	bound = T4_CHUNK_HDR_SIZE + ZSTD_compressBound(log->ck.cap);
	for (unsigned i = 0; i < log->n_slots; i++) {
		log->slots[i].cap = bound;
		log->slots[i].buf = malloc(bound);
		if (!log->slots[i].buf)
			return t4_err(ENOMEM, "%s: out of memory", log->name);
	}
	chunk_reset(&log->ck);
	return 0;
}

/* An existing path is written in place only when it is a stream or a
 * device (FIFO, socket, /dev/null) other than a terminal: opened without
 * O_CREAT or O_TRUNC (a FIFO's wait for its reader said), and checked once
 * open (a link swapped in meanwhile gains nothing). */
static int log_open_existing(struct t4_log *log, struct stat *st)
{
	log->fd = t4_open_in_place(log->path, log->name, log->opts.quiet, log->opts.stop);
	if (log->fd < 0)
		return log->fd;
	if (fstat(log->fd, st) < 0)
		return t4_err(errno, "%s: %s", log->name, strerror(errno));
	if (S_ISREG(st->st_mode))
		return t4_err(EEXIST, "%s: exists; a log is never written over a file", log->name);
	if (S_ISBLK(st->st_mode) || S_ISDIR(st->st_mode))
		return t4_err(EEXIST, "%s: is a %s; a log is never written over it", log->name,
			      S_ISBLK(st->st_mode) ? "block device" : "directory");
	/* binary on a screen (/dev/tty, /dev/stdout), as `-o -` is refused */
	if (isatty(log->fd))
		return t4_err(EINVAL, "%s: is a terminal; a log is binary (redirect it or name a "
			      "file)", log->name);
	return 0;
}

/* Open the file ("-": a copy of stdout) and learn what it is: a new file
 * is created (t4_create_new: never through a link, umask honoured). */
static int log_open_file(struct t4_log *log)
{
	struct stat st;
	int err;

	if (!strcmp(log->path, "-")) {
		log->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
		if (log->fd < 0 || fstat(log->fd, &st) < 0)
			return t4_err(errno, "%s: %s", log->name, strerror(errno));
	} else if ((log->fd = t4_create_new(log->path, 0666)) >= 0) {
		if (fstat(log->fd, &st) < 0)
			return t4_err(errno, "%s: %s", log->name, strerror(errno));
	} else if (log->fd == -EEXIST) {
		if ((err = log_open_existing(log, &st)) < 0)
			return err;
	} else {
		return t4_err(-log->fd, "%s: %s", log->name, strerror(-log->fd));
	}
	log->regular = S_ISREG(st.st_mode);
	log->stream = lseek(log->fd, 0, SEEK_CUR) < 0 && errno == ESPIPE;
	if (log->stream)
		log->opts.inflight = 1; /* strictly in order */
	return 0;
}

int t4_log_open(struct t4_log **out, const struct t4_log_opts *opts)
{
	struct t4_log *log;
	int err;

	*out = NULL;
	if (!opts)
		return t4_err(EINVAL, "log: no options given");
	log = calloc(1, sizeof(*log));
	if (!log)
		return t4_err(ENOMEM, "log: out of memory");
	log->fd = -1;
	err = log_fill_opts(&log->opts, opts);
	if (err)
		goto fail;
	log->path = strdup(opts->path);
	log->name = strdup(opts->name ? opts->name : !strcmp(opts->path, "-") ?
			   "standard output" : opts->path);
	if (!log->path || !log->name) {
		err = t4_err(ENOMEM, "log: out of memory");
		goto fail;
	}
	log->opts.path = log->path;
	log->opts.name = log->name;
	err = log_open_file(log);
	if (err)
		goto fail;
	err = log_alloc(log);
	if (err)
		goto fail;
	err = log_open_io(log);
	if (err)
		goto fail;
	*out = log;
	return 0;
fail:
	log_free(log);
	return err;
}

int t4_log_ring(struct t4_log *log, size_t bytes, int flags, struct t4_ring **out)
{
	struct t4_ring **rings;
	int err;

	*out = NULL;
	if (log->started || atomic_load(&log->stop))
		return t4_err(EBUSY, "%s: rings must be created before the writer starts",
			      log->name);
	rings = realloc(log->rings, (log->n_rings + 1) * sizeof(*rings));
	if (!rings)
		return t4_err(ENOMEM, "%s: out of memory", log->name);
	log->rings = rings;
	err = pkt_ring_new(&rings[log->n_rings], bytes, flags, &log->wake);
	if (err)
		return err;
	*out = rings[log->n_rings++];
	return 0;
}

int t4_log_start(struct t4_log *log)
{
	sigset_t all, old;
	int err;

	if (log->started)
		return t4_err(EBUSY, "%s: writer already started", log->name);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* signals go elsewhere */
	err = pthread_create(&log->thread, NULL, log_main, log);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return t4_err(err, "%s: cannot start the writer thread: %s", log->name,
			      strerror(err));
	pthread_setname_np(log->thread, "t4-log");
	log->started = true;
	return 0;
}

void t4_log_stats(const struct t4_log *log, struct t4_log_stats *st)
{
	st->packets = atomic_load_explicit(&log->st_packets, memory_order_relaxed);
	st->copies = atomic_load_explicit(&log->st_copies, memory_order_relaxed);
	st->dropped = log_drops(log) + log->final_status.dropped;
	st->chunks = atomic_load_explicit(&log->st_chunks, memory_order_relaxed);
	st->raw_bytes = atomic_load_explicit(&log->st_raw, memory_order_relaxed);
	st->file_bytes = atomic_load_explicit(&log->st_file, memory_order_relaxed);
	st->error = atomic_load(&log->error);
}

int t4_log_error(const struct t4_log *log)
{
	return atomic_load_explicit(&log->error, memory_order_relaxed);
}

int t4_log_close(struct t4_log *log, const struct t4_status_pkt *final_status,
		 struct t4_log_stats *stats)
{
	int err;

	if (!log)
		return t4_err(EINVAL, "t4_log_close: no log");
	for (size_t i = 0; i < log->n_rings; i++)
		pkt_ring_shut(log->rings[i]);
	if (final_status)
		log->final_status = *final_status;
	atomic_store(&log->stop, 1);
	if (log->started) {
		atomic_store(&log->wake, 1); /* make sure the wake goes through */
		pkt_ring_wake(&log->wake);
		pthread_join(log->thread, NULL);
	} else {
		log_main(log);
	}
	if (stats)
		t4_log_stats(log, stats);
	err = atomic_load(&log->error);
	if (err)
		err = t4_err(err, "%s", log->errmsg);
	log_free(log);
	return err;
}
