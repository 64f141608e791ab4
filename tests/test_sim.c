/* test_sim.c - the simulated Tegra410: its sysfs tree checked file by file
 * against the facts (t410-pmu-facts.md), determinism, exact conservation
 * (interval sums, filtered parts), the clock model (drift, DVFS), the
 * latency formula of seed 000, the phase schedule and error handling.
 *
 * PMUs come from the real discovery (pmu.c) over the simulator's tree;
 * counters are built by hand with exact config values, so these tests do
 * not depend on the event parser. All times are model times relative to
 * t4_sim_epoch(): nothing here depends on wall-clock timing.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/collector.h"
#include "tmpdir_testutil.h"
#include "util/util.h"

#define MS 1000000ull
#define SEC 1000000000ull

__extension__ typedef unsigned __int128 sim_u128_t;

struct fx {
	struct t4_sim *sim;
	struct t4_pmu_set set;
	uint64_t e; /* epoch */
};

static void fx_open(struct fx *f, uint64_t seed)
{
	cr_assert_eq(t4_sim_create(&f->sim, seed, NULL), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_pmus_discover(&f->set, t4_sim_root(f->sim)), 0, "%s",
		     t4_errmsg());
	f->e = t4_sim_epoch(f->sim);
}

static void fx_close(struct fx *f)
{
	t4_pmus_free(&f->set);
	t4_sim_free(f->sim);
}

static const struct t4_pmu *pmu_of(const struct fx *f, const char *name)
{
	const struct t4_pmu *p = t4_pmus_find(&f->set, name);

	cr_assert_not_null(p, "no PMU %s", name);
	return p;
}

static struct t4_counter ctr(const struct fx *f, const char *pmu, uint64_t config,
			     uint64_t config1, uint64_t config2)
{
	struct t4_counter c;

	memset(&c, 0, sizeof(c));
	c.pmu = pmu_of(f, pmu);
	c.type = c.pmu->type;
	c.config = config;
	c.config1 = config1;
	c.config2 = config2;
	c.scale = 1.0;
	c.cpu = -1;
	c.group = -1;
	snprintf(c.name, sizeof(c.name), "0x%llx", (unsigned long long)config);
	return c;
}

static uint64_t val(const struct fx *f, const struct t4_counter *c, uint64_t u)
{
	return t4_sim_value_at(f->sim, c, f->e + u);
}

/* ---- the tree ------------------------------------------------------------ */

struct expect {
	const char *pmu;
	const char *files[32]; /* "relative/path=content", NULL-ended */
	int n_format, n_events;
};

/* Written from the facts file, independently of the simulator's tables. */
static const struct expect expected[] = {
	{ "nvidia_ucf_pmu_0",
	  { "format/event=config:0-32", "format/src_loc_noncpu=config1:0",
	    "format/src_loc_cpu=config1:1", "format/src_rem=config1:2",
	    "format/dst_loc_cmem=config1:8", "format/dst_loc_gmem=config1:9",
	    "format/dst_loc_other=config1:10", "format/dst_rem=config1:11",
	    "events/bus_cycles=event=0x1d", "events/slc_allocate=event=0xf0",
	    "events/slc_wb=event=0xf3", "events/slc_refill_rd=event=0x109",
	    "events/slc_refill_wr=event=0x10a", "events/slc_access_rd=event=0x111",
	    "events/slc_access_wr=event=0x112", "events/slc_bytes_rd=event=0x113",
	    "events/slc_bytes_wr=event=0x114", "events/slc_hit_rd=event=0x119",
	    "events/mem_access_rd=event=0x121", "events/mem_access_wr=event=0x122",
	    "events/mem_bytes_rd=event=0x123", "events/mem_bytes_wr=event=0x124",
	    "events/local_snoop=event=0x180", "events/ext_snp_access=event=0x181",
	    "events/ext_snp_evict=event=0x182",
	    "events/slc_access_dataless=event=0x183",
	    "events/slc_access_atomic=event=0x184",
	    "events/cycles=event=0x100000000", NULL },
	  8, 20 },
	{ "nvidia_pcie_pmu_1_rc_4",
	  { "format/event=config:0-32", "format/src_rp_mask=config1:0-7",
	    "format/src_bdf=config1:8-23", "format/src_bdf_en=config1:24",
	    "format/dst_loc_cmem=config2:0", "format/dst_loc_gmem=config2:1",
	    "format/dst_loc_pcie_p2p=config2:2", "format/dst_loc_pcie_cxl=config2:3",
	    "format/dst_rem=config2:4", "events/rd_bytes=event=0x0",
	    "events/wr_bytes=event=0x1", "events/rd_req=event=0x2",
	    "events/wr_req=event=0x3", "events/rd_cum_outs=event=0x4",
	    "events/cycles=event=0x100000000", NULL },
	  9, 6 },
	{ "nvidia_pcie_tgt_pmu_0_rc_5",
	  { "format/event=config:0-2", "format/dst_rp_mask=config:3-10",
	    "format/dst_addr_en=config:11", "format/dst_addr_base=config1:0-63",
	    "format/dst_addr_mask=config2:0-63", "events/rd_bytes=event=0x0",
	    "events/wr_bytes=event=0x1", "events/rd_req=event=0x2",
	    "events/wr_req=event=0x3", "events/cycles=event=0x4", NULL },
	  5, 5 },
	{ "nvidia_cmem_latency_pmu_1",
	  { "identifier=NVDA2021", "format/event=config:0-1",
	    "events/cycles=event=0x0", "events/rd_req=event=0x1",
	    "events/rd_cum_outs=event=0x2", NULL },
	  1, 3 },
	{ "nvidia_nvlink_c2c_pmu_0",
	  { "identifier=NVDA2023", "peer=nr_gpu=2", "format/event=config:0-3",
	    "format/gpu_mask=config1:0-1", "events/cycles=event=0x0",
	    "events/in_rd_cum_outs=event=0x1", "events/in_rd_req=event=0x2",
	    "events/in_wr_cum_outs=event=0x3", "events/in_wr_req=event=0x4",
	    "events/out_rd_cum_outs=event=0x5", "events/out_rd_req=event=0x6",
	    "events/out_wr_cum_outs=event=0x7", "events/out_wr_req=event=0x8",
	    NULL },
	  2, 9 },
	{ "nvidia_nvclink_pmu_1",
	  { "identifier=NVDA2022", "peer=nr_cpu=1", "format/event=config:0-3",
	    "events/cycles=event=0x0", "events/in_rd_cum_outs=event=0x1",
	    "events/in_rd_req=event=0x2", "events/out_rd_cum_outs=event=0x5",
	    "events/out_rd_req=event=0x6", NULL },
	  1, 5 },
	{ "nvidia_nvdlink_pmu_0",
	  { "identifier=NVDA2020", "peer=nr_cxlmem=1", "format/event=config:0-3",
	    "events/cycles=event=0x0", "events/in_rd_cum_outs=event=0x1",
	    "events/in_rd_req=event=0x2", NULL },
	  1, 3 },
};

