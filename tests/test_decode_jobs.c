/* test_decode_jobs.c - decode -j N gives what -j 1 gives, byte for byte,
 * whatever the log (issue 19: the domains decoded by N workers,
 * decode/parallel.c): every format and the standard error (warnings and
 * their order) for -j 1, 2 and 7, on a crafted log of thousands of
 * domains, one of which answers every trigger and the others a few,
 * answering two schedulers, the second of which starts earlier than the
 * first but reaches the log later (the origin moves after the first
 * domains' first output), with bookmarks carried by the reference packets
 * only (phases at trigger precision, as logs before set_ns), and on
 * damaged and truncated logs of the project's independent writer, and
 * two hosts' logs merged; and on a log of many small chunks with every
 * damage the reader meets (decode/readahead.c unpacks chunks on several
 * threads: a chunk failing mid-way, damaged chunks between good ones,
 * junk, a newer version, another recording after it, a cut), from a file,
 * a redirected standard input and a pipe; and on a log of one chunk larger
 * than a slot's pieces hold, unpacked by the workers themselves; and on
 * logs without a plausible reference packet (their intervals all made at
 * the end, by the workers that own their domains).
 *
 * The simulator's and the host's logs are compared the same way in
 * test_decode_cli.c (decode_cli/threads_change_no_output_*).
 */
#include "cli_testutil.h"

#include <stdarg.h>
#include <stdint.h>
#include <sys/resource.h>
#include <zstd.h>

#include <criterion/redirect.h>

#include "craft_log.h"
#include "decode/decode_int.h"
#include "packets_testutil.h"
#include "packets/packets.h"
#include "util/util.h"

#define N_DOMAINS 2000
#define N_TRIGGERS 2000
#define LATE_SCHED_AT 300 /* the second scheduler's packets start here */

static const char *const formats[] = {
	"-f summary -v", "-f summary --per-cpu", "-f phases", "-f slices",
	"-f csv",        "-f jsonl",             "-f perfetto", "-f report",
};
static const char *const jobs[] = { "2", "7" }; /* 7: odd, more workers than CPUs */

/* Run the shell line in dir ("$D"; errors merged into out when merge): its
 * exit status. */
static int in_dir(const char *dir, char *out, size_t cap, bool merge, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = cli_vexec(&(struct cli_io){ .dir = dir, .out = out, .cap = cap, .merge_err = merge },
			   fmt, ap);
	va_end(ap);
	return rc;
}

/* LOG decoded with ARGS in every format, -j 1 against each of jobs[]:
 * the same output (or none, both refused), the same standard error, the
 * same exit status. */
static void same_for_jobs(const char *dir, const char *log, const char *args)
{
	char out[8192];

	for (size_t f = 0; f < T4_ARRAY_LEN(formats); f++) {
		const char *fa = formats[f];
		cr_assert_eq(in_dir(dir, out, sizeof(out), false,
				    "cd \"$D\" && rm -f one.out && \"$B\" decode %s %s %s -j 1"
				    " -o one.out 2>one.err; echo $?", log, fa, args),
			     0, "%s", out);
		int rc1 = atoi(out);
		for (size_t j = 0; j < T4_ARRAY_LEN(jobs); j++) {
			cr_assert_eq(in_dir(dir, out, sizeof(out), false,
					    "cd \"$D\" && rm -f n.out && \"$B\" decode %s %s %s -j %s"
					    " -o n.out 2>n.err; echo $?", log, fa, args, jobs[j]),
				     0, "%s", out);
			cr_assert_eq(atoi(out), rc1, "decode %s %s %s: -j 1 exits %d, -j %s %s", log,
				     fa, args, rc1, jobs[j], out);
			cr_assert_eq(in_dir(dir, out, sizeof(out), true,
					    "cd \"$D\" && { [ ! -e one.out ] && [ ! -e n.out ] ||"
					    " cmp one.out n.out; } &&"
					    " sed 's/n[.]out/one.out/g' n.err | cmp one.err -"),
				     0, "decode %s %s %s: -j 1 and -j %s differ: %s", log, fa, args,
				     jobs[j], out);
		}
	}
}

