/* collector.h - counter sources: what can be counted, what the user asked
 * for, and reading it.
 *
 * One layer per file:
 *   pmu.c     discovery: every PMU under a sysfs root (type, cpumask,
 *             identifier, peer, format/ fields, events/ aliases);
 *   kinds.c   Tegra410 knowledge as data: one table of the seven PMU kinds
 *             (name pattern, identifier, events, default set, clock event,
 *             seed-000 formulas); unknown PMUs work through raw syntax;
 *   events.c  the perf event syntax users type (pmu/term=v,.../, aliases,
 *             instance wildcards, {groups}, software events, msr/tsc/,
 *             tracepoints) -> a list of counters with exact attr values;
 *   domain.c  clock domains: counters grouped per PMU instance (per CPU for
 *             CPU-bound PMUs), opened as one perf group each (leader: the
 *             clock event), read with one read() into a return packet;
 *   sim.c     the simulated Tegra410: a sysfs tree of the same shape as the
 *             kernel's plus a workload model that produces counts and knows
 *             its exact ground truth.
 *   pci.c     PCI device -> socket/RC/root port through the NVIDIA DVSEC.
 *   drm.c     DRM client usage stats: one /proc/<pid>/fdinfo/<fd> text
 *             parsed by the kernel's spec (drm-usage-stats.rst);
 *   drm_src.c the DRM source: the workload's DRM clients as a clock domain
 *             of their own (kind drm), found by a scanner thread, read by
 *             an unpinned monitor, events appended as clients appear.
 *
 * A PMU set, an event list and a domain set are plain context structs owned
 * by the caller: no globals, getters have no side effects.
 * Errors follow util.h: 0 or a negative errno, one-line message in
 * t4_errmsg() naming the offending input.
 */
#ifndef T4_COLLECTOR_H
#define T4_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "packets/packets.h"

#define T4_SYSFS_DEFAULT "/sys/bus/event_source/devices"

/* ---- discovery (pmu.c) ------------------------------------------------ */

enum t4_cfg_field { T4_CFG0 = 0, T4_CFG1 = 1, T4_CFG2 = 2 };

#define T4_FORMAT_MAX_RANGES 8

/* One format/<name> file, e.g. "config1:0-7" or "config:0-7,32-35".
 * Value bits are laid into the ranges in order, lowest value bit first. */
struct t4_format {
	char name[32];
	uint8_t field; /* enum t4_cfg_field */
	uint8_t n_ranges;
	struct {
		uint8_t lo, hi;
	} ranges[T4_FORMAT_MAX_RANGES];
};

/* One events/<name> file, with its optional .scale and .unit. */
struct t4_alias {
	char name[T4_NAME_MAX];
	char terms[128]; /* e.g. "event=0x123" */
	double scale;    /* 1.0 when no .scale file */
	char unit[32];
};

struct t4_kind;

/* How a PMU's name came about (kinds.c recognises it; `list` says it):
 * kernels name the same Tegra410 hardware differently. */
enum t4_naming {
	T4_NAMING_NONE = 0, /* not a Tegra410 PMU */
	T4_NAMING_TEGRA410, /* the Tegra410 drivers' name: nvidia_ucf_pmu_<socket>,
			     * nvidia_pcie_pmu_<socket>_rc_<rc>, ... */
	T4_NAMING_GENERIC,  /* the NVIDIA arm_cspmu driver's name for a PMIIDR its
			     * table lacks: nvidia_uncore_pmu_<n>, n in probe order */
	T4_NAMING_OTHER,    /* another driver's name (a Grace-era kernel's
			     * nvidia_scf_pmu_<socket>, ...): known by identifier */
};

struct t4_pmu {
	char name[T4_NAME_MAX];
	uint32_t type;
	int cpu;              /* first CPU of cpumask, -1 when none */
	char cpumask[256];    /* "" when the file is absent */
	char associated_cpus[256];
	char identifier[64];
	char peer[64];
	struct t4_format *formats;
	size_t n_formats;
	struct t4_alias *aliases;
	size_t n_aliases;
	const struct t4_kind *kind; /* NULL: not a Tegra410 kind */
	enum t4_naming naming;      /* how kind was recognised */
	char family[96];            /* an NVIDIA PMU that is no Tegra410 kind,
				     * by identifier ("Grace SCF"); else "" */
	int socket;                 /* from a Tegra410 name, else the rank of
				     * its CPUs (socket order); -1 when none */
	int instance;               /* RC number for PCIE kinds (by order under
				     * another driver's name); -1 */
	bool simulated;             /* read from the simulator */
	bool unbacked;              /* in a --sim set, a PMU the simulator does
				     * not model: refused when opened */
};

struct t4_pmu_set {
	struct t4_pmu *pmus;
	size_t n;
	char root[512];
	bool simulated; /* the root was made by t4_sim_create(), or its
			 * PMUs are backed by one (t4_sim_attach) */
};

/* Read every PMU under root (NULL: T4_SYSFS_DEFAULT), sorted by name, and
 * recognise the Tegra410 ones (t4_kinds_recognise). */
