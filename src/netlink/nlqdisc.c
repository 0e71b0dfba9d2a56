/* SPDX-License-Identifier: MIT */
/* nlqdisc.c - tbf/netem qdisc messages over rtnetlink with libnl's message
 * API; dump parsing; ack and extended-ack handling. Encodings: uapi
 * linux/pkt_sched.h, kernel net/sched/sch_tbf.c and sch_netem.c, and what
 * iproute2 6.1 tc/q_tbf.c, tc/q_netem.c, tc/tc_core.c send (see
 * tests/data/tc-*.hex). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <linux/gen_stats.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "linklab/model/netem_dist.h"
#include "linklab/netlink/nlqdisc.h"

/* newer uapi than this system's headers (kernel 6.6, sch_netem.c) */
#define LL_TCA_NETEM_PRNG_SEED 14
#define LL_TCA_NETEM_MAX 14
/* room for a 16384-entry s16 distribution table and everything else */
#define NLQ_MSG_SIZE (2 * NETEM_DIST_ENTRIES_MAX * 2 + 8192)

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

double nlqdisc_tick_in_usec(void)
{
	static double tick;
	unsigned t2us = 0, us2t = 0, res = 0;
	FILE *f;

	if (tick > 0)
		return tick;
	f = fopen("/proc/net/psched", "re");
	if (f) {
		if (fscanf(f, "%08x%08x%08x", &t2us, &us2t, &res) != 3)
			t2us = us2t = res = 0;
		fclose(f);
	}
	if (t2us && us2t && res) {
		/* tc_core.c: a clock_res of 1e9 means "tick multiplier 1" */
		if (res == 1000000000)
			t2us = us2t;
		tick = (double)t2us / us2t * ((double)res / 1000000.);
	}
	if (!(tick > 0))
		tick = 15.625;
	return tick;
}

static uint32_t us2ticks(double us)
{
	double t;
	unsigned u;

	if (us < 0)
		us = 0;
	if (us > (double)UINT32_MAX)
		us = (double)UINT32_MAX;
	u = (unsigned)us;           /* tc passes whole microseconds */
	t = (double)u * nlqdisc_tick_in_usec();
	return t >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/* tc_calc_xmittime(rate, size): time to send size bytes at rate, in ticks */
static uint32_t xmittime(uint32_t rate, uint32_t size)
{
	return us2ticks(1000000. * ((double)size / (double)rate));
}

uint32_t nlqdisc_xmittime(uint64_t rate_Bps, uint32_t size)
{
	if (!rate_Bps)
		return UINT32_MAX;
	return us2ticks(1000000. * ((double)size / (double)rate_Bps));
}

int nlqdisc_msg_start(int type, int flags, int ifindex, uint32_t handle,
		      uint32_t parent, uint32_t info, const char *kind,
		      size_t size, struct nl_msg **out, struct ll_err *err)
{
	struct tcmsg tcm;
	struct nl_msg *m;

	*out = NULL;
	m = nlmsg_alloc_size(size);
	if (m && !nlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, type, 0,
			    flags | NLM_F_REQUEST | NLM_F_ACK)) {
		nlmsg_free(m);
		m = NULL;
	}
	if (!m)
		return ll_err_set(err, -ENOMEM, "cannot allocate a netlink message");
	memset(&tcm, 0, sizeof(tcm));
	tcm.tcm_family = AF_UNSPEC;
	tcm.tcm_ifindex = ifindex;
	tcm.tcm_handle = handle;
	tcm.tcm_parent = parent;
	tcm.tcm_info = info;
	if (nlmsg_append(m, &tcm, sizeof(tcm), NLMSG_ALIGNTO) < 0 ||
	    (kind && nla_put_string(m, TCA_KIND, kind) < 0)) {
		nlmsg_free(m);
		return ll_err_set(err, -ENOMEM, "netlink message too small");
	}
	*out = m;
	return 0;
}

static int start(const struct nlqdisc_target *t, int type, int flags,
		 const char *kind, struct nl_msg **out, struct ll_err *err)
{
	return nlqdisc_msg_start(type, flags, t->ifindex, t->handle, t->parent, 0,
				 kind, NLQ_MSG_SIZE, out, err);
}

/* TCA_OPTIONS is opened with length 4 and stretched to the message end once
 * every option is in (no NLA_F_NESTED, like tc's addattr_nest). */
static void close_opts(struct nl_msg *m, struct nlattr *opts)
{
	opts->nla_len = (uint16_t)((char *)nlmsg_tail(nlmsg_hdr(m)) -
				   (char *)opts);
}

static int fail_nomem(struct nl_msg **out, struct ll_err *err)
{
	nlmsg_free(*out);
	*out = NULL;
	return ll_err_set(err, -ENOMEM, "netlink message too small for the options");
}

int nlqdisc_build_tbf(const struct nlqdisc_target *t,
		      const struct impair_plan *p, struct nl_msg **out,
		      struct ll_err *err)
{
	struct tc_tbf_qopt q;
	uint32_t rtab[256], rate32;
	struct nlattr *opts;
	int rc, i;

