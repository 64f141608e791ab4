/* fake_recorder.h - a control socket with fake ops, for the control and
 * libt410trace tests (header-only: the tests are one binary, but each test
 * file stays readable on its own).
 *
 * The ops append "bookmark NAME;", "trigger;", "start;", "stop;",
 * "status;" to a log under a mutex; status answers with the number of
 * calls so far. Setting fail makes trigger fail with -EBUSY and a message.
 * live answers live_len bytes (0: 3), byte i being 'a' + i % 26.
 */
#ifndef T4_TEST_FAKE_RECORDER_H
#define T4_TEST_FAKE_RECORDER_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/control.h"
#include "tests/cli_testutil.h"
#include "tests/tmpdir_testutil.h"
#include "util/util.h"

struct fake_rec {
	pthread_mutex_t mu;
	char log[16384];
	size_t len;
	int calls;
	int fail;
	size_t live_len;
	char dir[PATH_MAX];
	char path[PATH_MAX + 16];
	struct t4_control *ctl;
};

static inline int fake_note(void *ud, const char *what, const char *arg)
{
	struct fake_rec *f = ud;
	int n;

	pthread_mutex_lock(&f->mu);
	n = snprintf(f->log + f->len, sizeof(f->log) - f->len, "%s%s%s;", what,
		     arg ? " " : "", arg ? arg : "");
	if (n > 0 && (size_t)n < sizeof(f->log) - f->len)
		f->len += (size_t)n;
	f->calls++;
	pthread_mutex_unlock(&f->mu);
	return 0;
}

static inline int fake_bookmark(void *ud, const char *name)
{
	return fake_note(ud, "bookmark", name);
}

static inline int fake_trigger(void *ud)
{
	struct fake_rec *f = ud;

	if (f->fail)
		return t4_err(EBUSY, "trigger refused: fake says busy");
	return fake_note(ud, "trigger", NULL);
}

static inline int fake_start(void *ud)
{
	return fake_note(ud, "start", NULL);
}

static inline int fake_stop(void *ud)
{
	return fake_note(ud, "stop", NULL);
}

static inline int fake_status(void *ud, char *buf, size_t cap)
{
	struct fake_rec *f = ud;

	fake_note(ud, "status", NULL);
	pthread_mutex_lock(&f->mu);
	snprintf(buf, cap, "calls=%d", f->calls);
	pthread_mutex_unlock(&f->mu);
	return 0;
}

static inline int fake_live(void *ud, char **data, size_t *len)
{
	struct fake_rec *f = ud;
	size_t n = f->live_len ? f->live_len : 3;

	fake_note(ud, "live", NULL);
	if (!(*data = malloc(n)))
		return t4_err(ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		(*data)[i] = (char)('a' + i % 26);
	*len = n;
	return 0;
}

static const struct t4_control_ops fake_ops = {
	.bookmark = fake_bookmark,
	.trigger = fake_trigger,
	.start = fake_start,
	.stop = fake_stop,
	.status = fake_status,
	.live = fake_live,
};

/* A recorder at dir/ctl.sock, in a new directory (mode 0711): one that
 * nobody can reach (as root, for tests that connect as nobody), else a
 * private one under $TMPDIR. Skips where a socket path there would not
 * fit in sun_path (a long $TMPDIR). */
static inline void fake_open_as(struct fake_rec *f, bool for_nobody)
{
	struct sockaddr_un sa;
	int err;

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	if (for_nobody)
		t4t_nobody_tmpdir(f->dir, sizeof(f->dir), "t4ctl", false);
	else
		t4t_tmpdir(f->dir, sizeof(f->dir), "t4ctl");
	cr_assert_eq(chmod(f->dir, 0711), 0);
	snprintf(f->path, sizeof(f->path), "%s/ctl.sock", f->dir);
	if (strlen(f->path) >= sizeof(sa.sun_path)) {
		t4_rmtree(f->dir);
		cr_skip_test("%s: too long for a socket path ($TMPDIR is long)", f->path);
	}
	err = t4_control_open(&f->ctl, f->path, &fake_ops, f);
	cr_assert_eq(err, 0, "t4_control_open: %d %s", err, t4_errmsg());
}

static inline void fake_open(struct fake_rec *f)
{
	fake_open_as(f, false);
}

/* Close the recorder (if open) and remove the temp dir. */
static inline void fake_close(struct fake_rec *f)
{
	t4_control_close(f->ctl);
	f->ctl = NULL;
	t4_rmtree(f->dir);
	pthread_mutex_destroy(&f->mu);
}

/* Copy of the log so far. */
static inline void fake_log(struct fake_rec *f, char *out, size_t cap)
{
	size_t n;

	pthread_mutex_lock(&f->mu);
	n = f->len < cap - 1 ? f->len : cap - 1; /* a cut log fails compares */
	memcpy(out, f->log, n);
	out[n] = '\0';
	pthread_mutex_unlock(&f->mu);
}

/* Run a shell command here; its standard output into out, its errors
 * into err (cap bytes each), each without its trailing newlines. Returns
 * the exit status. */
__attribute__((format(printf, 4, 5)))
static inline int run_shell(char *out, char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = cli_vexec(&(struct cli_io){ .out = out, .cap = cap, .err = err,
					  .err_cap = cap },
		       fmt, ap);
	va_end(ap);
	t4t_chomp(out);
	t4t_chomp(err);
	return rc;
}

#endif
