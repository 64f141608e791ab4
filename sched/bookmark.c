/* bookmark.c - bookmark commands and their packets, for both trigger
 * paths: every command lands in the log, with the reference time at which
 * it was set and the first trigger that carries it.
 *
 * A command (sched_bookmarks_set, any thread: --bookmark, the control socket,
 * libt410trace) gives the name its ID (one per distinct name, in an
 * append-only table), takes the reference clock and appends (ID, set_ns)
 * to a bounded queue, all under one mutex, so set_ns grows along the
 * queue and an entry's index is its command count. Scheduler 0, on each of
 * its triggers (sched_bookmarks_on_trigger), is told how many commands that
 * trigger saw: on the user path, the queue's count read before the
 * trigger's clocks (so every such command was set before its ref_ns); on
 * the BPF path, the count a command stored into the program's global data
 * (the publish hook, called before set_ns is read) and every record
 * carries. The commands seen get the trigger as their first_trigger (exact
 * on both paths: it is the first reference packet carrying the command's
 * bookmark or a later one), the last of them is the bookmark the trigger
 * carries, and one bookmark packet per command goes out, so 200 bookmarks
 * between two triggers are 200 packets and a phase shorter than a period
 * keeps its exact boundaries. Scheduler 0 (its monitor thread, or the
 * drain thread) takes no lock: producers publish the queue's head with a
 * release store, the scheduler its tail.
 *
 * A command timed elsewhere (sched_bookmarks_set_at: libt410trace's probe,
 * stamped in the kernel when the program called it, queued once the
 * activity drain thread has it, tens of microseconds later) keeps its own
 * set_ns (never before the last one queued: the packets stay in set_ns
 * order). Such a command may reach the queue after a trigger that fired
 * after its set_ns has been counted; the trigger that takes it may then
 * look back: each trigger says when it read the queue (at_ns), and the
 * timed commands queued just after the ones it saw whose set_ns is before
 * that instant are its too (a trigger processed after the command arrived
 * gets it exactly: always on the BPF path, whose triggers are processed
 * 50 ms late; on the user path when the command beat the next trigger).
 * Otherwise it goes with the next trigger, and the reference packets stay
 * consistent with the bookmark packets either way.
 *
 * Nothing vanishes: a packet that does not fit into the ring stays queued
 * (with its first_trigger; not counted as a drop) and goes out on a later
 * trigger; a command that finds the queue full (T4_BOOKMARK_QUEUE commands
 * waiting for a trigger, or a stuck ring) or the table of names full fails
 * with a message and is counted (sched_bookmarks_refused: the status packet's
 * bookmarks_refused); after the final trigger (sched_bookmarks_close) what is
 * still queued is written with first_trigger = the last trigger + 1 and
 * later commands are refused.
 *
 * Reservations: libt410trace's probe bookmarks are taken in the kernel,
 * which answers the app at once and cannot wait for this queue. So the
 * activity drain reserves room here first (sched_bookmarks_reserve: a queue
 * slot and a name slot each) and lends it to the kernel as credits; a
 * probe bookmark the kernel took goes into a reserved slot
 * (sched_bookmarks_set_reserved), which cannot be refused. Other commands
 * find the reserved room taken.
 */
#include "sched_internal.h"
#include "control/control.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#define INDEX_SLOTS (2 * T4_BOOKMARK_NAMES) /* open addressing, at most half full */

_Static_assert(T4_CONTROL_NAME_MAX == T4_NAME_MAX, "one bookmark name length");
_Static_assert((T4_BOOKMARK_QUEUE & (T4_BOOKMARK_QUEUE - 1)) == 0, "a power of two");

struct bm_entry {
	uint32_t id;
	bool timed;             /* set_ns came with the command */
	uint64_t set_ns;
	uint64_t first_trigger; /* set by scheduler 0 */
};

struct t4_bookmarks {
	pthread_mutex_t lock;     /* commands and status */
	uint32_t count;           /* names in the table */
	char names[T4_BOOKMARK_NAMES][T4_NAME_MAX]; /* (calloc: pages touched as used) */
	uint32_t index[INDEX_SLOTS]; /* name hash -> ID (0: empty) */
	_Atomic uint32_t current; /* the last bookmark set (0 = none) */
	bool closed;              /* the final trigger has fired */
	clockid_t clock;          /* of set_ns */
	uint64_t last_set_ns;     /* of the last command queued */
	uint32_t reserved;        /* queue (and name) slots reserved */
	_Atomic uint64_t refused; /* commands refused for lack of room */
	t4_bookmark_publish_fn publish;
	void *ud;
	struct bm_entry q[T4_BOOKMARK_QUEUE];
	_Atomic uint64_t head;    /* written by commands (under lock) */
	_Atomic uint64_t tail;    /* written by scheduler 0 */
	/* scheduler 0 only */
	uint64_t assigned;        /* entries before it have first_trigger */
	uint32_t carried;         /* the ID its triggers carry */
	struct t4_packet pkt;
};

