/* output.c - where `record` puts its log, without ever destroying a file
 * the user did not ask to replace.
 *
 * Rules (perf record's habit, README "Your files are safe"):
 *   - `-o -` is standard output (refused when it is a terminal); a FIFO,
 *     a pipe or a character device (/dev/null) is written in place, a
 *     socket refused up front (the log module refuses a terminal and
 *     anything else that exists there).
 *   - Otherwise the log is written in a private directory next to FILE,
 *     FILE.partial-PID-XXXXXX/log (mkdtemp: mode 0700, a name nobody can
 *     plant first; the log itself created O_EXCL|O_NOFOLLOW with the
 *     user's umask), and given its name only once the recording runs (and
 *     its COMMAND could be executed) and its first chunk is on disk: a
 *     run that fails before that leaves everything as it was and removes
 *     the directory; one killed before that leaves the directory, which
 *     the next run writing next to FILE reclaims (util/tmpdir.c: this
 *     user's, its process gone, holding nothing but `log`, and that
 *     empty). A --virtual recording is named the same way (after the
 *     trigger that finds its first chunk on disk).
 *   - An existing FILE is then kept as FILE.old. If FILE.old exists too,
 *     record refuses to start (before recording anything) rather than
 *     destroy it, unless --force, which replaces FILE (that file only: not
 *     one that took its name meanwhile) and leaves FILE.old alone. Renames use RENAME_NOREPLACE, so a file that appears while
 *     recording is not clobbered either: the log then becomes
 *     FILE.partial-PID (or, if even that name is taken, stays in its
 *     directory, marked so that no later run reclaims it), and record
 *     says so.
 *   - Another user's FILE in a sticky directory (/tmp), which this user may
 *     neither rename nor replace, is refused before recording.
 *   - A directory at FILE (or a FILE ending in '/') is refused, and so is a symbolic link to a FIFO
 *     or a device that another user planted in a shared (sticky,
 *     world-writable) directory, as fs.protected_symlinks would.
 */
#include "cli.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_IN_DIR "log"       /* the log's name in its private directory */
#define KEEP_IN_DIR "stranded" /* a second entry: never reclaimed */

/* No private directory could be made in dir: said of the user's FILE,
 * with the reason that holds for it. mkdtemp's errno is the private name's
 * (one the user never gave): a FILE that fits NAME_MAX was "File name too
 * long", and /proc's ENOENT said "No such file or directory" of a
 * directory that is there but takes no new files. */
static int private_dir_failed(const struct cli_output *o, const char *dir, const char *tmp,
			      int err)
{
	struct stat st;
	long max = pathconf(dir, _PC_NAME_MAX);

	if (stat(dir, &st) < 0)
		return t4_err(errno, "%s: the directory %s: %s", o->path, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return t4_err(ENOTDIR, "%s: %s is not a directory", o->path, dir);
	if (err == ENAMETOOLONG && max > 0 && strlen(tmp) > (size_t)max)
		return t4_err(err, "%s: name too long for the log's temporary name next to it "
			      "(FILE.partial-PID-XXXXXX, until the recording runs; %ld bytes at "
			      "most): shorten it by %zu bytes", o->path, max, strlen(tmp) - (size_t)max);
	if (err == ENOENT && t4_dir_deleted(o->path, dir) < 0) /* the current one, rmdir'd */
		return -ENOENT;
	if (err == ENOENT) /* there, yet ENOENT: a virtual file system (/proc) */
		return t4_err(err, "%s: cannot create a file in %s: it takes no new files",
			      o->path, dir);
	return t4_err(err, "%s: cannot create a file in %s: %s", o->path, dir, strerror(err));
}

/* The private directory next to path: "<dir of path>/<base>.partial-PID-XXXXXX". */
static int make_private_dir(struct cli_output *o)
{
	char d[4096], b[4096], prefix[4200];
	const char *dir;
	int rc;

	snprintf(d, sizeof(d), "%s", o->path);
	snprintf(b, sizeof(b), "%s", o->path);
	snprintf(prefix, sizeof(prefix), "%s.partial", basename(b));
	dir = dirname(d);
	rc = t4_privdir_create(o->dir, sizeof(o->dir), dir, prefix, LOG_IN_DIR);
	if (rc < 0) { /* o->dir: the name mkdtemp was given */
		const char *slash = strrchr(o->dir, '/');
		rc = private_dir_failed(o, dir, slash ? slash + 1 : o->dir, -rc);
		o->dir[0] = '\0';
		return rc;
	}
	if (snprintf(o->partial, sizeof(o->partial), "%s/" LOG_IN_DIR, o->dir) >=
	    (int)sizeof(o->partial))
		return t4_err(ENAMETOOLONG, "%s: file name too long", o->path);
	return 0;
}

int cli_output_prepare(struct cli_output *o, const char *path, bool force)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->path = path;
	o->force = force;
	if (!strcmp(path, "-")) {
		if (isatty(STDOUT_FILENO))
			return t4_err(EINVAL, "-o -: standard output is a terminal; redirect it "
				      "(-o - | ...) or name a file");
		o->in_place = o->to_stdout = true;
		return 0;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return t4_err(EISDIR, "%s: is a directory (-o names the log file)", path);
	/* "x/" where x is not a directory: no file can get that name, and
	 * the whole run would be recorded before the rename said so. */
	if (path[strlen(path) - 1] == '/')
		return t4_err(EISDIR, "%s: names a directory (-o names the log file)", path);
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (t4_link_planted(path)) /* /tmp/x.t4t -> /dev/watchdog */
			return t4_err(EPERM, "%s: a symbolic link another user made in a shared "
				      "directory; not followed", path);
		if (cli_outfile_not_socket(path, &st) < 0)
			return -EINVAL;
		o->in_place = true; /* a FIFO, a pipe, a device */
		return 0;
	}
	o->exists = lstat(path, &st) == 0;
	if (o->exists) {
		o->dev = st.st_dev;
		o->ino = st.st_ino;
	}
	/* checked before recording: the whole run would end stranded */
	if (o->exists && t4_sticky_foreign(path))
		return t4_err(EPERM, "%s: another user's file in a shared (sticky) directory: it "
			      "can be neither kept as %s.old nor replaced; name another file",
			      path, path);
	if (snprintf(o->old, sizeof(o->old), "%s.old", path) >= (int)sizeof(o->old) ||
	    snprintf(o->stranded_name, sizeof(o->stranded_name), "%s.partial-%ld", path,
		     (long)getpid()) >= (int)sizeof(o->stranded_name))
		return t4_err(ENAMETOOLONG, "%s: file name too long", path);
	if (o->exists && !force && lstat(o->old, &st) == 0)
		return t4_err(EEXIST, "%s exists and so does %s: refusing to replace either "
			      "(remove or rename one, or use --force to replace %s)",
			      path, o->old, path);
	return make_private_dir(o);
}

