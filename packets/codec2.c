/* codec2.c - formats 2's and 3's coding of the trigger packets
 * (docs/FORMAT.md 5a; format 3's additions: 5a.8).
 *
 * In a version-2 chunk, reference and return packets travel in batches: a
 * run of consecutive trigger packets is one packet of type 20 whose body is
 * a bit stream of records, one per packet, in the order they were added.
 * Each record is coded against the previous record of its key (scheduler
 * or domain) in the chunk:
 *   - its key as "the key that followed the previous record's key last
 *     time" (1 bit while monitors read their domains in a fixed order);
 *   - flags and sizes as "same as before" (1 bit);
 *   - clocks as second-order deltas: the reference time and read_begin
 *     against the previous one plus the last per-trigger step, the local
 *     clock against the previous one plus the elapsed reference time times
 *     the last local/reference rate (0 bits' worth for a clock that is the
 *     reference clock);
 *   - counts against a prediction, per event and per block of 16 records:
 *     the previous count, or the previous count times the ratio of the
 *     local-clock deltas (the counter's previous rate times the elapsed
 *     local time), whichever the encoder found cheaper over the previous
 *     block; with the counter's granularity (a power of two: 32- and 64-byte
 *     units) divided out;
 *   - every residual zigzagged and Rice coded with a parameter that adapts
 *     to the recent residuals of that field (no side information), with an
 *     escape to a length-prefixed value for outliers.
 * The state is reset at every chunk, like format 1's deltas, so chunks
 * decode independently; the first two records of a key in a chunk carry
 * their fields length-prefixed (no history yet).
 *
 * Format 3 (the default) adds what a host's log needed, whose few values
 * per trigger made the per-record bits weigh (5a.8):
 *   - a quiet bit in front of each record: 1 = the predicted key, the same
 *     shape, and every field whose residual was 0 in its key's previous
 *     record (its quiet flag) 0 again, without bits: a trigger on time whose
 *     counters did not move costs a bit per record instead of a bit per
 *     field (a Rice code spends at least one on a 0);
 *   - a key's first record in a chunk coded against the chunk's latest
 *     record (its trigger, its time, the trigger step) instead of against
 *     nothing: a domain's first read is microseconds after the reference
 *     packet of its trigger.
 * Why not PFor or a zero-run code per field: both need the values of the
 * block or run before the first is written (the streaming argument below),
 * and the fields that are almost always 0 are 0 together in one record.
 *
 * Streaming: a batch lives only inside its chunk and packets keep their
 * order, so batching changes nothing a reader sees (chunks are what it
 * reads): the writer encodes each record as it comes, into a fixed scratch
 * of BATCH_BYTES that it copies into the chunk when a metadata packet comes,
 * the chunk closes or the scratch is full. Why not blocks of N triggers per
 * domain (frame of reference, PFor): they would hold packets back (up to N
 * triggers x 4096 domains of memory), reorder the file against the reference
 * packets, and need the block before coding its first value. What that
 * costs, measured by bench_codec on the same ideal residuals
 * (docs/PERFORMANCE.md, "One core, a third look"): PFor in blocks of 128
 * would code them 4-8% smaller than this Rice code, which spends at least
 * a bit on a residual of 0, and decode them in a third of the time, which
 * would make the whole summary about 1.17x faster. What the block choice
 * of a predictor costs: 2-8 bits per event every 16 records.
 *
 * Cost: per value the decoder does a Rice read, a 64x64->128 multiply for
 * rate predictions and two adds; per return record one 64-bit division (the
 * local/reference rate) and a second (the count ratio) only while an event
 * of the domain predicts by rate; no floating point anywhere (the format is
 * exact integer arithmetic, so any reader gets the same bits).
 *
 * The decoder's fast path (issue 19.2; about 172 instructions per value on
 * x86-64 at -O2 where it took 233, docs/PERFORMANCE.md): pkt_codec2_next()
 * keeps the bit reader in a local that everything it calls inline uses, so
 * it stays in registers through a whole record (the rare paths, raw() and a
 * Rice code that does not fit, are out of line and take the reader by value
 * and return it: its address never escapes; it is stored back without its
 * limits, which a batch does not change: br_save()). A Rice code is read
 * from a 64-bit buffer: one ctz counts the unary part (capped at the
 * escape), and when q + 1 + k bits are in the buffer (nearly always) three
 * shifts take the k bits and drop the code; the buffer is refilled (one
 * unaligned 8-byte load while 8 bytes are left, byte by byte in the last 8)
 * only when a code does not fit. Each Rice state keeps its k beside m,
 * computed when it is fed (a table lookup by bitlen(m)), as w = 64 + k,
 * w = 0 before its first residual and w = 128 + k for k > K_FAST: those
 * states' codes "do not fit" (q + w - 63 wraps or exceeds 63), so the fast
 * path feeds m without asking whether it has one or capping the residual; w
 * is a uint32_t (a store of a byte may alias anything, and made the
 * compiler reload the state after it), and the shifts by k are written as
 * shifts by w & 63, which x86-64 and arm64 do in one instruction (they take
 * the count modulo 64). A return record's clock fields and counts are read
 * by code inlined more than once (dec_clocks(), dec_count_run()): for a key
 * with a history, where the tests for a key's first records fold away, and
 * for a record that is not quiet (about half of them on the sim log), where
 * the per-field tests of quiet flags fold away too, besides the general
 * case; the counts also for a record whose events all predict by rate
 * without a granularity (nearly all on the sim log: no test of the
 * predictor per count). Each event and each clock field keeps its quiet
 * flag as a byte the decoder stores (a test and a set), not as a bit of a
 * mask. The header is decoded into a local before it is stored into the
 * caller's packet (both are uint64_t: stores into the packet would
 * otherwise make the compiler reload the state). What stays per record: the
 * state's commit, the key prediction, and the divisions above. Measured
 * with callgrind on `info` of the 60 s sim log (issue 19; 11.4 M values,
 * 2.04 M return packets): reading (t4_reader_next() and below) took
 * 1,095 instructions per return packet (pkt_codec2_next() 956 of them),
 * then 993 (909): with this file's changes and one call fewer at each layer
 * above it (codec.c tests for an open batch itself and inlines
 * batch_next(), reader.c inlines unpack_next()); now 857 (718) on
 * `decode -j 1` of that log, with the table of w, the count loop for plain
 * events, the quiet flags in bytes, the shifts by w & 63 and br_save().
 * A batch is opened by pkt_codec2_batch() and read by pkt_codec2_next(),
 * which return what t4_codec_decode() does (0 while more follow, the
 * batch's bytes after its last packet, -EBADMSG), and whether one is open
 * is the first member of the state (pkt_codec2_in_batch(), inline): the
 * reader takes a batch's packets from here straight, without a layer in
 * codec.c between. The record is read by next_record(), as before, inlined
 * into pkt_codec2_next() (a version with the record's code rewritten for
 * the new returns made the compiler lay out the count loop worse: 31 M
 * instructions more, 2%, on that log).
 * The encoder's usual code (put_res) is one write and rice_feed() behind
 * one test of w, and a record whose events are all plain predicts its
 * counts without a test per count (block_choice() keeps the masks for
 * both sides): 4% fewer instructions (docs/PERFORMANCE.md, "The zstd
 * level of formats 2 and 3").
 */
