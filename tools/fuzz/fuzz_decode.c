/* fuzz_decode.c - libFuzzer harness for the whole decoder, end to end:
 * the packets of arbitrary bytes through the decoder and an output format
 * (summary, csv, jsonl, perfetto, phases, slices) to /dev/null.
 *
 * Input: one byte of options, then a chunk's raw payload (the packets as
 * the codec writes them, FORMAT.md 3-4). The option byte picks the format
 * (one per input, so each input is cheap and the corpus covers all six),
 * the clock model, --bin, --from, --time, -v and --per-cpu. The payload is
 * decoded packet by packet; where a packet does not decode, that is damage
 * (t4_decoder_damage, as the reader says for a damaged chunk), the delta
 * state is reset and decoding goes on from the next byte, so one input
 * holds many "chunks". The reader and the codec have harnesses of their
 * own (fuzz_reader.c, fuzz_codec.c); this one reaches the decoder's join,
 * clock model, phases, --bin and every sink. Seeds: the first chunks of
 * real logs (run.sh).
 *
 * Checks: no crash, leak or undefined behaviour (the sanitizers), every
 * error a negative errno with a one-line message; and for the summary and
 * phases (a decode that wants the intervals' totals alone, which dom.c sums
 * in a loop of its own: summed()), the same totals per domain, phase and
 * bookmark name, intervals and lengths as a decode of the same packets
 * whose sink takes every interval (emit()'s way): one truth.
 */
#include "fuzz_common.h"
#include "decode/decode.h"
#include "packets/packets.h"

#include <stdint.h>

#define MAX_DAMAGE 64 /* resynchronisations per input: garbage ends it */

static const enum t4_out_format formats[] = {
	T4_FMT_SUMMARY, T4_FMT_CSV, T4_FMT_JSONL, T4_FMT_PERFETTO, T4_FMT_PHASES, T4_FMT_SLICES,
};

static void options(uint8_t sel, struct t4_decode_opts *o, struct t4_output_opts *oo)
{
	oo->format = formats[sel % T4_ARRAY_LEN(formats)];
	oo->log_name = "fuzz";
	sel /= T4_ARRAY_LEN(formats); /* 0..42 */
	o->model = (enum t4_clock_model)(sel % 3);
	if (sel & 4 && oo->format != T4_FMT_SUMMARY && oo->format != T4_FMT_PHASES &&
	    oo->format != T4_FMT_SLICES)
		o->bin_ns = 5000000;
	if (sel & 8)
		t4_timepoint_parse("1ms", &o->from);
	oo->time = (enum t4_time_base)((sel >> 4) % 3);
	oo->verbose = oo->per_cpu = oo->format == T4_FMT_SUMMARY && (sel & 2);
}

/* A sink that takes every interval and does nothing with it. */
static int take(void *ud, const struct t4_decoder *dec, const struct t4_interval *iv)
{
	(void)ud, (void)dec, (void)iv;
	return 0;
}

static const struct t4_sink_ops taker = { .interval = take };

static bool same_sums(const t4_u128 *a, uint64_t ea, const t4_u128 *b, uint64_t eb, uint32_t n)
{
	if (!a || !b)
		return !a == !b;
	return ea == eb && !memcmp(a, b, n * sizeof(*a));
}

