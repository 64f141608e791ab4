/* sections_hosts.c - the merged summary's tables across hosts, built once
 * for the summary (text) and the report (HTML), as sections.c builds a
 * single log's:
 *
 *   sec_place_text        "within +-N (maxerror ..., fit residual ...)":
 *                         the one sentence of a host's placement
 *   sec_hosts_table       one row per host: its span on the merged
 *                         timeline, its bound and what the bound is made of
 *   sec_hosts_phase_table the phases of every host, the same NAME#N of
 *                         several hosts side by side, with each one's
 *                         offset from the earliest of them
 *   sec_hosts_kind_tables per PMU kind, the headline metrics of every
 *                         phase name on every host (from the name totals)
 *
 * Times are seconds from the merged origin (the first trigger of any
 * host, on UTC), through t4_decoder_time(): the numbers of -f csv --time
 * rel, by construction.
 */
#include "out.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double rel_s(const struct t4_decoder *dec, uint64_t t)
{
	return sec_clamp((double)t4_decoder_time(dec, t, T4_TIME_REL) / 1e9);
}

void sec_place_text(const struct t4_place *pl, char *buf, size_t cap)
{
	char b[32], r[32];

	t4_fmt_duration(pl->bound_ns, b, sizeof(b));
	t4_fmt_duration(pl->residual_ns, r, sizeof(r));
	if (!pl->sync_known)
		snprintf(buf, cap, "within +-%s of its own realtime stamps (sync state unknown: UTC"
			 " itself unplaced; fit residual %s over %" PRIu64 " stamps, rate %+.3f ppm)",
			 b, r, pl->stamps, (pl->rate - 1) * 1e6);
	else
		snprintf(buf, cap, "within +-%s (the kernel's maxerror %" PRIu64 " us%s; fit residual"
			 " %s over %" PRIu64 " stamps, rate %+.3f ppm)",
			 b, pl->maxerror_us, pl->unsynced ? ", NOT synchronised" : ", synchronised", r,
			 pl->stamps, (pl->rate - 1) * 1e6);
}

/* ---- hosts ------------------------------------------------------------------ */

int sec_hosts_table(const struct t4_merge *m, struct t4_table *t)
{
	static const char *const lh[] = { "HOST", "SYNC" };
	static const char *const ch[] = { "START", "END", "BOUND +-", "MAXERROR", "RESIDUAL",
					  "RATE", "STAMPS" };
	static const char *const cu[] = { "s", "s", "us", "us", "us", "ppm", "" };
	int rc = dec_table_init(t, 2, lh, 7, ch, cu);

	dec_table_times(t, 0, 2);

	for (size_t i = 0; rc == 0 && i < t4_merge_n_hosts(m); i++) {
		const struct t4_place *pl = t4_merge_place(m, i);
		const struct t4_decoder *dec = t4_merge_decoder(m, i);
		const char *l[] = { pl->host, !pl->sync_known ? "unknown"
					      : pl->unsynced  ? "unsynchronised"
							      : "synchronised" };
		double v[] = { dec ? rel_s(dec, pl->first_ns) : NAN,
			       dec ? rel_s(dec, pl->last_ns) : NAN,
			       (double)pl->bound_ns / 1e3,
			       pl->sync_known ? (double)pl->maxerror_us : NAN,
			       (double)pl->residual_ns / 1e3,
			       (pl->rate - 1) * 1e6,
			       NAN };
		if ((rc = dec_table_row(t, l, v)) == 0)
			dec_table_set_integer(t, 6, pl->stamps);
	}
	return rc;
}

/* ---- phases side by side ------------------------------------------------------- */

struct hph {
	char label[160];
	size_t host, phase;
	double start;
	double group_start; /* the earliest start of its label on any host */
};

static int by_label(const void *a, const void *b)
{
	const struct hph *x = a, *y = b;
	int c = strcmp(x->label, y->label);

	return c ? c : x->host < y->host ? -1 : x->host > y->host;
}

static int by_group(const void *a, const void *b)
{
	const struct hph *x = a, *y = b;

	if (x->group_start != y->group_start)
		return x->group_start < y->group_start ? -1 : 1;
	return by_label(a, b);
}

