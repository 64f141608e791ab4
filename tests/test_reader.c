/* test_reader.c - the log reader (suite "reader") and `t410trace info`
 * (suite "reader_info"): round trips through memory and files, truncation at
 * every byte of the last chunk, bit flips, garbage, empty and foreign
 * files, newer versions, unknown packet types; `info --json` numbers on a
 * generated log and on a log written by tools/t4write.py from FORMAT.md.
 */
#include "cli_testutil.h"
#include "probe.h"
#include "packets_testutil.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

struct warns {
	int n;
	uint64_t last_off;
	char last[512];
};

static void on_warn(void *ud, uint64_t off, const char *msg)
{
	struct warns *w = ud;
	w->n++;
	w->last_off = off;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

struct got {
	struct t4_packet *p;
	size_t n, cap;
	struct t4_reader_stats st;
	struct warns w;
	int rc;
};

static void drain(struct t4_reader *r, struct got *g)
{
	struct t4_packet p;

	while ((g->rc = t4_reader_next(r, &p)) > 0) {
		if (g->n == g->cap) {
			g->cap = g->cap ? g->cap * 2 : 256;
			g->p = realloc(g->p, g->cap * sizeof(*g->p));
			cr_assert(g->p);
		}
		g->p[g->n++] = p;
	}
	t4_reader_stats(r, &g->st);
}

/* Read a whole buffer; the open must succeed. */
static void read_mem(const void *buf, size_t len, struct got *g)
{
	struct t4_reader *r;

	memset(g, 0, sizeof(*g));
	cr_assert_eq(t4_reader_open_mem(&r, buf, len, on_warn, &g->w), 0, "open: %s",
		     t4_errmsg());
	drain(r, g);
	t4_reader_close(r);
	cr_assert_eq(g->rc, 0, "reader error %d: %s", g->rc, t4_errmsg());
}

/* Read a whole buffer comparing each packet on the fly with exp[],
 * where exp[skip_lo..skip_hi) are expected to be missing. Nothing is
 * stored (a struct t4_packet is 2.4 kB): g->n counts the packets. */
static void check_stream(struct t4_reader *r, const struct t4_packet *exp, size_t n_exp,
			 size_t skip_lo, size_t skip_hi, struct got *g)
{
	struct t4_packet p;

	while ((g->rc = t4_reader_next(r, &p)) > 0) {
		size_t idx = g->n < skip_lo ? g->n : g->n + (skip_hi - skip_lo);
		cr_assert_lt(idx, n_exp, "more packets than expected");
		cr_assert(tu_pkt_eq(&p, &exp[idx]), "packet %zu (type %u) differs", idx,
			  exp[idx].type);
		g->n++;
	}
	t4_reader_stats(r, &g->st);
	t4_reader_close(r);
	cr_assert_eq(g->rc, 0, "reader error %d: %s", g->rc, t4_errmsg());
	cr_assert_eq(g->n, n_exp - (skip_hi - skip_lo), "got %zu packets", g->n);
}

static void read_check(const void *buf, size_t len, const struct t4_packet *exp,
		       size_t n_exp, size_t skip_lo, size_t skip_hi, struct got *g)
{
	struct t4_reader *r;

	memset(g, 0, sizeof(*g));
	cr_assert_eq(t4_reader_open_mem(&r, buf, len, on_warn, &g->w), 0, "open: %s",
		     t4_errmsg());
	check_stream(r, exp, n_exp, skip_lo, skip_hi, g);
}

/* Index of the first packet of chunk c in the realistic log. */
static size_t chunk_first_pkt(const struct tu_log *l, size_t c)
{
	size_t k = 0;

	for (size_t i = 0; i < c; i++)
		k += l->chunk_pkts[i];
	return k;
}

static void write_file(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f);
	cr_assert_eq(fwrite(b, 1, n, f), n);
	fclose(f);
}

/* ---- reader ------------------------------------------------------------- */

Test(reader, roundtrip_mem_and_file)
{
	struct tu_log l;
	struct t4_packet *exp;
	size_t n_exp;
	struct got g;
	struct t4_reader *r;
	char *dir = cli_tmpdir("t4h5"), path[256];

	tu_log_init(&l);
	tu_realistic_log(&l, 3, 5000, 700, &exp, &n_exp);
	cr_assert_eq(l.nchunks, 8u);
	read_check(l.buf, l.len, exp, n_exp, 0, 0, &g);
	cr_assert_eq(g.st.chunks, 8u);
	cr_assert_eq(g.st.packets, n_exp);
	cr_assert_eq(g.st.damaged_chunks + g.st.truncated + g.st.skipped_bytes +
		     g.st.unknown_packets, 0u);
	cr_assert_eq(g.st.file_bytes, l.len);
	cr_assert_eq(g.w.n, 0);

	snprintf(path, sizeof(path), "%s/log.t4", dir);
	write_file(path, l.buf, l.len);
	memset(&g, 0, sizeof(g));
	cr_assert_eq(t4_reader_open(&r, path, on_warn, &g.w), 0, "%s", t4_errmsg());
	check_stream(r, exp, n_exp, 0, 0, &g);
	cr_assert_eq(g.w.n, 0);
	cr_assert_eq(g.st.file_bytes, l.len);
	uint64_t raw = 0;
	for (size_t c = 0; c < l.nchunks; c++)
		raw += t4_get_le32(l.buf + l.chunk_off[c] + 40);
	cr_assert_eq(g.st.raw_bytes, raw);
	free(exp);
	tu_log_free(&l);
	t4_rmtree(dir);
	free(dir);
}

/* Cut the log at every byte of its last chunk. */
Test(reader, truncation_at_every_byte_of_last_chunk)
{
	struct tu_log l;
	struct t4_packet *exp;
	size_t n_exp;

	tu_log_init(&l);
	tu_realistic_log(&l, 4, 300, 100, &exp, &n_exp);
	cr_assert_eq(l.nchunks, 4u);
	size_t last = l.chunk_off[l.nchunks - 1];
	size_t lost = chunk_first_pkt(&l, l.nchunks - 1);

	for (size_t cut = last; cut < l.len; cut++) {
		struct got g;
		read_check(l.buf, cut, exp, n_exp, lost, n_exp, &g);
		cr_assert_eq(g.st.chunks, l.nchunks - 1);
		cr_assert_eq(g.st.damaged_chunks, 0u, "cut %zu", cut);
		cr_assert_eq(g.st.truncated, cut > last, "cut %zu", cut);
		cr_assert_eq(g.w.n, cut > last, "cut %zu: %d warnings", cut, g.w.n);
		if (cut > last) {
			cr_assert(strstr(g.w.last, "truncated"), "%s", g.w.last);
			cr_assert_eq(g.w.last_off, last);
			cr_assert_eq(g.st.skipped_bytes, cut - last);
		}
	}
	free(exp);
	tu_log_free(&l);
}

