/* test_sched.c - the central scheduler on this machine's real PMUs and on
 * the simulated Tegra410, checked through the log it writes.
 *
 * Each test records through the public APIs (collector -> sched -> packets)
 * into a temporary log and reads it back with the reader, so what is
 * checked is what a user's log holds.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched/sched_internal.h"
#include "sched_testutil.h"
#include "tmpdir_testutil.h"

/* ---- histogram -------------------------------------------------------- */

Test(sched, hist_quantiles)
{
	struct t4_hist *h = calloc(1, sizeof(*h));

	for (uint64_t v = 1; v <= 10000; v++)
		t4_hist_add(h, v);
	uint64_t p50 = t4_hist_quantile(h, 0.5), p99 = t4_hist_quantile(h, 0.99);
	cr_assert(p50 >= 5000 && p50 <= 5000 * 107 / 100, "p50 %lu", (unsigned long)p50);
	cr_assert(p99 >= 9900 && p99 <= 10000, "p99 %lu", (unsigned long)p99);
	cr_assert_eq(h->max, 10000);
	cr_assert_eq(t4_hist_quantile(h, 1.0), 10000);
	free(h);
}

/* ---- real PMUs: 1 s at 1 ms ---------------------------------------------- */

static void real_pmus_one_second(enum t4_trigger_path path)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;

	rec_open(&r, "cpu-clock,context-switches,msr/tsc/", false, 1000000, false, false, path);
	sleep_ms(1000);
	rec_close(&r, &st);
	read_back(r.path, &rb);

	/* Trigger IDs are grid indexes from 0, each once: a gap is exactly the
	 * overruns the next reference packet reports. */
	qsort(rb.refs, rb.n_refs, sizeof(*rb.refs), cmp_ref);
	cr_assert_eq(rb.n_refs, st.triggers);
	cr_assert_eq(st.bpf, path == T4_TRIGGER_BPF);
	cr_assert_eq(rb.refs[0].trigger_id, rb.refs[0].overruns);
	for (size_t i = 1; i < rb.n_refs; i++)
		cr_assert_eq(rb.refs[i].trigger_id - rb.refs[i - 1].trigger_id - 1,
			     rb.refs[i].overruns, "trigger %lu", (unsigned long)rb.refs[i].trigger_id);
	/* Triggers + overruns = elapsed / period within 1%: nothing is stretched. */
	uint64_t overruns = 0;
	for (size_t i = 0; i < rb.n_refs; i++)
		overruns += rb.refs[i].overruns;
	cr_assert_eq(overruns, st.overruns);
	/* grid points from the baseline to the final trigger, on the
	 * reference clock itself (the test's own overheads do not count) */
	double expect = (double)(rb.refs[rb.n_refs - 1].ref_ns - rb.refs[0].ref_ns) / 1e6 + 1;
	cr_assert(expect > 990 && expect < 1500, "recorded for %.0f periods", expect);
	double got = (double)(rb.n_refs + overruns);
	cr_assert(got > expect * 0.99 - 2 && got < expect * 1.01 + 2,
		  "triggers %zu + overruns %lu vs %.0f expected", rb.n_refs,
		  (unsigned long)overruns, expect);
	cr_assert(rb.have_status);
	cr_assert_eq(rb.status.triggers, st.triggers);
	/* every monitor read its counters on their own CPU */
	cr_assert_eq(st.off_cpu, 0, "%lu answers read off their CPU", (unsigned long)st.off_cpu);
	cr_assert_eq(rb.status.dropped, 0);

	/* Per domain: every trigger answered once; the sum of the deltas equals
	 * the counters' change between the baseline and the final read. */
	for (size_t d = 0; d < r.c.ds.n; d++) {
		const struct t4_domain *dom = &r.c.ds.v[d];
		uint64_t sum[T4_MAX_COUNTERS] = { 0 }, answered = 0;
		uint64_t first_clock = 0, last_clock = 0, clock_sum = 0;
		for (size_t i = 0; i < rb.n_rets; i++) {
			const struct t4_ret_pkt *p = &rb.rets[i];
			if (p->domain_id != dom->id)
				continue;
			cr_assert_eq(p->n_counts, dom->n);
			cr_assert(p->read_begin_ns <= p->read_end_ns);
			if (p->flags & T4_RET_FIRST) {
				/* the baseline: trigger 0, unless a loaded machine
				 * kept the monitor off its CPU past the next one */
				first_clock = p->local_clock;
				cr_assert_leq(p->trigger_id, 2);
				for (size_t c = 0; c < p->n_counts; c++)
					cr_assert_eq(p->counts[c], 0);
			}
			if (p->trigger_id == rb.refs[rb.n_refs - 1].trigger_id)
				last_clock = p->local_clock;
			answered++;
			for (size_t c = 0; c < p->n_counts; c++)
				sum[c] += p->counts[c];
			if (dom->clock_index >= 0)
				clock_sum += p->counts[dom->clock_index];
		}
		/* A monitor that woke after the next grid point answers only the
		 * newer one (its deltas then span both intervals): under a loaded
		 * machine a few may be unanswered, never lost. */
		cr_assert(answered >= rb.n_refs * 80 / 100, "%s answered %lu of %zu",
			  dom->name, (unsigned long)answered, rb.n_refs);
		for (size_t c = 0; c < dom->n; c++)
			cr_assert_eq(sum[c], dom->prev[c] - dom->base[c], "%s counter %zu",
				     dom->name, c);
		if (dom->clock_index >= 0)
			cr_assert_eq(clock_sum, last_clock - first_clock, "%s clock", dom->name);
	}
	rec_free(&r, &rb);
}

