/* test_cluster.c - real Slurm jobs on this machine (suite "cluster").
 *
 * tests/cluster/slurm.sh starts a one-node cluster of the test's own
 * (Debian's slurm-wlm and munge, as root, in a temporary directory, on
 * free ports; cluster_testutil.h); the test then runs jobs as a user
 * does: `srun -n 2` (each task reports the variables Slurm gives it),
 * `sbatch --wait` of two tasks writing files named by the job ID, and the
 * recorder itself as users run it (`srun -n 2 t410trace record --sim -o
 * 'job%j/trace.%h.t4t' -- COMMAND`, with and without --all-tasks, and in
 * an sbatch script): its logs land under their expanded names, one per
 * node by default, `info` shows the job they belong to, and `decode DIR`
 * merges the --all-tasks logs on one timeline. Every command is bounded by timeout(1): a broken
 * daemon fails the test with its output, never hangs it. Then the
 * harness's own promise: stopped, or its owner killed, nothing it started
 * keeps running. Where Slurm cannot run (not root, packages missing, a
 * daemon that does not start) each test skips with the probed reason.
 */
#include "cluster_testutil.h"

#include <signal.h>

static struct t4t_slurm cl;

static void cluster_fini(void)
{
	t4t_slurm_stop(&cl);
}

/* The PIDs of the cluster's daemons (DIR/pids) into pids; their count. */
static int daemon_pids(const char *dir, long *pids, int cap)
{
	char path[PATH_MAX + 8], name[32];
	long pid;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/pids", dir);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	while (n < cap && fscanf(f, "%31s %ld", name, &pid) == 2)
		pids[n++] = pid;
	fclose(f);
	return n;
}

/* PID runs (not a zombie: a reparented daemon may wait to be reaped). */
static bool running(long pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z';
}

/* Until none of pids runs, at most limit_s seconds; true when none does. */
static bool all_gone(const long *pids, int n, int limit_s)
{
	for (int tick = 0; tick <= limit_s * 10; tick++) {
		int alive = 0;
		for (int i = 0; i < n; i++)
			alive += running(pids[i]);
		if (!alive)
			return true;
		usleep(100000);
	}
	return false;
}

/* srun -n 2: two tasks of one job on the node, local IDs and ranks 0 and 1. */
static void two_tasks_by_srun(void)
{
	long job[2] = { 0 };
	int local[2], rank[2], seen = 0;
	char node[2][256];
	char *line, *save = NULL;

	cr_assert_eq(t4t_slurm_sh(&cl, 60, "srun --overcommit -n 2 sh -c 'echo \"task "
				  "$SLURM_JOB_ID $SLURM_LOCALID $SLURM_PROCID $SLURMD_NODENAME\"'"),
		     0, "srun -n 2: %s", cl.out);
	for (line = strtok_r(cl.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "task ", 5))
			continue;
		cr_assert_lt(seen, 2, "more than two tasks: %s", line);
		cr_assert_eq(sscanf(line, "task %ld %d %d %255s", &job[seen], &local[seen],
				    &rank[seen], node[seen]), 4, "%s", line);
		seen++;
	}
	cr_assert_eq(seen, 2, "srun -n 2 ran %d tasks", seen);
	cr_assert_gt(job[0], 0);
	cr_assert_eq(job[0], job[1], "one job: %ld and %ld", job[0], job[1]);
	cr_assert_eq(local[0] + local[1], 1, "local IDs %d and %d", local[0], local[1]);
	cr_assert_eq(rank[0] + rank[1], 1, "ranks %d and %d", rank[0], rank[1]);
	cr_assert_neq(rank[0], rank[1]);
	for (int i = 0; i < 2; i++)
		cr_assert_str_eq(node[i], cl.node);
}

/* sbatch --wait: a batch job of two tasks, each writing a file named by
 * the job's ID, and the job's output named by %j. */
