/* SPDX-License-Identifier: MIT */
/* test_bridgectl.c - live control of a running bridge: the set request's
 * parsing and validation (every problem, nothing applied), emu_reconfigure
 * (queued frames, their order and times, counters kept), and the control
 * socket server driven over a real Unix socket with a fake engine (both
 * directions or neither, lease: one at a time, restore when its connection
 * closes), and the kernel engine's counters read from real veths. The
 * socket lives in a private LINKLAB_RUN_DIR. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture.h"

#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "linklab/bridge/bridgectl.h"
#include "linklab/bridge/emu.h"
#include "linklab/peer/peer.h"

#define MS 1000000LL

static char rundir[64];

static void set_dial(struct impair *d, const char *name, const char *val)
{
	struct ll_diag diag;

	ll_diag_clear(&diag);
	assert_int_equal(impair_set(d, name, val, &diag), 0);
}

static bool diag_has(const struct ll_diag *d, const char *a, const char *b)
{
	int i;

	for (i = 0; i < d->n; i++)
		if (d->e[i].level == LL_DIAG_ERROR && strstr(d->e[i].text, a) &&
		    (!b || strstr(d->e[i].text, b)))
			return true;
	return false;
}

/* --- parsing and validation ------------------------------------------------ */

static void test_parse_set_table(void **state)
{
	static const struct {
		const char *req;
		int rc;
		unsigned dirs;          /* on success */
		int nerrors;            /* on failure, at least */
		const char *e1a, *e1b;  /* texts an error must hold */
		const char *e2a, *e2b;
	} t[] = {
		{ "{\"op\":\"set\",\"a_to_b\":{\"delay\":\"40ms\"}}", 0, 1, 0, NULL, NULL, NULL, NULL },
		{ "{\"op\":\"set\",\"b_to_a\":{\"loss\":\"1%\",\"gap\":5,\"reorder\":\"10%\","
		  "\"delay\":\"5ms\"}}", 0, 2, 0, NULL, NULL, NULL, NULL },
		{ "{\"op\":\"set\",\"a_to_b\":{},\"b_to_a\":{\"rate\":\"10mbit\"}}", 0, 3, 0,
		  NULL, NULL, NULL, NULL },
		{ "{\"op\":\"set\",\"a_to_b\":{\"dealy\":\"40ms\"}}", -EINVAL, 0, 1,
		  "a_to_b: ", "dealy", NULL, NULL },
		{ "{\"op\":\"set\",\"a_to_b\":{\"loss\":\"150%\"}}", -EINVAL, 0, 1,
		  "a_to_b: loss", "0% .. 100%", NULL, NULL },
		{ "{\"op\":\"set\",\"a_to_b\":{\"loss\":\"150%\"},\"b_to_a\":{\"delay\":\"-5ms\"}}",
		  -EINVAL, 0, 2, "a_to_b: loss", "150%", "b_to_a: delay", "-5ms" },
		{ "{\"op\":\"set\",\"a_to_b\":{\"loss\":\"150%\",\"rate\":\"fast\"}}", -EINVAL, 0, 2,
		  "a_to_b: loss", "150%", "a_to_b: rate", "fast" },
		{ "{\"op\":\"set\",\"b_to_a\":{\"jitter\":\"5ms\"}}", -EINVAL, 0, 1,
		  "b_to_a: ", "jitter", NULL, NULL },
		{ "{\"op\":\"set\",\"a_to_b\":{\"burst\":\"10kb\"}}", -EINVAL, 0, 1,
		  "a_to_b: ", "burst 10kb needs a rate (--rate > 0)", NULL, NULL },
		{ "{\"op\":\"set\",\"a_to_b\":\"delay 5ms\"}", -EINVAL, 0, 1,
		  "a_to_b: want an object", NULL, NULL, NULL },
		{ "{\"op\":\"set\",\"a_to_b\":{\"delay\":[1]}}", -EINVAL, 0, 1,
		  "a_to_b: delay", "text", NULL, NULL },
		{ "{\"op\":\"set\"}", -EINVAL, 0, 1, "a_to_b", "b_to_a", NULL, NULL },
		/* a misspelt direction is named, not ignored (the other is still checked) */
		{ "{\"op\":\"set\",\"a_to_b\":{\"loss\":\"150%\"},\"c_to_d\":{}}", -EINVAL, 0, 2,
		  "unknown key \"c_to_d\"", "a_to_b, b_to_a", "a_to_b: loss", "150%" },
		{ "{\"op\":\"set\",\"a_to_b\":{\"delay\":\"5ms\"},\"btoa\":{}}", -EINVAL, 0, 1,
		  "unknown key \"btoa\"", NULL, NULL, NULL },
		{ "not json", -EINVAL, 0, 1, "not a JSON object", NULL, NULL, NULL },
	};
	struct impair cur[2], want[2];
	size_t i;

	(void)state;
	memset(cur, 0, sizeof(cur));
	set_dial(&cur[0], "delay", "10ms");
	set_dial(&cur[1], "delay", "10ms");
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct ll_diag diag;
		unsigned dirs = 99;
		int rc;

		ll_diag_clear(&diag);
		rc = bridgectl_parse_set(t[i].req, cur, want, &dirs, &diag);
		if (rc != t[i].rc || (rc == 0 && dirs != t[i].dirs) ||
		    (rc < 0 && diag.nerrors < t[i].nerrors) ||
		    (t[i].e1a && !diag_has(&diag, t[i].e1a, t[i].e1b)) ||
		    (t[i].e2a && !diag_has(&diag, t[i].e2a, t[i].e2b))) {
			int k;

			print_error("case %zu '%s': rc %d dirs %u, %d errors:\n", i, t[i].req, rc,
				    dirs, diag.nerrors);
			for (k = 0; k < diag.n; k++)
				print_error("  %s\n", diag.e[k].text);
			fail();
		}
		/* a direction not named keeps its dial */
		if (rc == 0 && !(dirs & 1))
			assert_true(bridgectl_dial_equal(&want[0], &cur[0]));
		if (rc == 0 && !(dirs & 2))
			assert_true(bridgectl_dial_equal(&want[1], &cur[1]));
	}
	/* the values land: a_to_b replaced as a whole, {} clears */
	{
		struct ll_diag diag;
		unsigned dirs;

		ll_diag_clear(&diag);
		assert_int_equal(bridgectl_parse_set("{\"a_to_b\":{\"loss\":\"1%\"},\"b_to_a\":{}}",
						     cur, want, &dirs, &diag), 0);
		assert_int_equal(want[0].set, IMP_LOSS);
		assert_int_equal(want[0].loss, (uint32_t)(UINT32_MAX / 100.0 + 0.5));
		assert_true(impair_is_empty(&want[1]));
	}
}

