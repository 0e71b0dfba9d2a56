/* SPDX-License-Identifier: MIT */
/* test_iperf3.c - iperf3 wire protocol pieces, client and server engines. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "linklab/traffic/iperf3.h"
#include "linklab/traffic/serve.h"
#include "linklab/traffic/client.h"   /* before cmocka.h: it #defines client_free */

#include <cmocka.h>

#include "fixture.h"
#undef client_free            /* ours, not cmocka's allocation checker */

static void test_cookie(void **state)
{
	char a[IPERF3_COOKIE_SIZE], b[IPERF3_COOKIE_SIZE];
	(void)state;

	assert_int_equal(iperf3_make_cookie(a, NULL), 0);
	assert_int_equal(iperf3_make_cookie(b, NULL), 0);
	assert_int_equal(strlen(a), 36);
	assert_int_equal(a[36], '\0');
	assert_true(iperf3_cookie_valid(a));
	assert_true(iperf3_cookie_valid(b));
	assert_string_not_equal(a, b);
	for (int i = 0; i < 36; i++)
		assert_true((a[i] >= 'a' && a[i] <= 'z') || (a[i] >= '2' && a[i] <= '7'));
	/* observed on the wire from iperf3 3.12 */
	assert_true(iperf3_cookie_valid("nbscte3e2kp5orakuybxk5x4c6w2gygaa75s"));
	a[5] = '1';   /* '1' is not in the alphabet */
	assert_false(iperf3_cookie_valid(a));
	assert_int_equal(iperf3_stream_id(0), 1);
	assert_int_equal(iperf3_stream_id(1), 3);
	assert_int_equal(iperf3_stream_id(2), 4);
}

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void test_framing(void **state)
{
	int sv[2];
	unsigned char hdr[4];
	char body[64];
	cJSON *j, *o;
	struct ll_err err = { 0 };
	(void)state;

	pair(sv);
	j = cJSON_CreateObject();
	cJSON_AddNumberToObject(j, "a", 1);
	assert_int_equal(iperf3_json_write(sv[0], j, 1000, &err), 0);
	cJSON_Delete(j);
	assert_int_equal(read(sv[1], hdr, 4), 4);
	assert_memory_equal(hdr, "\0\0\0\x07", 4);     /* {"a":1} = 7 bytes, BE */
	assert_int_equal(read(sv[1], body, 7), 7);
	assert_memory_equal(body, "{\"a\":1}", 7);

	/* trailing bytes inside the declared length are ignored, as iperf3 */
	const char msg[] = "\0\0\0\x0a{\"b\":2} xx";
	assert_int_equal(write(sv[0], msg, sizeof(msg) - 1), (ssize_t)sizeof(msg) - 1);
	assert_int_equal(iperf3_json_read(sv[1], &o, 1024, 1000, &err), 0);
	assert_int_equal(cJSON_GetObjectItem(o, "b")->valueint, 2);
	cJSON_Delete(o);

	/* oversize refused */
	const char big[] = "\x01\0\0\0";
	assert_int_equal(write(sv[0], big, 4), 4);
	assert_int_equal(iperf3_json_read(sv[1], &o, 1024, 1000, &err), -EMSGSIZE);
	assert_null(o);

	/* timeout: nothing arrives */
	assert_int_equal(iperf3_json_read(sv[1], &o, 1024, 50, &err), -ETIMEDOUT);
	assert_non_null(strstr(err.msg, "50 ms"));

	/* not JSON */
	const char bad[] = "\0\0\0\x03xyz";
	assert_int_equal(write(sv[0], bad, 7), 7);
	assert_int_equal(iperf3_json_read(sv[1], &o, 1024, 1000, &err), -EPROTO);

	/* states are signed bytes; SERVER_ERROR carries two int32 BE */
	int st;
	assert_int_equal(iperf3_send_state(sv[0], IPERF3_ACCESS_DENIED, &err), 0);
	assert_int_equal(iperf3_recv_state(sv[1], &st, 1000, &err), 0);
	assert_int_equal(st, -1);
	assert_int_equal(iperf3_send_server_error(sv[0], IPERF3_IENUMSTREAMS, 0, &err), 0);
	assert_int_equal(iperf3_recv_state(sv[1], &st, 1000, &err), 0);
	assert_int_equal(st, IPERF3_SERVER_ERROR);
	assert_int_equal(iperf3_read_server_error(sv[1], 1000, &err), -EIO);
	assert_non_null(strstr(err.msg, "parallel streams"));

	/* EOF in the middle of a body */
	const char half[] = "\0\0\0\x10{\"a\"";
	assert_int_equal(write(sv[0], half, 8), 8);
	close(sv[0]);
	assert_int_equal(iperf3_json_read(sv[1], &o, 1024, 1000, &err), -ECONNRESET);
	close(sv[1]);
}

static void test_params(void **state)
{
	struct iperf3_params p, q;
	struct ll_err err = { 0 };
	cJSON *j;
	(void)state;

	iperf3_params_init(&p);
	p.parallel = 2;
	p.time = 2;
	j = iperf3_params_build(&p);
	/* booleans by presence only: never "reverse": false */
	assert_null(cJSON_GetObjectItem(j, "reverse"));
	assert_null(cJSON_GetObjectItem(j, "bidirectional"));
	assert_null(cJSON_GetObjectItem(j, "bandwidth"));   /* absent = unlimited */
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "tcp")));
	assert_int_equal(cJSON_GetObjectItem(j, "len")->valueint, 131072);
	assert_int_equal(cJSON_GetObjectItem(j, "parallel")->valueint, 2);
	cJSON_Delete(j);

	p.reverse = true;
	p.bandwidth = 50000000;
	j = iperf3_params_build(&p);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "reverse")));
	assert_int_equal(iperf3_params_parse(j, &q, &err), 0);
	cJSON_Delete(j);
	assert_true(q.reverse);
	assert_int_equal(q.parallel, 2);
	assert_int_equal(q.bandwidth, 50000000);

	/* what iperf3 3.12 sends for -P 2 -t 2 */
	j = cJSON_Parse("{\"tcp\":true,\"omit\":0,\"time\":2,\"num\":0,\"blockcount\":0,"
			"\"parallel\":2,\"len\":131072,\"pacing_timer\":1000,"
			"\"client_version\":\"3.12\"}");
	assert_int_equal(iperf3_params_parse(j, &q, &err), 0);
	cJSON_Delete(j);
	assert_false(q.udp);
	assert_false(q.reverse);
	assert_int_equal(q.parallel, 2);
	assert_true(q.time == 2);
	assert_int_equal(q.len, 131072);
	assert_string_equal(q.client_version, "3.12");

	/* presence semantics: 3.12 sends "reverse":true; a newer peer's typed
	 * false must not turn it on; unknown keys ignored */
	j = cJSON_Parse("{\"tcp\":true,\"reverse\":false,\"gso\":0,\"parallel\":1}");
	assert_int_equal(iperf3_params_parse(j, &q, &err), 0);
	cJSON_Delete(j);
	assert_false(q.reverse);
	j = cJSON_Parse("{\"tcp\":true,\"reverse\":1}");
	assert_int_equal(iperf3_params_parse(j, &q, &err), 0);
	cJSON_Delete(j);
	assert_true(q.reverse);
	/* iperf3 sends these flags as the number 1 */
	j = cJSON_Parse("{\"udp\":true,\"udp_counters_64bit\":1,\"len\":1400}");
	assert_int_equal(iperf3_params_parse(j, &q, &err), 0);
	cJSON_Delete(j);
	assert_true(q.udp);
	assert_true(q.udp_counters_64bit);
	assert_int_equal(q.len, 1400);

	j = cJSON_Parse("{\"tcp\":true,\"time\":\"ten\"}");
	assert_int_equal(iperf3_params_parse(j, &q, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "time"));
	cJSON_Delete(j);
}

