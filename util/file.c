/* file.c - small whole-file reads and writes (sysfs, fixtures), and the
 * one way t410trace creates a file: new, never through a link, with the
 * user's umask (t4_create_new, t4_create_unique). A name that exists, a
 * symbolic link included, is an error (EEXIST), so a file planted where
 * t410trace writes is never followed, truncated or overwritten. */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Close fd after a failed call and report errno against path. */
static int fail_closing(int fd, const char *path)
{
	int e = errno;

	close(fd);
	return t4_err(e, "%s: %s", path, strerror(e));
}

/* Wait for a reader of the FIFO at path: open(2) tried every 20 ms until
 * one is there or *stop is set (-1, errno EINTR). */
static int fifo_wait_reader(const char *path, int flags, const volatile sig_atomic_t *stop)
{
	int fd;

	while ((fd = open(path, flags | O_NONBLOCK)) < 0 && errno == ENXIO) {
		if (*stop) {
			errno = EINTR;
			return -1;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	}
	return fd;
}

/* One t410trace writer per FIFO: two recorders (or a record and a
 * decode) on one FIFO interleaved their chunks, both said "wrote", and
 * the reader kept the first log only up to where the second began. An
 * exclusive flock, held until the fd closes, refuses the later one. */
static int fifo_writer_alone(int fd, const char *name)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) < 0 &&
	    errno == EWOULDBLOCK) {
		close(fd);
		return t4_err(EBUSY, "%s: another t410trace writes this FIFO; refusing to "
			      "interleave with it", name);
	}
	return fd;
}

int t4_open_in_place(const char *path, const char *name, bool quiet,
		     const volatile sig_atomic_t *stop)
{
	int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC;
	int fd = open(path, flags | O_NONBLOCK); /* ENXIO: a FIFO without a reader */
	struct stat st;

	if (fd < 0 && errno == ENXIO && stat(path, &st) == 0 && S_ISFIFO(st.st_mode)) {
		if (!quiet)
			fprintf(stderr, "t410trace: notice: %s: a FIFO no process reads yet; "
					"waiting for a reader to open it\n", name);
		fd = stop ? fifo_wait_reader(path, flags, stop) : open(path, flags);
		/* a signal (Ctrl-C, kill) ended the wait: "Interrupted system
		 * call" said nothing of it */
		if (fd < 0 && errno == EINTR)
			return t4_err(EINTR, "%s: stopped while waiting for a reader of the FIFO; "
				      "nothing written", name);
	}
	if (fd < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		return fd < 0 ? t4_err(errno, "%s: %s", name, strerror(errno)) : fail_closing(fd, name);
	return fifo_writer_alone(fd, name);
}

/* Open path for reading, only when it is a regular file: a FIFO planted in
 * a tree given by the user (--sysfs-root, --proc-root) blocked the open,
 * or the read, for ever; O_NONBLOCK returns at once, and a regular file
 * ignores it. */
static int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return t4_err(errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return fail_closing(fd, path);
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return t4_err(EINVAL, "%s: not a regular file", path);
	}
	return fd;
}

int t4_read_small_file(const char *path, char *buf, size_t cap)
{
	int fd = open_regular(path);
	size_t len = 0;

	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail_closing(fd, path);
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap - 1) {
			char extra;
			if (read(fd, &extra, 1) > 0) {
				close(fd);
				return t4_err(EFBIG, "%s: file too large (over %zu bytes)", path, cap - 1);
			}
			break;
		}
	}
	close(fd);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	buf[len] = '\0';
	if (memchr(buf, '\0', len))
		return t4_err(EINVAL, "%s: contains a NUL byte", path);
	return (int)len;
}

int t4_create_new(const char *path, unsigned mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);

	if (fd < 0)
		return t4_err(errno, "%s: %s", path, strerror(errno));
	return fd;
}

/* Six characters of [a-z0-9] from the kernel's random pool (or, without
 * it, the clock): a name that cannot be guessed ahead. */
static void random_tag(char out[7])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[6];
	struct timespec ts;

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t x = t4_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32));
		memcpy(r, &x, sizeof(r));
	}
	for (int i = 0; i < 6; i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[6] = '\0';
}

/* Remove what dead runs left under base's temporary names (their PID in
 * them: "<base>.tmp-<pid>-XXXXXX"). */
static void reclaim_next_to(const char *base)
{
	char dir[4096], prefix[4096 + 8];
	const char *slash = strrchr(base, '/'), *name = slash ? slash + 1 : base;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (snprintf(dir, sizeof(dir), "%.*s", slash == base ? 1 : (int)(slash - base),
			  base) >= (int)sizeof(dir))
		return;
	if (snprintf(prefix, sizeof(prefix), "%s.tmp", name) < (int)sizeof(prefix))
		t4_privfile_reclaim(dir, prefix);
}

