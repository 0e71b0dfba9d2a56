/* SPDX-License-Identifier: MIT */
/* tune.h - the host tuning commands `offload` and `sysctl` (src/cli/cmd_tune.c),
 * registered in src/cli/cli.c. Each returns the exit status: 0 ok, 1 failure,
 * 2 usage error. */
#ifndef LINKLAB_CLI_TUNE_H
#define LINKLAB_CLI_TUNE_H

/* `offload [peer options] [--local|--remote] [tso|gso|gro|all on|off]...
 * [--restore]`: show the offloads of --dev (A) and --peer-dev (B), switch
 * them (journalled), or restore the originals (src/cli/cmd_tune.c). */
int cmd_offload(int argc, char **argv);

/* `sysctl [peer options] [--local|--remote] [NAME=VALUE]... [--restore]`:
 * show, set (journalled) or restore the six TCP sysctls of hosttune.h on
 * both peers (src/cli/cmd_tune.c). */
int cmd_sysctl(int argc, char **argv);

#endif
