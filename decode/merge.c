/* merge.c - several hosts' logs on one timeline (`decode a.t4t b.t4t ...`).
 *
 * A layer over the per-log decoder, which stays as it is: each log is
 * decoded by its own decoder into one sink, one host after the other,
 * and the decoder is told where its host lies on UTC (t4_place), so that
 * every output's --time real and --time rel, and the merged summary, put
 * the hosts on one axis through one function (t4_decoder_time).
 *
 * Placement. Every reference packet carries CLOCK_REALTIME read together
 * with the reference clock. A first pass over each log fits one line
 * through those (ref_ns, real_ns) stamps by least squares (offset and
 * rate: NTP slews a host's realtime against its raw clock by up to
 * 500 ppm, which one offset would turn into milliseconds over a long
 * recording), streaming (Welford's sums), so memory stays bounded. How
 * far the line may be from true UTC: each stamp is within the kernel's
 * maximum error of the host's clock (adjtimex maxerror, recorded in the
 * host packets, FORMAT.md 4.5b), and the line is within the largest
 * residual of a stamp, so the bound is maxerror plus that residual (at
 * the stamps: the line minus true UTC is linear between them when the
 * clock's rate holds, and the residual absorbs where it does not). The
 * largest residual is kept in bounded memory: stamps are gathered in at
 * most DEC_FIT_BUCKETS runs, each keeping its two extreme stamps against
 * rate 1; a run's other stamps can lie at most |rate - 1| x its length
 * further from the line, which is added.
 *
 * What it refuses or says: a log given twice (the same session), a log
 * without realtime stamps; hosts whose clock was not synchronised, whose
 * sync state is unknown (older logs), whose stamps stray from one line,
 * or whose span overlaps no other host's are decoded with a warning, and
 * so are logs of different jobs.
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEC_FIT_BUCKETS 4096       /* runs of stamps kept for the residual */
#define DEC_STRAY_WARN_NS 1000000  /* a residual above this: said */
#define DEC_LOOSE_WARN_NS 1000000000ull /* a synchronised host's bound above this: said */
#define DEC_RATE_MAX 0.01          /* realtime against the reference clock: NTP
				    * slews by 500 ppm at most; 1% is damage */

/* One run of consecutive stamps: its span and its extremes of
 * d = real - ref (relative to the first stamp). */
struct dec_fit_run {
	double x_lo, x_hi;           /* ref span */
	double x_min, d_min, x_max, d_max;
	uint64_t n;
};

/* The streaming fit of one host's stamps. */
struct dec_fit {
	uint64_t n;
	uint64_t ref_base, real_base;
	double mx, my, cxx, cxy;     /* Welford's means and co-moments */
	struct dec_fit_run run[DEC_FIT_BUCKETS];
	size_t n_runs;
	uint64_t per_run;            /* stamps per run (doubles when full) */
};

struct dec_host {
	struct t4_place pl;
	struct t4_index *ix;         /* the first pass's (no totals) */
	struct t4_decoder *dec;
	struct t4_reader_stats rst;
	uint64_t warnings;           /* the reader's, in the first pass */
};

struct t4_merge {
	struct dec_host *h;
	size_t n;
};

/* ---- the line ------------------------------------------------------------- */

/* a + b, saturating (a crafted log's stamps may be anything). */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* a - b as a double, exactly where it is small (u64 ns near 2^60). */
static double diff(uint64_t a, uint64_t b)
{
	return a >= b ? (double)(a - b) : -(double)(b - a);
}

int64_t t4_place_real(const struct t4_place *p, uint64_t ref_ns)
{
	return sat_add(p->real0_ns, dec_round(diff(ref_ns, p->ref0_ns) * p->rate));
}

int64_t t4_place_rel(const struct t4_place *p, uint64_t ref_ns)
{
	int64_t real = t4_place_real(p, ref_ns), r;

	return __builtin_sub_overflow(real, p->origin_real_ns, &r) ? INT64_MAX : r;
}

