/* packets.h - the packet model and the log: the contract between `record`
 * and `decode`.
 *
 * Packets follow the patent (see docs/ARCHITECTURE.md):
 *   - a reference packet per trigger, written by a central scheduler;
 *   - an aggregated return packet per clock domain per trigger, written by
 *     the monitor that read that domain's counters;
 *   - metadata packets (session, domain, event, bookmark, status).
 *
 * Logs describe themselves chunk by chunk: the writer repeats metadata as
 * copies (docs/FORMAT.md 4.8) at the start of later chunks, so a damaged
 * chunk loses only its own counts, and stamps every chunk with its
 * recording's tag, so a reader tells two recordings in one file apart.
 *
 * In memory a packet is a plain struct (struct t4_packet). On disk packets
 * are encoded compactly (format 2: runs of trigger packets as batches of
 * bit-packed residuals against predictions from the previous packet of the
 * same scheduler or domain; format 1: varints and deltas), gathered into
 * chunks, and each chunk is one independent zstd frame behind a
 * checksummed header (docs/FORMAT.md).
 *
 * Three pieces:
 *   t4_codec   - encode/decode one packet; delta state per chunk;
 *   t4_log     - the writer: lock-free single-producer rings feed one writer
 *                thread that encodes, compresses and writes through
 *                io_uring; producers never block, a full ring drops the
 *                packet and counts it exactly;
 *   t4_reader  - streams packets back chunk by chunk with bounded memory,
 *                checks CRCs, resynchronises after damage; or step by
 *                step, its chunks unpacked on other threads (t4_unpacker).
 *
 * Errors follow util.h: 0 or a negative errno, message in t4_errmsg().
 */
#ifndef T4_PACKETS_H
#define T4_PACKETS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the packet model ------------------------------------------------ */

/* On-disk type codes: pinned, never renumbered. A reader skips types it
 * does not know (every packet is length-prefixed). */
enum t4_pkt_type {
	T4_PKT_SESSION = 1,
	T4_PKT_DOMAIN = 2,
	T4_PKT_EVENT = 3,
	T4_PKT_BOOKMARK = 4,
	T4_PKT_STATUS = 5,
	T4_PKT_TASK = 6,      /* a thread of the workload: its name */
	T4_PKT_GPU_CTX = 7,   /* a GPU fence context: driver and timeline */
	T4_PKT_COPY = 8,      /* on disk only: a copy of an earlier metadata
			       * packet (in memory: its type, copy = true) */
	T4_PKT_HOST = 9,      /* the host: its job, its clock's sync state */
	T4_PKT_REF = 16,
	T4_PKT_RET = 17,
	T4_PKT_CPU_SLICE = 18, /* a thread on a CPU, start..end */
	T4_PKT_GPU_SLICE = 19, /* a GPU job, start..end */
};

#define T4_MAX_COUNTERS 64 /* counters in one clock domain (one group) */
#define T4_MAX_DOMAINS 4096 /* clock domains of one log: what a decoder decodes
			     * (record refuses more; a machine has a few per
			     * CPU plus its uncore PMUs) */
#define T4_NAME_MAX 64     /* names: PMUs, events, domains, bookmarks */
#define T4_SPEC_MAX 256    /* an event string as the user typed it */
#define T4_CMDLINE_MAX 2048

/* Reference packet flags: why the trigger fired. */
enum {
	T4_REF_PERIODIC = 1u << 0,
	T4_REF_SINGLE = 1u << 1,  /* one trigger asked for by a command */
	T4_REF_COMMAND = 1u << 2, /* first trigger after a start/stop/bookmark */
	T4_REF_FINAL = 1u << 3,   /* the closing trigger of a recording */
};

/* Trigger IDs count from 0, one per grid point or command: 2^62 is beyond
 * any recording (146 years at one a nanosecond). A reader treats a larger
 * one as damage, so ID arithmetic (the next ID, a lag ahead) cannot wrap. */
#define T4_TRIGGER_ID_MAX (UINT64_C(1) << 62)

struct t4_ref_pkt {
	uint64_t trigger_id;  /* triggers broadcast before this one */
	uint32_t sched_id;    /* which central scheduler */
	uint32_t bookmark_id; /* current bookmark (0 = none) */
	uint64_t ref_ns;      /* reference clock at the broadcast (the session's
			       * ref_clock: MONOTONIC_RAW, or MONOTONIC) */
	uint64_t mono_ns;     /* CLOCK_MONOTONIC read together with it */
	uint64_t real_ns;     /* CLOCK_REALTIME read together with it */
	uint64_t local_clock; /* scheduler's own clock (TSC), 0 if none */
	uint32_t flags;       /* T4_REF_* */
	uint32_t overruns;    /* grid deadlines missed since previous trigger */
};

