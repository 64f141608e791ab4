/* out_csv.c - the CSV outputs:
 *
 * `decode -f csv`: the timeline in tidy long form, one row per interval x
 * event (kind `counter`) and per interval x metric (kind `metric`):
 *
 *   trigger,start_ns,end_ns,bookmark,domain,pmu,event,value,unit,kind,occurrence
 *
 * An interval that a phase boundary cuts is one row set per phase
 * (attrib.c), so grouping by (bookmark, occurrence) gives exactly the
 * summary's phase totals. `occurrence` numbers the spans of one bookmark
 * (1, 2, ...), as the summary's NAME#N does.
 *
 * `decode -f phases`: the phase table, one row per phase span:
 *
 *   phase,occurrence,start_ns,end_ns,duration_ns,triggers,boundary
 *
 * (`boundary`: `exact` where the bookmarks' set times cut the phases,
 * `trigger` where the reference packets' bookmarks do: FORMAT.md 6).
 *
 * `decode -f slices` (`phases-csv`, its old name): the CPU and GPU
 * slices, one row each:
 *
 *   start_ns,end_ns,kind,cpu,pid,tid,name,context
 *
 * (kind `cpu`: a thread on a CPU, name its comm; kind `gpu`: a job of the
 * GPU fence context `context`, submitted by pid/tid, name its timeline).
 *
 * Several hosts' logs merged (decode a.t4t b.t4t): every format's rows
 * start with a `host` column (the host's name, NAME/N where several logs
 * share one), each host's rows together, in the order the logs were given.
 *
 * Times are integer ns in the --time base (the reference clock, ns from
 * the first trigger, or UTC ns; merged: UTC through each host's line by
 * default, rel from the first trigger of any host, ref each host's own
 * clock); counts are integers, metrics decimals
 * (absent metrics have no row). Fields are quoted by RFC 4180 when they
 * hold the separator (-x), a quote or a line break; bytes that are not
 * UTF-8 become the text \xNN (and, written to a terminal, control
 * characters too: a name cannot drive it). The part of a row shared by every row of an
 * interval is formatted once, and a domain's names (domain, PMU, each
 * event's and metric's name, unit and kind) are escaped once while they
 * stay the same (out_cells.c): a row is then five copies and a number.
 */
#include "out.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct csv_state {
	struct t4_wbuf prefix; /* trigger..pmu of the current interval */
	struct t4_wbuf suffix; /* ,occurrence and the line end */
	bool checked;          /* the time base was checked against the log */
	/* part 0 "DOMAIN,PMU,"; name k (metrics after the events): part
	 * 1 + 2k "NAME," and part 2 + 2k ",UNIT,KIND" */
	struct out_cells cells;
};

/* How text from the log is written (dec_wbuf_csv_field): on a terminal,
 * its control characters as \xNN too. */
static unsigned text_flags(const struct t4_output *x)
{
	return x->o.terminal ? T4_TEXT_CONTROL : 0;
}

/* The host field of a merged row (nothing for a single log). */
static void field_host(struct t4_output *x, struct t4_wbuf *w, const struct t4_decoder *dec)
{
	const struct t4_place *pl = t4_decoder_place(dec);

	if (!x->o.hosts)
		return;
	dec_wbuf_csv_field(w, pl ? pl->host : "", x->o.csv_sep, text_flags(x));
	dec_wbuf_ch(w, x->o.csv_sep);
}

/* A reference time in the output's time base. */
static void field_time(struct t4_output *x, struct t4_wbuf *w, const struct t4_decoder *dec,
		       uint64_t t)
{
	dec_wbuf_time(w, dec, t, x->o.time);
	dec_wbuf_ch(w, x->o.csv_sep);
}

/* Once, at the first row: can the log give the times asked for? */
static int time_check(struct t4_output *x, const struct t4_decoder *dec, bool *checked)
{
	if (*checked)
		return 0;
	*checked = true;
	return t4_decoder_time_ok(dec, x->o.time);
}

