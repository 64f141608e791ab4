/* filters.c - the options that select (--pmu, --event, --phase, --from,
 * --to, --bin): what they select, and whether what they name is in the
 * logs at all.
 *
 * A name is one the outputs would show: a domain with return packets
 * (its name, its PMU: its first event's that names one, its kind), an
 * event of a domain --pmu selects (its name; "eventN" before its event
 * packet) or a metric of one (its kind's formulas; a DRM domain's, made
 * from its events), a bookmark (its ID's first name). Each glob of a list
 * must match one: an empty list is one empty glob, which matches none
 * (selecting nothing is said, never an empty output). An error names the
 * option, the closest name and the first names there are.
 *
 * The filters together must keep an interval (--from/--to by its middle,
 * --phase, --pmu): offsets that cannot (--to 0, --from past the last
 * trigger) are refused here; what else keeps none only a decode knows
 * (decode.c: at its end, and a quiet first pass up to the first interval
 * kept). The same error either way, naming the options and the span of
 * the log's triggers.
 *
 * The check reads the logs' indexes only, so one function answers for
 * every caller: the decoder at its end (decode.c), a first pass over the
 * log before any output byte where the output is written as it goes
 * (standard output: t4_decode_check_file(), whose index is info's), and
 * several hosts' logs before any of them is decoded (merge.c: a name
 * need be in one of them). Cost: globs x names, on the options' path.
 */
#include "decode_int.h"
#include "collector/collector.h"
#include "util/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* ---- what the options select ------------------------------------------------- */

bool dec_glob_any(const char *globs, const char *name, int flags)
{
	char one[256];

	if (!globs)
		return true;
	for (const char *p = globs; *p;) {
		size_t n = strcspn(p, ",");
		if (n < sizeof(one)) {
			memcpy(one, p, n);
			one[n] = '\0';
			if (!fnmatch(one, name, flags))
				return true;
		}
		p += n + (p[n] == ',');
	}
	return false;
}

/* --pmu: the domain's name, its PMU or its kind. */
bool dec_domain_selected(const char *pmu_glob, const char *name, const char *pmu,
			 const char *kind, uint32_t kind_id)
{
	const char *g = pmu_glob;

	return !g || dec_glob_any(g, name, 0) || (*pmu && dec_glob_any(g, pmu, 0)) ||
	       dec_glob_any(g, kind, FNM_CASEFOLD) ||
	       dec_glob_any(g, t4_domain_kind_name(kind_id), FNM_CASEFOLD);
}

/* --bin finer than the log's period only spreads each interval's counts
 * evenly over its bins: said (unless quiet); a thousand bins per interval
 * and more is refused (--bin 1ns on a minute's log is hours of work and
 * gigabytes of made-up rows). */
int dec_check_bins(uint64_t bin_ns, uint64_t period_ns, bool quiet)
{
	char g[32], p[32];

	if (!bin_ns || !period_ns || bin_ns >= period_ns)
		return 0;
	t4_fmt_duration(bin_ns, g, sizeof(g));
	t4_fmt_duration(period_ns, p, sizeof(p));
	if (period_ns / bin_ns >= DEC_MAX_BINS_PER_PERIOD)
		return t4_err(EINVAL, "--bin %s: a thousand bins and more per period of the log"
			      " (%s), each only a share of one interval: use --bin %s or more",
			      g, p, p);
	if (!quiet)
		t4_warn("--bin %s is finer than the log's period (%s): its bins spread each"
			" interval's counts evenly", g, p);
	return 0;
}

/* ---- the names the logs hold ---------------------------------------------------- */

/* The logs a check reads and the options. */
struct logs {
	const struct t4_index *const *ix;
	size_t n;
	const struct t4_decode_opts *o;
};

/* A name found: true stops the walk. */
typedef bool (*name_fn)(void *ud, const char *name);
/* Every name of one kind in the logs, to fn; true when fn stopped it. */
typedef bool (*walk_fn)(const struct logs *l, name_fn fn, void *ud);

/* A domain as the outputs show it: one with return packets, its events
 * (those its returns count, at least one), its PMU and its kind's label. */
struct shown {
	const struct t4_index_domain *d;
	uint32_t n;
	const char *pmu, *label;
};

