/* SPDX-License-Identifier: MIT */
/* console.c - the console controller's life cycle: new, the intents, tick, quit, free.
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
#include "linklab/peer/hostinfo.h"
#include "linklab/peer/peer_restore.h"

void console_fmt(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, len, fmt, ap);
	va_end(ap);
}

double console_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The peer of side i, or NULL when that side is not open. */
struct peer *console_peer(struct console *c, int i)
{
	if (i == CONSOLE_IDX_A)
		return &c->ps.a;
	return c->ps.has_b && !c->v.b_lost ? &c->ps.b : NULL;
}

int console_revert_s(const struct console *c)
{
	return c->safety.revert_s > 0 ? c->safety.revert_s : 30;
}

/* B's session is gone: stop driving B and say how it comes back. */
void console_mark_lost(struct console *c, const char *why)
{
	int left = console_revert_s(c);

	if (c->v.b_lost)
		return;
	c->v.b_lost = true;
	if (c->v.revert_deadline > 0) {
		double l = c->v.revert_deadline - console_now();

		left = l > 0 ? (int)ceil(l) : 0;
	}
	console_fmt(c->v.b_lost_msg, sizeof(c->v.b_lost_msg),
		    "peer B lost: it restores itself within %d s (%.180s)", left,
		    why && *why ? why : "session closed");
	console_fmt(c->v.status, sizeof(c->v.status), "%s", c->v.b_lost_msg);
	console_fmt(c->v.side[CONSOLE_IDX_B].err, sizeof(c->v.side[CONSOLE_IDX_B].err),
		    "%s", c->v.b_lost_msg);
	/* B restores itself; quitting must not try to, and what B held
	 * can no longer be read */
	c->changed[CONSOLE_IDX_B].n = 0;
	c->v.side[CONSOLE_IDX_B].qd_valid = false;
	c->v.side[CONSOLE_IDX_B].tx_bps = -1;
	console_derive(c);
	if (c->v.dial_sides & CONSOLE_B)
		c->v.dial_sides = CONSOLE_A;
}

int console_new(struct console **out, const struct peerset *ps, const char *target,
		int port, struct ll_err *err)
{
	struct console *c;
	struct console_side_view *a, *b;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ll_err_set(err, -ENOMEM, "controller: out of memory");
	c->ps = *ps;
	/* a second console is refused; a dead one's leftovers become ours
	 * (taken before B's queue exists: B is still this thread's) */
	{
		int rc = owner_take(&c->own, &c->ps, err), k;
		static const struct impair none;

		if (rc < 0) {
			free(c);
			return rc;
		}
		for (k = 0; k < c->own.nleft; k++)
			console_mark_changed(c, c->own.left[k].side, c->own.left[k].dev, &none);
	}
	if (c->ps.has_b && peerq_new(&c->bq, &c->ps.b, NULL, false, err) < 0) {
		owner_release(&c->own, false);
		free(c);
		return -ENOMEM;
	}
	console_fmt(c->target, sizeof(c->target), "%s", target ? target : "");
	c->port = port > 0 ? port : 5201;
	c->v.is_root = geteuid() == 0;
	c->v.dial_sides = ps->has_b ? CONSOLE_BOTH : CONSOLE_A;
	c->v.test.state = CONSOLE_TEST_IDLE;
	client_opts_init(&c->v.test.opts);
	c->local_window = hostinfo_local_window();
	c->rtt_base_s = -1;
	c->b_eng_rc = -ENOENT;
	c->v.window = c->local_window;
	c->v.side[0].tx_bps = c->v.side[1].tx_bps = -1;
	c->v.revert_s = 30;

	a = &c->v.side[CONSOLE_IDX_A];
	b = &c->v.side[CONSOLE_IDX_B];
	a->present = true;
	console_fmt(a->label, sizeof(a->label), "%s",
		 c->ps.a.label[0] ? c->ps.a.label : "A (this host)");
	console_fmt(a->route_dev, sizeof(a->route_dev), "%s", c->ps.dev_a);
	console_fmt(a->dev, sizeof(a->dev), "%s", c->ps.dev_a);
	b->present = c->ps.has_b;
	b->sel = -1;
	a->sel = -1;
	if (c->ps.has_b) {
		console_fmt(b->label, sizeof(b->label), "%s",
			 c->ps.b.label[0] ? c->ps.b.label : "B (peer)");
		console_fmt(b->route_dev, sizeof(b->route_dev), "%s", c->ps.dev_b);
		console_fmt(b->dev, sizeof(b->dev), "%s", c->ps.dev_b);
		console_fmt(c->v.session, sizeof(c->v.session), "%s via %s, test to %s",
			 c->ps.target.alias[0] ? c->ps.target.alias : "peer",
			 c->ps.b.ops && c->ps.b.ops->name ? c->ps.b.ops->name : "ssh",
			 c->ps.addr_b[0] ? c->ps.addr_b : "?");
	} else {
		console_fmt(b->label, sizeof(b->label), "B (no peer)");
		if (c->target[0])
			console_fmt(c->v.session, sizeof(c->v.session),
				 "no peer; test target %s:%d", c->target, c->port);
		else
			console_fmt(c->v.session, sizeof(c->v.session),
				 "no peer (use --peer HOST or -c ADDR for tests)");
	}
	console_refresh(c, NULL);
	console_derive(c);
	if (c->own.note[0])
		console_fmt(c->v.status, sizeof(c->v.status), "%s", c->own.note);
	else if (!c->v.error[0])
		console_fmt(c->v.status, sizeof(c->v.status), "ready%s",
			 c->v.is_root ? "" : " (not root: apply on A needs root)");
	*out = c;
	return 0;
}

