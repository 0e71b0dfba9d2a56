/* SPDX-License-Identifier: MIT */
/* test_verify.c - verify rows and their tolerances; the console's verify
 * child: a real process whose JSON becomes rows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <cmocka.h>

#include "linklab/console/verify_job.h"
#include "linklab/model/verify.h"

static void test_rate_row(void **state)
{
	struct verify_report rep = { 0 };
	struct verify_row *r = verify_add(&rep, "rate", "a-to-b", "bit/s");

	(void)state;
	/* 20 Mbit/s, 15000 b bucket, 10 s: ceiling 19.128 Mbit/s; the bucket
	 * may add 15000*8/(20e6*10) = 0.06 % above */
	verify_rate(r, 20000000, 15000, 10, 19.15e6);
	assert_true(r->ok);
	assert_true(r->dialled > 19.12e6 && r->dialled < 19.14e6);
	verify_rate(r, 20000000, 15000, 10, 4.8e6);       /* a broken path */
	assert_false(r->ok);
	verify_rate(r, 20000000, 15000, 10, 19.6e6);      /* more than allowed */
	assert_false(r->ok);
	assert_true(verify_all_ok(&rep) == false);
}

static void test_rate_udp_row(void **state)
{
	struct verify_report rep = { 0 };
	struct verify_row *r = verify_add(&rep, "rate", "a-to-b", "bit/s");

	(void)state;
	/* 10 Mbit/s: UDP payload ceiling 10e6 x 1448/1490 = 9.718 Mbit/s */
	verify_rate_udp(r, 10000000, 5000, 4, 0, 9.70e6);
	assert_true(r->ok);
	assert_true(r->dialled > 9.71e6 && r->dialled < 9.73e6);
	verify_rate_udp(r, 10000000, 5000, 4, 0, 8.1e6);   /* 17 % short */
	assert_false(r->ok);
	verify_rate_udp(r, 10000000, 5000, 4, 0.02, 9.35e6); /* 2 % loss */
	assert_true(r->ok);
}

static void test_fraction_row(void **state)
{
	struct verify_report rep = { 0 };
	struct verify_row *r = verify_add(&rep, "loss", "a-to-b", "fraction");

	(void)state;
	verify_fraction(r, 0.19, 190, 1000);
	assert_true(r->ok);
	verify_fraction(r, 0.10, 190, 1000);   /* 10 % dialled, 19 % seen */
	assert_false(r->ok);
	/* 2 % dialled: 176 of 6906 lost (3.3 standard deviations high) lies
	 * in the 99.9 % interval; 3 % seen over as many does not */
	verify_fraction(r, 0.02, 176, 6906);
	assert_true(r->ok);
	verify_fraction(r, 0.02, 207, 6906);
	assert_false(r->ok);
	verify_fraction(r, 0, 0, 20000);       /* none dialled, none lost */
	assert_true(r->ok);
	verify_fraction(r, 0.01, 0, 0);        /* nothing received */
	assert_false(r->ok);
	assert_false(r->measurable);
}

static void test_rtt_jitter_rows(void **state)
{
	struct verify_report rep = { 0 };
	struct verify_row *r = verify_add(&rep, "rtt", "both", "ms");

	(void)state;
	verify_rtt(r, 50.0, 50.3, 0.2, 50);    /* tol 0.5 + 0.085 + 0.2 */
	assert_true(r->ok);
	verify_rtt(r, 50.0, 100.0, 0.2, 50);   /* double delay */
	assert_false(r->ok);
	r = verify_add(&rep, "jitter", "a-to-b", "ms");
	verify_jitter(r, 5.0, 3.4);            /* 2J/3 = 3.33 */
	assert_true(r->ok);
	verify_jitter(r, 5.0, 0.2);
	assert_false(r->ok);
	r = verify_add(&rep, "corrupt", "a-to-b", "fraction");
	verify_unmeasurable(r, 0.01, "counted as loss");
	assert_false(r->ok);
	assert_non_null(strstr(r->detail, "not measurable here"));
}

