/* SPDX-License-Identifier: MIT */
/* test_emu.c - the userspace impairment model with fixed PRNG seeds: loss
 * rates inside the binomial 99% interval, Gilbert-Elliott and 4-state burst
 * statistics, exact delay, jitter spread (uniform and normal), reorder and
 * duplicate counts, rate serialisation times, queue-limit drops. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "linklab/emu.h"
#include "linklab/units.h"

#define MS 1000000LL

static struct emu *mk(const struct emu_config *c)
{
	struct emu *e = NULL;
	struct ll_err err = { 0 };

	assert_int_equal(emu_new(c, &e, &err), 0);
	assert_non_null(e);
	return e;
}

/* count within the two-sided 99% normal approximation of Binomial(n, p) */
static void assert_binomial(unsigned long count, unsigned long n, double p)
{
	double mu = n * p, sd = sqrt(n * p * (1 - p));

	if (fabs((double)count - mu) > 2.576 * sd) {
		fprintf(stderr, "count %lu outside %.1f +- %.1f (n %lu p %g)\n",
			count, mu, 2.576 * sd, n, p);
		fail();
	}
}

static void test_loss_random_binomial(void **state)
{
	struct emu_config c = { .loss = units_percent_to_prob(1.0), .seed = 7 };
	struct emu *e = mk(&c);
	struct emu_fate f;
	unsigned long lost = 0, n = 200000, i;
	struct emu_stats st;

	(void)state;
	for (i = 0; i < n; i++) {
		emu_fate(e, 1500, false, &f);
		lost += f.lost;
		assert_false(f.dup);
		assert_false(f.corrupt);
	}
	assert_binomial(lost, n, 0.01);
	emu_get_stats(e, &st);
	assert_int_equal(st.lost, lost);
	assert_int_equal(st.in_pkts, n);
	assert_int_equal(st.in_bytes, n * 1500);
	emu_free(e);
}

static void test_seed_determinism(void **state)
{
	struct emu_config c = { .loss = units_percent_to_prob(30.0),
				.duplicate = units_percent_to_prob(10.0), .seed = 42 };
	struct emu *a = mk(&c), *b = mk(&c), *x;
	struct emu_fate fa, fb;
	int i, differ = 0;

	(void)state;
	c.seed = 43;
	x = mk(&c);
	for (i = 0; i < 1000; i++) {
		emu_fate(a, 100, false, &fa);
		emu_fate(b, 100, false, &fb);
		assert_int_equal(fa.lost, fb.lost);
		assert_int_equal(fa.dup, fb.dup);
		emu_fate(x, 100, false, &fb);
		differ += fa.lost != fb.lost;
	}
	assert_true(differ > 100);
	emu_free(a);
	emu_free(b);
	emu_free(x);
}

/* Mean length of loss runs and the overall loss fraction. */
static void loss_runs(struct emu *e, unsigned long n, double *frac, double *mean_burst)
{
	struct emu_fate f;
	unsigned long lost = 0, bursts = 0, i;
	bool prev = false;

	for (i = 0; i < n; i++) {
		emu_fate(e, 1000, false, &f);
		if (f.lost) {
			lost++;
			if (!prev)
				bursts++;
		}
		prev = f.lost;
	}
	*frac = (double)lost / n;
	*mean_burst = bursts ? (double)lost / bursts : 0;
}

static void test_loss_gilbert_elliott(void **state)
{
	/* p 1%, r 25%, 1-h 100%, 1-k 0: bursts of mean 1/r = 4 packets,
	 * loss = p/(p+r) = 3.85% */
	struct emu_config c = { .loss_model = EMU_LOSS_GE, .seed = 3,
				.ge_p = units_percent_to_prob(1),
				.ge_r = units_percent_to_prob(25),
				.ge_1h = UINT32_MAX, .ge_1k = 0 };
	struct emu *e = mk(&c);
	double frac, burst;

	(void)state;
	loss_runs(e, 400000, &frac, &burst);
	assert_true(fabs(burst - 4.0) < 0.2);
	assert_true(fabs(frac - 0.01 / 0.26) < 0.003);
	emu_free(e);

	/* 1-k 2% in good, 1-h 50% in bad: loss = (0.02*r + 0.5*p)/(p+r) */
	c.ge_1h = units_percent_to_prob(50);
	c.ge_1k = units_percent_to_prob(2);
	e = mk(&c);
	loss_runs(e, 400000, &frac, &burst);
	assert_true(fabs(frac - (0.02 * 0.25 + 0.5 * 0.01) / 0.26) < 0.003);
	emu_free(e);
}