static void test_params_check(void **state)
{
	static const struct {
		int parallel;
		uint32_t len;
		double time;
		uint64_t window;
		int ie;
	} tab[] = {
		{ 1, 131072, 10, 0, 0 },
		{ 128, 1048576, 86400, 0, 0 },
		{ 129, 131072, 10, 0, IPERF3_IENUMSTREAMS },
		{ 0, 131072, 10, 0, IPERF3_IENUMSTREAMS },
		{ 1, 1048577, 10, 0, IPERF3_IEBLOCKSIZE },
		{ 1, 0, 10, 0, IPERF3_IEBLOCKSIZE },
		{ 1, 131072, 86401, 0, IPERF3_IEDURATION },
		{ 1, 131072, -1, 0, IPERF3_IEDURATION },
		{ 1, 131072, 10, 600u << 20, IPERF3_IEBUFSIZE },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct iperf3_params p;
		struct ll_diag d = { 0 };
		iperf3_params_init(&p);
		p.parallel = tab[i].parallel;
		p.len = tab[i].len;
		p.time = tab[i].time;
		p.window = tab[i].window;
		assert_int_equal(iperf3_params_check(&p, &d), tab[i].ie);
		assert_int_equal(d.nerrors, tab[i].ie ? 1 : 0);
	}
	/* several problems at once, first one's i_errno returned */
	struct iperf3_params p;
	struct ll_diag d = { 0 };
	iperf3_params_init(&p);
	p.parallel = 200;
	p.len = 2u << 20;
	p.time = 1e6;
	assert_int_equal(iperf3_params_check(&p, &d), IPERF3_IENUMSTREAMS);
	assert_int_equal(d.nerrors, 3);
	assert_non_null(strstr(d.e[0].text, "200"));

	/* client-side option validation */
	struct client_opts o;
	client_opts_init(&o);
	assert_int_equal(o.port, 5201);
	assert_int_equal(o.streams, 1);
	ll_diag_clear(&d);
	assert_int_equal(client_opts_validate(&o, &d), -EINVAL);   /* no host */
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	ll_diag_clear(&d);
	assert_int_equal(client_opts_validate(&o, &d), 0);
	o.streams = 129;
	o.interval = 0.05;
	o.blksize = (1u << 20) + 1;
	ll_diag_clear(&d);
	assert_int_equal(client_opts_validate(&o, &d), -EINVAL);
	assert_int_equal(d.nerrors, 3);
	/* -i 0 is iperf3's "no periodic reports": valid; 0.05 and 61 are not */
	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.interval = 0;
	ll_diag_clear(&d);
	assert_int_equal(client_opts_validate(&o, &d), 0);
	o.interval = 61;
	ll_diag_clear(&d);
	assert_int_equal(client_opts_validate(&o, &d), -EINVAL);
	assert_non_null(strstr(d.e[0].text, "0 (no periodic reports) or 0.1..60"));
	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.udp = true;
	ll_diag_clear(&d);
	assert_int_equal(client_opts_validate(&o, &d), 0);
	o.blksize = 8;   /* UDP datagrams need the 12-byte header: 16..65507 */
	ll_diag_clear(&d);
	assert_int_equal(client_opts_validate(&o, &d), -EINVAL);
	assert_non_null(strstr(d.e[0].text, "16..65507"));
	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.bidir = true;
	o.reverse = true;
	o.streams = 65;   /* 130 streams in all: over 128 */
	ll_diag_clear(&d);
	assert_int_equal(client_opts_validate(&o, &d), -EINVAL);
	assert_int_equal(d.nerrors, 2);
	iperf3_params_init(&p);
	p.bidir = true;
	p.parallel = 65;
	ll_diag_clear(&d);
	assert_int_equal(iperf3_params_check(&p, &d), IPERF3_IENUMSTREAMS);
	iperf3_params_init(&p);
	p.udp = true;
	p.len = 70000;
	ll_diag_clear(&d);
	assert_int_equal(iperf3_params_check(&p, &d), IPERF3_IEBLOCKSIZE);
}

static void test_results(void **state)
{
	struct iperf3_results *r = calloc(1, sizeof(*r)), *r2 = calloc(1, sizeof(*r2));
	struct ll_err err = { 0 };
	cJSON *j;
	(void)state;

	/* iperf3 3.12 prints -1 as 18446744073709551615; no omitted_*, and
	 * (for pre-3.2 peers) no start_time/end_time */
	j = cJSON_Parse("{\"cpu_util_total\":12.5,\"cpu_util_user\":2.5,"
			"\"cpu_util_system\":10,\"sender_has_retransmits\":18446744073709551615,"
			"\"streams\":[{\"id\":1,\"bytes\":5000,\"retransmits\":18446744073709551615,"
			"\"jitter\":0,\"errors\":0,\"packets\":0,\"start_time\":0,\"end_time\":2.001},"
			"{\"id\":3,\"bytes\":7000,\"retransmits\":4,\"jitter\":0,\"errors\":0,"
			"\"packets\":0}]}");
	assert_non_null(j);
	assert_int_equal(iperf3_results_parse(j, r, &err), 0);
	cJSON_Delete(j);
	assert_int_equal(r->sender_has_retransmits, -1);
	assert_int_equal(r->nstreams, 2);
	assert_int_equal(r->s[0].id, 1);
	assert_int_equal(r->s[0].bytes, 5000);
	assert_int_equal(r->s[0].retransmits, -1);
	assert_int_equal(r->s[0].omitted_errors, -1);
	assert_true(r->s[0].has_times);
	assert_true(r->s[0].end_time > 2.0 && r->s[0].end_time < 2.01);
	assert_int_equal(r->s[1].id, 3);
	assert_int_equal(r->s[1].retransmits, 4);
	assert_false(r->s[1].has_times);
	assert_true(r->cpu_total == 12.5);

	/* round trip through our builder */
	r->s[1].omitted_errors = 0;
	r->s[1].omitted_packets = 0;
	j = iperf3_results_build(r);
	assert_int_equal(iperf3_results_parse(j, r2, &err), 0);
	cJSON_Delete(j);
	assert_int_equal(r2->nstreams, 2);
	assert_int_equal(r2->s[1].bytes, 7000);
	assert_int_equal(r2->s[0].retransmits, -1);
	assert_int_equal(r2->s[1].omitted_packets, 0);

	/* a required key missing is an error naming it */
	j = cJSON_Parse("{\"cpu_util_total\":1,\"cpu_util_user\":1,\"cpu_util_system\":0,"
			"\"sender_has_retransmits\":1,\"streams\":[{\"id\":1,\"bytes\":1,"
			"\"retransmits\":0,\"jitter\":0,\"errors\":0}]}");
	assert_int_equal(iperf3_results_parse(j, r2, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "packets"));
	cJSON_Delete(j);

	cJSON *n = cJSON_CreateNumber(18446744073709551615.0);
	assert_int_equal(iperf3_json_int(n), -1);
	cJSON_Delete(n);
	n = cJSON_CreateNumber(42);
	assert_int_equal(iperf3_json_int(n), 42);
	cJSON_Delete(n);
	free(r);
	free(r2);
}

