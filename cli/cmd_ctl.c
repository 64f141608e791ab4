/* cmd_ctl.c - `t410trace ctl`: send one command to a running recorder.
 *
 * A thin wrapper over t4_control_send: the words after the options are
 * joined into one command line and the recorder's reply is printed: "ok
 * ..." as is on stdout, a refusal ("error: REASON") as every command's
 * errors are, "t410trace ctl: PATH: REASON" on stderr. The recorder validates the
 * command (one table of commands, in control.c), so this file only checks
 * what it can say without one: a socket path and a command are given.
 */
#include "cli.h"
#include "control/control.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ctl_usage(FILE *f)
{
	fprintf(f,
		"usage: t410trace ctl [-c|--control PATH] COMMAND [ARG]\n\n"
		"Send one command to a recorder started with 'record --control PATH'\n"
		"and print its reply. PATH defaults to $" T4_CONTROL_ENV ".\n\n"
		"commands:\n"
		"  bookmark NAME  tag every following trigger with NAME\n"
		"                 (1-63 characters of A-Z a-z 0-9 _ . : -); each command is\n"
		"                 logged with its time; refused when 32768 wait for a trigger\n"
		"  trigger        fire one trigger now\n"
		"  start          start periodic triggers\n"
		"  stop           stop periodic triggers\n"
		"  status         one line: triggers, overruns, bookmark, ...\n\n"
		"  -c, --control PATH  the recorder's control socket (as record's)\n"
		"  -h, --help          this text\n\n"
		"exit status: 0 ok, 1 the recorder refused or is unreachable (or the reply\n"
		"cannot be written), 2 bad usage, 141 the reader of the reply went away\n");
}

/* Join argv[0..argc) with spaces into line. */
static int join_words(int argc, char **argv, char *line, size_t cap)
{
	size_t len = 0;

	line[0] = '\0';
	for (int i = 0; i < argc; i++) {
		int n = snprintf(line + len, cap - len, "%s%s", i ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= cap - len)
			return -E2BIG;
		len += (size_t)n;
	}
	return 0;
}

int cmd_ctl(int argc, char **argv)
{
	char line[T4_CONTROL_LINE_MAX + 1];
	char reply[T4_CONTROL_REPLY_MAX], safe[4 * T4_CONTROL_REPLY_MAX];
	const char *path = t4_env(T4_CONTROL_ENV);
	int i, err;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			ctl_usage(stdout);
			return 0;
		} else if (!strcmp(a, "--control") || !strcmp(a, "-c")) { /* -c: as record's */
			if (++i == argc)
				return cli_usage_error("ctl", "%s needs a PATH", a);
			path = argv[i];
		} else if (!strncmp(a, "--control=", 10)) {
			path = a + 10;
		} else if (!strcmp(a, "--")) {
			i++;
			break;
		} else {
			static const char *const longs[] = { "control", "help" };

			return cli_unknown_option("ctl", a, longs, T4_ARRAY_LEN(longs));
		}
	}
	if (!path || !path[0])
		return cli_usage_error("ctl", "no recorder given: use --control PATH or set %s",
				       T4_CONTROL_ENV);
	if (i == argc)
		return cli_usage_error("ctl", "no command given (bookmark NAME, trigger, "
				       "start, stop, status)");
	if (!strcmp(argv[i], "live"))
		return cli_usage_error("ctl", "'live' answers with data: 't410trace top' shows it");
	if (join_words(argc - i, argv + i, line, sizeof(line)) < 0)
		return cli_usage_error("ctl", "command longer than %d bytes",
				       T4_CONTROL_LINE_MAX);
	err = t4_control_send(path, line, reply, sizeof(reply));
	/* the reply may quote what was sent (a bad bookmark name): shown as
	 * one line of text, its control bytes and bytes that are not UTF-8
	 * as \xNN */
	const char *text = t4_text(reply, T4_TEXT_CONTROL, safe, sizeof(safe));
	if (err == 0) {
		printf("%s\n", text);
		return cli_stdout_done(0);
	}
	if (err == -EREMOTEIO) { /* the recorder's "error: REASON" */
		const char *why = !strncmp(text, "error: ", 7) ? text + 7 : text;

		t4_err(EREMOTEIO, "%s: %s", path, why); /* one line, whatever the path */
	}
	/* the path as typed (no recorder there) may hold any bytes: \xNN */
	fprintf(stderr, "t410trace ctl: %s\n", t4_text(t4_errmsg(), T4_TEXT_CONTROL, safe,
							 sizeof(safe)));
	return err == -EINVAL ? 2 : 1;
}
