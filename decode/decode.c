/* decode.c - the decoder's front: packets in, per-domain pipelines and the
 * join with reference packets, the time window, queries.
 *
 * Packets are taken in log order. Metadata goes to the index (and marks
 * the domains whose names or events changed); reference packets go into
 * their scheduler's ring (DEC_RCAP triggers, by trigger ID), which is the
 * join's look-ahead; return packets go into their domain's pipeline
 * (dom.c). A domain hands an interval out only once its scheduler's
 * reference packets have run `lookahead` triggers past it (or the log
 * ended), so a reference packet that lands in a later chunk than its
 * returns is still joined. A trigger without a reference packet takes the
 * bookmark in force before it and is flagged.
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---- option parsing ---------------------------------------------------------- */

static const char *const model_names[] = { "rate", "offset", "window" };

const char *t4_clock_model_name(enum t4_clock_model m)
{
	return (unsigned)m < T4_ARRAY_LEN(model_names) ? model_names[m] : "?";
}

int t4_clock_model_parse(const char *s, enum t4_clock_model *out)
{
	for (size_t i = 0; i < T4_ARRAY_LEN(model_names); i++)
		if (!strcmp(s, model_names[i])) {
			*out = (enum t4_clock_model)i;
			return 0;
		}
	return t4_err(EINVAL, "clock model '%s': use rate, offset or window", s);
}

int t4_timepoint_parse(const char *s, struct t4_timepoint *out)
{
	uint64_t ns;

	memset(out, 0, sizeof(*out));
	if (!s || !*s)
		return t4_err(EINVAL, "empty time: use e.g. 1.5s, 200ms or a bookmark name");
	out->set = true;
	snprintf(out->text, sizeof(out->text), "%s", s);
	if ((s[0] >= '0' && s[0] <= '9') || s[0] == '.') {
		if (!strcmp(s, "0")) {
			out->offset_ns = 0;
			return 0;
		}
		int rc = t4_parse_offset(s, &ns);
		if (rc < 0)
			return rc;
		out->offset_ns = ns;
		return 0;
	}
	if (strlen(s) >= T4_NAME_MAX)
		return t4_err(EINVAL, "'%s': not a duration, and too long for a bookmark", s);
	out->is_bookmark = true;
	snprintf(out->bookmark, sizeof(out->bookmark), "%s", s);
	return 0;
}

/* ---- schedulers and the join ---------------------------------------------- */

/* The ring of reference packets holds the look-ahead the format promises
 * readers wait for, twice (the join looks back as far as ahead). */
_Static_assert(T4_LOOKAHEAD_TRIGGERS <= DEC_RCAP / 2, "the look-ahead fits the ring");

struct dsched *dec_sched(struct t4_decoder *d, uint32_t id)
{
	for (size_t i = 0; i < d->n_scheds; i++)
		if (d->scheds[i].id == id)
			return &d->scheds[i];
	if (dec_vec_room((void **)&d->scheds, &d->cap_scheds, d->n_scheds,
			sizeof(*d->scheds)) < 0)
		return NULL;
	struct dsched *s = &d->scheds[d->n_scheds];
	memset(s, 0, sizeof(*s));
	s->id = id;
	if (!(s->ring = calloc(DEC_RCAP, sizeof(*s->ring)))) {
		t4_err(ENOMEM, "out of memory");
		return NULL;
	}
	d->n_scheds++;
	return s;
}

const struct dsched *dec_sched_find(const struct t4_decoder *d, uint32_t id)
{
	for (size_t i = 0; i < d->n_scheds; i++)
		if (d->scheds[i].id == id)
			return &d->scheds[i];
	return NULL;
}

/* Let the domains waiting for scheduler s (every domain, when s is the
 * phase scheduler) hand out what the join now allows, in slot order: only
 * those whose bit in d->waiting says they hold placed samples (a
 * reference packet finds most domains with none: the clock model places
 * a block at a time). */
static int drain_sched(struct t4_decoder *d, const struct dsched *s)
{
	bool phase = d->have_phase_sched && s->id == d->phase_sched;

	for (size_t w = 0; w * 64 < d->n_doms; w++)
		for (uint64_t bits = d->waiting[w]; bits; bits &= bits - 1) {
			struct dom *dm = d->doms[w * 64 + (size_t)__builtin_ctzll(bits)];
			if (dm->pub.selected && dm->pcur > dm->head &&
			    (phase || dm->pub.ix->d.sched_id == s->id)) {
				int rc = dom_drain(d, dm, false);
				if (rc < 0)
					return rc;
			}
		}
	return 0;
}

/* Trigger IDs of scheduler s with neither a reference packet nor an
 * overrun that accounts for them: grid IDs leave a gap wherever the
 * scheduler missed a grid point, and its next packet says how many
 * (docs/FORMAT.md 6; the first packet's overruns fall before the span). */
