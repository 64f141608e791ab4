/* events.c - the perf event syntax users type, turned into counters with
 * exact perf_event_attr values (type, config, config1, config2, CPU).
 *
 *   list   := item (',' item)*
 *   item   := '{' event (',' event)* '}' | event
 *   event  := pmu '/' term (',' term)* '/'    pmu may hold * ? [ ] wildcards
 *           | software-name                   cpu-clock, cs, page-faults, ...
 *           | subsys ':' name                 a tracepoint
 *   term   := alias | name '=' value | flag   (flag alone means =1, like perf)
 *   pmu, alias, name, value := a word | '"' quoted '"'   (events_quote.c:
 *             a name the syntax would split; quoted, a PMU name is no pattern)
 *
 * Trade-offs: a small hand-written recursive-descent parser over the
 * string instead of a generated grammar: the language is tiny and hand
 * code gives precise one-line errors naming the offending part. An alias's
 * terms are applied first, then the user's terms in order (so a user term
 * overrides the alias, as in perf). Everything is built into a scratch
 * list and appended only when the whole string parsed, so a failed call
 * leaves the caller's list untouched. Values are decimal or 0x hex like
 * perf's lexer (a leading 0 is not octal). Reading a tracepoint ID may
 * mount tracefs (a side effect perf has too), once, when it is missing.
 */
#include "events_int.h"
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#define ONLINE_PATH "/sys/devices/system/cpu/online"
#define TRACEFS "/sys/kernel/tracing"
#define TRACEFS_OLD "/sys/kernel/debug/tracing"

/* The kernel's software events: name, perf's short alias, config, the
 * unit of their counts and a line for `list`. */
static const struct t4_sw_event sw_events[] = {
	{ "cpu-clock", NULL, PERF_COUNT_SW_CPU_CLOCK, "ns",
	  "time on a CPU clock: per CPU it runs busy or idle, per task while it runs" },
	{ "task-clock", NULL, PERF_COUNT_SW_TASK_CLOCK, "ns",
	  "time the counted tasks ran (per CPU: the CPU's time, busy or idle)" },
	{ "page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS, "faults", "page faults, minor and major" },
	{ "context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES, "switches",
	  "context switches (a task leaving a CPU)" },
	{ "cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "migrations",
	  "tasks moved from one CPU to another" },
	{ "minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN, "faults",
	  "page faults served without I/O" },
	{ "major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "faults",
	  "page faults that needed I/O" },
	{ "alignment-faults", NULL, PERF_COUNT_SW_ALIGNMENT_FAULTS, "faults",
	  "unaligned accesses fixed up by the kernel" },
	{ "emulation-faults", NULL, PERF_COUNT_SW_EMULATION_FAULTS, "faults",
	  "instructions emulated by the kernel" },
};

static const char *pmu_name_at(const void *src, size_t i)
{
	return ((const struct t4_pmu_set *)src)->pmus[i].name;
}

/* Events known by name alone, for suggestions: software, then hardware. */
static const char *named_event_at(const void *src, size_t i)
{
	(void)src;
	return i < T4_ARRAY_LEN(sw_events) ? sw_events[i].name
					    : ev_hw_event_name(i - T4_ARRAY_LEN(sw_events));
}

static size_t named_events(void)
{
	size_t n = 0;

	while (named_event_at(NULL, n))
		n++;
	return n;
}

static bool is_named_event(const char *name)
{
	for (size_t i = 0; named_event_at(NULL, i); i++)
		if (!strcmp(name, named_event_at(NULL, i)))
			return true;
	for (size_t i = 0; i < T4_ARRAY_LEN(sw_events); i++)
		if (sw_events[i].alt && !strcmp(name, sw_events[i].alt))
			return true;
	return ev_is_raw_name(name);
}

const struct t4_sw_event *t4_software_event(size_t i)
{
	return i < T4_ARRAY_LEN(sw_events) ? &sw_events[i] : NULL;
}

/* " (did you mean X?)" or "" into buf. */
static bool is_software_like(const struct t4_pmu *pmu)
{
	return !strcmp(pmu->name, "software") || !strcmp(pmu->name, "tracepoint");
}

/* ---- online CPUs ------------------------------------------------------- */

/* -EINVAL naming the first CPU of want that online lacks ("CPU 9 is not
 * online (online: 0-7)"), or 0. */
static int cpus_in(const char *want, const char *online)
{
	int absent, rc = t4_cpulist_first_absent(want, online, &absent);

	if (rc < 0)
		return rc; /* malformed: said */
	if (absent < 0)
		return 0;
	return t4_err(EINVAL, "CPU %d is not online (online: %s)", absent, online);
}

int t4_cpus_check_online(const char *list)
{
	char buf[4096];
	int rc = t4_read_small_file(ONLINE_PATH, buf, sizeof(buf));

	return rc < 0 ? rc : cpus_in(list, buf);
}

/* Keep the online CPUs that -C names; every CPU of -C must be online. */
static int apply_cpu_list(struct ev_ctx *cx, const char *online)
{
	const char *want = cx->target.cpus;
	int kept = 0;

	if (!want)
		return 0;
	if (cpus_in(want, online) < 0)
		return t4_err(EINVAL, "-C %s: %s", want, t4_errmsg());
	for (int i = 0; i < cx->n_cpus; i++)
		if (t4_cpulist_has(want, cx->cpus[i]) == 1)
			cx->cpus[kept++] = cx->cpus[i];
	cx->n_cpus = kept;
	return 0;
}

static int read_online(struct ev_ctx *cx)
{
	char buf[4096];
	const char *p = buf;
	int rc, cap = 0;

	if (cx->cpus)
		return 0;
	rc = t4_read_small_file(ONLINE_PATH, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	if (t4_cpulist_first(buf, &cap) < 0)
		return t4_err(EINVAL, "%s: %s", ONLINE_PATH, t4_errmsg());
	cx->cpus = calloc((size_t)cap, sizeof(int));
	if (!cx->cpus)
		return t4_err(ENOMEM, "out of memory");
	while (*p && cx->n_cpus < cap) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long c = lo; c <= hi && cx->n_cpus < cap; c++)
			cx->cpus[cx->n_cpus++] = (int)c;
		p = *end == ',' ? end + 1 : end;
	}
	return apply_cpu_list(cx, buf);
}

