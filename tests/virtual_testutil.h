/* virtual_testutil.h - a simulated Tegra410 recorded in virtual time
 * (sched/virtual.c) into a log, with the ground truth of every sample as
 * on_sample reported it; and the log read back packet by packet. Shared by
 * test_virtual.c and test_decode_sim.c. Static inline.
 */
#ifndef T4_VIRTUAL_TESTUTIL_H
#define T4_VIRTUAL_TESTUTIL_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/collector.h"
#include "packets/packets.h"
#include "sched/sched.h"
#include "util/util.h"
#include "sim_testutil.h"
#include "tmpdir_testutil.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define EPOCH (100 * SEC) /* a fixed simulator epoch: deterministic logs */

/* One sample as on_sample reported it. */
struct truth {
	uint32_t dom;
	uint64_t trigger, true_ns, begin, end;
	bool logged;
};

struct vrec {
	struct tu_counters c;
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct t4_sched_status st;
	struct truth *t;
	size_t n_t;
	/* read back */
	struct t4_ref_pkt *refs;
	size_t n_refs;
	struct t4_ret_pkt *rets;
	size_t n_rets;
	struct t4_bookmark_pkt bms[4096];
	size_t n_bms;
	struct t4_domain_pkt doms[64];
	size_t n_doms;
	struct t4_status_pkt status;
};

/* Room for one more element in a growing array of n (doubling). */
static inline void *push(void *v, size_t n, size_t size)
{
	if (n & (n - 1) || n < 1024) /* not a power of two from 1024 on: room */
		return n ? v : malloc(1024 * size);
	v = realloc(v, 2 * n * size);
	cr_assert_not_null(v);
	return v;
}

static inline void on_sample(void *ud, const struct t4_domain *d, uint64_t trigger_id,
		      uint64_t true_ns, const struct t4_ret_pkt *ret, bool logged)
{
	struct vrec *r = ud;

	r->t = push(r->t, r->n_t, sizeof(*r->t));
	cr_assert_eq(ret->trigger_id, trigger_id);
	cr_assert_eq(ret->domain_id, d->id);
	r->t[r->n_t++] = (struct truth){ d->id, trigger_id, true_ns, ret->read_begin_ns,
					 ret->read_end_ns, logged };
}

/* A simulator (seed, drift 500 ppm, wander 100 ppm, fixed epoch) with its
 * default counters, all 34 PMUs unless events say otherwise. */
static inline void vrec_open(struct vrec *r, uint64_t sim_seed, const char *events)
{
	struct t4_sim_opts so = { .seed = sim_seed, .drift_ppm = 500, .wander_ppm = 100,
				  .epoch_ns = EPOCH };

	memset(r, 0, sizeof(*r));
	t4t_tmpdir(r->dir, sizeof(r->dir), "t4virt");
	snprintf(r->path, sizeof(r->path), "%s/v.t4t", r->dir);
	tu_counters_open(&r->c, &so, events);
}

/* Record o (its domains, ring and callback filled in here) into r->path
 * as record --virtual does: metadata, the recording, the final status. */
static inline void vrec_run(struct vrec *r, struct t4_virtual_opts *o)
{
	struct t4_log_opts lo = { .path = r->path, .chunk_ms = UINT32_MAX };
	struct t4_session_pkt s;
	struct t4_log *log;
	struct t4_ring *ring;

	cr_assert_eq(t4_log_open(&log, &lo), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_ring(log, 4 << 20, T4_RING_WAIT, &ring), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_start(log), 0, "%s", t4_errmsg());
	o->domains = &r->c.ds;
	o->ring = ring;
	if (!o->on_sample) {
		o->on_sample = on_sample;
		o->ud = r;
	}
	cr_assert_eq(t4_virtual_session(o, "test_virtual", &s), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_put_metadata(ring, &s, &r->c.ds, o->per_socket), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_virtual_record(o, &r->st), 0, "%s", t4_errmsg());
	struct t4_status_pkt fin = { .triggers = r->st.triggers, .overruns = r->st.overruns,
				     .dropped = r->st.dropped, .ref_ns = r->st.end_ref_ns };
	cr_assert_eq(t4_log_close(log, &fin, NULL), 0, "%s", t4_errmsg());
}

static inline void vrec_read(struct vrec *r)
{
	struct t4_reader *rd;
	struct t4_packet *p = malloc(sizeof(*p));
	int rc;

	cr_assert_eq(t4_reader_open(&rd, r->path, NULL, NULL), 0, "%s", t4_errmsg());
	while ((rc = t4_reader_next(rd, p)) == 1) {
		if (p->copy) /* repeated metadata (FORMAT.md 4.8): nothing new */
			continue;
		if (p->type == T4_PKT_REF) {
			r->refs = push(r->refs, r->n_refs, sizeof(*r->refs));
			r->refs[r->n_refs++] = p->ref;
		} else if (p->type == T4_PKT_RET) {
			r->rets = push(r->rets, r->n_rets, sizeof(*r->rets));
			r->rets[r->n_rets++] = p->ret;
		} else if (p->type == T4_PKT_BOOKMARK && r->n_bms < T4_ARRAY_LEN(r->bms)) {
			r->bms[r->n_bms++] = p->bookmark;
		} else if (p->type == T4_PKT_DOMAIN && r->n_doms < T4_ARRAY_LEN(r->doms)) {
			r->doms[r->n_doms++] = p->domain;
		} else if (p->type == T4_PKT_STATUS) {
			r->status = p->status;
		}
	}
	cr_assert_eq(rc, 0, "%s", t4_errmsg());
	t4_reader_close(rd);
	free(p);
}

static inline void vrec_free(struct vrec *r)
{
	tu_counters_close(&r->c);
	t4_rmtree(r->dir);
	free(r->t);
	free(r->refs);
	free(r->rets);
}

#endif