static uint64_t refs_missing(const struct t4_decoder *d, const struct dsched *s)
{
	const struct t4_index_sched *is = s->any ? t4_index_sched(d->ix, s->id) : NULL;

	if (!is)
		return 0;
	uint64_t span = is->last - is->first + 1;
	uint64_t accounted = is->refs - is->duplicates + is->overruns - is->first_overruns;
	return span > accounted ? span - accounted : 0;
}

static int take_ref(struct t4_decoder *d, const struct t4_ref_pkt *r)
{
	struct dsched *s = dec_sched(d, r->sched_id);
	struct refent *e;
	bool advanced;

	if (!s)
		return -ENOMEM;
	e = &s->ring[r->trigger_id & (DEC_RCAP - 1)];
	if (e->present && e->trigger == r->trigger_id) {
		d->dmg.refs_duplicate++;
		return 0;
	}
	*e = (struct refent){ r->trigger_id, r->ref_ns, r->bookmark_id, r->flags, true };
	s->refs++;
	advanced = !s->any || r->trigger_id > s->watermark;
	if (advanced)
		s->watermark = r->trigger_id;
	s->any = true;
	if (!d->have_phase_sched || r->sched_id < d->phase_sched) {
		d->phase_sched = r->sched_id;
		d->have_phase_sched = true;
	}
	/* the origin: the index's (the earliest trigger), until the first
	 * output fixes it */
	if (!d->have_origin)
		d->origin_ns = t4_index_origin_ns(d->ix);
	int rc = phases_ref(d, s, false);
	if (rc >= 0 && r->sched_id == d->phase_sched)
		rc = slices_pair(d, r->mono_ns, r->ref_ns);
	if (rc < 0)
		return rc;
	return advanced ? drain_sched(d, s) : 0;
}

/* ---- domains ---------------------------------------------------------------- */

static void mark_dirty(struct t4_decoder *d, uint32_t domain_id)
{
	int64_t slot = dec_idmap_get(&d->dom_map, domain_id);

	if (slot >= 0 && d->doms[slot]) /* NULL: another worker's (decode -j) */
		d->doms[slot]->dirty = true;
}

static int take_ret(struct t4_decoder *d, const struct t4_ret_pkt *r)
{
	int64_t slot = dec_idmap_get(&d->dom_map, r->domain_id);
	struct dom *dm = slot >= 0 ? d->doms[slot] : NULL;

	if (slot < 0 && (d->n_doms >= DEC_MAX_DOMAINS || !t4_index_domain(d->ix, r->domain_id))) {
		/* more domains than any machine has: a damaged or crafted log,
		 * whose memory must stay bounded */
		if (!d->dmg.untracked_rets++ && !d->quiet)
			t4_warn("more than %u clock domains: the returns of the others are not"
				" decoded (a damaged or crafted log?)", DEC_MAX_DOMAINS);
		return 0;
	}
	if (slot < 0 && d->par_n && d->n_doms % d->par_n != d->par_k)
		return dom_elsewhere(d, r->domain_id); /* decode -j: another worker's */
	if (!dm && slot >= 0)
		return 0; /* another worker's */
	if (!dm && !(dm = dom_of(d, r->domain_id)))
		return -ENOMEM;
	if (!dm->pub.selected || dm->pub.ix->redescribed)
		return 0; /* (re-described: counted by the index, not decoded) */
	return dom_take(d, dm, r);
}

/* A domain or event packet contradicted the description the index holds
 * (index.c): said once per log, and the domain's returns from here on go
 * the index's way only (feed_ret's short path takes none of them), in no
 * total, so that no count is put under a name that may not be its own. */
static void redescribed(struct t4_decoder *d, const struct t4_packet *p)
{
	uint32_t id = p->type == T4_PKT_DOMAIN ? p->domain.domain_id : p->event.domain_id;
	const struct t4_index_domain *ix = t4_index_domain(d->ix, id);
	int64_t slot = dec_idmap_get(&d->dom_map, id);
	char name[4 * T4_NAME_MAX], b1[4 * T4_NAME_MAX], b2[4 * T4_NAME_MAX], what[64];
	const char *was, *now;

	if (slot >= 0 && d->doms[slot])
		d->doms[slot]->ixw = NULL;
	if (d->quiet || d->said_redescribed)
		return;
	d->said_redescribed = true;
	if (p->type == T4_PKT_EVENT) {
		const struct t4_event_pkt *e = t4_index_event(d->ix, id, p->event.index);
		snprintf(what, sizeof(what), "its event %u", p->event.index);
		was = t4_text(e ? e->name : "", T4_TEXT_CONTROL, b1, sizeof(b1));
		now = t4_text(p->event.name, T4_TEXT_CONTROL, b2, sizeof(b2));
	} else {
		snprintf(what, sizeof(what), "its domain packet");
		was = t4_text(ix->d.name, T4_TEXT_CONTROL, b1, sizeof(b1));
		now = t4_text(p->domain.name, T4_TEXT_CONTROL, b2, sizeof(b2));
	}
	t4_warn("%s%sdomain %s (ID %u): %s describes it again, otherwise ('%s', was '%s'): the"
		" first description holds, and its counts from here on are not decoded (the"
		" summary and info count them)",
		d->place ? d->place->log : "", d->place ? ": " : "", /* merged: which log */
		t4_text(ix->d.name, T4_TEXT_CONTROL, name, sizeof(name)), id, what, now, was);
}

