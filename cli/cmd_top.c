/* cmd_top.c - `t410trace top`: the live view (top.c) of a recording
 * started with `record --control PATH`, in another terminal.
 *
 * Each refresh asks the recorder for a snapshot ("live" on the control
 * socket: the recorder's index as text, live_text.c) over one connection
 * kept open between refreshes (made again when the recorder closed it for
 * idleness). The recorder does all the counting; top only divides two
 * snapshots (live/view.c), so any number of tops may watch one recording.
 *
 * When the recorder goes away after the first snapshot (its connection
 * closed, its socket gone, refusing or another recorder's), the recording
 * has ended: top says so and exits 0. No recorder at all is an error (1), and so is one that
 * stops answering (stopped, hung): that recording has not ended.
 */
#include "cli.h"
#include "control/control.h"
#include "live/live.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TOP_DEFAULT_INTERVAL_NS 1000000000ull
#define TOP_MIN_INTERVAL_NS 100000000ull /* a snapshot costs the writer a lock */

static void top_usage(FILE *f)
{
	fprintf(f,
		"usage: t410trace top [-c PATH] [-i DUR] [-n COUNT]\n\n"
		"Shows a running recording (started with 'record --control PATH') live:\n"
		"per PMU its read and write bandwidth, requests per second, latency and\n"
		"frequency over the last interval (the decoder's formulas), the bookmark\n"
		"in force and how long it has been, and the recorder's health (overruns,\n"
		"drops, read failures, its CPU per trigger). PATH defaults to\n"
		"$" T4_CONTROL_ENV ".\n\n"
		"On a terminal: keys q quit, s sort by the next column, k rows per PMU or\n"
		"per kind, p pause. Otherwise one CSV line per refresh, a column per PMU\n"
		"and metric in the order of the PMUs' names, after a header line (again,\n"
		"'#' first, when the PMUs change).\n\n"
		"  -i, --interval DUR       between refreshes (default 1s, at least 100ms)\n"
		"  -n, --count COUNT        stop after COUNT refreshes\n"
		"  -c, --control PATH       the recorder's control socket\n"
		"  -h, --help               this text\n\n"
		"DUR is a number with a unit: " T4_DURATION_UNITS ".\n"
		"Exit status: 0 quit or the recording ended, 1 no recorder at PATH or a\n"
		"failure, 2 bad usage.\n");
}

static const struct option top_longopts[] = {
	{ "control", required_argument, NULL, 'c' }, /* -c: as record's */
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* The control socket's side of top. */
struct top_source {
	const char *path;
	int fd;
	uint64_t taken; /* snapshots so far */
	uint64_t count; /* 0: no limit */
	bool ended;     /* the recorder went away after a snapshot */
	pid_t recorder; /* the process serving path (SO_PEERCRED; 0 not known) */
};

/* The error rc, its message prefixed with the socket's path. */
static int about(const char *path, int rc)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s", t4_errmsg());
	return t4_err(-rc, "%s: %s", path, msg);
}

/* A connection to the recorder top watches: the process the first one
 * reached. Another process serving the path (the recording ended, a new
 * one took its socket between two refreshes) is -ESRCH: its totals are
 * no continuation of the last ones, and rates across the two were
 * nonsense. */
static int connect_recorder(struct top_source *ts)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = t4_control_connect(ts->path);

	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return fd;
	if (!ts->recorder)
		ts->recorder = cred.pid;
	if (cred.pid == ts->recorder)
		return fd;
	close(fd);
	return t4_err(ESRCH, "%s: another recorder serves it now", ts->path);
}