int t4_pmus_discover(struct t4_pmu_set *set, const char *root);
void t4_pmus_free(struct t4_pmu_set *set);
const struct t4_pmu *t4_pmus_find(const struct t4_pmu_set *set,
				  const char *name);
const struct t4_format *t4_pmu_format(const struct t4_pmu *pmu,
				      const char *name);
const struct t4_alias *t4_pmu_alias(const struct t4_pmu *pmu,
				    const char *name);
/* Parse a format spec ("config1:0-7,32-35") into f (name not touched). */
int t4_format_parse(const char *spec, struct t4_format *f);
/* Set `value` into the bits f describes; -ERANGE if it does not fit. */
int t4_format_apply(const struct t4_format *f, uint64_t value,
		    uint64_t config[3]);
/* Write f back as its spec ("config1:0-7,32-35"); returns buf. */
const char *t4_format_str(const struct t4_format *f, char *buf, size_t cap);
/* Width in bits of the value f holds (sum of its ranges). */
unsigned t4_format_bits(const struct t4_format *f);

/* ---- Tegra410 kinds (kinds.c) ------------------------------------------ */

/* A derived metric of seed 000, evaluated later by the decoder. `expr`
 * uses event names of the kind, the variable `elapsed_ns` (interval length
 * on the reference clock), numbers, + - * / and parentheses. */
struct t4_formula {
	const char *name; /* "mem_read_bw" */
	const char *unit; /* "GB/s", "req/cycle", "ns", "GHz" */
	const char *expr; /* "mem_bytes_rd / elapsed_ns" */
	const char *desc; /* one line for `list --metrics` */
	bool brief;       /* a headline metric (the decoder's summary table) */
	bool per_task;    /* meaningful only where every event it reads counts
			   * tasks (T4_EV_TASK), not CPUs: absent elsewhere */
};

struct t4_kind_event {
	const char *name;
	uint64_t config;  /* the `event` value (config bits) */
	const char *unit; /* of its counts: "bytes", "requests", "cycles",
			   * "req-cycles" (requests outstanding, added up
			   * every cycle), "lines" */
	const char *desc; /* one line for `list` */
};

struct t4_kind {
	enum t4_domain_kind id;
	const char *label;          /* "UCF", "PCIE", ... */
	const char *prefix;         /* name prefix: "nvidia_ucf_pmu_" */
	const char *identifier;     /* sysfs identifier: the PMIIDR in hex
				     * ("2cf2036b") for the arm_cspmu kinds, the
				     * ACPI HID ("NVDA2021") for the others */
	const char *clock_event;    /* "cycles" */
	/* config1/config2 the Tegra410 driver programs into the filter
	 * registers when a counter sets no filter (all sources, destinations,
	 * root ports). The generic driver (T4_NAMING_GENERIC) writes config1
	 * and config2 there as they are, 0 meaning all-ones: on such a PMU
	 * t410trace sets these itself. 0: none. */
	uint64_t generic_config1, generic_config2;
	const struct t4_kind_event *events;
	size_t n_events;
	const char *const *defaults; /* default event names, NULL-ended */
	const struct t4_formula *formulas;
	size_t n_formulas;
};

/* The derived metrics of any domain kind: the seed-000 formulas of the
 * Tegra410 kinds and the host's own (CPU utilisation from cpu-clock and
 * task-clock, context switches per second, TSC frequency); n = 0 and NULL
 * for a kind without formulas. label (optional) gets the kind's label
 * ("UCF", "software", "TSC", ...). */
const struct t4_formula *t4_kind_formulas(enum t4_domain_kind id, size_t *n,
					  const char **label);

/* Every kind's metrics, for listing: the Tegra410 kinds, then the host's
 * with any (software, TSC, DRM). pattern: the DRM domain's, whose
 * metrics the decoder makes per client and engine from these patterns
 * (CLIENT, ENGINE stand for the names it finds). */
struct t4_metric_set {
	enum t4_domain_kind id;
	const char *label;
	const struct t4_formula *formulas;
	size_t n;
	bool pattern;
};
/* The i-th set into *out; false past the last. */
bool t4_metric_set_at(size_t i, struct t4_metric_set *out);

/* The kind of a PMU: by its identifier when the catalog knows it (the
 * hardware's PMIIDR or the firmware's ACPI HID outrank a name a driver
 * chose), else by its Tegra410 name; NULL if neither. */
const struct t4_kind *t4_kind_of(const char *pmu_name, const char *identifier);
/* Whether two sysfs identifiers are the same: as hex numbers when both
 * are ("2cf2036b" = "0x2CF2036B"), else as text, any case. */
bool t4_identifier_eq(const char *a, const char *b);
/* Recognise every PMU of the set: kind, naming, family, socket and RC
 * number. Under a name that is not the Tegra410 drivers' the socket is
 * the rank of the PMU's first associated CPU among the Tegra410 PMUs'
 * (the kernel names by the CPU's node) and the RC number the PMU's rank
 * among its kind and socket in name order (the firmware's instance ID is
 * not in sysfs). */