static void test_loss_4state(void **state)
{
	/* p13 5%, p31 50%, p32 0, p23 0, p14 0: stays in 3 with 50%: bursts of
	 * mean 2, pi3 = p13/(p13 + p31) = 0.0909 */
	struct emu_config c = { .loss_model = EMU_LOSS_4STATE, .seed = 11,
				.p13 = units_percent_to_prob(5),
				.p31 = units_percent_to_prob(50) };
	struct emu *e = mk(&c);
	double frac, burst;

	(void)state;
	loss_runs(e, 400000, &frac, &burst);
	assert_true(fabs(burst - 2.0) < 0.1);
	assert_true(fabs(frac - 0.05 / 0.55) < 0.004);
	emu_free(e);

	/* isolated losses only (p14 3%): every loss is a run of one, and the
	 * chain then returns to 1: loss = p14/(1+p14) */
	memset(&c, 0, sizeof(c));
	c.loss_model = EMU_LOSS_4STATE;
	c.seed = 12;
	c.p14 = units_percent_to_prob(3);
	e = mk(&c);
	loss_runs(e, 400000, &frac, &burst);
	assert_true(fabs(burst - 1.0) < 1e-9);
	assert_true(fabs(frac - 0.03 / 1.03) < 0.002);
	emu_free(e);
}

/* netem's correlation (get_crandom): next = (1-rho) * fresh + rho * last.
 * As in the kernel, correlated loss is biased (tc-netem(8) calls it
 * deprecated for that): the averaged value rarely reaches the tails, so
 * loss 10% with 75% correlation loses almost nothing, and loss 40% with 50%
 * gives ~30% in longer runs. Delay correlation goes through tabledist's
 * rnd % (2 * jitter) (or % table size), which discards it: delays with 90%
 * correlation stay in range and are as uncorrelated as the kernel's. */
static void test_correlation(void **state)
{
	struct emu_config c = { .loss = units_percent_to_prob(40), .seed = 4 };
	struct emu *e = mk(&c);
	double frac0, burst0, frac1, burst1, s = 0, sxy = 0, sxx = 0, mean;
	int64_t v[20000];
	int i;

	(void)state;
	loss_runs(e, 200000, &frac0, &burst0);
	emu_free(e);
	c.loss_corr = units_percent_to_prob(50);
	e = mk(&c);
	loss_runs(e, 200000, &frac1, &burst1);
	emu_free(e);
	printf("  loss 40%%: %.2f%% in runs of %.3f; with 50%% correlation %.2f%% in runs of %.3f\n",
	       100 * frac0, burst0, 100 * frac1, burst1);
	assert_true(fabs(burst0 - 1 / 0.6) < 0.03);     /* geometric: 1/(1-p) */
	assert_true(fabs(frac0 - 0.4) < 0.005);
	assert_true(burst1 > 1.15 * burst0);
	assert_true(fabs(frac1 - 0.303) < 0.01);
	c.loss = units_percent_to_prob(10);
	c.loss_corr = units_percent_to_prob(75);
	e = mk(&c);
	loss_runs(e, 200000, &frac1, &burst1);
	emu_free(e);
	assert_true(frac1 < 0.001);

	memset(&c, 0, sizeof(c));
	c.delay = 50 * MS;
	c.jitter = 10 * MS;
	c.delay_corr = units_percent_to_prob(90);
	c.seed = 6;
	c.limit = 30000;
	e = mk(&c);
	for (i = 0; i < 20000; i++) {
		assert_int_equal(emu_enqueue(e, 0, 100, e, &v[i]), 0);
		s += (double)v[i];
	}
	while (emu_drain(e, NULL))
		;
	emu_free(e);
	mean = s / 20000;
	for (i = 1; i < 20000; i++) {
		sxy += ((double)v[i] - mean) * ((double)v[i - 1] - mean);
		sxx += ((double)v[i] - mean) * ((double)v[i] - mean);
	}
	printf("  delay corr 90%%: lag-1 autocorrelation %.3f (kernel: ~0 too)\n", sxy / sxx);
	assert_true(fabs(sxy / sxx) < 0.05);
	for (i = 0; i < 20000; i++)
		assert_true(v[i] >= 40 * MS && v[i] < 60 * MS);
}

