/* SPDX-License-Identifier: MIT */
/* console_middle.c - the controller's middle box: the bridge's session, its dials and counters.
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

/* --- the middle box --- */

static const char *const console_mdir_name[2] = { "A->B", "B->A" };

/* Copy a STATE into the view; rates from the byte counters. */
static void console_middle_update(struct console *c, const struct middle_state *st)
{
	struct console_middle_view *M = &c->v.middle;
	double now = console_now(), dt = now - c->mid_t;
	int k;

	M->attached = true;
	M->lost = false;
	M->err[0] = '\0';
	if (M->stall_s > 0) {
		console_fmt(c->v.status, sizeof(c->v.status),
			    "middle %s answers again (no reply for %d s)", M->host, M->stall_s);
		/* a set refused meanwhile: that error is over */
		if (c->mid_busy_err)
			c->v.error[0] = '\0';
	}
	c->mid_busy_err = false;
	M->stall_s = 0;
	M->pid = st->pid;
	console_fmt(M->engine, sizeof(M->engine), "%s", st->engine);
	console_fmt(M->if_a, sizeof(M->if_a), "%s", st->if_a);
	console_fmt(M->if_b, sizeof(M->if_b), "%s", st->if_b);
	for (k = 0; k < 2; k++) {
		const struct middle_dir *d = &st->dir[k];
		struct console_middle_dir *v = &M->dir[k];

		console_fmt(v->dial, sizeof(v->dial), "%s", d->dial);
		v->fields = d->fields;
		if (c->mid_prev_valid && dt >= 0.2 &&
		    d->rx_bytes >= c->mid_prev[k][0] && d->tx_bytes >= c->mid_prev[k][1]) {
			v->rx_bps = (double)(d->rx_bytes - c->mid_prev[k][0]) * 8 / dt;
			v->tx_bps = (double)(d->tx_bytes - c->mid_prev[k][1]) * 8 / dt;
		} else if (!c->mid_prev_valid) {
			v->rx_bps = v->tx_bps = -1;
		}
		v->rx_packets = d->rx_packets;
		v->tx_packets = d->tx_packets;
		v->lost = d->lost;
		v->duplicated = d->duplicated;
		v->corrupted = d->corrupted;
		v->reordered = d->reordered;
		v->drops = d->drops;
		if (!c->mid_prev_valid || dt >= 0.2) {
			c->mid_prev[k][0] = d->rx_bytes;
			c->mid_prev[k][1] = d->tx_bytes;
		}
	}
	if (!c->mid_prev_valid || dt >= 0.2) {
		c->mid_t = now;
		c->mid_prev_valid = true;
	}
	console_derive(c);
}

/* The session to the middle failed: say so, go on with A and B. */
static void console_middle_lost(struct console *c, const char *why)
{
	struct console_middle_view *M = &c->v.middle;

	M->attached = false;
	M->lost = true;
	M->stall_s = 0;
	M->changed = false;   /* its lease ended: the bridge restores itself */
	/* close the session too: a middle host that only stalled and
	 * answers again later must find it gone (sshd ends the attach
	 * process, the lease ends) instead of a session kept until quit.
	 * The channel was closed already (middle_fail); this only queues the
	 * disconnect and closes the socket, bounded by ssh_close's 1 s. */
	middle_close(c->mid);
	c->mid = NULL;
	console_fmt(M->err, sizeof(M->err), "middle lost: %.300s (session closed; %s)",
		    why && *why ? why : "session closed",
		    M->engine_asked[0] ?
		    "the bridge this console started stops when its lease ends (now, or when the middle host answers again)" :
		    "the bridge restores its dials when its lease ends (now, or when the middle host answers again)");
	console_fmt(c->v.status, sizeof(c->v.status), "%s", M->err);
	if (c->v.dial_sides & CONSOLE_M_BOTH)
		c->v.dial_sides = c->ps.has_b && !c->v.b_lost ? CONSOLE_BOTH : CONSOLE_A;
	console_derive(c);
}

/* A middle call failed with rc: lost session, stopped bridge, or only
 * this request. */
static void console_middle_failed(struct console *c, int rc, const struct ll_err *e)
{
	struct console_middle_view *M = &c->v.middle;

	if (middle_lost(c->mid)) {
		console_middle_lost(c, e->msg);
		console_test_note(c, "the middle box was lost: the bridge's dial is not known from then on");
	} else if (!middle_attached(c->mid)) {
		/* a bridge this console started stopped (killed, crashed): the
		 * next attach starts a new one, which gets the dials this one
		 * held; a run going on is told its path was cut */
		if (M->attached && M->engine_asked[0] && !c->mid_redo_valid) {
			c->mid_redo[MIDDLE_AB] = M->dir[MIDDLE_AB].fields;
			c->mid_redo[MIDDLE_BA] = M->dir[MIDDLE_BA].fields;
			c->mid_redo_valid = !impair_is_empty(&c->mid_redo[0]) ||
					    !impair_is_empty(&c->mid_redo[1]);
		}
		if (M->attached)
			console_test_note(c, "the middle box's bridge stopped: the path was cut "
					  "until it ran again, and its dial not held");
		M->attached = false;
		M->stall_s = 0;
		M->changed = false;
		c->mstart_valid = false;
		c->mid_prev_valid = false;
		c->mid_retry = console_now() + CONSOLE_MIDDLE_RETRY_S;
		console_fmt(M->err, sizeof(M->err), "%.400s; retrying every %.0f s",
			    e->msg, CONSOLE_MIDDLE_RETRY_S);
		console_derive(c);
	}
	(void)rc;
}

