/* SPDX-License-Identifier: MIT */
/* test_impair.c - dial parsing, validation messages, plan derivation. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "linklab/model/impair.h"
#include "linklab/base/units.h"

static int diag_has(const struct ll_diag *d, const char *frag)
{
	int i;

	for (i = 0; i < d->n; i++)
		if (strstr(d->e[i].text, frag))
			return 1;
	return 0;
}

static void dump(const struct ll_diag *d)
{
	int i;

	for (i = 0; i < d->n; i++)
		fprintf(stderr, "  diag: %s\n", d->e[i].text);
}

/* Single bad values: impair_set must refuse them with a message naming the
 * field, the value and the accepted range/units, and leave d unchanged. */
static void test_bad_values(void **state)
{
	static const struct { const char *f, *v, *frag; } bad[] = {
		{ "loss", "150%", "loss: 150% is out of range (0% .. 100%)" },
		{ "loss", "-1%", "loss: -1% is out of range (0% .. 100%)" },
		{ "loss", "1", "loss: '1' needs a % sign" },
		{ "loss", "abc", "loss: 'abc' is not a percentage" },
		{ "loss", "1%%", "loss: '1%%' has '%' after the number" },
		{ "loss-corr", "101%", "loss-corr: 101% is out of range" },
		{ "duplicate", "200%", "duplicate: 200% is out of range (0% .. 100%)" },
		{ "dup-corr", "x%", "dup-corr: 'x%' is not a percentage" },
		{ "corrupt", "100.5%", "corrupt: 100.5% is out of range" },
		{ "corrupt-corr", "5", "corrupt-corr: '5' needs a % sign" },
		{ "reorder", "-25%", "reorder: -25% is out of range" },
		{ "reorder-corr", "", "reorder-corr: missing value" },
		{ "delay-corr", "25 %", "delay-corr: '25 %' needs a % sign" },
		{ "delay", "-5ms", "delay: '-5ms' must not be negative" },
		{ "delay", "100", "delay: '100' has no unit" },
		{ "delay", "100min", "delay: '100min': unknown time unit 'min'" },
		{ "delay", "300s", "delay: 300s is out of range (0ns .. 274s)" },
		{ "delay", "fast", "delay: 'fast' is not a time" },
		{ "jitter", "-1ms", "jitter: '-1ms' must not be negative" },
		{ "jitter", "3s", "jitter: 3s is out of range (0ns .. 2.147483647s)" },
		{ "latency", "0ms", "latency: 0ns is out of range (1us .. 274s)" },
		{ "rate", "0bit", "rate: 0bit is out of range (8bit .. 4tbit)" },
		{ "rate", "5tbit", "rate: 5tbit is out of range (8bit .. 4tbit)" },
		/* tbf and netem take whole bytes/s: below 8bit is no rate */
		{ "rate", "7bit", "rate: 7bit is out of range (8bit .. 4tbit)" },
		{ "netem-rate", "1bit", "netem-rate: 1bit is out of range (8bit .. 4tbit)" },
		{ "jitter", "2.147483648s", "jitter: 2147483648ns is out of range (0ns .. 2.147483647s)" },
		{ "rate", "50mbs", "rate: '50mbs': unknown rate unit 'mbs'" },
		{ "rate", "50", "rate: '50' has no unit; accepted units: bit kbit mbit" },
		{ "rate", "-1mbit", "rate: '-1mbit' must not be negative" },
		{ "rate", "mbit", "rate: 'mbit' is not a rate" },
		{ "burst", "10qb", "burst: '10qb': unknown size unit 'qb'" },
		{ "burst", "0b", "burst: 0b is out of range (1b .. 4294967295b)" },
		{ "burst", "8gb", "burst: 8gb is out of range" },
		{ "tbf-limit", "-3kb", "tbf-limit: '-3kb' must not be negative" },
		{ "gap", "0", "gap: '0' is not a count in range (1 .. 4294967295)" },
		{ "gap", "5x", "gap: '5x' is not a count" },
		{ "limit", "-1", "limit: '-1' is not a count" },
		{ "limit", "99999999999", "limit: '99999999999' is not a count" },
		{ "bandwidth", "1mbit", "unknown field 'bandwidth'" },
		/* netem model fields */
		{ "distribution", "gauss", "distribution: 'gauss' is not one of uniform | normal | pareto | paretonormal" },
		{ "distribution", "../etc/passwd", "is not one of" },
		{ "loss-state", "1%,2%,3%,4%,5%,6%", "loss-state: '1%,2%,3%,4%,5%,6%' needs 1 to 5 percentages" },
		{ "loss-state", ",,", "loss-state: ',,' needs 1 to 5 percentages" },
		{ "loss-state", "1%,,3%", "loss-state: '1%,,3%' has an empty item between commas" },
		{ "loss-gemodel", "1%,", "loss-gemodel: '1%,' has an empty item between commas" },
		{ "slot", "1ms,,2ms", "slot: '1ms,,2ms' has an empty item between commas" },
		{ "loss-state", "1%,150%", "loss-state: value 2:" },
		{ "loss-gemodel", "1%,2%,3%,4%,5%", "needs 1 to 4 percentages" },
		{ "loss-gemodel", "1", "loss-gemodel: value 1: '1' needs a % sign" },
		{ "ecn", "maybe", "ecn: 'maybe' is not on or off" },
		{ "netem-rate", "0bit", "netem-rate: 0bit is out of range (8bit .. 4tbit)" },
		{ "netem-rate", "8", "netem-rate: '8' has no unit" },
		{ "packet-overhead", "1.5", "packet-overhead: '1.5' is not a whole number" },
		{ "packet-overhead", "3000000000", "is not a whole number in range (-2147483648 .. 2147483647)" },
		{ "cell-size", "0", "cell-size: '0' is not a count in range" },
		{ "cell-overhead", "x", "cell-overhead: 'x' is not a whole number" },
		{ "slot", "1ms,500us", "slot: max 500us is below min 1ms" },
		{ "slot", "-1ms", "slot: '-1ms' must not be negative" },
		{ "slot", "5", "slot: '5' has no unit" },
		{ "slot", "1ms,2ms,3ms", "slot: '1ms,2ms,3ms' needs one or two times" },
		{ "slot", "300s", "slot: 300s is out of range" },
		{ "slot-packets", "0", "slot-packets: '0' is not a whole number in range (1 .. 2147483647)" },
		{ "slot-bytes", "3gb", "slot-bytes: 3gb is out of range (1b .. 2147483647b)" },
		{ "seed", "-1", "seed: '-1' is not a number" },
		{ "dst", "10.0.0.1/33", "dst: '10.0.0.1/33' has a bad prefix length" },
		{ "dst", "10.0.0.1/24", "dst: '10.0.0.1/24' has host bits set past /24" },
		{ "dst", "fd00::1/129", "has a bad prefix length" },
		{ "dst", "fd00::1/64", "has host bits set past /64" },
		{ "dst", "example.com", "dst: 'example.com' is not an IPv4 or IPv6 address" },
		{ "dport", "0", "dport: '0' is not a count in range (1 .. 65535)" },
		{ "direction", "both", "direction: 'both' is not one of egress | ingress" },
		{ "seed", "99999999999999999999", "seed: '99999999999999999999' is not a number" },
	};
	size_t i;

	(void)state;
	assert_true(sizeof(bad) / sizeof(bad[0]) >= 55);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct impair d = { 0 }, zero = { 0 };
		struct ll_diag dg;

		ll_diag_clear(&dg);
		if (impair_set(&d, bad[i].f, bad[i].v, &dg) != -EINVAL ||
		    !diag_has(&dg, bad[i].frag)) {
			fprintf(stderr, "case %zu: %s=%s want '%s'\n", i,
				bad[i].f, bad[i].v, bad[i].frag);
			dump(&dg);
			fail();
		}
		assert_int_equal(dg.nerrors, 1);
		assert_memory_equal(&d, &zero, sizeof(d));
	}
}