uint64_t t4_place_ref(const struct t4_place *p, int64_t real_ns)
{
	int64_t dr;
	double dx = __builtin_sub_overflow(real_ns, p->real0_ns, &dr)
			    ? (double)real_ns - (double)p->real0_ns
			    : (double)dr;
	int64_t d = dec_round(dx / (p->rate > 0 ? p->rate : 1));

	if (d < 0)
		return (uint64_t)-(d + 1) >= p->ref0_ns ? 0 : p->ref0_ns - (uint64_t)-(d + 1) - 1;
	return (uint64_t)d > UINT64_MAX - p->ref0_ns ? UINT64_MAX : p->ref0_ns + (uint64_t)d;
}

static void fit_run_merge(struct dec_fit_run *a, const struct dec_fit_run *b)
{
	if (b->d_min < a->d_min)
		a->x_min = b->x_min, a->d_min = b->d_min;
	if (b->d_max > a->d_max)
		a->x_max = b->x_max, a->d_max = b->d_max;
	a->x_hi = b->x_hi;
	a->n += b->n;
}

/* Runs full: pairs merge, each run holds twice as many stamps. */
static void fit_halve(struct dec_fit *f)
{
	size_t k = 0;

	for (size_t i = 0; i < f->n_runs; i += 2, k++) {
		f->run[k] = f->run[i];
		if (i + 1 < f->n_runs)
			fit_run_merge(&f->run[k], &f->run[i + 1]);
	}
	f->n_runs = k;
	f->per_run *= 2;
}

static void fit_add(struct dec_fit *f, uint64_t ref_ns, uint64_t real_ns)
{
	if (!f->n) {
		f->ref_base = ref_ns;
		f->real_base = real_ns;
		f->per_run = 1;
	}
	double x = diff(ref_ns, f->ref_base), y = diff(real_ns, f->real_base), d = y - x;
	double dx = x - f->mx;

	f->n++;
	f->mx += dx / (double)f->n;
	f->my += (y - f->my) / (double)f->n;
	f->cxx += dx * (x - f->mx);
	f->cxy += dx * (y - f->my);
	struct dec_fit_run *r = f->n_runs ? &f->run[f->n_runs - 1] : NULL;
	if (r && r->n < f->per_run) {
		fit_run_merge(r, &(struct dec_fit_run){ x, x, x, d, x, d, 1 });
		return;
	}
	if (f->n_runs == DEC_FIT_BUCKETS)
		fit_halve(f);
	f->run[f->n_runs++] = (struct dec_fit_run){ x, x, x, d, x, d, 1 };
}

/* The line and its residual bound into p; -EINVAL where the stamps are
 * no clock's. */
static int fit_place(const struct dec_fit *f, struct t4_place *p)
{
	double rate = f->n >= 2 && f->cxx > 0 ? f->cxy / f->cxx : 1;
	double a = f->my - rate * f->mx; /* y = a + rate x */
	double worst = 0, longest = 0;

	for (size_t i = 0; i < f->n_runs; i++) {
		const struct dec_fit_run *r = &f->run[i];
		double e1 = fabs(r->d_min + r->x_min - a - rate * r->x_min);
		double e2 = fabs(r->d_max + r->x_max - a - rate * r->x_max);
		worst = dec_fmax(worst, dec_fmax(e1, e2));
		longest = dec_fmax(longest, r->x_hi - r->x_lo);
	}
	p->ref0_ns = f->ref_base;
	p->real0_ns = sat_add((int64_t)f->real_base, dec_round(a));
	p->rate = rate;
	p->stamps = f->n;
	if (!(fabs(rate - 1) <= DEC_RATE_MAX))
		return t4_err(EINVAL, "%s: its realtime stamps run %.0f ppm from its reference clock"
			      " (no clock NTP disciplines; damaged?): it cannot be placed on a common"
			      " timeline (decode it alone)", p->log, (rate - 1) * 1e6);
	double r = worst + fabs(rate - 1) * longest + 1; /* +1: rounding */
	p->residual_ns = r < 9e18 ? (uint64_t)ceil(r) : UINT64_MAX / 4;
	return 0;
}

/* ---- the first pass ------------------------------------------------------- */

static void count_warning(void *ud, uint64_t offset, const char *msg)
{
	struct dec_host *h = ud;

	(void)offset, (void)msg;
	h->warnings++; /* said once, by the decoding pass */
	t4_index_damage(h->ix); /* (its bookmark packets may not be the phases) */
}

