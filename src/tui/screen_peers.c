/* SPDX-License-Identifier: MIT */
/* screen_peers.c - two panes: peer A's and peer B's interfaces, and under
 * each what the kernel holds now on the selected interface (read back);
 * with --middle, the middle box's bridge below them (engine, ports, each
 * direction's dial, rates, lost, drops), then the path A->B. */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "linklab/base/units.h"
#include "tui.h"

/* "tbf: sent 12.3 MB 8.1 kpkt, drops 3, overlimits 40, backlog 0 B" */
static void peers_counters(const struct qdisc_info *q, char *buf, size_t len)
{
	char b[32], bl[32];

	units_human_bytes((double)q->bytes, b, sizeof(b));
	units_human_bytes((double)q->backlog, bl, sizeof(bl));
	snprintf(buf, len, "%s: sent %s %llu pkt, drops %u, overlimits %u, backlog %s",
		 q->kind, b, (unsigned long long)q->packets, q->drops,
		 q->overlimits, bl);
}

/* Rows of want that fit from y before end (0 when none). */
static int peers_room(int y, int end, int want)
{
	int r = end - y;

	return r < want ? (r > 0 ? r : 0) : want;
}

/* One pane: header, link rows (two lines each), then the read-back. */
static void peers_pane(struct tui *t, const struct console_side_view *s, int idx,
		       int top, int rows, int x, int w)
{
	char line[512], addrs[400];
	int y = top, k, a, first = 0, per, fit, bottom, end = top + rows;
	bool focus = t->focus == idx;

	snprintf(line, sizeof(line), "%s%s", focus ? "> " : "  ", s->label);
	tui_put(y++, x, w, focus ? A_BOLD | A_UNDERLINE : A_BOLD, line);
	if (!s->present) {
		tui_put(y + 1, x + 2, w - 2, tui_attr(t, TUI_DIM),
			"no peer: start with --peer HOST");
		return;
	}
	snprintf(line, sizeof(line), "  %-13s %-7s %5s  %s", "IFACE", "STATE",
		 "MTU", "QDISC");
	tui_put(y++, x, w, tui_attr(t, TUI_DIM), line);
	/* reserve rows at the bottom for the read-back and counters (fewer
	 * on a short screen: one link row always shows) */
	bottom = end - 8;
	if (bottom < y + 2)
		bottom = y + 2;
	per = 2;
	fit = (bottom - y) / per;
	if (fit < 1)
		fit = 1;
	if (s->sel >= fit)
		first = s->sel - fit + 1;
	for (k = first; k < s->links.n && k < first + fit && y < end; k++) {
		const struct link_info *l = &s->links.l[k];
		bool sel = k == s->sel;
		bool route = !strcmp(l->name, s->route_dev);
		unsigned attr = sel ? (focus ? tui_attr(t, TUI_SELECT) : A_REVERSE)
			       : A_NORMAL;

		snprintf(line, sizeof(line), "%c %-13s %-7s %5u  %s%s",
			 route ? '*' : ' ', l->name, l->state, l->mtu,
			 l->qdisc[0] ? l->qdisc : "-", route ? "  (to peer)" : "");
		if (sel) {
			attrset(attr);
			mvhline(y, x, ' ', w);
		}
		tui_put(y++, x, w, attr, line);
		addrs[0] = '\0';
		for (a = 0; a < l->naddrs; a++) {
			strncat(addrs, a ? " " : "", sizeof(addrs) - strlen(addrs) - 1);
			strncat(addrs, l->addrs[a], sizeof(addrs) - strlen(addrs) - 1);
		}
		if (l->speed_mbps)
			snprintf(line, sizeof(line), "    %lluMb/s %s",
				 (unsigned long long)l->speed_mbps,
				 l->naddrs ? addrs : "(no address)");
		else
			snprintf(line, sizeof(line), "    %s",
				 l->naddrs ? addrs : "(no address)");
		if (y < end)
			tui_put(y++, x, w, tui_attr(t, TUI_DIM), line);
	}
	if (s->links.n == 0)
		tui_put(y++, x + 2, w - 2, tui_attr(t, TUI_DIM), "(no interfaces listed)");
	if (s->links.n > first + fit && y < end) {
		snprintf(line, sizeof(line), "  ... %d more", s->links.n - first - fit);
		tui_put(y++, x, w, tui_attr(t, TUI_DIM), line);
	}
	/* the read-back right under the list, a blank row between when there
	 * is room; nothing of it is drawn past the pane's last row */
	if (y + 1 < bottom)
		y++;
	if (y + 1 >= end)       /* no row for what it holds: no title either */
		return;
	snprintf(line, sizeof(line), "kernel holds on %s:", s->dev[0] ? s->dev : "-");
	tui_put(y++, x, w, A_BOLD, line);
	if (s->qd_valid) {
		y += tui_wrap(y, x + 2, w - 2, peers_room(y, end, 2), tui_attr(t, TUI_OK),
				s->held_text[0] ? s->held_text : "(nothing read)");
		for (k = 0; k < s->qd.n && k < 2 && y < end - 1 &&
			    strcmp(s->qd.q[0].kind, "noqueue"); k++) {
			peers_counters(&s->qd.q[k], line, sizeof(line));
			y += tui_wrap(y, x + 2, w - 2, peers_room(y, end, 2), A_NORMAL, line);
		}
		if (s->tx_bps >= 0 && y < end) {
			char r[32];

			snprintf(line, sizeof(line), "  now sending %s",
				 units_human_rate(s->tx_bps, r, sizeof(r)));
			tui_put(y++, x, w, tui_attr(t, TUI_BAR), line);
		}
	} else if (y < end)
		tui_put(y++, x + 2, w - 2, tui_attr(t, TUI_DIM), "(not read)");
	if (s->err[0])
		tui_wrap(y, x + 2, w - 2, peers_room(y, end, end - y), tui_attr(t, TUI_ERROR),
			   s->err);
}

