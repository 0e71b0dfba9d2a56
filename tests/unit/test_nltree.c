/* SPDX-License-Identifier: MIT */
/* test_nltree.c - which parts of a dumped tc tree linklab can re-create,
 * and the comparison that ignores counters (htb's direct_pkts and the
 * dumped version 0x30011, u32 counters and the kernel's NOT_IN_HW flag). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>

#include "linklab/netlink/nltree.h"

static void put(struct nltree_obj *o, int type, const void *d, size_t len)
{
	unsigned char *p = o->opts + o->optlen;
	uint16_t l = (uint16_t)(4 + len), t = (uint16_t)type;

	memcpy(p, &l, 2);
	memcpy(p + 2, &t, 2);
	memcpy(p + 4, d, len);
	o->optlen = (uint16_t)(o->optlen + ((4 + len + 3) & ~3u));
}

static struct nltree_obj *add(struct nltree *t, char type, const char *kind,
			      uint32_t parent, uint32_t handle)
{
	struct nltree_obj *o = &t->o[t->n++];

	memset(o, 0, sizeof(*o));
	o->type = type;
	snprintf(o->kind, sizeof(o->kind), "%s", kind);
	o->parent = parent;
	o->handle = handle;
	return o;
}

static void htb_tree(struct nltree *t, uint32_t direct, uint32_t flags)
{
	struct tc_htb_glob g = { 0x30011, 10, 0x20, 0, direct };
	struct tc_u32_sel sel = { 0 };
	struct nltree_obj *o;
	uint32_t pcnt[3] = { 5, 6, 7 };

	memset(t, 0, sizeof(*t));
	o = add(t, NLT_QDISC, "htb", TC_H_ROOT, 0x10000);
	put(o, TCA_HTB_INIT, &g, sizeof(g));
	o = add(t, NLT_FILTER, "u32", 0x10000, 0x80000800);
	o->info = (1u << 16) | 0x0008;
	put(o, TCA_U32_SEL, &sel, sizeof(sel));
	put(o, TCA_U32_FLAGS, &flags, 4);
	put(o, TCA_U32_PCNT, pcnt, sizeof(pcnt));
}

static void test_check(void **state)
{
	struct nltree *t = calloc(1, sizeof(*t));
	struct ll_err e = { 0 };

	(void)state;
	htb_tree(t, 0, TCA_CLS_FLAGS_NOT_IN_HW);
	assert_int_equal(nltree_check(t, &e), 0);
	add(t, NLT_FILTER, "bpf", 0xfffffff3u, 1)->info = 49152u << 16;
	assert_int_equal(nltree_check(t, &e), -ENOTSUP);
	assert_non_null(strstr(e.msg, "filter bpf parent ffff:fff3 prio 49152"));
	t->n--;
	add(t, NLT_QDISC, "cake", 0x10001, 0x200000);
	assert_int_equal(nltree_check(t, &e), -ENOTSUP);
	assert_string_equal(e.msg, "qdisc cake 20: parent 1:1");
	t->n--;
	snprintf(t->bad, sizeof(t->bad), "qdisc htb 1: root has a size table (stab)");
	assert_int_equal(nltree_check(t, &e), -ENOTSUP);
	assert_non_null(strstr(e.msg, "stab"));
	free(t);
}

static void test_diff(void **state)
{
	struct nltree *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char why[200];

	(void)state;
	htb_tree(a, 0, TCA_CLS_FLAGS_NOT_IN_HW);
	htb_tree(b, 1234, TCA_CLS_FLAGS_NOT_IN_HW);
	/* direct_pkts and u32 packet counters are counters */
	b->o[1].opts[b->o[1].optlen - 4] = 99;
	assert_int_equal(nltree_diff(a, b, why, sizeof(why)), 0);
	/* a different default class is not */
	b->o[0].opts[4 + 8] = 0x30;
	assert_int_equal(nltree_diff(a, b, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "qdisc htb 1: root differs"));
	b->o[0].opts[4 + 8] = 0x20;
	b->n = 1;
	assert_int_equal(nltree_diff(a, b, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "filter u32 parent 1: prio 1 handle 80000800 is missing"));
	assert_int_equal(nltree_diff(b, a, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "in addition"));
	assert_null(nltree_root(b) == NULL ? (void *)1 : NULL);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_diff),
	};
	return cmocka_run_group_tests_name("nltree", tests, NULL, NULL);
}
