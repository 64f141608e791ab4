/* test_merge.c - `decode a.t4t b.t4t ...`: several hosts' logs on one
 * timeline (decode/merge.c), by the built binary (T4_BIN).
 *
 * The math: synthetic logs (decode_synth.h's streams, written with the
 * project's own writer) of hosts whose reference clocks started at
 * different times, whose CLOCK_REALTIME runs at a known rate against the
 * reference clock (-40, 0, +60 ppm) with a known error against true UTC
 * (within the maxerror their host packets state), at different periods;
 * one bookmark set at the same true UTC instant on every host. Every
 * host's phase must start within its reported bound of that instant (a
 * single offset instead of offset and rate misses by up to 60 us over the
 * 2 s logs, beyond the bounds). Hosts that are unsynchronised, of unknown
 * sync state or apart in time are decoded with a warning.
 *
 * Two recordings at once in separate UTS namespaces (unshare --uts): one
 * bookmark sent to both; each host's placed phase start is within its
 * bound of the UTC interval the two `ctl bookmark` calls took, and, both
 * hosts sharing one clock here, within their fits' residuals of it too.
 *
 * Bad input: a log given twice, a missing file, a file that is not a log,
 * a truncated log among several, an empty directory, stamps of no
 * disciplined clock: one line naming the file, the exit status, never a
 * crash (ASan runs these too).
 */
#include "cli_testutil.h"
#include "decode_synth.h"
#include "probe.h"

#include <inttypes.h>
#include <malloc.h>
#include <fcntl.h>
#include <unistd.h>

#include "packets/packets.h"

#define U_BASE 1700000000000000000ll /* true UTC at a host's t0 + its start */
#define MERGE_TRIGGERS 2000

/* One synthetic host: its reference clock starts at t0 (boot time), its
 * recording at true UTC U_BASE + start_ns; its realtime runs at 1 + ppm
 * against the reference clock and is off true UTC by err_ns. */
struct mhost {
	const char *name, *file;
	uint64_t t0, period, start_ns;
	double ppm;
	int64_t err_ns;
	uint32_t sync_flags; /* 0: no host packet */
	uint64_t maxerror_us;
	const char *job;     /* SLURM_JOB_ID; NULL: none */
	const char *bookmark; /* its one bookmark; NULL: "step" */
};

/* True UTC of reference time ref on host h. */
static int64_t true_utc(const struct mhost *h, uint64_t ref)
{
	return U_BASE + (int64_t)h->start_ns + (int64_t)((double)(ref - h->t0) * (1 + h->ppm / 1e6));
}

/* The reference time at which true UTC is u. */
static uint64_t ref_at(const struct mhost *h, int64_t u)
{
	return h->t0 + (uint64_t)((double)(u - U_BASE - (int64_t)h->start_ns) / (1 + h->ppm / 1e6));
}

static void put(struct t4_ring *ring, const struct t4_packet *p)
{
	cr_assert_eq(t4_ring_put(ring, p), 0);
}

static void host_packet(struct t4_ring *ring, const struct mhost *h, uint64_t ref)
{
	struct t4_packet p = { .type = T4_PKT_HOST };

	p.host.ref_ns = ref;
	p.host.real_ns = (uint64_t)(true_utc(h, ref) + h->err_ns);
	p.host.sync_flags = h->sync_flags;
	p.host.clock_state = h->sync_flags & T4_HOST_SYNCED ? 0 : 5;
	p.host.maxerror_us = h->maxerror_us;
	p.host.esterror_us = h->maxerror_us / 4;
	p.host.rank = -1;
	snprintf(p.host.host, sizeof(p.host.host), "%s", h->name);
	snprintf(p.host.job_id, sizeof(p.host.job_id), "%s", h->job ? h->job : "");
	put(ring, &p);
}

/* Write host h's log into dir, the bookmark "step" set at true UTC
 * bookmark_utc; stamps jitter by up to 2 us around the host's error. */