static void test_delay_exact(void **state)
{
	struct emu_config c = { .delay = 50 * MS, .seed = 1 };
	struct emu *e = mk(&c);
	int64_t tts, now;
	uint32_t len;
	int i;

	(void)state;
	for (i = 0; i < 100; i++) {
		now = 1000000000LL + i * 123457LL;
		assert_int_equal(emu_enqueue(e, now, 1514, (void *)(intptr_t)(i + 1), &tts), 0);
		assert_int_equal(tts, now + 50 * MS);
	}
	assert_int_equal(emu_next_time(e), 1000000000LL + 50 * MS);
	/* nothing is due one ns early; everything is FIFO when due */
	assert_null(emu_dequeue(e, 1000000000LL + 50 * MS - 1, &len));
	for (i = 0; i < 100; i++) {
		void *p = emu_dequeue(e, INT64_MAX - 1, &len);

		assert_int_equal((intptr_t)p, i + 1);
		assert_int_equal(len, 1514);
	}
	assert_null(emu_dequeue(e, INT64_MAX - 1, &len));
	assert_int_equal(emu_next_time(e), INT64_MAX);
	emu_free(e);
}

/* Sample n delays (ns) through enqueue + drain. */
static void sample_delays(struct emu *e, int n, double *mean, double *sd,
			  int64_t *mn, int64_t *mx, double *within1)
{
	double s = 0, s2 = 0, mu0;
	int64_t *v = malloc(sizeof(*v) * (size_t)n);
	int i, in1 = 0;
	uint32_t len;

	assert_non_null(v);
	*mn = INT64_MAX;
	*mx = INT64_MIN;
	for (i = 0; i < n; i++) {
		assert_int_equal(emu_enqueue(e, 0, 100, e, &v[i]), 0);
		assert_ptr_equal(emu_drain(e, &len), e);
		s += (double)v[i];
		if (v[i] < *mn)
			*mn = v[i];
		if (v[i] > *mx)
			*mx = v[i];
	}
	*mean = s / n;
	mu0 = *mean;
	for (i = 0; i < n; i++)
		s2 += ((double)v[i] - mu0) * ((double)v[i] - mu0);
	*sd = sqrt(s2 / (n - 1));
	for (i = 0; i < n; i++)
		in1 += fabs((double)v[i] - (double)emu_get_config(e)->delay) <=
		       (double)emu_get_config(e)->jitter;
	*within1 = (double)in1 / n;
	free(v);
}

static void test_jitter_uniform(void **state)
{
	struct emu_config c = { .delay = 100 * MS, .jitter = 10 * MS, .seed = 5 };
	struct emu *e = mk(&c);
	double mean, sd, w;
	int64_t mn, mx;

	(void)state;
	sample_delays(e, 100000, &mean, &sd, &mn, &mx, &w);
	assert_true(mn >= 90 * MS);
	assert_true(mx < 110 * MS);
	assert_true(fabs(mean - 100 * MS) < 0.1 * MS);
	/* uniform on [-J, J): sd = J / sqrt(3) */
	assert_true(fabs(sd - 10 * MS / sqrt(3.0)) < 0.02 * 10 * MS / sqrt(3.0));
	emu_free(e);
}

static void test_jitter_normal(void **state)
{
	static struct emu_dist d;
	struct emu_config c = { .delay = 100 * MS, .jitter = 10 * MS, .seed = 9, .dist = &d };
	struct emu *e;
	double mean, sd, w;
	int64_t mn, mx;

	(void)state;
	emu_dist_normal(&d, 4096);
	assert_int_equal(d.n, 4096);
	assert_true(d.t[0] < -3 * EMU_DIST_SCALE);
	assert_true(d.t[4095] > 3 * EMU_DIST_SCALE);
	e = mk(&c);
	sample_delays(e, 100000, &mean, &sd, &mn, &mx, &w);
	assert_true(fabs(mean - 100 * MS) < 0.15 * MS);
	assert_true(fabs(sd - 10 * MS) < 0.03 * 10 * MS);
	/* a normal puts 68.3% within one sigma (uniform would put 100%) */
	assert_true(fabs(w - 0.683) < 0.01);
	assert_true(mn < 70 * MS && mx > 130 * MS);
	emu_free(e);
}

static void test_dist_load(void **state)
{
	static struct emu_dist d;
	char path[] = "/tmp/test_emu_distXXXXXX";
	struct ll_err err = { 0 };
	int fd;
	FILE *f;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("# a table\n -8192 0 8192\n 16384\n", f);
	fclose(f);
	assert_int_equal(emu_dist_load(path, &d, &err), 0);
	assert_int_equal(d.n, 4);
	assert_int_equal(d.t[0], -8192);
	assert_int_equal(d.t[3], 16384);
	f = fopen(path, "w");
	fputs("1 2 x\n", f);
	fclose(f);
	assert_int_equal(emu_dist_load(path, &d, &err), -EINVAL);
	assert_non_null(strstr(err.msg, ":1:"));
	unlink(path);
	assert_int_equal(emu_dist_load(path, &d, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "No such file"));
}

