/* sections.c - the summary's tables, built once for every output that
 * shows them: the summary prints them as text (out_summary.c), the report
 * renders the same tables as HTML (out_report.c). A number the report
 * shows for a phase is therefore the summary's number by construction:
 * the same rows from the same totals, and each cell in the same format
 * (dec_table_cell).
 *
 *   sec_phase_table   the phases: one row per span (NAME#OCCURRENCE)
 *   sec_kind_tables   per PMU kind, the headline metrics of every PMU in
 *                     every phase (averages over the phase from its totals)
 *   sec_clock_table   every domain's clock model
 *   sec_answers       which triggers a domain the outputs speak of answered
 *                     (t4_index_answers: info's account), sec_silent one that
 *                     never answered, sec_stopped_text one that stopped
 */
#include "out.h"
#include "collector/collector.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Seconds from the origin; a placed instant a hair before it (a sample
 * read just before the first trigger's reference time) is 0, never the
 * "-0.000" of a rounding. */
double sec_secs(uint64_t ns, uint64_t origin)
{
	return sec_clamp(ns >= origin ? (double)(ns - origin) / 1e9 : -(double)(origin - ns) / 1e9);
}

double sec_clamp(double s)
{
	return s < 0 && s > -0.0005 ? 0 : s; /* the table prints 3 decimals */
}

/* Seconds from the origin; merged, from the merged timeline's origin. */
static double sec_rel(const struct t4_decoder *dec, uint64_t ns, uint64_t origin)
{
	if (t4_decoder_place(dec))
		return sec_clamp((double)t4_decoder_time(dec, ns, T4_TIME_REL) / 1e9);
	return sec_secs(ns, origin);
}

void sec_phase_label(const struct t4_dec_phase *p, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s#%u", *p->name ? p->name : "(none)", p->occurrence);
}

uint64_t sec_log_span(const struct t4_decoder *dec)
{
	const struct t4_index *ix = t4_decoder_index(dec);
	uint64_t last = 0, o = t4_decoder_origin_ns(dec);

	for (size_t i = 0; i < t4_index_n_scheds(ix); i++)
		if (t4_index_sched_at(ix, i)->last_ns > last)
			last = t4_index_sched_at(ix, i)->last_ns;
	return last > o ? last - o : 0;
}

bool sec_answers(const struct t4_decoder *dec, const struct t4_index_domain *d,
		 struct t4_index_answers *a)
{
	const struct t4_index *ix = t4_decoder_index(dec);
	const struct t4_event_pkt *e = t4_index_event(ix, d->d.domain_id, 0);
	const char *label = "";
	size_t n;

	t4_kind_formulas(d->d.kind, &n, &label);
	if (!dec_domain_selected(dec->o.pmu_glob, d->d.name, e ? e->pmu : "", label, d->d.kind))
		return false;
	t4_index_answers(ix, d, a);
	return true;
}

bool sec_silent(const struct t4_decoder *dec, const struct t4_index_domain *d,
		uint64_t *triggers)
{
	struct t4_index_answers a;

	if (d->rets || !sec_answers(dec, d, &a) || !a.triggers)
		return false;
	*triggers = a.triggers;
	return true;
}

bool sec_stopped_text(const struct t4_decoder *dec, const struct t4_index_domain *d,
		      char *buf, size_t cap)
{
	struct t4_index_answers a;
	char name[4 * T4_NAME_MAX];

	if (!sec_answers(dec, d, &a) || !a.answered || !a.after)
		return false;
	snprintf(buf, cap, "%s after trigger %" PRIu64 " (%.3f s): %" PRIu64 " trigger%s after it"
		 " unanswered", t4_text(d->d.name, T4_TEXT_CONTROL, name, sizeof(name)),
		 a.last_trigger, sec_rel(dec, a.last_ns, t4_decoder_origin_ns(dec)), a.after,
		 a.after == 1 ? "" : "s");
	return true;
}

/* ---- phases ---------------------------------------------------------------- */

int sec_phase_table(const struct t4_decoder *dec, struct t4_table *t)
{
	size_t n = t4_decoder_n_phases(dec);
	uint64_t o = t4_decoder_origin_ns(dec);
	static const char *const lh[] = { "PHASE#OCCURRENCE" };
	static const char *const ch[] = { "START", "END", "DURATION", "TRIGGERS" };
	static const char *const cu[] = { "s", "s", "s", "" };
	char lab[160];
	int rc = dec_table_init(t, 1, lh, 4, ch, cu);

	dec_table_times(t, 0, 2);
	dec_table_span(t, 2);
	for (size_t i = 0; rc == 0 && i < n && i < SEC_MAX_LISTED; i++) {
		const struct t4_dec_phase *p = t4_decoder_phase_at(dec, i);
		const char *l[] = { lab };
		double v[] = { sec_rel(dec, p->start_ns, o), sec_rel(dec, p->end_ns, o),
			       (double)t4_decoder_span(dec, p->start_ns, p->end_ns, T4_TIME_REL) / 1e9,
			       NAN };
		sec_phase_label(p, lab, sizeof(lab));
		if ((rc = dec_table_row(t, l, v)) == 0)
			dec_table_set_integer(t, 3, p->triggers);
	}
	return rc;
}

