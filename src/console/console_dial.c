/* SPDX-License-Identifier: MIT */
/* console_dial.c - the controller's dial: changes of A and B (all or nothing), clear, the derived path.
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

static int console_change(struct console *c, const struct impair *d, unsigned sides,
			  struct ll_err *err);

const char *console_side_name(int i)
{
	return i == CONSOLE_IDX_A ? "A" : "B";
}

/* Remember that linklab changed dev on side i, and what it held before
 * (the first time only), so quitting puts back the state the console found
 * - even an impairment applied earlier by `linklab apply`. */
void console_mark_changed(struct console *c, int i, const char *dev,
			  const struct impair *before)
{
	struct console_changed *ch = &c->changed[i];
	int k;

	for (k = 0; k < ch->n; k++)
		if (!strcmp(ch->dev[k], dev))
			return;
	if (ch->n < CONSOLE_MAX_CHANGED) {
		ch->before[ch->n] = *before;
		console_fmt(ch->dev[ch->n++], IF_NAMESIZE, "%s", dev);
	}
}

static void console_unmark_changed(struct console *c, int i, const char *dev)
{
	struct console_changed *ch = &c->changed[i];
	int k;

	for (k = 0; k < ch->n; k++) {
		if (strcmp(ch->dev[k], dev))
			continue;
		memmove(ch->dev[k], ch->dev[k + 1],
			(size_t)(ch->n - k - 1) * IF_NAMESIZE);
		memmove(&ch->before[k], &ch->before[k + 1],
			(size_t)(ch->n - k - 1) * sizeof(ch->before[0]));
		ch->n--;
		return;
	}
}

/* Record the error for side i in the view and return code. */
int console_side_fail(struct console *c, int i, const struct ll_err *e)
{
	struct console_side_view *s = &c->v.side[i];

	console_fmt(s->err, sizeof(s->err), "%s", e->msg);
	console_fmt(c->v.error, sizeof(c->v.error), "%s: %s", console_side_name(i),
		 e->msg);
	return e->code ? e->code : -EIO;
}

void console_path_compute(const struct impair *a, const struct impair *b,
			  struct console_path *out)
{
	console_path_compute_mid(a, b, NULL, NULL, out);
}

/* One direction: an egress dial e then the bridge's dial m (either NULL). */
static void console_path_dir(const struct impair *e, const struct impair *m,
			     uint64_t *rate, int64_t *delay, double *loss)
{
	const struct impair *s[2] = { e, m };
	int k;

	*rate = 0;
	*delay = 0;
	*loss = 0;
	for (k = 0; k < 2; k++) {
		if (!s[k])
			continue;
		if ((s[k]->set & IMP_RATE) && (!*rate || s[k]->rate < *rate))
			*rate = s[k]->rate;
		if (s[k]->set & IMP_DELAY)
			*delay += s[k]->delay;
		if (s[k]->set & IMP_LOSS)
			*loss = 1.0 - (1.0 - *loss) *
				(1.0 - (double)s[k]->loss / UINT32_MAX);
	}
}

/* out->line from the figures; a direction whose egress side was not read
 * back (unread[0]: A->B, unread[1]: B->A) says so instead of "unshaped",
 * and the round trip's figures are then lower bounds. */
static void console_path_format(struct console_path *out, bool bridge, const bool unread[2])
{
	char R[32], D[32], rt[32], half[2][96];
	int i;

	for (i = 0; i < 2; i++) {
		uint64_t rate = i ? out->rate_ba : out->rate_ab;
		int64_t delay = i ? out->delay_ba : out->delay_ab;
		double loss = i ? out->loss_ba : out->loss_ab;

		if (unread[i]) {
			console_fmt(half[i], sizeof(half[i]), "? (%s not read back)", i ? "B" : "A");
			continue;
		}
		if (rate)
			units_format_rate(rate, R, sizeof(R));
		else
			snprintf(R, sizeof(R), "unshaped");
		units_format_time(delay, D, sizeof(D));
		console_fmt(half[i], sizeof(half[i]), "%s/%s/%.3g%%", R, D, loss * 100);
	}
	units_format_time(out->rtt_added, rt, sizeof(rt));
	console_fmt(out->line, sizeof(out->line),
		    "A->B %s | B->A %s | RTT +%s%s, loss %.3g%%%s%s", half[0],
		    half[1], rt, unread[0] || unread[1] ? " or more" : "", out->loss_rt * 100,
		    unread[0] || unread[1] ? " or more" : "", bridge ? " (bridge included)" : "");
}

