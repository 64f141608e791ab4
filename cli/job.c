/* job.c - record launched by a cluster's scheduler: which job and task
 * this is (Slurm's variables, or Open MPI's under mpirun), the output
 * name's expansions (%h host, %j job ID, %t task rank, %p PID, %%), and
 * whether this task records (one recorder per node: the task with local
 * rank 0; --all-tasks: every task).
 *
 * Everything comes from the environment the launcher gives each task, so
 * the same rules hold under srun, sbatch and mpirun, and the tests set
 * the variables themselves. A value that goes into a file name is made
 * safe first (sanitise): letters, digits, '.', '_', '-' and '+' kept,
 * anything else '_', a leading '.' or '-' too, so no expansion adds a
 * directory, a hidden name or "..", nor makes the name '-' (standard
 * output). A name that two nodes (or, with --all-tasks, two
 * tasks) would share is refused before anything starts: two recorders
 * never write one file.
 *
 * The host packet (FORMAT.md 4.5b) says which job and task a log belongs
 * to, and how far the kernel trusts its clock (adjtimex, read-only), so
 * that logs of several hosts can be put on one timeline.
 */
#include "cli.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <sys/utsname.h>
#include <unistd.h>

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The first of the variables that is set and not empty, or NULL. */
static const char *env_first(const char *const *names, const char **which)
{
	for (int i = 0; names[i]; i++) {
		const char *v = t4_env(names[i]);
		if (v) {
			*which = names[i];
			return v;
		}
	}
	return NULL;
}

/* A count or rank from the first variable of names that is set: *out (or
 * -1 when none is); -EINVAL, said, for a value that is not a number. The
 * launchers write plain decimal: "0x10" is no rank 16 (t4_parse_u64 takes
 * hex for event terms), so it is refused as garbage is. */
static int env_num(const char *const *names, int32_t *out)
{
	const char *which = NULL, *v = env_first(names, &which);
	uint64_t n;

	*out = -1;
	if (!v)
		return 0;
	if (t4_parse_decimal(v, &n) < 0 || n > INT32_MAX)
		return t4_err(EINVAL, "%s=%s: not a task number or count", which, v);
	*out = (int32_t)n;
	return 0;
}

/* A name from the first variable of names that is set ("" none); -EINVAL,
 * said, for one longer than out holds: cut, two jobs' IDs could make one
 * file name (%j). */
static int env_str(const char *const *names, char *out, size_t cap)
{
	const char *which, *v = env_first(names, &which);

	if (v && strlen(v) >= cap)
		return t4_err(EINVAL, "%s: %zu bytes, more than the %zu a log keeps of it", which,
			      strlen(v), cap - 1);
	t4_strlcpy(out, v ? v : "", cap);
	return 0;
}

/* The nodes, for messages and the host packet: a list longer than out
 * holds ends in "..." where it was cut (Slurm's compressed form of a big
 * job can run long; it names no file). */
static void env_nodelist(char *out, size_t cap)
{
	const char *which, *v = env_first(NAMES("SLURM_JOB_NODELIST", "SLURM_NODELIST"), &which);

	t4_strlcpy(out, v ? v : "", cap);
	if (v && strlen(v) >= cap)
		memcpy(out + cap - 4, "...", 4);
}

/* Open MPI's variables win over Slurm's: mpirun inside an allocation
 * leaves the batch step's SLURM_PROCID (0) in every rank it starts. */
static int job_ranks(struct cli_job *j)
{
	int32_t size = -1, local_size = -1;
	int rc;

	if ((rc = env_num(NAMES("OMPI_COMM_WORLD_RANK"), &j->rank)) < 0)
		return rc;
	if (j->rank >= 0) {
		j->launcher = "Open MPI";
		if ((rc = env_num(NAMES("OMPI_COMM_WORLD_LOCAL_RANK"), &j->local_rank)) < 0 ||
		    (rc = env_num(NAMES("OMPI_COMM_WORLD_SIZE"), &size)) < 0 ||
		    (rc = env_num(NAMES("OMPI_COMM_WORLD_LOCAL_SIZE"), &local_size)) < 0)
			return rc;
		j->tasks = size;
		/* more ranks than this node holds: more than one node */
		j->nodes = size > 0 && local_size > 0 ? (size > local_size ? 2 : 1) : -1;
		return 0;
	}
	if ((rc = env_num(NAMES("SLURM_PROCID"), &j->rank)) < 0 ||
	    (rc = env_num(NAMES("SLURM_LOCALID"), &j->local_rank)) < 0 ||
	    (rc = env_num(NAMES("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS"),
			  &j->tasks)) < 0)
		return rc;
	/* the allocation's nodes and the step's: either above one refuses a
	 * shared name (a step may cover fewer nodes than its job) */
	int32_t job_nodes, step_nodes;
	if ((rc = env_num(NAMES("SLURM_JOB_NUM_NODES"), &job_nodes)) < 0 ||
	    (rc = env_num(NAMES("SLURM_NNODES", "SLURM_STEP_NUM_NODES"), &step_nodes)) < 0)
		return rc;
	j->nodes = job_nodes > step_nodes ? job_nodes : step_nodes;
	return 0;
}

