/* out_csv.c - `decode -f csv`: the timeline in tidy long form, one row per
 * interval x event and per interval x metric:
 *
 *   trigger,start_ns,end_ns,bookmark,domain,pmu,event,value,unit
 *
 * and `decode -f phases-csv`: the CPU and GPU slices, one row each:
 *
 *   start_ns,end_ns,kind,cpu,pid,tid,name,context
 *
 * (kind `cpu`: a thread on a CPU, name its comm; kind `gpu`: a job of the
 * GPU fence context `context`, submitted by pid/tid, name its timeline).
 *
 * Times are integer ns of the reference clock; counts are integers,
 * metrics decimals (absent metrics have no row). Fields are quoted by RFC
 * 4180 when they hold the separator (-x), a quote or a line break. The
 * part of a row shared by every row of an interval is formatted once.
 */
#include "out.h"
#include "../util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct csv_state {
	struct t4_wbuf prefix; /* trigger..domain of the current interval */
};

static void header(struct t4_output *x, const char *const *cols, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			t4_wbuf_ch(&x->w, x->o.csv_sep);
		t4_wbuf_str(&x->w, cols[i]);
	}
	t4_wbuf_ch(&x->w, '\n');
}

static int csv_init(struct t4_output *x)
{
	struct csv_state *st = calloc(1, sizeof(*st));
	static const char *const cols[] = {
		"trigger", "start_ns", "end_ns", "bookmark", "domain",
		"pmu", "event", "value", "unit",
	};

	if (!st || t4_wbuf_init(&st->prefix, NULL, 1024) < 0) {
		free(st);
		return t4_err(ENOMEM, "out of memory");
	}
	x->state = st;
	header(x, cols, T4_ARRAY_LEN(cols));
	return 0;
}

static void csv_fini(struct t4_output *x)
{
	struct csv_state *st = x->state;

	if (st)
		t4_wbuf_free(&st->prefix);
	free(st);
}

static void row_start(struct t4_output *x, const char *pmu, const char *name)
{
	struct csv_state *st = x->state;
	char sep = x->o.csv_sep;

	t4_wbuf_put(&x->w, st->prefix.buf, st->prefix.len);
	t4_wbuf_csv_field(&x->w, pmu, sep);
	t4_wbuf_ch(&x->w, sep);
	t4_wbuf_csv_field(&x->w, name, sep);
	t4_wbuf_ch(&x->w, sep);
}

static void row_end(struct t4_output *x, const char *unit)
{
	t4_wbuf_ch(&x->w, x->o.csv_sep);
	t4_wbuf_csv_field(&x->w, unit, x->o.csv_sep);
	t4_wbuf_ch(&x->w, '\n');
}

static int csv_interval(void *ud, const struct t4_decoder *dec, const struct t4_interval *iv)
{
	struct t4_output *x = ud;
	struct csv_state *st = x->state;
	const struct t4_dec_domain *dm = t4_decoder_domain_at(dec, iv->domain);
	struct t4_wbuf *p = &st->prefix;
	char sep = x->o.csv_sep;

	p->len = 0;
	t4_wbuf_u64(p, iv->trigger);
	t4_wbuf_ch(p, sep);
	t4_wbuf_u64(p, iv->start_ns);
	t4_wbuf_ch(p, sep);
	t4_wbuf_u64(p, iv->end_ns);
	t4_wbuf_ch(p, sep);
	t4_wbuf_csv_field(p, t4_decoder_bookmark(dec, iv->bookmark_id), sep);
	t4_wbuf_ch(p, sep);
	t4_wbuf_csv_field(p, dm->name, sep);
	t4_wbuf_ch(p, sep);
	for (uint32_t i = 0; i < iv->n_counts && i < dm->n_counts; i++) {
		if (!dm->event_selected[i])
			continue;
		row_start(x, dm->pmu, dm->event_name[i]);
		t4_wbuf_u64(&x->w, iv->counts[i]);
		row_end(x, dm->event_unit[i]);
	}
	for (uint32_t m = 0; iv->metrics && m < dm->n_metrics; m++) {
		if (!dm->metric_selected[m] || iv->metrics[m] != iv->metrics[m])
			continue; /* not asked for, or absent (NaN) */
		row_start(x, dm->pmu, dm->metric_name[m]);
		t4_wbuf_f64(&x->w, iv->metrics[m]);
		row_end(x, dm->metric_unit[m]);
	}
	return out_status(x);
}

static int csv_finish(void *ud, const struct t4_decoder *dec)
{
	(void)dec;
	return out_close(ud);
}

/* ---- phases-csv ------------------------------------------------------------ */

static int phases_init(struct t4_output *x)
{
	static const char *const cols[] = {
		"start_ns", "end_ns", "kind", "cpu", "pid", "tid", "name", "context",
	};

	header(x, cols, T4_ARRAY_LEN(cols));
	return 0;
}

static void field_u64(struct t4_wbuf *w, uint64_t v, char sep)
{
	t4_wbuf_u64(w, v);
	t4_wbuf_ch(w, sep);
}

static int phases_slice(void *ud, const struct t4_decoder *dec, const struct t4_slice *s)
{
	struct t4_output *x = ud;
	struct t4_wbuf *w = &x->w;
	char sep = x->o.csv_sep;
	bool gpu = s->kind == T4_SLICE_GPU;

	(void)dec;
	field_u64(w, s->start_ns, sep);
	field_u64(w, s->end_ns, sep);
	t4_wbuf_str(w, gpu ? "gpu" : "cpu");
	t4_wbuf_ch(w, sep);
	if (!gpu)
		t4_wbuf_u64(w, s->cpu);
	t4_wbuf_ch(w, sep);
	field_u64(w, s->pid, sep);
	field_u64(w, s->tid, sep);
	t4_wbuf_csv_field(w, gpu ? s->timeline : s->name, sep);
	t4_wbuf_ch(w, sep);
	if (gpu)
		t4_wbuf_u64(w, s->context);
	t4_wbuf_ch(w, '\n');
	return w->error;
}

const struct out_backend out_phases_csv = {
	.name = "phases-csv",
	.ops = { .slice = phases_slice, .finish = csv_finish },
	.init = phases_init,
};

const struct out_backend out_csv = {
	.name = "csv",
	.ops = { .interval = csv_interval, .finish = csv_finish },
	.wants_metrics = true,
	.init = csv_init,
	.fini = csv_fini,
};
