/* kinds.c - what t410trace knows about the NVIDIA Tegra410 uncore PMUs, as
 * data: one static table of the seven PMU kinds (name prefix, identifier,
 * events with their ids, the clock event, a default event set and the
 * seed-000 formulas).
 *
 * Trade-offs: the table is the only place that knows a kind; every other
 * file asks it (no "is this a PCIE PMU" if-chains elsewhere). Recognition
 * goes by the sysfs identifier first (the PMIIDR of the arm_cspmu PMUs, the
 * ACPI HID of the others: what the hardware and firmware say), then by the
 * Tegra410 drivers' names (prefix + socket, and "_rc_<n>" for the PCIE
 * kinds), so the same chip is recognised under every kernel's naming: the
 * Tegra410 drivers', the generic nvidia_uncore_pmu_<n> of a kernel whose
 * table lacks its PMIIDR, a Grace-era kernel's names. Under a name that is
 * not the Tegra410 one, socket and RC number come from the PMUs' CPUs and
 * order (t4_kinds_recognise). Lookups are linear: seven entries. Formulas
 * are plain strings the decoder evaluates; events are the facts-file ids,
 * used by name wherever sysfs lacks an alias (events_terms.c).
 */
#include "collector.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Units of the raw counts (one word each, for every output). A *_cum_outs
 * counter adds, every cycle, the number of requests outstanding: its
 * count is in request-cycles (divided by the requests, the mean latency
 * in cycles: Little's law). */
#define U_BYTES "bytes"
#define U_REQ "requests"
#define U_CYC "cycles"
#define U_OUTS "req-cycles"
#define U_LINES "lines"
#define EV(n, c, u, d) { n, c, u, d }
#define CYCLES_BIT32 0x100000000ull

static const struct t4_kind_event ucf_events[] = {
	EV("bus_cycles", 0x1d, U_CYC, "cycles of the UCF bus clock"),
	EV("slc_allocate", 0xf0, U_LINES, "lines allocated in the system-level cache (SLC)"),
	EV("slc_wb", 0xf3, U_LINES, "dirty lines written back from the SLC to memory"),
	EV("slc_refill_rd", 0x109, U_LINES, "SLC refills caused by reads (read misses)"),
	EV("slc_refill_wr", 0x10a, U_LINES, "SLC refills caused by writes"),
	EV("slc_access_rd", 0x111, U_REQ, "read requests that accessed the SLC"),
	EV("slc_access_wr", 0x112, U_REQ, "write requests that accessed the SLC"),
	EV("slc_bytes_rd", 0x113, U_BYTES, "bytes read through the SLC"),
	EV("slc_bytes_wr", 0x114, U_BYTES, "bytes written through the SLC"),
	EV("slc_hit_rd", 0x119, U_REQ, "read requests that hit in the SLC"),
	EV("mem_access_rd", 0x121, U_REQ, "read requests to memory (CMEM, GMEM, remote)"),
	EV("mem_access_wr", 0x122, U_REQ, "write requests to memory"),
	EV("mem_bytes_rd", 0x123, U_BYTES, "bytes read from memory"),
	EV("mem_bytes_wr", 0x124, U_BYTES, "bytes written to memory"),
	EV("local_snoop", 0x180, U_REQ, "snoops sent to the local CPUs' caches"),
	EV("ext_snp_access", 0x181, U_REQ, "snoops from other agents that accessed the SLC"),
	EV("ext_snp_evict", 0x182, U_LINES, "SLC lines evicted by snoops from other agents"),
	EV("slc_access_dataless", 0x183, U_REQ, "dataless requests (cache maintenance) at the SLC"),
	EV("slc_access_atomic", 0x184, U_REQ, "atomic requests at the SLC"),
	EV("cycles", CYCLES_BIT32, U_CYC, "the PMU's dedicated cycle counter (its clock)"),
};

static const struct t4_kind_event pcie_events[] = {
	EV("rd_bytes", 0x0, U_BYTES, "bytes read by PCIe devices of the root complex"),
	EV("wr_bytes", 0x1, U_BYTES, "bytes written by PCIe devices of the root complex"),
	EV("rd_req", 0x2, U_REQ, "read requests from PCIe devices"),
	EV("wr_req", 0x3, U_REQ, "write requests from PCIe devices"),
	EV("rd_cum_outs", 0x4, U_OUTS, "outstanding read requests added up every cycle"),
	EV("cycles", CYCLES_BIT32, U_CYC, "the PMU's cycle counter (its clock)"),
};

static const struct t4_kind_event pcie_tgt_events[] = {
	EV("rd_bytes", 0x0, U_BYTES, "bytes read from targets behind the root complex (BARs, CXL)"),
	EV("wr_bytes", 0x1, U_BYTES, "bytes written to targets behind the root complex"),
	EV("rd_req", 0x2, U_REQ, "read requests to targets behind the root complex"),
	EV("wr_req", 0x3, U_REQ, "write requests to targets behind the root complex"),
	EV("cycles", 0x4, U_CYC, "the PMU's cycle counter (its clock)"),
};

static const struct t4_kind_event cmem_events[] = {
	EV("cycles", 0x0, U_CYC, "the PMU's cycle counter (its clock)"),
	EV("rd_req", 0x1, U_REQ, "read requests to CPU memory (32 bytes each)"),
	EV("rd_cum_outs", 0x2, U_OUTS, "outstanding CPU-memory reads added up every cycle"),
};

#define LINK_EVENTS(peer)                                                         \
	EV("cycles", 0x0, U_CYC, "the PMU's cycle counter (its clock)"),           \
	EV("in_rd_cum_outs", 0x1, U_OUTS,                                          \
	   "outstanding reads from the " peer " added up every cycle"),            \
	EV("in_rd_req", 0x2, U_REQ, "read requests from the " peer)
#define LINK_WRITES_IN(peer)                                                      \
	EV("in_wr_cum_outs", 0x3, U_OUTS,                                          \
	   "outstanding writes from the " peer " added up every cycle"),           \
	EV("in_wr_req", 0x4, U_REQ, "write requests from the " peer)
#define LINK_READS_OUT(peer)                                                      \
	EV("out_rd_cum_outs", 0x5, U_OUTS,                                         \
	   "outstanding reads to the " peer " added up every cycle"),              \
	EV("out_rd_req", 0x6, U_REQ, "read requests to the " peer)
#define LINK_WRITES_OUT(peer)                                                     \
	EV("out_wr_cum_outs", 0x7, U_OUTS,                                         \
	   "outstanding writes to the " peer " added up every cycle"),             \
	EV("out_wr_req", 0x8, U_REQ, "write requests to the " peer)

static const struct t4_kind_event c2c_events[] = {
	LINK_EVENTS("GPU peer"), LINK_WRITES_IN("GPU peer"),
	LINK_READS_OUT("GPU peer"), LINK_WRITES_OUT("GPU peer"),
};

static const struct t4_kind_event clink_events[] = {
	LINK_EVENTS("CPU peer"), LINK_READS_OUT("CPU peer"),
};

static const struct t4_kind_event dlink_events[] = {
	LINK_EVENTS("CXL-memory peer"),
};

/* Default sets: exactly the events the formulas below use. */
static const char *const ucf_defaults[] = {
	"cycles",	 "slc_bytes_rd",  "slc_bytes_wr",  "mem_bytes_rd",
	"mem_bytes_wr",	 "slc_access_rd", "slc_access_wr", "mem_access_rd",
	"mem_access_wr", NULL,
};
static const char *const pcie_defaults[] = {
	"cycles", "rd_bytes", "wr_bytes", "rd_req", "wr_req", "rd_cum_outs", NULL,
};
static const char *const pcie_tgt_defaults[] = {
	"cycles", "rd_bytes", "wr_bytes", "rd_req", "wr_req", NULL,
};
static const char *const cmem_defaults[] = {
	"cycles", "rd_req", "rd_cum_outs", NULL,
};
static const char *const c2c_defaults[] = {
	"cycles",	  "in_rd_cum_outs", "in_rd_req",  "in_wr_cum_outs",
	"in_wr_req",	  "out_rd_cum_outs", "out_rd_req", "out_wr_cum_outs",
	"out_wr_req",	  NULL,
};
static const char *const clink_defaults[] = {
	"cycles", "in_rd_cum_outs", "in_rd_req", "out_rd_cum_outs", "out_rd_req", NULL,
};
static const char *const dlink_defaults[] = {
	"cycles", "in_rd_cum_outs", "in_rd_req", NULL,
};

/* Seed 000's formulas. bytes / ns = GB/s; FREQ_IN_GHZ = cycles / ns.
 * Bandwidths, latencies in ns and frequencies are the headline (brief)
 * metrics; request rates and latencies in cycles complete the set. Each
 * has a one-line description (`list --metrics`). */
#define F(n, u, e, d, b) { .name = n, .unit = u, .expr = e, .desc = d, .brief = b }
#define FREQ(n) F(n, "GHz", "cycles / elapsed_ns", "the PMU's clock frequency", true)
#define BW(n, ev, d) F(n, "GB/s", ev " / elapsed_ns", d, true)
#define RATE(n, ev, d) F(n, "req/cycle", ev " / cycles", d, false)
#define LAT_CYC(n, outs, req, d) \
	F(n, "cycles", outs " / " req, "mean latency of " d ", in the PMU's cycles", false)
#define LAT_NS(n, outs, req, d) \
	F(n, "ns", "(" outs " / " req ") / (cycles / elapsed_ns)", "mean latency of " d, true)
#define LAT(pfx, outs, req, d) \
	LAT_CYC(pfx "_latency_cycles", outs, req, d), LAT_NS(pfx "_latency_ns", outs, req, d)

static const struct t4_formula ucf_formulas[] = {
	BW("slc_read_bw", "slc_bytes_rd", "bandwidth read through the SLC"),
	BW("slc_write_bw", "slc_bytes_wr", "bandwidth written through the SLC"),
	BW("mem_read_bw", "mem_bytes_rd", "memory read bandwidth"),
	BW("mem_write_bw", "mem_bytes_wr", "memory write bandwidth"),
	RATE("slc_read_req_rate", "slc_access_rd", "SLC read requests per UCF cycle"),
	RATE("slc_write_req_rate", "slc_access_wr", "SLC write requests per UCF cycle"),
	RATE("mem_read_req_rate", "mem_access_rd", "memory read requests per UCF cycle"),
	RATE("mem_write_req_rate", "mem_access_wr", "memory write requests per UCF cycle"),
	FREQ("ucf_freq"),
};

static const struct t4_formula pcie_formulas[] = {
	BW("rd_bw", "rd_bytes", "bandwidth PCIe devices read"),
	BW("wr_bw", "wr_bytes", "bandwidth PCIe devices write"),
	RATE("rd_req_rate", "rd_req", "PCIe device read requests per cycle"),
	RATE("wr_req_rate", "wr_req", "PCIe device write requests per cycle"),
	FREQ("pcie_freq"),
	LAT("rd", "rd_cum_outs", "rd_req", "PCIe device reads"),
};

static const struct t4_formula pcie_tgt_formulas[] = {
	BW("rd_bw", "rd_bytes", "bandwidth read from targets behind the root complex"),
	BW("wr_bw", "wr_bytes", "bandwidth written to targets behind the root complex"),
	RATE("rd_req_rate", "rd_req", "target read requests per cycle"),
	RATE("wr_req_rate", "wr_req", "target write requests per cycle"),
	FREQ("pcie_tgt_freq"),
};

/* CMEM read requests are 32 bytes each (seed 000). */
static const struct t4_formula cmem_formulas[] = {
	FREQ("cmem_freq"),
	LAT("rd", "rd_cum_outs", "rd_req", "CPU-memory reads"),
	F("rd_bw", "GB/s", "rd_req * 32 / elapsed_ns",
	  "CPU-memory read bandwidth (32 bytes per request)", true),
	RATE("rd_req_rate", "rd_req", "CPU-memory read requests per cycle"),
};

static const struct t4_formula c2c_formulas[] = {
	FREQ("c2c_freq"),
	LAT("in_rd", "in_rd_cum_outs", "in_rd_req", "reads from the GPU peer"),
	LAT("in_wr", "in_wr_cum_outs", "in_wr_req", "writes from the GPU peer"),
	LAT("out_rd", "out_rd_cum_outs", "out_rd_req", "reads to the GPU peer"),
	LAT("out_wr", "out_wr_cum_outs", "out_wr_req", "writes to the GPU peer"),
	RATE("in_rd_req_rate", "in_rd_req", "read requests from the GPU peer per cycle"),
	RATE("out_rd_req_rate", "out_rd_req", "read requests to the GPU peer per cycle"),
};

static const struct t4_formula clink_formulas[] = {
	FREQ("clink_freq"),
	LAT("in_rd", "in_rd_cum_outs", "in_rd_req", "reads from the CPU peer"),
	LAT("out_rd", "out_rd_cum_outs", "out_rd_req", "reads to the CPU peer"),
	RATE("in_rd_req_rate", "in_rd_req", "read requests from the CPU peer per cycle"),
	RATE("out_rd_req_rate", "out_rd_req", "read requests to the CPU peer per cycle"),
};

static const struct t4_formula dlink_formulas[] = {
	FREQ("dlink_freq"),
	LAT("in_rd", "in_rd_cum_outs", "in_rd_req", "reads from the CXL-memory peer"),
	RATE("in_rd_req_rate", "in_rd_req", "read requests from the CXL-memory peer per cycle"),
};

#define KIND(id_, label_, prefix_, ident_, ev, def, fo, ...)                   \
	{ .id = id_, .label = label_, .prefix = prefix_, .identifier = ident_,  \
	  .clock_event = "cycles", .events = ev, .n_events = T4_ARRAY_LEN(ev), \
	  .defaults = def, .formulas = fo, .n_formulas = T4_ARRAY_LEN(fo),     \
	  __VA_ARGS__ }

/* Identifiers: the PMIIDR (the arm_cspmu driver prints it as "%x"), which
 * the NVIDIA arm_cspmu driver matches on bits 31:12 after NVIDIA's
 * implementer code 0x36b in bits 11:0 (a whole 32-bit match); the ACPI HID
 * of the CMEM-latency and C2C drivers (drivers/perf/nvidia_t410_*.c).
 * Filter defaults: the driver's NV_UCF_FILTER_DEFAULT,
 * NV_PCIE_V2_FILTER(2)_DEFAULT and NV_PCIE_TGT_FILTER2_DEFAULT. */
static const struct t4_kind kinds[] = {
	KIND(T4_DOM_UCF, "UCF", "nvidia_ucf_pmu_", "2cf2036b", ucf_events,
	     ucf_defaults, ucf_formulas, .generic_config1 = 0xf07),
	KIND(T4_DOM_PCIE, "PCIE", "nvidia_pcie_pmu_", "1030136b", pcie_events,
	     pcie_defaults, pcie_formulas, .generic_config1 = 0xff, .generic_config2 = 0x1f),
	KIND(T4_DOM_PCIE_TGT, "PCIE-TGT", "nvidia_pcie_tgt_pmu_", "1070036b",
	     pcie_tgt_events, pcie_tgt_defaults, pcie_tgt_formulas, .generic_config2 = 0xff),
	KIND(T4_DOM_CMEM_LAT, "CMEM latency", "nvidia_cmem_latency_pmu_",
	     "NVDA2021", cmem_events, cmem_defaults, cmem_formulas),
	KIND(T4_DOM_NVLINK_C2C, "NVLink-C2C", "nvidia_nvlink_c2c_pmu_",
	     "NVDA2023", c2c_events, c2c_defaults, c2c_formulas),
	KIND(T4_DOM_NVCLINK, "NV-CLink", "nvidia_nvclink_pmu_", "NVDA2022",
	     clink_events, clink_defaults, clink_formulas),
	KIND(T4_DOM_NVDLINK, "NV-DLink", "nvidia_nvdlink_pmu_", "NVDA2020",
	     dlink_events, dlink_defaults, dlink_formulas),
};

_Static_assert(T4_ARRAY_LEN(kinds) == T4_DOM_T410_KINDS,
	       "one row per Tegra410 kind of packets.h's T4_DOMAIN_KINDS");

/* The host's domains: software counters (per CPU, or per task with a
 * command, -p or -t), msr/tsc. A formula whose event was not recorded is
 * simply absent. cpu-clock and task-clock counted per CPU run whether the
 * CPU is busy or idle (the kernel ignores exclude_idle for them), so a
 * busy share from them is a formula of per-task domains only: there
 * task-clock / elapsed is the CPUs the task kept busy (perf stat's "CPUs
 * utilized"); per CPU it would be 1. */
static const struct t4_formula software_formulas[] = {
	{ .name = "cpus_utilized", .unit = "CPUs", .expr = "task-clock / elapsed_ns",
	  .desc = "CPUs the counted tasks kept busy (perf stat's \"CPUs utilized\")",
	  .brief = true, .per_task = true },
	F("ctx_switch_rate", "/s", "context-switches / elapsed_ns * 1000000000",
	  "context switches per second (of the tasks, or on the CPU)", true),
	F("page_fault_rate", "/s", "page-faults / elapsed_ns * 1000000000",
	  "page faults per second", false),
	F("migration_rate", "/s", "cpu-migrations / elapsed_ns * 1000000000",
	  "migrations of tasks between CPUs per second", false),
};
static const struct t4_formula tsc_formulas[] = {
	F("tsc_freq", "GHz", "tsc / elapsed_ns", "the timestamp counter's frequency", true),
};

/* Units of the host's PMU events that sysfs gives none (msr/ has no
 * .unit files). */
static const struct {
	const char *pmu, *event, *unit;
} host_units[] = {
	{ "msr", "tsc", "cycles" },  { "msr", "aperf", "cycles" },
	{ "msr", "mperf", "cycles" }, { "msr", "pperf", "cycles" },
	{ "msr", "smi", "interrupts" },
};

const char *t4_host_event_unit(const char *pmu, const char *event)
{
	for (size_t i = 0; i < T4_ARRAY_LEN(host_units); i++)
		if (!strcmp(host_units[i].pmu, pmu) && !strcmp(host_units[i].event, event))
			return host_units[i].unit;
	return NULL;
}

/* The DRM domain's metrics are made by the decoder from the events it
 * finds, one per client and engine (decode/dom.c, FORMAT.md 6.2): these
 * are their patterns, for `list --metrics` only. */
static const struct t4_formula drm_patterns[] = {
	F("CLIENT.ENGINE_busy", "%",
	  "CLIENT.engine.ENGINE / elapsed_ns * 100 / CLIENT.capacity.ENGINE",
	  "share of the engine's capacity a DRM client kept busy (capacity 1 when absent)", true),
	F("CLIENT.ENGINE_cycles_busy", "%",
	  "CLIENT.cycles.ENGINE / CLIENT.total-cycles.ENGINE * 100 / CLIENT.capacity.ENGINE",
	  "the same from the driver's busy and total cycles", true),
};

const char *t4_alias_unit(const struct t4_pmu *pmu, const struct t4_alias *a)
{
	const struct t4_kind_event *ke = t4_kind_event(pmu->kind, a->name);
	const char *host = t4_host_event_unit(pmu->name, a->name);

	if (a->unit[0])
		return a->unit;
	return ke ? ke->unit : host ? host : "";
}

const char *t4_alias_desc(const struct t4_pmu *pmu, const struct t4_alias *a)
{
	const struct t4_kind_event *ke = t4_kind_event(pmu->kind, a->name);

	return ke ? ke->desc : NULL;
}

static const struct {
	enum t4_domain_kind id;
	const char *label;
	const struct t4_formula *formulas;
	size_t n;
} host_kinds[] = {
	{ T4_DOM_SOFTWARE, "software", software_formulas, T4_ARRAY_LEN(software_formulas) },
	{ T4_DOM_TSC, "TSC", tsc_formulas, T4_ARRAY_LEN(tsc_formulas) },
	{ T4_DOM_TRACEPOINT, "tracepoint", NULL, 0 },
	{ T4_DOM_DRM, "DRM", NULL, 0 },
	{ T4_DOM_OTHER, "other", NULL, 0 },
};
_Static_assert(T4_ARRAY_LEN(host_kinds) == T4_DOM_KINDS - T4_DOM_T410_KINDS,
	       "one row per host kind of packets.h's T4_DOMAIN_KINDS");

bool t4_metric_set_at(size_t i, struct t4_metric_set *out)
{
	if (i < T4_ARRAY_LEN(kinds)) {
		*out = (struct t4_metric_set){ kinds[i].id, kinds[i].label, kinds[i].formulas,
					       kinds[i].n_formulas, false };
		return true;
	}
	for (size_t h = 0, at = T4_ARRAY_LEN(kinds); h < T4_ARRAY_LEN(host_kinds); h++) {
		bool drm = host_kinds[h].id == T4_DOM_DRM;
		if (!host_kinds[h].n && !drm)
			continue;
		if (at++ != i)
			continue;
		*out = (struct t4_metric_set){ host_kinds[h].id, host_kinds[h].label,
					       drm ? drm_patterns : host_kinds[h].formulas,
					       drm ? T4_ARRAY_LEN(drm_patterns) : host_kinds[h].n,
					       drm };
		return true;
	}
	return false;
}

const struct t4_formula *t4_kind_formulas(enum t4_domain_kind id, size_t *n,
					  const char **label)
{
	const struct t4_kind *k = t4_kind_by_id(id);

	*n = 0;
	if (label)
		*label = "unknown";
	if (k) {
		*n = k->n_formulas;
		if (label)
			*label = k->label;
		return k->formulas;
	}
	for (size_t i = 0; i < T4_ARRAY_LEN(host_kinds); i++)
		if (host_kinds[i].id == id) {
			*n = host_kinds[i].n;
			if (label)
				*label = host_kinds[i].label;
			return host_kinds[i].formulas;
		}
	return NULL;
}

const struct t4_kind *t4_kinds(size_t *n)
{
	if (n)
		*n = T4_ARRAY_LEN(kinds);
	return kinds;
}

const struct t4_kind *t4_kind_by_id(enum t4_domain_kind id)
{
	for (size_t i = 0; i < T4_ARRAY_LEN(kinds); i++)
		if (kinds[i].id == id)
			return &kinds[i];
	return NULL;
}

bool t4_kind_has_rc(const struct t4_kind *k)
{
	return k && (k->id == T4_DOM_PCIE || k->id == T4_DOM_PCIE_TGT);
}

/* Parse leading decimal digits at *p; -1 if there are none. */
static int take_num(const char **p)
{
	long v = 0;
	int digits = 0;

	while (isdigit((unsigned char)**p) && digits < 6) {
		v = v * 10 + (**p - '0');
		(*p)++;
		digits++;
	}
	return digits ? (int)v : -1;
}

/* "<prefix><socket>" or "<prefix><socket>_rc_<rc>" for the PCIE kinds. */
static bool name_matches(const struct t4_kind *k, const char *name,
			 int *socket, int *instance)
{
	size_t len = strlen(k->prefix);
	const char *p = name + len;
	int s, rc = -1;

	if (strncmp(name, k->prefix, len) != 0)
		return false;
	s = take_num(&p);
	if (s < 0)
		return false;
	if (t4_kind_has_rc(k)) {
		if (strncmp(p, "_rc_", 4) != 0)
			return false;
		p += 4;
		rc = take_num(&p);
		if (rc < 0)
			return false;
	}
	if (*p)
		return false;
	if (socket)
		*socket = s;
	if (instance)
		*instance = rc;
	return true;
}

int t4_kind_ids(const struct t4_kind *k, const char *name, int *socket,
		int *instance)
{
	*socket = -1;
	*instance = -1;
	if (!k || !name || !name_matches(k, name, socket, instance))
		return -1;
	return 0;
}

/* ---- identifiers ------------------------------------------------------ */

#define NVIDIA_IMPLEMENTER 0x36bu /* PMIIDR bits 11:0 (JEP106) */
#define PMIIDR_PRODUCT(v) ((v) >> 20)
#define GENERIC_PREFIX "nvidia_uncore_pmu_"

/* A whole hex number, optionally 0x-prefixed, that fits 32 bits. */
static bool parse_hex32(const char *s, uint32_t *out)
{
	uint32_t v = 0;
	size_t n = 0;

	if (!s)
		return false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; isxdigit((unsigned char)s[n]) && n < 9; n++)
		v = v << 4 | (uint32_t)(isdigit((unsigned char)s[n])
						? s[n] - '0'
						: tolower((unsigned char)s[n]) - 'a' + 10);
	if (!n || n > 8 || s[n])
		return false;
	*out = v;
	return true;
}