/* Index log h->pl.log and fit its stamps. */
static int host_scan(struct dec_host *h)
{
	struct t4_reader *r = NULL;
	struct t4_packet *p = malloc(sizeof(*p));
	struct dec_fit *f = calloc(1, sizeof(*f));
	int rc = p && f ? t4_index_new(&h->ix) : t4_err(ENOMEM, "out of memory");

	if (rc == 0) {
		t4_index_no_totals(h->ix);
		rc = t4_reader_open(&r, h->pl.log, count_warning, h);
	}
	int got = 0;
	while (rc == 0 && (got = t4_reader_next(r, p)) > 0) {
		int a = t4_index_add(h->ix, p);
		if (a < 0)
			rc = a;
		else if (a != T4_INDEX_REPEAT && p->type == T4_PKT_REF && p->ref.real_ns &&
			 p->ref.real_ns <= INT64_MAX && t4_index_ref_plausible(h->ix, &p->ref))
			fit_add(f, p->ref.ref_ns, p->ref.real_ns);
	}
	if (rc == 0 && got < 0 && !f->n) /* a read error: what was read, else it */
		rc = got;
	if (r)
		t4_reader_stats(r, &h->rst);
	t4_reader_close(r);
	if (rc == 0 && !f->n && (h->warnings || h->rst.truncated || h->rst.damaged_chunks))
		rc = t4_err(EINVAL, "%s: damaged or truncated before any reference packet with a"
			    " realtime stamp: its host cannot be placed on a common timeline"
			    " (decode it alone)", h->pl.log);
	if (rc == 0 && !f->n)
		rc = t4_err(EINVAL, "%s: no reference packet with a realtime stamp: its host cannot"
			    " be placed on a common timeline (decode it alone)", h->pl.log);
	if (rc == 0)
		rc = fit_place(f, &h->pl);
	free(f);
	free(p);
	return rc;
}

/* The host's name and session, and its clock's sync state. */
static void host_describe(struct dec_host *h)
{
	const struct t4_session_pkt *s = t4_index_session(h->ix);
	const struct t4_index_host *hs = t4_index_host(h->ix);
	struct t4_place *p = &h->pl;
	const char *base = strrchr(p->log, '/');

	snprintf(p->host, sizeof(p->host), "%s",
		 s && *s->host ? s->host : hs && *hs->first.host ? hs->first.host
				 : base ? base + 1 : p->log);
	p->session_id = s ? s->session_id : 0;
	p->first_ns = t4_index_origin_ns(h->ix);
	for (size_t i = 0; i < t4_index_n_scheds(h->ix); i++)
		if (t4_index_sched_at(h->ix, i)->last_ns > p->last_ns)
			p->last_ns = t4_index_sched_at(h->ix, i)->last_ns;
	p->sync_known = hs && hs->known;
	if (p->sync_known) {
		p->sync_samples = hs->known;
		p->unsynced = hs->unsynced;
		p->maxerror_us = hs->worst_maxerror_us;
		p->esterror_us = hs->worst_esterror_us;
	}
	uint64_t kernel = p->maxerror_us > UINT64_MAX / 2000 ? UINT64_MAX / 2 : p->maxerror_us * 1000;
	p->bound_ns = kernel + p->residual_ns;
}

/* ---- checks ---------------------------------------------------------------- */

static bool same_recording(const struct dec_host *a, const struct dec_host *b)
{
	const struct t4_session_pkt *sa = t4_index_session(a->ix), *sb = t4_index_session(b->ix);

	if (sa && sb && sa->session_id && sb->session_id)
		return sa->session_id == sb->session_id;
	return sa && sb && !strcmp(sa->host, sb->host) && sa->start_real_ns == sb->start_real_ns &&
	       sa->start_ref_ns == sb->start_ref_ns;
}