TEST_BOTH_PATHS(sched, real_pmus_one_second, real_pmus_one_second, .timeout = 30)

/* ---- commands and bookmarks -------------------------------------------------- */

/* Paused: the baseline, three single triggers with a bookmark command
 * before each (the third repeats the first name). Each single trigger
 * returns once it fired and carries the bookmark set before it; each
 * command has its own packet, its set_ns between the triggers around it. */
static void paused_single_triggers_and_bookmarks(enum t4_trigger_path path)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;

	rec_open(&r, "cpu-clock", false, 1000000, true, false, path);
	wait_triggers(r.s, 1); /* baseline trigger 0, no bookmark */
	cr_assert_eq(t4_sched_bookmark(r.s, "alpha"), 0);
	cr_assert_eq(t4_sched_trigger(r.s), 0);
	wait_triggers(r.s, 2); /* trigger 1: alpha */
	cr_assert_eq(t4_sched_bookmark(r.s, "beta"), 0);
	cr_assert_eq(t4_sched_trigger(r.s), 0);
	wait_triggers(r.s, 3); /* trigger 2: beta */
	cr_assert_eq(t4_sched_bookmark(r.s, "alpha"), 0); /* reuses ID 1 */
	cr_assert_eq(t4_sched_trigger(r.s), 0);
	wait_triggers(r.s, 4); /* trigger 3: alpha again */
	cr_assert_lt(t4_sched_bookmark(r.s, "bad name"), 0);
	cr_assert_lt(t4_sched_bookmark(r.s, ""), 0);
	sleep_ms(20); /* paused: no periodic trigger comes */
	t4_sched_status(r.s, &st);
	cr_assert_eq(st.triggers, 4);
	cr_assert_str_eq(st.bookmark, "alpha");
	rec_close(&r, &st);
	read_back(r.path, &rb);

	cr_assert_eq(rb.n_refs, 5); /* + the final trigger */
	cr_assert_eq(ref_with_id(&rb, 0)->bookmark_id, 0);
	for (uint64_t id = 1; id <= 3; id++) {
		cr_assert_eq(ref_with_id(&rb, id)->bookmark_id, id == 2 ? 2u : 1u);
		cr_assert_eq(ref_with_id(&rb, id)->flags, T4_REF_SINGLE | T4_REF_COMMAND);
	}
	cr_assert(ref_with_id(&rb, 4)->flags & T4_REF_FINAL);
	cr_assert_eq(rb.n_bms, 3, "one bookmark packet per command");
	cr_assert_str_eq(rb.bms[0].name, "alpha");
	cr_assert_eq(rb.bms[0].bookmark_id, 1);
	cr_assert_eq(rb.bms[0].first_trigger, 1);
	cr_assert_str_eq(rb.bms[1].name, "beta");
	cr_assert_eq(rb.bms[1].first_trigger, 2);
	cr_assert_str_eq(rb.bms[2].name, "alpha");
	cr_assert_eq(rb.bms[2].bookmark_id, 1);
	cr_assert_eq(rb.bms[2].first_trigger, 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_gt(rb.bms[i].set_ns, ref_with_id(&rb, i)->ref_ns);
		cr_assert_lt(rb.bms[i].set_ns, ref_with_id(&rb, i + 1)->ref_ns);
	}
	rec_free(&r, &rb);
}

