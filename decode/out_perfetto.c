/* out_perfetto.c - `decode -f perfetto`: a Perfetto protobuf trace (a
 * `Trace` of `TracePacket`s, decode/perfetto.proto) that ui.perfetto.dev
 * and trace_processor open.
 *
 * Tracks (TrackDescriptor packets, each written the first time it has
 * something to show, so a filtered-out domain or an absent metric has none):
 *
 *   t410trace HOST [SIMULATED Tegra410: not a measurement]    the root
 *     phases                        bookmark phases: one slice each
 *     UCF, PCIE, software, ...      one group per domain kind
 *       nvidia_pcie_pmu_0_rc_0      one per clock domain (its name)
 *         rd_bytes                  counter track: the interval's count
 *         rd_bw (GB/s)              counter track: the metric's value
 *     CPU: workload threads         one track per thread ("comm tid"):
 *                                   its on-CPU slices, named "cpu N"
 *     GPU jobs                      one track per fence context: its jobs
 *
 * Values: one TYPE_COUNTER event per interval and counter track, at the
 * interval's start_ns (the value holds until the domain's next interval):
 * counts as counter_value (integers; above INT64_MAX as
 * double_counter_value), metrics as double_counter_value. An absent metric
 * (NaN) writes nothing, and nothing follows a domain's last interval.
 * Phases are slices (SLICE_BEGIN named after the bookmark, SLICE_END) on
 * the phases track, written when the decoder reports them (at the end).
 *
 * Track uuids are fixed by what the track shows, never by the order of the
 * log, so every decode of one log agrees, with any filter:
 *
 *   bits 63..56  0x74 ('t'): t410trace's own tracks
 *        55..48  class (enum pf_class): 1 root, 2 phases, 3 kind group,
 *                4 domain, 5 event counter, 6 metric counter, 7 CPU
 *                thread (on-CPU slices), 8 GPU context (job slices); a new
 *                kind of track takes a new class
 *        47..16  object: domain ID, kind, TID, GPU context (low 32 bits)
 *        15..0   item: event or metric index, GPU context (bits 32..47);
 *                0xffff with object 0: the class's group track
 *
 * Clock: timestamps are the log's reference clock (the session's
 * ref_clock: CLOCK_MONOTONIC_RAW, Perfetto's builtin clock 5, or, for a
 * recording whose triggers fired in the kernel, CLOCK_MONOTONIC, clock 3),
 * so every timestamped packet says that timestamp_clock_id, and the first
 * packet is a ClockSnapshot making it the trace's clock, with BOOTTIME (6)
 * at the same instant and REALTIME (1) from the session's start, so
 * trace_processor has every conversion it may need. One packet sequence;
 * its first packet clears the incremental state.
 *
 * Several hosts merged (decode a.t4t b.t4t -f perfetto): one root per
 * host ("t410trace HOST", its tracks under it as above, workload threads
 * as plain tracks under a process track of the host: PIDs of several
 * hosts are not one process), every uuid mixed with the host's number
 * (pf_track_id), and one time axis: every timestamp is UTC (REALTIME,
 * clock 1) through the host's line (t4_place_real), the snapshot's one
 * clock REALTIME at the merged origin.
 *
 * Streaming: each packet is packed by protobuf-c as a one-packet Trace,
 * which is exactly field 1 of Trace (tag 0x0a, varint length, packet):
 * concatenated, they are one Trace. Counter values, nearly all of a
 * trace, are encoded by hand to the same bytes (pf_counter: protobuf-c's
 * reflective packing was 70% of the work). Packets go straight into the output's
 * buffered writer; the state is a few bits per domain.
 */
#include "out.h"
#include "util/util.h"
#include "decode/perfetto.pb-c.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef Perfetto__Protos__TracePacket pf_packet;
typedef Perfetto__Protos__TrackDescriptor pf_track_desc;
typedef Perfetto__Protos__CounterDescriptor pf_counter_desc;
typedef Perfetto__Protos__TrackEvent pf_event;
typedef Perfetto__Protos__TrackEvent__Type pf_event_type;
typedef Perfetto__Protos__ClockSnapshot pf_snapshot;
typedef Perfetto__Protos__ClockSnapshot__Clock pf_clock;
typedef Perfetto__Protos__ThreadDescriptor pf_thread_desc;
typedef Perfetto__Protos__ProcessDescriptor pf_process_desc;

