/* out_summary.c - `decode` (default): what a recording says, for a person
 * at a terminal.
 *
 *   1. the recording: host, period, triggers, span, clock model;
 *   2. the phases: one row per bookmark span, then one per recurring name;
 *   3. per PMU kind, a table of the headline metrics (bandwidth, latency,
 *      frequency, utilisation) of every PMU in every phase: averages over
 *      the phase computed from its totals, not means of ratios;
 *   4. per clock domain, its clock: frequency, drift, residual, segments,
 *      read window and model bound;
 *   5. what is missing: drops, overruns, damage, unanswered triggers.
 *
 * Everything is printed at the end; the decoder keeps the totals.
 */
#include "out.h"
#include "../util/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_COLS 16
#define MAX_LISTED 32 /* phase occurrences listed one by one */

static double secs(uint64_t ns, uint64_t origin)
{
	return ns >= origin ? (double)(ns - origin) / 1e9 : -(double)(origin - ns) / 1e9;
}

static void print_value(FILE *f, int width, double v)
{
	if (!isfinite(v))
		fprintf(f, " %*s", width, "-");
	else if (v != 0 && (fabs(v) >= 1e6 || fabs(v) < 1e-3))
		fprintf(f, " %*.3e", width, v);
	else
		fprintf(f, " %*.*f", width, fabs(v) >= 100 ? 1 : 3, v);
}

static void print_mhz(FILE *f, double mhz)
{
	if (isfinite(mhz))
		fprintf(f, " %12.3f", mhz);
	else
		fprintf(f, " %12s", "-");
}

/* ---- 1. the recording ------------------------------------------------------- */

static void header(FILE *f, struct t4_output *x, const struct t4_decoder *dec)
{
	const struct t4_index *ix = t4_decoder_index(dec);
	const struct t4_session_pkt *s = t4_index_session(ix);
	const struct t4_index_counts *c = t4_index_counts(ix);
	char b[32];

	fprintf(f, "t410trace decode: %s%s\n", x->o.log_name ? x->o.log_name : "-",
		s && (s->flags & T4_SESSION_SIMULATED) ? "   [SIMULATED Tegra410: not a measurement]"
						       : "");
	if (s) {
		time_t t = (time_t)(s->start_real_ns / 1000000000u);
		struct tm tm;
		char date[40] = "?";
		if (gmtime_r(&t, &tm))
			strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
		fprintf(f, "  recorded    %s on %s (t410trace %s), period %s\n", date, s->host,
			s->version, s->period_ns ? t4_fmt_duration(s->period_ns, b, sizeof(b)) : "none");
	}
	fprintf(f, "  triggers    %" PRIu64 " reference packets, %" PRIu64 " return packets\n",
		c->refs, c->rets);
	fprintf(f, "  clock model %s", t4_clock_model_name(t4_decoder_opts(dec)->model));
	size_t refclk = 0;
	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		refclk += d->selected && d->clock.reference_clocked;
	}
	if (refclk)
		fprintf(f, " (%zu domain%s clocked by the reference clock: window midpoints)",
			refclk, refclk == 1 ? "" : "s");
	fprintf(f, "\n");
}

/* ---- 2. phases ---------------------------------------------------------------- */

static void phase_label(const struct t4_dec_phase *p, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s#%u", *p->name ? p->name : "(none)", p->occurrence);
}

static void phases(FILE *f, const struct t4_decoder *dec)
{
	size_t n = t4_decoder_n_phases(dec);
	uint64_t o = t4_decoder_origin_ns(dec);
	char b[32], lab[80];

	fprintf(f, "\nPHASES (%zu span%s; times from the first trigger)\n", n, n == 1 ? "" : "s");
	if (!n)
		return;
	fprintf(f, "  %-24s %10s %10s %11s %9s  %s\n", "PHASE#OCCURRENCE", "START s", "END s",
		"DURATION", "TRIGGERS", "BOUNDARIES");
	for (size_t i = 0; i < n && i < MAX_LISTED; i++) {
		const struct t4_dec_phase *p = t4_decoder_phase_at(dec, i);
		phase_label(p, lab, sizeof(lab));
		fprintf(f, "  %-24s %10.4f %10.4f %11s %9" PRIu64 "  %s\n", lab,
			secs(p->start_ns, o), secs(p->end_ns, o),
			t4_fmt_duration(p->end_ns - p->start_ns ? p->end_ns - p->start_ns : 1, b,
					sizeof(b)),
			p->triggers, p->exact ? "exact (bookmark times)" : "trigger grid");
	}
	if (n > MAX_LISTED)
		fprintf(f, "  ... %zu more (the tables below give each phase name's totals; every"
			   " interval is in -f csv and -f jsonl, one phase with --phase NAME)\n",
			n - MAX_LISTED);
}

