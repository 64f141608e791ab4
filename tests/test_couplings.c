/* test_couplings.c - what two modules must agree on, checked where a
 * _Static_assert cannot: the one list of domain kinds against the tables
 * that hang off it (decode's names, collector/kinds.c, the simulator), the
 * late-bookmark bound of the format (FORMAT.md 6.1), the ring record of a
 * packet against its layout, every bookmark name a recorder may write kept
 * by the decoder, and the live and the virtual scheduler writing reference
 * and bookmark packets of the same shape.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/collector.h"
#include "decode/decode.h"
#include "packets/packets.h"
#include "packets/ring.h"
#include "sched/sched.h"
#include "util/util.h"
#include "decode_synth.h"
#include "sched_testutil.h"
#include "virtual_testutil.h"

/* ---- the domain kinds -------------------------------------------------------- */

#define ROW(id_, num_, name_, t410_) { id_, name_, t410_ },
static const struct {
	uint32_t id;
	const char *name;
	bool t410;
} rows[] = { T4_DOMAIN_KINDS(ROW) };
#undef ROW

/* The simulator has a PMU of kind id, named with kinds.c's prefix. */
static bool sim_has_kind(const struct t4_pmu_set *set, uint32_t id)
{
	const struct t4_kind *k = t4_kind_by_id(id);

	for (size_t i = 0; i < set->n; i++)
		if (set->pmus[i].kind == k &&
		    !strncmp(set->pmus[i].name, k->prefix, strlen(k->prefix)))
			return true;
	return false;
}

/* docs/FORMAT.md's domain packet lists every kind: "N name". */
static void expect_format_lists_kinds(void)
{
	FILE *f = fopen("docs/FORMAT.md", "r");
	char line[1024], want[64];
	bool found = false;

	cr_assert_not_null(f, "docs/FORMAT.md (tests run from the repository root)");
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "| kind | varint (u32) |", 23);
	fclose(f);
	cr_assert(found, "FORMAT.md: no row for the domain packet's kind");
	for (size_t i = 0; i < T4_ARRAY_LEN(rows); i++) {
		snprintf(want, sizeof(want), " %u %s%c", rows[i].id, rows[i].name,
			 i + 1 < T4_ARRAY_LEN(rows) ? ',' : ' ');
		cr_assert(strstr(line, want), "FORMAT.md's kinds lack '%s'", want);
	}
}

Test(couplings, one_list_of_domain_kinds)
{
	struct t4_sim_opts so = { .seed = 1 };
	struct t4_sim *sim;
	struct t4_pmu_set set;
	size_t n_t410 = 0, n_kinds, n;
	const char *label;

	t4_kinds(&n_kinds);
	cr_assert_eq(t4_sim_create_opts(&sim, &so), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_pmus_discover(&set, t4_sim_root(sim)), 0, "%s", t4_errmsg());
	cr_assert_eq(T4_ARRAY_LEN(rows), T4_DOM_KINDS);
	for (size_t i = 0; i < T4_ARRAY_LEN(rows); i++) {
		cr_assert_eq(rows[i].id, i, "kind numbers are 0, 1, ... in list order");
		cr_assert_str_eq(t4_domain_kind_name(rows[i].id), rows[i].name);
		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(rows[j].name, rows[i].name);
		t4_kind_formulas(rows[i].id, &n, &label);
		if (rows[i].t410) {
			n_t410++;
			cr_assert_not_null(t4_kind_by_id(rows[i].id), "%s: no row in kinds.c",
					   rows[i].name);
			cr_assert(sim_has_kind(&set, rows[i].id), "%s: not simulated", rows[i].name);
		} else {
			cr_assert_null(t4_kind_by_id(rows[i].id));
			cr_assert_str_neq(label, "unknown", "%s: no host kind row in kinds.c",
					  rows[i].name);
		}
	}
	cr_assert_eq(n_t410, n_kinds);
	cr_assert_eq(n_t410, T4_DOM_T410_KINDS);
	cr_assert_str_eq(t4_domain_kind_name(T4_DOM_KINDS), "unknown");
	expect_format_lists_kinds();
	t4_pmus_free(&set);
	t4_sim_free(sim);
}