int t4_kinds_recognise(struct t4_pmu_set *set); /* 0 or -ENOMEM */
/* The sysfs layout a set shows, in words for `list`: the namings of its
 * Tegra410 PMUs with their counts (or that it has none), and the NVIDIA
 * PMUs of another chip it has; returns buf. */
const char *t4_pmus_layout(const struct t4_pmu_set *set, char *buf, size_t cap);
const struct t4_kind *t4_kind_by_id(enum t4_domain_kind id);
/* All Tegra410 kinds, for iteration. */
const struct t4_kind *t4_kinds(size_t *n);
/* A kind's event by name (NULL if the kind has no such event). */
const struct t4_kind_event *t4_kind_event(const struct t4_kind *k,
					  const char *name);
/* A kind's event by its `event` value (NULL if none has it). */
const struct t4_kind_event *t4_kind_event_by_config(const struct t4_kind *k,
						    uint64_t config);
/* The unit of a host PMU's event sysfs does not give (msr/tsc/:
 * "cycles"), NULL when unknown. */
const char *t4_host_event_unit(const char *pmu, const char *event);
/* What the catalog knows of a PMU's alias: the unit of its counts (its
 * .unit file, else the catalog's; "" when unknown) and a one-line
 * description (NULL when none). */
const char *t4_alias_unit(const struct t4_pmu *pmu, const struct t4_alias *a);
const char *t4_alias_desc(const struct t4_pmu *pmu, const struct t4_alias *a);
/* True for the kinds with one PMU per PCIE root complex ("_rc_<n>"). */
bool t4_kind_has_rc(const struct t4_kind *k);
/* Socket and RC number from a PMU name of kind k (-1 when absent). */
int t4_kind_ids(const struct t4_kind *k, const char *name, int *socket,
		int *instance);

/* ---- events (events.c) --------------------------------------------------- */

struct t4_counter {
	const struct t4_pmu *pmu; /* into the pmu set; must outlive this */
	char name[T4_NAME_MAX];   /* alias name, or the terms when raw */
	char spec[T4_SPEC_MAX];   /* canonical "pmu/terms/" */
	uint32_t type;
	uint64_t config, config1, config2;
	double scale;
	char unit[32];
	int cpu;      /* CPU to count on; -1 = the PMU's cpumask CPU, or any
		       * CPU for a per-task counter */
	int tid;      /* the thread counted (-p/-t), 0 = every task */
	int group;    /* index of the user's {group}, -1 when none */
	bool is_clock; /* the PMU kind's clock event (cycles) */
	bool inherit;  /* per-task: the task's children too, counted from
			* its exec on (record -- COMMAND) */
	/* event modifiers :u :k :h (perf_event_attr.exclude_*) */
	bool exclude_user, exclude_kernel, exclude_hv;
	/* From a sysfs alias that encodes its event otherwise than the
	 * catalog: the catalog's encoding (config, config1, config2), which
	 * t4_events_check_aliases tries when the alias reads 0. */
	bool check_alias;
	uint64_t catalog_config[3];
};

/* What a recording counts besides the default (every task, every online
 * CPU): perf's -C LIST and -p PID / -t TID. */
struct t4_target {
	const char *cpus; /* -C: per-CPU PMUs (software, tracepoint, msr, the
			   * CPU PMU) only on these CPUs; NULL: every online
			   * CPU. Uncore PMUs count their whole socket and
			   * are not affected. */
	const int *tids;  /* -p/-t: count only these threads (one per-task
			   * counter per event and thread); uncore PMUs are
			   * refused. NULL: system-wide. */
	size_t n_tids;
	bool command;     /* tids is the command of record -- COMMAND, not
			   * yet exec'd: its CPU-side events (software,
			   * tracepoint, CPU PMU) count it and every task it
			   * starts, from its exec on, like perf stat; the
			   * other PMUs (uncore, msr) count system-wide */
};

/* 0 when every CPU of list (-C) is online; -EINVAL naming the first one
 * that is not ("CPU 9 is not online (online: 0-7)") or why list is
 * malformed; another -errno when the online CPUs cannot be read. */
int t4_cpus_check_online(const char *list);

struct t4_evlist {
	struct t4_counter *v;
	size_t n, cap;
	int n_groups;
	struct t4_target target; /* set before parsing; default: all */
};

/* A PMU, event or filter name as the event syntax reads it back: as it is
 * when made of [A-Za-z0-9_.-] only (every real PMU's), else in double
 * quotes with '"' and '\' escaped by '\' ("acme,fabric"). False when it
 * does not fit cap (2 * strlen(name) + 3 always does). */
bool t4_events_quote(char *buf, size_t cap, const char *name);
/* Parse a comma-separated event string and append its counters. On error
 * nothing is appended and the message names the offending part. */
int t4_events_parse(struct t4_evlist *l, const struct t4_pmu_set *set,
		    const char *spec);
/* Append the default set: every Tegra410 PMU's default events when the
 * set has any (not with -p/-t), else this host's software events and,
 * counting the system (not a task target), msr/tsc/. */
