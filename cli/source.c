/* source.c - where the PMUs of a subcommand come from: the real sysfs, a
 * fixture tree (--sysfs-root DIR) or a simulated Tegra410 (--sim[=SEED]).
 * Shared by record and list so both accept the same options the same way.
 */
#include "cli.h"
#include "util/util.h"

int cli_source_set_sim(const char *sub, struct cli_source *s, const char *arg)
{
	s->sim = true;
	if (arg && t4_parse_u64(arg, &s->seed) < 0)
		return cli_usage_error(sub, "--sim=%s: the seed must be a number", arg);
	return 0;
}

int cli_source_check(const char *sub, const struct cli_source *s)
{
	if (s->sim && s->sysfs_root)
		return cli_usage_error(sub, "--sim and --sysfs-root exclude each other");
	return 0;
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
		root = t4_sim_root(s->simulator);
	}
	return t4_pmus_discover(&s->pmus, root);
}

void cli_source_close(struct cli_source *s)
{
	t4_pmus_free(&s->pmus);
	t4_sim_free(s->simulator);
	s->simulator = NULL;
}
