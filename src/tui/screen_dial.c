/* SPDX-License-Identifier: MIT */
/* screen_dial.c - the impairment dial: fields with presets and a line editor
 * for custom values in tc units, inline validation (impair_set /
 * impair_validate), the target (both / A / B, and with --middle bridge
 * A->B / B->A / both, loaded from what the bridge holds); Enter applies. */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "linklab/base/text.h"
#include "linklab/model/impair.h"
#include "linklab/peer/hostinfo.h"
#include "tui.h"

struct dial_row {
	const char *name;              /* impair field name */
	const char *presets[8];        /* NULL-terminated; "off" = unset */
};

/* Preset values (classroom staples: DSL/LTE/WAN-ish figures). */
static const struct dial_row dial_rows[TUI_DIAL_NFIELDS] = {
	{ "rate", { "off", "1mbit", "10mbit", "50mbit", "100mbit", "1gbit", NULL } },
	{ "delay", { "off", "10ms", "50ms", "100ms", "300ms", NULL } },
	{ "jitter", { "off", "1ms", "5ms", "10ms", "30ms", NULL } },
	{ "loss", { "off", "0.1%", "1%", "5%", "10%", NULL } },
	{ "duplicate", { "off", "0.1%", "1%", NULL } },
	{ "corrupt", { "off", "0.1%", "1%", NULL } },
	{ "reorder", { "off", "1%", "25%", NULL } },
};

/* After the seven main rows come every other field of the schema
 * (impair_fields), then the target and [ Apply ] rows. */
#define DIAL_MAX_FIELDS 64

/* Names of all field rows, main ones first; returns the count. */
static int dial_fields(const char **names)
{
	const struct impair_field *f;
	int n = 0, k;

	for (k = 0; k < TUI_DIAL_NFIELDS; k++)
		names[n++] = dial_rows[k].name;
	for (f = impair_fields; f->name && n < DIAL_MAX_FIELDS; f++) {
		bool main_row = false;

		for (k = 0; k < TUI_DIAL_NFIELDS; k++)
			if (!strcmp(f->name, dial_rows[k].name))
				main_row = true;
		if (!main_row)
			names[n++] = f->name;
	}
	return n;
}

static int dial_nfields(void)
{
	const char *names[DIAL_MAX_FIELDS];

	return dial_fields(names);
}

static const char *dial_name(int row)
{
	const char *names[DIAL_MAX_FIELDS];
	int n = dial_fields(names);

	return row >= 0 && row < n ? names[row] : "";
}

/* Width of the name column: the longest field name (or "target"), so a
 * name never runs into its value ("packet-overhead" is 15 characters). */
static int dial_name_width(void)
{
	const char *names[DIAL_MAX_FIELDS];
	int n = dial_fields(names), k, w = (int)strlen("target");

	for (k = 0; k < n; k++)
		if ((int)strlen(names[k]) > w)
			w = (int)strlen(names[k]);
	return w;
}

#define DIAL_ROW_TARGET dial_nfields()
#define DIAL_ROW_APPLY  (dial_nfields() + 1)
#define DIAL_NROWS      (dial_nfields() + 2)

/* Presets of a field row into out (max n, "off" first); choice and flag
 * fields offer their words from the field table ("normal", "pareto"). */
static int dial_presets(int row, char out[][24], int max)
{
	const struct impair_field *f = impair_field_find(dial_name(row));
	int n = 0, k;

	if (row < TUI_DIAL_NFIELDS) {
		for (k = 0; dial_rows[row].presets[k] && n < max; k++)
			snprintf(out[n++], 24, "%s", dial_rows[row].presets[k]);
		return n;
	}
	snprintf(out[n++], 24, "off");
	for (k = 0; f && f->names && f->names[k] && n < max; k++)
		if (strcmp(f->names[k], "off"))
			snprintf(out[n++], 24, "%s", f->names[k]);
	return n;
}

