/* SPDX-License-Identifier: MIT */
/* bridge.h - middle-box mode: forward frames between two interfaces of this
 * host (netns) and impair each direction.
 *
 * User engine (bridge_open/bridge_start): linklab's own impairment model
 * (emu.h) between two AF_PACKET sockets bound to IF_A and IF_B:
 *  - promiscuous through PACKET_ADD_MEMBERSHIP (PACKET_MR_PROMISC), which the
 *    kernel drops when the socket closes - even after kill -9 - so nothing is
 *    left to restore by hand;
 *  - PACKET_IGNORE_OUTGOING: a socket never reads frames leaving its port;
 *  - PACKET_VNET_HDR on both sockets: GSO super-packets (TSO from a veth peer,
 *    GRO on a NIC) and CHECKSUM_PARTIAL state cross unchanged, so no offload
 *    has to be turned off and restored (packet(7), virtio_net_hdr);
 *  - batched recvmmsg/sendmmsg, one thread per direction (A->B reads IF_A and
 *    writes IF_B), queued frames released at their time to send by a timerfd
 *    armed at the earliest one (CLOCK_MONOTONIC, absolute): no polling loop.
 * Kernel engine (bridge_kernel_up/down): a Linux bridge holding both ports,
 * the dials then go on the egress ports (A->B on IF_B, B->A on IF_A) through
 * the local peer's apply (netem/tbf over netlink). The link requests and
 * dumps go through the netlink layer (nllink.h); the qdiscs through peer.h.
 */
#ifndef LINKLAB_BRIDGE_H
#define LINKLAB_BRIDGE_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "linklab/bridge/emu.h"
#include "linklab/base/err.h"

enum bridge_dir { BRIDGE_A_TO_B = 0, BRIDGE_B_TO_A = 1 };

struct bridge_opts {
	char if_a[IF_NAMESIZE], if_b[IF_NAMESIZE];
	struct emu_config dir[2];       /* indexed by enum bridge_dir */
	unsigned batch;                 /* frames per recvmmsg/sendmmsg (0 -> 64) */
	int rt_priority;                /* SCHED_FIFO priority 1..99 of the
					 * forwarding threads (release on time on a
					 * busy host); 0 = normal scheduling */
	unsigned workers;               /* reading threads per direction, 1..2,
					 * each on its own member of a fanout group
					 * (a flow's frames to one of them); 0: 2
					 * when the process may use 2 or more
					 * CPUs, else 1 */
};

struct bridge_stats {
	struct emu_stats emu;           /* model counters (lost, dup, ...) */
	uint64_t rx_pkts, rx_bytes;     /* read from the ingress port */
	uint64_t tx_pkts, tx_bytes;     /* written to the egress port */
	uint64_t tx_errors;             /* sendmmsg refused (frame dropped) */
	uint64_t rx_truncated;          /* frames larger than the buffer */
	uint64_t gso_pkts;              /* of rx_pkts, GSO super-packets */
	uint64_t sock_drops;            /* kernel drops at the ingress socket
					 * (PACKET_STATISTICS tp_drops) */
	uint64_t wire_bytes;            /* bytes as segments on the wire
					 * (GSO expanded: what rate counts) */
};

struct bridge;

/* The reading threads per direction o asks for (opts.workers, 0 resolved
 * against the CPUs this process may run on: sched_getaffinity), 1..2. */
unsigned bridge_workers(const struct bridge_opts *o);

/* Open both sockets (needs CAP_NET_RAW), join promiscuous mode and build one
 * model per direction. -ENODEV (no such interface), -EPERM, -EINVAL (the
 * same interface twice, a bad model config); err says which. */
int bridge_open(const struct bridge_opts *o, struct bridge **out,
		struct ll_err *err);

/* Bytes the user engine of o holds at most: per direction its queue (limit
 * frames, 1000 when 0, each at most a 64 KiB GSO frame with its headers),
 * its receive buffers (batch frames of the same size) and the free
 * full-size buffers it keeps for reuse (128). */
uint64_t bridge_mem_bound(const struct bridge_opts *o);

/* Start the two forwarding threads. With rt_priority, -EPERM/-EINVAL when
 * SCHED_FIFO is refused (err says so; nothing started). */
int bridge_start(struct bridge *b, struct ll_err *err);

/* Stop forwarding (safe to call from any thread, not from a signal
 * handler), join the threads; queued frames are flushed out (sent) unless
 * discard is set. Idempotent. */
void bridge_stop(struct bridge *b, bool discard);

/* Snapshot of one direction's counters (any thread, while running too). */
void bridge_get_stats(struct bridge *b, enum bridge_dir d,
		      struct bridge_stats *s);

/* Swap direction dir's model to c (emu_reconfigure: queued frames keep
 * their time to send, counters stay) between two batches of the forwarding
 * thread; any thread, running or not. c->dist must outlive the bridge.
 * -EINVAL/-ENOMEM as emu_reconfigure (nothing changed); err names the
 * direction. */
int bridge_reconfigure(struct bridge *b, enum bridge_dir dir,
		       const struct emu_config *c, struct ll_err *err);

/* Stop if running, close the sockets (promiscuous mode ends), free. */
void bridge_close(struct bridge *b);

