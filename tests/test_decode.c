/* test_decode.c - the decoder (decode/): the convex-hull fit, largest
 * remainder, formulas, number formatting, the index, and whole synthetic
 * recordings (tests/decode_synth.h) whose every sample instant and count is
 * known exactly: placement accuracy, segments, the three clock models side
 * by side, missing / duplicated / reordered packets, large IDs, several
 * schedulers, phases with exact and grid boundaries, --grid conservation,
 * the time window, grid trigger IDs with gaps at overruns, slices on a
 * CLOCK_MONOTONIC reference.
 *
 * Tolerances are stated next to each assertion and derived from the
 * synthetic windows (0.3-3 us), never from wall-clock timing.
 */
#include "cli_testutil.h"
#include "decode_synth.h"
#include "probe.h"
#include "tmpdir_testutil.h"

#include <errno.h>
#include <inttypes.h>
#include <unistd.h>

#include "collector/collector.h"
#include "decode/decode_int.h"

#define MS 1000000ull

/* ---- the fit ---------------------------------------------------------------- */

Test(decode_fit, recovers_a_line_inside_every_window)
{
	struct t4_fit_pt p[48];
	struct t4_fit f;
	uint64_t rng = 7;

	for (int i = 0; i < 48; i++) {
		double x = i * 1.7e6; /* ticks */
		double t = 12345 + 0.5882352 * x; /* ns: a 1.7 GHz clock */
		double a = sy_unit(&rng) * 1500, b = sy_unit(&rng) * 1500;
		p[i] = (struct t4_fit_pt){ x, t - a, t + b };
	}
	dec_fit_hull(p, 48, &f);
	cr_assert(f.feasible);
	cr_assert_leq(f.b_min, f.b);
	cr_assert_leq(f.b, f.b_max);
	for (int i = 0; i < 48; i++) {
		double v = f.a + f.b * p[i].x;
		cr_assert(v >= p[i].lo - 1e-3 && v <= p[i].hi + 1e-3, "sample %d off its window", i);
	}
	cr_assert_lt(fabs(f.b / 0.5882352 - 1), 20e-6, "slope %.9f", f.b);
}

Test(decode_fit, a_kink_is_infeasible)
{
	struct t4_fit_pt p[32];
	struct t4_fit f;

	for (int i = 0; i < 32; i++) {
		double x = i * 1e6, t = i < 16 ? x : 16e6 + (x - 16e6) * 1.05; /* 5% step */
		p[i] = (struct t4_fit_pt){ x, t - 500, t + 500 };
	}
	dec_fit_hull(p, 32, &f);
	cr_assert_not(f.feasible);
	dec_fit_hull(p, 16, &f);
	cr_assert(f.feasible);
}

Test(decode_fit, wide_windows_cost_nothing)
{
	struct t4_fit_pt p[48];
	struct t4_fit tight, wide;

	for (int i = 0; i < 48; i++) {
		double t = 1000.0 * i;
		p[i] = (struct t4_fit_pt){ i * 2000.0, t - 100, t + 100 };
	}
	dec_fit_hull(p, 48, &tight);
	p[10].lo -= 50000; /* a read preempted for 50 us */
	p[30].hi += 80000;
	dec_fit_hull(p, 48, &wide);
	cr_assert(wide.feasible);
	cr_assert_float_eq(wide.b, tight.b, 1e-12);
	cr_assert_float_eq(wide.a, tight.a, 1e-6);
}

/* ---- largest remainder -------------------------------------------------------- */

Test(decode_apportion, conserves_and_gives_remainders_to_the_largest)
{
	uint64_t w[3] = { 1, 1, 1 }, out[3];
	t4_u128 keys[3];

	dec_apportion_value(10, w, 3, 3, out, keys);
	cr_assert_eq(out[0], 4);
	cr_assert_eq(out[1], 3);
	cr_assert_eq(out[2], 3);
	uint64_t w2[4] = { 10, 25, 40, 25 }, out2[4];
	t4_u128 keys2[4];
	dec_apportion_value(7, w2, 4, 100, out2, keys2); /* 0.7 1.75 2.8 1.75 */
	cr_assert_eq(out2[0] + out2[1] + out2[2] + out2[3], 7);
	cr_assert_eq(out2[0], 0); /* remainders .7 .75 .8 .75: three get one */
	cr_assert_eq(out2[1], 2);
	cr_assert_eq(out2[2], 3);
	cr_assert_eq(out2[3], 2);
	for (uint64_t v = 0; v < 2000; v += 37) {
		uint64_t w3[5] = { 3, 0, 17, 5, 1 }, o3[5];
		t4_u128 k3[5];
		dec_apportion_value(UINT64_MAX - v, w3, 5, 26, o3, k3);
		t4_u128 sum = 0;
		for (int j = 0; j < 5; j++)
			sum += o3[j];
		cr_assert(sum == UINT64_MAX - v);
		cr_assert_eq(o3[1], 0, "a zero weight gets nothing");
	}
}

/* ---- formulas ------------------------------------------------------------------ */

struct names {
	const struct t4_kind *k;
};

static int kind_lookup(void *ud, const char *name, size_t len)
{
	const struct t4_kind *k = ud;

	for (size_t i = 0; i < k->n_events; i++)
		if (strlen(k->events[i].name) == len && !strncmp(k->events[i].name, name, len))
			return (int)i;
	return -1;
}

Test(decode_expr, every_seed_formula_compiles_against_its_kind)
{
	size_t n;
	const struct t4_kind *k = t4_kinds(&n);

	for (size_t i = 0; i < n; i++) {
		size_t nf;
		const struct t4_formula *f = t4_kind_formulas(k[i].id, &nf, NULL);
		cr_assert_eq(nf, k[i].n_formulas);
		for (size_t j = 0; j < nf; j++) {
			struct t4_expr e;
			cr_assert_eq(dec_expr_compile(f[j].expr, kind_lookup, (void *)&k[i], &e), 0,
				     "%s %s: %s", k[i].label, f[j].name, f[j].expr);
		}
	}
}

static int two_names(void *ud, const char *name, size_t len)
{
	(void)ud;
	if (len == 9 && !strncmp(name, "cpu-clock", 9))
		return 0;
	if (len == 6 && !strncmp(name, "cycles", 6))
		return 1;
	return -1;
}

Test(decode_expr, evaluates_absent_and_zero_denominators)
{
	struct t4_expr e;
	double c[2] = { 500000, 3000 };

	cr_assert_eq(dec_expr_compile("cpu-clock / elapsed_ns * 100", two_names, NULL, &e), 0);
	cr_assert_float_eq(dec_expr_eval(&e, c, 1e6), 50.0, 1e-12);
	cr_assert_eq(dec_expr_compile("(cycles - 1000) / (2 * cycles)", two_names, NULL, &e), 0);
	cr_assert_float_eq(dec_expr_eval(&e, c, 1), 2000.0 / 6000.0, 1e-12);
	cr_assert_eq(dec_expr_compile("rd_req / cycles", two_names, NULL, &e), -ENOENT);
	cr_assert_eq(dec_expr_compile("cycles / ", two_names, NULL, &e), -EINVAL);
	cr_assert_eq(dec_expr_compile("(cycles", two_names, NULL, &e), -EINVAL);
	cr_assert_eq(dec_expr_compile("cycles / cpu-clock", two_names, NULL, &e), 0);
	c[0] = 0;
	cr_assert(isnan(dec_expr_eval(&e, c, 1)));
}

/* ---- number formatting ---------------------------------------------------------- */

static const char *fmt(double v, char *buf, size_t cap)
{
	FILE *f = fmemopen(buf, cap, "w");
	struct t4_wbuf w;

	cr_assert(f);
	cr_assert_eq(dec_wbuf_init(&w, f, 64), 0);
	dec_wbuf_f64(&w, v);
	dec_wbuf_flush(&w);
	dec_wbuf_free(&w);
	fclose(f);
	return buf;
}

