/* parse.c - numbers, durations and human-readable formatting. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int t4_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	/* a digit first: strtoull skips any blank (a tab, a line break) and
	 * then takes a sign, so "\t-1" would be 2^64 - 1 */
	if (!s || !isdigit((unsigned char)*s))
		return t4_err(EINVAL, "'%s': not a number", s ? s : "");
	errno = 0; /* decimal or 0x hex, as event terms: "010" is 10, not 8 */
	v = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
	if (errno == ERANGE)
		return t4_err(ERANGE, "'%s': too large for 64 bits", s);
	if (*end)
		return t4_err(EINVAL, "'%s': not a number", s);
	*out = v;
	return 0;
}

int t4_parse_decimal(const char *s, uint64_t *out)
{
	if (!s || strspn(s, "0123456789") != strlen(s))
		return t4_err(EINVAL, "'%s': not a decimal number", s ? s : "");
	return t4_parse_u64(s, out);
}

static const struct {
	const char *suffix;
	double ns;
} duration_units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	{ "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
};

/* A duration of at least min_ns: 1 ns for a period or a length, 0 for an
 * offset, whose zero is a time (the first trigger). */
static int parse_duration(const char *s, double min_ns, uint64_t *ns_out)
{
	char *end;
	double v;

	/* a digit or a point first: strtod skips blanks, takes a sign, "inf";
	 * and decimal: strtod reads "0x10s" as 16 s, and "0x1p3s" */
	if (!s || (!isdigit((unsigned char)*s) && *s != '.') ||
	    (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		return t4_err(EINVAL, "'%s': not a duration (use e.g. 1ms, 100us, 2s, 5m)", s ? s : "");
	errno = 0;
	v = strtod(s, &end); /* overflow: HUGE_VAL, out of range below; underflow: ~0 */
	if (end == s || (errno && errno != ERANGE) || isnan(v))
		return t4_err(EINVAL, "'%s': not a duration (use e.g. 1ms, 100us, 2s, 5m)", s);
	for (size_t i = 0; i < T4_ARRAY_LEN(duration_units); i++) {
		if (strcmp(end, duration_units[i].suffix) != 0)
			continue;
		double ns = v * duration_units[i].ns;
		if (ns < min_ns)
			return t4_err(ERANGE, "'%s': duration out of range (under 1ns)", s);
		if (ns > 1e18)
			return t4_err(ERANGE, "'%s': duration out of range (at most 1e18ns, "
				      "277777h)", s);
		*ns_out = (uint64_t)llround(ns);
		return 0;
	}
	if (!*end)
		return t4_err(EINVAL, "'%s': duration needs a unit (" T4_DURATION_UNITS ")", s);
	return t4_err(EINVAL, "'%s': unknown unit '%s' (use " T4_DURATION_UNITS ")", s, end);
}

int t4_parse_duration(const char *s, uint64_t *ns_out)
{
	return parse_duration(s, 1, ns_out);
}

int t4_parse_offset(const char *s, uint64_t *ns_out)
{
	return parse_duration(s, 0, ns_out);
}

/* v in a unit, with 3 significant digits (no exponent: "999ms", not
 * "1e+03ms"), or the exact integer when it is one. */
static void fmt_in_unit(char *buf, size_t cap, uint64_t ns, uint64_t unit, const char *name)
{
	double v = (double)ns / (double)unit;

	char num[32];
	size_t n;

	if (ns % unit == 0) {
		snprintf(buf, cap, "%llu%s", (unsigned long long)(ns / unit), name);
		return;
	}
	n = (size_t)snprintf(num, sizeof(num), v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
	while (n > 1 && strchr(num, '.') && (num[n - 1] == '0' || num[n - 1] == '.'))
		num[--n] = '\0'; /* 9.50 -> 9.5, 2.00 -> 2 */
	snprintf(buf, cap, "%s%s", num, name);
}

const char *t4_fmt_duration(uint64_t ns, char *buf, size_t cap)
{
	if (ns >= 1000000000ull)
		fmt_in_unit(buf, cap, ns, 1000000000ull, "s");
	else if (ns >= 1000000)
		fmt_in_unit(buf, cap, ns, 1000000, "ms");
	else if (ns >= 1000)
		fmt_in_unit(buf, cap, ns, 1000, "us");
	else
		snprintf(buf, cap, "%lluns", (unsigned long long)ns);
	return buf;
}

const char *t4_fmt_bytes(uint64_t bytes, char *buf, size_t cap)
{
	static const char *units[] = { "B", "kB", "MB", "GB", "TB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1000 && u + 1 < T4_ARRAY_LEN(units)) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, cap, "%.1f %s", v, units[u]);
	return buf;
}

/* Far above any kernel's NR_CPUS; bounds CPU numbers and the count so
 * that neither overflows an int. */
#define CPU_MAX 65535

/* Walk a CPU list, calling each(lo, hi, ud) per range; 0 or a negative
 * errno (malformed list, message set). */
static int cpulist_walk(const char *list, void (*each)(long lo, long hi, void *ud), void *ud)
{
	const char *p = list;
	long count = 0;

	while (*p) {
		char *end;
		const char *hi_at = p; /* the larger number as written */
		long lo, hi;

		if (!isdigit((unsigned char)*p)) /* no sign, blank or empty item */
			return t4_err(EINVAL, "'%s': malformed CPU list", list);
		lo = hi = strtol(p, &end, 10);
		p = end;
		if (*p == '-') {
			hi_at = p + 1;
			if (!isdigit((unsigned char)*hi_at) || (hi = strtol(hi_at, &end, 10)) < lo)
				return t4_err(EINVAL, "'%s': malformed CPU list", list);
			p = end;
		}
		if (hi > CPU_MAX) /* as written: strtol stops at LONG_MAX */
			return t4_err(EINVAL, "'%s': CPU %.*s above %d", list, (int)(p - hi_at), hi_at,
				      CPU_MAX);
		if (count + (hi - lo + 1) > CPU_MAX + 1)
			return t4_err(EINVAL, "'%s': more than %d CPUs", list, CPU_MAX + 1);
		count += hi - lo + 1;
		each(lo, hi, ud);
		if (*p == ',' && !isdigit((unsigned char)p[1]))
			return t4_err(EINVAL, "'%s': malformed CPU list", list);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return t4_err(EINVAL, "'%s': malformed CPU list", list);
		else if (*p == '\n')
			break;
	}
	if (!count)
		return t4_err(EINVAL, "'%s': empty CPU list", list);
	return 0;
}

struct first_cpu {
	long first;
	long count;                          /* distinct CPUs: "0,0" is one */
	uint64_t seen[(CPU_MAX + 1) / 64];
};

static void note_first(long lo, long hi, void *ud)
{
	struct first_cpu *f = ud;

	if (f->first < 0)
		f->first = lo;
	for (long c = lo; c <= hi; c++) {
		uint64_t bit = 1ull << (c % 64);
		f->count += !(f->seen[c / 64] & bit);
		f->seen[c / 64] |= bit;
	}
}

int t4_cpulist_first(const char *list, int *count_out)
{
	struct first_cpu f = { .first = -1 };
	int rc = cpulist_walk(list, note_first, &f);

	if (rc < 0)
		return rc;
	if (count_out)
		*count_out = (int)f.count;
	return (int)f.first;
}

struct has_cpu {
	long cpu;
	bool found;
};

static void note_has(long lo, long hi, void *ud)
{
	struct has_cpu *h = ud;

	h->found |= h->cpu >= lo && h->cpu <= hi;
}

int t4_cpulist_has(const char *list, int cpu)
{
	struct has_cpu h = { cpu, false };
	int rc = cpulist_walk(list, note_has, &h);

	return rc < 0 ? rc : h.found;
}

struct absent_cpu {
	const char *have;
	long first; /* -1: every CPU so far is in have */
};

/* The lowest CPU of a range that have lacks: ranges come in the order
 * written, so the smallest missing one over all of them is kept. */
static void note_absent(long lo, long hi, void *ud)
{
	struct absent_cpu *a = ud;

	for (long c = lo; c <= hi && (a->first < 0 || c < a->first); c++)
		if (t4_cpulist_has(a->have, (int)c) != 1) {
			a->first = c;
			return;
		}
}

int t4_cpulist_first_absent(const char *want, const char *have, int *absent)
{
	struct absent_cpu a = { have, -1 };
	int rc = t4_cpulist_first(have, NULL);

	if (rc >= 0)
		rc = cpulist_walk(want, note_absent, &a);
	if (rc < 0)
		return rc;
	*absent = (int)a.first;
	return 0;
}

size_t t4_strlcpy(char *dst, const char *src, size_t cap)
{
	size_t len = strlen(src);

	if (cap) {
		size_t n = len < cap - 1 ? len : cap - 1;
		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}
