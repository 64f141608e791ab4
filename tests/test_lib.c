/* test_lib.c - libt410trace as an application sees it (suite lib).
 *
 * tests/apps/lib_app.c is compiled at test time with the target's compiler
 * (t4t_cc(): $T4_CC, else cc) against $T4_OUT/libt410trace.so and
 * include/t410trace.h only, then run with T410TRACE_CONTROL naming a fake
 * recorder in this process. Skipped when T4_OUT is unset (run through
 * `make check`) or no compiler is found.
 */
#include "tests/apps/fake_recorder.h"
#include "probe.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

struct app {
	struct fake_rec rec;
	char dir[PATH_MAX]; /* the app and the library's soname */
	char bin[PATH_MAX + 32];
	char out[4096], err[4096];
};

/* The repository root: the current directory under make check, else the
 * parent of T4_OUT. */
static void repo_root(char *buf, size_t cap)
{
	char tmp[PATH_MAX];

	if (access("tests/apps/lib_app.c", R_OK) == 0) {
		snprintf(buf, cap, ".");
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s", getenv("T4_OUT"));
	snprintf(buf, cap, "%s", dirname(tmp));
}

/* Whether the library was built with sanitizers (the app must be too). */
static bool solib_sanitized(const char *solib)
{
	char out[64];

	return cli_run(out, sizeof(out), "nm -D --undefined-only '%s' | grep -q __asan_", solib) == 0;
}

/* Compile src (a path under the repo) into a->dir/name with compiler cc
 * (t4t_cc() or t4t_cxx(): the target under test) and its flags; a->dir is
 * where programs can run (t4t_exec_tmpdir: $TMPDIR may be mounted noexec). */
static void compile(struct app *a, const char *cc, const char *flags, const char *src,
		    const char *name)
{
	const char *out = getenv("T4_OUT");
	char root[PATH_MAX], solib[PATH_MAX + 32];
	int rc;

	snprintf(solib, sizeof(solib), "%s/libt410trace.so", out);
	if (access(solib, R_OK))
		cr_skip_test("%s not built", solib);
	repo_root(root, sizeof(root));
	t4t_exec_tmpdir(a->dir, sizeof(a->dir), "t4lib");
	snprintf(a->bin, sizeof(a->bin), "%s/%s", a->dir, name);
	/* The app needs the soname (libt410trace.so.0) at run time, as it
	 * would after make install: link it next to the app. */
	rc = run_shell(a->out, a->err, sizeof(a->out),
		       "ln -sf '%s' '%s/libt410trace.so.0' && "
		       "%s %s -Wall -Wextra -Werror -I'%s/include' %s '%s/%s' -o '%s' '%s' "
		       "-Wl,-rpath,'%s' -pthread",
		       solib, a->dir,
		       cc, flags, root, solib_sanitized(solib) ? "-fsanitize=address,undefined" : "",
		       root, src, a->bin, solib, a->dir);
	cr_assert_eq(rc, 0, "compiling %s failed: %s", src, a->err);
}

static void app_close(struct app *a)
{
	fake_close(&a->rec);
	if (a->dir[0])
		cr_assert_eq(t4_rmtree(a->dir), 0, "%s", t4_errmsg());
}

/* Skip (before making anything) when there is no library to test. */
static void need_solib(void)
{
	if (!getenv("T4_OUT"))
		cr_skip_test("T4_OUT not set (run through make check)");
}

static void app_open(struct app *a)
{
	need_solib();
	memset(a, 0, sizeof(*a));
	fake_open(&a->rec);
	compile(a, t4t_cc(), "-std=c17", "tests/apps/lib_app.c", "lib_app");
}

/* Run the app with T410TRACE_CONTROL set to the fake recorder. */
static int app_run(struct app *a, const char *args)
{
	return run_shell(a->out, a->err, sizeof(a->out),
			 "env T410TRACE_CONTROL='%s' '%s' %s", a->rec.path, a->bin, args);
}

static void expect_log(struct app *a, const char *want)
{
	char log[sizeof(a->rec.log)];

	fake_log(&a->rec, log, sizeof(log));
	cr_assert_str_eq(log, want);
}

Test(lib, exports_only_t410_symbols)
{
	const char *out = getenv("T4_OUT");
	const char *want[] = { "t410_bookmark", "t410_trigger", "t410_available", "t410_errmsg",
			       "t410__probe2" /* the recorder's uprobe point */ };
	static char syms[1 << 16];
	char sym[200];
	int found = 0, total = 0;

	if (!out)
		cr_skip_test("T4_OUT not set (run through make check)");
	cr_assert_eq(cli_run(syms, sizeof(syms), "nm -D --defined-only '%s/libt410trace.so'", out), 0);
	for (char *line = strtok(syms, "\n"); line; line = strtok(NULL, "\n")) {
		char addr[40], type[4];

		if (sscanf(line, "%39s %3s %199s", addr, type, sym) != 3)
			continue;
		total++;
		cr_expect(!strncmp(sym, "t410_", 5), "exported: %s", sym);
		for (size_t i = 0; i < T4_ARRAY_LEN(want); i++)
			found += !strcmp(sym, want[i]);
	}
	cr_assert_eq(found, 5);
	cr_assert_eq(total, 5);
}

Test(lib, bookmarks_arrive_in_order)
{
	struct app a;
	char want[2048] = "";

	app_open(&a);
	cr_assert_eq(app_run(&a, "order 50"), 0, "%s", a.err);
	cr_log_info("libt410trace with a recorder: %s", a.out);
	for (int i = 0; i < 50; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want),
			 "bookmark b%d;trigger;", i);
	expect_log(&a, want);
	app_close(&a);
}