/* One bridge direction, counters first (fixed width) and the dial last, so
 * that 80 columns keep the numbers: "A->B  rx 1.2 Mbit/s  tx 1.2 Mbit/s
 * lost 3  drops 0  delay 40ms". */
static void peers_middle_dir(const struct console_middle_view *m, int k, char *buf,
			     size_t len)
{
	const struct console_middle_dir *d = &m->dir[k];
	char rx[32] = "-", tx[32] = "-";

	if (d->rx_bps >= 0)
		units_human_rate(d->rx_bps, rx, sizeof(rx));
	if (d->tx_bps >= 0)
		units_human_rate(d->tx_bps, tx, sizeof(tx));
	snprintf(buf, len, "  %s  rx %-12s tx %-12s lost %-4llu drops %-4llu %s",
		 k == MIDDLE_AB ? "A->B" : "B->A", rx, tx,
		 (unsigned long long)d->lost, (unsigned long long)d->drops,
		 d->dial[0] ? d->dial : "none");
}

/* How the engine of a bridge the console started (--bridge) was chosen:
 * auto picks kernel exactly when the middle's kernel has netem. */
static const char *peers_engine_how(const struct console_middle_view *m)
{
	if (!strcmp(m->engine_asked, "auto"))
		return strcmp(m->engine, "kernel") ? "auto: no netem there" : "auto: netem there";
	return strcmp(m->engine_asked, "kernel") ? "--middle-engine user" :
						    "--middle-engine kernel";
}

/* The middle box between the panes: engine, ports, both dials, live rate,
 * lost and drops; or why it is not shown. Uses 4 rows from y. */
