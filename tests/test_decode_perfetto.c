/* test_decode_perfetto.c - `t410trace decode -f perfetto` end to end.
 *
 * A short simulated recording with two bookmark phases is decoded to a
 * Perfetto trace and read back by a reader that is not the writer:
 * `protoc --decode=perfetto.protos.Trace decode/perfetto.proto` prints it in
 * text format, which a small parser here turns into one record per packet.
 * The trace is then checked for its structure (clock snapshot first, one
 * sequence, clock 5 on every timestamp, the track tree; clock 3 for a log
 * whose reference clock is CLOCK_MONOTONIC) and, value by
 * value, against the CSV output of the same log: every CSV row is exactly
 * one counter event at the row's start_ns, and nothing else is.
 *
 * Runs the built binary (T4_BIN, set by `make check`) and protoc. With
 * T4_PERFETTO_PROTO naming Perfetto's own perfetto_trace.proto (from
 * google/perfetto, protos/perfetto/trace/), every trace is also decoded
 * with it and must read exactly as with decode/perfetto.proto: the real
 * schema agrees on every field written.
 */
#include <criterion/criterion.h>

#include "tmpdir_testutil.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_testutil.h"
#include "probe.h"

/* ---- running commands ------------------------------------------------------ */

struct fx {
	const char *bin;
	char dir[PATH_MAX];
	char path[PATH_MAX + 64]; /* scratch for dir/NAME */
	char schema[PATH_MAX];    /* the folder of decode/perfetto.proto */
	char out[8192];           /* what the last shell() printed */
};

/* dir/name, in a scratch buffer valid until the next call. */
static const char *at(struct fx *f, const char *name)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, name);
	return f->path;
}

/* Run a shell command line in the fixture's directory, its output and
 * errors into f->out; returns the exit status. */
#define shell(f, ...) cli_in_dir((f)->dir, (f)->out, sizeof((f)->out), __VA_ARGS__)

/* What the last command printed. */
static const char *output(struct fx *f)
{
	return f->out;
}

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	if (!(f->bin = getenv("T4_BIN")))
		cr_skip_test("T4_BIN not set (run through make check)");
	t4t_tmpdir(f->dir, sizeof(f->dir), "t4pf");
	/* protoc reads the schema relative to the repository root */
	cr_assert_eq(access("decode/perfetto.proto", R_OK), 0, "run from the repository root");
	cr_assert_not_null(realpath("decode", f->schema));
}

static void fx_fini(struct fx *f)
{
	cr_assert_eq(t4_rmtree(f->dir), 0, "%s", t4_errmsg());
}

/* s.t4t: --sim at 10 ms, bookmark "a" from the start, "b" after ~150 ms. */
static void record(struct fx *f)
{
	/* the counters' and bookmarks' tracks; threads' tracks: test_decode_slices.c */
	int rc = shell(f, "'%s' record -q --sim --no-activity --period 10ms --bookmark a -o s.t4t -- "
			  "sh -c 'sleep 0.15 && \"$T4_BIN\" ctl bookmark b && sleep 0.15'",
		       f->bin);

	cr_assert_eq(rc, 0, "record: %s", output(f));
}

/* Decode s.t4t (extra options opts) to t.pftrace and t.csv; the trace as
 * protoc's text into t.txt. */
static void decode(struct fx *f, const char *opts)
{
	cr_assert_eq(shell(f, "'%s' decode s.t4t %s -f perfetto -o t.pftrace", f->bin, opts), 0,
		     "decode: %s", output(f));
	cr_assert_eq(shell(f, "'%s' decode s.t4t %s -f csv -o t.csv", f->bin, opts), 0, "%s",
		     output(f));
	cr_assert_eq(shell(f, "protoc --proto_path='%s' --decode=perfetto.protos.Trace "
			      "perfetto.proto < t.pftrace > t.txt",
			   f->schema),
		     0, "protoc: %s", output(f));
	const char *real = getenv("T4_PERFETTO_PROTO");
	if (real && *real) {
		char dir[PATH_MAX], *slash;
		snprintf(dir, sizeof(dir), "%s", real);
		cr_assert_not_null(slash = strrchr(dir, '/'), "T4_PERFETTO_PROTO: a path");
		*slash = '\0';
		cr_assert_eq(shell(f, "protoc --proto_path='%s' --decode=perfetto.protos.Trace '%s' "
				      "< t.pftrace > real.txt && cmp t.txt real.txt",
				   dir, slash + 1),
			     0, "Perfetto's own schema reads it otherwise: %s", output(f));
	}
}

