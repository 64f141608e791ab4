/* duty_app.c - a workload that loads the machine for real and measures
 * itself with what the kernel reports outside perf, for the tests of the
 * host metrics (tests/test_host_metrics.c) and of record's per-task
 * counting (tests/test_stat.c).
 *
 *   duty_app WORKERS DUTY_PCT SECONDS FAULT_PAGES OUT
 *
 * forks WORKERS processes; each touches FAULT_PAGES fresh pages (page
 * faults), then for SECONDS alternates busy (DUTY_PCT of every 10 ms) and
 * asleep, and sends its /proc/self/sched nr_migrations to the parent. The
 * parent waits for them and writes OUT, one key=value per line:
 *   cpu_ns     utime + stime of itself and its children (getrusage)
 *   faults     minor + major faults of the same
 *   csw        voluntary + involuntary context switches of the same
 *   migrations the workers' se.nr_migrations (-1 when /proc/PID/sched is
 *              missing: no CONFIG_SCHED_DEBUG)
 *   t0, t1     CLOCK_MONOTONIC_RAW when the workers start and have ended
 *   ctxt0, ctxt1  /proc/stat's ctxt (context switches, every CPU) then
 *   steal0, steal1  /proc/stat's steal then (USER_HZ ticks, every CPU):
 *              the time a VM's host ran something else, which perf's
 *              task-clock counts and rusage does not
 * Built by make into OUT/apps (as the other test programs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS 10000000LL

static long long now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(long long ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	if (ns > 0)
		nanosleep(&ts, NULL);
}

/* se.nr_migrations of this process (one thread), -1 when unknown. */
static long long migrations(void)
{
	char line[256];
	long long v = -1;
	FILE *f = fopen("/proc/self/sched", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "se.nr_migrations", 16))
			v = atoll(strchr(line, ':') + 1);
	if (f)
		fclose(f);
	return v;
}

/* /proc/stat: ctxt, and the cpu line's steal ticks. */
static void proc_stat(long long *ctxt, long long *steal)
{
	char line[512];
	FILE *f = fopen("/proc/stat", "r");
	long long v[8] = { 0 };

	*ctxt = *steal = -1;
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "ctxt ", 5))
			*ctxt = atoll(line + 5);
		if (!strncmp(line, "cpu ", 4) &&
		    sscanf(line + 4, "%lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7]) == 8)
			*steal = v[7];
	}
	if (f)
		fclose(f);
}

static void work(int duty, long long end, long pages, int fd)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *mem = pages ? mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;
	volatile unsigned long sink = 0;
	long long m;

	for (long i = 0; mem != MAP_FAILED && i < pages; i++)
		mem[i * psz] = 1; /* one fault per page */
	for (long long t = now(CLOCK_MONOTONIC); t < end; t = now(CLOCK_MONOTONIC)) {
		long long busy_until = t + PERIOD_NS * duty / 100;
		while (now(CLOCK_MONOTONIC) < busy_until)
			sink++;
		sleep_ns(t + PERIOD_NS - now(CLOCK_MONOTONIC));
	}
	m = migrations();
	if (write(fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(1);
	_exit(0);
}

int main(int argc, char **argv)
{
	long long t0, t1, ctxt0, ctxt1, steal0, steal1, mig = 0;
	struct rusage self, kids;
	int fds[2], workers;
	FILE *out;

	if (argc != 6) {
		fprintf(stderr, "usage: duty_app WORKERS DUTY_PCT SECONDS FAULT_PAGES OUT\n");
		return 2;
	}
	workers = atoi(argv[1]);
	if (pipe(fds) < 0)
		return 1;
	proc_stat(&ctxt0, &steal0);
	t0 = now(CLOCK_MONOTONIC_RAW);
	long long end = now(CLOCK_MONOTONIC) + (long long)(atof(argv[3]) * 1e9);
	for (int i = 0; i < workers; i++)
		if (fork() == 0)
			work(atoi(argv[2]), end, atol(argv[4]), fds[1]);
	for (int i = 0; i < workers; i++) {
		long long m;
		if (read(fds[0], &m, sizeof(m)) != (ssize_t)sizeof(m))
			return 1;
		mig = m < 0 || mig < 0 ? -1 : mig + m;
	}
	while (wait(NULL) > 0)
		;
	t1 = now(CLOCK_MONOTONIC_RAW);
	proc_stat(&ctxt1, &steal1);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	if (!(out = fopen(argv[5], "w")))
		return 1;
	fprintf(out, "cpu_ns=%lld\nfaults=%ld\ncsw=%ld\nmigrations=%lld\nt0=%lld\nt1=%lld\n"
		     "ctxt0=%lld\nctxt1=%lld\nsteal0=%lld\nsteal1=%lld\n",
		(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
		 kids.ru_stime.tv_sec) * 1000000000LL +
			(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
			 kids.ru_stime.tv_usec) * 1000LL,
		self.ru_minflt + self.ru_majflt + kids.ru_minflt + kids.ru_majflt,
		self.ru_nvcsw + self.ru_nivcsw + kids.ru_nvcsw + kids.ru_nivcsw, mig, t0, t1, ctxt0,
		ctxt1, steal0, steal1);
	/* _exit: no exit handlers after the measurement (a sanitizer's leak
	 * check would fault in pages the counters count and rusage did not) */
	_exit(fclose(out) ? 1 : 0);
}