#include "codec_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KEYS 4096          /* keys with state, as in format 1 */
#define BLOCK 16           /* records per predictor block */
#define RICE_ESC 12        /* this many 1 bits: an escape follows */
#define RAW_LEN_BITS 7     /* raw(): length 0..64 */
#define K_MAX 56
#define M_CAP (1ull << 56) /* residual magnitudes fed to the Rice state */
#define SHIFT_BITS 6
#define BATCH_BYTES (32u << 10) /* a batch's bit stream at most */
#define RECORD_MAX 2048u   /* above the largest record (about 800 bytes: 64 escaped counts) */
#define FRAME_MAX 16u      /* type, body_len, count */

_Static_assert(BATCH_BYTES + FRAME_MAX + 8 <= T4_CODEC_MAX_OUT - T4_PKT_MAX_ENCODED,
	       "a batch and a metadata packet fit in what an encode may write");

enum { K_REF = 0, K_RET = 1 };

/* Format 3's quiet flags: bit numbers of a record's fields (5a.8). */
enum { F_T, F_B, F_W, F_L, F_E, F_R, F_CLOCKS };   /* return records */
enum { R_T, R_REF, R_MONO, R_REAL, R_L, R_FIELDS }; /* reference records */

__extension__ typedef unsigned __int128 u128;

#define HOT static inline __attribute__((always_inline)) /* per value */
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* An adaptive Rice parameter: m ~ 4 x the mean of recent residuals; k, the
 * parameter m gives (5a.2), kept beside it so that a read costs no bitlen,
 * as w = 64 + k while k <= K_FAST, w = 128 + k above (k = w % 64 either
 * way), and w = 0 (k = 0) before the first residual: a state that is all
 * zero has none. The decoder's fast path (get_res) takes a code only where
 * q + w - 63 (q + 1 + k for w = 64 + k) is at most the bits it has (<= 63):
 * a state without residuals or with k > K_FAST never is, and goes to the
 * slow path, so that the fast path neither asks for a first residual nor
 * caps the residual it feeds (v < 12 x 2^K_FAST <= M_CAP). */
struct rice {
	uint64_t m;
	uint32_t w; /* not a byte: see the top of this file */
};

#define K_FAST 52 /* the largest k the decoder's fast path takes */

struct ev2 {
	uint64_t count;  /* previous count */
	struct rice r;
	uint8_t rate;    /* predictor of this block: 1 = rate, 0 = previous */
	uint8_t shift;   /* granularity: counts are multiples of 2^shift */
	uint8_t zero;    /* decoder: its last residual was 0 (format 3's quiet
			  * flag: a byte the count loop sets, not a bit) */
};

/* The encoder's alone, apart (struct ret2's evx): what the current block
 * tells about the next. Apart so that the decoder's state of an event is
 * 32 bytes, two to a cache line: a record's events span half the lines. */
struct ev2_learn {
	uint64_t or_acc;
	uint64_t cost[2]; /* bits of the sampled residuals: never overflows */
};

struct ret2 {
	uint32_t gen, n; /* n: records of this key in the chunk so far */
	uint32_t flags, n_counts;
	uint32_t qclk;   /* format 3, encoder: quiet clock fields (bit F_*) */
	uint8_t qf[F_CLOCKS]; /* format 3, decoder: the same, a byte a field */
	uint64_t qcnt;   /* format 3, encoder: quiet counts (bit i: event i) */
	uint64_t trigger, begin, width, local, enabled, running;
	uint64_t step, rate, dlocal;
	uint64_t rate_evs; /* bit i = ev[i].rate (block_choice) */
	uint64_t plain_evs; /* bit i: ev[i] predicts by rate, without a
			     * granularity (0 until its first block) */
	uint32_t plain_run; /* events 0..plain_run - 1 are plain */
	struct rice rt, rb, rw, rl, re, rr;
	struct ev2 ev[T4_MAX_COUNTERS];
	struct ev2_learn evx[T4_MAX_COUNTERS]; /* encoder */
};
_Static_assert(sizeof(struct ev2) == 32, "an event's decoder state: half a cache line");

struct ref2 {
	uint32_t gen, n;
	uint32_t flags, bookmark;
	uint32_t qclk; /* format 3, encoder: quiet fields (bit R_*) */
	uint8_t qf[R_FIELDS]; /* format 3, decoder: the same, a byte a field */
	uint64_t trigger, ref, mono_off, real_off, local, step, rate;
	struct rice rt, rref, rmono, rreal, rl;
};

struct next2 {
	uint32_t gen;
	uint32_t kind;
	uint32_t key;
};

struct bw { /* bit writer, LSB first */
	uint8_t *p;
	uint64_t buf;
	unsigned n; /* bits in buf, < 8 between calls */
};

struct br { /* bit reader, LSB first */
	const uint8_t *p, *end;
	const uint8_t *fast_end; /* p < fast_end: 8 bytes are readable at p */
	uint64_t buf;
	unsigned n; /* bits in buf, <= 63 */
	int bad;
};

/* Format 3: what the chunk's latest record says about time, to seed the
 * state of a key's first record (5a.8). */
struct seed {
	uint64_t trigger, time, step;
};

struct t4_codec2 {
	struct pkt_codec2_head h; /* first: codec.c reads it (codec_int.h) */
	uint32_t gen;
	bool v3;        /* format 3: quiet records, seeded first records */
	struct seed seed;
	bool have_prev;
	uint32_t prev_kind, prev_key;
	/* encoder: the open batch */
	uint8_t *bits;  /* BATCH_BYTES + 8 */
	struct bw w;
	uint32_t count;
	/* decoder: the batch being read (its records left: h.left) */
	struct br r;
	const uint8_t *batch_body;
	size_t batch_len;    /* its body's bytes */
	size_t batch_total;  /* its bytes with its frame: what its last record
			      * returns as consumed */
	struct next2 next[2][KEYS];
	struct ref2 ref[KEYS];
	struct ret2 ret[KEYS];
};

/* The state (about 8 MB: KEYS keys of each kind, of which a log uses a few
 * dozen) is mapped, with the encoder's bit buffer behind it, not calloc'd:
 * anonymous pages are zero and cost nothing until touched, where calloc
 * clears memory it takes back from the heap (a process that opened a
 * reader before, as the CLI's check of its logs does, freed such a state
 * there): 16 M instructions of memset on every decode, whatever its
 * length. (LeakSanitizer does not see into a mapping: nothing in it may
 * hold the only pointer to a heap block, hence the buffer in it.) */
#define CODEC2_MAP (sizeof(struct t4_codec2) + BATCH_BYTES + 8)

