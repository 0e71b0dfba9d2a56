/* SPDX-License-Identifier: MIT */
/* screen_test.c - the test form (streams, duration, interval, direction),
 * then one bar per stream and a SUM bar redrawn every interval, and the
 * end summary with sender and receiver totals as iperf3 prints them. */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/base/units.h"
#include "bar.h"
#include "chart.h"
#include "tui.h"

static const double form_intervals[] = { 0.1, 0.2, 0.5, 1, 2, 5, 10 };
#define TEST_NINTERVALS (int)(sizeof(form_intervals) / sizeof(form_intervals[0]))

static const char *test_state_name(enum console_test_state s)
{
	switch (s) {
	case CONSOLE_TEST_IDLE: return "idle";
	case CONSOLE_TEST_STARTING: return "connecting";
	case CONSOLE_TEST_RUNNING: return "running";
	case CONSOLE_TEST_DONE: return "done";
	case CONSOLE_TEST_FAILED: return "failed";
	}
	return "?";
}

static bool test_busy(const struct console_view *v)
{
	return v->test.state == CONSOLE_TEST_STARTING ||
	       v->test.state == CONSOLE_TEST_RUNNING;
}

/* Text of a form row's value. */
static void test_row_value(const struct tui *t, const struct console_view *v,
			   int row, char *buf, size_t len)
{
	switch (row) {
	case TT_STREAMS:
		snprintf(buf, len, "%d", t->req.streams);
		break;
	case TT_DURATION:
		snprintf(buf, len, "%g s", t->req.duration);
		break;
	case TT_INTERVAL:
		snprintf(buf, len, "%g s", t->req.interval);
		break;
	case TT_DIRECTION:
		snprintf(buf, len, "%s", t->req.reverse ?
			 "B -> A (-R)" : "A -> B");
		break;
	case TT_PROTO:
		snprintf(buf, len, "%s", t->req.udp ? "UDP (-u)" : "TCP");
		break;
	case TT_WINDOW:
		if (t->req.window)
			units_format_size(t->req.window, buf, len);
		else
			snprintf(buf, len, "default");
		break;
	case TT_BITRATE:
		if (t->req.bitrate)
			units_format_rate(t->req.bitrate, buf, len);
		else
			snprintf(buf, len, "%s", t->req.udp ? "1mbit (default)" : "unlimited");
		break;
	default:
		snprintf(buf, len, "%s", test_busy(v) ? "[ Stop ]" : "[ Start ]");
		break;
	}
}

/* "47.8 Mbit/s  retr 3  cwnd 120 KiB  rtt 1.20 ms" for one sample. */
static void test_figures(const struct client_stream_sample *s, char *buf,
			 size_t len)
{
	char rate[32], cwnd[32], rtt[32], part[64];

	units_human_rate(s->bps, rate, sizeof(rate));
	snprintf(buf, len, "%11s", rate);
	if (s->packets > 0 || s->lost > 0 || s->jitter_ms > 0) {
		snprintf(part, sizeof(part), "  dgrams %lld", (long long)s->packets);
		strncat(buf, part, len - strlen(buf) - 1);
		if (s->lost >= 0 && !s->sender) {
			snprintf(part, sizeof(part), "  lost %lld (%.2g%%)  jitter %.3f ms",
				 (long long)s->lost,
				 s->packets > 0 ? 100.0 * (double)s->lost / (double)s->packets : 0.0,
				 s->jitter_ms);
			strncat(buf, part, len - strlen(buf) - 1);
		}
		return;
	}
	if (s->retransmits >= 0) {
		snprintf(part, sizeof(part), "  retr %-4lld", (long long)s->retransmits);
		strncat(buf, part, len - strlen(buf) - 1);
	}
	if (s->snd_cwnd > 0) {
		units_human_bytes((double)s->snd_cwnd, cwnd, sizeof(cwnd));
		snprintf(part, sizeof(part), "  cwnd %-9s", cwnd);
		strncat(buf, part, len - strlen(buf) - 1);
	}
	if (s->rtt_us > 0) {
		units_human_time((double)s->rtt_us * 1000.0, rtt, sizeof(rtt));
		snprintf(part, sizeof(part), "  rtt %s", rtt);
		strncat(buf, part, len - strlen(buf) - 1);
	}
}

