/* test_events.c - the event parser: table tests (good strings -> exact
 * type/config/config1/config2; bad strings -> exact one-line errors),
 * every example of seed 000, wildcards, groups, defaults, software events,
 * msr/tsc/ and a tracepoint against this machine's real kernel, and
 * `list --resolve`. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_testutil.h"
#include "collector/collector.h"
#include "sysfs_testutil.h"
#include "tmpdir_testutil.h"
#include "util/util.h"

/* Relative to the repository root, where `make check` runs the tests. */
#define SEED000 "../shared/seeds/000_7bb91f97455371d6.txt"

static struct t4_pmu_set fixture(void)
{
	struct t4_pmu_set set;

	cr_assert_eq(t4_pmus_discover(&set, SYSFS_T410), 0, "%s", t4_errmsg());
	return set;
}

static int online_cpus(void)
{
	char buf[256];
	int n = 0;

	cr_assert_geq(t4_read_small_file("/sys/devices/system/cpu/online", buf, sizeof(buf)), 0);
	cr_assert_geq(t4_cpulist_first(buf, &n), 0);
	return n;
}

struct good {
	const char *spec;
	const char *pmu;
	uint32_t type;
	uint64_t config, config1, config2;
	int cpu;
	const char *canon, *name;
};

static void check_good(const struct t4_pmu_set *set, const struct good *g)
{
	struct t4_evlist l = { 0 };
	int rc = t4_events_parse(&l, set, g->spec);

	cr_assert_eq(rc, 0, "%s: %s", g->spec, t4_errmsg());
	cr_assert_eq(l.n, 1, "%s", g->spec);
	cr_expect_str_eq(l.v[0].pmu->name, g->pmu, "%s", g->spec);
	cr_expect_eq(l.v[0].type, g->type, "%s", g->spec);
	cr_expect_eq(l.v[0].config, g->config, "%s: config 0x%llx", g->spec,
		     (unsigned long long)l.v[0].config);
	cr_expect_eq(l.v[0].config1, g->config1, "%s: config1 0x%llx", g->spec,
		     (unsigned long long)l.v[0].config1);
	cr_expect_eq(l.v[0].config2, g->config2, "%s: config2 0x%llx", g->spec,
		     (unsigned long long)l.v[0].config2);
	cr_expect_eq(l.v[0].cpu, g->cpu, "%s", g->spec);
	if (g->canon)
		cr_expect_str_eq(l.v[0].spec, g->canon);
	if (g->name)
		cr_expect_str_eq(l.v[0].name, g->name);
	t4_evlist_free(&l);
}

/* Every `perf stat -a -e` example of seed 000 (single events; the groups
 * are in seed000_groups). */
static const struct good seed_examples[] = {
	{ "nvidia_ucf_pmu_0/event=0x0/", "nvidia_ucf_pmu_0", 20, 0, 0, 0, 0 },
	{ "nvidia_ucf_pmu_0/event=0x0,src_loc_cpu=0x1,dst_loc_cmem=0x1/", "nvidia_ucf_pmu_0", 20,
	  0, 0x102, 0, 0 },
	{ "nvidia_ucf_pmu_1/event=0x0,src_loc_noncpu=0x1,dst_rem=0x1/", "nvidia_ucf_pmu_1", 21,
	  0, 0x801, 0, 72 },
	{ "nvidia_pcie_pmu_0_rc_0/event=0x0,src_rp_mask=0x1/", "nvidia_pcie_pmu_0_rc_0", 30, 0,
	  0x1, 0, 0 },
	{ "nvidia_pcie_pmu_0_rc_1/event=0x1,src_rp_mask=0x3,dst_loc_cmem=0x1/",
	  "nvidia_pcie_pmu_0_rc_1", 31, 0x1, 0x3, 0x1, 0 },
	{ "nvidia_pcie_pmu_1_rc_2/event=0x2,src_rp_mask=0x1/", "nvidia_pcie_pmu_1_rc_2", 42, 0x2,
	  0x1, 0, 72 },
	{ "nvidia_pcie_pmu_1_rc_3/event=0x3,src_rp_mask=0x3,dst_loc_cmem=0x1/",
	  "nvidia_pcie_pmu_1_rc_3", 43, 0x3, 0x3, 0x1, 72 },
	{ "nvidia_pcie_pmu_0_rc_4/event=0x4,src_bdf=0x0180,src_bdf_en=0x1/",
	  "nvidia_pcie_pmu_0_rc_4", 34, 0x4, 0x1018000, 0, 0,
	  "nvidia_pcie_pmu_0_rc_4/event=0x4,src_bdf=0x180,src_bdf_en=0x1/",
	  "event=0x4,src_bdf=0x180,src_bdf_en=0x1" },
	{ "nvidia_pcie_tgt_pmu_0_rc_0/event=0x0,dst_rp_mask=0x3/", "nvidia_pcie_tgt_pmu_0_rc_0",
	  50, 0x18, 0, 0, 0 },
	{ "nvidia_pcie_tgt_pmu_0_rc_1/event=0x1,dst_addr_base=0x10000,dst_addr_mask=0xFFF00,dst_addr_en=0x1/",
	  "nvidia_pcie_tgt_pmu_0_rc_1", 51, 0x801, 0x10000, 0xfff00, 0 },
	{ "nvidia_nvlink_c2c_pmu_0/in_rd_req/", "nvidia_nvlink_c2c_pmu_0", 80, 0x2, 0, 0, 0,
	  "nvidia_nvlink_c2c_pmu_0/in_rd_req/", "in_rd_req" },
	{ "nvidia_nvlink_c2c_pmu_0/in_rd_cum_outs,gpu_mask=0x1/", "nvidia_nvlink_c2c_pmu_0", 80,
	  0x1, 0x1, 0, 0, "nvidia_nvlink_c2c_pmu_0/in_rd_cum_outs,gpu_mask=0x1/", "in_rd_cum_outs" },
	{ "nvidia_nvlink_c2c_pmu_0/in_rd_cum_outs,gpu_mask=0x2/", "nvidia_nvlink_c2c_pmu_0", 80,
	  0x1, 0x2, 0, 0 },
	{ "nvidia_nvlink_c2c_pmu_0/out_rd_req/", "nvidia_nvlink_c2c_pmu_0", 80, 0x6, 0, 0, 0 },
	{ "nvidia_nvlink_c2c_pmu_0/out_rd_cum_outs,gpu_mask=0x1/", "nvidia_nvlink_c2c_pmu_0", 80,
	  0x5, 0x1, 0, 0 },
	{ "nvidia_nvlink_c2c_pmu_0/out_rd_cum_outs,gpu_mask=0x2/", "nvidia_nvlink_c2c_pmu_0", 80,
	  0x5, 0x2, 0, 0 },
	{ "nvidia_nvclink_pmu_0/in_rd_req/", "nvidia_nvclink_pmu_0", 81, 0x2, 0, 0, 0 },
	{ "nvidia_nvclink_pmu_0/out_rd_req/", "nvidia_nvclink_pmu_0", 81, 0x6, 0, 0, 0 },
};

static const struct {
	const char *spec;
	size_t n;
	uint64_t configs[3];
} seed_groups[] = {
	{ "{nvidia_cmem_latency_pmu_0/rd_req/,nvidia_cmem_latency_pmu_0/rd_cum_outs/,"
	  "nvidia_cmem_latency_pmu_0/cycles/}", 3, { 0x1, 0x2, 0x0 } },
	{ "{nvidia_nvdlink_pmu_0/in_rd_req/,nvidia_nvdlink_pmu_0/in_rd_cum_outs/}", 2, { 0x2, 0x1 } },
};

