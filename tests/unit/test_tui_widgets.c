/* SPDX-License-Identifier: MIT */
/* test_tui_widgets.c - the console's curses-free widget logic: the line
 * editor (pure key -> state) and the text bars (Unicode eighths / ASCII).
 * The widget sources live in src/tui/ (not linked into libcore), so they are
 * compiled in here directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/tui/bar.c"
#include "../../src/tui/lineedit.c"
#include "../../src/tui/chart.c"

static void le_type(struct lineedit *le, const char *s)
{
	while (*s)
		assert_int_equal(lineedit_key(le, (unsigned char)*s++), LE_CONTINUE);
}

static void lineedit_insert_move_delete(void **state)
{
	struct lineedit le;

	(void)state;
	lineedit_init(&le, "50");
	assert_int_equal(le.cur, 2);
	/* the initial text is fresh: a cursor key keeps it for editing */
	assert_int_equal(lineedit_key(&le, LE_END), LE_CONTINUE);
	le_type(&le, "mbit");
	assert_string_equal(le.buf, "50mbit");
	assert_int_equal(lineedit_key(&le, LE_HOME), LE_CONTINUE);
	assert_int_equal(le.cur, 0);
	le_type(&le, "1");
	assert_string_equal(le.buf, "150mbit");
	assert_int_equal(lineedit_key(&le, LE_DELETE), LE_CONTINUE);
	assert_string_equal(le.buf, "10mbit");
	lineedit_key(&le, LE_END);
	lineedit_key(&le, LE_BACKSPACE);
	lineedit_key(&le, LE_BACKSPACE);
	lineedit_key(&le, LE_BACKSPACE);
	assert_string_equal(le.buf, "10m");
	lineedit_key(&le, LE_LEFT);
	lineedit_key(&le, LE_KILL_END);
	assert_string_equal(le.buf, "10");
	lineedit_key(&le, LE_KILL_LINE);
	assert_string_equal(le.buf, "");
	assert_int_equal(le.len, 0);
	/* backspace and left at the start are harmless */
	assert_int_equal(lineedit_key(&le, LE_BACKSPACE), LE_CONTINUE);
	assert_int_equal(lineedit_key(&le, LE_LEFT), LE_CONTINUE);
	assert_int_equal(le.cur, 0);
}

/* A field opened with its value: typing replaces it (as a selected
 * field), Backspace clears it, a cursor key keeps it; an empty field
 * simply takes what is typed. */
static void lineedit_fresh_text_is_replaced(void **state)
{
	struct lineedit le;

	(void)state;
	lineedit_init(&le, "1");
	le_type(&le, "0");
	assert_string_equal(le.buf, "0");       /* not "10" */
	le_type(&le, "5");
	assert_string_equal(le.buf, "05");      /* then it inserts */
	lineedit_init(&le, "50ms");
	assert_int_equal(lineedit_key(&le, LE_BACKSPACE), LE_CONTINUE);
	assert_string_equal(le.buf, "");
	lineedit_init(&le, "50ms");
	assert_int_equal(lineedit_key(&le, LE_LEFT), LE_CONTINUE);
	le_type(&le, "0");
	assert_string_equal(le.buf, "50m0s");
	lineedit_init(&le, "50ms");
	assert_int_equal(lineedit_key(&le, LE_ENTER), LE_DONE);
	assert_string_equal(le.buf, "50ms");    /* Enter accepts it as it is */
	lineedit_init(&le, "");
	le_type(&le, "7");
	assert_string_equal(le.buf, "7");
}

static void lineedit_finish_and_limits(void **state)
{
	struct lineedit le;
	int k;

	(void)state;
	lineedit_init(&le, "x");
	assert_int_equal(lineedit_key(&le, LE_ENTER), LE_DONE);
	assert_int_equal(lineedit_key(&le, LE_ESCAPE), LE_CANCEL);
	assert_int_equal(lineedit_key(&le, 0x07), LE_IGNORED);
	assert_int_equal(lineedit_key(&le, 0x7f), LE_IGNORED);
	assert_int_equal(lineedit_key(&le, 0x100), LE_IGNORED);
	assert_string_equal(le.buf, "x");
	for (k = 0; k < 2 * LE_MAX; k++)
		lineedit_key(&le, 'a');
	assert_int_equal(le.len, LE_MAX - 1);
	assert_int_equal((int)strlen(le.buf), LE_MAX - 1);
	lineedit_window(&le, 10, &k);
	assert_int_equal(k, le.cur - 9);
	lineedit_key(&le, LE_HOME);
	lineedit_window(&le, 10, &k);
	assert_int_equal(k, 0);
}