static void ref_of(struct lw *w, uint32_t sched, uint64_t trigger, uint64_t ns, uint32_t bm)
{
	struct t4_packet p = { .type = T4_PKT_REF };

	p.ref.sched_id = sched;
	p.ref.trigger_id = trigger;
	p.ref.ref_ns = ns;
	p.ref.mono_ns = ns;
	p.ref.real_ns = ns + 1700000000000000000ull;
	p.ref.bookmark_id = bm;
	lw_put(w, &p);
}

static void domain_of(struct lw *w, uint32_t id, uint32_t sched)
{
	struct t4_packet p = { .type = T4_PKT_DOMAIN };

	p.domain.domain_id = id;
	p.domain.kind = T4_DOM_SOFTWARE;
	p.domain.cpu = (int32_t)(id % 64);
	p.domain.clock_event = -1;
	p.domain.sched_id = sched;
	snprintf(p.domain.name, sizeof(p.domain.name), "dom%u,\"%u\"", id, sched);
	lw_put(w, &p);
	struct t4_packet e = { .type = T4_PKT_EVENT };
	e.event.domain_id = id;
	e.event.scale = 1.0;
	snprintf(e.event.pmu, sizeof(e.event.pmu), "pmu%u", id % 5);
	if (id % 3) /* the others with a metric (software: ctx_switch_rate) */
		snprintf(e.event.name, sizeof(e.event.name), "ev%u", id % 3);
	else
		snprintf(e.event.name, sizeof(e.event.name), "context-switches");
	lw_put(w, &e);
}

/* The domains of the second scheduler: every seventh. */
static uint32_t sched_of(uint32_t id)
{
	return id % 7 == 3;
}

/* Whether domain id answers trigger k of its scheduler: domain 0 every
 * one, the others one in 40 once the second scheduler has started (domain
 * 1 answers trigger 0 as well, first of all: its slot is 0, so worker 0's
 * first output comes after another worker's, and after the origin moved). */
static bool answers(uint32_t id, uint64_t k)
{
	return id == 0 || (k >= LATE_SCHED_AT && k % 40 == id % 40);
}

static void returns_of(struct lw *w, uint32_t sched, uint64_t k, uint64_t ns)
{
	for (uint32_t id = 0; id < N_DOMAINS; id++)
		if (sched_of(id) == sched && answers(id, k))
			ret(w, id, k, ns, (k * 7919 + id) % 100000);
}

static uint64_t ns_of(uint32_t sched, uint64_t k)
{
	/* the second scheduler's grid starts 300 ms before the first's */
	return 1000000000ull + k * 1000000ull - (sched ? 300000000 : 0);
}

static uint32_t bookmark_at(uint64_t k)
{
	return k < 500 ? 3 : k < 1200 ? 1 : k < 1500 ? 2 : 1;
}

static void write_many(const char *path)
{
	struct lw w;

	lw_open(&w, path);
	session(&w, 1000000);
	for (uint32_t id = 0; id < N_DOMAINS; id++)
		domain_of(&w, id, sched_of(id));
	bookmark(&w, 3, "idle", 0, 0); /* (no set_ns) */
	bookmark(&w, 1, "warm up", 500, 0);
	bookmark(&w, 2, "run,\"x\"", 1200, 0);
	for (uint64_t k = 0; k < N_TRIGGERS; k++) {
		ref_of(&w, 0, k, ns_of(0, k), bookmark_at(k));
		if (!k)
			ret(&w, 1, 0, ns_of(0, 0), 1);
		returns_of(&w, 0, k, ns_of(0, k));
		if (k == LATE_SCHED_AT) /* the second scheduler catches up */
			for (uint64_t j = 0; j < LATE_SCHED_AT; j++) {
				ref_of(&w, 1, j, ns_of(1, j), bookmark_at(j));
				returns_of(&w, 1, j, ns_of(1, j));
			}
		if (k >= LATE_SCHED_AT) {
			ref_of(&w, 1, k, ns_of(1, k), bookmark_at(k));
			returns_of(&w, 1, k, ns_of(1, k));
		}
	}
	lw_close(&w);
}

/* A new directory with the log write() makes in it, named name. */
static char *dir_with(const char *name, void (*write)(const char *path))
{
	char *dir = cli_tmpdir("t4jobs"), path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	write(path);
	return dir;
}