Test(events, seed000_examples)
{
	struct t4_pmu_set set = fixture();

	for (size_t i = 0; i < sizeof(seed_examples) / sizeof(seed_examples[0]); i++)
		check_good(&set, &seed_examples[i]);
	for (size_t i = 0; i < sizeof(seed_groups) / sizeof(seed_groups[0]); i++) {
		struct t4_evlist l = { 0 };
		cr_assert_eq(t4_events_parse(&l, &set, seed_groups[i].spec), 0, "%s", t4_errmsg());
		cr_assert_eq(l.n, seed_groups[i].n);
		cr_expect_eq(l.n_groups, 1);
		for (size_t j = 0; j < l.n; j++) {
			cr_expect_eq(l.v[j].config, seed_groups[i].configs[j]);
			cr_expect_eq(l.v[j].group, 0);
			cr_expect_eq(l.v[j].is_clock, !strcmp(l.v[j].name, "cycles"));
		}
		t4_evlist_free(&l);
	}
	t4_pmus_free(&set);
}

/* The tables above hold every example line of the seed file. */
Test(events, seed000_table_is_complete)
{
	FILE *f = fopen(SEED000, "r");
	char line[512];
	int seen = 0;

	if (!f && getenv("CI") && !strcmp(getenv("CI"), "true"))
		cr_assert_fail("%s is missing (CI must have the seeds next to the repository)",
			       SEED000);
	if (!f)
		cr_skip_test("%s not here", SEED000);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "perf stat -a -e "), *e;
		bool found = false;
		if (!p)
			continue;
		p += strlen("perf stat -a -e ");
		if (*p == '\'')
			p++;
		e = p + strcspn(p, "' |\n");
		*e = '\0';
		for (size_t i = 0; i < sizeof(seed_examples) / sizeof(seed_examples[0]); i++)
			found |= !strcmp(seed_examples[i].spec, p);
		for (size_t i = 0; i < sizeof(seed_groups) / sizeof(seed_groups[0]); i++)
			found |= !strcmp(seed_groups[i].spec, p);
		cr_expect(found, "seed example not tested: %s", p);
		seen++;
	}
	fclose(f);
	cr_expect_eq(seen, 20);
}

Test(events, good_strings)
{
	static const struct good good[] = {
		/* alias, then a bare flag term, like perf */
		{ "nvidia_ucf_pmu_0/slc_bytes_rd,dst_rem/", "nvidia_ucf_pmu_0", 20, 0x113, 0x800, 0,
		  0, "nvidia_ucf_pmu_0/slc_bytes_rd,dst_rem=0x1/", "slc_bytes_rd" },
		{ "nvidia_ucf_pmu_0/cycles/", "nvidia_ucf_pmu_0", 20, 0x100000000ull, 0, 0, 0,
		  "nvidia_ucf_pmu_0/cycles/", "cycles" },
		/* the user's term overrides the alias's */
		{ "nvidia_ucf_pmu_0/slc_wb,event=0x1d/", "nvidia_ucf_pmu_0", 20, 0x1d, 0, 0, 0 },
		{ "nvidia_ucf_pmu_0/event=0x1d,slc_wb/", "nvidia_ucf_pmu_0", 20, 0x1d, 0, 0, 0 },
		/* decimal values; a leading 0 is decimal, like perf */
		{ "nvidia_pcie_pmu_0_rc_0/event=10,src_rp_mask=010/", "nvidia_pcie_pmu_0_rc_0", 30, 10,
		  10, 0, 0, "nvidia_pcie_pmu_0_rc_0/event=0xa,src_rp_mask=0xa/", NULL },
		{ "nvidia_pcie_pmu_0_rc_0/rd_bytes,src_rp_mask=0xff,dst_rem=1,dst_loc_cmem=1/",
		  "nvidia_pcie_pmu_0_rc_0", 30, 0, 0xff, 0x11, 0 },
		{ "nvidia_pcie_tgt_pmu_0_rc_0/wr_req,dst_rp_mask=0xff,dst_addr_base=0xffffffffffffffff/",
		  "nvidia_pcie_tgt_pmu_0_rc_0", 50, 0x7fb, ~0ull, 0, 0 },
		{ "nvidia_pcie_pmu_0_rc_0/event=0x100000000/", "nvidia_pcie_pmu_0_rc_0", 30,
		  0x100000000ull, 0, 0, 0 },
		/* raw config words */
		{ "acme_pmu/config=0x12,config1=0x3,config2=0xffffffffffffffff/", "acme_pmu", 99,
		  0x12, 0x3, ~0ull, 1, "acme_pmu/config=0x12,config1=0x3,config2=0xffffffffffffffff/",
		  "config=0x12,config1=0x3,config2=0xffffffffffffffff" },
		/* multi-range field, config2 flag */
		{ "acme_pmu/event=0x1ff/", "acme_pmu", 99, 0x1000000ffull, 0, 0, 1 },
		{ "acme_pmu/hits,edge/", "acme_pmu", 99, 0x302, 0, 1ull << 63, 1 },
		{ "acme_pmu/hits,name=my_hits/", "acme_pmu", 99, 0x302, 0, 0, 1,
		  "acme_pmu/hits,name=my_hits/", "my_hits" },
		{ "nvidia_cmem_latency_pmu_0/cycles/", "nvidia_cmem_latency_pmu_0", 70, 0, 0, 0, 0 },
		{ "  nvidia_nvdlink_pmu_0/in_rd_cum_outs/ ", "nvidia_nvdlink_pmu_0", 82, 1, 0, 0, 0 },
	};
	struct t4_pmu_set set = fixture();

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		check_good(&set, &good[i]);
	t4_pmus_free(&set);
}

Test(events, counter_attributes)
{
	struct t4_pmu_set set = fixture();
	struct t4_evlist l = { 0 };

	cr_assert_eq(t4_events_parse(&l, &set, "acme_pmu/energy/,nvidia_pcie_tgt_pmu_0_rc_1/event=0x4/,"
						"nvidia_pcie_tgt_pmu_0_rc_1/event=0x3/"), 0, "%s", t4_errmsg());
	cr_assert_eq(l.n, 3);
	cr_expect_eq(l.v[0].scale, 2.3283064365386962890625e-10);
	cr_expect_str_eq(l.v[0].unit, "Joules");
	cr_expect_not(l.v[0].is_clock, "no kind, no clock");
	cr_expect(l.v[1].is_clock, "raw cycles event of PCIE-TGT is its clock");
	cr_expect_not(l.v[2].is_clock);
	cr_expect_eq(l.v[1].scale, 1.0);
	cr_expect_eq(l.v[1].group, -1);
	cr_expect_eq(l.n_groups, 0);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
}

struct bad {
	const char *spec, *msg;
};