/* Return packet status flags. */
enum {
	T4_RET_READ_FAILED = 1u << 0, /* counts are 0, not measured */
	T4_RET_MULTIPLEXED = 1u << 1, /* time_running < time_enabled */
	T4_RET_BACKWARDS = 1u << 2,   /* a counter went backwards: delta 0 */
	T4_RET_FIRST = 1u << 3,       /* baseline read: counts are 0 */
};

struct t4_ret_pkt {
	uint64_t trigger_id;
	uint32_t domain_id;
	uint32_t flags;         /* T4_RET_* */
	uint64_t local_clock;   /* domain's free-running clock, never reset */
	uint64_t read_begin_ns; /* reference clock just before the read */
	uint64_t read_end_ns;   /* reference clock just after the read */
	uint64_t enabled_delta; /* time_enabled delta (ns), when multiplexed */
	uint64_t running_delta; /* time_running delta (ns), when multiplexed */
	uint32_t n_counts;
	uint64_t counts[T4_MAX_COUNTERS]; /* one delta per event, table order */
};

struct t4_session_pkt {
	char host[T4_NAME_MAX];
	char kernel[128];
	char version[32];
	char cmdline[T4_CMDLINE_MAX];
	uint64_t start_ref_ns;  /* reference clock at start */
	uint64_t start_real_ns; /* CLOCK_REALTIME at start */
	uint64_t period_ns;     /* 0 = no periodic triggers */
	uint32_t flags;         /* T4_SESSION_* */
	uint32_t ref_clock;     /* enum t4_ref_clock (appended field: absent
				 * in older logs, which means MONOTONIC_RAW) */
	uint64_t session_id;    /* the recording's identity: random (derived
				 * from the seed in virtual time), its low 32
				 * bits never 0; appended in format 1.1: 0 in
				 * older logs */
};
/* The tag every chunk of a recording carries in its header (FORMAT.md 2):
 * the low 32 bits of its session ID; 0 = none. */
static inline uint32_t t4_session_tag(const struct t4_session_pkt *s)
{
	return (uint32_t)s->session_id;
}
/* Whether two session packets are the same (a copy of the other). */
bool t4_session_same(const struct t4_session_pkt *a, const struct t4_session_pkt *b);
enum {
	T4_SESSION_SIMULATED = 1u << 0,   /* data comes from --sim */
	T4_SESSION_BPF_TRIGGER = 1u << 1, /* triggers fired by BPF timers in
					   * the kernel (else by threads) */
};
/* The reference clock of a log: ref_ns, read windows, set_ns, start_ref_ns. */
enum t4_ref_clock {
	T4_REFCLK_MONOTONIC_RAW = 0,
	T4_REFCLK_MONOTONIC = 1,
};
/* "CLOCK_MONOTONIC_RAW", "CLOCK_MONOTONIC", or "unknown". */
const char *t4_ref_clock_name(uint32_t ref_clock);
/* Now on that clock, in ns (an unknown value reads CLOCK_MONOTONIC_RAW). */
uint64_t t4_ref_clock_now(uint32_t ref_clock);

/* Clock-domain kinds (one per PMU instance, plus the host domains): the
 * one list. Each row: the enum name, its pinned on-disk number, the name
 * outputs use (t4_domain_kind_name, decode/index.c) and whether it is a
 * Tegra410 PMU kind, which also has a row in collector/kinds.c (events,
 * formulas) and in the simulator (collector/sim_model.c); the host kinds
 * have theirs in kinds.c's host_kinds. Those tables are checked against
 * this list (_Static_asserts on their counts, tests/test_couplings.c on
 * their rows): docs/ARCHITECTURE.md, "Adding a PMU kind". Numbers are
 * never reused; new rows go at the end. */
