/* SPDX-License-Identifier: MIT */
/* console_int.h - the console controller's state, shared by its files
 * (src/console/console*.c); not a public header. */
#ifndef LINKLAB_CONSOLE_INT_H
#define LINKLAB_CONSOLE_INT_H

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "linklab/base/units.h"
#include "linklab/console/ctl.h"
#include "linklab/console/console_dial.h"
#include "linklab/console/console_middle.h"
#include "linklab/console/console_peer.h"
#include "linklab/console/console_profile.h"
#include "linklab/console/console_safety.h"
#include "linklab/console/console_test.h"
#include "linklab/console/console_verify.h"
#include "linklab/console/middle.h"
#include "linklab/console/owner.h"
#include "linklab/peer/enghook.h"
#include "linklab/peer/hosttune.h"
#include "linklab/peer/peerq.h"
#include "linklab/traffic/csvout.h"
#include "linklab/traffic/plot.h"

#define CTL_MAX_CHANGED 16

struct ctl_changed {
	int n;
	char dev[CTL_MAX_CHANGED][IF_NAMESIZE];
	/* what the interface held (read back) before the console first
	 * changed it; empty = a kernel default, restored by clear */
	struct impair before[CTL_MAX_CHANGED];
};

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
/* the quit summary's sentence for a middle box whose session was lost */
#define CTL_MIDDLE_LOST_QUIT "middle box lost: the bridge's lease restores its dials (now, or when the middle host answers again)"
/* ... and for a bridge the console started (--bridge) */
#define CTL_MIDDLE_LOST_QUIT_STARTED "middle box lost: the bridge it started stops when its lease ends (now, or when the middle host answers again)"

/* shared between the controller's files */
/* console.c */
/* snprintf into a fixed field; truncation of long texts is intended. */
void ctl_fmt(char *dst, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ctl_mark_lost(struct ctl *c, const char *why);
double ctl_now(void);
struct peer *ctl_peer(struct ctl *c, int i);
int ctl_revert_s(const struct ctl *c);

/* console_dial.c */
void ctl_change_b_done(struct ctl *c, struct peerq_job *j);
void ctl_derive(struct ctl *c);
double ctl_interval_rtt(const struct test_interval *iv);
void ctl_join_err(struct ll_err *err, int code, const char *side,
		  const char *msg);
void ctl_mark_changed(struct ctl *c, int i, const char *dev,
		      const struct impair *before);
void ctl_prior_take(const struct ctl *c, int i, struct ctl_prior *pr);
int ctl_rollback(struct ctl *c, int i, const struct ctl_prior *pr,
		 char *note, size_t len);
int ctl_side_fail(struct ctl *c, int i, const struct ll_err *e);
const char *ctl_side_name(int i);
void ctl_sync_link_qdisc(struct ctl_side_view *s);

/* console_middle.c */
void ctl_middle_quit(struct ctl *c, char *part, size_t len, bool *lost);
int ctl_middle_set2(struct ctl *c, const struct impair *ab,
		    const struct impair *ba, struct ll_err *err);

/* console_peer.c */
void ctl_b_handle(struct ctl *c, struct peerq_job *j);
void ctl_b_lost(struct ctl *c, const struct peerq_job *j);
int ctl_b_result(struct ctl *c, struct ll_err *err);
unsigned ctl_b_submit(struct ctl *c, struct peerq_job *j);
int ctl_read_back(struct ctl *c, int i, struct ll_err *err);
int ctl_read_back_tag(struct ctl *c, int i, int tag, struct ll_err *err);
int ctl_read_done(struct ctl *c, int i, int rc, const struct qdisc_state *qd,
		  struct ll_err *e, struct ll_err *err);
int ctl_timeout_s(const struct ctl *c);

/* console_safety.c */
void ctl_owner_release(struct ctl *c, bool clean);
void ctl_sysctl_done(struct ctl *c, struct peerq_job *j);

/* console_test.c */
void ctl_server_stop(struct ctl *c);
void ctl_test_end(struct ctl *c);
void ctl_test_server_done(struct ctl *c, struct peerq_job *j);

#endif
