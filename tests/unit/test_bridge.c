/* SPDX-License-Identifier: MIT */
/* test_bridge.c - the userspace forwarder, each case in a network namespace
 * of its own (NETNS_CASE, fixture.h): two veth pairs llEa0-llEa1 and llEb0-llEb1, the bridge between
 * llEa1 and llEb1, raw frames sent on llEa0 / llEb0 and read on the other
 * side. Delay timing, loss, duplicate, corrupt (with the pending checksum
 * completed first), rate spacing, counters, errors, and the kernel bridge.
 * Needs root: skips with the reason otherwise. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "linklab/bridge/bridge.h"
#include "linklab/base/units.h"

#define ETHT 0x88b5     /* IEEE local experimental ethertype */
#define MS 1000000LL

/* each forwarder case's namespace (NETNS_CASE): two veth pairs, no IPv6
 * chatter on them */
#define VETH_SETUP "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; " \
	"echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6; " \
	"ip link add llEa0 type veth peer name llEa1 && " \
	"ip link add llEb0 type veth peer name llEb1 && " \
	"for i in llEa0 llEa1 llEb0 llEb1; do ip link set $i up || exit 1; done"

static int64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* raw socket on ifname for ethertype proto (vnet: with a virtio_net_hdr) */
static int raw_sock(const char *ifname, int proto, int vnet)
{
	struct sockaddr_ll sll = { 0 };
	int fd = socket(AF_PACKET, SOCK_RAW, 0), one = 1;

	assert_true(fd >= 0);
	if (vnet)
		assert_int_equal(setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)), 0);
	/* kernel receive times (set before any frame arrives) */
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)), 0);
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons((uint16_t)proto);
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	assert_true(sll.sll_ifindex > 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	return fd;
}

static void frame(unsigned char *f, size_t len, uint32_t seq)
{
	memset(f, 0, len);
	memset(f, 0xff, 6);                               /* broadcast */
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x01", 6);
	f[12] = ETHT >> 8;
	f[13] = ETHT & 0xff;
	memcpy(f + 14, &seq, 4);
	for (size_t i = 18; i < len; i++)
		f[i] = (unsigned char)(i * 7 + seq);
}

/* Read frames on fd until quiet for quiet_ms; the kernel's receive time
 * (SO_TIMESTAMPNS, CLOCK_REALTIME) of seq into at[] (first copy); count
 * every frame; last gets the last frame's first len bytes. */
static int collect(int fd, int quiet_ms, int64_t *at, int nat, unsigned char *last, size_t len)
{
	unsigned char buf[2048];
	char ctl[256];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = 0;

	while (poll(&p, 1, quiet_ms) > 0) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;
		int64_t t = real_ns();
		ssize_t r = recvmsg(fd, &mh, 0);
		uint32_t seq;

		if (r < 18)
			continue;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(c), sizeof(ts));
				t = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
			}
		memcpy(&seq, buf + 14, 4);
		if (at && seq < (uint32_t)nat && at[seq] == 0)
			at[seq] = t;
		if (last)
			memcpy(last, buf, (size_t)r < len ? (size_t)r : len);
		n++;
	}
	return n;
}

static struct bridge *start(struct bridge_opts *o)
{
	struct bridge *b = NULL;
	struct ll_err err = { 0 };

	snprintf(o->if_a, sizeof(o->if_a), "llEa1");
	snprintf(o->if_b, sizeof(o->if_b), "llEb1");
	o->dir[0].seed = 1;
	o->dir[1].seed = 2;
	if (bridge_open(o, &b, &err) != 0)
		fail_msg("bridge_open: %s", err.msg);
	assert_int_equal(bridge_start(b, &err), 0);
	return b;
}

