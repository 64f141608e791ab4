/* sim.c - the simulated Tegra410: public API over the model (sim_model.c)
 * and the sysfs tree (sim_sysfs.c). Two sockets x 17 PMU instances; the
 * real discovery and event parser read its tree like any other, and the
 * collector reads its counters through t4_sim_read().
 *
 * Trade-offs: after t4_sim_create() the simulator is read-only, so any
 * number of monitor threads may read it at once without locks; the read
 * jitter is therefore a hash of (seed, PMU, ref_ns - epoch) rather than a
 * PRNG stream. A read looks its PMU up by name (binary search over 34;
 * by kind, socket and RC for the PMUs of another layout's tree that
 * t4_sim_attach backs) and decodes each counter's config on every call
 * instead of caching: that is a few hundred ns and keeps the read path free
 * of shared mutable state. Counters are decoded as the Tegra410 drivers
 * take them, whatever tree they came from.
 */
#include "sim_internal.h"
#include "util/util.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_TYPE_BASE 0x7a00u /* simulated perf types, not the kernel's */
#define SIM_JITTER_MIN 100
#define SIM_JITTER_MAX 3000
enum { TAG_JITTER = 100 };

static const char *const phase_names[SIM_PHASES] = {
	"cpu_compute", "gpu_stream", "pcie_dma",
};

/* CPUs the two sockets' PMUs are bound to: the first two CPUs this process
 * may run on (both the first one when it has only one), so pinned monitor
 * threads can run here. The real chip uses e.g. 0 and 72. */
static void pick_cpus(int cpu[SIM_SOCKETS])
{
	cpu_set_t set;
	int n = 0;

	cpu[0] = cpu[1] = 0;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	for (int i = 0; i < CPU_SETSIZE && n < SIM_SOCKETS; i++)
		if (CPU_ISSET(i, &set))
			cpu[n++] = i;
	if (n == 1)
		cpu[1] = cpu[0];
}

static void init_pmus(struct t4_sim *sim)
{
	size_t nk, idx = 0;
	const struct sim_kind *k = sim_kind_table(&nk);
	int cpu[SIM_SOCKETS];

	pick_cpus(cpu);
	for (int s = 0; s < SIM_SOCKETS; s++)
		for (size_t i = 0; i < nk; i++) {
			const struct t4_kind *t410 = t4_kind_by_id(k[i].id);
			bool has_rc = t4_kind_has_rc(t410);

			for (int rc = 0; rc < (has_rc ? SIM_RCS : 1); rc++) {
				struct sim_pmu *p = &sim->pmus[idx];

				p->kind = &k[i];
				p->socket = s;
				p->rc = has_rc ? rc : -1;
				p->type = SIM_TYPE_BASE + (uint32_t)idx;
				p->cpu = cpu[s];
				if (has_rc)
					snprintf(p->name, sizeof(p->name), "%s%d_rc_%d",
						 t410->prefix, s, rc);
				else
					snprintf(p->name, sizeof(p->name), "%s%d",
						 t410->prefix, s);
				idx++;
			}
		}
}

static void sort_names(struct t4_sim *sim)
{
	for (unsigned i = 0; i < SIM_N_PMUS; i++) {
		unsigned j = i;

		sim->by_name[i] = (uint8_t)i;
		while (j > 0 && strcmp(sim->pmus[sim->by_name[j - 1]].name,
				       sim->pmus[i].name) > 0) {
			sim->by_name[j] = sim->by_name[j - 1];
			j--;
		}
		sim->by_name[j] = (uint8_t)i;
	}
}

static bool same_instance(const struct sim_pmu *p, const struct t4_pmu *pmu)
{
	return pmu->kind && p->kind->id == pmu->kind->id && p->socket == pmu->socket &&
	       p->rc == pmu->instance;
}

/* The simulated PMU behind pmu: its namesake (the simulator's own tree),
 * else the one of the same kind, socket and RC (a fixture of another
 * kernel's layout, t4_sim_attach). */
