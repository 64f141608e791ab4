/* sched_testutil.h - helpers shared by test_sched.c and test_trigger.c:
 * record through the public APIs (collector -> sched -> packets) into a
 * temporary log on either trigger path, read the log back, and tell
 * whether this kernel can run the BPF trigger at all. Static inline, so
 * that each test file uses what it needs without unused-function warnings.
 */
#ifndef T4_SCHED_TESTUTIL_H
#define T4_SCHED_TESTUTIL_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/collector.h"
#include "packets/packets.h"
#include "sched/sched.h"
#include "sim_testutil.h"
#include "tmpdir_testutil.h"
#include "probe.h"
#include "util/util.h"

struct rec {
	struct tu_counters c;
	struct t4_log *log;
	struct t4_sched *s;
	char dir[PATH_MAX];
	char path[PATH_MAX + 16];
};

struct readback {
	struct t4_ref_pkt *refs;
	size_t n_refs;
	struct t4_ret_pkt *rets;
	size_t n_rets;
	struct t4_bookmark_pkt *bms;
	size_t n_bms, cap_bms;
	struct t4_domain_pkt doms[64];
	size_t n_doms;
	struct t4_status_pkt status;
	bool have_status;
};

/* Record r->c's domains into a new log in a new temporary directory with
 * the scheduler options so (domains, log and quiet are filled in here);
 * the scheduler is started. */
static inline void rec_start(struct rec *r, struct t4_sched_opts so)
{
	t4t_tmpdir(r->dir, sizeof(r->dir), "t4sched");
	snprintf(r->path, sizeof(r->path), "%s/t.t4t", r->dir);
	struct t4_log_opts lo = { .path = r->path };
	cr_assert_eq(t4_log_open(&r->log, &lo), 0, "%s", t4_errmsg());
	so.domains = &r->c.ds;
	so.log = r->log;
	so.quiet = true;
	cr_assert_eq(t4_sched_create(&r->s, &so), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_start(r->log), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_sched_start(r->s), 0, "%s", t4_errmsg());
}

/* Record `events` (NULL: the default set) of this machine or of the
 * simulator with the scheduler options so (domains, log and quiet are
 * filled in here); the scheduler is started. */
static inline void rec_open_opts(struct rec *r, const char *events, bool sim,
				 struct t4_sched_opts so)
{
	if (!sim)
		t4t_need_perf(); /* this machine's counters */
	if (events && strstr(events, "msr/"))
		t4t_need_pmu("msr"); /* x86 only */
	memset(r, 0, sizeof(*r));
	struct t4_sim_opts sim7 = { .seed = 7, .drift_ppm = T4_SIM_DRIFT_PPM };
	tu_counters_open(&r->c, sim ? &sim7 : NULL, events);
	rec_start(r, so);
}

static inline void rec_open(struct rec *r, const char *events, bool sim, uint64_t period_ns,
			    bool paused, bool per_socket, enum t4_trigger_path trigger)
{
	struct t4_sched_opts so = {
		.period_ns = period_ns, .paused = paused, .per_socket = per_socket,
		.trigger = trigger,
	};

	rec_open_opts(r, events, sim, so);
}

static inline void rec_close(struct rec *r, struct t4_sched_status *st)
{
	cr_assert_eq(t4_sched_stop(r->s), 0, "%s", t4_errmsg());
	t4_sched_status(r->s, st);
	struct t4_status_pkt fin = { .triggers = st->triggers, .overruns = st->overruns };
	cr_assert_eq(t4_log_close(r->log, &fin, NULL), 0, "%s", t4_errmsg());
	t4_sched_free(r->s);
}

static inline void rec_free(struct rec *r, struct readback *rb)
{
	tu_counters_close(&r->c);
	t4_rmtree(r->dir);
	free(rb->refs);
	free(rb->rets);
	free(rb->bms);
}

