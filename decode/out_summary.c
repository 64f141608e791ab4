/* out_summary.c - `decode` (default): what a recording says, for a person
 * at a terminal.
 *
 *   1. the recording: host, period, duration, triggers, trigger path,
 *      clock model, SIMULATED when it is;
 *   2. the phases: one row per bookmark span (NAME#OCCURRENCE);
 *   3. per PMU kind, a table of the headline metrics (bandwidth, latency,
 *      frequency, utilisation) of every PMU in every phase: averages over
 *      the phase computed from its totals, not means of ratios;
 *   4. EVENTS: every recorded event's total and rate per phase, summed
 *      over the CPUs that count it (perf stat's answer; --per-cpu: one row
 *      per CPU), from decode/totals.c, the code `record` and `info` use;
 *   5. the workload per phase (CPU and GPU activity), when recorded;
 *   6. CLOCK DOMAINS and 7. MISSING: one line per PMU kind and one line
 *      when all is well; every domain and every count under -v or as
 *      soon as something is wrong;
 *   8. several hosts merged: 1-7 for each host (its placement on UTC in
 *      1), then ACROSS HOSTS: each host's bound, the phases of every host
 *      side by side, per kind the metrics of every phase name on every
 *      host (sections_hosts.c).
 *
 * Every number is a phase total of decode/attrib.c (the same pieces -f
 * csv and -f jsonl print), printed at the end. Each number column has one
 * format (decode/table.c); names are escaped for the terminal. The tables
 * of 2, 3 and 6 are built by sections.c, which the report renders too.
 */
#include "out.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* A name made safe for the terminal. */
static const char *safe(const char *s, char *buf, size_t cap)
{
	return t4_text(s, T4_TEXT_CONTROL, buf, cap);
}

/* ---- 1. the recording ------------------------------------------------------- */

static void header(FILE *f, struct t4_output *x, const struct t4_decoder *dec)
{
	const struct t4_index *ix = t4_decoder_index(dec);
	const struct t4_session_pkt *s = t4_index_session(ix);
	const struct t4_index_counts *c = t4_index_counts(ix);
	char b[32], d[32], n1[200], n2[200];

	const struct t4_place *pl = t4_decoder_place(dec);
	fprintf(f, "%st410trace decode: %s%s\n", pl && pl->index ? "\n" : "",
		safe(pl ? pl->log : x->o.log_name ? x->o.log_name : "-", n1, sizeof(n1)),
		s && (s->flags & T4_SESSION_SIMULATED) ? "   [SIMULATED Tegra410: not a measurement]"
						       : "");
	if (s) {
		time_t t = (time_t)(s->start_real_ns / 1000000000u);
		struct tm tm;
		char date[40] = "?";
		if (gmtime_r(&t, &tm))
			strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
		fprintf(f, "  recorded    %s on %s (t410trace %s)\n", date, safe(s->host, n1, sizeof(n1)),
			safe(s->version, n2, sizeof(n2)));
		fprintf(f, "  period      %s, %s, triggers fired by %s, reference clock %s\n",
			s->period_ns ? t4_fmt_duration(s->period_ns, b, sizeof(b)) : "none",
			t4_fmt_duration(sec_log_span(dec), d, sizeof(d)),
			s->flags & T4_SESSION_BPF_TRIGGER ? "BPF timers in the kernel"
							  : "threads in user space",
			t4_ref_clock_name(s->ref_clock));
	}
	if (pl) {
		char place[400];
		sec_place_text(pl, place, sizeof(place));
		fprintf(f, "  placed      host %s on UTC %s\n", safe(pl->host, n1, sizeof(n1)), place);
	}
	fprintf(f, "  triggers    %" PRIu64 " reference packets, %" PRIu64 " return packets\n",
		c->refs, c->rets);
	fprintf(f, "  clock model %s", t4_clock_model_name(t4_decoder_opts(dec)->model));
	size_t refclk = 0;
	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++) {
		const struct t4_dec_domain *dm = t4_decoder_domain_at(dec, i);
		refclk += dm->selected && dm->clock.reference_clocked;
	}
	if (refclk)
		fprintf(f, " (%zu domain%s clocked by the reference clock: window midpoints)",
			refclk, refclk == 1 ? "" : "s");
	fprintf(f, "\n");
}

/* ---- 2. phases ---------------------------------------------------------------- */

