/* packets_testutil.h - helpers shared by test_codec.c and test_reader.c:
 * a deterministic PRNG, random and realistic packets, packet equality, and
 * a tiny log builder (codec + chunk header + zstd into memory) that needs
 * no writer thread, so the reader is tested on its own. Everything is
 * static inline so that each test file uses what it needs without
 * unused-function warnings.
 */
#ifndef T4_PACKETS_TESTUTIL_H
#define T4_PACKETS_TESTUTIL_H

#include "packets/packets.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* ---- PRNG (splitmix64: tiny, good enough, no global state) ------------ */

static inline uint64_t tu_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline uint64_t tu_below(uint64_t *s, uint64_t n)
{
	return n ? tu_rand(s) % n : 0;
}

/* A value biased towards the edges: 0, 1, max, 2^63, small, any. */
static inline uint64_t tu_u64(uint64_t *s)
{
	static const uint64_t edge[] = { 0, 1, UINT64_MAX, UINT64_MAX - 1,
					 1ull << 63, (1ull << 63) - 1, 127, 128 };
	switch (tu_below(s, 4)) {
	case 0: return edge[tu_below(s, T4_ARRAY_LEN(edge))];
	case 1: return tu_below(s, 300);
	default: return tu_rand(s) >> tu_below(s, 64);
	}
}

static inline uint32_t tu_u32(uint64_t *s)
{
	return (uint32_t)(tu_below(s, 3) ? tu_u64(s) : tu_rand(s) >> 32);
}

/* A random string of 0..cap-1 non-NUL bytes (often the maximum). */
static inline void tu_str(uint64_t *s, char *dst, size_t cap)
{
	size_t n = tu_below(s, 4) == 0 ? cap - 1 : tu_below(s, cap);
	for (size_t i = 0; i < n; i++)
		dst[i] = (char)(1 + tu_below(s, 255));
	dst[n] = '\0';
}

static inline const uint32_t *tu_keys(size_t *n)
{
	static const uint32_t keys[] = { 0, 1, 2, 7, 4095, 4096, 100000, UINT32_MAX };
	*n = T4_ARRAY_LEN(keys);
	return keys;
}

static inline uint32_t tu_key(uint64_t *s)
{
	size_t n;
	const uint32_t *k = tu_keys(&n);
	return k[tu_below(s, n)];
}

