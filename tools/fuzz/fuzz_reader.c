/* fuzz_reader.c - libFuzzer harness for the log reader (reader.c, chunk.c,
 * codec.c): t4_reader_open_mem + t4_reader_next over arbitrary bytes.
 *
 * Each input is read twice: as it is, and after "fixing" it: every magic
 * followed by a full header gets its payload CRC and header CRC recomputed,
 * so mutations reach the header fields and payload checks behind the CRCs
 * (random bytes almost never carry a valid CRC32C). Checks: every error
 * has a one-line message, every warning is one non-empty line, the reader
 * ends, and its statistics add up.
 */
#include "fuzz_common.h"
#include "packets/packets.h"

#include <stdint.h>

struct wctx {
	unsigned n;
	uint64_t size;
};

static void on_warn(void *ud, uint64_t off, const char *msg)
{
	struct wctx *w = ud;

	w->n++;
	FUZZ_CHECK(msg && msg[0], "empty warning at offset %llu", (unsigned long long)off);
	FUZZ_CHECK(!strchr(msg, '\n'), "warning spans lines: %s", msg);
	FUZZ_CHECK(off <= w->size, "warning offset %llu beyond the size %llu",
		   (unsigned long long)off, (unsigned long long)w->size);
}

static void read_all(const uint8_t *buf, size_t len)
{
	struct wctx w = { 0, len };
	struct t4_reader *r;
	struct t4_reader_stats st;
	struct t4_packet *p = malloc(sizeof(*p));
	uint64_t got = 0;
	int rc;

	if (!p)
		abort();
	rc = t4_reader_open_mem(&r, buf, len, on_warn, &w);
	fuzz_check_rc(rc, "t4_reader_open_mem");
	if (rc < 0) {
		FUZZ_CHECK(r == NULL, "failed open left a reader");
		free(p);
		return;
	}
	while ((rc = t4_reader_next(r, p)) == 1) {
		got++;
		FUZZ_CHECK(p->type != 0, "packet of unknown type returned");
	}
	fuzz_check_rc(rc, "t4_reader_next");
	FUZZ_CHECK(rc <= 0, "t4_reader_next returned %d", rc);
	if (rc == 0) /* the end stays the end */
		FUZZ_CHECK(t4_reader_next(r, p) == 0, "end of log not sticky");
	t4_reader_stats(r, &st);
	FUZZ_CHECK(st.packets == got, "stats say %llu packets, %llu returned",
		   (unsigned long long)st.packets, (unsigned long long)got);
	FUZZ_CHECK(st.file_bytes == len, "file_bytes %llu", (unsigned long long)st.file_bytes);
	FUZZ_CHECK(st.skipped_bytes <= len, "skipped %llu of %zu bytes",
		   (unsigned long long)st.skipped_bytes, len);
	/* every packet takes at least two bytes of decompressed payload */
	FUZZ_CHECK(2 * (st.packets + st.unknown_packets) <= st.raw_bytes,
		   "%llu packets from %llu raw bytes", (unsigned long long)st.packets,
		   (unsigned long long)st.raw_bytes);
	t4_reader_close(r);
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);

	if (!copy)
		abort();
	memcpy(copy, data, len); /* exact size: ASan sees any overread */
	read_all(copy, len);
	fuzz_fix_crcs(copy, len);
	read_all(copy, len);
	free(copy);
	return 0;
}
