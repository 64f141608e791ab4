/* test_sysfs_layouts.c - the real machine's quirks (issue 17.5): the
 * Tegra410 PMUs under every sysfs layout kernels have shipped (made in
 * each test's scratch directory by tests/fixtures/sysfs/make_layouts.sh,
 * from what the drivers create: 860 files, not checked in):
 * recognised by their identifier where the name does not say, the
 * catalog's events by name on them, `list` saying which layout it found,
 * and `record --sim --sysfs-root LAYOUT` picking the right PMUs and
 * encodings end to end; a wrong sysfs alias caught by the record-time
 * check; uncore counters opened with pid -1 and inherit 0 (what
 * perf_event_open really got, through an LD_PRELOAD shim).
 */
#include "cli_testutil.h"
#include "collector/collector.h"
#include "probe.h"

#include <linux/perf_event.h>

/* This test's scratch directory and its last command (each Criterion
 * test runs in a process of its own). */
static struct run r;

/* The layouts named (space-separated) made under r.dir/lay. */
static void make_layouts(const char *names)
{
	char script[PATH_MAX];

	cr_assert_not_null(cli_repo_file("tests/fixtures/sysfs/make_layouts.sh", script));
	sh(&r, "sh '%s' '%s/lay' %s", script, r.dir, names);
	cr_assert_eq(r.status, 0, "%s", r.out);
}

/* A layout's directory (made by make_layouts). */
static const char *layout_dir(const char *name)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/lay/%s", r.dir, name);
	return path;
}

/* A new scratch directory with the layouts named. */
static void scratch_with(const char *names)
{
	tmpdir(&r);
	make_layouts(names);
}

/* The PMUs of a layout made in a new scratch directory. */
static struct t4_pmu_set layout(const char *name)
{
	struct t4_pmu_set set;

	scratch_with(name);
	cr_assert_eq(t4_pmus_discover(&set, layout_dir(name)), 0, "%s: %s", name, t4_errmsg());
	return set;
}

/* End of a test that made a scratch directory. */
static void done(struct t4_pmu_set *set)
{
	if (set)
		t4_pmus_free(set);
	cleanup(&r);
}

/* A PMU of the set, with its expected kind, naming, socket and RC. */
static void expect_pmu(const struct t4_pmu_set *set, const char *name, enum t4_domain_kind kind,
		       enum t4_naming naming, int socket, int rc)
{
	const struct t4_pmu *p = t4_pmus_find(set, name);

	cr_assert_not_null(p, "%s", name);
	cr_assert_not_null(p->kind, "%s: not recognised", name);
	cr_expect_eq(p->kind->id, kind, "%s", name);
	cr_expect_eq(p->naming, naming, "%s", name);
	cr_expect_eq(p->socket, socket, "%s", name);
	cr_expect_eq(p->instance, rc, "%s", name);
	cr_expect_str_empty(p->family, "%s", name);
}

static size_t kinds_in(const struct t4_pmu_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++)
		n += set->pmus[i].kind != NULL;
	return n;
}

static bool layout_says(const struct t4_pmu_set *set, const char *words)
{
	char buf[512];

	return strstr(t4_pmus_layout(set, buf, sizeof(buf)), words) != NULL;
}

/* ---- recognition ----------------------------------------------------------- */

Test(sysfs_layouts, tegra410_drivers_by_name_and_identifier)
{
	struct t4_pmu_set set = layout("tegra410");

	cr_expect_eq(kinds_in(&set), 18);
	expect_pmu(&set, "nvidia_ucf_pmu_1", T4_DOM_UCF, T4_NAMING_TEGRA410, 1, -1);
	expect_pmu(&set, "nvidia_pcie_pmu_1_rc_1", T4_DOM_PCIE, T4_NAMING_TEGRA410, 1, 1);
	expect_pmu(&set, "nvidia_pcie_tgt_pmu_0_rc_1", T4_DOM_PCIE_TGT, T4_NAMING_TEGRA410, 0, 1);
	expect_pmu(&set, "nvidia_cmem_latency_pmu_1", T4_DOM_CMEM_LAT, T4_NAMING_TEGRA410, 1, -1);
	expect_pmu(&set, "nvidia_nvdlink_pmu_0", T4_DOM_NVDLINK, T4_NAMING_TEGRA410, 0, -1);
	cr_expect(layout_says(&set, "the Tegra410 drivers' names"));
	cr_expect(!layout_says(&set, "identifier"));
	done(&set);
}