/* The first SEC_MAX_LISTED phases of every decoded host. */
static struct hph *collect_phases(const struct t4_merge *m, size_t *n)
{
	size_t cap = 0, k = 0;
	struct hph *v;

	for (size_t i = 0; i < t4_merge_n_hosts(m); i++)
		if (t4_merge_decoder(m, i)) {
			size_t np = t4_decoder_n_phases(t4_merge_decoder(m, i));
			cap += np < SEC_MAX_LISTED ? np : SEC_MAX_LISTED;
		}
	if (!(v = calloc(cap ? cap : 1, sizeof(*v))))
		return NULL;
	for (size_t i = 0; i < t4_merge_n_hosts(m); i++) {
		const struct t4_decoder *dec = t4_merge_decoder(m, i);
		for (size_t p = 0; dec && p < t4_decoder_n_phases(dec) && p < SEC_MAX_LISTED; p++) {
			const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, p);
			sec_phase_label(ph, v[k].label, sizeof(v[k].label));
			v[k].host = i;
			v[k].phase = p;
			v[k].start = rel_s(dec, ph->start_ns);
			k++;
		}
	}
	/* each label's earliest start, then in that order */
	qsort(v, k, sizeof(*v), by_label);
	for (size_t a = 0, b; a < k; a = b) {
		double first = v[a].start;
		for (b = a; b < k && !strcmp(v[b].label, v[a].label); b++)
			first = dec_fmin(first, v[b].start);
		for (size_t j = a; j < b; j++)
			v[j].group_start = first;
	}
	qsort(v, k, sizeof(*v), by_group);
	*n = k;
	return v;
}

int sec_hosts_phase_table(const struct t4_merge *m, struct t4_table *t)
{
	static const char *const lh[] = { "PHASE#OCCURRENCE", "HOST" };
	static const char *const ch[] = { "START", "END", "DURATION", "OFFSET", "BOUND +-" };
	/* us: a column takes one format, fewer decimals as its largest value
	 * grows, and an unsynchronised host's bound is 16 s */
	static const char *const cu[] = { "s", "s", "s", "us", "us" };
	size_t n = 0;
	struct hph *v = collect_phases(m, &n);
	int rc = v ? dec_table_init(t, 2, lh, 5, ch, cu) : t4_err(ENOMEM, "out of memory");

	dec_table_times(t, 0, 2);
	dec_table_span(t, 2);

	for (size_t k = 0; rc == 0 && k < n; k++) {
		const struct t4_decoder *dec = t4_merge_decoder(m, v[k].host);
		const struct t4_place *pl = t4_merge_place(m, v[k].host);
		const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, v[k].phase);
		const char *l[] = { v[k].label, pl->host };
		double val[] = { v[k].start, rel_s(dec, ph->end_ns),
				 (double)t4_decoder_span(dec, ph->start_ns, ph->end_ns, T4_TIME_REL) / 1e9,
				 (v[k].start - v[k].group_start) * 1e6, (double)pl->bound_ns / 1e3 };
		rc = dec_table_row(t, l, val);
	}
	free(v);
	return rc;
}

/* ---- metrics per kind across hosts ------------------------------------------------ */

/* Distinct phase names of every host, in the order of their first start
 * on the merged timeline. */
struct hname {
	const char *name;
	double start;
};

static int by_name(const void *a, const void *b)
{
	const struct hname *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->start < y->start ? -1 : x->start > y->start;
}

static int by_start(const void *a, const void *b)
{
	const struct hname *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return strcmp(x->name, y->name);
}

static struct hname *collect_names(const struct t4_merge *m, size_t *n)
{
	size_t cap = 0, k = 0, u = 0;
	struct hname *v;

	for (size_t i = 0; i < t4_merge_n_hosts(m); i++)
		if (t4_merge_decoder(m, i))
			cap += t4_decoder_n_phases(t4_merge_decoder(m, i));
	if (!(v = calloc(cap ? cap : 1, sizeof(*v))))
		return NULL;
	for (size_t i = 0; i < t4_merge_n_hosts(m); i++) {
		const struct t4_decoder *dec = t4_merge_decoder(m, i);
		for (size_t p = 0; dec && p < t4_decoder_n_phases(dec); p++) {
			const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, p);
			v[k++] = (struct hname){ ph->name, rel_s(dec, ph->start_ns) };
		}
	}
	qsort(v, k, sizeof(*v), by_name); /* the first of each name is its earliest */
	for (size_t j = 0; j < k; j++)
		if (!u || strcmp(v[u - 1].name, v[j].name))
			v[u++] = v[j];
	qsort(v, u, sizeof(*v), by_start);
	*n = u;
	return v;
}

