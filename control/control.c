/* control.c - the recorder's control socket (server side, control.h).
 *
 * A Unix stream socket served by one thread that polls the listening fd, a
 * wake eventfd (for shutdown) and every connected client, so several
 * clients (`t410trace ctl`, libt410trace in the workload) can be connected
 * at once without a thread each. Commands are short lines answered at once;
 * the ops callbacks (t4_sched_* in record) are quick and thread-safe, so
 * one thread is plenty.
 *
 * Security: the socket file is created mode 0600 (the socket inode's mode
 * is set with fchmod before bind, so the file never exists with looser
 * bits and the process-wide umask is left alone for other threads), and
 * every peer's uid is checked with SO_PEERCRED: only root and the
 * recording user are served, whatever the file's mode.
 *
 * Clients: as many as the process may open files (record raises its soft
 * RLIMIT_NOFILE to the hard one), each costing one fd and one line buffer
 * (T4_CONTROL_LINE_MAX + 1 bytes), in a table that grows by doubling. A
 * client that completes no line for the idle timeout (T4_CONTROL_IDLE_MS,
 * counted from its connection or its last complete line, so a client
 * trickling half a line is idle too) is closed without a word; so is the
 * longest idle one when accept runs out of fds. Up to ACCEPT_BATCH new
 * connections are taken at a wake-up (one a wake-up, each polling every
 * client, let a flood keep `ctl` in the backlog for seconds). Neither idle nor
 * half-line clients can lock out others: libt410trace, whose connection a
 * timeout closed, resends on a fresh one (a command is executed only when
 * its reply is sent, so a connection closed without a reply carried no
 * executed command). Replies are written with MSG_DONTWAIT and a client
 * that does not read its replies is dropped rather than stalling the
 * thread. A data reply ("live": a snapshot of some kilobytes) that the
 * socket does not take at once waits in the client's own buffer and goes
 * out as the socket has room (POLLOUT); meanwhile that client's further
 * lines wait, and one that reads none of it for the idle timeout is closed
 * like an idle one. Parsing and dispatch (t4_control_exec) are a pure function of the
 * line so that they can be tested and fuzzed without a socket.
 */
#include "control.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CMD_HELP "(bookmark NAME, trigger, start, stop, status, live)"
#define ACCEPT_PAUSE_MS 100 /* out of fds with nobody to close: retry then */
#define ACCEPT_BATCH 64     /* connections taken at a wake-up, at most */

struct ctl_client {
	int fd;
	int pid;                             /* the peer (SO_PEERCRED) */
	int64_t active_ms;                   /* connected, or its last line */
	size_t len;                          /* bytes buffered in line */
	char line[T4_CONTROL_LINE_MAX + 1];  /* one line and its newline */
	char *out;                           /* a data reply not sent yet */
	size_t out_len, out_off;             /* its size, what went already */
};

struct t4_control {
	int lfd;
	int wakefd;
	pthread_t thread;
	bool started;
	uid_t owner;
	dev_t dev; /* of the socket file we created, to unlink only ours */
	ino_t ino;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char tmp[PATH_MAX]; /* its private name until published ("": none) */
	struct t4_control_ops ops;
	void *ud;
	_Atomic unsigned idle_ms;
	size_t nclients, cap;
	struct ctl_client *clients; /* cap of them */
	struct pollfd *pfd;         /* cap + 2 */
};

/* ---- commands (no socket involved) ------------------------------------ */