Test(lib, threads_serialised)
{
	struct app a;
	char log[sizeof(a.rec.log)], name[32];

	app_open(&a);
	cr_assert_eq(app_run(&a, "threads"), 0, "%s", a.err);
	fake_log(&a.rec, log, sizeof(log));
	/* every bookmark arrived once, each thread's in its own order */
	for (int t = 0; t < 4; t++) {
		const char *prev = log;

		for (int i = 0; i < 25; i++) {
			const char *at;

			snprintf(name, sizeof(name), "bookmark t%d_%d;", t, i);
			at = strstr(log, name);
			cr_assert_not_null(at, "%s missing", name);
			cr_assert(at >= prev, "%s out of order", name);
			prev = at;
		}
	}
	cr_assert_eq(a.rec.calls, 100);
	app_close(&a);
}

Test(lib, fork_child_has_own_connection)
{
	struct app a;

	app_open(&a);
	cr_assert_eq(app_run(&a, "fork"), 0, "%s", a.err);
	expect_log(&a, "bookmark parent1;bookmark child;bookmark parent2;");
	app_close(&a);
}

/* T410TRACE_CONTROL relative (as `record --control rec.sock` is typed):
 * the app changed directory after its first call, and the child it then
 * forked looked for the socket in the new directory (-ENOENT). */
Test(lib, a_relative_path_survives_chdir)
{
	struct app a;

	app_open(&a);
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out),
			       "cd '%s' && env T410TRACE_CONTROL=ctl.sock '%s' chdir", a.rec.dir,
			       a.bin), 0, "%s", a.err);
	expect_log(&a, "bookmark d1;bookmark d2;bookmark d3;");
	app_close(&a);
}

/* A thread cancelled in the middle of a call (at its connect, poll or
 * recvmsg: cancellation points) died holding the library's lock: every
 * later call timed out (-ETIMEDOUT after 5 s) and the app's fork() hung
 * in the atfork handler. */
Test(lib, a_cancelled_thread_leaves_no_lock_held, .timeout = 60)
{
	struct app a;

	app_open(&a);
	cr_assert_eq(app_run(&a, "cancel"), 0, "%s", a.err);
	expect_log(&a, "bookmark k1;bookmark k2;");
	app_close(&a);
}

/* The app closed the library's connection and a socket of its own got
 * that number: the library talked to the app's socket (its line sent
 * there, the app's data read as the reply, 0 returned, nothing logged). */
Test(lib, a_reused_fd_number_is_not_the_connection)
{
	struct app a;

	app_open(&a);
	cr_assert_eq(app_run(&a, "closeall"), 0, "%s", a.err);
	expect_log(&a, "bookmark c1;bookmark c2;");
	app_close(&a);
}

Test(lib, refusals_reported_connection_kept)
{
	struct app a;

	app_open(&a);
	cr_assert_eq(app_run(&a, "bad"), 0, "%s", a.err);
	expect_log(&a, "bookmark good1;");
	app_close(&a);
}

