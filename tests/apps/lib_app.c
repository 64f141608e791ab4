/* lib_app.c - a program using libt410trace, for tests/test_lib.c.
 *
 * Built at test time against the shared library and include/t410trace.h
 * only (like a user's program). Modes (argv[1]):
 *   order N     bookmark b0..b<N-1>, each followed by a trigger; print
 *               the round trip in us/call
 *   threads     4 threads x 25 bookmarks t<T>_<i>
 *   fork        bookmark parent1; a child bookmarks child; then parent2
 *   chdir       T410TRACE_CONTROL is a relative path: bookmark d1, change
 *               to / and make a child (its own connection) bookmark d2,
 *               then d3: the socket is still the one the path named
 *   cancel      a thread with a cancel pending bookmarks k1 (the call
 *               must finish, the cancel act after it); then main
 *               bookmarks k2: no lock was left held by the dead thread
 *   closeall    bookmark c1, close every fd above 2 (as a daemon may), give
 *               the library's old number to a socket of the app's own,
 *               bookmark c2: the library must not talk to that socket
 *   bad         refusals: bad name, NULL, too long; then bookmark good1
 *   reconnect   bookmark r1, wait for a line on stdin, bookmark r2
 *   outlive N   N times: wait for a line on stdin, bookmark o<i> (the test
 *               starts a new recorder each time); then print how many
 *               probe pages are mapped (probe-maps=K)
 *   memfds      bookmark m1, then print how many of its fds are memfds
 *               (memfds=K)
 *   gone        T410TRACE_CONTROL names no recorder
 *   fails N     every call (bookmark, trigger) returns -N, with a message
 *   gonecost N  the same, N bookmarks: print how often the library read
 *               /proc/self/maps (fopen, interposed here)
 *   stalled     T410TRACE_CONTROL names a socket that never answers: 4
 *               threads bookmark at once; print the slowest call's
 *               seconds; each must return -ETIMEDOUT
 *   noop N      no recorder in the environment: N calls, print ns/call
 *   exec        bookmark before, then exec itself (mode afterexec): no
 *               socket of the library's is left open in the new program,
 *               which bookmarks after through a connection of its own
 *   readonce P  T410TRACE_CONTROL is read at the first call only: unset,
 *               the calls stay no-ops after it is set to P; set, they
 *               reach the recorder after it is unset (bookmarks first,
 *               second)
 *   pidns MODE ...  run MODE in a new PID namespace (as its PID 1), where
 *               the recorder's PID cannot be seen (SO_PEERCRED says 0)
 * Exit 0 when every call returned what it should; otherwise a message on
 * stderr and exit 1.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <t410trace.h>

#include <dlfcn.h>
#include <stdatomic.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;

static void check(int got, int want, const char *what)
{
	if (got != want) {
		fprintf(stderr, "lib_app: %s returned %d, want %d (%s)\n", what, got, want,
			t410_errmsg());
		failures++;
	}
}

/* A bookmark that must succeed, and leave no message behind
 * (t410_errmsg(): "" after a call that did not fail). */
static void bookmark(const char *name)
{
	check(t410_bookmark(name), 0, name);
	if (t410_errmsg()[0]) {
		fprintf(stderr, "lib_app: after bookmark %s succeeded: message '%s'\n", name,
			t410_errmsg());
		failures++;
	}
}

static void *thread_main(void *arg)
{
	char name[32];

	for (int i = 0; i < 25; i++) {
		snprintf(name, sizeof(name), "t%d_%d", (int)(long)arg, i);
		bookmark(name);
	}
	return NULL;
}

static void run_threads(void)
{
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

static void run_fork(void)
{
	int status;
	pid_t pid;

	bookmark("parent1");
	pid = fork();
	if (pid == 0) {
		bookmark("child");
		_exit(failures ? 1 : 0);
	}
	check(waitpid(pid, &status, 0), pid, "waitpid");
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, 1, "child");
	bookmark("parent2");
}

static void run_chdir(void)
{
	int status;
	pid_t pid;

	bookmark("d1");
	check(chdir("/"), 0, "chdir");
	pid = fork();
	if (pid == 0) {
		bookmark("d2");
		_exit(failures ? 1 : 0);
	}
	check(waitpid(pid, &status, 0), pid, "waitpid");
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, 1, "child");
	bookmark("d3");
}

static void *cancelled_main(void *arg)
{
	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cancel(pthread_self()); /* pending until a cancellation point */
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	bookmark("k1"); /* connect, send, poll inside are cancellation points */
	pthread_testcancel();
	return NULL;
}