static int fetch(struct top_source *ts, char **text, size_t *len)
{
	char reply[T4_CONTROL_REPLY_MAX];
	int rc;

	for (int attempt = 0; attempt < 2; attempt++) {
		if (ts->fd < 0 && (ts->fd = connect_recorder(ts)) < 0)
			return ts->fd;
		rc = t4_control_fetch(ts->fd, "live", reply, sizeof(reply), text, len);
		if (rc < 0 && rc != -EPIPE)
			rc = about(ts->path, rc);
		if (rc == 0 || rc == -EREMOTEIO)
			return rc;
		close(ts->fd); /* out of step, or closed (idleness, the end): anew */
		ts->fd = -1;
		if (rc != -EPIPE)
			return rc;
	}
	return rc;
}

/* Whether a failed fetch means the recorder is gone: its connection closed
 * and no socket to connect to, nobody listening there, or another recorder
 * there. A timeout or a garbled reply is a recorder still there, only not
 * answering. */
static bool recorder_gone(int rc)
{
	return rc == -EPIPE || rc == -ENOENT || rc == -ECONNREFUSED || rc == -ESRCH;
}

static int take(void *ud, struct t4_live_snap *out)
{
	struct top_source *ts = ud;
	char *text = NULL;
	size_t len = 0;
	int rc = fetch(ts, &text, &len);

	if (rc < 0) {
		ts->ended = ts->taken > 0 && recorder_gone(rc);
		return rc;
	}
	rc = t4_live_snap_parse(text, len, out);
	free(text);
	if (rc < 0) /* a socket that answers, but not with a snapshot: named */
		return about(ts->path, rc);
	ts->taken++;
	return 0;
}

static bool done(void *ud)
{
	const struct top_source *ts = ud;

	return ts->count && ts->taken >= ts->count;
}

static int parse(int argc, char **argv, struct top_source *ts, uint64_t *interval)
{
	struct cli_getopt g;
	uint64_t v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(&g, argc, argv, ":c:i:n:h", top_longopts)) != -1) {
		switch (c) {
		case 'h':
			top_usage(stdout);
			return 1;
		case 'c':
			ts->path = optarg;
			break;
		case 'i':
			/* the range both ways: 2^64 ns was told "at least 100ms" */
			if (t4_parse_duration(optarg, interval) < 0 || *interval < TOP_MIN_INTERVAL_NS)
				return cli_usage_error("top", "-i '%s': a duration from 100ms to "
						       "277777h, with a unit (" T4_DURATION_UNITS ")",
						       optarg);
			break;
		case 'n':
			if (t4_parse_u64(optarg, &v) < 0 || !v)
				return cli_usage_error("top", "-n '%s': a count of at least 1", optarg);
			ts->count = v;
			break;
		default:
			return cli_opt_error("top", &g, argv, c);
		}
	}
	if (optind < argc)
		return cli_usage_error("top", "unexpected argument '%s'", argv[optind]);
	if (!ts->path || !ts->path[0])
		return cli_usage_error("top", "no recorder given: use --control PATH or set %s",
				       T4_CONTROL_ENV);
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct top_source ts = { .path = t4_env(T4_CONTROL_ENV), .fd = -1 };
	struct top tp = { .take = take, .done = done, .ud = &ts,
			  .interval_ns = TOP_DEFAULT_INTERVAL_NS };
	int rc = parse(argc, argv, &ts, &tp.interval_ns);
	char safe[4 * 4096];

	if (rc)
		return rc == 1 ? 0 : rc;
	rc = cli_top_run(&tp);
	if (ts.fd >= 0)
		close(ts.fd);
	if (rc >= 0)
		return 0;
	if (rc == -EPIPE)
		return CLI_EXIT_READER_GONE; /* as `t410trace list | head` */
	/* the path as typed may hold any bytes: shown as \xNN, as the CLI
	 * shows every name, so the line stays one line of text */
	if (ts.ended) {
		fprintf(stderr, "t410trace top: the recording at %s ended\n",
			t4_text(ts.path, T4_TEXT_CONTROL, safe, sizeof(safe)));
		return 0;
	}
	fprintf(stderr, "t410trace top: %s\n", t4_text(t4_errmsg(), T4_TEXT_CONTROL, safe,
							 sizeof(safe)));
	return 1;
}