static void write_host(const char *dir, const struct mhost *h, int64_t bookmark_utc, uint64_t seed)
{
	struct sy y = { .seed = seed, .t0 = h->t0, .period = h->period,
			.n_triggers = MERGE_TRIGGERS, .n_doms = 2 };
	struct t4_log *log;
	struct t4_ring *ring;
	char path[PATH_MAX + 64];
	uint64_t rng = seed;

	y.dom[0] = (struct sy_dom){ .id = 1, .hz = 1e9, .ppm = 30, .bytes_per_ns = 2 };
	y.dom[1] = (struct sy_dom){ .id = 2, .hz = 5e8, .ppm = -20, .bytes_per_ns = 1 };
	uint64_t set = ref_at(h, bookmark_utc);
	sy_bookmark(&y, 1, h->bookmark ? h->bookmark : "step", (set - h->t0 + h->period - 1) / h->period, set);
	sy_build(&y);
	snprintf(path, sizeof(path), "%s/%s", dir, h->file);
	struct t4_log_opts lo = { .path = path, .chunk_bytes = 16384 }; /* chunks to lose */
	cr_assert_eq(t4_log_open(&log, &lo), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_ring(log, 1 << 22, T4_RING_WAIT, &ring), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_start(log), 0, "%s", t4_errmsg());
	for (size_t i = 0; i < y.n_pk; i++) {
		struct t4_packet *p = &y.pk[i];
		if (p->type == T4_PKT_SESSION) {
			snprintf(p->session.host, sizeof(p->session.host), "%s", h->name);
			p->session.session_id = seed << 32 | 1;
			p->session.start_real_ns = (uint64_t)(true_utc(h, h->t0) + h->err_ns);
		}
		if (p->type == T4_PKT_REF) {
			int64_t jitter = (int64_t)(sy_rand(&rng) % 4001) - 2000;
			p->ref.real_ns = (uint64_t)(true_utc(h, p->ref.ref_ns) + h->err_ns + jitter);
		}
		put(ring, p);
		if (i == 0 && h->sync_flags)
			host_packet(ring, h, h->t0);
	}
	if (h->sync_flags)
		host_packet(ring, h, h->t0 + MERGE_TRIGGERS * h->period);
	struct t4_status_pkt st = { .triggers = MERGE_TRIGGERS };
	cr_assert_eq(t4_log_close(log, &st, NULL), 0, "%s", t4_errmsg());
	sy_free(&y);
}

/* The number after `key` in the line of out that contains `anchor`. */
static int64_t num_after(const char *out, const char *anchor, const char *key)
{
	const char *a = strstr(out, anchor), *k;

	cr_assert_not_null(a, "no %s in:\n%.3000s", anchor, out);
	k = strstr(a, key);
	cr_assert(k && !memchr(a, '\n', (size_t)(k - a)), "no %s after %s in:\n%.3000s", key, anchor,
		  out);
	return strtoll(k + strlen(key), NULL, 10);
}

/* The start_ns (field 4) of phase `phase` of host `host` in -f phases. */
static int64_t phase_start(const char *csv, const char *host, const char *phase)
{
	char want[160];
	const char *p;

	snprintf(want, sizeof(want), "\n%s,%s,1,", host, phase);
	cr_assert_not_null(p = strstr(csv, want), "no %s on %s in:\n%s", phase, host, csv);
	return strtoll(p + strlen(want), NULL, 10);
}

static const struct mhost hosts[] = {
	/* synchronised, realtime 40 ppm slow, 300 us off UTC */
	{ "nodeA", "a.t4t", 5000000000ull, 1000000, 0, -40, 300000, 3, 400 },
	/* synchronised, 60 ppm fast, 150 us early, another period and boot */
	{ "nodeB", "b.t4t", 90000000000ull, 2000000, 400000000, 60, -150000, 3, 200 },
	/* unsynchronised: 0.2 s off, the kernel's maxerror 16 s */
	{ "nodeC", "c.t4t", 777000000ull, 1000000, 100000000, 0, 200000000, 1, 16000000 },
	/* no host packet (an older log): placed by its stamps alone */
	{ "nodeD", "d.t4t", 3000000000ull, 1000000, 250000000, 10, 0, 0, 0 },
	/* synchronised, yet the kernel's maxerror 3 s (a crafted or neglected host) */
	{ "nodeE", "e.t4t", 6000000000ull, 1000000, 50000000, 5, 1000000, 3, 3000000 },
};

/* A temporary directory with nodeA's and nodeB's logs (a.t4t, b.t4t), the
 * bookmark at the same true UTC instant on both. */
static char *two_hosts(uint64_t seed)
{
	char *dir = cli_tmpdir("t4merge");

	write_host(dir, &hosts[0], U_BASE + 1900000000ll, seed);
	write_host(dir, &hosts[1], U_BASE + 1900000000ll, seed + 1);
	return dir;
}

