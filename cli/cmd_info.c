/* cmd_info.c - `t410trace info FILE [--json]`: describe a recorded log.
 *
 * Reads the whole log once through the packet reader (bounded memory: only
 * the metadata tables are kept, every trigger is just counted) and prints
 * either an aligned report or one JSON object. Damage is reported, not
 * fatal: the exit code is 0 whenever the file is a log at all, 2 when it
 * cannot be opened or is not a log, 1 for an I/O error while reading.
 * Metadata packets repeated in the log replace the earlier copy with the
 * same key (domain ID, domain + event index, bookmark ID).
 */
#include "cli.h"
#include "packets/packets.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_KEPT_WARNINGS 20
#define MAX_SCHEDULERS 64

struct sched_ids {
	uint64_t refs, min, max;
};

struct dom_info {
	struct t4_domain_pkt d;
	bool described;   /* a domain packet was seen */
	uint64_t events;  /* event packets of this domain */
	uint64_t rets;    /* return packets */
	uint64_t values;  /* counter values in them */
};

struct info {
	const char *path;
	bool opened; /* the file is a log: later errors are read errors */
	bool have_session, have_status;
	struct t4_session_pkt session;
	struct t4_status_pkt status;
	struct dom_info *doms;
	size_t n_doms, cap_doms;
	struct t4_event_pkt *events;
	size_t n_events, cap_events;
	struct t4_bookmark_pkt *bms;
	size_t n_bms, cap_bms;
	/* direct indexes (position + 1, 0 = none), so a hostile log with
	 * millions of IDs costs O(1) per packet; IDs past them go untracked */
	int32_t *dom_slot, *ev_slot, *bm_slot;
	struct dom_info untracked_dom;
	uint64_t untracked;
	uint64_t refs, ref_overruns, min_trig, max_trig;
	/* per scheduler (--per-socket runs several, each with its own IDs) */
	struct sched_ids sched[MAX_SCHEDULERS];
	uint32_t n_sched;
	uint64_t rets, values, read_failed, meta;
	uint64_t n_warnings;
	char warnings[MAX_KEPT_WARNINGS][200];
	struct t4_reader_stats st;
};

static const char *const kind_names[] = {
	[T4_DOM_OTHER] = "other",       [T4_DOM_SOFTWARE] = "software",
	[T4_DOM_TSC] = "tsc",           [T4_DOM_UCF] = "ucf",
	[T4_DOM_PCIE] = "pcie",         [T4_DOM_PCIE_TGT] = "pcie_tgt",
	[T4_DOM_CMEM_LAT] = "cmem_lat", [T4_DOM_NVLINK_C2C] = "nvlink_c2c",
	[T4_DOM_NVCLINK] = "nvclink",   [T4_DOM_NVDLINK] = "nvdlink",
	[T4_DOM_TRACEPOINT] = "tracepoint",
};

static const char *kind_name(uint32_t k)
{
	return k < T4_ARRAY_LEN(kind_names) && kind_names[k] ? kind_names[k] : "unknown";
}

/* Make room for one more element of a growing array. */
static int vec_room(void **v, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*v, ncap * elem);
	if (!p)
		return t4_err(ENOMEM, "out of memory for the metadata tables");
	*v = p;
	*cap = ncap;
	return 0;
}

#define MAX_IDS 65536u         /* domain and bookmark IDs listed */
#define MAX_EVENT_DOMAINS 4096u /* domains whose events are listed */

/* The index entry for key in a lazily allocated table of n entries. */
static int32_t *slot_of(int32_t **tab, size_t n, uint32_t key)
{
	if (key >= n)
		return NULL;
	if (!*tab && !(*tab = calloc(n, sizeof(**tab))))
		return NULL;
	return &(*tab)[key];
}

static struct dom_info *dom_get(struct info *in, uint32_t id)
{
	int32_t *slot = slot_of(&in->dom_slot, MAX_IDS, id);

	if (!slot) {
		in->untracked++;
		return &in->untracked_dom;
	}
	if (*slot)
		return &in->doms[*slot - 1];
	if (vec_room((void **)&in->doms, &in->cap_doms, in->n_doms, sizeof(*in->doms)) < 0)
		return NULL;
	in->doms[in->n_doms] = (struct dom_info){ .d = { .domain_id = id, .cpu = -1,
							  .clock_event = -1 } };
	*slot = (int32_t)++in->n_doms;
	return &in->doms[in->n_doms - 1];
}

