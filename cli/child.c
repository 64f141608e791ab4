/* child.c - the lifecycle of the workload `record` runs (COMMAND after
 * `--`): fork, release, exec check, signals, exit status.
 *
 * Order of things, so that a recording covers exactly the command's run
 * and never outlives or orphans it:
 *   1. cli_child_fork: fork with SIGINT/SIGTERM blocked (a signal that
 *      arrives meanwhile reaches the parent's handler, which forwards it);
 *      the child restores default signal dispositions (SIGPIPE included:
 *      t410trace ignores it), asks for SIGTERM when t410trace dies, even by
 *      kill -9 (PR_SET_PDEATHSIG), and waits on a pipe;
 *   2. cli_child_release, once the baseline trigger is in: the child execs,
 *      and a close-on-exec pipe tells the parent whether exec worked (EOF)
 *      or failed (the child writes its errno), so `record` knows before it
 *      publishes the log whether there is a run to record at all;
 *   3. cli_child_interrupt on each SIGINT/SIGTERM: the first is forwarded,
 *      the second is forwarded again with a notice that a third kills the
 *      command, the third sends SIGKILL;
 *   4. cli_child_exited / cli_child_nap while recording (pidfd when the
 *      kernel has pidfd_open, else a 5 ms poll), cli_child_stop after
 *      --duration (SIGTERM, SIGKILL 5 s later), cli_child_free at the end
 *      (a command still running is stopped and reaped: never orphaned).
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STOP_GRACE_MS 5000 /* SIGTERM, then SIGKILL after this */

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child_exec(struct cli_child *c, pid_t parent, const sigset_t *old)
{
	int e;
	char go;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent) /* the parent died before prctl */
		_exit(127);
	sigprocmask(SIG_SETMASK, old, NULL);
	close(c->go_fd);
	close(c->err_fd);
	if (read(c->child_go, &go, 1) != 1)
		_exit(127); /* the parent gave up: never run */
	if (c->stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		_exit(127);
	execvp(c->argv[0], c->argv);
	e = errno;
	if (write(c->child_err, &e, sizeof(e)) != (ssize_t)sizeof(e))
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

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
	c->pidfd = c->go_fd = c->err_fd = c->child_go = c->child_err = -1;
}

int cli_child_fork(struct cli_child *c)
{
	sigset_t stop_sigs, old;
	int go[2], err[2], fork_errno;
	pid_t parent = getpid();

	if (pipe2(go, O_CLOEXEC) < 0)
		return t4_err(errno, "pipe: %s", strerror(errno));
	if (pipe2(err, O_CLOEXEC) < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		return t4_err(e, "pipe: %s", strerror(e));
	}
	c->child_go = go[0];
	c->go_fd = go[1];
	c->err_fd = err[0];
	c->child_err = err[1];
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_sigs, &old);
	c->pid = fork();
	if (c->pid == 0)
		child_exec(c, parent, &old);
	fork_errno = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close_fd(&c->child_go);
	close_fd(&c->child_err);
	if (c->pid < 0) {
		c->pid = 0;
		close_fd(&c->go_fd);
		close_fd(&c->err_fd);
		return t4_err(fork_errno, "fork: %s", strerror(fork_errno));
	}
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
	/* EOF: exec worked (the pipe closed on exec) or the child died
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

bool cli_child_exited(struct cli_child *c)
{
	if (c->pid <= 0 || waitpid(c->pid, &c->status, WNOHANG) != c->pid)
		return false;
	c->pid = 0;
	return true;
}

void cli_child_reap(struct cli_child *c)
{
	if (c->pid <= 0)
		return;
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	c->pid = 0;
}

void cli_child_nap(struct cli_child *c, uint64_t timeout_ns)
{
	if (c->pid > 0 && c->pidfd >= 0) {
		struct pollfd pfd = { .fd = c->pidfd, .events = POLLIN };
		poll(&pfd, 1, (int)((timeout_ns + 999999) / 1000000));
		return;
	}
	if (c->pid > 0 && timeout_ns > 5000000)
		timeout_ns = 5000000; /* no pidfd: notice the exit promptly */
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ull),
			       (long)(timeout_ns % 1000000000ull) };
	nanosleep(&ts, NULL);
}

void cli_child_interrupt(struct cli_child *c, int sig)
{
	if (c->pid <= 0)
		return;
	c->interrupts++;
	if (c->interrupts == 2)
		fprintf(stderr, "t410trace: '%s' is still running; sent %s again "
				"(once more kills it with SIGKILL)\n",
			c->argv[0], strsignal(sig));
	if (c->interrupts >= 3) {
		fprintf(stderr, "t410trace: killing '%s' (SIGKILL)\n", c->argv[0]);
		sig = SIGKILL;
	}
	kill(c->pid, sig);
}

void cli_child_stop(struct cli_child *c)
{
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGTERM);
	for (int i = 0; i < STOP_GRACE_MS / 10 && !cli_child_exited(c); i++)
		usleep(10000);
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
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
		fprintf(stderr, "t410trace: '%s' was killed by signal %d (%s)\n", c->argv[0],
			WTERMSIG(c->status), strsignal(WTERMSIG(c->status)));
}

void cli_child_free(struct cli_child *c)
{
	close_fd(&c->go_fd); /* a child never released reads EOF and exits */
	close_fd(&c->err_fd);
	if (c->pid > 0) {
		kill(c->pid, SIGTERM);
		cli_child_reap(c);
	}
	close_fd(&c->pidfd);
}
