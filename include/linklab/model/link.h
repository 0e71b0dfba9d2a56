/* SPDX-License-Identifier: MIT */
/* link.h - a peer's interfaces as the model holds them: name, state, MTU,
 * addresses, root qdisc kind, speed, and the link's counters. Filled by the
 * local backend (netlink) and the remote one (`ip -j`) alike. */
#ifndef LINKLAB_MODEL_LINK_H
#define LINKLAB_MODEL_LINK_H

#include <net/if.h>
#include <stdint.h>
#include <stdbool.h>

#define PEER_MAX_LINKS  64
#define PEER_MAX_ADDRS  8
#define PEER_MAX_QDISCS 8

struct link_info {
	char name[IF_NAMESIZE];
	int ifindex;
	bool up;                  /* IFF_UP */
	char state[16];           /* operstate: "UP", "DOWN", "UNKNOWN", ... */
	unsigned mtu;             /* bytes */
	int naddrs;
	char addrs[PEER_MAX_ADDRS][64];  /* "10.0.0.1/24", "fd00::1/64" */
	char qdisc[32];           /* root qdisc kind: "noqueue", "tbf", ... */
	uint64_t speed_mbps;      /* 0 = unknown */
};

struct link_list {
	int n;
	struct link_info l[PEER_MAX_LINKS];
};

/* A link's counters since it was created, as `ip -s link` shows them
 * (IFLA_STATS64: frames and bytes the device received / sent; the dropped
 * counts are the device's own, not its qdisc's). */
struct link_stats {
	uint64_t rx_packets, rx_bytes;
	uint64_t tx_packets, tx_bytes;
	uint64_t rx_dropped, tx_dropped;
};

#endif