/* ---- protoc's text format, one record per packet ----------------------------- */

enum { PK_NONE, PK_SNAPSHOT, PK_TRACK, PK_EVENT };

struct pkt {
	int what;
	bool has_ts, has_clock, has_seq, has_flags;
	uint64_t ts;
	uint32_t clock, seq, flags;
	size_t n_clocks;                 /* clock_snapshot */
	uint32_t clock_id[4];
	uint64_t clock_ts[4];
	char primary[48];
	uint64_t uuid, parent;           /* track_descriptor */
	bool has_parent, counter;
	char unit[32];
	char unit_name[32];
	bool explicit_order;             /* child_ordering: EXPLICIT */
	bool has_rank;
	int rank;                        /* sibling_order_rank */
	char type[24];                   /* track_event */
	uint64_t track;
	bool has_int, has_double;
	int64_t ival;
	double dval;
	char name[160];                  /* of a track or an event */
};

struct trace {
	struct pkt *pk;
	size_t n, cap;
};

static void unquote(char *dst, size_t cap, const char *v)
{
	size_t n = 0;

	cr_assert_eq(*v, '"', "not a string: %s", v);
	for (v++; *v && *v != '"' && n + 1 < cap; v++) {
		if (*v == '\\' && v[1])
			v++;
		dst[n++] = *v;
	}
	dst[n] = '\0';
}

static bool is(const char *block, const char *key, const char *b, const char *k)
{
	return !strcmp(block, b) && !strcmp(key, k);
}

static void field(struct pkt *p, const char *block, const char *key, const char *v)
{
	uint64_t u = strtoull(v, NULL, 10);
	size_t c = p->n_clocks ? p->n_clocks - 1 : 0;

	if (is(block, key, "packet", "timestamp"))
		p->has_ts = true, p->ts = u;
	else if (is(block, key, "packet", "timestamp_clock_id"))
		p->has_clock = true, p->clock = (uint32_t)u;
	else if (is(block, key, "packet", "trusted_packet_sequence_id"))
		p->has_seq = true, p->seq = (uint32_t)u;
	else if (is(block, key, "packet", "sequence_flags"))
		p->has_flags = true, p->flags = (uint32_t)u;
	else if (is(block, key, "clock_snapshot", "primary_trace_clock"))
		snprintf(p->primary, sizeof(p->primary), "%s", v);
	else if (is(block, key, "clocks", "clock_id"))
		p->clock_id[c] = (uint32_t)u;
	else if (is(block, key, "clocks", "timestamp"))
		p->clock_ts[c] = u;
	else if (is(block, key, "track_descriptor", "uuid"))
		p->uuid = u;
	else if (is(block, key, "track_descriptor", "parent_uuid"))
		p->has_parent = true, p->parent = u;
	else if (is(block, key, "track_descriptor", "name") || is(block, key, "track_event", "name"))
		unquote(p->name, sizeof(p->name), v);
	else if (is(block, key, "counter", "unit"))
		snprintf(p->unit, sizeof(p->unit), "%s", v);
	else if (is(block, key, "counter", "unit_name"))
		unquote(p->unit_name, sizeof(p->unit_name), v);
	else if (is(block, key, "track_descriptor", "child_ordering"))
		p->explicit_order = !strcmp(v, "EXPLICIT");
	else if (is(block, key, "track_descriptor", "sibling_order_rank"))
		p->has_rank = true, p->rank = atoi(v);
	else if (is(block, key, "track_event", "type"))
		snprintf(p->type, sizeof(p->type), "%s", v);
	else if (is(block, key, "track_event", "track_uuid"))
		p->track = u;
	else if (is(block, key, "track_event", "counter_value"))
		p->has_int = true, p->ival = strtoll(v, NULL, 10);
	else if (is(block, key, "track_event", "double_counter_value"))
		p->has_double = true, p->dval = strtod(v, NULL);
	else
		cr_assert_fail("unexpected field %s.%s: %s", block, key, v);
}

