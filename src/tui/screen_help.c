/* SPDX-License-Identifier: MIT */
/* screen_help.c - the key table (one place for every binding), the help
 * screen generated from it and from the dial schema (impair_fields: name,
 * accepted range, help), and the per-screen footer line. */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "linklab/model/impair.h"
#include "tui.h"

#define SCREEN_BIT(x) (1u << (x))

const struct tui_keydef tui_keys[] = {
	{ TK_ALL, "?, F1", "help", "this help (Esc or ? to go back)" },
	{ TK_ALL, "p, F2", NULL, "peers: interfaces, qdiscs, live counters, path A->B" },
	{ TK_ALL, "d, F3", "dial", "dial: every impairment field with presets and custom values" },
	{ TK_ALL, "t, F4", "test", "test: streams, TCP/UDP, -b, direction; live bars and chart" },
	{ TK_ALL, "o, F5", "profiles", "profiles: browse, preview, apply, save, rename, delete" },
	{ TK_ALL, "c", "clear", "clear: restore the original qdisc on both peers" },
	{ TK_ALL, "C", "clear bridge", "with --middle: clear the bridge on the middle box (both directions)", TF_MIDDLE },
	{ TK_ALL, "r", NULL, "refresh links and read back both peers' qdiscs" },
	{ TK_ALL, "Esc", NULL, "back to the peers screen (cancels a field editor)" },
	{ TK_ALL, "q, F10", "quit", "quit: restores both peers first, prints one line" },
	{ TK_ALL, "y / n", NULL, "answer an apply's warning box: the interface carries the SSH session (n or Esc cancels; y on 100% loss forces it, B's revert timer restores B)" },
	{ SCREEN_BIT(TS_PEERS), "Tab, h/l", "pane", "switch pane (peer A / peer B)" },
	{ SCREEN_BIT(TS_PEERS), "j/k, Up/Down", "select", "select an interface (its qdiscs are read back)" },
	{ SCREEN_BIT(TS_PEERS), "g/G, Home/End", NULL, "first / last interface" },
	{ SCREEN_BIT(TS_PEERS), "v", "verify", "verify: measure the path against the dials both peers (and a middle box's bridge) hold (rate, RTT, loss each way); the table is saved with the next run" },
	{ SCREEN_BIT(TS_PEERS), "x", NULL, "close the verify table" },
	{ SCREEN_BIT(TS_DIAL) | SCREEN_BIT(TS_TEST), "Enter", "accept", "in a field editor: accept the value (a refused one keeps the editor open, the error on the field's row)", TF_EDITING },
	{ SCREEN_BIT(TS_DIAL) | SCREEN_BIT(TS_TEST), "Esc", "cancel edit", "in a field editor: cancel, the field keeps its value", TF_EDITING },
	{ SCREEN_BIT(TS_DIAL), "j/k, Tab", "field", "next / previous field" },
	{ SCREEN_BIT(TS_DIAL), "g/G, Home/End", NULL, "first field / last row ([ Apply ])" },
	{ SCREEN_BIT(TS_DIAL), "h/l, Left/Right", "preset", "cycle the field's presets (or the target: both, A, B, and with --middle bridge A->B / B->A / both, loaded from the bridge)" },
	{ SCREEN_BIT(TS_DIAL), "e, a digit", "edit", "type a custom value in tc units (50mbit, 100ms, 1%): typing replaces the value shown, Left/Right/Home/End keep it to edit, Ctrl-U clears, Ctrl-K cuts to the end" },
	{ SCREEN_BIT(TS_DIAL), "x, Backspace", "unset", "unset the field" },
	{ SCREEN_BIT(TS_DIAL), "Enter", "apply", "apply the dial to the target peers; read back shown" },
	{ SCREEN_BIT(TS_TEST), "j/k, Tab", "field", "next / previous form field" },
	{ SCREEN_BIT(TS_TEST), "g/G, Home/End", NULL, "first field / [ Start ]" },
	{ SCREEN_BIT(TS_TEST), "h/l, Left/Right", "change", "change the field (streams, TCP/UDP, direction ...)" },
	{ SCREEN_BIT(TS_TEST), "e, a digit", "edit", "type a value (streams, seconds, -b rate): typing replaces the value shown, Left/Right keep it to edit, Ctrl-U clears" },
	{ SCREEN_BIT(TS_TEST), "Enter, s", "start", "start the test (Enter on [ Stop ] stops it)" },
	{ SCREEN_BIT(TS_TEST), "x", "stop", "stop the running test (results so far are kept)" },
	{ SCREEN_BIT(TS_TEST), "z", "pause", "freeze / resume the display (intervals still recorded)" },
	{ SCREEN_BIT(TS_TEST), "w", "save", "save the run again: chart (SVG), CSV and the profile" },
	{ SCREEN_BIT(TS_PROFILES), "j/k", "select", "select a profile (preview on the right)" },
	{ SCREEN_BIT(TS_PROFILES), "Enter", "apply", "apply: [a] to peer A, [b] to peer B" },
	{ SCREEN_BIT(TS_PROFILES), "a/b", "one side", "apply to one side only (a: A with [a], b: B with [b])" },
	{ SCREEN_BIT(TS_PROFILES), "m", "to bridge", "with --middle: apply to the bridge ([a] -> A->B, [b] -> B->A)", TF_MIDDLE },
	{ SCREEN_BIT(TS_PROFILES), "s", "save", "save what both peers hold as a new user profile" },
	{ SCREEN_BIT(TS_PROFILES), "n", "rename", "rename a user profile" },
	{ SCREEN_BIT(TS_PROFILES), "x, Delete", "delete", "delete a user profile (asks y/n)" },
	{ SCREEN_BIT(TS_HELP), "j/k, PgUp/PgDn", "scroll", "scroll this help" },
	{ 0, NULL, NULL, NULL },
};

