/* test_decode_dom.c - the fast paths of a domain's pipeline (decode/dom.c)
 * against the slow ones they stand for: the table of histogram buckets
 * against t4_hist_bucket().
 */
#include <criterion/criterion.h>

#include "decode/decode_int.h"

#include <string.h>

/* Every value the table covers and those around its end, powers of two
 * and their neighbours up to 2^64 - 1: dec_hist_add() leaves the
 * histogram t4_hist_add() leaves. */
Test(decode_dom, histogram_table_gives_t4_hist_bucket_s_buckets)
{
	static struct t4_hist fast, slow;
	uint64_t v;

	dec_hist_init();
	for (v = 0; v < 2 * DEC_HIST_SMALL; v++) {
		cr_assert_eq(dec_hist_small[v % DEC_HIST_SMALL], t4_hist_bucket(v % DEC_HIST_SMALL),
			     "bucket of %llu", (unsigned long long)(v % DEC_HIST_SMALL));
		dec_hist_add(&fast, v);
		t4_hist_add(&slow, v);
	}
	for (unsigned k = 12; k < 64; k++)
		for (int d = -1; d <= 1; d++) {
			v = ((uint64_t)1 << k) + (uint64_t)(int64_t)d;
			dec_hist_add(&fast, v);
			t4_hist_add(&slow, v);
		}
	dec_hist_add(&fast, UINT64_MAX);
	t4_hist_add(&slow, UINT64_MAX);
	cr_assert_eq(fast.n, slow.n);
	cr_assert_eq(fast.max, slow.max);
	cr_assert(!memcmp(fast.bucket, slow.bucket, sizeof(fast.bucket)), "buckets differ");
}

/* Feed the return packets of three domains (one past the index's direct
 * table) to a decoder and to an index alone: the decoder adds most of its
 * domains' packets to its index inline (dec_index_ret_to(), once it
 * decodes the domain), the first and an unselected domain's through
 * dec_index_ret(); the counts are the index's own, field by field. */
Test(decode_dom, the_decoder_s_index_counts_what_the_index_counts)
{
	static const uint32_t ids[] = { 1, 300, 7 };
	struct t4_decode_opts o = { .pmu_glob = "domain1,domain300" };
	struct t4_decoder *dec;
	struct t4_index *ix;
	struct t4_packet p;

	cr_assert_eq(t4_decoder_new(&dec, &o, NULL, NULL), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_index_new(&ix), 0);
	for (uint64_t k = 0; k < 200; k++)
		for (size_t i = 0; i < 3; i++) {
			memset(&p, 0, sizeof(p));
			p.type = T4_PKT_RET;
			p.ret.domain_id = ids[i];
			/* late ones: a smaller first trigger than the first's */
			p.ret.trigger_id = k % 50 == 7 ? 1000 - k : 1000 + k;
			p.ret.read_begin_ns = 1000000 * (k + 1) + 17 * i;
			p.ret.read_end_ns = p.ret.read_begin_ns + 900;
			p.ret.local_clock = 3 * p.ret.read_begin_ns;
			p.ret.flags = k % 31 == 5 ? T4_RET_READ_FAILED : 0;
			p.ret.n_counts = 1 + (uint32_t)((k / 40 + i) % 4);
			for (uint32_t c = 0; c < p.ret.n_counts; c++)
				p.ret.counts[c] = k * 10 + c;
			cr_assert_eq(t4_decoder_feed(dec, &p), 0, "%s", t4_errmsg());
			cr_assert_geq(t4_index_add(ix, &p), 0);
		}
	const struct t4_index *dx = t4_decoder_index(dec);
	const struct t4_index_counts *a = t4_index_counts(dx), *b = t4_index_counts(ix);
	cr_assert_eq(a->rets, b->rets);
	cr_assert_eq(a->values, b->values);
	cr_assert_eq(a->read_failed_rets, b->read_failed_rets);
	for (size_t i = 0; i < 3; i++) {
		const struct t4_index_domain *x = t4_index_domain(dx, ids[i]),
					     *y = t4_index_domain(ix, ids[i]);
		cr_assert(x && y);
		cr_assert_eq(x->rets, y->rets, "domain %u", ids[i]);
		cr_assert_eq(x->values, y->values, "domain %u", ids[i]);
		cr_assert_eq(x->read_failed, y->read_failed, "domain %u", ids[i]);
		cr_assert_eq(x->first_ns, y->first_ns, "domain %u", ids[i]);
		cr_assert_eq(x->last_ns, y->last_ns, "domain %u", ids[i]);
		cr_assert_eq(x->first_trigger, y->first_trigger, "domain %u", ids[i]);
		cr_assert_eq(x->n_counts, y->n_counts, "domain %u", ids[i]);
	}
	cr_assert_eq(t4_decoder_n_domains(dec), 3);
	cr_assert(t4_decoder_domain_at(dec, 0)->selected && !t4_decoder_domain_at(dec, 2)->selected);
	t4_index_free(ix);
	t4_decoder_free(dec);
}

/* A domain's run sums 64-bit counts modulo 2^64 and keeps what carries
 * out apart (phases.c: run_carry): counts near 2^64, and small ones, give
 * the exact 128-bit totals. */
Test(decode_dom, run_sums_carry_into_128_bit_totals)
{
	struct t4_decode_opts o = { 0 };
	struct t4_decoder *dec;
	struct t4_packet p;
	t4_u128 want[3] = { 0 };

	cr_assert_eq(t4_decoder_new(&dec, &o, NULL, NULL), 0, "%s", t4_errmsg());
	for (uint64_t k = 0; k < 300; k++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_RET;
		p.ret.domain_id = 2;
		p.ret.trigger_id = k + 1;
		p.ret.read_begin_ns = 1000000 * (k + 1);
		p.ret.read_end_ns = p.ret.read_begin_ns + 500;
		p.ret.n_counts = 3;
		p.ret.counts[0] = UINT64_MAX - k;
		p.ret.counts[1] = ((uint64_t)1 << 63) + k;
		p.ret.counts[2] = k;
		for (int c = 0; c < 3 && k; c++) /* the first is the baseline */
			want[c] += p.ret.counts[c];
		cr_assert_eq(t4_decoder_feed(dec, &p), 0, "%s", t4_errmsg());
	}
	cr_assert_eq(t4_decoder_finish(dec, NULL), 0, "%s", t4_errmsg());
	const struct t4_dec_domain *dm = t4_decoder_domain_at(dec, 0);
	cr_assert_eq(dm->intervals, 299);
	for (int c = 0; c < 3; c++)
		cr_assert(dm->totals[c] == want[c], "event %d: %s", c,
			  t4_u128_str(dm->totals[c], (char[48]){ 0 }, 48));
	t4_decoder_free(dec);
}