static void batch_job_files(void)
{
	long id = 0;

	cr_assert_eq(t4t_slurm_sh(&cl, 30, "printf '%%s\\n' '#!/bin/sh' 'srun --overcommit -n 2 "
				  "sh -c '\\''echo \"$SLURM_PROCID $SLURMD_NODENAME\" > "
				  "task.$SLURM_JOB_ID.$SLURM_PROCID'\\''' 'echo batch done' > job.sh"),
		     0, "%s", cl.out);
	cr_assert_eq(t4t_slurm_sh(&cl, 120, "sbatch --wait --parsable --overcommit -n 2 "
				  "-o 'batch.%%j.out' job.sh"), 0, "sbatch --wait: %s", cl.out);
	cr_assert_eq(sscanf(cl.out, "%ld", &id), 1, "no job ID from sbatch: %s", cl.out);
	cr_assert_gt(id, 0);
	for (int rank = 0; rank < 2; rank++) {
		cr_assert_eq(t4t_slurm_sh(&cl, 30, "cat task.%ld.%d", id, rank), 0,
			     "task %d of job %ld wrote no file: %s", rank, id, cl.out);
		char want[300];
		snprintf(want, sizeof(want), "%d %s\n", rank, cl.node);
		cr_assert_str_eq(cl.out, want);
	}
	cr_assert_eq(t4t_slurm_sh(&cl, 30, "cat batch.%ld.out", id), 0, "%s", cl.out);
	cr_assert_str_eq(cl.out, "batch done\n");
}

/* The one entry of the work directory whose name starts with prefix
 * (a directory a job's %j named): its name into out. */
