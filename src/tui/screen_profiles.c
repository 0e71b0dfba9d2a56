/* SPDX-License-Identifier: MIT */
/* screen_profiles.c - browse the user's and the shipped profiles, preview
 * one (its [a]/[b] dials and any problem with file:line), apply it to both
 * peers or one side, save what the peers hold as a new profile, rename and
 * delete user profiles. The controller does the file work (intents). */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "linklab/model/impair.h"
#include "linklab/console/console_dial.h"
#include "tui.h"

/* The user's own profile called name, if any (a save would replace it). */
static const struct console_profile *user_profile(const struct console_view *v, const char *name)
{
	int i;

	for (i = 0; i < v->nprofiles; i++)
		if (v->profiles[i].user && !strcmp(v->profiles[i].name, name))
			return &v->profiles[i];
	return NULL;
}

void screen_profiles_draw(struct tui *t, const struct console_view *v, int top,
			  int rows, int cols)
{
	char line[512], sum[256];
	int lw = cols / 3 < 30 ? cols / 3 : 30, y, k, first = 0, fit, x, w;
	int bottom = top + rows - 1;
	const struct console_profile *p = NULL;

	if (lw < 20)
		lw = 20;
	if (t->prof_row >= v->nprofiles)
		t->prof_row = v->nprofiles - 1;
	if (t->prof_row < 0)
		t->prof_row = 0;
	y = top + 1;
	tui_put(y++, 1, lw, A_BOLD, "Profiles");
	fit = bottom - y - 1;
	if (fit < 1)
		fit = 1;
	if (t->prof_row >= fit)
		first = t->prof_row - fit + 1;
	for (k = first; k < v->nprofiles && k < first + fit; k++) {
		const struct console_profile *q = &v->profiles[k];
		bool sel = k == t->prof_row;

		snprintf(line, sizeof(line), "%c %-18.18s %-5s %s", sel ? '>' : ' ',
			 q->name, q->user ? "user" : "built", q->valid ? "" : "!");
		if (sel) {
			attrset(tui_attr(t, TUI_SELECT));
			mvhline(y, 1, ' ', lw);
		}
		tui_put(y++, 1, lw, sel ? tui_attr(t, TUI_SELECT) :
			(q->valid ? A_NORMAL : tui_attr(t, TUI_ERROR)), line);
	}
	if (v->nprofiles == 0)
		tui_put(y++, 3, lw - 2, tui_attr(t, TUI_DIM), "(no profiles found)");
	attrset(tui_attr(t, TUI_DIM));
	mvvline(top + 1, lw + 2, ACS_VLINE, rows - 2);
	attrset(A_NORMAL);

	/* preview */
	x = lw + 4;
	w = cols - x - 1;
	y = top + 1;
	if (v->nprofiles > 0)
		p = &v->profiles[t->prof_row];
	if (p) {
		snprintf(line, sizeof(line), "%s%s%s", p->title[0] ? p->title : p->name,
			 p->user ? "  (user profile)" : "  (shipped)",
			 v->profile_name[0] && !strcmp(v->profile_name, p->name) ?
			 "  [applied]" : "");
		tui_put(y++, x, w, A_BOLD, line);
		if (p->description[0])
			y += tui_wrap(y, x, w, 2, A_NORMAL, p->description);
		y++;
		if (!p->valid) {
			/* a file with errors is refused whole: no dial of it
			 * is shown as if it could be applied */
			snprintf(line, sizeof(line), "not applicable: %d problem%s (the file is "
				 "refused whole)", p->nproblems_all > p->nproblems ?
				 p->nproblems_all : p->nproblems,
				 (p->nproblems_all > 1 || p->nproblems > 1) ? "s" : "");
			tui_put(y++, x, w, tui_attr(t, TUI_ERROR) | A_BOLD, line);
		} else {
			impair_summary(&p->a, sum, sizeof(sum));
			snprintf(line, sizeof(line), "[a] A's egress (A->B): %s", sum);
			y += tui_wrap(y, x, w, 2, tui_attr(t, TUI_OK), line);
			impair_summary(&p->b, sum, sizeof(sum));
			snprintf(line, sizeof(line), "[b] B's egress (B->A): %s%s", sum,
				 p->per_side ? "" : " (same [dial])");
			y += tui_wrap(y, x, w, 2, tui_attr(t, TUI_OK), line);
			{
				struct console_path path;

				console_path_compute(&p->a, &p->b, &path);
				snprintf(line, sizeof(line), "end to end: round trip +%.4g ms, loss %.3g%%",
					 (double)path.rtt_added / 1e6, path.loss_rt * 100);
				tui_put(y++, x, w, A_NORMAL, line);
			}
		}
		y++;
		for (k = 0; k < p->nproblems && y < bottom - 2; k++)
			y += tui_wrap(y, x, w, 3, tui_attr(t, TUI_ERROR), p->problems[k]);
		if (p->nproblems_all > p->nproblems && y < bottom - 2) {
			snprintf(line, sizeof(line), "... and %d more: linklab profile show %s",
				 p->nproblems_all - p->nproblems, p->name);
			tui_put(y++, x, w, tui_attr(t, TUI_ERROR), line);
		}
		if (y < bottom - 2)
			y += tui_wrap(y, x, w, 2, tui_attr(t, TUI_DIM), p->path);
	}
	/* the editor / confirmation / message line */
	y = bottom - 1;
	switch (t->prof_mode) {
	case TP_SAVE_NAME:
	case TP_RENAME:
		snprintf(line, sizeof(line), t->prof_mode == TP_SAVE_NAME ?
			 "save what the peers hold (none: the dial) as:" : "rename %s to:",
			 p ? p->name : "");
		k = tui_put(y, x, w, A_BOLD, line);
		attrset(A_UNDERLINE);
		mvhline(y, x + k + 1, ' ', 24);
		tui_put(y, x + k + 1, 24, t->le.fresh ? A_REVERSE : A_UNDERLINE, t->le.buf);
		attrset(A_NORMAL);
		break;
	case TP_CONFIRM_DELETE:
		snprintf(line, sizeof(line), "delete %s (%.400s)? y/n", p ? p->name : "",
			 p ? p->path : "");
		tui_put(y, x, w, tui_attr(t, TUI_WARN), line);
		break;
	case TP_CONFIRM_OVERWRITE: {
		const struct console_profile *o = user_profile(v, t->le.buf);

		snprintf(line, sizeof(line), "overwrite your profile %.60s? y/n (%.300s)",
			 t->le.buf, o ? o->path : "");
		tui_put(y, x, w, tui_attr(t, TUI_WARN), line);
		break;
	}
	case TP_BROWSE:
		if (t->prof_msg[0])
			tui_put(y, x, w, tui_attr(t, TUI_WARN), t->prof_msg);
		break;
	}
}

