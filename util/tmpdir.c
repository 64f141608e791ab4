/* tmpdir.c - private temporary directories that never outlive their
 * owner for long: the simulated sysfs tree (t410sim-*) and the control
 * socket of a workload (t410trace-*).
 *
 * A directory is named <prefix>-<pid>-XXXXXX in $TMPDIR (or /tmp). Its
 * owner removes it on every normal exit; a process killed with SIGKILL
 * cannot, so each creation first reclaims the directories of the same
 * prefix whose process is gone (kill(pid, 0) says ESRCH) and that belong
 * to this user. A directory of a live process, of another user, or not of
 * exactly that shape is never touched. A reused PID keeps a stale
 * directory until that process is gone too: conservative, never wrong.
 */
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *t4_tmp_root(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp && *tmp ? tmp : "/tmp";
}

/* The PID in "<prefix>-<pid>-XXXXXX", or 0 when name is not of that shape. */
static long owner_pid(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	long pid;

	if (strncmp(name, prefix, n) || name[n] != '-' || !isdigit((unsigned char)name[n + 1]))
		return 0;
	pid = strtol(name + n + 1, &end, 10);
	if (*end != '-' || strlen(end + 1) != 6 || pid <= 0)
		return 0;
	return pid;
}

static bool stale(const char *root, const char *name, const char *prefix)
{
	char path[4096];
	struct stat st;
	long pid = owner_pid(name, prefix);

	if (!pid || pid == (long)getpid())
		return false;
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return false; /* alive, or not ours to ask about */
	snprintf(path, sizeof(path), "%s/%s", root, name);
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid();
}

int t4_tmpdir_reclaim(const char *prefix)
{
	const char *root = t4_tmp_root();
	char path[4096];
	struct dirent *e;
	int n = 0;
	DIR *d = opendir(root);

	if (!d)
		return 0; /* nothing to reclaim where nothing can be listed */
	while ((e = readdir(d))) {
		if (!stale(root, e->d_name, prefix))
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
		if (t4_rmtree(path) == 0)
			n++;
	}
	closedir(d);
	return n;
}

int t4_tmpdir_create(char *buf, size_t cap, const char *prefix)
{
	const char *root = t4_tmp_root();
	int n;

	t4_tmpdir_reclaim(prefix);
	n = snprintf(buf, cap, "%s/%s-%ld-XXXXXX", root, prefix, (long)getpid());
	if (n < 0 || (size_t)n >= cap)
		return t4_err(ENAMETOOLONG, "%s: TMPDIR too long", root);
	if (!mkdtemp(buf))
		return t4_err(errno, "%s: cannot create a temporary directory: %s", buf,
			      strerror(errno));
	return 0;
}
