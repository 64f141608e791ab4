/* outfile.c - where `decode -o` and `report -o` write, by the project's
 * file rules.
 *
 * An output file is written under a temporary name next to it and renamed
 * into place only when it is complete, so a failed or interrupted run
 * never leaves a half-written file where a good one was; it never replaces
 * the log it reads, nor any other t410trace log. The temporary file is
 * created new (O_EXCL|O_NOFOLLOW: nothing planted at its name is followed)
 * with the mode the umask allows (0666 less the umask), as any file a
 * shell redirection makes; a file it replaces keeps its permissions. An OUT that is not a regular file (/dev/stdout, a FIFO, a device)
 * is written in place, and a symbolic link keeps pointing where it did:
 * renaming onto either would replace it with a file.
 */
#include "cli.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool cli_outfile_stdout(const struct cli_outfile *o)
{
	return !o->output || !strcmp(o->output, "-");
}

/* Refuse to replace the input or any t410trace log. */
static int check_output(const struct cli_outfile *o)
{
	struct stat in, out;
	char magic[T4_CHUNK_MAGIC_LEN];
	int fd;

	if (cli_outfile_stdout(o) || stat(o->output, &out) < 0)
		return 0; /* standard output, or a new file */
	/* the input by its name, or standard input: `decode - -o X < X` */
	if ((strcmp(o->input, "-") ? stat(o->input, &in) : fstat(STDIN_FILENO, &in)) == 0 &&
	    in.st_dev == out.st_dev && in.st_ino == out.st_ino)
		return t4_err(EEXIST, "%s: is the log being read; not overwritten", o->output);
	if (S_ISREG(out.st_mode) && (fd = open(o->output, O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t n = read(fd, magic, sizeof(magic));
		close(fd);
		if (n == (ssize_t)sizeof(magic) && !memcmp(magic, T4_CHUNK_MAGIC, sizeof(magic)))
			return t4_err(EEXIST, "%s: is a t410trace log; not overwritten (choose "
				      "another -o)", o->output);
	}
	return 0;
}

/* Where the output goes: in place for a device or a FIFO, else the file
 * OUT names (through a symbolic link). */
static void resolve_output(struct cli_outfile *o)
{
	struct stat sb;

	o->dest = o->output;
	if (cli_outfile_stdout(o) || stat(o->output, &sb) < 0)
		return;
	if (!S_ISREG(sb.st_mode))
		o->in_place = true;
	else if (lstat(o->output, &sb) == 0 && S_ISLNK(sb.st_mode) &&
		 realpath(o->output, o->dest_buf))
		o->dest = o->dest_buf;
}

/* OUT written in place (a FIFO, a device): opened without O_CREAT or
 * O_TRUNC, and checked once open (a file swapped in meanwhile is left
 * alone). */
static int open_in_place(struct cli_outfile *o)
{
	struct stat sb;
	int fd = open(o->output, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return t4_err(errno, "%s: %s", o->output, strerror(errno));
	if (fstat(fd, &sb) == 0 &&
	    (S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode) || S_ISBLK(sb.st_mode))) {
		close(fd);
		return t4_err(EEXIST, "%s: changed while writing began; not overwritten",
			      o->output);
	}
	if (!(o->f = fdopen(fd, "w"))) {
		int err = errno;
		close(fd);
		return t4_err(err, "%s: %s", o->output, strerror(err));
	}
	return 0;
}

int cli_outfile_check(struct cli_outfile *o, const char *input, const char *output)
{
	memset(o, 0, sizeof(*o));
	o->input = input;
	o->output = output;
	if (check_output(o) < 0)
		return -EEXIST;
	resolve_output(o);
	return 0;
}

int cli_outfile_open(struct cli_outfile *o)
{
	struct stat sb;
	int fd;

	o->tmp[0] = '\0';
	if (cli_outfile_stdout(o)) {
		o->f = stdout;
		return 0;
	}
	if (o->in_place)
		return open_in_place(o);
	if ((fd = t4_create_unique(o->tmp, sizeof(o->tmp), o->dest, 0666)) < 0) {
		o->tmp[0] = '\0';
		return t4_err(-fd, "%s: %s", o->output, strerror(-fd));
	}
	/* a file it replaces keeps its permissions: a 0600 file stays 0600 */
	if (stat(o->dest, &sb) == 0 && S_ISREG(sb.st_mode))
		fchmod(fd, sb.st_mode & 07777);
	if (!(o->f = fdopen(fd, "w"))) {
		int err = errno;
		close(fd);
		unlink(o->tmp);
		o->tmp[0] = '\0';
		return t4_err(err, "%s: %s", o->output, strerror(err));
	}
	return 0;
}

int cli_outfile_close(struct cli_outfile *o, int rc)
{
	if (!o->f || o->f == stdout)
		return rc;
	if (fclose(o->f) != 0 && rc >= 0)
		rc = t4_err(errno, "%s: %s", o->output, strerror(errno));
	o->f = NULL;
	if (o->in_place)
		return rc;
	if (rc >= 0 && rename(o->tmp, o->dest) < 0)
		rc = t4_err(errno, "%s: %s", o->output, strerror(errno));
	if (rc < 0)
		unlink(o->tmp);
	return rc;
}