/* One flipped bit anywhere, the first magic included (issue 16.5: a flip
 * in bytes 0-7 made the whole file "not a t410trace log"): its chunk is
 * skipped with one warning, every other chunk comes back whole. */
Test(reader, single_bit_flips)
{
	struct tu_log l;
	struct t4_packet *exp;
	size_t n_exp;
	uint64_t s = 11;
	uint8_t *copy;

	tu_log_init(&l);
	tu_realistic_log(&l, 5, 600, 120, &exp, &n_exp);
	copy = malloc(l.len);
	for (int i = 0; i < 400; i++) {
		/* every 4th flip lands in a header, to exercise resync */
		size_t c = tu_below(&s, l.nchunks), off;
		if (i % 8 == 0) /* and every 8th in the file's first bytes */
			c = 0, off = tu_below(&s, T4_CHUNK_MAGIC_LEN);
		else if (i % 4 == 0)
			off = l.chunk_off[c] + tu_below(&s, T4_CHUNK_HDR_SIZE);
		else
			off = l.chunk_off[c] + tu_below(&s, l.chunk_off[c + 1] - l.chunk_off[c]);
		memcpy(copy, l.buf, l.len);
		copy[off] ^= (uint8_t)(1u << tu_below(&s, 8));
		struct got g;
		size_t lo = chunk_first_pkt(&l, c);
		read_check(copy, l.len, exp, n_exp, lo, lo + l.chunk_pkts[c], &g);
		cr_assert_eq(g.st.damaged_chunks, 1u, "flip at %zu", off);
		cr_assert_eq(g.st.chunks, l.nchunks - 1);
		cr_assert_eq(g.st.truncated, 0u);
		cr_assert_eq(g.w.n, 1);
		cr_assert_eq(g.w.last_off, l.chunk_off[c]);
		cr_assert_eq(g.st.skipped_bytes, l.chunk_off[c + 1] - l.chunk_off[c]);
	}
	free(copy);
	free(exp);
	tu_log_free(&l);
}

/* Damage in two chunks, including two adjacent bad headers. */
Test(reader, flips_in_several_chunks)
{
	struct tu_log l;
	struct t4_packet *exp;
	size_t n_exp;
	struct got g;

	tu_log_init(&l);
	tu_realistic_log(&l, 6, 1000, 100, &exp, &n_exp);
	cr_assert_eq(l.nchunks, 11u); /* 10 of triggers, 1 with the status */
	l.buf[l.chunk_off[2] + 20] ^= 1;                     /* header */
	l.buf[l.chunk_off[3] + 3] ^= 1;                      /* magic */
	l.buf[l.chunk_off[7] + T4_CHUNK_HDR_SIZE + 10] ^= 1; /* payload */
	read_mem(l.buf, l.len, &g);
	cr_assert_eq(g.st.chunks, 8u);
	/* two adjacent bad headers are skipped as one stretch */
	cr_assert_eq(g.st.damaged_chunks, 2u);
	cr_assert_eq(g.st.skipped_bytes, l.chunk_off[4] - l.chunk_off[2] +
					 l.chunk_off[8] - l.chunk_off[7]);
	size_t expect = n_exp - l.chunk_pkts[2] - l.chunk_pkts[3] - l.chunk_pkts[7];
	cr_assert_eq(g.n, expect);
	cr_assert(tu_pkt_eq(&g.p[g.n - 1], &exp[n_exp - 1]));
	free(g.p);
	free(exp);
	tu_log_free(&l);
}

/* Random bytes after the magic, and random bytes spliced into a log. */
Test(reader, garbage_never_crashes)
{
	uint64_t s = 12;
	uint8_t *b = malloc(200000);
	struct tu_log l;
	struct t4_packet *exp;
	size_t n_exp;

	for (int i = 0; i < 300; i++) {
		size_t len = 1 + tu_below(&s, i < 250 ? 600 : 200000);
		for (size_t k = 0; k < len; k++)
			b[k] = (uint8_t)tu_rand(&s);
		memcpy(b, T4_CHUNK_MAGIC, len < 8 ? len : 8);
		/* sprinkle magics so that the resync scan has candidates */
		for (int m = 0; m < 5 && len > 80; m++)
			memcpy(b + 8 + tu_below(&s, len - 16), T4_CHUNK_MAGIC, 8);
		struct got g;
		read_mem(b, len, &g);
		cr_assert_eq(g.n, 0u);
		cr_assert_eq(g.st.chunks, 0u);
		cr_assert_geq(g.w.n, 1);
		cr_assert_leq(g.st.skipped_bytes, len);
		free(g.p);
	}
	/* a valid log with junk in the middle and at the end */
	tu_log_init(&l);
	tu_realistic_log(&l, 7, 200, 100, &exp, &n_exp);
	size_t mid = l.chunk_off[1], len = 0;
	memcpy(b, l.buf, mid);
	len = mid;
	for (int k = 0; k < 1000; k++)
		b[len++] = (uint8_t)tu_rand(&s);
	memcpy(b + len, l.buf + mid, l.len - mid);
	len += l.len - mid;
	memcpy(b + len, "junk", 4);
	len += 4;
	struct got g;
	read_check(b, len, exp, n_exp, 0, 0, &g);
	cr_assert_eq(g.st.damaged_chunks, 2u);
	cr_assert_eq(g.st.skipped_bytes, 1004u);
	cr_assert(strstr(g.w.last, "garbage"), "%s", g.w.last);
	free(g.p);
	free(exp);
	tu_log_free(&l);
	free(b);
}

/* A log whose first chunk is damaged every way at once (its magic flipped,
 * garbage in its frame) opens at its second chunk, with one warning, and
 * gives every packet after it (issue 16.5); the same with junk before the
 * first chunk (a prefix), read from a file and from a pipe alike. */