static const struct bad bad_strings[] = {
	{ "nvidia_ucf_pmu_9/cycles/", "nvidia_ucf_pmu_9: unknown PMU (did you mean nvidia_ucf_pmu_0?)" },
	{ "nvidia_ucf/cycles/", "nvidia_ucf: unknown PMU (did you mean nvidia_ucf_pmu_0?)" },
	{ "nvidia_pcie_pmu_0_rc4/rd_bytes/",
	  "nvidia_pcie_pmu_0_rc4: unknown PMU (did you mean nvidia_pcie_pmu_0_rc_4?)" },
	{ "bogus/cycles/", "bogus: unknown PMU" },
	{ "nvidia_pcie_pmu_0_rc_0/rd_byte/",
	  "rd_byte: unknown event for nvidia_pcie_pmu_0_rc_0 (did you mean rd_bytes?)" },
	{ "nvidia_nvclink_pmu_0/in_wr_req/",
	  "in_wr_req: unknown event for nvidia_nvclink_pmu_0 (did you mean in_rd_req?)" },
	{ "nvidia_nvdlink_pmu_0/bandwidth/", "bandwidth: unknown event for nvidia_nvdlink_pmu_0 "
					     "(events: cycles, in_rd_cum_outs, in_rd_req)" },
	{ "nvidia_pcie_pmu_0_rc_0/evnt=0x1/",
	  "evnt=0x1: unknown term for nvidia_pcie_pmu_0_rc_0 (valid terms: dst_loc_cmem, "
	  "dst_loc_gmem, dst_loc_pcie_cxl, dst_loc_pcie_p2p, dst_rem, event, src_bdf, src_bdf_en, "
	  "src_rp_mask, config, config1, config2)" },
	{ "nvidia_nvclink_pmu_0/in_rd_req,gpu_mask=0x1/",
	  "gpu_mask=0x1: unknown term for nvidia_nvclink_pmu_0 (valid terms: event, config, "
	  "config1, config2)" },
	{ "nvidia_pcie_pmu_0_rc_0/event=0x0,src_rp_mask=0x1ff/",
	  "src_rp_mask=0x1ff: value does not fit in config1:0-7 (8 bits)" },
	{ "nvidia_ucf_pmu_0/event=0x200000000/", "event=0x200000000: value does not fit in config:0-32 (33 bits)" },
	{ "nvidia_nvlink_c2c_pmu_0/in_rd_req,gpu_mask=4/", "gpu_mask=4: value does not fit in config1:0-1 (2 bits)" },
	{ "nvidia_pcie_pmu_0_rc_0/event=0xzz/", "event=0xzz: malformed value (use decimal or 0x hex)" },
	{ "nvidia_pcie_pmu_0_rc_0/event=/", "event=: malformed value (use decimal or 0x hex)" },
	{ "nvidia_pcie_pmu_0_rc_0/event=-1/", "event=-1: malformed value (use decimal or 0x hex)" },
	{ "nvidia_pcie_pmu_0_rc_0/event=0x10000000000000000/",
	  "event=0x10000000000000000: malformed value (use decimal or 0x hex)" },
	{ "acme_pmu/config/", "config: needs a value (config=0x...)" },
	{ "acme_pmu/hits,name=/", "name=: name must have 1 to 63 characters" },
	{ "nvidia_ucf_pmu_0/cycles", "nvidia_ucf_pmu_0/cycles: missing closing '/'" },
	{ "nvidia_ucf_pmu_0//", "nvidia_ucf_pmu_0//: empty event" },
	{ "/cycles/", "/cycles/: missing PMU name before '/'" },
	{ "nvidia_ucf_pmu_0/cycles,,dst_rem/", "cycles,,dst_rem: empty term" },
	{ "", "empty event list" },
	{ "  ", "empty event list" },
	{ "cpu-clock,,task-clock", "'cpu-clock,,task-clock': empty event (a stray ',' or an empty group?)" },
	{ "cpu-clock,", "'cpu-clock,': empty event after the last ','" },
	{ "{cpu-clock,task-clock", "{cpu-clock,task-clock: unbalanced braces (missing '}')" },
	{ "cpu-clock}", "}: unbalanced braces (unexpected '}')" },
	{ "{cpu-clock}}", "}: unbalanced braces (unexpected '}')" },
	{ "{}", "{}: empty group" },
	{ "{{cpu-clock}}", "{cpu-clock}}: groups cannot nest" },
	{ "nvidia_ucf_pmu_0/cycles/x", "x: unexpected 'x' (missing ','?)" },
	{ "nvidia_ucf_pmu_0/cycles/:x", "nvidia_ucf_pmu_0/cycles/: unknown event modifier 'x' (supported: u, k, h)" },
	{ "nvidia_ucf_pmu_0/cycles,dst_rem=1,dst_rem=1/", "dst_rem=1: term given twice" },
	{ "nvidia_ucf_pmu_0/cycles,slc_wb/", "slc_wb: two events in one (cycles and slc_wb); list them separately" },
	{ "nvidia_pcie_pmu_0_rc_0/rd_bytes,src_rp_mask=0x1,src_bdf=0x180/",
	  "nvidia_pcie_pmu_0_rc_0/rd_bytes,src_rp_mask=0x1,src_bdf=0x180/: src_rp_mask cannot be "
	  "combined with src_bdf/src_bdf_en (root-port and BDF filters are mutually exclusive; the "
	  "kernel answers EINVAL)" },
	{ "nvidia_pcie_pmu_0_rc_4/event=0x4,src_bdf_en=1,src_rp_mask=3/",
	  "nvidia_pcie_pmu_0_rc_4/event=0x4,src_bdf_en=0x1,src_rp_mask=0x3/: src_rp_mask cannot be "
	  "combined with src_bdf/src_bdf_en (root-port and BDF filters are mutually exclusive; the "
	  "kernel answers EINVAL)" },
	{ "nvidia_pcie_pmu_0_rc_0/rd_bytes,src_bdf=0x180,src_bdf_en=1/,"
	  "nvidia_pcie_pmu_0_rc_0/wr_bytes,src_bdf=0x181,src_bdf_en=1/",
	  "nvidia_pcie_pmu_0_rc_0/wr_bytes,src_bdf=0x181,src_bdf_en=0x1/: nvidia_pcie_pmu_0_rc_0 "
	  "already counts BDF 0x180; a PCIE PMU has one BDF filter for all its counters" },
	{ "{nvidia_ucf_pmu_0/cycles/,nvidia_ucf_pmu_1/cycles/}",
	  "{nvidia_ucf_pmu_0/cycles/,nvidia_ucf_pmu_1/cycles/}: a group may not span two hardware "
	  "PMUs (nvidia_ucf_pmu_0 and nvidia_ucf_pmu_1)" },
	{ "{nvidia_pcie_pmu_0_rc_*/cycles/}",
	  "{nvidia_pcie_pmu_0_rc_*/cycles/}: a group may not span two hardware PMUs "
	  "(nvidia_pcie_pmu_0_rc_0 and nvidia_pcie_pmu_0_rc_1)" },
	{ "{msr/tsc/,nvidia_ucf_pmu_0/cycles/}",
	  "{msr/tsc/,nvidia_ucf_pmu_0/cycles/}: a group may not span two hardware PMUs (msr and "
	  "nvidia_ucf_pmu_0)" },
	{ "nvidia_pcie_pmu_*_rc_9/rd_bytes/",
	  "nvidia_pcie_pmu_*_rc_9/rd_bytes/: no PMU matches 'nvidia_pcie_pmu_*_rc_9'" },
	{ "nvidia_*/wr_req/", "wr_req: unknown event for nvidia_cmem_latency_pmu_0 (did you mean rd_req?)" },
	{ "cpu-clok", "cpu-clok: unknown event (not a software or hardware event, subsys:tracepoint "
		      "or pmu/event/) (did you mean cpu-clock?)" },
	{ "instrctions", "instrctions: unknown event (not a software or hardware event, "
			 "subsys:tracepoint or pmu/event/) (did you mean instructions?)" },
	{ "nvidia_ucf_pmu_0", "nvidia_ucf_pmu_0: a PMU needs an event: nvidia_ucf_pmu_0/<event>/ "
			      "(see 't410trace list')" },
	{ "sched:", "sched:: malformed tracepoint (use subsys:name, e.g. sched:sched_switch)" },
	{ "sched:a:x", "sched:a:x: malformed tracepoint (use subsys:name, e.g. sched:sched_switch)" },
	/* found by tools/fuzz/fuzz_events: a line break in the input does not
	 * make the message span lines */
	{ "cpu-clock,ta\nk-clock", "ta k-clock: unknown event (not a software or hardware event, "
				   "subsys:tracepoint or pmu/event/) (did you mean task-clock?)" },
};

