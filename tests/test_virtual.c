/* test_virtual.c - recordings of the simulated Tegra410 in virtual time
 * (sched/virtual.c), checked through the log they write and against the
 * ground truth of every sample (on_sample): the stream a live recording
 * writes, byte-identical for a seed, true instants inside their read
 * windows, dropped and late answers carried exactly, preempted reads at
 * the rate asked, bookmarks at the exact phase changes.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/collector.h"
#include "packets/packets.h"
#include "sched/sched.h"
#include "util/util.h"
#include "virtual_testutil.h"

#define US 1000ull

static struct t4_virtual_opts busy_opts(uint64_t seed, uint64_t duration_ns)
{
	return (struct t4_virtual_opts){
		.period_ns = MS, .duration_ns = duration_ns, .phase_bookmarks = true,
		.seed = seed, .preempt_prob = 0.05, .drop_prob = 0.02, .late_prob = 0.02,
	};
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*len + 1);
	cr_assert_eq(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

/* ---- determinism ------------------------------------------------------------- */

static void *record_bytes(uint64_t seed, size_t *len)
{
	struct vrec r;
	struct t4_virtual_opts o = busy_opts(seed, 3 * SEC);
	void *buf;

	vrec_open(&r, 9, NULL);
	vrec_run(&r, &o);
	buf = slurp(r.path, len);
	vrec_free(&r);
	return buf;
}

Test(virtual, same_seed_same_log_bytes, .timeout = 120)
{
	size_t n1, n2, n3;
	void *a = record_bytes(5, &n1), *b = record_bytes(5, &n2), *c = record_bytes(6, &n3);

	cr_assert_gt(n1, 3 * T4_CHUNK_HDR_SIZE);
	cr_assert_eq(n1, n2);
	cr_assert(!memcmp(a, b, n1), "same seed, different logs");
	cr_assert(n1 != n3 || memcmp(a, c, n1), "another seed, the same log");
	free(a);
	free(b);
	free(c);
}

/* ---- the stream ------------------------------------------------------------------ */

/* The trigger IDs scheduler sched covers (its reference packets and the
 * overruns they report: the IDs it skipped when its own monitor was late,
 * as a live scheduler's CPU does), checked to leave no other gap. */
static size_t count_in(const struct vrec *r, uint32_t sched, uint64_t *first, uint64_t *last)
{
	size_t n = 0;

	*first = UINT64_MAX;
	*last = 0;
	for (size_t i = 0; i < r->n_refs; i++) {
		const struct t4_ref_pkt *p = &r->refs[i];

		if (p->sched_id != sched)
			continue;
		n += p->overruns;
		cr_assert_eq(p->trigger_id, n, "scheduler %u: trigger %llu at %zu", sched,
			     (unsigned long long)p->trigger_id, n);
		cr_assert_eq(p->mono_ns - p->ref_ns, r->refs[0].mono_ns - r->refs[0].ref_ns);
		cr_assert_eq(p->real_ns - p->ref_ns, r->refs[0].real_ns - r->refs[0].ref_ns);
		*first = n ? *first : p->ref_ns;
		cr_assert_gt(p->ref_ns, *last);
		*last = p->ref_ns;
		n++;
	}
	return n;
}

/* Per socket: two schedulers on one grid, each with the grid's IDs (a
 * gap only where it reports overruns), the last FINAL, and each domain
 * answering its own socket's scheduler. */