/* nvidia_uncore_pmu_<n>: n is the probe order, not a socket; the socket
 * comes from the CPUs, the RC from the order within kind and socket. */
Test(sysfs_layouts, generic_names_by_identifier)
{
	struct t4_pmu_set set = layout("generic");

	cr_expect_eq(kinds_in(&set), 10);
	expect_pmu(&set, "nvidia_uncore_pmu_0", T4_DOM_UCF, T4_NAMING_GENERIC, 0, -1);
	expect_pmu(&set, "nvidia_uncore_pmu_2", T4_DOM_PCIE, T4_NAMING_GENERIC, 0, 1);
	expect_pmu(&set, "nvidia_uncore_pmu_5", T4_DOM_UCF, T4_NAMING_GENERIC, 1, -1);
	expect_pmu(&set, "nvidia_uncore_pmu_6", T4_DOM_PCIE, T4_NAMING_GENERIC, 1, 0);
	expect_pmu(&set, "nvidia_uncore_pmu_9", T4_DOM_PCIE_TGT, T4_NAMING_GENERIC, 1, 1);
	cr_expect(layout_says(&set, "generic arm_cspmu names (nvidia_uncore_pmu_<n>): 10 Tegra410 "
				    "PMUs known by their identifier (PMIIDR)"));
	done(&set);
}

/* The Grace-era table gave the Tegra410 UCF the Grace SCF's name (same
 * product ID): only the identifier tells them apart. */
Test(sysfs_layouts, grace_era_names_by_identifier)
{
	struct t4_pmu_set set = layout("grace_kernel");

	cr_expect_eq(kinds_in(&set), 8);
	expect_pmu(&set, "nvidia_scf_pmu_1", T4_DOM_UCF, T4_NAMING_OTHER, 1, -1);
	expect_pmu(&set, "nvidia_pcie_pmu_0", T4_DOM_PCIE, T4_NAMING_OTHER, 0, 0);
	expect_pmu(&set, "nvidia_uncore_pmu_3", T4_DOM_PCIE_TGT, T4_NAMING_GENERIC, 1, 1);
	cr_expect(layout_says(&set, "another driver's names"));
	cr_expect(layout_says(&set, "generic arm_cspmu names"));
	done(&set);
}

/* A Grace machine: the same names and product IDs, no Tegra410 PMU. */
Test(sysfs_layouts, grace_is_no_tegra410)
{
	struct t4_pmu_set set = layout("grace");
	struct t4_evlist l = { 0 };

	cr_expect_eq(kinds_in(&set), 0);
	cr_expect_str_eq(t4_pmus_find(&set, "nvidia_scf_pmu_0")->family, "Grace SCF");
	cr_expect_str_eq(t4_pmus_find(&set, "nvidia_nvlink_c2c0_pmu_1")->family, "Grace NVLink-C2C0");
	cr_expect(layout_says(&set, "no Tegra410 PMU (and 10 NVIDIA PMUs of another chip"));
	/* its own events by their sysfs names; no catalog name */
	cr_expect_eq(t4_events_parse(&l, &set, "nvidia_scf_pmu_1/scf_cache_wb/"), 0, "%s", t4_errmsg());
	cr_expect_eq(l.v[0].config, 0xf3);
	cr_expect_eq(t4_events_parse(&l, &set, "nvidia_scf_pmu_1/mem_bytes_rd/"), -EINVAL);
	t4_evlist_free(&l);
	done(&set);
}