Test(merge, placement_within_the_reported_bound_for_every_host, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 20], csv[1 << 16];
	int64_t bm = U_BASE + 1900000000ll; /* inside every host's recording */

	for (size_t i = 0; i < T4_ARRAY_LEN(hosts); i++)
		write_host(dir, &hosts[i], bm, 11 + i);
	cr_assert_eq(cli_run(csv, sizeof(csv), "cd '%s' && '%s' decode a.t4t b.t4t c.t4t d.t4t"
				 " e.t4t -f phases 2>/dev/null", dir, cli_bin()), 0, "%s", csv);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t c.t4t d.t4t"
				 " e.t4t -f jsonl 2>&1 | grep -e header -e warning", dir, cli_bin()), 0,
		     "%s", out);
	for (size_t i = 0; i < T4_ARRAY_LEN(hosts); i++) {
		const struct mhost *h = &hosts[i];
		char anchor[64];
		snprintf(anchor, sizeof(anchor), "\"host\": \"%s\", \"placement\"", h->name);
		int64_t bound = num_after(out, anchor, "\"bound_ns\": ");
		int64_t residual = num_after(out, anchor, "\"residual_ns\": ");
		int64_t err = phase_start(csv, h->name, "step") - bm;
		cr_log_info("%s: placement error %+" PRId64 " ns, bound +-%" PRId64 " ns (residual %"
			    PRId64 " ns)", h->name, err, bound, residual);
		cr_assert_leq(llabs(err), bound, "%s placed %" PRId64 " ns off, bound %" PRId64,
			      h->name, err, bound);
		cr_assert_lt(residual, 10000, "%s: the stamps jitter 2 us: residual %" PRId64,
			     h->name, residual);
		if (h->sync_flags & T4_HOST_SYNCED) /* the bound is the kernel's + the fit's */
			cr_assert_eq(bound, (int64_t)h->maxerror_us * 1000 + residual);
	}
	/* the rate matters: nodeB's realtime runs 60 ppm fast; an offset at
	 * its start would be 60 ppm x 1.5 s = 90 us off at the bookmark */
	cr_assert(strstr(out, "\"rate_ppm\": 59.9") || strstr(out, "\"rate_ppm\": 60.0"), "%s", out);
	cr_assert(strstr(out, "c.t4t: host nodeC: the kernel says its clock was not synchronised"),
		  "%s", out);
	cr_assert(strstr(out, "d.t4t: host nodeD: no clock sync state recorded"), "%s", out);
	cr_assert(strstr(out, "e.t4t: host nodeE: synchronised, but the kernel states its clock's"
			      " error up to +-3s: placed"), "%s", out);
	cr_assert_null(strstr(out, "host nodeA: synchronised, but"), "%s", out);
	cr_assert_null(strstr(out, "overlaps no other"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* The summary says each host's bound ("host X is placed within +-N") and
 * puts the same phase of every host side by side; CSV rows carry the
 * host; the same logs decoded alone keep their single-log output. */
Test(merge, summary_csv_and_single_logs, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 20];
	int64_t bm = U_BASE + 1900000000ll;

	write_host(dir, &hosts[0], bm, 21);
	write_host(dir, &hosts[1], bm, 22);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode . 2>&1", dir, cli_bin()), 0,
		     "%s", out);
	cr_assert(strstr(out, "host nodeA is placed within +-"), "%s", out);
	cr_assert(strstr(out, "host nodeB is placed within +-"), "%s", out);
	cr_assert(strstr(out, "PHASES ACROSS HOSTS"), "%s", out);
	const char *a = strstr(out, "\n  step#1           nodeA"), *b = strstr(out, "\n  step#1           nodeB");
	cr_assert(a && b && (b - a) < 200, "the two step#1 rows side by side:\n%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f csv | head -2",
			     dir, cli_bin()), 0);
	cr_assert(!strncmp(out, "host,trigger,start_ns,", 22), "%s", out);
	cr_assert(!strncmp(strchr(out, '\n') + 1, "nodeA,", 6), "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t -f csv | head -1", dir,
			     cli_bin()), 0);
	cr_assert_str_eq(out, "trigger,start_ns,end_ns,bookmark,domain,pmu,event,value,unit,kind,"
			      "occurrence\n");
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t 2>&1", dir,
			     cli_bin()), 0);
	cr_assert_null(strstr(out, "placed"), "a single log says nothing of placement:\n%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* The first start_ns of host's rows in the merged CSV (host,trigger,start_ns,...). */
static int64_t first_start(const char *csv, const char *host)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), "\n%s,", host);
	cr_assert_not_null(p = strstr(csv, want), "no row of %s in:\n%.2000s", host, csv);
	p = strchr(p + strlen(want), ',');
	return strtoll(p + 1, NULL, 10);
}

/* README: merged CSV and JSONL times default to UTC; --time rel counts from
 * the first trigger of any host, --time ref is each host's own clock
 * (nodeA starts at UTC U_BASE on its clock's 5 s, nodeB 0.4 s later on its
 * clock's 90 s). */