/* A bookmark packet naming its ID otherwise than the ID's first did
 * (index.c: the first name holds): said once per log. */
static void renamed(struct t4_decoder *d, const struct t4_bookmark_pkt *b)
{
	const char *first = t4_index_bookmark_name(d->ix, b->bookmark_id);
	char b1[4 * T4_NAME_MAX], b2[4 * T4_NAME_MAX];

	if (!first || !strcmp(first, b->name) || d->quiet || d->said_renamed)
		return;
	d->said_renamed = true;
	t4_warn("%s%sbookmark ID %u is named '%s' here, '%s' before: an ID keeps its first name"
		" (one ID per name: FORMAT.md 4.4)", d->place ? d->place->log : "",
		d->place ? ": " : "", b->bookmark_id,
		t4_text(b->name, T4_TEXT_CONTROL, b1, sizeof(b1)),
		t4_text(first, T4_TEXT_CONTROL, b2, sizeof(b2)));
}

/* A bookmark packet naming its ID as an earlier ID was named (index.c: the
 * first ID holds, and the phases of both are its own): said once per log. */
static void reused(struct t4_decoder *d, const struct t4_bookmark_pkt *b)
{
	uint32_t holder = t4_index_bookmark_holder(d->ix, b->bookmark_id);
	char b1[4 * T4_NAME_MAX];

	if (holder == b->bookmark_id || d->quiet || d->said_reused)
		return;
	d->said_reused = true;
	t4_warn("%s%sbookmark ID %u is named '%s', as ID %u is: a name keeps its first ID (one"
		" ID per name: FORMAT.md 4.4), and its phases are ID %u's",
		d->place ? d->place->log : "", d->place ? ": " : "", b->bookmark_id,
		t4_text(t4_decoder_bookmark(d, holder), T4_TEXT_CONTROL, b1, sizeof(b1)), holder,
		holder);
}

/* ---- lifecycle ---------------------------------------------------------------- */

int t4_decoder_new(struct t4_decoder **out, const struct t4_decode_opts *o,
		   const struct t4_sink_ops *ops, void *ud)
{
	struct t4_decoder *d = calloc(1, sizeof(*d));
	int rc;

	if (!d)
		return t4_err(ENOMEM, "out of memory");
	d->o = *o;
	d->window_to_span = -1;
	d->first_out = UINT64_MAX;
	if (!d->o.lookahead)
		d->o.lookahead = T4_LOOKAHEAD_TRIGGERS;
	if (d->o.lookahead > DEC_RCAP / 2)
		d->o.lookahead = DEC_RCAP / 2;
	if (ops)
		d->ops = *ops;
	d->ud = ud;
	if ((rc = t4_index_new(&d->ix)) < 0) {
		free(d);
		return rc;
	}
	t4_index_no_totals(d->ix); /* the domains' totals are the decoder's own */
	d->ix_counts = dec_index_counts_rw(d->ix);
	*out = d;
	return 0;
}

void t4_decoder_free(struct t4_decoder *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_doms; i++)
		dom_free(d->doms[i]);
	free(d->doms);
	dec_idmap_free(&d->dom_map);
	for (size_t i = 0; i < d->n_scheds; i++)
		free(d->scheds[i].ring);
	free(d->scheds);
	free(d->spans);
	free(d->name_ids);
	dec_idmap_free(&d->name_map);
	dec_idmap_free(&d->occ_map);
	attrib_free(d);
	free(d->phases);
	free(d->phase_span);
	free(d->ap_w);
	free(d->ap_out);
	free(d->ap_keys);
	slices_free(&d->sl);
	t4_index_free(d->ix);
	free(d);
}

/* A return packet that is no copy: t4_decoder_feed()'s usual packet, on
 * a short path (the same steps); shorter still for a domain this decoder
 * decodes: one look-up of it, and the index's counts added inline. */
static inline __attribute__((always_inline)) int feed_ret(struct t4_decoder *d,
							   const struct t4_ret_pkt *r)
{
	int64_t slot = dec_idmap_get(&d->dom_map, r->domain_id);
	struct dom *dm = slot >= 0 ? d->doms[slot] : NULL;
	int rc;

	if (dm && dm->ixw && dm->pub.selected) {
		dec_index_ret_to(d->ix_counts, dm->ixw, r);
		rc = dom_take(d, dm, r);
	} else if ((rc = dec_index_ret(d->ix, r)) < 0) {
		return rc;
	} else {
		rc = take_ret(d, r);
	}
	if (rc < 0 && !d->error)
		d->error = rc;
	return rc;
}

