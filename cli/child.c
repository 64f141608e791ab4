/* child.c - the lifecycle of the workload `record` runs (COMMAND after
 * `--`): fork, release, exec check, signals, exit status, and the end of
 * every process it made.
 *
 * Processes: record -> keeper -> COMMAND. The keeper is a small process
 * forked from record that makes itself a child subreaper
 * (PR_SET_CHILD_SUBREAPER): every descendant of the command whose parent
 * dies becomes its child instead of init's, whatever process group or
 * session it moved to. It reaps the command and tells record its wait
 * status through a pipe; when the command has exited, or when record is
 * gone (its end of a second pipe closes: any exit, SIGKILL included), it
 * ends whatever is left below it: SIGTERM to each of its descendants,
 * again to those that become its children as their parents die, and
 * SIGKILL to all of them after LEFTOVER_GRACE_MS; then it exits. (Where
 * no subreaper can be had, as under qemu-user, the descendants still
 * under the command when record ends are found all the same; only those
 * already orphaned, e.g. left behind by a command that exited, are not.) So `record`
 * ending for any reason ends all of the command's descendants
 * (PR_SET_PDEATHSIG alone only reached the command itself). The keeper
 * and the command stay in record's process group: the terminal's job
 * control is unchanged (Ctrl-C and Ctrl-Z reach the command as before,
 * and a command reading the terminal is in its foreground group); the
 * keeper ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT so that it outlives
 * record. It is forked from a multithreaded process and never execs, so
 * it makes only async-signal-safe calls (raw syscalls, no malloc, no
 * stdio) and first closes every file descriptor it does not need (the
 * log, the counters, the control socket stay record's alone), keeping
 * those t410trace was given (cli_inherited_fds_start), which the command
 * gets as if record were not there.
 *
 * Order of things, so that a recording covers exactly the command's run
 * and never outlives or orphans it:
 *   1. cli_child_fork: fork the keeper with SIGINT/SIGTERM/SIGHUP blocked (a
 *      signal that arrives meanwhile reaches record's handler, which
 *      forwards it); the keeper forks the command and sends its PID; the
 *      command takes SIGINT, SIGTERM and SIGQUIT back to their defaults and
 *      SIGHUP, SIGPIPE, SIGXFSZ and SIGCHLD to what record found at its
 *      start (cli_signals_restore: t410trace ignores SIGPIPE and SIGXFSZ;
 *      nohup's SIGHUP stays ignored), asks for SIGTERM when the keeper
 *      dies (PR_SET_PDEATHSIG), and waits on a pipe;
 *   2. cli_child_release, once the baseline trigger is in: the command
 *      execs, and a close-on-exec pipe tells record whether exec worked
 *      (EOF) or failed (the command writes its errno), so `record` knows
 *      before it publishes the log whether there is a run to record;
 *   3. cli_child_interrupt on each SIGINT/SIGTERM/SIGHUP: the first is forwarded,
 *      the second is forwarded again with a notice that a third kills the
 *      command, the third sends SIGKILL (through a pidfd where the kernel
 *      has one: never to a recycled PID);
 *   4. cli_child_exited / cli_child_nap while recording (the keeper's
 *      status pipe), cli_child_stop after --duration (SIGTERM, SIGKILL 5 s
 *      later), cli_child_free at the end (a command still running is
 *      stopped and reaped, then record waits for the keeper to end the
 *      rest: never orphaned).
 */
#include "cli.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STOP_GRACE_MS 5000     /* the command: SIGTERM, then SIGKILL after this */
#define LEFTOVER_GRACE_MS 2000 /* its descendants left behind: the same */
#define LEFTOVER_ROUND_MS 20   /* how often the keeper signals new children */
#define LEFTOVER_GIVE_UP_MS 10000 /* after SIGKILL: a process stuck in the
				   * kernel (D state) is left to init */

/* ---- the keeper (async-signal-safe code only) ---------------------------- */

/* The descriptors t410trace was started with above 2 (3>file, a make
 * jobserver's pipe), those without close-on-exec: the command gets them,
 * as if record were not there (cli_inherited_fds_start). */
#define INHERITED_MAX 1024
static unsigned char inherited[INHERITED_MAX / 8];
static int inherited_end = 3; /* one past the highest, 3 if none */

