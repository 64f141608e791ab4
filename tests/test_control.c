/* test_control.c - the control socket: protocol, security, several
 * clients, socket file handling, and `t410trace ctl` (suites control,
 * control_cli). The recorder side is a fake (tests/apps/fake_recorder.h).
 */
#include "tests/apps/fake_recorder.h"
#include "probe.h"
#include "tmpdir_testutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------- */

/* Send raw bytes on a fresh connection; return the fd. */
static int raw_send(const char *path, const char *bytes, size_t len)
{
	int fd = t4_control_connect(path);

	cr_assert_geq(fd, 0, "connect: %s", t4_errmsg());
	cr_assert_eq(send(fd, bytes, len, MSG_NOSIGNAL), (ssize_t)len);
	return fd;
}

/* Read everything until EOF or 'want' newlines; returns bytes read. */
static size_t raw_read(int fd, char *buf, size_t cap, int want)
{
	size_t len = 0;
	int lines = 0;

	while (len + 1 < cap && lines < want) {
		ssize_t n = recv(fd, buf + len, 1, 0);

		if (n <= 0)
			break;
		lines += buf[len] == '\n';
		len += (size_t)n;
	}
	buf[len] = '\0';
	return len;
}

/* The server closed the connection: EOF, or ECONNRESET when it left
 * bytes we sent unread (Linux Unix sockets report that). */
static bool closed_by_peer(int fd)
{
	char ch;
	ssize_t n = recv(fd, &ch, 1, 0);

	return n == 0 || (n < 0 && errno == ECONNRESET);
}

static void expect_exec(const char *line, int want_err, const char *want_reply)
{
	struct fake_rec f = { .mu = PTHREAD_MUTEX_INITIALIZER };
	char reply[T4_CONTROL_REPLY_MAX];
	int err = t4_control_exec(&fake_ops, &f, line, reply, sizeof(reply));

	cr_expect_eq(err, want_err, "'%s': err %d", line, err);
	cr_expect_str_eq(reply, want_reply, "'%s'", line);
}

/* ---- protocol (no socket) --------------------------------------------- */

Test(control, exec_commands)
{
	expect_exec("bookmark phase2", 0, "ok");
	expect_exec("trigger", 0, "ok");
	expect_exec("start", 0, "ok");
	expect_exec("  stop \r", 0, "ok");
	expect_exec("status", 0, "ok calls=1");
	expect_exec("bookmark A-z_0.9:x", 0, "ok");
}

static int status_two_lines(void *ud, char *buf, size_t cap)
{
	(void)ud;
	snprintf(buf, cap, "state=recording\r\ntriggers=3\n");
	return 0;
}

/* Found by tools/fuzz/fuzz_control: a status text with line breaks went
 * out as a multi-line "ok" reply, desynchronising the client's
 * one-line-per-command reading. Replies are one line, whatever the op. */
Test(control, exec_reply_is_one_line)
{
	struct t4_control_ops ops = fake_ops;
	char reply[T4_CONTROL_REPLY_MAX];

	ops.status = status_two_lines;
	cr_assert_eq(t4_control_exec(&ops, NULL, "status", reply, sizeof(reply)), 0);
	cr_assert_str_eq(reply, "ok state=recording  triggers=3 ");
}

Test(control, exec_refusals)
{
	char name63[64], line[128];

	expect_exec("frobnicate now", -EINVAL,
		    "error: unknown command 'frobnicate' (bookmark NAME, trigger, start, stop, status, live)");
	expect_exec("", -EINVAL, "error: empty command (bookmark NAME, trigger, start, stop, status, live)");
	expect_exec("bookmark", -EINVAL, "error: usage: bookmark NAME (one name)");
	expect_exec("bookmark a b", -EINVAL, "error: usage: bookmark NAME (one name)");
	expect_exec("bookmark a/b", -EINVAL,
		    "error: bookmark 'a/b': use 1-63 characters of A-Z a-z 0-9 _ . : -");
	expect_exec("trigger 3", -EINVAL, "error: 'trigger' takes no arguments");
	memset(name63, 'n', 63);
	name63[63] = '\0';
	snprintf(line, sizeof(line), "bookmark %s", name63);
	expect_exec(line, 0, "ok");
	snprintf(line, sizeof(line), "bookmark %sn", name63);
	expect_exec(line, -EINVAL,
		    "error: bookmark 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn': "
		    "use 1-63 characters of A-Z a-z 0-9 _ . : -");
}

Test(control, exec_callback_errors)
{
	struct fake_rec f = { .mu = PTHREAD_MUTEX_INITIALIZER, .fail = 1 };
	struct t4_control_ops none = { 0 };
	char reply[T4_CONTROL_REPLY_MAX];

	cr_assert_eq(t4_control_exec(&fake_ops, &f, "trigger", reply, sizeof(reply)), -EBUSY);
	cr_assert_str_eq(reply, "error: trigger refused: fake says busy");
	cr_assert_eq(t4_control_exec(&none, NULL, "start", reply, sizeof(reply)), -ENOTSUP);
	cr_assert_str_eq(reply, "error: 'start' is not supported by this recorder");
	cr_assert_str_eq(f.log, "");
}

/* ---- the socket -------------------------------------------------------- */

Test(control, round_trip)
{
	struct fake_rec f;
	char reply[T4_CONTROL_REPLY_MAX], log[256];

	fake_open(&f);
	cr_assert_eq(t4_control_send(f.path, "bookmark phase2", reply, sizeof(reply)), 0);
	cr_assert_str_eq(reply, "ok");
	cr_assert_eq(t4_control_send(f.path, "trigger", reply, sizeof(reply)), 0);
	cr_assert_eq(t4_control_send(f.path, "start", reply, sizeof(reply)), 0);
	cr_assert_eq(t4_control_send(f.path, "stop", reply, sizeof(reply)), 0);
	cr_assert_eq(t4_control_send(f.path, "status", reply, sizeof(reply)), 0);
	cr_assert_str_eq(reply, "ok calls=5");
	fake_log(&f, log, sizeof(log));
	cr_assert_str_eq(log, "bookmark phase2;trigger;start;stop;status;");

	cr_assert_eq(t4_control_send(f.path, "bookmark no way", reply, sizeof(reply)), -EREMOTEIO);
	cr_assert_str_eq(reply, "error: usage: bookmark NAME (one name)");
	cr_assert_str_eq(t4_errmsg(), "error: usage: bookmark NAME (one name)");
	f.fail = 1;
	cr_assert_eq(t4_control_send(f.path, "trigger", reply, sizeof(reply)), -EREMOTEIO);
	cr_assert_str_eq(reply, "error: trigger refused: fake says busy");
	cr_assert_eq(t4_control_send(f.path, "a\nb", reply, sizeof(reply)), -EINVAL);
	fake_close(&f);
}

