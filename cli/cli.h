/* cli.h - the subcommands of the t410trace binary.
 *
 * Each subcommand is one file (cmd_<name>.c) with one entry point taking
 * its own argv (argv[0] is the subcommand name). Exit codes: 0 success,
 * 1 runtime failure, 2 bad usage or bad input (one-line message naming it).
 * Shared option handling (--sysfs-root, --sim) lives in opts.c.
 */
#ifndef T4_CLI_H
#define T4_CLI_H

#include <stdbool.h>
#include <stdint.h>

int cmd_record(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_info(int argc, char **argv);

/* Exit code for "bad usage": print "t410trace SUB: msg" + hint. */
int cli_usage_error(const char *sub, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