static const struct sim_pmu *find_pmu(const struct t4_sim *sim,
				      const struct t4_pmu *pmu)
{
	unsigned lo = 0, hi = SIM_N_PMUS;

	if (!sim || !pmu)
		return NULL;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		const struct sim_pmu *p = &sim->pmus[sim->by_name[mid]];
		int c = strcmp(pmu->name, p->name);

		if (!c && same_instance(p, pmu))
			return p;
		if (!c)
			break;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (unsigned i = 0; i < SIM_N_PMUS; i++)
		if (same_instance(&sim->pmus[i], pmu))
			return &sim->pmus[i];
	return NULL;
}

static int make_root(struct t4_sim *sim, const char *dir)
{
	int n, err;

	if (dir) {
		n = snprintf(sim->root, sizeof(sim->root), "%s", dir);
		if (n < 0 || (size_t)n >= sizeof(sim->root))
			return t4_err(ENAMETOOLONG, "%s: path too long", dir);
		return t4_mkdirs(sim->root, 0755);
	}
	/* Named after this process, so that a later run reclaims a tree that
	 * a kill -9 left behind. */
	err = t4_tmpdir_create(sim->root, sizeof(sim->root), "t410sim");
	if (err < 0)
		return err;
	sim->own_root = true;
	return 0;
}

#define SIM_PPM_MAX 100000 /* drift and wander: at most 10% each */

static int check_opts(const struct t4_sim_opts *o)
{
	if (o->drift_ppm > SIM_PPM_MAX)
		return t4_err(EINVAL, "simulator drift %u ppm: at most %u", o->drift_ppm,
			      SIM_PPM_MAX);
	if (o->wander_ppm > SIM_PPM_MAX)
		return t4_err(EINVAL, "simulator wander %u ppm: at most %u", o->wander_ppm,
			      SIM_PPM_MAX);
	return 0;
}

int t4_sim_create_opts(struct t4_sim **out, const struct t4_sim_opts *o)
{
	struct t4_sim *sim;
	int err;

	if (!out || !o)
		return t4_err(EINVAL, "t4_sim_create: no output pointer or options");
	*out = NULL;
	if ((err = check_opts(o)) < 0)
		return err;
	sim = calloc(1, sizeof(*sim));
	if (!sim)
		return t4_err(ENOMEM, "simulator: out of memory");
	sim->seed = o->seed;
	sim->drift_ppm = o->drift_ppm;
	sim->wander_ppm = o->wander_ppm;
	init_pmus(sim);
	sort_names(sim);
	err = sim_model_build(sim);
	if (err >= 0)
		err = make_root(sim, o->dir);
	if (err >= 0)
		err = sim_sysfs_write(sim);
	if (err < 0) {
		t4_sim_free(sim);
		return err;
	}
	sim->epoch = o->epoch_ns ? o->epoch_ns : t4_mono_raw_ns();
	*out = sim;
	return 0;
}

int t4_sim_create(struct t4_sim **out, uint64_t seed, const char *dir)
{
	struct t4_sim_opts o = { .seed = seed, .dir = dir, .drift_ppm = T4_SIM_DRIFT_PPM };

	return t4_sim_create_opts(out, &o);
}

void t4_sim_free(struct t4_sim *sim)
{
	if (!sim)
		return;
	if (sim->own_root && sim->root[0])
		t4_rmtree(sim->root);
	free(sim->series);
	free(sim);
}

const char *t4_sim_root(const struct t4_sim *sim)
{
	return sim ? sim->root : NULL;
}

size_t t4_sim_attach(const struct t4_sim *sim, struct t4_pmu_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++) {
		struct t4_pmu *p = &set->pmus[i];
		const struct sim_pmu *sp = find_pmu(sim, p);

		p->simulated = sp != NULL;
		p->unbacked = !sp;
		if (sp)
			p->cpu = sp->cpu; /* the simulator's CPU: one this process runs on */
		n += p->simulated;
	}
	set->simulated = true;
	return n;
}

uint64_t t4_sim_epoch(const struct t4_sim *sim)
{
	return sim ? sim->epoch : 0;
}

