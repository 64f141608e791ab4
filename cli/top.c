/* top.c - the live view of a recording: one row per PMU (or per kind) with
 * its read and write bandwidth, request rate, latency and frequency over
 * the last interval, the bookmark in force and its age, and the
 * recorder's health; refreshed every interval. Used by `t410trace top`
 * (snapshots through the control socket; standard input and output) and
 * `record --top` (snapshots of its own index; the controlling terminal,
 * hold.c): the numbers are live/'s (view.c), the kinds' formulas the
 * decoder's.
 *
 * On a terminal: a full-screen view on the alternate screen (restored on
 * every exit: q, end of the recording, a signal), keys q quit, s next sort
 * column, k rows per PMU or per kind, p pause. Ctrl-Z (SIGTSTP) gives the
 * terminal back before stopping (its handler only sets a flag; the loop,
 * which wakes every TOP_DONE_MS or at the signal, restores the terminal,
 * then stops with the default action) and SIGCONT brings the view back,
 * whoever stopped it (SIGSTOP too: the shell may have reset the terminal
 * meanwhile). SIGKILL cannot be caught: `reset` repairs the terminal
 * (the man page says so). Elsewhere (a pipe, a file):
 * one CSV line per refresh, after a header line that names its columns
 * (written again, with '#' first, when the PMUs change), like
 * pcm-memory -csv; numbers as decode's CSV writes them (t4_fmt_value).
 *
 * Columns come from each row's metrics by role (what a metric measures):
 * read and write bandwidth (GB/s; a UCF PMU's memory traffic before its
 * SLC's), requests per second (the sum of its request counters), latency
 * (ns, reads first) and frequency (GHz); a host PMU's other headline
 * metric goes to the last column.
 */
#include "cli.h"
#include "decode/decode.h"
#include "live/live.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define TOP_MAX_WAIT_MS (24 * 3600 * 1000) /* one wait of the loop, at most */

enum col { C_RD, C_WR, C_REQ, C_LAT, C_FREQ, C_N };
static const char *const col_head[C_N] = { "RD GB/s", "WR GB/s", "REQ/s", "LAT ns", "FREQ GHz" };
static const char *const col_csv[C_N] = { "rd_GBps", "wr_GBps", "req_per_s", "lat_ns", "freq_GHz" };

struct trow {
	char name[T4_NAME_MAX], kind[32];
	double v[C_N];   /* NaN: none */
	char other[64];  /* a host PMU's headline metric */
	unsigned n;      /* PMUs summed (per kind) */
};

static bool is(const char *s, const char *sub)
{
	return strstr(s, sub) != NULL;
}

/* The metric of role c among a row's, or NaN. */
static double role(const struct t4_live_row *r, enum col c)
{
	double best = NAN;
	int rank = -1;

	for (uint32_t m = 0; m < r->n_metrics; m++) {
		const char *n = r->metric_name[m], *u = r->metric_unit[m];
		int k = -1;
		if ((c == C_RD || c == C_WR) && !strcmp(u, "GB/s"))
			k = (c == C_RD ? is(n, "read") || is(n, "rd") : is(n, "write") || is(n, "wr"))
				    ? 1 + !strncmp(n, "mem_", 4)
				    : -1;
		else if (c == C_LAT && !strcmp(u, "ns") && is(n, "latency"))
			k = 1 + (is(n, "rd") || is(n, "read"));
		else if (c == C_FREQ && !strcmp(u, "GHz"))
			k = 1;
		if (k > rank && isfinite(r->metric[m])) {
			rank = k;
			best = r->metric[m];
		}
	}
	return best;
}

/* Requests per second: the sum of its request counters' rates. */
static double requests(const struct t4_live_row *r)
{
	double sum = NAN;

	for (uint32_t k = 0; k < r->dom->n_events; k++)
		if (!strcmp(r->dom->ev[k].unit, "requests") && isfinite(r->rate[k]))
			sum = isfinite(sum) ? sum + r->rate[k] : r->rate[k];
	return sum;
}

