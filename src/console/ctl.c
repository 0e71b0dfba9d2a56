/* SPDX-License-Identifier: MIT */
/* ctl.c - the console's controller: peers, dial, read-back state, the test.
 * No curses here; the screens only see struct ctl_view. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "linklab/traffic/csvout.h"
#include "linklab/console/ctl.h"
#include "linklab/peer/enghook.h"
#include "linklab/console/owner.h"
#include "linklab/peer/hosttune.h"
#include "linklab/console/middle.h"
#include "linklab/peer/peerq.h"
#include "linklab/traffic/plot.h"
#include "linklab/base/units.h"

#define CTL_MAX_CHANGED 16

struct ctl_changed {
	int n;
	char dev[CTL_MAX_CHANGED][IF_NAMESIZE];
	/* what the interface held (read back) before the console first
	 * changed it; empty = a kernel default, restored by clear */
	struct impair before[CTL_MAX_CHANGED];
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

/* What side i held before a change of both sides, to put it back when the
 * other side fails (all or nothing). */
struct ctl_prior {
	bool valid;                   /* held is a read-back */
	struct impair held;           /* what the kernel held, in dial terms */
	char dev[IF_NAMESIZE];
};

struct ctl {
	struct peerset ps;
	char target[256];             /* -c ADDR ("" = none) */
	int port;                     /* port for -c targets */
	struct test *test;            /* running test or NULL */
	bool server_up;               /* B's server started by us */
	bool quit_done;
	struct ctl_changed changed[2];
	struct owner own;             /* the hold on A's interfaces and B */
	bool quit_ok;                 /* ctl_quit restored everything */
	bool unarmed_asked;           /* view.confirm asks about an apply
				       * without B's revert timer */
	struct ctl_view v;
	/* the test run and the profiles */
	struct test_interval *ivs;    /* the run's intervals (<= CTL_HISTORY) */
	int nivs, capivs;
	struct ctl_profile *prof;
	uint64_t prev_bytes[2];       /* root qdisc bytes at prev_t[] */
	double prev_t[2];             /* monotonic seconds, 0 = none */
	double tick_t;                /* last ctl_tick */
	uint64_t local_window;        /* theory_local_window() at start */
	struct ctl_path rtt_path;     /* the path dialled when v.test.rtt_s
				       * was measured */
	double rtt_base_s;            /* smallest measured RTT less what was
				       * dialled then, seconds; < 0 = none */
	/* B's safety and the host tuning */
	struct peer_safety safety;    /* B's baseline safety */
	bool tuned[2];                /* sysctl/offload changed from here */
	double next_keepalive;        /* monotonic seconds, 0 = now */
	/* the middle box */
	struct middle *mid;           /* NULL without --middle */
	struct middle_state mstart;   /* the bridge's dials when the lease
				       * began (quit puts them back) */
	bool mstart_valid;
	double mid_t;                 /* last get (monotonic s) */
	double mid_sent;              /* last get sent (monotonic s) */
	bool mid_busy_err;            /* v.error says a set was refused
				       * because the middle did not answer */
	double mid_retry;             /* next attach attempt, 0 = none */
	uint64_t mid_prev[2][2];      /* rx/tx bytes per direction at mid_t */
	bool mid_prev_valid;
	/* linklab verify, run as a child process */
	struct verify_job *vjob;
	/* B's engine, as the last read-back job found it (eng_rc 0: it holds
	 * B's dial) */
	int b_eng_rc;
	struct enghook_info b_eng;
	char **verify_argv;           /* NULL-terminated copy, NULL = none */
	char *verify_json;            /* the last finished run's document */
	/* peer B: every operation on it is a job on its queue (peerq.h);
	 * threaded (ctl_set_async) the results come back later through
	 * ctl_peer_pump, inline they are handled before the call returns */
	struct peerq *bq;             /* NULL without B */
	bool b_async;
	struct peer_ctl bflow;        /* B's control session (ctl_flow) */
	bool bflow_known;
	bool b_force_next;            /* the next B apply forces (y to 100 %) */
	bool b_unarmed_next;          /* the next B apply goes without a revert
				       * timer (y to "none could be armed") */
	bool b_ask_next;              /* the next B apply asks on -ENOLCK */
	bool b_roll_next;             /* the next B apply rolls A back to
				       * b_prior_next if it fails */
	struct ctl_prior b_prior_next;
	char b_prof_next[64];
	struct ctl_bchg {             /* B changes waiting for their result */
		unsigned id;          /* job id, 0 = free slot */
		bool apply;
		unsigned sides;       /* the change's sides (status line) */
		int done, first;      /* A's part: sides done, first error */
		char names[128];      /* "A veth-a" */
		char head[256];       /* put before the status ("profile x: ") */
		char left[256];       /* the status left while B works: B's
				       * result replaces only that */
		struct impair before; /* what B's interface held before */
		bool rollback;        /* B failing puts A back as prior held */
		struct ctl_prior prior;
		char prof[64];        /* the profile applied ("" = a dial) */
		bool ask_unarmed;     /* -ENOLCK from B: ask y/n (view.confirm) */
	} chg[8];
	struct ll_err chg_acc[8];     /* A's errors for each chg[] */
	unsigned chg_last;            /* the change submitted last, 0 = done */
	int b_last_rc;                /* the last B job's result (inline) */
	struct ll_err b_last_err;
	struct test_opts test_wait;   /* a test waiting for B's server */
	bool test_waiting;
	int cancel_fd[2];             /* quit stops waiting for B on these */
	int ncancel;
};

#define CTL_CHG_SUBMITTING 0xffffffffu

/* job tags (peerq_job.tag) */
enum { CTL_TAG_NONE, CTL_TAG_TICK, CTL_TAG_QUIT };

#define CTL_MIDDLE_RETRY_S 3.0
#define CTL_MIDDLE_PERIOD_S 1.0

static void ctl_middle_quit(struct ctl *c, char *part, size_t len, bool *lost);
/* the quit summary's sentence for a middle box whose session was lost */
#define CTL_MIDDLE_LOST_QUIT "middle box lost: the bridge's lease restores its dials (now, or when the middle host answers again)"
/* ... and for a bridge the console started (--bridge) */
#define CTL_MIDDLE_LOST_QUIT_STARTED "middle box lost: the bridge it started stops when its lease ends (now, or when the middle host answers again)"

static double ctl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The peer of side i, or NULL when that side is not open. */
static struct peer *ctl_peer(struct ctl *c, int i)
{
	if (i == CTL_IDX_A)
		return &c->ps.a;
	return c->ps.has_b && !c->v.b_lost ? &c->ps.b : NULL;
}

static int ctl_revert_s(const struct ctl *c)
{
	return c->safety.revert_s > 0 ? c->safety.revert_s : 30;
}

static void ctl_derive(struct ctl *c);

/* B's session is gone: stop driving B and say how it comes back. */
static void ctl_mark_lost(struct ctl *c, const char *why)
{
	int left = ctl_revert_s(c);

	if (c->v.b_lost)
		return;
	c->v.b_lost = true;
	if (c->v.revert_deadline > 0) {
		double l = c->v.revert_deadline - ctl_now();

		left = l > 0 ? (int)ceil(l) : 0;
	}
	ctl_fmt(c->v.b_lost_msg, sizeof(c->v.b_lost_msg),
		"peer B lost: it restores itself within %d s (%.180s)", left,
		why && *why ? why : "session closed");
	ctl_fmt(c->v.status, sizeof(c->v.status), "%s", c->v.b_lost_msg);
	ctl_fmt(c->v.side[CTL_IDX_B].err, sizeof(c->v.side[CTL_IDX_B].err),
		"%s", c->v.b_lost_msg);
	/* B restores itself; quitting must not try to, and what B held
	 * can no longer be read */
	c->changed[CTL_IDX_B].n = 0;
	c->v.side[CTL_IDX_B].qd_valid = false;
	c->v.side[CTL_IDX_B].tx_bps = -1;
	ctl_derive(c);
	if (c->v.dial_sides & CTL_B)
		c->v.dial_sides = CTL_A;
}

static unsigned ctl_b_submit(struct ctl *c, struct peerq_job *j);
static int ctl_b_result(struct ctl *c, struct ll_err *err);

/* --- peer B's queue --- */

static int ctl_timeout_s(const struct ctl *c)
{
	return c->safety.timeout_s > 0 ? c->safety.timeout_s : PEER_TIMEOUT_S;
}

/* A job came back lost: B no longer answers (timeout) or its session
 * died. */
static void ctl_b_lost(struct ctl *c, const struct peerq_job *j)
{
	char why[300];

	if (c->v.b_lost)
		return;
	if (j->rc == -ETIMEDOUT || j->rb_rc == -ETIMEDOUT) {
		/* whether B's revert timer was armed is not known here: no
		 * countdown is promised */
		c->v.revert_deadline = 0;
		ctl_fmt(why, sizeof(why), "%.250s",
			j->rc == -ETIMEDOUT ? j->err.msg : j->rb_err.msg);
		ctl_mark_lost(c, why);
		ctl_fmt(c->v.b_lost_msg, sizeof(c->v.b_lost_msg),
			"peer B gone: no answer within %d s (%s); B restores what linklab changed there by itself (revert timer, or hold guard once it runs again)",
			ctl_timeout_s(c), j->kind == PQ_APPLY ? "apply" : j->kind == PQ_CLEAR ? "clear" :
			j->kind == PQ_LIST ? "list links" : j->kind == PQ_SERVER_START ?
			"start test server" : "read qdiscs");
		ctl_fmt(c->v.status, sizeof(c->v.status), "%s", c->v.b_lost_msg);
		ctl_fmt(c->v.side[CTL_IDX_B].err, sizeof(c->v.side[CTL_IDX_B].err), "%s",
			c->v.b_lost_msg);
		return;
	}
	ctl_mark_lost(c, j->err.msg[0] ? j->err.msg : "session closed");
}

static void ctl_test_server_done(struct ctl *c, struct peerq_job *j);
static void ctl_sysctl_done(struct ctl *c, struct peerq_job *j);
static void ctl_change_b_done(struct ctl *c, struct peerq_job *j);
static void ctl_sync_link_qdisc(struct ctl_side_view *s);
static int ctl_read_done(struct ctl *c, int i, int rc, const struct qdisc_state *qd,
			 struct ll_err *e, struct ll_err *err);
static int ctl_list_done(struct ctl *c, int i, int rc, const struct link_list *ll,
			 const struct sysctl_state *ss, struct ll_err *e,
			 struct ll_err *err);

/* What one finished B job changes in the view. */
static void ctl_b_handle(struct ctl *c, struct peerq_job *j)
{
	struct ctl_side_view *s = &c->v.side[CTL_IDX_B];
	struct ll_err e = { 0 };

	c->b_last_rc = j->rc;
	c->b_last_err = j->err;
	if (j->lost)
		ctl_b_lost(c, j);
	switch (j->kind) {
	case PQ_LIST:
		if (c->v.b_lost)
			break;
		c->b_last_rc = ctl_list_done(c, CTL_IDX_B, j->rc, &j->links,
					     j->have_sys ? &j->sys : NULL, &j->err, &e);
		if (c->b_last_rc < 0)
			c->b_last_err = e;
		break;
	case PQ_READ:
		if (c->v.b_lost || strcmp(j->dev, s->dev))
			break;
		c->b_eng_rc = j->eng_rc;
		c->b_eng = j->eng;
		c->b_last_rc = ctl_read_done(c, CTL_IDX_B, j->rc, &j->qd, &j->err, &e);
		if (c->b_last_rc == 0)
			ctl_sync_link_qdisc(s);
		else
			c->b_last_err = e;
		break;
	case PQ_APPLY:
	case PQ_CLEAR:
		ctl_change_b_done(c, j);
		break;
	case PQ_CTL_FLOW:
		if (j->rc == 0) {
			c->bflow = j->ctl;
			c->bflow_known = true;
		}
		break;
	case PQ_SERVER_START:
		ctl_test_server_done(c, j);
		break;
	case PQ_SERVER_STOP:
		if (j->rc < 0 && !c->v.b_lost)
			ctl_fmt(c->v.error, sizeof(c->v.error),
				"B: stop test server: %s", j->err.msg);
		break;
	case PQ_SYSCTL_SET:
		ctl_sysctl_done(c, j);
		break;
	case PQ_TUNE_RESTORE:
	case PQ_KEEPALIVE:
	case PQ_LOCK_RELEASE:
		break;
	}
}

