/* SPDX-License-Identifier: MIT */
/* test_enghook.c - the endpoint engine's choice words, the fields it
 * refuses by name, and its records (enghook.h) without a rule or process. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "linklab/model/impair.h"
#include "linklab/peer/enghook.h"

static void dial(struct impair *d, const char *const *kv)
{
	struct ll_diag dg;

	memset(d, 0, sizeof(*d));
	ll_diag_clear(&dg);
	for (; kv[0]; kv += 2)
		assert_int_equal(impair_set(d, kv[0], kv[1], &dg), 0);
}

static void test_modes(void **state)
{
	(void)state;
	assert_int_equal(enghook_mode_parse("auto"), ENGHOOK_AUTO);
	assert_int_equal(enghook_mode_parse("kernel"), ENGHOOK_KERNEL);
	assert_int_equal(enghook_mode_parse("user"), ENGHOOK_USER);
	assert_int_equal(enghook_mode_parse("User"), -1);
	assert_int_equal(enghook_mode_parse(""), -1);
	assert_int_equal(enghook_mode_parse(NULL), -1);
	assert_string_equal(enghook_mode_name(ENGHOOK_USER), "user");
	assert_string_equal(enghook_mode_name(ENGHOOK_KERNEL), "kernel");
	assert_string_equal(enghook_mode_name(ENGHOOK_AUTO), "auto");
}

static void test_check(void **state)
{
	static const char *const ok[] = { "delay", "20ms", "jitter", "5ms", "loss", "1%",
		"duplicate", "2%", "rate", "50mbit", "dst", "10.0.0.0/8", "dport", "80", NULL };
	static const char *const bad[] = { "delay", "20ms", "slot", "10ms", "ecn", "on",
		"loss", "1%", "direction", "ingress", NULL };
	static const char *const v6[] = { "delay", "20ms", "dst", "fd00::/64", NULL };
	struct ll_err e = { 0 };
	struct impair d;

	(void)state;
	dial(&d, ok);
	assert_int_equal(enghook_check(&d, "veth0", &e), 0);
	dial(&d, bad);
	assert_int_equal(enghook_check(&d, "veth0", &e), -EOPNOTSUPP);
	/* every field at once, by name, and nothing changed */
	assert_non_null(strstr(e.msg, "veth0: "));
	assert_non_null(strstr(e.msg, "slot"));
	assert_non_null(strstr(e.msg, "ecn"));
	assert_non_null(strstr(e.msg, "direction ingress"));
	assert_non_null(strstr(e.msg, "nothing changed"));
	/* an IPv6 dst goes to the ip6tables rule */
	dial(&d, v6);
	assert_int_equal(enghook_check(&d, "veth0", &e), 0);
}

/* No record: no hook; a stop is a no-op; stop_all of an empty dir is 0. */
static void test_records_absent(void **state)
{
	char dir[] = "/tmp/llenghookXXXXXX";
	struct enghook_info h;
	struct ll_err e = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("LINKLAB_RUN_DIR", dir, 1);
	assert_int_equal(enghook_get(1, 2, &h), -ENOENT);
	assert_int_equal(enghook_stop(1, 2, &e), 0);
	assert_int_equal(enghook_stop_all(1, &e), 0);
	/* a damaged record reads as no hook */
	{
		char p[128];
		FILE *f;

		snprintf(p, sizeof(p), "%s/engine-1-2.hook", dir);
		f = fopen(p, "w");
		assert_non_null(f);
		fputs("{ not json", f);
		fclose(f);
		assert_int_equal(enghook_get(1, 2, &h), -ENOENT);
		unlink(p);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_records_absent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
