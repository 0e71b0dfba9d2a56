/* SPDX-License-Identifier: MIT */
/* test_wake.c - stepwise wake-up times for timed releases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "linklab/base/wake.h"

#define MS 1000000LL

/* a 50 ms deadline is reached in steps of 3/4 of what is left, each at
 * least down to a last step of <= 1 ms that ends the lead early */
static void test_steps(void **state)
{
	struct wake_lead l = { .ns = 50000 };
	int64_t due = 1000 * MS, now = due - 50 * MS, at;
	bool last = true;
	int steps = 0;

	(void)state;
	for (;;) {
		at = wake_at(&l, due, now, &last);
		assert_true(at > now && at < due);
		steps++;
		if (last)
			break;
		assert_true(due - at >= WAKE_LAST_NS);
		assert_true(due - at >= (due - now) / 4);
		now = at;
	}
	assert_int_equal(at, due - l.ns);
	assert_true(due - now <= WAKE_LAST_NS + l.ns);
	assert_in_range(steps, 3, 8);
	/* within the lead: act now, not a last step */
	at = wake_at(&l, due, due - 20000, &last);
	assert_int_equal(at, due - 20000);
	assert_false(last);
	/* past due: now */
	assert_int_equal(wake_at(&l, due, due + 5, &last), due + 5);
	/* nothing queued */
	assert_true(wake_at(&l, INT64_MAX, now, &last) == INT64_MAX);
	assert_false(last);
}

static void test_lead(void **state)
{
	struct wake_lead l = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 200; i++)
		wake_lead_track(&l, 80000);
	assert_in_range(l.ns, 79000, 80000);
	wake_lead_track(&l, 5 * MS);        /* a preemption: ignored */
	assert_in_range(l.ns, 79000, 80000);
	for (i = 0; i < 200; i++)
		wake_lead_track(&l, -1000);         /* early counts as 0 */
	assert_in_range(l.ns, 0, 1000);
	for (i = 0; i < 200; i++)
		wake_lead_track(&l, 900000);
	assert_int_equal(l.ns, WAKE_LEAD_MAX_NS);
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_lead),
	};

	return cmocka_run_group_tests(t, NULL, NULL);
}
