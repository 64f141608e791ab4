/* main.c - the t410trace binary: dispatch to a subcommand ("did you
 * mean record?" for a misspelled one).
 *
 * SIGPIPE is ignored for the whole program: `t410trace list | head` then
 * sees EPIPE and cleans up (the simulator's temporary tree) instead of
 * dying with it in place, and a log written to a pipe whose reader went
 * away fails with a message. SIGXFSZ too: past a file size limit (ulimit
 * -f) a write fails with EFBIG, said, and decode -o removes its temporary
 * file. record gives its COMMAND both as it found them (cli_signals_start,
 * cli_signals_restore).
 */
#include "cli.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "record", cmd_record, "record counters on one reference timeline" },
	{ "decode", cmd_decode, "align a recorded log and print the timeline" },
	{ "list", cmd_list, "list PMUs, events and filters; resolve event strings" },
	{ "ctl", cmd_ctl, "send a command to a running recorder" },
	{ "info", cmd_info, "describe a recorded log" },
	{ "report", cmd_report, "a self-contained HTML report of a log (plots, tables)" },
	{ "top", cmd_top, "a running recording's numbers, live (through its control socket)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: t410trace [--help] [--version] COMMAND [ARGS]\n\n"
		   "Records uncore performance counters of every clock domain (NVIDIA\n"
		   "Tegra410 PMUs or any perf PMU) on one reference timeline.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < T4_ARRAY_LEN(commands); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n't410trace COMMAND --help' describes a command; man t410trace(1).\n");
}

/* The message quotes what was typed (a path, a name, a value): one line
 * that moves no cursor, its control characters and bytes that are not
 * UTF-8 shown as \xNN, as every name the CLI prints (util/text.c). */
static void say_safe(const char *prefix, const char *fmt, va_list ap, const char *suffix)
{
	char msg[8192], safe[4 * 8192];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s%s%s\n", prefix, t4_text(msg, T4_TEXT_CONTROL, safe, sizeof(safe)),
		suffix);
}

int cli_usage_error(const char *sub, const char *fmt, ...)
{
	char prefix[64], suffix[64];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "t410trace %s: ", sub);
	snprintf(suffix, sizeof(suffix), " (see 't410trace %s --help')", sub);
	va_start(ap, fmt);
	say_safe(prefix, fmt, ap, suffix);
	va_end(ap);
	return 2;
}

void cli_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_safe("t410trace: ", fmt, ap, "");
	va_end(ap);
}

static const char *command_at(const void *src, size_t i)
{
	(void)src;
	return commands[i].name;
}

_Static_assert(CLI_EXIT_READER_GONE == 128 + SIGPIPE, "as a shell says a SIGPIPE death");

int cli_stdout_done(int rc)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	if (errno == EPIPE)
		return CLI_EXIT_READER_GONE;
	fprintf(stderr, "t410trace: standard output: %s\n", strerror(errno));
	return rc ? rc : 1;
}

/* A command's exit status once it ended with rc: where it succeeded, what
 * its standard output then says (--help to a full disk: 1; to a reader
 * gone: 141). */
static int finished(int rc)
{
	return rc ? rc : cli_stdout_done(0);
}

/* A standard stream closed by the caller (<&-, >&-) stays unusable, its
 * reads or writes failing with EBADF as before, but its number is taken
 * (by /dev/null opened the other way): a file opened later cannot land
 * on it, where standard input would read our own output or a print to
 * standard output would write into a log. */
static void hold_closed_std_fds(void)
{
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int n = open("/dev/null", (fd == STDIN_FILENO ? O_WRONLY : O_RDONLY) | O_NOCTTY);
		if (n >= 0 && n != fd) { /* (the lowest free number: fd itself) */
			dup2(n, fd);
			close(n);
		}
	}
}

int main(int argc, char **argv)
{
	char hint[64];

	hold_closed_std_fds();
	cli_inherited_fds_start();
	cli_signals_start();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return finished(0);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("t410trace %s\n", T4_VERSION);
		return finished(0);
	}
	for (size_t i = 0; i < T4_ARRAY_LEN(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return finished(commands[i].run(argc - 1, argv + 1));
	if (argv[1][0] == '-' && argv[1][1]) { /* --verison: an option, misspelled */
		static const char *const longs[] = { "help", "version" };
		const char *s = NULL;

		if (argv[1][1] == '-')
			s = t4_suggest(argv[1] + 2, longs, T4_ARRAY_LEN(longs), t4_strv_at);
		if (s)
			snprintf(hint, sizeof(hint), " (did you mean --%s?)", s);
		else
			hint[0] = '\0';
		fprintf(stderr, "t410trace: unknown option '%s'%s (see 't410trace --help')\n",
			argv[1], hint);
		return 2;
	}
	fprintf(stderr, "t410trace: '%s' is not a command%s (see 't410trace --help')\n", argv[1],
		t4_did_you_mean(hint, sizeof(hint),
				t4_suggest(argv[1], NULL, T4_ARRAY_LEN(commands), command_at)));
	return 2;
}
