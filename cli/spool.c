/* spool.c - a log on a pipe read twice: `decode -` checks its options
 * against the whole log before it writes a byte (decode/filters.c), then
 * decodes it; a pipe gives its bytes once. So standard input that is not
 * a file is first copied into an unnamed temporary file in $TMPDIR
 * (O_TMPFILE: nothing to remove, whatever ends the process; without it, a
 * file made with a name nobody can guess and unlinked at once), which then
 * becomes standard input. The log is compressed: the copy costs a
 * fraction of what the output it checks would have cost to hold.
 */
#include "cli.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An unnamed file for reading and writing in dir; fd or -errno. */
static int unnamed_file(const char *dir)
{
	char path[4200], base[4200];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd >= 0 ? fd : -errno;
	snprintf(base, sizeof(base), "%s/t410trace-stdin", dir);
	if ((fd = t4_create_unique(path, sizeof(path), base, 0600)) < 0)
		return fd;
	close(fd); /* (made write-only: opened again to be read too) */
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	int err = errno;
	unlink(path);
	return fd >= 0 ? fd : -err;
}

/* Every byte of from into to (short writes and EINTR taken care of). */
static int copy_all(int from, int to)
{
	char buf[1 << 16];

	for (;;) {
		ssize_t n = read(from, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? t4_err(errno, "standard input: %s", strerror(errno)) : 0;
		for (ssize_t at = 0; at < n;) {
			ssize_t k = write(to, buf + at, (size_t)(n - at));
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				return t4_err(errno, "%s: copying standard input: %s", t4_tmp_root(),
					      strerror(errno));
			at += k;
		}
	}
}

int cli_spool_stdin(void)
{
	struct stat sb;
	int fd, rc;

	if (fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode))
		return 0; /* a file already: read twice as it is */
	if ((fd = unnamed_file(t4_tmp_root())) < 0)
		return t4_err(-fd, "%s: a file to hold standard input: %s", t4_tmp_root(),
			      strerror(-fd));
	if ((rc = copy_all(STDIN_FILENO, fd)) == 0 && dup2(fd, STDIN_FILENO) < 0)
		rc = t4_err(errno, "standard input: %s", strerror(errno));
	close(fd);
	return rc;
}
