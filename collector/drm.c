/* drm.c - DRM client usage stats: one /proc/<pid>/fdinfo/<fd> text, parsed
 * by the kernel's spec (Documentation/gpu/drm-usage-stats.rst, seed 003).
 *
 * One `key: value` pair per line; keys start with `drm-`; whitespace after
 * the colon is ignored; neither keys nor values hold whitespace, except
 * between a number and its optional unit. Known keys: drm-driver
 * (mandatory), drm-pdev, drm-client-id, and the keyed values of enum
 * t4_drm_key with their units (ns for engines; KiB, MiB and GiB for memory,
 * GiB as newer kernels write it). Everything else is ignored: the lines
 * every fdinfo has (pos:, flags:), driver-specific keys, keys of newer
 * specs.
 *
 * Robustness first, data never invented: a malformed line of a known key
 * (no number, an overflow, a unit the key does not take, a zero capacity,
 * a repeated key, a name with odd characters) is skipped and counted, and
 * the rest of the file still counts. A file without a valid drm-driver is
 * no DRM client's stats at all (-ENODATA), the message naming the file and
 * its first bad line. Allocation-free; one pass over the text: a file is
 * streamed through a 16 KB buffer, so one of any length up to
 * T4_DRM_FDINFO_MAX (1 MiB, far above the few KB drivers write) is read
 * whole; a longer one is refused (-EFBIG, the caller counts it).
 */
#include "collector.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

#define DRM_READ_BUF 16384 /* a file is read through this much stack */

enum units { U_NONE, U_NS, U_BYTES };

/* In matching order: a prefix that extends another comes first. */
static const struct key_def {
	struct t4_drm_keydef d;
	enum units units;
} key_defs[] = {
	{ { T4_DRM_CAPACITY, "drm-engine-capacity-", "capacity", "", true }, U_NONE },
	{ { T4_DRM_ENGINE, "drm-engine-", "engine", "ns", false }, U_NS },
	{ { T4_DRM_TOTAL_CYCLES, "drm-total-cycles-", "total-cycles", "", false }, U_NONE },
	{ { T4_DRM_CYCLES, "drm-cycles-", "cycles", "", false }, U_NONE },
	{ { T4_DRM_MEMORY, "drm-memory-", "memory", "bytes", true }, U_BYTES },
	{ { T4_DRM_RESIDENT, "drm-resident-", "resident", "bytes", true }, U_BYTES },
	{ { T4_DRM_TOTAL, "drm-total-", "total", "bytes", true }, U_BYTES },
	{ { T4_DRM_SHARED, "drm-shared-", "shared", "bytes", true }, U_BYTES },
	{ { T4_DRM_ACTIVE, "drm-active-", "active", "bytes", true }, U_BYTES },
	{ { T4_DRM_PURGEABLE, "drm-purgeable-", "purgeable", "bytes", true }, U_BYTES },
};

const struct t4_drm_keydef *t4_drm_keydef(enum t4_drm_key key)
{
	for (size_t i = 0; i < T4_ARRAY_LEN(key_defs); i++)
		if (key_defs[i].d.key == key)
			return &key_defs[i].d;
	return NULL;
}

/* ---- one line ------------------------------------------------------------ */

