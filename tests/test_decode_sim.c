/* test_decode_sim.c - the decoder against the simulated Tegra410's ground
 * truth: recordings made in virtual time (sched/virtual.c) with hard clocks
 * (+-500 ppm drift, 100 ppm wander, DVFS steps) and 5% of the reads
 * preempted for 20-100 us, decoded from the log file, then compared with
 * what on_sample says of every sample and with the simulator's analytic
 * counters and clocks:
 *   - every interval boundary within the stated tolerance of the true
 *     sample instant;
 *   - every clock segment's frequency within 10 ppm of the true average
 *     frequency over it;
 *   - every domain's totals equal to the simulator's exactly, also with
 *     packets dropped and monitors answering late;
 *   - the rate model 10x better than the offset model (boundary RMS), and a
 *     constant-traffic stretch's bandwidth 5x steadier than with window
 *     midpoints (CV).
 */
#include "decode_synth.h"
#include "virtual_testutil.h"

#include <inttypes.h>

/* Three PMUs: UCF and NVLink-C2C step their clocks (DVFS), a PCIE RC. */
#define EVENTS "nvidia_ucf_pmu_0/cycles/,nvidia_ucf_pmu_0/mem_bytes_rd/," \
	       "nvidia_ucf_pmu_0/slc_bytes_wr/,nvidia_nvlink_c2c_pmu_0/cycles/," \
	       "nvidia_nvlink_c2c_pmu_0/in_rd_req/,nvidia_pcie_pmu_0_rc_1/cycles/," \
	       "nvidia_pcie_pmu_0_rc_1/rd_bytes/"

static struct t4_virtual_opts hard(uint64_t seed, uint64_t duration_ns)
{
	return (struct t4_virtual_opts){
		.period_ns = MS, .duration_ns = duration_ns, .phase_bookmarks = true,
		.seed = seed, .preempt_prob = 0.05, .preempt_min_ns = 20000,
		.preempt_max_ns = 100000,
	};
}

static const struct t4_domain *domain_by_id(const struct vrec *r, uint32_t id)
{
	for (size_t i = 0; i < r->c.ds.n; i++)
		if (r->c.ds.v[i].id == id)
			return &r->c.ds.v[i];
	cr_assert_fail("no domain %u", id);
	return NULL;
}

/* The true instant of (domain, trigger), from on_sample. */
static const struct truth *truth_of(const struct vrec *r, uint32_t dom, uint64_t trigger)
{
	/* samples come in trigger order, domains in a fixed order per trigger */
	size_t per = r->c.ds.n, guess = (size_t)trigger * per;
	for (size_t i = guess < r->n_t ? guess : 0; i < r->n_t; i++)
		if (r->t[i].dom == dom && r->t[i].trigger == trigger)
			return &r->t[i];
	for (size_t i = 0; i < r->n_t; i++)
		if (r->t[i].dom == dom && r->t[i].trigger == trigger)
			return &r->t[i];
	return NULL;
}

struct err {
	double rms, p99, max;
	size_t n;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Boundary error of domain dom's intervals against the true instants:
 * the end of the last piece of each interval (the others end where a
 * phase starts, attrib.c). */
static struct err boundary(const struct vrec *r, const struct keep *k, uint32_t dom)
{
	double *e = malloc(k->n * sizeof(*e)), ss = 0;
	struct err out = { 0 };

	cr_assert(e);
	for (size_t i = 0; i < k->n; i++) {
		const struct civ *c = &k->v[i];
		size_t j = i + 1;
		if (c->domain_id != dom)
			continue;
		while (j < k->n && k->v[j].domain_id != dom)
			j++;
		if (j < k->n && k->v[j].trigger == c->trigger)
			continue; /* a piece cut at a phase boundary */
		const struct truth *t = truth_of(r, dom, c->trigger);
		cr_assert(t, "no truth for %u/%" PRIu64, dom, c->trigger);
		double d = fabs((double)c->end - (double)t->true_ns);
		e[out.n++] = d;
		ss += d * d;
	}
	qsort(e, out.n, sizeof(*e), cmp_double);
	out.rms = sqrt(ss / (double)out.n);
	out.p99 = e[out.n * 99 / 100];
	out.max = e[out.n - 1];
	free(e);
	return out;
}

static struct t4_decoder *decode_log(const char *path, enum t4_clock_model model,
				     struct keep *k)
{
	struct t4_decode_opts o = { .model = model };
	struct t4_decoder *dec;
	struct t4_reader *rd;
	struct t4_packet *p = malloc(sizeof(*p));
	int rc;