struct t4_codec2 *pkt_codec2_new(void)
{
	struct t4_codec2 *c = mmap(NULL, CODEC2_MAP, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		return NULL;
	c->bits = (uint8_t *)(c + 1); /* BATCH_BYTES + 8 */
	c->gen = 1;
	c->w.p = c->bits;
	return c;
}

void pkt_codec2_free(struct t4_codec2 *c)
{
	if (c)
		munmap(c, CODEC2_MAP);
}

void pkt_codec2_reset(struct t4_codec2 *c)
{
	if (++c->gen == 0) { /* wrapped after 2^32 chunks: clear for real */
		memset(c->next, 0, sizeof(c->next));
		memset(c->ref, 0, sizeof(c->ref));
		memset(c->ret, 0, sizeof(c->ret));
		c->gen = 1;
	}
	c->have_prev = false;
	c->seed = (struct seed){ 0, 0, 0 };
	c->w = (struct bw){ .p = c->bits };
	c->count = 0;
	c->h.left = 0;
}

void pkt_codec2_start(struct t4_codec2 *c, unsigned version)
{
	c->v3 = version >= 3;
	pkt_codec2_reset(c);
}

/* ---- state ------------------------------------------------------------ */

/* The state of a key in this chunk (zeroed on first use), or `scratch`
 * zeroed for a key without state (>= KEYS: coded as a first record). */
HOT struct ret2 *ret_state(struct t4_codec2 *c, uint32_t key, struct ret2 *scratch)
{
	struct ret2 *s = key < KEYS ? &c->ret[key] : scratch;

	if (key >= KEYS || s->gen != c->gen) {
		memset(s, 0, sizeof(*s));
		s->gen = c->gen;
		if (c->v3) { /* 5a.8: a first record against the chunk's latest */
			s->trigger = c->seed.trigger;
			s->begin = s->local = c->seed.time;
			s->step = c->seed.step;
			s->rate = 1ull << 32;
		}
	}
	return s;
}

static struct ref2 *ref_state(struct t4_codec2 *c, uint32_t key, struct ref2 *scratch)
{
	struct ref2 *s = key < KEYS ? &c->ref[key] : scratch;

	if (key >= KEYS || s->gen != c->gen) {
		memset(s, 0, sizeof(*s));
		s->gen = c->gen;
		if (c->v3) {
			s->trigger = c->seed.trigger;
			s->ref = s->local = c->seed.time;
			s->step = c->seed.step;
			s->rate = 1ull << 32;
		}
	}
	return s;
}

/* What a record leaves for the next key's first record (format 3). */
static inline void seed_note(struct t4_codec2 *c, uint64_t trigger, uint64_t time,
			     uint64_t step)
{
	c->seed = (struct seed){ trigger, time, step };
}

static bool key_predicted(const struct t4_codec2 *c, uint32_t kind, uint32_t key)
{
	const struct next2 *n;

	if (!c->have_prev || c->prev_key >= KEYS)
		return false;
	n = &c->next[c->prev_kind][c->prev_key];
	return n->gen == c->gen && n->kind == kind && n->key == key;
}

/* The predicted key after the previous record; false when there is none. */
static bool key_prediction(const struct t4_codec2 *c, uint32_t *kind, uint32_t *key)
{
	const struct next2 *n;

	if (!c->have_prev || c->prev_key >= KEYS)
		return false;
	n = &c->next[c->prev_kind][c->prev_key];
	if (n->gen != c->gen)
		return false;
	*kind = n->kind;
	*key = n->key;
	return true;
}

static void key_commit(struct t4_codec2 *c, uint32_t kind, uint32_t key)
{
	if (c->have_prev && c->prev_key < KEYS)
		c->next[c->prev_kind][c->prev_key] = (struct next2){ c->gen, kind, key };
	c->have_prev = true;
	c->prev_kind = kind;
	c->prev_key = key;
}

static inline unsigned bitlen(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0;
}

HOT unsigned rice_k(const struct rice *r)
{
	return r->w & 63;
}

/* No residual yet: k = 0, and the next one sets m (5a.5 row 9). */
static inline void rice_restart(struct rice *r)
{
	*r = (struct rice){ 0, 0 };
}

/* w (see struct rice) by bitlen(m | 7) - 1: k = max(bitlen(m), 3) - 3,
 * plus 64 while k <= K_FAST and 128 above. The spec's min(56, ...) never
 * binds: u <= 2^56 keeps m <= 2^58 (4u at first, then m - floor(m / 4) + u
 * <= 3 x 2^56 + 2^56), so bitlen(m) <= 59 (the last entries are never
 * used). One load, where a formula would take three instructions more. */
static const uint8_t rice_w_of[64] = {
	64,  64,  64,  65,  66,  67,  68,  69,  /* bitlen 1..8: k = 0..5 */
	70,  71,  72,  73,  74,  75,  76,  77,  /* k = 6..13 */
	78,  79,  80,  81,  82,  83,  84,  85,  /* k = 14..21 */
	86,  87,  88,  89,  90,  91,  92,  93,  /* k = 22..29 */
	94,  95,  96,  97,  98,  99,  100, 101, /* k = 30..37 */
	102, 103, 104, 105, 106, 107, 108, 109, /* k = 38..45 */
	110, 111, 112, 113, 114, 115, 116, 181, /* k = 46..52, 53 */
	182, 183, 184, 184, 184, 184, 184, 184, /* k = 54..56, never */
};

/* m, and the w it gives. */
HOT void rice_set(struct rice *r, uint64_t m)
{
	r->m = m;
	r->w = rice_w_of[63u ^ (unsigned)__builtin_clzll(m | 7)];
}

/* Feed u <= M_CAP to a state that has residuals (the decoder's fast path:
 * its residuals are below 12 x 2^K_FAST). */
HOT void rice_feed(struct rice *r, uint64_t u)
{
	rice_set(r, r->m - (r->m >> 2) + u);
}

/* Feed u (5a.2): the first residual sets m to 4u. */
HOT void rice_update(struct rice *r, uint64_t u)
{
	if (u > M_CAP)
		u = M_CAP;
	if (likely(r->w))
		rice_feed(r, u);
	else
		rice_set(r, u << 2);
}
_Static_assert(M_CAP == 1ull << 56 && K_MAX == 56 && 12ull << K_FAST <= M_CAP,
	       "k = bitlen(m) - 3 stays <= K_MAX, and the fast path's residuals need no cap");

/* Prediction = base + round(delta x rate / 2^32), modulo 2^64. */
HOT uint64_t scale32(uint64_t delta, uint64_t rate)
{
	u128 x = (u128)delta * rate;

	/* (x + 2^31) >> 32, as the bits above 32 plus the carry of bit 31:
	 * no 128-bit add */
	return (uint64_t)(x >> 32) + ((uint32_t)x >> 31);
}

/* floor(num x 2^32 / den) when num < 2^32 and den != 0; else `otherwise`. */
static inline uint64_t ratio32(uint64_t num, uint64_t den, uint64_t otherwise)
{
	if (!den || num >> 32)
		return otherwise;
	return (num << 32) / den;
}

/* The value a granularity of 2^s rounds a prediction to. */
HOT uint64_t round_to(uint64_t p, unsigned s)
{
	uint64_t mask = (1ull << s) - 1;

	return s ? (p + (1ull << (s - 1))) & ~mask : p;
}

/* ---- bit writer --------------------------------------------------------- */

/* 8 bytes, little-endian: one store where the host is little-endian. */
HOT void store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, sizeof(v));
#else
	t4_put_le64(p, v);