/* ---- encodings --------------------------------------------------------------- */

static const struct t4_counter *parse_one(struct t4_evlist *l, const struct t4_pmu_set *set,
					  const char *spec)
{
	size_t n = l->n;

	cr_assert_eq(t4_events_parse(l, set, spec), 0, "%s: %s", spec, t4_errmsg());
	cr_assert_eq(l->n, n + 1, "%s", spec);
	return &l->v[n];
}

static void expect_config(const struct t4_counter *c, uint64_t c0, uint64_t c1, uint64_t c2)
{
	cr_expect_eq(c->config, c0, "%s: config 0x%llx", c->spec, (unsigned long long)c->config);
	cr_expect_eq(c->config1, c1, "%s: config1 0x%llx", c->spec, (unsigned long long)c->config1);
	cr_expect_eq(c->config2, c2, "%s: config2 0x%llx", c->spec, (unsigned long long)c->config2);
}

/* On a generic PMU: the catalog's ids by name, the generic driver's
 * `cycles` replaced by the catalog's where they differ (PCIE-TGT), and
 * the filter words the Tegra410 driver would write unless given. */
Test(sysfs_layouts, generic_catalog_encodings)
{
	struct t4_pmu_set set = layout("generic");
	struct t4_evlist l = { 0 };
	const struct t4_counter *c;

	c = parse_one(&l, &set, "nvidia_uncore_pmu_0/mem_bytes_rd/");
	expect_config(c, 0x123, 0xf07, 0);
	cr_expect_str_eq(c->name, "mem_bytes_rd");
	cr_expect_str_eq(c->spec, "nvidia_uncore_pmu_0/event=0x123/");
	cr_expect_str_eq(c->unit, "bytes");
	cr_expect(!c->check_alias);
	c = parse_one(&l, &set, "nvidia_uncore_pmu_0/mem_bytes_wr,filter=0x102/");
	expect_config(c, 0x124, 0x102, 0);
	c = parse_one(&l, &set, "nvidia_uncore_pmu_1/rd_bytes/");
	expect_config(c, 0x0, 0xff, 0x1f);
	c = parse_one(&l, &set, "nvidia_uncore_pmu_1/cycles/");
	expect_config(c, 0x100000000ull, 0xff, 0x1f);
	cr_expect(c->is_clock);
	c = parse_one(&l, &set, "nvidia_uncore_pmu_3/cycles/");
	expect_config(c, 0x4, 0, 0xff);
	cr_expect(c->is_clock);
	c = parse_one(&l, &set, "nvidia_uncore_pmu_3/wr_req,config2=0x3/");
	expect_config(c, 0x3, 0, 0x3);
	cr_expect_eq(t4_events_parse(&l, &set, "nvidia_uncore_pmu_0/mem_byts_rd/"), -EINVAL);
	cr_expect(strstr(t4_errmsg(), "did you mean mem_bytes_rd?"), "%s", t4_errmsg());
	cr_expect_eq(t4_events_parse(&l, &set, "nvidia_uncore_pmu_0/mem_bytes_rd,cycles/"), -EINVAL);
	cr_expect(strstr(t4_errmsg(), "two events in one"), "%s", t4_errmsg());
	/* the default set: every kind's defaults, by the catalog */
	t4_evlist_free(&l);
	cr_assert_eq(t4_events_default(&l, &set), 0, "%s", t4_errmsg());
	cr_expect_eq(l.n, 2 * 9 + 4 * 6 + 4 * 5);
	t4_evlist_free(&l);
	done(&set);
}

/* Grace-era names: the catalog's names on top of the other driver's
 * aliases (which stay usable by their own names); no filter words (the
 * PMU has none) are invented. */
