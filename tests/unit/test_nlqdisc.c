/* SPDX-License-Identifier: MIT */
/* test_nlqdisc.c - our RTM_NEWQDISC bytes against iproute2 6.1 tc's own
 * (tests/data/tc-*.hex, made by tests/data/capture-tc.sh), dump parsing,
 * error mapping. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "linklab/model/impair.h"
#include "linklab/netlink/nlqdisc.h"

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
	if (!f) {
		fprintf(stderr, "cannot open %s (run from the repo root)\n", path);
		fail();
	}
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

static void plan_of(const char *const *kv, struct impair_plan *p)
{
	struct impair d = { 0 };
	struct ll_diag dg;

	ll_diag_clear(&dg);
	for (; kv[0]; kv += 2)
		assert_int_equal(impair_set(&d, kv[0], kv[1], &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, p, &dg), 0);
}

static const struct nlqdisc_target root_add = { 1, TC_H_ROOT, 0, NLQ_ADD };

/* header, tcmsg and TCA_KIND equal; seq and pid ignored */
static void same_head(const unsigned char *g, const struct nlmsghdr *o)
{
	const struct nlmsghdr *gh = (const void *)g;
	const unsigned char *ob = (const void *)o;

	assert_int_equal(gh->nlmsg_type, o->nlmsg_type);
	assert_int_equal(gh->nlmsg_flags, o->nlmsg_flags);
	assert_memory_equal(g + 16, ob + 16, 20);          /* tcmsg */
	assert_memory_equal(g + 36, ob + 36, 4);           /* TCA_KIND header */
	assert_memory_equal(g + 40, ob + 40, ((g[36] | g[37] << 8) - 4 + 3) & ~3);
}

static void check_tbf(const char *file, const char *const *kv)
{
	unsigned char g[4096];
	struct impair_plan p;
	struct nl_msg *m = NULL;
	struct ll_err e = { 0 };
	struct nlmsghdr *o;
	size_t n = load_hex(file, g, sizeof(g));

	plan_of(kv, &p);
	assert_int_equal(nlqdisc_build_tbf(&root_add, &p, &m, &e), 0);
	o = nlmsg_hdr(m);
	if (o->nlmsg_len != n)
		fprintf(stderr, "%s: length %u vs tc %zu\n", file, o->nlmsg_len, n);
	assert_int_equal(o->nlmsg_len, n);
	same_head(g, o);
	/* everything from TCA_OPTIONS on: PARMS, BURST, RATE64, RTAB */
	assert_memory_equal(g + 44, (unsigned char *)o + 44, n - 44);
	nlmsg_free(m);
}

static void test_tbf_golden(void **state)
{
	static const char *const r50[] = { "rate", "50mbit", "burst", "25000b",
		"tbf-limit", "337500b", NULL };
	static const char *const r10[] = { "rate", "10mbit", NULL };
	static const char *const r1g[] = { "rate", "1gbit", "burst", "500000b",
		"tbf-limit", "6750000b", NULL };
	static const char *const r10g[] = { "rate", "10gbit", "burst", "5000000b",
		"tbf-limit", "67500000b", NULL };
	static const char *const r40g[] = { "rate", "40gbit", "burst", "20000000b",
		"tbf-limit", "270000000b", NULL };

	(void)state;
	check_tbf("tc-tbf-50mbit.hex", r50);
	check_tbf("tc-tbf-10mbit.hex", r10);   /* derived plan: 5000b / 67500b */
	check_tbf("tc-tbf-1gbit.hex", r1g);
	check_tbf("tc-tbf-10gbit.hex", r10g);
	check_tbf("tc-tbf-40gbit.hex", r40g);  /* RATE64 */
}

/* Find attribute type in netem options after the qopt. */
static const struct nlattr *netem_attr(const unsigned char *opts, int len, int type)
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

/* Every field the kernel reads: qopt byte for byte, and every attribute tc
 * sent present with identical bytes. Extra attributes of ours are listed in
 * allowed_extra (LATENCY64/JITTER64 and, where tc 6.1 drops it, CORR). */
