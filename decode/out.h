/* out.h - shared by the output formats of decode/ (out*.c) only. */
#ifndef T4_DECODE_OUT_H
#define T4_DECODE_OUT_H

#include "decode_int.h"

struct t4_output;

/* One format: its sink callbacks (ud is the struct t4_output) and its
 * state's lifetime. */
struct out_backend {
	const char *name;
	struct t4_sink_ops ops;
	bool wants_metrics;
	bool at_end; /* writes nothing before its finish */
	int (*init)(struct t4_output *x);
	void (*fini)(struct t4_output *x);
	/* decode -j: what was described once (a header, group tracks),
	 * copied into a worker's copy, and back (the formats whose ops have
	 * fork: out_fork) */
	void (*fork_state)(struct t4_output *copy, const struct t4_output *x);
	void (*join_state)(struct t4_output *x, const struct t4_output *copy);
};

struct t4_output {
	struct t4_output_opts o;
	const struct out_backend *be;
	FILE *f;
	struct t4_wbuf w;
	void *state; /* the backend's own */
	struct dec_split *split; /* decode -j: a worker's (parallel.c), or NULL */
};

/* decode -j (parallel.c): the sink ops fork and join of a format whose
 * rows several workers make. */
int out_fork(void *ud, void **copy);
void out_join(void *ud, void *copy);

/* What follows (up to out_once_end) is written once whatever the number
 * of workers that write it: the first in -j 1's order is kept. */
static inline void out_once(struct t4_output *x, int id)
{
	if (x->split)
		dec_split_once(x->split, id);
}

static inline void out_once_end(struct t4_output *x)
{
	out_once(x, DEC_ONCE_END);
}

extern const struct out_backend out_summary, out_csv, out_jsonl, out_perfetto, out_slices,
	out_phases, out_report;

/* ---- a domain's names, escaped once (out_cells.c) ------------------------- */

#define OUT_CELL_SLOTS 64 /* domains whose parts are kept at a time */
#define OUT_CELL_PARTS (1 + 4 * T4_MAX_COUNTERS) /* a domain's, two per name */

/* Parts 0..n-1 of one domain: part i is text[off[i], off[i + 1]). */
struct out_cell_set {
	uint64_t names_id; /* the domain's when made (0: none) */
	struct t4_wbuf text;
	uint32_t n;
	uint32_t off[OUT_CELL_PARTS + 1];
};

/* Writes a domain's parts into s->text, calling out_cell_end() after
 * each one. */
typedef void (*out_cells_render_fn)(void *ud, const struct t4_dec_domain *dm,
				    struct out_cell_set *s);

struct out_cells {
	out_cells_render_fn render;
	void *ud;
	struct out_cell_set slot[OUT_CELL_SLOTS];
};

int out_cells_init(struct out_cells *c, out_cells_render_fn render, void *ud);
void out_cells_free(struct out_cells *c); /* after a failed init too */
/* Closes the part written since the last one. */
void out_cell_end(struct out_cell_set *s);
/* The parts of dm (its slot index), made again: NULL: out of memory
 * (t4_err set). */
const struct out_cell_set *out_cells_make(struct out_cells *c, uint32_t slot,
					  const struct t4_dec_domain *dm);

/* The parts of dm (its slot index), made if its names changed; NULL: out
 * of memory (t4_err set). */
static inline const struct out_cell_set *out_cells_of(struct out_cells *c, uint32_t slot,
						      const struct t4_dec_domain *dm)
{
	const struct out_cell_set *s = &c->slot[slot % OUT_CELL_SLOTS];

	return dm->names_id && s->names_id == dm->names_id ? s : out_cells_make(c, slot, dm);
}

/* Part i appended to w. */
static inline void out_cell_put(struct t4_wbuf *w, const struct out_cell_set *s, uint32_t i)
{
	dec_wbuf_put(w, s->text.buf + s->off[i], s->off[i + 1] - s->off[i]);
}

/* Flush; the error, if any, named (EPIPE returned silently). */
int out_close(struct t4_output *x);
/* 0, or the writer's sticky error named as out_close() does: what a
 * callback returns after writing. */
int out_status(struct t4_output *x);
/* Interval flags as words ("spans", "partial", ...). */
size_t out_flag_names(uint32_t flags, const char **names, size_t cap);

/* One Perfetto counter packet (out_perfetto.c) encoded by hand, as every
 * trace has it, into hand and by protobuf-c into ref: the tests compare. */
void out_pf_counter_both(uint64_t ts, uint32_t clock, uint64_t track, const uint64_t *count,
			 double value, struct t4_wbuf *hand, struct t4_wbuf *ref);

/* ---- the summary's tables, shared with the report (sections.c) ---------- */

#define SEC_MAX_COLS 16   /* headline metrics per kind table */
#define SEC_MAX_LISTED 32 /* phase occurrences listed one by one */

