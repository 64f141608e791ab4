/* virtual.c - recording a simulated Tegra410 in virtual time.
 *
 * The live scheduler (sched.c, monitor.c) waits for its clock and reads the
 * simulator at whatever instant the read happens. This one waits for
 * nothing: it computes, trigger by trigger, the packet stream a live
 * `record --sim` writes, on a virtual reference clock, and reads each
 * domain at an instant it chooses (t4_domain_read_at), so every sample's
 * true instant is known exactly and an hour of 1 ms triggers takes seconds.
 *
 * The virtual clocks: trigger k of every scheduler sits on the grid
 * t0 + k * period (t0 = the simulator's epoch + 10 ms) plus a scheduler
 * jitter of 0-2 us; MONOTONIC = ref + 12.345678 ms, REALTIME = 2026-01-01
 * UTC + ref, the scheduler's own counter = ref + 5 s (a 1 GHz cntvct, as on
 * arm64). A domain starts reading 1-4 us (seeded per domain) plus 0-0.5 us
 * after its scheduler's reference time; the read takes 0.3-3 us, or, with
 * preempt_prob, preempt_min_ns..preempt_max_ns; the sample is taken at a
 * uniform instant inside that read window.
 *
 * What it shares with the live scheduler: its schedulers (sched_ids: one
 * per scheduler ID with domains, one per socket with per_socket, the lowest
 * "scheduler 0"), the bookmark queue (bookmark.c: each phase change is a
 * command set at its instant) and the writer of the reference and bookmark
 * packets (sched_write_trigger). What it mirrors: a monitor that answers
 * late skips a trigger (its next answer covers both) and is counted as
 * unanswered; when it is a scheduler's own monitor (its first, whose thread
 * the live scheduler is) the scheduler skips the trigger too: no reference
 * packet, and an overrun in its next one. A return packet that is not
 * logged is taken back (t4_domain_unread) so the domain's next one carries
 * its counts. Monitors are grouped per (scheduler, socket), the CPUs of the
 * simulated PMUs on a machine with two or more CPUs.
 *
 * Every choice is a hash of (seed, what, which, trigger) (t4_hash), so one
 * knob never shifts another and a seed gives the same packets on any
 * machine. All packets go into one ring: one producer, so the log's order
 * and bytes are deterministic (with a chunk time limit that never fires).
 */
#include "sched_internal.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define V_LEAD_NS 10000000ull                 /* t0 after the sim's epoch */
#define V_MONO_OFFSET_NS 12345678ull          /* MONOTONIC - MONOTONIC_RAW */
#define V_REAL_BASE_NS 1767225600000000000ull /* REALTIME at ref 0 */
#define V_LOCAL_OFFSET_NS 5000000000ull       /* scheduler counter at ref 0 */
#define V_JITTER_MAX 2000
#define V_LAG_MIN 1000
#define V_LAG_MAX 4000
#define V_NOISE_MAX 500
#define V_WINDOW_MIN 300
#define V_WINDOW_MAX 3000
#define V_PREEMPT_MIN 20000
#define V_PREEMPT_MAX 100000

enum { TAG_JITTER = 1, TAG_LAG, TAG_READ, TAG_LATE };
enum { PICK_NOISE = 1, PICK_PREEMPT, PICK_WINDOW, PICK_POS, PICK_DROP };

struct vdom {
	struct t4_domain *d;
	uint32_t sched, mon; /* indexes of v->sched and v->mon */
	uint64_t lag; /* read start after the reference time */
};

struct vmon {
	uint32_t sched;
	int socket;
	bool late; /* skips the current trigger */
};

struct vsched {
	uint32_t id;
	uint32_t mon;    /* its own monitor: the first of its domains' */
	uint64_t missed; /* triggers it skipped since its last one */
	uint64_t ref;    /* the current trigger's reference time */
	bool fired;      /* it fired the current trigger */
};

struct virt {
	const struct t4_virtual_opts *o;
	const struct t4_sim *sim;
	uint64_t t0, last;    /* grid origin; ID of the final trigger */
	uint64_t pmin, pmax;  /* preempted read windows */
	struct vsched *sched;  /* sched_ids' order: [0] is scheduler 0 */
	size_t n_sched;
	struct vdom *dom;
	size_t n_dom;
	struct vmon *mon;
	size_t n_mon;
	struct t4_bookmarks *bm;
	uint64_t next_change;  /* next phase change not yet queued; UINT64_MAX: none */
	struct t4_sched_status st;
	struct t4_hist window, skew, latency;
	struct t4_packet pkt;
};

