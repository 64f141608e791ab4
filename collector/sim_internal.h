/* sim_internal.h - what the three simulator files share (sim.c: public
 * API; sim_model.c: parameters, traffic series, analytic evaluation;
 * sim_sysfs.c: the sysfs tree). Not part of the collector API.
 *
 * Fixed-point conventions (all exact integer arithmetic, so the model is
 * bit-identical on x86_64 and arm64, gcc and clang):
 *   - model time u: ns since the epoch, clamped to [0, SIM_U_MAX];
 *   - a clock frequency F: cycles per ns times 2^32;
 *   - a series rate a: events per ns times 2^32 (requests, bytes), or
 *     requests per ns times 2^32 times latency in ns (cum_outs, which is
 *     further weighted by F, hence a 2^64 denominator).
 */
#ifndef T4_SIM_INTERNAL_H
#define T4_SIM_INTERNAL_H

#include "collector.h"

__extension__ typedef unsigned __int128 sim_u128;

#define SIM_SOCKETS 2
#define SIM_RCS 6
#define SIM_N_PMUS 34
#define SIM_PHASES 3
#define SIM_NSEG_MAX 9
#define SIM_LEVELS 4
#define SIM_CELLS_MAX 64
#define SIM_CLS_MAX 4
#define SIM_KEYS 8               /* values of a cell's key1 / key2 */
#define SIM_KEY_NONE 0xff
#define SIM_U_MAX (1ull << 52)   /* ~52 days of model time */
#define SIM_WANDER_MAX 48        /* schedule cycles of a wander period */

enum sim_phase { SIM_CPU_COMPUTE = 0, SIM_GPU_STREAM = 1, SIM_PCIE_DMA = 2 };
enum sim_op { SIM_OP_CLOCK, SIM_OP_REQ, SIM_OP_BYTES, SIM_OP_OUTS };

/* One event of a kind and how it derives from the kind's traffic. */
struct sim_event {
	const char *name;
	uint64_t config;               /* the `event` value */
	uint8_t op;                    /* enum sim_op */
	uint8_t cls;                   /* request class it counts */
	uint16_t factor[SIM_PHASES];   /* permille of the class's rate */
};

struct sim_fmt {
	const char *name, *spec;
};

/* A PMU kind: sysfs shape plus traffic profile. */
struct sim_kind {
	enum t4_domain_kind id;  /* its name prefix and identifier: kinds.c's */
	bool identifier;         /* an identifier file (the drivers that
				  * show the ACPI HID) */
	const char *peer;        /* NULL: no peer file */
	const struct sim_fmt *fmts;
	size_t n_fmts;
	const struct sim_event *events;
	size_t n_events;
	uint64_t event_mask;     /* config bits holding the event id */
	uint8_t n_cls;           /* request classes (rd, wr, ...) */
	uint8_t n_cc;            /* cell classes */
	const uint16_t *rate;    /* [SIM_PHASES][n_cc][n_cls] M requests/s */
	const uint16_t *lat;     /* [SIM_PHASES][n_cls] latency, ns */
	uint16_t size[SIM_PHASES]; /* bytes per request */
	bool always_dvfs;
	bool any_event;          /* an arm_cspmu PMU: any event number is
				  * programmed, one the hardware lacks counts
				  * nothing; the other drivers refuse it */
};

/* One elementary traffic cell of a PMU: the finest split any filter can
 * make. key1/key2 are the filter dimensions (UCF: source, destination;
 * PCIE: root port, destination; PCIE-TGT: root port; C2C: GPU). */
struct sim_cell {
	uint8_t cc;            /* cell class, row of the kind's rate table */
	uint8_t key1, key2;    /* SIM_KEY_NONE: not selectable that way */
	uint16_t bdf;          /* PCIE: the requesting device */
	uint64_t addr;         /* PCIE-TGT: representative target address */
	uint16_t w[SIM_CLS_MAX]; /* seeded weight per class, permille */
	uint16_t lw;           /* seeded latency weight, permille */
};

/* A cumulative count over one schedule cycle: rate per segment and the
 * prefix integrals P[s] = sum over earlier segments of a * duration. */
struct sim_series {
	uint64_t a[SIM_NSEG_MAX];
	sim_u128 P[SIM_NSEG_MAX + 1];
};