Test(decode_fmt, metric_values_round_trip_to_nine_digits)
{
	char b[64];
	uint64_t rng = 3;

	cr_assert_str_eq(fmt(0, b, sizeof(b)), "0");
	cr_assert_str_eq(fmt(0.5, b, sizeof(b)), "0.5");
	cr_assert_str_eq(fmt(123.456, b, sizeof(b)), "123.456");
	cr_assert_str_eq(fmt(-2, b, sizeof(b)), "-2");
	cr_assert_str_eq(fmt(1e-7, b, sizeof(b)), "1e-7");
	cr_assert_str_eq(fmt(2.5e20, b, sizeof(b)), "2.5e+20");
	cr_assert_str_eq(fmt(999999999.6, b, sizeof(b)), "1000000000");
	for (int i = 0; i < 20000; i++) {
		double v = ldexp(sy_unit(&rng) + 0.5, (int)(sy_rand(&rng) % 120) - 60);
		double back = strtod(fmt(v, b, sizeof(b)), NULL);
		cr_assert_lt(fabs(back / v - 1), 6e-9, "%.17g -> %s", v, b);
	}
}

/* ---- index ------------------------------------------------------------------------ */

Test(decode_index, large_ids_and_the_status_packet_is_authoritative)
{
	struct t4_index *ix;
	struct t4_packet p = { 0 };

	cr_assert_eq(t4_index_new(&ix), 0);
	p.type = T4_PKT_EVENT;
	p.event.domain_id = 5000;
	p.event.index = 3;
	snprintf(p.event.name, sizeof(p.event.name), "rd_bytes");
	cr_assert_eq(t4_index_add(ix, &p), 0);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_RET;
	p.ret.domain_id = 5000;
	p.ret.n_counts = 4;
	p.ret.counts[3] = 7;
	p.ret.flags = T4_RET_READ_FAILED;
	cr_assert_eq(t4_index_add(ix, &p), 0);
	p.ret.flags = 0;
	p.ret.counts[3] = UINT64_MAX;
	cr_assert_eq(t4_index_add(ix, &p), 0);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_REF;
	p.ref.sched_id = 70000;
	p.ref.trigger_id = 9;
	cr_assert_eq(t4_index_add(ix, &p), 0);
	const struct t4_index_domain *d = t4_index_domain(ix, 5000);
	cr_assert(d);
	cr_assert_str_eq(t4_index_event(ix, 5000, 3)->name, "rd_bytes");
	cr_assert(d->totals[3] == (t4_u128)UINT64_MAX + 7, "totals are 128-bit");
	cr_assert_eq(t4_index_sched(ix, 70000)->last, 9);
	cr_assert_eq(t4_index_read_failures(ix), 1);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_STATUS;
	p.status.read_failures = 0; /* the recorder's own count wins */
	cr_assert_eq(t4_index_add(ix, &p), 0);
	cr_assert_eq(t4_index_read_failures(ix), 0);
	char buf[48];
	cr_assert_str_eq(t4_u128_str((t4_u128)UINT64_MAX + 7, buf, sizeof(buf)),
			 "18446744073709551622");
	t4_index_free(ix);
}

/* perf stat's table: an event is summed over the CPUs that count it,
 * its rate over the time they cover; each uncore PMU keeps its row. */
Test(decode_index, event_rows_sum_cpus_and_keep_pmus_apart)
{
	struct t4_index *ix;
	struct t4_packet p;
	struct t4_event_rows rows = { 0 };
	static const struct { uint32_t dom, kind; const char *pmu, *name; uint64_t v; } ev[] = {
		{ 0, T4_DOM_SOFTWARE, "software", "cpu-clock:u", 300 },
		{ 1, T4_DOM_SOFTWARE, "software", "cpu-clock:u", 500 },
		{ 2, T4_DOM_UCF, "nvidia_ucf_pmu_0", "mem_bytes_rd", 64 },
		{ 3, T4_DOM_UCF, "nvidia_ucf_pmu_1", "mem_bytes_rd", 128 },
	};

	cr_assert_eq(t4_index_new(&ix), 0);
	for (size_t i = 0; i < T4_ARRAY_LEN(ev); i++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_DOMAIN;
		p.domain.domain_id = ev[i].dom;
		p.domain.kind = ev[i].kind;
		cr_assert_eq(t4_index_add(ix, &p), 0);
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_EVENT;
		p.event.domain_id = ev[i].dom;
		snprintf(p.event.pmu, sizeof(p.event.pmu), "%s", ev[i].pmu);
		snprintf(p.event.name, sizeof(p.event.name), "%s", ev[i].name);
		cr_assert_eq(t4_index_add(ix, &p), 0);
		for (uint64_t k = 0; k < 2; k++) { /* 2 s apart: the rate's span */
			memset(&p, 0, sizeof(p));
			p.type = T4_PKT_RET;
			p.ret.domain_id = ev[i].dom;
			p.ret.trigger_id = k;
			p.ret.read_begin_ns = 1000000000ull + k * 2000000000ull + i;
			p.ret.n_counts = 1;
			p.ret.counts[0] = k ? ev[i].v : 0;
			cr_assert_eq(t4_index_add(ix, &p), 0);
		}
	}
	cr_assert_eq(t4_event_rows_from_index(ix, false, &rows), 0);
	cr_assert_eq(rows.n, 3);
	cr_assert_str_eq(rows.v[0].event, "cpu-clock:u");
	cr_assert_eq(rows.v[0].domains, 2);
	cr_assert(rows.v[0].total == 800);
	cr_assert_float_eq(t4_event_row_rate(&rows.v[0]), 400, 1e-9);
	cr_assert_str_eq(rows.v[1].pmu, "nvidia_ucf_pmu_0");
	cr_assert(rows.v[1].total == 64 && rows.v[2].total == 128);
	t4_event_rows_free(&rows);
	cr_assert_eq(t4_event_rows_from_index(ix, true, &rows), 0);
	cr_assert_eq(rows.n, 4, "per domain: one row per CPU");
	t4_event_rows_free(&rows);
	t4_index_free(ix);
}

/* ---- whole synthetic recordings ------------------------------------------------- */

static void two_clocks(struct sy *y, size_t n)
{
	memset(y, 0, sizeof(*y));
	y->seed = 42;
	y->n_triggers = n;
	y->n_doms = 2;
	y->dom[0] = (struct sy_dom){ .id = 1, .hz = 1.7e9, .ppm = 37, .bytes_per_ns = 12.5 };
	y->dom[1] = (struct sy_dom){ .id = 2, .hz = 0.9e9, .ppm = -410, .bytes_per_ns = 3.25 };
}

/* RMS and max of |placed - true| over domain d's interval ends. */
static void boundary_error(const struct sy *y, const struct keep *k, uint32_t id,
			   double *rms, double *max)
{
	double ss = 0, m = 0;
	size_t n = 0, di = 0;

	while (y->dom[di].id != id)
		di++;
	for (size_t i = 0; i < k->n; i++) {
		const struct civ *c = &k->v[i];
		if (c->domain_id != id)
			continue;
		double e = (double)c->end - (double)y->true_t[c->trigger * y->n_doms + di];
		ss += e * e;
		m = fmax(m, fabs(e));
		n++;
	}
	cr_assert_gt(n, 0);
	*rms = sqrt(ss / (double)n);
	*max = m;
}

/* Sum of counter c of domain id over the decoded intervals. */
static uint64_t sum_of(const struct keep *k, uint32_t id, int c)
{
	uint64_t s = 0;

	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].domain_id == id)
			s += k->v[i].counts[c];
	return s;
}

