/* SPDX-License-Identifier: MIT */
/* cmd_bench_tcpzc.c - `linklab-bench tcpzc [-t SEC] [-l KIB]` (for make
 * bench): does MSG_ZEROCOPY (Documentation/networking/msg_zerocopy.rst)
 * pay for a TCP sender on loopback? One connection, a receiver thread that
 * discards with MSG_TRUNC (as linklab's), a sender writing LEN-KiB blocks
 * from an 8-block area: plain send() and send(MSG_ZEROCOPY) alternately, 3
 * rounds each; prints Gbit/s and the sender's and receiver's CPU seconds
 * per GB (this thread's rusage), medians of the rounds. For local delivery
 * the kernel copies zero-copy pages anyway (skb_orphan_frags_rx), so the
 * figure says what the notifications cost on top. */
#include <errno.h>
#include <time.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linklab/cli/bench.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif

struct zrx {
	int lfd;
	double cpu;   /* receiver thread CPU seconds */
};

static double zc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double thread_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void *zc_recv(void *arg)
{
	struct zrx *z = arg;
	static char sink[1 << 20];
	int c = accept(z->lfd, NULL, NULL);
	double c0 = thread_cpu();

	if (c < 0)
		return NULL;
	while (recv(c, sink, sizeof(sink), MSG_TRUNC) > 0)
		;
	z->cpu = thread_cpu() - c0;
	close(c);
	return NULL;
}

/* Completions of MSG_ZEROCOPY sends read from the error queue; returns how
 * many sends they cover. */
static uint64_t zc_reap(int fd)
{
	uint64_t n = 0;

	for (;;) {
		char cbuf[128];
		struct msghdr mh = { .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return n;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		if (!cm)
			return n;
		struct sock_extended_err ee;
		memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
		if (ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY)
			n += (uint64_t)(ee.ee_data - ee.ee_info) + 1;
	}
}

/* One round: prints nothing, fills gbps and CPU s/GB of both ends. */
static int zc_round(bool zc, double secs, size_t len, double out[3])
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	struct zrx z = { .lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	unsigned char *buf = calloc(8, len);
	pthread_t th;
	uint64_t bytes = 0, sent = 0, done = 0;

	if (z.lfd < 0 || fd < 0 || !buf || bind(z.lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(z.lfd, 1) < 0 || getsockname(z.lfd, (struct sockaddr *)&a, &al) < 0 ||
	    (zc && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0)) {
		fprintf(stderr, "linklab-bench tcpzc: sockets%s: %s\n", zc ? " (SO_ZEROCOPY)" : "",
			strerror(errno));
		goto fail;
	}
	memset(buf, 0x5a, 8 * len);
	if (pthread_create(&th, NULL, zc_recv, &z)) {
		fprintf(stderr, "linklab-bench tcpzc: thread\n");
		goto fail;
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "linklab-bench tcpzc: connect: %s\n", strerror(errno));
		shutdown(z.lfd, SHUT_RDWR);
		pthread_join(th, NULL);
		goto fail;
	}
	double c0 = thread_cpu(), t0 = zc_now();
	for (unsigned k = 0; zc_now() - t0 < secs; k++) {
		ssize_t r = send(fd, buf + (k % 8) * len, len, zc ? MSG_ZEROCOPY : 0);
		if (r > 0) {
			bytes += (uint64_t)r;
			sent += zc;
		}
		/* at most 6 of the 8 blocks in flight: the 7th is not reused
		 * before the kernel is done with it */
		while (zc && sent - (done += zc_reap(fd)) >= 6) {
			struct pollfd p = { .fd = fd, .events = 0 };
			poll(&p, 1, 10);
		}
	}
	double cpu = thread_cpu() - c0, dt = zc_now() - t0;
	shutdown(fd, SHUT_WR);
	pthread_join(th, NULL);
	close(fd);
	close(z.lfd);
	free(buf);
	out[0] = (double)bytes * 8 / dt / 1e9;
	out[1] = bytes ? cpu / ((double)bytes / 1e9) : 0;
	out[2] = bytes ? z.cpu / ((double)bytes / 1e9) : 0;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	if (z.lfd >= 0)
		close(z.lfd);
	free(buf);
	return -1;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int cmd_bench_tcpzc(int argc, char **argv)
{
	double secs = 2, r[2][3][3];
	size_t len = 512 * 1024;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc)
			secs = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "-l") && i + 1 < argc)
			len = (size_t)strtoul(argv[++i], NULL, 10) * 1024;
		else
			len = 0;
	}
	if (!(secs > 0 && secs <= 60) || len < 4096 || len > 8u << 20) {
		fprintf(stderr, "usage: linklab-bench tcpzc [-t SEC (0..60)] [-l KIB (4..8192)]\n");
		return 2;
	}
	for (int round = 0; round < 3; round++)
		for (int zc = 0; zc < 2; zc++) {
			double o[3];
			if (zc_round(zc, secs, len, o) < 0)
				return 1;
			for (int k = 0; k < 3; k++)
				r[zc][k][round] = o[k];
		}
	for (int zc = 0; zc < 2; zc++) {
		for (int k = 0; k < 3; k++)
			qsort(r[zc][k], 3, sizeof(double), cmp_d);
		printf("TCP loopback %zu KiB sends %-14s %6.2f Gbit/s  sender %.3f CPU s/GB  receiver %.3f CPU s/GB\n",
		       len / 1024, zc ? "MSG_ZEROCOPY:" : "plain send():", r[zc][0][1], r[zc][1][1],
		       r[zc][2][1]);
	}
	return 0;
}
