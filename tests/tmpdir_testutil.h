/* tmpdir_testutil.h - where a test writes, where it runs what it built,
 * and how it runs something as another user, wherever the suite runs: a
 * checkout under a 0700 directory (/root, mktemp -d), $TMPDIR set or not,
 * /tmp mounted noexec, root or an ordinary user, several `make check` at
 * once (header-only, static inline: each test file uses what it needs).
 *
 * t4t_tmpdir()       a private directory under $TMPDIR, else /tmp (the
 *                    recorder's own rule, t4_tmp_root());
 * t4t_exec_tmpdir()  the same for programs a test builds and runs, but in
 *                    the build folder ($T4_OUT/tmp) where $TMPDIR is
 *                    mounted noexec: the folder the test binary runs from
 *                    can execute;
 * t4t_nobody_tmpdir() (root) a directory that nobody (uid 65534) can
 *                    reach, and execute in where asked; skips with the
 *                    reason where root cannot become nobody or no such
 *                    place exists;
 * t4t_run_as_nobody() runs a program there as nobody and tells "could not
 *                    switch user" (a skip) from "could not execute" (a
 *                    failure).
 * Every directory is new (mkdtemp), so parallel tests and parallel runs
 * never share one; remove it with t4_rmtree().
 */
#ifndef T4_TMPDIR_TESTUTIL_H
#define T4_TMPDIR_TESTUTIL_H

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/util.h"

#define T4T_NOBODY 65534 /* uid and gid of nobody (Debian, Fedora, Alpine) */

/* root/tag.XXXXXX, created (mode 0700) into dir; false when it cannot be. */
static inline bool t4t_mkdtemp_in(char *dir, size_t cap, const char *root, const char *tag)
{
	int n = snprintf(dir, cap, "%s/%s.XXXXXX", root, tag);

	return n > 0 && (size_t)n < cap && mkdtemp(dir);
}

/* A new private directory for a test's data: $TMPDIR, else /tmp. */
static inline void t4t_tmpdir(char *dir, size_t cap, const char *tag)
{
	cr_assert(t4t_mkdtemp_in(dir, cap, t4_tmp_root(), tag), "cannot create %s/%s.XXXXXX: %s",
		  t4_tmp_root(), tag, strerror(errno));
}

/* A new private directory for a program the test builds and runs: under
 * $TMPDIR (or /tmp) unless that is mounted noexec, else in the build
 * folder ($T4_OUT/tmp), which can execute: the test binary runs from it. */
static inline void t4t_exec_tmpdir(char *dir, size_t cap, const char *tag)
{
	const char *out = getenv("T4_OUT");
	char root[PATH_MAX];
	struct statvfs vfs;

	if (statvfs(t4_tmp_root(), &vfs) == 0 && !(vfs.f_flag & ST_NOEXEC)) {
		t4t_tmpdir(dir, cap, tag);
		return;
	}
	if (!out || !*out)
		cr_skip_test("%s is mounted noexec and T4_OUT is not set (run through make check)",
			     t4_tmp_root());
	snprintf(root, sizeof(root), "%s/tmp", out);
	if (mkdir(root, 0700) && errno != EEXIST)
		cr_assert_fail("cannot create %s: %s", root, strerror(errno));
	cr_assert(t4t_mkdtemp_in(dir, cap, root, tag), "cannot create %s/%s.XXXXXX: %s", root, tag,
		  strerror(errno));
}

/* In a child: drop every group and become nobody. 0 or -errno. */
static inline int t4t_become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(T4T_NOBODY) || setuid(T4T_NOBODY))
		return -errno;
	return 0;
}

/* Whether nobody can reach dir (search every directory above it) and,
 * with exec, run a program from it (not mounted noexec): 0, or -errno of
 * the refusal (-ENOEXEC for noexec). -EPERM: root cannot become nobody. */
static inline int t4t_nobody_can_use(const char *dir, bool exec)
{
	struct statvfs vfs;
	int st;
	pid_t pid;

	if (exec && statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC))
		return -ENOEXEC;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (t4t_become_nobody())
			_exit(1);
		_exit(access(dir, X_OK) ? 2 : 0);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	return WEXITSTATUS(st) == 1 ? -EPERM : WEXITSTATUS(st) == 2 ? -EACCES : 0;
}

