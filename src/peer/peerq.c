/* SPDX-License-Identifier: MIT */
/* peerq.c - a worker thread (or inline runner) in front of one peer: queued
 * jobs run in order, results are posted back through an eventfd. */
#include "linklab/peer/peerq.h"
#include "linklab/peer/peer_restore.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define PEERQ_MAX 64               /* queued + finished jobs */
#define PEERQ_QUIET_MS 200         /* session socket: at most 5 reads/s */

struct peerq {
	struct peer p;                 /* owned: used by the worker only */
	struct peer info;              /* label/host for any thread (no ops) */
	bool threaded;
	pthread_t th;
	bool th_started;
	pthread_mutex_t mu;
	pthread_cond_t idle_cv;
	struct peerq_job *todo[PEERQ_MAX];
	int ntodo;
	struct peerq_job *done[PEERQ_MAX];
	int ndone;
	struct peerq_job *running;
	double run_t;                  /* monotonic s the running job began */
	unsigned next_id;
	bool stop;
	bool lost;
	bool closed;                   /* p closed */
	bool abandon_close;            /* close as lost even with no job left */
	struct peer_safety safety;
	bool safety_dirty;
	int evfd;                      /* results waiting */
	int wake[2];                   /* to the worker: a job, or stop */
};

static double pq_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *const pq_names[] = {
	[PQ_LIST] = "list links", [PQ_READ] = "read qdiscs",
	[PQ_APPLY] = "apply", [PQ_CLEAR] = "clear",
	[PQ_SSHFLOW] = "session route", [PQ_SERVER_START] = "start test server",
	[PQ_SERVER_STOP] = "stop test server", [PQ_SYSCTL_SET] = "sysctl",
	[PQ_TUNE_RESTORE] = "restore sysctls/offloads", [PQ_KEEPALIVE] = "keepalive",
	[PQ_LOCK_RELEASE] = "release the hold",
};

struct peerq_job *peerq_job_new(enum peerq_kind kind)
{
	struct peerq_job *j = calloc(1, sizeof(*j));

	if (j) {
		j->kind = kind;
		j->eng_rc = -ENOENT;
	}
	return j;
}

/* A failure with rc: is the session itself gone? A timeout is (the session
 * is stalled: ssh_stalled); a session error is when a keepalive fails too. */
static bool pq_session_gone(struct peerq *q, int rc)
{
	struct ll_err e = { 0 };
	int next = 0;

	if (rc == -ETIMEDOUT)
		return true;
	if (rc != -EIO && rc != -ENOTCONN && rc != -ECONNRESET &&
	    rc != -EPIPE && rc != -ESHUTDOWN && rc != -EPROTO)
		return false;
	return !q->p.ops->session || q->p.ops->session->keepalive(&q->p, &next, &e) < 0;
}

static void pq_readback(struct peerq *q, struct peerq_job *j)
{
	j->rb_rc = q->p.ops->read_qdiscs(&q->p, j->dev, &j->qd, &j->rb_err);
	if (j->rb_rc < 0 && !j->rb_err.msg[0])
		ll_err_set(&j->rb_err, j->rb_rc, "%s", strerror(-j->rb_rc));
	/* the engine's dial is part of what dev holds */
	j->eng_rc = j->rb_rc == 0 && q->p.ops->engine ?
		    q->p.ops->engine->engine_get(&q->p, j->dev, &j->eng, NULL) : -ENOENT;
}

