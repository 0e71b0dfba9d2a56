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
#include "linklab/console/console.h"
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

#define CONSOLE_MAX_CHANGED 16

struct console_changed {
	int n;
	char dev[CONSOLE_MAX_CHANGED][IF_NAMESIZE];
	/* what the interface held (read back) before the console first
	 * changed it; empty = a kernel default, restored by clear */
	struct impair before[CONSOLE_MAX_CHANGED];
};

/* What side i held before a change of both sides, to put it back when the
 * other side fails (all or nothing). */
struct console_prior {
	bool valid;                   /* held is a read-back */
	struct impair held;           /* what the kernel held, in dial terms */
	char dev[IF_NAMESIZE];
};

struct console {
	struct peerset ps;
	char target[256];             /* -c ADDR ("" = none) */
	int port;                     /* port for -c targets */
	struct client *test;            /* running test or NULL */
	bool server_up;               /* B's server started by us */
	bool quit_done;
	struct console_changed changed[2];
	struct owner own;             /* the hold on A's interfaces and B */
	bool quit_ok;                 /* console_quit restored everything */
	bool quit_b_left;             /* ... but B restores itself */
	bool unarmed_asked;           /* view.confirm asks about an apply
				       * without B's revert timer */
	struct console_view v;
	/* the test run and the profiles */
	struct client_interval *ivs;    /* the run's intervals (<= CONSOLE_HISTORY) */
	int nivs, capivs;
	struct console_profile *prof;
	uint64_t prev_bytes[2];       /* root qdisc bytes at prev_t[] */
	double prev_t[2];             /* monotonic seconds, 0 = none */
	double tick_t;                /* last console_tick */
	uint64_t local_window;        /* hostinfo_local_window() at start */
	struct console_path rtt_path;     /* the path dialled when v.test.rtt_s
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
	struct impair mid_redo[2];    /* the dials a bridge this console
				       * started held when it stopped: set
				       * again once it is started again */
	bool mid_redo_valid;
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
	 * threaded (console_set_async) the results come back later through
	 * console_peer_pump, inline they are handled before the call returns */
	struct peerq *bq;             /* NULL without B */
	bool b_async;
	struct peer_sshflow bflow;        /* B's control session (sshflow) */
	bool bflow_known;
	bool b_force_next;            /* the next B apply forces (y to 100 %) */
	bool b_unarmed_next;          /* the next B apply goes without a revert
				       * timer (y to "none could be armed") */
	bool b_ask_next;              /* the next B apply asks on -ENOLCK */
	bool b_roll_next;             /* the next B apply rolls A back to
				       * b_prior_next if it fails */
	struct console_prior b_prior_next;
	char b_prof_next[64];
	struct console_bchg {             /* B changes waiting for their result */
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
		struct console_prior prior;
		char prof[64];        /* the profile applied ("" = a dial) */
		bool ask_unarmed;     /* -ENOLCK from B: ask y/n (view.confirm) */
	} chg[8];
	struct ll_err chg_acc[8];     /* A's errors for each chg[] */
	unsigned chg_last;            /* the change submitted last, 0 = done */
	int b_last_rc;                /* the last B job's result (inline) */
	struct ll_err b_last_err;
	struct client_opts test_wait;   /* a test waiting for B's server */
	bool test_waiting;
	int cancel_fd[2];             /* quit stops waiting for B on these */
	int ncancel;
};

#define CONSOLE_CHG_SUBMITTING 0xffffffffu

/* job tags (peerq_job.tag) */
enum { CONSOLE_TAG_NONE, CONSOLE_TAG_TICK, CONSOLE_TAG_QUIT };

#define CONSOLE_MIDDLE_RETRY_S 3.0
#define CONSOLE_MIDDLE_PERIOD_S 1.0
/* the quit summary's sentence for a middle box whose session was lost */
#define CONSOLE_MIDDLE_LOST_QUIT "middle box lost: the bridge's lease restores its dials (now, or when the middle host answers again)"
/* ... and for a bridge the console started (--bridge) */
#define CONSOLE_MIDDLE_LOST_QUIT_STARTED "middle box lost: the bridge it started stops when its lease ends (now, or when the middle host answers again)"

/* shared between the controller's files */
/* console.c */
/* snprintf into a fixed field; truncation of long texts is intended. */
void console_fmt(char *dst, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void console_mark_lost(struct console *c, const char *why);
double console_now(void);
struct peer *console_peer(struct console *c, int i);
int console_revert_s(const struct console *c);

/* console_dial.c */
void console_change_b_done(struct console *c, struct peerq_job *j);
void console_derive(struct console *c);
double console_interval_rtt(const struct client_interval *iv);
void console_join_err(struct ll_err *err, int code, const char *side,
		      const char *msg);
void console_mark_changed(struct console *c, int i, const char *dev,
			  const struct impair *before);
void console_prior_take(const struct console *c, int i, struct console_prior *pr);
int console_rollback(struct console *c, int i, const struct console_prior *pr,
		     char *note, size_t len);
int console_side_fail(struct console *c, int i, const struct ll_err *e);
const char *console_side_name(int i);
void console_sync_link_qdisc(struct console_side_view *s);

/* console_middle.c */
void console_middle_quit(struct console *c, char *part, size_t len, bool *lost);
int console_middle_set2(struct console *c, const struct impair *ab,
			const struct impair *ba, struct ll_err *err);

/* console_peer.c */
void console_b_handle(struct console *c, struct peerq_job *j);
void console_b_lost(struct console *c, const struct peerq_job *j);
int console_b_result(struct console *c, struct ll_err *err);
unsigned console_b_submit(struct console *c, struct peerq_job *j);
int console_read_back(struct console *c, int i, struct ll_err *err);
int console_read_back_tag(struct console *c, int i, int tag, struct ll_err *err);
int console_read_done(struct console *c, int i, int rc, const struct qdisc_state *qd,
		      struct ll_err *e, struct ll_err *err);
int console_timeout_s(const struct console *c);

/* console_safety.c */
void console_owner_release(struct console *c, bool clean);
void console_sysctl_done(struct console *c, struct peerq_job *j);

/* console_test.c */
void console_server_stop(struct console *c);
void console_test_end(struct console *c);
/* the dials a run starts under (each side's read-back), and a read-back of
 * side i during the run checked against them (test.dial_note) */
void console_test_dial_start(struct console *c);
void console_test_dial_check(struct console *c, int i);
/* what changed under a running test (the first note only, after how far
 * into the run it came): the test screen and the saved results say it */
void console_test_note(struct console *c, const char *what);
void console_test_server_done(struct console *c, struct peerq_job *j);

#endif
