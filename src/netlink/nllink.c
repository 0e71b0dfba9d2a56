/* SPDX-License-Identifier: MIT */
/* nllink.c - links over libnl (nllink.h). Requests are built with libnl's
 * message API and acked through nlqdisc_request (extended-ack text in the
 * error); reads use libnl's link and address caches. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>

#include "linklab/netlink/nllink.h"
#include "linklab/netlink/nlqdisc.h"

/* Connect a route socket, send m, wait for its ack; m is freed. */
static int link_talk(struct nl_msg *m, const char *what, struct ll_err *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	int rc;

	if (!sk) {
		nlmsg_free(m);
		return ll_err_set(err, -ENOMEM, "%s: out of memory", what);
	}
	rc = nl_connect(sk, NETLINK_ROUTE);
	if (rc < 0)
		rc = ll_err_set(err, -EIO, "%s: netlink socket: %s", what, nl_geterror(rc));
	else
		rc = nlqdisc_request(sk, m, NULL, NULL, what, err);
	nlmsg_free(m);
	nl_socket_free(sk);
	return rc;
}

/* Start an RTM_*LINK request for ifindex with ifinfomsg flags/change. */
static struct nl_msg *link_msg(int type, int flags, int ifindex, unsigned ifi_flags,
			       unsigned ifi_change)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC, .ifi_index = ifindex,
		.ifi_flags = ifi_flags, .ifi_change = ifi_change,
	};
	struct nl_msg *m = nlmsg_alloc_simple(type, flags);

	if (m && nlmsg_append(m, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0) {
		nlmsg_free(m);
		m = NULL;
	}
	return m;
}

int nllink_bridge_add(const char *name, struct ll_err *err)
{
	char what[64];
	struct nl_msg *m = link_msg(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0, 0, 0);
	struct nlattr *li;

	snprintf(what, sizeof(what), "create bridge %s", name);
	if (!m || nla_put_string(m, IFLA_IFNAME, name) < 0 ||
	    !(li = nla_nest_start(m, IFLA_LINKINFO)) ||
	    nla_put_string(m, IFLA_INFO_KIND, "bridge") < 0) {
		nlmsg_free(m);
		return ll_err_set(err, -ENOMEM, "%s: out of memory", what);
	}
	nla_nest_end(m, li);
	return link_talk(m, what, err);
}

int nllink_change(int ifindex, const char *alias, int master, bool up,
		  const char *what, struct ll_err *err)
{
	struct nl_msg *m = link_msg(RTM_NEWLINK, 0, ifindex, up ? IFF_UP : 0, up ? IFF_UP : 0);

	if (!m || (alias && nla_put_string(m, IFLA_IFALIAS, alias) < 0) ||
	    (master >= 0 && nla_put_u32(m, IFLA_MASTER, (uint32_t)master) < 0)) {
		nlmsg_free(m);
		return ll_err_set(err, -ENOMEM, "%s: out of memory", what);
	}
	return link_talk(m, what, err);
}

int nllink_delete(int ifindex, const char *what, struct ll_err *err)
{
	struct nl_msg *m = link_msg(RTM_DELLINK, 0, ifindex, 0, 0);

	if (!m)
		return ll_err_set(err, -ENOMEM, "%s: out of memory", what);
	return link_talk(m, what, err);
}

/* A connected socket and the link cache (and, with addrs, the address
 * cache). 0 or -errno with err. */
static int caches(struct nl_sock **sk, struct nl_cache **links, struct nl_cache **addrs,
		  struct ll_err *err)
{
	int rc;

	*links = NULL;
	if (addrs)
		*addrs = NULL;
	*sk = nl_socket_alloc();
	if (!*sk)
		return ll_err_set(err, -ENOMEM, "list links: out of memory");
	rc = nl_connect(*sk, NETLINK_ROUTE);
	if (rc == 0)
		rc = rtnl_link_alloc_cache(*sk, AF_UNSPEC, links);
	if (rc == 0 && addrs)
		rc = rtnl_addr_alloc_cache(*sk, addrs);
	if (rc < 0) {
		if (*links)
			nl_cache_free(*links);
		nl_socket_free(*sk);
		return ll_err_set(err, -EIO, "list links%s: %s", addrs ? "/addresses" : "",
				  nl_geterror(rc));
	}
	return 0;
}

static void fill(struct rtnl_link *l, struct nllink *o)
{
	const char *kind = rtnl_link_get_type(l), *alias = rtnl_link_get_ifalias(l);

	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "%s", rtnl_link_get_name(l));
	o->ifindex = rtnl_link_get_ifindex(l);
	o->master = rtnl_link_get_master(l);
	o->flags = rtnl_link_get_flags(l);
	snprintf(o->kind, sizeof(o->kind), "%s", kind ? kind : "");
	snprintf(o->alias, sizeof(o->alias), "%s", alias ? alias : "");
}

int nllink_list(struct nllink *out, int max, int *n, struct ll_err *err)
{
	struct nl_sock *sk;
	struct nl_cache *links;
	struct nl_object *o;
	int rc = caches(&sk, &links, NULL, err);

	*n = 0;
	if (rc < 0)
		return rc;
	for (o = nl_cache_get_first(links); o && *n < max; o = nl_cache_get_next(o))
		fill((struct rtnl_link *)o, &out[(*n)++]);
	nl_cache_free(links);
	nl_socket_free(sk);
	return 0;
}

int nllink_get(const char *name, struct nllink *out, struct ll_err *err)
{
	struct nl_sock *sk;
	struct nl_cache *links;
	struct rtnl_link *l;
	int rc = caches(&sk, &links, NULL, err);

	if (rc < 0)
		return rc;
	l = rtnl_link_get_by_name(links, name);
	if (l) {
		fill(l, out);
		rtnl_link_put(l);
	} else {
		rc = ll_err_set(err, -ENODEV, "%s: no such interface", name);
	}
	nl_cache_free(links);
	nl_socket_free(sk);
	return rc;
}

int nllink_addr(int ifindex, char *buf, size_t len, struct ll_err *err)
{
	struct nl_sock *sk;
	struct nl_cache *links, *addrs;
	struct nl_object *o;
	int rc = caches(&sk, &links, &addrs, err);

	if (len)
		buf[0] = '\0';
	if (rc < 0)
		return rc;
	for (o = nl_cache_get_first(addrs); o && len && !buf[0]; o = nl_cache_get_next(o)) {
		struct rtnl_addr *a = (struct rtnl_addr *)o;
		char s[INET6_ADDRSTRLEN + 8];

		if (rtnl_addr_get_ifindex(a) != ifindex || rtnl_addr_get_scope(a) == RT_SCOPE_LINK)
			continue;
		if (rtnl_addr_get_local(a) && nl_addr2str(rtnl_addr_get_local(a), s, sizeof(s)))
			snprintf(buf, len, "%s", s);
	}
	nl_cache_free(addrs);
	nl_cache_free(links);
	nl_socket_free(sk);
	return 0;
}
