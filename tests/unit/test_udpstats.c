/* test_udpstats.c - UDP receiver arithmetic on crafted sequences: loss,
 * reordering, duplicates, 32-bit wrap, RFC 3550 jitter and clock offset. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "linklab/traffic/udpstats.h"

static struct udpstats u;

/* feed seq numbers with a fixed transit time (no jitter) */
static void feed(const uint64_t *seq, int n, int bits)
{
	for (int i = 0; i < n; i++)
		udpstats_packet(&u, seq[i], bits, (int64_t)i * 1000,
				(int64_t)i * 1000 + 500);
}

static void test_in_order(void **state)
{
	(void)state;
	udpstats_init(&u);
	uint64_t s[] = { 1, 2, 3, 4, 5 };
	feed(s, 5, 32);
	assert_int_equal(u.highest, 5);
	assert_int_equal(u.received, 5);
	assert_int_equal(udpstats_lost(&u), 0);
	assert_int_equal(u.ooo, 0);
	assert_int_equal(u.dups, 0);
	assert_true(u.jitter_s == 0);
}

static void test_gap_is_loss(void **state)
{
	(void)state;
	udpstats_init(&u);
	uint64_t s[] = { 1, 2, 5, 6 };   /* 3 and 4 never come */
	feed(s, 4, 32);
	assert_int_equal(udpstats_lost(&u), 2);
	assert_float_equal(udpstats_loss_percent(udpstats_lost(&u), u.highest),
			   100.0 * 2 / 6, 1e-9);
}

static void test_reorder_not_lost(void **state)
{
	(void)state;
	udpstats_init(&u);
	uint64_t s[] = { 1, 3, 2, 5, 4, 6 };
	feed(s, 6, 32);
	assert_int_equal(udpstats_lost(&u), 0);
	assert_int_equal(u.ooo, 2);
	assert_int_equal(u.received, 6);
	assert_int_equal(udpstats_packet(&u, 7, 32, 0, 0), 1);
}

static void test_duplicates_not_counted(void **state)
{
	(void)state;
	udpstats_init(&u);
	/* a duplicate must neither hide a loss (iperf3 3.12 lowers its lost
	 * count on any late datagram, a duplicate included) nor be "received" */
	uint64_t s[] = { 1, 2, 2, 4, 4, 1 };
	feed(s, 6, 32);
	assert_int_equal(u.dups, 3);
	assert_int_equal(u.received, 3);
	assert_int_equal(udpstats_lost(&u), 1);   /* 3 */
	assert_int_equal(u.ooo, 0);
	assert_int_equal(udpstats_packet(&u, 2, 32, 0, 0), 0);
	assert_int_equal(udpstats_packet(&u, 3, 32, 0, 0), 2);
	assert_int_equal(udpstats_lost(&u), 0);
}

static void test_never_negative(void **state)
{
	(void)state;
	udpstats_init(&u);
	assert_int_equal(udpstats_lost(&u), 0);
	assert_true(udpstats_loss_percent(0, 0) == 0);
	assert_false(isnan(udpstats_loss_percent(5, 0)));
	assert_true(udpstats_loss_percent(7, 5) <= 100);
	/* sequence 0 is not a datagram of a test (iperf3 counts from 1) */
	assert_int_equal(udpstats_packet(&u, 0, 64, 0, 0), -1);
	/* far-behind datagrams beyond the window count once, loss >= 0 */
	for (uint64_t q = 1; q <= 10000; q += 2)
		udpstats_packet(&u, q, 64, 0, 0);
	for (uint64_t q = 2; q <= 10000; q += 2)
		udpstats_packet(&u, q, 64, 0, 0);
	assert_int_equal(udpstats_lost(&u), 0);
	assert_int_equal(u.received, 10000);
}