/* ---- in-process server ------------------------------------------------ */

struct srv_thread {
	struct serve_opts o;
	volatile sig_atomic_t stop;
	pthread_t th;
	int port;
	int rc;
	int lines;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ll_err err;
};

static void srv_listen(void *ctx, int port)
{
	struct srv_thread *s = ctx;

	pthread_mutex_lock(&s->mu);
	s->port = port;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void srv_log(void *ctx, const char *line)
{
	struct srv_thread *s = ctx;

	(void)line;
	s->lines++;
}

static void *srv_main(void *arg)
{
	struct srv_thread *s = arg;

	s->rc = serve_run(&s->o, &s->stop, srv_listen, srv_log, s, &s->err);
	pthread_mutex_lock(&s->mu);
	if (s->port == 0)   /* failed before listening: unblock srv_start */
		s->port = -1;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static struct srv_thread *srv_start(bool one_off)
{
	struct srv_thread *s = calloc(1, sizeof(*s));

	s->o.port = 0;
	snprintf(s->o.bind, sizeof(s->o.bind), "127.0.0.1");
	s->o.one_off = one_off;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	assert_int_equal(pthread_create(&s->th, NULL, srv_main, s), 0);
	pthread_mutex_lock(&s->mu);
	while (s->port == 0)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	assert_true(s->port > 0);
	return s;
}

static void srv_end(struct srv_thread *s)
{
	s->stop = 1;
	pthread_join(s->th, NULL);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

/* Run a client to completion; returns the last event kind. */
static int run_client(struct client_opts *o, struct client **tp, struct ll_err *eout,
		      int *nintervals)
{
	struct client_event *ev = malloc(sizeof(*ev));
	struct ll_err err = { 0 };
	struct client *t;
	int last = -1;

	*nintervals = 0;
	assert_int_equal(client_start(o, &t, &err), 0);
	for (;;) {
		struct pollfd p = { .fd = client_event_fd(t), .events = POLLIN };
		assert_true(poll(&p, 1, 30000) == 1);
		if (client_next_event(t, ev) != 1)
			continue;
		last = ev->kind;
		if (ev->kind == CLIENT_EV_INTERVAL) {
			(*nintervals)++;
			assert_int_equal(ev->interval.nstreams,
					 o->bidir ? 2 * o->streams : o->streams);
		}
		if (ev->kind == CLIENT_EV_DONE || ev->kind == CLIENT_EV_ERROR) {
			*eout = ev->err;
			break;
		}
	}
	free(ev);
	*tp = t;
	return last;
}

static void test_loopback(void **state)
{
	struct srv_thread *s = srv_start(true);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.streams = 2;
	o.duration = 1;
	o.interval = 0.5;
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	assert_true(niv >= 2);
	const struct client_summary *S = client_summary(t);
	assert_int_equal(S->nstreams, 2);
	assert_true(S->sum_sent.bytes > 0);
	assert_true(S->sum_received.bytes > 0);
	assert_true(S->sum_sent.bytes >= S->sum_received.bytes);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(S->sent[i].id, iperf3_stream_id(i));
		assert_true(S->sent[i].bytes > 0);
		assert_true(S->received[i].bytes > 0);
		assert_true(S->sent[i].bytes >= S->received[i].bytes);
	}
	assert_true(S->duration > 0.9 && S->duration < 1.5);
	char lh[64], rh[64];
	int lp = 0, rp = 0;
	assert_int_equal(client_stream_addr(t, 1, lh, sizeof(lh), &lp, rh, sizeof(rh), &rp), 3);
	assert_string_equal(lh, "127.0.0.1");
	assert_string_equal(rh, "127.0.0.1");
	assert_int_equal(rp, s->port);
	assert_true(lp > 0 && lp != rp);
	assert_int_equal(client_stream_addr(t, 2, lh, sizeof(lh), &lp, rh, sizeof(rh), &rp),
			 -ENOENT);

	char *js = client_json(t);
	cJSON *j = cJSON_Parse(js);
	free(js);
	assert_non_null(j);
	cJSON *end = cJSON_GetObjectItem(j, "end");
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(end, "sum_received"),
					"bytes")->valuedouble > 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(
		cJSON_GetObjectItem(j, "start"), "connected")), 2);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(end, "streams")), 2);
	cJSON *iv0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "intervals"), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(iv0, "streams")), 2);
	assert_non_null(cJSON_GetObjectItem(iv0, "sum"));
	assert_null(cJSON_GetObjectItem(j, "error"));
	cJSON_Delete(j);
	client_free(t);
	pthread_join(s->th, NULL);
	assert_int_equal(s->rc, 0);
	s->stop = 1;
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

static void test_loopback_reverse(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.streams = 1;
	o.duration = 1;
	o.reverse = true;
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	const struct client_summary *S = client_summary(t);
	assert_true(S->sum_received.bytes > 0);
	assert_true(S->sum_sent.bytes >= S->sum_received.bytes);
	/* the server was the sender: its TCP_INFO retransmit total came back */
	assert_true(S->sent[0].retransmits >= 0);
	client_free(t);
	srv_end(s);
}

static void test_loopback_udp(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.streams = 2;
	o.duration = 1;
	o.udp = true;
	o.bitrate = 20000000;   /* per stream */
	o.blksize = 1460;       /* the default would be the loopback MSS */
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	const struct client_summary *S = client_summary(t);
	for (int i = 0; i < 2; i++) {
		/* 20 Mbit/s of 1460-byte datagrams for ~1 s: ~1700 each */
		assert_true(S->sent[i].packets > 1000 && S->sent[i].packets < 2500);
		assert_true(S->received[i].packets > 0);
		assert_true(S->received[i].packets <= S->sent[i].packets);
		assert_true(S->received[i].lost >= 0);
		assert_true(S->received[i].jitter_ms >= 0);
		assert_true(S->sent[i].bytes >= S->received[i].bytes);
	}
	assert_true(S->sum_received.bytes > 0);
	/* rate shaping by pacing: within 10% of 40 Mbit/s */
	assert_true(S->sum_sent.bps > 36e6 && S->sum_sent.bps < 44e6);
	char *js = client_json(t);
	cJSON *j = cJSON_Parse(js);
	free(js);
	cJSON *end = cJSON_GetObjectItem(j, "end");
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(end, "sum_received"),
					    "lost_packets"));
	cJSON_Delete(j);
	client_free(t);

	/* and reverse: the server paces, we count sequence gaps */
	o.reverse = true;
	o.streams = 1;
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	S = client_summary(t);
	assert_true(S->received[0].packets > 1000);
	assert_true(S->sent[0].packets >= S->received[0].packets);
	client_free(t);
	srv_end(s);
}

