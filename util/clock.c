/* clock.c - the reference clock and the CPU's own timestamp counter.
 *
 * The reference clock of every trace is CLOCK_MONOTONIC_RAW: it is never
 * slewed by NTP, so the per-domain rate models of the decoder see the
 * hardware's real drift. The CPU counter is the scheduler's "own local
 * clock" of the patent (claim 9): rdtsc on x86_64, cntvct_el0 on arm64.
 */
#include "util.h"

uint64_t t4_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t t4_ref_ns(void)
{
	return t4_clock_ns(CLOCK_MONOTONIC_RAW);
}

uint64_t t4_cpu_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
#else
	return 0;
#endif
}

uint64_t t4_cpu_ticks_hz(void)
{
#if defined(__aarch64__)
	uint64_t f;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
	return f;
#else
	return 0;
#endif
}