/* The path from each direction's egress dial and bridge dial (any NULL);
 * unread: the sides whose egress was not read back. */
static void console_path_fill(const struct impair *a, const struct impair *b,
			      const struct impair *mab, const struct impair *mba,
			      const bool unread[2], struct console_path *out)
{
	memset(out, 0, sizeof(*out));
	out->valid = a || b || mab || mba;
	console_path_dir(a, mab, &out->rate_ab, &out->delay_ab, &out->loss_ab);
	console_path_dir(b, mba, &out->rate_ba, &out->delay_ba, &out->loss_ba);
	out->rtt_added = out->delay_ab + out->delay_ba;
	out->loss_rt = 1.0 - (1.0 - out->loss_ab) * (1.0 - out->loss_ba);
	console_path_format(out, mab || mba, unread);
}

void console_path_compute_mid(const struct impair *a, const struct impair *b,
			      const struct impair *mab, const struct impair *mba,
			      struct console_path *out)
{
	static const bool none[2];

	console_path_fill(a, b, mab, mba, none, out);
}

/* Mean TCP RTT of the sending streams in one interval, seconds (0 =
 * unknown: e.g. the client receives with -R). */
double console_interval_rtt(const struct client_interval *iv)
{
	double sum = 0;
	int k, n = 0;

	for (k = 0; k < iv->nstreams && k < CLIENT_MAX_STREAMS; k++)
		if (iv->s[k].sender && iv->s[k].rtt_us > 0) {
			sum += (double)iv->s[k].rtt_us;
			n++;
		}
	return n ? sum / n / 1e6 : 0;
}

/* Are two paths the same dials (rate, delay and loss both ways)? */
static bool console_path_same(const struct console_path *x, const struct console_path *y)
{
	return x->rate_ab == y->rate_ab && x->rate_ba == y->rate_ba &&
	       x->delay_ab == y->delay_ab && x->delay_ba == y->delay_ba &&
	       x->loss_ab == y->loss_ab && x->loss_ba == y->loss_ba;
}

/* The RTT theory uses: the measured one only if it was measured under the
 * dials held now; otherwise what is dialled now plus the measured base
 * (the smallest measured RTT less what was dialled then). */
static void console_theory_rtt(struct console *c)
{
	const struct console_test_view *t = &c->v.test;
	double dialled = (double)c->v.path.rtt_added / 1e9;

	if (t->rtt_s > 0 && console_path_same(&c->rtt_path, &c->v.path)) {
		c->v.theory_rtt_measured = true;
		c->v.theory_rtt = t->rtt_s;
		c->v.theory_rtt_base = 0;
		return;
	}
	c->v.theory_rtt_measured = false;
	c->v.theory_rtt_base = c->rtt_base_s > 0 ? c->rtt_base_s : 0;
	c->v.theory_rtt = dialled + c->v.theory_rtt_base;
}