Test(events, bad_strings)
{
	struct t4_pmu_set set = fixture();
	struct t4_evlist l = { 0 };

	cr_assert_eq(t4_events_parse(&l, &set, "cpu-clock"), 0);
	size_t base = l.n;
	for (size_t i = 0; i < sizeof(bad_strings) / sizeof(bad_strings[0]); i++) {
		cr_expect_eq(t4_events_parse(&l, &set, bad_strings[i].spec), -EINVAL, "%s",
			     bad_strings[i].spec);
		cr_expect_str_eq(t4_errmsg(), bad_strings[i].msg, "for %s", bad_strings[i].spec);
		cr_expect_eq(l.n, base, "nothing appended on error: %s", bad_strings[i].spec);
		cr_expect_eq(l.n_groups, 0);
	}
	t4_evlist_free(&l);
	t4_pmus_free(&set);
}

Test(events, wildcards)
{
	static const char *pcie[] = { "nvidia_pcie_pmu_0_rc_0", "nvidia_pcie_pmu_0_rc_1",
				      "nvidia_pcie_pmu_0_rc_4", "nvidia_pcie_pmu_1_rc_2",
				      "nvidia_pcie_pmu_1_rc_3" };
	struct t4_pmu_set set = fixture();
	struct t4_evlist l = { 0 };

	cr_assert_eq(t4_events_parse(&l, &set, "nvidia_pcie_pmu_*_rc_*/rd_bytes/"), 0, "%s", t4_errmsg());
	cr_assert_eq(l.n, 5, "PCIE-TGT must not match");
	for (size_t i = 0; i < 5; i++) {
		cr_expect_str_eq(l.v[i].pmu->name, pcie[i]);
		cr_expect_eq(l.v[i].config, 0);
		cr_expect_eq(l.v[i].cpu, l.v[i].pmu->socket ? 72 : 0);
		char spec[128];
		snprintf(spec, sizeof(spec), "%s/rd_bytes/", pcie[i]);
		cr_expect_str_eq(l.v[i].spec, spec);
	}
	t4_evlist_free(&l);
	cr_assert_eq(t4_events_parse(&l, &set, "nvidia_pcie_tgt_pmu_0_rc_?/cycles/"), 0);
	cr_assert_eq(l.n, 2);
	cr_expect(l.v[0].is_clock && l.v[1].is_clock);
	cr_expect_eq(l.v[1].config, 4);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
}

Test(events, groups_and_software)
{
	struct t4_pmu_set set = fixture();
	struct t4_evlist l = { 0 };
	int ncpu = online_cpus();

	cr_assert_eq(t4_events_parse(&l, &set, "{nvidia_ucf_pmu_0/cycles/,nvidia_ucf_pmu_0/slc_bytes_rd/},"
						"nvidia_ucf_pmu_1/cycles/"), 0, "%s", t4_errmsg());
	cr_assert_eq(l.n, 3);
	cr_expect_eq(l.v[0].group, 0);
	cr_expect_eq(l.v[1].group, 0);
	cr_expect_eq(l.v[2].group, -1);
	cr_expect_eq(l.n_groups, 1);
	/* a second call hands out the next group index; software joins any group */
	cr_assert_eq(t4_events_parse(&l, &set, "{ nvidia_ucf_pmu_1/slc_wb/, cs }"), 0, "%s", t4_errmsg());
	cr_assert_eq(l.n, 4 + (size_t)ncpu);
	cr_expect_eq(l.n_groups, 2);
	cr_expect_eq(l.v[3].group, 1);
	for (int c = 0; c < ncpu; c++) {
		const struct t4_counter *k = &l.v[4 + c];
		cr_expect_eq(k->group, 1);
		cr_expect_str_eq(k->name, "context-switches");
		cr_expect_str_eq(k->spec, "context-switches");
		cr_expect_eq(k->type, 1);
		cr_expect_eq(k->config, 3);
		cr_expect_eq(k->cpu, c);
	}
	t4_evlist_free(&l);
	static const struct {
		const char *name;
		uint64_t config;
	} sw[] = { { "cpu-clock", 0 },	      { "task-clock", 1 },	 { "page-faults", 2 },
		   { "faults", 2 },	      { "context-switches", 3 }, { "migrations", 4 },
		   { "cpu-migrations", 4 },   { "minor-faults", 5 },	 { "major-faults", 6 },
		   { "alignment-faults", 7 }, { "emulation-faults", 8 } };
	for (size_t i = 0; i < sizeof(sw) / sizeof(sw[0]); i++) {
		cr_assert_eq(t4_events_parse(&l, &set, sw[i].name), 0, "%s", t4_errmsg());
		cr_expect_eq(l.n, (size_t)ncpu);
		cr_expect_eq(l.v[0].config, sw[i].config, "%s", sw[i].name);
		cr_expect_eq(l.v[0].type, 1);
		t4_evlist_free(&l);
	}
	t4_pmus_free(&set);
}

/* Write text to dir/rel (a file of a fake sysfs PMU tree), making its
 * directories first. */
static void put_sysfs(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX + 128], *slash;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	cr_assert_eq(t4_mkdirs(path, 0755), 0, "%s", path);
	*slash = '/';
	cr_assert_eq(t4_write_small_file(path, text), 0, "%s", path);
}

Test(events, needs_software_and_tracepoint_pmus)
{
	char dir[PATH_MAX], msg[PATH_MAX + 128];
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };

	t4t_tmpdir(dir, sizeof(dir), "t4ev_nos");
	put_sysfs(dir, "acme/type", "50\n");
	cr_assert_eq(t4_pmus_discover(&set, dir), 0, "%s", t4_errmsg());
	cr_expect_eq(t4_events_parse(&l, &set, "cpu-clock"), -ENOENT);
	snprintf(msg, sizeof(msg), "cpu-clock: no 'software' PMU under %s", dir);
	cr_expect_str_eq(t4_errmsg(), msg);
	cr_expect_eq(t4_events_parse(&l, &set, "sched:sched_switch"), -ENOENT);
	snprintf(msg, sizeof(msg), "sched:sched_switch: no 'tracepoint' PMU under %s", dir);
	cr_expect_str_eq(t4_errmsg(), msg);
	cr_expect_eq(t4_events_default(&l, &set), -ENOENT);
	snprintf(msg, sizeof(msg), "%s: no Tegra410, software or msr PMU to count by default", dir);
	cr_expect_str_eq(t4_errmsg(), msg);
	/* an unknown PMU still works through raw syntax (no cpumask: per CPU) */
	cr_assert_eq(t4_events_parse(&l, &set, "acme/config=0x5/"), 0, "%s", t4_errmsg());
	cr_expect_eq(l.n, (size_t)online_cpus());
	cr_expect_eq(l.v[0].type, 50);
	cr_expect_eq(l.v[0].config, 5);
	cr_expect_str_eq(l.v[0].name, "config=0x5");
	t4_evlist_free(&l);
	t4_pmus_free(&set);
	t4_rmtree(dir);
}

