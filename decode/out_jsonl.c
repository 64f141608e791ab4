/* out_jsonl.c - `decode -f jsonl`: one JSON object per line, each with a
 * "type":
 *
 *   header    first: what the log is and what the numbers are: host,
 *             "simulated", the reference clock, the time base (--time),
 *             the origin (the first trigger), the realtime anchor, the
 *             period, the phase attribution rule ("time": bookmark times;
 *             "trigger": older logs, FORMAT.md 6)
 *   domain    before a domain's first interval: its PMU, kind, the unit
 *             of every event ("units") and every metric's unit and
 *             formula ("metrics")
 *   interval  one per (domain, interval); an interval that a phase
 *             boundary cuts is one per phase (attrib.c):
 *             {"type": "interval", "domain": ..., "pmu": ..., "kind": "ucf",
 *              "trigger": 12, "first_trigger": 12, "start_ns": ...,
 *              "end_ns": ..., "elapsed_ns": ..., "bookmark": "phase1",
 *              "occurrence": 1, "counts": {...}, "metrics": {...},
 *              "flags": ["spans"]}
 *   slice     a CPU slice or a GPU job of the workload ("slice": "cpu" or
 *             "gpu")
 *   phase     at the end, one per phase span, as `-f phases`
 *
 * Several hosts' logs merged (decode a.t4t b.t4t): each host's records
 * follow a header of its own, which adds "placement" (the host's line on
 * UTC: "bound_ns" +-, "residual_ns", "rate_ppm", "stamps", "sync" and
 * the kernel's "maxerror_us"/"esterror_us", "origin_real_ns": the merged
 * timeline's zero), and every other record says its "host".
 *
 * Counts are JSON integers (64-bit: readers that keep numbers as doubles,
 * like jq, round counts above 2^53), absent metrics are left out, `flags`
 * is omitted when empty. Names that are not UTF-8 carry their bad bytes
 * as the text \xNN. Keys that are literals go out as one copy, and an
 * interval's domain names and name keys are escaped once per domain
 * (out_cells.c).
 */
#include "out.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define JSONL_VERSION 2

struct jsonl_state {
	bool started;       /* the header record is out (merged: this host's) */
	uint8_t *described; /* per domain slot: its domain record is out */
	size_t cap;
	/* an interval's names: part 0 ', "domain": ..., "pmu": ..., "kind":
	 * ...', part 1 + k name k's key (metrics after the events) */
	struct out_cells cells;
};

static void key(struct t4_wbuf *w, const char *k, bool first)
{
	if (!first)
		dec_wbuf_str(w, ", ");
	dec_wbuf_json_str(w, k);
	dec_wbuf_str(w, ": ");
}

/* Keys that are string literals (plain ASCII: nothing to escape) go out
 * as one copy each: ", \"k\": " (KEY1: the object's first, no comma). */
#define KEY_TEXT(k) ", \"" k "\": "
#define KEY(w, k) dec_wbuf_put((w), KEY_TEXT(k), sizeof(KEY_TEXT(k)) - 1)
#define KEY1(w, k) dec_wbuf_put((w), KEY_TEXT(k) + 2, sizeof(KEY_TEXT(k)) - 3)
#define key_u64(w, k, v) (KEY(w, k), dec_wbuf_u64((w), (v)))
#define key_str(w, k, v) (KEY(w, k), dec_wbuf_json_str((w), (v)))
#define key_time(x, dec, k, t) \
	(KEY(&(x)->w, k), dec_wbuf_time(&(x)->w, (dec), (t), (x)->o.time))

/* A record; merged logs name its host next to its type. */
static void record(struct t4_wbuf *w, const char *type, const struct t4_decoder *dec)
{
	const struct t4_place *pl = dec ? t4_decoder_place(dec) : NULL;

	dec_wbuf_ch(w, '{');
	KEY1(w, "type");
	dec_wbuf_json_str(w, type);
	if (pl)
		key_str(w, "host", pl->host);
}