/* A reply is one line: line breaks (from a callback's text) become spaces. */
static void one_line(char *reply)
{
	for (char *p = reply; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

/* Write "error: <t4_errmsg() or strerror>" as one line. */
static void reply_error(int err, char *reply, size_t cap)
{
	const char *m = t4_errmsg();

	snprintf(reply, cap, "error: %s", m[0] ? m : strerror(-err));
	one_line(reply);
}

/* "live": "ok data N" with the N bytes of the snapshot in *data. */
static int run_live(const struct t4_control_ops *ops, void *ud, char *reply, size_t cap,
		    char **data, size_t *len)
{
	int err;

	(void)t4_err(EINVAL, "%s", "");
	err = ops->live ? ops->live(ud, data, len) : -ENOTSUP;
	if (err == 0 && *len > T4_CONTROL_DATA_MAX) {
		free(*data);
		err = t4_err(EMSGSIZE, "live data of %zu bytes (at most %u)", *len,
			     T4_CONTROL_DATA_MAX);
	}
	if (err < 0) {
		*data = NULL;
		*len = 0;
		if (err == -ENOTSUP && !t4_errmsg()[0])
			(void)t4_err(ENOTSUP, "'live' is not supported by this recorder");
		reply_error(err, reply, cap);
		return err;
	}
	snprintf(reply, cap, "ok data %zu", *len);
	return 0;
}

static int run_op(const struct t4_control_ops *ops, void *ud, const char *cmd,
		  const char *arg, char *reply, size_t cap)
{
	char status[T4_CONTROL_LINE_MAX] = "";
	int (*simple)(void *) = NULL;
	int err;

	if (!strcmp(cmd, "trigger"))
		simple = ops->trigger;
	else if (!strcmp(cmd, "start"))
		simple = ops->start;
	else if (!strcmp(cmd, "stop"))
		simple = ops->stop;
	(void)t4_err(EINVAL, "%s", ""); /* so a callback's silence is visible */
	if (!strcmp(cmd, "bookmark"))
		err = ops->bookmark ? ops->bookmark(ud, arg) : -ENOTSUP;
	else if (!strcmp(cmd, "status"))
		err = ops->status ? ops->status(ud, status, sizeof(status)) : -ENOTSUP;
	else
		err = simple ? simple(ud) : -ENOTSUP;
	if (err == -ENOTSUP && !t4_errmsg()[0])
		(void)t4_err(ENOTSUP, "'%s' is not supported by this recorder", cmd);
	if (err < 0) {
		reply_error(err, reply, cap);
		return err;
	}
	status[sizeof(status) - 1] = '\0';
	if (status[0])
		snprintf(reply, cap, "ok %s", status);
	else
		snprintf(reply, cap, "ok");
	one_line(reply);
	return 0;
}

/* "hello [PATH]": the rest of the line is the path (it may hold spaces). */
static bool is_hello(const char *line, const char **path)
{
	if (strncmp(line, "hello", 5) || (line[5] && !strchr(" \t\r\n", line[5])))
		return false;
	*path = line + 5 + strspn(line + 5, " \t");
	return true;
}

/* Always "ok": a recorder that cannot serve the probe says "socket";
 * "uprobe" goes with the probe page's fd (*fd), or not at all. */
static int run_hello(const struct t4_control_ops *ops, void *ud, int pid, const char *path,
		     char *reply, size_t cap, int *fd)
{
	char buf[T4_CONTROL_LINE_MAX + 1];
	int up = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	buf[strcspn(buf, "\r\n")] = '\0';
	if (ops->hello && pid > 0 && buf[0])
		up = ops->hello(ud, pid, buf, fd);
	if (*fd < 0)
		up = 0;
	snprintf(reply, cap, "ok %s", up == 1 ? "uprobe" : "socket");
	if (up != 1)
		*fd = -1;
	return 0;
}

/* One line: its reply, an fd to pass along (*fd) and data to send after
 * the reply (*data, malloc'ed, *len bytes; NULL when none). */
static int exec_line(const struct t4_control_ops *ops, void *ud, int pid, const char *line,
		     char *reply, size_t cap, int *fd, char **data, size_t *len)
{
	static const char *const cmds[] = { "bookmark", "trigger", "start",
					    "stop", "status", "live" };
	char buf[T4_CONTROL_LINE_MAX + 1];
	char *cmd, *extra, *save = NULL;
	const char *arg;
	size_t i;

	*fd = -1;
	*data = NULL;
	*len = 0;
	if (strlen(line) > T4_CONTROL_LINE_MAX) {
		snprintf(reply, cap, "error: line too long");
		return t4_err(EINVAL, "line too long");
	}
	if (is_hello(line, &arg))
		return run_hello(ops, ud, pid, arg, reply, cap, fd);
	snprintf(buf, sizeof(buf), "%s", line);
	cmd = strtok_r(buf, " \t\r\n", &save);
	arg = cmd ? strtok_r(NULL, " \t\r\n", &save) : NULL;
	extra = arg ? strtok_r(NULL, " \t\r\n", &save) : NULL;
	if (!cmd) {
		snprintf(reply, cap, "error: empty command " CMD_HELP);
		return t4_err(EINVAL, "empty command");
	}
	for (i = 0; i < T4_ARRAY_LEN(cmds) && strcmp(cmd, cmds[i]); i++)
		;
	if (i == T4_ARRAY_LEN(cmds)) {
		(void)t4_err(EINVAL, "unknown command '%.64s' " CMD_HELP, cmd);
	} else if (i == 0 && (!arg || extra)) {
		(void)t4_err(EINVAL, "usage: bookmark NAME (one name)");
	} else if (i == 0 && !t4_control_name_ok(arg)) {
		(void)t4_control_name_error(arg);
	} else if (i > 0 && arg) {
		(void)t4_err(EINVAL, "'%s' takes no arguments", cmd);
	} else if (!strcmp(cmd, "live")) {
		return run_live(ops, ud, reply, cap, data, len);
	} else {
		return run_op(ops, ud, cmd, arg, reply, cap);
	}
	reply_error(-EINVAL, reply, cap);
	return -EINVAL;
}

int t4_control_exec(const struct t4_control_ops *ops, void *ud,
		    const char *line, char *reply, size_t cap)
{
	int fd = -1;

	return t4_control_exec_from(ops, ud, 0, line, reply, cap, &fd);
}

int t4_control_exec_from(const struct t4_control_ops *ops, void *ud, int pid,
			 const char *line, char *reply, size_t cap, int *fd)
{
	char *data;
	size_t len;
	int rc = exec_line(ops, ud, pid, line, reply, cap, fd, &data, &len);

	free(data); /* the reply says how much there was */
	return rc;
}

/* ---- socket file -------------------------------------------------------- */

/* The socket appears at its path only once it listens: it is bound and
 * listening under a private name next to the path first, then given the
 * path with link(2), which never replaces anything. (Bound straight at the
 * path, the file was there before it listened: a second recorder that
 * connected in that gap was refused as by a stale socket, removed it and
 * listened in its place, while the first listened on a file nobody could
 * reach; both believed they held the path.) So a socket at the path that
 * refuses a connection is stale (a recorder killed before its cleanup),
 * and it is replaced in one step: renameat2(RENAME_EXCHANGE) puts ours at
 * the path and hands back what was there, removed when it is the stale
 * file that was probed, given back when another recorder took the path
 * since the probe. */
#define TMP_TRIES 100    /* private names tried (one left by a dead process) */
#define PUBLISH_TRIES 16 /* the path replaced again and again meanwhile */
#define TMP_PREFIX ".t410trace-ctl" /* + "-PID-NNNNNN" */

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* What is at path: 0 nothing, 1 a stale socket (*st: which file; nobody
 * listening: ECONNREFUSED), else refused: a socket we may not connect to
 * (another user's recorder, mode 0600) may well be listening, and removing
 * it (a directory we may write to) would take its name from a live
 * recorder; a full backlog (EAGAIN) is a listener too. */
static int probe_stale(const char *path, const struct sockaddr_un *sa, struct stat *st)
{
	int fd, rc;

	if (lstat(path, st) < 0)
		return errno == ENOENT ? 0 : t4_err(errno, "%s: %s", path, strerror(errno));
	if (!S_ISSOCK(st->st_mode))
		return t4_err(EEXIST, "%s: exists and is not a socket; refusing to replace it", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return t4_err(errno, "socket: %s", strerror(errno));
	rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ? 0 : errno;
	close(fd);
	if (rc == 0 || rc == EAGAIN)
		return t4_err(EADDRINUSE, "%s: another recorder is listening there", path);
	if (rc == EACCES || rc == EPERM)
		return t4_err(EADDRINUSE, "%s: a socket this user may not connect to (another "
			      "user's recorder?); refusing to replace it", path);
	if (rc != ECONNREFUSED && rc != ENOENT)
		return t4_err(rc, "%s: connect: %s; refusing to replace it", path, strerror(rc));
	return rc == ECONNREFUSED;
}

/* Where the file system has no exchange: remove the stale file if it is
 * still at the path. (A recorder that replaced it between this look and
 * the unlink would lose its path: the one gap left there.) 1: look again. */
static int unlink_stale(const char *path, const struct stat *stale)
{
	struct stat st;

	if (lstat(path, &st) == 0 && same_file(&st, stale) && unlink(path) < 0 && errno != ENOENT)
		return t4_err(errno, "%s: cannot remove stale socket: %s", path, strerror(errno));
	return 1;
}

/* Put ours at the path in place of the stale file probed (stale): 0 done,
 * 1 look again (the path changed since the probe), or a negative errno. */
static int replace_stale(struct t4_control *c, const struct stat *stale)
{
	struct stat st;

	if (renameat2(AT_FDCWD, c->tmp, AT_FDCWD, c->path, RENAME_EXCHANGE) < 0) {
		if (errno == ENOENT)
			return 1;
		if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)
			return unlink_stale(c->path, stale);
		return t4_err(errno, "%s: cannot replace stale socket: %s", c->path, strerror(errno));
	}
	if (lstat(c->tmp, &st) == 0 && same_file(&st, stale)) {
		unlink(c->tmp);
		c->tmp[0] = '\0';
		return 0;
	}
	/* Another recorder's since the probe: its path back, ours private. */
	if (renameat2(AT_FDCWD, c->tmp, AT_FDCWD, c->path, RENAME_EXCHANGE) < 0)
		return t4_err(errno, "%s: taken since it was found stale, and cannot be given back: "
			      "%s", c->path, strerror(errno));
	return 1;
}

/* Give the listening socket (at c->tmp) the path. */
static int publish(struct t4_control *c, const struct sockaddr_un *sa)
{
	struct stat st;
	int rc;

	for (int i = 0; i < PUBLISH_TRIES; i++) {
		if (link(c->tmp, c->path) == 0) {
			unlink(c->tmp);
			c->tmp[0] = '\0';
			return 0;
		}
		if (errno != EEXIST)
			return t4_err(errno, "%s: link: %s", c->path, strerror(errno));
		if ((rc = probe_stale(c->path, sa, &st)) < 0)
			return rc;
		if (rc > 0 && (rc = replace_stale(c, &st)) <= 0)
			return rc;
	}
	return t4_err(EBUSY, "%s: replaced again and again while this recorder started; "
		      "refusing to replace it", c->path);
}

/* Bind c->lfd at a new private name (c->tmp) in the path's directory (a
 * hard link stays on its file system): hidden, with our PID and a counter
 * (6 digits: the shape t4_privsock_reclaim takes). A name too long for a
 * socket address (a long directory, a short file name) is reached through
 * the directory's fd in /proc/self/fd. First the names a recorder killed
 * before it published (its PID gone, its socket refusing) left there are
 * removed. */
static int bind_tmp(struct t4_control *c)
{
	static _Atomic unsigned seq;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *slash = strrchr(c->path, '/');
	int dlen = slash ? (int)(slash - c->path) + 1 : 0, dfd = -1, err = EADDRINUSE;
	char dir[sizeof(c->path)];

	snprintf(dir, sizeof(dir), "%.*s", dlen > 1 ? dlen - 1 : 1, dlen ? c->path : ".");
	t4_privsock_reclaim(dir, TMP_PREFIX);
	for (int i = 0; i < TMP_TRIES && err == EADDRINUSE; i++) {
		snprintf(c->tmp, sizeof(c->tmp), "%.*s" TMP_PREFIX "-%ld-%06u", dlen, c->path,
			 (long)getpid(), atomic_fetch_add(&seq, 1) % 1000000);
		if (strlen(c->tmp) < sizeof(sa.sun_path)) {
			memcpy(sa.sun_path, c->tmp, strlen(c->tmp) + 1);
		} else {
			if (dfd < 0 && (dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
				err = errno;
				break;
			}
			snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd,
				 c->tmp + dlen);
		}
		err = bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : 0;
	}
	if (dfd >= 0)
		close(dfd);
	if (err)
		c->tmp[0] = '\0';
	if (err == ENOENT && t4_dir_deleted(c->path, dir) < 0) /* the current one, rmdir'd */
		return -ENOENT;
	return err ? t4_err(err, "%s: bind: %s", c->path, strerror(err)) : 0;
}

static int listen_at(struct t4_control *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int err;

	if (strlen(c->path) >= sizeof(sa.sun_path))
		return t4_err(ENAMETOOLONG, "%s: socket path too long (at most %zu bytes)",
			      c->path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, c->path, strlen(c->path) + 1);
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->lfd < 0)
		return t4_err(errno, "socket: %s", strerror(errno));
	/* Linux creates the file with the socket inode's mode & ~umask. */
	if (fchmod(c->lfd, 0600) < 0)
		return t4_err(errno, "%s: fchmod: %s", c->path, strerror(errno));
	if ((err = bind_tmp(c)) < 0)
		return err;
	if (lstat(c->tmp, &st) < 0)
		return t4_err(errno, "%s: %s", c->tmp, strerror(errno));
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	if ((st.st_mode & 0077) && chmod(c->tmp, 0600) < 0) /* not Linux */
		return t4_err(errno, "%s: chmod: %s", c->path, strerror(errno));
	if (listen(c->lfd, SOMAXCONN) < 0)
		return t4_err(errno, "%s: listen: %s", c->path, strerror(errno));
	return publish(c, &sa);
}

/* Remove path if it is still the socket file we bound (not a successor's). */
static void unlink_ours(const struct t4_control *c, const char *path)
{
	struct stat st;

	if (c->ino && !lstat(path, &st) && st.st_dev == c->dev && st.st_ino == c->ino)
		unlink(path);
}

/* ---- serving ------------------------------------------------------------ */

/* Send one reply line, with fd passed along when >= 0 (SCM_RIGHTS);
 * false if the client cannot take it (dropped). */
static bool send_reply(int fd, const char *text, int passed)
{
	char buf[T4_CONTROL_REPLY_MAX];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	int n = snprintf(buf, sizeof(buf), "%s\n", text);

	if (n < 0 || (size_t)n >= sizeof(buf)) {
		n = sizeof(buf) - 1;
		buf[n - 1] = '\n';
	}
	iov.iov_len = (size_t)n;
	if (passed >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.b;
		m.msg_controllen = sizeof(ctl.b);
		CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&m)->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&m)), &passed, sizeof(int));
	}
	return sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT) == n;
}