Test(control, pipelined_lines_and_crlf)
{
	struct fake_rec f;
	char buf[256];
	const char *in = "trigger\r\nbookmark x1\nstatus\n";
	int fd;

	fake_open(&f);
	fd = raw_send(f.path, in, strlen(in));
	raw_read(fd, buf, sizeof(buf), 3);
	cr_assert_str_eq(buf, "ok\nok\nok calls=3\n");
	close(fd);
	fake_close(&f);
}

Test(control, too_long_line_drops_client)
{
	struct fake_rec f;
	char line[400], buf[256], log[64];
	int fd;

	fake_open(&f);
	/* 256 bytes is the longest line: answered, client kept */
	memset(line, 'x', 256);
	line[256] = '\n';
	fd = raw_send(f.path, line, 257);
	raw_read(fd, buf, sizeof(buf), 1);
	cr_assert(!strncmp(buf, "error: unknown command 'xxxx", 28), "%s", buf);
	cr_assert_eq(send(fd, "trigger\n", 8, MSG_NOSIGNAL), 8);
	raw_read(fd, buf, sizeof(buf), 1);
	cr_assert_str_eq(buf, "ok\n");
	close(fd);

	/* 257 bytes without a newline: refused and dropped */
	memset(line, 'y', sizeof(line));
	fd = raw_send(f.path, line, sizeof(line));
	raw_read(fd, buf, sizeof(buf), 1);
	cr_assert_str_eq(buf, "error: line too long\n");
	cr_assert(closed_by_peer(fd));
	close(fd);
	fake_log(&f, log, sizeof(log));
	cr_assert_str_eq(log, "trigger;");
	fake_close(&f);
}

Test(control, several_clients)
{
	enum { N = 8 };
	struct fake_rec f;
	char buf[64], line[32], log[512], want[512] = "";
	int fd[N];

	fake_open(&f);
	for (int i = 0; i < N; i++)
		fd[i] = t4_control_connect(f.path);
	/* Interleaved over connections kept open, in reverse order */
	for (int round = 0; round < 2; round++) {
		for (int i = N - 1; i >= 0; i--) {
			snprintf(line, sizeof(line), "bookmark c%d_r%d", i, round);
			cr_assert_eq(t4_control_exchange(fd[i], line, buf, sizeof(buf)), 0,
				     "%s", t4_errmsg());
			cr_assert_str_eq(buf, "ok");
			snprintf(want + strlen(want), sizeof(want) - strlen(want),
				 "bookmark c%d_r%d;", i, round);
		}
	}
	/* A client that leaves does not disturb the others */
	close(fd[3]);
	cr_assert_eq(t4_control_exchange(fd[0], "trigger", buf, sizeof(buf)), 0);
	strcat(want, "trigger;");
	for (int i = 0; i < N; i++)
		if (i != 3)
			close(fd[i]);
	fake_log(&f, log, sizeof(log));
	cr_assert_str_eq(log, want);
	fake_close(&f);
}

