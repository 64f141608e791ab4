/* out_report.c - `t410trace report`: one self-contained HTML file that a
 * browser opens from disk, with no network access (a Content-Security-
 * Policy forbids any; every script, style and datum is inline).
 *
 *   header    the recording (host, kernel, date, period, duration, trigger
 *             path, SIMULATED) and its health: overruns, drops, read
 *             failures, damage, in a warning colour when not zero;
 *   timeline  a phase band (one span per phase occurrence at its exact
 *             boundaries), then per PMU kind one plot per headline metric
 *             over time, phases shaded behind, x axes linked; CPU and GPU
 *             lanes when the log has slices (report.js draws them with
 *             uPlot, both embedded from the build: report.h);
 *   tables    the summary's phase, per-kind metric and clock tables, built
 *             by the summary's own code (sections.c) and printed cell by
 *             cell as the summary prints them (dec_table_cell).
 *
 * Series: a plot is one (kind, metric); a kind with at most
 * RPT_MAX_INSTANCES domains has one series per domain, a kind with more
 * one series for them all: their sum for a rate (a unit per second, or a
 * percentage), trigger by trigger, else their range (the extremes of
 * every instance). A series' value over an interval is the metric of the
 * whole interval, from its counts: the pieces the phase attribution cut
 * it into (attrib.c) are joined again, since a piece of a few
 * microseconds holds too few counts to give a rate worth drawing; the
 * phase boundaries are drawn by the shading. Values go into the columns of
 * decimate.c (extremes, bounded memory); the tables use exact totals.
 *
 * Text from the log (names, host, kernel) is escaped twice: util/text.c
 * makes it valid UTF-8 without control characters, then HTML or a JSON
 * string inside a <script> element gets it with <, >, & and quotes as
 * entities or \u escapes, so no name can end an element or a string.
 */
#include "out.h"
#include "report.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RPT_MAX_INSTANCES 16 /* per-domain series of one kind, at most */
#define RPT_MAX_SERIES 512   /* series of one report (the rest counted) */
#define RPT_MAX_SPANS 20000  /* phase spans drawn (the rest counted) */
#define RPT_CPU_LANES 256    /* CPUs with a lane of their own; the rest share one */
#define RPT_GPU_LANES 32     /* GPU contexts likewise */

enum rpt_agg { RPT_INSTANCE, RPT_SUM, RPT_RANGE };
static const char *const agg_names[] = { "instance", "sum", "range" };

struct rpt_plot {
	uint32_t kind;
	const struct t4_decoder *dec; /* of the first domain that has it: */
	size_t domain; /* names, unit, formula */
	uint32_t metric;
};

struct rpt_series {
	const struct t4_decoder *dec; /* its domain's (merged: its host's) */
	uint32_t plot;
	enum rpt_agg agg;
	size_t domain;         /* RPT_INSTANCE: its domain */
	uint32_t members;      /* domains feeding it */
	size_t env;
	struct rpt_sum *sum;   /* RPT_SUM */
};

/* Per domain: the series of each metric (-1: not drawn). */
struct rpt_dmap {
	bool mapped;
	int32_t series[T4_MAX_COUNTERS];
};

/* A kind's way of drawing, decided when its first domain is mapped. */
struct rpt_kind {
	bool decided, aggregate;
	int32_t agg_series[SEC_MAX_COLS]; /* per metric column of the kind's plots */
	uint32_t plot_of[SEC_MAX_COLS];
	char metric[SEC_MAX_COLS][T4_NAME_MAX];
	size_t n_metrics;
};

struct rpt_lane {
	const struct t4_decoder *dec; /* its host's */
	uint64_t context; /* GPU lanes */
	size_t acc;
	uint32_t cpu;
	bool gpu, other;
	char label[2 * T4_NAME_MAX + 32];
};

/* The interval being joined from its pieces. */
struct rpt_pending {
	bool open;
	uint32_t domain, n;
	uint64_t trigger, start, end, elapsed;
	t4_u128 totals[T4_MAX_COUNTERS];
};

struct report {
	const struct t4_decoder *dec;  /* the log being decoded (merged: the host) */
	const struct t4_place *place;  /* merged: its host's line (times on UTC) */
	struct rpt_grid g;
	struct rpt_plot *plots;
	size_t n_plots, cap_plots;
	struct rpt_series *series;
	size_t n_series, cap_series;
	uint64_t series_left_out;
	struct rpt_dmap *dmap;
	size_t n_dmap;
	struct rpt_kind kinds[T4_DOM_KINDS + 1]; /* + 1: unknown kinds */
	struct rpt_lane *lanes;
	size_t n_lanes, cap_lanes;
	int32_t cpu_lane[RPT_CPU_LANES + 1];
	struct rpt_pending pend;
	double vals[T4_MAX_COUNTERS];
};

static uint32_t kind_slot(uint32_t kind)
{
	return kind < T4_DOM_KINDS ? kind : T4_DOM_KINDS;
}

/* A rate adds up over instances: a unit per second, or a percentage (of
 * one CPU). Latencies, frequencies and levels do not. */
static bool additive(const char *unit)
{
	size_t n = strlen(unit);

	return (n >= 2 && !strcmp(unit + n - 2, "/s")) || !strcmp(unit, "%");
}

/* ---- series --------------------------------------------------------------------- */

static int new_series(struct report *r, uint32_t plot, enum rpt_agg agg, size_t domain)
{
	const struct t4_decoder *dec = r->dec;
	int env;

	if (r->n_series >= RPT_MAX_SERIES) {
		r->series_left_out++;
		return -1;
	}
	if ((env = rpt_env_new(&r->g)) < 0 ||
	    dec_vec_room((void **)&r->series, &r->cap_series, r->n_series, sizeof(*r->series)) < 0)
		return t4_err(ENOMEM, "out of memory for the report's series");
	struct rpt_series *s = &r->series[r->n_series];
	*s = (struct rpt_series){ dec, plot, agg, domain, 0, (size_t)env, NULL };
	if (agg == RPT_SUM) {
		if (!(s->sum = calloc(1, sizeof(*s->sum))))
			return t4_err(ENOMEM, "out of memory for the report's series");
		s->sum->env = (size_t)env;
	}
	return (int)r->n_series++;
}

