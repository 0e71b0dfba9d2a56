/* SPDX-License-Identifier: MIT */
/* ctl.c - the console's controller: peers, dial, read-back state, the test.
 * No curses here; the screens only see struct ctl_view. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linklab/ctl.h"

#define CTL_MAX_CHANGED 16

struct ctl_changed {
	int n;
	char dev[CTL_MAX_CHANGED][IF_NAMESIZE];
};

/* snprintf into a fixed field; truncation of long texts is intended. */
static void ctl_fmt(char *dst, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void ctl_fmt(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, len, fmt, ap);
	va_end(ap);
}

struct ctl {
	struct peerset ps;
	char target[256];             /* -c ADDR ("" = none) */
	int port;                     /* port for -c targets */
	struct test *test;            /* running test or NULL */
	bool server_up;               /* B's server started by us */
	bool quit_done;
	struct ctl_changed changed[2];
	struct ctl_view v;
};

/* The peer of side i, or NULL when that side is not open. */
static struct peer *ctl_peer(struct ctl *c, int i)
{
	if (i == CTL_IDX_A)
		return &c->ps.a;
	return c->ps.has_b ? &c->ps.b : NULL;
}

static const char *ctl_side_name(int i)
{
	return i == CTL_IDX_A ? "A" : "B";
}

/* Remember that linklab changed dev on side i. */
static void ctl_mark_changed(struct ctl *c, int i, const char *dev)
{
	struct ctl_changed *ch = &c->changed[i];
	int k;

	for (k = 0; k < ch->n; k++)
		if (!strcmp(ch->dev[k], dev))
			return;
	if (ch->n < CTL_MAX_CHANGED)
		ctl_fmt(ch->dev[ch->n++], IF_NAMESIZE, "%s", dev);
}

static void ctl_unmark_changed(struct ctl *c, int i, const char *dev)
{
	struct ctl_changed *ch = &c->changed[i];
	int k;

	for (k = 0; k < ch->n; k++) {
		if (strcmp(ch->dev[k], dev))
			continue;
		memmove(ch->dev[k], ch->dev[k + 1],
			(size_t)(ch->n - k - 1) * IF_NAMESIZE);
		ch->n--;
		return;
	}
}

/* Record the error for side i in the view and return code. */
static int ctl_side_fail(struct ctl *c, int i, const struct ll_err *e)
{
	struct ctl_side_view *s = &c->v.side[i];

	ctl_fmt(s->err, sizeof(s->err), "%s", e->msg);
	ctl_fmt(c->v.error, sizeof(c->v.error), "%s: %s", ctl_side_name(i),
		 e->msg);
	return e->code ? e->code : -EIO;
}

/* Read back what the kernel holds on side i's selected interface. */
static int ctl_read_back(struct ctl *c, int i, struct ll_err *err)
{
	struct ctl_side_view *s = &c->v.side[i];
	struct peer *p = ctl_peer(c, i);
	struct ll_err e = { 0 };
	int rc;

	s->qd_valid = false;
	memset(&s->held, 0, sizeof(s->held));
	s->held_text[0] = '\0';
	if (!p || !s->dev[0])
		return 0;
	memset(&s->qd, 0, sizeof(s->qd));
	rc = p->ops->read_qdiscs(p, s->dev, &s->qd, &e);
	if (rc < 0) {
		ll_err_prefix(&e, "read qdiscs of %s: ", s->dev);
		if (err)
			*err = e;
		return ctl_side_fail(c, i, &e);
	}
	s->qd_valid = true;
	qdisc_state_to_impair(&s->qd, &s->held);
	qdisc_state_summary(&s->qd, s->held_text, sizeof(s->held_text));
	return 0;
}