/* A block opens: "packet {" starts a record, the others say what it is. */
static void open_block(struct trace *t, const char *name, int depth)
{
	struct pkt *p;

	if (depth == 0) {
		cr_assert_str_eq(name, "packet");
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 4096;
			t->pk = realloc(t->pk, t->cap * sizeof(*t->pk));
			cr_assert_not_null(t->pk);
		}
		memset(&t->pk[t->n++], 0, sizeof(*t->pk));
		return;
	}
	p = &t->pk[t->n - 1];
	if (!strcmp(name, "clock_snapshot"))
		p->what = PK_SNAPSHOT;
	else if (!strcmp(name, "track_descriptor"))
		p->what = PK_TRACK;
	else if (!strcmp(name, "track_event"))
		p->what = PK_EVENT;
	else if (!strcmp(name, "counter"))
		p->counter = true;
	else if (!strcmp(name, "clocks"))
		cr_assert_lt(p->n_clocks++, 4);
}

static void load_trace(struct fx *f, struct trace *t)
{
	FILE *in = fopen(at(f, "t.txt"), "r");
	char line[1024], block[8][32];
	int depth = 0;

	cr_assert_not_null(in);
	memset(t, 0, sizeof(*t));
	while (fgets(line, sizeof(line), in)) {
		char *s = line + strspn(line, " ");
		size_t n = strcspn(s, "\n");

		s[n] = '\0';
		if (n >= 2 && !strcmp(s + n - 2, " {")) {
			cr_assert_lt(depth, 8);
			snprintf(block[depth], sizeof(block[0]), "%.*s", (int)(n - 2), s);
			open_block(t, block[depth], depth);
			depth++;
		} else if (!strcmp(s, "}")) {
			depth--;
		} else {
			char *v = strstr(s, ": ");
			cr_assert(v && depth > 0, "unexpected line: %s", s);
			*v = '\0';
			field(&t->pk[t->n - 1], block[depth - 1], s, v + 2);
		}
	}
	fclose(in);
	cr_assert_eq(depth, 0, "unbalanced text");
	cr_assert_gt(t->n, 0, "empty trace");
}

/* ---- the track tree ------------------------------------------------------------ */

/* Track descriptors by uuid: the index of its packet in the trace. */
struct tracks {
	struct trk {
		uint64_t uuid;
		size_t at;
	} *v;
	size_t n;
};

static int trk_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct trk *)a)->uuid, y = ((const struct trk *)b)->uuid;
	return x < y ? -1 : x > y;
}

static void index_tracks(const struct trace *t, struct tracks *tr)
{
	tr->v = calloc(t->n, sizeof(*tr->v));
	tr->n = 0;
	cr_assert_not_null(tr->v);
	for (size_t i = 0; i < t->n; i++)
		if (t->pk[i].what == PK_TRACK)
			tr->v[tr->n++] = (struct trk){ t->pk[i].uuid, i };
	qsort(tr->v, tr->n, sizeof(*tr->v), trk_cmp);
	for (size_t i = 1; i < tr->n; i++)
		cr_assert_neq(tr->v[i].uuid, tr->v[i - 1].uuid, "uuid %llu described twice",
			      (unsigned long long)tr->v[i].uuid);
}

/* The descriptor of uuid, NULL if none. */
static const struct pkt *track(const struct trace *t, const struct tracks *tr, uint64_t uuid)
{
	struct trk key = { uuid, 0 };
	const struct trk *k = bsearch(&key, tr->v, tr->n, sizeof(*tr->v), trk_cmp);

	return k ? &t->pk[k->at] : NULL;
}

static size_t depth_of(const struct trace *t, const struct tracks *tr, const struct pkt *p)
{
	size_t d = 0;

	for (; p && p->has_parent; d++) {
		const struct pkt *up = track(t, tr, p->parent);
		cr_assert_not_null(up, "track '%s': parent %llu not described", p->name,
				   (unsigned long long)p->parent);
		cr_assert_lt(up, p, "track '%s' described before its parent", p->name);
		p = up;
	}
	return d;
}

