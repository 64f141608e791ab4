/* bench_copies.c - what the metadata copies (docs/FORMAT.md 4.8) cost in a
 * log, against the whole description (session, domains, events) repeated
 * in every chunk, measured on the log itself, two ways:
 *   - alone: each chunk's copies compressed on their own (zstd level 1,
 *     the writer's default), summed; the same for the whole description
 *     once per chunk after the first. An upper bound (inside its chunk's
 *     frame the copies share zstd's context), free of zstd's noise;
 *   - in place: each chunk's payload compressed again as it is and without
 *     its copies (with the description instead, for the alternative). Exact
 *     for chunks closed by time (live recordings: the same chunks either
 *     way), noisy by a few percent per chunk where zstd's parse of
 *     incompressible data shifts with the bytes before it, and chunks closed
 *     by size would hold a little more without copies.
 * Prints one markdown row per log.
 *
 * usage: bench_copies LOG...   (tools/bench_copies.sh records the logs)
 */
#include "packets/packets.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define DESC_MAX (4u << 20)

struct totals {
	uint64_t chunks, copies, copy_raw, raw, file;
	uint64_t alone, desc_alone;  /* copies compressed on their own */
	uint64_t as_is, none, every; /* bytes of the log, compressed three ways */
};

/* Append the whole description: a copy of each original session, domain
 * and event packet of the payload. */
static void describe(struct t4_codec *c, unsigned version, const uint8_t *raw, size_t len,
		     uint8_t *desc, size_t *dlen, struct t4_packet *p)
{
	t4_codec_start(c, version); /* the chunk's format */
	for (size_t off = 0; off < len;) {
		int n = t4_codec_decode(c, raw + off, len - off, p);
		if (n < 0)
			return;
		off += (size_t)n;
		if (p->copy || (p->type != T4_PKT_SESSION && p->type != T4_PKT_DOMAIN &&
				p->type != T4_PKT_EVENT))
			continue;
		p->copy = true;
		int w = t4_codec_encode(c, p, desc + *dlen, DESC_MAX - *dlen);
		if (w > 0)
			*dlen += (size_t)w;
	}
}

/* Bytes at the start of the payload that are copies, and how many. */
static size_t copies_prefix(struct t4_codec *c, unsigned version, const uint8_t *raw,
			    size_t len, struct t4_packet *p, uint64_t *n)
{
	size_t off = 0;

	t4_codec_start(c, version);
	while (off < len) {
		int k = t4_codec_decode(c, raw + off, len - off, p);
		if (k < 0 || !p->copy)
			break;
		off += (size_t)k;
		(*n)++;
	}
	return off;
}

static size_t zsize(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, uint8_t *tmp,
		    uint8_t *out, size_t cap)
{
	if (alen)
		memcpy(tmp, a, alen);
	if (blen)
		memcpy(tmp + alen, b, blen);
	return T4_CHUNK_HDR_SIZE + ZSTD_compress(out, cap, tmp, alen + blen, 1);
}

static int measure(const char *path, struct totals *t)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 2 * (size_t)T4_CHUNK_MAX_RAW + DESC_MAX, dlen = 0;
	uint8_t *file = NULL, *raw = malloc(T4_CHUNK_MAX_RAW), *tmp = malloc(cap),
		*out = malloc(ZSTD_compressBound(cap)), *desc = malloc(DESC_MAX);
	struct t4_packet *p = malloc(sizeof(*p));
	struct t4_codec *c = t4_codec_new();
	long size;
	int rc = 0;

	if (!f)
		return t4_err(errno, "%s: cannot open", path);
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(file = malloc((size_t)size + 1)) || !raw || !tmp || !out || !desc || !p || !c ||
	    fread(file, 1, (size_t)size, f) != (size_t)size) {
		rc = t4_err(EIO, "%s: cannot read", path);
		goto out;
	}
	memset(t, 0, sizeof(*t));
	for (size_t off = 0; off + T4_CHUNK_HDR_SIZE <= (size_t)size;) {
		struct t4_chunk_hdr h;
		if (t4_chunk_hdr_unpack(file + off, &h) < 0 ||
		    off + h.hdr_size + h.comp_size > (size_t)size) {
			rc = t4_err(EBADMSG, "%s: damaged at offset %zu: measure intact logs",
				    path, off);
			goto out;
		}
		size_t n = ZSTD_decompress(raw, T4_CHUNK_MAX_RAW, file + off + h.hdr_size,
					   h.comp_size);
		if (ZSTD_isError(n)) {
			rc = t4_err(EBADMSG, "%s: chunk at %zu: %s", path, off,
				    ZSTD_getErrorName(n));
			goto out;
		}
		size_t pre = copies_prefix(c, h.version, raw, n, p, &t->copies);
		t->copy_raw += pre;
		t->raw += n;
		if (pre)
			t->alone += ZSTD_compress(out, ZSTD_compressBound(cap), raw, pre, 1);
		if (t->chunks)
			t->desc_alone += ZSTD_compress(out, ZSTD_compressBound(cap), desc, dlen, 1);
		t->as_is += zsize(raw, n, NULL, 0, tmp, out, ZSTD_compressBound(cap));
		t->none += zsize(raw + pre, n - pre, NULL, 0, tmp, out, ZSTD_compressBound(cap));
		t->every += zsize(desc, t->chunks ? dlen : 0, raw + pre, n - pre, tmp, out,
				  ZSTD_compressBound(cap));
		if (!t->chunks)
			describe(c, h.version, raw, n, desc, &dlen, p);
		t->chunks++;
		off += h.hdr_size + h.comp_size;
	}
	t->file = (uint64_t)size;
out:
	fclose(f);
	free(file);
	free(raw);
	free(tmp);
	free(out);
	free(desc);
	free(p);
	t4_codec_free(c);
	return rc;
}

static double pct(uint64_t a, uint64_t base)
{
	return base ? 100.0 * (double)a / (double)base : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_copies LOG...\n");
		return 2;
	}
	printf("| log | chunks | file (B) | copies | their raw bytes | alone: copies (B) | per chunk "
	       "| in place: copies | alone: whole description in every chunk (B) | in place: "
	       "whole description |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int i = 1; i < argc; i++) {
		struct totals t;
		if (measure(argv[i], &t) < 0) {
			fprintf(stderr, "bench_copies: %s\n", t4_errmsg());
			return 1;
		}
		printf("| %s | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " (%.2f%%) | %" PRIu64
		       " (%.2f%%) | %.0f B | %+.2f%% | %" PRIu64 " (%.2f%%) | %+.2f%% |\n", argv[i],
		       t.chunks, t.file, t.copies, t.copy_raw, pct(t.copy_raw, t.raw), t.alone,
		       pct(t.alone, t.file), t.chunks ? (double)t.alone / (double)t.chunks : 0,
		       pct(t.as_is, t.none) - 100, t.desc_alone, pct(t.desc_alone, t.file),
		       pct(t.every, t.none) - 100);
	}
	return 0;
}