/* ---- phase names --------------------------------------------------------------- */

void sec_names_free(struct sec_names *pn)
{
	free(pn->first);
	free(pn->count);
	memset(pn, 0, sizeof(*pn));
}

/* One pass: 100,000 bookmarks are summarised as fast as ten. */
int sec_names_build(const struct t4_decoder *dec, struct sec_names *pn)
{
	size_t np = t4_decoder_n_phases(dec);
	struct t4_idmap slot = { 0 };
	int rc = 0;

	pn->n = 0;
	pn->first = calloc(np + 1, sizeof(size_t));
	pn->count = calloc(np + 1, sizeof(size_t));
	if (!pn->first || !pn->count)
		return t4_err(ENOMEM, "out of memory");
	for (size_t p = 0; p < np && rc >= 0; p++) {
		uint32_t id = t4_decoder_phase_at(dec, p)->bookmark_id;
		int64_t k = dec_idmap_get(&slot, id);
		if (k < 0) {
			pn->first[pn->n] = p;
			rc = dec_idmap_put(&slot, id, (uint32_t)pn->n);
			k = (int64_t)pn->n++;
		}
		pn->count[k]++;
	}
	dec_idmap_free(&slot);
	return rc;
}

void sec_name_label(const struct t4_decoder *dec, const struct sec_names *pn, size_t k,
		    char *buf, size_t cap)
{
	const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, pn->first[k]);

	if (pn->count[k] == 1)
		sec_phase_label(ph, buf, cap);
	else
		snprintf(buf, cap, "%s (all %zu)", *ph->name ? ph->name : "(none)", pn->count[k]);
}

bool sec_each_occurrence(const struct t4_decoder *dec, const struct sec_names *pn, bool verbose)
{
	size_t np = t4_decoder_n_phases(dec);

	return np <= SEC_MAX_LISTED && (verbose || pn->n == np);
}

int sec_phase_rows(const struct t4_decoder *dec, const struct sec_names *pn, bool verbose,
		   sec_row_fn fn, void *ud)
{
	size_t np = t4_decoder_n_phases(dec);
	bool each = sec_each_occurrence(dec, pn, verbose);
	char lab[160];
	int rc = 0;

	for (size_t p = 0; p < np && each && rc == 0; p++) {
		const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, p);
		sec_phase_label(ph, lab, sizeof(lab));
		rc = fn(ud, lab, p, ph->bookmark_id);
	}
	/* a name's row: every name's when the occurrences are not listed, else
	 * only a recurring name's (one that occurs once is its occurrence's
	 * row already) */
	for (size_t k = 0; k < pn->n && rc == 0; k++) {
		const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, pn->first[k]);
		if (each && pn->count[k] == 1)
			continue;
		sec_name_label(dec, pn, k, lab, sizeof(lab));
		rc = fn(ud, lab, SIZE_MAX, ph->bookmark_id);
	}
	return rc;
}

/* ---- metrics per kind ---------------------------------------------------------- */

size_t sec_brief_cols(const struct t4_dec_domain *d, uint32_t *cols)
{
	size_t n = 0;

	for (uint32_t m = 0; m < d->n_metrics && n < SEC_MAX_COLS; m++)
		if (d->metric_brief[m] && d->metric_selected[m])
			cols[n++] = m;
	return n;
}

static int table_row(struct t4_table *t, const struct t4_decoder *dec, size_t dom,
		     const char *label, const t4_u128 *tot, uint64_t el, const uint32_t *cols,
		     size_t nc)
{
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, dom);
	double v[T4_MAX_COUNTERS], row[SEC_MAX_COLS];
	const char *l[] = { label, d->name };

	t4_decoder_metrics_of(dec, dom, tot, el, v);
	for (size_t c = 0; c < nc; c++)
		row[c] = el ? v[cols[c]] : NAN;
	return dec_table_row(t, l, row);
}

struct kind_row {
	struct t4_table *t;
	const struct t4_decoder *dec;
	size_t dom;
	const uint32_t *cols;
	size_t nc;
};

/* One row of a kind table (sec_phase_rows): the domain's totals in a
 * phase, or over a name's every phase. */
static int kind_row(void *ud, const char *label, size_t phase, uint32_t bookmark_id)
{
	struct kind_row *k = ud;
	uint64_t el;
	const t4_u128 *tot = phase == SIZE_MAX
				     ? t4_decoder_name_totals(k->dec, bookmark_id, k->dom, &el)
				     : t4_decoder_phase_totals(k->dec, phase, k->dom, &el);

	return tot && el ? table_row(k->t, k->dec, k->dom, label, tot, el, k->cols, k->nc) : 0;
}

static int kind_rows(struct t4_table *t, const struct t4_decoder *dec, size_t dom,
		     const uint32_t *cols, size_t nc, const struct sec_names *pn, bool verbose)
{
	struct kind_row k = { t, dec, dom, cols, nc };

	return sec_phase_rows(dec, pn, verbose, kind_row, &k);
}

