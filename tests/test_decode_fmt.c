/* test_decode_fmt.c - number formatting (decode/fmt.c): metric values
 * round-trip to nine significant digits.
 */
#include "decode_synth.h"

#include "decode/decode_int.h"
#include "decode/out.h"

#include <float.h>

static const char *fmt(double v, char *buf, size_t cap)
{
	FILE *f = fmemopen(buf, cap, "w");
	struct t4_wbuf w;

	cr_assert(f);
	cr_assert_eq(dec_wbuf_init(&w, f, 64), 0);
	dec_wbuf_f64(&w, v);
	dec_wbuf_flush(&w);
	dec_wbuf_free(&w);
	fclose(f);
	return buf;
}

Test(decode_fmt, metric_values_round_trip_to_nine_digits)
{
	char b[64];
	uint64_t rng = 3;

	cr_assert_str_eq(fmt(0, b, sizeof(b)), "0");
	cr_assert_str_eq(fmt(0.5, b, sizeof(b)), "0.5");
	cr_assert_str_eq(fmt(123.456, b, sizeof(b)), "123.456");
	cr_assert_str_eq(fmt(-2, b, sizeof(b)), "-2");
	cr_assert_str_eq(fmt(1e-7, b, sizeof(b)), "1e-7");
	cr_assert_str_eq(fmt(2.5e20, b, sizeof(b)), "2.5e+20");
	cr_assert_str_eq(fmt(999999999.6, b, sizeof(b)), "1000000000");
	for (int i = 0; i < 20000; i++) {
		double v = ldexp(sy_unit(&rng) + 0.5, (int)(sy_rand(&rng) % 120) - 60);
		double back = strtod(fmt(v, b, sizeof(b)), NULL);
		cr_assert_lt(fabs(back / v - 1), 6e-9, "%.17g -> %s", v, b);
	}
}

/* Below about 1e-300 (subnormals too) 10^(8 - e) is past DBL_MAX: the
 * digits came out of llround(inf) ("8.54775808e-323" for 5e-324,
 * "0.15e-300" for 1.5e-301). */
Test(decode_fmt, tiny_values_keep_their_digits)
{
	static const double fixed[] = { 5e-324, 1e-310, 2.2250738585072014e-308, 1.5e-301,
					1e-300, 9.99999999e-302, DBL_MIN, -4.9406564584124654e-320 };
	char b[64];
	uint64_t rng = 5;

	cr_assert_str_eq(fmt(5e-324, b, sizeof(b)), "4.94065646e-324");
	cr_assert_str_eq(fmt(1.5e-301, b, sizeof(b)), "1.5e-301");
	for (int i = 0; i < 20000; i++) {
		double v = i < (int)(sizeof(fixed) / sizeof(fixed[0]))
				   ? fixed[i]
				   : ldexp(sy_unit(&rng) + 0.5, -(int)(sy_rand(&rng) % 100) - 975);
		char *end;
		double back = strtod(fmt(v, b, sizeof(b)), &end);
		cr_assert(*end == 0 && fabs(back / v - 1) < 6e-9, "%.17g -> %s", v, b);
	}
}

/* 10^e as the formatter has always scaled by it. */
static double oracle_pow10(int e)
{
	if (e >= 0 && e <= 22)
		return pow(10, e); /* exact: the table's values */
	if (e < 0 && e >= -22)
		return 1 / pow(10, -e);
	return pow(10, e);
}

/* The formatter before it skipped log10 and llround (the digits every
 * fixture's CSV hash was taken with): the oracle for the fast one. */
static void oracle_f64(double v, char *out, size_t cap)
{
	int e = (int)floor(log10(fabs(v)));
	double a = fabs(v);
	uint64_t m = (uint64_t)llround(a * oracle_pow10(8 - e));
	char d[10];
	size_t n = 0;

	if (m >= 1000000000ull) {
		e++;
		m = (uint64_t)llround(a * oracle_pow10(8 - e));
	}
	for (int i = 8; i >= 0; i--, m /= 10)
		d[i] = (char)('0' + m % 10);
	int nd = 9;
	while (nd > 1 && d[nd - 1] == '0')
		nd--;
	if (v < 0)
		out[n++] = '-';
	if (e < -6 || e >= 15) {
		out[n++] = d[0];
		if (nd > 1)
			out[n++] = '.';
		for (int i = 1; i < nd; i++)
			out[n++] = d[i];
		snprintf(out + n, cap - n, "e%+d", e);
		return;
	}
	if (e < 0) {
		out[n++] = '0';
		out[n++] = '.';
		for (int i = -1; i > e; i--)
			out[n++] = '0';
		for (int i = 0; i < nd; i++)
			out[n++] = d[i];
	} else {
		for (int i = 0; i <= e; i++)
			out[n++] = i < nd ? d[i] : '0';
		if (nd > e + 1)
			out[n++] = '.';
		for (int i = e + 1; i < nd; i++)
			out[n++] = d[i];
	}
	out[n] = '\0';
}

