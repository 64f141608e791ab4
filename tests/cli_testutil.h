/* cli_testutil.h - running the built binary and the project's scripts from
 * a test, as a user does (header-only: the tests are one binary, each file
 * stays readable alone; static inline, so each file uses what it needs
 * without unused-function warnings).
 *
 * One runner, cli_vexec(): a shell line (printf-style, any length) run by
 * /bin/sh in a directory of the test's choice, with "$B" the binary under
 * test (T4_BIN, set by `make check`) and "$D" that directory exported:
 * lines quote them (or put paths in '%s'), since a checkout path may have
 * spaces. It captures standard output, and errors with it or apart, and
 * returns the exit status. The shorthands over it: cli_exec() (variadic),
 * cli_run() (standard output here), cli_t4() ("$B" ARGS, errors merged),
 * sh() and sh_in_dir() (into a struct run, for the record, safety and
 * perf-habit tests). cli_tmpdir() and tmpdir() make private directories
 * (under $TMPDIR: tmpdir_testutil.h); cli_repo_file() finds a file of the
 * repository (tools/t4write.py) from here or from T4_BIN; json_num() picks
 * a number out of `info --json`; cli_build_shim() builds the perf_event_open
 * shim (tests/apps/perf_open_log.c) for a test to preload, cli_build_preload()
 * another shim of tests/apps.
 */
#ifndef T4_CLI_TESTUTIL_H
#define T4_CLI_TESTUTIL_H

#include <criterion/criterion.h>

#include "probe.h" /* t4t_cc */
#include "tmpdir_testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
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

/* ---- the one runner: a shell line, its output and its exit status ---- */

/* Where a command runs and where its output goes. */
struct cli_io {
	const char *dir; /* run there, exported as $D (quote it); NULL: here */
	char *out;       /* standard output, NUL-terminated, the rest dropped */
	size_t cap;
	bool merge_err;  /* standard errors into out as well */
	char *err;       /* else standard errors apart (err_cap bytes) */
	size_t err_cap;  /* (err NULL: they go to the test's own) */
};

/* The environment of the command: ours, with B (the binary under test,
 * when T4_BIN is set) and D (io->dir) exported; strings in env_buf. */
static inline char **cli_env(const char *dir, char *b_var, char *d_var, size_t cap)
{
	extern char **environ;
	const char *bin = getenv("T4_BIN");
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	cr_assert_not_null(env);
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "B=", 2) && strncmp(environ[i], "D=", 2))
			env[k++] = environ[i];
	if (bin && (size_t)snprintf(b_var, cap, "B=%s", bin) < cap)
		env[k++] = b_var;
	if (dir && (size_t)snprintf(d_var, cap, "D=%s", dir) < cap)
		env[k++] = d_var;
	return env;
}

/* Read the pipes fds[0] (into out) and fds[1] (into err, when >= 0) to
 * their end; each buffer NUL-terminated, what does not fit dropped. */
static inline void cli_drain(int fds[2], char *out, size_t cap, char *err, size_t err_cap)
{
	char *buf[2] = { out, err }, drop[4096];
	size_t len[2] = { 0, 0 }, room[2] = { cap, err_cap };

	while (fds[0] >= 0 || fds[1] >= 0) {
		struct pollfd pf[2] = { { fds[0], POLLIN, 0 }, { fds[1], POLLIN, 0 } };

		if (poll(pf, 2, -1) < 0) {
			cr_assert_eq(errno, EINTR, "poll: %s", strerror(errno));
			continue;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i] < 0 || !pf[i].revents)
				continue;
			bool fits = buf[i] && len[i] + 1 < room[i];
			ssize_t r = fits ? read(fds[i], buf[i] + len[i], room[i] - 1 - len[i])
					 : read(fds[i], drop, sizeof(drop));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				close(fds[i]);
				fds[i] = -1;
			} else if (fits) {
				len[i] += (size_t)r;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (buf[i] && room[i])
			buf[i][len[i]] = '\0';
}

/* Run the shell line fmt (printf-style) with /bin/sh, as io says (see
 * struct cli_io); any length. Returns its exit status, 128 + the signal
 * when it was killed. */
__attribute__((format(printf, 2, 0)))
static inline int cli_vexec(const struct cli_io *io, const char *fmt, va_list ap)
{
	char b_var[PATH_MAX + 8], d_var[PATH_MAX + 8], *line, **env;
	int out_p[2], err_p[2] = { -1, -1 }, fds[2], st;
	bool apart = io->err && !io->merge_err;
	va_list again;
	pid_t pid;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	cr_assert_geq(n, 0, "bad format: %s", fmt);
	line = malloc((size_t)n + 1);
	cr_assert_not_null(line);
	vsnprintf(line, (size_t)n + 1, fmt, ap);
	env = cli_env(io->dir, b_var, d_var, sizeof(b_var));
	cr_assert_eq(pipe2(out_p, O_CLOEXEC), 0, "pipe: %s", strerror(errno));
	if (apart)
		cr_assert_eq(pipe2(err_p, O_CLOEXEC), 0, "pipe: %s", strerror(errno));
	pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) { /* only async-signal-safe calls from here */
		char *argv[] = { "sh", "-c", line, NULL };
		if ((io->dir && chdir(io->dir)) || dup2(out_p[1], 1) < 0 ||
		    (apart && dup2(err_p[1], 2) < 0) || (io->merge_err && dup2(1, 2) < 0))
			_exit(99);
		execve("/bin/sh", argv, env);
		_exit(127);
	}
	close(out_p[1]);
	if (apart)
		close(err_p[1]);
	fds[0] = out_p[0];
	fds[1] = err_p[0];
	cli_drain(fds, io->out, io->cap, apart ? io->err : NULL, apart ? io->err_cap : 0);
	while (waitpid(pid, &st, 0) < 0)
		cr_assert_eq(errno, EINTR, "waitpid: %s", strerror(errno));
	free(env);
	free(line);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

