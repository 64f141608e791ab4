/* phase_app.c - a workload with a known schedule, for tests/test_activity.c
 * and the bookmark-cost benchmark (tools/bench_bookmark.sh).
 *
 * Built by the Makefile against libt410trace.so and include/t410trace.h
 * only, like a user's program ($(OUT)/apps/phase_app). Modes:
 *
 *   schedule FILE  threads "t4ph_a" and "t4ph_b" go through phases spin_a
 *                  (a busy), spin_b (b busy), both, rest (both asleep),
 *                  twice; the main thread sets a bookmark named after each
 *                  phase (and "done" at the end). FILE gets what really
 *                  happened, measured by the program itself, so that a
 *                  loaded machine moves the expectations with the facts:
 *                    clock MONO RAW          both clocks read together
 *                    phase I NAME START END  main's clock around the phase
 *                    busy TID I T0 T1 ONCPU  a thread's busy period: its
 *                                            first and last clock reads and
 *                                            its time on CPU in between, by
 *                                            its own context switches (-1:
 *                                            perf gave no switch records)
 *                    cpu I NS                every thread's time on CPU in
 *                                            it
 *   marks FILE N   N times: bookmark m<i>, 5 ms, trigger, 5 ms; FILE gets
 *                  "mark I BEFORE AFTER" and "trigger I BEFORE AFTER"
 *                  (CLOCK_MONOTONIC around each call)
 *   procs N M      N processes, each setting bookmark p<i> M times, the
 *                  first while all of them hold their connection to the
 *                  recorder; prints "procs: F of N failed"
 *   forked N       bookmark "parent" twice (the second call goes through
 *                  whatever the kernel made of the probe point at the
 *                  first), then a child forked after them sets "child" N
 *                  times; prints "forked: child exited S" (S: its wait
 *                  status, 0 when every call succeeded)
 *   burst N        N bookmarks b<i % 100> as fast as they go, a 100 us pause
 *                  (spun, so that a loaded machine cannot make it longer)
 *                  every 10; prints "burst: A taken, R refused" (a refusal
 *                  is -EREMOTEIO; any other error fails)
 *   fill Q         bookmarks f<i % 100> until Q were taken (a refused one
 *                  is tried again 1 ms later, for at most 60 s), then one
 *                  trigger: with the recorder's triggers paused and Q its
 *                  queue, the trigger has no room; prints "fill: A taken, R
 *                  refused; trigger: RC"
 *   rawname        bookmark "ok", then the probe point called directly (as a
 *                  caller skipping the library's checks would) with a name
 *                  of 70 characters and one with a space, then bookmark
 *                  "done": the recorder must refuse both, never cut one
 *   cost N         N bookmarks 1 ms apart, then N triggers 2 ms apart, each
 *                  call timed alone: "bookmark p50 P50 p99 P99 ns" and the
 *                  same for trigger (the median is what a call costs; the
 *                  pacing keeps the recorder's queue short)
 * Times are CLOCK_MONOTONIC ns. Exit 0 when every call succeeded.
 */
#include <t410trace.h>

#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 2
#define MS 1000000ull

static const struct {
	const char *name;
	int busy[2]; /* a, b */
	unsigned ms;
} phases[] = {
	{ "spin_a", { 1, 0 }, 80 },
	{ "spin_b", { 0, 1 }, 80 },
	{ "both", { 1, 1 }, 60 },
	{ "rest", { 0, 0 }, 80 },
};
#define N_PHASES (ROUNDS * (int)(sizeof(phases) / sizeof(phases[0])))

static int failures;

static uint64_t clock_of(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now(void)
{
	return clock_of(CLOCK_MONOTONIC);
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

static void check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "phase_app: %s: %d (%s)\n", what, rc, t410_errmsg());
		failures++;
	}
}

/* ---- a thread's own context switches ------------------------------------ */

/* The truth for a thread's time on CPU is where the kernel switched it in
 * and out: what the recording's CPU slices show too. Its CPU-time clock
 * says less by what the kernel does not charge to it (steal time on a VM,
 * IRQ time), and the scheduler's run-queue wait (schedstat) counts host
 * steal before a preemption as waiting: both drift with the load of the
 * machine and of its host. So each worker asks perf for its own switch
 * records (PERF_RECORD_SWITCH, stamped on CLOCK_MONOTONIC: the BPF
 * side's clock), read once the schedule is over. */

#define SWITCH_PAGES 256 /* 1 MiB: 32,768 records; a loaded run makes ~1,000 */
#define MAX_SWITCHES 32768

