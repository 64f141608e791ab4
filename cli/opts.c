/* opts.c - getopt_long with messages that name the argument the user got
 * wrong, for every subcommand.
 *
 * getopt_long reports a bad option through optopt and optind, and optind
 * does not point at the offending word when it sits inside a cluster of
 * short options ("-qx" or "-x,"), so messages built from argv[optind - 1]
 * named the previous word ("'-q'", or even an option's value). cli_getopt
 * remembers which word each call starts parsing; cli_opt_error names
 * that word's option: "-x" for a short one, "--name" for a long one, with
 * "did you mean --duration?" for a misspelled long option, and says
 * whether it is unknown, ambiguous, missing its value or given one it
 * does not take.
 */
#include "cli.h"
#include "util/util.h"

#include <string.h>

int cli_getopt(struct cli_getopt *g, int argc, char **argv, const char *shorts,
	       const struct option *longs)
{
	g->word = optind > 0 ? optind : 1;
	g->longs = longs;
	return getopt_long(argc, argv, shorts, longs, NULL);
}

static size_t n_longs(const struct option *longs)
{
	size_t n = 0;

	while (longs && longs[n].name)
		n++;
	return n;
}

static const char *long_name_at(const void *src, size_t i)
{
	return ((const struct option *)src)[i].name;
}

/* A long option word ("--name" or "--name=value"). */
static int long_error(const char *sub, const struct cli_getopt *g, const char *word, int c)
{
	char name[128], hint[96];
	size_t len = strcspn(word + 2, "="), n = n_longs(g->longs), matches = 0;
	const struct option *exact = NULL;

	snprintf(name, sizeof(name), "%.*s", (int)len, word + 2);
	for (size_t i = 0; i < n; i++) {
		if (strncmp(g->longs[i].name, name, len))
			continue;
		matches++;
		if (strlen(g->longs[i].name) == len)
			exact = &g->longs[i];
	}
	if (c == ':')
		return cli_usage_error(sub, "option '--%s' needs a value", name);
	if (exact && word[2 + len] == '=')
		return cli_usage_error(sub, "option '--%s' takes no value ('%s')", name, word);
	if (matches > 1)
		return cli_usage_error(sub, "option '--%s' is ambiguous (spell it out)", name);
	const char *s = t4_suggest(name, g->longs, n, long_name_at);
	if (s)
		snprintf(hint, sizeof(hint), " (did you mean --%s?)", s);
	else
		hint[0] = '\0';
	return cli_usage_error(sub, "unknown option '--%s'%s", name, hint);
}

int cli_opt_error(const char *sub, const struct cli_getopt *g, char **argv, int c)
{
	const char *word = argv[g->word];

	/* getopt_long permutes (no '+'): it stepped over operands such as
	 * FILE to the option, which is then the word before optind */
	if (word && word[0] != '-' && optind > 1)
		word = argv[optind - 1];

	if (word && !strncmp(word, "--", 2))
		return long_error(sub, g, word, c);
	if (c == ':')
		return cli_usage_error(sub, "option '-%c' needs a value", optopt);
	if (optopt > ' ' && optopt < 127 && word && strlen(word) == 2)
		return cli_usage_error(sub, "unknown option '-%c'", optopt);
	if (optopt > ' ' && optopt < 127)
		return cli_usage_error(sub, "unknown option '-%c' (in '%s')", optopt, word);
	return cli_usage_error(sub, "unknown option in '%s'", word ? word : "");
}

int cli_unknown_option(const char *sub, const char *word, const char *const *names, size_t n)
{
	char name[128], hint[96];
	const char *s = NULL;

	if (!strncmp(word, "--", 2) && word[2]) {
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(word + 2, "="), word + 2);
		s = t4_suggest(name, names, n, t4_strv_at);
	}
	if (s)
		snprintf(hint, sizeof(hint), " (did you mean --%s?)", s);
	else
		hint[0] = '\0';
	return cli_usage_error(sub, "unknown option '%s'%s", word, hint);
}

int cli_dir_arg(const char *sub, const char *opt, const char *arg, const char **out)
{
	if (!arg[0])
		return cli_usage_error(sub, "%s: an empty directory name", opt);
	*out = arg;
	return 0;
}