static const char *dial_target_name(unsigned sides)
{
	switch (sides) {
	case CONSOLE_A: return "A only (this host)";
	case CONSOLE_B: return "B only (peer)";
	case CONSOLE_M_AB: return "bridge A->B (middle box)";
	case CONSOLE_M_BA: return "bridge B->A (middle box)";
	case CONSOLE_M_BOTH: return "bridge both directions (middle box)";
	default: return "both peers";
	}
}

/* Targets on offer, in cycle order; returns the count. */
static int dial_targets(const struct console_view *v, unsigned *out)
{
	int n = 0;

	if (v->side[CONSOLE_IDX_B].present && !v->b_lost)
		out[n++] = CONSOLE_BOTH;
	out[n++] = CONSOLE_A;
	if (v->side[CONSOLE_IDX_B].present && !v->b_lost)
		out[n++] = CONSOLE_B;
	if (v->middle.present && !v->middle.lost) {
		out[n++] = CONSOLE_M_AB;
		out[n++] = CONSOLE_M_BA;
		out[n++] = CONSOLE_M_BOTH;
	}
	return n;
}

/* Seed the editor with the bridge's fields for a bridge target (A->B's
 * for "both"), less the burst/limits derived from a rate. */
static void dial_seed_bridge(struct tui *t, const struct console_view *v)
{
	if (!(t->dial_sides & CONSOLE_M_BOTH) || !v->middle.attached)
		return;
	t->dial = v->middle.dir[t->dial_sides == CONSOLE_M_BA ? MIDDLE_BA : MIDDLE_AB].fields;
	impair_drop_derived(&t->dial, 0, hostinfo_kernel_hz());
	t->dial_edited = false;
	snprintf(t->dial_msg, sizeof(t->dial_msg),
		 "dial loaded from the bridge's %s (Enter applies; an empty dial clears)",
		 t->dial_sides == CONSOLE_M_BA ? "B->A" : "A->B");
	t->dial_msg_err = false;
}

/* Current text of a field in exact tc units ("" when unset). */
static const char *dial_value(const struct tui *t, int row, char *buf,
			      size_t len)
{
	const struct impair_field *f = impair_field_find(dial_name(row));

	buf[0] = '\0';
	if (f && (t->dial.set & f->bit))
		impair_get(&t->dial, f, buf, len);
	return buf;
}

/* Rebuild the dial without field `skip` (the schema has no unset). */
static void dial_unset(struct tui *t, const char *skip)
{
	struct impair d;
	struct ll_diag diag;
	const struct impair_field *f;
	char buf[64];

	memset(&d, 0, sizeof(d));
	ll_diag_clear(&diag);
	for (f = impair_fields; f->name; f++) {
		if (!(t->dial.set & f->bit) || !strcmp(f->name, skip))
			continue;
		impair_get(&t->dial, f, buf, sizeof(buf));
		if (buf[0])
			impair_set(&d, f->name, buf, &diag);
	}
	t->dial = d;
}

/* Validate the whole dial; put the first problem in the message line. */
static bool dial_check(struct tui *t)
{
	struct ll_diag diag;
	int k;

	ll_diag_clear(&diag);
	impair_validate(&t->dial, &diag);
	t->dial_msg[0] = '\0';
	t->dial_msg_err = false;
	for (k = 0; k < diag.n; k++) {
		if (diag.e[k].level == LL_DIAG_ERROR) {
			snprintf(t->dial_msg, sizeof(t->dial_msg), "%s", diag.e[k].text);
			t->dial_msg_err = true;
			return false;
		}
	}
	if (diag.n) {
		snprintf(t->dial_msg, sizeof(t->dial_msg), "warning: %.240s",
			 diag.e[0].text);
		return true;
	}
	/* jitter wider than the packet spacing of the test set up on the
	 * test screen (UDP -b, 1 Mbit/s by default; TCP: any flow) */
	char jw[LL_DIAG_LEN];
	uint64_t rate = t->req.udp ? (t->req.bitrate ? t->req.bitrate : 1048576) : 0;
	if (impair_jitter_reorder_warning(&t->dial, rate, 0, jw, sizeof(jw)))
		snprintf(t->dial_msg, sizeof(t->dial_msg), "warning: %.240s", jw);
	return true;
}

