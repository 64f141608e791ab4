/* sched.h - the central scheduler, its monitors, and the same scheduler
 * in virtual time for the simulator.
 *
 * The patent's central scheduler fires triggers on an absolute time grid
 * (t0 + k * period of CLOCK_MONOTONIC). The trigger is the clock itself:
 * every CPU hosting counters fires on the same grid by itself and derives
 * the trigger ID from it (claim 4): ID = grid index until the first command,
 * and one more per command-fired trigger after that; a late CPU answers the
 * point due when it woke and counts the IDs it missed (a scheduler's CPU:
 * overruns; any other CPU: unanswered triggers). On each trigger
 * every clock domain is read (one group read each) and answers with one
 * aggregated return packet; the scheduler's CPU also writes the reference
 * packet (trigger ID, reference clock, MONOTONIC, REALTIME, its TSC,
 * bookmark, overruns). Two trigger paths do this:
 *   - in the kernel (bpf/): one BPF timer per CPU reads the counters and
 *     writes a record to a ring buffer; a drain thread makes the packets.
 *     No user-space wake-up per trigger. Reference clock: CLOCK_MONOTONIC.
 *   - in user space: one thread per CPU sleeps on the grid and reads its
 *     domains itself. Reference clock: CLOCK_MONOTONIC_RAW.
 * The trigger path allocates nothing, does no I/O and shares no lock with
 * the writer.
 *
 * Commands (patent claims 5-6): one trigger, start periodic, stop periodic,
 * set bookmark. They are thread-safe and may come from the main thread, the
 * control socket (control/, wired up by record) or an application through
 * libt410trace.
 *
 * Errors follow util.h.
 */
#ifndef T4_SCHED_H
#define T4_SCHED_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/collector.h"
#include "packets/packets.h"

/* ---- scheduler (sched.c, monitor.c, kpath.c) ---------------------------- */

struct t4_sched;

/* Where triggers fire. */
enum t4_trigger_path {
	T4_TRIGGER_AUTO = 0, /* the kernel when it can read every counter, else user */
	T4_TRIGGER_USER = 1, /* threads sleeping on the grid */
	T4_TRIGGER_BPF = 2,  /* BPF timers in the kernel */
};

/* CPU and GPU activity (activity.c, bpf/ activity): which threads of the
 * workload ran where, its GPU jobs, and libt410trace's probe bookmarks. */
struct t4_activity_opts {
	bool on;           /* load the activity program (needs BPF privilege) */
	bool all;          /* every task (record -a); else the processes followed */
	const int *pids;   /* processes followed from the start (-p/-t) */
	size_t n_pids;
};

struct t4_sched_opts {
	uint64_t period_ns;          /* periodic trigger period */
	bool paused;                 /* start with periodic triggers stopped */
	bool per_socket;             /* one scheduler per socket */
	const char *bookmark;        /* initial bookmark, NULL = none */
	uint64_t duration_ns;        /* fire the final trigger this long after
				      * the start (a grid point), 0 = no end */
	struct t4_domain_set *domains; /* opened; read by the monitors */
	struct t4_log *log;          /* rings are created on it */
	bool quiet;                  /* no notices on stderr */
	enum t4_trigger_path trigger;
	struct t4_activity_opts activity;
};

