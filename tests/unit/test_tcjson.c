/* SPDX-License-Identifier: MIT */
/* test_tcjson.c - ip -j / tc -j parsing against fixtures in tests/data/
 * (captured from this machine's iproute2 6.1 in a private netns; the netem
 * ones written from tc/q_netem.c netem_print_opt). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <linux/pkt_sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/remote/tcjson.h"

static char *slurp(const char *name)
{
	const char *dir = getenv("LL_TEST_DATA") ? getenv("LL_TEST_DATA") : "tests/data";
	char path[512];
	FILE *f;
	long n;
	char *buf;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f) {
		print_error("cannot open fixture %s (run from the repo root)\n", path);
		fail();
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void test_links(void **state)
{
	char *j = slurp("ip_addr.json");
	struct link_list *ll = calloc(1, sizeof(*ll));
	struct ll_err err = {0};

	(void)state;
	assert_int_equal(tcjson_links(j, ll, &err), 0);
	assert_int_equal(ll->n, 3);
	assert_string_equal(ll->l[0].name, "lo");
	assert_int_equal(ll->l[0].mtu, 65536);
	assert_string_equal(ll->l[0].addrs[0], "127.0.0.1/8");
	/* a full-length prefix is shown bare, as the local (libnl) lister */
	assert_string_equal(ll->l[0].addrs[1], "::1");
	assert_string_equal(ll->l[0].state, "UNKNOWN");
	assert_true(ll->l[0].up);
	/* veth-b: only a link-local address, listed like the local side */
	assert_string_equal(ll->l[1].name, "veth-b");
	assert_int_equal(ll->l[1].ifindex, 2);
	assert_int_equal(ll->l[1].mtu, 1400);
	assert_int_equal(ll->l[1].naddrs, 1);
	assert_string_equal(ll->l[1].addrs[0], "fe80::586f:cdff:fec5:3ad6/64");
	assert_string_equal(ll->l[1].qdisc, "noqueue");
	assert_string_equal(ll->l[2].name, "veth-a");
	assert_string_equal(ll->l[2].qdisc, "tbf");
	assert_string_equal(ll->l[2].state, "UP");
	assert_int_equal(ll->l[2].naddrs, 3);
	assert_string_equal(ll->l[2].addrs[0], "10.199.0.1/24");
	assert_string_equal(ll->l[2].addrs[1], "fd99::1/64");
	assert_string_equal(ll->l[2].addrs[2], "fe80::8c52:f4ff:fe43:8c7c/64");
	free(ll);
	free(j);
}

