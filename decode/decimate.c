/* decimate.c - the report's series in bounded memory (report.h): one grid
 * of columns shared by every series, whose width doubles as the log goes
 * on, so that an hour at 1 ms (3.6 M intervals per domain) ends as a few
 * thousand columns per series without ever holding the intervals.
 *
 * A column keeps the extremes of what fell into it (min/max decimation),
 * never a mean: merging two columns keeps the smaller minimum and the
 * larger maximum, and which came first, exactly as if the wider column had
 * been used from the start. An interval longer than a column goes into
 * every column it covers, so a slow period on a short log draws steps, not
 * dots. CPU and GPU lanes sum the time their slices cover per column
 * (sums merge exactly too).
 *
 * Summed series (a kind with many instances, e.g. one software domain per
 * CPU) add the instances' values of one trigger before the extremes are
 * taken: the sum at each trigger, as perf stat -I -a prints it. The
 * values of a trigger arrive close together (the decoder's join
 * look-ahead), so a ring of RPT_SUM_ROWS triggers holds them; a trigger
 * is complete when its row is needed by a trigger RPT_SUM_ROWS later.
 */
#include "report.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void rpt_grid_free(struct rpt_grid *g)
{
	for (size_t i = 0; i < g->n_env; i++) {
		free(g->env[i].lo);
		free(g->env[i].hi);
		free(g->env[i].state);
	}
	for (size_t i = 0; i < g->n_acc; i++)
		free(g->acc[i].v);
	free(g->env);
	free(g->acc);
	memset(g, 0, sizeof(*g));
}

int rpt_env_new(struct rpt_grid *g)
{
	struct rpt_env e = { calloc(RPT_COLS, sizeof(float)), calloc(RPT_COLS, sizeof(float)),
			     calloc(RPT_COLS, 1) };

	if (!e.lo || !e.hi || !e.state ||
	    dec_vec_room((void **)&g->env, &g->cap_env, g->n_env, sizeof(e)) < 0) {
		free(e.lo);
		free(e.hi);
		free(e.state);
		return t4_err(ENOMEM, "out of memory for the report's series");
	}
	g->env[g->n_env] = e;
	return (int)g->n_env++;
}

int rpt_acc_new(struct rpt_grid *g)
{
	struct rpt_acc a = { calloc(RPT_COLS, sizeof(double)) };

	if (!a.v || dec_vec_room((void **)&g->acc, &g->cap_acc, g->n_acc, sizeof(a)) < 0) {
		free(a.v);
		return t4_err(ENOMEM, "out of memory for the report's lanes");
	}
	g->acc[g->n_acc] = a;
	return (int)g->n_acc++;
}

uint64_t rpt_col_start(const struct rpt_grid *g, uint32_t c)
{
	return g->origin + (uint64_t)c * g->width;
}

/* Columns a (earlier) and b (later) as one. */
static void env_merge(struct rpt_env *e, uint32_t to, uint32_t a, uint32_t b)
{
	uint8_t sa = e->state[a], sb = e->state[b];

	if (!(sa & RPT_HAS) || !(sb & RPT_HAS)) {
		uint32_t k = sa & RPT_HAS ? a : b;
		e->lo[to] = e->lo[k], e->hi[to] = e->hi[k], e->state[to] = e->state[k];
		return;
	}
	bool lo_a = e->lo[a] <= e->lo[b], hi_a = e->hi[a] >= e->hi[b];
	uint8_t hi_first = lo_a == hi_a ? ((lo_a ? sa : sb) & RPT_HI_FIRST)
			   : hi_a       ? RPT_HI_FIRST
					: 0;
	e->lo[to] = lo_a ? e->lo[a] : e->lo[b];
	e->hi[to] = hi_a ? e->hi[a] : e->hi[b];
	e->state[to] = RPT_HAS | hi_first;
}

/* Double the width: column c becomes columns 2c and 2c + 1 merged. */
static void widen(struct rpt_grid *g)
{
	uint32_t n = (g->used + 1) / 2;

	for (size_t i = 0; i < g->n_env; i++) {
		struct rpt_env *e = &g->env[i];
		for (uint32_t c = 0; c < n; c++)
			env_merge(e, c, 2 * c, 2 * c + 1 < g->used ? 2 * c + 1 : 2 * c);
		memset(e->state + n, 0, RPT_COLS - n);
	}
	for (size_t i = 0; i < g->n_acc; i++) {
		double *v = g->acc[i].v;
		for (uint32_t c = 0; c < n; c++)
			v[c] = v[2 * c] + (2 * c + 1 < g->used ? v[2 * c + 1] : 0);
		for (uint32_t c = n; c < RPT_COLS; c++)
			v[c] = 0;
	}
	g->used = n;
	g->width *= 2;
}

