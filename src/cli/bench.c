/* SPDX-License-Identifier: MIT */
/* bench.c - build/linklab-bench (`make bench`): `linklab-bench apply|ssh|udp|tcpzc
 * [options]`, the speed probes scripts/bench.sh times against tc and
 * one ssh process per command. Kept out of the shipped binary. */
#include <stdio.h>
#include <string.h>

#include "linklab/cli/bench.h"
#include "linklab/cli/prompt.h"
#include "linklab/remote/ssh.h"

int main(int argc, char **argv)
{
	int help = argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"));

	ssh_set_default_prompt(prompt_tty, NULL);
	if (argc >= 2 && !strcmp(argv[1], "apply"))
		return cmd_bench_apply(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "ssh"))
		return cmd_bench_ssh(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "udp"))
		return cmd_bench_udp(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "tcpzc"))
		return cmd_bench_tcpzc(argc - 1, argv + 1);
	fprintf(help ? stdout : stderr,
		"usage: linklab-bench apply --dev IF [-n N]\n"
		"       linklab-bench ssh --peer HOST [-F FILE] [--dev IF] [--peer-dev IF] [-n N]\n"
		"       linklab-bench udp [-t SEC] [-l LEN]   (loopback UDP GSO/GRO ceiling)\n"
		"       linklab-bench tcpzc [-t SEC] [-l KIB] (loopback TCP: send() vs MSG_ZEROCOPY)\n"
		"(make bench, scripts/bench.sh: mean time per apply + read back)\n");
	return help ? 0 : 2;
}
