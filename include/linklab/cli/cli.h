/* SPDX-License-Identifier: MIT */
/* cli.h - command dispatch. Each command lives in its own src/cmd_*.c and
 * returns the process exit status (0 ok, 1 failure, 2 usage error). Only
 * commands and the console print. */
#ifndef LINKLAB_CLI_H
#define LINKLAB_CLI_H

#include <stdio.h>

int cli_main(int argc, char **argv);
/* Print the usage line(s) of one command. */
void cli_print_usage(const char *cmd, FILE *f);

int cmd_console(int argc, char **argv);
int cmd_links(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_show(int argc, char **argv);
/* `engine --dev DEV --queue N --stat PATH [--ready-fd FD] DIAL`: the endpoint
 * engine process (hidden; `apply --engine user` starts it, cmd_engine.c). */
int cmd_engine(int argc, char **argv);
int cmd_clear(int argc, char **argv);
int cmd_test(int argc, char **argv);
int cmd_serve(int argc, char **argv);
/* `linklab rpm`: responsiveness under load (traffic/rpm.h); exit 0, 1 when
 * the run failed, 2 on bad input, 130 when interrupted. */
int cmd_rpm(int argc, char **argv);
/* `linklab verify`: exit 0 every row ok, 1 one is not, 2 bad input. */
int cmd_verify(int argc, char **argv);
/* `bridge IF_A IF_B`: middle-box mode in the foreground (cmd_bridge.c). */
int cmd_bridge(int argc, char **argv);
/* `bridge --status|--set|--attach`: the running bridge's control socket
 * (cmd_bridgectl.c); cmd_bridge hands over when one of these is given. */
int cmd_bridgectl(int argc, char **argv);
/* The --attach relay on the control socket of bridge process pid in this
 * network namespace: take the lease, print its STATE as one stdout line,
 * then copy stdin lines (requests) to the socket and its replies to stdout
 * until stdin ends (the lease ends, the bridge restores its dials and
 * closes: 0) or the bridge closes first (1, "the bridge (pid N) stopped" on
 * stderr). A refused lease or an unreachable socket: 1 with the bridge's
 * message on stderr. Used by `--attach` and by `bridge --stdin-lease` (on
 * its own socket, from a thread). */
int cmd_bridge_attach(int pid);

/* Run one test with already parsed options and print it (text like iperf3,
 * or the iperf3 -J document when json is non-zero). Returns the exit status
 * (0 ok, 1 failure). cmd_test() parses argv into a struct client_opts and calls
 * this; the --peer form calls it after starting the server over SSH. */
struct client_opts;
int cmd_test_run(const struct client_opts *o, int json);
int cmd_profile(int argc, char **argv);
/* `test` with --peer: start the server on B over SSH, then cmd_test. */
int cmd_test_peer(int argc, char **argv);
/* cmd_test's option checks only (argv as cmd_test's; nbad problems the
 * caller printed already count): every problem printed to stderr, returns
 * 0 none, 1 -h printed the usage, 2 problems. Nothing runs. */
int cmd_test_check(int argc, char **argv, int nbad);

/* `offload [peer options] [--local|--remote] [tso|gso|gro|all on|off]...
 * [--restore]`: show the offloads of --dev (A) and --peer-dev (B), switch
 * them (journalled), or restore the originals (src/cli/cmd_offload.c). */
int cmd_offload(int argc, char **argv);
/* `sysctl [peer options] [--local|--remote] [NAME=VALUE]... [--restore]`:
 * show, set (journalled) or restore the six TCP sysctls of hosttune.h on
 * both peers (src/cli/cmd_sysctl.c). */
int cmd_sysctl(int argc, char **argv);

#endif