#define PF_SEQ 1 /* trusted_packet_sequence_id */
#define PF_MONOTONIC PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC
#define PF_MONOTONIC_RAW PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC_RAW
#define PF_BOOTTIME PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME
#define PF_REALTIME PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME
#define PF_SLICE_BEGIN PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN
#define PF_SLICE_END PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END
#define PF_COUNTER PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER

/* ---- track uuids ----------------------------------------------------------- */

enum pf_class {
	PF_ROOT = 1,
	PF_PHASES = 2,
	PF_KIND = 3,
	PF_DOMAIN = 4,
	PF_EVENT = 5,
	PF_METRIC = 6,
	PF_THREAD = 7, /* a workload thread: its on-CPU slices */
	PF_GPU = 8,    /* a GPU fence context: its jobs */
	PF_PROCESS = 9, /* a workload process: its threads' group */
};

/* The order of the root's children (explicit: the phases first, then the
 * PMU kinds in kind order, then the workload). */
enum {
	PF_RANK_PHASES = 0,
	PF_RANK_KIND = 10,     /* + the kind */
	PF_RANK_WORKLOAD = 100,
	PF_RANK_GPU = 101,
};
#define PF_GROUP 0xffff /* item of a class's group track (object 0) */


/* ---- state ---------------------------------------------------------------- */

/* Merged: which host the callbacks are about (per-host state below is
 * reset at each host). */
struct pf_host {
	const struct t4_place *place; /* NULL: a single log */
	bool root;                    /* its root track described */
};

/* What has been described of one domain (by its decoder index). */
struct pf_dom {
	bool described;
	uint64_t series[2]; /* bit i: counter track of event / metric i */
};

struct pf_state {
	bool started;         /* clock snapshot (and a single log's root) written */
	struct pf_host host;
	uint32_t clock;       /* the reference clock's builtin clock ID */
	bool phases_described;
	uint64_t kinds;       /* bit k: kind group k described */
	struct pf_dom *doms;
	size_t cap_doms;
	bool gpu_group;       /* the GPU jobs' group track described */
	struct t4_idmap threads; /* TIDs whose track is described */
	struct t4_idmap processes; /* PIDs likewise */
	uint64_t *gpus;       /* contexts whose track is described */
	size_t n_gpus, cap_gpus;
};

/* A track's uuid (see above); merged, each host's uuids are its single
 * log's mixed with its number (splitmix64's finaliser: a bijection, so
 * no two tracks of one host collide, and two hosts' collide with
 * probability 2^-64). */
static uint64_t pf_track_id(const struct t4_output *x, enum pf_class c, uint32_t object,
			    uint16_t item)
{
	const struct pf_state *st = x->state;
	uint64_t u = (uint64_t)0x74 << 56 | (uint64_t)c << 48 | (uint64_t)object << 16 | item;

	if (!st->host.place)
		return u;
	u ^= (uint64_t)(st->host.place->index + 1) * 0x9e3779b97f4a7c15ull;
	u = (u ^ (u >> 30)) * 0xbf58476d1ce4e5b9ull;
	u = (u ^ (u >> 27)) * 0x94d049bb133111ebull;
	return u ^ (u >> 31);
}

static int pf_init(struct t4_output *x)
{
	if (!(x->state = calloc(1, sizeof(struct pf_state))))
		return t4_err(ENOMEM, "out of memory");
	return 0;
}

static void pf_fini(struct t4_output *x)
{
	struct pf_state *st = x->state;

	if (st) {
		free(st->doms);
		dec_idmap_free(&st->threads);
		dec_idmap_free(&st->processes);
		free(st->gpus);
	}
	free(st);
}

/* ---- packets -------------------------------------------------------------- */