static void test_links_bad(void **state)
{
	struct link_list *ll = calloc(1, sizeof(*ll));
	struct ll_err err = {0};

	(void)state;
	assert_int_equal(tcjson_links("Error: oops", ll, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not JSON"));
	assert_int_equal(tcjson_links("{\"a\":1}", ll, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "array"));
	assert_int_equal(tcjson_links("[]", ll, &err), 0);
	assert_int_equal(ll->n, 0);
	free(ll);
}

static void test_route_dev(void **state)
{
	char *j = slurp("ip_route_get.json");
	char dev[IF_NAMESIZE], tiny[3];
	struct ll_err err = {0};

	(void)state;
	assert_int_equal(tcjson_route_dev(j, dev, sizeof(dev), &err), 0);
	assert_string_equal(dev, "veth-a");
	assert_int_equal(tcjson_route_dev(j, tiny, sizeof(tiny), &err), -ENOSPC);
	assert_int_equal(tcjson_route_dev("[{\"dst\":\"1.2.3.4\"}]", dev,
					  sizeof(dev), &err), -ENOENT);
	assert_int_equal(tcjson_route_dev("[", dev, sizeof(dev), &err), -EINVAL);
	free(j);
}

static void test_handles(void **state)
{
	uint32_t h;

	(void)state;
	assert_int_equal(tcjson_parse_handle("1:", &h), 0);
	assert_int_equal(h, 0x10000);
	assert_int_equal(tcjson_parse_handle("1:1", &h), 0);
	assert_int_equal(h, 0x10001);
	assert_int_equal(tcjson_parse_handle("8001:", &h), 0);
	assert_int_equal(h, 0x80010000);
	assert_int_equal(tcjson_parse_handle("0:", &h), 0);
	assert_int_equal(h, 0);
	assert_int_equal(tcjson_parse_handle("root", &h), 0);
	assert_int_equal(h, TC_H_ROOT);
	assert_int_equal(tcjson_parse_handle("1", &h), -EINVAL);
	assert_int_equal(tcjson_parse_handle("x:", &h), -EINVAL);
	assert_int_equal(tcjson_parse_handle("10000:", &h), -EINVAL);
	assert_int_equal(tcjson_parse_handle("", &h), -EINVAL);
}

static void test_tbf(void **state)
{
	char *j = slurp("tc_tbf.json");
	struct qdisc_state qs;
	struct ll_err err = {0};

	(void)state;
	assert_int_equal(tcjson_qdiscs(j, "veth-a", &qs, &err), 0);
	assert_string_equal(qs.dev, "veth-a");
	assert_int_equal(qs.n, 1);
	assert_string_equal(qs.q[0].kind, "tbf");
	assert_int_equal(qs.q[0].handle, 0x10000);
	assert_int_equal(qs.q[0].parent, TC_H_ROOT);
	/* applied as "rate 50mbit burst 6250b limit 318750b": tc -j prints
	 * rate 6250000 (bytes/s) and lat 50000 (us) */
	assert_int_equal(qs.q[0].rate, 50000000);
	assert_int_equal(qs.q[0].burst, 6250);
	assert_int_equal(qs.q[0].limit, 318750);
	free(j);
}

static void test_noqueue(void **state)
{
	char *j = slurp("tc_noqueue.json");
	struct qdisc_state qs;

	(void)state;
	assert_int_equal(tcjson_qdiscs(j, "veth-b", &qs, NULL), 0);
	assert_int_equal(qs.n, 1);
	assert_string_equal(qs.q[0].kind, "noqueue");
	assert_int_equal(qs.q[0].handle, 0);
	assert_int_equal(qs.q[0].rate, 0);
	free(j);
}

static void test_tbf_pfifo_and_fifo(void **state)
{
	char *j = slurp("tc_tbf_pfifo.json");
	struct qdisc_state qs;

	(void)state;
	assert_int_equal(tcjson_qdiscs(j, "veth-b", &qs, NULL), 0);
	assert_int_equal(qs.n, 2);
	assert_string_equal(qs.q[0].kind, "tbf");
	assert_int_equal(qs.q[0].rate, 10000000);
	assert_int_equal(qs.q[0].burst, 5000);
	/* latency 50ms at 1250000 B/s: 62500 + burst 5000 */
	assert_int_equal(qs.q[0].limit, 67500);
	assert_string_equal(qs.q[1].kind, "pfifo");
	assert_int_equal(qs.q[1].handle, 0x100000);
	assert_int_equal(qs.q[1].parent, 0x10001);
	assert_int_equal(qs.q[1].limit, 100);
	free(j);
	j = slurp("tc_bfifo.json");
	assert_int_equal(tcjson_qdiscs(j, "veth-b", &qs, NULL), 0);
	assert_string_equal(qs.q[0].kind, "bfifo");
	assert_int_equal(qs.q[0].limit, 30000);
	free(j);
}

static void test_netem(void **state)
{
	char *j = slurp("tc_tbf_netem.json");
	struct qdisc_state qs;
	const struct qdisc_info *n;

	(void)state;
	assert_int_equal(tcjson_qdiscs(j, "eth1", &qs, NULL), 0);
	assert_int_equal(qs.n, 2);
	assert_int_equal(qs.q[0].bytes, 152340);
	assert_int_equal(qs.q[0].packets, 102);
	assert_int_equal(qs.q[0].drops, 3);
	assert_int_equal(qs.q[0].overlimits, 17);
	assert_int_equal(qs.q[0].backlog, 2960);
	assert_int_equal(qs.q[0].qlen, 2);
	n = &qs.q[1];
	assert_string_equal(n->kind, "netem");
	assert_int_equal(n->parent, 0x10001);
	assert_int_equal(n->limit, 1000);
	assert_int_equal(n->delay, 100000000);
	assert_int_equal(n->jitter, 10000000);
	/* 25% -> round(0.25 * UINT32_MAX) as tc's set_percent */
	assert_int_equal(n->delay_corr, 1073741824);
	assert_int_equal(n->loss, 42949673);
	assert_int_equal(n->loss_corr, 1073741824);
	assert_int_equal(n->duplicate, 21474836);
	assert_int_equal(n->reorder, 429496730);
	assert_int_equal(n->reorder_corr, 2147483648u);
	assert_int_equal(n->corrupt, 4294967);
	assert_int_equal(n->gap, 5);
	assert_int_equal(n->drops, 1);
	free(j);
	j = slurp("tc_netem_root.json");
	assert_int_equal(tcjson_qdiscs(j, "eth1", &qs, NULL), 0);
	assert_int_equal(qs.n, 1);
	assert_int_equal(qs.q[0].handle, 0x80010000);
	assert_int_equal(qs.q[0].parent, TC_H_ROOT);
	assert_int_equal(qs.q[0].delay, 40000000);
	assert_int_equal(qs.q[0].jitter, 5000000);
	assert_int_equal(qs.q[0].loss, 21474836);
	assert_int_equal(qs.q[0].loss_corr, 0);
	free(j);
}

static void test_root_first(void **state)
{
	/* a child listed before its root is still returned after it */
	const char *j = "[{\"kind\":\"pfifo\",\"handle\":\"10:\",\"parent\":\"1:1\","
			"\"options\":{\"limit\":7}},{\"kind\":\"tbf\",\"handle\":\"1:\","
			"\"root\":true,\"options\":{\"rate\":125000,\"burst\":1600,"
			"\"limit\":9000}}]";
	struct qdisc_state qs;

	(void)state;
	assert_int_equal(tcjson_qdiscs(j, "x", &qs, NULL), 0);
	assert_int_equal(qs.n, 2);
	assert_string_equal(qs.q[0].kind, "tbf");
	assert_int_equal(qs.q[0].rate, 1000000);
	assert_int_equal(qs.q[0].limit, 9000);
	assert_string_equal(qs.q[1].kind, "pfifo");
	assert_int_equal(qs.q[1].limit, 7);
}

/* tc 6.1 "tc class show" (plain text, captured in the lab for a --rate
 * 10mbit --dport 5201 dial) */
static const char htb_classes[] =
	"class htb 1:1 root prio 0 rate 10Mbit ceil 10Mbit burst 5000b cburst 5000b \n"
	"class htb 1:2 root prio 0 rate 100Gbit ceil 100Gbit burst 50000000b cburst 50000000b \n";

static void test_ingress_flag(void **state)
{
	char *j = slurp("tc_htb_ingress.json");
	struct qdisc_state qs;

	(void)state;
	assert_int_equal(tcjson_qdiscs(j, "veth-b", &qs, NULL), 0);
	/* as nlqdisc.c: the ingress qdisc is a flag, not a tree member */
	assert_true(qs.has_ingress);
	assert_int_equal(qs.n, 1);
	assert_string_equal(qs.q[0].kind, "htb");
	assert_int_equal(qs.q[0].handle, 0x10000);
	free(j);
	j = slurp("tc_tbf.json");
	assert_int_equal(tcjson_qdiscs(j, "veth-b", &qs, NULL), 0);
	assert_false(qs.has_ingress);
	free(j);
}

static void test_htb_class(void **state)
{
	char *j = slurp("tc_htb_ingress.json");
	struct qdisc_state qs;

	(void)state;
	assert_int_equal(tcjson_qdiscs(j, "veth-b", &qs, NULL), 0);
	assert_int_equal(qs.q[0].rate, 0);
	assert_int_equal(tcjson_htb_class(htb_classes, &qs, NULL), 0);
	assert_int_equal(qs.q[0].rate, 10000000);
	assert_int_equal(qs.q[0].burst, 5000);
	/* rounded and binary units as tc prints them */
	assert_int_equal(tcjson_htb_class("class htb 1:2 root rate 1Gbit burst 1b\n"
					  "class htb 1:1 parent 1: prio 0 rate 12345Kbit ceil 12345Kbit burst 16Kb cburst 16Kb\n",
					  &qs, NULL), 0);
	assert_int_equal(qs.q[0].rate, 12345000);
	assert_int_equal(qs.q[0].burst, 16384);
	assert_int_equal(tcjson_htb_class("class htb 1:1 root rate 1Mibit burst 2Mb\n", &qs, NULL), 0);
	assert_int_equal(qs.q[0].rate, 1048576);
	assert_int_equal(qs.q[0].burst, 2097152);
	/* no class 1:1: left alone; garbage rate: left alone */
	assert_int_equal(tcjson_htb_class("", &qs, NULL), 0);
	assert_int_equal(tcjson_htb_class("class htb 1:1 root rate fast burst 9b\n", &qs, NULL), 0);
	assert_int_equal(qs.q[0].rate, 1048576);
	assert_int_equal(tcjson_htb_class(NULL, &qs, NULL), -EINVAL);
	free(j);
	/* a tbf root is not linklab's htb: classes are not folded in */
	j = slurp("tc_tbf.json");
	assert_int_equal(tcjson_qdiscs(j, "veth-b", &qs, NULL), 0);
	{
		uint64_t before = qs.q[0].rate;

		assert_int_equal(tcjson_htb_class(htb_classes, &qs, NULL), 0);
		assert_int_equal(qs.q[0].rate, before);
	}
	free(j);
}

static void test_scope(void **state)
{
	char *j = slurp("tc_filter_scope.json");
	struct qdisc_state qs;
	static const uint8_t v4[4] = { 10, 199, 0, 0 };
	static const uint8_t v6[16] = { 0xfd, 0x99 };
	struct ll_err e = {0};

	(void)state;
	memset(&qs, 0, sizeof(qs));
	/* ip dst 10.199.0.0/24 + dport 5201 (prio 1); ip6 dst fd99::/64 (prio 2):
	 * the last family read wins dst, as nlqdisc.c's on_filter */
	assert_int_equal(tcjson_scope(j, &qs, NULL), 0);
	assert_true(qs.scoped);
	assert_int_equal(qs.dport, 5201);
	assert_int_equal(qs.dst_family, AF_INET6);
	assert_int_equal(qs.dst_plen, 64);
	assert_memory_equal(qs.dst6, v6, 16);
	assert_memory_equal(qs.dst_addr, v4, 4);
	free(j);
	j = slurp("tc_filter_dport.json");
	assert_int_equal(tcjson_scope(j, &qs, NULL), 0);
	assert_true(qs.scoped);
	assert_int_equal(qs.dport, 5201);
	assert_int_equal(qs.dst_plen, 0);
	assert_int_equal(qs.dst_family, 0);
	free(j);
	/* IPv4 dst only */
	assert_int_equal(tcjson_scope("[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"u32\",\"options\":"
				      "{\"fh\":\"800::800\",\"flowid\":\"1:1\",\"match\":{\"value\":\"ac70002\","
				      "\"mask\":\"ffffffff\",\"off\":16}}}]", &qs, NULL), 0);
	assert_true(qs.scoped);
	assert_int_equal(qs.dst_family, AF_INET);
	assert_int_equal(qs.dst_plen, 32);
	assert_int_equal(qs.dst_addr[3], 2);
	assert_int_equal(qs.dport, 0);
	/* no filter, or one to another class / a hash table only: not scoped */
	assert_int_equal(tcjson_scope("", &qs, NULL), 0);
	assert_false(qs.scoped);
	assert_int_equal(tcjson_scope("[{\"kind\":\"u32\",\"options\":{\"fh\":\"800:\",\"ht_divisor\":1}},"
				      "{\"kind\":\"u32\",\"options\":{\"fh\":\"800::801\",\"flowid\":\"1:2\"}}]",
				      &qs, NULL), 0);
	assert_false(qs.scoped);
	assert_int_equal(tcjson_scope("Error: nope", &qs, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "filter"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_links_bad),
		cmocka_unit_test(test_route_dev),
		cmocka_unit_test(test_handles),
		cmocka_unit_test(test_tbf),
		cmocka_unit_test(test_noqueue),
		cmocka_unit_test(test_tbf_pfifo_and_fifo),
		cmocka_unit_test(test_netem),
		cmocka_unit_test(test_root_first),
		cmocka_unit_test(test_ingress_flag),
		cmocka_unit_test(test_htb_class),
		cmocka_unit_test(test_scope),
	};
	return cmocka_run_group_tests_name("tcjson", tests, NULL, NULL);
}
