/* codec.c - one packet <-> bytes (docs/FORMAT.md, "Packets").
 *
 * Every packet is `type varint, body length varint, body`, so a reader can
 * skip types it does not know and newer writers can append fields to a body.
 * Metadata packets are coded absolutely, and a copy of one (FORMAT.md 4.8)
 * is the whole encoded packet wrapped in a packet of type 8, so a reader
 * that does not know copies skips them; the two hot packet kinds are delta
 * coded against the previous packet of the same kind and key within the
 * chunk: reference packets per sched_id, return packets per domain_id. The
 * state is reset at every chunk start, so chunks decode independently.
 *
 * Trade-offs: the delta state is a dense table of T4_CODEC_MAX_KEYS slots
 * per kind (about 2.2 MB for return packets, calloc'd so untouched pages cost
 * nothing); a reset bumps a generation number instead of clearing it, so it
 * is O(1). Keys at or above the table size are coded absolutely (a flag bit
 * in the packet says so), which also lets simple writers skip delta coding.
 * Deltas are first-order only (no prediction of the next delta): simple to
 * document and to reimplement, and zstd squeezes out most of the rest.
 * Encoding builds the body in a stack buffer whose size bounds every body by
 * construction (strings are capped by their field sizes), then copies it.
 */
#include "codec_int.h"
#include "copies.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define T4_CODEC_MAX_KEYS 4096 /* delta state for keys 0..4095 (FORMAT.md) */

struct ref_state {
	uint32_t gen;
	uint64_t trigger_id, ref_ns, mono_off, real_off, local_clock;
};

struct ret_state {
	uint32_t gen;
	uint32_t n_counts;
	uint64_t trigger_id, local_clock, read_begin_ns;
	uint64_t counts[T4_MAX_COUNTERS];
};

struct t4_codec {
	unsigned version;     /* the chunk's format version: how trigger
			       * packets are coded */
	struct t4_codec2 *v2; /* format 2's state and batches */
	uint32_t gen; /* slots whose gen differs are all-zero */
	struct ref_state ref[T4_CODEC_MAX_KEYS];
	struct ret_state ret[T4_CODEC_MAX_KEYS];
};

struct t4_codec *t4_codec_new(void)
{
	struct t4_codec *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->gen = 1;
	c->version = T4_FORMAT_VERSION;
	c->v2 = pkt_codec2_new();
	if (!c->v2) {
		free(c);
		return NULL;
	}
	pkt_codec2_start(c->v2, c->version);
	return c;
}

void t4_codec_free(struct t4_codec *c)
{
	if (c)
		pkt_codec2_free(c->v2);
	free(c);
}

void t4_codec_reset(struct t4_codec *c)
{
	if (++c->gen == 0) { /* wrapped after 2^32 chunks: clear for real */
		memset(c->ref, 0, sizeof(c->ref));
		memset(c->ret, 0, sizeof(c->ret));
		c->gen = 1;
	}
	pkt_codec2_reset(c->v2);
}

int t4_codec_start(struct t4_codec *c, unsigned version)
{
	if (version < 1 || version > T4_FORMAT_VERSION)
		return t4_err(EINVAL, "format version %u: this codec writes 1..%d", version,
			      T4_FORMAT_VERSION);
	c->version = version;
	t4_codec_reset(c);
	pkt_codec2_start(c->v2, version);
	return 0;
}

unsigned t4_codec_version(const struct t4_codec *c)
{
	return c->version;
}

size_t t4_codec_flush(struct t4_codec *c, uint8_t *out, size_t cap)
{
	return c->version >= 2 ? pkt_codec2_flush(c->v2, out, cap) : 0;
}

size_t t4_codec_pending(const struct t4_codec *c)
{
	return c->version >= 2 ? pkt_codec2_pending(c->v2) : 0;
}

const char *t4_ref_clock_name(uint32_t ref_clock)
{
	return ref_clock == T4_REFCLK_MONOTONIC ? "CLOCK_MONOTONIC"
	       : ref_clock == T4_REFCLK_MONOTONIC_RAW ? "CLOCK_MONOTONIC_RAW" : "unknown";
}

uint64_t t4_ref_clock_now(uint32_t ref_clock)
{
	return t4_clock_ns(ref_clock == T4_REFCLK_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_RAW);
}