TEST_BOTH_PATHS(sched, paused_single_triggers_and_bookmarks,
		paused_single_triggers_and_bookmarks, .timeout = 30)

/* Start and stop periodic: triggers on the grid from the start command
 * on, none once stopped (checked after the BPF path's drain interval). */
static void start_stop_periodic(enum t4_trigger_path path)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;

	rec_open(&r, "cpu-clock", false, 2000000, true, false, path);
	wait_triggers(r.s, 1);
	cr_assert_eq(t4_sched_resume(r.s), 0);
	sleep_ms(100);
	cr_assert_eq(t4_sched_pause(r.s), 0);
	sleep_ms(60); /* the drain's interval: every trigger so far counted */
	t4_sched_status(r.s, &st);
	uint64_t n = st.triggers;
	cr_assert(n > 20, "only %lu triggers in 100 ms at 2 ms", (unsigned long)n);
	sleep_ms(60);
	t4_sched_status(r.s, &st);
	cr_assert_eq(st.triggers, n, "triggers fired while stopped");
	cr_assert(!st.periodic);
	rec_close(&r, &st);
	read_back(r.path, &rb);
	expect_resumed_at(&rb, 1);
	cr_assert(rb.refs[rb.n_refs - 1].flags & T4_REF_FINAL);
	rec_free(&r, &rb);
}

TEST_BOTH_PATHS(sched, start_stop_periodic, start_stop_periodic, .timeout = 30)

/* --per-socket with counters on the second socket only: one scheduler,
 * ID 1, which is then the recording's "scheduler 0": it writes the
 * bookmark packets, and a command or the final trigger waits for it
 * alone (there is no scheduler 0 without a CPU to fire it). */
Test(sched, per_socket_counters_on_socket_1_only, .timeout = 30)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;

	rec_open(&r, "nvidia_ucf_pmu_1/cycles/", true, 1000000, true, true, T4_TRIGGER_USER);
	wait_triggers(r.s, 1);
	cr_assert_eq(t4_sched_bookmark(r.s, "one"), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_sched_trigger(r.s), 0, "%s", t4_errmsg());
	rec_close(&r, &st);
	cr_assert_eq(st.schedulers, 1);
	read_back(r.path, &rb);
	cr_assert_eq(rb.n_refs, 3, "baseline, the trigger, the final one");
	for (size_t i = 0; i < rb.n_refs; i++)
		cr_assert_eq(rb.refs[i].sched_id, 1);
	cr_assert_eq(rb.n_bms, 1);
	cr_assert_eq(rb.bms[0].first_trigger, 1);
	cr_assert_eq(ref_with_id(&rb, 1)->bookmark_id, rb.bms[0].bookmark_id);
	rec_free(&r, &rb);
}

/* ---- the simulated Tegra410 against its ground truth ------------------------- */

Test(sched, sim_matches_ground_truth, .timeout = 60)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;

	rec_open(&r, NULL, true, 1000000, false, true, T4_TRIGGER_AUTO);
	sleep_ms(300);
	rec_close(&r, &st);
	read_back(r.path, &rb);
	cr_assert_eq(r.c.ds.n, 34, "one domain per simulated PMU instance");

	/* Two schedulers (one per socket), each on the 1 ms grid over the
	 * 300 ms: its last ID is the final trigger's grid point (how many
	 * points a loaded machine let it fire is luck: overruns). */
	size_t per[2] = { 0, 0 };
	uint64_t last[2] = { 0, 0 };
	for (size_t i = 0; i < rb.n_refs; i++) {
		uint32_t id = rb.refs[i].sched_id;
		cr_assert_lt(id, 2);
		per[id]++;
		if (rb.refs[i].trigger_id > last[id])
			last[id] = rb.refs[i].trigger_id;
	}
	for (int id = 0; id < 2; id++) {
		cr_assert_geq(per[id], 2, "scheduler %d: the baseline and the final trigger", id);
		cr_assert_geq(last[id], 300, "scheduler %d ended at trigger %llu", id,
			      (unsigned long long)last[id]);
	}

	/* The counter's cumulative value after each read lies between the
	 * model's values at the two ends of the read window. */
	for (size_t d = 0; d < r.c.ds.n; d++) {
		const struct t4_domain *dom = &r.c.ds.v[d];
		uint64_t cum[T4_MAX_COUNTERS];
		memcpy(cum, dom->base, sizeof(cum));
		size_t checked = 0;
		for (size_t i = 0; i < rb.n_rets; i++) {
			const struct t4_ret_pkt *p = &rb.rets[i];
			if (p->domain_id != dom->id)
				continue;
			for (size_t c = 0; c < dom->n; c++) {
				cum[c] += p->counts[c];
				uint64_t lo = t4_sim_value_at(r.c.sim, &dom->counters[c], p->read_begin_ns);
				uint64_t hi = t4_sim_value_at(r.c.sim, &dom->counters[c], p->read_end_ns);
				cr_assert(cum[c] >= lo && cum[c] <= hi,
					  "%s/%s trigger %lu: %lu not in [%lu, %lu]", dom->name,
					  dom->counters[c].name, (unsigned long)p->trigger_id,
					  (unsigned long)cum[c], (unsigned long)lo, (unsigned long)hi);
			}
			if (dom->clock_index >= 0) {
				uint64_t lo = t4_sim_clock_at(r.c.sim, dom->counters[0].pmu, p->read_begin_ns);
				uint64_t hi = t4_sim_clock_at(r.c.sim, dom->counters[0].pmu, p->read_end_ns);
				cr_assert(p->local_clock >= lo && p->local_clock <= hi);
			}
			checked++;
		}
		cr_assert_geq(checked, 2, "%s: the baseline and the final trigger at least", dom->name);
	}
	rec_free(&r, &rb);
}