static int check_twice(const struct t4_merge *m)
{
	char safe[4 * T4_NAME_MAX];

	for (size_t i = 0; i < m->n; i++)
		for (size_t j = i + 1; j < m->n; j++) {
			char why[64] = "the same start; no session ID to tell them apart";
			if (!same_recording(&m->h[i], &m->h[j]))
				continue;
			if (m->h[i].pl.session_id && m->h[j].pl.session_id)
				snprintf(why, sizeof(why), "session %016" PRIx64,
					 m->h[i].pl.session_id);
			return t4_err(EINVAL, "%s and %s are the same recording (host %s, %s): give "
				      "each host's log once", m->h[i].pl.log, m->h[j].pl.log,
				      t4_text(m->h[i].pl.host, T4_TEXT_CONTROL, safe, sizeof(safe)),
				      why);
		}
	return 0;
}

/* Whether label is a host's name, or the label of a host before i. */
static bool label_taken(const struct t4_merge *m, char (*names)[T4_NAME_MAX], size_t i,
			const char *label)
{
	for (size_t j = 0; j < m->n; j++)
		if (!strcmp(names[j], label) || (j < i && !strcmp(m->h[j].pl.host, label)))
			return true;
	return false;
}

/* Hosts of the same name are told apart: NAME/1, NAME/2, ..., never the
 * name or label of another host (a host may be named "x/1"). */
static int label_hosts(struct t4_merge *m)
{
	char(*names)[T4_NAME_MAX] = calloc(m->n, sizeof(*names));

	if (!names)
		return t4_err(ENOMEM, "out of memory");
	for (size_t i = 0; i < m->n; i++)
		memcpy(names[i], m->h[i].pl.host, T4_NAME_MAX);
	for (size_t i = 0; i < m->n; i++) {
		size_t k = 0, same = 0;
		for (size_t j = 0; j < m->n; j++) {
			bool eq = !strcmp(names[j], names[i]);
			same += eq;
			k += eq && j <= i;
		}
		if (same < 2)
			continue;
		do
			snprintf(m->h[i].pl.host, sizeof(m->h[i].pl.host), "%.*s/%zu",
				 T4_NAME_MAX - 12, names[i], k++);
		while (label_taken(m, names, i, m->h[i].pl.host));
	}
	free(names);
	return 0;
}

/* The job ID a host's log records ("" none: no host packet, or not
 * launched by Slurm). */
static const char *host_job(const struct dec_host *h)
{
	const struct t4_index_host *hs = t4_index_host(h->ix);

	return hs ? hs->first.job_id : "";
}

/* Logs of different jobs (a directory two jobs wrote into, a log copied
 * in from another run, one recorded outside any job beside a job's) are
 * merged as asked, but said: one line, the first log of another job (or
 * of none) named beside the first job's. */
static void warn_jobs(const struct t4_merge *m)
{
	const struct dec_host *first = NULL, *other = NULL;
	size_t others = 0;
	char a[4 * sizeof(((struct t4_host_pkt *)0)->job_id)], b[sizeof(a)];

	for (size_t i = 0; i < m->n; i++)
		if (*host_job(&m->h[i])) {
			first = &m->h[i];
			break;
		}
	if (!first)
		return; /* no log of a job: nothing to tell apart */
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(host_job(&m->h[i]), host_job(first)) && !others++)
			other = &m->h[i];
	if (!other)
		return;
	const char *job = t4_text(host_job(first), T4_TEXT_CONTROL, a, sizeof(a));
	const char *of = *host_job(other) ? "of job " : "of no job";
	t4_warn("%s is %s%s, %s of job %s: logs of different jobs on one timeline (%zu of"
		" the %zu not of job %s)",
		other->pl.log, of, t4_text(host_job(other), T4_TEXT_CONTROL, b, sizeof(b)),
		first->pl.log, job, others, m->n, job);
}

