/* sched_internal.h - shared by the files of sched/ only.
 *
 *   sched.c    the scheduler object: monitors and schedulers, commands (each
 *              opens an epoch of the grid), status, lifecycle, and the
 *              reference packets;
 *   bookmark.c bookmark commands and their packets, for both paths: a
 *              bounded queue of commands (ID, set_ns) that scheduler 0's
 *              triggers take their first_trigger from;
 *   grid.c     the seqlock over the current epoch (the trigger arithmetic
 *              itself is bpf/trigger.h's, compiled into both paths);
 *   monitor.c  the user-space trigger path: one thread per CPU hosting
 *              counters, each sleeping on the absolute grid by itself; the
 *              return packets and sample stamps (skew, spread) of both paths;
 *   kpath.c    the in-kernel trigger path: BPF timers (bpf/), a drain
 *              thread turning their records into packets;
 *   activity.c CPU and GPU activity (bpf/ activity component): a drain thread
 *              writing its packets, libt410trace's probe bookmarks and
 *              triggers handed to the commands above;
 *
 * Wake-ups: a monitor thread sleeps in FUTEX_WAIT_BITSET on the command
 * word `cmd_seq` with the absolute CLOCK_MONOTONIC deadline of its next grid
 * point: the grid wakes it, a command (bumps the word, FUTEX_WAKE) wakes it
 * early. No thread wakes another per trigger.
 */
#ifndef T4_SCHED_INTERNAL_H
#define T4_SCHED_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/bpf.h"
#include "sched.h"
#include "util/util.h"

/* ---- bookmarks (bookmark.c) ------------------------------------------- */

struct t4_bookmarks;

/* What a trigger knew of the bookmark commands when it fired: how many it
 * saw, when it looked (reference clock; 0 = unknown), and the bookmark
 * current then (what schedulers other than 0 carry). */
struct t4_trigger_bm {
	uint64_t seen;
	uint64_t at_ns;
	uint32_t id;
};

/* How a trigger path that cannot read the queue itself learns of a
 * bookmark command: called with the commands' lock held, once the command
 * is sure to be queued, before its set_ns is read: the bookmark's ID and
 * the number of commands so far, this one included (the BPF path stores
 * both where its timers read them). */
typedef void (*t4_bookmark_publish_fn)(void *ud, uint32_t id, uint64_t count);

struct t4_bookmarks_opts {
	clockid_t clock;                /* of set_ns: the packets' reference clock */
	t4_bookmark_publish_fn publish; /* NULL: none (the user path) */
	void *ud;
};

int sched_bookmarks_new(struct t4_bookmarks **out, const struct t4_bookmarks_opts *o);
void sched_bookmarks_free(struct t4_bookmarks *b); /* accepts NULL */
/* A bookmark command (any thread): queued with its reference time; fails
 * (message set) for a bad name, a full queue, or after the end. */
int sched_bookmarks_set(struct t4_bookmarks *b, const char *name);
/* The same for a command set earlier, at set_ns (reference clock; never
 * before the last command's): a trigger that read the queue after set_ns
 * but before this call may still take it (bookmark.c). */
int sched_bookmarks_set_at(struct t4_bookmarks *b, const char *name, uint64_t set_ns);
/* Reserve up to n queue slots (each with a name slot) for commands timed
 * elsewhere that must not be refused once taken (the probe's, taken in the
 * kernel); returns how many. Other commands find that room taken. */
uint32_t sched_bookmarks_reserve(struct t4_bookmarks *b, uint32_t n);
/* Give back n reserved slots that will not be used. */
void sched_bookmarks_unreserve(struct t4_bookmarks *b, uint32_t n);
/* sched_bookmarks_set_at into a reserved slot: never refused for room (only a
 * bad name, or after the end). */
int sched_bookmarks_set_reserved(struct t4_bookmarks *b, const char *name, uint64_t set_ns);
/* Commands refused so far because the queue or the table of names was full. */
uint64_t sched_bookmarks_refused(const struct t4_bookmarks *b);
/* How many commands are queued so far: a user-path trigger reads it
 * before its clocks (so that every command it saw was set before its
 * ref_ns) and hands it to sched_bookmarks_on_trigger as `seen`. */