Test(decode_synth, steady_clocks_placed_exactly_and_totals_conserved)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { .want_metrics = true };
	double rms, max;

	two_clocks(&y, 3000);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(k.n, 2 * 2999);
	for (uint32_t id = 1; id <= 2; id++) {
		size_t di = id - 1, last = (y.n_triggers - 1) * y.n_doms + di;
		boundary_error(&y, &k, id, &rms, &max);
		/* windows of 0.3-3 us: the fit over 48 samples is ~20x tighter */
		cr_assert_lt(rms, 150, "domain %u: RMS %.1f ns", id, rms);
		cr_assert_lt(max, 1000, "domain %u: max %.1f ns", id, max);
		cr_assert_eq(sum_of(&k, id, 0), y.x[last] - y.x[di]);
		cr_assert_eq(sum_of(&k, id, 1), y.bytes[last] - y.bytes[di]);
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, id));
		double truth = y.dom[di].hz * (1 + y.dom[di].ppm / 1e6);
		cr_assert_lt(fabs(d->clock.freq_hz / truth - 1), 1e-6, "%u: %.3f Hz vs %.3f", id,
			     d->clock.freq_hz, truth);
		cr_assert_lt(fabs(d->clock.drift_ppm - y.dom[di].ppm), 1.0);
		cr_assert_eq(d->clock.segments, 1);
		cr_assert_eq(d->unanswered_carried + d->unanswered_lost + d->duplicates, 0);
	}
	/* intervals of a domain tile the axis: each starts where the last ended */
	uint64_t prev_end[3] = { 0 };
	for (size_t i = 0; i < k.n; i++) {
		const struct civ *c = &k.v[i];
		if (prev_end[c->domain_id])
			cr_assert_eq(c->start, prev_end[c->domain_id]);
		cr_assert_gt(c->end, c->start);
		prev_end[c->domain_id] = c->end;
		cr_assert_eq(c->flags, 0);
		cr_assert(isfinite(c->metric0), "rd_bw present: rd_bytes was recorded");
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* A domain that first appears after many others (a DRM client found
 * mid-run, a damaged first chunk) grows the index's tables: the domains
 * decoded so far must stay valid (issue 16: a use-after-free). */
Test(decode_synth, a_domain_appearing_after_many_others_keeps_the_earlier_ones)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	struct t4_packet *pk;
	size_t n = 0, mid = 0;

	two_clocks(&y, 400);
	sy_build(&y);
	for (size_t i = 0; i < y.n_pk && !mid; i++) /* the first packet of trigger 200 */
		if (y.pk[i].type == T4_PKT_REF && y.pk[i].ref.trigger_id == 200)
			mid = i;
	cr_assert_gt(mid, 0);
	pk = calloc(y.n_pk + 200, sizeof(*pk));
	cr_assert(pk);
	memcpy(pk, y.pk, mid * sizeof(*pk));
	n = mid;
	for (uint32_t id = 100; id < 140; id++) { /* 40 late domains: the tables move */
		struct t4_packet *p = &pk[n++];
		p->type = T4_PKT_DOMAIN;
		p->domain.domain_id = id;
		p->domain.kind = T4_DOM_DRM;
		p->domain.cpu = -1;
		p->domain.clock_event = -1;
		snprintf(p->domain.name, sizeof(p->domain.name), "late%u", id);
		p = &pk[n++];
		p->type = T4_PKT_RET;
		p->ret.domain_id = id;
		p->ret.trigger_id = 199;
		p->ret.flags = T4_RET_FIRST;
		p->ret.n_counts = 1;
	}
	memcpy(&pk[n], &y.pk[mid], (y.n_pk - mid) * sizeof(*pk));
	n += y.n_pk - mid;
	struct t4_decoder *dec = sy_decode(pk, n, &o, &k);
	for (uint32_t id = 1; id <= 2; id++) {
		size_t di = id - 1, last = (y.n_triggers - 1) * y.n_doms + di;
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, id));
		cr_assert_str_eq(d->name, id == 1 ? "dom1" : "dom2");
		cr_assert_eq(d->intervals, y.n_triggers - 1);
		cr_assert_eq(sum_of(&k, id, 1), y.bytes[last] - y.bytes[di]);
	}
	cr_assert_eq(t4_decoder_n_domains(dec), 42);
	t4_decoder_free(dec);
	free(k.v);
	free(pk);
	sy_free(&y);
}

Test(decode_synth, a_dvfs_step_cuts_a_segment)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	double rms, max;
	size_t ns;

	two_clocks(&y, 4000);
	y.dom[0].step_at_s = 1.2345;
	y.dom[0].step_factor = 0.85;
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const struct t4_clock_segment *sg = t4_decoder_segments(dec, sy_slot(dec, 1), &ns);
	cr_assert_eq(ns, 2, "segments: %zu", ns);
	double f = 1.7e9 * (1 + 37e-6);
	cr_assert_lt(fabs(sg[0].freq_hz / f - 1), 2e-6, "%.1f", sg[0].freq_hz);
	cr_assert_lt(fabs(sg[1].freq_hz / (f * 0.85) - 1), 2e-6, "%.1f", sg[1].freq_hz);
	cr_assert(sg[0].last_trigger >= 1230 && sg[0].last_trigger <= 1236, "cut at %" PRIu64,
		  sg[0].last_trigger);
	boundary_error(&y, &k, 1, &rms, &max);
	cr_assert_lt(rms, 200, "RMS %.1f ns across the step", rms);
	cr_assert_eq(t4_decoder_segments(dec, sy_slot(dec, 2), &ns) != NULL, true);
	cr_assert_eq(ns, 1);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* The three clock models side by side on hard clocks: +-500 ppm drift, a
 * DVFS step, 5% of the reads preempted for 20-100 us. The rate model's
 * boundary error must be 10x below the offset model's (RMS), and a
 * constant-traffic domain's per-interval bandwidth 5x steadier (CV) than
 * with raw window midpoints. */
static double bw_cv(const struct keep *k, uint32_t id)
{
	double s = 0, ss = 0;
	size_t n = 0;

	for (size_t i = 0; i < k->n; i++) {
		const struct civ *c = &k->v[i];
		if (c->domain_id != id)
			continue;
		double bw = (double)c->counts[1] / (double)c->elapsed;
		s += bw;
		ss += bw * bw;
		n++;
	}
	double mean = s / (double)n;
	return sqrt(ss / (double)n - mean * mean) / mean;
}

Test(decode_synth, rate_model_beats_offset_and_window)
{
	struct sy y;
	struct keep kr, ko, kw;
	struct t4_decode_opts o = { 0 };
	double rr, ro, rw, mr, mo, mw;

	two_clocks(&y, 6000);
	y.dom[0].ppm = 500;
	y.dom[1].ppm = -500;
	y.dom[1].step_at_s = 2.5;
	y.dom[1].step_factor = 0.7;
	y.preempt_prob = 0.05;
	y.preempt_min = 20000;
	y.preempt_max = 100000;
	sy_build(&y);
	o.model = T4_CLOCK_RATE;
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &kr));
	o.model = T4_CLOCK_OFFSET;
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &ko));
	o.model = T4_CLOCK_WINDOW;
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &kw));
	for (uint32_t id = 1; id <= 2; id++) {
		boundary_error(&y, &kr, id, &rr, &mr);
		boundary_error(&y, &ko, id, &ro, &mo);
		boundary_error(&y, &kw, id, &rw, &mw);
		cr_log_info("domain %u boundary RMS: rate %.1f ns, offset %.1f ns, window %.1f ns",
			    id, rr, ro, rw);
		cr_assert_lt(rr * 10, ro, "domain %u: rate %.1f vs offset %.1f", id, rr, ro);
		double cr = bw_cv(&kr, id), cw = bw_cv(&kw, id);
		cr_log_info("domain %u bandwidth CV: rate %.5f, window %.5f", id, cr, cw);
		cr_assert_lt(cr * 5, cw, "domain %u: CV rate %.5f vs window %.5f", id, cr, cw);
	}
	free(kr.v);
	free(ko.v);
	free(kw.v);
	sy_free(&y);
}

/* Remove the packets for which drop(p, ud) says so. */
static void drop_packets(struct sy *y, bool (*drop)(const struct t4_packet *p, const void *ud),
			 const void *ud)
{
	size_t w = 0;

	for (size_t i = 0; i < y->n_pk; i++)
		if (!drop(&y->pk[i], ud))
			y->pk[w++] = y->pk[i];
	y->n_pk = w;
}

static bool every_7th_of_1(const struct t4_packet *p, const void *ud)
{
	(void)ud;
	return p->type == T4_PKT_RET && p->ret.domain_id == 1 && p->ret.trigger_id % 7 == 3;
}