/* Keep elem under its index slot: replace the entry the slot names (the
 * last copy of a packet wins), or append it; NULL slot: not listed. */
static int keep(struct info *in, int32_t *slot, void **vec, size_t *cap, size_t *n,
		size_t size, const void *elem)
{
	if (!slot) {
		in->untracked++;
		return 0;
	}
	if (!*slot) {
		if (vec_room(vec, cap, *n, size) < 0)
			return -ENOMEM;
		*slot = (int32_t)++*n;
	}
	memcpy((char *)*vec + (size_t)(*slot - 1) * size, elem, size);
	return 0;
}

static int add_event(struct info *in, const struct t4_event_pkt *e)
{
	int32_t *slot = NULL;

	if (e->domain_id < MAX_EVENT_DOMAINS && e->index < T4_MAX_COUNTERS)
		slot = slot_of(&in->ev_slot, MAX_EVENT_DOMAINS * T4_MAX_COUNTERS,
			       e->domain_id * T4_MAX_COUNTERS + e->index);
	return keep(in, slot, (void **)&in->events, &in->cap_events, &in->n_events,
		    sizeof(*e), e);
}

static int add_bookmark(struct info *in, const struct t4_bookmark_pkt *b)
{
	return keep(in, slot_of(&in->bm_slot, MAX_IDS, b->bookmark_id), (void **)&in->bms,
		    &in->cap_bms, &in->n_bms, sizeof(*b), b);
}

/* Trigger IDs count per scheduler: track each one's range. IDs beyond
 * MAX_SCHEDULERS are counted in the totals only. */
static void take_ref_ids(struct info *in, const struct t4_ref_pkt *r)
{
	if (r->sched_id >= MAX_SCHEDULERS)
		return;
	struct sched_ids *s = &in->sched[r->sched_id];
	if (s->refs == 0 || r->trigger_id < s->min)
		s->min = r->trigger_id;
	if (s->refs == 0 || r->trigger_id > s->max)
		s->max = r->trigger_id;
	s->refs++;
	if (r->sched_id + 1 > in->n_sched)
		in->n_sched = r->sched_id + 1;
}

static int take(struct info *in, const struct t4_packet *p)
{
	struct dom_info *d;

	switch (p->type) {
	case T4_PKT_REF:
		if (in->refs == 0 || p->ref.trigger_id < in->min_trig)
			in->min_trig = p->ref.trigger_id;
		if (in->refs == 0 || p->ref.trigger_id > in->max_trig)
			in->max_trig = p->ref.trigger_id;
		in->refs++;
		in->ref_overruns += p->ref.overruns;
		take_ref_ids(in, &p->ref);
		return 0;
	case T4_PKT_RET:
		if (!(d = dom_get(in, p->ret.domain_id)))
			return -ENOMEM;
		d->rets++;
		d->values += p->ret.n_counts;
		in->rets++;
		in->values += p->ret.n_counts;
		in->read_failed += !!(p->ret.flags & T4_RET_READ_FAILED);
		return 0;
	case T4_PKT_SESSION:
		in->meta++;
		if (!in->have_session)
			in->session = p->session;
		in->have_session = true;
		return 0;
	case T4_PKT_DOMAIN:
		in->meta++;
		if (!(d = dom_get(in, p->domain.domain_id)))
			return -ENOMEM;
		d->d = p->domain;
		d->described = true;
		return 0;
	case T4_PKT_EVENT:
		in->meta++;
		return add_event(in, &p->event);
	case T4_PKT_BOOKMARK:
		in->meta++;
		return add_bookmark(in, &p->bookmark);
	case T4_PKT_STATUS:
		in->meta++;
		in->status = p->status;
		in->have_status = true;
		return 0;
	default:
		return 0;
	}
}

static void on_warning(void *ud, uint64_t offset, const char *msg)
{
	struct info *in = ud;

	(void)offset;
	t4_warn("%s: %s", in->path, msg);
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
	if ((rc = t4_reader_open(&r, in->path, on_warning, in)) < 0) {
		free(p);
		return rc;
	}
	in->opened = true;
	while ((rc = t4_reader_next(r, p)) > 0)
		if ((rc = take(in, p)) < 0)
			break;
	t4_reader_stats(r, &in->st);
	t4_reader_close(r);
	free(p);
	for (size_t i = 0; i < in->n_events; i++) {
		struct dom_info *d = dom_get(in, in->events[i].domain_id);
		if (d)
			d->events++;
	}
	return rc;
}

