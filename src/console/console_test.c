/* SPDX-License-Identifier: MIT */
/* console_test.c - the controller's traffic test: B's server, the client, its intervals, save.
 * No curses here; the screens only see struct console_view. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "console_int.h"

static int console_test_launch(struct console *c, const struct client_opts *oin, int port,
			       struct ll_err *err);

/* Stop the server on B if we started it. */
void console_server_stop(struct console *c)
{
	struct ll_err e = { 0 };

	if (!c->server_up)
		return;
	c->server_up = false;
	if (c->ps.has_b && !c->v.b_lost)
		console_b_submit(c, peerq_job_new(PQ_SERVER_STOP));
	(void)e;
}

/* Free the finished test object and its server. */
void console_test_end(struct console *c)
{
	if (c->test) {
		client_free(c->test);
		c->test = NULL;
	}
	console_server_stop(c);
}

/* Responsiveness of the run so far: self = the intervals' mean sender RTT;
 * at the end, foreign = the loaded echo probes' mean and idle = the idle
 * probes' mean (when linklab serve answered them). */
static void console_rpm_update(struct console_test_view *t)
{
	struct console_rpm *r = &t->rpm;
	double self = t->rtt_n ? t->rtt_sum_s / t->rtt_n * 1000 : 0;
	const struct rtt_stats *ld = &t->summary.rtt_load, *id = &t->summary.rtt_idle;

	r->foreign = t->have_summary && ld->received > 0;
	r->idle_ms = t->have_summary && id->received > 0 ? id->avg_ms : 0;
	if (r->foreign && self > 0)
		r->working_ms = (ld->avg_ms + self) / 2;
	else
		r->working_ms = r->foreign ? ld->avg_ms : self;
	r->valid = r->working_ms > 0;
	r->rpm = r->valid ? 60000.0 / r->working_ms : 0;
}

int console_test_start(struct console *c, const struct console_test_req *r,
		       struct ll_err *err)
{
	struct console_test_view *t = &c->v.test;
	struct client_opts o;
	struct ll_diag diag;
	struct ll_err e = { 0 };
	int rc, port = c->port;

	if (c->vjob) {
		rc = ll_err_set(err, -EBUSY, "test: verify is measuring the path "
				"(%.0f s); wait for its table", verify_job_age(c->vjob));
		console_fmt(c->v.error, sizeof(c->v.error), "%s", err ? err->msg : "test: busy");
		return rc;
	}

	if (c->test)
		return ll_err_set(err, -EBUSY, "test: one is already running");
	client_opts_init(&o);
	o.streams = r->streams;
	o.duration = r->duration;
	o.interval = r->interval;
	o.reverse = r->reverse;
	o.udp = r->udp;
	o.bitrate = r->bitrate;
	o.window = r->window;
	o.rtt = !o.udp;     /* idle and loaded echo probes: RPM at the end */
	if (o.udp && !o.bitrate)
		o.bitrate = 1048576;    /* iperf3's UDP default, as `linklab test -u` */
	/* TCP write size (-l): iperf3's 128 KiB per stream up to 16 streams,
	 * then 2 MiB shared (at least 16 KiB each), so 128 streams cost 2 MiB
	 * of buffers instead of 16 MiB (console RSS goal < 16 MB; the write
	 * size is not the window: throughput is unchanged) */
	if (!o.udp && o.streams > 16) {
		o.blksize = (uint32_t)(2u << 20) / (uint32_t)o.streams;
		if (o.blksize < 16384)
			o.blksize = 16384;
	}
	if (!c->ps.has_b && !c->target[0]) {
		rc = ll_err_set(&e, -EDESTADDRREQ,
				"test: no peer and no target (start with --peer HOST or -c ADDR)");
		goto fail;
	}
	if (c->ps.has_b && !c->ps.addr_b[0]) {
		rc = ll_err_set(&e, -EDESTADDRREQ,
				"test: no address for B's test traffic (use --peer-data ADDR)");
		goto fail;
	}
	console_fmt(o.host, sizeof(o.host), "%s",
		    c->ps.has_b ? c->ps.addr_b : c->target);
	o.port = port;
	ll_diag_clear(&diag);
	if (client_opts_validate(&o, &diag) < 0) {
		rc = ll_diag_to_err(&diag, &e);
		if (!rc)
			rc = ll_err_set(&e, -EINVAL, "test options do not validate");
		goto fail;
	}
	if (c->ps.has_b) {
		/* B's server first: the test starts when its port comes */
		if (c->test_waiting)
			return ll_err_set(err, -EBUSY, "test: waiting for B's test server already");
		c->test_wait = o;
		c->test_waiting = true;
		console_fmt(c->v.status, sizeof(c->v.status), "test: starting B's test server ...");
		console_b_submit(c, peerq_job_new(PQ_SERVER_START));
		return console_b_result(c, err);
	}
	return console_test_launch(c, &o, port, err);
fail:
	console_fmt(t->err, sizeof(t->err), "%s", e.msg);
	console_fmt(c->v.error, sizeof(c->v.error), "%s", e.msg);
	if (err)
		*err = e;
	return rc;
}

