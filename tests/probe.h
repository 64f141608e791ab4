/* probe.h - what a test needs from the machine, found out by trying it.
 *
 * A test that needs a kernel facility or a tool calls t4t_need_X() first:
 * where it is missing, the test is skipped with the reason the probe met
 * (cr_skip_test), and every other test still runs. Probes try the facility
 * itself, never guess from the platform: under qemu-user (make
 * check-arm64) perf_event_open, io_uring and bpf answer ENOSYS; an
 * unprivileged machine refuses CPU-wide perf counters; an arm64 machine
 * has no msr PMU. Each probe costs one or two syscalls and keeps nothing
 * open.
 *
 * Compilers: tests that build a program for the target under test use
 * t4t_cc() / t4t_cxx() (T4_CC / T4_CXX from make check, else cc / c++),
 * so a cross build compiles its test programs for the same architecture.
 */
#ifndef T4_TESTS_PROBE_H
#define T4_TESTS_PROBE_H

#include "collector/collector.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <liburing.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* Have the calling child die with the test's process (the thread that
 * forked it): a test that skips or fails after the fork exits without its
 * .fini, and its child (pause() is a ppoll under qemu-user's aarch64) lived
 * on as an orphan after each arm64 run. */
static inline void t4t_die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
}

/* A child that stands still until killed, dying with the test's process. */
static inline pid_t t4t_fork_idle(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		t4t_die_with_parent(parent);
		for (;;)
			pause();
	}
	return pid;
}

/* CPU-wide software counters (cpu-clock on CPU 0, any task), the way the
 * recorder opens every real PMU. */
static inline void t4t_need_perf(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
	};
	long fd = syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		cr_skip_test("no CPU-wide perf counters: perf_event_open: %s", strerror(errno));
	close((int)fd);
}

/* A per-task software counter on this process (user space only, or with
 * the kernel's share too): -errno, or 0. */
static inline int t4t_task_perf(bool user_only)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.exclude_kernel = user_only,
	};
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

/* Per-task software counters on this process, user space only (what an
 * unprivileged user may open at perf_event_paranoid 2). */
static inline void t4t_need_task_perf(void)
{
	int err = t4t_task_perf(true);

	if (err)
		cr_skip_test("no per-task perf counters: perf_event_open: %s", strerror(-err));
}

/* The same with the kernel's share: what `record -- COMMAND` counts as
 * "task-clock", not "task-clock:u" (refused without CAP_PERFMON at
 * perf_event_paranoid 2 or more; the recorder then falls back to ':u'). */
static inline void t4t_need_task_perf_kernel(void)
{
	int err;

	t4t_need_task_perf();
	if ((err = t4t_task_perf(false)))
		cr_skip_test("per-task counters count user space only here (':u'): perf_event_open "
			     "with the kernel's share: %s", strerror(-err));
}

/* A real PMU of this machine by its sysfs name (e.g. "msr": x86 only). */
static inline void t4t_need_pmu(const char *name)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), T4_SYSFS_DEFAULT "/%s/type", name);
	if (t4_read_small_file(path, buf, sizeof(buf)) < 0)
		cr_skip_test("no %s PMU here: %s", name, t4_errmsg());
}

/* A child subreaper (PR_SET_CHILD_SUBREAPER; qemu-user refuses it), tried
 * in a child process, as record's keeper does. */
static inline void t4t_need_subreaper(void)
{
	int st = 0;
	pid_t kid = fork();

	if (kid == 0)
		_exit(prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 ? errno : 0);
	if (kid < 0 || waitpid(kid, &st, 0) != kid || !WIFEXITED(st))
		cr_skip_test("no child to try PR_SET_CHILD_SUBREAPER in");
	if (WEXITSTATUS(st))
		cr_skip_test("no child subreaper: prctl(PR_SET_CHILD_SUBREAPER): %s",
			     strerror(WEXITSTATUS(st)));
}

/* Robust futexes: the kernel marks a process-shared mutex whose holder
 * died (qemu-user answers set_robust_list and get_robust_list ENOSYS). */
