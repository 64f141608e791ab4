/* common.c - libbpf's messages and one-line failure reasons, for every
 * BPF component's user side (common.h).
 */
#include "common.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

static bool verbose;
static char last_msg[256];

static int on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;

	va_copy(copy, ap);
	if (level != LIBBPF_DEBUG) {
		vsnprintf(last_msg, sizeof(last_msg), fmt, copy);
		last_msg[strcspn(last_msg, "\n")] = '\0';
	}
	va_end(copy);
	return verbose ? vfprintf(stderr, fmt, ap) : 0;
}

void t4_bpf_messages(bool on)
{
	verbose = on;
	last_msg[0] = '\0';
	libbpf_set_print(on_libbpf_print);
}

int t4_bpf_fail(int err, const char *what)
{
	err = err < 0 ? -err : err;
	if (err == EPERM)
		return t4_err(err, "BPF %s: not permitted (needs root, or CAP_BPF and CAP_PERFMON)",
			      what);
	if (last_msg[0])
		return t4_err(err, "BPF %s: %s (%s)", what, strerror(err), last_msg);
	return t4_err(err, "BPF %s: %s", what, strerror(err));
}
