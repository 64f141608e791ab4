/* alias_check.c - the record-time check of sysfs aliases against the catalog.
 * A kernel's alias may encode an event otherwise than the Tegra410 catalog
 * does (seen on a real machine: the named byte counters read 0 while their
 * raw encodings counted). Every counter built from such an alias
 * (t4_counter.check_alias: its catalog encoding differs) is counted twice for a
 * short window before the recording, as one perf group on its PMU's CPU
 * (pid -1, inherit 0, like every uncore counter): its alias and the
 * catalog's encoding. One that read 0 while the catalog's encoding counted
 * is switched to the catalog's encoding, with a warning line.
 *
 * Trade-offs: it judges only on evidence. The catalog must know the event,
 * and the catalog's encoding must have counted in the same window (so the
 * event happened while the alias saw nothing); an event that did not
 * happen proves nothing and changes nothing, and an alias that counts is
 * trusted (the kernel knows its hardware). Never silent: each switch is a
 * line on stderr, and the log's spec of the event says event=0x... where
 * the alias's name was. It runs before the baseline rather than on the
 * recording's own first triggers so that the log describes each counter
 * once and truly: a switch in mid-log would leave the first intervals
 * counted by the dead encoding. A pair that cannot be opened (counters
 * taken, no permission) is left as it is, silently: the recording's own
 * open then says what is wrong. Simulated PMUs are read from the model at
 * two instants of its time: no wait, and the same answer every run.
 */
#include "collector.h"
#include "util/util.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* One alias and its catalog encoding, counted side by side. */
struct pair {
	struct t4_counter *c;
	struct t4_counter alt;  /* c with the catalog's encoding */
	int fd[2];              /* leader: the alias; member: the catalog's */
	uint64_t id[2];
	uint64_t start[2], end[2];
	bool counted;           /* both read, and the group ran */
};

static void catalog_counter(const struct t4_counter *c, struct t4_counter *alt)
{
	*alt = *c;
	alt->config = c->catalog_config[0];
	alt->config1 = c->catalog_config[1];
	alt->config2 = c->catalog_config[2];
}

/* ---- perf ---------------------------------------------------------------- */