/* The plot of (kind, metric) another log (merged: host) made, or n_plots. */
static size_t plot_find(const struct report *r, uint32_t kind, const char *metric)
{
	for (size_t p = 0; p < r->n_plots; p++) {
		const struct rpt_plot *pl = &r->plots[p];
		if (pl->kind == kind &&
		    !strcmp(t4_decoder_domain_at(pl->dec, pl->domain)->metric_name[pl->metric], metric))
			return p;
	}
	return r->n_plots;
}

/* The plot of (kind, metric m of domain i): found in the kind's list or
 * made (merged: one plot per kind and metric for every host). Returns
 * its column in the kind, or -1 when the kind is full. */
static int plot_col(struct report *r, struct rpt_kind *k, const struct t4_dec_domain *d,
		    size_t i, uint32_t m)
{
	for (size_t c = 0; c < k->n_metrics; c++)
		if (!strcmp(k->metric[c], d->metric_name[m]))
			return (int)c;
	if (k->n_metrics == SEC_MAX_COLS)
		return -1;
	size_t p = plot_find(r, d->ix->d.kind, d->metric_name[m]);
	if (p == r->n_plots) {
		if (dec_vec_room((void **)&r->plots, &r->cap_plots, r->n_plots, sizeof(*r->plots)) < 0)
			return -1;
		r->plots[r->n_plots++] = (struct rpt_plot){ d->ix->d.kind, r->dec, i, m };
	}
	snprintf(k->metric[k->n_metrics], T4_NAME_MAX, "%s", d->metric_name[m]);
	k->plot_of[k->n_metrics] = (uint32_t)p;
	k->agg_series[k->n_metrics] = -1;
	return (int)k->n_metrics++;
}

/* Decide how a kind is drawn: per instance, or one series for all. */
static void decide_kind(struct rpt_kind *k, const struct t4_decoder *dec, uint32_t kind)
{
	size_t n = 0;

	for (size_t j = 0; j < t4_decoder_n_domains(dec); j++)
		n += t4_decoder_domain_at(dec, j)->ix->d.kind == kind;
	k->decided = true;
	k->aggregate = n > RPT_MAX_INSTANCES;
}

/* Which series each headline metric of domain i feeds. */
static int map_domain(struct report *r, const struct t4_decoder *dec, size_t i)
{
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
	struct rpt_kind *k = &r->kinds[kind_slot(d->ix->d.kind)];
	struct rpt_dmap *dm = &r->dmap[i];
	uint32_t cols[SEC_MAX_COLS];
	size_t nc = sec_brief_cols(d, cols);

	dm->mapped = true;
	for (size_t m = 0; m < T4_MAX_COUNTERS; m++)
		dm->series[m] = -1;
	if (!k->decided)
		decide_kind(k, dec, d->ix->d.kind);
	for (size_t c = 0; c < nc; c++) {
		int pc = plot_col(r, k, d, i, cols[c]), s;
		if (pc < 0)
			continue;
		if (!k->aggregate)
			s = new_series(r, k->plot_of[pc], RPT_INSTANCE, i);
		else if ((s = k->agg_series[pc]) < 0)
			s = k->agg_series[pc] = new_series(
				r, k->plot_of[pc],
				additive(d->metric_unit[cols[c]]) ? RPT_SUM : RPT_RANGE, i);
		if (s < -1)
			return s; /* out of memory */
		if (s >= 0)
			r->series[s].members++;
		dm->series[cols[c]] = s;
	}
	return 0;
}

/* ---- intervals -------------------------------------------------------------------- */

/* A time on the report's axis: the reference clock, or merged, UTC. */
static uint64_t rpt_time(const struct report *r, uint64_t t)
{
	return r->place ? (uint64_t)t4_place_real(r->place, t) : t;
}

/* The joined interval's metrics into its series. */
static void pend_flush(struct report *r, const struct t4_decoder *dec)
{
	struct rpt_pending *p = &r->pend;
	const struct t4_dec_domain *d;

	if (!p->open)
		return;
	p->open = false;
	d = t4_decoder_domain_at(dec, p->domain);
	if (!p->elapsed)
		return;
	t4_decoder_metrics_of(dec, p->domain, p->totals, p->elapsed, r->vals);
	for (uint32_t m = 0; m < d->n_metrics; m++) {
		int32_t s = r->dmap[p->domain].series[m];
		if (s < 0)
			continue;
		struct rpt_series *se = &r->series[s];
		if (se->agg == RPT_SUM)
			rpt_sum_add(&r->g, se->sum, d->ix->d.sched_id, p->trigger, p->start, p->end,
				    r->vals[m]);
		else
			rpt_env_add(&r->g, se->env, p->start, p->end, r->vals[m]);
	}
}

static int rpt_interval(void *ud, const struct t4_decoder *dec, const struct t4_interval *iv)
{
	struct t4_output *x = ud;
	struct report *r = x->state;
	struct rpt_pending *p = &r->pend;
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, iv->domain);
	int rc;

	r->dec = dec;
	if (iv->domain >= r->n_dmap) {
		size_t n = t4_decoder_n_domains(dec);
		struct rpt_dmap *dm = realloc(r->dmap, n * sizeof(*dm));
		if (!dm)
			return t4_err(ENOMEM, "out of memory for the report");
		memset(dm + r->n_dmap, 0, (n - r->n_dmap) * sizeof(*dm));
		r->dmap = dm;
		r->n_dmap = n;
	}
	if (!r->dmap[iv->domain].mapped && (rc = map_domain(r, dec, iv->domain)) < 0)
		return rc;
	if (p->open && (p->domain != iv->domain || p->trigger != iv->trigger))
		pend_flush(r, dec);
	if (!p->open) {
		p->open = true;
		p->domain = iv->domain;
		p->trigger = iv->trigger;
		p->start = rpt_time(r, iv->start_ns);
		p->elapsed = 0;
		p->n = iv->n_counts;
		memset(p->totals, 0, sizeof(p->totals[0]) * p->n);
	}
	/* totals as the phases add them: counts, gauges as level x ns */
	for (uint32_t c = 0; c < iv->n_counts && c < p->n; c++)
		p->totals[c] = d->event_gauge[c]
				       ? dec_u128_add_sat(p->totals[c],
							  dec_gauge_weight(iv->counts[c], iv->elapsed_ns))
				       : p->totals[c] + iv->counts[c];
	p->end = rpt_time(r, iv->end_ns);
	p->elapsed += iv->elapsed_ns;
	return 0;
}

