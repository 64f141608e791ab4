/* hold.c - record --top's terminal: the view is drawn on the controlling
 * terminal (/dev/tty), whatever standard output and error are, and what
 * would reach that terminal from anyone else while the view is up is held
 * and shown when it closes: the command's output and record's own
 * messages, in the order they were written. So the view is never torn by
 * a line of the command, the command's output is neither lost under the
 * alternate screen nor mixed with the view, and a standard output that is
 * a file or a pipe stays the command's alone (record --top wrote its CSV
 * lines there).
 *
 * How: where standard output or error is that terminal, record puts a
 * pseudo-terminal there before the command forks (the command inherits
 * it: it still writes to a terminal, line-buffered, colours kept; both
 * streams share it, so their order stays), keeping the real terminal aside.
 * The pty has the terminal's size, and follows it: SIGWINCH sets a flag,
 * record's waiting loop (cli_hold_follow, every 20 ms while the view is up)
 * copies the size over.
 * A relay thread reads the pty at once, so the command never blocks on
 * it, into a spool (an unlinked file under $TMPDIR) while the view is up;
 * at cli_hold_release record's own standard output and error are the
 * terminal again, the spool is written out, and from then on the relay
 * passes the command's output straight through. The spool keeps the first
 * bytes, up to the limit (HOLD_MAX, or $T410TRACE_HOLD_MAX bytes) or until
 * a write to it fails ($TMPDIR full): from there on everything is dropped
 * and counted, never a hole in the middle, and the release says how many
 * bytes after what it shows were dropped. The pty does no output
 * processing (no OPOST), so the bytes reach the terminal as the command
 * wrote them. Killed (SIGKILL), record loses what it held.
 */
#include "cli.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define HOLD_MAX (256ull << 20) /* bytes held while the view is up */
#define HOLD_DRAIN_MS 2000      /* at close: how long the last writers may take */

static volatile sig_atomic_t resized; /* SIGWINCH came */

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

int cli_hold_limit(uint64_t *max)
{
	const char *v = t4_env("T410TRACE_HOLD_MAX");

	*max = HOLD_MAX;
	if (v && t4_parse_decimal(v, max) < 0)
		return t4_err(EINVAL, "T410TRACE_HOLD_MAX=%s: not a count of bytes", v);
	return 0;
}

/* Whether fd is the terminal tty is (TIOCGDEV: the device behind any
 * terminal fd, /dev/tty's too); a terminal that cannot say is taken as it. */
static bool is_view_tty(int fd, int tty)
{
	unsigned a, b;

	if (!isatty(fd))
		return false;
	if (ioctl(fd, TIOCGDEV, &a) < 0 || ioctl(tty, TIOCGDEV, &b) < 0)
		return true;
	return a == b;
}

int cli_hold_open_tty(struct cli_hold *h, uint64_t max)
{
	memset(h, 0, sizeof(*h));
	h->tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (h->tty < 0)
		return t4_err(ENOTTY, "--top: no terminal to show the view on (record has no "
			      "controlling terminal: %s); 't410trace top --control PATH' prints "
			      "CSV lines to a pipe", strerror(errno));
	h->master = h->spool = h->out = h->wake[0] = h->wake[1] = -1;
	h->saved[0] = h->saved[1] = -1;
	h->max = max;
	pthread_mutex_init(&h->lock, NULL);
	h->on = true;
	return 0;
}

/* Write buf whole, or as much as fd takes before an error (a terminal
 * gone, a full disk): the command is never held up by it. Returns the
 * bytes written. */
static size_t put_all(int fd, const char *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(fd, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	return done;
}

/* Bytes from the pty: to the terminal once released; else to the spool
 * up to its limit or its first failed write, the rest dropped (counted). */
static void take(struct cli_hold *h, const char *buf, size_t n)
{
	pthread_mutex_lock(&h->lock);
	if (!h->holding) {
		put_all(h->out, buf, n);
	} else {
		size_t room = h->dropped || h->held >= h->max ? 0 : h->max - h->held;
		size_t kept = put_all(h->spool, buf, n < room ? n : room);
		if (kept < n && kept < room && !h->dropped)
			h->spool_errno = errno ? errno : EIO;
		h->held += kept;
		h->dropped += n - kept;
		if (kept)
			h->last = buf[kept - 1];
	}
	pthread_mutex_unlock(&h->lock);
}

/* The relay: until every writer of the pty is gone (EIO), or, once
 * cli_hold_close asked, HOLD_DRAIN_MS more. */
static void *relay(void *arg)
{
	struct cli_hold *h = arg;
	char buf[16384];
	uint64_t deadline = 0;

	for (;;) {
		struct pollfd p[2] = { { .fd = h->master, .events = POLLIN },
				       { .fd = h->wake[0], .events = POLLIN } };
		int ms = -1;
		if (deadline) {
			uint64_t now = t4_clock_ns(CLOCK_MONOTONIC);
			if (now >= deadline)
				break;
			ms = (int)((deadline - now) / 1000000 + 1);
		}
		int rc = poll(p, deadline ? 1 : 2, ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			break;
		if (p[0].revents) {
			ssize_t n = read(h->master, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) /* EIO: no one has the pty open any more */
				break;
			take(h, buf, (size_t)n);
		} else if (p[1].revents) {
			deadline = t4_clock_ns(CLOCK_MONOTONIC) + HOLD_DRAIN_MS * 1000000ull;
		}
	}
	return NULL;
}

/* A pty whose slave writes bytes as they are (its size: copy_size). */
static int make_pty(struct cli_hold *h, int *slave)
{
	struct termios t;
	char name[128];

	h->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (h->master < 0 || grantpt(h->master) < 0 || unlockpt(h->master) < 0 ||
	    ptsname_r(h->master, name, sizeof(name)) != 0)
		return t4_err(errno ? errno : EIO, "--top: a pseudo-terminal: %s", strerror(errno));
	*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0)
		return t4_err(errno, "--top: %s: %s", name, strerror(errno));
	if (tcgetattr(*slave, &t) == 0) {
		t.c_oflag &= (tcflag_t)~OPOST;
		tcsetattr(*slave, TCSANOW, &t);
	}
	return 0;
}

/* The terminal's size onto the pty, where it differs. */
static void copy_size(const struct cli_hold *h)
{
	struct winsize ws, had;

	if (ioctl(h->tty, TIOCGWINSZ, &ws) == 0 &&
	    (ioctl(h->master, TIOCGWINSZ, &had) < 0 || memcmp(&ws, &had, sizeof(ws))))
		ioctl(h->master, TIOCSWINSZ, &ws);
}

void cli_hold_follow(struct cli_hold *h)
{
	if (!h->on || h->master < 0 || !resized)
		return;
	resized = 0;
	copy_size(h);
}

static int make_spool(struct cli_hold *h)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/t410trace-held-XXXXXX", t4_tmp_root());
	h->spool = mkostemp(path, O_CLOEXEC);
	if (h->spool < 0)
		return t4_err(errno, "--top: %s: %s", path, strerror(errno));
	unlink(path);
	return 0;
}

