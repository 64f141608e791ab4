/* h1_testutil.h - helpers shared by the discovery/event/kind/PCI tests
 * (defined in test_pmu.c): fixture paths and running the built binary. */
#ifndef T4_H1_TESTUTIL_H
#define T4_H1_TESTUTIL_H

#include <stddef.h>

#define H1_FIX "tests/fixtures/sysfs/"
#define H1_T410 H1_FIX "t410"

/* Run "$T4_BIN <args> 2>&1" and capture its output into out (truncated to
 * cap); returns the exit code, or -1 when T4_BIN is not set. */
int h1_run_cli(const char *args, char *out, size_t cap);

#endif