const struct console_view *console_view(const struct console *c)
{
	return &c->v;
}

/* Wait for B's queue to empty: at most the command bound (plus 2 s), and
 * not after one of the cancel fds (console_set_quit_cancel) became readable
 * (input: a key). A cancel fd that is hung up or failed (the terminal gone)
 * is dropped from the wait instead: nobody is left to press a key.
 * true when B finished everything. */
static bool console_quit_wait_b(struct console *c)
{
	double end = console_now() + console_timeout_s(c) + 2;
	struct pollfd pf[2];
	int k;

	if (c->ncancel == 0 || !c->b_async)
		return peerq_wait_idle(c->bq, (console_timeout_s(c) + 2) * 1000);
	for (k = 0; k < c->ncancel; k++)
		pf[k] = (struct pollfd){ .fd = c->cancel_fd[k], .events = POLLIN };
	while (!peerq_wait_idle(c->bq, 0)) {
		if (console_now() >= end)
			return false;
		if (poll(pf, (nfds_t)c->ncancel, 50) > 0)
			for (k = 0; k < c->ncancel; k++) {
				if (pf[k].revents & (POLLHUP | POLLERR | POLLNVAL))
					pf[k].fd = -1;
				else if (pf[k].revents & POLLIN)
					return false;
			}
	}
	return true;
}

void console_set_quit_cancel(struct console *c, const int *fds, int n)
{
	int k;

	c->ncancel = 0;
	for (k = 0; k < n && k < 2; k++)
		if (fds[k] >= 0)
			c->cancel_fd[c->ncancel++] = fds[k];
}

/* Quit, side B: restore its changed interfaces (and tunings) through its
 * queue, waiting at most the command bound (plus 2 s) for all of it; a B
 * that does not answer by then (or did not settle its change in flight:
 * settled false) is left to restore itself. */