	if (!p->tbf || !p->rate_Bps || !p->burst || !p->tbf_limit)
		return ll_err_set(err, -EINVAL,
				  "tbf needs rate, burst and limit (plan incomplete)");
	rc = start(t, RTM_NEWQDISC, t->verb, "tbf", out, err);
	if (rc < 0)
		return rc;
	rate32 = p->rate_Bps >= (1ULL << 32) ? UINT32_MAX : (uint32_t)p->rate_Bps;
	memset(&q, 0, sizeof(q));
	q.rate.rate = rate32;
	/* tc_calc_rtable with mtu 0 -> 2047: cell_log 3 */
	q.rate.cell_log = 3;
	q.rate.linklayer = TC_LINKLAYER_ETHERNET;
	q.rate.cell_align = -1;
	q.limit = p->tbf_limit;
	q.buffer = xmittime(rate32, p->burst);
	for (i = 0; i < 256; i++)
		rtab[i] = xmittime(rate32, (uint32_t)(i + 1) << 3);
	opts = nla_reserve(*out, TCA_OPTIONS, 0);
	if (!opts ||
	    nla_put(*out, TCA_TBF_PARMS, sizeof(q), &q) < 0 ||
	    nla_put_u32(*out, TCA_TBF_BURST, p->burst) < 0 ||
	    (p->rate_Bps >= (1ULL << 32) &&
	     nla_put_u64(*out, TCA_TBF_RATE64, p->rate_Bps) < 0) ||
	    nla_put(*out, TCA_TBF_RTAB, sizeof(rtab), rtab) < 0)
		return fail_nomem(out, err);
	close_opts(*out, opts);
	return 0;
}

/* correlation, reorder, ECN, corrupt and slot attributes */
static int netem_put_corr(struct nl_msg **out, const struct impair_plan *p,
			  bool explicit_zero, struct ll_err *err)
{
	if (explicit_zero || p->delay_corr || p->loss_corr || p->dup_corr ||
	    p->reorder_corr || p->corrupt_corr) {
		struct tc_netem_corr c = { p->delay_corr, p->loss_corr, p->dup_corr };

		if (nla_put(*out, TCA_NETEM_CORR, sizeof(c), &c) < 0)
			return fail_nomem(out, err);
	}
	if (explicit_zero || p->reorder) {
		struct tc_netem_reorder r = { p->reorder, p->reorder_corr };

		if (nla_put(*out, TCA_NETEM_REORDER, sizeof(r), &r) < 0)
			return fail_nomem(out, err);
	}
	/* tc sends an int 1 (q_netem.c: &present[TCA_NETEM_ECN]) */
	if ((explicit_zero || p->ecn) &&
	    nla_put_u32(*out, TCA_NETEM_ECN, p->ecn ? 1 : 0) < 0)
		return fail_nomem(out, err);
	if (explicit_zero || p->corrupt) {
		struct tc_netem_corrupt c = { p->corrupt, p->corrupt_corr };

		if (nla_put(*out, TCA_NETEM_CORRUPT, sizeof(c), &c) < 0)
			return fail_nomem(out, err);
	}
	if (explicit_zero || p->slot) {
		struct tc_netem_slot sl;

		memset(&sl, 0, sizeof(sl));
		if (p->slot) {
			sl.min_delay = p->slot_min_ns;
			sl.max_delay = p->slot_max_ns;
			sl.max_packets = p->slot_packets;
			sl.max_bytes = p->slot_bytes;
		}
		if (nla_put(*out, TCA_NETEM_SLOT, sizeof(sl), &sl) < 0)
			return fail_nomem(out, err);
	}
	return 0;
}

/* the loss-model nest (Gilbert-Elliott or 4-state) */
static int netem_put_loss(struct nl_msg **out, const struct impair_plan *p,
			  struct ll_err *err)
{
	if (p->loss_model == IMP_LOSSM_STATE || p->loss_model == IMP_LOSSM_GE) {
		/* a real nest with NLA_F_NESTED, as tc's addattr_nest */
		struct nlattr *nest = nla_nest_start(*out, TCA_NETEM_LOSS);
		int rc2;

		if (!nest)
			return fail_nomem(out, err);
		nest->nla_type |= NLA_F_NESTED;
		if (p->loss_model == IMP_LOSSM_STATE) {
			struct tc_netem_gimodel gi = { p->gi[0], p->gi[1], p->gi[2],
						       p->gi[3], p->gi[4] };

			rc2 = nla_put(*out, NETEM_LOSS_GI, sizeof(gi), &gi);
		} else {
			struct tc_netem_gemodel ge = { p->ge[0], p->ge[1], p->ge[2],
						       p->ge[3] };

			rc2 = nla_put(*out, NETEM_LOSS_GE, sizeof(ge), &ge);
		}
		if (rc2 < 0)
			return fail_nomem(out, err);
		nla_nest_end(*out, nest);
	}
	return 0;
}

/* the rate attribute, with RATE64 above 32 bits */
static int netem_put_rate(struct nl_msg **out, const struct impair_plan *p,
			  bool explicit_zero, struct ll_err *err)
{
	if (explicit_zero || p->netem_rate_Bps) {
		struct tc_netem_rate r;

		memset(&r, 0, sizeof(r));
		if (p->netem_rate_Bps >= (1ULL << 32)) {
			if (nla_put_u64(*out, TCA_NETEM_RATE64, p->netem_rate_Bps) < 0)
				return fail_nomem(out, err);
			r.rate = UINT32_MAX;
		} else {
			r.rate = (uint32_t)p->netem_rate_Bps;
		}
		r.packet_overhead = p->packet_overhead;
		r.cell_size = p->cell_size;
		r.cell_overhead = p->cell_overhead;
		if (nla_put(*out, TCA_NETEM_RATE, sizeof(r), &r) < 0)
			return fail_nomem(out, err);
	}
	return 0;
}

