/* bench_intervals.c - timing statistics of a recorded log, for
 * tools/bench_vs_perf.sh (a helper, not a benchmark: tools/bench.sh does not
 * run it on its own).
 *
 * Reads a t410trace log with the packets reader and prints, as shell-friendly
 * `key=value` lines (values in ns):
 *   - the interval between consecutive periodic reference packets (ref_ns):
 *     count, p50, p99, min, max, and the largest deviation from the period;
 *   - the read window of every return packet (read_end - read_begin);
 *   - trigger-to-read latency (read_begin - the trigger's ref_ns) and
 *     trigger-to-last-return (the latest read_end of a trigger - its ref_ns).
 * Trade-off: every sample is kept (exact quantiles, 16 bytes per packet), so
 * memory grows with the log; fine for benchmark runs of seconds.
 *
 * Usage: bench_intervals FILE
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packets/packets.h"
#include "util/util.h"

/* A growable array of u64 samples. */
struct vec {
	uint64_t *v;
	size_t n, cap;
};

/* Per trigger: its ref_ns (0 = no reference packet seen) and the latest
 * read_end of its return packets. */
struct trig {
	uint64_t ref_ns, last_end;
};

struct stats {
	struct vec interval, window, to_read, to_last;
	struct trig *trig;
	size_t n_trig;
	uint64_t period_ns, overruns, refs, rets;
	uint64_t prev_id, prev_ns; /* previous periodic reference packet */
	int have_prev;
};

