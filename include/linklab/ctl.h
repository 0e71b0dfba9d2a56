/* SPDX-License-Identifier: MIT */
/* ctl.h - the console's controller: owns the two peers (struct peerset), the
 * dial being edited, what each kernel holds now (read back after every
 * change, never what was asked), the link lists, the running test with its
 * interval history, and the status/error text. The screens read a snapshot
 * (struct ctl_view) and hand back intents (struct ctl_intent); the main loop
 * passes those to ctl_do(). Never includes curses, never prints, never exits.
 */
#ifndef LINKLAB_CTL_H
#define LINKLAB_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/err.h"
#include "linklab/impair.h"
#include "linklab/peer.h"
#include "linklab/peerset.h"
#include "linklab/test.h"

/* Sides, as a bit mask for apply/clear. */
enum ctl_side {
	CTL_A = 1u << 0,        /* this host (netlink) */
	CTL_B = 1u << 1,        /* the peer (SSH) */
	CTL_BOTH = CTL_A | CTL_B,
};

/* Index of a side in ctl_view.side[]: 0 = A, 1 = B. */
#define CTL_IDX_A 0
#define CTL_IDX_B 1

enum ctl_test_state {
	CTL_TEST_IDLE,          /* never started */
	CTL_TEST_STARTING,      /* server asked, client connecting */
	CTL_TEST_RUNNING,       /* connected, intervals arriving */
	CTL_TEST_DONE,          /* summary valid */
	CTL_TEST_FAILED,        /* test.err says why; partial results kept */
};

/* Number of SUM samples kept (one per interval; older ones are dropped). */
#define CTL_HISTORY 512

/* What one side looks like now. */
struct ctl_side_view {
	bool present;                 /* peer open (B only with --peer) */
	char label[64];               /* "A (this host)", "B (peer-b)" */
	struct link_list links;       /* last list_links result */
	int sel;                      /* index into links.l, -1 if none */
	char dev[IF_NAMESIZE];        /* selected interface name */
	char route_dev[IF_NAMESIZE];  /* preselected: routes to the other peer */
	bool qd_valid;                /* qd holds a successful read-back */
	struct qdisc_state qd;        /* what the kernel holds on dev now */
	struct impair held;           /* qd folded into dial terms */
	char held_text[256];          /* qdisc_state_summary(qd) */
	char err[LL_ERR_MAX];         /* last error on this side, "" if none */
};

/* The test as the screens see it. */
struct ctl_test_view {
	enum ctl_test_state state;
	struct test_opts opts;        /* what was started */
	int nintervals;               /* intervals received so far */
	struct test_interval last;    /* the latest interval (valid if > 0) */
	int nhist;                    /* SUM samples in hist[] (<= CTL_HISTORY) */
	struct test_stream_sample hist[CTL_HISTORY];  /* oldest first */
	double max_stream_bps;        /* max per-stream bit/s seen */
	double max_sum_bps;           /* max SUM bit/s seen */
	double scale_bps;             /* bar full scale: held tbf rate on the
					 sending side, else max SUM seen */
	bool scale_dialled;           /* scale_bps is the held tbf rate */
	bool have_summary;
	struct test_summary summary;  /* valid when have_summary */
	char err[LL_ERR_MAX];
};

struct ctl_view {
	struct ctl_side_view side[2]; /* [CTL_IDX_A], [CTL_IDX_B] */
	struct impair dial;           /* the dial being edited */
	unsigned dial_sides;          /* enum ctl_side target of the dial */
	struct ctl_test_view test;
	bool is_root;                 /* euid 0: apply possible on A */
	char session[160];            /* "peer-b via ssh (10.0.0.2)" or
					 "no peer, test target ADDR" */
	char status[256];             /* last thing that happened */
	char error[LL_ERR_MAX];       /* last error, "" if none */
};

/* A test request from the test screen. */
struct ctl_test_req {
	int streams;                  /* 1..128 (iperf3 -P) */
	double duration;              /* seconds, 1..86400 (-t) */
	double interval;              /* seconds, 0.1..60 (-i) */
	bool reverse;                 /* -R: B sends to A */
};

