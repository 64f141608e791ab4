/* table.c - aligned text tables for the summary: label columns, then
 * number columns, each number column in one format (its decimals chosen
 * from the largest value in it, so 157.0 never stands beside 24.381, and
 * no exponent nor -0.000; a time column's fixed, dec_table_times; a
 * duration above 0 never 0.000, dec_table_span), absent values as "-". Rows are kept until the table is
 * printed, since the format of a column depends on all of it. Labels,
 * heads and units are made safe for a terminal (util/text.c): a head may
 * be a name from the log (a GPU timeline's).
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int dec_table_init(struct t4_table *t, size_t nl, const char *const *lhead, size_t nc,
		  const char *const *chead, const char *const *cunit)
{
	memset(t, 0, sizeof(*t));
	if (nl > T4_TABLE_LABELS || nc > T4_TABLE_COLS)
		return t4_err(EINVAL, "table too wide");
	t->nl = nl;
	t->nc = nc;
	for (size_t c = 0; c < T4_TABLE_COLS; c++)
		t->decimals[c] = -1;
	for (size_t i = 0; i < nl; i++)
		t->lhead[i] = lhead[i];
	for (size_t c = 0; c < nc; c++) {
		t->chead[c] = t4_text(chead[c], T4_TEXT_CONTROL, t->head_text[c][0],
				      sizeof(t->head_text[c][0]));
		t->cunit[c] = t4_text(cunit ? cunit[c] : "", T4_TEXT_CONTROL, t->head_text[c][1],
				      sizeof(t->head_text[c][1]));
	}
	return 0;
}

void dec_table_free(struct t4_table *t)
{
	free(t->label);
	free(t->v);
	free(t->integer);
	memset(t, 0, sizeof(*t));
}

int dec_table_row(struct t4_table *t, const char *const *labels, const double *v)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 32;
		char(*l)[T4_TABLE_LABELS][T4_TABLE_LABEL_MAX] = realloc(t->label, cap * sizeof(*l));
		double *nv = l ? realloc(t->v, cap * T4_TABLE_COLS * sizeof(*nv)) : NULL;
		char(*ni)[T4_TABLE_COLS][44] =
			nv ? realloc(t->integer, cap * sizeof(*ni)) : NULL;
		if (l)
			t->label = l;
		if (nv)
			t->v = nv;
		if (ni)
			t->integer = ni;
		if (!l || !nv || !ni)
			return t4_err(ENOMEM, "out of memory");
		t->cap = cap;
	}
	size_t r = t->nrows++;
	for (size_t i = 0; i < t->nl; i++) {
		char safe[T4_TABLE_LABEL_MAX];
		snprintf(t->label[r][i], T4_TABLE_LABEL_MAX, "%s",
			 t4_text(labels[i], T4_TEXT_CONTROL, safe, sizeof(safe)));
	}
	for (size_t c = 0; c < t->nc; c++) {
		t->v[r * T4_TABLE_COLS + c] = v ? v[c] : NAN;
		t->integer[r][c][0] = '\0';
	}
	return 0;
}

void dec_table_set_integer(struct t4_table *t, size_t c, t4_u128 v)
{
	if (t->nrows && c < t->nc)
		t4_u128_str(v, t->integer[t->nrows - 1][c], sizeof(t->integer[0][0]));
}

void dec_table_times(struct t4_table *t, size_t from, size_t n)
{
	for (size_t c = from; c < from + n && c < t->nc; c++)
		t->decimals[c] = 3; /* ms: what sec_clamp() rounds to */
}

void dec_table_span(struct t4_table *t, size_t c)
{
	if (c < t->nc) {
		dec_table_times(t, c, 1);
		t->span[c] = true;
	}
}

/* Decimals of a column: fixed, or fewer as its largest value grows (4
 * significant digits at least, 3 decimals at most). */
static int decimals_of(const struct t4_table *t, size_t c)
{
	double max = 0;

	if (t->decimals[c] >= 0)
		return t->decimals[c];

	for (size_t r = 0; r < t->nrows; r++) {
		double v = fabs(t->v[r * T4_TABLE_COLS + c]);
		if (isfinite(v) && v > max)
			max = v;
	}
	return max >= 1000 ? 0 : max >= 100 ? 1 : max >= 10 ? 2 : 3;
}

const char *dec_fixed(double v, int decimals, char *buf, size_t cap)
{
	snprintf(buf, cap, "%.*f", decimals, v);
	if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
		memmove(buf, buf + 1, strlen(buf)); /* (its NUL too) */
	return buf;
}

static void cell(const struct t4_table *t, size_t r, size_t c, int dec, char *buf, size_t cap)
{
	double v = t->v[r * T4_TABLE_COLS + c];

	if (t->integer[r][c][0])
		snprintf(buf, cap, "%s", t->integer[r][c]);
	else if (!isfinite(v))
		snprintf(buf, cap, "-");
	else if (dec_fixed(v, dec, buf, cap) && t->span[c] && v > 0 &&
		 strspn(buf, "0.") == strlen(buf))
		snprintf(buf, cap, "<%.*f", dec, pow(10, -dec)); /* "<0.001" */
}

void dec_table_cell(const struct t4_table *t, size_t r, size_t c, char *buf, size_t cap)
{
	cell(t, r, c, decimals_of(t, c), buf, cap);
}

/* s padded with spaces to w columns, on the left (right-aligned) or the
 * right. */
static void put_padded(FILE *f, const char *s, int w, bool right)
{
	int pad = w - t4_text_cols(s);

	fprintf(f, " %*s%s%*s", right ? pad : 0, "", s, right ? 0 : pad, "");
}

void dec_table_print(const struct t4_table *t, FILE *f)
{
	int lw[T4_TABLE_LABELS], cw[T4_TABLE_COLS], dec[T4_TABLE_COLS];
	char buf[64];

	for (size_t i = 0; i < t->nl; i++) {
		lw[i] = t4_text_cols(t->lhead[i]);
		for (size_t r = 0; r < t->nrows; r++)
			if (t4_text_cols(t->label[r][i]) > lw[i])
				lw[i] = t4_text_cols(t->label[r][i]);
	}
	for (size_t c = 0; c < t->nc; c++) {
		dec[c] = decimals_of(t, c);
		cw[c] = t4_text_cols(t->chead[c]);
		if (t4_text_cols(t->cunit[c]) > cw[c])
			cw[c] = t4_text_cols(t->cunit[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			cell(t, r, c, dec[c], buf, sizeof(buf));
			if ((int)strlen(buf) > cw[c])
				cw[c] = (int)strlen(buf);
		}
	}
	bool units = false;
	for (size_t c = 0; c < t->nc; c++)
		units |= *t->cunit[c] != '\0';
	for (int line = 0; line < 1 + units; line++) {
		fprintf(f, " ");
		for (size_t i = 0; i < t->nl; i++)
			put_padded(f, line ? "" : t->lhead[i], lw[i], false);
		for (size_t c = 0; c < t->nc; c++)
			put_padded(f, line ? t->cunit[c] : t->chead[c], cw[c], true);
		fprintf(f, "\n");
	}
	for (size_t r = 0; r < t->nrows; r++) {
		fprintf(f, " ");
		for (size_t i = 0; i < t->nl; i++)
			put_padded(f, t->label[r][i], lw[i], false);
		for (size_t c = 0; c < t->nc; c++) {
			cell(t, r, c, dec[c], buf, sizeof(buf));
			fprintf(f, " %*s", cw[c], buf);
		}
		fprintf(f, "\n");
	}
}
