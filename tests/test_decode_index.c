/* test_decode_index.c - the index (decode/index.c): large IDs, the status
 * packet is authoritative, event rows sum CPUs and keep PMUs apart.
 */
#include "decode_synth.h"

#include "collector/collector.h"
#include "decode/decode_int.h"

Test(decode_index, large_ids_and_the_status_packet_is_authoritative)
{
	struct t4_index *ix;
	struct t4_packet p = { 0 };

	cr_assert_eq(t4_index_new(&ix), 0);
	p.type = T4_PKT_EVENT;
	p.event.domain_id = 5000;
	p.event.index = 3;
	snprintf(p.event.name, sizeof(p.event.name), "rd_bytes");
	cr_assert_eq(t4_index_add(ix, &p), 0);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_RET;
	p.ret.domain_id = 5000;
	p.ret.n_counts = 4;
	p.ret.counts[3] = 7;
	p.ret.flags = T4_RET_READ_FAILED;
	cr_assert_eq(t4_index_add(ix, &p), 0);
	p.ret.flags = 0;
	p.ret.counts[3] = UINT64_MAX;
	cr_assert_eq(t4_index_add(ix, &p), 0);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_REF;
	p.ref.sched_id = 70000;
	p.ref.trigger_id = 9;
	cr_assert_eq(t4_index_add(ix, &p), 0);
	const struct t4_index_domain *d = t4_index_domain(ix, 5000);
	cr_assert(d);
	cr_assert_str_eq(t4_index_event(ix, 5000, 3)->name, "rd_bytes");
	cr_assert(d->totals[3] == (t4_u128)UINT64_MAX + 7, "totals are 128-bit");
	cr_assert_eq(t4_index_sched(ix, 70000)->last, 9);
	cr_assert_eq(t4_index_read_failures(ix), 1);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_STATUS;
	p.status.read_failures = 0; /* the recorder's own count wins */
	cr_assert_eq(t4_index_add(ix, &p), 0);
	cr_assert_eq(t4_index_read_failures(ix), 0);
	char buf[48];
	cr_assert_str_eq(t4_u128_str((t4_u128)UINT64_MAX + 7, buf, sizeof(buf)),
			 "18446744073709551622");
	t4_index_free(ix);
}

/* perf stat's table: an event is summed over the CPUs that count it,
 * its rate over the time they cover; each uncore PMU keeps its row. */
Test(decode_index, event_rows_sum_cpus_and_keep_pmus_apart)
{
	struct t4_index *ix;
	struct t4_packet p;
	struct t4_event_rows rows = { 0 };
	static const struct { uint32_t dom, kind; const char *pmu, *name; uint64_t v; } ev[] = {
		{ 0, T4_DOM_SOFTWARE, "software", "cpu-clock:u", 300 },
		{ 1, T4_DOM_SOFTWARE, "software", "cpu-clock:u", 500 },
		{ 2, T4_DOM_UCF, "nvidia_ucf_pmu_0", "mem_bytes_rd", 64 },
		{ 3, T4_DOM_UCF, "nvidia_ucf_pmu_1", "mem_bytes_rd", 128 },
	};

	cr_assert_eq(t4_index_new(&ix), 0);
	for (size_t i = 0; i < T4_ARRAY_LEN(ev); i++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_DOMAIN;
		p.domain.domain_id = ev[i].dom;
		p.domain.kind = ev[i].kind;
		cr_assert_eq(t4_index_add(ix, &p), 0);
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_EVENT;
		p.event.domain_id = ev[i].dom;
		snprintf(p.event.pmu, sizeof(p.event.pmu), "%s", ev[i].pmu);
		snprintf(p.event.name, sizeof(p.event.name), "%s", ev[i].name);
		cr_assert_eq(t4_index_add(ix, &p), 0);
		for (uint64_t k = 0; k < 2; k++) { /* 2 s apart: the rate's span */
			memset(&p, 0, sizeof(p));
			p.type = T4_PKT_RET;
			p.ret.domain_id = ev[i].dom;
			p.ret.trigger_id = k;
			p.ret.read_begin_ns = 1000000000ull + k * 2000000000ull + i;
			p.ret.n_counts = 1;
			p.ret.counts[0] = k ? ev[i].v : 0;
			cr_assert_eq(t4_index_add(ix, &p), 0);
		}
	}
	cr_assert_eq(t4_event_rows_from_index(ix, false, &rows), 0);
	cr_assert_eq(rows.n, 3);
	cr_assert_str_eq(rows.v[0].event, "cpu-clock:u");
	cr_assert_eq(rows.v[0].domains, 2);
	cr_assert(rows.v[0].total == 800);
	cr_assert_float_eq(t4_event_row_rate(&rows.v[0]), 400, 1e-9);
	cr_assert_str_eq(rows.v[1].pmu, "nvidia_ucf_pmu_0");
	cr_assert(rows.v[1].total == 64 && rows.v[2].total == 128);
	t4_event_rows_free(&rows);
	cr_assert_eq(t4_event_rows_from_index(ix, true, &rows), 0);
	cr_assert_eq(rows.n, 4, "per domain: one row per CPU");
	t4_event_rows_free(&rows);
	t4_index_free(ix);
}

