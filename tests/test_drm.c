/* test_drm.c - the DRM fdinfo source (seed 003): the parser against every
 * rule of the spec, the scanner against a fixture /proc tree, the delta and
 * gauge logic over a sequence of reads, and record end to end.
 *
 * Fixtures: tests/fixtures/fdinfo/ holds fdinfo texts in the shape real
 * drivers write (i915, amdgpu, xe, panfrost, one without drm-client-id, a
 * DRM fd without usage stats). tests/fixtures/proc/ is a /proc tree: 100
 * (the workload's root) with fds 3 and 4 on i915 client 7 (a dup), fd 5 on
 * a card without stats and non-DRM fds; its child 101 sharing client 7
 * (inherited) and holding amdgpu client 9; grandchild 102 with a client
 * without drm-client-id; 200 outside the tree (client 50). The fd links
 * read /dev/dri/... as the kernel shows them: the link text is the data,
 * nothing is opened there. Tests that change the tree work on a copy.
 *
 * The source is driven by hand (t4_drm_scan, t4_drm_answer with a packet
 * capture standing in for the ring), so every read sees exactly the files
 * the test wrote: no timing.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/collector.h"
#include "h1_testutil.h"
#include "util/util.h"

#define FIX_FDINFO "tests/fixtures/fdinfo/"
#define FIX_PROC "tests/fixtures/proc"

/* ---- parser helpers ------------------------------------------------------- */

static void parse_file(const char *name, struct t4_drm_info *in)
{
	char path[256];

	snprintf(path, sizeof(path), FIX_FDINFO "%s", name);
	cr_assert_eq(t4_drm_read(path, in), 0, "%s: %s", name, t4_errmsg());
}

static uint64_t value(const struct t4_drm_info *in, enum t4_drm_key key, const char *name)
{
	const struct t4_drm_value *v = t4_drm_find(in, key, name);

	cr_assert_not_null(v, "no key %d '%s'", key, name);
	return v->v;
}

/* Parse "drm-driver: x\n" + body; returns the parse's result. */
static int parse_body(const char *body, struct t4_drm_info *in)
{
	char text[1024];

	snprintf(text, sizeof(text), "drm-driver: x\n%s", body);
	return t4_drm_parse(text, "test", in);
}

/* ---- the parser ------------------------------------------------------------- */

Test(drm, parse_i915)
{
	struct t4_drm_info in;

	parse_file("i915.txt", &in);
	cr_assert_str_eq(in.driver, "i915");
	cr_assert_str_eq(in.pdev, "0000:00:02.0");
	cr_assert(in.has_client_id);
	cr_assert_eq(in.client_id, 7);
	cr_assert_eq(in.bad_lines, 0, "%s", in.first_bad);
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "render"), 25662044495ull);
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "video-enhance"), 0);
	cr_assert_eq(value(&in, T4_DRM_TOTAL, "system0"), 4608ull << 10);
	cr_assert_eq(value(&in, T4_DRM_RESIDENT, "system0"), 4608ull << 10);
	cr_assert_eq(value(&in, T4_DRM_PURGEABLE, "stolen-system0"), 0);
	cr_assert_eq(value(&in, T4_DRM_ACTIVE, "system0"), 0);
	cr_assert_eq(value(&in, T4_DRM_SHARED, "system0"), 0);
	/* capacity: as given, else the spec's default of 1 */
	cr_assert_eq(t4_drm_capacity(&in, "video"), 2);
	cr_assert_eq(t4_drm_capacity(&in, "render"), 1);
	cr_assert_eq(in.n, 15); /* 10 memory, 4 engines, 1 capacity: pos:, flags: ignored */
}

