/* SPDX-License-Identifier: MIT */
/* console_safety.c - the controller's safety: B's revert timer, owner release, keepalive, host tuning.
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

/* End the hold (owner_release): A's locks here; B's keeper through B's
 * queue, waited for briefly (a B that does not answer keeps its record:
 * the next console finds it). */
void console_owner_release(struct console *c, bool clean)
{
	struct peer *b = c->own.b;

	c->own.b = NULL;
	if (b && c->bq && !c->v.b_lost && !peerq_pending(c->bq)) {
		struct peerq_job *j = peerq_job_new(PQ_LOCK_RELEASE);

		if (j) {
			j->remove = clean;
			if (peerq_submit(c->bq, j))
				peerq_wait_idle(c->bq, 2000);
		}
	}
	owner_release(&c->own, clean);
}

void console_set_safety(struct console *c, const struct peer_safety *s)
{
	c->safety = *s;
	if (c->bq)
		peerq_set_safety(c->bq, s);   /* B is the queue's */
	else if (c->ps.has_b && !c->v.b_lost && c->ps.b.ops->set_safety)
		c->ps.b.ops->set_safety(&c->ps.b, s);
	c->v.revert_s = console_revert_s(c);
}

int console_apply_check(struct console *c, const struct impair *d, unsigned sides,
			bool force, char *warn, size_t len, struct ll_err *err)
{
	char w[256];
	int i, rc, first = 0;

	if (warn && len)
		warn[0] = '\0';
	if (err)
		ll_err_clear(err);
	/* both checks ask B for the session's addresses: none once it is
	 * lost (and then no session is left to cut) */
	if (c->v.b_lost || !c->ps.has_b)
		return 0;
	/* inline: B's route asked now (it may change); threaded: the one
	 * fetched by console_set_async (unknown: nothing to check, as when B
	 * cannot tell; B's own apply checks again) */
	if (!c->b_async && peerq_ops(c->bq)->session) {
		c->bflow_known = false;
		console_b_submit(c, peerq_job_new(PQ_SSHFLOW));
	}
	if (!c->bflow_known)
		return 0;
	for (i = 0; i < 2; i++) {
		struct ll_err e = { 0 };

		if (!(sides & (1u << i)) || !console_peer(c, i) ||
		    !c->v.side[i].dev[0])
			continue;
		w[0] = '\0';
		rc = peerset_ssh_check_flow(&c->ps, &c->bflow, i, c->v.side[i].dev, d,
					    force, w, sizeof(w), &e);
		if (rc < 0) {
			if (!e.msg[0])
				ll_err_set(&e, rc, "%s: %s", c->v.side[i].dev,
					   strerror(-rc));
			console_join_err(err, rc, console_side_name(i), e.msg);
			if (!first)
				first = rc;
			continue;
		}
		if (w[0] && warn && len) {
			if (warn[0])
				strncat(warn, "\n", len - strlen(warn) - 1);
			strncat(warn, w, len - strlen(warn) - 1);
		}
	}
	return first;
}

int console_apply_safe(struct console *c, const struct impair *d, unsigned sides,
		       bool confirmed, bool force, struct ll_err *err)
{
	struct console_confirm *cf = &c->v.confirm;
	struct ll_err e = { 0 };
	char warn[sizeof(cf->text)];
	int rc;

	memset(cf, 0, sizeof(*cf));
	if (!confirmed)
		c->unarmed_asked = false;
	if (sides & CONSOLE_M_BOTH) {
		/* the bridge carries no SSH session: nothing to confirm */
		c->v.dial = *d;
		c->v.dial_sides = sides;
		rc = console_middle_apply(c, d, sides & CONSOLE_M_BOTH, err);
		sides &= CONSOLE_BOTH;
		if (!sides || rc < 0)
			return rc;
	}
	if (!confirmed && !impair_is_empty(d)) {
		rc = console_apply_check(c, d, sides, false, warn, sizeof(warn), &e);
		if (rc < 0 || warn[0]) {
			cf->pending = true;
			cf->need_force = rc == -EPERM;
			cf->dial = *d;
			cf->sides = sides;
			if (rc < 0)
				console_fmt(cf->text, sizeof(cf->text), "%s%s%s",
					    e.msg, warn[0] ? "\n" : "", warn);
			else
				console_fmt(cf->text, sizeof(cf->text), "%s", warn);
			c->v.dial = *d;
			c->v.dial_sides = sides;
			console_fmt(c->v.status, sizeof(c->v.status),
				    "%s", cf->need_force ?
				    "100% loss on the session's interface: y forces it, n cancels" :
				    "the dial touches the SSH session's interface: y applies, n cancels");
			if (err)
				ll_err_set(err, -EAGAIN, "%.300s", cf->text);
			return -EAGAIN;
		}
	}
	/* force and a y to "no revert timer could be armed" go with B's apply
	 * job (its safety for that apply only); an -ENOLCK coming back from
	 * B raises that question (console_change_b_done) */
	c->b_unarmed_next = confirmed && c->unarmed_asked;
	c->unarmed_asked = false;
	c->b_force_next = force;
	c->b_ask_next = true;
	rc = console_apply(c, d, sides, err);
	c->b_force_next = false;
	c->b_unarmed_next = false;
	c->b_ask_next = false;
	if (rc == -ENOLCK && cf->pending)
		return -EAGAIN;           /* asked (inline: B's result is in) */
	return rc;
}