static void test_duplicate_corrupt_counts(void **state)
{
	struct emu_config c = { .duplicate = units_percent_to_prob(10),
				.corrupt = units_percent_to_prob(5), .seed = 21 };
	struct emu *e = mk(&c);
	struct emu_fate f, g;
	unsigned long n = 100000, dup = 0, cor = 0, i;
	struct emu_stats st;

	(void)state;
	for (i = 0; i < n; i++) {
		emu_fate(e, 64, false, &f);
		dup += f.dup;
		cor += f.corrupt;
		if (f.corrupt)
			assert_true(f.corrupt_bit < 64 * 8);
		if (f.dup) {
			emu_fate(e, 64, true, &g);
			assert_false(g.dup);  /* a copy is never duplicated again */
			cor += g.corrupt;
		}
	}
	assert_binomial(dup, n, 0.10);
	assert_binomial(cor, n + dup, 0.05);
	emu_get_stats(e, &st);
	assert_int_equal(st.duplicated, dup);
	assert_int_equal(st.corrupted, cor);
	assert_int_equal(st.in_pkts, n);   /* copies are not input */
	emu_free(e);
}

/* reorder P gap G: G-1 delayed, then each goes first with probability P */
static void test_reorder_gap(void **state)
{
	struct emu_config c = { .delay = 10 * MS, .reorder = units_percent_to_prob(25),
				.gap = 5, .seed = 33, .limit = 1000000 };
	struct emu *e = mk(&c);
	struct emu_stats st;
	unsigned long n = 200000, i;
	uint32_t len;
	void *p;

	(void)state;
	for (i = 0; i < n; i++)
		assert_int_equal(emu_enqueue(e, (int64_t)i * 1000, 100, (void *)(uintptr_t)(i + 1), NULL), 0);
	emu_get_stats(e, &st);
	/* cycle: 4 delayed + geometric(1/4) = 8 packets, one reordered */
	assert_true(fabs((double)st.reordered / n - 1.0 / 8) < 0.004);
	/* the reordered ones leave first, at once */
	p = emu_dequeue(e, 0, &len);
	assert_non_null(p);
	assert_true((uintptr_t)p >= 5);  /* packets 1..4 are always delayed */
	while (emu_drain(e, &len))
		;
	emu_free(e);

	/* no gap (tc sets gap 1): 25% go first */
	c.gap = 1;
	e = mk(&c);
	for (i = 0; i < n; i++)
		assert_int_equal(emu_enqueue(e, 0, 100, e, NULL), 0);
	emu_get_stats(e, &st);
	assert_binomial(st.reordered, n, 0.25);
	while (emu_drain(e, &len))
		;
	emu_free(e);
}

static void test_jitter_reorders_tfifo(void **state)
{
	struct emu_config c = { .delay = 10 * MS, .jitter = 5 * MS, .seed = 2 };
	struct emu *e = mk(&c);
	int64_t t[200], last = INT64_MIN;
	uint32_t len;
	int i, out_of_order = 0;
	void *p;

	(void)state;
	for (i = 0; i < 200; i++)
		assert_int_equal(emu_enqueue(e, i * 10000LL, 100, &t[i], &t[i]), 0);
	while ((p = emu_dequeue(e, INT64_MAX - 1, &len))) {
		int64_t v = *(int64_t *)p;

		assert_true(v >= last);  /* released in time order */
		last = v;
		out_of_order += (p != &t[0]) && ((int64_t *)p)[-1] > v;
	}
	assert_true(out_of_order > 10);  /* ... which is not arrival order */
	emu_free(e);
}

