/* SPDX-License-Identifier: MIT */
/* test_tui_keys.c - the console's key handlers without a terminal: they
 * only change screen state and return what must happen (redraw, quit, an
 * intent for the controller). The tui sources live in src/tui/ (not in
 * libcore), so they are compiled in here; no curses screen is started. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/tui/tui.c"
#include "../../src/tui/screen_dial.c"
#include "../../src/tui/screen_peers.c"
#include "../../src/tui/screen_test.c"
#include "../../src/tui/lineedit.c"
#include "../../src/tui/bar.c"
#include "../../src/tui/chart.c"
#include "../../src/tui/screen_help.c"
#include "../../src/tui/screen_profiles.c"

#include <cmocka.h>

struct kfix {
	struct tui t;
	struct console_view v;
	struct console_intent in;
};

static struct kfix *kfix_new(void)
{
	struct kfix *k = calloc(1, sizeof(*k));
	int s;

	assert_non_null(k);
	k->t.screen = TS_PEERS;
	k->t.req.streams = 1;
	k->t.req.duration = 10;
	k->t.req.interval = 1;
	for (s = 0; s < 2; s++) {
		struct console_side_view *sv = &k->v.side[s];

		sv->present = true;
		sv->links.n = 3;
		strcpy(sv->links.l[0].name, "lo");
		strcpy(sv->links.l[1].name, s ? "veth-b" : "veth-a");
		strcpy(sv->links.l[2].name, "eth9");
		sv->sel = 1;
	}
	k->v.dial_sides = CONSOLE_BOTH;
	return k;
}

/* Feed a string of keys; returns the result of the last one. */
static int feed(struct kfix *k, const char *keys)
{
	int r = 0;

	for (; *keys; keys++)
		r = tui_key(&k->t, (unsigned char)*keys, &k->v, &k->in);
	return r;
}