static int count_entries(const char *dir, bool dirs_only)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (!dirs_only || e->d_type == DT_DIR)
			n++;
	}
	closedir(d);
	return n;
}

static void check_file(const char *root, const char *pmu, const char *spec)
{
	char path[1024], buf[256], raw[256];
	const char *eq = strchr(spec, '=');
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s/%.*s", root, pmu, (int)(eq - spec), spec);
	fp = fopen(path, "r");
	cr_assert_not_null(fp, "%s missing", path);
	n = fread(raw, 1, sizeof(raw) - 1, fp);
	fclose(fp);
	raw[n] = '\0';
	snprintf(buf, sizeof(buf), "%s\n", eq + 1);
	cr_assert_str_eq(raw, buf, "%s", path);
}

Test(sim, tree_has_34_pmus_with_the_kernels_files)
{
	struct fx f;
	char path[1024], buf[64];
	int cpus[2] = { 0, 0 }, ncpu = 0;
	cpu_set_t set;
	char root[512];

	fx_open(&f, 0);
	snprintf(root, sizeof(root), "%s", t4_sim_root(f.sim));
	cr_assert_eq(count_entries(root, true), 34);
	snprintf(path, sizeof(path), "%s/t410trace_simulated", root);
	cr_assert_eq(access(path, F_OK), 0);
	for (size_t i = 0; i < T4_ARRAY_LEN(expected); i++) {
		const struct expect *x = &expected[i];

		for (size_t j = 0; x->files[j]; j++)
			check_file(root, x->pmu, x->files[j]);
		snprintf(path, sizeof(path), "%s/%s/format", root, x->pmu);
		cr_assert_eq(count_entries(path, false), x->n_format, "%s", path);
		snprintf(path, sizeof(path), "%s/%s/events", root, x->pmu);
		cr_assert_eq(count_entries(path, false), x->n_events, "%s", path);
	}
	/* no identifier / peer where the facts give none */
	snprintf(path, sizeof(path), "%s/nvidia_ucf_pmu_1/identifier", root);
	cr_assert_neq(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/nvidia_cmem_latency_pmu_0/peer", root);
	cr_assert_neq(access(path, F_OK), 0);

	/* CPUs: the first two this process may use (socket 0, socket 1) */
	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && ncpu < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpu++] = c;
	if (ncpu == 1)
		cpus[1] = cpus[0];

	/* the real discovery reads it all back */
	cr_assert_eq(f.set.n, 34);
	cr_assert(f.set.simulated);
	for (size_t i = 0; i < f.set.n; i++) {
		const struct t4_pmu *p = &f.set.pmus[i];
		size_t len = strlen(p->name);
		int sock = p->name[len - (strstr(p->name, "_rc_") ? 6 : 1)] - '0';

		cr_assert(p->simulated, "%s", p->name);
		cr_assert_not_null(p->kind, "%s: no Tegra410 kind", p->name);
		cr_assert_eq(p->socket, sock, "%s", p->name);
		cr_assert_geq(p->type, 0x7a00);
		cr_assert_lt(p->type, 0x7a00 + 34);
		snprintf(buf, sizeof(buf), "%d", cpus[sock]);
		cr_assert_str_eq(p->cpumask, buf, "%s", p->name);
		cr_assert_str_eq(p->associated_cpus, buf, "%s", p->name);
		for (size_t j = 0; j < i; j++)
			cr_assert_neq(p->type, f.set.pmus[j].type);
		cr_assert_gt(p->n_formats, 0);
		cr_assert_gt(p->n_aliases, 0);
	}
	fx_close(&f);
	cr_assert_neq(access(root, F_OK), 0, "temporary tree not removed");
}

Test(sim, tree_in_given_dir_is_kept)
{
	char dir[PATH_MAX], sub[PATH_MAX + 32], path[PATH_MAX + 128];
	struct t4_sim *sim;

	t4t_tmpdir(dir, sizeof(dir), "t4simtest");
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	cr_assert_eq(t4_sim_create(&sim, 5, sub), 0, "%s", t4_errmsg());
	cr_assert_str_eq(t4_sim_root(sim), sub);
	t4_sim_free(sim);
	snprintf(path, sizeof(path), "%s/nvidia_nvdlink_pmu_1/events/in_rd_req", sub);
	cr_assert_eq(access(path, F_OK), 0);
	t4_rmtree(dir);
}

/* ---- determinism ------------------------------------------------------------- */

static void read_seq(const struct fx *f, const char *pmu, const struct t4_counter *c,
		     size_t n, uint64_t *out)
{
	for (unsigned k = 0; k < 40; k++) {
		uint64_t v[8], clock, tn, ref = f->e + k * 7 * MS + k * k * 13;

		cr_assert_eq(t4_sim_read(f->sim, c, n, ref, v, &clock, &tn), 0,
			     "%s: %s", pmu, t4_errmsg());
		for (size_t i = 0; i < n; i++)
			*out++ = v[i];
		*out++ = clock;
		*out++ = tn - f->e;
	}
}