/* The app in mode reconnect: bookmark r1, then, once a line comes on its
 * stdin (pclose(the returned stream) sends it), r2. Returns once r1 is in. */
static FILE *reconnect_app(struct app *a)
{
	char cmd[5 * PATH_MAX], log[64] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "env T410TRACE_CONTROL='%s' '%s' reconnect >'%s/out' 2>'%s/err'",
		 a->rec.path, a->bin, a->rec.dir, a->rec.dir);
	p = popen(cmd, "w");
	cr_assert_not_null(p);
	for (int i = 0; i < 10000 && !strstr(log, "r1"); i++) { /* 10 s at most */
		fake_log(&a->rec, log, sizeof(log));
		usleep(1000);
	}
	cr_assert_str_eq(log, "bookmark r1;");
	return p;
}

Test(lib, reconnects_after_recorder_restart)
{
	struct app a;
	FILE *p;

	app_open(&a);
	p = reconnect_app(&a);
	t4_control_close(a.rec.ctl); /* the app's connection dies with it */
	cr_assert_eq(t4_control_open(&a.rec.ctl, a.rec.path, &fake_ops, &a.rec), 0);
	fputs("go\n", p);
	cr_assert_eq(pclose(p), 0);
	expect_log(&a, "bookmark r1;bookmark r2;");
	app_close(&a);
}

/* A recorder that answers hello with the probe page hello_fd (no uprobe
 * behind it: a call of the probe point is the empty function's, seen only
 * as the credit it took). */
static int hello_fd = -1;

static int fake_hello(void *ud, int pid, const char *path, int *fd)
{
	(void)pid;
	(void)path;
	fake_note(ud, "hello", NULL);
	*fd = hello_fd;
	return 1;
}

/* A recorder at a->rec.path on the uprobe route, with 10 credits lent on
 * a new page (*page, its fd in hello_fd). */
static void probe_recorder(struct app *a, struct t4_probe_page **page)
{
	struct t4_control_ops ops = fake_ops;

	ops.hello = fake_hello;
	cr_assert_eq(t4_probe_page_create(page, &hello_fd), 0, "%s", t4_errmsg());
	t4_probe_grant(*page, 10);
	cr_assert_eq(t4_control_open(&a->rec.ctl, a->rec.path, &ops, &a->rec), 0, "%s",
		     t4_errmsg());
}

/* Wait (10 s at most) until a call took a credit of page's 10 and has
 * returned (it takes the credit before it calls the probe point and
 * leaves the page busy until it returns: under qemu-user that is long
 * enough to be seen). */
static void one_credit_taken(struct t4_probe_page *page)
{
	for (int i = 0; i < 10000 && (atomic_load(&page->credit) == 10 ||
				      atomic_load(&page->busy) != 0); i++)
		usleep(1000);
	cr_assert_eq(atomic_load(&page->credit), 9);
	cr_assert_eq(atomic_load(&page->busy), 0);
}

/* On the uprobe route, a process kept its stopped recorder's page: every
 * call after that recorder ended was -EREMOTEIO ("the recording has
 * stopped"), even once a new recorder listened at the same path, where
 * the socket route reconnects. It asks for its route again: r2 goes
 * through the new recorder's page. */
Test(lib, a_new_recorder_takes_over_the_uprobe_route)
{
	struct t4_probe_page *first, *second;
	char cmd[5 * PATH_MAX], log[64];
	struct app a;
	FILE *p;

	app_open(&a);
	t4_control_close(a.rec.ctl);
	probe_recorder(&a, &first);
	snprintf(cmd, sizeof(cmd), "env T410TRACE_CONTROL='%s' '%s' reconnect >'%s/out' 2>'%s/err'",
		 a.rec.path, a.bin, a.rec.dir, a.rec.dir);
	p = popen(cmd, "w");
	cr_assert_not_null(p);
	one_credit_taken(first); /* r1, through the probe */
	t4_probe_close(first);   /* the recording ends, then its recorder */
	t4_control_close(a.rec.ctl);
	close(hello_fd);
	probe_recorder(&a, &second);
	fputs("go\n", p);
	int rc = pclose(p);
	fake_log(&a.rec, log, sizeof(log));
	run_shell(a.out, a.err, sizeof(a.out), "cat '%s/err'", a.rec.dir);
	cr_assert_eq(rc, 0, "%s", a.out);
	one_credit_taken(second); /* r2, through the new page */
	cr_assert_str_eq(log, "hello;hello;");
	close(hello_fd);
	t4_probe_page_unmap(first);
	t4_probe_page_unmap(second);
	app_close(&a);
}