/* Append "; root: what" to the reasons in why (cap bytes), cut if long. */
static inline void t4t_why(char *why, size_t cap, const char *root, const char *what)
{
	size_t len = strlen(why);

	snprintf(why + len, cap - len, "; %s: %s", root, what);
}

/* A new directory (mode 0711, root's) that nobody can reach, with exec
 * one nobody can also run programs from: under the first of $TMPDIR,
 * /tmp, /var/tmp, /dev/shm that allows it. Root only. Skips when root
 * cannot become nobody here (a user namespace without uid 65534) or no
 * place fits, with what each place said. */
static inline void t4t_nobody_tmpdir(char *dir, size_t cap, const char *tag, bool exec)
{
	const char *roots[] = { t4_tmp_root(), "/tmp", "/var/tmp", "/dev/shm" };
	char why[1024] = "";

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		if (i > 0 && !strcmp(roots[i], roots[0]))
			continue;
		if (!t4t_mkdtemp_in(dir, cap, roots[i], tag)) {
			t4t_why(why, sizeof(why), roots[i], strerror(errno));
			continue;
		}
		cr_assert_eq(chmod(dir, 0711), 0, "chmod %s: %s", dir, strerror(errno));
		int err = t4t_nobody_can_use(dir, exec);
		if (err == 0)
			return;
		t4_rmtree(dir);
		if (err == -EPERM)
			cr_skip_test("root cannot become nobody (uid %d) here", T4T_NOBODY);
		t4t_why(why, sizeof(why), roots[i],
			err == -ENOEXEC ? "mounted noexec" : "nobody cannot search a directory above it");
	}
	cr_skip_test("no directory nobody can %s%s", exec ? "run programs from" : "reach", why);
}

/* Run argv (argv[0] a path) as nobody in dir, with stdout and stderr in
 * dir/out.txt, $TMPDIR set to dir (nobody's temporary files go where it
 * can write) and no LSAN_OPTIONS (the suppressions file lies in the
 * checkout, which nobody may not reach). Returns its exit status (128 +
 * the signal). Skips when root cannot become nobody; fails when nobody
 * cannot execute argv[0] (dir came from t4t_nobody_tmpdir(): it must). */
static inline int t4t_run_as_nobody(const char *dir, char *const argv[])
{
	struct { int stage, err; } got = { 0, 0 };
	char out[PATH_MAX + 16];
	int p[2], st;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/out.txt", dir);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		got.stage = 1;
		if (fd < 0 || fchown(fd, T4T_NOBODY, T4T_NOBODY) || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			got.err = errno;
		else if ((got.stage = 2, got.err = -t4t_become_nobody()) == 0) {
			got.stage = 3;
			if (chdir(dir) || setenv("TMPDIR", dir, 1) || unsetenv("LSAN_OPTIONS"))
				got.err = errno;
			else {
				execv(argv[0], argv);
				got.stage = 4, got.err = errno;
			}
		}
		(void)!write(p[1], &got, sizeof(got));
		_exit(127);
	}
	close(p[1]);
	ssize_t n = read(p[0], &got, sizeof(got));
	close(p[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	if (n == (ssize_t)sizeof(got)) {
		if (got.stage == 2)
			cr_skip_test("root cannot become nobody (uid %d) here: %s", T4T_NOBODY,
				     strerror(got.err));
		cr_assert_fail("%s %s as nobody: %s",
			       got.stage == 4 ? "cannot execute" : "cannot prepare to run", argv[0],
			       strerror(got.err));
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Copy the program src into dir (mode 0755) and its path into dst. */
static inline void t4t_copy_program(const char *src, const char *dir, char *dst, size_t cap)
{
	const char *base = strrchr(src, '/');
	char buf[1 << 16];
	ssize_t n;
	int in, out;

	snprintf(dst, cap, "%s/%s", dir, base ? base + 1 : src);
	in = open(src, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(in, 0, "%s: %s", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	cr_assert_geq(out, 0, "%s: %s", dst, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, (size_t)n), n, "%s: %s", dst, strerror(errno));
	cr_assert_eq(n, 0, "%s: %s", src, strerror(errno));
	close(in);
	cr_assert_eq(close(out), 0);
	cr_assert_eq(chmod(dst, 0755), 0); /* whatever the umask */
}

#endif