static int console_quit_b(struct console *c, bool settled, char *summary, size_t len,
			  int *nrest, struct ll_err *err)
{
	struct console_changed *ch = &c->changed[CONSOLE_IDX_B];
	struct peerq_job *j;
	char part[128];
	int k, rc, first = 0, nq = 0;
	bool gone = !settled;

	if (c->tuned[CONSOLE_IDX_B] && (j = peerq_job_new(PQ_TUNE_RESTORE))) {
		j->tag = CONSOLE_TAG_QUIT;
		nq += peerq_submit(c->bq, j) != 0;
	}
	for (k = 0; k < ch->n; k++) {
		j = peerq_job_new(impair_is_empty(&ch->before[k]) ? PQ_CLEAR : PQ_APPLY);
		if (!j)
			continue;
		j->tag = CONSOLE_TAG_QUIT;
		j->dial = ch->before[k];
		/* the journal's exact prior state; the dial only if that is
		 * not what dev held (a dial applied before the console) */
		j->restore_to = true;
		console_fmt(j->dev, sizeof(j->dev), "%s", ch->dev[k]);
		nq += peerq_submit(c->bq, j) != 0;
	}
	ch->n = 0;
	if (!console_quit_wait_b(c))
		gone = true;
	while ((j = peerq_take(c->bq))) {
		if (j->tag != CONSOLE_TAG_QUIT) {
			console_b_handle(c, j);
			free(j);
			continue;
		}
		nq--;
		if (j->lost)
			gone = true;
		rc = j->rc;
		if (j->kind == PQ_TUNE_RESTORE) {
			if (rc == 0)
				c->tuned[CONSOLE_IDX_B] = false;
		} else if (!j->lost) {
			console_fmt(part, sizeof(part), "%s%sB %s", *nrest ? ", " : "",
				    rc < 0 ? "FAILED " : "", j->dev);
			(*nrest)++;
			if (summary && len)
				strncat(summary, part, len - strlen(summary) - 1);
		}
		if (rc < 0 && !j->lost) {
			console_join_err(err, rc, "B", j->err.msg);
			if (!first)
				first = rc;
		}
		if (j->lost)
			console_b_lost(c, j);
		free(j);
	}
	/* anything not seen restored on B (no answer, a failed restore, a
	 * change that finished after the restores were queued) is left to
	 * B's hold guard: the session is abandoned, not closed */
	if (gone || nq > 0 || first || ch->n > 0)
		peerq_abandon_at_close(c->bq);
	if (gone || nq > 0) {
		c->quit_b_left = true;
		/* B did not answer: what it holds is its own to restore */
		console_fmt(part, sizeof(part), "%sB not answering (restores itself)",
			    *nrest ? ", " : "");
		(*nrest)++;
		if (summary && len)
			strncat(summary, part, len - strlen(summary) - 1);
	}
	return first;
}

/* undoes one side's host tuning and restores its changed devices, each
 * named in summary; the first error is kept in *first */
static void console_quit_side(struct console *c, int i, struct peer *p,
			      char *summary, size_t len, int *nrest, int *first,
			      struct ll_err *err)
{
	struct console_changed *ch = &c->changed[i];
	char part[128];
	int k, rc;

	if (c->tuned[i] && p->ops->tune) {
		struct ll_err e = { 0 };

		rc = p->ops->tune->tune_restore(p, &e);
		if (rc < 0) {
			console_join_err(err, rc, console_side_name(i), e.msg);
			if (!*first)
				*first = rc;
		} else {
			c->tuned[i] = false;
		}
	}
	for (k = 0; k < ch->n; k++) {
		struct ll_err e = { 0 };

		/* the journal's exact prior state; the held dial only if
		 * that is not what dev held (peer_restore.h) */
		rc = peer_restore_to(p, ch->dev[k], &ch->before[k], &e);
		if (rc < 0) {
			console_join_err(err, rc, console_side_name(i), e.msg);
			if (!*first)
				*first = rc;
			console_fmt(part, sizeof(part), "%sFAILED %s %s",
				 *nrest ? ", " : "", console_side_name(i),
				 ch->dev[k]);
		} else {
			console_fmt(part, sizeof(part), "%s%s %s",
				 *nrest ? ", " : "", console_side_name(i),
				 ch->dev[k]);
		}
		(*nrest)++;
		if (summary && len)
			strncat(summary, part, len - strlen(summary) - 1);
	}
	ch->n = 0;
}

