/* ring.h - internal to the log writer (ring.c and log.c only): the
 * single-producer single-consumer byte ring between a producer thread and
 * the writer thread.
 *
 * Layout: a power-of-two byte array; head and tail are free-running byte
 * counts (never wrapped), so used = head - tail. A record is
 * [u32 length][the first `length` bytes of a struct t4_packet], padded to 8
 * bytes. When a record does not fit before the end of the array, the
 * producer writes the wrap marker T4_RING_WRAP as the length and continues
 * at offset 0. Producer-owned, consumer-owned and read-only fields live on
 * separate cache lines.
 */
#ifndef T4_RING_H
#define T4_RING_H

#include "packets.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define T4_RING_WRAP 0xffffffffu
#define T4_RING_ALIGN 8u
#define T4_CACHELINE 64

struct t4_ring {
	/* read-only after creation */
	_Alignas(T4_CACHELINE) uint8_t *buf;
	uint64_t mask;            /* capacity - 1 */
	int flags;                /* T4_RING_NONBLOCK or T4_RING_WAIT */
	_Atomic uint32_t *wake;   /* writer's sleep word (futex), see log.c */
	/* producer side */
	_Alignas(T4_CACHELINE) _Atomic uint64_t head;
	uint64_t tail_cache;      /* producer's last view of tail */
	_Atomic uint64_t dropped;
	_Atomic uint32_t busy;    /* 1 while inside t4_ring_put */
	/* consumer side */
	_Alignas(T4_CACHELINE) _Atomic uint64_t tail;
	/* written once by the closing thread */
	_Alignas(T4_CACHELINE) _Atomic uint32_t closed;
};

/* Capacity of the smallest ring: any packet fits even after a wrap. */
size_t pkt_ring_min_bytes(void);

/* Create a ring of at least `bytes` (rounded up to a power of two, at
 * least pkt_ring_min_bytes()). wake: the writer's sleep word. */
int pkt_ring_new(struct t4_ring **out, size_t bytes, int flags,
		_Atomic uint32_t *wake);
void pkt_ring_free(struct t4_ring *r); /* accepts NULL */

/* Consumer: the next record at or after *pos (a ring position between
 * tail and `head`, a snapshot of r->head), skipping a wrap marker.
 * Returns its length and sets *data, advancing *pos past it; 0 when pos
 * reached head. The bytes stay valid until pkt_ring_release(). */
uint32_t pkt_ring_peek(struct t4_ring *r, uint64_t *pos, uint64_t head,
		      const uint8_t **data);
/* Consumer: give the bytes up to pos back to the producer. */
void pkt_ring_release(struct t4_ring *r, uint64_t pos);
/* Consumer: the producer's published head (acquire). */
uint64_t pkt_ring_head(struct t4_ring *r);
bool pkt_ring_empty(struct t4_ring *r);

/* Closing thread: make every later put fail with -EPIPE, then wait until
 * a put in progress (if any) has finished. */
void pkt_ring_shut(struct t4_ring *r);

/* The writer's sleep: futex wait on *wake while it holds 1, at most
 * timeout_ns. Producers (and the closing thread) wake it with
 * pkt_ring_wake(). */
void pkt_ring_sleep(_Atomic uint32_t *wake, uint64_t timeout_ns);
void pkt_ring_wake(_Atomic uint32_t *wake);

#endif