uint64_t sched_bookmarks_seen(const struct t4_bookmarks *b);
/* Scheduler 0's trigger trigger_id saw the first bm->seen commands (user
 * path: sched_bookmarks_seen; BPF path: the count in its record) at bm->at_ns:
 * those without a first trigger get this one (and the timed commands
 * queued right after them that were set before at_ns), and every packet
 * with a first trigger goes into ring (those that do not fit wait for the
 * next trigger). Returns the bookmark ID this trigger carries. */
uint32_t sched_bookmarks_on_trigger(struct t4_bookmarks *b, uint64_t trigger_id,
				 const struct t4_trigger_bm *bm, struct t4_ring *ring);
/* The last bookmark set (0 = none): what other schedulers carry. */
uint32_t sched_bookmarks_current(const struct t4_bookmarks *b);
void sched_bookmarks_name(struct t4_bookmarks *b, uint32_t id, char *buf, size_t cap);
/* After the final trigger, once scheduler 0 has stopped (its ring is then
 * the caller's): write what is still queued with first_trigger
 * next_trigger (none carries it) and refuse later commands. */
void sched_bookmarks_close(struct t4_bookmarks *b, uint64_t next_trigger, struct t4_ring *ring);

/* When each of a monitor's recent triggers was sampled (the middle of its
 * first domain's read window, reference clock), so that the spread between
 * CPUs can be taken one trigger later. Written by the monitor's thread (or
 * the drain thread), read by scheduler 0's. */
#define T4_STAMPS 64
struct t4_stamps {
	_Atomic uint64_t id[T4_STAMPS]; /* trigger ID + 1; 0 = empty */
	_Atomic uint64_t ns[T4_STAMPS];
};

struct t4_monitor;
void sched_stamps_put(struct t4_stamps *s, uint64_t id, uint64_t ns);
/* Add the spread (latest - earliest stamp) of trigger id over the n
 * monitors ms to h, when every one of them (but a source's) has its
 * stamp. */
void sched_spread_note(struct t4_hist *h, struct t4_monitor *ms, size_t n, uint64_t id);

/* ---- futex ------------------------------------------------------------- */

/* Wait while *word == expected, until woken or the absolute
 * CLOCK_MONOTONIC deadline (0 = none). */
void sched_futex_wait(_Atomic uint32_t *word, uint32_t expected,
		   uint64_t deadline_mono_ns);
void sched_futex_wake(_Atomic uint32_t *word, int n);

/* ---- the grid (grid.c) ------------------------------------------------- */

/* Open an epoch (a command) now, one writer at a time: e gives mode and
 * flags; its gen, id0 and t_c are filled in. The first epoch is the grid's
 * origin: t0 = t_c, end = t_c + duration (0 = none). Returns -ESHUTDOWN
 * once the current epoch's end has passed (the final trigger is due). */
int sched_grid_publish(struct t4_grid *g, struct t4_epoch *e, uint64_t duration_ns);
/* A consistent copy of the current epoch, and CLOCK_MONOTONIC read inside
 * the same seqlock window; false while a command is being written. */
bool sched_grid_read(const struct t4_grid *g, struct t4_epoch *e, uint64_t *now);

/* ---- drains -------------------------------------------------------------- */

/* How often the drain threads take what the kernel wrote (kpath.c: the
 * trigger records; activity.c: slices and probe bookmarks). A probe bookmark
 * may wait for both before its packet is written: together they stay well
 * inside the late-bookmark bound readers wait for (FORMAT.md 6.1); at
 * periods where the readers' wait is shorter (t4_bookmark_must_hurry) a
 * probe bookmark wakes the activity drain at once. */
#define SCHED_DRAIN_NS 50000000ull
_Static_assert(2 * SCHED_DRAIN_NS <= T4_BOOKMARK_LATE_NS / 2,
	       "two drains fit in half the late-bookmark bound");

/* ---- monitors and schedulers ------------------------------------------- */

struct central;

/* How long a source's monitor sleeps while its source is idle. */
#define T4_SOURCE_REST_NS 100000000ull

/* One monitor: the domains read on one CPU. Its thread (user path) also
 * runs the scheduler of that CPU, when there is one. */
struct t4_monitor {
	struct t4_sched *s;
	int cpu;                  /* -1: any CPU */
	bool sourced;             /* its domain has a source of its own (DRM):
				   * a thread on the grid on either path, at
				   * normal priority, no sample stamps */
	struct t4_domain **domains;
	size_t n_domains;
	struct t4_ring *ring;     /* to the log writer */
	struct central *central;  /* the scheduler on this CPU, or NULL */
	pthread_t thread;
	bool thread_started;

