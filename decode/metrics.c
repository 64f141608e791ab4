/* metrics.c - a kind's derived metrics over the counts of named events,
 * for callers outside the decoder that have counts and a duration but no
 * intervals: the live view (`top`) and the metrics endpoint. The same
 * formulas (collector/kinds.c), the same compiler and evaluator (expr.c)
 * and the same rule for per-task formulas as the decoder's domains
 * (dom.c): one truth for a metric wherever it is shown. And the metrics
 * a DRM domain makes from its events (dec_drm_metric), for the decoder's
 * domains and the options' check (filters.c) alike.
 */
#include "decode_int.h"
#include "collector/collector.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct t4_kind_metrics {
	uint32_t n, n_events;
	const struct t4_formula *f[T4_MAX_COUNTERS];
	struct t4_expr code[T4_MAX_COUNTERS];
	bool ok[T4_MAX_COUNTERS];
	const char *const *events;
	const uint32_t *flags;
	bool task_only; /* compiling a per-task formula */
};

static int lookup(void *ud, const char *name, size_t len)
{
	const struct t4_kind_metrics *ms = ud;

	for (uint32_t i = 0; i < ms->n_events; i++)
		if (strlen(ms->events[i]) == len && !strncmp(ms->events[i], name, len))
			return ms->task_only && !(ms->flags && (ms->flags[i] & T4_EV_TASK)) ? -1
											       : (int)i;
	return -1;
}

int t4_kind_metrics_new(struct t4_kind_metrics **out, uint32_t kind, const char *const *events,
		      const uint32_t *flags, uint32_t n_events)
{
	size_t n;
	const struct t4_formula *f = t4_kind_formulas(kind, &n, NULL);
	struct t4_kind_metrics *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return t4_err(ENOMEM, "out of memory");
	ms->events = events;
	ms->flags = flags;
	ms->n_events = n_events;
	for (size_t m = 0; m < n && ms->n < T4_MAX_COUNTERS; m++) {
		ms->f[ms->n] = &f[m];
		ms->task_only = f[m].per_task;
		/* -ENOENT: an input was not recorded, the metric is absent */
		ms->ok[ms->n] = dec_expr_compile(f[m].expr, lookup, ms, &ms->code[ms->n]) == 0;
		ms->n++;
	}
	ms->events = NULL; /* the caller's names are not kept */
	ms->flags = NULL;
	*out = ms;
	return 0;
}

/* Index of the event named want among names, or -1. */
static int name_at(const char *const *names, uint32_t n, const char *want)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(names[i], want))
			return (int)i;
	return -1;
}

bool dec_drm_metric(const char *const *names, uint32_t n, uint32_t i, char *name, size_t name_cap,
		    char *expr, size_t expr_cap)
{
	const char *ev = names[i], *k = strchr(ev, '.');
	bool cycles = k && !strncmp(k, ".cycles.", 8);
	char want[T4_NAME_MAX], cap[T4_NAME_MAX + 8];

	if (!k || (strncmp(k, ".engine.", 8) && !cycles))
		return false;
	int clen = (int)(k - ev), c, t;
	const char *engine = k + 8;
	snprintf(want, sizeof(want), "%.*s.capacity.%s", clen, ev, engine);
	cap[0] = '\0';
	if ((c = name_at(names, n, want)) >= 0)
		snprintf(cap, sizeof(cap), " / %s", names[c]);
	if (!cycles) {
		snprintf(name, name_cap, "%.*s.%s_busy", clen, ev, engine);
		snprintf(expr, expr_cap, "%s / elapsed_ns * 100%s", ev, cap);
		return true;
	}
	snprintf(want, sizeof(want), "%.*s.total-cycles.%s", clen, ev, engine);
	if ((t = name_at(names, n, want)) < 0)
		return false;
	snprintf(name, name_cap, "%.*s.%s_cycles_busy", clen, ev, engine);
	snprintf(expr, expr_cap, "%s / %s * 100%s", ev, names[t], cap);
	return true;
}

void t4_kind_metrics_free(struct t4_kind_metrics *ms)
{
	free(ms);
}

uint32_t t4_kind_metrics_n(const struct t4_kind_metrics *ms)
{
	return ms->n;
}

const struct t4_formula *t4_kind_metrics_formula(const struct t4_kind_metrics *ms, uint32_t m)
{
	return m < ms->n ? ms->f[m] : NULL;
}

void t4_kind_metrics_eval(const struct t4_kind_metrics *ms, const uint64_t *counts, uint32_t n,
			uint64_t elapsed_ns, double *out)
{
	double c[T4_MAX_COUNTERS];

	for (uint32_t i = 0; i < n && i < T4_MAX_COUNTERS; i++)
		c[i] = (double)counts[i];
	for (uint32_t m = 0; m < ms->n; m++)
		out[m] = ms->ok[m] ? dec_expr_eval(&ms->code[m], c, (double)elapsed_ns) : NAN;
}
