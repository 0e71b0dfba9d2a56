/* SPDX-License-Identifier: MIT */
/* test_units.c - tc-compatible unit parsing and round-trip printing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "linklab/base/units.h"

static void test_rate_parse(void **state)
{
	static const struct { const char *in; uint64_t bps; } ok[] = {
		{ "50mbit", 50000000ULL }, { "1gbit", 1000000000ULL },
		{ "10kbit", 10000ULL }, { "1500kbit", 1500000ULL },
		{ "50mbps", 400000000ULL }, { "1bps", 8ULL }, { "1kbps", 8000ULL },
		{ "1.5mbit", 1500000ULL }, { "1kibit", 1024ULL },
		{ "1mibps", 8388608ULL }, { "4tbit", 4000000000000ULL },
		{ "12345bit", 12345ULL }, { "10Mbit", 10000000ULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 0;
		struct ll_err e = { 0 };

		assert_int_equal(units_parse_rate(ok[i].in, &v, &e), 0);
		assert_true(v == ok[i].bps);
	}
}

static void test_rate_errors(void **state)
{
	struct ll_err e = { 0 };
	uint64_t v = 77;

	(void)state;
	/* strtod reads hex: refused, not taken as 16 */
	assert_int_equal(units_parse_rate("0x10mbit", &v, &e), -EINVAL);
	assert_true(v == 77);
	assert_int_equal(units_parse_rate("50mbs", &v, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "unknown rate unit 'mbs'"));
	assert_non_null(strstr(e.msg, "mbit"));
	assert_int_equal(units_parse_rate("50", &v, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "has no unit"));
	assert_non_null(strstr(e.msg, "kbit"));
	assert_int_equal(units_parse_rate("mbit", &v, &e), -EINVAL);
	assert_int_equal(units_parse_rate("", &v, &e), -EINVAL);
	assert_int_equal(units_parse_rate("-5mbit", &v, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "negative"));
	assert_int_equal(units_parse_rate("0bit", &v, &e), -EINVAL);
	assert_int_equal(units_parse_rate("0x10bit", &v, &e), -EINVAL);
	assert_int_equal(units_parse_rate("1e30tbit", &v, &e), -EINVAL);
	assert_true(v == 77);
}

static void test_time(void **state)
{
	struct ll_err e = { 0 };
	int64_t ns = 0;

	(void)state;
	assert_int_equal(units_parse_time("100ms", &ns, 0, &e), 0);
	assert_true(ns == 100000000LL);
	assert_int_equal(units_parse_time("1.5s", &ns, 0, &e), 0);
	assert_true(ns == 1500000000LL);
	assert_int_equal(units_parse_time("250us", &ns, 0, &e), 0);
	assert_true(ns == 250000LL);
	assert_int_equal(units_parse_time("10ns", &ns, 0, &e), 0);
	assert_true(ns == 10LL);
	assert_int_equal(units_parse_time("3msec", &ns, 0, &e), 0);
	assert_true(ns == 3000000LL);
	assert_int_equal(units_parse_time("-5ms", &ns, 1, &e), 0);
	assert_true(ns == -5000000LL);
	assert_int_equal(units_parse_time("-5ms", &ns, 0, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "negative"));
	assert_int_equal(units_parse_time("100", &ns, 0, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "no unit"));
	assert_int_equal(units_parse_time("100min", &ns, 0, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "'min'"));
}

static void test_size(void **state)
{
	struct ll_err e = { 0 };
	uint64_t b = 0;

	(void)state;
	assert_int_equal(units_parse_size("1514b", &b, &e), 0);
	assert_true(b == 1514);
	assert_int_equal(units_parse_size("1514", &b, &e), 0);
	assert_true(b == 1514);
	assert_int_equal(units_parse_size("64kb", &b, &e), 0);
	assert_true(b == 65536);
	assert_int_equal(units_parse_size("1mb", &b, &e), 0);
	assert_true(b == 1048576);
	assert_int_equal(units_parse_size("1gb", &b, &e), 0);
	assert_true(b == 1073741824ULL);
	assert_int_equal(units_parse_size("8kbit", &b, &e), 0);
	assert_true(b == 1024);
	assert_int_equal(units_parse_size("10qb", &b, &e), -EINVAL);
	assert_int_equal(units_parse_size("-1b", &b, &e), -EINVAL);
}

static void test_percent(void **state)
{
	static const struct { const char *in; uint32_t p; } ok[] = {
		{ "0.1%", 4294967U }, { "0.5%", 21474836U }, { "1%", 42949673U },
		{ "75%", 3221225471U }, { "100%", 4294967295U }, { "0%", 0U },
		{ "25%", 1073741824U }, { "50%", 2147483648U },
	};
	struct ll_err e = { 0 };
	uint32_t p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(units_parse_percent(ok[i].in, &p, &e), 0);
		assert_true(p == ok[i].p);
	}
	assert_int_equal(units_parse_percent("1", &p, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "%"));
	assert_int_equal(units_parse_percent("150%", &p, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "150% is out of range (0% .. 100%)"));
	assert_int_equal(units_parse_percent("-1%", &p, &e), -EINVAL);
	assert_int_equal(units_parse_percent("1%%", &p, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "ends in one % sign"));
	/* nonzero, yet 0 in the kernel's 1-in-2^32 steps: refused, not 0 */
	assert_int_equal(units_parse_percent("1e-20%", &p, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "below the smallest step"));
	assert_int_equal(units_parse_percent("0.0000001%", &p, &e), 0);
	assert_true(p == 4U);
}

