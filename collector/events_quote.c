/* events_quote.c - names in the event syntax that the syntax itself would
 * split: a PMU, event or filter name (sysfs allows any byte but '/' and
 * NUL in a file name) holding ',', '=', '{', '}', ':', a space, a glob
 * character or any byte outside [A-Za-z0-9_.-] is written in double
 * quotes, '"' and '\' inside escaped by '\': "acme,fabric"/cycles/. So
 * every counter's spec parses back to the same PMU and encoding
 * (docs/EVENTS.md, "Names that need quotes").
 *
 * Trade-offs: only the two escapes, no \xNN: a spec is text of any bytes
 * (the log keeps them as they are; outputs escape them for display), and
 * a name made of the plain characters, every real PMU's, is written as it
 * was, so logs and specs of ordinary machines are unchanged. A quoted PMU
 * name is a name, never a glob.
 */
#include "events_int.h"
#include "util/util.h"

#include <errno.h>
#include <string.h>

static bool plain_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

bool ev_is_plain(const char *name)
{
	if (!*name)
		return false;
	for (const char *p = name; *p; p++)
		if (!plain_char(*p))
			return false;
	return true;
}

bool t4_events_quote(char *buf, size_t cap, const char *name)
{
	size_t n = 0;

	if (ev_is_plain(name)) {
		if (strlen(name) >= cap)
			return false;
		memcpy(buf, name, strlen(name) + 1);
		return true;
	}
	if (cap < 3)
		return false;
	buf[n++] = '"';
	for (const char *p = name; *p; p++) {
		bool esc = *p == '"' || *p == '\\';
		if (n + esc + 1 + 2 > cap) /* this byte (escaped), the quote, the NUL */
			return false;
		if (esc)
			buf[n++] = '\\';
		buf[n++] = *p;
	}
	buf[n++] = '"';
	buf[n] = '\0';
	return true;
}

/* Forward only (j <= i), so buf may be s itself. */
int ev_unquote(const char *s, char *buf, size_t cap)
{
	size_t i = 1, j = 0;

	for (; s[i] && s[i] != '"'; i++, j++) {
		if (s[i] == '\\' && (s[i + 1] == '"' || s[i + 1] == '\\'))
			i++;
		if (j + 1 >= cap)
			return t4_err(EINVAL, "%.40s...: quoted name too long", s);
		buf[j] = s[i];
	}
	if (s[i] != '"')
		return t4_err(EINVAL, "%s: missing closing '\"'", s);
	if (j == 0)
		return t4_err(EINVAL, "%s: empty quoted name", s);
	buf[j] = '\0';
	return (int)(i + 1);
}

size_t ev_span(const char *s, const char *stop)
{
	size_t i = 0;

	for (; s[i] && !strchr(stop, s[i]); i++) {
		if (s[i] != '"')
			continue;
		for (i++; s[i] && s[i] != '"'; i++)
			if (s[i] == '\\' && (s[i + 1] == '"' || s[i + 1] == '\\'))
				i++;
		if (!s[i])
			return i;
	}
	return i;
}
