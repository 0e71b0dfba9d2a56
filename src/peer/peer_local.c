/* SPDX-License-Identifier: MIT */
/* peer_local.c - the local peer: links, routes and qdiscs of this host over
 * rtnetlink (libnl-route-3), with the journal taken before the first change.
 *
 * Layout (impair.h): rate -> root tbf 1:; netem -> root netem 1:; both ->
 * root tbf 1: with netem 10: under 1:1. Changes use NLM_F_CREATE|REPLACE;
 * a root of another kind at handle 1: is deleted first (the kernel refuses to
 * "replace" a qdisc by one of another kind at the same handle: "Invalid qdisc
 * name"). All or nothing: if a step fails the journalled original is put
 * back. */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <linux/ethtool.h>
#include <linux/pkt_sched.h>
#include <linux/sockios.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/attr.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/tc.h>
#include <netlink/socket.h>

#include "linklab/peer/enghook.h"
#include "linklab/peer/hosttune.h"
#include "linklab/netlink/flowfilter.h"
#include "linklab/model/impair.h"
#include "linklab/peer/journal.h"
#include "linklab/peer/remote_record.h"
#include "linklab/netlink/nlqdisc.h"
#include "linklab/netlink/nltree.h"
#include "linklab/peer/peer.h"
#include "linklab/remote/tccmd.h"
#include "linklab/peer/hostinfo.h"

#define H_ROOT  0x00010000u     /* 1:   */
#define H_CLASS 0x00010001u     /* 1:1  */
#define H_NETEM 0x000a0000u     /* 10:  */
#define H_CLASS2 0x00010002u    /* 1:2  (unshaped default class) */
#define H_INGRESS 0xffff0000u   /* ffff: */

struct local {
	struct nl_sock *sk;
	uint64_t netns;
	uint64_t cookie;        /* SO_NETNS_COOKIE, 0 unknown */
	int netem_ok;           /* 0 unknown, 1 present, -1 missing */
	bool force;             /* --force: apply over a state linklab cannot
				 * rebuild; clear over a state it did not put */
	char notes[4096];
	int engine_mode;        /* enum enghook_mode */
	int exclude_port;       /* TCP port kept out of the endpoint engine */
};

