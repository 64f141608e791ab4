/* decode_synth.h - synthetic packet streams with exactly known truth, and
 * a sink that keeps every interval, for the decoder's tests.
 *
 * A synthetic domain has a clock of `hz` (times 1 + ppm/1e6) that may step
 * to another rate at `step_at` (a DVFS step), and a traffic counter of
 * `bytes_per_ns` at a constant rate; both are exact floors of their
 * integrals at the true sample instant, which lies inside a read window of
 * win_min..win_max ns (or, with probability preempt_prob, a window of
 * preempt_min..preempt_max ns: a preempted read). Everything is a function
 * of the seed. Packets go into an array that tests may mutate (drop,
 * duplicate, reorder) before feeding it to a decoder.
 */
#ifndef T4_DECODE_SYNTH_H
#define T4_DECODE_SYNTH_H

#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"
#include "util/util.h"

#define SY_MAX_DOMS 8

struct sy_dom {
	uint32_t id, sched;
	uint32_t kind;        /* T4_DOM_PCIE by default */
	double hz, ppm;       /* nominal frequency, constant drift */
	double step_at_s;     /* a rate step this far in (0: none) */
	double step_factor;
	double bytes_per_ns;
	bool reference_clocked; /* clock_event -1 */
	double wander_ppm;      /* slow wander: a sine of this amplitude */
	double wander_period_s; /* and period (0: none) */
};

struct sy {
	uint64_t seed, t0, period;
	size_t n_triggers;
	uint64_t win_min, win_max;
	double preempt_prob;
	uint64_t preempt_min, preempt_max;
	double drop_prob;     /* returns lost (never the first or the last) */
	size_t n_doms;
	struct sy_dom dom[SY_MAX_DOMS];
	/* bookmarks: emitted before the references of trigger `first`, which
	 * and every later trigger carries it (until the next one) */
	struct sy_bm {
		uint32_t id;
		char name[32];
		uint64_t first, set_ns;
	} *bm;
	size_t n_bm, cap_bm;
	/* out: the stream, and the truth per (trigger, domain) */
	struct t4_packet *pk;
	size_t n_pk, cap_pk;
	uint64_t *true_t, *x, *bytes;
	uint64_t logged_x[SY_MAX_DOMS], logged_b[SY_MAX_DOMS]; /* of the last kept return */
};

static inline uint64_t sy_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline double sy_unit(uint64_t *s)
{
	return (double)(sy_rand(s) >> 11) / 9007199254740992.0;
}

/* The domain's clock at true time t (exact floor of its integral). */
static inline uint64_t sy_clock(const struct sy *y, const struct sy_dom *d, uint64_t t)
{
	long double dt = (long double)(t - y->t0) / 1e9L;
	long double f = (long double)d->hz * (1 + (long double)d->ppm / 1e6L);
	long double c = f * dt;

	if (d->step_at_s > 0 && dt > d->step_at_s)
		c = f * d->step_at_s + f * d->step_factor * (dt - d->step_at_s);
	if (d->wander_period_s > 0) { /* + the integral of A sin(2 pi t / P) */
		long double w = 2 * 3.14159265358979323846L / (long double)d->wander_period_s;
		c += (long double)d->hz * (long double)d->wander_ppm / 1e6L * (1 - cosl(w * dt)) / w;
	}
	return 1000000000ull + (uint64_t)floorl(c);
}

static inline struct t4_packet *sy_push(struct sy *y)
{
	if (y->n_pk == y->cap_pk) {
		y->cap_pk = y->cap_pk ? 2 * y->cap_pk : 1024;
		y->pk = realloc(y->pk, y->cap_pk * sizeof(*y->pk));
		cr_assert(y->pk);
	}
	memset(&y->pk[y->n_pk], 0, sizeof(y->pk[0]));
	return &y->pk[y->n_pk++];
}

static inline void sy_meta(struct sy *y)
{
	struct t4_packet *p = sy_push(y);

	p->type = T4_PKT_SESSION;
	snprintf(p->session.host, sizeof(p->session.host), "synth");
	p->session.start_ref_ns = y->t0;
	p->session.period_ns = y->period;
	p->session.flags = T4_SESSION_SIMULATED;
	for (size_t i = 0; i < y->n_doms; i++) {
		const struct sy_dom *d = &y->dom[i];
		p = sy_push(y);
		p->type = T4_PKT_DOMAIN;
		p->domain.domain_id = d->id;
		p->domain.kind = d->kind ? d->kind : T4_DOM_PCIE;
		p->domain.cpu = -1;
		p->domain.clock_event = d->reference_clocked ? -1 : 0;
		p->domain.nominal_hz = (uint64_t)d->hz;
		p->domain.sched_id = d->sched;
		snprintf(p->domain.name, sizeof(p->domain.name), "dom%u", d->id);
		static const char *const names[] = { "cycles", "rd_bytes" };
		for (uint32_t e = 0; e < 2; e++) {
			p = sy_push(y);
			p->type = T4_PKT_EVENT;
			p->event.domain_id = d->id;
			p->event.index = e;
			p->event.scale = 1;
			snprintf(p->event.pmu, sizeof(p->event.pmu), "pmu%u", d->id);
			snprintf(p->event.name, sizeof(p->event.name), "%s", names[e]);
		}
	}
}