/* Keep the selection by name after a re-list; else pick route_dev. */
static void ctl_reselect(struct ctl_side_view *s)
{
	int k;

	s->sel = -1;
	for (k = 0; k < s->links.n && s->dev[0]; k++)
		if (!strcmp(s->links.l[k].name, s->dev))
			s->sel = k;
	for (k = 0; k < s->links.n && s->sel < 0; k++)
		if (!strcmp(s->links.l[k].name, s->route_dev))
			s->sel = k;
	if (s->sel < 0 && s->links.n > 0) {
		/* first non-loopback interface */
		s->sel = 0;
		for (k = 0; k < s->links.n; k++)
			if (strcmp(s->links.l[k].name, "lo")) {
				s->sel = k;
				break;
			}
	}
	if (s->sel >= 0)
		ctl_fmt(s->dev, sizeof(s->dev), "%s", s->links.l[s->sel].name);
}

/* List links of side i and read back its selected interface. */
static int ctl_refresh_side(struct ctl *c, int i, struct ll_err *err)
{
	struct ctl_side_view *s = &c->v.side[i];
	struct peer *p = ctl_peer(c, i);
	struct ll_err e = { 0 };
	int rc;

	if (!p)
		return 0;
	s->err[0] = '\0';
	rc = p->ops->list_links(p, &s->links, &e);
	if (rc < 0) {
		s->links.n = 0;
		ll_err_prefix(&e, "list links: ");
		if (err)
			*err = e;
		return ctl_side_fail(c, i, &e);
	}
	ctl_reselect(s);
	return ctl_read_back(c, i, err);
}

int ctl_new(struct ctl **out, const struct peerset *ps, const char *target,
	    int port, struct ll_err *err)
{
	struct ctl *c;
	struct ctl_side_view *a, *b;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ll_err_set(err, -ENOMEM, "controller: out of memory");
	c->ps = *ps;
	ctl_fmt(c->target, sizeof(c->target), "%s", target ? target : "");
	c->port = port > 0 ? port : 5201;
	c->v.is_root = geteuid() == 0;
	c->v.dial_sides = ps->has_b ? CTL_BOTH : CTL_A;
	c->v.test.state = CTL_TEST_IDLE;
	test_opts_init(&c->v.test.opts);

	a = &c->v.side[CTL_IDX_A];
	b = &c->v.side[CTL_IDX_B];
	a->present = true;
	ctl_fmt(a->label, sizeof(a->label), "%s",
		 c->ps.a.label[0] ? c->ps.a.label : "A (this host)");
	ctl_fmt(a->route_dev, sizeof(a->route_dev), "%s", c->ps.dev_a);
	ctl_fmt(a->dev, sizeof(a->dev), "%s", c->ps.dev_a);
	b->present = c->ps.has_b;
	b->sel = -1;
	a->sel = -1;
	if (c->ps.has_b) {
		ctl_fmt(b->label, sizeof(b->label), "%s",
			 c->ps.b.label[0] ? c->ps.b.label : "B (peer)");
		ctl_fmt(b->route_dev, sizeof(b->route_dev), "%s", c->ps.dev_b);
		ctl_fmt(b->dev, sizeof(b->dev), "%s", c->ps.dev_b);
		ctl_fmt(c->v.session, sizeof(c->v.session), "%s via %s, test to %s",
			 c->ps.target.alias[0] ? c->ps.target.alias : "peer",
			 c->ps.b.ops && c->ps.b.ops->name ? c->ps.b.ops->name : "ssh",
			 c->ps.addr_b[0] ? c->ps.addr_b : "?");
	} else {
		ctl_fmt(b->label, sizeof(b->label), "B (no peer)");
		if (c->target[0])
			ctl_fmt(c->v.session, sizeof(c->v.session),
				 "no peer; test target %s:%d", c->target, c->port);
		else
			ctl_fmt(c->v.session, sizeof(c->v.session),
				 "no peer (use --peer HOST or -c ADDR for tests)");
	}
	ctl_refresh(c, NULL);
	if (!c->v.error[0])
		ctl_fmt(c->v.status, sizeof(c->v.status), "ready%s",
			 c->v.is_root ? "" : " (not root: apply on A needs root)");
	*out = c;
	(void)err;
	return 0;
}