static void test_wrap_32(void **state)
{
	(void)state;
	udpstats_init(&u);
	/* start near the top of the 32-bit space: the wire number wraps to 0 */
	uint64_t top = 0xFFFFFFFDull;
	uint64_t s[] = { top, top + 1, top + 2, 0, 1, 2 };  /* 0 == 2^32 */
	feed(s, 6, 32);
	assert_true(u.highest == 0x100000002ull);
	assert_int_equal(u.received, 6);
	assert_int_equal(u.ooo, 0);
	assert_int_equal(u.dups, 0);
	/* everything below the first seen number was never received */
	assert_true(udpstats_lost(&u) == 0x100000002ull - 6);
	/* a straggler from before the wrap is reordered, not a new lap */
	uint64_t before = u.received;
	assert_int_equal(udpstats_packet(&u, 0xFFFFFFFCull, 32, 0, 0), 2);
	assert_true(u.highest == 0x100000002ull);
	assert_true(u.received == before + 1);
	/* 64-bit counters never wrap */
	udpstats_init(&u);
	assert_int_equal(udpstats_packet(&u, 0x100000005ull, 64, 0, 0), 1);
	assert_true(u.highest == 0x100000005ull);
}

static void test_jitter_rfc3550(void **state)
{
	(void)state;
	udpstats_init(&u);
	/* transit alternates 1000 / 3000 us: |D| = 2000 us every time after
	 * the first; J_i = J_{i-1} + (|D| - J_{i-1}) / 16 */
	double j = 0;
	for (int i = 0; i < 50; i++) {
		int64_t sent = (int64_t)i * 10000;
		int64_t transit = i % 2 ? 3000 : 1000;
		udpstats_packet(&u, (uint64_t)i + 1, 32, sent, sent + transit);
		if (i)
			j += (0.002 - j) / 16;
	}
	assert_float_equal(u.jitter_s, j, 1e-12);
	assert_true(u.jitter_s > 0.0015 && u.jitter_s < 0.002);
}

static void test_jitter_clock_offset(void **state)
{
	(void)state;
	/* the same arrivals with the sender's clock 1.7e9 s ahead (iperf3
	 * stamps wall time, we may be on another clock): same jitter */
	struct udpstats a, b;
	udpstats_init(&a);
	udpstats_init(&b);
	const int64_t off = 1700000000LL * 1000000;
	unsigned r = 12345;
	for (int i = 0; i < 1000; i++) {
		r = r * 1103515245u + 12345u;
		int64_t sent = (int64_t)i * 1000;
		int64_t arr = sent + 200 + (int64_t)(r >> 16) % 700;
		udpstats_packet(&a, (uint64_t)i + 1, 32, sent, arr);
		udpstats_packet(&b, (uint64_t)i + 1, 32, sent + off, arr);
	}
	assert_true(a.jitter_s > 0);
	assert_float_equal(a.jitter_s, b.jitter_s, 1e-15);
	/* duplicates do not move the jitter */
	double before = a.jitter_s;
	udpstats_packet(&a, 5, 32, 0, 999999999);
	assert_float_equal(a.jitter_s, before, 0);
}

/* interval loss: a gap a late datagram fills within UDPSTATS_SETTLE_US is
 * never reported; one still open after it is, once */
static void test_settled_loss(void **state)
{
	(void)state;
	udpstats_init(&u);
	uint64_t rep = 0;
	int64_t t = 0;
	/* 1 ms apart: 1..100, with 50 arriving 3 ms late and 70 never */
	for (uint64_t s = 1; s <= 100; s++, t += 1000) {
		if (s == 50 || s == 70)
			continue;
		udpstats_packet(&u, s, 32, t, t + 500);
		if (s == 53)
			udpstats_packet(&u, 50, 32, t, t + 500);
	}
	/* at this moment 70 is open, 50 was filled: nothing settled yet */
	assert_int_equal(udpstats_lost(&u), 1);
	assert_int_equal(udpstats_settled_lost(&u), 0);
	assert_int_equal(udpstats_interval_lost(udpstats_settled_lost(&u), &rep, 100), 0);
	/* 0.5 s more of traffic: the gap at 70 is settled */
	for (uint64_t s = 101; s <= 600; s++, t += 1000)
		udpstats_packet(&u, s, 32, t, t + 500);
	assert_int_equal(udpstats_settled_lost(&u), 1);
	assert_int_equal(udpstats_interval_lost(udpstats_settled_lost(&u), &rep, 500), 1);
	/* reported once */
	assert_int_equal(udpstats_interval_lost(udpstats_settled_lost(&u), &rep, 500), 0);
	assert_int_equal(u.ooo, 1);
	/* a very late 70 (after it was reported) takes the loss back in the
	 * end total, and the settled count does not go below what it was */
	udpstats_packet(&u, 70, 32, t, t + 500);
	assert_int_equal(udpstats_lost(&u), 0);
	assert_int_equal(udpstats_settled_lost(&u), 0);
	assert_int_equal(udpstats_interval_lost(udpstats_settled_lost(&u), &rep, 10), 0);
}