Test(sysfs_layouts, grace_era_catalog_encodings)
{
	struct t4_pmu_set set = layout("grace_kernel");
	struct t4_evlist l = { 0 };
	const struct t4_counter *c;

	c = parse_one(&l, &set, "nvidia_scf_pmu_1/slc_bytes_rd/");
	expect_config(c, 0x113, 0, 0);
	cr_expect_eq(c->cpu, 72);
	c = parse_one(&l, &set, "nvidia_scf_pmu_1/scf_cache_wb/");
	expect_config(c, 0xf3, 0, 0);
	c = parse_one(&l, &set, "nvidia_pcie_pmu_0/rd_cum_outs/");
	expect_config(c, 0x4, 0, 0);
	c = parse_one(&l, &set, "nvidia_pcie_pmu_0/rd_bytes_rem/");
	expect_config(c, 0x1, 0, 0);
	t4_evlist_free(&l);
	done(&set);
}

/* The Tegra410 drivers' aliases win over the catalog; one that encodes
 * its event otherwise is marked for the alias check with the catalog's words. */
Test(sysfs_layouts, tegra410_aliases_and_the_check_mark)
{
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };
	const struct t4_counter *c;

	scratch_with("tegra410");
	sh(&r, "printf 'event=0x223\\n' > '%s/nvidia_ucf_pmu_0/events/mem_bytes_rd'",
	   layout_dir("tegra410"));
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_eq(t4_pmus_discover(&set, layout_dir("tegra410")), 0, "%s", t4_errmsg());
	c = parse_one(&l, &set, "nvidia_ucf_pmu_0/mem_bytes_wr/");
	cr_expect_str_eq(c->spec, "nvidia_ucf_pmu_0/mem_bytes_wr/");
	cr_expect(!c->check_alias);
	c = parse_one(&l, &set, "nvidia_ucf_pmu_0/mem_bytes_rd,src_loc_cpu/");
	expect_config(c, 0x223, 0x2, 0);
	cr_expect(c->check_alias);
	cr_expect_eq(c->catalog_config[0], 0x123);
	cr_expect_eq(c->catalog_config[1], 0x2);
	t4_evlist_free(&l);
	done(&set);
}

/* ---- list ---------------------------------------------------------------------- */

Test(sysfs_layouts, list_says_the_layout, .timeout = 60)
{
	static char out[1 << 18], head[PATH_MAX + 128];
	const char *b = cli_bin();
	int rc;

	scratch_with("generic grace tegra410 grace_kernel");
	rc = cli_run(out, sizeof(out), "'%s' list --sysfs-root '%s' 2>&1", b, layout_dir("generic"));
	cr_assert_eq(rc, 0, "%s", out);
	snprintf(head, sizeof(head), "10 PMUs under %s\n", layout_dir("generic"));
	cr_expect(strstr(out, head), "%.600s", out);
	cr_expect(strstr(out, "\nsysfs layout: generic arm_cspmu "
			      "names (nvidia_uncore_pmu_<n>): 10 Tegra410 PMUs known by their "
			      "identifier (PMIIDR)\n"), "%.600s", out);
	cr_expect(strstr(out, "\nUCF, socket 1\n  nvidia_uncore_pmu_5\n    type 305, cpumask 72, "
			      "associated_cpus 72-143, identifier 2cf2036b\n    a Tegra410 UCF, "
			      "known by its identifier; named by the generic arm_cspmu driver: "
			      "socket 1 by its CPUs\n    events from the catalog"), "%.2000s", out);
	cr_expect(strstr(out, "RC 1 by order\n"), "%.2000s", out);
	cr_expect(strstr(out, "      mem_bytes_rd           event=0x123  [bytes]"), "%.2000s", out);
	rc = cli_run(out, sizeof(out), "'%s' list --sysfs-root '%s' 2>&1", b, layout_dir("grace"));
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "sysfs layout: no Tegra410 PMU (and 10 NVIDIA PMUs of another chip "
			      "or revision, e.g. Grace CNVLink)\n"), "%.600s", out);
	cr_expect(strstr(out, "an NVIDIA PMU that is no Tegra410 kind (Grace SCF), known by its "
			      "identifier\n"), "%.600s", out);
	rc = cli_run(out, sizeof(out), "'%s' list --sysfs-root '%s' 2>&1", b, layout_dir("tegra410"));
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "sysfs layout: the Tegra410 drivers' names"), "%.600s", out);
	cr_expect_null(strstr(out, "events from the catalog"), "every alias is there");
	rc = cli_run(out, sizeof(out), "'%s' list --json --sysfs-root '%s' 'mem_*'", b,
		     layout_dir("grace_kernel"));
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "\"naming\":\"other\",\"family\":\"\""), "%.600s", out);
	cr_expect(strstr(out, "{\"name\":\"mem_bytes_rd\",\"terms\":\"event=0x123\",\"scale\":1,"
			      "\"unit\":\"bytes\""), "%.2000s", out);
	cr_expect(strstr(out, "\"from\":\"catalog\"}"), "%.2000s", out);
	cr_expect(strstr(out, "],\"layout\":\"generic arm_cspmu names"), "%.2000s", out);
	done(NULL);
}