static bool send_line(int fd, const char *text)
{
	return send_reply(fd, text, -1);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void drop_client(struct t4_control *c, size_t i)
{
	close(c->clients[i].fd);
	free(c->clients[i].out);
	c->clients[i] = c->clients[--c->nclients];
}

/* Room for one more client (the table doubles); false when out of memory. */
static bool make_room(struct t4_control *c)
{
	size_t cap = c->cap ? c->cap * 2 : 16;
	struct ctl_client *cl;
	struct pollfd *pfd;

	if (c->nclients < c->cap)
		return true;
	if (!(cl = realloc(c->clients, cap * sizeof(*cl))))
		return false;
	c->clients = cl;
	if (!(pfd = realloc(c->pfd, (cap + 2) * sizeof(*pfd))))
		return false;
	c->pfd = pfd;
	c->cap = cap;
	return true;
}

/* Out of fds: close the client idle the longest; false when none. */
static bool evict_idlest(struct t4_control *c)
{
	size_t victim = 0;

	if (!c->nclients)
		return false;
	for (size_t i = 1; i < c->nclients; i++)
		if (c->clients[i].active_ms < c->clients[victim].active_ms)
			victim = i;
	drop_client(c, victim);
	return true;
}

/* Accept one peer: 1 when one was taken (or answered and closed), 0 when
 * the backlog is empty, -1 when out of fds or memory with nobody to close
 * (the caller pauses accepting for a moment rather than spin on a
 * connection it cannot take). */
static int accept_client(struct t4_control *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char msg[64];
	int fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && evict_idlest(c))
		fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM))
		return -1;
	if (fd < 0) /* EAGAIN: none left; or the peer went away */
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		send_line(fd, "error: cannot identify peer");
	} else if (cred.uid != 0 && cred.uid != c->owner) {
		snprintf(msg, sizeof(msg), "error: permission denied (uid %u)",
			 (unsigned)cred.uid);
		send_line(fd, msg);
	} else if (!make_room(c)) {
		send_line(fd, "error: out of memory");
	} else {
		c->clients[c->nclients++] = (struct ctl_client){
			.fd = fd, .pid = (int)cred.pid, .active_ms = now_ms(),
		};
		return 1;
	}
	close(fd);
	return 1;
}

