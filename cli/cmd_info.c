/* cmd_info.c - `t410trace info FILE|- [--json]`: describe a recorded log.
 *
 * Reads the whole log once into the decoder's index (decode/index.c:
 * bounded memory, only the metadata tables and per-event totals are kept,
 * every trigger is just counted) and prints either an aligned report or one
 * JSON object: session, domains, every event with its total and average
 * rate, bookmarks with the time they were set, damage. Damage is reported, not
 * fatal: the exit code is 0 whenever the file is a log at all, 2 when it
 * cannot be opened or is not a log, 1 for an I/O error while reading.
 * A domain or event described again, otherwise, keeps its first description
 * and its later counts are in no total, and a bookmark ID its first name
 * (decode/index.c, said); the copies a
 * writer repeats in later chunks (FORMAT.md 4.8) count only as copies,
 * and as "restored" where they stand in for a packet damage lost. A file
 * that holds two recordings is described up to the second, with a warning
 * saying where it starts.
 */
#include "cli.h"
#include "decode/decode.h"
#include "packets/packets.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_KEPT_WARNINGS 20

struct info {
	const char *path;
	bool opened; /* the file is a log: later errors are read errors */
	struct t4_index *ix;
	uint64_t n_warnings;
	char warnings[MAX_KEPT_WARNINGS][200];
	struct t4_reader_stats st;
};

static void on_warning(void *ud, uint64_t offset, const char *msg)
{
	struct info *in = ud;

	(void)offset;
	t4_warn("%s: %s", in->path, msg);
	if (in->ix) /* a damage epoch: the time of what it took is no domain's */
		t4_index_damage(in->ix);
	if (in->n_warnings < MAX_KEPT_WARNINGS)
		snprintf(in->warnings[in->n_warnings], sizeof(in->warnings[0]), "%s", msg);
	in->n_warnings++;
}

static int read_log(struct info *in)
{
	struct t4_reader *r;
	struct t4_packet *p = malloc(sizeof(*p));
	int rc;

	if (!p)
		return t4_err(ENOMEM, "out of memory");
	if ((rc = t4_index_new(&in->ix)) < 0 ||
	    (rc = t4_reader_open(&r, in->path, on_warning, in)) < 0) {
		free(p);
		return rc;
	}
	in->opened = true;
	while ((rc = t4_reader_next(r, p)) > 0)
		if ((rc = t4_index_add(in->ix, p)) < 0)
			break;
	t4_reader_stats(r, &in->st);
	t4_reader_close(r);
	free(p);
	if (in->st.next_recording) {
		char note[T4_READER_NOTE_MAX];
		on_warning(in, in->st.next_recording, t4_reader_recording_note(
				   in->path, &in->st, "info", note, sizeof(note)));
	}
	return rc;
}

/* ---- derived numbers ------------------------------------------------- */

/* A scheduler's IDs run from first to last without repeats, with gaps
 * only where its reference packets report overruns (grid IDs: a grid point
 * it missed is a gap; docs/FORMAT.md 6); logs before the grid IDs counted
 * triggers, so theirs have no gaps at all. */
static bool sched_contiguous(const struct t4_index_sched *s)
{
	uint64_t span = s->last - s->first + 1;

	return s->refs == span || s->refs + s->overruns - s->first_overruns == span;
}

/* Every scheduler's IDs are contiguous, and every reference packet is
 * some scheduler's. */
static bool contiguous(const struct info *in)
{
	const struct t4_index_counts *c = t4_index_counts(in->ix);
	uint64_t tracked = 0;

	for (size_t i = 0; i < t4_index_n_scheds(in->ix); i++) {
		const struct t4_index_sched *s = t4_index_sched_at(in->ix, i);
		if (!sched_contiguous(s))
			return false;
		tracked += s->refs;
	}
	return c->refs && tracked == c->refs;
}

/* Trigger range over every scheduler. */
static void trigger_range(const struct info *in, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < t4_index_n_scheds(in->ix); i++) {
		const struct t4_index_sched *s = t4_index_sched_at(in->ix, i);
		if (s->first < *lo)
			*lo = s->first;
		if (s->last > *hi)
			*hi = s->last;
	}
}

static double ratio(const struct info *in)
{
	return in->st.file_bytes ? (double)in->st.raw_bytes / (double)in->st.file_bytes : 0;
}