int t4_events_default(struct t4_evlist *l, const struct t4_pmu_set *set);
void t4_evlist_free(struct t4_evlist *l);
/* Check the counters built from a sysfs alias that encodes its event
 * otherwise than the catalog (t4_counter.check_alias) before recording: each is
 * counted beside the catalog's encoding for two trigger periods (10 ms at
 * least, 100 ms at most; a perf group on its PMU's CPU, or the simulator's
 * model at two instants for simulated PMUs; sim may be NULL), and one
 * whose alias read 0 while the catalog's encoding counted is switched to
 * the catalog's encoding (config words and spec), with a warning line on
 * stderr. Returns how many were switched, or -ENOMEM. Pairs that cannot be
 * opened are left as they are. */
#define T4_ALIAS_CHECK_MIN_NS 10000000ull
#define T4_ALIAS_CHECK_MAX_NS 100000000ull
struct t4_sim;
int t4_events_check_aliases(struct t4_evlist *l, const struct t4_sim *sim, uint64_t period_ns);
/* The i-th event name pmu takes: its sysfs aliases, then the catalog's
 * events sysfs lacks (on a Tegra410 PMU with an `event` field); NULL past
 * the last. */
const char *t4_pmu_event_name(const struct t4_pmu *pmu, size_t i);
/* The catalog event a name means on pmu where t410trace encodes it from
 * the catalog rather than a sysfs alias: sysfs lacks the name, or another
 * driver named the PMU (T4_NAMING_GENERIC, T4_NAMING_OTHER: its aliases are
 * that driver's, the generic `cycles` a cycle-counter request the Tegra410
 * PCIE-TGT does not encode so). NULL: its alias, or no such event. */
const struct t4_kind_event *t4_catalog_event(const struct t4_pmu *pmu, const char *name);
/* A software event known by name. */
struct t4_sw_event {
	const char *name;  /* "cpu-clock" */
	const char *alt;   /* perf's short alias ("cs"), or NULL */
	uint64_t config;   /* PERF_COUNT_SW_* */
	const char *unit;  /* of its counts: "ns", "faults", ... */
	const char *desc;  /* one line for `list` */
};
/* The i-th software event, NULL past the last one. */
const struct t4_sw_event *t4_software_event(size_t i);

/* ---- the simulated Tegra410 (sim.c) ---------------------------------------- */

struct t4_sim;

/* How a simulated Tegra410 is made. Every field is used as given (a zeroed
 * struct means no drift at all); t4_sim_create() gives the defaults. */
struct t4_sim_opts {
	uint64_t seed;
	const char *dir;     /* sysfs tree; NULL: a fresh temporary directory,
			      * removed by t4_sim_free */
	uint32_t drift_ppm;  /* each PMU's constant drift is seeded in
			      * [-drift_ppm, +drift_ppm] (default 50) */
	uint32_t wander_ppm; /* slow frequency wander within +-wander_ppm,
			      * stepping at schedule-cycle boundaries; 0 = none */
	uint64_t epoch_ns;   /* reference time of the model's t = 0; 0 = now
			      * (t4_mono_raw_ns()), a fixed value makes virtual-time
			      * recordings byte-identical */
};
#define T4_SIM_DRIFT_PPM 50

/* Build a simulated Tegra410 (2 sockets, 34 PMU instances): writes a sysfs
 * tree under o->dir. Deterministic for a seed, drift and wander. Drift and
 * wander are each at most 100000 ppm (-EINVAL). */
int t4_sim_create_opts(struct t4_sim **out, const struct t4_sim_opts *o);
/* The same with the defaults: drift 50 ppm, no wander, epoch now. */
int t4_sim_create(struct t4_sim **out, uint64_t seed, const char *dir);
void t4_sim_free(struct t4_sim *sim); /* accepts NULL */
const char *t4_sim_root(const struct t4_sim *sim);
/* Back the Tegra410 PMUs of a set discovered elsewhere (a fixture of
 * another kernel's sysfs layout) by the simulator: each PMU of a kind the
 * model has on that socket (and RC) is read from it, as the Tegra410
 * drivers would program it, on the simulator's CPU (one this process runs
 * on, as in its own tree); every other PMU is refused when opened (its
 * type number is the fixture's, not this kernel's). Marks the set
 * simulated; returns the number of PMUs backed. */
size_t t4_sim_attach(const struct t4_sim *sim, struct t4_pmu_set *set);

/* Read a simulated PMU's counters at reference time ref_ns (the sim adds
 * its own read jitter). values[i] are the cumulative 64-bit counter values
 * of counters[i] (never reset, like the hardware), clock is the PMU's
 * free-running cycle counter. *true_ns receives the exact instant the
 * sample was taken (>= ref_ns). Deterministic given (seed, call sequence). */
int t4_sim_read(struct t4_sim *sim, const struct t4_counter *counters,
		size_t n, uint64_t ref_ns, uint64_t values[], uint64_t *clock,
		uint64_t *true_ns);

