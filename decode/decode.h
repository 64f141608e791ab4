/* decode.h - the offline decoder: every clock domain of a log on one
 * reference timeline, with derived metrics and per-phase summaries (the
 * patent's "software afterwards").
 *
 * Two layers, both streaming over the packets of t4_reader_next():
 *
 *   t4_index    what a log holds: session, domains, events, bookmarks,
 *               schedulers, status, packet counts and per-event totals.
 *               `info` is this layer alone; the decoder builds on it.
 *
 *   t4_decoder  joins reference and return packets by (sched_id,
 *               trigger_id), fits each domain's clock against the reference
 *               clock (offset and rate, piecewise, bounded by every
 *               sample's read window), turns consecutive samples into
 *               intervals on the reference axis, evaluates the seed-000
 *               formulas (collector/kinds.c), cuts the recording into
 *               bookmark phases and hands everything to a sink (summary,
 *               CSV, JSONL, Perfetto: decode/out_*.c).
 *
 * Memory is bounded by the join look-ahead and the clock model's window,
 * never by the length of the log. A packet stream may be damaged,
 * reordered, duplicated or truncated: what is readable is decoded, what is
 * missing is counted and said.
 *
 * Errors follow util.h: 0 or a negative errno, message in t4_errmsg().
 */
#ifndef T4_DECODE_H
#define T4_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "packets/packets.h"

typedef unsigned __int128 t4_u128; /* totals: a sum of u64 deltas */

/* Decimal text of v into buf (40 bytes always suffice); returns buf. */
const char *t4_u128_str(t4_u128 v, char *buf, size_t cap);

/* ---- the index: what a log holds (index.c) ----------------------------- */

struct t4_index;

/* Which of the latest 64 trigger IDs of a stream were seen (the index's
 * own: it finds packets the log holds twice with it). */
struct t4_index_seen {
	uint64_t top;  /* the largest ID seen */
	uint64_t bits; /* bit i: ID top - i seen (0: none yet) */
};

/* One clock domain as the log describes it, with what was seen of it. */
struct t4_index_domain {
	struct t4_domain_pkt d; /* defaults (cpu -1, clock -1) until described */
	bool described;         /* a domain packet was seen */
	uint32_t n_events;      /* event packets seen */
	uint32_t n_counts;      /* largest n_counts of its return packets */
	uint64_t rets;          /* return packets */
	uint64_t values;        /* counter values in them */
	uint64_t read_failed;   /* returns flagged READ_FAILED */
	uint64_t first_ns, last_ns; /* read_begin of its first and last return */
	uint64_t elapsed_ns;     /* the time its counts cover, what its rates
				  * divide by: read_begin to read_begin (its
				  * latest), but across a damaged stretch that
				  * took returns of it, the length of its last
				  * interval, as decode's (the counts the stretch
				  * held are lost, so is their time) */
	uint64_t covered_to;     /* (the latest read_begin of its returns) */
	uint64_t last_dt;        /* (its last interval, read_begin to read_begin) */
	uint64_t epoch;          /* (the damage epoch of its latest return) */
	uint64_t first_trigger;  /* smallest trigger ID of its returns */
	uint64_t duplicates;     /* returns of a trigger it answered already (a
				  * packet the log holds twice, found among its
				  * latest 64 triggers): in rets, one answer */
	struct t4_index_seen answered; /* its largest trigger ID (top) and
					* the latest 64 it answered */
	uint64_t gauges;         /* bit i: event i is a gauge (T4_EV_GAUGE) */
	uint32_t redescribed;    /* domain or event packets that described it
				  * again, otherwise (FORMAT.md 6): the first
				  * description holds... */
	uint64_t rets_redescribed; /* ...and its returns read after the first of
				    * them are not decoded, in no total (in rets) */
	t4_u128 totals[T4_MAX_COUNTERS]; /* sum of counts per event index; a
					  * gauge's last level */
};

/* One scheduler's triggers (record --per-socket runs one per socket). */
struct t4_index_sched {
	uint32_t id;
	uint64_t refs;              /* reference packets */
	uint64_t first, last;       /* smallest and largest trigger ID */
	uint64_t first_ns, last_ns; /* their reference times */
	uint64_t overruns;          /* sum of the packets' overruns */
	uint64_t first_overruns;    /* those of the packet with ID first:
				     * missed before it, outside the span */
	uint64_t duplicates;        /* reference packets of an ID seen already
				     * (among its latest 64): in refs, one trigger */
	struct t4_index_seen seen;  /* (the index's own) */
};