#endif
}

/* k <= 56 bits of v (v < 2^k). The buffer has 8 bytes of slack. */
HOT void bw_put(struct bw *w, uint64_t v, unsigned k)
{
	unsigned bytes;

	w->buf |= v << w->n;
	w->n += k; /* at most 63 */
	store_le64(w->p, w->buf);
	bytes = w->n >> 3;
	w->p += bytes;
	w->buf >>= 8 * bytes;
	w->n &= 7;
}

static inline void bw_put64(struct bw *w, uint64_t v, unsigned k)
{
	if (k > 32) {
		bw_put(w, v & 0xffffffffu, 32);
		bw_put(w, v >> 32, k - 32);
	} else {
		bw_put(w, v, k);
	}
}

/* raw(v): 7 bits of length n (the bit length of v), then v in n bits. */
static inline void put_raw(struct bw *w, uint64_t v)
{
	unsigned n = bitlen(v);

	bw_put(w, n, RAW_LEN_BITS);
	bw_put64(w, v, n);
}

/* A residual r (mod 2^64) of a field whose values are multiples of 2^s:
 * Rice coded with r's state, or escaped; the state learns |r| / 2^s. */
HOT void put_res(struct bw *w, struct rice *st, uint64_t r, unsigned s)
{
	uint64_t z = zz(r), v = z >> s, q;
	unsigned k = rice_k(st), wk = st->w - 64u;

	q = v >> k;
	/* the usual code: a state with residuals and k <= 56 - RICE_ESC (then
	 * wk = k; it wraps for w = 0 and exceeds 63 for w >= 128), not
	 * escaped: one write, q 1 bits, a 0, k bits; and v < 12 x 2^44 needs
	 * no cap, so the state learns it without the tests of rice_update() */
	if (likely(q < RICE_ESC && wk <= 56 - RICE_ESC && (r & ((1ull << s) - 1)) == 0)) {
		bw_put(w, ((v & ((1ull << wk) - 1)) << (q + 1)) | ((1ull << q) - 1),
		       (unsigned)q + 1 + wk);
		rice_feed(st, v);
		return;
	}
	if (q < RICE_ESC && (r & ((1ull << s) - 1)) == 0) {
		bw_put(w, (1ull << q) - 1, (unsigned)q + 1);
		bw_put(w, v & ((1ull << k) - 1), k);
	} else {
		bw_put(w, (1u << RICE_ESC) - 1, RICE_ESC);
		put_raw(w, z);
	}
	rice_update(st, v);
}

/* A field of a record: raw while its key has fewer than 2 records in the
 * chunk, Rice coded after. */
HOT void put_field(struct bw *w, uint32_t n, struct rice *st, uint64_t r)
{
	if (n < 2)
		put_raw(w, zz(r));
	else
		put_res(w, st, r, 0);
}

/* ---- bit reader -------------------------------------------------------- */

/* The fast path is described at the top of this file: nothing that reads a
 * record on the hot path takes the address of pkt_codec2_next's reader. */

static inline struct br br_open(const uint8_t *p, const uint8_t *end)
{
	return (struct br){ .p = p, .end = end, .fast_end = end - p >= 8 ? end - 7 : p };
}

/* Top the buffer up to 56..63 bits, or to every bit left near the end of
 * the stream. Bits of buf above n are the stream's next bits or 0: a fill
 * ORs in the same bits again. */
HOT void br_fill(struct br *b)
{
	if (likely(b->p < b->fast_end)) { /* 8 bytes readable at p */
		b->buf |= t4_get_le64(b->p) << b->n;
		b->p += (63 - b->n) >> 3;
		b->n |= 56;
		return;
	}
	while (b->n < 56 && b->p < b->end) {
		b->buf |= (uint64_t)*b->p++ << b->n;
		b->n += 8;
	}
}

/* k <= 56 bits. */
HOT uint64_t br_get(struct br *b, unsigned k)
{
	uint64_t v;

	if (unlikely(b->n < k)) {
		br_fill(b);
		if (b->n < k) {
			b->bad = 1;
			return 0;
		}
	}
	v = b->buf & ((1ull << k) - 1);
	b->buf >>= k;
	b->n -= k;
	return v;
}

static inline uint64_t br_get64(struct br *b, unsigned k)
{
	uint64_t lo;

	if (k <= 32)
		return br_get(b, k);
	lo = br_get(b, 32);
	return lo | br_get(b, k - 32) << 32;
}

/* Store what reading changes of a reader (its limits stay). */
HOT void br_save(struct br *to, const struct br *b)
{
	to->p = b->p;
	to->buf = b->buf;
	to->n = b->n;
	to->bad = b->bad;
}

/* raw() (5a.2): out of line, the reader by value (see above). */
static __attribute__((noinline)) struct br br_raw(struct br b, uint64_t *v)
{
	unsigned n = (unsigned)br_get(&b, RAW_LEN_BITS);

	*v = 0;
	if (n > 64)
		b.bad = 1;
	else
		*v = br_get64(&b, n);
	return b;
}

HOT uint64_t get_raw(struct br *b)
{
	uint64_t v;

	*b = br_raw(*b, &v);
	return v;
}

/* Leading 1 bits, at most RICE_ESC; the 0 after fewer is consumed. */
static inline unsigned br_ones(struct br *b)
{
	unsigned q, used;

	if (b->n < RICE_ESC + 1)
		br_fill(b);
	q = (unsigned)__builtin_ctzll(~b->buf | (1ull << 63));
	if (q >= RICE_ESC) {
		q = RICE_ESC;
		used = RICE_ESC;
	} else {
		used = q + 1;
	}
	if (used > b->n) {
		b->bad = 1;
		return RICE_ESC;
	}
	b->buf >>= used;
	b->n -= used;
	return q;
}

/* get_res() when the code is an escape or does not fit in the buffer. */
static __attribute__((noinline)) struct br res_slow(struct br b, struct rice *st, unsigned s,
						     uint64_t *res)
{
	unsigned k = rice_k(st), q = br_ones(&b);
	uint64_t v;

	if (q < RICE_ESC) {
		v = (uint64_t)q << k | br_get(&b, k);
		*res = unzz(v) << s;
	} else {
		uint64_t z = get_raw(&b);
		*res = unzz(z);
		v = z >> s;
	}
	rice_update(st, v);
	return b;
}

