/* SPDX-License-Identifier: MIT */
/* cmd_bench_udp.c - `linklab-bench udp [-t SEC] [-l LEN]` (for make bench):
 * the machine's UDP ceiling on loopback, with nothing of iperf3's protocol:
 * one thread sends GSO batches (UDP_SEGMENT, 64 KB of LEN-byte datagrams
 * per sendmsg) as fast as it can, the other receives with UDP_GRO and
 * counts bytes and datagrams. Prints the sent and received Gbit/s and the
 * loss, so linklab's own -b 0 figure can be read against the limit. */
#include <errno.h>
#include <netinet/in.h>
#include <linux/udp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "linklab/cli/bench.h"

#ifndef SOL_UDP
#define SOL_UDP IPPROTO_UDP
#endif

struct bu {
	int fd;
	unsigned len, segs;
	atomic_bool stop;
	uint64_t bytes, dgrams;   /* owner thread's */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *bu_send(void *arg)
{
	struct bu *b = arg;
	size_t n = (size_t)b->len * b->segs;
	unsigned char *buf = calloc(1, n);
	char cbuf[CMSG_SPACE(sizeof(uint16_t))];
	uint16_t seg = (uint16_t)b->len;

	if (!buf)
		return NULL;
	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		struct iovec iov = { .iov_base = buf, .iov_len = n };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(seg));
		memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
		ssize_t r = sendmsg(b->fd, &mh, 0);
		if (r > 0) {
			b->bytes += (uint64_t)r;
			b->dgrams += b->segs;
		} else if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR &&
			   errno != ECONNREFUSED) {
			break;
		}
	}
	free(buf);
	return NULL;
}

static void *bu_recv(void *arg)
{
	struct bu *b = arg;
	unsigned char *buf = malloc(65536);
	struct timeval tv = { 0, 100 * 1000 };

	if (!buf)
		return NULL;
	setsockopt(b->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { .iov_base = buf, .iov_len = 65536 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		ssize_t r = recvmsg(b->fd, &mh, 0);
		if (r <= 0)
			continue;
		int g = 0;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO)
				memcpy(&g, CMSG_DATA(cm), sizeof(g));
		b->bytes += (uint64_t)r;
		b->dgrams += g > 0 ? ((uint64_t)r + (unsigned)g - 1) / (unsigned)g : 1;
	}
	free(buf);
	return NULL;
}

int cmd_bench_udp(int argc, char **argv)
{
	struct bu tx = { .len = 1448 }, rx = { .len = 1448 };
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	double secs = 5;
	int one = 1, big = 4 * 1024 * 1024;
	pthread_t ts, tr;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc)
			secs = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "-l") && i + 1 < argc)
			tx.len = rx.len = (unsigned)strtoul(argv[++i], NULL, 10);
	}
	if (!(secs > 0 && secs <= 60) || tx.len < 16 || tx.len > 8192) {
		fprintf(stderr, "usage: linklab-bench udp [-t SEC (0..60)] [-l LEN (16..8192)]\n");
		return 2;
	}
	tx.segs = 65000 / tx.len > 64 ? 64 : 65000 / tx.len;
	rx.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	tx.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx.fd < 0 || tx.fd < 0 || bind(rx.fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(rx.fd, (struct sockaddr *)&a, &al) < 0 ||
	    connect(tx.fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "linklab-bench udp: loopback sockets: %s\n", strerror(errno));
		return 1;
	}
	if (setsockopt(rx.fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) < 0)
		fprintf(stderr, "linklab-bench udp: no UDP_GRO here: %s\n", strerror(errno));
	if (setsockopt(rx.fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(rx.fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	double t0 = now_s();
	pthread_create(&tr, NULL, bu_recv, &rx);
	pthread_create(&ts, NULL, bu_send, &tx);
	struct timespec d = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
	nanosleep(&d, NULL);
	atomic_store(&tx.stop, true);
	pthread_join(ts, NULL);
	double t1 = now_s();
	d.tv_sec = 0;
	d.tv_nsec = 100 * 1000 * 1000;   /* what is queued still arrives */
	nanosleep(&d, NULL);
	atomic_store(&rx.stop, true);
	pthread_join(tr, NULL);
	close(tx.fd);
	close(rx.fd);
	double dt = t1 - t0;
	printf("raw UDP GSO/GRO loop, %u-byte datagrams, %u per send: sent %.2f Gbit/s, "
	       "received %.2f Gbit/s, loss %.2f%%\n", tx.len, tx.segs,
	       (double)tx.bytes * 8 / dt / 1e9, (double)rx.bytes * 8 / dt / 1e9,
	       tx.dgrams ? 100.0 * (double)(tx.dgrams - (rx.dgrams < tx.dgrams ? rx.dgrams : tx.dgrams)) /
			   (double)tx.dgrams : 0.0);
	return 0;
}
