/* test_decode_apportion.c - largest remainder (decode/attrib.c): an
 * integer total split by weights is conserved, the remainders going to
 * the largest fractions.
 */
#include "decode_synth.h"

#include "decode/decode_int.h"

Test(decode_apportion, conserves_and_gives_remainders_to_the_largest)
{
	uint64_t w[3] = { 1, 1, 1 }, out[3];
	t4_u128 keys[3];

	dec_apportion_value(10, w, 3, 3, out, keys);
	cr_assert_eq(out[0], 4);
	cr_assert_eq(out[1], 3);
	cr_assert_eq(out[2], 3);
	uint64_t w2[4] = { 10, 25, 40, 25 }, out2[4];
	t4_u128 keys2[4];
	dec_apportion_value(7, w2, 4, 100, out2, keys2); /* 0.7 1.75 2.8 1.75 */
	cr_assert_eq(out2[0] + out2[1] + out2[2] + out2[3], 7);
	cr_assert_eq(out2[0], 0); /* remainders .7 .75 .8 .75: three get one */
	cr_assert_eq(out2[1], 2);
	cr_assert_eq(out2[2], 3);
	cr_assert_eq(out2[3], 2);
	for (uint64_t v = 0; v < 2000; v += 37) {
		uint64_t w3[5] = { 3, 0, 17, 5, 1 }, o3[5];
		t4_u128 k3[5];
		dec_apportion_value(UINT64_MAX - v, w3, 5, 26, o3, k3);
		t4_u128 sum = 0;
		for (int j = 0; j < 5; j++)
			sum += o3[j];
		cr_assert(sum == UINT64_MAX - v);
		cr_assert_eq(o3[1], 0, "a zero weight gets nothing");
	}
}