Test(sim, same_seed_same_values_other_seed_differs)
{
	struct fx a, b, c;
	uint64_t va[40 * 5], vb[40 * 5], vc[40 * 5];
	struct t4_counter ca[3], cb[3], cc[3];
	const char *pmu = "nvidia_pcie_pmu_0_rc_1";
	bool nominal_differs = false;

	fx_open(&a, 1234);
	fx_open(&b, 1234);
	fx_open(&c, 1235);
	ca[0] = ctr(&a, pmu, 0x100000000ull, 0, 0);
	ca[1] = ctr(&a, pmu, 0x0, 0x2, 0);
	ca[2] = ctr(&a, pmu, 0x4, 0, 0x1);
	for (int i = 0; i < 3; i++) {
		cb[i] = ca[i];
		cb[i].pmu = pmu_of(&b, pmu);
		cc[i] = ca[i];
		cc[i].pmu = pmu_of(&c, pmu);
	}
	read_seq(&a, pmu, ca, 3, va);
	read_seq(&b, pmu, cb, 3, vb);
	read_seq(&c, pmu, cc, 3, vc);
	cr_assert_arr_eq(va, vb, sizeof(va));
	cr_assert_arr_neq(va, vc, sizeof(va));
	for (size_t i = 0; i < a.set.n; i++)
		if (t4_sim_nominal_hz(a.sim, &a.set.pmus[i]) !=
		    t4_sim_nominal_hz(c.sim, pmu_of(&c, a.set.pmus[i].name)))
			nominal_differs = true;
	cr_assert(nominal_differs);
	cr_assert_eq(t4_sim_nominal_hz(a.sim, &a.set.pmus[3]),
		     t4_sim_nominal_hz(b.sim, &b.set.pmus[3]));
	fx_close(&a);
	fx_close(&b);
	fx_close(&c);
}

/* ---- reads and ground truth -------------------------------------------------- */

Test(sim, reads_equal_ground_truth_and_intervals_sum_exactly)
{
	struct fx f;
	struct t4_counter c[4];
	uint64_t first[4] = { 0 }, prev[4] = { 0 }, sum[4] = { 0 }, t0 = 0, tn = 0;
	const char *pmu = "nvidia_nvlink_c2c_pmu_1";

	fx_open(&f, 3);
	c[0] = ctr(&f, pmu, 0x0, 0, 0);
	c[1] = ctr(&f, pmu, 0x2, 0, 0);
	c[2] = ctr(&f, pmu, 0x1, 0x1, 0);
	c[3] = ctr(&f, pmu, 0x8, 0x2, 0);
	for (unsigned k = 0; k < 3000; k++) {
		uint64_t v[4], clock, ref = f.e + 1 * MS + k * 3 * MS + (k % 7) * 100;

		cr_assert_eq(t4_sim_read(f.sim, c, 4, ref, v, &clock, &tn), 0, "%s",
			     t4_errmsg());
		cr_assert_geq(tn, ref + 100);
		cr_assert_leq(tn, ref + 3000);
		cr_assert_eq(clock, t4_sim_clock_at(f.sim, c[0].pmu, tn));
		cr_assert_eq(v[0], clock);
		for (int i = 0; i < 4; i++) {
			cr_assert_eq(v[i], t4_sim_value_at(f.sim, &c[i], tn));
			if (k == 0) {
				first[i] = v[i];
				t0 = tn;
			} else {
				cr_assert_geq(v[i], prev[i]);
				sum[i] += v[i] - prev[i];
			}
			prev[i] = v[i];
		}
	}
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(sum[i], t4_sim_value_at(f.sim, &c[i], tn) -
					     t4_sim_value_at(f.sim, &c[i], t0));
		cr_assert_gt(sum[i], 0, "counter %d never moved", i);
		cr_assert_eq(first[i], t4_sim_value_at(f.sim, &c[i], t0));
	}
	/* before the epoch everything is 0 */
	cr_assert_eq(t4_sim_value_at(f.sim, &c[1], f.e - 5), 0);
	cr_assert_eq(t4_sim_clock_at(f.sim, c[0].pmu, f.e - 5), 0);
	fx_close(&f);
}

/* ---- filters: parts add up exactly -------------------------------------------- */

static const uint64_t times[] = { 0, 1, 999, 123 * MS + 17, 777 * MS, 2 * SEC + 5,
				  9 * SEC + 3 * MS, 61 * SEC + 11, 3600 * SEC + 999 };

Test(sim, ucf_source_and_destination_parts_sum_to_all)
{
	struct fx f;
	static const uint64_t evs[] = { 0x111, 0x112, 0x113, 0x124, 0x119, 0x184 };

	fx_open(&f, 11);
	for (int s = 0; s < 2; s++) {
		const char *pmu = s ? "nvidia_ucf_pmu_1" : "nvidia_ucf_pmu_0";

		for (size_t e = 0; e < T4_ARRAY_LEN(evs); e++) {
			struct t4_counter all = ctr(&f, pmu, evs[e], 0, 0);

			for (size_t ti = 0; ti < T4_ARRAY_LEN(times); ti++) {
				uint64_t u = times[ti], total = val(&f, &all, u);
				uint64_t by_src = 0, by_dst = 0, by_pair = 0;

				for (int b = 0; b < 3; b++) {
					struct t4_counter x = ctr(&f, pmu, evs[e], 1ull << b, 0);
					by_src += val(&f, &x, u);
				}
				for (int b = 8; b < 12; b++) {
					struct t4_counter x = ctr(&f, pmu, evs[e], 1ull << b, 0);
					by_dst += val(&f, &x, u);
					for (int a = 0; a < 3; a++) {
						struct t4_counter y = ctr(&f, pmu, evs[e],
									  1ull << b | 1ull << a, 0);
						by_pair += val(&f, &y, u);
					}
				}
				struct t4_counter full = ctr(&f, pmu, evs[e], 0xf07, 0);
				cr_assert_eq(by_src, total, "%s ev 0x%llx u %llu", pmu,
					     (unsigned long long)evs[e], (unsigned long long)u);
				cr_assert_eq(by_dst, total);
				cr_assert_eq(by_pair, total);
				cr_assert_eq(val(&f, &full, u), total);
				if (u > SEC)
					cr_assert_gt(total, 0);
			}
		}
	}
	fx_close(&f);
}

