/* test_trigger.c - the trigger grid, and the two trigger paths against it.
 *
 * First the epoch arithmetic of bpf/trigger.h on its own (the BPF timers
 * and the user-space monitors run the same code, so this fixes what trigger
 * ID each CPU derives for which instant). Then both paths on this machine's
 * real PMUs, checked through their logs: trigger IDs on the grid on every
 * CPU, cpu-clock deltas equal to the intervals' lengths, and the BPF path
 * against the user path on the same counters over the same window
 * (commands and bookmarks on both paths: test_sched.c). BPF tests skip,
 * saying why, only
 * where the kernel cannot run the program (sched_testutil.h); the bounds
 * checked are the design's (a sample is never before its grid point, an
 * interval's count equals its length within the read windows), not speed.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>

#include "bpf/bpf.h"
#include "sched_testutil.h"

/* ---- the epoch arithmetic ------------------------------------------------------ */

/* The first epoch: the grid's origin t0 = 1000, period 100. */
static struct t4_epoch first_epoch(uint32_t mode, uint64_t end)
{
	return (struct t4_epoch){ .gen = 1, .id0 = 0, .t_c = 1000, .t0 = 1000, .period = 100,
				  .end = end, .mode = mode, .flags0 = 1, .grid_flags = 2,
				  .end_flags = 8 };
}

/* A command's epoch opened at t after e. */
static struct t4_epoch command_at(const struct t4_epoch *e, uint64_t t, uint32_t mode)
{
	struct t4_epoch n = *e;

	n.gen = e->gen + 1;
	n.id0 = t4_epoch_next_id(e, t);
	n.t_c = t;
	n.mode = mode;
	n.flags0 = 4;
	return n;
}

static void expect_due(const struct t4_epoch *e, uint64_t now, uint64_t id, uint64_t ns,
		       uint32_t flags, uint32_t final)
{
	struct t4_point p;

	cr_assert(t4_epoch_due(e, now, &p), "nothing due at %lu", (unsigned long)now);
	cr_expect_eq(p.id, id, "at %lu: id %lu, want %lu", (unsigned long)now,
		     (unsigned long)p.id, (unsigned long)id);
	cr_expect_eq(p.ns, ns, "at %lu: point %lu, want %lu", (unsigned long)now,
		     (unsigned long)p.ns, (unsigned long)ns);
	cr_expect_eq(p.flags, flags);
	cr_expect_eq(p.final, final);
}

Test(trigger, ids_are_grid_indexes)
{
	struct t4_epoch e = first_epoch(T4_EP_FIRE0 | T4_EP_PERIODIC, 0);
	struct t4_point p;

	cr_assert_not(t4_epoch_due(&e, 999, &p), "due before the origin");
	expect_due(&e, 1000, 0, 1000, 1, 0);
	expect_due(&e, 1099, 0, 1000, 1, 0);
	expect_due(&e, 1100, 1, 1100, 2, 0);
	expect_due(&e, 1550, 5, 1500, 2, 0); /* late: the point due now */
	cr_assert_eq(t4_epoch_next(&e, 1550), 1600);
	cr_assert_eq(t4_epoch_next(&e, 1600), 1700);
	cr_assert_eq(t4_epoch_next_id(&e, 1550), 6);
}

/* The baseline (point 0 of the first epoch) is answered however late; any
 * other late point gives way to the one due now. */
Test(trigger, the_baseline_is_answered_however_late)
{
	struct t4_epoch e = first_epoch(T4_EP_FIRE0 | T4_EP_PERIODIC, 0);
	struct t4_epoch single = command_at(&e, 1550, T4_EP_FIRE0 | T4_EP_PERIODIC);
	struct t4_point p;

	cr_assert(t4_epoch_answer(&e, 1550, 0, &p));
	cr_assert_eq(p.id, 0);
	cr_assert_eq(p.ns, 1000);
	cr_assert(t4_epoch_answer(&e, 1550, 1, &p));
	cr_assert_eq(p.id, 5);
	cr_assert_not(t4_epoch_answer(&e, 1550, 6, &p), "answered twice");
	cr_assert(t4_epoch_answer(&single, 1650, 0, &p));
	cr_assert_eq(p.id, 7, "only the first epoch's point 0 is the baseline");
}

/* A command takes the next ID after every point before it; the grid goes
 * on at its old instants, one ID further. */