static bool shown_at(const struct t4_index *ix, size_t i, struct shown *s)
{
	size_t nf;

	s->d = t4_index_domain_at(ix, i);
	if (!s->d->rets)
		return false;
	s->n = s->d->n_counts < T4_MAX_COUNTERS ? s->d->n_counts : T4_MAX_COUNTERS;
	s->n = s->n ? s->n : 1;
	s->pmu = dec_domain_pmu(ix, s->d->d.domain_id, s->n);
	t4_kind_formulas(s->d->d.kind, &nf, &s->label);
	return true;
}

/* The names of one shown domain, to fn; true when fn stopped. */
typedef bool (*shown_fn)(const struct logs *l, const struct t4_index *ix, const struct shown *s,
			 name_fn fn, void *ud);

/* per() of every shown domain of the logs; true when fn stopped. */
static bool each_shown(const struct logs *l, shown_fn per, name_fn fn, void *ud)
{
	struct shown s;

	for (size_t k = 0; k < l->n; k++)
		for (size_t i = 0; i < t4_index_n_domains(l->ix[k]); i++)
			if (shown_at(l->ix[k], i, &s) && per(l, l->ix[k], &s, fn, ud))
				return true;
	return false;
}

/* Its name, its PMU, its kind. */
static bool domain_names(const struct logs *l, const struct t4_index *ix, const struct shown *s,
			 name_fn fn, void *ud)
{
	(void)l, (void)ix;
	return fn(ud, s->d->d.name) || fn(ud, s->pmu) || fn(ud, t4_domain_kind_name(s->d->d.kind));
}

static bool walk_domains(const struct logs *l, name_fn fn, void *ud)
{
	return each_shown(l, domain_names, fn, ud);
}

/* Its events and metrics, when --pmu selects it. */
static bool domain_events(const struct logs *l, const struct t4_index *ix, const struct shown *s,
			  name_fn fn, void *ud)
{
	char fallback[T4_MAX_COUNTERS][16], name[2 * T4_NAME_MAX], expr[6 * T4_NAME_MAX];
	const char *ev[T4_MAX_COUNTERS];
	size_t nf;
	const struct t4_formula *f = t4_kind_formulas(s->d->d.kind, &nf, NULL);

	if (!dec_domain_selected(l->o->pmu_glob, s->d->d.name, s->pmu, s->label, s->d->d.kind))
		return false;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct t4_event_pkt *e = t4_index_event(ix, s->d->d.domain_id, i);
		snprintf(fallback[i], sizeof(fallback[i]), "event%u", i);
		ev[i] = e ? e->name : fallback[i];
		if (fn(ud, ev[i]))
			return true;
	}
	if (s->d->d.kind == T4_DOM_DRM) { /* its metrics are made from its events */
		for (uint32_t i = 0; i < s->n; i++)
			if (dec_drm_metric(ev, s->n, i, name, sizeof(name), expr, sizeof(expr)) &&
			    fn(ud, name))
				return true;
		return false;
	}
	for (size_t m = 0; m < nf && m < T4_MAX_COUNTERS; m++)
		if (fn(ud, f[m].name))
			return true;
	return false;
}

static bool walk_events(const struct logs *l, name_fn fn, void *ud)
{
	return each_shown(l, domain_events, fn, ud);
}

/* By ID: the bookmark packets the index keeps stop at 100,000, and a name
 * first set after them was "no such bookmark" to --from, --to and --phase. */
static bool walk_bookmarks(const struct logs *l, name_fn fn, void *ud)
{
	for (size_t k = 0; k < l->n; k++)
		for (size_t i = 0; i < t4_index_n_bookmark_ids(l->ix[k]); i++)
			if (fn(ud, t4_index_bookmark_id_at(l->ix[k], i)->name))
				return true;
	return false;
}

/* ---- errors: the closest name and the first ones -------------------------------- */

#define LISTED 512 /* names an error looks through for the closest, at most */

/* Distinct names for "did you mean" and the list (an error path). */
struct names {
	const char *v[LISTED];
	char (*own)[2 * T4_NAME_MAX]; /* the walk's names are its own: copied */
	size_t n;
};

static bool collect(void *ud, const char *s)
{
	struct names *c = ud;

	if (!*s || c->n == LISTED)
		return c->n == LISTED;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i], s))
			return false;
	snprintf(c->own[c->n], sizeof(c->own[0]), "%s", s);
	c->v[c->n] = c->own[c->n];
	c->n++;
	return false;
}

