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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_testutil.h"
#include "collector/collector.h"
#include "sysfs_testutil.h"
#include "sched_testutil.h" /* t4t_need_bpf_trigger (tests/probe.h) */
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

/* A FIFO in a --proc-root tree reads as empty (no drm-driver: no
 * client's), where the read waited for ever for a writer. */
Test(drm, a_fifo_reads_as_empty, .timeout = 30)
{
	struct t4_drm_info in;
	char dir[PATH_MAX], path[PATH_MAX + 8];

	t4t_tmpdir(dir, sizeof(dir), "t4drm");
	snprintf(path, sizeof(path), "%s/7", dir);
	cr_assert_eq(mkfifo(path, 0600), 0, "%s", strerror(errno));
	cr_assert_eq(t4_drm_read(path, &in), -ENODATA, "%s", t4_errmsg());
	cr_assert_eq(in.n, 0);
	t4_rmtree(dir);
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

/* ---- the source, driven by hand ------------------------------------------------ */

/* What the source put, standing in for a ring. */
struct cap {
	struct t4_packet *v;
	size_t n, cap;
	bool drop_rets; /* refuse return packets, as a full ring does */
};

static int cap_emit(void *ud, const struct t4_packet *p)
{
	struct cap *c = ud;

	if (c->drop_rets && p->type == T4_PKT_RET)
		return -ENOBUFS;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->v = realloc(c->v, c->cap * sizeof(*c->v));
		cr_assert_not_null(c->v);
	}
	c->v[c->n++] = *p;
	return 0;
}

static const struct t4_event_pkt *find_event(const struct cap *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].type == T4_PKT_EVENT && !strcmp(c->v[i].event.name, name))
			return &c->v[i].event;
	return NULL;
}

static const struct t4_ret_pkt *last_ret(const struct cap *c, uint32_t domain)
{
	for (size_t i = c->n; i-- > 0;)
		if (c->v[i].type == T4_PKT_RET && c->v[i].ret.domain_id == domain)
			return &c->v[i].ret;
	return NULL;
}

/* The count of an event in its domain's last return packet. */
static uint64_t count_of(const struct cap *c, const char *name)
{
	const struct t4_event_pkt *e = find_event(c, name);
	const struct t4_ret_pkt *r = e ? last_ret(c, e->domain_id) : NULL;

	cr_assert_not_null(e, "no event %s", name);
	cr_assert_not_null(r);
	cr_assert_lt(e->index, r->n_counts, "%s not in the last return", name);
	return r->counts[e->index];
}

static size_t count_type(const struct cap *c, uint32_t type)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		n += c->v[i].type == type;
	return n;
}

static void answer(struct t4_drm *s, struct cap *c, uint64_t trigger)
{
	cr_assert_geq(t4_drm_answer(s, trigger, CLOCK_MONOTONIC_RAW, cap_emit, c), 0);
}

/* The source on a proc root: every process, or the tree of pid (a root
 * known before the recording, as --pid gives). */
static struct t4_drm *open_src(const char *root, bool every, int pid)
{
	struct t4_drm_opts o = { .proc_root = root, .every_process = every, .roots = &pid,
				 .n_roots = pid > 0 };
	struct t4_drm *s;

	cr_assert_eq(t4_drm_open(&s, &o), 0, "%s", t4_errmsg());
	return s;
}

/* ---- a /proc tree of the test's own ----------------------------------------- */

struct tree {
	char dir[PATH_MAX];
	char proc[PATH_MAX + 8];
};

static void tree_make(struct tree *t, bool copy_fixture)
{
	char out[512];

	t4t_tmpdir(t->dir, sizeof(t->dir), "t4drm");
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->dir);
	if (copy_fixture) {
		cr_assert_eq(cli_run(out, sizeof(out), "cp -a " FIX_PROC " '%s' 2>&1", t->proc), 0,
			     "%s", out);
	} else {
		cr_assert_eq(t4_mkdirs(t->proc, 0755), 0);
	}
}

static void tree_free(struct tree *t)
{
	cr_assert_eq(t4_rmtree(t->dir), 0);
}

static void tree_path(const struct tree *t, int pid, const char *what, int fd, char *buf,
		      size_t cap)
{
	if (fd >= 0)
		snprintf(buf, cap, "%s/%d/%s/%d", t->proc, pid, what, fd);
	else
		snprintf(buf, cap, "%s/%d/%s", t->proc, pid, what);
}

/* Process pid (child of ppid) with fd on a render node, its fdinfo text. */
static void put_client(const struct tree *t, int pid, int ppid, int fd, const char *text)
{
	char path[PATH_MAX + 64], stat[64];

	tree_path(t, pid, "fd", -1, path, sizeof(path));
	cr_assert_eq(t4_mkdirs(path, 0755), 0);
	tree_path(t, pid, "fdinfo", -1, path, sizeof(path));
	cr_assert_eq(t4_mkdirs(path, 0755), 0);
	tree_path(t, pid, "stat", -1, path, sizeof(path));
	snprintf(stat, sizeof(stat), "%d (proc %d) S %d 1 1 0", pid, pid, ppid);
	cr_assert_eq(t4_write_small_file(path, stat), 0);
	tree_path(t, pid, "fd", fd, path, sizeof(path));
	unlink(path);
	cr_assert_eq(symlink("/dev/dri/renderD128", path), 0);
	tree_path(t, pid, "fdinfo", fd, path, sizeof(path));
	unlink(path);
	cr_assert_eq(t4_write_small_file(path, text), 0);
}

