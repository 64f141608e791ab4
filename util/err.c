/* err.c - the project's one error convention.
 *
 * Functions return 0 or a negative errno; the one-line reason lives in a
 * thread-local buffer so that the trigger path never allocates and threads
 * never see each other's messages. t4_err() may be passed t4_errmsg() as an
 * argument (to add context): it formats into a scratch buffer first.
 * Messages quote user input (event strings, sysfs files, control lines),
 * which may hold line breaks: they become spaces, so a message is always
 * one line (for the terminal and for the control socket's replies).
 */
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_msg[512];

int t4_err(int errnum, const char *fmt, ...)
{
	char tmp[sizeof(last_msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	for (char *p = tmp; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	memcpy(last_msg, tmp, sizeof(last_msg));
	return errnum > 0 ? -errnum : (errnum == 0 ? -EINVAL : errnum);
}

const char *t4_errmsg(void)
{
	return last_msg;
}

int t4_report(int err)
{
	const char *m = last_msg[0] ? last_msg : strerror(err < 0 ? -err : err);

	fprintf(stderr, "t410trace: %s\n", m);
	switch (-err) { /* what the user gave was wrong: a flag, a path, a file */
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
	case EADDRINUSE:
	case EEXIST:
	case ESRCH:
		return 2;
	default:
		return 1;
	}
}

void t4_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("t410trace: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
