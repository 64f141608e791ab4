/* bench_log.c - what the log writer and reader cost: N return packets of
 * 32 counters (a realistic stream: byte counters around 1e6 that drift
 * slowly with +-5% noise, a steady cycle counter, small event counts,
 * idle counters at zero) written through the writer thread (encode + zstd
 * + io_uring or pwrite) and read back with the reader, for both backends
 * at each format's default zstd level and at level 1. Prints a markdown
 * table (docs/PERFORMANCE.md).
 *
 * Write CPU is the whole process (getrusage RUSAGE_SELF: producer, writer
 * thread, io_uring workers); the producer's own share (generating and
 * putting the packets) is measured with RUSAGE_THREAD and shown apart, so
 * "writer CPU" = total - producer is what the log itself costs. Every run
 * is done in log formats 1, 2 and 3 (issue 19: formats 2's and 3's writer
 * must cost no more CPU per value than format 1's).
 *
 * usage: bench_log [-n PACKETS] [-d DIR] [-k] [-l LEVEL] [-b uring|pwrite] [-f 1|2|3]
 *   -n  packets per run (default 1000000)
 *   -l  this zstd level instead of the default and 1
 *   -b  only this backend
 *   -f  only this log format
 *   -d  directory for the log file (default /tmp)
 *   -k  keep the log files
 */
#include "packets/packets.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define N_COUNTERS 32

struct gen {
	uint64_t rng;
	double mean[N_COUNTERS]; /* drifting mean of each counter */
	uint64_t local_clock;
};

struct run {
	const char *backend_name;
	enum t4_log_backend backend;
	int level;
	unsigned format;
};

struct result {
	double w_wall, w_cpu, w_prod, r_wall, r_cpu;
	struct t4_log_stats st;
	uint64_t read_packets;
};

