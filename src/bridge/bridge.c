/* SPDX-License-Identifier: MIT */
/* bridge.c - middle-box forwarder: AF_PACKET user engine over emu.c, and the
 * kernel engine's Linux bridge over the netlink layer (nllink.h; see bridge.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/pkt_sched.h>
#include <linux/virtio_net.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <signal.h>

#include "linklab/base/wake.h"
#include "linklab/bridge/bridge.h"
#include "linklab/netlink/nllink.h"
#include "linklab/netlink/nlqdisc.h"
#include "linklab/peer/journal.h"
#include "linklab/peer/peer.h"

#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5     /* linux/virtio_net.h since 4.18 */
#endif
#define VNET_HDR_LEN ((uint32_t)sizeof(struct virtio_net_hdr))
#define RXBUF (65536u + 512u)   /* a 64 KiB GSO frame + headers + vnet hdr */
#define RXCTL 64u               /* control room for one SCM_TIMESTAMPNS */

struct pkt {
	uint32_t len;           /* bytes in data (vnet hdr + frame) */
	uint32_t wire;          /* bytes on the wire (GSO expanded) */
	uint32_t big;           /* 1: data holds RXBUF bytes (pkt_get); a u32
				 * keeps data[] aligned for the vnet hdr */
	unsigned char data[];
};

#define POOL_MIN 4096u  /* frames from this size on take a full-size buffer */
#define POOL_MAX 128u   /* full-size buffers kept for reuse per direction */

#define WORKERS_MAX 2   /* reading threads per direction */

struct dir;

/* One reading thread of a direction, on its own member of the ingress
 * port's fanout group (PACKET_FANOUT_HASH: a flow's frames all come to one
 * member, in order). It reads and sends without the model's lock; only the
 * fate draws, the queue and the counters are shared. */
struct worker {
	struct dir *d;
	int rx;                 /* socket (owned by the bridge) */
	pthread_t th;
	bool started;
	unsigned char *rxbuf;
	unsigned char *rctl;    /* per-frame control (receive time) */
	struct mmsghdr *rmsg, *smsg;
	struct iovec *riov, *siov;
	unsigned npass;         /* frames on the pass-through send list */
	struct bridge_stats sent;       /* its pass-through sends, not yet in
					 * the direction's counters */
};

struct dir {
	struct bridge *b;
	int idx;
	int tx;                 /* egress socket (owned by the bridge) */
	int tfd;                /* timerfd (the first worker waits on it) */
	struct emu *emu;
	struct worker w[WORKERS_MAX];
	int64_t armed;          /* time the timer is armed for, INT64_MAX none */
	int64_t armed_due;      /* the release it was armed for */
	bool armed_last;        /* armed as a last step (wake.h) */
	struct wake_lead lead;  /* how early the last step wakes */
	pthread_mutex_t mu;
	pthread_mutex_t emu_mu;         /* held while a worker uses emu, the
					 * queue and st (not while it sleeps,
					 * reads or sends pass-through frames):
					 * bridge_reconfigure swaps the model
					 * between two batches */
	struct bridge_stats st;         /* running counters, under emu_mu */
	int64_t last_rx;                /* the latest arrival given to the model,
					 * under emu_mu */
	struct bridge_stats snap;       /* copy for readers, under mu */
	uint64_t sock_drops;            /* under mu */
	struct mmsghdr *smsg;           /* release()'s send list, under emu_mu */
	struct iovec *siov;
	struct pkt **sp;
	struct pkt *pool[POOL_MAX];     /* free full-size queue buffers */
	unsigned npool;
	uint64_t pass_pkts, pass_bytes; /* sent by pass-through (the model's
					 * output, not dequeued from it) */
};

struct bridge {
	struct bridge_opts o;
	unsigned batch;
	unsigned nw;            /* workers per direction, 1..WORKERS_MAX */
	int fd[2][WORKERS_MAX]; /* [0]: IF_A, [1]: IF_B; one per worker */
	int stopfd;
	bool discard, stopped;
	struct dir d[2];
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* When a frame arrived (CLOCK_MONOTONIC ns): the kernel's receive time
 * (SCM_TIMESTAMPNS, CLOCK_REALTIME, less off = realtime - monotonic) when it
 * is there and within the last second, else now. A frame's delay then runs
 * from its arrival, not from when a sleeping thread got round to it. */
static int64_t rx_time(struct msghdr *mh, int64_t now, int64_t off)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		struct timespec ts;
		int64_t t;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		t = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec - off;
		return t <= now && now - t < 1000000000LL ? t : now;
	}
	return now;
}

/* --- sockets -------------------------------------------------------------- */

static int open_port(const char *ifname, bool promisc, int *fdp, struct ll_err *err)
{
	struct sockaddr_ll sll = { 0 };
	struct packet_mreq mr = { 0 };
	int fd, one = 1, big = 32 << 20, idx;

	idx = (int)if_nametoindex(ifname);
	if (!idx)
		return ll_err_set(err, -ENODEV, "bridge: interface %s: %s", ifname,
				  strerror(errno));
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ll_err_set(err, -errno, "bridge: packet socket for %s: %s%s", ifname,
				  strerror(errno), errno == EPERM ? " (needs CAP_NET_RAW)" : "");
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0) {
		int e = errno;

		close(fd);
		return ll_err_set(err, -e, "bridge: %s: PACKET_VNET_HDR/IGNORE_OUTGOING: %s",
				  ifname, strerror(e));
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	/* the kernel's receive time of each frame (else: when we read it) */
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = idx;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		int e = errno;

		close(fd);
		return ll_err_set(err, -e, "bridge: bind to %s: %s", ifname, strerror(e));
	}
	mr.mr_ifindex = idx;
	mr.mr_type = PACKET_MR_PROMISC;
	if (promisc && setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0) {
		int e = errno;

		close(fd);
		return ll_err_set(err, -e, "bridge: promiscuous mode on %s: %s", ifname,
				  strerror(e));
	}
	*fdp = fd;
	return 0;
}

/* n sockets on ifname (open_port each, the first one making the port
 * promiscuous: one membership, promiscuity 1); with n > 1 they form a fanout
 * group of their own (packet(7) PACKET_FANOUT_HASH, a unique id the kernel
 * picks): each frame goes to one member, a flow's frames to the same one.
 * fds[0..n) out; on error none stays open. */