struct t4_sched_status {
	uint64_t triggers;   /* all schedulers together */
	uint32_t schedulers;
	bool finished;       /* every scheduler fired its final trigger */
	uint64_t overruns;   /* trigger IDs the schedulers' CPUs missed (late) */
	uint64_t read_failures;
	/* the earliest read failure (by trigger ID): its errno, trigger and
	 * domain (when read_failures) */
	int first_failure_err;
	uint64_t first_failure_trigger;
	char first_failure_domain[T4_NAME_MAX];
	uint64_t unanswered; /* unanswered triggers: trigger IDs a monitor on
			      * another CPU than its scheduler's did not
			      * answer (it woke late, or the kernel's ring
			      * refused its record); its next answer's counts
			      * cover them */
	uint64_t values;     /* counter values handed to the log */
	uint64_t off_cpu;    /* monitor answers read away from their CPU */
	uint64_t lost;       /* BPF records the kernel's ring refused (their IDs
			      * count as overruns or unanswered triggers: the
			      * next record covers them) */
	bool periodic;       /* periodic triggers running */
	uint32_t bookmark_id;
	char bookmark[T4_NAME_MAX];
	uint64_t period_ns;
	bool bpf;            /* triggers fire in the kernel */
	uint32_t ref_clock;  /* enum t4_ref_clock of the packets */
	/* trigger to its last return (virtual time only), ns */
	uint64_t latency_p50, latency_p99, latency_max;
	/* read window, and skew: a trigger's grid point to the middle of each
	 * read; spread: latest - earliest CPU's sample of one trigger, ns */
	uint64_t window_p50, window_p99, window_max;
	uint64_t skew_p50, skew_p99, skew_max;
	uint64_t spread_p50, spread_p99, spread_max;
	/* virtual time only (0 for a live recording): return packets left
	 * out on purpose (drop_prob; each carried by its domain's next one),
	 * and the end of the final trigger's last read */
	uint64_t dropped;
	uint64_t end_ref_ns;
	/* CPU and GPU activity: whether the program ran, the packets it gave,
	 * libt410trace's probe commands taken and refused, and the records
	 * lost before the log (the status packet's lost_events) */
	bool activity;
	uint64_t cpu_slices, tasks, gpu_jobs, gpu_contexts;
	uint64_t probe_bookmarks, probe_triggers, probe_refused;
	char probe_refusal[160]; /* why the first one was refused */
	uint64_t activity_lost;
	/* bookmark commands refused for lack of room (the queue or the table
	 * of names full), every path: the status packet's bookmarks_refused;
	 * libt410trace's triggers refused through the uprobe (no credit, the
	 * kernel's ring full): its triggers_refused */
	uint64_t bookmarks_refused, triggers_refused;
};

/* Bookmark commands that may wait between two triggers (on the BPF path:
 * two drains, 50 ms); one more fails ("try again after the next trigger")
 * instead of being lost, and is counted (bookmarks_refused). */
#define T4_BOOKMARK_QUEUE 32768
/* Distinct bookmark names in one recording: T4_BOOKMARK_NAMES (packets.h,
 * the decoder keeps as many); a command with one more name fails (and is
 * counted) the same way. */

/* Create the scheduler(s) and monitors and their rings on opts->log, on
 * the trigger path opts->trigger asks for (AUTO: the kernel's when the BPF
 * program loads and can read every counter there, else user space; see
 * t4_sched_path_note). The domains and the log must outlive the scheduler. */
int t4_sched_create(struct t4_sched **out, const struct t4_sched_opts *opts);
/* Why AUTO chose user space ("" when it did not fall back): one line. */
const char *t4_sched_path_note(const struct t4_sched *s);
/* What of the CPU and GPU activity opts asked for is left out, and why, one
 * line ("" when nothing: all of it runs, or none was asked for). */
const char *t4_sched_activity_note(const struct t4_sched *s);
/* Follow process pid and its children in the activity (the command, once
 * forked: before it execs). 0 when activity is off. */
int t4_sched_follow(struct t4_sched *s, int pid);
/* A process of the workload asks (control socket "hello") whether its
 * libt410trace, in file path, may call the probe point: 1 yes (the uprobe
 * is on that file and takes pid's calls; *fd is the probe page's, to hand
 * over, still the scheduler's), 0 no (message set: why; *fd -1). */
int t4_sched_probe_route(struct t4_sched *s, int pid, const char *path, int *fd);
/* The reference clock of s's packets, now (for the session, bookmark and
 * status packets that go with them). */
uint64_t t4_sched_now(const struct t4_sched *s);
/* Start. The first (baseline) trigger fires at once: the grid's origin. */
int t4_sched_start(struct t4_sched *s);
/* Commands; any thread. Each bookmark command becomes one bookmark packet
 * with the reference time it was set and the first trigger that carries
 * it, on either trigger path (bookmark.c; docs/FORMAT.md 4.4). */
int t4_sched_bookmark(struct t4_sched *s, const char *name);
/* 0 for a valid bookmark name (1-63 of A-Z a-z 0-9 _ . : -), else -EINVAL
 * with a message naming it. */
int t4_bookmark_check(const char *name);
int t4_sched_trigger(struct t4_sched *s);
int t4_sched_resume(struct t4_sched *s);
int t4_sched_pause(struct t4_sched *s);
void t4_sched_status(struct t4_sched *s, struct t4_sched_status *st);
/* Fire the final trigger (unless --duration's end already did), stop and
 * join every thread (always). 0 when every scheduler answered it within
 * 1 s; else a negative errno (-ETIMEDOUT) and a message that says whether
 * it came late (it is in the log) or never (the log ends at the previous
 * trigger of the schedulers that missed it). */
int t4_sched_stop(struct t4_sched *s);
void t4_sched_free(struct t4_sched *s); /* accepts NULL */

/* ---- virtual time (virtual.c) ------------------------------------------ */