/* The keeper's file descriptors, moved to known numbers above those. */
static int k_base = 3;
#define K_LIFE k_base
#define K_STATUS (k_base + 1)
#define K_GO (k_base + 2)
#define K_ERR (k_base + 3)
#define K_SIGNALS (k_base + 4)

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void write_int(int fd, int v)
{
	while (write(fd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
}

/* A process as /proc/PID/stat describes it ("pid (comm) S ppid ... field
 * 22 starttime"; comm may hold anything, so parse after its last ')'). */
struct k_proc {
	pid_t pid, parent;
	uint64_t start; /* with pid, who it is: a recycled PID starts later */
	bool zombie;
	bool below;     /* a descendant of the keeper (signal_tree) */
};

static bool read_stat(const char *pid, struct k_proc *kp)
{
	char path[64] = "/proc/", buf[1024], *p;
	size_t n = strlen(path);
	uint64_t v = 0;
	ssize_t len;
	int fd, field = 3;

	for (size_t i = 0; pid[i] && n < sizeof(path) - 6; i++)
		path[n++] = pid[i];
	memcpy(path + n, "/stat", 6);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	if (!(p = strrchr(buf, ')')) || p[1] != ' ' || !p[2])
		return false;
	kp->zombie = p[2] == 'Z' || p[2] == 'X';
	for (p += 3; *p && field < 22; p++) { /* field 3 is the state, read */
		if (*p != ' ')
			continue;
		field++;
		for (v = 0; p[1] >= '0' && p[1] <= '9'; p++)
			v = v * 10 + (uint64_t)(p[1] - '0');
		if (field == 4)
			kp->parent = (pid_t)v;
	}
	kp->start = v;
	return field == 22;
}

struct k_dirent {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Every process (a scan of /proc: works without CONFIG_PROC_CHILDREN),
 * in static arrays: no malloc in the keeper. */
#define K_PROCS 65536
static struct k_proc k_all[K_PROCS];
static struct k_proc k_known[K_PROCS]; /* descendants found in any round */
static int k_n_known;

static int scan_procs(void)
{
	char buf[4096];
	long n;
	int count = 0, dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return 0;
	while (count < K_PROCS && (n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n && count < K_PROCS;) {
			struct k_dirent *d = (struct k_dirent *)(buf + off);
			struct k_proc *kp = &k_all[count];
			const char *c = d->name;

			off += d->reclen;
			for (kp->pid = 0; *c >= '0' && *c <= '9'; c++)
				kp->pid = kp->pid * 10 + (*c - '0');
			kp->below = false;
			if (!*c && kp->pid > 0 && read_stat(d->name, kp))
				count++;
		}
	}
	close(dfd);
	return count;
}

/* Whether kp was found below the keeper in an earlier round (its PID and
 * start time: never a process that got a recycled PID). */
static bool known(const struct k_proc *kp)
{
	for (int i = 0; i < k_n_known; i++)
		if (k_known[i].pid == kp->pid && k_known[i].start == kp->start)
			return true;
	return false;
}

/* Whether pid is the keeper or marked below it in this scan. */
static bool parent_below(pid_t me, pid_t pid, int count)
{
	if (pid == me)
		return true;
	for (int i = 0; i < count; i++)
		if (k_all[i].pid == pid)
			return k_all[i].below;
	return false;
}

/* Send sig to every descendant of the keeper: its children (orphans of
 * any session become them, the keeper being a subreaper) and theirs,
 * however deep, so that a grandchild whose parent survives the signal
 * gets it too; and to every process found below it in an earlier round
 * (the same PID and start time: never a recycled PID), so that one
 * orphaned since is followed even where no subreaper can be had
 * (qemu-user refuses PR_SET_CHILD_SUBREAPER). Returns how many live ones
 * it signalled. */
static int signal_tree(pid_t me, int sig)
{
	int count = scan_procs(), alive = 0;
	bool more = true;

	while (more) { /* one pass per generation */
		more = false;
		for (int i = 0; i < count; i++) {
			struct k_proc *kp = &k_all[i];
			bool seen = known(kp);
			if (kp->below || !(seen || parent_below(me, kp->parent, count)))
				continue;
			kp->below = more = true;
			if (!seen && k_n_known < K_PROCS)
				k_known[k_n_known++] = *kp;
			kill(kp->pid, sig);
			alive += !kp->zombie;
		}
	}
	return alive;
}

/* Reap what has exited; report the command's status once. Returns false
 * when the keeper has no child left. */
static bool reap(pid_t cmd, bool *cmd_done)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == cmd && !*cmd_done) {
			write_int(K_STATUS, st);
			*cmd_done = true;
		}
	}
	return !(p < 0 && errno == ECHILD);
}