/* A probe page whose size is not sealed (a memfd anyone reaching it, e.g.
 * through /proc/PID/fd, may truncate): the app mapped it, and once it was
 * truncated the app's next call read past the file's end and the app died
 * of SIGBUS. Such a page is not taken: the calls keep the socket. */
Test(lib, a_probe_page_that_may_shrink_is_not_mapped)
{
	struct t4_control_ops ops = fake_ops;
	struct t4_probe_page *page;
	char cmd[5 * PATH_MAX], log[64] = "";
	struct app a;
	FILE *p;

	app_open(&a);
	t4_control_close(a.rec.ctl);
	hello_fd = memfd_create("t410trace-probe", MFD_CLOEXEC); /* no seals */
	cr_assert_geq(hello_fd, 0);
	cr_assert_eq(ftruncate(hello_fd, 4096), 0);
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, hello_fd, 0);
	cr_assert_neq(page, MAP_FAILED);
	atomic_store(&page->magic, T4_PROBE_MAGIC);
	t4_probe_grant(page, 10);
	ops.hello = fake_hello;
	cr_assert_eq(t4_control_open(&a.rec.ctl, a.rec.path, &ops, &a.rec), 0, "%s",
		     t4_errmsg());
	snprintf(cmd, sizeof(cmd), "env T410TRACE_CONTROL='%s' '%s' reconnect >'%s/out' 2>'%s/err'",
		 a.rec.path, a.bin, a.rec.dir, a.rec.dir);
	p = popen(cmd, "w");
	cr_assert_not_null(p);
	/* r1 made, through the page or the socket (10 s at most) */
	for (int i = 0; i < 10000 && !strstr(log, "bookmark r1") &&
			(atomic_load(&page->credit) == 10 || atomic_load(&page->busy) != 0); i++) {
		usleep(1000);
		fake_log(&a.rec, log, sizeof(log));
	}
	cr_assert_eq(ftruncate(hello_fd, 0), 0);
	fputs("go\n", p);
	int rc = pclose(p);
	run_shell(a.out, a.err, sizeof(a.out), "cat '%s/err'", a.rec.dir);
	cr_assert_eq(rc, 0, "the app died (%#x): %s", rc, a.out);
	expect_log(&a, "hello;bookmark r1;bookmark r2;");
	munmap(page, 4096);
	close(hello_fd);
	app_close(&a);
}

/* A peer at the path that answers every line "ok" and hello "ok socket"
 * with an fd passed along (a memfd): not a recorder's answer, but one any
 * program of this user could give. Serves one connection of lfd. */
static void *fd_giver(void *arg)
{
	int lfd = *(int *)arg, c = accept(lfd, NULL, NULL), mfd = memfd_create("t4-given", 0);
	char buf[512];
	size_t len = 0;
	ssize_t n;

	while (c >= 0 && mfd >= 0 && (n = recv(c, buf + len, sizeof(buf) - 1 - len, 0)) > 0) {
		char *nl;

		len += (size_t)n;
		while ((nl = memchr(buf, '\n', len))) {
			bool hello = !strncmp(buf, "hello", 5);
			union {
				struct cmsghdr h;
				char b[CMSG_SPACE(sizeof(int))];
			} ctl = { 0 };
			struct iovec iov = { .iov_base = hello ? "ok socket\n" : "ok\n",
					     .iov_len = hello ? 10 : 3 };
			struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

			if (hello) {
				m.msg_control = ctl.b;
				m.msg_controllen = sizeof(ctl.b);
				CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
				CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
				CMSG_FIRSTHDR(&m)->cmsg_len = CMSG_LEN(sizeof(int));
				memcpy(CMSG_DATA(CMSG_FIRSTHDR(&m)), &mfd, sizeof(int));
			}
			if (sendmsg(c, &m, MSG_NOSIGNAL) < 0)
				break;
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len);
		}
	}
	if (mfd >= 0)
		close(mfd);
	if (c >= 0)
		close(c);
	return NULL;
}

/* An fd passed along with an answer to hello other than "ok uprobe" (a
 * peer that is not a recorder) stayed open in the app for ever: one more
 * at each new connection. The library closes it. */