static void peers_middle(struct tui *t, const struct console_middle_view *m, int y,
			 int cols)
{
	char line[512];

	attrset(tui_attr(t, TUI_DIM));
	mvhline(y, 0, ACS_HLINE, cols);
	attrset(A_NORMAL);
	if (m->attached) {
		snprintf(line, sizeof(line), "%s: bridge %s engine", m->label, m->engine);
		if (m->engine_asked[0])
			snprintf(line + strlen(line), sizeof(line) - strlen(line), " (%s)",
				 peers_engine_how(m));
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 ", %s <-> %s, pid %ld%s", m->if_a, m->if_b, m->pid,
			 m->engine_asked[0] ? ", started by this console" : "");
		if (m->stall_s > 0)
			/* a get without reply: the numbers below are that old */
			snprintf(line + strlen(line), sizeof(line) - strlen(line),
				 " - not answering (%d s), counters as of then",
				 m->stall_s);
		if ((int)(strlen(line) + strlen(m->host)) + 4 < cols)
			snprintf(line + strlen(line), sizeof(line) - strlen(line),
				 " (%s)", m->host);
		tui_put(y + 1, 1, cols - 2,
			m->stall_s > 0 ? tui_attr(t, TUI_WARN) : A_BOLD, line);
		peers_middle_dir(m, MIDDLE_AB, line, sizeof(line));
		tui_put(y + 2, 1, cols - 2, tui_attr(t, TUI_OK), line);
		peers_middle_dir(m, MIDDLE_BA, line, sizeof(line));
		tui_put(y + 3, 1, cols - 2, tui_attr(t, TUI_OK), line);
		return;
	}
	snprintf(line, sizeof(line), "%s: %s%s%s", m->label, m->host,
		 m->engine_asked[0] ? ", bridge --engine " : "", m->engine_asked);
	tui_put(y + 1, 1, cols - 2, A_BOLD, line);
	tui_wrap(y + 2, 3, cols - 4, 2, tui_attr(t, TUI_ERROR),
		 m->err[0] ? m->err : "not attached");
}

/* One verify row: quantity, direction, dialled, measured, error, ok. */
static void verify_line(const struct verify_row *r, char *buf, size_t len)
{
	bool rate = !strcmp(r->unit, "bit/s");
	double k = rate ? 1e6 : 1;
	const char *u = rate ? "Mbit/s" : r->unit;

	if (!r->measurable)
		snprintf(buf, len, "%-9s %-7s %12.4g %-8s %12s %11s  SKIP: %s",
			 r->quantity, r->direction, r->dialled / k, u, "-", "-",
			 r->detail);
	else
		snprintf(buf, len, "%-9s %-7s %12.4g %-8s %12.4g %+11.3g  %s "
			 "(tolerance %+.3g..%+.3g)", r->quantity, r->direction,
			 r->dialled / k, u, r->measured / k, r->error / k,
			 r->ok ? "ok" : "NOT OK", r->tol_lo / k, r->tol_hi / k);
}

/* The verify table over the lower part of the screen. */
static void peers_verify(struct tui *t, const struct console_verify_view *vv,
			 bool middle, int top, int rows, int cols)
{
	int n = vv->have ? vv->res.rep.n : 0, h = n + 4, y;
	char line[LL_ERR_MAX + 64];

	if (h > rows - 2)
		h = rows - 2;
	y = top + rows - h;
	for (int i = y; i < top + rows; i++) {
		move(i, 0);
		clrtoeol();
	}
	attrset(tui_attr(t, TUI_DIM));
	mvhline(y, 0, ACS_HLINE, cols);
	attrset(A_NORMAL);
	if (vv->running) {
		snprintf(line, sizeof(line), "verify: measuring (%.0f s) - the dial "
			 "both peers %shold against what the wire does", vv->age_s,
			 middle ? "and the bridge " : "");
		tui_put(y + 1, 1, cols - 2, A_BOLD, line);
		return;
	}
	snprintf(line, sizeof(line), "verify: %s   (v runs it again, x closes)",
		 vv->res.error[0] ? vv->res.error : vv->res.ok ?
		 "every row ok: the path holds the dial" :
		 "NOT OK: the path does not hold the dial");
	tui_put(y + 1, 1, cols - 2, vv->res.ok && !vv->res.error[0] ?
		tui_attr(t, TUI_OK) | A_BOLD : tui_attr(t, TUI_ERROR), line);
	snprintf(line, sizeof(line), "%-9s %-7s %12s %-8s %12s %11s  %s", "quantity",
		 "dir", "dialled", "unit", "measured", "error", "ok");
	tui_put(y + 2, 1, cols - 2, tui_attr(t, TUI_DIM), line);
	for (int i = 0; i < n && y + 3 + i < top + rows; i++) {
		const struct verify_row *r = &vv->res.rep.r[i];
		verify_line(r, line, sizeof(line));
		tui_put(y + 3 + i, 1, cols - 2, r->ok ? A_NORMAL :
			tui_attr(t, TUI_ERROR), line);
	}
}