bool t4_identifier_eq(const char *a, const char *b)
{
	uint32_t x, y;

	if (!a || !b || !*a || !*b)
		return false;
	if (parse_hex32(a, &x) && parse_hex32(b, &y))
		return x == y;
	return !strcasecmp(a, b);
}

static const struct t4_kind *kind_by_identifier(const char *identifier)
{
	for (size_t i = 0; identifier && i < T4_ARRAY_LEN(kinds); i++)
		if (t4_identifier_eq(kinds[i].identifier, identifier))
			return &kinds[i];
	return NULL;
}

/* NVIDIA PMUs of another chip that share a product ID with a Tegra410
 * kind: the Grace entries of the arm_cspmu driver's table. */
static const struct {
	uint32_t pmiidr;
	const char *name;
} families[] = {
	{ 0x2cf0036b, "Grace SCF" },	      { 0x1030036b, "Grace PCIE" },
	{ 0x1040036b, "Grace NVLink-C2C1" }, { 0x1050036b, "Grace NVLink-C2C0" },
	{ 0x1060036b, "Grace CNVLink" },
};

/* What an NVIDIA PMIIDR that is no Tegra410 kind is, into out ("" for
 * anything else): a Grace PMU, or a kind's product in another variant or
 * revision (which the kernel does not take for that kind either). */
