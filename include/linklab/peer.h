/* SPDX-License-Identifier: MIT */
/* peer.h - one table of operations on a peer (list links, read qdiscs, apply,
 * clear, start/stop the test server), implemented twice: local (netlink, in
 * peer_local.c) and remote (commands over the SSH session, in peer_remote.c).
 * Both fill the same structs, so a test can apply through either and compare.
 */
#ifndef LINKLAB_PEER_H
#define LINKLAB_PEER_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "linklab/err.h"
#include "linklab/impair.h"

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
 * counts are the device's own, not its qdisc's). Added by issue 7. */
struct link_stats {
	uint64_t rx_packets, rx_bytes;
	uint64_t tx_packets, tx_bytes;
	uint64_t rx_dropped, tx_dropped;
};

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
	/* netem, read back (added by issue 3; the distribution table is
	 * never dumped by the kernel) */
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
				   * there (added by issue 3; not in q[]) */
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

struct peer;

/* The control session (SSH) to a peer, as that peer sees it (added by issue
 * 5). */
struct peer_ctl {
	char client[64];          /* this host's address (the SSH client) */
	int client_port;
	char server[64];          /* the peer's address (sshd) */
	int server_port;
	char dev[IF_NAMESIZE];    /* the peer's interface whose route carries
				   * the session back to the client */
};

/* Safety settings of a remote peer (added by issue 5; --force,
 * --exclude-ssh, --revert-after). */
struct peer_safety {
	bool force;               /* allow 100 % loss on the interface that
				   * carries the session */
	bool exclude_ctl;         /* keep the session's own flow out of the
				   * impairment (u32 filter to an unshaped
				   * htb class; IPv4 sessions) */
	int revert_s;             /* commit-confirmed timer, 0 -> 30 s */
	bool hold;                /* console mode: while the session lives, a
				   * guard on the peer restores every
				   * journalled qdisc the moment the session
				   * dies (SIGHUP, kill, network); a normal
				   * close disarms it */
};

struct offload_state;     /* hosttune.h */
struct sysctl_state;

struct peer_ops {
	const char *name;   /* "local" or "ssh" */
	/* Interfaces with addresses and root qdisc kind. */
	int (*list_links)(struct peer *p, struct link_list *out,
			  struct ll_err *err);
	/* The interface whose route reaches addr (an IPv4/IPv6 literal). */
	int (*route_dev)(struct peer *p, const char *addr, char *dev,
			 size_t len, struct ll_err *err);
	/* Read the qdisc tree of dev. */
	int (*read_qdiscs)(struct peer *p, const char *dev,
			   struct qdisc_state *out, struct ll_err *err);
	/* Replace whatever is on dev by the plan for d (journalling the
	 * original first). All or nothing: on failure the original is put
	 * back. -ENOTSUP with a "modprobe sch_netem" hint when netem is needed
	 * and missing. */
	int (*apply)(struct peer *p, const char *dev, const struct impair *d,
		     struct ll_err *err);
	/* Restore the journalled original root qdisc of dev (no-op if linklab
	 * never touched it). */
	int (*clear)(struct peer *p, const char *dev, struct ll_err *err);
	/* Restore every interface that has a journal entry on this peer
	 * (after a crash or kill -9: `linklab clear --all`). May be NULL. */
	int (*clear_all)(struct peer *p, struct ll_err *err);
	/* Print the tc command lines apply would run (remote runs exactly
	 * these). lines: buffer of len bytes, one command per line. */
	int (*dry_run)(struct peer *p, const char *dev, const struct impair *d,
		       char *lines, size_t len, struct ll_err *err);
	/* Start a one-shot iperf3-compatible server (linklab serve if present,
	 * else iperf3 -s -1) on a free port; *port gets the port. */
	int (*server_start)(struct peer *p, int *port, struct ll_err *err);
	/* Stop the server started by server_start (no-op if it ended). */
	int (*server_stop)(struct peer *p, struct ll_err *err);
	/* Release everything (not restoring: call clear first). */
	void (*close)(struct peer *p);
	/* --- added by issue 5; NULL = not supported (the local peer) --- */
	/* The control session and the peer's interface that carries it. */
	int (*ctl_flow)(struct peer *p, struct peer_ctl *out, struct ll_err *err);
	/* Set force / exclude_ctl / revert_s for the following applies. */
	void (*set_safety)(struct peer *p, const struct peer_safety *s);
	/* Warning of the last apply ("" if none), e.g. "veth-b carries this SSH
	 * session: a heavy impairment may cut it". Valid until the next call. */
	const char *(*warning)(struct peer *p);
	/* For the console's loop: send an SSH keepalive if due; *next_s gets
	 * the seconds until the next is due. 0, or -EIO/-ENOTCONN when the
	 * session is gone (the peer's armed revert timers then restore it). */
	int (*keepalive)(struct peer *p, int *next_s, struct ll_err *err);
	/* The session's socket to add to poll() (POLLIN: call keepalive or
	 * any op; POLLHUP/POLLERR: session lost), -1 if none. */
	int (*poll_fd)(struct peer *p);
	/* NIC offloads and TCP sysctls (hosttune.h; added by issue 5): read,
	 * set (the original journalled on that peer first, read back),
	 * restore every journalled original. Local: ethtool ioctls and
	 * /proc/sys; remote: ethtool -k/-K and /proc/sys over SSH. */
	int (*offload_get)(struct peer *p, const char *dev,
			   struct offload_state *out, struct ll_err *err);
	int (*offload_set)(struct peer *p, const char *dev,
			   const struct offload_state *want, struct ll_err *err);
	int (*sysctl_get)(struct peer *p, struct sysctl_state *out,
			  struct ll_err *err);
	int (*sysctl_set)(struct peer *p, const char *name, const char *value,
			  struct ll_err *err);
	int (*tune_restore)(struct peer *p, struct ll_err *err);
	/* --- added by issue 7; NULL = not supported (the remote peer) --- */
	/* dev's link counters (struct link_stats). -ENODEV (no such
	 * interface), -EIO (netlink). */
	int (*link_stats)(struct peer *p, const char *dev, struct link_stats *out,
			  struct ll_err *err);
};

struct peer {
	const struct peer_ops *ops;
	char label[64];           /* "A (this host)", "B (peer-b)" */
	char host[256];           /* address for test traffic ("" = local) */
	void *priv;               /* backend state */
};

/* Local backend: netlink on this host (needs CAP_NET_ADMIN to change). */
int peer_local_open(struct peer *p, struct ll_err *err);

/* Options to reach a remote peer (filled by sshcfg_resolve from ssh -G). */
struct ssh_target;
/* Remote backend: one libssh2 session to the peer. */
int peer_remote_open(struct peer *p, const struct ssh_target *t,
		     struct ll_err *err);

#endif