Test(reader, damaged_head_opens_at_the_first_valid_chunk)
{
	struct tu_log l;
	struct t4_packet *exp;
	size_t n_exp, lost;
	uint64_t s = 21;
	struct got g;
	uint8_t *b;

	tu_log_init(&l);
	tu_realistic_log(&l, 13, 500, 100, &exp, &n_exp);
	lost = l.chunk_pkts[0];
	l.buf[0] ^= 0x01;
	l.buf[7] ^= 0x80;
	for (size_t k = l.chunk_off[0] + T4_CHUNK_HDR_SIZE + 10; k < l.chunk_off[1] - 10; k++)
		l.buf[k] = (uint8_t)tu_rand(&s);
	read_check(l.buf, l.len, exp, n_exp, 0, lost, &g);
	cr_assert_eq(g.st.chunks, l.nchunks - 1);
	cr_assert_eq(g.st.damaged_chunks, 1u);
	cr_assert_eq(g.st.skipped_bytes, l.chunk_off[1]);
	cr_assert_eq(g.w.n, 1);
	cr_assert_eq(g.w.last_off, 0u);
	cr_assert(strstr(g.w.last, "chunk at offset 0: bad magic, skipped") &&
		  strstr(g.w.last, "to the next chunk at offset"), "%s", g.w.last);

	/* 5000 bytes of junk before an intact log */
	tu_log_free(&l);
	free(exp);
	tu_log_init(&l);
	tu_realistic_log(&l, 13, 500, 100, &exp, &n_exp);
	b = malloc(l.len + 5000);
	for (size_t k = 0; k < 5000; k++)
		b[k] = (uint8_t)tu_rand(&s);
	memcpy(b + 5000, l.buf, l.len);
	read_check(b, l.len + 5000, exp, n_exp, 0, 0, &g);
	cr_assert_eq(g.st.chunks, l.nchunks);
	cr_assert_eq(g.st.skipped_bytes, 5000u);
	cr_assert_eq(g.w.n, 1);
	free(b);
	free(exp);
	tu_log_free(&l);
}

/* What no log can be stays refused with one line: a valid chunk further
 * in than the largest first chunk, text, a magic with nothing valid after. */
Test(reader, foreign_files_stay_refused)
{
	struct tu_log l;
	struct t4_packet p = { .type = T4_PKT_STATUS };
	size_t far = (size_t)4096 + T4_CHUNK_MAX_RAW + T4_CHUNK_MAX_RAW / 128 + 512 + 1;
	uint8_t *b = calloc(1, far + 4096);
	struct t4_reader *r;

	tu_log_init(&l);
	tu_log_add(&l, &p);
	tu_log_flush(&l);
	memcpy(b + far, l.buf, l.len);
	cr_assert_eq(t4_reader_open_mem(&r, b, far + l.len, NULL, NULL), -EBADMSG);
	cr_assert_str_eq(t4_errmsg(), "memory buffer: not a t410trace log (bad magic)");
	memcpy(b + far - 1, l.buf, l.len); /* the last place a chunk may start */
	cr_assert_eq(t4_reader_open_mem(&r, b, far - 1 + l.len, NULL, NULL), 0, "%s",
		     t4_errmsg());
	t4_reader_close(r);
	memset(b, 'x', 300);
	memcpy(b + 100, T4_CHUNK_MAGIC, T4_CHUNK_MAGIC_LEN); /* no valid header after */
	cr_assert_eq(t4_reader_open_mem(&r, b, 300, NULL, NULL), -EBADMSG);
	memcpy(b + 290, T4_CHUNK_MAGIC, T4_CHUNK_MAGIC_LEN); /* a magic, 2 bytes after */
	cr_assert_eq(t4_reader_open_mem(&r, b, 300, NULL, NULL), -EBADMSG);
	free(b);
	tu_log_free(&l);
}

/* ---- two recordings in one file (issue 16.8) ------------------------------- */

/* A recording: its session (with its ID, 0 for format 1.0), a domain, its
 * event, `chunks` chunks of 10 triggers (format 1.1: each chunk after the
 * first opens with a copy of the session), a status. */
static void one_recording(struct tu_log *l, uint64_t id, const char *host, int chunks)
{
	struct t4_packet p[64];
	size_t n = tu_metadata(p);
	uint64_t s = id + 1;

	snprintf(p[0].session.host, sizeof(p[0].session.host), "%s", host);
	p[0].session.session_id = id;
	l->tag = (uint32_t)id;
	l->seq = 0;
	for (size_t i = 0; i < n; i++)
		tu_log_add(l, &p[i]);
	for (int c = 0; c < chunks; c++) {
		struct t4_packet t[1 + TU_DOMAINS];
		if (c && id) {
			p[0].copy = true;
			tu_log_add(l, &p[0]);
			p[0].copy = false;
		}
		for (uint64_t k = 0; k < 10; k++) {
			size_t m = tu_trigger(&s, (uint64_t)c * 10 + k, t);
			for (size_t i = 0; i < m; i++)
				tu_log_add(l, &t[i]);
		}
		tu_log_flush(l);
	}
}

/* Read buf: the packets (copies apart) and where reading stopped. */
static void read_recording(const uint8_t *buf, size_t len, struct got *g, size_t *refs)
{
	read_mem(buf, len, g);
	*refs = 0;
	for (size_t i = 0; i < g->n; i++)
		*refs += g->p[i].type == T4_PKT_REF;
	free(g->p);
}

Test(reader, a_second_recording_ends_the_first)
{
	static const struct {
		uint64_t a, b;
		const char *host_b;
		const char *what;
	} cases[] = {
		{ 0x1111, 0x2222, "h", "format 1.1: another tag" },
		{ 0, 0, "h", "format 1.0, the same session: a second original session packet" },
		{ 0, 0, "other", "format 1.0: another session" },
		{ 0x1111, 0x1111, "h", "the same recording twice (cat a a)" },
	};

	for (size_t i = 0; i < T4_ARRAY_LEN(cases); i++) {
		struct tu_log l;
		struct got g;
		size_t first, refs;

		tu_log_init(&l);
		one_recording(&l, cases[i].a, "h", 3);
		first = l.len;
		one_recording(&l, cases[i].b, cases[i].host_b, 2);
		read_recording(l.buf, l.len, &g, &refs);
		cr_assert_eq(g.st.next_recording, first, "%s", cases[i].what);
		cr_assert_eq(refs, 30u, "%s: the first recording's triggers only", cases[i].what);
		cr_assert_eq(g.st.chunks, 3u, "%s", cases[i].what);
		cr_assert_eq(g.st.damaged_chunks + g.st.skipped_bytes, 0u, "%s", cases[i].what);
		cr_assert_eq(g.w.n, 0, "%s: a second recording is no damage", cases[i].what);
		cr_assert_eq(g.st.copies, cases[i].a ? 2u : 0u, "%s", cases[i].what);

		/* the second, found by its chunks alone: the first packets of
		 * its chunk 0 lost, its later chunks going back in sequence
		 * (format 1.0) or carrying another tag (1.1) */
		l.buf[first] ^= 1;
		read_recording(l.buf, l.len, &g, &refs);
		if (cases[i].a != cases[i].b || !cases[i].a) /* cat a a with a damaged head: */
			cr_assert_eq(g.st.next_recording, l.chunk_off[4], "%s", cases[i].what);
		cr_assert_eq(refs, 30u, "%s", cases[i].what);
		tu_log_free(&l);
	}
}