/* ---- appending counters -------------------------------------------------- */

static int push(struct t4_evlist *l, const struct t4_counter *c)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct t4_counter *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return t4_err(ENOMEM, "out of memory");
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *c;
	return 0;
}

/* The event's modifiers onto c (uncore PMUs count every privilege level:
 * refused there). */
static int apply_mods(const struct ev_ctx *cx, struct t4_counter *c)
{
	const struct ev_mods *m = &cx->mods;

	if (!m->set)
		return 0;
	if (c->pmu->cpumask[0])
		return t4_err(ENOTSUP, "%s:%s: %s is an uncore PMU; it counts every privilege "
			      "level, so ':%s' cannot apply", c->spec, m->text, c->pmu->name, m->text);
	c->exclude_user = !m->u;
	c->exclude_kernel = !m->k;
	c->exclude_hv = !m->h;
	/* the name keeps them too: cpu-clock:u and cpu-clock:k are two
	 * events in every output, as in perf */
	if (!ev_catf(c->spec, sizeof(c->spec), ":%s", m->text) ||
	    !ev_catf(c->name, sizeof(c->name), ":%s", m->text))
		return t4_err(EINVAL, "%s: event string too long", c->spec);
	return 0;
}

/* The PMUs that count the whole system, never a task: uncore PMUs (a
 * cpumask) and msr (the machine's TSC, APERF, ...: with a task's counter
 * the kernel counts only while it runs, so -p's msr/tsc was the task's run
 * time in cycles, a COMMAND's the system's: one rule for both). */
static bool counts_system(const struct t4_pmu *pmu)
{
	return pmu->cpumask[0] || !strcmp(pmu->name, "msr");
}