const char *cli_output_open_path(const struct cli_output *o)
{
	return o->in_place ? o->path : o->partial;
}

/* rename(2) that never replaces the target. */
static int rename_noreplace(const char *from, const char *to)
{
	return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

/* FILE could not be given: the log becomes FILE.partial-PID, or stays in
 * its directory with a second entry, so that no later run reclaims it. */
static void strand(struct cli_output *o)
{
	char keep[4200];
	int fd;

	o->stranded = true;
	if (rename_noreplace(o->partial, o->stranded_name) == 0) {
		rmdir(o->dir);
		snprintf(o->partial, sizeof(o->partial), "%s", o->stranded_name);
		return;
	}
	snprintf(keep, sizeof(keep), "%s/" KEEP_IN_DIR, o->dir);
	if ((fd = t4_create_new(keep, 0666)) >= 0)
		close(fd);
}

/* FILE kept as FILE.old and replaced by the log. A hard link first, so
 * that FILE names the older file or the log at every instant: two renames
 * left a moment with neither, and a SIGKILL there left the log only in
 * the private directory, which the next run writing FILE reclaims. FILE
 * is replaced only while it is still the file linked. Where hard links
 * are not supported, the two renames. -1 with errno (ENOENT: FILE is gone,
 * nothing done). */
static int keep_old_and_replace(struct cli_output *o)
{
	struct stat now, kept;
	bool same;

	if (link(o->path, o->old) < 0) {
		if (errno == ENOENT || errno == EEXIST)
			return -1;
		if (rename_noreplace(o->path, o->old) < 0) /* no hard links here */
			return -1;
		o->kept_old = true;
		return rename_noreplace(o->partial, o->path);
	}
	if (lstat(o->path, &now) < 0) { /* FILE removed since: the link keeps it */
		o->kept_old = true;
		return rename_noreplace(o->partial, o->path);
	}
	same = lstat(o->old, &kept) == 0 && now.st_dev == kept.st_dev && now.st_ino == kept.st_ino;
	if (same && rename(o->partial, o->path) == 0) {
		o->kept_old = true;
		return 0;
	}
	int e = same ? errno : EEXIST; /* else FILE changed under us: not replaced */
	if (same)
		unlink(o->old); /* the link undone: FILE stays as it was */
	errno = e;
	return -1;
}

/* --force replaces the FILE there at the start, and only that: a log
 * another recorder named FILE meanwhile (two `record --force -o x.t4t`)
 * was replaced, both saying "wrote x.t4t", one log lost. -1 with errno. */
static int force_replace(struct cli_output *o)
{
	struct stat now;

	if (lstat(o->path, &now) < 0)
		return errno == ENOENT ? rename_noreplace(o->partial, o->path) : -1;
	if (!o->exists || now.st_dev != o->dev || now.st_ino != o->ino) {
		errno = EEXIST;
		return -1;
	}
	return rename(o->partial, o->path);
}

int cli_output_publish(struct cli_output *o)
{
	int e;

	if (o->in_place || o->published || o->stranded)
		return 0; /* named, or stranded and said once */
	if (o->force) {
		if (force_replace(o) < 0)
			goto failed;
	} else if (o->exists && keep_old_and_replace(o) == 0) {
		;
	} else if (o->exists && errno != ENOENT) {
		goto failed;
	} else if (rename_noreplace(o->partial, o->path) < 0) {
		goto failed;
	}
	o->published = true;
	rmdir(o->dir);
	if (o->kept_old)
		cli_say("%s existed: kept as %s", o->path, o->old);
	return 0;
failed:
	e = errno;
	strand(o);
	return t4_err(e, "cannot name the log %s (%s): it is recorded as %s", o->path,
		      strerror(e), o->partial);
}

void cli_output_drop(struct cli_output *o)
{
	if (o->in_place || o->published || o->stranded || !o->dir[0])
		return;
	unlink(o->partial);
	rmdir(o->dir);
	o->partial[0] = o->dir[0] = '\0';
}

const char *cli_output_name(const struct cli_output *o)
{
	if (o->to_stdout)
		return "standard output";
	return o->stranded ? o->partial : o->path;
}
