/* SPDX-License-Identifier: MIT */
/* console_peer.c - the controller's peers: B's job queue, read-back, refresh and selection.
 * No curses here; the screens only see struct console_view. */
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "console_int.h"
#include "linklab/peer/journal.h"

static int console_list_done(struct console *c, int i, int rc, const struct link_list *ll,
			     const struct sysctl_state *ss, struct ll_err *e,
			     struct ll_err *err);

/* --- peer B's queue --- */

int console_timeout_s(const struct console *c)
{
	return c->safety.timeout_s > 0 ? c->safety.timeout_s : PEER_TIMEOUT_S;
}

/* A job came back lost: B no longer answers (timeout) or its session
 * died. */
void console_b_lost(struct console *c, const struct peerq_job *j)
{
	char why[300];

	if (c->v.b_lost)
		return;
	if (j->rc == -ETIMEDOUT || j->rb_rc == -ETIMEDOUT) {
		/* whether B's revert timer was armed is not known here: no
		 * countdown is promised */
		c->v.revert_deadline = 0;
		console_fmt(why, sizeof(why), "%.250s",
			    j->rc == -ETIMEDOUT ? j->err.msg : j->rb_err.msg);
		console_mark_lost(c, why);
		console_fmt(c->v.b_lost_msg, sizeof(c->v.b_lost_msg),
			    "peer B gone: no answer within %d s (%s); B restores itself when it sees the session end, at most %d s after its last word from here (its hold guard)",
			    console_timeout_s(c), j->kind == PQ_APPLY ? "apply" : j->kind == PQ_CLEAR ? "clear" :
			    j->kind == PQ_LIST ? "list links" : j->kind == PQ_SERVER_START ?
			    "start test server" : "read qdiscs",
			    4 * console_timeout_s(c) > 60 ? 4 * console_timeout_s(c) : 60);
		console_fmt(c->v.status, sizeof(c->v.status), "%s", c->v.b_lost_msg);
		console_fmt(c->v.side[CONSOLE_IDX_B].err, sizeof(c->v.side[CONSOLE_IDX_B].err), "%s",
			    c->v.b_lost_msg);
		return;
	}
	console_mark_lost(c, j->err.msg[0] ? j->err.msg : "session closed");
}

/* What one finished B job changes in the view. */
void console_b_handle(struct console *c, struct peerq_job *j)
{
	struct console_side_view *s = &c->v.side[CONSOLE_IDX_B];
	struct ll_err e = { 0 };

	c->b_last_rc = j->rc;
	c->b_last_err = j->err;
	if (j->lost)
		console_b_lost(c, j);
	switch (j->kind) {
	case PQ_LIST:
		if (c->v.b_lost)
			break;
		c->b_last_rc = console_list_done(c, CONSOLE_IDX_B, j->rc, &j->links,
						 j->have_sys ? &j->sys : NULL, &j->err, &e);
		if (c->b_last_rc < 0)
			c->b_last_err = e;
		break;
	case PQ_READ:
		if (c->v.b_lost || strcmp(j->dev, s->dev))
			break;
		c->b_eng_rc = j->eng_rc;
		c->b_eng = j->eng;
		c->b_last_rc = console_read_done(c, CONSOLE_IDX_B, j->rc, &j->qd, &j->err, &e);
		if (c->b_last_rc == 0)
			console_sync_link_qdisc(s);
		else
			c->b_last_err = e;
		break;
	case PQ_APPLY:
	case PQ_CLEAR:
		console_change_b_done(c, j);
		break;
	case PQ_SSHFLOW:
		if (j->rc == 0) {
			c->bflow = j->sshflow;
			c->bflow_known = true;
		}
		break;
	case PQ_SERVER_START:
		console_test_server_done(c, j);
		break;
	case PQ_SERVER_STOP:
		if (j->rc < 0 && !c->v.b_lost)
			console_fmt(c->v.error, sizeof(c->v.error),
				    "B: stop test server: %s", j->err.msg);
		break;
	case PQ_SYSCTL_SET:
		console_sysctl_done(c, j);
		break;
	case PQ_TUNE_RESTORE:
	case PQ_KEEPALIVE:
	case PQ_LOCK_RELEASE:
		break;
	}
}