static void check_netem(const char *file, const char *const *kv, int extra_corr)
{
	static unsigned char g[65536];
	struct impair_plan p;
	struct nl_msg *m = NULL;
	struct ll_err e = { 0 };
	const struct nlattr *ga, *oa;
	const unsigned char *gopt, *oopt;
	struct nlmsghdr *o;
	int glen, olen, off, t;
	size_t n = load_hex(file, g, sizeof(g));

	plan_of(kv, &p);
	assert_int_equal(nlqdisc_build_netem(&root_add, &p, false, &m, &e), 0);
	o = nlmsg_hdr(m);
	same_head(g, o);
	ga = (const void *)(g + 48);
	oa = (const void *)((unsigned char *)o + 48);
	assert_int_equal(ga->nla_type, TCA_OPTIONS);
	assert_int_equal(oa->nla_type, TCA_OPTIONS);
	assert_int_equal(48 + ga->nla_len, n);
	gopt = (const unsigned char *)ga + 4;
	oopt = (const unsigned char *)oa + 4;
	glen = ga->nla_len - 4;
	olen = oa->nla_len - 4;
	assert_memory_equal(gopt, oopt, sizeof(struct tc_netem_qopt));
	for (off = 24; off + 4 <= glen; off += NLA_ALIGN(((const struct nlattr *)(gopt + off))->nla_len)) {
		const struct nlattr *a = (const void *)(gopt + off);
		const struct nlattr *b = netem_attr(oopt, olen, a->nla_type & NLA_TYPE_MASK);

		if (!b)
			fprintf(stderr, "%s: attribute %d missing\n", file, a->nla_type);
		assert_non_null(b);
		assert_int_equal(a->nla_len, b->nla_len);
		assert_memory_equal(a, b, a->nla_len);
	}
	/* our extras */
	for (t = 1; t <= 14; t++) {
		const struct nlattr *b = netem_attr(oopt, olen, t);

		if (!b || netem_attr(gopt, glen, t))
			continue;
		{
		int64_t v;

		if (t == TCA_NETEM_LATENCY64) {
			memcpy(&v, nla_data(b), sizeof(v));
			assert_true(v == p.latency_ns);
		} else if (t == TCA_NETEM_JITTER64) {
			memcpy(&v, nla_data(b), sizeof(v));
			assert_true(v == p.jitter_ns);
		} else if (t == TCA_NETEM_CORR && extra_corr) {
			const struct tc_netem_corr *c = nla_data(b);

			assert_int_equal(c->dup_corr, p.dup_corr);
		} else if (t == 14 && p.has_seed) {   /* TCA_NETEM_PRNG_SEED */
			uint64_t sv;

			memcpy(&sv, nla_data(b), sizeof(sv));
			assert_true(sv == p.seed);
		} else {
			fprintf(stderr, "%s: unexpected extra attribute %d\n", file, t);
			fail();
		}
		}
	}
	nlmsg_free(m);
}

static void test_netem_golden(void **state)
{
	static const char *const delay[] = { "delay", "100ms", "limit", "1000", NULL };
	static const char *const jit[] = { "delay", "100ms", "jitter", "10ms",
		"delay-corr", "25%", "limit", "1000", NULL };
	static const char *const l1[] = { "loss", "1%", "limit", "1000", NULL };
	static const char *const l75[] = { "loss", "75%", "limit", "1000", NULL };
	static const char *const d200[] = { "delay", "200s", "limit", "1000", NULL };
	static const char *const dup[] = { "duplicate", "2%", "dup-corr", "10%",
		"limit", "1000", NULL };
	static const char *const cor[] = { "corrupt", "0.1%", "corrupt-corr", "5%",
		"limit", "1000", NULL };
	static const char *const reo[] = { "delay", "10ms", "reorder", "25%",
		"reorder-corr", "50%", "gap", "5", "limit", "1000", NULL };
	static const char *const lim[] = { "limit", "8334", "delay", "50ms",
		"loss", "0.5%", NULL };

	(void)state;
	check_netem("tc-netem-delay.hex", delay, 0);
	check_netem("tc-netem-jitter.hex", jit, 0);
	check_netem("tc-netem-loss1.hex", l1, 0);
	check_netem("tc-netem-loss75.hex", l75, 0);
	check_netem("tc-netem-delay200.hex", d200, 0);
	check_netem("tc-netem-dup.hex", dup, 1);   /* tc 6.1 drops dup-corr */
	check_netem("tc-netem-corrupt.hex", cor, 0);
	check_netem("tc-netem-reorder.hex", reo, 0);
	check_netem("tc-netem-limit.hex", lim, 0);
}