/* Any other packet (out of line: the switch's frame is not the usual
 * packet's). */
static __attribute__((noinline)) int feed_other(struct t4_decoder *d,
						const struct t4_packet *p)
{
	int rc;
	bool implausible = p->type == T4_PKT_REF && !t4_index_ref_plausible(d->ix, &p->ref);
	if ((rc = t4_index_add(d->ix, p)) < 0)
		return rc;
	if (rc == T4_INDEX_REPEAT)
		return 0; /* a copy of what the log already said */
	if (rc == T4_INDEX_REDESCRIBED) {
		redescribed(d, p);
		return 0;
	}
	switch (p->type) {
	case T4_PKT_REF:
		rc = implausible ? 0 : take_ref(d, &p->ref);
		break;
	case T4_PKT_RET:
		rc = take_ret(d, &p->ret);
		break;
	case T4_PKT_SESSION:
		d->period_ns = p->session.period_ns;
		rc = dec_check_bins(d->o.bin_ns, d->period_ns, d->quiet);
		break;
	case T4_PKT_DOMAIN:
		mark_dirty(d, p->domain.domain_id);
		break;
	case T4_PKT_EVENT:
		mark_dirty(d, p->event.domain_id);
		break;
	case T4_PKT_BOOKMARK:
		renamed(d, &p->bookmark);
		reused(d, &p->bookmark);
		rc = phases_bookmark(d, &p->bookmark);
		break;
	case T4_PKT_TASK:
	case T4_PKT_GPU_CTX:
	case T4_PKT_CPU_SLICE:
	case T4_PKT_GPU_SLICE:
		rc = slices_take(d, p);
		break;
	default:
		break;
	}
	if (rc < 0 && !d->error)
		d->error = rc;
	return rc;
}

/* t4_decoder_feed() of a decoder without an error, inline in feed_here()'s
 * loop: once per packet, no call and frame of its own around the return
 * packet's path. */
static inline __attribute__((always_inline)) int feed(struct t4_decoder *d,
						      const struct t4_packet *p)
{
	d->n_fed++;
	if (p->type == T4_PKT_RET && !p->copy)
		return feed_ret(d, &p->ret);
	return feed_other(d, p);
}

int t4_decoder_feed(struct t4_decoder *d, const struct t4_packet *p)
{
	if (d->error)
		return d->error;
	return feed(d, p);
}

void t4_decoder_damage(struct t4_decoder *d, uint64_t offset, const char *msg)
{
	if (!d->dmg.events++) {
		d->dmg.first_offset = offset;
		snprintf(d->dmg.first_msg, sizeof(d->dmg.first_msg), "%s", msg ? msg : "");
	}
	d->epoch++;
	t4_index_damage(d->ix); /* its epochs too: elapsed_ns */
}

/* ---- filters that match nothing are errors ------------------------------------ */

/* What the options name must be in the log (filters.c); merged, in one
 * of the logs, which t4_merge_decode checks before any is decoded. The
 * filters must keep an interval (or a slice): `--to 1ns` printed an empty
 * table and exited 0 where `--to 0` was refused; so did a --phase outside
 * the window. decode -j: worker 0 counts every worker's (gather). */
static int check_window_to(const struct t4_decoder *d);

static int check_names(const struct t4_decoder *d)
{
	const struct t4_index *ix = d->ix;
	int rc = d->place ? 0 : t4_decode_check(&ix, 1, &d->o);

	if (!rc)
		rc = check_window_to(d);

	if (!rc && !d->place && dec_filters_select(&d->o) && !d->selected &&
	    dec_log_has_intervals(ix))
		rc = dec_selection_empty(ix, &d->o);
	return rc;
}

int dec_finish_domains(struct t4_decoder *d)
{
	int rc = d->error;

	d->finishing = true;
	d->doms_finished = true;
	for (size_t i = 0; i < d->n_scheds && rc >= 0; i++)
		rc = phases_ref(d, &d->scheds[i], true);
	/* (a NULL domain: another worker's, decode -j) */
	for (size_t i = 0; i < d->n_doms && rc >= 0; i++)
		if (d->doms[i] && d->doms[i]->pub.selected)
			rc = dom_drain(d, d->doms[i], true);
	for (size_t i = 0; i < d->n_doms && rc >= 0; i++)
		if (d->doms[i] && d->doms[i]->pub.selected && d->o.bin_ns)
			rc = dec_bins_flush(d, d->doms[i]);
	for (size_t i = 0; i < d->n_doms; i++)
		if (d->doms[i])
			phases_flush(d->doms[i]);
	return rc;
}