/* A PMU may have any number of format fields: the parser said "term given
 * twice" for two different fields whose indexes differ by 32 (it kept a
 * 32-bit mask of the fields set, by index), so a crafted or future PMU
 * with 33 formats could not take fields 0 and 32 together. */
Test(events, more_than_32_formats)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };

	t4t_tmpdir(dir, sizeof(dir), "t4ev_fmt");
	put_sysfs(dir, "acme/type", "50\n");
	put_sysfs(dir, "acme/cpumask", "0\n");
	for (int i = 0; i < 40; i++) {
		char spec[32];
		snprintf(path, sizeof(path), "acme/format/f%02d", i);
		snprintf(spec, sizeof(spec), "config1:%d\n", i);
		put_sysfs(dir, path, spec);
	}
	cr_assert_eq(t4_pmus_discover(&set, dir), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_pmus_find(&set, "acme")->n_formats, 40);
	cr_assert_eq(t4_events_parse(&l, &set, "acme/f00=1,f32=1,f01=0,f33,config=0x7/"), 0, "%s",
		     t4_errmsg());
	cr_expect_eq(l.n, 1);
	cr_expect_eq(l.v[0].config, 7);
	cr_expect_eq(l.v[0].config1, (1ull << 0) | (1ull << 32) | (1ull << 33));
	cr_expect_eq(t4_events_parse(&l, &set, "acme/f32=1,f00=1,f32=0/"), -EINVAL);
	cr_expect_str_eq(t4_errmsg(), "f32=0: term given twice");
	t4_evlist_free(&l);
	t4_pmus_free(&set);
	t4_rmtree(dir);
}

/* rNNN is hex of any length, as in perf: leading zeros past 63 digits
 * were cut off with the rest (a fixed buffer), so r, 70 zeros and 5 read
 * as config 0 instead of 5, silently. */
Test(events, raw_event_with_many_leading_zeros)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], spec[128];
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };

	t4t_tmpdir(dir, sizeof(dir), "t4ev_raw");
	put_sysfs(dir, "cpu/type", "4\n");
	cr_assert_eq(t4_pmus_discover(&set, dir), 0, "%s", t4_errmsg());
	snprintf(spec, sizeof(spec), "r%070d5", 0);
	cr_assert_eq(t4_events_parse(&l, &set, spec), 0, "%s", t4_errmsg());
	cr_expect_eq(l.v[0].type, 4);
	cr_expect_eq(l.v[0].config, 5);
	snprintf(spec, sizeof(spec), "r1%064d", 0);
	cr_expect_eq(t4_events_parse(&l, &set, spec), -EINVAL);
	snprintf(path, sizeof(path), "%s: raw event too large for 64 bits", spec);
	cr_expect_str_eq(t4_errmsg(), path);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
	t4_rmtree(dir);
}

Test(events, defaults_tegra410)
{
	struct t4_pmu_set set = fixture();
	struct t4_evlist l = { 0 };
	const struct t4_pmu *prev = NULL;

	cr_assert_eq(t4_events_default(&l, &set), 0, "%s", t4_errmsg());
	/* ucf 2x9 + pcie 5x6 + tgt 2x5 + cmem 3 + c2c 9 + clink 5 + dlink 3 */
	cr_expect_eq(l.n, 78);
	for (size_t i = 0; i < l.n; i++) {
		cr_assert_not_null(l.v[i].pmu->kind);
		if (l.v[i].pmu != prev)
			cr_expect(l.v[i].is_clock, "%s: cycles first", l.v[i].pmu->name);
		else
			cr_expect_not(l.v[i].is_clock);
		cr_expect_eq(l.v[i].cpu, l.v[i].pmu->cpu);
		cr_expect_eq(l.v[i].group, -1);
		prev = l.v[i].pmu;
	}
	t4_evlist_free(&l);
	t4_pmus_free(&set);
}

/* A Tegra410 PMU without events/ still gets its defaults from the table. */
Test(events, defaults_from_kind_table)
{
	char dir[PATH_MAX];
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };

	t4t_tmpdir(dir, sizeof(dir), "t4ev");
	put_sysfs(dir, "nvidia_cmem_latency_pmu_1/format/event", "config:0-1\n");
	put_sysfs(dir, "nvidia_cmem_latency_pmu_1/type", "12\n");
	put_sysfs(dir, "nvidia_cmem_latency_pmu_1/cpumask", "1\n");
	cr_assert_eq(t4_pmus_discover(&set, dir), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_default(&l, &set), 0, "%s", t4_errmsg());
	cr_assert_eq(l.n, 3);
	cr_expect_str_eq(l.v[0].name, "cycles");
	cr_expect(l.v[0].is_clock);
	cr_expect_str_eq(l.v[1].name, "rd_req");
	cr_expect_eq(l.v[1].config, 1);
	cr_expect_str_eq(l.v[2].name, "rd_cum_outs");
	cr_expect_eq(l.v[2].config, 2);
	cr_expect_str_eq(l.v[2].spec, "nvidia_cmem_latency_pmu_1/event=0x2/");
	cr_expect_eq(l.v[2].cpu, 1);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
	t4_rmtree(dir);
}