/* Every other netem knob against tc 6.1's bytes. */
static void test_netem_golden_more(void **state)
{
	static const char *const dn[] = { "delay", "100ms", "jitter", "10ms",
		"distribution", "normal", "limit", "1000", NULL };
	static const char *const dp[] = { "delay", "50ms", "jitter", "20ms",
		"delay-corr", "10%", "distribution", "pareto", "limit", "1000", NULL };
	static const char *const dpn[] = { "delay", "10ms", "jitter", "5ms",
		"distribution", "paretonormal", "limit", "1000", NULL };
	static const char *const s1[] = { "loss-state", "1%", "limit", "1000", NULL };
	static const char *const s5[] = { "loss-state", "1%,30%,2%,90%,0.5%",
		"limit", "1000", NULL };
	static const char *const g1[] = { "loss-gemodel", "1%", "limit", "1000", NULL };
	static const char *const g4[] = { "loss-gemodel", "1% 30% 80% 0.1%",
		"limit", "1000", NULL };
	static const char *const ecn[] = { "loss", "1%", "ecn", "on", "limit",
		"1000", NULL };
	static const char *const r8[] = { "netem-rate", "8mbit", "limit", "1000", NULL };
	static const char *const rc[] = { "netem-rate", "1mbit", "packet-overhead",
		"-14", "cell-size", "48", "cell-overhead", "5", "limit", "1000", NULL };
	static const char *const r64[] = { "netem-rate", "40gbit", "limit", "1000", NULL };
	static const char *const sl[] = { "slot", "800us,1ms", "slot-packets", "10",
		"slot-bytes", "64kb", "limit", "1000", NULL };
	static const char *const sl1[] = { "slot", "2ms", "limit", "1000", NULL };
	static const char *const combo[] = { "limit", "20000", "delay", "100ms",
		"jitter", "10ms", "delay-corr", "25%", "distribution", "normal",
		"loss-gemodel", "1%,30%", "ecn", "on", "corrupt", "0.1%",
		"reorder", "5%", "gap", "3", "netem-rate", "100mbit",
		"slot", "1ms,2ms", "seed", "42", NULL };

	(void)state;
	check_netem("tc-netem-dist-normal.hex", dn, 0);
	check_netem("tc-netem-dist-pareto.hex", dp, 0);
	check_netem("tc-netem-dist-pn.hex", dpn, 0);
	check_netem("tc-netem-state1.hex", s1, 0);
	check_netem("tc-netem-state5.hex", s5, 0);
	check_netem("tc-netem-ge1.hex", g1, 0);
	check_netem("tc-netem-ge4.hex", g4, 0);
	check_netem("tc-netem-ecn.hex", ecn, 0);
	check_netem("tc-netem-rate.hex", r8, 0);
	check_netem("tc-netem-rate-cells.hex", rc, 0);
	check_netem("tc-netem-rate64.hex", r64, 0);
	check_netem("tc-netem-slot.hex", sl, 0);
	check_netem("tc-netem-slot1.hex", sl1, 0);
	/* tc 6.1 has no seed: ours carries PRNG_SEED 42 as the only extra */
	check_netem("tc-netem-combo.hex", combo, 0);
}