static void drop_fd(const struct tree *t, int pid, int fd)
{
	char path[PATH_MAX + 64];

	tree_path(t, pid, "fd", fd, path, sizeof(path));
	cr_assert_eq(unlink(path), 0);
	tree_path(t, pid, "fdinfo", fd, path, sizeof(path));
	cr_assert_eq(unlink(path), 0);
}

/* An i915-like client 7: render busy ns, video capacity, system memory. */
static const char *client7(uint64_t render_ns, unsigned capacity, const char *memory)
{
	static char text[256];

	snprintf(text, sizeof(text),
		 "drm-driver:\ti915\ndrm-client-id:\t7\ndrm-pdev:\t0000:00:02.0\n"
		 "drm-engine-render:\t%llu ns\ndrm-engine-capacity-video:\t%u\n"
		 "drm-total-system0:\t%s\n",
		 (unsigned long long)render_ns, capacity, memory);
	return text;
}

/* ---- scanning ------------------------------------------------------------------ */

/* The fixture tree from its root 100: client 7 on four fds of three
 * processes is one client; the card without stats and the non-DRM fds are
 * no clients; 200 is not in the tree. */
Test(drm, scan_tree_counts_shared_and_dup_fds_once)
{
	struct t4_drm *s = open_src(FIX_PROC, false, 100);
	struct cap c = { 0 };
	struct t4_drm_stats st;

	answer(s, &c, 0);
	answer(s, &c, 1);
	t4_drm_stats(s, &st);
	cr_assert_eq(st.clients, 3, "clients %llu", (unsigned long long)st.clients);
	cr_assert_eq(st.clients_no_id, 1);
	cr_assert_eq(st.events, 15 + 9 + 2);
	cr_assert_eq(st.bad_lines, 0, "%s", st.first_bad);
	cr_assert_not_null(find_event(&c, "c7.engine.render"));
	cr_assert_not_null(find_event(&c, "c9.memory.gtt"));
	cr_assert_not_null(find_event(&c, "p102-3.engine.gpu"));
	cr_assert_null(find_event(&c, "c50.engine.render"));
	/* one event per (client, key), however many fds show it */
	size_t renders = 0;
	for (size_t i = 0; i < c.n; i++)
		renders += c.v[i].type == T4_PKT_EVENT &&
			   strstr(c.v[i].event.name, ".engine.render") != NULL;
	cr_assert_eq(renders, 1);
	free(c.v);
	t4_drm_free(s);
}

Test(drm, scan_every_process)
{
	struct t4_drm *s = open_src(FIX_PROC, true, 0);
	struct cap c = { 0 };
	struct t4_drm_stats st;

	answer(s, &c, 0);
	answer(s, &c, 1);
	t4_drm_stats(s, &st);
	cr_assert_eq(st.clients, 4);
	cr_assert_not_null(find_event(&c, "c50.engine.render"));
	free(c.v);
	t4_drm_free(s);
}

/* A file written as text of n bytes: lines of filler ("x-pad-<k>: ...",
 * keys every parser ignores) up to about pad bytes, then tail. */
static char *padded_text(size_t pad, const char *tail)
{
	size_t cap = pad + strlen(tail) + 128, len = 0;
	char *text = malloc(cap);

	cr_assert_not_null(text);
	for (unsigned k = 0; len < pad; k++)
		len += (size_t)snprintf(text + len, cap - len, "x-pad-%u: %060u\n", k, k);
	snprintf(text + len, cap - len, "%s", tail);
	return text;
}

/* A fdinfo file of any real size is read whole (it was cut at 16 KB and
 * then skipped without a word): keys after 40 KB of driver lines and after
 * a line longer than the read buffer (skipped and counted) are taken. */
Test(drm, long_files_read_whole)
{
	struct t4_drm_info in;
	struct tree t;
	char path[PATH_MAX + 16], *text, *line = malloc(40001);

	tree_make(&t, false);
	snprintf(path, sizeof(path), "%s/big", t.dir);
	text = padded_text(40000, "drm-driver: i915\ndrm-engine-render: 42 ns\n");
	cr_assert_eq(t4_write_small_file(path, text), 0);
	cr_assert_eq(t4_drm_read(path, &in), 0, "%s", t4_errmsg());
	cr_assert_str_eq(in.driver, "i915");
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "render"), 42);
	cr_assert_eq(in.bad_lines, 0, "%s", in.first_bad);
	free(text);

	cr_assert_not_null(line);
	memset(line, 'y', 40000);
	line[40000] = '\0';
	text = malloc(3 * 40100);
	cr_assert_not_null(text);
	/* lines over the read buffer, judged as a whole text's would be: a DRM
	 * key's (malformed), another key's (ignored), one without ':' (malformed) */
	snprintf(text, 3 * 40100, "drm-driver: xe\ndrm-engine-x: %s\nlong: %s\n%s\n"
		 "drm-engine-copy: 7 ns\n", line, line, line);
	cr_assert_eq(t4_write_small_file(path, text), 0);
	cr_assert_eq(t4_drm_read(path, &in), 0, "%s", t4_errmsg());
	cr_assert_eq(value(&in, T4_DRM_ENGINE, "copy"), 7);
	cr_assert_eq(in.bad_lines, 2);
	cr_assert(strstr(in.first_bad, ":2: line too long"), "%s", in.first_bad);
	free(text);
	free(line);
	tree_free(&t);
}

/* The file read through its 16 KB buffer gives what its text parsed whole
 * gives, wherever the buffer's end falls: inside a key, on a newline, in a
 * line of 16 KB less a byte, after a last line without its newline. */