Test(lib, an_fd_passed_with_a_socket_answer_is_closed)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	pthread_t t;
	struct app a;
	int lfd;

	app_open(&a);
	t4_control_close(a.rec.ctl);
	a.rec.ctl = NULL;
	cr_assert_lt(strlen(a.rec.path), sizeof(sa.sun_path)); /* fake_open checked */
	memcpy(sa.sun_path, a.rec.path, strlen(a.rec.path) + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(lfd, 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(lfd, 1), 0);
	cr_assert_eq(pthread_create(&t, NULL, fd_giver, &lfd), 0);
	int rc = app_run(&a, "memfds");
	pthread_join(t, NULL);
	close(lfd);
	cr_assert_eq(rc, 0, "%s", a.err);
	cr_assert_str_eq(a.out, "memfds=0");
	app_close(&a);
}

/* The recorder's page cannot be truncated under the apps that map it. */
Test(lib, the_recorders_probe_page_cannot_shrink)
{
	struct t4_probe_page *page;
	int fd;

	cr_assert_eq(t4_probe_page_create(&page, &fd), 0, "%s", t4_errmsg());
	cr_assert_neq(ftruncate(fd, 0), 0);
	cr_assert_eq(errno, EPERM);
	close(fd);
	t4_probe_page_unmap(page);
}

/* A process that outlives several recorders on the uprobe route kept the
 * page of every one it had talked to mapped (one page per recording:
 * replaced, never unmapped, for fear of a call of another thread still on
 * it). A page no call is on is unmapped when the next recorder's replaces
 * it: after 4 recorders one page is mapped, not 4. */
Test(lib, a_process_outliving_recorders_keeps_one_probe_page)
{
	enum { RECORDERS = 4 };
	struct t4_probe_page *pages[RECORDERS];
	char cmd[5 * PATH_MAX];
	struct app a;
	FILE *p;

	app_open(&a);
	t4_control_close(a.rec.ctl);
	probe_recorder(&a, &pages[0]);
	snprintf(cmd, sizeof(cmd), "env T410TRACE_CONTROL='%s' '%s' outlive %d >'%s/out' 2>'%s/err'",
		 a.rec.path, a.bin, RECORDERS, a.rec.dir, a.rec.dir);
	p = popen(cmd, "w");
	cr_assert_not_null(p);
	for (int i = 0; i < RECORDERS; i++) {
		if (i) { /* the recording ends, then its recorder; a new one */
			t4_probe_close(pages[i - 1]);
			t4_control_close(a.rec.ctl);
			close(hello_fd);
			probe_recorder(&a, &pages[i]);
		}
		fputs("go\n", p);
		fflush(p);
		one_credit_taken(pages[i]); /* o<i>, through this recorder's page */
	}
	int rc = pclose(p);
	run_shell(a.out, a.err, sizeof(a.out), "cat '%s/err' '%s/out'", a.rec.dir, a.rec.dir);
	cr_assert_eq(rc, 0, "%s", a.out);
	cr_assert_str_eq(a.out, "probe-maps=1");
	close(hello_fd);
	for (int i = 0; i < RECORDERS; i++)
		t4_probe_page_unmap(pages[i]);
	app_close(&a);
}

/* A process put on the socket route by one recorder (there: a recorder
 * without the uprobe; likewise one ending, its page closed) kept the
 * socket for every recorder after it at the same path, uprobe or not
 * (8 recorders in a row: after the first none saw a call of its uprobe).
 * A new connection asks for the route again: o1 reaches the new recorder
 * over the socket that reconnects, o2 through its page. */
