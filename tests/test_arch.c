/* test_arch.c - the code whose correctness depends on the architecture,
 * checked wherever the suite runs: x86_64 natively, aarch64 under qemu-user
 * (make check-arm64) and natively on a Grace / Tegra410 machine.
 *
 * - The CPU counter (t4_cpu_ticks: rdtsc / cntvct_el0) never goes back on
 *   a thread, is never earlier than a count another thread read before a
 *   store this thread has seen, and advances at t4_cpu_ticks_hz()
 *   (CNTFRQ_EL0) against the reference clock.
 * - The lock-free SPSC rings (packets/ring.c) with several producer and
 *   consumer threads: every byte that crosses is compared with what was
 *   put, in order, with exact drop counts; tiny rings, so records wrap and
 *   producers wait all the time.
 * - The trigger grid's seqlock (sched_grid_publish / sched_grid_read, the
 *   protocol the BPF timers use too) with readers racing the writer: never
 *   a torn epoch, never an older epoch after a newer one, never a clock
 *   read before the command it saw.
 *
 * No assertion depends on timing: loops stop after a count or a time budget
 * (about a second), whichever comes first, and only what crossed is
 * checked; the rate test widens its tolerance by the measured uncertainty
 * of each sample. Threads record failures; the test thread asserts. On
 * x86_64 (TSO), and under qemu-user, which runs arm64 code with the host's
 * stronger ordering, the stress tests check the logic (wraps, full rings,
 * wake-ups, the odd/even protocol); the reorderings that a missing acquire
 * or release allows show only on arm64 hardware: run make check there.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "packets/ring.h"
#include "sched/sched_internal.h"
#include "util/util.h"

#define BUDGET_NS 1000000000ull /* per stress test */
#define MAX_THREADS 8

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Run fn on each of n argument structs (size bytes apart), one thread
 * each, and wait for all. */
static void run_threads(size_t n, void *(*fn)(void *), void *args, size_t size)
{
	pthread_t th[MAX_THREADS];

	cr_assert_leq(n, MAX_THREADS);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, fn, (char *)args + i * size), 0);
	for (size_t i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* Whether a loop at iteration i should stop: after max, or past end (the
 * clock is read once every 256 iterations). */
static bool enough(uint64_t i, uint64_t max, uint64_t end_ns)
{
	return i >= max || (i % 256 == 0 && t4_mono_raw_ns() >= end_ns);
}

/* ---- the CPU counter ---------------------------------------------------- */

struct mono {
	uint64_t reads, backwards, first, last;
};

static void *mono_thread(void *arg)
{
	struct mono *m = arg;
	uint64_t end = t4_mono_raw_ns() + BUDGET_NS / 2, prev = t4_cpu_ticks();

	m->first = prev;
	for (; !enough(m->reads, 5000000, end); m->reads++) {
		uint64_t now = t4_cpu_ticks();

		m->backwards += now < prev;
		prev = now;
		if (m->reads % 4096 == 0)
			sched_yield(); /* a chance to move to another CPU */
	}
	m->last = prev;
	return NULL;
}

/* More threads than CPUs, so reads continue on other CPUs. */
Test(arch_clock, cpu_ticks_never_go_back)
{
	struct mono m[4];

	memset(m, 0, sizeof(m));
	run_threads(4, mono_thread, m, sizeof(m[0]));
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(m[i].backwards, 0, "thread %d: %llu of %llu reads went back", i,
			     (unsigned long long)m[i].backwards, (unsigned long long)m[i].reads);
		cr_assert_gt(m[i].last, m[i].first, "thread %d: the counter did not advance", i);
	}
}

#define PP_STOP UINT64_MAX

struct pingpong {
	_Atomic uint64_t turn;  /* whose turn: turn % 2; PP_STOP ends */
	_Atomic uint64_t ticks; /* the count read by the last player */
	uint64_t end_ns;
};

struct player {
	struct pingpong *pp;
	unsigned me;
	uint64_t rounds, earlier;
};

static void *pp_thread(void *arg)
{
	struct player *pl = arg;
	struct pingpong *pp = pl->pp;

	for (;;) {
		uint64_t turn;
		unsigned spins = 0;

		while ((turn = atomic_load_explicit(&pp->turn, memory_order_acquire)) != PP_STOP &&
		       turn % 2 != pl->me)
			if (++spins % 64 == 0)
				sched_yield();
		if (turn == PP_STOP)
			return NULL;
		/* The other player read its count, then handed over. */
		uint64_t theirs = atomic_load_explicit(&pp->ticks, memory_order_relaxed);
		uint64_t mine = t4_cpu_ticks();

		pl->earlier += mine < theirs;
		pl->rounds++;
		atomic_store_explicit(&pp->ticks, mine, memory_order_relaxed);
		if (pl->me == 0 && enough(pl->rounds, 200000, pp->end_ns))
			turn = PP_STOP - 1;
		atomic_store_explicit(&pp->turn, turn + 1, memory_order_release);
	}
}

