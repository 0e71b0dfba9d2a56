/* SPDX-License-Identifier: MIT */
/* test_tccmd.c - tc command lines for a plan, shell quoting. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "linklab/impair.h"
#include "linklab/tccmd.h"

static void plan_of(const char *const *kv, struct impair_plan *p)
{
	struct impair d = { 0 };
	struct ll_diag dg;

	ll_diag_clear(&dg);
	for (; kv[0]; kv += 2)
		assert_int_equal(impair_set(&d, kv[0], kv[1], &dg), 0);
	assert_int_equal(impair_plan(&d, 1500, 250, p, &dg), 0);
}

static void test_quote(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(tccmd_quote("veth0", out, sizeof(out)), 0);
	assert_string_equal(out, "'veth0'");
	assert_int_equal(tccmd_quote("a;b", out, sizeof(out)), 0);
	assert_string_equal(out, "'a;b'");
	assert_int_equal(tccmd_quote("x$(id)", out, sizeof(out)), 0);
	assert_string_equal(out, "'x$(id)'");
	assert_int_equal(tccmd_quote("it's", out, sizeof(out)), 0);
	assert_string_equal(out, "'it'\\''s'");
	assert_int_equal(tccmd_quote("", out, sizeof(out)), 0);
	assert_string_equal(out, "''");
	assert_int_equal(tccmd_quote("abcdef", out, 8), -ENOSPC);
	assert_int_equal(tccmd_quote("abcdef", out, 9), 0);
}

static void test_apply_lines(void **state)
{
	static const char *const tbf[] = { "rate", "50mbit", NULL };
	static const char *const both[] = { "rate", "10mbit", "delay", "100ms",
		"jitter", "10ms", "delay-corr", "25%", "loss", "1%", NULL };
	static const char *const net[] = { "delay", "10ms", "reorder", "25%",
		"reorder-corr", "50%", "gap", "5", "duplicate", "2%",
		"corrupt", "0.1%", "corrupt-corr", "5%", "limit", "8334", NULL };
	struct impair_plan p;
	struct ll_err e = { 0 };
	char out[1024];

	(void)state;
	plan_of(tbf, &p);
	assert_int_equal(tccmd_apply("veth0", &p, out, sizeof(out), &e), 0);
	assert_string_equal(out,
		"tc qdisc replace dev 'veth0' root handle 1: tbf rate 50mbit burst 25000b limit 337500b\n");
	plan_of(both, &p);
	assert_int_equal(tccmd_apply("a;b", &p, out, sizeof(out), &e), 0);
	assert_string_equal(out,
		"tc qdisc replace dev 'a;b' root handle 1: tbf rate 10mbit burst 5000b limit 67500b\n"
		"tc qdisc replace dev 'a;b' parent 1:1 handle 10: netem limit 1000 delay 100ms 10ms 25% loss 1%\n");
	plan_of(net, &p);
	assert_int_equal(tccmd_apply("eth0", &p, out, sizeof(out), &e), 0);
	assert_string_equal(out,
		"tc qdisc replace dev 'eth0' root handle 1: netem limit 8334 delay 10ms "
		"duplicate 2% corrupt 0.1% 5% reorder 25% 50% gap 5\n");
	/* errors */
	assert_int_equal(tccmd_apply("eth0", &p, out, 20, &e), -ENOSPC);
	assert_non_null(strstr(e.msg, "do not fit"));
	assert_int_equal(tccmd_apply("", &p, out, sizeof(out), &e), -EINVAL);
	assert_int_equal(tccmd_apply("0123456789abcdefg", &p, out, sizeof(out), &e), -EINVAL);
	memset(&p, 0, sizeof(p));
	assert_int_equal(tccmd_apply("eth0", &p, out, sizeof(out), &e), -EINVAL);
	assert_int_equal(tccmd_clear("x'y", out, sizeof(out), &e), 0);
	assert_string_equal(out, "tc qdisc del dev 'x'\\''y' root\n");
}

/* Run the generated tbf line with the real tc inside a private netns and read
 * the kernel state back with tc -j. */
static void test_lines_run_in_netns(void **state)
{
	static const char *const tbf[] = { "rate", "50mbit", NULL };
	struct impair_plan p;
	struct ll_err e = { 0 };
	char lines[512], cmd[1024], res[4096];
	size_t n;
	FILE *f;

	(void)state;
	if (geteuid() != 0) {
		printf("skip: needs root for unshare -n\n");
		skip();
	}
	plan_of(tbf, &p);
	assert_int_equal(tccmd_apply("lo", &p, lines, sizeof(lines), &e), 0);
	lines[strlen(lines) - 1] = '\0';
	snprintf(cmd, sizeof(cmd),
		 "unshare -n sh -c \"%s && tc -j qdisc show dev lo\" 2>&1", lines);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(res, 1, sizeof(res) - 1, f);
	res[n] = '\0';
	if (pclose(f) != 0 && strstr(res, "unshare")) {
		printf("skip: unshare -n failed: %s\n", res);
		skip();
	}
	assert_non_null(strstr(res, "\"kind\":\"tbf\""));
	assert_non_null(strstr(res, "\"rate\":6250000"));
	assert_non_null(strstr(res, "\"burst\":25000"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_apply_lines),
		cmocka_unit_test(test_lines_run_in_netns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