/* A bridge this console started stopped and a new one was started: the
 * dials the stopped one held are set on it again (the new one starts with
 * none), and the status says so, or why they could not be. */
static void console_middle_redo(struct console *c)
{
	struct impair ab = c->mid_redo[MIDDLE_AB], ba = c->mid_redo[MIDDLE_BA];
	struct ll_err e = { 0 };
	char keep[sizeof(c->v.status)];

	c->mid_redo_valid = false;
	if (console_middle_set2(c, &ab, &ba, &e) < 0) {
		console_fmt(c->v.error, sizeof(c->v.error),
			    "the bridge was started again after it stopped, but its dials could "
			    "not be set again: %.300s", e.msg);
		return;
	}
	console_fmt(keep, sizeof(keep), "%s", c->v.status);
	console_fmt(c->v.status, sizeof(c->v.status),
		    "the bridge stopped and was started again (pid %ld); its dials set again: %.180s",
		    c->v.middle.pid, keep);
}

/* Attach (or re-attach) to the middle's bridge. */
static int console_middle_attach(struct console *c)
{
	struct middle_state st;
	struct ll_err e = { 0 };
	int rc;

	/* a bridge the console started before B's session (--bridge) is
	 * attached already: its state now */
	rc = middle_attached(c->mid) ? middle_get(c->mid, &st, &e)
				     : middle_attach(c->mid, &st, &e);
	if (rc < 0) {
		console_middle_failed(c, rc, &e);
		if (!middle_lost(c->mid) && !middle_attached(c->mid))
			c->mid_retry = console_now() + CONSOLE_MIDDLE_RETRY_S;
		return rc;
	}
	c->mstart = st;
	c->mstart_valid = true;
	c->mid_prev_valid = false;
	c->mid_retry = 0;
	c->v.middle.changed = false;
	console_middle_update(c, &st);
	if (c->mid_redo_valid)
		console_middle_redo(c);
	return 0;
}

void console_set_middle(struct console *c, struct middle *m, const char *label)
{
	struct console_middle_view *M = &c->v.middle;

	c->mid = m;
	M->present = m != NULL;
	if (!m)
		return;
	console_fmt(M->label, sizeof(M->label), "%s", label && *label ? label : "M (middle)");
	console_fmt(M->host, sizeof(M->host), "%s", middle_name(m));
	console_fmt(M->engine_asked, sizeof(M->engine_asked), "%s",
		    middle_start_engine(m) ? middle_start_engine(m) : "");
	M->dir[0].rx_bps = M->dir[0].tx_bps = -1;
	M->dir[1].rx_bps = M->dir[1].tx_bps = -1;
	console_middle_attach(c);
}

int console_middle_fd(const struct console *c)
{
	if (!c->mid || c->v.middle.lost || middle_get_wait_ms(c->mid) < 0)
		return -1;
	return middle_fd(c->mid);
}

int console_middle_pump(struct console *c)
{
	struct console_middle_view *M = &c->v.middle;
	struct middle_state st;
	struct ll_err e = { 0 };
	long waited;
	int rc, stall;

	if (!c->mid || M->lost || middle_get_wait_ms(c->mid) < 0)
		return 0;
	rc = middle_get_poll(c->mid, &st, &e);
	if (rc == 0) {
		console_middle_update(c, &st);
		return 1;
	}
	if (rc != -EAGAIN) {
		console_middle_failed(c, rc, &e);
		return 1;
	}
	/* no reply yet: after MIDDLE_SLOW_MS the section says so */
	waited = middle_get_wait_ms(c->mid);
	stall = waited >= MIDDLE_SLOW_MS ? (int)(waited / 1000) : 0;
	if (stall == M->stall_s)
		return 0;
	M->stall_s = stall;
	return 1;
}

int console_middle_tick(struct console *c)
{
	struct ll_err e = { 0 };
	double now = console_now();
	int rc;

	if (!c->mid || c->v.middle.lost)
		return 0;
	if (!middle_attached(c->mid)) {
		if (c->mid_retry > 0 && now < c->mid_retry)
			return 0;
		console_middle_attach(c);
		return 1;
	}
	/* a get on its way: its reply, or how long it has been waiting */
	if (middle_get_wait_ms(c->mid) >= 0)
		return console_middle_pump(c);
	if (now - c->mid_sent < CONSOLE_MIDDLE_PERIOD_S - 0.05)
		return 0;
	c->mid_sent = now;
	rc = middle_get_send(c->mid, &e);
	if (rc < 0) {
		console_middle_failed(c, rc, &e);
		return 1;
	}
	return 0;
}