/* protobuf-c's output, appended to the buffered writer (whose error is
 * sticky: the callbacks return it through out_status()). */
struct pf_sink {
	ProtobufCBuffer base;
	struct t4_wbuf *w;
};

static void pf_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	dec_wbuf_put(((struct pf_sink *)b)->w, (const char *)data, len);
}

/* One packet on our sequence, as a one-packet Trace (= field 1 of Trace). */
static void pf_write(struct t4_output *x, pf_packet *p)
{
	Perfetto__Protos__Trace t = PERFETTO__PROTOS__TRACE__INIT;
	struct pf_sink s = { .base.append = pf_append, .w = &x->w };

	p->has_trusted_packet_sequence_id = true;
	p->trusted_packet_sequence_id = PF_SEQ;
	t.n_packet = 1;
	t.packet = &p;
	protobuf_c_message_pack_to_buffer(&t.base, &s.base);
}

/* A track event at ts of the reference clock. */
static void pf_write_event(struct t4_output *x, uint64_t ts, pf_event *ev)
{
	const struct pf_state *st = x->state;
	pf_packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	p.has_timestamp = p.has_timestamp_clock_id = true;
	p.timestamp = st->host.place ? (uint64_t)t4_place_real(st->host.place, ts) : ts;
	p.timestamp_clock_id = st->clock;
	p.track_event = ev;
	pf_write(x, &p);
}

static void pf_slice(struct t4_output *x, uint64_t track, uint64_t ts, pf_event_type type,
		     const char *name)
{
	pf_event ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;

	ev.has_type = ev.has_track_uuid = true;
	ev.type = type;
	ev.track_uuid = track;
	ev.name = (char *)name;
	pf_write_event(x, ts, &ev);
}

/* ---- counter values, encoded by hand ---------------------------------------- */

/* A counter value is most of a trace (one per interval and track), and
 * protobuf-c's reflective packing was 70% of a decode to Perfetto: the one
 * packet it needs is written here directly, byte for byte what protobuf-c
 * writes (fields in number order; tests/test_decode_perfetto.c compares
 * the two):
 *   Trace.packet (1, bytes) {
 *     timestamp (8, varint), trusted_packet_sequence_id (10, varint),
 *     track_event (11, bytes) { type (9, varint), track_uuid (11, varint),
 *       counter_value (30, varint) | double_counter_value (44, fixed64) },
 *     timestamp_clock_id (58, varint) } */
enum {
	PB_VARINT = 0,
	PB_FIXED64 = 1,
	PB_BYTES = 2,
	PF_MAX_COUNTER_PACKET = 64, /* its body's largest: 11 + 2 + (2 + 25) + 7 */
};

static uint8_t *pb_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint8_t *pb_tag(uint8_t *p, uint32_t field, uint32_t wire)
{
	return pb_varint(p, (uint64_t)field << 3 | wire);
}

static uint8_t *pb_fixed64(uint8_t *p, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(v >> (8 * i)); /* little-endian on every host */
	return p;
}

/* The TrackEvent of a counter value into p; its end. */
static uint8_t *pf_counter_event(uint8_t *p, uint64_t track, const uint64_t *count, double value)
{
	p = pb_varint(pb_tag(p, 9, PB_VARINT), PF_COUNTER);
	p = pb_varint(pb_tag(p, 11, PB_VARINT), track);
	if (count && *count <= INT64_MAX)
		return pb_varint(pb_tag(p, 30, PB_VARINT), *count);
	return pb_fixed64(pb_tag(p, 44, PB_FIXED64), count ? (double)*count : value);
}

