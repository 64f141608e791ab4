/* test_log.c - the log writer (rings, writer thread, io_uring and pwrite
 * backends) checked end to end through the reader: every packet written
 * is generated from its index, so what comes back is compared field by
 * field with what went in, and drop counts are compared exactly between
 * put's return values, the ring, the writer's stats and the log's own
 * status packet. No assertion depends on timing: the chunk_ms test only
 * waits (up to seconds) for something that cannot happen without it.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "packets/packets.h"
#include "packets_testutil.h"
#include "probe.h"
#include "tmpdir_testutil.h"
#include "util/util.h"

/* Criterion runs each test in its own process: one temp dir each. */
static char tmpdir[PATH_MAX];

static void setup(void)
{
	t4t_tmpdir(tmpdir, sizeof(tmpdir), "t4log");
}

static void teardown(void)
{
	char mnt[PATH_MAX + 8];

	snprintf(mnt, sizeof(mnt), "%s/mnt", tmpdir);
	umount2(mnt, MNT_DETACH);
	t4_rmtree(tmpdir);
}

TestSuite(log, .init = setup, .fini = teardown, .timeout = 120);

static const char *tpath(const char *name)
{
	static char buf[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "%s/%s", tmpdir, name);
	return buf;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- packets generated from an index ---------------------------------- */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

enum { VAL_REALISTIC, VAL_RANDOM };

static void gen_ret(uint64_t i, uint32_t dom, uint32_t n, int vals, struct t4_packet *p)
{
	uint64_t h = mix(i * 131 + dom);

	p->type = T4_PKT_RET;
	p->copy = false;
	p->ret.trigger_id = i;
	p->ret.domain_id = dom;
	p->ret.flags = (h & 15) == 0 ? T4_RET_MULTIPLEXED : 0;
	p->ret.local_clock = i * 1000003 + (h & 255);
	p->ret.read_begin_ns = 1000000000ull + i * 1000000 + (h >> 60);
	p->ret.read_end_ns = p->ret.read_begin_ns + 1500 + ((h >> 8) & 1023);
	p->ret.enabled_delta = p->ret.flags ? 1000000 : 0;
	p->ret.running_delta = p->ret.flags ? 500000 + (h & 4095) : 0;
	p->ret.n_counts = n;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t r = mix(h + k);

		if (vals == VAL_RANDOM)
			p->ret.counts[k] = r;
		else if (k % 4 == 0)
			p->ret.counts[k] = 0;
		else if (k % 4 == 1)
			p->ret.counts[k] = 1000000;
		else
			p->ret.counts[k] = 1000000 + (r & 65535);
	}
}

static void gen_ref(uint64_t i, struct t4_packet *p)
{
	uint64_t h = mix(i ^ 0xabcdef);

	p->type = T4_PKT_REF;
	p->copy = false;
	p->ref.trigger_id = i;
	p->ref.sched_id = 0;
	p->ref.bookmark_id = (uint32_t)(i / 1000);
	p->ref.ref_ns = 1000000000ull + i * 1000000 + (h & 4095);
	p->ref.mono_ns = p->ref.ref_ns + 77;
	p->ref.real_ns = 1700000000000000000ull + p->ref.ref_ns;
	p->ref.local_clock = i * 2100000;
	p->ref.flags = T4_REF_PERIODIC;
	p->ref.overruns = (h >> 20) & 1;
}

/* Metadata packet number i (session, then domains, events, bookmarks). */
static void gen_meta(int i, struct t4_packet *p)
{
	memset(p, 0, sizeof(*p));
	if (i == 0) {
		p->type = T4_PKT_SESSION;
		snprintf(p->session.host, sizeof(p->session.host), "host-%d", i);
		snprintf(p->session.kernel, sizeof(p->session.kernel), "6.18.0-test");
		snprintf(p->session.version, sizeof(p->session.version), T4_VERSION);
		snprintf(p->session.cmdline, sizeof(p->session.cmdline),
			 "t410trace record -e 'nvidia_ucf_pmu_0/cycles/' -o x.t4");
		p->session.start_ref_ns = 12345;
		p->session.start_real_ns = 1700000000000000000ull;
		p->session.period_ns = 1000000;
		p->session.flags = T4_SESSION_SIMULATED;
	} else if (i < 4) {
		p->type = T4_PKT_DOMAIN;
		p->domain.domain_id = (uint32_t)i;
		p->domain.kind = T4_DOM_UCF;
		p->domain.cpu = i - 2;
		p->domain.clock_event = i == 1 ? -1 : 0;
		p->domain.nominal_hz = 1000000000ull * (uint64_t)i;
		snprintf(p->domain.name, sizeof(p->domain.name), "nvidia_ucf_pmu_%d", i);
	} else if (i < 9) {
		p->type = T4_PKT_EVENT;
		p->event.domain_id = (uint32_t)(i % 3 + 1);
		p->event.index = (uint32_t)i;
		p->event.perf_type = 42;
		p->event.config = (uint64_t)i << 40 | 7;
		p->event.config1 = 1;
		p->event.config2 = UINT64_MAX;
		p->event.scale = 0.25 * i;
		snprintf(p->event.pmu, sizeof(p->event.pmu), "nvidia_ucf_pmu_0");
		snprintf(p->event.name, sizeof(p->event.name), "ev%d", i);
		snprintf(p->event.spec, sizeof(p->event.spec), "nvidia_ucf_pmu_0/event=0x%x/", i);
		snprintf(p->event.unit, sizeof(p->event.unit), "bytes");
	} else {
		p->type = T4_PKT_BOOKMARK;
		p->bookmark.bookmark_id = (uint32_t)i;
		p->bookmark.first_trigger = 99;
		snprintf(p->bookmark.name, sizeof(p->bookmark.name), "mark %d", i);
	}
}
#define N_META 10


