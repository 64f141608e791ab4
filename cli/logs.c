/* logs.c - the logs `decode` and `report` are given: files, or a
 * directory of them (its *.t4t files, in name order, not its
 * subdirectories), the way a Slurm job's `-o 'job%j/trace.%h.t4t'` leaves
 * one log per node in one directory. Several logs are decoded merged on
 * one timeline (decode/merge.c); one log is decoded alone, as always.
 */
#include "cli.h"
#include "decode/decode.h"
#include "packets/packets.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLI_LOGS_MAX 1024 /* logs of one merge: each host's decoder stays in memory
			  * until the tables across hosts (what its tables read: about
			  * 60 KB a clock domain, 2 MB a Tegra410) */

void cli_logs_free(struct cli_logs *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int add(struct cli_logs *l, const char *sub, const char *dir, const char *name)
{
	char *p;
	size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;

	if (l->n == CLI_LOGS_MAX)
		return cli_usage_error(sub, "more than %d logs: merge them in groups", CLI_LOGS_MAX);
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return cli_usage_error(sub, "out of memory");
		l->v = v;
		l->cap = cap;
	}
	if (!(p = malloc(n)))
		return cli_usage_error(sub, "out of memory");
	if (dir)
		snprintf(p, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	else
		snprintf(p, n, "%s", name);
	l->v[l->n++] = p;
	return 0;
}

static bool is_log_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 4 && !strcmp(name + n - 4, ".t4t");
}

/* What record leaves of a FILE.t4t it could not finish naming (cli/output.c):
 * FILE.partial-PID, a log whose name was taken, and FILE.partial-PID-XXXXXX/,
 * the private directory of a recording not started yet or killed while
 * starting (no chunk on disk). A node's log among them must not go missing
 * without a word. */
static const char *partial_kind(const char *name, const struct stat *sb)
{
	const char *p = strstr(name, ".t4t.partial-");
	size_t digits;

	if (!p || p == name)
		return NULL;
	p += strlen(".t4t.partial-");
	digits = strspn(p, "0123456789");
	if (!digits)
		return NULL;
	if (!p[digits] && S_ISREG(sb->st_mode))
		return "a log its recorder could not give its name (record said so): decode it by "
		       "name";
	if (p[digits] == '-' && S_ISDIR(sb->st_mode))
		return "a recording not started yet, or killed while starting: no log";
	return NULL;
}

/* A directory entry that looks like a log, or what record leaves of one,
 * and is not taken: said (left out silently, a node's log went missing
 * without a word). */
static void say_left_out(const char *dir, const char *name)
{
	char path[PATH_MAX];
	const char *why;
	struct stat sb;

	if (!is_log_name(name) && !strstr(name, ".t4t.partial-"))
		return; /* not a log's name: the job's other files */
	snprintf(path, sizeof(path), "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	if (stat(path, &sb) < 0)
		why = strerror(errno); /* a dangling or looping link */
	else if (is_log_name(name))
		why = S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file";
	else if (!(why = partial_kind(name, &sb)))
		return;
	t4_warn("%s: left out: %s", path, why);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.t4t regular files of dir, in name order. */
static int add_dir(struct cli_logs *l, const char *sub, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t before = l->n;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "t410trace %s: %s: %s\n", sub, dir, strerror(errno));
		return 2;
	}
	while (rc == 0 && (e = readdir(d))) {
		struct stat sb;
		if (e->d_name[0] == '.')
			continue;
		if (!is_log_name(e->d_name)) {
			say_left_out(dir, e->d_name);
			continue;
		}
		if ((rc = add(l, sub, dir, e->d_name)))
			continue;
		if (stat(l->v[l->n - 1], &sb) < 0 || !S_ISREG(sb.st_mode)) {
			free(l->v[--l->n]); /* a dangling link, a directory named x.t4t */
			say_left_out(dir, e->d_name);
		}
	}
	closedir(d);
	if (rc == 0 && l->n == before) {
		fprintf(stderr, "t410trace %s: %s: a directory without any .t4t log\n", sub, dir);
		return 2;
	}
	if (rc == 0)
		qsort(l->v + before, l->n - before, sizeof(*l->v), by_name);
	return rc;
}

/* A log that is not there or not readable is said now, before anything
 * else is checked: `report /no/such.t4t` named the report it would have
 * written (/no/such.html), `decode /no/such.t4t -o /no/dir/x.csv` the
 * output. Nothing is opened (a FIFO's writer must not see a reader come
 * and go); the decoder's open says the rest. */
static int readable(const char *sub, const char *arg, const struct stat *sb, int err)
{
	if (!err && !S_ISDIR(sb->st_mode) && access(arg, R_OK) < 0)
		err = errno;
	if (!err)
		return 0;
	t4_err(err, "%s: %s", arg, strerror(err)); /* one line, as the decoder's */
	fprintf(stderr, "t410trace %s: %s\n", sub, t4_errmsg());
	return 2;
}

int cli_logs_add(struct cli_logs *l, const char *sub, const char *arg)
{
	struct stat sb;

	if (!strcmp(arg, "-") || !arg[0]) /* '' is refused by its own words */
		return add(l, sub, NULL, arg);
	if (readable(sub, arg, &sb, stat(arg, &sb) < 0 ? errno : 0))
		return 2;
	if (S_ISDIR(sb.st_mode)) {
		l->dirs++;
		return add_dir(l, sub, arg);
	}
	return add(l, sub, NULL, arg);
}

bool cli_logs_merged(const struct cli_logs *l)
{
	return l->n > 1 || l->dirs;
}

static void quiet(void *ud, uint64_t offset, const char *msg)
{
	(void)ud;
	(void)offset;
	(void)msg;
}

/* Each log's first bytes are read (a file of no log refused) before the
 * output is made: `report /proc/self/maps` said "/proc/self/maps.html: No
 * such file or directory", naming the report it could not make in /proc
 * rather than the input that is no log. Standard input is left to the
 * decoder (a pipe is read once); the decoder warns of damage itself. */
int cli_logs_check(const struct cli_logs *l, const char *sub)
{
	for (size_t i = 0; i < l->n; i++) {
		struct t4_reader *r;
		int rc;
		if (!strcmp(l->v[i], "-"))
			continue;
		if ((rc = t4_reader_open(&r, l->v[i], quiet, NULL)) < 0) {
			fprintf(stderr, "t410trace %s: %s\n", sub, t4_errmsg());
			return t4_exit_code(rc);
		}
		t4_reader_close(r);
	}
	return 0;
}

int cli_logs_decode(const struct cli_logs *l, const struct t4_decode_opts *d,
		    struct t4_output *out)
{
	struct t4_merge *m = NULL;
	int rc;

	if (!cli_logs_merged(l))
		return t4_decode_file(l->v[0], d, t4_output_ops(out), out);
	if ((rc = t4_merge_open(&m, (const char *const *)l->v, l->n)) == 0)
		rc = t4_merge_decode(m, d, t4_output_ops(out), out);
	t4_merge_free(m);
	return rc;
}
