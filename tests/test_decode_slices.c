/* test_decode_slices.c - CPU and GPU slices in the decoder: converted to
 * the reference clock by the reference packets (or needing no conversion
 * on a CLOCK_MONOTONIC reference), summed per phase, split by a late timed
 * bookmark, and read back from -f phases-csv and -f jsonl by Python.
 */
#include "cli_testutil.h"
#include "decode_synth.h"
#include "probe.h"
#include "tmpdir_testutil.h"

#include <errno.h>
#include <inttypes.h>
#include <unistd.h>

#include "collector/collector.h"
#include "decode/decode_int.h"

/* ---- CPU and GPU slices ----------------------------------------------------------- */

static void add_pkt(struct sy *y, const struct t4_packet *p)
{
	*sy_push(y) = *p;
}

/* 600 triggers of two clocks from ref 5 s, phase "a" then "b" from
 * trigger 301, MONOTONIC 1000 ns ahead of the reference clock (growing by
 * slew ns a trigger), and the task "worker" (pid 77, tid 78): mono at t0. */
static uint64_t phases_a_b_and_a_worker(struct sy *y, uint64_t slew)
{
	struct t4_packet p = { .type = T4_PKT_TASK };

	sy_two_clocks(y, 600);
	y->t0 = 5000000000ull;
	sy_bookmark(y, 1, "a", 0, y->t0 - 1000);
	sy_bookmark(y, 2, "b", 301, y->t0 + 300500000);
	sy_build(y);
	for (size_t i = 0; i < y->n_pk; i++)
		if (y->pk[i].type == T4_PKT_REF)
			y->pk[i].ref.mono_ns = y->pk[i].ref.ref_ns + 1000 + slew * y->pk[i].ref.trigger_id;
	p.task = (struct t4_task_pkt){ .pid = 77, .tid = 78, .ppid = 1, .mono_ns = y->t0 + 1000 };
	snprintf(p.task.name, sizeof(p.task.name), "worker");
	add_pkt(y, &p);
	return y->t0 + 1000;
}

/* Slices are timed on MONOTONIC: the reference packets' mono - ref offset
 * (here 1000 ns growing by 1 ns per ms: NTP slew) converts them exactly,
 * phases get the workload's on-CPU time, and GPU jobs of one context are
 * serialized (a job queued behind another starts when it ends). */
