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
 * is written in place (a socket, which no open() takes, is refused), and a symbolic link keeps pointing where it did:
 * renaming onto either would replace it with a file. A link to nothing
 * yet is followed as a shell's redirection follows it (what it names is
 * made); a link another user planted in a shared directory (/tmp) is
 * refused, whatever it points to, as fs.protected_symlinks would.
 *
 * A t410trace log is known by its chunk magic anywhere in its first MiB:
 * a log whose first chunk is damaged is still a log (the reader skips to
 * the next chunk), and no text or protobuf output holds the magic's byte
 * 0x1a after "T4TRACE".
 *
 * A regular OUT without a write bit (mode 0444, say) is refused: the user
 * protected it, and the rename needs only the directory's permission.
 */
#include "cli.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file being written, removed by a signal that ends the
 * process (Ctrl-C, kill, a closed terminal): a decode or report cut short
 * left OUT.tmp-XXXXXX behind, hundreds of MB of it, that nothing removes.
 * One output at a time per process. A signal the caller ignores (a
 * background job's SIGINT, nohup's SIGHUP) stays ignored. */
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP };
static char pending[sizeof(((struct cli_outfile *)0)->tmp)];
static volatile sig_atomic_t pending_set;
static struct sigaction pending_old[sizeof(fatal_signals) / sizeof(fatal_signals[0])];
static bool pending_caught[sizeof(fatal_signals) / sizeof(fatal_signals[0])];

/* Remove the temporary file, then die of the signal as before (the
 * handler is reset on entry: the signal, blocked until it returns, then
 * takes its default action). unlink and raise are async-signal-safe. */
static void remove_pending(int sig)
{
	int saved = errno;

	if (pending_set)
		unlink(pending);
	raise(sig);
	errno = saved;
}

static void pending_watch(const char *tmp)
{
	struct sigaction sa = { .sa_handler = remove_pending, .sa_flags = SA_RESETHAND };

	snprintf(pending, sizeof(pending), "%s", tmp);
	pending_set = 1;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < T4_ARRAY_LEN(fatal_signals); i++) {
		pending_caught[i] = sigaction(fatal_signals[i], NULL, &pending_old[i]) == 0 &&
				    pending_old[i].sa_handler == SIG_DFL &&
				    !(pending_old[i].sa_flags & SA_SIGINFO) &&
				    sigaction(fatal_signals[i], &sa, NULL) == 0;
	}
}

/* Before the temporary file is renamed or removed: no signal touches it. */
static void pending_done(void)
{
	for (size_t i = 0; i < T4_ARRAY_LEN(fatal_signals); i++)
		if (pending_caught[i])
			sigaction(fatal_signals[i], &pending_old[i], NULL);
	pending_set = 0;
}

bool cli_outfile_stdout(const struct cli_outfile *o)
{
	return !o->output || !strcmp(o->output, "-");
}

#define LOG_SNIFF (1u << 20) /* bytes searched for a chunk magic */

/* Whether the regular file at path holds a chunk magic in its first MiB. */
static bool holds_a_log(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	char *buf;
	ssize_t n = -1;
	bool found;

	if (fd < 0)
		return false;
	if ((buf = malloc(LOG_SNIFF)))
		n = read(fd, buf, LOG_SNIFF);
	close(fd);
	found = n > 0 && memmem(buf, (size_t)n, T4_CHUNK_MAGIC, T4_CHUNK_MAGIC_LEN);
	free(buf);
	return found;
}

/* Whether the input (a name, or "-": standard input) is the file of st. */
static bool is_input(const struct cli_outfile *o, const struct stat *st)
{
	struct stat in;

	return (strcmp(o->input, "-") ? stat(o->input, &in) : fstat(STDIN_FILENO, &in)) == 0 &&
	       in.st_dev == st->st_dev && in.st_ino == st->st_ino;
}

int cli_outfile_not_socket(const char *path, const struct stat *st)
{
	if (S_ISSOCK(st->st_mode))
		return t4_err(EINVAL, "%s: is a socket, not a file to write (name a file, a FIFO "
			      "or a device)", path);
	return 0;
}

/* A name ending in ".t4t" is a log's: `decode DIR/` reads every *.t4t
 * of DIR as one (cli/logs.c), and took a CSV written there for a damaged
 * log. (After the checks of what the name holds: theirs say more.) */
static int not_a_log_name(const char *name)
{
	size_t n = strlen(name);

	if (n >= 4 && !strcmp(name + n - 4, ".t4t"))
		return t4_err(EINVAL, "%s: a .t4t name is a log's; decode and report write none "
			      "(choose another -o)", name);
	return 0;
}

/* Refuse to replace the input, any t410trace log or a read-only file, to
 * write under a log's name, or to follow a link another user planted.
 * Standard output redirected to the input itself (`decode x.t4t >> x.t4t`,
 * `1<> x.t4t`) would append to the log or write over it while it is read:
 * refused too, as cat refuses it. */