static void test_loopback_bidir(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.streams = 2;
	o.duration = 1;
	o.bidir = true;
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	assert_true(niv >= 1);
	const struct client_summary *S = client_summary(t);
	assert_int_equal(S->nstreams, 4);
	/* ids 1,3 carry client->server, 4,5 server->client */
	assert_int_equal(S->sent[2].id, 4);
	assert_true(S->sum_received.bytes > 0);
	assert_true(S->sum_received_reverse.bytes > 0);
	assert_true(S->sum_sent.bytes >= S->sum_received.bytes);
	assert_true(S->sum_sent_reverse.bytes >= S->sum_received_reverse.bytes);
	assert_int_equal(S->sum_sent.bytes + S->sum_sent_reverse.bytes,
			 S->sent[0].bytes + S->sent[1].bytes + S->sent[2].bytes +
			 S->sent[3].bytes);
	char *js = client_json(t);
	cJSON *j = cJSON_Parse(js);
	free(js);
	cJSON *end = cJSON_GetObjectItem(j, "end");
	assert_non_null(cJSON_GetObjectItem(end, "sum_received_bidir_reverse"));
	cJSON *iv0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "intervals"), 0);
	assert_non_null(cJSON_GetObjectItem(iv0, "sum_bidir_reverse"));
	cJSON_Delete(j);
	client_free(t);
	srv_end(s);
}

static int raw_connect(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static void test_server_refuses(void **state)
{
	struct srv_thread *s = srv_start(false);
	char cookie[IPERF3_COOKIE_SIZE];
	struct ll_err err = { 0 };
	int st;
	(void)state;

	/* out-of-range parallel -> SERVER_ERROR with IENUMSTREAMS */
	int fd = raw_connect(s->port);
	iperf3_make_cookie(cookie, NULL);
	assert_int_equal(iperf3_write_full(fd, cookie, sizeof(cookie), 1000, &err), 0);
	assert_int_equal(iperf3_recv_state(fd, &st, 5000, &err), 0);
	assert_int_equal(st, IPERF3_PARAM_EXCHANGE);
	cJSON *j = cJSON_Parse("{\"tcp\":true,\"time\":2,\"parallel\":200,\"len\":131072}");
	assert_int_equal(iperf3_json_write(fd, j, 1000, &err), 0);
	cJSON_Delete(j);
	assert_int_equal(iperf3_recv_state(fd, &st, 5000, &err), 0);
	assert_int_equal(st, IPERF3_SERVER_ERROR);
	unsigned char b[8];
	assert_int_equal(iperf3_read_full(fd, b, 8, 1000, &err), 0);
	assert_memory_equal(b, "\0\0\0\x06", 4);   /* IENUMSTREAMS = 6 */
	close(fd);

	/* a client holding the server -> a second client is told "busy" */
	fd = raw_connect(s->port);
	assert_int_equal(iperf3_write_full(fd, cookie, sizeof(cookie), 1000, &err), 0);
	assert_int_equal(iperf3_recv_state(fd, &st, 5000, &err), 0);
	assert_int_equal(st, IPERF3_PARAM_EXCHANGE);
	j = cJSON_Parse("{\"tcp\":true,\"time\":2,\"parallel\":1,\"len\":131072}");
	assert_int_equal(iperf3_json_write(fd, j, 1000, &err), 0);
	cJSON_Delete(j);
	assert_int_equal(iperf3_recv_state(fd, &st, 5000, &err), 0);
	assert_int_equal(st, IPERF3_CREATE_STREAMS);

	struct client_opts o;
	struct client *t;
	int niv;
	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 1;
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_ERROR);
	assert_int_equal(err.code, -EBUSY);
	assert_non_null(strstr(err.msg, "busy"));
	char *js = client_json(t);
	assert_non_null(strstr(js, "\"error\""));
	free(js);
	client_free(t);
	close(fd);
	srv_end(s);
}

/* A running test (TEST_RUNNING, the server's deny_one path): 20 clients
 * back to back are each told "busy" (ACCESS_DENIED), none sees a reset
 * (the server read their cookie before refusing and closing). */
static void test_busy_back_to_back(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_event *ev = malloc(sizeof(*ev));
	struct client_opts o, ob;
	struct client *hold, *t;
	struct ll_err err = { 0 };
	int i, niv, busy = 0, running = 0;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 4;
	o.bitrate = 10000000;      /* 10 Mbit/s: no load on the machine */
	assert_int_equal(client_start(&o, &hold, &err), 0);
	while (!running) {
		struct pollfd p = { .fd = client_event_fd(hold), .events = POLLIN };

		assert_true(poll(&p, 1, 30000) == 1);
		if (client_next_event(hold, ev) != 1)
			continue;
		assert_true(ev->kind == CLIENT_EV_CONNECTED || ev->kind == CLIENT_EV_INTERVAL);
		running = ev->kind == CLIENT_EV_CONNECTED;
	}
	ob = o;
	ob.duration = 1;
	for (i = 0; i < 20; i++) {
		/* half of them with RTT probes: 200+ ms between connect and
		 * the cookie, the server refuses before the cookie comes */
		ob.rtt = i % 2;
		assert_int_equal(run_client(&ob, &t, &err, &niv), CLIENT_EV_ERROR);
		if (err.code == -EBUSY && strstr(err.msg, "busy"))
			busy++;
		else
			print_message("attempt %d: %s\n", i + 1, err.msg);
		client_free(t);
	}
	assert_int_equal(busy, 20);
	for (;;) {
		struct pollfd p = { .fd = client_event_fd(hold), .events = POLLIN };

		assert_true(poll(&p, 1, 30000) == 1);
		if (client_next_event(hold, ev) != 1)
			continue;
		if (ev->kind == CLIENT_EV_DONE || ev->kind == CLIENT_EV_ERROR)
			break;
	}
	assert_int_equal(ev->kind, CLIENT_EV_DONE);
	free(ev);
	client_free(hold);
	srv_end(s);
}

static void test_silent_peer(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	/* accepts the TCP connection (backlog) but never says a word */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	getsockname(lfd, (struct sockaddr *)&a, &al);
	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = ntohs(a.sin_port);
	o.connect_timeout = 0.3;
	double t0 = iperf3_now();
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_ERROR);
	double el = iperf3_now() - t0;
	assert_int_equal(err.code, -ETIMEDOUT);
	assert_true(el >= 0.25 && el < 2.0);
	client_free(t);
	close(lfd);
}

/* -n / -k: the receiver reports exactly what was asked (in-flight data
 * drained), in both directions and with --bidir */
static void test_bytes_exact(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.bytes = 1048576;
	o.duration = 10;   /* ignored with -n */
	double t0 = iperf3_now();
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	assert_true(iperf3_now() - t0 < 5);
	const struct client_summary *S = client_summary(t);
	assert_int_equal(S->sum_sent.bytes, 1048576);
	assert_int_equal(S->sum_received.bytes, 1048576);
	client_free(t);

	o.reverse = true;
	o.streams = 3;
	o.bytes = 1000000;   /* not a multiple of the block: exact anyway */
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	S = client_summary(t);
	assert_int_equal(S->sum_sent.bytes, 1000000);
	assert_int_equal(S->sum_received.bytes, 1000000);
	client_free(t);

	o.reverse = false;
	o.streams = 2;
	o.bytes = 0;
	o.blocks = 8;
	o.blksize = 65536;
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	S = client_summary(t);
	assert_int_equal(S->sum_received.bytes, 8 * 65536);
	char *js = client_json(t);
	cJSON *j = cJSON_Parse(js);
	free(js);
	cJSON *ts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "start"), "test_start");
	assert_int_equal(cJSON_GetObjectItem(ts, "blocks")->valueint, 8);
	assert_int_equal(cJSON_GetObjectItem(ts, "blksize")->valueint, 65536);
	cJSON_Delete(j);
	client_free(t);
	srv_end(s);
}