/* ---- record, the simulator behind each layout -------------------------------- */

/* A copy of the event object of `info --json` (in run->out) whose spec is
 * spec; fails when absent. */
static const char *event_json(const struct run *run, const char *spec)
{
	static char obj[2048];
	char pat[300];
	const char *p, *start, *end;

	snprintf(pat, sizeof(pat), "\"spec\": \"%s\"", spec);
	p = strstr(run->out, pat);
	cr_assert_not_null(p, "no event %s in %.3000s", spec, run->out);
	for (start = p; start > run->out && *start != '{'; start--)
		;
	end = strchr(p, '}');
	cr_assert_not_null(end);
	snprintf(obj, sizeof(obj), "%.*s", (int)(end - start + 1), start);
	return obj;
}

/* Record a layout made in r.dir, with the simulator behind it; r.out
 * gets `info --json` of the log. */
static void record_layout(const char *name, const char *events)
{
	sh(&r, "cd '%s' && rm -f x.t4t && '%s' record -q --sim=5 --sysfs-root '%s' --period 10ms "
	       "-d 50ms %s -o x.t4t && '%s' info --json x.t4t", r.dir, bin(), layout_dir(name),
	   events, bin());
	cr_assert_eq(r.status, 0, "%s: %.2000s", name, r.out);
}

/* Each layout's PMUs are recorded under their own names with the
 * catalog's (or their driver's) encodings, and they count. */