static void test_delay_and_counters(void **state)
{
	struct bridge_opts o = { 0 };
	struct bridge *b;
	struct bridge_stats s;
	unsigned char f[100];
	int64_t sent[200], at[200] = { 0 }, lmin = INT64_MAX, lmax = 0;
	int sa, rb, i, n;

	(void)state;
	o.dir[0].delay = 20 * MS;
	b = start(&o);
	sa = raw_sock("llEa0", ETHT, 0);
	rb = raw_sock("llEb0", ETHT, 0);
	for (i = 0; i < 200; i++) {
		frame(f, sizeof(f), (uint32_t)i);
		sent[i] = real_ns();
		assert_int_equal(send(sa, f, sizeof(f), 0), (ssize_t)sizeof(f));
		usleep(500);
	}
	n = collect(rb, 300, at, 200, NULL, 0);
	assert_int_equal(n, 200);
	for (i = 0; i < 200; i++) {
		int64_t l = at[i] - sent[i];

		assert_true(at[i] != 0);
		if (l < lmin)
			lmin = l;
		if (l > lmax)
			lmax = l;
	}
	printf("  delay 20ms: one-way latency %.3f .. %.3f ms over 200 frames\n",
	       lmin / 1e6, lmax / 1e6);
	assert_true(lmin >= 20 * MS);
	assert_true(lmin < 22 * MS);
	assert_true(lmax < 30 * MS);
	bridge_stop(b, false);
	bridge_get_stats(b, BRIDGE_A_TO_B, &s);
	assert_int_equal(s.rx_pkts, 200);
	assert_int_equal(s.tx_pkts, 200);
	assert_int_equal(s.rx_bytes, 200 * sizeof(f));
	assert_int_equal(s.emu.lost, 0);
	/* nothing came back the other way: the B side never re-read its sends */
	bridge_get_stats(b, BRIDGE_B_TO_A, &s);
	assert_int_equal(s.rx_pkts, 0);
	bridge_close(b);
	close(sa);
	close(rb);
}

static void test_loss_one_direction(void **state)
{
	struct bridge_opts o = { 0 };
	struct bridge *b;
	struct bridge_stats s;
	unsigned char f[80];
	int sa, sb, ra, rb, i;

	(void)state;
	o.dir[0].loss = UINT32_MAX;       /* A->B: everything lost */
	b = start(&o);
	sa = raw_sock("llEa0", ETHT, 0);
	ra = raw_sock("llEa0", ETHT, 0);
	sb = raw_sock("llEb0", ETHT, 0);
	rb = raw_sock("llEb0", ETHT, 0);
	for (i = 0; i < 50; i++) {
		frame(f, sizeof(f), (uint32_t)i);
		assert_int_equal(send(sa, f, sizeof(f), 0), (ssize_t)sizeof(f));
		assert_int_equal(send(sb, f, sizeof(f), 0), (ssize_t)sizeof(f));
	}
	assert_int_equal(collect(rb, 200, NULL, 0, NULL, 0), 0);
	assert_int_equal(collect(ra, 100, NULL, 0, NULL, 0), 50);
	bridge_get_stats(b, BRIDGE_A_TO_B, &s);
	assert_int_equal(s.emu.lost, 50);
	bridge_get_stats(b, BRIDGE_B_TO_A, &s);
	assert_int_equal(s.tx_pkts, 50);
	bridge_close(b);
	close(sa);
	close(sb);
	close(ra);
	close(rb);
}

static void test_duplicate_all(void **state)
{
	struct bridge_opts o = { 0 };
	struct bridge *b;
	struct bridge_stats s;
	unsigned char f[80];
	int sa, rb, i;

	(void)state;
	o.dir[0].duplicate = UINT32_MAX;
	b = start(&o);
	sa = raw_sock("llEa0", ETHT, 0);
	rb = raw_sock("llEb0", ETHT, 0);
	for (i = 0; i < 100; i++) {
		frame(f, sizeof(f), (uint32_t)i);
		assert_int_equal(send(sa, f, sizeof(f), 0), (ssize_t)sizeof(f));
	}
	assert_int_equal(collect(rb, 200, NULL, 0, NULL, 0), 200);
	bridge_get_stats(b, BRIDGE_A_TO_B, &s);
	assert_int_equal(s.emu.duplicated, 100);
	assert_int_equal(s.tx_pkts, 200);
	bridge_close(b);
	close(sa);
	close(rb);
}