static int open_ports(const char *ifname, int *fds, unsigned n, struct ll_err *err)
{
	unsigned i;
	int rc = 0, val = 0;
	socklen_t l = sizeof(val);

	for (i = 0; i < n; i++)
		fds[i] = -1;
	for (i = 0; i < n && rc == 0; i++)
		rc = open_port(ifname, i == 0, &fds[i], err);
	if (rc == 0 && n > 1) {
		int first = PACKET_FANOUT_HASH << 16 | PACKET_FANOUT_FLAG_UNIQUEID << 16;

		if (setsockopt(fds[0], SOL_PACKET, PACKET_FANOUT, &first, sizeof(first)) < 0 ||
		    getsockopt(fds[0], SOL_PACKET, PACKET_FANOUT, &val, &l) < 0)
			rc = ll_err_set(err, -errno, "bridge: %s: PACKET_FANOUT: %s", ifname,
					strerror(errno));
		val = (val & 0xffff) | PACKET_FANOUT_HASH << 16;
		for (i = 1; i < n && rc == 0; i++) {
			char junk[64];

			if (setsockopt(fds[i], SOL_PACKET, PACKET_FANOUT, &val, sizeof(val)) < 0)
				rc = ll_err_set(err, -errno, "bridge: %s: PACKET_FANOUT join: %s",
						ifname, strerror(errno));
			/* what it read before the group formed, the first
			 * socket read too: dropped, else it would leave twice */
			while (rc == 0 && recv(fds[i], junk, sizeof(junk), MSG_DONTWAIT | MSG_TRUNC) >= 0)
				;
		}
	}
	if (rc < 0)
		for (i = 0; i < n; i++)
			if (fds[i] >= 0) {
				close(fds[i]);
				fds[i] = -1;
			}
	return rc;
}

/* --- frames ---------------------------------------------------------------- */

/* Bytes this frame takes on the wire: a GSO super-packet is counted as its
 * segments, each with its own copy of the headers (like qdisc_pkt_len_init). */
static uint32_t wire_len(const struct virtio_net_hdr *vh, const unsigned char *f,
			 uint32_t len)
{
	uint32_t hdr, segs;

	if ((vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) == VIRTIO_NET_HDR_GSO_NONE ||
	    vh->gso_size == 0)
		return len;
	hdr = vh->hdr_len;
	if (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		uint32_t cs = vh->csum_start;

		if ((vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) == VIRTIO_NET_HDR_GSO_UDP_L4 ||
		    (vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) == VIRTIO_NET_HDR_GSO_UDP)
			hdr = cs + 8;
		else if (cs + 13 <= len)
			hdr = cs + (uint32_t)(f[cs + 12] >> 4) * 4;
	}
	if (hdr == 0 || hdr >= len)
		return len;
	segs = (len - hdr + vh->gso_size - 1) / vh->gso_size;
	return len + (segs - 1) * hdr;
}

/* Fill in a pending (CHECKSUM_PARTIAL) L4 checksum in software, as the
 * kernel's skb_checksum_help() before netem corrupts a packet. */