size_t t4_packet_size(const struct t4_packet *p)
{
	size_t base = offsetof(struct t4_packet, ref);

	switch (p->type) {
	case T4_PKT_REF: return base + sizeof(p->ref);
	case T4_PKT_RET:
		if (p->ret.n_counts > T4_MAX_COUNTERS)
			return sizeof(*p);
		return offsetof(struct t4_packet, ret.counts) +
		       p->ret.n_counts * sizeof(p->ret.counts[0]);
	case T4_PKT_SESSION: return base + sizeof(p->session);
	case T4_PKT_DOMAIN: return base + sizeof(p->domain);
	case T4_PKT_EVENT: return base + sizeof(p->event);
	case T4_PKT_BOOKMARK: return base + sizeof(p->bookmark);
	case T4_PKT_STATUS: return base + sizeof(p->status);
	case T4_PKT_TASK: return base + sizeof(p->task);
	case T4_PKT_GPU_CTX: return base + sizeof(p->gpu_ctx);
	case T4_PKT_CPU_SLICE: return base + sizeof(p->cpu_slice);
	case T4_PKT_GPU_SLICE: return base + sizeof(p->gpu_slice);
	case T4_PKT_HOST: return base + sizeof(p->host);
	default: return sizeof(*p);
	}
}

/* State slot of a key for this chunk, zeroed on first use; NULL when the
 * key is beyond the table (the packet is then coded absolutely). */
static struct ref_state *ref_slot(struct t4_codec *c, uint32_t key)
{
	struct ref_state *s;

	if (key >= T4_CODEC_MAX_KEYS)
		return NULL;
	s = &c->ref[key];
	if (s->gen != c->gen) {
		memset(s, 0, sizeof(*s));
		s->gen = c->gen;
	}
	return s;
}

static struct ret_state *ret_slot(struct t4_codec *c, uint32_t key)
{
	struct ret_state *s;

	if (key >= T4_CODEC_MAX_KEYS)
		return NULL;
	s = &c->ret[key];
	if (s->gen != c->gen) {
		s->gen = c->gen;
		s->n_counts = 0; /* counts beyond n_counts are never read */
		s->trigger_id = s->local_clock = s->read_begin_ns = 0;
	}
	return s;
}

/* Remember a packet as the base of the next one with the same key. */
static void commit_ref(struct ref_state *s, const struct t4_ref_pkt *r)
{
	if (!s)
		return;
	s->trigger_id = r->trigger_id;
	s->ref_ns = r->ref_ns;
	s->mono_off = r->mono_ns - r->ref_ns;
	s->real_off = r->real_ns - r->ref_ns;
	s->local_clock = r->local_clock;
}

static void commit_ret(struct ret_state *s, const struct t4_ret_pkt *r)
{
	if (!s)
		return;
	s->trigger_id = r->trigger_id;
	s->local_clock = r->local_clock;
	s->read_begin_ns = r->read_begin_ns;
	s->n_counts = r->n_counts;
	memcpy(s->counts, r->counts, r->n_counts * sizeof(r->counts[0]));
}

/* ---- primitives ------------------------------------------------------ */

static uint8_t *put_str(uint8_t *o, const char *s, size_t len)
{
	o = put_uv(o, len);
	memcpy(o, s, len);
	return o + len;
}

static uint8_t *put_f64(uint8_t *o, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	t4_put_le64(o, v);
	return o + 8;
}

/* Slow path of get_uv(): byte by byte with every check (near the end of
 * the buffer, and for 9- and 10-byte varints). */
uint64_t pkt_get_uv_slow(struct cur *c)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		uint8_t b = *c->p++;
		if (shift == 63 && b > 1) { /* more than 64 bits */
			c->bad = 1;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1; /* an 11th byte would be needed */
	return 0;
}

static uint32_t get_u32(struct cur *c)
{
	uint64_t v = get_uv(c);

	if (v > UINT32_MAX)
		c->bad = 1;
	return (uint32_t)v;
}

static int32_t get_i32(struct cur *c)
{
	int64_t v = (int64_t)unzz(get_uv(c));

	if (v < INT32_MIN || v > INT32_MAX)
		c->bad = 1;
	return (int32_t)v;
}