#define T4_DOMAIN_KINDS(X)                                                     \
	X(T4_DOM_OTHER, 0, "other", 0)                                         \
	X(T4_DOM_SOFTWARE, 1, "software", 0) /* clocked by the reference clock */ \
	X(T4_DOM_TSC, 2, "tsc", 0)           /* msr/tsc */                      \
	X(T4_DOM_UCF, 3, "ucf", 1)                                             \
	X(T4_DOM_PCIE, 4, "pcie", 1)                                           \
	X(T4_DOM_PCIE_TGT, 5, "pcie_tgt", 1)                                   \
	X(T4_DOM_CMEM_LAT, 6, "cmem_lat", 1)                                   \
	X(T4_DOM_NVLINK_C2C, 7, "nvlink_c2c", 1)                               \
	X(T4_DOM_NVCLINK, 8, "nvclink", 1)                                     \
	X(T4_DOM_NVDLINK, 9, "nvdlink", 1)                                     \
	X(T4_DOM_TRACEPOINT, 10, "tracepoint", 0)                              \
	X(T4_DOM_DRM, 11, "drm", 0) /* DRM clients' fdinfo (reference clock) */

#define T4_DOM_ENUM_(id, num, name, t410) id = num,
#define T4_DOM_COUNT_(id, num, name, t410) +1
#define T4_DOM_T410_COUNT_(id, num, name, t410) +(t410)
enum t4_domain_kind { T4_DOMAIN_KINDS(T4_DOM_ENUM_) };
enum {
	T4_DOM_KINDS = 0 T4_DOMAIN_KINDS(T4_DOM_COUNT_),      /* rows: 0..this - 1 */
	T4_DOM_T410_KINDS = 0 T4_DOMAIN_KINDS(T4_DOM_T410_COUNT_), /* Tegra410 rows */
};
#undef T4_DOM_ENUM_
#undef T4_DOM_COUNT_
#undef T4_DOM_T410_COUNT_

struct t4_domain_pkt {
	uint32_t domain_id;
	uint32_t kind;         /* enum t4_domain_kind */
	int32_t cpu;           /* CPU the domain is read on, -1 = any */
	int32_t clock_event;   /* index in the domain's events of its clock,
				* -1 = local clock is the reference clock */
	uint64_t nominal_hz;   /* nominal clock frequency, 0 if unknown */
	uint32_t sched_id;     /* scheduler whose triggers this domain answers */
	char name[T4_NAME_MAX]; /* e.g. "nvidia_ucf_pmu_0", "software" */
};

/* Event flags. */
enum {
	T4_EV_GAUGE = 1u << 0, /* counts are the level at the sample, not a delta */
	T4_EV_TASK = 1u << 1,  /* counts the domain's task wherever it runs (a
				* per-task counter: record -- COMMAND, -p, -t),
				* not a CPU or the whole system */
	T4_EV_INHERIT = 1u << 2, /* with T4_EV_TASK: and every task it starts
				  * (the command's children), from its exec */
};

struct t4_event_pkt {
	uint32_t domain_id;
	uint32_t index;       /* position in the domain's counts[] */
	uint32_t perf_type;
	uint32_t flags;       /* T4_EV_* */
	uint64_t config, config1, config2;
	double scale;         /* multiply raw counts by this (1.0 default) */
	char pmu[T4_NAME_MAX];
	char name[T4_NAME_MAX];  /* alias or derived name ("rd_bytes") */
	char spec[T4_SPEC_MAX];  /* the string as typed, expanded */
	char unit[32];           /* "bytes", "ns", "" */
};

/* ---- what a writer promises and a reader may assume (FORMAT.md 6.1) ----
 *
 * These constants are the format's, not one side's: the recorder (sched/)
 * and the decoder (decode/) both take them from here. */

/* Distinct bookmark names in one log: a writer refuses a command with one
 * more (and counts it: bookmarks_refused); a reader keeps totals for every
 * one of them. */
#define T4_BOOKMARK_NAMES 65536

/* A reader's join look-ahead: how many triggers of a scheduler's
 * reference packets it waits for before it takes a missing one as lost. */
#define T4_LOOKAHEAD_TRIGGERS 256

/* Late bookmarks: a bookmark timed before the recorder hears of it
 * (libt410trace's probe: set_ns is the application's call) reaches the log
 * after some reference packets of the triggers that follow its set_ns. A
 * writer puts its packet before scheduler 0's reference packet of trigger
 * first_trigger + t4_bookmark_late_triggers(period) + 1: no later than
 * T4_BOOKMARK_LATE_NS of triggers, nor than the look-ahead less one. A
 * reader that has read that reference packet may cut every interval up to
 * first_trigger into phases. */
#define T4_BOOKMARK_LATE_NS 250000000ull

static inline uint64_t t4_bookmark_late_triggers(uint64_t period_ns)
{
	uint64_t n = period_ns ? T4_BOOKMARK_LATE_NS / period_ns : 0;

	return n < T4_LOOKAHEAD_TRIGGERS - 1 ? n : T4_LOOKAHEAD_TRIGGERS - 1;
}