/* One bar row: label, bar, figures. */
static void test_bar_row(const struct tui *t, int y, int cols, const char *label,
			 const struct client_stream_sample *s, double full,
			 unsigned attr)
{
	char bar[3 * 80 + 1], fig[160];
	int bw = cols - 66;   /* the figures need about 54 cells */

	if (bw < 8)
		bw = 8;
	if (bw > 80)
		bw = 80;
	tui_put(y, 1, 7, attr, label);
	bar_render(bar, sizeof(bar), s->bps, full, bw, t->utf8);
	attrset(tui_attr(t, TUI_BAR));
	mvaddstr(y, 8, bar);
	attrset(A_NORMAL);
	test_figures(s, fig, sizeof(fig));
	tui_put(y, 9 + bw, cols - 10 - bw, attr, fig);
}

/* The SUM history chart over the run: one column per interval (the
 * latest at the right), the theory ceiling (or the dialled rate) as a
 * rule. Returns rows used. */
static int test_chart(const struct tui *t, const struct console_view *v, int y,
		      int rows, int cols, double full)
{
	const struct console_test_view *tv = &v->test;
	double vals[256], mark, top = full;
	char buf[8][3 * 256 + 1], *rowp[8], lab[32];
	int n = cols - 12, k, from, r;

	if (rows > 8)
		rows = 8;
	if (rows < 2 || tv->nhist < 1)
		return 0;
	if (n > 256)
		n = 256;
	if (n > tv->nhist)
		n = tv->nhist;
	from = tv->nhist - n;
	for (k = 0; k < n; k++)
		vals[k] = tv->hist[from + k].bps;
	if (tv->max_sum_bps > top)
		top = tv->max_sum_bps;
	mark = v->theory_comparable && v->theory.expect_bps > 0 ? v->theory.expect_bps :
	       (tv->scale_dialled ? tv->scale_bps : 0);
	if (mark > top * 1.5)
		mark = 0;           /* far above: no rule, keep the scale */
	else if (mark > top)
		top = mark;
	for (r = 0; r < rows; r++)
		rowp[r] = buf[r];
	chart_render(rowp, sizeof(buf[0]), rows, cols - 12 < 256 ? cols - 12 : 256,
		     vals, n, top, mark, t->utf8);
	units_human_rate(top, lab, sizeof(lab));
	lab[strcspn(lab, " ")] = '\0';      /* "47.8" of "47.8 Mbit/s" */
	for (r = 0; r < rows; r++) {
		tui_put(y + r, 1, 9, tui_attr(t, TUI_DIM),
			r == 0 ? lab : r == rows - 1 ? "0 SUM" : "");
		attrset(tui_attr(t, TUI_BAR));
		mvaddstr(y + r, 10, buf[r]);
		attrset(A_NORMAL);
	}
	return rows;
}

/* iperf3-style summary line. */
static void test_summary_line(char *buf, size_t len, const char *id,
			      const struct client_stream_sample *s,
			      double duration, const char *role)
{
	char bytes[32], rate[32], retr[24] = "";

	units_human_bytes((double)s->bytes, bytes, sizeof(bytes));
	units_human_rate(s->bps, rate, sizeof(rate));
	if (s->sender && s->retransmits >= 0)
		snprintf(retr, sizeof(retr), "%lld", (long long)s->retransmits);
	snprintf(buf, len, "[%3s]  %5.2f-%-5.2f sec  %10s  %12s  %5s  %s", id,
		 s->start, s->end > 0 ? s->end : duration, bytes, rate, retr, role);
}

/* RTT under load (TCP) or loss and jitter (UDP) of the run so far; ""
 * when nothing is known yet. */
static void test_panel_line(const struct console_view *v, char *buf, size_t len)
{
	const struct console_test_view *tv = &v->test;
	const struct client_stream_sample *s = &tv->last.sum;
	char a[32], b[32], c[32], d[32];

	buf[0] = '\0';
	if (tv->opts.udp) {
		if (tv->have_summary)
			s = &tv->summary.sum_received;
		if (s->packets > 0 && s->lost >= 0 && !s->sender)
			snprintf(buf, len, "UDP: lost %lld of %lld datagrams (%.2g%%), jitter %.3f ms",
				 (long long)s->lost, (long long)s->packets,
				 100.0 * (double)s->lost / (double)s->packets, s->jitter_ms);
		else if (s->packets > 0)
			snprintf(buf, len, "UDP: %lld datagrams sent this interval "
				 "(loss and jitter come from the receiver at the end)",
				 (long long)s->packets);
		return;
	}
	if (v->path.rtt_added > 0)
		snprintf(d, sizeof(d), "+%.4g ms dialled", (double)v->path.rtt_added / 1e6);
	else
		snprintf(d, sizeof(d), "no delay dialled");
	if (tv->rtt_s > 0)
		snprintf(buf, len, "RTT under load: now %s, min %s, max %s (%s)",
			 units_human_time(tv->rtt_s * 1e9, a, sizeof(a)),
			 units_human_time(tv->rtt_min_s * 1e9, b, sizeof(b)),
			 units_human_time(tv->rtt_max_s * 1e9, c, sizeof(c)), d);
}

/* "RPM 640  working RTT 93.6 ms  idle RTT 0.05 ms" (TCP runs). */
static void test_rpm_line(const struct console_view *v, char *buf, size_t len)
{
	const struct console_rpm *r = &v->test.rpm;
	char w[32], i[32];

	buf[0] = '\0';
	if (v->test.opts.udp || !r->valid)
		return;
	units_human_time(r->working_ms * 1e6, w, sizeof(w));
	if (r->idle_ms > 0)
		snprintf(buf, len, "responsiveness: RPM %.0f  working RTT %s  idle "
			 "RTT %s", r->rpm, w, units_human_time(r->idle_ms * 1e6, i,
			 sizeof(i)));
	else
		snprintf(buf, len, "responsiveness: RPM %.0f  working RTT %s (%s)",
			 r->rpm, w, v->test.have_summary ? "no echo on the server: "
			 "the streams' TCP RTT only" : "so far, from the streams' TCP RTT");
}

/* The theory line with where its RTT came from. */
static void test_theory_line(const struct console_view *v, char *buf, size_t len)
{
	char rtt[32];

	const char *who = v->test.state != CONSOLE_TEST_IDLE && v->test.opts.udp ?
			  "theory (TCP)" : "theory";

	units_human_time(v->theory_rtt * 1e9, rtt, sizeof(rtt));
	if (v->theory.bound == THEORY_NONE || v->theory.bound == THEORY_RATE ||
	    !(v->theory_rtt > 0))
		snprintf(buf, len, "%s: %s", who, v->theory.line);
	else if (!v->theory_rtt_measured && v->theory_rtt_base > 0) {
		char d[32], b[32];

		units_human_time((v->theory_rtt - v->theory_rtt_base) * 1e9, d, sizeof(d));
		units_human_time(v->theory_rtt_base * 1e9, b, sizeof(b));
		snprintf(buf, len, "%s: %s  (RTT %s dialled + %s measured base)", who,
			 v->theory.line, d, b);
	} else
		snprintf(buf, len, "%s: %s  (RTT %s %s)", who, v->theory.line,
			 v->theory_rtt_measured ? "measured" : "dialled", rtt);
}

/* Draw the form: the left and right columns of option rows, the row being
 * edited as an underlined editor. */
static void test_draw_form(struct tui *t, const struct console_view *v, int y,
			   int cols)
{
	char line[512], val[64];
	int k, x, w;

	for (k = 0; k < TT_NROWS; k++) {
		static const char *const names[] = { "streams", "duration",
			"interval", "protocol", "bitrate -b", "window -w", "direction",
			"" };
		bool sel = k == t->test_row;
		unsigned attr = sel ? tui_attr(t, TUI_SELECT) : A_NORMAL;
		int yy = y + (k < TT_LEFT ? k : k - TT_LEFT);

		x = k < TT_LEFT ? 1 : cols / 2;
		w = k < TT_LEFT ? cols / 2 - 2 : cols - cols / 2 - 1;
		if (sel && t->test_editing) {
			snprintf(line, sizeof(line), "> %-10s", names[k]);
			tui_put(yy, x, 13, attr, line);
			attrset(A_UNDERLINE);
			mvhline(yy, x + 13, ' ', 14);
			tui_put(yy, x + 13, 14, t->le.fresh ? A_REVERSE : A_UNDERLINE, t->le.buf);
			attrset(A_NORMAL);
			continue;
		}
		test_row_value(t, v, k, val, sizeof(val));
		snprintf(line, sizeof(line), "%c %-10s %s", sel ? '>' : ' ', names[k],
			 val);
		tui_put(yy, x, w, attr, line);
	}
}

/* Draw a finished test from row y: the comparison with the expected rate,
 * the iperf3-style summary table, the panel and RPM lines, the chart and
 * where it was saved. */
static void test_draw_done(struct tui *t, const struct console_view *v, int y,
			   int bottom, int cols, double full)
{
	const struct console_test_view *tv = &v->test;
	char line[512], id[8];
	const struct client_summary *s = &tv->summary;
	double got = s->sum_received.bps;
	int k, n, room;

	if (v->theory_comparable && v->theory.expect_bps > 0 && got > 0 &&
	    !tv->opts.udp) {
		char a[32], b[32];

		snprintf(line, sizeof(line), "received %s = %.0f%% of the expected %s",
			 units_human_rate(got, a, sizeof(a)),
			 100.0 * got / v->theory.expect_bps,
			 units_human_rate(v->theory.expect_bps, b, sizeof(b)));
		tui_put(y++, 1, cols - 2, tui_attr(t, TUI_OK), line);
	} else if (got > 0 && !tv->opts.udp) {
		char a[32];

		snprintf(line, sizeof(line),
			 "received %s; no rate dialled: nothing to compare with",
			 units_human_rate(got, a, sizeof(a)));
		tui_put(y++, 1, cols - 2, tui_attr(t, TUI_DIM), line);
	}
	snprintf(line, sizeof(line), "[ ID]  Interval         %10s  %12s  %5s",
		 "Transfer", "Bitrate", "Retr");
	tui_put(y++, 1, cols - 2, A_BOLD, line);
	n = s->nstreams;
	/* per stream only if they fit with a 3-row chart below */
	if (y + 2 * n + 2 + 4 > bottom)
		n = 0;
	for (k = 0; k < n; k++) {
		snprintf(id, sizeof(id), "%d", s->sent[k].id);
		test_summary_line(line, sizeof(line), id, &s->sent[k],
				  s->duration, "sender");
		tui_put(y++, 1, cols - 2, A_NORMAL, line);
		test_summary_line(line, sizeof(line), id, &s->received[k],
				  s->duration, "receiver");
		tui_put(y++, 1, cols - 2, A_NORMAL, line);
	}
	test_summary_line(line, sizeof(line), "SUM", &s->sum_sent,
			  s->duration, "sender");
	tui_put(y++, 1, cols - 2, A_BOLD, line);
	test_summary_line(line, sizeof(line), "SUM", &s->sum_received,
			  s->duration, "receiver");
	tui_put(y++, 1, cols - 2, A_BOLD, line);
	test_panel_line(v, line, sizeof(line));
	if (line[0] && bottom - y > 4)
		tui_put(y++, 1, cols - 2, tui_attr(t, TUI_DIM), line);
	test_rpm_line(v, line, sizeof(line));
	if (line[0] && bottom - y > 4)
		tui_put(y++, 1, cols - 2, A_BOLD, line);
	room = bottom - y - (tv->saved_dir[0] ? 1 : 0);
	y += test_chart(t, v, y, room, cols, full);
	if (tv->saved_dir[0] && y < bottom) {
		snprintf(line, sizeof(line), "saved: %.440s/{run.svg,intervals.csv,profile.ini}",
			 tv->saved_dir);
		tui_put(y, 1, cols - 2, tui_attr(t, TUI_DIM), line);
	}
}

/* Draw a running test from row y: the bars per stream and their SUM,
 * the panel and RPM lines and the live chart. */