/* ---- choices and output ------------------------------------------------- */

static uint64_t in_range(uint64_t h, uint64_t lo, uint64_t hi)
{
	return lo + h % (hi - lo + 1);
}

static bool below(uint64_t h, double p)
{
	return p > 0 && (double)(h >> 11) * 0x1p-53 < p;
}

static uint64_t draw(const struct virt *v, uint64_t tag, uint64_t a, uint64_t b,
		     uint64_t lo, uint64_t hi)
{
	return in_range(t4_hash(v->o->seed, tag, a, b), lo, hi);
}

static bool chance(const struct virt *v, uint64_t tag, uint64_t a, uint64_t b, double p)
{
	return below(t4_hash(v->o->seed, tag, a, b), p);
}

/* The choices of one read come from one hash of (seed, domain, trigger):
 * choice `what` is one more mix of it (a read makes five). */
static uint64_t choice(uint64_t read_hash, uint64_t what)
{
	return t4_mix64(read_hash + what * 0x9e3779b97f4a7c15ull);
}

/* A ring's refusal (rc < 0) as this recording's error. */
static int ring_error(int rc)
{
	if (rc == -ENOBUFS)
		return t4_err(ENOBUFS, "virtual recording: ring full (it must be a T4_RING_WAIT ring)");
	if (rc == -EPIPE)
		return t4_err(EPIPE, "virtual recording: the log was closed");
	return rc;
}

static int put(struct virt *v)
{
	return ring_error(t4_ring_put(v->o->ring, &v->pkt));
}

/* ---- checking and setting up ------------------------------------------ */

static int check_domains(const struct t4_domain_set *ds, const struct t4_sim **sim)
{
	if (!ds || !ds->n)
		return t4_err(EINVAL, "virtual recording: no domains");
	*sim = t4_domain_sim(&ds->v[0]);
	for (size_t i = 0; i < ds->n; i++) {
		const struct t4_domain *d = &ds->v[i];

		if (!t4_domain_sim(d))
			return t4_err(EINVAL, "%s: virtual time needs simulated domains (--sim)",
				      d->name);
		if (t4_domain_sim(d) != *sim)
			return t4_err(EINVAL, "%s: every domain must come from one simulator",
				      d->name);
	}
	return 0;
}

static int check_prob(const char *what, double p)
{
	if (!(p >= 0 && p <= 1)) /* NaN too */
		return t4_err(EINVAL, "virtual recording: %s %g: use a probability in 0..1",
			      what, p);
	return 0;
}

/* A read must end before the next grid point, so that every domain's
 * samples stay in order whatever the jitter. */
static int check_timing(struct virt *v)
{
	const struct t4_virtual_opts *o = v->o;
	uint64_t reach;
	char a[32], b[32];

	v->pmin = o->preempt_min_ns ? o->preempt_min_ns : V_PREEMPT_MIN;
	v->pmax = o->preempt_max_ns ? o->preempt_max_ns : V_PREEMPT_MAX;
	if (v->pmin > v->pmax)
		return t4_err(EINVAL, "virtual recording: preempted reads of %s to %s: the first must not be longer",
			      t4_fmt_duration(v->pmin, a, sizeof(a)),
			      t4_fmt_duration(v->pmax, b, sizeof(b)));
	if (!o->period_ns || !o->duration_ns)
		return t4_err(EINVAL, "virtual recording: period and duration must be > 0");
	reach = V_JITTER_MAX + V_LAG_MAX + V_NOISE_MAX +
		(o->preempt_prob > 0 && v->pmax > V_WINDOW_MAX ? v->pmax : V_WINDOW_MAX);
	if (o->period_ns <= reach)
		return t4_err(EINVAL, "virtual recording: period %s too short: reads reach %s past the trigger",
			      t4_fmt_duration(o->period_ns, a, sizeof(a)),
			      t4_fmt_duration(reach, b, sizeof(b)));
	return 0;
}