/* Whether the look-ahead caps the triggers a reader waits for at this
 * period below T4_BOOKMARK_LATE_NS (periods under ~0.98 ms): a writer must
 * then hand a late bookmark on at once, not on its next unhurried pass. */
static inline bool t4_bookmark_must_hurry(uint64_t period_ns)
{
	return (T4_LOOKAHEAD_TRIGGERS - 1) * period_ns < T4_BOOKMARK_LATE_NS;
}

struct t4_bookmark_pkt {
	uint32_t bookmark_id;
	uint64_t first_trigger; /* first trigger broadcast after it was set */
	char name[T4_NAME_MAX];
	uint64_t set_ns;        /* reference clock when it was set; 0 = unknown
				 * (appended field: absent in older logs) */
};

/* Totals so far; the last status packet in a log is authoritative. */
struct t4_status_pkt {
	uint64_t triggers;
	uint64_t overruns;
	uint64_t dropped;       /* packets dropped because a ring was full */
	uint64_t read_failures; /* return packets with T4_RET_READ_FAILED */
	uint64_t ref_ns;        /* when this status was taken */
	uint64_t lost_events;   /* activity events lost before the log (a full BPF
				 * ring buffer); appended field, 0 if absent */
	uint64_t bookmarks_refused; /* bookmark commands refused for lack of
				 * room (each answered with an error, none in
				 * the log); appended field, 0 if absent */
	uint64_t triggers_refused; /* libt410trace's trigger calls refused
				 * through the uprobe (none fired); appended
				 * field, 0 if absent */
};

/* The host a recording runs on (FORMAT.md 4.5b): the job a cluster's
 * scheduler launched it in, and the kernel's view of its clock's sync
 * (adjtimex), at the start and every second. */
enum {
	T4_HOST_SYNC_KNOWN = 1u << 0, /* adjtimex answered: the fields below hold */
	T4_HOST_SYNCED = 1u << 1,     /* the kernel says the clock is synchronised */
};
struct t4_host_pkt {
	uint64_t ref_ns;        /* reference clock when the state was read */
	uint64_t real_ns;       /* CLOCK_REALTIME then */
	uint32_t sync_flags;    /* T4_HOST_* */
	int32_t clock_state;    /* adjtimex's return (TIME_OK 0 .. TIME_ERROR 5); -1 unknown */
	uint64_t maxerror_us;   /* the kernel's maximum error of the clock */
	uint64_t esterror_us;   /* its estimated error */
	int32_t rank;           /* the task's rank in its job; -1 none */
	char host[T4_NAME_MAX];
	char job_id[32];        /* "" outside a job */
	char step[32];
	char nodelist[256];
};

/* CPU and GPU activity (bpf/activity): times are CLOCK_MONOTONIC ns (what
 * bpf_ktime_get_ns() reads); reference packets carry MONOTONIC next to the
 * reference clock, so a decoder converts them exactly. */
struct t4_task_pkt {
	uint32_t pid, tid, ppid;
	uint64_t mono_ns;          /* when this name was seen (exec, rename) */
	char name[T4_NAME_MAX];    /* the thread's comm */
};

struct t4_gpu_ctx_pkt {
	uint64_t context;          /* dma_fence context: one ring or queue */
	char driver[T4_NAME_MAX];
	char timeline[T4_NAME_MAX];
};

enum {
	T4_SLICE_PREEMPTED = 1u << 0,     /* switched out still runnable */
	T4_SLICE_START_RUNTIME = 1u << 1, /* switch-in not seen: start from the
					   * scheduler's run time (FORMAT.md) */
};
struct t4_cpu_slice_pkt {
	uint32_t cpu, pid, tid;
	uint64_t start_ns, end_ns; /* on the CPU, MONOTONIC */
	uint32_t flags;            /* T4_SLICE_* */
};

enum {
	T4_GPU_FROM_SUBMIT = 1u << 0, /* start: the job was submitted (fence emitted) */
	T4_GPU_FROM_RUN = 1u << 1,    /* start: the GPU scheduler ran the job */
};
struct t4_gpu_slice_pkt {
	uint64_t context, seqno;   /* the job's fence */
	uint32_t pid, tid;         /* the submitting thread (0: unknown) */
	uint64_t start_ns, end_ns; /* MONOTONIC; end: the fence signaled */
	uint32_t flags;            /* T4_GPU_* */
};