/* ---- 3. metrics per kind ----------------------------------------------------- */

/* The headline metrics of domain i that were recorded, at most MAX_COLS. */
static size_t brief_cols(const struct t4_dec_domain *d, uint32_t *cols)
{
	size_t n = 0;

	for (uint32_t m = 0; m < d->n_metrics && n < MAX_COLS; m++)
		if (d->metric_brief[m] && d->metric_selected[m])
			cols[n++] = m;
	return n;
}

static void table_head(FILE *f, const struct t4_dec_domain *d, const uint32_t *cols, size_t nc,
		       int *w)
{
	fprintf(f, "\n%s, per phase (averages over each span, from its totals)\n",
		d->kind_label);
	fprintf(f, "  %-24s %-28s", "PHASE", "PMU");
	for (size_t c = 0; c < nc; c++) {
		w[c] = (int)strlen(d->metric_name[cols[c]]);
		if (w[c] < 10)
			w[c] = 10;
		fprintf(f, " %*s", w[c], d->metric_name[cols[c]]);
	}
	fprintf(f, "\n  %-24s %-28s", "", "");
	for (size_t c = 0; c < nc; c++)
		fprintf(f, " %*s", w[c], d->metric_unit[cols[c]]);
	fprintf(f, "\n");
}

static void table_row(FILE *f, const struct t4_decoder *dec, size_t dom, const char *label,
		      const t4_u128 *tot, uint64_t el, const uint32_t *cols, size_t nc,
		      const int *w)
{
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, dom);
	double v[T4_MAX_COUNTERS];

	t4_decoder_metrics_of(dec, dom, tot, el, v);
	fprintf(f, "  %-24s %-28s", label, d->name);
	for (size_t c = 0; c < nc; c++)
		print_value(f, w[c], el ? v[cols[c]] : NAN);
	fprintf(f, "\n");
}

/* Rows for every phase occurrence (when there are few), then one per
 * phase name over all its occurrences. */
static void kind_rows(FILE *f, const struct t4_decoder *dec, size_t dom, const uint32_t *cols,
		      size_t nc, const int *w)
{
	size_t np = t4_decoder_n_phases(dec);
	char lab[80];
	uint64_t el;

	for (size_t p = 0; p < np && np <= MAX_LISTED; p++) {
		const t4_u128 *tot = t4_decoder_phase_totals(dec, p, dom, &el);
		phase_label(t4_decoder_phase_at(dec, p), lab, sizeof(lab));
		if (tot && el)
			table_row(f, dec, dom, lab, tot, el, cols, nc, w);
	}
	for (size_t p = 0; p < np; p++) {
		const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, p);
		size_t occ = 0;
		bool first = true;

		for (size_t q = 0; q < np; q++)
			if (t4_decoder_phase_at(dec, q)->bookmark_id == ph->bookmark_id) {
				first = first && q >= p;
				occ++;
			}
		const t4_u128 *tot = t4_decoder_name_totals(dec, ph->bookmark_id, dom, &el);
		if (!first || !tot || !el || (occ == 1 && np <= MAX_LISTED))
			continue; /* listed above, or not this name's first phase */
		snprintf(lab, sizeof(lab), "%s (all %zu)", *ph->name ? ph->name : "(none)", occ);
		table_row(f, dec, dom, lab, tot, el, cols, nc, w);
	}
}

static void kinds(FILE *f, const struct t4_decoder *dec)
{
	size_t nd = t4_decoder_n_domains(dec);
	bool *done = calloc(nd ? nd : 1, sizeof(*done));

	if (!done)
		return;
	for (size_t i = 0; i < nd; i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		uint32_t cols[MAX_COLS];
		int w[MAX_COLS];
		size_t nc;

		if (done[i] || !d->selected || !d->intervals || !(nc = brief_cols(d, cols)))
			continue;
		table_head(f, d, cols, nc, w);
		for (size_t j = i; j < nd; j++) {
			const struct t4_dec_domain *e = t4_decoder_domain_at(dec, j);
			if (done[j] || !e->selected || e->ix->d.kind != d->ix->d.kind ||
			    !e->intervals)
				continue;
			done[j] = true;
			kind_rows(f, dec, j, cols, nc, w);
		}
	}
	free(done);
}

