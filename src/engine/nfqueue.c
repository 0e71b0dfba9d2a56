/* SPDX-License-Identifier: MIT */
/* nfqueue.c - one netfilter queue over libnetfilter_queue. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "linklab/engine/nfqueue.h"

#define NFQ_BUF (256 * 1024)
#define NFQ_RCVBUF (16u * 1024 * 1024)

struct nfqueue {
	struct nfq_handle *h;
	struct nfq_q_handle *qh;
	int fd;
	nfqueue_cb cb;
	void *arg;
	char *buf;
	uint64_t truncated;
};

/* The IP packet's own length (0: not IPv4/IPv6, or a 64 KiB+ IPv4 packet). */
static uint32_t ip_len(const unsigned char *p, int len)
{
	if (len >= 20 && (p[0] >> 4) == 4)
		return (uint32_t)p[2] << 8 | p[3];
	if (len >= 40 && (p[0] >> 4) == 6)
		return 40u + ((uint32_t)p[4] << 8 | p[5]);
	return 0;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *m,
		     struct nfq_data *nfa, void *data)
{
	struct nfqueue *q = data;
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
	unsigned char *p = NULL;
	uint32_t info;
	int len;

	(void)qh;
	(void)m;
	if (!ph)
		return 0;
	len = nfq_get_payload(nfa, &p);
	if (len < 0 || ip_len(p, len) != (uint32_t)len) {
		/* not all of it was copied (above the copy range): it can only
		 * go on as it is */
		q->truncated++;
		nfq_set_verdict(q->qh, ntohl(ph->packet_id), NF_ACCEPT, 0, NULL);
		return 0;
	}
	info = nfq_get_skbinfo(nfa);
	q->cb(q->arg, q, ntohl(ph->packet_id), p, (uint32_t)len,
	      ((info & NFQA_SKB_CSUMNOTREADY) ? NFQUEUE_CSUM : 0) |
	      ((info & NFQA_SKB_GSO) ? NFQUEUE_GSO : 0));
	return 0;
}

int nfqueue_open(uint16_t num, uint32_t maxlen, bool gso, nfqueue_cb cb, void *arg,
		 struct nfqueue **out, struct ll_err *err)
{
	struct nfqueue *q = calloc(1, sizeof(*q));
	uint64_t qd, ud;
	int on = 1, e;

	*out = NULL;
	if (!q || !(q->buf = malloc(NFQ_BUF))) {
		free(q);
		return ll_err_set(err, -ENOMEM, "out of memory");
	}
	q->cb = cb;
	q->arg = arg;
	q->h = nfq_open();
	if (!q->h) {
		e = errno;
		free(q->buf);
		free(q);
		if (e == EPERM || e == EACCES)
			return ll_err_set(err, -EPERM, "a netfilter queue needs root or "
					  "CAP_NET_ADMIN (try sudo)");
		return ll_err_set(err, -EIO, "cannot open nfnetlink (netfilter queue): %s",
				  strerror(e));
	}
	q->qh = nfq_create_queue(q->h, num, on_packet, q);
	if (!q->qh) {
		e = errno;
		nfq_close(q->h);
		free(q->buf);
		free(q);
		/* the kernel says EPERM both without the capability and when
		 * another socket holds the queue: a bound queue is listed */
		if (nfqueue_kstats(num, &qd, &ud) == 0)
			return ll_err_set(err, -EBUSY, "netfilter queue %u is in use by "
					  "another process", num);
		if (e == EPERM || e == EACCES)
			return ll_err_set(err, -EPERM, "binding netfilter queue %u needs "
					  "root or CAP_NET_ADMIN (try sudo)", num);
		return ll_err_set(err, -EBUSY, "netfilter queue %u is in use by another "
				  "process (%s)", num, strerror(e));
	}
	if (nfq_set_mode(q->qh, NFQNL_COPY_PACKET, 0xffff) < 0 ||
	    nfq_set_queue_maxlen(q->qh, maxlen) < 0 ||
	    (gso && nfq_set_queue_flags(q->qh, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO) < 0)) {
		e = errno;
		nfqueue_close(q);
		return ll_err_set(err, -EIO, "configuring netfilter queue %u: %s", num,
				  strerror(e));
	}
	q->fd = nfq_fd(q->h);
	nfnl_rcvbufsiz(nfq_nfnlh(q->h), NFQ_RCVBUF);
	setsockopt(q->fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &on, sizeof(on));
	*out = q;
	return 0;
}

int nfqueue_fd(const struct nfqueue *q)
{
	return q->fd;
}

int nfqueue_read(struct nfqueue *q, int max_reads, uint64_t *overruns,
		 struct ll_err *err)
{
	int n;

	for (n = 0; n < max_reads; n++) {
		ssize_t r = recv(q->fd, q->buf, NFQ_BUF, MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				if (overruns)
					(*overruns)++;
				continue;
			}
			return ll_err_set(err, -EIO, "reading the netfilter queue: %s",
					  strerror(errno));
		}
		nfq_handle_packet(q->h, q->buf, (int)r);
	}
	return n;
}

int nfqueue_verdict(struct nfqueue *q, uint32_t id, bool accept)
{
	if (nfq_set_verdict(q->qh, id, accept ? NF_ACCEPT : NF_DROP, 0, NULL) < 0)
		return -errno;
	return 0;
}

int nfqueue_verdict_upto(struct nfqueue *q, uint32_t id, bool accept)
{
	if (nfq_set_verdict_batch(q->qh, id, accept ? NF_ACCEPT : NF_DROP) < 0)
		return -errno;
	return 0;
}

uint64_t nfqueue_truncated(const struct nfqueue *q)
{
	return q ? q->truncated : 0;
}

void nfqueue_close(struct nfqueue *q)
{
	if (!q)
		return;
	if (q->qh)
		nfq_destroy_queue(q->qh);
	if (q->h)
		nfq_close(q->h);
	free(q->buf);
	free(q);
}

int nfqueue_kstats(uint16_t num, uint64_t *queue_dropped, uint64_t *user_dropped)
{
	FILE *f = fopen("/proc/net/netfilter/nfnetlink_queue", "r");
	char line[256];
	int rc = -ENOENT;

	if (!f)
		return -ENOENT;
	/* queue portid waiting copy_mode copy_range queue_dropped user_dropped id 1 */
	while (fgets(line, sizeof(line), f)) {
		unsigned qn, pid, wait, mode, range;
		uint64_t qd, ud;

		if (sscanf(line, "%u %u %u %u %u %" SCNu64 " %" SCNu64, &qn, &pid, &wait,
			   &mode, &range, &qd, &ud) == 7 && qn == num) {
			*queue_dropped = qd;
			*user_dropped = ud;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}