static void family_of(const char *identifier, char *out, size_t cap)
{
	uint32_t v, k;

	out[0] = '\0';
	if (!parse_hex32(identifier, &v) || (v & 0xfff) != NVIDIA_IMPLEMENTER)
		return;
	for (size_t i = 0; i < T4_ARRAY_LEN(families); i++)
		if (families[i].pmiidr == v) {
			snprintf(out, cap, "%s", families[i].name);
			return;
		}
	for (size_t i = 0; i < T4_ARRAY_LEN(kinds); i++)
		if (parse_hex32(kinds[i].identifier, &k) && PMIIDR_PRODUCT(k) == PMIIDR_PRODUCT(v)) {
			snprintf(out, cap, "NVIDIA product 0x%x of the Tegra410 %s, another "
				 "variant or revision", PMIIDR_PRODUCT(v), kinds[i].label);
			return;
		}
	snprintf(out, cap, "NVIDIA product 0x%x", PMIIDR_PRODUCT(v));
}

const struct t4_kind *t4_kind_of(const char *pmu_name, const char *identifier)
{
	const struct t4_kind *k = kind_by_identifier(identifier);

	if (k || !pmu_name)
		return k;
	for (size_t i = 0; i < T4_ARRAY_LEN(kinds); i++)
		if (name_matches(&kinds[i], pmu_name, NULL, NULL))
			return &kinds[i];
	return NULL;
}

