/* main.c - the t410trace binary: dispatch to a subcommand. */
#include "cli.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

int cli_usage_error(const char *sub, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "t410trace %s: ", sub);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 't410trace %s --help')\n", sub);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("t410trace %s\n", T4_VERSION);
		return 0;
	}
	for (size_t i = 0; i < T4_ARRAY_LEN(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "t410trace: '%s' is not a command (see 't410trace --help')\n", argv[1]);
	return 2;
}
