/* SPDX-License-Identifier: MIT */
/* tccmd.c - tc command lines equivalent to a qdisc plan (iproute2 tc(8),
 * tc-tbf(8), tc-netem(8) syntax). Same layout as the netlink path in
 * peer_local.c: root tbf 1:, netem 10: under 1:1, or root netem 1:. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "linklab/model/qdisc.h"
#include "linklab/model/netem_dist.h"
#include "linklab/remote/tccmd.h"
#include "linklab/base/units.h"

#define IF_NAMESIZE_TCCMD 15   /* IFNAMSIZ - 1 */

int tccmd_quote(const char *word, char *out, size_t len)
{
	size_t o = 0;
	const char *s;

	if (!out || len == 0)
		return -ENOSPC;
	if (o + 1 >= len)
		return -ENOSPC;
	out[o++] = '\'';
	for (s = word ? word : ""; *s; s++) {
		if (*s == '\'') {
			if (o + 4 >= len)
				return -ENOSPC;
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else {
			if (o + 1 >= len)
				return -ENOSPC;
			out[o++] = *s;
		}
	}
	if (o + 2 > len)
		return -ENOSPC;
	out[o++] = '\'';
	out[o] = '\0';
	return 0;
}

struct sbuf { char *p; size_t len, off; int err; };

static void sb_add(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->off, b->len - b->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->len - b->off) {
		b->err = -ENOSPC;
		b->p[b->off] = '\0';
		return;
	}
	b->off += (size_t)n;
}

static void prob_pair(struct sbuf *b, const char *word, uint32_t p, uint32_t c)
{
	char v1[32], v2[32];

	if (!p)
		return;
	sb_add(b, " %s %s", word, units_format_percent(p, v1, sizeof(v1)));
	if (c)
		sb_add(b, " %s", units_format_percent(c, v2, sizeof(v2)));
}

static void netem_words(struct sbuf *b, const struct impair_plan *p)
{
	char t1[32], t2[32], c[32];

	sb_add(b, " netem limit %" PRIu32, p->limit ? p->limit : 1000);
	if (p->latency_ns || p->jitter_ns) {
		sb_add(b, " delay %s", units_format_time(p->latency_ns, t1, sizeof(t1)));
		if (p->jitter_ns) {
			sb_add(b, " %s", units_format_time(p->jitter_ns, t2, sizeof(t2)));
			if (p->delay_corr)
				sb_add(b, " %s", units_format_percent(p->delay_corr, c, sizeof(c)));
		}
	}
	if (p->dist != IMP_DIST_UNIFORM && netem_dist_name(p->dist))
		sb_add(b, " distribution %s", netem_dist_name(p->dist));
	prob_pair(b, "loss", p->loss, p->loss_corr);
	if (p->loss_model == IMP_LOSSM_STATE) {
		/* all five in CLI order p13 p31 p32 p23 p14 (kernel: p14 p23) */
		static const int cli[5] = { 0, 1, 2, 4, 3 };
		int i;

		sb_add(b, " loss state");
		for (i = 0; i < 5; i++)
			sb_add(b, " %s", units_format_percent(p->gi[cli[i]], c, sizeof(c)));
	} else if (p->loss_model == IMP_LOSSM_GE) {
		/* tc takes 1-h and stores h = UINT32_MAX - (1-h) */
		sb_add(b, " loss gemodel %s", units_format_percent(p->ge[0], c, sizeof(c)));
		sb_add(b, " %s", units_format_percent(p->ge[1], c, sizeof(c)));
		sb_add(b, " %s", units_format_percent(UINT32_MAX - p->ge[2], c, sizeof(c)));
		sb_add(b, " %s", units_format_percent(p->ge[3], c, sizeof(c)));
	}
	if (p->ecn)
		sb_add(b, " ecn");
	prob_pair(b, "duplicate", p->duplicate, p->dup_corr);
	/* The full option set, as the netlink path sends it: on "replace" of
	 * an existing netem the kernel keeps CORR, REORDER, CORRUPT, RATE and
	 * SLOT unless they are sent, so zeros are written out ("corrupt P C"
	 * with its correlation also makes tc send CORR, dup correlation
	 * included). 0% needs iproute2 >= 5.0 (4.15-4.20 refused it). */
	sb_add(b, " corrupt %s", units_format_percent(p->corrupt, c, sizeof(c)));
	sb_add(b, " %s", units_format_percent(p->corrupt_corr, c, sizeof(c)));
	sb_add(b, " reorder %s", units_format_percent(p->reorder, c, sizeof(c)));
	sb_add(b, " %s", units_format_percent(p->reorder_corr, c, sizeof(c)));
	if (p->reorder && p->gap)
		sb_add(b, " gap %" PRIu32, p->gap);
	if (!p->netem_rate_Bps)
		sb_add(b, " rate 0bit");
	if (!p->slot)
		sb_add(b, " slot 0ns 0ns");
	if (p->netem_rate_Bps) {
		sb_add(b, " rate %s", units_format_rate(p->netem_rate_Bps * 8, t1, sizeof(t1)));
		if (p->packet_overhead || p->cell_size || p->cell_overhead)
			sb_add(b, " %" PRId32, p->packet_overhead);
		if (p->cell_size || p->cell_overhead)
			sb_add(b, " %" PRIu32 " %" PRId32, p->cell_size, p->cell_overhead);
	}
	if (p->slot) {
		sb_add(b, " slot %s %s", units_format_time(p->slot_min_ns, t1, sizeof(t1)),
		       units_format_time(p->slot_max_ns, t2, sizeof(t2)));
		if (p->slot_packets)
			sb_add(b, " packets %" PRId32, p->slot_packets);
		if (p->slot_bytes)
			sb_add(b, " bytes %s", units_format_size((uint64_t)p->slot_bytes,
								  c, sizeof(c)));
	}
	/* iproute2 >= 6.6 only (tc 6.1: What is "seed"?) */
	if (p->has_seed)
		sb_add(b, " seed %" PRIu64, p->seed);
}

