/* fuzz_control.c - libFuzzer harness for the control protocol's line
 * parser (sched/control.c t4_control_exec) with fake ops.
 *
 * Input: byte 0 picks how the fake ops behave (succeed, fail with or
 * without a message, a missing op, a long or multi-line status) and byte 1
 * the reply buffer's size; the rest is the command line. Checks: the reply
 * is one terminated line within its buffer, "ok..." exactly when 0 is
 * returned, "error: <something>" otherwise; a bookmark reaches the op
 * only with a valid name.
 */
#include "fuzz_common.h"
#include "control/control.h"

#include <errno.h>
#include <stdint.h>

struct fake {
	uint8_t mode;
	int calls;
};

static int result(struct fake *f)
{
	f->calls++;
	switch (f->mode % 4) {
	case 0: return 0;
	case 1: return t4_err(EBUSY, "recorder busy");
	case 2: return -EIO; /* no message of its own */
	default: return -ENOTSUP;
	}
}

static int op_bookmark(void *ud, const char *name)
{
	size_t n = strlen(name);

	FUZZ_CHECK(n > 0 && n < T4_CONTROL_NAME_MAX && !strpbrk(name, " \t\r\n"),
		   "bookmark op got '%s'", name);
	return result(ud);
}

static int op_simple(void *ud)
{
	return result(ud);
}

static int op_status(void *ud, char *buf, size_t cap)
{
	struct fake *f = ud;

	if ((f->mode >> 2) & 1) /* fill it all, with a newline inside */
		for (size_t i = 0; i + 1 < cap; i++)
			buf[i] = i % 50 == 49 ? '\n' : 'x';
	else
		snprintf(buf, cap, "recording triggers=%d", f->calls);
	return result(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct t4_control_ops ops = { op_bookmark, op_simple, op_simple, op_simple, op_status };
	struct fake f = { 0 };
	char *line, *reply;
	size_t cap;
	int rc;

	if (len < 2 || len > 1024)
		return 0;
	f.mode = data[0];
	if ((f.mode >> 3) & 1)
		ops.trigger = NULL;
	if ((f.mode >> 4) & 1)
		ops.bookmark = NULL;
	cap = data[1] % 2 ? T4_CONTROL_REPLY_MAX : (size_t)data[1] / 2 + 8;
	line = fuzz_str(data + 2, len - 2);
	reply = malloc(cap);
	if (!reply)
		abort();
	memset(reply, 0x55, cap);
	rc = t4_control_exec(&ops, &f, line, reply, cap);
	FUZZ_CHECK(memchr(reply, '\0', cap) != NULL, "reply not terminated");
	FUZZ_CHECK(!strchr(reply, '\n') && !strchr(reply, '\r'), "reply spans lines: %s",
		   reply);
	if (rc == 0) {
		FUZZ_CHECK(!strncmp(reply, "ok", cap < 3 ? cap - 1 : 2), "rc 0, reply '%s'", reply);
	} else {
		FUZZ_CHECK(rc < 0 && rc > -4096, "rc %d", rc);
		FUZZ_CHECK(!strncmp(reply, "error: ", cap < 8 ? cap - 1 : 7),
			   "rc %d, reply '%s'", rc, reply);
		FUZZ_CHECK(cap < 9 || strlen(reply) > 7, "empty error reply");
	}
	free(reply);
	free(line);
	return 0;
}
