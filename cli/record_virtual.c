/* record_virtual.c - `t410trace record --sim --virtual`: the simulated
 * Tegra410 recorded in virtual time (sched/virtual.c), and record's
 * hidden knobs of the simulator (--sim-drift, --sim-wander, --sim-preempt,
 * for tests and demos; documented in docs/t410trace.1 and SIMULATOR.md).
 *
 * record parses the options and opens counters and the log as for a live
 * recording; this file checks what virtual time allows, writes the
 * metadata and the recording into record's metadata ring (one ring, so the
 * log is byte-identical for a seed), and prints the summary. The
 * simulator's epoch is then a fixed reference time instead of "now", and
 * every phase change of its workload is bookmarked.
 */
#include "cli.h"
#include "packets/packets.h"
#include "sched/sched.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define VIRTUAL_EPOCH_NS 100000000000ull /* the simulator's t = 0: 100 s */
#define PPM_MAX 100000

static int parse_ppm(const char *sub, const char *opt, const char *arg, uint32_t *out)
{
	uint64_t v;

	if (t4_parse_u64(arg, &v) < 0 || v > PPM_MAX)
		return cli_usage_error(sub, "%s %s: use 0-%d ppm", opt, arg, PPM_MAX);
	*out = (uint32_t)v;
	return 0;
}

static int parse_prob(const char *sub, const char *opt, const char *arg, double *out)
{
	char *end;
	double p = strtod(arg, &end);

	if (end == arg || *end || !(p >= 0 && p <= 1))
		return cli_usage_error(sub, "%s %s: use a probability in 0..1", opt, arg);
	*out = p;
	return 0;
}

int cli_virtual_option(const char *sub, int opt, const char *arg, struct cli_virtual *v,
		       struct cli_source *src)
{
	switch (opt) {
	case CLI_VIRTUAL:
		v->on = true;
		src->epoch_ns = VIRTUAL_EPOCH_NS;
		return 0;
	case CLI_SIM_DRIFT:
		src->drift_set = true;
		return parse_ppm(sub, "--sim-drift", arg, &src->drift_ppm);
	case CLI_SIM_WANDER:
		return parse_ppm(sub, "--sim-wander", arg, &src->wander_ppm);
	default:
		v->preempt_set = true;
		return parse_prob(sub, "--sim-preempt", arg, &v->preempt_prob);
	}
}

int cli_virtual_check(const char *sub, const struct cli_virtual *v, const struct cli_source *src,
		      const struct cli_virtual_live *live)
{
	if ((src->drift_set || src->wander_ppm) && !src->sim)
		return cli_usage_error(sub, "--sim-drift and --sim-wander need --sim");
	if (v->preempt_set && !v->on)
		return cli_usage_error(sub, "--sim-preempt needs --virtual");
	if (!v->on)
		return 0;
	if (!src->sim)
		return cli_usage_error(sub, "--virtual records the simulator only: add --sim");
	if (!live->duration_ns)
		return cli_usage_error(sub, "--virtual needs --duration (virtual time has no end of its own)");
	if (live->command)
		return cli_usage_error(sub, "--virtual runs no command: virtual time does not pass for it");
	if (live->paused || live->control)
		return cli_usage_error(sub, "--virtual takes no commands: drop --paused and --control");
	return 0;
}

int cli_virtual_record(const struct cli_virtual_run *run, struct t4_sched_status *st)
{
	struct t4_virtual_opts o = {
		.period_ns = run->period_ns,
		.duration_ns = run->duration_ns,
		.per_socket = run->per_socket,
		.bookmark = run->bookmark,
		.phase_bookmarks = true,
		.seed = run->seed,
		.preempt_prob = run->v->preempt_prob,
		.domains = run->domains,
		.ring = run->ring,
		.stop = run->stop,
		.log = run->log,
		.on_trigger = run->on_trigger,
		.progress_ud = run->ud,
	};
	struct t4_session_pkt *s = malloc(sizeof(*s));
	int rc;

	if (!s)
		return t4_err(ENOMEM, "out of memory");
	rc = t4_virtual_session(&o, run->cmdline, s);
	if (rc >= 0)
		rc = t4_put_metadata(run->ring, s, run->domains, run->per_socket);
	free(s);
	return rc < 0 ? rc : t4_virtual_record(&o, st);
}

void cli_virtual_final(const struct t4_sched_status *st, struct t4_status_pkt *fin)
{
	memset(fin, 0, sizeof(*fin));
	fin->triggers = st->triggers;
	fin->overruns = st->overruns;
	fin->dropped = st->dropped;
	fin->read_failures = st->read_failures;
	fin->ref_ns = st->end_ref_ns;
}

void cli_virtual_summary(const char *output, const struct t4_domain_set *ds,
			 const struct t4_sched_status *st, const struct t4_log_stats *ls,
			 double seconds)
{
	char d1[16], d2[16], d3[16], d4[16], d5[16], b1[32];
	char safe[4 * 4096]; /* the name as typed, on one line */
	uint64_t grid = st->schedulers ? (st->triggers + st->overruns) / st->schedulers : 0;
	size_t counters = 0;

	for (size_t i = 0; i < ds->n; i++)
		counters += ds->v[i].n;
	fprintf(stderr, "t410trace: SIMULATED Tegra410 in VIRTUAL time: %llu triggers (%llu per "
			"scheduler x %u) over %s of virtual time (period %s), generated in %.2f s; "
			"%llu dropped and %llu unanswered on purpose\n",
		(unsigned long long)st->triggers, (unsigned long long)grid, st->schedulers,
		t4_fmt_duration(grid > 1 ? (grid - 1) * st->period_ns : 0, d1, sizeof(d1)),
		t4_fmt_duration(st->period_ns, d2, sizeof(d2)), seconds,
		(unsigned long long)st->dropped, (unsigned long long)st->unanswered);
	fprintf(stderr, "t410trace: %zu domain%s, %zu counter%s; trigger to sample p50 %s "
			"p99 %s; read window p50 %s p99 %s\n",
		ds->n, ds->n == 1 ? "" : "s", counters, counters == 1 ? "" : "s", t4_fmt_duration(st->skew_p50, d3, sizeof(d3)),
		t4_fmt_duration(st->skew_p99, d4, sizeof(d4)),
		t4_fmt_duration(st->window_p50, d5, sizeof(d5)),
		t4_fmt_duration(st->window_p99, d1, sizeof(d1)));
	fprintf(stderr, "t410trace: wrote %s: %s (%.2f bytes/value)\n",
		t4_text(output, T4_TEXT_CONTROL, safe, sizeof(safe)),
		t4_fmt_bytes(ls->file_bytes, b1, sizeof(b1)),
		st->values ? (double)ls->file_bytes / (double)st->values : 0.0);
}
