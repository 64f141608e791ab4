/* live.h - what a recording shows while it runs: `t410trace top` and the
 * Prometheus endpoint (`record --metrics-listen`).
 *
 * The recorder's writer thread already sees every packet it logs (the
 * log's observe hook): it feeds them to the index of decode/ (index.c:
 * per-domain totals of every event, triggers, overruns, bookmarks), the
 * same index `info` and record's closing table are made of. A snapshot is
 * a copy of that index's numbers taken under a lock, plus what only the
 * recorder knows (drops at full rings, its own CPU time). Nothing here
 * runs on the trigger path: the writer pays one uncontended lock per
 * packet, readers copy a few kilobytes per snapshot.
 *
 * Rates come from two snapshots: the change of every total over the
 * change of the domain's reference time (its last sample's read), fed to
 * the domain kind's formulas (decode.h t4_kind_metrics: the decoder's own
 * formulas and rules). The Prometheus endpoint exports the totals
 * themselves (counters: Prometheus takes the rates) and the last
 * interval's metrics as gauges.
 *
 * Snapshots travel over the control socket as text (live_text.c), so that
 * `top` needs nothing but the socket.
 *
 * Errors follow util.h: 0 or a negative errno, message in t4_errmsg().
 */
#ifndef T4_LIVE_H
#define T4_LIVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode/decode.h"
#include "packets/packets.h"

/* ---- snapshots (live.c) ------------------------------------------------- */

struct t4_live_event {
	char name[T4_NAME_MAX];
	char unit[32];
	uint32_t flags;   /* T4_EV_* */
	uint64_t total;   /* since the recording started (a gauge: its level) */
};

struct t4_live_domain {
	uint32_t id, kind;
	int32_t cpu;
	char name[T4_NAME_MAX], pmu[T4_NAME_MAX];
	uint64_t first_ns; /* reference time of its first sample's read */
	uint64_t last_ns;  /* and of its last one's */
	uint64_t rets;
	uint32_t n_events;
	struct t4_live_event ev[T4_MAX_COUNTERS];
};

/* What only the recorder knows, handed in with each snapshot. */
struct t4_live_health {
	uint64_t dropped;    /* packets dropped at full rings */
	uint64_t cpu_ns;     /* the recorder's CPU time so far */
	uint64_t now_ns;     /* the reference clock now */
};

struct t4_live_snap {
	uint64_t now_ns;
	char host[T4_NAME_MAX];
	bool simulated;
	uint32_t ref_clock;  /* enum t4_ref_clock */
	uint64_t period_ns;
	uint64_t triggers, overruns, dropped, read_failures;
	uint64_t cpu_ns;
	char phase[T4_NAME_MAX]; /* the bookmark in force ("" none) */
	uint64_t phase_set_ns;   /* when it was set (0: unknown) */
	size_t n_domains;
	struct t4_live_domain *doms; /* owned: t4_live_snap_free */
};
void t4_live_snap_free(struct t4_live_snap *s);

/* The recorder's side: an index fed packet by packet, read by snapshots. */
struct t4_live;
int t4_live_new(struct t4_live **out);
void t4_live_free(struct t4_live *l); /* accepts NULL */
/* Every packet the log writes (the writer thread: the observe hook). An
 * index out of memory stops the live numbers, never the recording. */
void t4_live_feed(struct t4_live *l, const struct t4_packet *p);
/* A copy of what the index holds now, with h. */
int t4_live_take(struct t4_live *l, const struct t4_live_health *h, struct t4_live_snap *out);
/* The index itself, for after the log is closed (record's closing table):
 * NULL when it ran out of memory. Not to be used while packets flow. */
const struct t4_index *t4_live_index(const struct t4_live *l);

/* ---- snapshots as text (live_text.c) ------------------------------------- */

/* Write s as lines of text into a malloc'd *buf (*len bytes): a header
 * line "t410trace-live 2", key/value lines, one "domain" line per domain
 * followed by its "event" lines, and "end". Names are escaped so that
 * any byte survives (\\, \t, \n and non-printable bytes as \xNN). */
int t4_live_snap_text(const struct t4_live_snap *s, char **buf, size_t *len);
/* Parse such a text into out (free with t4_live_snap_free); -EPROTO with
 * a message naming the line for anything else. */
int t4_live_snap_parse(const char *text, size_t len, struct t4_live_snap *out);

/* ---- rates between snapshots (view.c) ------------------------------------- */

/* One domain over the interval between two snapshots. */
struct t4_live_row {
	const struct t4_live_domain *dom; /* in the newer snapshot */
	uint64_t elapsed_ns;  /* between its two last samples (0: no rate yet) */
	uint32_t n_metrics;
	const char *metric_name[T4_MAX_COUNTERS];
	const char *metric_unit[T4_MAX_COUNTERS];
	bool metric_brief[T4_MAX_COUNTERS];
	double metric[T4_MAX_COUNTERS]; /* NaN: absent */
	double rate[T4_MAX_COUNTERS];   /* each event per second (a gauge: its level) */
};

/* Keeps each domain kind's compiled formulas and the previous snapshot. */
struct t4_live_view;
int t4_live_view_new(struct t4_live_view **out);
void t4_live_view_free(struct t4_live_view *v); /* accepts NULL */
/* Take the next snapshot (the view keeps it; the caller's s is emptied)
 * and make one row per domain of it into *rows (n_rows), valid until the
 * next call. The first snapshot gives rows without rates. */
int t4_live_view_update(struct t4_live_view *v, struct t4_live_snap *s,
			const struct t4_live_row **rows, size_t *n_rows);
/* The snapshot the rows come from. */
const struct t4_live_snap *t4_live_view_snap(const struct t4_live_view *v);
/* The interval between the two last snapshots: triggers in it, and the
 * recorder's CPU per trigger (NaN without triggers). */
uint64_t t4_live_view_triggers(const struct t4_live_view *v);
double t4_live_view_cpu_per_trigger(const struct t4_live_view *v);

/* ---- the metrics endpoint (prom.c, http.c) --------------------------------- */

/* A snapshot and its rows in Prometheus's text exposition format into a
 * malloc'd *buf (*len bytes): prom.c says which series. */
int t4_live_prometheus(const struct t4_live_snap *s, const struct t4_live_row *rows,
		       size_t n_rows, char **buf, size_t *len);

/* Serve GET /metrics over HTTP on addr ("127.0.0.1:9400", "[::1]:9400",
 * ":9400" for every address) from snapshots of l, on threads of its own
 * (libmicrohttpd): a snapshot at most every T4_LIVE_HTTP_MIN_MS, shared by
 * the scrapes in between; health(ud, h) gives what only the recorder
 * knows. Fails (a port in use, an address that is not one) before
 * anything is served. */
#define T4_LIVE_HTTP_MIN_MS 500
/* The control socket's "live" (`t410trace top`): a snapshot at most every
 * T4_LIVE_CTL_MIN_MS, whoever asks; a faster caller gets the last one again
 * (top refreshes every 100 ms at the most: cli/cmd_top.c). */
#define T4_LIVE_CTL_MIN_MS 50
struct t4_live_http;
int t4_live_http_start(struct t4_live_http **out, const char *addr, struct t4_live *l,
		       void (*health)(void *ud, struct t4_live_health *h), void *ud);
/* The port it listens on (the one asked for, or the kernel's for port 0). */
unsigned t4_live_http_port(const struct t4_live_http *h);
void t4_live_http_stop(struct t4_live_http *h); /* accepts NULL */

#endif