struct t4_packet {
	uint32_t type; /* enum t4_pkt_type; 0 = unknown type skipped */
	bool copy;     /* a copy of an earlier metadata packet (session,
			* domain, event, bookmark, task, GPU context),
			* repeated so that later chunks describe themselves:
			* nothing new unless damage lost the original */
	union {
		struct t4_ref_pkt ref;
		struct t4_ret_pkt ret;
		struct t4_session_pkt session;
		struct t4_domain_pkt domain;
		struct t4_event_pkt event;
		struct t4_bookmark_pkt bookmark;
		struct t4_status_pkt status;
		struct t4_task_pkt task;
		struct t4_gpu_ctx_pkt gpu_ctx;
		struct t4_cpu_slice_pkt cpu_slice;
		struct t4_gpu_slice_pkt gpu_slice;
		struct t4_host_pkt host;
	};
};

/* Bytes of struct t4_packet that carry information (a return packet with
 * 4 counters does not need the other 60): what rings copy. */
size_t t4_packet_size(const struct t4_packet *p);

/* ---- codec: one packet <-> bytes -------------------------------------- */

/* Delta state: one per chunk on each side; reset at every chunk start so
 * that chunks decode independently. Keeps the previous reference packet
 * per scheduler and the previous return packet per domain. A codec codes
 * one format version at a time (the chunk header's): format 1 codes each
 * trigger packet on its own, formats 2 and 3 (the default) gather runs of
 * them into batches of bit-packed records (docs/FORMAT.md 5a), so an encode may
 * write nothing (the packet waits in the open batch) or a whole batch. */
struct t4_codec;

struct t4_codec *t4_codec_new(void); /* format T4_FORMAT_VERSION */
void t4_codec_free(struct t4_codec *c); /* accepts NULL */
/* A new chunk: no state, nothing pending (an open batch is dropped). */
void t4_codec_reset(struct t4_codec *c);
/* A new chunk of this format version (1 or 2): reset and code it so. */
int t4_codec_start(struct t4_codec *c, unsigned version);
unsigned t4_codec_version(const struct t4_codec *c);

/* Largest encoding of any packet on its own. */
#define T4_PKT_MAX_ENCODED 4096
/* Most bytes one encode or flush writes (a whole batch and a packet). */
#define T4_CODEC_MAX_OUT (40u << 10)

/* Encode p into out (cap >= T4_CODEC_MAX_OUT is always enough). Returns
 * bytes written (format 2: 0 when a trigger packet went into the open
 * batch; a metadata packet writes the open batch first) or a negative
 * errno (-EINVAL for a malformed packet, e.g. n_counts > T4_MAX_COUNTERS;
 * -ENOBUFS when it does not fit: nothing written). */
int t4_codec_encode(struct t4_codec *c, const struct t4_packet *p,
		    uint8_t *out, size_t cap);
/* Write the open batch (format 2), if any, before the chunk closes:
 * bytes written (cap >= T4_CODEC_MAX_OUT). */
size_t t4_codec_flush(struct t4_codec *c, uint8_t *out, size_t cap);
/* Bytes the open batch will take once written (0: none). */
size_t t4_codec_pending(const struct t4_codec *c);
/* Decode one packet from in[0..len). Returns bytes consumed, or a negative
 * errno (-EBADMSG: malformed). A packet of unknown type is consumed and
 * returned with p->type = 0. Inside a batch (format 2) every packet but
 * the batch's last consumes 0 bytes: call again with the same input. */
int t4_codec_decode(struct t4_codec *c, const uint8_t *in, size_t len,
		    struct t4_packet *p);

/* ---- the writer ------------------------------------------------------- */

struct t4_log;
struct t4_ring;

enum t4_log_backend {
	T4_LOG_URING = 0, /* default: io_uring writes at explicit offsets */
	T4_LOG_PWRITE = 1, /* plain pwrite(2), for comparison and fallback */
};

/* Called by the writer thread with each packet it puts into the log, in
 * log order (the log's own status packets too), e.g. to keep an index of
 * what the log holds without reading it back. Must not block. */
typedef void (*t4_log_observe_fn)(void *ud, const struct t4_packet *p);

