/* out_cells.c - a domain's names as the text outputs print them, made
 * once.
 *
 * A CSV row or a JSONL record spells its domain's names (domain, PMU,
 * each event's and metric's name and unit), escaped for its format, for
 * every interval: scanning each name for what CSV quotes or JSON escapes
 * was most of a row's cost. A format renders a domain's names once into
 * numbered parts (its render function; the parts are its own business)
 * and copies parts afterwards. The parts are kept under the domain's
 * names_id, which changes whenever its names, units or selections do, so
 * a stale part is never printed. OUT_CELL_SLOTS domains are kept at a
 * time, by slot index: a log with more domains renders some of them again
 * (no worse than before), and memory stays bounded whatever the log.
 */
#include "out.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>

int out_cells_init(struct out_cells *c, out_cells_render_fn render, void *ud)
{
	memset(c, 0, sizeof(*c));
	c->render = render;
	c->ud = ud;
	for (size_t i = 0; i < OUT_CELL_SLOTS; i++)
		if (dec_wbuf_init(&c->slot[i].text, NULL, 256) < 0) {
			out_cells_free(c);
			return t4_err(ENOMEM, "out of memory");
		}
	return 0;
}

void out_cells_free(struct out_cells *c)
{
	for (size_t i = 0; i < OUT_CELL_SLOTS; i++)
		dec_wbuf_free(&c->slot[i].text);
}

void out_cell_end(struct out_cell_set *s)
{
	if (s->n < OUT_CELL_PARTS)
		s->off[++s->n] = (uint32_t)s->text.len;
}

const struct out_cell_set *out_cells_make(struct out_cells *c, uint32_t slot,
					  const struct t4_dec_domain *dm)
{
	struct out_cell_set *s = &c->slot[slot % OUT_CELL_SLOTS];

	s->text.len = 0;
	s->n = 0;
	s->off[0] = 0;
	c->render(c->ud, dm, s);
	s->names_id = s->text.error ? 0 : dm->names_id;
	if (s->text.error) {
		t4_err(ENOMEM, "out of memory");
		return NULL;
	}
	return s;
}
