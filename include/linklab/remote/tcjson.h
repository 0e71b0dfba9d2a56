/* SPDX-License-Identifier: MIT */
/* tcjson.h - parse the JSON output of iproute2's `ip -j` and `tc -j` (as
 * printed by iproute2 6.1) into the peer structs. Used by the remote backend,
 * which reads the peer's state over SSH. Pure functions: no I/O.
 *
 * Units as printed by iproute2 6.1 (checked on this machine and in
 * tc/q_tbf.c tbf_print_opt, tc/q_netem.c netem_print_opt):
 *   tbf  "rate" bytes/s, "burst" bytes, "lat" us (limit printed only when
 *        lat < 0 or with -raw; else limit = lat * rate + burst);
 *   netem "delay"/"jitter" seconds (double), probabilities as fractions
 *        0..1 (double), "limit" packets, "gap" packets.
 */
#ifndef LINKLAB_TCJSON_H
#define LINKLAB_TCJSON_H

#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/model/qdisc.h"

/* Parse `ip -j addr show` into out (name, ifindex, IFF_UP, operstate, MTU in
 * bytes, addresses "a.b.c.d/len" skipping link-local fe80::, root qdisc
 * kind). -EINVAL (err filled) if json is not an ip -j array; links beyond
 * PEER_MAX_LINKS are dropped. */
int tcjson_links(const char *json, struct link_list *out, struct ll_err *err);

/* Parse `ip -j route get ADDR` into dev (the "dev" of the first entry).
 * -EINVAL on bad JSON, -ENOENT if no dev, -ENOSPC if len is too small. */
int tcjson_route_dev(const char *json, char *dev, size_t len,
		     struct ll_err *err);

/* Parse `tc -j [-s] qdisc show dev DEV` into out (root first, then the
 * others in output order; at most PEER_MAX_QDISCS). out->dev is set to dev.
 * Handles "1:" -> 0x00010000, parent "1:1" -> 0x00010001, root -> TC_H_ROOT.
 * tbf rate -> bit/s, netem times -> ns, fractions -> u32 (x UINT32_MAX).
 * An ingress/clsact qdisc (parent ffff:fff1) sets has_ingress and is not
 * put in q[], as the netlink reader (nlqdisc.c) does. -EINVAL on bad JSON. */
int tcjson_qdiscs(const char *json, const char *dev, struct qdisc_state *out,
		  struct ll_err *err);

/* Fold `tc class show dev DEV` (plain text: tc 6.1 prints no JSON for
 * classes, e.g. "class htb 1:1 root prio 0 rate 10Mbit ceil 10Mbit burst
 * 5000b cburst 5000b") into st: when st's root is linklab's htb 1: (as
 * tcjson_qdiscs left it), q[0].rate (bit/s) and q[0].burst (bytes) become
 * those of class 1:1, as the netlink reader does. Rates as tc's
 * sprint_rate prints them (tc/tc_util.c: bit, Kbit, Mbit, Gbit, Tbit, x1000;
 * "Kibit".. x1024 with -iec; the print may round below 0.1 %), sizes
 * "Nb" / "NKb" / "NMb" (x1024, older tc). 0 (no class 1:1 leaves st as it
 * was) or -EINVAL if text is NULL. */
int tcjson_htb_class(const char *text, struct qdisc_state *st,
		     struct ll_err *err);

/* Fold `tc -j filter show dev DEV parent 1:` into st's scope: linklab's u32
 * key nodes with flowid 1:1 (handle with a non-zero node id) set scoped,
 * "ip dst" (off 16) -> dst_addr/dst_plen, AF_INET; "ip6 dst" (off 24..36)
 * -> dst6/dst_plen, AF_INET6; "ip dport" (off 20, mask ffff) and "ip6
 * dport" (off 40) -> dport. tc prints each key as a "match" object (value
 * and mask in hex of the host-order word). An empty text is no filter (0).
 * -EINVAL on bad JSON. */
int tcjson_scope(const char *json, struct qdisc_state *st, struct ll_err *err);

/* Parse a tc handle "1:" / "1:1" / "ffff:" into a 32-bit TC_H value.
 * -EINVAL if malformed. */
int tcjson_parse_handle(const char *s, uint32_t *h);

#endif
