/* crc32c.c - CRC32C (Castagnoli) for chunk headers and payloads.
 *
 * The CPU's own instruction where it has one (SSE4.2 `crc32` on x86_64,
 * the ARMv8 CRC extension's `crc32c*` on arm64, both present on every
 * server of the last decade and on Grace/Tegra410), chosen at run time
 * (cpuid, AT_HWCAP), 8 bytes per instruction: about 10x the table. The
 * portable fallback is slicing-by-8 (1-2 GB/s), its tables built once on
 * first use. Both give the same value for every input (tests compare them).
 */
#include "util.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static uint32_t (*crc_impl)(uint32_t crc, const uint8_t *p, size_t len);

static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t len)
{
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
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p,
							   size_t len)
{
	uint64_t c = crc, v;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	crc = (uint32_t)c;
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}

static bool have_hw(void)
{
	return __builtin_cpu_supports("sse4.2");
}
#elif defined(__aarch64__)
#if defined(__clang__)
#define CRC_TARGET __attribute__((target("crc")))
#else
#define CRC_TARGET __attribute__((target("+crc")))
#endif
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif

CRC_TARGET static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t v;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&v, p, 8);
		__asm__("crc32cx %w0, %w0, %x1" : "+r"(crc) : "r"(v));
	}
	for (; len; p++, len--)
		__asm__("crc32cb %w0, %w0, %w1" : "+r"(crc) : "r"((uint32_t)*p));
	return crc;
}

static bool have_hw(void)
{
	return getauxval(AT_HWCAP) & HWCAP_CRC32;
}
#else
#define crc_hw crc_sw
static bool have_hw(void)
{
	return false;
}
#endif

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
	crc_impl = have_hw() ? crc_hw : crc_sw;
}

uint32_t t4_crc32c(uint32_t crc, const void *data, size_t len)
{
	pthread_once(&crc_once, crc_init);
	return ~crc_impl(~crc, data, len);
}

uint32_t t4_crc32c_portable(uint32_t crc, const void *data, size_t len)
{
	pthread_once(&crc_once, crc_init);
	return ~crc_sw(~crc, data, len);
}