static int check_opts(struct virt *v)
{
	const struct t4_virtual_opts *o = v->o;
	int rc;

	if (!o->ring)
		return t4_err(EINVAL, "virtual recording: no ring to write to");
	if ((rc = check_domains(o->domains, &v->sim)) < 0 ||
	    (rc = check_prob("preempt_prob", o->preempt_prob)) < 0 ||
	    (rc = check_prob("drop_prob", o->drop_prob)) < 0 ||
	    (rc = check_prob("late_prob", o->late_prob)) < 0 || (rc = check_timing(v)) < 0)
		return rc;
	return o->bookmark ? t4_bookmark_check(o->bookmark) : 0;
}

/* Monitors per (scheduler, socket), in order of first appearance. */
static uint32_t monitor_of(struct virt *v, uint32_t sched, int socket)
{
	for (size_t i = 0; i < v->n_mon; i++)
		if (v->mon[i].sched == sched && v->mon[i].socket == socket)
			return (uint32_t)i;
	v->mon[v->n_mon] = (struct vmon){ .sched = sched, .socket = socket };
	return (uint32_t)v->n_mon++;
}

/* The index of scheduler ID id in v->sched. */
static uint32_t sched_index(const struct virt *v, uint32_t id)
{
	uint32_t i = 0;

	while (v->sched[i].id != id)
		i++;
	return i;
}

static int setup_scheds(struct virt *v)
{
	const struct t4_domain_set *ds = v->o->domains;
	uint32_t *ids = calloc(ds->n, sizeof(*ids));

	v->sched = calloc(ds->n, sizeof(*v->sched));
	if (!ids || !v->sched) {
		free(ids);
		return t4_err(ENOMEM, "virtual recording: out of memory");
	}
	v->n_sched = sched_ids(ds, v->o->per_socket, ids);
	for (size_t i = 0; i < v->n_sched; i++)
		v->sched[i] = (struct vsched){ .id = ids[i], .mon = UINT32_MAX };
	free(ids);
	return 0;
}

static int setup_domains(struct virt *v)
{
	const struct t4_domain_set *ds = v->o->domains;
	int rc = setup_scheds(v);

	v->dom = calloc(ds->n, sizeof(*v->dom));
	v->mon = calloc(ds->n, sizeof(*v->mon));
	if (rc < 0 || !v->dom || !v->mon)
		return rc < 0 ? rc : t4_err(ENOMEM, "virtual recording: out of memory");
	for (size_t i = 0; i < ds->n; i++) {
		struct vdom *vd = &v->dom[v->n_dom++];
		const struct t4_pmu *p = ds->v[i].counters[0].pmu;

		vd->d = &ds->v[i];
		vd->sched = sched_index(v, t4_sched_id_of(vd->d, v->o->per_socket));
		vd->mon = monitor_of(v, vd->sched, p ? p->socket : -1);
		vd->lag = draw(v, TAG_LAG, i, 0, V_LAG_MIN, V_LAG_MAX);
		if (v->sched[vd->sched].mon == UINT32_MAX)
			v->sched[vd->sched].mon = vd->mon;
	}
	return 0;
}

/* ---- bookmarks: commands of the live scheduler's queue ------------------ */

/* The initial bookmark (or the phase at the start) set at t0, so that
 * trigger 0 carries it; the phase changes follow as they come. */
static int setup_bookmarks(struct virt *v)
{
	const struct t4_virtual_opts *o = v->o;
	struct t4_bookmarks_opts bo = { .clock = CLOCK_MONOTONIC_RAW };
	const char *initial = o->bookmark;
	int rc = sched_bookmarks_new(&v->bm, &bo);

	v->next_change = o->phase_bookmarks ? t4_sim_next_phase_change(v->sim, v->t0)
					    : UINT64_MAX;
	if (!initial && o->phase_bookmarks)
		initial = t4_sim_phase_at(v->sim, v->t0);
	if (rc == 0 && initial)
		rc = sched_bookmarks_set_at(v->bm, initial, v->t0);
	return rc;
}

/* Queue the phase changes up to reference time t: each a bookmark command
 * set at its instant. */
static int queue_changes(struct virt *v, uint64_t t)
{
	int rc = 0;

	while (rc >= 0 && v->next_change <= t) {
		uint64_t at = v->next_change;

		rc = sched_bookmarks_set_at(v->bm, t4_sim_phase_at(v->sim, at), at);
		v->next_change = t4_sim_next_phase_change(v->sim, at);
	}
	return rc;
}

/* ---- triggers ------------------------------------------------------------- */

