/* cluster_testutil.h - a one-node Slurm cluster of the test's own
 * (tests/cluster/slurm.sh), and shell lines run in it as a user runs them:
 * in the cluster's environment (SLURM_CONF), in its work directory, each
 * bounded by timeout(1), so a broken daemon fails the test with its
 * output, never hangs it.
 *
 * t4t_slurm_start() skips the test with the script's probed reason (exit
 * 77: not root, slurm-wlm or munge missing, a daemon that does not start,
 * with its log's last lines) and fails it when the node does not get idle.
 * The cluster belongs to the test process: slurm.sh's guard stops it
 * when the process is gone, so a failed or timed-out test (Criterion
 * kills it) leaves nothing running; t4t_slurm_stop() stops it at once.
 * Header-only, like cli_testutil.h.
 */
#ifndef T4_CLUSTER_TESTUTIL_H
#define T4_CLUSTER_TESTUTIL_H

#include "cli_testutil.h"
#include "probe.h"

#include <sys/stat.h>

struct t4t_slurm {
	char script[PATH_MAX]; /* tests/cluster/slurm.sh */
	char dir[PATH_MAX];    /* the cluster's directory (empty: stopped) */
	char work[PATH_MAX];   /* dir/work: where the jobs run and write */
	char node[256];        /* the node's name (SLURMD_NODENAME) */
	char out[1 << 16];     /* the last command's output and errors */
};

static inline void t4t_slurm_script(struct t4t_slurm *c)
{
	t4t_need_cmd("bash");
	cr_assert_not_null(cli_repo_file("tests/cluster/slurm.sh", c->script),
			   "tests/cluster/slurm.sh not found");
}

/* A shell line in the cluster's environment and work directory, its
 * output and errors in c->out; at most limit_s seconds (exit 124, said
 * in c->out). Returns the exit status. */
static inline int t4t_slurm_sh(struct t4t_slurm *c, int limit_s, const char *fmt, ...)
{
	char path[PATH_MAX + 16];
	va_list ap;
	FILE *f;
	int st;

	snprintf(path, sizeof(path), "%s/.cmd.sh", c->work);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	cr_assert_eq(fclose(f), 0);
	st = cli_run(c->out, sizeof(c->out),
		     "cd '%s' && . '%s/env' && timeout -k 10 %d sh ./.cmd.sh </dev/null 2>&1", c->work,
		     c->dir, limit_s);
	if (st == 124 || st == 137) {
		size_t n = strlen(c->out);
		snprintf(c->out + n, sizeof(c->out) - n, "\n(timed out after %d s)", limit_s);
	}
	return st;
}

/* Start a cluster owned by this process (see the top). */
static inline void t4t_slurm_start(struct t4t_slurm *c)
{
	char *last;
	int st;

	t4t_slurm_script(c);
	st = cli_run(c->out, sizeof(c->out), "bash '%s' start --owner %ld 2>&1", c->script,
		     (long)getpid());
	t4t_chomp(c->out);
	if (st == 77)
		cr_skip_test("%s", c->out);
	cr_assert_eq(st, 0, "slurm.sh start (exit %d): %s", st, c->out);
	last = strrchr(c->out, '\n');
	snprintf(c->dir, sizeof(c->dir), "%s", last ? last + 1 : c->out);
	cr_assert_lt((size_t)snprintf(c->work, sizeof(c->work), "%s/work", c->dir), sizeof(c->work));
	cr_assert_eq(mkdir(c->work, 0755), 0, "mkdir %s", c->work);
	cr_assert_eq(t4t_slurm_sh(c, 30, "printf %%s \"$T4_SLURM_NODE\""), 0, "%s", c->out);
	snprintf(c->node, sizeof(c->node), "%s", c->out);
	cr_assert(c->node[0], "no node name in %s/env", c->dir);
}

/* Stop the cluster now (nothing when it is not running). */
static inline void t4t_slurm_stop(struct t4t_slurm *c)
{
	int st;

	if (!c->dir[0])
		return;
	st = cli_run(c->out, sizeof(c->out), "bash '%s' stop '%s' 2>&1", c->script, c->dir);
	cr_assert_eq(st, 0, "slurm.sh stop: %s", c->out);
	cr_assert(access(c->dir, F_OK), "%s is still there", c->dir);
	c->dir[0] = '\0';
}

#endif