/* Run one job on the peer (the worker, or the caller inline). */
static void pq_run(struct peerq *q, struct peerq_job *j)
{
	const struct peer_ops *o = q->p.ops;
	double t0 = pq_now();
	int rc = 0;
	bool once;

	switch (j->kind) {
	case PQ_LIST:
		rc = o->list_links(&q->p, &j->links, &j->err);
		if (rc == 0 && o->tune) {
			struct ll_err se = { 0 };

			j->have_sys = o->tune->sysctl_get(&q->p, &j->sys, &se) == 0;
		}
		break;
	case PQ_READ:
		pq_readback(q, j);
		rc = j->rb_rc;
		if (rc < 0)
			j->err = j->rb_err;
		break;
	case PQ_APPLY:
	case PQ_CLEAR:
		once = j->kind == PQ_APPLY && (j->force || j->unarmed_ok) &&
		       o->set_safety;
		if (once) {
			struct peer_safety sf = q->safety;

			sf.force = sf.force || j->force;
			sf.unarmed_ok = j->unarmed_ok;
			o->set_safety(&q->p, &sf);
		}
		if (j->kind == PQ_APPLY && j->restore_to)
			rc = peer_restore_to(&q->p, j->dev, &j->dial, &j->err);
		else if (j->kind == PQ_APPLY)
			rc = o->apply(&q->p, j->dev, &j->dial, &j->err);
		else
			rc = o->clear(&q->p, j->dev, &j->err);
		if (once)
			o->set_safety(&q->p, &q->safety);
		if (rc == 0 && j->kind == PQ_APPLY && j->lock_note && o->lock)
			o->lock->lock_note(&q->p, j->dev);
		if (rc == 0 && j->kind == PQ_APPLY && o->session && o->session->warning(&q->p))
			snprintf(j->warning, sizeof(j->warning), "%s", o->session->warning(&q->p));
		if (rc < 0 && pq_session_gone(q, rc))
			j->lost = true;
		else if (j->readback)
			pq_readback(q, j);
		break;
	case PQ_SSHFLOW:
		rc = o->session ? o->session->sshflow(&q->p, &j->sshflow, &j->err)
				 : ll_err_set(&j->err, -ENOTSUP, "no control session");
		break;
	case PQ_SERVER_START:
		rc = o->server_start(&q->p, &j->port, &j->err);
		break;
	case PQ_SERVER_STOP:
		rc = o->server_stop ? o->server_stop(&q->p, &j->err) : 0;
		break;
	case PQ_SYSCTL_SET:
		rc = o->tune ? o->tune->sysctl_set(&q->p, j->name, j->value, &j->err)
				   : ll_err_set(&j->err, -ENOTSUP, "sysctls not supported");
		break;
	case PQ_TUNE_RESTORE:
		rc = o->tune ? o->tune->tune_restore(&q->p, &j->err) : 0;
		break;
	case PQ_LOCK_RELEASE:
		if (o->lock)
			o->lock->lock_release(&q->p, j->remove);
		rc = 0;
		break;
	case PQ_KEEPALIVE: {
		int next = 0;

		rc = o->session ? o->session->keepalive(&q->p, &next, &j->err) : 0;
		break;
	}
	}
	j->rc = rc;
	if (rc < 0 && !j->err.msg[0])
		ll_err_set(&j->err, rc, "%s", strerror(-rc));
	/* a test server slow to say "listening" times out on its own line,
	 * not on the session: only a session error counts there */
	if (!j->lost && ((rc < 0 && j->kind != PQ_APPLY && j->kind != PQ_CLEAR &&
			  !(j->kind == PQ_SERVER_START && rc == -ETIMEDOUT) &&
			  pq_session_gone(q, rc)) || j->rb_rc == -ETIMEDOUT))
		j->lost = true;
	j->took_s = pq_now() - t0;
}

/* Post a finished job (mutex held). */
static void pq_post(struct peerq *q, struct peerq_job *j)
{
	uint64_t one = 1;

	if (j->lost)
		q->lost = true;
	if (q->ndone < PEERQ_MAX)
		q->done[q->ndone++] = j;
	else
		free(j);
	if (q->evfd >= 0 && write(q->evfd, &one, sizeof(one)) < 0) {
		/* counter saturated: readable anyway */
	}
}

/* Close the peer once. abandon (a lost session, or a stop with jobs left
 * unrun, such as restores the caller stopped waiting for): closed as lost,
 * so B's hold guard is not disarmed and restores what it holds - a stopped
 * sshd that runs again later then finds the connection gone. Otherwise a
 * normal close (the guard disarmed: nothing is left for it). */
static void pq_close_peer(struct peerq *q, bool abandon)
{
	const struct peer_ops *o = q->p.ops;
	bool was;

	pthread_mutex_lock(&q->mu);
	was = q->closed;
	q->closed = true;
	pthread_mutex_unlock(&q->mu);
	if (was || !o)
		return;
	if (abandon && o->session)
		o->session->abandon(&q->p);
	else if (o->close)
		o->close(&q->p);
}