int console_peer_pump(struct console *c)
{
	struct peerq_job *j;
	int n = 0;

	if (!c->bq)
		return 0;
	while ((j = peerq_take(c->bq))) {
		console_b_handle(c, j);
		free(j);
		n++;
	}
	if (n && c->v.b_wait[0] && peerq_busy_ms(c->bq, NULL, 0) < 0) {
		c->v.b_wait[0] = '\0';
		c->v.b_wait_s = 0;
	}
	return n > 0;
}

/* Queue j for B (inline: handled before this returns). A B that is gone
 * gets j back failed at once (-ENOTCONN), through the same handler. */
unsigned console_b_submit(struct console *c, struct peerq_job *j)
{
	unsigned id = 0;

	if (!j)
		return 0;
	if (c->bq && !c->v.b_lost) {
		enum peerq_kind kind = j->kind;
		char dev[IF_NAMESIZE];

		console_fmt(dev, sizeof(dev), "%s", j->dev);
		id = peerq_submit(c->bq, j);
		if (id) {
			if (!c->b_async)
				console_peer_pump(c);
			return id;
		}
		j = peerq_job_new(kind);   /* the refused one was freed */
		if (!j)
			return 0;
		console_fmt(j->dev, sizeof(j->dev), "%s", dev);
	}
	j->rc = ll_err_set(&j->err, -ENOTCONN, "%s", c->v.b_lost ? c->v.b_lost_msg :
			   "peer B is not open");
	console_b_handle(c, j);
	free(j);
	return 0;
}

/* The result of the B job just handled (inline), or 0 while it runs. */
int console_b_result(struct console *c, struct ll_err *err)
{
	if (c->b_async)
		return 0;
	if (c->b_last_rc < 0 && err)
		*err = c->b_last_err;
	return c->b_last_rc;
}

int console_peer_tick(struct console *c)
{
	char what[48] = "", old[sizeof(c->v.b_wait)];
	long ms;

	if (!c->bq || !c->b_async || c->v.b_lost) {
		if (!c->v.b_wait[0])
			return 0;
		c->v.b_wait[0] = '\0';
		c->v.b_wait_s = 0;
		return 1;
	}
	ms = peerq_busy_ms(c->bq, what, sizeof(what));
	console_fmt(old, sizeof(old), "%s", c->v.b_wait);
	if (ms < 1000) {
		c->v.b_wait[0] = '\0';
		c->v.b_wait_s = 0;
	} else {
		c->v.b_wait_s = (int)(ms / 1000);
		console_fmt(c->v.b_wait, sizeof(c->v.b_wait), "waiting for B (%d s): %s",
			    c->v.b_wait_s, what);
		/* every command is bounded by the timeout; a job far past it
		 * is stuck in something else: B is gone all the same */
		if (ms > (console_timeout_s(c) + 10) * 1000L) {
			struct peerq_job j = { .kind = PQ_READ, .rc = -ETIMEDOUT };

			ll_err_set(&j.err, -ETIMEDOUT, "no answer for %ld s", ms / 1000);
			console_b_lost(c, &j);
			c->v.b_wait[0] = '\0';
			c->v.b_wait_s = 0;
		}
	}
	return strcmp(old, c->v.b_wait) != 0;
}

int console_set_async(struct console *c, struct ll_err *err)
{
	int rc;

	if (!c->bq || c->b_async)
		return 0;
	/* the control session's route, once, before the worker owns B: the
	 * apply checks then ask nothing of B */
	if (peerq_ops(c->bq)->session && !c->v.b_lost) {
		struct peerq_job *j = peerq_job_new(PQ_SSHFLOW);

		console_b_submit(c, j);
	}
	rc = peerq_start(c->bq, err);
	if (rc < 0)
		return rc;
	c->b_async = true;
	return 0;
}