Test(virtual, per_socket_stream_is_a_recording, .timeout = 60)
{
	struct vrec r;
	struct t4_virtual_opts o = busy_opts(11, 500 * MS + 300 * US);
	uint64_t f0, l0, f1, l1;

	o.per_socket = true;
	vrec_open(&r, 3, NULL);
	vrec_run(&r, &o);
	vrec_read(&r);
	cr_assert_eq(r.st.schedulers, 2);
	/* 500.3 ms at 1 ms: the final trigger on the next grid point, 501 */
	cr_assert_eq(count_in(&r, 0, &f0, &l0), 502);
	cr_assert_eq(count_in(&r, 1, &f1, &l1), 502);
	cr_assert_gt(r.st.overruns, 0, "each scheduler's monitor is late at times");
	cr_assert_eq(r.st.triggers, 2 * 502 - r.st.overruns);
	cr_assert_eq(r.n_refs, r.st.triggers);
	cr_assert_eq(r.status.triggers, r.st.triggers);
	cr_assert_eq(r.status.overruns, r.st.overruns);
	cr_assert_eq(r.status.dropped, r.st.dropped);
	cr_assert_gt(r.st.dropped, 0);
	cr_assert_eq(r.status.ref_ns, r.st.end_ref_ns);
	cr_assert_geq(f0, EPOCH + 10 * MS);
	cr_assert_lt(f0, EPOCH + 10 * MS + 3 * US);
	cr_assert_geq(l0 - (EPOCH + 10 * MS), 501 * MS);
	cr_assert_lt(l0 - (EPOCH + 10 * MS), 501 * MS + 3 * US);
	for (size_t i = 0; i < r.n_refs; i++)
		cr_assert_eq(r.refs[i].flags, r.refs[i].trigger_id == 501 ? T4_REF_FINAL
									     : T4_REF_PERIODIC);
	cr_assert_eq(r.n_doms, 34);
	for (size_t i = 0; i < r.n_doms; i++) {
		const struct t4_domain *d = &r.c.ds.v[r.doms[i].domain_id];

		cr_assert_eq(r.doms[i].sched_id, (uint32_t)d->counters[0].pmu->socket, "%s",
			     r.doms[i].name);
	}
	/* every domain answers each trigger once, except those its monitor
	 * skipped (unanswered) */
	size_t want = 0;
	for (size_t d = 0; d < r.c.ds.n; d++) {
		uint64_t prev = UINT64_MAX;

		for (size_t i = 0; i < r.n_t; i++) {
			if (r.t[i].dom != d)
				continue;
			cr_assert(prev == UINT64_MAX || r.t[i].trigger > prev);
			prev = r.t[i].trigger;
			want++;
		}
	}
	cr_assert_eq(r.n_t, want);
	/* 2 sockets x 1 monitor each, each its scheduler's: a late one is
	 * an overrun (never unanswered), and misses 17 */
	cr_assert_eq(r.st.unanswered, 0);
	cr_assert_eq(r.n_t, 2 * 502 * 17 - 17 * r.st.overruns);
	cr_assert_eq(r.n_rets, r.n_t - r.st.dropped);
	vrec_free(&r);
}

/* ---- ground truth ---------------------------------------------------------------- */

/* Every logged packet: its sample was taken inside its read window, its
 * clock is the PMU's at that instant, its counts are the model's exact
 * change since the domain's previous logged sample; so each domain's sum
 * over the log is the change between its baseline and its last sample,
 * drops and late answers included. */
Test(virtual, true_instants_in_windows_and_counts_carried_exactly, .timeout = 60)
{
	struct vrec r;
	struct t4_virtual_opts o = busy_opts(21, 2 * SEC);
	uint64_t base[64] = { 0 }, prev[64] = { 0 }, sum[64][T4_MAX_COUNTERS] = { { 0 } };
	size_t drops = 0, k = 0;

	o.drop_prob = 0.1;
	o.late_prob = 0.1;
	o.preempt_prob = 0.2;
	vrec_open(&r, 4, NULL);
	vrec_run(&r, &o);
	vrec_read(&r);
	for (size_t i = 0; i < r.n_t; i++) {
		const struct truth *t = &r.t[i];
		const struct t4_domain *dom = &r.c.ds.v[t->dom];

		cr_assert(t->begin <= t->true_ns && t->true_ns <= t->end);
		if (!t->logged) {
			drops++;
			continue;
		}
		/* one ring: the log holds the samples in their order */
		const struct t4_ret_pkt *p = &r.rets[k++];
		cr_assert_eq(p->domain_id, t->dom);
		cr_assert_eq(p->trigger_id, t->trigger);
		cr_assert_eq(p->read_begin_ns, t->begin);
		cr_assert_eq(p->read_end_ns, t->end);
		cr_assert_eq(p->local_clock, t4_sim_clock_at(r.c.sim, dom->counters[0].pmu, t->true_ns));
		cr_assert_eq(p->flags, base[t->dom] ? 0 : T4_RET_FIRST);
		for (size_t c = 0; c < dom->n; c++) {
			uint64_t now = t4_sim_value_at(r.c.sim, &dom->counters[c], t->true_ns);
			uint64_t was = t4_sim_value_at(r.c.sim, &dom->counters[c], prev[t->dom]);

			cr_assert_eq(p->counts[c], base[t->dom] ? now - was : 0, "%s counter %zu",
				     dom->name, c);
			sum[t->dom][c] += p->counts[c];
		}
		base[t->dom] = base[t->dom] ? base[t->dom] : t->true_ns;
		prev[t->dom] = t->true_ns;
	}
	cr_assert_eq(k, r.n_rets);
	for (size_t d = 0; d < r.c.ds.n; d++)
		for (size_t c = 0; c < r.c.ds.v[d].n; c++) {
			const struct t4_counter *ctr = &r.c.ds.v[d].counters[c];

			cr_assert_gt(sum[d][c], 0, "%s", ctr->spec);
			cr_assert_eq(sum[d][c], t4_sim_value_at(r.c.sim, ctr, prev[d]) -
							t4_sim_value_at(r.c.sim, ctr, base[d]),
				     "%s", ctr->spec);
		}
	cr_assert_eq(drops, r.st.dropped);
	cr_assert_eq(r.status.dropped, drops);
	cr_assert_gt(drops, r.n_t / 20);
	cr_assert_gt(r.st.unanswered, 0);
	vrec_free(&r);
}