/* String into a field of `cap` bytes: at most cap - 1 bytes, no NUL. */
static void get_str(struct cur *c, char *dst, size_t cap)
{
	uint64_t len = get_uv(c);

	dst[0] = '\0';
	if (c->bad || len >= cap || len > (uint64_t)(c->end - c->p) ||
	    memchr(c->p, '\0', (size_t)len)) {
		c->bad = 1;
		return;
	}
	memcpy(dst, c->p, (size_t)len);
	dst[len] = '\0';
	c->p += len;
}

static double get_f64(struct cur *c)
{
	uint64_t v;
	double d;

	if (c->end - c->p < 8) {
		c->bad = 1;
		return 0;
	}
	v = t4_get_le64(c->p);
	c->p += 8;
	memcpy(&d, &v, sizeof(d));
	return d;
}

/* ---- the hot packets ------------------------------------------------- */

/* Reference body: hdr = flags << 1 | abs, sched_id, zz(trigger - prev - 1),
 * bookmark_id, zz(ref - prev ref), zz((mono - ref) - prev mono offset),
 * zz((real - ref) - prev real offset), zz(local - prev local), overruns. */
static uint8_t *enc_ref(struct t4_codec *c, const struct t4_ref_pkt *r, uint8_t *o)
{
	struct ref_state zero = { 0 }, *s = ref_slot(c, r->sched_id);
	const struct ref_state *b = s ? s : &zero;
	uint64_t mono_off = r->mono_ns - r->ref_ns, real_off = r->real_ns - r->ref_ns;

	o = put_uv(o, (uint64_t)r->flags << 1 | (s == NULL));
	o = put_uv(o, r->sched_id);
	o = put_uv(o, zz(r->trigger_id - b->trigger_id - 1));
	o = put_uv(o, r->bookmark_id);
	o = put_uv(o, zz(r->ref_ns - b->ref_ns));
	o = put_uv(o, zz(mono_off - b->mono_off));
	o = put_uv(o, zz(real_off - b->real_off));
	o = put_uv(o, zz(r->local_clock - b->local_clock));
	return put_uv(o, r->overruns);
}

static int dec_ref(struct t4_codec *c, struct cur *in, struct t4_ref_pkt *r)
{
	struct ref_state zero = { 0 }, *s;
	const struct ref_state *b;
	uint64_t hdr = get_uv(in), mono_off, real_off;

	r->sched_id = get_u32(in);
	if (in->bad || (hdr >> 1) > UINT32_MAX)
		return -1;
	r->flags = (uint32_t)(hdr >> 1);
	s = (hdr & 1) ? NULL : ref_slot(c, r->sched_id);
	if (!(hdr & 1) && !s)
		return -1; /* delta coding is only allowed for keys < 4096 */
	b = s ? s : &zero;
	r->trigger_id = b->trigger_id + 1 + unzz(get_uv(in));
	r->bookmark_id = get_u32(in);
	r->ref_ns = b->ref_ns + unzz(get_uv(in));
	mono_off = b->mono_off + unzz(get_uv(in));
	real_off = b->real_off + unzz(get_uv(in));
	r->mono_ns = r->ref_ns + mono_off;
	r->real_ns = r->ref_ns + real_off;
	r->local_clock = b->local_clock + unzz(get_uv(in));
	r->overruns = get_u32(in);
	if (in->bad)
		return -1;
	commit_ref(s, r);
	return 0;
}

/* Return body: hdr = flags << 1 | abs, domain_id, n_counts,
 * zz(trigger - prev - 1), zz(local - prev local), zz(begin - prev begin),
 * end - begin, [enabled, running when MULTIPLEXED], then per count
 * zz(count[i] - prev count[i]) (prev count 0 beyond the previous n_counts). */