int console_peer_busy(const struct console *c)
{
	return c->bq && !c->v.b_lost ? peerq_pending(c->bq) : 0;
}

/* linklab's endpoint engine on the side's interface (h): its dial is held
 * too, and the summary says which engine holds it. */
static void console_engine_show(const struct enghook_info *h, struct console_side_view *s)
{
	bool kern = strcmp(s->held_text, "noqueue") && strcmp(s->held_text, "none") &&
		    s->held_text[0];
	char t[1024];
	size_t n;

	s->engine = !h->alive ? CONSOLE_ENG_GONE : h->stopped ? CONSOLE_ENG_STOPPED :
		    h->hooked == 0 ? CONSOLE_ENG_UNHOOKED : CONSOLE_ENG_HOLDS;
	if (h->alive) {
		enghook_dial(h, &s->held);
		/* the engine holds the whole dial: the qdisc under it is not
		 * part of it */
		memset(&s->ours, 0, sizeof(s->ours));
		enghook_dial(h, &s->ours);
	}
	snprintf(t, sizeof(t), "%s%suser engine (pid %ld%s): %s",
		 kern ? s->held_text : "", kern ? " + " : "", h->pid,
		 !h->alive ? ", gone: passing" : h->stopped ? ", STOPPED: traffic stalls" :
		 h->hooked == 0 ? ", rule gone: passing" : "", h->dial);
	n = strlen(t) < sizeof(s->held_text) - 1 ? strlen(t) : sizeof(s->held_text) - 1;
	memcpy(s->held_text, t, n);
	s->held_text[n] = '\0';
}

/* Whether A's dev holds a dial linklab applied: its journal record names
 * one (a qdisc the user set by hand has a record without, or none). Read
 * once per interface: the journal is a file, not for every read-back. */
static void held_ours_local(struct console_side_view *s)
{
	struct journal_entry *je;
	uint64_t ns;
	unsigned idx;

	if (!strcmp(s->held_ours_dev, s->dev))
		return;
	snprintf(s->held_ours_dev, sizeof(s->held_ours_dev), "%s", s->dev);
	s->held_ours = false;
	idx = if_nametoindex(s->dev);
	je = calloc(1, sizeof(*je));
	if (je && idx && journal_netns(&ns, NULL) == 0 &&
	    journal_lookup(ns, (int)idx, je, NULL) == 0)
		s->held_ours = je->applied_kind[0] != '\0';
	free(je);
}

/* Side i's read-back came: rc, and the state qd read (for the view). */
int console_read_done(struct console *c, int i, int rc, const struct qdisc_state *qd,
		      struct ll_err *e, struct ll_err *err)
{
	struct console_side_view *s = &c->v.side[i];