Test(decode_synth, a_missing_return_makes_one_spanning_interval)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 1000);
	sy_build(&y);
	/* the next packet carries a dropped one's counts (record does so) */
	for (size_t i = 0; i < y.n_pk; i++) {
		struct t4_packet *p = &y.pk[i];
		if (p->type == T4_PKT_RET && p->ret.domain_id == 1 && p->ret.trigger_id % 7 == 4)
			for (int c = 0; c < 2; c++)
				p->ret.counts[c] = y.bytes[0] * 0 +
					(c ? y.bytes[p->ret.trigger_id * 2] - y.bytes[(p->ret.trigger_id - 2) * 2]
					   : y.x[p->ret.trigger_id * 2] - y.x[(p->ret.trigger_id - 2) * 2]);
	}
	drop_packets(&y, every_7th_of_1, NULL);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, 1));
	size_t last = (y.n_triggers - 1) * 2;
	cr_assert_eq(sum_of(&k, 1, 1), y.bytes[last] - y.bytes[0], "never double-counted");
	cr_assert_eq(d->unanswered_carried, 143);
	cr_assert_eq(d->unanswered_lost, 0);
	size_t spans = 0;
	for (size_t i = 0; i < k.n; i++)
		if (k.v[i].domain_id == 1 && (k.v[i].flags & T4_IV_SPANS)) {
			spans++;
			cr_assert_eq(k.v[i].first_trigger + 1, k.v[i].trigger);
		}
	cr_assert_eq(spans, 143);
	cr_assert_not(t4_decoder_damage_stats(dec)->partial);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

Test(decode_synth, damage_between_samples_marks_the_interval_partial)
{
	struct sy y;
	struct keep k;
	struct t4_decoder *dec;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 600);
	sy_build(&y);
	memset(&k, 0, sizeof(k));
	cr_assert_eq(t4_decoder_new(&dec, &o, &keep_ops, &k), 0);
	for (size_t i = 0; i < y.n_pk; i++) {
		const struct t4_packet *p = &y.pk[i];
		bool lost = p->type == T4_PKT_RET && p->ret.trigger_id >= 300 && p->ret.trigger_id < 305;
		if (p->type == T4_PKT_RET && p->ret.trigger_id == 300 && p->ret.domain_id == 1)
			t4_decoder_damage(dec, 1234, "chunk at offset 1234: payload CRC mismatch");
		if (!lost)
			cr_assert_eq(t4_decoder_feed(dec, p), 0);
	}
	cr_assert_eq(t4_decoder_finish(dec, NULL), 0);
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, 1));
	cr_assert_eq(d->unanswered_lost, 5);
	cr_assert(t4_decoder_damage_stats(dec)->partial);
	size_t partial = 0;
	for (size_t i = 0; i < k.n; i++)
		partial += !!(k.v[i].flags & T4_IV_PARTIAL);
	cr_assert_eq(partial, 2, "one per domain");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* Duplicates and returns out of order within the look-ahead decode to
 * exactly what the clean stream gives. */
Test(decode_synth, duplicates_and_reordering_change_nothing)
{
	struct sy y;
	struct keep clean, messy;
	struct t4_decode_opts o = { 0 };
	uint64_t rng = 99;

	two_clocks(&y, 1500);
	sy_build(&y);
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &clean));
	struct t4_packet *m = malloc(2 * y.n_pk * sizeof(*m));
	size_t n = 0;
	for (size_t i = 0; i < y.n_pk; i++) {
		m[n++] = y.pk[i];
		if (y.pk[i].type == T4_PKT_RET && sy_rand(&rng) % 20 == 0)
			m[n++] = y.pk[i]; /* a second copy */
	}
	for (size_t i = 10; i + 12 < n; i++) /* swaps a few packets apart */
		if (sy_rand(&rng) % 10 == 0) {
			size_t j = i + 1 + sy_rand(&rng) % 10;
			struct t4_packet t = m[i];
			m[i] = m[j];
			m[j] = t;
		}
	struct t4_decoder *dec = sy_decode(m, n, &o, &messy);
	cr_assert_eq(messy.n, clean.n);
	/* same intervals, possibly emitted in another order across domains */
	for (uint32_t id = 1; id <= 2; id++) {
		size_t a = 0, b = 0;
		for (;;) {
			while (a < clean.n && clean.v[a].domain_id != id)
				a++;
			while (b < messy.n && messy.v[b].domain_id != id)
				b++;
			if (a == clean.n || b == messy.n)
				break;
			cr_assert_eq(clean.v[a].trigger, messy.v[b].trigger);
			cr_assert_eq(clean.v[a].start, messy.v[b].start);
			cr_assert_eq(clean.v[a].end, messy.v[b].end);
			cr_assert_eq(clean.v[a].counts[1], messy.v[b].counts[1]);
			a++;
			b++;
		}
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, id));
		cr_assert_gt(d->duplicates, 0);
	}
	t4_decoder_free(dec);
	free(m);
	free(clean.v);
	free(messy.v);
	sy_free(&y);
}

Test(decode_synth, large_ids_and_two_schedulers)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 800);
	y.dom[0].id = 5000;
	y.dom[1].id = 70001;
	y.dom[1].sched = 1;
	sy_bookmark(&y, 7, "zero", 0, 0);
	sy_bookmark(&y, 100000, "one", 0, 0);
	sy_build(&y);
	/* scheduler 1's references carry another bookmark: the phases are the
	 * phase scheduler's (the lowest ID) for every domain, one timeline */
	for (size_t i = 0; i < y.n_pk; i++)
		if (y.pk[i].type == T4_PKT_REF)
			y.pk[i].ref.bookmark_id = y.pk[i].ref.sched_id ? 100000 : 7;
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(k.n, 2 * 799);
	for (size_t i = 0; i < k.n; i++)
		cr_assert_eq(k.v[i].bookmark, 7u, "domain %u", k.v[i].domain_id);
	cr_assert_str_eq(t4_decoder_bookmark(dec, 100000), "one");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

Test(decode_synth, triggers_without_references_keep_the_bookmark)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	size_t w = 0;

	two_clocks(&y, 500);
	sy_bookmark(&y, 1, "one", 0, 0);
	sy_bookmark(&y, 2, "two", 100, 0);
	sy_build(&y);
	for (size_t i = 0; i < y.n_pk; i++) {
		struct t4_packet *p = &y.pk[i];
		if (p->type == T4_PKT_REF && p->ref.trigger_id >= 200 && p->ref.trigger_id < 210)
			continue; /* lost */
		y.pk[w++] = *p;
	}
	y.n_pk = w;
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	size_t noref = 0;
	for (size_t i = 0; i < k.n; i++) {
		const struct civ *c = &k.v[i];
		cr_assert_eq(c->bookmark, c->trigger >= 100 ? 2u : 1u, "trigger %" PRIu64, c->trigger);
		noref += !!(c->flags & T4_IV_NO_REF);
	}
	cr_assert_eq(noref, 20);
	cr_assert_eq(t4_decoder_damage_stats(dec)->refs_missing, 10);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* Bookmarks with set_ns: phases start exactly there, a phase shorter than
 * one period exists, and the phases' totals add up to the domain's. */
