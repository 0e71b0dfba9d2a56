/* SPDX-License-Identifier: MIT */
/* test_tctree.c - the peer's tc records (tests/data/tctree-*.json, captured
 * with tctree_record_cmd from this machine's iproute2 6.1 in a private
 * netns) rebuilt as tc commands, compared, and refused where tc prints too
 * little to rebuild them exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/remote/tctree.h"

static char *slurp(const char *name)
{
	const char *dir = getenv("LL_TEST_DATA") ? getenv("LL_TEST_DATA") : "tests/data";
	char path[512];
	FILE *f;
	long n;
	char *buf;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static char cmd[16384];

static void test_htb_tree(void **state)
{
	char *rec = slurp("tctree-htbtree.json");
	struct ll_err e = { 0 };
	const char *c1, *c10, *q10, *f800, *f801;

	(void)state;
	assert_int_equal(tctree_restore_cmd("rt0", rec, cmd, sizeof(cmd), &e), 0);
	/* linklab's root and any ingress side go first */
	assert_non_null(strstr(cmd, "tc qdisc del dev 'rt0' root"));
	assert_non_null(strstr(cmd, "tc qdisc add dev 'rt0' root handle 1: htb r2q 5 default 20 direct_qlen 1000"));
	/* burst 15k found back from the buffer ticks, exactly */
	c1 = strstr(cmd, "classid 1:1 htb rate 10000000bit ceil 20000000bit burst 15360 cburst 1600");
	c10 = strstr(cmd, "classid 1:10 htb rate 5000000bit ceil 10000000bit burst 1600 cburst 1600 prio 1");
	q10 = strstr(cmd, "parent 1:10 handle 10: pfifo limit 30");
	assert_non_null(strstr(cmd, "parent 1:20 handle 20: tbf rate 1000000bit burst 10240 limit 16490"));
	f800 = strstr(cmd, "prio 1 handle 800::800 u32 flowid 1:10 match u32 0xa000001 0xffffffff at 16");
	f801 = strstr(cmd, "prio 2 handle 801::800 u32 flowid 1:20 match u32 0x50 0xffff at 20");
	assert_non_null(c1);
	assert_non_null(c10);
	assert_non_null(q10);
	assert_non_null(f800);
	assert_non_null(f801);
	/* parents first; lists in the order of their hash tables */
	assert_true(c1 < c10 && c10 < q10 && q10 < f800 && f800 < f801);
	free(rec);
}

static void test_tbf_peakrate(void **state)
{
	char *rec = slurp("tctree-tbfpeak.json");
	struct ll_err e = { 0 };

	(void)state;
	assert_int_equal(tctree_restore_cmd("rt0", rec, cmd, sizeof(cmd), &e), 0);
	/* tc printed burst 7776 and no peakrate in JSON: both come back */
	assert_non_null(strstr(cmd, "root handle 7: tbf rate 3000000bit burst 7777 limit 33333 peakrate 5000000bit mtu 1600"));
	free(rec);
}

static void test_clsact_mq(void **state)
{
	char *rec = slurp("tctree-clsact.json");
	struct ll_err e = { 0 };

	(void)state;
	assert_int_equal(tctree_restore_cmd("rt0", rec, cmd, sizeof(cmd), &e), 0);
	assert_non_null(strstr(cmd, "tc qdisc add dev 'rt0' clsact"));
	/* redirect's default control action (stolen) has no word in tc */
	assert_non_null(strstr(cmd, "parent ffff:fff2 protocol 'ip' prio 3 handle 800::800 u32 match u32 0x1020304 0xffffffff at 12 action mirred egress redirect dev 'lo'"));
	assert_null(strstr(cmd, "stolen"));
	assert_non_null(strstr(cmd, "parent ffff:fff3 protocol 'ip' prio 5 handle 801::800"));
	free(rec);
	rec = slurp("tctree-mq.json");
	assert_int_equal(tctree_restore_cmd("rt0", rec, cmd, sizeof(cmd), &e), 0);
	assert_non_null(strstr(cmd, "root handle 1: mq && tc qdisc replace dev 'rt0' parent 1:2 handle 12: pfifo limit 44"));
	assert_non_null(strstr(cmd, "parent 1:3 handle 13: tbf rate 2000000bit burst 5000 limit 20000"));
	/* the kernel's own per-queue children (handle 0:) are not made */
	assert_null(strstr(cmd, "pfifo_fast"));
	free(rec);
}