Test(control, socket_mode_0600_and_unlinked_on_close)
{
	struct fake_rec f;
	struct stat st;
	mode_t old = umask(0); /* the mode must not depend on the umask */

	fake_open(&f);
	umask(old);
	cr_assert_eq(lstat(f.path, &st), 0);
	cr_assert(S_ISSOCK(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	t4_control_close(f.ctl);
	f.ctl = NULL;
	cr_assert_eq(lstat(f.path, &st), -1);
	cr_assert_eq(errno, ENOENT);
	t4_control_close(NULL);
	fake_close(&f);
}

Test(control, stale_socket_replaced_live_one_kept)
{
	struct fake_rec f;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct t4_control *second = NULL;
	char reply[64];
	int fd;

	fake_open(&f);
	t4_control_close(f.ctl);
	/* leave a stale socket file: bound, then closed, not unlinked */
	memcpy(sa.sun_path, f.path, strlen(f.path) + 1); /* fake_open: it fits */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	cr_assert_eq(t4_control_open(&f.ctl, f.path, &fake_ops, &f), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_control_send(f.path, "trigger", reply, sizeof(reply)), 0);

	/* a live recorder is not replaced */
	cr_assert_eq(t4_control_open(&second, f.path, &fake_ops, &f), -EADDRINUSE);
	cr_assert_null(second);
	cr_assert_str_eq(t4_errmsg() + strlen(f.path), ": another recorder is listening there");
	cr_assert_eq(t4_control_send(f.path, "trigger", reply, sizeof(reply)), 0);
	fake_close(&f);
}

Test(control, non_socket_path_refused)
{
	struct fake_rec f;
	struct t4_control *c = NULL;
	char text[32], want[PATH_MAX + 80];

	fake_open(&f);
	t4_control_close(f.ctl);
	f.ctl = NULL;
	cr_assert_eq(t4_write_small_file(f.path, "precious"), 0);
	cr_assert_eq(t4_control_open(&c, f.path, &fake_ops, &f), -EEXIST);
	cr_assert_null(c);
	snprintf(want, sizeof(want), "%s: exists and is not a socket; refusing to replace it",
		 f.path);
	cr_assert_str_eq(t4_errmsg(), want);
	cr_assert_eq(t4_read_small_file(f.path, text, sizeof(text)), 8);
	cr_assert_str_eq(text, "precious");
	fake_close(&f);
}

/* A path that fits a socket address with its short name, in a directory
 * too long for the private name the socket listens under before it gets
 * the path: that name is bound through /proc/self/fd, and the path
 * answers as any other (nothing left beside it after the close). */
Test(control, a_short_name_in_a_long_directory)
{
	struct fake_rec f = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct sockaddr_un sa;
	char dir[PATH_MAX], path[PATH_MAX + 8], reply[64], ls[256], err[256];
	struct stat st;
	int n;

	t4t_tmpdir(f.dir, sizeof(f.dir), "t4ctl");
	n = (int)sizeof(sa.sun_path) - 1 - (int)strlen(f.dir) - 3; /* "/" dir "/c" */
	if (n < 1) {
		t4_rmtree(f.dir);
		cr_skip_test("%s: too long for a socket path ($TMPDIR is long)", f.dir);
	}
	snprintf(dir, sizeof(dir), "%s/%0*d", f.dir, n, 0);
	cr_assert_eq(mkdir(dir, 0700), 0, "%s", strerror(errno));
	snprintf(path, sizeof(path), "%s/c", dir);
	cr_assert_eq(strlen(path), sizeof(sa.sun_path) - 1);
	cr_assert_eq(t4_control_open(&f.ctl, path, &fake_ops, &f), 0, "%s", t4_errmsg());
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert(S_ISSOCK(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	cr_assert_eq(t4_control_send(path, "trigger", reply, sizeof(reply)), 0, "%s", t4_errmsg());
	t4_control_close(f.ctl);
	f.ctl = NULL;
	cr_assert_eq(run_shell(ls, err, sizeof(ls), "ls -A '%s'", dir), 0, "%s", err);
	cr_assert_str_eq(ls, "");
	fake_close(&f);
}

/* dir/.t410trace-ctl-PID-NNNNNN (path: cap PATH_MAX). */
static char *priv_name(char *path, const char *dir, pid_t pid, int n)
{
	int len = snprintf(path, PATH_MAX, "%s/.t410trace-ctl-%d-%06d", dir, (int)pid, n);

	cr_assert(len > 0 && len < PATH_MAX);
	return path;
}

/* Bind a socket at path; listening (its fd returned) or closed (-1), left
 * as a killed process leaves it. */
static int bind_at(const char *path, bool listening)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_lt(strlen(path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", strerror(errno));
	if (listening) {
		cr_assert_eq(listen(fd, 1), 0);
		return fd;
	}
	close(fd);
	return -1;
}

/* A recorder killed between binding its private name and linking it to
 * the path leaves .t410trace-ctl-PID-NNNNNN: the next recorder binding in
 * that directory removes it, and nothing else of that shape: not a
 * regular file, a symlink, a live process's socket, a socket that
 * listens (a live recorder's, moved there), another user's. */
Test(control, a_killed_recorders_private_name_is_reclaimed)
{
	struct fake_rec f;
	char p[PATH_MAX];
	pid_t dead = fork();
	int lfd;
	struct stat st;

	cr_assert_geq(dead, 0);
	if (dead == 0)
		_exit(0);
	cr_assert_eq(waitpid(dead, NULL, 0), dead);
	fake_open(&f);
	t4_control_close(f.ctl);
	f.ctl = NULL;
	bind_at(priv_name(p, f.dir, dead, 0), false);
	cr_assert_eq(t4_write_small_file(priv_name(p, f.dir, dead, 1), "x"), 0);
	cr_assert_eq(symlink(".t410trace-ctl-x", priv_name(p, f.dir, dead, 2)), 0);
	lfd = bind_at(priv_name(p, f.dir, dead, 3), true);
	bind_at(priv_name(p, f.dir, getppid(), 0), false);
	if (geteuid() == 0) { /* root: a socket of nobody's */
		bind_at(priv_name(p, f.dir, dead, 4), false);
		cr_assert_eq(lchown(p, 65534, 65534), 0);
	}

	cr_assert_eq(t4_control_open(&f.ctl, f.path, &fake_ops, &f), 0, "%s", t4_errmsg());
	cr_expect_neq(lstat(priv_name(p, f.dir, dead, 0), &st), 0, "%s left", p);
	for (int n = 1; n <= (geteuid() == 0 ? 4 : 3); n++)
		cr_expect_eq(lstat(priv_name(p, f.dir, dead, n), &st), 0, "%s removed", p);
	cr_expect_eq(lstat(priv_name(p, f.dir, getppid(), 0), &st), 0, "%s removed", p);
	close(lfd);
	fake_close(&f);
}

/* -c with a relative path in a current directory that was deleted said
 * "PATH: bind: No such file or directory" of a directory still there (as
 * the outputs did: safety/an_output_in_a_deleted_directory_says_so). */
Test(control, a_path_in_a_deleted_current_directory_says_so)
{
	struct fake_rec f;
	struct t4_control *c = NULL;
	char gone[PATH_MAX];

	fake_open(&f);
	cr_assert_lt(snprintf(gone, sizeof(gone), "%s/gone", f.dir), (int)sizeof(gone));
	cr_assert_eq(mkdir(gone, 0700), 0);
	cr_assert_eq(chdir(gone), 0);
	cr_assert_eq(rmdir(gone), 0);
	cr_assert_eq(t4_control_open(&c, "ctl.sock", &fake_ops, &f), -ENOENT);
	cr_assert_null(c);
	cr_assert_str_eq(t4_errmsg(), "ctl.sock: cannot create a file in the current directory: "
				      "it was deleted");
	cr_assert_eq(chdir(f.dir), 0);
	fake_close(&f);
}

Test(control, no_recorder_message)
{
	char reply[64] = "junk", want[128];

	cr_assert_lt(t4_control_send("/nonexistent/t4ctl/ctl.sock", "status", reply,
				     sizeof(reply)), 0);
	snprintf(want, sizeof(want), "no recorder listening at %s",
		 "/nonexistent/t4ctl/ctl.sock");
	cr_assert_str_eq(t4_errmsg(), want);
	cr_assert_str_eq(reply, "");
}

/* A socket that listens but never accepts, its queue full (listen 0, one
 * connection waiting): connecting gives up after T4_CONTROL_TIMEOUT_MS
 * with a message, rather than wait in connect() for ever. */
Test(control, a_recorder_that_never_accepts_times_out, .timeout = 60)
{
	struct fake_rec f;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd, queued, fd;
	char want[PATH_MAX + 80];

	fake_open(&f);
	t4_control_close(f.ctl);
	f.ctl = NULL;
	cr_assert_lt(strlen(f.path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, f.path, strlen(f.path) + 1);
	cr_assert_geq(lfd = socket(AF_UNIX, SOCK_STREAM, 0), 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(lfd, 0), 0);
	cr_assert_geq(queued = socket(AF_UNIX, SOCK_STREAM, 0), 0);
	cr_assert_eq(connect(queued, (struct sockaddr *)&sa, sizeof(sa)), 0);
	fd = t4_control_connect(f.path);
	cr_assert_eq(fd, -ETIMEDOUT, "connect: %d", fd);
	snprintf(want, sizeof(want), "%s: the recorder did not accept the connection within %d ms",
		 f.path, T4_CONTROL_TIMEOUT_MS);
	cr_assert_str_eq(t4_errmsg(), want);
	close(queued);
	close(lfd);
	fake_close(&f);
}

/* In a child running as nobody: connect and send "trigger". Exit codes:
 * 10 connect refused (EACCES), 11 the recorder denied uid 65534,
 * 12 anything else (the command got through, or odd errors), 13 could
 * not become nobody. */
static int as_nobody(const char *path)
{
	char reply[128];
	int err;

	if (t4t_become_nobody())
		return 13;
	err = t4_control_send(path, "trigger", reply, sizeof(reply));
	if (err == -EACCES)
		return 10;
	if (err == -EREMOTEIO && !strcmp(reply, "error: permission denied (uid 65534)"))
		return 11;
	return 12;
}

static int run_as_nobody(const char *path)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(as_nobody(path));
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 13)
		cr_skip_test("root cannot become nobody (uid %d) here", T4T_NOBODY);
	return WEXITSTATUS(status);
}

Test(control, other_uid_refused)
{
	struct fake_rec f;
	char log[64], reply[64];

	if (geteuid() != 0)
		cr_skip_test("needs root to become another user");
	fake_open_as(&f, true); /* where nobody can reach the socket */
	/* The file mode keeps nobody out ... */
	cr_assert_eq(run_as_nobody(f.path), 10);
	/* ... and so does SO_PEERCRED when the mode would let it in. */
	cr_assert_eq(chmod(f.path, 0666), 0);
	cr_assert_eq(run_as_nobody(f.path), 11);
	fake_log(&f, log, sizeof(log));
	cr_assert_str_eq(log, "");
	/* root (the recording user here) is still served */
	cr_assert_eq(t4_control_send(f.path, "trigger", reply, sizeof(reply)), 0);
	fake_log(&f, log, sizeof(log));
	cr_assert_str_eq(log, "trigger;");
	fake_close(&f);
}

/* Another user's recorder listens at the path (root's, mode 0600, in a
 * directory anyone may write to): a recorder of nobody's started with the
 * same --control must not take it for a stale socket (its connect fails
 * with EACCES, not ECONNREFUSED), remove it and listen in its place,
 * which left root's recorder unreachable and root's clients talking to
 * nobody's. Child exits: 20 refused as wanted, 21 it took the name, 22
 * another error, 13 could not become nobody. */
Test(control, another_users_live_socket_is_not_replaced)
{
	struct fake_rec f;
	struct stat before, after;
	char log[64], reply[64], want[PATH_MAX + 128];
	int st;
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("needs root to become another user");
	fake_open_as(&f, true);
	cr_assert_eq(chmod(f.dir, 0777), 0);
	cr_assert_eq(lstat(f.path, &before), 0);
	cr_assert_geq(pid = fork(), 0);
	if (pid == 0) {
		struct t4_control *c = NULL;
		int err;

		if (t4t_become_nobody())
			_exit(13);
		err = t4_control_open(&c, f.path, &fake_ops, NULL);
		snprintf(want, sizeof(want), "%s: a socket this user may not connect to (another "
			 "user's recorder?); refusing to replace it", f.path);
		if (err == 0) {
			t4_control_close(c);
			_exit(21);
		}
		_exit(err == -EADDRINUSE && !strcmp(t4_errmsg(), want) ? 20 : 22);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	if (WEXITSTATUS(st) == 13)
		cr_skip_test("root cannot become nobody (uid %d) here", T4T_NOBODY);
	cr_assert_eq(WEXITSTATUS(st), 20, "nobody's open: exit %d", WEXITSTATUS(st));
	cr_assert_eq(lstat(f.path, &after), 0, "root's socket was removed");
	cr_assert_eq(after.st_ino, before.st_ino);
	cr_assert_eq(t4_control_send(f.path, "trigger", reply, sizeof(reply)), 0, "%s",
		     t4_errmsg());
	fake_log(&f, log, sizeof(log));
	cr_assert_str_eq(log, "trigger;");
	fake_close(&f);
}

/* A socket another user planted where the recorder's was expected (here
 * nobody's, mode 0666): the client will not talk to it, neither send a
 * bookmark nor believe its reply. The child listens as nobody and answers
 * "ok" to one line; exit 13 when it cannot become nobody. */
static pid_t planted_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[T4_CONTROL_LINE_MAX + 2];
	int lfd, fd, ready[2];
	pid_t pid;

	cr_assert_lt(strlen(path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	cr_assert_eq(pipe(ready), 0);
	cr_assert_geq(pid = fork(), 0);
	if (pid == 0) {
		close(ready[0]);
		if (t4t_become_nobody())
			_exit(13);
		lfd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    chmod(path, 0666) || listen(lfd, 1))
			_exit(14);
		(void)!write(ready[1], "r", 1);
		if ((fd = accept(lfd, NULL, NULL)) >= 0 && recv(fd, buf, sizeof(buf), 0) > 0)
			(void)!send(fd, "ok\n", 3, MSG_NOSIGNAL);
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], buf, 1) != 1) {
		int st;
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 13)
			cr_skip_test("root cannot become nobody (uid %d) here", T4T_NOBODY);
		cr_assert_fail("the planted socket could not listen (%d)", st);
	}
	close(ready[0]);
	return pid;
}

Test(control, a_socket_of_another_user_is_not_a_recorder, .timeout = 30)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], reply[64], want[PATH_MAX + 128];
	int st;
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("needs root to become another user");
	t4t_nobody_tmpdir(dir, sizeof(dir), "t4plant", false);
	cr_assert_eq(chmod(dir, 0777), 0);
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	pid = planted_socket(path);
	cr_assert_eq(t4_control_send(path, "bookmark secret", reply, sizeof(reply)), -EACCES,
		     "%s", t4_errmsg());
	snprintf(want, sizeof(want), "%s: the socket is served by uid %d, not by a recorder of "
		 "this user or root", path, T4T_NOBODY);
	cr_assert_str_eq(t4_errmsg(), want);
	cr_assert_str_eq(reply, "");
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(t4_rmtree(dir), 0);
}