Test(merge, times_are_utc_unless_asked_rel_or_ref, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 16];
	const int64_t ms = 1000000, bm = U_BASE + 1900000000ll;
	static const struct {
		const char *opt;
		int64_t a, b; /* nodeA's and nodeB's first interval start */
	} want[] = {
		{ "", U_BASE, U_BASE + 400 * ms },
		{ "--time real", U_BASE, U_BASE + 400 * ms },
		{ "--time rel", 0, 400 * ms },
		{ "--time ref", 5000 * ms, 90000 * ms },
	};

	write_host(dir, &hosts[0], bm, 21);
	write_host(dir, &hosts[1], bm, 22);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f csv %s "
				     "2>/dev/null | grep -m1 ^nodeA, && '%s' decode a.t4t b.t4t -f csv "
				     "%s 2>/dev/null | grep -m1 ^nodeB,", dir, cli_bin(), want[i].opt,
				     cli_bin(), want[i].opt), 0, "-f csv %s: %s", want[i].opt, out);
		memmove(out + 1, out, strlen(out) + 1);
		out[0] = '\n';
		int64_t a = first_start(out, "nodeA"), b = first_start(out, "nodeB");
		cr_expect(llabs(a - want[i].a) < 5 * ms && llabs(b - want[i].b) < 5 * ms,
			  "-f csv %s: nodeA from %" PRId64 ", nodeB from %" PRId64 "; want about %"
			  PRId64 " and %" PRId64, want[i].opt, a, b, want[i].a, want[i].b);
	}
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f jsonl "
			     "2>/dev/null | grep -m1 '\"type\": \"interval\"'", dir, cli_bin()), 0);
	cr_expect(strstr(out, "\"host\": \"nodeA\"") || strstr(out, "\"host\": \"nodeB\""),
		  "JSONL records say their host: %s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* Hosts apart in time: decoded, each on the timeline, with a warning. */
Test(merge, hosts_apart_in_time_are_said, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 16];
	struct mhost late = hosts[1];

	late.start_ns = 3600000000000ull; /* an hour later */
	write_host(dir, &hosts[0], U_BASE + 1900000000ll, 31);
	write_host(dir, &late, U_BASE + 3601900000000ll, 32);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f phases 2>&1",
			     dir, cli_bin()), 0, "%s", out);
	cr_assert(strstr(out, "b.t4t: host nodeB: its recording overlaps no other log's in time"),
		  "%s", out);
	cr_assert_leq(llabs(phase_start(out, "nodeB", "step") - (U_BASE + 3601900000000ll)),
		      200000 + 10000, "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* Logs of different jobs in one directory: merged, said in one line
 * naming a log of each; logs of one job are not. */
Test(merge, logs_of_different_jobs_are_said, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 16];
	struct mhost a = hosts[0], b = hosts[1], c = hosts[0];

	a.job = c.job = "41";
	b.job = "42";
	c.name = "nodeC";
	c.file = "c.t4t";
	write_host(dir, &a, U_BASE + 1900000000ll, 35);
	write_host(dir, &b, U_BASE + 1900000000ll, 36);
	write_host(dir, &c, U_BASE + 1900000000ll, 37);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode ./ -f phases 2>&1 >/dev/null",
			     dir, cli_bin()), 0, "%s", out);
	cr_assert_str_eq(out, "t410trace: warning: ./b.t4t is of job 42, ./a.t4t of job 41: logs of "
			      "different jobs on one timeline (1 of the 3 not of job 41)\n");
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t c.t4t -f phases "
			     "2>&1 >/dev/null", dir, cli_bin()), 0, "%s", out);
	cr_assert_str_eq(out, "");
	/* a log recorded outside any job (a login node's) beside a job's */
	struct mhost d = hosts[1];
	d.file = "d.t4t";
	write_host(dir, &d, U_BASE + 1900000000ll, 38);
	for (int first = 0; first < 2; first++) { /* whichever comes first */
		cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode %s -f phases 2>&1 "
				     ">/dev/null", dir, cli_bin(), first ? "d.t4t a.t4t" :
				     "a.t4t d.t4t"), 0, "%s", out);
		cr_assert_str_eq(out, "t410trace: warning: d.t4t is of no job, a.t4t of job 41: logs "
				      "of different jobs on one timeline (1 of the 2 not of job 41)\n");
	}
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A job's directory holding one log (a job of one node) is decoded as
 * one of several: the host column, UTC times; the log named alone is
 * decoded alone, as always. */
Test(merge, a_directory_of_one_log_is_a_job_of_one_node, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 16];

	write_host(dir, &hosts[0], U_BASE + 1900000000ll, 39);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode ./ -f csv | head -2", dir,
			     cli_bin()), 0, "%s", out);
	cr_assert(!strncmp(out, "host,trigger,start_ns,", 22) && strstr(out, "\nnodeA,1,17000000"),
		  "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t -f csv | head -1", dir,
			     cli_bin()), 0, "%s", out);
	cr_assert(!strncmp(out, "trigger,start_ns,", 17), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* What a node may leave in the job's directory instead of its log is
 * said, each once, and left out: the two logs are merged as before (they
 * went missing without a word). */
Test(merge, what_is_left_out_of_a_directory_is_said, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 16];

	write_host(dir, &hosts[0], U_BASE + 1900000000ll, 44);
	write_host(dir, &hosts[1], U_BASE + 1900000000ll, 45);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && mkdir j && mv a.t4t b.t4t j/ && cd j && "
			     "ln -s gone.t4t c.t4t && mkdir d.t4t && mkfifo e.t4t && "
			     "cp a.t4t f.t4t.partial-123 && mkdir g.t4t.partial-77-aBc123 && "
			     ": > notes.txt && : > h.t4t.partial-x && : > .i.t4t && "
			     "'%s' decode ./ -f phases 2>&1 >/dev/null | sort", dir, cli_bin()), 0,
		     "%s", out);
	cr_assert_str_eq(out,
			 "t410trace: warning: ./c.t4t: left out: No such file or directory\n"
			 "t410trace: warning: ./d.t4t: left out: a directory\n"
			 "t410trace: warning: ./e.t4t: left out: not a regular file\n"
			 "t410trace: warning: ./f.t4t.partial-123: left out: a log its recorder "
			 "could not give its name (record said so): decode it by name\n"
			 "t410trace: warning: ./g.t4t.partial-77-aBc123: left out: a recording not "
			 "started yet, or killed while starting: no log\n");
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s/j' && '%s' decode ./ -f phases 2>/dev/null | "
			     "cut -d, -f1 | sort -u", dir, cli_bin()), 0, "%s", out);
	cr_assert_str_eq(out, "host\nnodeA\nnodeB\n");
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* --phase and a bookmark named by --from/--to leave out, each said in one
 * line, the hosts whose log lacks it; the others are decoded as alone. */