Test(lib, a_process_on_the_socket_route_takes_a_new_recorders_uprobe)
{
	struct t4_probe_page *page;
	char cmd[5 * PATH_MAX], log[64] = "";
	struct app a;
	FILE *p;

	app_open(&a);
	snprintf(cmd, sizeof(cmd), "env T410TRACE_CONTROL='%s' '%s' outlive 3 >'%s/out' 2>'%s/err'",
		 a.rec.path, a.bin, a.rec.dir, a.rec.dir);
	p = popen(cmd, "w");
	cr_assert_not_null(p);
	fputs("go\n", p); /* o0: "ok socket", then the bookmark */
	fflush(p);
	for (int i = 0; i < 10000 && !strstr(log, "o0"); i++) { /* 10 s at most */
		fake_log(&a.rec, log, sizeof(log));
		usleep(1000);
	}
	cr_assert_str_eq(log, "bookmark o0;");
	t4_control_close(a.rec.ctl); /* the app's connection dies with it */
	probe_recorder(&a, &page);
	fputs("go\ngo\n", p); /* o1, o2 */
	int rc = pclose(p);
	run_shell(a.out, a.err, sizeof(a.out), "cat '%s/err'", a.rec.dir);
	cr_assert_eq(rc, 0, "%s", a.out);
	expect_log(&a, "bookmark o0;bookmark o1;hello;");
	cr_assert_eq(atomic_load(&page->credit), 9); /* o2 */
	close(hello_fd);
	t4_probe_page_unmap(page);
	app_close(&a);
}

/* The recorder to kill: a child (dying with the test) serving a.rec.path
 * with the probe page first (credits lent), holding its robust mutex with
 * hold (as record's drain thread does), until killed. */
