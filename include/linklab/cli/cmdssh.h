/* SPDX-License-Identifier: MIT */
/* cmdssh.h - commands added by issue 5 (SSH peer and safety), registered in
 * src/cli/cli.c. */
#ifndef LINKLAB_CMDSSH_H
#define LINKLAB_CMDSSH_H

/* `bench-ssh --peer HOST [-F FILE] [--dev IF] [--peer-dev IF] [-n N]`: N
 * rounds of one dial (tbf 50/60 Mbit/s alternately) applied to both peers -
 * A over netlink, B over the one persistent SSH session - each read back;
 * prints the mean milliseconds per round (make bench, "ssh" section;
 * src/cli/cmd_bench_ssh.c). Restores both at the end. Exit 0, 1 on error, 2 on
 * bad usage. */
int cmd_bench_ssh(int argc, char **argv);

/* `offload [peer options] [--local|--remote] [tso|gso|gro|all on|off]...
 * [--restore]`: show the offloads of --dev (A) and --peer-dev (B), switch
 * them (journalled), or restore the originals (src/cli/cmd_tune.c). */
int cmd_offload(int argc, char **argv);

/* `sysctl [peer options] [--local|--remote] [NAME=VALUE]... [--restore]`:
 * show, set (journalled) or restore the six TCP sysctls of hosttune.h on
 * both peers (src/cli/cmd_tune.c). */
int cmd_sysctl(int argc, char **argv);

#endif
