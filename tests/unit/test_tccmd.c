/* SPDX-License-Identifier: MIT */
/* test_tccmd.c - tc command lines for a plan, shell quoting. */
#include <errno.h>
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

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "linklab/netlink/flowfilter.h"
#include "linklab/model/impair.h"
#include "linklab/netlink/nlqdisc.h"
#include "linklab/remote/tccmd.h"

static void plan_of(const char *const *kv, struct impair_plan *p)
{
	struct impair d = { 0 };
	struct ll_diag dg;

	ll_diag_clear(&dg);
	for (; kv[0]; kv += 2)
		assert_int_equal(impair_set(&d, kv[0], kv[1], &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, p, &dg), 0);
}

static void test_quote(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(tccmd_quote("veth0", out, sizeof(out)), 0);
	assert_string_equal(out, "'veth0'");
	assert_int_equal(tccmd_quote("a;b", out, sizeof(out)), 0);
	assert_string_equal(out, "'a;b'");
	assert_int_equal(tccmd_quote("x$(id)", out, sizeof(out)), 0);
	assert_string_equal(out, "'x$(id)'");
	assert_int_equal(tccmd_quote("it's", out, sizeof(out)), 0);
	assert_string_equal(out, "'it'\\''s'");
	assert_int_equal(tccmd_quote("", out, sizeof(out)), 0);
	assert_string_equal(out, "''");
	assert_int_equal(tccmd_quote("abcdef", out, 8), -ENOSPC);
	assert_int_equal(tccmd_quote("abcdef", out, 9), 0);
}

static void test_apply_lines(void **state)
{
	static const char *const tbf[] = { "rate", "50mbit", NULL };
	static const char *const both[] = { "rate", "10mbit", "delay", "100ms",
		"jitter", "10ms", "delay-corr", "25%", "loss", "1%", NULL };
	static const char *const net[] = { "delay", "10ms", "reorder", "25%",
		"reorder-corr", "50%", "gap", "5", "duplicate", "2%",
		"corrupt", "0.1%", "corrupt-corr", "5%", "limit", "8334", NULL };
	struct impair_plan p;
	struct ll_err e = { 0 };
	char out[1024];

	(void)state;
	plan_of(tbf, &p);
	assert_int_equal(tccmd_apply("veth0", &p, out, sizeof(out), &e), 0);
	assert_string_equal(out,
		"tc qdisc replace dev 'veth0' root handle 1: tbf rate 50mbit burst 25000b limit 337500b 2>/dev/null || "
		"{ tc qdisc del dev 'veth0' root 2>/dev/null; tc qdisc replace dev 'veth0' root handle 1: tbf rate 50mbit burst 25000b limit 337500b; }\n"
		"{ tc qdisc del dev 'veth0' parent 1:1 handle 10: 2>/dev/null || true; }\n");
	plan_of(both, &p);
	assert_int_equal(tccmd_apply("a;b", &p, out, sizeof(out), &e), 0);
	assert_string_equal(out,
		"tc qdisc replace dev 'a;b' root handle 1: tbf rate 10mbit burst 5000b limit 67500b 2>/dev/null || "
		"{ tc qdisc del dev 'a;b' root 2>/dev/null; tc qdisc replace dev 'a;b' root handle 1: tbf rate 10mbit burst 5000b limit 67500b; }\n"
		"tc qdisc replace dev 'a;b' parent 1:1 handle 10: netem limit 1000 delay 100ms 10ms 25% loss 1%"
		" corrupt 0% 0% reorder 0% 0% rate 0bit slot 0ns 0ns\n");
	plan_of(net, &p);
	assert_int_equal(tccmd_apply("eth0", &p, out, sizeof(out), &e), 0);
	assert_string_equal(out,
		"tc qdisc replace dev 'eth0' root handle 1: netem limit 8334 delay 10ms duplicate 2% corrupt 0.1% 5% reorder 25% 50% gap 5 rate 0bit slot 0ns 0ns 2>/dev/null || "
		"{ tc qdisc del dev 'eth0' root 2>/dev/null; tc qdisc replace dev 'eth0' root handle 1: netem limit 8334 delay 10ms duplicate 2% corrupt 0.1% 5% reorder 25% 50% gap 5 rate 0bit slot 0ns 0ns; }\n");
	/* errors */
	assert_int_equal(tccmd_apply("eth0", &p, out, 20, &e), -ENOSPC);
	assert_non_null(strstr(e.msg, "do not fit"));
	assert_int_equal(tccmd_apply("", &p, out, sizeof(out), &e), -EINVAL);
	assert_int_equal(tccmd_apply("0123456789abcdefg", &p, out, sizeof(out), &e), -EINVAL);
	memset(&p, 0, sizeof(p));
	assert_int_equal(tccmd_apply("eth0", &p, out, sizeof(out), &e), -EINVAL);
	assert_int_equal(tccmd_clear("x'y", out, sizeof(out), &e), 0);
	assert_string_equal(out, "tc qdisc del dev 'x'\\''y' root\n");
}