static int check_output(const struct cli_outfile *o)
{
	struct stat out;

	if (cli_outfile_stdout(o))
		return fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode) && is_input(o, &out)
			       ? t4_err(EEXIST, "standard output: is the log being read; not "
					"written to")
			       : 0;
	if (!o->output[0]) /* else "': No such file or directory'", naming nothing */
		return t4_err(EINVAL, "-o: an empty file name ('-' is standard output)");
	if (t4_link_planted(o->output))
		return t4_err(EPERM, "%s: a symbolic link another user made in a shared directory;"
			      " not followed", o->output);
	if (stat(o->output, &out) < 0) /* a loop of links is no name to write to */
		return errno == ELOOP ? t4_err(ELOOP, "%s: %s", o->output, strerror(ELOOP))
				      : not_a_log_name(o->output);
	if (cli_outfile_not_socket(o->output, &out) < 0)
		return -EINVAL;
	/* the input by its name, or standard input: `decode - -o X < X` */
	if (is_input(o, &out))
		return t4_err(EEXIST, "%s: is the log being read; not overwritten", o->output);
	if (S_ISREG(out.st_mode) && holds_a_log(o->output))
		return t4_err(EEXIST, "%s: is a t410trace log; not overwritten (choose "
			      "another -o)", o->output);
	/* no write bit for anyone: a file the user protected. The rename
	 * would replace it all the same (the directory is what it needs, and
	 * root ignores the bits): refused by the bits, as rm -i asks */
	if (S_ISREG(out.st_mode) && !(out.st_mode & 0222))
		return t4_err(EACCES, "%s: read-only file; not overwritten (remove it or "
			      "chmod u+w first)", o->output);
	return S_ISREG(out.st_mode) ? not_a_log_name(o->output) : 0;
}

/* OUT a symbolic link (a chain of them) to nothing yet: dest is what it
 * names, made as a shell's redirection makes it, not the link replaced. */
static void link_to_nothing(struct cli_outfile *o)
{
	char at[sizeof(o->dest_buf)], to[sizeof(o->dest_buf)], dir[sizeof(o->dest_buf)];
	struct stat sb;

	snprintf(at, sizeof(at), "%s", o->output);
	for (int hops = 0; hops < 40 && lstat(at, &sb) == 0 && S_ISLNK(sb.st_mode); hops++) {
		ssize_t n = readlink(at, to, sizeof(to) - 1);
		if (n <= 0)
			return;
		to[n] = '\0';
		snprintf(dir, sizeof(dir), "%s", at);
		if (to[0] == '/' || !strchr(at, '/'))
			snprintf(at, sizeof(at), "%s", to);
		else if (snprintf(at, sizeof(at), "%s/%s", dirname(dir), to) >= (int)sizeof(at))
			return;
	}
	if (strcmp(at, o->output) && lstat(at, &sb) < 0 && errno == ENOENT) {
		snprintf(o->dest_buf, sizeof(o->dest_buf), "%s", at);
		o->dest = o->dest_buf;
	}
}

/* Where the output goes: in place for a device or a FIFO, else the file
 * OUT names (through a symbolic link). */
static void resolve_output(struct cli_outfile *o)
{
	struct stat sb;

	o->dest = o->output;
	if (cli_outfile_stdout(o))
		return;
	if (stat(o->output, &sb) < 0) {
		link_to_nothing(o);
		return;
	}
	if (!S_ISREG(sb.st_mode))
		o->in_place = true;
	else if (lstat(o->output, &sb) == 0 && S_ISLNK(sb.st_mode) &&
		 realpath(o->output, o->dest_buf))
		o->dest = o->dest_buf;
}

/* OUT written in place (a FIFO, a device): opened without O_CREAT or
 * O_TRUNC (a FIFO's wait for its reader said), and checked once open (a
 * file swapped in meanwhile is left alone). */
static int open_in_place(struct cli_outfile *o)
{
	struct stat sb;
	int fd = t4_open_in_place(o->output, o->output, false, NULL);

	if (fd < 0)
		return fd;
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

/* The temporary file could not be made next to OUT: why, of OUT (a
 * deleted current directory said "No such file or directory"). */
static int create_failed(const struct cli_outfile *o, int err)
{
	char d[sizeof(o->dest_buf)];

	snprintf(d, sizeof(d), "%s", o->dest);
	if (err == ENOENT && t4_dir_deleted(o->output, dirname(d)) < 0)
		return -ENOENT;
	return t4_err(err, "%s: %s", o->output, strerror(err));
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
		return create_failed(o, -fd);
	}
	pending_watch(o->tmp);
	/* a file it replaces keeps its permissions: a 0600 file stays 0600 */
	if (stat(o->dest, &sb) == 0 && S_ISREG(sb.st_mode))
		fchmod(fd, sb.st_mode & 07777);
	if (!(o->f = fdopen(fd, "w"))) {
		int err = errno;
		close(fd);
		unlink(o->tmp);
		pending_done();
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
	pending_done(); /* renamed: a signal now must not remove what has its name */
	if (rc < 0)
		unlink(o->tmp);
	return rc;
}
