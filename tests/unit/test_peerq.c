/* SPDX-License-Identifier: MIT */
/* test_peerq.c - how the threaded peer queue ends its peer (peerq.h): a
 * normal stop closes it (the hold guard disarmed), a session lost in a job
 * abandons it (the guard left armed to restore), and a stop with jobs left
 * unrun abandons it too, as does one the caller asked to abandon (a change
 * it did not see undone). A fake peer counts the calls. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "linklab/peer/peerq.h"

struct fake {
	int nclose, nabandon, nread, nclear;
	int apply_rc;
	int gate[2];       /* read_qdiscs waits for a byte here when gated */
	bool gated;
	int entered[2];    /* read_qdiscs writes a byte here on entry */
};

static int fake_read(struct peer *p, const char *dev, struct qdisc_state *out,
		     struct ll_err *err)
{
	struct fake *f = p->priv;
	char b;

	(void)dev; (void)err;
	memset(out, 0, sizeof(*out));
	f->nread++;
	if (f->gated) {
		assert_int_equal(write(f->entered[1], "e", 1), 1);
		assert_int_equal(read(f->gate[0], &b, 1), 1);
	}
	return 0;
}

static int fake_apply(struct peer *p, const char *dev, const struct impair *d,
		      struct ll_err *err)
{
	struct fake *f = p->priv;

	(void)dev; (void)d;
	return f->apply_rc ? ll_err_set(err, f->apply_rc, "did not answer") : 0;
}

static int fake_clear(struct peer *p, const char *dev, struct ll_err *err)
{
	(void)dev; (void)err;
	((struct fake *)p->priv)->nclear++;
	return 0;
}

static void fake_close(struct peer *p)
{
	((struct fake *)p->priv)->nclose++;
}

static void fake_abandon(struct peer *p)
{
	((struct fake *)p->priv)->nabandon++;
}

static int fake_sshflow(struct peer *p, struct peer_sshflow *out, struct ll_err *err)
{
	(void)p; (void)out;
	return ll_err_set(err, -ENOTSUP, "none");
}

static const char *fake_warning(struct peer *p)
{
	(void)p;
	return "";
}

/* the session: always answers a keepalive, unless the fake times out */
static int fake_keepalive(struct peer *p, int *next_s, struct ll_err *err)
{
	struct fake *f = p->priv;

	*next_s = 60;
	return f->apply_rc ? ll_err_set(err, -EIO, "session gone") : 0;
}

static int fake_poll_fd(struct peer *p)
{
	(void)p;
	return -1;
}

static const struct peer_session_ops fake_session = {
	.sshflow = fake_sshflow,
	.warning = fake_warning,
	.keepalive = fake_keepalive,
	.poll_fd = fake_poll_fd,
	.abandon = fake_abandon,
};

static const struct peer_ops fake_ops = {
	.name = "fake",
	.read_qdiscs = fake_read,
	.apply = fake_apply,
	.clear = fake_clear,
	.close = fake_close,
	.session = &fake_session,
};

static struct peerq *fake_queue(struct fake *f)
{
	struct peer p = { .ops = &fake_ops, .label = "B (fake)", .priv = f };
	struct peerq *q = NULL;
	struct ll_err err = { 0 };

	assert_int_equal(pipe(f->gate), 0);
	assert_int_equal(pipe(f->entered), 0);
	assert_int_equal(peerq_new(&q, &p, NULL, true, &err), 0);
	return q;
}

static void fake_done(struct fake *f)
{
	close(f->gate[0]);
	close(f->gate[1]);
	close(f->entered[0]);
	close(f->entered[1]);
}

/* the next finished job, waited for on peerq_fd (at most 10 s) */
static struct peerq_job *next_done(struct peerq *q)
{
	struct pollfd pf = { .fd = peerq_fd(q), .events = POLLIN };
	struct peerq_job *j;

	while (!(j = peerq_take(q)))
		assert_true(poll(&pf, 1, 10000) > 0);
	return j;
}