static void run_cancel(void)
{
	pthread_t t;
	void *ret = NULL;

	check(pthread_create(&t, NULL, cancelled_main, NULL), 0, "pthread_create");
	check(pthread_join(t, &ret), 0, "pthread_join");
	check(ret == PTHREAD_CANCELED, 1, "the thread was cancelled");
	bookmark("k2");
}

static void run_closeall(void)
{
	char buf[64];
	int sv[2];

	bookmark("c1");
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	check(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0, "socketpair");
	check(write(sv[1], "ok\n", 3) == 3, 1, "write"); /* a reply, as it looks */
	bookmark("c2");
	check(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT) < 0, 1,
	      "the app's own socket got nothing of the library's");
	check(recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT), 3, "the app's own data left alone");
	check(close(sv[0]) == 0 && close(sv[1]) == 0, 1, "the app's sockets still open");
}

static void run_bad(void)
{
	char longname[100];

	check(t410_bookmark("bad name"), -EREMOTEIO, "bookmark 'bad name'");
	if (strncmp(t410_errmsg(), "error: usage: bookmark NAME", 27)) {
		fprintf(stderr, "lib_app: message '%s'\n", t410_errmsg());
		failures++;
	}
	check(t410_bookmark(NULL), -EINVAL, "bookmark NULL");
	check(t410_bookmark("a\ntrigger"), -EINVAL, "bookmark with newline");
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	check(t410_bookmark(longname), -EINVAL, "long bookmark");
	bookmark("good1"); /* no message left from the refusals before it */
}

static void run_reconnect(void)
{
	char line[16];

	bookmark("r1");
	if (!fgets(line, sizeof(line), stdin))
		failures++;
	bookmark("r2");
}

/* The mappings of probe pages in /proc/self/maps (memfd "t410trace-probe"). */
static int probe_maps(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "t410trace-probe") != NULL;
	if (f)
		fclose(f);
	return n;
}

static void run_outlive(long n)
{
	char line[16], name[32];

	for (long i = 0; i < n; i++) {
		if (!fgets(line, sizeof(line), stdin))
			failures++;
		snprintf(name, sizeof(name), "o%ld", i);
		bookmark(name);
	}
	printf("probe-maps=%d\n", probe_maps());
}

/* The fds of this process that are memfds (their link: "/memfd:NAME"). */
static int count_memfds(void)
{
	char path[64], link[256];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = '\0';
			n += !strncmp(link, "/memfd:", 7);
		}
	}
	return n;
}

static void run_memfds(void)
{
	bookmark("m1");
	printf("memfds=%d\n", count_memfds());
}

static void run_gone(void)
{
	int a = t410_available();

	check(a < 0, 1, "t410_available");
	check(t410_bookmark("x") < 0, 1, "bookmark without recorder");
	if (!strstr(t410_errmsg(), "no recorder listening at ")) {
		fprintf(stderr, "lib_app: message '%s'\n", t410_errmsg());
		failures++;
	}
}

/* fopen, interposed: the library's calls come here first (an executable's
 * symbol precedes libc's), counting its reads of /proc/self/maps. */
static atomic_long maps_reads;

FILE *fopen(const char *path, const char *mode)
{
	FILE *(*real)(const char *, const char *);

	*(void **)&real = dlsym(RTLD_NEXT, "fopen");
	if (path && !strcmp(path, "/proc/self/maps"))
		atomic_fetch_add(&maps_reads, 1);
	return real ? real(path, mode) : NULL;
}

static void run_fails(int err)
{
	check(t410_bookmark("x"), -err, "bookmark");
	if (!t410_errmsg()[0]) {
		fprintf(stderr, "lib_app: no message\n");
		failures++;
	}
	check(t410_trigger(), -err, "trigger");
}