int t4_decoder_finish(struct t4_decoder *d, const struct t4_reader_stats *st)
{
	int rc = d->doms_finished ? d->error : dec_finish_domains(d);

	if (st)
		d->rst = *st;
	if (rc >= 0)
		rc = slices_flush(d);
	if (t4_index_status(d->ix))
		d->sl.st.lost_events = t4_index_status(d->ix)->lost_events;
	for (size_t i = 0; i < d->n_scheds; i++)
		d->dmg.refs_missing += refs_missing(d, &d->scheds[i]);
	d->dmg.partial = d->rst.damaged_chunks || d->rst.truncated || d->rst.skipped_bytes;
	for (size_t i = 0; i < d->n_doms; i++)
		if (d->doms[i]->pub.unanswered_lost || d->doms[i]->pub.unplaced)
			d->dmg.partial = true;
	d->dmg.partial |= d->dmg.untracked_rets > 0 || t4_index_counts(d->ix)->implausible_refs ||
			  t4_index_counts(d->ix)->rets_redescribed ||
			  t4_index_counts(d->ix)->backwards_rets;
	if (rc >= 0)
		rc = phases_build(d);
	if (rc >= 0)
		rc = check_names(d);
	for (size_t i = 0; i < d->n_phases && rc >= 0 && d->ops.phase; i++)
		rc = d->ops.phase(d->ud, d, i);
	if (rc >= 0 && d->ops.finish)
		rc = d->ops.finish(d->ud, d);
	return rc;
}

void t4_decoder_trim(struct t4_decoder *d)
{
	for (size_t i = 0; i < d->n_doms; i++)
		if (d->doms[i])
			dom_trim(d->doms[i]);
}

/* ---- the time window (--from, --to, --phase) --------------------------------- */

/* The first span named `name` starting at or after t, from span *from on:
 * its index or -1. A scan that finds none moves *from to the last span:
 * only the last one can still be relabelled or taken back (phases.c), the
 * others stay as they are, so a window whose bookmark is not yet in the
 * log (or never is) costs each interval the newest spans only (it scanned
 * them all for each: 72 s for a log of 87 k bookmarks to say --from's
 * name was not there). */
static int64_t span_named_from(const struct t4_decoder *d, const char *name, uint64_t t,
			       size_t *from)
{
	for (size_t i = *from; i < d->n_spans; i++) {
		const char *n = t4_decoder_bookmark(d, d->spans[i].bookmark_id);
		if (!strcmp(n, name) && d->spans[i].start_ns >= t)
			return (int64_t)i;
	}
	*from = d->n_spans ? d->n_spans - 1 : 0;
	return -1;
}

static int64_t span_named(const struct t4_decoder *d, const char *name, uint64_t t)
{
	size_t from = 0;

	return span_named_from(d, name, t, &from);
}

uint64_t dec_window_offset(uint64_t origin_ns, const struct t4_place *pl, uint64_t offset_ns)
{
	if (!pl)
		return offset_ns > UINT64_MAX - origin_ns ? UINT64_MAX : origin_ns + offset_ns;
	int64_t off = offset_ns > INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)offset_ns, real;

	if (__builtin_add_overflow(pl->origin_real_ns, off, &real))
		real = INT64_MAX;
	return t4_place_ref(pl, real);
}

static uint64_t window_offset(const struct t4_decoder *d, uint64_t offset_ns)
{
	return dec_window_offset(d->origin_ns, d->place, offset_ns);
}

/* Resolve --from/--to to reference times: offsets from the origin, or a
 * bookmark's first span (found once its packet has been read; spans only
 * grow at the end, so a span found stays). Until then an interval is
 * before --from, and not yet past --to. */
static void resolve_window(struct t4_decoder *d)
{
	const struct t4_timepoint *f = &d->o.from, *t = &d->o.to;
	int64_t i;

	if (d->window_resolved)
		return;
	d->window_from = 0;
	d->window_to = UINT64_MAX;
	bool from_ok = !f->set || !f->is_bookmark, to_ok = !t->set || !t->is_bookmark;
	if (f->set && !f->is_bookmark)
		d->window_from = window_offset(d, f->offset_ns);
	else if (f->set && (i = span_named_from(d, f->bookmark, 0, &d->window_from_scan)) >= 0) {
		d->window_from = d->spans[i].start_ns;
		from_ok = true;
	} else if (f->set) {
		d->window_from = UINT64_MAX;
	}
	if (t->set && !t->is_bookmark) {
		d->window_to = window_offset(d, t->offset_ns);
	} else if (t->set && from_ok) {
		if (d->window_to_span < 0)
			d->window_to_span = span_named_from(d, t->bookmark, d->window_from,
							    &d->window_to_scan);
		i = d->window_to_span; /* it ends where the next span starts */
		if (i >= 0 && (size_t)i + 1 < d->n_spans) {
			d->window_to = phases_span_end(d, (size_t)i);
			to_ok = true;
		}
	}
	d->window_resolved = from_ok && to_ok;
}