Test(merge, hosts_without_the_named_bookmark_are_left_out_said, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 16];
	struct mhost other = hosts[1];
	static const char *const opts[] = { "--phase step", "--from step", "--to step" };

	other.bookmark = "prep";
	write_host(dir, &hosts[0], U_BASE + 1900000000ll, 46);
	write_host(dir, &other, U_BASE + 1900000000ll, 47);
	for (size_t i = 0; i < T4_ARRAY_LEN(opts); i++) {
		cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f phases "
				     "%s 2>&1 >/dev/null", dir, cli_bin(), opts[i]), 0, "%s: %s",
			     opts[i], out);
		cr_assert_str_eq(out, "t410trace: warning: b.t4t: host nodeB: has no bookmark the "
				      "options name: left out\n", "%s", opts[i]);
		cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f phases "
				     "%s 2>/dev/null | cut -d, -f1 | sort -u", dir, cli_bin(),
				     opts[i]), 0, "%s: %s", opts[i], out);
		cr_assert_str_eq(out, "host\nnodeA\n", "%s", opts[i]);
	}
	/* names no host has together: exit 2, one line */
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f phases "
			     "--from step --to prep 2>&1 >/dev/null", dir, cli_bin()), 2, "%s", out);
	cr_assert(strstr(out, "no log has the bookmark the options name") &&
		  strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* Bad input: one line naming the file, exit status 2, no crash; a
 * truncated log among several is decoded as far as it is intact. */
Test(merge, bad_input_is_named, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 16];
	const char *b = cli_bin();

	write_host(dir, &hosts[0], U_BASE + 1900000000ll, 41);
	write_host(dir, &hosts[1], U_BASE + 1900000000ll, 42);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t a.t4t 2>&1", dir, b), 2);
	cr_assert(strstr(out, "a.t4t and a.t4t are the same recording (host nodeA"), "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && cp b.t4t b2.t4t && '%s' decode a.t4t"
				 " b.t4t b2.t4t 2>&1", dir, b), 2);
	cr_assert(strstr(out, "b.t4t and b2.t4t are the same recording"), "%s", out);
	/* logs without a session ID (format 1.0) are told apart by host and
	 * start alone, and said so (it said "session 0000000000000000") */
	char v10[PATH_MAX], v11[PATH_MAX];
	cr_assert_not_null(cli_repo_file("tests/fixtures/logs/v1.0-virtual-sim.t4t", v10));
	cr_assert_not_null(cli_repo_file("tests/fixtures/logs/v1.1-virtual-sim.t4t", v11));
	cr_assert_eq(cli_run(out, sizeof(out), "'%s' decode '%s' '%s' 2>&1", b, v10, v11), 2);
	cr_assert(strstr(out, "are the same recording (host vm, the same start; no session ID to "
			      "tell them apart): give each host's log once\n"), "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t gone.t4t 2>&1", dir, b),
		     2);
	cr_assert(strstr(out, "gone.t4t: No such file or directory"), "%s", out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && echo text > t.t4t && '%s' decode a.t4t"
				 " t.t4t 2>&1", dir, b), 2);
	cr_assert(strstr(out, "t.t4t: not a t410trace log"), "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && mkdir empty && '%s' decode empty 2>&1",
			     dir, b), 2);
	cr_assert(strstr(out, "empty: a directory without any .t4t log"), "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t - 2>&1 < a.t4t", dir,
			     b), 2);
	cr_assert(strstr(out, "standard input cannot be merged"), "%s", out);
	/* more logs than one merge takes (man page): refused before any is read */
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && mkdir many && for i in $(seq 1025); do"
				 " : > many/$i.t4t; done && '%s' decode many 2>&1", dir, b), 2);
	cr_assert(strstr(out, "more than 1024 logs: merge them in groups"), "%s", out);
	/* truncated: its intact chunks decoded, said, the other host whole */
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && size=$(stat -c %%s b.t4t) && head -c"
				 " $((size - 3000)) b.t4t > bt.t4t && '%s' decode a.t4t bt.t4t -f"
				 " phases 2>&1", dir, b), 0, "%s", out);
	cr_assert(strstr(out, "bt.t4t: host nodeB: the log is damaged or truncated: decoded what is"
			      " intact"), "%s", out);
	/* nodeB keeps what lies before the cut: its step may lie in the lost
	 * last chunk (where the writer cut its chunks is not fixed) */
	cr_assert(strstr(out, "\nnodeA,step,1,") && strstr(out, "\nnodeB,,1,"), "%s", out);
	/* stamps that are no disciplined clock's (3%: damaged or crafted) */
	struct mhost wild = hosts[1];
	wild.file = "w.t4t";
	wild.ppm = 30000;
	write_host(dir, &wild, U_BASE + 1900000000ll, 43);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t w.t4t 2>&1", dir, b), 2);
	cr_assert(strstr(out, "w.t4t: its realtime stamps run 30000 ppm from its reference clock"),
		  "%s", out);
	/* a filter that matches no host */
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t --phase nope"
				 " 2>&1", dir, b), 2);
	cr_assert(strstr(out, "no log has the bookmark"), "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t --pmu nope"
				 " 2>&1", dir, b), 2);
	cr_assert(strstr(out, "--pmu nope: matches no domain"), "%s", out);
	/* each glob must match on some host, and is checked before any output
	 * byte (CSV's header included) */
	for (int j = 1; j <= 4; j += 3) {
		cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f csv -j %d"
					 " --pmu 'pcie,nope' > m.csv 2> /dev/null; echo $?; wc -c < m.csv",
					 dir, b, j), 0);
		cr_assert_str_eq(out, "2\n0\n");
	}
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* Perfetto: one root per host, every timestamp on REALTIME (clock 1);
 * the report: one phase band per host. */