/* A counter value: a count (count != NULL) or a metric. */
static void pf_counter(struct t4_output *x, uint64_t ts, uint64_t track, const uint64_t *count,
		       double value)
{
	const struct pf_state *st = x->state;
	uint8_t ev[32], body[PF_MAX_COUNTER_PACKET], out[PF_MAX_COUNTER_PACKET + 4];
	uint8_t *e = pf_counter_event(ev, track, count, value), *b = body, *o = out;

	b = pb_varint(pb_tag(b, 8, PB_VARINT),
		      st->host.place ? (uint64_t)t4_place_real(st->host.place, ts) : ts);
	b = pb_varint(pb_tag(b, 10, PB_VARINT), PF_SEQ);
	b = pb_varint(pb_tag(b, 11, PB_BYTES), (uint64_t)(e - ev));
	memcpy(b, ev, (size_t)(e - ev));
	b += e - ev;
	b = pb_varint(pb_tag(b, 58, PB_VARINT), st->clock);
	o = pb_varint(pb_tag(o, 1, PB_BYTES), (uint64_t)(b - body));
	memcpy(o, body, (size_t)(b - body));
	o += b - body;
	dec_wbuf_put(&x->w, (const char *)out, (size_t)(o - out));
}

/* protobuf-c's encoding of the same. */
static void pf_counter_by_protobuf_c(struct t4_output *x, uint64_t ts, uint64_t track,
				     const uint64_t *count, double value)
{
	pf_event ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;

	ev.has_type = ev.has_track_uuid = true;
	ev.type = PF_COUNTER;
	ev.track_uuid = track;
	if (count && *count <= INT64_MAX) {
		ev.has_counter_value = true;
		ev.counter_value = (int64_t)*count;
	} else {
		ev.has_double_counter_value = true;
		ev.double_counter_value = count ? (double)*count : value;
	}
	pf_write_event(x, ts, &ev);
}

void out_pf_counter_both(uint64_t ts, uint32_t clock, uint64_t track, const uint64_t *count,
			 double value, struct t4_wbuf *hand, struct t4_wbuf *ref)
{
	struct pf_state st = { .clock = clock };
	struct t4_output x = { .state = &st, .w = *hand };

	pf_counter(&x, ts, track, count, value);
	*hand = x.w;
	x.w = *ref;
	pf_counter_by_protobuf_c(&x, ts, track, count, value);
	*ref = x.w;
}

/* Text for a protobuf string: bytes that are not UTF-8 as \\xNN
 * (protobuf readers refuse the rest). */
static const char *pf_text(const char *s, char *buf, size_t cap)
{
	return t4_text(s, 0, buf, cap);
}

/* A track under parent (0: a top-level one) at sibling rank `rank`
 * (INT32_MIN: none); counter tracks have cd. */
static void pf_track_desc_write(struct t4_output *x, pf_track_desc *td, uint64_t uuid,
				uint64_t parent, const char *name, int32_t rank)
{
	pf_packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	char safe[4 * T4_NAME_MAX + 64];

	td->has_uuid = true;
	td->uuid = uuid;
	td->has_parent_uuid = parent != 0;
	td->parent_uuid = parent;
	td->name = (char *)pf_text(name, safe, sizeof(safe));
	td->has_sibling_order_rank = rank != INT32_MIN;
	td->sibling_order_rank = rank;
	p.track_descriptor = td;
	pf_write(x, &p);
}

static void pf_track(struct t4_output *x, uint64_t uuid, uint64_t parent, const char *name,
		     pf_counter_desc *cd, int32_t rank)
{
	pf_track_desc td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;

	td.counter = cd;
	pf_track_desc_write(x, &td, uuid, parent, name, rank);
}

/* ---- the trace's start: clock snapshot and root track ------------------------ */

/* The builtin clock of a log's reference clock (no session: the older
 * logs' MONOTONIC_RAW). */
static uint32_t pf_ref_clock(const struct t4_session_pkt *s)
{
	return s && s->ref_clock == T4_REFCLK_MONOTONIC ? PF_MONOTONIC : PF_MONOTONIC_RAW;
}

/* The reference clock and BOOTTIME at t; REALTIME when the session pairs
 * it with t. */