/* The residual put_res() wrote (5a.2 res()). */
HOT uint64_t get_res(struct br *b, struct rice *st, unsigned s)
{
	unsigned w = st->w, q, len;
	uint64_t t, v, res;

	/* len = q + 1 + k; without a residual yet (w = 0) it wraps above any
	 * n, and with k > K_FAST (w = 128 + k) it is above 63: the slow path,
	 * which knows those cases, takes the code */
	q = (unsigned)__builtin_ctzll(~b->buf | 1ull << RICE_ESC); /* <= RICE_ESC */
	len = q + w - 63;
	if (unlikely(len > b->n)) { /* 1 code in 10-15: fill, look again */
		br_fill(b);
		q = (unsigned)__builtin_ctzll(~b->buf | 1ull << RICE_ESC);
		len = q + w - 63;
	}
	if (unlikely(q == RICE_ESC || len > b->n)) {
		*b = res_slow(*b, st, s, &res);
		return res;
	}
	/* q 1 bits, a 0 and k bits, all in the buffer (q < RICE_ESC, k <= K_FAST:
	 * no shift by 64): with t the bits after the 0 and rest = t >> k,
	 * v = q 2^k + t mod 2^k = t - (rest - q) 2^k, modulo 2^64 */
	t = b->buf >> (q + 1);
	b->buf = t >> (w & 63); /* k: the shifts by w & 63 are plain shifts by w */
	v = t - ((b->buf - q) << (w & 63));
	b->n -= len;
	rice_feed(st, v);
	return unzz(v) << s;
}

HOT uint64_t get_field(struct br *b, uint32_t n, struct rice *st)
{
	return n < 2 ? unzz(get_raw(b)) : get_res(b, st, 0);
}

static inline uint32_t get_raw32(struct br *b)
{
	uint64_t v = get_raw(b);

	if (v > UINT32_MAX)
		b->bad = 1;
	return (uint32_t)v;
}

/* A record's key (5a.4): 1 bit when predicted, else its kind and value. */
static inline void put_key(struct t4_codec2 *c, struct bw *w, uint32_t kind, uint32_t key)
{
	if (key_predicted(c, kind, key)) {
		bw_put(w, 1, 1);
	} else {
		bw_put(w, kind << 1, 2);
		put_raw(w, key);
	}
	key_commit(c, kind, key);
}

/* A record's head: format 3's quiet bit, then (not quiet) its key and its
 * shape (5a.5, 5a.6 fields 1-2: 1 bit when unchanged, else raw values). */
static inline void put_head(struct t4_codec2 *c, struct bw *w, uint32_t kind, uint32_t key,
			    bool quiet, bool same, uint32_t n, const uint32_t *shape,
			    unsigned n_shape)
{
	if (c->v3)
		bw_put(w, quiet, 1);
	if (quiet) {
		key_commit(c, kind, key);
		return;
	}
	put_key(c, w, kind, key);
	if (same) {
		bw_put(w, 1, 1);
		return;
	}
	if (n)
		bw_put(w, 0, 1);
	for (unsigned i = 0; i < n_shape; i++)
		put_raw(w, shape[i]);
}

/* ---- return records ------------------------------------------------------ */

static bool block_start(uint32_t n)
{
	return n >= 2 && (n - 2) % BLOCK == 0;
}

/* The ratio of this record's local-clock delta to the previous one's
 * (2^32 = 1): what the rate predictor multiplies the previous count by. */
static uint64_t count_ratio(const struct ret2 *s, uint64_t local)
{
	return ratio32(local - s->local, s->dlocal, 1ull << 32);
}

HOT uint64_t count_pred(const struct ev2 *e, uint64_t prev, uint64_t rc)
{
	return round_to(e->rate ? scale32(prev, rc) : prev, e->shift);
}

HOT void commit_ret(struct ret2 *s, const struct t4_ret_pkt *r)
{
	if (s->n) {
		uint64_t db = r->read_begin_ns - s->begin, dl = r->local_clock - s->local;
		if (r->trigger_id - s->trigger == 1)
			s->step = db;
		s->rate = ratio32(dl, db, 0);
		s->dlocal = dl;
	}
	s->trigger = r->trigger_id;
	s->begin = r->read_begin_ns;
	s->width = r->read_end_ns - r->read_begin_ns;
	s->local = r->local_clock;
	s->enabled = r->enabled_delta;
	s->running = r->running_delta;
	s->flags = r->flags;
	s->n_counts = r->n_counts; /* the counts: stored as they are coded */
	s->n++;
}

/* Event i's predictor and granularity for the block (both sides): a
 * change restarts its Rice state; the masks say which events predict by
 * rate, and which are plain (by rate, without a granularity). */
HOT void block_choice(struct ret2 *s, uint32_t i, uint8_t rate, uint8_t shift)
{
	struct ev2 *e = &s->ev[i];

	if (rate != e->rate || shift != e->shift)
		rice_restart(&e->r);
	e->rate = rate;
	e->shift = shift;
	s->rate_evs = (s->rate_evs & ~(1ull << i)) | (uint64_t)rate << i;
	s->plain_evs = (s->plain_evs & ~(1ull << i)) | (uint64_t)(rate && !shift) << i;
}

HOT void block_choices_done(struct ret2 *s)
{
	s->plain_run = ~s->plain_evs ? (uint32_t)__builtin_ctzll(~s->plain_evs) : 64;
}

/* Every event of n plain (see dec_count_run). */
HOT bool plain_events(const struct ret2 *s, uint32_t n)
{
	return n <= s->plain_run;
}

/* Encoder: the block header, chosen from what the block before showed;
 * returns the events whose shift changed (for put_block). */
static inline uint64_t choose_block(struct ret2 *s, uint32_t n_counts)
{
	uint64_t moved = 0;

	for (uint32_t i = 0; i < n_counts; i++) {
		struct ev2 *e = &s->ev[i];
		struct ev2_learn *x = &s->evx[i];
		uint8_t rate = x->cost[1] <= x->cost[0];
		uint8_t shift = x->or_acc ? (uint8_t)__builtin_ctzll(x->or_acc) : e->shift;

		if (shift != e->shift)
			moved |= 1ull << i;
		block_choice(s, i, rate, shift);
		*x = (struct ev2_learn){ 0, { 0, 0 } };
	}
	block_choices_done(s);
	return moved;
}

static inline void put_block(struct bw *w, const struct ret2 *s, uint32_t n_counts,
			     uint64_t moved)
{
	for (uint32_t i = 0; i < n_counts; i++) {
		bw_put(w, s->ev[i].rate, 1);
		if (moved >> i & 1) {
			bw_put(w, 0, 1);
			bw_put(w, s->ev[i].shift, SHIFT_BITS);
		} else {
			bw_put(w, 1, 1);
		}
	}
}

/* What the block's choice learns from a record: the bits of each count's
 * residual against either prediction (5a.7). */
static void sample_costs(struct ret2 *s, const struct t4_ret_pkt *r, uint64_t rc)
{
	uint32_t prev_n = s->n_counts;

	for (uint32_t i = 0; i < r->n_counts; i++) {
		struct ev2_learn *x = &s->evx[i];
		uint64_t c = r->counts[i], prev = i < prev_n ? s->ev[i].count : 0;

		x->cost[0] += bitlen(zz(c - prev));
		x->cost[1] += bitlen(zz(c - scale32(prev, rc)));
	}
}

/* The residuals of a record with the same events as before, and which
 * are not 0 (inlined twice: for events that are all plain, no test of
 * the predictor per count). */