static void test_draw_live(struct tui *t, const struct console_view *v, int y,
			   int bottom, int cols, double full)
{
	const struct console_test_view *tv = &v->test;
	char line[512], id[8];
	int k, n, chart_rows, room;
	double sfull;

	/* live bars: streams scaled to their fair share of the full scale */
	sfull = tv->last.nstreams > 0 ? full / tv->last.nstreams : full;
	if (tv->max_stream_bps > sfull)
		sfull = tv->max_stream_bps;
	{
		char sc[32], ss[32];

		units_human_rate(full, sc, sizeof(sc));
		units_human_rate(sfull, ss, sizeof(ss));
		if (tv->last.nstreams > 1)
			snprintf(line, sizeof(line),
				 "bars: SUM full scale %s (%s), each stream %s", sc,
				 tv->scale_dialled ? "rate the sender holds" : "max seen",
				 ss);
		else
			snprintf(line, sizeof(line), "bars: full scale %s (%s)", sc,
				 tv->scale_dialled ? "rate the sender holds" : "max seen");
		tui_put(y++, 1, cols - 2, tui_attr(t, TUI_DIM), line);
	}
	room = bottom - y - 1;              /* after the SUM bar */
	chart_rows = room >= 8 ? 4 : room >= 5 ? 3 : 0;
	if (room - chart_rows - tv->last.nstreams > 4)
		chart_rows = room - tv->last.nstreams - 1 > 8 ? 8 :
			     room - tv->last.nstreams - 1;
	n = tv->last.nstreams;
	if (n > room - chart_rows)
		n = room - chart_rows - 1;
	if (n < 0)
		n = 0;
	for (k = 0; k < n; k++) {
		snprintf(id, sizeof(id), "[%3d]", tv->last.s[k].id);
		test_bar_row(t, y++, cols, id, &tv->last.s[k], sfull, A_NORMAL);
	}
	if (n < tv->last.nstreams) {
		snprintf(line, sizeof(line), "  ... %d more streams",
			 tv->last.nstreams - n);
		tui_put(y++, 1, cols - 2, tui_attr(t, TUI_DIM), line);
	}
	test_bar_row(t, y++, cols, "[SUM]", &tv->last.sum, full, A_BOLD);
	test_panel_line(v, line, sizeof(line));
	if (line[0] && bottom - y > 3)
		tui_put(y++, 1, cols - 2, tui_attr(t, TUI_DIM), line);
	test_rpm_line(v, line, sizeof(line));
	if (line[0] && bottom - y > 3)
		tui_put(y++, 1, cols - 2, tui_attr(t, TUI_DIM), line);
	test_chart(t, v, y, bottom - y, cols, full);
}

void screen_test_draw(struct tui *t, const struct console_view *v, int top,
		      int rows, int cols)
{
	const struct console_test_view *tv = &v->test;
	char line[512];
	int y = top + 1, bottom = top + rows;
	double full;

	tui_put(y++, 1, cols - 2, A_BOLD, "Throughput test (iperf3 protocol)");
	test_draw_form(t, v, y, cols);
	y += TT_LEFT;
	if (t->test_msg[0])
		tui_put(y, 1, cols - 2, tui_attr(t, TUI_ERROR), t->test_msg);
	y++;
	test_theory_line(v, line, sizeof(line));
	y += tui_wrap(y, 1, cols - 2, 2, tui_attr(t, TUI_WARN), line);
	if (tv->state == CONSOLE_TEST_IDLE) {
		tui_put(y + 1, 1, cols - 2, tui_attr(t, TUI_DIM),
			"Enter on [ Start ] (or s) runs the test; bars show each stream.");
		return;
	}
	snprintf(line, sizeof(line), "%s%s: %d %s stream%s to %s:%d, %g s, -i %g%s  [%d intervals]",
		 test_state_name(tv->state), tv->paused ? " (display paused)" : "",
		 tv->opts.streams, tv->opts.udp ? "UDP" : "TCP",
		 tv->opts.streams == 1 ? "" : "s", tv->opts.host, tv->opts.port,
		 tv->opts.duration, tv->opts.interval,
		 tv->opts.reverse ? ", reverse" : "", tv->nintervals);
	tui_put(y++, 1, cols - 2,
		tv->state == CONSOLE_TEST_FAILED ? tui_attr(t, TUI_ERROR) : A_BOLD, line);
	if (tv->state == CONSOLE_TEST_FAILED && tv->err[0])
		y += tui_wrap(y, 1, cols - 2, 2, tui_attr(t, TUI_ERROR), tv->err);
	/* a dial that changed during the run: its figures are not the dial's */
	if (tv->dial_note[0])
		y += tui_wrap(y, 1, cols - 2, 2, tui_attr(t, TUI_ERROR), tv->dial_note);
	full = tv->scale_bps > 0 ? tv->scale_bps : tv->max_sum_bps;
	if (tv->have_summary && tv->state == CONSOLE_TEST_DONE) {
		test_draw_done(t, v, y, bottom, cols, full);
		return;
	}
	if (tv->nintervals == 0)
		return;
	test_draw_live(t, v, y, bottom, cols, full);
}