Test(merge, perfetto_and_report_per_host, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge"), schema[PATH_MAX];
	static char out[1 << 16];
	const char *b = cli_bin();

	t4t_need_cmd("protoc");
	cr_assert_not_null(cli_repo_file("decode/perfetto.proto", schema));
	*strrchr(schema, '/') = '\0';
	write_host(dir, &hosts[0], U_BASE + 1900000000ll, 51);
	write_host(dir, &hosts[1], U_BASE + 1900000000ll, 52);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f perfetto -o"
				 " m.pftrace 2>&1 && protoc --decode=perfetto.protos.Trace -I '%s'"
				 " '%s/perfetto.proto' < m.pftrace > m.txt && grep -c 'name:"
				 " \"t410trace node' m.txt && grep timestamp_clock_id m.txt | sort -u",
				 dir, b, schema, schema), 0, "%s", out);
	cr_assert(strstr(out, "\n2\n") || !strncmp(out, "2\n", 2), "two roots: %s", out);
	cr_assert(strstr(out, "timestamp_clock_id: 1\n") && !strstr(out, "clock_id: 5"), "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' report a.t4t b.t4t -o m.html 2>&1 &&"
				 " grep -o '\"hosts\":\\[' m.html && grep -c 'Phases across hosts'"
				 " m.html", dir, b), 0, "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' report a.t4t b.t4t 2>&1", dir, b), 2);
	cr_assert(strstr(out, "several logs: give -o FILE"), "%s", out);
	/* a directory: of several logs, the same; of one, next to it (the man page) */
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && mkdir two one && cp a.t4t b.t4t two &&"
				 " cp a.t4t one && '%s' report two 2>&1", dir, b), 2, "%s", out);
	cr_assert(strstr(out, "several logs: give -o FILE"), "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' report one 2>&1 && ls one", dir, b),
		     0, "%s", out);
	cr_assert(strstr(out, "wrote one/a.html") && strstr(out, "\na.html\n"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* The report's columns start at the merged origin whatever the order of
 * the logs: nodeB starts 0.4 s after nodeA, and with b.t4t given first
 * nodeA's first 0.4 s must still be drawn over its own columns, not piled
 * into the first one. Both orders draw every series the same. */
Test(merge, report_columns_do_not_depend_on_the_order_of_the_logs, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 16];
	const char *b = cli_bin();

	t4t_need_cmd("python3");
	write_host(dir, &hosts[0], U_BASE + 1900000000ll, 61);
	write_host(dir, &hosts[1], U_BASE + 1900000000ll, 62);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' report a.t4t b.t4t -o ab.html 2>&1"
				 " && '%s' report b.t4t a.t4t -o ba.html 2>&1 && python3 -c '"
				 "import json, re\n"
				 "def data(f):\n"
				 "    t = open(f, encoding=\"utf-8\").read()\n"
				 "    d = json.loads(re.search(r\"id=.t4-data.>(.*?)</script>\", t, re.S).group(1))\n"
				 "    ys = {(p[\"kind\"], p[\"metric\"], s[\"label\"]): s[\"y\"]\n"
				 "          for p in d[\"plots\"] for s in p[\"series\"]}\n"
				 "    return d[\"x0\"], d[\"w\"], d[\"n\"], ys\n"
				 "ab, ba = data(\"ab.html\"), data(\"ba.html\")\n"
				 "assert ab[:3] == ba[:3], (ab[:3], ba[:3])\n"
				 "assert ab[3] == ba[3], [k for k in ab[3] if ab[3][k] != ba[3].get(k)]\n"
				 "'", dir, b, b), 0, "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A FIFO given as a log (no writer, or `decode a.t4t <(...)`): refused at
 * once, never waited on (open() of a FIFO blocks until a writer comes). */
Test(merge, a_fifo_among_the_logs_is_refused_at_once, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 16];

	write_host(dir, &hosts[0], U_BASE + 1900000000ll, 61);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && mkfifo f.t4t && timeout 30 '%s' decode"
				 " a.t4t f.t4t 2>&1", dir, cli_bin()), 2, "%s", out);
	cr_assert(strstr(out, "f.t4t: not a regular file"), "%s", out);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && timeout 30 '%s' decode f.t4t 2>&1", dir,
			     cli_bin()), 2, "%s", out);
	cr_assert(strstr(out, "f.t4t: not a regular file"), "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A log cut before its first stamped reference packet: the error says it
 * is damaged or truncated (the reader's warnings are otherwise kept for
 * the decoding pass, which never comes). */
Test(merge, a_log_cut_before_its_stamps_is_said_truncated, .timeout = 120)
{
	char *dir = two_hosts(71);
	static char out[1 << 16];

	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && head -c 300 b.t4t > bt.t4t && '%s'"
				 " decode a.t4t bt.t4t 2>&1", dir, cli_bin()), 2, "%s", out);
	cr_assert(strstr(out, "bt.t4t: damaged or truncated before any reference packet with a"
			      " realtime stamp"), "%s", out);
	cr_assert_eq(count_lines(out), 1, "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* Hosts of one name are numbered, never onto another host's name: two
 * "dup" and one "dup/1" are three labels. */
Test(merge, numbered_hosts_never_take_another_hosts_name, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 16];
	struct mhost h[3] = { hosts[0], hosts[0], hosts[0] };

	h[0].name = h[1].name = "dup";
	h[2].name = "dup/1";
	h[1].file = "b.t4t";
	h[2].file = "c.t4t";
	for (size_t i = 0; i < 3; i++)
		write_host(dir, &h[i], U_BASE + 1900000000ll, 81 + i);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t c.t4t -f phases"
				 " 2>/dev/null | grep ',step,' | cut -d, -f1 | sort -u | wc -l",
				 dir, cli_bin()), 0, "%s", out);
	cr_assert_str_eq(out, "3\n");
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* --bin in a merge: one grid on the merged timeline, so the bins of every
 * host are the same spans of time (rows join across hosts by time).
 * nodeB starts 0.4 s after nodeA, runs 60 ppm fast, at another period:
 * every whole 30 ms bin of nodeB starts on nodeA's grid (it started 10 ms
 * off it: a grid from each host's own first trigger). */
