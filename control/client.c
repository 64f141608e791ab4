/* client.c - the one client of the control socket (control.h).
 *
 * Used by `t410trace ctl` (t4_control_send: connect, one line, one reply,
 * close) and compiled into libt410trace, which keeps a connection open and
 * calls t4_control_connect / t4_control_exchange itself. It must therefore
 * stay safe inside someone else's process: no output, no SIGPIPE
 * (MSG_NOSIGNAL), close-on-exec fds, EINTR retried, and bounded waits
 * (T4_CONTROL_TIMEOUT_MS) for the connection to be accepted, for a send and
 * for the reply, so a stopped recorder cannot hang the application forever.
 * It talks only to a recorder of its own user or root (SO_PEERCRED), as the
 * recorder serves only those: a socket planted by someone else is refused.
 *
 * The protocol is one reply line per command line; only a data reply
 * ("ok data N", t4_control_fetch) is followed by N bytes. Replies are read
 * in chunks up to the newline; what follows it is kept for the data. A
 * reply has a deadline for all of it, not per chunk (a peer that trickles
 * bytes, or streams them without a newline, is cut off at the deadline),
 * and a reply line longer than T4_CONTROL_REPLY_MAX is refused as soon as
 * it is, never read on: nothing a peer sends keeps the client longer or
 * costs it memory.
 */
#include "control.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The peer of fd must be a recorder of this user or root's (as the
 * recorder serves only those): a socket another user planted at path
 * gets no bookmark names and is not believed. Returns fd, or closes it
 * and returns a negative errno. */
static int peer_trusted(int fd, const char *path)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int e;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		e = errno;
		close(fd);
		return t4_err(e, "%s: cannot identify the recorder: %s", path, strerror(e));
	}
	if (cred.uid != 0 && cred.uid != geteuid()) {
		close(fd);
		return t4_err(EACCES, "%s: the socket is served by uid %u, not by a recorder of "
			      "this user or root", path, (unsigned)cred.uid);
	}
	return fd;
}

int t4_control_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval timeout = { T4_CONTROL_TIMEOUT_MS / 1000, T4_CONTROL_TIMEOUT_MS % 1000 * 1000 };
	int fd, e;

	if (!path || !path[0])
		return t4_err(EINVAL, "no control socket path given");
	if (strlen(path) >= sizeof(sa.sun_path))
		return t4_err(ENAMETOOLONG, "%s: socket path too long (at most %zu bytes)",
			      path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return t4_err(errno, "socket: %s", strerror(errno));
	/* a listener that never accepts (its queue full) would keep connect()
	 * waiting for ever: the send timeout bounds it, and every send */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) < 0) {
		e = errno;
		close(fd);
		return t4_err(e, "control socket: SO_SNDTIMEO: %s", strerror(e));
	}
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		if (e == EINTR)
			continue;
		close(fd);
		if (e == EAGAIN)
			return t4_err(ETIMEDOUT, "%s: the recorder did not accept the connection "
				      "within %d ms", path, T4_CONTROL_TIMEOUT_MS);
		if (e == ENOENT || e == ECONNREFUSED || e == ENOTSOCK)
			return t4_err(e, "no recorder listening at %s", path);
		if (e == EACCES || e == EPERM)
			return t4_err(e, "%s: permission denied (the recorder's socket is "
				      "for its own user and root)", path);
		return t4_err(e, "%s: cannot connect: %s", path, strerror(e));
	}
	return peer_trusted(fd, path);
}

const char *t4_control_abspath(const char *path, char *buf, size_t cap)
{
	char cwd[PATH_MAX];
	size_t fit = sizeof(((struct sockaddr_un *)0)->sun_path);
	int n = -1;

	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)))
		n = snprintf(buf, cap, "%s/%s", cwd, path);
	if (n < 0 || (size_t)n >= cap || (size_t)n >= fit)
		snprintf(buf, cap, "%s", path);
	return buf;
}

/* recv, keeping the first fd passed along (SCM_RIGHTS) in *passed when
 * it is -1 and closing any other (passed NULL: closes them all). */