/* Scheduler v->sched[s] writes trigger k at ref, as the live one does. */
static int put_trigger(struct virt *v, uint32_t s, uint64_t k, uint64_t ref)
{
	struct vsched *vs = &v->sched[s];
	struct sched_fire f = {
		.sched_id = vs->id,
		.zero = s == 0,
		.p = { .id = k, .flags = k == v->last ? T4_REF_FINAL : T4_REF_PERIODIC },
		.missed = vs->missed,
		.bm = { .seen = sched_bookmarks_seen(v->bm), .at_ns = ref,
			.id = sched_bookmarks_current(v->bm) },
		.clk = { .ref = ref, .mono = ref + V_MONO_OFFSET_NS, .real = V_REAL_BASE_NS + ref,
			 .local = ref + V_LOCAL_OFFSET_NS },
	};
	int rc = sched_write_trigger(v->bm, &f, v->o->ring, &v->pkt);

	vs->missed = 0;
	if (f.zero)
		v->st.bookmark_id = v->pkt.ref.bookmark_id;
	return ring_error(rc);
}

/* Log (or, with drop_prob, leave out and take back) one read. */
static int log_read(struct virt *v, size_t i, uint64_t k, uint64_t true_ns, bool logged)
{
	const struct t4_virtual_opts *o = v->o;
	struct t4_ret_pkt *ret = &v->pkt.ret;
	int rc = 0;

	if (logged) {
		v->pkt.type = T4_PKT_RET;
		rc = put(v);
		v->st.values += ret->n_counts;
	} else {
		t4_domain_unread(v->dom[i].d);
		v->st.dropped++;
	}
	if (o->on_sample)
		o->on_sample(o->ud, v->dom[i].d, k, true_ns, ret, logged);
	return rc;
}

/* Domain i answers trigger k (reference time ref); *end: its read's end. */
static int read_domain(struct virt *v, size_t i, uint64_t k, uint64_t ref, uint64_t *end)
{
	const struct t4_virtual_opts *o = v->o;
	uint64_t h = t4_hash(o->seed, TAG_READ, i, k), hw = choice(h, PICK_WINDOW);
	uint64_t begin = ref + v->dom[i].lag + in_range(choice(h, PICK_NOISE), 0, V_NOISE_MAX);
	uint64_t w = below(choice(h, PICK_PREEMPT), o->preempt_prob)
			     ? in_range(hw, v->pmin, v->pmax)
			     : in_range(hw, V_WINDOW_MIN, V_WINDOW_MAX);
	uint64_t t = begin + in_range(choice(h, PICK_POS), 0, w);
	int rc = t4_domain_read_at(v->dom[i].d, k, t, begin, begin + w, &v->pkt.ret);

	if (rc < 0)
		return rc;
	t4_hist_add(&v->window, w);
	t4_hist_add(&v->skew, begin + w / 2 - ref);
	*end = begin + w > *end ? begin + w : *end;
	return log_read(v, i, k, t, !below(choice(h, PICK_DROP), o->drop_prob));
}

/* Which monitors of scheduler s skip trigger k (never the baseline and
 * never the final one, as the live scheduler waits for those): the
 * scheduler's own monitor is an overrun of the scheduler, any other an
 * unanswered trigger. */
static void choose_late(struct virt *v, uint32_t s, uint64_t k)
{
	for (size_t m = 0; m < v->n_mon; m++) {
		if (v->mon[m].sched != s)
			continue;
		v->mon[m].late = k > 0 && k < v->last &&
				 chance(v, TAG_LATE, m, k, v->o->late_prob);
		if (m == v->sched[s].mon) {
			v->sched[s].missed += v->mon[m].late;
			v->st.overruns += v->mon[m].late;
		} else
			v->st.unanswered += v->mon[m].late;
	}
}

/* Scheduler v->sched[s] fires trigger k at its reference time (unless its
 * own monitor is late: then only its other monitors answer). */
static int fire(struct virt *v, uint32_t s, uint64_t k)
{
	uint64_t ref = v->sched[s].ref, end = ref;
	int rc = queue_changes(v, ref);

	choose_late(v, s, k);
	if (rc >= 0 && !v->mon[v->sched[s].mon].late)
		rc = put_trigger(v, s, k, ref);
	for (size_t i = 0; i < v->n_dom && rc >= 0; i++)
		if (v->dom[i].sched == s && !v->mon[v->dom[i].mon].late)
			rc = read_domain(v, i, k, ref, &end);
	t4_hist_add(&v->latency, end - ref);
	if (k == v->last && end > v->st.end_ref_ns)
		v->st.end_ref_ns = end;
	return rc;
}