Test(trigger, commands_take_the_next_ids)
{
	struct t4_epoch e = first_epoch(T4_EP_FIRE0 | T4_EP_PERIODIC, 0);
	struct t4_epoch single = command_at(&e, 1550, T4_EP_FIRE0 | T4_EP_PERIODIC);

	expect_due(&single, 1550, 6, 1550, 4, 0);
	expect_due(&single, 1599, 6, 1550, 4, 0);
	expect_due(&single, 1600, 7, 1600, 2, 0);
	expect_due(&single, 2010, 11, 2000, 2, 0);
	/* stop periodic: nothing fires, the next command reuses the ID */
	struct t4_epoch stop = command_at(&single, 1620, 0);
	struct t4_point p;
	cr_assert_eq(stop.id0, 8);
	cr_assert_not(t4_epoch_due(&stop, 5000, &p));
	cr_assert_eq(t4_epoch_next(&stop, 1620), 0, "a stopped grid sleeps until a command");
	cr_assert_eq(t4_epoch_next_id(&stop, 5000), 8);
	/* one trigger while stopped, then start again: IDs 8, 9, then the grid */
	struct t4_epoch one = command_at(&stop, 5000, T4_EP_FIRE0);
	expect_due(&one, 9000, 8, 5000, 4, 0);
	cr_assert_eq(t4_epoch_next(&one, 5000), 0);
	struct t4_epoch start = command_at(&one, 9050, T4_EP_FIRE0 | T4_EP_PERIODIC);
	expect_due(&start, 9050, 9, 9050, 4, 0);
	expect_due(&start, 9100, 10, 9100, 2, 0);
	/* the final trigger */
	struct t4_epoch fin = command_at(&start, 9420, T4_EP_FIRE0 | T4_EP_FINAL0);
	cr_assert_eq(fin.id0, 14);
	expect_due(&fin, 9999, 14, 9420, 4, 1);
}

/* --duration: the end is the last point, on the grid or between two. */
Test(trigger, the_end_is_the_final_point)
{
	struct t4_epoch on = first_epoch(T4_EP_FIRE0 | T4_EP_PERIODIC, 2000);
	struct t4_epoch off = first_epoch(T4_EP_FIRE0 | T4_EP_PERIODIC, 2050);
	struct t4_epoch paused = first_epoch(T4_EP_FIRE0, 2050);

	expect_due(&on, 1999, 9, 1900, 2, 0);
	expect_due(&on, 2000, 10, 2000, 8, 1); /* the grid index, final */
	expect_due(&on, 3000, 10, 2000, 8, 1);
	cr_assert_eq(t4_epoch_next(&on, 1950), 2000);
	cr_assert_eq(t4_epoch_next(&on, 2000), 0);
	cr_assert_eq(t4_epoch_next(&off, 2000), 2050);
	expect_due(&off, 2050, 11, 2050, 8, 1);
	expect_due(&paused, 1500, 0, 1000, 1, 0);
	expect_due(&paused, 2050, 1, 2050, 8, 1);
	cr_assert_eq(t4_epoch_next(&paused, 1500), 2050);
	/* a command before the end keeps the end */
	struct t4_epoch single = command_at(&on, 1550, T4_EP_FIRE0 | T4_EP_PERIODIC);
	expect_due(&single, 2000, 11, 2000, 8, 1);
}

/* ---- both paths on the grid ------------------------------------------------------- */

#define PERIOD 1000000ull

/* The grid's origin on CLOCK_MONOTONIC: every periodic point k is at
 * t0 + k * period. On the BPF path the reference packets carry their
 * points exactly; on the user path they carry when the scheduler's thread
 * read its clocks, never before its point and (a late thread answers the
 * point due when it read them, sched/monitor.c) less than a period after
 * it, however long it was preempted after it woke. */
static uint64_t grid_origin(const struct readback *rb, bool bpf)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t n = 0;

	for (size_t i = 0; i < rb->n_refs; i++) {
		const struct t4_ref_pkt *r = &rb->refs[i];
		if (!(r->flags & T4_REF_PERIODIC) || r->flags & T4_REF_COMMAND)
			continue;
		uint64_t base = r->mono_ns - r->trigger_id * PERIOD;
		lo = base < lo ? base : lo;
		hi = base > hi ? base : hi;
		n++;
	}
	cr_assert_gt(n, 100, "%zu periodic reference packets", n);
	if (bpf)
		cr_assert_eq(lo, hi, "BPF reference packets off the grid by %lu ns",
			     (unsigned long)(hi - lo));
	else
		cr_assert_lt(hi - lo, PERIOD, "scheduler woke %lu ns apart on the grid",
			     (unsigned long)(hi - lo));
	return lo;
}