static void test_dial_equal(void **state)
{
	struct impair a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	assert_true(bridgectl_dial_equal(&a, &b));
	set_dial(&a, "delay", "10ms");
	assert_false(bridgectl_dial_equal(&a, &b));
	set_dial(&b, "delay", "10000us");
	assert_true(bridgectl_dial_equal(&a, &b));
	set_dial(&b, "loss", "0%");
	assert_false(bridgectl_dial_equal(&a, &b));
}

/* fields JSON round trip (status file, state) */
static void test_fields_roundtrip(void **state)
{
	struct impair a, b;
	struct ll_diag diag;
	cJSON *o;
	char *txt;

	(void)state;
	memset(&a, 0, sizeof(a));
	set_dial(&a, "rate", "50mbit");
	set_dial(&a, "delay", "20ms");
	set_dial(&a, "jitter", "5ms");
	set_dial(&a, "loss", "1%");
	o = bridge_fields_json(&a);
	txt = cJSON_PrintUnformatted(o);
	assert_string_equal(txt, "{\"rate\":\"50mbit\",\"delay\":\"20ms\",\"jitter\":\"5ms\","
			    "\"loss\":\"1%\"}");
	ll_diag_clear(&diag);
	assert_int_equal(bridge_fields_parse(o, &b, &diag), 0);
	assert_true(bridgectl_dial_equal(&a, &b));
	free(txt);
	cJSON_Delete(o);
}

/* --- emu_reconfigure ------------------------------------------------------- */

static void test_reconfigure_keeps_queue(void **state)
{
	struct emu_config c = { .delay = 100 * MS, .seed = 7 };
	struct emu_stats st;
	struct emu *e;
	struct ll_err err = { 0 };
	struct emu_fate f;
	uintptr_t i;
	int64_t tts;

	(void)state;
	assert_int_equal(emu_new(&c, &e, &err), 0);
	for (i = 1; i <= 10; i++) {
		emu_fate(e, 100, false, &f);
		assert_false(f.lost);
		assert_int_equal(emu_enqueue(e, (int64_t)i, 100, (void *)i, NULL), 0);
	}
	/* a bad config changes nothing */
	c.delay = -1;
	assert_int_equal(emu_reconfigure(e, &c, &err), -EINVAL);
	assert_int_equal(emu_get_config(e)->delay, 100 * MS);
	/* 10 ms, smaller limit than queued: nothing dropped */
	c.delay = 10 * MS;
	c.limit = 5;
	c.seed = 99;
	assert_int_equal(emu_reconfigure(e, &c, &err), 0);
	assert_int_equal(emu_get_config(e)->seed, 7);
	emu_get_stats(e, &st);
	assert_int_equal(st.qlen, 10);
	assert_int_equal(st.in_pkts, 10);
	assert_int_equal(emu_enqueue(e, 20, 100, (void *)(uintptr_t)11, NULL), -ENOBUFS);
	emu_get_stats(e, &st);
	assert_int_equal(st.limit_drops, 1);
	/* room again: a new frame takes the new delay, ahead of the old ones */
	c.limit = 0;
	assert_int_equal(emu_reconfigure(e, &c, &err), 0);
	assert_int_equal(emu_get_config(e)->limit, 1000);
	assert_int_equal(emu_enqueue(e, 1 * MS, 100, (void *)(uintptr_t)11, &tts), 0);
	assert_int_equal(tts, 11 * MS);
	assert_ptr_equal(emu_dequeue(e, 20 * MS, NULL), (void *)(uintptr_t)11);
	assert_null(emu_dequeue(e, 20 * MS, NULL));
	/* the old frames at their old times, in order */
	assert_null(emu_dequeue(e, 100 * MS, NULL));
	for (i = 1; i <= 10; i++)
		assert_ptr_equal(emu_dequeue(e, 100 * MS + 10, NULL), (void *)i);
	emu_get_stats(e, &st);
	assert_int_equal(st.out_pkts, 11);
	assert_int_equal(st.qlen, 0);
	emu_free(e);
}