static uint8_t *enc_ret(struct t4_codec *c, const struct t4_ret_pkt *r, uint8_t *o)
{
	struct ret_state *s = ret_slot(c, r->domain_id);
	uint32_t prev_n = s ? s->n_counts : 0;

	o = put_uv(o, (uint64_t)r->flags << 1 | (s == NULL));
	o = put_uv(o, r->domain_id);
	o = put_uv(o, r->n_counts);
	o = put_uv(o, zz(r->trigger_id - (s ? s->trigger_id : 0) - 1));
	o = put_uv(o, zz(r->local_clock - (s ? s->local_clock : 0)));
	o = put_uv(o, zz(r->read_begin_ns - (s ? s->read_begin_ns : 0)));
	o = put_uv(o, r->read_end_ns - r->read_begin_ns);
	if (r->flags & T4_RET_MULTIPLEXED) {
		o = put_uv(o, r->enabled_delta);
		o = put_uv(o, r->running_delta);
	}
	for (uint32_t i = 0; i < r->n_counts; i++)
		o = put_uv(o, zz(r->counts[i] - (i < prev_n ? s->counts[i] : 0)));
	return o;
}

static int dec_ret(struct t4_codec *c, struct cur *in, struct t4_ret_pkt *r)
{
	struct ret_state *s;
	uint64_t hdr = get_uv(in);
	uint32_t prev_n;

	r->domain_id = get_u32(in);
	r->n_counts = get_u32(in);
	if (in->bad || (hdr >> 1) > UINT32_MAX || r->n_counts > T4_MAX_COUNTERS)
		return -1;
	r->flags = (uint32_t)(hdr >> 1);
	s = (hdr & 1) ? NULL : ret_slot(c, r->domain_id);
	if (!(hdr & 1) && !s)
		return -1;
	prev_n = s ? s->n_counts : 0;
	r->trigger_id = (s ? s->trigger_id : 0) + 1 + unzz(get_uv(in));
	r->local_clock = (s ? s->local_clock : 0) + unzz(get_uv(in));
	r->read_begin_ns = (s ? s->read_begin_ns : 0) + unzz(get_uv(in));
	r->read_end_ns = r->read_begin_ns + get_uv(in);
	r->enabled_delta = r->running_delta = 0;
	if (r->flags & T4_RET_MULTIPLEXED) {
		r->enabled_delta = get_uv(in);
		r->running_delta = get_uv(in);
	}
	for (uint32_t i = 0; i < r->n_counts; i++)
		r->counts[i] = (i < prev_n ? s->counts[i] : 0) + unzz(get_uv(in));
	if (in->bad)
		return -1;
	commit_ret(s, r);
	return 0;
}

/* ---- metadata packets (absolute) ------------------------------------- */

/* Length of a NUL-terminated string field, or -1 when it is not. */
static long field_len(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	return n < cap ? (long)n : -1;
}

/* Every string of a packet, for one length check before encoding. */
struct strs {
	const char *s[4];
	size_t cap[4];
	int n;
};

static void packet_strs(const struct t4_packet *p, struct strs *st)
{
#define ADD(f) (st->s[st->n] = (f), st->cap[st->n++] = sizeof(f))
	st->n = 0;
	switch (p->type) {
	case T4_PKT_SESSION:
		ADD(p->session.host); ADD(p->session.kernel);
		ADD(p->session.version); ADD(p->session.cmdline);
		break;
	case T4_PKT_DOMAIN: ADD(p->domain.name); break;
	case T4_PKT_EVENT:
		ADD(p->event.pmu); ADD(p->event.name);
		ADD(p->event.spec); ADD(p->event.unit);
		break;
	case T4_PKT_BOOKMARK: ADD(p->bookmark.name); break;
	case T4_PKT_TASK: ADD(p->task.name); break;
	case T4_PKT_GPU_CTX: ADD(p->gpu_ctx.driver); ADD(p->gpu_ctx.timeline); break;
	case T4_PKT_HOST:
		ADD(p->host.host); ADD(p->host.job_id);
		ADD(p->host.step); ADD(p->host.nodelist);
		break;
	default: break;
	}
#undef ADD
}

#define PUT_STR(o, f) put_str(o, f, strlen(f)) /* length checked before */

