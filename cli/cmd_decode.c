/* cmd_decode.c - `t410trace decode`: not available yet (see ROADMAP). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int cmd_decode(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: t410trace decode FILE\n\n"
		       "Aligns every clock domain of a log on the reference clock and\n"
		       "prints the timeline. Not available yet in this version: use\n"
		       "'t410trace info FILE' to inspect a log.\n");
		return 0;
	}
	fprintf(stderr, "t410trace decode: not available yet in this version "
			"(use 't410trace info FILE')\n");
	return 2;
}