static ssize_t recv_fds(int fd, char *buf, size_t cap, int *passed)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			    .msg_controllen = sizeof(ctl.b) };
	ssize_t n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);

	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int got;
			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (passed && *passed < 0)
				*passed = got;
			else
				close(got);
		}
	}
	return n;
}

#define CHUNK 256 /* a reply is read this much at a time */

/* Wait until fd has bytes or the deadline (ms, now_ms's clock; one
 * passed: only a look) comes: 1, 0, or a negative errno. */
static int wait_bytes(int fd, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, left > 0 ? (int)left : 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return t4_err(errno, "control socket: poll: %s", strerror(errno));
		return r;
	}
}

/* Read up to the newline into reply (truncated to cap, the rest of the line
 * consumed), and an fd passed along into *passed (NULL: none wanted). What
 * came after the newline (a data reply's first bytes) goes to rest (CHUNK
 * bytes; NULL: nothing can follow), its length to *rest_len. The whole line
 * within timeout_ms (0: what is there already), at most
 * T4_CONTROL_REPLY_MAX bytes with its newline. Returns the reply length, or
 * a negative errno: -ETIMEDOUT, -EMSGSIZE for a longer line. */
static int read_line(int fd, char *reply, size_t cap, int timeout_ms, int *passed, char *rest,
		     size_t *rest_len)
{
	int64_t deadline = now_ms() + timeout_ms;
	size_t len = 0, line = 0; /* kept in reply; the line's bytes so far */
	char buf[CHUNK];

	for (;;) {
		/* past the deadline, bytes that keep coming are no answer */
		int r = line && now_ms() >= deadline ? 0 : wait_bytes(fd, deadline);
		ssize_t n;
		char *nl;

		if (r < 0)
			return r;
		if (r == 0)
			return t4_err(ETIMEDOUT, line ? "the recorder did not end its reply within "
						 "%d ms (%zu bytes, no end of line)"
						 : "the recorder did not answer within %d ms",
				      timeout_ms, line);
		n = recv_fds(fd, buf, sizeof(buf), passed);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ECONNRESET) /* closed with our line unread */
			return t4_err(ECONNRESET, "the recorder closed the connection without answering");
		if (n < 0)
			return t4_err(errno, "control socket: %s", strerror(errno));
		if (n == 0)
			return t4_err(ECONNRESET, "the recorder closed the connection without answering");
		nl = memchr(buf, '\n', (size_t)n);
		line += (size_t)(nl ? nl - buf : n);
		if (line >= T4_CONTROL_REPLY_MAX)
			return t4_err(EMSGSIZE, "the recorder's reply is longer than %d bytes: not "
				      "a recorder's", T4_CONTROL_REPLY_MAX - 1);
		for (ssize_t i = 0; i < (nl ? nl - buf : n); i++)
			if (len + 1 < cap)
				reply[len++] = buf[i];
		if (cap)
			reply[len] = '\0';
		if (nl && rest) {
			*rest_len = (size_t)(buf + n - (nl + 1));
			memcpy(rest, nl + 1, *rest_len);
		}
		if (nl)
			break;
	}
	if (len > 0 && reply[len - 1] == '\r')
		reply[--len] = '\0';
	return (int)len;
}

/* Send all of buf; false if the connection is gone. */
static bool send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

int t4_control_exchange(int fd, const char *line, char *reply, size_t cap)
{
	return t4_control_exchange_fd(fd, line, reply, cap, NULL);
}

/* Send line and read its reply line (see t4_control_exchange_fd); rest
 * and *rest_len as read_line. */