static void pf_snapshot_write(struct t4_output *x, uint32_t ref_clock, uint64_t t,
			      uint64_t realtime)
{
	pf_packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	pf_snapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	pf_clock c[3] = { PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
			  PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
			  PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT };
	pf_clock *cp[3] = { &c[0], &c[1], &c[2] };
	const uint32_t ids[3] = { ref_clock, PF_BOOTTIME, PF_REALTIME };
	const uint64_t ts[3] = { t, t, realtime };

	for (size_t i = 0; i < 3; i++) {
		c[i].has_clock_id = c[i].has_timestamp = true;
		c[i].clock_id = ids[i];
		c[i].timestamp = ts[i];
	}
	/* merged logs: REALTIME alone (no host's BOOTTIME is the trace's) */
	cs.n_clocks = ref_clock == PF_REALTIME ? 1 : realtime ? 3 : 2;
	cs.clocks = cp;
	cs.has_primary_trace_clock = true;
	cs.primary_trace_clock = ref_clock;
	p.clock_snapshot = &cs;
	p.has_sequence_flags = true;
	p.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
	pf_write(x, &p);
}

/* Once, before anything else. first_ns: the first time the trace shows,
 * for the snapshot unless the session gives its (reference, REALTIME)
 * pair. */
static void pf_start(struct t4_output *x, const struct t4_decoder *dec, uint64_t first_ns)
{
	struct pf_state *st = x->state;
	const struct t4_session_pkt *s = t4_index_session(t4_decoder_index(dec));
	bool paired = s && s->start_ref_ns && s->start_real_ns;
	char name[T4_NAME_MAX + 64];

	const struct t4_place *pl = st->host.place;
	if (st->started && st->host.root)
		return;
	out_once(x, 0); /* decode -j: the first worker's (their first output) */
	if (!st->started && pl) { /* merged: one axis, UTC */
		st->clock = PF_REALTIME;
		pf_snapshot_write(x, PF_REALTIME, (uint64_t)pl->origin_real_ns, 0);
	} else if (!st->started) {
		st->clock = pf_ref_clock(s);
		pf_snapshot_write(x, st->clock, paired ? s->start_ref_ns : first_ns,
				  paired ? s->start_real_ns : 0);
	}
	st->started = true;
	if (st->host.root) {
		out_once_end(x);
		return;
	}
	st->host.root = true;
	snprintf(name, sizeof(name), "t410trace%s%s%s", s || pl ? " " : "",
		 pl ? pl->host : s ? s->host : "",
		 s && (s->flags & T4_SESSION_SIMULATED) ? " [SIMULATED Tegra410: not a measurement]"
							: "");
	pf_track_desc td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	td.has_child_ordering = true; /* its children by rank: the phases first */
	td.child_ordering = PERFETTO__PROTOS__TRACK_DESCRIPTOR__CHILD_TRACKS_ORDERING__EXPLICIT;
	pf_track_desc_write(x, &td, pf_track_id(x, PF_ROOT, 0, 0), 0, name, INT32_MIN);
	out_once_end(x);
}

/* ---- domains and their counter tracks ------------------------------------------ */

/* The state of decoder domain `slot`; its track (and its kind's group)
 * are described on its first interval. */
static int pf_domain(struct t4_output *x, const struct t4_dec_domain *dm, uint32_t slot,
		     struct pf_dom **out)
{
	struct pf_state *st = x->state;
	/* kinds beyond the bit set (none today) share the "other" group */
	uint32_t kind = dm->ix->d.kind < 64 ? dm->ix->d.kind : T4_DOM_OTHER;
	uint64_t group = pf_track_id(x, PF_KIND, kind, 0);

	if (slot >= st->cap_doms) {
		size_t cap = slot < 32 ? 64 : (size_t)slot * 2;
		struct pf_dom *d = realloc(st->doms, cap * sizeof(*d));
		if (!d)
			return t4_err(ENOMEM, "out of memory");
		memset(d + st->cap_doms, 0, (cap - st->cap_doms) * sizeof(*d));
		st->doms = d;
		st->cap_doms = cap;
	}
	*out = &st->doms[slot];
	if ((*out)->described)
		return 0;
	(*out)->described = true;
	if (!(st->kinds & (1ull << kind))) {
		st->kinds |= 1ull << kind;
		out_once(x, 1 + (int)kind); /* decode -j: the first domain's of the kind */
		pf_track(x, group, pf_track_id(x, PF_ROOT, 0, 0), dm->kind_label, NULL,
			 PF_RANK_KIND + (int32_t)kind);
		out_once_end(x);
	}
	pf_track(x, pf_track_id(x, PF_DOMAIN, dm->id, 0), group, dm->name, NULL, INT32_MIN);
	return 0;
}