Test(sim, pcie_root_port_bdf_and_destination_filters)
{
	struct fx f;
	struct t4_sim_dev devs[32];

	fx_open(&f, 12);
	for (size_t pi = 0; pi < f.set.n; pi++) {
		const char *pmu = f.set.pmus[pi].name;
		int nd;

		if (strncmp(pmu, "nvidia_pcie_pmu_", 16))
			continue;
		nd = t4_sim_pcie_devs(f.sim, &f.set.pmus[pi], devs, 32);
		cr_assert_gt(nd, 1, "%s", pmu);
		cr_assert_eq(devs[nd - 1].rp, -1);
		for (uint64_t ev = 0; ev <= 4; ev++) {
			struct t4_counter all = ctr(&f, pmu, ev, 0, 0);
			struct t4_counter all2 = ctr(&f, pmu, ev, 0xff, 0x1f);

			for (size_t ti = 0; ti < T4_ARRAY_LEN(times); ti++) {
				uint64_t u = times[ti], total = val(&f, &all, u);
				uint64_t by_rp = 0, by_dst = 0, by_dev = 0;

				cr_assert_eq(val(&f, &all2, u), total);
				for (int b = 0; b < 8; b++) {
					struct t4_counter x = ctr(&f, pmu, ev, 1ull << b, 0);
					uint64_t rp_total = val(&f, &x, u), rp_devs = 0;

					by_rp += rp_total;
					for (int d = 0; d < nd - 1; d++) {
						struct t4_counter y = ctr(&f, pmu, ev,
							(uint64_t)devs[d].bdf << 8 | 1ull << 24, 0);
						if (devs[d].rp == b)
							rp_devs += val(&f, &y, u);
					}
					cr_assert_eq(rp_devs, rp_total, "%s rp %d", pmu, b);
				}
				for (int b = 0; b < 5; b++) {
					struct t4_counter x = ctr(&f, pmu, ev, 0, 1ull << b);
					by_dst += val(&f, &x, u);
				}
				for (int d = 0; d < nd - 1; d++)
					for (int b = 0; b < 5; b++) {
						struct t4_counter y = ctr(&f, pmu, ev,
							(uint64_t)devs[d].bdf << 8 | 1ull << 24,
							1ull << b);
						by_dev += val(&f, &y, u);
					}
				cr_assert_eq(by_rp, total, "%s ev %llu", pmu,
					     (unsigned long long)ev);
				cr_assert_eq(by_dst, total);
				cr_assert_eq(by_dev, total);
				if (u > 60 * SEC)
					cr_assert_gt(total, 0, "%s ev %llu", pmu,
						     (unsigned long long)ev);
			}
		}
		/* a BDF with no device counts nothing */
		struct t4_counter none = ctr(&f, pmu, 0x0, 0xfe07ull << 8 | 1ull << 24, 0);
		cr_assert_eq(val(&f, &none, 100 * SEC), 0);
	}
	fx_close(&f);
}

Test(sim, pcie_tgt_root_port_and_address_filters)
{
	struct fx f;
	struct t4_sim_dev devs[32];

	fx_open(&f, 13);
	for (size_t pi = 0; pi < f.set.n; pi++) {
		const char *pmu = f.set.pmus[pi].name;
		char pcie[64];
		int nd;

		if (strncmp(pmu, "nvidia_pcie_tgt_pmu_", 20))
			continue;
		nd = t4_sim_pcie_devs(f.sim, &f.set.pmus[pi], devs, 32);
		/* the PCIE PMU of the same RC sees the same devices */
		snprintf(pcie, sizeof(pcie), "nvidia_pcie_pmu_%s", pmu + 20);
		{
			struct t4_sim_dev d2[32];
			cr_assert_eq(t4_sim_pcie_devs(f.sim, pmu_of(&f, pcie), d2, 32), nd);
			cr_assert_arr_eq(d2, devs, (size_t)nd * sizeof(d2[0]));
		}
		for (uint64_t ev = 0; ev <= 3; ev++) {
			struct t4_counter bar = ctr(&f, pmu, ev, 0, 0);
			struct t4_counter any = ctr(&f, pmu, ev | 1u << 11, 0, 0);
			struct t4_counter hdm = ctr(&f, pmu, ev | 1u << 11,
						    devs[nd - 1].base, ~(devs[nd - 1].size - 1));
			/* every BAR window of the RC: address bits 36 and up */
			struct t4_counter rc_bars = ctr(&f, pmu, ev | 1u << 11,
							devs[0].base, ~((1ull << 36) - 1));

			for (size_t ti = 0; ti < T4_ARRAY_LEN(times); ti++) {
				uint64_t u = times[ti], total = val(&f, &bar, u);
				uint64_t by_rp = 0, by_addr = 0;

				for (int b = 0; b < 8; b++) {
					struct t4_counter x = ctr(&f, pmu, ev | 1ull << (3 + b), 0, 0);
					by_rp += val(&f, &x, u);
				}
				for (int d = 0; d < nd - 1; d++) {
					/* base bits under the mask must not matter */
					struct t4_counter y = ctr(&f, pmu, ev | 1u << 11,
						devs[d].base | 0xabc, ~(devs[d].size - 1));
					by_addr += val(&f, &y, u);
				}
				cr_assert_eq(val(&f, &rc_bars, u), total, "%s", pmu);
				cr_assert_eq(by_rp, total, "%s", pmu);
				cr_assert_eq(by_addr, total, "%s", pmu);
				/* mask 0 matches every address: BAR and HDM */
				cr_assert_eq(val(&f, &any, u), total + val(&f, &hdm, u));
				if (u > 60 * SEC) {
					cr_assert_gt(total, 0);
					cr_assert_gt(val(&f, &hdm, u), 0);
				}
			}
		}
	}
	fx_close(&f);
}