/* Seconds of ns from origin (a hair before it is 0, never -0.000). */
double sec_secs(uint64_t ns, uint64_t origin);
/* Seconds as the tables print them: a hair below 0 is 0. */
double sec_clamp(double s);
/* "NAME#OCCURRENCE" ("(none)" before any bookmark). */
void sec_phase_label(const struct t4_dec_phase *p, char *buf, size_t cap);
/* From the first trigger to the last one of any scheduler. */
uint64_t sec_log_span(const struct t4_decoder *dec);
/* Whether domain d of the log's index passes the filters (--pmu), with
 * which triggers it answered in *a (t4_index_answers: what info says):
 * the one account of unanswered triggers and duplicates every output
 * gives. */
bool sec_answers(const struct t4_decoder *dec, const struct t4_index_domain *d,
		 struct t4_index_answers *a);
/* Whether domain d of the log's index (one that passes the filters)
 * never answered: none of its scheduler's triggers, which go to
 * *triggers; the decoder has no domain for it, and info counts them as
 * unanswered. */
bool sec_silent(const struct t4_decoder *dec, const struct t4_index_domain *d,
		uint64_t *triggers);
/* Whether domain d (one that passes the filters) stopped answering before
 * its scheduler's last trigger; if so, into buf (safe for the terminal
 * and for HTML once escaped): "NAME after trigger K (S s): N triggers
 * after it unanswered", S its last answer's time from the origin. */
bool sec_stopped_text(const struct t4_decoder *dec, const struct t4_index_domain *d,
		      char *buf, size_t cap);
/* The headline metrics of d that were recorded (metric indexes), at
 * most SEC_MAX_COLS. */
size_t sec_brief_cols(const struct t4_dec_domain *d, uint32_t *cols);

/* A kind table of nl label columns (lh) and the headline metric columns
 * of domain d (their indexes into cols, *nc of them). */
int sec_kind_table_init(struct t4_table *t, const struct t4_dec_domain *d,
			const char *const *lh, size_t nl, uint32_t *cols, size_t *nc);

/* The phase names: each bookmark's first phase and how many phases it
 * has, in the order they first occur. */
struct sec_names {
	size_t n;
	size_t *first, *count;
};
int sec_names_build(const struct t4_decoder *dec, struct sec_names *pn);
void sec_names_free(struct sec_names *pn);
/* "NAME#1" for a name with one phase, "NAME (all N)" for the others. */
void sec_name_label(const struct t4_decoder *dec, const struct sec_names *pn, size_t k,
		    char *buf, size_t cap);
/* Whether the per-phase tables list every occurrence (few phases, each its
 * own name, or verbose) besides the recurring names' rows. */
bool sec_each_occurrence(const struct t4_decoder *dec, const struct sec_names *pn, bool verbose);
/* The rows of every per-phase table (the kind tables, EVENTS; the summary
 * and the report), each once: every occurrence when they are listed
 * (sec_each_occurrence), then a name's every occurrence together for a
 * recurring name, or for every name when they are not listed. fn gets the
 * row's label and its phase, or SIZE_MAX and its bookmark for a name's
 * row; a negative return stops. */
typedef int (*sec_row_fn)(void *ud, const char *label, size_t phase, uint32_t bookmark_id);
int sec_phase_rows(const struct t4_decoder *dec, const struct sec_names *pn, bool verbose,
		   sec_row_fn fn, void *ud);

/* The phase table (the first SEC_MAX_LISTED spans); dec_table_free() it. */
int sec_phase_table(const struct t4_decoder *dec, struct t4_table *t);
/* One table per PMU kind: rows PHASE, PMU and the kind's headline metrics
 * (averages over each phase from its totals). fn gets each table with
 * the kind's first domain (index) and its metric columns; its error
 * stops the walk. */
typedef int (*sec_kind_fn)(void *ud, const struct t4_decoder *dec, size_t first,
			   const uint32_t *cols, size_t nc, const struct t4_table *t);
int sec_kind_tables(const struct t4_decoder *dec, const struct sec_names *pn, bool verbose,
		    sec_kind_fn fn, void *ud);
/* Every selected domain's clock model in one table. */
int sec_clock_table(const struct t4_decoder *dec, struct t4_table *t);

/* ---- several hosts merged (sections_hosts.c) ----------------------------- */

/* "within +-N (the kernel's maxerror ..., fit residual ...)". */
void sec_place_text(const struct t4_place *pl, char *buf, size_t cap);
/* One row per host: span, bound and its parts. */
int sec_hosts_table(const struct t4_merge *m, struct t4_table *t);
/* Every host's first SEC_MAX_LISTED phases, the same NAME#N side by side. */
int sec_hosts_phase_table(const struct t4_merge *m, struct t4_table *t);
/* Per kind, rows PHASE, HOST, PMU: the headline metrics over each phase
 * name's occurrences on each host; fn gets each table with the kind's
 * first domain (its metric columns). */
typedef int (*sec_hosts_kind_fn)(void *ud, const struct t4_dec_domain *first,
				 const struct t4_table *t);
int sec_hosts_kind_tables(const struct t4_merge *m, sec_hosts_kind_fn fn, void *ud);

#endif
