/* test_selfdesc.c - self-describing logs (issue 16.5; suite "selfdesc"):
 * the writer repeats metadata as copies at chunk starts (FORMAT.md 4.8) and
 * stamps every chunk with its recording's tag, so that any single damaged
 * chunk loses only its own packets: names, events, clock models and
 * bookmark names come back from the next chunk. Checked on the writer's
 * own bytes (which copies open which chunk), on every chunk of a log
 * damaged in turn, and end to end on recordings made by the binary
 * (`record --sim --virtual` and live), decoded whole and with their first
 * chunk damaged.
 */
#include "cli_testutil.h"
#include "decode/decode.h"
#include "packets/packets.h"
#include "packets_testutil.h"
#include "probe.h"
#include "util/util.h"

#include <math.h>
#include <sys/stat.h>

#define FULL_EVERY 8 /* the writer's T4_COPIES_FULL_EVERY (packets/copies.h) */
#define SESSION_ID 0x5eed0000abcd1234ull

/* ---- a log in memory, chunk by chunk -------------------------------------- */

struct file {
	uint8_t *b;
	size_t len;
	size_t off[512]; /* chunk starts, off[n] = len */
	size_t n;
};

static void load(const char *path, struct file *f)
{
	FILE *fp = fopen(path, "rb");
	struct stat sb;

	cr_assert_not_null(fp, "%s", path);
	cr_assert_eq(fstat(fileno(fp), &sb), 0);
	f->len = (size_t)sb.st_size;
	f->b = malloc(f->len + 1);
	cr_assert_eq(fread(f->b, 1, f->len, fp), f->len);
	fclose(fp);
	f->n = 0;
	for (size_t o = 0; o < f->len; f->n++) {
		struct t4_chunk_hdr h;
		cr_assert_lt(f->n, T4_ARRAY_LEN(f->off) - 1);
		cr_assert_eq(t4_chunk_hdr_unpack(f->b + o, &h), 0, "chunk at %zu", o);
		f->off[f->n] = o;
		o += h.hdr_size + h.comp_size;
	}
	f->off[f->n] = f->len;
}

static void save(const char *path, const void *b, size_t len)
{
	FILE *fp = fopen(path, "wb");

	cr_assert_not_null(fp, "%s", path);
	cr_assert_eq(fwrite(b, 1, len, fp), len);
	fclose(fp);
}

/* A copy of the file with chunk k damaged: `head` flips bits of its magic
 * (bytes 0-7 for chunk 0), its frame gets garbage. */
static uint8_t *damaged(const struct file *f, size_t k, bool head)
{
	uint8_t *b = malloc(f->len);

	memcpy(b, f->b, f->len);
	if (head) {
		b[f->off[k]] ^= 0x01;
		b[f->off[k] + 6] ^= 0x40;
	}
	for (size_t o = f->off[k] + T4_CHUNK_HDR_SIZE + 4; o < f->off[k + 1] - 4; o += 7)
		b[o] ^= 0x5a;
	return b;
}

static void quiet(void *ud, uint64_t off, const char *msg)
{
	(void)ud, (void)off, (void)msg;
}

/* The packets of chunk k alone. */
static size_t chunk_packets(const struct file *f, size_t k, struct t4_packet *out, size_t cap)
{
	struct t4_reader *r;
	size_t n = 0;
	int rc;

	cr_assert_eq(t4_reader_open_mem(&r, f->b + f->off[k], f->off[k + 1] - f->off[k], quiet,
					NULL), 0, "%s", t4_errmsg());
	while (n < cap && (rc = t4_reader_next(r, &out[n])) == 1)
		n++;
	t4_reader_close(r);
	return n;
}

/* The whole log through the index, as `info` reads it. */
static struct t4_index *index_of(const uint8_t *b, size_t len)
{
	struct t4_index *ix;
	struct t4_reader *r;
	struct t4_packet *p = malloc(sizeof(*p));
	int rc;

	cr_assert_eq(t4_index_new(&ix), 0);
	cr_assert_eq(t4_reader_open_mem(&r, b, len, quiet, NULL), 0, "%s", t4_errmsg());
	while ((rc = t4_reader_next(r, p)) == 1)
		cr_assert_geq(t4_index_add(ix, p), 0);
	cr_assert_eq(rc, 0, "%s", t4_errmsg());
	t4_reader_close(r);
	free(p);
	return ix;
}