/* -O: omitted intervals are marked, counting restarts at 0 after them and
 * the totals cover only the counted part */
static void test_omit(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 1;
	o.omit = 0.5;
	o.interval = 0.25;
	o.bitrate = 80000000;   /* paced: the totals are predictable */
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	const struct client_interval *iv;
	int n = client_intervals(t, &iv);
	assert_true(n >= 5);
	assert_true(iv[0].sum.omitted);
	assert_true(iv[0].s[0].omitted);
	int first = -1;
	for (int i = 0; i < n; i++)
		if (!iv[i].sum.omitted) {
			first = i;
			break;
		}
	assert_true(first >= 1);
	assert_true(iv[first].sum.start < 0.01);   /* counting restarts */
	const struct client_summary *S = client_summary(t);
	assert_true(S->duration > 0.9 && S->duration < 1.3);
	/* 80 Mbit/s for ~1 s counted (not 1.5 s) */
	assert_true(S->sum_sent.bytes > 8000000 && S->sum_sent.bytes < 12500000);
	/* each end starts counting at its own clock's end of -O: the two
	 * totals differ by what moves in that skew (a few ms at 80 Mbit/s) */
	assert_true(S->sum_received.bytes < S->sum_sent.bytes + 1000000);
	assert_true(S->sum_received.bytes > S->sum_sent.bytes - 1000000);
	char *js = client_json(t);
	assert_non_null(strstr(js, "\"omitted\":\ttrue"));
	free(js);
	client_free(t);
	srv_end(s);
}

/* serve -1: a bare port probe does not end the one-off server */
static void test_oneoff_probe(void **state)
{
	struct srv_thread *s = srv_start(true);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	int fd = raw_connect(s->port);
	close(fd);   /* like `nc -z` */
	usleep(200 * 1000);
	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 1;
	o.interval = 0.5;
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	client_free(t);
	pthread_join(s->th, NULL);   /* returns by itself after the test */
	assert_int_equal(s->rc, 0);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

/* -R with live samples: the server's sending stream shows up with its
 * TCP_INFO while the test runs (sender=true, remote=true) */
static void test_live_reverse(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_event *ev = malloc(sizeof(*ev));
	struct client_opts o;
	struct client *t;
	struct ll_err err = { 0 };
	int remote = 0, local = 0, last = -1;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 1.5;
	o.interval = 0.5;
	o.live = 0.5;
	o.reverse = true;
	assert_int_equal(client_start(&o, &t, &err), 0);
	while (last != CLIENT_EV_DONE && last != CLIENT_EV_ERROR) {
		struct pollfd p = { .fd = client_event_fd(t), .events = POLLIN };
		assert_true(poll(&p, 1, 10000) == 1);
		while (client_next_event(t, ev) == 1) {
			last = ev->kind;
			if (ev->kind != CLIENT_EV_INTERVAL)
				continue;
			if (ev->interval.remote) {
				remote++;
				assert_int_equal(ev->interval.nstreams, 1);
				assert_true(ev->interval.s[0].sender);
				assert_true(ev->interval.s[0].remote);
				assert_int_equal(ev->interval.s[0].id, 1);
				assert_true(ev->interval.s[0].snd_cwnd > 0);
				assert_true(ev->interval.s[0].rtt_us >= 0);
				assert_true(ev->interval.s[0].bytes > 0);
			} else {
				local++;
				assert_false(ev->interval.s[0].sender);
			}
		}
	}
	assert_int_equal(last, CLIENT_EV_DONE);
	assert_true(remote >= 2);
	assert_true(local >= 2);
	/* remote samples are not mixed into the -J intervals */
	const struct client_interval *iv;
	assert_int_equal(client_intervals(t, &iv), local);
	client_free(t);
	free(ev);
	srv_end(s);
}

/* the server goes away mid-test: the error names it, the intervals and
 * this side's totals are kept (partial), client_free is quick */
static void test_peer_dies(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_event *ev = malloc(sizeof(*ev));
	struct client_opts o;
	struct client *t;
	struct ll_err err = { 0 };
	int niv = 0, last = -1;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 30;
	o.interval = 0.2;
	o.bitrate = 50000000;
	assert_int_equal(client_start(&o, &t, &err), 0);
	while (last != CLIENT_EV_DONE && last != CLIENT_EV_ERROR) {
		struct pollfd p = { .fd = client_event_fd(t), .events = POLLIN };
		assert_true(poll(&p, 1, 10000) == 1);
		while (client_next_event(t, ev) == 1) {
			last = ev->kind;
			if (ev->kind == CLIENT_EV_INTERVAL && ++niv == 3)
				s->stop = 1;   /* serve_run ends the test */
		}
	}
	assert_int_equal(last, CLIENT_EV_ERROR);
	assert_true(strlen(ev->err.msg) > 0);
	const struct client_summary *S = client_summary(t);
	assert_true(S->partial);
	assert_true(S->sum_sent.bytes > 0);
	assert_true(S->duration > 0.4 && S->duration < 5);
	char *js = client_json(t);
	cJSON *j = cJSON_Parse(js);
	free(js);
	assert_non_null(cJSON_GetObjectItem(j, "error"));
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(j, "intervals")) >= 3);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "end"),
						     "partial")));
	cJSON_Delete(j);
	char *line = client_json_event(t, "error", NULL);
	assert_non_null(strstr(line, "\"event\":\"error\""));
	free(line);
	double t0 = iperf3_now();
	client_free(t);
	assert_true(iperf3_now() - t0 < 1.0);
	free(ev);
	pthread_join(s->th, NULL);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

/* client_free on a running test returns promptly */
static void test_free_bounded(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_event *ev = malloc(sizeof(*ev));
	struct client_opts o;
	struct client *t;
	struct ll_err err = { 0 };
	bool got = false;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 30;
	o.interval = 0.2;
	o.reverse = true;
	o.bitrate = 20000000;
	assert_int_equal(client_start(&o, &t, &err), 0);
	while (!got) {
		struct pollfd p = { .fd = client_event_fd(t), .events = POLLIN };
		assert_true(poll(&p, 1, 10000) == 1);
		while (client_next_event(t, ev) == 1)
			if (ev->kind == CLIENT_EV_INTERVAL)
				got = true;
	}
	double t0 = iperf3_now();
	client_free(t);
	assert_true(iperf3_now() - t0 < 1.5);
	free(ev);
	srv_end(s);
}

/* -N -C -Z -M on both ends; the congestion control used is reported; an
 * unknown algorithm fails with the kernel's reason */