const struct ctl_view *ctl_view(const struct ctl *c)
{
	return &c->v;
}

int ctl_refresh(struct ctl *c, struct ll_err *err)
{
	struct ll_err e = { 0 };
	int rc, first = 0, i;

	c->v.error[0] = '\0';
	for (i = 0; i < 2; i++) {
		rc = ctl_refresh_side(c, i, &e);
		if (rc < 0 && !first) {
			first = rc;
			if (err) {
				*err = e;
				ll_err_prefix(err, "%s: ", ctl_side_name(i));
			}
		}
	}
	if (!first)
		ctl_fmt(c->v.status, sizeof(c->v.status), "refreshed");
	return first;
}

int ctl_select(struct ctl *c, int side, int idx, struct ll_err *err)
{
	struct ctl_side_view *s;

	if (side != CTL_IDX_A && side != CTL_IDX_B)
		return ll_err_set(err, -EINVAL, "select: no side %d", side);
	s = &c->v.side[side];
	if (!s->present)
		return ll_err_set(err, -ENODEV, "select: peer %s is not open",
				  ctl_side_name(side));
	if (idx < 0 || idx >= s->links.n)
		return ll_err_set(err, -EINVAL,
				  "select: interface %d out of range 0..%d", idx,
				  s->links.n - 1);
	s->sel = idx;
	ctl_fmt(s->dev, sizeof(s->dev), "%s", s->links.l[idx].name);
	s->err[0] = '\0';
	return ctl_read_back(c, side, err);
}

/* Join "A: x" and "B: y" into err. */
static void ctl_join_err(struct ll_err *err, int code, const char *side,
			 const char *msg)
{
	char old[LL_ERR_MAX];

	if (!err)
		return;
	if (!err->code) {
		ll_err_set(err, code, "%s: %s", side, msg);
		return;
	}
	memcpy(old, err->msg, sizeof(old));
	ctl_fmt(err->msg, sizeof(err->msg), "%.240s; %s: %.240s", old, side,
		 msg);
}

/* Update the list entry's qdisc kind from the fresh read-back. */
static void ctl_sync_link_qdisc(struct ctl_side_view *s)
{
	if (s->sel >= 0 && s->sel < s->links.n && s->qd_valid && s->qd.n > 0)
		ctl_fmt(s->links.l[s->sel].qdisc,
			 sizeof(s->links.l[s->sel].qdisc), "%s", s->qd.q[0].kind);
}

/* Apply (or clear when d is NULL) on the sides in mask. */
static int ctl_change(struct ctl *c, const struct impair *d, unsigned sides,
		      struct ll_err *err)
{
	int i, rc, first = 0, done = 0;
	char what[64], names[128] = "";