/* Every scheduler fires trigger k (grid point grid) in the order of their
 * reference times, as the live ones would, each on its own CPU: so the
 * bookmark in force when one fires is the one at its reference time. */
static int fire_all(struct virt *v, uint64_t k, uint64_t grid)
{
	int rc = 0;

	for (size_t s = 0; s < v->n_sched; s++) {
		v->sched[s].ref = grid + draw(v, TAG_JITTER, v->sched[s].id, k, 0, V_JITTER_MAX);
		v->sched[s].fired = false;
	}
	for (size_t n = 0; n < v->n_sched && rc >= 0; n++) {
		uint32_t next = UINT32_MAX;

		for (uint32_t s = 0; s < v->n_sched; s++)
			if (!v->sched[s].fired &&
			    (next == UINT32_MAX || v->sched[s].ref < v->sched[next].ref))
				next = s;
		v->sched[next].fired = true;
		rc = fire(v, next, k);
	}
	return rc;
}

/* ---- the recording ----------------------------------------------------------- */

static void finish_status(struct virt *v, struct t4_sched_status *st)
{
	*st = v->st;
	st->schedulers = (uint32_t)v->n_sched;
	st->triggers = (v->last + 1) * v->n_sched - st->overruns;
	st->finished = true;
	st->periodic = true;
	st->period_ns = v->o->period_ns;
	sched_bookmarks_name(v->bm, st->bookmark_id, st->bookmark, sizeof(st->bookmark));
	st->latency_p50 = t4_hist_quantile(&v->latency, 0.5);
	st->latency_p99 = t4_hist_quantile(&v->latency, 0.99);
	st->latency_max = v->latency.max;
	st->window_p50 = t4_hist_quantile(&v->window, 0.5);
	st->window_p99 = t4_hist_quantile(&v->window, 0.99);
	st->window_max = v->window.max;
	st->skew_p50 = t4_hist_quantile(&v->skew, 0.5);
	st->skew_p99 = t4_hist_quantile(&v->skew, 0.99);
	st->skew_max = v->skew.max;
}

static int virt_init(struct virt *v, const struct t4_virtual_opts *o)
{
	int rc;

	v->o = o;
	if ((rc = check_opts(v)) < 0)
		return rc;
	v->t0 = t4_sim_epoch(v->sim) + V_LEAD_NS;
	v->last = (o->duration_ns + o->period_ns - 1) / o->period_ns;
	if ((rc = setup_domains(v)) < 0)
		return rc;
	return setup_bookmarks(v);
}

int t4_virtual_record(const struct t4_virtual_opts *o, struct t4_sched_status *st)
{
	struct virt *v = calloc(1, sizeof(*v));
	int rc;

	if (!v)
		return t4_err(ENOMEM, "virtual recording: out of memory");
	rc = virt_init(v, o);
	for (uint64_t k = 0; rc >= 0 && k <= v->last; k++) {
		if (o->log && t4_log_error(o->log)) {
			v->last = k ? k - 1 : 0; /* the log stopped (said by it): */
			break;                   /* nothing more is kept */
		}
		if (o->stop && *o->stop && k + 1 < v->last)
			v->last = k + 1; /* stopped: end on the grid, as live */
		rc = fire_all(v, k, v->t0 + k * o->period_ns);
		if (rc >= 0 && o->on_trigger)
			o->on_trigger(o->progress_ud);
	}
	if (rc >= 0) /* what was set after scheduler 0's final trigger, as live */
		sched_bookmarks_close(v->bm, v->last + 1, o->ring);
	if (rc >= 0 && st)
		finish_status(v, st);
	sched_bookmarks_free(v->bm);
	free(v->sched);
	free(v->dom);
	free(v->mon);
	free(v);
	return rc < 0 ? rc : 0;
}

int t4_virtual_session(const struct t4_virtual_opts *o, const char *cmdline,
		       struct t4_session_pkt *s)
{
	const struct t4_sim *sim;
	int rc = check_domains(o->domains, &sim);
	uint64_t t0;

	if (rc < 0)
		return rc;
	t0 = t4_sim_epoch(sim) + V_LEAD_NS;
	t4_session_init(s, cmdline, t0, V_REAL_BASE_NS + t0, o->period_ns, true);
	s->session_id = t4_session_content_id(s); /* the same bytes for a seed */
	return 0;
}
