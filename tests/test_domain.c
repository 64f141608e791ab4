/* test_domain.c - clock domains: grouping rules on hand-made PMUs, and
 * opening and group-reading this machine's real software and msr PMUs.
 *
 * Counters are built by hand (struct t4_pmu / t4_counter) so these tests
 * depend on nothing but domain.c; PMU type numbers come from sysfs. The
 * exact-conservation test freezes the group (PERF_EVENT_IOC_DISABLE) around
 * its independent raw reads, so the comparison is exact, not timing-based.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "collector/collector.h"
#include "probe.h"
#include "sysfs_testutil.h"
#include "util/util.h"

enum { SW_CPU_CLOCK = 0, SW_TASK_CLOCK = 1, SW_PAGE_FAULTS = 2, SW_CTX = 3 };

static const struct t4_kind ucf_kind = {
	.id = T4_DOM_UCF, .label = "UCF", .prefix = "nvidia_ucf_pmu_",
	.clock_event = "cycles",
};
static const struct t4_kind pcie_kind = {
	.id = T4_DOM_PCIE, .label = "PCIE", .prefix = "nvidia_pcie_pmu_",
	.clock_event = "cycles",
};

static uint32_t sysfs_type(const char *pmu)
{
	char path[256], buf[32];
	uint64_t v = 0;

	snprintf(path, sizeof(path), T4_SYSFS_DEFAULT "/%s/type", pmu);
	cr_assert_geq(t4_read_small_file(path, buf, sizeof(buf)), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_parse_u64(buf, &v), 0);
	return (uint32_t)v;
}

static void make_pmu(struct t4_pmu *p, const char *name, uint32_t type,
		     const struct t4_kind *kind, int cpu)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->type = type;
	p->kind = kind;
	p->cpu = cpu;
	if (cpu >= 0)
		snprintf(p->cpumask, sizeof(p->cpumask), "%d", cpu);
	p->socket = p->instance = -1;
}

static struct t4_counter *add(struct t4_evlist *l, const struct t4_pmu *p,
			      const char *name, uint64_t config, int cpu,
			      int group)
{
	struct t4_counter *c;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		cr_assert_not_null(l->v);
	}
	c = &l->v[l->n++];
	memset(c, 0, sizeof(*c));
	c->pmu = p;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->spec, sizeof(c->spec), "%s/%s/", p->name, name);
	c->type = p->type;
	c->config = config;
	c->scale = 1.0;
	c->cpu = cpu;
	c->group = group;
	c->is_clock = p->kind && !strcmp(name, "cycles");
	return c;
}

static void free_list(struct t4_evlist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void spin(unsigned ms)
{
	uint64_t end = t4_mono_raw_ns() + ms * 1000000ull;
	volatile uint64_t x = 0;

	while (t4_mono_raw_ns() < end)
		x++;
}

/* The real PMUs of this machine, by name (skips without perf counters). */
struct host {
	struct t4_pmu sw, msr;
	struct t4_evlist l;
};

static void host_pmus(struct host *h)
{
	memset(h, 0, sizeof(*h));
	make_pmu(&h->sw, "software", sysfs_type("software"), NULL, -1);
}

/* ... and counters will be opened. */
static void host_init(struct host *h)
{
	t4t_need_perf();
	host_pmus(h);
}

/* The x86 msr PMU too (its tsc counter is a domain's local clock). */
static void host_init_msr(struct host *h)
{
	host_init(h);
	t4t_need_pmu("msr");
	make_pmu(&h->msr, "msr", sysfs_type("msr"), NULL, -1);
}

/* cpu-clock, task-clock, context-switches, page-faults on cpu. */
static void add_sw4(struct host *h, int cpu)
{
	add(&h->l, &h->sw, "cpu-clock", SW_CPU_CLOCK, cpu, -1);
	add(&h->l, &h->sw, "task-clock", SW_TASK_CLOCK, cpu, -1);
	add(&h->l, &h->sw, "context-switches", SW_CTX, cpu, -1);
	add(&h->l, &h->sw, "page-faults", SW_PAGE_FAULTS, cpu, -1);
}

static void open_set(struct host *h, struct t4_domain_set *ds)
{
	cr_assert_eq(t4_domains_build(ds, &h->l), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_open(ds, NULL), 0, "%s", t4_errmsg());
}

static void read_ok(struct t4_domain *d, uint64_t trig, struct t4_ret_pkt *r)
{
	cr_assert_eq(t4_domain_read(d, trig, r), 0, "%s", t4_errmsg());
	cr_assert_eq(r->trigger_id, trig);
	cr_assert_eq(r->domain_id, d->id);
	cr_assert_eq(r->n_counts, d->n);
	cr_assert_leq(r->read_begin_ns, r->read_end_ns);
	cr_assert_eq(r->flags & (T4_RET_READ_FAILED | T4_RET_BACKWARDS), 0);
}

/* ---- grouping (no kernel) ------------------------------------------------ */