/* Bookmarks set as fast as possible while triggers fire every 100 us,
 * each under its own name. Each command has its packet, in the order they
 * were set; their first triggers never go back, and the reference packet
 * of each first trigger carries the last bookmark whose first trigger it
 * is while the trigger before it does not: exactly the first trigger
 * after the command, never one too early or too late. */
static void bookmark_storm(enum t4_trigger_path path)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;
	char name[32];
	size_t checked = 0;

	rec_open(&r, "cpu-clock", false, 100000, false, false, path);
	for (int i = 0; i < 1500; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		cr_assert_eq(t4_sched_bookmark(r.s, name), 0, "%s", t4_errmsg());
		if (i % 8 == 0)
			sleep_ms(1);
	}
	rec_close(&r, &st);
	read_back(r.path, &rb);
	cr_assert_eq(rb.n_bms, 1500, "one packet per command");
	for (size_t i = 0; i < rb.n_bms; i++) {
		const struct t4_bookmark_pkt *bm = &rb.bms[i];
		const struct t4_ref_pkt *ref = ref_with_id(&rb, bm->first_trigger);
		cr_assert(i == 0 || (bm->set_ns > bm[-1].set_ns &&
				     bm->first_trigger >= bm[-1].first_trigger));
		if (!ref) {
			/* at 100 us a loaded machine may drop a reference
			 * packet (a full ring, counted): nothing to compare */
			cr_assert_gt(rb.status.dropped, 0, "%s: no trigger %lu, none dropped",
				     bm->name, (unsigned long)bm->first_trigger);
			continue;
		}
		if (i + 1 < rb.n_bms && bm[1].first_trigger == bm->first_trigger)
			continue; /* a later command reached the same trigger */
		cr_assert_eq(ref->bookmark_id, bm->bookmark_id, "trigger %lu carries %u, not %s",
			     (unsigned long)ref->trigger_id, ref->bookmark_id, bm->name);
		const struct t4_ref_pkt *prev = ref_with_id(&rb, bm->first_trigger - 1);
		cr_assert(!prev || prev->bookmark_id != bm->bookmark_id,
			  "%s carried before its first trigger", bm->name);
		checked++;
	}
	cr_assert_gt(checked, 50, "only %zu triggers carried a new bookmark", checked);
	rec_free(&r, &rb);
}

TEST_BOTH_PATHS(sched, bookmark_storm_first_triggers_exact, bookmark_storm, .timeout = 60)

/* docs/FORMAT.md 6.1: a recording ended by its duration closes with a
 * FINAL trigger that is a grid point: trigger IDs are the grid's indexes,
 * so its ID is the duration divided by the period, and the skipped grid
 * points before it are the overruns. */
