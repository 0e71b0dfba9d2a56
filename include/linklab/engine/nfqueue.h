/* SPDX-License-Identifier: MIT */
/* nfqueue.h - one netfilter queue (libnetfilter_queue, nfnetlink_queue):
 * bind queue NUM in this network namespace, receive copies of the packets
 * an iptables NFQUEUE rule sends there, and give each its verdict. The only
 * user of libnetfilter_queue (scripts/check-layering.sh).
 *
 * Copy mode is the whole packet (up to 65535 bytes). Without the gso flag
 * the kernel segments GSO packets and completes partial checksums before
 * the copy (nfnetlink_queue.c nfqnl_build_packet_message), so every copy is
 * a wire-ready IP packet. With it (NFQA_CFG_F_GSO) a GSO packet comes whole
 * and a packet's L4 checksum may be left to the device: the callback's info
 * says so (NFQA_SKB_GSO, NFQA_SKB_CSUMNOTREADY). A packet longer than the
 * copy gets verdict accept at once (counted, nfqueue_truncated). Verdicts
 * may come in any order (by id). */
#ifndef LINKLAB_NFQUEUE_H
#define LINKLAB_NFQUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "linklab/base/err.h"

struct nfqueue;

#define NFQUEUE_CSUM 1u   /* info: L4 checksum left to the device (NFQA_SKB_CSUMNOTREADY) */
#define NFQUEUE_GSO 2u    /* info: a GSO packet, longer than the MTU (NFQA_SKB_GSO) */

/* Called for each queued packet: its queue and id (for nfqueue_verdict),
 * the IP packet (data, len bytes; valid during the call only), the
 * kernel's NFQA_SKB_* info bits. */
typedef void (*nfqueue_cb)(void *arg, struct nfqueue *q, uint32_t id, unsigned char *data,
			   uint32_t len, uint32_t info);

/* Bind queue num (0..65535) with at most maxlen packets waiting for a
 * verdict in the kernel; gso: GSO packets whole (NFQA_CFG_F_GSO). -EPERM (no CAP_NET_ADMIN), -EBUSY (another process
 * holds the queue), -EIO; err says which. */
int nfqueue_open(uint16_t num, uint32_t maxlen, bool gso, nfqueue_cb cb, void *arg,
		 struct nfqueue **out, struct ll_err *err);

/* The socket to poll (POLLIN). */
int nfqueue_fd(const struct nfqueue *q);

/* Read and dispatch what is waiting, at most max_reads socket reads, without
 * blocking. Returns the number of reads done (0: nothing waiting), or -EIO.
 * A receive-buffer overrun (ENOBUFS: the kernel dropped messages) is counted
 * in *overruns and is not an error. */
int nfqueue_read(struct nfqueue *q, int max_reads, uint64_t *overruns,
		 struct ll_err *err);

/* Verdict for packet id: accept (the kernel sends it on) or drop. 0 or
 * -errno. */
int nfqueue_verdict(struct nfqueue *q, uint32_t id, bool accept);

/* One verdict for every packet still waiting with an id up to id
 * (nfq_set_verdict_batch): after a read, the ones not yet decided. */
int nfqueue_verdict_upto(struct nfqueue *q, uint32_t id, bool accept);

/* Packets passed on unchanged because the copy was short. */
uint64_t nfqueue_truncated(const struct nfqueue *q);

/* Unbind and free (NULL is fine). Packets still waiting are dropped by the
 * kernel; with --queue-bypass new ones pass. */
void nfqueue_close(struct nfqueue *q);

/* The kernel's counters of queue num in this namespace
 * (/proc/net/netfilter/nfnetlink_queue): packets dropped because the queue
 * was full, and because the socket buffer was full. -ENOENT when the queue
 * is not bound. */
int nfqueue_kstats(uint16_t num, uint64_t *queue_dropped, uint64_t *user_dropped);

#endif
