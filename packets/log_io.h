/* log_io.h - internal to the log writer: its interchangeable write
 * backends (io_uring in log_uring.c, plain pwrite in log_pwrite.c) behind
 * one small function table, rio-style.
 *
 * Rules of use: t4_wio_*_open() fills a struct t4_wio; the writer then
 * calls write() for each chunk (one request per chunk, owned by the caller
 * until its completion), reap() to collect completions, fsync() and
 * finally close(). A backend finishes a request completely before calling
 * the completion function: short writes are resubmitted for the rest
 * (before anything else of that request's stream), -EAGAIN and -EINTR are
 * retried; any other error completes the request with that error.
 */
#ifndef T4_LOG_IO_H
#define T4_LOG_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct t4_wreq {
	const uint8_t *buf;
	size_t len;
	uint64_t off;  /* file offset of buf[0] */
	size_t done;   /* bytes written so far (backend's) */
};

/* Called once per request: err = 0 when all len bytes are written, else a
 * negative errno. May be called from inside write() or reap(). */
typedef void (*t4_wio_done_fn)(void *ud, struct t4_wreq *req, int err);

struct t4_wio_ops {
	const char *name;
	/* Start writing req. 0, or a negative errno when it could not even
	 * be started (the completion function is then not called). */
	int (*write)(void *be, struct t4_wreq *req);
	/* Collect finished requests, calling the completion function for
	 * each; with wait, block until at least one finished when any is
	 * pending. Returns the number finished or a negative errno. */
	int (*reap)(void *be, bool wait);
	/* Flush the data of every completed write to stable storage. */
	int (*fsync)(void *be);
	/* Free the backend (does not close the file). */
	void (*close)(void *be);
};

struct t4_wio {
	struct t4_wio_ops ops;
	void *be;
};

/* fd stays owned by the caller; depth: most requests in flight. stream:
 * fd cannot seek (pipe, FIFO, socket): requests ignore their offset and
 * go at the file's position, so the caller keeps one in flight. */
int pkt_wio_uring_open(struct t4_wio *w, int fd, unsigned depth, bool stream,
		      t4_wio_done_fn done, void *ud);
int pkt_wio_pwrite_open(struct t4_wio *w, int fd, bool stream, t4_wio_done_fn done,
		       void *ud);

#endif
