/* test_layout.c - the module rules of the developer guide, checked on the
 * sources themselves (run from the repository root, as `make check` does):
 *
 *   - a module (top-level directory) includes another module only through
 *     that module's one public header (util/util.h, packets/packets.h, ...);
 *   - lib/ (libt410trace, loaded into other people's programs) is built
 *     from control/ and util/ only: it includes nothing else;
 *   - no source or test names a path of one machine (/work/..., /home/...):
 *     files next to the repository are reached relative to its root;
 *   - the suites of tests/test_X.c are named X or X_<subject>.
 *
 * A plain scan of the #include lines: cheap, and it fails the moment a
 * file reaches into another module's private header.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const modules[] = { "util", "packets", "collector", "control",
				       "bpf", "sched", "decode", "live", "cli", "lib" };

/* Directories whose sources must not name machine paths. */
static const char *const source_dirs[] = { "util", "packets", "collector", "control", "bpf",
					   "sched", "decode", "live", "cli", "lib", "tests", "tests/apps",
					   "bench", "tools/fuzz" };

/* The one public header of a module ("" for cli and lib: nobody includes
 * them). */
static const char *public_header(const char *mod)
{
	if (!strcmp(mod, "cli") || !strcmp(mod, "lib"))
		return "";
	static char buf[64];
	snprintf(buf, sizeof(buf), "%s.h", mod);
	return buf;
}

/* The module an include names ("../sched/sched.h", "sched/sched.h"), with
 * the header's file name in *file; NULL for a header of the same module. */
static const char *module_of(const char *inc, const char **file)
{
	if (!strncmp(inc, "../", 3))
		inc += 3;
	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
		size_t n = strlen(modules[i]);
		if (!strncmp(inc, modules[i], n) && inc[n] == '/') {
			*file = inc + n + 1;
			return modules[i];
		}
	}
	return NULL;
}

/* Check every #include "..." of one file of module mod. */
static void check_file(const char *mod, const char *path, const char *const *allowed)
{
	char line[512];
	FILE *f = fopen(path, "r");

	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		char inc[256];
		const char *file, *other;

		if (sscanf(line, " #include \"%255[^\"]\"", inc) != 1)
			continue;
		/* one include style: another module's header from the root
		 * ("sched/sched.h"), the module's own bare ("sched_internal.h");
		 * generated headers (not in the tree: skeletons, protobuf) are
		 * under the build directory, named from there */
		cr_expect(strncmp(inc, "../", 3), "%s includes %s: name it from the root", path, inc);
		other = module_of(inc, &file);
		cr_expect(!other || strcmp(other, mod) || access(inc, F_OK),
			  "%s includes %s: a module's own header is included bare (\"%s\")", path,
			  inc, other ? file : inc);
		if (!(other = module_of(inc, &file)) || !strcmp(other, mod))
			continue;
		cr_expect_str_eq(file, public_header(other),
				 "%s includes %s: only %s/%s is public", path, inc, other,
				 public_header(other));
		if (!allowed)
			continue;
		bool ok = false;
		for (const char *const *a = allowed; *a; a++)
			ok |= !strcmp(*a, other);
		cr_expect(ok, "%s includes %s: this module may use only control/ and util/",
			  path, inc);
	}
	fclose(f);
}

static size_t check_module(const char *mod, const char *const *allowed)
{
	DIR *d = opendir(mod);
	struct dirent *e;
	size_t n = 0;
	char path[512];

	cr_assert_not_null(d, "%s/ (run from the repository root)", mod);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 3 || (strcmp(e->d_name + len - 2, ".c") && strcmp(e->d_name + len - 2, ".h")))
			continue;
		snprintf(path, sizeof(path), "%s/%s", mod, e->d_name);
		check_file(mod, path, allowed);
		n++;
	}
	closedir(d);
	return n;
}

Test(layout, modules_talk_through_their_public_header)
{
	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
		check_module(modules[i], NULL);
}

Test(layout, lib_uses_control_and_util_only)
{
	static const char *const allowed[] = { "control", "util", NULL };

	cr_assert_gt(check_module("lib", allowed), 0);
}

/* Count lines of path holding one of bad[] (NULL-terminated), each a
 * failed expectation saying why. */
static int lines_with(const char *path, const char *const *bad, const char *why)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof(line), f))
		for (size_t i = 0; bad[i]; i++)
			if (strstr(line, bad[i])) {
				cr_expect(0, "%s: %s: %s", path, why, line);
				n++;
			}
	fclose(f);
	return n;
}

