/* SPDX-License-Identifier: MIT */
/* udpblast.c - the bench's small-packet generator (make bench-bin builds
 * build/udpblast; scripts/bench-bridge.sh runs it). Not part of linklab.
 *
 *   udpblast tx DST_IPV4 PORT SECS [PAYLOAD [THREADS [BATCH]]]
 *       THREADS threads (default 2) each send PAYLOAD-byte UDP datagrams
 *       (default 18: a 60-byte frame on the veth, 64 bytes with the FCS a
 *       wire adds: the minimum Ethernet frame) in sendmmsg batches of BATCH (default 256) for SECS
 *       seconds, each from its own source port (spread over flows);
 *       prints "sent PKTS SECONDS" (SECONDS measured).
 *   udpblast rx PORT SECS
 *       counts datagrams received on PORT (recvmmsg) for SECS seconds;
 *       prints "received PKTS SECONDS".
 * A full socket buffer (ENOBUFS/EAGAIN) is retried, not counted as sent.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXBATCH 1024

struct job {
	struct sockaddr_in dst;
	double secs;
	unsigned len, batch;
	uint64_t sent;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *tx_thread(void *arg)
{
	static __thread struct mmsghdr mm[MAXBATCH];
	static __thread struct iovec iov;
	static __thread unsigned char buf[2048];
	struct job *j = arg;
	double end = now_s() + j->secs;
	unsigned i, it = 0;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 4 << 20;

	if (fd < 0 || connect(fd, (struct sockaddr *)&j->dst, sizeof(j->dst)) < 0) {
		perror("udpblast: socket/connect");
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	memset(buf, 0x5a, sizeof(buf));
	iov.iov_base = buf;
	iov.iov_len = j->len;
	for (i = 0; i < j->batch; i++) {
		memset(&mm[i], 0, sizeof(mm[i]));
		mm[i].msg_hdr.msg_iov = &iov;
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	for (;;) {
		int r;

		if ((++it & 15) == 0 && now_s() >= end)
			break;
		r = sendmmsg(fd, mm, j->batch, 0);
		if (r > 0)
			j->sent += (uint64_t)r;
		else if (r < 0 && errno != ENOBUFS && errno != EAGAIN && errno != EINTR &&
			 errno != ECONNREFUSED) {
			perror("udpblast: sendmmsg");
			break;
		}
	}
	close(fd);
	return NULL;
}

static int do_tx(int argc, char **argv)
{
	struct job j[16];
	pthread_t th[16];
	unsigned n, i;
	uint64_t total = 0;
	double t0, t1;

	if (argc < 5)
		return 2;
	memset(j, 0, sizeof(j));
	n = argc > 6 ? (unsigned)atoi(argv[6]) : 2;
	if (n < 1 || n > 16)
		n = 2;
	for (i = 0; i < n; i++) {
		j[i].dst.sin_family = AF_INET;
		j[i].dst.sin_port = htons((uint16_t)atoi(argv[3]));
		if (inet_pton(AF_INET, argv[2], &j[i].dst.sin_addr) != 1) {
			fprintf(stderr, "udpblast: bad address %s\n", argv[2]);
			return 2;
		}
		j[i].secs = atof(argv[4]);
		j[i].len = argc > 5 ? (unsigned)atoi(argv[5]) : 18;
		j[i].batch = argc > 7 ? (unsigned)atoi(argv[7]) : 256;
		if (j[i].len < 1 || j[i].len > 1472)
			j[i].len = 18;
		if (j[i].batch < 1 || j[i].batch > MAXBATCH)
			j[i].batch = 256;
	}
	t0 = now_s();
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, tx_thread, &j[i]) != 0)
			return 1;
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		total += j[i].sent;
	}
	t1 = now_s();
	printf("sent %llu %.3f\n", (unsigned long long)total, t1 - t0);
	return 0;
}

static int do_rx(int argc, char **argv)
{
	static struct mmsghdr mm[MAXBATCH];
	static struct iovec iov[MAXBATCH];
	static unsigned char buf[MAXBATCH][64];
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv = { 0, 100000 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 32 << 20, i;
	uint64_t total = 0;
	double end, t0;

	if (argc < 4 || fd < 0)
		return 2;
	a.sin_port = htons((uint16_t)atoi(argv[2]));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("udpblast: bind");
		return 1;
	}
	for (i = 0; i < MAXBATCH; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = sizeof(buf[i]);
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = now_s();
	end = t0 + atof(argv[3]);
	while (now_s() < end) {
		int r = recvmmsg(fd, mm, MAXBATCH, MSG_TRUNC, NULL);

		if (r > 0)
			total += (uint64_t)r;
	}
	printf("received %llu %.3f\n", (unsigned long long)total, now_s() - t0);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	if (argc > 1 && !strcmp(argv[1], "tx"))
		rc = do_tx(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "rx"))
		rc = do_rx(argc, argv);
	if (rc == 2)
		fprintf(stderr, "usage: udpblast tx DST_IPV4 PORT SECS [PAYLOAD [THREADS [BATCH]]]\n"
			"       udpblast rx PORT SECS\n");
	return rc;
}
