/* fuzz_events.c - libFuzzer harness for the event syntax (events.c,
 * events_terms.c): t4_events_parse of the input against the checked-in
 * fixture tree (tests/fixtures/sysfs/t410, path from FUZZ_FIXTURE or the
 * current directory) and against a --sim tree, both discovered once.
 *
 * Checks: success or a one-line message; a failed parse leaves the list
 * untouched; every counter's strings are terminated and non-empty, its
 * PMU is one of the set's, its group within the groups handed out.
 * Tracepoints resolve in a private fake tracefs (T410TRACE_TRACEFS), so
 * the harness never mounts anything.
 */
#include "fuzz_common.h"
#include "collector/collector.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>

struct sets {
	struct t4_pmu_set fix, sim;
	struct t4_sim *s;
	char tracefs[PATH_MAX];
};

static void fake_tracefs(struct sets *sp)
{
	char path[PATH_MAX + 64];
	int n = snprintf(sp->tracefs, sizeof(sp->tracefs), "%s/t4fuzz_tpXXXXXX", t4_tmp_root());

	if (n < 0 || (size_t)n >= sizeof(sp->tracefs) || !mkdtemp(sp->tracefs))
		abort();
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch", sp->tracefs);
	if (t4_mkdirs(path, 0755) < 0)
		abort();
	strcat(path, "/id");
	if (t4_write_small_file(path, "316\n") < 0)
		abort();
	snprintf(path, sizeof(path), "%s/events/sched/bad_id", sp->tracefs);
	if (t4_mkdirs(path, 0755) < 0)
		abort();
	strcat(path, "/id");
	if (t4_write_small_file(path, "x1\n") < 0)
		abort();
	setenv("T410TRACE_TRACEFS", sp->tracefs, 1);
}

static struct sets st;

/* At exit: the simulated tree and the fake tracefs (a replay in `make
 * check` must leave $TMPDIR, or /tmp, as it found it). */
static void cleanup(void)
{
	t4_pmus_free(&st.fix);
	t4_pmus_free(&st.sim);
	t4_sim_free(st.s);
	if (st.tracefs[0])
		t4_rmtree(st.tracefs);
}

static struct sets *sets(void)
{
	static int done;
	const char *fix = getenv("FUZZ_FIXTURE");

	if (done)
		return &st;
	if (t4_pmus_discover(&st.fix, fix ? fix : "tests/fixtures/sysfs/t410") < 0 ||
	    t4_sim_create(&st.s, 0, NULL) < 0 ||
	    t4_pmus_discover(&st.sim, t4_sim_root(st.s)) < 0) {
		fprintf(stderr, "fuzz_events: setup: %s\n", t4_errmsg());
		abort();
	}
	fake_tracefs(&st);
	atexit(cleanup);
	done = 1;
	return &st;
}

static void check_str(const char *s, size_t cap, bool may_be_empty, const char *what)
{
	size_t n = strnlen(s, cap);

	FUZZ_CHECK(n < cap, "%s not terminated", what);
	FUZZ_CHECK(may_be_empty || n > 0, "%s empty", what);
}

static void parse_one(const struct t4_pmu_set *set, const char *spec)
{
	struct t4_evlist l = { 0 };
	int rc;

	rc = t4_events_parse(&l, set, spec);
	fuzz_check_rc(rc, "t4_events_parse");
	if (rc < 0) {
		FUZZ_CHECK(l.n == 0 && l.n_groups == 0, "failed parse left %zu counters", l.n);
		t4_evlist_free(&l);
		return;
	}
	FUZZ_CHECK(rc == 0, "t4_events_parse returned %d", rc);
	for (size_t i = 0; i < l.n; i++) {
		const struct t4_counter *c = &l.v[i];
		FUZZ_CHECK(c->pmu >= set->pmus && c->pmu < set->pmus + set->n,
			   "counter %zu: PMU outside the set", i);
		check_str(c->name, sizeof(c->name), false, "name");
		check_str(c->spec, sizeof(c->spec), false, "spec");
		check_str(c->unit, sizeof(c->unit), true, "unit");
		FUZZ_CHECK(c->group >= -1 && c->group < l.n_groups, "group %d of %d",
			   c->group, l.n_groups);
		FUZZ_CHECK(c->cpu >= 0, "counter %zu on CPU %d", i, c->cpu);
	}
	t4_evlist_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct sets *sp = sets();
	char *spec;

	if (len > 4096)
		return 0;
	spec = fuzz_str(data, len);
	parse_one(&sp->fix, spec);
	parse_one(&sp->sim, spec);
	free(spec);
	return 0;
}