static pid_t killable_recorder(struct app *a, struct t4_probe_page *first, bool hold)
{
	pid_t rec, parent = getpid();
	int sync[2];
	char ready;

	cr_assert_eq(pipe(sync), 0);
	rec = fork();
	cr_assert_geq(rec, 0);
	if (rec == 0) {
		struct t4_control_ops ops = fake_ops;

		t4t_die_with_parent(parent);
		ops.hello = fake_hello;
		if (hold)
			t4_probe_hold(first);
		if ((hold && !atomic_load(&first->alive_at)) ||
		    t4_control_open(&a->rec.ctl, a->rec.path, &ops, &a->rec) < 0 ||
		    write(sync[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(sync[1]);
	cr_assert_eq(read(sync[0], &ready, 1), 1, "the recorder to kill did not start");
	close(sync[0]);
	return rec;
}

/* A process on the uprobe route of a recorder (with `credits` lent, held
 * or not: killable_recorder) that is killed (SIGKILL) after the app's o0
 * took a credit; then a new recorder at the same path: o1 must go through
 * its page, the dead one's credits left as they were. The app runs as
 * `wrap` says (e.g. in a new PID namespace: "pidns"; "" plainly). */
static void killed_recorder(const char *wrap, int credits, bool hold)
{
	struct t4_probe_page *first, *second;
	char cmd[5 * PATH_MAX];
	struct app a;
	pid_t rec;
	FILE *p;

	app_open(&a);
	t4_control_close(a.rec.ctl);
	a.rec.ctl = NULL;
	cr_assert_eq(t4_probe_page_create(&first, &hello_fd), 0, "%s", t4_errmsg());
	t4_probe_grant(first, credits);
	rec = killable_recorder(&a, first, hold);
	snprintf(cmd, sizeof(cmd), "env T410TRACE_CONTROL='%s' '%s' %s outlive 2 >'%s/out' 2>'%s/err'",
		 a.rec.path, a.bin, wrap, a.rec.dir, a.rec.dir);
	p = popen(cmd, "w");
	cr_assert_not_null(p);
	fputs("go\n", p); /* o0: through the first page */
	fflush(p);
	for (int i = 0; i < 10000 && (atomic_load(&first->credit) != credits - 1 ||
				      atomic_load(&first->busy) != 0); i++) /* 10 s at most */
		usleep(1000);
	cr_assert_eq(atomic_load(&first->credit), credits - 1);
	cr_assert_eq(kill(rec, SIGKILL), 0);
	cr_assert_eq(waitpid(rec, NULL, 0), rec);
	close(hello_fd);
	probe_recorder(&a, &second);
	fputs("go\n", p); /* o1 */
	int rc = pclose(p);
	run_shell(a.out, a.err, sizeof(a.out), "cat '%s/err'", a.rec.dir);
	cr_assert_eq(rc, 0, "%s", a.out);
	one_credit_taken(second); /* o1, through the new page */
	cr_assert_eq(atomic_load(&first->credit), credits - 1, "o1 took a dead recorder's credit");
	close(hello_fd);
	t4_probe_page_unmap(first);
	t4_probe_page_unmap(second);
	app_close(&a);
}

/* A recorder killed with SIGKILL never closed its probe page: a process
 * on its uprobe route spent the credits left, then had every call refused
 * ("the recorder's queue is full") for ever, a new recorder at the same
 * path never asked. A recorder that does not say when it dies (an older
 * one: no robust mutex held) with 1 credit, killed after o0; o1 finds no
 * credit and that recorder gone, and goes through the new recorder's page. */
Test(lib, a_killed_recorders_page_gives_way_to_the_next_recorder)
{
	killed_recorder("", 1, false);
}

/* A recorder killed with SIGKILL while it still had credits lent: the
 * calls that found one returned 0 (in the log) and were lost, up to 16384
 * of them, before the first refusal looked for the recorder. Its page
 * says it died (the robust mutex its drain thread held, control/probe.c):
 * o1 is not made on it but goes to the new recorder at the same path. */
Test(lib, a_recorder_killed_with_credits_left_loses_no_call)
{
	t4t_need_robust_futex();
	killed_recorder("", 10, true);
}

/* The same with the app in another PID namespace than the recorder's:
 * there SO_PEERCRED gives no PID (0), and no call could tell the recorder
 * was gone, even once the credits were spent. */
Test(lib, a_recorder_killed_in_another_pid_namespace_loses_no_call)
{
	t4t_need_robust_futex();
	t4t_need_pidns();
	killed_recorder("pidns", 10, true);
}

/* The recorder closes a connection idle past its timeout without a word;
 * the next call resends on a fresh one, and nothing arrives twice. That
 * call succeeds, so t410_errmsg() is "" after it (it kept "the recorder
 * closed the connection", the failure of the first try: lib_app checks). */
Test(lib, resends_after_an_idle_close)
{
	struct app a;
	FILE *p;

	app_open(&a);
	t4_control_idle(a.rec.ctl, 50);
	p = reconnect_app(&a);
	usleep(300000); /* idle for 6 timeouts: closed */
	fputs("go\n", p);
	cr_assert_eq(pclose(p), 0);
	expect_log(&a, "bookmark r1;bookmark r2;");
	fake_close(&a.rec);
}

Test(lib, recorder_gone)
{
	struct app a;
	char args[200];

	app_open(&a);
	snprintf(args, sizeof(args), "gone");
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out),
			       "env T410TRACE_CONTROL='%s/nobody' '%s' %s", a.rec.dir, a.bin, args),
		     0, "%s", a.err);
	expect_log(&a, "");
	app_close(&a);
}

/* A peer at a Unix socket path that answers every connection's first
 * bytes with a 600-byte line: no recorder's (LIBRARY.md: at most 511). */
static int unix_listen(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_lt(strlen(path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", strerror(errno));
	cr_assert_eq(listen(fd, 16), 0);
	return fd;
}

static void *long_replies(void *arg)
{
	int lfd = *(int *)arg, c;
	char buf[1024], line[601];

	memset(line, 'x', 600);
	line[600] = '\n';
	while ((c = accept(lfd, NULL, NULL)) >= 0) {
		if (recv(c, buf, sizeof(buf), 0) > 0 && send(c, line, sizeof(line), MSG_NOSIGNAL))
			shutdown(c, SHUT_WR);
		close(c);
	}
	return NULL;
}

/* LIBRARY.md's Errors, each as it says: -ENOENT nobody at the named path,
 * -ECONNREFUSED a socket file nobody listens at (a crashed recorder's),
 * -EMSGSIZE an answer line longer than 511 bytes; each with a message. */
Test(lib, each_error_is_the_documented_errno, .timeout = 60)
{
	struct app a;
	char path[PATH_MAX + 16];
	pthread_t t;
	int lfd;

	app_open(&a);
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out), "env T410TRACE_CONTROL='%s/nobody' "
			       "'%s' fails %d", a.rec.dir, a.bin, ENOENT), 0, "%s", a.err);
	snprintf(path, sizeof(path), "%s/stale.sock", a.rec.dir);
	close(unix_listen(path)); /* the file stays: nobody listens */
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out), "env T410TRACE_CONTROL='%s' '%s' "
			       "fails %d", path, a.bin, ECONNREFUSED), 0, "%s", a.err);
	snprintf(path, sizeof(path), "%s/long.sock", a.rec.dir);
	lfd = unix_listen(path);
	cr_assert_eq(pthread_create(&t, NULL, long_replies, &lfd), 0);
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out), "env T410TRACE_CONTROL='%s' '%s' "
			       "fails %d", path, a.bin, EMSGSIZE), 0, "%s", a.err);
	shutdown(lfd, SHUT_RDWR); /* ends its accept */
	pthread_join(t, NULL);
	close(lfd);
	expect_log(&a, "");
	app_close(&a);
}

