/* live.c - the recorder's live numbers: the log's packets into an index
 * (decode/index.c) on the writer thread, snapshots of it on any other.
 *
 * One mutex guards the index: the writer takes it once per packet (never
 * contended but while a snapshot is copied, a few microseconds a second);
 * readers copy the numbers out and format them outside it. The bookmark in
 * force is the last bookmark packet written (scheduler 0 writes them in
 * command order), kept here because the index keeps only the first ones.
 */
#include "live.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct t4_live {
	pthread_mutex_t lock;
	struct t4_index *ix; /* NULL once out of memory */
	char phase[T4_NAME_MAX];
	uint64_t phase_set_ns;
};

int t4_live_new(struct t4_live **out)
{
	struct t4_live *l = calloc(1, sizeof(*l));
	int rc;

	if (!l)
		return t4_err(ENOMEM, "out of memory");
	if ((rc = t4_index_new(&l->ix)) < 0) {
		free(l);
		return rc;
	}
	pthread_mutex_init(&l->lock, NULL);
	*out = l;
	return 0;
}

void t4_live_free(struct t4_live *l)
{
	if (!l)
		return;
	t4_index_free(l->ix);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

void t4_live_feed(struct t4_live *l, const struct t4_packet *p)
{
	pthread_mutex_lock(&l->lock);
	if (l->ix) {
		int rc = t4_index_add(l->ix, p);

		if (rc < 0) {
			t4_index_free(l->ix); /* out of memory: no live numbers, the log goes on */
			l->ix = NULL;
		} else if (rc == 0 && p->type == T4_PKT_BOOKMARK) {
			/* named as decode names it: by its ID's first packet */
			const char *n = t4_index_bookmark_name(l->ix, p->bookmark.bookmark_id);
			snprintf(l->phase, sizeof(l->phase), "%s", n ? n : p->bookmark.name);
			l->phase_set_ns = p->bookmark.set_ns;
		}
	}
	pthread_mutex_unlock(&l->lock);
}

const struct t4_index *t4_live_index(const struct t4_live *l)
{
	return l->ix;
}

void t4_live_snap_free(struct t4_live_snap *s)
{
	free(s->doms);
	memset(s, 0, sizeof(*s));
}

/* One domain of the index into d. */
static void copy_domain(const struct t4_index *ix, const struct t4_index_domain *x,
			struct t4_live_domain *d)
{
	memset(d, 0, sizeof(*d));
	d->id = x->d.domain_id;
	d->kind = x->d.kind;
	d->cpu = x->d.cpu;
	snprintf(d->name, sizeof(d->name), "%s", x->d.name);
	d->first_ns = x->first_ns;
	d->last_ns = x->last_ns;
	d->rets = x->rets;
	d->n_events = x->n_counts < T4_MAX_COUNTERS ? x->n_counts : T4_MAX_COUNTERS;
	for (uint32_t i = 0; i < d->n_events; i++) {
		const struct t4_event_pkt *e = t4_index_event(ix, d->id, i);
		struct t4_live_event *v = &d->ev[i];
		if (e) {
			snprintf(v->name, sizeof(v->name), "%s", e->name);
			snprintf(v->unit, sizeof(v->unit), "%s", e->unit);
			v->flags = e->flags;
			if (!d->pmu[0])
				snprintf(d->pmu, sizeof(d->pmu), "%s", e->pmu);
		} else {
			snprintf(v->name, sizeof(v->name), "event%u", i);
		}
		v->total = (uint64_t)x->totals[i]; /* the low 64 bits: rates wrap, as counters do */
	}
}

static void copy_head(const struct t4_index *ix, struct t4_live_snap *s)
{
	const struct t4_session_pkt *ses = t4_index_session(ix);

	if (ses) {
		snprintf(s->host, sizeof(s->host), "%s", ses->host);
		s->simulated = ses->flags & T4_SESSION_SIMULATED;
		s->ref_clock = ses->ref_clock;
		s->period_ns = ses->period_ns;
	}
	s->triggers = t4_index_counts(ix)->refs;
	s->overruns = t4_index_overruns(ix);
	s->read_failures = t4_index_read_failures(ix);
}

int t4_live_take(struct t4_live *l, const struct t4_live_health *h, struct t4_live_snap *out)
{
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->now_ns = h->now_ns;
	out->dropped = h->dropped;
	out->cpu_ns = h->cpu_ns;
	pthread_mutex_lock(&l->lock);
	if (!l->ix) {
		rc = t4_err(ENOMEM, "the live numbers ran out of memory (the recording goes on)");
		goto out;
	}
	size_t n = t4_index_n_domains(l->ix);
	if (n && !(out->doms = calloc(n, sizeof(*out->doms)))) {
		rc = t4_err(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct t4_index_domain *x = t4_index_domain_at(l->ix, i);
		if (x->rets)
			copy_domain(l->ix, x, &out->doms[out->n_domains++]);
	}
	copy_head(l->ix, out);
	snprintf(out->phase, sizeof(out->phase), "%s", l->phase);
	out->phase_set_ns = l->phase_set_ns;
out:
	pthread_mutex_unlock(&l->lock);
	return rc;
}