static void test_job_parse(void **state)
{
	struct verify_job_result res;

	(void)state;
	assert_int_equal(verify_job_parse("{\"ok\": true, \"checks\": [{\"quantity\": \"rate\", "
		"\"direction\": \"a-to-b\", \"dialled\": 19128137, \"measured\": 19140000, "
		"\"unit\": \"bit/s\", \"error\": 11863, \"tolerance\": [-956406, 210409], "
		"\"measurable\": true, \"ok\": true, \"detail\": \"x\"}]}", &res), 0);
	assert_true(res.ok);
	assert_int_equal(res.rep.n, 1);
	assert_string_equal(res.rep.r[0].quantity, "rate");
	assert_true(res.rep.r[0].ok && res.rep.r[0].measurable);
	assert_float_equal(res.rep.r[0].tol_hi, 210409, 0.5);
	assert_int_equal(verify_job_parse("not json", &res), -22);
	assert_non_null(strstr(res.error, "no JSON"));
}

static void test_job_child(void **state)
{
	char *argv[] = { (char *)"/bin/sh", (char *)"-c",
		(char *)"echo '{\"ok\": false, \"checks\": [], \"error\": \"peer gone\"}'; "
		"echo 'linklab verify: peer gone' >&2; exit 1", NULL };
	struct verify_job *j = NULL;
	struct verify_job_result res;
	struct ll_err err = { 0 };
	int done = 0;

	(void)state;
	assert_int_equal(verify_job_start(&j, argv, &err), 0);
	for (int i = 0; i < 100 && !done; i++) {
		struct pollfd p = { .fd = verify_job_fd(j), .events = POLLIN };
		poll(&p, 1, 100);
		done = verify_job_pump(j, &res);
	}
	assert_int_equal(done, 1);
	assert_false(res.ok);
	assert_string_equal(res.error, "peer gone");
	assert_int_equal(verify_job_fd(j), -1);
	verify_job_free(j);
}

/* Two hops in series: delays add, losses combine, the lower rate binds with
 * its bucket; a field both hops hold is flagged. */
static void test_path_add(void **state)
{
	struct impair path, hop;
	uint32_t burst = 15000;
	unsigned both = 0;
	const double F = 4294967295.0;

	(void)state;
	memset(&path, 0, sizeof(path));
	memset(&hop, 0, sizeof(hop));
	path.rate = 50000000;
	path.delay = 5000000;
	path.loss = (uint32_t)(0.01 * F);
	path.jitter = 1000000;
	hop.rate = 20000000;
	hop.delay = 10000000;
	hop.loss = (uint32_t)(0.02 * F);
	hop.corrupt = (uint32_t)(0.001 * F);
	hop.duplicate = (uint32_t)(0.05 * F);
	verify_path_add(&path, &burst, &hop, 10000, &both);
	assert_int_equal(path.rate, 20000000);
	assert_int_equal(burst, 10000);
	assert_int_equal(path.delay, 15000000);
	assert_true(fabs(path.loss / F - (1 - 0.99 * 0.98)) < 1e-6);
	assert_true(fabs(path.corrupt / F - 0.001) < 1e-6);
	assert_true(fabs(path.duplicate / F - 0.05) < 1e-6);
	assert_int_equal(path.jitter, 1000000);
	assert_int_equal(both, 0);
	/* a faster hop does not bind; jitter on both is flagged */
	hop.rate = 100000000;
	hop.jitter = 2000000;
	verify_path_add(&path, &burst, &hop, 99999, &both);
	assert_int_equal(path.rate, 20000000);
	assert_int_equal(burst, 10000);
	assert_int_equal(path.jitter, 3000000);
	assert_true(both & VERIFY_BOTH_JITTER);
	assert_true(both & VERIFY_BOTH_DUPLICATE);
	assert_false(both & VERIFY_BOTH_REORDER);
	/* an empty hop changes nothing */
	struct impair before = path;
	memset(&hop, 0, sizeof(hop));
	verify_path_add(&path, &burst, &hop, 0, &both);
	assert_memory_equal(&before, &path, sizeof(path));
	/* loss 100 % stays 100 % */
	hop.loss = UINT32_MAX;
	verify_path_add(&path, &burst, &hop, 0, &both);
	assert_int_equal(path.loss, UINT32_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_row),
		cmocka_unit_test(test_path_add),
		cmocka_unit_test(test_rate_udp_row),
		cmocka_unit_test(test_fraction_row),
		cmocka_unit_test(test_rtt_jitter_rows),
		cmocka_unit_test(test_job_parse),
		cmocka_unit_test(test_job_child),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
