/* SPDX-License-Identifier: MIT */
/* nlneigh.c - next hop and neighbour lookups over rtnetlink (nlneigh.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "linklab/netlink/nlneigh.h"

struct nlneigh {
	int fd;
	uint32_t seq;
};

struct nlneigh *nlneigh_open(void)
{
	struct nlneigh *p = calloc(1, sizeof(*p));
	struct timeval tv = { 0, 200000 };
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (!p)
		return NULL;
	p->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (p->fd < 0 || bind(p->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(p->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		if (p->fd >= 0)
			close(p->fd);
		free(p);
		return NULL;
	}
	return p;
}

void nlneigh_close(struct nlneigh *p)
{
	if (!p)
		return;
	close(p->fd);
	free(p);
}

static void put_attr(struct nlmsghdr *n, unsigned short type, const void *d, unsigned len)
{
	struct rtattr *a = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), d, len);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* Send request n, read its answer into buf. The answer's length, or -1. */
static int rt_ask(struct nlneigh *p, struct nlmsghdr *n, char *buf, size_t len)
{
	struct nlmsghdr *r;
	ssize_t got;

	n->nlmsg_seq = ++p->seq;
	n->nlmsg_flags = NLM_F_REQUEST;
	if (send(p->fd, n, n->nlmsg_len, 0) < 0)
		return -1;
	for (;;) {
		got = recv(p->fd, buf, len, 0);
		if (got < (ssize_t)sizeof(*r))
			return -1;
		r = (struct nlmsghdr *)buf;
		if (r->nlmsg_seq != p->seq)
			continue;   /* a late answer to an earlier question */
		return r->nlmsg_type == NLMSG_ERROR ? -1 : (int)got;
	}
}

/* Next hop (the gateway, else dst itself) and the route's MTU (0: none). */
int nlneigh_route(struct nlneigh *p, int family, const unsigned char *dst, int ifindex,
		  unsigned char *hop, uint32_t *mtu)
{
	char req[256] = { 0 }, buf[4096];
	struct nlmsghdr *n = (struct nlmsghdr *)req;
	struct rtmsg *rm = NLMSG_DATA(n);
	unsigned alen = family == AF_INET ? 4 : 16;
	struct rtattr *a;
	int len, oif = ifindex;

	n->nlmsg_len = NLMSG_LENGTH(sizeof(*rm));
	n->nlmsg_type = RTM_GETROUTE;
	rm->rtm_family = (unsigned char)family;
	rm->rtm_dst_len = (unsigned char)(alen * 8);
	put_attr(n, RTA_DST, dst, alen);
	put_attr(n, RTA_OIF, &oif, sizeof(oif));
	len = rt_ask(p, n, buf, sizeof(buf));
	if (len < 0)
		return -1;
	n = (struct nlmsghdr *)buf;
	memcpy(hop, dst, alen);
	*mtu = 0;
	len = (int)n->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*rm));
	for (a = RTM_RTA(NLMSG_DATA(n)); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == alen) {
			memcpy(hop, RTA_DATA(a), alen);
		} else if (a->rta_type == RTA_METRICS) {
			int ml = (int)RTA_PAYLOAD(a);
			struct rtattr *m;

			for (m = RTA_DATA(a); RTA_OK(m, ml); m = RTA_NEXT(m, ml))
				if (m->rta_type == RTAX_MTU && RTA_PAYLOAD(m) == 4)
					memcpy(mtu, RTA_DATA(m), 4);
		}
	}
	return 0;
}

int nlneigh_mac(struct nlneigh *p, int family, const unsigned char *hop, int ifindex,
		unsigned char *mac)
{
	char req[256] = { 0 }, buf[4096];
	struct nlmsghdr *n = (struct nlmsghdr *)req;
	struct ndmsg *nd = NLMSG_DATA(n);
	unsigned alen = family == AF_INET ? 4 : 16;
	struct rtattr *a;
	int len;

	n->nlmsg_len = NLMSG_LENGTH(sizeof(*nd));
	n->nlmsg_type = RTM_GETNEIGH;
	nd->ndm_family = (unsigned char)family;
	nd->ndm_ifindex = ifindex;
	put_attr(n, NDA_DST, hop, alen);
	len = rt_ask(p, n, buf, sizeof(buf));
	if (len < 0)
		return -1;
	n = (struct nlmsghdr *)buf;
	nd = NLMSG_DATA(n);
	if (n->nlmsg_type != RTM_NEWNEIGH ||
	    !(nd->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE |
			       NUD_PERMANENT | NUD_NOARP)))
		return -1;
	len = (int)n->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*nd));
	for (a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd))); RTA_OK(a, len);
	     a = RTA_NEXT(a, len))
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			return 0;
		}
	return -1;
}