	s->qd_valid = false;
	memset(&s->held, 0, sizeof(s->held));
	memset(&s->ours, 0, sizeof(s->ours));
	s->held_text[0] = '\0';
	s->engine = CONSOLE_ENG_NONE;
	if (rc < 0) {
		memset(&s->qd, 0, sizeof(s->qd));
		console_derive(c);
		ll_err_prefix(e, "read qdiscs of %s: ", s->dev);
		if (err)
			*err = *e;
		return console_side_fail(c, i, e);
	}
	s->qd = *qd;
	s->qd_valid = true;
	qdisc_state_to_impair(&s->qd, &s->held);
	qdisc_state_summary(&s->qd, s->held_text, sizeof(s->held_text));
	if (i == CONSOLE_IDX_A && console_peer(c, i) &&
	    !strcmp(console_peer(c, i)->ops->name, "local"))
		held_ours_local(s);
	else
		s->held_ours = true;
	if (s->held_ours)
		s->ours = s->held;
	else
		memset(&s->ours, 0, sizeof(s->ours));
	/* A's engine is a local file; B's comes with the worker's read-back */
	if (i == CONSOLE_IDX_A && console_peer(c, i) && console_peer(c, i)->ops->engine) {
		struct enghook_info h;

		if (console_peer(c, i)->ops->engine->engine_get(console_peer(c, i), s->dev, &h, NULL) == 0)
			console_engine_show(&h, s);
	} else if (i == CONSOLE_IDX_B && c->b_eng_rc == 0) {
		console_engine_show(&c->b_eng, s);
	}
	{
		double now = console_now();
		uint64_t bytes = s->qd.n > 0 ? s->qd.q[0].bytes : 0;

		if (c->prev_t[i] > 0 && now - c->prev_t[i] >= 0.2 &&
		    bytes >= c->prev_bytes[i])
			s->tx_bps = (double)(bytes - c->prev_bytes[i]) * 8.0 /
				    (now - c->prev_t[i]);
		else if (bytes < c->prev_bytes[i])
			s->tx_bps = -1;     /* qdisc replaced: counters restart */
		if (c->prev_t[i] == 0 || now - c->prev_t[i] >= 0.2) {
			c->prev_t[i] = now;
			c->prev_bytes[i] = bytes;
		}
	}
	console_test_dial_check(c, i);
	console_derive(c);
	return 0;
}

/* Read back what the kernel holds on side i's selected interface (B: a
 * job; its result lands through console_read_done). */
int console_read_back_tag(struct console *c, int i, int tag, struct ll_err *err)
{
	struct console_side_view *s = &c->v.side[i];
	struct peer *p = console_peer(c, i);
	struct ll_err e = { 0 };
	struct qdisc_state *qd;
	int rc;

	if (!p || !s->dev[0]) {
		s->qd_valid = false;
		memset(&s->held, 0, sizeof(s->held));
		memset(&s->ours, 0, sizeof(s->ours));
		s->held_text[0] = '\0';
		return 0;
	}
	if (i == CONSOLE_IDX_B) {
		struct peerq_job *j = peerq_job_new(PQ_READ);

		if (!j)
			return ll_err_set(err, -ENOMEM, "out of memory");
		console_fmt(j->dev, sizeof(j->dev), "%s", s->dev);
		j->tag = tag;
		console_b_submit(c, j);
		return console_b_result(c, err);
	}
	qd = calloc(1, sizeof(*qd));
	if (!qd)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = p->ops->read_qdiscs(p, s->dev, qd, &e);
	rc = console_read_done(c, i, rc, qd, &e, err);
	free(qd);
	return rc;
}

int console_read_back(struct console *c, int i, struct ll_err *err)
{
	return console_read_back_tag(c, i, CONSOLE_TAG_NONE, err);
}

/* Keep the selection by name after a re-list; else pick route_dev. */
static void console_reselect(struct console_side_view *s)
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
		console_fmt(s->dev, sizeof(s->dev), "%s", s->links.l[s->sel].name);
}

/* What the theory line needs of a side's sysctls: the receive window of one
 * TCP socket (tcp_rmem / tcp_adv_win_scale) and the congestion control. */
static void console_side_sysctls(struct console_side_view *s, const struct sysctl_state *ss)
{
	int ir = hosttune_sysctl_index("tcp_rmem");
	int iw = hosttune_sysctl_index("tcp_adv_win_scale");
	int ic = hosttune_sysctl_index("tcp_congestion_control");
	long long lo, def, max, scale = 1;

	if (ic >= 0)
		console_fmt(s->cc, sizeof(s->cc), "%.*s", (int)strcspn(ss->v[ic], " \t\n"),
			    ss->v[ic]);

	if (ir >= 0 && sscanf(ss->v[ir], "%lld %lld %lld", &lo, &def, &max) == 3 &&
	    max > 0) {
		if (iw < 0 || sscanf(ss->v[iw], "%lld", &scale) != 1 ||
		    scale < -31 || scale > 31)
			scale = 1;
		s->rcv_window = scale > 0 ? (uint64_t)(max - (max >> scale)) :
				(uint64_t)(max >> -scale);
	}
}