/* ---- recognising a discovered set ------------------------------------- */

static bool is_generic_name(const char *name)
{
	const char *p = name + strlen(GENERIC_PREFIX);

	return !strncmp(name, GENERIC_PREFIX, strlen(GENERIC_PREFIX)) && take_num(&p) >= 0 &&
	       !*p;
}

/* The first CPU the PMU serves: associated_cpus, else cpumask; -1. */
static int first_cpu(const struct t4_pmu *p)
{
	int c = p->associated_cpus[0] ? t4_cpulist_first(p->associated_cpus, NULL) : -1;

	return c >= 0 ? c : p->cpu;
}

/* The number a name ends with (-1 when none): probe order for RCs. */
static long trailing_num(const char *name)
{
	const char *p = name + strlen(name);

	while (p > name && isdigit((unsigned char)p[-1]))
		p--;
	return *p && strlen(p) < 10 ? atol(p) : -1;
}

/* A Tegra410 PMU of the set, for numbering: sorted once (n log n), since
 * a crafted --sysfs-root may hold thousands of PMUs. */
struct numbered {
	struct t4_pmu *p;
	int cpu;  /* its first CPU, or -1 */
	long num; /* the number its name ends with, or -1 */
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* By kind, first CPU, then name order (the number, then the text): the
 * order the kernel probed a kind's instances on one socket. */
static int cmp_numbered(const void *a, const void *b)
{
	const struct numbered *x = a, *y = b;

	if (x->p->kind->id != y->p->kind->id)
		return (x->p->kind->id > y->p->kind->id) - (x->p->kind->id < y->p->kind->id);
	if (x->cpu != y->cpu)
		return (x->cpu > y->cpu) - (x->cpu < y->cpu);
	if (x->num != y->num)
		return (x->num > y->num) - (x->num < y->num);
	return strcmp(x->p->name, y->p->name);
}

/* Socket and RC number of the PMUs known by identifier under another
 * name: the socket is the rank of the first CPU among the distinct first
 * CPUs of every Tegra410 PMU of the set (the kernel names by the CPU's
 * node), the RC the rank within kind and socket. v: the n Tegra410 PMUs;
 * cpus: room for n. */
static void number_by_order(struct numbered *v, size_t n, int *cpus)
{
	size_t n_all = 0, n_cpus = 0, run = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i].cpu >= 0)
			cpus[n_all++] = v[i].cpu;
	qsort(cpus, n_all, sizeof(*cpus), cmp_int);
	for (size_t i = 0; i < n_all; i++) /* distinct, ascending */
		if (!n_cpus || cpus[n_cpus - 1] != cpus[i])
			cpus[n_cpus++] = cpus[i];
	qsort(v, n, sizeof(*v), cmp_numbered);
	for (size_t i = 0; i < n; i++) {
		struct t4_pmu *p = v[i].p;
		const int *at = v[i].cpu >= 0 ? bsearch(&v[i].cpu, cpus, n_cpus, sizeof(*cpus), cmp_int)
					      : NULL;

		run = i && v[i - 1].p->kind == p->kind && v[i - 1].cpu == v[i].cpu ? run + 1 : 0;
		if (p->naming == T4_NAMING_TEGRA410)
			continue;
		p->socket = at ? (int)(at - cpus) : -1;
		p->instance = t4_kind_has_rc(p->kind) ? (int)run : -1;
	}
}