Test(domain, build_groups_per_pmu_and_cpu_clock_first)
{
	struct t4_pmu sw, msr, ucf0, ucf1, foo, bar, tp;
	struct t4_evlist l = {0};
	struct t4_domain_set ds;

	make_pmu(&sw, "software", 1, NULL, -1);
	sw.cpumask[0] = '\0';
	make_pmu(&msr, "msr", 9, NULL, -1);
	make_pmu(&ucf0, "nvidia_ucf_pmu_0", 40, &ucf_kind, 0);
	make_pmu(&ucf1, "nvidia_ucf_pmu_1", 41, &ucf_kind, 72);
	make_pmu(&foo, "foo_pmu", 50, NULL, 3);
	make_pmu(&bar, "bar_pmu", 51, NULL, 3);
	make_pmu(&tp, "tracepoint", 2, NULL, -1);

	add(&l, &sw, "cpu-clock", 0, 0, -1);
	add(&l, &ucf0, "mem_rd", 0x10, 0, -1);
	add(&l, &msr, "aperf", 1, 0, -1);
	add(&l, &msr, "tsc", 0, 0, -1);
	add(&l, &ucf0, "cycles", 0x100, 0, -1);
	add(&l, &sw, "task-clock", 1, 1, -1);
	add(&l, &sw, "context-switches", 3, 0, -1);
	add(&l, &ucf1, "cycles", 0x100, 72, -1);
	add(&l, &foo, "x", 1, -1, -1);
	add(&l, &foo, "cycles", 2, -1, -1);
	add(&l, &bar, "y", 1, -1, -1);
	add(&l, &tp, "sched:sched_switch", 300, 1, -1);

	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(ds.n, 8);
	static const struct {
		const char *name;
		enum t4_domain_kind kind;
		int cpu, clock;
		const char *first;
		size_t n;
	} want[] = {
		{"software@cpu0", T4_DOM_SOFTWARE, 0, -1, "cpu-clock", 2},
		{"nvidia_ucf_pmu_0", T4_DOM_UCF, 0, 0, "cycles", 2},
		{"msr@cpu0", T4_DOM_TSC, 0, 0, "tsc", 2},
		{"software@cpu1", T4_DOM_SOFTWARE, 1, -1, "task-clock", 1},
		{"nvidia_ucf_pmu_1", T4_DOM_UCF, 72, 0, "cycles", 1},
		{"foo_pmu", T4_DOM_OTHER, 3, 0, "cycles", 2},
		{"bar_pmu", T4_DOM_OTHER, 3, -1, "y", 1},
		{"tracepoint@cpu1", T4_DOM_TRACEPOINT, 1, -1, "sched:sched_switch", 1},
	};
	for (size_t i = 0; i < ds.n; i++) {
		const struct t4_domain *d = &ds.v[i];

		cr_assert_eq(d->id, i);
		cr_assert_str_eq(d->name, want[i].name);
		cr_assert_eq(d->kind, want[i].kind, "%zu", i);
		cr_assert_eq(d->cpu, want[i].cpu, "%zu", i);
		cr_assert_eq(d->clock_index, want[i].clock, "%zu", i);
		cr_assert_str_eq(d->counters[0].name, want[i].first);
		cr_assert_eq(d->n, want[i].n, "%zu", i);
		cr_assert_eq(d->nominal_hz, 0);
		for (size_t k = 0; k < T4_MAX_COUNTERS; k++)
			cr_assert_eq(d->fds[k], -1);
	}
	/* the rest keeps list order behind the clock */
	cr_assert_str_eq(ds.v[0].counters[1].name, "context-switches");
	cr_assert_str_eq(ds.v[1].counters[1].name, "mem_rd");
	cr_assert_str_eq(ds.v[2].counters[1].name, "aperf");
	cr_assert_str_eq(ds.v[5].counters[1].name, "x");
	cr_assert_eq(t4_domain_read_cpu(&ds.v[4]), 72);
	t4_domains_free(&ds);
	cr_assert_eq(ds.n, 0);
	cr_assert_null(ds.v);
	free_list(&l);
}

/* A log holds at most T4_MAX_DOMAINS clock domains (what decode reads):
 * one more (a CPU or a thread each, -p on a process of 5,000 threads) is
 * refused at the start, naming the counter; before, the recording went
 * on and decode left the others' counts out with a warning. */
Test(domain, more_domains_than_decode_reads_are_refused)
{
	struct t4_pmu sw;
	struct t4_evlist l = {0};
	struct t4_domain_set ds;

	make_pmu(&sw, "software", 1, NULL, -1);
	sw.cpumask[0] = '\0';
	for (int cpu = 0; cpu < (int)T4_MAX_DOMAINS; cpu++)
		add(&l, &sw, "cpu-clock", 0, cpu, -1);
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(ds.n, T4_MAX_DOMAINS);
	t4_domains_free(&ds);
	add(&l, &sw, "cpu-clock", 0, (int)T4_MAX_DOMAINS, -1);
	cr_assert_eq(t4_domains_build(&ds, &l), -ERANGE);
	cr_assert_str_eq(t4_errmsg(), "software/cpu-clock/: more than 4096 clock domains (what "
			 "decode reads); count fewer PMUs, CPUs or threads");
	cr_assert_eq(ds.n, 0);
	cr_assert_null(ds.v);
	free_list(&l);
}

Test(domain, build_group_spanning_two_hardware_pmus_fails)
{
	struct t4_pmu sw, ucf, pcie;
	struct t4_evlist l = {0};
	struct t4_domain_set ds;

	make_pmu(&sw, "software", 1, NULL, -1);
	make_pmu(&ucf, "nvidia_ucf_pmu_0", 40, &ucf_kind, 0);
	make_pmu(&pcie, "nvidia_pcie_pmu_0_rc_1", 42, &pcie_kind, 0);
	add(&l, &ucf, "cycles", 0x100, 0, 0);
	add(&l, &sw, "cpu-clock", 0, 0, 0);
	add(&l, &pcie, "rd_bytes", 4, 0, 0);
	cr_assert_eq(t4_domains_build(&ds, &l), -EINVAL);
	cr_assert_str_eq(t4_errmsg(),
			 "nvidia_pcie_pmu_0_rc_1/rd_bytes/: a group may not span two "
			 "hardware PMUs (nvidia_ucf_pmu_0 and nvidia_pcie_pmu_0_rc_1)");
	cr_assert_eq(ds.n, 0);
	cr_assert_null(ds.v);

	/* the same PMU twice in other groups is fine, and software events that
	 * join a hardware group go to their own domain */
	l.v[2].group = 1;
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(ds.n, 3);
	cr_assert_str_eq(ds.v[0].name, "nvidia_ucf_pmu_0");
	cr_assert_eq(ds.v[0].n, 1);
	cr_assert_str_eq(ds.v[1].name, "software@cpu0");
	cr_assert_eq(ds.v[1].kind, T4_DOM_SOFTWARE);
	t4_domains_free(&ds);
	free_list(&l);
}

