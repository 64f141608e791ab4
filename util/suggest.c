/* suggest.c - "did you mean ...?" for every name a user types: PMUs,
 * events, tracepoints, subcommands, long options.
 *
 * The closest candidate within edit distance 2 (Levenshtein), else one
 * that is a prefix match either way (3 characters at least). O(n * l^2)
 * over the candidates: lists here are at most a few hundred names of 63
 * characters, and this runs once, on an error path.
 */
#include "util.h"

#include <stdbool.h>
#include <string.h>

#define NAME_MAX_LEN 64

static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[NAME_MAX_LEN + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0], tmp;
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			tmp = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = tmp;
		}
	}
	return row[lb];
}

const char *t4_suggest(const char *name, const void *src, size_t n, t4_name_at_fn at)
{
	const char *best = NULL, *prefix = NULL;
	unsigned best_d = 3;
	size_t len = strlen(name);

	for (size_t i = 0; i < n; i++) {
		const char *c = at(src, i);
		unsigned d;
		if (!c || !*c)
			continue;
		d = edit_distance(name, c);
		if (d < best_d) {
			best_d = d;
			best = c;
		}
		if (!prefix && len >= 3 &&
		    (!strncmp(c, name, len) || !strncmp(name, c, strlen(c))))
			prefix = c;
	}
	return best ? best : prefix;
}

const char *t4_strv_at(const void *src, size_t i)
{
	return ((const char *const *)src)[i];
}

const char *t4_did_you_mean(char *buf, size_t cap, const char *s)
{
	char safe[256];

	if (s) /* a name from a log or sysfs: shown as the lists show it */
		snprintf(buf, cap, " (did you mean %s?)",
			 t4_text(s, T4_TEXT_CONTROL, safe, sizeof(safe)));
	else if (cap)
		buf[0] = '\0';
	return buf;
}