Test(drm, read_in_pieces_equals_parse)
{
	struct t4_drm_info a, b;
	struct tree t;
	char path[PATH_MAX + 16];
	static char text[40000], q[16381]; /* "x: " + q: a line of 16383 bytes */

	memset(q, 'q', sizeof(q) - 1);
	tree_make(&t, false);
	snprintf(path, sizeof(path), "%s/f", t.dir);
	for (size_t pad = 16300; pad < 16420; pad += 7) {
		for (int last_nl = 0; last_nl < 2; last_nl++) {
			size_t len = (size_t)snprintf(text, sizeof(text), "drm-driver: i915\n");
			memset(text + len, 'p', pad);
			len += pad;
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						":\ndrm-engine-render: %zu ns\nbad line\n"
						"drm-client-id: 3\nx: %s\ndrm-engine-copy: 9 ns%s",
						pad, q, last_nl ? "\n" : "");
			cr_assert_eq(t4_write_small_file(path, text), 0);
			cr_assert_eq(t4_drm_parse(text, path, &a), 0, "%s", t4_errmsg());
			cr_assert_eq(t4_drm_read(path, &b), 0, "%s", t4_errmsg());
			cr_assert_eq(a.n, b.n, "pad %zu", pad);
			cr_assert_eq(value(&b, T4_DRM_ENGINE, "render"), pad);
			cr_assert_eq(value(&b, T4_DRM_ENGINE, "copy"), 9);
			cr_assert_eq(b.client_id, 3);
			cr_assert_eq(a.bad_lines, b.bad_lines, "pad %zu", pad);
			cr_assert_str_eq(a.first_bad, b.first_bad);
		}
	}
	tree_free(&t);
}

/* A client whose fdinfo is over T4_DRM_FDINFO_MAX (1 MiB): refused,
 * counted and named, never skipped without a word; the others count. */
Test(drm, too_large_fdinfo_refused_and_counted)
{
	struct t4_drm_info in;
	struct t4_drm_stats st;
	struct cap c = { 0 };
	struct tree t;
	char path[PATH_MAX + 64], *text;

	tree_make(&t, false);
	put_client(&t, 100, 1, 3, client7(5, 1, "1 KiB"));
	text = padded_text(T4_DRM_FDINFO_MAX, "drm-driver: i915\ndrm-client-id: 8\n");
	put_client(&t, 100, 1, 4, text);
	free(text);
	tree_path(&t, 100, "fdinfo", 4, path, sizeof(path));
	cr_assert_eq(t4_drm_read(path, &in), -EFBIG);
	cr_assert(strstr(t4_errmsg(), "over 1024 KiB"), "%s", t4_errmsg());

	struct t4_drm *s = open_src(t.proc, false, 100);
	answer(s, &c, 0);
	answer(s, &c, 1);
	t4_drm_stats(s, &st);
	cr_assert_eq(st.clients, 1);
	cr_assert_geq(st.too_large, 1);
	cr_assert_str_eq(st.first_too_large, path);
	cr_assert_not_null(find_event(&c, "c7.engine.render"));
	free(c.v);
	t4_drm_free(s);
	/* record's summary says so, once, with the file */
	static char out[1 << 16];
	char log[PATH_MAX + 16];
	snprintf(log, sizeof(log), "%s/s.t4t", t.dir);
	cr_assert_eq(cli_t4(out, sizeof(out), "record --sim --proc-root '%s' --duration 100ms "
			    "-o '%s'", t.proc, log), 0, "%s", out);
	cr_assert(strstr(out, "DRM: 1 client"), "%s", out);
	cr_assert(strstr(out, "of fdinfo files over 1024 KiB refused (first: "), "%s", out);
	cr_assert(strstr(out, path), "%s", out);
	tree_free(&t);
}

Test(drm, bad_proc_root_is_an_error)
{
	struct t4_drm_opts o = { .proc_root = "tests/fixtures/no-such-proc", .every_process = true };
	struct t4_drm *s;

	cr_assert_eq(t4_drm_open(&s, &o), -ENOENT);
	cr_assert(strstr(t4_errmsg(), "no-such-proc"), "%s", t4_errmsg());
}

/* ---- counting -------------------------------------------------------------- */

/* Event and domain packets: names, units, flags, spec; the domain starts
 * with a baseline (FIRST, no counts) and its packets precede the return
 * packet that first carries their counts. */