static void same_as_oracle(double v)
{
	char b[64], want[64];

	if (v == 0)
		return; /* "0", before any digits */
	oracle_f64(v, want, sizeof(want));
	fmt(v, b, sizeof(b));
	cr_assert(!strcmp(b, want), "%.17g: %s, the log10 formatter %s", v, b, want);
}

Test(decode_fmt, metric_digits_match_the_log10_formatter_at_every_power_of_ten)
{
	uint64_t rng = 11;

	for (int e = -9; e <= 18; e++) {
		double p = pow(10, e);
		double around[] = { p, p * (1 + 1e-9), p * (1 - 1e-9), p * (1 + 2e-9),
				    p * (1 - 5e-10), p * 9.9999999949, p * 9.99999999951 };
		for (size_t i = 0; i < sizeof(around) / sizeof(around[0]); i++) {
			double x = around[i];
			for (int k = 0; k < 6; k++) {
				same_as_oracle(x);
				same_as_oracle(-x);
				x = nextafter(x, k < 3 ? 0 : INFINITY);
			}
		}
	}
	for (int i = 0; i < 200000; i++) {
		double v = ldexp(sy_unit(&rng) + 0.5, (int)(sy_rand(&rng) % 140) - 70);
		same_as_oracle(v);
		same_as_oracle(round(v * 1e3) / 1e3);
	}
}

Test(decode_fmt, integers_print_as_printf_prints_them)
{
	uint64_t rng = 5;
	char want[32], b[64];

	for (int i = 0; i < 100000; i++) {
		uint64_t v = sy_rand(&rng) >> (sy_rand(&rng) % 64);
		if (i < 64)
			v = i < 32 ? (uint64_t)1 << (2 * i) : UINT64_MAX - (uint64_t)(i - 32);
		for (int s = 0; s < 2; s++) {
			FILE *f = fmemopen(b, sizeof(b), "w");
			struct t4_wbuf w;
			cr_assert(f);
			cr_assert_eq(dec_wbuf_init(&w, f, 8), 0);
			if (s)
				dec_wbuf_i64(&w, -(int64_t)(v >> 1));
			else
				dec_wbuf_u64(&w, v);
			dec_wbuf_flush(&w);
			dec_wbuf_free(&w);
			fclose(f);
			if (s)
				snprintf(want, sizeof(want), "%lld", -(long long)(v >> 1));
			else
				snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
			cr_assert_str_eq(b, want);
		}
	}
}

/* Decode y's packets to format fmt with one event renamed half-way (an
 * event packet that says more than a damaged first one did); the text. */
static char *renamed_mid_log(struct sy *y, enum t4_out_format fmt)
{
	char *out = NULL;
	size_t len = 0;
	struct t4_output *x;
	struct t4_decoder *dec;
	struct t4_output_opts oo = { .format = fmt, .csv_sep = ',' };
	struct t4_decode_opts o = { .want_metrics = true };
	struct t4_packet ev = { .type = T4_PKT_EVENT };

	ev.event.domain_id = 1;
	ev.event.index = 0;
	ev.event.scale = 1;
	snprintf(ev.event.pmu, sizeof(ev.event.pmu), "pmu1");
	snprintf(ev.event.name, sizeof(ev.event.name), "clk,\"ticks\"");
	FILE *f = open_memstream(&out, &len);
	cr_assert(f);
	cr_assert_eq(t4_output_new(&x, &oo, f), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_decoder_new(&dec, &o, t4_output_ops(x), x), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < y->n_pk; i++) {
		const struct t4_packet *p = &y->pk[i];
		if (i == y->n_pk / 2) /* its packet comes late: "event0" until then */
			cr_assert_eq(t4_decoder_feed(dec, &ev), 0, "%s", t4_errmsg());
		if (p->type == T4_PKT_EVENT && p->event.domain_id == 1 && p->event.index == 0)
			continue;
		cr_assert_eq(t4_decoder_feed(dec, p), 0, "%s", t4_errmsg());
	}
	cr_assert_eq(t4_decoder_finish(dec, NULL), 0, "%s", t4_errmsg());
	t4_decoder_free(dec);
	t4_output_free(x);
	fclose(f);
	return out;
}

