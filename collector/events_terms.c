/* events_terms.c - one PMU's terms (pmu/alias,name=value,flag/) turned
 * into one counter's config words; the string helpers the event parser
 * shares (hex values, bounded appends).
 *
 * Trade-offs: split from events.c only to keep files small; the two talk
 * through the private events_int.h. An alias's terms are applied first,
 * then the user's terms in order, each clearing its field's bits before
 * setting them, so a user term overrides the alias as in perf. The PCIE
 * filter rules the kernel enforces (root-port vs BDF filter, one BDF per
 * PMU) are checked here so the user gets a message instead of EINVAL from
 * perf_event_open.
 */
#include "events_int.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define TERMS_MAX 32

static const char *const raw_terms[] = { "config", "config1", "config2" };

struct term {
	char *name;
	char *val; /* NULL for a bare name */
	char text[128]; /* as written, for messages */
};

/* What one counter's terms amount to. */
struct build {
	uint64_t cfg[3];
	char name[T4_NAME_MAX];
	char canon[T4_SPEC_MAX];
	const struct t4_alias *alias;    /* the sysfs alias it names, or */
	const struct t4_kind_event *ke;  /* the catalog event it names */
	bool user_name;
	/* the formats set by the user (a list, not a bit per format index:
	 * a PMU may have any number of formats) */
	const struct t4_format *seen[TERMS_MAX];
	int n_seen;
	uint8_t seen_raw; /* config/config1/config2 set by the user */
};

/* Whether the user's terms set format f. */
static bool user_set(const struct build *b, const struct t4_format *f)
{
	for (int i = 0; f && i < b->n_seen; i++)
		if (b->seen[i] == f)
			return true;
	return false;
}

/* ---- small helpers ------------------------------------------------------ */

void ev_copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Append to buf; false when it would not fit. */
bool ev_catf(char *buf, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < cap - len;
}

/* Decimal or 0x hex, the whole string, like perf's lexer. */
int ev_parse_value(const char *s, uint64_t *out)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *d = hex ? s + 2 : s;
	char *end;

	if (!*d)
		return t4_err(EINVAL, "'%s': not a number (decimal or 0x hex)", s);
	for (const char *p = d; *p; p++)
		if (hex ? !isxdigit((unsigned char)*p) : !isdigit((unsigned char)*p))
			return t4_err(EINVAL, "'%s': not a number (decimal or 0x hex)", s);
	errno = 0;
	*out = strtoull(d, &end, hex ? 16 : 10);
	return errno ? t4_err(ERANGE, "'%s': too large for 64 bits", s) : 0;
}

/* The catalog event a bare name means on pmu: a Tegra410 PMU whose
 * `event` field holds the catalog's ids. NULL for any other PMU or name. */
static const struct t4_kind_event *catalog_event(const struct t4_pmu *pmu, const char *name)
{
	return t4_pmu_format(pmu, "event") ? t4_kind_event(pmu->kind, name) : NULL;
}

const struct t4_kind_event *t4_catalog_event(const struct t4_pmu *pmu, const char *name)
{
	const struct t4_kind_event *ke = catalog_event(pmu, name);

	return ke && (!t4_pmu_alias(pmu, name) || pmu->naming != T4_NAMING_TEGRA410) ? ke : NULL;
}

const char *t4_pmu_event_name(const struct t4_pmu *pmu, size_t i)
{
	if (i < pmu->n_aliases)
		return pmu->aliases[i].name;
	i -= pmu->n_aliases;
	for (size_t k = 0; pmu->kind && t4_pmu_format(pmu, "event") && k < pmu->kind->n_events; k++)
		if (!t4_pmu_alias(pmu, pmu->kind->events[k].name) && i-- == 0)
			return pmu->kind->events[k].name;
	return NULL;
}

static const char *event_name_at(const void *src, size_t i)
{
	return t4_pmu_event_name(src, i);
}

static size_t event_names(const struct t4_pmu *pmu)
{
	size_t n = 0;

	while (t4_pmu_event_name(pmu, n))
		n++;
	return n;
}

