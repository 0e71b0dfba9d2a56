/* SPDX-License-Identifier: MIT */
/* flowfilter.h - the netlink messages for ingress shaping through an IFB
 * device and for per-flow scope, built with libnl's message API byte for
 * byte as iproute2 6.1 tc sends them (tests/data/tc-{ingress,filter-*,htb*}
 * .hex), plus creating/removing the IFB link. Only peer_local.c and the tests
 * use it (libnl stays behind it).
 *
 * Ingress (tcconfig's recipe, man tc-mirred "Use IFB"): ingress qdisc ffff:
 * on the device, a u32 match-all filter (prio 1, handle 800::800, protocol
 * all) whose mirred action redirects to the IFB device's egress, and the
 * plan installed on the IFB device.
 * Per-flow scope: root htb 1: default 2; class 1:1 carries the rate (and a
 * netem 10: under it); class 1:2 is the default, "unshaped" at 100 Gbit/s;
 * u32 filters (added after a flush, no fixed handle: u32 hash tables are
 * shared between prios; prio 1 protocol ip, prio 2 protocol ipv6)
 * send packets to a destination prefix and/or TCP/UDP port (tc "match ip
 * dport": offset 22, IP header without options; "match ip6 dport": offset
 * 42, no extension headers) to 1:1. A port-only scope gets both filters.
 */
#ifndef LINKLAB_FLOWFILTER_H
#define LINKLAB_FLOWFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/model/qdisc.h"

struct nl_msg;
struct nl_sock;

#define FLOWFILTER_U32_HANDLE 0x80000800u         /* 800::800 */

/* RTM_NEWQDISC ingress (parent ffff:fff1, handle ffff:) with flags
 * (NLM_F_CREATE|NLM_F_REPLACE for "tc qdisc replace"). */
int flowfilter_build_ingress(int ifindex, int flags, struct nl_msg **out,
		     struct ll_err *err);

/* RTM_NEWTFILTER u32 on parent ffff:, protocol all, prio 1, handle 800::800:
 * match u32 0 0, action mirred egress redirect to ifb_ifindex (stolen). */
int flowfilter_build_mirred(int ifindex, int ifb_ifindex, struct nl_msg **out,
		    struct ll_err *err);

/* RTM_NEWTFILTER u32 ("tc filter add") on parent (e.g. 1:), protocol ip,
 * prio 1, kernel-chosen handle, flowid classid: keys "ip dst addr/plen" (addr: IPv4 in network
 * order, plen 0 = no key) and "ip dport dport 0xffff" (0 = no key). At least
 * one key. -EINVAL otherwise. */
int flowfilter_build_flow(int ifindex, uint32_t parent, uint32_t classid,
		  const uint8_t addr[4], unsigned plen, uint16_t dport,
		  struct nl_msg **out, struct ll_err *err);

/* The IPv6 twin: protocol ipv6, prio 2, keys "ip6 dst addr/plen" (one per
 * 32-bit word, offsets 24..36) and "ip6 dport" (offset 42: no extension
 * headers). */
int flowfilter_build_flow6(int ifindex, uint32_t parent, uint32_t classid,
		   const uint8_t addr[16], unsigned plen, uint16_t dport,
		   struct nl_msg **out, struct ll_err *err);

/* RTM_DELTFILTER of every filter on parent (prio 0: "tc filter del dev X
 * parent 1:"), so a new scope starts from no filter. */
int flowfilter_build_flow_flush(int ifindex, uint32_t parent, struct nl_msg **out,
			struct ll_err *err);

/* RTM_NEWQDISC htb (r2q 10, version 3, default class defcls) at handle,
 * root, with "tc qdisc replace" flags. */
int flowfilter_build_htb(int ifindex, uint32_t handle, uint32_t defcls,
		 struct nl_msg **out, struct ll_err *err);

/* RTM_NEWTCLASS htb classid under parent: rate = ceil = rate_Bps (bytes/s;
 * RATE64/CEIL64 from 2^32), burst = cburst = burst bytes (0 -> tc's default
 * rate/HZ + 1600), mtu 1600 rate tables as tc. hz: kernel HZ for the
 * default burst. */
int flowfilter_build_htb_class(int ifindex, uint32_t parent, uint32_t classid,
		       uint64_t rate_Bps, uint32_t burst, unsigned hz,
		       struct nl_msg **out, struct ll_err *err);


/* Create IFB device name (if absent) and set it up; *ifindex gets its index;
 * *created true if this call made it. 0 or -errno (err names the step). */
int flowfilter_ifb_ensure(struct nl_sock *sk, const char *name, int *ifindex,
		  bool *created, struct ll_err *err);

/* Delete the link name if it exists and is an IFB device (0 if absent). */
int flowfilter_ifb_delete(struct nl_sock *sk, const char *name, struct ll_err *err);

#endif
