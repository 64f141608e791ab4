/* index.c - what a log holds, in one streaming pass: the metadata tables
 * (session, domains, events, bookmarks, status), per-scheduler trigger
 * ranges, packet counts and per-event totals. `info` is this alone; the
 * decoder keeps one too.
 *
 * Trade-offs: IDs of any size work (FORMAT.md allows u32 domain, bookmark
 * and scheduler IDs): they go through open-addressing maps, so a log with
 * domain 5000 or scheduler 70000 is indexed like any other, and a hostile
 * log costs O(1) per packet. Tables are capped (T4_INDEX_MAX_*) so that
 * memory stays bounded whatever the log holds; packets past a cap are
 * counted as untracked. A domain or event packet repeated in a log with
 * the same description changes nothing; one that describes its key
 * (domain ID, domain and event index) otherwise contradicts the log: the
 * first description holds, the contradiction is counted (redescribed),
 * and the domain's returns from there on are counted apart, in no total
 * (FORMAT.md section 6): a count is never put under a name it may not be
 * the count of. Likewise a bookmark ID keeps its first name (a packet
 * naming it otherwise is counted: bookmarks_renamed).
 *
 * Copies (FORMAT.md 4.8: metadata a writer repeats in later chunks) count
 * nothing: a copy is taken like its original only when it brings back
 * what damage lost (a domain never described, a bookmark or thread name
 * never seen), and t4_index_add() says so, for the decoder to pass on.
 * What "seen" means per type: the session, domain and event tables
 * themselves; bookmarks by set time (a writer writes them in set order and
 * copies them in the same order); threads by name time per thread ID;
 * GPU contexts by context.
 *
 * A return packet (nearly every packet) skips the switch: the decoder
 * calls dec_index_ret() itself, and a domain ID of the direct table is
 * looked up inline; or, for a domain it decodes, adds the packet to the
 * tables it keeps pointers to (dec_index_ret_to(): no call, no second
 * look-up of the domain).
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define T4_INDEX_MAX_DOMAINS 65536u
#define T4_INDEX_MAX_EVENTS (1u << 20)
#define T4_INDEX_MAX_SCHEDS 4096u
#define T4_INDEX_MAX_BOOKMARK_IDS 65536u
#define T4_INDEX_MAX_BOOKMARK_PKTS 100000u
#define T4_INDEX_MAX_NAMED (1u << 20) /* threads and GPU contexts remembered */

/* A domain and the slots of its events. */
struct ixdom {
	struct t4_index_domain pub;
	struct t4_idmap ev_map; /* event index -> slot in events */
	struct t4_index_seen counted; /* the triggers whose counts are in its totals */
};

struct t4_index {
	bool have_session, have_status;
	bool no_totals;
	uint64_t trig_at_status; /* trigger_pkts() at the last status packet */
	struct t4_session_pkt session;
	struct t4_status_pkt status;
	struct t4_index_host host; /* samples 0: none */
	struct t4_index_counts counts;
	uint64_t origin_ns; /* the earliest reference time (0: no reference yet) */

	/* one allocation per domain: pointers to it stay valid while the
	 * table grows (the decoder keeps them) */
	struct ixdom **doms;
	size_t n_doms, cap_doms;
	struct t4_idmap dom_map;

	struct t4_event_pkt *events;
	size_t n_events, cap_events;

	struct t4_index_sched *scheds; /* sorted by ID */
	size_t n_scheds, cap_scheds;

	struct t4_bookmark_pkt *bm_ids; /* last packet per ID */
	size_t n_bm_ids, cap_bm_ids;
	struct t4_idmap bm_map;
	struct t4_idmap bm_names;        /* a name's hash (+ probe) -> its first ID's slot */
	struct t4_idmap bm_holder;       /* an ID named as an earlier one -> that one's slot */
	struct t4_bookmark_pkt *bm_pkts; /* every packet, log order */
	size_t n_bm_pkts, cap_bm_pkts;
	uint64_t bm_last_set_ns;         /* the latest set_ns taken */

	/* what copies of thread and GPU context names are checked against */
	struct t4_idmap task_map;        /* tid -> slot in task_ns */
	uint64_t *task_ns;               /* mono_ns of its last name */
	size_t n_tasks, cap_tasks;
	struct t4_idmap ctx_map;         /* folded context -> slot in ctxs */
	uint64_t *ctxs;
	size_t n_ctxs, cap_ctxs;
};

/* ---- ID map ---------------------------------------------------------------- */