/* A prepared reader of one simulated PMU's counters (all of one PMU): the
 * PMU lookup and each counter's filter decoding are done once, so a read
 * at an instant costs only the model's evaluation. Read-only after
 * creation: any number of threads may use it. It must not outlive sim. */
struct t4_sim_reader;
int t4_sim_reader_new(struct t4_sim_reader **out, const struct t4_sim *sim,
		      const struct t4_counter *counters, size_t n);
void t4_sim_reader_free(struct t4_sim_reader *r); /* accepts NULL */
/* The sample at exactly true time t: values[i] = t4_sim_value_at(counter
 * i, t), *clock = t4_sim_clock_at(the PMU, t). Allocation-free. */
void t4_sim_reader_at(const struct t4_sim_reader *r, uint64_t t_ns,
		      uint64_t values[], uint64_t *clock);

/* Ground truth, analytic: the PMU's cycle counter at true time t, and a
 * counter's exact cumulative value at true time t (so an interval's true
 * count is value(t1) - value(t0)). */
uint64_t t4_sim_clock_at(const struct t4_sim *sim, const struct t4_pmu *pmu,
			 uint64_t t_ns);
uint64_t t4_sim_value_at(const struct t4_sim *sim, const struct t4_counter *c,
			 uint64_t t_ns);
/* Nominal frequency of a simulated PMU's clock in Hz. */
uint64_t t4_sim_nominal_hz(const struct t4_sim *sim, const struct t4_pmu *pmu);
/* Name of the workload phase active at true time t ("cpu_compute", ...). */
const char *t4_sim_phase_at(const struct t4_sim *sim, uint64_t t_ns);
/* The first instant after t at which the phase changes (t4_sim_phase_at
 * names the new phase from that instant on); UINT64_MAX past the model's
 * horizon. */
uint64_t t4_sim_next_phase_change(const struct t4_sim *sim, uint64_t t_ns);
/* Reference time of the model's t = 0 (t4_mono_raw_ns() at create); values and
 * clocks are 0 there and stay 0 before it. */
uint64_t t4_sim_epoch(const struct t4_sim *sim);
/* The PMU's exact clock frequency at true time t in Hz (nominal x drift x
 * DVFS level x wander); 0 for a PMU the simulator does not know. */
double t4_sim_freq_hz_at(const struct t4_sim *sim, const struct t4_pmu *pmu,
			 uint64_t t_ns);
/* The model's mean latency in ns at true time t of the requests a
 * *_cum_outs counter accumulates (its filters applied), i.e. what
 * cum_outs / req / (cycles / elapsed_ns) should give back; 0 for other
 * counters or when no such requests flow. */
double t4_sim_latency_ns_at(const struct t4_sim *sim,
			    const struct t4_counter *c, uint64_t t_ns);
/* The simulated PCIe endpoints behind a PCIE or PCIE-TGT PMU (the same
 * for both PMUs of one RC): root port, BDF and BAR window, then the RC's
 * CXL HDM window (rp -1). Returns the count (up to cap are written), or
 * -EINVAL for another PMU. */
struct t4_sim_dev {
	int rp;              /* root port in the RC; -1: CXL HDM window */
	uint16_t bdf;        /* (bus << 8) | (dev << 3) | fn; 0 for HDM */
	uint64_t base, size; /* target window; its traffic hits base */
};
int t4_sim_pcie_devs(const struct t4_sim *sim, const struct t4_pmu *pmu,
		     struct t4_sim_dev *out, size_t cap);

/* ---- clock domains (domain.c) ---------------------------------------------- */

/* Where a return packet goes: 0, or a negative errno when it was dropped
 * (a full ring: -ENOBUFS). */
typedef int (*t4_emit_fn)(void *ud, const struct t4_packet *p);

/* A domain read by a source of its own (the DRM source) instead of perf or
 * the simulator. answer() puts everything the source has for a trigger
 * through emit: metadata as it appears (domain and event packets), then
 * the return packets of the domains it owns, their read windows on
 * ref_clock (the log's reference clock: CLOCK_MONOTONIC_RAW, or
 * CLOCK_MONOTONIC when triggers fire in the kernel); it returns the number
 * of counts put, or a negative errno. It may do I/O: such a domain has
 * cpu -1 and gets a monitor of its own, never on a PMU domain's trigger
 * path. */
struct t4_domain_source {
	int (*answer)(void *ctx, uint64_t trigger_id, clockid_t ref_clock, t4_emit_fn emit,
		      void *ud);
	/* Optional: true while an answer would put nothing (the DRM source
	 * before it has found a client). Its monitor then rests between
	 * answers instead of waking on every trigger: a thread wake per
	 * trigger costs tens of microseconds in a VM. */
	bool (*idle)(void *ctx);
	void *ctx;
};

/* One clock domain: the counters of one PMU instance on one CPU, read as
 * one perf group (or from the simulator, or a source of its own). */