/* Set field row to text ("" or "off" unsets). Returns true if accepted. */
static bool dial_set_text(struct tui *t, int row, const char *text)
{
	struct ll_diag diag;
	struct impair tmp;

	const struct impair_field *f = impair_field_find(dial_name(row));

	if (!text[0] || (!strcmp(text, "off") && !(f && f->kind == IMPK_FLAG))) {
		dial_unset(t, dial_name(row));
		t->dial_edited = true;
		dial_check(t);
		return true;
	}
	tmp = t->dial;
	ll_diag_clear(&diag);
	if (impair_set(&tmp, dial_name(row), text, &diag) < 0) {
		snprintf(t->dial_msg, sizeof(t->dial_msg), "%s",
			 diag.n ? diag.e[0].text : "invalid value");
		t->dial_msg_err = true;
		return false;
	}
	t->dial = tmp;
	t->dial_edited = true;
	dial_check(t);
	return true;
}

/* Step the presets of row by dir (+1/-1) from the current value. */
static void dial_cycle(struct tui *t, int row, int dir)
{
	char cur[64], pre[16][24];
	int n = dial_presets(row, pre, 16), k, at = -1;

	dial_value(t, row, cur, sizeof(cur));
	if (n <= 1) {
		snprintf(t->dial_msg, sizeof(t->dial_msg),
			 "%s: no presets; press e to type a value (%s)", dial_name(row),
			 impair_field_find(dial_name(row)) ?
			 impair_field_find(dial_name(row))->range : "");
		t->dial_msg_err = false;
		return;
	}
	for (k = 0; k < n; k++)
		if ((!cur[0] && !strcmp(pre[k], "off")) || !strcmp(pre[k], cur))
			at = k;
	if (at < 0)
		at = dir > 0 ? -1 : 0;
	at = (at + dir + n) % n;
	/* a flag's "off" preset is the unset state, not the value off */
	dial_set_text(t, row, k >= 0 && at == 0 ? "" : pre[at]);
}

void screen_dial_enter(struct tui *t, const struct console_view *v)
{
	t->editing = false;
	if (t->dial_loaded)
		return;
	/* start from the controller's dial, else from what A holds now */
	if (!impair_is_empty(&v->dial))
		t->dial = v->dial;
	else if (v->side[CONSOLE_IDX_A].qd_valid) {
		/* linklab's dial on A (not a qdisc the user set by hand),
		 * less the burst/limits derived from its rate: they must
		 * follow a new rate, not pin the old one */
		t->dial = v->side[CONSOLE_IDX_A].ours;
		impair_drop_derived(&t->dial, 0, hostinfo_kernel_hz());
	}
	t->dial_sides = v->dial_sides ? v->dial_sides : CONSOLE_BOTH;
	if (!v->side[CONSOLE_IDX_B].present && !(t->dial_sides & CONSOLE_M_BOTH))
		t->dial_sides = CONSOLE_A;
	t->dial_loaded = true;
	t->dial_msg[0] = '\0';
}

/* "A: now tbf rate 50mbit -> to apply rate 10mbit" for side k: what the
 * kernel holds (in dial terms, derived burst/limits dropped) against the
 * dial, or why nothing would change there. */
