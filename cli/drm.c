/* drm.c - record's DRM source: --proc-root and --no-drm, when the source
 * runs, the workload it watches, and its summary line. The source itself
 * is collector/drm_src.c; this is the glue only, kept out of cmd_record.c.
 *
 * On by default. The workload: the processes of -p/-t's threads and their
 * descendants, or COMMAND's process tree, or else every process under the
 * proc root. --sim leaves it out (a simulated Tegra410 has no GPU clients)
 * unless --proc-root names a tree to read. A log gets a drm domain only
 * once a client is found.
 */
#include "cli.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_drm_open(struct cli_drm *c, bool sim, bool has_command,
		 const struct cli_target *target, struct t4_domain_set *ds)
{
	struct t4_drm_opts o = { .proc_root = c->proc_root };
	int rc;

	if (c->off || (sim && !c->proc_root))
		return 0;
	if ((rc = cli_target_processes(target, c->proc_root, &c->roots, &c->n_roots)) < 0)
		return rc;
	o.every_process = !has_command && !c->n_roots;
	o.roots = c->roots;
	o.n_roots = c->n_roots;
	if ((rc = t4_drm_open(&c->src, &o)) < 0)
		return rc;
	return t4_drm_attach(c->src, ds);
}

int cli_drm_start(struct cli_drm *c)
{
	return c->src ? t4_drm_start(c->src) : 0;
}

int cli_drm_workload(struct cli_drm *c, int pid)
{
	return c->src && pid > 0 ? t4_drm_add_root(c->src, pid) : 0;
}

void cli_drm_stop(struct cli_drm *c)
{
	if (c->src)
		t4_drm_stop(c->src);
}

void cli_drm_summary(struct cli_drm *c)
{
	struct t4_drm_stats st;

	if (!c->src)
		return;
	t4_drm_stats(c->src, &st);
	fprintf(stderr, "t410trace: DRM: %llu client%s, %llu events",
		(unsigned long long)st.clients, st.clients == 1 ? "" : "s",
		(unsigned long long)st.events);
	if (st.clients_no_id)
		fprintf(stderr, " (%llu without drm-client-id: counted per fd, so shared "
				"fds may count twice)", (unsigned long long)st.clients_no_id);
	if (st.events_left_out)
		fprintf(stderr, ", %llu left out (tables full or names too long)",
			(unsigned long long)st.events_left_out);
	if (st.read_failures)
		fprintf(stderr, ", %llu failed reads", (unsigned long long)st.read_failures);
	if (st.too_large)
		fprintf(stderr, ", %llu read%s of fdinfo files over %u KiB refused (first: %s)",
			(unsigned long long)st.too_large, st.too_large == 1 ? "" : "s",
			T4_DRM_FDINFO_MAX >> 10, st.first_too_large);
	if (st.bad_lines)
		fprintf(stderr, ", %llu malformed fdinfo line%s skipped (first: %s)",
			(unsigned long long)st.bad_lines, st.bad_lines == 1 ? "" : "s",
			st.first_bad);
	fputc('\n', stderr);
}

void cli_drm_close(struct cli_drm *c)
{
	t4_drm_free(c->src);
	c->src = NULL;
	free(c->roots);
	c->roots = NULL;
}
