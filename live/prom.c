/* prom.c - a live snapshot in Prometheus's text exposition format
 * (version 0.0.4), for `record --metrics-listen` (http.c).
 *
 * Series (every one labelled host; the PMU ones also socket, pmu, kind):
 *
 *   t410_info{host,version,simulated}                         1
 *   t410_phase_info{host,phase}                               1 (the bookmark in force)
 *   t410_triggers_total / t410_overruns_total /
 *   t410_dropped_packets_total / t410_read_failures_total     the recorder's health
 *   t410_pmu_bytes_total{...,direction,target}                byte counters
 *   t410_pmu_requests_total{...,direction,target}             request counters
 *   t410_pmu_cycles_total{...}                                each PMU's clock
 *   t410_pmu_events_total{...,event}                          any other counter
 *   t410_pmu_sampled_seconds_total{...}                       reference time its
 *                                                             samples span
 *   t410_pmu_latency_seconds{...,direction,target}            gauges over the last
 *   t410_pmu_frequency_hertz{...}                             interval (view.c)
 *   t410_host_events_total{host,pmu,event}                    host events summed
 *                                                             over the CPUs
 *
 * At most 7 labels a series. Totals are counters in base units (bytes,
 * requests, cycles): Prometheus makes the rates; latencies and frequencies
 * are gauges of the kind's formulas (the decoder's) over the interval
 * between the endpoint's two last snapshots. direction and target come
 * from the event's name (rd/read, wr/write; slc_, mem_, in_, out_); an
 * event whose family and labels another event of its PMU has too is an
 * "any other counter", with its name (event_family: one series, one
 * sample); a
 * label value is escaped as the format asks (\\ \") and control
 * characters and bytes that are not UTF-8 as \xNN text. Each family's
 * samples form one group (the format asks it): the PMU loop runs once per
 * family. For a two-socket Tegra410 (`--sim`, default events) that is 292
 * series (tests/test_metrics.c counts them; docs/PERFORMANCE.md).
 */
#include "live.h"
#include "collector/collector.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct pbuf {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct pbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16384;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *nb = realloc(b->buf, cap);
		if (!nb) {
			b->oom = true;
			return;
		}
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

