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
#include "../util/util.h"

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
	const struct t4_alias *alias;
	bool user_name;
	uint32_t seen;	 /* formats set by the user (bit per format index) */
	uint8_t seen_raw; /* config/config1/config2 set by the user */
};

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

static const char *alias_name_at(const void *src, size_t i)
{
	return ((const struct t4_pmu *)src)->aliases[i].name;
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

/* Split "a=1,b,c=0x2" in place (buf is modified). */
static int split_terms(char *buf, const char *what, struct term *t, int max)
{
	int n = 0;

	for (char *p = buf; p;) {
		char *comma = strchr(p, ','), *eq;
		if (comma)
			*comma = '\0';
		if (!*p)
			return t4_err(EINVAL, "%s: empty term", what);
		if (n == max)
			return t4_err(EINVAL, "%s: more than %d terms", what, max);
		eq = strchr(p, '=');
		ev_copy_str(t[n].text, sizeof(t[n].text), p);
		t[n].name = p;
		t[n].val = NULL;
		if (eq) {
			*eq = '\0';
			t[n].val = eq + 1;
		}
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

	if (t4_suggest(name, pmu, pmu->n_aliases, alias_name_at))
		return t4_err(EINVAL, "%s: unknown event for %s%s", name, pmu->name,
			      t4_did_you_mean(h, sizeof(h), t4_suggest(name, pmu, pmu->n_aliases, alias_name_at)));
	for (size_t i = 0; i < pmu->n_aliases; i++)
		ev_catf(list, sizeof(list), "%s%s", i ? ", " : "", pmu->aliases[i].name);
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
	char spec[96];
	uint64_t v = 1;
	int ri;

	if (t->val && !strcmp(t->name, "name") && from_user) {
		if (!*t->val || strlen(t->val) >= sizeof(b->name))
			return t4_err(EINVAL, "%s: name must have 1 to %d characters", t->text,
				      T4_NAME_MAX - 1);
		ev_copy_str(b->name, sizeof(b->name), t->val);
		b->user_name = true;
		return ev_catf(b->canon, sizeof(b->canon), "%sname=%s", b->canon[0] ? "," : "", t->val)
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
		uint32_t bit = f ? 1u << ((size_t)(f - pmu->formats) & 31) : 0;
		if ((f && (b->seen & bit)) || (ri >= 0 && (b->seen_raw & (1u << ri))))
			return t4_err(EINVAL, "%s: term given twice", t->text);
		b->seen |= bit;
		b->seen_raw |= ri >= 0 ? (uint8_t)(1u << ri) : 0;
		if (!ev_catf(b->canon, sizeof(b->canon), "%s%s=0x%llx", b->canon[0] ? "," : "",
			  t->name, (unsigned long long)v))
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

static int apply_alias(const struct t4_pmu *pmu, struct build *b, const struct t4_alias *a)
{
	char buf[sizeof(a->terms)];
	struct term t[TERMS_MAX];
	int n;

	if (b->alias)
		return t4_err(EINVAL, "%s: two events in one (%s and %s); list them separately",
			      a->name, b->alias->name, a->name);
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
	ev_copy_str(b->canon, sizeof(b->canon), a->name);
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

	if (!pmu->kind || pmu->kind->id != T4_DOM_PCIE || !rp || !bdf || !en ||
	    pmu->n_formats > 32)
		return 0;
	if ((b->seen & (1u << (rp - pmu->formats))) &&
	    (b->seen & ((1u << (bdf - pmu->formats)) | (1u << (en - pmu->formats)))))
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

/* Build the counter(s) of pmu/terms/ for one PMU. */
int ev_build_one(struct ev_ctx *cx, const struct t4_evlist *l, const struct t4_pmu *pmu,
		     const char *terms, const char *kind_name)
{
	char buf[T4_SPEC_MAX * 2], spec[T4_SPEC_MAX + T4_NAME_MAX + 4];
	struct term t[TERMS_MAX];
	struct build b = { 0 };
	struct t4_counter c = { 0 };
	int n, rc;

	if (strlen(terms) >= sizeof(buf))
		return t4_err(EINVAL, "%s/%.40s.../: event string too long", pmu->name, terms);
	strcpy(buf, terms);
	n = split_terms(buf, terms, t, TERMS_MAX);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) { /* aliases first */
		const struct t4_alias *a = t[i].val ? NULL : t4_pmu_alias(pmu, t[i].name);
		if (a && (rc = apply_alias(pmu, &b, a)) < 0)
			return rc;
	}
	for (int i = 0; i < n; i++) {
		if (!t[i].val && t4_pmu_alias(pmu, t[i].name))
			continue;
		if (!t[i].val && raw_index(t[i].name) < 0 && !t4_pmu_format(pmu, t[i].name))
			return unknown_event(pmu, t[i].name);
		if ((rc = apply_term(pmu, &b, &t[i], true)) < 0)
			return rc;
	}
	if (snprintf(spec, sizeof(spec), "%s/%s/", pmu->name, b.canon) >= T4_SPEC_MAX)
		return t4_err(EINVAL, "%s/%s/: event string too long", pmu->name, terms);
	if ((rc = check_pcie(cx, l, pmu, &b, spec)) < 0)
		return rc;
	c.pmu = pmu;
	ev_copy_str(c.spec, sizeof(c.spec), spec);
	ev_copy_str(c.name, sizeof(c.name),
		 b.user_name ? b.name : kind_name ? kind_name : b.alias ? b.alias->name : b.canon);
	c.type = pmu->type;
	c.config = b.cfg[0];
	c.config1 = b.cfg[1];
	c.config2 = b.cfg[2];
	c.scale = b.alias ? b.alias->scale : 1.0;
	ev_copy_str(c.unit, sizeof(c.unit), unit_of(pmu, &b));
	c.is_clock = is_clock(pmu, &b);
	return ev_push_per_cpu(cx, &c);
}