/* Standard output and error that are the view's terminal: the pty. */
static int move_fds(struct cli_hold *h, int slave)
{
	for (int fd = 1; fd <= 2; fd++) {
		if (!is_view_tty(fd, h->tty))
			continue;
		if ((h->saved[fd - 1] = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0 || dup2(slave, fd) < 0)
			return t4_err(errno, "--top: %s", strerror(errno));
		if (h->out < 0)
			h->out = h->saved[fd - 1];
	}
	return 0;
}

int cli_hold_start(struct cli_hold *h)
{
	int slave = -1, rc;

	if (!is_view_tty(STDOUT_FILENO, h->tty) && !is_view_tty(STDERR_FILENO, h->tty))
		return 0; /* nothing of anyone else's reaches the terminal */
	if ((rc = make_pty(h, &slave)) < 0 || (rc = make_spool(h)) < 0 ||
	    (rc = pipe2(h->wake, O_CLOEXEC) < 0 ? t4_err(errno, "pipe: %s", strerror(errno)) : 0))
		goto fail;
	struct sigaction sa = { .sa_handler = on_winch, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, &h->old_winch);
	h->winch_set = true;
	copy_size(h); /* then every SIGWINCH's (cli_hold_follow) */
	h->holding = true;
	if ((rc = pthread_create(&h->thread, NULL, relay, h)) != 0) {
		rc = t4_err(rc, "--top: a thread: %s", strerror(rc));
		goto fail;
	}
	h->running = true;
	if ((rc = move_fds(h, slave)) < 0) {
		cli_hold_release(h);
		goto fail;
	}
	close(slave);
	return 0;
fail:
	if (slave >= 0)
		close(slave);
	return rc;
}

/* The spool out to the terminal, from its start. */
static void write_spool(struct cli_hold *h)
{
	char buf[16384];
	off_t at = 0;
	ssize_t n;

	while ((n = pread(h->spool, buf, sizeof(buf), at)) > 0) {
		put_all(h->out, buf, (size_t)n);
		at += n;
	}
}

void cli_hold_release(struct cli_hold *h)
{
	if (!h->on || !h->holding)
		return;
	pthread_mutex_lock(&h->lock);
	for (int fd = 1; fd <= 2; fd++)
		if (h->saved[fd - 1] >= 0)
			dup2(h->saved[fd - 1], fd);
	write_spool(h);
	h->holding = false;
	/* said right after what it follows (the relay waits for the lock), so
	 * what is still in the pty comes after it, in its order */
	if (h->dropped) {
		char why[128];
		if (h->spool_errno)
			snprintf(why, sizeof(why), "holding them in $TMPDIR: %s",
				 strerror(h->spool_errno));
		else
			snprintf(why, sizeof(why), "at most %llu are held",
				 (unsigned long long)h->max);
		fprintf(stderr, "%st410trace: --top: %llu more bytes written to the terminal "
				"while the view was up were dropped after the %llu above (%s)\n",
			h->held && h->last != '\n' ? "\n" : "", (unsigned long long)h->dropped,
			(unsigned long long)h->held, why);
	}
	pthread_mutex_unlock(&h->lock);
}

void cli_hold_close(struct cli_hold *h)
{
	if (!h->on)
		return;
	cli_hold_release(h);
	if (h->running) {
		char c = 0;
		if (write(h->wake[1], &c, 1) < 0) { /* the relay then ends within HOLD_DRAIN_MS */
		}
		pthread_join(h->thread, NULL);
		h->running = false;
	}
	int *fds[] = { &h->tty, &h->master, &h->spool, &h->wake[0], &h->wake[1],
		       &h->saved[0], &h->saved[1] };
	for (size_t i = 0; i < T4_ARRAY_LEN(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	h->out = -1;
	if (h->winch_set)
		sigaction(SIGWINCH, &h->old_winch, NULL);
	pthread_mutex_destroy(&h->lock);
	h->on = false;
}