struct switch_rec {
	struct perf_event_header h;
	uint32_t pid, tid; /* sample_id_all: PERF_SAMPLE_TID, PERF_SAMPLE_TIME */
	uint64_t time;
};

struct switches {
	int fd;
	void *ring;
	size_t n;
	bool lost; /* a record missed: no truth */
	struct {
		uint64_t t;
		bool in;
	} ev[MAX_SWITCHES];
};

/* Ask for this thread's switch records; false where perf refuses. */
static bool switches_open(struct switches *s)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.context_switch = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	s->n = 0;
	s->lost = false;
	s->fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (s->fd < 0)
		return false;
	s->ring = mmap(NULL, (SWITCH_PAGES + 1) * (size_t)getpagesize(), PROT_READ | PROT_WRITE,
		       MAP_SHARED, s->fd, 0);
	if (s->ring == MAP_FAILED) {
		close(s->fd);
		s->fd = -1;
		return false;
	}
	return true;
}

/* Take every record written so far, then close. */
static void switches_read(struct switches *s)
{
	struct perf_event_mmap_page *m = s->ring;
	size_t page = (size_t)getpagesize(), size = SWITCH_PAGES * page;
	const char *data = (const char *)s->ring + page;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);

	for (uint64_t tail = m->data_tail; tail < head;) {
		struct switch_rec r;
		size_t off = tail % size, first = sizeof(r) < size - off ? sizeof(r) : size - off;
		memcpy(&r, data + off, first); /* a record may wrap */
		memcpy((char *)&r + first, data, sizeof(r) - first);
		if (r.h.type == PERF_RECORD_LOST || s->n == MAX_SWITCHES)
			s->lost = true;
		else if (r.h.type == PERF_RECORD_SWITCH && r.h.size >= sizeof(r)) {
			s->ev[s->n].t = r.time;
			s->ev[s->n++].in = !(r.h.misc & PERF_RECORD_MISC_SWITCH_OUT);
		}
		tail += r.h.size ? r.h.size : sizeof(r.h);
	}
	munmap(s->ring, (SWITCH_PAGES + 1) * page);
	close(s->fd);
}

static long long overlap(uint64_t lo, uint64_t hi, uint64_t a, uint64_t b)
{
	lo = lo > a ? lo : a;
	hi = hi < b ? hi : b;
	return hi > lo ? (long long)(hi - lo) : 0;
}

/* Time on CPU within [a, b] by the records; -1 when one was lost. The
 * thread ran from before its first record if that is a switch-out. */
static long long switches_on_cpu(const struct switches *s, uint64_t a, uint64_t b)
{
	bool on = s->n && !s->ev[0].in;
	uint64_t since = 0;
	long long sum = 0;

	if (s->lost)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		if (s->ev[i].in == on)
			continue; /* the same edge again */
		if (on)
			sum += overlap(since, s->ev[i].t, a, b);
		on = s->ev[i].in;
		since = s->ev[i].t;
	}
	return on ? sum + overlap(since, UINT64_MAX, a, b) : sum;
}

/* ---- schedule ---------------------------------------------------------- */

struct worker {
	int which; /* 0: a, 1: b */
	pthread_t thread;
	int tid;
	uint64_t t0[N_PHASES], t1[N_PHASES], cpu[N_PHASES];
	long long on[N_PHASES]; /* busy: time on CPU in [t0, t1] by the switches */
	struct switches sw;
};

static pthread_barrier_t start_bar;
static uint64_t phase_end[N_PHASES];

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	bool sw = switches_open(&w->sw);

	w->tid = (int)syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), w->which ? "t4ph_b" : "t4ph_a");
	for (int i = 0; i < N_PHASES; i++) {
		pthread_barrier_wait(&start_bar); /* asleep until the phase starts */
		uint64_t c0 = clock_of(CLOCK_THREAD_CPUTIME_ID);
		w->t0[i] = now();
		w->t1[i] = w->t0[i];
		if (phases[i % 4].busy[w->which])
			while ((w->t1[i] = now()) < phase_end[i])
				;
		w->cpu[i] = clock_of(CLOCK_THREAD_CPUTIME_ID) - c0;
	}
	if (sw)
		switches_read(&w->sw);
	for (int i = 0; i < N_PHASES; i++)
		w->on[i] = sw ? switches_on_cpu(&w->sw, w->t0[i], w->t1[i]) : -1;
	return NULL;
}

/* Worker w's time on CPU in phase i: a busy period's by its switches,
 * else (asleep, or no switch records) its CPU-time clock. */
static uint64_t on_cpu(const struct worker *w, int i)
{
	if (!phases[i % 4].busy[w->which] || w->on[i] < 0)
		return w->cpu[i];
	return (uint64_t)w->on[i];
}