/* A merged header's placement: the host's line on UTC and its bound. */
static void placed(struct t4_wbuf *w, const struct t4_place *pl)
{
	KEY(w, "placement");
	dec_wbuf_ch(w, '{');
	KEY1(w, "bound_ns");
	dec_wbuf_u64(w, pl->bound_ns);
	key_u64(w, "residual_ns", pl->residual_ns);
	KEY(w, "rate_ppm");
	dec_wbuf_f64(w, (pl->rate - 1) * 1e6);
	key_u64(w, "stamps", pl->stamps);
	KEY(w, "sync");
	dec_wbuf_json_str(w, !pl->sync_known ? "unknown" : pl->unsynced ? "unsynchronised"
								   : "synchronised");
	if (pl->sync_known) {
		key_u64(w, "maxerror_us", pl->maxerror_us);
		key_u64(w, "esterror_us", pl->esterror_us);
	}
	KEY(w, "origin_real_ns");
	dec_wbuf_i64(w, pl->origin_real_ns);
	dec_wbuf_ch(w, '}');
}

/* ---- header and domains ------------------------------------------------------ */

static int start(struct t4_output *x, const struct t4_decoder *dec)
{
	struct jsonl_state *st = x->state;
	const struct t4_session_pkt *s = t4_index_session(t4_decoder_index(dec));
	struct t4_wbuf *w = &x->w;
	int rc;

	if (st->started)
		return 0;
	st->started = true;
	if ((rc = t4_decoder_time_ok(dec, x->o.time)) < 0)
		return rc;
	const struct t4_place *pl = t4_decoder_place(dec);
	out_once(x, 0); /* decode -j: the first worker's (their first output) */
	record(w, "header", NULL);
	key_str(w, "format", "t410trace-jsonl");
	key_u64(w, "version", JSONL_VERSION);
	key_str(w, "log", pl ? pl->log : x->o.log_name ? x->o.log_name : "-");
	key_str(w, "host", pl ? pl->host : s ? s->host : "");
	if (pl)
		placed(w, pl);
	KEY(w, "simulated");
	dec_wbuf_str(w, s && (s->flags & T4_SESSION_SIMULATED) ? "true" : "false");
	key_str(w, "ref_clock", t4_ref_clock_name(s ? s->ref_clock : T4_REFCLK_MONOTONIC_RAW));
	key_str(w, "time", t4_time_base_name(x->o.time));
	key_u64(w, "origin_ns", t4_decoder_origin_ns(dec));
	if (s && s->start_ref_ns && s->start_real_ns) {
		KEY(w, "realtime_anchor");
		dec_wbuf_ch(w, '{');
		KEY1(w, "ref_ns");
		dec_wbuf_u64(w, s->start_ref_ns);
		key_u64(w, "real_ns", s->start_real_ns);
		dec_wbuf_ch(w, '}');
	}
	key_u64(w, "period_ns", s ? s->period_ns : 0);
	key_str(w, "attribution", t4_decoder_phases_exact(dec) ? "time" : "trigger");
	dec_wbuf_str(w, "}\n");
	out_once_end(x);
	return 0;
}

static int describe(struct t4_output *x, const struct t4_decoder *dec,
		    const struct t4_dec_domain *dm, uint32_t slot)
{
	struct jsonl_state *st = x->state;
	struct t4_wbuf *w = &x->w;
	bool first = true;

	if (slot >= st->cap) {
		size_t cap = slot < 32 ? 64 : 2 * (size_t)slot;
		uint8_t *d = realloc(st->described, cap);
		if (!d)
			return t4_err(ENOMEM, "out of memory");
		memset(d + st->cap, 0, cap - st->cap);
		st->described = d;
		st->cap = cap;
	}
	if (st->described[slot])
		return 0;
	st->described[slot] = 1;
	record(w, "domain", dec);
	key_str(w, "domain", dm->name);
	key_str(w, "pmu", dm->pmu);
	key_str(w, "kind", t4_domain_kind_name(dm->ix->d.kind));
	key_str(w, "label", dm->kind_label);
	KEY(w, "cpu");
	dec_wbuf_i64(w, dm->ix->d.cpu);
	KEY(w, "units");
	dec_wbuf_ch(w, '{');
	for (uint32_t i = 0; i < dm->n_counts; i++, first = false) {
		key(w, dm->event_name[i], first);
		dec_wbuf_json_str(w, dm->event_unit[i]);
	}
	dec_wbuf_ch(w, '}');
	KEY(w, "metrics");
	dec_wbuf_ch(w, '{');
	first = true;
	for (uint32_t m = 0; m < dm->n_metrics; m++, first = false) {
		key(w, dm->metric_name[m], first);
		dec_wbuf_ch(w, '{');
		KEY1(w, "unit");
		dec_wbuf_json_str(w, dm->metric_unit[m]);
		key_str(w, "formula", dm->metric_formula[m] ? dm->metric_formula[m] : "");
		dec_wbuf_ch(w, '}');
	}
	dec_wbuf_str(w, "}}\n");
	return 0;
}