Test(events, tracepoint_fixture_tracefs)
{
	char dir[PATH_MAX], path[PATH_MAX + 128];
	struct t4_pmu_set set = fixture();
	struct t4_evlist l = { 0 };

	t4t_tmpdir(dir, sizeof(dir), "t4ev_tp");
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch", dir);
	cr_assert_eq(t4_mkdirs(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", dir);
	cr_assert_eq(t4_write_small_file(path, "316\n"), 0);
	setenv("T410TRACE_TRACEFS", dir, 1);
	cr_assert_eq(t4_events_parse(&l, &set, "sched:sched_switch"), 0, "%s", t4_errmsg());
	cr_expect_eq(l.n, (size_t)online_cpus());
	cr_expect_eq(l.v[0].type, 2);
	cr_expect_eq(l.v[0].config, 316);
	cr_expect_str_eq(l.v[0].spec, "sched:sched_switch");
	cr_expect_eq(t4_events_parse(&l, &set, "sched:nope"), -EINVAL);
	snprintf(path, sizeof(path), "sched:nope: no such tracepoint (%s/events/sched/nope/id does not exist)", dir);
	cr_expect_str_eq(t4_errmsg(), path);
	unsetenv("T410TRACE_TRACEFS");
	t4_evlist_free(&l);
	t4_pmus_free(&set);
	t4_rmtree(dir);
}

/* ---- this machine's real kernel -------------------------------------------- */

Test(events, real_host_defaults)
{
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };
	int ncpu = online_cpus();
	bool msr;

	cr_assert_eq(t4_pmus_discover(&set, NULL), 0, "%s", t4_errmsg());
	msr = t4_pmus_find(&set, "msr") != NULL;
	cr_assert_eq(t4_events_default(&l, &set), 0, "%s", t4_errmsg());
	cr_assert_eq(l.n, (size_t)(ncpu * (5 + msr)));
	static const uint64_t cfg[] = { 0, 1, 3, 2, 4 };
	for (size_t i = 0; i < 5; i++) {
		cr_expect_eq(l.v[i * ncpu].type, 1);
		cr_expect_eq(l.v[i * ncpu].config, cfg[i]);
	}
	if (msr) {
		const struct t4_counter *c = &l.v[5 * ncpu];
		cr_expect_str_eq(c->spec, "msr/tsc/");
		cr_expect_str_eq(c->name, "tsc");
		cr_expect_eq(c->type, t4_pmus_find(&set, "msr")->type);
		cr_expect_eq(c->config, 0);
		cr_expect_eq(c->cpu, 0);
	}
	t4_evlist_free(&l);
	t4_pmus_free(&set);
}

Test(events, real_tracepoint)
{
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };
	char buf[32];
	uint64_t id;

	unsetenv("T410TRACE_TRACEFS");
	cr_assert_eq(t4_pmus_discover(&set, NULL), 0, "%s", t4_errmsg());
	int rc = t4_events_parse(&l, &set, "sched:sched_switch");
	if (rc == -ENOENT)
		cr_skip_test("no tracefs here: %s", t4_errmsg());
	cr_assert_eq(rc, 0, "%s", t4_errmsg());
	if (t4_read_small_file("/sys/kernel/tracing/events/sched/sched_switch/id", buf, sizeof(buf)) < 0)
		cr_assert_geq(t4_read_small_file("/sys/kernel/debug/tracing/events/sched/sched_switch/id",
						 buf, sizeof(buf)), 0);
	cr_assert_eq(t4_parse_u64(buf, &id), 0);
	cr_expect_eq(l.v[0].type, 2);
	cr_expect_eq(l.v[0].config, id);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
}

/* ---- list --resolve ------------------------------------------------------- */

Test(events, cli_resolve)
{
	static const struct {
		const char *args, *out;
		int rc;
	} cases[] = {
		{ "list --sysfs-root " SYSFS_T410 " --resolve "
		  "'nvidia_pcie_pmu_0_rc_4/event=0x4,src_bdf=0x0180,src_bdf_en=0x1/'",
		  "nvidia_pcie_pmu_0_rc_4  type=34 config=0x4 config1=0x1018000 config2=0x0 cpu=0  "
		  "nvidia_pcie_pmu_0_rc_4/event=0x4,src_bdf=0x180,src_bdf_en=0x1/\n", 0 },
		{ "list --sysfs-root " SYSFS_T410 " --resolve '{nvidia_nvdlink_pmu_0/in_rd_req/,nvidia_nvdlink_pmu_0/cycles/}'",
		  "nvidia_nvdlink_pmu_0  type=82 config=0x2 config1=0x0 config2=0x0 cpu=0  "
		  "nvidia_nvdlink_pmu_0/in_rd_req/  group=0\n"
		  "nvidia_nvdlink_pmu_0  type=82 config=0x0 config1=0x0 config2=0x0 cpu=0  "
		  "nvidia_nvdlink_pmu_0/cycles/  group=0  clock\n", 0 },
		{ "list --sysfs-root " SYSFS_T410 " --json --resolve nvidia_ucf_pmu_1/cycles/",
		  "{\"simulated\":false,\"counters\":[{\"pmu\":\"nvidia_ucf_pmu_1\",\"name\":\"cycles\","
		  "\"spec\":\"nvidia_ucf_pmu_1/cycles/\",\"type\":21,\"config\":\"0x100000000\","
		  "\"config1\":\"0x0\",\"config2\":\"0x0\",\"cpu\":72,\"group\":-1,\"is_clock\":true,"
		  "\"scale\":1,\"unit\":\"cycles\"}]}\n", 0 },
		{ "list --sysfs-root " SYSFS_T410 " --resolve nvidia_pcie_pmu_0_rc_0/event=0x0,src_rp_mask=0x1ff/",
		  "t410trace: src_rp_mask=0x1ff: value does not fit in config1:0-7 (8 bits)\n", 2 },
		{ "list --sysfs-root " SYSFS_T410 " --resolve nvidia_ucf_pmu_7/cycles/",
		  "t410trace: nvidia_ucf_pmu_7: unknown PMU (did you mean nvidia_ucf_pmu_0?)\n", 2 },
		{ "list --sysfs-root " SYSFS_T410 " --resolve '{nvidia_ucf_pmu_0/cycles/'",
		  "t410trace: {nvidia_ucf_pmu_0/cycles/: unbalanced braces (missing '}')\n", 2 },
		{ "list --resolve", "t410trace list: option '--resolve' needs a value (see 't410trace list --help')\n", 2 },
	};
	char out[8192];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = cli_t4(out, sizeof(out), "%s", cases[i].args);
		cr_expect_eq(rc, cases[i].rc, "%s: %s", cases[i].args, out);
		if (cases[i].rc == 2 && strstr(cases[i].out, "unknown option"))
			cr_expect_eq(strncmp(out, cases[i].out, strlen(cases[i].out)), 0, "%s", out);
		else
			cr_expect_str_eq(out, cases[i].out, "%s", cases[i].args);
	}
}

Test(events, cli_resolve_sim)
{
	static char out[1 << 16];
	int rc = cli_t4(out, sizeof(out), "list --sim --resolve 'nvidia_pcie_pmu_0_rc_4/event=0x4,src_bdf=0x0180,src_bdf_en=0x1/'");

	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "# simulated Tegra410\nnvidia_pcie_pmu_0_rc_4  type="));
	cr_expect_not_null(strstr(out, " config=0x4 config1=0x1018000 config2=0x0 cpu="));
}

/* ---- names with modifiers, units of the counts (issue 15.3) ---------------- */

/* The event packet's name is what every output shows: cpu-clock:u and
 * cpu-clock:k are two events, not two cpu-clocks. */
Test(events, modifiers_stay_in_the_name)
{
	struct t4_pmu_set set = fixture();
	struct t4_evlist l = { 0 };

	cr_assert_eq(t4_events_parse(&l, &set, "cpu-clock:u,cpu-clock:k,software/config=0x1/:uk"), 0,
		     "%s", t4_errmsg());
	cr_assert_eq(l.n % 3, 0);
	size_t per = l.n / 3; /* one counter per online CPU */
	cr_expect_str_eq(l.v[0].name, "cpu-clock:u");
	cr_expect(l.v[0].exclude_kernel && !l.v[0].exclude_user);
	cr_expect_str_eq(l.v[per].name, "cpu-clock:k");
	cr_expect(l.v[per].exclude_user && !l.v[per].exclude_kernel);
	cr_expect_str_eq(l.v[2 * per].name, "config=0x1:uk");
	cr_expect_str_eq(l.v[2 * per].spec, "software/config=0x1/:uk");
	t4_evlist_free(&l);
	t4_pmus_free(&set);
}

/* Every counter carries the unit of its counts where the catalog (kinds.c
 * for Tegra410 and msr, the software and hardware tables) knows it:
 * whatever way the event was named. */