/* the last interval takes what is still missing (udpstats_lost) */
static void test_settled_final(void **state)
{
	(void)state;
	udpstats_init(&u);
	uint64_t rep = 0;
	uint64_t s[] = { 1, 2, 4, 5 };
	feed(s, 4, 32);   /* 4 ms in all: nothing settled */
	assert_int_equal(udpstats_settled_lost(&u), 0);
	assert_int_equal(udpstats_interval_lost(udpstats_lost(&u), &rep, 5), 1);
	assert_int_equal(rep, 1);
}

/* 0 <= lost <= total in every interval: what does not fit is carried */
static void test_interval_lost_bounded(void **state)
{
	(void)state;
	uint64_t rep = 0;
	/* 900 settled at once, intervals of 400 datagrams */
	assert_int_equal(udpstats_interval_lost(900, &rep, 400), 400);
	assert_int_equal(udpstats_interval_lost(900, &rep, 400), 400);
	assert_int_equal(udpstats_interval_lost(900, &rep, 400), 100);
	assert_int_equal(udpstats_interval_lost(900, &rep, 400), 0);
	assert_int_equal(rep, 900);
	/* a count that went down (late fill) never gives a negative loss */
	assert_int_equal(udpstats_interval_lost(850, &rep, 400), 0);
	/* no datagrams in the interval: no loss in it */
	assert_int_equal(udpstats_interval_lost(1000, &rep, 0), 0);
	assert_int_equal(udpstats_interval_lost(1000, &rep, 7), 7);
	assert_true(udpstats_loss_percent(7, 7) == 100);
	assert_true(udpstats_loss_percent(9, 7) == 100);
}

/* a long gap clears the window a word at a time: the numbers in it are
 * new (reordered) when they come, the ones before it still duplicates */
static void test_long_gap_window(void **state)
{
	(void)state;
	udpstats_init(&u);
	for (uint64_t s = 1; s <= 100; s++)
		udpstats_packet(&u, s, 32, 0, 0);
	assert_int_equal(udpstats_packet(&u, 1101, 32, 0, 0), 1);   /* 101..1100 missing */
	assert_int_equal(udpstats_lost(&u), 1000);
	assert_int_equal(udpstats_packet(&u, 100, 32, 0, 0), 0);    /* seen: duplicate */
	for (uint64_t s = 101; s <= 1100; s++)
		assert_int_equal(udpstats_packet(&u, s, 32, 0, 0), 2);
	assert_int_equal(udpstats_lost(&u), 0);
	assert_int_equal(u.ooo, 1000);
	assert_int_equal(u.dups, 1);
	/* a gap of 130 starting mid-word, then its ends */
	assert_int_equal(udpstats_packet(&u, 1101 + 131, 32, 0, 0), 1);
	assert_int_equal(udpstats_packet(&u, 1102, 32, 0, 0), 2);
	assert_int_equal(udpstats_packet(&u, 1101 + 130, 32, 0, 0), 2);
	assert_int_equal(udpstats_packet(&u, 1101, 32, 0, 0), 0);
	assert_int_equal(udpstats_lost(&u), 128);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_gap_is_loss),
		cmocka_unit_test(test_reorder_not_lost),
		cmocka_unit_test(test_duplicates_not_counted),
		cmocka_unit_test(test_never_negative),
		cmocka_unit_test(test_wrap_32),
		cmocka_unit_test(test_jitter_rfc3550),
		cmocka_unit_test(test_jitter_clock_offset),
		cmocka_unit_test(test_settled_loss),
		cmocka_unit_test(test_settled_final),
		cmocka_unit_test(test_interval_lost_bounded),
		cmocka_unit_test(test_long_gap_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