static void note(struct local *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct local *l, const char *fmt, ...)
{
	size_t n = strlen(l->notes);
	va_list ap;

	if (n + 2 >= sizeof(l->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(l->notes + n, sizeof(l->notes) - n - 1, fmt, ap);
	va_end(ap);
	n = strlen(l->notes);
	l->notes[n] = '\n';
	l->notes[n + 1] = '\0';
}

static struct local *local_of(struct peer *p)
{
	return p->priv;
}

/* One RTM_GETLINK of dev into *link (caller puts it); what names the
 * reading in the error ("the link", "the link counters"). */
static int link_get(struct local *l, const char *dev, const char *what,
		    struct rtnl_link **link, struct ll_err *err)
{
	int rc;

	*link = NULL;
	if (!dev || !*dev || strlen(dev) >= IF_NAMESIZE)
		return ll_err_set(err, -EINVAL, "'%s' is not an interface name",
				  dev ? dev : "");
	rc = rtnl_link_get_kernel(l->sk, 0, dev, link);
	if (rc < 0) {
		if (rc == -NLE_OBJ_NOTFOUND || rc == -NLE_NODEV)
			return ll_err_set(err, -ENODEV, "%s: no such interface", dev);
		return ll_err_set(err, -EIO, "%s: reading %s failed: %s", dev, what,
				  nl_geterror(rc));
	}
	return 0;
}

/* ifindex, MTU and (mac may be NULL) link address of dev. */
static int dev_info_mac(struct local *l, const char *dev, int *ifindex,
			unsigned *mtu, char *mac, size_t maclen, struct ll_err *err)
{
	struct rtnl_link *link;
	int rc = link_get(l, dev, "the link", &link, err);

	if (rc < 0)
		return rc;
	*ifindex = rtnl_link_get_ifindex(link);
	if (mtu)
		*mtu = rtnl_link_get_mtu(link);
	if (mac) {
		struct nl_addr *a = rtnl_link_get_addr(link);

		mac[0] = '\0';
		if (a && nl_addr_get_len(a) > 0)
			nl_addr2str(a, mac, maclen);
	}
	rtnl_link_put(link);
	return 0;
}

static int dev_info(struct local *l, const char *dev, int *ifindex,
		    unsigned *mtu, struct ll_err *err)
{
	return dev_info_mac(l, dev, ifindex, mtu, NULL, 0, err);
}

/* --- link_stats ---------------------------------------------------------- */

/* One RTM_GETLINK of dev (libnl parses IFLA_STATS64, else IFLA_STATS). */
static int local_link_stats(struct peer *p, const char *dev, struct link_stats *out,
			    struct ll_err *err)
{
	struct rtnl_link *link;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = link_get(local_of(p), dev, "the link counters", &link, err);
	if (rc < 0)
		return rc;
	out->rx_packets = rtnl_link_get_stat(link, RTNL_LINK_RX_PACKETS);
	out->rx_bytes = rtnl_link_get_stat(link, RTNL_LINK_RX_BYTES);
	out->tx_packets = rtnl_link_get_stat(link, RTNL_LINK_TX_PACKETS);
	out->tx_bytes = rtnl_link_get_stat(link, RTNL_LINK_TX_BYTES);
	out->rx_dropped = rtnl_link_get_stat(link, RTNL_LINK_RX_DROPPED);
	out->tx_dropped = rtnl_link_get_stat(link, RTNL_LINK_TX_DROPPED);
	rtnl_link_put(link);
	return 0;
}

/* --- list_links ---------------------------------------------------------- */

/* Link speed in Mbit/s from ethtool (ETHTOOL_GSET, in this process's
 * network namespace, unlike /sys); 0 when unknown. */
static uint64_t link_speed(int fd, const char *name)
{
	struct ethtool_cmd ec;
	struct ifreq ifr;
	uint32_t sp;

	if (fd < 0)
		return 0;
	memset(&ec, 0, sizeof(ec));
	memset(&ifr, 0, sizeof(ifr));
	ec.cmd = ETHTOOL_GSET;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (char *)&ec;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		return 0;
	sp = ethtool_cmd_speed(&ec);
	return sp == 0 || sp == (uint32_t)SPEED_UNKNOWN ? 0 : sp;
}

static int local_list_links(struct peer *p, struct link_list *out,
			    struct ll_err *err)
{
	struct local *l = local_of(p);
	struct nl_cache *lc = NULL, *ac = NULL, *qc = NULL;
	struct nl_object *o;
	int rc, fd;

	memset(out, 0, sizeof(*out));
	rc = rtnl_link_alloc_cache(l->sk, AF_UNSPEC, &lc);
	if (rc < 0)
		return ll_err_set(err, -EIO, "listing links: %s", nl_geterror(rc));
	rc = rtnl_addr_alloc_cache(l->sk, &ac);
	if (rc < 0) {
		nl_cache_free(lc);
		return ll_err_set(err, -EIO, "listing addresses: %s", nl_geterror(rc));
	}
	rc = rtnl_qdisc_alloc_cache(l->sk, &qc);
	if (rc < 0)
		qc = NULL;      /* kinds stay empty; links are still worth showing */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (o = nl_cache_get_first(lc); o && out->n < PEER_MAX_LINKS;
	     o = nl_cache_get_next(o)) {
		struct rtnl_link *k = (struct rtnl_link *)o;
		struct link_info *li = &out->l[out->n++];
		struct nl_object *a;
		char st[32];
		size_t i;

		snprintf(li->name, sizeof(li->name), "%s", rtnl_link_get_name(k) ?
			 rtnl_link_get_name(k) : "?");
		li->ifindex = rtnl_link_get_ifindex(k);
		li->up = (rtnl_link_get_flags(k) & IFF_UP) != 0;
		li->mtu = rtnl_link_get_mtu(k);
		li->speed_mbps = link_speed(fd, li->name);
		rtnl_link_operstate2str(rtnl_link_get_operstate(k), st, sizeof(st));
		for (i = 0; st[i] && i < sizeof(li->state) - 1; i++)
			li->state[i] = (char)(st[i] >= 'a' && st[i] <= 'z' ?
					      st[i] - 32 : st[i]);
		li->state[i] = '\0';
		for (a = nl_cache_get_first(ac); a; a = nl_cache_get_next(a)) {
			struct rtnl_addr *ad = (struct rtnl_addr *)a;
			struct nl_addr *loc = rtnl_addr_get_local(ad);

			if (rtnl_addr_get_ifindex(ad) != li->ifindex || !loc ||
			    li->naddrs >= PEER_MAX_ADDRS)
				continue;
			nl_addr2str(loc, li->addrs[li->naddrs], sizeof(li->addrs[0]));
			li->naddrs++;
		}
		if (qc) {
			struct rtnl_qdisc *q = rtnl_qdisc_get_by_parent(qc, li->ifindex,
									TC_H_ROOT);

			if (q) {
				const char *kind = rtnl_tc_get_kind(TC_CAST(q));

				snprintf(li->qdisc, sizeof(li->qdisc), "%s", kind ? kind : "");
				rtnl_qdisc_put(q);
			}
		}
	}
	if (fd >= 0)
		close(fd);
	nl_cache_free(lc);
	nl_cache_free(ac);
	if (qc)
		nl_cache_free(qc);
	return 0;
}

/* --- route_dev ----------------------------------------------------------- */

struct route_ctx { int oif; };

static int on_route(struct nl_msg *m, void *arg)
{
	struct route_ctx *c = arg;
	struct nlattr *tb[RTA_MAX + 1];

	if (nlmsg_hdr(m)->nlmsg_type != RTM_NEWROUTE ||
	    nlmsg_parse(nlmsg_hdr(m), sizeof(struct rtmsg), tb, RTA_MAX, NULL) < 0)
		return NL_OK;
	if (tb[RTA_OIF])
		c->oif = (int)nla_get_u32(tb[RTA_OIF]);
	return NL_OK;
}

static int local_route_dev(struct peer *p, const char *addr, char *dev,
			   size_t len, struct ll_err *err)
{
	struct local *l = local_of(p);
	unsigned char buf[16];
	struct route_ctx c = { 0 };
	struct rtmsg rt;
	struct nl_msg *m;
	char name[IF_NAMESIZE];
	int fam, alen, rc;

	if (addr && inet_pton(AF_INET, addr, buf) == 1) {
		fam = AF_INET;
		alen = 4;
	} else if (addr && inet_pton(AF_INET6, addr, buf) == 1) {
		fam = AF_INET6;
		alen = 16;
	} else {
		return ll_err_set(err, -EINVAL, "'%s' is not an IPv4 or IPv6 address",
				  addr ? addr : "");
	}
	m = nlmsg_alloc_simple(RTM_GETROUTE, 0);
	if (!m)
		return ll_err_set(err, -ENOMEM, "cannot allocate a netlink message");
	memset(&rt, 0, sizeof(rt));
	rt.rtm_family = (unsigned char)fam;
	rt.rtm_dst_len = (unsigned char)(alen * 8);
	if (nlmsg_append(m, &rt, sizeof(rt), NLMSG_ALIGNTO) < 0 ||
	    nla_put(m, RTA_DST, alen, buf) < 0) {
		nlmsg_free(m);
		return ll_err_set(err, -ENOMEM, "netlink message too small");
	}
	rc = nlqdisc_request(l->sk, m, on_route, &c, "route lookup", err);
	nlmsg_free(m);
	if (rc < 0) {
		ll_err_prefix(err, "%s: ", addr);
		return rc;
	}
	if (c.oif <= 0 || !if_indextoname((unsigned)c.oif, name))
		return ll_err_set(err, -ENETUNREACH, "%s: no route with an output interface",
				  addr);
	if (strlen(name) >= len)
		return ll_err_set(err, -ENOSPC, "interface name too long");
	snprintf(dev, len, "%s", name);
	return 0;
}

/* --- read_qdiscs --------------------------------------------------------- */

static int local_read_qdiscs(struct peer *p, const char *dev,
			     struct qdisc_state *out, struct ll_err *err)
{
	struct local *l = local_of(p);
	int ifindex, rc;

	memset(out, 0, sizeof(*out));
	rc = dev_info(l, dev, &ifindex, NULL, err);
	if (rc < 0)
		return rc;
	snprintf(out->dev, sizeof(out->dev), "%s", dev);
	rc = nlqdisc_dump(l->sk, ifindex, out, NULL, err);
	if (rc < 0)
		ll_err_prefix(err, "%s: ", dev);
	return rc;
}

/* --- netlink steps ------------------------------------------------------- */

static int send_built(struct local *l, struct nl_msg *m, int rc,
		      const char *what, const char *kind, struct ll_err *err)
{
	if (rc < 0)
		return rc;
	rc = nlqdisc_talk(l->sk, m, what, kind, err);
	nlmsg_free(m);
	return rc;
}

static int del_qdisc(struct local *l, const char *dev, int ifindex,
		     uint32_t parent, uint32_t handle, struct ll_err *err)
{
	struct nlqdisc_target t = { ifindex, parent, handle, 0 };
	struct nl_msg *m = NULL;
	char what[64];

	snprintf(what, sizeof(what), "delete qdisc on %s", dev);
	return send_built(l, m, nlqdisc_build_del(&t, &m, err), what, NULL, err);
}

/* A version-1 record (root only) as a tree of that one root. */
static void tree_of_v1(const struct journal_entry *e, struct nltree *t)
{
	memset(t, 0, offsetof(struct nltree, o));
	t->n = 1;
	memset(&t->o[0], 0, sizeof(t->o[0]));
	t->o[0].type = NLT_QDISC;
	snprintf(t->o[0].kind, sizeof(t->o[0].kind), "%s", e->kind);
	t->o[0].parent = TC_H_ROOT;
	t->o[0].handle = e->handle;
	t->o[0].optlen = (uint16_t)(e->optlen < NLTREE_OPTS_MAX ? e->optlen : 0);
	memcpy(t->o[0].opts, e->opts, t->o[0].optlen);
}

/* Put the journalled original back on dev and read it back (does not touch
 * the journal): the whole tree of a version-2 record; the root of a
 * version-1 one. */
static int restore(struct local *l, const char *dev, int ifindex,
		   const struct journal_entry *e, struct ll_err *err)
{
	struct nltree *t;
	int rc;

	if (e->has_tree)
		return nltree_restore(l->sk, ifindex, dev, &e->tree, err);
	if (e->is_default) {
		struct qdisc_state st;
		struct nlqdisc_root root;

		rc = nlqdisc_dump(l->sk, ifindex, &st, &root, err);
		if (rc < 0)
			return rc;
		if (!root.found || (root.handle >> 16) == 0)
			return 0;
		return del_qdisc(l, dev, ifindex, TC_H_ROOT, 0, err);
	}
	t = malloc(sizeof(*t));
	if (!t)
		return ll_err_set(err, -ENOMEM, "out of memory");
	tree_of_v1(e, t);
	rc = nltree_restore(l->sk, ifindex, dev, t, err);
	free(t);
	return rc;
}

/* Is netem available? Tried once per session in a short-lived thread that
 * unshare()s its own network namespace (a per-thread property) and asks for
 * netem on that namespace's lo, so nothing real is touched and no fork is
 * needed in a process that may run stream threads. 1 yes, 0 no, -1 cannot
 * tell (no privilege to unshare: then the real request decides). */
static void *probe_thread(void *arg)
{
	int *res = arg;
	struct impair_plan p;
	struct nlqdisc_target t = { 1, TC_H_ROOT, H_ROOT, NLQ_REPLACE };
	struct nl_sock *sk;
	struct nl_msg *m = NULL;
	int rc;

	*res = -1;
	if (unshare(CLONE_NEWNET) < 0)
		return NULL;
	sk = nl_socket_alloc();
	if (!sk)
		return NULL;
	if (nl_connect(sk, NETLINK_ROUTE) == 0) {
		memset(&p, 0, sizeof(p));
		p.netem = true;
		p.limit = 1000;
		if (nlqdisc_build_netem(&t, &p, false, &m, NULL) == 0) {
			rc = nlqdisc_talk(sk, m, "probe", "netem", NULL);
			*res = rc == 0 ? 1 : rc == -ENOTSUP ? 0 : -1;
			nlmsg_free(m);
		}
	}
	nl_socket_free(sk);
	return NULL;
}

static int probe_netem(struct local *l)
{
	pthread_t th;
	int res = -1;

	if (l->netem_ok)
		return l->netem_ok > 0;
	/* tests of the roll-back path turn the probe off */
	if (getenv("LINKLAB_NO_NETEM_PROBE"))
		return -1;
	if (pthread_create(&th, NULL, probe_thread, &res) != 0)
		return -1;
	pthread_join(th, NULL);
	if (res >= 0)
		l->netem_ok = res ? 1 : -1;
	return res;
}

/* --- apply / clear ------------------------------------------------------- */

static void err_append(struct ll_err *err, const char *s)
{
	size_t n, m;

	if (!err)
		return;
	n = strlen(err->msg);
	m = strlen(s);
	if (n + m >= sizeof(err->msg))
		m = sizeof(err->msg) - 1 - n;
	memcpy(err->msg + n, s, m);
	err->msg[n + m] = '\0';
}

static int make_plan(struct local *l, const char *dev, const struct impair *d,
		     int *ifindex, struct impair_plan *plan, struct ll_err *err)
{
	struct ll_diag dg;
	unsigned mtu = 0;
	int rc;

	rc = dev_info(l, dev, ifindex, &mtu, err);
	if (rc < 0)
		return rc;
	if (impair_is_empty(d))
		return ll_err_set(err, -EINVAL,
				  "%s: empty dial, nothing to apply (use clear to restore)",
				  dev);
	ll_diag_clear(&dg);
	if (impair_plan(d, mtu, hostinfo_kernel_hz(), plan, &dg) < 0) {
		rc = ll_diag_to_err(&dg, err);
		ll_err_prefix(err, "%s: ", dev);
		return rc;
	}
	return 0;
}

static bool has_netem_child(const struct qdisc_state *st)
{
	int i;

	for (i = 1; i < st->n; i++)
		if (st->q[i].parent == H_CLASS && strcmp(st->q[i].kind, "netem") == 0)
			return true;
	return false;
}

static int install_scoped(struct local *l, const char *dev, int ifindex,
			  const struct impair_plan *plan, bool keep_root,
			  struct ll_err *err)
{
	struct nlqdisc_target ch = { ifindex, H_CLASS, H_NETEM, NLQ_REPLACE };
	uint64_t shaped = plan->tbf ? plan->rate_Bps : QDISC_UNSHAPED_BPS / 8;
	uint32_t burst = plan->tbf ? plan->burst : tccmd_unshaped_burst(plan);
	struct nl_msg *m = NULL;
	char what[80];
	int rc;

	/* htb has no "change" ("Change operation not supported by specified
	 * qdisc"): an htb 1: of ours that is already there stays */
	if (!keep_root) {
		snprintf(what, sizeof(what), "replace root htb on %s", dev);
		rc = send_built(l, m, flowfilter_build_htb(ifindex, H_ROOT, 2, &m, err), what,
				"htb", err);
		if (rc < 0)
			return rc;
	}
	snprintf(what, sizeof(what), "replace htb class 1:1 on %s", dev);
	rc = send_built(l, m, flowfilter_build_htb_class(ifindex, H_ROOT, H_CLASS, shaped,
						 burst, hostinfo_kernel_hz(), &m, err),
			what, "htb", err);
	if (rc < 0)
		return rc;
	snprintf(what, sizeof(what), "replace htb class 1:2 on %s", dev);
	rc = send_built(l, m, flowfilter_build_htb_class(ifindex, H_ROOT, H_CLASS2,
						 QDISC_UNSHAPED_BPS / 8,
						 tccmd_unshaped_burst(plan),
						 hostinfo_kernel_hz(), &m, err),
			what, "htb", err);
	if (rc < 0)
		return rc;
	if (plan->netem) {
		snprintf(what, sizeof(what), "replace netem 10: under 1:1 on %s", dev);
		rc = send_built(l, m, nlqdisc_build_netem(&ch, plan, true, &m, err),
				what, "netem", err);
		if (rc < 0)
			return rc;
	}
	/* start from no filter (a previous scope may have had the other
	 * family's); "nothing to delete" is fine */
	snprintf(what, sizeof(what), "flush filters on %s", dev);
	rc = send_built(l, m, flowfilter_build_flow_flush(ifindex, H_ROOT, &m, err), what,
			"u32", err);
	if (rc < 0 && rc != -ENOENT && rc != -EINVAL)
		return rc;
	ll_err_clear(err);
	if (plan->dst_family == AF_INET || (!plan->dst_plen && plan->dport)) {
		snprintf(what, sizeof(what), "replace u32 filter on %s", dev);
		rc = send_built(l, m, flowfilter_build_flow(ifindex, H_ROOT, H_CLASS,
						    plan->dst_addr,
						    plan->dst_family == AF_INET ?
						    plan->dst_plen : 0,
						    plan->dport, &m, err),
				what, "u32", err);
		if (rc < 0)
			return rc;
	}
	if (plan->dst_family == AF_INET6 || (!plan->dst_plen && plan->dport)) {
		snprintf(what, sizeof(what), "replace u32 ipv6 filter on %s", dev);
		rc = send_built(l, m, flowfilter_build_flow6(ifindex, H_ROOT, H_CLASS, plan->dst6,
						     plan->dst_family == AF_INET6 ?
						     plan->dst_plen : 0,
						     plan->dport, &m, err),
				what, "u32", err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int install(struct local *l, const char *dev, int ifindex,
		   const struct impair_plan *plan, const struct qdisc_state *st,
		   const struct nlqdisc_root *root, struct ll_err *err)
{
	struct nlqdisc_target rt = { ifindex, TC_H_ROOT, H_ROOT, NLQ_REPLACE };
	struct nlqdisc_target ch = { ifindex, H_CLASS, H_NETEM, NLQ_REPLACE };
	const char *kind = plan->scoped ? "htb" : plan->tbf ? "tbf" : "netem";
	bool classful = plan->scoped || plan->tbf;
	struct nl_msg *m = NULL;
	bool same_root = root->found && root->handle == H_ROOT &&
			 strcmp(root->kind, kind) == 0;
	char what[64];
	int rc;

	if (root->found && root->handle == H_ROOT &&
	    (strcmp(root->kind, kind) != 0 ||
	     (classful && !plan->netem && has_netem_child(st)))) {
		rc = del_qdisc(l, dev, ifindex, TC_H_ROOT, 0, err);
		if (rc < 0)
			return rc;
		same_root = false;
	}
	/* The kernel keeps a netem's delay distribution table on "change" (an
	 * absent TCA_NETEM_DELAY_DIST leaves it, and no table can be sent to
	 * mean uniform), so going back to uniform jitter needs a fresh netem. */
	if (same_root && plan->netem && plan->jitter_ns &&
	    plan->dist == IMP_DIST_UNIFORM) {
		if (!classful)
			rc = del_qdisc(l, dev, ifindex, TC_H_ROOT, 0, err);
		else if (has_netem_child(st))
			rc = del_qdisc(l, dev, ifindex, H_CLASS, H_NETEM, err);
		else
			rc = 0;
		if (rc < 0)
			return rc;
	}
	if (plan->scoped)
		return install_scoped(l, dev, ifindex, plan, same_root, err);
	snprintf(what, sizeof(what), "replace root %s on %s", kind, dev);
	if (plan->tbf)
		rc = send_built(l, m, nlqdisc_build_tbf(&rt, plan, &m, err), what,
				"tbf", err);
	else
		rc = send_built(l, m, nlqdisc_build_netem(&rt, plan, true, &m, err),
				what, "netem", err);
	if (rc < 0 || !(plan->tbf && plan->netem))
		return rc;
	snprintf(what, sizeof(what), "replace netem 10: under 1:1 on %s", dev);
	return send_built(l, m, nlqdisc_build_netem(&ch, plan, true, &m, err),
			  what, "netem", err);
}

/* Remove the ingress side of dev: its ingress qdisc (which takes the mirred
 * filter with it) and the IFB device. Absent pieces are fine. */
static int undo_ingress(struct local *l, const char *dev, int ifindex,
			const char *ifb, struct ll_err *err)
{
	struct qdisc_state st;
	int rc;

	rc = nlqdisc_dump(l->sk, ifindex, &st, NULL, err);
	if (rc < 0)
		return rc;
	if (st.has_ingress) {
		rc = del_qdisc(l, dev, ifindex, TC_H_INGRESS, H_INGRESS, err);
		if (rc < 0)
			return rc;
	}
	return flowfilter_ifb_delete(l->sk, ifb, err);
}

/* Ingress: IFB device, ingress qdisc + mirred redirect on dev, plan on the
 * IFB. The journal entry of dev already names the IFB. */
static int install_ingress(struct local *l, const char *dev, int ifindex,
			   const struct impair_plan *plan, const char *ifb,
			   struct ll_err *err)
{
	struct qdisc_state st;
	struct nlqdisc_root root;
	struct nl_msg *m = NULL;
	bool created;
	char what[80];
	int ifb_idx, rc;

	rc = flowfilter_ifb_ensure(l->sk, ifb, &ifb_idx, &created, err);
	if (rc < 0)
		return rc;
	snprintf(what, sizeof(what), "replace ingress qdisc on %s", dev);
	rc = send_built(l, m, flowfilter_build_ingress(ifindex, NLM_F_CREATE | NLM_F_REPLACE,
					       &m, err), what, "ingress", err);
	if (rc < 0)
		return rc;
	snprintf(what, sizeof(what), "redirect %s ingress to %s", dev, ifb);
	rc = send_built(l, m, flowfilter_build_mirred(ifindex, ifb_idx, &m, err), what,
			"u32", err);
	if (rc < 0)
		return rc;
	rc = nlqdisc_dump(l->sk, ifb_idx, &st, &root, err);
	if (rc < 0)
		return rc;
	snprintf(st.dev, sizeof(st.dev), "%s", ifb);
	return install(l, ifb, ifb_idx, plan, &st, &root, err);
}

/* Changing qdiscs needs CAP_NET_ADMIN (bit 12 of CapEff in
 * /proc/self/status, see capabilities(7)); say so before anything else
 * fails in a less telling way (a root-owned journal, EPERM from netlink). */
static int need_net_admin(const char *dev, struct ll_err *err)
{
	char line[256];
	unsigned long long eff = ~0ULL;
	FILE *f = fopen("/proc/self/status", "r");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "CapEff: %llx", &eff) == 1)
				break;
		fclose(f);
	}
	if (eff & (1ULL << 12))
		return 0;
	return ll_err_set(err, -EPERM, "%s: changing qdiscs needs root or "
			  "CAP_NET_ADMIN (try sudo); nothing changed", dev);
}

/* Is the record e about the device dev is now (same namespace cookie and
 * link address, as far as both are known, and the same name)? */
static bool same_device(const struct local *l, const struct journal_entry *e,
			const char *dev, const char *mac, char *why, size_t len)
{
	if (e->cookie && l->cookie && e->cookie != l->cookie)
		snprintf(why, len, "its namespace (cookie %llu) is gone; this one is %llu",
			 (unsigned long long)e->cookie, (unsigned long long)l->cookie);
	else if (e->mac[0] && mac[0] && strcmp(e->mac, mac) != 0)
		snprintf(why, len, "it was %s with address %s; %s has %s", e->dev,
			 e->mac, dev, mac);
	else if (e->dev[0] && strcmp(e->dev, dev) != 0)
		snprintf(why, len, "it was %s; ifindex %d is now %s", e->dev,
			 e->ifindex, dev);
	else
		return true;
	return false;
}

static void record_path(const struct local *l, int ifindex, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%llu-%d.json", journal_dir(),
		 (unsigned long long)l->netns, ifindex);
}

/* The journal entry of dev for an apply: the one there (a record of
 * another device that recycled the numbers is dropped first), or a new one
 * holding the whole tc tree now on dev - refused (-ENOTSUP, nothing changed)
 * when a part of that tree cannot be re-created, unless --force. *fresh:
 * this apply made the record. */
static int take_record(struct local *l, const char *dev, int ifindex,
		       const char *mac, struct journal_entry *je, int *fresh,
		       struct ll_err *err)
{
	struct ll_err cerr = { 0 };
	const struct nltree_obj *r;
	char why[200], path[256];
	int rc;

	*fresh = 0;
	rc = journal_lookup(l->netns, ifindex, je, NULL);
	if (rc == 0 && !same_device(l, je, dev, mac, why, sizeof(why))) {
		record_path(l, ifindex, path, sizeof(path));
		note(l, "%s: dropped record %s of another interface (%s)", dev, path, why);
		journal_remove(l->netns, ifindex, NULL);
		rc = -ENOENT;
	}
	if (rc == 0)
		return 0;
	if (rc != -ENOENT) {
		record_path(l, ifindex, path, sizeof(path));
		return ll_err_set(err, -EINVAL, "%s: its record %s is damaged; nothing changed (linklab clear --forget --dev %s drops it)",
				  dev, path, dev);
	}
	memset(je, 0, offsetof(struct journal_entry, tree));
	rc = nltree_dump(l->sk, ifindex, &je->tree, err);
	if (rc < 0) {
		ll_err_prefix(err, "%s: nothing changed: ", dev);
		return rc;
	}
	if (nltree_check(&je->tree, &cerr) < 0) {
		if (!l->force)
			return ll_err_set(err, -ENOTSUP,
					  "%s: linklab could not put back what is there now (%s is not a kind or option it can re-create); nothing changed (--force applies anyway and loses it)",
					  dev, cerr.msg);
		{
			char dropped[300];

			nltree_drop_unknown(&je->tree, dropped, sizeof(dropped));
			note(l, "%s: --force: %s will not come back on clear", dev,
			     dropped[0] ? dropped : cerr.msg);
			snprintf(je->lost, sizeof(je->lost), "%.290s", dropped[0] ? dropped : cerr.msg);
		}
	}
	je->has_tree = true;
	je->netns = l->netns;
	je->ifindex = ifindex;
	je->cookie = l->cookie;
	snprintf(je->mac, sizeof(je->mac), "%s", mac);
	snprintf(je->dev, sizeof(je->dev), "%s", dev);
	r = nltree_root(&je->tree);
	if (r) {
		snprintf(je->kind, sizeof(je->kind), "%s", r->kind);
		je->handle = r->handle;
		je->optlen = r->optlen < sizeof(je->opts) ? r->optlen : 0;
		memcpy(je->opts, r->opts, je->optlen);
	}
	je->is_default = !r || (r->handle >> 16) == 0;
	rc = journal_record(je, err);
	if (rc < 0) {
		ll_err_prefix(err, "%s: nothing changed: ", dev);
		return rc;
	}
	*fresh = rc == 1;
	return 0;
}

static int apply_kernel(struct peer *p, const char *dev, const struct impair *d,
			struct ll_err *err)
{
	struct local *l = local_of(p);
	struct impair_plan plan;
	struct qdisc_state st;
	struct nlqdisc_root root;
	struct journal_entry *je = NULL;
	struct ll_err rerr = { 0 };
	char mac[24];
	int ifindex, rc, fresh = 0;

	l->notes[0] = '\0';
	rc = need_net_admin(dev, err);
	if (rc < 0)
		return rc;
	rc = make_plan(l, dev, d, &ifindex, &plan, err);
	if (rc == 0)
		rc = dev_info_mac(l, dev, &ifindex, NULL, mac, sizeof(mac), err);
	if (rc < 0)
		return rc;
	if (plan.netem && probe_netem(l) == 0)
		return nlqdisc_map_error(ENOENT, dev, "netem", NULL, err);
	rc = nlqdisc_dump(l->sk, ifindex, &st, &root, err);
	if (rc < 0) {
		ll_err_prefix(err, "%s: nothing changed: ", dev);
		return rc;
	}
	je = malloc(sizeof(*je));
	if (!je)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = take_record(l, dev, ifindex, mac, je, &fresh, err);
	if (rc < 0)
		goto out;
	if (plan.ingress) {
		char ifb[IF_NAMESIZE];
		bool had_ifb = je->ifb[0] != '\0';

		qdisc_ifb_name(dev, ifb, sizeof(ifb));
		if (st.has_ingress && !had_ifb) {
			rc = ll_err_set(err, -EBUSY,
					"%s: has an ingress qdisc linklab did not create; nothing changed (remove it with: tc qdisc del dev %s ingress)",
					dev, dev);
			if (fresh)
				journal_remove(l->netns, ifindex, NULL);
			goto out;
		}
		/* journal first: a kill -9 after this still gets cleaned up */
		rc = journal_set_ifb(l->netns, ifindex, ifb, err);
		if (rc < 0)
			goto out;
		rc = install_ingress(l, dev, ifindex, &plan, ifb, err);
		if (rc == 0 || had_ifb)
			goto out;
		if (undo_ingress(l, dev, ifindex, ifb, &rerr) == 0) {
			journal_set_ifb(l->netns, ifindex, "", NULL);
			if (fresh)
				journal_remove(l->netns, ifindex, NULL);
			err_append(err, "; the ingress side was removed again");
		} else {
			err_append(err, "; removing the ingress side failed too: ");
			err_append(err, rerr.msg);
		}
		goto out;
	}
	rc = install(l, dev, ifindex, &plan, &st, &root, err);
	if (rc == 0) {
		/* what clear expects to find: linklab's root */
		journal_set_applied(l->netns, ifindex, plan.scoped ? "htb" :
				    plan.tbf ? "tbf" : "netem", H_ROOT, NULL);
		goto out;
	}
	/* all or nothing: put the original back */
	if (restore(l, dev, ifindex, je, &rerr) == 0) {
		if (fresh)
			journal_remove(l->netns, ifindex, NULL);
		err_append(err, "; the original qdisc was restored");
	} else {
		err_append(err, "; restore failed too: ");
		err_append(err, rerr.msg);
	}
out:
	free(je);
	return rc;
}

/* Does dev hold what linklab put there (so a restore clobbers nothing the
 * user set since)? The root linklab's last apply left, or - a record
 * without one (an apply killed half-way, an ingress dial) - one of
 * linklab's roots (tbf, netem, htb at 1:) or the recorded root itself. */
static bool holds_ours(const struct journal_entry *je, const struct nltree *now,
		       char *found, size_t len)
{
	const struct nltree_obj *r = nltree_root(now);
	bool ok;

	if (r)
		nltree_describe(r, found, len);
	else
		snprintf(found, len, "no root qdisc");
	if (je->applied_kind[0])
		return r && !strcmp(r->kind, je->applied_kind) &&
		       r->handle == je->applied_handle;
	ok = r && r->handle == H_ROOT && (!strcmp(r->kind, "tbf") ||
		  !strcmp(r->kind, "netem") || !strcmp(r->kind, "htb"));
	return ok || (r && !strcmp(r->kind, je->kind) && r->handle == je->handle) ||
	       (!r && je->is_default);
}

static int clear_qdiscs(struct local *l, const char *dev, int ifindex,
			struct ll_err *err)
{
	struct journal_entry *je = malloc(sizeof(*je));
	struct nltree *now = malloc(sizeof(*now));
	char mac[24] = "", why[200], found[96], path[256];
	int rc, dummy;

	if (!je || !now) {
		free(je);
		free(now);
		return ll_err_set(err, -ENOMEM, "out of memory");
	}
	record_path(l, ifindex, path, sizeof(path));
	rc = journal_lookup(l->netns, ifindex, je, err);
	if (rc == -ENOENT && remote_record_exists(l->netns, dev)) {
		/* this host was B of an apply --peer whose session is gone */
		char rnote[600];

		ll_err_clear(err);
		dev_info_mac(l, dev, &dummy, NULL, mac, sizeof(mac), NULL);
		rc = remote_record_restore(l->netns, dev, ifindex, mac, rnote, sizeof(rnote), err);
		if (rnote[0])
			note(l, "%s", rnote);
		goto out;
	}
	if (rc == -ENOENT) {
		ll_err_clear(err);
		rc = 0;         /* linklab never touched it */
		goto out;
	}
	if (rc < 0) {
		rc = ll_err_set(err, rc, "%s: record %s is empty or damaged: nothing restored (linklab clear --forget --dev %s drops it)",
				dev, path, dev);
		goto out;
	}
	dev_info_mac(l, dev, &dummy, NULL, mac, sizeof(mac), NULL);
	if (!same_device(l, je, dev, mac, why, sizeof(why))) {
		note(l, "%s: record %s is of an interface that no longer exists (%s): dropped, nothing restored onto %s",
		     dev, path, why, dev);
		rc = journal_remove(l->netns, ifindex, err);
		goto out;
	}
	rc = nltree_dump(l->sk, ifindex, now, err);
	if (rc < 0)
		goto out;
	if (!l->force && !(je->has_tree && nltree_diff(&je->tree, now, why, sizeof(why)) == 0) &&
	    !holds_ours(je, now, found, sizeof(found))) {
		rc = ll_err_set(err, -EBUSY,
				"%s: holds %s, not what linklab applied (%s); not restoring over it: record %s kept (--force restores it anyway, linklab clear --forget --dev %s drops it)",
				dev, found, je->applied_kind[0] ? je->applied_kind : "tbf/netem/htb 1:",
				path, dev);
		goto out;
	}
	rc = restore(l, dev, ifindex, je, err);
	if (rc < 0) {
		err_append(err, "; record kept in ");
		err_append(err, path);
		goto out;
	}
	if (je->ifb[0]) {
		rc = flowfilter_ifb_delete(l->sk, je->ifb, err);
		if (rc < 0) {
			ll_err_prefix(err, "%s: removing the IFB device: ", dev);
			goto out;
		}
	}
	rc = journal_remove(l->netns, ifindex, err);
	if (rc == 0 && je->lost[0])
		note(l, "%s: restored, except what apply --force accepted losing: %s", dev,
		     je->lost);
out:
	free(je);
	free(now);
	return rc;
}

/* The endpoint engine's hook and the qdiscs of ifindex. */
static int clear_ifindex(struct local *l, const char *dev, int ifindex,
			 struct ll_err *err)
{
	int rc = enghook_stop(l->netns, ifindex, err);

	if (rc < 0)
		return rc;
	return clear_qdiscs(l, dev, ifindex, err);
}

/* Whether d goes to linklab's endpoint engine: --engine user, auto on a
 * kernel without sch_netem, or any dial with --exclude-ssh under auto (the
 * engine's hook skips the SSH port; the qdisc tree here has no such filter,
 * so a tbf or netem would shape the session too). */
static bool use_engine(struct local *l, const struct impair *d)
{
	if (l->engine_mode == ENGHOOK_KERNEL || impair_is_empty(d))
		return false;
	if (l->exclude_port > 0)
		return true;
	if (!impair_needs_netem(d))
		return false;
	return l->engine_mode == ENGHOOK_USER || probe_netem(l) == 0;
}

/* --exclude-ssh with --engine kernel: the kernel's tree on this host cannot
 * keep the SSH port out; refused before anything changes. */
static int exclude_check(const struct local *l, const struct impair *d, struct ll_err *err)
{
	if (l->engine_mode != ENGHOOK_KERNEL || l->exclude_port <= 0 || impair_is_empty(d))
		return 0;
	return ll_err_set(err, -ENOTSUP,
			  "--exclude-ssh with --engine kernel: on this host only linklab's "
			  "engine keeps TCP port %d out of the dial (the qdisc tree here has no "
			  "such filter); use --engine auto or user, or leave out --exclude-ssh",
			  l->exclude_port);
}

/* The whole dial to the endpoint engine (its rate is the model's token
 * bucket after the netem stage, as tbf over a netem child), the original
 * qdisc back on the interface. */
static int apply_engine(struct peer *p, const char *dev, const struct impair *d,
			struct ll_err *err)
{
	struct local *l = local_of(p);
	struct impair_plan plan;
	int ifindex, rc;

	rc = make_plan(l, dev, d, &ifindex, &plan, err);
	if (rc < 0)
		return rc;
	rc = enghook_start(l->netns, dev, ifindex, d, l->exclude_port, err);
	if (rc < 0)
		return rc;
	rc = clear_qdiscs(l, dev, ifindex, err);
	if (rc < 0) {
		enghook_stop(l->netns, ifindex, NULL);
		err_append(err, "; the endpoint engine was stopped");
	}
	return rc;
}

static int local_apply(struct peer *p, const char *dev, const struct impair *d,
		       struct ll_err *err)
{
	struct local *l = local_of(p);
	struct enghook_info hook;
	int rc, ifindex;

	rc = need_net_admin(dev, err);
	if (rc == 0)
		rc = exclude_check(l, d, err);
	if (rc < 0)
		return rc;
	if (use_engine(l, d))
		return apply_engine(p, dev, d, err);
	rc = apply_kernel(p, dev, d, err);
	/* the kernel now holds the whole dial: a recorded engine hook goes
	 * (only when there is one: a chain no record names is clear's and
	 * the engine's next start's to sweep, and looking for one costs
	 * several iptables runs, 2.5x a whole tc replace + show) */
	if (rc == 0 && (ifindex = (int)if_nametoindex(dev)) > 0 &&
	    enghook_get(l->netns, ifindex, &hook) == 0)
		enghook_stop(l->netns, ifindex, NULL);
	return rc;
}

static int local_clear(struct peer *p, const char *dev, struct ll_err *err)
{
	struct local *l = local_of(p);
	int ifindex, rc;

	l->notes[0] = '\0';
	rc = need_net_admin(dev, err);
	if (rc < 0)
		return rc;
	rc = dev_info(l, dev, &ifindex, NULL, err);
	if (rc < 0)
		return rc;
	return clear_ifindex(l, dev, ifindex, err);
}

static void local_set_engine(struct peer *p, int mode, int exclude_port)
{
	local_of(p)->engine_mode = mode;
	local_of(p)->exclude_port = exclude_port;
}

static bool local_would_engine(struct peer *p, const struct impair *d)
{
	return use_engine(local_of(p), d);
}

static int local_engine_get(struct peer *p, const char *dev, struct enghook_info *out,
			    struct ll_err *err)
{
	int ifindex, rc = dev_info(local_of(p), dev, &ifindex, NULL, err);

	if (rc < 0)
		return rc;
	return enghook_get(local_of(p)->netns, ifindex, out);
}

/* Every journal entry of this network namespace: restore it; an entry whose
 * interface is gone is dropped (its qdiscs went with it), and so is one of
 * another device that recycled the numbers, each with a note. Every record
 * that fails is noted; damaged record files are noted by path. Entries of
 * other namespaces are left for a linklab running there. */
static int local_clear_all(struct peer *p, struct ll_err *err)
{
	struct local *l = local_of(p);
	struct journal_entry *list;
	char (*bad)[JOURNAL_PATH_MAX];
	struct ll_err one = { 0 };
	int n = 0, nb = 0, i, rc, failed = 0, nfail = 0;

	l->notes[0] = '\0';
	rc = need_net_admin("clear --all", err);
	if (rc < 0)
		return rc;
	list = calloc(JOURNAL_LIST_MAX, sizeof(*list));
	bad = calloc(JOURNAL_LIST_MAX, sizeof(*bad));
	if (!list || !bad) {
		free(list);
		free(bad);
		return ll_err_set(err, -ENOMEM, "out of memory");
	}
	rc = journal_list(list, JOURNAL_LIST_MAX, &n, err);
	if (rc == 0)
		rc = journal_list_damaged(bad, JOURNAL_LIST_MAX, &nb, err);
	if (rc < 0)
		goto out;
	ll_err_clear(err);
	for (i = 0; i < nb; i++) {
		note(l, "record %s is empty or damaged: nothing restored from it (linklab clear --all --forget drops it)",
		     bad[i]);
		nfail++;
		failed = -EINVAL;
	}
	for (i = 0; i < n; i++) {
		char name[IF_NAMESIZE], path[256];

		if (list[i].netns != l->netns)
			continue;
		if (!if_indextoname((unsigned)list[i].ifindex, name)) {
			/* its qdiscs went with it; an IFB of ours would not */
			if (list[i].ifb[0])
				flowfilter_ifb_delete(l->sk, list[i].ifb, NULL);
			record_path(l, list[i].ifindex, path, sizeof(path));
			journal_remove(l->netns, list[i].ifindex, NULL);
			note(l, "%s: record %s dropped: the interface no longer exists",
			     list[i].dev, path);
			continue;
		}
		rc = clear_ifindex(l, name, list[i].ifindex, &one);
		if (rc < 0) {
			note(l, "%s", one.msg);
			nfail++;
			if (!failed)
				failed = rc;
		}
	}
	rc = enghook_stop_all(l->netns, &one);
	if (rc < 0) {
		note(l, "%s", one.msg);
		nfail++;
		if (!failed)
			failed = rc;
	}
	if (nfail)
		ll_err_set(err, failed, "%d record%s not restored (each named above)",
			   nfail, nfail == 1 ? "" : "s");
	rc = failed;
out:
	free(list);
	free(bad);
	return rc;
}

static int local_records(struct peer *p, struct peer_record *out, int max,
			 int *n, struct ll_err *err)
{
	struct local *l = local_of(p);
	struct journal_entry *list = calloc(JOURNAL_LIST_MAX, sizeof(*list));
	char (*bad)[JOURNAL_PATH_MAX] = calloc(JOURNAL_LIST_MAX, sizeof(*bad));
	int nl = 0, nb = 0, i, rc;

	*n = 0;
	if (!list || !bad) {
		free(list);
		free(bad);
		return ll_err_set(err, -ENOMEM, "out of memory");
	}
	rc = journal_list(list, JOURNAL_LIST_MAX, &nl, err);
	if (rc == 0)
		rc = journal_list_damaged(bad, JOURNAL_LIST_MAX, &nb, err);
	for (i = 0; rc == 0 && i < nl && *n < max; i++) {
		struct peer_record *r = &out[(*n)++];
		const struct nltree_obj *root = list[i].has_tree ? nltree_root(&list[i].tree) : NULL;
		char d[96] = "";

		memset(r, 0, sizeof(*r));
		snprintf(r->dev, sizeof(r->dev), "%s", list[i].dev);
		r->ifindex = list[i].ifindex;
		snprintf(r->path, sizeof(r->path), "%s/%llu-%d.json", journal_dir(),
			 (unsigned long long)list[i].netns, list[i].ifindex);
		if (root)
			nltree_describe(root, d, sizeof(d));
		snprintf(r->what, sizeof(r->what), "%s%s%s (%d tc objects)%s%s%s%s",
			 list[i].netns == l->netns ? "" :
			 journal_netns_alive(list[i].netns) ? "other namespace; " :
			 "its namespace is gone, nothing can restore it (rm the file drops it); ",
			 d[0] ? d : list[i].kind, list[i].is_default ? " (kernel default)" : "",
			 list[i].has_tree ? list[i].tree.n : 1,
			 list[i].applied_kind[0] ? "; linklab applied " : "",
			 list[i].applied_kind, list[i].ifb[0] ? "; ifb " : "", list[i].ifb);
	}
	for (i = 0; rc == 0 && i < nb && *n < max; i++) {
		struct peer_record *r = &out[(*n)++];

		memset(r, 0, sizeof(*r));
		snprintf(r->path, sizeof(r->path), "%s", bad[i]);
		snprintf(r->what, sizeof(r->what), "empty or damaged");
		r->damaged = true;
	}
	free(list);
	free(bad);
	return rc;
}

static int local_forget(struct peer *p, const char *dev, struct ll_err *err)
{
	struct local *l = local_of(p);
	struct peer_record *r;
	int n = 0, i, rc, ifindex;

	l->notes[0] = '\0';
	if (dev) {
		char path[256];

		rc = dev_info(l, dev, &ifindex, NULL, err);
		if (rc < 0)
			return rc;
		record_path(l, ifindex, path, sizeof(path));
		if (access(path, F_OK) == 0)
			note(l, "%s: record %s dropped, nothing restored", dev, path);
		return journal_remove(l->netns, ifindex, err);
	}
	r = calloc(JOURNAL_LIST_MAX, sizeof(*r));
	if (!r)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = local_records(p, r, JOURNAL_LIST_MAX, &n, err);
	for (i = 0; rc == 0 && i < n; i++) {
		rc = journal_remove_path(r[i].path, err);
		if (rc == 0)
			note(l, "record %s (%s) dropped, nothing restored", r[i].path,
			     r[i].damaged ? "damaged" : r[i].dev);
	}
	free(r);
	return rc;
}

static const char *local_notes(struct peer *p)
{
	return local_of(p)->notes;
}

static void local_set_safety(struct peer *p, const struct peer_safety *s)
{
	local_of(p)->force = s->force;
}

static int local_dry_run(struct peer *p, const char *dev, const struct impair *d,
			 char *lines, size_t len, struct ll_err *err)
{
	struct impair_plan plan;
	int ifindex, rc;

	rc = exclude_check(local_of(p), d, err);
	if (rc == 0)
		rc = make_plan(local_of(p), dev, d, &ifindex, &plan, err);
	if (rc < 0)
		return rc;
	if (use_engine(local_of(p), d))
		return enghook_dry_run(local_of(p)->netns, dev, ifindex, d, local_of(p)->exclude_port, lines,
				       len, err);
	return tccmd_apply(dev, &plan, lines, len, err);
}

static int local_server_start(struct peer *p, int *port, struct ll_err *err)
{
	(void)p;
	(void)port;
	return ll_err_set(err, -ENOTSUP, "the local peer is the test client; no server here");
}

static int local_server_stop(struct peer *p, struct ll_err *err)
{
	(void)p;
	return ll_err_set(err, -ENOTSUP, "the local peer runs no server");
}

static void local_close(struct peer *p)
{
	struct local *l = p ? local_of(p) : NULL;

	if (!l)
		return;
	if (l->sk)
		nl_socket_free(l->sk);
	free(l);
	p->priv = NULL;
}

/* offloads and TCP sysctls, src/peer/hosttune.c */
static const struct peer_tune_ops local_tune_ops = {
	.offload_get = hosttune_op_offload_get,
	.offload_set = hosttune_op_offload_set,
	.sysctl_get = hosttune_op_sysctl_get,
	.sysctl_set = hosttune_op_sysctl_set,
	.tune_restore = hosttune_op_restore,
};

static const struct peer_counter_ops local_counter_ops = {
	.link_stats = local_link_stats,
};

static const struct peer_engine_ops local_engine_ops = {
	.set_engine = local_set_engine,
	.engine_get = local_engine_get,
	.would_engine = local_would_engine,
};

static const struct peer_journal_ops local_journal_ops = {
	.records = local_records,
	.forget = local_forget,
	.notes = local_notes,
};

static const struct peer_ops local_ops = {
	.name = "local",
	.list_links = local_list_links,
	.route_dev = local_route_dev,
	.read_qdiscs = local_read_qdiscs,
	.apply = local_apply,
	.clear = local_clear,
	.clear_all = local_clear_all,
	.dry_run = local_dry_run,
	.server_start = local_server_start,
	.server_stop = local_server_stop,
	.close = local_close,
	.set_safety = local_set_safety,
	.tune = &local_tune_ops,
	.counters = &local_counter_ops,
	.engine = &local_engine_ops,
	.journal = &local_journal_ops,
};

int peer_local_open(struct peer *p, struct ll_err *err)
{
	struct local *l;
	int rc;

	memset(p, 0, sizeof(*p));
	l = calloc(1, sizeof(*l));
	if (!l)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = journal_netns(&l->netns, err);
	if (rc < 0) {
		free(l);
		return rc;
	}
	l->cookie = journal_netns_cookie();
	l->sk = nl_socket_alloc();
	if (!l->sk) {
		free(l);
		return ll_err_set(err, -ENOMEM, "cannot allocate a netlink socket");
	}
	rc = nl_connect(l->sk, NETLINK_ROUTE);
	if (rc < 0) {
		nl_socket_free(l->sk);
		free(l);
		return ll_err_set(err, -EIO, "cannot open rtnetlink: %s", nl_geterror(rc));
	}
	/* the kernel's qdiscs unless the caller picks an engine (set_engine) */
	l->engine_mode = ENGHOOK_KERNEL;
	p->ops = &local_ops;
	p->priv = l;
	snprintf(p->label, sizeof(p->label), "A (this host)");
	return 0;
}
