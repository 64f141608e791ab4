/* bench_spin.c - a CPU-saturating workload for tools/bench_vs_perf.sh (a
 * helper, not a benchmark: tools/bench.sh does not run it on its own).
 *
 * One thread pinned to each online CPU spins on a counter for SECONDS and
 * the total of all counters is printed: the workload's throughput. A
 * collector that takes CPU time away from it (its own threads, interrupts,
 * hypervisor exits for its timers) lowers the total; the slowdown is
 * 1 - total(with collector) / total(alone). Trade-off: a counter loop is
 * the crudest workload, but it is steady to a few tenths of a percent and
 * feels nothing but lost CPU time (no cache or memory effects to confuse).
 *
 * Usage: bench_spin SECONDS   (a decimal, e.g. 2 or 0.5)
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>


struct spinner {
	pthread_t thread;
	int cpu;
	uint64_t count;
};

static _Atomic int stop;

static void *spin(void *arg)
{
	struct spinner *s = arg;
	volatile uint64_t n = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		for (int i = 0; i < 4096; i++)
			n++;
	s->count = n;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc == 2 ? atof(argv[1]) : 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct spinner *s;
	uint64_t total = 0;

	if (seconds <= 0 || ncpu < 1) {
		fprintf(stderr, "usage: bench_spin SECONDS\n");
		return 2;
	}
	s = calloc((size_t)ncpu, sizeof(*s));
	if (!s)
		return 1;
	for (long c = 0; c < ncpu; c++) {
		pthread_attr_t attr;
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((int)c, &set);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		s[c].cpu = (int)c;
		if (pthread_create(&s[c].thread, &attr, spin, &s[c]))
			return 1;
		pthread_attr_destroy(&attr);
	}
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (long c = 0; c < ncpu; c++) {
		pthread_join(s[c].thread, NULL);
		total += s[c].count;
	}
	printf("%llu\n", (unsigned long long)total);
	free(s);
	return 0;
}