Test(arch_clock, cpu_ticks_ordered_across_threads)
{
	struct pingpong pp = { .end_ns = t4_mono_raw_ns() + BUDGET_NS };
	struct player pl[2] = { { .pp = &pp, .me = 0 }, { .pp = &pp, .me = 1 } };

	atomic_store(&pp.ticks, t4_cpu_ticks());
	run_threads(2, pp_thread, pl, sizeof(pl[0]));
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pl[i].earlier, 0,
			     "player %d read an earlier count than its partner %llu of %llu times",
			     i, (unsigned long long)pl[i].earlier, (unsigned long long)pl[i].rounds);
	cr_assert_gt(pl[0].rounds + pl[1].rounds, 1);
	cr_log_info("clock: %llu hand-overs", (unsigned long long)(pl[0].rounds + pl[1].rounds));
}

/* A counter read between two reference reads (the tightest of a few):
 * its reference time is the middle, give or take width / 2. */
struct sample {
	uint64_t ticks, ref_ns, width_ns;
};

static void sample(struct sample *s)
{
	s->width_ns = UINT64_MAX;
	for (int i = 0; i < 16; i++) {
		uint64_t a = t4_mono_raw_ns(), t = t4_cpu_ticks(), b = t4_mono_raw_ns();

		if (b - a < s->width_ns)
			*s = (struct sample){ t, a + (b - a) / 2, b - a };
	}
}

/* Ticks per second from a to b; *err: its relative uncertainty. */
static double rate(const struct sample *a, const struct sample *b, double *err)
{
	double dt = (double)(b->ref_ns - a->ref_ns);

	*err = (double)(a->width_ns + b->width_ns) / 2 / dt;
	return (double)(b->ticks - a->ticks) * 1e9 / dt;
}

/* x86_64 does not tell the TSC's rate (t4_cpu_ticks_hz() is 0): there the
 * first interval measures it and the second must agree. 1% is far above
 * any real drift between the counter and CLOCK_MONOTONIC_RAW (the same
 * oscillator on arm64) and far below a wrong scale (qemu-user's counter
 * runs at its CNTFRQ of 62.5 MHz, Grace's at 1 GHz). */
Test(arch_clock, cpu_ticks_advance_at_their_frequency)
{
	uint64_t hz = t4_cpu_ticks_hz();
	struct sample s[3];
	double r1, r2, e1, e2, nominal;

#if defined(__aarch64__)
	cr_assert_gt(hz, 0, "cntfrq_el0 reads 0");
#endif
	for (int i = 0; i < 3; i++) {
		if (i)
			sleep_ms(200);
		sample(&s[i]);
	}
	r1 = rate(&s[0], &s[1], &e1);
	r2 = rate(&s[1], &s[2], &e2);
	nominal = hz ? (double)hz : r1;
	cr_log_info("clock: t4_cpu_ticks_hz %llu, measured %.0f and %.0f Hz (uncertainty %.1e, %.1e)",
		    (unsigned long long)hz, r1, r2, e1, e2);
	cr_assert_gt(r1, 0);
	if (hz)
		cr_assert_leq(fabs(r1 / nominal - 1), 0.01 + e1, "%.0f Hz, CNTFRQ says %llu",
			      r1, (unsigned long long)hz);
	cr_assert_leq(fabs(r2 / nominal - 1), 0.01 + e2 + (hz ? 0 : e1),
		      "%.0f Hz, then %.0f Hz (t4_cpu_ticks_hz %llu)", r1, r2,
		      (unsigned long long)hz);
}

/* ---- the SPSC rings ------------------------------------------------------- */

struct pair {
	struct t4_ring *ring;
	_Atomic uint32_t wake; /* the consumer's sleep word, as the writer's */
	uint32_t chan;
	uint64_t end_ns;
	/* producer */
	uint64_t sent, dropped, errors, end_retries;
	/* consumer */
	uint64_t received, bad, disorder, end_count;
};

/* Packet seq of channel chan: sizes vary with seq (0-64 counts), every
 * byte derives from (seq, chan), padding included (memset). */