static int exchange(int fd, const char *line, char *reply, size_t cap, int *passed, char *rest,
		    size_t *rest_len)
{
	char out[T4_CONTROL_LINE_MAX + 2];
	char local[T4_CONTROL_REPLY_MAX];
	size_t len = strlen(line);
	int n;

	if (passed)
		*passed = -1;
	if (!reply || cap == 0) {
		reply = local;
		cap = sizeof(local);
	}
	reply[0] = '\0';
	if (len > T4_CONTROL_LINE_MAX)
		return t4_err(EINVAL, "command too long (%zu bytes, at most %d)", len,
			      T4_CONTROL_LINE_MAX);
	if (strpbrk(line, "\r\n"))
		return t4_err(EINVAL, "command contains a line break");
	memcpy(out, line, len);
	out[len] = '\n';
	if (!send_all(fd, out, len + 1)) {
		/* A refusing recorder answers and closes before reading: show
		 * its answer if it is there. */
		n = read_line(fd, reply, cap, 0, NULL, NULL, NULL);
		if (n <= 0)
			return t4_err(EPIPE, "the recorder closed the connection");
	} else {
		n = read_line(fd, reply, cap, T4_CONTROL_TIMEOUT_MS, passed, rest, rest_len);
	}
	if (n >= 0 && !strncmp(reply, "ok", 2) && (reply[2] == '\0' || reply[2] == ' '))
		return 0;
	if (passed && *passed >= 0) { /* only an "ok" hands one over */
		close(*passed);
		*passed = -1;
	}
	if (n == -ECONNRESET)
		return t4_err(EPIPE, "the recorder closed the connection without answering");
	if (n < 0)
		return n;
	return t4_err(EREMOTEIO, "%s", reply);
}

int t4_control_exchange_fd(int fd, const char *line, char *reply, size_t cap, int *passed)
{
	return exchange(fd, line, reply, cap, passed, NULL, NULL);
}

/* Read len bytes of a data reply into buf (have of them already there)
 * by the deadline. */
static int read_data(int fd, char *buf, size_t have, size_t len, int64_t deadline)
{
	while (have < len) {
		int r = now_ms() >= deadline ? 0 : wait_bytes(fd, deadline);
		ssize_t n;

		if (r <= 0)
			return r < 0 ? r : t4_err(ETIMEDOUT, "the recorder's data did not arrive "
						 "within %d ms", T4_CONTROL_TIMEOUT_MS);
		n = recv_fds(fd, buf + have, len - have, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) /* the connection is unusable: its next reply is out of step */
			return t4_err(EPIPE, "the recorder closed the connection in the "
				      "middle of its data");
		have += (size_t)n;
	}
	return 0;
}

/* "ok data N": N, a decimal of at most T4_CONTROL_DATA_MAX. */
static int data_length(const char *reply, size_t *len)
{
	char *end;
	unsigned long long v;

	if (strncmp(reply, "ok data ", 8) || reply[8] < '0' || reply[8] > '9')
		return t4_err(EPROTO, "the recorder's reply is not data: '%.80s'", reply);
	errno = 0;
	v = strtoull(reply + 8, &end, 10);
	if (errno || *end || v > T4_CONTROL_DATA_MAX)
		return t4_err(EPROTO, "the recorder's data length is out of range: '%.80s'",
			      reply);
	*len = (size_t)v;
	return 0;
}

int t4_control_fetch(int fd, const char *line, char *reply, size_t cap, char **data,
		     size_t *len)
{
	int64_t deadline = now_ms() + T4_CONTROL_TIMEOUT_MS;
	char rest[CHUNK];
	size_t rest_len = 0, n = 0;
	char *buf;
	int rc;

	*data = NULL;
	*len = 0;
	if ((rc = exchange(fd, line, reply, cap, NULL, rest, &rest_len)) < 0)
		return rc;
	if ((rc = data_length(reply, &n)) < 0)
		return rc;
	if (rest_len > n)
		return t4_err(EPROTO, "the recorder sent more than the %zu bytes it announced", n);
	if (!(buf = malloc(n + 1)))
		return t4_err(ENOMEM, "out of memory for %zu bytes of data", n);
	memcpy(buf, rest, rest_len);
	if ((rc = read_data(fd, buf, rest_len, n, deadline)) < 0) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

int t4_control_send(const char *path, const char *line, char *reply,
		    size_t cap)
{
	int fd, err;

	if (reply && cap)
		reply[0] = '\0';
	fd = t4_control_connect(path);
	if (fd < 0)
		return fd;
	err = t4_control_exchange(fd, line, reply, cap);
	close(fd);
	if (err < 0 && err != -EREMOTEIO && err != -EINVAL)
		return t4_err(-err, "%s: %s", path, t4_errmsg());
	return err;
}
