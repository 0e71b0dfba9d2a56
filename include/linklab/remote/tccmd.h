/* SPDX-License-Identifier: MIT */
/* tccmd.h - the tc command lines equivalent to a qdisc plan. The remote
 * backend runs exactly these over SSH, `linklab apply --dry-run` prints them.
 * Every word is shell-quoted, so hostile interface names ("a;b", "x$(id)")
 * cannot inject anything. */
#ifndef LINKLAB_TCCMD_H
#define LINKLAB_TCCMD_H

#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"

/* Quote one word for a POSIX shell (single quotes, ' as '\''), into out.
 * Returns 0, or -ENOSPC if out is too small. */
int tccmd_quote(const char *word, char *out, size_t len);

/* Command lines (one per line, '\n'-terminated) that install plan p on dev
 * with replace semantics: "tc qdisc replace dev 'veth0' root handle 1: tbf
 * rate 50000000bit burst 6250b limit 318750b" [+ netem child line].
 * Scoped plans (dst/dport): htb 1: default 2, classes 1:1 (rate) and 1:2
 * (unshaped, 100gbit), netem 10: under 1:1, "tc filter replace ... u32
 * match ip dst P match ip dport N 0xffff flowid 1:1". Ingress plans first
 * create the IFB device (qdisc_ifb_name(dev)) with "ip link", put an ingress
 * qdisc and a mirred redirect filter on dev, then the plan on the IFB.
 * Lines may use "{ ...; }" so they stay correct when joined with " && ".
 * The same kernel state as the netlink path (peer_local.c). Returns 0 or
 * -ENOSPC / -EINVAL. */
int tccmd_apply(const char *dev, const struct impair_plan *p, char *out,
		size_t len, struct ll_err *err);

/* The command that removes linklab's root qdisc from dev (the kernel then
 * reinstalls its default): "tc qdisc del dev 'veth0' root". */
int tccmd_clear(const char *dev, char *out, size_t len, struct ll_err *err);

/* Lines that undo an ingress apply on dev: delete its ingress qdisc and
 * the IFB device (both tolerated when absent). 0 or -ENOSPC. */
int tccmd_clear_ingress(const char *dev, char *out, size_t len,
			struct ll_err *err);

/* Burst in bytes of the unshaped htb class (100 Gbit/s for one 4 ms tick),
 * used by both the netlink path and the tc lines. */
uint32_t tccmd_unshaped_burst(const struct impair_plan *p);

#endif