/* Mask and extracted value of a format field in cfg. */
uint64_t ev_format_extract(const struct t4_format *f, const uint64_t cfg[3])
{
	uint64_t v = 0;
	unsigned vbit = 0;

	for (unsigned i = 0; i < f->n_ranges; i++)
		for (unsigned b = f->ranges[i].lo; b <= f->ranges[i].hi; b++, vbit++)
			v |= ((cfg[f->field] >> b) & 1) << vbit;
	return v;
}

/* ---- terms ------------------------------------------------------------- */

/* A quoted word of a term (its name or value) unquoted in place; it must
 * be the whole word. */
static int unquote_word(char *w, const char *what)
{
	int n;

	if (*w != '"')
		return 0;
	if ((n = ev_unquote(w, w, strlen(w) + 1)) < 0)
		return n;
	if (w[n]) /* in place: the bytes after the closing quote are untouched */
		return t4_err(EINVAL, "%s: '%s' after a quoted name (missing ','?)", what, w + n);
	return 0;
}

/* Split "a=1,b,c=0x2" in place (buf is modified); a name or value may be
 * quoted ("a,b"=1), its commas and '=' then its own. */
static int split_terms(char *buf, const char *what, struct term *t, int max)
{
	int n = 0;

	for (char *p = buf; p;) {
		char *comma = p + ev_span(p, ","), *eq;
		int rc;

		comma = *comma ? comma : NULL;
		if (comma)
			*comma = '\0';
		if (!*p)
			return t4_err(EINVAL, "%s: empty term", what);
		if (n == max)
			return t4_err(EINVAL, "%s: more than %d terms", what, max);
		eq = p + ev_span(p, "=");
		ev_copy_str(t[n].text, sizeof(t[n].text), p);
		t[n].name = p;
		t[n].val = NULL;
		if (*eq) {
			*eq = '\0';
			t[n].val = eq + 1;
		}
		if ((rc = unquote_word(t[n].name, t[n].text)) < 0 ||
		    (t[n].val && (rc = unquote_word(t[n].val, t[n].text)) < 0))
			return rc;
		n++;
		p = comma ? comma + 1 : NULL;
	}
	return n;
}

static int raw_index(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, raw_terms[i]))
			return i;
	return -1;
}

static int unknown_term(const struct t4_pmu *pmu, const char *text)
{
	char valid[400] = "";

	for (size_t i = 0; i < pmu->n_formats; i++)
		ev_catf(valid, sizeof(valid), "%s, ", pmu->formats[i].name);
	ev_catf(valid, sizeof(valid), "config, config1, config2");
	return t4_err(EINVAL, "%s: unknown term for %s (valid terms: %s)", text, pmu->name, valid);
}

static int unknown_event(const struct t4_pmu *pmu, const char *name)
{
	char h[T4_NAME_MAX + 32], list[300] = "";
	const char *guess = t4_suggest(name, pmu, event_names(pmu), event_name_at);

	if (guess)
		return t4_err(EINVAL, "%s: unknown event for %s%s", name, pmu->name,
			      t4_did_you_mean(h, sizeof(h), guess));
	for (size_t i = 0; i < event_names(pmu); i++)
		ev_catf(list, sizeof(list), "%s%s", i ? ", " : "", event_name_at(pmu, i));
	if (!list[0])
		return t4_err(EINVAL, "%s: unknown event for %s (it has no named events; use %s/event=0x.../)",
			      name, pmu->name, pmu->name);
	return t4_err(EINVAL, "%s: unknown event for %s (events: %s)", name, pmu->name, list);
}