/* Parse the editor's text into the form row; false with a message. */
static bool test_commit(struct tui *t)
{
	char *end;
	double d;
	long l;

	t->test_msg[0] = '\0';
	switch (t->test_row) {
	case TT_STREAMS:
		l = strtol(t->le.buf, &end, 10);
		if (end == t->le.buf || *end || l < 1 || l > CLIENT_MAX_STREAMS) {
			snprintf(t->test_msg, sizeof(t->test_msg),
				 "streams '%s': need a whole number 1..%d", t->le.buf,
				 CLIENT_MAX_STREAMS);
			return false;
		}
		t->req.streams = (int)l;
		return true;
	case TT_DURATION:
	case TT_INTERVAL:
		d = strtod(t->le.buf, &end);
		while (*end == ' ')
			end++;
		if (*end == 's')
			end++;
		if (t->test_row == TT_DURATION) {
			if (end == t->le.buf || *end || !(d >= 1 && d <= 86400)) {
				snprintf(t->test_msg, sizeof(t->test_msg),
					 "duration '%s': need seconds 1..86400", t->le.buf);
				return false;
			}
			t->req.duration = d;
		} else {
			if (end == t->le.buf || *end || !(d >= 0.1 && d <= 60)) {
				snprintf(t->test_msg, sizeof(t->test_msg),
					 "interval '%s': need seconds 0.1..60", t->le.buf);
				return false;
			}
			t->req.interval = d;
		}
		return true;
	case TT_WINDOW: {
		struct ll_err e = { 0 };
		uint64_t bytes;

		if (!t->le.buf[0] || !strcmp(t->le.buf, "0") ||
		    !strcmp(t->le.buf, "default")) {
			t->req.window = 0;
			return true;
		}
		if (units_parse_size(t->le.buf, &bytes, &e) < 0 || bytes > (1u << 30)) {
			snprintf(t->test_msg, sizeof(t->test_msg), "window: %.110s",
				 e.msg[0] ? e.msg : "at most 1gb");
			return false;
		}
		t->req.window = bytes;
		return true;
	}
	case TT_BITRATE: {
		struct ll_err e = { 0 };
		uint64_t bps;
		double v;

		if (!t->le.buf[0] || !strcmp(t->le.buf, "0") ||
		    !strcmp(t->le.buf, "unlimited")) {
			t->req.bitrate = 0;
			return true;
		}
		if (units_parse_rate(t->le.buf, &bps, &e) == 0) {
			t->req.bitrate = bps;
			return true;
		}
		/* iperf3's own form, as `linklab test -b`: 10M, 1.5G (1000-based) */
		if (units_parse_suffixed(t->le.buf, 1000, &v) == 0 && v >= 1 && v <= 1e15) {
			t->req.bitrate = (uint64_t)v;
			return true;
		}
		snprintf(t->test_msg, sizeof(t->test_msg), "bitrate: %.60s (or iperf3's "
			 "10M, 1.5G: 1000-based)", e.msg);
		return false;
	}
	default:
		return true;
	}
}

/* Step a form row by dir. */
static void test_step(struct tui *t, int dir, int big)
{
	int k, at = 3;

	switch (t->test_row) {
	case TT_STREAMS:
		t->req.streams += dir * (big ? 10 : 1);
		if (t->req.streams < 1)
			t->req.streams = 1;
		if (t->req.streams > CLIENT_MAX_STREAMS)
			t->req.streams = CLIENT_MAX_STREAMS;
		break;
	case TT_DURATION:
		t->req.duration += dir * (big ? 10 : 1);
		if (t->req.duration < 1)
			t->req.duration = 1;
		if (t->req.duration > 86400)
			t->req.duration = 86400;
		break;
	case TT_INTERVAL:
		for (k = 0; k < TEST_NINTERVALS; k++)
			if (form_intervals[k] <= t->req.interval + 1e-9)
				at = k;
		at += dir;
		if (at < 0)
			at = 0;
		if (at >= TEST_NINTERVALS)
			at = TEST_NINTERVALS - 1;
		t->req.interval = form_intervals[at];
		break;
	case TT_DIRECTION:
		t->req.reverse = !t->req.reverse;
		break;
	case TT_PROTO:
		t->req.udp = !t->req.udp;
		break;
	case TT_WINDOW: {
		static const uint64_t wsteps[] = { 0, 16384, 65536, 262144, 1048576,
						   4194304 };
		int wi = 0, nw = (int)(sizeof(wsteps) / sizeof(wsteps[0]));

		for (k = 0; k < nw; k++)
			if (wsteps[k] <= t->req.window)
				wi = k;
		wi = (wi + dir + nw) % nw;
		t->req.window = wsteps[wi];
		break;
	}
	case TT_BITRATE: {
		static const uint64_t steps[] = { 0, 1000000, 10000000, 50000000,
						  100000000, 1000000000 };
		int bi = 0, nst = (int)(sizeof(steps) / sizeof(steps[0]));

		for (k = 0; k < nst; k++)
			if (steps[k] <= t->req.bitrate)
				bi = k;
		bi = (bi + dir + nst) % nst;
		t->req.bitrate = steps[bi];
		break;
	}
	default:
		break;
	}
}