/* Set the bridge: ab / ba NULL = that direction left as it is. */
int console_middle_set2(struct console *c, const struct impair *ab,
			const struct impair *ba, struct ll_err *err)
{
	struct console_middle_view *M = &c->v.middle;
	const struct impair *d[2] = { ab, ba };
	struct middle_state st;
	struct ll_diag diag;
	struct ll_err e = { 0 };
	char what[64];
	int rc, k;

	console_fmt(what, sizeof(what), "bridge %s",
		    ab && ba ? "both directions" : ab ? "A->B" : "B->A");
	if (!c->mid && !M->lost)
		return ll_err_set(err, -ENOTCONN, "no middle box (start with --middle HOST)");
	if (!middle_attached(c->mid)) {
		rc = ll_err_set(&e, -ENOTCONN, "not attached (%.300s)",
				M->lost ? "middle lost" : M->err[0] ? M->err : "no bridge");
		goto fail;
	}
	ll_diag_clear(&diag);
	for (k = 0; k < 2; k++)
		if (d[k] && !impair_is_empty(d[k]))
			impair_validate(d[k], &diag);
	if (diag.nerrors) {
		rc = ll_diag_to_err(&diag, &e);
		if (rc == 0)
			rc = ll_err_set(&e, -EINVAL, "dial does not validate");
		console_fmt(M->set_err, sizeof(M->set_err), "%s", e.msg);
		goto fail;
	}
	rc = middle_set(c->mid, ab, ba, &st, &e);
	if (rc == -EINVAL) {
		/* the bridge refused: every one of its errors, nothing applied */
		console_fmt(M->set_err, sizeof(M->set_err), "%s", e.msg);
		goto fail;
	}
	if (rc < 0) {
		console_middle_failed(c, rc, &e);
		goto fail;
	}
	M->set_err[0] = '\0';
	M->changed = true;
	console_middle_update(c, &st);
	c->v.error[0] = '\0';
	if ((!ab || impair_is_empty(ab)) && (!ba || impair_is_empty(ba)))
		console_fmt(c->v.status, sizeof(c->v.status), "cleared %s", what);
	else if (ab && ba)
		/* each direction named: "A->B: rate 200kbit ...; B->A: ..."
		 * (a profile's [a] and [b] differ) */
		console_fmt(c->v.status, sizeof(c->v.status),
			    "applied on bridge A->B: %.80s; B->A: %.80s%s%.60s",
			    M->dir[MIDDLE_AB].dial[0] ? M->dir[MIDDLE_AB].dial : "none",
			    M->dir[MIDDLE_BA].dial[0] ? M->dir[MIDDLE_BA].dial : "none",
			    st.warnings[0] ? "; warning: " : "", st.warnings);
	else
		console_fmt(c->v.status, sizeof(c->v.status), "applied on %s: %.80s%s%.60s",
			    what, ab ? M->dir[MIDDLE_AB].dial : M->dir[MIDDLE_BA].dial,
			    st.warnings[0] ? "; warning: " : "", st.warnings);
	return 0;
fail:
	console_fmt(c->v.error, sizeof(c->v.error), "%s: %.400s", what, e.msg);
	c->mid_busy_err = rc == -EBUSY;
	if (err)
		*err = e;
	return rc;
}

int console_middle_apply(struct console *c, const struct impair *d, unsigned sides,
			 struct ll_err *err)
{
	return console_middle_set2(c, (sides & CONSOLE_M_AB) ? d : NULL,
				   (sides & CONSOLE_M_BA) ? d : NULL, err);
}

/* Quit: put the bridge's dials back as they were when the lease began,
 * then end the lease (the bridge would restore them itself). A lost
 * middle box is not restored here: *lost is set, part left empty. */
void console_middle_quit(struct console *c, char *part, size_t len, bool *lost)
{
	struct console_middle_view *M = &c->v.middle;
	struct middle_state st;
	struct ll_err e = { 0 };
	int rc;

	part[0] = '\0';
	if (M->lost) {          /* its session was closed when lost */
		*lost = true;
		return;
	}
	if (!c->mid)
		return;
	if (M->engine_asked[0] && middle_attached(c->mid)) {
		/* started here: closing its stdin stops it, ports restored */
		middle_detach(c->mid);
		M->changed = false;
		console_fmt(part, len, "bridge %s (stopped: this console started it)", M->host);
		return;
	}
	if (!middle_attached(c->mid) || !M->changed)
		return;
	rc = middle_set(c->mid, &c->mstart.dir[MIDDLE_AB].fields,
			&c->mstart.dir[MIDDLE_BA].fields, &st, &e);
	if (rc == 0 && !c->mstart.dir[0].unparsed[0] && !c->mstart.dir[1].unparsed[0])
		console_fmt(part, len, "bridge %s", M->host);
	else
		console_fmt(part, len, "bridge %s (lease released: it restores itself)",
			    M->host);
	M->changed = false;
	middle_detach(c->mid);
	(void)console_mdir_name;
}
