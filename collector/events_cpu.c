/* events_cpu.c - events of the CPU's own PMU (perf's hardware events:
 * cycles, instructions, ...; raw rNNN) and perf's event modifiers.
 *
 * A CPU PMU is a PMU without a cpumask (it is per CPU) named like one:
 * "cpu" (x86), "cpu_core"/"cpu_atom" (hybrid x86), "armv8_*"/"armv9_*"
 * (arm64). Virtual machines often have none; then cycles, instructions
 * and rNNN are refused with "this machine has no CPU PMU (a VM?)" instead
 * of "unknown event", and the software events are offered.
 *
 * Modifiers: u, k, h select the privilege levels counted (perf's rule:
 * naming some excludes the others), for any per-CPU or per-task event;
 * an uncore PMU counts every level and refuses them. p (precise sampling)
 * means nothing for counting and is refused, as are the other letters perf
 * knows (G H I S D W e b P): each with a message saying so.
 */
#include "events_int.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

/* perf's hardware events: name, config, the unit of their counts. */
static const struct {
	const char *name;
	uint64_t config;
	const char *unit;
} hw_events[] = {
	{ "cycles", PERF_COUNT_HW_CPU_CYCLES, "cycles" },
	{ "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES, "cycles" },
	{ "instructions", PERF_COUNT_HW_INSTRUCTIONS, "instructions" },
	{ "cache-references", PERF_COUNT_HW_CACHE_REFERENCES, "references" },
	{ "cache-misses", PERF_COUNT_HW_CACHE_MISSES, "misses" },
	{ "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches" },
	{ "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches" },
	{ "branch-misses", PERF_COUNT_HW_BRANCH_MISSES, "misses" },
	{ "bus-cycles", PERF_COUNT_HW_BUS_CYCLES, "cycles" },
	{ "stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles" },
	{ "stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles" },
	{ "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES, "cycles" },
};

#define MODIFIER_LETTERS "ukhpGHISDWebP"

const char *ev_hw_event_name(size_t i)
{
	return i < T4_ARRAY_LEN(hw_events) ? hw_events[i].name : NULL;
}

bool ev_is_raw_name(const char *name)
{
	if (name[0] != 'r' || !name[1])
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return false;
	return true;
}

bool ev_all_modifiers(const char *s)
{
	return *s && strspn(s, MODIFIER_LETTERS) == strlen(s);
}

bool ev_is_cpu_pmu(const struct t4_pmu *p)
{
	return !p->cpumask[0] &&
	       (!strcmp(p->name, "cpu") || !strcmp(p->name, "cpu_core") ||
		!strcmp(p->name, "cpu_atom") || !strncmp(p->name, "armv8_", 6) ||
		!strncmp(p->name, "armv9_", 6));
}

static const struct t4_pmu *cpu_pmu(const struct t4_pmu_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (ev_is_cpu_pmu(&set->pmus[i]))
			return &set->pmus[i];
	return NULL;
}

static int no_cpu_pmu(const struct ev_ctx *cx, const char *name)
{
	if (cx->set->simulated)
		return t4_err(ENOENT, "%s: the simulated Tegra410 has only its uncore PMUs "
			      "(record this host's counters without --sim)", name);
	if (strcmp(cx->set->root, T4_SYSFS_DEFAULT))
		return t4_err(ENOENT, "%s: no CPU PMU under %s", name, cx->set->root);
	return t4_err(ENOENT, "%s: this machine has no CPU PMU (a VM?); software events "
		      "count here: cpu-clock, task-clock, context-switches, page-faults "
		      "(see 't410trace list')", name);
}

int ev_cpu_event(struct ev_ctx *cx, const char *name)
{
	struct t4_counter c = { 0 };
	const struct t4_pmu *pmu;
	size_t i;

	for (i = 0; i < T4_ARRAY_LEN(hw_events) && strcmp(name, hw_events[i].name); i++)
		;
	if (i == T4_ARRAY_LEN(hw_events) && !ev_is_raw_name(name))
		return 0;
	if (!(pmu = cpu_pmu(cx->set)))
		return no_cpu_pmu(cx, name);
	c.pmu = pmu;
	ev_copy_str(c.name, sizeof(c.name), name);
	ev_copy_str(c.spec, sizeof(c.spec), name);
	if (i < T4_ARRAY_LEN(hw_events)) {
		c.type = PERF_TYPE_HARDWARE;
		c.config = hw_events[i].config;
		ev_copy_str(c.unit, sizeof(c.unit), hw_events[i].unit);
		c.is_clock = c.config == PERF_COUNT_HW_CPU_CYCLES;
	} else { /* rNNN: NNN is hex of any length, as in perf */
		char hex[T4_SPEC_MAX + 2];

		if ((size_t)snprintf(hex, sizeof(hex), "0x%s", name + 1) >= sizeof(hex) ||
		    ev_parse_value(hex, &c.config) < 0)
			return t4_err(EINVAL, "%s: raw event too large for 64 bits", name);
		c.type = pmu->type;
	}
	c.scale = 1.0;
	int rc = ev_push_per_cpu(cx, &c);
	return rc < 0 ? rc : 1;
}

static int refuse_modifier(char m, const char *whole)
{
	if (m == 'p' || m == 'P')
		return t4_err(ENOTSUP, "%s: ':%c' asks for precise sampling; t410trace counts, "
			      "it does not sample (drop the modifier)", whole, m);
	if (strchr(MODIFIER_LETTERS, m))
		return t4_err(ENOTSUP, "%s: modifier '%c' is not supported by t410trace "
			      "(supported: u, k, h)", whole, m);
	return t4_err(EINVAL, "%s: unknown event modifier '%c' (supported: u, k, h)", whole, m);
}

int ev_parse_modifiers(struct ev_ctx *cx, const char *mods, const char *whole)
{
	struct ev_mods *m = &cx->mods;

	memset(m, 0, sizeof(*m));
	if (!*mods)
		return t4_err(EINVAL, "%s: empty modifier after ':'", whole);
	if (strlen(mods) >= sizeof(m->text))
		return t4_err(EINVAL, "%s: too many modifiers", whole);
	for (const char *p = mods; *p; p++) {
		if (*p == 'u')
			m->u = true;
		else if (*p == 'k')
			m->k = true;
		else if (*p == 'h')
			m->h = true;
		else
			return refuse_modifier(*p, whole);
	}
	m->set = true;
	ev_copy_str(m->text, sizeof(m->text), mods);
	return 0;
}