static uint32_t sum16(const unsigned char *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (i < n)
		s += (uint32_t)p[i] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* An IPv4/UDP frame sent CHECKSUM_PARTIAL (vnet hdr NEEDS_CSUM): the engine
 * must complete the UDP checksum before flipping one bit, as netem does. */
static void test_corrupt_completes_checksum(void **state)
{
	struct bridge_opts o = { 0 };
	struct bridge *b;
	unsigned char pkt[sizeof(struct virtio_net_hdr) + 14 + 20 + 8 + 64];
	unsigned char *f = pkt + sizeof(struct virtio_net_hdr), exp[14 + 20 + 8 + 64],
		      got[sizeof(exp)];
	struct virtio_net_hdr *vh = (void *)pkt;
	uint32_t ps;
	uint16_t ck;
	int sa, rb, i, bits = 0, pos = -1;

	(void)state;
	memset(pkt, 0, sizeof(pkt));
	memset(f, 0xff, 6);
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x01", 6);
	f[12] = 0x08;                                   /* IPv4 */
	f[14] = 0x45;
	f[16] = 0;
	f[17] = 20 + 8 + 64;                            /* total length */
	f[22] = 64;                                     /* TTL */
	f[23] = 17;                                     /* UDP */
	memcpy(f + 26, "\x0a\x09\x00\x01\x0a\x09\x00\x02", 8);
	ck = (uint16_t)~fold(sum16(f + 14, 20, 0));
	f[24] = (unsigned char)(ck >> 8);
	f[25] = (unsigned char)ck;
	f[34] = 0x30; f[35] = 0x39; f[36] = 0x30; f[37] = 0x3a;   /* ports */
	f[39] = 8 + 64;                                 /* UDP length */
	for (i = 0; i < 64; i++)
		f[42 + i] = (unsigned char)(i * 13 + 1);
	/* expected: the full checksum over pseudo header + UDP */
	memcpy(exp, f, sizeof(exp));
	ps = sum16(f + 26, 8, 0) + 17 + 72;
	ck = (uint16_t)~fold(sum16(exp + 34, 72, ps));
	exp[40] = (unsigned char)(ck >> 8);
	exp[41] = (unsigned char)ck;
	/* sent partial: the field holds the folded pseudo-header sum */
	ck = fold(ps);
	f[40] = (unsigned char)(ck >> 8);
	f[41] = (unsigned char)ck;
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->csum_start = 34;
	vh->csum_offset = 6;

	o.dir[0].corrupt = UINT32_MAX;
	b = start(&o);
	sa = raw_sock("llEa0", ETH_P_IP, 1);
	rb = raw_sock("llEb0", ETH_P_IP, 0);
	assert_int_equal(send(sa, pkt, sizeof(pkt), 0), (ssize_t)sizeof(pkt));
	memset(got, 0, sizeof(got));
	assert_int_equal(collect(rb, 200, NULL, 0, got, sizeof(got)), 1);
	for (i = 0; i < (int)sizeof(exp) * 8; i++)
		if ((got[i / 8] ^ exp[i / 8]) & (1u << (i % 8))) {
			bits++;
			pos = i;
		}
	printf("  corrupt: %d bit(s) differ from the checksummed frame, bit %d\n", bits, pos);
	assert_int_equal(bits, 1);
	assert_true(pos >= 14 * 8);
	bridge_close(b);
	close(sa);
	close(rb);
}

static void test_rate_spacing(void **state)
{
	struct bridge_opts o = { 0 };
	struct bridge *b;
	unsigned char f[1000];
	int64_t at[20] = { 0 };
	double gap;
	int sa, rb, i;

	(void)state;
	o.dir[0].rate = 125000;          /* 1 Mbit/s: 1000 bytes = 8 ms */
	o.dir[0].limit = 100;
	b = start(&o);
	sa = raw_sock("llEa0", ETHT, 0);
	rb = raw_sock("llEb0", ETHT, 0);
	for (i = 0; i < 20; i++) {
		frame(f, sizeof(f), (uint32_t)i);
		assert_int_equal(send(sa, f, sizeof(f), 0), (ssize_t)sizeof(f));
	}
	assert_int_equal(collect(rb, 300, at, 20, NULL, 0), 20);
	gap = (double)(at[19] - at[0]) / 19 / 1e6;
	printf("  rate 1mbit, 1000-byte frames: mean spacing %.3f ms (8 ms)\n", gap);
	assert_true(gap > 7.8 && gap < 8.3);
	bridge_close(b);
	close(sa);
	close(rb);
}

static void test_open_errors(void **state)
{
	struct bridge_opts o = { 0 };
	struct bridge *b = NULL;
	struct ll_err err = { 0 };

	(void)state;
	snprintf(o.if_a, sizeof(o.if_a), "llEa1");
	snprintf(o.if_b, sizeof(o.if_b), "llEnone");
	assert_int_equal(bridge_open(&o, &b, &err), -ENODEV);
	assert_null(b);
	assert_non_null(strstr(err.msg, "llEnone"));
	snprintf(o.if_b, sizeof(o.if_b), "llEa1");
	assert_int_equal(bridge_open(&o, &b, &err), -EINVAL);
	snprintf(o.if_b, sizeof(o.if_b), "llEb1");
	o.dir[1].jitter = (int64_t)1 << 40;
	assert_int_equal(bridge_open(&o, &b, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "B->A"));
}

static void test_kernel_bridge(void **state)
{
	struct ll_err err = { 0 };
	unsigned char f[80];
	int sa, rb, i, netem;

	(void)state;
	netem = bridge_kernel_has_netem();
	printf("  this kernel %s netem\n", netem == 1 ? "has" : netem == 0 ? "has no" : "cannot tell about");
	assert_true(netem == 0 || netem == 1);
	if (bridge_kernel_up("llEbr", "llEa1", "llEb1", &err) != 0)
		fail_msg("bridge_kernel_up: %s", err.msg);
	assert_int_equal(bridge_kernel_up("llEbr", "llEa1", "llEb1", &err), -EEXIST);
	sa = raw_sock("llEa0", ETHT, 0);
	rb = raw_sock("llEb0", ETHT, 0);
	usleep(100000);
	for (i = 0; i < 10; i++) {
		frame(f, sizeof(f), (uint32_t)i);
		assert_int_equal(send(sa, f, sizeof(f), 0), (ssize_t)sizeof(f));
	}
	assert_int_equal(collect(rb, 200, NULL, 0, NULL, 0), 10);
	assert_int_equal(bridge_kernel_down("llEbr", &err), 0);
	assert_int_equal(if_nametoindex("llEbr"), 0);
	assert_int_equal(bridge_kernel_down("llEbr", &err), 0);   /* already gone */
	for (i = 0; i < 10; i++)
		assert_int_equal(send(sa, f, sizeof(f), 0), (ssize_t)sizeof(f));
	assert_int_equal(collect(rb, 100, NULL, 0, NULL, 0), 0);  /* no path left */
	close(sa);
	close(rb);
}

/* Status files: written atomically, listed for this netns while the
 * process lives, skipped once it is gone, removed at exit. No root needed. */
static void test_status_files(void **state)
{
	char dir[] = "/tmp/linklab-E-status-XXXXXX", cmd[128];
	struct bridge_status st, out[4];
	struct ll_err err = { 0 };
	pid_t dead;
	int n = -1;

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("LINKLAB_RUN_DIR", dir, 1);
	assert_int_equal(bridge_status_list(out, 4, &n, &err), 0);
	assert_int_equal(n, 0);
	memset(&st, 0, sizeof(st));
	st.pid = (int)getpid();
	snprintf(st.engine, sizeof(st.engine), "user");
	snprintf(st.if_a, sizeof(st.if_a), "veth-ma");
	snprintf(st.if_b, sizeof(st.if_b), "veth-mb");
	snprintf(st.dial[0], sizeof(st.dial[0]), "delay 50ms loss 1%%");
	snprintf(st.dial[1], sizeof(st.dial[1]), "none");
	st.c[0].rx_pkts = 1000;
	st.c[0].lost = 10;
	st.c[1].drops = 3;
	st.updated = 1700000000;
	assert_int_equal(bridge_status_write(&st, &err), 0);
	/* a status left by a process that is gone (kill -9) */
	dead = fork();
	if (dead == 0)
		_exit(0);
	assert_true(dead > 0);
	waitpid(dead, NULL, 0);
	st.pid = (int)dead;
	assert_int_equal(bridge_status_write(&st, &err), 0);
	assert_int_equal(bridge_status_list(out, 4, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].pid, getpid());
	assert_string_equal(out[0].engine, "user");
	assert_string_equal(out[0].if_b, "veth-mb");
	assert_string_equal(out[0].dial[0], "delay 50ms loss 1%");
	assert_int_equal(out[0].c[0].rx_pkts, 1000);
	assert_int_equal(out[0].c[0].lost, 10);
	assert_int_equal(out[0].c[1].drops, 3);
	assert_int_equal(out[0].updated, 1700000000);
	bridge_status_remove((int)getpid());
	assert_int_equal(bridge_status_list(out, 4, &n, &err), 0);
	assert_int_equal(n, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	unsetenv("LINKLAB_RUN_DIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		NETNS_CASE(test_delay_and_counters, VETH_SETUP),
		NETNS_CASE(test_loss_one_direction, VETH_SETUP),
		NETNS_CASE(test_duplicate_all, VETH_SETUP),
		NETNS_CASE(test_corrupt_completes_checksum, VETH_SETUP),
		NETNS_CASE(test_rate_spacing, VETH_SETUP),
		NETNS_CASE(test_open_errors, VETH_SETUP),
		NETNS_CASE(test_kernel_bridge, VETH_SETUP),
		cmocka_unit_test(test_status_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
