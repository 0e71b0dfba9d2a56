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

#include "linklab/err.h"
#include "linklab/peer.h"

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
 * -EINVAL on bad JSON. */
int tcjson_qdiscs(const char *json, const char *dev, struct qdisc_state *out,
		  struct ll_err *err);

/* Parse a tc handle "1:" / "1:1" / "ffff:" into a 32-bit TC_H value.
 * -EINVAL if malformed. */
int tcjson_parse_handle(const char *s, uint32_t *h);

#endif