/* ---- CSV rows and counter events as comparable records ---------------------------- */

struct val {
	char key[400];  /* domain \t series \t start_ns */
	bool is_int;
	long long i;
	double d;
};

static int val_cmp(const void *a, const void *b)
{
	return strcmp(((const struct val *)a)->key, ((const struct val *)b)->key);
}

/* Every CSV row (trigger,start_ns,end_ns,bookmark,domain,pmu,event,value,
 * unit): the series named as its counter track is, "name" or "name (unit)".
 * domains: every domain name, each between two '\n'. */
static size_t load_csv(struct fx *f, struct val **out, char *domains, size_t cap)
{
	FILE *in = fopen(at(f, "t.csv"), "r");
	char line[1024], needle[200];
	size_t n = 0, room = 1024;
	struct val *v = malloc(room * sizeof(*v));

	cr_assert(in && v);
	snprintf(domains, cap, "\n");
	cr_assert_not_null(fgets(line, sizeof(line), in)); /* the header */
	while (fgets(line, sizeof(line), in)) {
		char *col[9], *s = line;
		line[strcspn(line, "\n")] = '\0';
		for (int c = 0; c < 9; c++)
			cr_assert_not_null(col[c] = strsep(&s, ","), "short row");
		if (n == room)
			cr_assert_not_null(v = realloc(v, (room *= 2) * sizeof(*v)));
		snprintf(v[n].key, sizeof(v[n].key), "%s\t%s%s%s%s\t%020llu", col[4], col[6],
			 *col[8] ? " (" : "", col[8], *col[8] ? ")" : "", strtoull(col[1], NULL, 10));
		v[n].is_int = !strpbrk(col[7], ".e");
		v[n].i = strtoll(col[7], NULL, 10);
		v[n].d = strtod(col[7], NULL);
		n++;
		snprintf(needle, sizeof(needle), "\n%s\n", col[4]);
		if (!strstr(domains, needle) && strlen(domains) + strlen(needle) < cap)
			strcat(domains, needle + 1);
	}
	fclose(in);
	qsort(v, n, sizeof(*v), val_cmp);
	*out = v;
	return n;
}

/* Every TYPE_COUNTER event, keyed by its track's domain and name. */
static size_t counter_events(const struct trace *t, const struct tracks *tr, struct val **out)
{
	struct val *v = calloc(t->n, sizeof(*v));
	size_t n = 0;

	cr_assert_not_null(v);
	for (size_t i = 0; i < t->n; i++) {
		const struct pkt *p = &t->pk[i], *c, *d;
		if (p->what != PK_EVENT || strcmp(p->type, "TYPE_COUNTER"))
			continue;
		cr_assert_not_null(c = track(t, tr, p->track), "counter event on an unknown track");
		cr_assert(c->counter && c < p, "counter track '%s' not a counter described before use",
			  c->name);
		cr_assert_not_null(d = track(t, tr, c->parent));
		cr_assert(p->has_int != p->has_double, "one value per counter event");
		snprintf(v[n].key, sizeof(v[n].key), "%s\t%s\t%020llu", d->name, c->name,
			 (unsigned long long)p->ts);
		v[n].is_int = p->has_int;
		v[n].i = p->ival;
		v[n].d = p->has_int ? (double)p->ival : p->dval;
		n++;
	}
	qsort(v, n, sizeof(*v), val_cmp);
	*out = v;
	return n;
}

/* ---- the tests ----------------------------------------------------------------------- */

struct decoded {
	struct fx f;
	struct trace t;
	struct tracks tr;
};

static void setup(struct decoded *x, const char *opts)
{
	fx_init(&x->f);
	record(&x->f);
	decode(&x->f, opts);
	load_trace(&x->f, &x->t);
	index_tracks(&x->t, &x->tr);
}

static void teardown(struct decoded *x)
{
	free(x->t.pk);
	free(x->tr.v);
	fx_fini(&x->f);
}

/* The clock snapshot comes first and makes `clock` (Perfetto's builtin
 * ID; `name` in protoc's text) the trace's clock, with BOOTTIME at the same
 * instant; every timestamp is on it; one sequence. */