/* ---- many clients, idle clients ---------------------------------------- */

/* Whether the server closed fd within 10 s (EOF or ECONNRESET). */
static bool closed_within(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 10000) == 1 && closed_by_peer(fd);
}

/* 300 clients connected at once, each served (no fixed table). */
Test(control, any_number_of_clients)
{
	enum { N = 300 };
	struct fake_rec f;
	char buf[64], line[32];
	static int fd[N];

	fake_open(&f);
	for (int i = 0; i < N; i++) {
		fd[i] = t4_control_connect(f.path);
		cr_assert_geq(fd[i], 0, "%s", t4_errmsg());
	}
	for (int i = 0; i < N; i++) {
		snprintf(line, sizeof(line), "bookmark c%d", i);
		cr_assert_eq(t4_control_exchange(fd[i], line, buf, sizeof(buf)), 0,
			     "client %d: %s", i, t4_errmsg());
	}
	for (int i = 0; i < N; i++)
		close(fd[i]);
	cr_assert_eq(t4_control_send(f.path, "status", buf, sizeof(buf)), 0, "%s", t4_errmsg());
	cr_assert_str_eq(buf, "ok calls=301");
	fake_close(&f);
}

/* Idle clients and clients holding half a line lock nobody out. */
Test(control, idle_and_half_line_clients_lock_nobody_out)
{
	enum { N = 200 };
	struct fake_rec f;
	char buf[64];
	static int fd[2 * N];

	fake_open(&f);
	for (int i = 0; i < N; i++) {
		fd[i] = t4_control_connect(f.path);
		fd[N + i] = raw_send(f.path, "bookm", 5);
		cr_assert_geq(fd[i], 0, "%s", t4_errmsg());
	}
	cr_assert_eq(t4_control_send(f.path, "status", buf, sizeof(buf)), 0, "%s", t4_errmsg());
	cr_assert_str_eq(buf, "ok calls=1");
	for (int i = 0; i < 2 * N; i++)
		close(fd[i]);
	fake_close(&f);
}