static int check_read(const struct t4_sim *sim, const struct t4_counter *c,
		      size_t n, const struct sim_pmu **pp)
{
	if (!sim || !c || !n || !c[0].pmu)
		return t4_err(EINVAL, "simulator read: no counters");
	*pp = find_pmu(sim, c[0].pmu);
	if (!*pp)
		return t4_err(EINVAL, "%s: not a PMU of the simulated Tegra410",
			      c[0].pmu->name);
	for (size_t i = 1; i < n; i++)
		if (!c[i].pmu || (c[i].pmu != c[0].pmu &&
				  strcmp(c[i].pmu->name, c[0].pmu->name)))
			return t4_err(EINVAL, "%s: one simulated read covers one PMU (%s)",
				      c[i].pmu ? c[i].pmu->name : "(none)",
				      c[0].pmu->name);
	return 0;
}

int t4_sim_read(struct t4_sim *sim, const struct t4_counter *counters,
		size_t n, uint64_t ref_ns, uint64_t values[], uint64_t *clock,
		uint64_t *true_ns)
{
	const struct sim_pmu *p = NULL;
	struct sim_at at;
	uint64_t t;
	int err = check_read(sim, counters, n, &p);

	if (err < 0)
		return err;
	if (!values || !clock || !true_ns)
		return t4_err(EINVAL, "%s: simulator read without output", p->name);
	t = ref_ns + SIM_JITTER_MIN +
	    t4_hash(sim->seed, TAG_JITTER, (uint64_t)(p - sim->pmus),
		     ref_ns - sim->epoch) % (SIM_JITTER_MAX - SIM_JITTER_MIN + 1);
	sim_time_at(sim, p, t, &at);
	*true_ns = t;
	*clock = sim_clock(sim, &at);
	for (size_t i = 0; i < n; i++) {
		struct sim_sel sel;

		if ((err = sim_decode(p, &counters[i], &sel)) < 0)
			return err;
		values[i] = sim_value(sim, p, &sel, &at);
	}
	return 0;
}

/* ---- prepared readers ------------------------------------------------------ */

struct t4_sim_reader {
	const struct t4_sim *sim;
	const struct sim_pmu *p;
	size_t n;
	struct sim_gather *g;  /* [n][SIM_NSEG_MAX] */
	uint64_t lo[];         /* what g points into */
};

int t4_sim_reader_new(struct t4_sim_reader **out, const struct t4_sim *sim,
		      const struct t4_counter *counters, size_t n)
{
	const struct sim_pmu *p = NULL;
	struct t4_sim_reader *r;
	int err = check_read(sim, counters, n, &p);
	uint64_t *lo;

	*out = NULL;
	if (err < 0)
		return err;
	/* room for every counter's cells in every segment */
	r = calloc(1, sizeof(*r) + n * sim->sched.nseg * 3 * p->n_cells * sizeof(uint64_t));
	if (r)
		r->g = calloc(n * SIM_NSEG_MAX, sizeof(*r->g));
	if (!r || !r->g) {
		t4_sim_reader_free(r);
		return t4_err(ENOMEM, "%s: out of memory", p->name);
	}
	r->sim = sim;
	r->p = p;
	r->n = n;
	lo = r->lo;
	for (size_t i = 0; i < n; i++) {
		struct sim_sel sel;

		if ((err = sim_decode(p, &counters[i], &sel)) < 0) {
			t4_sim_reader_free(r);
			return err;
		}
		for (unsigned s = 0; s < sim->sched.nseg; s++) {
			struct sim_gather *g = &r->g[i * SIM_NSEG_MAX + s];

			sim_gather(sim, p, &sel, s, g, lo);
			lo += 3 * g->n;
		}
	}
	*out = r;
	return 0;
}

void t4_sim_reader_free(struct t4_sim_reader *r)
{
	if (r)
		free(r->g);
	free(r);
}

void t4_sim_reader_at(const struct t4_sim_reader *r, uint64_t t_ns, uint64_t values[],
		      uint64_t *clock)
{
	struct sim_at at;

	sim_time_at(r->sim, r->p, t_ns, &at);
	*clock = sim_clock(r->sim, &at);
	for (size_t i = 0; i < r->n; i++)
		values[i] = sim_value_gathered(r->sim, &r->g[i * SIM_NSEG_MAX + at.s], &at);
}