/* One counter per thread of -p/-t, on any CPU. */
static int push_per_task(struct ev_ctx *cx, struct t4_counter *c)
{
	int rc;

	if (counts_system(c->pmu))
		return t4_err(EINVAL, "%s: %s counts the whole system, not one task: it cannot "
			      "be used with -p/-t", c->spec, c->pmu->name);
	c->cpu = -1;
	c->inherit = cx->target.command;
	for (size_t i = 0; i < cx->target.n_tids; i++) {
		c->tid = cx->target.tids[i];
		if ((rc = push(&cx->tmp, c)) < 0)
			return rc;
	}
	return 0;
}

/* The PMUs whose events count a task (perf's CPU side): software,
 * tracepoints, the CPU's own PMU. */
static bool counts_tasks(const struct t4_pmu *pmu)
{
	return is_software_like(pmu) || ev_is_cpu_pmu(pmu);
}

/* One counter on the PMU's cpumask CPU, or one per online CPU (those of
 * -C) for PMUs without a cpumask (software, tracepoint, msr, the CPU PMU),
 * or one per thread of -p/-t; for a command, one for it (and its
 * children) if the PMU counts tasks, else as without a target. */
int ev_push_per_cpu(struct ev_ctx *cx, struct t4_counter *c)
{
	int rc;

	c->group = cx->group;
	if ((rc = apply_mods(cx, c)) < 0)
		return rc;
	if (cx->target.n_tids && (!cx->target.command || counts_tasks(c->pmu)))
		return push_per_task(cx, c);
	if (c->pmu->cpu >= 0) {
		c->cpu = c->pmu->cpu;
		return push(&cx->tmp, c);
	}
	if ((rc = read_online(cx)) < 0)
		return rc;
	for (int i = 0; i < cx->n_cpus; i++) {
		c->cpu = cx->cpus[i];
		if ((rc = push(&cx->tmp, c)) < 0)
			return rc;
	}
	return 0;
}

/* ---- the three event forms ---------------------------------------------- */

static bool has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* The PMU the user may have meant by name, as the syntax takes it. */
static const char *pmu_guess(const struct ev_ctx *cx, const char *name, char *buf, size_t cap)
{
	const char *g = t4_suggest(name, cx->set, cx->set->n, pmu_name_at);

	return g && t4_events_quote(buf, cap, g) ? buf : g;
}

/* pmu_name/terms/; a quoted name is a name, never a pattern. */
static int pmu_event(struct ev_ctx *cx, const struct t4_evlist *l, const char *pmu_name,
		     bool quoted, const char *terms, const char *whole)
{
	const struct t4_pmu *pmu;
	char h[3 * T4_NAME_MAX + 32], q[2 * T4_NAME_MAX + 2];
	int rc, matched = 0;

	if (!*pmu_name)
		return t4_err(EINVAL, "%s: missing PMU name before '/'", whole);
	if (!*terms)
		return t4_err(EINVAL, "%s: empty event", whole);
	if (!quoted && has_wildcard(pmu_name)) {
		for (size_t i = 0; i < cx->set->n; i++) {
			if (fnmatch(pmu_name, cx->set->pmus[i].name, 0) != 0)
				continue;
			matched++;
			if ((rc = ev_build_one(cx, l, &cx->set->pmus[i], terms)) < 0)
				return rc;
		}
		if (!matched)
			return t4_err(EINVAL, "%s: no PMU matches '%s'", whole, pmu_name);
		return 0;
	}
	pmu = t4_pmus_find(cx->set, pmu_name);
	if (!pmu)
		return t4_err(EINVAL, "%s: unknown PMU%s", pmu_name,
			      t4_did_you_mean(h, sizeof(h), pmu_guess(cx, pmu_name, q, sizeof(q))));
	return ev_build_one(cx, l, pmu, terms);
}