/* Lines of text with the old name and with the new one: every interval
 * has one or the other, and none has the old after the first new. */
static void old_then_new(char *text, const char *old, const char *new, size_t intervals)
{
	size_t old_rows = 0, new_rows = 0;
	bool renamed = false;

	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		bool is_old = strstr(l, old) != NULL, is_new = strstr(l, new) != NULL;
		cr_assert(!(is_old && renamed), "the old name after the new one: %s", l);
		renamed |= is_new;
		old_rows += is_old;
		new_rows += is_new;
	}
	cr_assert_gt(old_rows, 0);
	cr_assert_gt(new_rows, 0);
	cr_assert_eq(old_rows + new_rows, intervals, "%zu + %zu", old_rows, new_rows);
}

/* CSV and JSONL escape a domain's names once and keep them while they
 * stay the same (out_cells.c): a domain whose event is named only mid-log
 * (its event packet late: "event0" until then) must print the name,
 * escaped, from the moment the decoder knows it. (An event named again,
 * otherwise, is a contradiction: test_decode_contradict.c.) */
Test(decode_fmt, csv_and_jsonl_names_follow_a_rename)
{
	struct sy y;

	sy_one_domain(&y, 3000, 9);
	sy_build(&y);
	char *csv = renamed_mid_log(&y, T4_FMT_CSV);
	old_then_new(csv, ",event0,", ",pmu1,\"clk,\"\"ticks\"\"\",", y.n_triggers - 1);
	char *jsonl = renamed_mid_log(&y, T4_FMT_JSONL);
	old_then_new(jsonl, "\"counts\": {\"event0\": ", "\"counts\": {\"clk,\\\"ticks\\\"\": ",
		     y.n_triggers - 1);
	free(csv);
	free(jsonl);
	sy_free(&y);
}

/* A buffer without a file (the CSV's shared part of a row) grows instead
 * of writing: a merged log's host, bookmark, domain and PMU names of 63
 * bytes that are not UTF-8 (four text bytes each) make a longer line than
 * its first size, and nothing of it may be lost (it was written to no
 * file before: a crash). */
Test(decode_fmt, a_scratch_line_grows_past_its_first_size)
{
	struct t4_wbuf w;
	char name[64], want[8192];
	size_t n = 0;

	memset(name, 0xff, 63);
	name[63] = '\0';
	cr_assert_eq(dec_wbuf_init(&w, NULL, 16), 0);
	for (int i = 0; i < 5; i++) {
		dec_wbuf_csv_field(&w, name, ',', 0);
		dec_wbuf_ch(&w, ',');
		for (int b = 0; b < 63; b++)
			n += (size_t)snprintf(want + n, sizeof(want) - n, "\\xff");
		want[n++] = ',';
	}
	cr_assert_eq(w.error, 0);
	cr_assert_eq(w.len, n);
	cr_assert_eq(memcmp(w.buf, want, n), 0, "%.*s", (int)w.len, w.buf);
	dec_wbuf_free(&w);
}

/* Perfetto's counter packets are encoded by hand (out_perfetto.c): byte
 * for byte what protobuf-c writes, for counts at every varint length, up
 * to and past INT64_MAX (a double then), metrics of any sign and size,
 * NaN and infinities included, any timestamp, track and clock. */
Test(decode_fmt, perfetto_counters_by_hand_are_protobuf_c_bytes)
{
	uint64_t rng = 17;
	struct t4_wbuf hand, ref;

	cr_assert_eq(dec_wbuf_init(&hand, NULL, 64), 0);
	cr_assert_eq(dec_wbuf_init(&ref, NULL, 64), 0);
	for (int i = 0; i < 200000; i++) {
		uint64_t r = sy_rand(&rng), count = r >> (sy_rand(&rng) % 64);
		uint64_t ts = sy_rand(&rng) >> (sy_rand(&rng) % 64);
		uint64_t track = sy_rand(&rng) >> (sy_rand(&rng) % 64);
		uint32_t clock = (uint32_t)(sy_rand(&rng) >> (32 + sy_rand(&rng) % 32));
		double value = ldexp(sy_unit(&rng) - 0.5, (int)(sy_rand(&rng) % 200) - 100);
		if (i < 8) {
			const uint64_t edge[] = { 0, 127, 128, INT64_MAX, (uint64_t)INT64_MAX + 1,
						  UINT64_MAX, 16383, 16384 };
			count = ts = track = edge[i];
			value = i == 1 ? NAN : i == 2 ? INFINITY : i == 3 ? -INFINITY : -0.0;
		}
		hand.len = ref.len = 0;
		out_pf_counter_both(ts, clock, track, i % 3 ? &count : NULL, value, &hand, &ref);
		cr_assert_eq(hand.error, 0);
		cr_assert_eq(hand.len, ref.len, "count %llu value %g: %zu bytes, protobuf-c %zu",
			     (unsigned long long)count, value, hand.len, ref.len);
		cr_assert_eq(memcmp(hand.buf, ref.buf, hand.len), 0, "count %llu value %g",
			     (unsigned long long)count, value);
	}
	dec_wbuf_free(&hand);
	dec_wbuf_free(&ref);
}

