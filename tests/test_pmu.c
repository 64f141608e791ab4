/* test_pmu.c - PMU discovery against the checked-in fixture trees (all
 * seven Tegra410 kinds, broken trees for every error path), the real
 * sysfs of this machine, format specs, and the `list` subcommand. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_testutil.h"
#include "collector/collector.h"
#include "sysfs_testutil.h"
#include "util/util.h"

static struct t4_pmu_set load(const char *root)
{
	struct t4_pmu_set set;
	int rc = t4_pmus_discover(&set, root);

	cr_assert_eq(rc, 0, "%s: %s", root, t4_errmsg());
	return set;
}

Test(pmu, fixture_has_all_seven_kinds)
{
	struct t4_pmu_set set = load(SYSFS_T410);
	size_t nk;
	const struct t4_kind *kinds = t4_kinds(&nk);

	cr_expect_eq(set.n, 17);
	cr_expect_not(set.simulated);
	for (size_t i = 1; i < set.n; i++)
		cr_expect_lt(strcmp(set.pmus[i - 1].name, set.pmus[i].name), 0, "sorted");
	for (size_t k = 0; k < nk; k++) {
		bool found = false;
		for (size_t i = 0; i < set.n; i++)
			found |= set.pmus[i].kind == &kinds[k];
		cr_expect(found, "no %s PMU", kinds[k].label);
	}
	t4_pmus_free(&set);
	cr_expect_eq(set.n, 0);
	cr_expect_null(set.pmus);
}

Test(pmu, fixture_pmu_details)
{
	struct t4_pmu_set set = load(SYSFS_T410);
	const struct t4_pmu *p = t4_pmus_find(&set, "nvidia_pcie_pmu_1_rc_3");
	const struct t4_format *f;

	cr_assert_not_null(p);
	cr_expect_eq(p->type, 43);
	cr_expect_eq(p->cpu, 72);
	cr_expect_str_eq(p->cpumask, "72");
	cr_expect_str_eq(p->associated_cpus, "72-143");
	cr_expect_eq(p->kind->id, T4_DOM_PCIE);
	cr_expect_eq(p->socket, 1);
	cr_expect_eq(p->instance, 3);
	cr_expect_eq(p->n_formats, 9);
	cr_expect_eq(p->n_aliases, 6);
	f = t4_pmu_format(p, "src_bdf");
	cr_assert_not_null(f);
	cr_expect_eq(f->field, T4_CFG1);
	cr_expect_eq(f->n_ranges, 1);
	cr_expect_eq(f->ranges[0].lo, 8);
	cr_expect_eq(f->ranges[0].hi, 23);
	cr_expect_str_eq(t4_pmu_alias(p, "cycles")->terms, "event=0x100000000");
	cr_expect_eq(t4_pmu_alias(p, "cycles")->scale, 1.0);
	cr_expect_str_eq(t4_pmu_alias(p, "cycles")->unit, "");
	cr_expect_null(t4_pmu_alias(p, "nope"));
	cr_expect_null(t4_pmu_format(p, "nope"));

	p = t4_pmus_find(&set, "nvidia_nvlink_c2c_pmu_0");
	cr_assert_not_null(p);
	cr_expect_str_eq(p->identifier, "NVDA2023");
	cr_expect_str_eq(p->peer, "nr_gpu=2");
	cr_expect_eq(p->instance, -1);
	cr_expect_eq(p->n_aliases, 9);
	cr_expect_eq(t4_pmu_format(p, "gpu_mask")->field, T4_CFG1);
	cr_expect_eq(t4_pmus_find(&set, "nvidia_nvclink_pmu_0")->n_aliases, 5);
	cr_expect_null(t4_pmu_format(t4_pmus_find(&set, "nvidia_nvclink_pmu_0"), "gpu_mask"));
	cr_expect_eq(t4_pmus_find(&set, "nvidia_nvdlink_pmu_0")->n_aliases, 3);
	cr_expect_str_eq(t4_pmus_find(&set, "nvidia_cmem_latency_pmu_0")->identifier, "NVDA2021");

	p = t4_pmus_find(&set, "software");
	cr_expect_eq(p->cpu, -1);
	cr_expect_str_eq(p->cpumask, "");
	cr_expect_null(p->kind);
	cr_expect_eq(p->socket, -1);
	t4_pmus_free(&set);
}

Test(pmu, alias_scale_unit_and_attrs_ignored)
{
	struct t4_pmu_set set = load(SYSFS_T410);
	const struct t4_pmu *p = t4_pmus_find(&set, "acme_pmu");
	const struct t4_alias *a;

	cr_assert_not_null(p);
	cr_expect_eq(p->n_aliases, 2); /* energy, hits; .scale .unit .per-pkg are attributes */
	a = t4_pmu_alias(p, "energy");
	cr_assert_not_null(a);
	cr_expect_eq(a->scale, 2.3283064365386962890625e-10);
	cr_expect_str_eq(a->unit, "Joules");
	cr_expect_str_eq(t4_pmu_alias(p, "hits")->terms, "event=0x2,umask=0x3");
	cr_expect_eq(t4_pmu_format(p, "event")->n_ranges, 2);
	t4_pmus_free(&set);
}