/* A random packet of the given type, every field random. */
static inline void tu_random_packet(uint64_t *s, uint32_t type, struct t4_packet *p)
{
	memset(p, 0, sizeof(*p));
	p->type = type;
	switch (type) {
	case T4_PKT_REF:
		p->ref = (struct t4_ref_pkt){ tu_u64(s), tu_key(s), tu_u32(s), tu_u64(s),
					      tu_u64(s), tu_u64(s), tu_u64(s), tu_u32(s),
					      tu_u32(s) };
		break;
	case T4_PKT_RET: {
		struct t4_ret_pkt *r = &p->ret;
		r->trigger_id = tu_u64(s);
		r->domain_id = tu_key(s);
		r->flags = tu_u32(s);
		r->local_clock = tu_u64(s);
		r->read_begin_ns = tu_u64(s);
		r->read_end_ns = tu_u64(s);
		if (r->flags & T4_RET_MULTIPLEXED) {
			r->enabled_delta = tu_u64(s);
			r->running_delta = tu_u64(s);
		}
		r->n_counts = (uint32_t)(tu_below(s, 4) == 0 ? (tu_below(s, 2) ? 0 : 64)
						     : tu_below(s, 65));
		for (uint32_t i = 0; i < r->n_counts; i++)
			r->counts[i] = tu_u64(s);
		break;
	}
	case T4_PKT_SESSION:
		tu_str(s, p->session.host, sizeof(p->session.host));
		tu_str(s, p->session.kernel, sizeof(p->session.kernel));
		tu_str(s, p->session.version, sizeof(p->session.version));
		tu_str(s, p->session.cmdline, sizeof(p->session.cmdline));
		p->session.start_ref_ns = tu_u64(s);
		p->session.start_real_ns = tu_u64(s);
		p->session.period_ns = tu_u64(s);
		p->session.flags = tu_u32(s);
		p->session.ref_clock = tu_below(s, 2);
		p->session.session_id = tu_u64(s);
		break;
	case T4_PKT_DOMAIN:
		p->domain = (struct t4_domain_pkt){ tu_u32(s), tu_u32(s), (int32_t)tu_u32(s),
						    (int32_t)tu_u32(s), tu_u64(s) };
		tu_str(s, p->domain.name, sizeof(p->domain.name));
		p->domain.sched_id = tu_u32(s);
		break;
	case T4_PKT_EVENT: {
		struct t4_event_pkt *e = &p->event;
		uint64_t bits = tu_rand(s);
		e->domain_id = tu_u32(s);
		e->index = tu_u32(s);
		e->perf_type = tu_u32(s);
		e->flags = tu_u32(s);
		e->config = tu_u64(s);
		e->config1 = tu_u64(s);
		e->config2 = tu_u64(s);
		memcpy(&e->scale, &bits, sizeof(bits)); /* NaNs too: compared bitwise */
		tu_str(s, e->pmu, sizeof(e->pmu));
		tu_str(s, e->name, sizeof(e->name));
		tu_str(s, e->spec, sizeof(e->spec));
		tu_str(s, e->unit, sizeof(e->unit));
		break;
	}
	case T4_PKT_BOOKMARK:
		p->bookmark.bookmark_id = tu_u32(s);
		p->bookmark.first_trigger = tu_u64(s);
		tu_str(s, p->bookmark.name, sizeof(p->bookmark.name));
		p->bookmark.set_ns = tu_u64(s);
		break;
	case T4_PKT_STATUS:
		p->status = (struct t4_status_pkt){ tu_u64(s), tu_u64(s), tu_u64(s), tu_u64(s),
						    tu_u64(s), tu_u64(s), tu_u64(s), tu_u64(s) };
		break;
	case T4_PKT_TASK:
		p->task = (struct t4_task_pkt){ tu_u32(s), tu_u32(s), tu_u32(s), tu_u64(s) };
		tu_str(s, p->task.name, sizeof(p->task.name));
		break;
	case T4_PKT_GPU_CTX:
		p->gpu_ctx.context = tu_u64(s);
		tu_str(s, p->gpu_ctx.driver, sizeof(p->gpu_ctx.driver));
		tu_str(s, p->gpu_ctx.timeline, sizeof(p->gpu_ctx.timeline));
		break;
	case T4_PKT_CPU_SLICE:
		p->cpu_slice = (struct t4_cpu_slice_pkt){ tu_u32(s), tu_u32(s), tu_u32(s),
							  tu_u64(s), tu_u64(s), tu_u32(s) };
		break;
	case T4_PKT_GPU_SLICE:
		p->gpu_slice = (struct t4_gpu_slice_pkt){ tu_u64(s), tu_u64(s), tu_u32(s),
							  tu_u32(s), tu_u64(s), tu_u64(s),
							  tu_u32(s) };
		break;
	case T4_PKT_HOST: {
		struct t4_host_pkt *h = &p->host;
		h->ref_ns = tu_u64(s);
		h->real_ns = tu_u64(s);
		h->sync_flags = tu_u32(s);
		h->clock_state = (int32_t)tu_u32(s);
		h->maxerror_us = tu_u64(s);
		h->esterror_us = tu_u64(s);
		h->rank = (int32_t)tu_u32(s);
		tu_str(s, h->host, sizeof(h->host));
		tu_str(s, h->job_id, sizeof(h->job_id));
		tu_str(s, h->step, sizeof(h->step));
		tu_str(s, h->nodelist, sizeof(h->nodelist));
		break;
	}
	}
}

static inline uint32_t tu_type(uint64_t *s)
{
	static const uint32_t types[] = { T4_PKT_SESSION, T4_PKT_DOMAIN, T4_PKT_EVENT,
					  T4_PKT_BOOKMARK, T4_PKT_STATUS, T4_PKT_REF,
					  T4_PKT_RET, T4_PKT_RET, T4_PKT_RET, T4_PKT_REF,
					  T4_PKT_TASK, T4_PKT_GPU_CTX, T4_PKT_CPU_SLICE,
					  T4_PKT_GPU_SLICE };
	return types[tu_below(s, T4_ARRAY_LEN(types))];
}

