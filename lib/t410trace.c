/* t410trace.c - libt410trace: bookmarks and triggers from an application.
 *
 * Lives inside someone else's program, so: exports only the t410_*
 * functions (built with -fvisibility=hidden), never prints, never raises
 * SIGPIPE, never exits, and costs nothing measurable when no recorder is
 * there. The environment is read once (pthread_once) and the answer kept
 * in an atomic: with T410TRACE_CONTROL unset each call is one load and a
 * branch (about 1.5 ns). With it set, one connection is opened lazily and kept; a
 * mutex serialises the exchanges, so replies cannot cross between threads;
 * each call waits for the recorder's reply (synchronous, so a bookmark
 * applies to every trigger after the call returns). Not async-signal-safe
 * (the mutex, t4_err's snprintf, stdio and malloc at the first call):
 * t410trace.h says so.
 *
 * The probe route: at a process's first call the library says "hello"
 * with the path of the file that holds it (found in /proc/self/maps); a
 * recorder that answers "uprobe" has a uprobe on t410__probe2 in that
 * file and hands over its probe page (control/probe.c, an fd with the
 * reply, mapped here). From then on each bookmark or trigger takes a
 * credit from the page and is one call of that empty function (the kernel
 * stamps the time, reads and checks the name): no socket, no round trip,
 * about 3 us instead of 25-40 us. Such a call is not synchronous (it
 * returns before the recorder has seen it: t410trace.h says what follows);
 * the credit is what makes its 0 mean "in the log" although nothing
 * answers it: each stands for a place the recorder reserved, so a call
 * made with one is in the log, as long as the recorder lives: before its
 * credit a call reads whether the recorder died without closing the page
 * (SIGKILL: a robust futex in the page that the kernel marks, one load,
 * control/probe.c) and then takes the route asked again, as for a stopped
 * recording; a recorder that dies after that read, or an older one that
 * does not say, loses the calls made on its credits; without one
 * (the recorder's queue is full) the call returns -EREMOTEIO at once, as a
 * refusal over the socket does, and the page counts it for the log. A call
 * that finds the recording stopped asks for the route again (forget_route),
 * as the socket route reconnects: a recorder started since at the same
 * path takes it, its page replacing the old one, which is unmapped once
 * no call of this process can be on it (on_page). Nothing is sent on the
 * socket as well, so nothing arrives twice. A name the recorder would
 * refuse still goes over the socket, to get the recorder's own refusal.
 * The probe is called through a volatile pointer, so no compiler can
 * inline, clone or specialise it away from its symbol. Any other answer
 * to "hello" (an older recorder's error included) keeps the socket.
 *
 * The one piece of process-wide state is the connection (a library for
 * apps has no context to hand around): one static struct, set up once,
 * guarded by its mutex. Fork: pthread_atfork handlers hold the mutex
 * across fork and drop the inherited connection in the child (a socket
 * shared with the parent would mix their replies); the pid check catches
 * children made without fork() handlers (raw clone); the route is asked
 * again in a child (the recorder lets processes through its uprobe one by
 * one), and a child whose inherited probe point calls a kernel trampoline
 * it did not inherit takes the socket (probe_callable). A command that could
 * not be sent, or that the recorder left unanswered by closing the
 * connection (-EPIPE: it closed our old connection, e.g. idle for
 * T4_CONTROL_IDLE_MS), is retried once on a fresh connection; any other transport failure drops the
 * connection so a late reply cannot be taken for the next one's. An app
 * that closed every fd may have given the connection's number to a file
 * of its own: the socket's inode is checked before each exchange
 * (still_ours), and a number that is not ours any more is forgotten,
 * never used or closed.
 */
#include "t410trace.h"
#include "control/control.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define T410_API __attribute__((visibility("default")))

/* The probe point (control.h): exported, so that the recorder finds it in
 * any build of this library, and kept as a real function: its arguments
 * go into the registers the uprobe reads. On x86_64 it starts with a
 * 5-byte NOP: Linux 6.18+ turns a uprobe on one into a call to its uprobe
 * trampoline (the `uprobe` syscall) instead of an int3 trap, several times
 * cheaper; older kernels trap on it as on anything else. */
