/* out_jsonl.c - `decode -f jsonl`: one JSON object per line, one line per
 * (domain, interval):
 *
 *   {"domain": "...", "pmu": "...", "kind": "ucf", "trigger": 12,
 *    "first_trigger": 12, "start_ns": ..., "end_ns": ..., "elapsed_ns": ...,
 *    "bookmark": "phase1", "counts": {"cycles": 1781000, ...},
 *    "metrics": {"mem_read_bw": 12.5, ...}, "flags": ["spans"]}
 *
 * The CPU and GPU slices (bpf/phases) are lines of their own, told apart
 * by their "slice" key:
 *
 *   {"slice": "cpu", "start_ns": ..., "end_ns": ..., "cpu": 3, "pid": ...,
 *    "tid": ..., "name": "worker", "bookmark": "phase1"}
 *   {"slice": "gpu", ..., "context": 12, "seqno": 99, "driver": ...,
 *    "timeline": ...}
 *
 * Counts are JSON integers (64-bit: readers that keep numbers as doubles,
 * like jq, round counts above 2^53), absent metrics are left out, `flags`
 * is omitted when empty.
 */
#include "out.h"
#include "../util/util.h"

static void key(struct t4_wbuf *w, const char *k, bool first)
{
	if (!first)
		t4_wbuf_str(w, ", ");
	t4_wbuf_json_str(w, k);
	t4_wbuf_str(w, ": ");
}

static void key_u64(struct t4_wbuf *w, const char *k, uint64_t v)
{
	key(w, k, false);
	t4_wbuf_u64(w, v);
}

static void counts(struct t4_wbuf *w, const struct t4_dec_domain *dm,
		   const struct t4_interval *iv)
{
	bool first = true;

	key(w, "counts", false);
	t4_wbuf_ch(w, '{');
	for (uint32_t i = 0; i < iv->n_counts && i < dm->n_counts; i++) {
		if (!dm->event_selected[i])
			continue;
		key(w, dm->event_name[i], first);
		t4_wbuf_u64(w, iv->counts[i]);
		first = false;
	}
	t4_wbuf_ch(w, '}');
}

static void metrics(struct t4_wbuf *w, const struct t4_dec_domain *dm,
		    const struct t4_interval *iv)
{
	bool first = true;

	key(w, "metrics", false);
	t4_wbuf_ch(w, '{');
	for (uint32_t m = 0; iv->metrics && m < dm->n_metrics; m++) {
		if (!dm->metric_selected[m] || iv->metrics[m] != iv->metrics[m])
			continue;
		key(w, dm->metric_name[m], first);
		t4_wbuf_f64(w, iv->metrics[m]);
		first = false;
	}
	t4_wbuf_ch(w, '}');
}

static void flags(struct t4_wbuf *w, uint32_t f)
{
	const char *names[16];
	size_t n = out_flag_names(f, names, 16);

	if (!n)
		return;
	key(w, "flags", false);
	t4_wbuf_ch(w, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			t4_wbuf_str(w, ", ");
		t4_wbuf_json_str(w, names[i]);
	}
	t4_wbuf_ch(w, ']');
}

static int jsonl_interval(void *ud, const struct t4_decoder *dec, const struct t4_interval *iv)
{
	struct t4_output *x = ud;
	struct t4_wbuf *w = &x->w;
	const struct t4_dec_domain *dm = t4_decoder_domain_at(dec, iv->domain);

	t4_wbuf_ch(w, '{');
	key(w, "domain", true);
	t4_wbuf_json_str(w, dm->name);
	key(w, "pmu", false);
	t4_wbuf_json_str(w, dm->pmu);
	key(w, "kind", false);
	t4_wbuf_json_str(w, t4_domain_kind_name(dm->ix->d.kind));
	key_u64(w, "trigger", iv->trigger);
	key_u64(w, "first_trigger", iv->first_trigger);
	key_u64(w, "start_ns", iv->start_ns);
	key_u64(w, "end_ns", iv->end_ns);
	key_u64(w, "elapsed_ns", iv->elapsed_ns);
	key(w, "bookmark", false);
	t4_wbuf_json_str(w, t4_decoder_bookmark(dec, iv->bookmark_id));
	counts(w, dm, iv);
	metrics(w, dm, iv);
	flags(w, iv->flags);
	t4_wbuf_str(w, "}\n");
	return out_status(x);
}

static int jsonl_slice(void *ud, const struct t4_decoder *dec, const struct t4_slice *s)
{
	struct t4_output *x = ud;
	struct t4_wbuf *w = &x->w;
	bool gpu = s->kind == T4_SLICE_GPU;

	t4_wbuf_ch(w, '{');
	key(w, "slice", true);
	t4_wbuf_json_str(w, gpu ? "gpu" : "cpu");
	key_u64(w, "start_ns", s->start_ns);
	key_u64(w, "end_ns", s->end_ns);
	if (!gpu)
		key_u64(w, "cpu", s->cpu);
	key_u64(w, "pid", s->pid);
	key_u64(w, "tid", s->tid);
	if (gpu) {
		key_u64(w, "context", s->context);
		key_u64(w, "seqno", s->seqno);
		key(w, "driver", false);
		t4_wbuf_json_str(w, s->driver);
		key(w, "timeline", false);
		t4_wbuf_json_str(w, s->timeline);
	} else {
		key(w, "name", false);
		t4_wbuf_json_str(w, s->name);
	}
	key(w, "bookmark", false);
	t4_wbuf_json_str(w, t4_decoder_bookmark(dec, s->bookmark_id));
	t4_wbuf_str(w, "}\n");
	return w->error;
}

static int jsonl_finish(void *ud, const struct t4_decoder *dec)
{
	(void)dec;
	return out_close(ud);
}

const struct out_backend out_jsonl = {
	.name = "jsonl",
	.ops = { .interval = jsonl_interval, .slice = jsonl_slice, .finish = jsonl_finish },
	.wants_metrics = true,
};