/* Apply one name=value term to b. from_user: count it as the user's. */
static int apply_term(const struct t4_pmu *pmu, struct build *b, const struct term *t,
		      bool from_user)
{
	const struct t4_format *f;
	char spec[96], q[T4_SPEC_MAX];
	uint64_t v = 1;
	int ri;

	if (t->val && !strcmp(t->name, "name") && from_user) {
		if (!*t->val || strlen(t->val) >= sizeof(b->name))
			return t4_err(EINVAL, "%s: name must have 1 to %d characters", t->text,
				      T4_NAME_MAX - 1);
		ev_copy_str(b->name, sizeof(b->name), t->val);
		b->user_name = true;
		return t4_events_quote(q, sizeof(q), t->val) &&
				       ev_catf(b->canon, sizeof(b->canon), "%sname=%s",
					       b->canon[0] ? "," : "", q)
			       ? 0 : t4_err(EINVAL, "%s: event string too long", t->text);
	}
	ri = raw_index(t->name);
	f = ri < 0 ? t4_pmu_format(pmu, t->name) : NULL;
	if (ri < 0 && !f)
		return unknown_term(pmu, t->text);
	if (t->val && ev_parse_value(t->val, &v) < 0)
		return t4_err(EINVAL, "%s: malformed value (use decimal or 0x hex)", t->text);
	if (!t->val && ri >= 0)
		return t4_err(EINVAL, "%s: needs a value (%s=0x...)", t->text, t->name);
	if (from_user) {
		if (user_set(b, f) || (ri >= 0 && (b->seen_raw & (1u << ri))))
			return t4_err(EINVAL, "%s: term given twice", t->text);
		if (f)
			b->seen[b->n_seen++] = f; /* one per term: fits */
		b->seen_raw |= ri >= 0 ? (uint8_t)(1u << ri) : 0;
		if (!t4_events_quote(q, sizeof(q), t->name) ||
		    !ev_catf(b->canon, sizeof(b->canon), "%s%s=0x%llx", b->canon[0] ? "," : "", q,
			     (unsigned long long)v))
			return t4_err(EINVAL, "%s: event string too long", t->text);
	}
	if (ri >= 0) {
		b->cfg[ri] = v;
		return 0;
	}
	if (t4_format_apply(f, v, b->cfg) < 0)
		return t4_err(EINVAL, "%s: value does not fit in %s (%u bits)", t->text,
			      t4_format_str(f, spec, sizeof(spec)), t4_format_bits(f));
	return 0;
}

/* The name of the event b already holds, if any. */
static const char *event_of(const struct build *b)
{
	return b->alias ? b->alias->name : b->ke ? b->ke->name : NULL;
}

static int two_events(const struct build *b, const char *name)
{
	return t4_err(EINVAL, "%s: two events in one (%s and %s); list them separately", name,
		      event_of(b), name);
}

/* A catalog event: its id through the PMU's `event` field. */
static int apply_catalog(const struct t4_pmu *pmu, struct build *b, const struct t4_kind_event *ke)
{
	const struct t4_format *ev = t4_pmu_format(pmu, "event");
	char spec[96];

	if (event_of(b))
		return two_events(b, ke->name);
	b->ke = ke;
	if (t4_format_apply(ev, ke->config, b->cfg) < 0)
		return t4_err(EINVAL, "%s: the catalog's event=0x%llx does not fit %s's event field "
			      "(%s)", ke->name, (unsigned long long)ke->config, pmu->name,
			      t4_format_str(ev, spec, sizeof(spec)));
	/* the spec says what is programmed: sysfs has no such name */
	snprintf(b->canon, sizeof(b->canon), "event=0x%llx", (unsigned long long)ke->config);
	return 0;
}

static int apply_alias(const struct t4_pmu *pmu, struct build *b, const struct t4_alias *a)
{
	char buf[sizeof(a->terms)];
	struct term t[TERMS_MAX];
	int n;

	if (event_of(b))
		return two_events(b, a->name);
	b->alias = a;
	ev_copy_str(buf, sizeof(buf), a->terms);
	n = split_terms(buf, a->terms, t, TERMS_MAX);
	if (n < 0)
		return t4_err(EINVAL, "%s/events/%s: %s", pmu->name, a->name, t4_errmsg());
	for (int i = 0; i < n; i++) {
		int rc;
		if (!t[i].val) /* alias files hold name=value pairs only */
			return t4_err(EINVAL, "%s/events/%s: '%s' is not name=value",
				      pmu->name, a->name, t[i].name);
		if ((rc = apply_term(pmu, b, &t[i], false)) < 0)
			return t4_err(EINVAL, "%s/events/%s: %s", pmu->name, a->name, t4_errmsg());
	}
	if (!t4_events_quote(b->canon, sizeof(b->canon), a->name))
		return t4_err(EINVAL, "%s/events/%s: name too long", pmu->name, a->name);
	return 0;
}