static void set_all(struct impair *d, const char *const *kv)
{
	struct ll_diag dg;

	ll_diag_clear(&dg);
	for (; kv[0]; kv += 2)
		assert_int_equal(impair_set(d, kv[0], kv[1], &dg), 0);
}

/* Cross-field rules: every problem reported at once. */
static void test_cross_fields(void **state)
{
	static const char *const kv[] = {
		"reorder", "25%", "gap", "5", "loss-corr", "25%",
		"dup-corr", "10%", "corrupt-corr", "5%", "reorder-corr", "50%",
		"jitter", "10ms", "delay-corr", "25%", "burst", "10kb",
		"tbf-limit", "100kb", "latency", "50ms", NULL };
	struct impair d = { 0 };
	struct ll_diag dg;

	(void)state;
	set_all(&d, kv);
	ll_diag_clear(&dg);
	assert_int_equal(impair_validate(&d, &dg), -EINVAL);
	assert_true(diag_has(&dg, "reorder 25% needs a delay (--delay > 0)"));
	assert_true(diag_has(&dg, "jitter 10ms needs a delay (--delay > 0)"));
	assert_true(diag_has(&dg, "loss-corr 25% needs a loss (--loss > 0)"));
	assert_true(diag_has(&dg, "dup-corr 10% needs a duplicate (--duplicate > 0)"));
	assert_true(diag_has(&dg, "corrupt-corr 5% needs a corrupt (--corrupt > 0)"));
	assert_true(diag_has(&dg, "burst 10kb needs a rate (--rate > 0)"));
	assert_true(diag_has(&dg, "tbf-limit 100kb needs a rate (--rate > 0)"));
	assert_true(diag_has(&dg, "latency 50ms needs a rate (--rate > 0)"));
	assert_true(diag_has(&dg, "tbf-limit and latency are exclusive"));
	assert_int_equal(dg.nerrors, 9);

	/* fix the dial: now only a warning (jitter > delay) remains */
	{
		static const char *const fix[] = { "delay", "5ms", "loss", "1%",
			"duplicate", "1%", "corrupt", "0.1%", "rate", "10mbit", NULL };
		set_all(&d, fix);
		d.set &= ~(uint32_t)IMP_LATENCY;
		ll_diag_clear(&dg);
		assert_int_equal(impair_validate(&d, &dg), 0);
		assert_int_equal(dg.nerrors, 0);
		assert_true(diag_has(&dg, "jitter is larger than delay"));
	}
	/* gap without reorder */
	{
		struct impair g = { 0 };
		static const char *const kvg[] = { "gap", "3", "delay", "1ms", NULL };
		set_all(&g, kvg);
		ll_diag_clear(&dg);
		assert_int_equal(impair_validate(&g, &dg), -EINVAL);
		assert_true(diag_has(&dg, "gap 3 needs a reorder (--reorder > 0)"));
	}
	/* struct filled by hand with bad values is still caught */
	{
		struct impair h = { 0 };

		h.set = IMP_RATE | IMP_DELAY;
		h.rate = 0;
		h.delay = -5000000;
		ll_diag_clear(&dg);
		assert_int_equal(impair_validate(&h, &dg), -EINVAL);
		assert_true(diag_has(&dg, "rate: 0bit is out of range (8bit .. 4tbit)"));
		assert_true(diag_has(&dg, "delay: '-5ms' must not be negative"));
	}
}