/* Lines that install p on the device whose quoted name is q. */
/* The root line: "tc qdisc replace ... root handle 1: WORDS", and when the
 * kernel refuses that (a root of another kind at 1: - "Invalid qdisc name" -
 * or htb, which has no "change") delete the root and create it afresh, as
 * the netlink path does. Stays one line, so joining with " && " works. */
static void root_line(struct sbuf *b, const char *q, const char *words)
{
	sb_add(b, "tc qdisc replace dev %s root handle 1: %s 2>/dev/null || "
	       "{ tc qdisc del dev %s root 2>/dev/null; tc qdisc replace dev %s root handle 1: %s; }\n",
	       q, words, q, q, words);
}

static void plan_lines(struct sbuf *b, const char *q, const struct impair_plan *p)
{
	char r[32], bu[32], li[32], w[1024];

	if (p->scoped) {
		/* htb 1: default 2; 1:1 shaped (or unshaped when only netem),
		 * 1:2 unshaped; netem 10: under 1:1; u32 to 1:1 */
		uint64_t shaped = p->tbf ? p->rate_Bps * 8 : QDISC_UNSHAPED_BPS;
		uint32_t burst = p->tbf ? p->burst : tccmd_unshaped_burst(p);
		char a[INET_ADDRSTRLEN], a6[INET6_ADDRSTRLEN];

		root_line(b, q, "htb default 2");
		sb_add(b, "tc class replace dev %s parent 1: classid 1:1 htb rate %s ceil %s burst %s cburst %s\n",
		       q, units_format_rate(shaped, r, sizeof(r)), r,
		       units_format_size(burst, bu, sizeof(bu)), bu);
		sb_add(b, "tc class replace dev %s parent 1: classid 1:2 htb rate %s ceil %s burst %s cburst %s\n",
		       q, units_format_rate(QDISC_UNSHAPED_BPS, r, sizeof(r)), r,
		       units_format_size(tccmd_unshaped_burst(p), bu, sizeof(bu)), bu);
		if (p->netem) {
			sb_add(b, "tc qdisc replace dev %s parent 1:1 handle 10:", q);
			netem_words(b, p);
			sb_add(b, "\n");
		} else {
			sb_add(b, "{ tc qdisc del dev %s parent 1:1 handle 10: 2>/dev/null || true; }\n", q);
		}
		/* start from no filter: a previous scope may have had the other
		 * family's filter */
		sb_add(b, "{ tc filter del dev %s parent 1: 2>/dev/null || true; }\n", q);
		if (p->dst_family == AF_INET || (!p->dst_plen && p->dport)) {
			sb_add(b, "tc filter add dev %s parent 1: protocol ip prio 1 u32", q);
			if (p->dst_plen) {
				inet_ntop(AF_INET, p->dst_addr, a, sizeof(a));
				sb_add(b, " match ip dst %s/%u", a, p->dst_plen);
			}
			if (p->dport)
				sb_add(b, " match ip dport %u 0xffff", p->dport);
			sb_add(b, " flowid 1:1\n");
		}
		if (p->dst_family == AF_INET6 || (!p->dst_plen && p->dport)) {
			sb_add(b, "tc filter add dev %s parent 1: protocol ipv6 prio 2 u32", q);
			if (p->dst_plen) {
				inet_ntop(AF_INET6, p->dst6, a6, sizeof(a6));
				sb_add(b, " match ip6 dst %s/%u", a6, p->dst_plen);
			}
			if (p->dport)
				sb_add(b, " match ip6 dport %u 0xffff", p->dport);
			sb_add(b, " flowid 1:1\n");
		}
		return;
	}
	if (p->tbf) {
		snprintf(w, sizeof(w), "tbf rate %s burst %s limit %s",
			 units_format_rate(p->rate_Bps * 8, r, sizeof(r)),
			 units_format_size(p->burst, bu, sizeof(bu)),
			 units_format_size(p->tbf_limit, li, sizeof(li)));
		root_line(b, q, w);
	}
	if (p->netem) {
		struct sbuf nb = { w, sizeof(w), 0, 0 };

		netem_words(&nb, p);
		if (nb.err)
			b->err = nb.err;
		else if (p->tbf)
			sb_add(b, "tc qdisc replace dev %s parent 1:1 handle 10:%s\n", q, w);
		else
			root_line(b, q, w + 1);     /* skip the leading blank */
	} else if (p->tbf) {
		/* a netem child of an earlier dial must not stay */
		sb_add(b, "{ tc qdisc del dev %s parent 1:1 handle 10: 2>/dev/null || true; }\n", q);
	}
}