Test(sim, c2c_gpu_mask_parts_sum_to_all)
{
	struct fx f;

	fx_open(&f, 14);
	for (uint64_t ev = 1; ev <= 8; ev++) {
		struct t4_counter g[4];

		for (int m = 0; m < 4; m++)
			g[m] = ctr(&f, "nvidia_nvlink_c2c_pmu_0", ev, (uint64_t)m, 0);
		for (size_t ti = 0; ti < T4_ARRAY_LEN(times); ti++) {
			uint64_t u = times[ti];

			cr_assert_eq(val(&f, &g[1], u) + val(&f, &g[2], u), val(&f, &g[0], u));
			cr_assert_eq(val(&f, &g[3], u), val(&f, &g[0], u));
		}
	}
	fx_close(&f);
}

/* ---- clocks -------------------------------------------------------------------- */

Test(sim, clock_monotonic_drift_within_50ppm_and_dvfs_steps)
{
	struct fx f;
	int dvfs_seen = 0;

	fx_open(&f, 21);
	for (size_t i = 0; i < f.set.n; i++) {
		const struct t4_pmu *p = &f.set.pmus[i];
		double nominal = (double)t4_sim_nominal_hz(f.sim, p);
		double f0 = t4_sim_freq_hz_at(f.sim, p, f.e);
		uint64_t prev = 0, u = 0, prev_u = 0, c1 = t4_sim_clock_at(f.sim, p, f.e + SEC);
		double prev_f = f0;

		cr_assert_geq(nominal, 0.5e9);
		cr_assert_leq(nominal, 3e9);
		/* first second: top DVFS level, so only the drift */
		cr_assert_leq(fabs((double)c1 / nominal - 1.0), 50e-6 + 1e-9, "%s: %llu vs %.0f",
			      p->name, (unsigned long long)c1, nominal);
		cr_assert_leq(fabs((double)c1 - f0), 1.0);
		for (int k = 0; k < 3000; k++) {
			uint64_t c;
			double fr;

			u += 1 + (uint64_t)k * 104729 % (23 * MS);
			c = t4_sim_clock_at(f.sim, p, f.e + u);
			cr_assert_geq(c, prev, "%s not monotonic at %llu", p->name,
				      (unsigned long long)u);
			prev = c;
			fr = t4_sim_freq_hz_at(f.sim, p, f.e + u);
			if (fr != prev_f && dvfs_seen < 40) {
				/* a step: the clock is the exact integral across it */
				uint64_t a = f.e + prev_u, b = f.e + u;
				double step_f = t4_sim_freq_hz_at(f.sim, p, a);
				uint64_t lo = a, hi = b;

				while (hi - lo > 1) { /* find the step instant */
					uint64_t mid = lo + (hi - lo) / 2;
					if (t4_sim_freq_hz_at(f.sim, p, mid) == step_f)
						lo = mid;
					else
						hi = mid;
				}
				double want = step_f * (double)(hi - a) / 1e9 +
					      fr * (double)(b - hi) / 1e9;
				double got = (double)(t4_sim_clock_at(f.sim, p, b) -
						      t4_sim_clock_at(f.sim, p, a));
				cr_assert_leq(fabs(got - want), 2.0, "%s", p->name);
				cr_assert_gt(fabs(fr / step_f - 1), 0.01);
				dvfs_seen++;
			}
			prev_f = fr;
			prev_u = u;
		}
		cr_assert_gt(u, 20 * SEC);
	}
	cr_assert_geq(dvfs_seen, 2, "no DVFS step in the first 20 s");
	fx_close(&f);
}

/* Options: the drift's range is the one asked for. Frequencies are read in
 * the first second, at the top DVFS level, so only the drift shows. */
static double max_drift_ppm(const struct fx *f, double limit)
{
	double worst = 0;

	for (size_t i = 0; i < f->set.n; i++) {
		const struct t4_pmu *p = &f->set.pmus[i];
		double ppm = (t4_sim_freq_hz_at(f->sim, p, f->e + SEC / 2) /
			      (double)t4_sim_nominal_hz(f->sim, p) - 1) * 1e6;

		cr_assert_leq(fabs(ppm), limit + 1e-3, "%s: %.3f ppm", p->name, ppm);
		worst = fabs(ppm) > worst ? fabs(ppm) : worst;
	}
	return worst;
}

static void fx_open_opts(struct fx *f, uint64_t seed, uint32_t drift, uint32_t wander)
{
	struct t4_sim_opts o = { .seed = seed, .drift_ppm = drift, .wander_ppm = wander };

	cr_assert_eq(t4_sim_create_opts(&f->sim, &o), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_pmus_discover(&f->set, t4_sim_root(f->sim)), 0, "%s", t4_errmsg());
	f->e = t4_sim_epoch(f->sim);
}

Test(sim, drift_option_sets_the_range)
{
	struct fx f;
	struct t4_sim *sim;
	struct t4_sim_opts bad = { .seed = 1, .drift_ppm = 100001 };

	fx_open(&f, 21);
	cr_assert_gt(max_drift_ppm(&f, 50), 20);
	fx_close(&f);
	fx_open_opts(&f, 21, 500, 0);
	cr_assert_gt(max_drift_ppm(&f, 500), 200, "the wider range is not used");
	fx_close(&f);
	fx_open_opts(&f, 21, 0, 0);
	cr_assert_lt(max_drift_ppm(&f, 0), 1e-3); /* fixed point only */
	fx_close(&f);
	cr_assert_eq(t4_sim_create_opts(&sim, &bad), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "drift 100001"), "%s", t4_errmsg());
	bad.drift_ppm = 0;
	bad.wander_ppm = 200000;
	cr_assert_eq(t4_sim_create_opts(&sim, &bad), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "wander 200000"), "%s", t4_errmsg());
	cr_assert_eq(t4_sim_create_opts(&sim, NULL), -EINVAL);
}

/* F, the clock's fixed-point frequency (cycles per ns x 2^32), is exactly
 * recoverable from t4_sim_freq_hz_at. */
