/* cli_testutil.h - running the built binary and the project's scripts from
 * a test, as a user does (header-only: the tests are one binary, each file
 * stays readable alone; static inline, so each file uses what it needs
 * without unused-function warnings).
 *
 * T4_BIN (set by `make check`) names the binary: cli_bin(), or bin() in
 * the record, safety and perf-habit tests. cli_run() runs a shell line
 * with its output captured, sh() the same into a struct run with stderr
 * too; cli_tmpdir() and tmpdir() make private directories (under $TMPDIR:
 * tmpdir_testutil.h); cli_repo_file()
 * finds a file of the repository (tools/t4write.py) from here or from
 * T4_BIN; json_num() picks a number out of `info --json`.
 */
#ifndef T4_CLI_TESTUTIL_H
#define T4_CLI_TESTUTIL_H

#include <criterion/criterion.h>

#include "tmpdir_testutil.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The binary under test; skips the test when T4_BIN is not set. */
static inline const char *cli_bin(void)
{
	const char *b = getenv("T4_BIN");

	if (!b || access(b, X_OK))
		cr_skip_test("T4_BIN not set (run through make check)");
	return b;
}

/* Run a shell command line (printf-style) and capture its standard output
 * into out (NUL-terminated, at most cap - 1 bytes; the rest is read and
 * dropped). Add 2>&1 to the line to capture errors too. Returns the exit
 * status, 128 + the signal when the command was killed. */
static inline int cli_run(char *out, size_t cap, const char *fmt, ...)
{
	char cmd[8192], drop[4096];
	size_t n = 0, k;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	k = (size_t)vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	cr_assert_lt(k, sizeof(cmd), "command line too long: %.200s", cmd);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "popen %s", cmd);
	while (n + 1 < cap && (k = fread(out + n, 1, cap - 1 - n, p)) > 0)
		n += k;
	if (cap)
		out[n] = '\0';
	while (fread(drop, 1, sizeof(drop), p) > 0)
		;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* A shell line (fmt, ap) run in dir, standard output and errors into out
 * (a redirection in the line applies to standard output only). */
static inline int cli_vrun_in(const char *dir, char *out, size_t cap, const char *fmt,
			      va_list ap)
{
	char cmd[4096];
	int n = vsnprintf(cmd, sizeof(cmd), fmt, ap);

	cr_assert(n >= 0 && (size_t)n < sizeof(cmd), "command line too long: %.200s", cmd);
	return cli_run(out, cap, "cd '%s' && { %s; } 2>&1", dir, cmd);
}

/* A new private directory under $TMPDIR (or /tmp); free() it after
 * t4_rmtree(). */
static inline char *cli_tmpdir(const char *tag)
{
	char *d = malloc(PATH_MAX);

	cr_assert_not_null(d);
	t4t_tmpdir(d, PATH_MAX, tag);
	return d;
}

/* The absolute path of a file of the repository (e.g. "tools/t4write.py")
 * into path (PATH_MAX bytes): from the current directory, else relative to
 * T4_BIN (<repo>/<out>/t410trace). NULL when neither has it. */
static inline const char *cli_repo_file(const char *rel, char *path)
{
	const char *bin = getenv("T4_BIN");
	char try[PATH_MAX];

	if (realpath(rel, path))
		return path;
	if (!bin)
		return NULL;
	snprintf(try, sizeof(try), "%s", bin);
	for (int up = 0; up < 2; up++) {
		char *sl = strrchr(try, '/');
		if (sl)
			*sl = '\0';
	}
	strncat(try, "/", sizeof(try) - strlen(try) - 1);
	strncat(try, rel, sizeof(try) - strlen(try) - 1);
	return realpath(try, path);
}

/* ---- a command and its output, for the record, safety and perf tests ---- */

struct run {
	int status;
	char out[1 << 18]; /* info --json of a simulated Tegra410: ~64 kB */
	char dir[PATH_MAX];
};

static inline const char *bin(void)
{
	return cli_bin();
}

/* Run a shell command line (several commands too), capturing the stdout
 * and stderr of all of it. */
static inline void sh(struct run *r, const char *fmt, ...)
{
	char line[8000];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	cr_assert(n >= 0 && (size_t)n < sizeof(line), "command line too long: %.200s", line);
	r->status = cli_run(r->out, sizeof(r->out), "{ %s\n} 2>&1", line);
}

/* Run a shell line in r->dir with "$B" the binary and "$D" the directory
 * (exported: quote them, a checkout path may have spaces), outside any
 * recorder's control socket. */
static inline void sh_in_dir(struct run *r, const char *line)
{
	sh(r, "export B='%s' D='%s'; unset T410TRACE_CONTROL; cd \"$D\" || exit 99; %s", bin(),
	   r->dir, line);
}

/* The end of a shell line that recorded task $s (a `sleep 30`) with
 * `"$B" record -p $s -c c.sock ... & rec=$!`: $s is ended once the
 * recorder has fired its first trigger (`ctl status`), however long the
 * recorder took to start (a `sleep 0.3` it had to attach to in time
 * failed on a loaded machine); then "rc=N" of the recorder. */
#define CLI_END_TASK_WHEN_RECORDING                                                    \
	"for i in $(seq 600); do \"$B\" ctl --control c.sock status 2>/dev/null | "       \
	"grep -q 'triggers=[1-9]' && break; sleep 0.05; done; kill $s; wait $rec; echo rc=$?; "

static inline void tmpdir(struct run *r)
{
	t4t_tmpdir(r->dir, sizeof(r->dir), "t4rec");
}

static inline void cleanup(struct run *r)
{
	cr_assert_eq(t4_rmtree(r->dir), 0, "%s", t4_errmsg());
}

/* The number after "key": in a JSON text. */
static inline long long json_num(const char *json, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\"", key);
	const char *p = strstr(json, pat);
	cr_assert_not_null(p, "no key %s in %s", key, json);
	p += strlen(pat);
	while (*p == ' ' || *p == ':')
		p++;
	return strtoll(p, NULL, 10);
}

static inline int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#endif
