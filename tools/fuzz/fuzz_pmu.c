/* fuzz_pmu.c - libFuzzer harness for sysfs discovery's parsers (pmu.c
 * t4_format_parse and friends, util t4_cpulist_first), and for discovery
 * itself over a one-PMU tree written from the input.
 *
 * Input: fields separated by NUL bytes:
 *   0 a format spec  1 a CPU list  2 a value for the format
 *   3.. written into a scratch tree as type, cpumask, format/f,
 *       events/e, events/e.scale, events/e.unit, identifier, then
 *       discovered and "p/e/" and "p/f=<2>/" parsed against it.
 * Checks: one-line messages; a parsed format prints back to a spec that
 * parses to the same format; t4_format_apply touches only its bits and
 * t4_format_extract-style reading gives the value back; a CPU list's
 * first CPU and count are sane.
 */
#include "fuzz_common.h"
#include "collector/collector.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <unistd.h>

#define MAX_FIELDS 10

static void check_format(const char *spec, const char *val)
{
	struct t4_format f = { 0 }, g = { 0 };
	uint64_t cfg[3] = { 0, 0, 0 }, v = 0, back = 0;
	unsigned vbit = 0;
	char buf[256];
	int rc = t4_format_parse(spec, &f);

	fuzz_check_rc(rc, "t4_format_parse");
	if (rc < 0)
		return;
	FUZZ_CHECK(f.field < 3 && f.n_ranges >= 1 && f.n_ranges <= T4_FORMAT_MAX_RANGES,
		   "field %u, %u ranges", f.field, f.n_ranges);
	t4_format_str(&f, buf, sizeof(buf));
	FUZZ_CHECK(t4_format_parse(buf, &g) == 0, "'%s' printed as '%s' does not parse: %s",
		   spec, buf, t4_errmsg());
	FUZZ_CHECK(g.field == f.field && g.n_ranges == f.n_ranges &&
		   !memcmp(g.ranges, f.ranges, sizeof(f.ranges[0]) * f.n_ranges),
		   "'%s' -> '%s' parses differently", spec, buf);
	FUZZ_CHECK(t4_format_bits(&f) >= 1 && t4_format_bits(&f) <= 64, "%u bits",
		   t4_format_bits(&f));
	if (t4_parse_u64(val, &v) < 0)
		v = strlen(val);
	rc = t4_format_apply(&f, v, cfg);
	fuzz_check_rc(rc, "t4_format_apply");
	if (rc < 0)
		return;
	for (int i = 0; i < 3; i++)
		FUZZ_CHECK(i == f.field || cfg[i] == 0, "config%d touched", i);
	for (unsigned i = 0; i < f.n_ranges; i++)
		for (unsigned b = f.ranges[i].lo; b <= f.ranges[i].hi; b++, vbit++)
			back |= ((cfg[f.field] >> b) & 1) << vbit;
	FUZZ_CHECK(back == v, "0x%llx read back as 0x%llx from %s", (unsigned long long)v,
		   (unsigned long long)back, buf);
}

static void check_cpulist(const char *list)
{
	int count = -1, rc = t4_cpulist_first(list, &count);

	fuzz_check_rc(rc, "t4_cpulist_first");
	if (rc >= 0)
		FUZZ_CHECK(count >= 1, "'%s': first %d, count %d", list, rc, count);
}

/* The lowest CPU of want that have lacks (record -C against the online
 * CPUs): one of want's, not have's; -1 only when have holds want's first. */
static void check_cpulist_absent(const char *want, const char *have)
{
	int absent = -2, rc = t4_cpulist_first_absent(want, have, &absent);

	fuzz_check_rc(rc, "t4_cpulist_first_absent");
	if (rc < 0)
		return;
	if (absent >= 0)
		FUZZ_CHECK(t4_cpulist_has(want, absent) == 1 && t4_cpulist_has(have, absent) == 0,
			   "'%s' against '%s': %d", want, have, absent);
	else
		FUZZ_CHECK(absent == -1 && t4_cpulist_has(have, t4_cpulist_first(want, NULL)) == 1,
			   "'%s' against '%s': none absent (%d)", want, have, absent);
}

/* Fields 3.. as a sysfs tree; discover it and parse two events. */
static void check_tree(char **fld, int n)
{
	static const char *const files[] = { "type", "cpumask", "format/f", "events/e",
					     "events/e.scale", "events/e.unit", "identifier" };
	char dir[PATH_MAX], path[PATH_MAX + 64], spec[300];
	struct t4_pmu_set set;
	struct t4_evlist l = { 0 };
	int rc;

	if (n <= 3)
		return;
	rc = snprintf(dir, sizeof(dir), "%s/t4fuzz_pmuXXXXXX", t4_tmp_root());
	if (rc < 0 || (size_t)rc >= sizeof(dir) || !mkdtemp(dir))
		abort(); /* nowhere to put the tree: a replay must not pass empty */
	for (int i = 3; i < n && i - 3 < (int)T4_ARRAY_LEN(files); i++) {
		snprintf(path, sizeof(path), "%s/p/%s", dir, files[i - 3]);
		*strrchr(path, '/') = '\0';
		if (t4_mkdirs(path, 0755) < 0)
			abort();
		snprintf(path, sizeof(path), "%s/p/%s", dir, files[i - 3]);
		if (t4_write_small_file(path, fld[i]) < 0)
			abort();
	}
	rc = t4_pmus_discover(&set, dir);
	fuzz_check_rc(rc, "t4_pmus_discover");
	if (rc >= 0) {
		const char *specs[2] = { "p/e/", spec };
		snprintf(spec, sizeof(spec), "p/f=%.200s/", fld[2]);
		for (int i = 0; i < 2; i++) {
			rc = t4_events_parse(&l, &set, specs[i]);
			fuzz_check_rc(rc, "t4_events_parse");
		}
		t4_evlist_free(&l);
		t4_pmus_free(&set);
	}
	t4_rmtree(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char *s, *fld[MAX_FIELDS];
	int n = 0;

	if (len > 2048)
		return 0;
	s = fuzz_str(data, len);
	for (size_t i = 0; n < MAX_FIELDS;) {
		fld[n++] = s + i;
		i += strlen(s + i) + 1;
		if (i > len)
			break;
	}
	while (n < 3)
		fld[n++] = "";
	check_format(fld[0], fld[2]);
	check_cpulist(fld[1]);
	check_cpulist_absent(fld[1], fld[2]);
	check_tree(fld, n);
	free(s);
	return 0;
}