static void dial_diff_line(const struct tui *t, const struct console_view *v,
			   int k, char *line, size_t len)
{
	const struct console_side_view *s = &v->side[k];
	struct impair held;
	char now[200], want[200];

	if (k == CONSOLE_IDX_B && v->b_lost) {
		snprintf(line, len, "B: session lost, not driven (it restores itself)");
		return;
	}
	if (!s->qd_valid) {
		snprintf(line, len, "%s: now (not read)", k ? "B" : "A");
		return;
	}
	held = s->held;
	impair_drop_derived(&held, 0, hostinfo_kernel_hz());
	impair_summary(&held, now, sizeof(now));
	if ((!now[0] || impair_is_empty(&held)) && s->held_text[0] &&
	    strcmp(s->held_text, "noqueue") && strcmp(s->held_text, "none"))
		/* no dial field, yet a qdisc of its own (a user's pfifo): what
		 * the kernel holds, in tc words */
		snprintf(now, sizeof(now), "%.150s (no dial field)", s->held_text);
	else if (!now[0] || impair_is_empty(&held))
		snprintf(now, sizeof(now), "nothing (kernel default)");
	if (impair_is_empty(&t->dial))
		snprintf(want, sizeof(want), "clear");
	else
		impair_summary(&t->dial, want, sizeof(want));
	if (!(t->dial_sides & (1u << k)))
		snprintf(line, len, "%s: now %.180s (not a target of this dial)",
			 k ? "B" : "A", now);
	else if (!strcmp(now, want) ||
		 (impair_is_empty(&held) && impair_is_empty(&t->dial)))
		snprintf(line, len, "%s: now %.180s -> to apply: same (no change)",
			 k ? "B" : "A", now);
	else
		snprintf(line, len, "%s: now %.180s -> to apply %.180s",
			 k ? "B" : "A", now, want);
}

/* Lines tui_wrap() takes for s at width w (same word breaks). */
static int dial_wrap_count(const char *s, int w)
{
	int used = 0, n;

	while (*s && w > 0) {
		n = (int)strlen(s);
		if (n > w) {
			int cut = w;

			while (cut > 0 && s[cut] != ' ')
				cut--;
			n = cut > 0 ? cut : w;
		}
		used++;
		s += n;
		while (*s == ' ')
			s++;
	}
	return used;
}

/* The bridge's refusal ("a_to_b: ...; b_to_a: ..."): one error per line,
 * each word-wrapped at w, at most maxl lines in all; draw=false only
 * counts. Returns the lines used. */
static int dial_errors(int y, int x, int w, int maxl, unsigned attr,
		       const char *msg, bool draw)
{
	char buf[LL_ERR_MAX];
	char *seg = buf, *sep;
	int used = 0;

	snprintf(buf, sizeof(buf), "%s", msg);
	while (seg && *seg && used < maxl) {
		sep = strstr(seg, "; ");
		if (sep)
			*sep = '\0';
		if (draw)
			used += tui_wrap(y + used, x, w, maxl - used, attr, seg);
		else
			used += dial_wrap_count(seg, w);
		seg = sep ? sep + 2 : NULL;
	}
	return used < maxl ? used : maxl;
}

/* Draw what the kernels hold now, read back, and what the bridge on the
 * middle box holds per direction, from row y; returns the next row. */