/* Run the generated tbf line with the real tc inside a private netns and read
 * the kernel state back with tc -j. */
static void test_lines_run_in_netns(void **state)
{
	static const char *const tbf[] = { "rate", "50mbit", NULL };
	struct impair_plan p;
	struct ll_err e = { 0 };
	char lines[512], cmd[1024], res[4096];
	size_t n;
	FILE *f;

	(void)state;
	if (geteuid() != 0) {
		LL_SKIP("needs root for unshare -n");
	}
	plan_of(tbf, &p);
	assert_int_equal(tccmd_apply("lo", &p, lines, sizeof(lines), &e), 0);
	lines[strlen(lines) - 1] = '\0';
	snprintf(cmd, sizeof(cmd),
		 "unshare -n sh -c \"%s && tc -j qdisc show dev lo\" 2>&1", lines);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(res, 1, sizeof(res) - 1, f);
	res[n] = '\0';
	if (pclose(f) != 0 && strstr(res, "unshare")) {
		LL_SKIP("unshare -n failed: %s", res);
	}
	assert_non_null(strstr(res, "\"kind\":\"tbf\""));
	assert_non_null(strstr(res, "\"rate\":6250000"));
	assert_non_null(strstr(res, "\"burst\":25000"));
}

/* The model fields' words: every netem knob in tc syntax. */
static void test_apply_lines_more(void **state)
{
	static const char *const kv[] = { "delay", "100ms", "jitter", "10ms",
		"distribution", "normal", "loss-state", "1%", "ecn", "on",
		"netem-rate", "1mbit", "packet-overhead", "-14", "cell-size", "48",
		"cell-overhead", "5", "slot", "800us,1ms", "slot-packets", "10",
		"slot-bytes", "64kb", "seed", "7", "limit", "1000", NULL };
	static const char *const ge[] = { "loss-gemodel", "1%,30%,80%", NULL };
	struct impair_plan p;
	struct ll_err e = { 0 };
	char out[1024];

	(void)state;
	plan_of(kv, &p);
	assert_int_equal(tccmd_apply("eth0", &p, out, sizeof(out), &e), 0);
	assert_string_equal(out,
		"tc qdisc replace dev 'eth0' root handle 1: netem limit 1000 delay 100ms 10ms distribution normal loss state 1% 99% 0% 100% 0% ecn corrupt 0% 0% reorder 0% 0% rate 1mbit -14 48 5 slot 800us 1ms packets 10 bytes 64kb seed 7 2>/dev/null || "
		"{ tc qdisc del dev 'eth0' root 2>/dev/null; tc qdisc replace dev 'eth0' root handle 1: netem limit 1000 delay 100ms 10ms distribution normal loss state 1% 99% 0% 100% 0% ecn corrupt 0% 0% reorder 0% 0% rate 1mbit -14 48 5 slot 800us 1ms packets 10 bytes 64kb seed 7; }\n");
	plan_of(ge, &p);
	assert_int_equal(tccmd_apply("eth0", &p, out, sizeof(out), &e), 0);
	assert_string_equal(out,
		"tc qdisc replace dev 'eth0' root handle 1: netem limit 1000 loss gemodel 1% 30% 80% 0% corrupt 0% 0% reorder 0% 0% rate 0bit slot 0ns 0ns 2>/dev/null || "
		"{ tc qdisc del dev 'eth0' root 2>/dev/null; tc qdisc replace dev 'eth0' root handle 1: netem limit 1000 loss gemodel 1% 30% 80% 0% corrupt 0% 0% reorder 0% 0% rate 0bit slot 0ns 0ns; }\n");
}