Test(drm, packets_describe_every_count)
{
	struct t4_drm *s = open_src(FIX_PROC, false, 100);
	struct cap c = { 0 };
	struct t4_domain_set ds = { 0 };

	cr_assert_eq(t4_drm_attach(s, &ds), 0);
	cr_assert_eq(ds.n, 1);
	cr_assert_eq(ds.v[0].kind, T4_DOM_DRM);
	cr_assert_eq(ds.v[0].cpu, -1);
	cr_assert_str_eq(ds.v[0].name, "drm");
	answer(s, &c, 0);
	cr_assert_eq(c.v[0].type, T4_PKT_DOMAIN);
	cr_assert_eq(c.v[0].domain.kind, T4_DOM_DRM);
	cr_assert_eq(c.v[0].domain.clock_event, -1);
	cr_assert_eq(c.v[0].domain.cpu, -1);
	cr_assert_str_eq(c.v[0].domain.name, "drm");
	cr_assert_eq(c.v[1].type, T4_PKT_RET);
	cr_assert_eq(c.v[1].ret.flags, T4_RET_FIRST);
	cr_assert_eq(c.v[1].ret.n_counts, 0);
	cr_assert_eq(c.v[1].ret.local_clock, c.v[1].ret.read_begin_ns);
	cr_assert_eq(c.n, 2);
	answer(s, &c, 1);
	cr_assert_eq(count_type(&c, T4_PKT_EVENT), 26);
	cr_assert_eq(c.v[c.n - 1].type, T4_PKT_RET);
	cr_assert_eq(c.v[c.n - 1].ret.n_counts, 26);
	cr_assert_eq(c.v[c.n - 1].ret.trigger_id, 1);

	const struct t4_event_pkt *e = find_event(&c, "c7.engine.render");
	cr_assert_not_null(e);
	cr_assert_eq(e->domain_id, ds.v[0].id);
	cr_assert_str_eq(e->pmu, "drm");
	cr_assert_str_eq(e->unit, "ns");
	cr_assert_eq(e->flags, 0);
	cr_assert_eq(e->config, T4_DRM_ENGINE);
	cr_assert_eq(e->config1, 7);
	cr_assert_str_eq(e->spec, "drm-engine-render,pdev=0000:00:02.0,client-id=7,driver=i915");
	e = find_event(&c, "c7.capacity.video");
	cr_assert_eq(e->flags, T4_EV_GAUGE);
	cr_assert_str_eq(e->unit, "");
	e = find_event(&c, "c9.memory.vram");
	cr_assert_eq(e->flags, T4_EV_GAUGE);
	cr_assert_str_eq(e->unit, "bytes");
	e = find_event(&c, "p102-3.engine.gpu");
	cr_assert_str_eq(e->spec, "drm-engine-gpu,pid=102,fd=3,driver=msm");
	/* found before the first answer: counted from the baseline; levels as they are */
	cr_assert_eq(count_of(&c, "c7.engine.render"), 0);
	cr_assert_eq(count_of(&c, "c7.capacity.video"), 2);
	cr_assert_eq(count_of(&c, "c9.memory.vram"), 1003520ull << 10);
	free(c.v);
	t4_drm_free(s);
	t4_domains_free(&ds);
}

/* The spec's rule over a sequence of reads: a lower value keeps the higher
 * until it catches up (never negative, nothing counted twice); a dropped
 * return packet is carried by the next; gauges are levels; a client that
 * goes keeps its events (deltas 0, levels 0) and comes back where it was. */
Test(drm, deltas_and_gauges_over_reads)
{
	struct tree t;
	struct cap c = { 0 };

	tree_make(&t, false);
	struct t4_drm *s = open_src(t.proc, true, 0);
	answer(s, &c, 0); /* nothing yet: no domain */
	cr_assert_eq(c.n, 0);

	put_client(&t, 10, 1, 3, client7(1000, 2, "4 KiB"));
	cr_assert_eq(t4_drm_scan(s), 0, "%s", t4_errmsg());
	answer(s, &c, 1); /* domain and baseline */
	cr_assert_eq(count_type(&c, T4_PKT_EVENT), 0);
	answer(s, &c, 2); /* a new client counts from 0 */
	cr_assert_eq(count_of(&c, "c7.engine.render"), 1000);
	cr_assert_eq(count_of(&c, "c7.capacity.video"), 2);
	cr_assert_eq(count_of(&c, "c7.total.system0"), 4096);

	put_client(&t, 10, 1, 3, client7(500, 2, "8 KiB")); /* went down */
	answer(s, &c, 3);
	cr_assert_eq(count_of(&c, "c7.engine.render"), 0);
	cr_assert_eq(count_of(&c, "c7.total.system0"), 8192);
	put_client(&t, 10, 1, 3, client7(1200, 2, "8 KiB")); /* caught up */
	answer(s, &c, 4);
	cr_assert_eq(count_of(&c, "c7.engine.render"), 200);

	put_client(&t, 10, 1, 3, client7(1500, 2, "8 KiB"));
	c.drop_rets = true; /* a full ring */
	answer(s, &c, 5);
	c.drop_rets = false;
	put_client(&t, 10, 1, 3, client7(1600, 2, "1 MiB"));
	answer(s, &c, 6);
	cr_assert_eq(last_ret(&c, 0)->trigger_id, 6);
	cr_assert_eq(count_of(&c, "c7.engine.render"), 400, "the dropped one's 300 carried");
	cr_assert_eq(count_of(&c, "c7.total.system0"), 1 << 20);

	drop_fd(&t, 10, 3); /* closed: gone */
	answer(s, &c, 7);
	cr_assert_eq(count_of(&c, "c7.engine.render"), 0);
	cr_assert_eq(count_of(&c, "c7.capacity.video"), 0);
	cr_assert_eq(count_of(&c, "c7.total.system0"), 0);
	cr_assert_eq(t4_drm_scan(s), 0);
	answer(s, &c, 8);
	cr_assert_eq(count_of(&c, "c7.total.system0"), 0);

	put_client(&t, 11, 1, 5, client7(1900, 2, "4 KiB")); /* passed on: back */
	cr_assert_eq(t4_drm_scan(s), 0);
	answer(s, &c, 9);
	cr_assert_eq(count_of(&c, "c7.engine.render"), 300);
	cr_assert_eq(count_of(&c, "c7.total.system0"), 4096);
	cr_assert_eq(count_type(&c, T4_PKT_EVENT), 3, "no event twice");

	uint64_t sum = 0; /* the sum of the deltas is the highest value read */
	const struct t4_event_pkt *e = find_event(&c, "c7.engine.render");
	for (size_t i = 0; i < c.n; i++)
		if (c.v[i].type == T4_PKT_RET && e->index < c.v[i].ret.n_counts)
			sum += c.v[i].ret.counts[e->index];
	cr_assert_eq(sum, 1900);
	free(c.v);
	t4_drm_free(s);
	tree_free(&t);
}

/* While no client is found, the scanner walks every process's fds less and
 * less often (each 2, 4, ... 32 scans) but a new process's at each scan: a
 * process that was already there and opens a client later is found at the
 * next full walk, a new one at once. */