static void submit(struct peerq *q, enum peerq_kind kind)
{
	struct peerq_job *j = peerq_job_new(kind);

	assert_non_null(j);
	snprintf(j->dev, sizeof(j->dev), "veth-b");
	assert_true(peerq_submit(q, j) != 0);
}

/* every job done, then the stop: a normal close */
static void test_stop_idle_closes(void **state)
{
	struct fake f = { 0 };
	struct peerq *q = fake_queue(&f);

	(void)state;
	submit(q, PQ_READ);
	free(next_done(q));
	assert_true(peerq_wait_idle(q, 10000));
	peerq_free(q, 10000);
	assert_int_equal(f.nclose, 1);
	assert_int_equal(f.nabandon, 0);
	fake_done(&f);
}

/* a job that times out: the session is lost, the peer abandoned */
static void test_lost_abandons(void **state)
{
	struct fake f = { .apply_rc = -ETIMEDOUT };
	struct peerq *q = fake_queue(&f);
	struct peerq_job *j;

	(void)state;
	submit(q, PQ_APPLY);
	j = next_done(q);
	assert_true(j->lost);
	free(j);
	assert_true(peerq_lost(q));
	peerq_free(q, 10000);
	assert_int_equal(f.nabandon, 1);
	assert_int_equal(f.nclose, 0);
	fake_done(&f);
}

/* Opens the gate of the job the worker is in once the main thread is about
 * to call peerq_free (signalled through a pipe): the stop is then almost
 * always set before the worker looks for its next job. */
struct gate_arg {
	struct fake *f;
	int go;            /* read end: main is about to call peerq_free */
};

static void *gate_release(void *arg)
{
	struct gate_arg *g = arg;
	char b;

	if (read(g->go, &b, 1) == 1) {
		sched_yield();   /* peerq_free's instant to set the stop */
		if (write(g->f->gate[1], "g", 1) != 1)
			return NULL;
	}
	return NULL;
}

/* a stop while restores are still queued (the caller gave up waiting):
 * those never run, and the peer is abandoned, not closed */
static void test_stop_with_jobs_left_abandons(void **state)
{
	struct fake f = { .gated = true };
	struct peerq *q = fake_queue(&f);
	struct gate_arg g = { .f = &f };
	int go[2];
	pthread_t th;
	char b;

	(void)state;
	submit(q, PQ_READ);
	assert_int_equal(read(f.entered[0], &b, 1), 1);   /* the worker is in it */
	submit(q, PQ_CLEAR);
	submit(q, PQ_CLEAR);
	assert_int_equal(pipe(go), 0);
	g.go = go[0];
	assert_int_equal(pthread_create(&th, NULL, gate_release, &g), 0);
	assert_int_equal(write(go[1], "s", 1), 1);
	peerq_free(q, 10000);
	pthread_join(th, NULL);
	close(go[0]);
	close(go[1]);
	/* abandoned exactly when jobs were left unrun */
	assert_int_equal(f.nread, 1);
	if (f.nclear == 0) {
		assert_int_equal(f.nabandon, 1);
		assert_int_equal(f.nclose, 0);
	} else {
		print_message("note: the gate opened before the stop: both clears ran\n");
		assert_int_equal(f.nclear, 2);
		assert_int_equal(f.nclose, 1);
		assert_int_equal(f.nabandon, 0);
	}
	fake_done(&f);
}

/* every job done, but the caller asked for an abandon (the peer holds a
 * change it did not undo): the stop abandons, it does not close */
static void test_abandon_at_close(void **state)
{
	struct fake f = { 0 };
	struct peerq *q = fake_queue(&f);

	(void)state;
	submit(q, PQ_APPLY);
	free(next_done(q));
	assert_true(peerq_wait_idle(q, 10000));
	peerq_abandon_at_close(q);
	peerq_free(q, 10000);
	assert_int_equal(f.nabandon, 1);
	assert_int_equal(f.nclose, 0);
	fake_done(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stop_idle_closes),
		cmocka_unit_test(test_lost_abandons),
		cmocka_unit_test(test_stop_with_jobs_left_abandons),
		cmocka_unit_test(test_abandon_at_close),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