/* What does not end a recording: copies of its own session, sequence
 * numbers that skip forward (damage), a session packet inside a chunk. */
Test(reader, one_recording_reads_to_its_end)
{
	struct tu_log l;
	struct t4_packet p[64];
	struct got g;
	size_t refs;

	tu_log_init(&l);
	one_recording(&l, 0x77, "h", 4);
	l.seq += 5; /* chunks 4..8 lost */
	tu_metadata(p);
	p[0].session.session_id = 0x77;
	struct t4_packet t[1 + TU_DOMAINS];
	uint64_t s = 3;
	size_t m = tu_trigger(&s, 90, t);
	for (size_t i = 0; i < m; i++)
		tu_log_add(&l, &t[i]);
	tu_log_add(&l, &p[0]); /* an original session, but not first in its chunk */
	tu_log_flush(&l);
	read_recording(l.buf, l.len, &g, &refs);
	cr_assert_eq(g.st.next_recording, 0u);
	cr_assert_eq(refs, 41u);
	cr_assert_eq(g.st.copies, 3u);
	tu_log_free(&l);
}

static void expect_open_error(const void *buf, size_t len, int err, const char *msg)
{
	struct t4_reader *r = (void *)1;

	cr_assert_eq(t4_reader_open_mem(&r, buf, len, NULL, NULL), err);
	cr_assert_null(r);
	cr_assert(strstr(t4_errmsg(), msg), "message '%s' lacks '%s'", t4_errmsg(), msg);
}

Test(reader, empty_foreign_and_missing_files)
{
	static const uint8_t gz[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2 };
	char *dir = cli_tmpdir("t4h5"), path[256];
	struct t4_reader *r;

	expect_open_error("", 0, -EBADMSG, "empty file, not a t410trace log");
	expect_open_error(gz, sizeof(gz), -EBADMSG, "not a t410trace log (bad magic)");
	expect_open_error("abc", 3, -EBADMSG, "not a t410trace log (bad magic)");
	expect_open_error("T4TRACE\x1b and more bytes", 20, -EBADMSG, "bad magic");

	snprintf(path, sizeof(path), "%s/empty.t4", dir);
	write_file(path, "", 0);
	cr_assert_eq(t4_reader_open(&r, path, NULL, NULL), -EBADMSG);
	cr_assert(strstr(t4_errmsg(), path) && strstr(t4_errmsg(), "empty file"), "%s",
		  t4_errmsg());
	snprintf(path, sizeof(path), "%s/missing.t4", dir);
	cr_assert_eq(t4_reader_open(&r, path, NULL, NULL), -ENOENT);
	cr_assert(strstr(t4_errmsg(), path));
	cr_assert_eq(t4_reader_open(&r, dir, NULL, NULL), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "not a regular file"), "%s", t4_errmsg());
	t4_rmtree(dir);
	free(dir);
}

Test(reader, newer_version)
{
	struct tu_log l;
	struct t4_packet p = { .type = T4_PKT_STATUS };
	struct got g;

	tu_log_init(&l);
	l.version = 4;
	tu_log_add(&l, &p);
	tu_log_flush(&l);
	expect_open_error(l.buf, l.len, -EPROTO,
			  "memory buffer: format version 4 is newer than this t410trace "
			  "supports (3); upgrade t410trace");
	/* a newer chunk after a valid one: skipped with a warning */
	tu_log_free(&l);
	tu_log_init(&l);
	tu_log_add(&l, &p);
	tu_log_flush(&l);
	l.version = 9;
	tu_log_add(&l, &p);
	tu_log_flush(&l);
	tu_log_add(&l, &p);
	tu_log_flush(&l);
	read_mem(l.buf, l.len, &g);
	cr_assert_eq(g.n, 2u);
	cr_assert_eq(g.st.damaged_chunks, 1u);
	cr_assert(strstr(g.w.last, "version 9"), "%s", g.w.last);
	free(g.p);
	tu_log_free(&l);
}

/* Found by tools/fuzz/fuzz_reader: a newer-version header with a valid CRC
 * but hdr_size 0 and comp_size 0 was "skipped by its size" of 0 bytes, so
 * the reader looped forever. The limits now hold for every version: the
 * header is damage, and the reader resyncs to the next chunk. */
Test(reader, newer_chunk_of_size_zero, .timeout = 20)
{
	struct t4_chunk_hdr h = { .version = 3, .hdr_size = 0, .first_trigger = UINT64_MAX };
	uint8_t hb[T4_CHUNK_HDR_SIZE];
	struct t4_packet p = { .type = T4_PKT_STATUS };
	struct tu_log l;
	struct got g;

	tu_log_init(&l);
	tu_log_add(&l, &p);
	tu_log_flush(&l);
	t4_chunk_hdr_pack(&h, hb);
	cr_assert_eq(t4_chunk_hdr_unpack(hb, &h), -EBADMSG);
	cr_assert_str_eq(t4_errmsg(), "chunk header: header size 0 out of range (64..4096)");
	tu_log_append(&l, hb, sizeof(hb));
	tu_log_add(&l, &p);
	tu_log_flush(&l);
	read_mem(l.buf, l.len, &g);
	cr_assert_eq(g.n, 2u);
	cr_assert_eq(g.st.damaged_chunks, 1u);
	cr_assert_eq(g.st.skipped_bytes, (uint64_t)T4_CHUNK_HDR_SIZE);
	cr_assert(strstr(g.w.last, "header size 0 out of range"), "%s", g.w.last);
	free(g.p);
	tu_log_free(&l);
}