/* --to NAME ends the window at the end of NAME's first occurrence after
 * --from. A log whose occurrences of NAME all start before --from has
 * none: --to never resolved, and every interval after --from was kept
 * (`--from load --to warmup` gave the rest of the log, exit 0). Merged,
 * each host decoded has both names (the others are left out): which one
 * is said. */
static int check_window_to(const struct t4_decoder *d)
{
	const struct t4_timepoint *f = &d->o.from, *t = &d->o.to;
	uint64_t from = 0;
	int64_t i;

	if (!t->set || !t->is_bookmark || span_named(d, t->bookmark, 0) < 0)
		return 0; /* (a name the log lacks is said by t4_decode_check) */
	if (f->set && f->is_bookmark)
		from = (i = span_named(d, f->bookmark, 0)) >= 0 ? d->spans[i].start_ns : UINT64_MAX;
	else if (f->set)
		from = window_offset(d, f->offset_ns);
	if (from == UINT64_MAX || span_named(d, t->bookmark, from) >= 0)
		return 0;
	return dec_window_to_error(d->place ? d->place->log : NULL, &d->o);
}

/* Whether an interval [start, end) is inside --from/--to (by its middle). */
bool dec_time_window(struct t4_decoder *d, uint64_t start, uint64_t end)
{
	uint64_t mid = start + (end - start) / 2;

	if (!d->have_origin) {
		d->first_out = d->n_fed; /* decode -j: which worker's origin is -j 1's */
		if (d->split)
			dec_split_origin(d); /* and the workers agree on it now */
	}
	d->have_origin = true; /* fixed from the first output on */
	if (!d->o.from.set && !d->o.to.set)
		return true;
	resolve_window(d);
	return mid >= d->window_from && mid < d->window_to;
}

/* ---- reading a file -------------------------------------------------------- */

/* A warning of the reader: said, and a damage epoch begins. */
static void reader_warning(void *ud, uint64_t offset, const char *msg)
{
	struct t4_decoder *d = ud;

	if (d->place) /* merged: which of the logs */
		t4_warn("%s: %s", d->place->log, msg);
	else if (d->log_name) /* as info says it: `decode a b` one after the other */
		t4_warn("%s: %s", d->log_name, msg);
	else
		t4_warn("%s", msg);
	t4_decoder_damage(d, offset, msg);
}

/* The reader's callback: while a read-ahead runs, its warnings are queued
 * in place among the packets (readahead.c). */
struct feed {
	struct t4_decoder *d;
	struct t4_readahead *ra;
};

static void on_warning(void *ud, uint64_t offset, const char *msg)
{
	struct feed *f = ud;

	if (f->ra)
		dec_readahead_warning(f->ra, offset, msg);
	else
		reader_warning(f->d, offset, msg);
}

/* Feed every packet of r to d on this thread. */
static int feed_here(struct t4_decoder *d, struct t4_reader *r, struct dec_read_end *end)
{
	struct t4_packet *p = malloc(sizeof(*p));
	int rc = d->error, rrc = 0;

	if (!p)
		return t4_err(ENOMEM, "out of memory");
	/* d->error is set only by a feed that fails, which ends the loop:
	 * tested once, before it, not per packet */
	while (rc >= 0 && (rrc = t4_reader_next(r, p)) > 0)
		rc = feed(d, p);
	end->rrc = rrc;
	snprintf(end->msg, sizeof(end->msg), "%s", end->rrc < 0 ? t4_errmsg() : "");
	t4_reader_stats(r, &end->st);
	free(p);
	return rc;
}

/* The first pass's reader: its damage counts as in the decode, unsaid. */
static void damage_quietly(void *ud, uint64_t offset, const char *msg)
{
	t4_decoder_damage(ud, offset, msg);
}

int dec_selection_check_file(const char *path, const struct t4_decode_opts *o,
			     const struct t4_place *pl, bool *kept)
{
	struct t4_decode_opts one = *o;
	struct t4_packet *p = malloc(sizeof(*p));
	struct t4_reader *r = NULL;
	struct t4_decoder *d = NULL;
	int rc = p ? 0 : t4_err(ENOMEM, "out of memory"), rrc = 0;

	one.want_metrics = false; /* the filters' test alone */
	one.jobs = 1;
	if (rc == 0 && (rc = t4_decoder_new(&d, &one, NULL, NULL)) == 0) {
		d->quiet = true; /* the decode says what there is to say */
		if (pl)
			t4_decoder_set_place(d, pl);
		rc = t4_reader_open(&r, path, damage_quietly, d);
	}
	while (rc >= 0 && !d->selected && (rrc = t4_reader_next(r, p)) > 0)
		rc = t4_decoder_feed(d, p);
	/* a read error: the decode says it, after what was read */
	if (rc >= 0 && rrc >= 0 && !d->selected)
		rc = t4_decoder_finish(d, NULL);
	*kept = rc >= 0 && d->selected;
	t4_reader_close(r);
	t4_decoder_free(d);
	free(p);
	return rc < 0 ? rc : 0;
}