	memset(k, 0, sizeof(*k));
	cr_assert(p);
	cr_assert_eq(t4_decoder_new(&dec, &o, &keep_ops, k), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_reader_open(&rd, path, NULL, NULL), 0, "%s", t4_errmsg());
	while ((rc = t4_reader_next(rd, p)) > 0)
		cr_assert_eq(t4_decoder_feed(dec, p), 0, "%s", t4_errmsg());
	cr_assert_eq(rc, 0);
	t4_reader_close(rd);
	free(p);
	cr_assert_eq(t4_decoder_finish(dec, NULL), 0, "%s", t4_errmsg());
	return dec;
}

/* Totals of every domain equal the simulator's change of every counter
 * between the first and the last sample. */
static void totals_exact(const struct vrec *r, const struct t4_decoder *dec)
{
	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		const struct t4_domain *sd = domain_by_id(r, d->id);
		const struct truth *first = truth_of(r, d->id, 0);
		uint64_t last_k = r->st.triggers + r->st.overruns - 1; /* one scheduler */
		const struct truth *last = truth_of(r, d->id, last_k);
		cr_assert(first && last);
		for (size_t c = 0; c < sd->n; c++) {
			uint64_t want = t4_sim_value_at(r->c.sim, &sd->counters[c], last->true_ns) -
					t4_sim_value_at(r->c.sim, &sd->counters[c], first->true_ns);
			cr_assert(d->totals[c] == want, "%s %s: %" PRIu64 " vs %" PRIu64, d->name,
				  sd->counters[c].name, (uint64_t)d->totals[c], want);
		}
	}
}

Test(decode_sim, boundaries_frequencies_and_totals_match_the_truth, .timeout = 120)
{
	struct vrec r;
	struct keep k;
	struct t4_virtual_opts o = hard(11, 8 * SEC);

	vrec_open(&r, 21, EVENTS);
	vrec_run(&r, &o);
	struct t4_decoder *dec = decode_log(r.path, T4_CLOCK_RATE, &k);
	cr_assert_eq(t4_decoder_n_domains(dec), 3);
	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		struct err e = boundary(&r, &k, d->id);
		cr_log_info("%s: boundary error RMS %.1f ns, p99 %.1f ns, max %.1f ns over %zu;"
			    " %" PRIu64 " segments", d->name, e.rms, e.p99, e.max, e.n,
			    d->clock.segments);
		/* stated tolerance: 100 ns RMS, 1 us p99 (windows 0.3-3 us, 5% 20-100 us) */
		cr_assert_lt(e.rms, 100, "%s: RMS %.1f ns", d->name, e.rms);
		cr_assert_lt(e.p99, 1000, "%s: p99 %.1f ns", d->name, e.p99);
		size_t ns;
		const struct t4_clock_segment *sg = t4_decoder_segments(dec, i, &ns);
		const struct t4_pmu *pmu = domain_by_id(&r, d->id)->counters[0].pmu;
		for (size_t s = 0; s < ns; s++) {
			if (sg[s].samples < 100)
				continue; /* a short stretch at a step: no rate to speak of */
			double dt = (double)(sg[s].end_ns - sg[s].start_ns);
			double truth = (double)(t4_sim_clock_at(r.c.sim, pmu, sg[s].end_ns) -
						t4_sim_clock_at(r.c.sim, pmu, sg[s].start_ns)) / dt * 1e9;
			double ppm = (sg[s].freq_hz / truth - 1) * 1e6;
			cr_log_info("  segment %zu: %.3f MHz, truth %.3f MHz: %+.2f ppm", s,
				    sg[s].freq_hz / 1e6, truth / 1e6, ppm);
			cr_assert_lt(fabs(ppm), 10, "%s segment %zu: %+.2f ppm", d->name, s, ppm);
		}
	}
	/* the UCF's DVFS steps were found: several segments */
	cr_assert_gt(t4_decoder_domain_at(dec, 0)->clock.segments +
			     t4_decoder_domain_at(dec, 1)->clock.segments, 2);
	totals_exact(&r, dec);
	t4_decoder_free(dec);
	free(k.v);
	vrec_free(&r);
}

