/* parallel.c - decode -j: the clock domains decoded by N workers at once.
 *
 * N is the share of -j's CPUs that decodes (the others unpack the log's
 * chunks: readahead.c, dec_unpackers), when it is 2 or more.
 * After the join with the reference packets, one domain's pipeline (dom.c:
 * reorder, clock model, hand-out, totals, phase attribution) reads nothing
 * of another's. So each worker is a whole decoder (struct t4_decoder)
 * that is fed EVERY packet of the log (readahead.c's batches, read once
 * by one reader thread and shared read-only by the workers): its index,
 * its reference rings, its phases, its slices and its damage epochs are
 * therefore exactly those of -j 1; but it hands the returns of a domain
 * to that domain's pipeline only when it owns the domain (slot modulo N,
 * the slot being the order of the domains' first returns, which every
 * worker sees alike). The costly part (the clock model and the hand-out,
 * two thirds of a decode with the reading on its own thread) is thus
 * split N ways; the copies of the shared part (the index, the reference
 * packets: a few percent) are the price.
 *
 * Worker 0 is the caller's decoder, with its sink; the others have none
 * and say nothing (the reader's warnings are said once, by worker 0, in
 * their place among the packets). At the end of the log each worker ends
 * its own domains (dec_finish_domains: their last intervals, their
 * totals) on its thread; then the domains are gathered into worker 0,
 * which finishes (phases, checks, the sink's phase and finish calls) as
 * -j 1 does. Where a worker's state can differ from -j 1's, the gathering
 * puts back -j 1's:
 *   - the origin is fixed by the first output of any domain: -j 1's is
 *     that of the worker whose first output came at the earliest packet
 *     (workers at the same packet have the same index, so the same one);
 *   - the phases, and the slots of the bookmark names' totals, are those
 *     of -j 1 in every worker: spans come from the reference and bookmark
 *     packets only (the span a first output makes when there is none,
 *     phases_ensure(), is never made: every output waits for a reference
 *     packet of its scheduler, and the first reference packet of the
 *     phase scheduler makes a span), which gather() checks.
 * Outputs that are made interval by interval (CSV, JSONL, Perfetto, the
 * report), --bin (its cells count from the origin while it moves) and
 * --from/--to (measured from the origin) decode on one thread, as with
 * -j 1 (dec_parallel_ok), the reading still ahead on its own thread. So
 * every output is the same byte for byte whatever -j.
 */
#include "decode_int.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAR_MAX_WORKERS 64

bool dec_parallel_ok(const struct t4_decoder *d, unsigned workers)
{
	return workers > 1 && !d->ops.interval && !d->o.bin_ns && !d->o.from.set && !d->o.to.set;
}

/* A worker's reader warnings: damage counted, nothing said (worker 0
 * says it). */
static void damage_only(void *ud, uint64_t offset, const char *msg)
{
	t4_decoder_damage(ud, offset, msg);
}

static int worker_new(struct t4_decoder **out, const struct t4_decoder *d, unsigned n,
		      unsigned k)
{
	int rc = t4_decoder_new(out, &d->o, NULL, NULL);

	if (rc < 0)
		return rc;
	(*out)->place = d->place;
	(*out)->par_n = n;
	(*out)->par_k = k;
	(*out)->quiet = true;
	(*out)->test_fail_name_alloc = d->test_fail_name_alloc;
	return 0;
}

/* Whether two decoders have the same spans and number the bookmark names'
 * totals alike. */
static bool same_phases(const struct t4_decoder *a, const struct t4_decoder *b)
{
	if (a->n_names != b->n_names || a->n_spans != b->n_spans ||
	    (a->n_names && memcmp(a->name_ids, b->name_ids, a->n_names * sizeof(*a->name_ids))))
		return false;
	for (size_t i = 0; i < a->n_spans; i++) {
		const struct dspan *x = &a->spans[i], *y = &b->spans[i];
		if (x->start_ns != y->start_ns || x->bookmark_id != y->bookmark_id ||
		    x->name != y->name || x->occurrence != y->occurrence)
			return false;
	}
	return true;
}

/* Move worker w's own domains into d (whose slots of them are NULL). */
static void take_domains(struct t4_decoder *d, struct t4_decoder *w)
{
	for (size_t i = w->par_k; i < w->n_doms && i < d->n_doms; i += w->par_n) {
		struct dom *dm = w->doms[i];
		w->doms[i] = NULL;
		if (!dm)
			continue; /* (none: cannot be, a failure to make it ends the decode) */
		d->doms[i] = dm;
		dm->d = d;
		dm->sched_idx = -1;
		/* the index is d's: the same content, d's memory */
		dm->pub.ix = t4_index_domain(d->ix, dm->pub.id);
		dm->pub.name = dm->pub.ix->d.name;
	}
}

/* Put -j 1's shared state back into d (see the top of the file), then
 * every domain in it. */
static int gather(struct t4_decoder *d, struct t4_decoder *const *ws, unsigned n)
{
	const struct t4_decoder *first = NULL;

	for (unsigned k = 0; k < n; k++)
		if (ws[k]->first_out != UINT64_MAX &&
		    (!first || ws[k]->first_out < first->first_out))
			first = ws[k];
	if (first && first != d) {
		d->origin_ns = first->origin_ns;
		d->have_origin = true;
		d->first_out = first->first_out;
	}
	for (unsigned k = 1; k < n; k++)
		if (!same_phases(d, ws[k]))
			return t4_err(EPROTO, "decode -j: the workers disagree on the phases"
				      " (a bug: decode with -j 1, and report it)");
	for (unsigned k = 1; k < n; k++)
		take_domains(d, ws[k]);
	return 0;
}

int dec_parallel_feed(struct t4_decoder *d, struct t4_reader *r, struct t4_readahead **slot,
		      unsigned workers, unsigned unpackers, t4_reader_warn_fn warn,
		      struct dec_read_end *end)
{
	unsigned n = workers < PAR_MAX_WORKERS ? workers : PAR_MAX_WORKERS;
	struct t4_decoder *ws[PAR_MAX_WORKERS] = { d };
	t4_reader_warn_fn warns[PAR_MAX_WORKERS] = { warn };
	int rc = 0;

	d->par_n = n;
	d->par_k = 0;
	for (unsigned k = 1; k < n && rc >= 0; k++) {
		rc = worker_new(&ws[k], d, n, k);
		warns[k] = damage_only;
	}
	if (rc >= 0)
		rc = dec_readahead_feed_n(ws, n, unpackers, r, slot, warns, end);
	if (rc >= 0)
		rc = gather(d, ws, n);
	for (unsigned k = 1; k < n; k++)
		t4_decoder_free(ws[k]);
	d->par_n = 0;
	return rc;
}
