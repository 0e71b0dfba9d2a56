/* SPDX-License-Identifier: MIT */
/* flowfilter.c - ingress qdisc, u32 filters (mirred redirect, per-flow
 * match), htb qdisc/class messages and the IFB link. Encodings: uapi
 * linux/pkt_cls.h, pkt_sched.h, tc_act/tc_mirred.h and what iproute2 6.1
 * tc/f_u32.c, m_mirred.c, q_htb.c, q_ingress.c send (tests/data). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_mirred.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "linklab/netlink/flowfilter.h"
#include "linklab/netlink/nlqdisc.h"

#define FLOWFILTER_MSG_SIZE 8192

static int flowfilter_start(int type, int flags, int ifindex, uint32_t handle,
		    uint32_t parent, uint32_t info, const char *kind,
		    struct nl_msg **out, struct ll_err *err)
{
	return nlqdisc_msg_start(type, flags, ifindex, handle, parent, info, kind,
				 FLOWFILTER_MSG_SIZE, out, err);
}

/* libnl 3.7 flags every nest NLA_F_NESTED; tc's addattr_nest does not. */
static struct nlattr *nest_plain(struct nl_msg *m, int type)
{
	struct nlattr *a = nla_nest_start(m, type);

	if (a)
		a->nla_type &= (uint16_t)~NLA_F_NESTED;
	return a;
}

static int nomem(struct nl_msg **out, struct ll_err *err)
{
	nlmsg_free(*out);
	*out = NULL;
	return ll_err_set(err, -ENOMEM, "netlink message too small for the options");
}

int flowfilter_build_ingress(int ifindex, int flags, struct nl_msg **out,
		     struct ll_err *err)
{
	return flowfilter_start(RTM_NEWQDISC, flags, ifindex, 0xffff0000u, TC_H_INGRESS,
			0, "ingress", out, err);
}

int flowfilter_build_mirred(int ifindex, int ifb_ifindex, struct nl_msg **out,
		    struct ll_err *err)
{
	struct {
		struct tc_u32_sel sel;
		struct tc_u32_key key;
	} s;
	struct tc_mirred mir;
	struct nlattr *opts, *act, *one, *aopts;
	int rc;

	rc = flowfilter_start(RTM_NEWTFILTER, NLM_F_CREATE, ifindex, FLOWFILTER_U32_HANDLE,
		      0xffff0000u, TC_H_MAKE(1u << 16, htons(ETH_P_ALL)), "u32",
		      out, err);
	if (rc < 0)
		return rc;
	memset(&s, 0, sizeof(s));
	s.sel.flags = TC_U32_TERMINAL;
	s.sel.nkeys = 1;                 /* match u32 0 0 at 0 */
	memset(&mir, 0, sizeof(mir));
	mir.action = TC_ACT_STOLEN;
	mir.eaction = TCA_EGRESS_REDIR;
	mir.ifindex = (uint32_t)ifb_ifindex;
	/* tc f_u32.c puts the action before the selector */
	if (!(opts = nest_plain(*out, TCA_OPTIONS)) ||
	    !(act = nest_plain(*out, TCA_U32_ACT)) ||
	    !(one = nest_plain(*out, 1)) ||
	    nla_put_string(*out, TCA_ACT_KIND, "mirred") < 0 ||
	    !(aopts = nla_nest_start(*out, TCA_ACT_OPTIONS)))
		return nomem(out, err);
	aopts->nla_type |= NLA_F_NESTED;   /* m_mirred.c: addattr_nest NESTED */
	if (nla_put(*out, TCA_MIRRED_PARMS, sizeof(mir), &mir) < 0)
		return nomem(out, err);
	nla_nest_end(*out, aopts);
	nla_nest_end(*out, one);
	nla_nest_end(*out, act);
	if (nla_put(*out, TCA_U32_SEL, sizeof(s), &s) < 0)
		return nomem(out, err);
	nla_nest_end(*out, opts);
	return 0;
}

/* u32 selector with up to 5 keys, "flowid classid", on parent at prio for
 * protocol proto (host order ETH_P_*). */
static int build_u32(int ifindex, uint32_t parent, uint32_t classid,
		     unsigned prio, uint16_t proto, const struct tc_u32_key *keys,
		     int nkeys, struct nl_msg **out, struct ll_err *err)
{
	struct {
		struct tc_u32_sel sel;
		struct tc_u32_key key[5];
	} s;
	struct nlattr *opts;
	int rc;

	memset(&s, 0, sizeof(s));
	s.sel.flags = TC_U32_TERMINAL;
	s.sel.nkeys = (unsigned char)nkeys;
	memcpy(s.key, keys, sizeof(keys[0]) * (size_t)nkeys);
	/* no handle: u32 hash tables are shared by every prio of the block, so
	 * a fixed 800::800 would name the other family's filter; the caller
	 * flushes first instead ("tc filter add", NLM_F_CREATE|NLM_F_EXCL) */
	rc = flowfilter_start(RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, ifindex, 0, parent,
		      TC_H_MAKE(prio << 16, htons(proto)), "u32", out, err);
	if (rc < 0)
		return rc;
	if (!(opts = nest_plain(*out, TCA_OPTIONS)) ||
	    nla_put_u32(*out, TCA_U32_CLASSID, classid) < 0 ||
	    nla_put(*out, TCA_U32_SEL,
		    (int)(sizeof(s.sel) + (size_t)nkeys * sizeof(s.key[0])), &s) < 0)
		return nomem(out, err);
	nla_nest_end(*out, opts);
	return 0;
}

