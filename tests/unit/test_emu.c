/* SPDX-License-Identifier: MIT */
/* test_emu.c - the userspace impairment model with fixed PRNG seeds: loss
 * rates inside the binomial 99% interval, Gilbert-Elliott and 4-state burst
 * statistics, exact delay, jitter spread (uniform and normal), reorder and
 * duplicate counts, rate serialisation times, queue-limit drops; the dial ->
 * config mapping (emu_config_build) and the token bucket (tbf) on a
 * synthetic clock. */
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

#include "linklab/bridge/emu.h"
#include "linklab/base/units.h"
#include "linklab/peer/hostinfo.h"

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
	/* cycle: 4 delayed + geometric(1/4) = 8 packets, one sent ahead */
	assert_true(fabs((double)st.sent_ahead / n - 1.0 / 8) < 0.004);
	/* the ones sent ahead leave first, at once */
	p = emu_dequeue(e, 0, &len);
	assert_non_null(p);
	assert_true((uintptr_t)p >= 5);  /* packets 1..4 are always delayed */
	/* then the delayed ones: every packet that arrived before the last
	 * one sent ahead leaves out of order, counted as reordered */
	uintptr_t hi = (uintptr_t)p;
	unsigned long late = 0, out = 1;
	while ((p = emu_dequeue(e, 20 * MS + (int64_t)n * 1000, &len))) {
		if ((uintptr_t)p < hi)
			late++;
		else
			hi = (uintptr_t)p;
		out++;
	}
	assert_int_equal(out, n);
	emu_get_stats(e, &st);
	assert_int_equal(st.reordered, late);
	assert_true(late > 0);
	emu_free(e);

	/* no gap (tc sets gap 1): 25% go first */
	c.gap = 1;
	e = mk(&c);
	for (i = 0; i < n; i++)
		assert_int_equal(emu_enqueue(e, 0, 100, e, NULL), 0);
	emu_get_stats(e, &st);
	assert_binomial(st.sent_ahead, n, 0.25);
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
	long hi = -1, late = 0;
	struct emu_stats st;
	void *p;

	(void)state;
	for (i = 0; i < 200; i++)
		assert_int_equal(emu_enqueue(e, i * 10000LL, 100, &t[i], &t[i]), 0);
	while ((p = emu_dequeue(e, INT64_MAX - 1, &len))) {
		int64_t v = *(int64_t *)p;
		long idx = (long)((int64_t *)p - t);

		assert_true(v >= last);  /* released in time order */
		last = v;
		out_of_order += (p != &t[0]) && ((int64_t *)p)[-1] > v;
		/* a receiver's out-of-order: an arrival below the highest seen */
		if (idx < hi)
			late++;
		else
			hi = idx;
	}
	assert_true(out_of_order > 10);  /* ... which is not arrival order */
	/* the counter counts frames out of order for any reason: here jitter
	 * alone, with no reorder dial */
	emu_get_stats(e, &st);
	assert_int_equal(st.sent_ahead, 0);
	assert_int_equal(st.reordered, late);
	assert_true(late > 10);
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

/* A dial from impair_set's words, failing the test on a bad value. */
static void dial(struct impair *d, const char *const *kv)
{
	struct ll_diag diag;

	memset(d, 0, sizeof(*d));
	ll_diag_clear(&diag);
	for (; kv[0]; kv += 2)
		assert_int_equal(impair_set(d, kv[0], kv[1], &diag), 0);
}

