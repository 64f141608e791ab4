/* env.c - the environment, read by one rule.
 *
 * Every variable t410trace and libt410trace read goes through t4_env(): a
 * variable set to the empty string counts as unset, as `NAME= cmd` is how a
 * shell drops one for one run (TMPDIR, T410TRACE_CONTROL, the launchers'
 * SLURM_* and OMPI_*, T410TRACE_HOLD_MAX, T410TRACE_TRACEFS). Its own file
 * because libt410trace links it too (and nothing else of util's parsing).
 */
#include "util.h"

#include <stdlib.h>
#include <string.h>

const char *t4_env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

bool t4_env_on(const char *name)
{
	const char *v = t4_env(name);

	return v && strcmp(v, "0");
}