/* The header line; merged logs (-o hosts) start every row with the host. */
static void header(struct t4_output *x, const char *const *cols, size_t n)
{
	if (x->o.hosts) {
		dec_wbuf_str(&x->w, "host");
		dec_wbuf_ch(&x->w, x->o.csv_sep);
	}
	for (size_t i = 0; i < n; i++) {
		if (i)
			dec_wbuf_ch(&x->w, x->o.csv_sep);
		dec_wbuf_str(&x->w, cols[i]);
	}
	dec_wbuf_ch(&x->w, '\n');
}

static void csv_free(struct csv_state *st)
{
	dec_wbuf_free(&st->prefix);
	dec_wbuf_free(&st->suffix);
	out_cells_free(&st->cells);
	free(st);
}

/* Name k's two parts: "NAME," and ",UNIT,KIND". */
static void cells_add(struct out_cell_set *s, const char *name, const char *unit,
		      const char *kind, char sep, unsigned tf)
{
	dec_wbuf_csv_field(&s->text, name, sep, tf);
	dec_wbuf_ch(&s->text, sep);
	out_cell_end(s);
	dec_wbuf_ch(&s->text, sep);
	dec_wbuf_csv_field(&s->text, unit, sep, tf);
	dec_wbuf_ch(&s->text, sep);
	dec_wbuf_str(&s->text, kind);
	out_cell_end(s);
}

static void cells_render(void *ud, const struct t4_dec_domain *dm, struct out_cell_set *s)
{
	const struct t4_output *x = ud;
	char sep = x->o.csv_sep;
	unsigned tf = text_flags(x);

	dec_wbuf_csv_field(&s->text, dm->name, sep, tf);
	dec_wbuf_ch(&s->text, sep);
	dec_wbuf_csv_field(&s->text, dm->pmu, sep, tf);
	dec_wbuf_ch(&s->text, sep);
	out_cell_end(s);
	for (uint32_t k = 0; k < dm->n_counts; k++)
		cells_add(s, dm->event_name[k], dm->event_unit[k], "counter", sep, tf);
	for (uint32_t m = 0; m < dm->n_metrics; m++)
		cells_add(s, dm->metric_name[m], dm->metric_unit[m], "metric", sep, tf);
}

static int csv_init(struct t4_output *x)
{
	struct csv_state *st = calloc(1, sizeof(*st));
	static const char *const cols[] = {
		"trigger", "start_ns", "end_ns", "bookmark", "domain", "pmu",
		"event", "value", "unit", "kind", "occurrence",
	};
	bool ok = st && dec_wbuf_init(&st->prefix, NULL, 1024) == 0 &&
		  dec_wbuf_init(&st->suffix, NULL, 64) == 0 &&
		  out_cells_init(&st->cells, cells_render, x) == 0;

	if (!ok) {
		if (st)
			csv_free(st);
		return t4_err(ENOMEM, "out of memory");
	}
	x->state = st;
	header(x, cols, T4_ARRAY_LEN(cols));
	return 0;
}

static void csv_fini(struct t4_output *x)
{
	if (x->state)
		csv_free(x->state);
}

/* decode -j: whether the time base was checked. */
static void csv_fork_state(struct t4_output *copy, const struct t4_output *x)
{
	((struct csv_state *)copy->state)->checked = ((const struct csv_state *)x->state)->checked;
}

static void csv_join_state(struct t4_output *x, const struct t4_output *copy)
{
	((struct csv_state *)x->state)->checked |= ((const struct csv_state *)copy->state)->checked;
}

/* n bytes, usually a few (a name, ",occurrence\n"), without a call to
 * memcpy up to 16: two loads and two stores that overlap, no byte outside
 * [0, n) touched. */