static const char *const help_screen_names[TS_NSCREENS] = {
	"Peers screen", "Dial screen", "Test screen", "Help screen",
	"Profiles screen",
};

/* The help column starts after "  KEYS(16) "; its text wraps at the
 * screen's width (cols less the two margin columns), never narrower than
 * HELP_TEXT_MIN. */
#define HELP_KEY_W 19
#define HELP_TEXT_MIN 20

static int help_text_w(int cols)
{
	int w = cols - 2 - HELP_KEY_W;

	return w < HELP_TEXT_MIN ? HELP_TEXT_MIN : w;
}

/* Length of the first line of text p at width w: all of it when it fits,
 * else up to its last space that does (or w). */
static int help_wrap(const char *p, int w)
{
	int n = (int)strlen(p), cut;

	if (n <= w)
		return n;
	for (cut = w; cut > 0 && p[cut] != ' '; cut--)
		;
	return cut ? cut : w;
}

/* The help lines at cols columns, generated on demand: index k of the
 * whole text. */
static int help_build(int want, int cols, char *buf, size_t len, bool *heading)
{
	const struct tui_keydef *kd;
	const struct impair_field *f;
	int k = 0, s, w = help_text_w(cols);
	char text[512];

#define LINE(h, ...) do { \
		if (k == want) { \
			snprintf(buf, len, __VA_ARGS__); \
			*heading = (h); \
		} \
		k++; \
	} while (0)
	/* a key (or field) and its text, wrapped under the help column */
#define WRAPLINES(keys, text) do { \
		const char *p_ = (text); \
		const char *keys_ = (keys); \
		while (*p_) { \
			int n_ = help_wrap(p_, w); \
			LINE(false, "  %-16s %.*s", keys_, n_, p_); \
			keys_ = ""; \
			p_ += n_; \
			while (*p_ == ' ') \
				p_++; \
		} \
	} while (0)
	LINE(true, "Keys on every screen");
	for (kd = tui_keys; kd->keys; kd++)
		if (kd->screens == TK_ALL)
			WRAPLINES(kd->keys, kd->help);
	for (s = 0; s < TS_NSCREENS; s++) {
		LINE(false, "%s", "");
		LINE(true, "%s", help_screen_names[s]);
		for (kd = tui_keys; kd->keys; kd++)
			if (kd->screens != TK_ALL && (kd->screens & SCREEN_BIT(s)))
				WRAPLINES(kd->keys, kd->help);
	}
	LINE(false, "%s", "");
	LINE(true, "Dial fields (tc units; doc/linklab-profile.5)");
	for (f = impair_fields; f->name; f++) {
		snprintf(text, sizeof(text), "%s [%s]", f->help, f->range);
		WRAPLINES(f->name, text);
	}
	LINE(false, "%s", "");
	LINE(false, "%s", "Under each pane: what the kernel holds, read back after every change.");
#undef WRAPLINES
#undef LINE
	return k;
}

int screen_help_nlines(int cols)
{
	char buf[8];
	bool h;

	return help_build(-1, cols, buf, sizeof(buf), &h);
}

void screen_help_line(int k, int cols, char *buf, size_t len, bool *heading)
{
	buf[0] = '\0';
	*heading = false;
	help_build(k, cols, buf, len, heading);
}