/* The totals a and b agree on (see the top), else abort: a wrong number. */
static void same_totals(const struct t4_decoder *a, const struct t4_decoder *b)
{
	size_t nd = t4_decoder_n_domains(a), np = t4_decoder_n_phases(a);
	uint64_t ea, eb;

	if (nd != t4_decoder_n_domains(b) || np != t4_decoder_n_phases(b))
		FUZZ_CHECK(false, "summed: domains or phases differ");
	for (size_t d = 0; d < nd; d++) {
		const struct t4_dec_domain *x = t4_decoder_domain_at(a, d);
		const struct t4_dec_domain *y = t4_decoder_domain_at(b, d);
		if (x->intervals != y->intervals || x->elapsed_ns != y->elapsed_ns ||
		    x->first_ns != y->first_ns || x->last_ns != y->last_ns ||
		    x->n_counts != y->n_counts ||
		    memcmp(x->totals, y->totals, x->n_counts * sizeof(*x->totals)))
			FUZZ_CHECK(false, "summed: a domain's totals differ");
		for (size_t p = 0; p < np; p++) {
			const t4_u128 *ta = t4_decoder_phase_totals(a, p, d, &ea);
			const t4_u128 *tb = t4_decoder_phase_totals(b, p, d, &eb);
			if (!same_sums(ta, ea, tb, eb, x->n_counts))
				FUZZ_CHECK(false, "summed: a phase's totals differ");
		}
		for (size_t p = 0; p < np; p++) {
			uint32_t id = t4_decoder_phase_at(a, p)->bookmark_id;
			const t4_u128 *ta = t4_decoder_name_totals(a, id, d, &ea);
			const t4_u128 *tb = t4_decoder_name_totals(b, id, d, &eb);
			if (!same_sums(ta, ea, tb, eb, x->n_counts))
				FUZZ_CHECK(false, "summed: a bookmark name's totals differ");
		}
	}
}

/* Feed the packets of buf[0..len) to d; returns the decoder's error. */
static int feed(struct t4_decoder *d, const uint8_t *buf, size_t len)
{
	static struct t4_codec *c;
	static struct t4_packet p;
	unsigned damage = 0;
	int rc = 0, n;

	if (!c && !(c = t4_codec_new()))
		abort();
	t4_codec_start(c, 1); /* the corpus: format 1's packets (the decoder sees
			       * packets; fuzz_codec covers format 2's coding) */
	for (size_t off = 0; off < len && rc >= 0;) {
		n = t4_codec_decode(c, buf + off, len - off, &p);
		if (n <= 0) {
			fuzz_check_rc(n, "t4_codec_decode");
			if (++damage > MAX_DAMAGE)
				break;
			t4_decoder_damage(d, off, "packet does not decode");
			t4_codec_start(c, 1);
			off++;
			continue;
		}
		off += (size_t)n;
		if (p.type)
			rc = t4_decoder_feed(d, &p);
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static FILE *out;
	struct t4_decode_opts o = { 0 };
	struct t4_output_opts oo = { 0 };
	struct t4_output *x = NULL;
	struct t4_decoder *d = NULL;
	uint8_t *copy;
	int rc;

	if (!out && !(out = fopen("/dev/null", "w")))
		abort();
	if (len < 1)
		return 0;
	options(data[0], &o, &oo);
	copy = malloc(len - 1 ? len - 1 : 1);
	if (!copy)
		abort();
	memcpy(copy, data + 1, len - 1); /* exact size: ASan sees any overread */
	if ((rc = t4_output_new(&x, &oo, out)) < 0)
		goto done;
	o.want_metrics = t4_output_wants_metrics(x);
	if ((rc = t4_decoder_new(&d, &o, t4_output_ops(x), x)) < 0)
		goto done;
	if ((rc = feed(d, copy, len - 1)) >= 0)
		rc = t4_decoder_finish(d, NULL);
	if (rc >= 0 && !o.want_metrics &&
	    (oo.format == T4_FMT_SUMMARY || oo.format == T4_FMT_PHASES)) {
		struct t4_decoder *e = NULL;
		if (t4_decoder_new(&e, &o, &taker, NULL) < 0)
			abort();
		if (feed(e, copy, len - 1) < 0 || t4_decoder_finish(e, NULL) < 0)
			FUZZ_CHECK(false, "summed: the decode that takes every interval failed");
		same_totals(d, e);
		t4_decoder_free(e);
	}
done:
	fuzz_check_rc(rc, "decode");
	t4_decoder_free(d);
	t4_output_free(x);
	free(copy);
	return 0;
}