/* A client that completes no line within the idle timeout is closed
 * without a word, half a line or none; the others are served. */
Test(control, idle_clients_are_closed)
{
	struct fake_rec f;
	char buf[64];
	int idle, half;

	fake_open(&f);
	t4_control_idle(f.ctl, 200);
	idle = t4_control_connect(f.path);
	half = raw_send(f.path, "trig", 4);
	cr_assert(closed_within(idle), "an idle client was kept");
	cr_assert(closed_within(half), "a client holding half a line was kept");
	close(idle);
	close(half);
	cr_assert_eq(t4_control_send(f.path, "trigger", buf, sizeof(buf)), 0, "%s", t4_errmsg());
	fake_log(&f, buf, sizeof(buf));
	cr_assert_str_eq(buf, "trigger;", "the half line was executed");
	fake_close(&f);
}

/* ---- data replies (live) ---------------------------------------------------- */

static void expect_pattern(const char *data, size_t len, size_t want)
{
	cr_assert_eq(len, want);
	for (size_t i = 0; i < len; i++)
		if (data[i] != (char)('a' + i % 26))
			cr_assert_fail("byte %zu of %zu differs", i, len);
	cr_assert_eq(data[len], '\0');
}

/* "live" answers "ok data N" and N bytes, on a connection that goes on
 * with line replies after it; exec without a socket says the length. */
Test(control, live_data_round_trip)
{
	struct fake_rec f;
	char reply[T4_CONTROL_REPLY_MAX], *data;
	size_t len;
	int fd;

	expect_exec("live", 0, "ok data 3");
	expect_exec("live now", -EINVAL, "error: 'live' takes no arguments");
	fake_open(&f);
	f.live_len = 3 << 20; /* more than a socket buffer holds */
	fd = t4_control_connect(f.path);
	cr_assert_geq(fd, 0, "%s", t4_errmsg());
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(t4_control_fetch(fd, "live", reply, sizeof(reply), &data, &len), 0,
			     "%s", t4_errmsg());
		cr_assert_str_eq(reply, "ok data 3145728");
		expect_pattern(data, len, f.live_len);
		free(data);
	}
	cr_assert_eq(t4_control_exchange(fd, "status", reply, sizeof(reply)), 0);
	cr_assert_str_eq(reply, "ok calls=4");
	/* a reply that is not data, and a refusal */
	cr_assert_eq(t4_control_fetch(fd, "trigger", reply, sizeof(reply), &data, &len), -EPROTO);
	cr_assert_null(data);
	cr_assert_eq(t4_control_fetch(fd, "bogus", reply, sizeof(reply), &data, &len), -EREMOTEIO);
	close(fd);
	fake_close(&f);
}

/* Whether the server closed fd within 10 s, its data left unread (a
 * Unix socket reports the peer's close as POLLHUP with data pending). */
static bool hung_up_within(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	return poll(&p, 1, 10000) == 1 && (p.revents & (POLLHUP | POLLRDHUP));
}

/* A client that asks for data and never reads it holds nobody up, and
 * is closed after the idle timeout. */
Test(control, unread_data_stalls_nobody, .timeout = 60)
{
	struct fake_rec f;
	char reply[T4_CONTROL_REPLY_MAX], *data;
	size_t len;
	int stalled;

	fake_open(&f);
	t4_control_idle(f.ctl, 500);
	f.live_len = 8 << 20;
	stalled = raw_send(f.path, "live\nlive\n", 10);
	for (int i = 0; i < 50; i++) {
		int fd = t4_control_connect(f.path);
		cr_assert_geq(fd, 0, "%s", t4_errmsg());
		cr_assert_eq(t4_control_fetch(fd, "live", reply, sizeof(reply), &data, &len), 0,
			     "%s", t4_errmsg());
		expect_pattern(data, len, f.live_len);
		free(data);
		close(fd);
	}
	cr_assert(hung_up_within(stalled), "a client that reads nothing was kept");
	close(stalled);
	fake_close(&f);
}

/* What a client refuses in a data reply: a length out of range, fewer
 * bytes than announced (the server closes), more. */
static void *bad_server(void *arg)
{
	int lfd = *(int *)arg, fd;
	char buf[64];
	static const char *const replies[] = {
		"ok data 99999999999\n", "ok data 12x\n", "ok data 10\nabc", "ok data 2\nabcdef\n",
	};

	for (size_t i = 0; i < T4_ARRAY_LEN(replies); i++) {
		if ((fd = accept(lfd, NULL, NULL)) < 0)
			return NULL;
		if (recv(fd, buf, sizeof(buf), 0) > 0)
			(void)!send(fd, replies[i], strlen(replies[i]), MSG_NOSIGNAL);
		close(fd);
	}
	return NULL;
}

Test(control, data_replies_a_client_refuses)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX], reply[T4_CONTROL_REPLY_MAX], *data;
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), want[] = { -EPROTO, -EPROTO, -EPIPE, -EPROTO };
	pthread_t th;
	size_t len;

	t4t_tmpdir(dir, sizeof(dir), "t4data");
	cr_assert_lt(strlen(dir) + 8, sizeof(sa.sun_path), "a shorter $TMPDIR is needed");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/d.sock", dir);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(lfd, 4), 0);
	cr_assert_eq(pthread_create(&th, NULL, bad_server, &lfd), 0);
	for (size_t i = 0; i < T4_ARRAY_LEN(want); i++) {
		int fd = t4_control_connect(sa.sun_path);
		cr_assert_geq(fd, 0);
		cr_expect_eq(t4_control_fetch(fd, "live", reply, sizeof(reply), &data, &len), want[i],
			     "reply %zu: %s", i, t4_errmsg());
		cr_expect_null(data);
		close(fd);
	}
	pthread_join(th, NULL);
	close(lfd);
	cr_assert_eq(t4_rmtree(dir), 0);
}