static void the_entry(const char *prefix, char *out, size_t cap)
{
	int n = 0;

	cr_assert_eq(t4t_slurm_sh(&cl, 30, "ls -d %s*", prefix), 0, "%s", cl.out);
	for (char *save = NULL, *l = strtok_r(cl.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		snprintf(out, cap, "%s", l);
		n++;
	}
	cr_assert_eq(n, 1, "%d entries named %s*", n, prefix);
}

/* info --json of the log at path: its job as recorded (id, step, rank). */
static void recorded_job(const char *path, const char *id, const char *step, int rank)
{
	char want[512];

	cr_assert_eq(t4t_slurm_sh(&cl, 30, "'%s' info --json '%s'", cli_bin(), path), 0, "%s",
		     cl.out);
	cr_assert_gt(json_num(cl.out, "triggers"), 0, "%s", cl.out);
	snprintf(want, sizeof(want), "\"job\": {\"id\": \"%s\", \"step\": \"%s\", "
		 "\"nodelist\": \"%s\", \"host\": ", id, step, cl.node);
	cr_assert(strstr(cl.out, want), "%s: %s wanted in %s", path, want, cl.out);
	snprintf(want, sizeof(want), "\"rank\": %d}", rank);
	cr_assert(strstr(cl.out, want), "%s: %s wanted in %s", path, want, cl.out);
	cr_assert_gt(json_num(cl.out, "samples"), 1, "no clock sync samples: %s", cl.out);
}

/* srun -n 2 of the recorder around a command: the node's first task
 * records (one log, named by the job and the host), the other runs the
 * command only; both run it. */
static void recorder_under_srun(void)
{
	const char *b = cli_bin();
	char dir[256], path[600], host[256];
	int ran = 0;

	cr_assert_eq(t4t_slurm_sh(&cl, 60, "srun --overcommit -n 2 '%s' record -q --sim "
				  "--duration 300ms -o 'job%%j/trace.%%h.t4t' -- sh -c "
				  "'echo \"ran $SLURM_PROCID\"'", b), 0, "srun record: %s", cl.out);
	for (const char *p = cl.out; (p = strstr(p, "ran ")); p++)
		ran++;
	cr_assert_eq(ran, 2, "the command did not run in both tasks: %s", cl.out);
	the_entry("job[0-9]", dir, sizeof(dir));
	cr_assert_eq(t4t_slurm_sh(&cl, 30, "uname -n"), 0, "%s", cl.out);
	snprintf(host, sizeof(host), "%s", t4t_chomp(cl.out));
	cr_assert_eq(t4t_slurm_sh(&cl, 30, "ls '%s'", dir), 0, "%s", cl.out);
	snprintf(path, sizeof(path), "trace.%s.t4t\n", host);
	cr_assert_str_eq(cl.out, path, "one log in %s, named by the host", dir);
	snprintf(path, sizeof(path), "%s/trace.%s.t4t", dir, host);
	recorded_job(path, dir + 3, "0", 0);
	/* --all-tasks: each task records, named by its rank */
	cr_assert_eq(t4t_slurm_sh(&cl, 60, "srun --overcommit -n 2 '%s' record -q --sim "
				  "--duration 300ms --all-tasks -o 'all%%j/t.%%t.t4t' -- true", b),
		     0, "srun record --all-tasks: %s", cl.out);
	the_entry("all[0-9]", dir, sizeof(dir));
	cr_assert_eq(t4t_slurm_sh(&cl, 30, "ls '%s'", dir), 0, "%s", cl.out);
	cr_assert_str_eq(cl.out, "t.0.t4t\nt.1.t4t\n");
	snprintf(path, sizeof(path), "%s/t.1.t4t", dir);
	recorded_job(path, dir + 3, "0", 1);
	/* the job's logs merged on one timeline (decode DIR): one host name,
	 * two recordings told apart, each placed with its bound */
	cr_assert_eq(t4t_slurm_sh(&cl, 60, "'%s' decode '%s' 2>&1", b, dir), 0, "%s", cl.out);
	cr_assert(strstr(cl.out, "ACROSS HOSTS (2 logs on one timeline"), "%s", cl.out);
	snprintf(path, sizeof(path), "host %s/2 is placed within +-", host);
	cr_assert(strstr(cl.out, path), "%s wanted in %s", path, cl.out);
}

/* sbatch --wait of a script that records its step: the log lands under
 * the batch job's ID. */
static void recorder_under_sbatch(void)
{
	char path[600], id[32], host[256];

	cr_assert_eq(t4t_slurm_sh(&cl, 30, "printf '%%s\\n' '#!/bin/sh' \"srun --overcommit -n 2 "
				  "'%s' record -q --sim --duration 300ms -o 'batch%%j/trace.%%h.t4t' "
				  "-- true\" > rec.sh", cli_bin()), 0, "%s", cl.out);
	cr_assert_eq(t4t_slurm_sh(&cl, 120, "sbatch --wait --parsable --overcommit -n 2 "
				  "-o 'rec.%%j.out' rec.sh"), 0, "sbatch --wait: %s", cl.out);
	snprintf(id, sizeof(id), "%s", t4t_chomp(cl.out));
	cr_assert_eq(t4t_slurm_sh(&cl, 30, "uname -n"), 0, "%s", cl.out);
	snprintf(host, sizeof(host), "%s", t4t_chomp(cl.out));
	snprintf(path, sizeof(path), "batch%s/trace.%s.t4t", id, host);
	cr_assert_eq(t4t_slurm_sh(&cl, 30, "cat 'rec.%s.out'; ls batch%s", id, id), 0, "%s",
		     cl.out);
	recorded_job(path, id, "0", 0);
}

Test(cluster, slurm_runs_jobs, .fini = cluster_fini, .timeout = 600)
{
	long pids[16];
	int n;

	cli_bin();
	t4t_slurm_start(&cl);
	two_tasks_by_srun();
	batch_job_files();
	recorder_under_srun();
	recorder_under_sbatch();
	n = daemon_pids(cl.dir, pids, 16);
	cr_assert_geq(n, 4, "guard, munged, slurmctld, slurmd: %d PIDs", n);
	t4t_slurm_stop(&cl);
	cr_assert(all_gone(pids, n, 0), "a daemon outlived slurm.sh stop");
}

static pid_t owner = -1;

static void owner_fini(void)
{
	if (owner > 0) {
		kill(owner, SIGKILL);
		waitpid(owner, NULL, 0);
		owner = -1;
	}
}

/* The owner killed (SIGKILL: no trap runs): the guard stops the cluster. */
Test(cluster, a_killed_owner_leaves_nothing_running, .fini = owner_fini, .timeout = 300)
{
	struct t4t_slurm *c = &cl;
	long pids[16];
	int n, st;

	t4t_slurm_script(c);
	owner = t4t_fork_idle();
	cr_assert_geq(owner, 0);
	st = cli_run(c->out, sizeof(c->out), "bash '%s' start --owner %ld 2>&1", c->script,
		     (long)owner);
	t4t_chomp(c->out);
	if (st == 77) {
		owner_fini(); /* (a skip runs no .fini) */
		cr_skip_test("%s", c->out);
	}
	cr_assert_eq(st, 0, "slurm.sh start: %s", c->out);
	snprintf(c->dir, sizeof(c->dir), "%s", strrchr(c->out, '\n') ? strrchr(c->out, '\n') + 1
				    : c->out);
	n = daemon_pids(c->dir, pids, 16);
	cr_assert_geq(n, 4, "guard, munged, slurmctld, slurmd: %d PIDs", n);
	for (int i = 0; i < n; i++)
		cr_assert(running(pids[i]), "PID %ld of %s/pids is not running", pids[i], c->dir);
	owner_fini();
	cr_assert(all_gone(pids, n, 60), "daemons still run 60 s after their owner was killed");
	for (int tick = 0; tick < 100 && !access(c->dir, F_OK); tick++)
		usleep(100000);
	cr_assert(access(c->dir, F_OK), "%s is still there", c->dir);
	c->dir[0] = '\0';
}