/* ---- CPU and GPU lanes ------------------------------------------------------------ */

static int new_lane(struct report *r, struct rpt_lane l)
{
	int a = rpt_acc_new(&r->g);

	l.dec = r->dec;
	if (r->place) { /* merged: the host's name first */
		char label[sizeof(l.label)];
		snprintf(label, sizeof(label), "%s", l.label);
		snprintf(l.label, sizeof(l.label), "%.*s: %.*s", T4_NAME_MAX, r->place->host,
			 (int)(sizeof(l.label) - T4_NAME_MAX - 4), label);
	}
	if (a < 0 ||
	    dec_vec_room((void **)&r->lanes, &r->cap_lanes, r->n_lanes, sizeof(*r->lanes)) < 0)
		return a < 0 ? a : t4_err(ENOMEM, "out of memory for the report's lanes");
	l.acc = (size_t)a;
	r->lanes[r->n_lanes] = l;
	return (int)r->n_lanes++;
}

static int gpu_lane(struct report *r, const struct t4_slice *s)
{
	struct rpt_lane l = { .gpu = true, .context = s->context };
	size_t n = 0;

	for (size_t i = 0; i < r->n_lanes; i++) {
		if (!r->lanes[i].gpu || r->lanes[i].dec != r->dec)
			continue;
		if (r->lanes[i].other || r->lanes[i].context == s->context)
			return (int)i;
		n++;
	}
	l.other = n >= RPT_GPU_LANES;
	if (l.other)
		snprintf(l.label, sizeof(l.label), "other GPU contexts");
	else
		snprintf(l.label, sizeof(l.label), "%.*s %.*s:%" PRIu64, T4_NAME_MAX, s->driver,
			 T4_NAME_MAX, s->timeline, s->context);
	return new_lane(r, l);
}

static int cpu_lane(struct report *r, uint32_t cpu)
{
	uint32_t k = cpu < RPT_CPU_LANES ? cpu : RPT_CPU_LANES;
	int l;

	if (r->cpu_lane[k] >= 0)
		return r->cpu_lane[k];
	struct rpt_lane ln = { .cpu = cpu, .other = k == RPT_CPU_LANES };
	if (ln.other)
		snprintf(ln.label, sizeof(ln.label), "CPUs %d and above", RPT_CPU_LANES);
	else
		snprintf(ln.label, sizeof(ln.label), "CPU %u", cpu);
	if ((l = new_lane(r, ln)) >= 0)
		r->cpu_lane[k] = l;
	return l;
}

static int rpt_slice(void *ud, const struct t4_decoder *dec, const struct t4_slice *s)
{
	struct t4_output *x = ud;
	struct report *r = x->state;
	int l;

	r->dec = dec;
	if ((l = s->kind == T4_SLICE_GPU ? gpu_lane(r, s) : cpu_lane(r, s->cpu)) < 0)
		return l;
	rpt_acc_add(&r->g, r->lanes[l].acc, rpt_time(r, s->start_ns), rpt_time(r, s->end_ns));
	return 0;
}

/* ---- HTML and JSON text ------------------------------------------------------------ */

/* Text from a log as HTML: valid UTF-8 without control characters
 * (util/text.c), markup characters as entities. */
static void html(struct t4_wbuf *w, const char *s)
{
	char piece[5];

	while (*s) {
		s += t4_text_next(s, T4_TEXT_CONTROL, piece);
		for (const char *p = piece; *p; p++) {
			switch (*p) {
			case '&': dec_wbuf_str(w, "&amp;"); break;
			case '<': dec_wbuf_str(w, "&lt;"); break;
			case '>': dec_wbuf_str(w, "&gt;"); break;
			case '"': dec_wbuf_str(w, "&quot;"); break;
			case '\'': dec_wbuf_str(w, "&#39;"); break;
			default: dec_wbuf_ch(w, *p);
			}
		}
	}
}

/* Text from a log as a JSON string inside a <script> element: no <, >
 * or & as such, so that nothing in it can close the element; what a
 * terminal must not get as the text \xNN, as the tables show it. */
static void json_str(struct t4_wbuf *w, const char *s)
{
	char piece[T4_JSON_PIECE];

	dec_wbuf_ch(w, '"');
	while (*s) {
		s += t4_json_next(s, T4_TEXT_CONTROL | T4_JSON_HTML, piece);
		dec_wbuf_str(w, piece);
	}
	dec_wbuf_ch(w, '"');
}

/* A number for the plots: 5 significant digits, null when absent. */
static void json_num(struct t4_wbuf *w, double v)
{
	char b[32];

	if (!isfinite(v)) {
		dec_wbuf_str(w, "null");
		return;
	}
	snprintf(b, sizeof(b), "%.5g", v);
	dec_wbuf_str(w, b);
}

