/* clock.c - the reference clock and the CPU's own timestamp counter.
 *
 * The reference clock of every trace is CLOCK_MONOTONIC_RAW: it is never
 * slewed by NTP, so the per-domain rate models of the decoder see the
 * hardware's real drift. The CPU counter is the scheduler's "own local
 * clock" of the patent (claim 9): rdtsc on x86_64, cntvct_el0 on arm64.
 * Both reads are ordered after the loads before them (lfence, isb): a
 * thread that sees another's store never reads an earlier count than the
 * one that thread read before storing (tests/test_clock.c). That costs a
 * few ns per read, paid once per trigger.
 */
#include "util.h"

uint64_t t4_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t t4_mono_raw_ns(void)
{
	return t4_clock_ns(CLOCK_MONOTONIC_RAW);
}

uint64_t t4_cpu_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
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