static void phases(FILE *f, const struct t4_decoder *dec)
{
	size_t n = t4_decoder_n_phases(dec);
	struct t4_table t;

	fprintf(f, "\nPHASES (%zu occurrence%s; times from the first trigger%s; boundaries: %s)\n",
		n, n == 1 ? "" : "s", t4_decoder_place(dec) ? " of any host" : "",
		t4_decoder_phases_exact(dec) ? "the bookmarks' set times (exact)"
					     : "the triggers that carry each bookmark");
	if (!n)
		return;
	if (sec_phase_table(dec, &t) == 0)
		dec_table_print(&t, f);
	dec_table_free(&t);
	if (n > SEC_MAX_LISTED)
		fprintf(f, "  ... %zu more (the tables below give each phase name's totals; every"
			   " phase is in -f phases, every interval in -f csv and -f jsonl)\n",
			n - SEC_MAX_LISTED);
}

/* ---- 3. metrics per kind ----------------------------------------------------- */

struct kinds_ctx {
	FILE *f;
	const struct sec_names *pn;
	bool verbose;
};

static int kind_print(void *ud, const struct t4_decoder *dec, size_t first, const uint32_t *cols,
		      size_t nc, const struct t4_table *t)
{
	struct kinds_ctx *k = ud;

	(void)cols, (void)nc;
	fprintf(k->f, "\n%s, per phase (averages over each row's occurrences, from their "
		      "totals%s)\n", t4_decoder_domain_at(dec, first)->kind_label,
		k->verbose || k->pn->n == t4_decoder_n_phases(dec) ? "" : "; -v: every occurrence");
	dec_table_print(t, k->f);
	return 0;
}

static void kinds(FILE *f, const struct t4_decoder *dec, const struct sec_names *pn, bool verbose)
{
	struct kinds_ctx k = { f, pn, verbose };

	sec_kind_tables(dec, pn, verbose, kind_print, &k);
}

/* ---- 4. every event -------------------------------------------------------------- */

/* The PMU column of an event row: its PMU, with the number of CPUs
 * summed, or with --per-cpu the one domain's name. */
static const char *event_where(const struct t4_event_row *e, const struct t4_decoder *dec,
			       char *buf, size_t cap)
{
	if (e->domain >= 0) {
		const struct t4_index_domain *d =
			t4_index_domain(t4_decoder_index(dec), (uint32_t)e->domain);
		return d ? d->d.name : e->pmu;
	}
	if (e->domains <= 1)
		return e->pmu;
	snprintf(buf, cap, "%s (%u CPUs)", e->pmu, e->domains);
	return buf;
}

/* The UNIT column of an event row: a level's (a gauge's) says that its
 * TOTAL is its mean level, as record's closing table says "level". */
static const char *event_unit(const struct t4_event_row *e, char *buf, size_t cap)
{
	if (!e->gauge)
		return *e->unit ? e->unit : "-";
	snprintf(buf, cap, "%s%smean level", e->unit, *e->unit ? ", " : "");
	return buf;
}

/* The row of set r for the same event as e, or NULL. */
static const struct t4_event_row *same_event(const struct t4_event_rows *r,
					     const struct t4_event_row *e)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].kind == e->kind && r->v[i].domain == e->domain &&
		    !strcmp(r->v[i].pmu, e->pmu) && !strcmp(r->v[i].event, e->event))
			return &r->v[i];
	return NULL;
}

#define MAX_EVENT_SETS (SEC_MAX_LISTED + 1 + 64)

/* The event rows of the whole decode, then of each row of the per-phase
 * tables (sec_phase_rows), with their labels. */
struct event_sets {
	const struct t4_decoder *dec;
	bool per_cpu;
	size_t n;
	struct t4_event_rows set[MAX_EVENT_SETS];
	char lab[MAX_EVENT_SETS][160];
};

static int event_set(void *ud, const char *label, size_t phase, uint32_t bookmark_id)
{
	struct event_sets *e = ud;

	if (e->n == MAX_EVENT_SETS)
		return 1; /* (the rest left out) */
	snprintf(e->lab[e->n], sizeof(e->lab[e->n]), "%s", label);
	if (phase == SIZE_MAX)
		t4_event_rows_of_bookmark(e->dec, bookmark_id, e->per_cpu, &e->set[e->n++]);
	else
		t4_event_rows_from_decoder(e->dec, phase, e->per_cpu, &e->set[e->n++]);
	return 0;
}

