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
	int (*init)(struct t4_output *x);
	void (*fini)(struct t4_output *x);
};

struct t4_output {
	struct t4_output_opts o;
	const struct out_backend *be;
	FILE *f;
	struct t4_wbuf w;
	void *state; /* the backend's own */
};

extern const struct out_backend out_summary, out_csv, out_jsonl, out_perfetto, out_slices,
	out_phases, out_report;

/* Flush; the error, if any, named (EPIPE returned silently). */
int out_close(struct t4_output *x);
/* 0, or the writer's sticky error named as out_close() does: what a
 * callback returns after writing. */
int out_status(struct t4_output *x);
/* Interval flags as words ("spans", "partial", ...). */
size_t out_flag_names(uint32_t flags, const char **names, size_t cap);

/* ---- the summary's tables, shared with the report (sections.c) ---------- */

#define SEC_MAX_COLS 16   /* headline metrics per kind table */
#define SEC_MAX_LISTED 32 /* phase occurrences listed one by one */

/* Seconds of ns from origin (a hair before it is 0, never -0.000). */
double sec_secs(uint64_t ns, uint64_t origin);
/* "NAME#OCCURRENCE" ("(none)" before any bookmark). */
void sec_phase_label(const struct t4_dec_phase *p, char *buf, size_t cap);
/* From the first trigger to the last one of any scheduler. */
uint64_t sec_log_span(const struct t4_decoder *dec);
/* The headline metrics of d that were recorded (metric indexes), at
 * most SEC_MAX_COLS. */
size_t sec_brief_cols(const struct t4_dec_domain *d, uint32_t *cols);

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
/* Whether the kind tables list every occurrence (few phases, each its own
 * name, or verbose) besides the recurring names' rows. */
bool sec_each_occurrence(const struct t4_decoder *dec, const struct sec_names *pn, bool verbose);

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

#endif