static void test_format_roundtrip(void **state)
{
	static const uint64_t rates[] = { 50000000ULL, 1500000ULL, 12345ULL,
		8ULL, 1ULL, 400000000ULL, 4000000000000ULL, 999999999ULL };
	static const int64_t times[] = { 100000000LL, 1500000LL, 7LL, 1LL,
		274000000000LL, 2147483647LL, 250000LL };
	static const uint64_t sizes[] = { 1514, 65536, 6250, 1, 1048576, 5000 };
	static const uint32_t probs[] = { 4294967U, 21474836U, 42949673U,
		3221225471U, 4294967295U, 0U, 1U, 123456789U, 1073741824U };
	char buf[64];
	struct ll_err e = { 0 };
	size_t i;

	(void)state;
	assert_string_equal(units_format_rate(50000000ULL, buf, sizeof(buf)), "50mbit");
	assert_string_equal(units_format_rate(1500000ULL, buf, sizeof(buf)), "1500kbit");
	assert_string_equal(units_format_rate(12345ULL, buf, sizeof(buf)), "12345bit");
	assert_string_equal(units_format_time(100000000LL, buf, sizeof(buf)), "100ms");
	assert_string_equal(units_format_time(1500000LL, buf, sizeof(buf)), "1500us");
	assert_string_equal(units_format_time(7LL, buf, sizeof(buf)), "7ns");
	assert_string_equal(units_format_size(1514, buf, sizeof(buf)), "1514b");
	assert_string_equal(units_format_size(65536, buf, sizeof(buf)), "64kb");
	assert_string_equal(units_format_percent(42949673U, buf, sizeof(buf)), "1%");
	assert_string_equal(units_format_percent(4294967U, buf, sizeof(buf)), "0.1%");
	assert_string_equal(units_format_percent(3221225471U, buf, sizeof(buf)), "75%");
	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		uint64_t v;
		assert_int_equal(units_parse_rate(units_format_rate(rates[i], buf, sizeof(buf)), &v, &e), 0);
		assert_true(v == rates[i]);
	}
	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		int64_t v;
		assert_int_equal(units_parse_time(units_format_time(times[i], buf, sizeof(buf)), &v, 0, &e), 0);
		assert_true(v == times[i]);
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t v;
		assert_int_equal(units_parse_size(units_format_size(sizes[i], buf, sizeof(buf)), &v, &e), 0);
		assert_true(v == sizes[i]);
	}
	for (i = 0; i < sizeof(probs) / sizeof(probs[0]); i++) {
		uint32_t v;
		assert_int_equal(units_parse_percent(units_format_percent(probs[i], buf, sizeof(buf)), &v, &e), 0);
		assert_true(v == probs[i]);
	}
}

static void test_human(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(units_human_rate(47.8e6, buf, sizeof(buf)), "47.8 Mbit/s");
	assert_string_equal(units_human_rate(912e3, buf, sizeof(buf)), "912 kbit/s");
	assert_string_equal(units_human_rate(1.02e9, buf, sizeof(buf)), "1.02 Gbit/s");
	assert_string_equal(units_human_rate(999.9e3, buf, sizeof(buf)), "1.00 Mbit/s");
	assert_string_equal(units_human_time(100e6, buf, sizeof(buf)), "100 ms");
	assert_string_equal(units_human_time(1.23e9, buf, sizeof(buf)), "1.23 s");
	assert_string_equal(units_human_bytes(1.5e6, buf, sizeof(buf)), "1.50 MB");
}

/* iperf3's K/M/G/T suffixes, 1000- or 1024-based */
static void test_suffixed(void **state)
{
	double v;

	(void)state;
	assert_int_equal(units_parse_suffixed("10M", 1000, &v), 0);
	assert_true(v == 10e6);
	assert_int_equal(units_parse_suffixed("1.5g", 1000, &v), 0);
	assert_true(v == 1.5e9);
	assert_int_equal(units_parse_suffixed("64K", 1024, &v), 0);
	assert_true(v == 65536);
	assert_int_equal(units_parse_suffixed("100000", 1000, &v), 0);
	assert_true(v == 100000);
	assert_int_equal(units_parse_suffixed("10Mbit", 1000, &v), -1);
	assert_int_equal(units_parse_suffixed("-1M", 1000, &v), -1);
	assert_int_equal(units_parse_suffixed("inf", 1000, &v), -1);
	assert_int_equal(units_parse_suffixed("", 1000, &v), -1);
	assert_int_equal(units_parse_suffixed("M", 1000, &v), -1);
	assert_int_equal(units_parse_suffixed("0x10", 1000, &v), -1);
}

/* plain numbers for options such as -t, -p, --base-rtt: decimal only */
static void test_number(void **state)
{
	double v;

	(void)state;
	assert_int_equal(units_parse_number("12", &v), 0);
	assert_true(v == 12);
	assert_int_equal(units_parse_number("-1.5", &v), 0);
	assert_true(v == -1.5);
	assert_int_equal(units_parse_number("2e3", &v), 0);
	assert_true(v == 2000);
	assert_int_equal(units_parse_number("0x10", &v), -1);
	assert_int_equal(units_parse_number("-0X10", &v), -1);
	assert_int_equal(units_parse_number("inf", &v), -1);
	assert_int_equal(units_parse_number("nan", &v), -1);
	assert_int_equal(units_parse_number(" 5", &v), -1);
	assert_int_equal(units_parse_number("5 ", &v), -1);
	assert_int_equal(units_parse_number("5s", &v), -1);
	assert_int_equal(units_parse_number("", &v), -1);
	assert_int_equal(units_parse_number("1e999", &v), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_parse),
		cmocka_unit_test(test_rate_errors),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_percent),
		cmocka_unit_test(test_format_roundtrip),
		cmocka_unit_test(test_human),
		cmocka_unit_test(test_suffixed),
		cmocka_unit_test(test_number),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