static void test_config_build(void **state)
{
	static const char *const full[] = {
		"delay", "20ms", "jitter", "5ms", "delay-corr", "10%",
		"distribution", "pareto", "loss-gemodel", "1%,30%", "duplicate", "2%",
		"corrupt", "0.5%", "corrupt-corr", "5%", "reorder", "10%",
		"netem-rate", "10mbit", "packet-overhead", "-14", "cell-size", "48",
		"cell-overhead", "5", "rate", "50mbit", "seed", "7", NULL };
	static const char *const state4[] = { "loss-state", "2%,40%", "delay", "1ms", NULL };
	static const char *const rate_only[] = { "rate", "50mbit", NULL };
	static const char *const rate_given[] = { "rate", "8mbit", "burst", "3000",
						  "tbf-limit", "20000", NULL };
	static const char *const loss[] = { "loss", "3%", "loss-corr", "25%",
					    "reorder", "5%", "gap", "4", "delay", "1ms",
					    "limit", "77", NULL };
	static const char *const normal[] = { "delay", "10ms", "jitter", "1ms",
					      "distribution", "normal", NULL };
	static const char *const bad[] = { "jitter", "5ms", NULL };
	static const char *const slot[] = { "delay", "1ms", "slot", "1ms,2ms", "ecn", "on",
					    "loss", "1%", "dst", "10.0.0.0/8", NULL };
	static const char *const ecn[] = { "loss", "1%", "ecn", "on", NULL };
	static struct emu_dist dist;
	struct emu_config c;
	struct ll_err err = { 0 };
	struct impair d;
	struct emu *e;
	unsigned hz = hostinfo_kernel_hz();
	uint32_t burst50 = 6250000 / hz > 6250 ? 6250000 / hz : 6250;

	(void)state;
	dial(&d, full);
	assert_int_equal(emu_config_build(&c, &d, 99, &dist, &err), 0);
	assert_int_equal(c.delay, 20 * MS);
	assert_int_equal(c.jitter, 5 * MS);
	assert_int_equal(c.delay_corr, units_percent_to_prob(10));
	assert_ptr_equal(c.dist, &dist);
	assert_true(dist.n > 1000);             /* iproute2's pareto.dist */
	assert_int_equal(c.loss_model, EMU_LOSS_GE);
	assert_int_equal(c.ge_p, units_percent_to_prob(1));
	assert_int_equal(c.ge_r, units_percent_to_prob(30));
	assert_int_equal(c.ge_1h, UINT32_MAX);  /* tc default 1-h = 100% */
	assert_int_equal(c.ge_1k, 0);
	assert_int_equal(c.duplicate, units_percent_to_prob(2));
	assert_int_equal(c.corrupt, units_percent_to_prob(0.5));
	assert_int_equal(c.corrupt_corr, units_percent_to_prob(5));
	assert_int_equal(c.reorder, units_percent_to_prob(10));
	assert_int_equal(c.gap, 1);             /* tc: reorder without gap */
	assert_int_equal(c.rate, 1250000);      /* netem-rate, bytes/s */
	assert_int_equal(c.overhead, -14);
	assert_int_equal(c.cell_size, 48);
	assert_int_equal(c.cell_overhead, 5);
	assert_int_equal(c.rate_backlog_ns, 0); /* netem: no time bound */
	assert_int_equal(c.seed, 7);
	assert_int_equal(c.tbf_rate, 6250000);
	assert_int_equal(c.tbf_burst, burst50);
	assert_int_equal(c.tbf_limit, 0);       /* netem child replaces tbf's bfifo */
	assert_int_equal(c.limit, 1000);        /* 50mbit x 25 ms is below 1000 */
	e = mk(&c);
	emu_free(e);

	/* 4-state defaults: p31 = 1-p13 unless given, p32 0, p23 100%, p14 0 */
	dial(&d, state4);
	assert_int_equal(emu_config_build(&c, &d, 99, NULL, &err), 0);
	assert_int_equal(c.loss_model, EMU_LOSS_4STATE);
	assert_int_equal(c.p13, units_percent_to_prob(2));
	assert_int_equal(c.p31, units_percent_to_prob(40));
	assert_int_equal(c.p32, 0);
	assert_int_equal(c.p23, UINT32_MAX);
	assert_int_equal(c.p14, 0);
	assert_int_equal(c.seed, 99);           /* the fallback */
	assert_null(c.dist);

	/* rate only: tbf's bucket and byte queue (rate x 50 ms + burst) */
	dial(&d, rate_only);
	assert_int_equal(emu_config_build(&c, &d, 1, NULL, &err), 0);
	assert_int_equal(c.tbf_rate, 6250000);
	assert_int_equal(c.tbf_burst, burst50);
	assert_int_equal(c.tbf_limit, 312500 + burst50);
	assert_int_equal(c.limit, (312500 + burst50) / 64);  /* bytes decide */
	assert_int_equal(c.rate, 0);
	dial(&d, rate_given);
	assert_int_equal(emu_config_build(&c, &d, 1, NULL, &err), 0);
	assert_int_equal(c.tbf_rate, 1000000);
	assert_int_equal(c.tbf_burst, 3000);
	assert_int_equal(c.tbf_limit, 20000);

	dial(&d, loss);
	assert_int_equal(emu_config_build(&c, &d, 1, NULL, &err), 0);
	assert_int_equal(c.loss_model, EMU_LOSS_RANDOM);
	assert_int_equal(c.loss, units_percent_to_prob(3));
	assert_int_equal(c.loss_corr, units_percent_to_prob(25));
	assert_int_equal(c.gap, 4);
	assert_int_equal(c.limit, 77);
	assert_int_equal(c.tbf_rate, 0);

	/* normal: a table (file or computed) with a unit sigma */
	dial(&d, normal);
	memset(&dist, 0, sizeof(dist));
	assert_int_equal(emu_config_build(&c, &d, 1, &dist, &err), 0);
	assert_ptr_equal(c.dist, &dist);
	assert_true(dist.n >= 4096);
	assert_int_equal(emu_config_build(&c, &d, 1, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "distribution"));

	/* invalid dial: impair_validate's message */
	dial(&d, bad);
	assert_int_equal(emu_config_build(&c, &d, 1, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "needs a delay (--delay > 0)"));
	/* fields the model lacks: all named in one message */
	dial(&d, slot);
	assert_int_equal(emu_config_build(&c, &d, 1, NULL, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "slot, dst:"));
	dial(&d, ecn);
	assert_int_equal(emu_config_build(&c, &d, 1, NULL, &err), 0);
	assert_true(c.ecn);
	/* a FILE table and a missing one */
	assert_int_equal(emu_dist_find("/nonexistent/x.dist", &dist, &err), -ENOENT);
	assert_int_equal(emu_dist_find("nosuchtable", &dist, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "nosuchtable.dist"));
}