/* What side i holds as one line: its read-back ("not read back" without
 * one), with the endpoint engine's state when one hooks the interface. */
static void console_test_held_text(const struct console_side_view *s, char *buf, size_t len)
{
	static const char *const eng[] = {
		[CONSOLE_ENG_HOLDS] = "linklab's engine",
		[CONSOLE_ENG_GONE] = "linklab's engine gone: traffic passes unimpaired",
		[CONSOLE_ENG_STOPPED] = "linklab's engine stopped: traffic stalls",
		[CONSOLE_ENG_UNHOOKED] = "the engine's rule removed: traffic passes unimpaired",
	};
	size_t n;

	if (!s->qd_valid) {
		console_fmt(buf, len, "not read back");
		return;
	}
	impair_summary(&s->held, buf, len);
	if (s->engine != CONSOLE_ENG_NONE) {
		n = strlen(buf);
		console_fmt(buf + n, len - n, " (%s)", eng[s->engine]);
	}
}

/* The dials a run starts under: each side's read-back now. */
void console_test_dial_start(struct console *c)
{
	struct console_test_view *t = &c->v.test;
	int i;

	t->start_mono = console_now();
	t->dial_note[0] = '\0';
	for (i = 0; i < 2; i++) {
		const struct console_side_view *s = &c->v.side[i];

		t->held_start_valid[i] = (i == CONSOLE_IDX_A || s->present) && s->qd_valid;
		memset(&t->held_start[i], 0, sizeof(t->held_start[i]));
		if (t->held_start_valid[i])
			t->held_start[i] = s->held;
		console_test_held_text(s, t->held_start_text[i], sizeof(t->held_start_text[i]));
	}
}

/* A read-back of side i came while a run goes on: a dial other than the
 * one the run started under (changed, its engine gone or stopped) is
 * noted once, with when, for the screen and the saved results. */
void console_test_dial_check(struct console *c, int i)
{
	struct console_test_view *t = &c->v.test;
	const struct console_side_view *s = &c->v.side[i];
	char now[256], what[sizeof(t->dial_note)];

	if ((t->state != CONSOLE_TEST_STARTING && t->state != CONSOLE_TEST_RUNNING) ||
	    t->dial_note[0] || !t->held_start_valid[i] || !s->qd_valid)
		return;
	console_test_held_text(s, now, sizeof(now));
	if (!strcmp(now, t->held_start_text[i]))
		return;
	console_fmt(what, sizeof(what), "%s's dial changed: was '%.80s', now '%.120s'; "
		    "the figures from then on are not under the dial",
		    console_side_name(i), t->held_start_text[i], now);
	console_test_note(c, what);
}

void console_test_note(struct console *c, const char *what)
{
	struct console_test_view *t = &c->v.test;

	if ((t->state != CONSOLE_TEST_STARTING && t->state != CONSOLE_TEST_RUNNING) ||
	    t->dial_note[0])
		return;
	console_fmt(t->dial_note, sizeof(t->dial_note), "%.1f s into the run: %s",
		    console_now() - t->start_mono, what);
}

/* B's server answered (or not): start the client, or say why not. */
void console_test_server_done(struct console *c, struct peerq_job *j)
{
	struct console_test_view *t = &c->v.test;
	struct ll_err e = j->err;

	if (!c->test_waiting)
		return;
	c->test_waiting = false;
	if (j->rc < 0) {
		ll_err_prefix(&e, "B: start test server: ");
		console_fmt(t->err, sizeof(t->err), "%s", e.msg);
		console_fmt(c->v.error, sizeof(c->v.error), "%s", e.msg);
		c->b_last_rc = j->rc;
		c->b_last_err = e;
		return;
	}
	c->server_up = true;
	c->b_last_rc = console_test_launch(c, &c->test_wait, j->port, &c->b_last_err);
}

