/* sim_model.c - the simulated Tegra410's workload model: the seven PMU
 * kinds as data (sysfs shape and traffic profile), the seeded parameters
 * (schedule, clocks, traffic cells) and the exact analytic evaluation of
 * every counter at any instant.
 *
 * Trade-offs: rates are piecewise constant per workload segment (no
 * sinusoids: exact integer integrals matter more than smoothness), the
 * schedule repeats every cycle and the DVFS pattern repeats every
 * SIM_LEVELS steps of whole cycles, so any instant is evaluated in O(1)
 * from per-cycle prefix sums precomputed at create time (~1 MB for all 34
 * PMUs). Every elementary traffic cell's cumulative count is the floor of
 * its own integral, and a filtered counter is the sum of the cells its
 * filter selects, so filtered parts add up exactly to the whole. All
 * arithmetic is integer (128-bit), hence bit-identical across compilers
 * and architectures. Evaluation never allocates or writes shared state.
 */
#include "sim_internal.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the kinds ------------------------------------------------------------ */

#define CYC32 0x100000000ull
#define ALL3 { 1000, 1000, 1000 }
#define EVC(n, c) { n, c, SIM_OP_CLOCK, 0, ALL3 }
#define EVR(n, c, cls, a, b, d) { n, c, SIM_OP_REQ, cls, { a, b, d } }
#define EVB(n, c, cls, a, b, d) { n, c, SIM_OP_BYTES, cls, { a, b, d } }
#define EVO(n, c, cls) { n, c, SIM_OP_OUTS, cls, ALL3 }

static const struct sim_fmt ucf_fmts[] = {
	{ "event", "config:0-32" },	 { "src_loc_noncpu", "config1:0" },
	{ "src_loc_cpu", "config1:1" },	 { "src_rem", "config1:2" },
	{ "dst_loc_cmem", "config1:8" }, { "dst_loc_gmem", "config1:9" },
	{ "dst_loc_other", "config1:10" }, { "dst_rem", "config1:11" },
};
static const struct sim_event ucf_events[] = {
	EVC("bus_cycles", 0x1d),
	EVR("slc_allocate", 0xf0, 1, 600, 700, 800),
	EVR("slc_wb", 0xf3, 1, 300, 500, 600),
	EVR("slc_refill_rd", 0x109, 0, 200, 800, 700),
	EVR("slc_refill_wr", 0x10a, 1, 100, 300, 300),
	EVR("slc_access_rd", 0x111, 0, 1000, 1000, 1000),
	EVR("slc_access_wr", 0x112, 1, 1000, 1000, 1000),
	EVB("slc_bytes_rd", 0x113, 0, 1000, 1000, 1000),
	EVB("slc_bytes_wr", 0x114, 1, 1000, 1000, 1000),
	EVR("slc_hit_rd", 0x119, 0, 800, 200, 300),
	EVR("mem_access_rd", 0x121, 0, 200, 800, 700),
	EVR("mem_access_wr", 0x122, 1, 300, 500, 600),
	EVB("mem_bytes_rd", 0x123, 0, 200, 800, 700),
	EVB("mem_bytes_wr", 0x124, 1, 300, 500, 600),
	EVR("local_snoop", 0x180, 0, 50, 20, 10),
	EVR("ext_snp_access", 0x181, 0, 20, 100, 30),
	EVR("ext_snp_evict", 0x182, 0, 5, 30, 10),
	EVR("slc_access_dataless", 0x183, 1, 20, 10, 5),
	EVR("slc_access_atomic", 0x184, 1, 10, 2, 1),
	EVC("cycles", CYC32),
};
/* [phase][src noncpu,cpu,rem x dst cmem,gmem,other,rem][rd,wr], M req/s */
static const uint16_t ucf_rate[] = {
	/* cpu_compute: the CPU works out of CMEM, little else */
	4, 2, 1, 1, 0, 0, 1, 0,   60, 25, 2, 1, 1, 0, 4, 2,
	4, 2, 1, 0, 0, 0, 0, 0,
	/* gpu_stream: CPU streams to GMEM, GPU reads CMEM over C2C */
	300, 120, 20, 10, 2, 1, 30, 10,   40, 20, 350, 250, 2, 1, 20, 10,
	30, 10, 60, 30, 1, 0, 0, 0,
	/* pcie_dma: devices DMA to CMEM */
	250, 200, 40, 30, 10, 5, 20, 15,   30, 15, 5, 2, 1, 1, 5, 2,
	10, 5, 2, 1, 1, 0, 0, 0,
};