static inline void read_back(const char *path, struct readback *rb)
{
	struct t4_reader *rd;
	struct t4_packet *p = malloc(sizeof(*p));
	size_t cap_refs = 1024, cap_rets = 4096;
	int rc;

	memset(rb, 0, sizeof(*rb));
	rb->refs = malloc(cap_refs * sizeof(*rb->refs));
	rb->rets = malloc(cap_rets * sizeof(*rb->rets));
	cr_assert_eq(t4_reader_open(&rd, path, NULL, NULL), 0, "%s", t4_errmsg());
	while ((rc = t4_reader_next(rd, p)) == 1) {
		if (p->copy) /* repeated metadata (FORMAT.md 4.8): nothing new */
			continue;
		switch (p->type) {
		case T4_PKT_REF:
			if (rb->n_refs == cap_refs)
				rb->refs = realloc(rb->refs, (cap_refs *= 2) * sizeof(*rb->refs));
			rb->refs[rb->n_refs++] = p->ref;
			break;
		case T4_PKT_RET:
			if (rb->n_rets == cap_rets)
				rb->rets = realloc(rb->rets, (cap_rets *= 2) * sizeof(*rb->rets));
			rb->rets[rb->n_rets++] = p->ret;
			break;
		case T4_PKT_BOOKMARK:
			if (rb->n_bms == rb->cap_bms)
				rb->bms = realloc(rb->bms, (rb->cap_bms = 2 * rb->cap_bms + 16) *
							   sizeof(*rb->bms));
			rb->bms[rb->n_bms++] = p->bookmark;
			break;
		case T4_PKT_STATUS:
			rb->status = p->status;
			rb->have_status = true;
			break;
		}
	}
	cr_assert_eq(rc, 0, "%s", t4_errmsg());
	t4_reader_close(rd);
	free(p);
}

static inline int cmp_ref(const void *a, const void *b)
{
	const struct t4_ref_pkt *x = a, *y = b;
	return x->trigger_id < y->trigger_id ? -1 : x->trigger_id > y->trigger_id;
}

static inline void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static inline const struct t4_ref_pkt *ref_with_id(const struct readback *rb, uint64_t id)
{
	for (size_t i = 0; i < rb->n_refs; i++)
		if (rb->refs[i].trigger_id == id)
			return &rb->refs[i];
	return NULL;
}

/* The reference packet with the smallest trigger ID >= id, or NULL. */
static inline const struct t4_ref_pkt *ref_from(const struct readback *rb, uint64_t id)
{
	const struct t4_ref_pkt *best = NULL;

	for (size_t i = 0; i < rb->n_refs; i++)
		if (rb->refs[i].trigger_id >= id && (!best || rb->refs[i].trigger_id < best->trigger_id))
			best = &rb->refs[i];
	return best;
}

/* Start periodic opened the grid again at trigger id: the scheduler
 * answered that command's trigger (PERIODIC | COMMAND), or, woken after
 * the next grid point, the grid point with the missed ID as an overrun. */
static inline void expect_resumed_at(const struct readback *rb, uint64_t id)
{
	const struct t4_ref_pkt *r = ref_from(rb, id);

	cr_assert_not_null(r, "no trigger from %lu on", (unsigned long)id);
	cr_assert(r->flags & T4_REF_PERIODIC, "trigger %lu flags %#x", (unsigned long)r->trigger_id,
		  r->flags);
	if (r->trigger_id == id)
		cr_assert(r->flags & T4_REF_COMMAND);
	else
		cr_assert_eq(r->overruns, r->trigger_id - id);
}

/* Wait for the scheduler's n-th trigger: up to 30 s (a loaded machine). */
static inline void wait_triggers(struct t4_sched *s, uint64_t n)
{
	struct t4_sched_status st;
	for (int i = 0; i < 30000; i++) {
		t4_sched_status(s, &st);
		if (st.triggers >= n)
			return;
		sleep_ms(1);
	}
	cr_assert_fail("scheduler did not reach %lu triggers", (unsigned long)n);
}

/* Two tests of fn: on the user path, and on the BPF path where this
 * machine can run it. */
#define TEST_BOTH_PATHS(suite, name, fn, ...)                                  \
	Test(suite, name##_user, __VA_ARGS__)                                  \
	{                                                                      \
		fn(T4_TRIGGER_USER);                                           \
	}                                                                      \
	Test(suite, name##_bpf, __VA_ARGS__)                                   \
	{                                                                      \
		t4t_need_bpf_trigger();                                                 \
		fn(T4_TRIGGER_BPF);                                            \
	}

#endif