/* Does this kernel accept a netem qdisc? Asked in a private network
 * namespace of a helper thread (nothing real touched). 1 yes, 0 no ("unknown
 * qdisc kind"), negative errno when it cannot tell (no privilege). */
int bridge_kernel_has_netem(void);

/* Kernel engine: create bridge BR (up) and enslave IF_A and IF_B (both set
 * up). -EEXIST when BR exists, -ENODEV, -EPERM; err names the step and has
 * the kernel's text. On failure nothing is left behind. */
int bridge_kernel_up(const char *br, const char *if_a, const char *if_b,
		     struct ll_err *err);

/* Delete bridge BR (its ports are released, stay up). 0 if it is gone. */
int bridge_kernel_down(const char *br, struct ll_err *err);

/* bridge_kernel_up marks the device it creates with this IFLA_IFALIAS
 * prefix and its pid ("linklab bridge pid 1234"). */
#define BRIDGE_KERNEL_ALIAS "linklab bridge pid "

/* A kernel-engine bridge device whose process is dead (kill -9, crash): it
 * still joins the ports, with the dials on them. */
struct bridge_stale {
	char name[IF_NAMESIZE];
	int pid;                        /* the dead bridge process */
	char ports[2][IF_NAMESIZE];     /* its ports now */
	int nports;
};

/* Bridge devices of this network namespace that carry the mark and whose
 * pid is dead (bridge_pid_dead), at most max into out; *n the count. Read
 * with one link dump (nllink_list); nothing is changed. 0 or -errno
 * (err filled). */
int bridge_kernel_stale(struct bridge_stale *out, int max, int *n, struct ll_err *err);

/* What makes an interface a poor bridge port (bridge_port_info). */
struct bridge_port_info {
	bool loopback;                  /* lo: never a port */
	bool is_bridge;                 /* a Linux bridge itself: never a port */
	char master[IF_NAMESIZE];       /* "" or the bridge/bond it is a port of */
	char addr[64];                  /* "" or its first address that is not
					 * link-local (IPv4 or IPv6): a port has
					 * none, an address here carries traffic
					 * of its own (an SSH session perhaps) */
};

/* Read ifname's flags, master and addresses (nllink_get/nllink_addr).
 * 0, -ENODEV naming it, or -errno. */
int bridge_port_info(const char *ifname, struct bridge_port_info *pi, struct ll_err *err);

struct peer;                            /* peer.h */

/* Undo a stale bridge: each port's journalled original root qdisc back
 * (p->ops->clear on the local peer p: the dead bridge's dials go), then the
 * device deleted (its ports released, left up). 0 or the first -errno
 * (err filled); the device stays when a port could not be restored. */
int bridge_kernel_reap(struct peer *p, const struct bridge_stale *st, struct ll_err *err);

/* --- status of running bridges (for `show` and the console) ---------------
 * A running `linklab bridge` keeps one JSON file in journal_dir() named
 * "bridge-<netns inode>-<pid>.json": engine, ports, each direction's dial in
 * tc words and its counters, refreshed about once a second; removed at exit.
 * A file whose process is gone (kill -9) is skipped by bridge_status_list. */
struct bridge_status {
	int pid;
	char engine[8];                 /* "user" or "kernel" */
	char if_a[IF_NAMESIZE], if_b[IF_NAMESIZE];
	char dial[2][256];              /* [enum bridge_dir], impair_summary() */
	struct impair held[2];          /* the same dials as fields: written as
					 * "fields": {FIELD: VALUE} (impair_get
					 * of every set field), read back with
					 * impair_set */
	struct {
		uint64_t rx_pkts, tx_pkts, rx_bytes, tx_bytes;
		uint64_t lost, duplicated, corrupted, reordered, drops;
	} c[2];                         /* drops: limit + rate + socket */
	int64_t updated;                /* unix time, s */
};

/* A dial as a JSON object {FIELD: VALUE} of every set field, in
 * impair_fields[] order, values as impair_get prints them ("50ms", "1%").
 * NULL only when out of memory. */
struct cJSON *bridge_fields_json(const struct impair *d);

/* The reverse: d (cleared first) gets every member of o through impair_set
 * (numbers and booleans are taken as their text). Every bad field or value
 * adds its message to diag (may be NULL); -EINVAL if any, the good fields
 * are still set. o not an object (or NULL): an empty dial, 0. */
int bridge_fields_parse(const struct cJSON *o, struct impair *d, struct ll_diag *diag);

/* Write (atomically: temp file + rename) the status of this process. */
int bridge_status_write(const struct bridge_status *s, struct ll_err *err);
/* Remove this process's status file (no error if absent). */
void bridge_status_remove(int pid);
/* Is process pid gone (kill: ESRCH) or a zombie (/proc/PID/stat state Z:
 * killed -9, its parent has not reaped it yet)? Either way it serves
 * nothing: its control socket refuses connections. */
bool bridge_pid_dead(int pid);
/* Running bridges of this network namespace, at most max into out; *n gets
 * the count. The files of a bridge whose process is dead (bridge_pid_dead)
 * are removed (status and control socket) and it is not listed. 0 (also
 * when the directory does not exist) or -errno. */
int bridge_status_list(struct bridge_status *out, int max, int *n,
		       struct ll_err *err);

#endif