Test(reader, unknown_types_and_bigger_header)
{
	struct tu_log l;
	struct t4_packet p = { .type = T4_PKT_BOOKMARK };
	static const uint8_t unk1[] = { 99, 2, 0xab, 0xcd }, unk2[] = { 0x80, 0x02, 0 };
	struct got g;

	tu_log_init(&l);
	l.hdr_size = 96; /* a future header with 32 more bytes */
	p.bookmark.bookmark_id = 1;
	tu_log_add(&l, &p);
	tu_log_raw(&l, unk1, sizeof(unk1), 1);
	p.bookmark.bookmark_id = 2;
	tu_log_add(&l, &p);
	tu_log_raw(&l, unk2, sizeof(unk2), 1);
	tu_log_flush(&l);
	read_mem(l.buf, l.len, &g);
	cr_assert_eq(g.n, 2u);
	cr_assert_eq(g.p[0].bookmark.bookmark_id, 1u);
	cr_assert_eq(g.p[1].bookmark.bookmark_id, 2u);
	cr_assert_eq(g.st.unknown_packets, 2u);
	cr_assert_eq(g.st.packets, 2u);
	cr_assert_eq(g.st.damaged_chunks, 0u);
	cr_assert_eq(g.w.n, 0);
	free(g.p);
	tu_log_free(&l);
}

/* Damage that only shows after the CRC: a packet that does not decode, a
 * wrong packet count, a frame without content size. */
Test(reader, payload_damage_behind_valid_crc)
{
	struct tu_log l;
	struct t4_packet p = { .type = T4_PKT_STATUS };
	static const uint8_t bad[] = { 17, 1, 0 }; /* return packet, body too short */
	struct got g;

	tu_log_init(&l);
	for (int c = 0; c < 4; c++) {
		p.status.triggers = (uint64_t)c * 10;
		tu_log_add(&l, &p);
		p.status.triggers++;
		tu_log_add(&l, &p);
		if (c == 1)
			tu_log_raw(&l, bad, sizeof(bad), 1);
		if (c == 2)
			l.packets_adjust = 1;
		if (c == 3)
			l.no_content_size = 1;
		p.status.triggers++;
		tu_log_add(&l, &p);
		tu_log_flush(&l);
	}
	read_mem(l.buf, l.len, &g);
	/* chunk 0 whole; chunk 1: the 2 packets before the bad one; chunk 2:
	 * all 3 (the count is checked at its end); chunk 3: nothing */
	cr_assert_eq(g.n, 3u + 2u + 3u);
	cr_assert_eq(g.p[3].status.triggers, 10u);
	cr_assert_eq(g.p[4].status.triggers, 11u);
	cr_assert_eq(g.p[5].status.triggers, 20u);
	cr_assert_eq(g.st.chunks, 1u);
	cr_assert_eq(g.st.damaged_chunks, 3u);
	cr_assert_eq(g.w.n, 3);
	cr_assert(strstr(g.w.last, "content size"), "%s", g.w.last);
	free(g.p);
	tu_log_free(&l);
}

/* A batch (FORMAT.md 5a) whose record count says more records than its
 * bits hold: the reader takes a batch's packets from the codec's batch
 * coder straight, not through t4_codec_decode(), and must still return
 * the records before the break, skip the rest of the chunk with the
 * codec's message, and read the next chunk whole. */
Test(reader, batch_that_breaks_after_its_first_records)
{
	struct tu_log l;
	struct t4_codec *enc = t4_codec_new();
	struct t4_packet p = { .type = T4_PKT_STATUS }, r = { .type = T4_PKT_RET };
	uint8_t batch[T4_CODEC_MAX_OUT];
	size_t n;
	struct got g;

	cr_assert(enc);
	cr_assert_eq(t4_codec_start(enc, T4_FORMAT_VERSION), 0);
	r.ret.domain_id = 3;
	r.ret.n_counts = 2;
	for (uint64_t t = 1; t <= 3; t++) {
		r.ret.trigger_id = t;
		r.ret.read_begin_ns = t * 1000;
		r.ret.read_end_ns = t * 1000 + 50;
		r.ret.counts[0] = t * 7;
		cr_assert_eq(t4_codec_encode(enc, &r, batch, sizeof(batch)), 0); /* buffered */
	}
	n = t4_codec_flush(enc, batch, sizeof(batch));
	/* type 20, a one-byte length, the record count 3, then the bits */
	cr_assert(n > 3 && n < 130 && batch[0] == 20 && batch[1] == n - 2 && batch[2] == 3,
		  "%zu bytes: %u %u %u", n, batch[0], batch[1], batch[2]);
	batch[2] = 9; /* six records past its bits */

	tu_log_init(&l);
	tu_log_add(&l, &p);
	tu_log_raw(&l, batch, n, 9);
	tu_log_add(&l, &p);
	tu_log_flush(&l);
	p.status.triggers = 5;
	tu_log_add(&l, &p);
	tu_log_flush(&l);
	read_mem(l.buf, l.len, &g);
	/* the status packet, the batch's 3 records, then the next chunk's */
	cr_assert_eq(g.n, 5u);
	for (uint64_t t = 1; t <= 3; t++) {
		cr_assert_eq(g.p[t].type, T4_PKT_RET);
		cr_assert_eq(g.p[t].ret.trigger_id, t);
		cr_assert_eq(g.p[t].ret.counts[0], t * 7);
	}
	cr_assert_eq(g.p[4].type, T4_PKT_STATUS);
	cr_assert_eq(g.p[4].status.triggers, 5u);
	cr_assert_eq(g.st.chunks, 1u);
	cr_assert_eq(g.st.damaged_chunks, 1u);
	cr_assert_eq(g.w.n, 1);
	cr_assert(strstr(g.w.last, "does not decode (packet type 20: batch of") &&
		  strstr(g.w.last, "bytes malformed)") &&
		  strstr(g.w.last, "its first 4 packets were already returned"), "%s", g.w.last);
	free(g.p);
	tu_log_free(&l);
	t4_codec_free(enc);
}

/* ---- info (runs the binary named by T4_BIN) ------------------------------- */

/* The number after "key": at the top level (keys are printed first). */
static uint64_t json_u64(const char *js, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(js, pat);
	cr_assert(p, "key %s missing in %.300s", key, js);
	return strtoull(p + strlen(pat), NULL, 10);
}