/* A new file "<base>.tmp-<pid>-XXXXXX" into path. */
static int create_unique(char *path, size_t cap, const char *base, unsigned mode)
{
	char tag[7];
	int fd = -EEXIST;

	for (int tries = 0; tries < 100 && fd == -EEXIST; tries++) {
		random_tag(tag);
		if (snprintf(path, cap, "%s.tmp-%ld-%s", base, (long)getpid(), tag) >= (int)cap)
			return t4_err(ENAMETOOLONG, "%s: file name too long", base);
		fd = t4_create_new(path, mode);
	}
	if (fd < 0)
		path[0] = '\0';
	return fd;
}

int t4_create_unique(char *path, size_t cap, const char *base, unsigned mode)
{
	reclaim_next_to(base);
	return create_unique(path, cap, base, mode);
}

int t4_write_small_file(const char *path, const char *text)
{
	char tmp[4200];
	/* not t4_create_unique: a small file is renamed at once, and a sysfs
	 * tree of thousands would scan its directory for each */
	int fd = create_unique(tmp, sizeof(tmp), path, 0666);
	size_t len = strlen(text), off = 0;

	if (fd < 0)
		return fd;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			unlink(tmp);
			return fail_closing(fd, path);
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return t4_err(e, "%s: %s", path, strerror(e));
	}
	return 0;
}

int t4_mkdirs(const char *path, unsigned mode)
{
	char tmp[4096];
	size_t len = strlen(path);

	if (len >= sizeof(tmp))
		return t4_err(ENAMETOOLONG, "%s: path too long", path);
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return t4_err(errno, "%s: %s", tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return t4_err(errno, "%s: %s", tmp, strerror(errno));
	return 0;
}

static int rm_fail(const char *path)
{
	return t4_err(errno, "%s: cannot remove: %s", path, strerror(errno));
}

/* path's own entry (lstat) and its directory's; false if either fails. */
static bool entry_and_dir(const char *path, struct stat *ent, struct stat *dir)
{
	char d[4096];

	if (lstat(path, ent) < 0)
		return false;
	snprintf(d, sizeof(d), "%s", path);
	return stat(dirname(d), dir) == 0;
}

/* Whether path is an entry of type fmt (S_IFLNK, S_IFDIR) that another
 * user made in a shared (sticky, world-writable) directory. */
static bool planted(const char *path, mode_t fmt)
{
	struct stat ent, dir;

	if (!entry_and_dir(path, &ent, &dir) || (ent.st_mode & S_IFMT) != fmt ||
	    ent.st_uid == geteuid())
		return false;
	return (dir.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH) &&
	       ent.st_uid != dir.st_uid;
}

bool t4_link_planted(const char *path)
{
	return planted(path, S_IFLNK);
}

bool t4_dir_planted(const char *path)
{
	return planted(path, S_IFDIR);
}

bool t4_sticky_foreign(const char *path)
{
	struct stat ent, dir;
	uid_t me = geteuid();

	return me != 0 && entry_and_dir(path, &ent, &dir) && (dir.st_mode & S_ISVTX) &&
	       ent.st_uid != me && dir.st_uid != me;
}

int t4_rmtree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : rm_fail(path);
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 ? rm_fail(path) : 0;
	d = opendir(path);
	if (!d)
		return rm_fail(path);
	while ((e = readdir(d))) {
		char child[4096];
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
		int r = t4_rmtree(child);
		if (r < 0 && rc == 0)
			rc = r;
	}
	closedir(d);
	if (rmdir(path) < 0 && rc == 0)
		rc = rm_fail(path);
	return rc;
}

int t4_dir_deleted(const char *name, const char *dir)
{
	char cwd[PATH_MAX];
	struct stat st;
	bool dot = !strcmp(dir, ".");

	/* stat finds it through the process's reference, with no link left;
	 * getcwd() says ENOENT of a deleted current directory on any file
	 * system, whatever it counts in st_nlink */
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    (st.st_nlink > 0 && !(dot && !getcwd(cwd, sizeof(cwd)) && errno == ENOENT)))
		return 0;
	if (dot)
		return t4_err(ENOENT, "%s: cannot create a file in the current directory: it was "
			      "deleted", name);
	return t4_err(ENOENT, "%s: cannot create a file in %s: the directory was deleted", name,
		      dir);
}
