/* SPDX-License-Identifier: MIT */
/* test_middle.c - the middle box protocol (middle.h): STATE and reply
 * parsing, set request building, and the path with the bridge folded in
 * (console_path_compute_mid). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the project's headers first: cmocka.h defines client_free as a macro */
#include "linklab/console/console.h"
#include "linklab/console/console_dial.h"
#include "linklab/console/middle.h"
#include "linklab/base/units.h"

#include <cmocka.h>

/* A STATE as the contract gives it: the user engine, delay on A->B, rate and
 * loss on B->A, drops as an object on one side and a number on the other. */
static const char *const state_json =
	"{\"pid\":4242,\"engine\":\"user\",\"if_a\":\"veth-ma\",\"if_b\":\"veth-mb\","
	"\"a_to_b\":{\"dial\":\"delay 40ms\",\"fields\":{\"delay\":\"40ms\"},"
	"\"rx_packets\":10,\"rx_bytes\":15000,\"tx_packets\":9,\"tx_bytes\":13500,"
	"\"lost\":1,\"duplicated\":2,\"corrupted\":3,\"reordered\":4,"
	"\"drops\":{\"limit\":5,\"rate\":6,\"socket\":7}},"
	"\"b_to_a\":{\"dial\":\"rate 10mbit loss 1%\",\"fields\":{\"rate\":\"10mbit\",\"loss\":\"1%\"},"
	"\"rx_packets\":20,\"rx_bytes\":30000,\"tx_packets\":20,\"tx_bytes\":30000,"
	"\"lost\":0,\"duplicated\":0,\"corrupted\":0,\"reordered\":0,\"drops\":8}}";

static void parses_state(void **state)
{
	struct middle_state st;
	struct ll_err e = { 0 };
	const struct middle_dir *ab, *ba;

	(void)state;
	assert_int_equal(middle_parse_state(state_json, &st, &e), 0);
	assert_int_equal(st.pid, 4242);
	assert_string_equal(st.engine, "user");
	assert_string_equal(st.if_a, "veth-ma");
	assert_string_equal(st.if_b, "veth-mb");
	ab = &st.dir[MIDDLE_AB];
	ba = &st.dir[MIDDLE_BA];
	assert_string_equal(ab->dial, "delay 40ms");
	assert_int_equal(ab->nfields, 1);
	assert_true(ab->fields.set & IMP_DELAY);
	assert_int_equal(ab->fields.delay, 40000000);
	assert_false(ab->fields.set & IMP_RATE);
	assert_string_equal(ab->unparsed, "");
	assert_int_equal(ab->rx_packets, 10);
	assert_int_equal(ab->rx_bytes, 15000);
	assert_int_equal(ab->tx_packets, 9);
	assert_int_equal(ab->tx_bytes, 13500);
	assert_int_equal(ab->lost, 1);
	assert_int_equal(ab->duplicated, 2);
	assert_int_equal(ab->corrupted, 3);
	assert_int_equal(ab->reordered, 4);
	assert_int_equal(ab->drops, 5 + 6 + 7);     /* an object: summed */
	assert_int_equal(ba->drops, 8);             /* a number */
	assert_true(ba->fields.set & IMP_RATE);
	assert_int_equal(ba->fields.rate, 10000000);
	assert_true(ba->fields.set & IMP_LOSS);
	assert_int_equal(ba->fields.loss, units_percent_to_prob(1));
	assert_int_equal(ba->nfields, 2);
}

static void state_fields_not_understood_are_kept_as_text(void **state)
{
	struct middle_state st;
	struct ll_err e = { 0 };

	(void)state;
	assert_int_equal(middle_parse_state(
		"{\"engine\":\"kernel\",\"if_a\":\"a\",\"if_b\":\"b\","
		"\"a_to_b\":{\"fields\":{\"warp\":\"9\",\"delay\":\"5ms\"}},\"b_to_a\":{}}",
		&st, &e), 0);
	assert_string_equal(st.engine, "kernel");
	assert_int_equal(st.pid, 0);
	assert_string_equal(st.dir[MIDDLE_AB].unparsed, "warp=9");
	assert_int_equal(st.dir[MIDDLE_AB].fields.delay, 5000000);
	assert_int_equal(st.dir[MIDDLE_AB].nfields, 2);
	/* counters missing: 0 */
	assert_int_equal(st.dir[MIDDLE_BA].rx_bytes, 0);
	assert_int_equal(st.dir[MIDDLE_BA].nfields, 0);
	assert_true(impair_is_empty(&st.dir[MIDDLE_BA].fields));
}