/* "a, b, c" of the first names into buf. */
static const char *names_list(const struct names *c, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < c->n && n + 4 < cap; i++) {
		char safe[96];
		const char *t = t4_text(c->v[i], T4_TEXT_CONTROL, safe, sizeof(safe));
		if (n + strlen(t) + 8 >= cap) {
			snprintf(buf + n, cap - n, ", ...");
			break;
		}
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", t);
	}
	return buf;
}

/* The error for `opt name`, which matches none of walk's names: it
 * (control characters made spaces), the closest name, the first names. */
static int no_match(int err, const char *fmt, const char *opt, const char *name,
		    const struct logs *l, walk_fn walk)
{
	struct names c = { .n = 0 };
	/* together with the option and the words, within t4_err()'s 512 bytes:
	 * the message is never cut in its middle */
	char dym[160], list[200], safe[96];

	if (!(c.own = calloc(LISTED, sizeof(*c.own))))
		return t4_err(ENOMEM, "out of memory");
	walk(l, collect, &c);
	t4_did_you_mean(dym, sizeof(dym), t4_suggest(name, c.v, c.n, t4_strv_at));
	names_list(&c, list, sizeof(list));
	err = t4_err(err, fmt, opt, t4_text(name, T4_TEXT_CONTROL, safe, sizeof(safe)), dym,
		     l->n > 1 ? (c.n ? "the logs have: " : "the logs have none")
			      : (c.n ? "the log has: " : "the log has none"),
		     list);
	free(c.own);
	return err;
}

/* ---- the checks ------------------------------------------------------------- */

struct glob {
	const char *glob;
	int flags;
};

static bool matches(void *ud, const char *name)
{
	const struct glob *g = ud;

	return *name && !fnmatch(g->glob, name, g->flags);
}

/* Each glob of a comma-separated list must match one of walk's names. */
static int check_globs(const struct logs *l, const char *opt, const char *globs, walk_fn walk,
		       int flags, const char *what)
{
	char one[256], fmt[128];

	snprintf(fmt, sizeof(fmt), "%%s %%s: matches no %s%%s (%%s%%s)", what);
	for (const char *p = globs; p && (*p || p == globs);) {
		size_t n = strcspn(p, ",");
		snprintf(one, sizeof(one), "%.*s", (int)(n < 255 ? n : 255), p);
		if (!walk(l, matches, &(struct glob){ one, flags }))
			return no_match(ENOENT, fmt, opt, one, l, walk);
		p += n + (p[n] == ',');
	}
	return 0;
}

static bool is_name(void *ud, const char *name)
{
	return !strcmp(ud, name);
}

/* A bookmark the options name must be in the logs: a typo otherwise gives
 * an empty (or an unfiltered) output without a word. */
static int check_bookmark(const struct logs *l, const char *opt, const char *name)
{
	if (!name || walk_bookmarks(l, is_name, (void *)name))
		return 0;
	return no_match(EINVAL, l->n > 1 ? "%s %s: no log has the bookmark%s (%s%s)"
					 : "%s %s: no such bookmark in the log%s (%s%s)",
			opt, name, l, walk_bookmarks);
}

/* The span of the log's triggers: from the first to the last. */
static uint64_t trigger_span(const struct t4_index *ix)
{
	uint64_t last = 0, origin = t4_index_origin_ns(ix);

	for (size_t i = 0; i < t4_index_n_scheds(ix); i++) {
		const struct t4_index_sched *s = t4_index_sched_at(ix, i);
		if (s->last_ns > last)
			last = s->last_ns;
	}
	return last > origin ? last - origin : 0;
}

/* A --from/--to value as typed ("1m", not "60s"), shown as text. */
static const char *timepoint_text(const struct t4_timepoint *t, char *buf, size_t cap)
{
	return t4_text(t->text[0] ? t->text : t->bookmark, T4_TEXT_CONTROL, buf, cap);
}

bool dec_filters_select(const struct t4_decode_opts *o)
{
	return o->from.set || o->to.set || o->phase || o->pmu_glob;
}

