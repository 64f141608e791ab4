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
 * error a negative errno with a one-line message.
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
done:
	fuzz_check_rc(rc, "decode");
	t4_decoder_free(d);
	t4_output_free(x);
	free(copy);
	return 0;
}