int sched_bookmarks_new(struct t4_bookmarks **out, const struct t4_bookmarks_opts *o)
{
	struct t4_bookmarks *b = calloc(1, sizeof(*b));

	if (!b)
		return t4_err(ENOMEM, "out of memory");
	pthread_mutex_init(&b->lock, NULL);
	b->clock = o->clock;
	b->publish = o->publish;
	b->ud = o->ud;
	*out = b;
	return 0;
}

void sched_bookmarks_free(struct t4_bookmarks *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	free(b);
}

/* The index slot of name: where its ID is, or the empty one it gets. */
static uint32_t *slot_of(struct t4_bookmarks *b, const char *name)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (uint64_t i = t4_mix64(h) % INDEX_SLOTS;; i = (i + 1) % INDEX_SLOTS) {
		uint32_t id = b->index[i];
		if (!id || !strcmp(b->names[id - 1], name))
			return &b->index[i];
	}
}

/* With the lock held: the ID of name, adding it to the table (a command in
 * a reserved slot may take the name slot reserved with it). */
static int id_of(struct t4_bookmarks *b, const char *name, bool reserved, uint32_t *id)
{
	uint32_t *slot = slot_of(b, name);

	if (*slot) {
		*id = *slot;
		return 0;
	}
	if (b->count + b->reserved - reserved >= T4_BOOKMARK_NAMES) {
		atomic_fetch_add(&b->refused, 1);
		return t4_err(ENOSPC, "bookmark '%s': more than %d distinct bookmarks", name,
			      T4_BOOKMARK_NAMES);
	}
	snprintf(b->names[b->count], T4_NAME_MAX, "%s", name);
	*id = *slot = ++b->count;
	return 0;
}

/* With the lock held: queue slots neither taken nor reserved. */
static uint64_t room(const struct t4_bookmarks *b)
{
	uint64_t used = atomic_load_explicit(&b->head, memory_order_relaxed) -
			atomic_load_explicit(&b->tail, memory_order_acquire) + b->reserved;

	return used < T4_BOOKMARK_QUEUE ? T4_BOOKMARK_QUEUE - used : 0;
}

/* With the lock held: append one command to the queue (into a slot
 * reserved for it, or not); set_ns 0: now. */
static int enqueue(struct t4_bookmarks *b, const char *name, uint64_t set_ns, bool reserved)
{
	uint64_t h = atomic_load_explicit(&b->head, memory_order_relaxed);
	uint32_t id = 0;
	int rc;

	if (b->closed)
		return t4_err(ESHUTDOWN, "bookmark '%s': the recording has stopped", name);
	if (!reserved && !room(b)) {
		atomic_fetch_add(&b->refused, 1);
		return t4_err(EBUSY, "bookmark '%s': %d bookmarks already wait for the next "
			      "trigger; try again after it", name, T4_BOOKMARK_QUEUE);
	}
	if ((rc = id_of(b, name, reserved, &id)) < 0)
		return rc;
	if (reserved)
		b->reserved--;
	/* Nothing fails from here: a trigger path told of command h + 1
	 * may wait for its entry (sched_bookmarks_on_trigger). */
	if (b->publish)
		b->publish(b->ud, id, h + 1);
	if (set_ns && set_ns < b->last_set_ns)
		set_ns = b->last_set_ns; /* the packets stay in set_ns order */
	b->q[h % T4_BOOKMARK_QUEUE] = (struct bm_entry){
		.id = id,
		.timed = set_ns != 0,
		.set_ns = set_ns ? set_ns : t4_clock_ns(b->clock),
	};
	b->last_set_ns = b->q[h % T4_BOOKMARK_QUEUE].set_ns;
	atomic_store_explicit(&b->head, h + 1, memory_order_release);
	atomic_store_explicit(&b->current, id, memory_order_release);
	return 0;
}

int t4_bookmark_check(const char *name)
{
	return t4_control_name_ok(name) ? 0 : t4_control_name_error(name);
}

static int set_at(struct t4_bookmarks *b, const char *name, uint64_t set_ns, bool reserved)
{
	int rc = t4_bookmark_check(name);

	if (rc < 0)
		return rc;
	pthread_mutex_lock(&b->lock);
	rc = enqueue(b, name, set_ns, reserved && b->reserved > 0);
	pthread_mutex_unlock(&b->lock);
	return rc;
}

int sched_bookmarks_set_at(struct t4_bookmarks *b, const char *name, uint64_t set_ns)
{
	return set_at(b, name, set_ns, false);
}

int sched_bookmarks_set_reserved(struct t4_bookmarks *b, const char *name, uint64_t set_ns)
{
	return set_at(b, name, set_ns, true);
}

uint32_t sched_bookmarks_reserve(struct t4_bookmarks *b, uint32_t n)
{
	uint64_t names;

	pthread_mutex_lock(&b->lock);
	names = T4_BOOKMARK_NAMES - b->count - b->reserved;
	if (b->closed)
		n = 0;
	if (n > room(b))
		n = (uint32_t)room(b);
	if (n > names)
		n = (uint32_t)names;
	b->reserved += n;
	pthread_mutex_unlock(&b->lock);
	return n;
}

