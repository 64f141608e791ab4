/* reader.c - stream packets back out of a log, chunk by chunk.
 *
 * Memory is bounded by one chunk: a compressed buffer (at most the largest
 * compressed size a header may declare, about 16 MiB) and a raw buffer (at
 * most T4_CHUNK_MAX_RAW), both grown on demand and reused. The source is
 * read through a backend table (file, memory buffer, or a stream such as
 * standard input, rio style), so the recovery logic below is tested on
 * memory and runs on files and pipes unchanged. The logic only ever asks
 * for bytes at or after the chunk it is on and learns the size through
 * have() ("how many bytes are there at off, up to want"), so a stream
 * needs no seek: it reads ahead into a buffer and forgets what lies
 * before the current chunk (or the current resync window).
 *
 * Recovery (docs/FORMAT.md, "Reading and recovery"): a chunk whose header
 * is valid but whose payload is not (CRC, zstd frame, sizes, a packet that
 * does not decode, a packet count that does not match) is skipped by its
 * declared size; a header that is not valid makes the reader scan forward
 * for the next magic followed by a header with a valid CRC; a chunk that
 * runs past the end of the file marks the log truncated and ends it. Every
 * step moves forward by at least one byte, so no input loops forever.
 * Packets of a chunk that fails mid-way have already been returned: the
 * reader streams, it does not buffer a chunk's packets to retract them.
 * A file whose first header is damaged opens at its first valid chunk, if
 * there is one within the largest chunk a header can declare (further,
 * the file is not a log).
 *
 * One recording per read: a chunk that starts another one (a different
 * tag, a sequence number going back, or a first packet that is another
 * session: FORMAT.md 7) ends the reading, and the statistics say where;
 * `cat a.t4t b.t4t` is never decoded as one recording.
 *
 * t4_reader_next() is three steps, also offered one by one so that a
 * caller can unpack chunks on several threads (decode -j: decode/
 * readahead.c) and still get what t4_reader_next() gives:
 *   1. t4_reader_next_chunk(), in order: find the next chunk (its header,
 *      the resync scan, truncation, a header of another recording) and
 *      read its compressed payload; its warnings through the callback;
 *   2. a t4_unpacker, on any thread, one chunk at a time: the CRC, zstd,
 *      the packet codec, the packet count; what a chunk cannot be
 *      (a warning's text, its statistics, its first session packet) is
 *      kept in its struct t4_chunk_result, touching nothing of the reader;
 *   3. t4_reader_chunk_begin() / _end(), in order, around handing out a
 *      chunk's packets: whether its first packet opens another recording
 *      (that needs the session of the chunks before it), and its
 *      statistics added. The statistics of steps 1 and 3 are kept apart
 *      (st, taken: one thread each) and summed by t4_reader_stats().
 * t4_reader_next() runs the same code on one thread, counting straight
 * into st, streaming a chunk's packets without buffering them. Its usual
 * packet is one of a batch (formats 2 and 3): step 2 takes it from the
 * codec's batch coder straight (pkt_codec2_next(), codec_int.h), not
 * through t4_codec_decode(), and the rare steps (a chunk's end, a session
 * packet, the next chunk) are out of line, so that the usual packet's path
 * is a call of the reader, one of the coder, and a few tests (33
 * instructions of the reader's own a packet, from 41 plus 15 of the codec's
 * on `decode -j 1` of the 60 s sim log: docs/PERFORMANCE.md, "The path from
 * the codec to the decoder").
 */
#include "codec_int.h"
#include "packets.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define SCAN_WIN (64u << 10) /* bytes examined per step of a resync scan */
/* Where the first valid chunk of a log whose first header is damaged can
 * start at the latest: after the largest chunk a header can declare. */
#define OPEN_SCAN_MAX (4096ull + T4_CHUNK_MAX_RAW + T4_CHUNK_MAX_RAW / 128 + 512)

struct t4_reader;

/* Where the bytes come from. read_at reads exactly len bytes that the
 * caller knows lie inside the source (have() said so). */
struct rd_backend {
	int (*read_at)(struct t4_reader *r, void *buf, size_t len, uint64_t off);
	void (*close)(struct t4_reader *r);
};

/* A source read front to back only (stdin): bytes [base, base + len) of
 * the stream are in buf. */
struct rd_stream {
	uint8_t *buf;
	size_t len, cap;
	uint64_t base;
	bool eof;
};

