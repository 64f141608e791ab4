/* name.c - the rule both ends of the control protocol apply to bookmark
 * names (the recorder's scheduler, the socket's parser, libt410trace):
 * 1-63 characters of A-Z a-z 0-9 _ . : -, so a name is one word on a
 * command line, one field in a CSV and needs no quoting anywhere.
 */
#include "control.h"
#include "util/util.h"

#include <errno.h>
#include <string.h>

bool t4_control_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n >= T4_CONTROL_NAME_MAX)
		return false;
	for (const char *p = name; *p; p++) {
		char ch = *p;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || strchr("_.:-", ch);
		if (!ok)
			return false;
	}
	return true;
}

int t4_control_name_error(const char *name)
{
	return t4_err(EINVAL, "bookmark '%.80s': use 1-%d characters of A-Z a-z 0-9 _ . : -",
		      name ? name : "(null)", T4_CONTROL_NAME_MAX - 1);
}