	if (err)
		ll_err_clear(err);
	c->v.error[0] = '\0';
	for (i = 0; i < 2; i++) {
		struct ctl_side_view *s = &c->v.side[i];
		struct peer *p = ctl_peer(c, i);
		struct ll_err e = { 0 };

		if (!(sides & (1u << i)))
			continue;
		if (!p) {
			if (sides != CTL_BOTH) {
				rc = ll_err_set(&e, -ENODEV, "no peer (use --peer HOST)");
				ctl_join_err(err, rc, ctl_side_name(i), e.msg);
				ctl_side_fail(c, i, &e);
				if (!first)
					first = rc;
			}
			continue;
		}
		if (!s->dev[0]) {
			rc = ll_err_set(&e, -ENODEV, "no interface selected");
		} else if (i == CTL_IDX_A && !c->v.is_root) {
			rc = ll_err_set(&e, -EPERM,
					"%s: needs root (CAP_NET_ADMIN) to %s qdiscs",
					s->dev, d ? "change" : "restore");
		} else if (d) {
			rc = p->ops->apply(p, s->dev, d, &e);
			if (rc == -EPERM && i == CTL_IDX_A)
				ll_err_prefix(&e, "needs root: ");
		} else {
			rc = p->ops->clear(p, s->dev, &e);
		}
		if (rc < 0) {
			if (!e.msg[0])
				ll_err_set(&e, rc, "%s: %s", s->dev, strerror(-rc));
			ctl_join_err(err, rc, ctl_side_name(i), e.msg);
			ctl_side_fail(c, i, &e);
			if (!first)
				first = rc;
			/* show what the kernel holds after the failure */
			ctl_read_back(c, i, NULL);
			ctl_sync_link_qdisc(s);
			continue;
		}
		s->err[0] = '\0';
		if (d)
			ctl_mark_changed(c, i, s->dev);
		else
			ctl_unmark_changed(c, i, s->dev);
		rc = ctl_read_back(c, i, NULL);
		if (rc < 0) {
			ctl_join_err(err, rc, ctl_side_name(i), s->err);
			if (!first)
				first = rc;
			continue;
		}
		ctl_sync_link_qdisc(s);
		ctl_fmt(what, sizeof(what), "%s%s %s", done ? ", " : "",
			 ctl_side_name(i), s->dev);
		strncat(names, what, sizeof(names) - strlen(names) - 1);
		done++;
	}
	if (first) {
		if (err && c->v.error[0] == '\0')
			ctl_fmt(c->v.error, sizeof(c->v.error), "%s", err->msg);
		else if (err)
			ctl_fmt(c->v.error, sizeof(c->v.error), "%s", err->msg);
	}
	if (done)
		ctl_fmt(c->v.status, sizeof(c->v.status), "%s %s%s",
			 d ? "applied on" : "cleared", names,
			 first ? " (with errors)" : "; read back shown");
	else if (!first)
		ctl_fmt(c->v.status, sizeof(c->v.status), "nothing to %s",
			 d ? "apply to" : "clear");
	return first;
}

int ctl_apply(struct ctl *c, const struct impair *d, unsigned sides,
	      struct ll_err *err)
{
	struct ll_diag diag;
	int rc;

	c->v.dial = *d;
	c->v.dial_sides = sides;
	if (impair_is_empty(d))
		return ctl_change(c, NULL, sides, err);
	ll_diag_clear(&diag);
	if (impair_validate(d, &diag) < 0) {
		struct ll_err e = { 0 };

		rc = ll_diag_to_err(&diag, &e);
		if (rc == 0)
			rc = ll_err_set(&e, -EINVAL, "dial does not validate");
		if (err)
			*err = e;
		ctl_fmt(c->v.error, sizeof(c->v.error), "dial: %s", e.msg);
		return rc;
	}
	return ctl_change(c, d, sides, err);
}

int ctl_clear(struct ctl *c, unsigned sides, struct ll_err *err)
{
	return ctl_change(c, NULL, sides, err);
}

/* Stop the server on B if we started it. */
static void ctl_server_stop(struct ctl *c)
{
	struct ll_err e = { 0 };

	if (!c->server_up)
		return;
	c->server_up = false;
	if (c->ps.has_b && c->ps.b.ops->server_stop &&
	    c->ps.b.ops->server_stop(&c->ps.b, &e) < 0)
		ctl_fmt(c->v.error, sizeof(c->v.error),
			 "B: stop test server: %s", e.msg);
}

/* Free the finished test object and its server. */
static void ctl_test_end(struct ctl *c)
{
	if (c->test) {
		test_free(c->test);
		c->test = NULL;
	}
	ctl_server_stop(c);
}

int ctl_test_start(struct ctl *c, const struct ctl_test_req *r,
		   struct ll_err *err)
{
	struct ctl_test_view *t = &c->v.test;
	struct test_opts o;
	struct ll_diag diag;
	struct ll_err e = { 0 };
	int rc, port = c->port;