static const struct sim_fmt pcie_fmts[] = {
	{ "event", "config:0-32" },	     { "src_rp_mask", "config1:0-7" },
	{ "src_bdf", "config1:8-23" },	     { "src_bdf_en", "config1:24" },
	{ "dst_loc_cmem", "config2:0" },     { "dst_loc_gmem", "config2:1" },
	{ "dst_loc_pcie_p2p", "config2:2" }, { "dst_loc_pcie_cxl", "config2:3" },
	{ "dst_rem", "config2:4" },
};
static const struct sim_event pcie_events[] = {
	EVB("rd_bytes", 0x0, 0, 1000, 1000, 1000),
	EVB("wr_bytes", 0x1, 1, 1000, 1000, 1000),
	EVR("rd_req", 0x2, 0, 1000, 1000, 1000),
	EVR("wr_req", 0x3, 1, 1000, 1000, 1000),
	EVO("rd_cum_outs", 0x4, 0),
	EVC("cycles", CYC32),
};
/* [phase][dst cmem,gmem,p2p,cxl,rem][rd,wr], M req/s per device */
static const uint16_t pcie_rate[] = {
	2, 2, 0, 0, 0, 0, 0, 0, 0, 0,
	5, 5, 10, 5, 2, 2, 0, 0, 1, 1,
	30, 20, 8, 5, 3, 3, 2, 1, 3, 2,
};
static const uint16_t pcie_lat[] = { 500, 0, 650, 0, 900, 0 };

static const struct sim_fmt tgt_fmts[] = {
	{ "event", "config:0-2" },	   { "dst_rp_mask", "config:3-10" },
	{ "dst_addr_en", "config:11" },	   { "dst_addr_base", "config1:0-63" },
	{ "dst_addr_mask", "config2:0-63" },
};
static const struct sim_event tgt_events[] = {
	EVB("rd_bytes", 0x0, 0, 1000, 1000, 1000),
	EVB("wr_bytes", 0x1, 1, 1000, 1000, 1000),
	EVR("rd_req", 0x2, 0, 1000, 1000, 1000),
	EVR("wr_req", 0x3, 1, 1000, 1000, 1000),
	EVC("cycles", 0x4),
};
/* [phase][BAR window, CXL HDM window][rd,wr], M req/s per window */
static const uint16_t tgt_rate[] = {
	1, 2, 0, 0,   3, 6, 2, 1,   8, 20, 10, 5,
};

static const struct sim_fmt cmem_fmts[] = { { "event", "config:0-1" } };
static const struct sim_event cmem_events[] = {
	EVC("cycles", 0x0),
	EVR("rd_req", 0x1, 0, 1000, 1000, 1000),
	EVO("rd_cum_outs", 0x2, 0),
};
static const uint16_t cmem_rate[] = { 300, 900, 700 };
static const uint16_t cmem_lat[] = { 110, 240, 170 };

static const struct sim_fmt c2c_fmts[] = {
	{ "event", "config:0-3" }, { "gpu_mask", "config1:0-1" },
};
static const struct sim_fmt link_fmts[] = { { "event", "config:0-3" } };
static const struct sim_event c2c_events[] = {
	EVC("cycles", 0x0),
	EVO("in_rd_cum_outs", 0x1, 0),
	EVR("in_rd_req", 0x2, 0, 1000, 1000, 1000),
	EVO("in_wr_cum_outs", 0x3, 1),
	EVR("in_wr_req", 0x4, 1, 1000, 1000, 1000),
	EVO("out_rd_cum_outs", 0x5, 2),
	EVR("out_rd_req", 0x6, 2, 1000, 1000, 1000),
	EVO("out_wr_cum_outs", 0x7, 3),
	EVR("out_wr_req", 0x8, 3, 1000, 1000, 1000),
};
/* [phase][in_rd, in_wr, out_rd, out_wr], M req/s per GPU */
static const uint16_t c2c_rate[] = {
	2, 1, 3, 1,   250, 120, 150, 100,   20, 10, 15, 10,
};
static const uint16_t c2c_lat[] = {
	700, 400, 800, 450,   1100, 600, 1300, 700,   800, 450, 900, 500,
};