static inline void t4t_need_robust_futex(void)
{
	void *head = NULL;
	size_t len = 0;

	if (syscall(SYS_get_robust_list, 0, &head, &len) < 0)
		cr_skip_test("no robust futexes: get_robust_list: %s", strerror(errno));
	if (!head)
		cr_skip_test("no robust futexes: this thread has no robust list registered");
}

/* A new PID namespace (root, or a user namespace), tried in a child. */
static inline void t4t_need_pidns(void)
{
	int st = 0;
	pid_t kid = fork();

	if (kid == 0)
		_exit(unshare(CLONE_NEWPID) < 0 ? errno : 0);
	if (kid < 0 || waitpid(kid, &st, 0) != kid || !WIFEXITED(st))
		cr_skip_test("no child to try unshare(CLONE_NEWPID) in");
	if (WEXITSTATUS(st))
		cr_skip_test("no new PID namespace: unshare(CLONE_NEWPID): %s",
			     strerror(WEXITSTATUS(st)));
}

static inline void t4t_need_uring(void)
{
	struct io_uring ring;
	int err = io_uring_queue_init(2, &ring, 0);

	if (err < 0)
		cr_skip_test("no io_uring: io_uring_queue_init: %s", strerror(-err));
	io_uring_queue_exit(&ring);
}

/* The bpf(2) syscall itself: a one-entry array map. */
static inline void t4t_need_bpf(void)
{
	union bpf_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0)
		cr_skip_test("no BPF: bpf(BPF_MAP_CREATE): %s", strerror(errno));
	close((int)fd);
}

/* BPF tracing programs (what needs them named in `what`, for the reason):
 * the bpf syscall (above), CAP_BPF or CAP_SYS_ADMIN, the kernel's BTF. */
static inline void t4t_need_bpf_tracing(const char *what)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f;

	t4t_need_bpf();
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	if (!(eff & (1ull << 39)) && !(eff & (1ull << 21)))
		cr_skip_test("%s: no CAP_BPF or CAP_SYS_ADMIN here (run as root)", what);
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		cr_skip_test("%s: this kernel has no BTF (/sys/kernel/btf/vmlinux)", what);
}

/* The in-kernel trigger path: perf counters and BPF tracing (above),
 * Linux 6.8+ (absolute, CPU-pinned BPF timers). Anywhere these are there,
 * the BPF path must load and work: a failure is the test's. */
static inline void t4t_need_bpf_trigger(void)
{
	int maj = 0, min = 0;
	struct utsname u;

	t4t_need_perf();
	t4t_need_bpf_tracing("BPF trigger");
	if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &maj, &min) == 2 &&
	    (maj < 6 || (maj == 6 && min < 8)))
		cr_skip_test("BPF trigger: Linux %s has no absolute, CPU-pinned BPF timers (6.8+)",
			     u.release);
}

/* Commands on PATH (one, or several separated by spaces: python3, zstd,
 * protoc, ...). */
static inline bool t4t_have_cmds(const char *cmds)
{
	char sh[400];

	snprintf(sh, sizeof(sh), "for c in %s; do command -v $c >/dev/null 2>&1 || exit 1; done",
		 cmds);
	return system(sh) == 0;
}

static inline void t4t_need_cmd(const char *cmds)
{
	if (!t4t_have_cmds(cmds))
		cr_skip_test("%s not found", cmds);
}

static inline const char *t4t_cc(void)
{
	const char *cc = getenv("T4_CC");

	return cc && *cc ? cc : "cc";
}

static inline const char *t4t_cxx(void)
{
	const char *cxx = getenv("T4_CXX");

	return cxx && *cxx ? cxx : "c++";
}

/* A test program make builds into $T4_OUT/apps (tests/apps/NAME.c), its
 * path into path; the test skips when it is not built. */
static inline const char *t4t_app(const char *name, char *path, size_t cap)
{
	const char *out = getenv("T4_OUT");

	if (!out)
		cr_skip_test("T4_OUT not set (run through make check)");
	snprintf(path, cap, "%s/apps/%s", out, name);
	if (access(path, X_OK))
		cr_skip_test("%s not built (make tests)", path);
	return path;
}

/* The C++ compiler for the target: a C++ test skips without one. */
static inline void t4t_need_cxx(void)
{
	t4t_need_cmd(t4t_cxx());
}

#endif