/* the token bucket starts full after a change, as tbf_change() */
static void test_reconfigure_bucket(void **state)
{
	struct emu_config c = { .tbf_rate = 1000, .tbf_burst = 1514, .seed = 3 };
	struct emu *e;
	struct ll_err err = { 0 };
	struct emu_stats st;

	(void)state;
	assert_int_equal(emu_new(&c, &e, &err), 0);
	assert_int_equal(emu_enqueue(e, 0, 1514, (void *)(uintptr_t)1, NULL), 0);
	assert_int_equal(emu_enqueue(e, 0, 1514, (void *)(uintptr_t)2, NULL), 0);
	assert_ptr_equal(emu_dequeue(e, 0, NULL), (void *)(uintptr_t)1);
	assert_null(emu_dequeue(e, 0, NULL));           /* bucket empty: 1.514 s at 1000 B/s */
	assert_true(emu_next_time(e) >= 1500 * MS);
	c.tbf_rate = 1000000;
	assert_int_equal(emu_reconfigure(e, &c, &err), 0);
	assert_int_equal(emu_next_time(e), 0);          /* full again: the queued frame goes */
	assert_ptr_equal(emu_dequeue(e, 0, NULL), (void *)(uintptr_t)2);
	emu_get_stats(e, &st);
	assert_int_equal(st.out_pkts, 2);
	emu_free(e);
}

/* the head queue (reordered frames) is a ring: growing it keeps its order */
static void test_reconfigure_ring_order(void **state)
{
	struct emu_config c = { .delay = 10 * MS, .reorder = UINT32_MAX, .gap = 1,
				.limit = 8, .seed = 1 };
	struct emu *e;
	struct ll_err err = { 0 };
	struct emu_stats st;
	uintptr_t i, next = 1;

	(void)state;
	assert_int_equal(emu_new(&c, &e, &err), 0);
	for (i = 1; i <= 6; i++)
		assert_int_equal(emu_enqueue(e, 0, 60, (void *)i, NULL), 0);
	for (; next <= 4; next++)
		assert_ptr_equal(emu_dequeue(e, 0, NULL), (void *)next);
	for (; i <= 12; i++)    /* wraps around the 8-entry ring */
		assert_int_equal(emu_enqueue(e, 0, 60, (void *)i, NULL), 0);
	c.limit = 3000;
	assert_int_equal(emu_reconfigure(e, &c, &err), 0);
	for (; i <= 20; i++)
		assert_int_equal(emu_enqueue(e, 0, 60, (void *)i, NULL), 0);
	for (; next < 20; next++)
		assert_ptr_equal(emu_dequeue(e, 0, NULL), (void *)next);
	emu_get_stats(e, &st);
	assert_int_equal(st.sent_ahead, 20);    /* every one went to the head queue */
	assert_int_equal(st.reordered, 0);      /* ... and left in arrival order */
	emu_free(e);
}

/* --- the server with a fake engine ----------------------------------------------- */

struct fake {
	int calls;
	int fail_dir;                   /* -1: never */
	struct impair on[2];            /* what the "engine" holds */
	char log[32][64];               /* "a_to_b delay 40ms" per call */
};

static int fake_apply(void *arg, enum bridge_dir dir, const struct impair *d, struct ll_err *err)
{
	struct fake *f = arg;
	char sum[48];

	if (f->calls < 32)
		snprintf(f->log[f->calls], sizeof(f->log[0]), "%s %s", dir ? "b_to_a" : "a_to_b",
			 impair_summary(d, sum, sizeof(sum)));
	f->calls++;
	if ((int)dir == f->fail_dir)
		return ll_err_set(err, -EIO, "fake engine refuses");
	f->on[dir] = *d;
	return 0;
}

static void fake_counters(void *arg, enum bridge_dir dir, struct bridgectl_counters *c)
{
	(void)arg;
	c->rx_packets = 100 + dir;
	c->lost = 7;
}

static const struct bridgectl_ops fake_ops = { fake_apply, NULL, fake_counters };