/* Wait up to ms for a child to change state or record to go. */
static void keeper_wait(int ms, bool watch_life)
{
	struct pollfd p[2] = { { .fd = K_SIGNALS, .events = POLLIN },
			       { .fd = watch_life ? K_LIFE : -1, .events = POLLIN } };
	struct signalfd_siginfo si;

	if (poll(p, 2, ms) > 0 && p[0].revents)
		while (read(K_SIGNALS, &si, sizeof(si)) > 0)
			;
}

/* The command has exited or record is gone: end everything below, until
 * nothing is left (or LEFTOVER_GIVE_UP_MS after the SIGKILLs). */
static void __attribute__((noreturn)) end_all(pid_t me, pid_t cmd, bool cmd_done)
{
	int64_t kill_at = mono_ms() + LEFTOVER_GRACE_MS;

	for (;;) {
		bool children = reap(cmd, &cmd_done);
		int alive = signal_tree(me, mono_ms() < kill_at ? SIGTERM : SIGKILL);

		if ((!children && !alive) || mono_ms() >= kill_at + LEFTOVER_GIVE_UP_MS)
			_exit(0);
		keeper_wait(LEFTOVER_ROUND_MS, false);
	}
}

static bool is_inherited(int fd)
{
	return fd < INHERITED_MAX && (inherited[fd / 8] & (1u << (fd % 8)));
}

void cli_inherited_fds_start(void)
{
	for (int fd = 3; fd < INHERITED_MAX; fd++) {
		int flags = fcntl(fd, F_GETFD);
		if (flags >= 0 && !(flags & FD_CLOEXEC)) {
			inherited[fd / 8] |= (unsigned char)(1u << (fd % 8));
			inherited_end = fd + 1;
		}
	}
}

/* Move fds to the keeper's numbers, above the inherited ones, and close
 * every other one above 2. */
static int keep_fds(const int from[4])
{
	int tmp[4];

	k_base = inherited_end;
	for (int i = 0; i < 4; i++)
		if ((tmp[i] = fcntl(from[i], F_DUPFD_CLOEXEC, K_SIGNALS + 1)) < 0)
			return -1;
	for (int i = 0; i < 4; i++)
		if (dup3(tmp[i], K_LIFE + i, O_CLOEXEC) < 0)
			return -1;
	for (int fd = 3; fd < k_base; fd++)
		if (!is_inherited(fd))
			close(fd);
	if (syscall(SYS_close_range, K_ERR + 1, ~0u, 0) < 0) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -1;
		for (rlim_t fd = K_ERR + 1; fd < rl.rlim_cur && fd < (1u << 20); fd++)
			close((int)fd);
	}
	return 0;
}

static void ignore(int sig)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };

	sigaction(sig, &sa, NULL);
}

static void restore(int sig)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };

	sigaction(sig, &sa, NULL);
}

/* The dispositions the program found (cli_signals_start). */
static const int kept_sigs[] = { SIGHUP, SIGPIPE, SIGXFSZ, SIGCHLD };
static struct sigaction at_start[T4_ARRAY_LEN(kept_sigs)];
static bool at_start_known[T4_ARRAY_LEN(kept_sigs)];

void cli_signals_start(void)
{
	for (size_t i = 0; i < T4_ARRAY_LEN(kept_sigs); i++)
		at_start_known[i] = sigaction(kept_sigs[i], NULL, &at_start[i]) == 0;
	ignore(SIGPIPE);
	ignore(SIGXFSZ);
	if (cli_signal_ignored_at_start(SIGCHLD))
		restore(SIGCHLD); /* waitpid needs its children's status */
}

bool cli_signal_ignored_at_start(int sig)
{
	for (size_t i = 0; i < T4_ARRAY_LEN(kept_sigs); i++)
		if (kept_sigs[i] == sig)
			return at_start_known[i] && !(at_start[i].sa_flags & SA_SIGINFO) &&
			       at_start[i].sa_handler == SIG_IGN;
	return false;
}

void cli_signals_restore(void)
{
	for (size_t i = 0; i < T4_ARRAY_LEN(kept_sigs); i++)
		if (cli_signal_ignored_at_start(kept_sigs[i]))
			ignore(kept_sigs[i]);
		else
			restore(kept_sigs[i]);
}