static double bytes_per_value(const struct info *in)
{
	uint64_t v = t4_index_counts(in->ix)->values;
	return v ? (double)in->st.file_bytes / (double)v : 0;
}

/* An event's total over the log per second of the time its counts cover
 * (the domain's span but for what damage took: elapsed_ns, as decode's
 * rates; NaN when unknown, and for a gauge: its total is its last level,
 * and a level per second means nothing). */
static double rate_of(const struct t4_index_domain *d, uint32_t i)
{
	if (d->rets < 2 || !d->elapsed_ns || (d->gauges >> i & 1))
		return NAN;
	return (double)d->totals[i] / ((double)d->elapsed_ns / 1e9);
}

static const char *iso_time(uint64_t ns, char *buf, size_t cap)
{
	time_t s = (time_t)(ns / 1000000000u);
	struct tm tm;
	char date[40];

	if (!gmtime_r(&s, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(date, sizeof(date), "?");
	snprintf(buf, cap, "%s.%09" PRIu64 "Z", date, ns % 1000000000u);
	return buf;
}

/* ---- JSON ------------------------------------------------------------ */

static void jkey_u64(const char *k, uint64_t v)
{
	printf("\"%s\": %" PRIu64 ", ", k, v);
}

static void jkey_str(const char *k, const char *v)
{
	printf("\"%s\": ", k);
	t4_json_str(stdout, v);
	printf(", ");
}

static void jkey_f64(const char *k, double v, const char *sep)
{
	if (isfinite(v)) /* JSON has no NaN or infinity */
		printf("\"%s\": %.17g%s", k, v, sep);
	else
		printf("\"%s\": null%s", k, sep);
}

/* What the counters count: a command's tasks, -p/-t's threads or the
 * system, per kind (record's closing table says the same). */
static const char *counted(const struct info *in, char *buf, size_t cap)
{
	if (cli_stat_scope(in->ix, buf, cap) < 0)
		snprintf(buf, cap, "?");
	else if (!buf[0])
		snprintf(buf, cap, "(no events)");
	return buf;
}

static void json_session(const struct info *in)
{
	const struct t4_session_pkt *s = t4_index_session(in->ix);
	char t[512];

	if (!s) {
		printf("\"session\": null, ");
		return;
	}
	printf("\"session\": {");
	jkey_str("host", s->host);
	jkey_str("kernel", s->kernel);
	jkey_str("version", s->version);
	jkey_str("start", iso_time(s->start_real_ns, t, sizeof(t)));
	jkey_u64("start_real_ns", s->start_real_ns);
	jkey_u64("start_ref_ns", s->start_ref_ns);
	jkey_u64("period_ns", s->period_ns);
	jkey_str("cmdline", s->cmdline);
	printf("\"session_id\": \"%016" PRIx64 "\", ", s->session_id);
	jkey_str("trigger_path", (s->flags & T4_SESSION_BPF_TRIGGER) ? "bpf" : "user");
	jkey_str("ref_clock", t4_ref_clock_name(s->ref_clock));
	jkey_str("counts", counted(in, t, sizeof(t)));
	printf("\"simulated\": %s}, ", (s->flags & T4_SESSION_SIMULATED) ? "true" : "false");
}

/* The host packets (FORMAT.md 4.5b): the job, then the clock's sync. */
static void json_host(const struct info *in)
{
	const struct t4_index_host *h = t4_index_host(in->ix);

	if (!h) {
		printf("\"job\": null, \"clock_sync\": null, ");
		return;
	}
	printf("\"job\": {");
	jkey_str("id", h->first.job_id);
	jkey_str("step", h->first.step);
	jkey_str("nodelist", h->first.nodelist);
	jkey_str("host", h->first.host);
	printf("\"rank\": %d}, ", h->first.rank);
	printf("\"clock_sync\": {");
	jkey_u64("samples", h->samples);
	jkey_u64("known", h->known);
	jkey_u64("unsynchronised", h->unsynced);
	jkey_u64("worst_maxerror_us", h->worst_maxerror_us);
	jkey_u64("worst_esterror_us", h->worst_esterror_us);
	printf("\"synchronised\": %s}, ",
	       !h->known ? "null" : h->unsynced ? "false" : "true");
}

static void json_events(const struct info *in, const struct t4_index_domain *d)
{
	char tot[48];

	printf("\"events\": [");
	for (uint32_t i = 0, n = 0; i < T4_MAX_COUNTERS && (i < d->n_counts || n < d->n_events);
	     i++) {
		const struct t4_event_pkt *e = t4_index_event(in->ix, d->d.domain_id, i);
		if (!e && i >= d->n_counts)
			continue;
		printf("%s{", n++ ? ", " : "");
		jkey_u64("index", i);
		if (e) {
			jkey_str("pmu", e->pmu);
			jkey_str("name", e->name);
			jkey_str("spec", e->spec);
			jkey_str("unit", e->unit);
			/* what it counted: a command's tasks, -p/-t's, the system */
			jkey_str("counts", (e->flags & T4_EV_INHERIT) ? "task_and_children"
					   : (e->flags & T4_EV_TASK) ? "task" : "system");
			jkey_u64("perf_type", e->perf_type);
			printf("\"config\": \"0x%" PRIx64 "\", \"config1\": \"0x%" PRIx64 "\", "
			       "\"config2\": \"0x%" PRIx64 "\", ", e->config, e->config1, e->config2);
			jkey_f64("scale", e->scale, ", ");
		}
		printf("\"total\": %s, ", t4_u128_str(d->totals[i], tot, sizeof(tot)));
		jkey_f64("rate_per_s", rate_of(d, i), "}");
	}
	printf("]");
}

static void json_domains(const struct info *in)
{
	printf("\"domains\": [");
	for (size_t i = 0; i < t4_index_n_domains(in->ix); i++) {
		const struct t4_index_domain *d = t4_index_domain_at(in->ix, i);
		struct t4_index_answers a;
		t4_index_answers(in->ix, d, &a);
		printf("%s{", i ? ", " : "");
		jkey_u64("id", d->d.domain_id);
		jkey_str("name", d->d.name);
		jkey_str("kind", t4_domain_kind_name(d->d.kind));
		printf("\"cpu\": %d, \"clock_event\": %d, \"described\": %s, ", d->d.cpu,
		       d->d.clock_event, d->described ? "true" : "false");
		jkey_u64("nominal_hz", d->d.nominal_hz);
		jkey_u64("sched_id", d->d.sched_id);
		jkey_u64("n_events", d->n_events);
		printf("\"redescribed\": %s, ", d->redescribed ? "true" : "false");
		jkey_u64("redescribed_rets", d->rets_redescribed);
		jkey_u64("ret_packets", d->rets);
		jkey_u64("unanswered", a.unanswered);
		jkey_u64("duplicates", a.duplicates);
		if (a.after && d->rets) {
			jkey_u64("stopped_after_trigger", a.last_trigger);
			jkey_u64("unanswered_after", a.after);
		}
		jkey_u64("values", d->values);
		jkey_f64("duration_s", d->rets > 1 ? (double)(d->last_ns - d->first_ns) / 1e9 : NAN,
			 ", ");
		json_events(in, d);
		printf("}");
	}
	printf("], ");
}

static void json_bookmarks(const struct info *in)
{
	printf("\"bookmarks\": [");
	for (size_t i = 0; i < t4_index_n_bookmarks(in->ix); i++) {
		const struct t4_bookmark_pkt *b = t4_index_bookmark_at(in->ix, i);
		printf("%s{\"id\": %u, \"name\": ", i ? ", " : "", b->bookmark_id);
		t4_json_str(stdout, b->name);
		printf(", \"first_trigger\": %" PRIu64, b->first_trigger);
		if (t4_index_bookmark_holder(in->ix, b->bookmark_id) != b->bookmark_id)
			printf(", \"phases_of\": %u", t4_index_bookmark_holder(in->ix, b->bookmark_id));
		if (b->set_ns) { /* and from the first trigger, every output's zero */
			uint64_t origin = t4_index_origin_ns(in->ix);
			printf(", \"set_ns\": %" PRIu64 ", \"set_rel_ns\": %s%" PRIu64, b->set_ns,
			       b->set_ns < origin ? "-" : "",
			       b->set_ns < origin ? origin - b->set_ns : b->set_ns - origin);
		}
		printf("}");
	}
	printf("], ");
}

static void print_json(const struct info *in)
{
	const struct t4_reader_stats *st = &in->st;
	const struct t4_index_counts *c = t4_index_counts(in->ix);
	const struct t4_status_pkt *status = t4_index_status(in->ix);
	uint64_t lo, hi;

	trigger_range(in, &lo, &hi);
	printf("{");
	jkey_str("file", in->path);
	jkey_u64("triggers", c->refs);
	if (c->refs) {
		jkey_u64("first_trigger", lo);
		jkey_u64("last_trigger", hi);
	} else {
		printf("\"first_trigger\": null, \"last_trigger\": null, ");
	}
	printf("\"contiguous\": %s, ", contiguous(in) ? "true" : "false");
	jkey_u64("origin_ns", t4_index_origin_ns(in->ix)); /* every relative time's zero */
	jkey_u64("schedulers", t4_index_n_scheds(in->ix));
	jkey_u64("overruns", t4_index_overruns(in->ix));
	jkey_u64("dropped", status ? status->dropped : 0);
	printf("\"status_present\": %s, ", status ? "true" : "false");
	printf("\"closed\": %s, ", t4_index_closed(in->ix) ? "true" : "false");
	jkey_u64("read_failures", t4_index_read_failures(in->ix));
	jkey_u64("backwards_rets", c->backwards_rets);
	jkey_u64("multiplexed_rets", c->multiplexed_rets);
	jkey_u64("chunks", st->chunks);
	jkey_u64("packets", st->packets);
	jkey_u64("ref_packets", c->refs);
	jkey_u64("ret_packets", c->rets);
	jkey_u64("meta_packets", c->meta);
	jkey_u64("copies", c->copies);
	jkey_u64("restored", c->restored);
	jkey_u64("bookmark_packets", c->bookmark_packets);
	jkey_u64("values", c->values);
	jkey_u64("bytes", st->file_bytes);
	jkey_u64("raw_bytes", st->raw_bytes);
	printf("\"compression_ratio\": %.3f, \"bytes_per_value\": %.4f, ", ratio(in),
	       bytes_per_value(in));
	jkey_u64("damaged_chunks", st->damaged_chunks);
	printf("\"truncated\": %s, ", st->truncated ? "true" : "false");
	jkey_u64("unknown_packets", st->unknown_packets);
	jkey_u64("untracked_packets", c->untracked);
	jkey_u64("implausible_refs", c->implausible_refs);
	jkey_u64("redescribed", c->redescribed);
	jkey_u64("redescribed_rets", c->rets_redescribed);
	jkey_u64("bookmarks_renamed", c->bookmarks_renamed);
	jkey_u64("bookmarks_reused", c->bookmarks_reused);
	jkey_u64("duplicates", c->duplicates);
	jkey_u64("skipped_bytes", st->skipped_bytes);
	if (st->next_recording)
		jkey_u64("next_recording", st->next_recording);
	else
		printf("\"next_recording\": null, ");
	jkey_u64("cpu_slices", c->cpu_slices);
	jkey_u64("gpu_slices", c->gpu_slices);
	jkey_u64("tasks", c->tasks);
	jkey_u64("lost_events", status ? status->lost_events : 0);
	jkey_u64("bookmarks_refused", status ? status->bookmarks_refused : 0);
	jkey_u64("triggers_refused", status ? status->triggers_refused : 0);
	json_session(in);
	json_host(in);
	json_domains(in);
	json_bookmarks(in);
	printf("\"warnings\": [");
	for (uint64_t i = 0; i < in->n_warnings && i < MAX_KEPT_WARNINGS; i++) {
		printf("%s", i ? ", " : "");
		t4_json_str(stdout, in->warnings[i]);
	}
	printf("], \"warnings_total\": %" PRIu64 "}\n", in->n_warnings);
}

/* ---- human report ---------------------------------------------------- */

#define ROW "  %-16s "

/* Text from the log, safe for a terminal (util/text.c). */
static const char *tty(const char *s, char *buf, size_t cap)
{
	return t4_text(s, T4_TEXT_CONTROL, buf, cap);
}

/* A name from the log, made safe, then spaces to w terminal columns (not
 * bytes: a name with an accent or a CJK character stays in line). */
static void put_name(const char *s, int w)
{
	char buf[4 * T4_NAME_MAX];
	const char *t = tty(s, buf, sizeof(buf));

	printf("%s%*s", t, w > t4_text_cols(t) ? w - t4_text_cols(t) : 0, "");
}

static void human_session(const struct info *in)
{
	const struct t4_session_pkt *s = t4_index_session(in->ix);
	char t[64], d[32], safe[4 * T4_CMDLINE_MAX], scope[512];

	if (!s) {
		printf(ROW "(no session packet)\n", "session");
		return;
	}
	printf(ROW "%s%s\n", "host", tty(s->host, safe, sizeof(safe)),
	       (s->flags & T4_SESSION_SIMULATED) ? "  [SIMULATED]" : "");
	printf(ROW "%s\n", "kernel", tty(s->kernel, safe, sizeof(safe)));
	printf(ROW "t410trace %s\n", "recorded by", tty(s->version, safe, sizeof(safe)));
	printf(ROW "%s\n", "started", iso_time(s->start_real_ns, t, sizeof(t)));
	printf(ROW "%s\n", "period",
	       s->period_ns ? t4_fmt_duration(s->period_ns, d, sizeof(d)) : "none");
	printf(ROW "%s\n", "command", tty(s->cmdline, safe, sizeof(safe)));
	printf(ROW "%s\n", "counts", counted(in, scope, sizeof(scope)));
	printf(ROW "%s\n", "triggers by",
	       cli_trigger_path_name(s->flags & T4_SESSION_BPF_TRIGGER));
	printf(ROW "%s\n", "reference clock", t4_ref_clock_name(s->ref_clock));
	if (s->session_id)
		printf(ROW "%016" PRIx64 "\n", "session ID", s->session_id);
}

static void human_host(const struct info *in)
{
	const struct t4_index_host *h = t4_index_host(in->ix);
	/* each byte may become \xNN: a cut ID could show two jobs' alike */
	char a[4 * sizeof(h->first.job_id)], b[4 * sizeof(h->first.step)];
	char c[4 * sizeof(h->first.nodelist)], rank[16] = "-";

	if (!h)
		return;
	if (h->first.rank >= 0) /* -1: none (a batch script's own step), not a rank */
		snprintf(rank, sizeof(rank), "%d", h->first.rank);
	if (h->first.job_id[0] || h->first.rank >= 0)
		printf(ROW "%s, step %s, task rank %s, nodes %s\n", "job",
		       tty(h->first.job_id[0] ? h->first.job_id : "-", a, sizeof(a)),
		       tty(h->first.step[0] ? h->first.step : "-", b, sizeof(b)), rank,
		       tty(h->first.nodelist[0] ? h->first.nodelist : "-", c, sizeof(c)));
	if (!h->known)
		printf(ROW "unknown (the kernel's state was not readable)\n", "clock sync");
	else
		printf(ROW "%s%" PRIu64 " of %" PRIu64 " samples unsynchronised; maxerror up to %"
		       PRIu64 " us, esterror up to %" PRIu64 " us\n", "clock sync",
		       h->unsynced ? "NOT SYNCHRONISED: " : "synchronised: ", h->unsynced,
		       h->known, h->worst_maxerror_us, h->worst_esterror_us);
}

/* The domains that stopped answering before the end of the log: the
 * first one named, with where it stopped. */
static void human_stopped(const struct info *in)
{
	const struct t4_index_domain *first = NULL;
	struct t4_index_answers a, fa;
	char name[4 * T4_NAME_MAX];
	size_t n = 0;

	for (size_t i = 0; i < t4_index_n_domains(in->ix); i++) {
		const struct t4_index_domain *d = t4_index_domain_at(in->ix, i);
		t4_index_answers(in->ix, d, &a);
		if (!a.answered || !a.after)
			continue;
		if (!n++)
			first = d, fa = a;
	}
	if (n)
		printf(ROW "%zu domain%s: %s after trigger %" PRIu64 ", %" PRIu64 " trigger%s after"
		       " it unanswered%s\n", "stopped", n, n == 1 ? "" : "s",
		       tty(first->d.name, name, sizeof(name)), fa.last_trigger, fa.after,
		       fa.after == 1 ? "" : "s", n > 1 ? " (and others: UNANSWERED below)" : "");
}

static void human_domains(const struct info *in)
{
	size_t n = t4_index_n_domains(in->ix);

	printf("\ndomains (%zu):\n  %5s  %-28s %-11s %4s %5s %14s %6s %10s %8s\n", n, "ID",
	       "NAME", "KIND", "CPU", "CLOCK", "NOMINAL_HZ", "EVENTS", "RETURNS", "UNANSWERED");
	for (size_t i = 0; i < n; i++) {
		const struct t4_index_domain *d = t4_index_domain_at(in->ix, i);
		struct t4_index_answers a;
		t4_index_answers(in->ix, d, &a);
		printf("  %5u  ", d->d.domain_id);
		put_name(d->d.name, 28);
		printf(" %-11s %4d %5d %14" PRIu64 " %6u %10" PRIu64 " %8" PRIu64 "%s\n",
		       t4_domain_kind_name(d->d.kind), d->d.cpu,
		       d->d.clock_event, d->d.nominal_hz, d->n_events, d->rets,
		       a.unanswered,
		       !d->described ? "  (no domain packet)"
		       : d->redescribed ? "  (described again, otherwise: the first holds)" : "");
	}
}

/* The events a domain has a row for: its events, or its counts where a
 * return carried more counts than the log describes events. */
static uint32_t event_rows(const struct t4_index_domain *d)
{
	uint32_t n = d->n_counts > d->n_events ? d->n_counts : d->n_events;

	return n < T4_MAX_COUNTERS ? n : T4_MAX_COUNTERS;
}

/* The events table's PMU, EVENT and UNIT widths: its longest as printed
 * (escaped), so that long PMU names (nvidia_pcie_tgt_pmu_0_rc_0) leave
 * the columns aligned. */
static void event_widths(const struct info *in, int w[3])
{
	char buf[4 * T4_NAME_MAX];

	w[0] = 3, w[1] = 5, w[2] = 4; /* PMU, EVENT, UNIT */
	for (size_t k = 0; k < t4_index_n_domains(in->ix); k++) {
		const struct t4_index_domain *d = t4_index_domain_at(in->ix, k);
		for (uint32_t i = 0; i < event_rows(d); i++) {
			const struct t4_event_pkt *e = t4_index_event(in->ix, d->d.domain_id, i);
			const char *f[3] = { e ? e->pmu : "?", e ? e->name : "?", e ? e->unit : "" };
			for (int c = 0; c < 3; c++) {
				int len = t4_text_cols(tty(f[c], buf, sizeof(buf)));
				w[c] = len > w[c] ? len : w[c];
			}
		}
	}
}

/* Every event with its total over the log and its average rate. */
static void human_events(const struct info *in)
{
	char tot[48];
	size_t n = t4_index_n_domains(in->ix);
	int w[3];

	event_widths(in, w);
	printf("\nevents (total over the log, average rate over the time each domain's counts cover):\n"
	       "  %6s %4s  %-*s %-*s %-*s %22s %22s\n", "DOMAIN", "IDX", w[0], "PMU", w[1], "EVENT",
	       w[2], "UNIT", "TOTAL", "PER SECOND");
	for (size_t k = 0; k < n; k++) {
		const struct t4_index_domain *d = t4_index_domain_at(in->ix, k);
		for (uint32_t i = 0; i < event_rows(d); i++) {
			const struct t4_event_pkt *e = t4_index_event(in->ix, d->d.domain_id, i);
			double r = rate_of(d, i);
			printf("  %6u %4u  ", d->d.domain_id, i);
			put_name(e ? e->pmu : "?", w[0]);
			putchar(' ');
			put_name(e ? e->name : "?", w[1]);
			putchar(' ');
			put_name(e ? e->unit : "", w[2]);
			printf(" %22s ", t4_u128_str(d->totals[i], tot, sizeof(tot)));
			if (isfinite(r)) /* one format for the column: no exponents */
				printf("%22.3f\n", r);
			else
				printf("%22s\n", "-");
		}
	}
}

static void human_bookmarks(const struct info *in)
{
	size_t n = t4_index_n_bookmarks(in->ix);

	uint64_t origin = t4_index_origin_ns(in->ix);

	printf("\nbookmarks (%zu):\n", n);
	if (n)
		printf("  %6s  %-32s %13s  %s\n", "ID", "NAME", "FIRST_TRIGGER",
		       "SET (s from the first trigger)");
	for (size_t i = 0; i < n; i++) {
		const struct t4_bookmark_pkt *b = t4_index_bookmark_at(in->ix, i);
		printf("  %6u  ", b->bookmark_id);
		put_name(b->name, 32);
		printf(" %13" PRIu64, b->first_trigger);
		uint32_t holder = t4_index_bookmark_holder(in->ix, b->bookmark_id);
		if (b->set_ns && origin) /* negative: set before the first trigger */
			printf("  %.9f", b->set_ns < origin ? -(double)(origin - b->set_ns) / 1e9
						     : (double)(b->set_ns - origin) / 1e9);
		else
			printf("  %s", "-");
		if (holder != b->bookmark_id)
			printf("  (named as ID %u: its phases are ID %u's)", holder, holder);
		printf("\n");
	}
	if (t4_index_counts(in->ix)->bookmark_packets > n)
		printf("  ... %" PRIu64 " more bookmark packets not listed\n",
		       t4_index_counts(in->ix)->bookmark_packets - n);
}

static void print_human(const struct info *in)
{
	const struct t4_reader_stats *st = &in->st;
	const struct t4_index_counts *c = t4_index_counts(in->ix);
	const struct t4_status_pkt *status = t4_index_status(in->ix);
	bool closed = t4_index_closed(in->ix);
	char b1[32], b2[32], name[4 * PATH_MAX], note[160];
	uint64_t lo, hi;

	printf("%s\n", tty(in->path, name, sizeof(name))); /* a file name is any bytes */
	human_session(in);
	human_host(in);
	printf(ROW "%s on disk, %s raw (compression %.1fx)\n", "size",
	       t4_fmt_bytes(st->file_bytes, b1, sizeof(b1)),
	       t4_fmt_bytes(st->raw_bytes, b2, sizeof(b2)), ratio(in));
	printf(ROW "%" PRIu64 "\n", "chunks", st->chunks);
	printf(ROW "%" PRIu64 " (%" PRIu64 " reference, %" PRIu64 " return, %" PRIu64
	       " metadata)\n", "packets", st->packets, c->refs, c->rets, c->meta);
	trigger_range(in, &lo, &hi);
	if (c->refs)
		printf(ROW "%" PRIu64 " (IDs %" PRIu64 "..%" PRIu64 ", %s%s)\n", "triggers",
		       c->refs, lo, hi, contiguous(in) ? "contiguous" : "with gaps or repeats",
		       t4_index_n_scheds(in->ix) > 1 ? " per scheduler" : "");
	else
		printf(ROW "0\n", "triggers");
	printf(ROW "%" PRIu64 "%s\n", "overruns", t4_index_overruns(in->ix),
	       closed ? "" : status ? " (not closed: sum over triggers, or the last status packet's)"
			   : " (no status packet: sum over triggers)");
	printf(ROW "%" PRIu64 "%s\n", "dropped", status ? status->dropped : 0,
	       closed ? "" : status ? " (at least: the last status packet's, before the log's end)"
			   : " (no status packet: unknown)");
	printf(ROW "%" PRIu64 " (%.3f bytes each on disk)\n", "values", c->values,
	       bytes_per_value(in));
	printf(ROW "%" PRIu64 "%s\n", "read failures", t4_index_read_failures(in->ix),
	       closed ? "" : " (counted from return packets)");
	if (c->backwards_rets)
		printf(ROW "%" PRIu64 " return packet%s with a counter that went backwards (its "
		       "delta 0: those counts are lost)\n", "backwards", c->backwards_rets,
		       c->backwards_rets == 1 ? "" : "s");
	if (c->multiplexed_rets)
		printf(ROW "%" PRIu64 " return packet%s whose counters ran part of the time (time "
		       "running < enabled): counts as counted, not scaled\n", "multiplexed",
		       c->multiplexed_rets, c->multiplexed_rets == 1 ? "" : "s");
	printf(ROW "%s\n", "damage", t4_reader_damage_note(st, note, sizeof(note)));
	if (t4_index_closed(in->ix))
		printf(ROW "yes\n", "closed");
	else
		printf(ROW "no: %s\n", "closed", t4_index_unclosed_why());
	if (c->cpu_slices || c->gpu_slices || (status && status->lost_events))
		printf(ROW "%" PRIu64 " CPU slices, %" PRIu64 " GPU jobs, %" PRIu64 " threads named, "
		       "%" PRIu64 " events lost before the log\n", "activity", c->cpu_slices,
		       c->gpu_slices, c->tasks, status ? status->lost_events : 0);
	if (c->copies)
		printf(ROW "%" PRIu64 " of metadata repeated for damage recovery, not counted "
		       "above (%" PRIu64 " stood in for packets damage lost)\n", "copies",
		       c->copies, c->restored);
	if (st->next_recording)
		printf(ROW "another recording starts at offset %" PRIu64 " (not described "
		       "here)\n", "next recording", st->next_recording);
	if (status && status->bookmarks_refused)
		printf(ROW "%" PRIu64 " refused for lack of room (each answered with an error; "
		       "none in the log)\n", "bookmarks", status->bookmarks_refused);
	if (status && status->triggers_refused)
		printf(ROW "%" PRIu64 " of libt410trace's refused through the uprobe for lack "
		       "of room (each answered with an error; none fired)\n", "triggers",
		       status->triggers_refused);
	if (st->unknown_packets)
		printf(ROW "%" PRIu64 " of types this version does not know, skipped\n",
		       "unknown packets", st->unknown_packets);
	if (c->untracked)
		printf(ROW "%" PRIu64 " packets beyond the table limits, counted in the totals "
		       "only\n", "untracked", c->untracked);
	if (c->implausible_refs)
		printf(ROW "%" PRIu64 " reference packets whose trigger ID jumps further than "
		       "their time allows (damage), left out\n", "implausible", c->implausible_refs);
	if (c->redescribed)
		printf(ROW "%" PRIu64 " domains described again, otherwise: the first description"
		       " holds; %" PRIu64 " return packets after it in no total\n", "re-described",
		       c->redescribed, c->rets_redescribed);
	if (c->bookmarks_renamed)
		printf(ROW "%" PRIu64 " bookmark packets naming an ID otherwise than its first (one"
		       " ID per name): the first name holds, below too\n", "renamed",
		       c->bookmarks_renamed);
	if (c->bookmarks_reused)
		printf(ROW "%" PRIu64 " bookmark packets naming an ID as an earlier ID was named (one"
		       " ID per name): the first ID holds, the phases of both are its own\n",
		       "reused", c->bookmarks_reused);
	if (c->duplicates)
		printf(ROW "%" PRIu64 " reference and return packets of a trigger seen already (the"
		       " log holds them twice): one trigger, one answer\n", "duplicates",
		       c->duplicates);
	human_stopped(in);
	human_domains(in);
	human_events(in);
	human_bookmarks(in);
}

/* ---- entry ----------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: t410trace info FILE|- [--json]\n\n"
		   "Describe a recorded log ('-': read standard input): session, clock\n"
		   "domains, every event with its total and average rate, bookmarks with\n"
		   "the time each was set, triggers, overruns, drops, sizes, CPU/GPU\n"
		   "activity packets, and any damage found (damaged chunks are skipped with a\n"
		   "warning naming their byte offset). UNANSWERED: triggers of a domain's\n"
		   "scheduler without a return packet of it in the log (a monitor that\n"
		   "answered late, a packet dropped at a full ring: the next packet\n"
		   "carries their counts; lost to damage; or after the domain stopped\n"
		   "answering: the stopped line); a packet the log holds twice is one\n"
		   "trigger and one answer (duplicates).\n\n"
		   "  --json   print one JSON object instead of the report\n"
		   "  --help   this text\n\n"
		   "Exit status: 0 when FILE is a log (even a damaged one), 2 when it\n"
		   "cannot be opened or is not a t410trace log, 1 on a read error.\n");
}

static void info_free(struct info *in)
{
	t4_index_free(in->ix);
	free(in);
}

int cmd_info(int argc, char **argv)
{
	struct info *in;
	struct cli_outfile of;
	const char *path = NULL;
	bool json = false;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			static const char *const longs[] = { "json", "help" };

			return cli_unknown_option("info", argv[i], longs, T4_ARRAY_LEN(longs));
		} else if (path) {
			return cli_usage_error("info", "one FILE only ('%s' and '%s')", path,
					       argv[i]);
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return cli_usage_error("info", "missing FILE");
	if (cli_outfile_check(&of, path, NULL) < 0) { /* `info x.t4t >> x.t4t` */
		fprintf(stderr, "t410trace info: %s\n", t4_errmsg());
		return 2;
	}
	if (!(in = calloc(1, sizeof(*in)))) {
		fprintf(stderr, "t410trace info: out of memory\n");
		return 1;
	}
	in->path = path;
	rc = read_log(in);
	if (!in->opened) {
		fprintf(stderr, "t410trace info: %s\n", t4_errmsg());
		info_free(in);
		return t4_exit_code(rc);
	}
	if (json)
		print_json(in);
	else
		print_human(in);
	if (rc < 0)
		fprintf(stderr, "t410trace info: %s\n", t4_errmsg());
	info_free(in);
	return cli_stdout_done(rc < 0 ? 1 : 0);
}