/* Accept what the listener holds, up to ACCEPT_BATCH: one a wake-up let a
 * flood of connections (each wake-up polls every client) keep `ctl`
 * waiting in the backlog for seconds. False when out of fds or memory. */
static bool accept_batch(struct t4_control *c)
{
	int rc = 1;

	for (unsigned k = 0; k < ACCEPT_BATCH && rc > 0; k++)
		rc = accept_client(c);
	return rc >= 0;
}

/* Send what is left of cl's data reply, as much as the socket takes now;
 * false when the client is gone. */
static bool flush_out(struct ctl_client *cl)
{
	while (cl->out && cl->out_off < cl->out_len) {
		ssize_t n = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		cl->out_off += (size_t)n;
		cl->active_ms = now_ms(); /* idle is reading none of it */
	}
	free(cl->out);
	cl->out = NULL;
	return true;
}

/* Queue "reply\n" and data[0..len) (taken over) for cl and send what fits. */
static bool send_data(struct ctl_client *cl, const char *reply, char *data, size_t len)
{
	size_t head = strlen(reply) + 1;
	char *out = malloc(head + len);

	if (!out) {
		free(data);
		send_line(cl->fd, "error: out of memory");
		return false;
	}
	memcpy(out, reply, head - 1);
	out[head - 1] = '\n';
	memcpy(out + head, data, len);
	free(data);
	cl->out = out;
	cl->out_len = head + len;
	cl->out_off = 0;
	return flush_out(cl);
}