Test(pmu, format_spec_forms)
{
	struct t4_format f;
	char buf[64];

	cr_assert_eq(t4_format_parse("config:0-7,32-35", &f), 0);
	cr_expect_eq(f.field, T4_CFG0);
	cr_expect_eq(f.n_ranges, 2);
	cr_expect_eq(f.ranges[1].lo, 32);
	cr_expect_eq(f.ranges[1].hi, 35);
	cr_expect_eq(t4_format_bits(&f), 12);
	cr_expect_str_eq(t4_format_str(&f, buf, sizeof(buf)), "config:0-7,32-35");
	cr_assert_eq(t4_format_parse("config1:8", &f), 0);
	cr_expect_eq(f.field, T4_CFG1);
	cr_expect_eq(f.ranges[0].lo, 8);
	cr_expect_eq(f.ranges[0].hi, 8);
	cr_expect_str_eq(t4_format_str(&f, buf, sizeof(buf)), "config1:8");
	cr_assert_eq(t4_format_parse("config2:0-63", &f), 0);
	cr_expect_eq(f.field, T4_CFG2);
	cr_expect_eq(t4_format_bits(&f), 64);
	cr_assert_eq(t4_format_parse("config:1,3,5-6", &f), 0);
	cr_expect_eq(f.n_ranges, 3);
}

Test(pmu, format_spec_errors)
{
	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{ "config3:1", "'config3:1': format must start with config:, config1: or config2:" },
		{ "event:1", "'event:1': format must start with config:, config1: or config2:" },
		{ "config:9-3", "'config:9-3': range 9-3 runs backwards" },
		{ "config:64", "'config:64': bit 64 is beyond 63" },
		{ "config:", "'config:': expected a bit number at ''" },
		{ "config:1,", "'config:1,': expected a bit number at ''" },
		{ "config:0-7,4-9", "'config:0-7,4-9': bit ranges overlap" },
		{ "config:1x", "'config:1x': unexpected 'x'" },
		{ "config:0,1,2,3,4,5,6,7,8", "'config:0,1,2,3,4,5,6,7,8': more than 8 bit ranges" },
		/* found by tools/fuzz/fuzz_pmu: messages stay one line */
		{ "config:1\n2", "'config:1 2': unexpected ' '" },
	};
	struct t4_format f;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(t4_format_parse(bad[i].spec, &f), -EINVAL, "%s", bad[i].spec);
		cr_expect_str_eq(t4_errmsg(), bad[i].msg);
	}
}