Test(decode_slices, converted_by_reference_packets_and_summed_per_phase)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	struct t4_packet p;

	uint64_t mono0 = phases_a_b_and_a_worker(&y, 1); /* mono at ref t0 */
	/* the thread runs 2 ms of every 10 ms, from 5 ms into the recording */
	for (int i = 0; i < 55; i++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_CPU_SLICE;
		uint64_t at = 5000000 + (uint64_t)i * 10000000;
		p.cpu_slice = (struct t4_cpu_slice_pkt){ 1, 77, 78, mono0 + at + at / 1000000,
							  mono0 + at + 2000000 + (at + 2000000) / 1000000, 0 };
		add_pkt(&y, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_GPU_CTX;
	p.gpu_ctx.context = 9;
	snprintf(p.gpu_ctx.driver, sizeof(p.gpu_ctx.driver), "fake");
	snprintf(p.gpu_ctx.timeline, sizeof(p.gpu_ctx.timeline), "gfx");
	add_pkt(&y, &p);
	/* two jobs submitted together: 100..110 ms and (queued) ..120 ms */
	for (int j = 0; j < 2; j++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_GPU_SLICE;
		uint64_t s = 100000000, e = 110000000 + (uint64_t)j * 10000000;
		p.gpu_slice = (struct t4_gpu_slice_pkt){ 9, 1 + (uint64_t)j, 77, 78,
							  mono0 + s + s / 1000000,
							  mono0 + e + e / 1000000, T4_GPU_FROM_SUBMIT };
		add_pkt(&y, &p);
	}
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	const struct t4_dec_slices *st = t4_decoder_slice_stats(dec);
	cr_assert_eq(st->cpu, 55);
	cr_assert_eq(st->gpu, 2);
	cr_assert_eq(st->unplaced, 0);
	cr_assert_eq(t4_decoder_n_phases(dec), 2);
	const struct t4_dec_phase *a = t4_decoder_phase_at(dec, 0), *b = t4_decoder_phase_at(dec, 1);
	cr_assert_str_eq(b->name, "b");
	/* a: 30 slices of 2 ms (5..295 ms), then half of the one at 295..297? no:
	 * 295 ms starts a slice ending 297 ms, all before 300.5 ms */
	cr_assert_eq(a->cpu_ns, 30 * 2000000ull, "a: %llu", (unsigned long long)a->cpu_ns);
	cr_assert_eq(b->cpu_ns, 25 * 2000000ull, "b: %llu", (unsigned long long)b->cpu_ns);
	cr_assert_eq(a->threads, 1);
	struct t4_dec_gpu_busy g[4];
	cr_assert_eq(t4_decoder_phase_gpu(dec, 0, g, 4), 1);
	cr_assert_eq(g[0].busy_ns, 20000000, "union of the jobs: 100..120 ms");
	cr_assert_str_eq(g[0].timeline, "gfx");
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* A --from window that no interval's middle reaches but a CPU slice does
 * (decode --from 999ms of a 1 s recording): the phase row says the time
 * the window holds of it, from --from to the last trigger, never the
 * sentinels of an empty data range (it said a start of 2^64 - 1 ns, an
 * end of 0 and a duration of 1 ns: 29793600% of a CPU). */
Test(decode_slices, a_window_of_slices_only_keeps_the_phase_times)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	struct t4_packet p;

	phases_a_b_and_a_worker(&y, 0);
	for (int i = 0; i < 2; i++) { /* 100..102 ms, and 598.7..598.9 ms */
		uint64_t at = i ? 598700000 : 100000000, len = i ? 200000 : 2000000;
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_CPU_SLICE;
		p.cpu_slice = (struct t4_cpu_slice_pkt){ 1, 77, 78, y.t0 + 1000 + at,
							  y.t0 + 1000 + at + len, 0 };
		add_pkt(&y, &p);
	}
	/* the last interval's middle is 598.5 ms and a bit: none is inside */
	cr_assert_eq(t4_timepoint_parse("598.6ms", &o.from), 0);
	struct t4_decoder *dec = sy_decode(y.pk, y.n_pk, &o, &k);
	cr_assert_eq(k.n, 0, "%zu intervals in the window", k.n);
	cr_assert_eq(t4_decoder_n_phases(dec), 1);
	const struct t4_dec_phase *b = t4_decoder_phase_at(dec, 0);
	cr_assert_str_eq(b->name, "b");
	cr_assert_eq(b->start_ns, y.t0 + 598600000, "start %" PRIu64, b->start_ns);
	cr_assert_eq(b->end_ns, y.t0 + 599000000, "end %" PRIu64 " (the last trigger)", b->end_ns);
	cr_assert_eq(b->cpu_ns, 200000, "cpu %" PRIu64, b->cpu_ns);
	t4_decoder_free(dec);
	free(k.v);
	sy_free(&y);
}

/* A bookmark timed elsewhere (libt410trace's probe, stamped in the kernel)
 * reaches the log with the trigger that takes it, here 60 ms after its
 * time, while the slices around its time came before it (each right after
 * the reference packet that covers its end): they still go to the phase
 * their time says. */
Test(decode_slices, a_late_timed_bookmark_still_splits_the_slices)
{
	struct sy y;
	struct keep k;
	struct t4_decode_opts o = { 0 };
	struct t4_packet *pk;
	size_t n = 0;
	int next = 0;

	sy_two_clocks(&y, 600);
	y.t0 = 5000000000ull;
	sy_bookmark(&y, 1, "a", 0, y.t0 - 1000);
	sy_bookmark(&y, 2, "b", 360, y.t0 + 300500000); /* set at 300.5 ms */
	sy_build(&y);
	cr_assert_not_null(pk = calloc(y.n_pk + 60, sizeof(*pk)));
	for (size_t i = 0; i < y.n_pk; i++) {
		struct t4_packet *p = &pk[n++];
		*p = y.pk[i];
		if (p->type == T4_PKT_SESSION)
			p->session.ref_clock = T4_REFCLK_MONOTONIC;
		if (p->type != T4_PKT_REF)
			continue;
		p->ref.mono_ns = p->ref.ref_ns;
		/* the thread runs 2 ms of every 10 ms, from 5 ms */
		for (uint64_t at; next < 55 && (at = y.t0 + 5000000 + (uint64_t)next * 10000000) +
						       2000000 <= p->ref.ref_ns; next++) {
			pk[n].type = T4_PKT_CPU_SLICE;
			pk[n++].cpu_slice = (struct t4_cpu_slice_pkt){ 1, 77, 78, at, at + 2000000, 0 };
		}
	}
	cr_assert_eq(next, 55);
	struct t4_decoder *dec = sy_decode(pk, n, &o, &k);
	cr_assert_eq(t4_decoder_slice_stats(dec)->cpu, 55);
	cr_assert_eq(t4_decoder_n_phases(dec), 2);
	const struct t4_dec_phase *a = t4_decoder_phase_at(dec, 0), *b = t4_decoder_phase_at(dec, 1);
	cr_assert_str_eq(b->name, "b");
	cr_assert_eq(a->cpu_ns, 30 * 2000000ull, "a: %llu", (unsigned long long)a->cpu_ns);
	cr_assert_eq(b->cpu_ns, 25 * 2000000ull, "b: %llu", (unsigned long long)b->cpu_ns);
	t4_decoder_free(dec);
	free(pk);
	free(k.v);
	sy_free(&y);
}

/* Write packets into a log file through the real writer. */
static void write_log(const char *path, const struct t4_packet *pk, size_t n)
{
	struct t4_log *log;
	struct t4_ring *ring;
	struct t4_log_opts lo = { .path = path };

	cr_assert_eq(t4_log_open(&log, &lo), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_ring(log, 1 << 20, T4_RING_WAIT, &ring), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_start(log), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(t4_ring_put(ring, &pk[i]), 0);
	struct t4_status_pkt st = { .triggers = 100, .lost_events = 3 };
	cr_assert_eq(t4_log_close(log, &st, NULL), 0, "%s", t4_errmsg());
}

/* A Python check script into dir/name. */
static void py(const char *dir, const char *name, const char *code)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(t4_write_small_file(path, code), 0, "%s", t4_errmsg());
}

/* The slices through the binary: -f phases-csv read by Python's csv module,
 * -f jsonl slice lines by its json module, and the summary's WORKLOAD table
 * and lost events. */
Test(decode_slices, phases_csv_and_jsonl_read_back_by_python)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], out[4096];
	struct cli_io io = { .dir = dir, .out = out, .cap = sizeof(out), .merge_err = true };
	struct sy y;
	struct t4_packet p;

	cli_bin();
	if (!t4t_have_cmds("python3"))
		cr_skip_test("python3 missing");
	t4t_tmpdir(dir, sizeof(dir), "t4slices");
	snprintf(path, sizeof(path), "%s/s.t4t", dir);
	sy_two_clocks(&y, 100);
	sy_bookmark(&y, 1, "only", 0, 0);
	sy_build(&y);
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_TASK;
	p.task = (struct t4_task_pkt){ .pid = 5, .tid = 6, .mono_ns = y.t0 };
	snprintf(p.task.name, sizeof(p.task.name), "a,b \"c\"");
	add_pkt(&y, &p);
	for (int i = 0; i < 10; i++) {
		memset(&p, 0, sizeof(p));
		p.type = T4_PKT_CPU_SLICE;
		p.cpu_slice = (struct t4_cpu_slice_pkt){ (uint32_t)i % 2, 5, 6,
			y.t0 + 1000 + (uint64_t)i * 5000000, y.t0 + 1000 + (uint64_t)i * 5000000 + 1000000, 0 };
		add_pkt(&y, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_GPU_SLICE;
	p.gpu_slice = (struct t4_gpu_slice_pkt){ 4, 1, 5, 6, y.t0 + 1000 + 3000000,
						  y.t0 + 1000 + 9000000, T4_GPU_FROM_RUN };
	add_pkt(&y, &p);
	write_log(path, y.pk, y.n_pk);
	py(dir, "phases.py",
	   "import csv, sys\n"
	   "r = list(csv.reader(sys.stdin))\n"
	   "assert r[0] == ['start_ns','end_ns','kind','cpu','pid','tid','name','context'], r[0]\n"
	   "cpu = [x for x in r[1:] if x[2] == 'cpu']; gpu = [x for x in r[1:] if x[2] == 'gpu']\n"
	   "assert len(cpu) == 10 and len(gpu) == 1, (len(cpu), len(gpu))\n"
	   "assert all(x[6] == 'a,b ' + chr(34) + 'c' + chr(34) for x in cpu), cpu[0]\n"
	   "assert all(int(x[1]) - int(x[0]) == 1000000 for x in cpu)\n"
	   "assert gpu[0][7] == '4' and gpu[0][3] == '' and int(gpu[0][1]) - int(gpu[0][0]) == 6000000\n");
	py(dir, "jsonl.py",
	   "import json, sys\n"
	   "rows = [json.loads(l) for l in sys.stdin]\n"
	   "s = [x for x in rows if 'slice' in x]\n"
	   "assert len(s) == 11 and s[-1]['slice'] == 'gpu' and s[-1]['context'] == 4, s[-1]\n"
	   "assert all(x['bookmark'] == 'only' for x in s)\n");
	cr_assert_eq(cli_exec(&io, "\"$B\" decode s.t4t -f phases-csv | python3 phases.py"), 0, "%s",
		     out);
	cr_assert_eq(cli_exec(&io, "\"$B\" decode s.t4t -f jsonl | python3 jsonl.py"), 0, "%s", out);
	cr_assert_eq(cli_exec(&io, "\"$B\" decode s.t4t | grep -q WORKLOAD && "
				   "\"$B\" decode s.t4t | grep -q '^  activity events   3 lost before the log'"),
		     0, "summary: %s", out);
	/* one word for them: the summary's "activity events" are info's and
	 * record's activity line's events lost */
	cr_assert_eq(cli_exec(&io, "\"$B\" info s.t4t | grep -q '^  activity .* 3 events lost before the log'"),
		     0, "info: %s", out);
	cr_assert_eq(cli_exec(&io, "\"$B\" report s.t4t -o s.html 2>/dev/null && grep -q "
				   "'<b>3</b> CPU/GPU activity events lost or unplaced' s.html"),
		     0, "report: %s", out);
	sy_free(&y);
	t4_rmtree(dir);
}

/* ---- a MONOTONIC reference clock (the in-kernel path) ----------------------------- */

struct kept_slices {
	struct t4_slice v[8];
	size_t n;
};

static int keep_slice(void *ud, const struct t4_decoder *dec, const struct t4_slice *s)
{
	struct kept_slices *ks = ud;

	(void)dec;
	cr_assert_lt(ks->n, 8);
	ks->v[ks->n++] = *s;
	return 0;
}

/* Decode the first n packets of y, three CPU slices (at[j] .. at[j] +
 * 0.5 ms on MONOTONIC) fed after its metadata (packets 0..meta-1); the
 * decoder is returned (finished), the slices in ks. */
static struct t4_decoder *decode_with_slices(const struct sy *y, size_t n, size_t meta,
					     const uint64_t *at, struct kept_slices *ks)
{
	static const struct t4_sink_ops ops = { .slice = keep_slice };
	struct t4_decode_opts o = { 0 };
	struct t4_decoder *dec;
	struct t4_packet sl;

	memset(ks, 0, sizeof(*ks));
	cr_assert_eq(t4_decoder_new(&dec, &o, &ops, ks), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(t4_decoder_feed(dec, &y->pk[i]), 0, "%s", t4_errmsg());
		for (size_t j = 0; i + 1 == meta && j < 3; j++) {
			memset(&sl, 0, sizeof(sl));
			sl.type = T4_PKT_CPU_SLICE;
			sl.cpu_slice = (struct t4_cpu_slice_pkt){ 1, 77, 78, at[j], at[j] + 500000, 0 };
			cr_assert_eq(t4_decoder_feed(dec, &sl), 0, "%s", t4_errmsg());
		}
	}
	cr_assert_eq(t4_decoder_finish(dec, NULL), 0, "%s", t4_errmsg());
	return dec;
}

/* A log whose reference clock is CLOCK_MONOTONIC (the session says so;
 * its reference packets' mono_ns = ref_ns, as the in-kernel path writes
 * them): slices keep their instants exactly, before the first reference
 * packet too, and even in a log cut before any reference packet, where a
 * MONOTONIC_RAW log has nothing to convert them with. */
Test(decode_slices, monotonic_reference_needs_no_conversion)
{
	struct sy y;
	struct kept_slices ks;
	struct t4_decoder *dec;
	size_t meta = 0;

	sy_two_clocks(&y, 300);
	sy_build(&y);
	for (size_t i = 0; i < y.n_pk; i++) {
		if (y.pk[i].type == T4_PKT_SESSION)
			y.pk[i].session.ref_clock = T4_REFCLK_MONOTONIC;
		if (y.pk[i].type == T4_PKT_REF)
			y.pk[i].ref.mono_ns = y.pk[i].ref.ref_ns;
		if (y.pk[i].type == T4_PKT_DOMAIN || y.pk[i].type == T4_PKT_EVENT)
			meta = i + 1;
	}
	/* 1 ms before the first trigger; mid-recording; at the last one */
	const uint64_t at[3] = { y.t0 - 1000000, y.t0 + 123456789, y.t0 + 299 * y.period };
	for (int cut = 0; cut < 2; cut++) {
		dec = decode_with_slices(&y, cut ? meta : y.n_pk, meta, at, &ks);
		cr_assert_eq(t4_decoder_slice_stats(dec)->unplaced, 0, "cut %d", cut);
		cr_assert_eq(ks.n, 3, "cut %d", cut);
		for (size_t j = 0; j < 3; j++) {
			cr_assert_eq(ks.v[j].start_ns, at[j], "cut %d: slice %zu moved by %lld ns", cut,
				     j, (long long)(ks.v[j].start_ns - at[j]));
			cr_assert_eq(ks.v[j].end_ns, at[j] + 500000);
		}
		t4_decoder_free(dec);
	}
	y.pk[0].session.ref_clock = T4_REFCLK_MONOTONIC_RAW;
	dec = decode_with_slices(&y, meta, meta, at, &ks);
	cr_assert_eq(t4_decoder_slice_stats(dec)->unplaced, 3, "MONOTONIC_RAW: no pairs, no place");
	t4_decoder_free(dec);
	sy_free(&y);
}