static void duration_final_trigger_is_on_the_grid(enum t4_trigger_path path)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;
	struct t4_sched_opts so = { .period_ns = 2000000, .duration_ns = 60000000, .trigger = path };

	rec_open_opts(&r, "cpu-clock", false, so);
	for (int i = 0; i < 5000; i++) {
		t4_sched_status(r.s, &st);
		if (st.finished)
			break;
		sleep_ms(1);
	}
	cr_assert(st.finished, "the duration did not end the recording");
	rec_close(&r, &st);
	read_back(r.path, &rb);
	qsort(rb.refs, rb.n_refs, sizeof(*rb.refs), cmp_ref);
	const struct t4_ref_pkt *last = &rb.refs[rb.n_refs - 1];
	uint64_t overruns = 0;
	for (size_t i = 0; i < rb.n_refs; i++)
		overruns += rb.refs[i].overruns;
	cr_assert(last->flags & T4_REF_FINAL);
	cr_assert_eq(last->trigger_id, 30, "final trigger %lu", (unsigned long)last->trigger_id);
	cr_assert_eq(rb.n_refs + overruns, 31, "%zu triggers, %lu overruns", rb.n_refs,
		     (unsigned long)overruns);
	rec_free(&r, &rb);
}

TEST_BOTH_PATHS(sched, duration_final_trigger_is_on_the_grid,
		duration_final_trigger_is_on_the_grid, .timeout = 30)

/* 200 bookmark commands between two triggers (two names, alternating):
 * 200 bookmark packets, in order, each with its own set time and the next
 * trigger as first_trigger; the trigger carries the last. A command past
 * the queue's bound fails instead of vanishing; one after the end too. */
static void rapid_bookmarks_all_land(enum t4_trigger_path path)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;
	int i;

	rec_open(&r, "cpu-clock", false, 1000000, true, false, path);
	wait_triggers(r.s, 1);
	for (i = 0; i < 200; i++)
		cr_assert_eq(t4_sched_bookmark(r.s, i % 2 ? "odd" : "even"), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_sched_trigger(r.s), 0);
	wait_triggers(r.s, 2);
	for (i = 0; i < T4_BOOKMARK_QUEUE; i++)
		cr_assert_eq(t4_sched_bookmark(r.s, "fill"), 0, "%d: %s", i, t4_errmsg());
	cr_assert_eq(t4_sched_bookmark(r.s, "one_too_many"), -EBUSY);
	cr_assert(strstr(t4_errmsg(), "wait for the next trigger"), "%s", t4_errmsg());
	cr_assert_eq(t4_sched_stop(r.s), 0);
	cr_assert_eq(t4_sched_bookmark(r.s, "late"), -ESHUTDOWN);
	rec_close(&r, &st);
	read_back(r.path, &rb);

	cr_assert_eq(rb.n_bms, 200 + T4_BOOKMARK_QUEUE);
	for (i = 0; i < 200; i++) {
		cr_assert_str_eq(rb.bms[i].name, i % 2 ? "odd" : "even");
		cr_assert_eq(rb.bms[i].first_trigger, 1, "bookmark %d", i);
		cr_assert_gt(rb.bms[i].set_ns, ref_with_id(&rb, 0)->ref_ns);
		cr_assert_lt(rb.bms[i].set_ns, ref_with_id(&rb, 1)->ref_ns);
		if (i)
			cr_assert_gt(rb.bms[i].set_ns, rb.bms[i - 1].set_ns, "bookmark %d", i);
	}
	cr_assert_eq(ref_with_id(&rb, 1)->bookmark_id, rb.bms[199].bookmark_id);
	/* the 1024 "fill" commands came after trigger 1: the final trigger
	 * (2) is the first trigger after them */
	cr_assert_str_eq(rb.bms[200].name, "fill");
	cr_assert_eq(rb.bms[200].first_trigger, 2);
	rec_free(&r, &rb);
}

TEST_BOTH_PATHS(sched, rapid_bookmarks_all_land, rapid_bookmarks_all_land, .timeout = 30)

/* A ring too small for the bookmark packets of one trigger: the rest wait
 * in the queue, keep the first_trigger they were given, and go out on the
 * next trigger once the writer has made room. */