Test(domain, build_more_than_64_counters_fails)
{
	struct t4_pmu ucf;
	struct t4_evlist l = {0};
	struct t4_domain_set ds;

	make_pmu(&ucf, "nvidia_ucf_pmu_0", 40, &ucf_kind, 0);
	for (int i = 0; i < T4_MAX_COUNTERS; i++) {
		char name[16];
		snprintf(name, sizeof(name), "ev%d", i);
		add(&l, &ucf, name, (uint64_t)i, 0, -1);
	}
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(ds.v[0].n, T4_MAX_COUNTERS);
	t4_domains_free(&ds);

	add(&l, &ucf, "cycles", 0x100, 0, -1);
	cr_assert_eq(t4_domains_build(&ds, &l), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "nvidia_ucf_pmu_0: more than 64 counters in "
				      "one clock domain");
	cr_assert_eq(ds.n, 0);
	cr_assert_null(ds.v);
	free_list(&l);
}

/* Every output keys a domain's counts by event name (the JSONL "counts"
 * object, the summary's and record's totals): two counters of one name in
 * one domain (-e cpu-clock,cpu-clock; cs and context-switches) were
 * recorded, then summed as one event over "4 CPUs" and written as a JSON
 * object with a key twice. Refused, saying how to tell them apart; the
 * same name on two CPUs or PMUs is two domains' and fine. */
Test(domain, build_two_counters_of_one_name_fails)
{
	struct t4_pmu sw;
	struct t4_evlist l = { 0 };
	struct t4_domain_set ds;

	make_pmu(&sw, "software", 1, NULL, -1);
	add(&l, &sw, "cpu-clock", SW_CPU_CLOCK, 0, -1);
	add(&l, &sw, "cpu-clock", SW_CPU_CLOCK, 1, -1);
	add(&l, &sw, "task-clock", SW_TASK_CLOCK, 0, -1);
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(ds.n, 2);
	t4_domains_free(&ds);
	snprintf(add(&l, &sw, "cpu-clock", SW_CPU_CLOCK, 0, -1)->spec, T4_SPEC_MAX, "cpu-clock:u");
	cr_assert_eq(t4_domains_build(&ds, &l), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "software@cpu0: two events named cpu-clock (software/cpu-clock/ "
				      "and cpu-clock:u): every output keys counts by name; rename "
				      "one: software/...,name=NEW/");
	cr_assert_eq(ds.n, 0);
	cr_assert_null(ds.v);
	free_list(&l);
}

Test(domain, build_counter_without_pmu_fails)
{
	struct t4_evlist l = {0};
	struct t4_pmu sw;
	struct t4_domain_set ds;

	make_pmu(&sw, "software", 1, NULL, -1);
	add(&l, &sw, "cpu-clock", 0, 0, -1)->pmu = NULL;
	cr_assert_eq(t4_domains_build(&ds, &l), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "software/cpu-clock/: counter without a PMU");
	free_list(&l);
}

Test(domain, describe_fills_metadata_packets)
{
	struct t4_pmu ucf;
	struct t4_evlist l = {0};
	struct t4_domain_set ds;
	struct t4_domain_pkt dp;
	struct t4_event_pkt ep;
	struct t4_counter *c;

	make_pmu(&ucf, "nvidia_ucf_pmu_1", 41, &ucf_kind, 72);
	c = add(&l, &ucf, "mem_bytes_rd", 0x123, 72, -1);
	c->config1 = 0x5;
	c->config2 = 0x7;
	c->scale = 32.0;
	snprintf(c->unit, sizeof(c->unit), "bytes");
	add(&l, &ucf, "cycles", 0x100, 72, -1);
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	ds.v[0].nominal_hz = 1500000000;

	t4_domain_describe(&ds.v[0], &dp);
	cr_assert_eq(dp.domain_id, 0);
	cr_assert_eq(dp.kind, T4_DOM_UCF);
	cr_assert_eq(dp.cpu, 72);
	cr_assert_eq(dp.clock_event, 0);
	cr_assert_eq(dp.nominal_hz, 1500000000);
	cr_assert_str_eq(dp.name, "nvidia_ucf_pmu_1");

	t4_domain_describe_event(&ds.v[0], 1, &ep);
	cr_assert_eq(ep.domain_id, 0);
	cr_assert_eq(ep.index, 1);
	cr_assert_eq(ep.perf_type, 41);
	cr_assert_eq(ep.flags, 0);
	cr_assert_eq(ep.config, 0x123);
	cr_assert_eq(ep.config1, 0x5);
	cr_assert_eq(ep.config2, 0x7);
	cr_assert_eq(ep.scale, 32.0);
	cr_assert_str_eq(ep.pmu, "nvidia_ucf_pmu_1");
	cr_assert_str_eq(ep.name, "mem_bytes_rd");
	cr_assert_str_eq(ep.spec, "nvidia_ucf_pmu_1/mem_bytes_rd/");
	cr_assert_str_eq(ep.unit, "bytes");
	t4_domains_free(&ds);
	free_list(&l);
}

/* ---- real PMUs ------------------------------------------------------------ */