static void events(FILE *f, struct t4_output *x, const struct t4_decoder *dec,
		   const struct sec_names *pn)
{
	static const char *const lh[] = { "PMU", "EVENT", "UNIT", "PHASE" };
	static const char *const ch[] = { "TOTAL", "RATE" };
	static const char *const cu[] = { "", "/s" };
	size_t np = t4_decoder_n_phases(dec), ns;
	struct event_sets *es = calloc(1, sizeof(*es));
	struct t4_event_rows *set;
	char where[96], unit[48];
	bool per_cpu = x->o.per_cpu;
	struct t4_table t;

	if (!es)
		return;
	es->dec = dec;
	es->per_cpu = per_cpu;
	/* the whole decode, then the rows every per-phase table has */
	snprintf(es->lab[0], sizeof(es->lab[0]), "(all phases)");
	t4_event_rows_from_decoder(dec, SIZE_MAX, per_cpu, &es->set[es->n++]);
	if (np > 1)
		sec_phase_rows(dec, pn, x->o.verbose, event_set, es);
	ns = es->n;
	set = es->set;
	if (dec_table_init(&t, 4, lh, 2, ch, cu) == 0) {
		/* one event after the other, its phases together */
		for (size_t i = 0; i < set[0].n; i++) {
			for (size_t k = 0; k < ns; k++) {
				const struct t4_event_row *e = same_event(&set[k], &set[0].v[i]);
				if (!e)
					continue;
				const char *l[] = { event_where(e, dec, where, sizeof(where)), e->event,
						    event_unit(e, unit, sizeof(unit)), es->lab[k] };
				/* a level has no rate per second: its TOTAL is its mean */
				double v[] = { e->gauge ? t4_event_row_rate(e) : NAN,
					       e->gauge ? NAN : t4_event_row_rate(e) };
				if (dec_table_row(&t, l, v) < 0)
					break;
				if (!e->gauge)
					dec_table_set_integer(&t, 0, e->total);
			}
		}
		if (t.nrows) {
			fprintf(f, "\nEVENTS (every event's total and rate per phase, %s%s)\n",
				per_cpu ? "one row per CPU or domain"
					: "summed over the CPUs that count it",
				x->o.verbose || pn->n == np ? "" : "; -v: per occurrence");
			dec_table_print(&t, f);
		}
		dec_table_free(&t);
	}
	for (size_t k = 0; k < ns; k++)
		t4_event_rows_free(&set[k]);
	free(es);
}

/* ---- 3b. the workload: CPU and GPU activity ------------------------------------ */

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

static void workload_row(struct t4_table *t, const struct t4_decoder *dec, const char *lab,
			 double dur, uint64_t cpu_ns, uint64_t threads, size_t p,
			 uint32_t bookmark_id, size_t ng, struct engines *e)
{
	struct t4_dec_gpu_busy g[MAX_GPUS];
	double busy[MAX_ENGINES], v[T4_TABLE_COLS];
	size_t c = 0;
	bool cpu = t4_decoder_slice_stats(dec)->cpu > 0; /* bpf/activity ran */
	const char *l[] = { lab };

	v[c++] = cpu && dur > 0 ? (double)cpu_ns / dur * 100 : NAN;
	v[c++] = NAN;
	size_t n = p == SIZE_MAX ? 0 : t4_decoder_phase_gpu(dec, p, g, MAX_GPUS);
	for (size_t i = 0; i < ng && i < MAX_GPUS; i++)
		v[c++] = i < n && dur > 0 ? (double)g[i].busy_ns / dur * 100 : NAN;
	engine_busy(dec, p, bookmark_id, e, busy);
	for (size_t i = 0; i < e->n; i++)
		v[c++] = busy[i];
	if (dec_table_row(t, l, v) == 0 && cpu)
		dec_table_set_integer(t, 1, threads);
}

/* The workload per phase: its threads' on-CPU time (bpf/activity), each GPU
 * fence context's busy time, each DRM engine's busy % over the clients. */