Test(decode_synth, exact_phases_apportion_by_overlap)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 1000);
	uint64_t t0 = y.t0 = 5000000000ull;
	/* a: from the start; b: 300.4 ms; c: 300.7 ms (0.3 ms long); b again 301.0 */
	sy_bookmark(&y, 1, "a", 0, t0 - 5000);
	sy_bookmark(&y, 2, "b", 301, t0 + 300400000);
	sy_bookmark(&y, 3, "c", 301, t0 + 300700000);
	sy_bookmark(&y, 2, "b", 302, t0 + 301000000);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_n_phases(dec), 4);
	const struct t4_dec_phase *c = t4_decoder_phase_at(dec, 2);
	cr_assert_str_eq(c->name, "c");
	cr_assert(c->exact);
	cr_assert_eq(c->start_ns, t0 + 300700000);
	cr_assert_eq(c->end_ns - c->start_ns, 300000);
	cr_assert_eq(t4_decoder_phase_at(dec, 3)->occurrence, 2);
	for (uint32_t id = 1; id <= 2; id++) {
		size_t slot = sy_slot(dec, id);
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, slot);
		t4_u128 sum = 0;
		uint64_t el, el_sum = 0;
		for (size_t p = 0; p < t4_decoder_n_phases(dec); p++) {
			const t4_u128 *tot = t4_decoder_phase_totals(dec, p, slot, &el);
			cr_assert(tot);
			sum += tot[1];
			el_sum += el;
		}
		cr_assert(sum == d->totals[1], "phases add up exactly");
		const t4_u128 *tc = t4_decoder_phase_totals(dec, 2, slot, &el);
		/* 0.3 ms of traffic, within one interval's rounding */
		double want = y.dom[id - 1].bytes_per_ns * 300000;
		cr_assert_lt(fabs((double)tc[1] - want), want * 0.02 + 2, "%g vs %g", (double)tc[1], want);
		cr_assert_eq(el, 300000);
		cr_assert_eq(el_sum, d->last_ns - d->first_ns);
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* A bookmark timed elsewhere (libt410trace's probe) reaches the log with
 * the trigger that takes it, here 200 triggers after its time (the
 * reference packets in between still carry the old one): the counters are
 * split at its time all the same. */
Test(decode_synth, a_late_timed_bookmark_splits_the_counters_at_its_time)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 600);
	uint64_t t0 = y.t0 = 5000000000ull;
	sy_bookmark(&y, 1, "a", 0, t0 - 5000);
	sy_bookmark(&y, 2, "b", 501, t0 + 300400000); /* set at 300.4 ms */
	sy_build(&y);
	/* a log with the CPU/GPU activity (where probe bookmarks come from):
	 * a thread's name right after the session */
	struct t4_packet *pk = calloc(y.n_pk + 1, sizeof(*pk));
	cr_assert_not_null(pk);
	pk[0] = y.pk[0];
	pk[1].type = T4_PKT_TASK;
	pk[1].task = (struct t4_task_pkt){ .pid = 77, .tid = 77, .ppid = 1, .mono_ns = t0 };
	memcpy(pk + 2, y.pk + 1, (y.n_pk - 1) * sizeof(*pk));
	struct t4_decoder *dec = sy_decode(pk, y.n_pk + 1, &o, &k);
	cr_assert_eq(t4_decoder_n_phases(dec), 2);
	cr_assert_eq(t4_decoder_phase_at(dec, 1)->start_ns, t0 + 300400000);
	for (uint32_t id = 1; id <= 2; id++) {
		size_t slot = sy_slot(dec, id);
		uint64_t el_a, el_b;
		const t4_u128 *ta = t4_decoder_phase_totals(dec, 0, slot, &el_a);
		const t4_u128 *tb = t4_decoder_phase_totals(dec, 1, slot, &el_b);
		cr_assert(ta && tb);
		/* a: the domain's intervals from its first sample to 300.4 ms */
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, slot);
		cr_assert_eq(el_a, t0 + 300400000 - d->first_ns, "domain %u: a has %llu ns", id,
			     (unsigned long long)el_a);
		double want = y.dom[id - 1].bytes_per_ns * 300400000;
		cr_assert_lt(fabs((double)ta[1] - want), want * 0.01, "%g vs %g", (double)ta[1], want);
		cr_assert_gt(el_b, 0);
	}
	t4_decoder_free(dec);
	free(k.v);
	free(pk);
	sy_free(&y);
}

Test(decode_synth, phases_from_reference_packets_in_older_logs)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 900);
	sy_bookmark(&y, 1, "p1", 0, 0);
	sy_bookmark(&y, 2, "p2", 300, 0);
	sy_bookmark(&y, 1, "p1", 600, 0);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_n_phases(dec), 3);
	const struct t4_dec_phase *p = t4_decoder_phase_at(dec, 1);
	cr_assert_str_eq(p->name, "p2");
	cr_assert_not(p->exact);
	/* closing convention: trigger 300's interval starts at trigger 299 */
	cr_assert_eq(p->start_ns, y.t0 + 299 * y.period);
	cr_assert_eq(p->triggers, 300);
	cr_assert_eq(t4_decoder_phase_at(dec, 2)->occurrence, 2);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

Test(decode_synth, grid_cells_line_up_and_conserve_every_total)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { .grid_ns = 2500000 }; /* 2.5 ms cells, 1 ms period */

	two_clocks(&y, 1200);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	uint64_t origin = t4_decoder_origin_ns(dec);
	for (uint32_t id = 1; id <= 2; id++) {
		size_t di = id - 1, last = (y.n_triggers - 1) * 2 + di;
		cr_assert_eq(sum_of(&k, id, 0), y.x[last] - y.x[di]);
		cr_assert_eq(sum_of(&k, id, 1), y.bytes[last] - y.bytes[di]);
	}
	/* whole cells but the first and the last of each domain, which cover
	 * only the time from its first sample, to its last */
	size_t first[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX }, last[3] = { 0 };
	for (size_t i = 0; i < k.n; i++) {
		uint32_t id = k.v[i].domain_id;
		first[id] = first[id] == SIZE_MAX ? i : first[id];
		last[id] = i;
	}
	for (size_t i = 0; i < k.n; i++) {
		const struct civ *c = &k.v[i];
		bool edge = i == first[c->domain_id] || i == last[c->domain_id];
		cr_assert(c->flags & T4_IV_GRID);
		cr_assert_eq((c->start - origin) / o.grid_ns, (c->end - 1 - origin) / o.grid_ns,
			     "a cell across the grid");
		if (!edge) {
			cr_assert_eq((c->start - origin) % o.grid_ns, 0);
			cr_assert_eq(c->end - c->start, o.grid_ns);
		}
		cr_assert_eq(c->elapsed, c->end - c->start, "the time its counts cover");
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

Test(decode_synth, time_window_and_phase_filters)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 1000);
	y.t0 = 5000000000ull;
	sy_bookmark(&y, 1, "warm", 0, y.t0 - 1000);
	sy_bookmark(&y, 2, "hot", 401, y.t0 + 400500000);
	sy_bookmark(&y, 1, "warm", 701, y.t0 + 700500000);
	sy_build(&y);
	cr_assert_eq(t4_timepoint_parse("200ms", &o.from), 0);
	cr_assert_eq(t4_timepoint_parse("0.3s", &o.to), 0);
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &k));
	cr_assert(k.n >= 2 * 98 && k.n <= 2 * 101, "%zu intervals in 100 ms", k.n);
	for (size_t i = 0; i < k.n; i++) {
		uint64_t mid = k.v[i].start + (k.v[i].end - k.v[i].start) / 2;
		cr_assert(mid >= y.t0 + 200 * MS && mid < y.t0 + 300 * MS);
	}
	free(k.v);
	memset(&o, 0, sizeof(o));
	cr_assert_eq(t4_timepoint_parse("hot", &o.from), 0);
	cr_assert_eq(t4_timepoint_parse("hot", &o.to), 0);
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &k));
	cr_assert(k.n >= 2 * 298 && k.n <= 2 * 301, "%zu intervals of 'hot'", k.n);
	free(k.v);
	memset(&o, 0, sizeof(o));
	o.phase = "warm";
	t4_decoder_free(sy_decode(y.pk, y.n_pk, &o, &k));
	size_t cut = 0;
	for (size_t i = 0; i < k.n; i++) {
		/* only warm: the intervals holding a change at 400.5 or 700.5 ms
		 * give their warm piece, cut at the change */
		uint64_t s = k.v[i].start, e = k.v[i].end;
		cr_assert_eq(k.v[i].bookmark, 1);
		cr_assert(e <= y.t0 + 400500000 || s >= y.t0 + 700500000, "[%" PRIu64 ", %" PRIu64
			  ") outside the warm phases", s - y.t0, e - y.t0);
		cut += e == y.t0 + 400500000 || s == y.t0 + 700500000;
	}
	cr_assert_eq(cut, 4, "%zu pieces cut at a change (2 domains x 2 changes)", cut);
	cr_assert_eq(k.n, 2 * (999 - 300) + 2, "%zu warm pieces", k.n);
	free(k.v);
	cr_assert_eq(t4_timepoint_parse("", &o.from), -EINVAL);
	cr_assert_eq(t4_timepoint_parse("12parsecs", &o.from), -EINVAL);
	sy_free(&y);
}