Test(domain, software_group_reads_grow)
{
	struct host h;
	struct t4_domain_set ds;
	struct t4_ret_pkt r0, r1, r2;

	host_init(&h);
	add_sw4(&h, 0);
	open_set(&h, &ds);
	cr_assert_eq(ds.n, 1);
	cr_assert_str_eq(ds.v[0].name, "software@cpu0");
	cr_assert_eq(t4_domain_read_cpu(&ds.v[0]), 0);

	read_ok(&ds.v[0], 0, &r0);
	cr_assert_eq(r0.flags, T4_RET_FIRST);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(r0.counts[i], 0);
	cr_assert_eq(r0.local_clock, r0.read_begin_ns);
	cr_assert_eq(r0.enabled_delta, 0);

	spin(20);
	read_ok(&ds.v[0], 1, &r1);
	cr_assert_eq(r1.flags & T4_RET_FIRST, 0);
	cr_assert_eq(r1.local_clock, r1.read_begin_ns);
	cr_assert_gt(r1.counts[0], 0);
	/* cpu-clock counts the CPU's time: it was sampled inside each read
	 * window, so its delta lies between the windows' inner and outer
	 * distance (1% + 50 us slack for the kernel's clock vs RAW). */
	uint64_t inner = r1.read_begin_ns - r0.read_end_ns;
	uint64_t outer = r1.read_end_ns - r0.read_begin_ns;
	cr_assert_geq(r1.counts[0] + inner / 100 + 50000, inner,
		      "cpu-clock %lu inner %lu", r1.counts[0], inner);
	cr_assert_leq(r1.counts[0], outer + outer / 100 + 50000,
		      "cpu-clock %lu outer %lu", r1.counts[0], outer);
	cr_assert_gt(r1.enabled_delta, 0);
	cr_assert_eq(r1.running_delta, r1.enabled_delta);

	spin(5);
	read_ok(&ds.v[0], 2, &r2);
	cr_assert_gt(r2.counts[0], 0);
	cr_assert_geq(r2.read_begin_ns, r1.read_end_ns);
	t4_domains_free(&ds);
	free_list(&h.l);
}

Test(domain, msr_tsc_is_the_local_clock)
{
	struct host h;
	struct t4_domain_set ds;
	struct t4_ret_pkt r[4];

	host_init_msr(&h);
	add(&h.l, &h.msr, "tsc", 0, 0, -1);
	open_set(&h, &ds);
	cr_assert_eq(ds.v[0].kind, T4_DOM_TSC);
	cr_assert_eq(ds.v[0].clock_index, 0);
	cr_assert_str_eq(ds.v[0].name, "msr@cpu0");
	for (int i = 0; i < 4; i++) {
		read_ok(&ds.v[0], (uint64_t)i, &r[i]);
		spin(1);
	}
	cr_assert_eq(r[0].flags, T4_RET_FIRST);
	cr_assert_eq(r[0].counts[0], 0);
	cr_assert_gt(r[0].local_clock, 0);
	for (int i = 1; i < 4; i++) {
		cr_assert_gt(r[i].local_clock, r[i - 1].local_clock);
		cr_assert_eq(r[i].counts[0], r[i].local_clock - r[i - 1].local_clock);
	}
	t4_domains_free(&ds);
	free_list(&h.l);
}

/* One raw group read of the leader, values in counter order. */
static void raw_read(const struct t4_domain *d, uint64_t *v)
{
	uint64_t buf[3 + 2 * T4_MAX_COUNTERS];
	ssize_t r = read(d->fds[0], buf, sizeof(buf));

	cr_assert_eq(r, (ssize_t)((3 + 2 * d->n) * sizeof(uint64_t)));
	for (size_t k = 0; k < d->n; k++)
		for (size_t i = 0; i < d->n; i++)
			if (d->ids[i] == buf[4 + 2 * k])
				v[i] = buf[3 + 2 * k];
}

static void group_ioctl(const struct t4_domain_set *ds, unsigned long req)
{
	for (size_t i = 0; i < ds->n; i++)
		cr_assert_eq(ioctl(ds->v[i].fds[0], req, PERF_IOC_FLAG_GROUP), 0);
}

Test(domain, sum_of_deltas_equals_total_change_exactly)
{
	struct host h;
	struct t4_domain_set ds;
	struct t4_ret_pkt r;
	uint64_t start[2][4], end[2][4], sum[2][4] = {{0}};

	host_init_msr(&h);
	add_sw4(&h, 0);
	add(&h.l, &h.msr, "tsc", 0, 0, -1);
	open_set(&h, &ds);
	cr_assert_eq(ds.n, 2);

	/* frozen groups make the independent raw reads exact */
	group_ioctl(&ds, PERF_EVENT_IOC_DISABLE);
	for (size_t d = 0; d < 2; d++) {
		raw_read(&ds.v[d], start[d]);
		read_ok(&ds.v[d], 0, &r);
		cr_assert_eq(r.flags, T4_RET_FIRST);
	}
	for (uint64_t t = 1; t <= 5; t++) {
		group_ioctl(&ds, PERF_EVENT_IOC_ENABLE);
		spin(2);
		usleep(1000);
		group_ioctl(&ds, PERF_EVENT_IOC_DISABLE);
		for (size_t d = 0; d < 2; d++) {
			read_ok(&ds.v[d], t, &r);
			for (size_t i = 0; i < ds.v[d].n; i++)
				sum[d][i] += r.counts[i];
		}
	}
	for (size_t d = 0; d < 2; d++) {
		raw_read(&ds.v[d], end[d]);
		for (size_t i = 0; i < ds.v[d].n; i++) {
			cr_assert_eq(sum[d][i], end[d][i] - start[d][i],
				     "domain %zu counter %zu", d, i);
			cr_assert_eq(ds.v[d].base[i], start[d][i]);
		}
	}
	cr_assert_gt(sum[0][0], 0);
	cr_assert_gt(sum[1][0], 0);
	t4_domains_free(&ds);
	free_list(&h.l);
}

Test(domain, unopenable_event_fails_cleanly_without_fd_leak)
{
	struct host h;
	struct t4_domain_set ds;
	int before = count_fds();

	host_init_msr(&h);
	add(&h.l, &h.msr, "tsc", 0, 0, -1);
	add_sw4(&h, 0);
	add(&h.l, &h.sw, "bogus", 0xdead, 0, -1);
	cr_assert_eq(t4_domains_build(&ds, &h.l), 0, "%s", t4_errmsg());
	int err = t4_domains_open(&ds, NULL);
	cr_assert(err == -EINVAL || err == -ENOENT || err == -EOPNOTSUPP,
		  "%d", err);
	cr_assert_str_eq(t4_errmsg(),
			 "the kernel refused software/bogus/: unsupported event, filter or modifier");
	cr_assert_eq(count_fds(), before);
	for (size_t d = 0; d < ds.n; d++)
		for (size_t i = 0; i < T4_MAX_COUNTERS; i++)
			cr_assert_eq(ds.v[d].fds[i], -1);
	t4_domains_free(&ds);
	cr_assert_eq(count_fds(), before);

	/* and a good set closes every fd it opened */
	free_list(&h.l);
	add_sw4(&h, 0);
	add(&h.l, &h.msr, "tsc", 0, 0, -1);
	open_set(&h, &ds);
	cr_assert_eq(count_fds(), before + 5);
	t4_domains_free(&ds);
	cr_assert_eq(count_fds(), before);
	free_list(&h.l);
}