static int dial_draw_held(struct tui *t, const struct console_view *v, int y,
			  int top, int rows, int cols)
{
	char line[512];
	int k;

	/* what the kernels hold now, read back */
	for (k = 0; k < 2 && y < top + rows; k++) {
		const struct console_side_view *s = &v->side[k];

		if (!s->present)
			continue;
		snprintf(line, sizeof(line), "%s %s holds: %s", k ? "B" : "A",
			 s->dev, s->qd_valid ? s->held_text : "(not read)");
		tui_put(y++, 1, cols - 2, tui_attr(t, TUI_OK), line);
		if (y < top + rows) {
			dial_diff_line(t, v, k, line, sizeof(line));
			tui_put(y++, 3, cols - 4, A_NORMAL, line);
		}
		if (s->err[0] && y < top + rows)
			y += tui_wrap(y, 3, cols - 4, 1, tui_attr(t, TUI_ERROR), s->err);
	}
	/* the bridge on the middle box: what each direction holds */
	if (v->middle.present) {
		const struct console_middle_view *m = &v->middle;

		if (!m->attached && y < top + rows) {
			snprintf(line, sizeof(line), "bridge: %.480s", m->err[0] ? m->err : "not attached");
			y += tui_wrap(y, 1, cols - 2, 2, tui_attr(t, TUI_ERROR), line);
		}
		for (k = 0; k < 2 && m->attached && y < top + rows; k++) {
			unsigned bit = k == MIDDLE_AB ? CONSOLE_M_AB : CONSOLE_M_BA;
			char want[200];

			if (impair_is_empty(&t->dial))
				snprintf(want, sizeof(want), "clear");
			else
				impair_summary(&t->dial, want, sizeof(want));
			{
				struct impair held = m->dir[k].fields;
				char now[200];

				impair_drop_derived(&held, 0, hostinfo_kernel_hz());
				impair_summary(&held, now, sizeof(now));
				if (impair_is_empty(&held) && impair_is_empty(&t->dial))
					snprintf(now, sizeof(now), "clear");
				if ((t->dial_sides & bit) && !strcmp(now, want))
					snprintf(want, sizeof(want), "same (no change)");
			}
			snprintf(line, sizeof(line), "bridge %s holds: %.200s%s%.200s",
				 k ? "B->A" : "A->B",
				 m->dir[k].dial[0] ? m->dir[k].dial : "none",
				 (t->dial_sides & bit) ? " -> to apply " :
				 " (not a target of this dial)",
				 (t->dial_sides & bit) ? want : "");
			tui_put(y++, 1, cols - 2, tui_attr(t, TUI_OK), line);
		}
		/* the bridge's own refusal, inline like a local error */
		if (m->set_err[0] && (t->dial_sides & CONSOLE_M_BOTH) && y < top + rows)
			y += dial_errors(y, 1, cols - 2, top + rows - y,
					 tui_attr(t, TUI_ERROR), m->set_err, true);
	}
	return y;
}