Test(decode_synth, reference_clocked_domains_use_their_windows)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 300);
	y.dom[1].reference_clocked = true;
	y.dom[1].kind = T4_DOM_SOFTWARE;
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, sy_slot(dec, 2));
	cr_assert(d->clock.reference_clocked);
	cr_assert_eq(d->clock.model, T4_CLOCK_WINDOW);
	cr_assert_str_eq(d->kind_label, "software");
	for (size_t i = 0; i < y.n_pk; i++) {
		const struct t4_packet *p = &y.pk[i];
		if (p->type != T4_PKT_RET || p->ret.domain_id != 2 || !p->ret.trigger_id)
			continue;
		bool found = false;
		for (size_t j = 0; j < k.n && !found; j++)
			if (k.v[j].domain_id == 2 && k.v[j].trigger == p->ret.trigger_id) {
				cr_assert_eq(k.v[j].end, p->ret.read_begin_ns +
						 (p->ret.read_end_ns - p->ret.read_begin_ns) / 2);
				found = true;
			}
		cr_assert(found);
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* ---- CPU and GPU slices ----------------------------------------------------------- */

static void add_pkt(struct sy *y, const struct t4_packet *p)
{
	*sy_push(y) = *p;
}

/* Slices are timed on MONOTONIC: the reference packets' mono - ref offset
 * (here 1000 ns growing by 1 ns per ms: NTP slew) converts them exactly,
 * phases get the workload's on-CPU time, and GPU jobs of one context are
 * serialized (a job queued behind another starts when it ends). */
Test(decode_slices, converted_by_reference_packets_and_summed_per_phase)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	struct t4_packet p;

	two_clocks(&y, 600);
	y.t0 = 5000000000ull;
	sy_bookmark(&y, 1, "a", 0, y.t0 - 1000);
	sy_bookmark(&y, 2, "b", 301, y.t0 + 300500000);
	sy_build(&y);
	for (size_t i = 0; i < y.n_pk; i++)
		if (y.pk[i].type == T4_PKT_REF)
			y.pk[i].ref.mono_ns = y.pk[i].ref.ref_ns + 1000 + y.pk[i].ref.trigger_id;
	uint64_t mono0 = y.t0 + 1000; /* mono at ref t0 */
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_TASK;
	p.task = (struct t4_task_pkt){ .pid = 77, .tid = 78, .ppid = 1, .mono_ns = mono0 };
	snprintf(p.task.name, sizeof(p.task.name), "worker");
	add_pkt(&y, &p);
	/* the thread runs 2 ms of every 10 ms, from 5 ms into the recording */
	for (int i = 0; i < 55; i++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_CPU_SLICE;
		uint64_t at = 5000000 + (uint64_t)i * 10000000;
		p.cpu_slice = (struct t4_cpu_slice_pkt){ 1, 77, 78, mono0 + at + at / 1000000,
							  mono0 + at + 2000000 + (at + 2000000) / 1000000, 0 };
		add_pkt(&y, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_GPU_CTX;
	p.gpu_ctx.context = 9;
	snprintf(p.gpu_ctx.driver, sizeof(p.gpu_ctx.driver), "fake");
	snprintf(p.gpu_ctx.timeline, sizeof(p.gpu_ctx.timeline), "gfx");
	add_pkt(&y, &p);
	/* two jobs submitted together: 100..110 ms and (queued) ..120 ms */
	for (int j = 0; j < 2; j++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_GPU_SLICE;
		uint64_t s = 100000000, e = 110000000 + (uint64_t)j * 10000000;
		p.gpu_slice = (struct t4_gpu_slice_pkt){ 9, 1 + (uint64_t)j, 77, 78,
							  mono0 + s + s / 1000000,
							  mono0 + e + e / 1000000, T4_GPU_FROM_SUBMIT };
		add_pkt(&y, &p);
	}
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const struct t4_dec_slices *st = t4_decoder_slice_stats(dec);
	cr_assert_eq(st->cpu, 55);
	cr_assert_eq(st->gpu, 2);
	cr_assert_eq(st->unplaced, 0);
	cr_assert_eq(t4_decoder_n_phases(dec), 2);
	const struct t4_dec_phase *a = t4_decoder_phase_at(dec, 0), *b = t4_decoder_phase_at(dec, 1);
	cr_assert_str_eq(b->name, "b");
	/* a: 30 slices of 2 ms (5..295 ms), then half of the one at 295..297? no:
	 * 295 ms starts a slice ending 297 ms, all before 300.5 ms */
	cr_assert_eq(a->cpu_ns, 30 * 2000000ull, "a: %llu", (unsigned long long)a->cpu_ns);
	cr_assert_eq(b->cpu_ns, 25 * 2000000ull, "b: %llu", (unsigned long long)b->cpu_ns);
	cr_assert_eq(a->threads, 1);
	struct t4_dec_gpu_busy g[4];
	cr_assert_eq(t4_decoder_phase_gpu(dec, 0, g, 4), 1);
	cr_assert_eq(g[0].busy_ns, 20000000, "union of the jobs: 100..120 ms");
	cr_assert_str_eq(g[0].timeline, "gfx");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* A bookmark timed elsewhere (libt410trace's probe, stamped in the kernel)
 * reaches the log with the trigger that takes it, here 60 ms after its
 * time, while the slices around its time came before it (each right after
 * the reference packet that covers its end): they still go to the phase
 * their time says. */
Test(decode_slices, a_late_timed_bookmark_still_splits_the_slices)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	struct t4_packet *pk;
	size_t n = 0;
	int next = 0;

	two_clocks(&y, 600);
	y.t0 = 5000000000ull;
	sy_bookmark(&y, 1, "a", 0, y.t0 - 1000);
	sy_bookmark(&y, 2, "b", 360, y.t0 + 300500000); /* set at 300.5 ms */
	sy_build(&y);
	cr_assert_not_null(pk = calloc(y.n_pk + 60, sizeof(*pk)));
	for (size_t i = 0; i < y.n_pk; i++) {
		struct t4_packet *p = &pk[n++];
		*p = y.pk[i];
		if (p->type == T4_PKT_SESSION)
			p->session.ref_clock = T4_REFCLK_MONOTONIC;
		if (p->type != T4_PKT_REF)
			continue;
		p->ref.mono_ns = p->ref.ref_ns;
		/* the thread runs 2 ms of every 10 ms, from 5 ms */
		for (uint64_t at; next < 55 && (at = y.t0 + 5000000 + (uint64_t)next * 10000000) +
						       2000000 <= p->ref.ref_ns; next++) {
			pk[n].type = T4_PKT_CPU_SLICE;
			pk[n++].cpu_slice = (struct t4_cpu_slice_pkt){ 1, 77, 78, at, at + 2000000, 0 };
		}
	}
	cr_assert_eq(next, 55);
	struct t4_decoder *dec = sy_decode(pk, n, &o, &k);
	cr_assert_eq(t4_decoder_slice_stats(dec)->cpu, 55);
	cr_assert_eq(t4_decoder_n_phases(dec), 2);
	const struct t4_dec_phase *a = t4_decoder_phase_at(dec, 0), *b = t4_decoder_phase_at(dec, 1);
	cr_assert_str_eq(b->name, "b");
	cr_assert_eq(a->cpu_ns, 30 * 2000000ull, "a: %llu", (unsigned long long)a->cpu_ns);
	cr_assert_eq(b->cpu_ns, 25 * 2000000ull, "b: %llu", (unsigned long long)b->cpu_ns);
	t4_decoder_free(dec);
	free(pk);
	free(k.v);
	sy_free(&y);
}

/* Write packets into a log file through the real writer. */
static void write_log(const char *path, const struct t4_packet *pk, size_t n)
{
	struct t4_log *log;
	struct t4_ring *ring;
	struct t4_log_opts lo = { .path = path };

	cr_assert_eq(t4_log_open(&log, &lo), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_ring(log, 1 << 20, T4_RING_WAIT, &ring), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_start(log), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(t4_ring_put(ring, &pk[i]), 0);
	struct t4_status_pkt st = { .triggers = 100, .lost_events = 3 };
	cr_assert_eq(t4_log_close(log, &st, NULL), 0, "%s", t4_errmsg());
}

/* A Python check script into dir/name. */
static void py(const char *dir, const char *name, const char *code)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(t4_write_small_file(path, code), 0, "%s", t4_errmsg());
}

/* The slices through the binary: -f phases-csv read by Python's csv module,
 * -f jsonl slice lines by its json module, and the summary's WORKLOAD table
 * and lost events. */
Test(decode_slices, phases_csv_and_jsonl_read_back_by_python)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], out[4096];
	struct cli_io io = { .dir = dir, .out = out, .cap = sizeof(out), .merge_err = true };
	struct sy y;
	struct t4_packet p;

	cli_bin();
	if (!t4t_have_cmds("python3"))
		cr_skip_test("python3 missing");
	t4t_tmpdir(dir, sizeof(dir), "t4slices");
	snprintf(path, sizeof(path), "%s/s.t4t", dir);
	two_clocks(&y, 100);
	sy_bookmark(&y, 1, "only", 0, 0);
	sy_build(&y);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_TASK;
	p.task = (struct t4_task_pkt){ .pid = 5, .tid = 6, .mono_ns = y.t0 };
	snprintf(p.task.name, sizeof(p.task.name), "a,b \"c\"");
	add_pkt(&y, &p);
	for (int i = 0; i < 10; i++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_CPU_SLICE;
		p.cpu_slice = (struct t4_cpu_slice_pkt){ (uint32_t)i % 2, 5, 6,
			y.t0 + 1000 + (uint64_t)i * 5000000, y.t0 + 1000 + (uint64_t)i * 5000000 + 1000000, 0 };
		add_pkt(&y, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_GPU_SLICE;
	p.gpu_slice = (struct t4_gpu_slice_pkt){ 4, 1, 5, 6, y.t0 + 1000 + 3000000,
						  y.t0 + 1000 + 9000000, T4_GPU_FROM_RUN };
	add_pkt(&y, &p);
	write_log(path, y.pk, y.n_pk);
	py(dir, "phases.py",
	   "import csv, sys\n"
	   "r = list(csv.reader(sys.stdin))\n"
	   "assert r[0] == ['start_ns','end_ns','kind','cpu','pid','tid','name','context'], r[0]\n"
	   "cpu = [x for x in r[1:] if x[2] == 'cpu']; gpu = [x for x in r[1:] if x[2] == 'gpu']\n"
	   "assert len(cpu) == 10 and len(gpu) == 1, (len(cpu), len(gpu))\n"
	   "assert all(x[6] == 'a,b ' + chr(34) + 'c' + chr(34) for x in cpu), cpu[0]\n"
	   "assert all(int(x[1]) - int(x[0]) == 1000000 for x in cpu)\n"
	   "assert gpu[0][7] == '4' and gpu[0][3] == '' and int(gpu[0][1]) - int(gpu[0][0]) == 6000000\n");
	py(dir, "jsonl.py",
	   "import json, sys\n"
	   "rows = [json.loads(l) for l in sys.stdin]\n"
	   "s = [x for x in rows if 'slice' in x]\n"
	   "assert len(s) == 11 and s[-1]['slice'] == 'gpu' and s[-1]['context'] == 4, s[-1]\n"
	   "assert all(x['bookmark'] == 'only' for x in s)\n");
	cr_assert_eq(cli_exec(&io, "\"$B\" decode s.t4t -f phases-csv | python3 phases.py"), 0, "%s",
		     out);
	cr_assert_eq(cli_exec(&io, "\"$B\" decode s.t4t -f jsonl | python3 jsonl.py"), 0, "%s", out);
	cr_assert_eq(cli_exec(&io, "\"$B\" decode s.t4t | grep -q WORKLOAD && "
				   "\"$B\" decode s.t4t | grep -q '3 lost before the log'"),
		     0, "summary: %s", out);
	sy_free(&y);
	t4_rmtree(dir);
}

/* Thousands of phase changes (more than the per-phase totals kept one by
 * one): every phase name's totals still add up exactly to the domain's. */
Test(decode_synth, many_phases_keep_exact_name_totals)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 5000);
	y.t0 = 5000000000ull;
	y.period = 1000000;
	for (uint64_t t = 0; t < 4999; t++) /* a, b, c, a, ... set mid-interval */
		sy_bookmark(&y, 1 + (uint32_t)(t % 3), t % 3 == 0 ? "a" : t % 3 == 1 ? "b" : "c",
			    t + 1, y.t0 + t * y.period + 400000);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_gt(t4_decoder_n_phases(dec), 4096);
	uint64_t el;
	cr_assert_null(t4_decoder_phase_totals(dec, 4500, 0, &el), "past the listed ones");
	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		t4_u128 sum = 0;
		uint64_t el_sum = 0;
		for (uint32_t b = 0; b <= 3; b++) { /* 0: before the first bookmark */
			const t4_u128 *t = t4_decoder_name_totals(dec, b, i, &el);
			cr_assert(t);
			sum += t[1];
			el_sum += el;
			cr_assert(!b || el > (d->last_ns - d->first_ns) / 3 - 1000000, "%u: %llu", b,
				  (unsigned long long)el);
		}
		cr_assert(sum == d->totals[1], "name totals add up exactly");
		cr_assert_eq(el_sum, d->last_ns - d->first_ns);
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* ---- gauges and the DRM domain ------------------------------------------------ */

/* A DRM domain (FORMAT 6.2): render busy ns (cumulative), its capacity and a
 * memory level (gauges). Busy % = busy / elapsed / capacity; gauges are
 * levels in intervals, time-weighted means in phases and --grid cells. */
static void drm_stream(struct sy *y, uint64_t n)
{
	static const char *const names[] = { "c7.engine.render", "c7.capacity.render",
					     "c7.memory.vram" };
	struct t4_packet *p = sy_push(y);

	y->period = 1000000;
	p->type = T4_PKT_DOMAIN;
	p->domain = (struct t4_domain_pkt){ .domain_id = 3, .kind = T4_DOM_DRM, .cpu = -1,
					    .clock_event = -1 };
	snprintf(p->domain.name, sizeof(p->domain.name), "drm");
	for (uint32_t e = 0; e < 3; e++) {
		p = sy_push(y);
		p->type = T4_PKT_EVENT;
		p->event.domain_id = 3;
		p->event.index = e;
		p->event.flags = e ? T4_EV_GAUGE : 0;
		snprintf(p->event.pmu, sizeof(p->event.pmu), "drm");
		snprintf(p->event.name, sizeof(p->event.name), "%s", names[e]);
	}
	for (uint64_t k = 0; k < n; k++) {
		sy_ref(y, 0, k, 0);
		p = sy_push(y);
		p->type = T4_PKT_RET;
		p->ret.trigger_id = k;
		p->ret.domain_id = 3;
		p->ret.read_begin_ns = y->t0 + k * y->period + 5000;
		p->ret.read_end_ns = p->ret.read_begin_ns;
		p->ret.local_clock = p->ret.read_begin_ns;
		p->ret.n_counts = 3;
		p->ret.flags = k ? 0 : T4_RET_FIRST;
		/* busy 1.5 ms per 1 ms interval on 2 engines: 75%; 1 GB, then 3 GB */
		p->ret.counts[0] = k ? 1500000 : 0;
		p->ret.counts[1] = 2;
		p->ret.counts[2] = k < n / 2 ? 1000000000 : 3000000000u;
	}
}

Test(decode_drm, busy_percent_and_gauges)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { .want_metrics = true };

	memset(&y, 0, sizeof(y));
	y.t0 = 5000000000ull;
	drm_stream(&y, 101);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, 0);
	cr_assert_str_eq(d->kind_label, "DRM");
	cr_assert(d->event_gauge[1] && d->event_gauge[2] && !d->event_gauge[0]);
	cr_assert_eq(d->n_metrics, 1);
	cr_assert_str_eq(d->metric_name[0], "c7.render_busy");
	cr_assert_eq(k.n, 100);
	for (size_t i = 0; i < k.n; i++) {
		cr_assert_float_eq(k.v[i].metric0, 75.0, 1e-9, "interval %zu: %f", i, k.v[i].metric0);
		cr_assert_eq(k.v[i].counts[2], k.v[i].trigger < 50 ? 1000000000ull : 3000000000ull,
			     "an interval's gauge is its level");
	}
	/* the phase: mean memory level 2 GB, busy 75% */
	uint64_t el;
	const t4_u128 *tot = t4_decoder_phase_totals(dec, 0, 0, &el);
	double v[T4_MAX_COUNTERS];
	cr_assert(tot);
	t4_decoder_metrics_of(dec, 0, tot, el, v);
	cr_assert_float_eq(v[0], 75.0, 1e-9);
	cr_assert(tot[2] == (t4_u128)1000000000ull * 1000 * 49 + (t4_u128)3000000000ull * 1000 * 51,
		  "gauge totals: level x us");
	t4_decoder_free(dec);
	free(k.v);
	/* --grid 10 ms: busy still 75%, the memory cells 1 GB or 3 GB, the one
	 * across the step their time-weighted mean */
	o.grid_ns = 10000000;
	dec = sy_decode(y.pk, y.n_pk, &o, &k);
	bool mixed = false;
	for (size_t i = 0; i < k.n; i++) {
		cr_assert_float_eq(k.v[i].metric0, 75.0, 1e-6, "cell %zu", i);
		uint64_t m = k.v[i].counts[2];
		cr_assert(m >= 1000000000ull && m <= 3000000000ull, "cell %zu: %llu", i,
			  (unsigned long long)m);
		mixed |= m != 1000000000ull && m != 3000000000ull;
		cr_assert_eq(k.v[i].counts[1], 2, "capacity stays 2");
	}
	cr_assert(mixed, "the cell across the step holds a mean");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* ---- grid trigger IDs, a MONOTONIC reference clock (the in-kernel path) ---------- */

struct id_range {
	uint64_t first, n;
};

static bool ref_in(const struct t4_packet *p, const void *ud)
{
	const struct id_range *r = ud;

	return p->type == T4_PKT_REF && p->ref.trigger_id - r->first < r->n;
}

/* The scheduler missed triggers k..k+n-1: no reference packets; with
 * overrun, its next one says so (grid IDs leave the gap, FORMAT.md 6). */
static void miss_refs(struct sy *y, uint64_t k, uint64_t n, bool overrun)
{
	for (size_t i = 0; overrun && i < y->n_pk; i++)
		if (y->pk[i].type == T4_PKT_REF && y->pk[i].ref.trigger_id == k + n)
			y->pk[i].ref.overruns += (uint32_t)n;
	drop_packets(y, ref_in, &(struct id_range){ k, n });
}

/* Gaps that the next reference packet reports as overruns are no missing
 * reference packets; a gap nobody reports is; overruns the first packet
 * reports fall before the log. */
Test(decode_synth, overrun_gaps_are_not_missing_references)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 1000);
	sy_build(&y);
	miss_refs(&y, 100, 1, true);
	miss_refs(&y, 200, 3, true);
	miss_refs(&y, 0, 2, true); /* the log starts at trigger 2, overruns 2 */
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_damage_stats(dec)->refs_missing, 0);
	cr_assert_eq(t4_index_sched(t4_decoder_index(dec), 0)->overruns, 6);
	t4_decoder_free(dec);
	free(k.v);

	miss_refs(&y, 500, 1, false);
	dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_damage_stats(dec)->refs_missing, 1);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* On the in-kernel path a reference packet's ref_ns is its grid point and
 * the timer reads the bookmark a little later: a bookmark set in between
 * is carried by that trigger (its first_trigger) though set after its
 * ref_ns. That is no lost bookmark packet: one exact phase from set_ns. */
