/* cmd_decode.c - `t410trace decode FILE`: every clock domain of a log on
 * one reference timeline, as a summary, CSV, JSONL or a Perfetto trace;
 * `decode A B ...` or `decode DIR`: several hosts' logs merged on one
 * timeline (decode/merge.c).
 *
 * A thin layer over decode/: options, the output file (cli/outfile.c: a
 * temporary name renamed when complete, never over the log it reads nor
 * any other log), exit codes.
 */
#include "cli.h"
#include "decode/decode.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DECODE_JOBS_MAX 1024

struct decode_args {
	struct cli_logs logs;
	const char *output; /* NULL or "-": standard output */
	const char *sep;
	bool format_set, time_set;
	struct t4_decode_opts d;
	struct t4_output_opts out;
};

static void decode_usage(FILE *f)
{
	fprintf(f,
		"usage: t410trace decode FILE|DIR... [OPTIONS]\n\n"
		"Puts every clock domain of a log on the reference clock's timeline:\n"
		"each domain's clock is fitted against the reference clock (offset and\n"
		"rate, bounded by every sample's read window), consecutive samples make\n"
		"intervals, and the formulas 't410trace list --metrics' lists give\n"
		"bandwidth, request rates, latency and frequency per interval and per\n"
		"bookmark phase.\n"
		"FILE '-' reads standard input.\n\n"
		"Several logs (or a directory: its *.t4t files) are merged on one\n"
		"timeline: each host's reference clock is placed on UTC by a fit (offset\n"
		"and rate) of its reference packets' realtime stamps, within a bound the\n"
		"summary gives per host (the kernel's maxerror of the host's clock plus\n"
		"the fit's residual); CSV rows start with a host column, JSONL records\n"
		"say \"host\", perfetto has a group per host, the summary and the report\n"
		"show each host, and CSV and JSONL times default to UTC (--time real).\n\n"
		"  -f, --format FORMAT    summary (default), csv, jsonl, perfetto, phases\n"
		"                         (the phase table, CSV), slices (the workload's\n"
		"                         CPU and GPU slices, CSV; old name phases-csv) or\n"
		"                         report (the HTML report of t410trace report)\n"
		"  -o, --output OUT       write to OUT ('-': standard output, the default\n"
		"                         for the text formats; perfetto and report need\n"
		"                         -o when standard output is a terminal)\n"
		"  -x, --field-separator SEP  CSV field separator (one character)\n"
		"      --time BASE        CSV and JSONL times: ref (default: the log's\n"
		"                         reference clock), rel (ns from the first trigger)\n"
		"                         or real (UTC ns, through the session's anchor;\n"
		"                         merged logs: the default, rel from the first\n"
		"                         trigger of any host, ref each host's own clock)\n"
		"      --bin DUR          resample every domain onto one series of DUR bins\n"
		"                         (counts split by overlap, totals exact; a bin is\n"
		"                         cut where a phase starts); csv, jsonl, perfetto\n"
		"      --pmu GLOB[,GLOB]  only domains whose name, PMU or kind matches\n"
		"      --event GLOB[,GLOB] only events and metrics whose name matches\n"
		"      --from T, --to T   a time from the first trigger (1.5s, 200ms, 2m;\n"
		"                         merged: of any host) or a bookmark name (its\n"
		"                         first occurrence; merged: on each host)\n"
		"      --phase NAME       only what falls in the phases of bookmark NAME\n"
		"                         (merged: hosts without it are left out, said)\n"
		"      --clock-model M    rate (default): offset and rate per domain;\n"
		"                         offset: window midpoints and the nominal rate\n"
		"                         (as Perfetto, LTTng); window: raw midpoints\n"
		"      --per-cpu          the summary's EVENTS: one row per CPU (domain)\n"
		"                         instead of the sum over CPUs\n"
		"  -j, --jobs N           CPUs (default: the CPUs available): from 2 on,\n"
		"                         about 35%% of N threads unpack the log's chunks,\n"
		"                         several at once, and N less those plus one\n"
		"                         decode (for every format but report, as workers\n"
		"                         that share the domains, CSV, JSONL and Perfetto\n"
		"                         rows merged in order; without --bin, --from,\n"
		"                         --to); the output is the same for every N\n"
		"  -v, --verbose          the summary in full: every phase occurrence,\n"
		"                         clock domain and count of what is missing\n"
		"  -h, --help             this text\n\n"
		"Where a phase boundary falls inside an interval, every output has one\n"
		"interval per phase, counts split by overlap: per-phase sums of -f csv or\n"
		"-f jsonl equal the summary's. Durations take " T4_DURATION_UNITS ".\n"
		"Exit status: 0 success, 1 I/O error, 2 bad usage, a filter that matches\n"
		"nothing (an unknown bookmark, PMU or event; filters that together keep\n"
		"no interval, as a --from/--to window without an interval's middle: found\n"
		"before any output, standard output by a first pass over the log),\n"
		"a file that is not a log, or is missing, or one log given twice.\n");
}