/* ---- helpers ------------------------------------------------------------ */

static struct t4_log *open_log(const char *name, const struct t4_log_opts *base)
{
	struct t4_log_opts o = base ? *base : (struct t4_log_opts){ 0 };
	struct t4_log *log;

	o.path = tpath(name);
	cr_assert_eq(t4_log_open(&log, &o), 0, "%s", t4_errmsg());
	return log;
}

static struct t4_ring *add_ring(struct t4_log *log, size_t bytes, int flags)
{
	struct t4_ring *r;

	cr_assert_eq(t4_log_ring(log, bytes, flags, &r), 0, "%s", t4_errmsg());
	return r;
}

static void put_ok(struct t4_ring *r, const struct t4_packet *p)
{
	int err = t4_ring_put(r, p);

	cr_assert_eq(err, 0, "put: %d %s", err, t4_errmsg());
}

static unsigned quiet_warnings;

static void quiet(void *ud, uint64_t off, const char *msg)
{
	(void)ud, (void)off, (void)msg;
	quiet_warnings++;
}

static struct t4_reader *open_reader(const char *name)
{
	struct t4_reader *r;

	cr_assert_eq(t4_reader_open(&r, tpath(name), quiet, NULL), 0, "%s", t4_errmsg());
	return r;
}

/* The next packet that is not a copy of metadata (FORMAT.md 4.8: the
 * writer repeats metadata at chunk starts; see log/copies_*). */
static int next_original(struct t4_reader *r, struct t4_packet *p)
{
	int ret;

	while ((ret = t4_reader_next(r, p)) == 1 && p->copy)
		;
	return ret;
}

static void next_ok(struct t4_reader *r, struct t4_packet *p, uint64_t i)
{
	int ret = next_original(r, p);

	cr_assert_eq(ret, 1, "packet %llu: reader returned %d (%s)",
		     (unsigned long long)i, ret, t4_errmsg());
}

/* The reader agrees with the writer's stats; the file is all chunks. */
static void check_clean(struct t4_reader *r, const struct t4_log_stats *st)
{
	struct t4_reader_stats rs;

	cr_assert_eq(t4_reader_next(r, &(struct t4_packet){ 0 }), 0, "trailing packets");
	t4_reader_stats(r, &rs);
	cr_assert_eq(rs.damaged_chunks, 0);
	cr_assert_eq(rs.truncated, 0);
	cr_assert_eq(rs.skipped_bytes, 0);
	cr_assert_eq(rs.chunks, st->chunks);
	cr_assert_eq(rs.packets, st->packets);
	cr_assert_eq(rs.raw_bytes, st->raw_bytes);
	cr_assert_eq(rs.file_bytes, st->file_bytes);
}

static void expect_status(struct t4_reader *r, uint64_t dropped, uint64_t triggers)
{
	struct t4_packet p;

	next_ok(r, &p, 0);
	cr_assert_eq(p.type, T4_PKT_STATUS);
	cr_assert_eq(p.status.dropped, dropped);
	cr_assert_eq(p.status.triggers, triggers);
}

/* ---- one million return packets ------------------------------------------ */