Test(drm, parse_amdgpu_driver_specific_keys_ignored)
{
	struct t4_drm_info in;

	parse_file("amdgpu.txt", &in);
	cr_assert_str_eq(in.driver, "amdgpu");
	cr_assert_eq(in.client_id, 9);
	cr_assert_eq(in.bad_lines, 0, "%s", in.first_bad);
	/* "drm-memory-gtt: \t9800 KiB": mixed whitespace after the colon */
	cr_assert_eq(value(&in, T4_DRM_MEMORY, "gtt"), 9800ull << 10);
	cr_assert_eq(value(&in, T4_DRM_MEMORY, "vram"), 1003520ull << 10);
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "enc_1"), 0);
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "gfx"), 1196524937ull);
	cr_assert_eq(in.n, 9); /* amd-*, pasid: not ours */
}

Test(drm, parse_xe_cycles_and_capacity)
{
	struct t4_drm_info in;

	parse_file("xe.txt", &in);
	cr_assert_eq(in.bad_lines, 0, "%s", in.first_bad);
	cr_assert_eq(value(&in, T4_DRM_CYCLES, "rcs"), 28257900ull);
	cr_assert_eq(value(&in, T4_DRM_TOTAL_CYCLES, "rcs"), 7655183225ull);
	cr_assert_eq(value(&in, T4_DRM_TOTAL_CYCLES, "ccs"), 7655183225ull);
	/* drm-total-cycles- is not a memory region named "cycles-rcs" */
	cr_assert_null(t4_drm_find(&in, T4_DRM_TOTAL, "cycles-rcs"));
	cr_assert_eq(value(&in, T4_DRM_TOTAL, "vram0"), 2ull << 30);
	cr_assert_eq(value(&in, T4_DRM_RESIDENT, "vram0"), 23ull << 20);
	cr_assert_eq(t4_drm_capacity(&in, "ccs"), 4);
	cr_assert_eq(t4_drm_capacity(&in, "rcs"), 1);
}

Test(drm, parse_panfrost_unknown_keys_ignored)
{
	struct t4_drm_info in;

	parse_file("panfrost.txt", &in);
	cr_assert_eq(in.bad_lines, 0, "%s", in.first_bad);
	cr_assert_str_eq(in.pdev, "");
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "vertex-tiler"), 71932239ull);
	cr_assert_eq(value(&in, T4_DRM_CYCLES, "fragment"), 1424359409ull);
	cr_assert_eq(value(&in, T4_DRM_TOTAL, "memory"), 290ull << 20);
	cr_assert_eq(value(&in, T4_DRM_PURGEABLE, "memory"), 128ull << 10);
	cr_assert_eq(in.n, 9); /* drm-maxfreq-, drm-curfreq- (Hz): not in the spec */
}

