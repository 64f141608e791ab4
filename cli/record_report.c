/* record_report.c - what `t410trace record` tells the user on stderr about
 * a live recording: where triggers fire (and why not in the kernel, when
 * --trigger auto fell back), the progress line, and the summary at the
 * end. cmd_record.c records; record_virtual.c reports virtual time.
 *
 * Everything here reads the scheduler's and the log's statistics and
 * prints; nothing changes the recording.
 */
#include "cli.h"
#include "sched/sched.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

const char *cli_trigger_path_name(bool bpf)
{
	return bpf ? "BPF timers in the kernel" : "user-space threads";
}

void cli_record_path_notice(struct t4_sched *s, bool quiet)
{
	const char *why = t4_sched_path_note(s), *activity = t4_sched_activity_note(s);
	struct t4_sched_status st;

	if (quiet)
		return;
	if (why[0])
		fprintf(stderr, "t410trace: notice: triggers fire in user space: %s\n", why);
	if (!activity[0])
		return;
	t4_sched_status(s, &st);
	fprintf(stderr, "t410trace: notice: %s; %s are recorded\n", activity,
		st.activity ? "CPU activity and counters" : "counters");
}

/* The progress line's end, the same live and virtual: what the log holds. */
static void progress_tail(struct t4_log *log, bool final)
{
	struct t4_log_stats ls;
	char b1[32];

	t4_log_stats(log, &ls);
	fprintf(stderr, "  drops %llu  written %s  ratio %.1fx \033[K%s",
		(unsigned long long)ls.dropped, t4_fmt_bytes(ls.file_bytes, b1, sizeof(b1)),
		ls.file_bytes ? (double)ls.raw_bytes / (double)ls.file_bytes : 0.0,
		final ? "\n" : "");
}

void cli_record_progress(struct t4_sched *s, struct t4_log *log, uint64_t start_ref_ns,
			 bool final)
{
	struct t4_sched_status st;
	double el = (t4_mono_raw_ns() - start_ref_ns) / 1e9;

	t4_sched_status(s, &st);
	fprintf(stderr, "\r%6.1fs  triggers %llu  overruns %llu", el,
		(unsigned long long)st.triggers, (unsigned long long)st.overruns);
	progress_tail(log, final);
}

void cli_record_progress_virtual(uint64_t triggers, uint64_t period_ns, uint64_t duration_ns,
				 struct t4_log *log, bool final)
{
	double at = triggers > 1 ? (double)(triggers - 1) * (double)period_ns / 1e9 : 0;
	char d[16];