void screen_help_draw(struct tui *t, int top, int rows, int cols)
{
	int n = screen_help_nlines(cols), k;
	char line[512];
	bool h;

	int shown;

	if (t->help_top > n - rows)
		t->help_top = n - rows;
	if (t->help_top < 0)
		t->help_top = 0;
	/* the last row says how much is left when the text goes on */
	shown = t->help_top + rows < n ? rows - 1 : rows;
	for (k = 0; k < shown && t->help_top + k < n; k++) {
		screen_help_line(t->help_top + k, cols, line, sizeof(line), &h);
		tui_put(top + k, 1, cols - 2, h ? A_BOLD : tui_attr(t, TUI_NORMAL), line);
	}
	if (shown < rows) {
		snprintf(line, sizeof(line), "-- %d more lines (j / PgDn) --",
			 n - t->help_top - shown);
		tui_put(top + rows - 1, 1, cols - 2, tui_attr(t, TUI_DIM), line);
	}
}

int screen_help_key(struct tui *t, int key, int rows)
{
	switch (key) {
	case 'j':
	case KEY_DOWN:
		t->help_top++;
		return TR_REDRAW;
	case 'k':
	case KEY_UP:
		t->help_top--;
		return TR_REDRAW;
	case KEY_NPAGE:
	case ' ':
		t->help_top += rows > 2 ? rows - 2 : 1;
		return TR_REDRAW;
	case KEY_PPAGE:
		t->help_top -= rows > 2 ? rows - 2 : 1;
		return TR_REDRAW;
	case 'g':
	case KEY_HOME:
		t->help_top = 0;
		return TR_REDRAW;
	case 'G':
	case KEY_END:
		t->help_top = 1 << 20;   /* clamped to the last page when drawn */
		return TR_REDRAW;
	default:
		return TR_NONE;
	}
}

void tui_footer(enum tui_screen s, char *buf, size_t len, int cols)
{
	tui_footer_ctx(s, 0, buf, len, cols);
}

/* The footer entries a user needs to find the rest and to leave: kept on
 * every width that holds them, whatever else must go. */
static bool footer_kept(const struct tui_keydef *kd)
{
	return kd->screens == TK_ALL && !kd->need &&
	       (!strcmp(kd->foot, "help") || !strcmp(kd->foot, "quit"));
}

/* "  k1 foot" (no leading spaces for the first entry) */
static void footer_part(const struct tui_keydef *kd, bool first, char *part,
			size_t len)
{
	char k1[24];

	/* the first key of "a, b" only */
	snprintf(k1, sizeof(k1), "%.*s", (int)strcspn(kd->keys, ","), kd->keys);
	snprintf(part, len, "%s%s %s", first ? "" : "  ", k1, kd->foot);
}

void tui_footer_ctx(enum tui_screen s, unsigned flags, char *buf, size_t len,
		    int cols)
{
	const struct tui_keydef *kd;
	char part[64];
	size_t used = 0, keep = 0;
	int pass;

	buf[0] = '\0';
	/* room for the kept entries (not while editing: the editor takes
	 * every key) */
	for (kd = tui_keys; kd->keys && !(flags & TF_EDITING); kd++)
		if (kd->foot && footer_kept(kd)) {
			footer_part(kd, false, part, sizeof(part));
			keep += strlen(part);
		}
	if ((int)keep > cols - 1)
		keep = 0;
	/* the context's keys first (the middle box's, or only the editor's),
	 * then the screen keys, then the global ones, while they fit */
	for (pass = 0; pass < 4; pass++)
		for (kd = tui_keys; kd->keys; kd++) {
			bool global = kd->screens == TK_ALL, kept;

			if (!kd->foot || (!global && !(kd->screens & SCREEN_BIT(s))))
				continue;
			if ((kd->need & flags) != kd->need)
				continue;       /* not in this context */
			if ((flags & TF_EDITING) && !(kd->need & TF_EDITING))
				continue;       /* the editor takes every key */
			/* passes: the context's screen keys, its global keys,
			 * the screen's, the global ones */
			if (!kd->need != (pass >= 2) || global != (pass & 1))
				continue;
			kept = keep && footer_kept(kd);
			footer_part(kd, used == 0, part, sizeof(part));
			if (kept)
				keep -= strlen(part) + (used == 0 ? 2 : 0);
			else if ((int)(used + strlen(part) + keep) > cols - 1)
				continue;
			if ((int)(used + strlen(part)) > cols - 1 || used + strlen(part) + 1 > len)
				continue;
			memcpy(buf + used, part, strlen(part) + 1);
			used += strlen(part);
		}
}