/* ---- the writer's copies ------------------------------------------------------ */

/* gen-style metadata: the session, 3 domains, 5 events (test_log's shape). */
static void meta(int i, struct t4_packet *p)
{
	memset(p, 0, sizeof(*p));
	if (i == 0) {
		p->type = T4_PKT_SESSION;
		strcpy(p->session.host, "h");
		strcpy(p->session.cmdline, "t410trace record");
		p->session.period_ns = 1000000;
		p->session.session_id = SESSION_ID;
	} else if (i < 4) {
		p->type = T4_PKT_DOMAIN;
		p->domain.domain_id = (uint32_t)i;
		p->domain.kind = T4_DOM_UCF;
		p->domain.clock_event = i == 1 ? -1 : 0;
		snprintf(p->domain.name, sizeof(p->domain.name), "nvidia_ucf_pmu_%d", i);
	} else {
		p->type = T4_PKT_EVENT;
		p->event.domain_id = (uint32_t)(i % 3 + 1);
		p->event.index = (uint32_t)i;
		p->event.scale = 1;
		snprintf(p->event.name, sizeof(p->event.name), "ev%d", i);
		snprintf(p->event.spec, sizeof(p->event.spec), "nvidia_ucf_pmu/event=0x%x/", i);
	}
}
#define N_DESC 9

static void ret(uint64_t i, struct t4_packet *p)
{
	memset(p, 0, sizeof(*p));
	p->type = T4_PKT_RET;
	p->ret.trigger_id = i;
	p->ret.domain_id = 2;
	p->ret.read_begin_ns = 1000000000ull + i * 1000000;
	p->ret.read_end_ns = p->ret.read_begin_ns + 1500;
	p->ret.n_counts = 32;
	for (uint32_t k = 0; k < 32; k++)
		p->ret.counts[k] = t4_mix64(i * 64 + k); /* incompressible: chunks fill fast */
}

/* A log of 9 description packets, 700 returns, a bookmark and a thread
 * name after return 300, in chunks of chunk_bytes; `cmdline`: the
 * session's command line ("" for meta()'s). */
static void write_log_sized(const char *path, uint32_t chunk_bytes, const char *cmdline,
			    struct t4_log_stats *st)
{
	struct t4_log_opts o = { .path = path, .chunk_bytes = chunk_bytes,
				 .chunk_ms = UINT32_MAX };
	struct t4_log *log;
	struct t4_ring *ring;
	struct t4_packet p;

	cr_assert_eq(t4_log_open(&log, &o), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_ring(log, 1 << 20, T4_RING_WAIT, &ring), 0);
	cr_assert_eq(t4_log_start(log), 0);
	for (int i = 0; i < N_DESC; i++) {
		meta(i, &p);
		if (i == 0 && *cmdline)
			snprintf(p.session.cmdline, sizeof(p.session.cmdline), "%s", cmdline);
		cr_assert_eq(t4_ring_put(ring, &p), 0);
	}
	for (uint64_t i = 0; i < 700; i++) {
		ret(i, &p);
		cr_assert_eq(t4_ring_put(ring, &p), 0);
		if (i == 300) {
			p = (struct t4_packet){ .type = T4_PKT_BOOKMARK };
			p.bookmark = (struct t4_bookmark_pkt){ 7, 301, "load", 1300000000ull };
			cr_assert_eq(t4_ring_put(ring, &p), 0);
			p = (struct t4_packet){ .type = T4_PKT_TASK };
			p.task = (struct t4_task_pkt){ 10, 11, 1, 5, "worker" };
			cr_assert_eq(t4_ring_put(ring, &p), 0);
		}
	}
	cr_assert_eq(t4_log_close(log, NULL, st), 0, "%s", t4_errmsg());
}

static void write_log(const char *path, struct t4_log_stats *st)
{
	write_log_sized(path, 8192, "", st);
}

static bool is_meta(const struct t4_packet *p)
{
	return p->type != T4_PKT_REF && p->type != T4_PKT_RET && p->type != T4_PKT_STATUS;
}

/* Does the list of n packets hold q, copies and originals alike? */
static bool listed(const struct t4_packet *q, const struct t4_packet *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct t4_packet a = *q, b = list[i];
		a.copy = b.copy = false;
		if (tu_pkt_eq(&a, &b))
			return true;
	}
	return false;
}