static uint64_t fixed_freq(const struct fx *f, const struct t4_pmu *p, uint64_t t)
{
	double hz = t4_sim_freq_hz_at(f->sim, p, t);
	uint64_t F = (uint64_t)llround(hz * 4294967296.0 / 1e9);

	cr_assert_eq((double)F * 1e9 / 4294967296.0, hz);
	return F;
}

/* First instant in (a, b] whose frequency differs from a's. */
static uint64_t freq_step(const struct fx *f, const struct t4_pmu *p, uint64_t a, uint64_t b)
{
	uint64_t Fa = fixed_freq(f, p, a);

	while (b - a > 1) {
		uint64_t mid = a + (b - a) / 2;

		if (fixed_freq(f, p, mid) == Fa)
			a = mid;
		else
			b = mid;
	}
	return b;
}

/* With wander, the frequency moves at schedule-cycle boundaries within
 * +-wander (plus drift and DVFS), and the cycle counter stays the exact
 * floor of the integral of the frequency from the epoch, wherever it is
 * read: checked against the integral built from the frequency alone. */
Test(sim, wander_moves_the_frequency_and_the_clock_is_its_exact_integral)
{
	struct fx f;
	size_t no_dvfs = 0;

	fx_open_opts(&f, 33, 0, 300);
	for (size_t i = 0; i < f.set.n; i += 3) {
		const struct t4_pmu *p = &f.set.pmus[i];
		double nominal = (double)t4_sim_nominal_hz(f.sim, p), lo = 1e9, hi = -1e9;
		uint64_t start = f.e, F = fixed_freq(&f, p, f.e), steps = 0;
		sim_u128_t integral = 0;

		for (uint64_t t = f.e + 10 * MS; t <= f.e + 200 * SEC; t += 10 * MS) {
			uint64_t Ft = fixed_freq(&f, p, t), b = t;
			double ppm = ((double)Ft * 1e9 / 4294967296.0 / nominal - 1) * 1e6;

			if (Ft != F) { /* a step in (t - 10 ms, t]: integrate to it */
				b = freq_step(&f, p, t - 10 * MS, t);
				integral += (sim_u128_t)F * (b - start);
				start = b;
				F = fixed_freq(&f, p, b);
				steps++;
			}
			uint64_t want = (uint64_t)((integral + (sim_u128_t)F * (t - start)) >> 32);
			cr_assert_eq(t4_sim_clock_at(f.sim, p, t), want, "%s at %llu", p->name,
				     (unsigned long long)(t - f.e));
			cr_assert_leq(ppm, 300 + 1e-3, "%s", p->name);
			if (ppm < -350) /* a DVFS level, not wander */
				continue;
			cr_assert_geq(ppm, -300 - 1e-3, "%s", p->name);
			lo = ppm < lo ? ppm : lo;
			hi = ppm > hi ? ppm : hi;
		}
		cr_assert_gt(steps, 30, "%s: %llu steps", p->name, (unsigned long long)steps);
		if (lo > -1e8) { /* saw the top DVFS level (or no DVFS) */
			cr_assert_gt(hi - lo, 150, "%s: wander %.1f..%.1f ppm", p->name, lo, hi);
			no_dvfs++;
		}
	}
	cr_assert_gt(no_dvfs, 3);
	fx_close(&f);
}

/* A prepared reader gives exactly the ground truth, with and without
 * wander, for default and filtered counters. */
Test(sim, prepared_reader_equals_ground_truth)
{
	static const char *extra = "nvidia_pcie_pmu_0_rc_4/rd_cum_outs,src_rp_mask=0x3,dst_loc_cmem=1/,"
				   "nvidia_ucf_pmu_1/mem_bytes_wr,src_loc_cpu=1/";
	for (uint32_t wander = 0; wander <= 100; wander += 100) {
		struct fx f;
		struct t4_evlist l = { 0 };

		fx_open_opts(&f, 44, 500, wander);
		cr_assert_eq(t4_events_default(&l, &f.set), 0, "%s", t4_errmsg());
		cr_assert_eq(t4_events_parse(&l, &f.set, extra), 0, "%s", t4_errmsg());
		for (size_t i = 0; i < l.n; i++) {
			struct t4_sim_reader *r;
			uint64_t v, clock;

			cr_assert_eq(t4_sim_reader_new(&r, f.sim, &l.v[i], 1), 0, "%s", t4_errmsg());
			for (uint64_t k = 0; k < 300; k++) {
				uint64_t t = f.e + k * k * 7919 * MS / 3 + k * 104729;

				t4_sim_reader_at(r, t, &v, &clock);
				cr_assert_eq(v, t4_sim_value_at(f.sim, &l.v[i], t), "%s", l.v[i].spec);
				cr_assert_eq(clock, t4_sim_clock_at(f.sim, l.v[i].pmu, t));
			}
			t4_sim_reader_free(r);
		}
		/* one reader covers one PMU */
		struct t4_counter two[2] = { l.v[0], l.v[l.n - 1] };
		struct t4_sim_reader *r = (void *)1;
		cr_assert_eq(t4_sim_reader_new(&r, f.sim, two, 2), -EINVAL);
		cr_assert_null(r);
		t4_evlist_free(&l);
		fx_close(&f);
	}
	t4_sim_reader_free(NULL);
}

/* ---- seed 000's latency formula -------------------------------------------------- */

