/* t410trace.h - mark phases of your program in a t410trace recording.
 *
 * Link with -lt410trace (pkg-config --cflags --libs t410trace). When your
 * program runs under `t410trace record ... -- ./program`, the recorder puts
 * the path of its control socket into the environment variable
 * T410TRACE_CONTROL, and these calls reach it:
 *
 *     t410_bookmark("phase2");   // from now on the phase is phase2
 *     t410_trigger();            // take one extra snapshot now
 *
 * Without a recorder (the variable unset or empty) every call is a no-op
 * that returns 0 in a few nanoseconds, so the calls can stay in production
 * code. With one, the calls of a process take one of two routes, the
 * recorder's choice (asked at the process's first call):
 * - its control socket (always available): each call is synchronous, a
 *   round trip that returns after the recorder has applied the command: a
 *   bookmark is carried by every trigger fired after the call returns;
 *   t410_trigger() returns once every scheduler has fired its trigger.
 * - a uprobe on this library (where the recorder runs BPF; a bookmark
 *   name it would refuse still goes over the socket): no reply, a call
 *   returns as soon as the kernel has taken it, before the recorder has
 *   seen it. A bookmark's time is the kernel's stamp of the call, and the
 *   decoded phases start exactly there; the recorder takes it from the
 *   kernel at its next drain (every 50 ms; at once at periods under 1 ms),
 *   so a trigger fired in between may still carry the previous bookmark
 *   in the log. t410_trigger() does not wait: its trigger fires after the
 *   call, once the recorder has taken it (the call wakes it); one it fails
 *   to fire is counted in record's summary ("commands through the uprobe
 *   refused"), not told to the app. A call after that recording stopped
 *   asks for the route again: a new recorder at the same path takes it.
 *
 * Rules:
 * - Every function returns 0 on success or a negative errno (e.g.
 *   -ECONNREFUSED when the recorder named by the variable is gone,
 *   -EREMOTEIO when it refused the command, -ETIMEDOUT when it did not
 *   answer within 5 s, this call's or another thread's that held the
 *   connection: no call waits much over 5 s, however many threads call).
 *   Nothing is ever printed; t410_errmsg() says why.
 * - 0 means the command is in the recording. A command the recorder has
 *   no room for (32768 bookmarks already waiting for its next trigger) is
 *   refused with -EREMOTEIO at once, never dropped; the recording counts
 *   the refusals. This holds on both routes: through the uprobe each call
 *   first takes one of the credits the recorder lent in a shared page,
 *   each a place it reserved for the call, and a call without one is
 *   refused. A recorder killed (SIGKILL) leaves its page marked (the
 *   kernel does it): a later call takes none of its credits but goes to
 *   a new recorder at the same path, or fails as on the socket
 *   (-ECONNREFUSED, -ENOENT). Only a call made while the recorder dies
 *   (or with one older than this library, which does not mark its page)
 *   can return 0 and be lost, as a command answered just before a kill.
 * - Thread-safe: calls from several threads are serialised over one
 *   connection; a call is not a cancellation point (a thread cancelled
 *   during one finishes it first). Fork-safe: a child opens its own
 *   connection.
 * - Not async-signal-safe: do not call these from a signal handler. With a
 *   recorder named, a call takes a mutex (a handler that interrupted a
 *   call of its own thread waits 5 s for it, then gets -ETIMEDOUT), formats
 *   its message with snprintf and may allocate (the first call of a
 *   process reads /proc/self/maps through stdio). Set a flag in the
 *   handler (a volatile sig_atomic_t) and call from the program's flow.
 * - A call costs one round trip to the recorder (tens of microseconds), or
 *   a few microseconds through the uprobe: mark phases, not loop
 *   iterations.
 */
#ifndef T410TRACE_H
#define T410TRACE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Name of the environment variable that holds the recorder's socket. */
#define T410TRACE_CONTROL_ENV "T410TRACE_CONTROL"

/* Set the current bookmark, from the instant of this call until the next
 * bookmark (which triggers carry it: the routes above). name: 1 to 63
 * characters of A-Z a-z 0-9 _ . : - (others are refused with -EREMOTEIO
 * by the recorder).
 * @return 0 (also without a recorder), or a negative errno. */
int t410_bookmark(const char *name);

/* Fire one trigger now (a snapshot of every counter, in addition to the
 * periodic ones). Through the control socket it returns after the
 * recorder has fired it; through the uprobe, at once (it fires after).
 * @return 0 (also without a recorder), or a negative errno. */
int t410_trigger(void);

/* Whether a recorder is reachable: 1 if T410TRACE_CONTROL is set and its
 * socket accepts a connection, 0 if the variable is unset or empty, or a
 * negative errno if it is set but the recorder cannot be reached. */
int t410_available(void);

/* The reason for the last failure of a t410_* call on this thread, as one
 * line ("" if none). Valid until the next t410_* call on this thread. */
const char *t410_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif
