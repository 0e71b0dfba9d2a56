/* test_rttprobe.c - ping-style RTT summary, 95 % confidence interval, and
 * the UDP echo / prober pair on loopback (plus pausing the echo). */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "linklab/traffic/rttprobe.h"

static void test_stats(void **state)
{
	(void)state;
	struct rtt_stats st;
	double ms[] = { 1.0, 2.0, 3.0, 4.0 };
	rtt_stats_compute(ms, 4, &st);
	assert_float_equal(st.min_ms, 1.0, 1e-12);
	assert_float_equal(st.max_ms, 4.0, 1e-12);
	assert_float_equal(st.avg_ms, 2.5, 1e-12);
	/* ping: mdev = sqrt(mean(x^2) - mean(x)^2) = sqrt(7.5 - 6.25) */
	assert_float_equal(st.mdev_ms, sqrt(1.25), 1e-12);
	rtt_stats_compute(ms, 0, &st);
	assert_true(st.avg_ms == 0 && st.mdev_ms == 0);
}

static void test_ci95(void **state)
{
	(void)state;
	double m, h;
	double x[] = { 10, 12, 14 };   /* sd 2, n 3, t(0.975, 2) = 4.303 */
	rtt_mean_ci95(x, 3, &m, &h);
	assert_float_equal(m, 12, 1e-12);
	assert_float_equal(h, 4.303 * 2 / sqrt(3), 1e-9);
	rtt_mean_ci95(x, 1, &m, &h);
	assert_float_equal(m, 10, 1e-12);
	assert_true(h == 0);
	double y[40];
	for (int i = 0; i < 40; i++)
		y[i] = i % 2 ? 1 : -1;
	rtt_mean_ci95(y, 40, &m, &h);
	assert_float_equal(m, 0, 1e-12);
	assert_true(h > 1.96 * 1.0 / sqrt(40) && h < 2.03 * 1.02 / sqrt(40));
}

static void test_echo_roundtrip(void **state)
{
	(void)state;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	struct rtt_echo *e;
	struct rtt_prober *p;
	struct rtt_stats st;
	struct ll_err err = { 0 };

	/* a free port: bind a UDP socket to 0 and reuse its number */
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(fd, (struct sockaddr *)&a, &al);
	close(fd);
	assert_int_equal(rtt_echo_start(&e, (struct sockaddr *)&a, al, &err), 0);
	assert_int_equal(rtt_prober_open(&p, (struct sockaddr *)&a, al, &err), 0);
	assert_int_equal(rtt_prober_run(p, 5, 0.01, 0.5, NULL, &st, &err), 0);
	assert_int_equal(st.sent, 5);
	assert_int_equal(st.received, 5);
	assert_true(st.min_ms > 0 && st.min_ms <= st.avg_ms && st.avg_ms <= st.max_ms);
	assert_true(st.max_ms < 200);
	/* paused: nothing answers; resumed: answers again */
	rtt_echo_pause(e, true);
	assert_int_equal(rtt_prober_run(p, 3, 0.01, 0.2, NULL, &st, &err), 0);
	assert_int_equal(st.sent, 3);
	assert_int_equal(st.received, 0);
	rtt_echo_pause(e, false);
	assert_int_equal(rtt_prober_run(p, 3, 0.01, 0.5, NULL, &st, &err), 0);
	assert_int_equal(st.received, 3);
	rtt_prober_close(p);
	rtt_echo_stop(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_ci95),
		cmocka_unit_test(test_echo_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