/* the delay distribution table */
static int netem_put_dist(struct nl_msg **out, const struct impair_plan *p,
			  struct ll_err *err)
{
	int rc;

	if (p->dist != IMP_DIST_UNIFORM) {
		int16_t *table = calloc(NETEM_DIST_ENTRIES_MAX, sizeof(*table));
		size_t n = 0;

		if (!table)
			return fail_nomem(out, err);
		rc = netem_dist_load(p->dist, table, NETEM_DIST_ENTRIES_MAX, &n, err);
		if (rc < 0) {
			free(table);
			nlmsg_free(*out);
			*out = NULL;
			return rc;
		}
		rc = nla_put(*out, TCA_NETEM_DELAY_DIST, (int)(n * sizeof(table[0])),
			     table);
		free(table);
		if (rc < 0)
			return fail_nomem(out, err);
	}
	return 0;
}

int nlqdisc_build_netem(const struct nlqdisc_target *t,
			const struct impair_plan *p, bool explicit_zero,
			struct nl_msg **out, struct ll_err *err)
{
	struct tc_netem_qopt q;
	struct nlattr *opts;
	int rc;

	if (!p->netem)
		return ll_err_set(err, -EINVAL, "plan has no netem part");
	rc = start(t, RTM_NEWQDISC, t->verb, "netem", out, err);
	if (rc < 0)
		return rc;
	memset(&q, 0, sizeof(q));
	q.latency = us2ticks((double)(p->latency_ns / 1000));
	q.jitter = us2ticks((double)(p->jitter_ns / 1000));
	q.limit = p->limit ? p->limit : 1000;
	q.loss = p->loss;
	q.gap = p->gap;
	q.duplicate = p->duplicate;
	opts = nla_reserve(*out, TCA_OPTIONS, sizeof(q));
	if (!opts)
		return fail_nomem(out, err);
	memcpy(nla_data(opts), &q, sizeof(q));
	rc = netem_put_corr(out, p, explicit_zero, err);
	if (rc == 0)
		rc = netem_put_loss(out, p, err);
	if (rc == 0)
		rc = netem_put_rate(out, p, explicit_zero, err);
	if (rc == 0)
		rc = netem_put_dist(out, p, err);
	if (rc < 0)
		return rc;
	if ((explicit_zero || p->latency_ns) &&
	    nla_put_s64(*out, TCA_NETEM_LATENCY64, p->latency_ns) < 0)
		return fail_nomem(out, err);
	if ((explicit_zero || p->jitter_ns) &&
	    nla_put_s64(*out, TCA_NETEM_JITTER64, p->jitter_ns) < 0)
		return fail_nomem(out, err);
	/* only when asked; kernels before 6.6 skip the unknown attribute
	 * (netem parses its options liberally) */
	if (p->has_seed &&
	    nla_put_u64(*out, LL_TCA_NETEM_PRNG_SEED, p->seed) < 0)
		return fail_nomem(out, err);
	close_opts(*out, opts);
	return 0;
}

int nlqdisc_build_raw(const struct nlqdisc_target *t, const char *kind,
		      const void *opts, size_t optlen, struct nl_msg **out,
		      struct ll_err *err)
{
	int rc;

	if (!kind || !*kind)
		return ll_err_set(err, -EINVAL, "no qdisc kind to replay");
	if (optlen > NLQDISC_OPTS_MAX)
		return ll_err_set(err, -EINVAL, "saved options too long (%zu bytes)",
				  optlen);
	rc = start(t, RTM_NEWQDISC, t->verb, kind, out, err);
	if (rc < 0)
		return rc;
	if (optlen && nla_put(*out, TCA_OPTIONS, (int)optlen, opts) < 0)
		return fail_nomem(out, err);
	return 0;
}

int nlqdisc_build_del(const struct nlqdisc_target *t, struct nl_msg **out,
		      struct ll_err *err)
{
	return start(t, RTM_DELQDISC, 0, NULL, out, err);
}

/* --- parsing ------------------------------------------------------------- */

static void parse_stats(struct nlattr *tb[], struct qdisc_info *q)
{
	if (tb[TCA_STATS2]) {
		struct nlattr *s[TCA_STATS_MAX + 1];

		if (nla_parse_nested(s, TCA_STATS_MAX, tb[TCA_STATS2], NULL) == 0) {
			if (s[TCA_STATS_BASIC] &&
			    nla_len(s[TCA_STATS_BASIC]) >= 12) {
				struct gnet_stats_basic b;

				memset(&b, 0, sizeof(b));
				memcpy(&b, nla_data(s[TCA_STATS_BASIC]),
				       (size_t)nla_len(s[TCA_STATS_BASIC]) < sizeof(b) ?
				       (size_t)nla_len(s[TCA_STATS_BASIC]) : sizeof(b));
				q->bytes = b.bytes;
				q->packets = b.packets;
			}
			if (s[TCA_STATS_QUEUE] &&
			    (size_t)nla_len(s[TCA_STATS_QUEUE]) >= sizeof(struct gnet_stats_queue)) {
				struct gnet_stats_queue g;

				memcpy(&g, nla_data(s[TCA_STATS_QUEUE]), sizeof(g));
				q->qlen = g.qlen;
				q->backlog = g.backlog;
				q->drops = g.drops;
				q->overlimits = g.overlimits;
			}
			return;
		}
	}
	if (tb[TCA_STATS] && (size_t)nla_len(tb[TCA_STATS]) >= sizeof(struct tc_stats)) {
		struct tc_stats st;

		memcpy(&st, nla_data(tb[TCA_STATS]), sizeof(st));
		q->bytes = st.bytes;
		q->packets = st.packets;
		q->drops = st.drops;
		q->overlimits = st.overlimits;
		q->qlen = st.qlen;
		q->backlog = st.backlog;
	}
}