/* ---- 3b. the workload: CPU and GPU phases ------------------------------------ */

#define MAX_GPUS 16
#define MAX_ENGINES 12

/* The GPU engines the DRM domains report busy time for: engine names
 * (a busy metric "<client>.<engine>_busy" without its client), to sum
 * over clients. */
struct engines {
	size_t n;
	char name[MAX_ENGINES][T4_NAME_MAX];
};

static bool busy_metric(const char *metric, char *engine, size_t cap)
{
	const char *dot = strchr(metric, '.');
	size_t n = strlen(metric);

	if (!dot || n < 5 || strcmp(metric + n - 5, "_busy"))
		return false;
	snprintf(engine, cap, "%.*s", (int)(metric + n - 5 - dot - 1), dot + 1);
	return true;
}

static int engine_slot(struct engines *e, const char *name)
{
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->name[i], name))
			return (int)i;
	if (e->n == MAX_ENGINES)
		return -1;
	snprintf(e->name[e->n], sizeof(e->name[0]), "%s", name);
	return (int)e->n++;
}

/* Busy % per engine in one phase (p), or over one bookmark's phases
 * (bookmark_id, p = SIZE_MAX): each client's busy % from its totals,
 * summed over clients (FORMAT 6.2). */
static void engine_busy(const struct t4_decoder *dec, size_t p, uint32_t bookmark_id,
			struct engines *e, double *busy)
{
	char engine[T4_NAME_MAX];
	double v[T4_MAX_COUNTERS];
	uint64_t el;

	for (size_t i = 0; i < MAX_ENGINES; i++)
		busy[i] = NAN;
	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		const t4_u128 *tot;
		if (d->ix->d.kind != T4_DOM_DRM)
			continue;
		tot = p == SIZE_MAX ? t4_decoder_name_totals(dec, bookmark_id, i, &el)
				    : t4_decoder_phase_totals(dec, p, i, &el);
		if (!tot || !el)
			continue;
		t4_decoder_metrics_of(dec, i, tot, el, v);
		for (uint32_t m = 0; m < d->n_metrics; m++) {
			int k;
			if (!busy_metric(d->metric_name[m], engine, sizeof(engine)) ||
			    !isfinite(v[m]) || (k = engine_slot(e, engine)) < 0)
				continue;
			busy[k] = isfinite(busy[k]) ? busy[k] + v[m] : v[m];
		}
	}
}

static void workload_row(FILE *f, const struct t4_decoder *dec, const char *lab, double dur,
			 uint64_t cpu_ns, uint64_t threads, size_t p, uint32_t bookmark_id,
			 size_t ng, struct engines *e)
{
	struct t4_dec_gpu_busy g[MAX_GPUS];
	double busy[MAX_ENGINES];

	fprintf(f, "  %-24s", lab);
	bool cpu = t4_decoder_slice_stats(dec)->cpu > 0; /* bpf/phases ran */
	print_value(f, 10, cpu && dur > 0 ? (double)cpu_ns / dur * 100 : NAN);
	if (cpu)
		fprintf(f, " %8llu", (unsigned long long)threads);
	else
		fprintf(f, " %8s", "-");
	size_t n = p == SIZE_MAX ? 0 : t4_decoder_phase_gpu(dec, p, g, MAX_GPUS);
	for (size_t i = 0; i < ng && i < MAX_GPUS; i++)
		print_value(f, 16, i < n && dur > 0 ? (double)g[i].busy_ns / dur * 100 : NAN);
	engine_busy(dec, p, bookmark_id, e, busy);
	for (size_t i = 0; i < e->n; i++)
		print_value(f, 14, busy[i]);
	fprintf(f, "\n");
}

/* The workload per phase: its threads' on-CPU time (bpf/phases), each GPU
 * fence context's busy time, each DRM engine's busy % over the clients. */