/* ---- the probe page ------------------------------------------------------ */

/* A call takes a credit or is refused (counted; a trigger's apart too); after the close every
 * call is refused; the close waits for a call under way. */
Test(control, probe_page_credits)
{
	struct t4_probe_page *p, *q;
	bool wake = false;
	int fd;

	cr_assert_eq(t4_probe_page_create(&p, &fd), 0, "%s", t4_errmsg());
	cr_assert_not_null(q = t4_probe_page_map(fd), "another process's view");
	cr_assert_eq(t4_probe_claim(q, false, &wake), -EBUSY);
	cr_assert_eq(atomic_load(&p->refused), 1);
	t4_probe_grant(p, T4_PROBE_CREDIT);
	for (int i = 0; i < T4_PROBE_CREDIT; i++) {
		cr_assert_eq(t4_probe_claim(q, false, &wake), 0, "credit %d", i);
		cr_assert_eq(wake, T4_PROBE_CREDIT - i <= T4_PROBE_LOW, "credit %d", i);
		t4_probe_done(q);
	}
	cr_assert_eq(t4_probe_claim(q, false, &wake), -EBUSY);
	cr_assert_eq(atomic_load(&p->refused), 2);
	cr_assert_eq(t4_probe_claim(q, true, &wake), -EBUSY); /* a trigger's */
	cr_assert_eq(atomic_load(&p->refused), 3);
	cr_assert_eq(atomic_load(&p->refused_triggers), 1);
	t4_probe_grant(p, 1);
	cr_assert_eq(t4_probe_claim(q, false, &wake), 0); /* under way ... */
	pid_t kid = fork();
	if (kid == 0) {
		usleep(50000);
		t4_probe_done(q); /* ... and done, 50 ms later, elsewhere */
		_exit(0);
	}
	t4_probe_close(p);
	cr_assert_eq(atomic_load(&p->busy), 0, "the close did not wait");
	cr_assert_eq(waitpid(kid, NULL, 0), kid);
	cr_assert_eq(t4_probe_claim(q, false, &wake), -ESHUTDOWN);
	cr_assert_eq(atomic_load(&p->refused), 3, "a closed page refuses without counting");
	t4_probe_page_unmap(q);
	t4_probe_page_unmap(p);
	close(fd);
	cr_assert_null(t4_probe_page_map(-1));
}

/* The page says when its recorder died without closing it: a holder
 * killed (SIGKILL) leaves it stopped, and closed for every process; a
 * holder that closed it is no death; an older recorder's page (no
 * alive_at) and an offset scribbled out of the page say nothing. */
Test(control, probe_page_says_its_recorder_died)
{
	struct t4_probe_page *p, *q;
	int fd, sync[2];
	char ready;
	pid_t kid, parent = getpid();

	t4t_need_robust_futex();
	cr_assert_eq(t4_probe_page_create(&p, &fd), 0, "%s", t4_errmsg());
	cr_assert_not_null(q = t4_probe_page_map(fd), "another process's view");
	cr_assert_not(t4_probe_stopped(q), "not held yet: nothing said");
	t4_probe_hold(p); /* held and closed by this thread: a normal end */
	cr_assert_neq(atomic_load(&p->alive_at), 0);
	cr_assert_not(t4_probe_stopped(q));
	t4_probe_close(p);
	cr_assert(t4_probe_stopped(q));
	atomic_store(&p->closed, 0); /* the next recording on it */
	cr_assert_not(t4_probe_stopped(q), "a closed recording is no death");
	cr_assert_eq(pipe(sync), 0);
	if ((kid = fork()) == 0) { /* a recorder that dies holding it */
		t4t_die_with_parent(parent);
		t4_probe_hold(p);
		if (write(sync[1], "h", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	cr_assert_eq(read(sync[0], &ready, 1), 1);
	cr_assert_not(t4_probe_stopped(q), "held by a live recorder");
	cr_assert_eq(kill(kid, SIGKILL), 0);
	cr_assert_eq(waitpid(kid, NULL, 0), kid);
	uint32_t at = atomic_load(&p->alive_at);
	atomic_store(&p->alive_at, 4096); /* scribbled: past the page */
	cr_assert_not(t4_probe_stopped(q));
	atomic_store(&p->alive_at, 0); /* an older recorder's page */
	cr_assert_not(t4_probe_stopped(q));
	atomic_store(&p->alive_at, at);
	cr_assert(t4_probe_stopped(q), "its recorder died");
	cr_assert_eq(atomic_load(&p->closed), 1, "closed for every process");
	close(sync[0]);
	close(sync[1]);
	t4_probe_page_unmap(q);
	t4_probe_page_unmap(p);
	close(fd);
}

/* An fd that is no probe page (a socket that answers "ok uprobe" with an
 * empty or short file): refused, never a SIGBUS in the application that
 * touches it. */
Test(control, a_short_file_is_no_probe_page)
{
	int fd = memfd_create("short", MFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_null(t4_probe_page_map(fd), "an empty file");
	cr_assert_eq(ftruncate(fd, 100), 0);
	cr_assert_null(t4_probe_page_map(fd), "100 bytes");
	close(fd);
}

/* ---- t410trace ctl ------------------------------------------------------ */

Test(control_cli, ctl_commands)
{
	const char *bin = getenv("T4_BIN");
	struct fake_rec f;
	char out[2048], err[2048], log[128], want[PATH_MAX + 160];

	if (!bin)
		cr_skip_test("T4_BIN not set (run through make check)");
	fake_open(&f);
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl --control '%s' bookmark phase2",
			     bin, f.path), 0);
	cr_assert_str_eq(out, "ok");
	cr_assert_eq(run_shell(out, err, sizeof(out),
			     "env T410TRACE_CONTROL='%s' '%s' ctl status", f.path, bin), 0);
	cr_assert_str_eq(out, "ok calls=2");
	/* -c, as record names the socket */
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl -c '%s' status", bin, f.path), 0);
	cr_assert_str_eq(out, "ok calls=3");
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl -c", bin), 2);
	cr_assert(strstr(err, "-c needs a PATH"), "%s", err);
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl --control='%s' frob",
			     bin, f.path), 1);
	snprintf(want, sizeof(want), "t410trace ctl: %s: unknown command 'frob' (bookmark NAME, "
		 "trigger, start, stop, status, live)", f.path);
	cr_assert_str_eq(err, want);
	cr_assert_str_eq(out, "");
	/* a reply quoting bytes that are not UTF-8: shown as \xNN, one line */
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl --control '%s' bookmark "
			       "\"$(printf 'a\\377\\033[2J')\"", bin, f.path), 1);
	snprintf(want, sizeof(want), "t410trace ctl: %s: bookmark 'a\\xff [2J': use 1-63 "
		 "characters of A-Z a-z 0-9 _ . : -", f.path);
	cr_assert_str_eq(err, want);
	/* a socket path with a newline (a link to the socket): still one line */
	cr_assert_eq(run_shell(out, err, sizeof(out), "cd '%s' && ln -s '%s' 'x\ny' && '%s' ctl "
			       "--control 'x\ny' frob", f.dir, f.path, bin), 1);
	cr_assert_str_eq(err, "t410trace ctl: x y: unknown command 'frob' (bookmark NAME, "
			 "trigger, start, stop, status, live)");
	/* no recorder at a path that is not UTF-8: \xNN, not the raw byte */
	cr_assert_eq(run_shell(out, err, sizeof(out), "cd '%s' && '%s' ctl --control "
			       "\"$(printf 'no\\377\\nsock')\" status", f.dir, bin), 1);
	cr_assert_str_eq(err, "t410trace ctl: no recorder listening at no\\xff sock");
	/* live answers with data, for top: refused as usage, never sent */
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl --control '%s' live", bin, f.path),
		     2);
	cr_assert(strstr(err, "t410trace ctl: 'live' answers with data: 't410trace top' shows it"),
		  "%s", err);
	cr_assert_str_eq(out, "");
	fake_log(&f, log, sizeof(log));
	cr_assert_str_eq(log, "bookmark phase2;status;status;");

	/* usage errors: 2; no recorder: 1 */
	cr_assert_eq(run_shell(out, err, sizeof(out), "env -u T410TRACE_CONTROL '%s' ctl trigger",
			     bin), 2);
	cr_assert(strstr(err, "use --control PATH or set T410TRACE_CONTROL"), "%s", err);
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl --control '%s'", bin, f.path), 2);
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl --bogus x", bin), 2);
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl --help", bin), 0);
	cr_assert(strstr(out, "usage: t410trace ctl"));
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl --control '%s/none' trigger",
			     bin, f.dir), 1);
	snprintf(want, sizeof(want), "t410trace ctl: no recorder listening at %s/none", f.dir);
	cr_assert_str_eq(err, want);
	fake_close(&f);
}

