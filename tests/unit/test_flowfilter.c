/* SPDX-License-Identifier: MIT */
/* test_flowfilter.c - ingress qdisc, u32 mirred/flow filters and htb
 * qdisc/class messages against iproute2 6.1 tc's own bytes
 * (tests/data/tc-{ingress,filter-*,htb*}.hex); IFB naming; IFB device
 * create/delete in a private network namespace (root). */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture.h"

#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "linklab/netlink/flowfilter.h"

#ifndef DATA_DIR
#define DATA_DIR "tests/data"
#endif

static size_t load_hex(const char *name, unsigned char *buf, size_t max)
{
	char path[256], line[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", DATA_DIR, name);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		if (line[0] == '#')
			continue;
		for (;;) {
			unsigned long v = strtoul(p, &end, 16);

			if (end == p)
				break;
			assert_true(n < max);
			buf[n++] = (unsigned char)v;
			p = end;
		}
	}
	fclose(f);
	assert_true(n >= 36);
	return n;
}

/* whole message equal except nlmsg_seq and nlmsg_pid */
static void same_as_tc(const char *file, struct nl_msg *m)
{
	static unsigned char g[16384];
	size_t n = load_hex(file, g, sizeof(g));
	const unsigned char *o = (const unsigned char *)nlmsg_hdr(m);
	size_t i;

	if (nlmsg_hdr(m)->nlmsg_len != n)
		fprintf(stderr, "%s: length %u vs tc %zu\n", file,
			nlmsg_hdr(m)->nlmsg_len, n);
	assert_int_equal(nlmsg_hdr(m)->nlmsg_len, n);
	assert_memory_equal(g, o, 8);
	for (i = 16; i < n; i++)
		if (g[i] != o[i]) {
			fprintf(stderr, "%s: byte %zu is %02x, tc sent %02x\n", file, i,
				o[i], g[i]);
			fail();
		}
	nlmsg_free(m);
}

static void test_golden(void **state)
{
	static const uint8_t net[4] = { 10, 9, 0, 0 };
	struct nl_msg *m = NULL;
	struct ll_err e = { 0 };

	(void)state;
	assert_int_equal(flowfilter_build_ingress(1, NLM_F_CREATE | NLM_F_REPLACE, &m, &e), 0);
	same_as_tc("tc-ingress.hex", m);
	assert_int_equal(flowfilter_build_mirred(1, 2, &m, &e), 0);
	same_as_tc("tc-filter-mirred.hex", m);
	assert_int_equal(flowfilter_build_flow(1, 0x00010000, 0x00010001, net, 16, 5201, &m, &e), 0);
	same_as_tc("tc-filter-flow.hex", m);
	assert_int_equal(flowfilter_build_flow(1, 0x00010000, 0x00010001, NULL, 0, 5201, &m, &e), 0);
	same_as_tc("tc-filter-dport.hex", m);
	{
		static const uint8_t n6[16] = { 0xfd, 0, 0, 1 };
		static const uint8_t a6[16] = { 0xfd, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5,
						0, 6, 0, 7 };

		assert_int_equal(flowfilter_build_flow6(1, 0x00010000, 0x00010001, n6, 48, 5201,
						&m, &e), 0);
		same_as_tc("tc-filter-flow6.hex", m);
		assert_int_equal(flowfilter_build_flow6(1, 0x00010000, 0x00010001, NULL, 0, 5201,
						&m, &e), 0);
		same_as_tc("tc-filter-dport6.hex", m);
		assert_int_equal(flowfilter_build_flow6(1, 0x00010000, 0x00010001, a6, 128, 0,
						&m, &e), 0);
		same_as_tc("tc-filter-dst6-128.hex", m);
		assert_int_equal(flowfilter_build_flow6(1, 0x10000, 0x10001, a6, 129, 0, &m, &e),
				 -EINVAL);
		assert_int_equal(flowfilter_build_flow_flush(1, 0x10000, &m, &e), 0);
		assert_int_equal(nlmsg_hdr(m)->nlmsg_type, RTM_DELTFILTER);
		nlmsg_free(m);
	}
	assert_int_equal(flowfilter_build_htb(1, 0x00010000, 2, &m, &e), 0);
	same_as_tc("tc-htb.hex", m);
	/* 50mbit burst 25000b; 40gbit burst 20000000b (RATE64/CEIL64) */
	assert_int_equal(flowfilter_build_htb_class(1, 0x00010000, 0x00010001, 6250000, 25000,
					    250, &m, &e), 0);
	same_as_tc("tc-htb-class.hex", m);
	assert_int_equal(flowfilter_build_htb_class(1, 0x00010000, 0x00010002, 5000000000ULL,
					    20000000, 250, &m, &e), 0);
	same_as_tc("tc-htb-class64.hex", m);
}

static void test_errors_and_names(void **state)
{
	static const uint8_t net[4] = { 10, 9, 0, 0 };
	struct nl_msg *m = NULL;
	struct ll_err e = { 0 };
	char a[16], b[16];

	(void)state;
	assert_int_equal(flowfilter_build_flow(1, 0x10000, 0x10001, NULL, 0, 0, &m, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "needs a destination prefix or port"));
	assert_null(m);
	assert_int_equal(flowfilter_build_flow(1, 0x10000, 0x10001, net, 33, 0, &m, &e), -EINVAL);
	assert_int_equal(flowfilter_build_htb_class(1, 0x10000, 0x10001, 0, 0, 250, &m, &e), -EINVAL);
	qdisc_ifb_name("veth-a", a, sizeof(a));
	qdisc_ifb_name("veth-b", b, sizeof(b));
	assert_int_equal(strlen(a), 13);
	assert_int_equal(strncmp(a, "llifb", 5), 0);
	assert_string_not_equal(a, b);
	qdisc_ifb_name("veth-a", b, sizeof(b));
	assert_string_equal(a, b);       /* same on every host */
	qdisc_ifb_name("x;$(id)", b, sizeof(b));
	assert_null(strpbrk(b + 5, ";$()"));
}

/* In a network namespace of its own (NETNS_CASE): create, find again,
 * delete. */
static void test_ifb_netns(void **state)
{
	struct nl_sock *sk;
	struct ll_err e = { 0 };
	bool created = false;
	int idx = 0, idx2 = 0;

	(void)state;
	sk = nl_socket_alloc();
	assert_non_null(sk);
	assert_int_equal(nl_connect(sk, NETLINK_ROUTE), 0);
	assert_int_equal(flowfilter_ifb_ensure(sk, "llifbtest", &idx, &created, &e), 0);
	assert_true(created);
	assert_true(idx > 1);
	assert_int_equal(flowfilter_ifb_ensure(sk, "llifbtest", &idx2, &created, &e), 0);
	assert_false(created);
	assert_int_equal(idx, idx2);
	assert_int_equal(flowfilter_ifb_delete(sk, "llifbtest", &e), 0);
	assert_int_equal(flowfilter_ifb_delete(sk, "llifbtest", &e), 0);  /* gone: fine */
	assert_int_equal(flowfilter_ifb_delete(sk, "lo", &e), -EEXIST);   /* not an IFB */
	nl_socket_free(sk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_errors_and_names),
		NETNS_CASE(test_ifb_netns, NULL),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