static const struct sim_event clink_events[] = {
	EVC("cycles", 0x0),
	EVO("in_rd_cum_outs", 0x1, 0),
	EVR("in_rd_req", 0x2, 0, 1000, 1000, 1000),
	EVO("out_rd_cum_outs", 0x5, 1),
	EVR("out_rd_req", 0x6, 1, 1000, 1000, 1000),
};
static const uint16_t clink_rate[] = { 10, 10, 40, 30, 20, 25 };
static const uint16_t clink_lat[] = { 300, 320, 420, 450, 350, 380 };

static const struct sim_event dlink_events[] = {
	EVC("cycles", 0x0),
	EVO("in_rd_cum_outs", 0x1, 0),
	EVR("in_rd_req", 0x2, 0, 1000, 1000, 1000),
};
static const uint16_t dlink_rate[] = { 5, 20, 40 };
static const uint16_t dlink_lat[] = { 400, 550, 500 };

_Static_assert(T4_ARRAY_LEN(ucf_rate) == SIM_PHASES * 12 * 2, "ucf_rate");
_Static_assert(T4_ARRAY_LEN(pcie_rate) == SIM_PHASES * 5 * 2, "pcie_rate");
_Static_assert(T4_ARRAY_LEN(tgt_rate) == SIM_PHASES * 2 * 2, "tgt_rate");
_Static_assert(T4_ARRAY_LEN(c2c_rate) == SIM_PHASES * 4, "c2c_rate");
_Static_assert(T4_ARRAY_LEN(c2c_lat) == SIM_PHASES * 4, "c2c_lat");
_Static_assert(T4_ARRAY_LEN(clink_rate) == SIM_PHASES * 2, "clink_rate");
_Static_assert(T4_ARRAY_LEN(clink_lat) == SIM_PHASES * 2, "clink_lat");

#define FMTS(x) .fmts = x, .n_fmts = T4_ARRAY_LEN(x)
#define EVENTS(x) .events = x, .n_events = T4_ARRAY_LEN(x)
#define MASK33 0x1ffffffffull

/* One row per Tegra410 kind of packets.h's T4_DOMAIN_KINDS (its name
 * prefix and identifier come from kinds.c). Order matters: it is the order
 * PMUs are created in per socket. */
static const struct sim_kind kinds[] = {
	{ .id = T4_DOM_UCF, FMTS(ucf_fmts), EVENTS(ucf_events), .event_mask = MASK33,
	  .n_cls = 2, .n_cc = 12, .rate = ucf_rate, .size = { 64, 128, 64 },
	  .always_dvfs = true, .any_event = true },
	{ .id = T4_DOM_PCIE, FMTS(pcie_fmts), EVENTS(pcie_events), .event_mask = MASK33,
	  .n_cls = 2, .n_cc = 5, .rate = pcie_rate, .lat = pcie_lat, .size = { 64, 128, 128 },
	  .any_event = true },
	{ .id = T4_DOM_PCIE_TGT, FMTS(tgt_fmts), EVENTS(tgt_events), .event_mask = 0x7,
	  .n_cls = 2, .n_cc = 2, .rate = tgt_rate, .size = { 8, 32, 64 }, .any_event = true },
	{ .id = T4_DOM_CMEM_LAT, .identifier = true, FMTS(cmem_fmts), EVENTS(cmem_events),
	  .event_mask = 0x3, .n_cls = 1, .n_cc = 1, .rate = cmem_rate, .lat = cmem_lat,
	  .size = { 32, 32, 32 } },
	{ .id = T4_DOM_NVLINK_C2C, .identifier = true, .peer = "nr_gpu=2", FMTS(c2c_fmts),
	  EVENTS(c2c_events), .event_mask = 0xf, .n_cls = 4, .n_cc = 1, .rate = c2c_rate,
	  .lat = c2c_lat, .size = { 64, 128, 64 }, .always_dvfs = true },
	{ .id = T4_DOM_NVCLINK, .identifier = true, .peer = "nr_cpu=1", FMTS(link_fmts),
	  EVENTS(clink_events), .event_mask = 0xf, .n_cls = 2, .n_cc = 1, .rate = clink_rate,
	  .lat = clink_lat, .size = { 64, 64, 64 } },
	{ .id = T4_DOM_NVDLINK, .identifier = true, .peer = "nr_cxlmem=1", FMTS(link_fmts),
	  EVENTS(dlink_events), .event_mask = 0xf, .n_cls = 1, .n_cc = 1, .rate = dlink_rate,
	  .lat = dlink_lat, .size = { 64, 64, 64 } },
};
_Static_assert(T4_ARRAY_LEN(kinds) == T4_DOM_T410_KINDS,
	       "one simulated kind per Tegra410 kind of packets.h's T4_DOMAIN_KINDS");