Test(decode_synth, a_bookmark_set_after_its_grid_point_is_no_damage)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };

	two_clocks(&y, 300);
	y.t0 = 5000000000ull;
	y.period = 1000000;
	sy_bookmark(&y, 1, "a", 100, y.t0 + 100 * y.period + 5000);
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_damage_stats(dec)->phases_unplaced, 0);
	cr_assert_eq(t4_decoder_n_phases(dec), 2);
	const struct t4_dec_phase *a = t4_decoder_phase_at(dec, 1);
	cr_assert_str_eq(a->name, "a");
	cr_assert(a->exact);
	cr_assert_eq(a->start_ns, y.t0 + 100 * y.period + 5000);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

struct kept_slices {
	struct t4_slice v[8];
	size_t n;
};

static int keep_slice(void *ud, const struct t4_decoder *dec, const struct t4_slice *s)
{
	struct kept_slices *ks = ud;

	(void)dec;
	cr_assert_lt(ks->n, 8);
	ks->v[ks->n++] = *s;
	return 0;
}

/* Decode the first n packets of y, three CPU slices (at[j] .. at[j] +
 * 0.5 ms on MONOTONIC) fed after its metadata (packets 0..meta-1); the
 * decoder is returned (finished), the slices in ks. */
static struct t4_decoder *decode_with_slices(const struct sy *y, size_t n, size_t meta,
					     const uint64_t *at, struct kept_slices *ks)
{
	static const struct t4_sink_ops ops = { .slice = keep_slice };
	struct t4_decode_opts o = { 0 };
	struct t4_decoder *dec;
	struct t4_packet sl;

	memset(ks, 0, sizeof(*ks));
	cr_assert_eq(t4_decoder_new(&dec, &o, &ops, ks), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(t4_decoder_feed(dec, &y->pk[i]), 0, "%s", t4_errmsg());
		for (size_t j = 0; i + 1 == meta && j < 3; j++) {
			memset(&sl, 0, sizeof(sl));
			sl.type = T4_PKT_CPU_SLICE;
			sl.cpu_slice = (struct t4_cpu_slice_pkt){ 1, 77, 78, at[j], at[j] + 500000, 0 };
			cr_assert_eq(t4_decoder_feed(dec, &sl), 0, "%s", t4_errmsg());
		}
	}
	cr_assert_eq(t4_decoder_finish(dec, NULL), 0, "%s", t4_errmsg());
	return dec;
}

