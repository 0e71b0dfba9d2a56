/* SPDX-License-Identifier: MIT */
/* tui.h - the console's screens (ncursesw). The only module that includes
 * <curses.h>. Screens draw from a struct console_view snapshot; key handlers
 * return what must happen (enum tui_res) and, for TR_INTENT, fill a
 * struct console_intent the main loop hands to console_do(). They never call
 * engines. */
#ifndef LINKLAB_TUI_H
#define LINKLAB_TUI_H

#include <stdbool.h>
#include <stddef.h>

#include "linklab/console/console.h"
#include "linklab/base/err.h"
#include "lineedit.h"

/* Smallest usable terminal; below it a "terminal too small" notice. */
#define TUI_MIN_COLS 60
#define TUI_MIN_ROWS 16

enum tui_screen { TS_PEERS, TS_DIAL, TS_TEST, TS_HELP, TS_PROFILES,
		  TS_NSCREENS };

/* What a key handler asks for (bit set). */
enum tui_res {
	TR_NONE   = 0,
	TR_REDRAW = 1u << 0,
	TR_QUIT   = 1u << 1,    /* restore both peers and leave */
	TR_INTENT = 1u << 2,    /* *intent filled: pass it to console_do() */
};

/* Rows of the dial screen: the dial fields, then target and apply. */
#define TUI_DIAL_NFIELDS 7

/* Rows of the test form (two columns: the first TT_LEFT rows on the
 * left). */
enum tui_test_row { TT_STREAMS, TT_DURATION, TT_INTERVAL, TT_PROTO,
		    TT_BITRATE, TT_WINDOW, TT_DIRECTION, TT_START, TT_NROWS };
#define TT_LEFT 4

/* What the profiles screen's line editor is for. */
enum tui_prof_mode { TP_BROWSE, TP_SAVE_NAME, TP_RENAME, TP_CONFIRM_DELETE,
		     TP_CONFIRM_OVERWRITE /* save over an existing user profile */ };

struct tui {
	enum tui_screen screen, back;  /* back: where Esc from help returns */
	bool utf8;                     /* UTF-8 locale: Unicode bars */
	bool color;                    /* has_colors(): else bold/reverse */
	bool term_fallback;            /* TERM unknown: running as vt100 */
	int focus;                     /* peers screen: pane 0 (A) or 1 (B) */
	/* dial screen */
	bool dial_loaded;              /* dial copied from the view once */
	struct impair dial;            /* the dial being edited */
	unsigned dial_sides;           /* enum console_side */
	int dial_row;                  /* 0..TUI_DIAL_NFIELDS+1 */
	bool editing;                  /* line editor active on dial_row */
	struct lineedit le;
	char dial_msg[256];            /* inline validation message */
	bool dial_msg_err;             /* error (else info/warning) */
	bool dial_edited;              /* fields changed since the dial was
					* seeded or applied: kept on a target
					* change */
	/* test screen */
	struct console_test_req req;
	int test_row;
	bool test_editing;
	char test_msg[128];
	/* profiles screen */
	int prof_row;
	enum tui_prof_mode prof_mode;
	char prof_msg[256];
	/* help screen */
	int help_top;                  /* first line shown (scrolling) */
};

/* Start curses: locale, colours (monochrome fallback), keypad, stderr
 * diverted to a memfd (replayed by tui_done). Returns 0 or -ENOTTY/-EIO
 * with err filled. */
int tui_init(struct tui *t, struct ll_err *err);

/* End curses (idempotent), then replay what was written to stderr. */
void tui_done(void);

/* End curses, print "linklab: MSG" to stderr and exit(2). Safe to call
 * before tui_init. */
void tui_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						    noreturn));

/* Draw the whole screen from v (erase, draw, refresh). */
void tui_draw(struct tui *t, const struct console_view *v);

/* Handle one key from getch() (KEY_RESIZE included). Returns enum tui_res
 * bits; fills *intent when TR_INTENT is set. */
int tui_key(struct tui *t, int key, const struct console_view *v,
	    struct console_intent *intent);

/* tui_getkey's "no key pending" (curses ERR). */
#define TUI_NOKEY (-1)

/* Show msg on the status line right away (before a blocking intent such as
 * an apply over SSH), without a full redraw. */