HOT uint64_t count_run(struct ret2 *s, const struct t4_ret_pkt *r, uint64_t *res, uint64_t rc,
		       bool plain)
{
	uint64_t nz = 0;

	for (uint32_t i = 0; i < r->n_counts; i++) {
		struct ev2 *e = &s->ev[i];
		uint64_t c = r->counts[i];

		s->evx[i].or_acc |= c;
		res[i] = c - (plain ? scale32(e->count, rc) : count_pred(e, e->count, rc));
		e->count = c;
		nz |= (uint64_t)(res[i] != 0) << i;
	}
	return nz;
}

/* The residuals of a record's counts (after the block's choice), the
 * block's learning, and which residuals are not 0. */
static inline uint64_t count_residuals(struct ret2 *s, const struct t4_ret_pkt *r,
				       uint64_t *res)
{
	uint64_t rc = count_ratio(s, r->local_clock), nz = 0;
	uint32_t prev_n = s->n_counts;

	/* the block's choice is learnt from its last 4 records (5a.7) */
	if (s->n >= 1 && (s->n + 2) % BLOCK < 4)
		sample_costs(s, r, rc);
	if (s->n >= 2 && r->n_counts <= prev_n) { /* the same events as before */
		if (plain_events(s, r->n_counts))
			return count_run(s, r, res, rc, true);
		return count_run(s, r, res, rc, false);
	}
	for (uint32_t i = 0; i < r->n_counts; i++) {
		struct ev2 *e = &s->ev[i];
		uint64_t c = r->counts[i], prev = i < prev_n ? e->count : 0;

		s->evx[i].or_acc |= c;
		e->count = c;
		res[i] = c - (s->n < 2 ? prev : count_pred(e, prev, rc));
		nz |= (uint64_t)(res[i] != 0) << i;
	}
	return nz;
}

/* A field of a quiet record (format 3): nothing when it is quiet. */
HOT void put_quiet(struct bw *w, bool quiet, uint32_t n, struct rice *st, uint64_t r)
{
	if (!quiet)
		put_field(w, n, st, r);
}

static void enc_ret(struct t4_codec2 *c, const struct t4_ret_pkt *r)
{
	struct bw lw = c->w, *w = &lw; /* in registers: its stores alias nothing */
	struct ret2 scratch, *s = ret_state(c, r->domain_id, &scratch);
	uint64_t dt = r->trigger_id - s->trigger;
	uint64_t width = r->read_end_ns - r->read_begin_ns;
	uint64_t pl = s->local + scale32(r->read_begin_ns - s->begin, s->rate);
	uint64_t f[F_CLOCKS] = { dt - 1, r->read_begin_ns - (s->begin + s->step * dt),
				 width - s->width, r->local_clock - pl, 0, 0 };
	uint64_t res[T4_MAX_COUNTERS], moved = 0, nz;
	uint32_t nzc = 0, qc;
	bool same = s->n && r->flags == s->flags && r->n_counts == s->n_counts;
	bool quiet;

	if (r->flags & T4_RET_MULTIPLEXED) {
		f[F_E] = r->enabled_delta - s->enabled;
		f[F_R] = r->running_delta - s->running;
	}
	for (unsigned i = 0; i < F_CLOCKS; i++)
		nzc |= (uint32_t)(f[i] != 0) << i;
	if (block_start(s->n))
		moved = choose_block(s, r->n_counts);
	nz = count_residuals(s, r, res);
	quiet = c->v3 && s->n >= 2 && same && key_predicted(c, K_RET, r->domain_id) &&
		!(nzc & s->qclk) && !(nz & s->qcnt);
	put_head(c, w, K_RET, r->domain_id, quiet, same, s->n,
		 (const uint32_t[]){ r->flags, r->n_counts }, 2);
	qc = quiet ? s->qclk : 0;
	put_quiet(w, qc >> F_T & 1, s->n, &s->rt, f[F_T]);
	put_quiet(w, qc >> F_B & 1, s->n, &s->rb, f[F_B]);
	put_quiet(w, qc >> F_W & 1, s->n, &s->rw, f[F_W]);
	put_quiet(w, qc >> F_L & 1, s->n, &s->rl, f[F_L]);
	if (r->flags & T4_RET_MULTIPLEXED) {
		put_quiet(w, qc >> F_E & 1, s->n, &s->re, f[F_E]);
		put_quiet(w, qc >> F_R & 1, s->n, &s->rr, f[F_R]);
	}
	if (block_start(s->n))
		put_block(w, s, r->n_counts, moved);
	if (s->n < 2) {
		for (uint32_t i = 0; i < r->n_counts; i++)
			put_raw(w, zz(res[i]));
	} else {
		uint64_t skip = quiet ? s->qcnt : 0;
		for (uint32_t i = 0; i < r->n_counts; i++)
			if (!(skip >> i & 1))
				put_res(w, &s->ev[i].r, res[i], s->ev[i].shift);
	}
	s->qclk = ~nzc & ((1u << F_CLOCKS) - 1);
	s->qcnt = ~nz & (r->n_counts < 64 ? (1ull << r->n_counts) - 1 : ~0ull);
	commit_ret(s, r);
	seed_note(c, r->trigger_id, r->read_begin_ns, s->step);
	c->w = lw;
}

HOT void dec_block(struct br *b, struct ret2 *s, uint32_t n_counts)
{
	for (uint32_t i = 0; i < n_counts; i++) {
		struct ev2 *e = &s->ev[i];
		uint8_t rate = (uint8_t)br_get(b, 1), shift = e->shift;

		if (!br_get(b, 1))
			shift = (uint8_t)br_get(b, SHIFT_BITS);
		block_choice(s, i, rate, shift);
	}
	block_choices_done(s);
}

/* The counts after a key's first two records, from their predictions and
 * residuals (none for an event whose `zero` flag is set, in a quiet
 * record); each event learns whether its residual was 0. Inlined four
 * times, for a record that is quiet or not (most are not: no test per
 * count) and whose events are all plain (they predict by rate, without a
 * granularity: the sim log's, no test of either per count) or not. */
HOT void dec_count_run(struct br *b, struct ev2 *ev, uint64_t *counts, uint32_t n,
		       uint64_t rc, bool quiet, bool plain)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ev2 *e = &ev[i];
		uint64_t d = quiet && e->zero ? 0 : get_res(b, &e->r, plain ? 0 : e->shift);

		e->zero = d == 0;
		counts[i] = e->count = (plain ? scale32(e->count, rc) : count_pred(e, e->count, rc)) + d;
	}
}

/* The n counts of a record whose local clock reads `local`, each event's
 * `zero` flag set (format 3's quiet flags). quiet: the counts flagged are
 * their prediction. */