T410_API void t410__probe2(int op, const char *name);
#if defined(__x86_64__)
__asm__(".text\n"
	".globl t410__probe2\n"
	".type t410__probe2, @function\n"
	"t410__probe2:\n"
	"\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n" /* nopl 0x0(%rax,%rax,1) */
	"\tret\n"
	".size t410__probe2, .-t410__probe2\n");
#else
__attribute__((noinline)) T410_API void t410__probe2(int op, const char *name)
{
	__asm__ __volatile__("" : : "r"(op), "r"(name) : "memory");
}
#endif

static void (*volatile probe)(int, const char *) = t410__probe2;

_Static_assert(sizeof(T410TRACE_CONTROL_ENV) == sizeof(T4_CONTROL_ENV),
	       "t410trace.h and control.h must name the same variable");

enum { CTX_UNKNOWN, CTX_OFF, CTX_ON };
enum { ROUTE_UNKNOWN, ROUTE_SOCKET, ROUTE_PROBE };
#define RETIRED_MAX 8 /* replaced pages kept while a call may be on them */

struct t410_ctx {
	pthread_once_t once;
	atomic_int state;      /* CTX_*; set once by init_once */
	pthread_mutex_t lock;  /* guards fd and pid, and the route's writes */
	int fd;                /* connection to the recorder, -1 if none */
	dev_t dev;             /* ... its socket, to know it is still ours */
	ino_t ino;
	pid_t pid;             /* process that opened fd */
	atomic_int route;      /* ROUTE_*: how this process reaches the recorder */
	_Atomic pid_t route_pid; /* ... asked by this process */
	struct t4_probe_page *_Atomic page; /* the recorder's credits (PROBE) */
	_Atomic pid_t page_pid; /* ... its recorder (SO_PEERCRED; 0: unknown) */
	atomic_int on_page;    /* calls between reading page and their last use of it */
	struct t4_probe_page *retired[RETIRED_MAX]; /* replaced, still mapped (lock) */
	int n_retired;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
};

static struct t410_ctx ctx = {
	.once = PTHREAD_ONCE_INIT,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
};

/* With ctx.lock held. The socket route is the answer of the recorder this
 * connection reached: a new connection asks for the route again (hello),
 * so that a process put on the socket by one recorder (one ending, its
 * page closed; one without BPF) takes the uprobe of the next one started
 * at the same path. */
static void drop_connection(void)
{
	int socket_route = ROUTE_SOCKET;

	if (ctx.fd >= 0)
		close(ctx.fd);
	ctx.fd = -1;
	atomic_compare_exchange_strong(&ctx.route, &socket_route, ROUTE_UNKNOWN);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&ctx.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&ctx.lock);
}

static void fork_child(void)
{
	drop_connection();
	atomic_store(&ctx.route, ROUTE_UNKNOWN);
	atomic_store(&ctx.on_page, 0); /* the calls of the parent's other threads are not ours */
	pthread_mutex_unlock(&ctx.lock);
}

static void init_once(void)
{
	const char *p = t4_env(T4_CONTROL_ENV);

	if (!p) {
		atomic_store_explicit(&ctx.state, CTX_OFF, memory_order_release);
		return;
	}
	/* read once, so resolved once: a relative path keeps naming the
	 * socket after the app (or a child it forks) changes directory */
	(void)t4_control_abspath(p, ctx.path, sizeof(ctx.path));
	/* Without the handlers a child could inherit a held lock; if they
	 * cannot be registered, the pid check still reconnects in a child. */
	(void)pthread_atfork(fork_prepare, fork_parent, fork_child);
	atomic_store_explicit(&ctx.state, CTX_ON, memory_order_release);
}

/* Whether a recorder is named; after the first call one load. */
static inline bool enabled(void)
{
	int s = atomic_load_explicit(&ctx.state, memory_order_acquire);

	if (__builtin_expect(s == CTX_UNKNOWN, 0)) {
		pthread_once(&ctx.once, init_once);
		s = atomic_load_explicit(&ctx.state, memory_order_acquire);
	}
	return s == CTX_ON;
}