static uint8_t *enc_meta(const struct t4_packet *p, uint8_t *o)
{
	switch (p->type) {
	case T4_PKT_SESSION: {
		const struct t4_session_pkt *s = &p->session;
		o = PUT_STR(o, s->host);
		o = PUT_STR(o, s->kernel);
		o = PUT_STR(o, s->version);
		o = PUT_STR(o, s->cmdline);
		o = put_uv(o, s->start_ref_ns);
		o = put_uv(o, s->start_real_ns);
		o = put_uv(o, s->period_ns);
		o = put_uv(o, s->flags);
		o = put_uv(o, s->ref_clock); /* appended in 0.1.0: may be absent */
		return put_uv(o, s->session_id); /* appended in format 1.1 */
	}
	case T4_PKT_DOMAIN: {
		const struct t4_domain_pkt *d = &p->domain;
		o = put_uv(o, d->domain_id);
		o = put_uv(o, d->kind);
		o = put_uv(o, zz((uint64_t)(int64_t)d->cpu));
		o = put_uv(o, zz((uint64_t)(int64_t)d->clock_event));
		o = put_uv(o, d->nominal_hz);
		o = PUT_STR(o, d->name);
		return put_uv(o, d->sched_id); /* appended in 0.1.0: may be absent */
	}
	case T4_PKT_EVENT: {
		const struct t4_event_pkt *e = &p->event;
		o = put_uv(o, e->domain_id);
		o = put_uv(o, e->index);
		o = put_uv(o, e->perf_type);
		o = put_uv(o, e->flags);
		o = put_uv(o, e->config);
		o = put_uv(o, e->config1);
		o = put_uv(o, e->config2);
		o = put_f64(o, e->scale);
		o = PUT_STR(o, e->pmu);
		o = PUT_STR(o, e->name);
		o = PUT_STR(o, e->spec);
		return PUT_STR(o, e->unit);
	}
	case T4_PKT_BOOKMARK:
		o = put_uv(o, p->bookmark.bookmark_id);
		o = put_uv(o, p->bookmark.first_trigger);
		o = PUT_STR(o, p->bookmark.name);
		return put_uv(o, p->bookmark.set_ns); /* appended: may be absent */
	case T4_PKT_TASK: {
		const struct t4_task_pkt *t = &p->task;
		o = put_uv(o, t->pid);
		o = put_uv(o, t->tid);
		o = put_uv(o, t->ppid);
		o = put_uv(o, t->mono_ns);
		return PUT_STR(o, t->name);
	}
	case T4_PKT_GPU_CTX:
		o = put_uv(o, p->gpu_ctx.context);
		o = PUT_STR(o, p->gpu_ctx.driver);
		return PUT_STR(o, p->gpu_ctx.timeline);
	case T4_PKT_CPU_SLICE: {
		const struct t4_cpu_slice_pkt *c = &p->cpu_slice;
		o = put_uv(o, c->cpu);
		o = put_uv(o, c->pid);
		o = put_uv(o, c->tid);
		o = put_uv(o, c->start_ns);
		o = put_uv(o, c->end_ns - c->start_ns);
		return put_uv(o, c->flags);
	}
	case T4_PKT_GPU_SLICE: {
		const struct t4_gpu_slice_pkt *g = &p->gpu_slice;
		o = put_uv(o, g->context);
		o = put_uv(o, g->seqno);
		o = put_uv(o, g->pid);
		o = put_uv(o, g->tid);
		o = put_uv(o, g->start_ns);
		o = put_uv(o, g->end_ns - g->start_ns);
		return put_uv(o, g->flags);
	}
	case T4_PKT_HOST: {
		const struct t4_host_pkt *h = &p->host;
		o = put_uv(o, h->ref_ns);
		o = put_uv(o, h->real_ns);
		o = put_uv(o, h->sync_flags);
		o = put_uv(o, zz((uint64_t)(int64_t)h->clock_state));
		o = put_uv(o, h->maxerror_us);
		o = put_uv(o, h->esterror_us);
		o = put_uv(o, zz((uint64_t)(int64_t)h->rank));
		o = PUT_STR(o, h->host);
		o = PUT_STR(o, h->job_id);
		o = PUT_STR(o, h->step);
		return PUT_STR(o, h->nodelist);
	}
	default: { /* T4_PKT_STATUS */
		const struct t4_status_pkt *s = &p->status;
		o = put_uv(o, s->triggers);
		o = put_uv(o, s->overruns);
		o = put_uv(o, s->dropped);
		o = put_uv(o, s->read_failures);
		o = put_uv(o, s->ref_ns);
		o = put_uv(o, s->lost_events); /* appended fields: may be absent */
		o = put_uv(o, s->bookmarks_refused);
		return put_uv(o, s->triggers_refused);
	}
	}
}

#define GET_STR(in, f) get_str(in, f, sizeof(f))