/* Each chunk opens with copies of the previous chunk's metadata and, every
 * 8 chunks, of the whole description and the latest bookmark; nothing
 * else is copied, copies come first, every header carries the session's
 * tag, and the writer counts copies apart from packets. */
Test(selfdesc, writer_copies_open_each_chunk, .timeout = 60)
{
	char *dir = cli_tmpdir("t4sd"), path[256];
	static struct t4_packet pk[2][2048], desc[N_DESC + 1];
	size_t n_prev = 0, n_desc = N_DESC, copies = 0, bookmark_chunk = 0;
	struct t4_log_stats st;
	struct file f;

	snprintf(path, sizeof(path), "%s/w.t4t", dir);
	write_log(path, &st);
	load(path, &f);
	cr_assert_geq(f.n, 2 * FULL_EVERY + 2, "%zu chunks", f.n);
	for (int i = 0; i < N_DESC; i++)
		meta(i, &desc[i]);
	for (size_t k = 0; k < f.n; k++) {
		struct t4_packet *cur = pk[k % 2], *prev = pk[(k + 1) % 2];
		size_t n = chunk_packets(&f, k, cur, 2048), i = 0, n_copies;
		struct t4_chunk_hdr h;

		t4_chunk_hdr_unpack(f.b + f.off[k], &h);
		cr_assert_eq(h.tag, (uint32_t)SESSION_ID, "chunk %zu: the session's tag", k);
		for (; i < n && cur[i].copy; i++)
			cr_assert(listed(&cur[i], prev, n_prev) ||
				  (k % FULL_EVERY == 0 && listed(&cur[i], desc, n_desc)),
				  "chunk %zu: copy %zu (type %u) of nothing expected", k, i, cur[i].type);
		n_copies = i;
		copies += n_copies;
		/* what the copies must hold: every metadata packet of the chunk
		 * before, and every 8th chunk the description */
		for (size_t j = 0; j < n_prev; j++)
			if (is_meta(&prev[j]) && !prev[j].copy)
				cr_assert(listed(&prev[j], cur, n_copies) || !k,
					  "chunk %zu lacks a copy of chunk %zu's type %u", k, k - 1,
					  prev[j].type);
		for (size_t j = 0; k && k % FULL_EVERY == 0 && j < n_desc; j++)
			cr_assert(listed(&desc[j], cur, n_copies), "chunk %zu: no copy of description "
				  "packet %zu", k, j);
		for (; i < n; i++) {
			cr_assert(!cur[i].copy, "chunk %zu: a copy after its originals", k);
			if (cur[i].type == T4_PKT_BOOKMARK) {
				desc[N_DESC] = cur[i];
				n_desc = N_DESC + 1;
				bookmark_chunk = k;
			}
		}
		if (k != bookmark_chunk + 1 && k % FULL_EVERY && k != 1)
			cr_assert_eq(n_copies, 0u, "chunk %zu repeats what nobody lost", k);
		n_prev = n;
	}
	cr_assert_gt(bookmark_chunk, 0u);
	cr_assert_eq(st.copies, copies);
	cr_assert_eq(st.packets, N_DESC + 700 + 2 + 1, "copies are not packets");
	free(f.b);
	t4_rmtree(dir);
	free(dir);
}

/* The smallest chunks (4 KiB: at most 2 KiB of copies each) with a session
 * too long for any of them (a 2047-byte command line): the session is never
 * copied, but it holds up nothing: every 8th chunk still repeats every
 * domain and event. */