/* The model's state of pmu at true time t; false for a PMU it lacks. */
static bool pmu_at(const struct t4_sim *sim, const struct t4_pmu *pmu, uint64_t t_ns,
		   struct sim_at *at)
{
	const struct sim_pmu *p = find_pmu(sim, pmu);

	if (!p)
		return false;
	sim_time_at(sim, p, t_ns, at);
	return true;
}

uint64_t t4_sim_clock_at(const struct t4_sim *sim, const struct t4_pmu *pmu,
			 uint64_t t_ns)
{
	struct sim_at at;

	return pmu_at(sim, pmu, t_ns, &at) ? sim_clock(sim, &at) : 0;
}

/* A counter's PMU, decoded filters and model state at true time t; NULL
 * when the counter is not one the simulator has. */
static const struct sim_pmu *counter_at(const struct t4_sim *sim, const struct t4_counter *c,
					uint64_t t_ns, struct sim_sel *sel, struct sim_at *at)
{
	const struct sim_pmu *p = c ? find_pmu(sim, c->pmu) : NULL;

	if (!p || sim_decode(p, c, sel) < 0)
		return NULL;
	sim_time_at(sim, p, t_ns, at);
	return p;
}

uint64_t t4_sim_value_at(const struct t4_sim *sim, const struct t4_counter *c,
			 uint64_t t_ns)
{
	struct sim_at at;
	struct sim_sel sel;
	const struct sim_pmu *p = counter_at(sim, c, t_ns, &sel, &at);

	return p ? sim_value(sim, p, &sel, &at) : 0;
}

uint64_t t4_sim_nominal_hz(const struct t4_sim *sim, const struct t4_pmu *pmu)
{
	const struct sim_pmu *p = find_pmu(sim, pmu);

	return p ? p->nominal_hz : 0;
}

double t4_sim_freq_hz_at(const struct t4_sim *sim, const struct t4_pmu *pmu,
			 uint64_t t_ns)
{
	struct sim_at at;

	return pmu_at(sim, pmu, t_ns, &at) ? (double)at.F * 1e9 / 4294967296.0 : 0;
}

double t4_sim_latency_ns_at(const struct t4_sim *sim,
			    const struct t4_counter *c, uint64_t t_ns)
{
	struct sim_at at;
	struct sim_sel sel;
	const struct sim_pmu *p = counter_at(sim, c, t_ns, &sel, &at);

	return p ? sim_latency(p, &sel, at.s) : 0;
}

const char *t4_sim_phase_at(const struct t4_sim *sim, uint64_t t_ns)
{
	struct sim_at at;

	if (!sim)
		return "";
	sim_time_at(sim, &sim->pmus[0], t_ns, &at);
	return phase_names[sim->sched.phase[at.s]];
}

uint64_t t4_sim_next_phase_change(const struct t4_sim *sim, uint64_t t_ns)
{
	const struct sim_sched *sc = &sim->sched;
	uint64_t cyc = sc->start[sc->nseg], base, next;
	struct sim_at at;
	unsigned s;

	sim_time_at(sim, &sim->pmus[0], t_ns, &at);
	if (t_ns >= sim->epoch && t_ns - sim->epoch >= SIM_U_MAX)
		return UINT64_MAX; /* model time stands still past its horizon */
	base = at.c * cyc;
	s = at.s;
	do { /* every phase runs in each cycle: this ends within one cycle */
		if (++s == sc->nseg) {
			s = 0;
			base += cyc;
		}
	} while (sc->phase[s] == sc->phase[at.s]);
	next = base + sc->start[s];
	return next > SIM_U_MAX ? UINT64_MAX : sim->epoch + next;
}

int t4_sim_pcie_devs(const struct t4_sim *sim, const struct t4_pmu *pmu,
		     struct t4_sim_dev *out, size_t cap)
{
	const struct sim_pmu *p = find_pmu(sim, pmu);

	if (!p || !p->n_devs)
		return t4_err(EINVAL, "%s: not a simulated PCIE or PCIE-TGT PMU",
			      pmu ? pmu->name : "(none)");
	for (size_t i = 0; i < p->n_devs && i < cap; i++)
		out[i] = p->devs[i];
	return p->n_devs;
}
