/* fmt.c - a buffered text writer for the decoder's outputs: integers,
 * 128-bit totals, metric values, JSON strings and RFC 4180 CSV fields.
 *
 * Trade-offs: printf is the slow part of writing millions of rows, so
 * numbers are formatted by hand: integers two digits per division (eight
 * per 64-bit one), metric values rounded to 9 significant digits with one
 * power-of-ten table (which also finds their decimal exponent: log10 only
 * where a value lies within 1e-9 of a power of ten) and printed in plain
 * decimal (exponent form only outside 1e-6..1e15). Output goes through one
 * large buffer and fwrite (put and ch are inline: a CSV row is a dozen of
 * them); a buffer without a file (a scratch line) grows instead. A write
 * error is sticky and returned at flush, the way a stream reports ENOSPC
 * or EPIPE.
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int dec_wbuf_init(struct t4_wbuf *w, FILE *f, size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->cap = cap;
	w->buf = malloc(cap);
	return w->buf ? 0 : t4_err(ENOMEM, "out of memory");
}

void dec_wbuf_free(struct t4_wbuf *w)
{
	free(w->buf);
	w->buf = NULL;
}

int dec_wbuf_flush(struct t4_wbuf *w)
{
	if (w->len && !w->error && fwrite(w->buf, 1, w->len, w->f) != w->len)
		w->error = -(errno ? errno : EIO);
	w->len = 0;
	if (!w->error && fflush(w->f) != 0)
		w->error = -(errno ? errno : EIO);
	return w->error;
}

/* The buffer is full: written out, or, for a scratch buffer without a
 * file (a CSV row's shared part), doubled: a line longer than its first
 * size (names of non-UTF-8 bytes, four text bytes each) is never lost. */
static void spill(struct t4_wbuf *w)
{
	if (!w->f) {
		char *b = w->error ? NULL : realloc(w->buf, 2 * w->cap);
		if (b) {
			w->buf = b;
			w->cap *= 2;
			return;
		}
		w->error = w->error ? w->error : -ENOMEM;
	} else if (!w->error && fwrite(w->buf, 1, w->len, w->f) != w->len) {
		w->error = -(errno ? errno : EIO);
	}
	w->len = 0;
}

void dec_wbuf_put_more(struct t4_wbuf *w, const char *s, size_t n)
{
	while (n) {
		if (w->len == w->cap)
			spill(w);
		size_t k = w->cap - w->len < n ? w->cap - w->len : n;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
	}
}

void dec_wbuf_ch_more(struct t4_wbuf *w, char c)
{
	spill(w);
	w->buf[w->len++] = c;
}

/* "00" .. "99": two digits per division. */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* v < 100000000 in decimal, right-aligned to end; its start. 32-bit
 * divisions: a 64-bit one costs more on every machine we run on. */
