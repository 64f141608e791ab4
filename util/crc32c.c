/* crc32c.c - CRC32C (Castagnoli) for chunk headers and payloads.
 *
 * Slicing-by-8 in portable C (about 1-2 GB/s, far above what zstd produces
 * per second); the tables are built once on first use. The hardware
 * instructions (SSE4.2 crc32, ARMv8 crc32c*) would be faster but the
 * checksum is not on the trigger path, so portability wins.
 */
#include "util.h"

#include <pthread.h>

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
}

uint32_t t4_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	pthread_once(&crc_once, crc_init);
	crc = ~crc;
	while (len >= 8) {
		uint32_t lo = crc ^ t4_get_le32(p);
		uint32_t hi = t4_get_le32(p + 4);
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}