struct t4_log_opts {
	const char *path;     /* "-": standard output */
	const char *name;     /* the file's name in messages; default: path
			       * (record writes FILE.partial-PID-X/log, says FILE) */
	int zstd_level;       /* 0: t4_log_zstd_default(format) */
	unsigned format;      /* format version to write: 0 = the current
			       * (T4_FORMAT_VERSION), 2 or 1 = for readers
			       * before format 3 or 2 (larger files) */
	uint32_t chunk_bytes; /* raw bytes that close a chunk; default 256 KiB */
	uint32_t chunk_ms;    /* a chunk is closed at least this often after
			       * its oldest trigger (or packet); 100;
			       * UINT32_MAX: by size only */
	uint32_t fsync_ms;    /* fsync interval; 1000; UINT32_MAX = only at close */
	uint32_t inflight;    /* compressed chunks in flight; default 4; always
			       * 1 on a pipe, FIFO, socket or terminal, which
			       * are written strictly in order */
	enum t4_log_backend backend;
	t4_log_observe_fn observe; /* optional */
	void *observe_ud;
	bool quiet;           /* not a word on stderr while a FIFO at path
			       * waits for its reader (t4_open_in_place) */
	const volatile sig_atomic_t *stop; /* optional: that wait ends with
					    * -EINTR once it is set */
};

/* The zstd level a log of this format is written at by default, chosen by
 * measurement (docs/PERFORMANCE.md, "The zstd level"): 1 for format 1,
 * whose bytes zstd halves; -3 (a fast level: literals stored, not entropy
 * coded) for formats 2 and 3, whose bit-packed records zstd shrinks by a
 * few percent at most: their writer then does fewer instructions than
 * format 1's, for 0.2-0.7% more bytes than at level 1. */
int t4_log_zstd_default(unsigned format);
/* 0 for a level a log can be written at (zstd's own range, negative levels
 * its fast ones), else -EINVAL with the message "use MIN..-1 or 1..MAX";
 * 0 is no level (it is the default in struct t4_log_opts). */
int t4_log_zstd_check(int level);

/* Totals of a writer, read with t4_log_stats(). */
struct t4_log_stats {
	uint64_t packets;       /* packets written to the log */
	uint64_t copies;        /* copies of metadata it repeated (not in packets) */
	uint64_t dropped;       /* packets dropped at full rings */
	uint64_t chunks;
	uint64_t raw_bytes;     /* encoded packet bytes before zstd */
	uint64_t file_bytes;    /* bytes on disk */
	int error;              /* sticky: first write error, 0 if none */
};

/* Create the file and the writer. Nothing runs until t4_log_start(). The
 * file is new (O_EXCL, O_NOFOLLOW, mode 0666 less the umask): an existing
 * path is written in place only when it is a FIFO, socket or character
 * device; an existing regular file, directory or block device is refused
 * (-EEXIST), and so is a terminal (-EINVAL: a log is binary), a symbolic
 * link planted at a new name is never followed. An
 * output that cannot seek (pipe, FIFO, socket, "-" on
 * a pipe) is written strictly in order: one write in flight, a short
 * write completed before the next chunk; a slow reader then makes the
 * rings drop (counted), never the file interleave. */
int t4_log_open(struct t4_log **out, const struct t4_log_opts *opts);

/* Ring flags. */
enum {
	T4_RING_NONBLOCK = 0, /* producers on the trigger path: drop if full */
	T4_RING_WAIT = 1,     /* offline producers (metadata, tests): wait */
};

/* A single-producer ring into the writer, `bytes` of capacity (rounded up
 * to a power of two). Create every ring before t4_log_start(); the ring
 * belongs to the log and is freed with it. */
int t4_log_ring(struct t4_log *log, size_t bytes, int flags,
		struct t4_ring **out);

/* Bytes packet p takes in a ring (a length word, its t4_packet_size()
 * bytes, padding): what producers size their rings by. */
size_t t4_ring_record_bytes(const struct t4_packet *p);

/* Start the writer thread. */
int t4_log_start(struct t4_log *log);

/* Producer side: copy a packet into the ring. Never blocks on a
 * T4_RING_NONBLOCK ring: when it is full the packet is dropped, counted,
 * and -ENOBUFS returned. Allocation-free, lock-free. Only one thread may
 * put into a given ring. */
int t4_ring_put(struct t4_ring *r, const struct t4_packet *p);

/* The same for a producer that keeps a packet it could not queue and
 * offers it again later (bookmarks): a full T4_RING_NONBLOCK ring returns
 * -EAGAIN and counts nothing (a T4_RING_WAIT ring waits, as for
 * t4_ring_put, so an offline producer's order stays its own). */
int t4_ring_try_put(struct t4_ring *r, const struct t4_packet *p);

/* Packets dropped so far on this ring. */
uint64_t t4_ring_dropped(const struct t4_ring *r);