static int parse_tbf(struct nlattr *opts, struct qdisc_info *q)
{
	struct nlattr *tb[TCA_TBF_MAX + 1];
	struct tc_tbf_qopt p;
	uint64_t rate;

	if (nla_parse_nested(tb, TCA_TBF_MAX, opts, NULL) < 0 || !tb[TCA_TBF_PARMS] ||
	    (size_t)nla_len(tb[TCA_TBF_PARMS]) < sizeof(p))
		return -EINVAL;
	memcpy(&p, nla_data(tb[TCA_TBF_PARMS]), sizeof(p));
	rate = p.rate.rate;
	if (tb[TCA_TBF_RATE64] && nla_len(tb[TCA_TBF_RATE64]) >= 8)
		rate = nla_get_u64(tb[TCA_TBF_RATE64]);
	q->rate = rate * 8;
	q->limit = p.limit;
	if (tb[TCA_TBF_BURST] && nla_len(tb[TCA_TBF_BURST]) >= 4) {
		q->burst = nla_get_u32(tb[TCA_TBF_BURST]);
	} else {
		/* tc_calc_xmitsize: rate * time of buffer, to the nearest
		 * byte (the kernel keeps the buffer in ns and dumps it in
		 * 64 ns ticks, so whole microseconds could lose a byte at
		 * low rates: 1514b at 48bit would read 1513b) */
		double us = (double)p.buffer / nlqdisc_tick_in_usec();
		double b = floor((double)rate * us / 1000000. + 0.5);

		q->burst = b >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)b;
	}
	return 0;
}

/* the rate and slot attributes of a netem dump */
static void parse_netem_rate_slot(struct nlattr **tb, struct qdisc_info *q)
{
	if (tb[TCA_NETEM_RATE] &&
	    (size_t)nla_len(tb[TCA_NETEM_RATE]) >= sizeof(struct tc_netem_rate)) {
		struct tc_netem_rate r;
		uint64_t bytes;

		memcpy(&r, nla_data(tb[TCA_NETEM_RATE]), sizeof(r));
		bytes = r.rate;
		/* the kernel uses max(rate, rate64) */
		if (tb[TCA_NETEM_RATE64] && nla_len(tb[TCA_NETEM_RATE64]) >= 8 &&
		    nla_get_u64(tb[TCA_NETEM_RATE64]) > bytes)
			bytes = nla_get_u64(tb[TCA_NETEM_RATE64]);
		q->netem_rate = bytes * 8;
		q->packet_overhead = r.packet_overhead;
		q->cell_size = r.cell_size;
		q->cell_overhead = r.cell_overhead;
	}
	if (tb[TCA_NETEM_SLOT] &&
	    (size_t)nla_len(tb[TCA_NETEM_SLOT]) >= sizeof(struct tc_netem_slot)) {
		struct tc_netem_slot sl;

		memcpy(&sl, nla_data(tb[TCA_NETEM_SLOT]), sizeof(sl));
		q->slot_min = sl.min_delay;
		q->slot_max = sl.max_delay;
		/* the kernel dumps "unlimited" as INT_MAX */
		q->slot_packets = sl.max_packets == INT32_MAX ? 0 : sl.max_packets;
		q->slot_bytes = sl.max_bytes == INT32_MAX ? 0 : sl.max_bytes;
	}
}

/* the loss-model nest of a netem dump */
static void parse_netem_loss(struct nlattr *loss, struct qdisc_info *q)
{
	struct nlattr *lt[NETEM_LOSS_MAX + 1];

	if (nla_parse_nested(lt, NETEM_LOSS_MAX, loss, NULL) == 0) {
		if (lt[NETEM_LOSS_GI] && (size_t)nla_len(lt[NETEM_LOSS_GI]) >=
		    sizeof(struct tc_netem_gimodel)) {
			struct tc_netem_gimodel g;

			memcpy(&g, nla_data(lt[NETEM_LOSS_GI]), sizeof(g));
			q->loss_model = IMP_LOSSM_STATE;
			q->gi[0] = g.p13;
			q->gi[1] = g.p31;
			q->gi[2] = g.p32;
			q->gi[3] = g.p14;
			q->gi[4] = g.p23;
		} else if (lt[NETEM_LOSS_GE] && (size_t)nla_len(lt[NETEM_LOSS_GE]) >=
			   sizeof(struct tc_netem_gemodel)) {
			struct tc_netem_gemodel g;

			memcpy(&g, nla_data(lt[NETEM_LOSS_GE]), sizeof(g));
			q->loss_model = IMP_LOSSM_GE;
			q->ge[0] = g.p;
			q->ge[1] = g.r;
			q->ge[2] = g.h;
			q->ge[3] = g.k1;
		}
	}
}