static struct bridgectl *srv_start(struct fake *f)
{
	struct bridgectl_info info = { .pid = (int)getpid(), .engine = "user",
				       .if_a = "veth-x", .if_b = "veth-y" };
	struct bridgectl *s = NULL;
	struct ll_err err = { 0 };

	memset(f, 0, sizeof(*f));
	f->fail_dir = -1;
	set_dial(&f->on[0], "delay", "10ms");
	set_dial(&f->on[1], "delay", "10ms");
	if (bridgectl_start(&fake_ops, f, &info, f->on, &s, &err) < 0) {
		print_error("bridgectl_start: %s\n", err.msg);
		fail();
	}
	return s;
}

static struct bridgectl_client *cli(void)
{
	struct bridgectl_client *c = NULL;
	struct ll_err err = { 0 };

	if (bridgectl_client_open((int)getpid(), &c, &err) < 0) {
		print_error("client: %s\n", err.msg);
		fail();
	}
	return c;
}

/* one request, the parsed reply */
static cJSON *req(struct bridgectl_client *c, const char *line)
{
	struct ll_err err = { 0 };
	char *r = NULL;
	cJSON *doc;

	assert_int_equal(bridgectl_client_send(c, line, &err), 0);
	if (bridgectl_client_recv(c, &r, 5000, &err) < 0) {
		print_error("recv: %s\n", err.msg);
		fail();
	}
	doc = cJSON_Parse(r);
	free(r);
	assert_non_null(doc);
	return doc;
}

/* one reply line without a request (the lease's last line) */
static cJSON *recv_json(struct bridgectl_client *c)
{
	struct ll_err err = { 0 };
	char *r = NULL;
	cJSON *doc;

	if (bridgectl_client_recv(c, &r, 5000, &err) < 0) {
		print_error("recv: %s\n", err.msg);
		fail();
	}
	doc = cJSON_Parse(r);
	free(r);
	assert_non_null(doc);
	return doc;
}

/* a dial in tc words (static buffer) */
static const char *dial_txt(const struct impair *d)
{
	static char sum[256];

	return impair_summary(d, sum, sizeof(sum));
}

static const char *dir_dial(const cJSON *reply, const char *dir)
{
	const cJSON *st = cJSON_GetObjectItem(reply, "state");

	return cJSON_GetObjectItem(cJSON_GetObjectItem(st, dir), "dial")->valuestring;
}

static bool ok(const cJSON *r)
{
	return cJSON_IsTrue(cJSON_GetObjectItem(r, "ok"));
}

/* wait (at most 2 s) until the server's generation moves past g */
static uint64_t wait_gen(struct bridgectl *s, uint64_t g)
{
	struct impair cur[2];
	int i;

	for (i = 0; i < 200; i++) {
		uint64_t n = bridgectl_dials(s, cur);

		if (n != g)
			return n;
		usleep(10000);
	}
	return g;
}

/* a dead process's pid: a child that has exited and been reaped */
static int dead_pid(void)
{
	pid_t p = fork();

	if (p == 0)
		_exit(0);
	assert_true(p > 0);
	assert_int_equal(waitpid(p, NULL, 0), p);
	return (int)p;
}