bool dec_log_has_intervals(const struct t4_index *ix)
{
	for (size_t i = 0; i < t4_index_n_domains(ix); i++) {
		const struct t4_index_domain *d = t4_index_domain_at(ix, i);
		if (d->rets - d->duplicates >= 2)
			return true;
	}
	return false;
}

/* " OPT VALUE" appended to buf (of cap, used *n) when value is given. */
static void option_text(char *buf, size_t cap, size_t *n, const char *opt, const char *value)
{
	int k;

	if (!value || *n >= cap)
		return;
	k = snprintf(buf + *n, cap - *n, "%s%s %s", *n ? " " : "", opt, value);
	*n += k > 0 ? (size_t)k : 0;
}

int dec_selection_empty(const struct t4_index *ix, const struct t4_decode_opts *o)
{
	char opts[16 * T4_NAME_MAX], f[4 * T4_NAME_MAX], t[4 * T4_NAME_MAX], span[32];
	bool window = o->from.set || o->to.set;
	size_t n = 0;

	opts[0] = '\0';
	option_text(opts, sizeof(opts), &n, "--phase", o->phase);
	option_text(opts, sizeof(opts), &n, "--pmu", o->pmu_glob);
	option_text(opts, sizeof(opts), &n, "--from",
		    o->from.set ? timepoint_text(&o->from, f, sizeof(f)) : NULL);
	option_text(opts, sizeof(opts), &n, "--to",
		    o->to.set ? timepoint_text(&o->to, t, sizeof(t)) : NULL);
	if (!ix) /* merged: several spans */
		return t4_err(ERANGE, "%s: selects no interval of the logs%s", opts,
			      window ? " (an interval is in by its middle)" : "");
	return t4_err(ERANGE, "%s: selects no interval of the log (its triggers span 0 to %s from "
		      "the first%s)", opts, t4_fmt_duration(trigger_span(ix), span, sizeof(span)),
		      window ? "; an interval is in by its middle" : "");
}

/* --from/--to offsets that hold no interval's middle whatever the log's
 * triggers: --from at or past the last trigger, --to 0 (one log: merged,
 * they count from the first trigger of any host). Where the middles lie
 * is the decoder's to say: dec_selection_check_file() and its end. */
static int check_span(const struct t4_index *ix, const struct t4_decode_opts *o)
{
	const struct t4_timepoint *f = &o->from, *t = &o->to;

	if ((f->set && !f->is_bookmark && f->offset_ns >= trigger_span(ix)) ||
	    (t->set && !t->is_bookmark && !t->offset_ns))
		return dec_selection_empty(ix, o);
	return 0;
}

int dec_window_to_error(const char *log, const struct t4_decode_opts *o)
{
	return t4_err(ERANGE, "%s%s--to %s: every occurrence of it starts before --from %s (--to "
		      "is the end of its first occurrence after --from)",
		      log ? log : "", log ? ": " : "", o->to.text, o->from.text);
}

/* Whether the index's bookmark packets are the decoder's phases one for
 * one: each kept, each with its set time, in strictly increasing set
 * order, no damage and no drops, said by a closing status packet (a packet
 * lost: the references bring its phase back, phases.c). Then a packet
 * naming what the one before it named continues its phase, and every other
 * one starts a phase at its set time. */
static bool bookmarks_are_phases(const struct t4_index *ix)
{
	const struct t4_index_counts *c = t4_index_counts(ix);
	const struct t4_status_pkt *st = t4_index_status(ix);
	size_t n = t4_index_n_bookmarks(ix);
	uint64_t last = 0;

	if (c->damage || c->bookmark_packets != n || !st || st->dropped ||
	    !t4_index_closed(ix))
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct t4_bookmark_pkt *b = t4_index_bookmark_at(ix, i);
		if (b->set_ns <= last)
			return false;
		last = b->set_ns;
	}
	return true;
}

/* The start of the first phase named name at or after t (a bookmark
 * packet's set time), UINT64_MAX if none: bookmarks_are_phases() only. */
static uint64_t phase_named(const struct t4_index *ix, const char *name, uint64_t t)
{
	const char *prev = "";

	for (size_t i = 0; i < t4_index_n_bookmarks(ix); i++) {
		const struct t4_bookmark_pkt *b = t4_index_bookmark_at(ix, i);
		bool starts = strcmp(b->name, prev) != 0; /* (the same again: no phase) */
		prev = b->name;
		if (starts && b->set_ns >= t && !strcmp(b->name, name))
			return b->set_ns;
	}
	return UINT64_MAX;
}

