/* bench_wake.c - which primitive should the scheduler use to wake a monitor?
 *
 * A "scheduler" thread pinned to CPU 0 fires on an absolute grid
 * (clock_nanosleep TIMER_ABSTIME, 1 ms by default) and wakes a "waiter"
 * thread pinned to CPU 1 (or to CPU 0 too: the same-CPU case), through one
 * of: a private futex (FUTEX_WAKE / FUTEX_WAIT_BITSET), an eventfd
 * (write / blocking read), a pthread condition variable, a pipe. A baseline
 * row ("timer only") wakes no one: its latency is the scheduler's own
 * lateness behind the grid (CLOCK_MONOTONIC), its CPU the timer's floor.
 *
 * Latency is CLOCK_MONOTONIC_RAW from just before the wake call to the first
 * instruction the waiter runs after it returns from its wait; CPU time per
 * wake is CLOCK_THREAD_CPUTIME_ID of each thread over the run divided by the
 * wakes. Trade-offs: both threads run SCHED_FIFO when permitted (as the
 * recorder's do; -P other for the default policy), so the numbers are what
 * the recorder gets, not what an unprivileged program gets; one waiter per
 * run, so the cost of waking several monitors is the sum, not measured here.
 * When two fires come closer than the waiter's wake-up (the scheduler's
 * timer woke late and it caught up, or the waiter was late), the older one
 * counts as "coalesced" and has no latency sample.
 *
 * Usage: bench_wake [-n WAKES] [-p PERIOD] [-P fifo|other] [-h]
 * Prints one markdown table on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

enum prim { P_NONE, P_FUTEX, P_EVENTFD, P_CONDVAR, P_PIPE, P_COUNT };

static const char *const prim_name[P_COUNT] = {
	"timer only (baseline)", "futex", "eventfd", "condvar", "pipe",
};

/* One run: one primitive, one placement. Shared by both threads. */
struct run {
	enum prim prim;
	int sched_cpu, waiter_cpu;
	int policy;            /* SCHED_FIFO or SCHED_OTHER */
	uint64_t period_ns;
	uint32_t n;

	_Atomic uint32_t fired; /* fires so far; also the futex word */
	_Atomic bool ready;     /* waiter is about to wait for the first */
	int efd;
	int pipefd[2];
	pthread_mutex_t mtx;
	pthread_cond_t cond;
	uint32_t cv_fired;      /* under mtx */

	uint64_t *fire_ns;     /* [n] just before the wake call */
	uint64_t *woke_ns;     /* [n] waiter's wake-up, 0 = coalesced */
	uint64_t sched_cpu_ns, waiter_cpu_ns;
	_Atomic int error;     /* first thread-side failure (-errno) */
};

struct result {
	uint32_t samples, coalesced;
	uint64_t p50, p99, max;
	double sched_cpu_us, waiter_cpu_us;
};

/* ---- small helpers ------------------------------------------------------- */

static uint64_t thread_cpu_ns(void)
{
	return t4_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static int setup_thread(int cpu, int policy)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (rc)
		return t4_err(rc, "cannot pin to CPU %d: %s", cpu, strerror(rc));
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (policy == SCHED_FIFO) {
		struct sched_param sp = { .sched_priority = 50 };
		rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
		if (rc)
			return t4_err(rc, "SCHED_FIFO: %s", strerror(rc));
	}
	return 0;
}

static long futex(_Atomic uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)w, op | FUTEX_PRIVATE_FLAG, val,
		       NULL, NULL, FUTEX_BITSET_MATCH_ANY);
}

static int full_write(int fd, const void *buf, size_t len)
{
	ssize_t w;

	do
		w = write(fd, buf, len);
	while (w < 0 && errno == EINTR);
	return w == (ssize_t)len ? 0 : -EIO;
}

static int full_read(int fd, void *buf, size_t len)
{
	ssize_t r;

	do
		r = read(fd, buf, len);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)len ? 0 : -EIO;
}

/* ---- the wake and the wait, per primitive ------------------------------ */

