/* SPDX-License-Identifier: MIT */
/* pktout.c - the endpoint engine's sends (pktout.h): a packet socket with
 * virtio-net headers on Ethernet, raw IP sockets otherwise. */
#include <endian.h>
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>

#include "linklab/engine/pktout.h"
#include "linklab/netlink/nlneigh.h"

#define BATCH 64
#define NCACHE 64
#define HIT_NS 1000000000LL     /* a neighbour entry is trusted this long */
#define MISS_NS 50000000LL      /* a failed lookup is retried after this */

struct nbr {
	bool used, have_mac;
	int family;
	unsigned char addr[16];
	unsigned char mac[ETH_ALEN];
	uint32_t mtu;
	int64_t until;
};

struct pktout {
	int ifindex;
	int pkt, raw4, raw6;
	struct nlneigh *nl;
	bool ether;
	unsigned char src[ETH_ALEN];
	uint32_t dev_mtu;
	char dev[IF_NAMESIZE];
	struct nbr cache[NCACHE];
	struct pktout_stats st;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* --- checksums ------------------------------------------------------------ */

/* L3 header length and L4 protocol of an IPv4 or IPv6 packet (IPv6 without
 * extension headers), 0 when it is neither. */
static uint32_t l3_len(const unsigned char *ip, uint32_t len, int *proto)
{
	if (len >= 20 && (ip[0] >> 4) == 4) {
		uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4;

		*proto = ip[9];
		return ihl >= 20 && ihl <= len ? ihl : 0;
	}
	if (len >= 40 && (ip[0] >> 4) == 6) {
		*proto = ip[6];
		return 40;
	}
	return 0;
}

static uint32_t csum_add(uint32_t sum, const unsigned char *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

bool pktout_csum_complete(unsigned char *ip, uint32_t len)
{
	int proto = 0;
	uint32_t l3 = l3_len(ip, len, &proto), off, sum;

	if (!l3 || (proto != IPPROTO_TCP && proto != IPPROTO_UDP))
		return false;
	off = l3 + (proto == IPPROTO_TCP ? 16u : 6u);
	if (off + 2 > len)
		return false;
	/* the check field holds the pseudo-header sum: add the rest */
	sum = csum_add(0, ip + l3, len - l3);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	if (sum == 0 && proto == IPPROTO_UDP)
		sum = 0xffff;
	ip[off] = (unsigned char)(sum >> 8);
	ip[off + 1] = (unsigned char)sum;
	return true;
}

static void dev_mtu_read(struct pktout *p)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, p->dev, sizeof(p->dev));
	if (ioctl(p->raw4, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
		p->dev_mtu = (uint32_t)ifr.ifr_mtu;
}

/* The cached next-hop entry for dst, looked up again when it is old. */
static const struct nbr *nbr_for(struct pktout *p, int family, const unsigned char *dst)
{
	unsigned alen = family == AF_INET ? 4 : 16, h = 0, i;
	unsigned char hop[16];
	struct nbr *e;
	int64_t now = now_ns();

	for (i = 0; i < alen; i++)
		h = h * 31u + dst[i];
	e = &p->cache[h % NCACHE];
	if (e->used && e->family == family && !memcmp(e->addr, dst, alen) && now < e->until)
		return e;
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->family = family;
	memcpy(e->addr, dst, alen);
	dev_mtu_read(p);
	if (p->nl && nlneigh_route(p->nl, family, dst, p->ifindex, hop, &e->mtu) == 0 &&
	    nlneigh_mac(p->nl, family, hop, p->ifindex, e->mac) == 0)
		e->have_mac = true;
	if (!e->mtu || e->mtu > p->dev_mtu)
		e->mtu = p->dev_mtu;
	e->until = now + (e->have_mac ? HIT_NS : MISS_NS);
	return e;
}

/* --- sending ---------------------------------------------------------------- */

/* Fill the vnet and Ethernet headers before pk->data. False: not through
 * the packet socket (no neighbour, a GSO packet it cannot describe). */
static bool frame(struct pktout *p, struct pktout_pkt *pk, struct sockaddr_ll *to)
{
	unsigned char *ip = pk->data, *eh = ip - ETH_HLEN;
	struct virtio_net_hdr *vh = (struct virtio_net_hdr *)(eh - sizeof(*vh));
	bool v4 = (ip[0] >> 4) == 4;
	int proto = 0, family = v4 ? AF_INET : AF_INET6;
	uint32_t l3 = l3_len(ip, pk->len, &proto), l4 = 0;
	const struct nbr *nb;

	if (!p->ether || !l3)
		return false;
	nb = nbr_for(p, family, v4 ? ip + 16 : ip + 24);
	if (!nb->have_mac)
		return false;
	memset(vh, 0, sizeof(*vh));
	if (pk->flags & (PKTOUT_CSUM | PKTOUT_GSO)) {
		if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
			return false;
		vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh->csum_start = htole16((uint16_t)(ETH_HLEN + l3));
		vh->csum_offset = htole16(proto == IPPROTO_TCP ? 16 : 6);
	}
	if (pk->flags & PKTOUT_GSO) {
		if (proto != IPPROTO_TCP || l3 + 20 > pk->len)
			return false;
		l4 = (uint32_t)(ip[l3 + 12] >> 4) * 4;
		if (l4 < 20 || l3 + l4 > pk->len || nb->mtu <= l3 + l4)
			return false;
		if (pk->len > nb->mtu) {
			vh->gso_type = v4 ? VIRTIO_NET_HDR_GSO_TCPV4 : VIRTIO_NET_HDR_GSO_TCPV6;
			vh->gso_size = htole16((uint16_t)(nb->mtu - l3 - l4));
			vh->hdr_len = htole16((uint16_t)(ETH_HLEN + l3 + l4));
		}
	}
	memcpy(eh, nb->mac, ETH_ALEN);
	memcpy(eh + ETH_ALEN, p->src, ETH_ALEN);
	eh[12] = v4 ? 0x08 : 0x86;
	eh[13] = v4 ? 0x00 : 0xdd;
	memset(to, 0, sizeof(*to));
	to->sll_family = AF_PACKET;
	to->sll_ifindex = p->ifindex;
	to->sll_protocol = htons(v4 ? ETH_P_IP : ETH_P_IPV6);
	return true;
}

static void send_batch(struct pktout *p, int fd, struct mmsghdr *m, int n, uint64_t *ok)
{
	int sent = 0, k;

	while (sent < n) {
		k = sendmmsg(fd, m + sent, (unsigned)(n - sent), MSG_DONTWAIT);
		if (k <= 0) {
			/* this one failed (queue full, no route): count it, go on */
			p->st.errors++;
			sent++;
			continue;
		}
		sent += k;
		*ok += (uint64_t)k;
	}
}

union ipaddr {
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
	struct sockaddr_ll ll;
};

/* The raw socket's destination for pk (its checksum completed), or false. */
static bool raw_dest(struct pktout_pkt *pk, union ipaddr *to, socklen_t *tolen)
{
	const unsigned char *ip = pk->data;

	if (pk->flags & PKTOUT_GSO)
		return false;   /* the raw socket refuses packets above the MTU */
	if ((pk->flags & PKTOUT_CSUM) && !pktout_csum_complete(pk->data, pk->len))
		return false;
	memset(to, 0, sizeof(*to));
	if (pk->len >= 20 && (ip[0] >> 4) == 4) {
		to->v4.sin_family = AF_INET;
		memcpy(&to->v4.sin_addr, ip + 16, 4);
		*tolen = sizeof(to->v4);
		return true;
	}
	if (pk->len >= 40 && (ip[0] >> 4) == 6) {
		to->v6.sin6_family = AF_INET6;
		memcpy(&to->v6.sin6_addr, ip + 24, 16);
		*tolen = sizeof(to->v6);
		return true;
	}
	return false;
}

/* Send one run of packets going the same way (one sendmmsg). */
static void flush_run(struct pktout *p, int fd, struct mmsghdr *m, int *n)
{
	if (*n)
		send_batch(p, fd, m, *n, fd == p->pkt ? &p->st.sent_packet : &p->st.sent_raw);
	*n = 0;
}

void pktout_send(struct pktout *p, struct pktout_pkt *pk, int n)
{
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	union ipaddr to[BATCH], dst;
	int i, k = 0, fd = -1, want;

	for (i = 0; i < n; i++) {
		struct pktout_pkt *x = &pk[i];
		socklen_t tolen = sizeof(struct sockaddr_ll);
		unsigned char *base = x->data;
		size_t blen = x->len;

		if (frame(p, x, &dst.ll)) {
			want = p->pkt;
			base -= PKTOUT_HEADROOM;
			blen += PKTOUT_HEADROOM;
		} else if (raw_dest(x, &dst, &tolen)) {
			want = (x->data[0] >> 4) == 4 ? p->raw4 : p->raw6;
		} else {
			want = -1;
		}
		if (want < 0) {
			p->st.errors++;
			continue;
		}
		/* keep the order: a run ends where the socket changes */
		if (k && (want != fd || k == BATCH))
			flush_run(p, fd, m, &k);
		fd = want;
		to[k] = dst;
		iov[k].iov_base = base;
		iov[k].iov_len = blen;
		memset(&m[k], 0, sizeof(m[k]));
		m[k].msg_hdr.msg_name = &to[k];
		m[k].msg_hdr.msg_namelen = tolen;
		m[k].msg_hdr.msg_iov = &iov[k];
		m[k].msg_hdr.msg_iovlen = 1;
		k++;
	}
	if (k)
		flush_run(p, fd, m, &k);
}

/* --- open / close ---------------------------------------------------------- */

static int raw_open(int family, const char *dev, uint32_t mark)
{
	int fd = socket(family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	int sz = 8 * 1024 * 1024;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, (socklen_t)strlen(dev)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	return fd;
}

/* The packet socket on an Ethernet device, or -1 (raw sockets only). */
static int packet_open(struct pktout *p)
{
	struct sockaddr_ll sll;
	struct ifreq ifr;
	int fd, one = 1, sz = 8 * 1024 * 1024;

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, p->dev, sizeof(p->dev));
	if (ioctl(p->raw4, SIOCGIFHWADDR, &ifr) < 0 || ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
		return -1;
	memcpy(p->src, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = p->ifindex;
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		close(fd);
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	return fd;
}

int pktout_open(const char *dev, uint32_t mark, struct pktout **out, struct ll_err *err)
{
	struct pktout *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return ll_err_set(err, -ENOMEM, "out of memory");
	p->pkt = p->raw6 = -1;
	snprintf(p->dev, sizeof(p->dev), "%s", dev);
	p->ifindex = (int)if_nametoindex(dev);
	if (!p->ifindex) {
		free(p);
		return ll_err_set(err, -ENODEV, "no interface %s", dev);
	}
	p->raw4 = raw_open(AF_INET, dev, mark);
	if (p->raw4 < 0) {
		int e = -p->raw4;

		free(p);
		return ll_err_set(err, e == EPERM ? -EPERM : -EIO, "raw socket on %s: %s%s",
				  dev, strerror(e), e == EPERM ? " (needs CAP_NET_RAW)" : "");
	}
	p->raw6 = raw_open(AF_INET6, dev, mark);   /* -1: no IPv6 here */
	if (p->raw6 < 0)
		p->raw6 = -1;
	p->dev_mtu = 1500;
	dev_mtu_read(p);
	p->nl = nlneigh_open();
	if (p->nl)
		p->pkt = packet_open(p);
	p->ether = p->pkt >= 0;
	*out = p;
	return 0;
}

bool pktout_offload(const struct pktout *p)
{
	return p->ether;
}

uint32_t pktout_mtu(const struct pktout *p)
{
	return p->dev_mtu;
}

void pktout_get_stats(const struct pktout *p, struct pktout_stats *s)
{
	*s = p->st;
}

void pktout_close(struct pktout *p)
{
	if (!p)
		return;
	if (p->pkt >= 0)
		close(p->pkt);
	if (p->raw4 >= 0)
		close(p->raw4);
	if (p->raw6 >= 0)
		close(p->raw6);
	nlneigh_close(p->nl);
	free(p);
}