Test(sysfs_layouts, record_picks_pmus_and_encodings, .timeout = 120)
{
	const char *e;

	scratch_with("generic grace_kernel tegra410 grace");
	record_layout("generic", "");
	cr_expect_eq(json_num(r.out, "schedulers"), 1);
	cr_expect(strstr(r.out, "\"counts\": \"system-wide: ucf, pcie, pcie_tgt\""), "%.600s", r.out);
	cr_expect(strstr(r.out, "\"name\": \"nvidia_uncore_pmu_9\", \"kind\": \"pcie_tgt\""));
	e = event_json(&r, "nvidia_uncore_pmu_5/event=0x123/");
	cr_expect(strstr(e, "\"name\": \"mem_bytes_rd\""), "%s", e);
	cr_expect(strstr(e, "\"config\": \"0x123\", \"config1\": \"0xf07\""), "%s", e);
	cr_expect_gt(json_num(e, "total"), 0, "%s", e);
	e = event_json(&r, "nvidia_uncore_pmu_9/event=0x4/");
	cr_expect(strstr(e, "\"name\": \"cycles\""), "%s", e);
	cr_expect_gt(json_num(e, "total"), 0, "%s", e);

	record_layout("grace_kernel", "-e nvidia_scf_pmu_1/mem_bytes_wr/,nvidia_scf_pmu_1/"
				      "scf_cache_wb/,nvidia_uncore_pmu_1/rd_req/");
	e = event_json(&r, "nvidia_scf_pmu_1/event=0x124/");
	cr_expect_gt(json_num(e, "total"), 0, "%s", e);
	e = event_json(&r, "nvidia_scf_pmu_1/scf_cache_wb/"); /* = slc_wb, 0xf3 */
	cr_expect_gt(json_num(e, "total"), 0, "%s", e);
	e = event_json(&r, "nvidia_uncore_pmu_1/event=0x2/");
	cr_expect_gt(json_num(e, "total"), 0, "%s", e);

	record_layout("tegra410", "--per-socket");
	cr_expect_eq(json_num(r.out, "schedulers"), 2);
	cr_expect(strstr(r.out, "\"counts\": \"system-wide: cmem_lat, nvclink, nvdlink, nvlink_c2c, "
				"pcie, pcie_tgt, ucf\""), "%.600s", r.out);
	e = event_json(&r, "nvidia_nvdlink_pmu_1/in_rd_req/");
	cr_expect_gt(json_num(e, "total"), 0, "%s", e);

	/* nothing the simulator can stand behind: said, nothing recorded */
	sh(&r, "cd '%s' && rm -f x.t4t && '%s' record --sim --sysfs-root '%s' -d 50ms -o x.t4t; "
	       "echo rc=$?; ls", r.dir, bin(), layout_dir("grace"));
	cr_expect(strstr(r.out, "grace: no Tegra410 PMU for the simulator to back (sysfs layout: "
				"no Tegra410 PMU (and 10 NVIDIA PMUs"), "%s", r.out);
	cr_expect(strstr(r.out, "rc=2\n"), "%s", r.out);
	cr_expect_null(strstr(r.out, "x.t4t"), "%s", r.out);
	done(NULL);
}

/* A PMU the simulator does not model is refused in a --sim set, not
 * opened with the fixture's type number on this kernel. */
Test(sysfs_layouts, record_refuses_what_the_simulator_does_not_model, .timeout = 60)
{
	char root[PATH_MAX];

	cr_assert_not_null(cli_repo_file("tests/fixtures/sysfs/t410", root));
	tmpdir(&r);
	sh(&r, "cd '%s' && '%s' record --sim --sysfs-root '%s' -e msr/tsc/ -d 50ms -o x.t4t; "
	       "echo rc=$?",
	   r.dir, bin(), root);
	cr_expect(strstr(r.out, "t410trace: msr: not a PMU the simulator models (with --sim and "
				"--sysfs-root only the Tegra410 PMUs it backs are counted)\nrc=2\n"),
		  "%s", r.out);
	done(NULL);
}

/* ---- the alias check ----------------------------------------------------------- */

/* The tegra410 layout made in r.dir, its socket 1's UCF aliasing
 * mem_bytes_rd to an event the chip lacks and mem_bytes_wr to another real
 * event. */
static void wrong_aliases(void)
{
	make_layouts("tegra410");
	sh(&r, "cd '%s/nvidia_ucf_pmu_1/events' && printf 'event=0x223\\n' > mem_bytes_rd && "
	       "printf 'event=0x123\\n' > mem_bytes_wr", layout_dir("tegra410"));
	cr_assert_eq(r.status, 0, "%s", r.out);
}

/* The alias that reads 0 while the catalog's encoding counts is replaced,
 * in one warning line; one that counts (even another event) is trusted;
 * one whose event does not happen in the window proves nothing; an alias
 * the catalog agrees with is not checked. The same in virtual time. */
