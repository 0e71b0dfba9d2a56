/* SPDX-License-Identifier: MIT */
/* tui.c - curses set-up and teardown, stderr capture, the frame (title,
 * status and help lines), global keys and the screen switch. */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tui.h"
#include "linklab/base/text.h"

static bool tui_active;
static int tui_saved_stderr = -1;   /* the real stderr while diverted */
static int tui_capture_fd = -1;     /* memfd (or tmp file) with stderr */

enum { PAIR_TITLE = 1, PAIR_ERROR, PAIR_OK, PAIR_SELECT, PAIR_BAR, PAIR_WARN,
       PAIR_DIM };

/* Divert fd 2 into a memfd so library chatter cannot corrupt the screen. */
static void tui_divert_stderr(void)
{
	int fd;

	fd = memfd_create("linklab-stderr", MFD_CLOEXEC);
	if (fd < 0) {
		char path[] = "/tmp/linklab-stderr-XXXXXX";

		fd = mkostemp(path, O_CLOEXEC);
		if (fd < 0)
			return;
		unlink(path);
	}
	fflush(stderr);
	tui_saved_stderr = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (tui_saved_stderr < 0) {
		close(fd);
		return;
	}
	if (dup2(fd, 2) < 0) {
		close(tui_saved_stderr);
		tui_saved_stderr = -1;
		close(fd);
		return;
	}
	tui_capture_fd = fd;
}

/* Put the real stderr back and replay what was captured. */
static void tui_restore_stderr(void)
{
	char buf[4096];
	ssize_t n;
	off_t off = 0;
	bool banner = false;

	if (tui_saved_stderr < 0)
		return;
	fflush(stderr);
	dup2(tui_saved_stderr, 2);
	close(tui_saved_stderr);
	tui_saved_stderr = -1;
	while ((n = pread(tui_capture_fd, buf, sizeof(buf), off)) > 0) {
		if (!banner) {
			static const char b[] =
				"linklab: messages written while the console was open:\n";
			if (write(2, b, sizeof(b) - 1) < 0)
				break;
			banner = true;
		}
		if (write(2, buf, (size_t)n) < 0)
			break;
		off += n;
	}
	close(tui_capture_fd);
	tui_capture_fd = -1;
}

int tui_init(struct tui *t, struct ll_err *err)
{
	const char *cs;

	memset(t, 0, sizeof(*t));
	t->screen = TS_PEERS;
	t->req.streams = 1;
	t->req.duration = 10;
	t->req.interval = 1;
	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	t->utf8 = cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
	if (!isatty(0) || !isatty(1))
		return ll_err_set(err, -ENOTTY, "console: stdin/stdout is not a terminal");
	tui_divert_stderr();
	/* newterm, not initscr: initscr exits the process on an unknown
	 * TERM. Unknown terminal types fall back to vt100 (no colour). */
	if (!newterm(NULL, stdout, stdin)) {
		t->term_fallback = true;
		if (!newterm("vt100", stdout, stdin)) {
			tui_restore_stderr();
			return ll_err_set(err, -EIO,
					  "console: cannot use terminal type '%s' (nor vt100)",
					  getenv("TERM") ? getenv("TERM") : "");
		}
	}
	tui_active = true;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	if (has_colors() && start_color() == OK) {
		use_default_colors();
		t->color = true;
		init_pair(PAIR_TITLE, COLOR_BLACK, COLOR_CYAN);
		init_pair(PAIR_ERROR, COLOR_RED, -1);
		init_pair(PAIR_OK, COLOR_GREEN, -1);
		init_pair(PAIR_SELECT, COLOR_BLACK, COLOR_YELLOW);
		init_pair(PAIR_BAR, COLOR_GREEN, -1);
		init_pair(PAIR_WARN, COLOR_YELLOW, -1);
		init_pair(PAIR_DIM, COLOR_BLUE, -1);
	}
	return 0;
}

void tui_done(void)
{
	if (tui_active) {
		endwin();
		tui_active = false;
	}
	tui_restore_stderr();
}