Test(sched, bookmarks_wait_out_a_full_ring, .timeout = 30)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct t4_log *log;
	struct t4_ring *ring;
	struct t4_bookmarks *b;
	struct t4_log_opts lo = { .path = path };
	struct readback rb;
	char name[16];

	t4t_tmpdir(dir, sizeof(dir), "t4bm");
	snprintf(path, sizeof(path), "%s/b.t4t", dir);
	cr_assert_eq(t4_log_open(&log, &lo), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_ring(log, 1, T4_RING_NONBLOCK, &ring), 0, "%s", t4_errmsg());
	cr_assert_eq(sched_bookmarks_new(&b, &(struct t4_bookmarks_opts){ .clock = CLOCK_MONOTONIC_RAW }),
		     0);
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		cr_assert_eq(sched_bookmarks_set(b, name), 0, "%s", t4_errmsg());
	}
	cr_assert_eq(sched_bookmarks_on_trigger(b, 5, &(struct t4_trigger_bm){ .seen = sched_bookmarks_seen(b) }, ring), 300);
	cr_assert_eq(t4_log_start(log), 0);
	for (uint64_t id = 6; id < 40; id++) { /* the writer drains meanwhile */
		sleep_ms(5);
		cr_assert_eq(sched_bookmarks_on_trigger(b, id, &(struct t4_trigger_bm){ .seen = sched_bookmarks_seen(b) },
						     ring), 300);
	}
	sched_bookmarks_close(b, 40, ring);
	cr_assert_eq(t4_log_close(log, NULL, NULL), 0, "%s", t4_errmsg());
	sched_bookmarks_free(b);
	read_back(path, &rb);
	cr_assert_eq(rb.n_bms, 300);
	for (size_t i = 0; i < rb.n_bms; i++) {
		snprintf(name, sizeof(name), "b%d", (int)i);
		cr_assert_str_eq(rb.bms[i].name, name);
		cr_assert_eq(rb.bms[i].first_trigger, 5, "%s", name);
	}
	cr_assert_eq(rb.status.dropped, 0, "a bookmark that waited is not a drop");
	free(rb.refs);
	free(rb.rets);
	free(rb.bms);
	t4_rmtree(dir);
}

/* Bookmarks timed elsewhere (libt410trace's probe: set_ns stamped in the
 * kernel, queued later by the activity drain): a trigger that read the
 * queue before one arrived, but after its set_ns, still takes it when it
 * is processed after the arrival (the BPF path's triggers are processed
 * 50 ms late); a later one's set_ns order is kept; one set after the
 * trigger looked waits for the next. */
Test(sched, timed_bookmarks_land_by_their_time, .timeout = 30)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct t4_log_opts lo = { .path = path };
	struct t4_bookmarks *b;
	struct t4_log *log;
	struct t4_ring *ring;
	struct readback rb;

	t4t_tmpdir(dir, sizeof(dir), "t4bm");
	snprintf(path, sizeof(path), "%s/b.t4t", dir);
	cr_assert_eq(t4_log_open(&log, &lo), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_ring(log, 1 << 16, T4_RING_NONBLOCK, &ring), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_start(log), 0);
	cr_assert_eq(sched_bookmarks_new(&b, &(struct t4_bookmarks_opts){ .clock = CLOCK_MONOTONIC }),
		     0);
	/* trigger 1 looked at t=1000 and saw nothing; then "early" (set at
	 * 900) and "late" (set at 1100) arrive */
	uint64_t seen = sched_bookmarks_seen(b);
	cr_assert_eq(sched_bookmarks_set_at(b, "early", 900), 0);
	cr_assert_eq(sched_bookmarks_set_at(b, "late", 1100), 0);
	cr_assert_eq(sched_bookmarks_set_at(b, "back", 1050), 0); /* before late: kept after it */
	cr_assert_eq(sched_bookmarks_on_trigger(b, 1, &(struct t4_trigger_bm){ seen, 1000, 0 }, ring),
		     1, "trigger 1 carries early");
	cr_assert_eq(sched_bookmarks_on_trigger(b, 2, &(struct t4_trigger_bm){ sched_bookmarks_seen(b),
									  2000, 0 }, ring), 3);
	sched_bookmarks_close(b, 3, ring);
	cr_assert_eq(t4_log_close(log, NULL, NULL), 0, "%s", t4_errmsg());
	sched_bookmarks_free(b);
	read_back(path, &rb);
	cr_assert_eq(rb.n_bms, 3);
	cr_assert_str_eq(rb.bms[0].name, "early");
	cr_assert_eq(rb.bms[0].first_trigger, 1);
	cr_assert_eq(rb.bms[0].set_ns, 900);
	cr_assert_str_eq(rb.bms[1].name, "late");
	cr_assert_eq(rb.bms[1].first_trigger, 2);
	cr_assert_eq(rb.bms[1].set_ns, 1100);
	cr_assert_str_eq(rb.bms[2].name, "back");
	cr_assert_eq(rb.bms[2].set_ns, 1100, "never before the one queued before it");
	cr_assert_eq(rb.bms[2].first_trigger, 2);
	free(rb.refs);
	free(rb.rets);
	free(rb.bms);
	t4_rmtree(dir);
}