Test(domain, real_pmu_without_cpu_is_refused)
{
	struct host h;
	struct t4_domain_set ds;

	host_pmus(&h); /* refused before anything is opened */
	add(&h.l, &h.sw, "cpu-clock", SW_CPU_CLOCK, -1, -1);
	cr_assert_eq(t4_domains_build(&ds, &h.l), 0, "%s", t4_errmsg());
	cr_assert_str_eq(ds.v[0].name, "software");
	cr_assert_eq(t4_domains_open(&ds, NULL), -EINVAL);
	cr_assert_str_eq(t4_errmsg(),
			 "software/cpu-clock/: no CPU to count on (the PMU has no cpumask)");
	t4_domains_free(&ds);
	free_list(&h.l);
}

static void expect_failed(struct t4_domain *d, uint64_t trig, int want_err)
{
	struct t4_ret_pkt r;

	memset(&r, 0xab, sizeof(r));
	cr_assert_eq(t4_domain_read(d, trig, &r), want_err, "%s", t4_errmsg());
	cr_assert_eq(r.flags, T4_RET_READ_FAILED);
	cr_assert_eq(r.trigger_id, trig);
	cr_assert_eq(r.domain_id, d->id);
	cr_assert_eq(r.n_counts, d->n);
	for (size_t i = 0; i < d->n; i++)
		cr_assert_eq(r.counts[i], 0);
	cr_assert_leq(r.read_begin_ns, r.read_end_ns);
	cr_assert_eq(r.enabled_delta, 0);
	cr_assert_neq(t4_errmsg()[0], '\0');
}

Test(domain, failed_read_is_flagged_and_next_read_covers_the_gap)
{
	struct host h;
	struct t4_domain_set ds;
	struct t4_ret_pkt r;
	int before = count_fds();

	host_init(&h);
	add_sw4(&h, 0);
	cr_assert_eq(t4_domains_build(&ds, &h.l), 0, "%s", t4_errmsg());
	expect_failed(&ds.v[0], 0, -EBADF); /* not open yet */
	cr_assert_eq(t4_domains_open(&ds, NULL), 0, "%s", t4_errmsg());
	struct t4_domain *d = &ds.v[0];
	read_ok(d, 1, &r);
	cr_assert_eq(r.flags, T4_RET_FIRST);

	/* swap the leader for /dev/null (short read), then a directory */
	int fd0 = d->fds[0], saved = dup(fd0);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert(saved >= 0 && null >= 0 && dir >= 0);
	cr_assert_eq(dup2(null, fd0), fd0);
	expect_failed(d, 2, -EIO);
	cr_assert_eq(dup2(dir, fd0), fd0);
	expect_failed(d, 3, -EISDIR);
	cr_assert_eq(dup2(saved, fd0), fd0);
	close(saved);
	close(null);
	close(dir);

	uint64_t prev0 = d->prev[0];
	read_ok(d, 4, &r);
	cr_assert_eq(r.flags & T4_RET_FIRST, 0);
	cr_assert_eq(r.counts[0], d->prev[0] - prev0);
	cr_assert_gt(r.counts[0], 0);
	t4_domains_free(&ds);
	cr_assert_eq(count_fds(), before);
	free_list(&h.l);
}

Test(domain, counter_going_backwards_gives_zero_and_a_flag)
{
	struct host h;
	struct t4_domain_set ds;
	struct t4_ret_pkt r;

	host_init(&h);
	add_sw4(&h, 0);
	open_set(&h, &ds);
	struct t4_domain *d = &ds.v[0];
	read_ok(d, 0, &r);
	d->prev[0] = UINT64_MAX; /* as if the counter had been higher */
	cr_assert_eq(t4_domain_read(d, 1, &r), 0);
	cr_assert_eq(r.flags & T4_RET_BACKWARDS, T4_RET_BACKWARDS);
	cr_assert_eq(r.counts[0], 0);
	cr_assert_lt(d->prev[0], UINT64_MAX); /* the new value is kept */
	spin(1);
	read_ok(d, 2, &r);
	cr_assert_gt(r.counts[0], 0);
	t4_domains_free(&ds);
	free_list(&h.l);
}

struct pinned {
	int cpu, got_cpu, err;
	uint64_t cpu_clock;
	char msg[256];
};

static void *pinned_reader(void *arg)
{
	struct pinned *p = arg;
	struct host h;
	struct t4_domain_set ds;
	struct t4_ret_pkt r = {0};
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	p->err = sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
	if (p->err)
		return NULL;
	host_init(&h);
	add_sw4(&h, p->cpu);
	p->err = t4_domains_build(&ds, &h.l);
	if (!p->err)
		p->err = t4_domains_open(&ds, NULL);
	if (!p->err && t4_domain_read_cpu(&ds.v[0]) != p->cpu)
		p->err = -EXDEV;
	if (!p->err)
		p->err = t4_domain_read(&ds.v[0], 0, &r);
	spin(3);
	if (!p->err)
		p->err = t4_domain_read(&ds.v[0], 1, &r);
	p->cpu_clock = r.counts[0];
	p->got_cpu = sched_getcpu();
	snprintf(p->msg, sizeof(p->msg), "%s", t4_errmsg());
	t4_domains_free(&ds);
	free_list(&h.l);
	return NULL;
}