static size_t hash32(uint32_t k, size_t cap)
{
	return (size_t)((k * 2654435761u) ^ (k >> 16)) & (cap - 1);
}

int64_t dec_idmap_get_hashed(const struct t4_idmap *m, uint32_t key)
{
	if (!m->cap)
		return -1;
	for (size_t i = hash32(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return -1;
		if (m->keys[i] == key)
			return (int64_t)m->vals[i] - 1;
	}
}

static int idmap_grow(struct t4_idmap *m)
{
	struct t4_idmap g = { .cap = m->cap ? m->cap * 2 : 16 };

	g.keys = calloc(g.cap, sizeof(*g.keys));
	g.vals = calloc(g.cap, sizeof(*g.vals));
	if (!g.keys || !g.vals) {
		free(g.keys);
		free(g.vals);
		return t4_err(ENOMEM, "out of memory for an ID table");
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->vals[i])
			dec_idmap_put(&g, m->keys[i], m->vals[i] - 1);
	free(m->keys);
	free(m->vals);
	m->keys = g.keys;
	m->vals = g.vals;
	m->cap = g.cap;
	m->n = g.n;
	return 0;
}

int dec_idmap_put(struct t4_idmap *m, uint32_t key, uint32_t val)
{
	int rc;

	if (key < T4_IDMAP_DIRECT) {
		m->direct[key] = val + 1;
		return 0;
	}
	if ((m->n + 1) * 4 > m->cap * 3 && (rc = idmap_grow(m)) < 0)
		return rc;
	for (size_t i = hash32(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i]) {
			m->keys[i] = key;
			m->vals[i] = val + 1;
			m->n++;
			return 0;
		}
		if (m->keys[i] == key) {
			m->vals[i] = val + 1;
			return 0;
		}
	}
}

void dec_idmap_free(struct t4_idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

int dec_vec_room(void **v, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*v, ncap * elem);
	if (!p)
		return t4_err(ENOMEM, "out of memory for the log's tables");
	*v = p;
	*cap = ncap;
	return 0;
}

/* ---- tables ---------------------------------------------------------------- */

int t4_index_new(struct t4_index **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : t4_err(ENOMEM, "out of memory");
}

void t4_index_free(struct t4_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n_doms; i++) {
		dec_idmap_free(&ix->doms[i]->ev_map);
		free(ix->doms[i]);
	}
	free(ix->doms);
	dec_idmap_free(&ix->dom_map);
	free(ix->events);
	free(ix->scheds);
	free(ix->bm_ids);
	dec_idmap_free(&ix->bm_map);
	dec_idmap_free(&ix->bm_names);
	dec_idmap_free(&ix->bm_holder);
	free(ix->bm_pkts);
	dec_idmap_free(&ix->task_map);
	free(ix->task_ns);
	dec_idmap_free(&ix->ctx_map);
	free(ix->ctxs);
	free(ix);
}

/* The domain entry of id, created on first sight; NULL past the cap
 * (counted untracked) or on ENOMEM (*err set). */
static struct ixdom *dom_get_new(struct t4_index *ix, uint32_t id, int *err)
{
	int64_t slot;
	struct ixdom *x;

	if ((slot = dec_idmap_get(&ix->dom_map, id)) >= 0)
		return ix->doms[slot];
	if (ix->n_doms >= T4_INDEX_MAX_DOMAINS) {
		ix->counts.untracked++;
		return NULL;
	}
	if ((*err = dec_vec_room((void **)&ix->doms, &ix->cap_doms, ix->n_doms,
				sizeof(*ix->doms))) < 0)
		return NULL;
	if (!(x = calloc(1, sizeof(*x)))) {
		*err = t4_err(ENOMEM, "out of memory for the log's tables");
		return NULL;
	}
	if ((*err = dec_idmap_put(&ix->dom_map, id, (uint32_t)ix->n_doms)) < 0) {
		free(x);
		return NULL;
	}
	ix->doms[ix->n_doms++] = x;
	struct t4_index_domain *d = &x->pub;
	d->d.domain_id = id;
	d->d.cpu = -1;
	d->d.clock_event = -1;
	snprintf(d->d.name, sizeof(d->d.name), "domain%u", id);
	return x;
}

/* The same, inline for a domain in the direct table: once per return
 * packet, and most logs' IDs are there. */
static inline struct ixdom *dom_get(struct t4_index *ix, uint32_t id, int *err)
{
	if (id < T4_IDMAP_DIRECT && ix->dom_map.direct[id])
		return ix->doms[ix->dom_map.direct[id] - 1];
	return dom_get_new(ix, id, err);
}