static char *u32_digits(uint32_t v, char *end)
{
	char *p = end;

	while (v >= 100) {
		uint32_t r = v % 100;
		v /= 100;
		p -= 2;
		memcpy(p, digit_pairs + 2 * r, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

/* v < 100000000 as exactly 8 digits, zeros in front, ending at end. */
static inline void put8_digits(uint32_t v, char *end)
{
	uint32_t hi = v / 10000, lo = v % 10000;

	memcpy(end - 8, digit_pairs + 2 * (hi / 100), 2);
	memcpy(end - 6, digit_pairs + 2 * (hi % 100), 2);
	memcpy(end - 4, digit_pairs + 2 * (lo / 100), 2);
	memcpy(end - 2, digit_pairs + 2 * (lo % 100), 2);
}

/* v in decimal, right-aligned to end (20 bytes at most); its start: the
 * low groups of eight digits with their zeros, then the rest. */
static char *u64_digits(uint64_t v, char *end)
{
	while (v >= 100000000) {
		put8_digits((uint32_t)(v % 100000000), end);
		end -= 8;
		v /= 100000000;
	}
	return u32_digits((uint32_t)v, end);
}

static const uint64_t pow10_u64[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

/* How many decimal digits v has: from its bit length (log10(2) ~
 * 1233 / 4096), corrected by one compare. */
static size_t u64_len(uint64_t v)
{
	if (v < 10)
		return 1;
	size_t n = ((size_t)(64 - __builtin_clzll(v)) * 1233) >> 12; /* 1..19 */

	return n + (v >= pow10_u64[n]);
}

size_t dec_fmt_u64(char *out, uint64_t v)
{
	size_t n = u64_len(v);

	u64_digits(v, out + n);
	return n;
}

void dec_wbuf_u64(struct t4_wbuf *w, uint64_t v)
{
	char tmp[DEC_FMT_MAX];

	if (w->cap - w->len >= DEC_FMT_MAX) {
		w->len += dec_fmt_u64(w->buf + w->len, v);
		return;
	}
	dec_wbuf_put(w, tmp, dec_fmt_u64(tmp, v));
}

void dec_wbuf_i64(struct t4_wbuf *w, int64_t v)
{
	if (v < 0) {
		dec_wbuf_ch(w, '-');
		dec_wbuf_u64(w, (uint64_t)0 - (uint64_t)v);
		return;
	}
	dec_wbuf_u64(w, (uint64_t)v);
}

static const double pow10_tab[] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* 1 / pow10_tab[i], the same doubles without a division: 10^i is exact
 * for i <= 22, so the quotient and the literal are both 10^-i correctly
 * rounded. */
static const double pow10_neg_tab[] = {
	1e0,   1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8,  1e-9,  1e-10, 1e-11,
	1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22,
};
_Static_assert(sizeof(pow10_tab) == sizeof(pow10_neg_tab), "one power of ten each");

static double pow10_of(int e)
{
	if (e >= 0 && e < (int)T4_ARRAY_LEN(pow10_tab))
		return pow10_tab[e];
	if (e < 0 && -e < (int)T4_ARRAY_LEN(pow10_neg_tab))
		return pow10_neg_tab[-e];
	return pow(10, e);
}

/* v * 10^e for the 9 digits of v: below about 1e-300 (subnormals among
 * them) 10^e itself is past DBL_MAX, so it is applied in two steps. */
static double times_pow10(double v, int e)
{
	if (e > DBL_MAX_10_EXP)
		return v * 1e300 * pow10_of(e - 300);
	return v * pow10_of(e);
}

/* floor(log10(v)) for v > 0. Inside 1e-6..1e15 (where metrics live) by
 * the power-of-ten tables, a few compares instead of log10; within 1e-9 of
 * a power of ten, where log10's rounding decides, by log10 as before, so
 * every value prints to the same digits. */
static int decimal_exponent(double v)
{
	int e = 0;

	if (v >= 1e-6 && v < 1e15) {
		double lo = 1;
		if (v >= 1) {
			while (v >= pow10_tab[e + 1])
				e++;
			lo = pow10_tab[e];
		} else {
			while (v < (lo = pow10_neg_tab[-e]))
				e--;
		}
		if (v > lo * (1 + 1e-9) && v < lo * (10 - 1e-8))
			return e;
	}
	return (int)floor(log10(v));
}

/* llround() of x >= 0: half away from zero (below 2^53, x - trunc(x) is
 * exact). */
static uint64_t round_positive(double x)
{
	if (!(x < 0x1p53)) /* not reached by a finite v's 9 digits */
		return (uint64_t)llround(x);
	uint64_t m = (uint64_t)x;

	return m + (x - (double)m >= 0.5);
}

size_t dec_fmt_f64(char *out, double v)
{
	/* the 9 digits, then zeros: the plain forms copy fixed 16 and 8 bytes
	 * (out has DEC_FMT_MAX of room) and keep the length they need */
	char digits[24];
	size_t n = 0;

	if (!isfinite(v)) {
		const char *t = isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
		memcpy(out, t, strlen(t));
		return strlen(t);
	}
	if (v == 0) {
		out[0] = '0';
		return 1;
	}
	if (v < 0) {
		out[n++] = '-';
		v = -v;
	}
	int e = decimal_exponent(v);
	uint64_t m = round_positive(times_pow10(v, 8 - e)); /* 9 digits */
	if (m >= 1000000000ull) {
		e++;
		m = round_positive(times_pow10(v, 8 - e));
	}
	memset(digits, '0', sizeof(digits));
	digits[0] = (char)('0' + m / 100000000 % 10); /* its low 9 digits */
	put8_digits((uint32_t)(m % 100000000), digits + 9);
	int nd = 9;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--; /* significant digits only */
	if (e < -6 || e >= 15) {
		out[n++] = digits[0];
		if (nd > 1) {
			out[n++] = '.';
			for (int i = 1; i < nd; i++)
				out[n++] = digits[i];
		}
		n += (size_t)snprintf(out + n, DEC_FMT_MAX - n, "e%+d", e);
	} else if (e < 0) { /* 0.000ddd: -e - 1 zeros after the point */
		memcpy(out + n, "0.000000", 8);
		n += (size_t)(1 - e);
		memcpy(out + n, digits, 16);
		n += (size_t)nd;
	} else { /* ddd[.ddd], zeros up to the point */
		memcpy(out + n, digits, 16);
		n += (size_t)e + 1;
		if (nd > e + 1) {
			out[n] = '.';
			memcpy(out + n + 1, digits + e + 1, 8);
			n += (size_t)(nd - e);
		}
	}
	return n;
}

const char *t4_fmt_value(double v, char *buf, size_t cap)
{
	char tmp[DEC_FMT_MAX];

	snprintf(buf, cap, "%.*s", (int)dec_fmt_f64(tmp, v), tmp);
	return buf;
}

void dec_wbuf_f64(struct t4_wbuf *w, double v)
{
	char tmp[DEC_FMT_MAX];

	if (w->cap - w->len >= DEC_FMT_MAX) {
		w->len += dec_fmt_f64(w->buf + w->len, v);
		return;
	}
	dec_wbuf_put(w, tmp, dec_fmt_f64(tmp, v));
}

/* The length of s when it needs no care in a CSV field (sep: the field
 * separator) or a JSON string (sep '\\'): ASCII with neither a quote nor
 * a control character (DEL too) nor sep, which both write as it is;
 * SIZE_MAX if s has one, for the careful path. The usual name: written in
 * one piece. */
static size_t plain_len(const char *s, char sep)
{
	size_t n = 0;

	for (unsigned char c; (c = (unsigned char)s[n]); n++)
		if (c >= 0x7f || c < 0x20 || c == '"' || c == (unsigned char)sep)
			return SIZE_MAX;
	return n;
}

void dec_wbuf_json_str(struct t4_wbuf *w, const char *s)
{
	size_t plain = plain_len(s, '\\');
	char piece[T4_JSON_PIECE];

	dec_wbuf_ch(w, '"');
	if (plain != SIZE_MAX) {
		dec_wbuf_put(w, s, plain);
		s += plain;
	}
	while (*s) {
		s += t4_json_next(s, 0, piece);
		dec_wbuf_str(w, piece);
	}
	dec_wbuf_ch(w, '"');
}

void dec_wbuf_csv_field(struct t4_wbuf *w, const char *s, char sep, unsigned flags)
{
	size_t plain = plain_len(s, sep);
	bool quote = false;
	char piece[5];

	if (plain != SIZE_MAX) {
		dec_wbuf_put(w, s, plain);
		return;
	}
	/* quoted by what is written, not by s: the text \xNN that stands for
	 * a byte brings a backslash, which may be the separator (-x '\') */
	for (const char *p = s; *p && !quote;) {
		p += t4_text_next(p, flags, piece);
		quote = strpbrk(piece, "\"\r\n") || strchr(piece, sep);
	}
	if (!quote && t4_text_clean(s, flags)) {
		dec_wbuf_str(w, s);
		return;
	}
	if (quote)
		dec_wbuf_ch(w, '"');
	while (*s) {
		s += t4_text_next(s, flags, piece);
		for (const char *p = piece; *p; p++) {
			if (*p == '"')
				dec_wbuf_ch(w, '"');
			dec_wbuf_ch(w, *p);
		}
	}
	if (quote)
		dec_wbuf_ch(w, '"');
}