static int parse_netem(struct nlattr *opts, struct qdisc_info *q)
{
	struct nlattr *tb[LL_TCA_NETEM_MAX + 1];
	struct tc_netem_qopt p;
	double tick_ns = 1000. / nlqdisc_tick_in_usec();
	int len = nla_len(opts);

	if ((size_t)len < sizeof(p))
		return -EINVAL;
	memcpy(&p, nla_data(opts), sizeof(p));
	q->limit = p.limit;
	q->loss = p.loss;
	q->gap = p.gap;
	q->duplicate = p.duplicate;
	q->delay = (int64_t)llround(p.latency * tick_ns);
	q->jitter = (int64_t)llround(p.jitter * tick_ns);
	memset(tb, 0, sizeof(tb));
	if (len > NLA_ALIGN((int)sizeof(p)) &&
	    nla_parse(tb, LL_TCA_NETEM_MAX,
		      (struct nlattr *)((char *)nla_data(opts) + NLA_ALIGN(sizeof(p))),
		      len - NLA_ALIGN((int)sizeof(p)), NULL) < 0)
		return -EINVAL;
	if (tb[TCA_NETEM_LATENCY64] && nla_len(tb[TCA_NETEM_LATENCY64]) >= 8)
		q->delay = nla_get_s64(tb[TCA_NETEM_LATENCY64]);
	if (tb[TCA_NETEM_JITTER64] && nla_len(tb[TCA_NETEM_JITTER64]) >= 8)
		q->jitter = nla_get_s64(tb[TCA_NETEM_JITTER64]);
	if (tb[TCA_NETEM_CORR] &&
	    (size_t)nla_len(tb[TCA_NETEM_CORR]) >= sizeof(struct tc_netem_corr)) {
		struct tc_netem_corr c;

		memcpy(&c, nla_data(tb[TCA_NETEM_CORR]), sizeof(c));
		q->delay_corr = c.delay_corr;
		q->loss_corr = c.loss_corr;
		q->dup_corr = c.dup_corr;
	}
	if (tb[TCA_NETEM_REORDER] &&
	    (size_t)nla_len(tb[TCA_NETEM_REORDER]) >= sizeof(struct tc_netem_reorder)) {
		struct tc_netem_reorder r;

		memcpy(&r, nla_data(tb[TCA_NETEM_REORDER]), sizeof(r));
		q->reorder = r.probability;
		q->reorder_corr = r.correlation;
	}
	if (tb[TCA_NETEM_CORRUPT] &&
	    (size_t)nla_len(tb[TCA_NETEM_CORRUPT]) >= sizeof(struct tc_netem_corrupt)) {
		struct tc_netem_corrupt c;

		memcpy(&c, nla_data(tb[TCA_NETEM_CORRUPT]), sizeof(c));
		q->corrupt = c.probability;
		q->corrupt_corr = c.correlation;
	}
	if (tb[TCA_NETEM_ECN] && nla_len(tb[TCA_NETEM_ECN]) >= 4)
		q->ecn = nla_get_u32(tb[TCA_NETEM_ECN]) != 0;
	parse_netem_rate_slot(tb, q);
	if (tb[TCA_NETEM_LOSS])
		parse_netem_loss(tb[TCA_NETEM_LOSS], q);
	if (tb[LL_TCA_NETEM_PRNG_SEED] && nla_len(tb[LL_TCA_NETEM_PRNG_SEED]) >= 8) {
		q->has_seed = true;
		q->seed = nla_get_u64(tb[LL_TCA_NETEM_PRNG_SEED]);
	}
	return 0;
}

int nlqdisc_parse(const struct nlmsghdr *nlh, struct qdisc_info *q,
		  int *ifindex, struct nlqdisc_root *root, struct ll_err *err)
{
	struct nlattr *tb[TCA_MAX + 1];
	struct tcmsg *tcm;

	memset(q, 0, sizeof(*q));
	if (nlh->nlmsg_type != RTM_NEWQDISC ||
	    !nlmsg_valid_hdr(nlh, sizeof(struct tcmsg)))
		return ll_err_set(err, -EINVAL, "not a qdisc message (type %u)",
				  nlh->nlmsg_type);
	tcm = nlmsg_data(nlh);
	if (nlmsg_parse((struct nlmsghdr *)nlh, sizeof(*tcm), tb, TCA_MAX, NULL) < 0)
		return ll_err_set(err, -EINVAL, "malformed qdisc message");
	if (ifindex)
		*ifindex = tcm->tcm_ifindex;
	q->handle = tcm->tcm_handle;
	q->parent = tcm->tcm_parent;
	if (tb[TCA_KIND])
		nla_strlcpy(q->kind, tb[TCA_KIND], sizeof(q->kind));
	parse_stats(tb, q);
	if (tb[TCA_OPTIONS]) {
		int rc = 0;

		if (strcmp(q->kind, "tbf") == 0)
			rc = parse_tbf(tb[TCA_OPTIONS], q);
		else if (strcmp(q->kind, "netem") == 0)
			rc = parse_netem(tb[TCA_OPTIONS], q);
		if (rc < 0)
			return ll_err_set(err, -EINVAL, "malformed %s options", q->kind);
	}
	if (root) {
		memset(root, 0, sizeof(*root));
		snprintf(root->kind, sizeof(root->kind), "%s", q->kind);
		root->handle = q->handle;
		root->found = true;
		if (tb[TCA_OPTIONS]) {
			size_t n = (size_t)nla_len(tb[TCA_OPTIONS]);

			if (n > sizeof(root->opts))
				return ll_err_set(err, -E2BIG,
						  "%s options too long to journal (%zu bytes)",
						  q->kind, n);
			memcpy(root->opts, nla_data(tb[TCA_OPTIONS]), n);
			root->optlen = n;
		}
	}
	return 0;
}