/* Answer every complete line buffered for client cl, up to a data reply
 * the socket did not take whole (the rest waits for it); false to drop it. */
static bool answer_lines(struct t4_control *c, struct ctl_client *cl)
{
	char reply[T4_CONTROL_REPLY_MAX];
	char *data;
	size_t data_len;
	int passed;
	char *nl;

	while (!cl->out && (nl = memchr(cl->line, '\n', cl->len))) {
		size_t used = (size_t)(nl - cl->line) + 1;

		*nl = '\0';
		if (memchr(cl->line, '\0', used - 1)) {
			send_line(cl->fd, "error: NUL byte in command");
			return false;
		}
		exec_line(&c->ops, c->ud, cl->pid, cl->line, reply, sizeof(reply), &passed, &data,
			  &data_len);
		cl->active_ms = now_ms();
		memmove(cl->line, cl->line + used, cl->len - used);
		cl->len -= used;
		if (data ? !send_data(cl, reply, data, data_len) : !send_reply(cl->fd, reply, passed))
			return false;
	}
	if (cl->len == sizeof(cl->line)) {
		send_line(cl->fd, "error: line too long");
		return false;
	}
	return true;
}

/* Read what client i sent; false to drop it. */
static bool read_client(struct t4_control *c, size_t i)
{
	struct ctl_client *cl = &c->clients[i];
	ssize_t n = recv(cl->fd, cl->line + cl->len, sizeof(cl->line) - cl->len, 0);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false;
	cl->len += (size_t)n;
	return answer_lines(c, cl);
}