/* Packet counts of the whole log. */
struct t4_index_counts {
	uint64_t refs, rets, values, meta;
	uint64_t read_failed_rets; /* returns flagged READ_FAILED */
	uint64_t backwards_rets;   /* returns flagged BACKWARDS: a counter went
				    * backwards, its delta 0 (its counts lost) */
	uint64_t multiplexed_rets; /* returns flagged MULTIPLEXED: counters that
				    * ran part of the time (not scaled) */
	uint64_t ref_overruns;     /* sum over reference packets */
	uint64_t bookmark_packets;
	uint64_t cpu_slices, gpu_slices, tasks; /* CPU/GPU activity packets */
	uint64_t untracked;        /* packets beyond the table limits */
	uint64_t implausible_refs; /* reference packets whose trigger ID jumps
				    * further than their time allows (damage:
				    * not counted anywhere else) */
	uint64_t copies;           /* copies of metadata (FORMAT.md 4.8): not in
				    * meta, bookmark_packets or tasks... */
	uint64_t restored;         /* ...unless the original was lost to damage:
				    * these copies were taken in its place */
	uint64_t redescribed;      /* domains described again, otherwise */
	uint64_t rets_redescribed; /* the domains' returns not decoded for it */
	uint64_t duplicates;       /* reference and return packets of a trigger
				    * seen already (the log holds them twice):
				    * in refs and rets, one trigger and one answer
				    * (t4_index_answers) */
	uint64_t bookmarks_renamed; /* bookmark packets naming their ID otherwise
				     * than its first did (FORMAT.md 4.4: one ID
				     * per name): the first name holds */
	uint64_t bookmarks_reused;  /* bookmark packets of an ID named as an earlier
				     * ID was (one ID per name): the first ID
				     * holds, the phases of both are its own */
	uint64_t damage;            /* the reader's warnings told (t4_index_damage):
				     * each begins a damage epoch */
};

int t4_index_new(struct t4_index **out);
/* The reader skipped something (its warning callback): what follows may
 * lack packets before it, so a domain's next return, if the stretch took
 * returns of it, covers the time of its own counts only (elapsed_ns). */
void t4_index_damage(struct t4_index *ix);
/* Skip the per-event totals (the decoder keeps its own). */
void t4_index_no_totals(struct t4_index *ix);
void t4_index_free(struct t4_index *ix); /* accepts NULL */
/* Account one packet: 0, or T4_INDEX_REPEAT for a copy of what the index
 * already holds (ignored: callers pass it on to nothing), or
 * T4_INDEX_REDESCRIBED for a domain or event packet that contradicts the
 * description the index holds (counted, not taken: the first description
 * holds, and the domain's returns from here on are not decoded; FORMAT.md
 * 6). -ENOMEM is the only failure. */
#define T4_INDEX_REPEAT 1
#define T4_INDEX_REDESCRIBED 2
int t4_index_add(struct t4_index *ix, const struct t4_packet *p);
/* Whether a reference packet's trigger ID is one its scheduler could have
 * reached by its reference time (the grid's rate, commands on top); one
 * that is not is damage, left out of the index and the decoder alike. */
bool t4_index_ref_plausible(const struct t4_index *ix, const struct t4_ref_pkt *r);

/* NULL when the log has none. The first session packet, the last status
 * packet (authoritative, FORMAT.md 4.5). */
const struct t4_session_pkt *t4_index_session(const struct t4_index *ix);
const struct t4_status_pkt *t4_index_status(const struct t4_index *ix);
const struct t4_index_counts *t4_index_counts(const struct t4_index *ix);
/* Whether the log was closed as a finished recording closes it: its last
 * status packet comes after every reference and return packet (FORMAT.md
 * 6). The one answer info, the summary and the report give; when it is
 * not, t4_index_unclosed_why() is their words for it. */
bool t4_index_closed(const struct t4_index *ix);
const char *t4_index_unclosed_why(void);
/* The host packets of a log (FORMAT.md 4.5b): the first (the job it ran
 * in) and the last, and the clock's sync over the whole recording. */
struct t4_index_host {
	struct t4_host_pkt first, last;
	uint64_t samples;     /* host packets */
	uint64_t known;       /* those whose sync state the kernel gave */
	uint64_t unsynced;    /* of which said: not synchronised */
	uint64_t worst_maxerror_us, worst_esterror_us; /* over the known ones */
};
/* NULL when the log has no host packet (older logs, virtual time). */
const struct t4_index_host *t4_index_host(const struct t4_index *ix);
/* The zero of relative times in every output: the earliest reference
 * time (the first trigger's), 0 when the log has no reference packet. */
uint64_t t4_index_origin_ns(const struct t4_index *ix);

/* Domains in the order first seen; lookups by ID of any size. */
size_t t4_index_n_domains(const struct t4_index *ix);
const struct t4_index_domain *t4_index_domain_at(const struct t4_index *ix, size_t i);
const struct t4_index_domain *t4_index_domain(const struct t4_index *ix, uint32_t id);
/* The last event packet of (domain, index), NULL if none. */
const struct t4_event_pkt *t4_index_event(const struct t4_index *ix, uint32_t domain_id,
					  uint32_t index);

/* Schedulers sorted by ID. */
size_t t4_index_n_scheds(const struct t4_index *ix);
const struct t4_index_sched *t4_index_sched_at(const struct t4_index *ix, size_t i);
const struct t4_index_sched *t4_index_sched(const struct t4_index *ix, uint32_t id);

/* Bookmark names by ID (the first packet of an ID names it: a later one
 * naming it otherwise is counted, bookmarks_renamed); NULL if the ID is
 * unknown. Every bookmark packet in log order, up to a limit (the rest
 * are counted in counts.bookmark_packets only), named so. */