/* Every netem model attribute we build parses back to the same kernel values. */
static void test_parse_more(void **state)
{
	static const char *const st[] = { "delay", "5s", "jitter", "2147483647ns",
		"loss-state", "1%,30%,2%,90%,0.5%", "ecn", "on",
		"netem-rate", "40gbit", "packet-overhead", "-14", "cell-size", "48",
		"cell-overhead", "5", "slot", "800us,1ms", "slot-packets", "10",
		"slot-bytes", "64kb", "seed", "18446744073709551615", NULL };
	static const char *const ge[] = { "loss-gemodel", "1%,30%,80%,0.1%", NULL };
	struct impair_plan p;
	struct qdisc_info q;
	struct nl_msg *m = NULL;
	struct ll_err e = { 0 };
	int ifi = 0;

	(void)state;
	plan_of(st, &p);
	assert_int_equal(nlqdisc_build_netem(&root_add, &p, true, &m, &e), 0);
	assert_int_equal(nlqdisc_parse(nlmsg_hdr(m), &q, &ifi, NULL, &e), 0);
	/* 5 s is past the u32 32-bit tick field only in tc < 6.9; LATENCY64 is exact */
	assert_true(q.delay == 5000000000LL);
	assert_true(q.jitter == 2147483647LL);
	assert_int_equal(q.loss_model, IMP_LOSSM_STATE);
	assert_int_equal(q.gi[0], 42949673U);            /* p13 1% */
	assert_int_equal(q.gi[1], 1288490188U);          /* p31 30% */
	assert_int_equal(q.gi[2], 85899346U);            /* p32 2% */
	assert_int_equal(q.gi[3], 21474836U);            /* p14 0.5% */
	assert_int_equal(q.gi[4], 3865470566U);          /* p23 90% */
	assert_true(q.ecn);
	assert_true(q.netem_rate == 40000000000ULL);
	assert_int_equal(q.packet_overhead, -14);
	assert_int_equal(q.cell_size, 48);
	assert_int_equal(q.cell_overhead, 5);
	assert_true(q.slot_min == 800000 && q.slot_max == 1000000);
	assert_int_equal(q.slot_packets, 10);
	assert_int_equal(q.slot_bytes, 65536);
	assert_true(q.has_seed && q.seed == UINT64_MAX);
	nlmsg_free(m);

	plan_of(ge, &p);
	assert_int_equal(nlqdisc_build_netem(&root_add, &p, true, &m, &e), 0);
	assert_int_equal(nlqdisc_parse(nlmsg_hdr(m), &q, &ifi, NULL, &e), 0);
	assert_int_equal(q.loss_model, IMP_LOSSM_GE);
	assert_int_equal(q.ge[0], 42949673U);
	assert_int_equal(q.ge[1], 1288490188U);
	assert_int_equal(q.ge[2], UINT32_MAX - 3435973836U);   /* h = 1 - 80% */
	assert_int_equal(q.ge[3], 4294967U);
	/* explicit_zero: rate/slot/ecn sent as zeros so a change clears them */
	assert_true(q.netem_rate == 0 && !q.ecn && q.slot_max == 0);
	assert_false(q.has_seed);
	nlmsg_free(m);
}

/* A missing distribution table is an error naming where we looked. */
static void test_dist_missing(void **state)
{
	static const char *const dn[] = { "delay", "100ms", "jitter", "10ms",
		"distribution", "pareto", NULL };
	struct impair_plan p;
	struct nl_msg *m = NULL;
	struct ll_err e = { 0 };
	char *old = getenv("TC_LIB_DIR") ? strdup(getenv("TC_LIB_DIR")) : NULL;

	(void)state;
	plan_of(dn, &p);
	setenv("TC_LIB_DIR", "/nonexistent", 1);
	/* the system table is still found after $TC_LIB_DIR */
	assert_int_equal(nlqdisc_build_netem(&root_add, &p, false, &m, &e), 0);
	nlmsg_free(m);
	m = NULL;
	p.dist = 9;
	assert_int_equal(nlqdisc_build_netem(&root_add, &p, false, &m, &e), -EINVAL);
	assert_null(m);
	assert_non_null(strstr(e.msg, "distribution 9 has no table"));
	if (old) {
		setenv("TC_LIB_DIR", old, 1);
		free(old);
	} else {
		unsetenv("TC_LIB_DIR");
	}
}