/* Scope (htb + u32) and ingress (IFB + mirred) lines. */
static void test_scope_ingress_lines(void **state)
{
	static const char *const sc[] = { "rate", "10mbit", "dst", "10.9.0.0/16",
		"dport", "5201", NULL };
	static const char *const in[] = { "direction", "ingress", "rate", "5mbit", NULL };
	struct impair_plan p;
	struct ll_err e = { 0 };
	char out[2048], ifb[16];

	(void)state;
	plan_of(sc, &p);
	assert_int_equal(tccmd_apply("eth0", &p, out, sizeof(out), &e), 0);
	assert_string_equal(out,
		"tc qdisc replace dev 'eth0' root handle 1: htb default 2 2>/dev/null || "
		"{ tc qdisc del dev 'eth0' root 2>/dev/null; tc qdisc replace dev 'eth0' root handle 1: htb default 2; }\n"
		"tc class replace dev 'eth0' parent 1: classid 1:1 htb rate 10mbit ceil 10mbit burst 5000b cburst 5000b\n"
		"tc class replace dev 'eth0' parent 1: classid 1:2 htb rate 100gbit ceil 100gbit burst 50000000b cburst 50000000b\n"
		"{ tc qdisc del dev 'eth0' parent 1:1 handle 10: 2>/dev/null || true; }\n"
		"{ tc filter del dev 'eth0' parent 1: 2>/dev/null || true; }\n"
		"tc filter add dev 'eth0' parent 1: protocol ip prio 1 u32 "
		"match ip dst 10.9.0.0/16 match ip dport 5201 0xffff flowid 1:1\n");
	{
		static const char *const dp[] = { "rate", "10mbit", "dport", "443", NULL };
		static const char *const d6[] = { "delay", "10ms", "dst", "fd00:1::/48",
			"limit", "1000", NULL };

		plan_of(dp, &p);
		assert_int_equal(tccmd_apply("eth0", &p, out, sizeof(out), &e), 0);
		assert_non_null(strstr(out,
			"tc filter add dev 'eth0' parent 1: protocol ip prio 1 u32 "
			"match ip dport 443 0xffff flowid 1:1\n"
			"tc filter add dev 'eth0' parent 1: protocol ipv6 prio 2 u32 "
			"match ip6 dport 443 0xffff flowid 1:1\n"));
		plan_of(d6, &p);
		assert_int_equal(tccmd_apply("eth0", &p, out, sizeof(out), &e), 0);
		assert_non_null(strstr(out, "classid 1:1 htb rate 100gbit ceil 100gbit"));
		assert_non_null(strstr(out, "tc qdisc replace dev 'eth0' parent 1:1 handle 10: netem limit 1000 delay 10ms"));
		assert_non_null(strstr(out,
			"tc filter add dev 'eth0' parent 1: protocol ipv6 prio 2 u32 "
			"match ip6 dst fd00:1::/48 flowid 1:1\n"));
		assert_null(strstr(out, "protocol ip prio 1"));
	}
	plan_of(in, &p);
	assert_int_equal(tccmd_apply("a;b", &p, out, sizeof(out), &e), 0);
	qdisc_ifb_name("a;b", ifb, sizeof(ifb));
	{
		char want[1024];

		snprintf(want, sizeof(want),
			 "{ ip link add '%s' type ifb 2>/dev/null || true; }\n"
			 "ip link set dev '%s' up\n"
			 "tc qdisc replace dev 'a;b' ingress\n"
			 "tc filter replace dev 'a;b' parent ffff: protocol all prio 1 handle 800::800 u32 match u32 0 0 action mirred egress redirect dev '%s'\n"
			 "tc qdisc replace dev '%s' root handle 1: tbf rate 5mbit burst 2500b limit 33750b 2>/dev/null || "
			 "{ tc qdisc del dev '%s' root 2>/dev/null; tc qdisc replace dev '%s' root handle 1: tbf rate 5mbit burst 2500b limit 33750b; }\n"
			 "{ tc qdisc del dev '%s' parent 1:1 handle 10: 2>/dev/null || true; }\n",
			 ifb, ifb, ifb, ifb, ifb, ifb, ifb);
		assert_string_equal(out, want);
		assert_int_equal(tccmd_clear_ingress("a;b", out, sizeof(out), &e), 0);
		snprintf(want, sizeof(want),
			 "{ tc qdisc del dev 'a;b' ingress 2>/dev/null || true; }\n"
			 "{ ip link del '%s' type ifb 2>/dev/null || true; }\n", ifb);
		assert_string_equal(out, want);
	}
	assert_int_equal(tccmd_clear_ingress("", out, sizeof(out), &e), -EINVAL);
}