/* the quit sentence: "restored ..." or "nothing to restore", and the
 * bridge-lost sentence when mlost */
static void console_quit_summary(const struct console *c, char *summary,
				 size_t len, int nrest, bool mlost)
{
	if (summary && len) {
		if (!nrest) {
			console_fmt(summary, len, "nothing to restore");
		} else {
			char tmp[512];

			console_fmt(tmp, sizeof(tmp), "restored %s", summary);
			console_fmt(summary, len, "%s", tmp);
		}
		/* its own sentence: nothing of the bridge was restored here */
		if (mlost) {
			const char *sent = c->v.middle.engine_asked[0] ?
				CONSOLE_MIDDLE_LOST_QUIT_STARTED : CONSOLE_MIDDLE_LOST_QUIT;

			if (!nrest)
				console_fmt(summary, len, "%s", sent);
			else
				console_fmt(summary + strlen(summary), len - strlen(summary),
					    "; %s", sent);
		}
	}
}

/* true while a change of B (apply or clear) waits for its result */
static bool console_b_changing(const struct console *c)
{
	size_t k;

	for (k = 0; k < sizeof(c->chg) / sizeof(c->chg[0]); k++)
		if (c->chg[k].id)
			return true;
	return false;
}

int console_quit(struct console *c, char *summary, size_t len, struct ll_err *err)
{
	int i, rc, first = 0, nrest = 0;
	bool mlost = false, b_settled = true;
	char part[128];

	if (summary && len)
		summary[0] = '\0';
	verify_job_free(c->vjob);    /* its load must not outlive the quit */
	c->vjob = NULL;
	c->v.verify.running = false;
	if (c->test) {
		client_stop(c->test);
		console_test_end(c);
	}
	console_server_stop(c);
	/* a change of B still running (an apply confirmed just before the
	 * quit) decides what both sides hold - B's result, or A rolled back
	 * when B failed: it is waited for first, so that the restores below
	 * cover it */
	if (c->bq && c->b_async && console_b_changing(c)) {
		b_settled = console_quit_wait_b(c);
		console_peer_pump(c);
	}
	for (i = 0; i < 2; i++) {
		struct peer *p = console_peer(c, i);
		struct console_changed *ch = &c->changed[i];

		if (p && i == CONSOLE_IDX_B) {
			rc = console_quit_b(c, b_settled, summary, len, &nrest, err);
			if (rc < 0 && !first)
				first = rc;
			continue;
		}
		if (!p) {
			ch->n = 0;
			if (i == CONSOLE_IDX_B && c->v.b_lost) {
				c->quit_b_left = true;
				console_fmt(part, sizeof(part),
					    "%sB lost (restores itself)",
					    nrest ? ", " : "");
				nrest++;
				if (summary && len)
					strncat(summary, part,
						len - strlen(summary) - 1);
			}
			continue;
		}
		console_quit_side(c, i, p, summary, len, &nrest, &first, err);
	}
	console_middle_quit(c, part, sizeof(part), &mlost);
	if (part[0]) {
		if (summary && len) {
			if (nrest)
				strncat(summary, ", ", len - strlen(summary) - 1);
			strncat(summary, part, len - strlen(summary) - 1);
		}
		nrest++;
	}
	console_quit_summary(c, summary, len, nrest, mlost);
	c->quit_done = true;
	c->quit_ok = first == 0;
	return first;
}

bool console_quit_b_left(const struct console *c)
{
	return c->quit_b_left;
}