/* A domain's totals: counters summed in 128 bits, a gauge its latest
 * level; IDs in the direct table and past it (a hash) alike. */
Test(decode_index, totals_sum_counters_and_keep_a_gauges_level)
{
	static const uint32_t ids[] = { 3, 255, 256, 70000 };
	struct t4_index *ix;
	struct t4_packet p;

	cr_assert_eq(t4_index_new(&ix), 0);
	for (size_t d = 0; d < T4_ARRAY_LEN(ids); d++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_EVENT;
		p.event.domain_id = ids[d];
		p.event.index = 1;
		p.event.flags = d % 2 ? T4_EV_GAUGE : 0; /* odd: event 1 a gauge */
		snprintf(p.event.name, sizeof(p.event.name), "e1");
		cr_assert_eq(t4_index_add(ix, &p), 0);
	}
	for (uint64_t k = 1; k <= 3; k++)
		for (size_t d = 0; d < T4_ARRAY_LEN(ids); d++) {
			memset(&p, 0, sizeof(p));
			p.type = T4_PKT_RET;
			p.ret.domain_id = ids[d];
			p.ret.trigger_id = k;
			p.ret.n_counts = 3;
			p.ret.counts[0] = UINT64_MAX;
			p.ret.counts[1] = 10 * k + d;
			p.ret.counts[2] = k;
			cr_assert_eq(t4_index_add(ix, &p), 0);
		}
	for (size_t d = 0; d < T4_ARRAY_LEN(ids); d++) {
		const struct t4_index_domain *x = t4_index_domain(ix, ids[d]);
		cr_assert(x, "domain %u", ids[d]);
		cr_assert_eq(x->rets, 3);
		cr_assert(x->totals[0] == (t4_u128)UINT64_MAX * 3, "domain %u: 128-bit sum", ids[d]);
		cr_assert(x->totals[1] == (d % 2 ? 30 + d : 60 + 3 * d), "domain %u: %s", ids[d],
			  d % 2 ? "a gauge keeps its latest level" : "a counter sums");
		cr_assert(x->totals[2] == 6);
	}
	/* a second copy of a return (the same trigger again) adds nothing */
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_RET;
	p.ret.domain_id = 3;
	p.ret.trigger_id = 2;
	p.ret.n_counts = 3;
	p.ret.counts[2] = 2;
	cr_assert_eq(t4_index_add(ix, &p), 0);
	cr_assert(t4_index_domain(ix, 3)->totals[2] == 6, "a duplicated return counted twice");
	cr_assert_eq(t4_index_domain(ix, 3)->rets, 4, "but it is one more packet of the log");
	t4_index_free(ix);
}

/* A log is closed when its last status packet comes after every reference
 * and return packet (the recording's final one, FORMAT.md 6): a mid-log
 * status (written after drops) followed by trigger packets is no close,
 * whether the return comes through t4_index_add() or the decoder's own
 * path (dec_index_ret()). */
Test(decode_index, a_log_is_closed_by_a_status_packet_after_every_trigger_packet)
{
	struct t4_index *ix;
	struct t4_packet ref = { .type = T4_PKT_REF }, ret = { .type = T4_PKT_RET };
	struct t4_packet st = { .type = T4_PKT_STATUS };

	cr_assert_eq(t4_index_new(&ix), 0);
	cr_assert_not(t4_index_closed(ix), "no status packet: not closed");
	cr_assert_eq(t4_index_add(ix, &ref), 0);
	cr_assert_eq(t4_index_add(ix, &ret), 0);
	cr_assert_not(t4_index_closed(ix));
	st.status.dropped = 1; /* a mid-log status... */
	cr_assert_eq(t4_index_add(ix, &st), 0);
	cr_assert(t4_index_closed(ix), "a status packet last closes it");
	ref.ref.trigger_id = ret.ret.trigger_id = 1;
	cr_assert_eq(t4_index_add(ix, &ref), 0); /* ...then the triggers go on */
	cr_assert_not(t4_index_closed(ix), "a reference packet after the status");
	cr_assert_eq(t4_index_add(ix, &st), 0);
	cr_assert(t4_index_closed(ix));
	cr_assert_geq(dec_index_ret(ix, &ret.ret), 0);
	cr_assert_not(t4_index_closed(ix), "a return packet (the decoder's path) after it");
	cr_assert_eq(t4_index_add(ix, &st), 0);
	cr_assert(t4_index_closed(ix), "the final status");
	cr_assert_not_null(strstr(t4_index_unclosed_why(), "no closing status packet"));
	t4_index_free(ix);
}