static void write_million(const char *name, enum t4_log_backend be)
{
	struct t4_log_opts o = { .backend = be };
	struct t4_log *log = open_log(name, &o);
	struct t4_ring *ring = add_ring(log, 1 << 20, T4_RING_WAIT);
	struct t4_status_pkt fin = { .triggers = 1000000, .overruns = 3, .ref_ns = 7 };
	struct t4_log_stats st;
	struct t4_reader *r;
	struct t4_packet p, q;

	cr_assert_eq(t4_log_start(log), 0);
	for (uint64_t i = 0; i < 1000000; i++) {
		gen_ret(i, 1, 32, VAL_REALISTIC, &p);
		put_ok(ring, &p);
	}
	cr_assert_eq(t4_log_close(log, &fin, &st), 0, "%s", t4_errmsg());
	cr_assert_eq(st.packets, 1000001);
	cr_assert_eq(st.dropped, 0);
	cr_assert_eq(st.error, 0);
	cr_assert_gt(st.chunks, 10);

	r = open_reader(name);
	for (uint64_t i = 0; i < 1000000; i++) {
		next_ok(r, &q, i);
		gen_ret(i, 1, 32, VAL_REALISTIC, &p);
		if (!tu_pkt_eq(&p, &q))
			cr_assert_fail("packet %llu differs", (unsigned long long)i);
	}
	next_ok(r, &q, 1000000);
	fin.dropped = 0;
	cr_assert_eq(q.type, T4_PKT_STATUS);
	cr_assert(!memcmp(&q.status, &fin, sizeof(fin)));
	check_clean(r, &st);
	t4_reader_close(r);
}

/* A status packet's ref_ns is on the log's reference clock, the one its
 * session packet names (FORMAT.md 4.1): a BPF-path log's on CLOCK_MONOTONIC,
 * not MONOTONIC_RAW (which differ by the NTP slew since boot). */
static void status_on_session_clock(const char *name, uint32_t ref_clock)
{
	struct t4_log *log = open_log(name, NULL);
	struct t4_ring *ring = add_ring(log, 1 << 16, T4_RING_WAIT);
	struct t4_log_stats st;
	struct t4_reader *r;
	struct t4_packet p;
	uint64_t lo, hi;

	gen_meta(0, &p);
	p.session.ref_clock = ref_clock;
	cr_assert_eq(t4_log_start(log), 0);
	put_ok(ring, &p);
	lo = t4_ref_clock_now(ref_clock);
	cr_assert_eq(t4_log_close(log, &(struct t4_status_pkt){ .triggers = 1 }, &st), 0, "%s",
		     t4_errmsg());
	hi = t4_ref_clock_now(ref_clock);
	r = open_reader(name);
	next_ok(r, &p, 0);
	next_ok(r, &p, 1);
	cr_assert_eq(p.type, T4_PKT_STATUS);
	cr_assert(p.status.ref_ns >= lo && p.status.ref_ns <= hi,
		  "%s: status at %llu, not within [%llu, %llu] of its %s", name,
		  (unsigned long long)p.status.ref_ns, (unsigned long long)lo,
		  (unsigned long long)hi, t4_ref_clock_name(ref_clock));
	t4_reader_close(r);
}

Test(log, status_packets_on_the_sessions_clock)
{
	status_on_session_clock("mono.t4", T4_REFCLK_MONOTONIC);
	status_on_session_clock("raw.t4", T4_REFCLK_MONOTONIC_RAW);
}

Test(log, million_ret_uring)
{
	t4t_need_uring();
	write_million("million.t4", T4_LOG_URING);
}

/* ---- several rings, mixed types ----------------------------------------- */

struct producer {
	struct t4_ring *ring;
	int kind; /* 0 = ref, 1 = ret of domain 1, 2 = ret of domain 2 */
	uint64_t from, n;
};

static void gen_kind(int kind, uint64_t i, struct t4_packet *p)
{
	if (kind == 0)
		gen_ref(i, p);
	else
		gen_ret(i, (uint32_t)kind, (uint32_t)(i % (T4_MAX_COUNTERS + 1)),
			VAL_REALISTIC, p);
}

static void *produce(void *arg)
{
	struct producer *pr = arg;
	struct t4_packet p;

	for (uint64_t i = pr->from; i < pr->from + pr->n; i++) {
		gen_kind(pr->kind, i, &p);
		if (t4_ring_put(pr->ring, &p))
			return (void *)1;
	}
	return NULL;
}

