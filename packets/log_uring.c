/* log_uring.c - the log writer's io_uring backend (see log_io.h).
 *
 * Each chunk is one IORING_OP_WRITE at an explicit file offset, so chunks
 * in flight never depend on a shared file position and the writer thread
 * never blocks in write(2) while the disk is busy: it only blocks when all
 * its compressed buffers are in flight. Completions are reaped without a
 * syscall (peek) on the normal path. fsync is an IORING_OP_FSYNC
 * (datasync) that the caller waits for: it runs once a second at most, so
 * keeping it synchronous keeps the bookkeeping simple.
 *
 * An output that cannot seek (a pipe) is written at its position (offset
 * -1): the log writer keeps one request in flight there, and a short write
 * is resubmitted before the request completes, so bytes never interleave.
 *
 * Trade-off: buffered writes to most filesystems complete inline at
 * submit, so io_uring mostly saves the writer nothing but the write(2)
 * wait on a slow disk; that is exactly the case that matters here.
 */
#include "log_io.h"

#include "util/util.h"

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

struct uring_be {
	struct io_uring ring;
	int fd;
	bool stream;
	unsigned writes;     /* write requests in flight */
	bool fsync_pending;
	int fsync_res;
	t4_wio_done_fn done;
	void *ud;
};

static struct io_uring_sqe *uring_sqe(struct uring_be *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

	if (!sqe) { /* full submission queue: flush it and try again */
		io_uring_submit(&u->ring);
		sqe = io_uring_get_sqe(&u->ring);
	}
	return sqe;
}

static int uring_submit(struct uring_be *u)
{
	for (;;) {
		int ret = io_uring_submit(&u->ring);

		if (ret >= 0)
			return 0;
		if (ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			return ret;
	}
}

/* Marks a queued entry neutralised after a failed submit: its completion
 * is ignored. Never written. */
static struct t4_wreq uring_defused;

/* Queue the rest of req (or an fsync when req is NULL). */
static int uring_queue(struct uring_be *u, struct t4_wreq *req)
{
	struct io_uring_sqe *sqe = uring_sqe(u);
	int err;

	if (!sqe)
		return -EBUSY;
	if (req)
		io_uring_prep_write(sqe, u->fd, req->buf + req->done,
				    (unsigned)(req->len - req->done),
				    u->stream ? (uint64_t)-1 : req->off + req->done);
	else
		io_uring_prep_fsync(sqe, u->fd, IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_data(sqe, req);
	err = uring_submit(u);
	if (err) {
		/* The entry stays queued and a later submit would send it,
		 * writing a buffer the caller reuses: make it a no-op. */
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data(sqe, &uring_defused);
	}
	return err;
}

/* One completion: finish, resubmit the rest, or retry. Returns 1 when a
 * write request finished (successfully or not). */
static int uring_complete(struct uring_be *u, struct t4_wreq *req, int res)
{
	int err;

	if (req == &uring_defused)
		return 0;

	if (!req) {
		if (res == -EINTR || res == -EAGAIN) {
			if (uring_queue(u, NULL) == 0)
				return 0;
		}
		u->fsync_pending = false;
		u->fsync_res = res < 0 ? res : 0;
		return 0;
	}
	if (res > 0)
		req->done += (size_t)res;
	if (res == 0)
		res = -EIO; /* no progress on a non-empty write */
	if (res < 0 && res != -EINTR && res != -EAGAIN) {
		err = res;
	} else if (req->done == req->len) {
		err = 0;
	} else {
		err = uring_queue(u, req);
		if (err == 0)
			return 0;
	}
	u->writes--;
	u->done(u->ud, req, err);
	return 1;
}

/* Handle every completion ready now, after waiting for one if wait. */
static int uring_drain(struct uring_be *u, bool wait)
{
	struct io_uring_cqe *cqe;
	int n = 0, ret;

	if (wait) {
		do
			ret = io_uring_wait_cqe(&u->ring, &cqe);
		while (ret == -EINTR);
		if (ret < 0)
			return ret;
	}
	while (io_uring_peek_cqe(&u->ring, &cqe) == 0) {
		struct t4_wreq *req = io_uring_cqe_get_data(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(&u->ring, cqe);
		n += uring_complete(u, req, res);
	}
	return n;
}

static int uring_write(void *be, struct t4_wreq *req)
{
	struct uring_be *u = be;
	int err;

	req->done = 0;
	err = uring_queue(u, req);
	if (err == 0)
		u->writes++;
	return err;
}

static int uring_reap(void *be, bool wait)
{
	struct uring_be *u = be;
	int n = 0, ret;

	do {
		ret = uring_drain(u, wait && u->writes > 0);
		if (ret < 0)
			return ret;
		n += ret;
	} while (wait && n == 0 && u->writes > 0);
	return n;
}

static int uring_fsync(void *be)
{
	struct uring_be *u = be;
	int err = uring_queue(u, NULL);

	if (err)
		return err;
	u->fsync_pending = true;
	while (u->fsync_pending) {
		err = uring_drain(u, true);
		if (err < 0)
			return err;
	}
	return u->fsync_res;
}

static void uring_close(void *be)
{
	struct uring_be *u = be;

	io_uring_queue_exit(&u->ring);
	free(u);
}

int pkt_wio_uring_open(struct t4_wio *w, int fd, unsigned depth, bool stream,
		      t4_wio_done_fn done, void *ud)
{
	static const struct t4_wio_ops ops = {
		.name = "io_uring",
		.write = uring_write,
		.reap = uring_reap,
		.fsync = uring_fsync,
		.close = uring_close,
	};
	struct uring_be *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return t4_err(ENOMEM, "io_uring backend: out of memory");
	err = io_uring_queue_init(depth + 2, &u->ring, 0);
	if (err < 0) {
		free(u);
		return t4_err(err, "io_uring_queue_init: %s", strerror(-err));
	}
	u->fd = fd;
	u->stream = stream;
	u->done = done;
	u->ud = ud;
	w->ops = ops;
	w->be = u;
	return 0;
}