unsigned t4_decode_jobs_default(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	return 1;
}

int t4_decode_file(const char *path, const struct t4_decode_opts *o,
		   const struct t4_sink_ops *ops, void *ud)
{
	struct t4_decoder *d;
	int rc;

	if ((rc = t4_decoder_new(&d, o, ops, ud)) < 0)
		return rc;
	rc = t4_decoder_run_file(d, path);
	t4_decoder_free(d);
	return rc;
}

/* -j as the threads that can start allow: -j N starts at most N threads
 * (DEC_JOBS_THREADS_MAX at most, whatever N), and every -j gives the same
 * output, so a decode that cannot start them all (a per-user limit on
 * processes, RLIMIT_NPROC) runs with those that can, said once, instead
 * of failing; the threads are started once to know it (about 20 us each). */
static unsigned jobs_startable(const struct t4_decoder *d, unsigned jobs)
{
	unsigned want = jobs < DEC_JOBS_THREADS_MAX ? jobs : DEC_JOBS_THREADS_MAX, got, now;
	int err;

	if (jobs < 2 || (got = dec_threads_startable(want, &err)) >= want)
		return jobs;
	now = got >= 2 ? got : 1;
	if (!d->quiet)
		t4_warn("decode -j %u: %u of its threads could start (%s): decoding with -j %u",
			jobs, got, strerror(err), now);
	return now;
}

int t4_decoder_run_file(struct t4_decoder *d, const char *path)
{
	struct t4_reader *r;
	struct dec_read_end end = { 0 };
	struct feed f = { .d = d };
	unsigned jobs = jobs_startable(d, d->o.jobs ? d->o.jobs : t4_decode_jobs_default());
	int rc;

	/* named first: the reader warns while it opens (a first chunk without
	 * its magic) */
	d->log_name = strcmp(path, "-") ? path : "standard input";
	if ((rc = t4_reader_open(&r, path, on_warning, &f)) < 0)
		return rc;
	/* -j: the CPUs shared between chunk unpackers and domain workers, a
	 * thread each; the workers unpack too while they wait (readahead.c,
	 * dec_unpackers) */
	unsigned unpackers = dec_unpackers(jobs), workers = jobs - unpackers + 1;
	if (jobs > 1 && dec_parallel_ok(d, workers))
		rc = dec_parallel_feed(d, r, &f.ra, workers, unpackers - 1, reader_warning, &end);
	else if (jobs > 1)
		rc = dec_readahead_feed(d, r, unpackers, &f.ra, reader_warning, &end);
	else
		rc = feed_here(d, r, &end);
	t4_reader_close(r);
	if (end.st.next_recording) { /* two logs in one file: never merged */
		char note[T4_READER_NOTE_MAX];
		t4_warn("%s: %s", strcmp(path, "-") ? path : "standard input",
			t4_reader_recording_note(path, &end.st, "decode", note, sizeof(note)));
	}
	if (rc >= 0) {
		/* a read error ends the log here: decode what was read */
		rc = t4_decoder_finish(d, &end.st);
		if (rc >= 0 && end.rrc < 0)
			rc = t4_err(-end.rrc, "%s", end.msg);
	}
	return rc;
}

/* ---- queries ---------------------------------------------------------------- */

const struct t4_index *t4_decoder_index(const struct t4_decoder *d)
{
	return d->ix;
}

const struct t4_decode_opts *t4_decoder_opts(const struct t4_decoder *d)
{
	return &d->o;
}

const struct t4_reader_stats *t4_decoder_reader_stats(const struct t4_decoder *d)
{
	return &d->rst;
}

size_t t4_decoder_n_domains(const struct t4_decoder *d)
{
	return d->n_doms;
}

const struct t4_dec_domain *t4_decoder_domain_at(const struct t4_decoder *d, size_t i)
{
	if (i >= d->n_doms)
		return NULL;
	return &d->doms[i]->pub;
}

const struct t4_clock_segment *t4_decoder_segments(const struct t4_decoder *d, size_t i,
						   size_t *n)
{
	*n = i < d->n_doms ? d->doms[i]->n_segs : 0;
	return *n ? d->doms[i]->segs : NULL;
}

const char *t4_decoder_bookmark(const struct t4_decoder *d, uint32_t id)
{
	const char *n = id ? t4_index_bookmark_name(d->ix, id) : NULL;
	return n ? n : "";
}

uint64_t t4_decoder_origin_ns(const struct t4_decoder *d)
{
	return d->origin_ns;
}

static const char *const time_names[] = { "ref", "rel", "real" };

int t4_time_base_parse(const char *s, enum t4_time_base *out)
{
	for (size_t i = 0; i < T4_ARRAY_LEN(time_names); i++)
		if (!strcmp(s, time_names[i])) {
			*out = (enum t4_time_base)i;
			return 0;
		}
	return t4_err(EINVAL, "time base '%s': use ref, rel or real", s);
}

