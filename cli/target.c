/* target.c - perf's task targets for `record`: -p PID[,PID...] counts
 * every thread of those processes (as found in /proc/PID/task when
 * recording starts), -t TID[,TID...] those threads only. The IDs go to
 * the collector (struct t4_target), which opens per-task counters for
 * software, tracepoint and CPU-PMU events and refuses uncore PMUs (they
 * count the whole system, never one task). cli_target_processes gives the
 * processes those threads belong to (the DRM source and the CPU activity
 * follow processes).
 */
#include "cli.h"
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int add_tid(struct cli_target *t, long tid)
{
	int *v = realloc(t->tids, (t->n_tids + 1) * sizeof(*v));

	if (!v)
		return t4_err(ENOMEM, "out of memory");
	t->tids = v;
	for (size_t i = 0; i < t->n_tids; i++)
		if (v[i] == (int)tid)
			return 0;
	v[t->n_tids++] = (int)tid;
	return 0;
}

/* Every thread of process pid. */
static int add_process(struct cli_target *t, long pid, const char *opt)
{
	char path[64];
	struct dirent *e;
	int rc = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	if (!(d = opendir(path)))
		return t4_err(ESRCH, "%s %ld: no such process", opt, pid);
	while (rc == 0 && (e = readdir(d))) {
		long tid = strtol(e->d_name, NULL, 10);
		if (tid > 0)
			rc = add_tid(t, tid);
	}
	closedir(d);
	return rc;
}

static int add_thread(struct cli_target *t, long tid, const char *opt)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/stat", tid);
	if (access(path, F_OK) != 0)
		return t4_err(ESRCH, "%s %ld: no such thread", opt, tid);
	return add_tid(t, tid);
}

/* A comma-separated list of IDs, digits only (no sign, blank, empty
 * item or trailing comma): each handed to add(). */
static int each_id(struct cli_target *t, const char *list, const char *opt,
		   int (*add)(struct cli_target *, long, const char *))
{
	const char *p = list;

	for (;;) {
		char *end;
		long id = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : 0;
		int rc;

		if (id <= 0 || id > 0x3fffffff || (*end && *end != ','))
			return t4_err(EINVAL, "%s %s: use a process or thread ID (or a "
				      "comma-separated list)", opt, list);
		if ((rc = add(t, id, opt)) < 0)
			return rc;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

int cli_target_resolve(struct cli_target *t)
{
	int rc = 0;

	if (t->pids)
		rc = each_id(t, t->pids, "-p", add_process);
	if (rc == 0 && t->tids_arg)
		rc = each_id(t, t->tids_arg, "-t", add_thread);
	return rc;
}

/* Alive: /proc/TID/stat exists and its state is not Z (zombie) or X. */
static bool thread_alive(int tid)
{
	char path[64], buf[512];
	const char *paren;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	if (t4_read_small_file(path, buf, sizeof(buf)) < 0)
		return false;
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

bool cli_target_alive(const struct cli_target *t)
{
	for (size_t i = 0; i < t->n_tids; i++)
		if (thread_alive(t->tids[i]))
			return true;
	return false;
}

/* The process a thread belongs to (its Tgid), or the thread itself when
 * its status cannot be read. */
static int tgid_of(const char *root, int tid)
{
	char path[600], buf[4096];
	const char *p;

	snprintf(path, sizeof(path), "%s/%d/status", root ? root : T4_PROC_DEFAULT, tid);
	if (t4_read_small_file(path, buf, sizeof(buf)) < 0 || !(p = strstr(buf, "\nTgid:")))
		return tid;
	return atoi(p + 6);
}

int cli_target_processes(const struct cli_target *t, const char *proc_root, int **out,
			 size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!t->n_tids)
		return 0;
	if (!(*out = calloc(t->n_tids, sizeof(**out))))
		return t4_err(ENOMEM, "out of memory");
	for (size_t i = 0; i < t->n_tids; i++) {
		int pid = tgid_of(proc_root, t->tids[i]);
		size_t k = 0;
		while (k < *n && (*out)[k] != pid)
			k++;
		if (k == *n)
			(*out)[(*n)++] = pid;
	}
	return 0;
}

void cli_target_free(struct cli_target *t)
{
	free(t->tids);
	t->tids = NULL;
	t->n_tids = 0;
}