/* A recorder out of file descriptors (its hard limit 64) closes its
 * longest idle client for a new one: 100 idle connections do not lock
 * out `ctl`. */
Test(control_cli, out_of_fds_the_idlest_client_goes, .timeout = 60)
{
	enum { N = 100 };
	const char *bin = getenv("T4_BIN");
	char dir[PATH_MAX], sock[PATH_MAX + 16], out[2048], err[2048];
	static int fd[N];
	pid_t rec;

	if (!bin)
		cr_skip_test("T4_BIN not set (run through make check)");
	t4t_tmpdir(dir, sizeof(dir), "t4ctl");
	snprintf(sock, sizeof(sock), "%s/c.sock", dir);
	rec = fork();
	cr_assert_geq(rec, 0);
	if (rec == 0) {
		struct rlimit rl = { 64, 64 };
		char log[PATH_MAX + 16];
		snprintf(log, sizeof(log), "%s/x.t4t", dir);
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a test that failed */
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(99);
		execl(bin, bin, "record", "-q", "--sim", "--period", "10ms", "--control", sock, "-o",
		      log, (char *)NULL);
		_exit(98);
	}
	for (int i = 0; i < 500 && t4_control_send(sock, "status", out, sizeof(out)); i++)
		usleep(10000); /* until it answers */
	int opened = 0, rc;
	for (; opened < N && (fd[opened] = t4_control_connect(sock)) >= 0; opened++)
		;
	rc = run_shell(out, err, sizeof(out), "'%s' ctl --control '%s' status", bin, sock);
	for (int i = 0; i < opened; i++)
		close(fd[i]);
	kill(rec, SIGINT);
	cr_assert_eq(waitpid(rec, NULL, 0), rec);
	cr_assert_eq(opened, N, "%s", t4_errmsg());
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(!strncmp(out, "ok triggers=", 12), "%s", out);
	t4_rmtree(dir);
}

/* LIBRARY.md: "record raises its soft RLIMIT_NOFILE to the hard limit; its
 * command gets the limit record was given" (the command's parent, record,
 * read in /proc). */
Test(control_cli, record_raises_its_fd_limit_not_its_commands, .timeout = 60)
{
	const char *bin = getenv("T4_BIN");
	char dir[PATH_MAX], out[2048], err[2048];
	struct rlimit rl;
	long soft, hard;

	if (!bin)
		cr_skip_test("T4_BIN not set (run through make check)");
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= 100)
		cr_skip_test("the hard limit of open files is %llu: nothing to raise",
			     (unsigned long long)rl.rlim_max);
	t4t_tmpdir(dir, sizeof(dir), "t4ctl");
	cr_assert_eq(run_shell(out, err, sizeof(out), "cd '%s' && ulimit -Sn 100 && '%s' record "
			       "-q --sim --period 10ms -o x.t4t -- sh -c 'ulimit -Sn; grep "
			       "\"^Max open files\" /proc/$PPID/limits'", dir, bin), 0, "%s", err);
	cr_assert_eq(sscanf(out, "100\nMax open files %ld %ld", &soft, &hard), 2,
		     "the command's soft limit, then record's limits: %s", out);
	cr_assert_eq(soft, hard, "record's soft limit: %s", out);
	cr_assert_eq(t4_rmtree(dir), 0, "%s", t4_errmsg());
}

/* A server at sock (forked, a listening socket of its own) that reads the
 * command line, then sends bytes without a newline: flood (as fast as the
 * socket takes them, until the client goes) or one byte every 50 ms. */
