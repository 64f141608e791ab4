/* sim_sysfs.c - writes the simulated Tegra410's sysfs tree: one directory
 * per PMU instance with the same files the kernel's drivers expose (type,
 * cpumask, associated_cpus, identifier, peer, format/, events/), plus the
 * marker file t410trace_simulated at the root so discovery labels every
 * PMU found there as simulated.
 *
 * Trade-offs: files are written once at create time with plain write()s;
 * the tree holds only what discovery reads (no power/, uevent, ...).
 */
#include "sim_internal.h"
#include "util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SIM_MARKER "t410trace_simulated"

/* Write printf-formatted text to <dir>/<file>. */
static int put(const char *dir, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int put(const char *dir, const char *file, const char *fmt, ...)
{
	char path[1024], text[256];
	va_list ap;
	int n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (n < 0 || (size_t)n >= sizeof(path))
		return t4_err(ENAMETOOLONG, "%s/%s: path too long", dir, file);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return t4_write_small_file(path, text);
}

static int write_pmu(const struct t4_sim *sim, const struct sim_pmu *p)
{
	const struct sim_kind *k = p->kind;
	char dir[768], sub[800];
	int err;

	snprintf(dir, sizeof(dir), "%s/%s", sim->root, p->name);
	snprintf(sub, sizeof(sub), "%s/format", dir);
	if ((err = t4_mkdirs(sub, 0755)) < 0)
		return err;
	snprintf(sub, sizeof(sub), "%s/events", dir);
	if ((err = t4_mkdirs(sub, 0755)) < 0)
		return err;
	if ((err = put(dir, "type", "%u\n", p->type)) < 0 ||
	    (err = put(dir, "cpumask", "%d\n", p->cpu)) < 0 ||
	    (err = put(dir, "associated_cpus", "%d\n", p->cpu)) < 0)
		return err;
	if (k->identifier &&
	    (err = put(dir, "identifier", "%s\n", t4_kind_by_id(k->id)->identifier)) < 0)
		return err;
	if (k->peer && (err = put(dir, "peer", "%s\n", k->peer)) < 0)
		return err;
	snprintf(sub, sizeof(sub), "%s/format", dir);
	for (size_t i = 0; i < k->n_fmts; i++)
		if ((err = put(sub, k->fmts[i].name, "%s\n", k->fmts[i].spec)) < 0)
			return err;
	snprintf(sub, sizeof(sub), "%s/events", dir);
	for (size_t i = 0; i < k->n_events; i++)
		if ((err = put(sub, k->events[i].name, "event=0x%llx\n",
			       (unsigned long long)k->events[i].config)) < 0)
			return err;
	return 0;
}

int sim_sysfs_write(const struct t4_sim *sim)
{
	int err = put(sim->root, SIM_MARKER,
		      "simulated Tegra410 (t410trace), seed 0x%llx\n",
		      (unsigned long long)sim->seed);

	for (unsigned i = 0; i < SIM_N_PMUS && err >= 0; i++)
		err = write_pmu(sim, &sim->pmus[i]);
	return err < 0 ? err : 0;
}
