/* SPDX-License-Identifier: MIT */
/* qdisc.h - a qdisc tree as read back from a kernel (netlink dump or
 * `tc -j`), and its folding into dial terms (src/model/qdisc.c). */
#ifndef LINKLAB_MODEL_QDISC_H
#define LINKLAB_MODEL_QDISC_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/model/impair.h"
#include "linklab/model/link.h"

/* Rate of the default htb class when a dial is scoped to one flow: traffic
 * outside the scope is not shaped (100 Gbit/s). */
#define QDISC_UNSHAPED_BPS 100000000000ULL

/* One qdisc as read back from the kernel. */
struct qdisc_info {
	char kind[16];            /* "tbf", "netem", "noqueue", ... */
	uint32_t handle, parent;  /* TC_H values; parent TC_H_ROOT for root */
	/* counters (tc -s) */
	uint64_t bytes, packets;
	uint32_t drops, overlimits, backlog, qlen;
	/* tbf, read back */
	uint64_t rate;            /* bit/s */
	uint32_t burst;           /* bytes */
	uint32_t limit;           /* bytes (tbf) or packets (netem) */
	/* netem, read back */
	int64_t delay, jitter;    /* ns */
	uint32_t loss, duplicate, corrupt, reorder, gap;   /* u32 fractions */
	uint32_t delay_corr, loss_corr, dup_corr, corrupt_corr, reorder_corr;
	/* netem, read back (the distribution table is never dumped by the
	 * kernel) */
	bool ecn;
	uint8_t loss_model;       /* enum impair_loss_model */
	uint32_t gi[5];           /* kernel order p13 p31 p32 p14 p23 */
	uint32_t ge[4];           /* kernel p r h k1 (h, not 1-h) */
	uint64_t netem_rate;      /* bit/s, 0 = none */
	int32_t packet_overhead, cell_overhead;
	uint32_t cell_size;
	int64_t slot_min, slot_max;       /* ns */
	int32_t slot_packets, slot_bytes; /* 0 = unlimited */
	bool has_seed;
	uint64_t seed;
};

/* The qdisc tree on one interface, root first. */
struct qdisc_state {
	char dev[IF_NAMESIZE];
	int n;
	struct qdisc_info q[PEER_MAX_QDISCS];
	bool has_ingress;         /* an ingress/clsact qdisc (ffff:fff1) is
				   * there (not in q[]) */
	/* per-flow scope read back from linklab's u32 filter on 1: (htb
	 * root; the htb root's rate/burst are those of class 1:1) */
	bool scoped;
	uint8_t dst_plen;         /* 0 = any destination */
	uint8_t dst_addr[4];      /* IPv4, network order */
	uint16_t dport;           /* 0 = any port */
	uint8_t dst_family;       /* AF_INET / AF_INET6 when dst_plen > 0 */
	uint8_t dst6[16];         /* IPv6 prefix, network order */
};

/* Fold a read-back tree into a dial (what the kernel now holds, in dial
 * terms): tbf rate/burst/limit and the netem fields. Empty dial when the
 * root qdisc is a kernel default. */
void qdisc_state_to_impair(const struct qdisc_state *s, struct impair *d);

/* "tbf rate 50Mbit burst 6250b / netem delay 100ms loss 1%" or "noqueue". */
char *qdisc_state_summary(const struct qdisc_state *s, char *buf, size_t len);

/* Name of the IFB device linklab uses for dev: "llifb" + 8 hex digits of a
 * hash of the name (same on every host, so the remote lines agree). */
void qdisc_ifb_name(const char *dev, char *out, size_t len);

#endif
