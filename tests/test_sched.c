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

#include "collector/collector.h"
#include "packets/packets.h"
#include "sched/sched.h"
#include "sched/sched_internal.h"
#include "sim_testutil.h"
#include "tests/probe.h"
#include "util/util.h"

struct rec {
	struct tu_counters c;
	struct t4_log *log;
	struct t4_sched *s;
	char dir[64];
	char path[128];
};

struct readback {
	struct t4_ref_pkt *refs;
	size_t n_refs;
	struct t4_ret_pkt *rets;
	size_t n_rets;
	struct t4_bookmark_pkt bms[512];
	size_t n_bms, total_bms;
	struct t4_domain_pkt doms[64];
	size_t n_doms;
	struct t4_status_pkt status;
	bool have_status;
};

static void rec_open(struct rec *r, const char *events, bool sim, uint64_t period_ns,
		     bool paused, bool per_socket)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->dir, "/tmp/t4sched.XXXXXX");
	cr_assert_not_null(mkdtemp(r->dir));
	snprintf(r->path, sizeof(r->path), "%s/t.t4t", r->dir);
	struct t4_sim_opts sim7 = { .seed = 7, .drift_ppm = T4_SIM_DRIFT_PPM };
	tu_counters_open(&r->c, sim ? &sim7 : NULL, events);
	struct t4_log_opts lo = { .path = r->path };
	cr_assert_eq(t4_log_open(&r->log, &lo), 0, "%s", t4_errmsg());
	struct t4_sched_opts so = {
		.period_ns = period_ns, .paused = paused, .per_socket = per_socket,
		.domains = &r->c.ds, .log = r->log, .quiet = true,
	};
	cr_assert_eq(t4_sched_create(&r->s, &so), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_start(r->log), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_sched_start(r->s), 0, "%s", t4_errmsg());
}

static void rec_close(struct rec *r, struct t4_sched_status *st)
{
	cr_assert_eq(t4_sched_stop(r->s), 0);
	t4_sched_status(r->s, st);
	struct t4_status_pkt fin = { .triggers = st->triggers, .overruns = st->overruns };
	cr_assert_eq(t4_log_close(r->log, &fin, NULL), 0, "%s", t4_errmsg());
	t4_sched_free(r->s);
}

static void rec_free(struct rec *r, struct readback *rb)
{
	tu_counters_close(&r->c);
	t4_rmtree(r->dir);
	free(rb->refs);
	free(rb->rets);
}

static void read_back(const char *path, struct readback *rb)
{
	struct t4_reader *rd;
	struct t4_packet *p = malloc(sizeof(*p));
	size_t cap_refs = 1024, cap_rets = 4096;
	int rc;

	memset(rb, 0, sizeof(*rb));
	rb->refs = malloc(cap_refs * sizeof(*rb->refs));
	rb->rets = malloc(cap_rets * sizeof(*rb->rets));
	cr_assert_eq(t4_reader_open(&rd, path, NULL, NULL), 0, "%s", t4_errmsg());
	while ((rc = t4_reader_next(rd, p)) == 1) {
		switch (p->type) {
		case T4_PKT_REF:
			if (rb->n_refs == cap_refs)
				rb->refs = realloc(rb->refs, (cap_refs *= 2) * sizeof(*rb->refs));
			rb->refs[rb->n_refs++] = p->ref;
			break;
		case T4_PKT_RET:
			if (rb->n_rets == cap_rets)
				rb->rets = realloc(rb->rets, (cap_rets *= 2) * sizeof(*rb->rets));
			rb->rets[rb->n_rets++] = p->ret;
			break;
		case T4_PKT_BOOKMARK:
			rb->total_bms++;
			if (rb->n_bms < sizeof(rb->bms) / sizeof(rb->bms[0]))
				rb->bms[rb->n_bms++] = p->bookmark;
			break;
		case T4_PKT_STATUS:
			rb->status = p->status;
			rb->have_status = true;
			break;
		}
	}
	cr_assert_eq(rc, 0, "%s", t4_errmsg());
	t4_reader_close(rd);
	free(p);
}

static int cmp_ref(const void *a, const void *b)
{
	const struct t4_ref_pkt *x = a, *y = b;
	return x->trigger_id < y->trigger_id ? -1 : x->trigger_id > y->trigger_id;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

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

Test(sched, real_pmus_one_second, .timeout = 30)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;

	t4t_need_pmu("msr");
	rec_open(&r, "cpu-clock,context-switches,msr/tsc/", false, 1000000, false, false);
	sleep_ms(1000);
	rec_close(&r, &st);
	read_back(r.path, &rb);

	/* Trigger IDs contiguous from 0, each exactly once. */
	qsort(rb.refs, rb.n_refs, sizeof(*rb.refs), cmp_ref);
	cr_assert_eq(rb.n_refs, st.triggers);
	for (size_t i = 0; i < rb.n_refs; i++)
		cr_assert_eq(rb.refs[i].trigger_id, i, "gap at %zu", i);
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
			if (p->trigger_id == rb.n_refs - 1)
				last_clock = p->local_clock;
			answered++;
			for (size_t c = 0; c < p->n_counts; c++)
				sum[c] += p->counts[c];
			if (dom->clock_index >= 0)
				clock_sum += p->counts[dom->clock_index];
		}
		/* A monitor that could not run before the next trigger answers
		 * only the newer one (its deltas then span both intervals): under
		 * a loaded machine a few may be unanswered, never lost. */
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