/* lines_with() over every .c and .h of the directories dirs (n of them). */
static int sources_with(const char *const *dirs, size_t n_dirs, const char *const *bad,
			const char *why)
{
	char path[512];
	int n = 0;

	for (size_t i = 0; i < n_dirs; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;

		cr_assert_not_null(d, "%s", dirs[i]);
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);
			if (len < 3 || (strcmp(e->d_name + len - 2, ".c") &&
					strcmp(e->d_name + len - 2, ".h")))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[i], e->d_name);
			n += lines_with(path, bad, why);
		}
		closedir(d);
	}
	return n;
}

Test(layout, no_machine_paths)
{
	/* split so that these lines do not match themselves */
	static const char *const bad[] = { "\"/" "work/", "\"/" "home/", "\"/" "root/", NULL };

	cr_assert_eq(sources_with(source_dirs, sizeof(source_dirs) / sizeof(source_dirs[0]), bad,
				  "a machine's path"), 0);
}

/* The suite assumes nothing of where it runs (README, "What make check
 * needs"): a scratch directory comes from tests/tmpdir_testutil.h ($TMPDIR,
 * a directory nobody can reach, one that can execute), never a fixed path
 * under /tmp; and no cr_log_warn, after which Criterion 2.4 ends a run
 * whose every test passed with exit 1. */
Test(layout, tests_assume_nothing_of_the_machine)
{
	static const char *const dirs[] = { "tests", "tests/apps" };
	static const char *const bad[] = { "\"/" "tmp/", "cr_log_" "warn(", NULL };

	cr_assert_eq(sources_with(dirs, 2, bad, "assumes something of the machine"), 0);
}

/* Every Criterion suite of tests/test_X.c is named X or X_<subject>, so
 * that `--filter 'X*'` runs a file's tests and a failing test's name
 * leads to its file. The suite name must stand on the Test( line. */
static int misnamed_suites(const char *dir, const char *file, size_t *n_tests)
{
	static const char *const macros[] = { "Test(", "ParameterizedTest(", "TestSuite(" };
	char path[512], stem[256], line[1024];
	size_t len = strlen(file) - strlen("test_") - strlen(".c");
	int bad = 0;
	FILE *f;

	snprintf(stem, sizeof(stem), "%.*s", (int)len, file + strlen("test_"));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++) {
			size_t m = strlen(macros[i]);
			char suite[256] = "";

			if (strncmp(line, macros[i], m))
				continue;
			sscanf(line + m, " %255[A-Za-z0-9_]", suite);
			(*n_tests)++;
			if (!strcmp(suite, stem) || (!strncmp(suite, stem, len) && suite[len] == '_'))
				continue;
			cr_expect(0, "%s: suite \"%s\" is not %s or %s_<subject>: %s", path, suite,
				  stem, stem, line);
			bad++;
		}
	}
	fclose(f);
	return bad;
}

Test(layout, suites_are_named_after_their_file)
{
	DIR *d = opendir("tests");
	struct dirent *e;
	size_t n_files = 0, n_tests = 0;
	int bad = 0;

	cr_assert_not_null(d, "tests/ (run from the repository root)");
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, "test_", 5) || len <= 7 || strcmp(e->d_name + len - 2, ".c"))
			continue;
		bad += misnamed_suites("tests", e->d_name, &n_tests);
		n_files++;
	}
	closedir(d);
	cr_assert_gt(n_files, 40, "the test files were not found");
	cr_assert_gt(n_tests, 300, "no Test( lines found");
	cr_assert_eq(bad, 0, "%d tests in suites not named after their file", bad);
}

/* Internal headers declare functions with their module's prefix (sched_,
 * dec_, pkt_, ...), never the public t4_: a reader tells the public API
 * from a module's internals by the name alone. */
static int public_names_in(const char *path)
{
	char line[512];
	int bad = 0;
	FILE *f = fopen(path, "r");

	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		const char *p = line, *q;

		if (strchr(" \t/*#}", line[0]) || !strchr(line, '('))
			continue; /* continuation, comment, macro, or no call */
		while ((p = strstr(p, "t4_"))) {
			for (q = p + 3; *q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9'); q++)
				;
			if (*q == '(' && (p == line || p[-1] == ' ' || p[-1] == '*')) {
				cr_expect(false, "%s declares %.*s: an internal function takes its module's prefix",
					  path, (int)(q - p), p);
				bad++;
			}
			p = q;
		}
	}
	fclose(f);
	return bad;
}

Test(layout, internal_functions_are_not_named_public)
{
	static const char *const internal[] = {
		"sched/sched_internal.h", "decode/decode_int.h", "packets/codec_int.h",
		"packets/copies.h", "packets/log_io.h", "packets/ring.h",
		"collector/events_int.h", "collector/sim_internal.h",
	};

	for (size_t i = 0; i < sizeof(internal) / sizeof(internal[0]); i++)
		public_names_in(internal[i]);
}