/* Perfetto's own units for bytes and ns; any other unit by its name
 * (unit_name: GB/s, GHz, %, req/cycle, requests, ...); a count without a
 * unit is a count. */
static void pf_unit(pf_counter_desc *cd, const char *unit, bool metric)
{
	cd->has_unit = true;
	if (!strcmp(unit, "bytes")) {
		cd->unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES;
	} else if (!strcmp(unit, "ns")) {
		cd->unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_TIME_NS;
	} else if (*unit) {
		cd->unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_UNSPECIFIED;
		cd->unit_name = (char *)unit;
	} else {
		cd->unit = metric ? PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_UNSPECIFIED
				  : PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_COUNT;
	}
}

_Static_assert(T4_MAX_COUNTERS <= 64, "one bit per counter track in struct pf_dom");
_Static_assert(T4_DOM_KINDS <= 64, "one bit per kind group in struct pf_state");

/* The uuid of the counter track of a domain's event i (metric false) or
 * metric i, described on its first value: "name" or "name (unit)". */
static uint64_t pf_series(struct t4_output *x, const struct t4_dec_domain *dm,
			  struct pf_dom *pd, bool metric, uint32_t i)
{
	uint64_t uuid = pf_track_id(x, metric ? PF_METRIC : PF_EVENT, dm->id, (uint16_t)i);
	const char *unit = metric ? dm->metric_unit[i] : dm->event_unit[i];
	pf_counter_desc cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	char name[2 * T4_NAME_MAX + 8];

	if (pd->series[metric] & (1ull << i))
		return uuid;
	pd->series[metric] |= 1ull << i;
	unit = unit ? unit : "";
	snprintf(name, sizeof(name), *unit ? "%s (%s)" : "%s",
		 metric ? dm->metric_name[i] : dm->event_name[i], unit);
	char safe_unit[64];
	pf_unit(&cd, pf_text(unit, safe_unit, sizeof(safe_unit)), metric);
	pf_track(x, uuid, pf_track_id(x, PF_DOMAIN, dm->id, 0), name, &cd, INT32_MIN);
	return uuid;
}

/* ---- the sink ------------------------------------------------------------------ */

static int pf_interval(void *ud, const struct t4_decoder *dec, const struct t4_interval *iv)
{
	struct t4_output *x = ud;
	const struct t4_dec_domain *dm = t4_decoder_domain_at(dec, iv->domain);
	struct pf_dom *pd = NULL;
	int rc;

	pf_start(x, dec, iv->start_ns);
	if ((rc = pf_domain(x, dm, iv->domain, &pd)) < 0)
		return rc;
	for (uint32_t i = 0; i < iv->n_counts && i < dm->n_counts; i++)
		if (dm->event_selected[i])
			pf_counter(x, iv->start_ns, pf_series(x, dm, pd, false, i), &iv->counts[i],
				   0);
	for (uint32_t m = 0; iv->metrics && m < dm->n_metrics; m++)
		if (dm->metric_selected[m] && !isnan(iv->metrics[m]))
			pf_counter(x, iv->start_ns, pf_series(x, dm, pd, true, m), NULL,
				   iv->metrics[m]);
	return out_status(x);
}

/* A phase: one slice on the phases track, named after its bookmark. */
static int pf_phase(void *ud, const struct t4_decoder *dec, size_t p)
{
	struct t4_output *x = ud;
	struct pf_state *st = x->state;
	const struct t4_dec_phase *ph = t4_decoder_phase_at(dec, p);

	pf_start(x, dec, ph->start_ns);
	if (!st->phases_described) {
		st->phases_described = true;
		pf_track(x, pf_track_id(x, PF_PHASES, 0, 0), pf_track_id(x, PF_ROOT, 0, 0), "phases", NULL,
			 PF_RANK_PHASES);
	}
	char safe[4 * T4_NAME_MAX + 16], label[4 * T4_NAME_MAX + 16];
	snprintf(label, sizeof(label), "%s#%u", *ph->name ? ph->name : "(none)", ph->occurrence);
	pf_slice(x, pf_track_id(x, PF_PHASES, 0, 0), ph->start_ns, PF_SLICE_BEGIN,
		 pf_text(label, safe, sizeof(safe)));
	pf_slice(x, pf_track_id(x, PF_PHASES, 0, 0), ph->end_ns, PF_SLICE_END, NULL);
	return out_status(x);
}

