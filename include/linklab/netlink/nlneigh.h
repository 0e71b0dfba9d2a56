/* SPDX-License-Identifier: MIT */
/* nlneigh.h - where a packet to an address goes next on this host
 * (rtnetlink RTM_GETROUTE, RTM_GETNEIGH; one request each, answered within
 * 200 ms or failed). */
#ifndef LINKLAB_NLNEIGH_H
#define LINKLAB_NLNEIGH_H

#include <stdint.h>

struct nlneigh;

/* A route socket, or NULL. */
struct nlneigh *nlneigh_open(void);
void nlneigh_close(struct nlneigh *p);

/* The next hop of dst (family AF_INET: 4 bytes, AF_INET6: 16) out of
 * ifindex: the route's gateway, else dst itself, into hop; the route's MTU
 * into *mtu (0: the route has none). 0, or -1 (no route, no answer). */
int nlneigh_route(struct nlneigh *p, int family, const unsigned char *dst, int ifindex,
		  unsigned char *hop, uint32_t *mtu);

/* The link-layer (Ethernet, 6 bytes) address of neighbour hop on ifindex
 * when the kernel holds a usable entry (reachable, stale, delay, probe,
 * permanent, noarp). 0, or -1 (none yet: the kernel resolves it on the
 * next packet it sends there itself). */
int nlneigh_mac(struct nlneigh *p, int family, const unsigned char *hop, int ifindex,
		unsigned char *mac);

#endif
