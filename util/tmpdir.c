/* tmpdir.c - private directories that never outlive their owner for long:
 * the simulated sysfs tree (t410sim-*) and the control socket of a
 * workload (t410trace-*) in $TMPDIR, and record's log until it gets its
 * name (FILE.partial-*, next to FILE).
 *
 * A directory is named <prefix>-<pid>-XXXXXX (mkdtemp: mode 0700, a name
 * nobody can take first). Its owner removes it on every normal exit; a
 * process killed with SIGKILL cannot, so each creation first reclaims the
 * directories of the same prefix in the same place whose process is gone
 * (kill(pid, 0) says ESRCH) and that belong to this user. A directory of
 * a live process, of another user, not of exactly that shape, or (where
 * the caller names the one file it keeps there) holding anything else or
 * that file with bytes in it, is never touched. A reused PID keeps a
 * stale directory until that process is gone too: conservative, never
 * wrong.
 *
 * The temporary files that outputs are written under until complete
 * (<OUT>.tmp-<pid>-XXXXXX, t4_create_unique) follow the same rule: a run
 * killed with SIGKILL cannot remove its own, the next one writing next to
 * the same OUT does (t4_privfile_reclaim).
 *
 * So do the private names a recorder's control socket is bound under
 * before it takes its path (.t410trace-ctl-<pid>-NNNNNN, next to the path:
 * a recorder killed between its bind and its link leaves one), removed by
 * the next recorder that binds in that directory (t4_privsock_reclaim):
 * only a socket that refuses connections (a live recorder's socket moved
 * there is no leftover).
 */
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

const char *t4_tmp_root(void)
{
	const char *tmp = t4_env("TMPDIR");

	return tmp ? tmp : "/tmp";
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

/* Whether directory path holds nothing but a regular, empty file named
 * only (nothing at all will do): a file with bytes is a user's data (a log
 * whose run was killed before naming it), never reclaimed. */
static bool holds_only(const char *path, const char *only)
{
	char child[4096 + 256];
	struct dirent *e;
	struct stat st;
	bool ok = true;
	DIR *d = opendir(path);

	if (!d)
		return false;
	while (ok && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
		ok = !strcmp(e->d_name, only) && lstat(child, &st) == 0 && S_ISREG(st.st_mode) &&
		     st.st_size == 0;
	}
	closedir(d);
	return ok;
}

/* Whether the socket file name in directory dfd (path: root/name)
 * refuses a connection: nobody listens on it. Reached through /proc when
 * path does not fit a socket address; anything but a refusal (a listener,
 * a full backlog, no /proc) is no. */
static bool refuses(int dfd, const char *path, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc;

	if (strlen(path) < sizeof(sa.sun_path))
		memcpy(sa.sun_path, path, strlen(path) + 1);
	else if (snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd, name) >=
		 (int)sizeof(sa.sun_path))
		return false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : 0;
	close(fd);
	return rc == ECONNREFUSED;
}

/* Whether root/name is this user's entry of type type (S_IFDIR, S_IFREG,
 * S_IFSOCK) named <prefix>-<pid>-XXXXXX whose process is gone (and, for a
 * directory with only, holding nothing but that file, empty; for a socket,
 * refusing connections). dfd: root's. */
static bool stale(int dfd, const char *root, const char *name, const char *prefix,
		  mode_t type, const char *only)
{
	char path[4096];
	struct stat st;
	long pid = owner_pid(name, prefix);

	if (!pid || pid == (long)getpid())
		return false;
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return false; /* alive, or not ours to ask about */
	snprintf(path, sizeof(path), "%s/%s", root, name);
	if (lstat(path, &st) < 0 || (st.st_mode & S_IFMT) != type || st.st_uid != geteuid())
		return false;
	if (type == S_IFSOCK)
		return refuses(dfd, path, name);
	return !only || holds_only(path, only);
}

/* Remove root's stale entries of type type (stale()); how many. */
static int reclaim(const char *root, const char *prefix, mode_t type, const char *only)
{
	char path[4096];
	struct dirent *e;
	int n = 0;
	DIR *d = opendir(root);

	if (!d)
		return 0; /* nothing to reclaim where nothing can be listed */
	while ((e = readdir(d))) {
		if (!stale(dirfd(d), root, e->d_name, prefix, type, only))
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
		if ((type == S_IFDIR ? t4_rmtree(path) : unlink(path)) == 0)
			n++;
	}
	closedir(d);
	return n;
}

int t4_privdir_reclaim(const char *root, const char *prefix, const char *only)
{
	return reclaim(root, prefix, S_IFDIR, only);
}

int t4_privfile_reclaim(const char *root, const char *prefix)
{
	return reclaim(root, prefix, S_IFREG, NULL);
}

int t4_privsock_reclaim(const char *root, const char *prefix)
{
	return reclaim(root, prefix, S_IFSOCK, NULL);
}

int t4_privdir_create(char *buf, size_t cap, const char *root, const char *prefix,
		      const char *only)
{
	int n;

	t4_privdir_reclaim(root, prefix, only);
	n = snprintf(buf, cap, "%s/%s-%ld-XXXXXX", root, prefix, (long)getpid());
	if (n < 0 || (size_t)n >= cap)
		return t4_err(ENAMETOOLONG, "%s/%s: name too long", root, prefix);
	if (!mkdtemp(buf))
		return t4_err(errno, "%s: cannot create a private directory: %s", buf,
			      strerror(errno));
	return 0;
}

int t4_tmpdir_reclaim(const char *prefix)
{
	return t4_privdir_reclaim(t4_tmp_root(), prefix, NULL);
}

int t4_tmpdir_create(char *buf, size_t cap, const char *prefix)
{
	return t4_privdir_create(buf, cap, t4_tmp_root(), prefix, NULL);
}