/* Recompute the path and the theory line from what is held now. */
void console_derive(struct console *c)
{
	const struct console_side_view *A = &c->v.side[CONSOLE_IDX_A];
	const struct console_side_view *B = &c->v.side[CONSOLE_IDX_B];
	const struct console_test_view *t = &c->v.test;
	struct theory_in in = { 0 };
	bool rev = t->state != CONSOLE_TEST_IDLE && t->opts.reverse;

	{
		const struct console_middle_view *M = &c->v.middle;
		bool mid = M->present && M->attached;
		/* a side with an interface whose qdiscs could not be read (B
		 * gone, a read that failed) is not "unshaped": unknown */
		bool unread[2] = { A->dev[0] && !A->qd_valid,
				   B->present && B->dev[0] && !B->qd_valid };

		console_path_fill(A->qd_valid ? &A->held : NULL,
				  B->present && B->qd_valid ? &B->held : NULL,
				  mid ? &M->dir[MIDDLE_AB].fields : NULL,
				  mid ? &M->dir[MIDDLE_BA].fields : NULL, unread, &c->v.path);
	}
	/* the bottleneck of the sending direction: the smallest of the
	 * egress dial and the bridge's dial in that direction */
	in.rate = rev ? c->v.path.rate_ba : c->v.path.rate_ab;
	console_theory_rtt(c);
	in.rtt = c->v.theory_rtt;
	in.loss = rev ? c->v.path.loss_ba : c->v.path.loss_ab;
	{
		const struct console_side_view *rcv = rev ? A : B;

		c->v.window = t->opts.window ? t->opts.window :
			      rcv->present && rcv->rcv_window ? rcv->rcv_window :
			      c->local_window;
	}
	in.window = c->v.window;
	in.streams = t->opts.streams > 0 ? t->opts.streams : 1;
	/* the sender's congestion control: the test's -C, else its sysctl */
	in.cc = t->state != CONSOLE_TEST_IDLE && t->opts.congestion[0] ? t->opts.congestion :
		(rev ? B : A)->cc;
	theory_compute(&in, &c->v.theory);
	/* without a rate in the sending direction the ceilings are only
	 * window or loss figures of an unshaped link: nothing to hold a
	 * run against */
	c->v.theory_comparable = in.rate > 0;
	/* -b caps each stream at the sender (iperf3 pacing): below the
	 * network's ceilings the run is sender-limited */
	if (t->state != CONSOLE_TEST_IDLE && t->opts.bitrate) {
		double app = (double)in.streams * (double)t->opts.bitrate;
		char r1[32], r2[32];

		if (!(c->v.theory.expect_bps > 0) || app < c->v.theory.expect_bps ||
		    !c->v.theory_comparable) {
			c->v.theory_comparable = true;
			c->v.theory.expect_bps = app;
			c->v.theory.bound = THEORY_NONE;
			console_fmt(c->v.theory.line, sizeof(c->v.theory.line),
				    "sender-limited: %d x -b %s = %s (below the network's ceilings)",
				    in.streams, units_human_rate((double)t->opts.bitrate, r1, sizeof(r1)),
				    units_human_rate(app, r2, sizeof(r2)));
		}
	}
}

/* Join "A: x" and "B: y" into err. */
void console_join_err(struct ll_err *err, int code, const char *side,
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
	console_fmt(err->msg, sizeof(err->msg), "%.240s; %s: %.240s", old, side,
		 msg);
}

/* Update the list entry's qdisc kind from the fresh read-back. */
void console_sync_link_qdisc(struct console_side_view *s)
{
	if (s->sel >= 0 && s->sel < s->links.n && s->qd_valid && s->qd.n > 0)
		console_fmt(s->links.l[s->sel].qdisc,
			 sizeof(s->links.l[s->sel].qdisc), "%s", s->qd.q[0].kind);
}

/* Read side i back after a change: A now, B from its job's read-back (j;
 * a job for an interface no longer selected is not shown). */
static int console_side_readback(struct console *c, int i, struct peerq_job *j)
{
	if (i == CONSOLE_IDX_A || !j)
		return console_read_back(c, i, NULL);
	if (strcmp(j->dev, c->v.side[i].dev))
		return 0;
	c->b_eng_rc = j->eng_rc;
	c->b_eng = j->eng;
	return console_read_done(c, i, j->rb_rc, &j->qd, &j->rb_err, NULL);
}

/* One side's change returned rc (e its error; B: j has the read-back and
 * the warning): fold it into the view, names ("A veth-a, B veth-b"),
 * *done, *first and the joined error acc. */