/* Parse what we build (a dump carries the same options) and tc's golden. */
static void test_parse(void **state)
{
	static const char *const both[] = { "rate", "40gbit", "burst", "20000000b",
		"tbf-limit", "270000000b", "delay", "100ms", "jitter", "10ms",
		"delay-corr", "25%", "loss", "1%", "loss-corr", "5%",
		"duplicate", "2%", "dup-corr", "10%", "corrupt", "0.1%",
		"corrupt-corr", "5%", "reorder", "25%", "reorder-corr", "50%",
		"gap", "5", "limit", "8334", NULL };
	struct nlqdisc_target ch = { 7, 0x00010001, 0x000a0000, NLQ_REPLACE };
	struct impair_plan p;
	struct qdisc_info q;
	struct nlqdisc_root root;
	struct nl_msg *m = NULL;
	struct ll_err e = { 0 };
	unsigned char g[4096];
	int ifi = 0;

	(void)state;
	plan_of(both, &p);
	assert_int_equal(nlqdisc_build_tbf(&root_add, &p, &m, &e), 0);
	assert_int_equal(nlqdisc_parse(nlmsg_hdr(m), &q, &ifi, &root, &e), 0);
	assert_string_equal(q.kind, "tbf");
	assert_int_equal(ifi, 1);
	assert_true(q.rate == 40000000000ULL);
	assert_int_equal(q.burst, 20000000);
	assert_int_equal(q.limit, 270000000);
	assert_true(root.found);
	assert_string_equal(root.kind, "tbf");
	assert_true(root.optlen > 1024);
	nlmsg_free(m);

	assert_int_equal(nlqdisc_build_netem(&ch, &p, true, &m, &e), 0);
	assert_int_equal(nlmsg_hdr(m)->nlmsg_flags & 0xf00, NLQ_REPLACE);
	assert_int_equal(nlqdisc_parse(nlmsg_hdr(m), &q, &ifi, NULL, &e), 0);
	assert_string_equal(q.kind, "netem");
	assert_int_equal(ifi, 7);
	assert_int_equal(q.parent, 0x00010001);
	assert_int_equal(q.handle, 0x000a0000);
	assert_true(q.delay == 100000000LL);
	assert_true(q.jitter == 10000000LL);
	assert_int_equal(q.limit, 8334);
	assert_int_equal(q.loss, 42949673U);
	assert_int_equal(q.loss_corr, p.loss_corr);
	assert_int_equal(q.delay_corr, 1073741824U);
	assert_int_equal(q.duplicate, p.duplicate);
	assert_int_equal(q.dup_corr, p.dup_corr);
	assert_int_equal(q.corrupt, 4294967U);
	assert_int_equal(q.corrupt_corr, p.corrupt_corr);
	assert_int_equal(q.reorder, 1073741824U);
	assert_int_equal(q.reorder_corr, 2147483648U);
	assert_int_equal(q.gap, 5);
	nlmsg_free(m);

	/* tc's message has no LATENCY64: delay comes from the 64 ns ticks */
	load_hex("tc-netem-jitter.hex", g, sizeof(g));
	assert_int_equal(nlqdisc_parse((struct nlmsghdr *)g, &q, &ifi, NULL, &e), 0);
	assert_true(q.delay == 100000000LL);
	assert_true(q.jitter == 10000000LL);
	assert_int_equal(q.limit, 1000);
	/* tbf without TCA_TBF_BURST: burst from buffer ticks (tc_calc_xmitsize) */
	load_hex("tc-tbf-10mbit.hex", g, sizeof(g));
	g[84 + 4] = 0x7f;              /* change BURST's type to an unknown one */
	assert_int_equal(nlqdisc_parse((struct nlmsghdr *)g, &q, &ifi, NULL, &e), 0);
	assert_int_equal(q.burst, 5000);
	assert_true(q.rate == 10000000ULL);
	/* not a qdisc message */
	((struct nlmsghdr *)g)->nlmsg_type = RTM_NEWLINK;
	assert_int_equal(nlqdisc_parse((struct nlmsghdr *)g, &q, &ifi, NULL, &e), -EINVAL);
}