Test(drm, quiet_scans_walk_new_processes_at_once)
{
	static const char text[] = "drm-driver:\ti915\ndrm-client-id:\t%d\n"
				   "drm-pdev:\t0000:00:02.0\ndrm-engine-render:\t5 ns\n";
	char buf[200];
	struct tree t;
	struct cap c = { 0 };
	struct t4_drm_stats st;

	tree_make(&t, false);
	snprintf(buf, sizeof(buf), text, 8);
	put_client(&t, 20, 1, 3, buf);
	drop_fd(&t, 20, 3); /* process 20: no DRM fd */
	struct t4_drm *s = open_src(t.proc, true, 0); /* its first scan: full, nothing */
	answer(s, &c, 0);

	put_client(&t, 20, 1, 4, buf); /* the old process opens a client */
	snprintf(buf, sizeof(buf), text, 9);
	put_client(&t, 21, 1, 3, buf); /* a new process with one */
	cr_assert_eq(t4_drm_scan(s), 0, "%s", t4_errmsg());
	answer(s, &c, 1);
	t4_drm_stats(s, &st);
	cr_assert_eq(st.clients, 1, "the new process's only: %llu", (unsigned long long)st.clients);

	cr_assert_eq(t4_drm_scan(s), 0, "%s", t4_errmsg()); /* the second: a full walk */
	answer(s, &c, 2);
	t4_drm_stats(s, &st);
	cr_assert_eq(st.clients, 2, "the old process's too");
	free(c.v);
	t4_drm_free(s);
	tree_free(&t);
}

/* A child process with a new client while recording: its events are
 * appended (the return packets grow), described before they are counted,
 * and counted from 0; the clients known before count from their baseline. */
Test(drm, client_appears_mid_recording)
{
	struct tree t;
	struct cap c = { 0 };

	tree_make(&t, true);
	struct t4_drm *s = open_src(t.proc, false, 100);
	answer(s, &c, 0);
	answer(s, &c, 1);
	const struct t4_ret_pkt *r = last_ret(&c, 0);
	uint32_t before = r->n_counts;
	size_t mark = c.n;

	put_client(&t, 103, 100, 4,
		   "drm-driver: i915\ndrm-client-id: 11\ndrm-pdev: 0000:00:02.0\n"
		   "drm-engine-render: 777 ns\ndrm-engine-copy: 5 ns\n");
	cr_assert_eq(t4_drm_scan(s), 0);
	answer(s, &c, 2);
	r = last_ret(&c, 0);
	cr_assert_eq(r->n_counts, before + 2);
	cr_assert_eq(c.v[mark].type, T4_PKT_EVENT);
	cr_assert_eq(c.v[mark].event.index, before);
	cr_assert_str_eq(c.v[mark].event.name, "c11.engine.render");
	cr_assert_eq(c.v[mark + 1].event.index, before + 1);
	cr_assert_eq(c.v[mark + 2].type, T4_PKT_RET);
	cr_assert_eq(count_of(&c, "c11.engine.render"), 777);
	cr_assert_eq(count_of(&c, "c11.engine.copy"), 5);
	cr_assert_eq(count_of(&c, "c7.engine.render"), 0);

	struct t4_drm_stats st;
	t4_drm_stats(s, &st);
	cr_assert_eq(st.clients, 4);
	free(c.v);
	t4_drm_free(s);
	tree_free(&t);
}

/* Past 64 events a client's keys go on in "drm.1"; both domains start
 * with their own baseline. Two devices giving the same client-id are two
 * clients, named apart. */
/* Process 20, a client of 70 engines: more events than one domain holds. */
static void put_client_of_70(const struct tree *t)
{
	char text[4096];
	size_t len = 0;

	len += snprintf(text + len, sizeof(text) - len,
			"drm-driver: xe\ndrm-client-id: 4\ndrm-pdev: 0000:01:00.0\n");
	for (int i = 0; i < 70; i++)
		len += snprintf(text + len, sizeof(text) - len, "drm-engine-e%d: %d ns\n", i, i);
	put_client(t, 20, 1, 3, text);
}

Test(drm, second_domain_and_same_id_on_two_devices)
{
	struct tree t;
	struct cap c = { 0 };

	tree_make(&t, false);
	put_client_of_70(&t);
	put_client(&t, 21, 1, 3,
		   "drm-driver: xe\ndrm-client-id: 4\ndrm-pdev: 0000:02:00.0\ndrm-engine-rcs: 9 ns\n");
	struct t4_drm *s = open_src(t.proc, true, 0);
	answer(s, &c, 0);
	answer(s, &c, 1);
	const struct t4_event_pkt *e = find_event(&c, "c4.engine.e69");
	cr_assert_not_null(e);
	cr_assert_eq(e->domain_id, T4_DRM_EXTRA_ID);
	cr_assert_not_null(find_event(&c, "c4@1.engine.rcs"));
	cr_assert_eq(count_type(&c, T4_PKT_DOMAIN), 2);
	cr_assert_eq(last_ret(&c, 0)->n_counts, 64);
	cr_assert_eq(last_ret(&c, T4_DRM_EXTRA_ID)->n_counts, 7);
	free(c.v);
	t4_drm_free(s);
	tree_free(&t);
}

/* PMUs named "drm" and "drm.1" (a cpumask: their domains are named so):
 * the DRM source's domains are marked (FORMAT.md 4.2), "drm~<crc>" and
 * "drm~<crc>.1", and every domain name is unique. A second "drm.1" was
 * logged once a client passed 64 events (every output that keys domains
 * by name summed or mixed them), and a PMU named "drm" made record refuse
 * to start. */