/* --- errors, acks, dumps ------------------------------------------------- */

int nlqdisc_map_error(int errnum, const char *what, const char *kind,
		      const char *extack, struct ll_err *err)
{
	const char *ext = extack && *extack ? extack : NULL;

	if (errnum < 0)
		errnum = -errnum;
	if (errnum == ENOENT && kind && strcmp(kind, "netem") == 0)
		return ll_err_set(err, -ENOTSUP,
				  "%s: this kernel has no netem (CONFIG_NET_SCH_NETEM); try modprobe sch_netem%s%s%s",
				  what, ext ? " (kernel: " : "", ext ? ext : "",
				  ext ? ")" : "");
	if (errnum == EPERM)
		return ll_err_set(err, -EPERM, "%s: needs root or CAP_NET_ADMIN", what);
	if (errnum == ENODEV)
		return ll_err_set(err, -ENODEV, "%s: no such interface", what);
	return ll_err_set(err, -errnum, "%s: %s%s%s", what, strerror(errnum),
			  ext ? ": kernel says: " : "", ext ? ext : "");
}

struct talk_ctx {
	int done;
	int error;                  /* positive errno from the ack */
	char ext[256];
	int (*valid)(struct nl_msg *, void *);
	void *arg;
};

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct talk_ctx *c = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);

	(void)nla;
	c->done = 1;
	c->error = e->error < 0 ? -e->error : e->error;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		size_t off = sizeof(*e);
		size_t total = nlh->nlmsg_len - NLMSG_HDRLEN;

		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - NLMSG_HDRLEN;
		off = NLMSG_ALIGN(off);
		if (off < total) {
			struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

			if (nla_parse(tb, NLMSGERR_ATTR_MAX,
				      (struct nlattr *)((char *)e + off),
				      (int)(total - off), NULL) == 0 &&
			    tb[NLMSGERR_ATTR_MSG])
				nla_strlcpy(c->ext, tb[NLMSGERR_ATTR_MSG],
					    sizeof(c->ext));
		}
	}
	return NL_STOP;
}

static int on_ack(struct nl_msg *m, void *arg)
{
	struct talk_ctx *c = arg;

	(void)m;
	c->done = 1;
	return NL_STOP;
}

static int on_finish(struct nl_msg *m, void *arg)
{
	return on_ack(m, arg);
}

static int on_valid(struct nl_msg *m, void *arg)
{
	struct talk_ctx *c = arg;

	return c->valid ? c->valid(m, c->arg) : NL_OK;
}

static int exchange(struct nl_sock *sk, struct nl_msg *msg, struct talk_ctx *c,
		    const char *what, const char *kind, struct ll_err *err)
{
	struct nl_cb *cb;
	int one = 1, rc;

	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one,
		   sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one,
		   sizeof(one));
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return ll_err_set(err, -ENOMEM, "%s: cannot allocate libnl callbacks", what);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, c);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, c);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, c);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, c);
	rc = nl_send_auto(sk, msg);
	if (rc < 0) {
		nl_cb_put(cb);
		return ll_err_set(err, -EIO, "%s: send failed: %s", what, nl_geterror(rc));
	}
	while (!c->done) {
		rc = nl_recvmsgs(sk, cb);
		if (rc < 0 && !c->done) {
			nl_cb_put(cb);
			return ll_err_set(err, -EIO, "%s: %s", what, nl_geterror(rc));
		}
	}
	nl_cb_put(cb);
	if (c->error)
		return nlqdisc_map_error(c->error, what, kind, c->ext, err);
	return 0;
}

int nlqdisc_talk(struct nl_sock *sk, struct nl_msg *msg, const char *what,
		 const char *kind, struct ll_err *err)
{
	struct talk_ctx c;

	memset(&c, 0, sizeof(c));
	return exchange(sk, msg, &c, what, kind, err);
}

int nlqdisc_request(struct nl_sock *sk, struct nl_msg *msg,
		    int (*valid)(struct nl_msg *, void *), void *arg,
		    const char *what, struct ll_err *err)
{
	struct talk_ctx c;

	memset(&c, 0, sizeof(c));
	c.valid = valid;
	c.arg = arg;
	return exchange(sk, msg, &c, what, NULL, err);
}

struct dump_ctx {
	int ifindex;
	struct qdisc_state *st;
	struct nlqdisc_root *root;
	struct ll_err perr;
	int bad;
};