Test(log, mixed_rings_keep_order)
{
	struct t4_log_opts o = { .chunk_bytes = 16 << 10 };
	struct t4_log *log = open_log("mixed.t4", &o);
	struct t4_ring *meta = add_ring(log, 0, T4_RING_WAIT);
	struct producer pr[3];
	pthread_t th[3];
	uint64_t next[3] = { 0 }, N = 20000;
	struct t4_log_stats st;
	struct t4_reader *r;
	struct t4_packet p, q;

	for (int k = 0; k < 3; k++)
		pr[k] = (struct producer){ add_ring(log, 0, T4_RING_WAIT), k, 0, N };
	for (int i = 0; i < N_META; i++) { /* queued before the writer runs */
		gen_meta(i, &p);
		put_ok(meta, &p);
	}
	pr[0].n = 10;
	cr_assert_null(produce(&pr[0]));
	pr[0].from = 10;
	pr[0].n = N - 10;
	cr_assert_eq(t4_log_start(log), 0);
	for (int k = 0; k < 3; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, produce, &pr[k]), 0);
	for (int k = 0; k < 3; k++) {
		void *ret;

		pthread_join(th[k], &ret);
		cr_assert_null(ret);
	}
	cr_assert_eq(t4_log_close(log, NULL, &st), 0, "%s", t4_errmsg());
	cr_assert_eq(st.packets, N_META + 3 * N + 1);

	/* the first ring is drained first: metadata, then the early refs */
	r = open_reader("mixed.t4");
	for (int i = 0; i < N_META; i++) {
		next_ok(r, &q, (uint64_t)i);
		gen_meta(i, &p);
		cr_assert(tu_pkt_eq(&p, &q), "metadata packet %d differs", i);
	}
	for (uint64_t n = 0; n < 3 * N; n++) {
		int k;

		next_ok(r, &q, n);
		cr_assert(q.type == T4_PKT_REF || q.type == T4_PKT_RET, "type %u", q.type);
		k = q.type == T4_PKT_REF ? 0 : (int)q.ret.domain_id;
		cr_assert(k >= 0 && k <= 2);
		cr_assert(n >= 10 || k == 0, "early refs not first");
		gen_kind(k, next[k]++, &p);
		if (!tu_pkt_eq(&p, &q))
			cr_assert_fail("ring %d packet %llu differs", k,
				       (unsigned long long)(next[k] - 1));
	}
	expect_status(r, 0, 0);
	check_clean(r, &st);
	t4_reader_close(r);
}

/* ---- back-pressure: exact drops ----------------------------------------- */

/* Read back a log of ret packets with ids increasing (a subsequence of
 * 0..), return how many; *last_drop: dropped in the last status packet. */
static uint64_t read_subsequence(const char *name, uint64_t *last_drop, uint64_t *statuses)
{
	struct t4_reader *r = open_reader(name);
	struct t4_packet p, q;
	uint64_t n = 0, next_id = 0;
	int ret;

	*last_drop = UINT64_MAX;
	*statuses = 0;
	while ((ret = t4_reader_next(r, &q)) == 1) {
		if (q.type == T4_PKT_STATUS) {
			cr_assert_geq(q.status.dropped, *last_drop == UINT64_MAX ? 0 : *last_drop);
			*last_drop = q.status.dropped;
			(*statuses)++;
			continue;
		}
		cr_assert_eq(q.type, T4_PKT_RET);
		cr_assert_geq(q.ret.trigger_id, next_id);
		gen_ret(q.ret.trigger_id, 1, 32, VAL_REALISTIC, &p);
		cr_assert(tu_pkt_eq(&p, &q), "packet %llu differs",
			  (unsigned long long)q.ret.trigger_id);
		next_id = q.ret.trigger_id + 1;
		n++;
	}
	cr_assert_eq(ret, 0, "%s", t4_errmsg());
	t4_reader_close(r);
	return n;
}

Test(log, backpressure_drops_exact)
{
	struct t4_log *log = open_log("bp.t4", NULL);
	struct t4_ring *ring = add_ring(log, 1, T4_RING_NONBLOCK);
	uint64_t accepted = 0, enobufs = 0, last_drop, statuses;
	struct t4_log_stats st;
	struct t4_packet p;

	/* the writer is not running: the ring fills, then every put drops */
	for (uint64_t i = 0; i < 1000; i++) {
		int err;

		gen_ret(i, 1, 32, VAL_REALISTIC, &p);
		err = t4_ring_put(ring, &p);
		cr_assert(err == 0 || err == -ENOBUFS, "put: %d", err);
		if (err)
			enobufs++;
		else
			cr_assert_eq(enobufs, 0, "put accepted after a drop");
		accepted += !err;
	}
	cr_assert_gt(accepted, 0);
	cr_assert_gt(enobufs, 0);
	cr_assert_eq(t4_ring_dropped(ring), enobufs);
	/* the producers' own drops (a simulated recording's) add up with the
	 * log's in the final status */
	cr_assert_eq(t4_log_close(log, &(struct t4_status_pkt){ .dropped = 5 }, &st), 0,
		     "%s", t4_errmsg());
	cr_assert_eq(st.dropped, enobufs + 5);
	cr_assert_eq(read_subsequence("bp.t4", &last_drop, &statuses), accepted);
	cr_assert_eq(last_drop, enobufs + 5);
	cr_assert_eq(st.packets, accepted + statuses);
}

struct flood {
	struct t4_ring *ring;
	uint64_t n, accepted, enobufs;
	int last_err;
	bool until_closed;
};