static char *info_json(const char *bin, const char *path, int *status)
{
	char cmd[1024], *out = malloc(1 << 20);

	cr_assert(out);
	snprintf(cmd, sizeof(cmd), "'%s' info --json '%s' 2>/dev/null", bin, path);
	*status = cli_run(out, 1 << 20, "%s", cmd);
	return out;
}

/* The domain of the first return packet (info lists domains in the
 * order first seen: metadata first, so the first domain packet's). */
static uint32_t exp_first_domain(const struct t4_packet *exp, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (exp[i].type == T4_PKT_DOMAIN)
			return exp[i].domain.domain_id;
	return 0;
}

Test(reader_info, json_numbers_of_generated_log)
{
	const char *bin = cli_bin();
	struct tu_log l;
	struct t4_packet *exp;
	size_t n_exp;
	char *dir = cli_tmpdir("t4h5"), path[256], *js;
	int st;

	tu_log_init(&l);
	tu_realistic_log(&l, 8, 3000, 1000, &exp, &n_exp);
	snprintf(path, sizeof(path), "%s/gen.t4", dir);
	write_file(path, l.buf, l.len);
	js = info_json(bin, path, &st);
	cr_assert_eq(st, 0, "%s", js);
	cr_assert_eq(js[0], '{');
	cr_assert_eq(json_u64(js, "triggers"), 3000u);
	cr_assert_eq(json_u64(js, "first_trigger"), 0u);
	cr_assert_eq(json_u64(js, "last_trigger"), 2999u);
	cr_assert(strstr(js, "\"contiguous\": true"));
	cr_assert_eq(json_u64(js, "overruns"), 7u); /* the status packet's */
	cr_assert_eq(json_u64(js, "dropped"), 3u);
	cr_assert_eq(json_u64(js, "chunks"), 4u);
	cr_assert_eq(json_u64(js, "packets"), n_exp);
	cr_assert_eq(json_u64(js, "ret_packets"), 3000u * TU_DOMAINS);
	cr_assert_eq(json_u64(js, "values"), 3000u * (2 + 1 + 32));
	cr_assert_eq(json_u64(js, "bytes"), l.len);
	cr_assert_eq(json_u64(js, "damaged_chunks"), 0u);
	cr_assert_eq(json_u64(js, "unknown_packets"), 0u);
	cr_assert(strstr(js, "\"truncated\": false"));
	cr_assert(strstr(js, "\"name\": \"nvidia_ucf_pmu_0\", \"kind\": \"ucf\""), "%s", js);
	cr_assert(strstr(js, "\"n_events\": 32"));
	cr_assert(strstr(js, "\"bookmarks\": [{\"id\": 1, \"name\": \"phase-1\", "
			     "\"first_trigger\": 10}]"));
	cr_assert(strstr(js, "\"host\": \"testhost\""));
	cr_assert(strstr(js, "\"start\": \"2023-11-14T22:13:20.123456789Z\""), "%s", js);
	cr_assert(strstr(js, "\"simulated\": true"));
	/* per event: the total over the log of the counts the reader gave */
	uint64_t total = 0;
	for (size_t i = 0; i < n_exp; i++)
		if (exp[i].type == T4_PKT_RET && exp[i].ret.domain_id == exp_first_domain(exp, n_exp))
			total += exp[i].ret.counts[1];
	char want[96];
	snprintf(want, sizeof(want), "\"index\": 1, \"pmu\": ");
	const char *ev = strstr(js, want);
	cr_assert(ev, "%s", js);
	snprintf(want, sizeof(want), "\"total\": %" PRIu64 ", \"rate_per_s\": ", total);
	cr_assert(strstr(ev, want), "want %s in %.400s", want, ev);
	free(js);

	/* damage is reported, exit stays 0 */
	l.buf[l.chunk_off[1] + 100] ^= 4;
	write_file(path, l.buf, l.len - 10);
	js = info_json(bin, path, &st);
	cr_assert_eq(st, 0);
	cr_assert_eq(json_u64(js, "damaged_chunks"), 1u);
	cr_assert_eq(json_u64(js, "chunks"), 2u);
	cr_assert(strstr(js, "\"truncated\": true"));
	cr_assert(strstr(js, "payload CRC mismatch"), "%s", js);
	free(js);
	free(exp);
	tu_log_free(&l);
	t4_rmtree(dir);
	free(dir);
}

Test(reader_info, errors_and_human_output)
{
	const char *bin = cli_bin();
	char *dir = cli_tmpdir("t4h5"), path[256], cmd[1024], out[8192];
	struct tu_log l;
	struct t4_packet *exp;
	size_t n_exp;

	snprintf(path, sizeof(path), "%s/notalog", dir);
	write_file(path, "hello world\n", 12);
	snprintf(cmd, sizeof(cmd), "'%s' info '%s' 2>&1", bin, path);
	cr_assert_eq(cli_run(out, sizeof(out), "%s", cmd), 2);
	cr_assert(strstr(out, "not a t410trace log (bad magic)"), "%s", out);
	cr_assert_eq(strchr(out, '\n'), strrchr(out, '\n'), "one line: %s", out);
	snprintf(cmd, sizeof(cmd), "'%s' info '%s/nope' 2>&1", bin, dir);
	cr_assert_eq(cli_run(out, sizeof(out), "%s", cmd), 2);
	snprintf(cmd, sizeof(cmd), "'%s' info 2>&1", bin);
	cr_assert_eq(cli_run(out, sizeof(out), "%s", cmd), 2);
	snprintf(cmd, sizeof(cmd), "'%s' info --help", bin);
	cr_assert_eq(cli_run(out, sizeof(out), "%s", cmd), 0);
	cr_assert(strstr(out, "--json"));

	tu_log_init(&l);
	tu_realistic_log(&l, 9, 100, 1000, &exp, &n_exp);
	snprintf(path, sizeof(path), "%s/h.t4", dir);
	write_file(path, l.buf, l.len);
	snprintf(cmd, sizeof(cmd), "'%s' info '%s' 2>&1", bin, path);
	cr_assert_eq(cli_run(out, sizeof(out), "%s", cmd), 0);
	cr_assert(strstr(out, "[SIMULATED]"), "%s", out);
	cr_assert(strstr(out, "100 (IDs 0..99, contiguous)"), "%s", out);
	cr_assert(strstr(out, "nvidia_ucf_pmu_0"));
	free(exp);
	tu_log_free(&l);
	t4_rmtree(dir);
	free(dir);
}