/* decode -j's merged rows (parallel.c): runs short and long in any mix, a
 * flush forced by the buffer or by the iovecs (DEC_GATHER_IOV), come out
 * whole and in order. A short run copied before the flush that makes room
 * for its iovec would be overwritten by the copies after it. */
Test(decode_fmt, gathered_runs_are_written_whole_and_in_order)
{
	enum { RUNS = 20000 };
	struct dec_gather g = { .n_iov = 0 };
	FILE *f = tmpfile();
	size_t total = 0, at = 0;
	char **runs = calloc(RUNS, sizeof(*runs));
	size_t *lens = calloc(RUNS, sizeof(*lens));
	uint64_t x = 88172645463325252ull;

	cr_assert(f && runs && lens);
	cr_assert_eq(dec_wbuf_init(&g.w, f, 1 << 16), 0);
	for (size_t i = 0; i < RUNS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* mostly alternating long and short, with runs of shorts */
		bool longer = (i % 2 == 0 && x % 5) || x % 97 == 0;
		size_t shorter = x % 7 ? 1 + (x >> 8) % 300 : 1 + (x >> 8) % (DEC_GATHER_SMALL - 1);
		lens[i] = longer ? DEC_GATHER_SMALL + x % 6000 : shorter; /* (rows of a few domains) */
		cr_assert_not_null(runs[i] = malloc(lens[i]));
		for (size_t k = 0; k < lens[i]; k++)
			runs[i][k] = (char)(i * 31 + k);
		total += lens[i];
	}
	for (size_t i = 0; i < RUNS; i++)
		dec_gather_put(&g, runs[i], lens[i]);
	dec_gather_flush(&g);
	cr_assert_eq(g.w.error, 0);
	cr_assert_eq(fflush(f), 0);
	cr_assert_eq((size_t)ftell(f), total);
	rewind(f);
	char *got = malloc(total);
	cr_assert(got && fread(got, 1, total, f) == total);
	for (size_t i = 0; i < RUNS; at += lens[i++])
		cr_assert(!memcmp(got + at, runs[i], lens[i]), "run %zu (of %zu bytes, at %zu) differs",
			  i, lens[i], at);
	for (size_t i = 0; i < RUNS; i++)
		free(runs[i]);
	free(runs);
	free(lens);
	free(got);
	dec_wbuf_free(&g.w);
	fclose(f);
}

/* The summary's tables pad by terminal columns, not bytes: a phase or PMU
 * named with an accent or CJK characters (two columns each) kept its
 * numbers in line with the other rows' (they stood 1 column left per
 * accent and 1 per CJK character, and the heads too). */
Test(decode_fmt, a_table_aligns_names_that_are_not_ascii)
{
	const char *lhead[] = { "PHASE", "PMU" }, *chead[] = { "rd_bw" }, *cunit[] = { "GB/s" };
	const char *r1[] = { "warmup#1", "pcie" }, *r2[] = { "l\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac#1",
								 "caf\xc3\xa9" };
	double v1 = 7.25, v2 = 35.5;
	struct t4_table t;
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);

	cr_assert_not_null(f);
	cr_assert_eq(dec_table_init(&t, 2, lhead, 1, chead, cunit), 0);
	cr_assert_eq(dec_table_row(&t, r1, &v1), 0);
	cr_assert_eq(dec_table_row(&t, r2, &v2), 0);
	dec_table_print(&t, f);
	fclose(f);
	cr_assert_str_eq(out, "  PHASE    PMU  rd_bw\n"
			      "                 GB/s\n"
			      "  warmup#1 pcie  7.25\n"
			      "  l\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac#1 caf\xc3\xa9 35.50\n");
	dec_table_free(&t);
	free(out);
}