	if (c->test)
		return ll_err_set(err, -EBUSY, "test: one is already running");
	test_opts_init(&o);
	o.streams = r->streams;
	o.duration = r->duration;
	o.interval = r->interval;
	o.reverse = r->reverse;
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
	ctl_fmt(o.host, sizeof(o.host), "%s",
		c->ps.has_b ? c->ps.addr_b : c->target);
	o.port = port;
	ll_diag_clear(&diag);
	if (test_opts_validate(&o, &diag) < 0) {
		rc = ll_diag_to_err(&diag, &e);
		if (!rc)
			rc = ll_err_set(&e, -EINVAL, "test options do not validate");
		goto fail;
	}
	if (c->ps.has_b) {
		rc = c->ps.b.ops->server_start(&c->ps.b, &port, &e);
		if (rc < 0) {
			ll_err_prefix(&e, "B: start test server: ");
			goto fail;
		}
		c->server_up = true;
	}
	o.port = port;
	rc = test_start(&o, &c->test, &e);
	if (rc < 0) {
		c->test = NULL;
		ctl_server_stop(c);
		goto fail;
	}
	memset(t, 0, sizeof(*t));
	t->state = CTL_TEST_STARTING;
	t->opts = o;
	ctl_fmt(c->v.status, sizeof(c->v.status),
		 "test: %d stream%s, %g s to %s:%d%s", o.streams,
		 o.streams > 1 ? "s" : "", o.duration, o.host, o.port,
		 o.reverse ? " (reverse)" : "");
	c->v.error[0] = '\0';
	return 0;
fail:
	ctl_fmt(t->err, sizeof(t->err), "%s", e.msg);
	ctl_fmt(c->v.error, sizeof(c->v.error), "%s", e.msg);
	if (err)
		*err = e;
	return rc;
}

int ctl_test_fd(const struct ctl *c)
{
	return c->test ? test_event_fd(c->test) : -1;
}

/* Full scale for the bars: the tbf rate the sending side holds. */
static void ctl_test_scale(struct ctl *c)
{
	struct ctl_test_view *t = &c->v.test;
	const struct ctl_side_view *snd =
		&c->v.side[t->opts.reverse ? CTL_IDX_B : CTL_IDX_A];

	t->scale_dialled = snd->qd_valid && (snd->held.set & IMP_RATE) &&
			   snd->held.rate > 0;
	t->scale_bps = t->scale_dialled ? (double)snd->held.rate : t->max_sum_bps;
}

/* Fold one interval into the view. */
static void ctl_test_interval(struct ctl *c, const struct test_interval *iv)
{
	struct ctl_test_view *t = &c->v.test;
	int k;

	t->state = CTL_TEST_RUNNING;
	t->last = *iv;
	t->nintervals++;
	if (t->nhist == CTL_HISTORY) {
		memmove(&t->hist[0], &t->hist[1],
			(CTL_HISTORY - 1) * sizeof(t->hist[0]));
		t->nhist--;
	}
	t->hist[t->nhist++] = iv->sum;
	if (iv->sum.bps > t->max_sum_bps)
		t->max_sum_bps = iv->sum.bps;
	for (k = 0; k < iv->nstreams && k < TEST_MAX_STREAMS; k++)
		if (iv->s[k].bps > t->max_stream_bps)
			t->max_stream_bps = iv->s[k].bps;
	ctl_test_scale(c);
}