enum ctl_intent_kind {
	CI_NONE,
	CI_APPLY,       /* dial + sides */
	CI_CLEAR,       /* sides */
	CI_REFRESH,     /* re-list links, re-read qdiscs */
	CI_SELECT,      /* side (CTL_IDX_*) + index into its links */
	CI_SET_DIAL,    /* dial + sides: keep the edited dial, no apply */
	CI_TEST_START,  /* test */
	CI_TEST_STOP,
	CI_QUIT,        /* restore both peers, stop server and test */
};

struct ctl_intent {
	enum ctl_intent_kind kind;
	unsigned sides;               /* enum ctl_side mask */
	int side;                     /* CTL_IDX_A / CTL_IDX_B (CI_SELECT) */
	int index;                    /* link index (CI_SELECT) */
	struct impair dial;
	struct ctl_test_req test;
};

struct ctl;

/* Create the controller on an opened peerset. Takes ownership of ps's
 * contents (copied; the caller's struct must not be closed afterwards).
 * target: test address when there is no peer B ("-c ADDR"), may be NULL.
 * port: server port for -c targets (0 = 5201). Lists links and reads back
 * both sides once; failures there are kept as side errors, not returned.
 * Returns 0, or -ENOMEM. */
int ctl_new(struct ctl **out, const struct peerset *ps, const char *target,
	    int port, struct ll_err *err);

/* The snapshot the screens draw from; valid until the next ctl_* call. */
const struct ctl_view *ctl_view(const struct ctl *c);

/* Carry out one intent. Returns 0 or a negative code; the error text is in
 * err and in the view's error line. CI_QUIT behaves as ctl_quit(). */
int ctl_do(struct ctl *c, const struct ctl_intent *in, struct ll_err *err);

/* Apply dial d on the selected interface of each side in sides (a mask of
 * enum ctl_side), then read back. Validates first (impair_validate: every
 * problem joined in err, -EINVAL). Side A without root: -EPERM "needs
 * root". Sides not open are skipped. An empty dial means clear. */
int ctl_apply(struct ctl *c, const struct impair *d, unsigned sides,
	      struct ll_err *err);

/* Restore the original qdisc (peer ops clear) on the selected interface of
 * each side in sides, then read back. */
int ctl_clear(struct ctl *c, unsigned sides, struct ll_err *err);

/* Re-list both peers' links and re-read the selected interfaces' qdiscs. */
int ctl_refresh(struct ctl *c, struct ll_err *err);

/* Select interface index idx (into view side[side].links) on side
 * CTL_IDX_A or CTL_IDX_B and read its qdiscs back. -EINVAL if out of
 * range. */
int ctl_select(struct ctl *c, int side, int idx, struct ll_err *err);

/* Start a test: with peer B, start its server (b.ops->server_start) and
 * connect to peerset.addr_b:port; without, connect to the -c target.
 * -EBUSY if one runs, -EINVAL on bad request (test_opts_validate text),
 * -EDESTADDRREQ if there is no peer and no target. */
int ctl_test_start(struct ctl *c, const struct ctl_test_req *r,
		   struct ll_err *err);

/* The running test's event fd, -1 when none (poll it for POLLIN). */
int ctl_test_fd(const struct ctl *c);

/* Drain the test's queued events into the view. Returns 1 if the view
 * changed, 0 if not. Stops B's server when the test ends or fails. */
int ctl_test_pump(struct ctl *c);

/* Ask the running test to end now (results so far are kept). */
void ctl_test_stop(struct ctl *c);

/* Quit: stop the test, restore (ops->clear) every interface linklab changed
 * on both sides, stop B's server. summary gets one line ("restored A
 * veth-a, B veth-b" / "nothing to restore"). Returns 0 or the first error
 * (every restore is still attempted). Idempotent. */
int ctl_quit(struct ctl *c, char *summary, size_t len, struct ll_err *err);

/* Free everything and close the peers (call ctl_quit first to restore). */
void ctl_free(struct ctl *c);

#endif