Test(events, counts_carry_their_unit)
{
	static const struct {
		const char *spec, *unit;
	} cases[] = {
		{ "nvidia_ucf_pmu_0/mem_bytes_rd/", "bytes" },
		{ "nvidia_ucf_pmu_0/event=0x123/", "bytes" }, /* raw: by the event value */
		{ "nvidia_ucf_pmu_0/mem_access_wr,dst_rem/", "requests" },
		{ "nvidia_ucf_pmu_0/cycles/", "cycles" },
		{ "nvidia_ucf_pmu_0/slc_wb/", "lines" },
		{ "nvidia_pcie_pmu_0_rc_0/rd_cum_outs/", "req-cycles" },
		{ "nvidia_pcie_pmu_0_rc_0/event=0x4,name=outs/", "req-cycles" },
		{ "nvidia_cmem_latency_pmu_0/rd_req/", "requests" },
		{ "nvidia_nvlink_c2c_pmu_0/out_wr_cum_outs/", "req-cycles" },
		{ "cpu-clock", "ns" },
		{ "task-clock:u", "ns" },
		{ "cs", "switches" },
		{ "page-faults", "faults" },
		{ "cpu-migrations", "migrations" },
		{ "msr/tsc/", "cycles" },
		{ "acme_pmu/config=0x12/", "" }, /* a PMU nobody knows: unknown */
	};
	struct t4_pmu_set set = fixture();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct t4_evlist l = { 0 };
		cr_assert_eq(t4_events_parse(&l, &set, cases[i].spec), 0, "%s: %s", cases[i].spec,
			     t4_errmsg());
		cr_assert_gt(l.n, 0);
		cr_expect_str_eq(l.v[0].unit, cases[i].unit, "%s", cases[i].spec);
		t4_evlist_free(&l);
	}
	t4_pmus_free(&set);
}

/* ---- list GLOB, list --metrics (issue 15.6) --------------------------------- */

Test(events, cli_list_glob_filters)
{
	static char out[1 << 16];
	int rc = cli_t4(out, sizeof(out), "list --sysfs-root " SYSFS_T410 " 'mem_bytes*'");

	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "match 'mem_bytes*'"), "%s", out);
	cr_expect_not_null(strstr(out, "      mem_bytes_rd           event=0x123  [bytes]  bytes read "
				       "from memory\n"), "%s", out);
	cr_expect_null(strstr(out, "slc_bytes_rd"), "%s", out);
	cr_expect_null(strstr(out, "filters:"), "only the matching events: %s", out);
	cr_expect_null(strstr(out, "software"), "%s", out);
	/* a PMU by name: whole, filters too; a software event by perf's alias */
	rc = cli_t4(out, sizeof(out), "list --sysfs-root " SYSFS_T410 " 'NVIDIA_CMEM*'");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "rd_cum_outs            event=0x2  [req-cycles]"), "%s", out);
	cr_expect_not_null(strstr(out, "filters:"), "%s", out);
	rc = cli_t4(out, sizeof(out), "list --sysfs-root " SYSFS_T410 " --json cs");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "\"name\":\"context-switches\",\"terms\":\"config=0x3\","
				       "\"scale\":1,\"unit\":\"switches\",\"description\":"), "%s", out);
	cr_expect_null(strstr(out, "cpu-clock"), "%s", out);
	/* nothing matches: an error naming the closest */
	rc = cli_t4(out, sizeof(out), "list --sysfs-root " SYSFS_T410 " mem_byts_rd");
	cr_expect_eq(rc, 2);
	cr_expect_str_eq(out, "t410trace: list mem_byts_rd: no PMU or event matches (did you mean "
			      "mem_bytes_rd?)\n");
	/* the closest of every name GLOB is matched with, in any case and
	 * its '*'s aside: a kind too (these named nothing) */
	rc = cli_t4(out, sizeof(out), "list --sysfs-root " SYSFS_T410 " ucff");
	cr_expect_eq(rc, 2);
	cr_expect_str_eq(out, "t410trace: list ucff: no PMU or event matches (did you mean UCF?)\n");
	rc = cli_t4(out, sizeof(out), "list --sysfs-root " SYSFS_T410 " '*MEM_BYTS_RD*'");
	cr_expect_eq(rc, 2);
	cr_expect_str_eq(out, "t410trace: list *MEM_BYTS_RD*: no PMU or event matches (did you mean "
			      "mem_bytes_rd?)\n");
	/* a kind by the name info and decode give it (decode --pmu cmem_lat),
	 * not only by its label: cmem_lat matched nothing */
	rc = cli_t4(out, sizeof(out), "list --sysfs-root " SYSFS_T410 " cmem_lat");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "\nCMEM latency, socket 0"), "%s", out);
	cr_expect_not_null(strstr(out, "filters:"), "the PMUs whole: %s", out);
	cr_expect_null(strstr(out, "  nvidia_ucf_pmu_0\n"), "%s", out);
	rc = cli_t4(out, sizeof(out), "list --sysfs-root " SYSFS_T410 " cmem_la");
	cr_expect_eq(rc, 2);
	cr_expect_str_eq(out, "t410trace: list cmem_la: no PMU or event matches (did you mean "
			      "cmem_lat?)\n");
}

Test(events, cli_list_metrics)
{
	static char out[1 << 16];
	int rc = cli_t4(out, sizeof(out), "list --metrics");
	size_t n, lines = 0;
	const struct t4_kind *k = t4_kinds(&n);

	cr_assert_eq(rc, 0, "%s", out);
	/* every formula of every kind, with its unit and description */
	for (size_t i = 0; i < n; i++)
		for (size_t f = 0; f < k[i].n_formulas; f++) {
			char want[512];
			snprintf(want, sizeof(want), "  %s = %s  [%s]\n      %s\n", k[i].formulas[f].name,
				 k[i].formulas[f].expr, k[i].formulas[f].unit, k[i].formulas[f].desc);
			cr_expect_not_null(strstr(out, want), "%s: %s", k[i].label, want);
			cr_expect_gt(strlen(k[i].formulas[f].desc), 10);
		}
	cr_expect_not_null(strstr(out, "\nsoftware\n  cpus_utilized = task-clock / elapsed_ns  [CPUs]"
				       "  (per-task counting only)\n"), "%s", out);
	cr_expect_null(strstr(out, "cpu_util "), "cpu-clock per CPU runs idle or busy: %s", out);
	cr_expect_not_null(strstr(out, "\nTSC\n  tsc_freq = tsc / elapsed_ns  [GHz]\n"), "%s", out);
	cr_expect_not_null(strstr(out, "\nDRM (one per client and engine found)\n"), "%s", out);
	/* GLOB by name and by kind; JSON */
	rc = cli_t4(out, sizeof(out), "list --metrics '*latency_ns' --json");
	cr_assert_eq(rc, 0, "%s", out);
	for (const char *p = out; (p = strstr(p, "\"name\":")); p++)
		lines++;
	cr_expect_eq(lines, 9, "PCIE rd, CMEM rd, C2C x4, CLink x2, DLink: %s", out);
	cr_expect_not_null(strstr(out, "{\"kind\":\"PCIE\",\"name\":\"rd_latency_ns\",\"unit\":\"ns\","
				       "\"formula\":\"(rd_cum_outs / rd_req) / (cycles / elapsed_ns)\","
				       "\"description\":\"mean latency of PCIe device reads\","
				       "\"headline\":true,\"per_task\":false,\"pattern\":false}"), "%s", out);
	rc = cli_t4(out, sizeof(out), "list --metrics TSC");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_null(strstr(out, "software"), "%s", out);
	rc = cli_t4(out, sizeof(out), "list --metrics pcie_tgt --json");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "{\"kind\":\"PCIE-TGT\",\"name\":\"rd_bw\""), "%s", out);
	cr_expect_null(strstr(out, "\"kind\":\"PCIE\""), "%s", out);
	rc = cli_t4(out, sizeof(out), "list --metrics mem_red_bw");
	cr_expect_eq(rc, 2);
	cr_expect_str_eq(out, "t410trace: list mem_red_bw: no metric matches (did you mean mem_read_bw?)\n");
	rc = cli_t4(out, sizeof(out), "list --metrics pciee");
	cr_expect_eq(rc, 2);
	cr_expect_str_eq(out, "t410trace: list pciee: no metric matches (did you mean PCIE?)\n");
}

