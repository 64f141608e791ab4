/* test_phase_totals.c - the bookmark phases' totals per name
 * (decode/phases.c): a count is credited to its own bookmark name or to
 * none, never to another one; when the name table cannot grow (out of
 * memory: forced through the decoder's test seam, test_fail_name_alloc),
 * decoding fails with the error instead.
 */
#include "decode_synth.h"

#include <errno.h>

#include "decode/decode_int.h"

/* Bookmark "a" from trigger 10, "b" from trigger 20 (set mid-interval);
 * the name table cannot grow when "b" comes: feeding "b" fails with
 * -ENOMEM and says so; nothing is decoded after it (before: b's counts
 * went into a's totals, and decoding went on). */
Test(phase_totals, out_of_memory_is_an_error_not_another_names_totals)
{
	struct sy y;
	struct keep k = { 0 };
	struct t4_decoder *dec;
	struct t4_decode_opts o = { 0 };
	int rc = 0;

	sy_one_domain(&y, 40, 9);
	sy_bookmark(&y, 300, "a", 10, y.t0 + 9 * y.period + 500000);
	sy_bookmark(&y, 301, "b", 20, y.t0 + 19 * y.period + 500000);
	sy_build(&y);
	cr_assert_eq(t4_decoder_new(&dec, &o, &keep_ops, &k), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < y.n_pk && rc == 0; i++) {
		const struct t4_packet *p = &y.pk[i];
		bool b = p->type == T4_PKT_BOOKMARK && p->bookmark.bookmark_id == 301;
		dec->test_fail_name_alloc = b;
		rc = t4_decoder_feed(dec, p);
		cr_assert(rc == 0 || b, "packet %zu: %s", i, t4_errmsg());
	}
	cr_assert_eq(rc, -ENOMEM, "the failed allocation went unsaid");
	cr_assert(strstr(t4_errmsg(), "out of memory"), "%s", t4_errmsg());
	cr_assert_eq(t4_decoder_finish(dec, NULL), -ENOMEM, "finish repeats the error");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* More distinct names than the decoder keeps totals for (DEC_MAX_NAMES):
 * the names past them have no per-name totals, and every name that has
 * them holds its own counts only (before: the last name kept took every
 * later name's counts). */
Test(phase_totals, names_past_the_limit_have_none_not_anothers)
{
	const uint64_t n = DEC_MAX_NAMES + 8;
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	char name[32];
	uint64_t el;

	sy_one_domain(&y, n + 2, 9);
	for (uint64_t t = 1; t <= n; t++) { /* name t from trigger t on */
		snprintf(name, sizeof(name), "n%llu", (unsigned long long)t);
		sy_bookmark(&y, (uint32_t)t, name, t, y.t0 + (t - 1) * y.period + 500000);
	}
	sy_build(&y);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(t4_decoder_n_domains(dec), 1);
	for (uint32_t b = 1; b <= n; b++) {
		const t4_u128 *t = t4_decoder_name_totals(dec, b, 0, &el);
		if (b > DEC_MAX_NAMES - 1) { /* slot 0 is the time before any bookmark */
			cr_assert_null(t, "name %u past the limit has totals", b);
			continue;
		}
		cr_assert_not_null(t, "name %u", b);
		/* its one 1 ms phase: about 2 bytes per ns of it */
		cr_assert_eq(el, y.period, "name %u: %llu ns", b, (unsigned long long)el);
		cr_assert(t[1] > 1900000 && t[1] < 2100000, "name %u: %llu bytes", b,
			  (unsigned long long)t[1]);
	}
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}