const struct sim_kind *sim_kind_table(size_t *n)
{
	*n = T4_ARRAY_LEN(kinds);
	return kinds;
}

/* Root ports per RC as in seed 000's DVSEC example: RP number and bus. */
struct sim_rc_topo {
	uint8_t n, rp[4], bus[4];
};
static const struct sim_rc_topo topo[SIM_SOCKETS][SIM_RCS] = {
	{ { 1, { 0 }, { 0x00 } },
	  { 4, { 1, 2, 3, 4 }, { 0x80, 0xa0, 0xc0, 0xe0 } },
	  { 1, { 0 }, { 0x00 } },
	  { 1, { 0 }, { 0x00 } },
	  { 3, { 0, 1, 2 }, { 0x00, 0x40, 0xc0 } },
	  { 1, { 0 }, { 0x00 } } },
	{ { 1, { 0 }, { 0x00 } },
	  { 3, { 1, 2, 3 }, { 0x80, 0xa0, 0xe0 } },
	  { 1, { 0 }, { 0x00 } },
	  { 1, { 0 }, { 0x00 } },
	  { 3, { 0, 1, 2 }, { 0x00, 0x40, 0xc0 } },
	  { 1, { 0 }, { 0x00 } } },
};

/* ---- seeded parameters ----------------------------------------------------- */

enum { TAG_SCHED = 1, TAG_PMU, TAG_CELL, TAG_DEV, TAG_WANDER };

static uint64_t pick(uint64_t h, uint64_t lo, uint64_t hi)
{
	return lo + h % (hi - lo + 1);
}