/* A recording of simulated domains in virtual time: the packet stream a
 * live `record --sim` writes, computed without waiting (an hour of 1 ms
 * triggers in seconds), deterministic for a seed, with every sample's true
 * instant known (docs/SIMULATOR.md, "Virtual time"). */
struct t4_virtual_opts {
	uint64_t period_ns;     /* trigger period; longer than the reads reach
				 * (about 9.5 us; 6.5 us plus the longest preempted
				 * read with preemption) */
	uint64_t duration_ns;   /* the final trigger (T4_REF_FINAL) at the first
				 * grid point at or after it: triggers 0..ceil(duration / period) */
	bool per_socket;        /* one scheduler per socket (sched_id = socket) */
	const char *bookmark;   /* initial bookmark (first_trigger 0), NULL = none,
				 * or the phase at the start with phase_bookmarks */
	bool phase_bookmarks;   /* a bookmark named after the workload phase at
				 * every phase change (set_ns = that instant) */
	uint64_t seed;          /* jitter, read windows, preemption, drops, late */
	double preempt_prob;    /* a read is preempted: window preempt_min_ns ..
				 * preempt_max_ns (0, 0: 20..100 us) instead of 0.3..3 us */
	uint64_t preempt_min_ns, preempt_max_ns;
	double drop_prob;       /* a return packet is not logged; the domain's
				 * next one carries its counts; counted in st->dropped */
	double late_prob;       /* a monitor skips a trigger (not the first or
				 * the final one); its next answer covers both;
				 * counted in st->unanswered */
	struct t4_domain_set *domains; /* freshly opened on one simulator */
	struct t4_ring *ring;   /* a T4_RING_WAIT ring of the log, created
				 * first: the caller's metadata, then every packet
				 * of the recording (one ring: a deterministic log) */
	/* Optional: when *stop turns nonzero (record's Ctrl-C), the next
	 * trigger is the final one, as a live recording ends on a signal. */
	const volatile sig_atomic_t *stop;
	/* Optional: the log ring goes to; once it has failed (a full disk:
	 * nothing more can be kept) no further trigger is generated, so a
	 * long recording does not run on for nothing. */
	const struct t4_log *log;
	/* Optional: every sample, logged or not: its domain, trigger, exact
	 * true instant, and the return packet it made. */
	void (*on_sample)(void *ud, const struct t4_domain *d, uint64_t trigger_id,
			  uint64_t true_ns, const struct t4_ret_pkt *ret, bool logged);
	void *ud;
	/* Optional: after each trigger's packets are in the ring (record
	 * names its log once the first chunk is on disk). */
	void (*on_trigger)(void *progress_ud);
	void *progress_ud;
};

/* The session packet of such a recording (start at the grid origin t0 =
 * the simulator's epoch + 10 ms, REALTIME = 2026-01-01 UTC + ref), for
 * t4_put_metadata before t4_virtual_record. */
int t4_virtual_session(const struct t4_virtual_opts *o, const char *cmdline,
		       struct t4_session_pkt *s);
/* Record: bookmark, reference and return packets of every trigger into
 * o->ring, nothing else (the caller closes the log with a status packet of
 * st's triggers, overruns, dropped and end_ref_ns). No sleeping, no
 * threads. st (optional) gets the totals, as t4_sched_status would. */
int t4_virtual_record(const struct t4_virtual_opts *o, struct t4_sched_status *st);

/* ---- recording metadata (metadata.c) ---------------------------------- */

/* The scheduler whose triggers domain d answers: 0, or with one scheduler
 * per socket the socket of its PMU: the one place that says, for the live
 * and the virtual scheduler and the domain packets. */
uint32_t t4_sched_id_of(const struct t4_domain *d, bool per_socket);
/* A session packet: this host's name and kernel, this version, the
 * command line, the recording's start, period and simulated flag, and a
 * random session ID. */
void t4_session_init(struct t4_session_pkt *s, const char *cmdline, uint64_t start_ref_ns,
		     uint64_t start_real_ns, uint64_t period_ns, bool simulated);
/* A session ID made of the session's own fields (a virtual-time recording:
 * the same seed and options give the same log, its ID included). */
uint64_t t4_session_content_id(const struct t4_session_pkt *s);
/* Put the metadata that opens a recording into ring (a T4_RING_WAIT ring
 * created before the others): the session, then each domain with its
 * scheduler ID followed by its events. */
int t4_put_metadata(struct t4_ring *ring, const struct t4_session_pkt *session,
		    const struct t4_domain_set *ds, bool per_socket);

#endif
