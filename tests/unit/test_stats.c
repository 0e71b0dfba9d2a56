/* SPDX-License-Identifier: MIT */
/* test_stats.c - trimmed mean, percentiles, Wilson interval, stability. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "linklab/base/stats.h"

static void test_trimmed_mean_drops_top(void **state)
{
	double x[20];

	(void)state;
	for (int i = 0; i < 20; i++)
		x[i] = 10;
	x[7] = 1000;    /* one outlier in 20: the top 5 % */
	assert_float_equal(stats_trimmed_mean(x, 20, 0.05), 10.0, 1e-9);
	assert_float_equal(stats_trimmed_mean(x, 20, 0), (19 * 10 + 1000) / 20.0, 1e-9);
	assert_float_equal(stats_trimmed_mean(x, 0, 0.05), 0, 0);
	/* fewer than 20 values: floor(0.05 n) = 0, nothing is dropped */
	assert_float_equal(stats_trimmed_mean(x + 10, 10, 0.05), 10.0, 1e-9);
	assert_float_equal(x[7], 1000, 0);   /* input untouched */
}

static void test_percentile_linear(void **state)
{
	double x[] = { 5, 1, 4, 2, 3 };

	(void)state;
	assert_float_equal(stats_percentile(x, 5, 50), 3, 1e-9);
	assert_float_equal(stats_percentile(x, 5, 0), 1, 1e-9);
	assert_float_equal(stats_percentile(x, 5, 100), 5, 1e-9);
	assert_float_equal(stats_percentile(x, 5, 90), 4.6, 1e-9);
	assert_float_equal(stats_percentile(x, 1, 99), 5, 1e-9);
}

static void test_wilson_99(void **state)
{
	double lo, hi;

	(void)state;
	/* 190 lost of 1000 at 99 %: about 0.160 .. 0.223 */
	stats_wilson(190, 1000, 2.5758, &lo, &hi);
	assert_true(lo > 0.158 && lo < 0.162);
	assert_true(hi > 0.221 && hi < 0.225);
	stats_wilson(0, 1000, 2.5758, &lo, &hi);
	assert_float_equal(lo, 0, 1e-12);
	assert_true(hi > 0.006 && hi < 0.0075);
	stats_wilson(0, 0, 2.5758, &lo, &hi);
	assert_float_equal(lo, 0, 0);
	assert_float_equal(hi, 1, 0);
}

static void test_stability(void **state)
{
	double flat[] = { 50, 10, 100, 101, 99, 100 };
	double rising[] = { 10, 20, 40, 80 };

	(void)state;
	assert_true(stats_stable(flat, 6, 4, 0.05));
	assert_false(stats_stable(flat, 5, 4, 0.05));   /* 10 in the window */
	assert_false(stats_stable(rising, 4, 4, 0.05));
	assert_false(stats_stable(rising, 3, 4, 0.05)); /* too few */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trimmed_mean_drops_top),
		cmocka_unit_test(test_percentile_linear),
		cmocka_unit_test(test_wilson_99),
		cmocka_unit_test(test_stability),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