HOT void dec_counts(struct br *b, struct ret2 *s, uint64_t *counts, uint32_t n,
		    uint64_t local, bool quiet)
{
	uint32_t prev_n = s->n_counts, i;
	uint64_t d, rc;

	if (s->n < 2) {
		for (i = 0; i < n; i++) {
			d = unzz(get_raw(b));
			s->ev[i].zero = d == 0;
			s->ev[i].count = counts[i] = (i < prev_n ? s->ev[i].count : 0) + d;
		}
		return;
	}
	if (block_start(s->n))
		dec_block(b, s, n);
	/* the ratio (a division) only when an event's prediction may use it
	 * (rate_evs may keep the bits of events beyond n: a division for
	 * nothing after the events shrank, the same counts) */
	rc = s->rate_evs ? count_ratio(s, local) : 0;
	if (n > prev_n) { /* events beyond the previous record's: from 0 */
		for (i = prev_n; i < n; i++)
			s->ev[i].count = 0;
	}
	if (plain_events(s, n)) {
		if (!quiet)
			dec_count_run(b, s->ev, counts, n, rc, false, true);
		else
			dec_count_run(b, s->ev, counts, n, rc, true, true);
	} else {
		if (!quiet)
			dec_count_run(b, s->ev, counts, n, rc, false, false);
		else
			dec_count_run(b, s->ev, counts, n, rc, true, false);
	}
}

/* A field of a record: 0 when the record is quiet and the field's flag
 * (*zero) is set (format 3), else field(); the flag learns whether it was
 * 0 (a byte a field, set by one instruction, where a mask took five). */
HOT uint64_t get_quiet(struct br *b, bool quiet, uint8_t *zero, uint32_t n, struct rice *st)
{
	uint64_t v = quiet && *zero ? 0 : get_field(b, n, st);

	*zero = v == 0;
	return v;
}

/* A return record's clock fields (5a.6 fields 3-8) into h, whose flags are
 * known, and their quiet flags (format 3). quiet: the record is; n: the
 * key's records so far. Inlined thrice: with n = 2 for a key with a
 * history (every record but a key's first two in a chunk), with quiet =
 * false for a record that is not quiet: the tests of n and of the flags
 * fold away where they are constants. */
HOT void dec_clocks(struct br *b, struct ret2 *s, struct t4_ret_pkt *h, bool quiet, uint32_t n)
{
	uint8_t *qf = s->qf;
	uint64_t dt = 1 + get_quiet(b, quiet, &qf[F_T], n, &s->rt);

	h->trigger_id = s->trigger + dt;
	h->read_begin_ns = s->begin + s->step * dt + get_quiet(b, quiet, &qf[F_B], n, &s->rb);
	h->read_end_ns = h->read_begin_ns + s->width + get_quiet(b, quiet, &qf[F_W], n, &s->rw);
	h->local_clock = s->local + scale32(h->read_begin_ns - s->begin, s->rate) +
			 get_quiet(b, quiet, &qf[F_L], n, &s->rl);
	h->enabled_delta = h->running_delta = 0;
	/* without T4_RET_MULTIPLEXED the flags of E and R are left as they
	 * are: a quiet record has its key's previous flags, so only a
	 * multiplexed record's flags are ever asked by one that is quiet */
	if (!(h->flags & T4_RET_MULTIPLEXED))
		return;
	h->enabled_delta = s->enabled + get_quiet(b, quiet, &qf[F_E], n, &s->re);
	h->running_delta = s->running + get_quiet(b, quiet, &qf[F_R], n, &s->rr);
}

/* Write a decoded header (h: every field but the counts) into r. */
HOT void put_header(struct t4_ret_pkt *r, const struct t4_ret_pkt *h)
{
	r->trigger_id = h->trigger_id;
	r->domain_id = h->domain_id;
	r->flags = h->flags;
	r->local_clock = h->local_clock;
	r->read_begin_ns = h->read_begin_ns;
	r->read_end_ns = h->read_end_ns;
	r->enabled_delta = h->enabled_delta;
	r->running_delta = h->running_delta;
	r->n_counts = h->n_counts;
}

/* The header is decoded into a local (h, in registers), so that the
 * stores into the caller's packet cannot make the compiler reload the
 * state (both are uint64_t: they might alias). */
HOT int dec_ret(struct t4_codec2 *c, struct br *b, uint32_t key, bool quiet,
		   struct t4_ret_pkt *r)
{
	struct ret2 scratch, *s = ret_state(c, key, &scratch);
	struct t4_ret_pkt h;

	h.domain_id = key;
	if (quiet && s->n < 2)
		return -1; /* a quiet record has a history (5a.8) */
	if (quiet || (s->n && br_get(b, 1))) {
		h.flags = s->flags;
		h.n_counts = s->n_counts;
	} else {
		h.flags = get_raw32(b);
		h.n_counts = get_raw32(b);
		if (h.n_counts > T4_MAX_COUNTERS)
			return -1;
	}
	if (quiet) /* which has a history (n >= 2) */
		dec_clocks(b, s, &h, true, 2);
	else if (likely(s->n >= 2))
		dec_clocks(b, s, &h, false, 2);
	else
		dec_clocks(b, s, &h, false, s->n);
	put_header(r, &h);
	dec_counts(b, s, r->counts, h.n_counts, h.local_clock, quiet);
	if (b->bad)
		return -1;
	commit_ret(s, &h);
	seed_note(c, h.trigger_id, h.read_begin_ns, s->step);
	return 0;
}

/* ---- reference records --------------------------------------------------- */

static void commit_ref(struct ref2 *s, const struct t4_ref_pkt *r)
{
	if (s->n) {
		uint64_t dr = r->ref_ns - s->ref, dl = r->local_clock - s->local;
		if (r->trigger_id - s->trigger == 1)
			s->step = dr;
		s->rate = ratio32(dl, dr, 0);
	}
	s->trigger = r->trigger_id;
	s->ref = r->ref_ns;
	s->mono_off = r->mono_ns - r->ref_ns;
	s->real_off = r->real_ns - r->ref_ns;
	s->local = r->local_clock;
	s->flags = r->flags;
	s->bookmark = r->bookmark_id;
	s->n++;
}

static void enc_ref(struct t4_codec2 *c, const struct t4_ref_pkt *r)
{
	struct bw lw = c->w, *w = &lw;
	struct ref2 scratch, *s = ref_state(c, r->sched_id, &scratch);
	uint64_t dt = r->trigger_id - s->trigger;
	uint64_t pl = s->local + scale32(r->ref_ns - s->ref, s->rate);
	uint64_t f[R_FIELDS] = { dt - 1, r->ref_ns - (s->ref + s->step * dt),
				 (r->mono_ns - r->ref_ns) - s->mono_off,
				 (r->real_ns - r->ref_ns) - s->real_off, r->local_clock - pl };
	bool same = s->n && r->flags == s->flags && r->bookmark_id == s->bookmark &&
		    !r->overruns;
	uint32_t nz = 0, qc;
	bool quiet;

	for (unsigned i = 0; i < R_FIELDS; i++)
		nz |= (uint32_t)(f[i] != 0) << i;
	quiet = c->v3 && s->n >= 2 && same && key_predicted(c, K_REF, r->sched_id) &&
		!(nz & s->qclk);
	put_head(c, w, K_REF, r->sched_id, quiet, same, s->n,
		 (const uint32_t[]){ r->flags, r->bookmark_id, r->overruns }, 3);
	qc = quiet ? s->qclk : 0;
	put_quiet(w, qc >> R_T & 1, s->n, &s->rt, f[R_T]);
	put_quiet(w, qc >> R_REF & 1, s->n, &s->rref, f[R_REF]);
	put_quiet(w, qc >> R_MONO & 1, s->n, &s->rmono, f[R_MONO]);
	put_quiet(w, qc >> R_REAL & 1, s->n, &s->rreal, f[R_REAL]);
	put_quiet(w, qc >> R_L & 1, s->n, &s->rl, f[R_L]);
	s->qclk = ~nz & ((1u << R_FIELDS) - 1);
	commit_ref(s, r);
	seed_note(c, r->trigger_id, r->ref_ns, s->step);
	c->w = lw;
}

