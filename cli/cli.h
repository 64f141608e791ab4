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

#include "collector/collector.h"

int cmd_record(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_info(int argc, char **argv);

/* Exit code for "bad usage": print "t410trace SUB: msg" + hint. */
int cli_usage_error(const char *sub, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Where PMUs come from (source.c): real sysfs, --sysfs-root or --sim. */
struct cli_source {
	bool sim;
	uint64_t seed;
	const char *sysfs_root;    /* NULL: the real sysfs */
	struct t4_sim *simulator;  /* set by cli_source_open with --sim */
	struct t4_pmu_set pmus;    /* set by cli_source_open */
};

/* --sim[=SEED]: 0, or 2 after a usage error. */
int cli_source_set_sim(const char *sub, struct cli_source *s, const char *arg);
/* Options that exclude each other: 0, or 2 after a usage error. */
int cli_source_check(const char *sub, const struct cli_source *s);
/* Create the simulator if asked and discover the PMUs. */
int cli_source_open(struct cli_source *s);
void cli_source_close(struct cli_source *s);

#endif