/* ---- the late-bookmark bound (FORMAT.md 6.1) ------------------------------------ */

Test(couplings, late_bookmark_bound)
{
	/* 250 ms of triggers, at most the look-ahead less one */
	cr_assert_eq(t4_bookmark_late_triggers(1000000), 250);
	cr_assert_eq(t4_bookmark_late_triggers(10000000), 25);
	cr_assert_eq(t4_bookmark_late_triggers(100000), T4_LOOKAHEAD_TRIGGERS - 1);
	/* a writer hurries exactly where the look-ahead is the shorter */
	cr_assert_not(t4_bookmark_must_hurry(1000000));
	cr_assert_not(t4_bookmark_must_hurry(980393));
	cr_assert(t4_bookmark_must_hurry(980392));
	cr_assert(t4_bookmark_must_hurry(100000));
	/* unhurried, a reader waits the bound (to a period); hurried, less */
	for (uint64_t p = 900000; p < 1100000; p += 997) {
		uint64_t waits = t4_bookmark_late_triggers(p) * p;

		if (t4_bookmark_must_hurry(p))
			cr_assert_lt(waits, T4_BOOKMARK_LATE_NS, "period %llu", (unsigned long long)p);
		else
			cr_assert_gt(waits + p, T4_BOOKMARK_LATE_NS, "period %llu",
				     (unsigned long long)p);
	}
}

/* ---- ring records ---------------------------------------------------------------- */

/* A put takes exactly the bytes t4_ring_record_bytes says (what the
 * schedulers size their rings by), for every size of return packet. */
Test(couplings, ring_record_is_the_packet)
{
	_Atomic uint32_t wake = 0;
	struct t4_ring *r;
	struct t4_packet p = { .type = T4_PKT_RET };

	cr_assert_eq(pkt_ring_new(&r, 1 << 20, T4_RING_NONBLOCK, &wake), 0, "%s", t4_errmsg());
	for (uint32_t n = 0; n <= T4_MAX_COUNTERS; n++) {
		uint64_t head = atomic_load(&r->head);

		p.ret.n_counts = n;
		cr_assert_eq(t4_ring_put(r, &p), 0, "%s", t4_errmsg());
		cr_assert_eq(atomic_load(&r->head) - head, t4_ring_record_bytes(&p), "%u counts", n);
		cr_assert_geq(t4_ring_record_bytes(&p),
			      offsetof(struct t4_packet, ret.counts) + n * sizeof(uint64_t));
		atomic_store(&r->tail, atomic_load(&r->head));
	}
	p.type = T4_PKT_REF;
	uint64_t head = atomic_load(&r->head);
	cr_assert_eq(t4_ring_put(r, &p), 0);
	cr_assert_eq(atomic_load(&r->head) - head, t4_ring_record_bytes(&p));
	pkt_ring_free(r);
}

/* ---- bookmark names --------------------------------------------------------------- */

/* ---- live and virtual: the same packets of a trigger -------------------------------- */

/* The shape of a log's reference and bookmark packets, what a live and a
 * virtual recording of one grid share (not times, clocks, or the order
 * between schedulers): the schedulers that write reference packets, each
 * one's trigger IDs (gaps only where its next packet reports them as
 * overruns, the last FINAL), and each bookmark with its first trigger and
 * whether its packet came before scheduler 0's reference packet of that
 * trigger. Scheduler 0: the lowest scheduler ID of the domains ds. */