/* Idle: wait for a job or stop, keeping the session alive meanwhile. */
static void pq_idle_wait(struct peerq *q, double *next_ka, double *quiet)
{
	struct pollfd pf[2];
	int n = 1, timeout, sfd = -1;
	double now = pq_now();

	pf[0] = (struct pollfd){ .fd = q->wake[0], .events = POLLIN };
	if (!q->lost && !q->closed && q->p.ops->session)
		sfd = q->p.ops->session->poll_fd(&q->p);
	if (sfd >= 0 && now >= *quiet)
		pf[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN | POLLRDHUP };
	timeout = q->p.ops->session && !q->lost ? (int)((*next_ka - now) * 1000) : -1;
	if (sfd >= 0 && now < *quiet && (timeout < 0 || timeout > (*quiet - now) * 1000))
		timeout = (int)((*quiet - now) * 1000) + 1;
	if (timeout < -1)
		timeout = 0;
	if (poll(pf, (nfds_t)n, timeout) < 0)
		return;
	if (pf[0].revents & POLLIN) {
		char b[64];

		while (read(q->wake[0], b, sizeof(b)) > 0)
			;
	}
	now = pq_now();
	if (q->lost || !q->p.ops->session)
		return;
	if ((n > 1 && pf[1].revents) || now >= *next_ka) {
		struct peerq_job *j = peerq_job_new(PQ_KEEPALIVE);
		int next = 0;

		if (n > 1 && pf[1].revents)
			*quiet = now + PEERQ_QUIET_MS / 1000.0;
		if (!j)
			return;
		if (n > 1 && (pf[1].revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) &&
		    !(pf[1].revents & POLLIN)) {
			j->rc = ll_err_set(&j->err, -ECONNRESET,
					   "the connection to the peer's sshd was closed");
		} else {
			j->rc = q->p.ops->session->keepalive(&q->p, &next, &j->err);
			if (j->rc < 0 && !j->err.msg[0])
				ll_err_set(&j->err, j->rc, "keepalive: %s", strerror(-j->rc));
		}
		*next_ka = now + (next > 0 ? next : 5);
		if (j->rc == 0) {
			free(j);
			return;
		}
		j->lost = true;
		pthread_mutex_lock(&q->mu);
		pq_post(q, j);
		pthread_mutex_unlock(&q->mu);
		pq_close_peer(q, true);
	}
}

static void *pq_worker(void *arg)
{
	struct peerq *q = arg;
	double next_ka = pq_now() + 1, quiet = 0;
	bool left;

	for (;;) {
		struct peerq_job *j = NULL;
		bool dirty, lost;
		struct peer_safety sf;

		pthread_mutex_lock(&q->mu);
		if (q->stop) {
			pthread_mutex_unlock(&q->mu);
			break;
		}
		if (q->ntodo > 0) {
			j = q->todo[0];
			memmove(&q->todo[0], &q->todo[1], (size_t)(q->ntodo - 1) * sizeof(q->todo[0]));
			q->ntodo--;
			q->running = j;
			q->run_t = pq_now();
		}
		dirty = q->safety_dirty;
		sf = q->safety;
		q->safety_dirty = false;
		if (!j)
			pthread_cond_broadcast(&q->idle_cv);
		pthread_mutex_unlock(&q->mu);
		if (dirty && !q->closed && q->p.ops->set_safety)
			q->p.ops->set_safety(&q->p, &sf);
		if (!j) {
			pq_idle_wait(q, &next_ka, &quiet);
			continue;
		}
		if (q->closed) {
			j->rc = ll_err_set(&j->err, -ENOTCONN, "%s: session closed", q->info.label);
			j->lost = true;
		} else {
			pq_run(q, j);
		}
		lost = j->lost;       /* j is the taker's once posted */
		pthread_mutex_lock(&q->mu);
		q->running = NULL;
		pq_post(q, j);
		pthread_mutex_unlock(&q->mu);
		if (lost)
			pq_close_peer(q, true);
		next_ka = pq_now() + 5;
	}
	pthread_mutex_lock(&q->mu);
	left = q->ntodo > 0 || q->abandon_close;
	pthread_mutex_unlock(&q->mu);
	pq_close_peer(q, left);
	return NULL;
}

int peerq_new(struct peerq **out, const struct peer *p,
	      const struct peer_safety *base, bool threaded, struct ll_err *err)
{
	struct peerq *q = calloc(1, sizeof(*q));
	int rc;

	*out = NULL;
	if (!q)
		return ll_err_set(err, -ENOMEM, "peer queue: out of memory");
	q->p = *p;
	q->info = *p;
	q->info.ops = NULL;
	q->info.priv = NULL;
	q->evfd = -1;
	q->wake[0] = q->wake[1] = -1;
	if (base) {
		q->safety = *base;
		if (p->ops->set_safety)
			q->p.ops->set_safety(&q->p, base);
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->idle_cv, NULL);
	q->threaded = false;
	if (threaded) {
		rc = peerq_start(q, err);
		if (rc < 0) {
			pthread_mutex_destroy(&q->mu);
			pthread_cond_destroy(&q->idle_cv);
			free(q);
			return rc;
		}
	}
	*out = q;
	return 0;
}

unsigned peerq_submit(struct peerq *q, struct peerq_job *j)
{
	unsigned id;

	if (!j)
		return 0;
	pthread_mutex_lock(&q->mu);
	if (q->lost || q->closed || q->ntodo >= PEERQ_MAX) {
		pthread_mutex_unlock(&q->mu);
		free(j);
		return 0;
	}
	id = ++q->next_id;
	j->id = id;
	if (!q->threaded) {
		q->running = j;
		q->run_t = pq_now();
		pthread_mutex_unlock(&q->mu);
		pq_run(q, j);
		pthread_mutex_lock(&q->mu);
		q->running = NULL;
		pq_post(q, j);
		pthread_mutex_unlock(&q->mu);
		return id;
	}
	q->todo[q->ntodo++] = j;
	pthread_mutex_unlock(&q->mu);
	if (write(q->wake[1], "j", 1) < 0) {
		/* pipe full: the worker is awake anyway */
	}
	return id;
}