/* Every return of every domain: IDs increase, and the sample is taken at
 * or after its trigger's grid point and before the point after next (the
 * CPU answers the point due when it woke; only the baseline, trigger 0, is
 * answered however late). Returns the CPUs seen. */
static int check_returns_on_grid(const struct rec *r, const struct readback *rb, bool bpf,
				 uint64_t t0)
{
	uint64_t cpus = 0;

	for (size_t d = 0; d < r->c.ds.n; d++) {
		uint64_t prev = UINT64_MAX, prev_begin = 0;
		size_t n = 0;
		for (size_t i = 0; i < rb->n_rets; i++) {
			const struct t4_ret_pkt *p = &rb->rets[i];
			const struct t4_ref_pkt *ref = ref_with_id(rb, p->trigger_id);
			if (p->domain_id != r->c.ds.v[d].id)
				continue;
			cr_assert(prev == UINT64_MAX || p->trigger_id > prev, "%s: trigger %lu after %lu",
				  r->c.ds.v[d].name, (unsigned long)p->trigger_id, (unsigned long)prev);
			prev = p->trigger_id;
			n++;
			if (!ref || !(ref->flags & T4_REF_PERIODIC) || (ref->flags & T4_REF_COMMAND))
				continue;
			/* the read's start on CLOCK_MONOTONIC */
			uint64_t begin = bpf ? p->read_begin_ns
					     : p->read_begin_ns + (ref->mono_ns - ref->ref_ns);
			uint64_t point = t0 + p->trigger_id * PERIOD;
			cr_assert_geq(begin + (bpf ? 0 : 50000), point,
				      "%s: trigger %lu read %ld ns before its grid point", r->c.ds.v[d].name,
				      (unsigned long)p->trigger_id, (long)(point - begin));
			/* no upper bound in time: a monitor preempted between its
			 * wake-up and its read (a loaded 2-CPU machine: 3.8 ms
			 * seen) reads late; the reads of a domain stay in order */
			cr_assert(begin > prev_begin, "%s: trigger %lu read before the one before",
				  r->c.ds.v[d].name, (unsigned long)p->trigger_id);
			prev_begin = begin;
		}
		cr_assert_gt(n, 100, "%s: %zu returns", r->c.ds.v[d].name, n);
		cpus |= 1ull << (r->c.ds.v[d].cpu & 63);
	}
	return __builtin_popcountll(cpus);
}

static void ids_on_the_grid(enum t4_trigger_path path)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;
	bool bpf = path == T4_TRIGGER_BPF;

	rec_open(&r, "cpu-clock,msr/tsc/", false, PERIOD, false, false, path);
	sleep_ms(500);
	rec_close(&r, &st);
	read_back(r.path, &rb);
	cr_assert_eq(st.bpf, bpf);
	uint64_t t0 = grid_origin(&rb, bpf);
	/* the BPF path's reference clock is MONOTONIC: the (MONOTONIC,
	 * reference) pairs a decoder converts slices with are the identity */
	for (size_t i = 0; bpf && i < rb.n_refs; i++)
		cr_assert_eq(rb.refs[i].mono_ns, rb.refs[i].ref_ns, "trigger %lu",
			     (unsigned long)rb.refs[i].trigger_id);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int cpus = check_returns_on_grid(&r, &rb, bpf, t0);
	cr_assert_eq(cpus, ncpu > 64 ? 64 : ncpu, "returns from %d CPUs of %ld", cpus, ncpu);
	rec_free(&r, &rb);
}

TEST_BOTH_PATHS(trigger, ids_on_the_grid_on_every_cpu, ids_on_the_grid, .timeout = 30)

/* ---- counts against time ----------------------------------------------------------- */