/* Client i is ready: the rest of its data reply (then the lines it sent
 * meanwhile), or what it sent; false to drop it. */
static bool serve_client(struct t4_control *c, size_t i)
{
	struct ctl_client *cl = &c->clients[i];

	if (!cl->out)
		return read_client(c, i);
	if (c->pfd[i + 2].revents & (POLLERR | POLLHUP | POLLNVAL))
		return false;
	return flush_out(cl) && (cl->out || answer_lines(c, cl));
}

/* Close the clients idle past the timeout (silently: libt410trace then
 * reconnects); the poll timeout until the next one is due (-1: none). */
static int close_idle(struct t4_control *c)
{
	int64_t now = now_ms(), idle = atomic_load(&c->idle_ms), next = -1;

	for (size_t i = c->nclients; i-- > 0;) {
		int64_t due = c->clients[i].active_ms + idle;
		if (due <= now)
			drop_client(c, i);
		else if (next < 0 || due - now < next)
			next = due - now;
	}
	return next > INT32_MAX ? INT32_MAX : (int)next;
}

static void *serve(void *arg)
{
	struct t4_control *c = arg;
	bool accepting = true;

	for (;;) {
		int timeout = close_idle(c);
		size_t n = c->nclients;

		if (!accepting && (timeout < 0 || timeout > ACCEPT_PAUSE_MS))
			timeout = ACCEPT_PAUSE_MS;
		c->pfd[0] = (struct pollfd){ .fd = c->wakefd, .events = POLLIN };
		c->pfd[1] = (struct pollfd){ .fd = accepting ? c->lfd : -1, .events = POLLIN };
		for (size_t i = 0; i < n; i++) /* a data reply under way: its room first */
			c->pfd[i + 2] = (struct pollfd){ .fd = c->clients[i].fd,
							 .events = c->clients[i].out ? POLLOUT
										     : POLLIN };
		if (poll(c->pfd, (nfds_t)n + 2, timeout) < 0)
			continue; /* EINTR; nothing else can fail with these fds */
		if (c->pfd[0].revents)
			break;
		accepting = true;
		/* Backwards, so that dropping (swap with last) skips nobody. */
		for (size_t i = n; i-- > 0;)
			if (c->pfd[i + 2].revents && !serve_client(c, i))
				drop_client(c, i);
		if (c->pfd[1].revents)
			accepting = accept_batch(c);
	}
	return NULL;
}

