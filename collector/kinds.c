/* kinds.c - what t410trace knows about the NVIDIA Tegra410 uncore PMUs, as
 * data: one static table of the seven PMU kinds (name prefix, identifier,
 * events with their ids, the clock event, a default event set and the
 * seed-000 formulas).
 *
 * Trade-offs: the table is the only place that knows a kind; every other
 * file asks it (no "is this a PCIE PMU" if-chains elsewhere). Recognition
 * goes by name prefix (+ socket, and "_rc_<n>" for the PCIE kinds) and falls
 * back to the sysfs identifier, so a driver that renames its PMUs still
 * maps to a kind when it keeps its identifier. Lookups are linear: seven
 * entries. Formulas are plain strings the decoder evaluates; events are the
 * facts-file ids, used when a sysfs tree lacks an alias.
 */
#include "collector.h"
#include "../util/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define EV(n, c) { n, c }
#define CYCLES_BIT32 0x100000000ull

static const struct t4_kind_event ucf_events[] = {
	EV("bus_cycles", 0x1d),		 EV("slc_allocate", 0xf0),
	EV("slc_wb", 0xf3),		 EV("slc_refill_rd", 0x109),
	EV("slc_refill_wr", 0x10a),	 EV("slc_access_rd", 0x111),
	EV("slc_access_wr", 0x112),	 EV("slc_bytes_rd", 0x113),
	EV("slc_bytes_wr", 0x114),	 EV("slc_hit_rd", 0x119),
	EV("mem_access_rd", 0x121),	 EV("mem_access_wr", 0x122),
	EV("mem_bytes_rd", 0x123),	 EV("mem_bytes_wr", 0x124),
	EV("local_snoop", 0x180),	 EV("ext_snp_access", 0x181),
	EV("ext_snp_evict", 0x182),	 EV("slc_access_dataless", 0x183),
	EV("slc_access_atomic", 0x184), EV("cycles", CYCLES_BIT32),
};

static const struct t4_kind_event pcie_events[] = {
	EV("rd_bytes", 0x0), EV("wr_bytes", 0x1),    EV("rd_req", 0x2),
	EV("wr_req", 0x3),   EV("rd_cum_outs", 0x4), EV("cycles", CYCLES_BIT32),
};

static const struct t4_kind_event pcie_tgt_events[] = {
	EV("rd_bytes", 0x0), EV("wr_bytes", 0x1), EV("rd_req", 0x2),
	EV("wr_req", 0x3),   EV("cycles", 0x4),
};

static const struct t4_kind_event cmem_events[] = {
	EV("cycles", 0x0), EV("rd_req", 0x1), EV("rd_cum_outs", 0x2),
};

static const struct t4_kind_event c2c_events[] = {
	EV("cycles", 0x0),	    EV("in_rd_cum_outs", 0x1),
	EV("in_rd_req", 0x2),	    EV("in_wr_cum_outs", 0x3),
	EV("in_wr_req", 0x4),	    EV("out_rd_cum_outs", 0x5),
	EV("out_rd_req", 0x6),	    EV("out_wr_cum_outs", 0x7),
	EV("out_wr_req", 0x8),
};

static const struct t4_kind_event clink_events[] = {
	EV("cycles", 0x0),	   EV("in_rd_cum_outs", 0x1),
	EV("in_rd_req", 0x2),	   EV("out_rd_cum_outs", 0x5),
	EV("out_rd_req", 0x6),
};