const char *t4_index_bookmark_name(const struct t4_index *ix, uint32_t id);
size_t t4_index_n_bookmarks(const struct t4_index *ix);
/* The ID of the bookmark named name (the first ID so named), -1 if the log
 * has none. */
int64_t t4_index_bookmark_id(const struct t4_index *ix, const char *name);
/* The ID whose phases are id's: the first ID the log named as it named id
 * (bookmarks_reused), id itself for most. */
uint32_t t4_index_bookmark_holder(const struct t4_index *ix, uint32_t id);
const struct t4_bookmark_pkt *t4_index_bookmark_at(const struct t4_index *ix, size_t i);
/* Every bookmark ID the log names (up to 65,536, the rest counted as
 * untracked), in the order of their first packets: its first packet as
 * named (every name the log has, where the packets above stop at a limit). */
size_t t4_index_n_bookmark_ids(const struct t4_index *ix);
const struct t4_bookmark_pkt *t4_index_bookmark_id_at(const struct t4_index *ix, size_t i);

/* Which triggers a domain answered: the one account of it that `info`, the
 * summary and the report give. Its triggers are its scheduler's (from its
 * first answer on, for a domain that appears later: drm, with its first
 * client), each reference packet's ID once; an answer is a trigger ID of
 * its returns, each once (a copy of a return is a duplicate, no answer).
 * Unanswered: triggers without an answer in the log (answered late or
 * dropped at a full ring: counts carried by the next packet; lost to
 * damage; or after its last answer: it stopped answering). */
struct t4_index_answers {
	uint64_t triggers;     /* its scheduler's it was to answer */
	uint64_t answered;     /* distinct trigger IDs of its returns */
	uint64_t unanswered;   /* triggers - answered (0 if fewer) */
	uint64_t duplicates;   /* returns of a trigger answered already */
	uint64_t after;        /* of the unanswered, its scheduler's trigger IDs
				* after its last answer (0: it answered to the
				* end; all of them for a domain that never
				* answered) */
	uint64_t last_trigger; /* its last answer (when answered > 0)... */
	uint64_t last_ns;      /* ...and its read time, reference clock */
};
void t4_index_answers(const struct t4_index *ix, const struct t4_index_domain *d,
		      struct t4_index_answers *out);
/* Read failures: the closing status packet's, else counted from return
 * packets (or a mid-log status packet's, when larger: t4_index_closed). */
uint64_t t4_index_read_failures(const struct t4_index *ix);
/* Overruns: the closing status packet's, else the sum over reference
 * packets (or a mid-log status packet's, when larger). */
uint64_t t4_index_overruns(const struct t4_index *ix);

/* Short name of a domain kind ("ucf", "software", ...; "unknown"). */
const char *t4_domain_kind_name(uint32_t kind);

/* ---- the decoder (decode.c and friends) --------------------------------- */

struct t4_decoder;

enum t4_clock_model {
	T4_CLOCK_RATE = 0,   /* offset and rate, local fits bounded by windows */
	T4_CLOCK_OFFSET = 1, /* window midpoints, nominal rate (Perfetto, LTTng) */
	T4_CLOCK_WINDOW = 2, /* raw window midpoints, the local clock unused */
};
const char *t4_clock_model_name(enum t4_clock_model m);
int t4_clock_model_parse(const char *s, enum t4_clock_model *out);

/* A point on the timeline given by the user: an offset from the first
 * trigger, or a bookmark name (its first occurrence). */
struct t4_timepoint {
	bool set;
	bool is_bookmark;
	uint64_t offset_ns;
	char bookmark[T4_NAME_MAX];
	char text[T4_NAME_MAX]; /* as typed, for messages ("1m", not "60s") */
};
/* "1.5s", "200ms", "2m" or a bookmark name. */
int t4_timepoint_parse(const char *s, struct t4_timepoint *out);

struct t4_decode_opts {
	enum t4_clock_model model;
	uint64_t bin_ns;        /* resample onto a common grid; 0 = off */
	const char *pmu_glob;    /* domains whose name, PMU or kind matches one
				  * of these comma-separated globs; NULL all */
	const char *event_glob;  /* events and metrics likewise; NULL all */
	struct t4_timepoint from, to; /* --from / --to */
	const char *phase;       /* only intervals of this bookmark; NULL all */
	bool want_metrics;       /* evaluate metrics per interval (sinks
				  * that print intervals); phases always */
	uint32_t lookahead;      /* join look-ahead in triggers; 0 = 256 */
	unsigned jobs;           /* threads for t4_decode_file(): 1 reads and
				  * decodes on the caller's; 2 and up read the
				  * log on a thread of its own; 0 = the CPUs
				  * available (the output is the same) */
};

/* Interval flags. */
enum {
	T4_IV_SPANS = 1u << 0,       /* covers triggers the domain did not answer */
	T4_IV_PARTIAL = 1u << 1,     /* counts lost to a damaged chunk */
	T4_IV_MULTIPLEXED = 1u << 2, /* counters were multiplexed */
	T4_IV_BACKWARDS = 1u << 3,   /* a counter went backwards (its delta 0) */
	T4_IV_BIN = 1u << 4,        /* a bin of --bin */
	T4_IV_NO_REF = 1u << 5,      /* its trigger had no reference packet */
	T4_IV_NONLINEAR = 1u << 6,   /* the clock fit failed here: midpoints */
};