/* Field-by-field equality (structs may differ in padding). */
static inline int tu_pkt_eq(const struct t4_packet *a, const struct t4_packet *b)
{
	if (a->type != b->type || a->copy != b->copy)
		return 0;
	switch (a->type) {
	case T4_PKT_REF: {
		const struct t4_ref_pkt *x = &a->ref, *y = &b->ref;
		return x->trigger_id == y->trigger_id && x->sched_id == y->sched_id &&
		       x->bookmark_id == y->bookmark_id && x->ref_ns == y->ref_ns &&
		       x->mono_ns == y->mono_ns && x->real_ns == y->real_ns &&
		       x->local_clock == y->local_clock && x->flags == y->flags &&
		       x->overruns == y->overruns;
	}
	case T4_PKT_RET: {
		const struct t4_ret_pkt *x = &a->ret, *y = &b->ret;
		return x->trigger_id == y->trigger_id && x->domain_id == y->domain_id &&
		       x->flags == y->flags && x->local_clock == y->local_clock &&
		       x->read_begin_ns == y->read_begin_ns &&
		       x->read_end_ns == y->read_end_ns &&
		       x->enabled_delta == y->enabled_delta &&
		       x->running_delta == y->running_delta && x->n_counts == y->n_counts &&
		       !memcmp(x->counts, y->counts, x->n_counts * sizeof(x->counts[0]));
	}
	case T4_PKT_SESSION: {
		const struct t4_session_pkt *x = &a->session, *y = &b->session;
		return !strcmp(x->host, y->host) && !strcmp(x->kernel, y->kernel) &&
		       !strcmp(x->version, y->version) && !strcmp(x->cmdline, y->cmdline) &&
		       x->start_ref_ns == y->start_ref_ns &&
		       x->start_real_ns == y->start_real_ns && x->period_ns == y->period_ns &&
		       x->flags == y->flags && x->ref_clock == y->ref_clock &&
		       x->session_id == y->session_id;
	}
	case T4_PKT_DOMAIN: {
		const struct t4_domain_pkt *x = &a->domain, *y = &b->domain;
		return x->domain_id == y->domain_id && x->kind == y->kind && x->cpu == y->cpu &&
		       x->clock_event == y->clock_event && x->nominal_hz == y->nominal_hz &&
		       x->sched_id == y->sched_id && !strcmp(x->name, y->name);
	}
	case T4_PKT_EVENT: {
		const struct t4_event_pkt *x = &a->event, *y = &b->event;
		return x->domain_id == y->domain_id && x->index == y->index &&
		       x->perf_type == y->perf_type && x->flags == y->flags &&
		       x->config == y->config && x->config1 == y->config1 &&
		       x->config2 == y->config2 && !memcmp(&x->scale, &y->scale, 8) &&
		       !strcmp(x->pmu, y->pmu) && !strcmp(x->name, y->name) &&
		       !strcmp(x->spec, y->spec) && !strcmp(x->unit, y->unit);
	}
	case T4_PKT_BOOKMARK:
		return a->bookmark.bookmark_id == b->bookmark.bookmark_id &&
		       a->bookmark.first_trigger == b->bookmark.first_trigger &&
		       a->bookmark.set_ns == b->bookmark.set_ns &&
		       !strcmp(a->bookmark.name, b->bookmark.name);
	case T4_PKT_STATUS:
		return !memcmp(&a->status, &b->status, sizeof(a->status));
	case T4_PKT_TASK:
		return a->task.pid == b->task.pid && a->task.tid == b->task.tid &&
		       a->task.ppid == b->task.ppid && a->task.mono_ns == b->task.mono_ns &&
		       !strcmp(a->task.name, b->task.name);
	case T4_PKT_GPU_CTX:
		return a->gpu_ctx.context == b->gpu_ctx.context &&
		       !strcmp(a->gpu_ctx.driver, b->gpu_ctx.driver) &&
		       !strcmp(a->gpu_ctx.timeline, b->gpu_ctx.timeline);
	case T4_PKT_CPU_SLICE:
		return a->cpu_slice.cpu == b->cpu_slice.cpu && a->cpu_slice.pid == b->cpu_slice.pid &&
		       a->cpu_slice.tid == b->cpu_slice.tid &&
		       a->cpu_slice.start_ns == b->cpu_slice.start_ns &&
		       a->cpu_slice.end_ns == b->cpu_slice.end_ns &&
		       a->cpu_slice.flags == b->cpu_slice.flags;
	case T4_PKT_GPU_SLICE:
		return a->gpu_slice.context == b->gpu_slice.context &&
		       a->gpu_slice.seqno == b->gpu_slice.seqno &&
		       a->gpu_slice.pid == b->gpu_slice.pid && a->gpu_slice.tid == b->gpu_slice.tid &&
		       a->gpu_slice.start_ns == b->gpu_slice.start_ns &&
		       a->gpu_slice.end_ns == b->gpu_slice.end_ns &&
		       a->gpu_slice.flags == b->gpu_slice.flags;
	case T4_PKT_HOST: {
		const struct t4_host_pkt *x = &a->host, *y = &b->host;
		return x->ref_ns == y->ref_ns && x->real_ns == y->real_ns &&
		       x->sync_flags == y->sync_flags && x->clock_state == y->clock_state &&
		       x->maxerror_us == y->maxerror_us && x->esterror_us == y->esterror_us &&
		       x->rank == y->rank && !strcmp(x->host, y->host) &&
		       !strcmp(x->job_id, y->job_id) && !strcmp(x->step, y->step) &&
		       !strcmp(x->nodelist, y->nodelist);
	}
	default:
		return 1;
	}
}

