/* control.h - the control protocol between a recorder and its clients.
 *
 * A recorder (`t410trace record`) listens on a Unix stream socket; clients
 * (`t410trace ctl`, libt410trace inside the workload) send one command
 * line and read one reply line:
 *
 *   bookmark NAME | trigger | start | stop | status
 *   -> "ok [text]" or "error: <one line>"
 *   hello [PATH]
 *   -> "ok uprobe" or "ok socket"
 *
 * hello: libt410trace asks once per process, naming the file that holds
 * it (PATH), whether the recorder takes its bookmarks and triggers through
 * a uprobe on its probe point (T4_PROBE_SYMBOL): then it calls that
 * function instead of sending lines, no round trip; otherwise it goes on
 * with the socket. A recorder without the uprobe (no BPF, an older one)
 * answers "socket" (or, older, an error: the same to the library).
 *
 * This module is the whole protocol: the server (control.c: socket thread,
 * SO_PEERCRED check, t4_control_exec, the command table), the one client
 * (client.c) and the rules both sides share (name.c: what a bookmark name
 * may hold; the environment variable that names the socket). It depends on
 * util/ only, so that libt410trace (lib/) can be built from control/ and
 * util/ alone. What a command does is the recorder's business: it hands
 * in a table of callbacks (struct t4_control_ops).
 *
 * Errors follow util.h: 0 or a negative errno, one-line message in
 * t4_errmsg().
 */
#ifndef T4_CONTROL_H
#define T4_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

/* The environment variable through which record tells its child (and
 * libt410trace in it) where the control socket is. */
#define T4_CONTROL_ENV "T410TRACE_CONTROL"

/* Longest command line (without its newline) and reply (with it). */
#define T4_CONTROL_LINE_MAX 256
#define T4_CONTROL_REPLY_MAX 512
/* How long a client waits for the recorder's reply. */
#define T4_CONTROL_TIMEOUT_MS 5000
/* How long the recorder keeps a connection that completes no line (from
 * its connection or its last line); then it closes it without a word. */
#define T4_CONTROL_IDLE_MS 10000
/* Bookmark names: 1 to T4_CONTROL_NAME_MAX - 1 characters. */
#define T4_CONTROL_NAME_MAX 64

/* The probe point: libt410trace's T4_PROBE_SYMBOL(int op, const char *name),
 * called with T4_PROBE_BOOKMARK and the name, or T4_PROBE_TRIGGER and NULL,
 * once the recorder answered "ok uprobe". (bpf/phases.h repeats these for
 * the kernel side; bpf/phases.c checks that they agree.) */
#define T4_PROBE_SYMBOL "t410__probe"
#define T4_PROBE_BOOKMARK 1
#define T4_PROBE_TRIGGER 2

/* ---- the shared rule (name.c) ------------------------------------------ */

/* A bookmark name: 1-63 characters of A-Z a-z 0-9 _ . : - */
bool t4_control_name_ok(const char *name);
/* Set the message for a refused name and return -EINVAL. */
int t4_control_name_error(const char *name);

/* ---- server (control.c) -------------------------------------------------- */

/* What the control socket can ask for; record wires these to t4_sched_*.
 * status() writes a one-line summary (no newline) into buf. Each returns 0
 * or a negative errno with its message set (it becomes the error reply).
 * hello() (optional: NULL answers "socket") is asked by process pid (0:
 * unknown) whether its probe point in file path ("" when not given) is
 * served by a uprobe: 1 yes ("ok uprobe"), 0 no ("ok socket"). */
struct t4_control_ops {
	int (*bookmark)(void *ud, const char *name);
	int (*trigger)(void *ud);
	int (*start)(void *ud);
	int (*stop)(void *ud);
	int (*status)(void *ud, char *buf, size_t cap);
	int (*hello)(void *ud, int pid, const char *path);
};

struct t4_control;

/* Listen on a Unix socket at path (mode 0600, replaced if stale), served by
 * a thread of its own. Peers other than root and the recording user are
 * refused (SO_PEERCRED). Each line is answered "ok ..." or "error: ...".
 * Any number of clients (as many as the process may open fds; the one
 * idle longest is closed when none is left), each closed after
 * T4_CONTROL_IDLE_MS without a complete line. */
int t4_control_open(struct t4_control **out, const char *path,
		    const struct t4_control_ops *ops, void *ud);
/* Another idle timeout (tests), in ms; set it before clients connect. */
void t4_control_idle(struct t4_control *c, unsigned ms);
void t4_control_close(struct t4_control *c); /* accepts NULL; unlinks */

/* Parse and run one command line against ops (what the socket thread does
 * for each line; no socket involved, so tests and fuzzers can call it).
 * Always writes a one-line reply ("ok ..." / "error: ...") into reply.
 * Returns 0 or the negative errno of the refusal or of the callback. */
int t4_control_exec(const struct t4_control_ops *ops, void *ud,
		    const char *line, char *reply, size_t cap);
/* The same for a line from process pid (SO_PEERCRED; 0: unknown), which
 * hello needs. */
int t4_control_exec_from(const struct t4_control_ops *ops, void *ud, int pid,
			 const char *line, char *reply, size_t cap);

/* ---- client (client.c) --------------------------------------------------- */

/* For `t410trace ctl`: send one command line, put the reply (without
 * newline) into reply. Returns 0 when the reply starts with "ok",
 * -EREMOTEIO with the reply as message otherwise. */
int t4_control_send(const char *path, const char *line, char *reply,
		    size_t cap);

/* The pieces of t4_control_send, for clients that keep a connection open
 * (libt410trace). connect returns a connected fd (close-on-exec) or a
 * negative errno ("no recorder listening at PATH"). exchange sends one line
 * and waits T4_CONTROL_TIMEOUT_MS for one reply line; returns as
 * t4_control_send, plus -EPIPE when the line could not be sent or the
 * recorder closed the connection without a reply (it executes a command
 * only with its reply, so the command was not executed: reconnecting and
 * resending is safe, e.g. after the recorder's idle timeout). */
int t4_control_connect(const char *path);
int t4_control_exchange(int fd, const char *line, char *reply, size_t cap);

#endif
