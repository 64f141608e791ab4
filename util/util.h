/* util.h - the small shared toolbox every t410trace module builds on.
 *
 * One error convention for the whole project: a function that can fail returns
 * 0 (or a non-negative count) on success and a negative errno on failure. The
 * human-readable one-line reason is kept in a thread-local buffer set with
 * t4_err() and read back with t4_errmsg(); callers that add context call
 * t4_err() again with the previous message folded in (t4_errmsg() stays valid
 * while formatting).
 *
 * Also here: the clocks (reference clock = CLOCK_MONOTONIC_RAW, the CPU's own
 * timestamp counter on x86_64 and arm64), number and duration parsing, small
 * file reads for sysfs, CRC32C and JSON string output. Nothing here allocates
 * on the hot path.
 */
#ifndef T4_UTIL_H
#define T4_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define T4_VERSION "0.1.0"

#define T4_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors ---------------------------------------------------------- */

/* Record a one-line message for this thread and return -abs(errnum).
 * Usage: return t4_err(EINVAL, "%s: unknown PMU", name); */
int t4_err(int errnum, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The last message recorded by t4_err() on this thread ("" if none). */
const char *t4_errmsg(void);
/* The process exit code for an error (0 for 0): 2 where what the user gave
 * was wrong (a flag, a path, a file that is no log), 1 for other failures
 * (a full disk, an I/O error, a closed standard stream, no memory). */
int t4_exit_code(int err);
/* Print "t410trace: <t4_errmsg() or strerror(-err)>" to stderr; returns
 * t4_exit_code(err). */
int t4_report(int err);
/* Print "t410trace: warning: ..." to stderr, one line (control characters
 * become spaces, as in t4_err()). */
void t4_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- clocks ---------------------------------------------------------- */

/* CLOCK_MONOTONIC_RAW in ns: the reference clock of user-trigger recordings
 * (BPF-trigger ones use CLOCK_MONOTONIC: the session's ref_clock says which). */
uint64_t t4_mono_raw_ns(void);
uint64_t t4_clock_ns(clockid_t clk);
/* The CPU's own free-running timestamp counter (rdtsc on x86_64,
 * cntvct_el0 on arm64); 0 on other architectures. */
uint64_t t4_cpu_ticks(void);
/* Frequency of t4_cpu_ticks() in Hz where the architecture tells it
 * (cntfrq_el0); 0 when unknown (x86_64: measure it against t4_mono_raw_ns). */
uint64_t t4_cpu_ticks_hz(void);

/* ---- deterministic pseudo-randomness --------------------------------- */

/* splitmix64's step: a well-mixed 64-bit function of x. */
static inline uint64_t t4_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* A value that depends on the seed and up to three coordinates only, so
 * that adding a parameter never shifts the others (the simulator's model,
 * virtual-time recordings). The same on every machine. */
static inline uint64_t t4_hash(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
	return t4_mix64(t4_mix64(t4_mix64(seed ^ t4_mix64(a)) ^ b) ^ c);
}

/* ---- parsing --------------------------------------------------------- */

/* Unsigned integer in decimal or 0x hex (a leading 0 is not octal, as in
 * event terms and perf's options), the whole string;
 * -EINVAL or -ERANGE with a message quoting s. */
int t4_parse_u64(const char *s, uint64_t *out);
/* The same in plain decimal only, as launchers and users write a count in
 * the environment ("0x10" is refused, not 16); -EINVAL (message set) for
 * anything but digits. */
int t4_parse_decimal(const char *s, uint64_t *out);
/* Duration with a unit suffix ns, us, ms, s, m or min (minutes), h (hours);
 * a bare number is refused (ambiguous), e.g. "1ms", "100us", "2.5s",
 * "10m", "1h". Result in ns, > 0. T4_DURATION_UNITS lists the units for
 * help texts. */
#define T4_DURATION_UNITS "ns, us, ms, s, m (or min), h"
int t4_parse_duration(const char *s, uint64_t *ns_out);
/* A time offset (decode --from/--to): a duration as above that may also be
 * zero ("0s", "0ms": the first trigger), never negative. */
int t4_parse_offset(const char *s, uint64_t *ns_out);
/* Format ns as a short human duration into buf ("1ms", "250us", "1.5s"). */
const char *t4_fmt_duration(uint64_t ns, char *buf, size_t cap);
/* Format a byte count ("12.3 MB"). */
const char *t4_fmt_bytes(uint64_t bytes, char *buf, size_t cap);

/* Copy a string into a fixed-size field, truncating (always terminated).
 * Returns strlen(src); a result >= cap means it was truncated. */
size_t t4_strlcpy(char *dst, const char *src, size_t cap);

/* ---- files ----------------------------------------------------------- */

/* Read a whole small regular file into buf (NUL-terminated, trailing
 * newline stripped). Returns its length or a negative errno (message set,
 * naming the path). -EFBIG if it does not fit, -EINVAL if it is not a
 * regular file (a FIFO, a device: a FIFO's open blocked for ever). */
int t4_read_small_file(const char *path, char *buf, size_t cap);
/* Write a whole string to a file: a new one (named as t4_create_unique's, next to it,
 * mode 0666 less the umask) renamed over path, so a link at path is
 * replaced, never followed, and a reader sees the old text or the new. */
int t4_write_small_file(const char *path, const char *text);
/* Create a new file for writing: O_EXCL and O_NOFOLLOW, so an existing
 * name (a symbolic link too) is -EEXIST and nothing is followed; mode is
 * filtered by the umask as open(2) does. Returns the fd (close-on-exec)
 * or a negative errno with the message naming path. */
int t4_create_new(const char *path, unsigned mode);
/* Open an existing path for writing in place (a FIFO, a device): without
 * O_CREAT or O_TRUNC, close-on-exec, no controlling terminal. A FIFO that
 * no process reads is waited for until one does: that wait is first said
 * in one line on stderr naming `name` (unless quiet), so that it is not
 * taken for a hang. With stop, the wait ends with -EINTR once *stop is
 * set (a signal handler's flag: a blocking open(2) would miss a signal
 * that came between the notice and the open); without, open(2) blocks.
 * Returns the fd or a negative errno, message set. */
int t4_open_in_place(const char *path, const char *name, bool quiet,
		     const volatile sig_atomic_t *stop);
/* Whether path is a symbolic link another user planted in a shared
 * directory: owned by neither this user nor the directory's owner, in a
 * sticky world-writable directory (/tmp). The kernel's fs.protected_symlinks
 * rule, for a path written in place (a FIFO, a device) where that sysctl
 * is off: such a link is not followed. */
bool t4_link_planted(const char *path);
/* Whether path is a directory another user made in a shared directory,
 * by the same rule: a name made ahead of the user's job (/tmp/job7), in
 * which its owner could remove or replace what is written. */
bool t4_dir_planted(const char *path);
/* Whether path is an entry this user may neither rename nor remove: in a
 * sticky directory (/tmp), owned by neither this user nor the directory's
 * owner, and this user is not root (CAP_FOWNER taken as root's). */
bool t4_sticky_foreign(const char *path);
/* The same under a fresh name "<base>.tmp-<pid>-XXXXXX" (random, retried
 * while taken), written into path (cap bytes; "" on failure); first the
 * names of that shape that dead processes of this user left next to base
 * (killed while writing) are removed (t4_privfile_reclaim). */
int t4_create_unique(char *path, size_t cap, const char *base, unsigned mode);
/* After a creation in dir failed ENOENT: -ENOENT with a message naming
 * name ("NAME: cannot create a file in the current directory: it was
 * deleted") when dir is a directory that was deleted (the current one,
 * rmdir'd under the process: creating in it fails ENOENT, which said "No
 * such file or directory" of a directory still there); else 0. */
int t4_dir_deleted(const char *name, const char *dir);
/* mkdir -p */
int t4_mkdirs(const char *path, unsigned mode);
/* rm -rf (temporary trees, fixtures); the first failure, with a message. */
int t4_rmtree(const char *path);

/* ---- CPU lists ("0-3,8,10-11") ---------------------------------------- */

/* Returns the first CPU in the list, or a negative errno for a malformed
 * list. count_out (optional) receives the number of distinct CPUs listed
 * ("0,0" and "0-1,1" count 1 and 2). */
int t4_cpulist_first(const char *list, int *count_out);
/* 1 when cpu is in the list, 0 when not, or a negative errno for a
 * malformed list. */
int t4_cpulist_has(const char *list, int cpu);

/* The lowest CPU of want that have does not list (-C against the online
 * CPUs) into *absent, -1 when have lists every one: 0, or a negative
 * errno for a malformed list. */
int t4_cpulist_first_absent(const char *want, const char *have, int *absent);

/* ---- the environment (env.c) -------------------------------------------- */

/* Environment variable name's value, or NULL when it is not set or empty:
 * the one rule for every variable t410trace reads (an empty one counts as
 * unset, as `NAME= t410trace ...` is how a shell unsets it for one run). */
const char *t4_env(const char *name);
/* Whether environment variable name switches something on: set, and
 * neither empty nor "0" (T410TRACE_BPF_DEBUG=0 means off). */
bool t4_env_on(const char *name);

/* ---- suggestions (suggest.c) -------------------------------------------- */

/* The i-th candidate name of src (NULL: skip it). */
typedef const char *(*t4_name_at_fn)(const void *src, size_t i);
/* Closest of n candidates to a misspelled name (edit distance <= 2, else
 * a prefix match either way); NULL when none is close. */
const char *t4_suggest(const char *name, const void *src, size_t n, t4_name_at_fn at);
/* A t4_name_at_fn over an array of strings. */
const char *t4_strv_at(const void *src, size_t i);
/* " (did you mean S?)", or "" when s is NULL, into buf; S as a terminal
 * may show it (t4_text, T4_TEXT_CONTROL). */
const char *t4_did_you_mean(char *buf, size_t cap, const char *s);

/* ---- private temporary directories (tmpdir.c) ---------------------------- */

/* $TMPDIR, or /tmp. */
const char *t4_tmp_root(void);
/* Create "<root>/<prefix>-<pid>-XXXXXX" (mode 0700) into buf, after
 * reclaiming the directories of that shape in root left by dead processes
 * of this user (t4_privdir_reclaim). */
int t4_privdir_create(char *buf, size_t cap, const char *root, const char *prefix,
		      const char *only);
/* Remove this user's regular files <prefix>-<pid>-XXXXXX in root whose
 * process is gone (a temporary output of a killed run); how many. */
int t4_privfile_reclaim(const char *root, const char *prefix);
/* The same for sockets <prefix>-<pid>-NNNNNN that refuse connections (a
 * control socket's private name, left by a recorder killed before it took
 * its path); how many. */
int t4_privsock_reclaim(const char *root, const char *prefix);
/* Remove this user's <prefix>-<pid>-XXXXXX directories in root whose
 * process is gone and, when only is not NULL, that hold nothing but an
 * empty regular file of that name (or nothing); returns how many. */
int t4_privdir_reclaim(const char *root, const char *prefix, const char *only);
/* Create "<tmp>/<prefix>-<pid>-XXXXXX" (mode 0700) into buf, after
 * reclaiming the directories of that prefix left by dead processes of
 * this user (kill -9 leaves them behind). */
int t4_tmpdir_create(char *buf, size_t cap, const char *prefix);
/* Remove this user's <prefix>-<pid>-* directories whose process is gone;
 * returns how many. */
int t4_tmpdir_reclaim(const char *prefix);

/* ---- checksums ------------------------------------------------------- */

/* CRC32C (Castagnoli), the iSCSI/ext4 variant: init 0, reflected, final
 * xor; t4_crc32c(0, "123456789", 9) == 0xE3069283. */
uint32_t t4_crc32c(uint32_t crc, const void *data, size_t len);
/* The same without the CPU's instruction (tests compare the two). */
uint32_t t4_crc32c_portable(uint32_t crc, const void *data, size_t len);

/* ---- histograms (hist.c): fixed size, allocation-free ------------------ */

#define T4_HIST_SUB 16 /* sub-buckets per power of two: ~6% resolution */
#define T4_HIST_BUCKETS (64 * T4_HIST_SUB)

struct t4_hist {
	uint64_t n;
	uint64_t max;
	uint64_t bucket[T4_HIST_BUCKETS];
};

/* The bucket of v: exact below T4_HIST_SUB, then 16 per power of two. */
static inline unsigned t4_hist_bucket(uint64_t v)
{
	if (v < T4_HIST_SUB)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	unsigned shift = msb - 4; /* log2(T4_HIST_SUB) */
	unsigned sub = (unsigned)(v >> shift) & (T4_HIST_SUB - 1);
	return (msb - 3) * T4_HIST_SUB + sub;
}

/* Add v, whose bucket b is t4_hist_bucket(v) (a caller may find it
 * faster, from a table of small values). */
static inline void t4_hist_add_at(struct t4_hist *h, unsigned b, uint64_t v)
{
	if (b >= T4_HIST_BUCKETS)
		b = T4_HIST_BUCKETS - 1;
	h->bucket[b]++;
	h->n++;
	if (v > h->max)
		h->max = v;
}

/* Inline: on the trigger path, and twice per sample in the decoder. */
static inline void t4_hist_add(struct t4_hist *h, uint64_t v)
{
	t4_hist_add_at(h, t4_hist_bucket(v), v);
}
void t4_hist_merge(struct t4_hist *into, const struct t4_hist *from);
/* Value at quantile q (0..1), bucket upper bound; 0 when empty. */
uint64_t t4_hist_quantile(const struct t4_hist *h, double q);

/* ---- threads (thread.c) ------------------------------------------------ */

/* Start fn(arg) on a thread named name (15 characters at most) with every
 * signal blocked (signals stay with the main thread). 0, or a negative
 * errno with "cannot start the <what>: <reason>". */
int t4_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, const char *name,
		    const char *what);