static inline void copy_short(char *d, const char *s, size_t n)
{
	if (n > 16) {
		memcpy(d, s, n);
	} else if (n >= 8) {
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

/* One row: the interval's shared part, name k's parts around the value
 * (a count, or the metric *metric), the suffix. Room is checked once for
 * the whole row, which then goes straight into the output's buffer. */
static void row(struct t4_output *x, const struct out_cell_set *c, uint32_t k, uint64_t count,
		const double *metric)
{
	const struct csv_state *st = x->state;
	struct t4_wbuf *w = &x->w;
	const char *head = c->text.buf + c->off[1 + 2 * k], *tail = c->text.buf + c->off[2 + 2 * k];
	size_t hn = c->off[2 + 2 * k] - c->off[1 + 2 * k], tn = c->off[3 + 2 * k] - c->off[2 + 2 * k];
	size_t pn = st->prefix.len, sn = st->suffix.len;

	if (w->cap - w->len < pn + hn + DEC_FMT_MAX + tn + sn) { /* the buffer's end */
		dec_wbuf_put(w, st->prefix.buf, pn);
		dec_wbuf_put(w, head, hn);
		if (metric)
			dec_wbuf_f64(w, *metric);
		else
			dec_wbuf_u64(w, count);
		dec_wbuf_put(w, tail, tn);
		dec_wbuf_put(w, st->suffix.buf, sn);
		return;
	}
	char *p = w->buf + w->len;
	memcpy(p, st->prefix.buf, pn);
	p += pn;
	copy_short(p, head, hn);
	p += hn;
	p += metric ? dec_fmt_f64(p, *metric) : dec_fmt_u64(p, count);
	copy_short(p, tail, tn);
	p += tn;
	copy_short(p, st->suffix.buf, sn);
	w->len = (size_t)(p + sn - w->buf);
}

static int csv_interval(void *ud, const struct t4_decoder *dec, const struct t4_interval *iv)
{
	struct t4_output *x = ud;
	struct csv_state *st = x->state;
	const struct t4_dec_domain *dm = t4_decoder_domain_at(dec, iv->domain);
	const struct out_cell_set *c;
	struct t4_wbuf *p = &st->prefix;
	char sep = x->o.csv_sep;
	int rc;

	if ((rc = time_check(x, dec, &st->checked)) < 0)
		return rc;
	if (!(c = out_cells_of(&st->cells, iv->domain, dm)))
		return -ENOMEM;
	p->len = 0;
	field_host(x, p, dec);
	dec_wbuf_u64(p, iv->trigger);
	dec_wbuf_ch(p, sep);
	field_time(x, p, dec, iv->start_ns);
	field_time(x, p, dec, iv->end_ns);
	dec_wbuf_csv_field(p, t4_decoder_bookmark(dec, iv->bookmark_id), sep, text_flags(x));
	dec_wbuf_ch(p, sep);
	out_cell_put(p, c, 0);
	st->suffix.len = 0;
	dec_wbuf_ch(&st->suffix, sep);
	dec_wbuf_u64(&st->suffix, iv->occurrence);
	dec_wbuf_ch(&st->suffix, '\n');
	if (p->error || st->suffix.error)
		return t4_err(ENOMEM, "out of memory");
	for (uint32_t i = 0; i < iv->n_counts && i < dm->n_counts; i++) {
		if (!dm->event_selected[i])
			continue;
		row(x, c, i, iv->counts[i], NULL);
	}
	for (uint32_t m = 0; iv->metrics && m < dm->n_metrics; m++) {
		if (!dm->metric_selected[m] || iv->metrics[m] != iv->metrics[m])
			continue; /* not asked for, or absent (NaN) */
		row(x, c, dm->n_counts + m, 0, &iv->metrics[m]);
	}
	return out_status(x);
}

static int csv_finish(void *ud, const struct t4_decoder *dec)
{
	(void)dec;
	return out_close(ud);
}

/* ---- phases: the phase table ---------------------------------------------- */

static int phases_init(struct t4_output *x)
{
	static const char *const cols[] = {
		"phase", "occurrence", "start_ns", "end_ns", "duration_ns", "triggers", "boundary",
	};

	if (!(x->state = calloc(1, sizeof(struct csv_state))))
		return t4_err(ENOMEM, "out of memory");
	header(x, cols, T4_ARRAY_LEN(cols));
	return 0;
}

static void field_u64(struct t4_wbuf *w, uint64_t v, char sep)
{
	dec_wbuf_u64(w, v);
	dec_wbuf_ch(w, sep);
}

static int phases_phase(void *ud, const struct t4_decoder *dec, size_t i)
{
	struct t4_output *x = ud;
	struct csv_state *st = x->state;
	const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, i);
	struct t4_wbuf *w = &x->w;
	char sep = x->o.csv_sep;
	int rc;

	if ((rc = time_check(x, dec, &st->checked)) < 0)
		return rc;
	field_host(x, w, dec);
	dec_wbuf_csv_field(w, ph->name, sep, text_flags(x));
	dec_wbuf_ch(w, sep);
	field_u64(w, ph->occurrence, sep);
	field_time(x, w, dec, ph->start_ns);
	field_time(x, w, dec, ph->end_ns);
	field_u64(w, t4_decoder_span(dec, ph->start_ns, ph->end_ns, x->o.time), sep);
	field_u64(w, ph->triggers, sep);
	dec_wbuf_str(w, ph->exact ? "exact" : "trigger");
	dec_wbuf_ch(w, '\n');
	return out_status(x);
}

static void phases_fini(struct t4_output *x)
{
	free(x->state);
}

const struct out_backend out_phases = {
	.name = "phases",
	.ops = { .phase = phases_phase, .finish = csv_finish },
	.init = phases_init,
	.fini = phases_fini,
};

/* ---- slices: the workload's CPU and GPU slices ------------------------------ */

static int slices_init(struct t4_output *x)
{
	static const char *const cols[] = {
		"start_ns", "end_ns", "kind", "cpu", "pid", "tid", "name", "context",
	};

	if (!(x->state = calloc(1, sizeof(struct csv_state))))
		return t4_err(ENOMEM, "out of memory");
	header(x, cols, T4_ARRAY_LEN(cols));
	return 0;
}

static int slices_slice(void *ud, const struct t4_decoder *dec, const struct t4_slice *s)
{
	struct t4_output *x = ud;
	struct csv_state *st = x->state;
	struct t4_wbuf *w = &x->w;
	char sep = x->o.csv_sep;
	bool gpu = s->kind == T4_SLICE_GPU;
	int rc;

	if ((rc = time_check(x, dec, &st->checked)) < 0)
		return rc;
	field_host(x, w, dec);
	field_time(x, w, dec, s->start_ns);
	field_time(x, w, dec, s->end_ns);
	dec_wbuf_str(w, gpu ? "gpu" : "cpu");
	dec_wbuf_ch(w, sep);
	if (!gpu)
		dec_wbuf_u64(w, s->cpu);
	dec_wbuf_ch(w, sep);
	field_u64(w, s->pid, sep);
	field_u64(w, s->tid, sep);
	dec_wbuf_csv_field(w, gpu ? s->timeline : s->name, sep, text_flags(x));
	dec_wbuf_ch(w, sep);
	if (gpu)
		dec_wbuf_u64(w, s->context);
	dec_wbuf_ch(w, '\n');
	return out_status(x);
}

const struct out_backend out_slices = {
	.name = "slices",
	.ops = { .slice = slices_slice, .finish = csv_finish },
	.init = slices_init,
	.fini = phases_fini,
};

const struct out_backend out_csv = {
	.name = "csv",
	.ops = { .interval = csv_interval, .finish = csv_finish, .fork = out_fork,
		 .join = out_join },
	.wants_metrics = true,
	.init = csv_init,
	.fini = csv_fini,
	.fork_state = csv_fork_state,
	.join_state = csv_join_state,
};