static void test_server_get_set(void **state)
{
	struct fake f;
	char stale[128];
	int dead = dead_pid(), fd;
	struct bridgectl *s;
	struct bridgectl_client *c;
	struct impair cur[2];
	char path[128];
	struct stat sb;
	cJSON *r, *st, *fields;

	(void)state;
	/* a socket file left by a bridge killed with -9 goes when one starts */
	assert_int_equal(bridgectl_sock_path(dead, stale, sizeof(stale), NULL), 0);
	fd = open(stale, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	s = srv_start(&f);
	assert_int_equal(access(stale, F_OK), -1);
	c = cli();
	assert_int_equal(bridgectl_sock_path((int)getpid(), path, sizeof(path), NULL), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISSOCK(sb.st_mode));
	assert_int_equal(sb.st_mode & 0777, 0600);

	r = req(c, "{\"op\":\"get\"}");
	assert_true(ok(r));
	st = cJSON_GetObjectItem(r, "state");
	assert_int_equal(cJSON_GetObjectItem(st, "pid")->valueint, (int)getpid());
	assert_string_equal(cJSON_GetObjectItem(st, "engine")->valuestring, "user");
	assert_string_equal(cJSON_GetObjectItem(st, "if_a")->valuestring, "veth-x");
	assert_string_equal(dir_dial(r, "a_to_b"), "delay 10ms");
	fields = cJSON_GetObjectItem(cJSON_GetObjectItem(st, "b_to_a"), "fields");
	assert_string_equal(cJSON_GetObjectItem(fields, "delay")->valuestring, "10ms");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "b_to_a"),
					     "rx_packets")->valueint, 101);
	cJSON_Delete(r);
	assert_int_equal(f.calls, 0);

	/* one direction */
	r = req(c, "{\"op\":\"set\",\"a_to_b\":{\"delay\":\"40ms\",\"loss\":\"1%\"}}");
	assert_true(ok(r));
	assert_string_equal(dir_dial(r, "a_to_b"), "delay 40ms loss 1%");
	assert_string_equal(dir_dial(r, "b_to_a"), "delay 10ms");
	cJSON_Delete(r);
	assert_int_equal(f.calls, 1);
	assert_string_equal(f.log[0], "a_to_b delay 40ms loss 1%");

	/* both wrong: every problem, nothing applied */
	r = req(c, "{\"op\":\"set\",\"a_to_b\":{\"loss\":\"150%\"},\"b_to_a\":{\"delay\":\"-5ms\"}}");
	assert_false(ok(r));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "invalid")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "errors")), 2);
	cJSON_Delete(r);
	assert_int_equal(f.calls, 1);

	/* the engine refuses the second: the first is put back */
	f.fail_dir = 1;
	r = req(c, "{\"op\":\"set\",\"a_to_b\":{\"delay\":\"70ms\"},\"b_to_a\":{\"delay\":\"70ms\"}}");
	assert_false(ok(r));
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(r, "invalid")));
	assert_non_null(strstr(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "errors"), 0)->valuestring,
			       "b_to_a: fake engine refuses"));
	cJSON_Delete(r);
	assert_int_equal(f.calls, 4);
	assert_string_equal(f.log[1], "a_to_b delay 70ms");
	assert_string_equal(f.log[2], "b_to_a delay 70ms");
	assert_string_equal(f.log[3], "a_to_b delay 40ms loss 1%");
	bridgectl_dials(s, cur);
	assert_true(bridgectl_dial_equal(&cur[0], &f.on[0]));
	assert_true(bridgectl_dial_equal(&cur[1], &f.on[1]));
	f.fail_dir = -1;

	/* an empty object clears; unknown op and bad lines are answered */
	r = req(c, "{\"op\":\"set\",\"b_to_a\":{}}");
	assert_true(ok(r));
	assert_string_equal(dir_dial(r, "b_to_a"), "none");
	cJSON_Delete(r);
	r = req(c, "{\"op\":\"frob\"}");
	assert_false(ok(r));
	cJSON_Delete(r);
	r = req(c, "[1,2");
	assert_false(ok(r));
	cJSON_Delete(r);

	bridgectl_client_close(c);
	bridgectl_stop(s);
	assert_int_equal(stat(path, &sb), -1);  /* socket file removed */
}

static void test_server_lease(void **state)
{
	struct fake f;
	struct bridgectl *s = srv_start(&f);
	struct bridgectl_client *c1 = cli(), *c2 = cli();
	struct impair cur[2];
	uint64_t g;
	cJSON *r;
	char msg[96];
	int i;

	(void)state;
	r = req(c1, "{\"op\":\"lease\"}");
	assert_true(ok(r));
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "state"), "leased_by")->valueint,
			 (int)getpid());
	cJSON_Delete(r);
	assert_int_equal(bridgectl_lease_pid(s), (int)getpid());
	/* a line over 64 KiB (here 150000 bytes, more than two buffers): one
	 * error reply, the rest of it skipped, the connection and lease kept */
	{
		char *big = malloc(150001);

		assert_non_null(big);
		memset(big, 'x', 150000);
		big[150000] = 0;
		r = req(c1, big);
		free(big);
		assert_false(ok(r));
		assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "errors"), 0)->valuestring,
				    "request line longer than 65536 bytes");
		cJSON_Delete(r);
		r = req(c1, "{\"op\":\"get\"}");
		assert_true(ok(r));
		assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "state"),
						     "leased_by")->valueint, (int)getpid());
		cJSON_Delete(r);
		assert_int_equal(bridgectl_lease_pid(s), (int)getpid());
	}
	/* one lease at a time */
	r = req(c2, "{\"op\":\"lease\"}");
	assert_false(ok(r));
	snprintf(msg, sizeof(msg), "bridge is leased by another console (pid %d)", (int)getpid());
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "errors"), 0)->valuestring, msg);
	cJSON_Delete(r);
	/* the lease holder changes one direction, another connection the other */
	r = req(c1, "{\"op\":\"set\",\"a_to_b\":{\"loss\":\"100%\"}}");
	assert_true(ok(r));
	cJSON_Delete(r);
	r = req(c2, "{\"op\":\"set\",\"b_to_a\":{\"rate\":\"1mbit\"}}");
	assert_true(ok(r));
	cJSON_Delete(r);
	assert_int_equal(f.calls, 2);
	/* the holder ends (EOF): only what it set is put back (a_to_b); the
	 * other connection's b_to_a stands; its last line says so */
	g = bridgectl_dials(s, cur);
	shutdown(bridgectl_client_fd(c1), SHUT_WR);
	r = recv_json(c1);
	assert_true(ok(r));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "lease_ended")));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "restored"),
						"a_to_b")->valuestring, "delay 10ms");
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "restored"), "b_to_a"));
	cJSON_Delete(r);
	bridgectl_client_close(c1);
	g = wait_gen(s, g);
	bridgectl_dials(s, cur);
	assert_int_equal(f.calls, 3);
	assert_string_equal(f.log[2], "a_to_b delay 10ms");
	assert_true(bridgectl_dial_equal(&cur[0], &f.on[0]));
	assert_true(bridgectl_dial_equal(&cur[1], &f.on[1]));
	assert_int_equal(bridgectl_lease_pid(s), 0);
	/* a lease set a_to_b, then another connection set it too: that stands */
	c1 = cli();
	r = req(c1, "{\"op\":\"lease\"}");
	assert_true(ok(r));
	cJSON_Delete(r);
	r = req(c1, "{\"op\":\"set\",\"a_to_b\":{\"delay\":\"7ms\"}}");
	assert_true(ok(r));
	cJSON_Delete(r);
	r = req(c2, "{\"op\":\"set\",\"a_to_b\":{\"delay\":\"8ms\"}}");
	assert_true(ok(r));
	cJSON_Delete(r);
	g = bridgectl_dials(s, cur);
	shutdown(bridgectl_client_fd(c1), SHUT_WR);
	r = recv_json(c1);
	assert_true(ok(r));
	assert_null(cJSON_GetObjectItem(r, "restored")->child);
	cJSON_Delete(r);
	bridgectl_client_close(c1);
	for (i = 0; i < 200 && bridgectl_lease_pid(s); i++)
		usleep(10000);
	assert_int_equal(bridgectl_dials(s, cur), g);
	assert_int_equal(f.calls, 5);
	assert_string_equal(dial_txt(&cur[0]), "delay 8ms");
	/* a lease with no change: closing applies nothing */
	r = req(c2, "{\"op\":\"lease\"}");
	assert_true(ok(r));
	cJSON_Delete(r);
	bridgectl_client_close(c2);
	for (i = 0; i < 200 && bridgectl_lease_pid(s); i++)
		usleep(10000);
	assert_int_equal(bridgectl_lease_pid(s), 0);
	assert_int_equal(bridgectl_dials(s, cur), g);
	assert_int_equal(f.calls, 5);
	bridgectl_stop(s);
}