/* One interval of one domain on the reference axis: the counts between
 * two consecutive samples (or one --bin bin). Valid during the call. */
struct t4_interval {
	uint32_t domain;         /* index into t4_decoder_domain_at() */
	uint64_t trigger;        /* the trigger whose return closed it */
	uint64_t first_trigger;  /* first trigger it covers (== trigger unless SPANS) */
	uint64_t start_ns, end_ns; /* reference clock */
	uint64_t elapsed_ns;     /* what the metrics divide by (end - start,
				  * or the nominal-rate length: OFFSET model) */
	uint64_t bound_ns;       /* the clock model's uncertainty of the sample
				  * that closes it (half-width: the true instant
				  * is within its placed time +- bound_ns) */
	uint32_t bookmark_id;    /* its phase's bookmark (attrib.c: where a
				  * phase boundary falls inside an interval,
				  * one interval per phase, counts split by
				  * overlap) */
	uint32_t occurrence;     /* which span of that bookmark: 1, 2, ... */
	uint32_t flags;          /* T4_IV_* */
	uint32_t n_counts;
	const uint64_t *counts;  /* per event index */
	const double *metrics;   /* per metric; NaN = absent; NULL unless
				  * opts.want_metrics */
};

/* One clock segment of a domain: the clock ran at one rate (a DVFS step
 * or a counter restart starts the next). */
struct t4_clock_segment {
	uint64_t first_trigger, last_trigger;
	uint64_t start_ns, end_ns;
	uint64_t samples;
	double freq_hz;       /* least squares over the placed samples */
	double drift_ppm;     /* against the domain's nominal_hz (NaN: unknown) */
	double residual_ns;   /* RMS distance of the samples from one line */
};

/* Statistics of a domain's clock model. */
struct t4_clock_stats {
	enum t4_clock_model model; /* what placed its samples */
	bool reference_clocked;    /* clock_event -1: window model, no fit */
	uint64_t samples;
	uint64_t segments;         /* all segments, listed ones included */
	uint64_t nonlinear;        /* samples the fit could not bound */
	double freq_hz;            /* time-weighted over every segment */
	double drift_ppm;
	double residual_ns;        /* RMS over every segment */
	uint64_t window_p50, window_p99; /* read window widths, ns */
	uint64_t bound_p50, bound_p99;   /* model uncertainty (half-width) */
};

/* What the decoder knows of one domain. */
struct t4_dec_domain {
	uint32_t id;
	const struct t4_index_domain *ix; /* name, kind, cpu, sched_id, ... */
	const char *name;
	const char *pmu;          /* PMU of its first event ("" if none) */
	const char *kind_label;   /* "UCF", "software", ... */
	bool selected;            /* passes --pmu */
	uint32_t n_counts;
	const char *event_name[T4_MAX_COUNTERS];
	const char *event_unit[T4_MAX_COUNTERS];
	bool event_selected[T4_MAX_COUNTERS];
	bool event_gauge[T4_MAX_COUNTERS];   /* a level, not a count (FORMAT 4.3):
					      * intervals give the level; totals
					      * are level x elapsed ns, exact */
	uint32_t n_metrics;
	const char *metric_name[T4_MAX_COUNTERS];
	const char *metric_unit[T4_MAX_COUNTERS];
	const char *metric_formula[T4_MAX_COUNTERS]; /* over the event names and
						      * elapsed_ns */
	bool metric_brief[T4_MAX_COUNTERS];    /* a headline metric */
	bool metric_selected[T4_MAX_COUNTERS];
	/* A number that no other domain, decoder or state shares: it changes
	 * whenever the names, units or selections above change (outputs
	 * keep what they derive from them under it). */
	uint64_t names_id;
	/* decoding results */
	uint64_t intervals;
	uint64_t unanswered_carried; /* triggers not answered, counts carried */
	uint64_t unanswered_lost;    /* triggers not answered, counts lost */
	uint64_t duplicates;      /* returns seen twice (the first kept) */
	uint64_t too_late;        /* returns beyond the look-ahead, dropped */
	uint64_t unplaced;        /* returns without a sample before them */
	uint64_t read_failed;
	uint64_t first_ns, last_ns; /* placed span */
	uint64_t elapsed_ns;      /* the time its totals cover: every interval
				   * decoded, summed as the phases sum it (what
				   * a filter left out, and the hole a damaged
				   * stretch leaves, are not in it; the span
				   * above holds both): rates over the whole
				   * decode divide by it */
	t4_u128 totals[T4_MAX_COUNTERS]; /* over every interval decoded (gauges:
					  * level x elapsed ns, exact) */
	struct t4_clock_stats clock;
};

/* One bookmark span: a phase occurrence. */
struct t4_dec_phase {
	uint32_t bookmark_id;     /* 0: before any bookmark */
	const char *name;         /* "" for 0 */
	uint32_t occurrence;      /* 1, 2, ... for recurring names */
	uint64_t start_ns, end_ns;
	bool exact;               /* boundaries from set_ns, not the grid */
	uint64_t triggers;        /* scheduler-0 triggers inside */
	uint64_t cpu_ns;          /* the workload's threads on CPUs inside */
	uint64_t threads;         /* threads that ran inside */
};