Test(decode_sim, totals_exact_with_drops_and_late_answers, .timeout = 120)
{
	struct vrec r;
	struct keep k;
	struct t4_virtual_opts o = hard(12, 4 * SEC);

	o.drop_prob = 0.03;
	o.late_prob = 0.03;
	vrec_open(&r, 22, EVENTS);
	vrec_run(&r, &o);
	struct t4_decoder *dec = decode_log(r.path, T4_CLOCK_RATE, &k);
	totals_exact(&r, dec);
	uint64_t carried = 0;
	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		carried += d->unanswered_carried;
		cr_assert_eq(d->unanswered_lost, 0);
	}
	cr_assert_gt(carried, 100, "drops and late answers make spanning intervals");
	cr_assert_not(t4_decoder_damage_stats(dec)->partial);
	t4_decoder_free(dec);
	free(k.v);
	vrec_free(&r);
}

/* Relative deviation of one run of constant traffic from its mean. */
static void run_dev(const double *bw, size_t n, double *ss, size_t *count)
{
	double mean = 0;

	if (n < 20)
		return;
	for (size_t i = 0; i < n; i++)
		mean += bw[i] / (double)n;
	for (size_t i = 0; i < n; i++) {
		double d = bw[i] / mean - 1;
		*ss += d * d;
		(*count)++;
	}
}

/* Bandwidth CV of domain dom within stretches of constant traffic (one
 * workload segment, away from its edges): each stretch against its own
 * mean, the deviations pooled. */
static double steady_cv(const struct vrec *r, const struct keep *k, uint32_t dom, int counter)
{
	double *bw = malloc(k->n * sizeof(*bw)), ss = 0;
	size_t n = 0, count = 0;
	uint64_t prev = 0;

	cr_assert(bw);
	for (size_t i = 0; i < k->n; i++) {
		const struct civ *c = &k->v[i];
		if (c->domain_id != dom)
			continue;
		/* the same phase 5 ms before and after: a constant-rate stretch */
		const char *a = t4_sim_phase_at(r->c.sim, c->start - 5 * MS);
		const char *b = t4_sim_phase_at(r->c.sim, c->end + 5 * MS);
		bool steady = !c->flags && !strcmp(a, b) &&
			      !strcmp(a, t4_sim_phase_at(r->c.sim, c->start));
		double v = (double)c->counts[counter] / (double)c->elapsed;
		/* two segments of one phase follow each other where the schedule
		 * repeats: their intensities differ by far more than 5% */
		if (!steady || c->trigger != prev + 1 || (n && fabs(v / bw[n - 1] - 1) > 0.05)) {
			run_dev(bw, n, &ss, &count); /* a stretch ends */
			n = 0;
		}
		prev = c->trigger;
		if (steady)
			bw[n++] = v;
	}
	run_dev(bw, n, &ss, &count);
	free(bw);
	cr_assert_gt(count, 500);
	return sqrt(ss / (double)count);
}

Test(decode_sim, rate_model_beats_offset_and_window_on_the_simulator, .timeout = 120)
{
	struct vrec r;
	struct keep kr, ko, kw;
	struct t4_virtual_opts o = hard(13, 6 * SEC);

	vrec_open(&r, 23, EVENTS);
	vrec_run(&r, &o);
	t4_decoder_free(decode_log(r.path, T4_CLOCK_RATE, &kr));
	t4_decoder_free(decode_log(r.path, T4_CLOCK_OFFSET, &ko));
	t4_decoder_free(decode_log(r.path, T4_CLOCK_WINDOW, &kw));
	uint32_t ucf = 0;
	for (size_t i = 0; i < r.c.ds.n; i++)
		if (r.c.ds.v[i].kind == T4_DOM_UCF)
			ucf = r.c.ds.v[i].id;
	for (size_t i = 0; i < r.c.ds.n; i++) {
		uint32_t id = r.c.ds.v[i].id;
		struct err er = boundary(&r, &kr, id), eo = boundary(&r, &ko, id);
		cr_log_info("%s: boundary RMS rate %.1f ns (p99 %.1f), offset %.1f ns (p99 %.1f)",
			    r.c.ds.v[i].name, er.rms, er.p99, eo.rms, eo.p99);
		cr_assert_lt(er.rms * 10, eo.rms, "%s: rate %.1f vs offset %.1f", r.c.ds.v[i].name,
			     er.rms, eo.rms);
	}
	/* UCF mem_bytes_rd (counter 1: the clock is counter 0) */
	double cvr = steady_cv(&r, &kr, ucf, 1), cvw = steady_cv(&r, &kw, ucf, 1);
	cr_log_info("UCF read bandwidth CV in constant stretches: rate %.5f, window %.5f", cvr,
		    cvw);
	cr_assert_lt(cvr * 5, cvw, "CV rate %.5f vs window %.5f", cvr, cvw);
	free(kr.v);
	free(ko.v);
	free(kw.v);
	vrec_free(&r);
}
