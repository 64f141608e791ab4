/* common.h - what the user sides of the BPF components share (internal to
 * bpf/; the module's public header is bpf.h): libbpf's messages and the
 * one-line reason of a failed libbpf call.
 *
 * libbpf has one print callback per process: t4_bpf_messages installs ours,
 * which shows libbpf's messages on stderr only when asked (verbose) and
 * keeps the last warning for the reason of a failure. Components open on
 * one thread (record's main thread), so the kept message is a plain
 * static.
 */
#ifndef T4_BPF_COMMON_H
#define T4_BPF_COMMON_H

#include <stdbool.h>

/* Route libbpf's messages: to stderr when verbose, else kept for
 * t4_bpf_fail; forgets the message kept so far. */
void t4_bpf_messages(bool verbose);

/* Set the one-line reason for a failed libbpf call `what` (err: an errno,
 * either sign) and return its negative errno: "not permitted (needs root,
 * or CAP_BPF and CAP_PERFMON)" for EPERM, else strerror with libbpf's last
 * warning. */
int t4_bpf_fail(int err, const char *what);

#endif