Test(decode_jobs, thousands_of_domains_one_dominant_two_schedulers, .timeout = 900)
{
	char *dir = dir_with("many.t4t", write_many), out[8192];

	/* it is what it should be: 2000 domains, four phases by trigger */
	cr_assert_eq(in_dir(dir, out, sizeof(out), true,
			    "cd \"$D\" && \"$B\" decode many.t4t -f phases -j 1"),
		     0, "%s", out);
	cr_assert(strstr(out, "idle,1,") && strstr(out, "warm up,1,") &&
			  strstr(out, "\"run,\"\"x\"\"\",1,") && strstr(out, "warm up,2,") &&
			  strstr(out, ",trigger\n"),
		  "%s", out);
	same_for_jobs(dir, "many.t4t", "");
	same_for_jobs(dir, "many.t4t", "--phase 'warm up'");
	same_for_jobs(dir, "many.t4t", "--pmu 'dom1*' --event ev1,ctx* --time rel");
	/* every domain's rows in relative time: workers whose first row comes
	 * after the origin moved take -j 1's (parallel.c, dec_split_origin) */
	cr_assert_eq(in_dir(dir, out, sizeof(out), true,
			    "cd \"$D\" && for f in csv jsonl; do for j in 1 2 7; do \"$B\" decode many.t4t"
			    " -f $f --time rel -j $j -o rel$j.$f || exit 1; done; cmp rel1.$f rel2.$f &&"
			    " cmp rel1.$f rel7.$f || exit 1; done"),
		     0, "%s", out);
	/* a filter that keeps the intervals of one domain, another worker's
	 * (domain 0, slot 1): kept, not refused as if none were (worker 0
	 * counts every worker's, gather) */
	cr_assert_eq(in_dir(dir, out, sizeof(out), true,
			    "cd \"$D\" && for j in 1 2 7; do \"$B\" decode many.t4t -f csv --pmu 'dom0?*'"
			    " -j $j -o w$j.csv || exit 1; done;"
			    " [ $(wc -l < w1.csv) -gt 3000 ] && cmp w1.csv w2.csv && cmp w1.csv w7.csv"),
		     0, "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* The independent writer's logs: damaged (CRC, bad magic, lost packets,
 * late, duplicated and reordered returns), truncated, two schedulers,
 * hostile names; and two hosts merged. */
Test(decode_jobs, damaged_truncated_and_merged_logs, .timeout = 900)
{
	char *dir = cli_tmpdir("t4jobs"), w[4200], out[8192];
	static const char *const logs[][2] = {
		{ "dmg.t4", "--triggers 2000 --seed 4 --bookmarks --damage 2 --damage 5"
			    " --drop-returns 0.02 --late 0.02 --duplicate 0.01 --reorder 40" },
		{ "trunc.t4", "--triggers 2000 --seed 5 --bookmarks --schedulers 2 --format 2"
			      " --truncate 30000" },
		{ "magic.t4", "--triggers 2000 --seed 7 --bookmarks --damage-magic 3"
			      " --read-failures 0.01 --drop-refs 0.02 --hostile-names" },
		{ "copies.t4", "--triggers 1500 --seed 9 --large-ids --copies --second-seed 3" },
	};

	cli_repo_file("tools/t4write.py", w);
	for (size_t i = 0; i < T4_ARRAY_LEN(logs); i++)
		cr_assert_eq(in_dir(dir, out, sizeof(out), true, "cd \"$D\" && python3 '%s' %s %s", w,
				    logs[i][1], logs[i][0]),
			     0, "%s", out);
	for (size_t i = 0; i < T4_ARRAY_LEN(logs); i++)
		same_for_jobs(dir, logs[i][0], "");
	same_for_jobs(dir, "dmg.t4", "--phase load");
	/* two hosts merged (the committed fixtures of two recordings) */
	char a[4200], b[4200], both[8500];
	cli_repo_file("tests/fixtures/logs/v1.1-virtual-sim.t4t", a);
	cli_repo_file("tests/fixtures/logs/v2-virtual-sim.t4t", b);
	snprintf(both, sizeof(both), "'%s' '%s'", a, b);
	same_for_jobs(dir, both, "");
	same_for_jobs(dir, both, "--phase cpu_compute");
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* decode -j's workers wait for one another (the origin, the rows'
 * merge) and wake one another without a lock on the hot path
 * (decode/parallel.c, wait_until_locked). Its waits are timed, so a wake
 * protocol that failed would only be slow; here they are not (the test's
 * seam): a wake-up that is lost hangs, and the timeout fails the test.
 * The case that hung once in ~700 runs under qemu-user, when the wake
 * could be lost: 7 workers, no rows to hand over (as the summary), a
 * truncated log of two schedulers; each run's totals are -j 1's. A stress
 * test: it can miss a rare lost wake-up, never invent one. */
Test(decode_jobs, waits_wake_without_a_timer, .timeout = 900)
{
	char *dir = cli_tmpdir("t4jobs"), w[4200], out[8192], path[4300];
	struct t4_decode_opts o = { 0 };
	uint64_t want_values = 0;

	cli_repo_file("tools/t4write.py", w);
	cr_assert_eq(in_dir(dir, out, sizeof(out), true,
			    "cd \"$D\" && python3 '%s' --triggers 600 --seed 5 --bookmarks"
			    " --schedulers 2 --truncate 12000 trunc.t4",
			    w),
		     0, "%s", out);
	snprintf(path, sizeof(path), "%s/trunc.t4", dir);
	cr_redirect_stderr(); /* (the truncation, said 40 times) */
	for (int run = 0; run < 40; run++) {
		struct t4_decoder *d;
		uint64_t values = 0;

		o.jobs = run ? 7 : 1;
		cr_assert_eq(t4_decoder_new(&d, &o, NULL, NULL), 0, "%s", t4_errmsg());
		d->test_untimed_waits = true;
		d->quiet = true;
		cr_assert_eq(t4_decoder_run_file(d, path), 0, "run %d: %s", run, t4_errmsg());
		for (size_t i = 0; i < t4_decoder_n_domains(d); i++)
			for (uint32_t e = 0; e < t4_decoder_domain_at(d, i)->n_counts; e++)
				values += (uint64_t)t4_decoder_domain_at(d, i)->totals[e] +
					  t4_decoder_domain_at(d, i)->intervals;
		if (!run)
			want_values = values;
		cr_assert_eq(values, want_values, "run %d: -j 7's totals are not -j 1's", run);
		t4_decoder_free(d);
	}
	cr_assert_gt(want_values, 0);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A limit on the threads a user may start (RLIMIT_NPROC, here 3 tasks for
 * nobody: root has none) below what -j asks: the decode runs with the
 * threads that start, says so in one line, and gives -j 1's rows (it
 * failed: "decode: decode: cannot start a worker thread", no reason). */
Test(decode_jobs, fewer_threads_than_asked_decode_with_those, .timeout = 300)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], text[8192], w[4200];

	if (geteuid() != 0)
		cr_skip_test("needs root, to run the decode as another user (nobody) under a limit");
	t4t_nobody_tmpdir(dir, sizeof(dir), "t4nproc", true);
	cr_assert_eq(chown(dir, T4T_NOBODY, T4T_NOBODY), 0, "%s", strerror(errno));
	cli_repo_file("tools/t4write.py", w);
	cr_assert_eq(in_dir(dir, text, sizeof(text), true,
			    "cd \"$D\" && python3 '%s' --triggers 600 --seed 5 --bookmarks"
			    " --schedulers 2 t.t4 && chmod 644 t.t4 &&"
			    " \"$B\" decode t.t4 -f csv -j 1 -o j1.csv",
			    w),
		     0, "%s", text);
	t4t_copy_program(cli_bin(), dir, path, sizeof(path));
	char *argv[] = { "/usr/bin/prlimit", "--nproc=3:3", "--", path, "decode", "t.t4",
			 "-f", "csv", "-j", "7", "-o", "j7.csv", NULL };
	if (access(argv[0], X_OK))
		cr_skip_test("no %s to set the limit: %s", argv[0], strerror(errno));
	int rc = t4t_run_as_nobody(dir, argv);
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	cr_assert_geq(t4_read_small_file(path, text, sizeof(text)), 0);
	cr_assert_eq(rc, 0, "%s", text);
	/* one line (with a count of threads: nobody's other tasks, an
	 * emulator's, take some), then what decode says of its output */
	const char *nl = strchr(text, '\n'),
		   *why = strstr(text, " of its threads could start (Resource temporarily"
				       " unavailable): decoding with -j ");
	cr_assert(!strncmp(text, "t410trace: warning: decode -j 7: ", 33) && nl && why && why < nl &&
			  !strcmp(nl, "\nt410trace decode: wrote j7.csv"),
		  "%s", text);
	cr_assert_eq(in_dir(dir, text, sizeof(text), true, "cd \"$D\" && cmp j1.csv j7.csv"), 0,
		     "%s", text);
	cli_run(text, sizeof(text), "rm -rf '%s'", dir);
}

static void write_log(const char *dir, const char *name, const void *b, size_t n)
{
	char path[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	cr_assert(f, "%s", path);
	cr_assert_eq(fwrite(b, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
}

/* The chunks unpacked on several threads, handed out in order: every
 * damage in place (tests/packets_testutil.h: tu_damaged_log). */
Test(decode_jobs, chunks_unpacked_in_parallel_damaged_cut_and_appended, .timeout = 900)
{
	char *dir = cli_tmpdir("t4jobs"), out[8192];
	struct tu_log l;

	tu_log_init(&l);
	tu_damaged_log(&l, 5, 300, true);
	write_log(dir, "two.t4", l.buf, l.len);
	write_log(dir, "cut.t4", l.buf, l.chunk_off[30] + 500); /* in chunk 30's payload */
	tu_log_free(&l);
	/* it is what it should be: the damage said, the second recording found */
	cr_assert_eq(in_dir(dir, out, sizeof(out), true, "cd \"$D\" && \"$B\" decode two.t4 -j 1"),
		     0, "%s", out);
	cr_assert(strstr(out, "were already returned") && strstr(out, "header says") &&
			  strstr(out, "payload CRC mismatch") && strstr(out, "version 9") &&
			  strstr(out, "to the next chunk") && strstr(out, "another recording starts"),
		  "%s", out);
	same_for_jobs(dir, "two.t4", "");
	same_for_jobs(dir, "cut.t4", "");
	same_for_jobs(dir, "- <two.t4", "");
	/* a pipe: read as a stream */
	cr_assert_eq(in_dir(dir, out, sizeof(out), true,
			    "cd \"$D\" && for j in 1 2 7; do cat two.t4 | \"$B\" decode - -f csv -j $j"
			    " >p$j.csv 2>p$j.err || exit 1; done; cmp p1.csv p2.csv && cmp p1.csv p7.csv"
			    " && cmp p1.err p2.err && cmp p1.err p7.err && grep -q 'already returned' p1.err"),
		     0, "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* One chunk whose packets fill more than the 16 pieces (4 MiB) a slot
 * holds, at -j 2 where the two domain workers unpack it themselves (no
 * unpacker thread of its own): the one unpacking it waits for room that
 * only pieces fed by every worker, itself too, give back, so it feeds
 * while it waits (decode/readahead.c reserve()); without that, the
 * decode never ends. */
Test(decode_jobs, a_chunk_larger_than_a_slot_unpacked_by_the_workers, .timeout = 900)
{
	char *dir = cli_tmpdir("t4jobs"), w[4200], out[8192];

	cli_repo_file("tools/t4write.py", w);
	cr_assert_eq(in_dir(dir, out, sizeof(out), true,
			    "cd \"$D\" && python3 '%s' --triggers 10000 --chunk-packets 1000000"
			    " --format 3 --seed 3 --bookmarks big.t4 &&"
			    " \"$B\" info big.t4 | grep -q '^  chunks  *1$'", w),
		     0, "%s", out);
	/* (a hang is a failure: timeout ends it) */
	cr_assert_eq(in_dir(dir, out, sizeof(out), true,
			    "cd \"$D\" && for j in 1 2 3; do timeout 120 \"$B\" decode big.t4 -j $j"
			    " >s$j.txt || exit 1; done; cmp s1.txt s2.txt && cmp s1.txt s3.txt"),
		     0, "%s", out);
	same_for_jobs(dir, "big.t4", "");
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* ---- many small chunks (decode/readahead.c: the scanner unpacks them) ---- */

#define EMPTY_CHUNKS 20000
#define SMALL_TRIGGERS 400

/* n empty chunks (a zstd frame of nothing), numbered on from l's; the
 * one at bad_crc (if < n) with a payload CRC that does not match. */
static void empty_chunks(struct tu_log *l, unsigned n, unsigned bad_crc)
{
	uint8_t comp[64], hdr[T4_CHUNK_HDR_SIZE];
	size_t len = ZSTD_compress(comp, sizeof(comp), "", 0, 1);

	cr_assert(!ZSTD_isError(len));
	for (unsigned i = 0; i < n; i++) {
		struct t4_chunk_hdr h = { .version = (uint16_t)l->format,
					  .hdr_size = T4_CHUNK_HDR_SIZE,
					  .seq = l->seq++,
					  .first_trigger = UINT64_MAX,
					  .comp_size = (uint32_t)len,
					  .tag = l->tag };
		h.payload_crc = t4_crc32c(0, comp, len) ^ (i == bad_crc);
		t4_chunk_hdr_pack(&h, hdr);
		tu_log_append(l, hdr, sizeof(hdr));
		tu_log_append(l, comp, len);
	}
}

/* The voluntary context switches (blocking waits) of the children reaped
 * while the shell line runs. */
static long waits_of(const char *dir, const char *line)
{
	struct rusage before, after;
	char out[4096];

	cr_assert_eq(getrusage(RUSAGE_CHILDREN, &before), 0);
	cr_assert_eq(in_dir(dir, out, sizeof(out), true, "%s", line), 0, "%s: %s", line, out);
	cr_assert_eq(getrusage(RUSAGE_CHILDREN, &after), 0);
	return after.ru_nvcsw - before.ru_nvcsw;
}

/* A log of 20,000 empty chunks between chunks of packets (one of them
 * with a payload CRC that does not match), and one trigger a chunk: what
 * a crafted log or a slow recording makes. The scanner unpacks chunks this
 * small itself, so they cost no hand-over between threads: before, each
 * woke the other threads (8 futex calls a chunk; 5-10x -j 1's time at
 * -j 2 and 7). Checked by what can be counted, not by time: the decode
 * blocks fewer than once per 10 chunks, and its outputs are -j 1's and
 * those of the same log without the empty chunks. */
Test(decode_jobs, many_small_chunks_unpacked_by_the_scanner, .timeout = 900)
{
	char *dir = cli_tmpdir("t4jobs"), out[8192];
	struct tu_log with, without, single;
	struct t4_packet meta[64], t[1 + TU_DOMAINS];
	size_t n = tu_metadata(meta);
	uint64_t s = 9;

	tu_log_init(&with);
	tu_log_init(&without);
	tu_log_init(&single);
	for (size_t i = 0; i < n; i++) {
		tu_log_add(&with, &meta[i]);
		tu_log_add(&without, &meta[i]);
		tu_log_add(&single, &meta[i]);
	}
	for (uint64_t k = 0; k < SMALL_TRIGGERS; k++) {
		size_t m = tu_trigger(&s, k, t);
		for (size_t i = 0; i < m; i++) {
			tu_log_add(&with, &t[i]);
			tu_log_add(&without, &t[i]);
			tu_log_add(&single, &t[i]);
		}
		if (k % 40 == 39) { /* chunks of 40 triggers: unpacked by the others */
			tu_log_flush(&with);
			tu_log_flush(&without);
			empty_chunks(&with, EMPTY_CHUNKS / (SMALL_TRIGGERS / 40),
				     k == 199 ? 77 : UINT32_MAX);
		}
		if (k >= 300) /* one trigger a chunk */
			tu_log_flush(&single);
	}
	tu_log_flush(&with);
	tu_log_flush(&without);
	tu_log_flush(&single);
	write_log(dir, "with.t4", with.buf, with.len);
	write_log(dir, "without.t4", without.buf, without.len);
	write_log(dir, "single.t4", single.buf, single.len);
	tu_log_free(&with);
	tu_log_free(&without);
	tu_log_free(&single);

	/* the empty chunks change nothing but the warning of the damaged one */
	cr_assert_eq(in_dir(dir, out, sizeof(out), true,
			    "cd \"$D\" && for j in 1 2 7; do"
			    " \"$B\" decode with.t4 -f csv -j $j -o w.csv 2>w$j.err || exit 1;"
			    " \"$B\" decode without.t4 -f csv -j $j -o o.csv 2>/dev/null || exit 1;"
			    " cmp w.csv o.csv && cmp w1.err w$j.err || exit 1; done;"
			    " grep -c 'payload CRC mismatch' w1.err"),
		     0, "%s", out);
	cr_assert_eq(atoi(out), 1, "%s", out);
	/* no wake-up per chunk: one blocking wait per 10 chunks at most */
	for (int j = 2; j <= 7; j += 5) {
		char line[256];
		snprintf(line, sizeof(line), "cd \"$D\" && \"$B\" decode with.t4 -f csv -j %d -o /dev/null"
			 " 2>/dev/null", j);
		long waits = waits_of(dir, line);
		cr_assert_lt(waits, EMPTY_CHUNKS / 10, "-j %d: %ld blocking waits for %d chunks", j,
			     waits, EMPTY_CHUNKS);
	}
	same_for_jobs(dir, "with.t4", "");
	same_for_jobs(dir, "single.t4", "");
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* ---- rows made by several workers, merged (decode/parallel.c) ---------- */

#define HOSTILE_DOMAINS 12
#define HOSTILE_TRIGGERS 3000

/* Names with the separator, quotes, a line break and bytes that are not
 * UTF-8, over four kinds (Perfetto's kind groups: described once, by the
 * worker of the first domain of each kind in -j 1's order). */
static void hostile_domain(struct lw *w, uint32_t id)
{
	static const char *const names[] = { "a,b", "q\"u\"o", "new\nline", "bad\xff\xfe" };
	static const uint32_t kinds[] = { T4_DOM_SOFTWARE, T4_DOM_TSC, T4_DOM_TRACEPOINT,
					  T4_DOM_OTHER };
	struct t4_packet p = { .type = T4_PKT_DOMAIN };

	p.domain.domain_id = id;
	p.domain.kind = kinds[id % 4];
	p.domain.cpu = (int32_t)id;
	p.domain.clock_event = -1;
	snprintf(p.domain.name, sizeof(p.domain.name), "%s %u", names[id % 4], id);
	lw_put(w, &p);
	for (uint32_t e = 0; e < 2; e++) {
		struct t4_packet ev = { .type = T4_PKT_EVENT };
		ev.event.domain_id = id;
		ev.event.index = e;
		ev.event.scale = 1.0;
		snprintf(ev.event.pmu, sizeof(ev.event.pmu), "pmu,\"%u\"", id % 3);
		snprintf(ev.event.name, sizeof(ev.event.name), "%s%u", names[(id + e + 1) % 4], e);
		lw_put(w, &ev);
	}
}

static void hostile_ret(struct lw *w, uint32_t id, uint64_t k, uint64_t ns)
{
	struct t4_packet p = { .type = T4_PKT_RET };

	p.ret.domain_id = id;
	p.ret.trigger_id = k;
	p.ret.read_begin_ns = ns + 1000 + 300 * id;
	p.ret.read_end_ns = p.ret.read_begin_ns + 1500;
	p.ret.flags = k ? 0 : T4_RET_FIRST;
	p.ret.n_counts = 2;
	p.ret.counts[0] = k * (1000 + id);
	p.ret.counts[1] = k * k + id;
	lw_put(w, &p);
}

/* Bookmarks with their set times (the phases cut intervals), domains
 * that start answering at different triggers (each worker's first row at
 * another packet), some returns a trigger late (a domain drained by a
 * later packet than its reference packet). */
static void write_hostile(const char *path)
{
	static const char *const marks[] = { "warm,up", "run \"1\"", "new\nline", "bad\xff" };
	struct lw w;

	lw_open(&w, path);
	session(&w, 1000000);
	for (uint32_t id = 0; id < HOSTILE_DOMAINS; id++)
		hostile_domain(&w, id);
	for (uint64_t k = 0; k < HOSTILE_TRIGGERS; k++) {
		uint64_t ns = 1000000000ull + k * 1000000;
		if (k % 500 == 250) {
			struct t4_packet b = { .type = T4_PKT_BOOKMARK };
			b.bookmark.bookmark_id = 1 + (uint32_t)(k / 500) % 4;
			b.bookmark.first_trigger = k;
			b.bookmark.set_ns = ns - 400000; /* inside the interval before */
			snprintf(b.bookmark.name, sizeof(b.bookmark.name), "%s",
				 marks[(k / 500) % 4]);
			lw_put(&w, &b);
		}
		ref(&w, k, ns, k >= 250 ? 1 + (uint32_t)((k - 250) / 500) % 4 : 0);
		for (uint32_t id = 0; id < HOSTILE_DOMAINS; id++)
			if (k >= 7 * id && (id % 3 || k % 2 == 0))
				hostile_ret(&w, id, k, ns);
	}
	lw_close(&w);
}

Test(decode_jobs, rows_merged_hostile_names_phases_time_bases, .timeout = 900)
{
	char *dir = dir_with("hostile.t4t", write_hostile), out[8192];

	/* it is what it should be: every domain's rows, phases cut by time */
	cr_assert_eq(in_dir(dir, out, sizeof(out), true,
			    "cd \"$D\" && \"$B\" decode hostile.t4t -f jsonl -j 1 | grep -c"
			    " '\"type\": \"domain\"' && \"$B\" decode hostile.t4t -f phases -j 1"
			    " | grep -c ',exact$'"),
		     0, "%s", out);
	cr_assert(!strncmp(out, "12\n", 3) && atoi(out + 3) >= 5, "%s", out);
	same_for_jobs(dir, "hostile.t4t", "");
	same_for_jobs(dir, "hostile.t4t", "--time rel");
	same_for_jobs(dir, "hostile.t4t", "--time real -x ';'");
	same_for_jobs(dir, "- <hostile.t4t", "--time rel");
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A full disk, and a reader that goes away: the error (or the quiet end)
 * and the exit status of -j 1, at every -j, for the formats whose rows
 * are merged. */
Test(decode_jobs, rows_merged_output_errors, .timeout = 300)
{
	char *dir = dir_with("hostile.t4t", write_hostile), out[8192];
	static const char *const fmts[] = { "csv", "jsonl", "perfetto" };

	for (size_t f = 0; f < T4_ARRAY_LEN(fmts); f++) {
		cr_assert_eq(in_dir(dir, out, sizeof(out), true,
				    "cd \"$D\" && for j in 1 2 3 7; do \"$B\" decode hostile.t4t -f %s"
				    " -j $j -o /dev/full 2>full$j.err; echo $? >>full$j.err;"
				    " { \"$B\" decode hostile.t4t -f %s -j $j 2>gone$j.err;"
				    " echo $? >>gone$j.err; } | head -c 100 >/dev/null; done;"
				    " cat full1.err gone1.err; for j in 2 3 7; do cmp full1.err full$j.err"
				    " && cmp gone1.err gone$j.err || exit 1; done", fmts[f], fmts[f]),
			     0, "%s: %s", fmts[f], out);
		char want[128]; /* the error names the output it hit */
		snprintf(want, sizeof(want), "/dev/full: writing the %s output: No space left on "
			 "device\n1\n", fmts[f]);
		cr_assert(strstr(out, want), "%s: %s", fmts[f], out);
	}
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* Three domains' returns, 10 triggers; reference packets none, or (far)
 * each with a trigger ID beyond 2^62: damage, left out (FORMAT.md 7.8). */
static void write_refless(const char *path, bool far)
{
	struct lw w;

	lw_open(&w, path);
	session(&w, 1000000);
	for (uint32_t id = 1; id <= 3; id++)
		domain(&w, id);
	for (uint64_t k = 0; k < 10; k++) {
		uint64_t ns = 1000000000ull + k * 1000000;
		if (far)
			ref(&w, (1ull << 62) + 1 + k, ns, 0);
		for (uint32_t id = 1; id <= 3; id++)
			ret(&w, id, k, ns, k ? 1000 * id : 0);
	}
	lw_close(&w);
}

static void write_no_refs(const char *path)
{
	write_refless(path, false);
}

static void write_far_refs(const char *path)
{
	write_refless(path, true);
}

/* Without a plausible reference packet, each domain's intervals come at
 * the end of the log, made by the worker that owns it: the one phase
 * that the first of them makes is every worker's, as -j 1 has it (before,
 * -j 2 and up said "the workers disagree on the phases (a bug ...)" and
 * exited 2). */
Test(decode_jobs, a_log_without_a_plausible_reference_packet, .timeout = 300)
{
	char *dir = dir_with("none.t4t", write_no_refs), out[8192], path[4200];

	snprintf(path, sizeof(path), "%s/far.t4t", dir);
	write_far_refs(path);
	cr_assert_eq(in_dir(dir, out, sizeof(out), true,
			    "cd \"$D\" && \"$B\" decode none.t4t -f phases -j 1"), 0, "%s", out);
	cr_assert_str_eq(out, "phase,occurrence,start_ns,end_ns,duration_ns,triggers,boundary\n"
			 ",1,1000001500,1009001500,9000000,0,trigger\n", "%s", out);
	same_for_jobs(dir, "none.t4t", "");
	same_for_jobs(dir, "far.t4t", "");
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}
