/* control.h - the control protocol between a recorder and its clients.
 *
 * A recorder (`t410trace record`) listens on a Unix stream socket; clients
 * (`t410trace ctl`, libt410trace inside the workload) send one command
 * line and read one reply line:
 *
 *   bookmark NAME | trigger | start | stop | status
 *   -> "ok [text]" or "error: <one line>"
 *   live
 *   -> "ok data N" and N bytes (the live snapshot, live/live.h), or an error
 *   hello [PATH]
 *   -> "ok uprobe" (with an fd) or "ok socket"
 *
 * hello: libt410trace asks once per process, naming the file that holds
 * it (PATH), whether the recorder takes its bookmarks and triggers through
 * a uprobe on its probe point (T4_PROBE_SYMBOL): then the reply carries
 * the probe page's fd (SCM_RIGHTS) and the library calls that function,
 * with a credit from the page, instead of sending lines, no round trip;
 * otherwise it goes on with the socket. A recorder without the uprobe (no
 * BPF, an older one) answers "socket" (or, older, an error: the same to
 * the library).
 *
 * This module is the whole protocol: the server (control.c: socket thread,
 * SO_PEERCRED check, t4_control_exec, the command table), the probe page
 * (probe.c), the one client
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

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The environment variable through which record tells its child (and
 * libt410trace in it) where the control socket is. */
#define T4_CONTROL_ENV "T410TRACE_CONTROL"

/* Longest command line (without its newline) and reply (with it). */
#define T4_CONTROL_LINE_MAX 256
#define T4_CONTROL_REPLY_MAX 512
/* The largest data reply ("ok data N" then N bytes): a client refuses more. */
#define T4_CONTROL_DATA_MAX (64u << 20)
/* How long a client waits for the recorder's reply. */
#define T4_CONTROL_TIMEOUT_MS 5000
/* How long the recorder keeps a connection that completes no line (from
 * its connection or its last line); then it closes it without a word. */
#define T4_CONTROL_IDLE_MS 10000
/* Bookmark names: 1 to T4_CONTROL_NAME_MAX - 1 characters. */
#define T4_CONTROL_NAME_MAX 64

/* The probe point: libt410trace's T4_PROBE_SYMBOL(int op, const char *name),
 * called with T4_PROBE_BOOKMARK and the name, or T4_PROBE_TRIGGER and NULL,
 * once the recorder answered "ok uprobe", each call only with a credit
 * taken from the probe page (below); op | T4_PROBE_WAKE when the credits
 * run low. The name carries that rule: an older library's t410__probe is
 * never probed (it keeps the socket). (bpf/activity.h repeats these for the
 * kernel side; bpf/activity.c checks that they agree.) */
#define T4_PROBE_SYMBOL "t410__probe2"
#define T4_PROBE_BOOKMARK 1
#define T4_PROBE_TRIGGER 2
#define T4_PROBE_WAKE 0x100

/* ---- the probe page (probe.c) ---------------------------------------------- */

/* The uprobe cannot answer a call (nothing in the kernel may write to the
 * app, under lockdown least of all), so the recorder lends credits ahead:
 * one page of shared memory (a memfd it hands over with its "ok uprobe",
 * SCM_RIGHTS) that every process of the workload maps. A call takes a
 * credit first, and makes the probe call only with one: each credit is a
 * place the recorder reserved (in its bookmark queue, in the kernel's
 * ring), so a call made is a call logged, and a call without a credit is
 * refused at once, with an error the app sees. `busy` counts the calls
 * between their credit and their return, so that at the end the recorder
 * closes the page and waits for them before it drains a last time. */
#define T4_PROBE_CREDIT 16384   /* credits the recorder keeps lent: a burst
				 * of that many calls needs no refill */
#define T4_PROBE_LOW (T4_PROBE_CREDIT / 4) /* below: the call asks for a wake-up */
#define T4_PROBE_MAGIC 0x74347072u
#define T4_PROBE_CLOSE_WAIT_MS 1000 /* for calls under way at the end */

struct t4_probe_page {
	_Atomic uint32_t magic;   /* T4_PROBE_MAGIC once set up */
	_Atomic uint32_t closed;  /* the recording has stopped */
	_Atomic int64_t credit;   /* calls that may still be made */
	_Atomic int64_t busy;     /* calls between their credit and their end */
	_Atomic uint64_t refused; /* calls refused for want of a credit */
	/* of those, t410_trigger()'s (appended: an older library counts its
	 * triggers in `refused` only, as bookmarks) */
	_Atomic uint64_t refused_triggers;
	/* (appended: an older recorder's page has zeros here, an older
	 * library never reads them) The recorder's life: a thread of the
	 * recorder that lives as long as the recording holds `alive`, a
	 * process-shared robust mutex; when it dies (SIGKILL included) the
	 * kernel sets FUTEX_OWNER_DIED in the mutex's futex word, at offset
	 * alive_at of the page (0: not said: an older recorder, a libc or a
	 * kernel without robust futexes, not held yet). A call only reads
	 * that word (t4_probe_stopped): no syscall, no lock taken. */
	_Atomic uint32_t alive_at;
	pthread_mutex_t alive;
};

/* The recorder: a new page (its memfd in *fd, close-on-exec) mapped at
 * *page. 0 or a negative errno. */