int cli_job_detect(struct cli_job *j)
{
	struct utsname u;
	int rc;

	memset(j, 0, sizeof(*j));
	if (uname(&u) == 0)
		t4_strlcpy(j->host, u.nodename, sizeof(j->host));
	if ((rc = env_str(NAMES("SLURM_JOB_ID", "SLURM_JOBID"), j->id, sizeof(j->id))) < 0 ||
	    (rc = env_str(NAMES("SLURM_STEP_ID", "SLURM_STEPID"), j->step, sizeof(j->step))) < 0)
		return rc;
	env_nodelist(j->nodelist, sizeof(j->nodelist));
	if ((rc = job_ranks(j)) < 0)
		return rc;
	if (!j->launcher && (j->id[0] || j->rank >= 0))
		j->launcher = "Slurm";
	return 0;
}

bool cli_job_records(const struct cli_job *j, bool all_tasks)
{
	return all_tasks || j->local_rank <= 0;
}

/* ---- the output name's expansions ---------------------------------------- */

/* s made safe as (part of) one file name; false when s is empty. */
static bool sanitise(const char *s, char *out, size_t cap)
{
	size_t n = 0;

	for (; *s && n + 1 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		/* not first: '.' (hidden, "..") nor '-' (-o '%j' of job "-" was
		 * standard output) */
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '_' || c == '+' ||
			    ((c == '.' || c == '-') && n > 0);
		out[n++] = keep ? (char)c : '_';
	}
	out[n] = '\0';
	return n > 0;
}

/* The value of %c into val; 0, or -EINVAL with the reason said. */
static int expansion(const struct cli_job *j, const char *name, char c, char *val, size_t cap)
{
	switch (c) {
	case 'h':
		if (!sanitise(j->host, val, cap))
			return t4_err(EINVAL, "-o '%s': %%h: this host has no name (uname)", name);
		return 0;
	case 'j':
		if (!sanitise(j->id, val, cap))
			return t4_err(EINVAL, "-o '%s': %%j: no job ID here (SLURM_JOB_ID is %s: "
					      "not launched by Slurm)", name,
				      getenv("SLURM_JOB_ID") ? "empty" : "not set");
		return 0;
	case 't':
		if (j->rank < 0)
			return t4_err(EINVAL, "-o '%s': %%t: no task rank here (neither SLURM_PROCID "
					      "nor OMPI_COMM_WORLD_RANK is set)", name);
		snprintf(val, cap, "%d", j->rank);
		return 0;
	case 'p':
		snprintf(val, cap, "%ld", (long)getpid());
		return 0;
	case '%':
		snprintf(val, cap, "%%");
		return 0;
	case '\0':
		return t4_err(EINVAL, "-o '%s': a lone %% at the end (%%%% is a %%)", name);
	default:
		return t4_err(EINVAL, "-o '%s': unknown expansion %%%c (%%h host, %%j job ID, "
				      "%%t task rank, %%p PID, %%%% a %%)", name, c);
	}
}

/* Whether name uses one of the expansions in which. */
static bool uses(const char *name, const char *which)
{
	for (const char *p = name; (p = strchr(p, '%')); p += 2) {
		if (!p[1])
			return false;
		if (strchr(which, p[1]))
			return true;
	}
	return false;
}

/* Two recorders must not share the name: on a job of several nodes it
 * needs %h or %t; with --all-tasks and several tasks a node, %t or %p. */
static int check_unique(const struct cli_job *j, const char *name, bool all_tasks)
{
	if (!strcmp(name, "-"))
		return 0; /* each task's own standard output */
	if (j->nodes > 1 && !uses(name, "ht"))
		return t4_err(EINVAL, "-o '%s': this job runs on several nodes (%s), which would all "
				      "write this one file: put %%h (host) or %%t (task rank) in the name",
			      name, j->nodelist[0] ? j->nodelist : "more than one");
	if (all_tasks && j->tasks > 1 && j->tasks > j->nodes && !uses(name, "tp"))
		return t4_err(EINVAL, "-o '%s': --all-tasks records in each of the job's %d tasks, "
				      "which would share this file: put %%t (task rank) or %%p (PID) in "
				      "the name", name, j->tasks);
	return 0;
}

int cli_job_expand(const struct cli_job *j, const char *name, bool all_tasks, char *out,
		   size_t cap)
{
	size_t n = 0;
	int rc;

	if ((rc = check_unique(j, name, all_tasks)) < 0)
		return rc;
	for (const char *p = name; *p; p++) {
		char val[T4_NAME_MAX + 32];
		size_t len;
		if (*p != '%') {
			val[0] = *p;
			val[1] = '\0';
		} else if ((rc = expansion(j, name, *++p, val, sizeof(val))) < 0) {
			return rc;
		}
		len = strlen(val);
		if (n + len >= cap)
			return t4_err(ENAMETOOLONG, "-o '%s': the name expands to more than %zu bytes",
				      name, cap - 1);
		memcpy(out + n, val, len);
		n += len;
	}
	out[n] = '\0';
	return 0;
}