static void make_trow(const struct t4_live_row *r, struct trow *t)
{
	memset(t, 0, sizeof(*t));
	/* escaped straight into the row, cut at a whole character (a copy cut
	 * to its size could end inside one: no UTF-8 for the terminal) */
	const char *name = t4_text(r->dom->name, T4_TEXT_CONTROL, t->name, sizeof(t->name));
	if (name != t->name)
		snprintf(t->name, sizeof(t->name), "%s", name); /* clean: it fits */
	snprintf(t->kind, sizeof(t->kind), "%s", t4_domain_kind_name(r->dom->kind));
	for (int c = 0; c < C_N; c++)
		t->v[c] = c == C_REQ ? requests(r) : role(r, (enum col)c);
	t->n = 1;
	bool covered = false;
	for (int c = 0; c < C_N; c++)
		covered |= isfinite(t->v[c]);
	for (uint32_t m = 0; !covered && m < r->n_metrics && !t->other[0]; m++)
		if (r->metric_brief[m] && isfinite(r->metric[m]))
			snprintf(t->other, sizeof(t->other), "%s %.3g %s", r->metric_name[m],
				 r->metric[m], r->metric_unit[m]);
}

/* Rows per kind: bandwidths and requests summed, latency and frequency
 * averaged over the PMUs that have them. */
static size_t by_kind(struct trow *t, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < k && strcmp(t[j].kind, t[i].kind))
			j++;
		if (j == k) {
			t[k] = t[i];
			snprintf(t[k].name, sizeof(t[k].name), "(%s)", t[i].kind);
			k++;
			continue;
		}
		for (int c = 0; c < C_N; c++) {
			double a = t[j].v[c], b = t[i].v[c];
			bool mean = c == C_LAT || c == C_FREQ;
			if (!isfinite(b))
				continue;
			t[j].v[c] = !isfinite(a) ? b : mean ? (a * t[j].n + b) / (t[j].n + 1) : a + b;
		}
		t[j].n++;
	}
	for (size_t i = 0; i < k; i++)
		if (t[i].n > 1)
			snprintf(t[i].name + strlen(t[i].name), sizeof(t[i].name) - strlen(t[i].name),
				 " x%u", t[i].n);
	return k;
}

/* ---- the terminal ---------------------------------------------------------------- */

static volatile sig_atomic_t top_stop, top_tstp, top_cont;
static struct termios saved_tty;
static bool tty_raw;

static void on_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

static void on_job_signal(int sig)
{
	if (sig == SIGTSTP)
		top_tstp = 1;
	else
		top_cont = 1;
}

static void tty_restore(const struct top *tp)
{
	if (!tty_raw)
		return;
	tty_raw = false;
	fputs("\033[?7h\033[?25h\033[?1049l", tp->out); /* wrapping, cursor, main screen */
	fflush(tp->out);
	tcsetattr(tp->in, TCSAFLUSH, &saved_tty);
}

/* The view's mode, from the saved one: no echo, no line editing, the
 * alternate screen, no cursor. */
static int tty_raw_on(const struct top *tp)
{
	struct termios t = saved_tty;

	t.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(tp->in, TCSAFLUSH, &t) < 0)
		return t4_err(errno, "top: the terminal: %s", strerror(errno));
	tty_raw = true;
	/* alternate screen, no cursor, no wrapping: a row wider than the
	 * terminal (a PMU's is 96 columns) is cut at its edge; wrapped, the
	 * rows took two lines each on an 80-column terminal and the frame
	 * scrolled its header (host, phase, column titles) off the top */
	fputs("\033[?1049h\033[?25l\033[?7l", tp->out);
	return 0;
}

static int tty_enter(const struct top *tp)
{
	if (tcgetattr(tp->in, &saved_tty) < 0)
		return t4_err(errno, "top: the terminal: %s", strerror(errno));
	/* a whole frame in one write: no flicker, never half a frame seen */
	setvbuf(tp->out, NULL, _IOFBF, 1 << 16);
	return tty_raw_on(tp);
}

/* SIGTSTP and SIGCONT, while the view is up (act) or after (old). */
static void job_signals(bool on, struct sigaction old[2])
{
	struct sigaction sa = { .sa_handler = on_job_signal };

	sigemptyset(&sa.sa_mask);
	if (on) {
		top_tstp = top_cont = 0;
		sigaction(SIGTSTP, &sa, &old[0]);
		sigaction(SIGCONT, &sa, &old[1]);
	} else {
		sigaction(SIGTSTP, &old[0], NULL);
		sigaction(SIGCONT, &old[1], NULL);
	}
}

