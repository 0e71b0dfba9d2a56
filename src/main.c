/* SPDX-License-Identifier: MIT */
/* main.c - linklab entry point: everything happens in cli.c. */
#include "linklab/cli/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
