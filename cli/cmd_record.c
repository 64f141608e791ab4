/* cmd_record.c - placeholder while the subcommand is being written. */
#include "cli.h"

#include <stdio.h>

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "t410trace record: not available yet in this version\n");
	return 2;
}