int sec_kind_table_init(struct t4_table *t, const struct t4_dec_domain *d,
			const char *const *lh, size_t nl, uint32_t *cols, size_t *nc)
{
	const char *ch[SEC_MAX_COLS], *cu[SEC_MAX_COLS];

	*nc = sec_brief_cols(d, cols);
	for (size_t c = 0; c < *nc; c++) {
		ch[c] = d->metric_name[cols[c]];
		cu[c] = d->metric_unit[cols[c]];
	}
	return dec_table_init(t, nl, lh, *nc, ch, cu);
}

/* The table of the kind of domain i: every selected domain of that kind
 * with intervals (marked done). */
static int kind_table(const struct t4_decoder *dec, size_t i, bool *done,
		      const struct sec_names *pn, bool verbose, sec_kind_fn fn, void *ud)
{
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
	static const char *const lh[] = { "PHASE", "PMU" };
	uint32_t cols[SEC_MAX_COLS];
	size_t nc;
	struct t4_table t;
	int rc;

	if ((rc = sec_kind_table_init(&t, d, lh, 2, cols, &nc)) < 0)
		return rc;
	for (size_t j = i; j < t4_decoder_n_domains(dec) && rc == 0; j++) {
		const struct t4_dec_domain *e = t4_decoder_domain_at(dec, j);
		if (done[j] || !e->selected || e->ix->d.kind != d->ix->d.kind || !e->intervals)
			continue;
		done[j] = true;
		rc = kind_rows(&t, dec, j, cols, nc, pn, verbose);
	}
	if (rc == 0)
		rc = fn(ud, dec, i, cols, nc, &t);
	dec_table_free(&t);
	return rc;
}

int sec_kind_tables(const struct t4_decoder *dec, const struct sec_names *pn, bool verbose,
		    sec_kind_fn fn, void *ud)
{
	size_t nd = t4_decoder_n_domains(dec);
	bool *done = calloc(nd ? nd : 1, sizeof(*done));
	int rc = 0;

	if (!done)
		return t4_err(ENOMEM, "out of memory");
	for (size_t i = 0; i < nd && rc == 0; i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		uint32_t cols[SEC_MAX_COLS];
		if (!done[i] && d->selected && d->intervals && sec_brief_cols(d, cols))
			rc = kind_table(dec, i, done, pn, verbose, fn, ud);
	}
	free(done);
	return rc;
}

/* ---- clocks ---------------------------------------------------------------------- */

/* The kind's frequency formula (unit GHz) over every interval decoded of
 * domain i, from its totals and the time they cover (not its span, which
 * holds what a filter left out and a damaged stretch's hole): NaN when
 * the kind has none. */
static double formula_freq(const struct t4_decoder *dec, size_t i)
{
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
	double v[T4_MAX_COUNTERS];

	if (!d->elapsed_ns)
		return NAN;
	t4_decoder_metrics_of(dec, i, d->totals, d->elapsed_ns, v);
	for (uint32_t m = 0; m < d->n_metrics; m++)
		if (!strcmp(d->metric_unit[m], "GHz") && strstr(d->metric_name[m], "freq"))
			return v[m];
	return NAN;
}

static int clock_row(struct t4_table *t, const struct t4_decoder *dec, size_t i)
{
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
	const struct t4_clock_stats *c = &d->clock;
	const char *model = c->reference_clocked ? "window" : t4_clock_model_name(c->model);
	const char *l[] = { d->name, model,
			    c->reference_clocked ? "(reference clock)"
			    : c->segments > 1    ? "(steps)"
						 : "" };
	double nominal = d->ix->d.nominal_hz ? (double)d->ix->d.nominal_hz / 1e6 : NAN;
	double v[] = { c->reference_clocked ? NAN : c->freq_hz / 1e6,
		       formula_freq(dec, i) * 1e3,
		       nominal,
		       c->reference_clocked || c->segments > 1 ? NAN : c->drift_ppm,
		       c->reference_clocked ? NAN : c->residual_ns,
		       NAN, (double)c->window_p50, (double)c->window_p99,
		       (double)c->bound_p50, (double)c->bound_p99 };
	int rc = dec_table_row(t, l, v);

	if (rc == 0 && !c->reference_clocked)
		dec_table_set_integer(t, 5, c->segments);
	return rc;
}

int sec_clock_table(const struct t4_decoder *dec, struct t4_table *t)
{
	static const char *const lh[] = { "DOMAIN", "MODEL", "" };
	static const char *const ch[] = { "FREQ", "FORMULA", "NOMINAL", "DRIFT", "RESIDUAL",
					  "SEGMENTS", "WINDOW p50", "p99", "BOUND p50", "p99" };
	static const char *const cu[] = { "MHz", "MHz", "MHz", "ppm", "ns", "", "ns", "ns", "ns",
					  "ns" };
	int rc = dec_table_init(t, 3, lh, 10, ch, cu);

	for (size_t i = 0; rc == 0 && i < t4_decoder_n_domains(dec); i++)
		if (t4_decoder_domain_at(dec, i)->selected &&
		    t4_decoder_domain_at(dec, i)->clock.samples)
			rc = clock_row(t, dec, i);
	return rc;
}