static void dec_meta(struct cur *in, struct t4_packet *p)
{
	switch (p->type) {
	case T4_PKT_SESSION: {
		struct t4_session_pkt *s = &p->session;
		GET_STR(in, s->host);
		GET_STR(in, s->kernel);
		GET_STR(in, s->version);
		GET_STR(in, s->cmdline);
		s->start_ref_ns = get_uv(in);
		s->start_real_ns = get_uv(in);
		s->period_ns = get_uv(in);
		s->flags = get_u32(in);
		s->ref_clock = in->p < in->end ? get_u32(in) : T4_REFCLK_MONOTONIC_RAW;
		s->session_id = in->p < in->end ? get_uv(in) : 0;
		break;
	}
	case T4_PKT_DOMAIN: {
		struct t4_domain_pkt *d = &p->domain;
		d->domain_id = get_u32(in);
		d->kind = get_u32(in);
		d->cpu = get_i32(in);
		d->clock_event = get_i32(in);
		d->nominal_hz = get_uv(in);
		GET_STR(in, d->name);
		d->sched_id = in->p < in->end ? get_u32(in) : 0;
		break;
	}
	case T4_PKT_EVENT: {
		struct t4_event_pkt *e = &p->event;
		e->domain_id = get_u32(in);
		e->index = get_u32(in);
		e->perf_type = get_u32(in);
		e->flags = get_u32(in);
		e->config = get_uv(in);
		e->config1 = get_uv(in);
		e->config2 = get_uv(in);
		e->scale = get_f64(in);
		GET_STR(in, e->pmu);
		GET_STR(in, e->name);
		GET_STR(in, e->spec);
		GET_STR(in, e->unit);
		break;
	}
	case T4_PKT_BOOKMARK:
		p->bookmark.bookmark_id = get_u32(in);
		p->bookmark.first_trigger = get_uv(in);
		GET_STR(in, p->bookmark.name);
		p->bookmark.set_ns = in->p < in->end ? get_uv(in) : 0;
		break;
	case T4_PKT_TASK: {
		struct t4_task_pkt *t = &p->task;
		t->pid = get_u32(in);
		t->tid = get_u32(in);
		t->ppid = get_u32(in);
		t->mono_ns = get_uv(in);
		GET_STR(in, t->name);
		break;
	}
	case T4_PKT_GPU_CTX:
		p->gpu_ctx.context = get_uv(in);
		GET_STR(in, p->gpu_ctx.driver);
		GET_STR(in, p->gpu_ctx.timeline);
		break;
	case T4_PKT_CPU_SLICE: {
		struct t4_cpu_slice_pkt *c = &p->cpu_slice;
		c->cpu = get_u32(in);
		c->pid = get_u32(in);
		c->tid = get_u32(in);
		c->start_ns = get_uv(in);
		c->end_ns = c->start_ns + get_uv(in);
		c->flags = get_u32(in);
		break;
	}
	case T4_PKT_GPU_SLICE: {
		struct t4_gpu_slice_pkt *g = &p->gpu_slice;
		g->context = get_uv(in);
		g->seqno = get_uv(in);
		g->pid = get_u32(in);
		g->tid = get_u32(in);
		g->start_ns = get_uv(in);
		g->end_ns = g->start_ns + get_uv(in);
		g->flags = get_u32(in);
		break;
	}
	case T4_PKT_HOST: {
		struct t4_host_pkt *h = &p->host;
		h->ref_ns = get_uv(in);
		h->real_ns = get_uv(in);
		h->sync_flags = get_u32(in);
		h->clock_state = get_i32(in);
		h->maxerror_us = get_uv(in);
		h->esterror_us = get_uv(in);
		h->rank = get_i32(in);
		GET_STR(in, h->host);
		GET_STR(in, h->job_id);
		GET_STR(in, h->step);
		GET_STR(in, h->nodelist);
		break;
	}
	default: { /* T4_PKT_STATUS */
		struct t4_status_pkt *s = &p->status;
		s->triggers = get_uv(in);
		s->overruns = get_uv(in);
		s->dropped = get_uv(in);
		s->read_failures = get_uv(in);
		s->ref_ns = get_uv(in);
		s->lost_events = in->p < in->end ? get_uv(in) : 0;
		s->bookmarks_refused = in->p < in->end ? get_uv(in) : 0;
		s->triggers_refused = in->p < in->end ? get_uv(in) : 0;
		break;
	}
	}
}

