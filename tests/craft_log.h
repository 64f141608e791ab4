/* craft_log.h - a log written packet by packet through the project's own
 * writer (packets/), for tests that need what no recorder makes: 200,000
 * domains, trigger IDs that jump, thousands of bookmarks (static helpers:
 * a copy in each test file that includes it).
 */
#ifndef T4_TESTS_CRAFT_LOG_H
#define T4_TESTS_CRAFT_LOG_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "packets/packets.h"
#include "util/util.h"

struct lw {
	struct t4_log *log;
	struct t4_ring *ring;
};

/* Opened with lo (its path, its chunking), started. */
static inline void lw_open_opts(struct lw *w, const struct t4_log_opts *lo)
{
	cr_assert_eq(t4_log_open(&w->log, lo), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_ring(w->log, 1 << 20, T4_RING_WAIT, &w->ring), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_start(w->log), 0, "%s", t4_errmsg());
}

static inline void lw_open(struct lw *w, const char *path)
{
	lw_open_opts(w, &(struct t4_log_opts){ .path = path });
}

static inline void lw_put(struct lw *w, const struct t4_packet *p)
{
	cr_assert_eq(t4_ring_put(w->ring, p), 0);
}

static inline void lw_close(struct lw *w)
{
	struct t4_status_pkt st = { .triggers = 1 };

	cr_assert_eq(t4_log_close(w->log, &st, NULL), 0, "%s", t4_errmsg());
}

static inline void session(struct lw *w, uint64_t period)
{
	struct t4_packet p = { .type = T4_PKT_SESSION };

	snprintf(p.session.host, sizeof(p.session.host), "crafted");
	p.session.start_ref_ns = 1000000000ull;
	p.session.start_real_ns = 1700000000000000000ull;
	p.session.period_ns = period;
	lw_put(w, &p);
}

static inline void ref(struct lw *w, uint64_t trigger, uint64_t ns, uint32_t bookmark)
{
	struct t4_packet p = { .type = T4_PKT_REF };

	p.ref.trigger_id = trigger;
	p.ref.ref_ns = ns;
	p.ref.mono_ns = ns;
	p.ref.bookmark_id = bookmark;
	lw_put(w, &p);
}

/* A return of one count read 1000..2000 ns after ns, its local clock
 * `clock` (a software domain's: 0), its T4_RET_* flags. */
static inline void ret_with(struct lw *w, uint32_t domain, uint64_t trigger, uint64_t ns,
			    uint64_t clock, uint32_t flags, uint64_t count)
{
	struct t4_packet p = { .type = T4_PKT_RET };

	p.ret.domain_id = domain;
	p.ret.trigger_id = trigger;
	p.ret.local_clock = clock;
	p.ret.read_begin_ns = ns + 1000;
	p.ret.read_end_ns = ns + 2000;
	p.ret.flags = flags;
	p.ret.n_counts = 1;
	p.ret.counts[0] = count;
	lw_put(w, &p);
}

static inline void ret(struct lw *w, uint32_t domain, uint64_t trigger, uint64_t ns, uint64_t count)
{
	ret_with(w, domain, trigger, ns, 0, trigger ? 0 : T4_RET_FIRST, count);
}

/* Bookmark id named name, in force from trigger on, set at ns. */
static inline void bookmark(struct lw *w, uint32_t id, const char *name, uint64_t trigger,
			    uint64_t ns)
{
	struct t4_packet p = { .type = T4_PKT_BOOKMARK };

	p.bookmark.bookmark_id = id;
	p.bookmark.first_trigger = trigger;
	p.bookmark.set_ns = ns;
	snprintf(p.bookmark.name, sizeof(p.bookmark.name), "%s", name);
	lw_put(w, &p);
}

/* A domain of kind named name, clocked by its event clock_event (-1: by
 * the reference clock) at nominal_hz. */
static inline void domain_of_kind(struct lw *w, uint32_t id, uint32_t kind, int32_t clock_event,
				  uint64_t nominal_hz, const char *name)
{
	struct t4_packet p = { .type = T4_PKT_DOMAIN };

	p.domain.domain_id = id;
	p.domain.kind = kind;
	p.domain.cpu = -1;
	p.domain.clock_event = clock_event;
	p.domain.nominal_hz = nominal_hz;
	snprintf(p.domain.name, sizeof(p.domain.name), "%s", name);
	lw_put(w, &p);
}

/* A software domain named name (no clock event). */
static inline void domain_called(struct lw *w, uint32_t id, const char *name)
{
	domain_of_kind(w, id, T4_DOM_SOFTWARE, -1, 0, name);
}

/* A PCIe domain named c<id>, clocked by its event 0 at nominal_hz. */
static inline void clocked_domain(struct lw *w, uint32_t id, uint64_t nominal_hz)
{
	char name[16];

	snprintf(name, sizeof(name), "c%u", id);
	domain_of_kind(w, id, T4_DOM_PCIE, 0, nominal_hz, name);
}

static inline void domain(struct lw *w, uint32_t id)
{
	char name[16];

	snprintf(name, sizeof(name), "d%u", id);
	domain_called(w, id, name);
}

#endif