/* Slots reserved for the probe's calls (taken in the kernel, answered
 * before they reach the queue) are never refused, and other commands find
 * them taken: the queue, and the table of names, refuse at the bound that
 * is left, and count each refusal. */
/* The user path pairs CLOCK_MONOTONIC_RAW and CLOCK_MONOTONIC (reference
 * packets, activity slices): each value is one its clock read within the
 * call, on both clocks at once (the deviation a preemption would cause is
 * not testable without timing luck: this checks the pairing's bounds). */
Test(sched, ref_and_mono_are_read_within_the_call)
{
	struct t4_sched s = { 0 };

	cr_assert_eq(sched_ref_clockid(&s), CLOCK_MONOTONIC_RAW);
	for (int i = 0; i < 10000; i++) {
		uint64_t r0 = t4_clock_ns(CLOCK_MONOTONIC_RAW), m0 = t4_clock_ns(CLOCK_MONOTONIC);
		uint64_t mono, ref = sched_ref_and_mono(&s, &mono);
		uint64_t m1 = t4_clock_ns(CLOCK_MONOTONIC), r1 = t4_clock_ns(CLOCK_MONOTONIC_RAW);
		cr_assert(r0 <= ref && ref <= r1, "%d: ref %lu outside [%lu, %lu]", i,
			  (unsigned long)ref, (unsigned long)r0, (unsigned long)r1);
		cr_assert(m0 <= mono && mono <= m1, "%d: mono %lu outside [%lu, %lu]", i,
			  (unsigned long)mono, (unsigned long)m0, (unsigned long)m1);
	}
}

Test(sched, reserved_bookmark_slots_are_never_refused)
{
	struct t4_bookmarks *b;
	char name[32];
	int i;

	cr_assert_eq(sched_bookmarks_new(&b, &(struct t4_bookmarks_opts){ .clock = CLOCK_MONOTONIC }),
		     0);
	cr_assert_eq(sched_bookmarks_reserve(b, 100), 100);
	for (i = 0; i < T4_BOOKMARK_QUEUE - 100; i++)
		cr_assert_eq(sched_bookmarks_set(b, "mine"), 0, "%d: %s", i, t4_errmsg());
	cr_assert_eq(sched_bookmarks_set(b, "mine"), -EBUSY);
	cr_assert_eq(sched_bookmarks_reserve(b, 5), 0, "the queue is full");
	for (i = 0; i < 100; i++)
		cr_assert_eq(sched_bookmarks_set_reserved(b, "probe", 0), 0, "%d: %s", i, t4_errmsg());
	cr_assert_eq(sched_bookmarks_set_reserved(b, "probe", 0), -EBUSY, "none reserved is left");
	cr_assert_eq(sched_bookmarks_refused(b), 2);
	sched_bookmarks_free(b);

	/* names: 10 held for reserved commands, however many the others add
	 * (a trigger now and then empties the queue into a log) */
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct t4_log_opts lo = { .path = path };
	struct t4_log *log;
	struct t4_ring *ring;
	uint64_t trig = 0;

	t4t_tmpdir(dir, sizeof(dir), "t4bm");
	snprintf(path, sizeof(path), "%s/n.t4t", dir);
	cr_assert_eq(t4_log_open(&log, &lo), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_ring(log, 16 << 20, T4_RING_WAIT, &ring), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_start(log), 0);
	cr_assert_eq(sched_bookmarks_new(&b, &(struct t4_bookmarks_opts){ .clock = CLOCK_MONOTONIC }),
		     0);
	cr_assert_eq(sched_bookmarks_reserve(b, 10), 10);
	for (i = 0; sched_bookmarks_set(b, (snprintf(name, sizeof(name), "n%d", i), name)) == 0; i++)
		if (i % 20000 == 19999)
			sched_bookmarks_on_trigger(b, ++trig, &(struct t4_trigger_bm){
							.seen = sched_bookmarks_seen(b) }, ring);
	cr_assert(strstr(t4_errmsg(), "distinct bookmarks"), "%s", t4_errmsg());
	int others = i;
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		cr_assert_eq(sched_bookmarks_set_reserved(b, name, 0), 0, "%s", t4_errmsg());
	}
	cr_assert_eq(sched_bookmarks_refused(b), 1);
	sched_bookmarks_unreserve(b, 3); /* more than is held: nothing breaks */
	sched_bookmarks_close(b, trig + 1, ring);
	cr_assert_eq(t4_log_close(log, NULL, NULL), 0, "%s", t4_errmsg());
	sched_bookmarks_free(b);
	t4_rmtree(dir);
	cr_assert_eq(others + 10, T4_BOOKMARK_NAMES, "%d names besides the 10 held", others);
}