Test(drm, domain_names_apart_from_pmus)
{
	struct tree t;
	struct cap c = { 0 };
	struct t4_pmu pmu[2] = { { .name = "drm", .cpumask = "0", .type = 50, .socket = -1, .instance = -1 },
				 { .name = "drm.1", .cpumask = "0", .type = 51, .socket = -1, .instance = -1 } };
	struct t4_counter ev[2] = { { .pmu = &pmu[0], .name = "x", .spec = "drm/x/", .type = 50,
				      .group = -1, .scale = 1.0 },
				    { .pmu = &pmu[1], .name = "x", .spec = "drm.1/x/", .type = 51,
				      .group = -1, .scale = 1.0 } };
	struct t4_evlist l = { .v = ev, .n = 2, .cap = 2 };
	struct t4_domain_set ds;
	char want[2][T4_NAME_MAX];
	const char *names[8];
	size_t n = 0;

	cr_assert_eq(t4_domains_build(&ds, &l), 0, "%s", t4_errmsg());
	cr_assert_str_eq(ds.v[0].name, "drm");
	cr_assert_str_eq(ds.v[1].name, "drm.1");
	tree_make(&t, false);
	put_client_of_70(&t);
	struct t4_drm *s = open_src(t.proc, true, 0);
	cr_assert_eq(t4_drm_attach(s, &ds), 0, "%s", t4_errmsg());
	snprintf(want[0], sizeof(want[0]), "drm~%08x", t4_crc32c(0, "drm", 3));
	snprintf(want[1], sizeof(want[1]), "drm~%08x.1", t4_crc32c(0, "drm", 3));
	cr_assert_eq(ds.n, 3);
	cr_assert_str_eq(ds.v[2].name, want[0]);
	answer(s, &c, 0);
	answer(s, &c, 1);
	for (size_t i = 0; i < ds.n; i++)
		names[n++] = ds.v[i].name;
	for (size_t i = 0; i < c.n; i++)
		if (c.v[i].type == T4_PKT_DOMAIN && c.v[i].domain.domain_id != ds.v[2].id)
			names[n++] = c.v[i].domain.name;
	cr_assert_eq(n, 4, "the PMUs' two, the DRM source's two");
	cr_assert_str_eq(names[3], want[1]);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			cr_assert_str_neq(names[i], names[j]);
	free(c.v);
	t4_drm_free(s);
	t4_domains_free(&ds);
	tree_free(&t);
}

/* ---- record, end to end ----------------------------------------------------------- */

/* The DRM domains of a log read back: events and their totals (sum of the
 * deltas; a gauge's last level), each count checked to be described
 * before it comes. */
#define LV_TRIGGERS 4096

struct logview {
	struct t4_domain_pkt dom[16];
	size_t n_dom;
	struct t4_event_pkt ev[128];
	uint64_t total[128];
	size_t n_ev;
	/* per trigger ID below LV_TRIGGERS: scheduler 0's ref_ns and the
	 * DRM returns' read_begin_ns (0: none) */
	uint64_t ref_ns[LV_TRIGGERS], drm_begin[LV_TRIGGERS];
};

static bool is_drm(const struct logview *lv, uint32_t domain)
{
	for (size_t i = 0; i < lv->n_dom; i++)
		if (lv->dom[i].domain_id == domain)
			return true;
	return false;
}

static int ev_slot(const struct logview *lv, uint32_t domain, uint32_t index)
{
	for (size_t i = 0; i < lv->n_ev; i++)
		if (lv->ev[i].domain_id == domain && lv->ev[i].index == index)
			return (int)i;
	return -1;
}

static void take_packet(struct logview *lv, const struct t4_packet *p)
{
	if (p->copy) /* repeated metadata (FORMAT.md 4.8): nothing new */
		return;
	if (p->type == T4_PKT_REF && p->ref.sched_id == 0 && p->ref.trigger_id < LV_TRIGGERS)
		lv->ref_ns[p->ref.trigger_id] = p->ref.ref_ns;
	if (p->type == T4_PKT_DOMAIN && p->domain.kind == T4_DOM_DRM) {
		cr_assert_lt(lv->n_dom, T4_ARRAY_LEN(lv->dom));
		lv->dom[lv->n_dom++] = p->domain;
	}
	if (p->type == T4_PKT_EVENT && is_drm(lv, p->event.domain_id)) {
		cr_assert_lt(lv->n_ev, T4_ARRAY_LEN(lv->ev));
		lv->ev[lv->n_ev++] = p->event;
	}
	if (p->type != T4_PKT_RET || !is_drm(lv, p->ret.domain_id))
		return;
	if (p->ret.trigger_id < LV_TRIGGERS)
		lv->drm_begin[p->ret.trigger_id] = p->ret.read_begin_ns;
	for (uint32_t i = 0; i < p->ret.n_counts; i++) {
		int k = ev_slot(lv, p->ret.domain_id, i);
		cr_assert_geq(k, 0, "domain %u count %u before its event", p->ret.domain_id, i);
		if (lv->ev[k].flags & T4_EV_GAUGE)
			lv->total[k] = p->ret.counts[i];
		else
			lv->total[k] += p->ret.counts[i];
	}
}

static void read_log(const char *path, struct logview *lv)
{
	struct t4_reader *r;
	struct t4_packet p;
	int rc;

	memset(lv, 0, sizeof(*lv));
	cr_assert_eq(t4_reader_open(&r, path, NULL, NULL), 0, "%s", t4_errmsg());
	while ((rc = t4_reader_next(r, &p)) > 0)
		take_packet(lv, &p);
	cr_assert_eq(rc, 0, "%s", t4_errmsg());
	t4_reader_close(r);
}

static const struct t4_domain_pkt *drm_domain(const struct logview *lv)
{
	return lv->n_dom ? &lv->dom[0] : NULL;
}

