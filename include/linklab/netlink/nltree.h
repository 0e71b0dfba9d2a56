/* SPDX-License-Identifier: MIT */
/* nltree.h - the whole tc state of one interface over rtnetlink: every qdisc
 * (root, children, multi-queue children, ingress/clsact), every class and
 * every filter, each kept as its tcmsg numbers, kind and raw TCA_OPTIONS.
 * Used to journal what was on an interface before linklab changed it, put it
 * back exactly and prove that by reading it back and comparing.
 *
 * Replay follows the kernel's own rules (net/sched/sch_htb.c htb_init: the
 * dumped TCA_HTB_INIT version 0x30011 is written as 3; cls_u32.c
 * u32_change: dumped TCA_U32_FLAGS carry the kernel's NOT_IN_HW bit, which
 * a request may not, and TCA_U32_PCNT counters are dropped; act_mirred: the
 * action index is left for the kernel to pick). Comparison ignores counters
 * (TCA_STATS*, htb direct_pkts, u32 PCNT, action stats and timestamps).
 */
#ifndef LINKLAB_NLTREE_H
#define LINKLAB_NLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"

struct nl_sock;

#define NLTREE_MAX 48           /* objects per interface */
#define NLTREE_OPTS_MAX 1024    /* raw TCA_OPTIONS bytes per object */

enum nltree_type { NLT_QDISC = 'q', NLT_CLASS = 'c', NLT_FILTER = 'f' };

struct nltree_obj {
	char type;               /* enum nltree_type */
	char kind[16];
	uint32_t parent;         /* tcm_parent (filters: the block asked for) */
	uint32_t handle;         /* tcm_handle (class: classid) */
	uint32_t info;           /* filters: prio << 16 | protocol */
	uint32_t chain;          /* filters: TCA_CHAIN */
	uint16_t optlen;
	unsigned char opts[NLTREE_OPTS_MAX];
};

struct nltree {
	int n;
	/* why the tree cannot be replayed faithfully even though its kinds are
	 * known ("" = nothing): a size table, a shared block, an overflow */
	char bad[160];
	struct nltree_obj o[NLTREE_MAX];
};

/* Dump every qdisc, class and filter of ifindex into t (filters per qdisc,
 * per htb class, ingress ffff:, clsact ffff:fff2/fff3). 0 or -errno. */
int nltree_dump(struct nl_sock *sk, int ifindex, struct nltree *t,
		struct ll_err *err);

/* Can every part of t be re-created faithfully? Known: qdiscs pfifo,
 * bfifo, pfifo_head_drop, pfifo_fast, noqueue, mq, tbf, htb, ingress,
 * clsact; htb classes (and the implicit classes of tbf/mq/ingress/clsact);
 * u32 filters with mirred actions. 0, or -ENOTSUP with err naming the first
 * part that cannot (e.g. "filter bpf parent ffff:fff3 prio 49152"). */
int nltree_check(const struct nltree *t, struct ll_err *err);

/* --force: drop from t every object nltree_check would refuse (dropped
 * names them, "; "-separated), so the rest is restored and verified. */
void nltree_drop_unknown(struct nltree *t, char *dropped, size_t len);

/* Compare two trees ignoring counters. 0 if equal, else 1 with why
 * ("qdisc pfifo 12: parent 1:2 missing", "... differs"). */
int nltree_diff(const struct nltree *want, const struct nltree *got,
		char *why, size_t len);

/* Put t back on ifindex: delete the root and any ingress/clsact qdisc
 * there now, re-create every qdisc, class and filter of t parents first,
 * then read back and compare. 0 only when the read-back equals t;
 * -EIO "... did not come back exactly: WHY", or the kernel's error. */
int nltree_restore(struct nl_sock *sk, int ifindex, const char *dev,
		   const struct nltree *t, struct ll_err *err);

/* "qdisc htb 1: root", "class htb 1:10 parent 1:1", "filter u32 parent 1:
 * prio 1 handle 800::800" into buf. */
const char *nltree_describe(const struct nltree_obj *o, char *buf, size_t len);

/* The root qdisc of t (NULL if none). */
const struct nltree_obj *nltree_root(const struct nltree *t);

#endif