void tui_flash(const struct tui *t, const char *msg);

/* ssh_prompt_fn for the SSH connection (sshcfg.h): ask prompt on the
 * curses screen (ctx: struct tui *) and read one line, blocking; no echo
 * when echo is false (only a count of typed characters is shown). Enter
 * ends, Esc or Ctrl-C cancels (-ECANCELED). buf gets the NUL-terminated
 * answer (at most len - 1 bytes); the caller wipes it. */
int tui_prompt(void *ctx, const char *prompt, bool echo, char *buf,
	       size_t len);

/* Read one key without blocking (TUI_NOKEY when none). */
int tui_getkey(void);

/* Per-screen parts (screen_*.c), used by tui.c. top/rows: the body area. */
void screen_peers_draw(struct tui *t, const struct console_view *v, int top,
		       int rows, int cols);
int screen_peers_key(struct tui *t, int key, const struct console_view *v,
		     struct console_intent *in);
void screen_dial_enter(struct tui *t, const struct console_view *v);
void screen_dial_draw(struct tui *t, const struct console_view *v, int top,
		      int rows, int cols);
int screen_dial_key(struct tui *t, int key, const struct console_view *v,
		    struct console_intent *in);
void screen_test_draw(struct tui *t, const struct console_view *v, int top,
		      int rows, int cols);
int screen_test_key(struct tui *t, int key, const struct console_view *v,
		    struct console_intent *in);
void screen_profiles_draw(struct tui *t, const struct console_view *v, int top,
			  int rows, int cols);
int screen_profiles_key(struct tui *t, int key, const struct console_view *v,
			struct console_intent *in);
/* True while a screen's line editor owns the keyboard. */
bool tui_editing(const struct tui *t);

/* The key table (screen_help.c): one entry per key binding; the help
 * screen and the footer line are generated from it. */
struct tui_keydef {
	unsigned screens;       /* 1u << enum tui_screen, or TK_ALL */
	const char *keys;       /* "j/k, Up/Down" */
	const char *foot;       /* short footer text, NULL = help only */
	const char *help;       /* one line */
	unsigned need;          /* TF_* the footer entry needs (0 = none) */
};
#define TF_MIDDLE 1u            /* a middle box (--middle) is present */
#define TF_EDITING 2u           /* a field editor is open */
#define TK_ALL 0xffffu
extern const struct tui_keydef tui_keys[];
/* Lines of the help screen at cols columns (key table, then the dial
 * fields from impair_fields with help and range, each text wrapped under
 * the help column to fit cols - 2). Returns the count; line k into buf. */
int screen_help_nlines(int cols);
void screen_help_line(int k, int cols, char *buf, size_t len, bool *heading);
void screen_help_draw(struct tui *t, int top, int rows, int cols);
int screen_help_key(struct tui *t, int key, int rows);
/* The footer for screen s: "keys foot" pairs from tui_keys, clipped to
 * width cols. */
void tui_footer(enum tui_screen s, char *buf, size_t len, int cols);
/* The same for the context flags (TF_*): with TF_EDITING only the field
 * editor's keys; entries needing TF_MIDDLE only with it, and first. */
void tui_footer_ctx(enum tui_screen s, unsigned flags, char *buf, size_t len,
		    int cols);

/* Colour/attribute roles. */
enum tui_role { TUI_NORMAL, TUI_TITLE, TUI_ERROR, TUI_OK, TUI_SELECT,
		TUI_BAR, TUI_WARN, TUI_DIM };
/* curses attribute for a role (colour pair or mono fallback). */
unsigned tui_attr(const struct tui *t, enum tui_role r);

/* Map a curses key to a lineedit key (LE_*), or the key itself. */
int tui_le_key(int key);

/* Word-wrap s into at most maxl lines of width w from (y, x); returns the
 * lines used. */
int tui_wrap(int y, int x, int w, int maxl, unsigned attr, const char *s);
/* The lines tui_wrap needs for the whole of s at width w. */
int tui_wrap_lines(const char *s, int w);

/* Draw s at (y, x), clipped to width w; returns cells used. */
int tui_put(int y, int x, int w, unsigned attr, const char *s);

#endif