static void bad_state_is_refused(void **state)
{
	struct middle_state st;
	struct ll_err e = { 0 };

	(void)state;
	memset(&st, 0x5a, sizeof(st));
	assert_int_equal(middle_parse_state("no linklab bridge runs", &st, &e), -EPROTO);
	assert_non_null(strstr(e.msg, "not JSON"));
	assert_int_equal(middle_parse_state("{\"engine\":\"user\",\"if_a\":\"a\",\"if_b\":\"b\","
					    "\"a_to_b\":{}}", &st, &e), -EPROTO);
	assert_non_null(strstr(e.msg, "b_to_a"));
	assert_int_equal(middle_parse_state("{\"if_a\":\"a\"}", &st, &e), -EPROTO);
	assert_non_null(strstr(e.msg, "engine"));
	assert_int_equal(middle_parse_state("[1,2]", &st, &e), -EPROTO);
	assert_int_equal(middle_parse_state("{\"engine\":\"user\",\"if_a\":\"a\",\"if_b\":\"b\","
					    "\"a_to_b\":{\"fields\":[1]},\"b_to_a\":{}}", &st, &e),
			 -EPROTO);
	assert_non_null(strstr(e.msg, "fields"));
}

static void parses_replies(void **state)
{
	struct middle_state st;
	struct ll_err e = { 0 };
	char line[2048];

	(void)state;
	snprintf(line, sizeof(line), "{\"ok\":true,\"state\":%s}", state_json);
	assert_int_equal(middle_parse_reply(line, &st, &e), 0);
	assert_int_equal(st.dir[MIDDLE_AB].fields.delay, 40000000);
	assert_string_equal(st.warnings, "");
	assert_int_equal(st.leased_by, 0);
	/* warnings come with a successful reply; leased_by names the holder */
	snprintf(line, sizeof(line), "{\"ok\":true,\"state\":%.*s,\"leased_by\":77},"
		 "\"warnings\":[\"loss: 100%% drops every frame\",\"w2\"]}",
		 (int)strlen(state_json) - 1, state_json);
	assert_int_equal(middle_parse_reply(line, &st, &e), 0);
	assert_string_equal(st.warnings, "loss: 100% drops every frame; w2");
	assert_int_equal(st.leased_by, 77);
	/* a refusal: every error joined, st untouched */
	memset(&st, 0, sizeof(st));
	assert_int_equal(middle_parse_reply(
		"{\"ok\":false,\"errors\":[\"loss: 150% is out of range (0% .. 100%)\","
		"\"delay: 999s is out of range (0 .. 274s)\"]}", &st, &e), -EINVAL);
	assert_string_equal(e.msg, "loss: 150% is out of range (0% .. 100%); "
			    "delay: 999s is out of range (0 .. 274s)");
	assert_string_equal(st.engine, "");
	assert_int_equal(middle_parse_reply("{\"ok\":false}", &st, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "refused"));
	assert_int_equal(middle_parse_reply("{\"state\":{}}", &st, &e), -EPROTO);
	assert_int_equal(middle_parse_reply("{\"ok\":true,\"state\":{}}", &st, &e), -EPROTO);
	assert_int_equal(middle_parse_reply("", &st, &e), -EPROTO);
}

static void builds_set_requests(void **state)
{
	struct impair d, none;
	struct ll_diag diag;
	struct middle_state st;
	struct ll_err e = { 0 };
	char *r;

	(void)state;
	memset(&d, 0, sizeof(d));
	memset(&none, 0, sizeof(none));
	ll_diag_clear(&diag);
	assert_int_equal(impair_set(&d, "delay", "40ms", &diag), 0);
	assert_int_equal(impair_set(&d, "loss", "0.5%", &diag), 0);
	r = middle_set_request(&d, NULL);
	assert_non_null(r);
	assert_string_equal(r, "{\"op\":\"set\",\"a_to_b\":{\"delay\":\"40ms\",\"loss\":\"0.5%\"}}");
	free(r);
	/* an empty dial clears that direction: {} */
	r = middle_set_request(NULL, &none);
	assert_string_equal(r, "{\"op\":\"set\",\"b_to_a\":{}}");
	free(r);
	r = middle_set_request(&d, &d);
	assert_non_null(strstr(r, "\"a_to_b\":{\"delay\":\"40ms\""));
	assert_non_null(strstr(r, "\"b_to_a\":{\"delay\":\"40ms\""));
	free(r);
	/* what STATE gives back as fields goes out unchanged (quit's restore) */
	assert_int_equal(middle_parse_state(state_json, &st, &e), 0);
	r = middle_set_request(&st.dir[MIDDLE_AB].fields, &st.dir[MIDDLE_BA].fields);
	assert_non_null(strstr(r, "\"a_to_b\":{\"delay\":\"40ms\"}"));
	assert_non_null(strstr(r, "\"rate\":\"10mbit\""));
	assert_non_null(strstr(r, "\"loss\":\"1%\""));
	free(r);
}

