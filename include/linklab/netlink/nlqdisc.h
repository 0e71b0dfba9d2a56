/* SPDX-License-Identifier: MIT */
/* nlqdisc.h - RTM_NEWQDISC / RTM_DELQDISC / RTM_GETQDISC messages for tbf and
 * netem built with libnl's message API, parsing of qdisc dump messages, and
 * the send-and-wait-for-ack helper that reports the kernel's extended-ack
 * text. Only peer_local.c and the tests use this header (libnl stays behind
 * it).
 *
 * Wire layout follows iproute2 6.1 tc/q_tbf.c and tc/q_netem.c byte for byte
 * (checked against captures in tests/data/tc-*.hex), except that the netem
 * request also carries TCA_NETEM_LATENCY64/JITTER64 (exact ns; kernel >= 4.15
 * prefers them over the 64 ns tick fields) and the dup correlation, which tc
 * 6.1 silently drops. netem's TCA_OPTIONS is a struct tc_netem_qopt followed
 * by netem attributes (kernel sch_netem.c parse_attr), not a plain nest.
 */
#ifndef LINKLAB_NLQDISC_H
#define LINKLAB_NLQDISC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"
#include "linklab/model/qdisc.h"

struct nl_msg;
struct nl_sock;
struct nlmsghdr;

/* netlink flags of tc's verbs (tc/tc_qdisc.c): add = CREATE|EXCL,
 * replace = CREATE|REPLACE, change = 0. */
enum nlqdisc_verb {
	NLQ_ADD = 0x600,
	NLQ_REPLACE = 0x500,
	NLQ_CHANGE = 0,
};

/* Where a qdisc goes: ifindex, parent (TC_H_ROOT = 0xffffffff for root, or
 * e.g. 0x00010001 for 1:1), handle (0x00010000 for 1:, 0 = kernel picks). */
struct nlqdisc_target {
	int ifindex;
	uint32_t parent;
	uint32_t handle;
	int verb;               /* enum nlqdisc_verb */
};

/* Start a tc netlink request of type RTM_NEW/DEL{QDISC,TCLASS,TFILTER}:
 * nlmsghdr with NLM_F_REQUEST | NLM_F_ACK | flags, a struct tcmsg (ifindex,
 * handle, parent, info = prio << 16 | protocol for filters) and TCA_KIND
 * when kind is non-NULL, in a buffer of size bytes. -ENOMEM on failure. */
int nlqdisc_msg_start(int type, int flags, int ifindex, uint32_t handle,
		      uint32_t parent, uint32_t info, const char *kind,
		      size_t size, struct nl_msg **out, struct ll_err *err);

/* Max raw TCA_OPTIONS bytes kept for a journalled original qdisc. */
#define NLQDISC_OPTS_MAX 2048

/* The root qdisc as found on a device, with its raw TCA_OPTIONS payload so a
 * non-default original can be replayed. */
struct nlqdisc_root {
	char kind[16];
	uint32_t handle;
	bool found;
	size_t optlen;
	unsigned char opts[NLQDISC_OPTS_MAX];
};

/* PSCHED ticks per microsecond as tc computes it from /proc/net/psched
 * (tc/tc_core.c tc_core_init; 15.625 on every current kernel = 64 ns). */
double nlqdisc_tick_in_usec(void);

/* tc_core.c tc_calc_xmittime: ticks to send size bytes at rate_Bps (bytes/s),
 * whole microseconds as tc computes them. */
uint32_t nlqdisc_xmittime(uint64_t rate_Bps, uint32_t size);

/* Build RTM_NEWQDISC "tbf" for p (p->tbf must be set): TCA_TBF_PARMS (rate
 * u32 bytes/s saturated at ~0, buffer in ticks, limit bytes, cell_log 3,
 * linklayer ethernet, cell_align -1), TCA_TBF_BURST (bytes), TCA_TBF_RATE64
 * when rate >= 2^32 bytes/s, TCA_TBF_RTAB (256 x u32). *out is freed with
 * nlmsg_free. -EINVAL (bad plan) or -ENOMEM. */