int t4_probe_page_create(struct t4_probe_page **page, int *fd);
/* A library: map the page of fd (which it may close then); NULL on failure,
 * and for an fd that is not a file of at least a page whose size is sealed
 * (F_SEAL_SHRINK: the recorder's memfd; no one can truncate it under the
 * calls). */
struct t4_probe_page *t4_probe_page_map(int fd);
void t4_probe_page_unmap(struct t4_probe_page *page); /* accepts NULL */
/* The recorder lends n more credits. */
void t4_probe_grant(struct t4_probe_page *page, int64_t n);
/* The recorder's thread that lives as long as the recording, at its
 * start: hold `alive`, so that the page says when the recorder dies (said
 * only where this libc and kernel make that work: robust futexes, which
 * qemu-user lacks). */
void t4_probe_hold(struct t4_probe_page *page);
/* The recorder, at the end: refuse later calls and wait (at most
 * T4_PROBE_CLOSE_WAIT_MS) for those under way; then let go of `alive`
 * (when the calling thread held it: t4_probe_hold). */
void t4_probe_close(struct t4_probe_page *page);
/* A library, before a call: whether the recording has stopped (closed), or
 * its recorder died without closing it (then it closes the page, for every
 * process that maps it). A few loads, no syscall. */
bool t4_probe_stopped(struct t4_probe_page *page);
/* A call (trigger: t410_trigger()'s, else a bookmark's): 0 with a credit
 * (*wake set when they run low: pass T4_PROBE_WAKE), -EBUSY none left
 * (counted in refused, and a trigger in refused_triggers too), -ESHUTDOWN
 * closed. After 0, make the probe call, then t4_probe_done. */
int t4_probe_claim(struct t4_probe_page *page, bool trigger, bool *wake);
void t4_probe_done(struct t4_probe_page *page);

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
 * served by a uprobe: 1 yes ("ok uprobe", with *fd, the probe page's fd,
 * sent along; the recorder keeps it), 0 no ("ok socket"). */
struct t4_control_ops {
	int (*bookmark)(void *ud, const char *name);
	int (*trigger)(void *ud);
	int (*start)(void *ud);
	int (*stop)(void *ud);
	int (*status)(void *ud, char *buf, size_t cap);
	int (*hello)(void *ud, int pid, const char *path, int *fd);
	/* live (optional: NULL answers an error): *data, malloc'ed, of *len
	 * bytes (at most T4_CONTROL_DATA_MAX), sent after "ok data LEN". */
	int (*live)(void *ud, char **data, size_t *len);
};

struct t4_control;

/* Listen on a Unix socket at path (mode 0600, replaced if stale), served by
 * a thread of its own. The file appears at path only once it listens
 * (bound under a private name next to it, then linked), so that a socket
 * there that refuses connections is always stale. Peers other than root and the recording user are
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
 * hello needs; *fd (-1 when none) is an fd to send with the reply. */
int t4_control_exec_from(const struct t4_control_ops *ops, void *ud, int pid,
			 const char *line, char *reply, size_t cap, int *fd);

/* ---- client (client.c) --------------------------------------------------- */

/* For `t410trace ctl`: send one command line, put the reply (without
 * newline) into reply. Returns 0 when the reply starts with "ok",
 * -EREMOTEIO with the reply as message otherwise. */
int t4_control_send(const char *path, const char *line, char *reply,
		    size_t cap);

/* The pieces of t4_control_send, for clients that keep a connection open
 * (libt410trace). connect returns a connected fd (close-on-exec) or a
 * negative errno ("no recorder listening at PATH"; -ETIMEDOUT when the
 * socket does not accept it within T4_CONTROL_TIMEOUT_MS; -EACCES when the
 * socket is served by a user other than this one or root). exchange sends one line
 * and waits T4_CONTROL_TIMEOUT_MS for one reply line; returns as
 * t4_control_send, plus -EPIPE when the line could not be sent or the
 * recorder closed the connection without a reply (it executes a command
 * only with its reply, so the command was not executed: reconnecting and
 * resending is safe, e.g. after the recorder's idle timeout), -ETIMEDOUT
 * when the whole reply line is not in within T4_CONTROL_TIMEOUT_MS (bytes
 * that keep coming do not extend it), -EMSGSIZE for a reply line longer
 * than T4_CONTROL_REPLY_MAX (a peer that is no recorder): both leave the
 * connection out of step, close it. */
int t4_control_connect(const char *path);
/* path made absolute against the current directory, into buf (cap bytes),
 * so that a process that changes directory later still reaches the same
 * socket; kept as given when it is absolute already or the absolute one
 * would not fit a socket address (or buf). Returns buf. */
const char *t4_control_abspath(const char *path, char *buf, size_t cap);
int t4_control_exchange(int fd, const char *line, char *reply, size_t cap);
/* The same, taking an fd the reply carries (SCM_RIGHTS) into *passed
 * (close-on-exec; -1 when none). */
int t4_control_exchange_fd(int fd, const char *line, char *reply, size_t cap, int *passed);
/* The same for a command answered with data ("ok data N"): *data
 * (malloc'ed, NUL-terminated, free it) and *len get its N bytes; the whole
 * exchange takes at most T4_CONTROL_TIMEOUT_MS. -EPROTO for a reply that
 * is not data or announces more than T4_CONTROL_DATA_MAX; after -EPIPE,
 * -ETIMEDOUT or -EPROTO the connection is out of step: close it. */
int t4_control_fetch(int fd, const char *line, char *reply, size_t cap, char **data,
		     size_t *len);

#endif