uint32_t tccmd_unshaped_burst(const struct impair_plan *p)
{
	(void)p;
	/* one HZ-250 tick of 100 Gbit/s: tc's own default (rate / psched hz
	 * + 1600 = 1612 bytes) would throttle the unshaped class */
	return (uint32_t)(QDISC_UNSHAPED_BPS / 8 / 250);
}

int tccmd_apply(const char *dev, const struct impair_plan *p, char *out,
		size_t len, struct ll_err *err)
{
	struct sbuf b = { out, len, 0, 0 };
	char q[4 * IF_NAMESIZE_TCCMD + 8];

	if (!out || !len)
		return ll_err_set(err, -ENOSPC, "tc command buffer is empty");
	out[0] = '\0';
	if (!dev || !*dev)
		return ll_err_set(err, -EINVAL, "no interface given");
	if (strlen(dev) > IF_NAMESIZE_TCCMD)
		return ll_err_set(err, -EINVAL, "interface name too long");
	if (!p->tbf && !p->netem)
		return ll_err_set(err, -EINVAL, "empty plan: nothing to apply");
	if (tccmd_quote(dev, q, sizeof(q)) < 0)
		return ll_err_set(err, -ENOSPC, "interface name too long to quote");
	if (p->ingress) {
		char ifb[IF_NAMESIZE_TCCMD + 1], qi[4 * IF_NAMESIZE_TCCMD + 8];

		qdisc_ifb_name(dev, ifb, sizeof(ifb));
		tccmd_quote(ifb, qi, sizeof(qi));
		sb_add(&b, "{ ip link add %s type ifb 2>/dev/null || true; }\n", qi);
		sb_add(&b, "ip link set dev %s up\n", qi);
		sb_add(&b, "tc qdisc replace dev %s ingress\n", q);
		sb_add(&b, "tc filter replace dev %s parent ffff: protocol all prio 1 handle 800::800 u32 match u32 0 0 action mirred egress redirect dev %s\n",
		       q, qi);
		plan_lines(&b, qi, p);
	} else {
		plan_lines(&b, q, p);
	}
	if (b.err)
		return ll_err_set(err, b.err, "tc command lines do not fit in %zu bytes", len);
	return 0;
}

int tccmd_clear_ingress(const char *dev, char *out, size_t len,
			struct ll_err *err)
{
	char q[4 * IF_NAMESIZE_TCCMD + 8], ifb[IF_NAMESIZE_TCCMD + 1];
	char qi[4 * IF_NAMESIZE_TCCMD + 8];
	int n;

	if (!dev || !*dev || strlen(dev) > IF_NAMESIZE_TCCMD)
		return ll_err_set(err, -EINVAL, "bad interface name");
	tccmd_quote(dev, q, sizeof(q));
	qdisc_ifb_name(dev, ifb, sizeof(ifb));
	tccmd_quote(ifb, qi, sizeof(qi));
	n = snprintf(out, len, "{ tc qdisc del dev %s ingress 2>/dev/null || true; }\n"
		     "{ ip link del %s type ifb 2>/dev/null || true; }\n", q, qi);
	if (n < 0 || (size_t)n >= len)
		return ll_err_set(err, -ENOSPC, "tc command does not fit in %zu bytes", len);
	return 0;
}

int tccmd_clear(const char *dev, char *out, size_t len, struct ll_err *err)
{
	char q[4 * IF_NAMESIZE_TCCMD + 8];
	int n;

	if (!dev || !*dev || strlen(dev) > IF_NAMESIZE_TCCMD)
		return ll_err_set(err, -EINVAL, "bad interface name");
	if (tccmd_quote(dev, q, sizeof(q)) < 0)
		return ll_err_set(err, -ENOSPC, "interface name too long to quote");
	n = snprintf(out, len, "tc qdisc del dev %s root\n", q);
	if (n < 0 || (size_t)n >= len)
		return ll_err_set(err, -ENOSPC, "tc command does not fit in %zu bytes", len);
	return 0;
}