/* The PCIE rules the kernel enforces: root-port and BDF filters are
 * mutually exclusive; one BDF filter per PMU. */
static int check_pcie(struct ev_ctx *cx, const struct t4_evlist *l, const struct t4_pmu *pmu,
		      const struct build *b, const char *spec)
{
	const struct t4_format *rp = t4_pmu_format(pmu, "src_rp_mask");
	const struct t4_format *bdf = t4_pmu_format(pmu, "src_bdf");
	const struct t4_format *en = t4_pmu_format(pmu, "src_bdf_en");
	const struct t4_evlist *lists[2] = { l, &cx->tmp };
	uint64_t cfg[3];

	if (!pmu->kind || pmu->kind->id != T4_DOM_PCIE || !rp || !bdf || !en)
		return 0;
	if (user_set(b, rp) && (user_set(b, bdf) || user_set(b, en)))
		return t4_err(EINVAL, "%s: src_rp_mask cannot be combined with src_bdf/src_bdf_en "
			      "(root-port and BDF filters are mutually exclusive; the kernel "
			      "answers EINVAL)", spec);
	if (!ev_format_extract(en, b->cfg))
		return 0;
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < lists[k]->n; i++) {
			const struct t4_counter *c = &lists[k]->v[i];
			memcpy(cfg, (uint64_t[3]){ c->config, c->config1, c->config2 }, sizeof(cfg));
			if (c->pmu != pmu || !ev_format_extract(en, cfg))
				continue;
			if (ev_format_extract(bdf, cfg) != ev_format_extract(bdf, b->cfg))
				return t4_err(EINVAL, "%s: %s already counts BDF 0x%llx; a PCIE PMU "
					      "has one BDF filter for all its counters", spec,
					      pmu->name, (unsigned long long)ev_format_extract(bdf, cfg));
		}
	}
	return 0;
}

static bool is_clock(const struct t4_pmu *pmu, const struct build *b)
{
	const struct t4_kind_event *ke;
	const struct t4_format *ev;

	if (!pmu->kind)
		return false;
	if (b->alias)
		return !strcmp(b->alias->name, pmu->kind->clock_event);
	ke = t4_kind_event(pmu->kind, pmu->kind->clock_event);
	ev = t4_pmu_format(pmu, "event");
	if (!ke || !ev)
		return false;
	return ev_format_extract(ev, b->cfg) == ke->config;
}

/* The unit of the counts: the alias's (its .unit file or the catalog's),
 * else the Tegra410 catalog's for the event the `event` field selects,
 * else unknown (""). */
static const char *unit_of(const struct t4_pmu *pmu, const struct build *b)
{
	const struct t4_format *ev = t4_pmu_format(pmu, "event");
	const struct t4_kind_event *ke;

	if (b->alias && t4_alias_unit(pmu, b->alias)[0])
		return t4_alias_unit(pmu, b->alias);
	if (!pmu->kind || !ev)
		return "";
	ke = t4_kind_event_by_config(pmu->kind, ev_format_extract(ev, b->cfg));
	return ke ? ke->unit : "";
}

/* Whether a term is an event's name on pmu: a bare alias or catalog name. */
static bool is_event_term(const struct t4_pmu *pmu, const struct term *t)
{
	return !t->val && (t4_pmu_alias(pmu, t->name) || catalog_event(pmu, t->name));
}

/* An event name's encoding: the catalog's where t4_catalog_event says so
 * or when asked (the alias check's alternative), else its sysfs alias. */
static int apply_event(const struct t4_pmu *pmu, struct build *b, const char *name, bool catalog)
{
	const struct t4_kind_event *ke = catalog ? catalog_event(pmu, name)
						 : t4_catalog_event(pmu, name);

	return ke ? apply_catalog(pmu, b, ke) : apply_alias(pmu, b, t4_pmu_alias(pmu, name));
}

/* The generic driver writes config1/config2 to the filter registers as
 * they are (0 meaning all-ones): unless the user set them, they get what
 * the Tegra410 driver would write. */
