/* SPDX-License-Identifier: MIT */
/* test_peer_lock.c - owner records: text round trip, the flock that keeps a
 * second holder off, stale records after the holder let go without
 * removing (as after kill -9), in a private LINKLAB_RUN_DIR. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "linklab/peer/peer_lock.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ll-lock-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	setenv("LINKLAB_RUN_DIR", dir, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_round_trip(void **state)
{
	struct peer_lock_owner o, p;
	char text[PEER_LOCK_TEXT], who[200];

	(void)state;
	peer_lock_self(&o);
	o.ifindex = 7;
	peer_lock_owner_add(&o, "veth-a");
	peer_lock_owner_add(&o, "veth-a");        /* no duplicate */
	peer_lock_owner_add(&o, "eth0");
	assert_int_equal(peer_lock_format(&o, text, sizeof(text)), 0);
	assert_int_equal(peer_lock_parse(text, &p), 0);
	assert_int_equal(p.pid, (long)getpid());
	assert_int_equal(p.uid, o.uid);
	assert_string_equal(p.user, o.user);
	assert_string_equal(p.host, o.host);
	assert_true(p.since == o.since);
	assert_int_equal(p.ifindex, 7);
	assert_int_equal(p.ndev, 2);
	assert_string_equal(p.dev[0], "veth-a");
	assert_string_equal(p.dev[1], "eth0");
	peer_lock_describe(&p, who, sizeof(who));
	snprintf(text, sizeof(text), "console pid %ld (user %s, uid %u, on host %s) since ",
		 (long)getpid(), o.user, o.uid, o.host);
	assert_non_null(strstr(who, text));
	/* no pid: not a record; hostile text is reduced, bad devs dropped */
	assert_int_equal(peer_lock_parse("user x\n", &p), -EINVAL);
	assert_int_equal(peer_lock_parse("pid 12\nuser r\033[2Jt\ndev a;b\ndev ok0\n", &p), 0);
	assert_string_equal(p.user, "r2Jt");
	assert_int_equal(p.ndev, 1);
	assert_string_equal(p.dev[0], "ok0");
	/* too small a buffer */
	assert_int_equal(peer_lock_format(&o, text, 20), -ENOSPC);
}

static void test_take_busy_stale(void **state)
{
	struct peer_lock *l = NULL, *l2 = NULL;
	struct peer_lock_owner prev, st[4];
	struct ll_err e = { 0 };
	bool stale = true;
	int n = -1;

	(void)state;
	assert_int_equal(peer_lock_take(4242, 3, "veth-a", &l, &prev, &stale, &e), 0);
	assert_non_null(l);
	assert_false(stale);
	assert_string_equal(peer_lock_dev(l), "veth-a");
	/* held: a second take (another open file) is refused, naming us */
	assert_int_equal(peer_lock_take(4242, 3, "veth-a", &l2, &prev, &stale, &e), -EBUSY);
	assert_null(l2);
	assert_int_equal(prev.pid, (long)getpid());
	assert_non_null(strstr(e.msg, "veth-a is driven by console pid"));
	/* a held record is not stale */
	assert_int_equal(peer_lock_stale(4242, st, 4, &n, &e), 0);
	assert_int_equal(n, 0);
	/* let go without removing (what the kernel does at kill -9) */
	peer_lock_release(l, false);
	assert_int_equal(peer_lock_stale(4242, st, 4, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(st[0].ifindex, 3);
	assert_string_equal(st[0].dev[0], "veth-a");
	/* other namespaces do not see it */
	assert_int_equal(peer_lock_stale(4243, st, 4, &n, &e), 0);
	assert_int_equal(n, 0);
	/* the next holder finds the dead owner's record */
	assert_int_equal(peer_lock_take(4242, 3, "veth-a", &l, &prev, &stale, &e), 0);
	assert_true(stale);
	assert_int_equal(prev.pid, (long)getpid());
	peer_lock_release(l, true);
	assert_int_equal(peer_lock_stale(4242, st, 4, &n, &e), 0);
	assert_int_equal(n, 0);
	/* a stale record can be dropped */
	assert_int_equal(peer_lock_take(4242, 5, "veth-x", &l, &prev, &stale, &e), 0);
	peer_lock_drop_stale(4242, 5);      /* held: kept */
	peer_lock_release(l, false);
	assert_int_equal(peer_lock_stale(4242, st, 4, &n, &e), 0);
	assert_int_equal(n, 1);
	peer_lock_drop_stale(4242, 5);
	assert_int_equal(peer_lock_stale(4242, st, 4, &n, &e), 0);
	assert_int_equal(n, 0);
	peer_lock_release(NULL, true);      /* no-op */
}

/* peer_lock_holder: none, this process (not a holder to refuse), another
 * live process (its record), a dead one (stale: none). */
static void test_holder(void **state)
{
	struct peer_lock *l = NULL;
	struct peer_lock_owner prev, who;
	struct ll_err e = { 0 };
	bool stale;
	int up[2], down[2], st;
	char c;
	pid_t pid;

	(void)state;
	assert_int_equal(peer_lock_holder(4244, 7, &who), 0);
	assert_int_equal(peer_lock_take(4244, 7, "veth-h", &l, &prev, &stale, &e), 0);
	assert_int_equal(peer_lock_holder(4244, 7, &who), 0);
	assert_int_equal(who.pid, (long)getpid());
	peer_lock_release(l, true);
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct peer_lock *cl = NULL;

		if (peer_lock_take(4244, 7, "veth-h", &cl, &prev, &stale, &e) != 0)
			_exit(1);
		if (write(up[1], "x", 1) != 1 || read(down[0], &c, 1) < 0)
			_exit(1);
		_exit(0);       /* dies holding it: the record stays, stale */
	}
	assert_int_equal(read(up[0], &c, 1), 1);
	assert_int_equal(peer_lock_holder(4244, 7, &who), 1);
	assert_int_equal(who.pid, (long)pid);
	assert_string_equal(who.dev[0], "veth-h");
	assert_int_equal(write(down[1], "y", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(peer_lock_holder(4244, 7, &who), 0);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	peer_lock_drop_stale(4244, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_take_busy_stale),
		cmocka_unit_test(test_holder),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
