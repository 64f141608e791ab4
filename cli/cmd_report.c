/* cmd_report.c - `t410trace report LOG [-o FILE]`: one self-contained HTML
 * file (decode/out_report.c) that a browser opens from disk.
 *
 * A thin layer over decode/: the report is the decoder's `report` output,
 * written by the file rules of every output (cli/outfile.c). Without -o
 * the report goes next to the log: trace.t4t gives trace.html.
 */
#include "cli.h"
#include "decode/decode.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file:// URL of an absolute path: every byte but the unreserved ones
 * (RFC 3986) and '/' percent-encoded, so that a space, '#', '%' or '?' in
 * a name still opens that file (and no control byte reaches the
 * terminal). */
static const char *file_url(const char *path, char *url, size_t cap)
{
	size_t n = (size_t)snprintf(url, cap, "file://");

	for (const unsigned char *p = (const unsigned char *)path; *p && n + 4 < cap; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
			url[n++] = (char)*p;
		else
			n += (size_t)snprintf(url + n, cap - n, "%%%02X", *p);
	}
	url[n] = '\0';
	return url;
}

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: t410trace report LOG|DIR... [-o FILE]\n\n"
		"Writes one self-contained HTML file of a log, for a browser to open from\n"
		"disk (no network access: every script, style and datum is in the file):\n"
		"the recording and its health (overruns, drops, read failures, damage),\n"
		"the phases as a band, per PMU kind a plot of each headline metric over\n"
		"time (phases shaded, x axes linked: zoom one, all follow; the legend\n"
		"hides and shows series), the CPU and GPU activity of the workload when\n"
		"recorded, and the summary's per-phase and clock tables (the same\n"
		"numbers as 't410trace decode LOG'). Long logs are drawn in at most %d\n"
		"columns, each with the extremes of its values (a short spike stays\n"
		"visible); the tables use exact totals. A damaged or truncated log, or\n"
		"one still being recorded, gives the report of what it holds, its damage\n"
		"shown.\n\n"
		"Several logs (or a directory: its *.t4t files; give -o) make one report\n"
		"of every host on one timeline, as 't410trace decode LOG...' merges them:\n"
		"each host's recording and health, a phase band per host, the plots with\n"
		"one series per host, and the tables across hosts.\n\n"
		"  -o, --output FILE  where to write (default: LOG with .t4t replaced by\n"
		"                     .html; '-': standard output); never the log itself\n"
		"                     nor any other t410trace log\n"
		"  -h, --help         this text\n\n"
		"LOG '-' reads standard input (give -o).\n"
		"Exit status: 0 success, 1 I/O error, 2 bad usage or a file that is not a\n"
		"log.\n",
		4096);
}

static const struct option report_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* LOG with .t4t replaced by .html (or .html appended). */
static int default_output(const char *log, char *buf, size_t cap)
{
	size_t n = strlen(log);

	if (n > 4 && !strcmp(log + n - 4, ".t4t"))
		n -= 4;
	if ((size_t)snprintf(buf, cap, "%.*s.html", (int)n, log) >= cap)
		return cli_usage_error("report", "%s: name too long", log);
	return 0;
}

/* Returns 0, 1 for --help (exit 0), or 2 after a usage error. */
static int parse(int argc, char **argv, struct cli_logs *logs, const char **output, char *buf,
		 size_t cap)
{
	struct cli_getopt g;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(&g, argc, argv, ":o:h", report_longopts)) != -1) {
		if (c == 'h') {
			report_usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':')
			return cli_opt_error("report", &g, argv, c);
		*output = optarg;
	}
	if (optind >= argc)
		return cli_usage_error("report", "missing LOG");
	for (int i = optind; i < argc; i++)
		if ((c = cli_logs_add(logs, "report", argv[i])))
			return c;
	if (*output)
		return 0;
	if (logs->n > 1)
		return cli_usage_error("report", "several logs: give -o FILE");
	if (!strcmp(logs->v[0], "-"))
		return cli_usage_error("report", "reading standard input: give -o FILE");
	*output = buf;
	return default_output(logs->v[0], buf, cap);
}

static int report_run(struct cli_logs *logs, const char *output)
{
	char where[PATH_MAX];
	struct t4_output_opts oo = { .format = T4_FMT_REPORT, .hosts = cli_logs_merged(logs) };
	struct t4_decode_opts d = { 0 };
	struct t4_output *out = NULL;
	struct cli_outfile of;
	int rc;

	if (!strcmp(output, "-") && isatty(STDOUT_FILENO))
		return cli_usage_error("report", "-o - on a terminal: the report is an HTML page"
				       " (give -o FILE)");
	if ((rc = cli_logs_check(logs, "report")))
		return rc;
	for (size_t i = 0; i < logs->n; i++)
		if (cli_outfile_check(&of, logs->v[i], output) < 0) {
			fprintf(stderr, "t410trace report: %s\n", t4_errmsg());
			return 2;
		}
	oo.log_name = logs->v[0];
	oo.out_name = output;
	if ((rc = cli_outfile_open(&of)) < 0) {
		fprintf(stderr, "t410trace report: %s\n", t4_errmsg());
		return t4_exit_code(rc);
	}
	if ((rc = t4_output_new(&out, &oo, of.f)) == 0) {
		d.want_metrics = t4_output_wants_metrics(out);
		rc = cli_logs_decode(logs, &d, out);
	}
	t4_output_free(out);
	rc = cli_outfile_close(&of, rc);
	if (rc == -EPIPE)
		return CLI_EXIT_READER_GONE; /* the reader of our output went away */
	if (rc < 0) {
		fprintf(stderr, "t410trace report: %s\n", t4_errmsg());
		return t4_exit_code(rc);
	}
	if (!cli_outfile_stdout(&of)) {
		char safe[4 * 4096], url[3 * PATH_MAX + 8]; /* the name as typed: one line */
		const char *full = realpath(of.dest, where) ? where : output;
		/* no absolute name (a directory deeper than PATH_MAX): no link,
		 * where "file://x.html" named a host x.html */
		fprintf(stderr, "t410trace report: wrote %s%s%s%s\n",
			t4_text(output, T4_TEXT_CONTROL, safe, sizeof(safe)),
			full[0] == '/' ? " (open it in a browser: " : "",
			full[0] == '/' ? file_url(full, url, sizeof(url)) : "",
			full[0] == '/' ? ")" : "");
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct cli_logs logs = { 0 };
	const char *output = NULL;
	char buf[PATH_MAX];
	int rc = parse(argc, argv, &logs, &output, buf, sizeof(buf));

	if (rc == 1) /* --help */
		rc = 0;
	else if (rc == 0)
		rc = report_run(&logs, output);
	cli_logs_free(&logs);
	return rc;
}