/* ---- text from a log (text.c) ------------------------------------------ */

/* Length of the valid UTF-8 character at s (1..4), 0 at an invalid byte
 * or the end of the string. */
size_t t4_utf8_seq(const char *s);
/* Whether the UTF-8 character of n bytes at s (n from t4_utf8_seq) is
 * one a terminal must not get: a control character (C0, DEL, C1), a
 * bidirectional control (U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069) or a line or paragraph separator (U+2028, U+2029). */
bool t4_text_control(const char *s, size_t n);
enum {
	T4_TEXT_CONTROL = 1u << 0, /* also escape what t4_text_control() says
				    * (a terminal) */
};
/* The next character of s into out (NUL-terminated): itself, or \xNN for
 * a byte that is not UTF-8 (or, with T4_TEXT_CONTROL, a control
 * character). Returns the bytes of s it took. */
size_t t4_text_next(const char *s, unsigned flags, char out[5]);
/* Whether s needs no escaping under flags. */
bool t4_text_clean(const char *s, unsigned flags);
/* s itself when clean, else its escaped copy in buf (cut at a whole
 * character to fit cap). */
const char *t4_text(const char *s, unsigned flags, char *buf, size_t cap);
/* The terminal columns of s (UTF-8, as t4_text() leaves it), not its
 * bytes, for padding a table: a name with an accent or a CJK character
 * (two columns) would otherwise pull the columns after it out of line. */