static int save_intent(struct tui *t, struct console_intent *in)
{
	in->kind = CI_PROFILE_SAVE;
	in->index = t->prof_row;
	snprintf(in->name, sizeof(in->name), "%s", t->le.buf);
	t->prof_mode = TP_BROWSE;
	t->prof_msg[0] = '\0';
	return TR_INTENT | TR_REDRAW;
}

int screen_profiles_key(struct tui *t, int key, const struct console_view *v,
			struct console_intent *in)
{
	const struct console_profile *p =
		v->nprofiles > 0 && t->prof_row < v->nprofiles ?
		&v->profiles[t->prof_row] : NULL;
	int r;

	if (t->prof_mode == TP_CONFIRM_DELETE) {
		t->prof_mode = TP_BROWSE;
		if ((key == 'y' || key == 'Y') && p) {
			in->kind = CI_PROFILE_DELETE;
			in->index = t->prof_row;
			t->prof_msg[0] = '\0';
			return TR_INTENT | TR_REDRAW;
		}
		snprintf(t->prof_msg, sizeof(t->prof_msg), "delete cancelled");
		return TR_REDRAW;
	}
	if (t->prof_mode == TP_CONFIRM_OVERWRITE) {
		if (key == 'y' || key == 'Y')
			return save_intent(t, in);
		t->prof_mode = TP_BROWSE;
		snprintf(t->prof_msg, sizeof(t->prof_msg), "save cancelled: %.60s kept as it was",
			 t->le.buf);
		return TR_REDRAW;
	}
	if (t->prof_mode != TP_BROWSE) {
		r = lineedit_key(&t->le, tui_le_key(key));
		if (r == LE_CANCEL) {
			t->prof_mode = TP_BROWSE;
			t->prof_msg[0] = '\0';
		} else if (r == LE_DONE) {
			if (!t->le.buf[0]) {
				snprintf(t->prof_msg, sizeof(t->prof_msg), "no name given");
				t->prof_mode = TP_BROWSE;
				return TR_REDRAW;
			}
			if (t->prof_mode == TP_SAVE_NAME) {
				if (!user_profile(v, t->le.buf))
					return save_intent(t, in);
				t->prof_mode = TP_CONFIRM_OVERWRITE;   /* ask first */
				return TR_REDRAW;
			}
			in->kind = CI_PROFILE_RENAME;
			in->index = t->prof_row;
			snprintf(in->name, sizeof(in->name), "%s", t->le.buf);
			t->prof_mode = TP_BROWSE;
			t->prof_msg[0] = '\0';
			return TR_INTENT | TR_REDRAW;
		}
		return TR_REDRAW;
	}
	t->prof_msg[0] = '\0';
	switch (key) {
	case KEY_UP:
	case 'k':
		if (t->prof_row > 0)
			t->prof_row--;
		return TR_REDRAW;
	case KEY_DOWN:
	case 'j':
	case '\t':
		if (t->prof_row + 1 < v->nprofiles)
			t->prof_row++;
		return TR_REDRAW;
	case KEY_HOME:
	case 'g':
		t->prof_row = 0;
		return TR_REDRAW;
	case KEY_END:
	case 'G':
		t->prof_row = v->nprofiles > 0 ? v->nprofiles - 1 : 0;
		return TR_REDRAW;
	case KEY_ENTER:
	case '\n':
	case '\r':
	case 'a':
	case 'b':
		if (!p)
			return TR_NONE;
		if (key == 'b' && !v->side[CONSOLE_IDX_B].present) {
			snprintf(t->prof_msg, sizeof(t->prof_msg),
				 "no peer B (start with --peer HOST)");
			return TR_REDRAW;
		}
		in->kind = CI_PROFILE_APPLY;
		in->index = t->prof_row;
		in->sides = key == 'a' ? CONSOLE_A : key == 'b' ? CONSOLE_B : CONSOLE_BOTH;
		return TR_INTENT | TR_REDRAW;
	case 'm':
		/* the middle box's bridge: [a] -> A->B, [b] -> B->A */
		if (!p)
			return TR_NONE;
		if (!v->middle.present) {
			snprintf(t->prof_msg, sizeof(t->prof_msg),
				 "no middle box (start with --middle HOST)");
			return TR_REDRAW;
		}
		in->kind = CI_PROFILE_APPLY;
		in->index = t->prof_row;
		in->sides = CONSOLE_M_BOTH;
		return TR_INTENT | TR_REDRAW;
	case 's':
		lineedit_init(&t->le, "");
		t->prof_mode = TP_SAVE_NAME;
		return TR_REDRAW;
	case 'n':
	case 'x':
	case KEY_DC:
		if (!p)
			return TR_NONE;
		if (!p->user) {
			snprintf(t->prof_msg, sizeof(t->prof_msg),
				 "%s is shipped (read-only): save a copy with s", p->name);
			return TR_REDRAW;
		}
		if (key == 'n') {
			lineedit_init(&t->le, p->name);
			t->prof_mode = TP_RENAME;
		} else {
			t->prof_mode = TP_CONFIRM_DELETE;
		}
		return TR_REDRAW;
	default:
		return TR_NONE;
	}
}