/* With the variable left set and no recorder there, each call asks for
 * the route again; it read /proc/self/maps (the library's own file, for
 * "hello") under the lock every thread takes before finding that nothing
 * listens: 83 us a call here, thousands of mappings' worth in a large
 * app, 12k calls/s from 8 threads with one call waiting 420 ms. It
 * connects first now: no read at all until a recorder answers. */
Test(lib, recorder_gone_costs_no_maps_read)
{
	struct app a;

	app_open(&a);
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out),
			       "env T410TRACE_CONTROL='%s/nobody' '%s' gonecost 100", a.rec.dir,
			       a.bin),
		     0, "%s", a.err);
	cr_assert_str_eq(a.out, "maps reads 0");
	expect_log(&a, "");
	app_close(&a);
}

/* A recorder that stops answering (here a socket that never accepts)
 * holds each exchange 5 s; 4 threads calling at once waited in turn on
 * the library's lock, the last 20 s, in a loop for ever while it stayed
 * stopped. The wait for the lock is bounded too: every call returns
 * -ETIMEDOUT within about twice the timeout (a thread that takes the lock
 * just before its wait ends makes its own 5 s exchange). Asserted: under
 * 17 s, 7 s of slack on a busy machine; without the bound the last of the
 * four waits 20 s, whatever the machine's speed. */
Test(lib, a_stalled_recorder_holds_no_thread_past_the_bound, .timeout = 90)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct app a;
	char path[PATH_MAX + 16];
	double slowest = 0;
	int lfd;

	app_open(&a);
	snprintf(path, sizeof(path), "%s/stalled.sock", a.rec.dir);
	cr_assert_lt(strlen(path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_geq(lfd, 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(lfd, 16), 0); /* never accepted */
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out), "env T410TRACE_CONTROL='%s' '%s' stalled",
			       path, a.bin),
		     0, "%s", a.err);
	cr_assert_eq(sscanf(a.out, "slowest %lf", &slowest), 1, "%s", a.out);
	cr_assert_lt(slowest, 17.0, "a call waited %.1f s", slowest);
	close(lfd);
	app_close(&a);
}

Test(lib, no_recorder_is_a_cheap_noop)
{
	struct app a;

	app_open(&a);
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out),
			       "env -u T410TRACE_CONTROL '%s' noop 10000000", a.bin), 0, "%s", a.err);
	cr_assert(!strncmp(a.out, "ns/call ", 8), "%s", a.out);
	cr_log_info("libt410trace without a recorder: %s", a.out);
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out),
			       "env T410TRACE_CONTROL= '%s' noop 1000", a.bin), 0, "%s", a.err);
	expect_log(&a, "");
	app_close(&a);
}

/* LIBRARY.md: "exec: the connection is close-on-exec; the new program
 * finds the variable again." */
Test(lib, exec_leaves_no_connection_behind)
{
	struct app a;

	app_open(&a);
	cr_assert_eq(app_run(&a, "exec"), 0, "%s", a.err);
	expect_log(&a, "bookmark before;bookmark after;");
	app_close(&a);
}

/* LIBRARY.md: "The variable is read once, at the first call." */
Test(lib, the_variable_is_read_once)
{
	struct app a;

	app_open(&a);
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out), "env -u T410TRACE_CONTROL '%s' "
			       "readonce '%s'", a.bin, a.rec.path), 0, "%s", a.err);
	expect_log(&a, "");
	cr_assert_eq(app_run(&a, "readonce unused"), 0, "%s", a.err);
	expect_log(&a, "bookmark first;bookmark second;");
	app_close(&a);
}

Test(lib, usable_from_cxx)
{
	struct app a;

	t4t_need_cxx();
	need_solib();
	memset(&a, 0, sizeof(a));
	fake_open(&a.rec);
	compile(&a, t4t_cxx(), "", "tests/apps/lib_app_cxx.cpp", "lib_app_cxx");
	cr_assert_eq(run_shell(a.out, a.err, sizeof(a.out),
			       "env -u T410TRACE_CONTROL '%s'", a.bin), 0, "%s", a.err);
	cr_assert_str_eq(a.out, "ok");
	app_close(&a);
}
