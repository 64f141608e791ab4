/* fuzz_common.h - what every fuzz harness checks about an error: a
 * negative errno and a one-line, non-empty message in t4_errmsg().
 * A failed check aborts, which libFuzzer reports as a crash with the
 * input saved.
 */
#ifndef T4_FUZZ_COMMON_H
#define T4_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packets/packets.h"
#include "util/util.h"

#define FUZZ_CHECK(cond, ...)                                               \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "fuzz check failed: %s: ", #cond);  \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
			abort();                                            \
		}                                                           \
	} while (0)

/* rc must be >= 0, or a negative errno with a one-line message. */
static inline void fuzz_check_rc(int rc, const char *what)
{
	const char *m;

	if (rc >= 0)
		return;
	m = t4_errmsg();
	FUZZ_CHECK(rc > -4096, "%s: rc %d is not a negative errno", what, rc);
	FUZZ_CHECK(m[0] != '\0', "%s: rc %d with an empty message", what, rc);
	FUZZ_CHECK(!strchr(m, '\n'), "%s: message spans lines: %s", what, m);
}

/* Recompute the CRCs of everything that looks like a chunk header, so
 * that mutations reach the header fields and payloads behind the checks
 * (random bytes almost never carry a valid CRC32C). Offsets: FORMAT.md 2. */
static inline void fuzz_fix_crcs(uint8_t *b, size_t len)
{
	for (size_t o = 0; o + T4_CHUNK_HDR_SIZE <= len; o++) {
		uint32_t hsz, csz;

		if (memcmp(b + o, T4_CHUNK_MAGIC, T4_CHUNK_MAGIC_LEN))
			continue;
		hsz = t4_get_le16(b + o + 10);
		csz = t4_get_le32(b + o + 44);
		if (hsz >= T4_CHUNK_HDR_SIZE && (uint64_t)o + hsz + csz <= len)
			t4_put_le32(b + o + 52, t4_crc32c(0, b + o + hsz, csz));
		t4_put_le32(b + o + 60, t4_crc32c(0, b + o, 60));
	}
}

/* A NUL-terminated copy of the input (libFuzzer's data is not). */
static inline char *fuzz_str(const unsigned char *data, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		abort();
	memcpy(s, data, len);
	s[len] = '\0';
	return s;
}

#endif