/* A non-ASCII character typed (getch gives its UTF-8 bytes one by one) is
 * kept, so the field's check refuses it as the CLI does; editing steps over
 * whole characters. */
static void lineedit_utf8(void **state)
{
	struct lineedit le;

	(void)state;
	lineedit_init(&le, "");
	le_type(&le, "1\xef\xbc\x90" "0mbit");       /* 1, FULLWIDTH ZERO, 0mbit */
	assert_string_equal(le.buf, "1\xef\xbc\x90" "0mbit");
	assert_int_equal(le.len, 9);
	lineedit_key(&le, LE_HOME);
	lineedit_key(&le, LE_RIGHT);
	lineedit_key(&le, LE_RIGHT);                    /* over the 3 bytes */
	assert_int_equal(le.cur, 4);
	lineedit_key(&le, LE_LEFT);
	assert_int_equal(le.cur, 1);
	lineedit_key(&le, LE_DELETE);                   /* the whole character */
	assert_string_equal(le.buf, "10mbit");
	lineedit_init(&le, "a\xc3\xa9");
	lineedit_key(&le, LE_END);                      /* keep it, to edit */
	lineedit_key(&le, LE_BACKSPACE);
	assert_string_equal(le.buf, "a");
	assert_int_equal(le.cur, 1);
}

/* A full field takes whole characters only: 2-byte e-acute typed past the
 * end is dropped with its continuation byte, never cut in half; so is text
 * too long for the field at init. */
static void lineedit_full_utf8(void **state)
{
	struct lineedit le;
	char big[3 * LE_MAX];
	int k;

	(void)state;
	lineedit_init(&le, "");
	for (k = 0; k < LE_MAX; k++)
		le_type(&le, "\xc3\xa9");
	assert_int_equal(le.len, (LE_MAX - 1) / 2 * 2);
	for (k = 0; k < le.len; k += 2)
		assert_memory_equal(le.buf + k, "\xc3\xa9", 2);
	le_type(&le, "x");                       /* ASCII still fits one byte */
	assert_int_equal(le.len, LE_MAX - 1);
	assert_int_equal(le.buf[le.len - 1], 'x');
	/* the window counts columns: ten wide CJK characters and "ABC" in 16
	 * columns show the last 7 characters and the cursor cell */
	lineedit_init(&le, "");
	le_type(&le, "\xe4\xb8\x80\xe4\xba\x8c\xe4\xb8\x89\xe5\x9b\x9b\xe4\xba\x94"
		     "\xe5\x85\xad\xe4\xb8\x83\xe5\x85\xab\xe4\xb9\x9d\xe5\x8d\x81" "ABC");
	lineedit_window(&le, 16, &k);
	assert_int_equal(k, 3 * 4);                     /* from the 5th: 6 wide + ABC = 15 */
	assert_int_equal(lineedit_col(&le, k), 15);
	lineedit_key(&le, LE_HOME);
	lineedit_window(&le, 16, &k);
	assert_int_equal(k, 0);
	assert_int_equal(lineedit_col(&le, k), 0);
	memset(big, 0, sizeof(big));
	for (k = 0; k < LE_MAX; k++)
		memcpy(big + 2 * k, "\xc3\xa9", 2);
	lineedit_init(&le, big);
	assert_int_equal(le.len % 2, 0);
	assert_true(le.len >= LE_MAX - 2);
}

static void bar_ascii(void **state)
{
	char b[64];

	(void)state;
	assert_int_equal(bar_render(b, sizeof(b), 50, 100, 10, false), 5);
	assert_string_equal(b, "#####.....");
	assert_int_equal(bar_render(b, sizeof(b), 0, 100, 4, false), 0);
	assert_string_equal(b, "....");
	/* clamped above full, empty when full is 0 or value NaN-ish */
	assert_int_equal(bar_render(b, sizeof(b), 300, 100, 4, false), 4);
	assert_string_equal(b, "####");
	assert_int_equal(bar_render(b, sizeof(b), 5, 0, 3, false), 0);
	assert_string_equal(b, "...");
	assert_int_equal(bar_render(b, sizeof(b), -5, 10, 3, false), 0);
	assert_string_equal(b, "...");
}