Test(sysfs_layouts, wrong_alias_replaced_by_the_check, .timeout = 120)
{
	const char *ev = "-e nvidia_ucf_pmu_1/mem_bytes_rd/,nvidia_ucf_pmu_1/mem_bytes_wr/,"
			 "nvidia_ucf_pmu_1/mem_bytes_rd,src_rem,dst_rem,name=rem_rem/,"
			 "nvidia_ucf_pmu_0/mem_bytes_rd/";
	const char *e;

	tmpdir(&r);
	wrong_aliases();
	for (int virt = 0; virt < 2; virt++) {
		sh(&r, "cd '%s' && rm -f x.t4t && '%s' record --sim=3 --sysfs-root lay/tegra410 "
		       "--backend pwrite --period 10ms -d 50ms %s %s -o x.t4t 2>err; echo rc=$?; grep -c warning err; "
		       "grep warning err; '%s' info --json x.t4t",
		   r.dir, bin(), virt ? "--virtual" : "", ev, bin());
		cr_assert(strstr(r.out, "rc=0\n1\nt410trace: warning: nvidia_ucf_pmu_1/mem_bytes_rd/ "
					"read 0 in 20 ms while the catalog's event=0x123 counted "),
			  "%.3000s", r.out);
		cr_assert(strstr(r.out, ": its sysfs alias (event=0x223) looks wrong; recording "
					"nvidia_ucf_pmu_1/event=0x123/ instead\n"), "%.3000s", r.out);
		e = event_json(&r, "nvidia_ucf_pmu_1/event=0x123/");
		cr_expect(strstr(e, "\"name\": \"mem_bytes_rd\""), "%s", e);
		cr_expect_gt(json_num(e, "total"), 0, "%s", e);
		e = event_json(&r, "nvidia_ucf_pmu_1/mem_bytes_wr/");
		cr_expect(strstr(e, "\"config\": \"0x123\""), "trusted: %s", e);
		e = event_json(&r, "nvidia_ucf_pmu_1/mem_bytes_rd,src_rem=0x1,dst_rem=0x1,name=rem_rem/");
		cr_expect(strstr(e, "\"config\": \"0x223\""), "no evidence, no change: %s", e);
		cr_expect_eq(json_num(e, "total"), 0, "%s", e);
		e = event_json(&r, "nvidia_ucf_pmu_0/mem_bytes_rd/");
		cr_expect_gt(json_num(e, "total"), 0, "%s", e);
	}
	done(NULL);
}

/* The check on real perf counters: this kernel's software PMU dressed as
 * a CMEM-latency PMU (its identifier, CPU 0), whose `cycles` alias
 * encodes the dummy event (config 9, which never counts) while the
 * catalog's 0x0 is cpu-clock here, which always does. */
Test(sysfs_layouts, wrong_alias_replaced_on_perf, .timeout = 60)
{
	t4t_need_perf();
	tmpdir(&r);
	sh(&r, "d='%s/sw/nvidia_cmem_latency_pmu_0' && mkdir -p \"$d/format\" \"$d/events\" && "
	       "cd \"$d\" && echo 1 > type && echo 0 > cpumask && echo NVDA2021 > identifier && "
	       "echo config:0-63 > format/event && echo event=0x9 > events/cycles && "
	       "echo event=0x1 > events/rd_req && cd '%s' && '%s' record -q --sysfs-root sw "
	       "-e nvidia_cmem_latency_pmu_0/cycles/,nvidia_cmem_latency_pmu_0/rd_req/ "
	       "--period 10ms -d 50ms -o x.t4t 2>&1 >/dev/null; echo rc=$?",
	   r.dir, r.dir, bin());
	cr_assert(strstr(r.out, "t410trace: warning: nvidia_cmem_latency_pmu_0/cycles/ read 0 in "
				"20 ms while the catalog's event=0x0 counted "), "%s", r.out);
	cr_assert(strstr(r.out, "recording nvidia_cmem_latency_pmu_0/event=0x0/ instead\nrc=0\n"),
		  "%s", r.out);
	cr_expect_eq(count_lines(r.out), 2, "rd_req agrees with the catalog: not checked: %s", r.out);
	done(NULL);
}

/* ---- what perf_event_open gets --------------------------------------------------- */

/* Run record under the shim; r.out gets its perf_event_open log after a
 * line "--". */
