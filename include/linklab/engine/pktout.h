/* SPDX-License-Identifier: MIT */
/* pktout.h - the endpoint engine's way out: IP packets (IPv4 or IPv6, as
 * a netfilter queue hands them over) sent on one interface.
 *
 * On an Ethernet interface a packet goes out through a packet socket with
 * a virtio-net header (PACKET_VNET_HDR): a TCP GSO super-packet leaves as
 * one send and the device (or the kernel's GSO) cuts it into segments of
 * the path MTU (the route's MTU, else the interface's, less the IP and TCP
 * headers); a packet whose L4 checksum is not filled in yet
 * (CHECKSUM_PARTIAL) gets it from the device (VIRTIO_NET_HDR_F_NEEDS_CSUM).
 * The destination MAC address is the next hop's neighbour entry (rtnetlink
 * route and neighbour lookups, cached 1 s). Packets sent this way do not
 * pass netfilter again. Without a neighbour entry (yet), on a device that
 * is not Ethernet, or for a packet that cannot be described that way, the
 * packet goes through a raw IP socket with firewall mark ENGINE_MARK (the
 * kernel resolves the neighbour; the hook skips the mark), its checksum
 * completed here first; a GSO packet there is dropped (counted). */
#ifndef LINKLAB_PKTOUT_H
#define LINKLAB_PKTOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "linklab/base/err.h"

#define PKTOUT_HEADROOM 24u      /* bytes before a packet pktout may use */
#define PKTOUT_GSO 1u            /* a GSO super-packet (NFQA_SKB_GSO) */
#define PKTOUT_CSUM 2u           /* L4 checksum not filled in (NFQA_SKB_CSUMNOTREADY) */

struct pktout;

struct pktout_pkt {
	unsigned char *data;     /* the IP packet; PKTOUT_HEADROOM bytes before it are free */
	uint32_t len;
	uint32_t flags;          /* PKTOUT_GSO, PKTOUT_CSUM */
};

struct pktout_stats {
	uint64_t sent_packet;    /* sends through the packet socket */
	uint64_t sent_raw;       /* sends through the raw IP sockets */
	uint64_t errors;         /* refused by the kernel, or not sendable */
};

/* Open the sockets on dev (needs CAP_NET_RAW; the packet socket only on
 * an Ethernet device). -EPERM, -ENODEV, -EIO. */
int pktout_open(const char *dev, uint32_t mark, struct pktout **out, struct ll_err *err);

/* True when packets can leave through the packet socket (GSO and
 * checksum offload are possible). */
bool pktout_offload(const struct pktout *p);

/* Send n packets (in order). Errors are counted, not returned. */
void pktout_send(struct pktout *p, struct pktout_pkt *pk, int n);

/* Complete the L4 checksum of a CHECKSUM_PARTIAL IPv4/IPv6 TCP or UDP
 * packet in place (the check field holds the pseudo-header sum, as the
 * kernel leaves it). False when the packet is not one of those. */
bool pktout_csum_complete(unsigned char *ip, uint32_t len);

/* The interface's MTU (bytes). */
uint32_t pktout_mtu(const struct pktout *p);

void pktout_get_stats(const struct pktout *p, struct pktout_stats *s);

void pktout_close(struct pktout *p);

#endif