static void test_socket_options(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 1;
	o.interval = 0.5;
	o.nodelay = true;
	o.zerocopy = true;
	o.mss = 1200;
	snprintf(o.congestion, sizeof(o.congestion), "reno");
	int k = run_client(&o, &t, &err, &niv);
	if (k != CLIENT_EV_DONE)
		print_message("unexpected end: %s\n", err.msg);
	assert_int_equal(k, CLIENT_EV_DONE);
	const struct client_summary *S = client_summary(t);
	assert_string_equal(S->sender_cc, "reno");
	assert_string_equal(S->receiver_cc, "reno");
	assert_true(S->sum_received.bytes > 0);
	client_free(t);

	o.reverse = true;   /* the server applies -Z -C on its sender */
	k = run_client(&o, &t, &err, &niv);
	if (k != CLIENT_EV_DONE)
		print_message("unexpected end (-R): %s\n", err.msg);
	assert_int_equal(k, CLIENT_EV_DONE);
	S = client_summary(t);
	assert_string_equal(S->sender_cc, "reno");
	assert_true(S->sum_received.bytes > 0);
	client_free(t);

	snprintf(o.congestion, sizeof(o.congestion), "nosuchcc");
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_ERROR);
	if (!strstr(err.msg, "TCP_CONGESTION nosuchcc"))
		print_message("unexpected error: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "TCP_CONGESTION nosuchcc"));
	client_free(t);
	srv_end(s);
}

/* TCP receiver wake-ups: after a fast phase the reader waits for about
 * 1 ms of data (SO_RCVLOWAT > 1), yet a trickle that follows is still
 * counted promptly (the SO_RCVTIMEO bound), not left in the queue. */
static void test_rx_lowat_trickle(void **state)
{
	int lfd = socket(AF_INET, SOCK_STREAM, 0), cfd, afd;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	atomic_bool stop = false;
	struct iperf3_stream st;
	struct ll_err err;
	(void)state;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&a, sizeof(a)), 0);
	afd = accept(lfd, NULL, NULL);
	assert_true(afd >= 0);

	memset(&st, 0, sizeof(st));
	st.fd = afd;
	st.mfd = -1;
	st.stop = &stop;
	assert_int_equal(iperf3_stream_start(&st, &err), 0);

	static char blk[256 * 1024];
	uint64_t sent = 0;
	double t0 = iperf3_now();
	while (iperf3_now() - t0 < 0.4) {   /* fast phase: > 16 MB/s */
		ssize_t w = send(cfd, blk, sizeof(blk), MSG_NOSIGNAL);
		assert_true(w > 0);
		sent += (uint64_t)w;
	}
	/* the reader now waits for more than one byte */
	int lowat = 0;
	socklen_t ll = sizeof(lowat);
	for (int i = 0; i < 100 && lowat <= 1; i++) {
		assert_int_equal(getsockopt(afd, SOL_SOCKET, SO_RCVLOWAT, &lowat, &ll), 0);
		if (lowat <= 1) {
			assert_true(send(cfd, blk, sizeof(blk), MSG_NOSIGNAL) > 0);
			sent += sizeof(blk);
		}
	}
	print_message("SO_RCVLOWAT after the fast phase: %d bytes\n", lowat);
	assert_true(lowat > 1);

	/* a 1000-byte trickle, far below the low-water mark */
	assert_int_equal(send(cfd, blk, 1000, MSG_NOSIGNAL), 1000);
	sent += 1000;
	double t1 = iperf3_now();
	while (atomic_load(&st.bytes) < sent && iperf3_now() - t1 < 2.0) {
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	print_message("trickle counted after %.1f ms\n", (iperf3_now() - t1) * 1e3);
	assert_int_equal(atomic_load(&st.bytes), sent);

	atomic_store(&stop, true);
	shutdown(afd, SHUT_RDWR);
	iperf3_stream_join(&st);
	close(cfd);
	close(afd);
	close(lfd);
}

/* duplicate datagrams (a bridge duplicating): their bytes count, as
 * iperf3's iperf_udp_recv counts every datagram received; they are neither
 * lost nor received sequence numbers, and are counted as duplicates. The
 * count travels in the results as linklab's extra key "duplicates". */
static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void test_udp_duplicates(void **state)
{
	int rfd = socket(AF_INET, SOCK_DGRAM, 0), sfd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	atomic_bool stop = false;
	struct iperf3_stream st;
	struct ll_err err;
	(void)state;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(rfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(rfd, (struct sockaddr *)&a, &al), 0);
	assert_int_equal(connect(sfd, (struct sockaddr *)&a, sizeof(a)), 0);

	memset(&st, 0, sizeof(st));
	st.fd = rfd;
	st.mfd = -1;
	st.stop = &stop;
	st.udp = true;
	st.len = 200;
	assert_int_equal(iperf3_stream_start(&st, &err), 0);

	/* 1 2 2 3 3 3 5 (4 lost): 7 datagrams of 200 bytes */
	static const uint32_t seqs[] = { 1, 2, 2, 3, 3, 3, 5 };
	unsigned char d[200];
	memset(d, 'x', sizeof(d));
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		put32(d, (uint32_t)ts.tv_sec);
		put32(d + 4, (uint32_t)(ts.tv_nsec / 1000));
		put32(d + 8, seqs[i]);
		assert_int_equal(send(sfd, d, sizeof(d), 0), (ssize_t)sizeof(d));
	}
	double t0 = iperf3_now();
	while (atomic_load(&st.bytes) < 7 * 200 && iperf3_now() - t0 < 2.0) {
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	assert_int_equal(atomic_load(&st.bytes), 7 * 200);   /* every byte */
	assert_int_equal(atomic_load(&st.packets), 5);       /* highest */
	assert_int_equal(atomic_load(&st.lost), 1);          /* only 4 */
	assert_int_equal(atomic_load(&st.dups), 3);
	atomic_store(&stop, true);
	shutdown(rfd, SHUT_RDWR);
	iperf3_stream_join(&st);
	close(rfd);
	close(sfd);

	/* the results exchange carries it; absent (stock iperf3) stays absent */
	struct iperf3_results *r = calloc(1, sizeof(*r)), *r2 = calloc(1, sizeof(*r2));
	assert_non_null(r);
	assert_non_null(r2);
	r->nstreams = 2;
	r->s[0].id = 1;
	r->s[0].has_dups = true;
	r->s[0].dups = 3;
	r->s[1].id = 3;
	cJSON *j = iperf3_results_build(r);
	assert_non_null(j);
	assert_int_equal(iperf3_results_parse(j, r2, &err), 0);
	assert_true(r2->s[0].has_dups);
	assert_int_equal(r2->s[0].dups, 3);
	assert_false(r2->s[1].has_dups);
	cJSON_Delete(j);
	free(r);
	free(r2);
}