Test(selfdesc, a_copy_too_big_for_any_chunk_is_passed_over, .timeout = 60)
{
	char *dir = cli_tmpdir("t4sd"), path[256], cmd[T4_CMDLINE_MAX];
	static struct t4_packet pk[512];
	struct t4_log_stats st;
	struct file f;

	memset(cmd, 'x', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/w.t4t", dir);
	write_log_sized(path, 4096, cmd, &st);
	load(path, &f);
	cr_assert_geq(f.n, 2 * FULL_EVERY + 1);
	for (size_t k = FULL_EVERY; k < f.n; k += FULL_EVERY) {
		size_t n = chunk_packets(&f, k, pk, 512), domains = 0, events = 0;
		for (size_t i = 0; i < n && pk[i].copy; i++) {
			cr_assert_neq(pk[i].type, T4_PKT_SESSION);
			domains += pk[i].type == T4_PKT_DOMAIN;
			events += pk[i].type == T4_PKT_EVENT;
		}
		cr_assert(domains == 3 && events == 5, "chunk %zu: %zu domains, %zu events", k,
			  domains, events);
	}
	free(f.b);
	t4_rmtree(dir);
	free(dir);
}

/* Damage any one chunk of that log (its magic and frame): the rest still
 * says everything: the session, every domain and event, the bookmark's and
 * the thread's names (when their chunk is not the last one). */
Test(selfdesc, any_single_damaged_chunk_loses_only_itself, .timeout = 60)
{
	char *dir = cli_tmpdir("t4sd"), path[256];
	struct t4_log_stats st;
	struct file f;

	static struct t4_packet pk[2048];
	size_t meta_in[512] = { 0 }, copied[512] = { 0 }, all_meta = 0;

	snprintf(path, sizeof(path), "%s/w.t4t", dir);
	write_log(path, &st);
	load(path, &f);
	for (size_t k = 0; k < f.n; k++) { /* what each chunk holds, originals */
		size_t n = chunk_packets(&f, k, pk, 2048);
		for (size_t i = 0; i < n; i++) {
			bool m = !pk[i].copy && is_meta(&pk[i]) && pk[i].type != T4_PKT_TASK;
			meta_in[k] += m || (!pk[i].copy && pk[i].type == T4_PKT_STATUS);
			copied[k] += !pk[i].copy && is_meta(&pk[i]);
		}
		all_meta += meta_in[k];
	}
	for (size_t k = 0; k < f.n; k++) {
		uint8_t *b = damaged(&f, k, true);
		struct t4_index *ix = index_of(b, f.len);
		const struct t4_index_counts *c = t4_index_counts(ix);
		struct t4_packet p;

		cr_assert_not_null(t4_index_session(ix), "chunk %zu damaged: no session", k);
		cr_assert_eq(t4_index_session(ix)->session_id, SESSION_ID);
		for (int i = 1; i < N_DESC; i++) {
			meta(i, &p);
			if (p.type == T4_PKT_DOMAIN) {
				const struct t4_index_domain *d = t4_index_domain(ix, p.domain.domain_id);
				cr_assert(d && d->described && !strcmp(d->d.name, p.domain.name) &&
					  d->d.clock_event == p.domain.clock_event,
					  "chunk %zu damaged: domain %u", k, p.domain.domain_id);
			} else {
				cr_assert_not_null(t4_index_event(ix, p.event.domain_id, p.event.index),
						   "chunk %zu damaged: event %d", k, i);
			}
		}
		cr_assert_str_eq(t4_index_bookmark_name(ix, 7), "load", "chunk %zu damaged", k);
		cr_assert_eq(c->tasks, 1u, "chunk %zu damaged: the thread's name", k);
		cr_assert_eq(c->bookmark_packets, 1u, "chunk %zu damaged: one bookmark", k);
		/* nothing twice: the originals left, and the copies that stand
		 * in for those of chunk k (the next chunk holds them: none for the
		 * last one, whose status packet is never copied) */
		cr_assert_eq(c->meta, all_meta - meta_in[k], "chunk %zu damaged", k);
		cr_assert_eq(c->restored, k + 1 < f.n ? copied[k] : 0, "chunk %zu damaged", k);
		t4_index_free(ix);
		free(b);
	}
	free(f.b);
	t4_rmtree(dir);
	free(dir);
}

/* ---- recordings made by the binary ---------------------------------------------- */

/* What the decoder made of each domain, by domain ID. */
struct dview {
	uint32_t id;
	char name[T4_NAME_MAX], event[T4_MAX_COUNTERS][T4_NAME_MAX];
	uint32_t n_counts;
	bool reference_clocked;
	enum t4_clock_model model;
	double freq_hz;        /* of its last clock segment (both logs end alike) */
	t4_u128 totals[T4_MAX_COUNTERS];
};
struct view {
	struct dview d[64];
	size_t n;
};

static int snapshot(void *ud, const struct t4_decoder *dec)
{
	struct view *v = ud;

	v->n = t4_decoder_n_domains(dec);
	cr_assert_leq(v->n, T4_ARRAY_LEN(v->d));
	for (size_t i = 0; i < v->n; i++) {
		const struct t4_dec_domain *d = t4_decoder_domain_at(dec, i);
		struct dview *x = &v->d[i];
		x->id = d->id;
		snprintf(x->name, sizeof(x->name), "%s", d->name);
		x->n_counts = d->n_counts;
		for (uint32_t e = 0; e < d->n_counts; e++)
			snprintf(x->event[e], sizeof(x->event[e]), "%s",
				 d->event_name[e] ? d->event_name[e] : "");
		x->reference_clocked = d->clock.reference_clocked;
		x->model = d->clock.model;
		size_t n_seg = 0;
		const struct t4_clock_segment *seg = t4_decoder_segments(dec, i, &n_seg);
		x->freq_hz = n_seg ? seg[n_seg - 1].freq_hz : d->clock.freq_hz;
		memcpy(x->totals, d->totals, sizeof(x->totals));
	}
	return 0;
}

static void decode_view(const char *path, struct view *v)
{
	struct t4_decode_opts o = { .model = T4_CLOCK_RATE };
	struct t4_sink_ops ops = { .finish = snapshot };

	memset(v, 0, sizeof(*v));
	cr_assert_eq(t4_decode_file(path, &o, &ops, v), 0, "%s: %s", path, t4_errmsg());
}

static const struct dview *by_id(const struct view *v, uint32_t id)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->d[i].id == id)
			return &v->d[i];
	return NULL;
}