/* tc "match ip[6] dport N 0xffff": the low 16 bits of the word at off */
static void dport_key(struct tc_u32_key *k, uint16_t dport, int off)
{
	k->mask = htonl(0x0000ffffu);
	k->val = htonl((uint32_t)dport);
	k->off = off;
}

int flowfilter_build_flow(int ifindex, uint32_t parent, uint32_t classid,
		  const uint8_t addr[4], unsigned plen, uint16_t dport,
		  struct nl_msg **out, struct ll_err *err)
{
	struct tc_u32_key k[2];
	int n = 0;

	*out = NULL;
	if ((!plen || !addr) && !dport)
		return ll_err_set(err, -EINVAL, "a flow filter needs a destination prefix or port");
	if (plen > 32)
		return ll_err_set(err, -EINVAL, "prefix length %u is not 0..32", plen);
	memset(k, 0, sizeof(k));
	if (plen && addr) {
		uint32_t mask = plen == 32 ? 0xffffffffu : ~(0xffffffffu >> plen);
		uint32_t a;

		memcpy(&a, addr, 4);
		k[n].mask = htonl(mask);
		k[n].val = a & htonl(mask);
		k[n].off = 16;               /* iphdr daddr */
		n++;
	}
	if (dport)
		dport_key(&k[n++], dport, 20);   /* IP header without options */
	return build_u32(ifindex, parent, classid, 1, ETH_P_IP, k, n, out, err);
}

int flowfilter_build_flow6(int ifindex, uint32_t parent, uint32_t classid,
		   const uint8_t addr[16], unsigned plen, uint16_t dport,
		   struct nl_msg **out, struct ll_err *err)
{
	struct tc_u32_key k[5];
	unsigned w;
	int n = 0;

	*out = NULL;
	if ((!plen || !addr) && !dport)
		return ll_err_set(err, -EINVAL, "a flow filter needs a destination prefix or port");
	if (plen > 128)
		return ll_err_set(err, -EINVAL, "prefix length %u is not 0..128", plen);
	memset(k, 0, sizeof(k));
	/* one key per 32-bit word of the prefix, as tc f_u32.c parse_ip6_addr */
	for (w = 0; addr && w * 32 < plen; w++) {
		unsigned bits = plen - w * 32 >= 32 ? 32 : plen - w * 32;
		uint32_t mask = bits == 32 ? 0xffffffffu : ~(0xffffffffu >> bits);
		uint32_t a;

		memcpy(&a, addr + 4 * w, 4);
		k[n].mask = htonl(mask);
		k[n].val = a & htonl(mask);
		k[n].off = (int)(24 + 4 * w);   /* ipv6hdr daddr */
		n++;
	}
	if (dport)
		dport_key(&k[n++], dport, 40);   /* no extension headers */
	return build_u32(ifindex, parent, classid, 2, ETH_P_IPV6, k, n, out, err);
}

int flowfilter_build_flow_flush(int ifindex, uint32_t parent, struct nl_msg **out,
			struct ll_err *err)
{
	struct tcmsg tcm;
	struct nl_msg *m;

	*out = NULL;
	m = nlmsg_alloc_size(FLOWFILTER_MSG_SIZE);
	if (m && !nlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, RTM_DELTFILTER, 0,
			    NLM_F_REQUEST | NLM_F_ACK)) {
		nlmsg_free(m);
		m = NULL;
	}
	if (!m)
		return ll_err_set(err, -ENOMEM, "cannot allocate a netlink message");
	memset(&tcm, 0, sizeof(tcm));
	tcm.tcm_family = AF_UNSPEC;
	tcm.tcm_ifindex = ifindex;
	tcm.tcm_parent = parent;
	if (nlmsg_append(m, &tcm, sizeof(tcm), NLMSG_ALIGNTO) < 0) {
		nlmsg_free(m);
		return ll_err_set(err, -ENOMEM, "netlink message too small");
	}
	*out = m;
	return 0;
}

int flowfilter_build_htb(int ifindex, uint32_t handle, uint32_t defcls,
		 struct nl_msg **out, struct ll_err *err)
{
	struct tc_htb_glob g;
	struct nlattr *opts;
	int rc;

	rc = flowfilter_start(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, ifindex, handle,
		      TC_H_ROOT, 0, "htb", out, err);
	if (rc < 0)
		return rc;
	memset(&g, 0, sizeof(g));
	g.version = 3;
	g.rate2quantum = 10;
	g.defcls = defcls;
	if (!(opts = nest_plain(*out, TCA_OPTIONS)) ||
	    nla_put(*out, TCA_HTB_INIT, sizeof(g), &g) < 0)
		return nomem(out, err);
	nla_nest_end(*out, opts);
	return 0;
}

