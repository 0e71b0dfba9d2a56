/* SPDX-License-Identifier: MIT */
/* nlbridge.c - the bridge's libnl reads (bridge.h): bridge_kernel_stale, the
 * bridge devices a killed kernel-engine `linklab bridge` left (found by the
 * IFLA_IFALIAS mark bridge_kernel_up gives them), and bridge_port_info, what
 * makes an interface a poor bridge port. Kept apart from bridge.c because
 * only the nl*.c modules speak libnl (scripts/check-layering.sh). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <linux/rtnetlink.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>

#include "linklab/bridge/bridge.h"

int bridge_kernel_stale(struct bridge_stale *out, int max, int *n, struct ll_err *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_cache *cache = NULL;
	struct nl_object *o;
	int rc;

	*n = 0;
	if (!sk)
		return ll_err_set(err, -ENOMEM, "stale bridges: out of memory");
	rc = nl_connect(sk, NETLINK_ROUTE);
	if (rc == 0)
		rc = rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache);
	if (rc < 0) {
		nl_socket_free(sk);
		return ll_err_set(err, -EIO, "stale bridges: list links: %s", nl_geterror(rc));
	}
	for (o = nl_cache_get_first(cache); o && *n < max; o = nl_cache_get_next(o)) {
		struct rtnl_link *l = (struct rtnl_link *)o;
		const char *type = rtnl_link_get_type(l), *alias = rtnl_link_get_ifalias(l);
		size_t al = strlen(BRIDGE_KERNEL_ALIAS);
		struct bridge_stale *st = &out[*n];
		struct nl_object *q;
		char *end;
		long pid;

		if (!type || strcmp(type, "bridge") || !alias || strncmp(alias, BRIDGE_KERNEL_ALIAS, al))
			continue;
		pid = strtol(alias + al, &end, 10);
		if (end == alias + al || *end || pid <= 0 || pid > INT32_MAX ||
		    !bridge_pid_dead((int)pid))
			continue;               /* not our mark, or its bridge runs */
		memset(st, 0, sizeof(*st));
		snprintf(st->name, sizeof(st->name), "%s", rtnl_link_get_name(l));
		st->pid = (int)pid;
		for (q = nl_cache_get_first(cache); q; q = nl_cache_get_next(q)) {
			struct rtnl_link *pl = (struct rtnl_link *)q;

			if (rtnl_link_get_master(pl) == rtnl_link_get_ifindex(l) &&
			    st->nports < 2)
				snprintf(st->ports[st->nports++], IF_NAMESIZE, "%s",
					 rtnl_link_get_name(pl));
		}
		(*n)++;
	}
	nl_cache_free(cache);
	nl_socket_free(sk);
	return 0;
}

int bridge_port_info(const char *ifname, struct bridge_port_info *pi, struct ll_err *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_cache *links = NULL, *addrs = NULL;
	struct rtnl_link *l;
	struct nl_object *o;
	int rc, idx;

	memset(pi, 0, sizeof(*pi));
	if (!sk)
		return ll_err_set(err, -ENOMEM, "port %s: out of memory", ifname);
	rc = nl_connect(sk, NETLINK_ROUTE);
	if (rc == 0)
		rc = rtnl_link_alloc_cache(sk, AF_UNSPEC, &links);
	if (rc == 0)
		rc = rtnl_addr_alloc_cache(sk, &addrs);
	if (rc < 0) {
		if (links)
			nl_cache_free(links);
		nl_socket_free(sk);
		return ll_err_set(err, -EIO, "port %s: list links/addresses: %s", ifname,
				  nl_geterror(rc));
	}
	l = rtnl_link_get_by_name(links, ifname);
	if (!l) {
		rc = ll_err_set(err, -ENODEV, "port %s: no such interface", ifname);
		goto out;
	}
	idx = rtnl_link_get_ifindex(l);
	pi->loopback = (rtnl_link_get_flags(l) & IFF_LOOPBACK) != 0;
	pi->is_bridge = rtnl_link_get_type(l) && !strcmp(rtnl_link_get_type(l), "bridge");
	if (rtnl_link_get_master(l) > 0) {
		struct rtnl_link *m = rtnl_link_get(links, rtnl_link_get_master(l));

		snprintf(pi->master, sizeof(pi->master), "%s",
			 m ? rtnl_link_get_name(m) : "?");
		if (m)
			rtnl_link_put(m);
	}
	rtnl_link_put(l);
	for (o = nl_cache_get_first(addrs); o && !pi->addr[0]; o = nl_cache_get_next(o)) {
		struct rtnl_addr *a = (struct rtnl_addr *)o;
		char buf[INET6_ADDRSTRLEN + 8];

		if (rtnl_addr_get_ifindex(a) != idx || rtnl_addr_get_scope(a) == RT_SCOPE_LINK)
			continue;               /* a veth's fe80:: is no address of use */
		if (rtnl_addr_get_local(a) &&
		    nl_addr2str(rtnl_addr_get_local(a), buf, sizeof(buf)))
			snprintf(pi->addr, sizeof(pi->addr), "%s", buf);
	}
	rc = 0;
out:
	nl_cache_free(addrs);
	nl_cache_free(links);
	nl_socket_free(sk);
	return rc;
}