/* Preempted reads: windows of 20-100 us at the probability asked, the
 * others 0.3-3 us; none without preemption. */
static double preempted_share(double prob, uint64_t min_ns, uint64_t max_ns)
{
	struct vrec r;
	struct t4_virtual_opts o = busy_opts(31, SEC);
	size_t long_ones = 0;

	o.preempt_prob = prob;
	vrec_open(&r, 5, NULL);
	vrec_run(&r, &o);
	for (size_t i = 0; i < r.n_t; i++) {
		uint64_t w = r.t[i].end - r.t[i].begin;

		cr_assert((w >= 300 && w <= 3 * US) || (w >= min_ns && w <= max_ns), "%llu",
			  (unsigned long long)w);
		long_ones += w >= min_ns;
	}
	cr_assert_eq(r.st.window_max >= min_ns, long_ones > 0);
	double share = (double)long_ones / (double)r.n_t;
	vrec_free(&r);
	return share;
}

Test(virtual, preempted_windows_at_the_asked_rate, .timeout = 60)
{
	double share = preempted_share(0.2, 20 * US, 100 * US);

	cr_assert(share > 0.19 && share < 0.21, "%.4f preempted", share);
	cr_assert_eq(preempted_share(0, 20 * US, 100 * US), 0);
}

/* ---- bookmarks ---------------------------------------------------------------------- */

static uint64_t first_at_or_after(const struct vrec *r, uint64_t t)
{
	for (size_t i = 0; i < r->n_refs; i++)
		if (r->refs[i].sched_id == 0 && r->refs[i].ref_ns >= t)
			return r->refs[i].trigger_id;
	return UINT64_MAX;
}

static const char *name_of(const struct vrec *r, uint32_t id)
{
	for (size_t i = 0; i < r->n_bms; i++)
		if (r->bms[i].bookmark_id == id)
			return r->bms[i].name;
	return "";
}

/* A bookmark at every phase change, exactly when it happens; each
 * reference packet carries the phase (or the initial bookmark) in effect
 * at its reference time. */
static void check_phase_bookmarks(const char *initial)
{
	struct vrec r;
	struct t4_virtual_opts o = busy_opts(41, 20 * SEC);
	uint64_t t0 = EPOCH + 10 * MS, at = t0;

	o.per_socket = true;
	o.bookmark = initial;
	vrec_open(&r, 6, "nvidia_ucf_pmu_0/cycles/,nvidia_ucf_pmu_1/cycles/");
	vrec_run(&r, &o);
	vrec_read(&r);
	cr_assert_gt(r.n_bms, 20);
	cr_assert_eq(r.bms[0].first_trigger, 0);
	cr_assert_eq(r.bms[0].set_ns, t0);
	cr_assert_str_eq(r.bms[0].name, initial ? initial : t4_sim_phase_at(r.c.sim, t0));
	for (size_t i = 1; i < r.n_bms; i++) {
		at = t4_sim_next_phase_change(r.c.sim, at);
		cr_assert_eq(r.bms[i].set_ns, at);
		cr_assert_str_eq(r.bms[i].name, t4_sim_phase_at(r.c.sim, at));
		cr_assert_eq(r.bms[i].first_trigger, first_at_or_after(&r, at));
		cr_assert_leq(r.bms[i].bookmark_id, initial ? 4 : 3); /* one ID per name */
	}
	uint64_t f, last;
	count_in(&r, 0, &f, &last);
	cr_assert_gt(t4_sim_next_phase_change(r.c.sim, at), last);
	for (size_t i = 0; i < r.n_refs; i++) {
		const struct t4_ref_pkt *p = &r.refs[i];
		bool before = p->ref_ns < r.bms[1].set_ns;

		cr_assert_str_eq(name_of(&r, p->bookmark_id),
				 before && initial ? initial : t4_sim_phase_at(r.c.sim, p->ref_ns));
	}
	vrec_free(&r);
}

Test(virtual, bookmarks_at_exact_phase_changes, .timeout = 60)
{
	check_phase_bookmarks(NULL);
	check_phase_bookmarks("warmup");
}

/* ---- refusals ----------------------------------------------------------------------- */

static void expect_refused(struct t4_virtual_opts o, const char *needle)
{
	cr_assert_eq(t4_virtual_record(&o, NULL), -EINVAL, "%s", needle);
	cr_assert(strstr(t4_errmsg(), needle), "'%s' not in '%s'", needle, t4_errmsg());
}