/* A CPU-wide cpu-clock counts elapsed time, busy or idle: each interval's
 * count is the time between the two reads. Each read happened somewhere
 * inside its window, so the count may differ from the distance between the
 * windows' starts by the two windows, plus 1 us. The kernel's cpu-clock
 * follows local_clock(), which in a VM wanders from CLOCK_MONOTONIC by a
 * few us between ticks now and then (measured here: 1 interval in 1,000
 * off by 2-3 us beyond its windows; under ASan on a busy CI machine one
 * by 10.3 us): so 99% of the intervals are held to 1 us, every one to a
 * tenth of the period (what this guards against, a lost or doubled
 * interval, is a whole period: 1,000 us), and
 * the sum of all of them to the recording's span within 10 us plus 500
 * ppm (local_clock() and the reference clock may run at slightly
 * different rates: measured here up to 41 ppm; NTP may slew MONOTONIC by
 * up to 500 ppm). */
static void cpu_clock_is_the_interval(enum t4_trigger_path path)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;
	size_t checked = 0, over = 0;
	int64_t worst = 0;

	rec_open(&r, "cpu-clock", false, PERIOD, false, false, path);
	sleep_ms(500);
	rec_close(&r, &st);
	read_back(r.path, &rb);
	for (size_t d = 0; d < r.c.ds.n; d++) {
		const struct t4_ret_pkt *prev = NULL, *first = NULL;
		int64_t sum = 0;
		for (size_t i = 0; i < rb.n_rets; i++) {
			const struct t4_ret_pkt *p = &rb.rets[i];
			if (p->domain_id != r.c.ds.v[d].id)
				continue;
			cr_assert_eq(p->flags & T4_RET_READ_FAILED, 0);
			if (prev) {
				int64_t dev = (int64_t)p->counts[0] -
					      (int64_t)(p->read_begin_ns - prev->read_begin_ns);
				int64_t slack = (int64_t)(p->read_end_ns - p->read_begin_ns +
							  prev->read_end_ns - prev->read_begin_ns);
				over += llabs(dev) > 1000 + slack;
				worst = llabs(dev) - slack > worst ? llabs(dev) - slack : worst;
				sum += (int64_t)p->counts[0];
				checked++;
			} else {
				first = p;
			}
			prev = p;
		}
		cr_assert_not_null(prev);
		int64_t span = (int64_t)(prev->read_begin_ns - first->read_begin_ns);
		int64_t slack = (int64_t)(prev->read_end_ns - prev->read_begin_ns +
					  first->read_end_ns - first->read_begin_ns);
		slack += span / 2000;
		cr_assert_leq(llabs(sum - span), 10000 + slack, "%s: %ld ns counted in %ld ns",
			      r.c.ds.v[d].name, (long)sum, (long)span);
	}
	cr_assert_gt(checked, 500);
	cr_assert_leq(over, checked / 100, "%zu of %zu intervals: cpu-clock off its length "
		      "by more than 1 us + the read windows", over, checked);
	cr_assert_leq(worst, (int64_t)(PERIOD / 10), "an interval off by %ld ns beyond its "
		      "read windows", (long)worst);
	rec_free(&r, &rb);
}

TEST_BOTH_PATHS(trigger, cpu_clock_counts_each_interval, cpu_clock_is_the_interval, .timeout = 30)

/* ---- the two paths against each other ------------------------------------------------ */

/* One domain's counter as a function of time: (CLOCK_MONOTONIC of the
 * read's middle, cumulative count, half the read window) per return. */
struct series {
	double t[4096], c[4096], half[4096];
	size_t n;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The user path's RAW -> MONOTONIC offset at a reference packet: the median
 * of mono_ns - ref_ns over it and its 4 neighbours each side. The scheduler
 * pairs the clocks by the closest of up to 3 bracketed reads
 * (sched_ref_and_mono); a thread preempted in all three (a busy CI
 * machine: 32 us seen, when it read them once) would still put one
 * packet's offset off; the median drops such packets and still follows a
 * slewing CLOCK_MONOTONIC. */
static int64_t mono_offset(const struct readback *rb, const struct t4_ref_pkt *ref)
{
	size_t i = (size_t)(ref - rb->refs), lo = i >= 4 ? i - 4 : 0, n = 0;
	int64_t v[9];

	for (size_t j = lo; j < rb->n_refs && j <= i + 4; j++)
		v[n++] = (int64_t)(rb->refs[j].mono_ns - rb->refs[j].ref_ns);
	qsort(v, n, sizeof(v[0]), cmp_i64);
	return v[n / 2];
}

static void series_of(const struct readback *rb, uint32_t dom, size_t counter, bool bpf,
		      struct series *s)
{
	double cum = 0;
	int64_t off = 0;