/* Every unit rule, one line each: what the key takes, what it refuses. */
Test(drm, units)
{
	static const struct {
		const char *line;
		enum t4_drm_key key;
		const char *name;
		bool ok;
		uint64_t v;
	} rows[] = {
		{ "drm-engine-gfx: 12 ns", T4_DRM_ENGINE, "gfx", true, 12 },
		{ "drm-engine-gfx: 12ns", T4_DRM_ENGINE, "gfx", true, 12 },
		{ "drm-engine-gfx: 12", T4_DRM_ENGINE, "gfx", true, 12 },
		{ "drm-engine-gfx: 12 us", T4_DRM_ENGINE, "gfx", false, 0 },
		{ "drm-engine-gfx: 12 KiB", T4_DRM_ENGINE, "gfx", false, 0 },
		{ "drm-memory-vram: 5", T4_DRM_MEMORY, "vram", true, 5 },
		{ "drm-memory-vram: 3 KiB", T4_DRM_MEMORY, "vram", true, 3072 },
		{ "drm-memory-vram: 3 MiB", T4_DRM_MEMORY, "vram", true, 3ull << 20 },
		{ "drm-total-vram: 2 GiB", T4_DRM_TOTAL, "vram", true, 2ull << 30 },
		{ "drm-shared-vram: 7 kB", T4_DRM_SHARED, "vram", false, 0 },
		{ "drm-active-vram: 7 ns", T4_DRM_ACTIVE, "vram", false, 0 },
		{ "drm-resident-vram: 1 TiB", T4_DRM_RESIDENT, "vram", false, 0 },
		{ "drm-cycles-rcs: 9", T4_DRM_CYCLES, "rcs", true, 9 },
		{ "drm-cycles-rcs: 9 ns", T4_DRM_CYCLES, "rcs", false, 0 },
		{ "drm-total-cycles-rcs: 9 KiB", T4_DRM_TOTAL_CYCLES, "rcs", false, 0 },
		{ "drm-engine-capacity-vcs: 2 ns", T4_DRM_CAPACITY, "vcs", false, 0 },
		{ "drm-engine-gfx: 18446744073709551615 ns", T4_DRM_ENGINE, "gfx", true, UINT64_MAX },
		{ "drm-engine-gfx: 18446744073709551616 ns", T4_DRM_ENGINE, "gfx", false, 0 },
		{ "drm-memory-vram: 17179869184 GiB", T4_DRM_MEMORY, "vram", false, 0 },
		{ "drm-memory-vram: 17179869183 GiB", T4_DRM_MEMORY, "vram", true, 17179869183ull << 30 },
		{ "drm-engine-gfx: -1 ns", T4_DRM_ENGINE, "gfx", false, 0 },
		{ "drm-engine-gfx: 0x10", T4_DRM_ENGINE, "gfx", false, 0 },
		{ "drm-engine-gfx:", T4_DRM_ENGINE, "gfx", false, 0 },
	};

	for (size_t i = 0; i < T4_ARRAY_LEN(rows); i++) {
		struct t4_drm_info in;
		char body[128];

		snprintf(body, sizeof(body), "%s\n", rows[i].line);
		cr_assert_eq(parse_body(body, &in), 0, "%s", rows[i].line);
		if (rows[i].ok) {
			cr_expect_eq(in.bad_lines, 0, "'%s': %s", rows[i].line, in.first_bad);
			cr_expect_eq(value(&in, rows[i].key, rows[i].name), rows[i].v, "%s",
				     rows[i].line);
		} else {
			cr_expect_eq(in.bad_lines, 1, "'%s' taken", rows[i].line);
			cr_expect_eq(in.n, 0, "'%s' taken", rows[i].line);
		}
	}
}

Test(drm, whitespace_rules)
{
	struct t4_drm_info in;

	/* any run of blanks after the colon, trailing blanks, CRLF, blank lines */
	cr_assert_eq(t4_drm_parse("drm-driver:i915\r\n\n"
				  "drm-pdev: \t 0000:00:02.0  \n"
				  "drm-engine-render:\t\t 10 ns \t\n"
				  "drm-engine-copy: 20\tns\n",
				  "ws", &in), 0, "%s", t4_errmsg());
	cr_assert_str_eq(in.driver, "i915");
	cr_assert_str_eq(in.pdev, "0000:00:02.0");
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "render"), 10);
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "copy"), 20);
	cr_assert_eq(in.bad_lines, 0, "%s", in.first_bad);
	/* neither keys nor values hold whitespace */
	cr_assert_eq(parse_body("drm-engine-render : 10 ns\n"
				"drm-pdev: 0000:00 02.0\n"
				"drm-engine-copy: 1 2 ns\n"
				"drm-engine-video enhance: 3 ns\n",
				&in), 0);
	cr_assert_eq(in.bad_lines, 4, "%s", in.first_bad);
	cr_assert_eq(in.n, 0);
	cr_assert_str_eq(in.pdev, "");
}

