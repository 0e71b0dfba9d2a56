/* SPDX-License-Identifier: MIT */
/* test_cmd.c - the commands' shared input checks: an option given
 * twice is refused naming it and both values (cmd_seen_twice and the peer
 * options), and printed JSON carries no raw DEL/C1/invalid UTF-8. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "linklab/cli/cmd.h"

static void test_seen_twice(void **state)
{
	struct cmd_seen s = { 0 };
	struct ll_diag d;

	(void)state;
	ll_diag_clear(&d);
	assert_false(cmd_seen_twice(&s, "--rate", 6, "10mbit", &d));
	assert_false(cmd_seen_twice(&s, "--delay=5ms", 7, "5ms", &d));
	assert_false(cmd_seen_twice(&s, "--a-to-b-rate", 13, "1mbit", &d));
	assert_true(cmd_seen_twice(&s, "--rate=20mbit", 6, "20mbit", &d));
	assert_true(cmd_seen_twice(&s, "--delay", 7, "9ms", &d));
	assert_int_equal(d.nerrors, 2);
	assert_string_equal(d.e[0].text,
			    "option --rate given twice ('10mbit', then '20mbit'): give it once");
	assert_string_equal(d.e[0].field, "rate");
	assert_string_equal(d.e[1].text,
			    "option --delay given twice ('5ms', then '9ms'): give it once");
}

static void test_peer_opts_twice(void **state)
{
	char *argv[] = { (char *)"x", (char *)"--peer", (char *)"a", (char *)"--peer=b",
			 (char *)"--dev", (char *)"e0", (char *)"--revert-after", (char *)"5",
			 (char *)"--revert-after=6", NULL };
	struct peerset_opts o = { 0 };
	struct ll_err e = { 0 };
	int i = 1;

	(void)state;
	assert_int_equal(peerset_parse_opt(&o, 9, argv, &i, &e), 1);
	i++;
	assert_int_equal(peerset_parse_opt(&o, 9, argv, &i, &e), -EINVAL);
	assert_string_equal(e.msg, "option --peer given twice ('a', then 'b'): give it once");
	assert_string_equal(o.peer, "a");
	i++;
	assert_int_equal(peerset_parse_opt(&o, 9, argv, &i, &e), 1);
	i++;
	assert_int_equal(peerset_parse_opt(&o, 9, argv, &i, &e), 1);
	i++;
	assert_int_equal(peerset_parse_opt(&o, 9, argv, &i, &e), -EINVAL);
	assert_string_equal(e.msg,
			    "option --revert-after given twice ('5', then '6'): give it once");
	assert_int_equal(o.revert_after, 5);
}

static void test_json_sanitize(void **state)
{
	cJSON *doc = cJSON_CreateObject(), *arr = cJSON_CreateArray();
	char *txt;

	(void)state;
	cJSON_AddStringToObject(doc, "name", "e\x1b]2;PWN\x07");      /* C0: cJSON escapes */
	cJSON_AddStringToObject(doc, "desc", "a\x7f" "b\xc2\x9b" "c\xff");
	cJSON_AddItemToArray(arr, cJSON_CreateString("caf\xc3\xa9"));
	cJSON_AddItemToObject(doc, "k\x9b", arr);
	cmd_json_sanitize(doc);
	txt = cJSON_PrintUnformatted(doc);
	assert_non_null(txt);
	assert_string_equal(txt, "{\"name\":\"e\\u001b]2;PWN\\u0007\","
			    "\"desc\":\"a\\\\x7fb\\\\xc2\\\\x9bc\\\\xff\","
			    "\"k\\\\x9b\":[\"caf\xc3\xa9\"]}");
	/* the text form: parsed, sanitized, printed again */
	free(txt);
	txt = strdup("{\"e\":\"x\x7f\"}");
	txt = cmd_json_text_safe(txt, false);
	assert_string_equal(txt, "{\"e\":\"x\\\\x7f\"}");
	free(txt);
	txt = strdup("{\"e\":\"plain\"}");
	txt = cmd_json_text_safe(txt, false);
	assert_string_equal(txt, "{\"e\":\"plain\"}");
	free(txt);
	cJSON_Delete(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seen_twice),
		cmocka_unit_test(test_peer_opts_twice),
		cmocka_unit_test(test_json_sanitize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