Test(merge, bins_of_every_host_lie_on_one_grid, .timeout = 120)
{
	char *dir = two_hosts(91);
	static char out[1 << 16];

	/* per host: whole bins, and those whose start is off the 30 ms grid */
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t --bin 30ms -f csv"
				 " --time rel 2>&1 | awk -F, 'NR > 1 && $4 - $3 == 30000000 { n[$1]++;"
				 " if ($3 %% 30000000 > 1) off[$1]++ } END { for (h in n) print h, n[h],"
				 " off[h] + 0 }' | sort", dir, cli_bin()), 0, "%s", out);
	long na = 0, offa = -1, nb = 0, offb = -1;
	cr_assert_eq(sscanf(out, "nodeA %ld %ld\nnodeB %ld %ld", &na, &offa, &nb, &offb), 4, "%s",
		     out);
	cr_assert(na > 30 && nb > 30, "whole bins of each host:\n%s", out);
	cr_assert(offa == 0 && offb == 0, "every whole bin on one grid (host, bins, off it):\n%s",
		  out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* A phase's duration is its end less its start as shown, in -f phases and
 * JSONL, merged too: nodeB runs 60 ppm fast, so its own clock's ns (the
 * duration written before) were 60 ppm off its times on the merged
 * timeline (30 us in a 0.5 s phase). */
Test(merge, a_phase_lasts_from_its_start_to_its_end, .timeout = 120)
{
	char *dir = two_hosts(93);
	static char out[1 << 16];

	for (int i = 0; i < 2; i++) { /* (python: real times are past a double's 2^53) */
		const char *base = i ? "--time real" : "--time rel";
		cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f phases "
					 "%s 2>&1 | python3 -c 'import csv, sys\n"
					 "r = list(csv.reader(sys.stdin))[1:]\n"
					 "bad = [x for x in r if int(x[4]) - int(x[3]) != int(x[5])]\n"
					 "assert len(r) >= 4 and not bad, bad'", dir, cli_bin(), base),
			     0, "%s: %s", base, out);
	}
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t -f jsonl 2>&1 | "
				 "python3 -c 'import json, sys\n"
				 "p = [r for r in map(json.loads, sys.stdin) if r[\"type\"] == \"phase\"]\n"
				 "assert len(p) >= 4 and all(r[\"end_ns\"] - r[\"start_ns\"] == "
				 "r[\"duration_ns\"] for r in p), p'", dir, cli_bin()), 0, "%s", out);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* Each host's decoder stays in memory until the tables across hosts
 * (merge.c): only what their queries read, not its sample rings and
 * clock queues, which held several MB a host of a simulated Tegra410 (34
 * domains) and grew with the log: 1024 logs took gigabytes. The heap
 * those decoders hold at the merged callback, per host. */
