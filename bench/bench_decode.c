/* bench_decode.c - what decoding costs, per core: counter values per second
 * from a compressed log to the summary, and CSV rows per second, with the
 * stages apart (reading alone, the index alone as `info` does, the whole
 * decoder without output, summary, CSV to /dev/null).
 *
 * CPU time is this process's (CLOCK_PROCESS_CPUTIME_ID; the stages run with
 * jobs = 1, single-threaded, so one core); each stage runs `-r` times and
 * the best run is kept (the machine's noise only ever adds time). Then
 * decode -j: the summary's wall time with 1 thread and with 2 (the log read
 * on a thread of its own), alternated, best of `-r` each. Prints markdown.
 *
 * usage: bench_decode LOG [-r RUNS]
 *   LOG: a recording, e.g. of the simulated Tegra410 in virtual time:
 *        t410trace record --sim --virtual --duration 60s -o LOG
 */
#include "decode/decode.h"
#include "packets/packets.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum stage { READ, INDEX, DECODE, SUMMARY, CSV, N_STAGES };
static const char *const stage_names[] = {
	"read (zstd, CRC, packets)", "index (what `info` does)", "decode, no output",
	"decode to summary", "decode to CSV (/dev/null)",
};

struct counts {
	uint64_t values, packets, rows;
};

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int read_stage(const char *path, bool index, struct counts *c)
{
	struct t4_reader *r;
	struct t4_index *ix = NULL;
	struct t4_packet *p = malloc(sizeof(*p));
	int rc;

	if (!p || (index && t4_index_new(&ix) < 0))
		return -ENOMEM;
	if ((rc = t4_reader_open(&r, path, NULL, NULL)) < 0) {
		free(p);
		t4_index_free(ix);
		return rc;
	}
	memset(c, 0, sizeof(*c));
	while ((rc = t4_reader_next(r, p)) > 0) {
		c->packets++;
		if (p->type == T4_PKT_RET)
			c->values += p->ret.n_counts;
		if (ix)
			t4_index_add(ix, p);
	}
	t4_reader_close(r);
	t4_index_free(ix);
	free(p);
	return rc;
}

/* Rows a CSV output would have: counted by a sink that does nothing else. */
static int count_rows(void *ud, const struct t4_decoder *dec, const struct t4_interval *iv)
{
	struct counts *c = ud;

	(void)dec;
	c->values += iv->n_counts;
	return 0;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int decode_stage(const char *path, enum stage s, unsigned jobs, struct counts *c)
{
	struct t4_decode_opts o = { .jobs = jobs };
	struct t4_output_opts oo = { .format = s == CSV ? T4_FMT_CSV : T4_FMT_SUMMARY };
	struct t4_sink_ops ops = { .interval = count_rows };
	struct t4_output *out = NULL;
	FILE *f = NULL;
	int rc;

	memset(c, 0, sizeof(*c));
	if (s == DECODE)
		return t4_decode_file(path, &o, &ops, c);
	if (!(f = fopen("/dev/null", "w")))
		return -errno;
	if ((rc = t4_output_new(&out, &oo, f)) == 0) {
		o.want_metrics = t4_output_wants_metrics(out);
		rc = t4_decode_file(path, &o, t4_output_ops(out), out);
	}
	t4_output_free(out);
	fclose(f);
	return rc;
}

/* CSV rows of a log: one per interval x event, plus the metrics'. */
static uint64_t csv_rows(const char *path)
{
	char cmd[4096], buf[64] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/t410trace decode '%s' -f csv | wc -l",
		 getenv("T4_OUT") ? getenv("T4_OUT") : "build", path);
	if (!(p = popen(cmd, "r")) || !fgets(buf, sizeof(buf), p)) {
		if (p)
			pclose(p);
		return 0;
	}
	pclose(p);
	return strtoull(buf, NULL, 10);
}

/* The summary's wall time with -j 1 and -j 2, alternated, best of runs. */
static int jobs_table(const char *path, int runs, uint64_t values)
{
	static const unsigned jobs[] = { 1, 2 };
	double best[2] = { 1e30, 1e30 };
	struct counts c;

	for (int r = 0; r < runs; r++)
		for (int j = 0; j < 2; j++) {
			double t0 = wall_s();
			if (decode_stage(path, SUMMARY, jobs[j], &c) < 0) {
				fprintf(stderr, "bench_decode: -j %u: %s\n", jobs[j], t4_errmsg());
				return 1;
			}
			double t = wall_s() - t0;
			if (t < best[j])
				best[j] = t;
		}
	printf("\n| decode to summary, wall time | s | M values/s | vs -j 1 |\n"
	       "|---|---:|---:|---:|\n");
	for (int j = 0; j < 2; j++)
		printf("| -j %u | %.3f | %.1f | %.2fx |\n", jobs[j], best[j],
		       (double)values / best[j] / 1e6, best[0] / best[j]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int runs = 3;
	struct counts c, values;
	double best[N_STAGES];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-r") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else
			path = argv[i];
	}
	if (!path) {
		fprintf(stderr, "usage: bench_decode LOG [-r RUNS]\n");
		return 2;
	}
	if (read_stage(path, false, &values) < 0) {
		fprintf(stderr, "bench_decode: %s\n", t4_errmsg());
		return 1;
	}
	for (int s = 0; s < N_STAGES; s++) {
		best[s] = 1e30;
		for (int r = 0; r < runs; r++) {
			double t0 = cpu_s();
			int rc = s <= INDEX ? read_stage(path, s == INDEX, &c) : decode_stage(path, s, 1, &c);
			double t = cpu_s() - t0;
			if (rc < 0) {
				fprintf(stderr, "bench_decode: %s: %s\n", stage_names[s], t4_errmsg());
				return 1;
			}
			if (t < best[s])
				best[s] = t;
		}
	}
	uint64_t rows = csv_rows(path) - 1;
	printf("decode of %s: %" PRIu64 " packets, %" PRIu64 " counter values, %" PRIu64
	       " CSV rows; CPU of one core, best of %d\n\n", path, values.packets, values.values,
	       rows, runs);
	printf("| stage | CPU s | M values/s | M CSV rows/s |\n|---|---:|---:|---:|\n");
	for (int s = 0; s < N_STAGES; s++) {
		printf("| %s | %.3f | %.1f |", stage_names[s], best[s],
		       (double)values.values / best[s] / 1e6);
		if (s == CSV)
			printf(" %.2f |\n", (double)rows / best[s] / 1e6);
		else
			printf(" |\n");
	}
	return jobs_table(path, runs, values.values);
}
