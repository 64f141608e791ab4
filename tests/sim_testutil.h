/* sim_testutil.h - counters grouped and opened as clock domains, on this
 * host's PMUs or on a simulated Tegra410, for the tests that record through
 * the schedulers (test_sched.c, test_virtual.c). Static inline, so each
 * test file uses what it needs.
 */
#ifndef T4_SIM_TESTUTIL_H
#define T4_SIM_TESTUTIL_H

#include <criterion/criterion.h>

#include "collector/collector.h"
#include "probe.h"
#include "util/util.h"

struct tu_counters {
	struct t4_sim *sim; /* NULL: this host's PMUs */
	struct t4_pmu_set pmus;
	struct t4_evlist ev;
	struct t4_domain_set ds;
};

/* sim: the simulator's options, NULL for this host's PMUs (the test is
 * skipped where perf counters cannot be opened); events: an event string,
 * NULL for the default set. */
static inline void tu_counters_open(struct tu_counters *c, const struct t4_sim_opts *sim,
				    const char *events)
{
	if (!sim)
		t4t_need_perf();
	memset(c, 0, sizeof(*c));
	if (sim)
		cr_assert_eq(t4_sim_create_opts(&c->sim, sim), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_pmus_discover(&c->pmus, c->sim ? t4_sim_root(c->sim) : NULL), 0, "%s",
		     t4_errmsg());
	if (events)
		cr_assert_eq(t4_events_parse(&c->ev, &c->pmus, events), 0, "%s", t4_errmsg());
	else
		cr_assert_eq(t4_events_default(&c->ev, &c->pmus), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_build(&c->ds, &c->ev), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_domains_open(&c->ds, c->sim), 0, "%s", t4_errmsg());
}

static inline void tu_counters_close(struct tu_counters *c)
{
	t4_domains_free(&c->ds);
	t4_evlist_free(&c->ev);
	t4_pmus_free(&c->pmus);
	t4_sim_free(c->sim);
}

#endif
