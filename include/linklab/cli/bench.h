/* SPDX-License-Identifier: MIT */
/* bench.h - the speed probes of `make bench` (scripts/bench.sh), a program
 * of their own (build/linklab-bench, src/cli/bench.c), not commands of the
 * shipped linklab binary. Each returns the process exit status: 0 ok, 1 on
 * error (message on stderr), 2 on bad usage. */
#ifndef LINKLAB_BENCH_H
#define LINKLAB_BENCH_H

/* `linklab-bench apply --dev IF [-n N]`: N rounds (default 200) of a tbf
 * (50/60 Mbit/s alternately) applied on IF in this namespace over netlink
 * and read back; prints the mean microseconds per round. Clears IF at the
 * end (src/cli/cmd_bench_apply.c). */
int cmd_bench_apply(int argc, char **argv);

/* `linklab-bench ssh --peer HOST [-F FILE] [--dev IF] [--peer-dev IF] [-n N]`:
 * N rounds (default 20) of one dial (tbf 50/60 Mbit/s alternately) applied
 * to both peers - A over netlink, B over the one persistent SSH session -
 * each read back; prints the mean milliseconds per round. Restores both at
 * the end (src/cli/cmd_bench_ssh.c). */
int cmd_bench_ssh(int argc, char **argv);

/* `linklab-bench udp [-t SEC] [-l LEN]`: the loopback UDP ceiling with GSO
 * sends and GRO receives and no protocol - the machine's limit the bench
 * prints beside linklab's UDP figure (src/cli/cmd_bench_udp.c). */
int cmd_bench_udp(int argc, char **argv);

/* `linklab-bench tcpzc [-t SEC] [-l KIB]`: TCP on loopback, plain send()
 * against send(MSG_ZEROCOPY) of KIB-KiB blocks (default 512), 3 alternating
 * rounds of SEC (default 2) each, receiver MSG_TRUNC; prints the median
 * Gbit/s and sender/receiver CPU s/GB of each (src/cli/cmd_bench_tcpzc.c). */
int cmd_bench_tcpzc(int argc, char **argv);

#endif