/* ---- commands and bookmarks -------------------------------------------------- */

static const struct t4_ref_pkt *ref_with_id(const struct readback *rb, uint64_t id)
{
	for (size_t i = 0; i < rb->n_refs; i++)
		if (rb->refs[i].trigger_id == id)
			return &rb->refs[i];
	return NULL;
}

static void wait_triggers(struct t4_sched *s, uint64_t n)
{
	struct t4_sched_status st;
	for (int i = 0; i < 2000; i++) {
		t4_sched_status(s, &st);
		if (st.triggers >= n)
			return;
		sleep_ms(1);
	}
	cr_assert_fail("scheduler did not reach %lu triggers", (unsigned long)n);
}

Test(sched, paused_single_triggers_and_bookmarks, .timeout = 30)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;

	rec_open(&r, "cpu-clock", false, 1000000, true, false);
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
	cr_assert_eq(ref_with_id(&rb, 1)->bookmark_id, 1);
	cr_assert_eq(ref_with_id(&rb, 2)->bookmark_id, 2);
	cr_assert_eq(ref_with_id(&rb, 3)->bookmark_id, 1);
	cr_assert(ref_with_id(&rb, 1)->flags & T4_REF_SINGLE);
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
	/* each with the time it was set, between the triggers around it */
	for (int i = 0; i < 3; i++) {
		cr_assert_gt(rb.bms[i].set_ns, ref_with_id(&rb, i)->ref_ns);
		cr_assert_lt(rb.bms[i].set_ns, ref_with_id(&rb, i + 1)->ref_ns);
	}
	rec_free(&r, &rb);
}

Test(sched, start_stop_periodic, .timeout = 30)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;

	rec_open(&r, "cpu-clock", false, 2000000, true, false);
	wait_triggers(r.s, 1);
	cr_assert_eq(t4_sched_resume(r.s), 0);
	sleep_ms(100);
	cr_assert_eq(t4_sched_pause(r.s), 0);
	sleep_ms(10);
	t4_sched_status(r.s, &st);
	uint64_t n = st.triggers;
	cr_assert(n > 20, "only %lu triggers in 100 ms at 2 ms", (unsigned long)n);
	sleep_ms(50);
	t4_sched_status(r.s, &st);
	cr_assert_eq(st.triggers, n, "triggers fired while stopped");
	cr_assert(!st.periodic);
	rec_close(&r, &st);
	read_back(r.path, &rb);
	cr_assert(ref_with_id(&rb, 1)->flags & T4_REF_COMMAND);
	cr_assert(ref_with_id(&rb, 2)->flags & T4_REF_PERIODIC);
	rec_free(&r, &rb);
}

/* ---- the simulated Tegra410 against its ground truth ------------------------- */

Test(sched, sim_matches_ground_truth, .timeout = 60)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;

	rec_open(&r, NULL, true, 1000000, false, true);
	sleep_ms(300);
	rec_close(&r, &st);
	read_back(r.path, &rb);
	cr_assert_eq(r.c.ds.n, 34, "one domain per simulated PMU instance");
	cr_assert_gt(rb.n_refs, 250);

	/* Two schedulers (one per socket), each with contiguous IDs. */
	size_t per[2] = { 0, 0 };
	for (size_t i = 0; i < rb.n_refs; i++) {
		cr_assert_lt(rb.refs[i].sched_id, 2);
		per[rb.refs[i].sched_id]++;
	}
	cr_assert_gt(per[0], 250);
	cr_assert_gt(per[1], 250);

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
		cr_assert_gt(checked, 250, "%s", dom->name);
	}
	rec_free(&r, &rb);
}

/* Bookmarks set as fast as possible while triggers fire every 100 us: every
 * ID a reference packet carries has its bookmark packet in the log, and
 * that packet's first_trigger is exactly the first trigger carrying it. */
Test(sched, bookmark_storm_first_triggers_exact, .timeout = 60)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;
	char name[32];

	rec_open(&r, "cpu-clock", false, 100000, false, false);
	for (int i = 0; i < 1500; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		cr_assert_eq(t4_sched_bookmark(r.s, name), 0);
		if (i % 8 == 0)
			sleep_ms(1);
	}
	rec_close(&r, &st);
	struct t4_reader *rd;
	struct t4_packet *p = malloc(sizeof(*p));
	uint64_t *first = calloc(1501, sizeof(*first)); /* from the bookmark packets, +1 */
	uint64_t *seen = calloc(1501, sizeof(*seen));   /* first carrying ref, +1 */
	cr_assert_eq(t4_reader_open(&rd, r.path, NULL, NULL), 0, "%s", t4_errmsg());
	int rc;
	while ((rc = t4_reader_next(rd, p)) == 1) {
		if (p->type == T4_PKT_BOOKMARK && p->bookmark.bookmark_id <= 1500)
			first[p->bookmark.bookmark_id] = p->bookmark.first_trigger + 1;
		if (p->type == T4_PKT_REF && p->ref.bookmark_id && p->ref.bookmark_id <= 1500) {
			uint64_t *s = &seen[p->ref.bookmark_id];
			if (!*s || p->ref.trigger_id + 1 < *s)
				*s = p->ref.trigger_id + 1;
		}
	}
	cr_assert_eq(rc, 0);
	size_t carried = 0;
	for (int id = 1; id <= 1500; id++) {
		if (!seen[id])
			continue;
		carried++;
		cr_assert_eq(first[id], seen[id], "bookmark %d: packet says %ld, first carried by %ld",
			     id, (long)first[id] - 1, (long)seen[id] - 1);
	}
	cr_assert_gt(carried, 50);
	t4_reader_close(rd);
	free(p);
	free(first);
	free(seen);
	memset(&rb, 0, sizeof(rb));
	rec_free(&r, &rb);
}