void rpt_grid_start(struct rpt_grid *g, uint64_t origin)
{
	if (g->started)
		return;
	g->started = true;
	g->origin = origin;
	g->width = RPT_WIDTH0_NS;
}

/* The column of t, widening the grid until it fits (the first time sets
 * the origin unless rpt_grid_start did: times before it fall into
 * column 0). */
static uint32_t col_of(struct rpt_grid *g, uint64_t t)
{
	rpt_grid_start(g, t);
	if (t < g->origin)
		return 0;
	while ((t - g->origin) / g->width >= RPT_COLS && g->width < (UINT64_MAX >> 2))
		widen(g);
	uint64_t c = (t - g->origin) / g->width;
	c = c < RPT_COLS ? c : RPT_COLS - 1;
	if (c + 1 > g->used)
		g->used = (uint32_t)c + 1;
	return (uint32_t)c;
}

/* The columns [*c0, *c1] that [start, end) covers. */
static void cols_of(struct rpt_grid *g, uint64_t start, uint64_t end, uint32_t *c0, uint32_t *c1)
{
	if (!g->started)
		col_of(g, start); /* the origin: the first start */
	*c1 = col_of(g, end > start ? end - 1 : start); /* widens first */
	*c0 = col_of(g, start);
}

void rpt_env_add(struct rpt_grid *g, size_t i, uint64_t start, uint64_t end, double v)
{
	struct rpt_env *e = &g->env[i];
	uint32_t c0, c1;
	float f = (float)v;

	if (!isfinite(v))
		return;
	cols_of(g, start, end, &c0, &c1);
	for (uint32_t c = c0; c <= c1; c++) {
		if (!(e->state[c] & RPT_HAS)) {
			e->lo[c] = e->hi[c] = f;
			e->state[c] = RPT_HAS;
		} else if (f > e->hi[c]) {
			e->hi[c] = f;
			e->state[c] &= (uint8_t)~RPT_HI_FIRST; /* the maximum is now the later */
		} else if (f < e->lo[c]) {
			e->lo[c] = f;
			e->state[c] |= RPT_HI_FIRST;
		}
	}
}

void rpt_acc_add(struct rpt_grid *g, size_t i, uint64_t start, uint64_t end)
{
	double *v = g->acc[i].v;
	uint32_t c0, c1;

	if (end <= start)
		return;
	cols_of(g, start, end, &c0, &c1);
	for (uint32_t c = c0; c <= c1; c++) {
		uint64_t lo = rpt_col_start(g, c), hi = lo + g->width;
		lo = lo > start ? lo : start;
		hi = hi < end ? hi : end;
		if (hi > lo)
			v[c] += (double)(hi - lo);
	}
}

static void sum_out(struct rpt_grid *g, struct rpt_sum *s, struct rpt_sum_slot *sl)
{
	if (sl->used)
		rpt_env_add(g, s->env, sl->start, sl->end, sl->v);
	sl->used = false;
}

void rpt_sum_add(struct rpt_grid *g, struct rpt_sum *s, uint32_t sched, uint64_t trigger,
		 uint64_t start, uint64_t end, double v)
{
	struct rpt_sum_slot *row = s->slot[trigger % RPT_SUM_ROWS], *free_slot = NULL;

	if (!isfinite(v))
		return;
	for (size_t k = 0; k < RPT_SUM_WAYS; k++) {
		struct rpt_sum_slot *sl = &row[k];
		if (sl->used && sl->trigger != trigger)
			sum_out(g, s, sl); /* a trigger RPT_SUM_ROWS earlier: complete */
		if (sl->used && sl->sched == sched) {
			sl->v += v;
			sl->start = start < sl->start ? start : sl->start;
			sl->end = end > sl->end ? end : sl->end;
			return;
		}
		if (!sl->used && !free_slot)
			free_slot = sl;
	}
	if (!free_slot) { /* more schedulers than ways: the oldest goes out */
		sum_out(g, s, &row[0]);
		free_slot = &row[0];
	}
	*free_slot = (struct rpt_sum_slot){ true, sched, trigger, start, end, v };
}

void rpt_sum_flush(struct rpt_grid *g, struct rpt_sum *s)
{
	for (size_t r = 0; r < RPT_SUM_ROWS; r++)
		for (size_t k = 0; k < RPT_SUM_WAYS; k++)
			sum_out(g, s, &s->slot[r][k]);
}
