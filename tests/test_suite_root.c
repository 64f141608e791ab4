/* test_suite_root.c - the suite runs from its checkout, wherever it is
 * started.
 *
 * The tests read the repository's files by relative paths (fixtures,
 * sources they compile, tools/): `make check` runs them from the checkout,
 * but a developer may start the test binary from anywhere (`cd build &&
 * ./t4test`). Before Criterion starts, a binary started outside its
 * checkout moves there, found from its own path (<checkout>/<out>/t4test).
 * Every test process inherits that directory. (A relative --tap or --xml
 * path is then taken from the checkout too.)
 */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_testutil.h"

#define T4T_MARK "tests/probe.h" /* a file only the checkout has */

__attribute__((constructor)) static void enter_checkout(void)
{
	char dir[PATH_MAX], mark[PATH_MAX + 16];
	ssize_t n;

	if (access(T4T_MARK, R_OK) == 0)
		return;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		return;
	dir[n] = '\0';
	for (int up = 0; up < 2; up++) { /* <checkout>/<out>/t4test -> <checkout> */
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return;
		*slash = '\0';
	}
	snprintf(mark, sizeof(mark), "%s/" T4T_MARK, dir);
	if (access(mark, R_OK) == 0 && chdir(dir) == 0)
		return;
}

/* Whatever directory the binary was started from, the tests see the
 * checkout: its files are where the relative paths say. */
Test(suite_root, runs_from_the_checkout)
{
	cr_assert_eq(access(T4T_MARK, R_OK), 0, "not in the checkout");
	cr_assert_eq(access("tests/fixtures", R_OK), 0);
}

/* The binary started from another directory runs the test above there
 * (BXFI_MAP, which tells a Criterion worker its sandbox, left out: this is
 * a new run, not a worker). */
Test(suite_root, started_elsewhere_moves_to_the_checkout, .timeout = 60)
{
	const char *out = getenv("T4_OUT");
	char text[4096];

	if (!out)
		cr_skip_test("T4_OUT not set (run through make check)");
	cr_assert_eq(cli_exec(&(struct cli_io){ .dir = "/", .out = text, .cap = sizeof(text),
						 .merge_err = true },
			      "env -u BXFI_MAP '%s/t4test' --filter 'suite_root/runs_from_the_checkout'",
			      out),
		     0, "%s", text);
}
