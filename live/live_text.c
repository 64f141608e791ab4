/* live_text.c - a snapshot as text, and back: what `top` reads through the
 * control socket.
 *
 *   t410trace-live 2
 *   now_ns N / host S / simulated 0|1 / ref_clock N / period_ns N /
 *   triggers N / overruns N / dropped N / read_failures N / cpu_ns N /
 *   phase S / phase_set_ns N / domains N          (one key per line)
 *   domain ID KIND CPU FIRST_NS LAST_NS RETS N_EVENTS NAME PMU
 *   event FLAGS TOTAL NAME UNIT                    (N_EVENTS of them)
 *   end
 *
 * Fields are separated by one tab. A string S is escaped so that the text
 * is plain ASCII and any name survives: \\ \t \n, and every other byte
 * below 0x20 or from 0x7f as \xNN. The parser takes exactly this and
 * nothing else (a version it does not know, a line out of place, a number
 * that is not one: -EPROTO naming the line), with bounds on every count.
 */
#include "live.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define LIVE_VERSION 2 /* 2: a domain's FIRST_NS */
#define LIVE_MAX_DOMAINS 65536u

/* ---- writing --------------------------------------------------------------- */

struct tbuf {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void tb_put(struct tbuf *t, const char *s, size_t n)
{
	if (t->oom)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 4096;
		while (cap < t->len + n + 1)
			cap *= 2;
		char *b = realloc(t->buf, cap);
		if (!b) {
			t->oom = true;
			return;
		}
		t->buf = b;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

static void tb_printf(struct tbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_printf(struct tbuf *t, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	tb_put(t, line, n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void tb_str(struct tbuf *t, const char *s)
{
	char esc[5];

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\')
			tb_put(t, "\\\\", 2);
		else if (*p == '\t')
			tb_put(t, "\\t", 2);
		else if (*p == '\n')
			tb_put(t, "\\n", 2);
		else if (*p < 0x20 || *p >= 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
			tb_put(t, esc, 4);
		} else {
			tb_put(t, (const char *)p, 1);
		}
	}
}

static void tb_key_u64(struct tbuf *t, const char *key, uint64_t v)
{
	tb_printf(t, "%s\t%" PRIu64 "\n", key, v);
}

static void tb_key_str(struct tbuf *t, const char *key, const char *v)
{
	tb_printf(t, "%s\t", key);
	tb_str(t, v);
	tb_put(t, "\n", 1);
}

int t4_live_snap_text(const struct t4_live_snap *s, char **buf, size_t *len)
{
	struct tbuf t = { 0 };

	tb_printf(&t, "t410trace-live\t%d\n", LIVE_VERSION);
	tb_key_u64(&t, "now_ns", s->now_ns);
	tb_key_str(&t, "host", s->host);
	tb_key_u64(&t, "simulated", s->simulated);
	tb_key_u64(&t, "ref_clock", s->ref_clock);
	tb_key_u64(&t, "period_ns", s->period_ns);
	tb_key_u64(&t, "triggers", s->triggers);
	tb_key_u64(&t, "overruns", s->overruns);
	tb_key_u64(&t, "dropped", s->dropped);
	tb_key_u64(&t, "read_failures", s->read_failures);
	tb_key_u64(&t, "cpu_ns", s->cpu_ns);
	tb_key_str(&t, "phase", s->phase);
	tb_key_u64(&t, "phase_set_ns", s->phase_set_ns);
	tb_key_u64(&t, "domains", s->n_domains);
	for (size_t i = 0; i < s->n_domains; i++) {
		const struct t4_live_domain *d = &s->doms[i];
		tb_printf(&t, "domain\t%u\t%u\t%d\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%u\t",
			  d->id, d->kind, d->cpu, d->first_ns, d->last_ns, d->rets, d->n_events);
		tb_str(&t, d->name);
		tb_put(&t, "\t", 1);
		tb_str(&t, d->pmu);
		tb_put(&t, "\n", 1);
		for (uint32_t k = 0; k < d->n_events; k++) {
			tb_printf(&t, "event\t%u\t%" PRIu64 "\t", d->ev[k].flags, d->ev[k].total);
			tb_str(&t, d->ev[k].name);
			tb_put(&t, "\t", 1);
			tb_str(&t, d->ev[k].unit);
			tb_put(&t, "\n", 1);
		}
	}
	tb_put(&t, "end\n", 4);
	if (t.oom) {
		free(t.buf);
		return t4_err(ENOMEM, "out of memory");
	}
	*buf = t.buf;
	*len = t.len;
	return 0;
}

/* ---- parsing ----------------------------------------------------------------- */

struct parser {
	const char *p, *end;
	unsigned line;
	char *f[10];     /* the current line's fields (in buf) */
	size_t n;
	char buf[1024];
};

static int bad(const struct parser *ps, const char *why)
{
	return t4_err(EPROTO, "live snapshot, line %u: %s", ps->line, why);
}

/* The next line, split at tabs; false at the end of the text. */
static bool next_line(struct parser *ps)
{
	const char *nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
	size_t len;

	if (ps->p >= ps->end || !nl)
		return false;
	len = (size_t)(nl - ps->p);
	ps->line++;
	ps->n = 0;
	if (len >= sizeof(ps->buf)) {
		ps->buf[0] = '\0'; /* too long: no fields, the caller refuses it */
		ps->p = nl + 1;
		return true;
	}
	memcpy(ps->buf, ps->p, len);
	ps->buf[len] = '\0';
	ps->p = nl + 1;
	for (char *s = ps->buf; ps->n < T4_ARRAY_LEN(ps->f);) {
		ps->f[ps->n++] = s;
		char *tab = strchr(s, '\t');
		if (!tab)
			break;
		*tab = '\0';
		s = tab + 1;
	}
	return true;
}

static bool num(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

static bool inum(const char *s, int32_t *v)
{
	char *end;
	long x;

	if (!*s)
		return false;
	errno = 0;
	x = strtol(s, &end, 10);
	if (errno || *end || x < INT32_MIN || x > INT32_MAX)
		return false;
	*v = (int32_t)x;
	return true;
}

/* Unescape s into dst (cap bytes with the NUL); false if malformed or long. */
static bool unescape(const char *s, char *dst, size_t cap)
{
	size_t n = 0;

	for (; *s; s++) {
		char c = *s;
		if (c == '\\') {
			s++;
			if (*s == '\\' || *s == 't' || *s == 'n') {
				c = *s == 't' ? '\t' : *s == 'n' ? '\n' : '\\';
			} else if (*s == 'x' && s[1] && s[2]) {
				char hex[3] = { s[1], s[2], 0 }, *end;
				unsigned long v = strtoul(hex, &end, 16);
				if (*end || !v)
					return false;
				c = (char)v;
				s += 2;
			} else {
				return false;
			}
		} else if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f) {
			return false;
		}
		if (n + 1 >= cap)
			return false;
		dst[n++] = c;
	}
	dst[n] = '\0';
	return true;
}

/* "key<TAB>value" lines of the header, in order. */
static int head_line(struct parser *ps, const char *key, uint64_t *v, char *str, size_t cap)
{
	if (!next_line(ps) || ps->n != 2 || strcmp(ps->f[0], key))
		return bad(ps, key);
	if (str ? !unescape(ps->f[1], str, cap) : !num(ps->f[1], v))
		return bad(ps, key);
	return 0;
}

static int parse_domain(struct parser *ps, struct t4_live_domain *d)
{
	uint64_t id, kind, first, last, rets, n;
	int32_t cpu;

	if (!next_line(ps) || ps->n != 10 || strcmp(ps->f[0], "domain") || !num(ps->f[1], &id) ||
	    id > UINT32_MAX || !num(ps->f[2], &kind) || kind > UINT32_MAX || !inum(ps->f[3], &cpu) ||
	    !num(ps->f[4], &first) || !num(ps->f[5], &last) || first > last ||
	    !num(ps->f[6], &rets) || !num(ps->f[7], &n) || n > T4_MAX_COUNTERS ||
	    !unescape(ps->f[8], d->name, sizeof(d->name)) ||
	    !unescape(ps->f[9], d->pmu, sizeof(d->pmu)))
		return bad(ps, "a domain line");
	d->id = (uint32_t)id;
	d->kind = (uint32_t)kind;
	d->cpu = cpu;
	d->first_ns = first;
	d->last_ns = last;
	d->rets = rets;
	d->n_events = (uint32_t)n;
	for (uint32_t k = 0; k < d->n_events; k++) {
		struct t4_live_event *e = &d->ev[k];
		uint64_t flags;
		if (!next_line(ps) || ps->n != 5 || strcmp(ps->f[0], "event") ||
		    !num(ps->f[1], &flags) || flags > UINT32_MAX || !num(ps->f[2], &e->total) ||
		    !unescape(ps->f[3], e->name, sizeof(e->name)) ||
		    !unescape(ps->f[4], e->unit, sizeof(e->unit)))
			return bad(ps, "an event line");
		e->flags = (uint32_t)flags;
	}
	return 0;
}

int t4_live_snap_parse(const char *text, size_t len, struct t4_live_snap *out)
{
	struct parser *ps = calloc(1, sizeof(*ps));
	uint64_t v, ndom, sim, ref;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!ps)
		return t4_err(ENOMEM, "out of memory");
	ps->p = text;
	ps->end = text + len;
	if (!next_line(ps) || ps->n != 2 || strcmp(ps->f[0], "t410trace-live") || !num(ps->f[1], &v)) {
		rc = bad(ps, "not a t410trace live snapshot");
		goto out;
	}
	if (v != LIVE_VERSION) {
		rc = bad(ps, "a snapshot version this t410trace does not know");
		goto out;
	}
	if ((rc = head_line(ps, "now_ns", &out->now_ns, NULL, 0)) < 0 ||
	    (rc = head_line(ps, "host", NULL, out->host, sizeof(out->host))) < 0 ||
	    (rc = head_line(ps, "simulated", &sim, NULL, 0)) < 0 ||
	    (rc = head_line(ps, "ref_clock", &ref, NULL, 0)) < 0 ||
	    (rc = head_line(ps, "period_ns", &out->period_ns, NULL, 0)) < 0 ||
	    (rc = head_line(ps, "triggers", &out->triggers, NULL, 0)) < 0 ||
	    (rc = head_line(ps, "overruns", &out->overruns, NULL, 0)) < 0 ||
	    (rc = head_line(ps, "dropped", &out->dropped, NULL, 0)) < 0 ||
	    (rc = head_line(ps, "read_failures", &out->read_failures, NULL, 0)) < 0 ||
	    (rc = head_line(ps, "cpu_ns", &out->cpu_ns, NULL, 0)) < 0 ||
	    (rc = head_line(ps, "phase", NULL, out->phase, sizeof(out->phase))) < 0 ||
	    (rc = head_line(ps, "phase_set_ns", &out->phase_set_ns, NULL, 0)) < 0 ||
	    (rc = head_line(ps, "domains", &ndom, NULL, 0)) < 0)
		goto out;
	out->simulated = sim != 0;
	out->ref_clock = (uint32_t)ref;
	if (ndom > LIVE_MAX_DOMAINS) {
		rc = bad(ps, "more domains than any recording has");
		goto out;
	}
	if (ndom && !(out->doms = calloc((size_t)ndom, sizeof(*out->doms)))) {
		rc = t4_err(ENOMEM, "out of memory");
		goto out;
	}
	for (out->n_domains = 0; out->n_domains < ndom; out->n_domains++)
		if ((rc = parse_domain(ps, &out->doms[out->n_domains])) < 0)
			goto out;
	if (!next_line(ps) || ps->n != 1 || strcmp(ps->f[0], "end"))
		rc = bad(ps, "no end line");
out:
	free(ps);
	if (rc < 0)
		t4_live_snap_free(out);
	return rc;
}