/* ---- a realistic recording -------------------------------------------- */

/* Domains of the realistic stream: software (2 events), tsc (1), a UCF PMU
 * with 32 counters whose deltas vary slowly. */
#define TU_DOMAINS 3
static inline uint32_t tu_dom_counts(int d)
{
	static const uint32_t n[TU_DOMAINS] = { 2, 1, 32 };
	return n[d];
}

/* Metadata packets (session, domains, events, one bookmark) into p[],
 * returns how many (at most 64). */
static inline size_t tu_metadata(struct t4_packet *p)
{
	static const char *const names[TU_DOMAINS] = { "software", "msr", "nvidia_ucf_pmu_0" };
	static const uint32_t kinds[TU_DOMAINS] = { T4_DOM_SOFTWARE, T4_DOM_TSC, T4_DOM_UCF };
	size_t n = 0;

	memset(p, 0, 64 * sizeof(*p));
	p[n].type = T4_PKT_SESSION;
	snprintf(p[n].session.host, sizeof(p[n].session.host), "testhost");
	snprintf(p[n].session.kernel, sizeof(p[n].session.kernel), "6.18.0-test");
	snprintf(p[n].session.version, sizeof(p[n].session.version), "%s", T4_VERSION);
	snprintf(p[n].session.cmdline, sizeof(p[n].session.cmdline),
		 "t410trace record --sim -e ucf/*/ -o x.t4");
	p[n].session.start_ref_ns = 1000000000ull;
	p[n].session.start_real_ns = 1700000000123456789ull;
	p[n].session.period_ns = 1000000;
	p[n].session.flags = T4_SESSION_SIMULATED;
	n++;
	for (int d = 0; d < TU_DOMAINS; d++) {
		p[n].type = T4_PKT_DOMAIN;
		p[n].domain = (struct t4_domain_pkt){ (uint32_t)d, kinds[d], d == 2 ? 0 : -1,
						      d == 2 ? 0 : -1, d == 2 ? 1000000000u : 0 };
		snprintf(p[n].domain.name, sizeof(p[n].domain.name), "%s", names[d]);
		n++;
		for (uint32_t i = 0; i < tu_dom_counts(d); i++, n++) {
			struct t4_event_pkt *e = &p[n].event;
			p[n].type = T4_PKT_EVENT;
			e->domain_id = (uint32_t)d;
			e->index = i;
			e->perf_type = 20 + (uint32_t)d;
			e->config = i;
			e->scale = 1.0;
			snprintf(e->pmu, sizeof(e->pmu), "%s", names[d]);
			snprintf(e->name, sizeof(e->name), "ev%u", i);
			snprintf(e->spec, sizeof(e->spec), "%s/event=0x%x/", names[d], i);
			snprintf(e->unit, sizeof(e->unit), "%s", i % 2 ? "bytes" : "");
		}
	}
	p[n].type = T4_PKT_BOOKMARK;
	p[n].bookmark.bookmark_id = 1;
	p[n].bookmark.first_trigger = 10;
	snprintf(p[n].bookmark.name, sizeof(p[n].bookmark.name), "phase-1");
	return n + 1;
}