static uint64_t rng_next(struct gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

/* Uniform in [-1, 1). */
static double rng_unit(struct gen *g)
{
	return (double)(rng_next(g) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static void gen_init(struct gen *g)
{
	memset(g, 0, sizeof(*g));
	g->rng = 0x243f6a8885a308d3ull;
	for (int k = 0; k < N_COUNTERS; k++)
		g->mean[k] = k < 16 ? 1e6 * (1 + k / 8.0) : 1e3 * (k - 15);
}

static void gen_packet(struct gen *g, uint64_t i, struct t4_packet *p)
{
	struct t4_ret_pkt *r = &p->ret;

	p->type = T4_PKT_RET;
	r->trigger_id = i;
	r->domain_id = 3;
	r->flags = 0;
	g->local_clock += 1000000 + (rng_next(g) & 63);
	r->local_clock = g->local_clock;
	r->read_begin_ns = 5000000000ull + i * 1000000 + (rng_next(g) & 4095);
	r->read_end_ns = r->read_begin_ns + 1800 + (rng_next(g) & 511);
	r->enabled_delta = r->running_delta = 0;
	r->n_counts = N_COUNTERS;
	r->counts[0] = 1000000 + (rng_next(g) & 15); /* cycles: steady */
	for (int k = 1; k < N_COUNTERS; k++) {
		if (k >= 24) { /* events that do not happen */
			r->counts[k] = 0;
			continue;
		}
		g->mean[k] *= 1 + 0.001 * rng_unit(g); /* slow drift */
		r->counts[k] = (uint64_t)(g->mean[k] *
					  (1 + (k < 16 ? 0.05 : 0.1) * rng_unit(g)) + 0.5);
	}
}

static double now_s(void)
{
	return (double)t4_mono_raw_ns() / 1e9;
}

static double cpu_s(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int bench_write(const char *path, const struct run *run, uint64_t n,
		       struct result *res)
{
	struct t4_log_opts o = { .path = path, .zstd_level = run->level,
				 .backend = run->backend, .format = run->format };
	double w0 = now_s(), c0 = cpu_s(RUSAGE_SELF), p0 = cpu_s(RUSAGE_THREAD);
	struct t4_status_pkt fin = { .triggers = n };
	struct t4_log *log;
	struct t4_ring *ring;
	struct t4_packet p;
	struct gen g;
	int err;

	gen_init(&g);
	err = t4_log_open(&log, &o);
	if (err)
		return err;
	err = t4_log_ring(log, 4u << 20, T4_RING_WAIT, &ring);
	if (!err)
		err = t4_log_start(log);
	for (uint64_t i = 0; !err && i < n; i++) {
		gen_packet(&g, i, &p);
		err = t4_ring_put(ring, &p);
	}
	res->w_prod = cpu_s(RUSAGE_THREAD) - p0;
	if (err) {
		t4_log_close(log, NULL, NULL);
		return err;
	}
	err = t4_log_close(log, &fin, &res->st);
	res->w_wall = now_s() - w0;
	res->w_cpu = cpu_s(RUSAGE_SELF) - c0;
	return err;
}

static int bench_read(const char *path, uint64_t n, struct result *res)
{
	double w0 = now_s(), c0 = cpu_s(RUSAGE_SELF);
	struct t4_reader_stats rs;
	struct t4_reader *r;
	struct t4_packet p;
	uint64_t sum = 0;
	int ret;

	ret = t4_reader_open(&r, path, NULL, NULL);
	if (ret)
		return ret;
	res->read_packets = 0;
	while ((ret = t4_reader_next(r, &p)) == 1) {
		if (p.type == T4_PKT_RET)
			sum += p.ret.counts[1];
		res->read_packets++;
	}
	t4_reader_stats(r, &rs);
	t4_reader_close(r);
	res->r_wall = now_s() - w0;
	res->r_cpu = cpu_s(RUSAGE_SELF) - c0;
	if (ret < 0)
		return ret;
	if (res->read_packets != n + 1 || rs.damaged_chunks || !sum)
		return t4_err(EBADMSG, "%s: read back %llu packets of %llu", path,
			      (unsigned long long)res->read_packets,
			      (unsigned long long)n + 1);
	return 0;
}

static void print_row(const struct run *run, uint64_t n, const struct result *r)
{
	double raw_mb = (double)r->st.raw_bytes / 1e6;

	printf("| %u | %s | %d | %.3f | %.3f | %.3f | %.3f | %.2f | %.0f | %.1f | %.3f | %.1f "
	       "| %.3f | %.3f | %.2f |\n",
	       run->format, run->backend_name, run->level, r->w_wall, r->w_cpu, r->w_prod,
	       r->w_cpu - r->w_prod, n / r->w_wall / 1e6, raw_mb / r->w_wall,
	       (double)r->st.raw_bytes / (double)n,
	       (double)r->st.file_bytes / ((double)n * N_COUNTERS),
	       (double)r->st.raw_bytes / (double)r->st.file_bytes, r->r_wall, r->r_cpu,
	       n / r->r_wall / 1e6);
}

int main(int argc, char **argv)
{
	static const struct run backends[] = {
		{ "io_uring", T4_LOG_URING, 0 },
		{ "pwrite", T4_LOG_PWRITE, 0 },
	};
	int levels[] = { 0, 1 }; /* 0: the format's default (t4_log_zstd_default) */
	const char *dir = "/tmp";
	uint64_t n = 1000000;
	char path[4096];
	const char *only_be = NULL;
	bool keep = false;
	int opt, err, only_level = 0;
	unsigned only_format = 0;

	while ((opt = getopt(argc, argv, "n:d:kl:b:f:")) != -1) {
		if (opt == 'n' && t4_parse_u64(optarg, &n) == 0 && n > 0)
			continue;
		if (opt == 'd') {
			dir = optarg;
			continue;
		}
		if (opt == 'k') {
			keep = true;
			continue;
		}
		if (opt == 'l' && (only_level = atoi(optarg)) != 0)
			continue;
		if (opt == 'b' && (!strcmp(optarg, "uring") || !strcmp(optarg, "pwrite"))) {
			only_be = optarg;
			continue;
		}
		if (opt == 'f' && (only_format = (unsigned)atoi(optarg)) >= 1 &&
		    only_format <= T4_FORMAT_VERSION)
			continue;
		fprintf(stderr, "usage: %s [-n PACKETS] [-d DIR] [-k] [-l LEVEL] "
			"[-b uring|pwrite] [-f 1|2|3]\n", argv[0]);
		return 2;
	}
	printf("%llu return packets of %d counters per run, log in %s\n\n",
	       (unsigned long long)n, N_COUNTERS, dir);
	printf("| format | backend | zstd | write wall s | write CPU s | producer CPU s "
	       "| writer CPU s | Mpkt/s | raw MB/s | raw B/pkt | disk B/value | ratio "
	       "| read wall s | read CPU s | read Mpkt/s |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < 2 * T4_FORMAT_VERSION * T4_ARRAY_LEN(backends); i++) {
		struct run run = backends[i / (2 * T4_FORMAT_VERSION)];
		struct result res = { 0 };

		run.level = only_level ? only_level : levels[i / T4_FORMAT_VERSION % 2];
		run.format = 1 + (unsigned)(i % T4_FORMAT_VERSION); /* the formats side by side */
		if ((only_level && i / T4_FORMAT_VERSION % 2) || (only_format && run.format != only_format) ||
		    (only_be && (run.backend == T4_LOG_URING) != !strcmp(only_be, "uring")))
			continue;
		if (!only_level && run.level && run.level == t4_log_zstd_default(run.format))
			continue; /* its default, run already */
		if (!run.level)
			run.level = t4_log_zstd_default(run.format);
		snprintf(path, sizeof(path), "%s/bench_log-%s-%d-f%u.t4", dir,
			 run.backend_name, run.level, run.format);
		unlink(path); /* a kept run's: the log never writes over a file */
		err = bench_write(path, &run, n, &res);
		if (!err)
			err = bench_read(path, n, &res);
		if (!keep)
			unlink(path);
		if (err)
			return t4_report(err);
		print_row(&run, n, &res);
		fflush(stdout);
	}
	return 0;
}