void screen_dial_draw(struct tui *t, const struct console_view *v, int top,
		      int rows, int cols)
{
	char line[512], val[64], pre[320], pres[16][24];
	int k, y = top + 1, p, first, np, nf = dial_nfields(), fit, from = 0;
	int y_ref = -1;               /* the row of a refused value, if any */
	const char *ref = NULL;       /* its message, the row's name cut */
	bool ref_whole = false;       /* the message stands whole by the rows */
	/* "> name " then the value column (16) and the presets after it */
	int nw = dial_name_width(), vx = 1 + 2 + nw + 1, px = vx + 16 + 1;
	const struct impair_field *f;

	tui_put(y++, 1, cols - 2, A_BOLD, "Impairment dial (tc units)");
	y++;
	/* field rows scroll; target, apply and the read-back stay below */
	fit = rows - 14;    /* room for the two lines per side below */
	if (v->middle.present)
		fit -= 3;       /* and the bridge's two lines, its error */
	if (v->middle.present && v->middle.set_err[0] && (t->dial_sides & CONSOLE_M_BOTH))
		fit -= dial_errors(0, 1, cols - 2, rows, 0, v->middle.set_err, false) - 1;
	if (fit < 3)
		fit = 3;
	if (fit > nf)
		fit = nf;
	if (t->dial_row < nf && t->dial_row >= fit)
		from = t->dial_row - fit + 1;
	if (t->dial_row >= nf)
		from = 0;
	for (k = from; k < from + fit; k++, y++) {
		bool sel = k == t->dial_row;
		unsigned attr = sel ? tui_attr(t, TUI_SELECT) : A_NORMAL;

		f = impair_field_find(dial_name(k));
		dial_value(t, k, val, sizeof(val));
		snprintf(line, sizeof(line), "%c %-*s", sel ? '>' : ' ', nw, dial_name(k));
		tui_put(y, 1, vx - 1, attr, line);
		if (sel && t->editing) {
			int w = 16;

			lineedit_window(&t->le, w, &first);
			attrset(A_UNDERLINE);
			mvhline(y, vx, ' ', w);
			snprintf(val, sizeof(val), "%s", t->le.buf + first);
			/* a fresh value (typing replaces it) shows selected */
			tui_put(y, vx, w, t->le.fresh ? A_REVERSE : A_UNDERLINE, val);
			move(y, vx + lineedit_col(&t->le, first));
			curs_set(1);
		} else {
			tui_put(y, vx, 16, val[0] ? A_BOLD : tui_attr(t, TUI_DIM),
				val[0] ? val : "off");
		}
		pre[0] = '\0';
		np = dial_presets(k, pres, 16);
		for (p = 0; p < np && np > 1; p++) {
			strncat(pre, p ? " " : "", sizeof(pre) - strlen(pre) - 1);
			strncat(pre, pres[p], sizeof(pre) - strlen(pre) - 1);
		}
		if (!pre[0] && f)
			snprintf(pre, sizeof(pre), "%s", f->range);
		if (sel && t->editing && t->dial_msg_err && t->dial_msg[0]) {
			/* a refused value: said on the row being edited (the
			 * editor stays open), the whole message below */
			const char *m = t->dial_msg;
			size_t nl = strlen(dial_name(k));

			/* "delay: 'abc' is not a time": the row names it */
			if (!strncmp(m, dial_name(k), nl) && !strncmp(m + nl, ": ", 2))
				m += nl + 2;
			snprintf(pre, sizeof(pre), "REFUSED (Esc cancels): %s", m);
			if (cols - px - 1 > 0)
				tui_put(y, px, cols - px - 1, tui_attr(t, TUI_ERROR) | A_BOLD,
					pre);
			y_ref = y;
			ref = m;
			ref_whole = cols - px - 1 > 0 && text_fit(pre, (size_t)(cols - px - 1)) ==
				    strlen(pre);
		} else if (cols - px - 1 > 0)
			tui_put(y, px, cols - px - 1, tui_attr(t, TUI_DIM), pre);
	}
	if (nf > fit) {
		snprintf(line, sizeof(line), "  fields %d-%d of %d (j/k scroll; ? lists them all)",
			 from + 1, from + fit, nf);
		tui_put(y++, 1, cols - 2, tui_attr(t, TUI_DIM), line);
	}
	for (k = nf; k < nf + 2; k++, y++) {
		bool sel = k == t->dial_row;
		unsigned attr = sel ? tui_attr(t, TUI_SELECT) : A_NORMAL;

		if (k == nf)
			snprintf(line, sizeof(line), "%c %-*s %s", sel ? '>' : ' ',
				 nw, "target", dial_target_name(t->dial_sides));
		else
			snprintf(line, sizeof(line), "%c [ Apply ]", sel ? '>' : ' ');
		tui_put(y, 1, cols - 2, attr, line);
	}
	/* a refusal longer than its row: the whole of it (the value, the
	 * accepted range) under the row, over the rows below it down to
	 * [ Apply ] (fields, target: they wait while the editor is open) */
	if (ref && !ref_whole && y - 1 - y_ref >= 1) {
		int room = y - 1 - y_ref > 6 ? 6 : y - 1 - y_ref, l;
		int need = tui_wrap_lines(ref, cols - 4);

		ref_whole = need <= room;
		if (need > room)
			need = room;
		for (l = 1; l <= need; l++)
			mvhline(y_ref + l, 1, ' ', cols - 2);
		tui_wrap(y_ref + 1, 3, cols - 4, need, tui_attr(t, TUI_ERROR), ref);
	}
	y++;
	impair_summary(&t->dial, pre, sizeof(pre));
	snprintf(line, sizeof(line), "dial: %.180s  ->  %s", pre,
		 dial_target_name(t->dial_sides));
	tui_put(y++, 1, cols - 2, A_NORMAL, line);
	if (t->dial_msg[0] && !(ref && ref_whole))
		y += tui_wrap(y, 1, cols - 2, 2,
			      tui_attr(t, t->dial_msg_err ? TUI_ERROR : TUI_WARN),
			      t->dial_msg);
	y++;
	y = dial_draw_held(t, v, y, top, rows, cols);
	if (!t->editing)
		curs_set(0);
}