int ctl_peer_pump(struct ctl *c)
{
	struct peerq_job *j;
	int n = 0;

	if (!c->bq)
		return 0;
	while ((j = peerq_take(c->bq))) {
		ctl_b_handle(c, j);
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
static unsigned ctl_b_submit(struct ctl *c, struct peerq_job *j)
{
	unsigned id = 0;

	if (!j)
		return 0;
	if (c->bq && !c->v.b_lost) {
		enum peerq_kind kind = j->kind;
		char dev[IF_NAMESIZE];

		ctl_fmt(dev, sizeof(dev), "%s", j->dev);
		id = peerq_submit(c->bq, j);
		if (id) {
			if (!c->b_async)
				ctl_peer_pump(c);
			return id;
		}
		j = peerq_job_new(kind);   /* the refused one was freed */
		if (!j)
			return 0;
		ctl_fmt(j->dev, sizeof(j->dev), "%s", dev);
	}
	j->rc = ll_err_set(&j->err, -ENOTCONN, "%s", c->v.b_lost ? c->v.b_lost_msg :
			   "peer B is not open");
	ctl_b_handle(c, j);
	free(j);
	return 0;
}

/* The result of the B job just handled (inline), or 0 while it runs. */
static int ctl_b_result(struct ctl *c, struct ll_err *err)
{
	if (c->b_async)
		return 0;
	if (c->b_last_rc < 0 && err)
		*err = c->b_last_err;
	return c->b_last_rc;
}

int ctl_peer_tick(struct ctl *c)
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
	ctl_fmt(old, sizeof(old), "%s", c->v.b_wait);
	if (ms < 1000) {
		c->v.b_wait[0] = '\0';
		c->v.b_wait_s = 0;
	} else {
		c->v.b_wait_s = (int)(ms / 1000);
		ctl_fmt(c->v.b_wait, sizeof(c->v.b_wait), "waiting for B (%d s): %s",
			c->v.b_wait_s, what);
		/* every command is bounded by the timeout; a job far past it
		 * is stuck in something else: B is gone all the same */
		if (ms > (ctl_timeout_s(c) + 10) * 1000L) {
			struct peerq_job j = { .kind = PQ_READ, .rc = -ETIMEDOUT };

			ll_err_set(&j.err, -ETIMEDOUT, "no answer for %ld s", ms / 1000);
			ctl_b_lost(c, &j);
			c->v.b_wait[0] = '\0';
			c->v.b_wait_s = 0;
		}
	}
	return strcmp(old, c->v.b_wait) != 0;
}

int ctl_set_async(struct ctl *c, struct ll_err *err)
{
	int rc;

	if (!c->bq || c->b_async)
		return 0;
	/* the control session's route, once, before the worker owns B: the
	 * apply checks then ask nothing of B */
	if (peerq_ops(c->bq)->session && !c->v.b_lost) {
		struct peerq_job *j = peerq_job_new(PQ_CTL_FLOW);

		ctl_b_submit(c, j);
	}
	rc = peerq_start(c->bq, err);
	if (rc < 0)
		return rc;
	c->b_async = true;
	return 0;
}

int ctl_peer_busy(const struct ctl *c)
{
	return c->bq && !c->v.b_lost ? peerq_pending(c->bq) : 0;
}

static const char *ctl_side_name(int i)
{
	return i == CTL_IDX_A ? "A" : "B";
}

/* Remember that linklab changed dev on side i, and what it held before
 * (the first time only), so quitting puts back the state the console found
 * - even an impairment applied earlier by `linklab apply`. */
static void ctl_mark_changed(struct ctl *c, int i, const char *dev,
			     const struct impair *before)
{
	struct ctl_changed *ch = &c->changed[i];
	int k;

	for (k = 0; k < ch->n; k++)
		if (!strcmp(ch->dev[k], dev))
			return;
	if (ch->n < CTL_MAX_CHANGED) {
		ch->before[ch->n] = *before;
		ctl_fmt(ch->dev[ch->n++], IF_NAMESIZE, "%s", dev);
	}
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
		memmove(&ch->before[k], &ch->before[k + 1],
			(size_t)(ch->n - k - 1) * sizeof(ch->before[0]));
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

void ctl_path_compute(const struct impair *a, const struct impair *b,
		      struct ctl_path *out)
{
	ctl_path_compute_mid(a, b, NULL, NULL, out);
}

/* One direction: an egress dial e then the bridge's dial m (either NULL). */
static void ctl_path_dir(const struct impair *e, const struct impair *m,
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

void ctl_path_compute_mid(const struct impair *a, const struct impair *b,
			  const struct impair *mab, const struct impair *mba,
			  struct ctl_path *out)
{
	char r1[32], d1[32], l1[32], r2[32], d2[32], l2[32], rt[32], half[2][96];
	int i;

	memset(out, 0, sizeof(*out));
	out->valid = a || b || mab || mba;
	ctl_path_dir(a, mab, &out->rate_ab, &out->delay_ab, &out->loss_ab);
	ctl_path_dir(b, mba, &out->rate_ba, &out->delay_ba, &out->loss_ba);
	out->rtt_added = out->delay_ab + out->delay_ba;
	out->loss_rt = 1.0 - (1.0 - out->loss_ab) * (1.0 - out->loss_ba);
	for (i = 0; i < 2; i++) {
		uint64_t rate = i ? out->rate_ba : out->rate_ab;
		int64_t delay = i ? out->delay_ba : out->delay_ab;
		double loss = i ? out->loss_ba : out->loss_ab;
		char *R = i ? r2 : r1, *D = i ? d2 : d1, *L = i ? l2 : l1;

		if (rate)
			units_format_rate(rate, R, 32);
		else
			snprintf(R, 32, "unshaped");
		units_format_time(delay, D, 32);
		snprintf(L, 32, "%.3g%%", loss * 100);
		ctl_fmt(half[i], sizeof(half[i]), "%s/%s/%s", R, D, L);
	}
	units_format_time(out->rtt_added, rt, sizeof(rt));
	ctl_fmt(out->line, sizeof(out->line),
		"A->B %s | B->A %s | RTT +%s, loss %.3g%%%s", half[0],
		half[1], rt, out->loss_rt * 100,
		mab || mba ? " (bridge included)" : "");
}

/* Mean TCP RTT of the sending streams in one interval, seconds (0 =
 * unknown: e.g. the client receives with -R). */
static double ctl_interval_rtt(const struct test_interval *iv)
{
	double sum = 0;
	int k, n = 0;

	for (k = 0; k < iv->nstreams && k < TEST_MAX_STREAMS; k++)
		if (iv->s[k].sender && iv->s[k].rtt_us > 0) {
			sum += (double)iv->s[k].rtt_us;
			n++;
		}
	return n ? sum / n / 1e6 : 0;
}

/* Are two paths the same dials (rate, delay and loss both ways)? */
static bool ctl_path_same(const struct ctl_path *x, const struct ctl_path *y)
{
	return x->rate_ab == y->rate_ab && x->rate_ba == y->rate_ba &&
	       x->delay_ab == y->delay_ab && x->delay_ba == y->delay_ba &&
	       x->loss_ab == y->loss_ab && x->loss_ba == y->loss_ba;
}

/* The RTT theory uses: the measured one only if it was measured under the
 * dials held now; otherwise what is dialled now plus the measured base
 * (the smallest measured RTT less what was dialled then). */
static void ctl_theory_rtt(struct ctl *c)
{
	const struct ctl_test_view *t = &c->v.test;
	double dialled = (double)c->v.path.rtt_added / 1e9;

	if (t->rtt_s > 0 && ctl_path_same(&c->rtt_path, &c->v.path)) {
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
static void ctl_derive(struct ctl *c)
{
	const struct ctl_side_view *A = &c->v.side[CTL_IDX_A];
	const struct ctl_side_view *B = &c->v.side[CTL_IDX_B];
	const struct ctl_test_view *t = &c->v.test;
	struct theory_in in = { 0 };
	bool rev = t->state != CTL_TEST_IDLE && t->opts.reverse;

	{
		const struct ctl_middle_view *M = &c->v.middle;
		bool mid = M->present && M->attached;

		ctl_path_compute_mid(A->qd_valid ? &A->held : NULL,
				     B->present && B->qd_valid ? &B->held : NULL,
				     mid ? &M->dir[MIDDLE_AB].fields : NULL,
				     mid ? &M->dir[MIDDLE_BA].fields : NULL,
				     &c->v.path);
	}
	/* the bottleneck of the sending direction: the smallest of the
	 * egress dial and the bridge's dial in that direction */
	in.rate = rev ? c->v.path.rate_ba : c->v.path.rate_ab;
	ctl_theory_rtt(c);
	in.rtt = c->v.theory_rtt;
	in.loss = rev ? c->v.path.loss_ba : c->v.path.loss_ab;
	{
		const struct ctl_side_view *rcv = rev ? A : B;

		c->v.window = t->opts.window ? t->opts.window :
			      rcv->present && rcv->rcv_window ? rcv->rcv_window :
			      c->local_window;
	}
	in.window = c->v.window;
	in.streams = t->opts.streams > 0 ? t->opts.streams : 1;
	theory_compute(&in, &c->v.theory);
	/* without a rate in the sending direction the ceilings are only
	 * window or loss figures of an unshaped link: nothing to hold a
	 * run against */
	c->v.theory_comparable = in.rate > 0;
	/* -b caps each stream at the sender (iperf3 pacing): below the
	 * network's ceilings the run is sender-limited */
	if (t->state != CTL_TEST_IDLE && t->opts.bitrate) {
		double app = (double)in.streams * (double)t->opts.bitrate;
		char r1[32], r2[32];

		if (!(c->v.theory.expect_bps > 0) || app < c->v.theory.expect_bps ||
		    !c->v.theory_comparable) {
			c->v.theory_comparable = true;
			c->v.theory.expect_bps = app;
			c->v.theory.bound = THEORY_NONE;
			ctl_fmt(c->v.theory.line, sizeof(c->v.theory.line),
				"sender-limited: %d x -b %s = %s (below the network's ceilings)",
				in.streams, units_human_rate((double)t->opts.bitrate, r1, sizeof(r1)),
				units_human_rate(app, r2, sizeof(r2)));
		}
	}
}

/* linklab's endpoint engine on the side's interface (h): its dial is held
 * too, and the summary says which engine holds it. */
static void ctl_engine_show(const struct enghook_info *h, struct ctl_side_view *s)
{
	bool kern = strcmp(s->held_text, "noqueue") && strcmp(s->held_text, "none") &&
		    s->held_text[0];
	char t[1024];
	size_t n;

	if (h->alive)
		enghook_dial(h, &s->held);
	snprintf(t, sizeof(t), "%s%suser engine (pid %ld%s): %s",
		 kern ? s->held_text : "", kern ? " + " : "", h->pid,
		 h->alive ? "" : ", gone: passing", h->dial);
	n = strlen(t) < sizeof(s->held_text) - 1 ? strlen(t) : sizeof(s->held_text) - 1;
	memcpy(s->held_text, t, n);
	s->held_text[n] = '\0';
}

/* Side i's read-back came: rc, and the state qd read (for the view). */
static int ctl_read_done(struct ctl *c, int i, int rc, const struct qdisc_state *qd,
			 struct ll_err *e, struct ll_err *err)
{
	struct ctl_side_view *s = &c->v.side[i];

	s->qd_valid = false;
	memset(&s->held, 0, sizeof(s->held));
	s->held_text[0] = '\0';
	if (rc < 0) {
		memset(&s->qd, 0, sizeof(s->qd));
		ctl_derive(c);
		ll_err_prefix(e, "read qdiscs of %s: ", s->dev);
		if (err)
			*err = *e;
		return ctl_side_fail(c, i, e);
	}
	s->qd = *qd;
	s->qd_valid = true;
	qdisc_state_to_impair(&s->qd, &s->held);
	qdisc_state_summary(&s->qd, s->held_text, sizeof(s->held_text));
	/* A's engine is a local file; B's comes with the worker's read-back */
	if (i == CTL_IDX_A && ctl_peer(c, i) && ctl_peer(c, i)->ops->engine) {
		struct enghook_info h;

		if (ctl_peer(c, i)->ops->engine->engine_get(ctl_peer(c, i), s->dev, &h, NULL) == 0)
			ctl_engine_show(&h, s);
	} else if (i == CTL_IDX_B && c->b_eng_rc == 0) {
		ctl_engine_show(&c->b_eng, s);
	}
	{
		double now = ctl_now();
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
	ctl_derive(c);
	return 0;
}

/* Read back what the kernel holds on side i's selected interface (B: a
 * job; its result lands through ctl_read_done). */
static int ctl_read_back_tag(struct ctl *c, int i, int tag, struct ll_err *err)
{
	struct ctl_side_view *s = &c->v.side[i];
	struct peer *p = ctl_peer(c, i);
	struct ll_err e = { 0 };
	struct qdisc_state *qd;
	int rc;

	if (!p || !s->dev[0]) {
		s->qd_valid = false;
		memset(&s->held, 0, sizeof(s->held));
		s->held_text[0] = '\0';
		return 0;
	}
	if (i == CTL_IDX_B) {
		struct peerq_job *j = peerq_job_new(PQ_READ);

		if (!j)
			return ll_err_set(err, -ENOMEM, "out of memory");
		ctl_fmt(j->dev, sizeof(j->dev), "%s", s->dev);
		j->tag = tag;
		ctl_b_submit(c, j);
		return ctl_b_result(c, err);
	}
	qd = calloc(1, sizeof(*qd));
	if (!qd)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = p->ops->read_qdiscs(p, s->dev, qd, &e);
	rc = ctl_read_done(c, i, rc, qd, &e, err);
	free(qd);
	return rc;
}

static int ctl_read_back(struct ctl *c, int i, struct ll_err *err)
{
	return ctl_read_back_tag(c, i, CTL_TAG_NONE, err);
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

/* The receive window of one TCP socket from tcp_rmem / tcp_adv_win_scale. */
static void ctl_rcv_window(struct ctl_side_view *s, const struct sysctl_state *ss)
{
	int ir = tune_sysctl_index("tcp_rmem");
	int iw = tune_sysctl_index("tcp_adv_win_scale");
	long long lo, def, max, scale = 1;

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
static int ctl_list_done(struct ctl *c, int i, int rc, const struct link_list *ll,
			 const struct sysctl_state *ss, struct ll_err *e,
			 struct ll_err *err)
{
	struct ctl_side_view *s = &c->v.side[i];

	if (rc < 0) {
		s->links.n = 0;
		ll_err_prefix(e, "list links: ");
		if (err)
			*err = *e;
		return ctl_side_fail(c, i, e);
	}
	s->links = *ll;
	ctl_reselect(s);
	if (ss)
		ctl_rcv_window(s, ss);
	return ctl_read_back(c, i, err);
}

/* List links of side i and read back its selected interface. */
static int ctl_refresh_side(struct ctl *c, int i, struct ll_err *err)
{
	struct ctl_side_view *s = &c->v.side[i];
	struct peer *p = ctl_peer(c, i);
	struct ll_err e = { 0 };
	struct link_list *ll;
	struct sysctl_state *ss = NULL;
	int rc;

	if (!p)
		return 0;
	s->err[0] = '\0';
	if (i == CTL_IDX_B) {
		struct peerq_job *j = peerq_job_new(PQ_LIST);

		if (!j)
			return ll_err_set(err, -ENOMEM, "out of memory");
		ctl_b_submit(c, j);
		return ctl_b_result(c, err);
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
	rc = ctl_list_done(c, i, rc, ll, ss, &e, err);
	free(ss);
	free(ll);
	return rc;
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
			ctl_mark_changed(c, c->own.left[k].side, c->own.left[k].dev, &none);
	}
	if (c->ps.has_b && peerq_new(&c->bq, &c->ps.b, NULL, false, err) < 0) {
		owner_release(&c->own, false);
		free(c);
		return -ENOMEM;
	}
	ctl_fmt(c->target, sizeof(c->target), "%s", target ? target : "");
	c->port = port > 0 ? port : 5201;
	c->v.is_root = geteuid() == 0;
	c->v.dial_sides = ps->has_b ? CTL_BOTH : CTL_A;
	c->v.test.state = CTL_TEST_IDLE;
	test_opts_init(&c->v.test.opts);
	c->local_window = theory_local_window();
	c->rtt_base_s = -1;
	c->b_eng_rc = -ENOENT;
	c->v.window = c->local_window;
	c->v.side[0].tx_bps = c->v.side[1].tx_bps = -1;
	c->v.revert_s = 30;

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
	ctl_derive(c);
	if (c->own.note[0])
		ctl_fmt(c->v.status, sizeof(c->v.status), "%s", c->own.note);
	else if (!c->v.error[0])
		ctl_fmt(c->v.status, sizeof(c->v.status), "ready%s",
			 c->v.is_root ? "" : " (not root: apply on A needs root)");
	*out = c;
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
	if (strcmp(s->dev, s->links.l[idx].name)) {
		c->prev_t[side] = 0;
		s->tx_bps = -1;
		/* another interface: nothing read of it yet */
		s->qd_valid = false;
		memset(&s->held, 0, sizeof(s->held));
		s->held_text[0] = '\0';
	}
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

/* Read side i back after a change: A now, B from its job's read-back (j;
 * a job for an interface no longer selected is not shown). */
static int ctl_side_readback(struct ctl *c, int i, struct peerq_job *j)
{
	if (i == CTL_IDX_A || !j)
		return ctl_read_back(c, i, NULL);
	if (strcmp(j->dev, c->v.side[i].dev))
		return 0;
	c->b_eng_rc = j->eng_rc;
	c->b_eng = j->eng;
	return ctl_read_done(c, i, j->rb_rc, &j->qd, &j->rb_err, NULL);
}

/* One side's change returned rc (e its error; B: j has the read-back and
 * the warning): fold it into the view, names ("A veth-a, B veth-b"),
 * *done, *first and the joined error acc. */
static void ctl_change_side_done(struct ctl *c, int i, bool apply,
				 const struct impair *before, int rc,
				 struct ll_err *e, struct peerq_job *j,
				 char *names, size_t nlen, int *done, int *first,
				 struct ll_err *acc)
{
	struct ctl_side_view *s = &c->v.side[i];
	const char *dev = j ? j->dev : s->dev;
	char what[64];

	if (i == CTL_IDX_B) {
		if (!c->v.b_lost)
			c->v.revert_deadline = 0;
		c->v.b_warning[0] = '\0';
		if (rc == 0 && apply && j && j->warning[0])
			ctl_fmt(c->v.b_warning, sizeof(c->v.b_warning), "%s", j->warning);
	}
	if (rc < 0) {
		if (!e->msg[0])
			ll_err_set(e, rc, "%s: %s", dev, strerror(-rc));
		ctl_join_err(acc, rc, ctl_side_name(i), e->msg);
		if (!*first)
			*first = rc;
		if (c->v.b_lost && i == CTL_IDX_B)
			return;
		ctl_side_fail(c, i, e);
		/* show what the kernel holds after the failure */
		ctl_side_readback(c, i, j);
		ctl_sync_link_qdisc(s);
		return;
	}
	s->err[0] = '\0';
	if (apply) {
		ctl_mark_changed(c, i, dev, before);
		/* A's lock is held already (owner_local); B's keeper noted dev
		 * on B's worker right after the apply (job.lock_note) */
		if (i == CTL_IDX_A)
			owner_changed(&c->own, i, dev);
	} else {
		ctl_unmark_changed(c, i, dev);
	}
	rc = ctl_side_readback(c, i, j);
	if (rc < 0) {
		ctl_join_err(acc, rc, ctl_side_name(i), s->err);
		if (!*first)
			*first = rc;
		return;
	}
	ctl_sync_link_qdisc(s);
	ctl_fmt(what, sizeof(what), "%s%s %s", *done ? ", " : "", ctl_side_name(i), dev);
	strncat(names, what, nlen - strlen(names) - 1);
	(*done)++;
}

/* The status line after a change of sides (head goes first). */
static void ctl_change_status(struct ctl *c, bool apply, unsigned sides,
			      const char *head, const char *names, int done,
			      int first, const struct ll_err *acc)
{
	if (first)
		ctl_fmt(c->v.error, sizeof(c->v.error), "%s", acc->msg);
	if (done)
		ctl_fmt(c->v.status, sizeof(c->v.status), "%.200s%s %s%s%s%.160s", head,
			 apply ? "applied on" : "cleared", names,
			 first ? " (with errors)" :
			 c->v.b_lost && sides == CTL_BOTH ? "; B lost, not driven" :
			 "; read back shown",
			 c->v.b_warning[0] && apply ? "; B: " : "",
			 apply ? c->v.b_warning : "");
	else if (!first)
		ctl_fmt(c->v.status, sizeof(c->v.status), "%.200snothing to %s", head,
			 apply ? "apply to" : "clear");
}

static int ctl_rollback(struct ctl *c, int i, const struct ctl_prior *pr,
			char *note, size_t len);

/* Queue B's part of a change; A's part (done, first, acc, names) is kept
 * with it and the status is written when B's result comes. */
static void ctl_change_submit_b(struct ctl *c, const struct impair *d,
				const struct impair *before, unsigned sides,
				const char *names, int done, int first,
				const struct ll_err *acc)
{
	struct ctl_side_view *s = &c->v.side[CTL_IDX_B];
	struct peerq_job *j = peerq_job_new(d ? PQ_APPLY : PQ_CLEAR);
	struct ctl_bchg *r = NULL;
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
			ctl_rollback(c, CTL_IDX_A, &c->b_prior_next, note, sizeof(note));
			ll_err_prefix(&e, "B failed, %s: ", note);
			ctl_fmt(c->v.status, sizeof(c->v.status),
				"nothing applied: B failed, %s", note);
		}
		ctl_side_fail(c, CTL_IDX_B, &e);
		c->b_last_rc = -EBUSY;
		c->b_last_err = e;
		return;
	}
	ctl_fmt(j->dev, sizeof(j->dev), "%s", s->dev);
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
	ctl_fmt(r->prof, sizeof(r->prof), "%s", c->b_roll_next ? c->b_prof_next : "");
	c->b_roll_next = false;       /* taken by this change */
	r->ask_unarmed = d && c->b_ask_next;
	ctl_fmt(r->names, sizeof(r->names), "%s", names);
	if (d)
		c->v.revert_deadline = ctl_now() + ctl_revert_s(c);
	r->id = CTL_CHG_SUBMITTING;   /* inline, the result comes before the id */
	c->chg_acc[k] = *acc;
	if (c->b_async)
		ctl_fmt(c->v.status, sizeof(c->v.status), "waiting for B to %s %s%s%s%s",
			d ? "apply on" : "clear", s->dev, done ? " (done: " : "", names,
			done ? ")" : "");
	ctl_fmt(r->left, sizeof(r->left), "%s", c->v.status);
	id = ctl_b_submit(c, j);
	if (r->id == CTL_CHG_SUBMITTING)
		r->id = id;
	c->chg_last = r->id;
}

static void ctl_prior_take(const struct ctl *c, int i, struct ctl_prior *pr)
{
	const struct ctl_side_view *s = &c->v.side[i];

	memset(pr, 0, sizeof(*pr));
	pr->valid = s->qd_valid;
	if (s->qd_valid)
		pr->held = s->held;
	ctl_fmt(pr->dev, sizeof(pr->dev), "%s", s->dev);
}

static int ctl_change(struct ctl *c, const struct impair *d, unsigned sides,
		      struct ll_err *err);

/* Put side i back as pr recorded it (as quit does: the held dial again,
 * or the journalled original when it held none). note gets "A rolled back
 * (veth-a: noqueue)" or "A NOT rolled back: why". Returns 0 or the
 * failure. */
static int ctl_rollback(struct ctl *c, int i, const struct ctl_prior *pr,
			char *note, size_t len)
{
	struct ll_err e = { 0 };
	int rc;

	if (!pr->valid)
		rc = ll_err_set(&e, -ENODATA, "what %s held before is unknown",
				pr->dev);
	else if (impair_is_empty(&pr->held))
		rc = ctl_change(c, NULL, 1u << i, &e);
	else
		rc = ctl_change(c, &pr->held, 1u << i, &e);
	if (rc < 0)
		ctl_fmt(note, len, "%s NOT rolled back: %.200s",
			ctl_side_name(i), e.msg);
	else
		ctl_fmt(note, len, "%s rolled back (%s: %.100s)", ctl_side_name(i),
			pr->dev, c->v.side[i].qd_valid ? c->v.side[i].held_text : "?");
	return rc;
}

/* B's part of a change to both sides failed after A's part was made: put
 * A back as r->prior recorded it, and say so (status, error, acc). */
static void ctl_change_b_rollback(struct ctl *c, struct ctl_bchg *r,
				  struct ll_err *acc)
{
	char note[300], keep[LL_ERR_MAX];

	ctl_fmt(keep, sizeof(keep), "%s", acc->msg);
	ctl_rollback(c, CTL_IDX_A, &r->prior, note, sizeof(note));
	acc->code = r->first;
	if (r->prof[0]) {
		ctl_fmt(acc->msg, sizeof(acc->msg), "[b] failed on B, %s: %.400s",
			note, keep);
		ctl_fmt(c->v.status, sizeof(c->v.status),
			"profile %.60s: [b] failed on B, %.300s; %.300s", r->prof, note,
			keep);
		ctl_fmt(c->v.error, sizeof(c->v.error), "profile %.60s: %s", r->prof,
			acc->msg);
		return;
	}
	ctl_fmt(acc->msg, sizeof(acc->msg), "B failed, %s: %.400s", note, keep);
	ctl_fmt(c->v.error, sizeof(c->v.error), "%s", acc->msg);
	ctl_fmt(c->v.status, sizeof(c->v.status), "nothing applied: B failed, %s",
		note);
}

/* B could not arm its revert timer (-ENOLCK: nothing changed on B): ask
 * before applying d to sides without it (y: ctl_apply_safe confirmed). */
static void ctl_ask_unarmed(struct ctl *c, const struct impair *d,
			    unsigned sides, const char *why)
{
	struct ctl_confirm *cf = &c->v.confirm;

	memset(cf, 0, sizeof(*cf));
	cf->pending = true;
	cf->dial = *d;
	cf->sides = sides;
	ctl_fmt(cf->text, sizeof(cf->text), "%.400s\ny applies without the timer",
		why && why[0] ? why : "B: no revert timer could be armed");
	c->unarmed_asked = true;
	/* a question, not a failure yet (the box shows why) */
	c->v.error[0] = '\0';
	c->v.side[CTL_IDX_B].err[0] = '\0';
	ctl_fmt(c->v.status, sizeof(c->v.status),
		"B could not arm its revert timer: y applies without it, n cancels");
}

/* B's change came back: finish what ctl_change began. */
static void ctl_change_b_done(struct ctl *c, struct peerq_job *j)
{
	struct ctl_bchg *r = NULL;
	struct ll_err acc;
	int k;

	for (k = 0; k < (int)(sizeof(c->chg) / sizeof(c->chg[0])); k++)
		if (c->chg[k].id == j->id || c->chg[k].id == CTL_CHG_SUBMITTING) {
			r = &c->chg[k];
			break;
		}
	if (!r)
		return;
	acc = c->chg_acc[k];
	ctl_change_side_done(c, CTL_IDX_B, r->apply, &r->before, j->rc, &j->err, j,
			     r->names, sizeof(r->names), &r->done, &r->first, &acc);
	if (r->rollback && j->rc < 0)
		ctl_change_b_rollback(c, r, &acc);   /* all or nothing */
	/* a status written meanwhile (another action) stays; errors show */
	else if (!c->b_async || !strcmp(c->v.status, r->left) || c->v.b_lost)
		ctl_change_status(c, r->apply, r->sides, r->head, r->names, r->done,
				  r->first, &acc);
	else if (r->first)
		ctl_fmt(c->v.error, sizeof(c->v.error), "%s", acc.msg);
	if (r->ask_unarmed && j->rc == -ENOLCK && !c->v.b_lost)
		ctl_ask_unarmed(c, &j->dial, r->sides, acc.msg);
	c->b_last_rc = r->first;
	c->b_last_err = acc;
	if (c->chg_last == j->id)
		c->chg_last = 0;
	r->id = 0;
}

/* Apply (or clear when d is NULL) on the sides in mask. An apply to both
 * is all or nothing: A first; A failing leaves B untouched; B failing
 * (its result may come later, ctl_change_b_done) rolls A back. */
static int ctl_change(struct ctl *c, const struct impair *d, unsigned sides,
		      struct ll_err *err)
{
	struct ll_err acc = { 0 };
	int i, rc, first = 0, done = 0;
	char names[128] = "";
	bool both = d && (sides & CTL_BOTH) == CTL_BOTH && ctl_peer(c, CTL_IDX_B);
	bool a_ok = false;
	struct ctl_prior pa;

	if (err)
		ll_err_clear(err);
	c->v.error[0] = '\0';
	if (both)
		ctl_prior_take(c, CTL_IDX_A, &pa);
	for (i = 0; i < 2; i++) {
		struct ctl_side_view *s = &c->v.side[i];
		struct peer *p = ctl_peer(c, i);
		struct ll_err e = { 0 };
		struct impair before = { 0 };

		if (!(sides & (1u << i)))
			continue;
		if (both && i == CTL_IDX_B && !a_ok) {
			ctl_join_err(&acc, first ? first : -ECANCELED, "B",
				     "not applied (A failed: all or nothing)");
			continue;
		}
		if (s->qd_valid)
			before = s->held;
		if (!p) {
			if (sides != CTL_BOTH) {
				if (i == CTL_IDX_B && c->v.b_lost)
					rc = ll_err_set(&e, -ENOTCONN, "%s",
							c->v.b_lost_msg);
				else
					rc = ll_err_set(&e, -ENODEV, "no peer (use --peer HOST)");
				ctl_join_err(&acc, rc, ctl_side_name(i), e.msg);
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
		} else if (i == CTL_IDX_A &&
			   (rc = owner_local(&c->own, s->dev, &e)) < 0) {
			/* another console drives this interface */
		} else if (i == CTL_IDX_B) {
			/* B's result rolls A back if it fails (both) */
			if (both) {
				c->b_roll_next = true;
				c->b_prior_next = pa;
				c->b_prof_next[0] = '\0';
			}
			ctl_change_submit_b(c, d, &before, sides, names, done, first, &acc);
			if (c->b_async)
				return first;
			rc = ctl_b_result(c, err);
			return rc;
		} else if (d) {
			rc = p->ops->apply(p, s->dev, d, &e);
			if (rc == -EPERM)
				ll_err_prefix(&e, "needs root: ");
		} else {
			rc = p->ops->clear(p, s->dev, &e);
		}
		if (i == CTL_IDX_A)
			a_ok = rc == 0;
		ctl_change_side_done(c, i, d != NULL, &before, rc, &e, NULL, names,
				     sizeof(names), &done, &first, &acc);
	}
	ctl_change_status(c, d != NULL, sides, "", names, done, first, &acc);
	if (err && first)
		*err = acc;
	return first;
}

int ctl_apply(struct ctl *c, const struct impair *d, unsigned sides,
	      struct ll_err *err)
{
	struct ll_diag diag;
	int rc;

	c->v.dial = *d;
	c->v.dial_sides = sides;
	if (sides & CTL_M_BOTH) {
		rc = ctl_middle_apply(c, d, sides & CTL_M_BOTH, err);
		sides &= CTL_BOTH;
		if (!sides || rc < 0)
			return rc;
	}
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
	static const struct impair none;
	int rc;

	if (sides & CTL_M_BOTH) {
		rc = ctl_middle_apply(c, &none, sides & CTL_M_BOTH, err);
		sides &= CTL_BOTH;
		if (!sides || rc < 0)
			return rc;
	}
	return ctl_change(c, NULL, sides, err);
}

/* Stop the server on B if we started it. */
static void ctl_server_stop(struct ctl *c)
{
	struct ll_err e = { 0 };

	if (!c->server_up)
		return;
	c->server_up = false;
	if (c->ps.has_b && !c->v.b_lost)
		ctl_b_submit(c, peerq_job_new(PQ_SERVER_STOP));
	(void)e;
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

/* Responsiveness of the run so far: self = the intervals' mean sender RTT;
 * at the end, foreign = the loaded echo probes' mean and idle = the idle
 * probes' mean (when linklab serve answered them). */
static void ctl_rpm_update(struct ctl_test_view *t)
{
	struct ctl_rpm *r = &t->rpm;
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
static int ctl_test_launch(struct ctl *c, const struct test_opts *oin, int port,
			   struct ll_err *err);

int ctl_test_start(struct ctl *c, const struct ctl_test_req *r,
		   struct ll_err *err)
{
	struct ctl_test_view *t = &c->v.test;
	struct test_opts o;
	struct ll_diag diag;
	struct ll_err e = { 0 };
	int rc, port = c->port;

	if (c->vjob) {
		rc = ll_err_set(err, -EBUSY, "test: verify is measuring the path "
				"(%.0f s); wait for its table", verify_job_age(c->vjob));
		ctl_fmt(c->v.error, sizeof(c->v.error), "%s", err ? err->msg : "test: busy");
		return rc;
	}

	if (c->test)
		return ll_err_set(err, -EBUSY, "test: one is already running");
	test_opts_init(&o);
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
		/* B's server first: the test starts when its port comes */
		if (c->test_waiting)
			return ll_err_set(err, -EBUSY, "test: waiting for B's test server already");
		c->test_wait = o;
		c->test_waiting = true;
		ctl_fmt(c->v.status, sizeof(c->v.status), "test: starting B's test server ...");
		ctl_b_submit(c, peerq_job_new(PQ_SERVER_START));
		return ctl_b_result(c, err);
	}
	return ctl_test_launch(c, &o, port, err);
fail:
	ctl_fmt(t->err, sizeof(t->err), "%s", e.msg);
	ctl_fmt(c->v.error, sizeof(c->v.error), "%s", e.msg);
	if (err)
		*err = e;
	return rc;
}

/* B's server answered (or not): start the client, or say why not. */
static void ctl_test_server_done(struct ctl *c, struct peerq_job *j)
{
	struct ctl_test_view *t = &c->v.test;
	struct ll_err e = j->err;

	if (!c->test_waiting)
		return;
	c->test_waiting = false;
	if (j->rc < 0) {
		ll_err_prefix(&e, "B: start test server: ");
		ctl_fmt(t->err, sizeof(t->err), "%s", e.msg);
		ctl_fmt(c->v.error, sizeof(c->v.error), "%s", e.msg);
		c->b_last_rc = j->rc;
		c->b_last_err = e;
		return;
	}
	c->server_up = true;
	c->b_last_rc = ctl_test_launch(c, &c->test_wait, j->port, &c->b_last_err);
}

/* Connect the test client (B's server, if any, listens on port). */
static int ctl_test_launch(struct ctl *c, const struct test_opts *oin, int port,
			   struct ll_err *err)
{
	struct ctl_test_view *t = &c->v.test;
	struct test_opts o = *oin;
	struct ll_err e = { 0 };
	int rc;

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
	c->nivs = 0;
	ctl_derive(c);
	ctl_fmt(c->v.status, sizeof(c->v.status),
		 "test: %d %s stream%s, %g s to %s:%d%s", o.streams,
		 o.udp ? "UDP" : "TCP", o.streams > 1 ? "s" : "", o.duration,
		 o.host, o.port, o.reverse ? " (reverse)" : "");
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

/* Full scale for the bars: the bottleneck rate of the sending direction
 * (the sending side's tbf or the bridge's, whichever is smaller). */
static void ctl_test_scale(struct ctl *c)
{
	struct ctl_test_view *t = &c->v.test;
	uint64_t rate = t->opts.reverse ? c->v.path.rate_ba : c->v.path.rate_ab;

	t->scale_dialled = rate > 0;
	t->scale_bps = t->scale_dialled ? (double)rate : t->max_sum_bps;
}

/* Fold one interval into the view. */
static void ctl_test_interval(struct ctl *c, const struct test_interval *iv)
{
	struct ctl_test_view *t = &c->v.test;
	int k;

	t->state = CTL_TEST_RUNNING;
	t->nintervals++;
	/* keep every interval for the saved chart/CSV */
	if (c->nivs == c->capivs && c->capivs < CTL_HISTORY) {
		int ncap = c->capivs ? c->capivs * 2 : 16;
		struct test_interval *nv;

		if (ncap > CTL_HISTORY)
			ncap = CTL_HISTORY;
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
		double rtt = ctl_interval_rtt(iv);

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
			ctl_rpm_update(t);
			if (!(t->rtt_min_s > 0) || rtt < t->rtt_min_s)
				t->rtt_min_s = rtt;
			if (rtt > t->rtt_max_s)
				t->rtt_max_s = rtt;
		}
	}
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
			ctl_derive(c);
			break;
		case TEV_DONE:
			sum = test_summary(c->test);
			if (sum) {
				t->summary = *sum;
				t->have_summary = true;
				ctl_rpm_update(t);
			}
			t->state = CTL_TEST_DONE;
			t->paused = false;
			ctl_fmt(c->v.status, sizeof(c->v.status),
				 "test: done, %d interval%s", t->nintervals,
				 t->nintervals == 1 ? "" : "s");
			if (c->nivs > 0) {
				struct ll_err se = { 0 };

				if (ctl_test_save(c, &se) < 0)
					ctl_fmt(c->v.error, sizeof(c->v.error),
						"test: save results: %s", se.msg);
			}
			ended = 1;
			break;
		case TEV_ERROR:
			t->state = CTL_TEST_FAILED;
			t->paused = false;
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

/* Wait for B's queue to empty: at most the command bound (plus 2 s), and
 * not after one of the cancel fds (ctl_set_quit_cancel) became readable.
 * true when B finished everything. */
static bool ctl_quit_wait_b(struct ctl *c)
{
	double end = ctl_now() + ctl_timeout_s(c) + 2;
	struct pollfd pf[2];
	int k;

	if (c->ncancel == 0 || !c->b_async)
		return peerq_wait_idle(c->bq, (ctl_timeout_s(c) + 2) * 1000);
	for (k = 0; k < c->ncancel; k++)
		pf[k] = (struct pollfd){ .fd = c->cancel_fd[k], .events = POLLIN };
	while (!peerq_wait_idle(c->bq, 0)) {
		if (ctl_now() >= end)
			return false;
		if (poll(pf, (nfds_t)c->ncancel, 50) > 0)
			for (k = 0; k < c->ncancel; k++)
				if (pf[k].revents & (POLLIN | POLLHUP | POLLERR))
					return false;
	}
	return true;
}

void ctl_set_quit_cancel(struct ctl *c, const int *fds, int n)
{
	int k;

	c->ncancel = 0;
	for (k = 0; k < n && k < 2; k++)
		if (fds[k] >= 0)
			c->cancel_fd[c->ncancel++] = fds[k];
}

/* Quit, side B: restore its changed interfaces (and tunings) through its
 * queue, waiting at most the command bound (plus 2 s) for all of it; a B
 * that does not answer by then is left to restore itself. */
static int ctl_quit_b(struct ctl *c, char *summary, size_t len, int *nrest,
		      struct ll_err *err)
{
	struct ctl_changed *ch = &c->changed[CTL_IDX_B];
	struct peerq_job *j;
	char part[128];
	int k, rc, first = 0, nq = 0;
	bool gone = false;

	if (c->tuned[CTL_IDX_B] && (j = peerq_job_new(PQ_TUNE_RESTORE))) {
		j->tag = CTL_TAG_QUIT;
		nq += peerq_submit(c->bq, j) != 0;
	}
	for (k = 0; k < ch->n; k++) {
		j = peerq_job_new(impair_is_empty(&ch->before[k]) ? PQ_CLEAR : PQ_APPLY);
		if (!j)
			continue;
		j->tag = CTL_TAG_QUIT;
		j->dial = ch->before[k];
		ctl_fmt(j->dev, sizeof(j->dev), "%s", ch->dev[k]);
		nq += peerq_submit(c->bq, j) != 0;
	}
	ch->n = 0;
	if (!ctl_quit_wait_b(c))
		gone = true;
	while ((j = peerq_take(c->bq))) {
		if (j->tag != CTL_TAG_QUIT) {
			ctl_b_handle(c, j);
			free(j);
			continue;
		}
		nq--;
		if (j->lost)
			gone = true;
		rc = j->rc;
		if (j->kind == PQ_TUNE_RESTORE) {
			if (rc == 0)
				c->tuned[CTL_IDX_B] = false;
		} else if (!j->lost) {
			ctl_fmt(part, sizeof(part), "%s%sB %s", *nrest ? ", " : "",
				rc < 0 ? "FAILED " : "", j->dev);
			(*nrest)++;
			if (summary && len)
				strncat(summary, part, len - strlen(summary) - 1);
		}
		if (rc < 0 && !j->lost) {
			ctl_join_err(err, rc, "B", j->err.msg);
			if (!first)
				first = rc;
		}
		if (j->lost)
			ctl_b_lost(c, j);
		free(j);
	}
	if (gone || nq > 0) {
		/* B did not answer: what it holds is its own to restore */
		ctl_fmt(part, sizeof(part), "%sB not answering (restores itself)",
			*nrest ? ", " : "");
		(*nrest)++;
		if (summary && len)
			strncat(summary, part, len - strlen(summary) - 1);
	}
	return first;
}

int ctl_quit(struct ctl *c, char *summary, size_t len, struct ll_err *err)
{
	int i, k, rc, first = 0, nrest = 0;
	bool mlost = false;
	char part[128];

	if (summary && len)
		summary[0] = '\0';
	verify_job_free(c->vjob);    /* its load must not outlive the quit */
	c->vjob = NULL;
	c->v.verify.running = false;
	if (c->test) {
		test_stop(c->test);
		ctl_test_end(c);
	}
	ctl_server_stop(c);
	for (i = 0; i < 2; i++) {
		struct peer *p = ctl_peer(c, i);
		struct ctl_changed *ch = &c->changed[i];

		if (p && i == CTL_IDX_B) {
			rc = ctl_quit_b(c, summary, len, &nrest, err);
			if (rc < 0 && !first)
				first = rc;
			continue;
		}
		if (!p) {
			ch->n = 0;
			if (i == CTL_IDX_B && c->v.b_lost) {
				ctl_fmt(part, sizeof(part),
					"%sB lost (restores itself)",
					nrest ? ", " : "");
				nrest++;
				if (summary && len)
					strncat(summary, part,
						len - strlen(summary) - 1);
			}
			continue;
		}
		if (c->tuned[i] && p->ops->tune) {
			struct ll_err e = { 0 };

			rc = p->ops->tune->tune_restore(p, &e);
			if (rc < 0) {
				ctl_join_err(err, rc, ctl_side_name(i), e.msg);
				if (!first)
					first = rc;
			} else {
				c->tuned[i] = false;
			}
		}
		for (k = 0; k < ch->n; k++) {
			struct ll_err e = { 0 };

			if (impair_is_empty(&ch->before[k]))
				rc = p->ops->clear(p, ch->dev[k], &e);
			else
				rc = p->ops->apply(p, ch->dev[k], &ch->before[k], &e);
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
	ctl_middle_quit(c, part, sizeof(part), &mlost);
	if (part[0]) {
		if (summary && len) {
			if (nrest)
				strncat(summary, ", ", len - strlen(summary) - 1);
			strncat(summary, part, len - strlen(summary) - 1);
		}
		nrest++;
	}
	if (summary && len) {
		if (!nrest) {
			ctl_fmt(summary, len, "nothing to restore");
		} else {
			char tmp[512];

			ctl_fmt(tmp, sizeof(tmp), "restored %s", summary);
			ctl_fmt(summary, len, "%s", tmp);
		}
		/* its own sentence: nothing of the bridge was restored here */
		if (mlost) {
			const char *sent = c->v.middle.engine_asked[0] ?
				CTL_MIDDLE_LOST_QUIT_STARTED : CTL_MIDDLE_LOST_QUIT;

			if (!nrest)
				ctl_fmt(summary, len, "%s", sent);
			else
				ctl_fmt(summary + strlen(summary), len - strlen(summary),
					"; %s", sent);
		}
	}
	c->quit_done = true;
	c->quit_ok = first == 0;
	return first;
}


/* --- the middle box --- */

static const char *const ctl_mdir_name[2] = { "A->B", "B->A" };

/* Copy a STATE into the view; rates from the byte counters. */
static void ctl_middle_update(struct ctl *c, const struct middle_state *st)
{
	struct ctl_middle_view *M = &c->v.middle;
	double now = ctl_now(), dt = now - c->mid_t;
	int k;

	M->attached = true;
	M->lost = false;
	M->err[0] = '\0';
	if (M->stall_s > 0) {
		ctl_fmt(c->v.status, sizeof(c->v.status),
			"middle %s answers again (no reply for %d s)", M->host, M->stall_s);
		/* a set refused meanwhile: that error is over */
		if (c->mid_busy_err)
			c->v.error[0] = '\0';
	}
	c->mid_busy_err = false;
	M->stall_s = 0;
	M->pid = st->pid;
	ctl_fmt(M->engine, sizeof(M->engine), "%s", st->engine);
	ctl_fmt(M->if_a, sizeof(M->if_a), "%s", st->if_a);
	ctl_fmt(M->if_b, sizeof(M->if_b), "%s", st->if_b);
	for (k = 0; k < 2; k++) {
		const struct middle_dir *d = &st->dir[k];
		struct ctl_middle_dir *v = &M->dir[k];

		ctl_fmt(v->dial, sizeof(v->dial), "%s", d->dial);
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
	ctl_derive(c);
}

/* The session to the middle failed: say so, go on with A and B. */
static void ctl_middle_lost(struct ctl *c, const char *why)
{
	struct ctl_middle_view *M = &c->v.middle;

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
	ctl_fmt(M->err, sizeof(M->err), "middle lost: %.300s (session closed; %s)",
		why && *why ? why : "session closed",
		M->engine_asked[0] ?
		"the bridge this console started stops when its lease ends (now, or when the middle host answers again)" :
		"the bridge restores its dials when its lease ends (now, or when the middle host answers again)");
	ctl_fmt(c->v.status, sizeof(c->v.status), "%s", M->err);
	if (c->v.dial_sides & CTL_M_BOTH)
		c->v.dial_sides = c->ps.has_b && !c->v.b_lost ? CTL_BOTH : CTL_A;
	ctl_derive(c);
}

/* A middle call failed with rc: lost session, stopped bridge, or only
 * this request. */
static void ctl_middle_failed(struct ctl *c, int rc, const struct ll_err *e)
{
	struct ctl_middle_view *M = &c->v.middle;

	if (middle_lost(c->mid)) {
		ctl_middle_lost(c, e->msg);
	} else if (!middle_attached(c->mid)) {
		M->attached = false;
		M->stall_s = 0;
		M->changed = false;
		c->mstart_valid = false;
		c->mid_prev_valid = false;
		c->mid_retry = ctl_now() + CTL_MIDDLE_RETRY_S;
		ctl_fmt(M->err, sizeof(M->err), "%.400s; retrying every %.0f s",
			e->msg, CTL_MIDDLE_RETRY_S);
		ctl_derive(c);
	}
	(void)rc;
}

/* Attach (or re-attach) to the middle's bridge. */
static int ctl_middle_attach(struct ctl *c)
{
	struct middle_state st;
	struct ll_err e = { 0 };
	int rc;

	/* a bridge the console started before B's session (--bridge) is
	 * attached already: its state now */
	rc = middle_attached(c->mid) ? middle_get(c->mid, &st, &e)
				     : middle_attach(c->mid, &st, &e);
	if (rc < 0) {
		ctl_middle_failed(c, rc, &e);
		if (!middle_lost(c->mid) && !middle_attached(c->mid))
			c->mid_retry = ctl_now() + CTL_MIDDLE_RETRY_S;
		return rc;
	}
	c->mstart = st;
	c->mstart_valid = true;
	c->mid_prev_valid = false;
	c->mid_retry = 0;
	c->v.middle.changed = false;
	ctl_middle_update(c, &st);
	return 0;
}

void ctl_set_middle(struct ctl *c, struct middle *m, const char *label)
{
	struct ctl_middle_view *M = &c->v.middle;

	c->mid = m;
	M->present = m != NULL;
	if (!m)
		return;
	ctl_fmt(M->label, sizeof(M->label), "%s", label && *label ? label : "M (middle)");
	ctl_fmt(M->host, sizeof(M->host), "%s", middle_name(m));
	ctl_fmt(M->engine_asked, sizeof(M->engine_asked), "%s",
		middle_start_engine(m) ? middle_start_engine(m) : "");
	M->dir[0].rx_bps = M->dir[0].tx_bps = -1;
	M->dir[1].rx_bps = M->dir[1].tx_bps = -1;
	ctl_middle_attach(c);
}

int ctl_middle_fd(const struct ctl *c)
{
	if (!c->mid || c->v.middle.lost || middle_get_wait_ms(c->mid) < 0)
		return -1;
	return middle_fd(c->mid);
}

int ctl_middle_pump(struct ctl *c)
{
	struct ctl_middle_view *M = &c->v.middle;
	struct middle_state st;
	struct ll_err e = { 0 };
	long waited;
	int rc, stall;

	if (!c->mid || M->lost || middle_get_wait_ms(c->mid) < 0)
		return 0;
	rc = middle_get_poll(c->mid, &st, &e);
	if (rc == 0) {
		ctl_middle_update(c, &st);
		return 1;
	}
	if (rc != -EAGAIN) {
		ctl_middle_failed(c, rc, &e);
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

int ctl_middle_tick(struct ctl *c)
{
	struct ll_err e = { 0 };
	double now = ctl_now();
	int rc;

	if (!c->mid || c->v.middle.lost)
		return 0;
	if (!middle_attached(c->mid)) {
		if (c->mid_retry > 0 && now < c->mid_retry)
			return 0;
		ctl_middle_attach(c);
		return 1;
	}
	/* a get on its way: its reply, or how long it has been waiting */
	if (middle_get_wait_ms(c->mid) >= 0)
		return ctl_middle_pump(c);
	if (now - c->mid_sent < CTL_MIDDLE_PERIOD_S - 0.05)
		return 0;
	c->mid_sent = now;
	rc = middle_get_send(c->mid, &e);
	if (rc < 0) {
		ctl_middle_failed(c, rc, &e);
		return 1;
	}
	return 0;
}

/* Set the bridge: ab / ba NULL = that direction left as it is. */
static int ctl_middle_set2(struct ctl *c, const struct impair *ab,
			   const struct impair *ba, struct ll_err *err)
{
	struct ctl_middle_view *M = &c->v.middle;
	const struct impair *d[2] = { ab, ba };
	struct middle_state st;
	struct ll_diag diag;
	struct ll_err e = { 0 };
	char what[64];
	int rc, k;

	ctl_fmt(what, sizeof(what), "bridge %s",
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
		ctl_fmt(M->set_err, sizeof(M->set_err), "%s", e.msg);
		goto fail;
	}
	rc = middle_set(c->mid, ab, ba, &st, &e);
	if (rc == -EINVAL) {
		/* the bridge refused: every one of its errors, nothing applied */
		ctl_fmt(M->set_err, sizeof(M->set_err), "%s", e.msg);
		goto fail;
	}
	if (rc < 0) {
		ctl_middle_failed(c, rc, &e);
		goto fail;
	}
	M->set_err[0] = '\0';
	M->changed = true;
	ctl_middle_update(c, &st);
	c->v.error[0] = '\0';
	if ((!ab || impair_is_empty(ab)) && (!ba || impair_is_empty(ba)))
		ctl_fmt(c->v.status, sizeof(c->v.status), "cleared %s", what);
	else if (ab && ba)
		/* each direction named: "A->B: rate 200kbit ...; B->A: ..."
		 * (a profile's [a] and [b] differ) */
		ctl_fmt(c->v.status, sizeof(c->v.status),
			"applied on bridge A->B: %.80s; B->A: %.80s%s%.60s",
			M->dir[MIDDLE_AB].dial[0] ? M->dir[MIDDLE_AB].dial : "none",
			M->dir[MIDDLE_BA].dial[0] ? M->dir[MIDDLE_BA].dial : "none",
			st.warnings[0] ? "; warning: " : "", st.warnings);
	else
		ctl_fmt(c->v.status, sizeof(c->v.status), "applied on %s: %.80s%s%.60s",
			what, ab ? M->dir[MIDDLE_AB].dial : M->dir[MIDDLE_BA].dial,
			st.warnings[0] ? "; warning: " : "", st.warnings);
	return 0;
fail:
	ctl_fmt(c->v.error, sizeof(c->v.error), "%s: %.400s", what, e.msg);
	c->mid_busy_err = rc == -EBUSY;
	if (err)
		*err = e;
	return rc;
}

int ctl_middle_apply(struct ctl *c, const struct impair *d, unsigned sides,
		     struct ll_err *err)
{
	return ctl_middle_set2(c, (sides & CTL_M_AB) ? d : NULL,
			       (sides & CTL_M_BA) ? d : NULL, err);
}

/* Quit: put the bridge's dials back as they were when the lease began,
 * then end the lease (the bridge would restore them itself). A lost
 * middle box is not restored here: *lost is set, part left empty. */
static void ctl_middle_quit(struct ctl *c, char *part, size_t len, bool *lost)
{
	struct ctl_middle_view *M = &c->v.middle;
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
		ctl_fmt(part, len, "bridge %s (stopped: this console started it)", M->host);
		return;
	}
	if (!middle_attached(c->mid) || !M->changed)
		return;
	rc = middle_set(c->mid, &c->mstart.dir[MIDDLE_AB].fields,
			&c->mstart.dir[MIDDLE_BA].fields, &st, &e);
	if (rc == 0 && !c->mstart.dir[0].unparsed[0] && !c->mstart.dir[1].unparsed[0])
		ctl_fmt(part, len, "bridge %s", M->host);
	else
		ctl_fmt(part, len, "bridge %s (lease released: it restores itself)",
			M->host);
	M->changed = false;
	middle_detach(c->mid);
	(void)ctl_mdir_name;
}

/* End the hold (owner_release): A's locks here; B's keeper through B's
 * queue, waited for briefly (a B that does not answer keeps its record:
 * the next console finds it). */
static void ctl_owner_release(struct ctl *c, bool clean)
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

void ctl_free(struct ctl *c)
{
	if (!c)
		return;
	if (c->test) {
		test_stop(c->test);
		test_free(c->test);
	}
	/* the hold's records go when everything was restored (or nothing
	 * changed); else the next run finds them. B's keeper is a channel of
	 * B's session: its release runs on B's worker, before the queue ends */
	ctl_owner_release(c, c->quit_done ? c->quit_ok :
			  c->changed[CTL_IDX_A].n == 0 && c->changed[CTL_IDX_B].n == 0);
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

int ctl_do(struct ctl *c, const struct ctl_intent *in, struct ll_err *err)
{
	switch (in->kind) {
	case CI_NONE:
		return 0;
	case CI_APPLY:
		return ctl_apply_safe(c, &in->dial, in->sides, in->confirmed,
				      in->force, err);
	case CI_CONFIRM_CANCEL:
		if (c->v.confirm.pending)
			ctl_fmt(c->v.status, sizeof(c->v.status),
				"apply cancelled: nothing changed");
		memset(&c->v.confirm, 0, sizeof(c->v.confirm));
		c->unarmed_asked = false;
		return 0;
	case CI_VERIFY:
		return ctl_verify_start(c, err);
	case CI_VERIFY_HIDE:
		c->v.verify.shown = false;
		return 0;
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
	case CI_TEST_PAUSE:
		if (c->v.test.state == CTL_TEST_RUNNING ||
		    c->v.test.state == CTL_TEST_STARTING) {
			c->v.test.paused = !c->v.test.paused;
			ctl_fmt(c->v.status, sizeof(c->v.status), "test: display %s",
				c->v.test.paused ? "paused (intervals still recorded)"
						 : "resumed");
		}
		return 0;
	case CI_TEST_SAVE:
		return ctl_test_save(c, err);
	case CI_PROFILES_RELOAD:
		return ctl_profiles_reload(c, err);
	case CI_PROFILE_APPLY:
		return ctl_profile_apply(c, in->index, in->sides, err);
	case CI_PROFILE_SAVE:
		return ctl_profile_save(c, in->name, err);
	case CI_PROFILE_RENAME:
		return ctl_profile_rename(c, in->index, in->name, err);
	case CI_PROFILE_DELETE:
		return ctl_profile_delete(c, in->index, err);
	}
	return ll_err_set(err, -EINVAL, "controller: unknown intent %d",
			  (int)in->kind);
}

int ctl_tick(struct ctl *c, bool remote)
{
	int i, rc, changed = 0;

	c->tick_t = ctl_now();
	for (i = 0; i < 2; i++) {
		if (i == CTL_IDX_B && !remote)
			continue;
		if (!ctl_peer(c, i) || !c->v.side[i].dev[0])
			continue;
		/* B: not while its earlier requests still wait */
		if (i == CTL_IDX_B && c->b_async && peerq_pending(c->bq) > 0)
			continue;
		rc = ctl_read_back_tag(c, i, CTL_TAG_TICK, NULL);
		if (rc == 0 && i == CTL_IDX_A)
			ctl_sync_link_qdisc(&c->v.side[i]);
		if (i == CTL_IDX_A || !c->b_async)
			changed = 1;
	}
	return changed;
}

const struct test_interval *ctl_test_intervals(const struct ctl *c, int *n)
{
	*n = c->nivs;
	return c->ivs;
}

void ctl_test_caption(const struct ctl *c, char *buf, size_t len)
{
	const struct ctl_view *v = &c->v;
	const struct test_opts *o = &v->test.opts;
	char a[128] = "-", b[128] = "-", br[32] = "", prof[96], rpm[160] = "";
	const struct ctl_rpm *r = &v->test.rpm;

	if (r->valid && r->idle_ms > 0)
		ctl_fmt(rpm, sizeof(rpm), "\nresponsiveness: idle RTT %.3g ms, "
			"working RTT %.3g ms, RPM %.0f", r->idle_ms, r->working_ms,
			r->rpm);
	else if (r->valid)
		ctl_fmt(rpm, sizeof(rpm), "\nresponsiveness: working RTT %.3g ms "
			"(the streams' TCP RTT), RPM %.0f", r->working_ms, r->rpm);
	if (v->side[0].qd_valid)
		impair_summary(&v->side[0].held, a, sizeof(a));
	if (v->side[1].present && v->side[1].qd_valid)
		impair_summary(&v->side[1].held, b, sizeof(b));
	if (o->bitrate)
		units_format_rate(o->bitrate, br, sizeof(br));
	ctl_fmt(prof, sizeof(prof), v->profile_name[0] ? " (profile %s)" : "%s",
		v->profile_name);
	ctl_fmt(buf, len,
		"dial%s: A %s egress: %s; B %s egress: %s\n"
		"peers: %s, %s; %s\n"
		"test: %d %s stream%s, %g s, %s%s%s\n"
		"theory (RTT %s %.3g ms): %s%s",
		prof, v->side[0].dev, a,
		v->side[1].present ? v->side[1].dev : "-", b,
		v->side[0].label, v->side[1].label, v->session,
		o->streams, o->udp ? "UDP" : "TCP", o->streams == 1 ? "" : "s",
		o->duration, o->reverse ? "B -> A (-R)" : "A -> B",
		br[0] ? ", -b " : "", br,
		v->theory_rtt_measured ? "measured" : "dialled",
		v->theory_rtt * 1000, v->theory.line, rpm);
}

/* Write text to a new file at path (O_EXCL: never over another file). */
static int ctl_write_text(const char *path, const char *text, struct ll_err *err)
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

int ctl_test_save(struct ctl *c, struct ll_err *err)
{
	struct ctl_test_view *t = &c->v.test;
	char dir[PATH_MAX - 32], path[PATH_MAX], cap[1024];
	struct plot_opts po = { 0 };
	static const char *const bound[] = {
		[THEORY_NONE] = "theory", [THEORY_RATE] = "rate-limited",
		[THEORY_WINDOW] = "window-limited", [THEORY_LOSS] = "loss-limited",
	};
	const struct ctl_side_view *snd =
		&c->v.side[t->opts.reverse ? CTL_IDX_B : CTL_IDX_A];
	struct impair none = { 0 };
	int rc;

	if (c->nivs == 0)
		return ll_err_set(err, -ENODATA, "save: no test intervals yet (run a test)");
	rc = csvout_new_run_dir(dir, sizeof(dir), err);
	if (rc < 0)
		goto fail;
	ctl_test_caption(c, cap, sizeof(cap));
	po.title = t->opts.udp ? "linklab test (UDP)" : "linklab test (TCP)";
	po.caption = cap;
	po.dial_bps = snd->qd_valid && (snd->held.set & IMP_RATE) ?
		      (double)snd->held.rate : 0;
	po.ceiling_bps = c->v.theory_comparable ? c->v.theory.expect_bps : 0;
	po.ceiling_label = bound[c->v.theory.bound];
	ctl_fmt(path, sizeof(path), "%s/run.svg", dir);
	rc = plot_svg_write_opts(path, c->ivs, c->nivs,
				 t->have_summary ? &t->summary : NULL, &po, err);
	if (rc < 0)
		goto fail;
	ctl_fmt(path, sizeof(path), "%s/intervals.csv", dir);
	rc = csvout_write_file(path, c->ivs, c->nivs,
			       t->have_summary ? &t->summary : NULL, cap, err);
	if (rc < 0)
		goto fail;
	ctl_fmt(path, sizeof(path), "%s/profile.ini", dir);
	rc = profile_write(path, c->v.profile_name[0] ? c->v.profile_name : "run",
			   "the dials both peers held during this run",
			   c->v.side[0].qd_valid ? &c->v.side[0].held : &none,
			   c->v.side[1].present && c->v.side[1].qd_valid ?
			   &c->v.side[1].held : &none, err);
	if (rc < 0)
		goto fail;
	if (c->verify_json && c->verify_json[0]) {
		ctl_fmt(path, sizeof(path), "%s/verify.json", dir);
		rc = ctl_write_text(path, c->verify_json, err);
		if (rc < 0)
			goto fail;
	}
	ctl_fmt(t->saved_dir, sizeof(t->saved_dir), "%s", dir);
	ctl_fmt(c->v.status, sizeof(c->v.status), "test: %d intervals saved to %s%s",
		c->nivs, dir, c->verify_json && c->verify_json[0] ?
		" (with the last verify table)" : "");
	return 0;
fail:
	if (err)
		ctl_fmt(c->v.error, sizeof(c->v.error), "save: %s", err->msg);
	return rc;
}

static int ctl_prof_cmp(const void *x, const void *y)
{
	const struct ctl_profile *a = x, *b = y;

	if (a->user != b->user)
		return a->user ? -1 : 1;     /* the user's own first */
	return strcmp(a->name, b->name);
}

int ctl_profiles_reload(struct ctl *c, struct ll_err *err)
{
	struct profile_entry *e = NULL;
	struct ctl_profile *v;
	struct ll_err le = { 0 };
	int n = 0, i, k, rc;

	rc = profile_list(&e, &n, &le);
	if (rc < 0) {
		ctl_fmt(c->v.error, sizeof(c->v.error), "profiles: %s", le.msg);
		if (err)
			*err = le;
		return rc;
	}
	v = calloc((size_t)(n > 0 ? n : 1), sizeof(*v));
	if (!v) {
		free(e);
		return ll_err_set(err, -ENOMEM, "profiles: out of memory");
	}
	for (i = 0; i < n; i++) {
		struct profile *p = malloc(sizeof(*p));
		struct ll_diag *d = malloc(sizeof(*d));

		ctl_fmt(v[i].name, sizeof(v[i].name), "%s", e[i].name);
		ctl_fmt(v[i].path, sizeof(v[i].path), "%s", e[i].path);
		v[i].user = e[i].user;
		if (!p || !d) {
			free(p);
			free(d);
			ctl_fmt(v[i].problems[0], LL_DIAG_LEN, "out of memory");
			v[i].nproblems = 1;
			continue;
		}
		ll_diag_clear(d);
		v[i].valid = profile_load(e[i].path, p, d) == 0;
		ctl_fmt(v[i].title, sizeof(v[i].title), "%s", p->name);
		ctl_fmt(v[i].description, sizeof(v[i].description), "%s",
			p->description);
		v[i].per_side = p->per_side;
		v[i].a = p->a;
		v[i].b = p->b;
		/* errors first, then warnings */
		for (k = 0; k < d->n && v[i].nproblems < 4; k++)
			if (d->e[k].level == LL_DIAG_ERROR)
				ctl_fmt(v[i].problems[v[i].nproblems++], LL_DIAG_LEN,
					"%s", d->e[k].text);
		for (k = 0; k < d->n && v[i].nproblems < 4; k++)
			if (d->e[k].level != LL_DIAG_ERROR)
				ctl_fmt(v[i].problems[v[i].nproblems++], LL_DIAG_LEN,
					"warning: %s", d->e[k].text);
		free(p);
		free(d);
	}
	free(e);
	qsort(v, (size_t)n, sizeof(*v), ctl_prof_cmp);
	free(c->prof);
	c->prof = v;
	c->v.profiles = v;
	c->v.nprofiles = n;
	return 0;
}

/* The profile idx, or NULL with err set. */
static const struct ctl_profile *ctl_prof_at(struct ctl *c, int idx,
					     struct ll_err *err)
{
	if (idx < 0 || idx >= c->v.nprofiles) {
		ll_err_set(err, -EINVAL, "profile %d out of range (%d listed)", idx,
			   c->v.nprofiles);
		if (err)
			ctl_fmt(c->v.error, sizeof(c->v.error), "%s", err->msg);
		return NULL;
	}
	return &c->prof[idx];
}

int ctl_profile_apply(struct ctl *c, int idx, unsigned sides,
		      struct ll_err *err)
{
	const struct ctl_profile *p = ctl_prof_at(c, idx, err);
	struct ll_err e = { 0 };
	char st[2][256] = { "", "" };
	int rc, first = 0, i;
	bool both, taken;
	struct ctl_prior pa;

	if (!p)
		return -EINVAL;
	if (!p->valid) {
		rc = ll_err_set(err, -EINVAL, "profile %s: %s", p->name,
				p->nproblems ? p->problems[0] : "does not load");
		if (err)
			ctl_fmt(c->v.error, sizeof(c->v.error), "%s", err->msg);
		return rc;
	}
	if (sides & CTL_M_BOTH) {
		/* [a] is A->B traffic, [b] is B->A: the bridge's directions */
		rc = ctl_middle_set2(c, (sides & CTL_M_AB) ? &p->a : NULL,
				     (sides & CTL_M_BA) ? &p->b : NULL, err);
		if (rc == 0) {
			ctl_fmt(c->v.profile_name, sizeof(c->v.profile_name), "%s", p->name);
			ctl_fmt(st[0], sizeof(st[0]), "%s", c->v.status);
			ctl_fmt(c->v.status, sizeof(c->v.status), "profile %s: %.200s",
				p->name, st[0]);
		}
		if (!(sides & CTL_BOTH) || rc < 0)
			return rc;
		sides &= CTL_BOTH;
	}
	if (!c->ps.has_b)
		sides &= CTL_A;
	/* both sides: all or nothing - [a] first; [b] failing rolls A back */
	both = (sides & CTL_BOTH) == CTL_BOTH && ctl_peer(c, CTL_IDX_B);
	if (both)
		ctl_prior_take(c, CTL_IDX_A, &pa);
	for (i = 0; i < 2; i++) {
		if (!(sides & (1u << i)))
			continue;
		if (both && i == CTL_IDX_B && first) {
			ctl_fmt(st[i], sizeof(st[i]), "[b] not applied to B ([a] failed on A: all or nothing)");
			continue;
		}
		ll_err_clear(&e);
		/* B's result (now or later) rolls A back if it fails */
		c->b_roll_next = both && i == CTL_IDX_B;
		if (c->b_roll_next) {
			c->b_prior_next = pa;
			ctl_fmt(c->b_prof_next, sizeof(c->b_prof_next), "%s", p->name);
		}
		rc = ctl_apply(c, i ? &p->b : &p->a, 1u << i, &e);
		taken = !c->b_roll_next;
		c->b_roll_next = false;
		if (rc < 0 && both && i == CTL_IDX_B && taken) {
			/* rolled back and said by ctl_change_b_done */
			if (err)
				*err = e;
			return rc;
		}
		if (rc < 0 && both && i == CTL_IDX_B) {
			char note[300];

			/* refused before reaching B: A goes back here */
			ctl_rollback(c, CTL_IDX_A, &pa, note, sizeof(note));
			ctl_fmt(st[0], sizeof(st[0]), "[b] failed on B, %s", note);
		}
		ctl_fmt(st[i], sizeof(st[i]), "%s", rc < 0 ? e.msg : c->v.status);
		if (rc < 0 && !first) {
			first = rc;
			if (err)
				*err = e;
		}
	}
	c->v.dial = (sides & CTL_A) ? p->a : p->b;
	c->v.dial_sides = sides;
	ctl_fmt(c->v.profile_name, sizeof(c->v.profile_name), "%s", p->name);
	ctl_fmt(c->v.status, sizeof(c->v.status), "profile %s: %s%s%s", p->name,
		st[0], st[0][0] && st[1][0] ? "; " : "", st[1]);
	/* B's part still on its way: its status keeps the profile's name and
	 * A's part in front */
	for (i = 0; c->b_async && (sides & CTL_B) && c->chg_last && i < (int)(sizeof(c->chg) / sizeof(c->chg[0])); i++) {
		struct ctl_bchg *r = &c->chg[i];

		if (r->id != c->chg_last)
			continue;
		ctl_fmt(r->head, sizeof(r->head), "profile %.60s: %.150s%s",
			p->name, (sides & CTL_A) ? st[0] : "", (sides & CTL_A) ? "; " : "");
		ctl_fmt(c->v.status, sizeof(c->v.status), "profile %.60s: waiting for B%s%.150s%s",
			p->name, (sides & CTL_A) ? " (" : "", (sides & CTL_A) ? st[0] : "",
			(sides & CTL_A) ? ")" : "");
		ctl_fmt(r->left, sizeof(r->left), "%s", c->v.status);
	}
	if (first && err)
		ctl_fmt(c->v.error, sizeof(c->v.error), "profile %s: %s", p->name,
			err->msg);
	else if (!first)
		c->v.error[0] = '\0';
	return first;
}

int ctl_profile_save(struct ctl *c, const char *name, struct ll_err *err)
{
	const struct ctl_side_view *A = &c->v.side[CTL_IDX_A];
	const struct ctl_side_view *B = &c->v.side[CTL_IDX_B];
	const struct impair *a, *b;
	char desc[256], sa[96], sb[96], path[PATH_MAX];
	struct ll_err e = { 0 };
	int rc;

	a = A->qd_valid && !impair_is_empty(&A->held) ? &A->held : &c->v.dial;
	b = B->present && B->qd_valid ? &B->held : a;
	ctl_fmt(desc, sizeof(desc), "saved from the console: A %s, B %s",
		impair_summary(a, sa, sizeof(sa)), impair_summary(b, sb, sizeof(sb)));
	if (impair_is_empty(a) && impair_is_empty(b)) {
		rc = ll_err_set(&e, -EINVAL,
				"save profile: nothing dialled or held to save");
		goto fail;
	}
	rc = profile_save_sides(name, desc, a, b, path, sizeof(path), &e);
	if (rc < 0)
		goto fail;
	ctl_profiles_reload(c, NULL);
	ctl_fmt(c->v.profile_name, sizeof(c->v.profile_name), "%s", name);
	ctl_fmt(c->v.status, sizeof(c->v.status), "saved profile %s (%s)", name, path);
	c->v.error[0] = '\0';
	return 0;
fail:
	ctl_fmt(c->v.error, sizeof(c->v.error), "%s", e.msg);
	if (err)
		*err = e;
	return rc;
}

int ctl_profile_rename(struct ctl *c, int idx, const char *name,
		       struct ll_err *err)
{
	const struct ctl_profile *p = ctl_prof_at(c, idx, err);
	struct ll_err e = { 0 };
	char old[64], npath[PATH_MAX];
	int rc;

	if (!p)
		return -EINVAL;
	ctl_fmt(old, sizeof(old), "%s", p->name);
	rc = profile_rename(p->path, name, npath, sizeof(npath), &e);
	if (rc < 0) {
		ctl_fmt(c->v.error, sizeof(c->v.error), "rename %s: %s", old, e.msg);
		if (err)
			*err = e;
		return rc;
	}
	ctl_profiles_reload(c, NULL);
	ctl_fmt(c->v.status, sizeof(c->v.status), "renamed profile %s to %s", old, name);
	c->v.error[0] = '\0';
	return 0;
}

int ctl_profile_delete(struct ctl *c, int idx, struct ll_err *err)
{
	const struct ctl_profile *p = ctl_prof_at(c, idx, err);
	struct ll_err e = { 0 };
	char old[64];
	int rc;

	if (!p)
		return -EINVAL;
	ctl_fmt(old, sizeof(old), "%s", p->name);
	rc = profile_delete(p->path, &e);
	if (rc < 0) {
		ctl_fmt(c->v.error, sizeof(c->v.error), "delete %s: %s", old, e.msg);
		if (err)
			*err = e;
		return rc;
	}
	ctl_profiles_reload(c, NULL);
	ctl_fmt(c->v.status, sizeof(c->v.status), "deleted profile %s", old);
	c->v.error[0] = '\0';
	return 0;
}

void ctl_note(struct ctl *c, const char *msg)
{
	ctl_fmt(c->v.status, sizeof(c->v.status), "%s", msg);
}

void ctl_set_safety(struct ctl *c, const struct peer_safety *s)
{
	c->safety = *s;
	if (c->bq)
		peerq_set_safety(c->bq, s);   /* B is the queue's */
	else if (c->ps.has_b && !c->v.b_lost && c->ps.b.ops->set_safety)
		c->ps.b.ops->set_safety(&c->ps.b, s);
	c->v.revert_s = ctl_revert_s(c);
}

int ctl_apply_check(struct ctl *c, const struct impair *d, unsigned sides,
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
	 * fetched by ctl_set_async (unknown: nothing to check, as when B
	 * cannot tell; B's own apply checks again) */
	if (!c->b_async && peerq_ops(c->bq)->session) {
		c->bflow_known = false;
		ctl_b_submit(c, peerq_job_new(PQ_CTL_FLOW));
	}
	if (!c->bflow_known)
		return 0;
	for (i = 0; i < 2; i++) {
		struct ll_err e = { 0 };

		if (!(sides & (1u << i)) || !ctl_peer(c, i) ||
		    !c->v.side[i].dev[0])
			continue;
		w[0] = '\0';
		rc = peerset_ctl_check_flow(&c->ps, &c->bflow, i, c->v.side[i].dev, d,
					    force, w, sizeof(w), &e);
		if (rc < 0) {
			if (!e.msg[0])
				ll_err_set(&e, rc, "%s: %s", c->v.side[i].dev,
					   strerror(-rc));
			ctl_join_err(err, rc, ctl_side_name(i), e.msg);
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

int ctl_apply_safe(struct ctl *c, const struct impair *d, unsigned sides,
		   bool confirmed, bool force, struct ll_err *err)
{
	struct ctl_confirm *cf = &c->v.confirm;
	struct ll_err e = { 0 };
	char warn[sizeof(cf->text)];
	int rc;

	memset(cf, 0, sizeof(*cf));
	if (!confirmed)
		c->unarmed_asked = false;
	if (sides & CTL_M_BOTH) {
		/* the bridge carries no SSH session: nothing to confirm */
		c->v.dial = *d;
		c->v.dial_sides = sides;
		rc = ctl_middle_apply(c, d, sides & CTL_M_BOTH, err);
		sides &= CTL_BOTH;
		if (!sides || rc < 0)
			return rc;
	}
	if (!confirmed && !impair_is_empty(d)) {
		rc = ctl_apply_check(c, d, sides, false, warn, sizeof(warn), &e);
		if (rc < 0 || warn[0]) {
			cf->pending = true;
			cf->need_force = rc == -EPERM;
			cf->dial = *d;
			cf->sides = sides;
			if (rc < 0)
				ctl_fmt(cf->text, sizeof(cf->text), "%s%s%s",
					e.msg, warn[0] ? "\n" : "", warn);
			else
				ctl_fmt(cf->text, sizeof(cf->text), "%s", warn);
			c->v.dial = *d;
			c->v.dial_sides = sides;
			ctl_fmt(c->v.status, sizeof(c->v.status),
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
	 * B raises that question (ctl_change_b_done) */
	c->b_unarmed_next = confirmed && c->unarmed_asked;
	c->unarmed_asked = false;
	c->b_force_next = force;
	c->b_ask_next = true;
	rc = ctl_apply(c, d, sides, err);
	c->b_force_next = false;
	c->b_unarmed_next = false;
	c->b_ask_next = false;
	if (rc == -ENOLCK && cf->pending)
		return -EAGAIN;           /* asked (inline: B's result is in) */
	return rc;
}

int ctl_peer_fd(const struct ctl *c)
{
	if (!c->ps.has_b || c->v.b_lost)
		return -1;
	if (c->b_async)
		return peerq_fd(c->bq);
	if (!c->ps.b.ops->session)
		return -1;
	return c->ps.b.ops->session->poll_fd((struct peer *)&c->ps.b);
}

int ctl_keepalive(struct ctl *c, bool hup, int *next_s)
{
	struct ll_err e = { 0 };
	int next = 0, rc;

	if (next_s)
		*next_s = 0;
	if (!c->ps.has_b || c->v.b_lost)
		return 0;
	if (c->b_async)          /* the worker keeps the session alive */
		return ctl_peer_pump(c);
	if (hup) {
		ctl_mark_lost(c, "the connection to B's sshd was closed");
		return 1;
	}
	if (!c->ps.b.ops->session)
		return 0;
	rc = c->ps.b.ops->session->keepalive(&c->ps.b, &next, &e);
	if (rc < 0) {
		if (!e.msg[0])
			ll_err_set(&e, rc, "keepalive: %s", strerror(-rc));
		ctl_mark_lost(c, e.msg);
		return 1;
	}
	if (next_s)
		*next_s = next;
	return 0;
}

/* Side's sysctl set returned rc. */
static int ctl_sysctl_fold(struct ctl *c, int side, const char *name,
			   const char *value, int rc, struct ll_err *e,
			   struct ll_err *err)
{
	if (rc < 0) {
		if (!e->msg[0])
			ll_err_set(e, rc, "%s: %s", name, strerror(-rc));
		if (!(side == CTL_IDX_B && c->v.b_lost))
			ctl_side_fail(c, side, e);
		if (err)
			ll_err_set(err, rc, "%s: %s", ctl_side_name(side), e->msg);
		return rc;
	}
	c->tuned[side] = true;
	ctl_fmt(c->v.status, sizeof(c->v.status), "%s: %s = %s (restored on quit)",
		ctl_side_name(side), name, value);
	return 0;
}

static void ctl_sysctl_done(struct ctl *c, struct peerq_job *j)
{
	c->b_last_rc = ctl_sysctl_fold(c, CTL_IDX_B, j->name, j->value, j->rc, &j->err,
				       &c->b_last_err);
}

int ctl_sysctl_set(struct ctl *c, int side, const char *name,
		   const char *value, struct ll_err *err)
{
	struct peer *p;
	const struct peer_ops *ops;
	struct ll_err e = { 0 };
	int rc;

	if (side != CTL_IDX_A && side != CTL_IDX_B)
		return ll_err_set(err, -EINVAL, "sysctl: side %d: expected A or B", side);
	p = ctl_peer(c, side);
	if (!p)
		return ll_err_set(err, c->v.b_lost ? -ENOTCONN : -ENODEV,
				  "B: %s", c->v.b_lost ? c->v.b_lost_msg : "no peer");
	ops = side == CTL_IDX_B ? peerq_ops(c->bq) : p->ops;
	if (!ops->tune)
		return ll_err_set(err, -ENOTSUP, "%s: sysctls not supported by the %s backend",
				  ctl_side_name(side), ops->name);
	if (side == CTL_IDX_B) {
		struct peerq_job *j = peerq_job_new(PQ_SYSCTL_SET);

		if (!j)
			return ll_err_set(err, -ENOMEM, "out of memory");
		ctl_fmt(j->name, sizeof(j->name), "%s", name);
		ctl_fmt(j->value, sizeof(j->value), "%s", value);
		ctl_b_submit(c, j);
		return ctl_b_result(c, err);
	}
	rc = p->ops->tune->sysctl_set(p, name, value, &e);
	return ctl_sysctl_fold(c, side, name, value, rc, &e, err);
}

/* --- linklab verify from the console -------------------------------------- */

int ctl_set_verify_argv(struct ctl *c, char *const argv[])
{
	int n = 0;

	while (argv[n])
		n++;
	c->verify_argv = calloc((size_t)n + 1, sizeof(*c->verify_argv));
	if (!c->verify_argv)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		if (!(c->verify_argv[i] = strdup(argv[i])))
			return -ENOMEM;
	return 0;
}

int ctl_verify_start(struct ctl *c, struct ll_err *err)
{
	int rc;

	if (!c->verify_argv)
		rc = ll_err_set(err, -ENOTSUP, "verify: needs a peer to measure "
				"against (start the console with --peer HOST)");
	else if (c->vjob)
		rc = ll_err_set(err, -EBUSY, "verify: already running (%.0f s)",
				verify_job_age(c->vjob));
	else if (c->test || c->v.test.state == CTL_TEST_RUNNING)
		rc = ll_err_set(err, -EBUSY, "verify: a test is running; stop it "
				"first (both would load the path)");
	else
		rc = verify_job_start(&c->vjob, c->verify_argv, err);
	if (rc < 0) {
		ctl_fmt(c->v.error, sizeof(c->v.error), "%s", err ? err->msg : "verify");
		return rc;
	}
	memset(&c->v.verify, 0, sizeof(c->v.verify));
	c->v.verify.running = true;
	c->v.verify.shown = true;
	ctl_fmt(c->v.status, sizeof(c->v.status), "verify: measuring the path "
		"against the dials both peers hold (about 30 s)");
	return 0;
}

int ctl_verify_fd(const struct ctl *c)
{
	return c->vjob ? verify_job_fd(c->vjob) : -1;
}

int ctl_verify_pump(struct ctl *c)
{
	struct ctl_verify_view *vv = &c->v.verify;
	int bad = 0;

	if (!c->vjob)
		return 0;
	vv->age_s = verify_job_age(c->vjob);
	if (verify_job_pump(c->vjob, &vv->res) == 0)
		return 0;
	free(c->verify_json);
	c->verify_json = strdup(verify_job_output(c->vjob));
	verify_job_free(c->vjob);
	c->vjob = NULL;
	vv->running = false;
	vv->have = true;
	vv->shown = true;
	for (int i = 0; i < vv->res.rep.n; i++)
		bad += !vv->res.rep.r[i].ok;
	if (vv->res.error[0])
		ctl_fmt(c->v.error, sizeof(c->v.error), "verify: %s", vv->res.error);
	else
		ctl_fmt(c->v.status, sizeof(c->v.status), "verify: %s (%d of %d rows ok)",
			vv->res.ok ? "the path holds the dial" : "the path does NOT hold the dial",
			vv->res.rep.n - bad, vv->res.rep.n);
	return 1;
}
