/* log_pwrite.c - the log writer's plain pwrite(2) backend (see log_io.h):
 * the fallback where io_uring is unavailable (disabled by sysctl, old
 * kernel, seccomp) and the reference the io_uring backend is compared
 * with. Every write completes before write() returns, so the writer
 * thread blocks on a slow disk; producers still never do. An output that
 * cannot seek (a pipe) gets write(2) at its position instead of pwrite.
 */
#include "log_io.h"

#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

struct pwrite_be {
	int fd;
	bool stream;
	t4_wio_done_fn done;
	void *ud;
};

static int pwrite_all(const struct pwrite_be *p, struct t4_wreq *req)
{
	for (req->done = 0; req->done < req->len;) {
		const uint8_t *b = req->buf + req->done;
		size_t left = req->len - req->done;
		ssize_t n = p->stream ? write(p->fd, b, left)
				      : pwrite(p->fd, b, left, (off_t)(req->off + req->done));

		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		req->done += (size_t)n;
	}
	return 0;
}

static int pw_write(void *be, struct t4_wreq *req)
{
	struct pwrite_be *p = be;

	p->done(p->ud, req, pwrite_all(p, req));
	return 0;
}

static int pw_reap(void *be, bool wait)
{
	(void)be;
	(void)wait;
	return 0;
}

static int pw_fsync(void *be)
{
	struct pwrite_be *p = be;

	while (fdatasync(p->fd) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

static void pw_close(void *be)
{
	free(be);
}

int pkt_wio_pwrite_open(struct t4_wio *w, int fd, bool stream, t4_wio_done_fn done,
		       void *ud)
{
	static const struct t4_wio_ops ops = {
		.name = "pwrite",
		.write = pw_write,
		.reap = pw_reap,
		.fsync = pw_fsync,
		.close = pw_close,
	};
	struct pwrite_be *p = calloc(1, sizeof(*p));

	if (!p)
		return t4_err(ENOMEM, "pwrite backend: out of memory");
	p->fd = fd;
	p->stream = stream;
	p->done = done;
	p->ud = ud;
	w->ops = ops;
	w->be = p;
	return 0;
}