/* Called by the scheduler after fire_ns[k] is taken; `fired` is k + 1. */
static int do_wake(struct run *r, uint32_t fired)
{
	static const uint64_t one = 1;

	switch (r->prim) {
	case P_NONE:
		atomic_store(&r->fired, fired);
		return 0;
	case P_FUTEX:
		atomic_store(&r->fired, fired);
		futex(&r->fired, FUTEX_WAKE, 1);
		return 0;
	case P_EVENTFD:
		atomic_store(&r->fired, fired);
		return full_write(r->efd, &one, sizeof(one));
	case P_CONDVAR:
		pthread_mutex_lock(&r->mtx);
		r->cv_fired = fired;
		pthread_cond_signal(&r->cond);
		pthread_mutex_unlock(&r->mtx);
		return 0;
	case P_PIPE:
		atomic_store(&r->fired, fired);
		return full_write(r->pipefd[1], "x", 1);
	case P_COUNT:
		break;
	}
	return -EINVAL;
}

/* The newest fire, then the time: in this order, so that the fire's
 * timestamp (taken before `fired` was stored) is never after *now. */
static uint32_t newest_fire(struct run *r, uint64_t *now)
{
	uint32_t f = atomic_load(&r->fired);

	*now = t4_mono_raw_ns();
	return f;
}

/* Block until a fire newer than `seen`; returns the newest fire count seen
 * (>= 1) with *now set to the wake-up time, or a negative errno. */
static int64_t do_wait(struct run *r, uint32_t seen, uint64_t *now)
{
	uint64_t v;
	char c;
	uint32_t f;

	switch (r->prim) {
	case P_FUTEX:
		while ((f = atomic_load(&r->fired)) == seen)
			futex(&r->fired, FUTEX_WAIT_BITSET, seen);
		*now = t4_mono_raw_ns();
		return f;
	case P_EVENTFD:
		if (full_read(r->efd, &v, sizeof(v)))
			return -EIO;
		return newest_fire(r, now);
	case P_CONDVAR:
		pthread_mutex_lock(&r->mtx);
		while (r->cv_fired == seen)
			pthread_cond_wait(&r->cond, &r->mtx);
		*now = t4_mono_raw_ns();
		f = r->cv_fired;
		pthread_mutex_unlock(&r->mtx);
		return f;
	case P_PIPE:
		if (full_read(r->pipefd[0], &c, 1))
			return -EIO;
		return newest_fire(r, now);
	case P_NONE:
	case P_COUNT:
		break;
	}
	return -EINVAL;
}

/* ---- the two threads ----------------------------------------------------- */

static void *waiter_main(void *arg)
{
	struct run *r = arg;
	uint32_t seen = 0;
	int rc = setup_thread(r->waiter_cpu, r->policy);

	if (rc) {
		atomic_store(&r->error, rc);
		atomic_store(&r->ready, true);
		return NULL;
	}
	uint64_t cpu0 = thread_cpu_ns();
	atomic_store(&r->ready, true);
	while (seen < r->n) {
		uint64_t now = 0;
		int64_t f = do_wait(r, seen, &now);
		if (f < 0) {
			atomic_store(&r->error, (int)f);
			break;
		}
		if ((uint32_t)f > seen) {
			r->woke_ns[f - 1] = now;
			seen = (uint32_t)f;
		}
	}
	r->waiter_cpu_ns = thread_cpu_ns() - cpu0;
	return NULL;
}

static void scheduler_loop(struct run *r)
{
	struct timespec ts;
	uint64_t cpu0 = thread_cpu_ns();
	uint64_t t0 = t4_clock_ns(CLOCK_MONOTONIC) + 10 * 1000000ull;

	for (uint32_t k = 0; k < r->n && !atomic_load(&r->error); k++) {
		uint64_t t = t0 + k * r->period_ns;
		ts.tv_sec = (time_t)(t / 1000000000ull);
		ts.tv_nsec = (long)(t % 1000000000ull);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (r->prim == P_NONE) { /* baseline: latency = timer lateness */
			r->fire_ns[k] = t;
			r->woke_ns[k] = t4_clock_ns(CLOCK_MONOTONIC);
			continue;
		}
		r->fire_ns[k] = t4_mono_raw_ns();
		int rc = do_wake(r, k + 1);
		if (rc)
			atomic_store(&r->error, t4_err(-rc, "%s: wake failed",
						       prim_name[r->prim]));
	}
	r->sched_cpu_ns = thread_cpu_ns() - cpu0;
}