/* 50mbit bucket of 25000 bytes (50mbit / HZ 250) */
#define TB_RATE 6250000ULL
#define TB_BURST 25000u

static void test_tbf_burst_then_rate(void **state)
{
	struct emu_config c = { .tbf_rate = TB_RATE, .tbf_burst = TB_BURST, .limit = 100,
				.seed = 1 };
	struct emu *e = mk(&c);
	int64_t t, want;
	int i, n = 0;

	(void)state;
	for (i = 0; i < 40; i++)
		assert_int_equal(emu_enqueue(e, 0, 1514, e, NULL), 0);
	/* the full bucket lets 16 frames (24224 bytes) go back to back at 0 */
	while (emu_dequeue(e, 0, NULL))
		n++;
	assert_int_equal(n, 16);
	/* the 17th needs 1514 - 776 = 738 more bytes: 118.08 us */
	assert_int_equal(emu_next_time(e), 118080);
	assert_null(emu_dequeue(e, 118079, NULL));
	assert_non_null(emu_dequeue(e, 118080, NULL));
	assert_null(emu_dequeue(e, 118080, NULL));
	/* then one frame every 242.24 us */
	assert_int_equal(emu_next_time(e), 118080 + 242240);

	/* a late dequeue is made up: 1 ms late, the 4 frames due by then
	 * leave at once and the next keeps the on-time schedule */
	t = 118080 + 242240;
	want = t + 4 * 242240;
	n = 0;
	while (emu_dequeue(e, t + MS, NULL))
		n++;
	assert_int_equal(n, 5);                 /* due at t, +1, +2, +3, +4 x 242.24 us */
	assert_int_equal(emu_next_time(e), want + 242240);

	/* an idle second fills the bucket to 25000 bytes, no more */
	while (emu_drain(e, NULL))
		;
	for (i = 0; i < 40; i++)
		assert_int_equal(emu_enqueue(e, 2000 * MS, 1514, e, NULL), 0);
	n = 0;
	while (emu_dequeue(e, 2000 * MS, NULL))
		n++;
	assert_int_equal(n, 16);
	while (emu_drain(e, NULL))
		;
	emu_free(e);
}

/* Frames offered above the rate, dequeued by a timer that wakes up late by
 * 0..2 ms (less than the 4 ms bucket): the output is the rate, exactly. */