static void build_sched(struct t4_sim *sim)
{
	struct sim_sched *sc = &sim->sched;
	uint8_t perm[SIM_PHASES] = { 0, 1, 2 };

	for (unsigned i = SIM_PHASES - 1; i > 0; i--) {
		unsigned j = (unsigned)(t4_hash(sim->seed, TAG_SCHED, 1, i) % (i + 1));
		uint8_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	sc->nseg = (unsigned)pick(t4_hash(sim->seed, TAG_SCHED, 0, 0), 6,
				  SIM_NSEG_MAX);
	sc->start[0] = 0;
	for (unsigned s = 0; s < sc->nseg; s++) {
		uint64_t ms = pick(t4_hash(sim->seed, TAG_SCHED, 2, s), 200, 600);
		sc->phase[s] = perm[s % SIM_PHASES];
		sc->intensity[s] = (uint16_t)pick(
			t4_hash(sim->seed, TAG_SCHED, 3, s), 600, 1400);
		sc->start[s + 1] = sc->start[s] + ms * 1000000ull;
	}
}

static uint64_t pmu_key(const struct sim_pmu *p)
{
	return ((uint64_t)p->kind->id << 16) | ((uint64_t)p->socket << 8) |
	       (uint64_t)(p->rc + 1);
}

/* Slow wander of cycle j of the PMU's clock period, in ppb: three
 * quarters a triangle wave over the period (seeded phase), one quarter a
 * seeded step per cycle, together within +-wander_ppm. */
static int64_t wander_ppb(const struct t4_sim *sim, const struct sim_pmu *p,
			  uint64_t k, unsigned j)
{
	int64_t w = p->cycles, x = (int64_t)((j + t4_hash(sim->seed, TAG_PMU, k, 21)) %
					     p->cycles);
	int64_t tri = x < w / 2 ? -1000 + 4000 * x / w : 3000 - 4000 * x / w;
	int64_t step = (int64_t)pick(t4_hash(sim->seed, TAG_WANDER, k, j), 0, 2000) - 1000;

	return (int64_t)sim->wander_ppm * (3 * tri + step) / 4;
}

/* F of every cycle of the clock's period and their prefix sums. The DVFS
 * pattern (SIM_LEVELS steps of step_cycles) divides the period. */
static void build_cycles(struct t4_sim *sim, struct sim_pmu *p, uint64_t k)
{
	p->cycles = (uint8_t)(8 * pick(t4_hash(sim->seed, TAG_PMU, k, 20), 2,
				       SIM_WANDER_MAX / 8));
	p->G[0] = 0;
	for (unsigned j = 0; j < p->cycles; j++) {
		unsigned l = j % (SIM_LEVELS * p->step_cycles) / p->step_cycles;
		int64_t ppb = 1000000000ll + 1000ll * p->ppm + wander_ppb(sim, p, k, j);
		sim_u128 f = (sim_u128)p->nominal_hz * p->level[l] * (uint64_t)ppb;

		p->F[j] = (uint64_t)((f << 32) / ((sim_u128)1000000000000000000ull * 1000));
		p->G[j + 1] = p->G[j] + p->F[j];
	}
}

static void build_clock(struct t4_sim *sim, struct sim_pmu *p)
{
	uint64_t k = pmu_key(p), d = sim->drift_ppm;

	p->nominal_hz = pick(t4_hash(sim->seed, TAG_PMU, k, 0), 500, 3000) *
			1000000ull;
	p->ppm = (int32_t)((int64_t)pick(t4_hash(sim->seed, TAG_PMU, k, 1), 0, 2 * d) -
			   (int64_t)d);
	p->dvfs = p->kind->always_dvfs ||
		  t4_hash(sim->seed, TAG_PMU, k, 2) % 3 == 0;
	p->step_cycles = (uint32_t)pick(t4_hash(sim->seed, TAG_PMU, k, 3), 1, 2);
	for (unsigned l = 0; l < SIM_LEVELS; l++)
		/* levels at least 5% apart: 1000, 850-900, 750-800, 650-700 */
		p->level[l] = l == 0 || !p->dvfs ? 1000 :
			(uint16_t)(1000 - 100 * l -
				   pick(t4_hash(sim->seed, TAG_PMU, k, 4 + l), 0, 50));
	build_cycles(sim, p, k);
}

static void add_cell(struct t4_sim *sim, struct sim_pmu *p, uint8_t cc,
		     uint8_t key1, uint8_t key2)
{
	struct sim_cell *ce = &p->cells[p->n_cells];
	uint64_t k = pmu_key(p) << 8 | p->n_cells;

	ce->cc = cc;
	ce->key1 = key1;
	ce->key2 = key2;
	for (unsigned i = 0; i < SIM_CLS_MAX; i++)
		ce->w[i] = (uint16_t)pick(t4_hash(sim->seed, TAG_CELL, k, i), 700, 1300);
	ce->lw = (uint16_t)pick(t4_hash(sim->seed, TAG_CELL, k, 9), 850, 1150);
	if (key1 != SIM_KEY_NONE)
		p->key1_cells[key1] |= 1ull << p->n_cells;
	if (key2 != SIM_KEY_NONE)
		p->key2_cells[key2] |= 1ull << p->n_cells;
	p->n_cells++;
}

/* The PCIe endpoints of (socket, rc): 1 or 2 functions per root port, the
 * same for the PCIE and the PCIE-TGT PMU of that RC, then one CXL HDM
 * window. Addresses: see docs/SIMULATOR.md. */
static void build_devs(struct t4_sim *sim, struct sim_pmu *p)
{
	const struct sim_rc_topo *tp = &topo[p->socket][p->rc];
	uint64_t rcbase = ((uint64_t)p->socket << 40) | ((uint64_t)p->rc << 36);

	for (unsigned i = 0; i < tp->n; i++) {
		unsigned nfn = 1 + (unsigned)(t4_hash(sim->seed, TAG_DEV,
			(uint64_t)p->socket << 8 | (uint64_t)p->rc, tp->rp[i]) & 1);

		for (unsigned fn = 0; fn < nfn; fn++) {
			struct t4_sim_dev *d = &p->devs[p->n_devs++];

			d->rp = tp->rp[i];
			d->bdf = (uint16_t)(((tp->bus[i] + 1u) << 8) | fn);
			d->base = 0x700000000000ull | rcbase |
				  ((uint64_t)tp->rp[i] << 32) | ((uint64_t)fn << 28);
			d->size = 1ull << 28;
		}
	}
	p->devs[p->n_devs] = (struct t4_sim_dev){ -1, 0, 0x400000000000ull | rcbase,
					       1ull << 32 };
	p->n_devs++;
}

static void build_cells(struct t4_sim *sim, struct sim_pmu *p)
{
	switch (p->kind->id) {
	case T4_DOM_UCF:
		for (uint8_t src = 0; src < 3; src++)
			for (uint8_t dst = 0; dst < 4; dst++)
				add_cell(sim, p, (uint8_t)(src * 4 + dst), src, dst);
		break;
	case T4_DOM_PCIE:
		build_devs(sim, p);
		for (unsigned i = 0; p->devs[i].rp >= 0; i++)
			for (uint8_t dst = 0; dst < 5; dst++) {
				add_cell(sim, p, dst, (uint8_t)p->devs[i].rp, dst);
				p->cells[p->n_cells - 1].bdf = p->devs[i].bdf;
			}
		break;
	case T4_DOM_PCIE_TGT:
		build_devs(sim, p);
		for (unsigned i = 0; i < p->n_devs; i++) {
			bool bar = p->devs[i].rp >= 0;
			add_cell(sim, p, bar ? 0 : 1,
				 bar ? (uint8_t)p->devs[i].rp : SIM_KEY_NONE,
				 SIM_KEY_NONE);
			p->cells[p->n_cells - 1].addr = p->devs[i].base;
		}
		break;
	case T4_DOM_NVLINK_C2C:
		add_cell(sim, p, 0, 0, SIM_KEY_NONE);
		add_cell(sim, p, 0, 1, SIM_KEY_NONE);
		break;
	default:
		add_cell(sim, p, 0, SIM_KEY_NONE, SIM_KEY_NONE);
		break;
	}
}

/* Latency in ns of a cell's requests of class cls in a phase. */
static uint64_t cell_latency(const struct sim_kind *k, const struct sim_cell *ce,
			     unsigned cls, unsigned phase)
{
	if (!k->lat)
		return 0;
	return (uint64_t)k->lat[phase * k->n_cls + cls] * ce->lw / 1000;
}

/* Rate of one event in one cell during segment s (see sim_internal.h). */
static uint64_t seg_rate(const struct t4_sim *sim, const struct sim_kind *k,
			 const struct sim_event *ev, const struct sim_cell *ce,
			 unsigned s)
{
	unsigned ph = sim->sched.phase[s];
	sim_u128 r = (sim_u128)k->rate[(ph * k->n_cc + ce->cc) * k->n_cls + ev->cls] *
		     ce->w[ev->cls] * sim->sched.intensity[s] * ev->factor[ph];
	uint64_t a;

	if (ev->op == SIM_OP_BYTES)
		r *= k->size[ph];
	a = (uint64_t)((r << 32) / 1000000000000ull); /* M/s * permille^3 */
	if (ev->op == SIM_OP_OUTS)
		a *= cell_latency(k, ce, ev->cls, ph);
	return a;
}

static void build_series(struct t4_sim *sim, struct sim_pmu *p)
{
	const struct sim_sched *sc = &sim->sched;

	for (size_t e = 0; e < p->kind->n_events; e++) {
		const struct sim_event *ev = &p->kind->events[e];

		if (ev->op == SIM_OP_CLOCK)
			continue;
		for (unsigned c = 0; c < p->n_cells; c++) {
			struct sim_series *se = &p->series[e * p->n_cells + c];

			se->P[0] = 0;
			for (unsigned s = 0; s < sc->nseg; s++) {
				se->a[s] = seg_rate(sim, p->kind, ev, &p->cells[c], s);
				se->P[s + 1] = se->P[s] + (sim_u128)se->a[s] *
					(sc->start[s + 1] - sc->start[s]);
			}
		}
	}
}

/* Needs each PMU's kind, socket and rc set. */
int sim_model_build(struct t4_sim *sim)
{
	size_t total = 0, off = 0;

	build_sched(sim);
	for (unsigned i = 0; i < SIM_N_PMUS; i++) {
		struct sim_pmu *p = &sim->pmus[i];

		build_clock(sim, p);
		build_cells(sim, p);
		total += p->kind->n_events * p->n_cells;
	}
	sim->series = calloc(total, sizeof(*sim->series));
	if (!sim->series)
		return t4_err(ENOMEM, "simulator: out of memory for %zu series", total);
	for (unsigned i = 0; i < SIM_N_PMUS; i++) {
		struct sim_pmu *p = &sim->pmus[i];

		p->series = sim->series + off;
		off += p->kind->n_events * p->n_cells;
		build_series(sim, p);
	}
	return 0;
}

/* ---- evaluation ------------------------------------------------------------- */

/* floor((g * t + add) / 2^sh) truncated to 64 bits, for 0 < sh < 128,
 * without overflow for g*t + add < 2^192. */
static uint64_t mul_shift(uint64_t g, sim_u128 t, sim_u128 add, unsigned sh)
{
	sim_u128 lo = (sim_u128)g * (uint64_t)t;
	sim_u128 hi = (sim_u128)g * (uint64_t)(t >> 64);
	sim_u128 sum = lo + add;
	sim_u128 top = hi + (sum >> 64) + ((sim_u128)(sum < lo) << 64);

	if (sh >= 64)
		return (uint64_t)(top >> (sh - 64));
	return (uint64_t)((top << (64 - sh)) | ((uint64_t)sum >> sh));
}

void sim_time_at(const struct t4_sim *sim, const struct sim_pmu *p,
		 uint64_t t_ns, struct sim_at *at)
{
	const struct sim_sched *sc = &sim->sched;
	uint64_t u = t_ns > sim->epoch ? t_ns - sim->epoch : 0;
	uint64_t cyc = sc->start[sc->nseg];

	if (u > SIM_U_MAX)
		u = SIM_U_MAX;
	at->c = u / cyc;
	at->r = u % cyc;
	at->s = 0;
	while (at->s + 1 < sc->nseg && sc->start[at->s + 1] <= at->r)
		at->s++;
	at->dr = at->r - sc->start[at->s];
	at->G = at->c / p->cycles * p->G[p->cycles] + p->G[at->c % p->cycles];
	at->F = p->F[at->c % p->cycles];
}

uint64_t sim_clock(const struct t4_sim *sim, const struct sim_at *at)
{
	uint64_t cyc = sim->sched.start[sim->sched.nseg];

	return (uint64_t)(((sim_u128)at->G * cyc + (sim_u128)at->F * at->r) >> 32);
}

/* A counter is the sum over its cells of floor(X_i / 2^sh), where X_i is
 * the cell's integral in fixed point: c * P_N + part (sh 32) or, for
 * cum_outs, G * P_N + F * part (sh 64), part = P[s] + a[s] * dr. Rather
 * than one 192-bit division per cell, the sum of the floors is the floor
 * of the sum (one division, from the selection's sums) minus the carries
 * of the remainders, which need only 64-bit arithmetic per cell:
 * sum floor(X_i / 2^sh) = floor(sum X_i / 2^sh) - floor(sum (X_i mod 2^sh) / 2^sh).
 * Exact, and the same values as a division per cell. */
void sim_gather(const struct t4_sim *sim, const struct sim_pmu *p,
		const struct sim_sel *sel, unsigned s, struct sim_gather *g, uint64_t *lo)
{
	const struct sim_series *row = p->series + sel->ev_index * p->n_cells;

	g->op = sel->ev->op;
	g->n = 0;
	g->pn = g->p = g->a = 0;
	g->lo = lo;
	for (uint64_t m = sel->cells; m; m &= m - 1) {
		const struct sim_series *se = &row[__builtin_ctzll(m)];

		g->pn += se->P[sim->sched.nseg];
		g->p += se->P[s];
		g->a += se->a[s];
		*lo++ = (uint64_t)se->P[sim->sched.nseg];
		*lo++ = (uint64_t)se->P[s];
		*lo++ = se->a[s];
		g->n++;
	}
}

uint64_t sim_value_gathered(const struct t4_sim *sim, const struct sim_gather *g,
			    const struct sim_at *at)
{
	const uint64_t *lo = g->lo, *end = g->lo + 3 * g->n;
	sim_u128 part = g->p + g->a * at->dr, rem = 0;
	uint64_t rem32 = 0;

	if (g->op == SIM_OP_CLOCK)
		return sim_clock(sim, at);
	if (g->op == SIM_OP_OUTS) {
		for (; lo < end; lo += 3)
			rem += at->G * lo[0] + at->F * (lo[1] + lo[2] * at->dr);
		return mul_shift(at->G, g->pn, part * at->F, 64) - (uint64_t)(rem >> 64);
	}
	for (; lo < end; lo += 3)
		rem32 += (at->c * lo[0] + lo[1] + lo[2] * at->dr) & 0xffffffffu;
	return mul_shift(at->c, g->pn, part, 32) - (rem32 >> 32);
}

uint64_t sim_value(const struct t4_sim *sim, const struct sim_pmu *p,
		   const struct sim_sel *sel, const struct sim_at *at)
{
	uint64_t lo[3 * SIM_CELLS_MAX];
	struct sim_gather g;

	sim_gather(sim, p, sel, at->s, &g, lo);
	return sim_value_gathered(sim, &g, at);
}

double sim_latency(const struct sim_pmu *p, const struct sim_sel *sel,
		   unsigned seg)
{
	const struct sim_kind *k = p->kind;
	size_t req = k->n_events;
	double num = 0, den = 0;

	if (sel->ev->op != SIM_OP_OUTS)
		return 0;
	for (size_t e = 0; e < k->n_events; e++)
		if (k->events[e].op == SIM_OP_REQ && k->events[e].cls == sel->ev->cls)
			req = e;
	if (req == k->n_events)
		return 0;
	for (uint64_t m = sel->cells; m; m &= m - 1) {
		unsigned c = (unsigned)__builtin_ctzll(m);
		num += (double)p->series[sel->ev_index * p->n_cells + c].a[seg];
		den += (double)p->series[req * p->n_cells + c].a[seg];
	}
	return den > 0 ? num / den : 0;
}

/* ---- decoding a counter's config into an event and a cell set ------------ */

static uint64_t keyed(const uint64_t cells[SIM_KEYS], uint64_t bits)
{
	uint64_t m = 0;

	for (unsigned i = 0; i < SIM_KEYS; i++)
		if (bits & (1ull << i))
			m |= cells[i];
	return m;
}

/* A filter field left at 0 means "everything". */
static uint64_t or_all(uint64_t v, uint64_t all)
{
	return v ? v : all;
}

static uint64_t all_cells(const struct sim_pmu *p)
{
	return p->n_cells >= 64 ? ~0ull : (1ull << p->n_cells) - 1;
}

static int select_pcie(const struct sim_pmu *p, const struct t4_counter *c,
		       uint64_t *cells)
{
	uint64_t rpm = c->config1 & 0xff, dst = c->config2 & 0x1f;
	uint16_t bdf = (uint16_t)(c->config1 >> 8);
	uint64_t src = 0;

	if (c->config1 & (1ull << 24)) {
		if (rpm)
			return t4_err(EINVAL, "%s: root-port and BDF filters are mutually exclusive",
				      c->spec[0] ? c->spec : p->name);
		for (unsigned i = 0; i < p->n_cells; i++)
			if (p->cells[i].bdf == bdf)
				src |= 1ull << i;
	} else {
		src = keyed(p->key1_cells, or_all(rpm, 0xff));
	}
	*cells = src & keyed(p->key2_cells, or_all(dst, 0x1f));
	return 0;
}

static uint64_t select_tgt(const struct sim_pmu *p, const struct t4_counter *c)
{
	uint64_t m = 0;

	if (!(c->config & (1ull << 11)))
		return keyed(p->key1_cells, or_all(c->config >> 3 & 0xff, 0xff));
	for (unsigned i = 0; i < p->n_cells; i++)
		if ((p->cells[i].addr & c->config2) == (c->config1 & c->config2))
			m |= 1ull << i;
	return m;
}

/* An event number an arm_cspmu PMU's hardware does not implement: it
 * counts nothing (the selection holds no cell), as an unimplemented
 * PMEVTYPER event does. */
static const struct sim_event unimplemented = { "(unimplemented)", 0, SIM_OP_REQ, 0, ALL3 };

int sim_decode(const struct sim_pmu *p, const struct t4_counter *c,
	       struct sim_sel *sel)
{
	const struct sim_kind *k = p->kind;
	uint64_t id = c->config & k->event_mask;

	sel->ev = NULL;
	for (size_t e = 0; e < k->n_events; e++)
		if (k->events[e].config == id) {
			sel->ev = &k->events[e];
			sel->ev_index = e;
		}
	if (!sel->ev && k->any_event) {
		sel->ev = &unimplemented;
		sel->ev_index = 0;
		sel->cells = 0;
		return 0;
	}
	if (!sel->ev)
		return t4_err(EINVAL, "%s: event 0x%llx is not an event of simulated %s",
			      c->spec[0] ? c->spec : c->name,
			      (unsigned long long)id, p->name);
	switch (k->id) {
	case T4_DOM_UCF:
		sel->cells = keyed(p->key1_cells, or_all(c->config1 & 0x7, 0x7)) &
			     keyed(p->key2_cells, or_all(c->config1 >> 8 & 0xf, 0xf));
		return 0;
	case T4_DOM_PCIE:
		return select_pcie(p, c, &sel->cells);
	case T4_DOM_PCIE_TGT:
		sel->cells = select_tgt(p, c);
		return 0;
	case T4_DOM_NVLINK_C2C:
		sel->cells = keyed(p->key1_cells, or_all(c->config1 & 0x3, 0x3));
		return 0;
	default:
		sel->cells = all_cells(p);
		return 0;
	}
}