static int run_schedule(const char *path)
{
	struct worker w[2] = { { .which = 0 }, { .which = 1 } };
	uint64_t start[N_PHASES + 1], main_cpu[N_PHASES + 1];
	FILE *f = fopen(path, "w");

	if (!f)
		return perror(path), 1;
	fprintf(f, "clock %llu %llu\n", (unsigned long long)now(),
		(unsigned long long)clock_of(CLOCK_MONOTONIC_RAW));
	check(t410_bookmark("start"), "bookmark start"); /* asks the route once */
	pthread_barrier_init(&start_bar, NULL, 3);
	for (int k = 0; k < 2; k++)
		pthread_create(&w[k].thread, NULL, worker_main, &w[k]);
	usleep(20000); /* the workers are named and asleep */
	for (int i = 0; i < N_PHASES; i++) {
		main_cpu[i] = clock_of(CLOCK_THREAD_CPUTIME_ID);
		start[i] = now();
		phase_end[i] = start[i] + phases[i % 4].ms * MS;
		check(t410_bookmark(phases[i % 4].name), phases[i % 4].name);
		pthread_barrier_wait(&start_bar);
		sleep_until(phase_end[i]);
	}
	main_cpu[N_PHASES] = clock_of(CLOCK_THREAD_CPUTIME_ID);
	start[N_PHASES] = now();
	check(t410_bookmark("done"), "bookmark done");
	for (int k = 0; k < 2; k++)
		pthread_join(w[k].thread, NULL);
	for (int i = 0; i < N_PHASES; i++) {
		uint64_t cpu = main_cpu[i + 1] - main_cpu[i] + on_cpu(&w[0], i) + on_cpu(&w[1], i);
		fprintf(f, "phase %d %s %llu %llu\ncpu %d %llu\n", i, phases[i % 4].name,
			(unsigned long long)start[i], (unsigned long long)start[i + 1], i,
			(unsigned long long)cpu);
		for (int k = 0; k < 2; k++)
			if (phases[i % 4].busy[k])
				fprintf(f, "busy %d %d %llu %llu %lld\n", w[k].tid, i,
					(unsigned long long)w[k].t0[i], (unsigned long long)w[k].t1[i],
					w[k].on[i]);
	}
	return fclose(f) ? 1 : 0;
}

/* ---- marks ----------------------------------------------------------------- */

static int run_marks(const char *path, int n)
{
	FILE *f = fopen(path, "w");
	char name[32];

	if (!f)
		return perror(path), 1;
	for (int i = 0; i < n; i++) {
		uint64_t b = now();
		snprintf(name, sizeof(name), "m%d", i);
		check(t410_bookmark(name), name);
		fprintf(f, "mark %d %llu %llu\n", i, (unsigned long long)b,
			(unsigned long long)now());
		usleep(5000);
		b = now();
		check(t410_trigger(), "trigger");
		fprintf(f, "trigger %d %llu %llu\n", i, (unsigned long long)b,
			(unsigned long long)now());
		usleep(5000);
	}
	return fclose(f) ? 1 : 0;
}

/* ---- procs ------------------------------------------------------------------ */

/* Block until the write ends of p are all closed (EOF). */
static void wait_eof(int p)
{
	char ch;

	while (read(p, &ch, 1) > 0)
		;
}

/* Each of n processes sets its first bookmark, waits until all of them
 * have (so that all hold their connection to the recorder at once), then
 * sets m - 1 more. */
static int run_procs(int n, int m)
{
	int go[2], ready[2], failed = 0, st;
	char name[32];

	if (n < 1 || m < 1 || pipe(go) < 0 || pipe(ready) < 0)
		return 2;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return perror("fork"), 2;
		if (pid > 0)
			continue;
		close(go[1]);
		close(ready[0]);
		snprintf(name, sizeof(name), "p%d", i);
		check(t410_bookmark(name), name);
		close(ready[1]); /* this one has connected */
		wait_eof(go[0]);
		for (int k = 1; k < m; k++)
			check(t410_bookmark(name), name);
		_exit(failures ? 1 : 0);
	}
	close(ready[1]);
	wait_eof(ready[0]); /* every process has set its first bookmark */
	close(go[1]);
	for (int i = 0; i < n; i++)
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	printf("procs: %d of %d failed\n", failed, n);
	return failed ? 1 : 0;
}

/* ---- forked ----------------------------------------------------------------- */