/* The command, between fork and exec. */
static void __attribute__((noreturn)) command_exec(const struct cli_child *c, pid_t keeper,
						  const sigset_t *old)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGQUIT };
	int e;
	char go;

	for (size_t i = 0; i < T4_ARRAY_LEN(sigs); i++)
		restore(sigs[i]);
	cli_signals_restore(); /* SIGHUP, SIGPIPE, SIGXFSZ, SIGCHLD as record found them */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != keeper) /* the keeper died before prctl */
		_exit(127);
	sigprocmask(SIG_SETMASK, old, NULL);
	close(K_LIFE);
	close(K_STATUS);
	close(K_SIGNALS);
	if (read(K_GO, &go, 1) != 1)
		_exit(127); /* record gave up: never run */
	close(K_GO);
	if (c->nofile.rlim_cur)
		setrlimit(RLIMIT_NOFILE, &c->nofile); /* record's own limit was raised */
	execvp(c->argv[0], c->argv);
	e = errno;
	if (write(K_ERR, &e, sizeof(e)) != (ssize_t)sizeof(e))
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* The keeper: forks the command, sends its PID, reaps, ends the rest. */
static void __attribute__((noreturn)) keeper_main(const struct cli_child *c, pid_t parent,
						 const sigset_t *old)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	int fds[4] = { c->child_life, c->child_status, c->child_go, c->child_err };
	pid_t me = getpid(), cmd;
	sigset_t chld;
	bool cmd_done = false;

	for (size_t i = 0; i < T4_ARRAY_LEN(sigs); i++)
		ignore(sigs[i]); /* SIGPIPE too, as record: a write to a gone record fails */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (getppid() != parent || keep_fds(fds) < 0)
		_exit(127);
	if (c->stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		_exit(127); /* the log's pipe stays record's alone */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC); /* the lowest free */
	if (sfd < 0 || (sfd != K_SIGNALS && dup3(sfd, K_SIGNALS, O_CLOEXEC) < 0))
		_exit(127);
	if (sfd != K_SIGNALS)
		close(sfd); /* (a number below k_base, none of the command's) */
	cmd = fork();
	if (cmd == 0)
		command_exec(c, me, old);
	write_int(K_STATUS, cmd < 0 ? -errno : (int)cmd);
	if (cmd < 0)
		_exit(127);
	close(K_GO);
	close(K_ERR);
	for (;;) {
		struct pollfd life = { .fd = K_LIFE, .events = POLLIN };
		if (!reap(cmd, &cmd_done) || cmd_done || poll(&life, 1, 0) > 0)
			end_all(me, cmd, cmd_done);
		keeper_wait(-1, true);
	}
}

/* ---- record's side ---------------------------------------------------------- */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void cli_child_init(struct cli_child *c, char **argv, bool stdout_to_stderr)
{
	memset(c, 0, sizeof(*c));
	c->argv = argv;
	c->stdout_to_stderr = stdout_to_stderr;
	c->pidfd = c->go_fd = c->err_fd = c->status_fd = c->life_fd = -1;
	c->child_go = c->child_err = c->child_status = c->child_life = -1;
}

void cli_child_nofile(struct cli_child *c, const struct rlimit *rl)
{
	c->nofile = *rl;
}

/* Two pipes each: go (record -> command), err (command -> record),
 * status (keeper -> record), life (record -> keeper). */
static int make_pipes(struct cli_child *c)
{
	int p[4][2];
	int n = 0;

	for (; n < 4; n++) {
		if (pipe2(p[n], O_CLOEXEC) < 0) {
			int e = errno;
			while (n-- > 0) {
				close(p[n][0]);
				close(p[n][1]);
			}
			return t4_err(e, "pipe: %s", strerror(e));
		}
	}
	c->child_go = p[0][0], c->go_fd = p[0][1];
	c->err_fd = p[1][0], c->child_err = p[1][1];
	c->status_fd = p[2][0], c->child_status = p[2][1];
	c->child_life = p[3][0], c->life_fd = p[3][1];
	return 0;
}

/* Read one int from the keeper: 1, 0 at EOF (the keeper is gone), or -1
 * when none is there yet (wait false). */
static int read_status_int(struct cli_child *c, int *v, bool wait)
{
	struct pollfd p = { .fd = c->status_fd, .events = POLLIN };
	ssize_t n;

	if (c->status_fd < 0)
		return 0;
	while (poll(&p, 1, wait ? -1 : 0) < 0 && errno == EINTR)
		;
	if (!p.revents)
		return -1;
	do
		n = read(c->status_fd, v, sizeof(*v));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*v);
}

