/* cli_testutil.h - running the built binary from a test, as a user does
 * (shared by the record, safety and perf-habit tests; header-only: the
 * tests are one binary, each file stays readable alone).
 *
 * T4_BIN (set by `make check`) names the binary; sh() runs a shell line
 * with stdout and stderr captured; json_num() picks a number out of
 * `info --json`.
 */
#ifndef T4_CLI_TESTUTIL_H
#define T4_CLI_TESTUTIL_H

#include <criterion/criterion.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct run {
	int status;
	char out[1 << 16];
	char dir[64];
};

static inline const char *bin(void)
{
	const char *b = getenv("T4_BIN");
	if (!b)
		cr_skip_test("T4_BIN not set (run through make check)");
	return b;
}

/* Run a shell command line (several commands too), capturing the stdout
 * and stderr of all of it. */
static inline void sh(struct run *r, const char *fmt, ...)
{
	char line[4096], cmd[4200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "{ %s\n} 2>&1", line);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(r->out, 1, sizeof(r->out) - 1, p);
	r->out[n] = '\0';
	int st = pclose(p);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static inline void tmpdir(struct run *r)
{
	strcpy(r->dir, "/tmp/t4rec.XXXXXX");
	cr_assert_not_null(mkdtemp(r->dir));
}

static inline void cleanup(struct run *r)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", r->dir);
	cr_assert_eq(system(cmd), 0);
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
