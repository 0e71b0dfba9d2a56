/* SPDX-License-Identifier: MIT */
/* lineedit.c - one-line field editor state (no curses). */
#include <string.h>

#include "lineedit.h"
#include "linklab/base/text.h"

void lineedit_init(struct lineedit *le, const char *text)
{
	size_t n = text ? strlen(text) : 0;

	if (n > LE_MAX - 1) {
		n = LE_MAX - 1;
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(le->buf, text ? text : "", n);
	le->buf[n] = '\0';
	le->len = (int)n;
	le->cur = (int)n;
	le->skip = 0;
	le->fresh = n > 0;
}

/* A UTF-8 continuation byte (10xxxxxx): the cursor never stops before one. */
static int cont(const struct lineedit *le, int at)
{
	return at > 0 && at < le->len && ((unsigned char)le->buf[at] & 0xc0) == 0x80;
}

int lineedit_key(struct lineedit *le, int key)
{
	int to;

	/* a fresh initial text: typing replaces it, Backspace/Delete clear it,
	 * anything else keeps it as it is from now on */
	if (le->fresh) {
		le->fresh = 0;
		if (key == LE_BACKSPACE || key == LE_DELETE ||
		    (key >= 0x20 && key != 0x7f && key <= 0xff && !(key >= 0x80 && key < 0xc0)))
			lineedit_init(le, "");
		if (key == LE_BACKSPACE || key == LE_DELETE)
			return LE_CONTINUE;
	}
	switch (key) {
	case LE_ENTER:
		return LE_DONE;
	case LE_ESCAPE:
		return LE_CANCEL;
	case LE_LEFT:
		if (le->cur > 0)
			le->cur--;
		while (cont(le, le->cur))
			le->cur--;
		return LE_CONTINUE;
	case LE_RIGHT:
		if (le->cur < le->len)
			le->cur++;
		while (cont(le, le->cur))
			le->cur++;
		return LE_CONTINUE;
	case LE_HOME:
		le->cur = 0;
		return LE_CONTINUE;
	case LE_END:
		le->cur = le->len;
		return LE_CONTINUE;
	case LE_BACKSPACE:   /* one whole character */
		if (le->cur == 0)
			return LE_CONTINUE;
		to = le->cur - 1;
		while (cont(le, to))
			to--;
		memmove(le->buf + to, le->buf + le->cur,
			(size_t)(le->len - le->cur + 1));
		le->len -= le->cur - to;
		le->cur = to;
		return LE_CONTINUE;
	case LE_DELETE:
		if (le->cur == le->len)
			return LE_CONTINUE;
		to = le->cur + 1;
		while (cont(le, to))
			to++;
		memmove(le->buf + le->cur, le->buf + to,
			(size_t)(le->len - to + 1));
		le->len -= to - le->cur;
		return LE_CONTINUE;
	case LE_KILL_LINE:
		lineedit_init(le, "");
		return LE_CONTINUE;
	case LE_KILL_END:
		le->buf[le->cur] = '\0';
		le->len = le->cur;
		return LE_CONTINUE;
	default:
		break;
	}
	/* bytes of a non-ASCII character (getch delivers UTF-8 one byte at a
	 * time) are kept, so the field's check refuses the text as the CLI
	 * does ("1\xef\xbc\x900mbit": unknown rate unit) instead of the
	 * character vanishing */
	if (key < 0x20 || key == 0x7f || key > 0xff)
		return LE_IGNORED;
	if (key >= 0x80 && key < 0xc0 && le->skip > 0) {
		le->skip--;             /* the rest of a refused character */
		return LE_CONTINUE;
	}
	le->skip = 0;
	if (key >= 0xc0) {              /* a lead byte: room for all of it? */
		int need = key < 0xe0 ? 2 : key < 0xf0 ? 3 : 4;

		if (le->len + need > LE_MAX - 1) {
			le->skip = need - 1;
			return LE_CONTINUE;
		}
	}
	if (le->len >= LE_MAX - 1)
		return LE_CONTINUE;
	memmove(le->buf + le->cur + 1, le->buf + le->cur,
		(size_t)(le->len - le->cur + 1));
	le->buf[le->cur] = (char)key;
	le->cur++;
	le->len++;
	return LE_CONTINUE;
}

/* Columns the bytes [from, to) of le's text take on screen. */
static int span_cols(const struct lineedit *le, int from, int to)
{
	char tmp[LE_MAX];

	if (to <= from)
		return 0;
	memcpy(tmp, le->buf + from, (size_t)(to - from));
	tmp[to - from] = '\0';
	return (int)text_width(tmp);
}

void lineedit_window(const struct lineedit *le, int cols, int *first)
{
	int f = 0;

	if (cols < 2)
		cols = 2;
	/* keep one cell for the cursor after the last character */
	while (f < le->cur && span_cols(le, f, le->cur) > cols - 1) {
		f++;
		while (f < le->len && ((unsigned char)le->buf[f] & 0xc0) == 0x80)
			f++;
	}
	*first = f;
}

int lineedit_col(const struct lineedit *le, int first)
{
	return span_cols(le, first, le->cur);
}