/* ---- intervals ----------------------------------------------------------------- */

static void counts(struct t4_wbuf *w, const struct t4_dec_domain *dm,
		   const struct t4_interval *iv, const struct out_cell_set *c)
{
	bool first = true;

	KEY(w, "counts");
	dec_wbuf_ch(w, '{');
	for (uint32_t i = 0; i < iv->n_counts && i < dm->n_counts; i++) {
		if (!dm->event_selected[i])
			continue;
		if (!first)
			dec_wbuf_put(w, ", ", 2);
		out_cell_put(w, c, 1 + i);
		dec_wbuf_u64(w, iv->counts[i]);
		first = false;
	}
	dec_wbuf_ch(w, '}');
}

static void metrics(struct t4_wbuf *w, const struct t4_dec_domain *dm,
		    const struct t4_interval *iv, const struct out_cell_set *c)
{
	bool first = true;

	KEY(w, "metrics");
	dec_wbuf_ch(w, '{');
	for (uint32_t m = 0; iv->metrics && m < dm->n_metrics; m++) {
		if (!dm->metric_selected[m] || iv->metrics[m] != iv->metrics[m])
			continue;
		if (!first)
			dec_wbuf_put(w, ", ", 2);
		out_cell_put(w, c, 1 + dm->n_counts + m);
		dec_wbuf_f64(w, iv->metrics[m]);
		first = false;
	}
	dec_wbuf_ch(w, '}');
}

static void flags(struct t4_wbuf *w, uint32_t f)
{
	const char *names[16];
	size_t n = out_flag_names(f, names, 16);

	if (!n)
		return;
	KEY(w, "flags");
	dec_wbuf_ch(w, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			dec_wbuf_str(w, ", ");
		dec_wbuf_json_str(w, names[i]);
	}
	dec_wbuf_ch(w, ']');
}

static int jsonl_interval(void *ud, const struct t4_decoder *dec, const struct t4_interval *iv)
{
	struct t4_output *x = ud;
	struct t4_wbuf *w = &x->w;
	struct jsonl_state *st = x->state;
	const struct t4_dec_domain *dm = t4_decoder_domain_at(dec, iv->domain);
	const struct out_cell_set *c;
	int rc;

	if ((rc = start(x, dec)) < 0 || (rc = describe(x, dec, dm, iv->domain)) < 0)
		return rc;
	if (!(c = out_cells_of(&st->cells, iv->domain, dm)))
		return -ENOMEM;
	record(w, "interval", dec);
	out_cell_put(w, c, 0);
	key_u64(w, "trigger", iv->trigger);
	key_u64(w, "first_trigger", iv->first_trigger);
	key_time(x, dec, "start_ns", iv->start_ns);
	key_time(x, dec, "end_ns", iv->end_ns);
	key_u64(w, "elapsed_ns", iv->elapsed_ns);
	key_str(w, "bookmark", t4_decoder_bookmark(dec, iv->bookmark_id));
	key_u64(w, "occurrence", iv->occurrence);
	counts(w, dm, iv, c);
	metrics(w, dm, iv, c);
	flags(w, iv->flags);
	dec_wbuf_str(w, "}\n");
	return out_status(x);
}

/* ---- slices and phases ----------------------------------------------------------- */

