/* events_int.h - private interface between events.c (the list grammar,
 * software events, tracepoints) and events_terms.c (one PMU's terms).
 * Not part of the collector API.
 */
#ifndef T4_EVENTS_INT_H
#define T4_EVENTS_INT_H

#include "collector.h"

/* One parse call: the scratch list, the group being read, online CPUs. */
struct ev_ctx {
	const struct t4_pmu_set *set;
	struct t4_evlist tmp;
	int group;      /* current group index, -1 outside braces */
	int next_group; /* next group index to hand out */
	int *cpus;      /* online CPUs, read on first need */
	int n_cpus;
};

void ev_copy_str(char *dst, size_t cap, const char *src);
/* Append to buf; false when it would not fit. */
bool ev_catf(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Decimal or 0x hex, the whole string, like perf's lexer. */
int ev_parse_value(const char *s, uint64_t *out);
uint64_t ev_format_extract(const struct t4_format *f, const uint64_t cfg[3]);

/* Append c to the scratch list: on the PMU's cpumask CPU, or once per
 * online CPU for PMUs without one. */
int ev_push_per_cpu(struct ev_ctx *cx, struct t4_counter *c);
/* The counter of pmu/terms/ (kind_name: its name when built from the kind
 * table). l: the caller's list, for the PCIE one-BDF rule. */
int ev_build_one(struct ev_ctx *cx, const struct t4_evlist *l, const struct t4_pmu *pmu,
		 const char *terms, const char *kind_name);

#endif