/* Schedule a bookmark (set_ns 0: an older log's kind), before sy_build. */
static inline void sy_bookmark(struct sy *y, uint32_t id, const char *name, uint64_t first,
			       uint64_t set_ns)
{
	if (y->n_bm == y->cap_bm) {
		y->cap_bm = y->cap_bm ? 2 * y->cap_bm : 16;
		y->bm = realloc(y->bm, y->cap_bm * sizeof(*y->bm));
		cr_assert(y->bm);
	}
	struct sy_bm *b = &y->bm[y->n_bm++];

	b->id = id;
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->first = first;
	b->set_ns = set_ns;
}

/* Emit the bookmarks scheduled for trigger k; returns the bookmark that
 * trigger k carries. */
static inline uint32_t sy_bookmarks_at(struct sy *y, uint64_t k, uint32_t current)
{
	for (size_t i = 0; i < y->n_bm; i++) {
		const struct sy_bm *b = &y->bm[i];
		if (b->first != k)
			continue; /* (linear: tests schedule at most thousands) */
		struct t4_packet *p = sy_push(y);
		p->type = T4_PKT_BOOKMARK;
		p->bookmark.bookmark_id = b->id;
		p->bookmark.first_trigger = b->first;
		p->bookmark.set_ns = b->set_ns;
		snprintf(p->bookmark.name, sizeof(p->bookmark.name), "%s", b->name);
		current = b->id;
	}
	return current;
}

static inline void sy_ref(struct sy *y, uint32_t sched, uint64_t k, uint32_t bookmark)
{
	struct t4_packet *p = sy_push(y);

	p->type = T4_PKT_REF;
	p->ref.trigger_id = k;
	p->ref.sched_id = sched;
	p->ref.bookmark_id = bookmark;
	p->ref.ref_ns = y->t0 + k * y->period;
	p->ref.mono_ns = p->ref.ref_ns + 1000;
	p->ref.real_ns = p->ref.ref_ns + 1700000000000000000ull;
	p->ref.flags = T4_REF_PERIODIC;
}

/* The return of domain i for trigger k, with its truth recorded; a
 * dropped one is not written, and the next carries its counts (deltas
 * against the last return logged, as the recorder does). */
static inline void sy_ret(struct sy *y, size_t i, uint64_t k, uint64_t *rng, bool drop)
{
	const struct sy_dom *d = &y->dom[i];
	bool pre = sy_unit(rng) < y->preempt_prob;
	uint64_t w = pre ? y->preempt_min + sy_rand(rng) % (y->preempt_max - y->preempt_min + 1)
			 : y->win_min + sy_rand(rng) % (y->win_max - y->win_min + 1);
	uint64_t ref = y->t0 + k * y->period;
	uint64_t lo = ref + 2000 + i * 300 + sy_rand(rng) % 1000;
	uint64_t t = lo + (uint64_t)(sy_unit(rng) * (double)w);
	uint64_t x = d->reference_clocked ? lo : sy_clock(y, d, t);
	uint64_t b = (uint64_t)floor(d->bytes_per_ns * (double)(t - y->t0));
	size_t at = k * y->n_doms + i;

	y->true_t[at] = t;
	y->x[at] = x;
	y->bytes[at] = b;
	if (drop)
		return;
	struct t4_packet *p = sy_push(y);
	p->type = T4_PKT_RET;
	p->ret.trigger_id = k;
	p->ret.domain_id = d->id;
	p->ret.local_clock = x;
	p->ret.read_begin_ns = lo;
	p->ret.read_end_ns = lo + w;
	p->ret.n_counts = 2;
	if (k == 0) {
		p->ret.flags = T4_RET_FIRST;
	} else {
		p->ret.counts[0] = d->reference_clocked ? 0 : x - y->logged_x[i];
		p->ret.counts[1] = b - y->logged_b[i];
	}
	y->logged_x[i] = x;
	y->logged_b[i] = b;
}

/* A stream of one domain (ID 1: a 1 GHz clock, 2 bytes per ns), n
 * triggers of 1 ms from 5 s; bookmarks may be scheduled before sy_build. */
static inline void sy_one_domain(struct sy *y, size_t n, uint64_t seed)
{
	memset(y, 0, sizeof(*y));
	y->seed = seed;
	y->n_triggers = n;
	y->n_doms = 1;
	y->dom[0] = (struct sy_dom){ .id = 1, .hz = 1e9, .bytes_per_ns = 2 };
	y->t0 = 5000000000ull;
	y->period = 1000000;
}

/* Build the whole stream: metadata, then per trigger its references (one
 * per scheduler in use) and returns. */
