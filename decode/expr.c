/* expr.c - the seed-000 formulas of collector/kinds.c, compiled once per
 * domain into a few postfix instructions and evaluated per interval and
 * per phase.
 *
 * Grammar: expr = term { (+|-) term }, term = factor { (*|/) factor },
 * factor = number | name | ( expr ). A name is an event of the domain
 * ("rd_bytes", "cpu-clock", "c7.engine.render": dashes may join name parts,
 * so a binary minus needs spaces around it) or `elapsed_ns`, the interval's
 * length on the
 * reference clock. Compiling resolves names to event indexes; a formula
 * whose event was not recorded does not compile (-ENOENT): its metric is
 * absent, never zero. Evaluation is allocation-free, and a division by zero
 * gives NaN (e.g. a latency in an interval without requests).
 *
 * Most formulas are one of two forms: a / b (bandwidths, rates,
 * frequencies, latencies in cycles) and (a / b) / (c / d) (latencies in
 * ns), a..d each an event, elapsed_ns or a number. Compiling marks them,
 * and they are evaluated straight, without the stack's dispatch per
 * instruction (it runs for every metric of every interval): the same
 * divisions of the same operands, so the same doubles.
 */
#include "decode_int.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OP_EVENT, OP_ELAPSED, OP_CONST, OP_ADD, OP_SUB, OP_MUL, OP_DIV };
enum { SHAPE_ANY, SHAPE_DIV, SHAPE_DIV_DIV }; /* a / b, (a / b) / (c / d) */

struct parser {
	const char *s, *p;
	t4_expr_lookup lookup;
	void *ud;
	struct t4_expr *out;
	int err;
};

static void skip_space(struct parser *ps)
{
	while (*ps->p == ' ')
		ps->p++;
}

static void emit(struct parser *ps, uint8_t op, uint8_t event, double k)
{
	if (ps->err)
		return;
	if (ps->out->n >= T4_EXPR_MAX) {
		ps->err = t4_err(EINVAL, "formula '%s': too long", ps->s);
		return;
	}
	ps->out->code[ps->out->n].op = op;
	ps->out->code[ps->out->n].event = event;
	ps->out->code[ps->out->n].k = k;
	ps->out->n++;
}

/* Name characters: letters, digits, '_', and '.' and '@' inside a name
 * (the DRM domain's events: "c7.engine.render", "c7@1.capacity.vcs"). */
static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '@';
}

static void parse_expr(struct parser *ps);

static void parse_name(struct parser *ps)
{
	const char *start = ps->p;

	while (name_char(*ps->p) || (*ps->p == '-' && name_char(ps->p[1]) &&
				     ps->p > start && name_char(ps->p[-1])))
		ps->p++;
	size_t len = (size_t)(ps->p - start);
	if (len == 10 && !strncmp(start, "elapsed_ns", 10)) {
		emit(ps, OP_ELAPSED, 0, 0);
		return;
	}
	int ev = ps->lookup(ps->ud, start, len);
	if (ev < 0 && !ps->err)
		ps->err = -ENOENT; /* not recorded: the metric is absent */
	emit(ps, OP_EVENT, (uint8_t)(ev < 0 ? 0 : ev), 0);
}

static void parse_factor(struct parser *ps)
{
	skip_space(ps);
	if (*ps->p == '(') {
		ps->p++;
		parse_expr(ps);
		skip_space(ps);
		if (*ps->p == ')')
			ps->p++;
		else if (!ps->err)
			ps->err = t4_err(EINVAL, "formula '%s': missing ')'", ps->s);
	} else if (isdigit((unsigned char)*ps->p)) {
		char *end;
		double k = strtod(ps->p, &end);
		ps->p = end;
		emit(ps, OP_CONST, 0, k);
	} else if (name_char(*ps->p)) {
		parse_name(ps);
	} else if (!ps->err) {
		ps->err = t4_err(EINVAL, "formula '%s': unexpected '%c'", ps->s,
				 *ps->p ? *ps->p : '$');
	}
}