/* With ctx.lock held: whether ctx.fd is still the socket we opened. An
 * app that closes every fd (as daemons do) may hand the number to a file
 * or socket of its own, which we must neither talk to nor close. */
static bool still_ours(void)
{
	struct stat st;

	return fstat(ctx.fd, &st) == 0 && st.st_dev == ctx.dev && st.st_ino == ctx.ino;
}

/* With ctx.lock held: make sure this process has a connection. */
static int connect_locked(void)
{
	pid_t me = getpid();
	struct stat st;
	int fd;

	if (ctx.pid != me) {
		drop_connection();
		ctx.pid = me;
	}
	if (ctx.fd >= 0 && !still_ours())
		ctx.fd = -1; /* closed by the app: the number is not ours any more */
	if (ctx.fd >= 0)
		return 0;
	fd = t4_control_connect(ctx.path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return t4_err(e, "control socket: fstat: %s", strerror(e));
	}
	ctx.fd = fd;
	ctx.dev = st.st_dev;
	ctx.ino = st.st_ino;
	return 0;
}

/* With ctx.lock held: send one command and wait for the answer (and the
 * fd it may carry, into *passed; NULL: none wanted). */
static int call_locked(const char *line, char *reply, size_t cap, int *passed)
{
	int err = connect_locked();

	if (err == 0)
		err = t4_control_exchange_fd(ctx.fd, line, reply, cap, passed);
	if (err == -EPIPE) { /* never arrived: one fresh connection */
		drop_connection();
		err = connect_locked();
		if (err == 0)
			err = t4_control_exchange_fd(ctx.fd, line, reply, cap, passed);
	}
	if (err < 0 && err != -EREMOTEIO && err != -EINVAL)
		drop_connection();
	return err;
}

/* Take ctx.lock for an exchange, waiting at most T4_CONTROL_TIMEOUT_MS:
 * a recorder that stopped answering (SIGSTOP, a hung machine) keeps each
 * exchange 5 s, and threads queued behind each other on the lock would
 * otherwise wait 5 s for every call ahead of theirs (a caller in a loop
 * of 8 threads waited 22 s while the recorder was stopped that long). So
 * a call returns within about twice the timeout whatever the threads.
 * 0, or -ETIMEDOUT. */
static int lock_bounded(void)
{
	struct timespec until;
	int rc;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += T4_CONTROL_TIMEOUT_MS / 1000;
	until.tv_nsec += (long)(T4_CONTROL_TIMEOUT_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while ((rc = pthread_mutex_timedlock(&ctx.lock, &until)) == EINTR)
		;
	if (rc == ETIMEDOUT)
		return t4_err(ETIMEDOUT, "the recorder did not answer another thread's call "
			      "within %d ms", T4_CONTROL_TIMEOUT_MS);
	return rc ? -rc : 0;
}

/* Send one command and wait for the answer. */
static int call(const char *line)
{
	char reply[T4_CONTROL_REPLY_MAX];
	int err;

	if ((err = lock_bounded()) < 0)
		return err;
	err = call_locked(line, reply, sizeof(reply), NULL);
	pthread_mutex_unlock(&ctx.lock);
	return err;
}

/* The file holding this library: the mapping of t410__probe2 in
 * /proc/self/maps. 0, or -ENOENT. */
static int own_file(char *buf, size_t cap)
{
	uintptr_t at = (uintptr_t)&t410__probe2;
	char *line = NULL;
	size_t n = 0;
	int rc = -ENOENT;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && rc < 0 && getline(&line, &n, f) > 0) {
		unsigned long lo, hi;
		int path = 0;
		if (sscanf(line, "%lx-%lx %*s %*x %*x:%*x %*u %n", &lo, &hi, &path) == 2 && path &&
		    at >= lo && at < hi && line[path] == '/') {
			line[path + strcspn(line + path, "\n")] = '\0';
			rc = snprintf(buf, cap, "%s", line + path) < (int)cap ? 0 : -ENAMETOOLONG;
		}
	}
	free(line);
	if (f)
		fclose(f);
	return rc;
}