/* Side i's links came (rc, the list): select, then read back. */
static int console_list_done(struct console *c, int i, int rc, const struct link_list *ll,
			     const struct sysctl_state *ss, struct ll_err *e,
			     struct ll_err *err)
{
	struct console_side_view *s = &c->v.side[i];

	if (rc < 0) {
		s->links.n = 0;
		ll_err_prefix(e, "list links: ");
		if (err)
			*err = *e;
		return console_side_fail(c, i, e);
	}
	s->links = *ll;
	console_reselect(s);
	if (ss)
		console_side_sysctls(s, ss);
	return console_read_back(c, i, err);
}

/* List links of side i and read back its selected interface. */
static int console_refresh_side(struct console *c, int i, struct ll_err *err)
{
	struct console_side_view *s = &c->v.side[i];
	struct peer *p = console_peer(c, i);
	struct ll_err e = { 0 };
	struct link_list *ll;
	struct sysctl_state *ss = NULL;
	int rc;

	if (!p)
		return 0;
	s->err[0] = '\0';
	if (i == CONSOLE_IDX_B) {
		struct peerq_job *j = peerq_job_new(PQ_LIST);

		if (!j)
			return ll_err_set(err, -ENOMEM, "out of memory");
		console_b_submit(c, j);
		return console_b_result(c, err);
	}
	ll = calloc(1, sizeof(*ll));
	if (!ll)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = p->ops->list_links(p, ll, &e);
	if (rc == 0 && p->ops->tune) {
		struct ll_err se = { 0 };

		ss = calloc(1, sizeof(*ss));
		if (ss && p->ops->tune->sysctl_get(p, ss, &se) < 0) {
			free(ss);
			ss = NULL;
		}
	}
	rc = console_list_done(c, i, rc, ll, ss, &e, err);
	free(ss);
	free(ll);
	return rc;
}

int console_refresh(struct console *c, struct ll_err *err)
{
	struct ll_err e = { 0 };
	int rc, first = 0, i;

	c->v.error[0] = '\0';
	for (i = 0; i < 2; i++) {
		rc = console_refresh_side(c, i, &e);
		if (rc < 0 && !first) {
			first = rc;
			if (err) {
				*err = e;
				ll_err_prefix(err, "%s: ", console_side_name(i));
			}
		}
	}
	if (!first)
		console_fmt(c->v.status, sizeof(c->v.status), "refreshed");
	return first;
}

int console_select(struct console *c, int side, int idx, struct ll_err *err)
{
	struct console_side_view *s;

	if (side != CONSOLE_IDX_A && side != CONSOLE_IDX_B)
		return ll_err_set(err, -EINVAL, "select: no side %d", side);
	s = &c->v.side[side];
	if (!s->present)
		return ll_err_set(err, -ENODEV, "select: peer %s is not open",
				  console_side_name(side));
	if (idx < 0 || idx >= s->links.n)
		return ll_err_set(err, -EINVAL,
				  "select: interface %d out of range 0..%d", idx,
				  s->links.n - 1);
	if (strcmp(s->dev, s->links.l[idx].name)) {
		c->prev_t[side] = 0;
		s->tx_bps = -1;
		/* another interface: nothing read of it yet */
		s->qd_valid = false;
		memset(&s->held, 0, sizeof(s->held));
		memset(&s->ours, 0, sizeof(s->ours));
		s->held_text[0] = '\0';
	}
	s->sel = idx;
	console_fmt(s->dev, sizeof(s->dev), "%s", s->links.l[idx].name);
	s->err[0] = '\0';
	return console_read_back(c, side, err);
}

int console_peer_fd(const struct console *c)
{
	if (!c->ps.has_b || c->v.b_lost)
		return -1;
	if (c->b_async)
		return peerq_fd(c->bq);
	if (!c->ps.b.ops->session)
		return -1;
	return c->ps.b.ops->session->poll_fd((struct peer *)&c->ps.b);
}