static void test_rate_serialisation(void **state)
{
	/* 50mbit: a 1514-byte frame takes 1514 * 8 / 50e6 s = 242.24 us */
	struct emu_config c = { .rate = 50000000 / 8, .seed = 1 };
	struct emu *e;
	struct impair d = { 0 };
	struct ll_diag diag;
	int64_t tts;
	int i;

	(void)state;
	assert_int_equal(emu_packet_time(&c, 1514), 242240);
	e = mk(&c);
	for (i = 0; i < 10; i++) {
		assert_int_equal(emu_enqueue(e, 0, 1514, e, &tts), 0);
		assert_int_equal(tts, (i + 1) * 242240LL);
	}
	/* an idle link: a packet arriving later is not held behind history */
	while (emu_dequeue(e, INT64_MAX - 1, NULL))
		;
	assert_int_equal(emu_enqueue(e, 10 * MS, 1514, e, &tts), 0);
	assert_int_equal(tts, 10 * MS + 242240);
	emu_drain(e, NULL);
	emu_free(e);

	/* delay + rate: serialised after the delay */
	c.delay = 100 * MS;
	e = mk(&c);
	assert_int_equal(emu_enqueue(e, 0, 1514, e, &tts), 0);
	assert_int_equal(tts, 100 * MS + 242240);
	assert_int_equal(emu_enqueue(e, 1000, 1514, e, &tts), 0);
	assert_int_equal(tts, 100 * MS + 2 * 242240);
	while (emu_drain(e, NULL))
		;
	emu_free(e);

	/* overhead and ATM cells (tc-netem: rate R 0 48 5): 100 bytes -> 3 cells
	 * of 53 -> 159 bytes; overhead -14 strips Ethernet */
	c.cell_size = 48;
	c.cell_overhead = 5;
	c.rate = 1000000;
	assert_int_equal(emu_packet_time(&c, 100), 159000);
	c.cell_size = 0;
	c.overhead = -14;
	assert_int_equal(emu_packet_time(&c, 1514), 1500000);

	/* the dial's rate (tbf) maps to bytes/s with tbf's 50 ms latency */
	ll_diag_clear(&diag);
	assert_int_equal(impair_set(&d, "rate", "50mbit", &diag), 0);
	assert_int_equal(impair_set(&d, "delay", "20ms", &diag), 0);
	assert_int_equal(impair_set(&d, "reorder", "10%", &diag), 0);
	memset(&c, 0, sizeof(c));
	emu_config_from_impair(&c, &d);
	assert_int_equal(c.rate, 6250000);
	assert_int_equal(c.rate_backlog_ns, 50 * MS);
	assert_int_equal(c.delay, 20 * MS);
	assert_int_equal(c.gap, 1);
	assert_int_equal(c.reorder, units_percent_to_prob(10));
}

static void test_queue_limit(void **state)
{
	struct emu_config c = { .delay = 10 * MS, .limit = 10, .seed = 1 };
	struct emu *e = mk(&c);
	struct emu_stats st;
	int i, ok = 0, full = 0;

	(void)state;
	for (i = 0; i < 15; i++) {
		int rc = emu_enqueue(e, 0, 100, e, NULL);

		if (rc == 0)
			ok++;
		else if (rc == -ENOBUFS)
			full++;
	}
	assert_int_equal(ok, 10);
	assert_int_equal(full, 5);
	emu_get_stats(e, &st);
	assert_int_equal(st.limit_drops, 5);
	assert_int_equal(st.qlen, 10);
	assert_int_equal(st.qlen_max, 10);
	/* one released, one more fits */
	assert_non_null(emu_dequeue(e, 10 * MS, NULL));
	assert_int_equal(emu_enqueue(e, 0, 100, e, NULL), 0);
	while (emu_drain(e, NULL))
		;
	emu_free(e);

	/* tbf-like backlog: 1 Mbit, 1000-byte packets = 8 ms each; 50 ms of
	 * backlog holds 7 packets behind the one on the wire */
	memset(&c, 0, sizeof(c));
	c.rate = 125000;
	c.rate_backlog_ns = 50 * MS;
	e = mk(&c);
	ok = 0;
	for (i = 0; i < 20; i++)
		ok += emu_enqueue(e, 0, 1000, e, NULL) == 0;
	emu_get_stats(e, &st);
	assert_int_equal(ok, 7);
	assert_int_equal(st.rate_drops, 13);
	while (emu_drain(e, NULL))
		;
	emu_free(e);
}

static void test_bad_config(void **state)
{
	struct emu_config c = { .jitter = (int64_t)INT32_MAX + 1 };
	struct emu *e = NULL;
	struct ll_err err = { 0 };

	(void)state;
	assert_int_equal(emu_new(&c, &e, &err), -EINVAL);
	assert_null(e);
	assert_non_null(strstr(err.msg, "jitter"));
	c.jitter = 0;
	c.delay = -1;
	assert_int_equal(emu_new(&c, &e, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "delay"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loss_random_binomial),
		cmocka_unit_test(test_seed_determinism),
		cmocka_unit_test(test_loss_gilbert_elliott),
		cmocka_unit_test(test_loss_4state),
		cmocka_unit_test(test_correlation),
		cmocka_unit_test(test_delay_exact),
		cmocka_unit_test(test_jitter_uniform),
		cmocka_unit_test(test_jitter_normal),
		cmocka_unit_test(test_dist_load),
		cmocka_unit_test(test_duplicate_corrupt_counts),
		cmocka_unit_test(test_reorder_gap),
		cmocka_unit_test(test_jitter_reorders_tfifo),
		cmocka_unit_test(test_rate_serialisation),
		cmocka_unit_test(test_queue_limit),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