/* ---- framing --------------------------------------------------------- */

static int known_type(uint64_t t)
{
	return (t >= T4_PKT_SESSION && t <= T4_PKT_GPU_CTX) || t == T4_PKT_HOST ||
	       (t >= T4_PKT_REF && t <= T4_PKT_GPU_SLICE);
}

/* Metadata a writer repeats in later chunks: no delta state, no totals. */
static int copyable_type(uint64_t t)
{
	return t == T4_PKT_SESSION || t == T4_PKT_DOMAIN || t == T4_PKT_EVENT ||
	       t == T4_PKT_BOOKMARK || t == T4_PKT_TASK || t == T4_PKT_GPU_CTX;
}

bool pkt_codec_copyable(uint32_t type)
{
	return copyable_type(type);
}

/* A type a newer writer may copy: one this reader does not know at all. */
static int future_type(uint64_t t)
{
	return !known_type(t) && t != T4_PKT_COPY && t != T4_PKT_BATCH;
}

/* `type varint, body_len varint` into hdr; its length. */
static size_t put_frame(uint8_t *hdr, uint64_t type, size_t blen)
{
	return (size_t)(put_uv(put_uv(hdr, type), blen) - hdr);
}

int t4_codec_encode(struct t4_codec *c, const struct t4_packet *p,
		    uint8_t *out, size_t cap)
{
	uint8_t body[T4_PKT_MAX_ENCODED], hdr[4 * VARINT_MAX], *end;
	struct strs st;
	size_t blen, hlen, pend;

	if (!known_type(p->type))
		return t4_err(EINVAL, "packet type %u: unknown, not encoded", p->type);
	if (p->copy && !copyable_type(p->type))
		return t4_err(EINVAL, "packet type %u: not metadata, cannot be a copy", p->type);
	if (p->type == T4_PKT_RET && p->ret.n_counts > T4_MAX_COUNTERS)
		return t4_err(EINVAL, "return packet of domain %u: %u counts (max %d)",
			      p->ret.domain_id, p->ret.n_counts, T4_MAX_COUNTERS);
	packet_strs(p, &st);
	for (int i = 0; i < st.n; i++)
		if (field_len(st.s[i], st.cap[i]) < 0)
			return t4_err(EINVAL, "packet type %u: string field %d is not "
				      "NUL-terminated within %zu bytes", p->type, i, st.cap[i]);
	if (c->version >= 2 && (p->type == T4_PKT_REF || p->type == T4_PKT_RET))
		return pkt_codec2_add(c->v2, p, out, cap);
	if (p->type == T4_PKT_REF)
		end = enc_ref(c, &p->ref, body);
	else if (p->type == T4_PKT_RET)
		end = enc_ret(c, &p->ret, body);
	else
		end = enc_meta(p, body);
	blen = (size_t)(end - body);
	hlen = put_frame(hdr, p->type, blen);
	if (p->copy) { /* type 8 around the whole packet */
		uint8_t inner[2 * VARINT_MAX];
		size_t ilen = put_frame(inner, p->type, blen);
		hlen = put_frame(hdr, T4_PKT_COPY, ilen + blen);
		memcpy(hdr + hlen, inner, ilen);
		hlen += ilen;
	}
	pend = t4_codec_pending(c); /* an open batch goes first */
	if (pend + hlen + blen > cap) /* nothing written, delta state unchanged */
		return t4_err(ENOBUFS, "packet type %u: %zu bytes do not fit in %zu",
			      p->type, pend + hlen + blen, cap);
	pend = t4_codec_flush(c, out, cap);
	memcpy(out + pend, hdr, hlen);
	memcpy(out + pend + hlen, body, blen);
	if (p->type == T4_PKT_REF)
		commit_ref(ref_slot(c, p->ref.sched_id), &p->ref);
	else if (p->type == T4_PKT_RET)
		commit_ret(ret_slot(c, p->ret.domain_id), &p->ret);
	return (int)(pend + hlen + blen);
}

/* The packet inside a copy's body: a metadata packet, or one of a type
 * this reader does not know (skipped); anything else is malformed. Bytes
 * after it are a newer writer's and ignored. */