HOT int dec_ref(struct t4_codec2 *c, struct br *b, uint32_t key, bool quiet,
		   struct t4_ref_pkt *r)
{
	struct ref2 scratch, *s = ref_state(c, key, &scratch);
	uint8_t *qf = s->qf;
	uint64_t dt;

	r->sched_id = key;
	if (quiet && s->n < 2)
		return -1;
	if (quiet || (s->n && br_get(b, 1))) {
		r->flags = s->flags;
		r->bookmark_id = s->bookmark;
		r->overruns = 0;
	} else {
		r->flags = get_raw32(b);
		r->bookmark_id = get_raw32(b);
		r->overruns = get_raw32(b);
	}
	dt = 1 + get_quiet(b, quiet, &qf[R_T], s->n, &s->rt);
	r->trigger_id = s->trigger + dt;
	r->ref_ns = s->ref + s->step * dt + get_quiet(b, quiet, &qf[R_REF], s->n, &s->rref);
	r->mono_ns = r->ref_ns + s->mono_off + get_quiet(b, quiet, &qf[R_MONO], s->n, &s->rmono);
	r->real_ns = r->ref_ns + s->real_off + get_quiet(b, quiet, &qf[R_REAL], s->n, &s->rreal);
	r->local_clock = s->local + scale32(r->ref_ns - s->ref, s->rate) +
			 get_quiet(b, quiet, &qf[R_L], s->n, &s->rl);
	if (b->bad)
		return -1;
	commit_ref(s, r);
	seed_note(c, r->trigger_id, r->ref_ns, s->step);
	return 0;
}

/* ---- batches ------------------------------------------------------------ */

size_t pkt_codec2_pending(const struct t4_codec2 *c)
{
	return c->count ? (size_t)(c->w.p - c->bits) + 1 + FRAME_MAX : 0;
}

size_t pkt_codec2_flush(struct t4_codec2 *c, uint8_t *out, size_t cap)
{
	uint8_t cnt[VARINT_MAX], *o = out;
	size_t bytes, clen;

	if (!c->count)
		return 0;
	if (c->w.n)
		bw_put(&c->w, 0, 8 - c->w.n); /* pad the last byte with 0 bits */
	bytes = (size_t)(c->w.p - c->bits);
	clen = (size_t)(put_uv(cnt, c->count) - cnt);
	if (cap < bytes + clen + FRAME_MAX)
		return 0; /* callers give T4_CODEC_MAX_OUT: never */
	o = put_uv(o, T4_PKT_BATCH);
	o = put_uv(o, clen + bytes);
	memcpy(o, cnt, clen);
	memcpy(o + clen, c->bits, bytes);
	c->w = (struct bw){ .p = c->bits };
	c->count = 0;
	return (size_t)(o - out) + clen + bytes;
}

int pkt_codec2_add(struct t4_codec2 *c, const struct t4_packet *p, uint8_t *out, size_t cap)
{
	size_t wrote = 0;

	if ((size_t)(c->w.p - c->bits) > BATCH_BYTES - RECORD_MAX) {
		if (cap < pkt_codec2_pending(c))
			return t4_err(ENOBUFS, "a batch of %u packets does not fit in %zu bytes",
				      c->count, cap);
		wrote = pkt_codec2_flush(c, out, cap);
	}
	if (p->type == T4_PKT_REF)
		enc_ref(c, &p->ref);
	else
		enc_ret(c, &p->ret);
	c->count++;
	return (int)wrote;
}

/* The next record of the open batch: 1 = a packet and more follow, 0 =
 * its last packet, -1 = malformed (the batch closed). Inlined into its
 * one caller, pkt_codec2_next(). */
static inline __attribute__((always_inline)) int next_record(struct t4_codec2 *c,
							      const uint8_t *body, size_t len,
							      struct t4_packet *p)
{
	struct br lb, *b = &lb; /* in registers while a record is read */
	uint32_t kind, key;
	bool quiet = false, predicted;
	int rc;

	if (!c->h.left) { /* a new batch: its record count, then the bits */
		struct cur cu = { body, body + len, body + len, 0 };
		uint64_t n = get_uv(&cu);
		if (cu.bad || n == 0 || n > (uint64_t)(cu.end - cu.p) * 8)
			return -1; /* every record takes at least one bit */
		c->r = br_open(cu.p, cu.end);
		c->h.left = (uint32_t)n;
	}
	lb = c->r;
	if (c->v3)
		quiet = br_get(b, 1);
	predicted = quiet || br_get(b, 1);
	if (predicted) {
		if (!key_prediction(c, &kind, &key))
			return c->h.left = 0, -1;
	} else {
		kind = (uint32_t)br_get(b, 1);
		key = get_raw32(b);
	}
	if (b->bad)
		return c->h.left = 0, -1;
	if (predicted) { /* next(prev) is (kind, key) already */
		c->prev_kind = kind;
		c->prev_key = key;
	} else {
		key_commit(c, kind, key);
	}
	p->copy = false;
	p->type = kind == K_REF ? T4_PKT_REF : T4_PKT_RET;
	rc = kind == K_REF ? dec_ref(c, b, key, quiet, &p->ref)
			   : dec_ret(c, b, key, quiet, &p->ret);
	br_save(&c->r, &lb);
	if (rc < 0)
		return c->h.left = 0, -1;
	return --c->h.left > 0;
}

/* A malformed batch: the message is the codec's (out of line: never on the
 * usual path). */
static __attribute__((noinline)) int batch_bad(const struct t4_codec2 *c)
{
	return t4_err(EBADMSG, "packet type %d: batch of %zu bytes malformed", T4_PKT_BATCH,
		      c->batch_len);
}

int pkt_codec2_next(struct t4_codec2 *c, struct t4_packet *p)
{
	int rc = next_record(c, c->batch_body, c->batch_len, p);

	if (rc < 0)
		return batch_bad(c);
	return rc ? 0 : (int)c->batch_total;
}

int pkt_codec2_batch(struct t4_codec2 *c, const uint8_t *body, size_t len, size_t total,
		     struct t4_packet *p)
{
	c->batch_body = body;
	c->batch_len = len;
	c->batch_total = total;
	c->h.left = 0; /* next_record() reads its record count */
	return pkt_codec2_next(c, p);
}