/* Per domain ID and event, the counts of the return packets of b[0..len)
 * (first_only: of each domain's first return only). */
struct sums {
	t4_u128 c[64][T4_MAX_COUNTERS];
	bool seen[64];
};

static void sum_returns(const uint8_t *b, size_t len, bool first_only, struct sums *s)
{
	struct t4_reader *r;
	struct t4_packet p;

	memset(s, 0, sizeof(*s));
	cr_assert_eq(t4_reader_open_mem(&r, b, len, quiet, NULL), 0, "%s", t4_errmsg());
	while (t4_reader_next(r, &p) == 1) {
		if (p.type != T4_PKT_RET || p.ret.domain_id >= 64 ||
		    (first_only && s->seen[p.ret.domain_id]))
			continue;
		s->seen[p.ret.domain_id] = true;
		for (uint32_t i = 0; i < p.ret.n_counts; i++)
			s->c[p.ret.domain_id][i] += p.ret.counts[i];
	}
	t4_reader_close(r);
}

/* Record `args` into dir/name with the binary; the log's chunks. */
static void record(const char *dir, const char *name, const char *args, struct file *f)
{
	char out[4096], path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(cli_run(out, sizeof(out), "'%s' record -q %s -o '%s' 2>&1", cli_bin(), args,
			     path), 0, "record %s: %s", args, out);
	load(path, f);
}

/* The damaged log (iy) still describes everything the whole one (ix) does:
 * the session, every domain (name, clock, scheduler) and its events. */
static void expect_same_description(const struct t4_index *ix, const struct t4_index *iy,
				    const char *what)
{
	cr_assert_not_null(t4_index_session(iy), "%s", what);
	cr_assert(t4_session_same(t4_index_session(iy), t4_index_session(ix)), "%s", what);
	cr_assert_neq(t4_index_session(ix)->session_id, 0u, "%s: no session ID", what);
	cr_assert_eq(t4_index_n_domains(iy), t4_index_n_domains(ix), "%s", what);
	for (size_t i = 0; i < t4_index_n_domains(ix); i++) {
		const struct t4_index_domain *w = t4_index_domain_at(ix, i),
					     *d = t4_index_domain(iy, w->d.domain_id);
		cr_assert(d && d->described, "%s: domain %u", what, w->d.domain_id);
		cr_assert_str_eq(d->d.name, w->d.name);
		cr_assert(d->d.clock_event == w->d.clock_event && d->d.sched_id == w->d.sched_id &&
			  d->d.nominal_hz == w->d.nominal_hz, "%s", w->d.name);
		cr_assert_eq(d->n_events, w->n_events, "%s", w->d.name);
	}
}

static void done_with(struct t4_index *ix, struct t4_index *iy, uint8_t *b, struct file *f,
		      char *dir)
{
	t4_index_free(ix);
	t4_index_free(iy);
	free(b);
	free(f->b);
	t4_rmtree(dir);
	free(dir);
}

/* A 17-chunk recording of the simulated Tegra410 in virtual time, its first
 * chunk damaged every way (bits of bytes 0-7 flipped, garbage in its frame):
 * decoded, every domain keeps its name, its events and its clock model
 * (before issue 16.5: "not a t410trace log", or 34 domains named domainN
 * and clocked by the reference clock); the index's totals are the whole
 * log's less exactly what chunk 0 held, the decoder's less that and each
 * domain's first return after it (its counts have no start). */
