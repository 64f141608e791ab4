/* fuzz_drm.c - libFuzzer harness for the DRM fdinfo parser
 * (collector/drm.c, t4_drm_parse): the text of /proc/<pid>/fdinfo/<fd>.
 *
 * Checks: the parse succeeds with a driver, or fails with -ENODATA and a
 * one-line message; every value has a known key and a valid, unique name,
 * no capacity is 0, the first bad line is one line; and the values printed
 * back as a canonical fdinfo text parse to exactly the same values.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <stdint.h>

#include "collector/collector.h"

static void check_values(const struct t4_drm_info *in)
{
	FUZZ_CHECK(in->driver[0] && !strpbrk(in->driver, " \t\r\n"), "driver '%s'", in->driver);
	FUZZ_CHECK(in->n <= T4_DRM_MAX_VALUES, "%zu values", in->n);
	FUZZ_CHECK(!strchr(in->first_bad, '\n'), "first bad: %s", in->first_bad);
	FUZZ_CHECK(!in->bad_lines == !in->first_bad[0], "%u bad lines, first '%s'",
		   in->bad_lines, in->first_bad);
	for (size_t i = 0; i < in->n; i++) {
		const struct t4_drm_value *v = &in->v[i];
		FUZZ_CHECK(t4_drm_keydef(v->key), "key %d", v->key);
		FUZZ_CHECK(v->name[0] && strlen(v->name) < T4_DRM_NAME_MAX, "name '%s'", v->name);
		FUZZ_CHECK(strspn(v->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					   "0123456789_-.") == strlen(v->name),
			   "name '%s'", v->name);
		FUZZ_CHECK(v->key != T4_DRM_CAPACITY || v->v > 0, "capacity 0");
		FUZZ_CHECK(t4_drm_find(in, v->key, v->name) == v, "'%s' twice", v->name);
	}
}

/* The values as the kernel would print them (bytes, ns), parsed again. */
static void check_round_trip(const struct t4_drm_info *in)
{
	size_t cap = 256 + in->n * 96, len = 0;
	char *text = malloc(cap);
	struct t4_drm_info *back = malloc(sizeof(*back));

	FUZZ_CHECK(text && back, "out of memory");
	len += (size_t)snprintf(text + len, cap - len, "drm-driver: %s\n", in->driver);
	if (in->pdev[0])
		len += (size_t)snprintf(text + len, cap - len, "drm-pdev: %s\n", in->pdev);
	if (in->has_client_id)
		len += (size_t)snprintf(text + len, cap - len, "drm-client-id: %llu\n",
					(unsigned long long)in->client_id);
	for (size_t i = 0; i < in->n; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s%s:\t%llu\n",
					t4_drm_keydef(in->v[i].key)->prefix, in->v[i].name,
					(unsigned long long)in->v[i].v);
	FUZZ_CHECK(t4_drm_parse(text, "again", back) == 0, "%s", t4_errmsg());
	FUZZ_CHECK(back->bad_lines == 0, "%s", back->first_bad);
	FUZZ_CHECK(back->n == in->n && !strcmp(back->pdev, in->pdev) &&
			   back->has_client_id == in->has_client_id &&
			   back->client_id == in->client_id,
		   "printed back differently:\n%s", text);
	for (size_t i = 0; i < in->n; i++)
		FUZZ_CHECK(back->v[i].key == in->v[i].key && back->v[i].v == in->v[i].v &&
				   !strcmp(back->v[i].name, in->v[i].name),
			   "value %zu differs", i);
	free(back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct t4_drm_info *in;
	char *s;
	int rc;

	if (len > 16384)
		return 0;
	s = fuzz_str(data, len);
	in = malloc(sizeof(*in));
	FUZZ_CHECK(in, "out of memory");
	rc = t4_drm_parse(s, "fuzz", in);
	fuzz_check_rc(rc, "t4_drm_parse");
	FUZZ_CHECK(rc == 0 || rc == -ENODATA, "rc %d", rc);
	if (rc == 0) {
		check_values(in);
		check_round_trip(in);
	}
	free(in);
	free(s);
	return 0;
}