/* tools/t4write.py writes a log from docs/FORMAT.md alone. */
Test(reader_info, independent_python_writer)
{
	char script[PATH_MAX];
	const char *bin = cli_bin();
	char *dir = cli_tmpdir("t4h5"), path[256], out[4096], *js;
	struct t4_reader *r;
	struct t4_packet p;
	uint64_t refs = 0, rets = 0, bad = 0;
	int st;

	if (!t4t_have_cmds("python3 zstd"))
		cr_skip_test("python3 or zstd missing");
	cr_assert_not_null(cli_repo_file("tools/t4write.py", script), "tools/t4write.py missing");
	snprintf(path, sizeof(path), "%s/py.t4", dir);
	cr_assert_eq(cli_run(out, sizeof(out), "python3 '%s' '%s' --triggers 250 --per-chunk 100 2>&1",
			     script, path), 0, "t4write.py: %s", out);
	js = info_json(bin, path, &st);
	cr_assert_eq(st, 0, "%s", js);
	cr_assert_eq(json_u64(js, "triggers"), 250u);
	cr_assert_eq(json_u64(js, "chunks"), 3u);
	cr_assert_eq(json_u64(js, "values"), 250u * (4 + 3));
	cr_assert_eq(json_u64(js, "ret_packets"), 500u);
	cr_assert_eq(json_u64(js, "overruns"), 5u);
	cr_assert_eq(json_u64(js, "dropped"), 2u);
	cr_assert_eq(json_u64(js, "damaged_chunks"), 0u);
	cr_assert_eq(json_u64(js, "unknown_packets"), 1u);
	cr_assert(strstr(js, "\"name\": \"py-phase\""), "%s", js);
	cr_assert(strstr(js, "\"kind\": \"pcie\""), "%s", js);
	free(js);
	/* every value as t4write.py computed it (see its value formula) */
	cr_assert_eq(t4_reader_open(&r, path, NULL, NULL), 0, "%s", t4_errmsg());
	while (t4_reader_next(r, &p) > 0) {
		if (p.type == T4_PKT_REF) {
			uint64_t t = p.ref.trigger_id;
			bad += p.ref.ref_ns != 5000000000ull + t * 1000000 + (t * 37) % 1000;
			bad += p.ref.mono_ns != p.ref.ref_ns + 1000 + t % 3;
			bad += p.ref.real_ns != p.ref.ref_ns + 1700000000000000000ull;
			refs++;
		} else if (p.type == T4_PKT_RET) {
			uint64_t t = p.ret.trigger_id, d = p.ret.domain_id;
			for (uint32_t i = 0; i < p.ret.n_counts; i++)
				bad += p.ret.counts[i] != (t * 7 + i * 1000 + d) % 5000 + (i == 0 && t % 50 == 3 ? (1ull << 40) : 0);
			bad += p.ret.read_end_ns - p.ret.read_begin_ns != 1500 + t % 7;
			bad += p.ret.local_clock != t * 2000000 * (d + 1);
			rets++;
		}
	}
	t4_reader_close(r);
	cr_assert_eq(refs, 250u);
	cr_assert_eq(rets, 500u);
	cr_assert_eq(bad, 0u);
	t4_rmtree(dir);
	free(dir);
}

/* A log of triggers 0..99 without trigger 40; with overrun, trigger 41's
 * reference packet reports it missed (grid IDs: FORMAT.md 6). */
static void gap_log(const char *path, bool overrun)
{
	struct tu_log l;
	struct t4_packet *e = malloc((64 + 1 + TU_DOMAINS) * sizeof(*e));
	uint64_t seed = 3;
	size_t n;

	cr_assert(e);
	tu_log_init(&l);
	n = tu_metadata(e);
	for (size_t i = 0; i < n; i++)
		tu_log_add(&l, &e[i]);
	for (uint64_t t = 0; t < 100; t++) {
		n = tu_trigger(&seed, t, e);
		e[0].ref.overruns = overrun && t == 41;
		for (size_t i = 0; t != 40 && i < n; i++)
			tu_log_add(&l, &e[i]);
	}
	tu_log_flush(&l);
	write_file(path, l.buf, l.len);
	tu_log_free(&l);
	free(e);
}

/* `contiguous` with grid trigger IDs: a gap that an overrun accounts for
 * is no gap (the in-kernel path's log written from FORMAT.md by
 * t4write.py --grid, and a generated one); a gap nothing accounts for is. */
Test(reader_info, contiguous_with_gaps_at_overruns)
{
	char script[PATH_MAX];
	const char *bin = cli_bin();
	char *dir = cli_tmpdir("t4gap"), path[256], out[4096], *js;
	int st;

	for (int overrun = 0; overrun < 2; overrun++) {
		snprintf(path, sizeof(path), "%s/gap%d.t4", dir, overrun);
		gap_log(path, overrun);
		js = info_json(bin, path, &st);
		cr_assert_eq(st, 0, "%s", js);
		cr_assert_eq(json_u64(js, "triggers"), 99u);
		cr_assert(strstr(js, overrun ? "\"contiguous\": true" : "\"contiguous\": false"),
			  "overrun %d: %.300s", overrun, js);
		free(js);
	}
	if (!t4t_have_cmds("python3 zstd") || !cli_repo_file("tools/t4write.py", script)) {
		t4_rmtree(dir);
		free(dir);
		cr_skip_test("python3, zstd or tools/t4write.py missing");
	}
	snprintf(path, sizeof(path), "%s/grid.t4", dir);
	cr_assert_eq(cli_run(out, sizeof(out), "python3 '%s' '%s' --grid 2>&1", script, path), 0,
		     "t4write.py: %s", out);
	js = info_json(bin, path, &st);
	cr_assert_eq(st, 0, "%s", js);
	cr_assert_eq(json_u64(js, "triggers"), 245u); /* 250 grid points, 5 missed */
	cr_assert_eq(json_u64(js, "last_trigger"), 248u);
	cr_assert(strstr(js, "\"contiguous\": true"), "%.300s", js);
	cr_assert(strstr(js, "\"trigger_path\": \"bpf\""), "%s", js);
	cr_assert(strstr(js, "\"ref_clock\": \"CLOCK_MONOTONIC\""), "%s", js);
	free(js);
	t4_rmtree(dir);
	free(dir);
}