enum {
	OPT_BIN = 256,
	OPT_PMU,
	OPT_EVENT,
	OPT_FROM,
	OPT_TO,
	OPT_PHASE,
	OPT_MODEL,
	OPT_TIME,
	OPT_PER_CPU,
};

static const struct option decode_longopts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "field-separator", required_argument, NULL, 'x' },
	{ "bin", required_argument, NULL, OPT_BIN },
	{ "grid", required_argument, NULL, OPT_BIN }, /* its old name */
	{ "pmu", required_argument, NULL, OPT_PMU },
	{ "event", required_argument, NULL, OPT_EVENT },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "phase", required_argument, NULL, OPT_PHASE },
	{ "clock-model", required_argument, NULL, OPT_MODEL },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "per-cpu", no_argument, NULL, OPT_PER_CPU },
	{ "jobs", required_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* A separator -x takes: a tab or printable ASCII. */
static bool sep_ascii(char c)
{
	return c == '\t' || (c >= 0x20 && c < 0x7f);
}

static int option(struct decode_args *a, int c)
{
	switch (c) {
	case 'f': {
		enum t4_out_format f;
		if (t4_out_format_parse(optarg, &f) < 0)
			return cli_usage_error("decode", "%s", t4_errmsg());
		if (a->format_set && f != a->out.format)
			return cli_usage_error("decode", "-f %s and -f %s: one format per run",
					       t4_out_format_name(a->out.format), optarg);
		a->out.format = f;
		a->format_set = true;
		return 0;
	}
	case 'v':
		a->out.verbose = true;
		return 0;
	case OPT_PER_CPU:
		a->out.per_cpu = true;
		return 0;
	case 'j': {
		uint64_t n;
		if (t4_parse_u64(optarg, &n) < 0 || n < 1 || n > DECODE_JOBS_MAX)
			return cli_usage_error("decode", "-j %s: give a number of threads from 1 to %u",
					       optarg, DECODE_JOBS_MAX);
		a->d.jobs = (unsigned)n;
		return 0;
	}
	case OPT_TIME:
		if (t4_time_base_parse(optarg, &a->out.time) < 0)
			return cli_usage_error("decode", "--time %s", t4_errmsg());
		a->time_set = true;
		return 0;
	case 'o':
		a->output = optarg;
		return 0;
	case 'x':
		/* numbers and words (counter, exact) are never quoted: a character
		 * of theirs would split them; a byte past ASCII made every row
		 * text that is not UTF-8 (and splits no UTF-8 name only where the
		 * reader counts bytes), a control byte reached the terminal */
		if (strlen(optarg) != 1 || strchr("\".+-_", optarg[0]) ||
		    isalnum((unsigned char)optarg[0]) || !sep_ascii(optarg[0]))
			return cli_usage_error("decode", "-x '%s': use one ASCII character, a tab or "
					       "a printable one other than a quote, a letter, a "
					       "digit or . + - _", optarg);
		a->sep = optarg;
		return 0;
	case OPT_BIN:
		if (t4_parse_duration(optarg, &a->d.bin_ns) < 0)
			return cli_usage_error("decode", "--bin %s", t4_errmsg());
		return 0;
	case OPT_PMU:
		a->d.pmu_glob = optarg;
		return 0;
	case OPT_EVENT:
		a->d.event_glob = optarg;
		return 0;
	case OPT_FROM:
	case OPT_TO:
		if (optarg[0] == '-' || optarg[0] == '+')
			return cli_usage_error("decode", "--%s %s: a time counts from the first trigger"
					       " and is never negative (e.g. 1.5s, or a bookmark name)",
					       c == OPT_FROM ? "from" : "to", optarg);
		if (t4_timepoint_parse(optarg, c == OPT_FROM ? &a->d.from : &a->d.to) < 0)
			return cli_usage_error("decode", "--%s %s", c == OPT_FROM ? "from" : "to",
					       t4_errmsg());
		return 0;
	case OPT_PHASE:
		a->d.phase = optarg;
		return 0;
	case OPT_MODEL:
		if (t4_clock_model_parse(optarg, &a->d.model) < 0)
			return cli_usage_error("decode", "--clock-model %s", t4_errmsg());
		return 0;
	default:
		return 2;
	}
}

/* Options that do not apply to the format asked for are refused, never
 * silently ignored. */
static int check_combination(struct decode_args *a)
{
	enum t4_out_format f = a->out.format;
	bool csv = f == T4_FMT_CSV || f == T4_FMT_SLICES || f == T4_FMT_PHASES;
	bool text = csv || f == T4_FMT_JSONL;
	bool intervals = f == T4_FMT_CSV || f == T4_FMT_JSONL || f == T4_FMT_PERFETTO;

	if (a->sep && !csv)
		return cli_usage_error("decode", "-x applies to the CSV formats (csv, phases, slices)"
				       " only");
	if (a->time_set && !text)
		return cli_usage_error("decode", "--time applies to csv, jsonl, phases and slices"
				       " (perfetto keeps the reference clock; the summary counts from"
				       " the first trigger)");
	if (a->d.bin_ns && !intervals)
		return cli_usage_error("decode", "--bin applies to csv, jsonl and perfetto (the %s"
				       " has no intervals to resample; its phase totals are exact)",
				       f == T4_FMT_SUMMARY ? "summary" : "format");
	if (a->d.from.set && a->d.to.set && !a->d.from.is_bookmark && !a->d.to.is_bookmark &&
	    a->d.to.offset_ns <= a->d.from.offset_ns)
		return cli_usage_error("decode", "--to must come after --from");
	if ((a->out.per_cpu || a->out.verbose) && f != T4_FMT_SUMMARY)
		return cli_usage_error("decode", "%s applies to the summary only",
				       a->out.per_cpu ? "--per-cpu" : "-v");
	a->out.csv_sep = a->sep ? a->sep[0] : ',';
	return 0;
}

/* Returns 0, 1 for --help (exit 0), or 2 after a usage error. */
static int parse_decode_args(int argc, char **argv, struct decode_args *a)
{
	struct cli_getopt g;
	int c, rc;

	optind = 1;
	opterr = 0;
	/* no '+': options may follow FILE ("decode trace.t4t -f csv") */
	while ((c = cli_getopt(&g, argc, argv, ":f:o:x:j:vh", decode_longopts)) != -1) {
		if (c == 'h') {
			decode_usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':')
			return cli_opt_error("decode", &g, argv, c);
		if (option(a, c))
			return 2;
	}
	if (optind >= argc)
		return cli_usage_error("decode", "missing FILE");
	for (int i = optind; i < argc; i++)
		if ((rc = cli_logs_add(&a->logs, "decode", argv[i])))
			return rc;
	if ((rc = check_combination(a)))
		return rc;
	if (cli_logs_merged(&a->logs) && !a->time_set)
		a->out.time = T4_TIME_REAL; /* merged: one timeline, UTC */
	a->out.hosts = cli_logs_merged(&a->logs);
	return 0;
}

static bool to_stdout(const struct decode_args *a)
{
	return !a->output || !strcmp(a->output, "-");
}

/* What the options name is checked against the whole log before the
 * first output byte where the output is written as it goes (standard
 * output, a FIFO; a file is written under a temporary name, removed on
 * an error): a first pass over the log, as `info` reads it, a pipe on
 * standard input copied aside first to be read twice, and, for an
 * output that streams, a --from/--to window's first interval found by a
 * quiet decode (the summary and the report write at the end, after the
 * decoder's own check: no second decode). Merged logs are checked by
 * their own first pass (t4_merge_decode). */
static int check_first(const struct decode_args *a, const struct cli_outfile *of)
{
	int rc;

	if ((!cli_outfile_stdout(of) && !of->in_place) || cli_logs_merged(&a->logs) ||
	    (!t4_decode_check_needed(&a->d) && a->out.time != T4_TIME_REAL))
		return 0;
	if (!strcmp(a->logs.v[0], "-") && (rc = cli_spool_stdin()) < 0)
		return rc;
	return t4_decode_check_file(a->logs.v[0], &a->d, a->out.time,
				    !t4_out_format_at_end(a->out.format));
}

static int decode_run(struct decode_args *a)
{
	struct t4_output *out = NULL;
	struct cli_outfile of;
	int rc;

	if (a->out.format == T4_FMT_PERFETTO && to_stdout(a) && isatty(STDOUT_FILENO))
		return cli_usage_error("decode", "-f perfetto writes a binary trace: give -o FILE "
				       "(or redirect standard output)");
	if (a->out.format == T4_FMT_REPORT && to_stdout(a) && isatty(STDOUT_FILENO))
		return cli_usage_error("decode", "-f report writes an HTML page: give -o FILE "
				       "(or use t410trace report)");
	if ((rc = cli_logs_check(&a->logs, "decode")))
		return rc;
	for (size_t i = 0; i < a->logs.n; i++)
		if (cli_outfile_check(&of, a->logs.v[i], a->output) < 0) {
			fprintf(stderr, "t410trace decode: %s\n", t4_errmsg());
			return 2;
		}
	if ((rc = check_first(a, &of)) < 0) {
		fprintf(stderr, "t410trace decode: %s\n", t4_errmsg());
		return t4_exit_code(rc);
	}
	a->out.log_name = a->logs.v[0];
	a->out.out_name = a->output;
	if ((rc = cli_outfile_open(&of)) < 0) {
		fprintf(stderr, "t410trace decode: %s\n", t4_errmsg());
		return t4_exit_code(rc);
	}
	if ((rc = t4_output_new(&out, &a->out, of.f)) == 0) {
		a->d.want_metrics = t4_output_wants_metrics(out);
		rc = cli_logs_decode(&a->logs, &a->d, out);
	}
	t4_output_free(out);
	rc = cli_outfile_close(&of, rc);
	if (rc == -EPIPE)
		return CLI_EXIT_READER_GONE; /* the reader of our output went away */
	if (rc < 0) {
		fprintf(stderr, "t410trace decode: %s\n", t4_errmsg());
		return t4_exit_code(rc); /* 2: not a log, or a filter that matches nothing */
	}
	if (!to_stdout(a)) {
		char safe[4 * 4096]; /* a name the terminal shows as typed: one line */
		fprintf(stderr, "t410trace decode: wrote %s\n",
			t4_text(a->output, T4_TEXT_CONTROL, safe, sizeof(safe)));
	}
	return 0;
}

int cmd_decode(int argc, char **argv)
{
	struct decode_args a = { 0 };
	int rc = parse_decode_args(argc, argv, &a);

	if (rc == 1) /* --help */
		rc = 0;
	else if (rc == 0)
		rc = decode_run(&a);
	cli_logs_free(&a.logs);
	return rc;
}