/* Whether address at lies in an executable mapping of this process. */
static bool executable_at(uintptr_t at)
{
	char *line = NULL, perms[5] = "";
	size_t n = 0;
	bool x = false, found = false;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && !found && getline(&line, &n, f) > 0) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && at >= lo && at < hi) {
			found = true;
			x = perms[2] == 'x';
		}
	}
	free(line);
	if (f)
		fclose(f);
	return x;
}

/* Whether the probe point is now a call the kernel wrote, and where to.
 * x86_64: Linux 6.18+ turns a uprobe on a 5-byte NOP into a call (e8 rel32)
 * to a uprobe trampoline. arm64: a uprobe is a BRK, never a call. */
static bool probe_is_call(uintptr_t *target)
{
#if defined(__x86_64__)
	const volatile unsigned char *code = (const volatile unsigned char *)(uintptr_t)t410__probe2;
	unsigned char op[5];
	int32_t rel;

	for (int i = 0; i < 5; i++)
		op[i] = code[i];
	if (op[0] != 0xe8) /* the NOP, or the kernel's int3 */
		return false;
	memcpy(&rel, op + 1, sizeof(rel));
	*target = (uintptr_t)t410__probe2 + 5 + (uintptr_t)(intptr_t)rel;
	return true;
#else /* arm64 (and any other): a uprobe is a trap (BRK), never a call */
	(void)target;
	return false;
#endif
}

/* Whether this process may call the probe point. The kernel maps the
 * trampoline of a call it wrote into the calling process only, and fork
 * does not copy that mapping: a child forked after its parent's calls
 * inherits the call in the library's text but not its target, and calling
 * the probe would kill it (SIGSEGV). Such a child keeps the socket. */
static bool probe_callable(void)
{
	uintptr_t target;

	return !probe_is_call(&target) || executable_at(target);
}

/* With ctx.lock held, just after ctx.page was replaced: old (a stopped
 * recording's page) and those replaced before it are unmapped unless a
 * call of another thread may still be on one: each counts itself in
 * on_page before it reads ctx.page (both seq_cst), so with on_page 0 here
 * any call that starts later reads the new page. Otherwise they wait for
 * the next replacement; past RETIRED_MAX such pages one stays mapped (a
 * page per recording, as before: never one unmapped under a call). */
static void retire_page_locked(struct t4_probe_page *old)
{
	if (old && ctx.n_retired < RETIRED_MAX)
		ctx.retired[ctx.n_retired++] = old;
	if (atomic_load(&ctx.on_page) != 0)
		return;
	while (ctx.n_retired > 0)
		t4_probe_page_unmap(ctx.retired[--ctx.n_retired]);
}

/* With ctx.lock held: the PID of the recorder at the other end of the
 * connection (0 where it cannot be told: another PID namespace). */