static void *scheduler_main(void *arg)
{
	struct run *r = arg;
	int rc = setup_thread(r->sched_cpu, r->policy);

	if (rc)
		atomic_store(&r->error, rc);
	else
		scheduler_loop(r);
	return NULL;
}

/* ---- one run --------------------------------------------------------------- */

static int run_init(struct run *r)
{
	r->efd = -1;
	r->pipefd[0] = r->pipefd[1] = -1;
	r->fire_ns = calloc(r->n, sizeof(*r->fire_ns));
	r->woke_ns = calloc(r->n, sizeof(*r->woke_ns));
	if (!r->fire_ns || !r->woke_ns)
		return t4_err(ENOMEM, "out of memory for %u samples", r->n);
	pthread_mutex_init(&r->mtx, NULL);
	pthread_cond_init(&r->cond, NULL);
	if (r->prim == P_EVENTFD && (r->efd = eventfd(0, EFD_CLOEXEC)) < 0)
		return t4_err(errno, "eventfd: %s", strerror(errno));
	if (r->prim == P_PIPE && pipe2(r->pipefd, O_CLOEXEC) < 0)
		return t4_err(errno, "pipe: %s", strerror(errno));
	return 0;
}

static void run_fini(struct run *r)
{
	if (r->efd >= 0)
		close(r->efd);
	for (int i = 0; i < 2; i++)
		if (r->pipefd[i] >= 0)
			close(r->pipefd[i]);
	pthread_mutex_destroy(&r->mtx);
	pthread_cond_destroy(&r->cond);
	free(r->fire_ns);
	free(r->woke_ns);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank quantile of a sorted array. */
static uint64_t quantile(const uint64_t *v, uint32_t n, double q)
{
	if (!n)
		return 0;
	uint32_t i = (uint32_t)(q * n + 0.999999);
	return v[(i ? i : 1) - 1];
}

static void summarise(const struct run *r, struct result *res)
{
	uint32_t m = 0;

	memset(res, 0, sizeof(*res));
	for (uint32_t k = 0; k < r->n; k++) {
		if (r->woke_ns[k])
			r->fire_ns[m++] = r->woke_ns[k] - r->fire_ns[k];
		else
			res->coalesced++;
	}
	qsort(r->fire_ns, m, sizeof(uint64_t), cmp_u64);
	res->samples = m;
	res->p50 = quantile(r->fire_ns, m, 0.50);
	res->p99 = quantile(r->fire_ns, m, 0.99);
	res->max = m ? r->fire_ns[m - 1] : 0;
	res->sched_cpu_us = r->sched_cpu_ns / 1e3 / r->n;
	res->waiter_cpu_us = r->waiter_cpu_ns / 1e3 / r->n;
}

static int run_one(struct run *r, struct result *res)
{
	pthread_t w, s;
	int rc = run_init(r);

	if (rc)
		goto cleanup;
	if (r->prim != P_NONE) {
		rc = pthread_create(&w, NULL, waiter_main, r);
		if (rc) {
			rc = t4_err(rc, "pthread_create: %s", strerror(rc));
			goto cleanup;
		}
		while (!atomic_load(&r->ready))
			sched_yield();
	}
	rc = pthread_create(&s, NULL, scheduler_main, r);
	if (rc)
		atomic_store(&r->error, t4_err(rc, "pthread_create: %s", strerror(rc)));
	else
		pthread_join(s, NULL);
	if (r->prim != P_NONE) {
		if (atomic_load(&r->error)) /* stopped early: release the waiter */
			do_wake(r, r->n);
		pthread_join(w, NULL);
	}
	rc = atomic_load(&r->error);
	if (!rc)
		summarise(r, res);
cleanup:
	run_fini(r);
	return rc;
}

/* ---- main ----------------------------------------------------------------- */

struct opts {
	uint32_t n;
	uint64_t period_ns;
	int policy;
};

static int parse_args(int argc, char **argv, struct opts *o)
{
	uint64_t v;
	int c;

	while ((c = getopt(argc, argv, "n:p:P:h")) != -1) {
		switch (c) {
		case 'n':
			if (t4_parse_u64(optarg, &v) || v == 0 || v > 10000000)
				return t4_err(EINVAL, "-n %s: want 1..10000000", optarg);
			o->n = (uint32_t)v;
			break;
		case 'p':
			if (t4_parse_duration(optarg, &o->period_ns))
				return t4_err(EINVAL, "-p %s: want a duration like 1ms",
					      optarg);
			break;
		case 'P':
			if (!strcmp(optarg, "fifo"))
				o->policy = SCHED_FIFO;
			else if (!strcmp(optarg, "other"))
				o->policy = SCHED_OTHER;
			else
				return t4_err(EINVAL, "-P %s: want fifo or other", optarg);
			break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"usage: bench_wake [-n WAKES] [-p PERIOD] [-P fifo|other]\n");
			return c == 'h' ? 1 : -EINVAL;
		}
	}
	return 0;
}

