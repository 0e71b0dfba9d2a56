/* SPDX-License-Identifier: MIT */
/* engine.h - the endpoint engine: linklab's netem-semantics model (emu.h)
 * on one interface's egress, for kernels without sch_netem. iptables and
 * ip6tables rules (`-j NFQUEUE --queue-num N --queue-bypass`, TCP to N + 1,
 * set up by enghook.h) send the interface's outgoing packets to the
 * queues; TCP on N + 1 comes whole (GSO) when the packets can leave whole
 * (pktout.h) and the dial draws nothing per packet (ENGINE_PER_SEGMENT:
 * loss, duplicate, reorder and corrupt are drawn per wire segment, where
 * netem on a GSO/TSO device draws them per GSO packet). This process reads each, draws
 * its fate (duplicate, loss, corrupt, the delay, jitter and reorder
 * schedule) and
 *  - a packet due at once and unchanged: verdict accept (the kernel sends
 *    its own skb);
 *  - a lost one: verdict drop;
 *  - a delayed, corrupted or duplicated one: verdict drop now (the sending
 *    socket gets its memory back, as netem's skb_orphan_partial) and the
 *    copy is sent at its time to send through pktout (a packet socket, or
 *    a raw socket with firewall mark ENGINE_MARK, which the rule skips).
 * If the process dies, the kernel unbinds the queues and --queue-bypass
 * lets packets pass unimpaired (fail open).
 * The dial's rate is the model's token bucket after the netem stage (the
 * kernel's "tbf root, netem child" layout, emu.h), counted on frames (IP
 * length + 14 per segment, as tbf sees them on an Ethernet device).
 * Under load, with a dial that delays every packet by 5 ms or more,
 * arrivals are read in batches at most 1 ms apart and stamped with the
 * middle of that time (engine.c). */
#ifndef LINKLAB_ENGINE_H
#define LINKLAB_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"

/* The dial fields drawn per packet: with any of them TCP is queued as
 * wire segments (no NFQA_CFG_F_GSO), so the probability applies to each
 * segment on the wire. */
#define ENGINE_PER_SEGMENT (IMP_LOSS | IMP_LOSS_STATE | IMP_LOSS_GE | IMP_DUP | \
			    IMP_REORDER | IMP_CORRUPT)

#define ENGINE_MARK 0x4c4c0000u       /* fwmark of re-sent packets */
#define ENGINE_MARK_MASK 0xffff0000u

struct engine_opts {
	const char *dev;         /* interface (the sends are bound to it) */
	uint16_t queue;          /* netfilter queue number (all but TCP) */
	bool tcp_queue;          /* also queue + 1 (TCP; GSO packets whole) */
	bool no_gso;             /* queue + 1 without NFQA_CFG_F_GSO */
	const struct impair *dial;   /* the dial without its scope (dst, dport) */
	const char *stat_path;   /* counters file (JSON), rewritten every 250 ms */
	int rt_priority;         /* SCHED_FIFO priority 1..99 (best effort), 0 = none */
	int ready_fd;            /* gets "ok PID\n" once bound, or "error: MSG\n";
				  * then closed; -1 = none */
};

/* Run until SIGTERM/SIGINT. 0 on a clean stop; -EINVAL/-EOPNOTSUPP (the
 * dial, emu_config_build's message), -EPERM/-EBUSY/-EIO (queue, socket)
 * before ready; -EIO on a queue read failure later. */
int engine_run(const struct engine_opts *o, struct ll_err *err);

#endif