static void fmt_str(struct t4_wbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fmt_str(struct t4_wbuf *w, const char *fmt, ...)
{
	char b[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	dec_wbuf_str(w, b);
}

/* ---- the head ---------------------------------------------------------------------- */

static const char CSP[] = "default-src 'none'; script-src 'unsafe-inline'; "
			  "style-src 'unsafe-inline'; img-src data:";

static void head(struct t4_output *x)
{
	struct t4_wbuf *w = &x->w;

	dec_wbuf_str(w, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		       "<meta http-equiv=\"Content-Security-Policy\" content=\"");
	dec_wbuf_str(w, CSP);
	dec_wbuf_str(w, "\">\n<meta name=\"generator\" content=\"t410trace " T4_VERSION "\">\n<title>");
	html(w, x->o.log_name ? x->o.log_name : "-");
	dec_wbuf_str(w, " - t410trace report</title>\n<style>");
	dec_wbuf_put(w, t4_rpt_uplot_css, t4_rpt_uplot_css_len);
	dec_wbuf_str(w, "</style>\n<style>");
	dec_wbuf_put(w, t4_rpt_css, t4_rpt_css_len);
	dec_wbuf_str(w, "</style>\n</head>\n<body>\n");
}

static void field(struct t4_wbuf *w, const char *name, const char *value)
{
	dec_wbuf_str(w, "<dt>");
	dec_wbuf_str(w, name);
	dec_wbuf_str(w, "</dt><dd>");
	html(w, value);
	dec_wbuf_str(w, "</dd>");
}

static void recording(struct t4_output *x, const struct t4_decoder *dec)
{
	struct t4_wbuf *w = &x->w;
	const struct t4_session_pkt *s = t4_index_session(t4_decoder_index(dec));
	char b[160], d[32];

	const struct t4_place *pl = t4_decoder_place(dec);
	/* merged: a header per host, each host's figures in its own (classes) */
	dec_wbuf_str(w, pl ? "<header class=\"t4-head\"><h1>" : "<header id=\"t4-head\"><h1>");
	html(w, pl ? pl->log : x->o.log_name ? x->o.log_name : "-");
	dec_wbuf_str(w, "</h1>");
	if (s && (s->flags & T4_SESSION_SIMULATED))
		dec_wbuf_str(w, "<p id=\"t4-simulated\">SIMULATED Tegra410: not a measurement</p>");
	dec_wbuf_str(w, pl ? "<dl class=\"t4-session\">" : "<dl id=\"t4-session\">");
	if (s) {
		time_t t = (time_t)(s->start_real_ns / 1000000000u);
		struct tm tm;
		snprintf(b, sizeof(b), "?");
		if (gmtime_r(&t, &tm))
			strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S UTC", &tm);
		field(w, "recorded", b);
		field(w, "host", s->host);
		field(w, "kernel", s->kernel);
		field(w, "t410trace", s->version);
		field(w, "period", s->period_ns ? t4_fmt_duration(s->period_ns, b, sizeof(b)) : "none");
		field(w, "duration", t4_fmt_duration(sec_log_span(dec), d, sizeof(d)));
		field(w, "triggers",
		      s->flags & T4_SESSION_BPF_TRIGGER ? "BPF timers in the kernel"
							: "threads in user space");
		field(w, "reference clock", t4_ref_clock_name(s->ref_clock));
	} else {
		field(w, "session", "no session packet (a damaged log)");
	}
	field(w, "clock model", t4_clock_model_name(t4_decoder_opts(dec)->model));
	snprintf(b, sizeof(b), "%zu", t4_decoder_n_domains(dec));
	field(w, "clock domains", b);
	dec_wbuf_str(w, "</dl>\n");
}

/* One health item: its value v in bold, then what it is and a note. */
static void health_text(struct t4_wbuf *w, const char *id, const char *v, const char *what,
			bool warn, const char *note)
{
	fmt_str(w, "<li id=\"t4-h-%s\" class=\"%s\"><b>%s</b> %s", id, warn ? "warn" : "ok",
		v, what);
	if (note && *note) {
		dec_wbuf_str(w, " <small>");
		html(w, note); /* a domain's name, some */
		dec_wbuf_str(w, "</small>");
	}
	dec_wbuf_str(w, "</li>");
}

/* One health item: warn when n is not zero (or when forced; n < 0:
 * unknown). */
static void health_item(struct t4_wbuf *w, const char *id, const char *what, int64_t n,
			bool warn, const char *note)
{
	char v[24] = "?";

	if (n >= 0)
		snprintf(v, sizeof(v), "%" PRId64, n);
	health_text(w, id, v, what, warn || n, note);
}

static void health(struct t4_output *x, const struct t4_decoder *dec)
{
	struct t4_wbuf *w = &x->w;
	const struct t4_index *ix = t4_decoder_index(dec);
	const struct t4_status_pkt *st = t4_index_status(ix);
	const struct t4_reader_stats *rs = t4_decoder_reader_stats(dec);
	const struct t4_dec_damage *dm = t4_decoder_damage_stats(dec);
	const struct t4_dec_slices *sl = t4_decoder_slice_stats(dec);
	uint64_t lost = 0, silent = 0, unanswered = 0, stopped = 0, triggers;
	char first_stop[4 * T4_NAME_MAX + 128] = "", line[sizeof(first_stop)];
	struct t4_index_answers a;

	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++)
		lost += t4_decoder_domain_at(dec, i)->unanswered_lost;
	for (size_t i = 0; i < t4_index_n_domains(ix); i++) {
		const struct t4_index_domain *d = t4_index_domain_at(ix, i);
		silent += sec_silent(dec, d, &triggers);
		unanswered += sec_answers(dec, d, &a) ? a.unanswered : 0;
		if (sec_stopped_text(dec, d, line, sizeof(line)) && !stopped++)
			memcpy(first_stop, line, sizeof(line));
	}
	dec_wbuf_str(w, "<ul id=\"t4-health\">");
	health_item(w, "overruns", "overruns", (int64_t)t4_index_overruns(ix), false,
		    "triggers a scheduler woke too late for");
	if (st)
		health_item(w, "drops", "dropped packets", (int64_t)st->dropped, false,
			    t4_index_closed(ix) ? "counts carried by the next packet"
						: "at least: the last status packet's, before the"
						  " log's end");
	else
		health_item(w, "drops", "dropped packets", -1, true, "no status packet");
	health_text(w, "closed", t4_index_closed(ix) ? "yes" : "no", "log closed",
		    !t4_index_closed(ix), t4_index_closed(ix) ? "" : t4_index_unclosed_why());
	health_item(w, "readfail", "read failures", (int64_t)t4_index_read_failures(ix), false, "");
	if (t4_index_counts(ix)->backwards_rets)
		health_item(w, "backwards", "return packets with a counter that went backwards",
			    (int64_t)t4_index_counts(ix)->backwards_rets, false,
			    "its delta 0: those counts are lost");
	if (t4_index_counts(ix)->multiplexed_rets)
		health_item(w, "multiplexed", "return packets whose counters ran part of the time",
			    (int64_t)t4_index_counts(ix)->multiplexed_rets, false,
			    "time running < enabled: counts as counted, not scaled");
	health_item(w, "damage", "damaged chunks", (int64_t)rs->damaged_chunks, rs->skipped_bytes,
		    rs->skipped_bytes ? "bytes skipped: what follows was resynchronised" : "");
	health_item(w, "truncated", "truncated tail", (int64_t)rs->truncated, false,
		    rs->truncated ? "the file ends inside a chunk (still being written?)" : "");
	health_item(w, "noref", "triggers without a reference packet", (int64_t)dm->refs_missing,
		    false, "");
	health_item(w, "unanswered", "unanswered triggers", (int64_t)unanswered, false,
		    "summed over the domains (info: UNANSWERED)");
	health_item(w, "lost", "unanswered triggers whose counts were lost", (int64_t)lost, false,
		    "");
	if (t4_index_counts(ix)->duplicates)
		health_item(w, "duplicates", "reference and return packets the log holds twice",
			    (int64_t)t4_index_counts(ix)->duplicates, false,
			    "one trigger, one answer");
	health_item(w, "implausible", "implausible reference packets",
		    (int64_t)t4_index_counts(ix)->implausible_refs, false, "");
	if (silent)
		health_item(w, "silent", "domains that never answered", (int64_t)silent, false,
			    "none of their counts were read (info: UNANSWERED)");
	if (stopped) {
		char note[sizeof(first_stop) + 64];
		snprintf(note, sizeof(note), "%s%s", first_stop, stopped > 1 ? "; and others" : "");
		health_item(w, "stopped", "domains that stopped answering", (int64_t)stopped, true,
			    note);
	}
	if (t4_index_counts(ix)->redescribed)
		health_item(w, "redescribed", "domains described again, otherwise",
			    (int64_t)t4_index_counts(ix)->redescribed, true,
			    "the first description holds; the domain's later counts are not decoded");
	if (t4_index_counts(ix)->bookmarks_renamed)
		health_item(w, "renamed", "bookmark packets naming an ID otherwise",
			    (int64_t)t4_index_counts(ix)->bookmarks_renamed, true,
			    "one ID per name: the first name holds");
	if (t4_index_counts(ix)->bookmarks_reused)
		health_item(w, "reused", "bookmark packets naming an ID as an earlier ID",
			    (int64_t)t4_index_counts(ix)->bookmarks_reused, true,
			    "one ID per name: the first ID holds, the phases of both are its own");
	if (sl->lost_events || sl->unplaced)
		health_item(w, "slices", "CPU/GPU activity events lost or unplaced",
			    (int64_t)(sl->lost_events + sl->unplaced), false, "");
	if (dm->partial)
		dec_wbuf_str(w, "<li id=\"t4-h-partial\" class=\"warn\"><b>TOTALS ARE PARTIAL</b>"
			       " counts were lost to damage, missing packets or counters that went"
			       " backwards</li>");
	dec_wbuf_str(w, "</ul>\n</header>\n");
}

/* ---- tables -------------------------------------------------------------------------- */

/* A summary table as HTML, cell by cell as the summary prints it;
 * formulas: the number columns' formulas for their heads (or NULL). */
static void table_html(struct t4_wbuf *w, const struct t4_table *t, const char *cls,
		       const char *caption, const char *const *formulas)
{
	char b[64];

	fmt_str(w, "<table class=\"%s\"><caption>", cls);
	html(w, caption);
	dec_wbuf_str(w, "</caption><thead><tr>");
	for (size_t i = 0; i < t->nl; i++) {
		dec_wbuf_str(w, "<th>");
		html(w, t->lhead[i]);
		dec_wbuf_str(w, "</th>");
	}
	for (size_t c = 0; c < t->nc; c++) {
		dec_wbuf_str(w, "<th class=\"num\"");
		if (formulas && formulas[c]) {
			dec_wbuf_str(w, " title=\"");
			html(w, formulas[c]);
			dec_wbuf_ch(w, '"');
		}
		dec_wbuf_ch(w, '>');
		html(w, t->chead[c]);
		if (*t->cunit[c]) {
			dec_wbuf_str(w, "<span class=\"unit\">");
			html(w, t->cunit[c]);
			dec_wbuf_str(w, "</span>");
		}
		dec_wbuf_str(w, "</th>");
	}
	dec_wbuf_str(w, "</tr></thead><tbody>\n");
	for (size_t r = 0; r < t->nrows; r++) {
		dec_wbuf_str(w, "<tr>");
		for (size_t i = 0; i < t->nl; i++) {
			dec_wbuf_str(w, "<td>");
			html(w, t->label[r][i]);
			dec_wbuf_str(w, "</td>");
		}
		for (size_t c = 0; c < t->nc; c++) {
			dec_table_cell(t, r, c, b, sizeof(b));
			dec_wbuf_str(w, "<td class=\"num\">");
			html(w, b);
			dec_wbuf_str(w, "</td>");
		}
		dec_wbuf_str(w, "</tr>\n");
	}
	dec_wbuf_str(w, "</tbody></table>\n");
}

struct kind_ctx {
	struct t4_wbuf *w;
	const struct sec_names *pn;
};

static int kind_html(void *ud, const struct t4_decoder *dec, size_t first, const uint32_t *cols,
		     size_t nc, const struct t4_table *t)
{
	struct kind_ctx *k = ud;
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, first);
	const char *formulas[SEC_MAX_COLS];
	char cap[160];

	for (size_t c = 0; c < nc; c++)
		formulas[c] = d->metric_formula[cols[c]];
	snprintf(cap, sizeof(cap), "%s, per phase (averages over each row's occurrences, from "
		 "their totals)", d->kind_label);
	fmt_str(k->w, "<section class=\"t4-kind-table\" data-kind=\"%u\">", d->ix->d.kind);
	table_html(k->w, t, "t4-kind", cap, formulas);
	dec_wbuf_str(k->w, "</section>\n");
	return 0;
}