/* ---- descriptions ---------------------------------------------------------- */

static bool same_domain(const struct t4_domain_pkt *a, const struct t4_domain_pkt *b)
{
	return a->domain_id == b->domain_id && a->kind == b->kind && a->cpu == b->cpu &&
	       a->clock_event == b->clock_event && a->nominal_hz == b->nominal_hz &&
	       a->sched_id == b->sched_id && !strcmp(a->name, b->name);
}

static bool same_event(const struct t4_event_pkt *a, const struct t4_event_pkt *b)
{
	return a->domain_id == b->domain_id && a->index == b->index &&
	       a->perf_type == b->perf_type && a->flags == b->flags && a->config == b->config &&
	       a->config1 == b->config1 && a->config2 == b->config2 &&
	       !memcmp(&a->scale, &b->scale, sizeof(a->scale)) && !strcmp(a->pmu, b->pmu) &&
	       !strcmp(a->name, b->name) && !strcmp(a->spec, b->spec) &&
	       !strcmp(a->unit, b->unit);
}

/* A domain or event packet that describes again, otherwise, what the log
 * described (a writer describes each once: FORMAT.md 6): counted, not
 * taken. The first description holds, and what the domain counts from
 * here on is not decoded: counts read after it may be another event's,
 * and no value is put under a name that may not be its own. */
static int redescribe(struct t4_index *ix, struct t4_index_domain *d)
{
	ix->counts.redescribed += !d->redescribed;
	d->redescribed += d->redescribed < UINT32_MAX;
	return T4_INDEX_REDESCRIBED;
}

static int add_event(struct t4_index *ix, const struct t4_event_pkt *e)
{
	int err = 0;
	struct ixdom *x = dom_get(ix, e->domain_id, &err);

	if (!x)
		return err;
	struct t4_index_domain *d = &x->pub;
	struct t4_idmap *em = &x->ev_map;
	int64_t slot = dec_idmap_get(em, e->index);

	if (slot >= 0)
		return same_event(&ix->events[slot], e) ? 0 : redescribe(ix, d);
	if (e->index < T4_MAX_COUNTERS && (e->flags & T4_EV_GAUGE))
		d->gauges |= 1ull << e->index;
	if (ix->n_events >= T4_INDEX_MAX_EVENTS) {
		ix->counts.untracked++;
		return 0;
	}
	if ((err = dec_vec_room((void **)&ix->events, &ix->cap_events, ix->n_events,
			       sizeof(*e))) < 0 ||
	    (err = dec_idmap_put(em, e->index, (uint32_t)ix->n_events)) < 0)
		return err;
	ix->events[ix->n_events++] = *e;
	d->n_events++;
	return 0;
}

static int add_domain(struct t4_index *ix, const struct t4_domain_pkt *p)
{
	int err = 0;
	struct ixdom *x = dom_get(ix, p->domain_id, &err);

	if (!x)
		return err;
	if (x->pub.described)
		return same_domain(&x->pub.d, p) ? 0 : redescribe(ix, &x->pub);
	x->pub.d = *p;
	x->pub.described = true;
	return 0;
}

static struct t4_index_sched *sched_get(struct t4_index *ix, uint32_t id, int *err)
{
	size_t lo = 0, hi = ix->n_scheds;