static int on_dump(struct nl_msg *m, void *arg)
{
	struct dump_ctx *d = arg;
	struct qdisc_info q;
	struct nlqdisc_root r;
	struct nlmsghdr *nlh = nlmsg_hdr(m);
	int ifi = 0;

	if (nlmsg_valid_hdr(nlh, sizeof(struct tcmsg)) &&
	    ((struct tcmsg *)nlmsg_data(nlh))->tcm_ifindex != d->ifindex)
		return NL_OK;
	if (nlqdisc_parse(nlmsg_hdr(m), &q, &ifi, &r, &d->perr) < 0) {
		d->bad = 1;
		return NL_OK;
	}
	if (ifi != d->ifindex)
		return NL_OK;
	if (q.parent == TC_H_ROOT) {
		if (d->root)
			*d->root = r;
		if (d->st->n >= PEER_MAX_QDISCS)
			d->st->n = PEER_MAX_QDISCS - 1;
		memmove(&d->st->q[1], &d->st->q[0], sizeof(q) * (size_t)d->st->n);
		d->st->q[0] = q;
		d->st->n++;
	} else if (q.parent == TC_H_INGRESS) {
		d->st->has_ingress = true;
	} else if (d->st->n < PEER_MAX_QDISCS) {
		d->st->q[d->st->n++] = q;
	}
	return NL_OK;
}

/* --- htb class 1:1 and the u32 scope filter (linklab's own layout) ------ */

struct scope_ctx {
	int ifindex;
	struct qdisc_info *htb;
	struct qdisc_state *st;
};

static int on_class(struct nl_msg *m, void *arg)
{
	struct scope_ctx *c = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(m);
	struct nlattr *tb[TCA_MAX + 1], *ho[TCA_HTB_MAX + 1];
	struct tcmsg *tcm;
	struct tc_htb_opt o;
	uint64_t rate;
	char kind[16] = "";

	if (nlh->nlmsg_type != RTM_NEWTCLASS ||
	    !nlmsg_valid_hdr(nlh, sizeof(struct tcmsg)))
		return NL_OK;
	tcm = nlmsg_data(nlh);
	if (tcm->tcm_ifindex != c->ifindex || tcm->tcm_handle != 0x00010001u ||
	    nlmsg_parse(nlh, sizeof(*tcm), tb, TCA_MAX, NULL) < 0 || !tb[TCA_KIND] ||
	    !tb[TCA_OPTIONS])
		return NL_OK;
	nla_strlcpy(kind, tb[TCA_KIND], sizeof(kind));
	if (strcmp(kind, "htb") != 0 ||
	    nla_parse_nested(ho, TCA_HTB_MAX, tb[TCA_OPTIONS], NULL) < 0 ||
	    !ho[TCA_HTB_PARMS] || (size_t)nla_len(ho[TCA_HTB_PARMS]) < sizeof(o))
		return NL_OK;
	memcpy(&o, nla_data(ho[TCA_HTB_PARMS]), sizeof(o));
	rate = o.rate.rate;
	if (ho[TCA_HTB_RATE64] && nla_len(ho[TCA_HTB_RATE64]) >= 8)
		rate = nla_get_u64(ho[TCA_HTB_RATE64]);
	c->htb->rate = rate * 8;
	{
		unsigned us = (unsigned)(o.buffer / nlqdisc_tick_in_usec());
		double b = (double)rate * us / 1000000.;

		c->htb->burst = b >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)llround(b);
	}
	return NL_OK;
}

static int on_filter(struct nl_msg *m, void *arg)
{
	struct scope_ctx *c = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(m);
	struct nlattr *tb[TCA_MAX + 1], *uo[TCA_U32_MAX + 1];
	const struct tc_u32_sel *sel;
	struct tcmsg *tcm;
	char kind[16] = "";
	bool v6;
	int i;

	if (nlh->nlmsg_type != RTM_NEWTFILTER ||
	    !nlmsg_valid_hdr(nlh, sizeof(struct tcmsg)))
		return NL_OK;
	tcm = nlmsg_data(nlh);
	/* a key node (not a hash table: those carry no selector) */
	if (tcm->tcm_ifindex != c->ifindex || (tcm->tcm_handle & 0xfff) == 0 ||
	    nlmsg_parse(nlh, sizeof(*tcm), tb, TCA_MAX, NULL) < 0 || !tb[TCA_KIND] ||
	    !tb[TCA_OPTIONS])
		return NL_OK;
	nla_strlcpy(kind, tb[TCA_KIND], sizeof(kind));
	if (strcmp(kind, "u32") != 0 ||
	    nla_parse_nested(uo, TCA_U32_MAX, tb[TCA_OPTIONS], NULL) < 0 ||
	    !uo[TCA_U32_SEL] || !uo[TCA_U32_CLASSID] ||
	    nla_get_u32(uo[TCA_U32_CLASSID]) != 0x00010001u ||
	    (size_t)nla_len(uo[TCA_U32_SEL]) < sizeof(*sel))
		return NL_OK;
	sel = nla_data(uo[TCA_U32_SEL]);
	if ((size_t)nla_len(uo[TCA_U32_SEL]) < sizeof(*sel) + sel->nkeys * sizeof(sel->keys[0]))
		return NL_OK;
	v6 = (TC_H_MIN(tcm->tcm_info) == htons(ETH_P_IPV6));
	c->st->scoped = true;
	for (i = 0; i < sel->nkeys; i++) {
		const struct tc_u32_key *k = &sel->keys[i];
		uint32_t mask = ntohl(k->mask);
		int bits = 0;

		while (bits < 32 && (mask & (0x80000000u >> bits)))
			bits++;
		if (!v6 && k->off == 16) {
			memcpy(c->st->dst_addr, &k->val, 4);
			c->st->dst_plen = (uint8_t)bits;
			c->st->dst_family = AF_INET;
		} else if (v6 && k->off >= 24 && k->off <= 36 && k->off % 4 == 0) {
			memcpy(c->st->dst6 + (k->off - 24), &k->val, 4);
			if (c->st->dst_family != AF_INET6) {
				c->st->dst_family = AF_INET6;
				c->st->dst_plen = 0;
			}
			c->st->dst_plen = (uint8_t)(c->st->dst_plen + bits);
		} else if (k->off == (v6 ? 40 : 20) && mask == 0x0000ffffu) {
			c->st->dport = (uint16_t)(ntohl(k->val) & 0xffff);
		}
	}
	return NL_OK;
}