/* The group track of GPU jobs, described once. */
static uint64_t pf_gpu_group(struct t4_output *x)
{
	struct pf_state *st = x->state;
	uint64_t uuid = pf_track_id(x, PF_GPU, 0, PF_GROUP);

	if (!st->gpu_group) {
		st->gpu_group = true;
		pf_track(x, uuid, pf_track_id(x, PF_ROOT, 0, 0), "GPU jobs", NULL, PF_RANK_GPU);
	}
	return uuid;
}

/* A workload process's track (ProcessDescriptor: the UI groups its
 * threads under it), described once. */
static int pf_process(struct t4_output *x, const struct t4_decoder *dec, uint32_t pid)
{
	struct pf_state *st = x->state;
	pf_track_desc td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	pf_process_desc pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	char safe[4 * T4_NAME_MAX];
	const char *name = t4_decoder_thread_name(dec, pid);

	if (dec_idmap_get(&st->processes, pid) >= 0)
		return 0;
	if (st->host.place) { /* merged: PIDs of several hosts are not one process's */
		char label[T4_NAME_MAX + 32];
		snprintf(label, sizeof(label), "%s (pid %u)", *name ? name : "process", pid);
		pf_track(x, pf_track_id(x, PF_PROCESS, pid, 0), pf_track_id(x, PF_ROOT, 0, 0), label,
			 NULL, PF_RANK_WORKLOAD);
		return dec_idmap_put(&st->processes, pid, 0);
	}
	pd.has_pid = true;
	pd.pid = (int32_t)pid;
	pd.process_name = *name ? (char *)pf_text(name, safe, sizeof(safe)) : NULL;
	td.process = &pd;
	pf_track_desc_write(x, &td, pf_track_id(x, PF_PROCESS, pid, 0), 0, name, INT32_MIN);
	return dec_idmap_put(&st->processes, pid, 0);
}

/* A workload thread's track (ThreadDescriptor, in its process). */
static int pf_thread(struct t4_output *x, const struct t4_decoder *dec, const struct t4_slice *s,
		     uint64_t uuid)
{
	struct pf_state *st = x->state;
	pf_track_desc td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	pf_thread_desc th = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	char safe[4 * T4_NAME_MAX];
	int rc;

	if (dec_idmap_get(&st->threads, s->tid) >= 0)
		return 0;
	if ((rc = pf_process(x, dec, s->pid)) < 0)
		return rc;
	if (st->host.place) { /* merged: a plain track in its process's */
		char label[T4_NAME_MAX + 32];
		snprintf(label, sizeof(label), "%s %u", *s->name ? s->name : "thread", s->tid);
		pf_track(x, uuid, pf_track_id(x, PF_PROCESS, s->pid, 0), label, NULL, INT32_MIN);
		return dec_idmap_put(&st->threads, s->tid, 0);
	}
	th.has_pid = th.has_tid = true;
	th.pid = (int32_t)s->pid;
	th.tid = s->tid;
	th.thread_name = *s->name ? (char *)pf_text(s->name, safe, sizeof(safe)) : NULL;
	td.thread = &th;
	pf_track_desc_write(x, &td, uuid, 0, *s->name ? s->name : "thread", INT32_MIN);
	return dec_idmap_put(&st->threads, s->tid, 0);
}