Test(virtual, bad_options_are_refused)
{
	struct vrec r;
	struct t4_virtual_opts o = busy_opts(1, SEC);
	struct t4_domain_set none = { 0 };
	struct tu_counters host;
	struct t4_log_opts lo = { .path = "/dev/null" };
	struct t4_log *log;
	struct t4_session_pkt s;

	vrec_open(&r, 1, NULL);
	cr_assert_eq(t4_log_open(&log, &lo), 0, "%s", t4_errmsg());
	o.domains = &r.c.ds;
	expect_refused(o, "no ring");
	cr_assert_eq(t4_log_ring(log, 0, T4_RING_WAIT, &o.ring), 0, "%s", t4_errmsg());
	expect_refused((struct t4_virtual_opts){ .period_ns = MS, .domains = &r.c.ds, .ring = o.ring },
		       "must be > 0");
	o.period_ns = 7 * US;
	expect_refused(o, "period 7us too short");
	o.preempt_prob = 0;
	expect_refused(o, "reads reach 9.5us past the trigger");
	o.period_ns = 50 * US;
	o.preempt_prob = 0.01; /* preempted reads reach past 100 us */
	expect_refused(o, "period 50us too short");
	o.preempt_prob = 0;
	o.drop_prob = 1.5;
	expect_refused(o, "drop_prob 1.5");
	o.drop_prob = 0;
	o.late_prob = -0.1;
	expect_refused(o, "late_prob -0.1");
	o.late_prob = 0;
	o.preempt_min_ns = 200 * US;
	expect_refused(o, "preempted reads of 200us to 100us");
	o.preempt_min_ns = 0;
	o.bookmark = "two words";
	expect_refused(o, "bookmark 'two words'");
	o.bookmark = NULL;
	o.domains = &none;
	expect_refused(o, "no domains");
	tu_counters_open(&host, NULL, "cpu-clock");
	o.domains = &host.ds;
	expect_refused(o, "virtual time needs simulated domains");
	cr_assert_eq(t4_virtual_session(&o, "x", &s), -EINVAL);
	cr_assert_eq(t4_log_close(log, NULL, NULL), 0, "%s", t4_errmsg());
	tu_counters_close(&host);
	vrec_free(&r);
}

/* ---- an hour at 1 ms -------------------------------------------------------------- */

struct tally {
	uint64_t samples, logged, last_true;
};

static void count_sample(void *ud, const struct t4_domain *d, uint64_t trigger_id,
			 uint64_t true_ns, const struct t4_ret_pkt *ret, bool logged)
{
	struct tally *t = ud;

	(void)d;
	(void)trigger_id;
	(void)ret;
	t->samples++;
	t->logged += logged;
	t->last_true = true_ns;
}

/* A long run of the whole machine: 34 PMUs, ten minutes of 1 ms triggers
 * (600,001), into /dev/null, with every kind of fault: nothing lost or
 * counted twice. No timing assertion: the time is logged. The hour that
 * docs/SIMULATOR.md and the decoder's memory benchmark use is
 * tools/bench_decode.sh's (make bench): under qemu-user (make check-arm64)
 * an hour here took 11 minutes of CI. */
Test(virtual, ten_minutes_at_one_ms, .timeout = 600)
{
	struct vrec r;
	struct t4_virtual_opts o = busy_opts(51, 600 * SEC);
	struct tally t = { 0 };
	uint64_t t0;

	o.drop_prob = o.late_prob = o.preempt_prob = 0.001;
	o.on_sample = count_sample;
	o.ud = &t;
	vrec_open(&r, 7, NULL);
	snprintf(r.path, sizeof(r.path), "/dev/null");
	t0 = t4_mono_raw_ns();
	vrec_run(&r, &o);
	cr_log_info("virtual time: 10 min at 1 ms, %zu domains, %llu samples: generated in %.1f s",
		    r.c.ds.n, (unsigned long long)t.samples, (double)(t4_mono_raw_ns() - t0) / 1e9);
	/* one scheduler, one monitor per socket: socket 0's is the
	 * scheduler's (its lateness an overrun), socket 1's is not */
	cr_assert_gt(r.st.overruns, 0);
	cr_assert_gt(r.st.unanswered, 0);
	cr_assert_eq(r.st.triggers, 600001 - r.st.overruns);
	cr_assert_eq(t.samples, 34 * 600001 - 17 * (r.st.unanswered + r.st.overruns));
	cr_assert_eq(t.samples - t.logged, r.st.dropped);
	cr_assert_gt(t.last_true, EPOCH + 600 * SEC);
	vrec_free(&r);
}