/* The length of path's leading directories that pattern names without
 * an expansion ('out/job%j/x.t4t': "out"): no value holds a '/', so
 * path has as many of them as pattern before its first '%'. */
static size_t users_dirs(const char *pattern, const char *path)
{
	size_t k = 0;
	const char *s = path;

	for (const char *p = pattern; *p && *p != '%'; p++)
		k += *p == '/';
	for (; k && (s = strchr(s, '/')); k--)
		if (k > 1)
			s++;
	return k || !s ? 0 : (size_t)(s - path);
}

int cli_job_make_dirs(const char *pattern, const char *path, char *created, size_t cap)
{
	char dir[4096];
	const char *slash = strrchr(path, '/'), *pslash = strrchr(pattern, '/');
	size_t mine = users_dirs(pattern, path);

	created[0] = '\0';
	/* only directories an expansion named: the user's own must exist (a
	 * typo in them made a tree where none was meant) */
	if (!slash || slash == path || !pslash ||
	    !memchr(pattern, '%', (size_t)(pslash - pattern)))
		return 0;
	if ((size_t)(slash - path) >= sizeof(dir) || (size_t)(slash - path) >= cap)
		return t4_err(ENAMETOOLONG, "-o '%s': name too long", path);
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	for (char *p = dir + 1;; p++) {
		bool end = !*p;
		if (*p != '/' && !end)
			continue;
		*p = '\0';
		bool named = (size_t)(p - dir) > mine; /* by an expansion: made here */
		if (named && mkdir(dir, 0777) == 0) {
			if (!created[0])
				t4_strlcpy(created, dir, cap);
		} else if (named && errno != EEXIST) {
			/* EEXIST: another node's, or the user's */
			return t4_err(errno, "-o '%s': cannot create the directory '%s': %s", path,
				      dir, strerror(errno));
		} else if (t4_link_planted(dir)) { /* /tmp/job7 -> a stranger's choice */
			return t4_err(EPERM, "-o '%s': %s is a symbolic link another user made in "
				      "a shared directory; not followed", path, dir);
		} else if (named && t4_dir_planted(dir)) { /* /tmp/job7/, made before the job */
			return t4_err(EPERM, "-o '%s': %s is a directory another user made in a "
				      "shared directory; not used", path, dir);
		}
		if (end)
			return 0;
		*p = '/';
	}
}

void cli_job_drop_dirs(const char *path, const char *created)
{
	char dir[4096];
	size_t keep = strlen(created);
	char *slash;

	if (!keep || t4_strlcpy(dir, path, sizeof(dir)) >= sizeof(dir))
		return;
	/* deepest first; a directory that is not empty (another node's log,
	 * a stranded partial) stays, and so does every one above it */
	while ((slash = strrchr(dir, '/')) && (size_t)(slash - dir) >= keep) {
		*slash = '\0';
		if (rmdir(dir) < 0)
			return;
	}
}

/* ---- the host packet ------------------------------------------------------ */

/* The kernel's view of the clock (adjtimex with no mode: it reads only,
 * no privilege needed). */
static void clock_sync(struct t4_host_pkt *h)
{
	struct timex tx = { .modes = 0 };
	int state = adjtimex(&tx);

	h->clock_state = -1;
	if (state < 0)
		return; /* a seccomp filter, say: unknown, not unsynchronised */
	h->clock_state = state;
	h->sync_flags = T4_HOST_SYNC_KNOWN;
	if (state != TIME_ERROR && !(tx.status & STA_UNSYNC))
		h->sync_flags |= T4_HOST_SYNCED;
	h->maxerror_us = tx.maxerror > 0 ? (uint64_t)tx.maxerror : 0;
	h->esterror_us = tx.esterror > 0 ? (uint64_t)tx.esterror : 0;
}

void cli_job_host_pkt(const struct cli_job *j, uint64_t ref_ns, struct t4_packet *p)
{
	struct t4_host_pkt *h = &p->host;

	memset(p, 0, sizeof(*p));
	p->type = T4_PKT_HOST;
	h->ref_ns = ref_ns;
	h->real_ns = t4_clock_ns(CLOCK_REALTIME);
	clock_sync(h);
	h->rank = j->rank;
	t4_strlcpy(h->host, j->host, sizeof(h->host));
	t4_strlcpy(h->job_id, j->id, sizeof(h->job_id));
	t4_strlcpy(h->step, j->step, sizeof(h->step));
	t4_strlcpy(h->nodelist, j->nodelist, sizeof(h->nodelist));
}