static void console_change_side_done(struct console *c, int i, bool apply,
				     const struct impair *before, int rc,
				     struct ll_err *e, struct peerq_job *j,
				     char *names, size_t nlen, int *done, int *first,
				     struct ll_err *acc)
{
	struct console_side_view *s = &c->v.side[i];
	const char *dev = j ? j->dev : s->dev;
	char what[64];

	if (i == CONSOLE_IDX_B) {
		if (!c->v.b_lost)
			c->v.revert_deadline = 0;
		c->v.b_warning[0] = '\0';
		if (rc == 0 && apply && j && j->warning[0])
			console_fmt(c->v.b_warning, sizeof(c->v.b_warning), "%s", j->warning);
	}
	if (rc < 0) {
		if (!e->msg[0])
			ll_err_set(e, rc, "%s: %s", dev, strerror(-rc));
		console_join_err(acc, rc, console_side_name(i), e->msg);
		if (!*first)
			*first = rc;
		if (c->v.b_lost && i == CONSOLE_IDX_B)
			return;
		console_side_fail(c, i, e);
		/* show what the kernel holds after the failure */
		console_side_readback(c, i, j);
		console_sync_link_qdisc(s);
		return;
	}
	s->err[0] = '\0';
	if (apply) {
		console_mark_changed(c, i, dev, before);
		/* A's lock is held already (owner_local); B's keeper noted dev
		 * on B's worker right after the apply (job.lock_note) */
		if (i == CONSOLE_IDX_A)
			owner_changed(&c->own, i, dev);
	} else {
		console_unmark_changed(c, i, dev);
	}
	rc = console_side_readback(c, i, j);
	if (rc < 0) {
		console_join_err(acc, rc, console_side_name(i), s->err);
		if (!*first)
			*first = rc;
		return;
	}
	console_sync_link_qdisc(s);
	console_fmt(what, sizeof(what), "%s%s %s", *done ? ", " : "", console_side_name(i), dev);
	strncat(names, what, nlen - strlen(names) - 1);
	(*done)++;
}

/* The status line after a change of sides (head goes first). */
static void console_change_status(struct console *c, bool apply, unsigned sides,
				  const char *head, const char *names, int done,
				  int first, const struct ll_err *acc)
{
	if (first)
		console_fmt(c->v.error, sizeof(c->v.error), "%s", acc->msg);
	if (done)
		console_fmt(c->v.status, sizeof(c->v.status), "%.200s%s %s%s%s%.160s", head,
			 apply ? "applied on" : "cleared", names,
			 first ? " (with errors)" :
			 c->v.b_lost && sides == CONSOLE_BOTH ? "; B lost, not driven" :
			 "; read back shown",
			 c->v.b_warning[0] && apply ? "; B: " : "",
			 apply ? c->v.b_warning : "");
	else if (!first)
		console_fmt(c->v.status, sizeof(c->v.status), "%.200snothing to %s", head,
			 apply ? "apply to" : "clear");
}

/* Queue B's part of a change; A's part (done, first, acc, names) is kept
 * with it and the status is written when B's result comes. */