/* SCHED_FIFO when the process may use it, else fall back with a note. */
static int pick_policy(int wanted)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (wanted != SCHED_FIFO)
		return wanted;
	if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0) {
		sp.sched_priority = 0;
		sched_setscheduler(0, SCHED_OTHER, &sp);
		return SCHED_FIFO;
	}
	fprintf(stderr, "bench_wake: SCHED_FIFO not permitted; using SCHED_OTHER\n");
	return SCHED_OTHER;
}

static void print_row(const struct run *r, const struct result *res)
{
	const char *where = r->prim == P_NONE ? "-" :
			    r->sched_cpu == r->waiter_cpu ? "same CPU" : "CPU 0 -> 1";

	char wcpu[32] = "-";

	if (r->prim != P_NONE)
		snprintf(wcpu, sizeof(wcpu), "%.1f", res->waiter_cpu_us);
	printf("| %s | %s | %u | %u | %.1f | %.1f | %.1f | %.1f | %s |\n",
	       prim_name[r->prim], where, res->samples, res->coalesced, res->p50 / 1e3,
	       res->p99 / 1e3, res->max / 1e3, res->sched_cpu_us, wcpu);
}

int main(int argc, char **argv)
{
	struct opts o = { .n = 2000, .period_ns = 1000000, .policy = SCHED_FIFO };
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : t4_report(rc);
	o.policy = pick_policy(o.policy);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char pbuf[32];

	printf("### Wake-up latency, scheduler thread -> waiter thread\n\n");
	printf("%u wakes per row on a %s absolute grid, %s, latency from just before "
	       "the wake call to the waiter's wake-up (CLOCK_MONOTONIC_RAW); CPU "
	       "per wake from CLOCK_THREAD_CPUTIME_ID (the scheduler's includes "
	       "its own timer wake-up).\n\n",
	       o.n, t4_fmt_duration(o.period_ns, pbuf, sizeof(pbuf)),
	       o.policy == SCHED_FIFO ? "both threads SCHED_FIFO 50" : "SCHED_OTHER");
	printf("| primitive | placement | wakes | coalesced | p50 us | p99 us | "
	       "max us | scheduler CPU us/wake | waiter CPU us/wake |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
	fflush(stdout);
	for (int p = P_NONE; p < P_COUNT; p++) {
		for (int cross = 1; cross >= 0; cross--) {
			if (p == P_NONE && !cross)
				continue;
			if (cross && ncpu < 2) {
				fprintf(stderr, "bench_wake: one CPU: cross-CPU rows skipped\n");
				continue;
			}
			struct run r = { .prim = (enum prim)p, .sched_cpu = 0,
					 .waiter_cpu = cross ? 1 : 0, .policy = o.policy,
					 .period_ns = o.period_ns, .n = o.n };
			struct result res;
			rc = run_one(&r, &res);
			if (rc)
				return t4_report(rc);
			print_row(&r, &res);
			fflush(stdout);
		}
	}
	return 0;
}