static int software_event(struct ev_ctx *cx, const char *name)
{
	const struct t4_pmu *sw = t4_pmus_find(cx->set, "software");
	char h[3 * T4_NAME_MAX + 32], q[2 * T4_NAME_MAX + 2];
	struct t4_counter c = { 0 };

	for (size_t i = 0; i < T4_ARRAY_LEN(sw_events); i++) {
		if (strcmp(name, sw_events[i].name) &&
		    (!sw_events[i].alt || strcmp(name, sw_events[i].alt)))
			continue;
		if (!sw && cx->set->simulated)
			return t4_err(ENOENT, "%s: the simulated Tegra410 has only its uncore PMUs "
				      "(record this host's counters without --sim)", name);
		if (!sw)
			return t4_err(ENOENT, "%s: no 'software' PMU under %s", name, cx->set->root);
		c.pmu = sw;
		ev_copy_str(c.name, sizeof(c.name), sw_events[i].name);
		ev_copy_str(c.spec, sizeof(c.spec), sw_events[i].name);
		c.type = PERF_TYPE_SOFTWARE;
		c.config = sw_events[i].config;
		c.scale = 1.0;
		ev_copy_str(c.unit, sizeof(c.unit), sw_events[i].unit);
		return ev_push_per_cpu(cx, &c);
	}
	int rc = ev_cpu_event(cx, name);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (t4_pmus_find(cx->set, name))
		return t4_err(EINVAL, "%s: a PMU needs an event: %s/<event>/ (see 't410trace list')",
			      name, name);
	const char *guess = t4_suggest(name, NULL, named_events(), named_event_at);
	if (!guess)
		guess = pmu_guess(cx, name, q, sizeof(q));
	return t4_err(EINVAL, "%s: unknown event (not a software or hardware event, "
		      "subsys:tracepoint or pmu/event/)%s", name,
		      t4_did_you_mean(h, sizeof(h), guess));
}

static bool dir_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The tracefs directory; mounts tracefs when it is not mounted. */
static int tracefs_dir(char *buf, size_t cap, const char *what)
{
	const char *env = t4_env("T410TRACE_TRACEFS");

	if (env) {
		ev_copy_str(buf, cap, env);
		return 0;
	}
	if (!dir_exists(TRACEFS "/events"))
		(void)mount("nodev", TRACEFS, "tracefs", 0, NULL);
	if (dir_exists(TRACEFS "/events"))
		ev_copy_str(buf, cap, TRACEFS);
	else if (dir_exists(TRACEFS_OLD "/events"))
		ev_copy_str(buf, cap, TRACEFS_OLD);
	else
		return t4_err(ENOENT, "%s: tracefs is not mounted and could not be mounted "
			      "(try: mount -t tracefs nodev %s)", what, TRACEFS);
	return 0;
}

