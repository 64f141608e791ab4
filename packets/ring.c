/* ring.c - the lock-free single-producer single-consumer byte rings that
 * carry packets from producer threads to the log writer (layout: ring.h).
 *
 * Trade-offs:
 * - A put is a bounds check, a memcpy of t4_packet_size() bytes and one
 *   release store: no allocation, no lock, no syscall on the normal path.
 *   A producer wakes a sleeping writer (futex) only when its head crosses a
 *   half-ring boundary, so a slow trickle of packets costs no wake-ups
 *   (the writer polls on its own at least every 50 ms: log.c's
 *   LOG_IDLE_MAX_NS), yet a ring never gets past
 *   half full while the writer sleeps.
 * - Each put marks the ring busy with a sequentially consistent store, so
 *   that t4_log_close() can shut the ring and know that no put is still
 *   copying: drops stay exact even when producers race with close. That
 *   costs one locked instruction per put (about 10 ns).
 * - A record that does not fit before the end of the array wastes the rest
 *   of the array (wrap marker): simpler and faster than splitting records.
 *   The ring is at least twice the largest record so any record fits once
 *   the writer has caught up.
 */
#include "ring.h"

#include "util/util.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_MAX_BYTES (1ull << 34)
#define WAIT_YIELDS 16      /* T4_RING_WAIT: yields before sleeping */
#define WAIT_SLEEP_NS 50000 /* then sleep this long between checks */

static uint64_t rec_bytes(size_t n)
{
	return (4 + n + T4_RING_ALIGN - 1) & ~(uint64_t)(T4_RING_ALIGN - 1);
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t c = 1;

	while (c < v)
		c <<= 1;
	return c;
}

size_t t4_ring_record_bytes(const struct t4_packet *p)
{
	return rec_bytes(t4_packet_size(p));
}

size_t pkt_ring_min_bytes(void)
{
	return pow2_at_least(2 * rec_bytes(sizeof(struct t4_packet)));
}

int pkt_ring_new(struct t4_ring **out, size_t bytes, int flags,
		_Atomic uint32_t *wake)
{
	struct t4_ring *r;
	uint64_t cap;

	*out = NULL;
	if (flags != T4_RING_NONBLOCK && flags != T4_RING_WAIT)
		return t4_err(EINVAL, "ring flags %d: expected T4_RING_NONBLOCK or T4_RING_WAIT",
			      flags);
	if (bytes > RING_MAX_BYTES)
		return t4_err(EINVAL, "ring of %zu bytes: too large", bytes);
	cap = pow2_at_least(bytes < pkt_ring_min_bytes() ? pkt_ring_min_bytes() : bytes);
	r = aligned_alloc(T4_CACHELINE, sizeof(*r));
	if (!r)
		return t4_err(ENOMEM, "ring: out of memory");
	memset(r, 0, sizeof(*r));
	r->buf = aligned_alloc(T4_CACHELINE, cap);
	if (!r->buf) {
		free(r);
		return t4_err(ENOMEM, "ring of %llu bytes: out of memory",
			      (unsigned long long)cap);
	}
	r->mask = cap - 1;
	r->flags = flags;
	r->wake = wake;
	*out = r;
	return 0;
}

void pkt_ring_free(struct t4_ring *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

void pkt_ring_sleep(_Atomic uint32_t *wake, uint64_t timeout_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000u),
		.tv_nsec = (long)(timeout_ns % 1000000000u),
	};

	futex(wake, FUTEX_WAIT_PRIVATE, 1, &ts);
}