/* ---- derived numbers ------------------------------------------------- */

static uint64_t overruns(const struct info *in)
{
	return in->have_status ? in->status.overruns : in->ref_overruns;
}

/* Every scheduler's IDs form one run without gaps or repeats. */
static bool contiguous(const struct info *in)
{
	uint64_t tracked = 0;

	for (uint32_t i = 0; i < in->n_sched; i++) {
		if (in->sched[i].refs && in->sched[i].max - in->sched[i].min != in->sched[i].refs - 1)
			return false;
		tracked += in->sched[i].refs;
	}
	return in->refs && tracked == in->refs;
}

static double ratio(const struct info *in)
{
	return in->st.file_bytes ? (double)in->st.raw_bytes / (double)in->st.file_bytes : 0;
}

static double bytes_per_value(const struct info *in)
{
	return in->values ? (double)in->st.file_bytes / (double)in->values : 0;
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

static void json_session(const struct info *in)
{
	const struct t4_session_pkt *s = &in->session;
	char t[64];

	if (!in->have_session) {
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
	printf("\"simulated\": %s}, ", (s->flags & T4_SESSION_SIMULATED) ? "true" : "false");
}

static void json_events(const struct info *in, uint32_t dom)
{
	bool first = true;

	printf("\"events\": [");
	for (size_t i = 0; i < in->n_events; i++) {
		const struct t4_event_pkt *e = &in->events[i];
		if (e->domain_id != dom)
			continue;
		printf("%s{", first ? "" : ", ");
		first = false;
		jkey_u64("index", e->index);
		jkey_str("pmu", e->pmu);
		jkey_str("name", e->name);
		jkey_str("spec", e->spec);
		jkey_str("unit", e->unit);
		jkey_u64("perf_type", e->perf_type);
		printf("\"config\": \"0x%" PRIx64 "\", \"config1\": \"0x%" PRIx64 "\", "
		       "\"config2\": \"0x%" PRIx64 "\", ", e->config, e->config1, e->config2);
		if (isfinite(e->scale)) /* JSON has no NaN or infinity */
			printf("\"scale\": %.17g}", e->scale);
		else
			printf("\"scale\": null}");
	}
	printf("]");
}

/* Triggers of the domain's scheduler it has no return packet for (a
 * monitor that answered late covers them with its next packet). */
static uint64_t missing_returns(const struct info *in, const struct dom_info *d)
{
	if (d->d.sched_id >= MAX_SCHEDULERS)
		return 0;
	uint64_t want = in->sched[d->d.sched_id].refs;
	return want > d->rets ? want - d->rets : 0;
}

static void json_domains(const struct info *in)
{
	printf("\"domains\": [");
	for (size_t i = 0; i < in->n_doms; i++) {
		const struct dom_info *d = &in->doms[i];
		printf("%s{", i ? ", " : "");
		jkey_u64("id", d->d.domain_id);
		jkey_str("name", d->d.name);
		jkey_str("kind", kind_name(d->d.kind));
		printf("\"cpu\": %d, \"clock_event\": %d, \"described\": %s, ", d->d.cpu,
		       d->d.clock_event, d->described ? "true" : "false");
		jkey_u64("nominal_hz", d->d.nominal_hz);
		jkey_u64("sched_id", d->d.sched_id);
		jkey_u64("n_events", d->events);
		jkey_u64("ret_packets", d->rets);
		jkey_u64("missing_returns", missing_returns(in, d));
		jkey_u64("values", d->values);
		json_events(in, d->d.domain_id);
		printf("}");
	}
	printf("], ");
}

static void json_bookmarks(const struct info *in)
{
	printf("\"bookmarks\": [");
	for (size_t i = 0; i < in->n_bms; i++) {
		printf("%s{\"id\": %u, \"name\": ", i ? ", " : "", in->bms[i].bookmark_id);
		t4_json_str(stdout, in->bms[i].name);
		printf(", \"first_trigger\": %" PRIu64 "}", in->bms[i].first_trigger);
	}
	printf("], ");
}

static void print_json(const struct info *in)
{
	const struct t4_reader_stats *st = &in->st;

	printf("{");
	jkey_str("file", in->path);
	jkey_u64("triggers", in->refs);
	if (in->refs) {
		jkey_u64("first_trigger", in->min_trig);
		jkey_u64("last_trigger", in->max_trig);
	} else {
		printf("\"first_trigger\": null, \"last_trigger\": null, ");
	}
	printf("\"contiguous\": %s, ", contiguous(in) ? "true" : "false");
	jkey_u64("schedulers", in->n_sched);
	jkey_u64("overruns", overruns(in));
	jkey_u64("dropped", in->have_status ? in->status.dropped : 0);
	printf("\"status_present\": %s, ", in->have_status ? "true" : "false");
	jkey_u64("read_failures", in->read_failed);
	jkey_u64("chunks", st->chunks);
	jkey_u64("packets", st->packets);
	jkey_u64("ref_packets", in->refs);
	jkey_u64("ret_packets", in->rets);
	jkey_u64("meta_packets", in->meta);
	jkey_u64("values", in->values);
	jkey_u64("bytes", st->file_bytes);
	jkey_u64("raw_bytes", st->raw_bytes);
	printf("\"compression_ratio\": %.3f, \"bytes_per_value\": %.4f, ", ratio(in),
	       bytes_per_value(in));
	jkey_u64("damaged_chunks", st->damaged_chunks);
	printf("\"truncated\": %s, ", st->truncated ? "true" : "false");
	jkey_u64("unknown_packets", st->unknown_packets);
	jkey_u64("untracked_packets", in->untracked);
	jkey_u64("skipped_bytes", st->skipped_bytes);
	json_session(in);
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

static void human_session(const struct info *in)
{
	const struct t4_session_pkt *s = &in->session;
	char t[64], d[32];

	if (!in->have_session) {
		printf(ROW "(no session packet)\n", "session");
		return;
	}
	printf(ROW "%s%s\n", "host", s->host,
	       (s->flags & T4_SESSION_SIMULATED) ? "  [SIMULATED]" : "");
	printf(ROW "%s\n", "kernel", s->kernel);
	printf(ROW "t410trace %s\n", "recorded by", s->version);
	printf(ROW "%s\n", "started", iso_time(s->start_real_ns, t, sizeof(t)));
	printf(ROW "%s\n", "period",
	       s->period_ns ? t4_fmt_duration(s->period_ns, d, sizeof(d)) : "none");
	printf(ROW "%s\n", "command", s->cmdline);
}

static void human_tables(const struct info *in)
{
	printf("\ndomains (%zu):\n  %5s  %-28s %-11s %4s %5s %14s %6s %10s %8s\n", in->n_doms,
	       "ID", "NAME", "KIND", "CPU", "CLOCK", "NOMINAL_HZ", "EVENTS", "RETURNS", "MISSING");
	for (size_t i = 0; i < in->n_doms; i++) {
		const struct dom_info *d = &in->doms[i];
		printf("  %5u  %-28s %-11s %4d %5d %14" PRIu64 " %6" PRIu64 " %10" PRIu64
		       " %8" PRIu64 "%s\n",
		       d->d.domain_id, d->d.name, kind_name(d->d.kind), d->d.cpu,
		       d->d.clock_event, d->d.nominal_hz, d->events, d->rets,
		       missing_returns(in, d), d->described ? "" : "  (no domain packet)");
	}
	printf("\nevents (%zu):\n  %6s %4s  %-20s %-24s %-8s %s\n", in->n_events, "DOMAIN",
	       "IDX", "PMU", "NAME", "UNIT", "SPEC");
	for (size_t i = 0; i < in->n_events; i++) {
		const struct t4_event_pkt *e = &in->events[i];
		printf("  %6u %4u  %-20s %-24s %-8s %s\n", e->domain_id, e->index, e->pmu,
		       e->name, e->unit, e->spec);
	}
	printf("\nbookmarks (%zu):\n", in->n_bms);
	if (in->n_bms)
		printf("  %6s  %-32s %s\n", "ID", "NAME", "FIRST_TRIGGER");
	for (size_t i = 0; i < in->n_bms; i++)
		printf("  %6u  %-32s %" PRIu64 "\n", in->bms[i].bookmark_id, in->bms[i].name,
		       in->bms[i].first_trigger);
}

static void print_human(const struct info *in)
{
	const struct t4_reader_stats *st = &in->st;
	char b1[32], b2[32];

	printf("%s\n", in->path);
	human_session(in);
	printf(ROW "%s on disk, %s raw (compression %.1fx)\n", "size",
	       t4_fmt_bytes(st->file_bytes, b1, sizeof(b1)),
	       t4_fmt_bytes(st->raw_bytes, b2, sizeof(b2)), ratio(in));
	printf(ROW "%" PRIu64 "\n", "chunks", st->chunks);
	printf(ROW "%" PRIu64 " (%" PRIu64 " reference, %" PRIu64 " return, %" PRIu64
	       " metadata)\n", "packets", st->packets, in->refs, in->rets, in->meta);
	if (in->refs)
		printf(ROW "%" PRIu64 " (IDs %" PRIu64 "..%" PRIu64 ", %s%s)\n", "triggers",
		       in->refs, in->min_trig, in->max_trig,
		       contiguous(in) ? "contiguous" : "with gaps or repeats",
		       in->n_sched > 1 ? " per scheduler" : "");
	else
		printf(ROW "0\n", "triggers");
	printf(ROW "%" PRIu64 "%s\n", "overruns", overruns(in),
	       in->have_status ? "" : " (no status packet: sum over triggers)");
	printf(ROW "%" PRIu64 "%s\n", "dropped", in->have_status ? in->status.dropped : 0,
	       in->have_status ? "" : " (no status packet: unknown)");
	printf(ROW "%" PRIu64 " (%.3f bytes each on disk)\n", "values", in->values,
	       bytes_per_value(in));
	printf(ROW "%" PRIu64 "\n", "read failures", in->read_failed);
	if (!st->damaged_chunks && !st->truncated)
		printf(ROW "none\n", "damage");
	else
		printf(ROW "%" PRIu64 " damaged chunks skipped, %s, %" PRIu64 " bytes "
		       "unreadable\n", "damage", st->damaged_chunks,
		       st->truncated ? "truncated" : "not truncated", st->skipped_bytes);
	if (st->unknown_packets)
		printf(ROW "%" PRIu64 " of types this version does not know, skipped\n",
		       "unknown packets", st->unknown_packets);
	if (in->untracked)
		printf(ROW "%" PRIu64 " packets with IDs too large to list (domain or "
		       "bookmark >= %u), counted in the totals only\n", "untracked", in->untracked,
		       MAX_IDS);
	human_tables(in);
}

/* ---- entry ----------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: t410trace info FILE [--json]\n\n"
		   "Describe a recorded log: session, clock domains, events, bookmarks,\n"
		   "triggers, overruns, drops, sizes, and any damage found (damaged\n"
		   "chunks are skipped with a warning naming their byte offset).\n\n"
		   "  --json   print one JSON object instead of the report\n"
		   "  --help   this text\n\n"
		   "Exit status: 0 when FILE is a log (even a damaged one), 2 when it\n"
		   "cannot be opened or is not a t410trace log, 1 on a read error.\n");
}

static void info_free(struct info *in)
{
	free(in->doms);
	free(in->events);
	free(in->bms);
	free(in->dom_slot);
	free(in->ev_slot);
	free(in->bm_slot);
	free(in);
}

int cmd_info(int argc, char **argv)
{
	struct info *in;
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
			return cli_usage_error("info", "unknown option '%s'", argv[i]);
		} else if (path) {
			return cli_usage_error("info", "one FILE only ('%s' and '%s')", path,
					       argv[i]);
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return cli_usage_error("info", "missing FILE");
	if (!(in = calloc(1, sizeof(*in)))) {
		fprintf(stderr, "t410trace info: out of memory\n");
		return 1;
	}
	in->path = path;
	rc = read_log(in);
	if (!in->opened) {
		fprintf(stderr, "t410trace info: %s\n", t4_errmsg());
		info_free(in);
		return 2;
	}
	if (json)
		print_json(in);
	else
		print_human(in);
	if (rc < 0)
		fprintf(stderr, "t410trace info: %s\n", t4_errmsg());
	info_free(in);
	return rc < 0 ? 1 : 0;
}