static void workload(FILE *f, const struct t4_decoder *dec)
{
	const struct t4_dec_slices *sl = t4_decoder_slice_stats(dec);
	size_t np = t4_decoder_n_phases(dec), ng = 0, nc = 0;
	struct t4_dec_gpu_busy g[MAX_GPUS];
	struct engines e = { 0 };
	double busy[MAX_ENGINES];
	char heads[T4_TABLE_COLS][48], lab[160];
	const char *ch[T4_TABLE_COLS], *cu[T4_TABLE_COLS];
	static const char *const lh[] = { "PHASE" };
	struct t4_table t;

	for (size_t p = 0; p < np; p++) /* every engine of every phase */
		engine_busy(dec, p, 0, &e, busy);
	if (!sl->cpu && !sl->gpu && !e.n)
		return;
	if (np) /* the same contexts in every phase */
		ng = t4_decoder_phase_gpu(dec, 0, g, MAX_GPUS);
	ch[nc] = "CPU", cu[nc++] = "% of 1 CPU";
	ch[nc] = "THREADS", cu[nc++] = "";
	for (size_t i = 0; i < ng && i < MAX_GPUS && nc < T4_TABLE_COLS; i++, nc++) {
		snprintf(heads[nc], sizeof(heads[nc]), "%.10s:%llu", g[i].timeline,
			 (unsigned long long)g[i].context);
		ch[nc] = heads[nc], cu[nc] = "busy %";
	}
	for (size_t i = 0; i < e.n && nc < T4_TABLE_COLS; i++, nc++) {
		snprintf(heads[nc], sizeof(heads[nc]), "%.20s", e.name[i]);
		ch[nc] = heads[nc], cu[nc] = "busy %";
	}
	if (dec_table_init(&t, 1, lh, nc, ch, cu) < 0)
		return;
	for (size_t p = 0; p < np && p < SEC_MAX_LISTED; p++) {
		const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, p);
		sec_phase_label(ph, lab, sizeof(lab));
		workload_row(&t, dec, lab, (double)(ph->end_ns - ph->start_ns), ph->cpu_ns,
			     ph->threads, p, ph->bookmark_id, ng, &e);
	}
	fprintf(f, "\nWORKLOAD, per phase (CPU: its threads' on-CPU time; GPU: busy %% per fence"
		   " context and per DRM engine, summed over clients)\n");
	dec_table_print(&t, f);
	dec_table_free(&t);
	if (np > SEC_MAX_LISTED)
		fprintf(f, "  ... %zu more phases\n", np - SEC_MAX_LISTED);
}

/* ---- 6. clocks ---------------------------------------------------------------- */

/* Something a user must see about a clock: samples the fit could not
 * bound, or a residual far above the read windows. */
static bool clock_odd(const struct t4_clock_stats *c)
{
	return c->nonlinear || (isfinite(c->residual_ns) && c->residual_ns > 1000);
}

/* A segment's rate and how it stands to the nominal one; none where the
 * segment has one sample, or its clock stood still. */
static void segment_rate(FILE *f, const struct t4_clock_segment *sg)
{
	char drift[32];

	if (!isfinite(sg->freq_hz))
		fprintf(f, "rate unknown (one sample, or the clock stood still)");
	else if (fabs(sg->drift_ppm) < 5000) /* a clock's drift */
		fprintf(f, "%.3f MHz, drift %s ppm", sg->freq_hz / 1e6,
			dec_fixed(sg->drift_ppm, 1, drift, sizeof(drift)));
	else if (isfinite(sg->drift_ppm)) /* a DVFS level */
		fprintf(f, "%.3f MHz, %.1f%% of nominal", sg->freq_hz / 1e6,
			100 + sg->drift_ppm / 1e4);
	else
		fprintf(f, "%.3f MHz, nominal unknown", sg->freq_hz / 1e6);
}

static void segment_lines(FILE *f, const struct t4_decoder *dec, size_t i)
{
	size_t ns;
	const struct t4_clock_segment *sg = t4_decoder_segments(dec, i, &ns);
	char name[200];

	for (size_t k = 0; ns > 1 && k < ns && k < 8; k++) {
		fprintf(f, "  %s segment %zu: triggers %" PRIu64 "..%" PRIu64 ", ",
			safe(t4_decoder_domain_at(dec, i)->name, name, sizeof(name)), k + 1,
			sg[k].first_trigger, sg[k].last_trigger);
		segment_rate(f, &sg[k]);
		fprintf(f, ", residual %.1f ns\n", sg[k].residual_ns);
	}
	uint64_t all = t4_decoder_domain_at(dec, i)->clock.segments; /* listed or not */
	if (ns > 1 && all > 8)
		fprintf(f, "  ... %" PRIu64 " more segments\n", all - 8);
}