void screen_peers_draw(struct tui *t, const struct console_view *v, int top,
		       int rows, int cols)
{
	int w = cols / 2, prow = rows - 3, mrows = v->middle.present ? 4 : 0;
	char line[512];

	prow -= mrows;
	peers_pane(t, &v->side[CONSOLE_IDX_A], 0, top + 1, prow - 1, 0, w - 1);
	attrset(tui_attr(t, TUI_DIM));
	mvvline(top + 1, w - 1, ACS_VLINE, prow - 1);
	attrset(A_NORMAL);
	peers_pane(t, &v->side[CONSOLE_IDX_B], 1, top + 1, prow - 1, w + 1,
		   cols - w - 1);
	if (mrows) {
		peers_middle(t, &v->middle, top + prow, cols);
		prow += mrows;
	}
	/* the path A -> B and what theory expects of it */
	attrset(tui_attr(t, TUI_DIM));
	mvhline(top + prow, 0, ACS_HLINE, cols);
	attrset(A_NORMAL);
	snprintf(line, sizeof(line), "path: %s", v->path.valid ? v->path.line :
		 "(nothing read back)");
	tui_put(top + prow + 1, 1, cols - 2, A_BOLD, line);
	snprintf(line, sizeof(line), "theory (1 stream, A->B): %s", v->theory.line);
	tui_put(top + prow + 2, 1, cols - 2, tui_attr(t, TUI_WARN), line);
	if (v->verify.shown)
		peers_verify(t, &v->verify, v->middle.present, top, rows, cols);
}

int screen_peers_key(struct tui *t, int key, const struct console_view *v,
		     struct console_intent *in)
{
	const struct console_side_view *s = &v->side[t->focus];
	int sel = s->sel;

	switch (key) {
	case 'v':
		in->kind = CI_VERIFY;
		return TR_INTENT | TR_REDRAW;
	case 'x':
		if (!v->verify.shown)
			return TR_NONE;
		in->kind = CI_VERIFY_HIDE;
		return TR_INTENT | TR_REDRAW;
	case '\t':
	case KEY_BTAB:
		t->focus = !t->focus;
		return TR_REDRAW;
	case KEY_LEFT:
	case 'h':
		t->focus = 0;
		return TR_REDRAW;
	case KEY_RIGHT:
	case 'l':
		t->focus = 1;
		return TR_REDRAW;
	case KEY_UP:
	case 'k':
		sel--;
		break;
	case KEY_DOWN:
	case 'j':
		sel++;
		break;
	case KEY_HOME:
	case 'g':
		sel = 0;
		break;
	case KEY_END:
	case 'G':
		sel = s->links.n - 1;
		break;
	case KEY_ENTER:
	case '\n':
	case '\r':
		break;
	default:
		return TR_NONE;
	}
	if (!s->present || s->links.n == 0)
		return TR_NONE;
	if (sel < 0)
		sel = 0;
	if (sel >= s->links.n)
		sel = s->links.n - 1;
	in->kind = CI_SELECT;
	in->side = t->focus;
	in->index = sel;
	return TR_INTENT | TR_REDRAW;
}
