/* SPDX-License-Identifier: MIT */
/* test_theory.c - the theory line reproduces the seeds' figures. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "linklab/model/theory.h"

static void test_frame_ceiling_50mbit(void **state)
{
	struct theory_in in = { .rate = 50000000, .streams = 4 };
	struct theory_out out;

	(void)state;
	theory_compute(&in, &out);
	assert_int_equal(out.bound, THEORY_RATE);
	/* 50 Mbit/s x 1448/1514 = 47.82 Mbit/s */
	assert_true(out.frame_bps > 47.80e6 && out.frame_bps < 47.84e6);
	assert_non_null(strstr(out.line, "rate-limited"));
}

static void test_seed000_window_vs_streams(void **state)
{
	/* Seed 000: 1 Gbit/s, 100 ms RTT, Linux default tcp_rmem max 6 MiB,
	 * tcp_adv_win_scale 1 -> 3 MiB window: 1 stream ~252 Mbit/s
	 * (measured 247), 4 streams -> the rate binds (~957; measured 931). */
	struct theory_in in = { .rate = 1000000000, .rtt = 0.100,
				.window = 3145728, .streams = 1 };
	struct theory_out out;

	(void)state;
	theory_compute(&in, &out);
	assert_int_equal(out.bound, THEORY_WINDOW);
	assert_true(out.window_bps > 250e6 && out.window_bps < 253e6);
	assert_non_null(strstr(out.line, "window-limited"));
	assert_non_null(strstr(out.line, "try -P 4"));
	in.streams = 4;
	theory_compute(&in, &out);
	assert_int_equal(out.bound, THEORY_RATE);
	assert_true(out.expect_bps > 955e6 && out.expect_bps < 958e6);
	/* 4 Tbit/s over 100 ms: no -P up to 128 reaches it; the advice
	 * never names a stream count the test refuses */
	in.rate = 4000000000000ULL;
	in.streams = 1;
	theory_compute(&in, &out);
	assert_null(strstr(out.line, "try -P"));
	assert_non_null(strstr(out.line, "streams would be needed (over -P 128): raise tcp_rmem"));
}

static void test_window_without_rate_gives_no_advice(void **state)
{
	/* no rate dialled: 33.6 MB over 840 ms is a ceiling, but there is no
	 * rate to reach with more streams */
	struct theory_in in = { .rtt = 0.840, .window = 33554432, .streams = 1 };
	struct theory_out out;

	(void)state;
	theory_compute(&in, &out);
	assert_int_equal(out.bound, THEORY_WINDOW);
	assert_true(out.frame_bps == 0);
	assert_null(strstr(out.line, "try -P"));
	assert_non_null(strstr(out.line, "no rate dialled"));
	/* a 200 kbit/s bottleneck (the edge profile on the bridge) binds
	 * long before a 33.6 MB window over 840 ms does */
	in.rate = 200000;
	theory_compute(&in, &out);
	assert_int_equal(out.bound, THEORY_RATE);
	assert_true(out.expect_bps > 191e3 && out.expect_bps < 192e3);
}

static void test_mathis(void **state)
{
	/* 1% loss, 100 ms RTT, MSS 1448: 1448*8/0.1*1.22/0.1 = 1.413 Mbit/s */
	struct theory_in in = { .rate = 100000000, .rtt = 0.1, .loss = 0.01,
				.streams = 1 };
	struct theory_out out;

	(void)state;
	theory_compute(&in, &out);
	assert_int_equal(out.bound, THEORY_LOSS);
	assert_true(out.mathis_bps > 1.40e6 && out.mathis_bps < 1.42e6);
	assert_non_null(strstr(out.line, "Mathis, loss-based CC assumed"));
	/* a named loss-based CC: the same ceiling, named */
	in.cc = "cubic";
	theory_compute(&in, &out);
	assert_int_equal(out.bound, THEORY_LOSS);
	assert_non_null(strstr(out.line, "loss-limited (Mathis, cubic)"));
	/* bbr does not halve its window per loss: no loss ceiling, the rate
	 * binds, and the line says why the loss sets none */
	in.cc = "bbr";
	theory_compute(&in, &out);
	assert_int_equal(out.bound, THEORY_RATE);
	assert_true(out.mathis_bps == 0);
	assert_non_null(strstr(out.line, "1% loss sets no ceiling for bbr"));
	assert_false(theory_cc_loss_based("bbr2"));
	assert_true(theory_cc_loss_based("reno"));
	assert_true(theory_cc_loss_based(""));
	assert_true(theory_cc_loss_based(NULL));
}

/* tcp_win_from_space(): the default scale 1 halves, 2 keeps 3/4, a
 * negative scale divides, an impossible scale gives 0. */
static void test_window_from_space(void **state)
{
	(void)state;
	assert_int_equal(theory_window_from_space(6291456, 1), 3145728);
	assert_int_equal(theory_window_from_space(4000, 2), 3000);
	assert_int_equal(theory_window_from_space(4000, -2), 1000);
	assert_int_equal(theory_window_from_space(4000, 0), 4000);
	assert_int_equal(theory_window_from_space(4000, 40), 0);
}

static void test_bdp(void **state)
{
	(void)state;
	/* 1 Gbit/s x 100 ms = 12.5 MB */
	assert_int_equal(theory_bdp(1000000000, 0.1), 12500000);
	assert_int_equal(theory_bdp(50000000, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_ceiling_50mbit),
		cmocka_unit_test(test_seed000_window_vs_streams),
		cmocka_unit_test(test_window_without_rate_gives_no_advice),
		cmocka_unit_test(test_mathis),
		cmocka_unit_test(test_bdp),
		cmocka_unit_test(test_window_from_space),
	};
	return cmocka_run_group_tests_name("theory", tests, NULL, NULL);
}
