/* test_events_perf.c - perf's habits in the event parser: hardware events
 * and raw rNNN on a CPU PMU (and the message when there is none), event
 * modifiers (:u :k :h applied, the others refused by name), -C LIST and
 * -p/-t task targets, suggestions for misspelled tracepoints.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/collector.h"
#include "sysfs_testutil.h"
#include "tmpdir_testutil.h"
#include "util/util.h"

/* A sysfs tree with a CPU PMU ("cpu", type 4, no cpumask), the software
 * and tracepoint PMUs and one uncore PMU, in a fresh directory. */
struct tree {
	char dir[PATH_MAX];
	struct t4_pmu_set set;
};

static void put(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	cr_assert_eq(t4_write_small_file(path, text), 0, "%s", t4_errmsg());
}

static void make_tree(struct tree *t)
{
	static const char *const dirs[] = { "cpu", "software", "tracepoint", "uncore_x",
					    "uncore_x/format" };
	char path[PATH_MAX + 64];

	t4t_tmpdir(t->dir, sizeof(t->dir), "t4evperf");
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", t->dir, dirs[i]);
		cr_assert_eq(t4_mkdirs(path, 0755), 0);
	}
	put(t->dir, "cpu/type", "4\n");
	put(t->dir, "software/type", "1\n");
	put(t->dir, "tracepoint/type", "2\n");
	put(t->dir, "uncore_x/type", "30\n");
	put(t->dir, "uncore_x/cpumask", "0\n");
	put(t->dir, "uncore_x/format/event", "config:0-7\n");
	cr_assert_eq(t4_pmus_discover(&t->set, t->dir), 0, "%s", t4_errmsg());
}

static void free_tree(struct tree *t)
{
	t4_pmus_free(&t->set);
	t4_rmtree(t->dir);
}

static int online_cpus(void)
{
	char buf[256];
	int n = 0;

	cr_assert_geq(t4_read_small_file("/sys/devices/system/cpu/online", buf, sizeof(buf)), 0);
	cr_assert_geq(t4_cpulist_first(buf, &n), 0);
	return n;
}

Test(events_perf, hardware_and_raw_events_on_the_cpu_pmu)
{
	struct tree t;
	struct t4_evlist l = { 0 };
	int ncpu = online_cpus();

	make_tree(&t);
	cr_assert_eq(t4_events_parse(&l, &t.set, "cycles,instructions,r1a"), 0, "%s", t4_errmsg());
	cr_assert_eq(l.n, 3 * (size_t)ncpu);
	cr_expect_str_eq(l.v[0].pmu->name, "cpu");
	cr_expect_eq(l.v[0].type, 0); /* PERF_TYPE_HARDWARE */
	cr_expect_eq(l.v[0].config, 0); /* cycles */
	cr_expect(l.v[0].is_clock);
	cr_expect_eq(l.v[ncpu].config, 1); /* instructions */
	cr_expect_eq(l.v[2 * ncpu].type, 4); /* raw: the CPU PMU's type */
	cr_expect_eq(l.v[2 * ncpu].config, 0x1a); /* rNNN is hex, as in perf */
	t4_evlist_free(&l);
	free_tree(&t);
}

/* Without a CPU PMU, cycles, instructions and rNNN say why, not "unknown
 * event". */
Test(events_perf, no_cpu_pmu_is_named)
{
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };
	struct t4_sim *sim;

	cr_assert_eq(t4_pmus_discover(&set, SYSFS_T410), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &set, "r1a"), -ENOENT);
	cr_expect_str_eq(t4_errmsg(), "r1a: no CPU PMU under " SYSFS_T410);
	t4_pmus_free(&set);

	cr_assert_eq(t4_sim_create(&sim, 1, NULL), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_pmus_discover(&set, t4_sim_root(sim)), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &set, "instructions"), -ENOENT);
	cr_expect(strstr(t4_errmsg(), "the simulated Tegra410 has only its uncore PMUs"),
		  "%s", t4_errmsg());
	t4_pmus_free(&set);
	t4_sim_free(sim);

	cr_assert_eq(t4_pmus_discover(&set, NULL), 0, "%s", t4_errmsg());
	if (t4_pmus_find(&set, "cpu") || t4_pmus_find(&set, "cpu_core")) {
		t4_pmus_free(&set);
		cr_skip_test("this machine has a CPU PMU");
	}
	cr_assert_eq(t4_events_parse(&l, &set, "cycles"), -ENOENT);
	cr_expect(!strncmp(t4_errmsg(), "cycles: this machine has no CPU PMU (a VM?)", 43),
		  "%s", t4_errmsg());
	t4_pmus_free(&set);
}