/* Ctrl-Z: the terminal as it was, then stopped (SIGTSTP's own action, as
 * if never caught) until SIGCONT; continued, whoever stopped it, the view
 * again and redrawn. */
static void job_control(struct top *tp)
{
	if (top_tstp) {
		struct sigaction dfl = { .sa_handler = SIG_DFL }, own = { .sa_handler = on_job_signal };
		sigset_t tstp;
		top_tstp = 0;
		tty_restore(tp);
		sigemptyset(&dfl.sa_mask);
		sigemptyset(&own.sa_mask);
		sigemptyset(&tstp);
		sigaddset(&tstp, SIGTSTP);
		sigaction(SIGTSTP, &dfl, NULL);
		pthread_sigmask(SIG_UNBLOCK, &tstp, NULL);
		raise(SIGTSTP); /* stopped here */
		sigaction(SIGTSTP, &own, NULL);
		top_tstp = 0; /* a second Ctrl-Z before the stop: the same one */
		top_cont = 1;
	}
	if (top_cont) { /* after a SIGSTOP too: the mode may be the shell's now */
		top_cont = 0;
		tp->redraw = tty_raw_on(tp) == 0;
	}
}

static unsigned tty_rows(const struct top *tp)
{
	struct winsize w;

	return ioctl(fileno(tp->out), TIOCGWINSZ, &w) == 0 && w.ws_row > 4 ? w.ws_row : 24;
}

/* ---- drawing ------------------------------------------------------------------------- */

static int cmp_col;

static int by_col(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	double u = x->v[cmp_col], v = y->v[cmp_col];

	if (isfinite(u) != isfinite(v))
		return isfinite(u) ? -1 : 1;
	if (isfinite(u) && u != v)
		return u > v ? -1 : 1; /* largest first */
	return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct trow *)a)->name, ((const struct trow *)b)->name);
}

/* A name in a CSV line: as text (util/text.c, control characters as
 * \xNN: the lines may reach a terminal), a comma or quote, which would
 * shift the columns, as _. */
static void csv_name(FILE *out, const char *name)
{
	char piece[5];

	while (*name) {
		name += t4_text_next(name, T4_TEXT_CONTROL, piece);
		for (const char *p = piece; *p; p++)
			fputc(*p == ',' || *p == '"' ? '_' : *p, out);
	}
}

/* A value in 11 columns: large ones with an SI prefix (1.358G). */
static void cell(FILE *out, double v)
{
	static const struct { double at; char prefix; } si[] = {
		{ 1e12, 'T' }, { 1e9, 'G' }, { 1e6, 'M' }, { 1e5, 'k' },
	};

	if (!isfinite(v)) {
		fprintf(out, " %10s", "-");
		return;
	}
	for (size_t i = 0; i < T4_ARRAY_LEN(si); i++)
		if (fabs(v) >= si[i].at) {
			fprintf(out, " %9.3f%c", v / (si[i].at == 1e5 ? 1e3 : si[i].at), si[i].prefix);
			return;
		}
	fprintf(out, " %10.3f", v);
}

static void header_lines(const struct top *tp, const struct t4_live_view *v)
{
	FILE *out = tp->out;
	const struct t4_live_snap *s = t4_live_view_snap(v);
	char safe[4 * T4_NAME_MAX], age[32] = "-", per[32] = "-";
	double cpu = t4_live_view_cpu_per_trigger(v);

	if (s->phase_set_ns && s->now_ns > s->phase_set_ns)
		t4_fmt_duration(s->now_ns - s->phase_set_ns, age, sizeof(age));
	fprintf(out, "t410trace top: %s%s   every %gs%s\n",
		t4_text(s->host, T4_TEXT_CONTROL, safe, sizeof(safe)),
		s->simulated ? "   [SIMULATED Tegra410: not a measurement]" : "",
		(double)tp->interval_ns / 1e9, tp->paused ? "   PAUSED" : "");
	fprintf(out, "phase %s (for %s)   triggers %llu   overruns %llu   dropped %llu   read failures"
		" %llu   CPU/trigger %s\n",
		*s->phase ? t4_text(s->phase, T4_TEXT_CONTROL, safe, sizeof(safe)) : "(none)", age,
		(unsigned long long)s->triggers, (unsigned long long)s->overruns,
		(unsigned long long)s->dropped, (unsigned long long)s->read_failures,
		isfinite(cpu) ? (snprintf(per, sizeof(per), "%.1f us", cpu / 1e3), per) : "-");
}