static void bar_utf8_eighths(void **state)
{
	char b[64];

	(void)state;
	/* 1/4 of 2 cells = 4 eighths: half block then one shade cell */
	assert_int_equal(bar_render(b, sizeof(b), 1, 4, 2, true), 0);
	assert_string_equal(b, "\u258c\u2591");
	/* 9/16 of 2 cells = 9 eighths: a full block and 1/8 */
	assert_int_equal(bar_render(b, sizeof(b), 9, 16, 2, true), 1);
	assert_string_equal(b, "\u2588\u258f");
	assert_int_equal(bar_render(b, sizeof(b), 1, 1, 3, true), 3);
	assert_string_equal(b, "\u2588\u2588\u2588");
	/* a too-small buffer never overflows and stays terminated */
	assert_int_equal(bar_render(b, 4, 1, 1, 3, true), 3);
	assert_string_equal(b, "\u2588");
}

static void spark_levels(void **state)
{
	const double v[5] = { 0, 1, 4, 8, 100 };
	char b[64];

	(void)state;
	assert_int_equal(bar_spark(b, sizeof(b), v, 5, 8, false), 5);
	assert_string_equal(b, " .=##");
	assert_int_equal(bar_spark(b, sizeof(b), v, 5, 8, true), 5);
	assert_string_equal(b, " \u2582\u2585\u2588\u2588");
	/* stops at the buffer's end, still terminated */
	assert_int_equal(bar_spark(b, 7, v, 5, 8, true), 2);
	assert_string_equal(b, " \u2582");
	assert_int_equal(bar_spark(b, sizeof(b), v, 3, 0, false), 3);
	assert_string_equal(b, "   ");
}


static void chart_ramp_ascii(void **state)
{
	double v[4] = { 1, 2, 3, 4 };
	char b[4][32], *rows[4] = { b[0], b[1], b[2], b[3] };

	(void)state;
	/* slow start: a ramp to full scale in 4 rows of 6 columns */
	assert_int_equal(chart_render(rows, sizeof(b[0]), 4, 6, v, 4, 4, 0, false), 4);
	assert_string_equal(b[0], "   #  ");
	assert_string_equal(b[1], "  ##  ");
	assert_string_equal(b[2], " ###  ");
	assert_string_equal(b[3], "####  ");
	/* more values than columns: the latest ones, right-aligned in time */
	assert_int_equal(chart_render(rows, sizeof(b[0]), 4, 2, v, 4, 4, 0, false), 2);
	assert_string_equal(b[0], " #");
	assert_string_equal(b[3], "##");
}

static void chart_mark_and_utf8(void **state)
{
	double v[3] = { 0.5, 2, 8 };
	char b[2][64], *rows[2] = { b[0], b[1] };

	(void)state;
	/* a rule at 3 of 4 (the top row) in the cells left empty */
	chart_render(rows, sizeof(b[0]), 2, 5, v, 2, 4, 3, false);
	assert_string_equal(b[0], "-----");
	assert_string_equal(b[1], ".#   ");
	/* over full scale is clamped; UTF-8 eighths for partial cells */
	chart_render(rows, sizeof(b[0]), 2, 3, v, 3, 4, 0, true);
	assert_string_equal(b[0], "  \u2588");
	assert_string_equal(b[1], "\u2582\u2588\u2588");
	/* no values, zero scale: blank rows, nothing drawn */
	assert_int_equal(chart_render(rows, sizeof(b[0]), 2, 3, v, 0, 0, 0, false), 0);
	assert_string_equal(b[0], "   ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chart_ramp_ascii),
		cmocka_unit_test(chart_mark_and_utf8),
		cmocka_unit_test(lineedit_insert_move_delete),
		cmocka_unit_test(lineedit_fresh_text_is_replaced),
		cmocka_unit_test(lineedit_finish_and_limits),
		cmocka_unit_test(lineedit_utf8),
		cmocka_unit_test(lineedit_full_utf8),
		cmocka_unit_test(bar_ascii),
		cmocka_unit_test(bar_utf8_eighths),
		cmocka_unit_test(spark_levels),
	};

	return cmocka_run_group_tests_name("tui_widgets", tests, NULL, NULL);
}