Test(selfdesc, virtual_recording_with_a_damaged_first_chunk, .timeout = 120)
{
	char *dir = cli_tmpdir("t4sd"), path[512];
	static struct view whole, dmg;
	static struct sums chunk0, first;
	struct file f;
	uint8_t *b;

	record(dir, "v.t4t", "--sim=5 --virtual --duration 20s", &f);
	cr_assert_geq(f.n, 17u, "%zu chunks", f.n);
	b = damaged(&f, 0, true);
	snprintf(path, sizeof(path), "%s/dmg.t4t", dir);
	save(path, b, f.len);
	decode_view(path, &dmg);
	snprintf(path, sizeof(path), "%s/v.t4t", dir);
	decode_view(path, &whole);
	cr_assert_eq(dmg.n, whole.n);
	cr_assert_eq(whole.n, 34u);
	sum_returns(f.b, f.off[1], false, &chunk0);
	sum_returns(b, f.len, true, &first);
	for (size_t i = 0; i < whole.n; i++) {
		const struct dview *w = &whole.d[i], *d = by_id(&dmg, w->id);
		cr_assert_not_null(d, "domain %u gone", w->id);
		cr_assert_str_eq(d->name, w->name);
		cr_assert_eq(d->n_counts, w->n_counts, "%s", w->name);
		for (uint32_t e = 0; e < w->n_counts; e++) {
			cr_assert_str_eq(d->event[e], w->event[e], "%s", w->name);
			cr_assert(d->totals[e] + chunk0.c[w->id][e] + first.c[w->id][e] ==
				  w->totals[e], "%s %s: the totals lost more than chunk 0", w->name,
				  w->event[e]);
		}
		cr_assert_eq(d->reference_clocked, w->reference_clocked, "%s", w->name);
		cr_assert_eq(d->model, w->model, "%s", w->name);
		cr_assert(fabs(d->freq_hz - w->freq_hz) <= 1e-5 * w->freq_hz,
			  "%s: %.3f Hz, whole log %.3f Hz", w->name, d->freq_hz, w->freq_hz);
		cr_assert(w->reference_clocked || w->freq_hz > 1e8, "%s: no clock fit", w->name);
	}

	/* the index (what `info` says): the same description, every total
	 * less exactly chunk 0's, every metadata packet once */
	struct t4_index *ix = index_of(f.b, f.len), *iy = index_of(b, f.len);
	expect_same_description(ix, iy, "virtual");
	for (size_t i = 0; i < t4_index_n_domains(ix); i++) {
		const struct t4_index_domain *w = t4_index_domain_at(ix, i),
					     *d = t4_index_domain(iy, w->d.domain_id);
		for (uint32_t e = 0; e < w->n_counts; e++)
			cr_assert(d->totals[e] + chunk0.c[w->d.domain_id][e] == w->totals[e]);
	}
	cr_assert_eq(t4_index_counts(iy)->restored, t4_index_counts(ix)->meta -
						    t4_index_counts(iy)->meta);
	cr_assert_eq(t4_index_n_bookmarks(iy), t4_index_n_bookmarks(ix), "the bookmark chunk 0 "
		     "held comes back from its copy");
	done_with(ix, iy, b, &f, dir);
}

/* Live recordings describe themselves too: with the first chunk damaged,
 * the session, every domain (name, clock, scheduler) and event are still
 * in the log, exactly as in the whole one. */
static void live_recording(const char *args)
{
	char *dir = cli_tmpdir("t4sd");
	struct file f;

	record(dir, "l.t4t", args, &f);
	cr_assert_geq(f.n, 3u, "%s: %zu chunks", args, f.n);
	uint8_t *b = damaged(&f, 0, true);
	struct t4_index *ix = index_of(f.b, f.len), *iy = index_of(b, f.len);
	expect_same_description(ix, iy, args);
	done_with(ix, iy, b, &f, dir);
}

Test(selfdesc, live_simulated_recording_with_a_damaged_first_chunk, .timeout = 60)
{
	live_recording("--sim=2 --duration 500ms --trigger user");
}

Test(selfdesc, live_host_recording_with_a_damaged_first_chunk, .timeout = 60)
{
	t4t_need_perf();
	live_recording("--duration 500ms -e cpu-clock,context-switches -b warmup");
}