/* GPU busy time of one fence context inside one phase. */
struct t4_dec_gpu_busy {
	uint64_t context;
	const char *driver, *timeline;
	uint64_t busy_ns;         /* union of its jobs' intervals */
};
/* Every GPU context's busy time in phase p into out (up to cap); returns
 * how many contexts there are. */
size_t t4_decoder_phase_gpu(const struct t4_decoder *dec, size_t p,
			    struct t4_dec_gpu_busy *out, size_t cap);

/* What the CPU/GPU activity stream held. */
struct t4_dec_slices {
	uint64_t cpu, gpu;        /* slices decoded */
	uint64_t tasks;           /* threads named */
	uint64_t lost_events;     /* lost before the log (status packet) */
	uint64_t unplaced;        /* slices with no reference packet near them */
};
const struct t4_dec_slices *t4_decoder_slice_stats(const struct t4_decoder *dec);
/* The name of workload thread tid as the log last gave it ("" unknown). */
const char *t4_decoder_thread_name(const struct t4_decoder *dec, uint32_t tid);

/* What the kernel saw of the workload (bpf/activity), on the reference axis:
 * a thread on a CPU, or a GPU job. */
enum t4_slice_kind { T4_SLICE_CPU = 0, T4_SLICE_GPU = 1 };
struct t4_slice {
	enum t4_slice_kind kind;
	uint64_t start_ns, end_ns; /* reference clock */
	uint32_t cpu;              /* CPU slices */
	uint32_t pid, tid;         /* the thread; for GPU jobs, the submitter */
	const char *name;          /* the thread's name (CPU); "" if unknown */
	uint64_t context, seqno;   /* GPU jobs: fence context and number */
	const char *driver, *timeline; /* GPU jobs: the context's names, "" */
	uint32_t flags;            /* T4_SLICE_PREEMPTED, T4_GPU_* */
	uint32_t bookmark_id;      /* the phase at its start */
};

/* The sink: what an output format implements. Every callback may be NULL.
 * A negative return stops decoding with that error. */
struct t4_decoder;
struct t4_merge;
struct t4_sink_ops {
	int (*interval)(void *ud, const struct t4_decoder *dec, const struct t4_interval *iv);
	/* A CPU or GPU slice, placed on the reference axis. */
	int (*slice)(void *ud, const struct t4_decoder *dec, const struct t4_slice *s);
	/* A phase span is complete (its totals are final). */
	int (*phase)(void *ud, const struct t4_decoder *dec, size_t phase_index);
	/* Decoding is over: every statistic is final. */
	int (*finish)(void *ud, const struct t4_decoder *dec);
	/* Merged decodes only (t4_merge_decode): a host's log begins (before
	 * any other callback of its decoder), and every host is decoded
	 * (after the last host's finish). */
	int (*host)(void *ud, const struct t4_decoder *dec);
	int (*merged)(void *ud, const struct t4_merge *m);
	/* decode -j (decode/parallel.c): the intervals made by several
	 * workers, each into a copy of the sink (fork: one that writes into
	 * memory), their bytes merged in -j 1's order; join gives the copy's
	 * state back (what was described once) and frees it. Set by the
	 * t4_output formats that allow it (ud is then a struct t4_output);
	 * a sink with an interval callback and no fork decodes on one thread. */
	int (*fork)(void *ud, void **copy);
	void (*join)(void *ud, void *copy);
};

int t4_decoder_new(struct t4_decoder **out, const struct t4_decode_opts *o,
		   const struct t4_sink_ops *ops, void *ud);
void t4_decoder_free(struct t4_decoder *dec); /* accepts NULL */
/* Feed the next packet of the log. */
int t4_decoder_feed(struct t4_decoder *dec, const struct t4_packet *p);
/* The reader skipped something (damaged chunk, garbage) at byte offset
 * of the log, saying msg: counts after this point cannot be joined with
 * those before without a loss check. Counted; the first one's offset and
 * message are kept (t4_decoder_damage_stats) for the summary. */
void t4_decoder_damage(struct t4_decoder *dec, uint64_t offset, const char *msg);
/* End of the log: flush every pending interval, close the phases, call
 * the sink's finish. st: the reader's statistics (may be NULL). */
int t4_decoder_finish(struct t4_decoder *dec, const struct t4_reader_stats *st);

/* Read a log (a path, or "-") through dec and finish it: what
 * t4_decode_file() does between t4_decoder_new() and t4_decoder_free(). */
int t4_decoder_run_file(struct t4_decoder *dec, const char *path);

/* The CPUs this process may run on (at least 1): decode's default -j. */
unsigned t4_decode_jobs_default(void);
/* Read a log (a path, or "-" for standard input) through the decoder. */
int t4_decode_file(const char *path, const struct t4_decode_opts *o,
		   const struct t4_sink_ops *ops, void *ud);

/* ---- queries (valid during callbacks and after finish) ------------------ */