struct t4_domain {
	uint32_t id;
	enum t4_domain_kind kind;
	char name[T4_NAME_MAX]; /* PMU name, "@cpuN" for per-CPU domains,
				 * "@tidN" for per-task ones */
	int cpu;                /* CPU the group lives on; -1 = any */
	int tid;                /* thread counted, 0 = every task */
	int clock_index;        /* counter that is the local clock; -1 = ref */
	uint64_t nominal_hz;
	size_t n;
	struct t4_counter counters[T4_MAX_COUNTERS];
	/* read state, private to domain.c */
	int fds[T4_MAX_COUNTERS];
	struct t4_sim *sim;
	uint64_t ids[T4_MAX_COUNTERS]; /* PERF_EVENT_IOC_ID of each fd */
	uint64_t base[T4_MAX_COUNTERS]; /* raw values at the baseline read */
	uint64_t prev[T4_MAX_COUNTERS];
	uint64_t prev_enabled, prev_running, prev_clock;
	uint64_t undo[T4_MAX_COUNTERS]; /* prev[] before the last read */
	uint64_t undo_enabled, undo_running;
	bool undo_primed, can_undo;
	uint64_t prev_true_ns; /* sim: instant of the previous sample */
	struct t4_sim_reader *sim_reader;
	bool primed;
	struct t4_domain_source source; /* .answer set: read by its source;
					 * it writes its own metadata */
};

struct t4_domain_set {
	struct t4_domain *v;
	size_t n;
	size_t user_only; /* per-task counters t4_domains_open fell back to
			   * user-space counting (":u" added to their name,
			   * as perf does): perf_event_paranoid >= 2 and no
			   * CAP_PERFMON refuse the kernel's share */
};

/* Group an event list into domains: one per PMU instance and CPU (and
 * thread, for per-task counters), the
 * clock event first (the group leader) when the kind has one. Fails with a
 * message when a user's {group} spans two hardware PMUs or a domain would
 * hold more than T4_MAX_COUNTERS counters. */
int t4_domains_build(struct t4_domain_set *ds, const struct t4_evlist *l);
/* Open every domain's counters (perf_event_open, or the simulator for
 * simulated PMUs; sim may be NULL when none are). A per-task counter of
 * every privilege level that the kernel refuses (EACCES, EPERM) is
 * opened user-only instead, as perf does (ds->user_only counts them).
 * Per-task counters of a command (inherit) are enabled by its exec. */
int t4_domains_open(struct t4_domain_set *ds, struct t4_sim *sim);
/* Read one domain: one read() of its group, deltas against the previous
 * read, the read window on the reference clock, status flags. The first
 * read only primes (flag T4_RET_FIRST, counts 0). Allocation-free.
 * local_clock: the clock counter's raw value, or read_begin_ns for domains
 * without a clock (clock_index -1). enabled/running deltas are always
 * filled for perf domains (0 on the baseline and for simulated ones). On a
 * failed read the packet is still filled (T4_RET_READ_FAILED, counts 0)
 * and a negative errno returned; the next good read covers the gap. */
int t4_domain_read(struct t4_domain *d, uint64_t trigger_id,
		   struct t4_ret_pkt *out);
/* One read of a domain's counters, before deltas: the raw values, the
 * group's time_enabled/running, and the reference clock around the read. */
struct t4_sample {
	uint64_t v[T4_MAX_COUNTERS];
	uint64_t enabled, running;
	uint64_t begin, end;
};
/* What t4_domain_read does after its read, for a sample taken elsewhere
 * (the in-kernel trigger path reads the counters itself): deltas, flags
 * and local clock exactly as for the domain's own reads. err != 0 is a
 * failed read (T4_RET_READ_FAILED, counts 0, returned as is). */
int t4_domain_take(struct t4_domain *d, uint64_t trigger_id,
		   const struct t4_sample *s, int err, struct t4_ret_pkt *out);
/* Read a simulated domain as if at a chosen instant (virtual time): the
 * sample is taken exactly at true_ns (values t4_sim_value_at, clock
 * t4_sim_clock_at), the packet gets the read window given, and the deltas
 * are taken as t4_domain_read's (FIRST on the first read, after
 * t4_domain_unread against the read before). -EINVAL for a domain that is
 * not simulated, true_ns outside [read_begin_ns, read_end_ns], or before
 * the previous sample (counters never go back in time). */
int t4_domain_read_at(struct t4_domain *d, uint64_t trigger_id, uint64_t true_ns,
		      uint64_t read_begin_ns, uint64_t read_end_ns,
		      struct t4_ret_pkt *out);
/* Take back the last read: its return packet could not be logged (a full
 * ring), so the next read's deltas are taken against the read before it
 * and carry both intervals' counts: no count is ever lost. Call at most
 * once per read. */
void t4_domain_unread(struct t4_domain *d);
void t4_domains_free(struct t4_domain_set *ds); /* closes fds */
struct perf_event_attr;
/* What perf_event_open gets for a counter (the group's leader, or a
 * member): its attr (read as a group with times and IDs; the leader
 * disabled until the group is enabled), the pid (the thread counted, -1
 * for every task: every uncore counter) and the CPU (-1 for a per-task
 * counter). inherit only for a command's per-task counters. */