Test(domain, group_read_from_a_thread_pinned_to_the_domain_cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int cpus[2] = {0, (int)ncpu - 1};

	for (int i = 0; i < 2; i++) {
		struct pinned p = {.cpu = cpus[i]};
		pthread_t t;

		cr_assert_eq(pthread_create(&t, NULL, pinned_reader, &p), 0);
		pthread_join(t, NULL);
		cr_assert_eq(p.err, 0, "cpu %d: %d %s", p.cpu, p.err, p.msg);
		cr_assert_eq(p.got_cpu, p.cpu);
		/* the reader spun 3 ms on that CPU */
		cr_assert_gt(p.cpu_clock, 0);
	}
}

Test(domain, group_values_are_mapped_by_id_not_position)
{
	struct host h;
	struct t4_domain_set ds;
	struct t4_ret_pkt r;
	uint64_t buf[3 + 2 * 4];

	host_init(&h);
	add_sw4(&h, 0);
	open_set(&h, &ds);
	struct t4_domain *d = &ds.v[0];
	group_ioctl(&ds, PERF_EVENT_IOC_DISABLE);
	spin(1);
	cr_assert_eq(read(d->fds[0], buf, sizeof(buf)), (ssize_t)sizeof(buf));
	/* pretend the kernel's 2nd and 3rd members are our 3rd and 2nd */
	uint64_t id = d->ids[1];
	d->ids[1] = d->ids[2];
	d->ids[2] = id;
	read_ok(d, 0, &r);
	cr_assert_eq(d->prev[0], buf[3]);
	cr_assert_eq(d->prev[1], buf[3 + 2 * 2]);
	cr_assert_eq(d->prev[2], buf[3 + 2 * 1]);
	cr_assert_eq(d->prev[3], buf[3 + 2 * 3]);
	cr_assert_neq(buf[3 + 2 * 1], buf[3 + 2 * 2]); /* task-clock vs ctx */

	d->ids[3] = 12345; /* an ID the kernel does not know */
	cr_assert_eq(t4_domain_read(d, 1, &r), -EPROTO);
	cr_assert_eq(r.flags, T4_RET_READ_FAILED);
	t4_domains_free(&ds);
	free_list(&h.l);
}

/* The whole path users take: discovery, the event syntax, then domains. */
Test(domain, host_events_from_the_parser_form_per_cpu_domains)
{
	struct t4_pmu_set set;
	struct t4_evlist l = {0};
	struct t4_domain_set ds;
	struct t4_ret_pkt r;

	t4t_need_perf();
	t4t_need_pmu("msr");
	cr_assert_eq(t4_pmus_discover(&set, NULL), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &set, "cpu-clock,page-faults,msr/tsc/"), 0,
		     "%s", t4_errmsg());
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(ds.n % 2, 0);
	size_t ncpu = ds.n / 2;
	cr_assert_geq(ncpu, 1);
	for (size_t i = 0; i < ds.n; i++) {
		const struct t4_domain *d = &ds.v[i];
		bool sw = i < ncpu;
		char want[T4_NAME_MAX];

		snprintf(want, sizeof(want), "%s@cpu%d", sw ? "software" : "msr", d->cpu);
		cr_assert_str_eq(d->name, want);
		cr_assert_eq(d->kind, sw ? T4_DOM_SOFTWARE : T4_DOM_TSC);
		cr_assert_eq(d->n, sw ? 2 : 1);
		cr_assert_eq(d->clock_index, sw ? -1 : 0);
		cr_assert_eq(d->cpu, ds.v[i % ncpu].cpu);
	}
	cr_assert_eq(ds.v[0].cpu, 0);
	cr_assert_str_eq(ds.v[0].counters[1].name, "page-faults");
	cr_assert_eq(t4_domains_open(&ds, NULL), 0, "%s", t4_errmsg());
	for (uint64_t t = 0; t < 3; t++)
		for (size_t i = 0; i < ds.n; i++) {
			read_ok(&ds.v[i], t, &r);
			cr_assert_eq(r.flags, t ? 0 : T4_RET_FIRST);
		}
	t4_domains_free(&ds);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
}

/* Domain names are unique in a log: two CPU-less PMUs whose names share
 * more than the 48 bytes that fit before "@cpuN" (tests/fixtures/sysfs/
 * long_names: ..._number_0_a, ..._number_0_b, and a third whose whole name
 * is that common prefix) got one name each per CPU; the cut ones are now
 * marked with the CRC32C of their whole name, the short one keeps its own. */
Test(domain, long_pmu_names_give_unique_domain_names)
{
	static const char prefix[] = "acme_coherent_fabric_performance_monitoring_unit";
	struct t4_pmu_set set;
	struct t4_evlist l = { .target = { .cpus = "0-1" } };
	struct t4_domain_set ds;
	char want[T4_NAME_MAX];

	cr_assert_eq(t4_pmus_discover(&set, SYSFS_FIX "long_names"), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &set, "acme_*/clock/"), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(ds.n, 6);
	for (size_t i = 0; i < ds.n; i++) {
		const char *pmu = ds.v[i].counters[0].pmu->name;
		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(ds.v[i].name, ds.v[j].name);
		if (!strcmp(pmu, prefix))
			snprintf(want, sizeof(want), "%s@cpu%d", prefix, ds.v[i].cpu);
		else
			snprintf(want, sizeof(want), "%.49s~%08x@cpu%d", pmu,
				 t4_crc32c(0, pmu, strlen(pmu)), ds.v[i].cpu);
		cr_assert_str_eq(ds.v[i].name, want);
		cr_assert_leq(strlen(ds.v[i].name), T4_NAME_MAX - 1);
	}
	t4_domains_free(&ds);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
}

/* A name that fits but repeats an earlier domain's (a PMU named "x@cpu0"
 * beside a CPU-less "x" on CPU 0) is marked as a cut one; a source domain
 * of a taken name is refused. */