const struct t4_index *t4_decoder_index(const struct t4_decoder *dec);
const struct t4_decode_opts *t4_decoder_opts(const struct t4_decoder *dec);
const struct t4_reader_stats *t4_decoder_reader_stats(const struct t4_decoder *dec);
size_t t4_decoder_n_domains(const struct t4_decoder *dec);
const struct t4_dec_domain *t4_decoder_domain_at(const struct t4_decoder *dec, size_t i);
/* Listed clock segments of domain i (the first ones; stats cover all). */
const struct t4_clock_segment *t4_decoder_segments(const struct t4_decoder *dec,
						   size_t i, size_t *n);
/* Name of a bookmark ID ("" for 0 or unknown). */
const char *t4_decoder_bookmark(const struct t4_decoder *dec, uint32_t id);
/* Reference time of the first trigger: the origin of --from/--to and of
 * every output's relative times (t4_index_origin_ns when the first
 * output was made; fixed from then on). */
uint64_t t4_decoder_origin_ns(const struct t4_decoder *dec);

/* The time base of the text outputs (--time). */
enum t4_time_base {
	T4_TIME_REF = 0, /* the log's reference clock (the session's ref_clock) */
	T4_TIME_REL,     /* ns from the first trigger (the origin; merged:
			  * the first trigger of any host, t4_place) */
	T4_TIME_REAL,    /* UTC ns through the session's realtime anchor
			  * (merged: the host's line, t4_place) */
};
int t4_time_base_parse(const char *s, enum t4_time_base *out);
const char *t4_time_base_name(enum t4_time_base b);
/* Whether the log can give times in base b (T4_TIME_REAL needs a session
 * with its (reference, REALTIME) pair); -EINVAL with a message if not. */
int t4_decoder_time_ok(const struct t4_decoder *dec, enum t4_time_base b);
/* The same for a log decoded alone, from its index. */
int t4_index_time_ok(const struct t4_index *ix, enum t4_time_base b);
/* Reference time t in base b (signed: REL before the first trigger). */
int64_t t4_decoder_time(const struct t4_decoder *dec, uint64_t t, enum t4_time_base b);
/* From reference time start to end in base b: what its two times, as
 * shown, differ by (merged: through the host's line, whose rate is not
 * 1; REF, and a log alone: end - start). */
uint64_t t4_decoder_span(const struct t4_decoder *dec, uint64_t start, uint64_t end,
			 enum t4_time_base b);
/* Damage seen: chunks skipped, truncated tail, triggers without a
 * reference packet. */
struct t4_dec_damage {
	uint64_t events;          /* reader warnings (t4_decoder_damage calls) */
	uint64_t first_offset;    /* the first one's byte offset in the log */
	char first_msg[256];      /* and what it said ("" when none) */
	uint64_t refs_missing;    /* trigger IDs without a reference packet
				   * that no overrun accounts for */
	uint64_t refs_duplicate;
	uint64_t phases_unplaced; /* bookmarks the references carry whose packet
				   * was lost, too late to be a phase of its own */
	uint64_t untracked_rets;  /* returns of domains past the decoder's limit
				   * (thousands: a damaged or crafted log) */
	bool partial;             /* totals miss counts (damage, lost packets) */
};
const struct t4_dec_damage *t4_decoder_damage_stats(const struct t4_decoder *dec);

/* Whether phase boundaries are bookmark times (set_ns: intervals are cut
 * there), or, in logs without them, the triggers' bookmarks (an interval
 * goes whole to the phase its closing trigger carries). */
bool t4_decoder_phases_exact(const struct t4_decoder *dec);

/* Phases, in time order. Totals of domain i in phase p: counts apportioned
 * by overlap (integers, exact: the phases' totals add up to the domain's),
 * elapsed the time the domain's intervals spent in the phase; kept for the
 * first 4096 phases (NULL past them: the name totals cover every one). */
size_t t4_decoder_n_phases(const struct t4_decoder *dec);
const struct t4_dec_phase *t4_decoder_phase_at(const struct t4_decoder *dec, size_t p);
const t4_u128 *t4_decoder_phase_totals(const struct t4_decoder *dec, size_t p,
				       size_t domain, uint64_t *elapsed_ns);
/* Totals of domain i over every phase of one bookmark (all its
 * occurrences, also those past the listed ones); NULL if none. */
const t4_u128 *t4_decoder_name_totals(const struct t4_decoder *dec, uint32_t bookmark_id,
				      size_t domain, uint64_t *elapsed_ns);
/* Metrics of domain i from totals over elapsed_ns (NaN = absent): what
 * the phase rows print. out has n_metrics entries. */
void t4_decoder_metrics_of(const struct t4_decoder *dec, size_t domain,
			   const t4_u128 *totals, uint64_t elapsed_ns, double *out);

/* ---- the options checked against the logs (filters.c) ---------------------- */