int flowfilter_build_htb_class(int ifindex, uint32_t parent, uint32_t classid,
		       uint64_t rate_Bps, uint32_t burst, unsigned hz,
		       struct nl_msg **out, struct ll_err *err)
{
	struct tc_htb_opt o;
	uint32_t rtab[256], rate32;
	struct nlattr *opts;
	int rc, i;

	if (!rate_Bps)
		return ll_err_set(err, -EINVAL, "htb class needs a rate");
	if (!hz)
		hz = 250;
	if (!burst) {
		uint64_t b = rate_Bps / hz + 1600;   /* q_htb.c default */

		burst = b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
	}
	rc = flowfilter_start(RTM_NEWTCLASS, NLM_F_CREATE, ifindex, classid, parent, 0,
		      "htb", out, err);
	if (rc < 0)
		return rc;
	rate32 = rate_Bps >= (1ULL << 32) ? UINT32_MAX : (uint32_t)rate_Bps;
	memset(&o, 0, sizeof(o));
	o.rate.rate = o.ceil.rate = rate32;
	o.rate.cell_log = o.ceil.cell_log = 3;    /* mtu 1600 */
	o.rate.linklayer = o.ceil.linklayer = TC_LINKLAYER_ETHERNET;
	o.rate.cell_align = o.ceil.cell_align = -1;
	o.buffer = o.cbuffer = nlqdisc_xmittime(rate_Bps, burst);
	for (i = 0; i < 256; i++)
		rtab[i] = nlqdisc_xmittime(rate32, (uint32_t)(i + 1) << 3);
	if (!(opts = nest_plain(*out, TCA_OPTIONS)))
		return nomem(out, err);
	if (rate_Bps >= (1ULL << 32) &&
	    (nla_put_u64(*out, TCA_HTB_RATE64, rate_Bps) < 0 ||
	     nla_put_u64(*out, TCA_HTB_CEIL64, rate_Bps) < 0))
		return nomem(out, err);
	if (nla_put(*out, TCA_HTB_PARMS, sizeof(o), &o) < 0 ||
	    nla_put(*out, TCA_HTB_RTAB, sizeof(rtab), rtab) < 0 ||
	    nla_put(*out, TCA_HTB_CTAB, sizeof(rtab), rtab) < 0)
		return nomem(out, err);
	nla_nest_end(*out, opts);
	return 0;
}

int flowfilter_ifb_ensure(struct nl_sock *sk, const char *name, int *ifindex,
		  bool *created, struct ll_err *err)
{
	struct rtnl_link *link = NULL, *req, *chg;
	int rc;

	*created = false;
	rc = rtnl_link_get_kernel(sk, 0, name, &link);
	if (rc < 0) {
		req = rtnl_link_alloc();
		if (!req)
			return ll_err_set(err, -ENOMEM, "out of memory");
		rtnl_link_set_name(req, name);
		rc = rtnl_link_set_type(req, "ifb");
		if (rc == 0)
			rc = rtnl_link_add(sk, req, NLM_F_CREATE | NLM_F_EXCL);
		rtnl_link_put(req);
		if (rc < 0)
			return ll_err_set(err, rc == -NLE_PERM ? -EPERM : -EIO,
					  "create IFB device %s: %s%s", name, nl_geterror(rc),
					  rc == -NLE_OPNOTSUPP || rc == -NLE_OBJ_NOTFOUND ?
					  " (CONFIG_IFB missing? try modprobe ifb)" : "");
		*created = true;
		rc = rtnl_link_get_kernel(sk, 0, name, &link);
		if (rc < 0)
			return ll_err_set(err, -EIO, "read IFB device %s: %s", name,
					  nl_geterror(rc));
	}
	*ifindex = rtnl_link_get_ifindex(link);
	if (!(rtnl_link_get_flags(link) & IFF_UP)) {
		chg = rtnl_link_alloc();
		if (!chg) {
			rtnl_link_put(link);
			return ll_err_set(err, -ENOMEM, "out of memory");
		}
		rtnl_link_set_flags(chg, IFF_UP);
		rc = rtnl_link_change(sk, link, chg, 0);
		rtnl_link_put(chg);
		if (rc < 0) {
			rtnl_link_put(link);
			return ll_err_set(err, -EIO, "set IFB device %s up: %s", name,
					  nl_geterror(rc));
		}
	}
	rtnl_link_put(link);
	return 0;
}

int flowfilter_ifb_delete(struct nl_sock *sk, const char *name, struct ll_err *err)
{
	struct rtnl_link *link = NULL;
	const char *type;
	int rc;

	rc = rtnl_link_get_kernel(sk, 0, name, &link);
	if (rc < 0)
		return 0;
	type = rtnl_link_get_type(link);
	if (!type || strcmp(type, "ifb") != 0) {
		rtnl_link_put(link);
		return ll_err_set(err, -EEXIST, "%s is not an IFB device; left alone", name);
	}
	rc = rtnl_link_delete(sk, link);
	rtnl_link_put(link);
	if (rc < 0)
		return ll_err_set(err, -EIO, "delete IFB device %s: %s", name,
				  nl_geterror(rc));
	return 0;
}