	bool resting;             /* a source's, resting: it has nothing */
	uint64_t last;            /* last trigger ID answered + 1 (its thread) */
	_Atomic uint64_t done;    /* the same, for commands that wait on it */
	_Atomic uint64_t answered;
	_Atomic uint64_t unanswered; /* IDs it did not answer (late, or a lost
				      * record); overruns when it is a
				      * scheduler's */
	_Atomic uint64_t read_failures;
	/* its first read failure (set by its thread before read_failures
	 * leaves 0, with a release: a reader that sees failures sees it) */
	int first_failure_err;
	uint64_t first_failure_trigger;
	const char *first_failure_domain;
	_Atomic uint64_t values;  /* counts put into return packets */
	_Atomic uint64_t off_cpu; /* answers read on another CPU than cpu */
	struct t4_hist window;    /* read window per domain, ns */
	struct t4_hist skew;      /* trigger point to mid-read per domain, ns */
	struct t4_stamps stamps;
	struct t4_packet pkt;
};

/* A central scheduler: writes the reference packets of its triggers (and,
 * scheduler 0, the bookmark packets: bookmark.c). One per scheduler ID
 * that has domains, ascending: centrals[0], the recording's lowest
 * scheduler ID, is "scheduler 0" (docs/FORMAT.md 6.1). */
struct central {
	uint32_t id;
	int cpu;
	struct t4_sched *s;
	struct t4_monitor *mon;   /* the monitor of its CPU: the same thread */
	struct t4_ring *ring;
	_Atomic bool finished;    /* answered its final trigger */
	_Atomic uint64_t triggers;
	_Atomic uint64_t overruns;
	uint64_t next_id;         /* its last trigger ID + 1 (its thread) */
	struct t4_hist spread;    /* scheduler 0: max - min sample per trigger */
	struct t4_packet pkt;     /* the reference packet being formed */
};

struct t4_kpath;
struct sched_activity;

struct t4_sched {
	struct t4_sched_opts opts;
	struct central *centrals;
	size_t n_centrals;
	struct t4_monitor *monitors;
	size_t n_monitors;
	struct t4_bookmarks *bm;

	struct t4_grid user_grid;     /* the user path's grid */
	struct t4_grid *grid;         /* &user_grid, or the BPF program's */
	pthread_mutex_t cmd_lock;     /* one command at a time */
	_Atomic uint32_t cmd_seq;     /* futex word: bumped by every command */
	_Atomic bool periodic;
	_Atomic bool stopping;
	bool launched;                /* threads (or the drain) started */
	_Atomic bool started;         /* the grid is open: commands fire */
	bool joined;                  /* t4_sched_stop joined every thread */
	struct t4_kpath *k;           /* the in-kernel path; NULL: user path */
	struct sched_activity *ph;         /* CPU and GPU activity; NULL: none */
	char activity_note[300];        /* what of them is left out, or "" */
	char path_note[200];          /* why the user path (auto), or "" */
	bool fifo_notice_done;
};

/* The clocks of one reference packet. */
struct t4_ref_clocks {
	uint64_t ref, mono, real, local;
};

/* Scheduler c fires point p: its reference packet (overruns = the IDs it
 * missed before p), the bookmark packets (scheduler 0), the spread of the
 * previous trigger (scheduler 0). */
void sched_central_fire(struct central *c, const struct t4_point *p, uint64_t missed,
		     const struct t4_trigger_bm *bm, const struct t4_ref_clocks *clk);

/* ---- what every scheduler writes: live (sched.c) and virtual (virtual.c) -- */

/* The scheduler IDs that fire, ascending, into ids (room for ds->n):
 * one per ID that has domains (a socket without counters has none: no CPU
 * would fire it). ids[0], the recording's lowest, is "scheduler 0" of
 * docs/FORMAT.md 6.1: it writes the bookmark packets. Returns how many
 * (metadata.c, beside t4_sched_id_of). */
size_t sched_ids(const struct t4_domain_set *ds, bool per_socket, uint32_t *ids);

/* One trigger as its scheduler fires it. */
struct sched_fire {
	uint32_t sched_id;
	bool zero;                  /* scheduler 0: ids[0] of sched_ids */
	struct t4_point p;          /* its ID and reference flags */
	uint64_t missed;            /* IDs it missed before p: overruns */
	struct t4_trigger_bm bm;    /* what it knew of the bookmark commands */
	struct t4_ref_clocks clk;
};