Test(domain, a_repeated_name_is_marked)
{
	struct t4_pmu a, b;
	struct t4_evlist l = { 0 };
	struct t4_domain_set ds;
	struct t4_domain *src;
	const struct t4_domain_source none = { 0 };
	char want[T4_NAME_MAX];

	make_pmu(&a, "x@cpu0", 1, NULL, 0);
	make_pmu(&b, "x", 1, NULL, -1);
	add(&l, &a, "cpu-clock", 0, 0, -1);
	add(&l, &b, "cpu-clock", 0, 0, -1);
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(ds.n, 2);
	cr_assert_str_eq(ds.v[0].name, "x@cpu0");
	snprintf(want, sizeof(want), "x~%08x@cpu0", t4_crc32c(0, "x", 1));
	cr_assert_str_eq(ds.v[1].name, want);
	cr_assert_eq(t4_domains_add_source(&ds, "x@cpu0", T4_DOM_DRM, &none, &src), -EEXIST);
	cr_assert(strstr(t4_errmsg(), "x@cpu0: a clock domain of this name"), "%s", t4_errmsg());
	t4_domains_free(&ds);
	free_list(&l);
}

/* A long name is cut between UTF-8 characters, never inside one. */
Test(domain, a_cut_name_stays_utf8)
{
	struct t4_pmu a;
	struct t4_evlist l = { 0 };
	struct t4_domain_set ds;
	char name[T4_NAME_MAX] = "";

	for (int i = 0; i < 31; i++)
		strcat(name, "\xc3\xa9"); /* e acute */
	make_pmu(&a, name, 1, NULL, -1);
	add(&l, &a, "cpu-clock", 0, 0, -1);
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	const char *tilde = strchr(ds.v[0].name, '~');
	cr_assert_not_null(tilde, "%s", ds.v[0].name);
	cr_assert_eq((tilde - ds.v[0].name) % 2, 0, "%s", ds.v[0].name); /* whole pairs */
	cr_assert_leq(strlen(ds.v[0].name), T4_NAME_MAX - 1);
	t4_domains_free(&ds);
	free_list(&l);
}

/* Simulated PMUs: no fds, read through the simulator, checked against its
 * analytic ground truth: each raw value was taken at a true instant inside
 * the packet's read window. */
Test(domain, simulated_domain_reads_match_ground_truth)
{
	struct t4_sim *sim;
	struct t4_pmu_set set;
	struct t4_evlist l = {0};
	struct t4_domain_set ds;
	struct t4_ret_pkt r;
	int before = count_fds();

	cr_assert_eq(t4_sim_create(&sim, 7, NULL), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_pmus_discover(&set, t4_sim_root(sim)), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &set,
				     "nvidia_ucf_pmu_0/mem_bytes_rd/,nvidia_ucf_pmu_0/cycles/"),
		     0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(ds.n, 1);
	struct t4_domain *d = &ds.v[0];
	const struct t4_pmu *pmu = d->counters[0].pmu;
	cr_assert_str_eq(d->name, "nvidia_ucf_pmu_0");
	cr_assert_eq(d->kind, T4_DOM_UCF);
	cr_assert_eq(d->clock_index, 0);
	cr_assert_str_eq(d->counters[0].name, "cycles");
	cr_assert_eq(t4_domain_read_cpu(d), pmu->cpu);
	cr_assert_geq(pmu->cpu, 0);

	cr_assert_eq(t4_domains_open(&ds, NULL), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "nvidia_ucf_pmu_0: simulated PMU but no simulator");
	cr_assert_eq(t4_domains_open(&ds, sim), 0, "%s", t4_errmsg());
	cr_assert_eq(d->nominal_hz, t4_sim_nominal_hz(sim, pmu));
	cr_assert_gt(d->nominal_hz, 0);
	cr_assert_eq(count_fds(), before);

	uint64_t prev_clock = 0;
	for (uint64_t t = 0; t < 4; t++) {
		read_ok(d, t, &r);
		cr_assert_eq(r.flags, t ? 0 : T4_RET_FIRST);
		cr_assert_leq(t4_sim_clock_at(sim, pmu, r.read_begin_ns), r.local_clock);
		cr_assert_geq(t4_sim_clock_at(sim, pmu, r.read_end_ns), r.local_clock);
		cr_assert_leq(t4_sim_value_at(sim, &d->counters[1], r.read_begin_ns),
			      d->prev[1]);
		cr_assert_geq(t4_sim_value_at(sim, &d->counters[1], r.read_end_ns),
			      d->prev[1]);
		if (t)
			cr_assert_eq(r.counts[0], r.local_clock - prev_clock);
		prev_clock = r.local_clock;
		usleep(2000);
	}
	cr_assert_gt(r.counts[0], 0);
	t4_domains_free(&ds);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
	t4_sim_free(sim);
}

/* PCIE members inherit the leader's BDF filter in the kernel: the cycles
 * leader must carry the members' BDF filter (and no root-port mask). */
Test(domain, pcie_leader_takes_member_bdf_filter)
{
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };
	struct t4_domain_set ds;

	cr_assert_eq(t4_pmus_discover(&set, "tests/fixtures/sysfs/t410"), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &set,
				     "{nvidia_pcie_pmu_0_rc_4/rd_bytes,src_bdf=0x0180,src_bdf_en=0x1/,"
				     "nvidia_pcie_pmu_0_rc_4/cycles/}"), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(ds.n, 1);
	cr_assert_eq(ds.v[0].clock_index, 0);
	cr_assert_str_eq(ds.v[0].counters[0].name, "cycles");
	cr_assert_eq(ds.v[0].counters[0].config1, 0x1018000);
	cr_assert_eq(ds.v[0].counters[1].config1, 0x1018000);
	t4_domains_free(&ds);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
}

/* Back-to-back reads of a simulated domain (closer together than its read
 * jitter) never go backwards, and what they add up to is the simulator's
 * ground truth: nothing counted twice. */
