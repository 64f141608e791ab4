/* pmu.c - PMU discovery: read every PMU under a sysfs root (the kernel's
 * /sys/bus/event_source/devices, a checked-in fixture tree or the
 * simulator's tree) into a plain struct t4_pmu_set.
 *
 * Trade-offs: everything is read once, up front, into owned arrays, so
 * later lookups are side-effect-free getters (linear scans: a machine has
 * tens of PMUs with tens of events). Discovery is strict: a malformed
 * `type`, `cpumask`, format spec or `.scale` file fails the whole call with
 * the file's full path, rather than silently dropping a PMU the user may be
 * about to ask for. Unknown extra files (power/, uevent, .per-pkg, ...) are
 * ignored. Once every PMU is read, kinds.c recognises the Tegra410 ones
 * (by identifier, then name: the socket of a PMU a generic driver named
 * depends on the other PMUs' CPUs, hence after the whole set).
 */
#include "collector.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIM_MARKER "t410trace_simulated"
#define PATH_CAP 1024

/* ---- format specs ------------------------------------------------------ */

static int parse_field(const char *spec, const char **rest, uint8_t *field)
{
	static const struct {
		const char *name;
		uint8_t field;
	} fields[] = { { "config1:", T4_CFG1 }, { "config2:", T4_CFG2 },
		       { "config:", T4_CFG0 } };

	for (size_t i = 0; i < T4_ARRAY_LEN(fields); i++) {
		size_t len = strlen(fields[i].name);
		if (!strncmp(spec, fields[i].name, len)) {
			*field = fields[i].field;
			*rest = spec + len;
			return 0;
		}
	}
	return t4_err(EINVAL, "'%s': format must start with config:, config1: or config2:", spec);
}

static int parse_bit(const char *spec, const char **p, uint8_t *bit)
{
	char *end;
	long v;

	if (**p < '0' || **p > '9')
		return t4_err(EINVAL, "'%s': expected a bit number at '%s'", spec, *p);
	v = strtol(*p, &end, 10);
	if (v > 63)
		return t4_err(EINVAL, "'%s': bit %ld is beyond 63", spec, v);
	*bit = (uint8_t)v;
	*p = end;
	return 0;
}

int t4_format_parse(const char *spec, struct t4_format *f)
{
	const char *p;
	uint64_t used = 0;
	int rc;

	rc = parse_field(spec, &p, &f->field);
	if (rc < 0)
		return rc;
	f->n_ranges = 0;
	for (;;) {
		uint8_t lo, hi;
		uint64_t bits;

		if (f->n_ranges == T4_FORMAT_MAX_RANGES)
			return t4_err(EINVAL, "'%s': more than %d bit ranges", spec, T4_FORMAT_MAX_RANGES);
		rc = parse_bit(spec, &p, &lo);
		if (rc < 0)
			return rc;
		hi = lo;
		if (*p == '-') {
			p++;
			rc = parse_bit(spec, &p, &hi);
			if (rc < 0)
				return rc;
			if (hi < lo)
				return t4_err(EINVAL, "'%s': range %u-%u runs backwards", spec, lo, hi);
		}
		bits = (hi == 63 ? ~0ull : (1ull << (hi + 1)) - 1) & ~((1ull << lo) - 1);
		if (used & bits)
			return t4_err(EINVAL, "'%s': bit ranges overlap", spec);
		used |= bits;
		f->ranges[f->n_ranges].lo = lo;
		f->ranges[f->n_ranges].hi = hi;
		f->n_ranges++;
		if (*p == '\0')
			return 0;
		if (*p != ',')
			return t4_err(EINVAL, "'%s': unexpected '%c'", spec, *p);
		p++;
	}
}

unsigned t4_format_bits(const struct t4_format *f)
{
	unsigned n = 0;

	for (unsigned i = 0; i < f->n_ranges; i++)
		n += f->ranges[i].hi - f->ranges[i].lo + 1u;
	return n;
}

const char *t4_format_str(const struct t4_format *f, char *buf, size_t cap)
{
	static const char *const names[] = { "config", "config1", "config2" };
	size_t len;

	snprintf(buf, cap, "%s:", names[f->field < 3 ? f->field : 0]);
	for (unsigned i = 0; i < f->n_ranges; i++) {
		len = strlen(buf);
		if (f->ranges[i].lo == f->ranges[i].hi)
			snprintf(buf + len, cap - len, "%s%u", i ? "," : "", f->ranges[i].lo);
		else
			snprintf(buf + len, cap - len, "%s%u-%u", i ? "," : "",
				 f->ranges[i].lo, f->ranges[i].hi);
	}
	return buf;
}