/* Trigger t of the realistic stream: 1 reference + TU_DOMAINS returns into
 * p[]; returns 1 + TU_DOMAINS. Counters vary slowly around a base rate
 * (a step every 200 triggers) plus uniform noise in [0, noise). Timer
 * jitter up to 20 us, read windows of 1.5-2 us. */
static inline size_t tu_trigger_noise(uint64_t *s, uint64_t t, uint64_t noise,
				      struct t4_packet *p)
{
	uint64_t ref = 1000000000ull + t * 1000000 + tu_below(s, 20000);

	memset(p, 0, (1 + TU_DOMAINS) * sizeof(*p));
	p[0].type = T4_PKT_REF;
	p[0].ref = (struct t4_ref_pkt){ t, 0, t >= 10, ref, ref + 5000 + t / 100,
					ref + 1699999999000000000ull, ref * 2, T4_REF_PERIODIC,
					t % 97 == 5 };
	for (int d = 0; d < TU_DOMAINS; d++) {
		struct t4_ret_pkt *r = &p[1 + d].ret;
		p[1 + d].type = T4_PKT_RET;
		r->trigger_id = t;
		r->domain_id = (uint32_t)d;
		r->local_clock = d == 0 ? ref : ref * (uint64_t)(d + 1);
		r->read_begin_ns = ref + 2000 + tu_below(s, 3000);
		r->read_end_ns = r->read_begin_ns + 1500 + tu_below(s, 500);
		r->flags = t == 0 ? T4_RET_FIRST : 0;
		r->n_counts = tu_dom_counts(d);
		for (uint32_t i = 0; i < r->n_counts; i++)
			r->counts[i] = t == 0 ? 0 : 100000 * (i + 1) + 500 * ((t / 200) % 4) +
						       tu_below(s, noise);
	}
	return 1 + TU_DOMAINS;
}

static inline size_t tu_trigger(uint64_t *s, uint64_t t, struct t4_packet *p)
{
	return tu_trigger_noise(s, t, 64, p);
}

/* ---- log builder ------------------------------------------------------- */

#define TU_MAX_CHUNKS 256

struct tu_log {
	uint8_t *buf;
	size_t len, cap;
	struct t4_codec *codec;
	uint8_t *raw;
	size_t rlen;
	uint32_t npk;
	uint64_t first, last, seq;
	size_t nchunks;
	size_t chunk_off[TU_MAX_CHUNKS + 1]; /* chunk_off[nchunks] = len */
	size_t chunk_pkts[TU_MAX_CHUNKS];    /* packets recorded in each */
	uint32_t tag;           /* every chunk's header tag (format 1.1) */
	unsigned format;        /* how packets are coded: T4_FORMAT_VERSION
				 * unless set before the first packet */
	/* overrides for the next chunk */
	uint16_t version, hdr_size;
	int no_content_size;
	int32_t packets_adjust;
};

static inline void tu_log_init(struct tu_log *l)
{
	memset(l, 0, sizeof(*l));
	l->codec = t4_codec_new();
	l->raw = malloc(T4_CHUNK_MAX_RAW);
	cr_assert(l->codec && l->raw);
	l->first = UINT64_MAX;
}

static inline void tu_log_free(struct tu_log *l)
{
	t4_codec_free(l->codec);
	free(l->raw);
	free(l->buf);
}

static inline void tu_log_append(struct tu_log *l, const void *b, size_t n)
{
	if (l->len + n > l->cap) {
		l->cap = (l->len + n) * 2 + 4096;
		l->buf = realloc(l->buf, l->cap);
		cr_assert(l->buf);
	}
	memcpy(l->buf + l->len, b, n);
	l->len += n;
}