/* ---- read failures ------------------------------------------------------ */

/* A domain whose every read fails (its counter closed): the failures are
 * counted, and the status keeps the first one's reason, domain and
 * trigger (record says them: a count alone said nothing of why). */
Test(sched, the_first_read_failure_is_kept_with_its_reason, .timeout = 30)
{
	struct t4_sched_opts so = { .period_ns = 1000000, .trigger = T4_TRIGGER_USER };
	struct t4_sched_status st;
	struct readback rb;
	struct rec r;

	memset(&r, 0, sizeof(r));
	tu_counters_open(&r.c, NULL, "cpu-clock");
	struct t4_domain *bad = &r.c.ds.v[r.c.ds.n - 1];
	close(bad->fds[0]);
	bad->fds[0] = -1;
	rec_start(&r, so);
	wait_triggers(r.s, 5);
	rec_close(&r, &st);
	cr_assert_geq(st.read_failures, 5);
	cr_assert_eq(st.first_failure_err, EBADF, "%s", strerror(st.first_failure_err));
	cr_assert_str_eq(st.first_failure_domain, bad->name);
	cr_assert_eq(st.first_failure_trigger, 0, "the baseline's read failed first");
	read_back(r.path, &rb);
	rec_free(&r, &rb);
}

/* ---- the final trigger -------------------------------------------------- */

/* A domain with a source of its own (the DRM source's kind) whose answers
 * take 3 s once `slow` is set: the only domain, so its monitor is
 * scheduler 0's. */
struct slow_source {
	_Atomic bool slow;
	_Atomic uint64_t last_id;
};

static int slow_answer(void *ctx, uint64_t trigger_id, clockid_t ref_clock, t4_emit_fn emit,
		       void *ud)
{
	struct slow_source *ss = ctx;

	(void)ref_clock, (void)emit, (void)ud;
	if (atomic_load(&ss->slow))
		sleep_ms(3000);
	atomic_store(&ss->last_id, trigger_id);
	return 0;
}

/* A final trigger that a scheduler answers only after the 2 s the stop
 * waits is not silent: t4_sched_stop says so (and that it is in the log,
 * which it is), once every thread is joined. */
Test(sched, a_late_final_trigger_is_reported, .timeout = 30)
{
	struct slow_source ss = { 0 };
	struct t4_domain_source src = { .answer = slow_answer, .ctx = &ss };
	struct t4_sched_opts so = { .period_ns = 5000000, .trigger = T4_TRIGGER_USER };
	struct t4_sched_status st;
	struct t4_domain *d;
	struct readback rb;
	struct rec r;

	memset(&r, 0, sizeof(r));
	cr_assert_eq(t4_domains_add_source(&r.c.ds, "slow", T4_DOM_DRM, &src, &d), 0, "%s",
		     t4_errmsg());
	rec_start(&r, so);
	wait_triggers(r.s, 3);
	atomic_store(&ss.slow, true);
	int rc = t4_sched_stop(r.s);
	cr_assert_eq(rc, -ETIMEDOUT, "the late final trigger went unsaid: %d %s", rc, t4_errmsg());
	cr_assert(strstr(t4_errmsg(), "the final trigger") &&
		  strstr(t4_errmsg(), "answered more than 2 s late"), "%s", t4_errmsg());
	t4_sched_status(r.s, &st);
	struct t4_status_pkt fin = { .triggers = st.triggers, .overruns = st.overruns };
	cr_assert_eq(t4_log_close(r.log, &fin, NULL), 0, "%s", t4_errmsg());
	t4_sched_free(r.s);
	read_back(r.path, &rb);
	qsort(rb.refs, rb.n_refs, sizeof(*rb.refs), cmp_ref);
	cr_assert_gt(rb.n_refs, 0);
	const struct t4_ref_pkt *last = &rb.refs[rb.n_refs - 1];
	cr_assert(last->flags & T4_REF_FINAL, "the late final trigger is in the log");
	cr_assert_eq(atomic_load(&ss.last_id), last->trigger_id, "and the source answered it");
	rec_free(&r, &rb);
}