/* ---- the reader step by step (decode -j) --------------------------------- */

/* Every warning, in order, with its offset. */
struct warn_log {
	char *s;
	size_t len, cap;
};

static void log_warn(void *ud, uint64_t off, const char *msg)
{
	struct warn_log *w = ud;
	char line[700];
	int n = snprintf(line, sizeof(line), "%" PRIu64 ": %s\n", off, msg);

	if (w->len + (size_t)n + 1 > w->cap) {
		w->cap = (w->len + (size_t)n + 1) * 2;
		w->s = realloc(w->s, w->cap);
		cr_assert(w->s);
	}
	memcpy(w->s + w->len, line, (size_t)n + 1);
	w->len += (size_t)n;
}

static void log_append(struct warn_log *w, const char *s, size_t n)
{
	if (w->len + n + 1 > w->cap) {
		w->cap = (w->len + n + 1) * 2;
		w->s = realloc(w->s, w->cap);
		cr_assert(w->s);
	}
	memcpy(w->s + w->len, s, n);
	w->len += n;
	w->s[w->len] = 0;
}

struct stepped {
	struct t4_packet *p;
	size_t n, cap;
	struct warn_log w;
	struct t4_reader_stats st;
	int rc;
};

static void stepped_put(struct stepped *g, const struct t4_packet *p)
{
	if (g->n == g->cap) { /* doubling: one realloc a packet copied all (ASan: 90 s) */
		g->cap = g->cap ? 2 * g->cap : 256;
		g->p = realloc(g->p, g->cap * sizeof(*g->p));
		cr_assert(g->p);
	}
	g->p[g->n++] = *p;
}

/* buf read with t4_reader_next(). */
static void read_whole(const void *buf, size_t len, struct stepped *g)
{
	struct t4_reader *r;
	struct t4_packet p;

	memset(g, 0, sizeof(*g));
	cr_assert_eq(t4_reader_open_mem(&r, buf, len, log_warn, &g->w), 0, "%s", t4_errmsg());
	while ((g->rc = t4_reader_next(r, &p)) > 0)
		stepped_put(g, &p);
	t4_reader_stats(r, &g->st);
	t4_reader_close(r);
}

/* buf read step by step, as decode -j does it at its most extreme: step 1
 * runs through the whole file first, then every chunk is unpacked, then
 * taken in order (so step 1 has always run past another recording). */
static void read_by_steps(const void *buf, size_t len, struct stepped *g)
{
	struct warn_log scan = { 0 };
	struct t4_reader *r;
	struct t4_unpacker *u;
	struct t4_chunk *c = NULL;
	size_t *warned = NULL, n = 0, said = 0;
	int rc;

	memset(g, 0, sizeof(*g));
	cr_assert_eq(t4_reader_open_mem(&r, buf, len, log_warn, &scan), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_unpacker_new(&u), 0);
	do { /* step 1: every chunk, and how far its warnings went */
		c = realloc(c, (n + 1) * sizeof(*c));
		warned = realloc(warned, (n + 1) * sizeof(*warned));
		memset(&c[n], 0, sizeof(c[n]));
		rc = t4_reader_next_chunk(r, &c[n]);
		warned[n] = scan.len;
	} while (rc > 0 && ++n);
	g->rc = rc;
	for (size_t i = 0; i <= n; i++) {
		log_append(&g->w, scan.s + said, warned[i] - said);
		said = warned[i];
		if (i == n)
			break;
		struct t4_packet p;
		const struct t4_chunk_result *res = t4_unpacker_result(u);
		t4_unpacker_start(u, &c[i]);
		size_t first = g->n;
		while (t4_unpacker_next(u, &p))
			stepped_put(g, &p);
		if (!t4_reader_chunk_begin(r, res)) {
			g->n = first; /* none of it */
			t4_reader_end_before(r, &c[i]);
			g->rc = 0;
			break;
		}
		if (res->warning[0])
			log_warn(&g->w, res->offset, res->warning);
		t4_reader_chunk_end(r, res);
	}
	t4_reader_stats(r, &g->st);
	for (size_t i = 0; i <= n; i++)
		t4_chunk_free(&c[i]);
	free(c);
	free(warned);
	free(scan.s);
	t4_unpacker_free(u);
	t4_reader_close(r);
}

static void same_by_steps(const void *buf, size_t len, const char *what)
{
	struct stepped a, b;

	read_whole(buf, len, &a);
	read_by_steps(buf, len, &b);
	cr_assert_eq(b.rc, a.rc, "%s", what);
	cr_assert_eq(b.n, a.n, "%s: %zu packets, not %zu", what, b.n, a.n);
	for (size_t i = 0; i < a.n; i++)
		cr_assert(tu_pkt_eq(&a.p[i], &b.p[i]), "%s: packet %zu differs", what, i);
	cr_assert_str_eq(b.w.s ? b.w.s : "", a.w.s ? a.w.s : "", "%s", what);
	cr_assert(!memcmp(&a.st, &b.st, sizeof(a.st)), "%s: the statistics differ", what);
	free(a.p);
	free(b.p);
	free(a.w.s);
	free(b.w.s);
}

/* The steps give what t4_reader_next() gives: packets, warnings (their
 * order and offsets) and statistics, on every damage at once, cut at
 * many places, with another recording after it. */
Test(reader, steps_give_what_next_gives)
{
	struct tu_log l;
	struct stepped g;

	tu_log_init(&l);
	tu_damaged_log(&l, 31, 300, true);
	read_whole(l.buf, l.len, &g);
	/* it is what it says: the damage seen, the second recording found */
	cr_assert(g.w.s && strstr(g.w.s, "does not decode") && strstr(g.w.s, "header says") &&
			  strstr(g.w.s, "payload CRC mismatch") && strstr(g.w.s, "to the next chunk") &&
			  strstr(g.w.s, "version 9") && strstr(g.w.s, "were already returned"),
		  "%s", g.w.s);
	cr_assert_eq(g.st.unknown_packets, 2u);
	cr_assert_neq(g.st.next_recording, 0u);
	cr_assert_gt(g.st.copies, 30u);
	free(g.p);
	free(g.w.s);
	same_by_steps(l.buf, l.len, "whole");
	for (size_t cut = 100; cut < l.len; cut += 997) {
		char what[64];
		snprintf(what, sizeof(what), "cut at %zu", cut);
		same_by_steps(l.buf, cut, what);
	}
	tu_log_free(&l);
}