static void workload(FILE *f, const struct t4_decoder *dec)
{
	const struct t4_dec_slices *sl = t4_decoder_slice_stats(dec);
	size_t np = t4_decoder_n_phases(dec), ng = 0;
	struct t4_dec_gpu_busy g[MAX_GPUS];
	struct engines e = { 0 };
	double busy[MAX_ENGINES];
	char lab[80];

	for (size_t p = 0; p < np; p++) /* every engine of every phase */
		engine_busy(dec, p, 0, &e, busy);
	if (!sl->cpu && !sl->gpu && !e.n)
		return;
	if (np)
		ng = t4_decoder_phase_gpu(dec, 0, g, MAX_GPUS); /* the same contexts in every phase */
	fprintf(f, "\nWORKLOAD, per phase (CPU: its threads' on-CPU time, %% of one CPU;"
		   " GPU: busy %% per fence context and per DRM engine, summed over clients)\n");
	fprintf(f, "  %-24s %10s %8s", "PHASE", "CPU %", "THREADS");
	for (size_t i = 0; i < ng && i < MAX_GPUS; i++) {
		snprintf(lab, sizeof(lab), "%.10s:%llu %%", g[i].timeline,
			 (unsigned long long)g[i].context);
		fprintf(f, " %16s", lab);
	}
	for (size_t i = 0; i < e.n; i++) {
		snprintf(lab, sizeof(lab), "%.9s busy %%", e.name[i]);
		fprintf(f, " %14s", lab);
	}
	fprintf(f, "\n");
	for (size_t p = 0; p < np && p < MAX_LISTED; p++) {
		const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, p);
		phase_label(ph, lab, sizeof(lab));
		workload_row(f, dec, lab, (double)(ph->end_ns - ph->start_ns), ph->cpu_ns,
			     ph->threads, p, ph->bookmark_id, ng, &e);
	}
	if (np > MAX_LISTED)
		fprintf(f, "  ... %zu more phases\n", np - MAX_LISTED);
}

/* ---- 4. clocks ---------------------------------------------------------------- */

/* The kind's frequency formula (unit GHz) over the whole decoded span of
 * domain i, from its totals: NaN when the kind has none. */
static double formula_freq(const struct t4_decoder *dec, size_t i)
{
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
	double v[T4_MAX_COUNTERS];

	if (d->last_ns <= d->first_ns)
		return NAN;
	t4_decoder_metrics_of(dec, i, d->totals, d->last_ns - d->first_ns, v);
	for (uint32_t m = 0; m < d->n_metrics; m++)
		if (!strcmp(d->metric_unit[m], "GHz") && strstr(d->metric_name[m], "freq"))
			return v[m];
	return NAN;
}

static void clocks(FILE *f, const struct t4_decoder *dec)
{
	size_t nd = t4_decoder_n_domains(dec);

	fprintf(f, "\nCLOCK DOMAINS (frequency and drift from the clock model, next to the"
		   " formula's cycles / elapsed; window: read window; bound: model uncertainty)\n");
	fprintf(f, "  %-28s %-7s %12s %12s %12s %10s %10s %5s %17s %15s\n", "DOMAIN", "MODEL",
		"FREQ MHz", "FORMULA MHz", "NOMINAL MHz", "DRIFT ppm", "RESID ns", "SEGS",
		"WINDOW p50/p99 ns", "BOUND p50/p99");
	for (size_t i = 0; i < nd; i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		const struct t4_clock_stats *c = &d->clock;
		char win[40], bnd[40];

		if (!d->selected || !c->samples)
			continue;
		snprintf(win, sizeof(win), "%" PRIu64 "/%" PRIu64, c->window_p50, c->window_p99);
		snprintf(bnd, sizeof(bnd), "%" PRIu64 "/%" PRIu64, c->bound_p50, c->bound_p99);
		fprintf(f, "  %-28s %-7s", d->name,
			c->reference_clocked ? "window" : t4_clock_model_name(c->model));
		if (c->reference_clocked) {
			fprintf(f, " %12s %12s %12s %10s %10s %5s", "(reference", "clock)", "", "-",
				"-", "-");
		} else {
			print_mhz(f, c->freq_hz / 1e6);
			print_mhz(f, formula_freq(dec, i) * 1e3);
			print_mhz(f, d->ix->d.nominal_hz ? (double)d->ix->d.nominal_hz / 1e6 : NAN);
			if (c->segments > 1)
				fprintf(f, " %10s", "(steps)"); /* per segment below */
			else
				print_value(f, 10, c->drift_ppm);
			print_value(f, 10, c->residual_ns);
			fprintf(f, " %5" PRIu64, c->segments);
		}
		fprintf(f, " %17s %15s\n", win, bnd);
		size_t ns;
		const struct t4_clock_segment *sg = t4_decoder_segments(dec, i, &ns);
		for (size_t k = 0; ns > 1 && k < ns && k < 8; k++) {
			fprintf(f, "      segment %zu: triggers %" PRIu64 "..%" PRIu64 ", %.3f MHz, ",
				k + 1, sg[k].first_trigger, sg[k].last_trigger, sg[k].freq_hz / 1e6);
			if (fabs(sg[k].drift_ppm) < 5000) /* a clock's drift */
				fprintf(f, "drift %.1f ppm", sg[k].drift_ppm);
			else if (isfinite(sg[k].drift_ppm)) /* a DVFS level */
				fprintf(f, "%.1f%% of nominal", 100 + sg[k].drift_ppm / 1e4);
			else
				fprintf(f, "nominal unknown");
			fprintf(f, ", residual %.1f ns\n", sg[k].residual_ns);
		}
		if (ns > 8)
			fprintf(f, "      ... %zu more segments\n", ns - 8);
	}
}

