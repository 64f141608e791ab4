/* replay.c - runs a libFuzzer harness over saved inputs without libFuzzer,
 * so `make check` replays every harness's corpus and crash inputs (a fixed
 * crash stays fixed) with the project's own compiler and sanitizers.
 *
 *   replay_NAME DIR...   every regular file of each DIR, once, in name order
 *
 * Prints "replayed N inputs from DIR" per directory; a harness check that
 * fails aborts (as under libFuzzer), so the exit status says it all. A
 * missing directory is an error: a corpus that silently vanished would
 * replay nothing.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* The whole file, or NULL (not a regular file, or unreadable). */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	FILE *f;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fopen(path, "rb")))
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	*len = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	return buf;
}

static int replay_dir(const char *dir)
{
	struct dirent **names;
	char path[4096];
	int n = scandir(dir, &names, NULL, by_name), done = 0;

	if (n < 0) {
		fprintf(stderr, "replay: %s: cannot list it\n", dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		size_t len = 0;
		uint8_t *buf;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		free(names[i]);
		if (!(buf = slurp(path, &len)))
			continue;
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		done++;
	}
	free(names);
	printf("replayed %d inputs from %s\n", done, dir);
	return done;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (replay_dir(argv[i]) < 0)
			rc = 1;
	return rc;
}