static void stress_pkt(uint64_t seq, uint32_t chan, struct t4_packet *p)
{
	memset(p, 0, sizeof(*p));
	p->type = T4_PKT_RET;
	p->ret.trigger_id = seq;
	p->ret.domain_id = chan;
	p->ret.read_begin_ns = ~seq;
	p->ret.n_counts = (uint32_t)(seq * 7 % (T4_MAX_COUNTERS + 1));
	for (uint32_t i = 0; i < p->ret.n_counts; i++)
		p->ret.counts[i] = seq * 0x9E3779B97F4A7C15ull ^ ((uint64_t)chan << 40) ^ i;
}

static void *ring_producer(void *arg)
{
	struct pair *pr = arg;
	struct t4_packet p;
	uint64_t seq;
	int err;

	for (seq = 0; !enough(seq, 20000000, pr->end_ns); seq++) {
		stress_pkt(seq, pr->chan, &p);
		err = t4_ring_put(pr->ring, &p);
		if (err == -ENOBUFS)
			pr->dropped++;
		else if (err)
			pr->errors++;
	}
	pr->sent = seq;
	memset(&p, 0, sizeof(p));
	p.type = T4_PKT_STATUS;
	p.status.triggers = seq;
	while ((err = t4_ring_put(pr->ring, &p)) == -ENOBUFS) {
		pr->end_retries++;
		sched_yield();
	}
	pr->errors += err != 0;
	return NULL;
}

/* One record: the end marker, or a packet checked against stress_pkt. */
static bool ring_check(struct pair *pr, const uint8_t *data, uint32_t len, uint64_t *next)
{
	struct t4_packet got, want;

	if (len > sizeof(got)) {
		pr->bad++;
		return false;
	}
	memset(&got, 0, sizeof(got));
	memcpy(&got, data, len);
	if (got.type == T4_PKT_STATUS) {
		pr->end_count = got.status.triggers;
		return true;
	}
	stress_pkt(got.ret.trigger_id, pr->chan, &want);
	if (len != t4_packet_size(&want) || memcmp(data, &want, len))
		pr->bad++;
	/* WAIT rings lose nothing; NONBLOCK ones only skip */
	if (got.ret.trigger_id < *next ||
	    (pr->ring->flags == T4_RING_WAIT && got.ret.trigger_id != *next))
		pr->disorder++;
	*next = got.ret.trigger_id + 1;
	pr->received++;
	return false;
}

/* The writer's loop in small: drain, release, sleep on the wake word
 * when empty (the producer's put wakes it). It polls the head a while
 * before sleeping, so it also reads records the moment they are
 * published: a head published before the bytes shows there. */
static void *ring_consumer(void *arg)
{
	struct pair *pr = arg;
	uint64_t pos = 0, next = 0;
	unsigned idle = 0;

	for (;;) {
		uint64_t head = pkt_ring_head(pr->ring), from = pos;
		const uint8_t *data;
		uint32_t len;
		bool end = false;

		while (!end && (len = pkt_ring_peek(pr->ring, &pos, head, &data)))
			end = ring_check(pr, data, len, &next);
		pkt_ring_release(pr->ring, pos);
		if (end)
			return NULL;
		if (pos != from) {
			idle = 0;
			continue;
		}
		if (++idle % 4096)
			continue;
		atomic_store(&pr->wake, 1);
		atomic_thread_fence(memory_order_seq_cst); /* pairs with pkt_ring_wake */
		if (pkt_ring_empty(pr->ring))
			pkt_ring_sleep(&pr->wake, 1000000);
		atomic_store(&pr->wake, 0);
	}
}

static void *pair_thread(void *arg)
{
	struct pair *pr = arg;
	pthread_t prod;

	if (pthread_create(&prod, NULL, ring_producer, pr)) {
		pr->errors++;
		return NULL;
	}
	ring_consumer(pr);
	pthread_join(prod, NULL);
	return NULL;
}