static int vec_push(struct vec *a, uint64_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 4096;
		uint64_t *nv = realloc(a->v, cap * sizeof(*nv));
		if (!nv)
			return t4_err(ENOMEM, "out of memory for %zu samples", cap);
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

/* The per-trigger slot for id, growing the table as needed. */
static struct trig *trig_slot(struct stats *s, uint64_t id)
{
	if (id > (1u << 30))
		return NULL; /* absurd for a benchmark run; ignore */
	if (id >= s->n_trig) {
		size_t n = s->n_trig ? s->n_trig : 4096;
		while (n <= id)
			n *= 2;
		struct trig *t = realloc(s->trig, n * sizeof(*t));
		if (!t)
			return NULL;
		memset(t + s->n_trig, 0, (n - s->n_trig) * sizeof(*t));
		s->trig = t;
		s->n_trig = n;
	}
	return &s->trig[id];
}

static int on_ref(struct stats *s, const struct t4_ref_pkt *r)
{
	struct trig *t = trig_slot(s, r->trigger_id);

	s->refs++;
	s->overruns += r->overruns;
	if (t)
		t->ref_ns = r->ref_ns;
	if (!(r->flags & T4_REF_PERIODIC) || (r->flags & T4_REF_FINAL)) {
		s->have_prev = 0;
		return 0;
	}
	int rc = 0;
	if (s->have_prev && r->trigger_id == s->prev_id + 1 && r->ref_ns > s->prev_ns)
		rc = vec_push(&s->interval, r->ref_ns - s->prev_ns);
	s->prev_id = r->trigger_id;
	s->prev_ns = r->ref_ns;
	s->have_prev = 1;
	return rc;
}

static int on_ret(struct stats *s, const struct t4_ret_pkt *r)
{
	struct trig *t = trig_slot(s, r->trigger_id);

	s->rets++;
	if (r->flags & T4_RET_READ_FAILED)
		return 0;
	if (r->read_end_ns >= r->read_begin_ns) {
		int rc = vec_push(&s->window, r->read_end_ns - r->read_begin_ns);
		if (rc)
			return rc;
	}
	if (t && r->read_end_ns > t->last_end)
		t->last_end = r->read_end_ns;
	return 0;
}

static void quiet_warn(void *ud, uint64_t offset, const char *msg)
{
	(void)ud;
	(void)offset;
	(void)msg;
}

/* Pass 0 gathers reference packets, windows and the latest read_end per
 * trigger; pass 1 the read_begin of every return packet against its
 * trigger's ref_ns (a reference packet may come after its returns in the
 * log, so this needs all of them first: the log is simply read twice). */
static int read_log(const char *path, struct stats *s, int pass)
{
	struct t4_reader *rd = NULL;
	struct t4_packet *p = malloc(sizeof(*p));
	int rc;

	if (!p)
		return t4_err(ENOMEM, "out of memory");
	/* the first pass already warned about any damage */
	rc = t4_reader_open(&rd, path, pass ? quiet_warn : NULL, NULL);
	while (rc >= 0 && (rc = t4_reader_next(rd, p)) > 0) {
		if (pass == 0 && p->type == T4_PKT_SESSION)
			s->period_ns = p->session.period_ns;
		else if (pass == 0 && p->type == T4_PKT_REF)
			rc = on_ref(s, &p->ref);
		else if (pass == 0 && p->type == T4_PKT_RET)
			rc = on_ret(s, &p->ret);
		else if (pass == 1 && p->type == T4_PKT_RET &&
			 !(p->ret.flags & T4_RET_READ_FAILED) &&
			 p->ret.trigger_id < s->n_trig) {
			uint64_t ref = s->trig[p->ret.trigger_id].ref_ns;
			if (ref && p->ret.read_begin_ns >= ref)
				rc = vec_push(&s->to_read, p->ret.read_begin_ns - ref);
		}
	}
	t4_reader_close(rd);
	free(p);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank quantile of a sorted vector. */
static uint64_t quantile(const struct vec *a, double q)
{
	if (!a->n)
		return 0;
	size_t i = (size_t)(q * (double)a->n + 0.999999);
	return a->v[(i ? i : 1) - 1];
}

static void print_dist(const char *name, struct vec *a)
{
	if (a->n)
		qsort(a->v, a->n, sizeof(uint64_t), cmp_u64);
	printf("%s_n=%zu\n%s_p50=%llu\n%s_p99=%llu\n%s_min=%llu\n%s_max=%llu\n",
	       name, a->n, name, (unsigned long long)quantile(a, 0.5), name,
	       (unsigned long long)quantile(a, 0.99), name,
	       (unsigned long long)(a->n ? a->v[0] : 0), name,
	       (unsigned long long)(a->n ? a->v[a->n - 1] : 0));
}

static int collect_to_last(struct stats *s)
{
	for (size_t i = 0; i < s->n_trig; i++) {
		const struct trig *t = &s->trig[i];
		if (t->ref_ns && t->last_end >= t->ref_ns) {
			int rc = vec_push(&s->to_last, t->last_end - t->ref_ns);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static void stats_free(struct stats *s)
{
	free(s->interval.v);
	free(s->window.v);
	free(s->to_read.v);
	free(s->to_last.v);
	free(s->trig);
}

int main(int argc, char **argv)
{
	struct stats s = { 0 };
	int rc;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(argc == 2 && !strcmp(argv[1], "-h") ? stdout : stderr,
			"usage: bench_intervals FILE   (interval and latency "
			"statistics of a t410trace log, key=value lines, ns)\n");
		return argc == 2 && !strcmp(argv[1], "-h") ? 0 : 2;
	}
	rc = read_log(argv[1], &s, 0);
	if (rc >= 0)
		rc = read_log(argv[1], &s, 1);
	if (rc >= 0)
		rc = collect_to_last(&s);
	if (rc < 0) {
		stats_free(&s);
		return t4_report(rc);
	}
	uint64_t dev = 0;
	for (size_t i = 0; i < s.interval.n; i++) {
		uint64_t x = s.interval.v[i];
		uint64_t d = x > s.period_ns ? x - s.period_ns : s.period_ns - x;
		dev = d > dev ? d : dev;
	}
	printf("period=%llu\nrefs=%llu\nrets=%llu\noverruns=%llu\n"
	       "interval_maxdev=%llu\n",
	       (unsigned long long)s.period_ns, (unsigned long long)s.refs,
	       (unsigned long long)s.rets, (unsigned long long)s.overruns,
	       (unsigned long long)dev);
	print_dist("interval", &s.interval);
	print_dist("window", &s.window);
	print_dist("to_read", &s.to_read);
	print_dist("to_last", &s.to_last);
	stats_free(&s);
	return 0;
}