static bool tp_name_ok(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

/* The entry of directory dir closest to name (a misspelling), into out;
 * "" when none is close. */
static void closest_entry(const char *dir, const char *name, char *out, size_t cap)
{
	char *names[1024];
	size_t n = 0;
	struct dirent *e;
	DIR *d = opendir(dir);
	const char *best;

	out[0] = '\0';
	if (!d)
		return;
	while ((e = readdir(d)) && n < T4_ARRAY_LEN(names))
		if (e->d_name[0] != '.' && (names[n] = strdup(e->d_name)))
			n++;
	closedir(d);
	if ((best = t4_suggest(name, names, n, t4_strv_at)))
		ev_copy_str(out, cap, best);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
}

/* "no such tracepoint", with the closest subsystem or event name. */
static int no_tracepoint(const char *name, const char *dir, const char *path)
{
	const char *colon = strchr(name, ':');
	char sub[1100], guess[T4_NAME_MAX * 2], h[T4_NAME_MAX * 4];
	char tp[T4_NAME_MAX * 4] = "";

	snprintf(sub, sizeof(sub), "%s/events/%.*s", dir, (int)(colon - name), name);
	if (dir_exists(sub)) {
		closest_entry(sub, colon + 1, guess, sizeof(guess));
		if (guess[0])
			snprintf(tp, sizeof(tp), "%.*s:%s", (int)(colon - name), name, guess);
	} else {
		snprintf(sub, sizeof(sub), "%s/events", dir);
		snprintf(tp, sizeof(tp), "%.*s", (int)(colon - name), name);
		closest_entry(sub, tp, guess, sizeof(guess));
		snprintf(tp, sizeof(tp), "%s%s", guess, guess[0] ? ":..." : "");
		if (!guess[0])
			tp[0] = '\0';
	}
	return t4_err(EINVAL, "%s: no such tracepoint (%s does not exist)%s", name, path,
		      t4_did_you_mean(h, sizeof(h), tp[0] ? tp : NULL));
}

static int tracepoint_event(struct ev_ctx *cx, const char *name)
{
	const struct t4_pmu *tp = t4_pmus_find(cx->set, "tracepoint");
	const char *colon = strchr(name, ':');
	char dir[512], path[1024], buf[32];
	struct t4_counter c = { 0 };
	uint64_t id;
	int rc;

	if (!tp_name_ok(name, (size_t)(colon - name)) || !tp_name_ok(colon + 1, strlen(colon + 1)))
		return t4_err(EINVAL, "%s: malformed tracepoint (use subsys:name, e.g. sched:sched_switch)",
			      name);
	if (!tp)
		return t4_err(ENOENT, "%s: no 'tracepoint' PMU under %s", name, cx->set->root);
	if ((rc = tracefs_dir(dir, sizeof(dir), name)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/events/%.*s/%s/id", dir, (int)(colon - name), name,
		 colon + 1);
	rc = t4_read_small_file(path, buf, sizeof(buf));
	if (rc == -ENOENT)
		return no_tracepoint(name, dir, path);
	if (rc < 0)
		return rc;
	if (ev_parse_value(buf, &id) < 0)
		return t4_err(EINVAL, "%s: '%s' is not a tracepoint id", path, buf);
	c.pmu = tp;
	ev_copy_str(c.name, sizeof(c.name), name);
	ev_copy_str(c.spec, sizeof(c.spec), name);
	c.type = PERF_TYPE_TRACEPOINT;
	c.config = id;
	c.scale = 1.0;
	ev_copy_str(c.unit, sizeof(c.unit), "hits");
	return ev_push_per_cpu(cx, &c);
}

/* ---- the list grammar ----------------------------------------------------- */

/* An event without '/': a software or hardware event or a tracepoint,
 * each optionally with perf modifiers (cycles:u, sched:sched_switch:k).
 * "x:y" is a modifier only when y is all modifier letters and x an event
 * of its own (a name, or subsys:name): "sched:u" stays a tracepoint. */
static int named_event(struct ev_ctx *cx, char *name)
{
	char *colon = strrchr(name, ':'), whole[T4_SPEC_MAX];
	int rc;

	if (colon && ev_all_modifiers(colon + 1)) {
		ev_copy_str(whole, sizeof(whole), name);
		*colon = '\0';
		if (strchr(name, ':') || is_named_event(name)) {
			if ((rc = ev_parse_modifiers(cx, colon + 1, whole)) < 0)
				return rc;
		} else {
			*colon = ':';
		}
	}
	return strchr(name, ':') ? tracepoint_event(cx, name) : software_event(cx, name);
}

/* A quoted PMU name at s[start] into pmu: where it ends, or -errno. */
static int quoted_pmu(const char *s, size_t start, char *pmu, size_t cap)
{
	int n = ev_unquote(s + start, pmu, cap);

	if (n < 0)
		return n;
	if (s[start + (size_t)n] != '/')
		return t4_err(EINVAL, "%s: a quoted name is a PMU's: its '/term.../' must follow",
			      s + start);
	return n;
}

/* One event at s[*pos]; advances *pos past it. */
static int parse_event(struct ev_ctx *cx, const struct t4_evlist *l, const char *s, size_t *pos)
{
	size_t start = *pos, end = start + strcspn(s + start, ",{}/");
	char pmu[T4_SPEC_MAX], terms[T4_SPEC_MAX * 2], whole[T4_SPEC_MAX * 2];
	const char *close;
	bool quoted = s[start] == '"';

	if (quoted) {
		int n = quoted_pmu(s, start, pmu, sizeof(pmu));
		if (n < 0)
			return n;
		end = start + (size_t)n;
	} else {
		if (end == start && s[end] != '/')
			return t4_err(EINVAL, "'%s': empty event (a stray ',' or an empty group?)", s);
		if (end - start >= sizeof(pmu))
			return t4_err(EINVAL, "%.40s...: event string too long", s + start);
		memcpy(pmu, s + start, end - start);
		pmu[end - start] = '\0';
	}
	if (s[end] != '/') {
		*pos = end;
		for (size_t k = end - start; k > 0 && (pmu[k - 1] == ' ' || pmu[k - 1] == '\t'); k--)
			pmu[k - 1] = '\0';
		return named_event(cx, pmu);
	}
	close = s + end + 1 + ev_span(s + end + 1, "/");
	if (!*close)
		return t4_err(EINVAL, "%s: missing closing '/'", s + start);
	if ((size_t)(close - s) - start + 1 >= sizeof(whole))
		return t4_err(EINVAL, "%.40s...: event string too long", s + start);
	snprintf(whole, sizeof(whole), "%.*s", (int)((size_t)(close - s) - start + 1), s + start);
	snprintf(terms, sizeof(terms), "%.*s", (int)(close - (s + end + 1)), s + end + 1);
	*pos = (size_t)(close - s) + 1;
	if (s[*pos] == ':') {
		char mods[T4_NAME_MAX];
		size_t n = strcspn(s + *pos + 1, ",{} \t");
		int rc;

		snprintf(mods, sizeof(mods), "%.*s", (int)n, s + *pos + 1);
		*pos += 1 + n;
		if ((rc = ev_parse_modifiers(cx, mods, whole)) < 0)
			return rc;
	}
	return pmu_event(cx, l, pmu, quoted, terms, whole);
}

/* A group may hold one hardware PMU plus any software events. */
static int check_group(struct ev_ctx *cx, int g, const char *text)
{
	const struct t4_pmu *hw = NULL;
	bool any = false;

	for (size_t i = 0; i < cx->tmp.n; i++) {
		const struct t4_pmu *p = cx->tmp.v[i].pmu;
		if (cx->tmp.v[i].group != g)
			continue;
		any = true;
		if (is_software_like(p))
			continue;
		if (hw && hw != p)
			return t4_err(EINVAL, "%s: a group may not span two hardware PMUs (%s and %s)",
				      text, hw->name, p->name);
		hw = p;
	}
	return any ? 0 : t4_err(EINVAL, "%s: empty group", text);
}

static size_t skip_space(const char *s, size_t pos)
{
	while (s[pos] == ' ' || s[pos] == '\t')
		pos++;
	return pos;
}

static int parse_items(struct ev_ctx *cx, const struct t4_evlist *l, const char *s, size_t *pos,
		       bool in_group)
{
	int rc;

	for (;;) {
		*pos = skip_space(s, *pos);
		if (s[*pos] == '{') {
			size_t open = *pos;
			char text[T4_SPEC_MAX];
			if (in_group)
				return t4_err(EINVAL, "%s: groups cannot nest", s + open);
			cx->group = cx->next_group++;
			(*pos)++;
			if ((rc = parse_items(cx, l, s, pos, true)) < 0)
				return rc;
			if (s[*pos] != '}')
				return t4_err(EINVAL, "%s: unbalanced braces (missing '}')", s + open);
			(*pos)++;
			snprintf(text, sizeof(text), "%.*s", (int)(*pos - open), s + open);
			if ((rc = check_group(cx, cx->group, text)) < 0)
				return rc;
			cx->group = -1;
		} else if (s[*pos] == '}') {
			if (!in_group)
				return t4_err(EINVAL, "%s: unbalanced braces (unexpected '}')", s + *pos);
			return 0; /* an empty group or a trailing ',' */
		} else if ((memset(&cx->mods, 0, sizeof(cx->mods)),
			    rc = parse_event(cx, l, s, pos)) < 0) {
			return rc;
		}
		*pos = skip_space(s, *pos);
		if (s[*pos] == ',') {
			(*pos)++;
			if (!s[skip_space(s, *pos)])
				return t4_err(EINVAL, "'%s': empty event after the last ','", s);
			continue;
		}
		if (!s[*pos] || (s[*pos] == '}' && in_group))
			return 0;
		if (s[*pos] == '}')
			return t4_err(EINVAL, "%s: unbalanced braces (unexpected '}')", s + *pos);
		return t4_err(EINVAL, "%s: unexpected '%c' (missing ','?)", s + *pos, s[*pos]);
	}
}

/* ---- public API ---------------------------------------------------------- */

static void ctx_free(struct ev_ctx *cx)
{
	t4_evlist_free(&cx->tmp);
	free(cx->cpus);
}

/* Move the scratch list onto l. */
static int commit(struct ev_ctx *cx, struct t4_evlist *l)
{
	for (size_t i = 0; i < cx->tmp.n; i++) {
		int rc = push(l, &cx->tmp.v[i]);
		if (rc < 0) {
			l->n -= i;
			return rc;
		}
	}
	l->n_groups = cx->next_group;
	return 0;
}

int t4_events_parse(struct t4_evlist *l, const struct t4_pmu_set *set, const char *spec)
{
	struct ev_ctx cx = { .set = set, .target = l->target, .group = -1,
			     .next_group = l->n_groups };
	size_t pos = 0;
	int rc;

	if (!spec || !spec[skip_space(spec, 0)])
		return t4_err(EINVAL, "empty event list");
	rc = parse_items(&cx, l, spec, &pos, false);
	if (rc >= 0)
		rc = commit(&cx, l);
	ctx_free(&cx);
	return rc < 0 ? rc : 0;
}

/* One PMU's default events, by name (its alias or the catalog's
 * encoding); none it has neither an alias nor an `event` field for. */
static int pmu_defaults(struct ev_ctx *cx, const struct t4_evlist *l, const struct t4_pmu *pmu)
{
	for (const char *const *d = pmu->kind->defaults; *d; d++) {
		int rc;

		if (!t4_pmu_alias(pmu, *d) && !t4_pmu_format(pmu, "event"))
			continue;
		if ((rc = ev_build_one(cx, l, pmu, *d)) < 0)
			return rc;
	}
	return 0;
}

int t4_events_default(struct t4_evlist *l, const struct t4_pmu_set *set)
{
	struct ev_ctx cx = { .set = set, .target = l->target, .group = -1,
			     .next_group = l->n_groups };
	const struct t4_pmu *msr = t4_pmus_find(set, "msr");
	char spec[160] = "";
	int rc = 0;

	/* A task target is counted with the software events: uncore PMUs
	 * count the whole system (-p/-t refuse them; a command's recording
	 * keeps them, system-wide), msr/tsc is the machine's clock. */
	bool threads = l->target.n_tids && !l->target.command;
	for (size_t i = 0; i < set->n && rc >= 0 && !threads; i++)
		if (set->pmus[i].kind)
			rc = pmu_defaults(&cx, l, &set->pmus[i]);
	if (rc >= 0 && cx.tmp.n > 0)
		rc = commit(&cx, l);
	if (rc < 0 || cx.tmp.n > 0) {
		ctx_free(&cx);
		return rc < 0 ? rc : 0;
	}
	ctx_free(&cx);
	if (t4_pmus_find(set, "software"))
		ev_catf(spec, sizeof(spec), "cpu-clock,task-clock,context-switches,page-faults,cpu-migrations");
	if (msr && t4_pmu_alias(msr, "tsc") && !l->target.n_tids)
		ev_catf(spec, sizeof(spec), "%smsr/tsc/", spec[0] ? "," : "");
	if (!spec[0])
		return t4_err(ENOENT, "%s: no Tegra410, software or msr PMU to count by default",
			      set->root);
	return t4_events_parse(l, set, spec);
}

void t4_evlist_free(struct t4_evlist *l)
{
	if (!l)
		return;
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
	l->n_groups = 0;
}