static void test_tbf_long_run_rate(void **state)
{
	struct emu_config c = { .tbf_rate = TB_RATE, .tbf_burst = TB_BURST,
				.limit = 100000, .seed = 3 };
	struct emu *e = mk(&c);
	struct emu_stats st;
	int64_t now = 0, next_arrival = 0, end = 20000 * MS, first_block = -1;
	uint64_t out = 0, out_after = 0;
	uint32_t len;

	(void)state;
	while (now < end) {
		int64_t wake;

		/* 55 Mbit/s of 1514-byte frames: one every 220.2 us */
		while (next_arrival <= now) {
			assert_int_equal(emu_enqueue(e, next_arrival, 1514, e, NULL), 0);
			next_arrival += 220218;
		}
		while (emu_dequeue(e, now, &len)) {
			out += len;
			if (first_block >= 0)
				out_after += len;
		}
		if (first_block < 0)
			first_block = now;
		wake = emu_next_time(e);
		if (wake > next_arrival)
			wake = next_arrival;
		now = wake + (int64_t)(emu_rand_u32(e) % (2 * MS));   /* late */
	}
	emu_get_stats(e, &st);
	assert_true(st.out_pkts > 70000);
	/* after the first (bucket) burst, bytes out / time = rate +- 0.1 % */
	{
		double rate = (double)out_after * 1e9 / (double)(now - first_block);

		print_message("tbf long run: %.1f B/s of %llu (%.4f %%)\n", rate,
			      (unsigned long long)TB_RATE, 100 * rate / (double)TB_RATE);
		assert_true(fabs(rate / (double)TB_RATE - 1) < 0.001);
	}
	assert_int_equal(st.rate_drops, 0);
	while (emu_drain(e, NULL))
		;
	emu_free(e);
}

static void test_tbf_limit_gso_delay(void **state)
{
	struct emu_config c = { .tbf_rate = TB_RATE, .tbf_burst = TB_BURST,
				.tbf_limit = 10000, .seed = 1 };
	struct emu *e = mk(&c);
	struct emu_stats st;
	int i, ok = 0;

	(void)state;
	/* tbf's bfifo: backlog + len <= 10000 bytes: 6 frames, 4 dropped */
	for (i = 0; i < 10; i++)
		ok += emu_enqueue(e, 0, 1514, e, NULL) == 0;
	emu_get_stats(e, &st);
	assert_int_equal(ok, 6);
	assert_int_equal(st.rate_drops, 4);
	assert_int_equal(st.limit_drops, 0);
	/* the bucket sends them; the queue takes new frames again */
	for (i = 0; i < 6; i++)
		assert_non_null(emu_dequeue(e, 0, NULL));
	assert_int_equal(emu_enqueue(e, 0, 1514, e, NULL), 0);
	while (emu_drain(e, NULL))
		;
	emu_free(e);

	/* a 64000-byte GSO super-packet against a 25000-byte bucket leaves as
	 * its first segment would and borrows the rest: the next frame waits
	 * for (64000 + 1514 - 25000) / rate = 6.48224 ms, as after the kernel's
	 * last segment */
	c.tbf_limit = 0;
	e = mk(&c);
	assert_int_equal(emu_enqueue(e, 0, 64000, e, NULL), 0);
	assert_int_equal(emu_enqueue(e, 0, 1514, e, NULL), 0);
	assert_non_null(emu_dequeue(e, 0, NULL));
	assert_null(emu_dequeue(e, 0, NULL));
	assert_int_equal(emu_next_time(e), 6482240);
	assert_null(emu_dequeue(e, 6482239, NULL));
	assert_non_null(emu_dequeue(e, 6482240, NULL));
	/* a second super-packet on an empty bucket waits for one frame */
	assert_int_equal(emu_enqueue(e, 6482240, 30000, e, NULL), 0);
	assert_int_equal(emu_next_time(e), 6482240 + 242240);
	assert_non_null(emu_dequeue(e, 6482240 + 242240, NULL));
	emu_free(e);

	/* netem then tbf: a 10 ms delay first, then the bucket's schedule */
	c.delay = 10 * MS;
	e = mk(&c);
	for (i = 0; i < 17; i++)
		assert_int_equal(emu_enqueue(e, 0, 1514, e, NULL), 0);
	assert_int_equal(emu_next_time(e), 10 * MS);
	assert_null(emu_dequeue(e, 10 * MS - 1, NULL));
	for (i = 0; i < 16; i++)
		assert_non_null(emu_dequeue(e, 10 * MS, NULL));
	assert_null(emu_dequeue(e, 10 * MS, NULL));
	assert_int_equal(emu_next_time(e), 10 * MS + 118080);
	while (emu_drain(e, NULL))
		;
	emu_free(e);
}