void tui_fatal(const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	tui_done();
	errno = saved;
	fputs("linklab: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

unsigned tui_attr(const struct tui *t, enum tui_role r)
{
	if (t->color) {
		switch (r) {
		case TUI_NORMAL: return A_NORMAL;
		case TUI_TITLE: return COLOR_PAIR(PAIR_TITLE) | A_BOLD;
		case TUI_ERROR: return COLOR_PAIR(PAIR_ERROR) | A_BOLD;
		case TUI_OK: return COLOR_PAIR(PAIR_OK);
		case TUI_SELECT: return COLOR_PAIR(PAIR_SELECT);
		case TUI_BAR: return COLOR_PAIR(PAIR_BAR);
		case TUI_WARN: return COLOR_PAIR(PAIR_WARN);
		case TUI_DIM: return COLOR_PAIR(PAIR_DIM);
		}
		return A_NORMAL;
	}
	switch (r) {
	case TUI_TITLE: return A_REVERSE;
	case TUI_ERROR: return A_BOLD;
	case TUI_SELECT: return A_REVERSE;
	case TUI_WARN: return A_BOLD;
	case TUI_DIM: return A_DIM;
	default: return A_NORMAL;
	}
}

int tui_put(int y, int x, int w, unsigned attr, const char *s)
{
	char safe[2048];
	int n;

	if (w <= 0)
		return 0;
	/* whatever reaches the screen is shown, never obeyed: control and
	 * bidi characters from profiles, peers or the network as \xNN */
	if (!text_is_safe(s, 0))
		s = text_sanitize(s, safe, sizeof(safe));
	/* w is columns: cut at a character boundary, never inside UTF-8 */
	n = (int)text_fit(s, (size_t)w);
	attrset(attr);
	mvaddnstr(y, x, s, n);
	attrset(A_NORMAL);
	return n;
}

void tui_flash(const struct tui *t, const char *msg)
{
	int rows, cols;

	getmaxyx(stdscr, rows, cols);
	if (rows < TUI_MIN_ROWS || cols < TUI_MIN_COLS)
		return;
	move(rows - 2, 0);
	clrtoeol();
	tui_put(rows - 2, 0, cols, tui_attr(t, TUI_WARN), msg);
	refresh();
}

/* Word-wrap s into at most maxl lines of width w (columns) starting at
 * (y, x). The text is made safe first, so that the lines are cut where the
 * escaped text (what is seen) reaches the edge. Returns lines used. */
/* Bytes of p on its next line of w columns: up to the last space that
 * fits (or cut at w when a word is longer); 0 when a character is wider
 * than w. */
static int wrap_next(const char *p, int w)
{
	int n = (int)text_fit(p, (size_t)w);

	if (p[n]) {
		int cut = n;

		while (cut > 0 && p[cut] != ' ')
			cut--;
		if (cut > 0)
			n = cut;
	}
	return n;
}

int tui_wrap_lines(const char *s, int w)
{
	char safe[2048];
	const char *p;
	int used = 0, n;

	if (w <= 0)
		return 0;
	p = text_is_safe(s, 0) ? s : text_sanitize(s, safe, sizeof(safe));
	while (*p && (n = wrap_next(p, w)) > 0) {
		used++;
		p += n;
		while (*p == ' ')
			p++;
	}
	return used;
}

int tui_wrap(int y, int x, int w, int maxl, unsigned attr, const char *s)
{
	int used = 0, n;
	char safe[2048], part[1024];
	const char *p;

	if (w <= 0)
		return 0;
	p = text_is_safe(s, 0) ? s : text_sanitize(s, safe, sizeof(safe));
	while (*p && used < maxl) {
		n = wrap_next(p, w);
		if (n == 0)        /* a character wider than w */
			break;
		snprintf(part, sizeof(part), "%.*s", n, p);
		tui_put(y + used, x, w, attr, part);
		used++;
		p += n;
		while (*p == ' ')
			p++;
	}
	return used;
}

int tui_prompt(void *ctx, const char *prompt, bool echo, char *buf,
	       size_t len)
{
	const struct tui *t = ctx;
	size_t n = 0;
	int ch, rows, cols, y, rc = 0;
	char line[320];

	if (!buf || len == 0)
		return -EINVAL;
	buf[0] = '\0';
	nodelay(stdscr, FALSE);
	for (;;) {
		getmaxyx(stdscr, rows, cols);
		erase();
		y = rows / 2 - 2;
		if (y < 0)
			y = 0;
		tui_put(y, 1, cols - 2, tui_attr(t, TUI_TITLE), "linklab: SSH login");
		y += 1 + tui_wrap(y + 1, 1, cols - 2, 3, A_BOLD, prompt);
		if (echo)
			snprintf(line, sizeof(line), "> %.300s", buf);
		else
			snprintf(line, sizeof(line), "> (not shown: %zu characters typed)", n);
		tui_put(y + 1, 1, cols - 2, A_NORMAL, line);
		tui_put(y + 3, 1, cols - 2, tui_attr(t, TUI_DIM),
			"Enter: send   Esc: cancel (skip this method)");
		refresh();
		ch = getch();
		if (ch == ERR) {
			if (errno == EINTR)
				continue;
			rc = -EIO;
			break;
		}
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
			break;
		if (ch == 27 || ch == 3) {
			rc = -ECANCELED;
			break;
		}
		if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
			if (n)
				buf[--n] = '\0';
			continue;
		}
		if (ch == 21) {              /* Ctrl-U */
			memset(buf, 0, n);
			n = 0;
			continue;
		}
		if (ch >= 32 && ch < 256 && ch != 127 && n + 1 < len) {
			buf[n++] = (char)ch;
			buf[n] = '\0';
		}
	}
	if (rc < 0) {
		memset(buf, 0, len);
		buf[0] = '\0';
	}
	memset(line, 0, sizeof(line));
	nodelay(stdscr, TRUE);
	erase();
	refresh();
	return rc;
}

int tui_getkey(void)
{
	return getch();
}

int tui_le_key(int key)
{
	switch (key) {
	case KEY_LEFT: return LE_LEFT;
	case KEY_RIGHT: return LE_RIGHT;
	case KEY_HOME: case 1: return LE_HOME;           /* Ctrl-A */
	case KEY_END: case 5: return LE_END;             /* Ctrl-E */
	case KEY_BACKSPACE: case 127: case 8: return LE_BACKSPACE;
	case KEY_DC: return LE_DELETE;
	case 21: return LE_KILL_LINE;                    /* Ctrl-U */
	case 11: return LE_KILL_END;                     /* Ctrl-K */
	case KEY_ENTER: case '\n': case '\r': return LE_ENTER;
	case 27: return LE_ESCAPE;
	default: return key;
	}
}

bool tui_editing(const struct tui *t)
{
	return (t->screen == TS_DIAL && t->editing) ||
	       (t->screen == TS_TEST && t->test_editing) ||
	       (t->screen == TS_PROFILES && t->prof_mode != TP_BROWSE);
}

/* Draw the title bar: name, the screens in F-key order, the session at the
 * right when it fits; returns whether the session was shown there. */
static bool tui_draw_title(struct tui *t, const struct console_view *v, int cols)
{
	/* title order: the F-key order */
	static const enum tui_screen order[] = { TS_PEERS, TS_DIAL, TS_TEST,
						 TS_PROFILES, TS_HELP };
	static const char *const names[TS_NSCREENS] = {
		[TS_PEERS] = "Peers", [TS_DIAL] = "Dial", [TS_TEST] = "Test",
		[TS_HELP] = "Help", [TS_PROFILES] = "Profiles",
	};
	bool session_in_title;
	char line[512];
	int k, x;

	attrset(tui_attr(t, TUI_TITLE));
	mvhline(0, 0, ' ', cols);
	x = tui_put(0, 1, cols - 2, tui_attr(t, TUI_TITLE), "linklab") + 2;
	for (k = 0; k < TS_NSCREENS; k++) {
		snprintf(line, sizeof(line), t->screen == order[k] ?
			 "[%s]" : " %s ", names[order[k]]);
		x += tui_put(0, x, cols - x, tui_attr(t, TUI_TITLE), line);
	}
	snprintf(line, sizeof(line), "%s", v->session);
	session_in_title = (int)strlen(line) < cols - x - 2;
	if (session_in_title)
		tui_put(0, cols - 1 - (int)strlen(line), (int)strlen(line),
			tui_attr(t, TUI_TITLE), line);
	return session_in_title;
}

/* Draw the current screen's body between the title and the status line. */
static void tui_draw_body(struct tui *t, const struct console_view *v, int rows,
			  int cols)
{
	switch (t->screen) {
	case TS_PEERS:
		screen_peers_draw(t, v, 1, rows - 3, cols);
		break;
	case TS_DIAL:
		screen_dial_draw(t, v, 1, rows - 3, cols);
		break;
	case TS_TEST:
		screen_test_draw(t, v, 1, rows - 3, cols);
		break;
	case TS_HELP:
		screen_help_draw(t, 2, rows - 4, cols);
		break;
	case TS_PROFILES:
		screen_profiles_draw(t, v, 1, rows - 3, cols);
		break;
	case TS_NSCREENS:
		break;
	}
}

/* Draw the box of an apply waiting for y/n over the body. */
static void tui_draw_confirm(struct tui *t, const struct console_view *v, int rows,
			     int cols)
{
	int bw = cols - 8, by = rows / 2 - 4, ln = 0, k;
	const char *p = v->confirm.text;
	char part[512], line[512];

	/* the whole band, edge to edge and a row above and below, is
	 * blanked first: nothing of the screen under it shows through
	 * at the box's sides */
	attrset(A_NORMAL);
	for (k = -1; k < 9; k++)
		if (by + k >= 1 && by + k < rows - 2)
			mvhline(by + k, 0, ' ', cols);
	for (k = 0; k < 8; k++) {
		attrset(tui_attr(t, TUI_SELECT));
		mvhline(by + k, 4, ' ', bw);
	}
	tui_put(by, 5, bw - 2, tui_attr(t, TUI_SELECT),
		v->confirm.need_force ? "Refused without force:" : "Warning:");
	while (*p && ln < 5) {
		size_t l = strcspn(p, "\n");

		snprintf(part, sizeof(part), "%.*s", (int)l, p);
		ln += tui_wrap(by + 1 + ln, 5, bw - 2, 5 - ln,
			       tui_attr(t, TUI_SELECT), part);
		p += l;
		if (*p == '\n')
			p++;
	}
	if (v->confirm.need_force)
		snprintf(line, sizeof(line),
			 "y: force it (B's revert timer restores B in %d s if the session dies)   n: cancel",
			 v->revert_s);
	else
		snprintf(line, sizeof(line), "y: apply anyway   n: cancel");
	tui_put(by + 7, 5, bw - 2, tui_attr(t, TUI_SELECT) | A_BOLD, line);
	attrset(A_NORMAL);
}

/* Draw the status line: a lost peer first, then error, then the last
 * status (with the session when the title bar had no room for it). */
static void tui_draw_status(struct tui *t, const struct console_view *v, int rows,
			    int cols, bool session_in_title)
{
	char line[512];

	if (v->b_lost) {
		char cd[64] = "";

		if (v->revert_deadline > 0) {
			struct timespec ts;
			double left;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			left = v->revert_deadline - ((double)ts.tv_sec + ts.tv_nsec / 1e9);
			snprintf(cd, sizeof(cd), left > 0 ? " [revert in %.0f s]" :
				 " [revert due]", left);
		}
		const char *more = v->error[0] ? v->error : v->status;

		if (!strcmp(more, v->b_lost_msg))
			more = "";
		snprintf(line, sizeof(line), "%.300s%s%s%s%.150s", v->b_lost_msg, cd,
			 more[0] ? " | " : "", more[0] && v->error[0] ? "error: " : "",
			 more);
		tui_put(rows - 2, 0, cols, tui_attr(t, TUI_ERROR), line);
	} else if (v->b_wait[0]) {
		/* a request to B takes long: said first, the rest after it */
		snprintf(line, sizeof(line), "%.90s | %s%.400s", v->b_wait,
			 v->error[0] ? "error: " : "", v->error[0] ? v->error : v->status);
		tui_put(rows - 2, 0, cols, tui_attr(t, TUI_ERROR), line);
	} else if (v->error[0]) {
		snprintf(line, sizeof(line), "error: %.500s", v->error);
		tui_put(rows - 2, 0, cols, tui_attr(t, TUI_ERROR), line);
	} else {
		static const char *const tstate[] = {
			[CONSOLE_TEST_IDLE] = "", [CONSOLE_TEST_STARTING] = "[test connecting] ",
			[CONSOLE_TEST_RUNNING] = "[test running] ", [CONSOLE_TEST_DONE] = "",
			[CONSOLE_TEST_FAILED] = "",
		};
		const char *ts = tstate[v->test.state];

		if (v->test.paused)
			ts = "[test running, display paused] ";
		if (!session_in_title)
			/* session first: the title bar had no room for it */
			snprintf(line, sizeof(line), "%s%.150s | %.300s", ts,
				 v->session, v->status);
		else
			snprintf(line, sizeof(line), "%s%s", ts, v->status);
		tui_put(rows - 2, 0, cols, tui_attr(t, TUI_OK), line);
	}
}

void tui_draw(struct tui *t, const struct console_view *v)
{
	int rows, cols;
	bool session_in_title;
	char line[512];

	getmaxyx(stdscr, rows, cols);
	erase();
	if (cols < TUI_MIN_COLS || rows < TUI_MIN_ROWS) {
		snprintf(line, sizeof(line), "terminal too small (%dx%d, need %dx%d)",
			 cols, rows, TUI_MIN_COLS, TUI_MIN_ROWS);
		tui_put(rows / 2, 0, cols, A_BOLD, line);
		refresh();
		return;
	}
	session_in_title = tui_draw_title(t, v, cols);
	tui_draw_body(t, v, rows, cols);
	if (v->confirm.pending)
		tui_draw_confirm(t, v, rows, cols);
	tui_draw_status(t, v, rows, cols, session_in_title);
	attrset(tui_attr(t, TUI_TITLE));
	mvhline(rows - 1, 0, ' ', cols);
	tui_footer_ctx(t->screen, (v->middle.present ? TF_MIDDLE : 0) |
		       ((t->screen == TS_DIAL && t->editing) ||
			(t->screen == TS_TEST && t->test_editing) ? TF_EDITING : 0),
		       line, sizeof(line), cols);
	tui_put(rows - 1, 0, cols, tui_attr(t, TUI_TITLE), line);
	attrset(A_NORMAL);
	refresh();
}

/* Switch to screen s; entering the profiles screen re-reads them. */
static int tui_goto(struct tui *t, enum tui_screen s, const struct console_view *v,
		    struct console_intent *intent)
{
	if (s == TS_HELP) {
		if (t->screen == TS_HELP) {
			t->screen = t->back;
		} else {
			t->back = t->screen;
			t->screen = TS_HELP;
		}
		return TR_REDRAW;
	}
	if (s == TS_DIAL && t->screen != TS_DIAL)
		screen_dial_enter(t, v);
	if (s == TS_PROFILES && t->screen != TS_PROFILES) {
		t->screen = s;
		t->prof_mode = TP_BROWSE;
		intent->kind = CI_PROFILES_RELOAD;
		return TR_INTENT | TR_REDRAW;
	}
	t->screen = s;
	return TR_REDRAW;
}

int tui_key(struct tui *t, int key, const struct console_view *v,
	    struct console_intent *intent)
{
	int res, rows, cols;

	memset(intent, 0, sizeof(*intent));
	if (key == KEY_RESIZE)
		return TR_REDRAW;
	/* an apply waiting for y/n takes the keyboard */
	if (v->confirm.pending) {
		if (key == 'y' || key == 'Y') {
			intent->kind = CI_APPLY;
			intent->dial = v->confirm.dial;
			intent->sides = v->confirm.sides;
			intent->confirmed = true;
			intent->force = v->confirm.need_force;
			return TR_INTENT | TR_REDRAW;
		}
		if (key == 'n' || key == 'N' || key == 27 || key == 'q') {
			intent->kind = CI_CONFIRM_CANCEL;
			return TR_INTENT | TR_REDRAW;
		}
		return TR_NONE;
	}
	/* an active field editor gets every key first */
	if (t->screen == TS_DIAL && t->editing)
		return screen_dial_key(t, key, v, intent);
	if (t->screen == TS_TEST && t->test_editing)
		return screen_test_key(t, key, v, intent);
	if (t->screen == TS_PROFILES && t->prof_mode != TP_BROWSE)
		return screen_profiles_key(t, key, v, intent);
	switch (key) {
	case 'q':
	case 'Q':
	case KEY_F(10):
		return TR_QUIT;
	case '?':
	case KEY_F(1):
		return tui_goto(t, TS_HELP, v, intent);
	case 'p':
	case KEY_F(2):
		return tui_goto(t, TS_PEERS, v, intent);
	case 'd':
	case KEY_F(3):
		return tui_goto(t, TS_DIAL, v, intent);
	case 't':
	case KEY_F(4):
		return tui_goto(t, TS_TEST, v, intent);
	case 'o':
	case KEY_F(5):
		return tui_goto(t, TS_PROFILES, v, intent);
	case 'c':
		intent->kind = CI_CLEAR;
		intent->sides = CONSOLE_BOTH;
		return TR_INTENT | TR_REDRAW;
	case 'C':
		/* the middle box's bridge: clear both directions */
		if (!v->middle.present)
			return TR_NONE;
		intent->kind = CI_CLEAR;
		intent->sides = CONSOLE_M_BOTH;
		return TR_INTENT | TR_REDRAW;
	case 'r':
		intent->kind = t->screen == TS_PROFILES ? CI_PROFILES_RELOAD : CI_REFRESH;
		return TR_INTENT | TR_REDRAW;
	case 27:    /* Esc */
		if (t->screen == TS_HELP)
			t->screen = t->back == TS_HELP ? TS_PEERS : t->back;
		else
			t->screen = TS_PEERS;
		return TR_REDRAW;
	default:
		break;
	}
	switch (t->screen) {
	case TS_PEERS:
		res = screen_peers_key(t, key, v, intent);
		break;
	case TS_DIAL:
		res = screen_dial_key(t, key, v, intent);
		break;
	case TS_TEST:
		res = screen_test_key(t, key, v, intent);
		break;
	case TS_PROFILES:
		res = screen_profiles_key(t, key, v, intent);
		break;
	case TS_HELP:
		getmaxyx(stdscr, rows, cols);
		(void)cols;
		res = screen_help_key(t, key, rows - 4);
		break;
	default:
		res = TR_NONE;
		break;
	}
	return res;
}