/* which bridge: none, the only one, --pid */
static void test_find(void **state)
{
	struct bridge_status st;
	int pid = -1;
	struct ll_err err = { 0 };

	(void)state;
	assert_int_equal(bridgectl_find(0, &pid, &err), -ESRCH);
	assert_string_equal(err.msg, "no linklab bridge runs in this network namespace");
	memset(&st, 0, sizeof(st));
	st.pid = (int)getpid();
	snprintf(st.engine, sizeof(st.engine), "user");
	snprintf(st.if_a, sizeof(st.if_a), "p0");
	snprintf(st.if_b, sizeof(st.if_b), "p1");
	set_dial(&st.held[0], "delay", "5ms");
	assert_int_equal(bridge_status_write(&st, &err), 0);
	assert_int_equal(bridgectl_find(0, &pid, &err), 0);
	assert_int_equal(pid, (int)getpid());
	assert_int_equal(bridgectl_find((int)getpid(), &pid, &err), 0);
	assert_int_equal(bridgectl_find(1, &pid, &err), -ENOENT);
	{
		struct bridge_status back[2];
		int n = 0;

		assert_int_equal(bridge_status_list(back, 2, &n, &err), 0);
		assert_int_equal(n, 1);
		assert_true(bridgectl_dial_equal(&back[0].held[0], &st.held[0]));
		assert_true(impair_is_empty(&back[0].held[1]));
	}
	bridge_status_remove((int)getpid());
}

/* --- the user engine behind the socket, on real veths -------------------------------- */

#define ETHT 0x88b5     /* IEEE local experimental ethertype */

static int raw_sock(const char *ifname)
{
	struct sockaddr_ll sll = { 0 };
	int fd = socket(AF_PACKET, SOCK_RAW, 0);

	assert_true(fd >= 0);
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETHT);
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	assert_true(sll.sll_ifindex > 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	return fd;
}

static void send_seq(int fd, uint32_t seq)
{
	unsigned char f[64] = { 0 };

	memset(f, 0xff, 6);
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x01", 6);
	f[12] = ETHT >> 8;
	f[13] = ETHT & 0xff;
	memcpy(f + 14, &seq, 4);
	assert_int_equal(send(fd, f, sizeof(f), 0), (ssize_t)sizeof(f));
}

/* A->B delayed 300 ms with 5 frames queued; the socket clears A->B: the 5
 * queued frames still arrive (after the 5 sent later without delay), the
 * counters go on. In a private network namespace (root only). */