static inline void sy_build(struct sy *y)
{
	uint64_t rng = y->seed;
	bool sched_used[4] = { false };

	if (!y->period)
		y->period = 1000000;
	if (!y->t0)
		y->t0 = 5000000000ull;
	if (!y->win_max)
		y->win_min = 300, y->win_max = 3000;
	y->true_t = calloc(y->n_triggers * y->n_doms, sizeof(uint64_t));
	y->x = calloc(y->n_triggers * y->n_doms, sizeof(uint64_t));
	y->bytes = calloc(y->n_triggers * y->n_doms, sizeof(uint64_t));
	cr_assert(y->true_t && y->x && y->bytes);
	for (size_t i = 0; i < y->n_doms; i++)
		sched_used[y->dom[i].sched & 3] = true;
	sy_meta(y);
	uint32_t bm = 0;
	for (uint64_t k = 0; k < y->n_triggers; k++) {
		bm = sy_bookmarks_at(y, k, bm);
		for (uint32_t s = 0; s < 4; s++)
			if (sched_used[s])
				sy_ref(y, s, k, bm);
		for (size_t i = 0; i < y->n_doms; i++) {
			bool drop = y->drop_prob > 0 && k && k + 1 < y->n_triggers &&
				    sy_unit(&rng) < y->drop_prob;
			sy_ret(y, i, k, &rng, drop);
		}
	}
}

/* Two clock domains (1.7 GHz +37 ppm, 0.9 GHz -410 ppm) over n triggers:
 * the synthetic recording most decode tests start from. */
static inline void sy_two_clocks(struct sy *y, size_t n)
{
	memset(y, 0, sizeof(*y));
	y->seed = 42;
	y->n_triggers = n;
	y->n_doms = 2;
	y->dom[0] = (struct sy_dom){ .id = 1, .hz = 1.7e9, .ppm = 37, .bytes_per_ns = 12.5 };
	y->dom[1] = (struct sy_dom){ .id = 2, .hz = 0.9e9, .ppm = -410, .bytes_per_ns = 3.25 };
}

static inline void sy_free(struct sy *y)
{
	free(y->bm);
	free(y->pk);
	free(y->true_t);
	free(y->x);
	free(y->bytes);
}

/* ---- a sink that keeps every interval ------------------------------------ */

struct civ {
	uint32_t domain_id;
	uint64_t trigger, first_trigger, start, end, elapsed, bound;
	uint32_t flags, bookmark;
	uint32_t n;
	uint64_t counts[4];
	double metric0; /* first metric (NaN when absent) */
};

struct keep {
	struct civ *v;
	size_t n, cap;
	bool finished;
};

static inline int keep_interval(void *ud, const struct t4_decoder *dec,
				const struct t4_interval *iv)
{
	struct keep *k = ud;
	const struct t4_dec_domain *d = t4_decoder_domain_at(dec, iv->domain);

	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 1024;
		k->v = realloc(k->v, k->cap * sizeof(*k->v));
		cr_assert(k->v);
	}
	struct civ *c = &k->v[k->n++];
	memset(c, 0, sizeof(*c));
	c->domain_id = d->id;
	c->trigger = iv->trigger;
	c->first_trigger = iv->first_trigger;
	c->start = iv->start_ns;
	c->end = iv->end_ns;
	c->elapsed = iv->elapsed_ns;
	c->bound = iv->bound_ns;
	c->flags = iv->flags;
	c->bookmark = iv->bookmark_id;
	c->n = iv->n_counts < 4 ? iv->n_counts : 4;
	memcpy(c->counts, iv->counts, c->n * sizeof(uint64_t));
	c->metric0 = iv->metrics && d->n_metrics ? iv->metrics[0] : NAN;
	return 0;
}

static inline int keep_finish(void *ud, const struct t4_decoder *dec)
{
	(void)dec;
	((struct keep *)ud)->finished = true;
	return 0;
}

static const struct t4_sink_ops keep_ops = { .interval = keep_interval, .finish = keep_finish };

/* Decode packets pk[0..n) with options o into k; the decoder is returned
 * (finished) for queries; free it with t4_decoder_free. */
static inline struct t4_decoder *sy_decode(const struct t4_packet *pk, size_t n,
					   const struct t4_decode_opts *o, struct keep *k)
{
	struct t4_decoder *dec;

	memset(k, 0, sizeof(*k));
	cr_assert_eq(t4_decoder_new(&dec, o, &keep_ops, k), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(t4_decoder_feed(dec, &pk[i]), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_decoder_finish(dec, NULL), 0, "%s", t4_errmsg());
	cr_assert(k->finished);
	return dec;
}

/* Index of the decoder's domain with this ID. */
static inline size_t sy_slot(const struct t4_decoder *dec, uint32_t id)
{
	for (size_t i = 0; i < t4_decoder_n_domains(dec); i++)
		if (t4_decoder_domain_at(dec, i)->id == id)
			return i;
	cr_assert_fail("domain %u not decoded", id);
	return 0;
}

#endif