int ctl_test_pump(struct ctl *c)
{
	struct ctl_test_view *t = &c->v.test;
	struct test_event *ev;
	const struct test_summary *sum;
	int changed = 0, ended = 0;

	if (!c->test)
		return 0;
	ev = malloc(sizeof(*ev));
	if (!ev)
		return 0;
	while (test_next_event(c->test, ev) == 1) {
		changed = 1;
		switch (ev->kind) {
		case TEV_CONNECTED:
			t->state = CTL_TEST_RUNNING;
			ctl_fmt(c->v.status, sizeof(c->v.status),
				 "test: connected to %s:%d", t->opts.host,
				 t->opts.port);
			break;
		case TEV_INTERVAL:
			ctl_test_interval(c, &ev->interval);
			break;
		case TEV_DONE:
			sum = test_summary(c->test);
			if (sum) {
				t->summary = *sum;
				t->have_summary = true;
			}
			t->state = CTL_TEST_DONE;
			ctl_fmt(c->v.status, sizeof(c->v.status),
				 "test: done, %d interval%s", t->nintervals,
				 t->nintervals == 1 ? "" : "s");
			ended = 1;
			break;
		case TEV_ERROR:
			t->state = CTL_TEST_FAILED;
			ctl_fmt(t->err, sizeof(t->err), "%s", ev->err.msg);
			ctl_fmt(c->v.error, sizeof(c->v.error), "test: %s",
				 ev->err.msg);
			ended = 1;
			break;
		}
		if (ended)
			break;
	}
	free(ev);
	if (ended)
		ctl_test_end(c);
	return changed;
}

void ctl_test_stop(struct ctl *c)
{
	if (c->test) {
		test_stop(c->test);
		ctl_fmt(c->v.status, sizeof(c->v.status), "test: stopping");
	}
}

int ctl_quit(struct ctl *c, char *summary, size_t len, struct ll_err *err)
{
	int i, k, rc, first = 0, nrest = 0;
	char part[128];

	if (summary && len)
		summary[0] = '\0';
	if (c->test) {
		test_stop(c->test);
		ctl_test_end(c);
	}
	ctl_server_stop(c);
	for (i = 0; i < 2; i++) {
		struct peer *p = ctl_peer(c, i);
		struct ctl_changed *ch = &c->changed[i];

		if (!p) {
			ch->n = 0;
			continue;
		}
		for (k = 0; k < ch->n; k++) {
			struct ll_err e = { 0 };

			rc = p->ops->clear(p, ch->dev[k], &e);
			if (rc < 0) {
				ctl_join_err(err, rc, ctl_side_name(i), e.msg);
				if (!first)
					first = rc;
				ctl_fmt(part, sizeof(part), "%sFAILED %s %s",
					 nrest ? ", " : "", ctl_side_name(i),
					 ch->dev[k]);
			} else {
				ctl_fmt(part, sizeof(part), "%s%s %s",
					 nrest ? ", " : "", ctl_side_name(i),
					 ch->dev[k]);
			}
			nrest++;
			if (summary && len)
				strncat(summary, part, len - strlen(summary) - 1);
		}
		ch->n = 0;
	}
	if (summary && len) {
		if (!nrest) {
			ctl_fmt(summary, len, "nothing to restore");
		} else {
			char tmp[512];

			ctl_fmt(tmp, sizeof(tmp), "restored %s", summary);
			ctl_fmt(summary, len, "%s", tmp);
		}
	}
	c->quit_done = true;
	return first;
}

void ctl_free(struct ctl *c)
{
	if (!c)
		return;
	if (c->test) {
		test_stop(c->test);
		test_free(c->test);
	}
	peerset_close(&c->ps);
	free(c);
}

int ctl_do(struct ctl *c, const struct ctl_intent *in, struct ll_err *err)
{
	switch (in->kind) {
	case CI_NONE:
		return 0;
	case CI_APPLY:
		return ctl_apply(c, &in->dial, in->sides, err);
	case CI_CLEAR:
		return ctl_clear(c, in->sides, err);
	case CI_REFRESH:
		return ctl_refresh(c, err);
	case CI_SELECT:
		return ctl_select(c, in->side, in->index, err);
	case CI_SET_DIAL:
		c->v.dial = in->dial;
		c->v.dial_sides = in->sides;
		return 0;
	case CI_TEST_START:
		return ctl_test_start(c, &in->test, err);
	case CI_TEST_STOP:
		ctl_test_stop(c);
		return 0;
	case CI_QUIT:
		return ctl_quit(c, NULL, 0, err);
	}
	return ll_err_set(err, -EINVAL, "controller: unknown intent %d",
			  (int)in->kind);
}