static void putf(struct pbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct pbuf *b, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	put(b, line, n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* A label value: text.c's printable form (control characters and bad
 * bytes as \xNN text, so a scrape stays valid UTF-8 and one line), with
 * \\ and \" escaped as the format asks. */
static void value(struct pbuf *b, const char *s)
{
	char piece[5];

	while (*s) {
		s += t4_text_next(s, T4_TEXT_CONTROL, piece);
		for (const char *p = piece; *p; p++) {
			if (*p == '\\' || *p == '"')
				put(b, "\\", 1);
			put(b, p, 1);
		}
	}
}

/* label="value" pairs from a NULL-ended list of (name, value). */
static void labels(struct pbuf *b, const char *const *kv)
{
	put(b, "{", 1);
	for (size_t i = 0; kv[i]; i += 2) {
		if (!kv[i + 1])
			continue;
		if (i)
			put(b, ",", 1);
		putf(b, "%s=\"", kv[i]);
		value(b, kv[i + 1]);
		put(b, "\"", 1);
	}
	put(b, "}", 1);
}

/* The TYPE line of each family, once. */
struct family {
	const char *name, *type, *help;
	bool done;
};

static void type_line(struct pbuf *b, struct family *f)
{
	if (f->done)
		return;
	f->done = true;
	putf(b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
}

static void sample_u64(struct pbuf *b, struct family *f, const char *const *kv, uint64_t v)
{
	type_line(b, f);
	put(b, f->name, strlen(f->name));
	labels(b, kv);
	putf(b, " %" PRIu64 "\n", v);
}

static void sample_f64(struct pbuf *b, struct family *f, const char *const *kv, double v)
{
	if (!isfinite(v))
		return;
	type_line(b, f);
	put(b, f->name, strlen(f->name));
	labels(b, kv);
	putf(b, " %.9g\n", v);
}

enum {
	F_INFO, F_PHASE, F_TRIGGERS, F_OVERRUNS, F_DROPPED, F_FAILURES, F_BYTES, F_REQUESTS,
	F_CYCLES, F_EVENTS, F_SAMPLED, F_LATENCY, F_FREQ, F_HOST, F_N
};

static void init_families(struct family *f)
{
	const struct family all[F_N] = {
		{ "t410_info", "gauge", "the recording: t410trace's version, SIMULATED data" },
		{ "t410_phase_info", "gauge", "the bookmark in force (1)" },
		{ "t410_triggers_total", "counter", "triggers fired (reference packets)" },
		{ "t410_overruns_total", "counter", "triggers a scheduler woke too late for" },
		{ "t410_dropped_packets_total", "counter", "packets dropped at full rings (counts carried)" },
		{ "t410_read_failures_total", "counter", "counter reads that failed" },
		{ "t410_pmu_bytes_total", "counter", "bytes a PMU counted" },
		{ "t410_pmu_requests_total", "counter", "requests a PMU counted" },
		{ "t410_pmu_cycles_total", "counter", "cycles of a PMU's clock" },
		{ "t410_pmu_events_total", "counter", "any other count of a PMU event" },
		{ "t410_pmu_sampled_seconds_total", "counter", "reference time from the PMU's first "
		  "sample to its last: rate(bytes) / rate(this) is the bandwidth over exactly the "
		  "samples scraped" },
		{ "t410_pmu_latency_seconds", "gauge", "mean latency over the last interval" },
		{ "t410_pmu_frequency_hertz", "gauge", "clock frequency over the last interval" },
		{ "t410_host_events_total", "counter", "a host event summed over the CPUs" },
	};
	memcpy(f, all, sizeof(all));
}

/* direction and target of an event or metric name. */
static void dir_target(const char *name, const char **dir, const char **target)
{
	static const struct { const char *prefix, *target; } tg[] = {
		{ "slc_", "slc" }, { "mem_", "mem" }, { "in_", "in" }, { "out_", "out" },
	};

	*dir = strstr(name, "rd") || strstr(name, "read") ? "read"
	       : strstr(name, "wr") || strstr(name, "write") ? "write"
							     : NULL;
	*target = NULL;
	for (size_t i = 0; i < T4_ARRAY_LEN(tg); i++)
		if (!strncmp(name, tg[i].prefix, strlen(tg[i].prefix)))
			*target = tg[i].target;
}

static bool host_kind(uint32_t kind)
{
	return !t4_kind_by_id((enum t4_domain_kind)kind);
}

/* The family of event e's total by its unit: bytes, requests, cycles or
 * any other (F_N: a gauge, not a counter). */
static int unit_family(const struct t4_live_event *e)
{
	if (e->flags & T4_EV_GAUGE)
		return F_N; /* a level (DRM memory): not a counter */
	if (!strcmp(e->unit, "bytes"))
		return F_BYTES;
	if (!strcmp(e->unit, "requests"))
		return F_REQUESTS;
	if (!strcmp(e->unit, "cycles"))
		return F_CYCLES;
	return F_EVENTS;
}

static bool same_label(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The family of event k of domain d: its unit's, unless another event of
 * the domain would be a sample of the same series there (slc_access_rd
 * and slc_hit_rd: requests, read, slc; two events of cycles): then
 * t410_pmu_events_total's, with its name, for each of them. Two samples
 * of one series are no exposition: Prometheus refuses the whole scrape. */
static int event_family(const struct t4_live_domain *d, uint32_t k)
{
	int fam = unit_family(&d->ev[k]);
	const char *dir, *target, *dir2, *target2;

	if (fam == F_EVENTS || fam == F_N)
		return fam;
	dir_target(d->ev[k].name, &dir, &target);
	for (uint32_t j = 0; j < d->n_events; j++) {
		if (j == k || unit_family(&d->ev[j]) != fam)
			continue;
		if (fam == F_CYCLES)
			return F_EVENTS; /* (its series has no direction, no target) */
		dir_target(d->ev[j].name, &dir2, &target2);
		if (same_label(dir, dir2) && same_label(target, target2))
			return F_EVENTS;
	}
	return fam;
}

/* A PMU's labels. */
struct pmu_labels {
	const char *host, *socket, *pmu, *kind;
};

/* Domain d's samples of family fam (its totals, or its sampled span). */
static void pmu_counters(struct pbuf *b, struct family *f, int fam, const struct pmu_labels *l,
			 const struct t4_live_domain *d)
{
	const char *base[] = { "host", l->host, "socket", l->socket, "pmu", l->pmu, "kind",
			       l->kind, NULL };

	if (fam == F_SAMPLED) {
		sample_f64(b, &f[F_SAMPLED], base, (double)(d->last_ns - d->first_ns) * 1e-9);
		return;
	}
	for (uint32_t k = 0; k < d->n_events; k++) {
		const struct t4_live_event *e = &d->ev[k];
		const char *dir, *target;
		if (event_family(d, k) != fam)
			continue;
		dir_target(e->name, &dir, &target);
		const char *kv[] = { "host", l->host, "socket", l->socket, "pmu", l->pmu, "kind",
				     l->kind, "direction", dir, "target", target, NULL };
		const char *ev[] = { "host", l->host, "socket", l->socket, "pmu", l->pmu, "kind",
				     l->kind, "event", e->name, NULL };
		sample_u64(b, &f[fam], fam == F_CYCLES ? base : fam == F_EVENTS ? ev : kv, e->total);
	}
}

/* Row r's gauges of family fam (latency or frequency). */
static void pmu_gauges(struct pbuf *b, struct family *f, int fam, const struct pmu_labels *l,
		       const struct t4_live_row *r)
{
	const char *base[] = { "host", l->host, "socket", l->socket, "pmu", l->pmu, "kind",
			       l->kind, NULL };

	for (uint32_t m = 0; m < r->n_metrics; m++) {
		const char *name = r->metric_name[m], *unit = r->metric_unit[m], *dir, *target;
		dir_target(name, &dir, &target);
		const char *kv[] = { "host", l->host, "socket", l->socket, "pmu", l->pmu, "kind",
				     l->kind, "direction", dir, "target", target, NULL };
		if (fam == F_LATENCY && !strcmp(unit, "ns") && strstr(name, "latency"))
			sample_f64(b, &f[F_LATENCY], kv, r->metric[m] * 1e-9);
		else if (fam == F_FREQ && !strcmp(unit, "GHz"))
			sample_f64(b, &f[F_FREQ], base, r->metric[m] * 1e9);
	}
}

/* Every PMU's samples, one family after another: a family's samples form
 * one group, as the format asks. */
static void pmus(struct pbuf *b, struct family *f, const char *host,
		 const struct t4_live_row *rows, size_t n_rows)
{
	for (int fam = F_BYTES; fam <= F_FREQ; fam++) {
		for (size_t i = 0; i < n_rows; i++) {
			const struct t4_live_domain *d = rows[i].dom;
			const struct t4_kind *k = t4_kind_by_id((enum t4_domain_kind)d->kind);
			char socket[16];
			int sock = -1, inst = -1;
			if (!k)
				continue; /* host events: summed below */
			t4_kind_ids(k, d->name, &sock, &inst);
			snprintf(socket, sizeof(socket), "%d", sock);
			struct pmu_labels l = { host, sock >= 0 ? socket : NULL, d->pmu,
						t4_domain_kind_name(d->kind) };
			if (fam >= F_LATENCY)
				pmu_gauges(b, f, fam, &l, &rows[i]);
			else
				pmu_counters(b, f, fam, &l, d);
		}
	}
}

/* Host events (software, msr, tracepoints) summed over the CPUs that
 * count them, by the summing `record`, `info` and the summary use
 * (decode/totals.c). */
static int host_events(struct pbuf *b, struct family *f, const struct t4_live_snap *s)
{
	struct t4_event_rows rows = { 0 };
	int rc = 0;

	for (size_t i = 0; i < s->n_domains && rc >= 0; i++) {
		const struct t4_live_domain *d = &s->doms[i];
		for (uint32_t k = 0; host_kind(d->kind) && k < d->n_events && rc >= 0; k++) {
			const struct t4_live_event *e = &d->ev[k];
			struct t4_event_row row = {
				.kind = d->kind, .pmu = d->pmu, .event = e->name, .unit = e->unit,
				.domain = -1, .gauge = e->flags & T4_EV_GAUGE,
				.scope = e->flags & (T4_EV_TASK | T4_EV_INHERIT), .total = e->total,
			};
			if (!row.gauge)
				rc = t4_event_rows_add(&rows, &row);
		}
	}
	for (size_t i = 0; i < rows.n; i++)
		sample_u64(b, &f[F_HOST], (const char *[]){ "host", s->host, "pmu", rows.v[i].pmu,
					"event", rows.v[i].event, NULL }, (uint64_t)rows.v[i].total);
	t4_event_rows_free(&rows);
	return rc;
}

int t4_live_prometheus(const struct t4_live_snap *s, const struct t4_live_row *rows,
		       size_t n_rows, char **buf, size_t *len)
{
	struct family f[F_N];
	struct pbuf b = { 0 };
	const char *host = s->host;

	init_families(f);
	sample_u64(&b, &f[F_INFO], (const char *[]){ "host", host, "version", T4_VERSION,
				 "simulated", s->simulated ? "true" : "false", NULL }, 1);
	sample_u64(&b, &f[F_PHASE], (const char *[]){ "host", host, "phase", s->phase, NULL }, 1);
	sample_u64(&b, &f[F_TRIGGERS], (const char *[]){ "host", host, NULL }, s->triggers);
	sample_u64(&b, &f[F_OVERRUNS], (const char *[]){ "host", host, NULL }, s->overruns);
	sample_u64(&b, &f[F_DROPPED], (const char *[]){ "host", host, NULL }, s->dropped);
	sample_u64(&b, &f[F_FAILURES], (const char *[]){ "host", host, NULL }, s->read_failures);
	pmus(&b, f, host, rows, n_rows);
	if (host_events(&b, f, s) < 0 || b.oom) {
		free(b.buf);
		return t4_err(ENOMEM, "out of memory");
	}
	*buf = b.buf;
	*len = b.len;
	return 0;
}