static int open_one(const struct t4_counter *c, bool leader, int group_fd)
{
	struct perf_event_attr a;
	int pid, cpu;

	t4_counter_perf_args(c, leader, &a, &pid, &cpu);
	return (int)syscall(SYS_perf_event_open, &a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static void close_pair(struct pair *p)
{
	for (int k = 0; k < 2; k++)
		if (p->fd[k] >= 0)
			close(p->fd[k]);
	p->fd[0] = p->fd[1] = -1;
}

static bool open_pair(struct pair *p)
{
	p->fd[0] = open_one(p->c, true, -1);
	p->fd[1] = p->fd[0] < 0 ? -1 : open_one(&p->alt, false, p->fd[0]);
	if (p->fd[1] < 0 || ioctl(p->fd[0], PERF_EVENT_IOC_ID, &p->id[0]) < 0 ||
	    ioctl(p->fd[1], PERF_EVENT_IOC_ID, &p->id[1]) < 0 ||
	    ioctl(p->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0) {
		close_pair(p);
		return false;
	}
	return true;
}

/* The pair's two values into v (by ID); false when the read failed, or
 * when ran is asked and the group never ran (at the start it may not have
 * yet: its values are then 0). */
static bool read_pair(const struct pair *p, uint64_t v[2], bool ran)
{
	uint64_t buf[3 + 2 * 2];
	ssize_t r = read(p->fd[0], buf, sizeof(buf));

	if (r != (ssize_t)sizeof(buf) || buf[0] != 2 || (ran && buf[2] == 0))
		return false;
	for (int k = 0; k < 2; k++) {
		uint64_t id = buf[3 + 2 * k + 1];

		if (id != p->id[0] && id != p->id[1])
			return false;
		v[id == p->id[0] ? 0 : 1] = buf[3 + 2 * k];
	}
	return true;
}

static void count_perf(struct pair *v, size_t n, uint64_t window_ns)
{
	struct timespec ts = { (time_t)(window_ns / 1000000000u), (long)(window_ns % 1000000000u) };
	size_t open = 0;

	for (size_t i = 0; i < n; i++) {
		if (v[i].c->pmu->simulated || !open_pair(&v[i]))
			continue;
		if (read_pair(&v[i], v[i].start, false))
			open++;
		else
			close_pair(&v[i]);
	}
	if (!open)
		return;
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	for (size_t i = 0; i < n; i++) {
		if (v[i].fd[0] >= 0)
			v[i].counted = read_pair(&v[i], v[i].end, true);
		close_pair(&v[i]);
	}
}

/* ---- the simulator -------------------------------------------------------- */

static void count_sim(struct pair *v, size_t n, const struct t4_sim *sim, uint64_t window_ns)
{
	uint64_t t0 = t4_sim_epoch(sim), t1 = t0 + window_ns;

	for (size_t i = 0; i < n; i++) {
		if (!v[i].c->pmu->simulated)
			continue;
		v[i].start[0] = t4_sim_value_at(sim, v[i].c, t0);
		v[i].start[1] = t4_sim_value_at(sim, &v[i].alt, t0);
		v[i].end[0] = t4_sim_value_at(sim, v[i].c, t1);
		v[i].end[1] = t4_sim_value_at(sim, &v[i].alt, t1);
		v[i].counted = true;
	}
}

/* ---- the verdict ------------------------------------------------------------ */

/* The alias a counter's spec names ("pmu/alias,terms/"): its event in
 * the catalog and the sysfs alias; false when the spec names none. */
static bool alias_of(const struct t4_counter *c, const struct t4_kind_event **ke,
		     const struct t4_alias **a)
{
	const char *slash = strchr(c->spec, '/');
	char name[T4_NAME_MAX];

	if (!slash)
		return false;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(slash + 1, ",/"), slash + 1);
	*ke = t4_kind_event(c->pmu->kind, name);
	*a = t4_pmu_alias(c->pmu, name);
	return *ke && *a;
}

/* c counts the catalog's encoding from now on; its spec says event=0x...
 * where the alias's name was. */
static void use_catalog(struct t4_counter *c, const struct t4_counter *alt,
			const struct t4_kind_event *ke)
{
	const char *slash = strchr(c->spec, '/');
	const char *rest = slash + 1 + strcspn(slash + 1, ",/");
	char spec[T4_SPEC_MAX + 32];

	snprintf(spec, sizeof(spec), "%.*s/event=0x%llx%s", (int)(slash - c->spec), c->spec,
		 (unsigned long long)ke->config, rest);
	t4_strlcpy(c->spec, spec, sizeof(c->spec));
	c->config = alt->config;
	c->config1 = alt->config1;
	c->config2 = alt->config2;
	c->check_alias = false;
}

static bool judge(struct pair *p, uint64_t window_ns)
{
	const struct t4_kind_event *ke;
	const struct t4_alias *a;
	char was[T4_SPEC_MAX];

	if (!p->counted || p->end[0] != p->start[0] || p->end[1] <= p->start[1] ||
	    !alias_of(p->c, &ke, &a))
		return false;
	t4_strlcpy(was, p->c->spec, sizeof(was));
	use_catalog(p->c, &p->alt, ke);
	t4_warn("%s read 0 in %.0f ms while the catalog's event=0x%llx counted %llu: its sysfs "
		"alias (%s) looks wrong; recording %s instead", was, (double)window_ns / 1e6,
		(unsigned long long)ke->config, (unsigned long long)(p->end[1] - p->start[1]),
		a->terms, p->c->spec);
	return true;
}

int t4_events_check_aliases(struct t4_evlist *l, const struct t4_sim *sim, uint64_t period_ns)
{
	uint64_t window_ns = period_ns > T4_ALIAS_CHECK_MAX_NS / 2 ? T4_ALIAS_CHECK_MAX_NS : 2 * period_ns;
	struct pair *v;
	size_t n = 0;
	int switched = 0;

	if (window_ns < T4_ALIAS_CHECK_MIN_NS)
		window_ns = T4_ALIAS_CHECK_MIN_NS;
	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].check_alias;
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return t4_err(ENOMEM, "out of memory");
	n = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (!l->v[i].check_alias)
			continue;
		v[n].c = &l->v[i];
		catalog_counter(&l->v[i], &v[n].alt);
		v[n].fd[0] = v[n].fd[1] = -1;
		n++;
	}
	count_perf(v, n, window_ns);
	if (sim)
		count_sim(v, n, sim, window_ns);
	for (size_t i = 0; i < n; i++)
		switched += judge(&v[i], window_ns);
	free(v);
	return switched;
}
