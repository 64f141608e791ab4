/* source.c - where the PMUs of a subcommand come from: the real sysfs, a
 * fixture tree (--sysfs-root DIR), a simulated Tegra410 (--sim[=SEED]), or
 * both: the simulator behind a tree of another kernel's sysfs layout, so
 * that which PMUs and encodings t410trace picks on that layout are
 * recorded end to end. Shared by record and list so both accept the same
 * options the same way.
 */
#include "cli.h"
#include "util/util.h"

#include <errno.h>

int cli_source_set_sim(const char *sub, struct cli_source *s, const char *arg)
{
	s->sim = true;
	if (arg && t4_parse_u64(arg, &s->seed) < 0)
		return cli_usage_error(sub, "--sim=%s: the seed must be a number", arg);
	return 0;
}

/* --sim --sysfs-root DIR: DIR's Tegra410 PMUs, read from the simulator. */
static int attach(struct cli_source *s)
{
	char layout[512];

	if (t4_sim_attach(s->simulator, &s->pmus) > 0)
		return 0;
	return t4_err(ENOENT, "%s: no Tegra410 PMU for the simulator to back (sysfs layout: %s)",
		      s->sysfs_root, t4_pmus_layout(&s->pmus, layout, sizeof(layout)));
}

int cli_source_open(struct cli_source *s)
{
	const char *root = s->sysfs_root;
	int rc;

	if (s->sim) {
		struct t4_sim_opts o = {
			.seed = s->seed,
			.drift_ppm = s->drift_set ? s->drift_ppm : T4_SIM_DRIFT_PPM,
			.wander_ppm = s->wander_ppm,
			.epoch_ns = s->epoch_ns,
		};
		rc = t4_sim_create_opts(&s->simulator, &o);
		if (rc < 0)
			return rc;
		if (!root)
			root = t4_sim_root(s->simulator);
	}
	rc = t4_pmus_discover(&s->pmus, root);
	return rc < 0 || !s->sim || !s->sysfs_root ? rc : attach(s);
}

void cli_source_close(struct cli_source *s)
{
	t4_pmus_free(&s->pmus);
	t4_sim_free(s->simulator);
	s->simulator = NULL;
}