static void record_logged(const char *args)
{
	sh(&r, "cd '%s' && rm -f opens x.t4t && T4_PERF_LOG=\"$PWD/opens\" LD_PRELOAD=./shim.so "
	       "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 "
	       "'%s' record -q %s -o x.t4t >/dev/null 2>&1; echo --; cat opens",
	   r.dir, bin(), args);
}

/* Uncore counters (and the alias check's pair) are opened for every task
 * (pid -1) on the PMU's CPU, never inherited, even when the recording
 * counts a command, whose CPU-side counters are per task and inherited. */
Test(sysfs_layouts, uncore_opened_with_pid_minus_1_and_inherit_0, .timeout = 120)
{
	const char *line;

	/* the shim is mapped executable: not from a noexec $TMPDIR */
	t4t_exec_tmpdir(r.dir, sizeof(r.dir), "t4shim");
	cli_build_shim(&r);
	make_layouts("tegra410");
	record_logged("--sysfs-root lay/tegra410 -e nvidia_ucf_pmu_1/mem_bytes_rd/ -- true");
	cr_assert(strstr(r.out, "--\ntype=209 config=0x123 config1=0x0 config2=0x0 pid=-1 cpu=72 "
				"group=leader inherit=0 disabled=1 enable_on_exec=0\n"), "%s", r.out);
	/* the alias check's pair: the same */
	sh(&r, "printf 'event=0x223\\n' > '%s/nvidia_ucf_pmu_1/events/mem_bytes_rd'",
	   layout_dir("tegra410"));
	record_logged("--sysfs-root lay/tegra410 -e nvidia_ucf_pmu_1/mem_bytes_rd/ -- true");
	cr_assert(strstr(r.out, "--\ntype=209 config=0x223 config1=0x0 config2=0x0 pid=-1 cpu=72 "
				"group=leader inherit=0 disabled=1 enable_on_exec=0\n"), "%s", r.out);
	/* a command's CPU-side counter: its task, inherited, from its exec */
	record_logged("-e cpu-clock -- true");
	line = strstr(r.out, "\ntype=1 config=0x0 config1=0x0 config2=0x0 pid=");
	cr_assert_not_null(line, "%s", r.out);
	cr_assert_gt(atoi(strstr(line, "pid=") + 4), 0, "%s", r.out);
	cr_assert(strstr(line, " cpu=-1 group=leader inherit=1 disabled=1 enable_on_exec=1\n"),
		  "%s", r.out);
	done(NULL);
}

/* The attrs themselves: a counter of the whole system (tid 0) is never
 * inherited nor enabled by an exec, whatever its flags say; a task's
 * keeps them. */
Test(sysfs_layouts, perf_args_of_system_and_task_counters)
{
	struct t4_pmu pmu = { .name = "nvidia_ucf_pmu_0", .type = 209, .cpu = 72 };
	struct t4_counter c = { .pmu = &pmu, .type = 209, .config = 0x123, .cpu = 72,
				.inherit = true };
	struct perf_event_attr a;
	int pid, cpu;

	t4_counter_perf_args(&c, true, &a, &pid, &cpu);
	cr_expect_eq(pid, -1);
	cr_expect_eq(cpu, 72);
	cr_expect_eq(a.inherit, 0);
	cr_expect_eq(a.enable_on_exec, 0);
	cr_expect_eq(a.disabled, 1);
	cr_expect_eq(a.config, 0x123);
	/* a task's counter: a PMU without a cpumask (software), any CPU */
	struct t4_pmu sw = { .name = "software", .type = 1, .cpu = -1 };

	c.pmu = &sw;
	c.tid = 4242;
	c.cpu = -1;
	t4_counter_perf_args(&c, true, &a, &pid, &cpu);
	cr_expect_eq(pid, 4242);
	cr_expect_eq(cpu, -1);
	cr_expect_eq(a.inherit, 1);
	cr_expect_eq(a.enable_on_exec, 1);
	t4_counter_perf_args(&c, false, &a, &pid, &cpu);
	cr_expect_eq(a.disabled, 0);
	cr_expect_eq(a.enable_on_exec, 0);
}