	s->n = 0;
	for (size_t i = 0; i < rb->n_rets && s->n < 4096; i++) {
		const struct t4_ret_pkt *p = &rb->rets[i];
		const struct t4_ref_pkt *ref = ref_with_id(rb, p->trigger_id);
		if (p->domain_id != dom)
			continue;
		if (!bpf && ref)
			off = mono_offset(rb, ref); /* RAW -> MONOTONIC */
		s->half[s->n] = (double)(p->read_end_ns - p->read_begin_ns) / 2;
		cum += (double)p->counts[counter];
		s->t[s->n] = (double)p->read_begin_ns + s->half[s->n] + (double)off;
		s->c[s->n++] = cum;
	}
}

/* The cumulative count at time x, linear between the two samples around
 * it; *half gets their half windows (how far off x their reads may be). */
static double at(const struct series *s, double x, double *half)
{
	for (size_t i = 1; i < s->n; i++)
		if (s->t[i] >= x) {
			*half += fmax(s->half[i - 1], s->half[i]);
			return s->c[i - 1] + (s->c[i] - s->c[i - 1]) * (x - s->t[i - 1]) /
						     (s->t[i] - s->t[i - 1]);
		}
	return s->c[s->n - 1];
}

static const struct t4_domain *domain_named(const struct rec *r, const char *name)
{
	for (size_t i = 0; i < r->c.ds.n; i++)
		if (!strcmp(r->c.ds.v[i].name, name))
			return &r->c.ds.v[i];
	cr_assert_fail("no domain %s", name);
	return NULL;
}

/* Both paths record the same counters at the same time, each with its own
 * perf events. Over their common window, each counter's total is the same
 * on both within what the reads' timing allows, at the counter's own rate:
 * the windows of the samples around the window's ends (where in them the
 * counters were read), plus 5 us (local_clock() wander in a VM, the
 * RAW-to-MONOTONIC mapping of the user path, see mono_offset()). Measured
 * here: 20-800 ns or ticks apart out of 0.6 s. */
Test(trigger, bpf_and_user_paths_count_the_same, .timeout = 30)
{
	static struct series su, sk;
	struct rec u, k;
	struct readback ru, rk;
	struct t4_sched_status st;
	size_t compared = 0;

	t4t_need_bpf_trigger();
	rec_open(&u, "cpu-clock,msr/tsc/", false, PERIOD, false, false, T4_TRIGGER_USER);
	rec_open(&k, "cpu-clock,msr/tsc/", false, PERIOD, false, false, T4_TRIGGER_BPF);
	sleep_ms(600);
	rec_close(&k, &st);
	cr_assert(st.bpf);
	rec_close(&u, &st);
	read_back(u.path, &ru);
	read_back(k.path, &rk);
	for (size_t d = 0; d < u.c.ds.n; d++) {
		const struct t4_domain *du = &u.c.ds.v[d], *dk = domain_named(&k, du->name);
		for (size_t c = 0; c < du->n; c++) {
			series_of(&ru, du->id, c, false, &su);
			series_of(&rk, dk->id, c, true, &sk);
			cr_assert_gt(su.n, 100);
			cr_assert_gt(sk.n, 100);
			double a = fmax(su.t[0], sk.t[0]) + 2e6, b = fmin(su.t[su.n - 1], sk.t[sk.n - 1]) - 2e6;
			cr_assert_gt(b - a, 3e8, "common window %.0f ns", b - a);
			double half = 0, tu = at(&su, b, &half) - at(&su, a, &half);
			double tk = at(&sk, b, &half) - at(&sk, a, &half);
			double rate = tu / (b - a), tol = rate * (half + 5000);
			cr_assert_leq(fabs(tu - tk), tol, "%s/%s over %.0f ns: user %.0f, bpf %.0f "
				      "(tolerance %.0f)", du->name, du->counters[c].name, b - a, tu, tk, tol);
			compared++;
		}
	}
	cr_assert_geq(compared, 2);
	rec_free(&u, &ru);
	rec_free(&k, &rk);
}