static void console_change_submit_b(struct console *c, const struct impair *d,
				    const struct impair *before, unsigned sides,
				    const char *names, int done, int first,
				    const struct ll_err *acc)
{
	struct console_side_view *s = &c->v.side[CONSOLE_IDX_B];
	struct peerq_job *j = peerq_job_new(d ? PQ_APPLY : PQ_CLEAR);
	struct console_bchg *r = NULL;
	unsigned id;
	int k;

	for (k = 0; k < (int)(sizeof(c->chg) / sizeof(c->chg[0])); k++)
		if (!c->chg[k].id) {
			r = &c->chg[k];
			break;
		}
	if (!j || !r) {
		struct ll_err e = { 0 };

		free(j);
		ll_err_set(&e, -EBUSY, "too many changes waiting for B; try again");
		if (c->b_roll_next) {
			char note[300];

			/* all or nothing: A goes back too */
			c->b_roll_next = false;
			console_rollback(c, CONSOLE_IDX_A, &c->b_prior_next, note, sizeof(note));
			ll_err_prefix(&e, "B failed, %s: ", note);
			console_fmt(c->v.status, sizeof(c->v.status),
				    "nothing applied: B failed, %s", note);
		}
		console_side_fail(c, CONSOLE_IDX_B, &e);
		c->b_last_rc = -EBUSY;
		c->b_last_err = e;
		return;
	}
	console_fmt(j->dev, sizeof(j->dev), "%s", s->dev);
	if (d)
		j->dial = *d;
	j->force = c->b_force_next;
	j->unarmed_ok = c->b_unarmed_next;
	j->lock_note = c->own.b != NULL;
	j->readback = true;
	memset(r, 0, sizeof(*r));
	r->apply = d != NULL;
	r->sides = sides;
	r->done = done;
	r->first = first;
	r->before = *before;
	r->rollback = c->b_roll_next;
	r->prior = c->b_prior_next;
	console_fmt(r->prof, sizeof(r->prof), "%s", c->b_roll_next ? c->b_prof_next : "");
	c->b_roll_next = false;       /* taken by this change */
	r->ask_unarmed = d && c->b_ask_next;
	console_fmt(r->names, sizeof(r->names), "%s", names);
	if (d)
		c->v.revert_deadline = console_now() + console_revert_s(c);
	r->id = CONSOLE_CHG_SUBMITTING;   /* inline, the result comes before the id */
	c->chg_acc[k] = *acc;
	if (c->b_async)
		console_fmt(c->v.status, sizeof(c->v.status), "waiting for B to %s %s%s%s%s",
			    d ? "apply on" : "clear", s->dev, done ? " (done: " : "", names,
			    done ? ")" : "");
	console_fmt(r->left, sizeof(r->left), "%s", c->v.status);
	id = console_b_submit(c, j);
	if (r->id == CONSOLE_CHG_SUBMITTING)
		r->id = id;
	c->chg_last = r->id;
}

void console_prior_take(const struct console *c, int i, struct console_prior *pr)
{
	const struct console_side_view *s = &c->v.side[i];

	memset(pr, 0, sizeof(*pr));
	pr->valid = s->qd_valid;
	if (s->qd_valid)
		pr->held = s->held;
	console_fmt(pr->dev, sizeof(pr->dev), "%s", s->dev);
}

/* Put side i back as pr recorded it (as quit does: the journalled
 * original, then the held dial again if that is not what it reads as). note gets "A rolled back
 * (veth-a: noqueue)" or "A NOT rolled back: why". Returns 0 or the
 * failure. */
int console_rollback(struct console *c, int i, const struct console_prior *pr,
		     char *note, size_t len)
{
	struct ll_err e = { 0 };
	int rc;

	if (!pr->valid)
		rc = ll_err_set(&e, -ENODATA, "what %s held before is unknown",
				pr->dev);
	else {
		/* the journal's exact prior state first; the held dial again
		 * only if that does not read as it (a dial applied earlier) */
		const struct console_side_view *s = &c->v.side[i];

		rc = console_change(c, NULL, 1u << i, &e);
		if (rc == 0 && !impair_is_empty(&pr->held) &&
		    !(s->qd_valid && !memcmp(&s->held, &pr->held, sizeof(pr->held))))
			rc = console_change(c, &pr->held, 1u << i, &e);
	}
	if (rc < 0)
		console_fmt(note, len, "%s NOT rolled back: %.200s",
			    console_side_name(i), e.msg);
	else
		console_fmt(note, len, "%s rolled back (%s: %.100s)", console_side_name(i),
			    pr->dev, c->v.side[i].qd_valid ? c->v.side[i].held_text : "?");
	return rc;
}

/* B's part of a change to both sides failed after A's part was made: put
 * A back as r->prior recorded it, and say so (status, error, acc). */
static void console_change_b_rollback(struct console *c, struct console_bchg *r,
				      struct ll_err *acc)
{
	char note[300], keep[LL_ERR_MAX];