/* Run our tc line under strace in a private netns and read back the hex of
 * its RTM_NEWQDISC (same awk as tests/data/capture-tc.sh). Returns bytes. */
static size_t tc_bytes(const char *line, unsigned char *buf, size_t max)
{
	char cmd[2048], hex[512];
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "unshare -n strace -f -e trace=sendmsg -e write=3 -X raw -s 65536 "
		 "sh -c \"%s\" 2>&1 >/dev/null | awk '/^\\[pid +[0-9]+\\] sendmsg\\(|^sendmsg\\(/ "
		 "{ on = (index($0, \"nlmsg_type=0x24\") > 0); seen += on; next } "
		 "on && seen == 1 && /^ \\| [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]  / "
		 "{ l = substr($0, 11, 49); print l }'", line);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(hex, sizeof(hex), f)) {
		char *p = hex, *end;

		for (;;) {
			unsigned long v = strtoul(p, &end, 16);

			if (end == p || n >= max)
				break;
			buf[n++] = (unsigned char)v;
			p = end;
		}
	}
	pclose(f);
	return n;
}

static const struct nlattr *find_attr(const unsigned char *opts, int len, int type)
{
	int off = NLA_ALIGN((int)sizeof(struct tc_netem_qopt));

	while (off + 4 <= len) {
		const struct nlattr *a = (const void *)(opts + off);

		if (a->nla_len < 4)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		off += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

/* --dry-run lines and the netlink path must give the kernel the same netem:
 * the request tc sends for our printed line and the one nlqdisc builds (with
 * the explicit zeros every apply sends) carry the same qopt and the same
 * attributes (ours may add LATENCY64/JITTER64, ECN 0 and the seed). The
 * kernel here refuses netem, but tc sends the request first. */
static void test_lines_same_bytes_as_netlink(void **state)
{
	static const char *const d1[] = { "limit", "20000", "delay", "100ms",
		"jitter", "10ms", "delay-corr", "25%", "distribution", "normal",
		"loss-gemodel", "1%,30%,80%,0.1%", "ecn", "on", "corrupt", "0.1%",
		"reorder", "5%", "gap", "3", "netem-rate", "100mbit",
		"slot", "1ms,2ms", "slot-packets", "5", NULL };
	static const char *const d2[] = { "loss-state", "1%,30%,2%,90%,0.5%",
		"netem-rate", "40gbit", "packet-overhead", "-14", "cell-size", "48",
		"cell-overhead", "5", "duplicate", "2%", "delay", "5ms",
		"jitter", "1ms", "distribution", "paretonormal", NULL };
	static const char *const d3[] = { "delay", "200s", "loss", "0.001%",
		"loss-corr", "33.3%", "reorder", "75%", "reorder-corr", "1%",
		"slot", "3ms", "slot-bytes", "1mb", "limit", "1", NULL };
	static const char *const *const dials[] = { d1, d2, d3 };
	static unsigned char g[65536];
	size_t i;

	(void)state;
	if (geteuid() != 0 || system("command -v strace >/dev/null 2>&1") != 0) {
		LL_SKIP("needs root (unshare -n) and strace");
	}
	for (i = 0; i < sizeof(dials) / sizeof(dials[0]); i++) {
		struct nlqdisc_target t = { 1, TC_H_ROOT, 0x00010000, NLQ_REPLACE };
		struct impair_plan p;
		struct ll_err e = { 0 };
		struct nl_msg *m = NULL;
		char lines[1024];
		const struct nlattr *ga, *oa;
		const unsigned char *gopt, *oopt;
		int glen, olen, off, ty;
		size_t n;

		plan_of(dials[i], &p);
		assert_int_equal(tccmd_apply("lo", &p, lines, sizeof(lines), &e), 0);
		{
			/* the netem line (the guard lines before it send no netem) */
			/* "tc qdisc replace ... netem WORDS 2>/dev/null || {...}":
			 * keep the first command only */
			char *nl = strstr(lines, "tc qdisc replace dev 'lo' root handle 1: netem");

			assert_non_null(nl);
			memmove(lines, nl, strlen(nl) + 1);
			*strstr(lines, " 2>/dev/null || {") = '\0';
		}
		n = tc_bytes(lines, g, sizeof(g));
		if (n < 48) {
			LL_SKIP("no tc request captured for: %s", lines);
		}
		/* explicit zeros on both sides: the full option set */
		assert_int_equal(nlqdisc_build_netem(&t, &p, true, &m, &e), 0);
		ga = (const void *)(g + 48);
		oa = (const void *)((unsigned char *)nlmsg_hdr(m) + 48);
		assert_int_equal(((const struct nlmsghdr *)g)->nlmsg_flags,
				 nlmsg_hdr(m)->nlmsg_flags);
		assert_memory_equal(g + 16, (unsigned char *)nlmsg_hdr(m) + 16, 20);
		gopt = (const unsigned char *)ga + 4;
		oopt = (const unsigned char *)oa + 4;
		glen = ga->nla_len - 4;
		olen = oa->nla_len - 4;
		assert_memory_equal(gopt, oopt, sizeof(struct tc_netem_qopt));
		for (off = 24; off + 4 <= glen;
		     off += NLA_ALIGN(((const struct nlattr *)(gopt + off))->nla_len)) {
			const struct nlattr *a = (const void *)(gopt + off);
			const struct nlattr *b = find_attr(oopt, olen, a->nla_type & NLA_TYPE_MASK);

			if (!b || a->nla_len != b->nla_len || memcmp(a, b, a->nla_len)) {
				fprintf(stderr, "dial %zu: attribute %d differs: %s\n", i,
					a->nla_type & NLA_TYPE_MASK, lines);
				fail();
			}
		}
		for (ty = 1; ty <= 14; ty++)
			if (find_attr(oopt, olen, ty) && !find_attr(gopt, glen, ty))
				assert_true(ty == TCA_NETEM_LATENCY64 || ty == TCA_NETEM_JITTER64 ||
					    ty == TCA_NETEM_ECN || ty == 14);
		nlmsg_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_apply_lines),
		cmocka_unit_test(test_lines_run_in_netns),
		cmocka_unit_test(test_apply_lines_more),
		cmocka_unit_test(test_scope_ingress_lines),
		cmocka_unit_test(test_lines_same_bytes_as_netlink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