static void run_gonecost(long n)
{
	for (long i = 0; i < n; i++)
		check(t410_bookmark("x") < 0, 1, "bookmark without recorder");
	printf("maps reads %ld\n", atomic_load(&maps_reads));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double slowest;
static pthread_mutex_t slowest_lock = PTHREAD_MUTEX_INITIALIZER;

static void *stalled_main(void *arg)
{
	double t0 = now_s(), took;

	(void)arg;
	check(t410_bookmark("s"), -ETIMEDOUT, "bookmark to a recorder that does not answer");
	took = now_s() - t0;
	pthread_mutex_lock(&slowest_lock);
	if (took > slowest)
		slowest = took;
	pthread_mutex_unlock(&slowest_lock);
	return NULL;
}

static void run_stalled(void)
{
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, stalled_main, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("slowest %.1f\n", slowest);
}

static void run_noop(long n)
{
	double t0;
	int bad = 0;

	check(t410_available(), 0, "t410_available");
	t0 = now_s();
	for (long i = 0; i < n; i++)
		bad |= t410_bookmark("x") | t410_trigger();
	printf("ns/call %.2f\n", (now_s() - t0) * 1e9 / (2.0 * (double)n));
	check(bad, 0, "no-op calls");
}

static void run_exec(const char *self)
{
	bookmark("before");
	execl(self, self, "afterexec", (char *)NULL);
	fprintf(stderr, "lib_app: exec %s failed\n", self);
	failures++;
}

/* After the exec: every fd above 2 that is a socket was inherited (the
 * new program has opened none yet). */
static void run_afterexec(void)
{
	char path[64], link[64];

	for (int fd = 3; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && !strncmp(link, "socket:", 7)) {
			fprintf(stderr, "lib_app: fd %d, a socket, survived the exec\n", fd);
			failures++;
		}
	}
	bookmark("after");
}

static void run_readonce(const char *path)
{
	if (!getenv(T410TRACE_CONTROL_ENV)) {
		check(t410_available(), 0, "t410_available without the variable");
		setenv(T410TRACE_CONTROL_ENV, path, 1);
		check(t410_bookmark("late"), 0, "bookmark after the variable was set");
		check(t410_available(), 0, "t410_available after the variable was set");
		return;
	}
	bookmark("first");
	unsetenv(T410TRACE_CONTROL_ENV);
	bookmark("second");
	check(t410_available(), 1, "t410_available after the variable was unset");
}

/* Wait for pid: its exit status (1 when it did not exit). */
static int exit_status(pid_t pid)
{
	int status = 0;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

/* argv's mode in a new PID namespace, as its PID 1: its exit status. The
 * namespace is made in a child of ours, which only waits: a process that
 * made it forks into it from then on, LeakSanitizer's tracer at exit
 * included (a fatal error once the namespace's PID 1 is gone). */
static int in_pidns(int argc, char **argv, int (*run)(int, char **))
{
	pid_t pid = fork();

	if (pid == 0) {
		if (unshare(CLONE_NEWPID) < 0) {
			perror("lib_app: unshare(CLONE_NEWPID)");
			_exit(1);
		}
		pid = fork();
		if (pid == 0)
			exit(run(argc, argv));
		_exit(exit_status(pid));
	}
	return exit_status(pid);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0;
	char name[32];

	if (!strcmp(mode, "pidns"))
		return in_pidns(argc - 1, argv + 1, main);
	if (!strcmp(mode, "order")) {
		double t0;

		check(t410_available(), 1, "t410_available");
		t0 = now_s();
		for (long i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "b%ld", i);
			bookmark(name);
			check(t410_trigger(), 0, "trigger");
		}
		printf("us/call %.1f\n", (now_s() - t0) * 1e6 / (2.0 * (double)(n ? n : 1)));
	} else if (!strcmp(mode, "threads")) {
		run_threads();
	} else if (!strcmp(mode, "fork")) {
		run_fork();
	} else if (!strcmp(mode, "chdir")) {
		run_chdir();
	} else if (!strcmp(mode, "cancel")) {
		run_cancel();
	} else if (!strcmp(mode, "closeall")) {
		run_closeall();
	} else if (!strcmp(mode, "bad")) {
		run_bad();
	} else if (!strcmp(mode, "reconnect")) {
		run_reconnect();
	} else if (!strcmp(mode, "outlive")) {
		run_outlive(n);
	} else if (!strcmp(mode, "memfds")) {
		run_memfds();
	} else if (!strcmp(mode, "gone")) {
		run_gone();
	} else if (!strcmp(mode, "fails")) {
		run_fails((int)n);
	} else if (!strcmp(mode, "stalled")) {
		run_stalled();
	} else if (!strcmp(mode, "gonecost")) {
		run_gonecost(n);
	} else if (!strcmp(mode, "noop")) {
		run_noop(n);
	} else if (!strcmp(mode, "exec")) {
		run_exec(argv[0]);
	} else if (!strcmp(mode, "afterexec")) {
		run_afterexec();
	} else if (!strcmp(mode, "readonce") && argc > 2) {
		run_readonce(argv[2]);
	} else {
		fprintf(stderr, "lib_app: unknown mode '%s'\n", mode);
		return 2;
	}
	return failures ? 1 : 0;
}