	fprintf(stderr, "\r%6.1fs of %s virtual  triggers %llu", at,
		t4_fmt_duration(duration_ns, d, sizeof(d)), (unsigned long long)triggers);
	progress_tail(log, final);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Triggers, overruns and what else went missing. Returns the triggers of
 * one scheduler. */
static uint64_t summary_counts(const struct cli_record_summary *in,
			       const struct t4_sched_status *st, const struct t4_log_stats *ls)
{
	uint32_t nsched = st->schedulers ? st->schedulers : 1;
	uint64_t grid = st->triggers / nsched;
	char per[64] = "", d[16];

	if (nsched > 1)
		snprintf(per, sizeof(per), " (%llu per scheduler x %u)", (unsigned long long)grid, nsched);
	fprintf(stderr, "t410trace: %s%llu triggers%s in %.2f s (period %s), %llu overruns, "
			"%llu dropped, %llu read failures, %llu unanswered\n",
		in->simulated ? "SIMULATED Tegra410: " : "",
		(unsigned long long)st->triggers, per, in->seconds,
		t4_fmt_duration(in->period_ns, d, sizeof(d)),
		(unsigned long long)st->overruns, (unsigned long long)ls->dropped,
		(unsigned long long)st->read_failures, (unsigned long long)st->unanswered);
	if (st->read_failures) { /* a count alone says nothing of why */
		char safe[4 * T4_NAME_MAX];
		fprintf(stderr, "t410trace: first read failure: %s at trigger %llu: %s (its counts"
				" are in the domain's next sample)\n",
			t4_text(st->first_failure_domain, T4_TEXT_CONTROL, safe, sizeof(safe)),
			(unsigned long long)st->first_failure_trigger,
			strerror(st->first_failure_err));
	}
	return grid;
}

/* The trigger path, how close to the grid the samples were, and where
 * they were not. */
static void summary_timing(const struct cli_record_summary *in,
			   const struct t4_sched_status *st, uint64_t grid)
{
	char d[6][16];
	size_t counters = 0, domains = 0;

	/* domains that counted something: the DRM source's has no counter
	 * of its own until it finds a client (its own line says) */
	for (size_t i = 0; i < in->domains->n; i++) {
		counters += in->domains->v[i].n;
		domains += in->domains->v[i].n > 0;
	}
	fprintf(stderr, "t410trace: triggers fired by %s; reference clock %s; CPU %.1f us/trigger\n",
		cli_trigger_path_name(st->bpf), t4_ref_clock_name(st->ref_clock),
		grid ? cpu_seconds() * 1e6 / (double)grid : 0.0);
	fprintf(stderr, "t410trace: %zu domain%s, %zu counter%s; trigger to sample p50 %s p99 %s "
			"(%.1f%% of the period); spread between CPUs p50 %s p99 %s; "
			"read window p50 %s p99 %s\n",
		domains, domains == 1 ? "" : "s", counters, counters == 1 ? "" : "s", t4_fmt_duration(st->skew_p50, d[0], sizeof(d[0])),
		t4_fmt_duration(st->skew_p99, d[1], sizeof(d[1])),
		100.0 * (double)st->skew_p99 / (double)in->period_ns,
		t4_fmt_duration(st->spread_p50, d[2], sizeof(d[2])),
		t4_fmt_duration(st->spread_p99, d[3], sizeof(d[3])),
		t4_fmt_duration(st->window_p50, d[4], sizeof(d[4])),
		t4_fmt_duration(st->window_p99, d[5], sizeof(d[5])));
	if (st->lost)
		fprintf(stderr, "t410trace: %llu records did not fit the kernel's ring buffer "
				"(counted as overruns or unanswered triggers; the next record "
				"covers them)\n", (unsigned long long)st->lost);
	if (st->off_cpu)
		fprintf(stderr, "t410trace: %llu monitor reads ran away from their PMU's CPU "
				"(cpuset?): slower reads, more skew\n", (unsigned long long)st->off_cpu);
}

void cli_record_activity_summary(const struct t4_sched_status *st)
{
	if (!st->activity)
		return;
	fprintf(stderr, "t410trace: activity: %llu CPU slices, %llu thread names, %llu GPU jobs "
			"in %llu contexts; %llu bookmarks and %llu triggers through the uprobe; "
			"%llu events lost\n",
		(unsigned long long)st->cpu_slices, (unsigned long long)st->tasks,
		(unsigned long long)st->gpu_jobs, (unsigned long long)st->gpu_contexts,
		(unsigned long long)st->probe_bookmarks, (unsigned long long)st->probe_triggers,
		(unsigned long long)st->activity_lost);
	if (st->probe_refused)
		fprintf(stderr, "t410trace: %llu commands through the uprobe refused (first: %s)\n",
			(unsigned long long)st->probe_refused, st->probe_refusal);
}

void cli_record_refusals(const struct t4_sched_status *st)
{
	if (st->bookmarks_refused)
		fprintf(stderr, "t410trace: %llu bookmark commands refused for lack of room (each "
				"caller got an error; counted in the log)\n",
			(unsigned long long)st->bookmarks_refused);
	if (st->triggers_refused)
		fprintf(stderr, "t410trace: %llu trigger calls through the uprobe refused for lack "
				"of room (each caller got an error; counted in the log)\n",
			(unsigned long long)st->triggers_refused);
}

const char *cli_record_fate(const struct cli_output *out)
{
	if (out->to_stdout)
		return "got nothing";
	return out->exists ? "left as it was" : "not made";
}

void cli_record_nothing_kept(const char *output, const char *fate)
{
	char safe[4 * 4096]; /* the name as typed, on one line */

	fprintf(stderr, "t410trace: the log stopped before its first chunk was on disk: "
			"nothing recorded (%s %s)\n",
		t4_text(output, T4_TEXT_CONTROL, safe, sizeof(safe)), fate);
}

void cli_record_summary(const struct cli_record_summary *in, const struct t4_sched_status *st,
			const struct t4_log_stats *ls)
{
	char b1[32], b2[32], safe[4 * 4096]; /* the name as typed, on one line */

	summary_timing(in, st, summary_counts(in, st, ls));
	if (in->nothing_kept) { /* no "info FILE": it is not this recording */
		cli_record_nothing_kept(in->output, in->fate);
		return;
	}
	fprintf(stderr, "t410trace: %s %s: %s (raw %s, ratio %.1fx, %.2f bytes/value)%s\n",
		in->log_failed ? "the log stopped early;" : "wrote",
		t4_text(in->output, T4_TEXT_CONTROL, safe, sizeof(safe)),
		t4_fmt_bytes(ls->file_bytes, b1, sizeof(b1)),
		t4_fmt_bytes(ls->raw_bytes, b2, sizeof(b2)),
		ls->file_bytes ? (double)ls->raw_bytes / (double)ls->file_bytes : 0.0,
		st->values ? (double)ls->file_bytes / (double)st->values : 0.0,
		in->log_failed ? ", all of it readable" : "");
}