__attribute__((format(printf, 2, 3)))
static inline int cli_exec(const struct cli_io *io, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = cli_vexec(io, fmt, ap);
	va_end(ap);
	return rc;
}

/* A shell line here, its standard output into out (add 2>&1 for the
 * errors too). */
__attribute__((format(printf, 3, 4)))
static inline int cli_run(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = cli_vexec(&(struct cli_io){ .out = out, .cap = cap }, fmt, ap);
	va_end(ap);
	return rc;
}

/* A shell line in dir, its standard output and errors into out (cap
 * bytes); the exit status. The suites' own shorthands (their fixture's
 * dir and out) are macros over it. */
__attribute__((format(printf, 4, 5)))
static inline int cli_in_dir(const char *dir, char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = cli_vexec(&(struct cli_io){ .dir = dir, .out = out, .cap = cap, .merge_err = true },
		       fmt, ap);
	va_end(ap);
	return rc;
}

/* The binary under test with the arguments fmt (a shell line's words),
 * its output and errors into out. Skips when T4_BIN is not set. */
__attribute__((format(printf, 3, 4)))
static inline int cli_t4(char *out, size_t cap, const char *fmt, ...)
{
	char *args;
	va_list ap;
	int rc;

	cli_bin();
	va_start(ap, fmt);
	cr_assert_geq(vasprintf(&args, fmt, ap), 0);
	va_end(ap);
	rc = cli_exec(&(struct cli_io){ .out = out, .cap = cap, .merge_err = true }, "\"$B\" %s",
		      args);
	free(args);
	return rc;
}

/* s without its trailing newlines. */
static inline char *t4t_chomp(char *s)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == '\n')
		s[--n] = '\0';
	return s;
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

/* Run a shell line (several commands too), capturing the standard
 * output and errors of all of it. */
__attribute__((format(printf, 2, 3)))
static inline void sh(struct run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r->status = cli_vexec(&(struct cli_io){ .out = r->out, .cap = sizeof(r->out),
						 .merge_err = true },
			      fmt, ap);
	va_end(ap);
}

/* Run a shell line in r->dir with "$B" the binary and "$D" the directory
 * (quote them, a checkout path may have spaces), outside any recorder's
 * control socket. */
static inline void sh_in_dir(struct run *r, const char *line)
{
	r->status = cli_exec(&(struct cli_io){ .dir = r->dir, .out = r->out, .cap = sizeof(r->out),
						.merge_err = true },
			     "unset T410TRACE_CONTROL; %s", line);
}

/* The end of a shell line that recorded task $s (a `sleep 30`) with
 * `"$B" record -p $s -c c.sock ... & rec=$!`: $s is ended once the
 * recorder has fired its first trigger (`ctl status`), however long the
 * recorder took to start (a `sleep 0.3` it had to attach to in time
 * failed on a loaded machine); then "rc=N" of the recorder. */
#define CLI_END_TASK_WHEN_RECORDING                                                    \
	"for i in $(seq 600); do \"$B\" ctl --control c.sock status 2>/dev/null | "       \
	"grep -q 'triggers=[1-9]' && break; sleep 0.05; done; kill $s; wait $rec; echo rc=$?; "

/* The start of a shell line whose recorder the test stops itself (a
 * `--virtual -d 100000h`, which writes as fast as it can): each process's
 * files are capped at 1 GiB and its CPU at 300 s, so a recorder the test
 * never stopped (the test timed out, its shell orphaned) cannot run on.
 * One filled a 57 GB disk under qemu. */
#define CLI_BOUND_RUNAWAY "ulimit -f 1048576; ulimit -t 300; "

static inline void tmpdir(struct run *r)
{
	t4t_tmpdir(r->dir, sizeof(r->dir), "t4rec");
}

static inline void cleanup(struct run *r)
{
	cr_assert_eq(t4_rmtree(r->dir), 0, "%s", t4_errmsg());
}

/* The LD_PRELOAD shim tests/apps/<name>.c built into r->dir/<name>.so
 * (r->dir from t4t_exec_tmpdir: the shim is mapped executable); skips
 * without a compiler for the target. */
static inline void cli_build_preload(struct run *r, const char *name, const char *so)
{
	char rel[PATH_MAX], src[PATH_MAX];

	t4t_need_cmd(t4t_cc());
	snprintf(rel, sizeof(rel), "tests/apps/%s.c", name);
	cr_assert_not_null(cli_repo_file(rel, src));
	sh(r, "%s -shared -fPIC -Wall -Werror -o '%s/%s' '%s' -ldl", t4t_cc(), r->dir, so, src);
	cr_assert_eq(r->status, 0, "%s", r->out);
}

/* The perf_event_open shim (tests/apps/perf_open_log.c) as r->dir/shim.so. */
static inline void cli_build_shim(struct run *r)
{
	cli_build_preload(r, "perf_open_log", "shim.so");
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

/* A Python function for a test's script: clean(*files) asserts that each
 * file is UTF-8 text with no control character but line breaks (what a
 * log names reaches no terminal as anything else). */
#define CLI_PY_CLEAN                                                                         \
	"def clean(*files):\n"                                                               \
	"    for f in files:\n"                                                              \
	"        text = open(f, 'rb').read().decode('utf-8')\n"                              \
	"        bad = [c for c in text if (ord(c) < 32 and c != '\\n') or 127 <= ord(c) < 160]\n" \
	"        assert not bad, (f, bad[:5])\n"

static inline int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#endif
