/* SPDX-License-Identifier: MIT */
/* lineedit.h - a one-line field editor: pure state, no curses (htop's
 * LineEditor idea: handle_key is a state change, drawing is elsewhere), so
 * it can be unit-tested without a terminal. The caller maps curses keys to
 * the LE_* codes below; printable ASCII is passed as itself. */
#ifndef LINKLAB_TUI_LINEEDIT_H
#define LINKLAB_TUI_LINEEDIT_H

#include <stddef.h>

#define LE_MAX 64

enum le_key {
	LE_LEFT = 0x10000, LE_RIGHT, LE_HOME, LE_END, LE_BACKSPACE, LE_DELETE,
	LE_KILL_LINE,   /* Ctrl-U: clear everything */
	LE_KILL_END,    /* Ctrl-K: clear from cursor to end */
	LE_ENTER, LE_ESCAPE,
};

enum le_result {
	LE_CONTINUE,    /* still editing; redraw */
	LE_DONE,        /* Enter: text is final */
	LE_CANCEL,      /* Escape: discard */
	LE_IGNORED,     /* key not handled (e.g. non-printable) */
};

struct lineedit {
	char buf[LE_MAX];    /* NUL-terminated text */
	int len;             /* bytes used (< LE_MAX) */
	int cur;             /* cursor position, 0..len */
	int skip;            /* continuation bytes still to drop of a character
			      * refused because the field was full */
	int fresh;           /* the initial text is still whole and untouched:
			      * the first character typed replaces it (as a
			      * selected field), a cursor key keeps it */
};

/* Start editing with initial text (truncated to LE_MAX - 1 bytes at a
 * character boundary); the cursor goes to the end. A non-empty text is
 * "fresh": the first character typed replaces it, Backspace or Delete
 * clears it, a cursor key (Left, Right, Home, End) keeps it for editing. */
void lineedit_init(struct lineedit *le, const char *text);

/* Apply one key: printable ASCII 0x20..0x7e and the bytes 0x80..0xff of a
 * UTF-8 character insert at the cursor (ignored when full, a whole
 * character at a time: a field never ends inside one; the caller's
 * check refuses non-ASCII text with its own message), LE_* codes edit or
 * finish; cursor moves, Backspace and Delete step over whole UTF-8
 * characters. Returns enum le_result. */
int lineedit_key(struct lineedit *le, int key);

/* The visible window of width cols (terminal columns: wide characters
 * count 2) that keeps the cursor in view: *first is the first byte shown,
 * always at a character boundary. */
void lineedit_window(const struct lineedit *le, int cols, int *first);

/* The cursor's column in the window that starts at byte first. */
int lineedit_col(const struct lineedit *le, int first);

#endif