int cli_child_fork(struct cli_child *c)
{
	sigset_t stop_sigs, old;
	int rc, fork_errno, v = 0;
	pid_t parent = getpid();

	if ((rc = make_pipes(c)) < 0)
		return rc;
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop_sigs, &old);
	c->keeper = fork();
	if (c->keeper == 0)
		keeper_main(c, parent, &old);
	fork_errno = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close_fd(&c->child_go);
	close_fd(&c->child_err);
	close_fd(&c->child_status);
	close_fd(&c->child_life);
	if (c->keeper < 0) {
		c->keeper = 0;
		return t4_err(fork_errno, "fork: %s", strerror(fork_errno));
	}
	if (read_status_int(c, &v, true) != 1 || v <= 0) {
		fork_errno = v < 0 ? -v : ECHILD;
		cli_child_free(c);
		return t4_err(fork_errno, "fork: %s", strerror(fork_errno));
	}
	c->pid = v;
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	return 0;
}

int cli_child_release(struct cli_child *c)
{
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, "g", 1) != 1) {
		int w = errno;
		close_fd(&c->go_fd);
		return t4_err(w, "cannot release '%s': %s", c->argv[0], strerror(w));
	}
	close_fd(&c->go_fd);
	/* EOF: exec worked (the pipe closed on exec) or the command died
	 * before it; an errno: exec failed. */
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close_fd(&c->err_fd);
	if (n != (ssize_t)sizeof(e))
		return 0;
	cli_child_reap(c);
	return t4_err(e, "cannot run '%s': %s", c->argv[0], strerror(e));
}

bool cli_child_running(const struct cli_child *c)
{
	return c->pid > 0;
}

/* The keeper's report (or its end: the command is then taken as killed). */
static bool take_status(struct cli_child *c, bool wait)
{
	int r;

	if (c->pid <= 0 || (r = read_status_int(c, &c->status, wait)) < 0)
		return false;
	if (r == 0)
		c->status = SIGKILL; /* as wait(2) says "killed by SIGKILL" */
	c->pid = 0;
	close_fd(&c->pidfd);
	return true;
}

bool cli_child_exited(struct cli_child *c)
{
	return take_status(c, false);
}

void cli_child_reap(struct cli_child *c)
{
	take_status(c, true);
}

void cli_child_nap(struct cli_child *c, uint64_t timeout_ns)
{
	struct pollfd pfd = { .fd = c->pid > 0 ? c->status_fd : -1, .events = POLLIN };

	poll(&pfd, 1, (int)((timeout_ns + 999999) / 1000000));
}

/* Signal the command: through its pidfd (never a recycled PID), else
 * kill(2) while the keeper has not reported it. */
static void send_signal(struct cli_child *c, int sig)
{
	if (c->pid <= 0)
		return;
	if (c->pidfd >= 0 && syscall(SYS_pidfd_send_signal, c->pidfd, sig, NULL, 0) == 0)
		return;
	if (c->pidfd < 0 || errno == ENOSYS)
		kill(c->pid, sig);
}

void cli_child_interrupt(struct cli_child *c, int sig)
{
	if (c->pid <= 0)
		return;
	c->interrupts++;
	if (c->interrupts == 2)
		cli_say("'%s' is still running; sent %s again (once more kills it with SIGKILL)",
			c->argv[0], strsignal(sig));
	if (c->interrupts >= 3) {
		cli_say("killing '%s' (SIGKILL)", c->argv[0]);
		sig = SIGKILL;
	}
	send_signal(c, sig);
}

void cli_child_stop(struct cli_child *c)
{
	if (c->pid <= 0)
		return;
	send_signal(c, SIGTERM);
	for (int i = 0; i < STOP_GRACE_MS / 10 && !cli_child_exited(c); i++)
		usleep(10000);
	if (c->pid > 0) {
		send_signal(c, SIGKILL);
		cli_child_reap(c);
	}
}

int cli_child_exit_code(const struct cli_child *c)
{
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	if (WIFSIGNALED(c->status))
		return 128 + WTERMSIG(c->status);
	return 1;
}

void cli_child_report(const struct cli_child *c)
{
	if (c->argv && WIFSIGNALED(c->status))
		cli_say("'%s' was killed by signal %d (%s)", c->argv[0], WTERMSIG(c->status),
			strsignal(WTERMSIG(c->status)));
}

void cli_child_free(struct cli_child *c)
{
	close_fd(&c->go_fd); /* a command never released reads EOF and exits */
	close_fd(&c->err_fd);
	if (c->pid > 0) {
		send_signal(c, SIGTERM);
		cli_child_reap(c);
	}
	close_fd(&c->life_fd); /* the keeper ends what is left and exits */
	if (c->keeper > 0)
		while (waitpid(c->keeper, NULL, 0) < 0 && errno == EINTR)
			;
	c->keeper = 0;
	close_fd(&c->status_fd);
	close_fd(&c->pidfd);
}