int dec_window_to_check(const struct t4_index *ix, const struct t4_decode_opts *o,
			const struct t4_place *pl)
{
	const struct t4_timepoint *f = &o->from, *t = &o->to;
	uint64_t from = 0;

	if (!t->set || !t->is_bookmark || !bookmarks_are_phases(ix) ||
	    phase_named(ix, t->bookmark, 0) == UINT64_MAX)
		return 0;
	if (f->set && f->is_bookmark)
		from = phase_named(ix, f->bookmark, 0);
	else if (f->set) /* (the index's origin: the earliest, never after the decoder's) */
		from = dec_window_offset(t4_index_origin_ns(ix), pl, f->offset_ns);
	if (from == UINT64_MAX || phase_named(ix, t->bookmark, from) != UINT64_MAX)
		return 0;
	return dec_window_to_error(pl ? pl->log : NULL, o);
}

bool t4_decode_check_needed(const struct t4_decode_opts *o)
{
	return o->phase || o->from.set || o->to.set || o->pmu_glob || o->event_glob || o->bin_ns;
}

int t4_decode_check(const struct t4_index *const *ix, size_t n, const struct t4_decode_opts *o)
{
	const struct logs l = { ix, n, o };
	int rc = check_bookmark(&l, "--phase", o->phase);

	if (!rc && o->from.is_bookmark)
		rc = check_bookmark(&l, "--from", o->from.bookmark);
	if (!rc && o->to.is_bookmark)
		rc = check_bookmark(&l, "--to", o->to.bookmark);
	if (!rc && o->pmu_glob)
		rc = check_globs(&l, "--pmu", o->pmu_glob, walk_domains, FNM_CASEFOLD,
				 "domain, PMU or kind");
	if (!rc && o->event_glob)
		rc = check_globs(&l, "--event", o->event_glob, walk_events, 0, "event or metric");
	if (!rc && n == 1)
		rc = check_span(ix[0], o);
	if (!rc && n == 1)
		rc = dec_window_to_check(ix[0], o, NULL);
	for (size_t k = 0; k < n && !rc; k++) {
		const struct t4_session_pkt *s = t4_index_session(ix[k]);
		rc = s ? dec_check_bins(o->bin_ns, s->period_ns, true) : 0;
	}
	return rc;
}

/* ---- the first pass ------------------------------------------------------------- */

/* The decode says the warnings; the index counts them (damage: its
 * bookmark packets may not be the phases, dec_window_to_check). */
static void quiet_warning(void *ud, uint64_t offset, const char *msg)
{
	(void)offset, (void)msg;
	t4_index_damage(ud);
}

int t4_decode_check_file(const char *path, const struct t4_decode_opts *o, enum t4_time_base b,
			 bool streams)
{
	struct t4_packet *p = malloc(sizeof(*p));
	struct t4_index *ix = NULL;
	struct t4_reader *r = NULL;
	bool names = t4_decode_check_needed(o); /* else the time base alone: the session */
	int rc = p ? t4_index_new(&ix) : t4_err(ENOMEM, "out of memory");

	if (rc == 0) {
		t4_index_no_totals(ix); /* names and counts: all a check reads */
		rc = t4_reader_open(&r, path, quiet_warning, ix);
	}
	while (rc == 0 && (rc = t4_reader_next(r, p)) > 0) {
		int a = t4_index_add(ix, p); /* (-ENOMEM, said, is its only failure) */
		rc = a < 0 ? a : 0;
		if (!names && t4_index_session(ix))
			break; /* (the first session packet holds) */
	}
	if (rc == 0) {
		const struct t4_index *one = ix;
		rc = t4_decode_check(&one, 1, o);
	}
	if (rc == 0)
		rc = t4_index_time_ok(ix, b);
	t4_reader_close(r);
	t4_index_free(ix);
	free(p);
	/* whether the filters keep an interval: a decode up to the first */
	bool kept;
	if (rc == 0 && streams && dec_filters_select(o))
		rc = dec_selection_check_file(path, o, NULL, &kept);
	return rc;
}