/* A log whose reference clock is CLOCK_MONOTONIC (the session says so;
 * its reference packets' mono_ns = ref_ns, as the in-kernel path writes
 * them): slices keep their instants exactly, before the first reference
 * packet too, and even in a log cut before any reference packet, where a
 * MONOTONIC_RAW log has nothing to convert them with. */
Test(decode_slices, monotonic_reference_needs_no_conversion)
{
	struct sy y;
	struct kept_slices ks;
	struct t4_decoder *dec;
	size_t meta = 0;

	two_clocks(&y, 300);
	sy_build(&y);
	for (size_t i = 0; i < y.n_pk; i++) {
		if (y.pk[i].type == T4_PKT_SESSION)
			y.pk[i].session.ref_clock = T4_REFCLK_MONOTONIC;
		if (y.pk[i].type == T4_PKT_REF)
			y.pk[i].ref.mono_ns = y.pk[i].ref.ref_ns;
		if (y.pk[i].type == T4_PKT_DOMAIN || y.pk[i].type == T4_PKT_EVENT)
			meta = i + 1;
	}
	/* 1 ms before the first trigger; mid-recording; at the last one */
	const uint64_t at[3] = { y.t0 - 1000000, y.t0 + 123456789, y.t0 + 299 * y.period };
	for (int cut = 0; cut < 2; cut++) {
		dec = decode_with_slices(&y, cut ? meta : y.n_pk, meta, at, &ks);
		cr_assert_eq(t4_decoder_slice_stats(dec)->unplaced, 0, "cut %d", cut);
		cr_assert_eq(ks.n, 3, "cut %d", cut);
		for (size_t j = 0; j < 3; j++) {
			cr_assert_eq(ks.v[j].start_ns, at[j], "cut %d: slice %zu moved by %lld ns", cut,
				     j, (long long)(ks.v[j].start_ns - at[j]));
			cr_assert_eq(ks.v[j].end_ns, at[j] + 500000);
		}
		t4_decoder_free(dec);
	}
	y.pk[0].session.ref_clock = T4_REFCLK_MONOTONIC_RAW;
	dec = decode_with_slices(&y, meta, meta, at, &ks);
	cr_assert_eq(t4_decoder_slice_stats(dec)->unplaced, 3, "MONOTONIC_RAW: no pairs, no place");
	t4_decoder_free(dec);
	sy_free(&y);
}