int console_keepalive(struct console *c, bool hup, int *next_s)
{
	struct ll_err e = { 0 };
	int next = 0, rc;

	if (next_s)
		*next_s = 0;
	if (!c->ps.has_b || c->v.b_lost)
		return 0;
	if (c->b_async)          /* the worker keeps the session alive */
		return console_peer_pump(c);
	if (hup) {
		console_mark_lost(c, "the connection to B's sshd was closed");
		return 1;
	}
	if (!c->ps.b.ops->session)
		return 0;
	rc = c->ps.b.ops->session->keepalive(&c->ps.b, &next, &e);
	if (rc < 0) {
		if (!e.msg[0])
			ll_err_set(&e, rc, "keepalive: %s", strerror(-rc));
		console_mark_lost(c, e.msg);
		return 1;
	}
	if (next_s)
		*next_s = next;
	return 0;
}

/* Side's sysctl set returned rc. */
static int console_sysctl_fold(struct console *c, int side, const char *name,
			       const char *value, int rc, struct ll_err *e,
			       struct ll_err *err)
{
	if (rc < 0) {
		if (!e->msg[0])
			ll_err_set(e, rc, "%s: %s", name, strerror(-rc));
		if (!(side == CONSOLE_IDX_B && c->v.b_lost))
			console_side_fail(c, side, e);
		if (err)
			ll_err_set(err, rc, "%s: %s", console_side_name(side), e->msg);
		return rc;
	}
	c->tuned[side] = true;
	console_fmt(c->v.status, sizeof(c->v.status), "%s: %s = %s (restored on quit)",
		    console_side_name(side), name, value);
	return 0;
}

void console_sysctl_done(struct console *c, struct peerq_job *j)
{
	c->b_last_rc = console_sysctl_fold(c, CONSOLE_IDX_B, j->name, j->value, j->rc, &j->err,
					   &c->b_last_err);
}

int console_sysctl_set(struct console *c, int side, const char *name,
		       const char *value, struct ll_err *err)
{
	struct peer *p;
	const struct peer_ops *ops;
	struct ll_err e = { 0 };
	int rc;

	if (side != CONSOLE_IDX_A && side != CONSOLE_IDX_B)
		return ll_err_set(err, -EINVAL, "sysctl: side %d: expected A or B", side);
	p = console_peer(c, side);
	if (!p)
		return ll_err_set(err, c->v.b_lost ? -ENOTCONN : -ENODEV,
				  "B: %s", c->v.b_lost ? c->v.b_lost_msg : "no peer");
	ops = side == CONSOLE_IDX_B ? peerq_ops(c->bq) : p->ops;
	if (!ops->tune)
		return ll_err_set(err, -ENOTSUP, "%s: sysctls not supported by the %s backend",
				  console_side_name(side), ops->name);
	if (side == CONSOLE_IDX_B) {
		struct peerq_job *j = peerq_job_new(PQ_SYSCTL_SET);

		if (!j)
			return ll_err_set(err, -ENOMEM, "out of memory");
		console_fmt(j->name, sizeof(j->name), "%s", name);
		console_fmt(j->value, sizeof(j->value), "%s", value);
		console_b_submit(c, j);
		return console_b_result(c, err);
	}
	rc = p->ops->tune->sysctl_set(p, name, value, &e);
	return console_sysctl_fold(c, side, name, value, rc, &e, err);
}