/* Compact: one line per PMU kind (domains, model, frequency range, the
 * worst residual and bound). */
static void clocks_compact(FILE *f, const struct t4_decoder *dec)
{
	size_t nd = t4_decoder_n_domains(dec);
	bool done[T4_DOM_KINDS + 1] = { false }; /* + 1: unknown kinds */

	fprintf(f, "\nCLOCK DOMAINS (per kind; -v: every domain)\n");
	for (size_t i = 0; i < nd; i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		uint32_t kind = d->ix->d.kind < T4_DOM_KINDS ? d->ix->d.kind : T4_DOM_KINDS;
		size_t n = 0, segs = 0;
		double lo = INFINITY, hi = -INFINITY, res = 0;
		uint64_t bound = 0;

		if (done[kind] || !d->selected || !d->clock.samples)
			continue;
		done[kind] = true;
		for (size_t j = i; j < nd; j++) {
			const struct t4_dec_domain *e = t4_decoder_domain_at(dec, j);
			const struct t4_clock_stats *c = &e->clock;
			uint32_t k = e->ix->d.kind < T4_DOM_KINDS ? e->ix->d.kind : T4_DOM_KINDS;
			if (k != kind || !e->selected || !c->samples)
				continue;
			n++;
			segs += c->segments > 1;
			if (isfinite(c->freq_hz)) {
				lo = fmin(lo, c->freq_hz / 1e6);
				hi = fmax(hi, c->freq_hz / 1e6);
			}
			if (isfinite(c->residual_ns))
				res = fmax(res, c->residual_ns);
			if (c->bound_p99 > bound)
				bound = c->bound_p99;
		}
		fprintf(f, "  %-14s %3zu domain%s  ", d->kind_label, n, n == 1 ? " " : "s");
		if (d->clock.reference_clocked)
			fprintf(f, "the reference clock (window midpoints)");
		else if (isfinite(lo))
			fprintf(f, "%s model, %.3f-%.3f MHz, residual <= %.1f ns, bound p99 <= %" PRIu64
				   " ns%s",
				t4_clock_model_name(d->clock.model), lo, hi, res, bound,
				segs ? ", rate steps (-v)" : "");
		fprintf(f, "\n");
	}
}

static void clocks(FILE *f, struct t4_output *x, const struct t4_decoder *dec)
{
	size_t nd = t4_decoder_n_domains(dec);
	bool odd = false;
	struct t4_table t;

	for (size_t i = 0; i < nd; i++)
		odd |= t4_decoder_domain_at(dec, i)->selected &&
		       clock_odd(&t4_decoder_domain_at(dec, i)->clock);
	if (!x->o.verbose && !odd) {
		clocks_compact(f, dec);
		return;
	}
	if (sec_clock_table(dec, &t) == 0) {
		fprintf(f, "\nCLOCK DOMAINS (frequency and drift from the clock model, next to the"
			   " formula's cycles / elapsed; window: read window; bound: model"
			   " uncertainty)\n");
		dec_table_print(&t, f);
	}
	dec_table_free(&t);
	for (size_t i = 0; i < nd; i++)
		if (t4_decoder_domain_at(dec, i)->selected)
			segment_lines(f, dec, i);
}

/* ---- 7. missing ---------------------------------------------------------------- */

/* Whether a decoded domain misses anything, with its answers (info's
 * account) in *a. */
static bool domain_missed(const struct t4_decoder *dec, const struct t4_dec_domain *d,
			  struct t4_index_answers *a)
{
	if (!d->selected)
		return false;
	t4_index_answers(t4_decoder_index(dec), d->ix, a);
	return a->unanswered || a->duplicates || d->unanswered_carried || d->unanswered_lost ||
	       d->duplicates || d->too_late || d->unplaced;
}

#define MAX_STOPPED_LINES 16 /* a crafted log's thousands of domains: the rest counted */

/* The domains that stopped answering before the end (sec_stopped_text),
 * each a line into f, the first MAX_STOPPED_LINES (NULL: counted only). */