static void expect_clock(const struct trace *t, uint32_t clock, const char *name)
{
	const struct pkt *s = &t->pk[0];

	cr_assert_eq(s->what, PK_SNAPSHOT, "the first packet is not the clock snapshot");
	cr_assert_str_eq(s->primary, name);
	cr_assert(s->has_flags && s->flags == 1, "no SEQ_INCREMENTAL_STATE_CLEARED first");
	cr_assert_geq(s->n_clocks, 2);
	cr_assert_eq(s->clock_id[0], clock);
	cr_assert_eq(s->clock_id[1], 6);
	cr_assert_eq(s->clock_ts[0], s->clock_ts[1], "BOOTTIME not at the same instant");
	cr_assert_gt(s->clock_ts[0], 0);
	for (size_t i = 0; i < t->n; i++) {
		const struct pkt *p = &t->pk[i];
		cr_assert(p->has_seq && p->seq == s->seq && p->seq != 0, "packet %zu: sequence", i);
		cr_assert(p->has_ts == (p->what == PK_EVENT), "packet %zu: timestamped?", i);
		cr_assert(!p->has_ts || (p->has_clock && p->clock == clock), "packet %zu: clock %u",
			  i, p->clock);
		cr_assert(i == 0 || !p->has_flags, "packet %zu: sequence flags", i);
		cr_assert_neq(p->what, PK_NONE, "packet %zu: empty", i);
	}
}

Test(decode_perfetto, clock_snapshot_first_one_sequence_clock_5, .timeout = 120)
{
	struct decoded x;

	setup(&x, "");
	expect_clock(&x.t, 5, "BUILTIN_CLOCK_MONOTONIC_RAW");
	teardown(&x);
}

/* A log whose reference clock is CLOCK_MONOTONIC (what the in-kernel
 * trigger path records; written here from FORMAT.md by tools/t4write.py
 * --grid): the trace's clock is Perfetto's MONOTONIC, clock 3. */
Test(decode_perfetto, monotonic_reference_is_clock_3, .timeout = 120)
{
	struct decoded x;
	char *script = realpath("tools/t4write.py", NULL);

	fx_init(&x.f);
	if (!script || !t4t_have_cmds("python3 zstd")) {
		fx_fini(&x.f);
		cr_skip_test("python3, zstd or tools/t4write.py missing");
	}
	cr_assert_eq(shell(&x.f, "python3 '%s' s.t4t --grid", script), 0, "%s", output(&x.f));
	free(script);
	decode(&x.f, "");
	load_trace(&x.f, &x.t);
	index_tracks(&x.t, &x.tr);
	expect_clock(&x.t, 3, "BUILTIN_CLOCK_MONOTONIC");
	teardown(&x);
}

Test(decode_perfetto, one_track_per_domain_counters_under_it, .timeout = 120)
{
	struct decoded x;
	struct val *csv;
	char domains[8192], needle[200];
	size_t roots = 0, n_domains = 0;

	setup(&x, "");
	load_csv(&x.f, &csv, domains, sizeof(domains));
	for (size_t i = 0; i < x.tr.n; i++) {
		const struct pkt *p = &x.t.pk[x.tr.v[i].at];
		size_t d = depth_of(&x.t, &x.tr, p);
		if (d == 0) {
			roots++;
			cr_assert(strstr(p->name, "SIMULATED"), "root '%s' hides the simulation",
				  p->name);
		} else if (d == 2) { /* root > kind > domain */
			snprintf(needle, sizeof(needle), "\n%s\n", p->name);
			cr_assert(strstr(domains, needle), "domain track '%s' not in the CSV", p->name);
			cr_assert(!p->counter);
			n_domains++;
		} else if (d == 3) {
			cr_assert(p->counter, "'%s' under a domain is not a counter track", p->name);
			cr_assert_str_neq(p->unit, "");
		} else {
			cr_assert_eq(d, 1, "track '%s' too deep", p->name);
			cr_assert(!p->counter);
		}
	}
	cr_assert_eq(roots, 1);
	size_t n_csv_domains = 0;
	for (const char *s = domains; (s = strchr(s + 1, '\n'));)
		n_csv_domains++;
	cr_assert_geq(n_csv_domains, 30, "a simulated Tegra410 has some 34 domains");
	cr_assert_eq(n_domains, n_csv_domains, "domain tracks %zu, CSV domains %zu", n_domains,
		     n_csv_domains);
	free(csv);
	teardown(&x);
}