/* Connect the test client (B's server, if any, listens on port). */
static int console_test_launch(struct console *c, const struct client_opts *oin, int port,
			       struct ll_err *err)
{
	struct console_test_view *t = &c->v.test;
	struct client_opts o = *oin;
	struct ll_err e = { 0 };
	int rc;

	o.port = port;
	rc = client_start(&o, &c->test, &e);
	if (rc < 0) {
		c->test = NULL;
		console_server_stop(c);
		goto fail;
	}
	memset(t, 0, sizeof(*t));
	t->state = CONSOLE_TEST_STARTING;
	t->opts = o;
	c->nivs = 0;
	console_test_dial_start(c);
	console_derive(c);
	console_fmt(c->v.status, sizeof(c->v.status),
		 "test: %d %s stream%s, %g s to %s:%d%s", o.streams,
		 o.udp ? "UDP" : "TCP", o.streams > 1 ? "s" : "", o.duration,
		 o.host, o.port, o.reverse ? " (reverse)" : "");
	c->v.error[0] = '\0';
	return 0;
fail:
	console_fmt(t->err, sizeof(t->err), "%s", e.msg);
	console_fmt(c->v.error, sizeof(c->v.error), "%s", e.msg);
	if (err)
		*err = e;
	return rc;
}

int console_test_fd(const struct console *c)
{
	return c->test ? client_event_fd(c->test) : -1;
}

/* Full scale for the bars: the bottleneck rate of the sending direction
 * (the sending side's tbf or the bridge's, whichever is smaller). */
static void console_test_scale(struct console *c)
{
	struct console_test_view *t = &c->v.test;
	uint64_t rate = t->opts.reverse ? c->v.path.rate_ba : c->v.path.rate_ab;

	t->scale_dialled = rate > 0;
	t->scale_bps = t->scale_dialled ? (double)rate : t->max_sum_bps;
}

/* Fold one interval into the view. */
static void console_test_interval(struct console *c, const struct client_interval *iv)
{
	struct console_test_view *t = &c->v.test;
	int k;

	t->state = CONSOLE_TEST_RUNNING;
	t->nintervals++;
	/* keep every interval for the saved chart/CSV */
	if (c->nivs == c->capivs && c->capivs < CONSOLE_HISTORY) {
		int ncap = c->capivs ? c->capivs * 2 : 16;
		struct client_interval *nv;

		if (ncap > CONSOLE_HISTORY)
			ncap = CONSOLE_HISTORY;
		nv = realloc(c->ivs, (size_t)ncap * sizeof(*nv));
		if (nv) {
			c->ivs = nv;
			c->capivs = ncap;
		}
	}
	if (c->nivs == c->capivs && c->nivs > 0) {
		memmove(&c->ivs[0], &c->ivs[1], (size_t)(c->nivs - 1) * sizeof(c->ivs[0]));
		c->nivs--;
	}
	if (c->nivs < c->capivs)
		c->ivs[c->nivs++] = *iv;
	if (t->paused)
		return;
	t->last = *iv;
	{
		double rtt = console_interval_rtt(iv);

		if (rtt > 0) {
			double base = rtt - (double)c->v.path.rtt_added / 1e9;

			if (base < 0)
				base = 0;
			if (c->rtt_base_s < 0 || base < c->rtt_base_s)
				c->rtt_base_s = base;
			c->rtt_path = c->v.path;
			t->rtt_s = rtt;
			t->rtt_sum_s += rtt;
			t->rtt_n++;
			console_rpm_update(t);
			if (!(t->rtt_min_s > 0) || rtt < t->rtt_min_s)
				t->rtt_min_s = rtt;
			if (rtt > t->rtt_max_s)
				t->rtt_max_s = rtt;
		}
	}
	if (t->nhist == CONSOLE_HISTORY) {
		memmove(&t->hist[0], &t->hist[1],
			(CONSOLE_HISTORY - 1) * sizeof(t->hist[0]));
		t->nhist--;
	}
	t->hist[t->nhist++] = iv->sum;
	if (iv->sum.bps > t->max_sum_bps)
		t->max_sum_bps = iv->sum.bps;
	for (k = 0; k < iv->nstreams && k < CLIENT_MAX_STREAMS; k++)
		if (iv->s[k].bps > t->max_stream_bps)
			t->max_stream_bps = iv->s[k].bps;
	console_test_scale(c);
}