void t4_counter_perf_args(const struct t4_counter *c, bool leader, struct perf_event_attr *a,
			  int *pid, int *cpu);
/* A domain name unique in ds (docs/FORMAT.md 4.2): base and suffix
 * ("nvidia_ucf_pmu_0", "@cpu3"), or where that does not fit or is taken,
 * base cut (between UTF-8 characters) and marked with the CRC32C of all of
 * it: "<cut>~1a2b3c4d<suffix>", so two names that share a long prefix, or
 * a source's name that a PMU has, stay apart. 0, or -EEXIST (no message)
 * when the marked name is taken too. */
int t4_domains_name(const struct t4_domain_set *ds, const char *base, const char *suffix,
		    char out[T4_NAME_MAX]);
/* Append an empty domain read by a source of its own (cpu -1, clocked by
 * the reference clock, ID ds->n), named name (unique in ds:
 * t4_domains_name; else -EEXIST); *out points into ds->v until the next
 * append. */
int t4_domains_add_source(struct t4_domain_set *ds, const char *name,
			  enum t4_domain_kind kind,
			  const struct t4_domain_source *src,
			  struct t4_domain **out);
/* The CPU a thread should be pinned to in order to read d cheaply (a perf
 * group read from another CPU costs an inter-processor interrupt: ~9.6 us
 * instead of ~1.7 us here), or -1 when any CPU will do. Simulated domains
 * answer their PMU's cpumask CPU too (one monitor per socket, as on the
 * real chip). */
int t4_domain_read_cpu(const struct t4_domain *d);
/* The simulator a simulated domain reads (once opened), else NULL. */
const struct t4_sim *t4_domain_sim(const struct t4_domain *d);
/* The perf event fd of counter i, in counter order; -1 for a simulated
 * domain or one not open. */
int t4_domain_fd(const struct t4_domain *d, size_t i);
/* The metadata packets describing a domain and its events. */
void t4_domain_describe(const struct t4_domain *d, struct t4_domain_pkt *dp);
void t4_domain_describe_event(const struct t4_domain *d, size_t i,
			      struct t4_event_pkt *ep);

/* ---- PCI mapping (pci.c) ------------------------------------------------- */

struct t4_pci_port {
	char bdf[16]; /* "0005:40:00.0" */
	uint8_t bus, segment, rp, rc, socket;
};

/* Scan <pci_root>/<bdf>/config (NULL: /sys/bus/pci/devices) for the NVIDIA
 * DVSEC (vendor 0x10de, DVSEC ID 4) and collect every root port's mapping.
 * *out is malloc'ed; free() it. */
int t4_pci_scan(const char *pci_root, struct t4_pci_port **out, size_t *n);

/* ---- DRM client usage stats (drm.c) ------------------------------------ */

/* The standardised keys with a value per engine or memory region; the
 * numbers are pinned (they are the `config` of DRM event packets). */
enum t4_drm_key {
	T4_DRM_ENGINE = 1,       /* drm-engine-<e>: busy ns, cumulative */
	T4_DRM_CAPACITY = 2,     /* drm-engine-capacity-<e>: engines, gauge */
	T4_DRM_CYCLES = 3,       /* drm-cycles-<e>: busy cycles, cumulative */
	T4_DRM_TOTAL_CYCLES = 4, /* drm-total-cycles-<e>: cycles, cumulative */
	T4_DRM_MEMORY = 5,       /* drm-memory-<r>: bytes, gauge (legacy) */
	T4_DRM_RESIDENT = 6,     /* drm-resident-<r> */
	T4_DRM_TOTAL = 7,        /* drm-total-<r> */
	T4_DRM_SHARED = 8,       /* drm-shared-<r> */
	T4_DRM_ACTIVE = 9,       /* drm-active-<r> */
	T4_DRM_PURGEABLE = 10,   /* drm-purgeable-<r> */
};
#define T4_DRM_KEY_LAST T4_DRM_PURGEABLE

#define T4_DRM_NAME_MAX 25    /* engine or region name, with its NUL */
#define T4_DRM_MAX_VALUES 128 /* keyed values kept from one file */
#define T4_DRM_FDINFO_MAX (1u << 20) /* a fdinfo file longer is refused */

struct t4_drm_value {
	uint8_t key; /* enum t4_drm_key */
	char name[T4_DRM_NAME_MAX];
	uint64_t v;  /* ns, cycles, engines or bytes (units applied) */
};

/* One fdinfo text. Keys outside the spec's are ignored (driver-specific
 * ones too); a malformed line of a known key is skipped and counted. */
struct t4_drm_info {
	char driver[T4_NAME_MAX]; /* drm-driver (mandatory) */
	char pdev[32];            /* drm-pdev, "" when absent */
	uint64_t client_id;       /* drm-client-id */
	bool has_client_id;
	size_t n;
	struct t4_drm_value v[T4_DRM_MAX_VALUES];
	uint32_t bad_lines; /* malformed lines skipped */
	char first_bad[160]; /* "PATH:LINE: why" of the first, "" if none */
};