static pid_t endless_server(const char *sock, bool flood)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	pid_t pid;

	cr_assert_geq(lfd, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", strerror(errno));
	cr_assert_eq(listen(lfd, 4), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char buf[4096], ch;
		int c;
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a test that failed */
		if ((c = accept(lfd, NULL, NULL)) < 0)
			_exit(97);
		do { /* the command line */
			if (recv(c, &ch, 1, 0) != 1)
				_exit(96);
		} while (ch != '\n');
		memset(buf, 'x', sizeof(buf));
		for (;;) {
			if (send(c, buf, flood ? sizeof(buf) : 1, MSG_NOSIGNAL) <= 0)
				_exit(0); /* the client gave up */
			if (!flood)
				usleep(50000);
		}
	}
	close(lfd);
	return pid;
}

/* A peer that streams a reply with no end of line: ctl stops at the reply's
 * length bound at once (it read on for ever: memory bounded by truncation,
 * time not), or at the reply's deadline for a trickle, with one line and
 * exit status 1. */
Test(control_cli, a_reply_without_end_is_cut_off, .timeout = 60)
{
	const char *bin = getenv("T4_BIN");
	char dir[PATH_MAX], sock[PATH_MAX + 16], out[2048], err[2048], want[PATH_MAX + 128];

	if (!bin)
		cr_skip_test("T4_BIN not set (run through make check)");
	t4t_tmpdir(dir, sizeof(dir), "t4ctl");
	snprintf(sock, sizeof(sock), "%s/flood.sock", dir);
	pid_t flood = endless_server(sock, true);
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl --control '%s' status", bin, sock),
		     1, "%s", err);
	snprintf(want, sizeof(want), "t410trace ctl: %s: the recorder's reply is longer than %d "
		 "bytes: not a recorder's", sock, T4_CONTROL_REPLY_MAX - 1);
	cr_expect_str_eq(err, want);
	cr_expect_str_eq(out, "");
	cr_assert_eq(waitpid(flood, NULL, 0), flood);

	snprintf(sock, sizeof(sock), "%s/trickle.sock", dir);
	pid_t trickle = endless_server(sock, false);
	cr_assert_eq(run_shell(out, err, sizeof(out), "'%s' ctl --control '%s' status", bin, sock),
		     1, "%s", err);
	snprintf(want, sizeof(want), "t410trace ctl: %s: the recorder did not end its reply "
		 "within %d ms (", sock, T4_CONTROL_TIMEOUT_MS);
	cr_expect(!strncmp(err, want, strlen(want)), "%s", err);
	cr_expect(strstr(err, " bytes, no end of line)") && !strchr(err, '\n'), "%s", err);
	cr_assert_eq(waitpid(trickle, NULL, 0), trickle);
	t4_rmtree(dir);
}

/* ---- two recorders starting at one path ----------------------------------- */

/* A directory to run in, with the shim that holds a recorder at one
 * moment of making its socket (tests/apps/ctl_gap.c) built as gap.so. */
static void gap_setup(struct run *r)
{
	cli_bin();
	t4t_exec_tmpdir(r->dir, sizeof(r->dir), "t4gap");
	cli_build_preload(r, "ctl_gap", "gap.so");
}

/* The shell line's start: the FIFOs the shim and the recorders' commands
 * meet at, and $GAP, what runs a recorder under the shim (held where
 * $T4_GAP_AT says; killed after 60 s should the test itself go wrong,
 * never the test's pace). */
#define GAP_SH                                                                              \
	"mkfifo at go done kgo && "                                                          \
	"export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0; "       \
	"GAP='timeout -s KILL 60 env LD_PRELOAD=./gap.so T4_GAP_DIR=.'; "

/* The second recorder: it releases the held one once its own socket
 * listens (its command runs only then), and runs until told (done). */
#define GAP_SECOND(log)                                                                     \
	"\"$B\" record -q --sim --backend pwrite --period 10ms -c c.sock -o " log             \
	" -- sh -c ': > go; read v < done' & second=$!; "

/* The end: the held recorder's exit and words, who answers at the path,
 * the second's exit, and any private name left behind. */
#define GAP_END(held)                                                                       \
	"wait $" held "; echo " held "=$?; cat " held ".err; "                            \
	"\"$B\" ctl -c c.sock status | cut -d' ' -f1; "                                      \
	"echo > done; wait $second; echo second=$?; ls -A | grep -c t410trace-ctl"

/* A recorder held between its socket's bind and its listen: the socket
 * file used to be at the path already, refusing connections, so a second
 * recorder took it for a stale one, removed it and listened in its place,
 * while the first went on unreachable and believed it held the path as
 * well (exit 0, nothing said). Now the path appears only once it listens:
 * the second takes the free path, the first says so and stops (exit 2). */
Test(control_cli, a_recorder_between_bind_and_listen_keeps_its_path_or_says, .timeout = 120)
{
	struct run r;

	gap_setup(&r);
	sh_in_dir(&r, GAP_SH "T4_GAP_AT=listen $GAP \"$B\" record -q --sim --backend pwrite "
		      "--period 10ms -c c.sock -o a.t4t -- true 2> first.err & first=$!; read v < at; "
		      GAP_SECOND("b.t4t") GAP_END("first"));
	cr_assert_str_eq(r.out, "first=2\nt410trace: c.sock: another recorder is listening there\n"
				"ok\nsecond=0\n0\n");
	cleanup(&r);
}

/* A socket left by a recorder killed with SIGKILL is stale: the next
 * recorder takes its path. Two that found it stale at once: the one held
 * after its probe (connect refused) used to remove the path the other had
 * taken meanwhile and listen there, leaving that one unreachable; now it
 * replaces only the stale file it probed, gives the other its path back
 * and stops (exit 2). */
Test(control_cli, a_stale_socket_goes_to_one_recorder_of_two, .timeout = 120)
{
	struct run r;

	gap_setup(&r);
	sh_in_dir(&r, GAP_SH "exec 3<>kgo; \"$B\" record -q --sim --backend pwrite --period 10ms "
		      "-c c.sock -o k.t4t -- sh -c 'echo > at; exec cat kgo' 3>&- & k=$!; read v < at; "
		      "kill -KILL $k; "
		      "{ wait $k; } 2>/dev/null; echo killed=$?; exec 3>&-; \"$B\" ctl -c c.sock status; "
		      "T4_GAP_AT=refused $GAP \"$B\" record -q --sim --backend pwrite --period 10ms "
		      "-c c.sock -o x.t4t -- true 2> held.err & held=$!; read v < at; "
		      GAP_SECOND("y.t4t") GAP_END("held"));
	cr_assert_str_eq(r.out, "killed=137\nt410trace ctl: no recorder listening at c.sock\n"
				"held=2\nt410trace: c.sock: another recorder is listening there\n"
				"ok\nsecond=0\n0\n");
	cleanup(&r);
}