struct peerq_job *peerq_take(struct peerq *q)
{
	struct peerq_job *j = NULL;
	uint64_t v;

	pthread_mutex_lock(&q->mu);
	if (q->ndone > 0) {
		j = q->done[0];
		memmove(&q->done[0], &q->done[1], (size_t)(q->ndone - 1) * sizeof(q->done[0]));
		q->ndone--;
	}
	if (q->ndone == 0 && q->evfd >= 0 && read(q->evfd, &v, sizeof(v)) < 0) {
		/* nothing to clear */
	}
	pthread_mutex_unlock(&q->mu);
	return j;
}

int peerq_fd(const struct peerq *q)
{
	return q ? q->evfd : -1;
}

long peerq_busy_ms(struct peerq *q, char *what, size_t len)
{
	long ms = -1;

	pthread_mutex_lock(&q->mu);
	if (q->running) {
		ms = (long)((pq_now() - q->run_t) * 1000);
		if (what && len)
			snprintf(what, len, "%s", pq_names[q->running->kind]);
	}
	pthread_mutex_unlock(&q->mu);
	return ms;
}

int peerq_pending(struct peerq *q)
{
	int n;

	pthread_mutex_lock(&q->mu);
	n = q->ntodo + (q->running ? 1 : 0);
	pthread_mutex_unlock(&q->mu);
	return n;
}

bool peerq_wait_idle(struct peerq *q, int timeout_ms)
{
	struct timespec ts;
	bool idle;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&q->mu);
	while (q->threaded && (q->ntodo > 0 || q->running))
		if (pthread_cond_timedwait(&q->idle_cv, &q->mu, &ts) == ETIMEDOUT)
			break;
	idle = q->ntodo == 0 && !q->running;
	pthread_mutex_unlock(&q->mu);
	return idle;
}

int peerq_start(struct peerq *q, struct ll_err *err)
{
	int rc;

	if (q->threaded)
		return 0;
	q->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->evfd < 0 || pipe2(q->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
		rc = -errno;
		goto fail;
	}
	q->threaded = true;
	rc = -pthread_create(&q->th, NULL, pq_worker, q);
	if (rc < 0) {
		q->threaded = false;
		goto fail;
	}
	q->th_started = true;
	return 0;
fail:
	if (q->evfd >= 0)
		close(q->evfd);
	if (q->wake[0] >= 0) {
		close(q->wake[0]);
		close(q->wake[1]);
	}
	q->evfd = q->wake[0] = q->wake[1] = -1;
	return ll_err_set(err, rc, "peer queue: %s", strerror(-rc));
}

const struct peer *peerq_peer_info(const struct peerq *q)
{
	return &q->info;
}

const struct peer_ops *peerq_ops(const struct peerq *q)
{
	return q->p.ops;
}

void peerq_set_safety(struct peerq *q, const struct peer_safety *s)
{
	pthread_mutex_lock(&q->mu);
	q->safety = *s;
	q->safety_dirty = true;
	pthread_mutex_unlock(&q->mu);
	if (!q->threaded && !q->closed && q->p.ops->set_safety) {
		q->p.ops->set_safety(&q->p, s);
		q->safety_dirty = false;
	}
}

void peerq_abandon_at_close(struct peerq *q)
{
	pthread_mutex_lock(&q->mu);
	q->abandon_close = true;
	pthread_mutex_unlock(&q->mu);
}

bool peerq_lost(struct peerq *q)
{
	bool l;

	pthread_mutex_lock(&q->mu);
	l = q->lost;
	pthread_mutex_unlock(&q->mu);
	return l;
}

void peerq_free(struct peerq *q, int wait_ms)
{
	int i;

	if (!q)
		return;
	if (q->th_started) {
		struct timespec ts;

		pthread_mutex_lock(&q->mu);
		q->stop = true;
		pthread_mutex_unlock(&q->mu);
		if (write(q->wake[1], "s", 1) < 0) {
			/* pipe full: the worker is awake anyway */
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += wait_ms / 1000;
		ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_timedjoin_np(q->th, NULL, &ts) != 0) {
			/* still inside a bounded command: let it finish alone
			 * (it owns q from here; the process is ending) */
			pthread_detach(q->th);
			return;
		}
		close(q->evfd);
		close(q->wake[0]);
		close(q->wake[1]);
	} else {
		pq_close_peer(q, q->abandon_close);
	}
	for (i = 0; i < q->ntodo; i++)
		free(q->todo[i]);
	for (i = 0; i < q->ndone; i++)
		free(q->done[i]);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->idle_cv);
	free(q);
}