/* Stop accepting packets, drain every ring, write the final chunk and a
 * status packet with the exact drop count, fsync, close the file and free
 * everything. `final_status` (optional) supplies triggers/overruns that the
 * writer cannot know, and in `dropped` the packets its producers chose
 * not to put (a simulated drop, 0 for a live recording); the log adds
 * every packet it dropped itself. Returns the sticky write error if there
 * was one. stats (optional) gets the totals, `dropped` as in the packet. */
int t4_log_close(struct t4_log *log, const struct t4_status_pkt *final_status,
		 struct t4_log_stats *stats);

/* Live totals, safe to call from any thread while recording. */
void t4_log_stats(const struct t4_log *log, struct t4_log_stats *stats);

/* The sticky write error (a positive errno; 0 while there is none): one
 * load, safe from any thread, for a producer that stops once nothing it
 * puts can be kept (a full disk). */
int t4_log_error(const struct t4_log *log);

/* ---- the reader ------------------------------------------------------- */

struct t4_reader;

/* Called for every problem found that does not stop reading (damaged
 * chunk, truncated tail). `offset` is the byte offset of the chunk. */
typedef void (*t4_reader_warn_fn)(void *ud, uint64_t offset, const char *msg);

struct t4_reader_stats {
	uint64_t chunks;         /* valid chunks read */
	uint64_t damaged_chunks; /* chunks skipped: bad CRC, bad frame */
	uint64_t truncated;      /* 1 if the file ends inside a chunk */
	uint64_t packets;
	uint64_t unknown_packets; /* packets of types this reader skips */
	uint64_t raw_bytes;      /* decompressed payload bytes */
	uint64_t file_bytes;     /* file size */
	uint64_t skipped_bytes;  /* bytes not belonging to a valid chunk */
	uint64_t copies;         /* copies of metadata packets (not in packets) */
	uint64_t next_recording; /* offset of the chunk where another recording
				  * starts: reading stopped there; 0 = none */
};

/* Open a log file; "-" reads standard input, streamed without seeking
 * (a pipe works; bounded memory: one chunk plus a resync window). Fails
 * with a one-line message for an empty file, a file that is not a
 * t410trace log (no valid chunk header within the largest first chunk
 * there can be), or a newer format version. A file whose first header is
 * damaged opens at its first valid chunk (a warning names what was
 * skipped). warn may be NULL (warnings
 * then go to stderr via t4_warn). */
int t4_reader_open(struct t4_reader **out, const char *path,
		   t4_reader_warn_fn warn, void *ud);
/* The same over a memory buffer (not copied; must outlive the reader). */
int t4_reader_open_mem(struct t4_reader **out, const void *buf, size_t len,
		       t4_reader_warn_fn warn, void *ud);
/* Next packet: 1 = got one, 0 = end of log, < 0 = error. The end comes
 * early at a chunk that starts another recording (two logs concatenated:
 * FORMAT.md 7); stats.next_recording then says where. Copies of metadata
 * (p->copy) are returned too, counted in stats.copies. */
int t4_reader_next(struct t4_reader *r, struct t4_packet *p);
void t4_reader_stats(const struct t4_reader *r, struct t4_reader_stats *s);
void t4_reader_close(struct t4_reader *r); /* accepts NULL */
#define T4_READER_NOTE_MAX 8448 /* the note with two paths of PATH_MAX */
/* The warning for a file whose reading stopped at another recording
 * (st->next_recording != 0): where, and how to read the next one (`name`:
 * the file, "-" for standard input; `cmd`: the command to suggest); ""
 * when it holds one recording. */
const char *t4_reader_recording_note(const char *name, const struct t4_reader_stats *st,
				     const char *cmd, char *buf, size_t cap);
/* What damage the reading met, for info and decode's summary alike:
 * "none", or "N damaged chunks skipped, (not) truncated, M bytes
 * unreadable". */
const char *t4_reader_damage_note(const struct t4_reader_stats *st, char *buf, size_t cap);

/* ---- the chunk layer (shared by writer and reader, see FORMAT.md) ----- */

#define T4_CHUNK_MAGIC "T4TRACE\x1a"
#define T4_CHUNK_MAGIC_LEN 8
#define T4_FORMAT_VERSION 3 /* the newest this code reads and writes (3:
			     * format 2 with quiet records, FORMAT.md 5a.8) */
#define T4_CHUNK_HDR_SIZE 64
#define T4_CHUNK_MAX_RAW (16u << 20) /* a reader refuses larger chunks */