/* The model fields' cross-field rules (tc q_netem.c), all at once. */
static void test_cross_fields_more(void **state)
{
	static const char *const kv[] = { "distribution", "normal",
		"loss-state", "1%", "loss-gemodel", "1%", "loss", "2%",
		"packet-overhead", "-14", "cell-size", "48", "cell-overhead", "5",
		"slot-packets", "3", "slot-bytes", "1kb", "delay", "10ms", NULL };
	struct impair d = { 0 };
	struct ll_diag dg;

	(void)state;
	set_all(&d, kv);
	ll_diag_clear(&dg);
	assert_int_equal(impair_validate(&d, &dg), -EINVAL);
	assert_true(diag_has(&dg, "distribution needs jitter"));
	assert_true(diag_has(&dg, "loss-state and loss-gemodel exclude each other"));
	assert_true(diag_has(&dg, "loss and loss-state exclude each other"));
	assert_true(diag_has(&dg, "packet-overhead needs netem-rate"));
	assert_true(diag_has(&dg, "cell-size needs netem-rate"));
	assert_true(diag_has(&dg, "cell-overhead needs netem-rate"));
	assert_true(diag_has(&dg, "slot-packets needs slot"));
	assert_true(diag_has(&dg, "slot-bytes needs slot"));
	assert_int_equal(dg.nerrors, 8);
	/* ecn without any loss; ecn off alone is no impairment at all */
	memset(&d, 0, sizeof(d));
	{
		static const char *const e1[] = { "ecn", "on", "delay", "1ms", NULL };
		static const char *const e0[] = { "ecn", "off", NULL };

		set_all(&d, e1);
		ll_diag_clear(&dg);
		assert_int_equal(impair_validate(&d, &dg), -EINVAL);
		assert_true(diag_has(&dg, "ecn needs loss, loss-state or loss-gemodel"));
		memset(&d, 0, sizeof(d));
		set_all(&d, e0);
		assert_true(impair_is_empty(&d));
	}
	/* uniform needs no jitter (it is no table); fixed dial validates */
	memset(&d, 0, sizeof(d));
	{
		static const char *const ok[] = { "distribution", "uniform",
			"loss-gemodel", "1%,30%", "ecn", "on", "netem-rate", "1mbit",
			"cell-overhead", "5", "slot", "1ms", "slot-bytes", "1kb", NULL };
		struct impair_plan p;

		set_all(&d, ok);
		ll_diag_clear(&dg);
		assert_int_equal(impair_validate(&d, &dg), 0);
		assert_true(diag_has(&dg, "cell-overhead without cell-size is ignored"));
		assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
		assert_int_equal(p.dist, IMP_DIST_UNIFORM);
		assert_int_equal(p.loss_model, IMP_LOSSM_GE);
		assert_int_equal(p.ge[0], 42949673U);
		assert_int_equal(p.ge[1], 1288490188U);
		assert_int_equal(p.ge[2], 0);          /* 1-h default 100% -> h 0 */
		assert_int_equal(p.ge[3], 0);
		assert_true(p.ecn && p.slot && p.slot_max_ns == 1000000);
		assert_true(p.netem_rate_Bps == 125000 && p.cell_overhead == 5);
	}
}