/* -C NAME against this host's list, before anything connects */
static void test_cc_check(void **state)
{
	struct ll_err err = { 0 };
	char avail[512] = "", first[64] = "";
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_available_congestion_control", "r");
	(void)state;

	if (!f) {
		LL_SKIP("no /proc/sys/net/ipv4/tcp_available_congestion_control");
		return;
	}
	assert_non_null(fgets(avail, sizeof(avail), f));
	fclose(f);
	avail[strcspn(avail, "\n")] = '\0';
	assert_int_equal(sscanf(avail, "%63s", first), 1);
	assert_int_equal(iperf3_cc_check(first, &err), 0);
	assert_int_equal(iperf3_cc_check("", &err), 0);
	assert_int_equal(iperf3_cc_check("nosuchcc", &err), -ENOENT);
	char want[700];
	snprintf(want, sizeof(want), "-C 'nosuchcc': not available here (available: %s", first);
	print_message("%s\n", err.msg);
	assert_non_null(strstr(err.msg, want));
	/* a prefix of a listed name is not that name */
	char spaced[600], word[80];
	first[strlen(first) - 1] = '\0';
	snprintf(spaced, sizeof(spaced), " %s ", avail);
	snprintf(word, sizeof(word), " %s ", first);
	if (first[0] && !strstr(spaced, word))
		assert_int_equal(iperf3_cc_check(first, &err), -ENOENT);
}

/* UDP without -l: the datagram length is the control connection's MSS
 * (iperf3), 64-bit counters work both ways */
static void test_udp_defaults(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 1;
	o.udp = true;
	o.udp64 = true;
	o.bitrate = 10000000;
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	int fd = raw_connect(s->port);
	uint32_t mss_len = iperf3_udp_default_len(fd);
	close(fd);
	char *js = client_json(t);
	cJSON *j = cJSON_Parse(js);
	free(js);
	cJSON *ts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "start"), "test_start");
	assert_int_equal(cJSON_GetObjectItem(ts, "blksize")->valueint, (int)mss_len);
	cJSON_Delete(j);
	const struct client_summary *S = client_summary(t);
	assert_true(S->received[0].packets > 0);
	assert_int_equal(S->received[0].lost, 0);
	assert_true(S->received[0].bytes ==
		    (uint64_t)S->received[0].packets * mss_len);
	client_free(t);
	o.reverse = true;
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
	S = client_summary(t);
	assert_true(S->received[0].packets > 0);
	assert_true(S->received[0].lost >= 0);
	assert_int_equal(S->received[0].dups, 0);
	client_free(t);
	srv_end(s);
}

/* a peer that is not iperf3 (an SSH server's banner) fails at once with a
 * message that says so */
static void *banner_main(void *arg)
{
	int lfd = *(int *)arg;
	int fd = accept(lfd, NULL, NULL);
	if (fd >= 0) {
		const char b[] = "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n";
		if (write(fd, b, sizeof(b) - 1) < 0) {
			/* the client left */
		}
		usleep(500 * 1000);
		close(fd);
	}
	return NULL;
}

static void test_not_iperf3(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	pthread_t th;
	int niv;
	(void)state;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	getsockname(lfd, (struct sockaddr *)&a, &al);
	assert_int_equal(pthread_create(&th, NULL, banner_main, &lfd), 0);
	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = ntohs(a.sin_port);
	double t0 = iperf3_now();
	assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_ERROR);
	assert_true(iperf3_now() - t0 < 2.0);
	assert_int_equal(err.code, -EPROTO);
	assert_non_null(strstr(err.msg, "does not speak iperf3"));
	assert_non_null(strstr(err.msg, "('S')"));
	client_free(t);
	pthread_join(th, NULL);
	close(lfd);
}

/* What the server's listener advertises now: a bare connection (no test)
 * reads the MSS it offered (TCP_MAXSEG, bytes) and its window scale
 * (TCP_INFO snd_wscale). Waits 200 ms first so that the server has put its
 * listener back after the previous test. */
static void listener_probe(int port, int *mss, int *wscale)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	struct tcp_info ti;
	socklen_t l = sizeof(*mss);
	int fd;

	nanosleep(&ts, NULL);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, mss, &l), 0);
	l = sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l), 0);
	*wscale = ti.tcpi_snd_wscale;
	close(fd);
}

/* Regression: a persistent server (no -1) answers every client after tests
 * with -w (its listener is replaced) and -M (its MSS is reset): three
 * consecutive -w clients, one -M, one plain; the listener advertises the
 * default MSS and window scale again after each. */
static void test_persistent_tuned(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv, mss0, ws0, mss, ws;
	(void)state;

	listener_probe(s->port, &mss0, &ws0);
	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 1;
	o.interval = 0.5;
	o.window = 65536;
	for (int i = 0; i < 3; i++) {
		double t0 = iperf3_now();
		int k = run_client(&o, &t, &err, &niv);
		if (k != CLIENT_EV_DONE)
			print_message("-w run %d: %s\n", i + 1, err.msg);
		assert_int_equal(k, CLIENT_EV_DONE);
		assert_true(iperf3_now() - t0 < 5);
		assert_true(client_summary(t)->sum_received.bytes > 0);
		client_free(t);
	}
	listener_probe(s->port, &mss, &ws);
	assert_int_equal(mss, mss0);
	assert_int_equal(ws, ws0);

	o.window = 0;
	o.mss = 1000;
	int k = run_client(&o, &t, &err, &niv);
	if (k != CLIENT_EV_DONE)
		print_message("-M run: %s\n", err.msg);
	assert_int_equal(k, CLIENT_EV_DONE);
	client_free(t);
	listener_probe(s->port, &mss, &ws);
	assert_int_equal(mss, mss0);
	assert_true(mss > 1000);

	o.mss = 0;
	k = run_client(&o, &t, &err, &niv);
	if (k != CLIENT_EV_DONE)
		print_message("plain run: %s\n", err.msg);
	assert_int_equal(k, CLIENT_EV_DONE);
	assert_true(client_summary(t)->sum_received.bytes > 0);
	client_free(t);
	srv_end(s);
}

/* -O accounting of UDP results as iperf3 3.14+ (totals + omitted_*), an
 * older peer (no omitted_*), and the bounds 0 <= lost <= packets */
static void test_udp_counted(void **state)
{
	struct iperf3_stream_result r = { .id = 1 };
	int64_t pk, lo;
	(void)state;

	/* iperf3 3.21 -s after -O 3 at 300M through 100mbit: totals and the
	 * omitted share (the figures) */
	r.packets = 79167 + 129491;
	r.errors = 53550 + 87116;
	r.omitted_packets = 79167;
	r.omitted_errors = 53550;
	iperf3_udp_counted(&r, 77000, &pk, &lo);
	assert_int_equal(pk, 129491);
	assert_int_equal(lo, 87116);
	/* omitted more errors than the total (a late fill): 0, never < 0 */
	r.errors = 10;
	r.omitted_errors = 20;
	iperf3_udp_counted(&r, 0, &pk, &lo);
	assert_int_equal(lo, 0);
	/* errors beyond the packets: at most the packets */
	r.packets = 100;
	r.omitted_packets = 0;
	r.errors = 150;
	r.omitted_errors = 0;
	iperf3_udp_counted(&r, 0, &pk, &lo);
	assert_int_equal(pk, 100);
	assert_int_equal(lo, 100);
	/* iperf3 3.12 (no omitted_*): our own omit count off the packets; its
	 * errors include the omitted period's, so with -O they are unknown */
	r.omitted_packets = r.omitted_errors = -1;
	r.packets = 5000;
	r.errors = 40;
	iperf3_udp_counted(&r, 1000, &pk, &lo);
	assert_int_equal(pk, 4000);
	assert_int_equal(lo, -1);
	iperf3_udp_counted(&r, 0, &pk, &lo);   /* no -O: the errors as they are */
	assert_int_equal(pk, 5000);
	assert_int_equal(lo, 40);
	r.errors = 0;
	iperf3_udp_counted(&r, 1000, &pk, &lo);   /* -O, no loss at all: 0 */
	assert_int_equal(lo, 0);
}

