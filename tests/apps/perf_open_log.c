/* perf_open_log.c - an LD_PRELOAD shim for the CLI tests: it writes the
 * arguments of every perf_event_open the process makes (the attr fields
 * that say what is counted and for whom, pid, CPU, group) to the file
 * $T4_PERF_LOG, one line each, then makes the call unchanged. With
 * $T4_PERF_READ_ERRNO set to an errno, every read() of a counter it opened
 * fails with it (a read failure no real counter gives on demand).
 * Built by the tests with the target's compiler (cli_build_shim()).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

/* the counters' fds (those below the bitmap's size), set at their open,
 * cleared at their close (the number may name another file later) */
static unsigned char perf_fds[4096 / 8];
static int fail_errno; /* $T4_PERF_READ_ERRNO, read once: setenv may run */

__attribute__((constructor)) static void read_env(void)
{
	const char *e = getenv("T4_PERF_READ_ERRNO");

	fail_errno = e ? atoi(e) : 0;
}

static bool is_perf_fd(int fd)
{
	return fd >= 0 && fd < 8 * (int)sizeof(perf_fds) && (perf_fds[fd / 8] & (1u << (fd % 8)));
}

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
	long rc = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);

	if (nr == SYS_perf_event_open && rc >= 0 && rc < 8 * (long)sizeof(perf_fds))
		perf_fds[rc / 8] |= (unsigned char)(1u << (rc % 8));
	return rc;
}

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);

	if (!real)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	if (fail_errno && is_perf_fd(fd)) {
		errno = fail_errno;
		return -1;
	}
	return real(fd, buf, n);
}

int close(int fd)
{
	static int (*real)(int);

	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "close");
	if (is_perf_fd(fd))
		perf_fds[fd / 8] &= (unsigned char)~(1u << (fd % 8));
	return real(fd);
}