static void csum_help(struct virtio_net_hdr *vh, unsigned char *f, uint32_t len)
{
	uint32_t s = vh->csum_start, o = s + vh->csum_offset, i;
	uint64_t sum = 0;
	uint16_t r;

	if (!(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || o + 2 > len || s >= len)
		return;
	for (i = s; i + 1 < len; i += 2)
		sum += (uint32_t)(f[i] << 8 | f[i + 1]);
	if (i < len)
		sum += (uint32_t)f[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	r = (uint16_t)~sum;
	if (r == 0)
		r = 0xffff;
	f[o] = (unsigned char)(r >> 8);
	f[o + 1] = (unsigned char)r;
	vh->flags &= (uint8_t)~VIRTIO_NET_HDR_F_NEEDS_CSUM;
}

/* Ones'-complement sum of n bytes (RFC 1071), added to s. */
static uint32_t sum16(const unsigned char *p, uint32_t n, uint32_t s)
{
	uint32_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (i < n)
		s += (uint32_t)p[i] << 8;
	return s;
}

static uint16_t fold16(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void put16(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static void corrupt_bit(unsigned char *frame, uint32_t flen, uint32_t rnd)
{
	uint32_t bit;

	if (flen <= ETH_HLEN)
		return;
	bit = ETH_HLEN * 8 + rnd % ((flen - ETH_HLEN) * 8);
	frame[bit / 8] ^= (unsigned char)(1u << (bit % 8));
}

/* A queue buffer for n bytes of data: a large frame (a GSO super-packet)
 * reuses a full-size buffer a released frame gave back, so a steady flow
 * touches no fresh pages; a small one is its own malloc. NULL: no memory. */
static struct pkt *pkt_get(struct dir *d, uint32_t n)
{
	struct pkt *p;

	if (n >= POOL_MIN && n <= RXBUF && d->npool)
		return d->pool[--d->npool];
	p = malloc(sizeof(*p) + (n >= POOL_MIN && n <= RXBUF ? RXBUF : n));
	if (p)
		p->big = n >= POOL_MIN && n <= RXBUF;
	return p;
}

static void pkt_put(struct dir *d, struct pkt *p)
{
	if (p->big && d->npool < POOL_MAX)
		d->pool[d->npool++] = p;
	else
		free(p);
}

static void enqueue_pkt(struct dir *d, struct pkt *p, int64_t now)
{
	if (emu_enqueue(d->emu, now, p->wire, p, NULL) < 0)
		pkt_put(d, p);
}

/* A TCP GSO super-packet (IPv4 or IPv6 without extension headers) chosen for
 * corruption: cut it into gso_size segments with full IP and TCP checksums,
 * flip one bit of the first and queue them all, as netem does after
 * netem_segment() + skb_checksum_help(). Returns false when the frame is not
 * one this handles (the caller then drops it). */
static bool corrupt_gso_tcp(struct dir *d, const unsigned char *buf, uint32_t n,
			    uint32_t rnd, int64_t now)
{
	const struct virtio_net_hdr *vh = (const void *)buf;
	const unsigned char *f = buf + VNET_HDR_LEN;
	uint32_t flen = n - VNET_HDR_LEN, l3, l4, hdr, pay, mss, off, i = 0;
	uint16_t et;
	bool v4;

	if (flen < ETH_HLEN + 40 || vh->gso_size == 0)
		return false;
	et = (uint16_t)(f[12] << 8 | f[13]);
	v4 = et == ETH_P_IP;
	if (v4 && (f[14] >> 4) == 4 && f[23] == IPPROTO_TCP)
		l3 = (uint32_t)(f[14] & 0xf) * 4;
	else if (et == ETH_P_IPV6 && (f[14] >> 4) == 6 && f[20] == IPPROTO_TCP)
		l3 = 40;
	else
		return false;
	l4 = ETH_HLEN + l3;
	if (l4 + 20 > flen)
		return false;
	hdr = l4 + (uint32_t)(f[l4 + 12] >> 4) * 4;
	if (hdr >= flen)
		return false;
	pay = flen - hdr;
	mss = vh->gso_size;
	for (off = 0; off < pay; off += mss, i++) {
		uint32_t seg = pay - off < mss ? pay - off : mss, tl = hdr - l4 + seg, sq;
		struct pkt *p = pkt_get(d, VNET_HDR_LEN + hdr + seg);
		unsigned char *g;
		uint32_t ps;

		if (!p) {
			d->st.tx_errors++;
			return true;
		}
		p->len = VNET_HDR_LEN + hdr + seg;
		p->wire = hdr + seg;
		memset(p->data, 0, VNET_HDR_LEN);         /* plain frame: no GSO, no csum offload */
		g = p->data + VNET_HDR_LEN;
		memcpy(g, f, hdr);
		memcpy(g + hdr, f + hdr + off, seg);
		if (v4) {
			put16(g + ETH_HLEN + 2, l3 + tl);
			put16(g + ETH_HLEN + 4, (uint32_t)(f[ETH_HLEN + 4] << 8 | f[ETH_HLEN + 5]) + i);
			put16(g + ETH_HLEN + 10, 0);
			put16(g + ETH_HLEN + 10, (uint16_t)~fold16(sum16(g + ETH_HLEN, l3, 0)));
			ps = sum16(g + ETH_HLEN + 12, 8, 0) + IPPROTO_TCP + tl;
		} else {
			put16(g + ETH_HLEN + 4, tl);
			ps = sum16(g + ETH_HLEN + 8, 32, 0) + IPPROTO_TCP + tl;
		}
		sq = (uint32_t)g[l4 + 4] << 24 | (uint32_t)g[l4 + 5] << 16 |
		     (uint32_t)g[l4 + 6] << 8 | g[l4 + 7];
		sq += off;
		g[l4 + 4] = (unsigned char)(sq >> 24);
		g[l4 + 5] = (unsigned char)(sq >> 16);
		g[l4 + 6] = (unsigned char)(sq >> 8);
		g[l4 + 7] = (unsigned char)sq;
		if (off + seg < pay)
			g[l4 + 13] &= (unsigned char)~0x09;     /* FIN, PSH: last only */
		if (off)
			g[l4 + 13] &= (unsigned char)~0x80;     /* CWR: first only */
		put16(g + l4 + 16, 0);
		put16(g + l4 + 16, (uint16_t)~fold16(sum16(g + l4, tl, ps)));
		if (off == 0)
			corrupt_bit(g, hdr + seg, rnd);
		enqueue_pkt(d, p, now);
	}
	return true;
}

static void queue_copy(struct dir *d, const unsigned char *buf, uint32_t n,
		       uint32_t wire, const struct emu_fate *f, int64_t now)
{
	const struct virtio_net_hdr *ivh = (const void *)buf;
	struct pkt *p;
	uint32_t flen = n - VNET_HDR_LEN;

	if (f->corrupt &&
	    (ivh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) != VIRTIO_NET_HDR_GSO_NONE) {
		/* TCP: segment and corrupt the first segment; other GSO kinds
		 * (UDP) are dropped - what the receiver's checksum would do to
		 * the corrupted datagram; see doc/bridge.md */
		corrupt_gso_tcp(d, buf, n, f->corrupt_bit, now);
		return;
	}
	p = pkt_get(d, n);
	if (!p) {
		d->st.tx_errors++;
		return;
	}
	p->len = n;
	p->wire = wire;
	memcpy(p->data, buf, n);
	if (f->mark_ce)         /* ecn: marked instead of dropped */
		emu_frame_set_ce(p->data + VNET_HDR_LEN, flen);
	if (f->corrupt) {
		csum_help((struct virtio_net_hdr *)p->data, p->data + VNET_HDR_LEN, flen);
		corrupt_bit(p->data + VNET_HDR_LEN, flen, f->corrupt_bit);
	}
	enqueue_pkt(d, p, now);
}

/* A frame worker w received: count it, draw its fate and queue what
 * survives (a copy). pass: the model sends at once (pass_through): a
 * surviving frame goes out of the receive buffer itself, added to w's send
 * list. Under emu_mu. */
static void handle(struct dir *d, struct worker *w, unsigned char *buf, uint32_t n,
		   int64_t now, bool pass)
{
	const struct virtio_net_hdr *vh = (const void *)buf;
	struct emu_fate f, g;
	uint32_t wire;
	bool ect;

	if (n <= VNET_HDR_LEN)
		return;
	wire = wire_len(vh, buf + VNET_HDR_LEN, n - VNET_HDR_LEN);
	d->st.rx_pkts++;
	d->st.rx_bytes += n - VNET_HDR_LEN;
	d->st.wire_bytes += wire;
	if (wire != n - VNET_HDR_LEN)
		d->st.gso_pkts++;
	ect = emu_get_config(d->emu)->ecn && emu_frame_ecn(buf + VNET_HDR_LEN, n - VNET_HDR_LEN) > 0;
	emu_fate_ect(d->emu, wire, false, ect, &f);
	if (pass) {
		if (f.lost)
			return;
		if (f.mark_ce)
			emu_frame_set_ce(buf + VNET_HDR_LEN, n - VNET_HDR_LEN);
		w->siov[w->npass].iov_base = buf;
		w->siov[w->npass].iov_len = n;
		w->npass++;
		d->pass_pkts++;
		d->pass_bytes += wire;
		return;
	}
	if (f.dup) {
		/* netem re-enqueues the copy at the root: its own loss/corrupt */
		emu_fate_ect(d->emu, wire, true, ect, &g);
		if (!g.lost)
			queue_copy(d, buf, n, wire, &g, now);
	}
	if (!f.lost)
		queue_copy(d, buf, n, wire, &f, now);
}

/* True when the model sends every frame it keeps at once, in arrival order
 * and unchanged but for an ECN mark: no delay, jitter, serialisation rate,
 * token bucket, reordering, duplication or corruption (none of these draws
 * from the PRNG then, so the loss draws are the queued path's), a limit that
 * holds a batch, and nothing queued from an earlier dial. Such frames need
 * no copy and no queue: they leave from the receive buffers. */
static bool pass_through(const struct dir *d)
{
	const struct emu_config *c = emu_get_config(d->emu);

	return c->delay == 0 && c->jitter == 0 && c->rate == 0 && c->tbf_rate == 0 &&
	       c->gap == 0 && c->duplicate == 0 && c->corrupt == 0 &&
	       c->limit >= d->b->batch && emu_next_time(d->emu) == INT64_MAX;
}

/* sendmmsg of siov[0..k) (one frame each) on socket fd, counting what
 * went into st; a frame the kernel refuses is dropped (tx_errors). */
static void xmit(int fd, struct mmsghdr *smsg, struct iovec *siov, unsigned k,
		 struct bridge_stats *st)
{
	unsigned sent = 0, i;

	for (i = 0; i < k; i++) {
		memset(&smsg[i], 0, sizeof(smsg[i]));
		smsg[i].msg_hdr.msg_iov = &siov[i];
		smsg[i].msg_hdr.msg_iovlen = 1;
	}
	while (sent < k) {
		int r = sendmmsg(fd, smsg + sent, k - sent, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			st->tx_errors++;
			sent++;
			continue;
		}
		for (i = sent; i < sent + (unsigned)r; i++) {
			st->tx_pkts++;
			st->tx_bytes += siov[i].iov_len - VNET_HDR_LEN;
		}
		sent += (unsigned)r;
	}
}

/* Send what is due at now, in batches. */
static void release(struct dir *d, int64_t now)
{
	unsigned batch = d->b->batch;

	for (;;) {
		unsigned k = 0, i;
		struct pkt *p;

		while (k < batch && (p = emu_dequeue(d->emu, now, NULL))) {
			d->sp[k] = p;
			d->siov[k].iov_base = p->data;
			d->siov[k].iov_len = p->len;
			k++;
		}
		if (!k)
			return;
		xmit(d->tx, d->smsg, d->siov, k, &d->st);
		for (i = 0; i < k; i++)
			pkt_put(d, d->sp[i]);
		if (k < batch)
			return;
	}
}

/* Few frames queued: spinning to a release costs little. */
static bool spin_ok(const struct dir *d)
{
	struct emu_stats s;

	emu_get_stats(d->emu, &s);
	return s.qlen < 64;
}

/* Send what comes due within the lead by spinning to it (few frames
 * queued), so the release is on time rather than a wake-up's lateness
 * after it. */
static void settle(struct dir *d)
{
	int64_t next = emu_next_time(d->emu), now = mono_ns();

	while (next != INT64_MAX && next > now && next - now <= d->lead.ns && spin_ok(d)) {
		while ((now = mono_ns()) < next)
			;
		release(d, now);
		next = emu_next_time(d->emu);
	}
}

/* Arms the timer for the next release, approached in steps (wake.h). */
static void rearm(struct dir *d)
{
	int64_t next = emu_next_time(d->emu), now, at;
	struct itimerspec its = { 0 };
	bool last;

	if (next == d->armed_due && (d->armed != INT64_MAX || next == INT64_MAX))
		return;
	now = mono_ns();
	at = wake_at(&d->lead, next, now, &last);
	if (at == now)
		at = next;      /* many queued: no spin, wake at the release */
	if (at != INT64_MAX) {
		if (at <= 0)
			at = 1;
		its.it_value.tv_sec = at / 1000000000LL;
		its.it_value.tv_nsec = at % 1000000000LL;
	}
	timerfd_settime(d->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	d->armed = at;
	d->armed_due = next;
	d->armed_last = last;
}

static void publish(struct dir *d)
{
	pthread_mutex_lock(&d->mu);
	d->snap = d->st;
	emu_get_stats(d->emu, &d->snap.emu);
	d->snap.emu.out_pkts += d->pass_pkts;
	d->snap.emu.out_bytes += d->pass_bytes;
	pthread_mutex_unlock(&d->mu);
}

/* The pass-through frames worker w sent, into the direction's counters.
 * Under emu_mu. */
static void merge_sent(struct dir *d, struct worker *w)
{
	d->st.tx_pkts += w->sent.tx_pkts;
	d->st.tx_bytes += w->sent.tx_bytes;
	d->st.tx_errors += w->sent.tx_errors;
	memset(&w->sent, 0, sizeof(w->sent));
}

/* One recvmmsg of up to batch frames on w's socket (without the lock), then
 * under emu_mu their fates; pass-through frames are sent after the lock is
 * let go, queued ones released when due. Returns the frames read (0: none
 * waiting). */
static int read_batch(struct worker *w, unsigned batch)
{
	struct dir *d = w->d;
	unsigned i;
	int n, k;
	int64_t now, off;
	bool pass;

	for (i = 0; i < batch; i++) {
		memset(&w->rmsg[i], 0, sizeof(w->rmsg[i]));
		w->rmsg[i].msg_hdr.msg_iov = &w->riov[i];
		w->rmsg[i].msg_hdr.msg_iovlen = 1;
		w->rmsg[i].msg_hdr.msg_control = w->rctl + (size_t)i * RXCTL;
		w->rmsg[i].msg_hdr.msg_controllen = RXCTL;
	}
	n = recvmmsg(w->rx, w->rmsg, batch, MSG_DONTWAIT, NULL);
	if (n <= 0)
		return 0;
	now = mono_ns();
	off = real_ns() - now;
	pthread_mutex_lock(&d->emu_mu);
	pass = pass_through(d);
	for (k = 0; k < n; k++) {
		int64_t t;

		if (w->rmsg[k].msg_hdr.msg_flags & MSG_TRUNC) {
			d->st.rx_truncated++;
			continue;
		}
		/* the model's clock never goes back: the other worker may have
		 * given it a later frame already (the frames then leave in the
		 * order they entered the model, as netem's enqueue order) */
		t = rx_time(&w->rmsg[k].msg_hdr, now, off);
		if (t < d->last_rx)
			t = d->last_rx;
		d->last_rx = t;
		handle(d, w, w->riov[k].iov_base, w->rmsg[k].msg_len, t, pass);
	}
	if (!pass)
		release(d, now);
	pthread_mutex_unlock(&d->emu_mu);
	if (w->npass) {
		xmit(d->tx, w->smsg, w->siov, w->npass, &w->sent);
		w->npass = 0;
	}
	return n;
}

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	struct dir *d = w->d;
	struct bridge *b = d->b;
	bool timer = w == &d->w[0];     /* the first worker runs the releases */
	struct pollfd pfd[3] = {
		{ .fd = w->rx, .events = POLLIN },
		{ .fd = b->stopfd, .events = POLLIN },
		{ .fd = timer ? d->tfd : -1, .events = POLLIN },
	};
	unsigned batch = b->batch, i;
	uint64_t junk;

	/* release on time: no 50 us default timer slack on the timerfd wake-up */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	for (i = 0; i < batch; i++) {
		w->riov[i].iov_base = w->rxbuf + (size_t)i * RXBUF;
		w->riov[i].iov_len = RXBUF;
	}
	for (;;) {
		int rounds;

		if (poll(pfd, 3, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (pfd[2].revents) {
			if (read(d->tfd, &junk, sizeof(junk)) < 0)
				junk = 0;
			pthread_mutex_lock(&d->emu_mu);
			if (d->armed_last)
				wake_lead_track(&d->lead, mono_ns() - d->armed);
			d->armed = INT64_MAX;   /* fired: the next rearm must set it */
			pthread_mutex_unlock(&d->emu_mu);
		}
		for (rounds = 0; rounds < 8; rounds++)
			if ((unsigned)read_batch(w, batch) < batch)
				break;
		pthread_mutex_lock(&d->emu_mu);
		merge_sent(d, w);
		release(d, mono_ns());
		settle(d);
		rearm(d);
		publish(d);
		pthread_mutex_unlock(&d->emu_mu);
	}
	return NULL;
}

/* After the workers stopped: flush (send now) or discard what is queued. */
static void dir_finish(struct dir *d)
{
	struct pkt *p;

	pthread_mutex_lock(&d->emu_mu);
	if (!d->b->discard) {
		while (emu_next_time(d->emu) != INT64_MAX)
			release(d, INT64_MAX - 1);
	}
	while ((p = emu_drain(d->emu, NULL)))
		pkt_put(d, p);
	publish(d);
	pthread_mutex_unlock(&d->emu_mu);
}

/* --- life cycle --------------------------------------------------------------- */

unsigned bridge_workers(const struct bridge_opts *o)
{
	cpu_set_t set;
	long cpus;

	if (o->workers)
		return o->workers > WORKERS_MAX ? WORKERS_MAX : o->workers;
	/* the CPUs this process may run on (a cpuset, taskset), when known */
	cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) :
	       sysconf(_SC_NPROCESSORS_ONLN);
	return cpus >= 2 ? WORKERS_MAX : 1;
}

/* A worker's buffers: batch receive slots of RXBUF bytes. -1: no memory. */
static int worker_init(struct worker *w, struct dir *d, int rx, unsigned batch)
{
	w->d = d;
	w->rx = rx;
	w->rxbuf = malloc((size_t)batch * RXBUF);
	w->rmsg = calloc(batch, sizeof(*w->rmsg));
	w->rctl = calloc(batch, RXCTL);
	w->smsg = calloc(batch, sizeof(*w->smsg));
	w->riov = calloc(batch, sizeof(*w->riov));
	w->siov = calloc(batch, sizeof(*w->siov));
	return w->rxbuf && w->rmsg && w->rctl && w->smsg && w->riov && w->siov ? 0 : -1;
}

static void worker_free(struct worker *w)
{
	free(w->rxbuf);
	free(w->rctl);
	free(w->rmsg);
	free(w->smsg);
	free(w->riov);
	free(w->siov);
}

int bridge_open(const struct bridge_opts *o, struct bridge **out, struct ll_err *err)
{
	struct bridge *b;
	int rc, i;

	*out = NULL;
	if (!strcmp(o->if_a, o->if_b))
		return ll_err_set(err, -EINVAL, "bridge: IF_A and IF_B are both %s", o->if_a);
	b = calloc(1, sizeof(*b));
	if (!b)
		return ll_err_set(err, -ENOMEM, "bridge: out of memory");
	b->o = *o;
	b->batch = o->batch ? o->batch : 64;
	b->nw = bridge_workers(o);
	b->stopfd = -1;
	for (i = 0; i < 2; i++) {
		for (unsigned j = 0; j < WORKERS_MAX; j++)
			b->fd[i][j] = -1;
		b->d[i].tfd = -1;
		pthread_mutex_init(&b->d[i].mu, NULL);
		pthread_mutex_init(&b->d[i].emu_mu, NULL);
	}
	if ((rc = open_ports(o->if_a, b->fd[0], b->nw, err)) < 0 ||
	    (rc = open_ports(o->if_b, b->fd[1], b->nw, err)) < 0)
		goto fail;
	b->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->stopfd < 0) {
		rc = ll_err_set(err, -errno, "bridge: eventfd: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < 2; i++) {
		struct dir *d = &b->d[i];

		d->b = b;
		d->idx = i;
		d->tx = b->fd[!i][0];
		d->armed = d->armed_due = INT64_MAX;
		rc = emu_new(&o->dir[i], &d->emu, err);
		if (rc < 0) {
			ll_err_prefix(err, "%s: ", i == 0 ? "A->B" : "B->A");
			goto fail;
		}
		d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		d->smsg = calloc(b->batch, sizeof(*d->smsg));
		d->siov = calloc(b->batch, sizeof(*d->siov));
		d->sp = calloc(b->batch, sizeof(*d->sp));
		rc = 0;
		for (unsigned j = 0; j < b->nw; j++)
			rc |= worker_init(&d->w[j], d, b->fd[i][j], b->batch);
		if (d->tfd < 0 || !d->smsg || !d->siov || !d->sp || rc) {
			rc = ll_err_set(err, -ENOMEM, "bridge: buffers/timerfd: %s",
					strerror(errno));
			goto fail;
		}
	}
	b->stopped = true;
	*out = b;
	return 0;
fail:
	bridge_close(b);
	return rc;
}

uint64_t bridge_mem_bound(const struct bridge_opts *o)
{
	uint64_t frame = sizeof(struct pkt) + RXBUF, sum = 0;
	unsigned batch = o->batch ? o->batch : 64;
	int i;

	for (i = 0; i < 2; i++)
		sum += (uint64_t)(o->dir[i].limit ? o->dir[i].limit : 1000) * frame +
		       (uint64_t)bridge_workers(o) * batch * RXBUF +
		       (uint64_t)POOL_MAX * frame;
	return sum;
}

int bridge_start(struct bridge *b, struct ll_err *err)
{
	int i, rc;

	b->stopped = false;
	for (i = 0; i < 2 * (int)b->nw; i++) {
		struct worker *w = &b->d[i % 2].w[i / 2];
		pthread_attr_t at;
		struct sched_param sp = { .sched_priority = b->o.rt_priority };

		pthread_attr_init(&at);
		if (b->o.rt_priority > 0) {
			pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED);
			pthread_attr_setschedpolicy(&at, SCHED_FIFO);
			pthread_attr_setschedparam(&at, &sp);
		}
		rc = pthread_create(&w->th, &at, worker_thread, w);
		pthread_attr_destroy(&at);
		if (rc && b->o.rt_priority > 0) {
			bridge_stop(b, true);
			return ll_err_set(err, -rc, "bridge: SCHED_FIFO priority %d for the "
					  "forwarding threads: %s", b->o.rt_priority, strerror(rc));
		}
		if (rc) {
			bridge_stop(b, true);
			return ll_err_set(err, -rc, "bridge: thread: %s", strerror(rc));
		}
		w->started = true;
	}
	return 0;
}

void bridge_stop(struct bridge *b, bool discard)
{
	uint64_t one = 1;
	int i;

	if (!b || b->stopped)
		return;
	b->discard = discard;
	if (write(b->stopfd, &one, sizeof(one)) < 0)
		one = 0;
	for (i = 0; i < 2; i++) {
		bool ran = false;

		for (unsigned j = 0; j < b->nw; j++)
			if (b->d[i].w[j].started) {
				pthread_join(b->d[i].w[j].th, NULL);
				b->d[i].w[j].started = false;
				ran = true;
			}
		if (ran)
			dir_finish(&b->d[i]);
	}
	b->stopped = true;
}

void bridge_get_stats(struct bridge *b, enum bridge_dir dir, struct bridge_stats *s)
{
	struct dir *d = &b->d[dir];

	pthread_mutex_lock(&d->mu);
	for (unsigned j = 0; j < b->nw; j++) {
		struct tpacket_stats tp = { 0 };
		socklen_t l = sizeof(tp);

		/* the counters reset as they are read: added up here */
		if (getsockopt(b->fd[dir][j], SOL_PACKET, PACKET_STATISTICS, &tp, &l) == 0)
			d->sock_drops += tp.tp_drops;
	}
	*s = d->snap;
	if (!d->w[0].started && d->emu && !d->snap.rx_pkts)
		emu_get_stats(d->emu, &s->emu);
	s->sock_drops = d->sock_drops;
	pthread_mutex_unlock(&d->mu);
}

void bridge_close(struct bridge *b)
{
	int i;

	if (!b)
		return;
	bridge_stop(b, true);
	for (i = 0; i < 2; i++) {
		struct dir *d = &b->d[i];

		if (d->emu) {
			struct pkt *p;

			while ((p = emu_drain(d->emu, NULL)))
				free(p);
			emu_free(d->emu);
		}
		while (d->npool)
			free(d->pool[--d->npool]);
		if (d->tfd >= 0)
			close(d->tfd);
		for (unsigned j = 0; j < WORKERS_MAX; j++) {
			worker_free(&d->w[j]);
			if (b->fd[i][j] >= 0)
				close(b->fd[i][j]);
		}
		free(d->smsg);
		free(d->siov);
		free(d->sp);
		pthread_mutex_destroy(&d->mu);
		pthread_mutex_destroy(&d->emu_mu);
	}
	if (b->stopfd >= 0)
		close(b->stopfd);
	free(b);
}

int bridge_reconfigure(struct bridge *b, enum bridge_dir dir, const struct emu_config *c,
		       struct ll_err *err)
{
	struct dir *d = &b->d[dir];
	int rc;

	pthread_mutex_lock(&d->emu_mu);
	rc = emu_reconfigure(d->emu, c, err);
	if (rc == 0)
		b->o.dir[dir] = *c;
	pthread_mutex_unlock(&d->emu_mu);
	if (rc < 0)
		ll_err_prefix(err, "%s: ", dir == BRIDGE_A_TO_B ? "A->B" : "B->A");
	return rc;
}

/* --- the kernel engine's Linux bridge (over the netlink layer) ----------- */

int bridge_kernel_has_netem(void)
{
	return nlqdisc_has_netem();
}

int bridge_kernel_up(const char *br, const char *if_a, const char *if_b,
		     struct ll_err *err)
{
	const char *ports[2] = { if_a, if_b };
	char what[96], alias[64];
	int rc, bi, i;

	for (i = 0; i < 2; i++)
		if (!if_nametoindex(ports[i]))
			return ll_err_set(err, -ENODEV, "bridge: interface %s: %s", ports[i],
					  strerror(errno));
	rc = nllink_bridge_add(br, err);
	if (rc == -EEXIST && err)
		ll_err_set(err, rc, "create bridge %s: it exists (left by a killed linklab "
			   "bridge? `ip link del %s` and `linklab clear --all` put things back; "
			   "or choose --bridge-name)", br, br);
	if (rc < 0)
		return rc;
	bi = (int)if_nametoindex(br);
	/* the mark bridge_kernel_stale() knows a killed bridge's device by */
	snprintf(alias, sizeof(alias), "%s%d", BRIDGE_KERNEL_ALIAS, (int)getpid());
	snprintf(what, sizeof(what), "mark bridge %s", br);
	rc = nllink_change(bi, alias, -1, false, what, err);
	for (i = 0; i < 2 && rc == 0; i++) {
		snprintf(what, sizeof(what), "add %s to bridge %s", ports[i], br);
		rc = nllink_change((int)if_nametoindex(ports[i]), NULL, bi, true, what, err);
	}
	if (rc == 0) {
		snprintf(what, sizeof(what), "set bridge %s up", br);
		rc = nllink_change(bi, NULL, -1, true, what, err);
	}
	if (rc < 0)
		bridge_kernel_down(br, NULL);
	return rc;
}

int bridge_kernel_down(const char *br, struct ll_err *err)
{
	char what[96];
	int idx = (int)if_nametoindex(br);

	if (!idx)
		return 0;
	snprintf(what, sizeof(what), "delete bridge %s", br);
	return nllink_delete(idx, what, err);
}

/* Every link of this namespace (nllink_list) in a fresh array; *n the
 * count. NULL with err on failure. */
static struct nllink *links_all(int *n, const char *what, struct ll_err *err)
{
	enum { MAXL = 1024 };
	struct nllink *l = calloc(MAXL, sizeof(*l));

	*n = 0;
	if (!l) {
		ll_err_set(err, -ENOMEM, "%s: out of memory", what);
		return NULL;
	}
	if (nllink_list(l, MAXL, n, err) < 0) {
		ll_err_prefix(err, "%s: ", what);
		free(l);
		return NULL;
	}
	return l;
}

int bridge_kernel_stale(struct bridge_stale *out, int max, int *n, struct ll_err *err)
{
	size_t al = strlen(BRIDGE_KERNEL_ALIAS);
	int nl, i, k;
	struct nllink *l = links_all(&nl, "stale bridges", err);

	*n = 0;
	if (!l)
		return err ? err->code : -EIO;
	for (i = 0; i < nl && *n < max; i++) {
		struct bridge_stale *st = &out[*n];
		const char *alias = l[i].alias;
		char *end;
		long pid;

		if (strcmp(l[i].kind, "bridge") || strncmp(alias, BRIDGE_KERNEL_ALIAS, al))
			continue;
		pid = strtol(alias + al, &end, 10);
		if (end == alias + al || *end || pid <= 0 || pid > INT32_MAX ||
		    !bridge_pid_dead((int)pid))
			continue;               /* not our mark, or its bridge runs */
		memset(st, 0, sizeof(*st));
		snprintf(st->name, sizeof(st->name), "%s", l[i].name);
		st->pid = (int)pid;
		for (k = 0; k < nl && st->nports < 2; k++)
			if (l[k].master == l[i].ifindex)
				snprintf(st->ports[st->nports++], IF_NAMESIZE, "%s", l[k].name);
		(*n)++;
	}
	free(l);
	return 0;
}

int bridge_port_info(const char *ifname, struct bridge_port_info *pi, struct ll_err *err)
{
	struct nllink me;
	char what[IF_NAMESIZE + 8];
	int rc, nl, i;
	struct nllink *l;

	memset(pi, 0, sizeof(*pi));
	snprintf(what, sizeof(what), "port %s", ifname);
	rc = nllink_get(ifname, &me, err);
	if (rc == -ENODEV)
		return ll_err_set(err, -ENODEV, "port %s: no such interface", ifname);
	if (rc < 0) {
		ll_err_prefix(err, "%s: ", what);
		return rc;
	}
	pi->loopback = (me.flags & IFF_LOOPBACK) != 0;
	pi->is_bridge = strcmp(me.kind, "bridge") == 0;
	if (me.master > 0) {
		l = links_all(&nl, what, err);
		if (!l)
			return err ? err->code : -EIO;
		snprintf(pi->master, sizeof(pi->master), "?");
		for (i = 0; i < nl; i++)
			if (l[i].ifindex == me.master)
				snprintf(pi->master, sizeof(pi->master), "%s", l[i].name);
		free(l);
	}
	rc = nllink_addr(me.ifindex, pi->addr, sizeof(pi->addr), err);
	if (rc < 0)
		ll_err_prefix(err, "%s: ", what);
	return rc;
}

int bridge_kernel_reap(struct peer *p, const struct bridge_stale *st, struct ll_err *err)
{
	int i, rc = 0;

	for (i = 0; i < st->nports; i++) {
		struct ll_err e = { 0 };
		int r = p->ops->clear(p, st->ports[i], &e);

		if (r < 0 && rc == 0) {
			rc = r;
			if (err)
				*err = e;
		}
	}
	if (rc == 0)
		rc = bridge_kernel_down(st->name, err);
	return rc;
}

/* --- status files ------------------------------------------------------------ */

cJSON *bridge_fields_json(const struct impair *d)
{
	cJSON *o = cJSON_CreateObject();
	const struct impair_field *f;
	char v[128];

	for (f = impair_fields; f->name && o; f++)
		if (d->set & f->bit)
			cJSON_AddStringToObject(o, f->name, impair_get(d, f, v, sizeof(v)));
	return o;
}

int bridge_fields_parse(const cJSON *o, struct impair *d, struct ll_diag *diag)
{
	const cJSON *it;
	struct ll_diag quiet;
	int rc = 0;

	memset(d, 0, sizeof(*d));
	if (!diag) {
		ll_diag_clear(&quiet);
		diag = &quiet;
	}
	if (!cJSON_IsObject(o))
		return 0;
	cJSON_ArrayForEach(it, o) {
		char num[64];
		const char *v = NULL;

		if (cJSON_IsString(it))
			v = it->valuestring;
		else if (cJSON_IsNumber(it))
			v = (snprintf(num, sizeof(num), "%.17g", it->valuedouble), num);
		else if (cJSON_IsBool(it))
			v = cJSON_IsTrue(it) ? "on" : "off";
		if (!v) {
			ll_diag_add(diag, LL_DIAG_ERROR, it->string,
				    "%s: want the value as text in tc units (\"50ms\", \"1%%\")",
				    it->string ? it->string : "?");
			rc = -EINVAL;
			continue;
		}
		if (impair_set(d, it->string ? it->string : "", v, diag) < 0)
			rc = -EINVAL;
	}
	return rc;
}

static int status_path(int pid, char *buf, size_t len, struct ll_err *err)
{
	uint64_t ns;
	int rc = journal_netns(&ns, err);

	if (rc < 0)
		return rc;
	snprintf(buf, len, "%s/bridge-%llu-%d.json", journal_dir(), (unsigned long long)ns, pid);
	return 0;
}

int bridge_status_write(const struct bridge_status *s, struct ll_err *err)
{
	static const char *const dn[2] = { "a_to_b", "b_to_a" };
	char path[512], tmp[530];
	cJSON *doc = cJSON_CreateObject();
	char *txt;
	FILE *f;
	int i, rc;

	if ((rc = status_path(s->pid, path, sizeof(path), err)) < 0) {
		cJSON_Delete(doc);
		return rc;
	}
	cJSON_AddNumberToObject(doc, "pid", s->pid);
	cJSON_AddStringToObject(doc, "engine", s->engine);
	cJSON_AddStringToObject(doc, "if_a", s->if_a);
	cJSON_AddStringToObject(doc, "if_b", s->if_b);
	cJSON_AddNumberToObject(doc, "updated", (double)s->updated);
	for (i = 0; i < 2; i++) {
		cJSON *o = cJSON_AddObjectToObject(doc, dn[i]);

		cJSON_AddStringToObject(o, "dial", s->dial[i]);
		cJSON_AddItemToObject(o, "fields", bridge_fields_json(&s->held[i]));
		cJSON_AddNumberToObject(o, "rx_packets", (double)s->c[i].rx_pkts);
		cJSON_AddNumberToObject(o, "tx_packets", (double)s->c[i].tx_pkts);
		cJSON_AddNumberToObject(o, "rx_bytes", (double)s->c[i].rx_bytes);
		cJSON_AddNumberToObject(o, "tx_bytes", (double)s->c[i].tx_bytes);
		cJSON_AddNumberToObject(o, "lost", (double)s->c[i].lost);
		cJSON_AddNumberToObject(o, "duplicated", (double)s->c[i].duplicated);
		cJSON_AddNumberToObject(o, "corrupted", (double)s->c[i].corrupted);
		cJSON_AddNumberToObject(o, "reordered", (double)s->c[i].reordered);
		cJSON_AddNumberToObject(o, "drops", (double)s->c[i].drops);
	}
	txt = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (!txt)
		return ll_err_set(err, -ENOMEM, "bridge status: out of memory");
	mkdir(journal_dir(), 0700);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		rc = ll_err_set(err, -errno, "bridge status %s: %s", tmp, strerror(errno));
		free(txt);
		return rc;
	}
	fputs(txt, f);
	free(txt);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		rc = ll_err_set(err, -errno, "bridge status %s: %s", path, strerror(errno));
		unlink(tmp);
		return rc;
	}
	return 0;
}

void bridge_status_remove(int pid)
{
	char path[512];

	if (status_path(pid, path, sizeof(path), NULL) == 0)
		unlink(path);
}

static uint64_t jnum(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) && v->valuedouble > 0 ? (uint64_t)v->valuedouble : 0;
}

static void jstr(const cJSON *o, const char *k, char *buf, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	snprintf(buf, len, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static int status_read(const char *path, struct bridge_status *s)
{
	static const char *const dn[2] = { "a_to_b", "b_to_a" };
	char buf[8192];
	size_t n;
	FILE *f = fopen(path, "r");
	cJSON *doc;
	int i;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	doc = cJSON_Parse(buf);
	if (!doc)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->pid = (int)jnum(doc, "pid");
	s->updated = (int64_t)jnum(doc, "updated");
	jstr(doc, "engine", s->engine, sizeof(s->engine));
	jstr(doc, "if_a", s->if_a, sizeof(s->if_a));
	jstr(doc, "if_b", s->if_b, sizeof(s->if_b));
	for (i = 0; i < 2; i++) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(doc, dn[i]);

		jstr(o, "dial", s->dial[i], sizeof(s->dial[i]));
		bridge_fields_parse(cJSON_GetObjectItemCaseSensitive(o, "fields"), &s->held[i],
				    NULL);
		s->c[i].rx_pkts = jnum(o, "rx_packets");
		s->c[i].tx_pkts = jnum(o, "tx_packets");
		s->c[i].rx_bytes = jnum(o, "rx_bytes");
		s->c[i].tx_bytes = jnum(o, "tx_bytes");
		s->c[i].lost = jnum(o, "lost");
		s->c[i].duplicated = jnum(o, "duplicated");
		s->c[i].corrupted = jnum(o, "corrupted");
		s->c[i].reordered = jnum(o, "reordered");
		s->c[i].drops = jnum(o, "drops");
	}
	cJSON_Delete(doc);
	return s->pid > 0 ? 0 : -EINVAL;
}

bool bridge_pid_dead(int pid)
{
	char path[64], buf[512], *rp;
	FILE *f;
	size_t n;

	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	rp = strrchr(buf, ')');         /* comm may hold spaces and ')' */
	return rp && rp[1] == ' ' && rp[2] == 'Z';
}

int bridge_status_list(struct bridge_status *out, int max, int *n, struct ll_err *err)
{
	char prefix[64], path[1024];
	uint64_t ns;
	struct dirent *de;
	DIR *d;
	int rc;

	*n = 0;
	if ((rc = journal_netns(&ns, err)) < 0)
		return rc;
	snprintf(prefix, sizeof(prefix), "bridge-%llu-", (unsigned long long)ns);
	d = opendir(journal_dir());
	if (!d)
		return errno == ENOENT ? 0 :
		       ll_err_set(err, -errno, "%s: %s", journal_dir(), strerror(errno));
	while ((de = readdir(d)) && *n < max) {
		size_t l = strlen(de->d_name);

		if (strncmp(de->d_name, prefix, strlen(prefix)) || l < 5 ||
		    strcmp(de->d_name + l - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", journal_dir(), de->d_name);
		if (status_read(path, &out[*n]) < 0)
			continue;
		if (bridge_pid_dead(out[*n].pid)) {
			/* gone or a zombie (killed -9, not reaped yet): its
			 * files are stale; the socket is refused anyway */
			unlink(path);
			strcpy(path + strlen(path) - 5, ".sock");
			unlink(path);
			continue;
		}
		(*n)++;
	}
	closedir(d);
	return 0;
}