/* a receiver stream's results entry: totals, the -O snapshot, out of
 * order after -O, and a round trip through the results object */
static void test_udp_result_entry(void **state)
{
	struct iperf3_stream st;
	struct iperf3_stream_result r = { 0 };
	struct iperf3_results *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct ll_err err = { 0 };
	(void)state;

	memset(&st, 0, sizeof(st));
	st.udp = true;
	atomic_store(&st.packets, 3000);
	atomic_store(&st.lost, 2000);
	atomic_store(&st.outoforder, 40);
	iperf3_stream_end_omit(&st);          /* -O ends here */
	atomic_store(&st.packets, 10000);     /* 7000 counted */
	atomic_store(&st.lost, 6000);         /* 4000 counted (57 %) */
	atomic_store(&st.outoforder, 100);
	atomic_store(&st.dups, 3);
	iperf3_stream_udp_result(&st, &r);
	assert_int_equal(r.packets, 10000);
	assert_int_equal(r.omitted_packets, 3000);
	assert_int_equal(r.errors, 6000);
	assert_int_equal(r.omitted_errors, 2000);
	assert_true(r.has_ooo);
	assert_int_equal(r.ooo, 60);
	assert_int_equal(r.dups, 3);
	int64_t pk, lo;
	iperf3_udp_counted(&r, 0, &pk, &lo);
	assert_int_equal(pk, 7000);
	assert_int_equal(lo, 4000);
	/* the wire: "out_of_order" and "duplicates" survive a round trip */
	a->nstreams = 1;
	a->s[0] = r;
	a->s[0].id = 1;
	cJSON *j = iperf3_results_build(a);
	assert_non_null(cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(j, "streams"), 0), "out_of_order"));
	assert_int_equal(iperf3_results_parse(j, b, &err), 0);
	cJSON_Delete(j);
	assert_true(b->s[0].has_ooo);
	assert_int_equal(b->s[0].ooo, 60);
	assert_int_equal(b->s[0].omitted_errors, 2000);
	/* a stock iperf3 sends no out_of_order: has_ooo stays false */
	b->s[0].has_ooo = false;
	j = iperf3_results_build(b);
	assert_int_equal(iperf3_results_parse(j, a, &err), 0);
	cJSON_Delete(j);
	assert_false(a->s[0].has_ooo);
	/* lost at -O end above the later count (a late fill): bounded */
	memset(&st, 0, sizeof(st));
	st.udp = true;
	atomic_store(&st.packets, 100);
	atomic_store(&st.lost, 50);
	iperf3_stream_end_omit(&st);
	atomic_store(&st.packets, 200);
	atomic_store(&st.lost, 40);
	iperf3_stream_udp_result(&st, &r);
	iperf3_udp_counted(&r, 0, &pk, &lo);
	assert_int_equal(pk, 100);
	assert_true(lo >= 0 && lo <= pk);
	free(a);
	free(b);
}

/* network JSON numbers with no integer value: no undefined conversion
 * (UBSan is fatal in the unit build), a defined result */
static void test_json_huge_numbers(void **state)
{
	struct iperf3_params p;
	struct ll_err err = { 0 };
	(void)state;

	cJSON *n = cJSON_CreateNumber(9223372036854775808.0);   /* 2^63 */
	assert_true(iperf3_json_int(n) == INT64_MIN);
	cJSON_SetNumberValue(n, 1e300);
	assert_int_equal(iperf3_json_int(n), -1);
	cJSON_SetNumberValue(n, -1e300);
	assert_true(iperf3_json_int(n) == INT64_MIN);
	cJSON_Delete(n);
	cJSON *j = cJSON_Parse("{\"tcp\":true,\"num\":1e30,\"blockcount\":"
			       "1.8446744073709552e19,\"len\":1000}");
	assert_int_equal(iperf3_params_parse(j, &p, &err), 0);
	cJSON_Delete(j);
	assert_true(p.num == UINT64_MAX);
	assert_true(p.blockcount == UINT64_MAX);
}

/* --gso: GSO batches from the client (and the server with -R), GRO at the
 * receiver; every datagram accounted on its own: bytes = (highest - lost +
 * duplicates) x len, and the JSON says how many went per system call */
static void test_loopback_udp_gso(void **state)
{
	struct srv_thread *s = srv_start(false);
	struct client_opts o;
	struct client *t;
	struct ll_err err;
	int niv;
	(void)state;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.port = s->port;
	o.duration = 1;
	o.udp = true;
	o.gso = true;
	o.bitrate = 200000000;
	o.blksize = 1448;
	for (int rev = 0; rev < 2; rev++) {
		o.reverse = rev;
		assert_int_equal(run_client(&o, &t, &err, &niv), CLIENT_EV_DONE);
		const struct client_summary *S = client_summary(t);
		const struct client_stream_sample *r = &S->received[0];
		int64_t got = r->packets - r->lost + (r->dups > 0 ? r->dups : 0);
		assert_true(r->packets > 5000);
		assert_true(r->lost >= 0 && r->lost <= r->packets);
		assert_true(r->bytes == (uint64_t)got * 1448);
		/* paced batches of 1 ms: 200 Mbit/s within 10 % */
		assert_true(S->sent[0].bps > 180e6 && S->sent[0].bps < 220e6);
		char *js = client_json(t);
		cJSON *j = cJSON_Parse(js);
		free(js);
		cJSON *u = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(
			cJSON_GetObjectItem(j, "end"), "streams"), 0), "udp");
		/* 200 Mbit/s: 17 datagrams of 1448 bytes per ms */
		assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(u, "gso_segs")) >= 2);
		cJSON_Delete(j);
		client_free(t);
	}
	srv_end(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cookie),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_params_check),
		cmocka_unit_test(test_results),
		cmocka_unit_test(test_udp_counted),
		cmocka_unit_test(test_udp_result_entry),
		cmocka_unit_test(test_json_huge_numbers),
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_loopback_reverse),
		cmocka_unit_test(test_loopback_udp),
		cmocka_unit_test(test_loopback_udp_gso),
		cmocka_unit_test(test_loopback_bidir),
		cmocka_unit_test(test_server_refuses),
		cmocka_unit_test(test_busy_back_to_back),
		cmocka_unit_test(test_silent_peer),
		cmocka_unit_test(test_bytes_exact),
		cmocka_unit_test(test_omit),
		cmocka_unit_test(test_oneoff_probe),
		cmocka_unit_test(test_live_reverse),
		cmocka_unit_test(test_peer_dies),
		cmocka_unit_test(test_free_bounded),
		cmocka_unit_test(test_socket_options),
		cmocka_unit_test(test_rx_lowat_trickle),
		cmocka_unit_test(test_udp_defaults),
		cmocka_unit_test(test_udp_duplicates),
		cmocka_unit_test(test_cc_check),
		cmocka_unit_test(test_not_iperf3),
		cmocka_unit_test(test_persistent_tuned),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
