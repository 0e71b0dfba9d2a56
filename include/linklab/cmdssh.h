/* SPDX-License-Identifier: MIT */
/* cmdssh.h - commands added by issue 5 (SSH peer and safety), registered in
 * src/cli.c. */
#ifndef LINKLAB_CMDSSH_H
#define LINKLAB_CMDSSH_H

/* `bench-ssh --peer HOST [-F FILE] [--dev IF] [--peer-dev IF] [-n N]`: N
 * rounds of one dial (tbf 50/60 Mbit/s alternately) applied to both peers -
 * A over netlink, B over the one persistent SSH session - each read back;
 * prints the mean milliseconds per round (make bench, "ssh" section;
 * src/cmd_bench_ssh.c). Restores both at the end. Exit 0, 1 on error, 2 on
 * bad usage. */
int cmd_bench_ssh(int argc, char **argv);

#endif