/* Every counter's spec parses back to the same PMU and encoding. */
static void round_trip(const struct t4_pmu_set *set, const char *spec, size_t want)
{
	struct t4_evlist l = { 0 }, back = { 0 };

	cr_assert_eq(t4_events_parse(&l, set, spec), 0, "%s: %s", spec, t4_errmsg());
	cr_assert_eq(l.n, want, "%s", spec);
	for (size_t i = 0; i < l.n; i++) {
		const struct t4_counter *a = &l.v[i], *b;
		cr_assert_eq(t4_events_parse(&back, set, a->spec), 0, "%s (of %s): %s", a->spec,
			     spec, t4_errmsg());
		cr_assert_eq(back.n, i + 1, "%s", a->spec);
		b = &back.v[i];
		cr_assert_eq(a->pmu, b->pmu, "%s", a->spec);
		cr_assert_str_eq(a->name, b->name, "%s", a->spec);
		cr_assert_str_eq(a->spec, b->spec);
		cr_assert(a->type == b->type && a->config == b->config && a->config1 == b->config1 &&
			  a->config2 == b->config2 && a->cpu == b->cpu, "%s", a->spec);
	}
	t4_evlist_free(&l);
	t4_evlist_free(&back);
}

/* A PMU whose name holds a comma (tests/fixtures/sysfs/comma_name/
 * acme,fabric, with an event and a filter named with commas too) was
 * logged under a spec that did not parse back: its name, event and filter
 * are now written in double quotes, which -e takes; a quoted name is no
 * pattern. */
Test(events, a_comma_in_a_name_round_trips)
{
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };

	cr_assert_eq(t4_pmus_discover(&set, SYSFS_FIX "comma_name"), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &set, "acme*/clock/,acme*/sw\\,ctx/"), -EINVAL);
	cr_assert_eq(t4_events_parse(&l, &set, "acme*/clock/,\"acme,fabric\"/\"sw,ctx\"/,"
				     "{\"acme,fabric\"/\"ev,t\"=0x5,name=\"my,ev\"/}"), 0,
		     "%s", t4_errmsg());
	cr_assert_eq(l.n, 3);
	cr_assert_str_eq(l.v[0].spec, "\"acme,fabric\"/clock/");
	cr_assert_str_eq(l.v[1].spec, "\"acme,fabric\"/\"sw,ctx\"/");
	cr_assert_eq(l.v[1].config, 3);
	cr_assert_str_eq(l.v[2].spec, "\"acme,fabric\"/\"ev,t\"=0x5,name=\"my,ev\"/");
	cr_assert_str_eq(l.v[2].name, "my,ev");
	cr_assert_eq(l.v[2].config, 5);
	t4_evlist_free(&l);
	round_trip(&set, "acme*/clock/,acme*/\"sw,ctx\"/,acme*/\"ev,t\"=7/", 3);
	/* quoted, '*' is a character of the name */
	cr_assert_eq(t4_events_parse(&l, &set, "\"acme*\"/clock/"), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "acme*: unknown PMU"), "%s", t4_errmsg());
	/* typed unquoted, the suggestion says how */
	cr_assert_eq(t4_events_parse(&l, &set, "acme,fabric/clock/"), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "(did you mean \"acme,fabric\"?)"), "%s", t4_errmsg());
	cr_assert_eq(l.n, 0);
	t4_pmus_free(&set);
}

/* Malformed quotes: one line each, nothing appended. */
Test(events, bad_quotes)
{
	static const struct { const char *spec, *msg; } bad[] = {
		{ "\"acme,fabric/clock/", "missing closing '\"'" },
		{ "\"acme,fabric\"", "a quoted name is a PMU's" },
		{ "\"\"/clock/", "empty quoted name" },
		{ "\"acme,fabric\"x/clock/", "a quoted name is a PMU's" },
		{ "\"acme,fabric\"/\"clock\"x/", "'x' after a quoted name" },
		{ "\"acme,fabric\"/\"clock/", "missing closing '/'" },
	};
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };

	cr_assert_eq(t4_pmus_discover(&set, SYSFS_FIX "comma_name"), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(t4_events_parse(&l, &set, bad[i].spec), -EINVAL, "%s", bad[i].spec);
		cr_assert(strstr(t4_errmsg(), bad[i].msg), "%s: %s", bad[i].spec, t4_errmsg());
		cr_assert_null(strchr(t4_errmsg(), '\n'), "%s", t4_errmsg());
		cr_assert_eq(l.n, 0);
	}
	t4_pmus_free(&set);
}

/* Hostile names (a sysfs name is any bytes but '/' and NUL): quotes,
 * backslashes, spaces, braces, colons, '=', a glob character, a newline,
 * bytes that are no UTF-8: each PMU's, event's and filter's name round
 * trips through its spec. */
Test(events, hostile_names_round_trip)
{
	static const char *const names[] = {
		"q\"uo\\te", "sp ace", "br{ac}e", "co:lon", "eq=ual", "gl*ob?[x]",
		"new\nline", "\xff\xfe\x80", "\"", "\\", "tail\\",
	};
	char dir[PATH_MAX], path[PATH_MAX + 256], spec[1024], q[256];
	struct t4_pmu_set set;

	t4t_tmpdir(dir, sizeof(dir), "t4names");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s/events", dir, names[i]);
		cr_assert_eq(t4_mkdirs(path, 0755), 0, "%s", t4_errmsg());
		snprintf(path, sizeof(path), "%s/%s/format", dir, names[i]);
		cr_assert_eq(t4_mkdirs(path, 0755), 0, "%s", t4_errmsg());
		snprintf(path, sizeof(path), "%s/%s/type", dir, names[i]);
		cr_assert_eq(t4_write_small_file(path, "1\n"), 0);
		snprintf(path, sizeof(path), "%s/%s/cpumask", dir, names[i]);
		cr_assert_eq(t4_write_small_file(path, "0\n"), 0);
		snprintf(path, sizeof(path), "%s/%s/events/%s", dir, names[i], names[i]);
		cr_assert_eq(t4_write_small_file(path, "config=0x2\n"), 0);
		snprintf(path, sizeof(path), "%s/%s/format/%s", dir, names[i], names[i]);
		cr_assert_eq(t4_write_small_file(path, "config1:0-7\n"), 0);
	}
	cr_assert_eq(t4_pmus_discover(&set, dir), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cr_assert(t4_events_quote(q, sizeof(q), names[i]));
		snprintf(spec, sizeof(spec), "%s/%s,%s=0x3/", q, q, q);
		round_trip(&set, spec, 1);
	}
	t4_pmus_free(&set);
	cr_assert_eq(t4_rmtree(dir), 0);
}