static int run_forked(int n)
{
	int st = -1;
	pid_t pid;

	check(t410_bookmark("parent"), "parent");
	check(t410_bookmark("parent"), "parent");
	pid = fork();
	if (pid < 0)
		return perror("fork"), 2;
	if (pid == 0) {
		for (int i = 0; i < n; i++)
			check(t410_bookmark("child"), "child");
		_exit(failures ? 1 : 0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return perror("waitpid"), 2;
	printf("forked: child exited %d\n", st);
	return st ? 1 : 0;
}

/* ---- burst ------------------------------------------------------------------ */

static int run_burst(int n)
{
	int taken = 0, refused = 0;
	char name[32];

	for (int i = 0; i < n; i++) {
		int rc;
		snprintf(name, sizeof(name), "b%d", i % 100);
		rc = t410_bookmark(name);
		if (rc == 0)
			taken++;
		else if (rc == -EREMOTEIO)
			refused++;
		else
			check(rc, name);
		if (i % 10 == 9)
			for (uint64_t t = now(); now() - t < 100000;)
				;
	}
	printf("burst: %d taken, %d refused\n", taken, refused);
	return 0;
}

static int run_fill(int q)
{
	int taken = 0, refused = 0;
	uint64_t until = now() + 60000000000ull;
	char name[32];

	while (taken < q && now() < until) {
		snprintf(name, sizeof(name), "f%d", taken % 100);
		int rc = t410_bookmark(name);
		if (rc == 0) {
			taken++;
		} else if (rc == -EREMOTEIO) {
			refused++;
			sleep_until(now() + 1000000);
		} else {
			check(rc, name);
			break;
		}
	}
	printf("fill: %d taken, %d refused; trigger: %d\n", taken, refused, t410_trigger());
	return 0;
}

/* ---- rawname ------------------------------------------------------------------ */

static int run_rawname(void)
{
	void (*raw)(int, const char *) = (void (*)(int, const char *))dlsym(RTLD_DEFAULT,
									 "t410__probe2");
	char name[80];

	if (!raw) /* an older library */
		raw = (void (*)(int, const char *))dlsym(RTLD_DEFAULT, "t410__probe");
	if (!raw)
		return fprintf(stderr, "phase_app: no probe point\n"), 1;
	check(t410_bookmark("ok"), "ok"); /* the route: the uprobe, if any */
	memset(name, 'a', 70);
	name[70] = '\0';
	raw(1, name);
	raw(1, "bad name");
	check(t410_bookmark("done"), "done");
	return 0;
}

/* ---- cost ------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* n calls of bookmark (or trigger), gap_us apart, each timed alone. */
static void cost_of(const char *what, int n, unsigned gap_us, uint64_t *ns)
{
	bool bm = !strcmp(what, "bookmark");

	for (int i = 0; i < n; i++) {
		uint64_t t0 = now();
		check(bm ? t410_bookmark("cost") : t410_trigger(), what);
		ns[i] = now() - t0;
		usleep(gap_us);
	}
	qsort(ns, (size_t)n, sizeof(*ns), cmp_u64);
	printf("%s p50 %llu p99 %llu ns\n", what, (unsigned long long)ns[n / 2],
	       (unsigned long long)ns[n * 99 / 100]);
}

static int run_cost(int n)
{
	uint64_t *ns = calloc((size_t)n, sizeof(*ns));

	if (!ns || n < 2)
		return 2;
	check(t410_bookmark("warmup"), "warmup"); /* the route, asked once */
	cost_of("bookmark", n, 1000, ns);
	cost_of("trigger", n, 2000, ns);
	free(ns);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int rc;

	if (!strcmp(mode, "schedule") && argc == 3)
		rc = run_schedule(argv[2]);
	else if (!strcmp(mode, "marks") && argc == 4)
		rc = run_marks(argv[2], atoi(argv[3]));
	else if (!strcmp(mode, "rawname") && argc == 2)
		rc = run_rawname();
	else if (!strcmp(mode, "burst") && argc == 3)
		rc = run_burst(atoi(argv[2]));
	else if (!strcmp(mode, "fill") && argc == 3)
		rc = run_fill(atoi(argv[2]));
	else if (!strcmp(mode, "procs") && argc == 4)
		rc = run_procs(atoi(argv[2]), atoi(argv[3]));
	else if (!strcmp(mode, "forked") && argc == 3)
		rc = run_forked(atoi(argv[2]));
	else if (!strcmp(mode, "cost") && argc == 3)
		rc = run_cost(atoi(argv[2]));
	else {
		fprintf(stderr, "usage: phase_app schedule FILE | marks FILE N | burst N | fill Q | procs N M | "
				"forked N | rawname | cost N\n");
		return 2;
	}
	return rc ? rc : failures ? 1 : 0;
}