/* Whether every name the options give is in the logs (one, or several
 * merged: a name need be in one of them): --phase, --from and --to
 * bookmarks, each glob of --pmu and --event (a name an output would
 * show), --from/--to offsets inside a single log's span (--from before
 * its last trigger, --to not 0; whether the filters keep an interval is
 * the decoder's to say: at its end, or t4_decode_check_file), --bin no finer
 * than a thousandth of a period. What the decoder checks at its end, and
 * a first pass before any output byte (t4_decode_check_file). 0, or an
 * error naming the option, the closest name and the names there are
 * (t4_exit_code: 2). */
int t4_decode_check(const struct t4_index *const *ix, size_t n, const struct t4_decode_opts *o);
/* Whether the options hold anything t4_decode_check() may refuse. */
bool t4_decode_check_needed(const struct t4_decode_opts *o);
/* A first pass over the log at path (a file, or "-" when standard input
 * is one: it is read again): its index, read quietly (the decode says
 * its damage), then t4_decode_check() and t4_index_time_ok(b). Costs
 * what `info` costs, a fraction of a decode. streams (an output written
 * as it goes), with --from, --to, --phase or --pmu: then a quiet decode
 * without output up to the first interval they keep (all of the log when
 * they keep none: refused, as the decoder refuses it at its end); an
 * output written at the end (the summary, the report) leaves that to the
 * decoder's end, before its first byte, and pays no second decode. */
int t4_decode_check_file(const char *path, const struct t4_decode_opts *o, enum t4_time_base b,
			 bool streams);

/* ---- several hosts' logs on one timeline (merge.c) ------------------------- */

/* Where one host's reference clock lies on UTC: the least-squares line
 * through its reference packets' (ref_ns, real_ns) stamps, offset and
 * rate, and how far that line may be from true UTC: the kernel's
 * maximum error of the host's clock (host packets, FORMAT.md 4.5b) plus
 * the largest distance of a stamp from the line. */
struct t4_place {
	size_t index;              /* the host's number in the merge: 0, 1, ... */
	const char *log;           /* the path given */
	char host[T4_NAME_MAX];    /* the session's host name */
	uint64_t session_id;
	uint64_t ref0_ns;          /* the line: UTC = real0_ns + rate (ref - ref0_ns) */
	int64_t real0_ns;
	double rate;               /* UTC ns per reference ns */
	uint64_t stamps;           /* realtime stamps fitted */
	uint64_t residual_ns;      /* bound on a stamp's distance from the line */
	bool sync_known;           /* host packets gave the kernel's sync state */
	uint64_t sync_samples, unsynced; /* of them; said: not synchronised */
	uint64_t maxerror_us, esterror_us; /* the worst over the recording */
	uint64_t bound_ns;         /* +-: maxerror + residual (unknown sync:
				    * the residual only, UTC itself unknown) */
	uint64_t first_ns, last_ns; /* its first and last trigger (reference clock) */
	int64_t origin_real_ns;    /* the merged timeline's zero: the earliest
				    * first trigger of any host, on UTC */
};
/* UTC ns of reference time t on the host's line (saturating), ns from the
 * merged origin, and back. */
int64_t t4_place_real(const struct t4_place *p, uint64_t ref_ns);
int64_t t4_place_rel(const struct t4_place *p, uint64_t ref_ns);
uint64_t t4_place_ref(const struct t4_place *p, int64_t real_ns);

/* Open and place every log (a first pass over each: its index and its
 * stamps); refuses a log given twice (the same host and session), a log
 * without realtime stamps, a missing or unreadable file, naming it; warns
 * (stderr) of hosts whose clock was not synchronised or whose sync state
 * is unknown, and of hosts that do not overlap any other in time. */
int t4_merge_open(struct t4_merge **out, const char *const *paths, size_t n);
void t4_merge_free(struct t4_merge *m); /* accepts NULL */
size_t t4_merge_n_hosts(const struct t4_merge *m);
const struct t4_place *t4_merge_place(const struct t4_merge *m, size_t i);
/* Decode every host's log in turn into one sink (ops->host before each,
 * ops->merged at the end); --from/--to offsets count from the merged
 * origin. The decoders stay for queries until t4_merge_free(). */
int t4_merge_decode(struct t4_merge *m, const struct t4_decode_opts *o,
		    const struct t4_sink_ops *ops, void *ud);
const struct t4_decoder *t4_merge_decoder(const struct t4_merge *m, size_t i);
/* Put a decoder on the merged timeline (before its first packet): its
 * T4_TIME_REAL is p's line, its T4_TIME_REL counts from p's origin. */
void t4_decoder_set_place(struct t4_decoder *dec, const struct t4_place *p);
/* NULL for a log decoded alone. */
const struct t4_place *t4_decoder_place(const struct t4_decoder *dec);
/* After t4_decoder_finish(): free what only decoding needs (each
 * domain's sample ring and clock model queue), keeping what the queries
 * read; nothing may be fed after. A merge keeps every host's decoder for
 * its tables: a few MB a host otherwise. */
void t4_decoder_trim(struct t4_decoder *dec);

/* ---- per-event totals as perf stat prints them (totals.c) ----------------- */

/* One event of one PMU, summed over the domains that count it (the CPUs
 * of a per-CPU event; each Tegra410 PMU instance is one domain). */