static int tables(struct t4_output *x, const struct t4_decoder *dec)
{
	struct t4_wbuf *w = &x->w;
	struct sec_names pn = { 0 };
	struct kind_ctx k = { w, &pn };
	struct t4_table t;
	char cap[160];
	size_t np = t4_decoder_n_phases(dec);
	int rc;

	dec_wbuf_str(w, "<section id=\"t4-tables\">\n");
	snprintf(cap, sizeof(cap), "Phases (%zu occurrence%s%s; times from the first trigger)",
		 np, np == 1 ? "" : "s", np > SEC_MAX_LISTED ? ", the first 32 listed" : "");
	if ((rc = sec_phase_table(dec, &t)) == 0)
		table_html(w, &t, "t4-activity", cap, NULL);
	dec_table_free(&t);
	if (rc == 0 && (rc = sec_names_build(dec, &pn)) == 0)
		rc = sec_kind_tables(dec, &pn, false, kind_html, &k);
	sec_names_free(&pn);
	if (rc == 0 && (rc = sec_clock_table(dec, &t)) == 0 && t.nrows)
		table_html(w, &t, "t4-clocks",
			   "Clock domains (frequency and drift from the clock model, next to the"
			   " formula's cycles / elapsed; window: read window; bound: model"
			   " uncertainty)",
			   NULL);
	dec_table_free(&t);
	dec_wbuf_str(w, "</section>\n");
	return rc;
}

