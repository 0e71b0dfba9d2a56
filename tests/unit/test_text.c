/* SPDX-License-Identifier: MIT */
/* test_text.c - visible escapes for untrusted text (text.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "linklab/base/text.h"

static void test_escapes(void **state)
{
	char b[128];

	(void)state;
	assert_string_equal(text_sanitize("\x1b]2;PWN\a\x1b[2J", b, sizeof(b)),
			    "\\x1b]2;PWN\\x07\\x1b[2J");
	assert_string_equal(text_sanitize("a\nb\tc\rd\x7f", b, sizeof(b)),
			    "a\\x0ab\\x09c\\x0dd\\x7f");
	/* C1 CSI as UTF-8 (U+009B) and as a raw byte */
	assert_string_equal(text_sanitize("x\xc2\x9b" "2J\x9b", b, sizeof(b)),
			    "x\\xc2\\x9b2J\\x9b");
	assert_string_equal(text_sanitize(NULL, b, sizeof(b)), "");
}

static void test_utf8_kept_and_invalid(void **state)
{
	char b[128];

	(void)state;
	/* é, fullwidth zero, emoji: valid, kept */
	assert_string_equal(text_sanitize("caf\xc3\xa9 1\xef\xbc\x90" "0 \xf0\x9f\x98\x80",
					  b, sizeof(b)),
			    "caf\xc3\xa9 1\xef\xbc\x90" "0 \xf0\x9f\x98\x80");
	/* overlong '/', surrogate, > U+10FFFF, lone continuation, cut */
	assert_string_equal(text_sanitize("\xc0\xaf", b, sizeof(b)), "\\xc0\\xaf");
	assert_string_equal(text_sanitize("\xed\xa0\x80", b, sizeof(b)),
			    "\\xed\\xa0\\x80");
	assert_string_equal(text_sanitize("\xf4\x90\x80\x80", b, sizeof(b)),
			    "\\xf4\\x90\\x80\\x80");
	assert_string_equal(text_sanitize("\x80z", b, sizeof(b)), "\\x80z");
	assert_string_equal(text_sanitize("ab\xe2\x82", b, sizeof(b)), "ab\\xe2\\x82");
	assert_true(text_is_safe("eth0 caf\xc3\xa9", 0));
	assert_true(text_is_safe("a\x1b", TEXT_KEEP_C0));
	assert_false(text_is_safe("eth\x1b", 0));
	assert_false(text_is_safe("\xc2\x85", TEXT_KEEP_C0));
	assert_false(text_is_safe("\xff", 0));
}

/* Bidi controls are escaped byte by byte like C1; their neighbours stay. */
static void test_bidi(void **state)
{
	static const char *const bidi[] = {
		"\xd8\x9c", "\xe2\x80\x8e", "\xe2\x80\x8f", "\xe2\x80\xaa",
		"\xe2\x80\xab", "\xe2\x80\xac", "\xe2\x80\xad", "\xe2\x80\xae",
		"\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9",
	};
	char b[64], want[64];
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(bidi) / sizeof(bidi[0]); i++) {
		char in[16];
		size_t o;

		snprintf(in, sizeof(in), "a%sb", bidi[i]);
		o = (size_t)snprintf(want, sizeof(want), "a");
		for (k = 0; bidi[i][k]; k++)
			o += (size_t)snprintf(want + o, sizeof(want) - o, "\\x%02x",
					      (unsigned char)bidi[i][k]);
		snprintf(want + o, sizeof(want) - o, "b");
		assert_string_equal(text_sanitize(in, b, sizeof(b)), want);
		assert_false(text_is_safe(in, 0));
	}
	/* the neighbours of the ranges pass: U+2029, U+202F, U+206A,
	 * U+200D (ZWJ), U+061B */
	assert_string_equal(text_sanitize("\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xaa\xe2\x80\x8d\xd8\x9b",
					  b, sizeof(b)),
			    "\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xaa\xe2\x80\x8d\xd8\x9b");
	assert_true(text_is_safe("\xe2\x80\xaf", 0));
}