int t4_text_cols(const char *s);
/* JSON strings, the one rule of every JSON output (info --json, list
 * --json, JSONL, the report's data): the next character of s as JSON
 * string text into out (NUL-terminated), returning the bytes of s it took.
 * " and \ escaped; C0 controls, and what t4_text_control() names (DEL,
 * C1, bidirectional controls, U+2028, U+2029), as \uXXXX: the same
 * string once parsed, but no raw byte that could drive a terminal or end
 * a line of JavaScript; a byte that is not UTF-8 as the text \xNN (its
 * backslash escaped: the JSON stays valid UTF-8). Flags: T4_TEXT_CONTROL
 * makes what t4_text_control() names the text \xNN too (shown, not
 * kept); T4_JSON_HTML also escapes < > & (a string inside <script>). */
enum { T4_JSON_HTML = 1u << 1 };
#define T4_JSON_PIECE 8
size_t t4_json_next(const char *s, unsigned flags, char out[T4_JSON_PIECE]);
/* Write s as a JSON string literal (with quotes) to f (t4_json_next). */
void t4_json_str(FILE *f, const char *s);

/* ---- little-endian helpers (the on-disk byte order) ------------------- */

static inline void t4_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void t4_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void t4_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t t4_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}
/* Loads: one move on little-endian hosts (x86_64, arm64), bytes otherwise. */
static inline uint32_t t4_get_le32(const uint8_t *p)
{
	uint32_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&v, p, sizeof(v));
#else
	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
#endif
	return v;
}
static inline uint64_t t4_get_le64(const uint8_t *p)
{
	uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&v, p, sizeof(v));
#else
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
#endif
	return v;
}

#endif