/* ---- the data for the plots ---------------------------------------------------------- */

static void series_label(struct t4_wbuf *w, const struct rpt_series *s)
{
	const struct t4_dec_domain *d = t4_decoder_domain_at(s->dec, s->domain);
	const struct t4_place *pl = t4_decoder_place(s->dec);
	char b[160], h[T4_NAME_MAX + 4] = "";

	if (pl) /* merged: which host */
		snprintf(h, sizeof(h), "%s: ", pl->host);
	if (s->agg == RPT_INSTANCE)
		snprintf(b, sizeof(b), "%s%s", h, d->name);
	else
		snprintf(b, sizeof(b), "%s%s of %u %s", h, s->agg == RPT_SUM ? "sum" : "range",
			 s->members, d->kind_label);
	json_str(w, b);
}

/* Two values per column, in the order they came (the extremes). */
static void series_values(struct t4_wbuf *w, const struct rpt_grid *g, size_t e)
{
	const struct rpt_env *v = &g->env[e];

	dec_wbuf_ch(w, '[');
	for (uint32_t c = 0; c < g->used; c++) {
		bool has = v->state[c] & RPT_HAS, hi_first = v->state[c] & RPT_HI_FIRST;
		if (c)
			dec_wbuf_ch(w, ',');
		json_num(w, has ? (hi_first ? v->hi[c] : v->lo[c]) : NAN);
		dec_wbuf_ch(w, ',');
		json_num(w, has ? (hi_first ? v->lo[c] : v->hi[c]) : NAN);
	}
	dec_wbuf_ch(w, ']');
}

static void plots_json(struct t4_wbuf *w, struct report *r)
{
	dec_wbuf_str(w, ",\"plots\":[");
	for (size_t p = 0; p < r->n_plots; p++) {
		const struct rpt_plot *pl = &r->plots[p];
		const struct t4_dec_domain *d = t4_decoder_domain_at(pl->dec, pl->domain);
		bool first = true;
		dec_wbuf_str(w, p ? ",\n{\"kind\":" : "\n{\"kind\":");
		json_str(w, d->kind_label);
		dec_wbuf_str(w, ",\"metric\":");
		json_str(w, d->metric_name[pl->metric]);
		dec_wbuf_str(w, ",\"unit\":");
		json_str(w, d->metric_unit[pl->metric]);
		dec_wbuf_str(w, ",\"formula\":");
		json_str(w, d->metric_formula[pl->metric] ? d->metric_formula[pl->metric] : "");
		dec_wbuf_str(w, ",\"series\":[");
		for (size_t s = 0; s < r->n_series; s++) {
			const struct rpt_series *se = &r->series[s];
			if (se->plot != p)
				continue;
			dec_wbuf_str(w, first ? "\n {\"label\":" : ",\n {\"label\":");
			first = false;
			series_label(w, se);
			fmt_str(w, ",\"agg\":\"%s\",\"y\":", agg_names[se->agg]);
			series_values(w, &r->g, se->env);
			dec_wbuf_ch(w, '}');
		}
		dec_wbuf_str(w, "]}");
	}
	dec_wbuf_ch(w, ']');
}

static double rel_s(const struct t4_decoder *dec, uint64_t t)
{
	return (double)t4_decoder_time(dec, t, T4_TIME_REL) / 1e9;
}

