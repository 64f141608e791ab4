/* test_decode_expr.c - the formulas (decode/expr.c): every seed formula
 * compiles against its kind; absent names and zero denominators evaluate
 * as documented; the forms evaluated straight give the stack's doubles.
 */
#include "decode_synth.h"

#include <errno.h>

#include "collector/collector.h"
#include "decode/decode_int.h"

struct names {
	const struct t4_kind *k;
};

static int kind_lookup(void *ud, const char *name, size_t len)
{
	const struct t4_kind *k = ud;

	for (size_t i = 0; i < k->n_events; i++)
		if (strlen(k->events[i].name) == len && !strncmp(k->events[i].name, name, len))
			return (int)i;
	return -1;
}

Test(decode_expr, every_seed_formula_compiles_against_its_kind)
{
	size_t n;
	const struct t4_kind *k = t4_kinds(&n);

	for (size_t i = 0; i < n; i++) {
		size_t nf;
		const struct t4_formula *f = t4_kind_formulas(k[i].id, &nf, NULL);
		cr_assert_eq(nf, k[i].n_formulas);
		for (size_t j = 0; j < nf; j++) {
			struct t4_expr e;
			cr_assert_eq(dec_expr_compile(f[j].expr, kind_lookup, (void *)&k[i], &e), 0,
				     "%s %s: %s", k[i].label, f[j].name, f[j].expr);
		}
	}
}

static int two_names(void *ud, const char *name, size_t len)
{
	(void)ud;
	if (len == 9 && !strncmp(name, "cpu-clock", 9))
		return 0;
	if (len == 6 && !strncmp(name, "cycles", 6))
		return 1;
	return -1;
}

Test(decode_expr, evaluates_absent_and_zero_denominators)
{
	struct t4_expr e;
	double c[2] = { 500000, 3000 };

	cr_assert_eq(dec_expr_compile("cpu-clock / elapsed_ns * 100", two_names, NULL, &e), 0);
	cr_assert_float_eq(dec_expr_eval(&e, c, 1e6), 50.0, 1e-12);
	cr_assert_eq(dec_expr_compile("(cycles - 1000) / (2 * cycles)", two_names, NULL, &e), 0);
	cr_assert_float_eq(dec_expr_eval(&e, c, 1), 2000.0 / 6000.0, 1e-12);
	cr_assert_eq(dec_expr_compile("rd_req / cycles", two_names, NULL, &e), -ENOENT);
	cr_assert_eq(dec_expr_compile("cycles / ", two_names, NULL, &e), -EINVAL);
	cr_assert_eq(dec_expr_compile("(cycles", two_names, NULL, &e), -EINVAL);
	cr_assert_eq(dec_expr_compile("cycles / cpu-clock", two_names, NULL, &e), 0);
	c[0] = 0;
	cr_assert(isnan(dec_expr_eval(&e, c, 1)));
}

/* The stack's answer for e: the same code with no form marked (0). */
static double by_stack(const struct t4_expr *e, const double *c, double elapsed)
{
	struct t4_expr any = *e;

	any.shape = 0;
	return dec_expr_eval(&any, c, elapsed);
}

Test(decode_expr, the_straight_forms_give_the_stacks_doubles)
{
	static const char *const extra[] = {
		"cycles / 7", "3 / elapsed_ns", "(cycles / 2) / (elapsed_ns / cpu-clock)",
		"(cycles / cpu-clock) / (3 / elapsed_ns)", "cycles / cpu-clock / elapsed_ns",
	};
	static const double odd[] = { 0, -0.0, 1, 3, 1e-300, 1e300, INFINITY, NAN, 0x1p53 + 1 };
	size_t n, shaped = 0, checked = 0;
	const struct t4_kind *k = t4_kinds(&n);
	uint64_t rng = 3;

	for (size_t i = 0; i <= n; i++) {
		size_t nf = i < n ? 0 : T4_ARRAY_LEN(extra);
		const struct t4_formula *f = i < n ? t4_kind_formulas(k[i].id, &nf, NULL) : NULL;
		for (size_t j = 0; j < nf; j++) {
			struct t4_expr e;
			const char *src = f ? f[j].expr : extra[j];
			int rc = f ? dec_expr_compile(src, kind_lookup, (void *)&k[i], &e)
				   : dec_expr_compile(src, two_names, NULL, &e);
			cr_assert_eq(rc, 0, "%s", src);
			shaped += e.shape != 0;
			for (int r = 0; r < 2000; r++) {
				double c[64], el = r % 7 ? (double)(sy_rand(&rng) % 2000000) : odd[r % 9];
				for (size_t m = 0; m < T4_ARRAY_LEN(c); m++)
					c[m] = r % 5 ? (double)(sy_rand(&rng) >> (sy_rand(&rng) % 64))
						     : odd[(r + m) % 9];
				double a = dec_expr_eval(&e, c, el), b = by_stack(&e, c, el);
				cr_assert(memcmp(&a, &b, sizeof(a)) == 0 || (isnan(a) && isnan(b)),
					  "%s: %.17g straight, %.17g by the stack", src, a, b);
				checked++;
			}
		}
	}
	/* every seed kind has a / b formulas, and the latencies in ns are
	 * (a / b) / (c / d): the straight forms are taken */
	cr_assert_gt(shaped, n, "%zu formulas in a straight form", shaped);
	cr_assert_gt(checked, 0);
}