void t4_control_idle(struct t4_control *c, unsigned ms)
{
	atomic_store(&c->idle_ms, ms);
}

int t4_control_open(struct t4_control **out, const char *path,
		    const struct t4_control_ops *ops, void *ud)
{
	struct t4_control *c;
	sigset_t all, old;
	int err;

	*out = NULL;
	if (!path || !path[0])
		return t4_err(EINVAL, "control socket: no path given");
	if (!ops)
		return t4_err(EINVAL, "%s: control socket without ops", path);
	c = calloc(1, sizeof(*c));
	if (!c)
		return t4_err(ENOMEM, "control socket: out of memory");
	c->lfd = -1;
	c->owner = geteuid();
	c->idle_ms = T4_CONTROL_IDLE_MS;
	if (!make_room(c)) {
		free(c);
		return t4_err(ENOMEM, "control socket: out of memory");
	}
	c->ops = *ops;
	c->ud = ud;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->wakefd < 0) {
		err = t4_err(errno, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if (strlen(path) >= sizeof(c->path)) {
		err = t4_err(ENAMETOOLONG, "%s: socket path too long (at most %zu bytes)",
			     path, sizeof(c->path) - 1);
		goto fail;
	}
	err = listen_at(c);
	if (err < 0)
		goto fail;
	/* The thread blocks every signal: they belong to the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&c->thread, NULL, serve, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err < 0) {
		err = t4_err(-err, "control socket thread: %s", strerror(-err));
		goto fail;
	}
	c->started = true;
	*out = c;
	return 0;
fail:
	t4_control_close(c);
	return err;
}

void t4_control_close(struct t4_control *c)
{
	if (!c)
		return;
	if (c->started) {
		uint64_t one = 1;

		if (write(c->wakefd, &one, sizeof(one)) < 0)
			t4_warn("control socket: cannot wake its thread: %s", strerror(errno));
		pthread_join(c->thread, NULL);
	}
	while (c->nclients > 0)
		drop_client(c, c->nclients - 1);
	free(c->clients);
	free(c->pfd);
	if (c->lfd >= 0) {
		/* Removed while it still listens: a socket at the path that
		 * refuses connections is stale, whoever looks. */
		unlink_ours(c, c->path);
		if (c->tmp[0])
			unlink_ours(c, c->tmp);
		close(c->lfd);
	}
	if (c->wakefd >= 0)
		close(c->wakefd);
	free(c);
}