/* The metric of domain d named like column c of the table's kind. */
static int64_t metric_named(const struct t4_dec_domain *d, const char *name)
{
	for (uint32_t m = 0; m < d->n_metrics; m++)
		if (d->metric_selected[m] && !strcmp(d->metric_name[m], name))
			return m;
	return -1;
}

/* Rows of one phase name on one host: each of its domains of the kind. */
static int name_rows(struct t4_table *t, const struct t4_decoder *dec, const char *host,
		     const char *name, uint32_t kind, const char *const *metric, size_t nc)
{
	const struct t4_index *ix = t4_decoder_index(dec);
	int64_t id = *name ? t4_index_bookmark_id(ix, name) : 0;
	double v[T4_MAX_COUNTERS], row[SEC_MAX_COLS];
	int rc = 0;

	if (id < 0)
		return 0;
	for (size_t j = 0; j < t4_decoder_n_domains(dec) && rc == 0; j++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, j);
		uint64_t el;
		const t4_u128 *tot;
		if (!d->selected || !d->intervals || d->ix->d.kind != kind ||
		    !(tot = t4_decoder_name_totals(dec, (uint32_t)id, j, &el)) || !el)
			continue;
		t4_decoder_metrics_of(dec, j, tot, el, v);
		for (size_t c = 0; c < nc; c++) {
			int64_t mi = metric_named(d, metric[c]);
			row[c] = mi >= 0 ? v[mi] : NAN;
		}
		const char *l[] = { *name ? name : "(none)", host, d->name };
		rc = dec_table_row(t, l, row);
	}
	return rc;
}

/* The table of one kind, its columns those of its first domain. */
static int hosts_kind_table(const struct t4_merge *m, const struct hname *names, size_t nn,
			    const struct t4_dec_domain *first, sec_hosts_kind_fn fn, void *ud)
{
	static const char *const lh[] = { "PHASE", "HOST", "PMU" };
	uint32_t cols[SEC_MAX_COLS];
	size_t nc;
	struct t4_table t;
	int rc;

	if ((rc = sec_kind_table_init(&t, first, lh, 3, cols, &nc)) < 0)
		return rc;
	for (size_t k = 0; k < nn && rc == 0; k++)
		for (size_t i = 0; i < t4_merge_n_hosts(m) && rc == 0; i++)
			if (t4_merge_decoder(m, i))
				rc = name_rows(&t, t4_merge_decoder(m, i), t4_merge_place(m, i)->host,
					       names[k].name, first->ix->d.kind, t.chead, nc);
	if (rc == 0 && t.nrows)
		rc = fn(ud, first, &t);
	dec_table_free(&t);
	return rc;
}

int sec_hosts_kind_tables(const struct t4_merge *m, sec_hosts_kind_fn fn, void *ud)
{
	struct t4_idmap done = { 0 }; /* kinds with a table */
	size_t nn = 0;
	struct hname *names = collect_names(m, &nn);
	int rc = names ? 0 : t4_err(ENOMEM, "out of memory");

	for (size_t i = 0; i < t4_merge_n_hosts(m) && rc == 0; i++) {
		const struct t4_decoder *dec = t4_merge_decoder(m, i);
		for (size_t j = 0; dec && j < t4_decoder_n_domains(dec) && rc == 0; j++) {
			const struct t4_dec_domain *d = t4_decoder_domain_at(dec, j);
			uint32_t cols[SEC_MAX_COLS];
			if (!d->selected || !d->intervals || !sec_brief_cols(d, cols) ||
			    dec_idmap_get(&done, d->ix->d.kind) >= 0)
				continue;
			if ((rc = dec_idmap_put(&done, d->ix->d.kind, 1)) == 0)
				rc = hosts_kind_table(m, names, nn, d, fn, ud);
		}
	}
	dec_idmap_free(&done);
	free(names);
	return rc;
}