/* ---- 5. missing ---------------------------------------------------------------- */

static void missing(FILE *f, const struct t4_decoder *dec)
{
	const struct t4_index *ix = t4_decoder_index(dec);
	const struct t4_status_pkt *st = t4_index_status(ix);
	const struct t4_reader_stats *rs = t4_decoder_reader_stats(dec);
	const struct t4_dec_damage *dm = t4_decoder_damage_stats(dec);
	size_t nd = t4_decoder_n_domains(dec);
	bool any = false;

	fprintf(f, "\nMISSING\n");
	if (st)
		fprintf(f, "  dropped packets   %" PRIu64 " (their counts are carried by the"
			   " next packet)\n", st->dropped);
	else
		fprintf(f, "  dropped packets   unknown (no status packet)\n");
	fprintf(f, "  overruns          %" PRIu64 "\n", t4_index_overruns(ix));
	fprintf(f, "  read failures     %" PRIu64 "\n", t4_index_read_failures(ix));
	fprintf(f, "  damage            %" PRIu64 " damaged chunk%s, %s%s\n", rs->damaged_chunks,
		rs->damaged_chunks == 1 ? "" : "s", rs->truncated ? "truncated" : "not truncated",
		rs->skipped_bytes ? ", bytes skipped" : "");
	fprintf(f, "  no reference      %" PRIu64 " trigger%s without a reference packet\n",
		dm->refs_missing, dm->refs_missing == 1 ? "" : "s");
	for (size_t i = 0; i < nd; i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		if (!d->selected || !(d->unanswered_carried || d->unanswered_lost || d->duplicates ||
				      d->too_late || d->unplaced))
			continue;
		if (!any)
			fprintf(f, "  unanswered triggers per domain (carried: counts in the next"
				   " interval; lost: damage):\n");
		any = true;
		fprintf(f, "    %-28s carried %" PRIu64 ", lost %" PRIu64 ", duplicates %" PRIu64
			   ", too late %" PRIu64 ", unplaced %" PRIu64 "\n",
			d->name, d->unanswered_carried, d->unanswered_lost, d->duplicates, d->too_late,
			d->unplaced);
	}
	size_t with_data = 0;
	for (size_t i = 0; i < nd; i++)
		with_data += t4_decoder_domain_at(dec, i)->intervals > 0;
	if (!with_data)
		fprintf(f, "  no intervals: the log holds no return packets%s\n",
			nd ? " that pass the filters" : "");
	else if (!any)
		fprintf(f, "  every domain answered every trigger\n");
	const struct t4_dec_slices *sl = t4_decoder_slice_stats(dec);
	if (sl->lost_events || sl->unplaced)
		fprintf(f, "  phase events      %llu lost before the log (a full BPF ring buffer),"
			   " %llu without a reference packet to place them\n",
			(unsigned long long)sl->lost_events, (unsigned long long)sl->unplaced);
	if (dm->phases_unplaced)
		fprintf(f, "  phases            %llu bookmark change%s without its bookmark packet"
			   " (damage): counted in the phase before\n",
			(unsigned long long)dm->phases_unplaced, dm->phases_unplaced == 1 ? "" : "s");
	if (dm->partial)
		fprintf(f, "  TOTALS ARE PARTIAL: counts were lost to damage or missing packets\n");
}

static int summary_finish(void *ud, const struct t4_decoder *dec)
{
	struct t4_output *x = ud;
	FILE *f = x->f;

	header(f, x, dec);
	phases(f, dec);
	kinds(f, dec);
	workload(f, dec);
	clocks(f, dec);
	missing(f, dec);
	return out_close(x);
}

const struct out_backend out_summary = {
	.name = "summary",
	.ops = { .finish = summary_finish },
	.wants_metrics = false,
};