int screen_test_key(struct tui *t, int key, const struct console_view *v,
		    struct console_intent *in)
{
	char val[64];
	int r;

	if (t->test_editing) {
		r = lineedit_key(&t->le, tui_le_key(key));
		if (r == LE_CANCEL) {
			t->test_editing = false;
			t->test_msg[0] = '\0';
		} else if (r == LE_DONE && test_commit(t)) {
			t->test_editing = false;
		}
		return TR_REDRAW;
	}
	switch (key) {
	case KEY_UP:
	case 'k':
		t->test_row = (t->test_row + TT_NROWS - 1) % TT_NROWS;
		return TR_REDRAW;
	case KEY_DOWN:
	case 'j':
	case '\t':
		t->test_row = (t->test_row + 1) % TT_NROWS;
		return TR_REDRAW;
	case 'g':          /* first / last row, as README's movement keys */
	case KEY_HOME:
		t->test_row = 0;
		return TR_REDRAW;
	case 'G':
	case KEY_END:
		t->test_row = TT_NROWS - 1;
		return TR_REDRAW;
	case KEY_LEFT:
	case 'h':
		test_step(t, -1, 0);
		return TR_REDRAW;
	case KEY_RIGHT:
	case 'l':
	case ' ':
		test_step(t, 1, 0);
		return TR_REDRAW;
	case KEY_NPAGE:
		test_step(t, -1, 1);
		return TR_REDRAW;
	case KEY_PPAGE:
		test_step(t, 1, 1);
		return TR_REDRAW;
	case 'e':
	case 'i':
		if (t->test_row <= TT_INTERVAL || t->test_row == TT_BITRATE ||
		    t->test_row == TT_WINDOW) {
			test_row_value(t, v, t->test_row, val, sizeof(val));
			val[strcspn(val, " ")] = '\0';
			lineedit_init(&t->le, val);
			t->test_editing = true;
			t->test_msg[0] = '\0';
		}
		return TR_REDRAW;
	case 'x':
		if (!test_busy(v))
			return TR_NONE;
		in->kind = CI_TEST_STOP;
		return TR_INTENT | TR_REDRAW;
	case 'z':
	case 'Z':
		if (!test_busy(v))
			return TR_NONE;
		in->kind = CI_TEST_PAUSE;
		return TR_INTENT | TR_REDRAW;
	case 'w':
		if (v->test.nintervals == 0) {
			snprintf(t->test_msg, sizeof(t->test_msg), "nothing to save: run a test first");
			return TR_REDRAW;
		}
		in->kind = CI_TEST_SAVE;
		return TR_INTENT | TR_REDRAW;
	case 's':
	case KEY_ENTER:
	case '\n':
	case '\r':
		if (test_busy(v)) {
			if (key == 's' || t->test_row != TT_START)
				return TR_NONE;
			in->kind = CI_TEST_STOP;
			return TR_INTENT | TR_REDRAW;
		}
		t->test_msg[0] = '\0';
		in->kind = CI_TEST_START;
		in->test = t->req;
		return TR_INTENT | TR_REDRAW;
	default:
		break;
	}
	if (key >= '0' && key <= '9' &&
	    (t->test_row <= TT_INTERVAL || t->test_row == TT_BITRATE ||
	     t->test_row == TT_WINDOW)) {
		lineedit_init(&t->le, "");
		lineedit_key(&t->le, key);
		t->test_editing = true;
		t->test_msg[0] = '\0';
		return TR_REDRAW;
	}
	return TR_NONE;
}