int nlqdisc_build_tbf(const struct nlqdisc_target *t,
		      const struct impair_plan *p, struct nl_msg **out,
		      struct ll_err *err);

/* Build RTM_NEWQDISC "netem": qopt (latency/jitter in ticks, limit packets,
 * loss/duplicate u32 fractions, gap), then TCA_NETEM_CORR if any correlation
 * is non-zero, REORDER if reorder, CORRUPT if corrupt, LATENCY64/JITTER64
 * (ns) if non-zero. explicit_zero: send CORR/REORDER/CORRUPT even when zero,
 * so a "change" of an existing netem clears what the new dial omits (the
 * kernel keeps attributes that are absent on change). */
int nlqdisc_build_netem(const struct nlqdisc_target *t,
			const struct impair_plan *p, bool explicit_zero,
			struct nl_msg **out, struct ll_err *err);

/* Build RTM_NEWQDISC of any kind with opts copied verbatim as TCA_OPTIONS
 * (replay of a journalled original). optlen may be 0 (no TCA_OPTIONS). */
int nlqdisc_build_raw(const struct nlqdisc_target *t, const char *kind,
		      const void *opts, size_t optlen, struct nl_msg **out,
		      struct ll_err *err);

/* Build RTM_DELQDISC for parent/handle of t (verb ignored). */
int nlqdisc_build_del(const struct nlqdisc_target *t, struct nl_msg **out,
		      struct ll_err *err);

/* Parse one RTM_NEWQDISC message (from a dump) into q: kind, handle, parent,
 * counters (TCA_STATS2, else TCA_STATS), tbf rate (bit/s, RATE64 honoured),
 * burst (bytes: TCA_TBF_BURST, else from the buffer ticks as tc prints it),
 * limit; netem delay/jitter (ns: LATENCY64/JITTER64, else ticks x 64 ns),
 * loss/duplicate/gap/limit, CORR, REORDER, CORRUPT. *ifindex gets the device
 * index; root (may be NULL) gets kind/handle/raw options. -EINVAL on a
 * malformed message. */
int nlqdisc_parse(const struct nlmsghdr *nlh, struct qdisc_info *q,
		  int *ifindex, struct nlqdisc_root *root, struct ll_err *err);

/* Map a failed request to one line and an errno code. errnum is positive.
 * ENOENT for kind netem -> -ENOTSUP "this kernel has no netem
 * (CONFIG_NET_SCH_NETEM); try modprobe sch_netem"; EPERM -> "needs root or
 * CAP_NET_ADMIN"; ENODEV -> "no such interface"; others strerror, plus the
 * kernel's extended-ack text when given. Returns the code. */
int nlqdisc_map_error(int errnum, const char *what, const char *kind,
		      const char *extack, struct ll_err *err);

/* Send msg on sk (NETLINK_EXT_ACK enabled), wait for the ack and map a
 * failure with nlqdisc_map_error (what: "replace tbf on veth0"). Does not
 * free msg. 0 or negative errno. */
int nlqdisc_talk(struct nl_sock *sk, struct nl_msg *msg, const char *what,
		 const char *kind, struct ll_err *err);

/* Send any request msg on sk and wait for its ack (or the end of a dump),
 * handing every reply message to valid(msg, arg) (may be NULL; return
 * NL_OK). Errors are mapped as in nlqdisc_talk. Does not free msg. */
int nlqdisc_request(struct nl_sock *sk, struct nl_msg *msg,
		    int (*valid)(struct nl_msg *, void *), void *arg,
		    const char *what, struct ll_err *err);

/* Dump the qdiscs of ifindex into st (root first), and the root's raw
 * options into root (may be NULL). 0, or negative errno (nothing valid in
 * st then). */
int nlqdisc_dump(struct nl_sock *sk, int ifindex, struct qdisc_state *st,
		 struct nlqdisc_root *root, struct ll_err *err);

/* Does this kernel accept a netem qdisc? A netem root on lo in a private
 * network namespace of a helper thread (unshare(CLONE_NEWNET): nothing real
 * touched). 1 yes, 0 no ("unknown qdisc kind", ENOENT), negative errno when
 * it cannot tell (no privilege). */
int nlqdisc_has_netem(void);

#endif
