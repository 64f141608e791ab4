/* err.c - the project's one error convention.
 *
 * Functions return 0 or a negative errno; the one-line reason lives in a
 * thread-local buffer so that the trigger path never allocates and threads
 * never see each other's messages. t4_err() may be passed t4_errmsg() as an
 * argument (to add context): it formats into a scratch buffer first.
 * Messages quote user input (event strings, sysfs files, control lines,
 * file names), which may hold line breaks, a terminal's escape
 * sequences or bytes that are not UTF-8: every control character (C0, DEL,
 * C1) becomes a space and every byte that is not UTF-8 the four characters
 * \xNN (text.c's rule), so a message is always one line of text and moves
 * no cursor (for the terminal, the control socket's replies and JSON). A
 * message longer than the buffer (a long -e list quoted whole) loses its
 * middle, never its end: "INPUT: reason" keeps which input and why.
 */
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_msg[512];

#define KEEP_HEAD 160 /* of a message too long: its start, "...", its end */

/* A message quotes user input (a file name, an event string): one line,
 * its C0 control characters spaces, so it moves no cursor. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

/* m as text into out (room for 4 x strlen(m) + 1): a control character a
 * space, a byte that is not UTF-8 \\xNN. */
static void as_text(char *out, const char *m)
{
	while (*m) {
		size_t n = t4_utf8_seq(m);

		if (!n) {
			out += sprintf(out, "\\x%02x", (unsigned char)*m);
			n = 1;
		} else if (t4_text_control(m, n)) {
			*out++ = ' ';
		} else {
			memcpy(out, m, n);
			out += n;
		}
		m += n;
	}
	*out = '\0';
}

/* m as one line of text (see the top): m itself, its C0 controls spaces,
 * where it is otherwise clean (no allocation: the trigger path's), else a
 * copy in *copy (free it; where none can be had, m the same way). */
static const char *one_line_text(char *m, char **copy)
{
	*copy = NULL;
	if (!t4_text_clean(m, T4_TEXT_CONTROL) && (*copy = malloc(4 * strlen(m) + 1))) {
		as_text(*copy, m);
		return *copy;
	}
	one_line(m);
	return m;
}

/* Copy message m (len bytes) into last_msg, its middle cut if it does not
 * fit, at character boundaries. */
static void keep(const char *m, size_t len)
{
	size_t tail = sizeof(last_msg) - 1 - KEEP_HEAD - 3, head = KEEP_HEAD, from;

	if (len < sizeof(last_msg)) {
		memcpy(last_msg, m, len + 1);
		return;
	}
	for (; head && ((unsigned char)m[head] & 0xc0) == 0x80; head--)
		;
	for (from = len - tail; ((unsigned char)m[from] & 0xc0) == 0x80; from++)
		;
	memcpy(last_msg, m, head);
	memcpy(last_msg + head, "...", 3);
	memcpy(last_msg + head + 3, m + from, len - from + 1);
}

int t4_err(int errnum, const char *fmt, ...)
{
	char tmp[8192], *big = NULL, *copy; /* t4_errmsg() may be an argument */
	va_list ap, again;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	/* Longer still (a huge argv): whole, off any hot path, to keep the end. */
	if (n >= (int)sizeof(tmp) && (big = malloc((size_t)n + 1)))
		vsnprintf(big, (size_t)n + 1, fmt, again);
	va_end(again);
	va_end(ap);
	if (n < 0)
		n = 0;
	const char *text = one_line_text(big ? big : tmp, &copy);
	keep(text, strlen(text));
	free(copy);
	free(big);
	return errnum > 0 ? -errnum : (errnum == 0 ? -EINVAL : errnum);
}

const char *t4_errmsg(void)
{
	return last_msg;
}

int t4_exit_code(int err)
{
	switch (err < 0 ? -err : err) { /* what the user gave was wrong: a flag, a path, a file */
	case 0:
		return 0;
	case EINVAL:
	case ENOENT:
	case ERANGE:
	case EBADMSG:
	case EPROTO:
	case ENOTSUP:
	case EISDIR:
	case ENOTDIR:
	case EACCES:
	case EROFS:
	case ELOOP:
	case ENAMETOOLONG:
	case EADDRINUSE:
	case EEXIST:
	case ESRCH:
		return 2;
	default:
		return 1;
	}
}

int t4_report(int err)
{
	const char *m = last_msg[0] ? last_msg : strerror(err < 0 ? -err : err);

	fprintf(stderr, "t410trace: %s\n", m);
	return t4_exit_code(err);
}

/* A warning quotes user input as a message does (a log's file name): one
 * line of text as a message is; a longer one is cut. */
void t4_warn(const char *fmt, ...)
{
	char msg[8192], *copy; /* as t4_err()'s: two paths and a reason */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "t410trace: warning: %s\n", one_line_text(msg, &copy));
	free(copy);
}