static void check_latency(const struct fx *f, const char *pmu, uint64_t outs_ev,
			  uint64_t req_ev, uint64_t cyc_ev, uint64_t config1,
			  uint64_t config2)
{
	struct t4_counter outs = ctr(f, pmu, outs_ev, config1, config2);
	struct t4_counter req = ctr(f, pmu, req_ev, config1, config2);
	struct t4_counter cyc = ctr(f, pmu, cyc_ev, 0, 0);
	int checked = 0;

	for (uint64_t k = 0; k < 200; k++) {
		uint64_t a = f->e + k * 50 * MS + 5 * MS, b = a + 40 * MS;
		double lat, want, freq_ghz;
		uint64_t dreq;

		if (strcmp(t4_sim_phase_at(f->sim, a), t4_sim_phase_at(f->sim, b)))
			continue;
		dreq = t4_sim_value_at(f->sim, &req, b) - t4_sim_value_at(f->sim, &req, a);
		cr_assert_gt(dreq, 1000, "%s", pmu);
		freq_ghz = (double)(t4_sim_value_at(f->sim, &cyc, b) -
				    t4_sim_value_at(f->sim, &cyc, a)) / (double)(b - a);
		lat = (double)(t4_sim_value_at(f->sim, &outs, b) -
			       t4_sim_value_at(f->sim, &outs, a)) / (double)dreq / freq_ghz;
		want = t4_sim_latency_ns_at(f->sim, &outs, a + 20 * MS);
		cr_assert_gt(want, 50, "%s", pmu);
		cr_assert_leq(fabs(lat / want - 1), 0.01, "%s: %.2f ns vs model %.2f ns",
			      pmu, lat, want);
		checked++;
	}
	cr_assert_gt(checked, 100);
}

Test(sim, latency_formula_gives_back_model_latency)
{
	struct fx f;

	fx_open(&f, 0);
	check_latency(&f, "nvidia_cmem_latency_pmu_0", 0x2, 0x1, 0x0, 0, 0);
	check_latency(&f, "nvidia_pcie_pmu_1_rc_1", 0x4, 0x2, 0x100000000ull, 0, 0);
	check_latency(&f, "nvidia_pcie_pmu_0_rc_4", 0x4, 0x2, 0x100000000ull, 0x2, 0x1);
	check_latency(&f, "nvidia_nvlink_c2c_pmu_0", 0x1, 0x2, 0x0, 0x1, 0);
	check_latency(&f, "nvidia_nvlink_c2c_pmu_1", 0x7, 0x8, 0x0, 0, 0);
	check_latency(&f, "nvidia_nvclink_pmu_0", 0x5, 0x6, 0x0, 0, 0);
	check_latency(&f, "nvidia_nvdlink_pmu_1", 0x1, 0x2, 0x0, 0, 0);
	/* not a cum_outs counter: no latency */
	struct t4_counter req = ctr(&f, "nvidia_cmem_latency_pmu_0", 0x1, 0, 0);
	cr_assert_eq(t4_sim_latency_ns_at(f.sim, &req, f.e), 0.0);
	fx_close(&f);
}

/* ---- workload phases ----------------------------------------------------------- */

Test(sim, phases_repeat_on_a_schedule_and_shape_the_traffic)
{
	struct fx f;
	const char *names[] = { "cpu_compute", "gpu_stream", "pcie_dma" };
	double rate[3] = { 0 }, dma_rate[3] = { 0 };
	uint64_t time_in[3] = { 0 }, run = 0;
	const char *prev = NULL;
	struct t4_counter c2c, dma;

	fx_open(&f, 31);
	c2c = ctr(&f, "nvidia_nvlink_c2c_pmu_0", 0x2, 0, 0);
	dma = ctr(&f, "nvidia_pcie_pmu_0_rc_1", 0x2, 0, 0x1);
	cr_assert_str_eq(t4_sim_phase_at(f.sim, f.e - 1000), t4_sim_phase_at(f.sim, f.e));
	for (uint64_t ms = 0; ms < 30000; ms++) {
		const char *ph = t4_sim_phase_at(f.sim, f.e + ms * MS);
		int idx = -1;

		for (int i = 0; i < 3; i++)
			if (!strcmp(ph, names[i]))
				idx = i;
		cr_assert_geq(idx, 0, "unknown phase %s", ph);
		if (prev && strcmp(prev, ph)) {
			cr_assert_geq(run, 200, "segment of %llu ms", (unsigned long long)run);
			run = 0;
		}
		run++;
		prev = ph;
		if (!strcmp(ph, t4_sim_phase_at(f.sim, f.e + (ms + 1) * MS))) {
			rate[idx] += (double)(val(&f, &c2c, (ms + 1) * MS) - val(&f, &c2c, ms * MS));
			dma_rate[idx] += (double)(val(&f, &dma, (ms + 1) * MS) -
						  val(&f, &dma, ms * MS));
			time_in[idx]++;
		}
	}
	for (int i = 0; i < 3; i++) {
		cr_assert_gt(time_in[i], 1000, "phase %s barely runs", names[i]);
		rate[i] /= (double)time_in[i];
		dma_rate[i] /= (double)time_in[i];
	}
	/* GPU streaming drives NVLink-C2C far harder than CPU compute */
	cr_assert_gt(rate[1], 10 * rate[0]);
	cr_assert_gt(rate[1], 2 * rate[2]);
	/* and PCIe DMA to CMEM is the pcie_dma phase's business */
	cr_assert_gt(dma_rate[2], 4 * dma_rate[0]);
	cr_assert_gt(dma_rate[2], 2 * dma_rate[1]);
	fx_close(&f);
}

/* Phase changes are found exactly: the phase is constant up to the
 * announced instant and different from it on. */
Test(sim, next_phase_change_is_exact)
{
	struct fx f;
	uint64_t t = 0, changes = 0;

	fx_open(&f, 32);
	t = f.e - 5 * SEC; /* before the epoch the phase is that of t = 0 */
	while (t < f.e + 60 * SEC) {
		uint64_t next = t4_sim_next_phase_change(f.sim, t);
		const char *ph = t4_sim_phase_at(f.sim, t);

		cr_assert_gt(next, t);
		cr_assert_gt(next, f.e);
		for (uint64_t x = t; x < next; x += (next - t) / 97 + 1)
			cr_assert_str_eq(t4_sim_phase_at(f.sim, x), ph);
		cr_assert_str_eq(t4_sim_phase_at(f.sim, next - 1), ph);
		cr_assert_str_neq(t4_sim_phase_at(f.sim, next), ph);
		t = next;
		changes++;
	}
	cr_assert_gt(changes, 60 / 2);
	cr_assert_eq(t4_sim_next_phase_change(f.sim, f.e + (1ull << 52)), UINT64_MAX);
	fx_close(&f);
}

/* ---- errors -------------------------------------------------------------------- */