static const struct t4_kind_event dlink_events[] = {
	EV("cycles", 0x0), EV("in_rd_cum_outs", 0x1), EV("in_rd_req", 0x2),
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
 * metrics; request rates and latencies in cycles complete the set. */
#define FREQ(n) { n, "GHz", "cycles / elapsed_ns", true }
#define BW(n, ev) { n, "GB/s", ev " / elapsed_ns", true }
#define RATE(n, ev) { n, "req/cycle", ev " / cycles", false }
#define LAT_CYC(n, outs, req) { n, "cycles", outs " / " req, false }
#define LAT_NS(n, outs, req) { n, "ns", "(" outs " / " req ") / (cycles / elapsed_ns)", true }
#define LAT(pfx, outs, req) \
	LAT_CYC(pfx "_latency_cycles", outs, req), LAT_NS(pfx "_latency_ns", outs, req)

static const struct t4_formula ucf_formulas[] = {
	BW("slc_read_bw", "slc_bytes_rd"),   BW("slc_write_bw", "slc_bytes_wr"),
	BW("mem_read_bw", "mem_bytes_rd"),   BW("mem_write_bw", "mem_bytes_wr"),
	RATE("slc_read_req_rate", "slc_access_rd"),
	RATE("slc_write_req_rate", "slc_access_wr"),
	RATE("mem_read_req_rate", "mem_access_rd"),
	RATE("mem_write_req_rate", "mem_access_wr"),
	FREQ("ucf_freq"),
};

static const struct t4_formula pcie_formulas[] = {
	BW("rd_bw", "rd_bytes"),      BW("wr_bw", "wr_bytes"),
	RATE("rd_req_rate", "rd_req"), RATE("wr_req_rate", "wr_req"),
	FREQ("pcie_freq"),	      LAT("rd", "rd_cum_outs", "rd_req"),
};

static const struct t4_formula pcie_tgt_formulas[] = {
	BW("rd_bw", "rd_bytes"),      BW("wr_bw", "wr_bytes"),
	RATE("rd_req_rate", "rd_req"), RATE("wr_req_rate", "wr_req"),
	FREQ("pcie_tgt_freq"),
};

/* CMEM read requests are 32 bytes each (seed 000). */
static const struct t4_formula cmem_formulas[] = {
	FREQ("cmem_freq"),
	LAT("rd", "rd_cum_outs", "rd_req"),
	{ "rd_bw", "GB/s", "rd_req * 32 / elapsed_ns", true },
	RATE("rd_req_rate", "rd_req"),
};

static const struct t4_formula c2c_formulas[] = {
	FREQ("c2c_freq"),
	LAT("in_rd", "in_rd_cum_outs", "in_rd_req"),
	LAT("in_wr", "in_wr_cum_outs", "in_wr_req"),
	LAT("out_rd", "out_rd_cum_outs", "out_rd_req"),
	LAT("out_wr", "out_wr_cum_outs", "out_wr_req"),
	RATE("in_rd_req_rate", "in_rd_req"),
	RATE("out_rd_req_rate", "out_rd_req"),
};

static const struct t4_formula clink_formulas[] = {
	FREQ("clink_freq"),
	LAT("in_rd", "in_rd_cum_outs", "in_rd_req"),
	LAT("out_rd", "out_rd_cum_outs", "out_rd_req"),
	RATE("in_rd_req_rate", "in_rd_req"),
	RATE("out_rd_req_rate", "out_rd_req"),
};

static const struct t4_formula dlink_formulas[] = {
	FREQ("dlink_freq"),
	LAT("in_rd", "in_rd_cum_outs", "in_rd_req"),
	RATE("in_rd_req_rate", "in_rd_req"),
};

#define KIND(id_, label_, prefix_, ident_, ev, def, fo)                        \
	{ .id = id_, .label = label_, .prefix = prefix_, .identifier = ident_,  \
	  .clock_event = "cycles", .events = ev, .n_events = T4_ARRAY_LEN(ev), \
	  .defaults = def, .formulas = fo, .n_formulas = T4_ARRAY_LEN(fo) }

static const struct t4_kind kinds[] = {
	KIND(T4_DOM_UCF, "UCF", "nvidia_ucf_pmu_", NULL, ucf_events,
	     ucf_defaults, ucf_formulas),
	KIND(T4_DOM_PCIE, "PCIE", "nvidia_pcie_pmu_", NULL, pcie_events,
	     pcie_defaults, pcie_formulas),
	KIND(T4_DOM_PCIE_TGT, "PCIE-TGT", "nvidia_pcie_tgt_pmu_", NULL,
	     pcie_tgt_events, pcie_tgt_defaults, pcie_tgt_formulas),
	KIND(T4_DOM_CMEM_LAT, "CMEM latency", "nvidia_cmem_latency_pmu_",
	     "NVDA2021", cmem_events, cmem_defaults, cmem_formulas),
	KIND(T4_DOM_NVLINK_C2C, "NVLink-C2C", "nvidia_nvlink_c2c_pmu_",
	     "NVDA2023", c2c_events, c2c_defaults, c2c_formulas),
	KIND(T4_DOM_NVCLINK, "NV-CLink", "nvidia_nvclink_pmu_", "NVDA2022",
	     clink_events, clink_defaults, clink_formulas),
	KIND(T4_DOM_NVDLINK, "NV-DLink", "nvidia_nvdlink_pmu_", "NVDA2020",
	     dlink_events, dlink_defaults, dlink_formulas),
};

/* The host's domains: software counters (per CPU, or per task with -p),
 * msr/tsc. A formula whose event was not recorded is simply absent. */
static const struct t4_formula software_formulas[] = {
	{ "cpu_util", "%", "cpu-clock / elapsed_ns * 100", true },
	{ "task_util", "%", "task-clock / elapsed_ns * 100", true },
	{ "ctx_switch_rate", "/s", "context-switches / elapsed_ns * 1000000000", true },
	{ "page_fault_rate", "/s", "page-faults / elapsed_ns * 1000000000", false },
	{ "migration_rate", "/s", "cpu-migrations / elapsed_ns * 1000000000", false },
};
static const struct t4_formula tsc_formulas[] = {
	{ "tsc_freq", "GHz", "tsc / elapsed_ns", true },
};

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
	const char *p;

	*socket = -1;
	*instance = -1;
	if (!k || !name)
		return -1;
	if (name_matches(k, name, socket, instance))
		return 0;
	/* Recognised by identifier only: take the trailing number. */
	p = name + strlen(name);
	while (p > name && isdigit((unsigned char)p[-1]))
		p--;
	if (*p)
		*socket = atoi(p);
	return 0;
}

const struct t4_kind *t4_kind_of(const char *pmu_name, const char *identifier)
{
	if (!pmu_name)
		return NULL;
	for (size_t i = 0; i < T4_ARRAY_LEN(kinds); i++)
		if (name_matches(&kinds[i], pmu_name, NULL, NULL))
			return &kinds[i];
	if (!identifier || !*identifier)
		return NULL;
	for (size_t i = 0; i < T4_ARRAY_LEN(kinds); i++)
		if (kinds[i].identifier && !strcmp(kinds[i].identifier, identifier))
			return &kinds[i];
	return NULL;
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