Test(pmu, format_apply)
{
	struct t4_format f;
	uint64_t cfg[3] = { 0, 0, 0 };

	cr_assert_eq(t4_format_parse("config:0-7,32-35", &f), 0);
	cr_expect_eq(t4_format_apply(&f, 0x1ff, cfg), 0);
	cr_expect_eq(cfg[0], 0x1000000ffull);
	cr_expect_eq(t4_format_apply(&f, 0xfff, cfg), 0);
	cr_expect_eq(cfg[0], 0xf000000ffull);
	cr_expect_eq(t4_format_apply(&f, 0x1000, cfg), -ERANGE);
	cr_expect_str_eq(t4_errmsg(), "0x1000: value does not fit in config:0-7,32-35 (12 bits)");
	cr_expect_eq(cfg[0], 0xf000000ffull, "untouched on error");
	cr_expect_eq(t4_format_apply(&f, 0x0, cfg), 0);
	cr_expect_eq(cfg[0], 0, "a term clears its bits");
	cr_assert_eq(t4_format_parse("config2:63", &f), 0);
	cr_expect_eq(t4_format_apply(&f, 1, cfg), 0);
	cr_expect_eq(cfg[2], 1ull << 63);
	cr_assert_eq(t4_format_parse("config1:0-63", &f), 0);
	cr_expect_eq(t4_format_apply(&f, ~0ull, cfg), 0);
	cr_expect_eq(cfg[1], ~0ull);
}

