/* events_int.h - private interface between events.c (the list grammar,
 * software events, tracepoints), events_terms.c (one PMU's terms) and
 * events_quote.c (names in quotes).
 * Not part of the collector API.
 */
#ifndef T4_EVENTS_INT_H
#define T4_EVENTS_INT_H

#include "collector.h"

/* Event modifiers (":u", ":k", ":h") of the event being parsed. */
struct ev_mods {
	bool set;          /* any u/k/h given */
	bool u, k, h;
	char text[16];     /* as typed, for the spec ("u", "uk") */
};

/* One parse call: the scratch list, the group being read, online CPUs. */
struct ev_ctx {
	const struct t4_pmu_set *set;
	struct t4_evlist tmp;
	struct t4_target target; /* -C, -p/-t of the caller's list */
	struct ev_mods mods;     /* of the event being parsed */
	int group;      /* current group index, -1 outside braces */
	int next_group; /* next group index to hand out */
	int *cpus;      /* CPUs to count on (online, -C), read on first need */
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
 * online CPU (of -C) for PMUs without one, or once per thread of -p/-t;
 * with the event's modifiers. */
int ev_push_per_cpu(struct ev_ctx *cx, struct t4_counter *c);

/* ---- events_quote.c: names the syntax would split ------------------------- */

/* Whether name is written as it is: not empty, [A-Za-z0-9_.-] only. */
bool ev_is_plain(const char *name);
/* The quoted name at s (s[0] == '"') into buf (which may be s): the bytes
 * it took, quotes included, or -EINVAL (no closing quote, empty, too long). */
int ev_unquote(const char *s, char *buf, size_t cap);
/* The length of s before its first character of stop outside quotes. */
size_t ev_span(const char *s, const char *stop);

/* ---- events_cpu.c: CPU-PMU events and modifiers ------------------------- */

/* Parse perf modifiers into cx->mods: u, k, h are applied; p (precise
 * sampling) and the others are refused with a message naming them. */
int ev_parse_modifiers(struct ev_ctx *cx, const char *mods, const char *whole);
/* A hardware event (cycles, instructions, ...) or a raw rNNN event on
 * the CPU PMU: 1 when name is one (appended), 0 when it is not, or a
 * negative errno ("this machine has no CPU PMU (a VM?)"). */
int ev_cpu_event(struct ev_ctx *cx, const char *name);
/* The i-th hardware event name ("cycles", ...), NULL past the last. */
const char *ev_hw_event_name(size_t i);
/* Whether p is the CPU's own PMU (cpu, cpu_core, armv8_*, ...). */
bool ev_is_cpu_pmu(const struct t4_pmu *p);
/* Whether name is a raw CPU event: r followed by hex digits. */
bool ev_is_raw_name(const char *name);
/* Whether every character of s is a perf modifier letter. */
bool ev_all_modifiers(const char *s);
/* The counter of pmu/terms/: an event's name means its sysfs alias or the
 * catalog's encoding (events_terms.c says which wins). l: the caller's
 * list, for the PCIE one-BDF rule. */
int ev_build_one(struct ev_ctx *cx, const struct t4_evlist *l, const struct t4_pmu *pmu,
		 const char *terms);

#endif