static int jsonl_slice(void *ud, const struct t4_decoder *dec, const struct t4_slice *s)
{
	struct t4_output *x = ud;
	struct t4_wbuf *w = &x->w;
	bool gpu = s->kind == T4_SLICE_GPU;
	int rc;

	if ((rc = start(x, dec)) < 0)
		return rc;
	record(w, "slice", dec);
	key_str(w, "slice", gpu ? "gpu" : "cpu");
	key_time(x, dec, "start_ns", s->start_ns);
	key_time(x, dec, "end_ns", s->end_ns);
	if (!gpu)
		key_u64(w, "cpu", s->cpu);
	key_u64(w, "pid", s->pid);
	key_u64(w, "tid", s->tid);
	if (gpu) {
		key_u64(w, "context", s->context);
		key_u64(w, "seqno", s->seqno);
		key_str(w, "driver", s->driver);
		key_str(w, "timeline", s->timeline);
	} else {
		key_str(w, "name", s->name);
	}
	key_str(w, "bookmark", t4_decoder_bookmark(dec, s->bookmark_id));
	dec_wbuf_str(w, "}\n");
	return out_status(x);
}

static int jsonl_phase(void *ud, const struct t4_decoder *dec, size_t i)
{
	struct t4_output *x = ud;
	struct t4_wbuf *w = &x->w;
	const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, i);
	int rc;

	if ((rc = start(x, dec)) < 0)
		return rc;
	record(w, "phase", dec);
	key_str(w, "phase", ph->name);
	key_u64(w, "occurrence", ph->occurrence);
	key_time(x, dec, "start_ns", ph->start_ns);
	key_time(x, dec, "end_ns", ph->end_ns);
	key_u64(w, "duration_ns", t4_decoder_span(dec, ph->start_ns, ph->end_ns, x->o.time));
	key_u64(w, "triggers", ph->triggers);
	key_str(w, "boundary", ph->exact ? "exact" : "trigger");
	dec_wbuf_str(w, "}\n");
	return out_status(x);
}

static int jsonl_finish(void *ud, const struct t4_decoder *dec)
{
	int rc = start(ud, dec); /* nothing decoded: still the header */

	return rc < 0 ? rc : out_close(ud);
}

/* Merged: each host opens with its own header, its domains described
 * again (their slots are its decoder's). */
static int jsonl_host(void *ud, const struct t4_decoder *dec)
{
	struct t4_output *x = ud;
	struct jsonl_state *st = x->state;

	(void)dec;
	st->started = false;
	if (st->described)
		memset(st->described, 0, st->cap);
	return 0;
}

static void cells_render(void *ud, const struct t4_dec_domain *dm, struct out_cell_set *s)
{
	struct t4_wbuf *w = &s->text;

	(void)ud;
	key_str(w, "domain", dm->name);
	key_str(w, "pmu", dm->pmu);
	key_str(w, "kind", t4_domain_kind_name(dm->ix->d.kind));
	out_cell_end(s);
	for (uint32_t k = 0; k < dm->n_counts + dm->n_metrics; k++) {
		key(w, k < dm->n_counts ? dm->event_name[k] : dm->metric_name[k - dm->n_counts],
		    true);
		out_cell_end(s);
	}
}

static int jsonl_init(struct t4_output *x)
{
	struct jsonl_state *st = calloc(1, sizeof(*st));

	if (!st || out_cells_init(&st->cells, cells_render, NULL) < 0) {
		free(st);
		return t4_err(ENOMEM, "out of memory");
	}
	x->state = st;
	return 0;
}

static void jsonl_fini(struct t4_output *x)
{
	struct jsonl_state *st = x->state;

	if (st) {
		free(st->described);
		out_cells_free(&st->cells);
	}
	free(st);
}

/* decode -j: whether the header is out. */
static void jsonl_fork_state(struct t4_output *copy, const struct t4_output *x)
{
	((struct jsonl_state *)copy->state)->started = ((const struct jsonl_state *)x->state)->started;
}

static void jsonl_join_state(struct t4_output *x, const struct t4_output *copy)
{
	((struct jsonl_state *)x->state)->started |= ((const struct jsonl_state *)copy->state)->started;
}

const struct out_backend out_jsonl = {
	.name = "jsonl",
	.ops = { .interval = jsonl_interval, .slice = jsonl_slice, .phase = jsonl_phase,
		 .finish = jsonl_finish, .host = jsonl_host, .fork = out_fork, .join = out_join },
	.wants_metrics = true,
	.init = jsonl_init,
	.fini = jsonl_fini,
	.fork_state = jsonl_fork_state,
	.join_state = jsonl_join_state,
};