struct t4_chunk_hdr {
	uint16_t version;
	uint16_t hdr_size;
	uint32_t flags;         /* reserved, 0 */
	uint64_t seq;           /* 0, 1, 2, ... */
	uint64_t first_trigger; /* UINT64_MAX when no trigger packet */
	uint64_t last_trigger;  /* 0 when no trigger packet */
	uint32_t raw_size;
	uint32_t comp_size;
	uint32_t packets;
	uint32_t payload_crc;   /* CRC32C of the compressed payload */
	uint32_t tag;           /* the recording's tag (t4_session_tag), 0 =
				 * none (format 1.0 and writers without a
				 * session) */
};

/* Serialise a header into 64 bytes (computing its own CRC). */
void t4_chunk_hdr_pack(const struct t4_chunk_hdr *h, uint8_t out[T4_CHUNK_HDR_SIZE]);
/* Parse 64 bytes: 0, -EBADMSG (bad magic or header CRC), or -EPROTO (a
 * newer format version; the header CRC was valid). */
int t4_chunk_hdr_unpack(const uint8_t in[T4_CHUNK_HDR_SIZE], struct t4_chunk_hdr *h);

/* ---- the reader, one step at a time (decode -j) ------------------------ */

/* t4_reader_next() is three steps that a caller may run itself, so as to
 * unpack several chunks at once on other threads: (1) in log order on one
 * thread, t4_reader_next_chunk() finds the next chunk and reads its
 * compressed payload (its warnings through the reader's callback, as
 * t4_reader_next() says them); (2) on any thread, a t4_unpacker checks,
 * decompresses and decodes it; (3) in log order, t4_reader_chunk_begin()
 * before handing out its packets and t4_reader_chunk_end() after, each
 * chunk's warning (result.warning) said after its packets. Done so, the
 * packets, warnings and statistics are exactly t4_reader_next()'s. Steps
 * 1 and 3 may run on two threads at once (they share nothing); a reader
 * is read either so or with t4_reader_next(), not both. */
struct t4_chunk {
	uint64_t offset;         /* where it starts in the log */
	struct t4_chunk_hdr h;   /* its valid header */
	uint8_t *payload;        /* its h.comp_size compressed bytes */
	size_t cap;              /* (payload's size: reused by the next call) */
	struct t4_reader_stats before; /* (step 1's statistics when found) */
};
/* 1: the next chunk into c (c zeroed the first time), 0 at the end of the
 * recording, or a negative errno (an I/O error: the log ends there). */
int t4_reader_next_chunk(struct t4_reader *r, struct t4_chunk *c);
void t4_chunk_free(struct t4_chunk *c); /* its buffer; c may be reused */

/* What one chunk gave, beyond its packets. */
struct t4_chunk_result {
	uint64_t offset;            /* the chunk's */
	uint32_t seen;              /* packets decoded (unknown types too) */
	struct t4_reader_stats st;  /* its part of the reader's statistics */
	char warning[512];          /* "" or the warning to say after its packets
				     * (a damaged chunk: its reason) */
	bool has_session;           /* it holds a session packet; the first: */
	bool session_first;         /* it is the chunk's first packet */
	bool session_copy;
	struct t4_session_pkt session;
};

struct t4_unpacker;
int t4_unpacker_new(struct t4_unpacker **out);
void t4_unpacker_free(struct t4_unpacker *u); /* accepts NULL */
/* Start on chunk c: its payload checked and decompressed (not read after
 * this call returns). */
void t4_unpacker_start(struct t4_unpacker *u, const struct t4_chunk *c);
/* The chunk's next packet: 1, or 0 at its end (damage ends it early: the
 * result says so). p may be any memory of sizeof(struct t4_packet). */
int t4_unpacker_next(struct t4_unpacker *u, struct t4_packet *p);
/* Valid for the chunk's first packet once t4_unpacker_next() returned it,
 * and whole once it returned 0. */
const struct t4_chunk_result *t4_unpacker_result(const struct t4_unpacker *u);

/* Before a chunk's packets are handed out: 1, or 0 when its first packet
 * opens another recording (FORMAT.md 7): none of it is handed out, no
 * later chunk is taken, and once step 1 has stopped, t4_reader_end_before()
 * ends the recording there. */
int t4_reader_chunk_begin(struct t4_reader *r, const struct t4_chunk_result *res);
/* After them: its statistics (and the recording's session) taken. */
void t4_reader_chunk_end(struct t4_reader *r, const struct t4_chunk_result *res);
void t4_reader_end_before(struct t4_reader *r, const struct t4_chunk *c);

#endif