struct t4_reader {
	struct rd_backend be;
	int fd;
	const uint8_t *mem;
	struct rd_stream *stream; /* NULL: file or memory of known size */
	char name[256]; /* path, for messages */
	uint64_t size;  /* source size (a stream: bytes read so far) */
	uint64_t off;   /* where the next chunk starts */
	int done;
	t4_reader_warn_fn warn;
	void *ud;
	uint8_t *win;             /* the resync scan's window (SCAN_WIN bytes) */
	struct t4_chunk chunk;    /* t4_reader_next(): the chunk being decoded */
	struct t4_unpacker *u;    /* t4_reader_next(): its unpacker */
	/* the recording being read: what tells the next one apart */
	bool have_seq, have_session, session_original;
	uint64_t prev_seq;
	uint32_t tag;
	struct t4_session_pkt session;
	struct t4_reader_stats st;    /* steps 1 (and all of t4_reader_next()) */
	struct t4_reader_stats taken; /* step 3: the chunks taken */
};

/* The per-chunk step: one chunk checked, decompressed, decoded. */
struct t4_unpacker {
	ZSTD_DCtx *dctx;
	struct t4_codec *codec;
	struct t4_codec2 *v2;  /* its coder of batches: a batch's packets
				* are taken from it straight */
	uint8_t *raw;
	size_t rcap;
	bool in_chunk;
	size_t rpos, rlen;
	uint32_t expect_pkts;
	struct t4_reader_stats *st; /* where it counts: res.st, or the reader's */
	struct t4_chunk_result res;
};

/* ---- backends -------------------------------------------------------- */