/* docs/FORMAT.md 6.1: a recording ended by its duration closes with a
 * FINAL trigger that is a grid point: its ID plus the overruns before it
 * is the duration divided by the period. */
Test(sched, duration_final_trigger_is_on_the_grid, .timeout = 30)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;

	memset(&r, 0, sizeof(r));
	strcpy(r.dir, "/tmp/t4sched.XXXXXX");
	cr_assert_not_null(mkdtemp(r.dir));
	snprintf(r.path, sizeof(r.path), "%s/t.t4t", r.dir);
	tu_counters_open(&r.c, NULL, "cpu-clock");
	struct t4_log_opts lo = { .path = r.path };
	cr_assert_eq(t4_log_open(&r.log, &lo), 0, "%s", t4_errmsg());
	struct t4_sched_opts so = {
		.period_ns = 2000000, .duration_ns = 60000000, .domains = &r.c.ds,
		.log = r.log, .quiet = true,
	};
	cr_assert_eq(t4_sched_create(&r.s, &so), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_start(r.log), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_sched_start(r.s), 0, "%s", t4_errmsg());
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
	cr_assert_eq(last->trigger_id + overruns, 30, "final trigger %lu, overruns %lu",
		     (unsigned long)last->trigger_id, (unsigned long)overruns);
	rec_free(&r, &rb);
}

/* 200 bookmark commands between two triggers (two names, alternating):
 * 200 bookmark packets, in order, each with its own set time and the next
 * trigger as first_trigger; the trigger carries the last. A command past
 * the queue's bound fails instead of vanishing; one after the end too. */
Test(sched, rapid_bookmarks_all_land, .timeout = 30)
{
	struct rec r;
	struct readback rb;
	struct t4_sched_status st;
	int i;

	rec_open(&r, "cpu-clock", false, 1000000, true, false);
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

	cr_assert_eq(rb.total_bms, 200 + T4_BOOKMARK_QUEUE);
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
	 * (2) is the first broadcast after them */
	cr_assert_str_eq(rb.bms[200].name, "fill");
	cr_assert_eq(rb.bms[200].first_trigger, 2);
	rec_free(&r, &rb);
}

/* A ring too small for the bookmark packets of one trigger: the rest wait
 * in the queue, keep the first_trigger they were given, and go out on the
 * next trigger once the writer has made room. */
Test(sched, bookmarks_wait_out_a_full_ring, .timeout = 30)
{
	char dir[] = "/tmp/t4bm.XXXXXX", path[64];
	struct t4_log *log;
	struct t4_ring *ring;
	struct t4_bookmarks *b;
	struct t4_log_opts lo = { .path = path };
	struct readback rb;
	char name[16];

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/b.t4t", dir);
	cr_assert_eq(t4_log_open(&log, &lo), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_ring(log, 1, T4_RING_NONBLOCK, &ring), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_bookmarks_new(&b), 0);
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		cr_assert_eq(t4_bookmarks_set(b, name), 0, "%s", t4_errmsg());
	}
	cr_assert_eq(t4_bookmarks_on_trigger(b, 5, t4_ref_ns(), ring), 300);
	cr_assert_eq(t4_log_start(log), 0);
	for (uint64_t id = 6; id < 40; id++) { /* the writer drains meanwhile */
		sleep_ms(5);
		cr_assert_eq(t4_bookmarks_on_trigger(b, id, t4_ref_ns(), ring), 300);
	}
	t4_bookmarks_close(b, 40, ring);
	cr_assert_eq(t4_log_close(log, NULL, NULL), 0, "%s", t4_errmsg());
	t4_bookmarks_free(b);
	read_back(path, &rb);
	cr_assert_eq(rb.total_bms, 300);
	for (size_t i = 0; i < rb.n_bms; i++) {
		snprintf(name, sizeof(name), "b%d", (int)i);
		cr_assert_str_eq(rb.bms[i].name, name);
		cr_assert_eq(rb.bms[i].first_trigger, 5, "%s", name);
	}
	cr_assert_eq(rb.status.dropped, 0, "a bookmark that waited is not a drop");
	free(rb.refs);
	free(rb.rets);
	t4_rmtree(dir);
}