static size_t n_stopped(const struct t4_decoder *dec, FILE *f)
{
	const struct t4_index *ix = t4_decoder_index(dec);
	char line[4 * T4_NAME_MAX + 128];
	size_t n = 0;

	for (size_t i = 0; i < t4_index_n_domains(ix); i++) {
		if (!sec_stopped_text(dec, t4_index_domain_at(ix, i), line, sizeof(line)))
			continue;
		if (f && n < MAX_STOPPED_LINES)
			fprintf(f, "  stopped answering %s\n", line);
		n++;
	}
	if (f && n > MAX_STOPPED_LINES)
		fprintf(f, "  stopped answering ... and %zu more domains (info: UNANSWERED)\n",
			n - MAX_STOPPED_LINES);
	return n;
}

/* The domains that never answered (sec_silent), each a line into f
 * (NULL: counted only). */
static size_t n_silent(const struct t4_decoder *dec, FILE *f)
{
	const struct t4_index *ix = t4_decoder_index(dec);
	size_t n = 0;
	uint64_t triggers;
	char name[200];

	for (size_t i = 0; i < t4_index_n_domains(ix); i++) {
		const struct t4_index_domain *d = t4_index_domain_at(ix, i);
		if (!sec_silent(dec, d, &triggers))
			continue;
		if (f)
			fprintf(f, "  never answered    %s (none of its scheduler's %" PRIu64
				   " triggers: no counts)\n", safe(d->d.name, name, sizeof(name)),
				triggers);
		n++;
	}
	return n;
}

/* Why a log gave no interval: no returns, the filters, or returns that
 * only start a timeline (one answer per domain: a recording killed at
 * its start). */
static const char *no_intervals_why(const struct t4_decoder *dec)
{
	const struct t4_decode_opts *o = t4_decoder_opts(dec);

	if (!t4_decoder_n_domains(dec))
		return "the log holds no return packets";
	if (o->pmu_glob || o->event_glob || o->from.set || o->to.set)
		return "the log holds no return packets that pass the filters";
	return "each domain's returns start its timeline and end none (an interval needs two)";
}

/* Whether anything is missing at all. */
static bool anything_missing(const struct t4_decoder *dec)
{
	const struct t4_index *ix = t4_decoder_index(dec);
	const struct t4_status_pkt *st = t4_index_status(ix);
	const struct t4_reader_stats *rs = t4_decoder_reader_stats(dec);
	const struct t4_dec_damage *dm = t4_decoder_damage_stats(dec);
	const struct t4_dec_slices *sl = t4_decoder_slice_stats(dec);

	if (!st || !t4_index_closed(ix) || st->dropped || t4_index_overruns(ix) ||
	    t4_index_read_failures(ix) || t4_index_counts(ix)->backwards_rets ||
	    t4_index_counts(ix)->multiplexed_rets || rs->damaged_chunks || rs->truncated ||
	    rs->skipped_bytes || dm->events || dm->refs_missing ||
	    dm->phases_unplaced || dm->partial || sl->lost_events || sl->unplaced ||
	    dm->untracked_rets || t4_index_counts(ix)->implausible_refs ||
	    t4_index_counts(ix)->redescribed || t4_index_counts(ix)->bookmarks_renamed ||
	    t4_index_counts(ix)->duplicates || t4_index_counts(ix)->bookmarks_reused)
		return true;
	struct t4_index_answers a;
	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++)
		if (domain_missed(dec, t4_decoder_domain_at(dec, i), &a))
			return true;
	return n_silent(dec, NULL) > 0 || n_stopped(dec, NULL) > 0;
}

/* One line of MISSING when n is not 0: "LABEL   N NOUN(s) REST", the
 * noun singular for 1. */
static void said(FILE *f, const char *label, uint64_t n, const char *noun, const char *rest)
{
	if (n)
		fprintf(f, "  %-17s %" PRIu64 " %s%s %s\n", label, n, noun, n == 1 ? "" : "s", rest);
}

/* Domains the log described twice, otherwise (decode/index.c): the first
 * is named. */