/* The track of slice s's thread or GPU context, described on first use. */
static int pf_slice_track(struct t4_output *x, const struct t4_decoder *dec,
			  const struct t4_slice *s, uint64_t *uuid)
{
	struct pf_state *st = x->state;
	char name[3 * T4_NAME_MAX];
	bool gpu = s->kind == T4_SLICE_GPU;

	*uuid = gpu ? pf_track_id(x, PF_GPU, (uint32_t)s->context, (uint16_t)(s->context >> 32))
		    : pf_track_id(x, PF_THREAD, s->tid, 0);
	if (!gpu)
		return pf_thread(x, dec, s, *uuid);
	for (size_t i = 0; i < st->n_gpus; i++)
		if (st->gpus[i] == s->context)
			return 0;
	int rc = dec_vec_room((void **)&st->gpus, &st->cap_gpus, st->n_gpus, sizeof(*st->gpus));
	if (rc < 0)
		return rc;
	st->gpus[st->n_gpus++] = s->context;
	snprintf(name, sizeof(name), "%s %s (context %llu)", *s->driver ? s->driver : "gpu",
		 s->timeline, (unsigned long long)s->context);
	pf_track(x, *uuid, pf_gpu_group(x), name, NULL, INT32_MIN);
	return 0;
}

/* A CPU slice ("cpu N" on its thread's track) or a GPU job ("job SEQNO"
 * on its context's track). */
static int pf_cpu_gpu_slice(void *ud, const struct t4_decoder *dec, const struct t4_slice *s)
{
	struct t4_output *x = ud;
	char name[64];
	uint64_t track;
	int rc;

	pf_start(x, dec, s->start_ns);
	if ((rc = pf_slice_track(x, dec, s, &track)) < 0)
		return rc;
	if (s->kind == T4_SLICE_GPU)
		snprintf(name, sizeof(name), "job %llu (pid %u)", (unsigned long long)s->seqno,
			 s->pid);
	else
		snprintf(name, sizeof(name), "cpu %u", s->cpu);
	pf_slice(x, track, s->start_ns, PF_SLICE_BEGIN, name);
	pf_slice(x, track, s->end_ns, PF_SLICE_END, NULL);
	return out_status(x);
}

/* Merged: a host begins; its tracks are its own (pf_track_id). */
static int pf_host(void *ud, const struct t4_decoder *dec)
{
	struct t4_output *x = ud;
	struct pf_state *st = x->state;

	st->host = (struct pf_host){ .place = t4_decoder_place(dec) };
	st->phases_described = st->gpu_group = false;
	st->kinds = 0;
	if (st->doms)
		memset(st->doms, 0, st->cap_doms * sizeof(*st->doms));
	dec_idmap_free(&st->threads);
	dec_idmap_free(&st->processes);
	st->n_gpus = 0;
	return 0;
}

static int pf_finish(void *ud, const struct t4_decoder *dec)
{
	pf_start(ud, dec, t4_decoder_origin_ns(dec)); /* nothing decoded: still a trace */
	return out_close(ud);
}

/* decode -j: the trace's start, this host's root and the kind groups
 * described (the rest is per domain, which one worker decodes, or made
 * by worker 0 alone: slices, phases). */
static void pf_fork_state(struct t4_output *copy, const struct t4_output *x)
{
	struct pf_state *c = copy->state;
	const struct pf_state *st = x->state;

	c->started = st->started;
	c->clock = st->clock;
	c->host = st->host;
	c->kinds = st->kinds;
}

static void pf_join_state(struct t4_output *x, const struct t4_output *copy)
{
	struct pf_state *st = x->state;
	const struct pf_state *c = copy->state;

	if (c->started && !st->started)
		st->clock = c->clock;
	st->started |= c->started;
	st->host.root |= c->host.root;
	st->kinds |= c->kinds;
}

const struct out_backend out_perfetto = {
	.name = "perfetto",
	.ops = { .interval = pf_interval, .slice = pf_cpu_gpu_slice, .phase = pf_phase,
		 .finish = pf_finish, .host = pf_host, .fork = out_fork, .join = out_join },
	.wants_metrics = true,
	.init = pf_init,
	.fini = pf_fini,
	.fork_state = pf_fork_state,
	.join_state = pf_join_state,
};