void pkt_ring_wake(_Atomic uint32_t *wake)
{
	/* pairs with the fence in the writer between setting *wake and
	 * looking at the rings a last time: one of the two sees the other */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(wake, memory_order_relaxed) &&
	    atomic_exchange(wake, 0))
		futex(wake, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* Wait (T4_RING_WAIT) or give up (T4_RING_NONBLOCK) until the consumer's
 * tail reaches want_tail. 0, -ENOBUFS (dropped, counted), -EAGAIN (full,
 * not counted: the caller keeps the packet) or -EPIPE. */
static int ring_wait_space(struct t4_ring *r, uint64_t want_tail, bool keep)
{
	struct timespec nap = { 0, WAIT_SLEEP_NS };

	for (unsigned i = 0;; i++) {
		r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (r->tail_cache >= want_tail)
			return 0;
		if (keep && r->flags == T4_RING_NONBLOCK)
			return t4_err(EAGAIN, "log ring full: packet kept for later");
		if (r->flags == T4_RING_NONBLOCK) {
			atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
			return t4_err(ENOBUFS, "log ring full: packet dropped (counted)");
		}
		if (atomic_load(&r->closed))
			return t4_err(EPIPE, "log closed: packet not queued");
		pkt_ring_wake(r->wake);
		if (i < WAIT_YIELDS)
			sched_yield();
		else
			nanosleep(&nap, NULL);
	}
}

static int ring_put(struct t4_ring *r, const struct t4_packet *p, bool keep)
{
	size_t n = p ? t4_packet_size(p) : 0;
	uint64_t cap = r->mask + 1, head, off, rec, need, room;
	uint32_t len = (uint32_t)n;
	uint8_t *at;
	int err = 0;

	if (n < sizeof(p->type) || n > sizeof(*p))
		return t4_err(EINVAL, "packet of type %u: malformed, not queued",
			      p ? p->type : 0);
	rec = rec_bytes(n);
	atomic_store(&r->busy, 1); /* seq_cst: pairs with pkt_ring_shut */
	if (atomic_load(&r->closed)) {
		err = t4_err(EPIPE, "log closed: packet not queued");
		goto out;
	}
	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	off = head & r->mask;
	room = cap - off;
	need = rec <= room ? rec : room + rec;
	if (head + need - r->tail_cache > cap) {
		err = ring_wait_space(r, head + need - cap, keep);
		if (err)
			goto out;
	}
	at = r->buf + off;
	if (rec > room) {
		uint32_t wrap = T4_RING_WRAP;

		memcpy(at, &wrap, sizeof(wrap));
		at = r->buf;
	}
	memcpy(at, &len, sizeof(len));
	memcpy(at + sizeof(len), p, n);
	atomic_store_explicit(&r->head, head + need, memory_order_release);
	if (((head ^ (head + need)) & (cap >> 1)) || need > cap / 2)
		pkt_ring_wake(r->wake);
out:
	atomic_store_explicit(&r->busy, 0, memory_order_release);
	return err;
}

int t4_ring_put(struct t4_ring *r, const struct t4_packet *p)
{
	return ring_put(r, p, false);
}

int t4_ring_try_put(struct t4_ring *r, const struct t4_packet *p)
{
	return ring_put(r, p, true);
}

uint64_t t4_ring_dropped(const struct t4_ring *r)
{
	return atomic_load_explicit(&r->dropped, memory_order_relaxed);
}

uint32_t pkt_ring_peek(struct t4_ring *r, uint64_t *pos, uint64_t head,
		      const uint8_t **data)
{
	while (*pos < head) {
		uint64_t off = *pos & r->mask;
		uint32_t len;

		memcpy(&len, r->buf + off, sizeof(len));
		if (len == T4_RING_WRAP) {
			*pos += r->mask + 1 - off;
			continue;
		}
		*data = r->buf + off + sizeof(len);
		*pos += rec_bytes(len);
		return len;
	}
	return 0;
}

void pkt_ring_release(struct t4_ring *r, uint64_t pos)
{
	atomic_store_explicit(&r->tail, pos, memory_order_release);
}

uint64_t pkt_ring_head(struct t4_ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_acquire);
}

bool pkt_ring_empty(struct t4_ring *r)
{
	return pkt_ring_head(r) == atomic_load_explicit(&r->tail, memory_order_relaxed);
}

void pkt_ring_shut(struct t4_ring *r)
{
	atomic_store(&r->closed, 1); /* seq_cst: pairs with the busy store */
	while (atomic_load(&r->busy))
		sched_yield();
}