static void global_keys(void **state)
{
	struct kfix *k = kfix_new();

	(void)state;
	assert_int_equal(feed(k, "q"), TR_QUIT);
	assert_int_equal(feed(k, "d"), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_DIAL);
	assert_int_equal(feed(k, "t"), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_TEST);
	assert_int_equal(feed(k, "?"), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_HELP);
	assert_int_equal(feed(k, "?"), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_TEST);
	assert_int_equal(feed(k, "\033"), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_PEERS);
	assert_int_equal(feed(k, "c"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_CLEAR);
	assert_int_equal(k->in.sides, CONSOLE_BOTH);
	assert_int_equal(feed(k, "r"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_REFRESH);
	assert_int_equal(tui_key(&k->t, KEY_RESIZE, &k->v, &k->in), TR_REDRAW);
	free(k);
}

static void peers_select_and_panes(void **state)
{
	struct kfix *k = kfix_new();

	(void)state;
	assert_int_equal(feed(k, "j"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_SELECT);
	assert_int_equal(k->in.side, CONSOLE_IDX_A);
	assert_int_equal(k->in.index, 2);
	/* clamped at the end of the list */
	k->v.side[0].sel = 2;
	feed(k, "j");
	assert_int_equal(k->in.index, 2);
	assert_int_equal(feed(k, "\t"), TR_REDRAW);
	assert_int_equal(k->t.focus, 1);
	feed(k, "k");
	assert_int_equal(k->in.kind, CI_SELECT);
	assert_int_equal(k->in.side, CONSOLE_IDX_B);
	assert_int_equal(k->in.index, 0);
	assert_int_equal(tui_key(&k->t, KEY_LEFT, &k->v, &k->in), TR_REDRAW);
	assert_int_equal(k->t.focus, 0);
	/* no peer B: nothing to select there */
	k->v.side[1].present = false;
	feed(k, "l");
	assert_int_equal(feed(k, "j"), TR_NONE);
	free(k);
}

static void dial_edit_validate_apply(void **state)
{
	struct kfix *k = kfix_new();

	(void)state;
	feed(k, "d");
	/* a bad value: message names the field, editor stays open */
	feed(k, "e50xyz\r");
	assert_true(k->t.editing);
	assert_true(k->t.dial_msg_err);
	assert_non_null(strstr(k->t.dial_msg, "rate"));
	assert_non_null(strstr(k->t.dial_msg, "50xyz"));
	/* keys typed while editing are not global keys ('q', 'd', 'c') */
	assert_int_equal(tui_key(&k->t, 21, &k->v, &k->in), TR_REDRAW); /* ^U */
	assert_int_equal(feed(k, "50mbit"), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_DIAL);
	feed(k, "\r");
	assert_false(k->t.editing);
	assert_false(k->t.dial_msg_err);
	assert_true(k->t.dial.set & IMP_RATE);
	assert_int_equal(k->t.dial.rate, 50000000);
	/* a preset on the delay row, then Enter applies to both */
	feed(k, "jl");
	assert_true(k->t.dial.set & IMP_DELAY);
	assert_int_equal(k->t.dial.delay, 10000000);
	assert_int_equal(feed(k, "\r"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_APPLY);
	assert_int_equal(k->in.sides, CONSOLE_BOTH);
	assert_int_equal(k->in.dial.rate, 50000000);
	assert_int_equal(k->in.dial.delay, 10000000);
	/* unset delay with x; target row cycles both -> A -> B */
	feed(k, "x");
	assert_false(k->t.dial.set & IMP_DELAY);
	assert_true(k->t.dial.set & IMP_RATE);
	feed(k, "kkkl");   /* up past the top: [ Apply ], then target */
	assert_int_equal(k->t.dial_sides, CONSOLE_A);
	feed(k, "l");
	assert_int_equal(k->t.dial_sides, CONSOLE_B);
	feed(k, "\r");
	assert_int_equal(k->in.kind, CI_APPLY);
	assert_int_equal(k->in.sides, CONSOLE_B);
	free(k);
}

static void dial_cross_field_error_blocks_apply(void **state)
{
	struct kfix *k = kfix_new();

	(void)state;
	feed(k, "d");
	/* jitter without delay: impair_validate refuses, no intent */
	feed(k, "jje5ms\r");
	assert_true(k->t.dial.set & IMP_JITTER);
	assert_int_equal(feed(k, "\r"), TR_REDRAW);
	assert_int_not_equal(k->in.kind, CI_APPLY);
	assert_true(k->t.dial_msg_err);
	assert_non_null(strstr(k->t.dial_msg, "jitter"));
	free(k);
}

static void test_form_and_start(void **state)
{
	struct kfix *k = kfix_new();

	(void)state;
	feed(k, "t");
	feed(k, "l");
	assert_int_equal(k->t.req.streams, 2);
	feed(k, "je");
	assert_true(k->t.test_editing);
	tui_key(&k->t, 21, &k->v, &k->in);
	feed(k, "3\r");
	assert_false(k->t.test_editing);
	assert_true(k->t.req.duration == 3);
	/* out of range: refused with a message naming the field */
	feed(k, "e");
	tui_key(&k->t, 21, &k->v, &k->in);
	feed(k, "0\r");
	assert_true(k->t.test_editing);
	assert_non_null(strstr(k->t.test_msg, "duration"));
	tui_key(&k->t, 27, &k->v, &k->in);
	assert_false(k->t.test_editing);
	assert_true(k->t.req.duration == 3);
	feed(k, "jjjjjl"); /* interval, protocol, bitrate, window, direction: -R */
	assert_true(k->t.req.reverse);
	assert_int_equal(feed(k, "\r"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_TEST_START);
	assert_int_equal(k->in.test.streams, 2);
	assert_true(k->in.test.duration == 3);
	assert_true(k->in.test.reverse);
	/* while running: x stops, s does not start another */
	k->v.test.state = CONSOLE_TEST_RUNNING;
	assert_int_equal(feed(k, "s"), TR_NONE);
	assert_int_equal(feed(k, "x"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_TEST_STOP);
	free(k);
}


static void dial_every_schema_field_reachable(void **state)
{
	struct kfix *k = kfix_new();
	const struct impair_field *f;
	int n = 0, guard;

	(void)state;
	feed(k, "d");
	/* every field of impair_fields has a row */
	for (f = impair_fields; f->name; f++, n++) {
		int r, found = 0;

		for (r = 0; r < dial_nfields(); r++)
			found |= !strcmp(dial_name(r), f->name);
		assert_true(found);
	}
	assert_int_equal(dial_nfields(), n);
	/* a choice field cycles the words of its range */
	for (guard = 0; strcmp(dial_name(k->t.dial_row), "distribution") && guard < 100; guard++)
		feed(k, "j");
	assert_string_equal(dial_name(k->t.dial_row), "distribution");
	feed(k, "l");           /* off -> uniform -> normal */
	assert_true(k->t.dial.set & IMP_DIST);
	assert_int_equal(k->t.dial.dist, IMP_DIST_UNIFORM);
	feed(k, "l");
	assert_int_equal(k->t.dial.dist, IMP_DIST_NORMAL);
	feed(k, "hh");
	assert_false(k->t.dial.set & IMP_DIST);
	/* a number field without presets says how to type one */
	for (guard = 0; strcmp(dial_name(k->t.dial_row), "gap") && guard < 100; guard++)
		feed(k, "k");
	feed(k, "l");
	assert_non_null(strstr(k->t.dial_msg, "press e"));
	feed(k, "e5\r");
	assert_true(k->t.dial.set & IMP_GAP);
	assert_int_equal(k->t.dial.gap, 5);
	free(k);
}

static void fkeys_and_profiles_reload(void **state)
{
	struct kfix *k = kfix_new();

	(void)state;
	assert_int_equal(tui_key(&k->t, KEY_F(3), &k->v, &k->in), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_DIAL);
	assert_int_equal(tui_key(&k->t, KEY_F(4), &k->v, &k->in), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_TEST);
	/* entering the profiles screen re-reads them (an intent) */
	assert_int_equal(tui_key(&k->t, KEY_F(5), &k->v, &k->in),
			 TR_INTENT | TR_REDRAW);
	assert_int_equal(k->t.screen, TS_PROFILES);
	assert_int_equal(k->in.kind, CI_PROFILES_RELOAD);
	/* r on the profiles screen reloads them, elsewhere refreshes peers */
	feed(k, "r");
	assert_int_equal(k->in.kind, CI_PROFILES_RELOAD);
	assert_int_equal(tui_key(&k->t, KEY_F(1), &k->v, &k->in), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_HELP);
	assert_int_equal(tui_key(&k->t, KEY_F(1), &k->v, &k->in), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_PROFILES);
	assert_int_equal(tui_key(&k->t, KEY_F(2), &k->v, &k->in), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_PEERS);
	feed(k, "r");
	assert_int_equal(k->in.kind, CI_REFRESH);
	assert_int_equal(tui_key(&k->t, KEY_F(10), &k->v, &k->in), TR_QUIT);
	free(k);
}

static struct console_profile kprof[3];

static void profiles_keys(void **state)
{
	struct kfix *k = kfix_new();

	(void)state;
	memset(kprof, 0, sizeof(kprof));
	strcpy(kprof[0].name, "mine");
	kprof[0].user = kprof[0].valid = true;
	strcpy(kprof[1].name, "3g");
	kprof[1].valid = true;
	strcpy(kprof[2].name, "broken");
	k->v.profiles = kprof;
	k->v.nprofiles = 3;
	feed(k, "o");
	/* Enter applies [a] to A and [b] to B */
	assert_int_equal(feed(k, "\r"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_PROFILE_APPLY);
	assert_int_equal(k->in.index, 0);
	assert_int_equal(k->in.sides, CONSOLE_BOTH);
	feed(k, "j");
	assert_int_equal(k->t.prof_row, 1);
	feed(k, "a");
	assert_int_equal(k->in.kind, CI_PROFILE_APPLY);
	assert_int_equal(k->in.index, 1);
	assert_int_equal(k->in.sides, CONSOLE_A);
	feed(k, "b");
	assert_int_equal(k->in.sides, CONSOLE_B);
	/* shipped profiles cannot be renamed or deleted: a message, no intent */
	assert_int_equal(feed(k, "n"), TR_REDRAW);
	assert_int_equal(k->t.prof_mode, TP_BROWSE);
	assert_non_null(strstr(k->t.prof_msg, "read-only"));
	assert_int_equal(feed(k, "x"), TR_REDRAW);
	assert_int_equal(k->t.prof_mode, TP_BROWSE);
	/* clamped at the ends */
	feed(k, "jjjj");
	assert_int_equal(k->t.prof_row, 2);
	feed(k, "g");
	assert_int_equal(k->t.prof_row, 0);
	/* save: the editor owns the keys ('q', 'd' are letters of the name) */
	feed(k, "s");
	assert_int_equal(k->t.prof_mode, TP_SAVE_NAME);
	assert_int_equal(feed(k, "dq-lab"), TR_REDRAW);
	assert_int_equal(k->t.screen, TS_PROFILES);
	assert_int_equal(feed(k, "\r"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_PROFILE_SAVE);
	assert_string_equal(k->in.name, "dq-lab");
	assert_int_equal(k->t.prof_mode, TP_BROWSE);
	/* rename a user profile: editor starts with its name */
	feed(k, "n");
	assert_int_equal(k->t.prof_mode, TP_RENAME);
	assert_string_equal(k->t.le.buf, "mine");
	/* typing replaces the name shown (a selected field) */
	feed(k, "mine2\r");
	assert_int_equal(k->in.kind, CI_PROFILE_RENAME);
	assert_int_equal(k->in.index, 0);
	assert_string_equal(k->in.name, "mine2");
	/* delete asks first: n cancels, y deletes */
	feed(k, "x");
	assert_int_equal(k->t.prof_mode, TP_CONFIRM_DELETE);
	assert_int_equal(feed(k, "n"), TR_REDRAW);
	assert_int_equal(k->t.prof_mode, TP_BROWSE);
	feed(k, "x");
	assert_int_equal(feed(k, "y"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_PROFILE_DELETE);
	assert_int_equal(k->in.index, 0);
	/* Esc in the editor cancels without an intent */
	feed(k, "s");
	memset(&k->in, 0, sizeof(k->in));
	assert_int_equal(tui_key(&k->t, 27, &k->v, &k->in), TR_REDRAW);
	assert_int_equal(k->t.prof_mode, TP_BROWSE);
	assert_int_equal(k->in.kind, CI_NONE);
	free(k);
}

static void test_form_udp_bitrate_pause_save(void **state)
{
	struct kfix *k = kfix_new();

	(void)state;
	feed(k, "tjjj");               /* protocol row */
	assert_int_equal(k->t.test_row, TT_PROTO);
	feed(k, "l");
	assert_true(k->t.req.udp);
	feed(k, "j");                  /* bitrate: a bad rate is refused */
	feed(k, "e");
	tui_key(&k->t, 21, &k->v, &k->in);
	feed(k, "20mbix\r");
	assert_true(k->t.test_editing);
	assert_non_null(strstr(k->t.test_msg, "bitrate"));
	tui_key(&k->t, 21, &k->v, &k->in);
	feed(k, "20mbit\r");
	assert_false(k->t.test_editing);
	assert_int_equal(k->t.req.bitrate, 20000000);
	/* window -w: tc size units; a bad size is refused */
	feed(k, "je");
	assert_int_equal(k->t.test_row, TT_WINDOW);
	tui_key(&k->t, 21, &k->v, &k->in);
	feed(k, "64q\r");
	assert_true(k->t.test_editing);
	assert_non_null(strstr(k->t.test_msg, "window"));
	tui_key(&k->t, 21, &k->v, &k->in);
	feed(k, "64kb\r");
	assert_int_equal(k->t.req.window, 65536);
	feed(k, "s");
	assert_int_equal(k->in.kind, CI_TEST_START);
	assert_true(k->in.test.udp);
	assert_int_equal(k->in.test.bitrate, 20000000);
	assert_int_equal(k->in.test.window, 65536);
	/* w with nothing recorded: a message, no intent */
	assert_int_equal(feed(k, "w"), TR_REDRAW);
	assert_non_null(strstr(k->t.test_msg, "nothing to save"));
	/* z pauses a running test's display; w saves a finished run */
	assert_int_equal(feed(k, "z"), TR_NONE);
	k->v.test.state = CONSOLE_TEST_RUNNING;
	assert_int_equal(feed(k, "z"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_TEST_PAUSE);
	k->v.test.state = CONSOLE_TEST_DONE;
	k->v.test.nintervals = 3;
	assert_int_equal(feed(k, "w"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_TEST_SAVE);
	free(k);
}

/* Help line k at cols and the lines under it that go on with it (wrapped
 * under the help column), joined with spaces; each no wider than cols - 2.
 * The text from the help column of line k, or "" when k is a heading. */
static void help_joined(int k, int n, int cols, char *joined, size_t len)
{
	char line[512];
	bool h;
	int j;

	joined[0] = '\0';
	screen_help_line(k, cols, line, sizeof(line), &h);
	assert_true((int)strlen(line) <= cols - 2);
	if (h || strlen(line) < 19)
		return;
	snprintf(joined, len, "%s", line + 19);
	for (j = k + 1; j < n; j++) {
		screen_help_line(j, cols, line, sizeof(line), &h);
		if (strncmp(line, "                   ", 19) || line[19] == ' ' || !line[19])
			break;
		assert_true((int)strlen(line) <= cols - 2);
		strncat(joined, " ", len - strlen(joined) - 1);
		strncat(joined, line + 19, len - strlen(joined) - 1);
	}
}

static void help_and_footer_from_key_table(void **state)
{
	const struct impair_field *f;
	char line[512], foot[512], joined[1024], want[512];
	int n, k, found, ci;
	bool h;
	static const int widths[] = { 100, 80, 60 };

	(void)state;
	/* at 100, 80 and 60 columns: every dial field with its help and
	 * range, every key table entry with its help, wrapped under the help
	 * column, nothing cut (no line wider than the screen) */
	for (ci = 0; ci < 3; ci++) {
		int cols = widths[ci];

		n = screen_help_nlines(cols);
		assert_true(n > 40);
		for (f = impair_fields; f->name; f++) {
			snprintf(want, sizeof(want), "%s [%s]", f->help, f->range);
			found = 0;
			for (k = 0; k < n && !found; k++) {
				screen_help_line(k, cols, line, sizeof(line), &h);
				if (h || strncmp(line + 2, f->name, strlen(f->name)) ||
				    line[2 + strlen(f->name)] != ' ')
					continue;
				help_joined(k, n, cols, joined, sizeof(joined));
				found = !strcmp(joined, want);
			}
			if (!found)
				print_message("help at %d columns lacks field %s\n", cols, f->name);
			assert_true(found);
		}
		for (const struct tui_keydef *kd = tui_keys; kd->keys; kd++) {
			found = 0;
			for (k = 0; k < n && !found; k++) {
				help_joined(k, n, cols, joined, sizeof(joined));
				found = !strcmp(joined, kd->help);
			}
			if (!found)
				print_message("help at %d columns lacks key %s: %s\n", cols,
					      kd->keys, kd->help);
			assert_true(found);
		}
	}
	/* footer: screen keys first, fits the width, ends with global ones */
	tui_footer(TS_PROFILES, foot, sizeof(foot), 200);
	assert_non_null(strstr(foot, "Enter apply"));
	assert_non_null(strstr(foot, "q quit"));
	assert_true(strstr(foot, "Enter apply") < strstr(foot, "q quit"));
	for (k = 20; k <= 120; k += 10) {
		tui_footer(TS_TEST, foot, sizeof(foot), k);
		assert_true((int)strlen(foot) <= k - 1);
	}
	tui_footer(TS_DIAL, foot, sizeof(foot), 80);
	assert_null(strstr(foot, "rename"));
	/* how to leave and where the rest is: on every screen at 80 and 40
	 * columns, at the end, the screen's own keys giving way */
	for (k = 0; k < TS_NSCREENS; k++) {
		int w;

		for (w = 40; w <= 80; w += 40) {
			tui_footer((enum tui_screen)k, foot, sizeof(foot), w);
			assert_true((int)strlen(foot) <= w - 1);
			assert_non_null(strstr(foot, "q quit"));
			assert_non_null(strstr(foot, "? help"));
			assert_true(strstr(foot, "? help") < strstr(foot, "q quit"));
		}
	}
	tui_footer_ctx(TS_DIAL, TF_EDITING, foot, sizeof(foot), 80);
	assert_null(strstr(foot, "q quit"));
}

/* An apply waiting for y/n owns the keyboard: y sends it back confirmed
 * (with force when it was refused without), n/Esc cancels, anything else
 * (even q) does not leak to the screens. */
static void confirm_modal_keys(void **state)
{
	struct kfix *k = kfix_new();

	(void)state;
	k->v.confirm.pending = true;
	k->v.confirm.need_force = true;
	k->v.confirm.sides = CONSOLE_B;
	k->v.confirm.dial.set = IMP_LOSS;
	k->v.confirm.dial.loss = UINT32_MAX;
	assert_int_equal(feed(k, "d"), TR_NONE);
	assert_int_equal(k->t.screen, TS_PEERS);
	assert_int_equal(feed(k, "y"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_APPLY);
	assert_true(k->in.confirmed);
	assert_true(k->in.force);
	assert_int_equal(k->in.sides, CONSOLE_B);
	assert_int_equal(k->in.dial.loss, UINT32_MAX);
	assert_int_equal(feed(k, "n"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_CONFIRM_CANCEL);
	assert_int_equal(feed(k, "q"), TR_INTENT | TR_REDRAW);
	assert_int_equal(k->in.kind, CI_CONFIRM_CANCEL);
	/* a plain warning: y confirms without force */
	k->v.confirm.need_force = false;
	assert_int_equal(feed(k, "Y"), TR_INTENT | TR_REDRAW);
	assert_true(k->in.confirmed);
	assert_false(k->in.force);
	/* no longer pending: q quits again */
	k->v.confirm.pending = false;
	assert_int_equal(feed(k, "q"), TR_QUIT);
	free(k);
}

/* The dial's "now -> to apply" line per side. */
static void dial_diff_lines(void **state)
{
	struct kfix *k = kfix_new();
	char line[512];

	(void)state;
	k->v.side[0].qd_valid = true;
	k->v.side[1].qd_valid = true;
	k->v.side[0].held.set = IMP_RATE;
	k->v.side[0].held.rate = 50000000;
	k->t.dial.set = IMP_RATE;
	k->t.dial.rate = 10000000;
	k->t.dial_sides = CONSOLE_BOTH;
	dial_diff_line(&k->t, &k->v, 0, line, sizeof(line));
	assert_string_equal(line, "A: now rate 50mbit -> to apply rate 10mbit");
	dial_diff_line(&k->t, &k->v, 1, line, sizeof(line));
	assert_string_equal(line, "B: now nothing (kernel default) -> to apply rate 10mbit");
	/* B holds a qdisc of its own without a dial field: shown, not "nothing" */
	snprintf(k->v.side[1].held_text, sizeof(k->v.side[1].held_text), "pfifo limit 50p");
	dial_diff_line(&k->t, &k->v, 1, line, sizeof(line));
	assert_string_equal(line, "B: now pfifo limit 50p (no dial field) -> to apply rate 10mbit");
	snprintf(k->v.side[1].held_text, sizeof(k->v.side[1].held_text), "noqueue");
	dial_diff_line(&k->t, &k->v, 1, line, sizeof(line));
	assert_string_equal(line, "B: now nothing (kernel default) -> to apply rate 10mbit");
	k->t.dial.rate = 50000000;
	dial_diff_line(&k->t, &k->v, 0, line, sizeof(line));
	assert_non_null(strstr(line, "same (no change)"));
	k->t.dial_sides = CONSOLE_A;
	dial_diff_line(&k->t, &k->v, 1, line, sizeof(line));
	assert_non_null(strstr(line, "not a target"));
	k->v.b_lost = true;
	dial_diff_line(&k->t, &k->v, 1, line, sizeof(line));
	assert_non_null(strstr(line, "session lost"));
	free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(global_keys),
		cmocka_unit_test(peers_select_and_panes),
		cmocka_unit_test(dial_edit_validate_apply),
		cmocka_unit_test(dial_cross_field_error_blocks_apply),
		cmocka_unit_test(test_form_and_start),
		cmocka_unit_test(dial_every_schema_field_reachable),
		cmocka_unit_test(fkeys_and_profiles_reload),
		cmocka_unit_test(profiles_keys),
		cmocka_unit_test(test_form_udp_bitrate_pause_save),
		cmocka_unit_test(help_and_footer_from_key_table),
		cmocka_unit_test(confirm_modal_keys),
		cmocka_unit_test(dial_diff_lines),
	};

	return cmocka_run_group_tests_name("tui_keys", tests, NULL, NULL);
}
