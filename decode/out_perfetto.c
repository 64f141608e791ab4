/* out_perfetto.c - `decode -f perfetto`: placeholder until the Perfetto
 * writer lands. */
#include "out.h"
#include "../util/util.h"

#include <errno.h>

static int pf_init(struct t4_output *x)
{
	(void)x;
	return t4_err(ENOSYS, "the perfetto format is not built yet");
}

const struct out_backend out_perfetto = {
	.name = "perfetto",
	.init = pf_init,
};