int screen_dial_key(struct tui *t, int key, const struct console_view *v,
		    struct console_intent *in)
{
	int r;

	if (t->editing) {
		r = lineedit_key(&t->le, tui_le_key(key));
		if (r == LE_CANCEL) {
			t->editing = false;
			t->dial_msg[0] = '\0';
		} else if (r == LE_DONE) {
			if (dial_set_text(t, t->dial_row, t->le.buf))
				t->editing = false;
		}
		return TR_REDRAW;
	}
	switch (key) {
	case KEY_UP:
	case 'k':
		t->dial_row = (t->dial_row + DIAL_NROWS - 1) % DIAL_NROWS;
		return TR_REDRAW;
	case KEY_DOWN:
	case 'j':
	case '\t':
		t->dial_row = (t->dial_row + 1) % DIAL_NROWS;
		return TR_REDRAW;
	case 'g':          /* first / last row, as README's movement keys */
	case KEY_HOME:
		t->dial_row = 0;
		return TR_REDRAW;
	case 'G':
	case KEY_END:
		t->dial_row = DIAL_NROWS - 1;
		return TR_REDRAW;
	case KEY_LEFT:
	case 'h':
	case KEY_RIGHT:
	case 'l':
	case ' ': {
		int dir = (key == KEY_LEFT || key == 'h') ? -1 : 1;

		if (t->dial_row < DIAL_ROW_TARGET) {
			dial_cycle(t, t->dial_row, dir);
		} else if (t->dial_row == DIAL_ROW_TARGET) {
			unsigned order[8], was = t->dial_sides;
			int k, at = 0, n = dial_targets(v, order);

			for (k = 0; k < n; k++)
				if (order[k] == t->dial_sides)
					at = k;
			t->dial_sides = order[(at + dir + n) % n];
			/* entering a bridge target (or another one) loads
			 * what that direction holds, unless the user has
			 * edits not applied yet: those stay for the new
			 * target (Enter applies them) */
			if ((t->dial_sides & CONSOLE_M_BOTH) && t->dial_sides != was) {
				if (t->dial_edited) {
					snprintf(t->dial_msg, sizeof(t->dial_msg),
						 "your edits are kept for %s (not applied yet: Enter applies them; x on a row unsets it)",
						 dial_target_name(t->dial_sides));
					t->dial_msg_err = false;
				} else {
					dial_seed_bridge(t, v);
				}
			}
		}
		return TR_REDRAW;
	}
	case 'x':
	case KEY_BACKSPACE:
	case KEY_DC:
	case 127:
		if (t->dial_row < DIAL_ROW_TARGET)
			dial_set_text(t, t->dial_row, "");
		return TR_REDRAW;
	case 'e':
	case 'i':
		if (t->dial_row < DIAL_ROW_TARGET) {
			char val[64];

			lineedit_init(&t->le, dial_value(t, t->dial_row, val, sizeof(val)));
			t->editing = true;
			t->dial_msg[0] = '\0';
		}
		return TR_REDRAW;
	case KEY_ENTER:
	case '\n':
	case '\r':
		if (!dial_check(t))
			return TR_REDRAW;
		in->kind = CI_APPLY;
		in->dial = t->dial;
		in->sides = t->dial_sides;
		t->dial_edited = false;
		return TR_INTENT | TR_REDRAW;
	default:
		break;
	}
	/* a digit starts a custom value right away */
	if (key >= '0' && key <= '9' && t->dial_row < DIAL_ROW_TARGET) {
		lineedit_init(&t->le, "");
		lineedit_key(&t->le, key);
		t->editing = true;
		t->dial_msg[0] = '\0';
		return TR_REDRAW;
	}
	return TR_NONE;
}