/* A piece of a line: not NUL-terminated. */
struct span {
	const char *p;
	size_t n;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool has_blank(struct span s)
{
	for (size_t i = 0; i < s.n; i++)
		if (is_blank(s.p[i]))
			return true;
	return false;
}

static bool starts(struct span s, const char *prefix)
{
	size_t n = strlen(prefix);

	return s.n >= n && !memcmp(s.p, prefix, n);
}

static bool equals(struct span s, const char *word)
{
	return s.n == strlen(word) && !memcmp(s.p, word, s.n);
}

/* The multiplier of a unit the key takes, 0 when it takes no such unit. */
static uint64_t unit_scale(struct span u, enum units units)
{
	if (u.n == 0)
		return 1;
	if (units == U_NS)
		return equals(u, "ns") ? 1 : 0;
	if (units != U_BYTES)
		return 0;
	if (equals(u, "KiB"))
		return 1ull << 10;
	if (equals(u, "MiB"))
		return 1ull << 20;
	return equals(u, "GiB") ? 1ull << 30 : 0;
}

/* "<uint>[ <unit>]" -> *out with the unit applied; NULL or why not. */
static const char *parse_number(struct span v, enum units units, uint64_t *out)
{
	uint64_t x = 0, scale;
	size_t i = 0;

	if (v.n == 0 || v.p[0] < '0' || v.p[0] > '9')
		return "not a number";
	for (; i < v.n && v.p[i] >= '0' && v.p[i] <= '9'; i++) {
		unsigned d = (unsigned)(v.p[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return "number too large";
		x = x * 10 + d;
	}
	while (i < v.n && is_blank(v.p[i]))
		i++;
	scale = unit_scale((struct span){ v.p + i, v.n - i }, units);
	if (!scale)
		return "a unit this key does not take";
	if (x > UINT64_MAX / scale)
		return "number too large";
	*out = x * scale;
	return NULL;
}

/* A <str> value into a fixed field: no whitespace, not empty, fits. */
static const char *copy_str(struct span v, char *dst, size_t cap)
{
	if (v.n == 0 || has_blank(v))
		return "a string value must be one word";
	if (v.n >= cap)
		return "value too long";
	memcpy(dst, v.p, v.n);
	dst[v.n] = '\0';
	return NULL;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

static const char *check_name(struct span n)
{
	if (n.n == 0)
		return "no engine or region name";
	if (n.n >= T4_DRM_NAME_MAX)
		return "engine or region name too long";
	for (size_t i = 0; i < n.n; i++)
		if (!name_char(n.p[i]))
			return "odd characters in an engine or region name";
	return NULL;
}

static const char *parse_keyed(struct t4_drm_info *in, const struct key_def *k,
			       struct span key, struct span v)
{
	struct span name = { key.p + strlen(k->d.prefix), key.n - strlen(k->d.prefix) };
	struct t4_drm_value *out;
	char buf[T4_DRM_NAME_MAX];
	const char *why = check_name(name);
	uint64_t x;

	if (why || (why = parse_number(v, k->units, &x)))
		return why;
	if (k->d.key == T4_DRM_CAPACITY && x == 0)
		return "zero capacity (the spec forbids it)";
	memcpy(buf, name.p, name.n);
	buf[name.n] = '\0';
	if (t4_drm_find(in, k->d.key, buf))
		return "repeated key";
	if (in->n == T4_DRM_MAX_VALUES)
		return "too many keys";
	out = &in->v[in->n++];
	out->key = (uint8_t)k->d.key;
	memcpy(out->name, buf, sizeof(buf));
	out->v = x;
	return NULL;
}

static const char *parse_client_id(struct t4_drm_info *in, struct span v)
{
	const char *why;

	if (in->has_client_id)
		return "repeated key";
	if ((why = parse_number(v, U_NONE, &in->client_id)))
		return why;
	in->has_client_id = true;
	return NULL;
}

static const char *parse_str_key(char *dst, size_t cap, struct span v)
{
	return dst[0] ? "repeated key" : copy_str(v, dst, cap);
}

/* One line (without its newline): NULL when taken or ignored, else why it
 * is malformed. */
static const char *parse_line(struct t4_drm_info *in, struct span l)
{
	const char *colon;
	struct span key, v;

	while (l.n > 0 && is_blank(l.p[l.n - 1]))
		l.n--;
	if (l.n == 0)
		return NULL;
	colon = memchr(l.p, ':', l.n);
	if (!colon)
		return "not a 'key: value' line";
	key = (struct span){ l.p, (size_t)(colon - l.p) };
	v = (struct span){ colon + 1, l.n - key.n - 1 };
	if (!starts(key, "drm-"))
		return NULL; /* not a DRM key: every fdinfo has pos:, flags:, ... */
	if (has_blank(key))
		return "whitespace in a key";
	while (v.n > 0 && is_blank(v.p[0])) {
		v.p++;
		v.n--;
	}
	if (equals(key, "drm-driver"))
		return parse_str_key(in->driver, sizeof(in->driver), v);
	if (equals(key, "drm-pdev"))
		return parse_str_key(in->pdev, sizeof(in->pdev), v);
	if (equals(key, "drm-client-id"))
		return parse_client_id(in, v);
	for (size_t i = 0; i < T4_ARRAY_LEN(key_defs); i++)
		if (starts(key, key_defs[i].d.prefix))
			return parse_keyed(in, &key_defs[i], key, v);
	return NULL; /* driver-specific or newer: ignored */
}

/* ---- a file ------------------------------------------------------------------ */

static void note_bad(struct t4_drm_info *in, const char *path, unsigned line,
		     struct span l, const char *why)
{
	if (in->bad_lines++ == 0)
		snprintf(in->first_bad, sizeof(in->first_bad), "%s:%u: %s: '%.*s'", path,
			 line, why, (int)(l.n > 48 ? 48 : l.n), l.p);
}

/* The end of a file: its drm-driver decides whether it was usage stats. */
static int finish(const struct t4_drm_info *in, const char *path)
{
	if (in->driver[0])
		return 0;
	if (in->bad_lines)
		return t4_err(ENODATA, "%s (and no valid drm-driver key: not DRM usage stats)",
			      in->first_bad);
	return t4_err(ENODATA, "%s: no drm-driver key: not DRM usage stats", path);
}

/* One line of the text (without its newline), numbered from 1. */
static void take_line(struct t4_drm_info *in, const char *path, unsigned line, struct span l)
{
	const char *why = parse_line(in, l);

	if (why)
		note_bad(in, path, line, l, why);
}

int t4_drm_parse(const char *text, const char *path, struct t4_drm_info *out)
{
	unsigned line = 0;

	memset(out, 0, sizeof(*out));
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		struct span l = { p, eol ? (size_t)(eol - p) : strlen(p) };

		take_line(out, path, ++line, l);
		p = eol ? eol + 1 : p + l.n;
	}
	return finish(out, path);
}

/* A file read in pieces of one buffer: its complete lines are parsed as
 * they come, the incomplete last one moved to the front. A line longer
 * than the buffer is skipped and judged at its end as parse_line would
 * judge it (a DRM key that long is malformed: "line too long"). */
struct reader {
	char buf[DRM_READ_BUF];
	size_t have;    /* bytes in buf */
	size_t total;   /* bytes read so far */
	unsigned line;  /* lines taken */
	bool skipping;  /* inside a line longer than buf: */
	bool long_drm, long_colon, long_text; /* a DRM key, a ':', not blanks only */
	char long_head[48]; /* its start, for the message */
	size_t long_n;
};

static void long_part(struct reader *r, struct span l)
{
	r->long_colon |= memchr(l.p, ':', l.n) != NULL;
	for (size_t i = 0; i < l.n && !r->long_text; i++)
		r->long_text = !is_blank(l.p[i]);
}

static void long_begin(struct reader *r)
{
	r->line++;
	r->skipping = true;
	r->long_drm = starts((struct span){ r->buf, r->have }, "drm-");
	r->long_colon = r->long_text = false;
	long_part(r, (struct span){ r->buf, r->have });
	r->long_n = sizeof(r->long_head);
	memcpy(r->long_head, r->buf, r->long_n);
	r->have = 0;
}

static void long_end(struct reader *r, struct t4_drm_info *in, const char *path)
{
	struct span head = { r->long_head, r->long_n };

	if (r->long_text && !r->long_colon)
		note_bad(in, path, r->line, head, "not a 'key: value' line");
	else if (r->long_drm)
		note_bad(in, path, r->line, head, "line too long");
	r->skipping = false;
}

/* Take every complete line of r->buf; at the end (eof) the rest too. */
static void take_lines(struct reader *r, struct t4_drm_info *in, const char *path, bool eof)
{
	size_t at = 0;

	for (;;) {
		const char *eol = memchr(r->buf + at, '\n', r->have - at);
		struct span l = { r->buf + at, eol ? (size_t)(eol - (r->buf + at)) : r->have - at };

		if (r->skipping) {
			long_part(r, l);
			at += l.n + (eol != NULL);
			if (eol || eof)
				long_end(r, in, path);
			if (!eol)
				break;
			continue;
		}
		if (!eol && (!eof || l.n == 0))
			break;
		take_line(in, path, ++r->line, l);
		at += l.n + (eol != NULL);
	}
	memmove(r->buf, r->buf + at, r->have - at);
	r->have -= at;
	if (r->have == sizeof(r->buf))
		long_begin(r);
}

/* Allocation-free and on the trigger path of the DRM domain, so the file
 * is streamed through a buffer rather than read whole (real files are a
 * few KB); one over T4_DRM_FDINFO_MAX is refused (-EFBIG). */
int t4_drm_read(const char *path, struct t4_drm_info *out)
{
	struct reader r; /* its buffer is not cleared: 16 KB per read for nothing */
	/* O_NONBLOCK: a FIFO planted in a --proc-root tree reads as empty
	 * instead of blocking the scanner for ever (procfs ignores it) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc = 0;

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return t4_err(errno, "%s: %s", path, strerror(errno));
	r.have = r.total = 0;
	r.line = 0;
	r.skipping = false;
	for (;;) {
		ssize_t n = read(fd, r.buf + r.have, sizeof(r.buf) - r.have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = t4_err(errno, "%s: %s", path, strerror(errno));
			break;
		}
		if ((r.total += (size_t)n) > T4_DRM_FDINFO_MAX) {
			rc = t4_err(EFBIG, "%s: over %u KiB: not read (usage stats are a few KB)",
				    path, T4_DRM_FDINFO_MAX >> 10);
			break;
		}
		if (memchr(r.buf + r.have, '\0', (size_t)n)) {
			rc = t4_err(EINVAL, "%s: contains a NUL byte", path);
			break;
		}
		r.have += (size_t)n;
		take_lines(&r, out, path, n == 0);
		if (n == 0)
			break;
	}
	close(fd);
	return rc < 0 ? rc : finish(out, path);
}

const struct t4_drm_value *t4_drm_find(const struct t4_drm_info *in,
				       enum t4_drm_key key, const char *name)
{
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].key == key && !strcmp(in->v[i].name, name))
			return &in->v[i];
	return NULL;
}

uint64_t t4_drm_capacity(const struct t4_drm_info *in, const char *engine)
{
	const struct t4_drm_value *c = t4_drm_find(in, T4_DRM_CAPACITY, engine);

	return c ? c->v : 1;
}