static void test_live_user_engine(void **state)
{
	struct bridge_opts o;
	struct bridge *br = NULL;
	struct bridgectl *ctl = NULL;
	struct bridgectl_client *c;
	struct bridgectl_info info = { .engine = "user", .if_a = "llCa1", .if_b = "llCb1" };
	struct impair dial[2];
	struct ll_err err = { 0 };
	uint32_t order[16];
	int tx, rx, n = 0, i;
	cJSON *r;
	struct pollfd p;

	(void)state;
	memset(&o, 0, sizeof(o));
	memset(dial, 0, sizeof(dial));
	snprintf(o.if_a, sizeof(o.if_a), "llCa1");
	snprintf(o.if_b, sizeof(o.if_b), "llCb1");
	o.dir[0].delay = 300 * MS;
	o.dir[0].seed = o.dir[1].seed = 5;
	set_dial(&dial[0], "delay", "300ms");
	assert_int_equal(bridge_open(&o, &br, &err), 0);
	assert_int_equal(bridge_start(br, &err), 0);
	info.pid = (int)getpid();
	assert_int_equal(bridgectl_serve_user(br, &info, dial, o.dir, &ctl, &err), 0);
	tx = raw_sock("llCa0");
	rx = raw_sock("llCb0");
	usleep(100000);                 /* the veths carry frames */
	for (i = 0; i < 5; i++)
		send_seq(tx, (uint32_t)i);
	usleep(50000);
	c = cli();
	r = req(c, "{\"op\":\"set\",\"a_to_b\":{}}");
	assert_true(ok(r));
	assert_string_equal(dir_dial(r, "a_to_b"), "none");
	cJSON_Delete(r);
	for (i = 5; i < 10; i++)
		send_seq(tx, (uint32_t)i);
	p.fd = rx;
	p.events = POLLIN;
	while (n < 16 && poll(&p, 1, 1000) > 0) {
		unsigned char buf[128];

		if (recv(rx, buf, sizeof(buf), 0) >= 18)
			memcpy(&order[n++], buf + 14, 4);
	}
	assert_int_equal(n, 10);        /* the queued frames were not lost */
	for (i = 0; i < 5; i++) {
		assert_int_equal(order[i], 5 + i);      /* undelayed ones first */
		assert_int_equal(order[5 + i], i);      /* then the queued, in order */
	}
	r = req(c, "{\"op\":\"get\"}");
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "state"),
		"a_to_b"), "tx_packets")->valueint >= 10);      /* counters went on */
	cJSON_Delete(r);
	bridgectl_client_close(c);
	close(tx);
	close(rx);
	bridgectl_stop(ctl);
	bridge_close(br);
}

/* --- the kernel engine's counters, on real veths --------------------------------------- */

/* n frames of len bytes out of fd's port, back to back; returns how many
 * the port's qdisc dropped (send fails with ENOBUFS: NET_XMIT_DROP) */
static int send_n(int fd, int n, size_t len)
{
	unsigned char f[1514] = { 0 };
	int i, dropped = 0;

	assert_true(len >= 60 && len <= sizeof(f));
	memset(f, 0xff, 6);
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x02", 6);
	f[12] = ETHT >> 8;
	f[13] = ETHT & 0xff;
	for (i = 0; i < n; i++) {
		ssize_t r = send(fd, f, len, 0);

		if (r < 0 && errno == ENOBUFS)
			dropped++;
		else
			assert_int_equal(r, (ssize_t)len);
	}
	return dropped;
}

static double state_num(cJSON *r, const char *dir, const char *key)
{
	cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "state"), dir),
				       key);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

/* Kernel engine counters without a Linux bridge (the counters only read the
 * ports): IF_A = llKa1, IF_B = llKa0, so A->B is rx of llKa1 and tx of
 * llKa0, and its drops those of llKa0's tbf. Frames sent out of llKa0 before
 * the start do not count; a burst into a 1mbit tbf with a 4000-byte queue
 * drops most, and sent = tx + drops; the drops survive the tbf being
 * replaced through the socket (cleared, then a new one starting at 0).
 * Private network namespace (root only). */