Test(pmu, broken_trees)
{
	static const struct {
		const char *root, *msg;
	} bad[] = {
		{ "bad_type", SYSFS_FIX "bad_type/pmu_a/type: '12x' is not a decimal type number" },
		{ "bad_notype", SYSFS_FIX "bad_notype/pmu_a/type: No such file or directory" },
		{ "bad_format", SYSFS_FIX "bad_format/pmu_a/format/event: 'config3:0-7': format must "
				"start with config:, config1: or config2:" },
		{ "bad_range", SYSFS_FIX "bad_range/pmu_a/format/event: 'config:9-3': range 9-3 runs backwards" },
		{ "bad_overlap", SYSFS_FIX "bad_overlap/pmu_a/format/event: 'config:0-7,4-9': bit ranges overlap" },
		{ "bad_scale", SYSFS_FIX "bad_scale/pmu_a/events/x.scale: malformed scale 'fast'" },
		{ "bad_cpumask", SYSFS_FIX "bad_cpumask/pmu_a/cpumask: '0-': malformed CPU list" },
		{ "bad_event", SYSFS_FIX "bad_event/pmu_a/events/x: empty event" },
		{ "no_such_dir", SYSFS_FIX "no_such_dir: No such file or directory" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct t4_pmu_set set;
		char root[256];
		snprintf(root, sizeof(root), SYSFS_FIX "%s", bad[i].root);
		cr_expect_lt(t4_pmus_discover(&set, root), 0, "%s", root);
		cr_expect_str_eq(t4_errmsg(), bad[i].msg);
		cr_expect_eq(set.n, 0);
		cr_expect_null(set.pmus);
	}
}

Test(pmu, simulated_marker)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct t4_pmu_set set;

	t4t_tmpdir(dir, sizeof(dir), "t4pmu");
	snprintf(path, sizeof(path), "%s/nvidia_ucf_pmu_0", dir);
	cr_assert_eq(t4_mkdirs(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/nvidia_ucf_pmu_0/type", dir);
	cr_assert_eq(t4_write_small_file(path, "77\n"), 0);
	set = load(dir);
	cr_expect_not(set.simulated);
	cr_expect_not(set.pmus[0].simulated);
	t4_pmus_free(&set);
	snprintf(path, sizeof(path), "%s/t410trace_simulated", dir);
	cr_assert_eq(t4_write_small_file(path, "1\n"), 0);
	set = load(dir);
	cr_expect_eq(set.n, 1, "the marker file is not a PMU");
	cr_expect(set.simulated);
	cr_expect(set.pmus[0].simulated);
	cr_expect_eq(set.pmus[0].type, 77);
	cr_expect_eq(set.pmus[0].cpu, -1);
	cr_expect_eq(set.pmus[0].kind->id, T4_DOM_UCF);
	t4_pmus_free(&set);
	t4_rmtree(dir);
}

Test(pmu, real_sysfs)
{
	struct t4_pmu_set set = load(NULL);
	const struct t4_pmu *sw = t4_pmus_find(&set, "software");
	const struct t4_pmu *msr = t4_pmus_find(&set, "msr");
	char buf[64];

	cr_expect_str_eq(set.root, T4_SYSFS_DEFAULT);
	cr_assert_not_null(sw);
	cr_expect_eq(sw->type, 1);
	cr_expect_eq(sw->cpu, -1);
	cr_expect_not_null(t4_pmus_find(&set, "tracepoint"));
	if (msr) {
		cr_expect_str_eq(t4_pmu_alias(msr, "tsc")->terms, "event=0x00");
		cr_expect_str_eq(t4_format_str(t4_pmu_format(msr, "event"), buf, sizeof(buf)),
				 "config:0-63");
	}
	t4_pmus_free(&set);
}

/* ---- t410trace list ------------------------------------------------------- */

Test(pmu, cli_list_text_and_json)
{
	static char out[1 << 17];
	int rc = cli_t4(out, sizeof(out), "list --sysfs-root " SYSFS_T410);

	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "17 PMUs under " SYSFS_T410 "\n"));
	cr_expect_not_null(strstr(out, "\nUCF, socket 0\n  nvidia_ucf_pmu_0\n    type 20, cpumask 0, "
				       "associated_cpus 0-71\n"));
	cr_expect_not_null(strstr(out, "\nPCIE, socket 0\n  nvidia_pcie_pmu_0_rc_0\n"));
	cr_expect_not_null(strstr(out, "      src_bdf                config1:8-23\n"));
	cr_expect_not_null(strstr(out, "identifier NVDA2023, peer nr_gpu=2\n"));
	cr_expect_not_null(strstr(out, "      energy                 event=0x1ff  (scale 2.32831e-10)  [Joules]\n"));
	cr_expect_not_null(strstr(out, "      cycles                 event=0x100000000  [cycles]  the PMU's "
				       "dedicated cycle counter (its clock)  [clock]\n"));
	/* Tegra410 kinds first, then the others */
	cr_expect_lt(strstr(out, "NV-DLink, socket 0"), strstr(out, "\nOther PMUs\n"));
	cr_expect_lt(strstr(out, "\nUCF, socket 1"), strstr(out, "\nPCIE, socket 0"));
	rc = cli_t4(out, sizeof(out), "list --json --sysfs-root " SYSFS_T410);
	cr_assert_eq(rc, 0);
	cr_expect_eq(strncmp(out, "{\"root\":\"" SYSFS_T410 "\",\"simulated\":false,\"pmus\":[{\"name\":"
				  "\"nvidia_ucf_pmu_0\",\"kind\":\"UCF\",\"socket\":0,\"instance\":-1,"
				  "\"type\":20,\"cpu\":0,", 140), 0, "%.200s", out);
	cr_expect_not_null(strstr(out, "{\"name\":\"src_bdf\",\"spec\":\"config1:8-23\"}"));
}

Test(pmu, cli_list_sim_and_host)
{
	static char out[1 << 17];
	int rc = cli_t4(out, sizeof(out), "list --sim=3");

	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "34 PMUs under "));
	cr_expect_not_null(strstr(out, "(simulated Tegra410)\n"));
	cr_expect_not_null(strstr(out, "\nNV-DLink, socket 1 (simulated)\n"));
	rc = cli_t4(out, sizeof(out), "list");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "\nOther PMUs\n"));
	cr_expect_not_null(strstr(out, "  software\n    type 1, cpumask (none: per CPU)\n"));
}

