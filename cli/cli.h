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
	bool drift_set;            /* --sim-drift given (else the default) */
	uint32_t drift_ppm, wander_ppm;
	uint64_t epoch_ns;         /* the simulator's epoch; 0: now */
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

/* ---- record --virtual and the simulator's knobs (record_virtual.c) ---- */

/* Option codes of --virtual, --sim-drift PPM, --sim-wander PPM,
 * --sim-preempt PROB in record's option table. */
enum { CLI_VIRTUAL = 300, CLI_SIM_DRIFT, CLI_SIM_WANDER, CLI_SIM_PREEMPT };

struct cli_virtual {
	bool on;             /* --virtual */
	bool preempt_set;
	double preempt_prob; /* --sim-preempt */
};

/* What a live recording would have that virtual time refuses. */
struct cli_virtual_live {
	uint64_t duration_ns;
	bool command, paused, control;
};

struct t4_ring;
struct t4_sched_status;
struct t4_log_stats;
struct t4_status_pkt;

/* What record hands over to run in virtual time. */
struct cli_virtual_run {
	const struct cli_virtual *v;
	struct t4_domain_set *domains; /* opened on the simulator */
	struct t4_ring *ring;          /* the log's first ring, T4_RING_WAIT */
	uint64_t period_ns, duration_ns, seed;
	bool per_socket;
	const char *bookmark, *cmdline;
};

/* One of the options above: 0, or 2 after a usage error. --virtual also
 * fixes the simulator's epoch (a seed then gives the same log). */
int cli_virtual_option(const char *sub, int opt, const char *arg, struct cli_virtual *v,
		       struct cli_source *src);
/* The options together: 0, or 2 after a one-line usage error. */
int cli_virtual_check(const char *sub, const struct cli_virtual *v, const struct cli_source *src,
		      const struct cli_virtual_live *live);
/* Metadata, then the recording, into run->ring; st gets the totals. */
int cli_virtual_record(const struct cli_virtual_run *run, struct t4_sched_status *st);
/* The final status packet of such a recording. */
void cli_virtual_final(const struct t4_sched_status *st, struct t4_status_pkt *fin);
/* The summary on stderr: simulated, virtual time, what it holds. */
void cli_virtual_summary(const char *output, const struct t4_domain_set *ds,
			 const struct t4_sched_status *st, const struct t4_log_stats *ls,
			 double seconds);

#endif