int console_test_pump(struct console *c)
{
	struct console_test_view *t = &c->v.test;
	struct client_event *ev;
	const struct client_summary *sum;
	int changed = 0, ended = 0;

	if (!c->test)
		return 0;
	ev = malloc(sizeof(*ev));
	if (!ev)
		return 0;
	while (client_next_event(c->test, ev) == 1) {
		changed = 1;
		switch (ev->kind) {
		case CLIENT_EV_CONNECTED:
			t->state = CONSOLE_TEST_RUNNING;
			console_fmt(c->v.status, sizeof(c->v.status),
				 "test: connected to %s:%d", t->opts.host,
				 t->opts.port);
			break;
		case CLIENT_EV_INTERVAL:
			console_test_interval(c, &ev->interval);
			console_derive(c);
			break;
		case CLIENT_EV_DONE:
			sum = client_summary(c->test);
			if (sum) {
				t->summary = *sum;
				t->have_summary = true;
				console_rpm_update(t);
			}
			t->state = CONSOLE_TEST_DONE;
			t->paused = false;
			console_fmt(c->v.status, sizeof(c->v.status),
				 "test: done, %d interval%s", t->nintervals,
				 t->nintervals == 1 ? "" : "s");
			if (c->nivs > 0) {
				struct ll_err se = { 0 };

				if (console_test_save(c, &se) < 0)
					console_fmt(c->v.error, sizeof(c->v.error),
						    "test: save results: %s", se.msg);
			}
			ended = 1;
			break;
		case CLIENT_EV_ERROR:
			t->state = CONSOLE_TEST_FAILED;
			t->paused = false;
			console_fmt(t->err, sizeof(t->err), "%s", ev->err.msg);
			console_fmt(c->v.error, sizeof(c->v.error), "test: %s",
				 ev->err.msg);
			ended = 1;
			break;
		}
		if (ended)
			break;
	}
	free(ev);
	if (ended)
		console_test_end(c);
	return changed;
}

void console_test_stop(struct console *c)
{
	if (c->test) {
		client_stop(c->test);
		console_fmt(c->v.status, sizeof(c->v.status), "test: stopping");
	}
}

const struct client_interval *console_test_intervals(const struct console *c, int *n)
{
	*n = c->nivs;
	return c->ivs;
}

void console_test_caption(const struct console *c, char *buf, size_t len)
{
	const struct console_view *v = &c->v;
	const struct client_opts *o = &v->test.opts;
	char a[128] = "-", b[128] = "-", br[32] = "", prof[96], rpm[160] = "";
	const struct console_rpm *r = &v->test.rpm;

	if (r->valid && r->idle_ms > 0)
		console_fmt(rpm, sizeof(rpm), "\nresponsiveness: idle RTT %.3g ms, "
			    "working RTT %.3g ms, RPM %.0f", r->idle_ms, r->working_ms,
			    r->rpm);
	else if (r->valid)
		console_fmt(rpm, sizeof(rpm), "\nresponsiveness: working RTT %.3g ms "
			    "(the streams' TCP RTT), RPM %.0f", r->working_ms, r->rpm);
	if (v->test.held_start_valid[0])
		impair_summary(&v->test.held_start[0], a, sizeof(a));
	if (v->test.held_start_valid[1])
		impair_summary(&v->test.held_start[1], b, sizeof(b));
	if (o->bitrate)
		units_format_rate(o->bitrate, br, sizeof(br));
	console_fmt(prof, sizeof(prof), v->profile_name[0] ? " (profile %s)" : "%s",
		    v->profile_name);
	console_fmt(buf, len,
		    "dial%s: A %s egress: %s; B %s egress: %s\n"
		    "peers: %s, %s; %s\n"
		    "test: %d %s stream%s, %g s, %s%s%s\n"
		    "theory (RTT %s %.3g ms): %s%s%s%s",
		    prof, v->side[0].dev, a,
		    v->side[1].present ? v->side[1].dev : "-", b,
		    v->side[0].label, v->side[1].label, v->session,
		    o->streams, o->udp ? "UDP" : "TCP", o->streams == 1 ? "" : "s",
		    o->duration, o->reverse ? "B -> A (-R)" : "A -> B",
		    br[0] ? ", -b " : "", br,
		    v->theory_rtt_measured ? "measured" : "dialled",
		    v->theory_rtt * 1000, v->theory.line, rpm,
		    v->test.dial_note[0] ? "\nWARNING: " : "", v->test.dial_note);
}