static void test_live_kernel_counters(void **state)
{
	struct bridgectl_info info = { .engine = "kernel", .if_a = "llKa1", .if_b = "llKa0" };
	const char *const egress[2] = { "llKa0", "llKa1" };
	struct bridgectl_kstats *ks = NULL;
	struct bridgectl *ctl = NULL;
	struct bridgectl_client *c;
	struct bridgectl_counters kc;
	struct impair dial[2];
	struct ll_err err = { 0 };
	struct peer p;
	double rx, tx, dr, dr1;
	int fd, nd;
	cJSON *r;

	(void)state;
	fd = raw_sock("llKa0");
	send_n(fd, 30, 100);                    /* before the start: not counted */
	memset(dial, 0, sizeof(dial));
	set_dial(&dial[0], "rate", "1mbit");
	set_dial(&dial[0], "tbf-limit", "4000");
	set_dial(&dial[1], "rate", "1mbit");
	assert_int_equal(peer_local_open(&p, &err), 0);
	assert_int_equal(p.ops->apply(&p, "llKa0", &dial[0], &err), 0);
	assert_int_equal(p.ops->apply(&p, "llKa1", &dial[1], &err), 0);
	usleep(100000);
	assert_int_equal(bridgectl_kstats_open(&p, "llKa1", "llKa0", &ks, &err), 0);
	assert_int_equal(bridgectl_kstats_read(ks, BRIDGE_A_TO_B, &kc, &err), 0);
	assert_true(kc.rx_packets == 0 && kc.tx_packets == 0 && kc.drops == 0);
	info.pid = (int)getpid();
	assert_int_equal(bridgectl_serve_kernel(&p, ks, egress, 0, &info, dial, &ctl, &err), 0);
	c = cli();

	nd = send_n(fd, 100, 1000);             /* 100 kB into a 4000-byte queue */
	usleep(300000);                         /* the queue drains (4000 B at 1mbit: 32 ms) */
	r = req(c, "{\"op\":\"get\"}");
	rx = state_num(r, "a_to_b", "rx_packets");
	tx = state_num(r, "a_to_b", "tx_packets");
	dr1 = state_num(r, "a_to_b", "drops");
	assert_true(tx > 0 && dr1 > 0);
	assert_true(dr1 == nd);                 /* each drop the sender was told of */
	assert_true(rx == tx);                  /* a veth delivers what it sent */
	assert_true(tx + dr1 == 100);
	assert_true(state_num(r, "a_to_b", "tx_bytes") == tx * 1000);
	assert_true(state_num(r, "a_to_b", "lost") == 0);
	assert_true(state_num(r, "b_to_a", "tx_packets") == 0);
	cJSON_Delete(r);

	/* a new tbf through the socket (cleared first: a new qdisc from 0) */
	r = req(c, "{\"op\":\"set\",\"a_to_b\":{}}");
	assert_true(ok(r));
	cJSON_Delete(r);
	r = req(c, "{\"op\":\"set\",\"a_to_b\":{\"rate\":\"1mbit\",\"tbf-limit\":\"4000\"}}");
	assert_true(ok(r));
	cJSON_Delete(r);
	nd += send_n(fd, 100, 1000);
	usleep(300000);
	r = req(c, "{\"op\":\"get\"}");
	tx = state_num(r, "a_to_b", "tx_packets");
	dr = state_num(r, "a_to_b", "drops");
	assert_true(dr > dr1);                  /* the first tbf's drops are kept */
	assert_true(dr == nd);
	assert_true(tx + dr == 200);
	assert_true(state_num(r, "a_to_b", "rx_packets") == tx);
	cJSON_Delete(r);
	bridgectl_client_close(c);
	bridgectl_stop(ctl);
	/* the command reads after the socket stopped (-J at exit) */
	assert_int_equal(bridgectl_kstats_read(ks, BRIDGE_A_TO_B, &kc, &err), 0);
	assert_true((double)kc.drops == dr && (double)kc.tx_packets == tx);
	assert_int_equal(bridgectl_kstats_read(ks, BRIDGE_B_TO_A, &kc, &err), 0);
	assert_true(kc.rx_packets == 0 && kc.drops == 0);
	bridgectl_kstats_close(ks);
	assert_int_equal(p.ops->clear(&p, "llKa0", &err), 0);
	assert_int_equal(p.ops->clear(&p, "llKa1", &err), 0);
	/* an interface that is not there: named */
	assert_int_equal(bridgectl_kstats_open(&p, "llKa1", "llNone", &ks, &err), -ENODEV);
	assert_non_null(strstr(err.msg, "llNone"));
	assert_null(ks);
	p.ops->close(&p);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	snprintf(rundir, sizeof(rundir), "/tmp/llbctl-XXXXXX");
	if (!mkdtemp(rundir))
		return -1;
	setenv("LINKLAB_RUN_DIR", rundir, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rundir);
	return system(cmd) == 0 ? 0 : -1;
}

/* the live cases' namespaces: no IPv6 chatter on the veths */
#define NO_IPV6 "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; " \
	"echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6; "

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_set_table),
		cmocka_unit_test(test_dial_equal),
		cmocka_unit_test(test_fields_roundtrip),
		cmocka_unit_test(test_reconfigure_keeps_queue),
		cmocka_unit_test(test_reconfigure_ring_order),
		cmocka_unit_test(test_reconfigure_bucket),
		cmocka_unit_test(test_server_get_set),
		cmocka_unit_test(test_server_lease),
		cmocka_unit_test(test_find),
		NETNS_CASE(test_live_user_engine, NO_IPV6 "ip link add llCa0 type veth peer name llCa1 && "
			   "ip link add llCb0 type veth peer name llCb1 && "
			   "for i in llCa0 llCa1 llCb0 llCb1; do ip link set $i up || exit 1; done"),
		NETNS_CASE(test_live_kernel_counters, NO_IPV6 "ip link add llKa0 type veth peer name llKa1 && "
			   "ip link set llKa0 up && ip link set llKa1 up"),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