static void path_includes_the_bridge(void **state)
{
	struct impair a, mab, mba;
	struct console_path p;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&mab, 0, sizeof(mab));
	memset(&mba, 0, sizeof(mba));
	a.set = IMP_RATE | IMP_DELAY | IMP_LOSS;
	a.rate = 50000000;
	a.delay = 10000000;
	a.loss = units_percent_to_prob(1);
	mab.set = IMP_RATE | IMP_DELAY | IMP_LOSS;
	mab.rate = 20000000;
	mab.delay = 40000000;
	mab.loss = units_percent_to_prob(2);
	mba.set = IMP_DELAY;
	mba.delay = 5000000;
	console_path_compute_mid(&a, NULL, &mab, &mba, &p);
	assert_true(p.valid);
	assert_int_equal(p.rate_ab, 20000000);     /* the lowest rate */
	assert_int_equal(p.delay_ab, 50000000);    /* delays add up */
	assert_int_equal(p.delay_ba, 5000000);
	assert_int_equal(p.rtt_added, 55000000);
	assert_true(fabs(p.loss_ab - (1 - 0.99 * 0.98)) < 1e-6);
	assert_non_null(strstr(p.line, "A->B 20mbit/50ms/2.98%"));
	assert_non_null(strstr(p.line, "B->A unshaped/5ms/0%"));
	assert_non_null(strstr(p.line, "(bridge included)"));
	/* the bridge alone is a path too */
	console_path_compute_mid(NULL, NULL, &mab, NULL, &p);
	assert_true(p.valid);
	assert_int_equal(p.delay_ab, 40000000);
	/* without a bridge: exactly console_path_compute */
	{
		struct console_path q;

		console_path_compute_mid(&a, NULL, NULL, NULL, &p);
		console_path_compute(&a, NULL, &q);
		assert_string_equal(p.line, q.line);
		assert_null(strstr(p.line, "bridge"));
	}
}

/* Replies come in request order: a get sent by the tick, then a set the
 * user asked for: the first reply line is the get's (dropped by
 * middle_set), the second the set's. */
static void replies_match_requests_in_order(void **state)
{
	struct middle_inflight q;
	int i;

	(void)state;
	memset(&q, 0, sizeof(q));
	assert_false(middle_inflight_has(&q, MIDDLE_REQ_GET));
	assert_int_equal(middle_inflight_pop(&q), MIDDLE_REQ_NONE);  /* unasked line */
	assert_int_equal(middle_inflight_push(&q, MIDDLE_REQ_GET), 0);
	assert_int_equal(middle_inflight_push(&q, MIDDLE_REQ_SET), 0);
	assert_true(middle_inflight_has(&q, MIDDLE_REQ_GET));
	assert_true(middle_inflight_has(&q, MIDDLE_REQ_SET));
	assert_int_equal(middle_inflight_pop(&q), MIDDLE_REQ_GET);
	assert_false(middle_inflight_has(&q, MIDDLE_REQ_GET));
	assert_true(middle_inflight_has(&q, MIDDLE_REQ_SET));
	assert_int_equal(middle_inflight_pop(&q), MIDDLE_REQ_SET);
	assert_int_equal(q.n, 0);
	assert_int_equal(middle_inflight_pop(&q), MIDDLE_REQ_NONE);
	/* bounded: the fifth waiting request is refused, the order kept */
	for (i = 0; i < MIDDLE_INFLIGHT_MAX; i++)
		assert_int_equal(middle_inflight_push(&q, i % 2 ? MIDDLE_REQ_SET : MIDDLE_REQ_GET), 0);
	assert_int_equal(middle_inflight_push(&q, MIDDLE_REQ_GET), -EBUSY);
	for (i = 0; i < MIDDLE_INFLIGHT_MAX; i++)
		assert_int_equal(middle_inflight_pop(&q), i % 2 ? MIDDLE_REQ_SET : MIDDLE_REQ_GET);
	assert_int_equal(middle_inflight_pop(&q), MIDDLE_REQ_NONE);
}