static void draw(struct top *tp, const struct t4_live_view *v, struct trow *t, size_t n)
{
	FILE *out = tp->out;
	unsigned lines = tty_rows(tp);

	fprintf(out, "\033[H\033[2J");
	header_lines(tp, v);
	fprintf(out, "\n%-28s %-10s", tp->per_kind ? "KIND" : "PMU", "KIND");
	for (int c = 0; c < C_N; c++)
		fprintf(out, " %10s%s", col_head[c], c == tp->sort ? "*" : "");
	fprintf(out, "  OTHER\n");
	for (size_t i = 0; i < n && i + 6 < lines; i++) {
		fprintf(out, "%-28s %-10s", t[i].name, t[i].kind);
		for (int c = 0; c < C_N; c++)
			cell(out, t[i].v[c]);
		fprintf(out, "  %s\n", t[i].other);
	}
	fprintf(out, "\033[%u;1Hq quit  s sort  k per %s  p %s", lines,
		tp->per_kind ? "PMU" : "kind", tp->paused ? "resume" : "pause");
	fflush(out);
}

/* One CSV line per refresh, the PMUs in the order of their names (a
 * header first, and again, '#' first, when the PMUs change). */
static void plain(struct top *tp, const struct t4_live_view *v, struct trow *t, size_t n)
{
	FILE *out = tp->out;
	const struct t4_live_snap *s = t4_live_view_snap(v);
	uint64_t sig = n;
	char num[32];

	for (size_t i = 0; i < n; i++)
		for (const char *p = t[i].name; *p; p++)
			sig = sig * 131 + (unsigned char)*p;
	if (!tp->plain_header || sig != tp->plain_sig) {
		fprintf(out, "%stime_s,phase,triggers,overruns,dropped,read_failures",
			tp->plain_header ? "#" : "");
		for (size_t i = 0; i < n; i++)
			for (int c = 0; c < C_N; c++) {
				fputc(',', out);
				csv_name(out, t[i].name);
				fprintf(out, ":%s", col_csv[c]);
			}
		fprintf(out, "\n");
		tp->plain_sig = sig;
		tp->plain_header = true;
	}
	fprintf(out, "%.3f,", (double)(s->now_ns - tp->first_ns) / 1e9);
	csv_name(out, s->phase);
	fprintf(out, ",%llu,%llu,%llu,%llu", (unsigned long long)s->triggers,
		(unsigned long long)s->overruns, (unsigned long long)s->dropped,
		(unsigned long long)s->read_failures);
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < C_N; c++) /* as decode's CSV: no exponents */
			fprintf(out, ",%s", isfinite(t[i].v[c]) ? t4_fmt_value(t[i].v[c], num,
									      sizeof(num)) : "");
	fprintf(out, "\n");
	fflush(out);
}

/* ---- the loop ------------------------------------------------------------------------- */

/* Wait up to ms for a key (terminal) or the interval; false: quit. */
static bool keys(struct top *tp, int ms)
{
	struct pollfd p = { .fd = tp->in, .events = POLLIN };
	char c;

	if (!tp->tty) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		return !top_stop;
	}
	job_control(tp);
	int rc = poll(&p, 1, ms);
	job_control(tp); /* a signal ended the poll */
	if (rc <= 0 || read(tp->in, &c, 1) != 1)
		return !top_stop;
	switch (c) {
	case 'q':
		return false;
	case 's':
		tp->sort = (tp->sort + 1) % C_N;
		break;
	case 'k':
		tp->per_kind = !tp->per_kind;
		break;
	case 'p':
		tp->paused = !tp->paused;
		break;
	default:
		break;
	}
	tp->redraw = true;
	return !top_stop;
}

static int refresh(struct top *tp, struct t4_live_view *v, struct trow **t, size_t *cap)
{
	struct t4_live_snap s;
	const struct t4_live_row *rows;
	size_t n;
	int rc;

	if ((rc = tp->take(tp->ud, &s)) < 0)
		return rc;
	if ((rc = t4_live_view_update(v, &s, &rows, &n)) < 0) {
		t4_live_snap_free(&s);
		return rc;
	}
	if (!tp->first_ns)
		tp->first_ns = t4_live_view_snap(v)->now_ns;
	if (n > *cap) {
		struct trow *r = realloc(*t, n * sizeof(*r));
		if (!r)
			return t4_err(ENOMEM, "out of memory");
		*t = r;
		*cap = n;
	}
	for (size_t i = 0; i < n; i++)
		make_trow(&rows[i], &(*t)[i]);
	tp->n = n;
	return 0;
}