static void parse_term(struct parser *ps)
{
	parse_factor(ps);
	for (skip_space(ps); !ps->err && (*ps->p == '*' || *ps->p == '/'); skip_space(ps)) {
		char op = *ps->p++;
		parse_factor(ps);
		emit(ps, op == '*' ? OP_MUL : OP_DIV, 0, 0);
	}
}

static void parse_expr(struct parser *ps)
{
	parse_term(ps);
	for (skip_space(ps); !ps->err && (*ps->p == '+' || *ps->p == '-'); skip_space(ps)) {
		char op = *ps->p++;
		parse_term(ps);
		emit(ps, op == '+' ? OP_ADD : OP_SUB, 0, 0);
	}
}

static bool is_load(const struct t4_expr *e, uint8_t i)
{
	return e->code[i].op <= OP_CONST;
}

/* Which of the forms evaluated straight the code is, if any. */
static uint8_t shape_of(const struct t4_expr *e)
{
	static const bool div_div[] = { 1, 1, 0, 1, 1, 0, 0 }; /* a b / c d / / */

	if (e->n == 3 && is_load(e, 0) && is_load(e, 1) && e->code[2].op == OP_DIV)
		return SHAPE_DIV;
	if (e->n != T4_ARRAY_LEN(div_div))
		return SHAPE_ANY;
	for (uint8_t i = 0; i < e->n; i++)
		if (div_div[i] ? !is_load(e, i) : e->code[i].op != OP_DIV)
			return SHAPE_ANY;
	return SHAPE_DIV_DIV;
}

int dec_expr_compile(const char *expr, t4_expr_lookup lookup, void *ud, struct t4_expr *out)
{
	struct parser ps = { .s = expr, .p = expr, .lookup = lookup, .ud = ud, .out = out };

	out->n = 0;
	parse_expr(&ps);
	skip_space(&ps);
	if (!ps.err && *ps.p)
		ps.err = t4_err(EINVAL, "formula '%s': unexpected '%c'", expr, *ps.p);
	out->shape = ps.err ? SHAPE_ANY : shape_of(out);
	return ps.err;
}

static inline double load(const struct t4_expr *e, uint8_t i, const double *counts,
			  double elapsed_ns)
{
	uint8_t op = e->code[i].op;

	return op == OP_EVENT ? counts[e->code[i].event] : op == OP_ELAPSED ? elapsed_ns
									    : e->code[i].k;
}

static inline double quotient(double a, double b)
{
	return b != 0 ? a / b : NAN;
}

double dec_expr_eval(const struct t4_expr *e, const double *counts, double elapsed_ns)
{
	double st[T4_EXPR_MAX];
	int sp = 0;

	if (e->shape == SHAPE_DIV)
		return quotient(load(e, 0, counts, elapsed_ns), load(e, 1, counts, elapsed_ns));
	if (e->shape == SHAPE_DIV_DIV)
		return quotient(quotient(load(e, 0, counts, elapsed_ns), load(e, 1, counts, elapsed_ns)),
				quotient(load(e, 3, counts, elapsed_ns), load(e, 4, counts, elapsed_ns)));
	for (uint8_t i = 0; i < e->n; i++) {
		switch (e->code[i].op) {
		case OP_EVENT: st[sp++] = counts[e->code[i].event]; break;
		case OP_ELAPSED: st[sp++] = elapsed_ns; break;
		case OP_CONST: st[sp++] = e->code[i].k; break;
		case OP_ADD: sp--; st[sp - 1] += st[sp]; break;
		case OP_SUB: sp--; st[sp - 1] -= st[sp]; break;
		case OP_MUL: sp--; st[sp - 1] *= st[sp]; break;
		default: /* OP_DIV */
			sp--;
			st[sp - 1] = quotient(st[sp - 1], st[sp]);
			break;
		}
	}
	return sp == 1 ? st[0] : NAN;
}