static void apply_generic_filters(const struct t4_pmu *pmu, struct build *b)
{
	static const char *const fields[] = { "event", "filter", "filter2" };
	uint64_t def[3] = { 0, 0, 0 };

	if (!pmu->kind || pmu->naming != T4_NAMING_GENERIC)
		return;
	def[T4_CFG1] = pmu->kind->generic_config1;
	def[T4_CFG2] = pmu->kind->generic_config2;
	for (int w = T4_CFG1; w <= T4_CFG2; w++) {
		const struct t4_format *f = t4_pmu_format(pmu, fields[w]);

		if (!f || !def[w] || f->field != w || (b->seen_raw & (1u << w)) || user_set(b, f))
			continue;
		(void)t4_format_apply(f, def[w], b->cfg); /* 12 bits into 32: fits */
	}
}

/* b from split terms: event names first, then the user's terms in order
 * (each overrides what came before, as in perf). */
static int build_terms(const struct t4_pmu *pmu, const struct term *t, int n, bool catalog,
		       struct build *b)
{
	int rc;

	memset(b, 0, sizeof(*b));
	for (int i = 0; i < n; i++)
		if (is_event_term(pmu, &t[i]) && (rc = apply_event(pmu, b, t[i].name, catalog)) < 0)
			return rc;
	for (int i = 0; i < n; i++) {
		if (is_event_term(pmu, &t[i]))
			continue;
		if (!t[i].val && raw_index(t[i].name) < 0 && !t4_pmu_format(pmu, t[i].name))
			return unknown_event(pmu, t[i].name);
		if ((rc = apply_term(pmu, b, &t[i], true)) < 0)
			return rc;
	}
	apply_generic_filters(pmu, b);
	return 0;
}

/* An alias that encodes its event otherwise than the catalog: the
 * catalog's encoding (the same terms with the catalog's id) into c, for
 * the record-time alias check (t4_events_check_aliases). */
static void note_catalog_encoding(const struct t4_pmu *pmu, const struct term *t, int n,
				  const struct build *b, struct t4_counter *c)
{
	struct build alt;

	if (!b->alias || !catalog_event(pmu, b->alias->name) ||
	    build_terms(pmu, t, n, true, &alt) < 0 || !memcmp(alt.cfg, b->cfg, sizeof(alt.cfg)))
		return;
	c->check_alias = true;
	memcpy(c->catalog_config, alt.cfg, sizeof(alt.cfg));
}

/* Build the counter(s) of pmu/terms/ for one PMU. */
int ev_build_one(struct ev_ctx *cx, const struct t4_evlist *l, const struct t4_pmu *pmu,
		 const char *terms)
{
	char buf[T4_SPEC_MAX * 2], spec[T4_SPEC_MAX + 2 * T4_NAME_MAX + 4], q[2 * T4_NAME_MAX + 2];
	struct term t[TERMS_MAX];
	struct build b;
	struct t4_counter c = { 0 };
	int n, rc;

	if (strlen(terms) >= sizeof(buf))
		return t4_err(EINVAL, "%s/%.40s.../: event string too long", pmu->name, terms);
	strcpy(buf, terms);
	n = split_terms(buf, terms, t, TERMS_MAX);
	if (n < 0)
		return n;
	if ((rc = build_terms(pmu, t, n, false, &b)) < 0)
		return rc;
	if (!t4_events_quote(q, sizeof(q), pmu->name) ||
	    snprintf(spec, sizeof(spec), "%s/%s/", q, b.canon) >= T4_SPEC_MAX)
		return t4_err(EINVAL, "%s/%s/: event string too long", pmu->name, terms);
	if ((rc = check_pcie(cx, l, pmu, &b, spec)) < 0)
		return rc;
	c.pmu = pmu;
	ev_copy_str(c.spec, sizeof(c.spec), spec);
	ev_copy_str(c.name, sizeof(c.name), b.user_name ? b.name : event_of(&b) ? event_of(&b) : b.canon);
	c.type = pmu->type;
	c.config = b.cfg[0];
	c.config1 = b.cfg[1];
	c.config2 = b.cfg[2];
	c.scale = b.alias ? b.alias->scale : 1.0;
	ev_copy_str(c.unit, sizeof(c.unit), unit_of(pmu, &b));
	c.is_clock = is_clock(pmu, &b);
	note_catalog_encoding(pmu, t, n, &b, &c);
	return ev_push_per_cpu(cx, &c);
}
