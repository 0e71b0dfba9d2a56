/* SPDX-License-Identifier: MIT */
/* peerq.h - a request queue in front of one peer, for a loop that must never
 * wait on it (the console and a remote peer whose sshd may stop answering).
 * Threaded, one worker thread owns the peer (a libssh2 session is used from
 * one thread only) and runs the queued jobs in order; each finished job is
 * posted back and an eventfd (peerq_fd) becomes readable. While idle the
 * worker keeps the session alive (ops->session->keepalive, on the session socket's
 * POLLIN and when due). Inline (threaded = false), peerq_submit runs the job
 * at once on the caller's thread: the same jobs and results, for tests and
 * for callers that may wait. Every remote command is bounded by the peer's
 * own timeout (peer_safety.timeout_s), so a job ends within about that bound
 * even when the peer is stopped. Engine rules: never prints, never exits. */
#ifndef LINKLAB_PEERQ_H
#define LINKLAB_PEERQ_H

#include <stdbool.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"
#include "linklab/model/link.h"
#include "linklab/model/qdisc.h"
#include "linklab/peer/enghook.h"
#include "linklab/peer/hosttune.h"
#include "linklab/peer/peer.h"

enum peerq_kind {
	PQ_LIST,          /* list_links, then sysctl_get (if the backend has it) */
	PQ_READ,          /* read_qdiscs(dev) */
	PQ_APPLY,         /* apply(dev, dial) [+ read_qdiscs(dev) if readback] */
	PQ_CLEAR,         /* clear(dev) [+ read_qdiscs(dev) if readback] */
	PQ_SSHFLOW,      /* sshflow */
	PQ_SERVER_START,  /* server_start: port */
	PQ_SERVER_STOP,   /* server_stop */
	PQ_SYSCTL_SET,    /* sysctl_set(name, value) */
	PQ_TUNE_RESTORE,  /* tune_restore */
	PQ_KEEPALIVE,     /* posted by the worker when a keepalive failed */
	PQ_LOCK_RELEASE,  /* lock_release(remove): end the console's hold */
};

/* One request and, once done, its result. */
struct peerq_job {
	enum peerq_kind kind;
	unsigned id;                  /* set by peerq_submit (1, 2, ...) */
	int tag;                      /* the caller's, returned as given */
	char dev[IF_NAMESIZE];
	struct impair dial;           /* PQ_APPLY (restore_to: what dev held) */
	bool restore_to;              /* PQ_APPLY: peer_restore_to(dev, dial)
				       * instead: put dev back as it was */
	bool readback;                /* PQ_APPLY/PQ_CLEAR: read dev back */
	bool force;                   /* PQ_APPLY: peer_safety.force for this
				       * apply only */
	bool unarmed_ok;              /* PQ_APPLY: peer_safety.unarmed_ok for
				       * this apply only (apply without a
				       * revert timer) */
	bool lock_note;               /* PQ_APPLY: lock_note(dev) once the
				       * apply succeeded (the hold records it) */
	bool remove;                  /* PQ_LOCK_RELEASE: drop the record */
	char name[64], value[192];    /* PQ_SYSCTL_SET */
	/* --- results --- */
	int rc;                       /* the operation: 0 or -errno */
	struct ll_err err;
	bool lost;                    /* the session is gone (timeout, or a
				       * session error that a keepalive
				       * confirmed): nothing more will run */
	int rb_rc;                    /* read-back (PQ_APPLY/CLEAR/READ) */
	struct ll_err rb_err;
	struct qdisc_state qd;        /* PQ_READ, read-back */
	int eng_rc;                   /* with the read-back: 0 when linklab's
	                               * endpoint engine holds dev's dial */
	struct enghook_info eng;
	struct link_list links;       /* PQ_LIST */
	bool have_sys;                /* PQ_LIST: sys read */
	struct sysctl_state sys;
	struct peer_sshflow sshflow;          /* PQ_SSHFLOW */
	int port;                     /* PQ_SERVER_START */
	char warning[256];            /* PQ_APPLY: ops->session->warning after it */
	double took_s;                /* how long it ran */
};

struct peerq;

/* Take over peer p (copied: the caller must not use or close p after this;
 * peerq_free closes it). base: its safety settings (timeout, revert, hold),
 * set on the peer before the first job. 0 or -ENOMEM / -errno (thread,
 * eventfd). */
int peerq_new(struct peerq **out, const struct peer *p,
	      const struct peer_safety *base, bool threaded, struct ll_err *err);

/* Switch an inline queue to threaded (the worker takes the peer over from
 * now on: the caller must not touch it any more). 0 or -errno. */
int peerq_start(struct peerq *q, struct ll_err *err);

/* A job to fill in (zeroed, kind set); NULL on out of memory. */
struct peerq_job *peerq_job_new(enum peerq_kind kind);

/* Queue j (ownership passes to q). Inline: runs it now. Returns its id, or
 * 0 when the peer is gone (j is then freed). */
unsigned peerq_submit(struct peerq *q, struct peerq_job *j);

/* A finished job (the caller frees it with free()), oldest first; NULL when
 * none waits. Never blocks. */
struct peerq_job *peerq_take(struct peerq *q);

/* Readable (POLLIN) while finished jobs wait to be taken; -1 inline. */
int peerq_fd(const struct peerq *q);

/* Milliseconds the running job has run so far, -1 when none runs; what
 * (if given) gets its kind's name ("apply", "read qdiscs", ...). */
long peerq_busy_ms(struct peerq *q, char *what, size_t len);

/* Jobs queued or running (finished ones not counted). */
int peerq_pending(struct peerq *q);

/* Wait until no job is queued or running, at most timeout_ms. true when
 * idle. */
bool peerq_wait_idle(struct peerq *q, int timeout_ms);

/* The peer's label and host (copied at peerq_new; safe from any thread). */
const struct peer *peerq_peer_info(const struct peerq *q);

/* The backend's name ("ssh"); has it this op? (checked on the copy taken at
 * peerq_new, for callers deciding what to queue) */
const struct peer_ops *peerq_ops(const struct peerq *q);

/* New baseline safety for the following jobs. */
void peerq_set_safety(struct peerq *q, const struct peer_safety *s);

/* When q is freed, abandon the peer (ops->session->abandon) even if no job
 * is left unrun: the caller knows the peer holds a change it did not undo
 * (a restore failed or was not waited for, an apply finished after the
 * restores were queued), so the peer's hold guard must restore it. */
void peerq_abandon_at_close(struct peerq *q);

/* The session is gone (a job came back lost): later submits are refused. */
bool peerq_lost(struct peerq *q);

/* Stop the worker (the running job ends within its bound; waited for at
 * most wait_ms, else the worker is left to finish alone and q is not
 * freed), close the peer, free q. Jobs still queued are not run: the peer
 * is then abandoned (ops->session->abandon), not closed, so its hold guard
 * restores what those jobs would have. NULL is a no-op. */
void peerq_free(struct peerq *q, int wait_ms);

#endif