static void test_stats_and_raw(void **state)
{
	static const unsigned char opts[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct nlqdisc_target t = { 3, TC_H_ROOT, 0x80010000, NLQ_REPLACE };
	struct gnet_stats_basic b = { 123456789ULL, 4242 };
	struct gnet_stats_queue qs = { 3, 4500, 17, 0, 99 };
	struct nlqdisc_root root;
	struct nlattr *nest;
	struct qdisc_info q;
	struct nl_msg *m = NULL;
	struct ll_err e = { 0 };
	int ifi;

	(void)state;
	assert_int_equal(nlqdisc_build_raw(&t, "pfifo_fast", opts, sizeof(opts), &m, &e), 0);
	nest = nla_nest_start(m, TCA_STATS2);
	assert_non_null(nest);
	assert_int_equal(nla_put(m, TCA_STATS_BASIC, sizeof(b), &b), 0);
	assert_int_equal(nla_put(m, TCA_STATS_QUEUE, sizeof(qs), &qs), 0);
	nla_nest_end(m, nest);
	assert_int_equal(nlqdisc_parse(nlmsg_hdr(m), &q, &ifi, &root, &e), 0);
	assert_string_equal(q.kind, "pfifo_fast");
	assert_true(q.bytes == 123456789ULL);
	assert_int_equal(q.packets, 4242);
	assert_int_equal(q.drops, 17);
	assert_int_equal(q.overlimits, 99);
	assert_int_equal(q.backlog, 4500);
	assert_int_equal(q.qlen, 3);
	assert_int_equal(root.handle, 0x80010000);
	assert_int_equal(root.optlen, sizeof(opts));
	assert_memory_equal(root.opts, opts, sizeof(opts));
	nlmsg_free(m);
	assert_int_equal(nlqdisc_build_raw(&t, "", opts, 0, &m, &e), -EINVAL);
	assert_int_equal(nlqdisc_build_del(&t, &m, &e), 0);
	assert_int_equal(nlmsg_hdr(m)->nlmsg_type, RTM_DELQDISC);
	nlmsg_free(m);
}

static void test_errors(void **state)
{
	struct ll_err e = { 0 };

	(void)state;
	assert_int_equal(nlqdisc_map_error(ENOENT, "add netem on lo", "netem",
					   "Specified qdisc kind is unknown.", &e), -ENOTSUP);
	assert_non_null(strstr(e.msg, "this kernel has no netem (CONFIG_NET_SCH_NETEM); try modprobe sch_netem"));
	assert_non_null(strstr(e.msg, "Specified qdisc kind is unknown."));
	assert_int_equal(nlqdisc_map_error(EPERM, "replace tbf on veth0", "tbf", NULL, &e), -EPERM);
	assert_string_equal(e.msg, "replace tbf on veth0: needs root or CAP_NET_ADMIN");
	assert_int_equal(nlqdisc_map_error(ENODEV, "x", "tbf", NULL, &e), -ENODEV);
	assert_non_null(strstr(e.msg, "no such interface"));
	assert_int_equal(nlqdisc_map_error(EINVAL, "replace tbf on lo", "tbf",
					   "Invalid qdisc name", &e), -EINVAL);
	assert_string_equal(e.msg, "replace tbf on lo: Invalid argument: kernel says: Invalid qdisc name");
	assert_int_equal(nlqdisc_map_error(ENOENT, "del", "tbf", NULL, &e), -ENOENT);
	assert_true(nlqdisc_tick_in_usec() > 15.6 && nlqdisc_tick_in_usec() < 15.7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tbf_golden),
		cmocka_unit_test(test_netem_golden),
		cmocka_unit_test(test_netem_golden_more),
		cmocka_unit_test(test_dist_missing),
		cmocka_unit_test(test_parse_more),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_stats_and_raw),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