static int file_read_at(struct t4_reader *r, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(r->fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return t4_err(errno, "%s: read at offset %llu: %s", r->name,
				      (unsigned long long)off, strerror(errno));
		if (n == 0)
			return t4_err(EIO, "%s: file shrank while being read (offset %llu)",
				      r->name, (unsigned long long)off);
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static void file_close(struct t4_reader *r)
{
	close(r->fd);
}

static int mem_read_at(struct t4_reader *r, void *buf, size_t len, uint64_t off)
{
	memcpy(buf, r->mem + off, len);
	return 0;
}

static void mem_close(struct t4_reader *r)
{
	(void)r;
}

/* Read the stream until it holds the bytes before `end` or ends. */
static int stream_fill(struct t4_reader *r, uint64_t end)
{
	struct rd_stream *s = r->stream;

	while (!s->eof && s->base + s->len < end) {
		size_t want = (size_t)(end - s->base - s->len);
		if (want < (64u << 10))
			want = 64u << 10;
		if (s->len + want > s->cap) {
			uint8_t *nb = realloc(s->buf, s->len + want);
			if (!nb)
				return t4_err(ENOMEM, "%s: out of memory", r->name);
			s->buf = nb;
			s->cap = s->len + want;
		}
		ssize_t n = read(r->fd, s->buf + s->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return t4_err(errno, "%s: read: %s", r->name, strerror(errno));
		s->eof = n == 0;
		s->len += (size_t)n;
	}
	r->size = s->base + s->len;
	r->st.file_bytes = r->size;
	return 0;
}

/* Forget the stream's bytes before off: nothing before it is read again. */
static void stream_release(struct t4_reader *r, uint64_t off)
{
	struct rd_stream *s = r->stream;
	size_t drop;

	if (!s || off <= s->base)
		return;
	drop = (size_t)(off - s->base < s->len ? off - s->base : s->len);
	memmove(s->buf, s->buf + drop, s->len - drop);
	s->len -= drop;
	s->base += drop;
}

static int stream_read_at(struct t4_reader *r, void *buf, size_t len, uint64_t off)
{
	struct rd_stream *s = r->stream;
	int rc;

	if (off < s->base)
		return t4_err(EIO, "%s: offset %llu was already consumed (a stream cannot "
			      "seek back)", r->name, (unsigned long long)off);
	if ((rc = stream_fill(r, off + len)) < 0)
		return rc;
	if (off + len > s->base + s->len)
		return t4_err(EIO, "%s: ended early (offset %llu)", r->name,
			      (unsigned long long)(off + len));
	memcpy(buf, s->buf + (off - s->base), len);
	return 0;
}

static void stream_close(struct t4_reader *r)
{
	if (r->stream)
		free(r->stream->buf);
	free(r->stream);
}

static const struct rd_backend file_backend = { file_read_at, file_close };
static const struct rd_backend mem_backend = { mem_read_at, mem_close };
static const struct rd_backend stream_backend = { stream_read_at, stream_close };

/* How many bytes the source has at off, up to want (a stream reads that
 * far ahead, or to its end). 0 on a read error of a stream (the error
 * then shows as a truncated or missing chunk). */
static uint64_t have(struct t4_reader *r, uint64_t off, uint64_t want)
{
	if (r->stream && stream_fill(r, off + want) < 0)
		return 0;
	if (off >= r->size)
		return 0;
	return r->size - off < want ? r->size - off : want;
}

/* ---- helpers --------------------------------------------------------- */

static void warnf(struct t4_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warnf(struct t4_reader *r, uint64_t off, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->warn)
		r->warn(r->ud, off, msg);
	else
		t4_warn("%s: %s", r->name, msg);
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *p;

	if (need <= *cap)
		return 0;
	p = realloc(*buf, need);
	if (!p)
		return t4_err(ENOMEM, "out of memory for a %zu-byte chunk buffer", need);
	*buf = p;
	*cap = need;
	return 0;
}

/* Skip a damaged chunk whose header is valid: it ends where it says. */
static void skip_damaged(struct t4_reader *r, uint64_t total)
{
	r->st.damaged_chunks++;
	r->st.skipped_bytes += total;
	r->off += total;
}

static void mark_truncated(struct t4_reader *r, uint64_t avail)
{
	r->st.truncated = 1;
	r->st.skipped_bytes += avail;
	r->done = 1;
}

/* ---- resynchronisation ----------------------------------------------- */

/* Is there a chunk start at off: the magic, then (if 64 bytes remain) a
 * header with a valid CRC? A magic with less than 64 bytes after it counts
 * too: the main loop reports it as a truncated chunk. */
static int chunk_start_at(struct t4_reader *r, const uint8_t *win, size_t in_win,
			  uint64_t off, int *err)
{
	uint8_t hb[T4_CHUNK_HDR_SIZE];
	struct t4_chunk_hdr h;
	int rc;

	if (have(r, off, T4_CHUNK_HDR_SIZE) < T4_CHUNK_HDR_SIZE)
		return 1;
	if (in_win >= T4_CHUNK_HDR_SIZE) {
		memcpy(hb, win, T4_CHUNK_HDR_SIZE);
	} else if ((*err = r->be.read_at(r, hb, sizeof(hb), off)) < 0) {
		return 0;
	}
	rc = t4_chunk_hdr_unpack(hb, &h);
	return rc == 0 || rc == -EPROTO;
}

/* Find the first chunk start at or after `from` and before `limit`; the
 * end of the data when there is none.
 * Returns 0 or a negative errno (I/O). */
static int scan_forward(struct t4_reader *r, uint64_t from, uint64_t limit, uint64_t *found)
{
	uint64_t pos = from;
	int err = 0;

	if (!r->win && !(r->win = malloc(SCAN_WIN)))
		return t4_err(ENOMEM, "%s: out of memory", r->name);
	while (pos < limit && have(r, pos, T4_CHUNK_MAGIC_LEN) == T4_CHUNK_MAGIC_LEN) {
		size_t n = (size_t)have(r, pos, SCAN_WIN);
		const uint8_t *w = r->win, *hit;

		stream_release(r, pos);
		if ((err = r->be.read_at(r, r->win, n, pos)) < 0)
			return err;
		while ((hit = memmem(w, n - (size_t)(w - r->win), T4_CHUNK_MAGIC,
				     T4_CHUNK_MAGIC_LEN))) {
			uint64_t at = pos + (uint64_t)(hit - r->win);
			if (at >= limit)
				break;
			int ok = chunk_start_at(r, hit, n - (size_t)(hit - r->win), at, &err);
			if (err < 0)
				return err;
			if (ok) {
				*found = at;
				return 0;
			}
			w = hit + 1;
		}
		if (n < SCAN_WIN)
			break;
		pos += n - (T4_CHUNK_MAGIC_LEN - 1); /* a magic may straddle windows */
	}
	*found = r->size; /* the scan read to the end */
	return 0;
}

/* Account the stretch [bad, at) as one damaged chunk and go on at `at`. */
static void skip_to(struct t4_reader *r, uint64_t bad, uint64_t at, const char *why)
{
	r->st.damaged_chunks++;
	r->st.skipped_bytes += at - bad;
	if (at < r->size)
		warnf(r, bad, "chunk at offset %llu: %s, skipped %llu bytes to the next "
		      "chunk at offset %llu", (unsigned long long)bad, why,
		      (unsigned long long)(at - bad), (unsigned long long)at);
	else
		warnf(r, bad, "chunk at offset %llu: %s, no valid chunk after it "
		      "(%llu bytes skipped)", (unsigned long long)bad, why,
		      (unsigned long long)(at - bad));
	r->off = at;
}

static int resync(struct t4_reader *r, const char *why)
{
	uint64_t at;
	int rc = scan_forward(r, r->off + 1, UINT64_MAX, &at);

	if (rc < 0)
		return rc;
	skip_to(r, r->off, at, why);
	return 0;
}

/* ---- one recording ----------------------------------------------------- */

/* Reading stops before the chunk at off: it belongs to another recording.
 * A stream is still read to its end, into nothing (bounded memory): the
 * writer of a pipe is not cut off, and file_bytes is the whole input. */
static void end_recording(struct t4_reader *r, uint64_t off)
{
	r->st.next_recording = off;
	r->done = 1;
	while (r->stream && !r->stream->eof) {
		stream_release(r, r->size);
		if (stream_fill(r, r->size + SCAN_WIN) < 0)
			break;
	}
}

/* Does the chunk with this (valid) header start another recording: a tag
 * other than the recording's, or a sequence number going back? */
static bool other_recording(struct t4_reader *r, const struct t4_chunk_hdr *h)
{
	bool other = (h->tag && r->tag && h->tag != r->tag) ||
		     (r->have_seq && h->seq < r->prev_seq);

	if (!other) {
		r->have_seq = true;
		r->prev_seq = h->seq;
		r->tag = r->tag ? r->tag : h->tag;
	}
	return other;
}

/* A session packet opening a chunk: another recording's when it differs
 * from this one's, or is a second original (a writer writes one). The
 * first one seen is the recording's. */
static bool other_session(struct t4_reader *r, const struct t4_session_pkt *s, bool copy)
{
	if (r->have_session)
		return !t4_session_same(s, &r->session) || (!copy && r->session_original);
	r->have_session = true;
	r->session = *s;
	r->session_original = !copy;
	return false;
}

/* ---- step 1: finding a chunk ----------------------------------------- */

/* The chunk at r->off is shorter than 64 bytes: truncated header or junk. */
static void tail(struct t4_reader *r, uint64_t avail)
{
	uint8_t b[T4_CHUNK_HDR_SIZE];
	size_t n = avail < T4_CHUNK_MAGIC_LEN ? (size_t)avail : T4_CHUNK_MAGIC_LEN;

	if (r->be.read_at(r, b, n, r->off) == 0 && !memcmp(b, T4_CHUNK_MAGIC, n)) {
		warnf(r, r->off, "chunk at offset %llu truncated (only %llu of its %d "
		      "header bytes present: recording interrupted?)",
		      (unsigned long long)r->off, (unsigned long long)avail,
		      T4_CHUNK_HDR_SIZE);
		mark_truncated(r, avail);
		return;
	}
	warnf(r, r->off, "chunk at offset %llu: %llu bytes of garbage at the end "
	      "of the file, skipped", (unsigned long long)r->off,
	      (unsigned long long)avail);
	r->st.damaged_chunks++;
	r->st.skipped_bytes += avail;
	r->done = 1;
}

/* Find the next chunk with a valid header of this recording and read its
 * payload into c: 1, 0 at the end, or a negative errno. */
static int find_chunk(struct t4_reader *r, struct t4_chunk *c)
{
	uint8_t hb[T4_CHUNK_HDR_SIZE];
	struct t4_chunk_hdr h;
	int rc;

	while (!r->done) {
		uint64_t avail, total;

		stream_release(r, r->off);
		avail = have(r, r->off, T4_CHUNK_HDR_SIZE);
		if (avail == 0) {
			r->done = 1;
			break;
		}
		if (avail < T4_CHUNK_HDR_SIZE) {
			tail(r, avail);
			break;
		}
		if ((rc = r->be.read_at(r, hb, sizeof(hb), r->off)) < 0)
			return rc;
		rc = t4_chunk_hdr_unpack(hb, &h);
		if (rc == -EBADMSG) {
			char why_hdr[160];
			snprintf(why_hdr, sizeof(why_hdr), "%s", t4_errmsg());
			if ((rc = resync(r, why_hdr)) < 0)
				return rc;
			continue;
		}
		if (other_recording(r, &h)) {
			end_recording(r, r->off);
			break;
		}
		total = (uint64_t)h.hdr_size + h.comp_size;
		avail = have(r, r->off, total);
		if (total > avail) {
			warnf(r, r->off, "chunk at offset %llu truncated (file ends %llu "
			      "bytes early: recording interrupted?)",
			      (unsigned long long)r->off,
			      (unsigned long long)(total - avail));
			mark_truncated(r, avail);
			break;
		}
		if (rc == -EPROTO) {
			warnf(r, r->off, "chunk at offset %llu: format version %u is newer "
			      "than this t410trace supports (%d), skipped",
			      (unsigned long long)r->off, h.version, T4_FORMAT_VERSION);
			skip_damaged(r, total);
			continue;
		}
		if ((rc = grow(&c->payload, &c->cap, h.comp_size ? h.comp_size : 1)) < 0)
			return rc;
		if ((rc = r->be.read_at(r, c->payload, h.comp_size, r->off + h.hdr_size)) < 0)
			return rc;
		c->offset = r->off;
		c->h = h;
		c->before = r->st;
		r->off += total;
		return 1;
	}
	return 0;
}

/* ---- step 2: unpacking a chunk ---------------------------------------- */

/* Check and decompress the chunk's payload. 0 or a reason. */
static const char *unpack_payload(struct t4_unpacker *u, const struct t4_chunk *c)
{
	const struct t4_chunk_hdr *h = &c->h;
	unsigned long long fcs;
	size_t n;

	if (t4_crc32c(0, c->payload, h->comp_size) != h->payload_crc)
		return "payload CRC mismatch";
	fcs = ZSTD_getFrameContentSize(c->payload, h->comp_size);
	if (fcs == ZSTD_CONTENTSIZE_ERROR)
		return "payload is not a zstd frame";
	if (fcs == ZSTD_CONTENTSIZE_UNKNOWN)
		return "zstd frame has no content size";
	if (fcs != h->raw_size)
		return "zstd content size differs from the header's raw size";
	n = ZSTD_findFrameCompressedSize(c->payload, h->comp_size);
	if (ZSTD_isError(n) || n != h->comp_size)
		return "payload is not exactly one zstd frame";
	if (grow(&u->raw, &u->rcap, h->raw_size ? h->raw_size : 1) < 0)
		return "out of memory";
	n = ZSTD_decompressDCtx(u->dctx, u->raw, h->raw_size, c->payload, h->comp_size);
	if (ZSTD_isError(n))
		return ZSTD_getErrorName(n);
	if (n != h->raw_size)
		return "decompressed size differs from the header's raw size";
	return NULL;
}

int t4_unpacker_new(struct t4_unpacker **out)
{
	struct t4_unpacker *u = calloc(1, sizeof(*u));

	*out = NULL;
	if (!u || !(u->dctx = ZSTD_createDCtx()) || !(u->codec = t4_codec_new())) {
		t4_unpacker_free(u);
		return t4_err(ENOMEM, "out of memory for a chunk unpacker");
	}
	u->v2 = pkt_codec_v2(u->codec);
	u->st = &u->res.st;
	*out = u;
	return 0;
}

void t4_unpacker_free(struct t4_unpacker *u)
{
	if (!u)
		return;
	ZSTD_freeDCtx(u->dctx);
	t4_codec_free(u->codec);
	free(u->raw);
	free(u);
}

/* Start on chunk c, counting into *u->st (not reset). */
static void unpack_start(struct t4_unpacker *u, const struct t4_chunk *c)
{
	const char *why = unpack_payload(u, c);

	u->res.offset = c->offset;
	u->res.seen = 0;
	u->res.warning[0] = 0;
	u->in_chunk = !why;
	if (why) {
		snprintf(u->res.warning, sizeof(u->res.warning), "chunk at offset %llu: %s, "
			 "skipped", (unsigned long long)c->offset, why);
		u->st->damaged_chunks++;
		u->st->skipped_bytes += (uint64_t)c->h.hdr_size + c->h.comp_size;
		return;
	}
	u->st->chunks++;
	u->st->raw_bytes += c->h.raw_size;
	t4_codec_start(u->codec, c->h.version);
	u->rpos = 0;
	u->rlen = c->h.raw_size;
	u->expect_pkts = c->h.packets;
}

/* The chunk turned out bad after some of its packets were returned. */
static void chunk_failed(struct t4_unpacker *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void chunk_failed(struct t4_unpacker *u, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(u->res.warning, sizeof(u->res.warning), "chunk at offset %llu: %s, skipped "
		 "(its first %u packets were already returned)",
		 (unsigned long long)u->res.offset, why, u->res.seen);
	u->st->chunks--;
	u->st->damaged_chunks++;
}

/* The chunk's next packet of a known type (unknown ones are counted and
 * skipped): 1, or 0 at its end, where a failure leaves its warning.
 * Inlined into its two callers: it runs once per packet. */
static inline __attribute__((always_inline)) int unpack_next(struct t4_unpacker *u, struct t4_packet *p)
{
	while (u->in_chunk) {
		int n;
		if (pkt_codec2_in_batch(u->v2)) { /* most packets: inside the payload */
			n = pkt_codec2_next(u->v2, p);
		} else if (u->rpos >= u->rlen) {
			u->in_chunk = false;
			if (u->res.seen != u->expect_pkts)
				chunk_failed(u, "%u packets decoded, header says %u", u->res.seen,
					     u->expect_pkts);
			break;
		} else {
			n = t4_codec_decode(u->codec, u->raw + u->rpos, u->rlen - u->rpos, p);
		}
		if (n < 0) {
			u->in_chunk = false;
			chunk_failed(u, "packet at payload byte %zu does not decode (%s)", u->rpos,
				     t4_errmsg());
			break;
		}
		u->rpos += (size_t)n;
		u->res.seen++;
		if (p->type == 0) {
			u->st->unknown_packets++;
			continue;
		}
		return 1;
	}
	return 0;
}

static void count_packet(struct t4_reader_stats *st, const struct t4_packet *p)
{
	if (p->copy)
		st->copies++;
	else
		st->packets++;
}

void t4_unpacker_start(struct t4_unpacker *u, const struct t4_chunk *c)
{
	memset(&u->res, 0, sizeof(u->res));
	unpack_start(u, c);
}

int t4_unpacker_next(struct t4_unpacker *u, struct t4_packet *p)
{
	if (!unpack_next(u, p))
		return 0;
	if (p->type == T4_PKT_SESSION && !u->res.has_session) {
		u->res.has_session = true;
		u->res.session_first = u->res.seen == 1;
		u->res.session_copy = p->copy;
		u->res.session = p->session;
	}
	count_packet(&u->res.st, p);
	return 1;
}

const struct t4_chunk_result *t4_unpacker_result(const struct t4_unpacker *u)
{
	return &u->res;
}

/* ---- step 3, and the three on one thread ------------------------------ */

/* Load the next good chunk into r->u: 1, 0 at the end, or a negative
 * errno. Out of line, as the two below: t4_reader_next() keeps only the
 * usual packet's path, so that it saves and restores fewer registers. */
static __attribute__((noinline)) int load_chunk(struct t4_reader *r)
{
	int rc;

	while ((rc = find_chunk(r, &r->chunk)) > 0) {
		unpack_start(r->u, &r->chunk);
		if (r->u->in_chunk)
			return 1;
		warnf(r, r->chunk.offset, "%s", r->u->res.warning);
	}
	return rc;
}

/* The chunk ended: what went wrong with it, if anything, said. */
static __attribute__((noinline)) void chunk_ended(struct t4_reader *r)
{
	if (r->u->res.warning[0])
		warnf(r, r->chunk.offset, "%s", r->u->res.warning);
}

/* A session packet p of the chunk: 1 to hand it out, or 0 where it opens
 * the chunk and another recording (the reading ends). */
static __attribute__((noinline)) int session_packet(struct t4_reader *r,
						    const struct t4_packet *p)
{
	if (other_session(r, &p->session, p->copy) && r->u->res.seen == 1) {
		r->u->in_chunk = false; /* the chunk is the next recording's */
		r->st.chunks--;
		r->st.raw_bytes -= r->chunk.h.raw_size;
		end_recording(r, r->chunk.offset);
		return 0;
	}
	count_packet(&r->st, p);
	return 1;
}

int t4_reader_next(struct t4_reader *r, struct t4_packet *p)
{
	for (;;) {
		if (r->u->in_chunk) {
			if (unpack_next(r->u, p)) {
				if (p->type == T4_PKT_SESSION)
					return session_packet(r, p);
				count_packet(&r->st, p);
				return 1;
			}
			chunk_ended(r);
		}
		int rc = load_chunk(r);
		if (rc <= 0)
			return rc;
	}
}

int t4_reader_next_chunk(struct t4_reader *r, struct t4_chunk *c)
{
	return find_chunk(r, c);
}

void t4_chunk_free(struct t4_chunk *c)
{
	free(c->payload);
	c->payload = NULL;
	c->cap = 0;
}

int t4_reader_chunk_begin(struct t4_reader *r, const struct t4_chunk_result *res)
{
	return !(res->session_first && r->have_session &&
		 other_session(r, &res->session, res->session_copy));
}

static void stats_add(struct t4_reader_stats *to, const struct t4_reader_stats *s)
{
	to->chunks += s->chunks;
	to->damaged_chunks += s->damaged_chunks;
	to->truncated += s->truncated;
	to->packets += s->packets;
	to->unknown_packets += s->unknown_packets;
	to->raw_bytes += s->raw_bytes;
	to->file_bytes += s->file_bytes;
	to->skipped_bytes += s->skipped_bytes;
	to->copies += s->copies;
	to->next_recording += s->next_recording;
}

void t4_reader_chunk_end(struct t4_reader *r, const struct t4_chunk_result *res)
{
	if (res->has_session)
		other_session(r, &res->session, res->session_copy); /* the first: the recording's */
	stats_add(&r->taken, &res->st);
}

void t4_reader_end_before(struct t4_reader *r, const struct t4_chunk *c)
{
	r->st = c->before;
	end_recording(r, c->offset);
}

/* ---- public ---------------------------------------------------------- */

void t4_reader_stats(const struct t4_reader *r, struct t4_reader_stats *s)
{
	*s = r->st;
	stats_add(s, &r->taken);
}

const char *t4_reader_recording_note(const char *name, const struct t4_reader_stats *st,
				     const char *cmd, char *buf, size_t cap)
{
	unsigned long long at = st->next_recording;

	if (!at)
		snprintf(buf, cap, "%s", "");
	else
		snprintf(buf, cap, "another recording starts at offset %llu; only the first "
			 "one was read (to read the next: tail -c +%llu %s | t410trace %s -)",
			 at, at + 1, strcmp(name, "-") ? name : "FILE", cmd);
	return buf;
}

const char *t4_reader_damage_note(const struct t4_reader_stats *st, char *buf, size_t cap)
{
	if (!st->damaged_chunks && !st->truncated)
		snprintf(buf, cap, "none");
	else
		snprintf(buf, cap, "%llu damaged chunk%s skipped, %s, %llu byte%s unreadable",
			 (unsigned long long)st->damaged_chunks, st->damaged_chunks == 1 ? "" : "s",
			 st->truncated ? "truncated" : "not truncated",
			 (unsigned long long)st->skipped_bytes, st->skipped_bytes == 1 ? "" : "s");
	return buf;
}

void t4_reader_close(struct t4_reader *r)
{
	if (!r)
		return;
	r->be.close(r);
	t4_unpacker_free(r->u);
	t4_chunk_free(&r->chunk);
	free(r->win);
	free(r);
}

/* A file that does not start with the magic: a log whose first header is
 * damaged opens at its first valid chunk (starting at most OPEN_SCAN_MAX
 * bytes in), any other file is refused. 0, or a negative errno with the
 * message. */
static int open_past_damage(struct t4_reader *r)
{
	uint64_t at;
	int rc = scan_forward(r, 1, OPEN_SCAN_MAX + 1, &at);

	if (rc < 0)
		return rc;
	if (at >= r->size || have(r, at, T4_CHUNK_HDR_SIZE) < T4_CHUNK_HDR_SIZE)
		return t4_err(EBADMSG, "%s: not a t410trace log (bad magic)", r->name);
	skip_to(r, 0, at, "bad magic");
	return 0;
}

/* The first n bytes (as many as the size says, up to a header) into hb.
 * A file whose size is not what reading it gives is refused by what it
 * holds: a /proc file's size reads 0 (it was called "empty"), a /sys
 * attribute's 4096 however few bytes it has ("file shrank while being
 * read"). A log cut while it is opened still says so, as any read. */
static int read_first(struct t4_reader *r, uint8_t *hb, size_t n)
{
	ssize_t got = -1;

	if (r->fd >= 0 && !r->stream)
		got = pread(r->fd, hb, n ? n : T4_CHUNK_MAGIC_LEN, 0);
	if (n && (size_t)got == n)
		return 0;
	if (got <= 0) /* a stream, memory, no byte or a read error: as before */
		return n ? r->be.read_at(r, hb, n, 0)
			 : t4_err(EBADMSG, "%s: empty file, not a t410trace log", r->name);
	if (memcmp(hb, T4_CHUNK_MAGIC, (size_t)got < T4_CHUNK_MAGIC_LEN ? (size_t)got
									 : T4_CHUNK_MAGIC_LEN))
		return t4_err(EBADMSG, "%s: not a t410trace log (bad magic)", r->name);
	if (!n)
		return t4_err(EBADMSG, "%s: its size reads 0 though it holds a log (a /proc or /sys "
			      "file?); read it through a pipe: cat FILE | t410trace decode -", r->name);
	return r->be.read_at(r, hb, n, 0);
}

/* Common part of both opens: check the first bytes, refuse what is not a
 * log of a version we read. */
static int reader_init(struct t4_reader *r)
{
	uint8_t hb[T4_CHUNK_HDR_SIZE];
	struct t4_chunk_hdr h;
	size_t n;
	int rc;

	/* a stream that cannot be read (a closed standard input) says so,
	 * not "empty" */
	if (r->stream && (rc = stream_fill(r, sizeof(hb))) < 0)
		return rc;
	n = (size_t)have(r, 0, sizeof(hb));
	r->st.file_bytes = r->size;
	if ((rc = read_first(r, hb, n)) < 0)
		return rc;
	if (t4_unpacker_new(&r->u) < 0)
		return t4_err(ENOMEM, "%s: out of memory for the reader", r->name);
	r->u->st = &r->st;
	if (memcmp(hb, T4_CHUNK_MAGIC, n < T4_CHUNK_MAGIC_LEN ? n : T4_CHUNK_MAGIC_LEN)) {
		if ((rc = open_past_damage(r)) < 0)
			return rc;
		if ((rc = r->be.read_at(r, hb, sizeof(hb), r->off)) < 0)
			return rc;
		n = sizeof(hb);
	}
	if (n == sizeof(hb) && t4_chunk_hdr_unpack(hb, &h) == -EPROTO)
		return t4_err(EPROTO, "%s: format version %u is newer than this "
			      "t410trace supports (%d); upgrade t410trace", r->name,
			      h.version, T4_FORMAT_VERSION);
	return 0;
}

static struct t4_reader *reader_new(const char *name, t4_reader_warn_fn warn, void *ud)
{
	struct t4_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		t4_err(ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->fd = -1;
	r->be = mem_backend;
	r->warn = warn;
	r->ud = ud;
	return r;
}

static int finish_open(struct t4_reader **out, struct t4_reader *r)
{
	int rc = reader_init(r);

	if (rc < 0) {
		t4_reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* Standard input: a regular file is read like one; anything else (a
 * pipe, a FIFO, a terminal) is streamed. */
static int open_stdin(struct t4_reader *r)
{
	struct stat sb;

	snprintf(r->name, sizeof(r->name), "standard input");
	r->fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
	if (r->fd < 0)
		return t4_err(errno, "standard input: %s", strerror(errno));
	if (fstat(r->fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		r->be = file_backend;
		r->size = (uint64_t)sb.st_size;
		return 0;
	}
	if (S_ISDIR(sb.st_mode))
		return t4_err(EISDIR, "standard input: is a directory, not a t410trace log");
	r->stream = calloc(1, sizeof(*r->stream));
	if (!r->stream)
		return t4_err(ENOMEM, "standard input: out of memory");
	r->be = stream_backend;
	return 0;
}

static int open_file(struct t4_reader *r, const char *path)
{
	struct stat sb;

	if (!path[0]) /* else "': No such file or directory'", naming nothing */
		return t4_err(ENOENT, "an empty file name is no log ('-' is standard input)");
	/* O_NONBLOCK: a FIFO without a writer is refused below, not waited on */
	r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0)
		return t4_err(errno, "%s: %s", path, strerror(errno));
	r->be = file_backend;
	if (fstat(r->fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		return t4_err(EINVAL, "%s: not a regular file, not a t410trace log "
			      "(read a pipe as standard input: '-')", path);
	fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) & ~O_NONBLOCK);
	r->size = (uint64_t)sb.st_size;
	return 0;
}

int t4_reader_open(struct t4_reader **out, const char *path,
		   t4_reader_warn_fn warn, void *ud)
{
	struct t4_reader *r;
	int rc;

	*out = NULL;
	if (!(r = reader_new(path, warn, ud)))
		return -ENOMEM;
	rc = !strcmp(path, "-") ? open_stdin(r) : open_file(r, path);
	if (rc < 0) {
		if (r->fd < 0)
			r->be = mem_backend; /* nothing to close */
		t4_reader_close(r);
		return rc;
	}
	return finish_open(out, r);
}

int t4_reader_open_mem(struct t4_reader **out, const void *buf, size_t len,
		       t4_reader_warn_fn warn, void *ud)
{
	struct t4_reader *r;

	*out = NULL;
	if (!(r = reader_new("memory buffer", warn, ud)))
		return -ENOMEM;
	r->mem = buf;
	r->size = len;
	return finish_open(out, r);
}