static char *replace(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	char *out;

	assert_non_null(at);
	out = calloc(1, strlen(s) + strlen(to) + 1);
	assert_non_null(out);
	memcpy(out, s, (size_t)(at - s));
	strcat(out, to);
	strcat(out, at + strlen(from));
	return out;
}

static void test_refusals(void **state)
{
	char *rec = slurp("tctree-htbtree.json"), *bad;
	struct ll_err e = { 0 };

	(void)state;
	/* tc prints 1234567bit as "1234Kbit": ambiguous, refused by name */
	bad = replace(rec, "rate 2Mbit ceil 2Mbit", "rate 1234Kbit ceil 2Mbit");
	assert_int_equal(tctree_restore_cmd("rt0", bad, cmd, sizeof(cmd), &e), -ENOTSUP);
	assert_non_null(strstr(e.msg, "class htb 1:20"));
	assert_non_null(strstr(e.msg, "1234Kbit"));
	free(bad);
	bad = replace(rec, "\"kind\":\"pfifo\"", "\"kind\":\"cake\"");
	assert_int_equal(tctree_restore_cmd("rt0", bad, cmd, sizeof(cmd), &e), -ENOTSUP);
	assert_non_null(strstr(e.msg, "qdisc cake 10:"));
	free(bad);
	/* every entry of the filter list says bpf */
	bad = replace(rec, "\"kind\":\"u32\"", "\"kind\":\"bpf\"");
	while (strstr(bad, "\"kind\":\"u32\"")) {
		char *b2 = replace(bad, "\"kind\":\"u32\"", "\"kind\":\"bpf\"");

		free(bad);
		bad = b2;
	}
	assert_int_equal(tctree_restore_cmd("rt0", bad, cmd, sizeof(cmd), &e), -ENOTSUP);
	assert_non_null(strstr(e.msg, "filter bpf parent 1:"));
	free(bad);
	assert_int_equal(tctree_restore_cmd("rt0", "", cmd, sizeof(cmd), &e), -EINVAL);
	assert_int_equal(tctree_restore_cmd("rt0", "[]", cmd, sizeof(cmd), &e), -EINVAL);
	free(rec);
}

static void test_diff_identity(void **state)
{
	char *rec = slurp("tctree-htbtree.json"), *other, why[400];
	char mac[40];
	int idx = 0;

	(void)state;
	assert_int_equal(tctree_diff(rec, rec, why, sizeof(why)), 0);
	/* counters do not count */
	other = replace(rec, "\"direct_packets_stat\":1", "\"direct_packets_stat\":77");
	assert_int_equal(tctree_diff(rec, other, why, sizeof(why)), 0);
	free(other);
	other = replace(rec, "\"limit\":30", "\"limit\":31");
	assert_int_equal(tctree_diff(rec, other, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "\"limit\":30"));
	free(other);
	assert_int_equal(tctree_diff(rec, "nonsense", why, sizeof(why)), -EINVAL);
	assert_int_equal(tctree_identity(rec, &idx, mac, sizeof(mac)), 0);
	assert_true(idx > 0);
	assert_int_equal(strlen(mac), 17);
	free(rec);
}

static void test_record_cmd(void **state)
{
	char out[8192];

	(void)state;
	assert_int_equal(tctree_record_cmd("a'b\"c", out, sizeof(out)), 0);
	/* the name is one quoted word, and JSON-escaped inside the record */
	assert_non_null(strstr(out, "D='a'\\''b\"c';"));
	assert_non_null(strstr(out, "J='a'\\''b\\\"c';"));
	assert_int_equal(tctree_record_cmd("eth0", out, 64), -ENOSPC);
	/* burst in bytes from the ticks the kernel keeps (tbf: psched_l2t) */
	assert_int_equal(tctree_tbf_burst(416666, 0x47335, 7776), 7777);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_htb_tree),
		cmocka_unit_test(test_tbf_peakrate),
		cmocka_unit_test(test_clsact_mq),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_diff_identity),
		cmocka_unit_test(test_record_cmd),
	};
	return cmocka_run_group_tests_name("tctree", tests, NULL, NULL);
}