static pid_t peer_pid_locked(void)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (ctx.fd < 0 || getsockopt(ctx.fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return 0;
	return cr.pid;
}

/* A recorder killed (SIGKILL) never closes its page. Its page says so
 * (t4_probe_stopped, before each call); an older recorder's does not, and
 * once its credits are spent every call was refused ("queue full") for
 * ever, a new recorder at the same path never asked. So a call refused
 * for want of a credit looks whether the page's recorder is gone (a
 * reused PID, or one in a PID namespace we cannot see: not seen) and
 * closes its page then: the call asks for the route again. */
static bool recorder_gone(struct t4_probe_page *page)
{
	pid_t pid = atomic_load(&ctx.page_pid);

	if (pid <= 0 || atomic_load(&ctx.page) != page || kill(pid, 0) == 0 || errno != ESRCH)
		return false;
	atomic_store(&page->closed, 1);
	return true;
}

/* With ctx.lock held: the probe page handed over as fd (mapped once per
 * recording: every hello of one recorder hands over the same one). A
 * stopped recording's page is replaced by the next recorder's (and
 * unmapped: retire_page_locked); a page that is itself closed (the
 * recorder is ending) is no route. */
static bool take_page_locked(int fd)
{
	struct t4_probe_page *p = atomic_load(&ctx.page), *q;

	if (fd < 0)
		return false;
	if ((!p || t4_probe_stopped(p)) && (q = t4_probe_page_map(fd))) {
		if (t4_probe_stopped(q)) {
			t4_probe_page_unmap(q);
		} else {
			atomic_store(&ctx.page_pid, peer_pid_locked());
			atomic_store(&ctx.page, q);
			retire_page_locked(p);
			p = q;
		}
	}
	close(fd);
	return p && !t4_probe_stopped(p);
}

/* With ctx.lock held: ask the recorder which route this process takes.
 * A refused hello (an older recorder) means the socket; so does "uprobe"
 * without a probe page. */
static int hello_locked(void)
{
	char line[T4_CONTROL_LINE_MAX + 1] = "hello", file[PATH_MAX];
	char reply[T4_CONTROL_REPLY_MAX];
	int err, passed = -1;

	/* Connected first: with no recorder there (the variable left set, the
	 * recorder gone) each call asks again, and must cost a failed connect,
	 * not a read of /proc/self/maps (thousands of lines in a large app)
	 * under the lock every thread takes. */
	if ((err = connect_locked()) < 0)
		return err;
	/* Plain "hello" (no file) is answered "ok socket". */
	if (probe_callable() && own_file(file, sizeof(file)) == 0 && strlen(file) < sizeof(line) - 6)
		snprintf(line, sizeof(line), "hello %s", file);
	err = call_locked(line, reply, sizeof(reply), &passed);
	if (err < 0 && err != -EREMOTEIO)
		return err;
	if (err == 0 && !strcmp(reply, "ok uprobe"))
		return take_page_locked(passed) ? ROUTE_PROBE : ROUTE_SOCKET;
	if (passed >= 0) /* with another answer: no page, and not ours to keep */
		close(passed);
	return ROUTE_SOCKET;
}

/* One call through the probe on page, with a credit: 0 (it will be in the
 * log), or -EREMOTEIO at once when the recorder has no room or has
 * stopped. */
static int probe_call(struct t4_probe_page *page, int op, const char *name)
{
	bool wake = false;
	int rc = t4_probe_claim(page, !name, &wake);
	char what[96] = "trigger";

	if (name)
		snprintf(what, sizeof(what), "bookmark '%s'", name);
	if (rc == -ESHUTDOWN)
		return t4_err(EREMOTEIO, "error: %s: the recording has stopped", what);
	if (rc < 0)
		return t4_err(EREMOTEIO, "error: %s: the recorder's queue is full; try again "
			      "after its next trigger", what);
	probe(op | (wake ? T4_PROBE_WAKE : 0), name);
	t4_probe_done(page);
	return 0;
}

/* How this process reaches the recorder: asked once per process. */
static int route(void)
{
	pid_t me = getpid();
	int r = atomic_load_explicit(&ctx.route, memory_order_acquire);

	if (r != ROUTE_UNKNOWN && atomic_load_explicit(&ctx.route_pid, memory_order_relaxed) == me)
		return r;
	if ((r = lock_bounded()) < 0)
		return r;
	r = atomic_load(&ctx.route);
	if (r == ROUTE_UNKNOWN || atomic_load(&ctx.route_pid) != me) {
		r = hello_locked();
		if (r > 0) {
			atomic_store(&ctx.route_pid, me);
			atomic_store_explicit(&ctx.route, r, memory_order_release);
		}
	}
	pthread_mutex_unlock(&ctx.lock);
	return r;
}

/* The recording of the probe page a call found has stopped: forget the
 * route (unless a call of another thread has asked again since), so that
 * the process asks for one again, as the socket route reconnects: a
 * recorder started since at the same path answers, and with none there
 * the call fails as on the socket (-ECONNREFUSED, -ENOENT). */
static int forget_route(const struct t4_probe_page *stopped)
{
	int rc = lock_bounded();

	if (rc < 0)
		return rc;
	if (atomic_load(&ctx.page) == stopped)
		atomic_store(&ctx.route, ROUTE_UNKNOWN);
	pthread_mutex_unlock(&ctx.lock);
	return route();
}

/* One call through the page in ctx.page, counted in on_page from before
 * it reads the page until its last use of it (retire_page_locked unmaps
 * no page a call may be on). With if_open, a stopped recording's page (or
 * a dead recorder's) is not called: -ESHUTDOWN, *used the page (to
 * compare, never to read). */
static int call_on_page(int op, const char *name, bool if_open, struct t4_probe_page **used)
{
	struct t4_probe_page *page;
	int rc = -ESHUTDOWN;

	atomic_fetch_add(&ctx.on_page, 1);
	page = atomic_load(&ctx.page);
	if (!if_open || !t4_probe_stopped(page)) {
		rc = probe_call(page, op, name);
		if (rc == -EREMOTEIO && if_open && recorder_gone(page))
			rc = -ESHUTDOWN;
	}
	atomic_fetch_sub(&ctx.on_page, 1);
	*used = page;
	return rc;
}

/* A call while the route is the probe's: through the probe, or, when its
 * recording has stopped, through the route asked again (once): *r says
 * which (ROUTE_SOCKET: the caller sends it on the socket). */
static int probe_route_call(int op, const char *name, int *r)
{
	struct t4_probe_page *page;
	int rc = call_on_page(op, name, true, &page);

	if (rc != -ESHUTDOWN)
		return rc;
	if ((*r = forget_route(page)) != ROUTE_PROBE)
		return *r < 0 ? *r : 0;
	return call_on_page(op, name, false, &page);
}

static void clear_errmsg(void)
{
	(void)t4_err(EINVAL, "%s", "");
}

static int bookmark_on(const char *name)
{
	char line[T4_CONTROL_LINE_MAX + 1];
	int r;

	if (!name)
		return t4_err(EINVAL, "t410_bookmark: no name given");
	if (strlen(name) >= T4_CONTROL_NAME_MAX)
		return t4_err(EINVAL, "t410_bookmark: name longer than %d characters",
			      T4_CONTROL_NAME_MAX - 1);
	if ((r = route()) < 0)
		return r;
	if (r == ROUTE_PROBE && t4_control_name_ok(name)) {
		int rc = probe_route_call(T4_PROBE_BOOKMARK, name, &r);
		if (r != ROUTE_SOCKET)
			return rc;
	}
	snprintf(line, sizeof(line), "bookmark %s", name);
	return call(line);
}

static int trigger_on(const char *unused)
{
	int r;

	(void)unused;
	if ((r = route()) < 0)
		return r;
	if (r == ROUTE_PROBE) {
		int rc = probe_route_call(T4_PROBE_TRIGGER, NULL, &r);
		if (r != ROUTE_SOCKET)
			return rc;
	}
	return call("trigger");
}

static int available_on(const char *unused)
{
	int err;

	(void)unused;
	if ((err = lock_bounded()) < 0)
		return err;
	err = connect_locked();
	pthread_mutex_unlock(&ctx.lock);
	return err < 0 ? err : 1;
}

/* Run one call with a recorder named. It holds ctx.lock across
 * cancellation points (connect, send, poll, recvmsg): a thread cancelled
 * there would die holding it, every later call would time out and the
 * app's fork() would hang in fork_prepare. So a call is not cancelled:
 * a cancel acts at the thread's next cancellation point after it. */
static int uncancelled(int (*fn)(const char *), const char *arg)
{
	int old, r;

	clear_errmsg();
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	r = fn(arg);
	pthread_setcancelstate(old, NULL);
	if (r >= 0) /* a try that failed on the way (a resend) is no failure */
		clear_errmsg();
	return r;
}

T410_API int t410_bookmark(const char *name)
{
	return enabled() ? uncancelled(bookmark_on, name) : 0;
}

T410_API int t410_trigger(void)
{
	return enabled() ? uncancelled(trigger_on, NULL) : 0;
}

T410_API int t410_available(void)
{
	return enabled() ? uncancelled(available_on, NULL) : 0;
}

T410_API const char *t410_errmsg(void)
{
	return t4_errmsg();
}