struct t4_event_row {
	uint32_t kind;            /* enum t4_domain_kind */
	const char *pmu, *event, *unit; /* valid while the source is */
	int64_t domain;           /* -1: summed; else the one domain's ID */
	uint32_t domains;         /* domains summed */
	bool gauge;               /* a level: total is level x ns (FORMAT 4.3) */
	uint32_t scope;           /* T4_EV_TASK | T4_EV_INHERIT of its events: a
				   * task's counts, not a CPU's (rows of either
				   * scope are never summed together) */
	t4_u128 total;
	uint64_t elapsed_ns;      /* the time the rows' domains cover (the
				   * longest: CPUs count side by side) */
};
struct t4_event_rows {
	struct t4_event_row *v;
	size_t n, cap;
	size_t *slot;  /* open addressing over v: index + 1, 0 empty */
	size_t slots;  /* a power of two, more than twice n */
};
void t4_event_rows_free(struct t4_event_rows *r);
/* Add one domain's count to its row (created on first sight). */
int t4_event_rows_add(struct t4_event_rows *r, const struct t4_event_row *add);
/* Per second; a gauge's mean level. */
double t4_event_row_rate(const struct t4_event_row *row);
/* Whole-log totals of every event the index saw; per_domain: one row per
 * domain instead of summing (perf stat -A). */
int t4_event_rows_from_index(const struct t4_index *ix, bool per_domain,
			     struct t4_event_rows *out);
/* The decoder's totals of the selected events (phase SIZE_MAX: every
 * interval decoded; else that phase's). */
int t4_event_rows_from_decoder(const struct t4_decoder *dec, size_t phase, bool per_domain,
			       struct t4_event_rows *out);
/* The same over every phase of one bookmark (all its occurrences). */
int t4_event_rows_of_bookmark(const struct t4_decoder *dec, uint32_t bookmark_id,
			      bool per_domain, struct t4_event_rows *out);

/* ---- a kind's metrics outside the decoder (metrics.c) --------------------- */

/* The derived metrics of a domain kind compiled against its event names
 * (and their T4_EV_* flags, for per-task formulas; NULL: none): the
 * decoder's formulas and rules, for counts over a duration that did not
 * come through the decoder (the live view, the metrics endpoint). A metric
 * whose events are missing evaluates to NaN. */
struct t4_kind_metrics;
struct t4_formula;
int t4_kind_metrics_new(struct t4_kind_metrics **out, uint32_t kind, const char *const *events,
		      const uint32_t *flags, uint32_t n_events);
void t4_kind_metrics_free(struct t4_kind_metrics *ms); /* accepts NULL */
uint32_t t4_kind_metrics_n(const struct t4_kind_metrics *ms);
/* Name, unit, formula, description and brief of metric m. */
const struct t4_formula *t4_kind_metrics_formula(const struct t4_kind_metrics *ms, uint32_t m);
/* Every metric from the n counts over elapsed_ns into out (NaN: absent). */
void t4_kind_metrics_eval(const struct t4_kind_metrics *ms, const uint64_t *counts, uint32_t n,
			uint64_t elapsed_ns, double *out);

/* ---- outputs (out_*.c) ---------------------------------------------------- */

/* A value as CSV and JSONL write it (fmt.c): 9 significant digits, in
 * plain decimal inside 1e-6..1e15; into buf of cap bytes (at least 32
 * hold every finite value). */
const char *t4_fmt_value(double v, char *buf, size_t cap);

enum t4_out_format {
	T4_FMT_SUMMARY = 0,
	T4_FMT_CSV,
	T4_FMT_JSONL,
	T4_FMT_PERFETTO,
	T4_FMT_SLICES,     /* the CPU and GPU slices (CSV; alias phases-csv) */
	T4_FMT_PHASES,     /* the phase table (CSV) */
	T4_FMT_REPORT,     /* the HTML report (t410trace report) */
};
int t4_out_format_parse(const char *s, enum t4_out_format *out);
const char *t4_out_format_name(enum t4_out_format f);

struct t4_output_opts {
	enum t4_out_format format;
	char csv_sep;             /* -x; ',' by default */
	const char *log_name;     /* the input, for headers */
	const char *out_name;     /* where it goes, for errors (NULL or "-":
				   * standard output) */
	enum t4_time_base time;   /* --time: CSV and JSONL times */
	bool verbose;             /* -v: the summary's every detail */
	bool per_cpu;             /* --per-cpu: event rows per domain */
	bool hosts;               /* several hosts merged: a host column */
	bool terminal;            /* the output is a terminal (t4_output_new
				   * sets it when its file is one): CSV text
				   * escapes control characters as the
				   * summary does (util/text.c) */
};

/* An output writing to f: its sink ops and state. */
struct t4_output;
int t4_output_new(struct t4_output **out, const struct t4_output_opts *o, FILE *f);
void t4_output_free(struct t4_output *o); /* accepts NULL */
const struct t4_sink_ops *t4_output_ops(const struct t4_output *o);
/* Whether the format needs per-interval metrics. */
bool t4_output_wants_metrics(const struct t4_output *o);
/* Whether the format writes nothing before the decode's end (the summary,
 * the report): a refusal at the end comes before its first byte. */
bool t4_out_format_at_end(enum t4_out_format f);

#endif