const char *t4_time_base_name(enum t4_time_base b)
{
	return (unsigned)b < T4_ARRAY_LEN(time_names) ? time_names[b] : "?";
}

void t4_decoder_set_place(struct t4_decoder *d, const struct t4_place *p)
{
	d->place = p;
}

const struct t4_place *t4_decoder_place(const struct t4_decoder *d)
{
	return d->place;
}

int t4_index_time_ok(const struct t4_index *ix, enum t4_time_base b)
{
	const struct t4_session_pkt *s = t4_index_session(ix);

	if (b == T4_TIME_REAL && (!s || !s->start_ref_ns || !s->start_real_ns))
		return t4_err(EINVAL, "--time real: the log has no session packet with its realtime"
			      " anchor (use --time ref or rel)");
	return 0;
}

void dec_wbuf_time(struct t4_wbuf *w, const struct t4_decoder *d, uint64_t t,
		   enum t4_time_base b)
{
	if (b == T4_TIME_REF) /* (merged too: each host's own clock) */
		dec_wbuf_u64(w, t);
	else
		dec_wbuf_i64(w, t4_decoder_time(d, t, b));
}

int t4_decoder_time_ok(const struct t4_decoder *d, enum t4_time_base b)
{
	return d->place ? 0 : t4_index_time_ok(d->ix, b); /* merged: the host's line */
}

int64_t t4_decoder_time(const struct t4_decoder *d, uint64_t t, enum t4_time_base b)
{
	const struct t4_session_pkt *s = t4_index_session(d->ix);

	if (d->place && b == T4_TIME_REAL)
		return t4_place_real(d->place, t);
	if (d->place && b == T4_TIME_REL)
		return t4_place_rel(d->place, t);
	switch (b) {
	case T4_TIME_REL:
		return (int64_t)(t - d->origin_ns);
	case T4_TIME_REAL:
		return s ? (int64_t)(t - s->start_ref_ns + s->start_real_ns) : (int64_t)t;
	default:
		return (int64_t)t;
	}
}

uint64_t t4_decoder_span(const struct t4_decoder *d, uint64_t start, uint64_t end,
			 enum t4_time_base b)
{
	int64_t a, z;

	if (!d->place || b == T4_TIME_REF)
		return end - start;
	a = t4_decoder_time(d, start, b);
	z = t4_decoder_time(d, end, b);
	return z > a ? (uint64_t)z - (uint64_t)a : 0;
}

const struct t4_dec_damage *t4_decoder_damage_stats(const struct t4_decoder *d)
{
	return &d->dmg;
}

bool t4_decoder_phases_exact(const struct t4_decoder *d)
{
	return d->exact_phases;
}

size_t t4_decoder_n_phases(const struct t4_decoder *d)
{
	return d->n_phases;
}

const struct t4_dec_phase *t4_decoder_phase_at(const struct t4_decoder *d, size_t p)
{
	return p < d->n_phases ? &d->phases[p] : NULL;
}

const t4_u128 *t4_decoder_phase_totals(const struct t4_decoder *d, size_t p, size_t domain,
				       uint64_t *elapsed_ns)
{
	const struct dom *dm;

	*elapsed_ns = 0;
	if (domain >= d->n_doms || p >= d->n_phases)
		return NULL;
	dm = d->doms[domain];
	size_t span = d->phase_span[p];
	if (span >= dm->n_ptot)
		return NULL;
	*elapsed_ns = dm->pel[span];
	return &dm->ptot[span * dm->ncap];
}

const t4_u128 *t4_decoder_name_totals(const struct t4_decoder *d, uint32_t bookmark_id,
				      size_t domain, uint64_t *elapsed_ns)
{
	int64_t slot = dec_idmap_get(&d->name_map, bookmark_id);
	const struct dom *dm;

	*elapsed_ns = 0;
	if (slot < 0 || domain >= d->n_doms || (size_t)slot >= d->doms[domain]->n_ntot)
		return NULL;
	dm = d->doms[domain];
	*elapsed_ns = dm->nel[slot];
	return &dm->ntot[(size_t)slot * dm->ncap];
}

void t4_decoder_metrics_of(const struct t4_decoder *d, size_t domain, const t4_u128 *totals,
			   uint64_t elapsed_ns, double *out)
{
	const struct dom *dm = d->doms[domain];
	double c[T4_MAX_COUNTERS];

	for (uint32_t i = 0; i < dm->pub.n_counts; i++) {
		c[i] = totals ? (double)totals[i] : 0;
		if (dm->pub.event_gauge[i]) /* level x ns: back to the mean level */
			c[i] = elapsed_ns ? c[i] / (double)elapsed_ns : 0;
	}
	dom_metrics(dm, c, (double)elapsed_ns, out);
}