static void *flood(void *arg)
{
	struct flood *f = arg;
	struct t4_packet p;

	for (uint64_t i = 0; f->until_closed || i < f->n; i++) {
		gen_ret(i, 1, 32, VAL_REALISTIC, &p);
		f->last_err = t4_ring_put(f->ring, &p);
		if (f->last_err == -ENOBUFS)
			f->enobufs++;
		else if (f->last_err == 0)
			f->accepted++;
		else
			break; /* -EPIPE: the log is closing; never touch it again */
	}
	return NULL;
}

Test(log, backpressure_writer_running)
{
	struct t4_log_opts o = { .inflight = 1, .fsync_ms = 1, .chunk_bytes = 1 << 20 };
	struct t4_log *log = open_log("bp2.t4", &o);
	struct flood f = { .ring = add_ring(log, 1, T4_RING_NONBLOCK), .n = 200000 };
	uint64_t last_drop, statuses;
	struct t4_log_stats st;
	pthread_t th;

	cr_assert_eq(t4_log_start(log), 0);
	cr_assert_eq(pthread_create(&th, NULL, flood, &f), 0);
	pthread_join(th, NULL);
	cr_assert_eq(f.accepted + f.enobufs, f.n);
	cr_assert_eq(t4_ring_dropped(f.ring), f.enobufs);
	cr_assert_eq(t4_log_close(log, NULL, &st), 0, "%s", t4_errmsg());
	cr_assert_eq(st.dropped, f.enobufs);
	cr_assert_eq(read_subsequence("bp2.t4", &last_drop, &statuses), f.accepted);
	cr_assert_eq(last_drop, f.enobufs);
	cr_assert_eq(st.packets, f.accepted + statuses);
	cr_log_info("flood: %llu accepted, %llu dropped, %llu status packets",
		    (unsigned long long)f.accepted, (unsigned long long)f.enobufs,
		    (unsigned long long)statuses);
	/* (Criterion 2.4 ends a run whose tests all passed with exit 1 after
	 * any cr_log_warn: a writer that kept up, which a loaded machine's
	 * scheduling decides, is worth a line, not a failed `make check`.) */
	if (!f.enobufs)
		cr_log_info("the writer kept up with the flood: no drops exercised this time");
}

Test(log, put_during_close_fails)
{
	struct t4_log *log = open_log("close.t4", NULL);
	struct flood f = { .ring = add_ring(log, 1 << 16, T4_RING_NONBLOCK),
			   .until_closed = true };
	uint64_t last_drop, statuses;
	struct t4_log_stats st;
	pthread_t th;

	cr_assert_eq(t4_log_start(log), 0);
	cr_assert_eq(pthread_create(&th, NULL, flood, &f), 0);
	sleep_ms(30);
	cr_assert_eq(t4_log_close(log, NULL, &st), 0, "%s", t4_errmsg());
	pthread_join(th, NULL);
	cr_assert_eq(f.last_err, -EPIPE);
	cr_assert_eq(st.dropped, f.enobufs);
	cr_assert_eq(read_subsequence("close.t4", &last_drop, &statuses), f.accepted);
	cr_assert_eq(last_drop, f.enobufs);
}

/* ---- chunk_ms: a trickle still reaches the disk ------------------------- */

struct trickle {
	struct t4_ring *ring;
	atomic_bool stop;
	uint64_t n;
};

static void *trickle(void *arg)
{
	struct trickle *t = arg;
	struct t4_packet p;

	while (!atomic_load(&t->stop)) {
		gen_ret(t->n, 1, 32, VAL_REALISTIC, &p);
		if (t4_ring_put(t->ring, &p) == 0)
			t->n++;
		sleep_ms(5);
	}
	return NULL;
}

/* Complete chunks in the file now (0 while the file is empty). */
static uint64_t chunks_on_disk(const char *name)
{
	struct t4_reader_stats rs = { 0 };
	struct t4_packet p;
	struct t4_reader *r;

	if (t4_reader_open(&r, tpath(name), quiet, NULL))
		return 0;
	while (t4_reader_next(r, &p) == 1)
		;
	t4_reader_stats(r, &rs);
	t4_reader_close(r);
	return rs.chunks;
}

Test(log, chunk_closed_by_time)
{
	struct t4_log_opts o = { .chunk_bytes = 8 << 20, .chunk_ms = 100 };
	struct t4_log *log = open_log("trickle.t4", &o);
	struct trickle t = { .ring = add_ring(log, 0, T4_RING_WAIT) };
	uint64_t chunks = 0, last_drop, statuses;
	struct t4_log_stats st;
	pthread_t th;

	cr_assert_eq(t4_log_start(log), 0);
	cr_assert_eq(pthread_create(&th, NULL, trickle, &t), 0);
	/* 8 MiB chunks never fill here: only chunk_ms can close one. 300 ms
	 * should do; allow far more on a loaded machine. */
	sleep_ms(300);
	for (int i = 0; i < 100 && chunks < 2; i++, sleep_ms(50))
		chunks = chunks_on_disk("trickle.t4");
	atomic_store(&t.stop, true);
	pthread_join(th, NULL);
	cr_assert_geq(chunks, 2, "no chunk closed by time while recording");
	cr_assert_eq(t4_log_close(log, NULL, &st), 0, "%s", t4_errmsg());
	cr_assert_eq(read_subsequence("trickle.t4", &last_drop, &statuses), t.n);
	cr_assert_eq(statuses, 1);
	cr_assert_geq(st.chunks, chunks);
}

