/* report.h - shared by the report's files only (out_report.c, decimate.c,
 * and the assets tools/embed.py generates into the build folder).
 *
 * The report draws series over time in a bounded number of columns: every
 * series of one report shares one grid of RPT_COLS columns from an origin,
 * each column `width` ns wide. The width starts at 1 us and doubles (two
 * columns merged into one) whenever a time falls past the last column, so
 * a log of any length ends with between RPT_COLS / 2 and RPT_COLS columns
 * and memory stays RPT_COLS values per series, however long the log.
 * Columns keep exact extremes (decimate.c): a 1 ms spike in an hour stays
 * visible, nothing is averaged away.
 */
#ifndef T4_DECODE_REPORT_H
#define T4_DECODE_REPORT_H

#include "decode_int.h"

#define RPT_COLS 4096         /* columns of the grid (at most; half at least) */
#define RPT_WIDTH0_NS 1000ull /* the first column width */
#define RPT_SUM_ROWS 1024     /* triggers a summed series holds open */
#define RPT_SUM_WAYS 4        /* schedulers per held trigger */

/* Extremes per column: the smallest and largest value, and which of the
 * two came first (drawn in that order: a spike up then down, or down
 * then up). */
struct rpt_env {
	float *lo, *hi;  /* RPT_COLS each */
	uint8_t *state;  /* RPT_HAS | RPT_HI_FIRST */
};
enum { RPT_HAS = 1, RPT_HI_FIRST = 2 };

/* A sum per column: time covered (ns) by a CPU or GPU lane's slices. */
struct rpt_acc {
	double *v; /* RPT_COLS */
};

struct rpt_grid {
	bool started;
	uint64_t origin, width;
	uint32_t used; /* columns that may hold data */
	struct rpt_env *env;
	size_t n_env, cap_env;
	struct rpt_acc *acc;
	size_t n_acc, cap_acc;
};

/* A series summed over many domains, trigger by trigger: the values of
 * one trigger (per scheduler) are added up, then the sum goes into the
 * envelope `env` over the time its intervals cover. */
struct rpt_sum_slot {
	bool used;
	uint32_t sched;
	uint64_t trigger, start, end;
	double v;
};
struct rpt_sum {
	size_t env;
	struct rpt_sum_slot slot[RPT_SUM_ROWS][RPT_SUM_WAYS];
};

void rpt_grid_free(struct rpt_grid *g);
/* Start the grid at origin (no-op once started; else the first time
 * added is the origin). */
void rpt_grid_start(struct rpt_grid *g, uint64_t origin);
/* A new envelope or accumulator: its index, or a negative errno. */
int rpt_env_new(struct rpt_grid *g);
int rpt_acc_new(struct rpt_grid *g);
/* Value v over [start, end) into envelope e (every column it covers). */
void rpt_env_add(struct rpt_grid *g, size_t e, uint64_t start, uint64_t end, double v);
/* The time of [start, end) in each column into accumulator a. */
void rpt_acc_add(struct rpt_grid *g, size_t a, uint64_t start, uint64_t end);
/* Column c's start (absolute ns). */
uint64_t rpt_col_start(const struct rpt_grid *g, uint32_t c);

void rpt_sum_add(struct rpt_grid *g, struct rpt_sum *s, uint32_t sched, uint64_t trigger,
		 uint64_t start, uint64_t end, double v);
/* Every held trigger into the envelope (the end of the log). */
void rpt_sum_flush(struct rpt_grid *g, struct rpt_sum *s);

/* The embedded assets (generated from the build's copies). */
extern const char t4_rpt_uplot_js[], t4_rpt_uplot_css[], t4_rpt_uplot_license[],
	t4_rpt_uplot_version[], t4_rpt_js[], t4_rpt_css[];
extern const size_t t4_rpt_uplot_js_len, t4_rpt_uplot_css_len, t4_rpt_uplot_license_len,
	t4_rpt_uplot_version_len, t4_rpt_js_len, t4_rpt_css_len;

#endif
