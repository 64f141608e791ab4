/* ctl_gap.c - an LD_PRELOAD shim for the control socket's tests: it holds
 * a recorder at one moment of making its socket, so that a test can start
 * another recorder right there, without timing. $T4_GAP_AT says where:
 * "listen" (a Unix socket bound to a path, before its listen()) or
 * "refused" (after a connect() to a Unix socket was refused: the probe of
 * a stale socket). There, once per process, the shim writes a line into
 * the FIFO $T4_GAP_DIR/at, then waits until the FIFO $T4_GAP_DIR/go is
 * opened for writing and closed. Built by the tests (cli_build_preload()).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void gap(const char *where)
{
	static int held;
	const char *at = getenv("T4_GAP_AT"), *dir = getenv("T4_GAP_DIR");
	char path[4096], ch;
	int fd, e = errno;

	if (held || !at || !dir || strcmp(at, where))
		return;
	held = 1;
	snprintf(path, sizeof(path), "%s/at", dir);
	if ((fd = open(path, O_WRONLY)) >= 0) {
		(void)!write(fd, "x\n", 2);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/go", dir);
	if ((fd = open(path, O_RDONLY)) >= 0) {
		while (read(fd, &ch, 1) > 0)
			;
		close(fd);
	}
	errno = e;
}

int listen(int fd, int backlog)
{
	int (*real)(int, int) = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len) == 0 && sa.sun_family == AF_UNIX &&
	    len > offsetof(struct sockaddr_un, sun_path) && sa.sun_path[0])
		gap("listen");
	return real(fd, backlog);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	int (*real)(int, const struct sockaddr *, socklen_t) =
		(int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
	int rc = real(fd, addr, len);

	if (rc < 0 && errno == ECONNREFUSED && addr && addr->sa_family == AF_UNIX)
		gap("refused");
	return rc;
}