static void show(struct top *tp, const struct t4_live_view *v, struct trow *t)
{
	size_t n = tp->n;
	struct trow *copy = malloc((n ? n : 1) * sizeof(*copy));

	if (!copy)
		return;
	if (n) /* a view with no rows yet has no table (t is NULL) */
		memcpy(copy, t, n * sizeof(*copy));
	if (tp->per_kind)
		n = by_kind(copy, n);
	cmp_col = tp->sort; /* plain lines keep their columns in one order */
	qsort(copy, n, sizeof(*copy), tp->tty ? by_col : by_name);
	if (tp->tty)
		draw(tp, v, copy, n);
	else
		plain(tp, v, copy, n);
	free(copy);
}

/* When the refresh after the one due at `due` is due: an interval later,
 * or an interval from now when that is past already (top was stopped, a
 * refresh waited seconds for its recorder). Catching up instead made a
 * burst of refreshes back to back: the same snapshot again and again (the
 * recorder's last one, T4_LIVE_CTL_MIN_MS), lines with one time. */
static uint64_t next_refresh(uint64_t due, uint64_t interval_ns)
{
	uint64_t now = t4_clock_ns(CLOCK_MONOTONIC);

	return due + interval_ns > now ? due + interval_ns : now + interval_ns;
}

/* Milliseconds from now to next as an int, at most a day (the loop waits
 * again): -i's longest intervals (277777h) overflowed it, and the negative
 * wait that made returned at once, a loop spinning on a CPU. */
static int ms_until(uint64_t next, uint64_t now)
{
	uint64_t ms = next > now ? (next - now) / 1000000 : 0;

	return ms < TOP_MAX_WAIT_MS ? (int)ms : TOP_MAX_WAIT_MS;
}

int cli_top_run(struct top *tp)
{
	struct t4_live_view *v = NULL;
	struct trow *t = NULL;
	size_t cap = 0;
	int rc;
	bool jobs = false; /* SIGTSTP, SIGCONT ours */
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term, old_hup, old_job[2];

	if (!tp->keep_signals) {
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		sigaction(SIGHUP, &sa, &old_hup);
	}
	if (!tp->out)
		tp->out = stdout;
	tp->tty = isatty(tp->in) && isatty(fileno(tp->out));
	if ((rc = t4_live_view_new(&v)) < 0 || (tp->tty && (rc = tty_enter(tp)) < 0))
		goto out;
	if ((jobs = tp->tty))
		job_signals(true, old_job);
	uint64_t next = t4_clock_ns(CLOCK_MONOTONIC);
	while (!top_stop) {
		if (tp->done && tp->done(tp->ud)) {
			rc = 1;
			break;
		}
		if (!tp->paused) {
			if ((rc = refresh(tp, v, &t, &cap)) < 0)
				break;
			show(tp, v, t);
			if (ferror(tp->out)) { /* its reader went away (EPIPE), a full
						* disk: no one sees more */
				int e = errno ? errno : EIO;

				rc = t4_err(e, "standard output: %s", strerror(e));
				break;
			}
		}
		next = next_refresh(next, tp->interval_ns);
		do {
			uint64_t now = t4_clock_ns(CLOCK_MONOTONIC);
			int ms = ms_until(next, now);
			tp->redraw = false;
			if (tp->done && ms > TOP_DONE_MS)
				ms = TOP_DONE_MS;
			if (!keys(tp, ms))
				goto out;
			if (tp->done && tp->done(tp->ud)) {
				rc = 1;
				goto out;
			}
			if (tp->redraw && tp->n)
				show(tp, v, t);
		} while (t4_clock_ns(CLOCK_MONOTONIC) < next && !top_stop);
	}
out:
	tty_restore(tp);
	if (jobs)
		job_signals(false, old_job);
	if (!tp->keep_signals) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
	}
	t4_live_view_free(v);
	free(t);
	return rc;
}