void console_free(struct console *c)
{
	if (!c)
		return;
	if (c->test) {
		client_stop(c->test);
		client_free(c->test);
	}
	/* the hold's records go when everything was restored (or nothing
	 * changed); else the next run finds them. B's keeper is a channel of
	 * B's session: its release runs on B's worker, before the queue ends */
	console_owner_release(c, c->quit_done ? c->quit_ok :
			      c->changed[CONSOLE_IDX_A].n == 0 && c->changed[CONSOLE_IDX_B].n == 0);
	/* B is the queue's: it closes it (a worker still inside a bounded
	 * command is left to end alone) */
	if (c->bq) {
		peerq_free(c->bq, c->v.b_lost || peerq_pending(c->bq) ? 200 : 2000);
		c->bq = NULL;
		c->ps.has_b = false;
	}
	peerset_close(&c->ps);
	middle_close(c->mid);
	verify_job_free(c->vjob);
	free(c->verify_json);
	for (char **a = c->verify_argv; a && *a; a++)
		free(*a);
	free(c->verify_argv);
	free(c->ivs);
	free(c->prof);
	free(c);
}

int console_do(struct console *c, const struct console_intent *in, struct ll_err *err)
{
	switch (in->kind) {
	case CI_NONE:
		return 0;
	case CI_APPLY:
		return console_apply_safe(c, &in->dial, in->sides, in->confirmed,
					  in->force, err);
	case CI_CONFIRM_CANCEL:
		if (c->v.confirm.pending)
			console_fmt(c->v.status, sizeof(c->v.status),
				    "apply cancelled: nothing changed");
		memset(&c->v.confirm, 0, sizeof(c->v.confirm));
		c->unarmed_asked = false;
		return 0;
	case CI_VERIFY:
		return console_verify_start(c, err);
	case CI_VERIFY_HIDE:
		c->v.verify.shown = false;
		return 0;
	case CI_CLEAR:
		return console_clear(c, in->sides, err);
	case CI_REFRESH:
		return console_refresh(c, err);
	case CI_SELECT:
		return console_select(c, in->side, in->index, err);
	case CI_SET_DIAL:
		c->v.dial = in->dial;
		c->v.dial_sides = in->sides;
		return 0;
	case CI_TEST_START:
		return console_test_start(c, &in->test, err);
	case CI_TEST_STOP:
		console_test_stop(c);
		return 0;
	case CI_QUIT:
		return console_quit(c, NULL, 0, err);
	case CI_TEST_PAUSE:
		if (c->v.test.state == CONSOLE_TEST_RUNNING ||
		    c->v.test.state == CONSOLE_TEST_STARTING) {
			c->v.test.paused = !c->v.test.paused;
			console_fmt(c->v.status, sizeof(c->v.status), "test: display %s",
				    c->v.test.paused ? "paused (intervals still recorded)"
						 : "resumed");
		}
		return 0;
	case CI_TEST_SAVE:
		return console_test_save(c, err);
	case CI_PROFILES_RELOAD:
		return console_profiles_reload(c, err);
	case CI_PROFILE_APPLY:
		return console_profile_apply(c, in->index, in->sides, err);
	case CI_PROFILE_SAVE:
		return console_profile_save(c, in->name, err);
	case CI_PROFILE_RENAME:
		return console_profile_rename(c, in->index, in->name, err);
	case CI_PROFILE_DELETE:
		return console_profile_delete(c, in->index, err);
	}
	return ll_err_set(err, -EINVAL, "controller: unknown intent %d",
			  (int)in->kind);
}

int console_tick(struct console *c, bool remote)
{
	int i, rc, changed = 0;

	c->tick_t = console_now();
	for (i = 0; i < 2; i++) {
		if (i == CONSOLE_IDX_B && !remote)
			continue;
		if (!console_peer(c, i) || !c->v.side[i].dev[0])
			continue;
		/* B: not while its earlier requests still wait */
		if (i == CONSOLE_IDX_B && c->b_async && peerq_pending(c->bq) > 0)
			continue;
		rc = console_read_back_tag(c, i, CONSOLE_TAG_TICK, NULL);
		if (rc == 0 && i == CONSOLE_IDX_A)
			console_sync_link_qdisc(&c->v.side[i]);
		if (i == CONSOLE_IDX_A || !c->b_async)
			changed = 1;
	}
	return changed;
}

void console_note(struct console *c, const char *msg)
{
	console_fmt(c->v.status, sizeof(c->v.status), "%s", msg);
}