/* Said on stderr, never in the outputs (which say the bound). */
static void warn_host(const struct dec_host *h, const struct t4_merge *m)
{
	const struct t4_place *p = &h->pl;
	char safe[4 * T4_NAME_MAX], b[32];
	const char *host = t4_text(p->host, T4_TEXT_CONTROL, safe, sizeof(safe));

	if (!p->sync_known)
		t4_warn("%s: host %s: no clock sync state recorded (an older log, or virtual time):"
			" placed by its realtime stamps, their error unknown (+-%s is the fit's only)",
			p->log, host, t4_fmt_duration(p->bound_ns, b, sizeof(b)));
	else if (p->unsynced)
		t4_warn("%s: host %s: the kernel says its clock was not synchronised (%" PRIu64
			" of %" PRIu64 " samples): placed within +-%s only",
			p->log, host, p->unsynced, p->sync_samples,
			t4_fmt_duration(p->bound_ns, b, sizeof(b)));
	else if (p->bound_ns > DEC_LOOSE_WARN_NS) /* synchronised, yet its kernel doubts it */
		t4_warn("%s: host %s: synchronised, but the kernel states its clock's error up to"
			" +-%s: placed within that only",
			p->log, host, t4_fmt_duration(p->bound_ns, b, sizeof(b)));
	if (p->residual_ns > DEC_STRAY_WARN_NS)
		t4_warn("%s: host %s: its realtime stamps stray up to %s from one line (the clock"
			" was stepped during the recording?)",
			p->log, host, t4_fmt_duration(p->residual_ns, b, sizeof(b)));
	int64_t a0 = t4_place_real(p, p->first_ns), a1 = t4_place_real(p, p->last_ns);
	bool overlaps = m->n < 2;
	for (size_t j = 0; j < m->n && !overlaps; j++) {
		const struct t4_place *q = &m->h[j].pl;
		overlaps = q != p && t4_place_real(q, q->first_ns) <= a1 &&
			   a0 <= t4_place_real(q, q->last_ns);
	}
	if (!overlaps)
		t4_warn("%s: host %s: its recording overlaps no other log's in time: placed by its"
			" clock alone, %s from the first host's start",
			p->log, host, t4_fmt_duration((uint64_t)t4_place_rel(p, p->first_ns), b, sizeof(b)));
}

/* ---- opening ----------------------------------------------------------------- */

void t4_merge_free(struct t4_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		t4_decoder_free(m->h[i].dec);
		t4_index_free(m->h[i].ix);
	}
	free(m->h);
	free(m);
}

int t4_merge_open(struct t4_merge **out, const char *const *paths, size_t n)
{
	struct t4_merge *m = calloc(1, sizeof(*m));
	int rc = 0;

	if (!m || !(m->h = calloc(n ? n : 1, sizeof(*m->h)))) {
		free(m);
		return t4_err(ENOMEM, "out of memory");
	}
	m->n = n;
	for (size_t i = 0; i < n && rc == 0; i++) {
		m->h[i].pl.index = i;
		m->h[i].pl.log = paths[i];
		if (!strcmp(paths[i], "-"))
			rc = t4_err(EINVAL, "standard input cannot be merged with other logs: give"
				    " each log as a file");
		else if ((rc = host_scan(&m->h[i])) == 0)
			host_describe(&m->h[i]);
	}
	if (rc == 0)
		rc = check_twice(m);
	if (rc == 0)
		rc = label_hosts(m);
	if (rc < 0) {
		t4_merge_free(m);
		return rc;
	}
	int64_t origin = INT64_MAX;
	for (size_t i = 0; i < n; i++) {
		int64_t a = t4_place_real(&m->h[i].pl, m->h[i].pl.first_ns);
		origin = a < origin ? a : origin;
	}
	for (size_t i = 0; i < n; i++)
		m->h[i].pl.origin_real_ns = origin;
	warn_jobs(m);
	for (size_t i = 0; i < n; i++)
		warn_host(&m->h[i], m);
	*out = m;
	return 0;
}

size_t t4_merge_n_hosts(const struct t4_merge *m)
{
	return m->n;
}

const struct t4_place *t4_merge_place(const struct t4_merge *m, size_t i)
{
	return i < m->n ? &m->h[i].pl : NULL;
}

const struct t4_decoder *t4_merge_decoder(const struct t4_merge *m, size_t i)
{
	return i < m->n ? m->h[i].dec : NULL;
}

/* ---- decoding ------------------------------------------------------------------ */

/* A bookmark the options name: hosts without it are left out (said);
 * none with it is the single log's error. */
static bool host_has(const struct dec_host *h, const char *name)
{
	return !name || t4_index_bookmark_id(h->ix, name) >= 0;
}

static bool host_wanted(const struct dec_host *h, const struct t4_decode_opts *o)
{
	return host_has(h, o->phase) && host_has(h, o->from.is_bookmark ? o->from.bookmark : NULL) &&
	       host_has(h, o->to.is_bookmark ? o->to.bookmark : NULL);
}