/* Write trigger f into ring: scheduler 0's bookmark packets first (those
 * of the commands it saw: sched_bookmarks_on_trigger), then its reference
 * packet, formed in pkt. The one writer of both for the live and the
 * virtual scheduler. Returns t4_ring_put's result for the reference
 * packet (pkt->ref says what it carried). */
int sched_write_trigger(struct t4_bookmarks *b, const struct sched_fire *f,
			struct t4_ring *ring, struct t4_packet *pkt);

/* The clock of s's packets: CLOCK_MONOTONIC in the kernel's path,
 * CLOCK_MONOTONIC_RAW in user space's (t4_sched_now reads it). */
clockid_t sched_ref_clockid(const struct t4_sched *s);
/* The reference clock and CLOCK_MONOTONIC (*mono_ns) at one instant: the
 * midpoint of two reference reads around the MONOTONIC one. Of up to
 * SCHED_PAIR_TRIES tries it keeps the one whose reads are closest (it stops
 * at SCHED_PAIR_TIGHT_NS): a thread preempted between the reads would pair
 * the clocks off by the preemption (32 us seen on a busy machine), and
 * activity slices are placed by these pairs. */
#define SCHED_PAIR_TRIES 3
#define SCHED_PAIR_TIGHT_NS 2000
uint64_t sched_ref_and_mono(const struct t4_sched *s, uint64_t *mono_ns);
/* A CLOCK_MONOTONIC instant (a BPF timestamp) on s's reference clock:
 * itself, or shifted by the offset between the two clocks read now (they
 * drift apart by NTP's slew, at most 500 ppm of the time since). */
uint64_t sched_from_mono(const struct t4_sched *s, uint64_t mono_ns);

/* ---- monitors (monitor.c) ---------------------------------------------- */

/* Put domain i's return packet (formed in m->pkt) into m's ring and keep
 * the statistics; point_ref_ns: the trigger's point on the reference
 * clock. A packet the ring refuses is carried by the domain's next one
 * (t4_domain_unread). */
void sched_monitor_put(struct t4_monitor *m, size_t i, uint64_t point_ref_ns, int err);
/* m answered trigger id, having missed `missed` IDs before it (unanswered
 * triggers; a scheduler counts its own as overruns). */
void sched_monitor_done(struct t4_monitor *m, uint64_t id, uint64_t missed);
/* Thread body of the user path's monitors. */
void *sched_monitor_main(void *arg);

/* ---- the in-kernel path (kpath.c) --------------------------------------- */

/* Load the BPF trigger for s's domains; fails with the reason (no
 * privilege, kernel, a counter it cannot read). Sets s->k and s->grid. */
int sched_kpath_open(struct t4_sched *s);
/* Start the drain thread. */
int sched_kpath_start(struct t4_sched *s);
/* Make every CPU's timer look at the grid now. */
int sched_kpath_kick(struct t4_sched *s);
/* Tell the BPF timers of a bookmark command (a t4_bookmark_publish_fn;
 * ud: the scheduler). */
void sched_kpath_bookmark(void *ud, uint32_t id, uint64_t count);
/* The last trigger ID + 1 the kernel answered on cpu. */
uint64_t sched_kpath_fired(const struct t4_sched *s, int cpu);
/* Records the kernel's ring buffer refused so far. */
uint64_t sched_kpath_lost(const struct t4_sched *s);
/* Stop the drain thread after a last drain. */
void sched_kpath_stop(struct t4_sched *s);
void sched_kpath_close(struct t4_sched *s); /* accepts s->k == NULL */

/* ---- CPU and GPU activity (activity.c) ----------------------------------------- */

/* Load the activity program when opts ask for it and its log ring; when it
 * cannot load, s->activity_note says why and the recording goes on. Fails
 * only for what stops the recording (no memory). Sets s->ph. */
int sched_activity_open(struct t4_sched *s);
/* Start its drain thread. */
int sched_activity_start(struct t4_sched *s);
/* The last records, the threads still on a CPU, and stop the thread: before
 * the final trigger, so that the program's last bookmarks and triggers are
 * in. */
void sched_activity_stop(struct t4_sched *s);
void sched_activity_close(struct t4_sched *s); /* accepts s->ph == NULL */
/* Its totals into st. */
void sched_activity_status(struct t4_sched *s, struct t4_sched_status *st);

#endif
