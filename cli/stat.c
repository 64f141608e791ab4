/* stat.c - perf stat's one-step answer: every event's total over a log,
 * summed over the CPUs (and threads) that counted it, with its rate, as
 * `record` prints it when it ends; and the one line that says what the
 * counters count (a command's tasks, -p/-t's threads, or the system),
 * which `record` and `info` print.
 *
 * The rows are decode's (t4_event_rows_from_index, decode/totals.c: the
 * code the summary's EVENTS table uses), grouped by what they count: the
 * event packets' T4_EV_TASK / T4_EV_INHERIT flags. Totals are exact
 * integers (thousands grouped, as perf does), rates per second with an SI
 * prefix, a level (a DRM client's memory) as its mean over the span; a
 * task's time (ns) also as the CPUs it kept busy, perf stat's
 * "CPUs utilized" (never a CPU's: counted per CPU, cpu-clock runs idle or
 * busy).
 */
#include "cli.h"
#include "decode/decode.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

/* The scopes in the order they are printed. */
static const uint32_t scopes[] = { T4_EV_TASK | T4_EV_INHERIT, T4_EV_TASK, 0 };

static const char *scope_words(uint32_t scope)
{
	if (scope & T4_EV_INHERIT)
		return "the command's tasks, and every task they started, from its exec";
	if (scope & T4_EV_TASK)
		return "the threads of -p/-t";
	return "system-wide";
}

/* "1234567" -> "1,234,567" into buf. */
static const char *grouped(t4_u128 v, char *buf, size_t cap)
{
	char digits[48];
	size_t n = strlen(t4_u128_str(v, digits, sizeof(digits))), o = 0;

	for (size_t i = 0; i < n && o + 2 < cap; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* 1234.5 -> "1.235 K/s", 745e6 -> "745.0 M/s": four significant digits
 * always ('#' keeps the trailing zeros), so the column reads alike. */
static const char *per_second(double r, char *buf, size_t cap)
{
	static const char prefix[] = " KMGTPE";
	size_t p = 0;

	while (r >= 999.5 && p + 1 < sizeof(prefix) - 1) {
		r /= 1000;
		p++;
	}
	if (p)
		snprintf(buf, cap, "%#.4g %c/s", r, prefix[p]);
	else
		snprintf(buf, cap, "%#.4g /s", r);
	return buf;
}

/* The kinds of the events of one scope ("software, tracepoint"). */
static size_t scope_kinds(const struct t4_event_rows *rows, uint32_t scope, char *buf, size_t cap)
{
	size_t len = 0, n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < rows->n; i++) {
		const char *k = t4_domain_kind_name(rows->v[i].kind);
		bool seen = false;
		if (rows->v[i].scope != scope)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = rows->v[j].scope == scope && rows->v[j].kind == rows->v[i].kind;
		if (seen || len + strlen(k) + 3 >= cap)
			continue;
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", n++ ? ", " : "", k);
	}
	return n;
}

static void scope_line(const struct t4_event_rows *rows, char *buf, size_t cap)
{
	char kinds[256];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t s = 0; s < T4_ARRAY_LEN(scopes); s++)
		if (scope_kinds(rows, scopes[s], kinds, sizeof(kinds)) && len < cap)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s: %s", len ? "; " : "",
						scope_words(scopes[s]), kinds);
}

int cli_stat_scope(const struct t4_index *ix, char *buf, size_t cap)
{
	struct t4_event_rows rows = { 0 };
	int rc = t4_event_rows_from_index(ix, false, &rows);

	if (rc == 0)
		scope_line(&rows, buf, cap);
	t4_event_rows_free(&rows);
	return rc;
}

/* Column widths: the longest event and PMU names, as shown. */
struct widths {
	int event, pmu;
};

/* A row's names as the terminal shows them: a log's names may hold any
 * bytes (a name= or a crafted sysfs), escaped as every output does
 * (util/text.c). */
struct shown {
	char event[4 * T4_NAME_MAX], pmu[4 * T4_NAME_MAX], unit[4 * 32];
	const char *e, *p, *u;
};

static void show(const struct t4_event_row *row, struct shown *s)
{
	s->e = t4_text(row->event, T4_TEXT_CONTROL, s->event, sizeof(s->event));
	s->p = t4_text(row->pmu, T4_TEXT_CONTROL, s->pmu, sizeof(s->pmu));
	s->u = t4_text(row->unit, T4_TEXT_CONTROL, s->unit, sizeof(s->unit));
}

static void print_row(FILE *f, const struct t4_event_row *row, const struct widths *w)
{
	char tot[64], rate[32] = "-";
	double r = t4_event_row_rate(row);
	struct shown s;

	show(row, &s);
	if (row->gauge) /* a level (memory, capacity): the index keeps its last */
		snprintf(rate, sizeof(rate), "last level");
	else if (row->elapsed_ns)
		per_second(r, rate, sizeof(rate));
	fprintf(f, "  %26s %-10s %-*s  %-*s %12s",
		grouped(row->gauge ? (t4_u128)(r + 0.5) : row->total, tot, sizeof(tot)), s.u,
		w->event, s.e, w->pmu, s.p, rate);
	if ((row->scope & T4_EV_TASK) && !strcmp(row->unit, "ns") && row->elapsed_ns)
		fprintf(f, "  %.3f CPUs utilized", r / 1e9);
	fputc('\n', f);
}

int cli_stat_print(FILE *f, const struct t4_index *ix)
{
	struct t4_event_rows rows = { 0 };
	struct widths w = { 5, 3 };
	int rc = t4_event_rows_from_index(ix, false, &rows);

	if (rc < 0 || !rows.n) {
		t4_event_rows_free(&rows);
		return rc;
	}
	for (size_t i = 0; i < rows.n; i++) {
		struct shown s;

		show(&rows.v[i], &s);
		if ((int)strlen(s.e) > w.event)
			w.event = (int)strlen(s.e);
		if ((int)strlen(s.p) > w.pmu)
			w.pmu = (int)strlen(s.p);
	}
	fprintf(f, "t410trace: every event's total, summed over the CPUs and threads that "
		   "counted it (perf stat's view; `decode` gives the metrics):\n");
	fprintf(f, "  %26s %-10s %-*s  %-*s %12s\n", "TOTAL", "UNIT", w.event, "EVENT", w.pmu,
		"PMU", "PER SECOND");
	for (size_t s = 0; s < T4_ARRAY_LEN(scopes); s++) {
		bool header = false;
		for (size_t i = 0; i < rows.n; i++) {
			if (rows.v[i].scope != scopes[s])
				continue;
			if (!header)
				fprintf(f, " counting %s:\n", scope_words(scopes[s]));
			header = true;
			print_row(f, &rows.v[i], &w);
		}
	}
	t4_event_rows_free(&rows);
	return 0;
}
