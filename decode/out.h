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
	out_phases;

/* Flush; the error, if any, named (EPIPE returned silently). */
int out_close(struct t4_output *x);
/* 0, or the writer's sticky error named as out_close() does: what a
 * callback returns after writing. */
int out_status(struct t4_output *x);
/* Interval flags as words ("spans", "partial", ...). */
size_t out_flag_names(uint32_t flags, const char **names, size_t cap);

#endif