static uint64_t total_of(const struct logview *lv, const char *name)
{
	for (size_t i = 0; i < lv->n_ev; i++)
		if (!strcmp(lv->ev[i].name, name))
			return lv->total[i];
	cr_assert_fail("no event %s in the log", name);
	return 0;
}

static int run_cli(char *out, size_t cap, const char *fmt, ...)
{
	char args[4 * PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	cr_assert(n >= 0 && (size_t)n < sizeof(args), "arguments too long");
	if (!strncmp(args, "record", 6) && !strstr(args, "--sim"))
		t4t_need_perf(); /* the recording counts this machine's cpu-clock too */
	return cli_t4(out, cap, "%s", args);
}

/* The fixture tree as a machine: without a command every process is the
 * workload; the clients were there before, so cumulative keys count from
 * the baseline (0 here: the files do not change) and gauges hold the
 * files' levels. --no-drm and --sim leave the source out. */
Test(drm, record_fixture_tree, .timeout = 60)
{
	struct logview lv;
	struct tree t;
	char out[8192], log[PATH_MAX + 16];

	tree_make(&t, false);
	snprintf(log, sizeof(log), "%s/s.t4t", t.dir);
	cr_assert_eq(run_cli(out, sizeof(out), "record --proc-root " FIX_PROC
			     " --duration 300ms -o '%s'", log), 0, "%s", out);
	cr_assert(strstr(out, "DRM: 4 clients"), "%s", out);
	cr_assert(strstr(out, "1 without drm-client-id"), "%s", out);
	read_log(log, &lv);
	const struct t4_domain_pkt *d = drm_domain(&lv);
	cr_assert_not_null(d);
	cr_assert_str_eq(d->name, "drm");
	cr_assert_eq(d->clock_event, -1);
	cr_assert_eq(lv.n_dom, 1);
	cr_assert_eq(lv.n_ev, 15 + 9 + 2 + 2);
	cr_assert_eq(total_of(&lv, "c7.engine.render"), 0);
	cr_assert_eq(total_of(&lv, "c7.total.system0"), 4608ull << 10);
	cr_assert_eq(total_of(&lv, "c7.capacity.video"), 2);
	cr_assert_eq(total_of(&lv, "c9.memory.vram"), 1003520ull << 10);
	cr_assert_eq(total_of(&lv, "c50.total.system0"), 64 << 10);
	cr_assert_eq(total_of(&lv, "p102-3.memory.system"), 12 << 10);

	snprintf(log, sizeof(log), "%s/n.t4t", t.dir);
	cr_assert_eq(run_cli(out, sizeof(out), "record -q --no-drm --proc-root " FIX_PROC
			     " --duration 20ms -o '%s'", log), 0, "%s", out);
	read_log(log, &lv);
	cr_assert_null(drm_domain(&lv));
	snprintf(log, sizeof(log), "%s/m.t4t", t.dir);
	cr_assert_eq(run_cli(out, sizeof(out), "record -q --sim --duration 20ms -o '%s'", log), 0,
		     "%s", out);
	read_log(log, &lv);
	cr_assert_null(drm_domain(&lv));
	snprintf(log, sizeof(log), "%s/x.t4t", t.dir);
	cr_assert_eq(run_cli(out, sizeof(out), "record -q --proc-root tests/fixtures/none "
			     "--duration 20ms -o '%s'", log), 2, "%s", out);
	cr_assert(strstr(out, "tests/fixtures/none"), "%s", out);
	tree_free(&t);
}

/* On trigger path `path`, the DRM domain (read by a thread of its own on
 * either path) keeps its read windows on the log's reference clock
 * (CLOCK_MONOTONIC when the triggers fire in the kernel): a read on another
 * clock would be off by the same amount at every trigger (the two clocks
 * drift apart by NTP's corrections: 250 ms after two hours on this
 * project's VMs), while a read on this one begins near its trigger's
 * reference time, after it or (on the user path, where the DRM thread may
 * wake before the scheduler's) before it, by however late a loaded
 * machine ran either thread. So the read closest to its trigger is within
 * 20 ms of it: every one would have to be late by that much otherwise. */
static void drm_windows_on_the_reference_clock(const char *path)
{
	static struct logview lv;
	struct tree t;
	char out[8192], log[PATH_MAX + 16];
	size_t both = 0;
	int64_t closest = INT64_MAX;

	tree_make(&t, false);
	snprintf(log, sizeof(log), "%s/w.t4t", t.dir);
	cr_assert_eq(run_cli(out, sizeof(out), "record --trigger %s --proc-root " FIX_PROC
			     " --duration 300ms -o '%s'", path, log), 0, "%s", out);
	cr_assert(strstr(out, "DRM: 4 clients"), "%s", out);
	read_log(log, &lv);
	for (size_t k = 0; k < LV_TRIGGERS; k++) {
		if (!lv.ref_ns[k] || !lv.drm_begin[k])
			continue;
		int64_t after = (int64_t)(lv.drm_begin[k] - lv.ref_ns[k]);
		if (llabs(after) < llabs(closest))
			closest = after;
		both++;
	}
	cr_assert_geq(both, 10, "%zu triggers with a DRM return", both);
	cr_assert_lt(llabs(closest), 20000000, "%s: of %zu DRM reads the closest to its trigger "
		     "is %lld ns after it", path, both, (long long)closest);
	tree_free(&t);
}

Test(drm, windows_on_the_reference_clock_user, .timeout = 60)
{
	drm_windows_on_the_reference_clock("user");
}

Test(drm, windows_on_the_reference_clock_bpf, .timeout = 60)
{
	t4t_need_bpf_trigger();
	drm_windows_on_the_reference_clock("bpf");
}

/* A command whose process tree makes DRM clients while it runs (it writes
 * its own entries into the proc root): a client of its own that a child
 * shares, plus the child's second client. It waits until the log describes
 * them, lowers a value, raises it past the old one, and exits; the final
 * trigger reads the last values. New clients count from 0, so the totals
 * are the files' last values. A process outside its tree (a PID no kernel
 * gives) has a client that is not recorded. Like /proc, the tree never
 * shows a half-made entry: an fdinfo file is in place before its fd link,
 * and the child's directory (its stat: its parent) appears whole, by a
 * rename; the scanner reads a process's stat once (a real process's never
 * lacks one), and a scan that came between mkdir and the stat's write
 * (one run in 25 with the machine loaded) kept the child out for good. */
Test(drm, record_command_tree, .timeout = 60)
{
	static const char script[] =
		"d=\"$1/proc\"; log=\"$1/c.t4t\"; p=$$; kid=99999999; new=\"$1/kid\"\n"
		"fdinfo() { printf 'drm-driver: i915\\ndrm-client-id: %s\\ndrm-pdev: 0000:00:02.0\\n"
		"drm-engine-render: %s ns\\ndrm-total-system0: %s\\n' \"$2\" \"$3\" \"$4\" > \"$1.tmp\" &&"
		" mv \"$1.tmp\" \"$1\"; }\n"
		"mkdir -p \"$d/$p/fd\" \"$d/$p/fdinfo\" \"$new/fd\" \"$new/fdinfo\"\n"
		"fdinfo \"$d/$p/fdinfo/3\" 21 1000 '8 KiB'; ln -s /dev/dri/renderD128 \"$d/$p/fd/3\"\n"
		"echo \"$kid (kid) S $p 1 1 0\" > \"$new/stat\"\n"
		"cp \"$d/$p/fdinfo/3\" \"$new/fdinfo/3\"; ln -s /dev/dri/renderD128 \"$new/fd/3\"\n"
		"fdinfo \"$new/fdinfo/8\" 22 40 '1 MiB'; ln -s /dev/dri/renderD129 \"$new/fd/8\"\n"
		"mv \"$new\" \"$d/$kid\"\n"
		"for i in $(seq 600); do\n"
		"  \"$T4_BIN\" info --json \"$log\" 2>/dev/null | grep -q c22.engine.render && break\n"
		"  sleep 0.05\n"
		"done\n"
		"fdinfo \"$d/$p/fdinfo/3\" 21 500 '16 KiB'; sleep 0.05\n"
		"fdinfo \"$d/$p/fdinfo/3\" 21 1700 '4 KiB'\n";
	struct logview lv;
	struct tree t;
	char out[8192], path[PATH_MAX + 16];

	tree_make(&t, false);
	put_client(&t, 99999998, 1, 3, client7(5, 1, "1 KiB"));
	snprintf(path, sizeof(path), "%s/w.sh", t.dir);
	cr_assert_eq(t4_write_small_file(path, script), 0);
	cr_assert_eq(run_cli(out, sizeof(out), "record --proc-root '%s' -o '%s/c.t4t' -- sh '%s' '%s'",
			     t.proc, t.dir, path, t.dir), 0, "%s", out);
	cr_assert(strstr(out, "DRM: 2 clients"), "%s", out);
	snprintf(path, sizeof(path), "%s/c.t4t", t.dir);
	read_log(path, &lv);
	cr_assert_not_null(drm_domain(&lv));
	cr_assert_eq(total_of(&lv, "c21.engine.render"), 1700);
	cr_assert_eq(total_of(&lv, "c21.total.system0"), 4096);
	cr_assert_eq(total_of(&lv, "c22.engine.render"), 40);
	cr_assert_eq(total_of(&lv, "c22.total.system0"), 1 << 20);
	for (size_t i = 0; i < lv.n_ev; i++)
		cr_assert(strncmp(lv.ev[i].name, "c7.", 3), "%s is not the command's",
			  lv.ev[i].name);
	tree_free(&t);
}

/* -p PID: the process and its descendants are the workload; their clients
 * were there before the recording, so they count from the baseline. A
 * process outside the tree is not recorded. */
Test(drm, record_pid_tree, .timeout = 60)
{
	struct logview lv;
	struct tree t;
	char out[8192], log[PATH_MAX + 16];
	pid_t pid = t4t_fork_idle();

	cr_assert_geq(pid, 0);
	tree_make(&t, false);
	put_client(&t, pid, 1, 3, client7(1000, 2, "4 KiB"));
	put_client(&t, 99999997, pid, 5,
		   "drm-driver: xe\ndrm-client-id: 5\ndrm-engine-capacity-ccs: 4\n");
	put_client(&t, 99999998, 1, 3,
		   "drm-driver: xe\ndrm-client-id: 6\ndrm-engine-capacity-ccs: 4\n");
	snprintf(log, sizeof(log), "%s/p.t4t", t.dir);
	int rc = run_cli(out, sizeof(out), "record -p %d --proc-root '%s' --duration 200ms -o '%s'",
			 (int)pid, t.proc, log);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(strstr(out, "DRM: 2 clients"), "%s", out);
	read_log(log, &lv);
	cr_assert_eq(total_of(&lv, "c7.engine.render"), 0);
	cr_assert_eq(total_of(&lv, "c7.total.system0"), 4096);
	cr_assert_eq(total_of(&lv, "c5.capacity.ccs"), 4);
	for (size_t i = 0; i < lv.n_ev; i++)
		cr_assert(strncmp(lv.ev[i].name, "c6.", 3), "%s is not the workload's",
			  lv.ev[i].name);
	tree_free(&t);
}
