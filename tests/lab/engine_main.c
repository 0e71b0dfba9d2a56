/* SPDX-License-Identifier: MIT */
/* engine_main.c - tiny dispatcher for testing the traffic engine alone:
 * `engine_main test ARGS...` or `engine_main serve ARGS...`. */
#include <stdio.h>
#include <string.h>

#include "linklab/cli/cli.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "test"))
		return cmd_test(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "serve"))
		return cmd_serve(argc - 1, argv + 1);
	fprintf(stderr, "usage: engine_main test|serve [options]\n");
	return 2;
}