	console_fmt(keep, sizeof(keep), "%s", acc->msg);
	console_rollback(c, CONSOLE_IDX_A, &r->prior, note, sizeof(note));
	acc->code = r->first;
	if (r->prof[0]) {
		console_fmt(acc->msg, sizeof(acc->msg), "[b] failed on B, %s: %.400s",
			    note, keep);
		console_fmt(c->v.status, sizeof(c->v.status),
			    "profile %.60s: [b] failed on B, %.300s; %.300s", r->prof, note,
			    keep);
		console_fmt(c->v.error, sizeof(c->v.error), "profile %.60s: %s", r->prof,
			    acc->msg);
		return;
	}
	console_fmt(acc->msg, sizeof(acc->msg), "B failed, %s: %.400s", note, keep);
	console_fmt(c->v.error, sizeof(c->v.error), "%s", acc->msg);
	console_fmt(c->v.status, sizeof(c->v.status), "nothing applied: B failed, %s",
		    note);
}

/* B could not arm its revert timer (-ENOLCK: nothing changed on B): ask
 * before applying d to sides without it (y: console_apply_safe confirmed). */
static void console_ask_unarmed(struct console *c, const struct impair *d,
				unsigned sides, const char *why)
{
	struct console_confirm *cf = &c->v.confirm;

	memset(cf, 0, sizeof(*cf));
	cf->pending = true;
	cf->dial = *d;
	cf->sides = sides;
	console_fmt(cf->text, sizeof(cf->text), "%.400s\ny applies without the timer",
		    why && why[0] ? why : "B: no revert timer could be armed");
	c->unarmed_asked = true;
	/* a question, not a failure yet (the box shows why) */
	c->v.error[0] = '\0';
	c->v.side[CONSOLE_IDX_B].err[0] = '\0';
	console_fmt(c->v.status, sizeof(c->v.status),
		    "B could not arm its revert timer: y applies without it, n cancels");
}

/* B's change came back: finish what console_change began. */
void console_change_b_done(struct console *c, struct peerq_job *j)
{
	struct console_bchg *r = NULL;
	struct ll_err acc;
	int k;

	for (k = 0; k < (int)(sizeof(c->chg) / sizeof(c->chg[0])); k++)
		if (c->chg[k].id == j->id || c->chg[k].id == CONSOLE_CHG_SUBMITTING) {
			r = &c->chg[k];
			break;
		}
	if (!r)
		return;
	acc = c->chg_acc[k];
	console_change_side_done(c, CONSOLE_IDX_B, r->apply, &r->before, j->rc, &j->err, j,
				 r->names, sizeof(r->names), &r->done, &r->first, &acc);
	if (r->rollback && j->rc < 0)
		console_change_b_rollback(c, r, &acc);   /* all or nothing */
	/* a status written meanwhile (another action) stays; errors show */
	else if (!c->b_async || !strcmp(c->v.status, r->left) || c->v.b_lost)
		console_change_status(c, r->apply, r->sides, r->head, r->names, r->done,
				      r->first, &acc);
	else if (r->first)
		console_fmt(c->v.error, sizeof(c->v.error), "%s", acc.msg);
	if (r->ask_unarmed && j->rc == -ENOLCK && !c->v.b_lost)
		console_ask_unarmed(c, &j->dial, r->sides, acc.msg);
	c->b_last_rc = r->first;
	c->b_last_err = acc;
	if (c->chg_last == j->id)
		c->chg_last = 0;
	r->id = 0;
}

/* Apply (or clear when d is NULL) on the sides in mask. An apply to both
 * is all or nothing: A first; A failing leaves B untouched; B failing
 * (its result may come later, console_change_b_done) rolls A back. */
static int console_change(struct console *c, const struct impair *d, unsigned sides,
			  struct ll_err *err)
{
	struct ll_err acc = { 0 };
	int i, rc, first = 0, done = 0;
	char names[128] = "";
	bool both = d && (sides & CONSOLE_BOTH) == CONSOLE_BOTH && console_peer(c, CONSOLE_IDX_B);
	bool a_ok = false;
	struct console_prior pa;