/* What the options name must be in one of the logs (filters.c), before
 * any is decoded: nothing is output for a name none of them has. */
static int check_names(const struct t4_merge *m, const struct t4_decode_opts *o)
{
	const struct t4_index **ix = calloc(m->n, sizeof(*ix));
	int rc;

	if (!ix)
		return t4_err(ENOMEM, "out of memory");
	for (size_t i = 0; i < m->n; i++)
		ix[i] = m->h[i].ix;
	rc = t4_decode_check(ix, m->n, o);
	free(ix);
	return rc;
}

static void say_damage(const struct dec_host *h)
{
	const struct t4_reader_stats *st = t4_decoder_reader_stats(h->dec);
	char safe[4 * T4_NAME_MAX];

	if (st->damaged_chunks || st->truncated || st->skipped_bytes)
		t4_warn("%s: host %s: the log is damaged or truncated: decoded what is intact (its"
			" totals are partial)",
			h->pl.log, t4_text(h->pl.host, T4_TEXT_CONTROL, safe, sizeof(safe)));
}

/* Each name is in some log (check_names), but no log has them all (a
 * --from in one host's log, a --to in another's): said as such, not as
 * a window that keeps nothing. */
static int check_some_host_wanted(const struct t4_merge *m, const struct t4_decode_opts *o)
{
	for (size_t i = 0; i < m->n; i++)
		if (host_wanted(&m->h[i], o))
			return 0;
	return t4_err(EINVAL, "no log has the bookmark the options name (--phase, --from, --to)");
}

/* A --to with no occurrence after --from in a host decoded: refused
 * before any output, where the host's index can tell (filters.c). */
static int check_window_to(const struct t4_merge *m, const struct t4_decode_opts *o)
{
	int rc = 0;

	for (size_t i = 0; i < m->n && !rc; i++)
		if (host_wanted(&m->h[i], o))
			rc = dec_window_to_check(m->h[i].ix, o, &m->h[i].pl);
	return rc;
}

/* Filters that keep no interval of any host are refused before any
 * output (every format writes a host's part as it goes): a quiet decode
 * of each host wanted, up to the first interval kept. */
static int check_kept(struct t4_merge *m, const struct t4_decode_opts *o)
{
	bool kept = false;
	int rc = check_some_host_wanted(m, o);

	if (rc < 0 || !dec_filters_select(o))
		return rc;
	for (size_t i = 0; i < m->n && rc >= 0 && !kept; i++)
		if (host_wanted(&m->h[i], o))
			rc = dec_selection_check_file(m->h[i].pl.log, o, &m->h[i].pl, &kept);
	for (size_t i = 0; i < m->n && rc >= 0 && !kept; i++)
		if (dec_log_has_intervals(m->h[i].ix))
			return dec_selection_empty(NULL, o);
	return rc;
}

int t4_merge_decode(struct t4_merge *m, const struct t4_decode_opts *o,
		    const struct t4_sink_ops *ops, void *ud)
{
	int rc = check_names(m, o);

	if (rc >= 0)
		rc = check_window_to(m, o);
	if (rc >= 0)
		rc = check_kept(m, o);
	for (size_t i = 0; i < m->n && rc >= 0; i++) {
		struct dec_host *h = &m->h[i];
		char safe[4 * T4_NAME_MAX];
		if (!host_wanted(h, o)) {
			t4_warn("%s: host %s: has no bookmark the options name: left out", h->pl.log,
				t4_text(h->pl.host, T4_TEXT_CONTROL, safe, sizeof(safe)));
			continue;
		}
		if ((rc = t4_decoder_new(&h->dec, o, ops, ud)) < 0)
			break;
		t4_decoder_set_place(h->dec, &h->pl);
		if (ops->host && (rc = ops->host(ud, h->dec)) < 0)
			break;
		if ((rc = t4_decoder_run_file(h->dec, h->pl.log)) >= 0)
			say_damage(h);
		t4_decoder_trim(h->dec); /* kept for the tables: only what they read */
	}

	if (rc >= 0 && ops->merged)
		rc = ops->merged(ud, m);
	return rc;
}
