/* test_decode_expr.c - the formulas (decode/expr.c): every seed formula
 * compiles against its kind; absent names and zero denominators evaluate
 * as documented.
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