/* For linklab's htb root: rate/burst of class 1:1 into the root entry and
 * the u32 scope into st. Failures leave them unset (the tree is shown). */
static void dump_scope(struct nl_sock *sk, int ifindex, struct qdisc_state *st)
{
	struct scope_ctx c = { ifindex, &st->q[0], st };
	struct talk_ctx t;
	struct tcmsg tcm;
	int type;

	for (type = RTM_GETTCLASS; type <= RTM_GETTFILTER; type += 4) {
		struct nl_msg *m = nlmsg_alloc_simple(type, NLM_F_DUMP);

		if (!m)
			return;
		memset(&tcm, 0, sizeof(tcm));
		tcm.tcm_family = AF_UNSPEC;
		tcm.tcm_ifindex = ifindex;
		tcm.tcm_parent = type == RTM_GETTFILTER ? 0x00010000u : 0;
		if (nlmsg_append(m, &tcm, sizeof(tcm), NLMSG_ALIGNTO) == 0) {
			memset(&t, 0, sizeof(t));
			t.valid = type == RTM_GETTCLASS ? on_class : on_filter;
			t.arg = &c;
			exchange(sk, m, &t, "dump scope", NULL, NULL);
		}
		nlmsg_free(m);
	}
}

int nlqdisc_dump(struct nl_sock *sk, int ifindex, struct qdisc_state *st,
		 struct nlqdisc_root *root, struct ll_err *err)
{
	struct talk_ctx c;
	struct dump_ctx d;
	struct nl_msg *m;
	struct tcmsg tcm;
	int rc;

	st->n = 0;
	st->has_ingress = false;
	st->scoped = false;
	st->dst_plen = 0;
	st->dport = 0;
	st->dst_family = 0;
	memset(st->dst6, 0, sizeof(st->dst6));
	if (root)
		memset(root, 0, sizeof(*root));
	m = nlmsg_alloc_simple(RTM_GETQDISC, NLM_F_DUMP);
	if (!m)
		return ll_err_set(err, -ENOMEM, "cannot allocate a netlink message");
	memset(&tcm, 0, sizeof(tcm));
	tcm.tcm_family = AF_UNSPEC;
	tcm.tcm_ifindex = ifindex;
	if (nlmsg_append(m, &tcm, sizeof(tcm), NLMSG_ALIGNTO) < 0) {
		nlmsg_free(m);
		return ll_err_set(err, -ENOMEM, "netlink message too small");
	}
	memset(&c, 0, sizeof(c));
	memset(&d, 0, sizeof(d));
	d.ifindex = ifindex;
	d.st = st;
	d.root = root;
	c.valid = on_dump;
	c.arg = &d;
	rc = exchange(sk, m, &c, "dump qdiscs", NULL, err);
	nlmsg_free(m);
	if (rc < 0) {
		st->n = 0;
		return rc;
	}
	if (d.bad) {
		st->n = 0;
		return ll_err_set(err, -EIO, "dump qdiscs: %s", d.perr.msg);
	}
	if (st->n > 0 && st->q[0].handle == 0x00010000u &&
	    strcmp(st->q[0].kind, "htb") == 0)
		dump_scope(sk, ifindex, st);
	return 0;
}

/* --- does this kernel have netem? ----------------------------------------- */

static void *netem_probe(void *arg)
{
	int *res = arg;
	struct tc_netem_qopt q = { .limit = 1000 };
	struct nlqdisc_target t = { .ifindex = 1, .parent = TC_H_ROOT,
				    .handle = 0x10000, .verb = NLQ_REPLACE };
	struct ll_err err = { 0 };
	struct nl_sock *sk;
	struct nl_msg *m = NULL;
	int rc;

	if (unshare(CLONE_NEWNET) < 0) {
		*res = -errno;
		return NULL;
	}
	sk = nl_socket_alloc();
	if (!sk) {
		*res = -ENOMEM;
		return NULL;
	}
	rc = nl_connect(sk, NETLINK_ROUTE) < 0 ? -EIO : 0;
	if (rc == 0)
		rc = nlqdisc_build_raw(&t, "netem", &q, sizeof(q), &m, &err);
	if (rc == 0)
		rc = nlqdisc_talk(sk, m, "netem probe", NULL, &err);
	nlmsg_free(m);
	nl_socket_free(sk);
	*res = rc == 0 ? 1 : rc == -ENOENT ? 0 : rc;
	return NULL;
}

int nlqdisc_has_netem(void)
{
	pthread_t th;
	int res = -EIO;

	if (pthread_create(&th, NULL, netem_probe, &res) != 0)
		return -EAGAIN;
	pthread_join(th, NULL);
	return res;
}