/* The root orders its children explicitly: the phases track first, then
 * the PMU kinds; a counter in a unit Perfetto has no enum for says it
 * in unit_name (GB/s, GHz, req/cycle, ...), bytes and ns by the enum. */
Test(decode_perfetto, phases_first_and_every_unit_named, .timeout = 120)
{
	struct decoded x;
	const struct pkt *root = NULL, *phases = NULL;
	size_t named = 0;

	setup(&x, "");
	for (size_t i = 0; i < x.tr.n; i++) {
		const struct pkt *p = &x.t.pk[x.tr.v[i].at];
		if (!p->has_parent)
			root = p;
		if (!strcmp(p->name, "phases"))
			phases = p;
	}
	cr_assert(root && root->explicit_order, "the root's children are not ordered");
	cr_assert(phases && phases->has_rank, "no ranked phases track");
	for (size_t i = 0; i < x.tr.n; i++) {
		const struct pkt *p = &x.t.pk[x.tr.v[i].at];
		if (p->has_parent && p->parent == root->uuid && p != phases)
			cr_assert(p->has_rank && p->rank > phases->rank,
				  "'%s' (rank %d) before the phases", p->name, p->rank);
		if (!p->counter)
			continue;
		const char *open = strrchr(p->name, '(');
		char unit[32] = "";
		if (open)
			snprintf(unit, sizeof(unit), "%.*s", (int)strcspn(open + 1, ")"), open + 1);
		if (!strcmp(unit, "bytes"))
			cr_assert_str_eq(p->unit, "UNIT_SIZE_BYTES", "%s", p->name);
		else if (!strcmp(unit, "ns"))
			cr_assert_str_eq(p->unit, "UNIT_TIME_NS", "%s", p->name);
		else if (*unit) {
			cr_assert_str_eq(p->unit_name, unit, "%s: unit_name", p->name);
			named++;
		}
	}
	cr_assert_gt(named, 30, "GB/s, GHz and the like: %zu", named);
	teardown(&x);
}

/* Every CSV row is one counter event with the same domain, series, start_ns
 * and value; the count is intervals x (events + present metrics). */
static void counters_match_csv(const char *opts)
{
	struct decoded x;
	struct val *csv, *pf;
	char domains[8192];
	size_t n_csv, n_pf;

	setup(&x, opts);
	n_csv = load_csv(&x.f, &csv, domains, sizeof(domains));
	n_pf = counter_events(&x.t, &x.tr, &pf);
	cr_assert_gt(n_csv, 0);
	cr_assert_eq(n_pf, n_csv, "%zu counter events, %zu CSV rows", n_pf, n_csv);
	for (size_t i = 0; i < n_csv; i++) {
		cr_assert_str_eq(pf[i].key, csv[i].key);
		if (pf[i].is_int) {
			cr_assert(csv[i].is_int, "%s: a count as a double", pf[i].key);
			cr_assert_eq(pf[i].i, csv[i].i, "%s: %lld, CSV %lld", pf[i].key, pf[i].i,
				     csv[i].i);
		} else {
			double tol = 1e-8 * fabs(csv[i].d) + 1e-12; /* CSV: 9 digits */
			cr_assert(fabs(pf[i].d - csv[i].d) <= tol, "%s: %.17g, CSV %.17g",
				  pf[i].key, pf[i].d, csv[i].d);
		}
	}
	free(csv);
	free(pf);
	teardown(&x);
}

Test(decode_perfetto, every_csv_row_is_one_counter_event, .timeout = 120)
{
	counters_match_csv("");
}

Test(decode_perfetto, filters_and_grid_match_csv_too, .timeout = 120)
{
	counters_match_csv("--pmu 'nvidia_pcie*' --event 'rd_*' --bin 25ms");
}