/* ones' complement sum of an IPv4 header: 0xffff when the checksum holds */
static unsigned ip4_sum(const unsigned char *ip)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static void mk_ip4(unsigned char *f, unsigned tos)
{
	static const unsigned char hdr[34] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00,
		0x45, 0, 0x05, 0xdc, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0,
		10, 198, 0, 1, 10, 198, 0, 2 };
	uint32_t sum;

	memcpy(f, hdr, sizeof(hdr));
	f[15] = (unsigned char)tos;
	sum = ip4_sum(f + 14);
	f[24] = (unsigned char)(~sum >> 8);
	f[25] = (unsigned char)~sum;
	assert_int_equal(ip4_sum(f + 14), 0xffff);
}

static void test_ecn(void **state)
{
	struct emu_config c = { .loss = units_percent_to_prob(20), .ecn = true, .seed = 4 };
	struct emu *e = mk(&c);
	struct emu_fate f;
	struct emu_stats st;
	unsigned char fr[80];
	unsigned tos;
	int i, marked = 0;

	(void)state;
	/* ECN-capable frames: the loss model's picks are marked, none lost */
	for (i = 0; i < 10000; i++) {
		emu_fate_ect(e, 1000, false, true, &f);
		assert_false(f.lost);
		marked += f.mark_ce;
	}
	/* not-ECT frames: dropped as before */
	for (i = 0; i < 10000; i++) {
		emu_fate_ect(e, 1000, false, false, &f);
		assert_false(f.mark_ce);
	}
	emu_get_stats(e, &st);
	assert_int_equal(st.ecn_marked, (uint64_t)marked);
	assert_binomial(st.ecn_marked, 10000, 0.2);
	assert_binomial(st.lost, 10000, 0.2);
	emu_free(e);

	/* IPv4: ECT(1), ECT(0) -> CE with a valid header checksum; CE stays;
	 * not-ECT is left alone */
	for (tos = 0; tos < 256; tos++) {
		mk_ip4(fr, tos);
		assert_int_equal(emu_frame_ecn(fr, 60), (int)(tos & 3));
		assert_int_equal(emu_frame_set_ce(fr, 60), (tos & 3) != 0);
		assert_int_equal(fr[15], (tos & 3) ? (tos | 3) : tos);
		assert_int_equal(ip4_sum(fr + 14), 0xffff);
	}
	/* one VLAN tag */
	mk_ip4(fr + 4, 0x02);
	memmove(fr, fr + 4, 12);
	fr[12] = 0x81; fr[13] = 0x00; fr[14] = 0; fr[15] = 7;
	assert_int_equal(emu_frame_ecn(fr, 64), 2);
	assert_true(emu_frame_set_ce(fr, 64));
	assert_int_equal(fr[19] & 3, 3);
	assert_int_equal(ip4_sum(fr + 18), 0xffff);
	/* IPv6: traffic class ECN bits are byte 1 bits 4-5 */
	memset(fr, 0, sizeof(fr));
	fr[12] = 0x86; fr[13] = 0xdd; fr[14] = 0x6a; fr[15] = 0x1c;   /* TC 0xa1: ECT(1) */
	assert_int_equal(emu_frame_ecn(fr, 54), 1);
	assert_true(emu_frame_set_ce(fr, 54));
	assert_int_equal(fr[14], 0x6a);
	assert_int_equal(fr[15], 0x3c);
	fr[15] = 0x0c;                                          /* not-ECT */
	assert_false(emu_frame_set_ce(fr, 54));
	assert_int_equal(fr[15], 0x0c);
	/* ARP, short frames */
	fr[12] = 0x08; fr[13] = 0x06;
	assert_int_equal(emu_frame_ecn(fr, 60), -1);
	assert_false(emu_frame_set_ce(fr, 60));
	assert_int_equal(emu_frame_ecn(fr, 10), -1);
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
		cmocka_unit_test(test_config_build),
		cmocka_unit_test(test_tbf_burst_then_rate),
		cmocka_unit_test(test_tbf_long_run_rate),
		cmocka_unit_test(test_tbf_limit_gso_delay),
		cmocka_unit_test(test_ecn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
