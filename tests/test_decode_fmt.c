/* test_decode_fmt.c - number formatting (decode/fmt.c): metric values
 * round-trip to nine significant digits.
 */
#include "decode_synth.h"

#include "decode/decode_int.h"

static const char *fmt(double v, char *buf, size_t cap)
{
	FILE *f = fmemopen(buf, cap, "w");
	struct t4_wbuf w;

	cr_assert(f);
	cr_assert_eq(dec_wbuf_init(&w, f, 64), 0);
	dec_wbuf_f64(&w, v);
	dec_wbuf_flush(&w);
	dec_wbuf_free(&w);
	fclose(f);
	return buf;
}

Test(decode_fmt, metric_values_round_trip_to_nine_digits)
{
	char b[64];
	uint64_t rng = 3;

	cr_assert_str_eq(fmt(0, b, sizeof(b)), "0");
	cr_assert_str_eq(fmt(0.5, b, sizeof(b)), "0.5");
	cr_assert_str_eq(fmt(123.456, b, sizeof(b)), "123.456");
	cr_assert_str_eq(fmt(-2, b, sizeof(b)), "-2");
	cr_assert_str_eq(fmt(1e-7, b, sizeof(b)), "1e-7");
	cr_assert_str_eq(fmt(2.5e20, b, sizeof(b)), "2.5e+20");
	cr_assert_str_eq(fmt(999999999.6, b, sizeof(b)), "1000000000");
	for (int i = 0; i < 20000; i++) {
		double v = ldexp(sy_unit(&rng) + 0.5, (int)(sy_rand(&rng) % 120) - 60);
		double back = strtod(fmt(v, b, sizeof(b)), NULL);
		cr_assert_lt(fabs(back / v - 1), 6e-9, "%.17g -> %s", v, b);
	}
}
