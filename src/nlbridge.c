/* SPDX-License-Identifier: MIT */
/* nlbridge.c - bridge_kernel_stale (bridge.h): the bridge devices a killed
 * kernel-engine `linklab bridge` left, found in a libnl link dump by the
 * IFLA_IFALIAS mark bridge_kernel_up gives them. Kept apart from bridge.c
 * because only the nl*.c modules speak libnl (scripts/check-layering.sh). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "linklab/bridge.h"

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