	if (err)
		ll_err_clear(err);
	c->v.error[0] = '\0';
	if (both)
		console_prior_take(c, CONSOLE_IDX_A, &pa);
	for (i = 0; i < 2; i++) {
		struct console_side_view *s = &c->v.side[i];
		struct peer *p = console_peer(c, i);
		struct ll_err e = { 0 };
		struct impair before = { 0 };

		if (!(sides & (1u << i)))
			continue;
		if (both && i == CONSOLE_IDX_B && !a_ok) {
			console_join_err(&acc, first ? first : -ECANCELED, "B",
					 "not applied (A failed: all or nothing)");
			continue;
		}
		if (s->qd_valid)
			before = s->held;
		if (!p) {
			if (sides != CONSOLE_BOTH) {
				if (i == CONSOLE_IDX_B && c->v.b_lost)
					rc = ll_err_set(&e, -ENOTCONN, "%s",
							c->v.b_lost_msg);
				else
					rc = ll_err_set(&e, -ENODEV, "no peer (use --peer HOST)");
				console_join_err(&acc, rc, console_side_name(i), e.msg);
				console_side_fail(c, i, &e);
				if (!first)
					first = rc;
			}
			continue;
		}
		if (!s->dev[0]) {
			rc = ll_err_set(&e, -ENODEV, "no interface selected");
		} else if (i == CONSOLE_IDX_A && !c->v.is_root) {
			rc = ll_err_set(&e, -EPERM,
					"%s: needs root (CAP_NET_ADMIN) to %s qdiscs",
					s->dev, d ? "change" : "restore");
		} else if (i == CONSOLE_IDX_A &&
			   (rc = owner_local(&c->own, s->dev, &e)) < 0) {
			/* another console drives this interface */
		} else if (i == CONSOLE_IDX_B) {
			/* B's result rolls A back if it fails (both) */
			if (both) {
				c->b_roll_next = true;
				c->b_prior_next = pa;
				c->b_prof_next[0] = '\0';
			}
			console_change_submit_b(c, d, &before, sides, names, done, first, &acc);
			if (c->b_async)
				return first;
			rc = console_b_result(c, err);
			return rc;
		} else if (d) {
			rc = p->ops->apply(p, s->dev, d, &e);
			if (rc == -EPERM)
				ll_err_prefix(&e, "needs root: ");
		} else {
			rc = p->ops->clear(p, s->dev, &e);
		}
		if (i == CONSOLE_IDX_A)
			a_ok = rc == 0;
		console_change_side_done(c, i, d != NULL, &before, rc, &e, NULL, names,
					 sizeof(names), &done, &first, &acc);
	}
	console_change_status(c, d != NULL, sides, "", names, done, first, &acc);
	if (err && first)
		*err = acc;
	return first;
}

int console_apply(struct console *c, const struct impair *d, unsigned sides,
		  struct ll_err *err)
{
	struct ll_diag diag;
	int rc;

	c->v.dial = *d;
	c->v.dial_sides = sides;
	if (sides & CONSOLE_M_BOTH) {
		rc = console_middle_apply(c, d, sides & CONSOLE_M_BOTH, err);
		sides &= CONSOLE_BOTH;
		if (!sides || rc < 0)
			return rc;
	}
	if (impair_is_empty(d))
		return console_change(c, NULL, sides, err);
	ll_diag_clear(&diag);
	if (impair_validate(d, &diag) < 0) {
		struct ll_err e = { 0 };

		rc = ll_diag_to_err(&diag, &e);
		if (rc == 0)
			rc = ll_err_set(&e, -EINVAL, "dial does not validate");
		if (err)
			*err = e;
		console_fmt(c->v.error, sizeof(c->v.error), "dial: %s", e.msg);
		return rc;
	}
	return console_change(c, d, sides, err);
}

int console_clear(struct console *c, unsigned sides, struct ll_err *err)
{
	static const struct impair none;
	int rc;

	if (sides & CONSOLE_M_BOTH) {
		rc = console_middle_apply(c, &none, sides & CONSOLE_M_BOTH, err);
		sides &= CONSOLE_BOTH;
		if (!sides || rc < 0)
			return rc;
	}
	return console_change(c, NULL, sides, err);
}