/* The codec codes the chunk being filled in l->format. */
static inline void tu_log_codec(struct tu_log *l)
{
	if (!l->format)
		l->format = T4_FORMAT_VERSION;
	if (t4_codec_version(l->codec) != l->format && !l->rlen)
		cr_assert_eq(t4_codec_start(l->codec, l->format), 0);
}

/* Raw bytes into the current chunk's payload (hand-made packets). */
static inline void tu_log_raw(struct tu_log *l, const void *b, size_t n, uint32_t npk)
{
	tu_log_codec(l); /* after the packets added before */
	l->rlen += t4_codec_flush(l->codec, l->raw + l->rlen, T4_CHUNK_MAX_RAW - l->rlen);
	cr_assert(l->rlen + n <= T4_CHUNK_MAX_RAW);
	memcpy(l->raw + l->rlen, b, n);
	l->rlen += n;
	l->npk += npk;
}

static inline void tu_log_add(struct tu_log *l, const struct t4_packet *p)
{
	int n;

	tu_log_codec(l);
	n = t4_codec_encode(l->codec, p, l->raw + l->rlen, T4_CHUNK_MAX_RAW - l->rlen);
	cr_assert(n >= 0, "encode: %s", t4_errmsg());
	l->rlen += (size_t)n;
	l->npk++;
	if (p->type == T4_PKT_REF || p->type == T4_PKT_RET) {
		uint64_t t = p->type == T4_PKT_REF ? p->ref.trigger_id : p->ret.trigger_id;
		l->first = t < l->first ? t : l->first;
		l->last = t > l->last ? t : l->last;
	}
}

/* Close the current chunk: compress, header, append. */
static inline void tu_log_flush(struct tu_log *l)
{
	size_t bound = ZSTD_compressBound(l->rlen), n;
	uint8_t *comp = malloc(bound), hdr[T4_CHUNK_HDR_SIZE], zero[256] = { 0 };
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	struct t4_chunk_hdr h = { 0 };

	cr_assert(comp && cc && l->nchunks < TU_MAX_CHUNKS);
	tu_log_codec(l);
	l->rlen += t4_codec_flush(l->codec, l->raw + l->rlen, T4_CHUNK_MAX_RAW - l->rlen);
	bound = ZSTD_compressBound(l->rlen);
	free(comp);
	comp = malloc(bound);
	cr_assert(comp);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, !l->no_content_size);
	n = ZSTD_compress2(cc, comp, bound, l->raw, l->rlen);
	cr_assert(!ZSTD_isError(n));
	h.version = l->version ? l->version : (uint16_t)l->format;
	h.hdr_size = l->hdr_size ? l->hdr_size : T4_CHUNK_HDR_SIZE;
	h.seq = l->seq++;
	h.first_trigger = l->first;
	h.last_trigger = l->first == UINT64_MAX ? 0 : l->last;
	h.raw_size = (uint32_t)l->rlen;
	h.comp_size = (uint32_t)n;
	h.packets = (uint32_t)((int32_t)l->npk + l->packets_adjust);
	h.payload_crc = t4_crc32c(0, comp, n);
	h.tag = l->tag;
	t4_chunk_hdr_pack(&h, hdr);
	l->chunk_off[l->nchunks] = l->len;
	l->chunk_pkts[l->nchunks++] = l->npk;
	tu_log_append(l, hdr, sizeof(hdr));
	cr_assert(h.hdr_size - T4_CHUNK_HDR_SIZE <= (int)sizeof(zero));
	tu_log_append(l, zero, h.hdr_size - T4_CHUNK_HDR_SIZE);
	tu_log_append(l, comp, n);
	l->chunk_off[l->nchunks] = l->len;
	ZSTD_freeCCtx(cc);
	free(comp);
	t4_codec_start(l->codec, l->format);
	l->rlen = 0;
	l->npk = 0;
	l->first = UINT64_MAX;
	l->last = 0;
	l->version = l->hdr_size = 0;
	l->no_content_size = 0;
	l->packets_adjust = 0;
}