	while (lo < hi) { /* few schedulers: binary search, insert sorted */
		size_t mid = (lo + hi) / 2;
		if (ix->scheds[mid].id == id)
			return &ix->scheds[mid];
		if (ix->scheds[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (ix->n_scheds >= T4_INDEX_MAX_SCHEDS) {
		ix->counts.untracked++;
		return NULL;
	}
	if ((*err = dec_vec_room((void **)&ix->scheds, &ix->cap_scheds, ix->n_scheds,
				sizeof(*ix->scheds))) < 0)
		return NULL;
	memmove(&ix->scheds[lo + 1], &ix->scheds[lo],
		(ix->n_scheds - lo) * sizeof(*ix->scheds));
	ix->n_scheds++;
	ix->scheds[lo] = (struct t4_index_sched){ .id = id };
	return &ix->scheds[lo];
}

/* How far a scheduler's trigger IDs may run ahead of its reference time:
 * one ID per period on the grid, commands' single triggers on top (a few
 * thousand a second at most), and slack. */
#define REF_ID_SLACK 4096u
#define REF_ID_PER_PERIOD 16u

bool t4_index_ref_plausible(const struct t4_index *ix, const struct t4_ref_pkt *r)
{
	const struct t4_index_sched *s = t4_index_sched(ix, r->sched_id);
	uint64_t period = ix->have_session && ix->session.period_ns ? ix->session.period_ns : 0;

	if (r->trigger_id > T4_TRIGGER_ID_MAX)
		return false; /* no recording counts that far */
	if (!s || !s->refs || r->trigger_id <= s->last)
		return true; /* a first one, or late: nothing to weigh it against */
	uint64_t jump = r->trigger_id - s->last;
	uint64_t dt = r->ref_ns > s->last_ns ? r->ref_ns - s->last_ns : 0;
	uint64_t allowed = period ? dt / period * REF_ID_PER_PERIOD : dt / 1000; /* 1 us */
	return jump <= REF_ID_SLACK || jump - REF_ID_SLACK <= allowed;
}

static int add_ref(struct t4_index *ix, const struct t4_ref_pkt *r)
{
	int err = 0;
	struct t4_index_sched *s;

	if (!t4_index_ref_plausible(ix, r)) {
		ix->counts.implausible_refs++; /* damage: its ID jumps further than its time */
		return 0;
	}
	s = sched_get(ix, r->sched_id, &err);
	ix->counts.refs++;
	ix->counts.ref_overruns += r->overruns;
	if (!ix->origin_ns || (r->ref_ns && r->ref_ns < ix->origin_ns))
		ix->origin_ns = r->ref_ns;
	if (!s)
		return err;
	if (!dec_seen_first(&s->seen, r->trigger_id)) {
		/* a copy: one trigger, and its overruns are not missed again */
		s->duplicates++;
		ix->counts.duplicates++;
		ix->counts.ref_overruns -= r->overruns;
		s->refs++;
		return 0;
	}
	if (s->refs == 0 || r->trigger_id < s->first) {
		s->first = r->trigger_id;
		s->first_ns = r->ref_ns;
		s->first_overruns = r->overruns;
	}
	if (s->refs == 0 || r->trigger_id > s->last) {
		s->last = r->trigger_id;
		s->last_ns = r->ref_ns;
	}
	s->refs++;
	s->overruns += r->overruns;
	return 0;
}

/* A return's counts into its domain's totals (a gauge's total is its
 * latest level). */
static __attribute__((noinline)) void add_totals(struct t4_index_domain *d,
						 const struct t4_ret_pkt *r)
{
	uint32_t n = r->n_counts;

	if (!d->gauges) { /* the usual case: counters only */
		for (uint32_t i = 0; i < n; i++)
			d->totals[i] += r->counts[i];
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		d->totals[i] = (d->gauges >> i & 1 ? 0 : d->totals[i]) + r->counts[i];
}

/* Whether this return is the first of its trigger among the domain's
 * latest 64 triggers: a second copy (a packet the log holds twice) adds
 * nothing to the totals, as the decoder drops it. Returns further back
 * than the window are taken (the decoder's reorder window is shorter: it
 * says what it drops as too late). A failed read is no sample: a later
 * return of its trigger is still the first. */
static bool first_return(struct ixdom *x, const struct t4_ret_pkt *r)
{
	return (r->flags & T4_RET_READ_FAILED) || dec_seen_first(&x->counted, r->trigger_id);
}

int dec_index_ret(struct t4_index *ix, const struct t4_ret_pkt *r)
{
	int err = 0;
	struct ixdom *x = dom_get(ix, r->domain_id, &err);

	if (!x) {
		dec_index_ret_to(&ix->counts, NULL, r);
		return err;
	}
	dec_index_ret_to(&ix->counts, &x->pub, r);
	if (x->pub.redescribed) { /* not decoded: in no total */
		x->pub.rets_redescribed++;
		ix->counts.rets_redescribed++;
		return 0;
	}
	if (!ix->no_totals && first_return(x, r))
		add_totals(&x->pub, r);
	return 0;
}

struct t4_index_counts *dec_index_counts_rw(struct t4_index *ix)
{
	return ix->no_totals ? &ix->counts : NULL;
}

struct t4_index_domain *dec_index_domain_rw(struct t4_index *ix, uint32_t id)
{
	int64_t slot = ix->no_totals ? dec_idmap_get(&ix->dom_map, id) : -1;

	return slot >= 0 ? &ix->doms[slot]->pub : NULL;
}

void t4_index_no_totals(struct t4_index *ix)
{
	ix->no_totals = true;
}

void t4_index_damage(struct t4_index *ix)
{
	ix->counts.damage++;
}

/* A bookmark packet as the index keeps it: named as its ID's first packet
 * named it. An ID named otherwise later contradicts the log (FORMAT.md
 * 4.4: one ID per distinct name; nothing says which name is true): the
 * first name holds, and the packet, counted as renamed, still sets its
 * phase. */
static struct t4_bookmark_pkt named(struct t4_index *ix, const struct t4_bookmark_pkt *b,
				    int64_t slot)
{
	struct t4_bookmark_pkt k = *b;

	if (slot >= 0 && strcmp(ix->bm_ids[slot].name, b->name)) {
		ix->counts.bookmarks_renamed++;
		memcpy(k.name, ix->bm_ids[slot].name, sizeof(k.name));
	}
	return k;
}

/* The names: each one's first ID, found by the name's hash (FNV-1a) in
 * bm_names, one key a probe (hash, hash + 1, ...); a name past NAME_PROBES
 * probes (a crafted log's colliding names) is not looked up: taken as
 * new, so that a packet costs O(1) whatever the log holds. */
#define NAME_PROBES 64

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* The slot in bm_ids of the first ID named name, or -1, and then in *key
 * the key it may take in bm_names (-1: none free). */
static int64_t name_find(const struct t4_index *ix, const char *name, int64_t *key)
{
	uint32_t h = name_hash(name);

	*key = -1;
	for (uint32_t i = 0; i < NAME_PROBES; i++) {
		int64_t slot = dec_idmap_get(&ix->bm_names, h + i);
		if (slot < 0) {
			*key = (uint32_t)(h + i);
			return -1;
		}
		if (!strcmp(ix->bm_ids[slot].name, name))
			return slot;
	}
	return -1;
}

/* A new ID, at slot, named as ID `held` (a slot) named before it: the
 * mirror of a renamed ID (FORMAT.md 4.4: one ID per name), the first ID
 * holds: the new one's phases are the first one's (t4_index_bookmark_holder),
 * and its packets are counted as reused. Else the name is the new ID's.
 * ID 0 (no bookmark) takes no part. */
static int name_take(struct t4_index *ix, size_t slot, int64_t held, int64_t key)
{
	if (!ix->bm_ids[slot].bookmark_id)
		return 0; /* 0 is no bookmark (a crafted log names it): never a holder */
	if (held >= 0) {
		ix->counts.bookmarks_reused++;
		return dec_idmap_put(&ix->bm_holder, ix->bm_ids[slot].bookmark_id, (uint32_t)held);
	}
	return key >= 0 ? dec_idmap_put(&ix->bm_names, (uint32_t)key, (uint32_t)slot) : 0;
}

static int add_bookmark(struct t4_index *ix, const struct t4_bookmark_pkt *b)
{
	int64_t slot = dec_idmap_get(&ix->bm_map, b->bookmark_id), held, key;
	struct t4_bookmark_pkt k = named(ix, b, slot);
	int err;

	ix->counts.bookmark_packets++;
	if (k.set_ns > ix->bm_last_set_ns)
		ix->bm_last_set_ns = k.set_ns;
	if (ix->n_bm_pkts < T4_INDEX_MAX_BOOKMARK_PKTS) {
		if ((err = dec_vec_room((void **)&ix->bm_pkts, &ix->cap_bm_pkts,
				       ix->n_bm_pkts, sizeof(k))) < 0)
			return err;
		ix->bm_pkts[ix->n_bm_pkts++] = k;
	}
	if (slot >= 0) {
		ix->bm_ids[slot] = k;
		ix->counts.bookmarks_reused += dec_idmap_get(&ix->bm_holder, k.bookmark_id) >= 0;
		return 0;
	}
	if (ix->n_bm_ids >= T4_INDEX_MAX_BOOKMARK_IDS) {
		ix->counts.untracked++;
		return 0;
	}
	held = name_find(ix, k.name, &key);
	if ((err = dec_vec_room((void **)&ix->bm_ids, &ix->cap_bm_ids, ix->n_bm_ids,
			       sizeof(k))) < 0 ||
	    (err = dec_idmap_put(&ix->bm_map, k.bookmark_id, (uint32_t)ix->n_bm_ids)) < 0)
		return err;
	ix->bm_ids[ix->n_bm_ids++] = k;
	return name_take(ix, ix->n_bm_ids - 1, held, key);
}

/* ---- names and copies ------------------------------------------------------ */

/* A thread named at mono_ns: remembered (the latest name time per thread). */
static int add_task(struct t4_index *ix, const struct t4_task_pkt *t)
{
	int64_t slot = dec_idmap_get(&ix->task_map, t->tid);
	int err;

	ix->counts.tasks++;
	if (slot >= 0) {
		if (t->mono_ns > ix->task_ns[slot])
			ix->task_ns[slot] = t->mono_ns;
		return 0;
	}
	if (ix->n_tasks >= T4_INDEX_MAX_NAMED)
		return 0;
	if ((err = dec_vec_room((void **)&ix->task_ns, &ix->cap_tasks, ix->n_tasks,
			       sizeof(*ix->task_ns))) < 0 ||
	    (err = dec_idmap_put(&ix->task_map, t->tid, (uint32_t)ix->n_tasks)) < 0)
		return err;
	ix->task_ns[ix->n_tasks++] = t->mono_ns;
	return 0;
}

static uint32_t ctx_key(uint64_t context)
{
	return (uint32_t)(context ^ context >> 32);
}

static bool ctx_known(const struct t4_index *ix, uint64_t context)
{
	int64_t slot = dec_idmap_get(&ix->ctx_map, ctx_key(context));

	return slot >= 0 && ix->ctxs[slot] == context;
}

static int add_gpu_ctx(struct t4_index *ix, const struct t4_gpu_ctx_pkt *c)
{
	int err;

	if (dec_idmap_get(&ix->ctx_map, ctx_key(c->context)) >= 0 ||
	    ix->n_ctxs >= T4_INDEX_MAX_NAMED)
		return 0; /* known, or another context with the same key: not kept */
	if ((err = dec_vec_room((void **)&ix->ctxs, &ix->cap_ctxs, ix->n_ctxs,
			       sizeof(*ix->ctxs))) < 0 ||
	    (err = dec_idmap_put(&ix->ctx_map, ctx_key(c->context), (uint32_t)ix->n_ctxs)) < 0)
		return err;
	ix->ctxs[ix->n_ctxs++] = c->context;
	return 0;
}

/* Does a copy bring back something the index does not hold (its original
 * was in a damaged chunk), or change it? */
static bool copy_is_news(const struct t4_index *ix, const struct t4_packet *p)
{
	const struct t4_index_domain *d;
	const struct t4_event_pkt *e;
	int64_t slot;

	switch (p->type) {
	case T4_PKT_SESSION:
		return !ix->have_session;
	case T4_PKT_DOMAIN:
		d = t4_index_domain(ix, p->domain.domain_id);
		return !d || !d->described || !same_domain(&d->d, &p->domain);
	case T4_PKT_EVENT:
		e = t4_index_event(ix, p->event.domain_id, p->event.index);
		return !e || !same_event(e, &p->event);
	case T4_PKT_BOOKMARK:
		return !t4_index_bookmark_name(ix, p->bookmark.bookmark_id) ||
		       p->bookmark.set_ns > ix->bm_last_set_ns;
	case T4_PKT_TASK:
		slot = dec_idmap_get(&ix->task_map, p->task.tid);
		return ix->n_tasks < T4_INDEX_MAX_NAMED &&
		       (slot < 0 || p->task.mono_ns > ix->task_ns[slot]);
	case T4_PKT_GPU_CTX:
		return !ctx_known(ix, p->gpu_ctx.context) && ix->n_ctxs < T4_INDEX_MAX_NAMED;
	default:
		return false;
	}
}

static void add_host(struct t4_index_host *h, const struct t4_host_pkt *p)
{
	if (!h->samples++)
		h->first = *p;
	h->last = *p;
	if (!(p->sync_flags & T4_HOST_SYNC_KNOWN))
		return;
	h->known++;
	h->unsynced += !(p->sync_flags & T4_HOST_SYNCED);
	if (p->maxerror_us > h->worst_maxerror_us)
		h->worst_maxerror_us = p->maxerror_us;
	if (p->esterror_us > h->worst_esterror_us)
		h->worst_esterror_us = p->esterror_us;
}

/* Reference and return packets so far, every one (returns come through
 * dec_index_ret_to() too: counted, not flagged). */
static uint64_t trigger_pkts(const struct t4_index *ix)
{
	return ix->counts.refs + ix->counts.implausible_refs + ix->counts.rets;
}

static int add_packet(struct t4_index *ix, const struct t4_packet *p)
{
	switch (p->type) {
	case T4_PKT_REF:
		return add_ref(ix, &p->ref);
	case T4_PKT_RET:
		return dec_index_ret(ix, &p->ret);
	case T4_PKT_SESSION:
		ix->counts.meta += !p->copy;
		if (!ix->have_session)
			ix->session = p->session;
		ix->have_session = true;
		return 0;
	case T4_PKT_DOMAIN:
		ix->counts.meta += !p->copy;
		return add_domain(ix, &p->domain);
	case T4_PKT_EVENT:
		ix->counts.meta += !p->copy;
		return add_event(ix, &p->event);
	case T4_PKT_BOOKMARK:
		ix->counts.meta += !p->copy;
		return add_bookmark(ix, &p->bookmark);
	case T4_PKT_STATUS:
		ix->counts.meta++;
		ix->status = p->status;
		ix->have_status = true;
		ix->trig_at_status = trigger_pkts(ix);
		return 0;
	case T4_PKT_CPU_SLICE:
		ix->counts.cpu_slices++;
		return 0;
	case T4_PKT_GPU_SLICE:
		ix->counts.gpu_slices++;
		return 0;
	case T4_PKT_TASK:
		return add_task(ix, &p->task);
	case T4_PKT_GPU_CTX:
		return add_gpu_ctx(ix, &p->gpu_ctx);
	case T4_PKT_HOST:
		ix->counts.meta++;
		add_host(&ix->host, &p->host);
		return 0;
	default:
		return 0;
	}
}

int t4_index_add(struct t4_index *ix, const struct t4_packet *p)
{
	int rc;

	if (p->copy) {
		ix->counts.copies++;
		if (!copy_is_news(ix, p))
			return T4_INDEX_REPEAT;
	}
	rc = add_packet(ix, p);
	ix->counts.restored += p->copy && rc == 0; /* (a contradiction is no news) */
	return rc;
}

/* ---- getters ------------------------------------------------------------- */

const struct t4_session_pkt *t4_index_session(const struct t4_index *ix)
{
	return ix->have_session ? &ix->session : NULL;
}

const struct t4_index_host *t4_index_host(const struct t4_index *ix)
{
	return ix->host.samples ? &ix->host : NULL;
}

const struct t4_status_pkt *t4_index_status(const struct t4_index *ix)
{
	return ix->have_status ? &ix->status : NULL;
}

/* A mid-log status packet (written after drops, packets/log.c) followed by
 * trigger packets is no close: only the recording's final one is last. */
bool t4_index_closed(const struct t4_index *ix)
{
	return ix->have_status && ix->trig_at_status == trigger_pkts(ix);
}

const char *t4_index_unclosed_why(void)
{
	return "no closing status packet (the recorder was killed or is still running, or "
	       "the file was cut after a whole chunk)";
}

uint64_t t4_index_origin_ns(const struct t4_index *ix)
{
	return ix->origin_ns;
}

const struct t4_index_counts *t4_index_counts(const struct t4_index *ix)
{
	return &ix->counts;
}

size_t t4_index_n_domains(const struct t4_index *ix)
{
	return ix->n_doms;
}

const struct t4_index_domain *t4_index_domain_at(const struct t4_index *ix, size_t i)
{
	return i < ix->n_doms ? &ix->doms[i]->pub : NULL;
}

const struct t4_index_domain *t4_index_domain(const struct t4_index *ix, uint32_t id)
{
	int64_t slot = dec_idmap_get(&ix->dom_map, id);
	return slot >= 0 ? &ix->doms[slot]->pub : NULL;
}

const struct t4_event_pkt *t4_index_event(const struct t4_index *ix, uint32_t domain_id,
					  uint32_t index)
{
	int64_t d = dec_idmap_get(&ix->dom_map, domain_id), e;

	if (d < 0 || (e = dec_idmap_get(&ix->doms[d]->ev_map, index)) < 0)
		return NULL;
	return &ix->events[e];
}

size_t t4_index_n_scheds(const struct t4_index *ix)
{
	return ix->n_scheds;
}

const struct t4_index_sched *t4_index_sched_at(const struct t4_index *ix, size_t i)
{
	return i < ix->n_scheds ? &ix->scheds[i] : NULL;
}

const struct t4_index_sched *t4_index_sched(const struct t4_index *ix, uint32_t id)
{
	for (size_t i = 0; i < ix->n_scheds; i++)
		if (ix->scheds[i].id == id)
			return &ix->scheds[i];
	return NULL;
}

const char *dec_domain_pmu(const struct t4_index *ix, uint32_t id, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct t4_event_pkt *e = t4_index_event(ix, id, i);
		if (e && e->pmu[0])
			return e->pmu;
	}
	return "";
}

const char *t4_index_bookmark_name(const struct t4_index *ix, uint32_t id)
{
	int64_t slot = dec_idmap_get(&ix->bm_map, id);
	return slot >= 0 ? ix->bm_ids[slot].name : NULL;
}

int64_t t4_index_bookmark_id(const struct t4_index *ix, const char *name)
{
	int64_t key, slot = name_find(ix, name, &key);

	if (slot >= 0)
		return ix->bm_ids[slot].bookmark_id;
	for (size_t i = 0; key < 0 && i < ix->n_bm_ids; i++) /* past the probes */
		if (!strcmp(ix->bm_ids[i].name, name))
			return ix->bm_ids[i].bookmark_id;
	return -1;
}

uint32_t t4_index_bookmark_holder(const struct t4_index *ix, uint32_t id)
{
	int64_t slot = dec_idmap_get(&ix->bm_holder, id);

	return slot >= 0 ? ix->bm_ids[slot].bookmark_id : id;
}

size_t t4_index_n_bookmarks(const struct t4_index *ix)
{
	return ix->n_bm_pkts;
}

const struct t4_bookmark_pkt *t4_index_bookmark_at(const struct t4_index *ix, size_t i)
{
	return i < ix->n_bm_pkts ? &ix->bm_pkts[i] : NULL;
}

size_t t4_index_n_bookmark_ids(const struct t4_index *ix)
{
	return ix->n_bm_ids;
}

const struct t4_bookmark_pkt *t4_index_bookmark_id_at(const struct t4_index *ix, size_t i)
{
	return i < ix->n_bm_ids ? &ix->bm_ids[i] : NULL;
}

void t4_index_answers(const struct t4_index *ix, const struct t4_index_domain *d,
		      struct t4_index_answers *out)
{
	const struct t4_index_sched *s = t4_index_sched(ix, d->d.sched_id);
	struct t4_index_answers a = { .duplicates = d->duplicates };

	a.answered = d->rets - d->duplicates;
	if (d->rets) {
		a.last_trigger = d->answered.top;
		a.last_ns = d->last_ns;
	}
	if (s) {
		/* its IDs but the grid points it skipped (FORMAT.md 6: last -
		 * first + 1 = reference packets + overruns), so a trigger whose
		 * reference packet is missing counts; never fewer than its
		 * reference packets (a crafted log's overruns may say anything) */
		uint64_t ids = s->last - s->first + 1, skipped = s->overruns - s->first_overruns;
		a.triggers = s->refs - s->duplicates;
		if (ids > skipped && ids - skipped > a.triggers)
			a.triggers = ids - skipped;
		/* a domain that appears later (drm, with its first client)
		 * misses nothing before its first return */
		if (d->rets && d->first_trigger > s->first) {
			uint64_t span = s->last >= d->first_trigger ? s->last - d->first_trigger + 1 : 0;
			a.triggers = span < a.triggers ? span : a.triggers;
		}
	}
	a.unanswered = a.triggers > a.answered ? a.triggers - a.answered : 0;
	/* trigger IDs past its last answer: each one a trigger but for the
	 * grid points its scheduler skipped (overruns), so never more than
	 * the unanswered */
	a.after = !d->rets ? a.unanswered : s && s->last > a.last_trigger ? s->last - a.last_trigger
									  : 0;
	if (a.after > a.unanswered)
		a.after = a.unanswered;
	*out = a;
}

/* The closing status packet's figure, else the larger of a mid-log one's
 * (the totals so far when it was written) and what the log holds. */
static uint64_t status_or_counted(const struct t4_index *ix, uint64_t status, uint64_t counted)
{
	if (t4_index_closed(ix))
		return status;
	return ix->have_status && status > counted ? status : counted;
}

uint64_t t4_index_read_failures(const struct t4_index *ix)
{
	return status_or_counted(ix, ix->status.read_failures, ix->counts.read_failed_rets);
}

uint64_t t4_index_overruns(const struct t4_index *ix)
{
	return status_or_counted(ix, ix->status.overruns, ix->counts.ref_overruns);
}

#define KIND_NAME(id, num, name, t410) [id] = name,
static const char *const kind_names[] = { T4_DOMAIN_KINDS(KIND_NAME) };
#undef KIND_NAME
_Static_assert(T4_ARRAY_LEN(kind_names) == T4_DOM_KINDS, "kind numbers 0..T4_DOM_KINDS - 1");

const char *t4_domain_kind_name(uint32_t kind)
{
	return kind < T4_ARRAY_LEN(kind_names) && kind_names[kind] ? kind_names[kind]
								    : "unknown";
}

const char *t4_u128_str(t4_u128 v, char *buf, size_t cap)
{
	char tmp[48];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	if (n >= cap)
		n = cap - 1; /* cannot happen with cap >= 40 */
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return buf;
}