Test(events_perf, modifiers)
{
	struct tree t;
	struct t4_evlist l = { 0 };

	make_tree(&t);
	cr_assert_eq(t4_events_parse(&l, &t.set, "instructions:u"), 0, "%s", t4_errmsg());
	cr_expect(!l.v[0].exclude_user && l.v[0].exclude_kernel && l.v[0].exclude_hv);
	cr_expect_str_eq(l.v[0].spec, "instructions:u");
	t4_evlist_free(&l);
	cr_assert_eq(t4_events_parse(&l, &t.set, "cpu-clock:k,cycles:uk"), 0, "%s", t4_errmsg());
	cr_expect(l.v[0].exclude_user && !l.v[0].exclude_kernel && l.v[0].exclude_hv);
	cr_expect(!l.v[l.n - 1].exclude_user && !l.v[l.n - 1].exclude_kernel &&
		  l.v[l.n - 1].exclude_hv);
	cr_expect_str_eq(l.v[0].spec, "cpu-clock:k");
	t4_evlist_free(&l);

	static const struct {
		const char *spec, *msg;
		int rc;
	} bad[] = {
		{ "cycles:ppp", "cycles:ppp: ':p' asks for precise sampling; t410trace counts, it "
				"does not sample (drop the modifier)", -ENOTSUP },
		{ "cycles:G", "cycles:G: modifier 'G' is not supported by t410trace (supported: u, "
			      "k, h)", -ENOTSUP },
		{ "uncore_x/event=1/:u", "uncore_x/event=0x1/:u: uncore_x is an uncore PMU; it counts "
					 "every privilege level, so ':u' cannot apply", -ENOTSUP },
		{ "uncore_x/event=1/:", "uncore_x/event=1/: empty modifier after ':'", -EINVAL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(t4_events_parse(&l, &t.set, bad[i].spec), bad[i].rc, "%s", bad[i].spec);
		cr_expect_str_eq(t4_errmsg(), bad[i].msg);
		cr_expect_eq(l.n, 0);
	}
	free_tree(&t);
}

/* -C LIST: per-CPU events only there; uncore PMUs keep their CPU. */
Test(events_perf, cpu_list)
{
	struct tree t;
	struct t4_evlist l = { .target = { .cpus = "0" } };

	make_tree(&t);
	cr_assert_eq(t4_events_parse(&l, &t.set, "cpu-clock,uncore_x/event=1/"), 0, "%s",
		     t4_errmsg());
	cr_assert_eq(l.n, 2);
	cr_expect_eq(l.v[0].cpu, 0);
	cr_expect_str_eq(l.v[1].pmu->name, "uncore_x");
	t4_evlist_free(&l);
	l.target.cpus = "0,4000";
	cr_assert_eq(t4_events_parse(&l, &t.set, "cpu-clock"), -EINVAL);
	cr_expect(!strncmp(t4_errmsg(), "-C 0,4000: CPU 4000 is not online (online: ", 43),
		  "%s", t4_errmsg());
	free_tree(&t);
}

/* -p/-t: one per-task counter per event and thread, on any CPU; uncore
 * PMUs refused; the default set is the software events. */
Test(events_perf, task_targets)
{
	struct tree t;
	int tids[2] = { getpid(), 1 };
	struct t4_evlist l = { .target = { .tids = tids, .n_tids = 2 } };
	struct t4_domain_set ds;

	make_tree(&t);
	cr_assert_eq(t4_events_parse(&l, &t.set, "cpu-clock,cycles"), 0, "%s", t4_errmsg());
	cr_assert_eq(l.n, 4);
	cr_expect_eq(l.v[0].cpu, -1);
	cr_expect_eq(l.v[0].tid, getpid());
	cr_expect_eq(l.v[1].tid, 1);
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_expect_eq(ds.n, 4, "one domain per PMU and thread");
	char want[32];
	snprintf(want, sizeof(want), "software@tid%d", getpid());
	cr_expect_str_eq(ds.v[0].name, want);
	cr_expect_eq(ds.v[0].cpu, -1);
	t4_domains_free(&ds);
	t4_evlist_free(&l);
	l.target = (struct t4_target){ .tids = tids, .n_tids = 1 };
	cr_assert_eq(t4_events_parse(&l, &t.set, "uncore_x/event=1/"), -EINVAL);
	cr_expect_str_eq(t4_errmsg(), "uncore_x/event=0x1/: uncore_x counts the whole system, not "
				      "one task: it cannot be used with -p/-t");
	cr_assert_eq(t4_events_default(&l, &t.set), 0, "%s", t4_errmsg());
	cr_expect_eq(l.n, 5, "the five default software events, once each");
	for (size_t i = 0; i < l.n; i++)
		cr_expect_str_eq(l.v[i].pmu->name, "software");
	t4_evlist_free(&l);
	free_tree(&t);
}

Test(events_perf, tracepoint_suggestions)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], want[PATH_MAX + 256];
	struct tree t;
	struct t4_evlist l = { 0 };

	make_tree(&t);
	t4t_tmpdir(dir, sizeof(dir), "t4evtp");
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch", dir);
	cr_assert_eq(t4_mkdirs(path, 0755), 0);
	put(path, "id", "316\n");
	setenv("T410TRACE_TRACEFS", dir, 1);
	cr_assert_eq(t4_events_parse(&l, &t.set, "sched:sched_swich"), -EINVAL);
	snprintf(want, sizeof(want), "sched:sched_swich: no such tracepoint (%s/events/sched/"
		 "sched_swich/id does not exist) (did you mean sched:sched_switch?)", dir);
	cr_expect_str_eq(t4_errmsg(), want);
	cr_assert_eq(t4_events_parse(&l, &t.set, "shed:sched_switch"), -EINVAL);
	snprintf(want, sizeof(want), "shed:sched_switch: no such tracepoint (%s/events/shed/"
		 "sched_switch/id does not exist) (did you mean sched:...?)", dir);
	cr_expect_str_eq(t4_errmsg(), want);
	cr_assert_eq(t4_events_parse(&l, &t.set, "sched:sched_switch:k"), 0, "%s", t4_errmsg());
	cr_expect(l.v[0].exclude_user);
	cr_expect_str_eq(l.v[0].spec, "sched:sched_switch:k");
	unsetenv("T410TRACE_TRACEFS");
	t4_evlist_free(&l);
	t4_rmtree(dir);
	free_tree(&t);
}