static void redescribed(FILE *f, const struct t4_index *ix)
{
	const struct t4_index_counts *c = t4_index_counts(ix);
	const struct t4_index_domain *first = NULL;
	char name[200];

	for (size_t i = 0; i < t4_index_n_domains(ix) && !first; i++)
		if (t4_index_domain_at(ix, i)->redescribed)
			first = t4_index_domain_at(ix, i);
	if (!first)
		return;
	fprintf(f, "  re-described      %" PRIu64 " domain%s described again, otherwise (%s%s):"
		   " the first description holds; %" PRIu64 " return packet%s after it not"
		   " decoded\n",
		c->redescribed, c->redescribed == 1 ? "" : "s",
		safe(first->d.name, name, sizeof(name)), c->redescribed > 1 ? " and others" : "",
		c->rets_redescribed, c->rets_redescribed == 1 ? "" : "s");
}

static void missing(FILE *f, struct t4_output *x, const struct t4_decoder *dec)
{
	const struct t4_index *ix = t4_decoder_index(dec);
	const struct t4_status_pkt *st = t4_index_status(ix);
	const struct t4_reader_stats *rs = t4_decoder_reader_stats(dec);
	const struct t4_dec_damage *dm = t4_decoder_damage_stats(dec);
	size_t nd = t4_decoder_n_domains(dec);
	bool any = false;
	char name[200], note[160];

	size_t with_data = 0;
	for (size_t i = 0; i < nd; i++)
		with_data += t4_decoder_domain_at(dec, i)->intervals > 0;
	if (!x->o.verbose && !anything_missing(dec) && with_data) {
		fprintf(f, "\nMISSING     nothing: every domain answered every trigger; no drops,"
			   " overruns, read failures or damage (-v: the counts)\n");
		return;
	}
	fprintf(f, "\nMISSING\n");
	if (st)
		fprintf(f, "  dropped packets   %s%" PRIu64 " (their counts are carried by the"
			   " next packet)\n", t4_index_closed(ix) ? "" : "at least ", st->dropped);
	else
		fprintf(f, "  dropped packets   unknown (no status packet)\n");
	if (!t4_index_closed(ix))
		fprintf(f, "  closed            no: %s\n", t4_index_unclosed_why());
	fprintf(f, "  overruns          %" PRIu64 "\n", t4_index_overruns(ix));
	fprintf(f, "  read failures     %" PRIu64 "\n", t4_index_read_failures(ix));
	said(f, "backwards", t4_index_counts(ix)->backwards_rets, "return packet",
	     "with a counter that went backwards (its delta 0: those counts are lost)");
	said(f, "multiplexed", t4_index_counts(ix)->multiplexed_rets, "return packet",
	     "whose counters ran part of the time (time running < enabled): counts as counted,"
	     " not scaled");
	fprintf(f, "  damage            %s\n", t4_reader_damage_note(rs, note, sizeof(note)));
	if (dm->events) {
		char msg[4 * sizeof(dm->first_msg)];
		fprintf(f, "    first at byte %" PRIu64 ": %s", dm->first_offset,
			safe(dm->first_msg, msg, sizeof(msg)));
		if (dm->events > 1)
			fprintf(f, " (and %" PRIu64 " more)", dm->events - 1);
		fputc('\n', f);
	}
	fprintf(f, "  no reference      %" PRIu64 " trigger%s without a reference packet\n",
		dm->refs_missing, dm->refs_missing == 1 ? "" : "s");
	for (size_t i = 0; i < nd; i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		struct t4_index_answers a;
		if (!domain_missed(dec, d, &a))
			continue;
		if (!any)
			fprintf(f, "  unanswered triggers per domain (info's UNANSWERED; carried: the"
				   " trigger IDs between two samples, unanswered, read failures or"
				   " grid points skipped, whose counts the next interval holds; lost:"
				   " the same across damage; duplicates: returns the log holds"
				   " twice):\n");
		any = true;
		fprintf(f, "    %-28s unanswered %" PRIu64 ", duplicates %" PRIu64 ", carried %" PRIu64
			   ", lost %" PRIu64 ", too late %" PRIu64 ", unplaced %" PRIu64 "\n",
			safe(d->name, name, sizeof(name)), a.unanswered, a.duplicates,
			d->unanswered_carried, d->unanswered_lost, d->too_late, d->unplaced);
	}
	size_t silent = n_silent(dec, f) + n_stopped(dec, f);
	said(f, "duplicates", t4_index_counts(ix)->duplicates, "reference and return packet",
	     "of a trigger seen already (the log holds them twice): one trigger, one answer");
	if (!with_data)
		fprintf(f, "  no intervals: %s\n", no_intervals_why(dec));
	else if (!any && !silent)
		fprintf(f, "  every domain answered every trigger\n");
	const struct t4_dec_slices *sl = t4_decoder_slice_stats(dec);
	if (sl->lost_events || sl->unplaced)
		fprintf(f, "  activity events   %llu lost before the log (a full BPF ring buffer),"
			   " %llu without a reference packet to place them\n",
			(unsigned long long)sl->lost_events, (unsigned long long)sl->unplaced);
	said(f, "phases", dm->phases_unplaced, "bookmark change",
	     "without its bookmark packet (damage): counted in the phase before");
	said(f, "implausible", t4_index_counts(ix)->implausible_refs, "reference packet",
	     "whose trigger ID jumps further than its time allows (damage): left out");
	redescribed(f, ix);
	said(f, "renamed", t4_index_counts(ix)->bookmarks_renamed, "bookmark packet",
	     "naming an ID otherwise than its first (one ID per name): the first name holds");
	said(f, "reused", t4_index_counts(ix)->bookmarks_reused, "bookmark packet",
	     "naming an ID as an earlier ID was named (one ID per name): the first ID holds,"
	     " the phases of both are its own");
	if (dm->untracked_rets)
		fprintf(f, "  too many domains  %" PRIu64 " return packets of domains past the first %u"
			   " (a damaged or crafted log): not decoded\n",
			dm->untracked_rets, DEC_MAX_DOMAINS);
	if (dm->partial)
		fprintf(f, "  TOTALS ARE PARTIAL: counts were lost to damage, missing packets or"
			   " counters that went backwards\n");
}