static int dec_copy(struct cur *in, struct t4_packet *p)
{
	uint64_t type = get_uv(in), blen = get_uv(in);
	struct cur body;

	if (in->bad || blen > (uint64_t)(in->end - in->p))
		return -1;
	if (future_type(type)) {
		p->type = 0;
		return 0;
	}
	if (!copyable_type(type))
		return -1;
	p->type = (uint32_t)type;
	body = (struct cur){ in->p, in->p + blen, in->lim, 0 };
	dec_meta(&body, p);
	return body.bad ? -1 : 0;
}

/* A packet with its own frame: a batch's first packet, or any other. */
static __attribute__((noinline)) int dec_framed(struct t4_codec *c, const uint8_t *in,
						size_t len, struct t4_packet *p)
{
	struct cur cu = { in, in + len, in + len, 0 };
	uint64_t type, blen;
	struct cur body;
	int bad = 0;

	type = get_uv(&cu);
	blen = get_uv(&cu);
	if (cu.bad || blen > (uint64_t)(cu.end - cu.p))
		return t4_err(EBADMSG, "packet framing truncated or malformed");
	body = (struct cur){ cu.p, cu.p + blen, in + len, 0 };
	if (c->version >= 2 && type == T4_PKT_BATCH) {
		return pkt_codec2_batch(c->v2, cu.p, (size_t)blen, (size_t)(cu.p - in) + (size_t)blen,
					p);
	}
	if (c->version >= 2 && (type == T4_PKT_REF || type == T4_PKT_RET))
		return t4_err(EBADMSG, "packet type %u: not in a format-2 chunk (batches "
			      "carry them)", (unsigned)type);
	p->copy = type == T4_PKT_COPY;
	if (p->copy) {
		bad = dec_copy(&body, p);
	} else if (!known_type(type)) {
		p->type = 0;
	} else {
		p->type = (uint32_t)type;
		if (type == T4_PKT_REF)
			bad = dec_ref(c, &body, &p->ref);
		else if (type == T4_PKT_RET)
			bad = dec_ret(c, &body, &p->ret);
		else
			dec_meta(&body, p);
	}
	if (bad || body.bad)
		return t4_err(EBADMSG, "packet type %u: body of %u bytes malformed",
			      (unsigned)type, (unsigned)blen);
	/* bytes left in the body: fields appended by a newer writer */
	return (int)(cu.p - in + blen);
}

struct t4_codec2 *pkt_codec_v2(const struct t4_codec *c)
{
	return c->v2;
}

int t4_codec_decode(struct t4_codec *c, const uint8_t *in, size_t len,
		    struct t4_packet *p)
{
	if (pkt_codec2_in_batch(c->v2)) /* the common case: every trigger packet
					  * of format 2, handed on (a tail call:
					  * codec2.c returns what this returns) */
		return pkt_codec2_next(c->v2, p);
	return dec_framed(c, in, len, p);
}

size_t pkt_codec_wrap_copy(const uint8_t *enc, size_t len, uint8_t *out)
{
	uint8_t hdr[2 * VARINT_MAX];
	size_t h = put_frame(hdr, T4_PKT_COPY, len);

	if (out) {
		memcpy(out, hdr, h);
		memcpy(out + h, enc, len);
	}
	return h + len;
}

size_t pkt_codec_frame_len(const uint8_t *in, size_t len)
{
	struct cur cu = { in, in + len, in + len, 0 };
	uint64_t blen;

	get_uv(&cu);
	blen = get_uv(&cu);
	if (cu.bad || blen > (uint64_t)(cu.end - cu.p))
		return len; /* not ours: the rest of the buffer */
	return (size_t)(cu.p - in) + (size_t)blen;
}

bool t4_session_same(const struct t4_session_pkt *a, const struct t4_session_pkt *b)
{
	return a->session_id == b->session_id && a->start_ref_ns == b->start_ref_ns &&
	       a->start_real_ns == b->start_real_ns && a->period_ns == b->period_ns &&
	       a->flags == b->flags && a->ref_clock == b->ref_clock &&
	       !strcmp(a->host, b->host) && !strcmp(a->kernel, b->kernel) &&
	       !strcmp(a->version, b->version) && !strcmp(a->cmdline, b->cmdline);
}