/* A log's phases: {"exact", "more", "spans", "names"}. */
static void phases_json(struct t4_wbuf *w, const struct t4_decoder *dec)
{
	size_t np = t4_decoder_n_phases(dec), n = np < RPT_MAX_SPANS ? np : RPT_MAX_SPANS;
	struct sec_names pn = { 0 };

	dec_wbuf_str(w, "{\"exact\":");
	dec_wbuf_str(w, t4_decoder_phases_exact(dec) ? "true" : "false");
	fmt_str(w, ",\"more\":%zu,\"spans\":[", np - n);
	/* span: [start s, end s, name index, occurrence]; names once each */
	if (sec_names_build(dec, &pn) < 0)
		n = 0;
	struct t4_idmap slot = { 0 };
	for (size_t k = 0; k < pn.n; k++)
		dec_idmap_put(&slot, t4_decoder_phase_at(dec, pn.first[k])->bookmark_id, (uint32_t)k);
	for (size_t p = 0; p < n; p++) {
		const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, p);
		int64_t k = dec_idmap_get(&slot, ph->bookmark_id);
		if (p)
			dec_wbuf_ch(w, ',');
		dec_wbuf_ch(w, '[');
		fmt_str(w, "%.9f,%.9f,%" PRId64 ",%u]", rel_s(dec, ph->start_ns), rel_s(dec, ph->end_ns),
			k < 0 ? 0 : k, ph->occurrence);
	}
	dec_wbuf_str(w, "],\"names\":[");
	for (size_t k = 0; k < pn.n; k++) {
		const char *name = t4_decoder_phase_at(dec, pn.first[k])->name;
		if (k)
			dec_wbuf_ch(w, ',');
		json_str(w, *name ? name : "(none)");
	}
	dec_wbuf_str(w, "]}");
	dec_idmap_free(&slot);
	sec_names_free(&pn);
}

static void lane_json(struct t4_wbuf *w, const struct rpt_grid *g, const struct rpt_lane *ln,
		      bool first)
{
	dec_wbuf_str(w, first ? "\n{\"group\":" : ",\n{\"group\":");
	dec_wbuf_str(w, ln->gpu ? "\"GPU\"" : "\"CPU\"");
	dec_wbuf_str(w, ",\"label\":");
	json_str(w, ln->label);
	dec_wbuf_str(w, ",\"busy\":[");
	for (uint32_t c = 0; c < g->used; c++) {
		if (c)
			dec_wbuf_ch(w, ',');
		json_num(w, g->acc[ln->acc].v[c] / (double)g->width);
	}
	dec_wbuf_str(w, "]}");
}

/* CPU lanes in CPU order, then the GPU contexts as they came. */
static void lanes_json(struct t4_wbuf *w, struct report *r)
{
	bool first = true;

	dec_wbuf_str(w, ",\"lanes\":[");
	for (size_t k = 0; k <= RPT_CPU_LANES; k++)
		if (r->cpu_lane[k] >= 0) {
			lane_json(w, &r->g, &r->lanes[r->cpu_lane[k]], first);
			first = false;
		}
	for (size_t l = 0; l < r->n_lanes; l++)
		if (r->lanes[l].gpu) {
			lane_json(w, &r->g, &r->lanes[l], first);
			first = false;
		}
	dec_wbuf_ch(w, ']');
}

/* Merged: each host's phase band, its label and bound (report.js). */
static void hosts_json(struct t4_wbuf *w, const struct t4_merge *m)
{
	dec_wbuf_str(w, ",\"hosts\":[");
	for (size_t i = 0, first = 1; i < t4_merge_n_hosts(m); i++) {
		const struct t4_decoder *dec = t4_merge_decoder(m, i);
		if (!dec)
			continue;
		dec_wbuf_str(w, first ? "\n{\"label\":" : ",\n{\"label\":");
		first = 0;
		json_str(w, t4_merge_place(m, i)->host);
		dec_wbuf_str(w, ",\"bound_ms\":");
		json_num(w, (double)t4_merge_place(m, i)->bound_ns / 1e6);
		dec_wbuf_str(w, ",\"phases\":");
		phases_json(w, dec);
		dec_wbuf_ch(w, '}');
	}
	dec_wbuf_ch(w, ']');
}

/* The plots' data; m: merged logs (times from the merged origin, on UTC,
 * the phases a band per host), else dec's. */
static void data(struct t4_output *x, struct report *r, const struct t4_decoder *dec,
		 const struct t4_merge *m)
{
	struct t4_wbuf *w = &x->w;
	const struct rpt_grid *g = &r->g;
	double x0 = !g->started ? 0
		    : m     ? (double)((int64_t)g->origin - t4_merge_place(m, 0)->origin_real_ns) / 1e9
			    : rel_s(dec, g->origin);

	dec_wbuf_str(w, "<script type=\"application/json\" id=\"t4-data\">{\"x0\":");
	json_num(w, x0);
	fmt_str(w, ",\"w\":%.9g,\"n\":%u,\"series_left_out\":%" PRIu64, (double)g->width / 1e9,
		g->used, r->series_left_out);
	plots_json(w, r);
	dec_wbuf_str(w, ",\"phases\":");
	if (m)
		dec_wbuf_str(w, "{\"exact\":true,\"more\":0,\"spans\":[],\"names\":[]}");
	else
		phases_json(w, dec);
	if (m)
		hosts_json(w, m);
	lanes_json(w, r);
	dec_wbuf_str(w, "}</script>\n");
}

static void scripts(struct t4_output *x)
{
	struct t4_wbuf *w = &x->w;

	dec_wbuf_str(w, "<script>/* uPlot ");
	dec_wbuf_put(w, t4_rpt_uplot_version, t4_rpt_uplot_version_len);
	dec_wbuf_str(w, ", embedded by t410trace.\n");
	dec_wbuf_put(w, t4_rpt_uplot_license, t4_rpt_uplot_license_len);
	dec_wbuf_str(w, "*/\n");
	dec_wbuf_put(w, t4_rpt_uplot_js, t4_rpt_uplot_js_len);
	dec_wbuf_str(w, "</script>\n<script>");
	dec_wbuf_put(w, t4_rpt_js, t4_rpt_js_len);
	dec_wbuf_str(w, "</script>\n</body></html>\n");
}