Test(domain, sim_back_to_back_reads_stay_monotonic)
{
	struct t4_sim *sim;
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };
	struct t4_domain_set ds;
	struct t4_ret_pkt p;
	uint64_t sum[2] = { 0, 0 };

	cr_assert_eq(t4_sim_create(&sim, 5, NULL), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_pmus_discover(&set, t4_sim_root(sim)), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &set, "nvidia_cmem_latency_pmu_0/rd_req/,"
					       "nvidia_cmem_latency_pmu_0/cycles/"), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_open(&ds, sim), 0, "%s", t4_errmsg());
	struct t4_domain *d = &ds.v[0];
	for (int i = 0; i < 20000; i++) {
		cr_assert_eq(t4_domain_read(d, (uint64_t)i, &p), 0);
		cr_assert_eq(p.flags & T4_RET_BACKWARDS, 0, "read %d went backwards", i);
		for (size_t c = 0; c < d->n; c++)
			sum[c] += p.counts[c];
	}
	for (size_t c = 0; c < d->n; c++) {
		cr_assert_eq(d->prev[c], t4_sim_value_at(sim, &d->counters[c], d->prev_true_ns));
		cr_assert_eq(sum[c], d->prev[c] - d->base[c]);
	}
	t4_domains_free(&ds);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
	t4_sim_free(sim);
}

/* A return packet lost to a full ring is taken back (t4_domain_unread):
 * the next packet's deltas then cover both intervals, so the counts of
 * the dropped packet are carried, never lost (docs/FORMAT.md 4.7). */
Test(domain, unread_carries_counts_into_the_next_packet)
{
	struct t4_sim *sim;
	struct t4_pmu_set set;
	struct t4_evlist l = {0};
	struct t4_domain_set ds;
	struct t4_ret_pkt r0, r1, r2;

	cr_assert_eq(t4_sim_create(&sim, 11, NULL), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_pmus_discover(&set, t4_sim_root(sim)), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &set, "nvidia_ucf_pmu_0/mem_bytes_rd/"), 0, "%s",
		     t4_errmsg());
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_open(&ds, sim), 0, "%s", t4_errmsg());
	struct t4_domain *d = &ds.v[0];

	read_ok(d, 0, &r0);
	usleep(1000);
	read_ok(d, 1, &r1);
	t4_domain_unread(d); /* r1 was dropped */
	t4_domain_unread(d); /* a second call changes nothing */
	usleep(1000);
	read_ok(d, 2, &r2);
	cr_assert_eq(r2.flags, 0);
	for (size_t i = 0; i < d->n; i++)
		cr_assert_eq(r2.counts[i],
			     t4_sim_value_at(sim, &d->counters[i], d->prev_true_ns) -
			     d->base[i], "counter %zu: %" PRIu64, i, r2.counts[i]);
	t4_domains_free(&ds);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
	t4_sim_free(sim);
}

/* A read at a chosen instant (virtual time): the sample is the model's at
 * exactly that instant, the window is the one given, deltas and the FIRST
 * flag are those of t4_domain_read, and a read taken back with
 * t4_domain_unread is carried by the next one. */
Test(domain, read_at_samples_the_chosen_instant)
{
	struct t4_sim *sim;
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };
	struct t4_domain_set ds;
	struct t4_ret_pkt r;
	const uint64_t ms = 1000000;

	cr_assert_eq(t4_sim_create(&sim, 17, NULL), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_pmus_discover(&set, t4_sim_root(sim)), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_events_parse(&l, &set, "nvidia_pcie_pmu_1_rc_4/rd_bytes/,"
					       "nvidia_pcie_pmu_1_rc_4/rd_cum_outs/,"
					       "nvidia_pcie_pmu_1_rc_4/cycles/"), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_open(&ds, sim), 0, "%s", t4_errmsg());
	struct t4_domain *d = &ds.v[0];
	cr_assert_eq(t4_domain_sim(d), sim);
	uint64_t e = t4_sim_epoch(sim), prev[3] = { 0 };
	for (uint64_t k = 0; k < 50; k++) {
		uint64_t t = e + 5 * ms + k * 7 * ms + k % 3 * 1234;

		cr_assert_eq(t4_domain_read_at(d, k, t, t - 100 - k, t + 900, &r), 0, "%s",
			     t4_errmsg());
		cr_assert_eq(r.trigger_id, k);
		cr_assert_eq(r.domain_id, d->id);
		cr_assert_eq(r.read_begin_ns, t - 100 - k);
		cr_assert_eq(r.read_end_ns, t + 900);
		cr_assert_eq(r.flags, k ? 0 : T4_RET_FIRST);
		cr_assert_eq(r.local_clock, t4_sim_clock_at(sim, d->counters[0].pmu, t));
		for (size_t c = 0; c < d->n; c++) {
			uint64_t v = t4_sim_value_at(sim, &d->counters[c], t);

			cr_assert_eq(r.counts[c], k ? v - prev[c] : 0, "counter %zu", c);
			if (k != 20) /* trigger 20's packet is "dropped" below */
				prev[c] = v;
		}
		if (k == 20)
			t4_domain_unread(d);
		if (k == 21)
			cr_assert_gt(r.counts[1], 0);
	}
	/* refused: outside the window, back in time, not simulated */
	uint64_t t = e + 2000 * ms;
	cr_assert_eq(t4_domain_read_at(d, 50, t, t + 1, t + 2, &r), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "outside its read window"), "%s", t4_errmsg());
	cr_assert_eq(t4_domain_read_at(d, 50, e + ms, e + ms, e + ms, &r), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "before the previous"), "%s", t4_errmsg());
	t4_domains_free(&ds);
	t4_evlist_free(&l);
	t4_pmus_free(&set);
	t4_sim_free(sim);

	struct host h;
	host_init(&h);
	add_sw4(&h, 0);
	open_set(&h, &ds);
	cr_assert_null(t4_domain_sim(&ds.v[0]));
	cr_assert_eq(t4_domain_read_at(&ds.v[0], 0, 10, 5, 20, &r), -EINVAL);
	cr_assert(strstr(t4_errmsg(), "software@cpu0: a read at a chosen instant needs a simulated domain"),
		  "%s", t4_errmsg());
	t4_domains_free(&ds);
	free_list(&h.l);
}