/* Write text to a new file at path (O_EXCL: never over another file). */
static int console_write_text(const char *path, const char *text, struct ll_err *err)
{
	FILE *f = fopen(path, "wx");
	int ok;

	if (!f)
		return ll_err_set(err, -errno, "cannot write %s: %s", path,
				  strerror(errno));
	ok = fputs(text, f) >= 0;
	ok = (fclose(f) == 0) && ok;
	return ok ? 0 : ll_err_set(err, -EIO, "cannot write %s", path);
}

int console_test_save(struct console *c, struct ll_err *err)
{
	struct console_test_view *t = &c->v.test;
	char dir[PATH_MAX - 32], path[PATH_MAX], cap[1024];
	struct plot_opts po = { 0 };
	static const char *const bound[] = {
		[THEORY_NONE] = "theory", [THEORY_RATE] = "rate-limited",
		[THEORY_WINDOW] = "window-limited", [THEORY_LOSS] = "loss-limited",
	};
	const struct console_side_view *snd =
		&c->v.side[t->opts.reverse ? CONSOLE_IDX_B : CONSOLE_IDX_A];
	struct impair none = { 0 };
	int rc;

	if (c->nivs == 0)
		return ll_err_set(err, -ENODATA, "save: no test intervals yet (run a test)");
	rc = csvout_new_run_dir(dir, sizeof(dir), err);
	if (rc < 0)
		goto fail;
	console_test_caption(c, cap, sizeof(cap));
	po.title = t->opts.udp ? "linklab test (UDP)" : "linklab test (TCP)";
	po.caption = cap;
	po.dial_bps = snd->qd_valid && (snd->held.set & IMP_RATE) ?
		      (double)snd->held.rate : 0;
	po.ceiling_bps = c->v.theory_comparable ? c->v.theory.expect_bps : 0;
	po.ceiling_label = bound[c->v.theory.bound];
	console_fmt(path, sizeof(path), "%s/run.svg", dir);
	rc = plot_svg_write_opts(path, c->ivs, c->nivs,
				 t->have_summary ? &t->summary : NULL, &po, err);
	if (rc < 0)
		goto fail;
	console_fmt(path, sizeof(path), "%s/intervals.csv", dir);
	rc = csvout_write_file(path, c->ivs, c->nivs,
			       t->have_summary ? &t->summary : NULL, cap, err);
	if (rc < 0)
		goto fail;
	console_fmt(path, sizeof(path), "%s/profile.ini", dir);
	{
		char desc[400];

		/* the dials the run started under; a change during it is said */
		console_fmt(desc, sizeof(desc), "the dials both peers held when this run started%s%s",
			    t->dial_note[0] ? "; NOT held throughout: " : "", t->dial_note);
		rc = profile_write(path, c->v.profile_name[0] ? c->v.profile_name : "run", desc,
				   t->held_start_valid[0] ? &t->held_start[0] : &none,
				   t->held_start_valid[1] ? &t->held_start[1] : &none, err);
	}
	if (rc < 0)
		goto fail;
	if (c->verify_json && c->verify_json[0]) {
		console_fmt(path, sizeof(path), "%s/verify.json", dir);
		rc = console_write_text(path, c->verify_json, err);
		if (rc < 0)
			goto fail;
	}
	console_fmt(t->saved_dir, sizeof(t->saved_dir), "%s", dir);
	console_fmt(c->v.status, sizeof(c->v.status), "test: %d intervals saved to %s%s",
		    c->nivs, dir, c->verify_json && c->verify_json[0] ?
		    " (with the last verify table)" : "");
	return 0;
fail:
	if (err)
		console_fmt(c->v.error, sizeof(c->v.error), "save: %s", err->msg);
	return rc;
}