/* A long reply comes in 4096-byte pieces: complete only at the short last
 * piece, or at exactly 4096 bytes when that is whole JSON already. */
static void long_reply_lines_are_assembled(void **state)
{
	const size_t cap = 65536;
	char *line = calloc(1, cap);
	size_t n;

	(void)state;
	assert_non_null(line);
	strcpy(line, "{\"ok\":true}");
	assert_true(middle_line_complete(line, strlen(line), (int)strlen(line), cap));
	/* the first 4096 bytes of a longer line: not JSON yet, goes on */
	n = 0;
	n += (size_t)snprintf(line, cap, "{\"ok\":true,\"pad\":\"");
	memset(line + n, 'x', 4096 - n);
	n = 4096;
	line[n] = '\0';
	assert_false(middle_line_complete(line, n, 4096, cap));
	/* its tail, shorter than a piece: complete */
	strcpy(line + n, "\"}");
	n += 2;
	assert_true(middle_line_complete(line, n, 2, cap));
	/* a line of exactly 4096 bytes that is whole JSON: complete */
	memset(line, 0, cap);
	n = (size_t)snprintf(line, cap, "{\"pad\":\"");
	memset(line + n, 'y', 4096 - n - 2);
	strcpy(line + 4096 - 2, "\"}");
	assert_int_equal(strlen(line), 4096);
	assert_true(middle_line_complete(line, 4096, 4096, cap));
	/* the buffer is full: complete (the rest is not read into it) */
	memset(line, 'z', cap - 1);
	line[cap - 1] = '\0';
	assert_true(middle_line_complete(line, cap - 1, 4096, cap));
	free(line);
}

/* What `linklab bridge --status -J` left over SSH becomes a STATE or the
 * reason why not: linklab missing, no bridge, another failure. */
static void status_outcomes(void **state)
{
	struct middle_state st;
	struct ll_err e = { 0 };

	(void)state;
	assert_int_equal(middle_parse_status(state_json, "", 0, &st, &e), 0);
	assert_int_equal(st.dir[MIDDLE_AB].fields.delay, 40000000);
	assert_int_equal(middle_parse_status("", "sh: 1: linklab: not found\n", 127, &st, &e),
			 -ENOENT);
	assert_string_equal(e.msg, "linklab not found on its PATH (sh: 1: linklab: not found)");
	assert_int_equal(middle_parse_status("", "bash: linklab: command not found", 127,
					     &st, &e), -ENOENT);
	assert_int_equal(middle_parse_status(
		"{\"error\": \"no linklab bridge runs in this network namespace\", \"errors\": []}",
		"linklab bridge: no linklab bridge runs in this network namespace\n", 1, &st, &e),
		-ESRCH);
	assert_string_equal(e.msg, "no linklab bridge runs there");
	assert_int_equal(middle_parse_status("", "linklab bridge: several bridges run (pids 1, 2): "
					     "give --pid N\nsee\n", 1, &st, &e), -EPROTO);
	assert_string_equal(e.msg, "linklab bridge --status: exit 1: linklab bridge: several "
			    "bridges run (pids 1, 2): give --pid N");
	assert_int_equal(middle_parse_status("not json", "", 0, &st, &e), -EPROTO);
	/* remote text reaches a terminal: escapes shown, not sent */
	assert_int_equal(middle_parse_status("", "\x1b]2;PWN\x07 broke\n", 1, &st, &e), -EPROTO);
	assert_string_equal(e.msg, "linklab bridge --status: exit 1: \\x1b]2;PWN\\x07 broke");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_state),
		cmocka_unit_test(status_outcomes),
		cmocka_unit_test(state_fields_not_understood_are_kept_as_text),
		cmocka_unit_test(bad_state_is_refused),
		cmocka_unit_test(parses_replies),
		cmocka_unit_test(builds_set_requests),
		cmocka_unit_test(path_includes_the_bridge),
		cmocka_unit_test(replies_match_requests_in_order),
		cmocka_unit_test(long_reply_lines_are_assembled),
	};
	return cmocka_run_group_tests_name("middle", tests, NULL, NULL);
}