int t4_format_apply(const struct t4_format *f, uint64_t value, uint64_t config[3])
{
	unsigned width = t4_format_bits(f), vbit = 0;
	uint64_t *cfg = &config[f->field < 3 ? f->field : 0];

	if (width < 64 && (value >> width) != 0) {
		char spec[96];
		return t4_err(ERANGE, "0x%llx: value does not fit in %s (%u bits)",
			      (unsigned long long)value, t4_format_str(f, spec, sizeof(spec)), width);
	}
	for (unsigned i = 0; i < f->n_ranges; i++) {
		for (unsigned b = f->ranges[i].lo; b <= f->ranges[i].hi; b++, vbit++) {
			uint64_t m = 1ull << b;
			if ((value >> vbit) & 1)
				*cfg |= m;
			else
				*cfg &= ~m;
		}
	}
	return 0;
}

/* ---- reading one PMU --------------------------------------------------- */

static int skip_dots(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void free_names(struct dirent **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Entries of dir sorted by name; 0 entries when dir does not exist. */
static int list_dir(const char *dir, struct dirent ***names)
{
	int n = scandir(dir, names, skip_dots, name_cmp);

	if (n < 0 && errno == ENOENT) {
		*names = NULL;
		return 0;
	}
	if (n < 0)
		return t4_err(errno, "%s: %s", dir, strerror(errno));
	return n;
}

/* Read dir/file into buf; "" and 0 when the file is absent. */
static int read_opt(const char *dir, const char *file, char *buf, size_t cap)
{
	char path[PATH_CAP + 16 + 256];

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	return t4_read_small_file(path, buf, cap);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

static int read_formats(struct t4_pmu *pmu, const char *pmudir)
{
	char dir[PATH_CAP + 16], path[PATH_CAP + 16 + 256], spec[128];
	struct dirent **names;
	int n, rc = 0;

	snprintf(dir, sizeof(dir), "%s/format", pmudir);
	n = list_dir(dir, &names);
	if (n <= 0)
		return n;
	pmu->formats = calloc((size_t)n, sizeof(*pmu->formats));
	if (!pmu->formats) {
		free_names(names, n);
		return t4_err(ENOMEM, "%s: out of memory", dir);
	}
	for (int i = 0; i < n && rc >= 0; i++) {
		struct t4_format *f = &pmu->formats[pmu->n_formats];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (strlen(names[i]->d_name) >= sizeof(f->name)) {
			rc = t4_err(EINVAL, "%s: format name too long", path);
			break;
		}
		rc = t4_read_small_file(path, spec, sizeof(spec));
		if (rc < 0)
			break;
		rc = t4_format_parse(spec, f);
		if (rc < 0) {
			rc = t4_err(EINVAL, "%s: %s", path, t4_errmsg());
			break;
		}
		strcpy(f->name, names[i]->d_name);
		pmu->n_formats++;
	}
	free_names(names, n);
	return rc < 0 ? rc : 0;
}

static bool is_alias_attr(const char *name)
{
	return ends_with(name, ".scale") || ends_with(name, ".unit") ||
	       ends_with(name, ".per-pkg") || ends_with(name, ".snapshot");
}

static int read_alias(struct t4_alias *a, const char *dir, const char *name)
{
	char path[PATH_CAP + 16 + 256 + 8], file[T4_NAME_MAX + 16], buf[64];
	char *end;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (strlen(name) >= sizeof(a->name))
		return t4_err(EINVAL, "%s: event name too long", path);
	strcpy(a->name, name);
	rc = t4_read_small_file(path, a->terms, sizeof(a->terms));
	if (rc < 0)
		return rc;
	if (rc == 0)
		return t4_err(EINVAL, "%s: empty event", path);
	a->scale = 1.0;
	snprintf(file, sizeof(file), "%s.scale", name);
	rc = read_opt(dir, file, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	if (rc > 0) {
		a->scale = strtod(buf, &end);
		if (*end || end == buf || !isfinite(a->scale))
			return t4_err(EINVAL, "%s.scale: malformed scale '%s'", path, buf);
	}
	snprintf(file, sizeof(file), "%s.unit", name);
	rc = read_opt(dir, file, a->unit, sizeof(a->unit));
	return rc < 0 ? rc : 0;
}

static int read_aliases(struct t4_pmu *pmu, const char *pmudir)
{
	char dir[PATH_CAP + 16];
	struct dirent **names;
	int n, rc = 0;

	snprintf(dir, sizeof(dir), "%s/events", pmudir);
	n = list_dir(dir, &names);
	if (n <= 0)
		return n;
	pmu->aliases = calloc((size_t)n, sizeof(*pmu->aliases));
	if (!pmu->aliases) {
		free_names(names, n);
		return t4_err(ENOMEM, "%s: out of memory", dir);
	}
	for (int i = 0; i < n && rc >= 0; i++) {
		if (is_alias_attr(names[i]->d_name))
			continue;
		rc = read_alias(&pmu->aliases[pmu->n_aliases], dir, names[i]->d_name);
		if (rc >= 0)
			pmu->n_aliases++;
	}
	free_names(names, n);
	return rc < 0 ? rc : 0;
}

static int read_type(struct t4_pmu *pmu, const char *pmudir)
{
	char path[PATH_CAP + 8], buf[32];
	uint64_t v;
	int rc;

	snprintf(path, sizeof(path), "%s/type", pmudir);
	rc = t4_read_small_file(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	for (const char *p = buf; *p; p++)
		if (*p < '0' || *p > '9')
			return t4_err(EINVAL, "%s: '%s' is not a decimal type number", path, buf);
	if (!buf[0] || t4_parse_u64(buf, &v) < 0 || v > UINT32_MAX)
		return t4_err(EINVAL, "%s: '%s' is not a decimal type number", path, buf);
	pmu->type = (uint32_t)v;
	return 0;
}

static int read_cpus(struct t4_pmu *pmu, const char *pmudir)
{
	int rc = read_opt(pmudir, "cpumask", pmu->cpumask, sizeof(pmu->cpumask));

	if (rc < 0)
		return rc;
	pmu->cpu = -1;
	if (rc > 0) {
		rc = t4_cpulist_first(pmu->cpumask, NULL);
		if (rc < 0)
			return t4_err(EINVAL, "%s/cpumask: %s", pmudir, t4_errmsg());
		pmu->cpu = rc;
	}
	rc = read_opt(pmudir, "associated_cpus", pmu->associated_cpus,
		      sizeof(pmu->associated_cpus));
	if (rc > 0 && t4_cpulist_first(pmu->associated_cpus, NULL) < 0)
		return t4_err(EINVAL, "%s/associated_cpus: %s", pmudir, t4_errmsg());
	return rc < 0 ? rc : 0;
}

static int read_pmu(struct t4_pmu *pmu, const char *root, const char *name)
{
	char dir[PATH_CAP];
	int rc;

	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	if (strlen(name) >= sizeof(pmu->name))
		return t4_err(EINVAL, "%s: PMU name too long", dir);
	strcpy(pmu->name, name);
	if ((rc = read_type(pmu, dir)) < 0 || (rc = read_cpus(pmu, dir)) < 0 ||
	    (rc = read_opt(dir, "identifier", pmu->identifier, sizeof(pmu->identifier))) < 0 ||
	    (rc = read_opt(dir, "peer", pmu->peer, sizeof(pmu->peer))) < 0 ||
	    (rc = read_formats(pmu, dir)) < 0 || (rc = read_aliases(pmu, dir)) < 0)
		return rc;
	return 0;
}

static bool is_dir(const char *root, const char *name)
{
	char path[PATH_CAP];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void free_pmu(struct t4_pmu *pmu)
{
	free(pmu->formats);
	free(pmu->aliases);
	pmu->formats = NULL;
	pmu->aliases = NULL;
}

int t4_pmus_discover(struct t4_pmu_set *set, const char *root)
{
	char marker[PATH_CAP];
	struct dirent **names;
	int n, rc = 0;

	memset(set, 0, sizeof(*set));
	if (!root)
		root = T4_SYSFS_DEFAULT;
	if (strlen(root) >= sizeof(set->root))
		return t4_err(ENAMETOOLONG, "%s: path too long", root);
	strcpy(set->root, root);
	n = scandir(root, &names, skip_dots, name_cmp);
	if (n < 0)
		return t4_err(errno, "%s: %s", root, strerror(errno));
	set->pmus = calloc((size_t)n + 1, sizeof(*set->pmus));
	if (!set->pmus) {
		free_names(names, n);
		return t4_err(ENOMEM, "%s: out of memory", root);
	}
	snprintf(marker, sizeof(marker), "%s/%s", root, SIM_MARKER);
	set->simulated = access(marker, F_OK) == 0;
	for (int i = 0; i < n && rc >= 0; i++) {
		struct t4_pmu *pmu = &set->pmus[set->n];

		if (!is_dir(root, names[i]->d_name))
			continue;
		set->n++; /* counted before reading, so a failure frees it */
		rc = read_pmu(pmu, root, names[i]->d_name);
		pmu->simulated = set->simulated;
	}
	free_names(names, n);
	if (rc >= 0)
		rc = t4_kinds_recognise(set);
	if (rc < 0)
		t4_pmus_free(set);
	return rc < 0 ? rc : 0;
}

void t4_pmus_free(struct t4_pmu_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		free_pmu(&set->pmus[i]);
	free(set->pmus);
	set->pmus = NULL;
	set->n = 0;
}

const struct t4_pmu *t4_pmus_find(const struct t4_pmu_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->pmus[i].name, name))
			return &set->pmus[i];
	return NULL;
}

const struct t4_format *t4_pmu_format(const struct t4_pmu *pmu, const char *name)
{
	for (size_t i = 0; i < pmu->n_formats; i++)
		if (!strcmp(pmu->formats[i].name, name))
			return &pmu->formats[i];
	return NULL;
}

const struct t4_alias *t4_pmu_alias(const struct t4_pmu *pmu, const char *name)
{
	for (size_t i = 0; i < pmu->n_aliases; i++)
		if (!strcmp(pmu->aliases[i].name, name))
			return &pmu->aliases[i];
	return NULL;
}