void sched_bookmarks_unreserve(struct t4_bookmarks *b, uint32_t n)
{
	pthread_mutex_lock(&b->lock);
	b->reserved -= n < b->reserved ? n : b->reserved;
	pthread_mutex_unlock(&b->lock);
}

uint64_t sched_bookmarks_refused(const struct t4_bookmarks *b)
{
	return atomic_load(&b->refused);
}

int sched_bookmarks_set(struct t4_bookmarks *b, const char *name)
{
	return sched_bookmarks_set_at(b, name, 0);
}

/* At the end no later trigger comes: wait (1 s at most) for the writer to
 * make room, then put it the counted way (a drop, if it must be one). */
static int put_finally(struct t4_ring *ring, const struct t4_packet *p)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 1000; i++) {
		if (t4_ring_try_put(ring, p) == 0)
			return 0;
		nanosleep(&ms, NULL);
	}
	t4_ring_put(ring, p);
	return 0;
}

/* Scheduler 0: write the packets of the entries with a first_trigger,
 * oldest first, while the ring takes them (all of them when final). */
static void send_assigned(struct t4_bookmarks *b, struct t4_ring *ring, bool final)
{
	uint64_t t = atomic_load_explicit(&b->tail, memory_order_relaxed);

	for (; t < b->assigned; t++) {
		const struct bm_entry *e = &b->q[t % T4_BOOKMARK_QUEUE];
		struct t4_bookmark_pkt *p = &b->pkt.bookmark;

		b->pkt.type = T4_PKT_BOOKMARK;
		p->bookmark_id = e->id;
		p->first_trigger = e->first_trigger;
		p->set_ns = e->set_ns;
		/* the table only grows, and this entry's name is in it */
		memcpy(p->name, b->names[e->id - 1], T4_NAME_MAX);
		if ((final ? put_finally(ring, &b->pkt) : t4_ring_try_put(ring, &b->pkt)) < 0)
			break; /* full: the rest goes out at the next trigger */
	}
	atomic_store_explicit(&b->tail, t, memory_order_release);
}

uint64_t sched_bookmarks_seen(const struct t4_bookmarks *b)
{
	return atomic_load_explicit(&b->head, memory_order_acquire);
}

/* The queue's head once it holds `seen` commands: a BPF record may carry
 * the count of a command that is between its publish hook and its head
 * store (a few instructions under the lock, which cannot fail there). */
static uint64_t head_reaching(const struct t4_bookmarks *b, uint64_t seen)
{
	uint64_t h;

	while ((h = sched_bookmarks_seen(b)) < seen)
		sched_yield();
	return h;
}

/* Entries up to `upto` get trigger_id as their first trigger. */
static void assign(struct t4_bookmarks *b, uint64_t upto, uint64_t trigger_id)
{
	for (; b->assigned < upto; b->assigned++) {
		struct bm_entry *e = &b->q[b->assigned % T4_BOOKMARK_QUEUE];
		e->first_trigger = trigger_id;
		b->carried = e->id;
	}
}

/* How far the timed commands right after the `seen` ones, queued by now,
 * were set before the trigger read the queue (at_ns): they are its too. */
static uint64_t timed_before(const struct t4_bookmarks *b, uint64_t from, uint64_t head,
			     uint64_t at_ns)
{
	for (; from < head; from++) {
		const struct bm_entry *e = &b->q[from % T4_BOOKMARK_QUEUE];
		if (!e->timed || e->set_ns >= at_ns)
			break;
	}
	return from;
}

uint32_t sched_bookmarks_on_trigger(struct t4_bookmarks *b, uint64_t trigger_id,
				 const struct t4_trigger_bm *bm, struct t4_ring *ring)
{
	uint64_t head = head_reaching(b, bm->seen);

	assign(b, bm->seen, trigger_id);
	if (bm->at_ns)
		assign(b, timed_before(b, b->assigned, head, bm->at_ns), trigger_id);
	send_assigned(b, ring, false);
	return b->carried;
}

uint32_t sched_bookmarks_current(const struct t4_bookmarks *b)
{
	return atomic_load_explicit(&b->current, memory_order_acquire);
}

void sched_bookmarks_name(struct t4_bookmarks *b, uint32_t id, char *buf, size_t cap)
{
	pthread_mutex_lock(&b->lock);
	snprintf(buf, cap, "%s", id && id <= b->count ? b->names[id - 1] : "");
	pthread_mutex_unlock(&b->lock);
}

void sched_bookmarks_close(struct t4_bookmarks *b, uint64_t next_trigger, struct t4_ring *ring)
{
	pthread_mutex_lock(&b->lock);
	b->closed = true;
	pthread_mutex_unlock(&b->lock);
	/* Set after the final broadcast: no trigger carries them. */
	uint64_t h = atomic_load_explicit(&b->head, memory_order_acquire);
	for (; b->assigned < h; b->assigned++)
		b->q[b->assigned % T4_BOOKMARK_QUEUE].first_trigger = next_trigger;
	send_assigned(b, ring, true);
}