/* Parse one fdinfo text (path only names it in messages). 0, or -ENODATA
 * when it has no valid drm-driver key (not a DRM client's usage stats: a
 * non-DRM file, or a driver without stats), the message naming the file
 * and the first malformed line if any. */
int t4_drm_parse(const char *text, const char *path, struct t4_drm_info *out);
/* Read and parse a fdinfo file: as t4_drm_parse, plus the read's -errno
 * (-ENOENT: the fd or the process is gone; -EFBIG: over T4_DRM_FDINFO_MAX
 * bytes, not read). */
int t4_drm_read(const char *path, struct t4_drm_info *out);
/* A value by key and name, NULL when the file did not have it. */
const struct t4_drm_value *t4_drm_find(const struct t4_drm_info *in,
				       enum t4_drm_key key, const char *name);
/* The spec's engine capacity: drm-engine-capacity-<engine>, 1 if absent. */
uint64_t t4_drm_capacity(const struct t4_drm_info *in, const char *engine);
/* What a key is, for event names and units. */
struct t4_drm_keydef {
	enum t4_drm_key key;
	const char *prefix; /* the fdinfo key before the name: "drm-engine-" */
	const char *label;  /* in event names: "engine", "total-cycles" */
	const char *unit;   /* "ns", "bytes", "" */
	bool gauge;         /* a level (capacity, memory), not cumulative */
};
/* NULL for a key outside enum t4_drm_key. */
const struct t4_drm_keydef *t4_drm_keydef(enum t4_drm_key key);

/* ---- the DRM source (drm_src.c) -------------------------------------- */

#define T4_PROC_DEFAULT "/proc"
#define T4_DRM_SCAN_NS 100000000ull /* scan for clients every 100 ms (or
					   * 9x a scan's time, when longer) */
#define T4_DRM_MAX_DOMAINS 16       /* drm, drm.1, ...: 64 events each (names
				     * marked where a PMU's domain has them:
				     * t4_drm_attach) */
#define T4_DRM_EXTRA_ID 65536u      /* domain ID of drm.1; drm.k: +k-1 */

struct t4_drm;

struct t4_drm_opts {
	const char *proc_root; /* NULL: T4_PROC_DEFAULT */
	bool every_process;    /* every process is the workload; else the
				* trees of the roots */
	const int *roots;      /* roots known before the recording (--pid):
				* their clients count from the baseline */
	size_t n_roots;        /* more with t4_drm_add_root (a command) */
	uint64_t scan_ns;      /* 0: T4_DRM_SCAN_NS */
};

struct t4_drm_stats {
	uint64_t clients;       /* distinct clients seen */
	uint64_t clients_no_id; /* of which without drm-client-id (one per fd:
				 * shared or duplicated fds may count twice) */
	uint64_t events;        /* (client, key) events in the log's tables */
	uint64_t events_left_out; /* beyond T4_DRM_MAX_DOMAINS x 64, or a
				   * name longer than an event name holds */
	uint64_t bad_lines;     /* malformed fdinfo lines skipped */
	uint64_t read_failures; /* reads that failed (previous values kept) */
	uint64_t scans;
	char first_bad[160];    /* the first malformed line, "" if none */
	uint64_t too_large;     /* reads refused: a file over T4_DRM_FDINFO_MAX */
	char first_too_large[256]; /* the first such file, "" if none */
};

/* Open the source and scan once: clients found now (before the first
 * answer) existed before the recording and count from their values at the
 * baseline; clients found later count from 0 (the spec's counters start
 * when the DRM file is opened). Fails when proc_root cannot be read. */
int t4_drm_open(struct t4_drm **out, const struct t4_drm_opts *o);
/* Append the source's domain ("drm") to ds; call once, after every PMU's
 * domain is in ds (its names, "drm", "drm.1", ..., are made unique against
 * them: t4_domains_name) and before the scheduler is created. */
int t4_drm_attach(struct t4_drm *s, struct t4_domain_set *ds);
/* Add a root process of the workload (any thread). */
int t4_drm_add_root(struct t4_drm *s, int pid);
/* Scan now: find the workload's processes and their DRM fds, and hand
 * the result to the next answer (the scanner thread calls this; tests
 * may call it instead). */
int t4_drm_scan(struct t4_drm *s);
/* The scanner thread: t4_drm_scan every scan_ns until stop. */
int t4_drm_start(struct t4_drm *s);
void t4_drm_stop(struct t4_drm *s);
/* Answer one trigger (what the domain's source does): read the known
 * clients' fdinfo files and emit metadata and return packets, their read
 * windows on ref_clock. */
int t4_drm_answer(struct t4_drm *s, uint64_t trigger_id, clockid_t ref_clock, t4_emit_fn emit,
		  void *ud);
void t4_drm_stats(struct t4_drm *s, struct t4_drm_stats *st);
void t4_drm_free(struct t4_drm *s); /* stops the scanner; accepts NULL */

#endif