Test(pmu, cli_list_usage_errors)
{
	static const struct {
		const char *args, *msg;
		int rc;
	} cases[] = {
		{ "list --bogus", "t410trace list: unknown option '--bogus' (see 't410trace list --help')\n", 2 },
		{ "list extra more", "t410trace list: more: unexpected argument (one GLOB at most) (see 't410trace list --help')\n", 2 },
		{ "list --sim nvidia_ucf_pmu_0/cycles", "t410trace: list nvidia_ucf_pmu_0/cycles: no PMU or event matches (did you mean nvidia_ucf_pmu_0?)\n", 2 },
		{ "list --metrics --sim", "t410trace list: --metrics lists the formulas of every kind; it takes no --sim or --sysfs-root (see 't410trace list --help')\n", 2 },
		{ "list --resolve cs cs", "t410trace list: --resolve cs: it takes no --metrics or GLOB (see 't410trace list --help')\n", 2 },
		{ "list --sim=abc", "t410trace list: --sim=abc: the seed must be a number (see 't410trace list --help')\n", 2 },
		{ "list --sim --sysfs-root /x", "t410trace: /x: No such file or directory\n", 2 },
		{ "list --sysfs-root /nonexistent", "t410trace: /nonexistent: No such file or directory\n", 2 },
		{ "list --sysfs-root " SYSFS_FIX "bad_type",
		  "t410trace: " SYSFS_FIX "bad_type/pmu_a/type: '12x' is not a decimal type number\n", 2 },
		{ "list --help", "usage: t410trace list [--sim[=SEED]]", 0 },
	};
	char out[8192];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = cli_t4(out, sizeof(out), "%s", cases[i].args);
		cr_expect_eq(rc, cases[i].rc, "%s: %d %s", cases[i].args, rc, out);
		cr_expect_eq(strncmp(out, cases[i].msg, strlen(cases[i].msg)), 0, "%s: got %s",
			     cases[i].args, out);
	}
}

/* A sysfs tree may name a PMU, an event or a filter with any bytes but
 * '/' (a crafted --sysfs-root, a driver's bug): `list` and `list --resolve`
 * show them as every other output does (util/text.c), so an escape
 * sequence cannot drive the terminal and a line break cannot forge a line.
 * They were printed raw. */
