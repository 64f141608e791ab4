/* out.c - the output formats behind one interface: a table of backends
 * (summary, csv, jsonl, perfetto), each a set of sink callbacks plus its
 * own state, created by name (the way redis's rio picks a backend).
 */
#include "out.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct out_backend *const backends[] = {
	[T4_FMT_SUMMARY] = &out_summary,
	[T4_FMT_CSV] = &out_csv,
	[T4_FMT_JSONL] = &out_jsonl,
	[T4_FMT_PERFETTO] = &out_perfetto,
	[T4_FMT_SLICES] = &out_slices,
	[T4_FMT_PHASES] = &out_phases,
	[T4_FMT_REPORT] = &out_report,
};

/* Names users typed before a format was renamed. */
static const struct {
	const char *name;
	enum t4_out_format format;
} aliases[] = {
	{ "phases-csv", T4_FMT_SLICES },
};

bool t4_out_format_at_end(enum t4_out_format f)
{
	return (size_t)f < T4_ARRAY_LEN(backends) && backends[f]->at_end;
}

int t4_out_format_parse(const char *s, enum t4_out_format *out)
{
	for (size_t i = 0; i < T4_ARRAY_LEN(backends); i++)
		if (!strcmp(s, backends[i]->name)) {
			*out = (enum t4_out_format)i;
			return 0;
		}
	for (size_t i = 0; i < T4_ARRAY_LEN(aliases); i++)
		if (!strcmp(s, aliases[i].name)) {
			*out = aliases[i].format;
			return 0;
		}
	return t4_err(EINVAL, "format '%s': use summary, csv, jsonl, perfetto, phases, slices or report",
		      s);
}

const char *t4_out_format_name(enum t4_out_format f)
{
	return (unsigned)f < T4_ARRAY_LEN(backends) ? backends[f]->name : "?";
}

int t4_output_new(struct t4_output **out, const struct t4_output_opts *o, FILE *f)
{
	struct t4_output *x;
	int rc;

	if ((unsigned)o->format >= T4_ARRAY_LEN(backends))
		return t4_err(EINVAL, "unknown output format %d", o->format);
	if (!(x = calloc(1, sizeof(*x))))
		return t4_err(ENOMEM, "out of memory");
	x->o = *o;
	if (!x->o.csv_sep)
		x->o.csv_sep = ',';
	if (f && isatty(fileno(f)))
		x->o.terminal = true; /* a fork (no file) keeps its parent's */
	x->be = backends[o->format];
	x->f = f;
	if ((rc = dec_wbuf_init(&x->w, f, 1 << 16)) < 0 ||
	    (x->be->init && (rc = x->be->init(x)) < 0)) {
		t4_output_free(x);
		return rc;
	}
	*out = x;
	return 0;
}

void t4_output_free(struct t4_output *x)
{
	if (!x)
		return;
	if (x->be && x->be->fini)
		x->be->fini(x);
	dec_wbuf_free(&x->w);
	free(x);
}

const struct t4_sink_ops *t4_output_ops(const struct t4_output *x)
{
	return &x->be->ops;
}

bool t4_output_wants_metrics(const struct t4_output *x)
{
	return x->be->wants_metrics;
}

int out_fork(void *ud, void **copy)
{
	const struct t4_output *x = ud;
	struct t4_output *c;
	int rc = t4_output_new(&c, &x->o, NULL); /* no file: a buffer that grows */

	if (rc < 0)
		return rc;
	c->w.len = 0; /* (a header init wrote: x wrote it) */
	if (x->be->fork_state)
		x->be->fork_state(c, x);
	*copy = c;
	return 0;
}

void out_join(void *ud, void *copy)
{
	struct t4_output *x = ud;

	if (copy && x->be->join_state)
		x->be->join_state(x, copy);
	t4_output_free(copy);
}

/* The end of every format: flush, and name the error (a full disk, a
 * closed pipe) with the output it hit. */
int out_close(struct t4_output *x)
{
	int rc = dec_wbuf_flush(&x->w);

	if (!rc && ferror(x->f)) /* the summary prints with stdio */
		rc = -(errno ? errno : EIO);
	if (rc == -EPIPE)
		return rc; /* the reader went away (| head): not an error to print */
	if (rc >= 0)
		return 0;
	return t4_err(-rc, "%s: writing the %s output: %s",
		      x->o.out_name && strcmp(x->o.out_name, "-") ? x->o.out_name : "standard output",
		      x->be->name, strerror(-rc));
}

int out_status(struct t4_output *x)
{
	return x->w.error ? out_close(x) : 0;
}

/* Interval flags as words, for the text formats. */
static const char *const flag_names[] = {
	"spans", "partial", "multiplexed", "backwards", "bin", "no_ref", "nonlinear",
};

size_t out_flag_names(uint32_t flags, const char **names, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < T4_ARRAY_LEN(flag_names) && n < cap; i++)
		if (flags & (1u << i))
			names[n++] = flag_names[i];
	return n;
}