Test(sim, bad_counters_are_refused_with_a_message)
{
	struct fx f;
	struct t4_counter c[2];
	struct t4_pmu fake;
	uint64_t v[2], clock, tn;

	fx_open(&f, 41);
	/* an arm_cspmu PMU programs any event number: one the hardware lacks
	 * counts nothing (a wrong sysfs alias reads 0); the C2C and CMEM
	 * drivers refuse one they do not know */
	c[0] = ctr(&f, "nvidia_ucf_pmu_0", 0x5, 0, 0);
	cr_assert_eq(t4_sim_read(f.sim, c, 1, f.e + SEC, v, &clock, &tn), 0, "%s", t4_errmsg());
	cr_assert_eq(v[0], 0);
	cr_assert_eq(t4_sim_value_at(f.sim, &c[0], f.e + SEC), 0);
	c[0] = ctr(&f, "nvidia_nvdlink_pmu_0", 0x5, 0, 0); /* CXL peer: no out_rd */
	cr_assert_eq(t4_sim_read(f.sim, c, 1, f.e, v, &clock, &tn), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "0x5"), "%s", t4_errmsg());
	c[0] = ctr(&f, "nvidia_nvclink_pmu_0", 0x3, 0, 0); /* CPU peer: no writes */
	cr_assert_eq(t4_sim_read(f.sim, c, 1, f.e, v, &clock, &tn), -EINVAL);
	c[0] = ctr(&f, "nvidia_pcie_pmu_0_rc_0", 0x0, 0x1 | 1ull << 24, 0);
	cr_assert_eq(t4_sim_read(f.sim, c, 1, f.e, v, &clock, &tn), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "exclusive"), "%s", t4_errmsg());
	c[0] = ctr(&f, "nvidia_ucf_pmu_0", 0x111, 0, 0);
	c[1] = ctr(&f, "nvidia_ucf_pmu_1", 0x111, 0, 0);
	cr_assert_eq(t4_sim_read(f.sim, c, 2, f.e, v, &clock, &tn), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "nvidia_ucf_pmu_1"), "%s", t4_errmsg());
	memset(&fake, 0, sizeof(fake));
	snprintf(fake.name, sizeof(fake.name), "cpu");
	c[1].pmu = &fake;
	cr_assert_eq(t4_sim_read(f.sim, &c[1], 1, f.e, v, &clock, &tn), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "cpu"), "%s", t4_errmsg());
	cr_assert_eq(t4_sim_nominal_hz(f.sim, &fake), 0);
	cr_assert_eq(t4_sim_read(f.sim, c, 0, f.e, v, &clock, &tn), -EINVAL);
	cr_assert_eq(t4_sim_read(f.sim, c, 1, f.e, NULL, &clock, &tn), -EINVAL);
	cr_assert_lt(t4_sim_pcie_devs(f.sim, c[0].pmu, NULL, 0), 0);
	cr_assert_eq(t4_sim_create(NULL, 1, NULL), -EINVAL);
	t4_sim_free(NULL);
	fx_close(&f);
}

/* ---- the model is pinned ------------------------------------------------------- */

/* A digest of every default counter, every clock and frequency of four
 * seeds at instants from the epoch to past the 52-day clamp. The model
 * may be computed differently (faster), but never give other values: logs
 * and ground truth of a seed stay the same across versions and machines. */
static uint64_t fold(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t model_digest(uint64_t seed)
{
	static const char *filtered =
		"nvidia_ucf_pmu_0/mem_bytes_rd,src_loc_cpu=1,dst_loc_cmem=1/,"
		"nvidia_ucf_pmu_1/slc_access_wr,src_loc_noncpu=1,src_rem=1/,"
		"nvidia_pcie_pmu_1_rc_1/rd_cum_outs,src_rp_mask=0x6,dst_loc_cmem=1/,"
		"nvidia_pcie_pmu_0_rc_4/wr_bytes,src_bdf=0x4100,src_bdf_en=1/,"
		"nvidia_pcie_tgt_pmu_0_rc_4/rd_bytes,dst_addr_en=1,"
		"dst_addr_base=0x700000000000,dst_addr_mask=0xfffff0000000/,"
		"nvidia_nvlink_c2c_pmu_1/in_rd_cum_outs,gpu_mask=2/";
	static const uint64_t at[] = { 0, 1, 999, MS + 7, 1234567890, 61 * SEC + 11,
				       3600 * SEC + 999, 3 * 86400 * SEC + 12345,
				       (1ull << 52) - 5, (1ull << 52) + 100 };
	struct fx f;
	struct t4_evlist l = { 0 };
	uint64_t h = seed;

	fx_open(&f, seed);
	cr_assert_eq(t4_events_default(&l, &f.set), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &f.set, filtered), 0, "%s", t4_errmsg());
	for (size_t ti = 0; ti < T4_ARRAY_LEN(at); ti++) {
		uint64_t t = f.e + at[ti];

		for (size_t i = 0; i < l.n; i++)
			h = fold(h, t4_sim_value_at(f.sim, &l.v[i], t));
		for (size_t i = 0; i < f.set.n; i++) {
			double fr = t4_sim_freq_hz_at(f.sim, &f.set.pmus[i], t);
			uint64_t bits;

			memcpy(&bits, &fr, sizeof(bits));
			h = fold(fold(h, t4_sim_clock_at(f.sim, &f.set.pmus[i], t)), bits);
		}
	}
	t4_evlist_free(&l);
	fx_close(&f);
	return h;
}

Test(sim, model_values_are_pinned)
{
	static const uint64_t seeds[] = { 0, 1, 7, 123456789 };
	static const uint64_t want[] = { 0xb2923efb06ebdd46ull, 0xf043a6d80893f91cull,
					 0x51bf91eb700cbe8full, 0x19de7b0f598be5ffull };

	for (size_t i = 0; i < T4_ARRAY_LEN(seeds); i++)
		cr_expect_eq(model_digest(seeds[i]), want[i], "seed %llu: 0x%016llxull",
			     (unsigned long long)seeds[i],
			     (unsigned long long)model_digest(seeds[i]));
}
