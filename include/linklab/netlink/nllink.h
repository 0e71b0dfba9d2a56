/* SPDX-License-Identifier: MIT */
/* nllink.h - links over libnl (rtnetlink RTM_NEWLINK/DELLINK/GETLINK,
 * RTM_GETADDR): create a bridge device, change a link (alias, master, up),
 * delete one, list every link with its kind, master and alias, and a link's
 * first usable address. The bridge's kernel engine builds on these
 * (src/bridge/bridge.c); failures carry the kernel's extended-ack text
 * (nlqdisc_request). */
#ifndef LINKLAB_NLLINK_H
#define LINKLAB_NLLINK_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

#include "linklab/base/err.h"

/* One link as nllink_list reports it. */
struct nllink {
	char name[IF_NAMESIZE];
	int ifindex;
	int master;               /* IFLA_MASTER ifindex, 0 = none */
	unsigned flags;           /* IFF_* */
	char kind[16];            /* IFLA_INFO_KIND ("bridge", "veth"), "" none */
	char alias[128];          /* IFLA_IFALIAS, "" none */
};

/* Create a bridge device name (RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL,
 * IFLA_INFO_KIND "bridge"), left down. -EEXIST when name exists, -EPERM
 * without CAP_NET_ADMIN, other -errno; err says "create bridge NAME: ...". */
int nllink_bridge_add(const char *name, struct ll_err *err);

/* Change link ifindex: alias (IFLA_IFALIAS, NULL = keep), master
 * (IFLA_MASTER, -1 = keep), up (IFF_UP set; false = flags kept). what
 * names the step in err ("add veth0 to bridge br0"). 0 or -errno. */
int nllink_change(int ifindex, const char *alias, int master, bool up,
		  const char *what, struct ll_err *err);

/* Delete link ifindex (RTM_DELLINK). 0 or -errno with err. */
int nllink_delete(int ifindex, const char *what, struct ll_err *err);

/* Every link of this network namespace, at most max into out; *n the
 * count. 0, -ENOMEM or -EIO with err. */
int nllink_list(struct nllink *out, int max, int *n, struct ll_err *err);

/* One link by name into out. -ENODEV when there is none, -EIO. */
int nllink_get(const char *name, struct nllink *out, struct ll_err *err);

/* The first address of link ifindex that is not link-scope (a veth's
 * fe80:: is none), as "ADDR/PREFIX" into buf; "" when it has none.
 * 0 or -EIO with err. */
int nllink_addr(int ifindex, char *buf, size_t len, struct ll_err *err);

#endif