Test(drm, missing_keys)
{
	struct t4_drm_info in;

	/* drm-driver is mandatory: without it the file is no DRM client's */
	cr_assert_eq(t4_drm_read(FIX_FDINFO "card-no-stats.txt", &in), -ENODATA);
	cr_assert(strstr(t4_errmsg(), "card-no-stats.txt"), "%s", t4_errmsg());
	cr_assert(strstr(t4_errmsg(), "drm-driver"), "%s", t4_errmsg());
	cr_assert_eq(t4_drm_parse("", "empty", &in), -ENODATA);
	/* a broken drm-driver line: the message names the file and line */
	cr_assert_eq(t4_drm_parse("pos: 0\ndrm-driver: two words\ndrm-engine-gfx: 1 ns\n",
				  "broken", &in), -ENODATA);
	cr_assert(strstr(t4_errmsg(), "broken:2:"), "%s", t4_errmsg());
	cr_assert_null(strchr(t4_errmsg(), '\n'));
	/* the optional keys may be missing */
	parse_file("no-client-id.txt", &in);
	cr_assert(!in.has_client_id);
	cr_assert_str_eq(in.pdev, "");
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "gpu"), 77);
	cr_assert_eq(t4_drm_read(FIX_FDINFO "no-such-file", &in), -ENOENT);
}

Test(drm, capacity_default_one_zero_refused)
{
	struct t4_drm_info in;

	cr_assert_eq(parse_body("drm-engine-vcs: 5 ns\n"
				"drm-engine-capacity-vcs: 0\n"
				"drm-engine-capacity-ccs: 4\n",
				&in), 0);
	cr_assert_eq(in.bad_lines, 1);
	cr_assert(strstr(in.first_bad, "test:3: zero capacity"), "%s", in.first_bad);
	cr_assert_null(t4_drm_find(&in, T4_DRM_CAPACITY, "vcs"));
	cr_assert_eq(t4_drm_capacity(&in, "vcs"), 1);
	cr_assert_eq(t4_drm_capacity(&in, "ccs"), 4);
}

Test(drm, bad_lines_skipped_and_counted)
{
	struct t4_drm_info in;

	cr_assert_eq(parse_body("drm-engine-render: 10 ns\n"
				"garbage without a colon\n"
				"drm-engine-render: 11 ns\n"   /* repeated: the first stays */
				"drm-client-id: seven\n"
				"drm-engine-a/b: 1 ns\n"       /* odd name */
				"drm-engine-: 1 ns\n"          /* no name */
				"drm-engine-waytoolongnameforanengine: 1 ns\n"
				"drm-engine-copy: 3 ns\n"
				"drm-vendor-thing: any value at all\n"
				"amd-evicted: whatever\n",
				&in), 0);
	cr_assert_eq(in.bad_lines, 6, "%s", in.first_bad);
	cr_assert(strstr(in.first_bad, "test:3: not a 'key: value' line"), "%s", in.first_bad);
	cr_assert(!in.has_client_id);
	cr_assert_eq(in.n, 2);
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "render"), 10);
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "copy"), 3);
}

Test(drm, key_table)
{
	const struct t4_drm_keydef *k = t4_drm_keydef(T4_DRM_ENGINE);

	cr_assert_str_eq(k->label, "engine");
	cr_assert_str_eq(k->unit, "ns");
	cr_assert(!k->gauge);
	cr_assert(t4_drm_keydef(T4_DRM_CAPACITY)->gauge);
	cr_assert(!t4_drm_keydef(T4_DRM_TOTAL_CYCLES)->gauge);
	cr_assert_str_eq(t4_drm_keydef(T4_DRM_TOTAL_CYCLES)->prefix, "drm-total-cycles-");
	for (int key = T4_DRM_MEMORY; key <= T4_DRM_KEY_LAST; key++) {
		cr_assert(t4_drm_keydef(key)->gauge);
		cr_assert_str_eq(t4_drm_keydef(key)->unit, "bytes");
	}
	cr_assert_null(t4_drm_keydef(0));
	cr_assert_null(t4_drm_keydef(T4_DRM_KEY_LAST + 1));
}