struct sim_pmu {
	char name[T4_NAME_MAX];
	const struct sim_kind *kind;
	int socket, rc;
	uint32_t type;
	int cpu;
	uint64_t nominal_hz;
	int32_t ppm;
	bool dvfs;
	uint32_t step_cycles;          /* schedule cycles per DVFS step */
	uint16_t level[SIM_LEVELS];    /* permille of nominal */
	/* The clock repeats every `cycles` schedule cycles (a multiple of
	 * the DVFS pattern): F of each such cycle, drift, DVFS and wander
	 * included, and the prefix sums G[j] = F[0] + ... + F[j - 1]. */
	uint8_t cycles;
	uint64_t F[SIM_WANDER_MAX];    /* cycles/ns * 2^32 */
	uint64_t G[SIM_WANDER_MAX + 1];
	uint8_t n_cells;
	struct sim_cell cells[SIM_CELLS_MAX];
	uint64_t key1_cells[SIM_KEYS], key2_cells[SIM_KEYS];
	uint8_t n_devs;
	struct t4_sim_dev devs[SIM_CELLS_MAX]; /* PCIE, PCIE-TGT */
	struct sim_series *series;     /* [kind->n_events][n_cells] */
};

/* The global workload schedule: nseg segments repeating every cycle_ns. */
struct sim_sched {
	unsigned nseg;
	uint64_t start[SIM_NSEG_MAX + 1]; /* start[nseg] = cycle_ns */
	uint8_t phase[SIM_NSEG_MAX];
	uint16_t intensity[SIM_NSEG_MAX]; /* permille */
};

struct t4_sim {
	uint64_t seed, epoch;
	uint32_t drift_ppm, wander_ppm;
	char root[512];
	bool own_root;
	struct sim_sched sched;
	struct sim_pmu pmus[SIM_N_PMUS];
	uint8_t by_name[SIM_N_PMUS]; /* indexes sorted by name */
	struct sim_series *series;   /* one block for every PMU */
};

/* Where in the schedule and DVFS pattern a PMU is at model time u. */
struct sim_at {
	uint64_t c;    /* completed schedule cycles */
	uint64_t r;    /* ns into the current cycle */
	uint64_t dr;   /* ns into the current segment */
	unsigned s;    /* current segment */
	uint64_t G;    /* sum of F over completed cycles */
	uint64_t F;    /* current F */
};

/* A counter decoded against its PMU. */
struct sim_sel {
	const struct sim_event *ev;
	size_t ev_index;
	uint64_t cells; /* bit i: cell i selected */
};

/* sim_model.c */
const struct sim_kind *sim_kind_table(size_t *n);
int sim_model_build(struct t4_sim *sim);
void sim_time_at(const struct t4_sim *sim, const struct sim_pmu *p,
		 uint64_t t_ns, struct sim_at *at);
uint64_t sim_clock(const struct t4_sim *sim, const struct sim_at *at);
int sim_decode(const struct sim_pmu *p, const struct t4_counter *c,
	       struct sim_sel *sel);
uint64_t sim_value(const struct t4_sim *sim, const struct sim_pmu *p,
		   const struct sim_sel *sel, const struct sim_at *at);
/* The same in two steps, so that a reader can do the first once: the
 * cells a counter selects gathered for schedule segment s (the sums over
 * them of P_N, P[s] and a[s], and each cell's low 64 bits of P_N and P[s]
 * and its a[s], side by side in lo[3 * n]: one pass over one array), then
 * the value at an instant of that segment. lo needs room for 3 values per
 * selected cell. */
struct sim_gather {
	uint8_t op; /* enum sim_op */
	uint8_t n;  /* cells */
	sim_u128 pn, p, a;
	const uint64_t *lo;
};
void sim_gather(const struct t4_sim *sim, const struct sim_pmu *p,
		const struct sim_sel *sel, unsigned s, struct sim_gather *g, uint64_t *lo);
uint64_t sim_value_gathered(const struct t4_sim *sim, const struct sim_gather *g,
			    const struct sim_at *at);
/* Mean latency (ns) of the requests a cum_outs selection covers in
 * segment seg; 0 for other events. */
double sim_latency(const struct sim_pmu *p, const struct sim_sel *sel,
		   unsigned seg);

/* sim_sysfs.c */
int sim_sysfs_write(const struct t4_sim *sim);

#endif