/* A trigger handed over late (the BPF path drains its triggers up to 50 ms
 * after they fired) ages its chunk from when it fired, not from when the
 * writer saw it: with chunk_ms 5 s, a trigger that fired 6 s ago is on disk
 * at once. (Aged from the writer's polls, as before, the chunk could not
 * close before 5 s; the 4 s allowed are for a loaded machine.) */
Test(log, chunk_aged_from_its_oldest_trigger)
{
	struct t4_log_opts o = { .chunk_bytes = 8 << 20, .chunk_ms = 5000 };
	struct t4_log *log = open_log("late.t4", &o);
	struct t4_ring *ring = add_ring(log, 0, T4_RING_WAIT);
	struct timespec t0, t;
	uint64_t chunks = 0;
	struct t4_packet p;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(t4_log_start(log), 0);
	gen_ref(0, &p);
	p.ref.mono_ns = t4_clock_ns(CLOCK_MONOTONIC) - 6000000000ull;
	put_ok(ring, &p);
	do {
		sleep_ms(10);
		chunks = chunks_on_disk("late.t4");
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!chunks && (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 4000);
	cr_assert_eq(chunks, 1, "the late trigger's chunk waited for chunk_ms");
	cr_assert_eq(t4_log_close(log, NULL, NULL), 0, "%s", t4_errmsg());
}

/* ---- ENOSPC --------------------------------------------------------------- */

/* Fill the tmpfs at tmpdir/mnt through backend be; check what is left. */
static void enospc_run(const char *name, enum t4_log_backend be)
{
	struct t4_log_opts o = { .chunk_bytes = 16 << 10, .backend = be };
	struct t4_log *log = open_log(name, &o);
	struct t4_ring *ring = add_ring(log, 1 << 16, T4_RING_WAIT);
	struct t4_log_stats st;
	struct t4_reader *r;
	struct t4_packet p, q;
	struct stat sb;
	uint64_t n = 20000;

	cr_assert_eq(t4_log_start(log), 0);
	for (uint64_t i = 0; i < n; i++) { /* random counters: incompressible */
		gen_ret(i, 1, 32, VAL_RANDOM, &p);
		put_ok(ring, &p);
	}
	cr_assert_eq(t4_log_close(log, NULL, &st), -ENOSPC);
	cr_assert_eq(st.error, -ENOSPC);
	cr_assert_not_null(strstr(t4_errmsg(), tpath(name)), "%s", t4_errmsg());
	cr_assert_not_null(strstr(t4_errmsg(), ": No space left on device after "),
			   "%s", t4_errmsg());
	cr_assert_not_null(strstr(t4_errmsg(),
				  " bytes: log stopped, everything before is intact"),
			   "%s", t4_errmsg());
	cr_log_info("ENOSPC: %s (%llu chunks, %llu packets)", t4_errmsg(),
		    (unsigned long long)st.chunks, (unsigned long long)st.packets);
	cr_assert_gt(st.chunks, 0);
	cr_assert_eq(st.packets + st.dropped, n + 1); /* + the final status */
	cr_assert_eq(stat(tpath(name), &sb), 0);
	cr_assert_eq((uint64_t)sb.st_size, st.file_bytes);

	/* every chunk written completely comes back, and nothing else */
	r = open_reader(name);
	for (uint64_t i = 0; i < st.packets; i++) {
		next_ok(r, &q, i);
		gen_ret(i, 1, 32, VAL_RANDOM, &p);
		cr_assert(tu_pkt_eq(&p, &q), "packet %llu differs", (unsigned long long)i);
	}
	check_clean(r, &st);
	t4_reader_close(r);
	cr_assert_eq(unlink(tpath(name)), 0);
}

Test(log, enospc_keeps_complete_chunks)
{
	char mnt[PATH_MAX + 8];

	snprintf(mnt, sizeof(mnt), "%s/mnt", tmpdir);
	cr_assert_eq(mkdir(mnt, 0755), 0);
	if (mount("t4test", mnt, "tmpfs", 0, "size=256k"))
		cr_skip_test("cannot mount a tmpfs: %s", strerror(errno));
	enospc_run("mnt/uring.t4", T4_LOG_URING);
	enospc_run("mnt/pwrite.t4", T4_LOG_PWRITE);
}

/* ---- the pwrite backend writes the same log --------------------------------- */

/* The same packets every time, in chunks closed on size alone: the same
 * options write the same bytes. */
static void write_mixed_as(const char *name, enum t4_log_backend be, unsigned format,
			   int zstd_level)
{
	struct t4_log_opts o = { .backend = be, .chunk_bytes = 32 << 10,
				 .chunk_ms = UINT32_MAX, .format = format,
				 .zstd_level = zstd_level };
	struct t4_log *log = open_log(name, &o);
	struct t4_ring *ring = add_ring(log, 0, T4_RING_WAIT);
	struct t4_status_pkt fin = { .triggers = 5, .ref_ns = 1 };
	struct t4_log_stats st;
	struct t4_packet p;

	cr_assert_eq(t4_log_start(log), 0);
	for (int i = 0; i < N_META; i++) {
		gen_meta(i, &p);
		put_ok(ring, &p);
	}
	for (uint64_t i = 0; i < 100000; i++) {
		gen_kind((int)(i % 3), i, &p);
		put_ok(ring, &p);
	}
	cr_assert_eq(t4_log_close(log, &fin, &st), 0, "%s", t4_errmsg());
	cr_assert_eq(st.packets, N_META + 100000 + 1);
}

static void write_mixed(const char *name, enum t4_log_backend be)
{
	write_mixed_as(name, be, 0, 0);
}

static void *slurp(const char *name, size_t *len)
{
	FILE *f = fopen(tpath(name), "rb");
	void *buf;
	long n;

	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

Test(log, pwrite_backend_identical)
{
	struct t4_reader *a, *b;
	struct t4_packet p, q;
	size_t la, lb;
	void *fa, *fb;
	uint64_t n = 0;
	int ra, rb;

	t4t_need_uring(); /* else both are pwrite logs */
	write_mixed("uring.t4", T4_LOG_URING);
	write_mixed("pwrite.t4", T4_LOG_PWRITE);
	a = open_reader("uring.t4");
	b = open_reader("pwrite.t4");
	do {
		ra = next_original(a, &p);
		rb = next_original(b, &q);
		cr_assert_eq(ra, rb, "packet %llu", (unsigned long long)n);
		cr_assert(ra <= 0 || tu_pkt_eq(&p, &q), "packet %llu differs",
			  (unsigned long long)n);
		n++;
	} while (ra == 1);
	cr_assert_eq(ra, 0);
	cr_assert_eq(n, N_META + 100000 + 2);
	t4_reader_close(a);
	t4_reader_close(b);
	/* chunks close on size alone here, so even the bytes agree */
	fa = slurp("uring.t4", &la);
	fb = slurp("pwrite.t4", &lb);
	cr_assert_eq(la, lb);
	cr_assert(!memcmp(fa, fb, la));
	free(fa);
	free(fb);
}

static bool same_bytes(const char *x, const char *y)
{
	size_t lx, ly;
	void *fx = slurp(x, &lx), *fy = slurp(y, &ly);
	bool same = lx == ly && !memcmp(fx, fy, lx);

	free(fx);
	free(fy);
	return same;
}

/* The default zstd level is the format's (t4_log_zstd_default: -3 for the
 * bit-packed formats, 1 for format 1, docs/t410trace.1), and a fast level
 * reads back as any other. */
Test(log, default_zstd_level_follows_the_format)
{
	cr_assert_eq(t4_log_zstd_default(T4_FORMAT_VERSION), -3);
	cr_assert_eq(t4_log_zstd_default(2), -3);
	cr_assert_eq(t4_log_zstd_default(1), 1);
	write_mixed_as("f3-default.t4", T4_LOG_PWRITE, 0, 0);
	write_mixed_as("f3-fast3.t4", T4_LOG_PWRITE, 0, -3);
	write_mixed_as("f3-level1.t4", T4_LOG_PWRITE, 0, 1);
	write_mixed_as("f1-default.t4", T4_LOG_PWRITE, 1, 0);
	write_mixed_as("f1-level1.t4", T4_LOG_PWRITE, 1, 1);
	cr_assert(same_bytes("f3-default.t4", "f3-fast3.t4"));
	cr_assert(!same_bytes("f3-default.t4", "f3-level1.t4"), "level 1 is not the default");
	cr_assert(same_bytes("f1-default.t4", "f1-level1.t4"));

	struct t4_reader *a = open_reader("f3-default.t4"), *b = open_reader("f3-level1.t4");
	struct t4_packet p, q;
	uint64_t n = 0;
	int ra, rb;

	do {
		ra = next_original(a, &p);
		rb = next_original(b, &q);
		cr_assert_eq(ra, rb, "packet %llu", (unsigned long long)n);
		cr_assert(ra <= 0 || tu_pkt_eq(&p, &q), "packet %llu differs", (unsigned long long)n);
		n++;
	} while (ra == 1);
	cr_assert_eq(n, N_META + 100000 + 2);
	t4_reader_close(a);
	t4_reader_close(b);
	cr_assert_eq(t4_log_zstd_check(0), -EINVAL);
	cr_assert_not_null(strstr(t4_errmsg(), "use -"), "%s", t4_errmsg());
	cr_assert_eq(t4_log_zstd_check(-1), 0);
	cr_assert_eq(t4_log_zstd_check(19), 0);
	cr_assert_eq(t4_log_zstd_check(INT_MIN), -EINVAL);
	cr_assert_eq(t4_log_zstd_check(INT_MAX), -EINVAL);
}

/* ---- options and misuse ----------------------------------------------------- */

Test(log, bad_options_and_misuse)
{
	struct t4_log_opts o = { .path = tpath("x.t4") };
	struct t4_log_stats st;
	struct t4_log *log;
	struct t4_ring *r;
	struct t4_reader *rd;

	o.zstd_level = 99;
	cr_assert_eq(t4_log_open(&log, &o), -EINVAL);
	cr_assert_not_null(strstr(t4_errmsg(), "zstd level 99"));
	o.zstd_level = 0;
	o.chunk_bytes = 100;
	cr_assert_eq(t4_log_open(&log, &o), -EINVAL);
	o.chunk_bytes = 0;
	o.inflight = 1000;
	cr_assert_eq(t4_log_open(&log, &o), -EINVAL);
	o.inflight = 0;
	o.path = NULL;
	cr_assert_eq(t4_log_open(&log, &o), -EINVAL);
	o.path = "/nonexistent-dir-t4/x.t4";
	cr_assert_eq(t4_log_open(&log, &o), -ENOENT);
	cr_assert_not_null(strstr(t4_errmsg(), "/nonexistent-dir-t4/x.t4"));

	/* a log with no packets still holds its final status */
	log = open_log("empty.t4", NULL);
	cr_assert_eq(t4_log_ring(log, 0, 7, &r), -EINVAL);
	r = add_ring(log, 0, T4_RING_NONBLOCK);
	cr_assert_eq(t4_log_start(log), 0);
	cr_assert_eq(t4_log_start(log), -EBUSY);
	cr_assert_eq(t4_log_ring(log, 0, T4_RING_WAIT, &r), -EBUSY);
	cr_assert_eq(t4_log_close(log, &(struct t4_status_pkt){ .triggers = 9 }, &st), 0);
	cr_assert_eq(st.packets, 1);
	cr_assert_eq(st.chunks, 1);
	rd = open_reader("empty.t4");
	expect_status(rd, 0, 9);
	check_clean(rd, &st);
	t4_reader_close(rd);
}

/* ---- the file: new, never through a link, the umask honoured --------------- */

/* An existing regular file or a planted symbolic link is refused and left
 * as it was; a new file gets 0666 less the umask; a device is written in
 * place. */
Test(log, never_writes_over_a_file)
{
	struct t4_log_opts o = { 0 };
	char text[64];
	struct stat sb;
	struct t4_log *log;
	mode_t old_mask;

	cr_assert_eq(t4_write_small_file(tpath("victim"), "precious"), 0);
	char victim[PATH_MAX + 64];
	snprintf(victim, sizeof(victim), "%s", tpath("victim"));
	cr_assert_eq(symlink(victim, tpath("link.t4")), 0);
	o.path = tpath("victim");
	cr_assert_eq(t4_log_open(&log, &o), -EEXIST);
	cr_assert(strstr(t4_errmsg(), "exists; a log is never written over a file"), "%s",
		  t4_errmsg());
	o.path = tpath("link.t4");
	cr_assert_eq(t4_log_open(&log, &o), -EEXIST, "a link to a file is followed");
	cr_assert_eq(t4_read_small_file(tpath("victim"), text, sizeof(text)), 8);
	cr_assert_str_eq(text, "precious");
	o.path = tmpdir;
	cr_assert_eq(t4_log_open(&log, &o), -EISDIR);
	old_mask = umask(077);
	o.path = tpath("new.t4");
	cr_assert_eq(t4_log_open(&log, &o), 0, "%s", t4_errmsg());
	umask(old_mask);
	cr_assert_eq(t4_log_close(log, NULL, NULL), 0);
	cr_assert_eq(stat(tpath("new.t4"), &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0600, "mode %o under umask 077", sb.st_mode & 0777);
	o.path = "/dev/null";
	cr_assert_eq(t4_log_open(&log, &o), 0, "%s", t4_errmsg());
	cr_assert_eq(t4_log_close(log, NULL, NULL), 0);
}