/* A user burst longer than ~100 ms of rate is accepted with a warning. */
static void test_burst_too_long(void **state)
{
	static const char *const kv[] = { "rate", "1mbit", "burst", "64kb", NULL };
	static const char *const ok[] = { "rate", "10mbit", "burst", "64kb", NULL };
	struct impair d = { 0 };
	struct impair_plan p;
	struct ll_diag dg;

	(void)state;
	set_all(&d, kv);
	ll_diag_clear(&dg);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_int_equal(p.burst, 65536);
	assert_true(diag_has(&dg, "burst: 64kb is more than 100 ms of rate (12500b)"));
	memset(&d, 0, sizeof(d));
	set_all(&d, ok);                 /* 64 KiB < 125000 B = 100 ms at 10mbit */
	ll_diag_clear(&dg);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_false(diag_has(&dg, "100 ms of rate"));
}

/* tbf's buffer (burst / rate) is a u32 of 64 ns ticks: over 274.88 s it
 * would wrap, so such rates and bursts are refused with the range. */
static void test_tbf_buffer_overflow(void **state)
{
	static const struct { const char *kv[5]; int rc; const char *frag; } c[] = {
		{ { "rate", "40bit", NULL }, -EINVAL,
		  "rate: 40bit is too low for tbf: its smallest bucket (1514b) takes 302.8 s" },
		{ { "rate", "40bit", NULL }, -EINVAL, "accepted: rate 48bit .. 4tbit" },
		{ { "rate", "48bit", NULL }, 0, NULL },
		{ { "rate", "1mbit", "burst", "1gb", NULL }, -EINVAL,
		  "burst: 1gb at rate 1mbit takes 8589.9 s to send" },
		{ { "rate", "1mbit", "burst", "1gb", NULL }, -EINVAL,
		  "burst up to 34359738b, or rate 31250kbit or more" },
		{ { "rate", "1mbit", "burst", "34359738b", NULL }, 0, NULL },
		{ { "rate", "1mbit", "burst", "34359739b", NULL }, -EINVAL, "burst up to 34359738b" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct impair d = { 0 };
		struct impair_plan p;
		struct ll_diag dg;

		set_all(&d, c[i].kv);
		ll_diag_clear(&dg);
		assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), c[i].rc);
		if (c[i].frag && !diag_has(&dg, c[i].frag)) {
			dump(&dg);
			fail_msg("case %zu: no '%s'", i, c[i].frag);
		}
	}
}