Test(pmu, cli_list_escapes_names_from_sysfs)
{
	static char out[1 << 16];
	char dir[PATH_MAX], pmu[PATH_MAX + 64], path[PATH_MAX + 128];
	int rc;

	t4t_tmpdir(dir, sizeof(dir), "t4pmu");
	snprintf(pmu, sizeof(pmu), "%s/esc\x1b[2Jpmu", dir);
	cr_assert_eq(t4_mkdirs(pmu, 0755), 0);
	snprintf(path, sizeof(path), "%s/events", pmu);
	cr_assert_eq(t4_mkdirs(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/format", pmu);
	cr_assert_eq(t4_mkdirs(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/type", pmu);
	cr_assert_eq(t4_write_small_file(path, "1\n"), 0);
	snprintf(path, sizeof(path), "%s/identifier", pmu);
	cr_assert_eq(t4_write_small_file(path, "id\x07\xff\n"), 0);
	snprintf(path, sizeof(path), "%s/format/fi\nlter", pmu);
	cr_assert_eq(t4_write_small_file(path, "config:0-7\n"), 0);
	snprintf(path, sizeof(path), "%s/events/new\nline", pmu);
	cr_assert_eq(t4_write_small_file(path, "config=0\n"), 0);
	snprintf(path, sizeof(path), "%s/events/new\nline.unit", pmu);
	cr_assert_eq(t4_write_small_file(path, "u\x1b[m\n"), 0);
	rc = cli_t4(out, sizeof(out), "list --sysfs-root '%s'", dir);
	cr_assert_eq(rc, 0, "%s", out);
	/* quoted as -e takes them (docs/EVENTS.md), then escaped */
	cr_expect_not_null(strstr(out, "\n  \"esc\\x1b[2Jpmu\"\n"), "%s", out);
	cr_expect_not_null(strstr(out, ", identifier id\\x07\\xff\n"), "%s", out);
	cr_expect_not_null(strstr(out, "\n      \"new\\x0aline\"          config=0  [u\\x1b[m]\n"),
			   "%s", out);
	cr_expect_not_null(strstr(out, "\n      \"fi\\x0alter\"           config:0-7\n"), "%s", out);
	cr_expect_null(strchr(out, '\x1b'), "%s", out);
	cr_expect_null(strstr(out, "\nline"), "%s", out);
	rc = cli_t4(out, sizeof(out), "list --sysfs-root '%s' --resolve 'esc*/config=0/'", dir);
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect_not_null(strstr(out, "esc\\x1b[2Jpmu  type=1 config=0x0 "), "%s", out);
	cr_expect_null(strchr(out, '\x1b'), "%s", out);
	t4_rmtree(dir);
}

/* A FIFO where a sysfs file should be (a crafted --sysfs-root) is
 * refused in one line naming it: discovery, `list` and `record` waited
 * for ever in its open for a writer that never came. */
Test(pmu, a_fifo_in_the_tree_is_refused, .timeout = 30)
{
	static char out[8192];
	char dir[PATH_MAX], pmu[PATH_MAX + 64], path[PATH_MAX + 128], want[PATH_MAX + 256];
	struct t4_pmu_set set;
	int rc;

	t4t_tmpdir(dir, sizeof(dir), "t4pmu");
	snprintf(pmu, sizeof(pmu), "%s/pmu_a", dir);
	cr_assert_eq(t4_mkdirs(pmu, 0755), 0);
	snprintf(path, sizeof(path), "%s/type", pmu);
	cr_assert_eq(mkfifo(path, 0600), 0, "%s", strerror(errno));
	cr_expect_eq(t4_pmus_discover(&set, dir), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a regular file", path);
	cr_expect_str_eq(t4_errmsg(), want);
	rc = cli_t4(out, sizeof(out), "list --sysfs-root '%s'", dir);
	snprintf(want, sizeof(want), "t410trace: %s: not a regular file\n", path);
	cr_expect_eq(rc, 2, "%s", out);
	cr_expect_str_eq(out, want);
	rc = cli_t4(out, sizeof(out), "record -q --sysfs-root '%s' -e 'pmu_a/config=0/' -d 10ms "
				      "-o '%s/x.t4t'", dir, dir);
	cr_expect_eq(rc, 2, "%s", out);
	cr_expect_str_eq(out, want);
	t4_rmtree(dir);
}

/* Found by tools/fuzz/fuzz_parse: util's parsers quote their input in
 * their messages; a line break there no longer splits the message. */
Test(pmu, parse_messages_one_line)
{
	uint64_t ns;

	cr_assert_eq(t4_parse_duration("100\nms", &ns), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "'100 ms': unknown unit ' ms' (use ns, us, ms, s, m (or min), h)");
	cr_assert_eq(t4_cpulist_first("0-1\r", NULL), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "'0-1 ': malformed CPU list");
}

/* Found while fuzzing t4_cpulist_first (a hand-made input under UBSan):
 * the CPU count was an int summed without a bound ("0-2147483647,
 * 0-2147483647" overflowed it) and CPU numbers beyond int were truncated
 * ("4294967297" read as CPU 1). */
Test(pmu, cpulist_bounds)
{
	int n = 0;

	cr_assert_eq(t4_cpulist_first("0-2147483647,0-2147483647", &n), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "'0-2147483647,0-2147483647': CPU 2147483647 above 65535");
	cr_assert_eq(t4_cpulist_first("4294967297", &n), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "'4294967297': CPU 4294967297 above 65535");
	cr_assert_eq(t4_cpulist_first("0-65535,7", &n), -EINVAL);
	cr_assert_str_eq(t4_errmsg(), "'0-65535,7': more than 65536 CPUs");
	cr_assert_eq(t4_cpulist_first("3,0-65535", &n), -EINVAL);
	cr_assert_eq(t4_cpulist_first("8-65535", &n), 8);
	cr_assert_eq(n, 65528);
	cr_assert_eq(t4_cpulist_first("1,3-5\n", &n), 1);
	cr_assert_eq(n, 4);
}