Test(decode_perfetto, timestamps_increase_per_track, .timeout = 120)
{
	struct decoded x;
	uint64_t *last;

	setup(&x, "");
	last = calloc(x.tr.n, sizeof(*last));
	cr_assert_not_null(last);
	for (size_t i = 0; i < x.t.n; i++) {
		const struct pkt *p = &x.t.pk[i];
		if (p->what != PK_EVENT || strcmp(p->type, "TYPE_COUNTER"))
			continue;
		struct trk key = { p->track, 0 };
		size_t k = (size_t)((struct trk *)bsearch(&key, x.tr.v, x.tr.n, sizeof(key),
							  trk_cmp) - x.tr.v);
		cr_assert_gt(p->ts, last[k], "track %llu: %llu after %llu",
			     (unsigned long long)p->track, (unsigned long long)p->ts,
			     (unsigned long long)last[k]);
		last[k] = p->ts;
	}
	free(last);
	teardown(&x);
}

Test(decode_perfetto, bookmark_phases_are_slices, .timeout = 120)
{
	struct decoded x;
	const struct pkt *ev[8], *phases = NULL;
	size_t n = 0;
	uint64_t first = UINT64_MAX, last = 0;

	setup(&x, "");
	for (size_t i = 0; i < x.t.n; i++) {
		const struct pkt *p = &x.t.pk[i];
		if (p->what == PK_TRACK && !strcmp(p->name, "phases"))
			phases = p;
		if (p->what != PK_EVENT)
			continue;
		if (!strcmp(p->type, "TYPE_COUNTER")) {
			first = p->ts < first ? p->ts : first;
			last = p->ts > last ? p->ts : last;
			continue;
		}
		cr_assert_not_null(phases, "a slice before the phases track");
		cr_assert_eq(p->track, phases->uuid);
		cr_assert_lt(n, 8);
		ev[n++] = p;
	}
	cr_assert_eq(n, 4, "%zu slice events (two phases: a, b)", n);
	cr_assert_str_eq(ev[0]->type, "TYPE_SLICE_BEGIN");
	cr_assert_str_eq(ev[0]->name, "a#1");
	cr_assert_str_eq(ev[1]->type, "TYPE_SLICE_END");
	cr_assert_str_eq(ev[2]->type, "TYPE_SLICE_BEGIN");
	cr_assert_str_eq(ev[2]->name, "b#1");
	cr_assert_str_eq(ev[3]->type, "TYPE_SLICE_END");
	cr_assert_leq(ev[0]->ts, first, "phase a starts after the first interval");
	cr_assert_lt(ev[0]->ts, ev[1]->ts);
	cr_assert_eq(ev[1]->ts, ev[2]->ts, "a gap between the phases");
	cr_assert_lt(ev[2]->ts, ev[3]->ts);
	cr_assert_gt(ev[3]->ts, last, "phase b ends before the last interval starts");
	teardown(&x);
}

/* A filter that matches nothing is an error (exit 2, the closest name),
 * and no trace is left behind; so is a time window with no interval in
 * it (it used to be an empty trace, exit 0: decode's other formats
 * refused --to 0 and printed nothing for --to 1ns). */
Test(decode_perfetto, nothing_selected_is_refused_an_empty_window_too, .timeout = 120)
{
	struct fx f;

	fx_init(&f);
	record(&f);
	cr_assert_eq(shell(&f, "'%s' decode s.t4t --pmu nvidia_ucf_pmu_9 -f perfetto -o t.pftrace",
			   f.bin),
		     2, "%s", output(&f));
	cr_assert(strstr(output(&f), "did you mean nvidia_ucf_pmu_"), "%s", output(&f));
	cr_assert_neq(access(at(&f, "t.pftrace"), F_OK), 0, "a trace was left");
	cr_assert_eq(shell(&f, "'%s' decode s.t4t --phase a --pmu 'nvidia_ucf*' --event cycles "
			       "--from 1ms --to 2ms -f perfetto -o t.pftrace", f.bin),
		     2, "%s", output(&f));
	cr_assert(strstr(output(&f), "--from 1ms --to 2ms: selects no interval of the log"), "%s",
		  output(&f));
	cr_assert_neq(access(at(&f, "t.pftrace"), F_OK), 0, "a trace was left");
	fx_fini(&f);
}