/* A realistic log: metadata, then n_trig triggers, a chunk every
 * per_chunk triggers, a status packet at the end. Every packet written is
 * appended to *exp (grown with realloc), *n_exp counts them. */
static inline void tu_realistic_log(struct tu_log *l, uint64_t seed, uint64_t n_trig,
				    uint64_t per_chunk, struct t4_packet **exp, size_t *n_exp)
{
	size_t cap = 64 + n_trig * (1 + TU_DOMAINS) + 1, n = 0;
	struct t4_packet *e = malloc(cap * sizeof(*e));
	uint64_t s = seed;

	cr_assert(e);
	n = tu_metadata(e);
	for (size_t i = 0; i < n; i++)
		tu_log_add(l, &e[i]);
	for (uint64_t t = 0; t < n_trig; t++) {
		size_t k = tu_trigger(&s, t, &e[n]);
		for (size_t i = 0; i < k; i++)
			tu_log_add(l, &e[n + i]);
		n += k;
		if ((t + 1) % per_chunk == 0)
			tu_log_flush(l);
	}
	memset(&e[n], 0, sizeof(e[n]));
	e[n].type = T4_PKT_STATUS;
	e[n].status = (struct t4_status_pkt){ n_trig, 7, 3, 0, 123456789 };
	tu_log_add(l, &e[n++]);
	tu_log_flush(l);
	*exp = e;
	*n_exp = n;
}

/* A small log with every kind of damage a reader meets, in many small
 * chunks (7 triggers each; n_trig >= 200): each chunk opens with a copy of
 * the session; chunk 3 fails mid-way (a packet that does not decode),
 * chunk 5 has one packet fewer than its header says, chunk 8 a flipped
 * payload byte (CRC), chunk 11 a flipped header byte (resync), 700 bytes
 * of junk after chunk 14, chunk 17 a newer format version, chunk 19 two
 * packets of unknown types. With `second`, another recording follows,
 * found by its session packet alone (no tag, sequence numbers going on,
 * as format 1.0 writes), its chunk 2 damaged. Tests cut it at will. */
static inline void tu_damaged_log(struct tu_log *l, uint64_t seed, uint64_t n_trig, bool second)
{
	static const uint8_t bad[] = { 17, 1, 0 }, unk[] = { 99, 2, 0xab, 0xcd };
	struct t4_packet meta[64], t[1 + TU_DOMAINS];
	size_t n = tu_metadata(meta), flip_payload = 0, flip_header = 0;
	uint64_t s = seed;

	for (int rec = 0; rec < 1 + second; rec++) {
		bool first = !rec;
		if (rec)
			snprintf(meta[0].session.host, sizeof(meta[0].session.host), "second");
		for (size_t i = 0; i < n; i++)
			tu_log_add(l, &meta[i]);
		for (uint64_t k = 0, c = 0; k < (first ? n_trig : 40); k++) {
			if (k && k % 7 == 0) {
				l->packets_adjust = first && c == 5;
				l->version = first && c == 17 ? 9 : 0;
				tu_log_flush(l);
				if (first && c == 8)
					flip_payload = l->chunk_off[c] + T4_CHUNK_HDR_SIZE + 5;
				if (first && c == 11)
					flip_header = l->chunk_off[c] + 30;
				if (c == (first ? 14 : 2))
					for (int j = 0; j < 700; j++) {
						uint8_t b = (uint8_t)tu_rand(&s);
						tu_log_append(l, &b, 1);
					}
				c++;
				meta[0].copy = true;
				tu_log_add(l, &meta[0]);
				meta[0].copy = false;
			}
			size_t m = tu_trigger(&s, k, t);
			for (size_t i = 0; i < m; i++)
				tu_log_add(l, &t[i]);
			if (first && c == 3 && k % 7 == 3)
				tu_log_raw(l, bad, sizeof(bad), 1);
			if (first && c == 19 && k % 7 == 2) {
				tu_log_raw(l, unk, sizeof(unk), 1);
				tu_log_raw(l, unk, sizeof(unk), 1);
			}
		}
		tu_log_flush(l);
	}
	if (flip_payload)
		l->buf[flip_payload] ^= 0x10;
	if (flip_header)
		l->buf[flip_header] ^= 0x01;
}

#endif