/* Every new field prints back to text that parses to the same value. */
static void test_roundtrip_more(void **state)
{
	static const char *const kv[] = {
		"distribution", "paretonormal", "paretonormal",
		"loss-state", "1% 30% 0.001%", "1%,30%,0.001%",
		"loss-gemodel", "0.1%,99.9%,75%,0%", "0.1%,99.9%,75%,0%",
		"ecn", "yes", "on",
		"netem-rate", "1544kbit", "1544kbit",
		"packet-overhead", "-14", "-14",
		"cell-size", "53", "53",
		"cell-overhead", "-5", "-5",
		"slot", "800us,1ms", "800us,1ms",
		"slot", "2ms 2ms", "2ms",
		"slot-packets", "64", "64",
		"slot-bytes", "64kb", "64kb",
		"seed", "0x10", "16",
		"dst", "10.1.0.0/16", "10.1.0.0/16",
		"dst", "192.0.2.7", "192.0.2.7",
		"dst", "fd00:1::/48", "fd00:1::/48",
		"dst", "2001:db8::1", "2001:db8::1",
		"dport", "5201", "5201",
		"direction", "ingress", "ingress",
		NULL };
	size_t i;

	(void)state;
	for (i = 0; kv[i]; i += 3) {
		struct impair d = { 0 }, d2 = { 0 };
		const struct impair_field *f = impair_field_find(kv[i]);
		struct ll_diag dg;
		char buf[96];

		ll_diag_clear(&dg);
		assert_non_null(f);
		assert_int_equal(impair_set(&d, kv[i], kv[i + 1], &dg), 0);
		impair_get(&d, f, buf, sizeof(buf));
		if (strcmp(buf, kv[i + 2])) {
			fprintf(stderr, "%s=%s printed '%s' want '%s'\n", kv[i],
				kv[i + 1], buf, kv[i + 2]);
			fail();
		}
		assert_int_equal(impair_set(&d2, kv[i], buf, &dg), 0);
		assert_memory_equal(&d, &d2, sizeof(d));
	}
}