Test(decode_perfetto, refused_on_a_terminal, .timeout = 60)
{
	struct fx f;

	fx_init(&f);
	if (shell(&f, "command -v script") != 0)
		cr_skip_test("no script(1) to give the command a terminal");
	record(&f);
	cr_assert_eq(shell(&f, "script -qec '\"$T4_BIN\" decode s.t4t -f perfetto' /dev/null"), 2,
		     "%s", output(&f));
	cr_assert(strstr(output(&f), "-o FILE"), "%s", output(&f));
	fx_fini(&f);
}

/* The output breaks part way (a file size limit: EFBIG): exit 1, a message
 * naming the error, and no file left behind, complete or partial. */
Test(decode_perfetto, a_failing_output_leaves_no_file, .timeout = 60)
{
	struct fx f;

	fx_init(&f);
	record(&f);
	cr_assert_eq(shell(&f, "trap '' XFSZ; ulimit -f 64; "
			       "exec '%s' decode s.t4t -f perfetto -o t.pftrace",
			   f.bin),
		     1, "%s", output(&f));
	cr_assert(strstr(output(&f), "perfetto"), "%s", output(&f));
	cr_assert_eq(shell(&f, "ls | grep -vx s.t4t | grep ."), 1,
		     "left behind: %s", output(&f));
	if (geteuid() != 0) { /* root writes into read-only directories */
		cr_assert_eq(shell(&f, "mkdir ro && chmod 555 ro"), 0);
		cr_assert_eq(shell(&f, "'%s' decode s.t4t -f perfetto -o ro/t.pftrace", f.bin), 1,
			     "%s", output(&f));
		cr_assert_eq(shell(&f, "ls ro | grep ."), 1, "left behind: %s", output(&f));
	}
	fx_fini(&f);
}

/* The workload's threads (a system-wide recording with BPF, -a) are on
 * thread tracks (ThreadDescriptor: pid, tid, name) that the UI groups
 * under their process's track (ProcessDescriptor); the recorder's own
 * threads are not among them (other t410trace processes may be: -a sees
 * every process, so the recorder is told by its PID). */
Test(decode_perfetto, threads_on_thread_tracks_grouped_by_process, .timeout = 120)
{
	struct fx f;
	size_t threads = 0, processes = 0;
	char line[512];
	long self = 0;

	t4t_need_perf();
	t4t_need_bpf_tracing("CPU slices");
	fx_init(&f);
	cr_assert_eq(shell(&f, "sh -c 'echo $$ > rec.pid; exec \"$T4_BIN\" record -q -a --period 10ms "
			       "-o a.t4t -- sh -c \"sleep 0.3\"'"),
		     0, "record: %s", output(&f));
	cr_assert_eq(shell(&f, "'%s' decode a.t4t -f perfetto -o t.pftrace && protoc --proto_path='%s' "
			       "--decode=perfetto.protos.Trace perfetto.proto < t.pftrace > t.txt",
			   f.bin, f.schema),
		     0, "%s", output(&f));
	FILE *in = fopen(at(&f, "rec.pid"), "r");
	cr_assert(in && fscanf(in, "%ld", &self) == 1 && self > 0);
	fclose(in);
	cr_assert_not_null(in = fopen(at(&f, "t.txt"), "r"));
	while (fgets(line, sizeof(line), in)) {
		long pid;
		threads += strstr(line, "thread {") != NULL;
		processes += strstr(line, "process {") != NULL;
		if (sscanf(line, " pid: %ld", &pid) == 1)
			cr_assert_neq(pid, self, "the recorder's own thread or process: %s", line);
	}
	fclose(in);
	cr_assert_gt(threads, 0, "no thread track");
	cr_assert_gt(processes, 0, "no process track");
	cr_assert_leq(processes, threads);
	cr_assert_eq(shell(&f, "'%s' decode a.t4t -f slices | awk -F, '$5 == %ld' | grep -c .",
			   f.bin, self),
		     1, "the recorder's threads are in the slices: %s", output(&f));
	fx_fini(&f);
}
