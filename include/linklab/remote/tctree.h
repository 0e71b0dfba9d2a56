/* SPDX-License-Identifier: MIT */
/* tctree.h - the whole tc state of a peer's interface as the peer's own tc
 * prints it, and the tc commands that put it back (the remote backend's
 * journal; doc/remote-peer.md).
 *
 * A record is one JSON object, written by the peer's shell:
 *   {"version":2,"dev":D,"identity":{"ifindex":N,"mac":M,"cookie":C},
 *    "parts":[{"type":"tc","qdiscs":<tc -j -raw qdisc show>,
 *              "qdisc_text":[<tc -d -raw qdisc show lines>],
 *              "classes":[<tc -d -raw class show lines>],
 *              "filters":[{"parent":P,"list":<tc -j filter show parent P>}]}]}
 * (tc 6.1 prints classes only as text, and a tbf's peakrate only in the
 * text.) Commands are rebuilt from it for the kinds linklab knows: qdiscs
 * pfifo, bfifo, pfifo_head_drop, pfifo_fast, noqueue, mq, tbf (peakrate
 * too), htb, ingress, clsact; htb classes; u32 filters (match keys, flowid,
 * mirred actions). Sizes kept by the kernel in ticks (tbf burst and peak
 * mtu, htb burst/cburst) are found back exactly from the raw tick values
 * (tbf: kernel psched_l2t_ns; htb: tc_calc_xmittime). A rate tc prints
 * rounded ("1234Kbit": four or more digits with a unit) is ambiguous and
 * makes the record not faithfully rebuildable.
 */
#ifndef LINKLAB_TCTREE_H
#define LINKLAB_TCTREE_H

#include <stdbool.h>
#include <stddef.h>

#include "linklab/base/err.h"

/* Shell text that prints dev's record (above) on stdout; exits non-zero if
 * tc cannot read dev. dev must be a valid interface name. 0 or -ENOSPC. */
int tctree_record_cmd(const char *dev, char *out, size_t len);

/* One shell command (parts joined with &&) that puts record back on dev:
 * deletes the root and any ingress/clsact qdisc there, then re-creates
 * every qdisc, class and filter, parents first. -ENOTSUP with err naming
 * the part that cannot be rebuilt faithfully, -EINVAL for a record that is
 * not one, -ENOSPC. */
int tctree_restore_cmd(const char *dev, const char *record, char *out,
		       size_t len, struct ll_err *err);

/* apply --force: record without the parts tctree_restore_cmd would refuse
 * and without what hangs below a dropped qdisc or class (child qdiscs,
 * classes, filter blocks) (*out, malloc'd); dropped names the refused parts
 * ("; "-separated), also kept in the record as "lost". 0, -EINVAL (not a
 * record) or -ENOMEM. */
int tctree_strip(const char *record, char **out, char *dropped, size_t len);

/* The parts apply --force accepted losing, as tctree_strip named them in
 * the record's "lost" ("" if none). */
void tctree_lost(const char *record, char *out, size_t len);

/* Compare two records (the journalled one and a read-back), counters
 * ignored. 0 equal, 1 differ (why says the first difference), -EINVAL if
 * either is not a record. */
int tctree_diff(const char *want, const char *got, char *why, size_t len);

/* Shell text printing the SO_NETNS_COOKIE of the shell's network
 * namespace in decimal (kernel >= 5.14; needs python3 on the peer), nothing
 * when it cannot be read. */
#define TCTREE_COOKIE_SH \
	"python3 -c 'import socket,struct;print(struct.unpack(\"Q\",socket.socket().getsockopt(1,71,8))[0])' 2>/dev/null"

/* The netns cookie recorded in record's identity ("" if none: an older
 * record, or a peer without python3). */
void tctree_cookie(const char *record, char *out, size_t len);

/* ifindex and link address recorded in record ("" if none). 0 or -EINVAL. */
int tctree_identity(const char *record, int *ifindex, char *mac, size_t len);

/* Burst in bytes that the kernel's tbf turns into exactly ticks buffer
 * ticks at rate_Bps (psched_l2t_ns >> 6), searching up from near; 0 if
 * none. */
unsigned tctree_tbf_burst(unsigned long long rate_Bps, unsigned ticks,
			  unsigned near);

#endif