static int heap_at_merged(void *ud, const struct t4_merge *m)
{
	(void)m;
	*(size_t *)ud = mallinfo2().uordblks;
	return 0;
}

/* Standard error to /dev/null (on) and back (off). */
static void quiet_stderr(bool on)
{
	static int saved = -1;

	fflush(stderr);
	if (on && saved < 0) {
		int null = open("/dev/null", O_WRONLY);
		saved = dup(2);
		cr_assert(saved >= 0 && null >= 0 && dup2(null, 2) == 2);
		close(null);
	} else if (!on && saved >= 0) {
		dup2(saved, 2);
		close(saved);
		saved = -1;
	}
}

Test(merge, a_decoded_host_keeps_only_what_the_tables_read, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge"), path[4][PATH_MAX + 16];
	const char *paths[4];
	static char out[1 << 16];
	struct t4_merge *m = NULL;
	struct t4_decode_opts o = { .jobs = 1 };
	size_t before, at_merged = 0;

	for (int i = 0; i < 4; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/h%d.t4t", dir, i);
		paths[i] = path[i];
		cr_assert_eq(cli_run(out, sizeof(out), "'%s' record --sim=%d --virtual -d 2s -q -o '%s'"
					 " 2>&1", cli_bin(), i + 1, path[i]), 0, "%s", out);
	}
	/* virtual time has no clock sync state: its warning, one per host,
	 * is expected here, not for the CI log */
	quiet_stderr(true);
	cr_assert_eq(t4_merge_open(&m, paths, 4), 0, "%s", t4_errmsg());
	before = mallinfo2().uordblks;
	if (!before) { /* a sanitizer's allocator: not glibc's to count */
		quiet_stderr(false);
		cr_skip_test("mallinfo2 counts nothing under this allocator");
	}
	struct t4_sink_ops ops = { .merged = heap_at_merged };
	int rc = t4_merge_decode(m, &o, &ops, &at_merged);
	quiet_stderr(false);
	cr_assert_eq(rc, 0, "%s", t4_errmsg());
	cr_log_info("%zu bytes a host", (at_merged - before) / 4);
	cr_assert_lt((at_merged - before) / 4, 3u << 20, "%zu bytes a host kept",
		     (at_merged - before) / 4);
	t4_merge_free(m);
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}

/* Words first .. first + n - 1 (from 0) of the line of out that starts
 * with anchor each have exactly 3 decimals. */
static void assert_ms(const char *out, const char *anchor, int first, int n)
{
	const char *p = strstr(out, anchor);
	char line[256], *save = NULL, *w;
	int k = 0;

	cr_assert_not_null(p, "no %s in:\n%s", anchor, out);
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
	for (w = strtok_r(line, " ", &save); w && k < first + n; w = strtok_r(NULL, " ", &save), k++)
		if (k >= first) {
			const char *dot = strchr(w, '.');
			cr_assert(dot && strlen(dot + 1) == 3 && strspn(dot + 1, "0123456789") == 3,
				  "word %d of '%.*s' is %s, not seconds to 3 decimals", k,
				  (int)strcspn(p + 1, "\n"), p + 1, w);
		}
	cr_assert_eq(k, first + n, "'%.*s' is too short", (int)strcspn(p + 1, "\n"), p + 1);
}

/* The START of a host an hour into the merged timeline, and its phase's,
 * in the summary's tables: the same 3 decimals as the first host's (the
 * column's format came from its largest value: 3601, and 0.400 beside
 * it printed as 0). */
Test(merge, times_keep_their_decimals_on_hosts_far_apart, .timeout = 120)
{
	char *dir = cli_tmpdir("t4merge");
	static char out[1 << 18];
	struct mhost late = hosts[1];

	late.start_ns = 3600000000000ull; /* an hour later */
	write_host(dir, &hosts[0], U_BASE + 1900000000ll, 41);
	write_host(dir, &late, U_BASE + 3601900000000ll, 42);
	cr_assert_eq(cli_run(out, sizeof(out), "cd '%s' && '%s' decode a.t4t b.t4t 2>/dev/null",
			     dir, cli_bin()), 0, "%s", out);
	assert_ms(out, "\n  nodeA synchronised ", 2, 2); /* the hosts: START, END */
	assert_ms(out, "\n  step#1           nodeA ", 2, 3); /* across hosts */
	assert_ms(out, "\n  step#1           nodeB ", 2, 3);
	assert_ms(out, "\n  step#1           36", 1, 3); /* nodeB's own phases */
	cli_run(out, sizeof(out), "rm -rf '%s'", dir);
	free(dir);
}