static void log_shape(const char *path, const struct t4_domain_set *ds, char *out, size_t cap)
{
	struct t4_packet *p = malloc(sizeof(*p));
	struct t4_reader *rd;
	uint64_t next[4] = { 0 };
	bool seen[4] = { false }, final[4] = { false };
	uint32_t zero = UINT32_MAX;
	size_t len = 0;
	int rc;

	for (size_t i = 0; i < ds->n; i++) {
		uint32_t id = t4_sched_id_of(&ds->v[i], true);
		zero = id < zero ? id : zero;
	}
	cr_assert_lt(zero, 4);

	cr_assert_eq(t4_reader_open(&rd, path, NULL, NULL), 0, "%s", t4_errmsg());
	while ((rc = t4_reader_next(rd, p)) == 1) {
		if (p->copy)
			continue;
		if (p->type == T4_PKT_BOOKMARK)
			len += (size_t)snprintf(out + len, cap - len, "bookmark %s first %llu %s\n",
						p->bookmark.name,
						(unsigned long long)p->bookmark.first_trigger,
						next[zero] <= p->bookmark.first_trigger ? "before"
											: "after");
		if (p->type != T4_PKT_REF)
			continue;
		uint32_t s = p->ref.sched_id;
		cr_assert_lt(s, 4);
		cr_assert_not(final[s], "scheduler %u: a trigger after the final one", s);
		cr_assert_eq(p->ref.trigger_id, next[s] + p->ref.overruns,
			     "scheduler %u: trigger %llu after %llu, %u overruns", s,
			     (unsigned long long)p->ref.trigger_id, (unsigned long long)next[s],
			     p->ref.overruns);
		next[s] = p->ref.trigger_id + 1;
		seen[s] = true;
		final[s] = p->ref.flags & T4_REF_FINAL;
	}
	cr_assert_eq(rc, 0, "%s", t4_errmsg());
	for (uint32_t s = 0; s < 4; s++)
		if (seen[s])
			len += (size_t)snprintf(out + len, cap - len,
						"scheduler %u: triggers 0..%llu%s\n", s,
						(unsigned long long)next[s] - 1,
						final[s] ? ", the last FINAL" : "");
	t4_reader_close(rd);
	free(p);
}

/* 100 ms at 10 ms, one scheduler per socket, an initial bookmark. */
static void live_shape(const char *events, char *out, size_t cap)
{
	struct t4_sched_opts so = { .period_ns = 10 * MS, .per_socket = true,
				    .bookmark = "warmup", .duration_ns = 100 * MS,
				    .trigger = T4_TRIGGER_USER };
	struct t4_sched_status st;
	struct readback rb = { 0 };
	struct rec r;

	rec_open_opts(&r, events, true, so);
	for (int ms = 0; ms < 30000; ms++) { /* a loaded machine: up to 30 s */
		t4_sched_status(r.s, &st);
		if (st.finished)
			break;
		sleep_ms(1);
	}
	cr_assert(st.finished, "the live recording did not end");
	rec_close(&r, &st);
	log_shape(r.path, &r.c.ds, out, cap);
	rec_free(&r, &rb);
}

static void virtual_shape(const char *events, char *out, size_t cap)
{
	struct t4_virtual_opts o = { .period_ns = 10 * MS, .duration_ns = 100 * MS,
				     .per_socket = true, .bookmark = "warmup", .seed = 3 };
	struct vrec r;

	vrec_open(&r, 7, events);
	vrec_run(&r, &o);
	log_shape(r.path, &r.c.ds, out, cap);
	vrec_free(&r);
}

static void expect_same_shape(const char *events, const char *want)
{
	char live[2048], virt[2048];

	live_shape(events, live, sizeof(live));
	virtual_shape(events, virt, sizeof(virt));
	cr_assert_str_eq(virt, live, "virtual:\n%s\nlive:\n%s", virt, live);
	cr_assert_str_eq(live, want);
}

/* Only socket 1 has counters: scheduler 1 is the only one, and it is
 * scheduler 0 (the bookmark packets are its). */
Test(couplings, live_and_virtual_write_the_same_triggers_one_socket, .timeout = 60)
{
	expect_same_shape("nvidia_ucf_pmu_1/cycles/,nvidia_cmem_latency_pmu_1/cycles/",
			  "bookmark warmup first 0 before\n"
			  "scheduler 1: triggers 0..10, the last FINAL\n");
}

Test(couplings, live_and_virtual_write_the_same_triggers_two_sockets, .timeout = 60)
{
	expect_same_shape("nvidia_ucf_pmu_0/cycles/,nvidia_ucf_pmu_1/cycles/",
			  "bookmark warmup first 0 before\n"
			  "scheduler 0: triggers 0..10, the last FINAL\n"
			  "scheduler 1: triggers 0..10, the last FINAL\n");
}
