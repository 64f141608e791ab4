/* fuzz_live.c - libFuzzer harness for what `t410trace top` reads from a
 * recorder's socket: the live snapshot's text (live/live_text.c
 * t4_live_snap_parse), then what top and the metrics endpoint make of a
 * snapshot that parsed (live/view.c rates, live/prom.c exposition).
 *
 * Input: the text itself. Checks: parsing returns 0 or a negative errno
 * with a one-line message; a snapshot that parsed writes back to a text
 * that parses to the same snapshot (names and totals, byte for byte), and
 * twice through the view (the second as the first's successor) gives rows
 * and an exposition whose every line ends with a newline and holds no
 * control byte (label values are escaped).
 */
#include "fuzz_common.h"
#include "live/live.h"

#include <stdint.h>

#define MAX_TEXT (1u << 20)

static void same_snap(const struct t4_live_snap *a, const struct t4_live_snap *b)
{
	FUZZ_CHECK(a->n_domains == b->n_domains && a->triggers == b->triggers &&
		   !strcmp(a->host, b->host) && !strcmp(a->phase, b->phase),
		   "the text did not round-trip");
	for (size_t i = 0; i < a->n_domains; i++) {
		const struct t4_live_domain *x = &a->doms[i], *y = &b->doms[i];
		FUZZ_CHECK(x->n_events == y->n_events && !strcmp(x->name, y->name) &&
			   !strcmp(x->pmu, y->pmu) && x->last_ns == y->last_ns,
			   "domain %zu did not round-trip", i);
		for (uint32_t k = 0; k < x->n_events; k++)
			FUZZ_CHECK(x->ev[k].total == y->ev[k].total &&
				   !strcmp(x->ev[k].name, y->ev[k].name),
				   "event %u of domain %zu did not round-trip", k, i);
	}
}

static void check_exposition(const char *buf, size_t len)
{
	FUZZ_CHECK(len == 0 || buf[len - 1] == '\n', "the exposition ends mid-line");
	for (size_t i = 0; i < len; i++)
		FUZZ_CHECK((unsigned char)buf[i] >= 0x20 || buf[i] == '\n',
			   "control byte 0x%02x at %zu of the exposition", (unsigned char)buf[i], i);
}

/* Through the view twice (s, then s again as a later snapshot). */
static void view_twice(const struct t4_live_snap *s, const char *text, size_t len)
{
	struct t4_live_view *v = NULL;
	const struct t4_live_row *rows;
	size_t n_rows;
	char *prom;
	size_t plen;

	if (t4_live_view_new(&v) < 0)
		return;
	for (int round = 0; round < 2; round++) {
		struct t4_live_snap again;
		if (t4_live_snap_parse(text, len, &again) < 0)
			break;
		again.now_ns += (uint64_t)round * 1000000000u;
		int rc = t4_live_view_update(v, &again, &rows, &n_rows);
		fuzz_check_rc(rc, "view");
		if (rc < 0) {
			t4_live_snap_free(&again);
			break;
		}
		rc = t4_live_prometheus(t4_live_view_snap(v), rows, n_rows, &prom, &plen);
		fuzz_check_rc(rc, "prometheus");
		if (rc == 0) {
			check_exposition(prom, plen);
			free(prom);
		}
	}
	(void)s;
	t4_live_view_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct t4_live_snap s, back;
	char *text;
	size_t tlen;
	int rc;

	if (len > MAX_TEXT)
		return 0;
	rc = t4_live_snap_parse((const char *)data, len, &s);
	fuzz_check_rc(rc, "parse");
	if (rc < 0)
		return 0;
	rc = t4_live_snap_text(&s, &text, &tlen);
	fuzz_check_rc(rc, "text");
	if (rc == 0) {
		rc = t4_live_snap_parse(text, tlen, &back);
		FUZZ_CHECK(rc == 0, "our own text does not parse: %s", t4_errmsg());
		same_snap(&s, &back);
		t4_live_snap_free(&back);
		view_twice(&s, text, tlen);
		free(text);
	}
	t4_live_snap_free(&s);
	return 0;
}