static int summary_finish(void *ud, const struct t4_decoder *dec)
{
	struct t4_output *x = ud;
	FILE *f = x->f;
	struct sec_names pn = { 0 };
	int rc = sec_names_build(dec, &pn);

	if (rc < 0) {
		sec_names_free(&pn);
		return rc;
	}
	header(f, x, dec);
	phases(f, dec);
	kinds(f, dec, &pn, x->o.verbose);
	events(f, x, dec, &pn);
	workload(f, dec);
	clocks(f, x, dec);
	missing(f, x, dec);
	sec_names_free(&pn);
	return out_close(x);
}

/* ---- 8. across hosts (merged logs) ------------------------------------------ */

static int hosts_kind_print(void *ud, const struct t4_dec_domain *first, const struct t4_table *t)
{
	fprintf(ud, "\n%s across hosts, per phase name (averages over all its spans on each"
		    " host, from its totals)\n", first->kind_label);
	dec_table_print(t, ud);
	return 0;
}

static int summary_merged(void *ud, const struct t4_merge *m)
{
	struct t4_output *x = ud;
	FILE *f = x->f;
	struct t4_table t;
	char place[400], n1[200];
	int rc;

	fprintf(f, "\nACROSS HOSTS (%zu logs on one timeline: times from the first trigger of any"
		   " host, each host's clock placed on UTC by its realtime stamps)\n",
		t4_merge_n_hosts(m));
	for (size_t i = 0; i < t4_merge_n_hosts(m); i++) {
		const struct t4_place *pl = t4_merge_place(m, i);
		sec_place_text(pl, place, sizeof(place));
		fprintf(f, "  host %s is placed %s%s\n", safe(pl->host, n1, sizeof(n1)), place,
			t4_merge_decoder(m, i) ? "" : " [left out]");
	}
	if ((rc = sec_hosts_table(m, &t)) == 0)
		dec_table_print(&t, f);
	dec_table_free(&t);
	if (rc == 0 && (rc = sec_hosts_phase_table(m, &t)) == 0 && t.nrows) {
		fprintf(f, "\nPHASES ACROSS HOSTS (the same phase of several hosts side by side;"
			   " OFFSET: from its earliest start on any host; the first %d of each"
			   " host)\n",
			SEC_MAX_LISTED);
		dec_table_print(&t, f);
	}
	dec_table_free(&t);
	if (rc == 0)
		rc = sec_hosts_kind_tables(m, hosts_kind_print, f);
	return rc < 0 ? rc : out_close(x);
}

const struct out_backend out_summary = {
	.name = "summary",
	.ops = { .finish = summary_finish, .merged = summary_merged },
	.wants_metrics = false,
	.at_end = true,
};