static const char TIMELINE[] = "<noscript>The plots need JavaScript; the tables below do"
			       " not.</noscript>\n<div id=\"t4-errors\"></div>\n"
			       "<section id=\"t4-timeline\"></section>\n";

/* The end of a log: what it still holds goes into the columns. */
static void rpt_log_done(struct report *r, const struct t4_decoder *dec)
{
	pend_flush(r, dec);
	for (size_t s = 0; s < r->n_series; s++)
		if (r->series[s].sum && r->series[s].dec == dec)
			rpt_sum_flush(&r->g, r->series[s].sum);
}

static int rpt_finish(void *ud, const struct t4_decoder *dec)
{
	struct t4_output *x = ud;
	struct report *r = x->state;
	int rc;

	rpt_log_done(r, dec);
	if (r->place)
		return 0; /* merged: the page comes when every host is decoded */
	head(x);
	recording(x, dec);
	health(x, dec);
	dec_wbuf_str(&x->w, TIMELINE);
	if ((rc = tables(x, dec)) < 0)
		return rc;
	data(x, r, dec, NULL);
	scripts(x);
	return out_close(x);
}

/* ---- several hosts merged ------------------------------------------------------------ */

/* A host begins: its domains, kinds and CPU lanes are its own. */
static int rpt_host(void *ud, const struct t4_decoder *dec)
{
	struct t4_output *x = ud;
	struct report *r = x->state;

	r->dec = dec;
	r->place = t4_decoder_place(dec);
	/* the columns from the merged origin, the earliest host's first
	 * trigger, whichever host comes first: an earlier one's times would
	 * fall before a later one's first interval */
	if (r->place)
		rpt_grid_start(&r->g, (uint64_t)r->place->origin_real_ns);
	free(r->dmap);
	r->dmap = NULL;
	r->n_dmap = 0;
	memset(r->kinds, 0, sizeof(r->kinds));
	memset(&r->pend, 0, sizeof(r->pend));
	for (size_t i = 0; i <= RPT_CPU_LANES; i++)
		r->cpu_lane[i] = -1;
	return 0;
}

static int hosts_kind_html(void *ud, const struct t4_dec_domain *first, const struct t4_table *t)
{
	const char *formulas[SEC_MAX_COLS];
	uint32_t cols[SEC_MAX_COLS];
	size_t nc = sec_brief_cols(first, cols);
	char cap[160];

	for (size_t c = 0; c < nc; c++)
		formulas[c] = first->metric_formula[cols[c]];
	snprintf(cap, sizeof(cap), "%s across hosts, per phase name (averages over all its spans on"
		 " each host, from its totals)", first->kind_label);
	fmt_str(ud, "<section class=\"t4-kind-table\" data-kind=\"%u\">", first->ix->d.kind);
	table_html(ud, t, "t4-kind t4-hosts-kind", cap, formulas);
	dec_wbuf_str(ud, "</section>\n");
	return 0;
}

/* The tables across hosts: the summary's (sections_hosts.c). */
static int hosts_tables(struct t4_output *x, const struct t4_merge *m)
{
	struct t4_wbuf *w = &x->w;
	struct t4_table t;
	int rc;

	dec_wbuf_str(w, "<section id=\"t4-tables\">\n");
	if ((rc = sec_hosts_table(m, &t)) == 0)
		table_html(w, &t, "t4-hosts", "Hosts on one timeline (times from the first trigger of"
			   " any host; each host placed on UTC within +- its bound)", NULL);
	dec_table_free(&t);
	if (rc == 0 && (rc = sec_hosts_phase_table(m, &t)) == 0 && t.nrows)
		table_html(w, &t, "t4-phases t4-hosts-phases", "Phases across hosts (the same phase"
			   " of several hosts side by side; offset: from its earliest start)", NULL);
	dec_table_free(&t);
	if (rc == 0)
		rc = sec_hosts_kind_tables(m, hosts_kind_html, w);
	dec_wbuf_str(w, "</section>\n");
	return rc;
}

static int rpt_merged(void *ud, const struct t4_merge *m)
{
	struct t4_output *x = ud;
	struct report *r = x->state;
	char place[400];
	int rc;

	head(x);
	for (size_t i = 0; i < t4_merge_n_hosts(m); i++) {
		const struct t4_decoder *dec = t4_merge_decoder(m, i);
		if (!dec)
			continue;
		recording(x, dec);
		sec_place_text(t4_merge_place(m, i), place, sizeof(place));
		dec_wbuf_str(&x->w, "<p class=\"t4-placed\">placed on UTC ");
		html(&x->w, place);
		dec_wbuf_str(&x->w, "</p>");
		health(x, dec);
	}
	dec_wbuf_str(&x->w, TIMELINE);
	if ((rc = hosts_tables(x, m)) < 0)
		return rc;
	data(x, r, NULL, m);
	scripts(x);
	return out_close(x);
}

/* ---- state ---------------------------------------------------------------------------- */

static int rpt_init(struct t4_output *x)
{
	struct report *r = calloc(1, sizeof(*r));

	if (!r)
		return t4_err(ENOMEM, "out of memory");
	for (size_t i = 0; i <= RPT_CPU_LANES; i++)
		r->cpu_lane[i] = -1;
	x->state = r;
	return 0;
}

static void rpt_fini(struct t4_output *x)
{
	struct report *r = x->state;

	if (!r)
		return;
	for (size_t s = 0; s < r->n_series; s++)
		free(r->series[s].sum);
	rpt_grid_free(&r->g);
	free(r->plots);
	free(r->series);
	free(r->dmap);
	free(r->lanes);
	free(r);
	x->state = NULL;
}

const struct out_backend out_report = {
	.name = "report",
	.ops = { .interval = rpt_interval, .slice = rpt_slice, .finish = rpt_finish,
		 .host = rpt_host, .merged = rpt_merged },
	.wants_metrics = false,
	.at_end = true, /* the page is made at the end, from what it kept */
	.init = rpt_init,
	.fini = rpt_fini,
};
