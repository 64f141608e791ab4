/* text.c - names from a log reach terminals, JSON parsers and protobuf
 * readers, and a log may hold any bytes (a thread named with 0xff, a
 * bookmark with an escape sequence): this is the one place that decides
 * what such text becomes.
 *
 * Valid UTF-8 (RFC 3629: shortest form, no surrogates, at most U+10FFFF)
 * passes through; any other byte becomes the four characters \xNN. For a
 * terminal, control characters (C0, DEL, and C1 as UTF-8) are escaped the
 * same way, and so are the characters that reorder or break text without
 * being C0 or C1: the bidirectional controls (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069: "txt\u202eexe.pdf" shows as
 * "txtfdp.exe") and the line and paragraph separators (U+2028, U+2029),
 * each byte as \xNN, so a name can neither garble the screen, nor hide or
 * reorder what follows it, nor start a line. Nothing allocates: callers
 * give a buffer, or write byte by byte.
 */
#include "util.h"

#include <stdio.h>
#include <string.h>

size_t t4_utf8_seq(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char c = p[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return c ? 1 : 0;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0; /* a NUL ends the string here too */
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0; /* overlong, a surrogate, or past Unicode */
	return n;
}

bool t4_text_control(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	if (n == 1)
		return u[0] < 0x20 || u[0] == 0x7f; /* C0, DEL */
	if (n == 2)
		return (u[0] == 0xc2 && u[1] < 0xa0) ||  /* C1 */
		       (u[0] == 0xd8 && u[1] == 0x9c);   /* U+061C */
	if (n != 3 || u[0] != 0xe2)
		return false;
	if (u[1] == 0x80) /* U+200E U+200F, U+2028 U+2029, U+202A-U+202E */
		return u[2] == 0x8e || u[2] == 0x8f || (u[2] >= 0xa8 && u[2] <= 0xae);
	return u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9; /* U+2066-U+2069 */
}

/* Whether the character of length n at s must be escaped for flags. */
static bool must_escape(const unsigned char *s, size_t n, unsigned flags)
{
	if (!n)
		return true; /* not UTF-8 */
	return (flags & T4_TEXT_CONTROL) && t4_text_control((const char *)s, n);
}

size_t t4_text_next(const char *s, unsigned flags, char out[5])
{
	size_t n = t4_utf8_seq(s);

	if (must_escape((const unsigned char *)s, n, flags)) {
		snprintf(out, 5, "\\x%02x", (unsigned char)s[0]);
		return 1;
	}
	memcpy(out, s, n);
	out[n] = '\0';
	return n;
}

bool t4_text_clean(const char *s, unsigned flags)
{
	while (*s) {
		size_t n = t4_utf8_seq(s);
		if (must_escape((const unsigned char *)s, n, flags))
			return false;
		s += n;
	}
	return true;
}

const char *t4_text(const char *s, unsigned flags, char *buf, size_t cap)
{
	size_t len = 0;
	char piece[5];

	if (t4_text_clean(s, flags) || !cap)
		return s;
	while (*s) {
		s += t4_text_next(s, flags, piece);
		size_t k = strlen(piece);
		if (len + k >= cap)
			break; /* cut at a whole character */
		memcpy(buf + len, piece, k);
		len += k;
	}
	buf[len] = '\0';
	return buf;
}

/* The code point of the valid UTF-8 character of n bytes at s. */
static uint32_t code_point(const unsigned char *s, size_t n)
{
	uint32_t cp = n == 1 ? s[0] : s[0] & (0x7f >> n);

	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

size_t t4_json_next(const char *s, unsigned flags, char out[T4_JSON_PIECE])
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t n = t4_utf8_seq(s);

	if (must_escape(u, n, flags & T4_TEXT_CONTROL)) {
		/* the text \xNN, its backslash escaped for JSON */
		snprintf(out, T4_JSON_PIECE, "\\\\x%c%c", hex[u[0] >> 4], hex[u[0] & 15]);
		return 1;
	}
	if (n == 1 && (u[0] == '"' || u[0] == '\\')) {
		snprintf(out, T4_JSON_PIECE, "\\%c", u[0]);
		return 1;
	}
	if ((n == 1 && u[0] < 0x20) || t4_text_control(s, n) ||
	    ((flags & T4_JSON_HTML) && n == 1 && strchr("<>&", u[0]))) {
		uint32_t cp = code_point(u, n); /* all below U+10000 */
		snprintf(out, T4_JSON_PIECE, "\\u%c%c%c%c", hex[cp >> 12 & 15], hex[cp >> 8 & 15],
			 hex[cp >> 4 & 15], hex[cp & 15]);
		return n;
	}
	memcpy(out, s, n);
	out[n] = '\0';
	return n;
}

void t4_json_str(FILE *f, const char *s)
{
	char piece[T4_JSON_PIECE];

	fputc('"', f);
	while (*s) {
		s += t4_json_next(s, 0, piece);
		fputs(piece, f);
	}
	fputc('"', f);
}

/* Is code point u drawn two columns wide (East Asian wide and fullwidth
 * forms, emoji)? The ranges of Unicode's EastAsianWidth W and F that
 * names use. */
static bool wide_cp(uint32_t u)
{
	return (u >= 0x1100 && u <= 0x115f) || (u >= 0x2e80 && u <= 0xa4cf && u != 0x303f) ||
	       (u >= 0xac00 && u <= 0xd7a3) || (u >= 0xf900 && u <= 0xfaff) ||
	       (u >= 0xfe30 && u <= 0xfe4f) || (u >= 0xff00 && u <= 0xff60) ||
	       (u >= 0xffe0 && u <= 0xffe6) || (u >= 0x1f300 && u <= 0x1faff) ||
	       (u >= 0x20000 && u <= 0x3fffd);
}

int t4_text_cols(const char *s)
{
	int n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		uint32_t u = *p++;
		int more = u >= 0xf0 ? 3 : u >= 0xe0 ? 2 : u >= 0xc0 ? 1 : 0;
		u &= more ? 0x3fu >> more : 0x7fu;
		for (; more && (*p & 0xc0) == 0x80; more--)
			u = u << 6 | (*p++ & 0x3fu);
		n += 1 + wide_cp(u);
	}
	return n;
}