static void test_plan_figures(void **state)
{
	struct impair d = { 0 };
	struct impair_plan p;
	struct ll_diag dg;

	(void)state;
	ll_diag_clear(&dg);
	/* 10mbit at HZ 250: rate/HZ = 5000 B; limit = 50 ms of rate + burst */
	assert_int_equal(impair_set(&d, "rate", "10mbit", &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_true(p.tbf && !p.netem);
	assert_true(p.rate_Bps == 1250000);
	assert_int_equal(p.burst, 5000);
	assert_int_equal(p.tbf_limit, 67500);
	/* 900mbit: >= 1 ms of rate (112500 B); rate/HZ 250 gives 450000 B */
	assert_int_equal(impair_set(&d, "rate", "900mbit", &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_true(p.burst >= 112500);
	assert_int_equal(p.burst, 450000);
	assert_int_equal(impair_plan(&d, 1500, 1000, &p, &dg), 0);
	assert_int_equal(p.burst, 112500);
	/* 1mbit: MTU + 14 dominates */
	assert_int_equal(impair_set(&d, "rate", "1mbit", &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_int_equal(p.burst, 1514);
	assert_int_equal(p.tbf_limit, 125000 * 50 / 1000 + 1514);
	/* HZ 1000 and 50mbit: 1 ms of rate = rate/HZ = 6250 */
	assert_int_equal(impair_set(&d, "rate", "50mbit", &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 1000, &p, &dg), 0);
	assert_int_equal(p.burst, 6250);
	assert_int_equal(p.tbf_limit, 318750);
	/* jumbo MTU */
	assert_int_equal(impair_set(&d, "rate", "1mbit", &dg), 0);
	assert_int_equal(impair_plan(&d, 9000, 250, &p, &dg), 0);
	assert_int_equal(p.burst, 9014);
	/* explicit burst below MTU+14 is an error, below rate/HZ a warning */
	assert_int_equal(impair_set(&d, "burst", "1000b", &dg), 0);
	ll_diag_clear(&dg);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), -EINVAL);
	assert_true(diag_has(&dg, "smaller than MTU + 14 (1514b)"));
	/* so is a tbf-limit that cannot hold one full-size packet */
	{
		struct impair q = { 0 };

		assert_int_equal(impair_set(&q, "rate", "1mbit", &dg), 0);
		assert_int_equal(impair_set(&q, "tbf-limit", "100b", &dg), 0);
		ll_diag_clear(&dg);
		assert_int_equal(impair_plan(&q, 1500, 250, &p, &dg), -EINVAL);
		assert_true(diag_has(&dg, "tbf-limit: 100b is smaller than MTU + 14 (1514b)"));
	}
	assert_int_equal(impair_set(&d, "rate", "100mbit", &dg), 0);
	assert_int_equal(impair_set(&d, "burst", "2000b", &dg), 0);
	ll_diag_clear(&dg);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_int_equal(p.burst, 2000);
	assert_true(diag_has(&dg, "below max(rate/HZ"));
	/* latency-derived limit */
	memset(&d, 0, sizeof(d));
	assert_int_equal(impair_set(&d, "rate", "8mbit", &dg), 0);
	assert_int_equal(impair_set(&d, "latency", "100ms", &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_int_equal(p.burst, 4000);
	assert_int_equal(p.tbf_limit, 100000 + 4000);
}

static void test_plan_netem(void **state)
{
	struct impair d = { 0 };
	struct impair_plan p;
	struct ll_diag dg;

	(void)state;
	ll_diag_clear(&dg);
	/* 100mbit, 500ms: 1.5 * 1e8 * 0.5 / 12000 = 6250 packets */
	assert_int_equal(impair_set(&d, "rate", "100mbit", &dg), 0);
	assert_int_equal(impair_set(&d, "delay", "500ms", &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_true(p.tbf && p.netem);
	assert_int_equal(p.limit, 6250);
	assert_true(p.latency_ns == 500000000LL);
	/* small BDP: floor 1000 */
	assert_int_equal(impair_set(&d, "delay", "10ms", &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_int_equal(p.limit, 1000);
	/* jitter counts: 1gbit, 90ms + 10ms -> 12500 */
	assert_int_equal(impair_set(&d, "rate", "1gbit", &dg), 0);
	assert_int_equal(impair_set(&d, "delay", "90ms", &dg), 0);
	assert_int_equal(impair_set(&d, "jitter", "10ms", &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_int_equal(p.limit, 12500);
	assert_true(p.jitter_ns == 10000000LL);
	/* explicit small limit is kept with a warning */
	assert_int_equal(impair_set(&d, "limit", "1000", &dg), 0);
	ll_diag_clear(&dg);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_int_equal(p.limit, 1000);
	/* 1 Gbit/s x 100 ms = ceil(8333.3) = 8334 packets: loud warning */
	assert_int_equal(p.limit_need, 8334);
	assert_true(diag_has(&dg, "LIMIT TOO SMALL: limit 1000 packets cannot hold rate x delay = 8334 packets"));
	assert_true(diag_has(&dg, "auto-size would use 12500"));
	/* between the strict need and the 1.5x margin: the milder warning */
	assert_int_equal(impair_set(&d, "limit", "9000", &dg), 0);
	ll_diag_clear(&dg);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_true(diag_has(&dg, "expect tail drops on bursts"));
	assert_false(diag_has(&dg, "LIMIT TOO SMALL"));
	/* netem-rate slower than tbf rate sizes the queue: 10mbit x 100ms */
	assert_int_equal(impair_set(&d, "netem-rate", "10mbit", &dg), 0);
	d.set &= ~(uint32_t)IMP_LIMIT;
	ll_diag_clear(&dg);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_int_equal(p.limit_need, 84);
	assert_int_equal(p.limit, 1000);
	assert_true(p.netem_rate_Bps == 1250000);
	assert_true(diag_has(&dg, "the lower one limits"));
	/* netem only, reorder without gap gets gap 1 (tc q_netem.c) */
	memset(&d, 0, sizeof(d));
	assert_int_equal(impair_set(&d, "delay", "10ms", &dg), 0);
	assert_int_equal(impair_set(&d, "reorder", "25%", &dg), 0);
	assert_int_equal(impair_set(&d, "loss", "1%", &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), 0);
	assert_true(!p.tbf && p.netem);
	assert_int_equal(p.gap, 1);
	assert_int_equal(p.reorder, 1073741824U);
	assert_int_equal(p.loss, 42949673U);
	assert_true(impair_needs_netem(&d) && !impair_needs_tbf(&d));
	/* invalid dial -> no plan */
	memset(&d, 0, sizeof(d));
	assert_int_equal(impair_set(&d, "reorder", "25%", &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, &p, &dg), -EINVAL);
}

static void test_get_summary(void **state)
{
	static const char *const kv[] = { "rate", "50mbit", "delay", "100ms",
		"jitter", "10ms", "delay-corr", "25%", "loss", "1%", "gap", "5",
		"reorder", "0.5%", NULL };
	struct impair d = { 0 };
	char buf[256];

	(void)state;
	assert_true(impair_is_empty(&d));
	assert_string_equal(impair_summary(&d, buf, sizeof(buf)), "none");
	set_all(&d, kv);
	assert_string_equal(impair_get(&d, impair_field_find("rate"), buf, sizeof(buf)), "50mbit");
	assert_string_equal(impair_get(&d, impair_field_find("loss"), buf, sizeof(buf)), "1%");
	assert_string_equal(impair_get(&d, impair_field_find("duplicate"), buf, sizeof(buf)), "");
	assert_string_equal(impair_summary(&d, buf, sizeof(buf)),
			    "rate 50mbit delay 100ms jitter 10ms delay-corr 25% loss 1% reorder 0.5% gap 5");
	assert_null(impair_field_find("nope"));
	/* every field in the schema has range and help text and round-trips */
	{
		const struct impair_field *f;
		int n = 0;

		for (f = impair_fields; f->name; f++, n++) {
			assert_non_null(f->range);
			assert_non_null(f->help);
			assert_ptr_equal(impair_field_find(f->name), f);
		}
		assert_true(n >= 16);
	}
}

/* jitter wider than a flow's packet spacing reorders it: the warning text */
static void test_jitter_reorder_warning(void **state)
{
	struct impair d = { 0 };
	struct ll_diag dg;
	char w[LL_DIAG_LEN];
	(void)state;

	ll_diag_clear(&dg);
	assert_int_equal(impair_jitter_reorder_warning(&d, 40000000, 0, w, sizeof(w)), 0);
	assert_string_equal(w, "");
	assert_int_equal(impair_set(&d, "delay", "50ms", &dg), 0);
	assert_int_equal(impair_set(&d, "jitter", "1ms", &dg), 0);
	/* 1448 B at 40 Mbit/s: 290 us apart, inside the 2 ms window */
	assert_true(impair_jitter_reorder_warning(&d, 40000000, 0, w, sizeof(w)) > 0);
	assert_non_null(strstr(w, "jitter 1ms"));
	assert_non_null(strstr(w, "290 us"));
	assert_non_null(strstr(w, "1448-byte"));
	/* 1 Mbit/s: 11.6 ms apart, order kept */
	assert_int_equal(impair_jitter_reorder_warning(&d, 1000000, 0, w, sizeof(w)), 0);
	/* dial time (rate unknown): the rate above which it reorders,
	 * 1448 * 8 / 2 ms = 5.79 Mbit/s */
	assert_true(impair_jitter_reorder_warning(&d, 0, 0, w, sizeof(w)) > 0);
	assert_non_null(strstr(w, "5.79 Mbit/s"));
	/* a short buffer is filled and terminated */
	assert_true(impair_jitter_reorder_warning(&d, 0, 0, w, 16) == 15);
	assert_int_equal(strlen(w), 15);
}

/* The range text of every rate, time and size field states the true
 * limits: its two ends parse (as the user would type them) to exactly the
 * field's lo and hi, both are accepted, and one unit past either end is
 * refused with that same text. */
static void test_range_ends(void **state)
{
	const struct impair_field *f;
	int n = 0;

	(void)state;
	for (f = impair_fields; f->name; f++) {
		char lo[48], hi[48], past[64];
		struct ll_err e = { 0 };
		struct ll_diag dg;
		struct impair d = { 0 };
		uint64_t ulo = 0, uhi = 0;
		int64_t tlo = 0, thi = 0;

		if ((f->kind != IMPK_RATE && f->kind != IMPK_TIME && f->kind != IMPK_SIZE) ||
		    sscanf(f->range, "%47s .. %47s", lo, hi) != 2)
			continue;
		if (f->kind == IMPK_RATE) {
			assert_int_equal(units_parse_rate(lo, &ulo, &e), 0);
			assert_int_equal(units_parse_rate(hi, &uhi, &e), 0);
		} else if (f->kind == IMPK_SIZE) {
			assert_int_equal(units_parse_size(lo, &ulo, &e), 0);
			assert_int_equal(units_parse_size(hi, &uhi, &e), 0);
		} else {
			assert_int_equal(units_parse_time(lo, &tlo, 0, &e), 0);
			assert_int_equal(units_parse_time(hi, &thi, 0, &e), 0);
			ulo = (uint64_t)tlo;
			uhi = (uint64_t)thi;
		}
		if ((int64_t)ulo != f->lo || uhi != f->hi)
			print_message("%s: range '%s' is %llu .. %llu, the field takes %lld .. %llu\n",
				      f->name, f->range, (unsigned long long)ulo,
				      (unsigned long long)uhi, (long long)f->lo,
				      (unsigned long long)f->hi);
		assert_int_equal((int64_t)ulo, f->lo);
		assert_int_equal(uhi, f->hi);
		ll_diag_clear(&dg);
		assert_int_equal(impair_set(&d, f->name, lo, &dg), 0);
		assert_int_equal(impair_set(&d, f->name, hi, &dg), 0);
		snprintf(past, sizeof(past), "%llu%s", (unsigned long long)uhi + 1,
			 f->kind == IMPK_RATE ? "bit" : f->kind == IMPK_SIZE ? "b" : "ns");
		assert_int_not_equal(impair_set(&d, f->name, past, &dg), 0);
		assert_true(diag_has(&dg, f->range));
		if (f->lo > 0) {
			snprintf(past, sizeof(past), "%lld%s", (long long)f->lo - 1,
				 f->kind == IMPK_RATE ? "bit" : f->kind == IMPK_SIZE ? "b" : "ns");
			ll_diag_clear(&dg);
			assert_int_not_equal(impair_set(&d, f->name, past, &dg), 0);
			assert_true(diag_has(&dg, f->range));
		}
		n++;
	}
	assert_true(n >= 8);
}

/* --split: A's and B's halves add back to the delay and jitter given, down
 * to 1ns (A takes the odd ns); loss compounds back to p. */
static void test_split(void **state)
{
	static const struct { const char *delay, *jitter, *a_delay, *b_delay, *a_jit, *b_jit; } t[] = {
		{ "1ns", "1ns", "1ns", "0ns", "1ns", "0ns" },
		{ "3ns", "0ns", "2ns", "1ns", "0ns", "0ns" },
		{ "100ms", "5ms", "50ms", "50ms", "2500us", "2500us" },
		{ "1.000000001s", "2.147483647s", "500000001ns", "500ms", "1073741824ns", "1073741823ns" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct impair a = { 0 }, b;
		struct ll_diag dg;
		char v[48];
		int64_t d0, j0;

		ll_diag_clear(&dg);
		assert_int_equal(impair_set(&a, "delay", t[i].delay, &dg), 0);
		assert_int_equal(impair_set(&a, "jitter", t[i].jitter, &dg), 0);
		assert_int_equal(impair_set(&a, "loss", "19%", &dg), 0);
		d0 = a.delay;
		j0 = a.jitter;
		b = a;
		impair_split(&a, &b);
		assert_string_equal(impair_get(&a, impair_field_find("delay"), v, sizeof(v)), t[i].a_delay);
		assert_string_equal(impair_get(&b, impair_field_find("delay"), v, sizeof(v)), t[i].b_delay);
		assert_string_equal(impair_get(&a, impair_field_find("jitter"), v, sizeof(v)), t[i].a_jit);
		assert_string_equal(impair_get(&b, impair_field_find("jitter"), v, sizeof(v)), t[i].b_jit);
		assert_int_equal(a.delay + b.delay, d0);
		assert_int_equal(a.jitter + b.jitter, j0);
		/* each side about 10%, compounding back to 19% */
		{
			double pa = units_prob_to_percent(a.loss) / 100.0;
			double pb = units_prob_to_percent(b.loss) / 100.0;

			assert_true(pa > 0.0999999 && pa < 0.1000001);
			assert_true(fabs(1.0 - (1.0 - pa) * (1.0 - pb) - 0.19) < 1e-7);
		}
		assert_int_equal(a.loss, b.loss);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_cross_fields),
		cmocka_unit_test(test_cross_fields_more),
		cmocka_unit_test(test_roundtrip_more),
		cmocka_unit_test(test_burst_too_long),
		cmocka_unit_test(test_tbf_buffer_overflow),
		cmocka_unit_test(test_plan_figures),
		cmocka_unit_test(test_plan_netem),
		cmocka_unit_test(test_get_summary),
		cmocka_unit_test(test_jitter_reorder_warning),
		cmocka_unit_test(test_range_ends),
		cmocka_unit_test(test_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
