/* perf_open_log.c - an LD_PRELOAD shim for tests/test_sysfs_layouts.c: it
 * writes the arguments of every perf_event_open the process makes (the
 * attr fields that say what is counted and for whom, pid, CPU, group) to
 * the file $T4_PERF_LOG, one line each, then makes the call unchanged.
 * Built by the test with the target's compiler (t4t_cc()).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void log_open(const struct perf_event_attr *a, int pid, int cpu, int group)
{
	const char *path = getenv("T4_PERF_LOG");
	char line[256];
	int fd, n;

	if (!path || !a)
		return;
	n = snprintf(line, sizeof(line),
		     "type=%u config=0x%llx config1=0x%llx config2=0x%llx pid=%d cpu=%d "
		     "group=%s inherit=%u disabled=%u enable_on_exec=%u\n",
		     a->type, (unsigned long long)a->config, (unsigned long long)a->config1,
		     (unsigned long long)a->config2, pid, cpu, group < 0 ? "leader" : "member",
		     (unsigned)a->inherit, (unsigned)a->disabled, (unsigned)a->enable_on_exec);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		n = -1;
	close(fd);
}

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (nr == SYS_perf_event_open)
		/* pid, cpu and group fd are ints: the register's low half */
		log_open((const struct perf_event_attr *)a[0], (int)a[1], (int)a[2], (int)a[3]);
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