static void test_bounds_and_flags(void **state)
{
	char b[8];
	char big[64];
	size_t used;

	(void)state;
	/* cut at a character boundary, never half an escape */
	assert_string_equal(text_sanitize("ab\x1b\x1b", b, sizeof(b)), "ab\\x1b");
	assert_string_equal(text_sanitize("abcdefghij", b, sizeof(b)), "abcdefg");
	/* keep newlines and tabs only when asked */
	used = text_sanitize_n("a\nb\t\x1b", 5, big, sizeof(big), TEXT_KEEP_NL);
	assert_int_equal(used, 5);
	assert_string_equal(big, "a\nb\t\\x1b");
	/* a partial trailing sequence stays for the next chunk */
	used = text_sanitize_n("ok\xe2\x82", 4, big, sizeof(big), TEXT_PARTIAL);
	assert_int_equal(used, 2);
	assert_string_equal(big, "ok");
	/* an invalid byte is not "partial" */
	used = text_sanitize_n("ok\xff", 3, big, sizeof(big), TEXT_PARTIAL);
	assert_int_equal(used, 3);
	assert_string_equal(big, "ok\\xff");
	/* embedded NUL shown */
	used = text_sanitize_n("a\0b", 3, big, sizeof(big), 0);
	assert_string_equal(big, "a\\x00b");
	/* for a JSON encoder: C0 stays, DEL and C1 do not */
	text_sanitize_n("\x1b[\x7f\xc2\x9b", 5, big, sizeof(big), TEXT_KEEP_C0);
	assert_string_equal(big, "\x1b[\\x7f\\xc2\\x9b");
}

/* Columns on screen, not bytes: escapes as shown, accents, wide CJK and
 * emoji, combining marks. */
static void test_width(void **state)
{
	char b[64];

	(void)state;
	assert_int_equal(text_width(""), 0);
	assert_int_equal(text_width(NULL), 0);
	assert_int_equal(text_width("plain"), 5);
	assert_int_equal(text_width("caf\xc3\xa9"), 4);                 /* 5 bytes */
	assert_int_equal(text_width("\xe6\x97\xa5\xe6\x9c\xac"), 4);     /* 2 wide */
	assert_int_equal(text_width("e\xcc\x81"), 1);                   /* e + U+0301 */
	assert_int_equal(text_width("\xf0\x9f\x98\x80"), 2);             /* emoji */
	assert_int_equal(text_width("\xef\xbc\x90"), 2);                 /* fullwidth 0 */
	/* a name with ESC, as shown */
	assert_int_equal(text_width(text_sanitize("x\x1by", b, sizeof(b))), 6);
}

/* A prefix that fits so many columns: never inside a UTF-8 sequence nor
 * half of a wide character. */
static void test_fit(void **state)
{
	(void)state;
	assert_int_equal(text_fit(NULL, 5), 0);
	assert_int_equal(text_fit("plain", 0), 0);
	assert_int_equal(text_fit("plain", 3), 3);
	assert_int_equal(text_fit("plain", 9), 5);
	assert_int_equal(text_fit("\xc3\xa9\xc3\xa9\xc3\xa9", 2), 4);   /* 2 of 3 e-acute */
	assert_int_equal(text_fit("\xe6\x97\xa5\xe6\x9c\xac", 3), 3);   /* 1 wide, not 1.5 */
	assert_int_equal(text_fit("e\xcc\x81x", 1), 3);                /* the mark stays */
	assert_int_equal(text_fit("\xf0\x9f\x98\x80", 1), 0);         /* emoji needs 2 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_utf8_kept_and_invalid),
		cmocka_unit_test(test_bounds_and_flags),
		cmocka_unit_test(test_bidi),
		cmocka_unit_test(test_width),
		cmocka_unit_test(test_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