/* Kind, naming and family of one PMU; the numbers from its name where
 * the Tegra410 drivers named it. */
static void recognise(struct t4_pmu *p)
{
	p->kind = t4_kind_of(p->name, p->identifier);
	p->naming = T4_NAMING_NONE;
	p->socket = p->instance = -1;
	family_of(p->kind ? NULL : p->identifier, p->family, sizeof(p->family));
	if (!p->kind)
		return;
	if (t4_kind_ids(p->kind, p->name, &p->socket, &p->instance) == 0)
		p->naming = T4_NAMING_TEGRA410;
	else
		p->naming = is_generic_name(p->name) ? T4_NAMING_GENERIC : T4_NAMING_OTHER;
}

int t4_kinds_recognise(struct t4_pmu_set *set)
{
	struct numbered *v = calloc(set->n ? set->n : 1, sizeof(*v));
	int *cpus = calloc(set->n ? set->n : 1, sizeof(*cpus));
	size_t n = 0;

	if (!v || !cpus) {
		free(v);
		free(cpus);
		return t4_err(ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < set->n; i++) {
		struct t4_pmu *p = &set->pmus[i];

		recognise(p);
		if (p->kind)
			v[n++] = (struct numbered){ p, first_cpu(p), trailing_num(p->name) };
	}
	number_by_order(v, n, cpus);
	free(v);
	free(cpus);
	return 0;
}

const struct t4_kind_event *t4_kind_event(const struct t4_kind *k,
					  const char *name)
{
	if (!k || !name)
		return NULL;
	for (size_t i = 0; i < k->n_events; i++)
		if (!strcmp(k->events[i].name, name))
			return &k->events[i];
	return NULL;
}

const struct t4_kind_event *t4_kind_event_by_config(const struct t4_kind *k,
						    uint64_t config)
{
	if (!k)
		return NULL;
	for (size_t i = 0; i < k->n_events; i++)
		if (k->events[i].config == config)
			return &k->events[i];
	return NULL;
}

/* Append to buf (truncating). */
static void cat(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
}

const char *t4_pmus_layout(const struct t4_pmu_set *set, char *buf, size_t cap)
{
	static const char *const words[] = {
		[T4_NAMING_TEGRA410] = "the Tegra410 drivers' names (nvidia_ucf_pmu_<socket>, "
				       "nvidia_pcie_pmu_<socket>_rc_<rc>, ...): %zu PMUs",
		[T4_NAMING_GENERIC] = "generic arm_cspmu names (" GENERIC_PREFIX "<n>): %zu "
				      "Tegra410 PMUs known by their identifier (PMIIDR)",
		[T4_NAMING_OTHER] = "another driver's names (a Grace-era kernel's "
				    "nvidia_scf_pmu_<socket>, ...): %zu Tegra410 PMUs known by "
				    "their identifier",
	};
	size_t n[T4_ARRAY_LEN(words)] = { 0 }, others = 0;
	const char *family = NULL;

	buf[0] = '\0';
	for (size_t i = 0; i < set->n; i++) {
		n[set->pmus[i].naming]++;
		if (set->pmus[i].family[0] && !others++)
			family = set->pmus[i].family;
	}
	for (size_t w = T4_NAMING_TEGRA410; w < T4_ARRAY_LEN(words); w++) {
		if (!n[w])
			continue;
		if (buf[0])
			cat(buf, cap, "; ");
		cat(buf, cap, words[w], n[w]);
	}
	if (!buf[0])
		cat(buf, cap, "no Tegra410 PMU");
	if (others)
		cat(buf, cap, " (and %zu NVIDIA PMU%s of another chip or revision, e.g. %s)",
		    others, others == 1 ? "" : "s", family);
	return buf;
}