/* n producer/consumer pairs, one smallest ring each. */
static void ring_stress(struct pair *pr, size_t n, int flags)
{
	uint64_t end = t4_mono_raw_ns() + BUDGET_NS;

	memset(pr, 0, n * sizeof(*pr));
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(pkt_ring_new(&pr[i].ring, 0, flags, &pr[i].wake), 0, "%s",
			     t4_errmsg());
		pr[i].chan = (uint32_t)i + 1;
		pr[i].end_ns = end;
	}
	run_threads(n, pair_thread, pr, sizeof(*pr));
	for (size_t i = 0; i < n; i++) {
		struct pair *p = &pr[i];

		cr_log_info("ring %zu: %llu sent, %llu received, %llu dropped", i,
			    (unsigned long long)p->sent, (unsigned long long)p->received,
			    (unsigned long long)p->dropped);
		cr_assert_eq(p->errors, 0, "ring %zu: put failed", i);
		cr_assert_eq(p->bad, 0, "ring %zu: %llu packets differ from what was put", i,
			     (unsigned long long)p->bad);
		cr_assert_eq(p->disorder, 0, "ring %zu: %llu packets out of order", i,
			     (unsigned long long)p->disorder);
		cr_assert_eq(p->end_count, p->sent, "ring %zu: end marker", i);
		cr_assert_eq(p->received + p->dropped, p->sent, "ring %zu", i);
		cr_assert_eq(t4_ring_dropped(p->ring), p->dropped + p->end_retries, "ring %zu", i);
		cr_assert(pkt_ring_empty(p->ring));
		pkt_ring_free(p->ring);
	}
}

Test(arch_ring_stress, waiting_producers_lose_nothing)
{
	struct pair pr[2];

	ring_stress(pr, 2, T4_RING_WAIT);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pr[i].dropped, 0);
}

Test(arch_ring_stress, nonblocking_producers_drop_exactly)
{
	struct pair pr[2];

	ring_stress(pr, 2, T4_RING_NONBLOCK);
}

/* ---- the trigger grid's seqlock ------------------------------------------- */

#define SEQ_K 0x9E3779B97F4A7C15ull /* odd: gen -> gen * K is one-to-one */

struct seq_shared {
	struct t4_grid *g;
	uint64_t end_ns;
	_Atomic bool stop;
};

struct seq_reader {
	struct seq_shared *sh;
	uint64_t reads, torn, backwards, early;
};

/* The writer stamps each epoch's free fields with its generation, so a
 * reader can tell a copy mixed from two commands. */
static void *seq_writer(void *arg)
{
	struct seq_shared *sh = arg;

	for (uint64_t gen = 1; !enough(gen, UINT64_MAX, sh->end_ns); gen++) {
		struct t4_epoch e = { .period = 1000000 };

		e.flags0 = (uint32_t)(gen * SEQ_K);
		e.grid_flags = (uint32_t)((gen * SEQ_K) >> 32);
		if (sched_grid_publish(sh->g, &e, 0) < 0)
			break;
	}
	atomic_store(&sh->stop, true);
	return NULL;
}

static void *seq_reader(void *arg)
{
	struct seq_reader *r = arg;
	uint64_t last_gen = 0, last_tc = 0, now;
	struct t4_epoch e;

	do {
		if (!sched_grid_read(r->sh->g, &e, &now) || !e.gen)
			continue;
		r->torn += e.flags0 != (uint32_t)(e.gen * SEQ_K) ||
			   e.grid_flags != (uint32_t)((e.gen * SEQ_K) >> 32);
		r->backwards += e.gen < last_gen || e.t_c < last_tc;
		/* the protocol's promise: a clock read in a good window is
		 * never before the command it saw */
		r->early += now < e.t_c;
		last_gen = e.gen;
		last_tc = e.t_c;
		r->reads++;
	} while (!atomic_load_explicit(&r->sh->stop, memory_order_relaxed));
	return NULL;
}

Test(arch_seqlock, readers_never_see_a_torn_epoch)
{
	struct seq_shared sh = { .end_ns = t4_mono_raw_ns() + BUDGET_NS };
	struct seq_reader r[2] = { { .sh = &sh }, { .sh = &sh } };
	pthread_t writer;
	struct t4_epoch e;
	uint64_t now;

	sh.g = calloc(1, sizeof(*sh.g));
	cr_assert_not_null(sh.g);
	cr_assert_eq(pthread_create(&writer, NULL, seq_writer, &sh), 0);
	run_threads(2, seq_reader, r, sizeof(r[0])); /* until the writer stops */
	pthread_join(writer, NULL);
	for (int i = 0; i < 2; i++) {
		cr_log_info("seqlock: reader %d: %llu reads", i, (unsigned long long)r[i].reads);
		cr_assert_eq(r[i].torn, 0, "reader %d: %llu torn epochs in %llu reads", i,
			     (unsigned long long)r[i].torn, (unsigned long long)r[i].reads);
		cr_assert_eq(r[i].backwards, 0, "reader %d: an older epoch after a newer one", i);
		cr_assert_eq(r[i].early, 0, "reader %d: its clock before the command it saw", i);
	}
	cr_assert(sched_grid_read(sh.g, &e, &now));
	cr_assert_gt(e.gen, 1);
	cr_assert_eq(e.flags0, (uint32_t)(e.gen * SEQ_K));
	free(sh.g);
}
