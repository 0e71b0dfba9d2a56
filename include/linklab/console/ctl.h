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

#include "linklab/base/err.h"
#include "linklab/model/impair.h"
#include "linklab/console/middle.h"
#include "linklab/console/verify_job.h"
#include "linklab/peer/peer.h"
#include "linklab/peer/peerset.h"
#include "linklab/model/profile.h"
#include "linklab/traffic/test.h"
#include "linklab/model/theory.h"

/* Sides, as a bit mask for apply/clear. */
enum ctl_side {
	CTL_A = 1u << 0,        /* this host (netlink) */
	CTL_B = 1u << 1,        /* the peer (SSH) */
	CTL_BOTH = CTL_A | CTL_B,
	/* added for the middle box (--middle): the bridge's directions */
	CTL_M_AB = 1u << 2,     /* bridge A->B (enters IF_A, leaves IF_B) */
	CTL_M_BA = 1u << 3,     /* bridge B->A */
	CTL_M_BOTH = CTL_M_AB | CTL_M_BA,
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
	/* live counters (ctl_tick): root qdisc bytes sent per second x 8
	 * between the last two reads, bit/s; < 0 = unknown yet */
	double tx_bps;
	/* the receive window one TCP socket can get on this side, bytes:
	 * tcp_rmem max less its 1/2^tcp_adv_win_scale share (the kernel's
	 * tcp_win_from_space), read with ops->tune->sysctl_get; 0 = unknown */
	uint64_t rcv_window;
};

/* The path A -> B as dialled: each side's egress read back (A's egress
 * carries A->B data, B's egress B->A data and A's ACKs). */
struct ctl_path {
	bool valid;                   /* at least one side read back */
	uint64_t rate_ab, rate_ba;    /* bit/s, 0 = not shaped */
	int64_t delay_ab, delay_ba;   /* ns one-way (netem delay) */
	double loss_ab, loss_ba;      /* probability 0..1 */
	int64_t rtt_added;            /* ns: delay_ab + delay_ba */
	double loss_rt;               /* 1 - (1 - loss_ab)(1 - loss_ba): a
				       * round trip (data + its ACK) loses */
	char line[256];               /* "A->B 50mbit/50ms/1% | B->A
				       * unshaped/50ms/1% | RTT +100ms, loss
				       * 1.99%" */
};

/* Fold two egress dials (a: A's, b: B's; either may be NULL = nothing)
 * into a path. Pure; for the screens and tests. */
void ctl_path_compute(const struct impair *a, const struct impair *b,
		      struct ctl_path *out);

/* The same with the middle box's dials in the path: mab is what the bridge
 * does to A->B, mba to B->A (NULL = no bridge). Per direction the rates
 * give the lowest, the delays add up and the losses combine as
 * 1 - (1 - p1)(1 - p2); the line ends in " (bridge included)" when a
 * bridge dial was given. With mab = mba = NULL it is ctl_path_compute. */
void ctl_path_compute_mid(const struct impair *a, const struct impair *b,
			  const struct impair *mab, const struct impair *mba,
			  struct ctl_path *out);

/* One bridge direction as the middle section shows it. */
struct ctl_middle_dir {
	char dial[256];               /* the bridge's dial text ("" = none) */
	struct impair fields;         /* its fields (seed for the editor) */
	double rx_bps, tx_bps;        /* bit/s from the rx/tx byte counters
				       * between the last two reads; < 0 =
				       * unknown yet */
	uint64_t rx_packets, tx_packets;
	uint64_t lost, duplicated, corrupted, reordered, drops;
};

/* The middle box (--middle HOST running `linklab bridge`). */
struct ctl_middle_view {
	bool present;                 /* --middle given */
	bool attached;                /* the lease is held, the rest valid */
	bool lost;                    /* the SSH session to it is gone */
	int stall_s;                  /* > 0: its get has had no reply for
				       * this many s (>= MIDDLE_SLOW_MS / 1000;
				       * "not answering"), the counters are
				       * that old; 0 = answering */
	char label[64];               /* "M (middle)" */
	char host[160];               /* user@host:port of the session */
	char engine[16];              /* "user" | "kernel" */
	char engine_asked[8];         /* --bridge: "auto" | "kernel" | "user"
				       * (the console started the bridge and
				       * stops it at quit); "" = attached */
	char if_a[IF_NAMESIZE], if_b[IF_NAMESIZE];
	long pid;                     /* the bridge process on the middle */
	struct ctl_middle_dir dir[2]; /* [MIDDLE_AB], [MIDDLE_BA] */
	char err[LL_ERR_MAX];         /* why not attached / last failure
				       * ("no linklab bridge runs ...; retry
				       * in 3 s", "middle lost: ...") */
	char set_err[LL_ERR_MAX];     /* the bridge's errors for the last
				       * apply/clear, "" when it took */
	bool changed;                 /* the console changed the bridge's
				       * dial (quit puts it back) */
};

/* One profile as the profiles screen lists it. */
struct ctl_profile {
	char name[64];                /* file name without .ini */
	char path[PATH_MAX];
	bool user;                    /* from a user directory (writable) */
	bool valid;                   /* loaded without errors */
	char title[64];               /* [profile] name */
	char description[256];
	int nproblems;                /* problems[] used (errors, warnings) */
	char problems[4][LL_DIAG_LEN];/* "FILE:LINE: message" */
	bool per_side;
	struct impair a, b;           /* dials for A's and B's egress */
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
	/* the display of a running test */
	bool paused;                  /* display frozen: last/hist keep the
				       * values at pause; intervals still kept
				       * for the saved results */
	double rtt_s;                 /* mean sender TCP RTT of the last
				       * interval, seconds; 0 = unknown */
	double rtt_min_s, rtt_max_s;  /* over the run's intervals so far */
	char saved_dir[PATH_MAX];     /* where the run was saved, "" if not */
	double rtt_sum_s;             /* sum and count of the intervals' */
	int rtt_n;                    /* sender RTT (the self probes) */
	/* responsiveness of the run (TCP), after draft-ietf-ippm-
	 * responsiveness-09: working RTT = (foreign + self) / 2 with foreign
	 * the UDP echo probes under load (linklab serve, at the end) and
	 * self the streams' TCP_INFO RTT; RPM = 60000 / working RTT (ms) */
	struct ctl_rpm {
		bool valid;
		bool foreign;             /* the echo probes answered */
		double idle_ms;           /* 0 = not measured (no echo) */
		double working_ms;
		double rpm;
	} rpm;
};

/* The last `linklab verify` run from the console (V on the peers screen):
 * the dial read back on both peers against what the wire did. */
struct ctl_verify_view {
	bool running;                 /* the verify child is measuring */
	double age_s;                 /* seconds since it started */
	bool have;                    /* res holds a finished run */
	bool shown;                   /* the peers screen shows the table */
	struct verify_job_result res;
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
	/* the path and its ceilings */
	struct ctl_path path;         /* A->B as held now */
	struct theory_out theory;     /* ceilings for the held dial on the
				       * sending side, the measured RTT and
				       * the window; a -b run whose streams x
				       * -b is lower is "sender-limited"
				       * (bound THEORY_NONE, expect_bps set) */
	double theory_rtt;            /* seconds used by theory: measured
				       * (test.rtt_s) if measured under the
				       * dials held now, else dialled now +
				       * theory_rtt_base */
	bool theory_rtt_measured;
	double theory_rtt_base;       /* seconds of measured base RTT in
				       * theory_rtt (smallest measured RTT
				       * less what was dialled then); 0 when
				       * measured or never measured */
	bool theory_comparable;       /* theory.expect_bps is a figure to hold
				       * a run against: a rate is dialled in
				       * the sending direction (A, B or the
				       * bridge), or -b caps the run */
	uint64_t window;              /* bytes per stream used by theory: -w,
				       * else the receiving side's rcv_window,
				       * else theory_local_window() */
	int nprofiles;                /* profiles[] (ctl_profiles_reload) */
	const struct ctl_profile *profiles;
	char profile_name[64];        /* profile last applied, "" = hand dial */
	/* peer B's session and its safety */
	bool b_lost;                  /* B's SSH session is gone: B is no
				       * longer driven; its armed revert timer
				       * (and the hold guard) restore it */
	char b_lost_msg[256];         /* "peer B lost: it restores itself
				       * within N s (...)" */
	double revert_deadline;       /* CLOCK_MONOTONIC seconds when B's
				       * armed revert fires if the running
				       * apply is never confirmed; 0 = none
				       * armed (set around B's apply, and kept
				       * when the session dies during it) */
	int revert_s;                 /* B's revert timer, seconds (30 when
				       * --revert-after is not given) */
	struct ctl_confirm {
		bool pending;         /* an apply waits for the user's y/n */
		bool need_force;      /* 100 % loss on the session's own
				       * interface: y forces it */
		char text[512];       /* the warning lines, '\n'-separated */
		struct impair dial;   /* what y applies */
		unsigned sides;
	} confirm;
	char b_warning[256];          /* B's ops->session->warning after its last
				       * apply, "" if none */
	/* added for the middle box */
	struct ctl_middle_view middle;
	struct ctl_verify_view verify;
	/* B's requests run asynchronously (ctl_set_async) */
	int b_wait_s;                 /* > 0: B's running request has waited
				       * this many seconds */
	char b_wait[96];              /* "waiting for B (3 s): apply", "" when
				       * B answers within a second */
};

/* A test request from the test screen. */
struct ctl_test_req {
	int streams;                  /* 1..128 (iperf3 -P) */
	double duration;              /* seconds, 1..86400 (-t) */
	double interval;              /* seconds, 0.1..60 (-i) */
	bool reverse;                 /* -R: B sends to A */
	/* the test's further options */
	bool udp;                     /* -u */
	uint64_t bitrate;             /* -b bit/s per stream; 0 = unlimited
				       * (UDP: 0 -> iperf3's 1 Mbit/s) */
	uint64_t window;              /* -w bytes (socket buffer); 0 = default */
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
	/* the test screen and the profiles */
	CI_TEST_PAUSE,  /* toggle the frozen display */
	CI_TEST_SAVE,   /* save the last run (chart, CSV, profile) */
	CI_PROFILES_RELOAD,
	CI_PROFILE_APPLY,   /* index + sides */
	CI_PROFILE_SAVE,    /* name: held dials of both sides as a profile */
	CI_PROFILE_RENAME,  /* index + name */
	CI_PROFILE_DELETE,  /* index */
	/* the apply waiting for y/n */
	CI_CONFIRM_CANCEL,  /* drop the apply waiting for y/n */
	CI_VERIFY,          /* run linklab verify on both peers (a child) */
	CI_VERIFY_HIDE,     /* close the verify table */
	/* CI_APPLY, CI_CLEAR and CI_PROFILE_APPLY also take CTL_M_AB /
	 * CTL_M_BA in sides: the bridge on the middle box */
};

struct ctl_intent {
	enum ctl_intent_kind kind;
	unsigned sides;               /* enum ctl_side mask */
	int side;                     /* CTL_IDX_A / CTL_IDX_B (CI_SELECT) */
	int index;                    /* link index (CI_SELECT) */
	struct impair dial;
	struct ctl_test_req test;
	char name[64];                /* profile name (save, rename) */
	/* CI_APPLY: the y/n answer and the safety overrides */
	bool confirmed;               /* the user said y to view.confirm:
				       * apply without asking again */
	bool force;                   /* allow 100 % loss on the interface
				       * carrying the SSH session */
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
 * root". Sides not open are skipped. An empty dial means clear. A dial
 * to both A and B is all or nothing: A first; A failing leaves B
 * untouched ("B: not applied (A failed: all or nothing)"); B failing -
 * when its result comes back, later when threaded - puts A back as it
 * was ("nothing applied: B failed, A rolled back (veth-a: ...)"). */
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
 * TCP with more than 16 streams writes 2 MiB / streams (>= 16 KiB) per
 * send (-l) instead of iperf3's 128 KiB, to bound the console's memory.
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
 * on both sides, stop B's server. A first (at once); B's restores go through
 * its queue and are waited for at most the command bound + 2 s (less after
 * ctl_set_quit_cancel): a B gone, or not answering by then, is left to
 * restore itself ("B lost (restores itself)" / "B not answering (restores
 * itself)"), which is not an error. summary gets one line ("restored A
 * veth-a, B veth-b" / "nothing to restore"; a lost middle box adds its own
 * sentence "middle box lost: the bridge's lease restores its dials (now,
 * or when the middle host answers again)"). Returns 0 or the first error
 * (every restore is still attempted). Idempotent. */
int ctl_quit(struct ctl *c, char *summary, size_t len, struct ll_err *err);

/* Put msg on the view's status line (a console-side note). */
void ctl_note(struct ctl *c, const char *msg);

/* Periodic work from the loop (call about once a second): re-read side
 * A's qdiscs (netlink, no blocking I/O) for the live counters, and side B's
 * too when remote is true (one SSH round trip: call it rarely). Returns 1
 * if the view changed. */
int ctl_tick(struct ctl *c, bool remote);

/* Save the last run under the results directory (csvout_new_run_dir):
 * run.svg (plot.h), intervals.csv (csvout.h), profile.ini (the dials each
 * side held, profile_write). view test.saved_dir gets the directory.
 * -ENODATA if no interval was received. Done automatically when a test
 * ends. */
int ctl_test_save(struct ctl *c, struct ll_err *err);

/* The intervals of the current/last run kept for saving (at most
 * CTL_HISTORY, oldest first); *n gets the count. */
const struct test_interval *ctl_test_intervals(const struct ctl *c, int *n);

/* The caption of the last run: dial per side, peers, test options and the
 * theory line, '\n'-separated. */
void ctl_test_caption(const struct ctl *c, char *buf, size_t len);

/* (Re)list every profile (profile_list) and load each one for preview;
 * load problems are kept per profile with file:line. */
int ctl_profiles_reload(struct ctl *c, struct ll_err *err);

/* Apply profile idx: its [a] dial to A and [b] dial to B (sides limits
 * which). An invalid profile is refused with its first problem (-EINVAL). */
int ctl_profile_apply(struct ctl *c, int idx, unsigned sides,
		      struct ll_err *err);

/* Save what both sides hold now (else the dial) as user profile NAME. */
int ctl_profile_save(struct ctl *c, const char *name, struct ll_err *err);

/* Rename / delete user profile idx (-EPERM for shipped ones). */
int ctl_profile_rename(struct ctl *c, int idx, const char *name,
		       struct ll_err *err);
int ctl_profile_delete(struct ctl *c, int idx, struct ll_err *err);

/* --- the SSH safety ops in the console --- */

/* Baseline safety of B (peer_safety: --force, --exclude-ssh,
 * --revert-after, hold) as peerset_open set it; ctl re-sets it around a
 * forced apply and puts this back after. revert_s 0 means 30 s. */
void ctl_set_safety(struct ctl *c, const struct peer_safety *s);

/* Check an apply of d to sides before doing it (peerset_ctl_check per
 * side on its selected interface). warn gets the warning lines ("" if
 * none, '\n'-separated). Returns 0, or -EPERM when 100 % loss would go on
 * the interface carrying the SSH session and force is false (err names
 * --force). Sides not open, and B when lost, are skipped. */
int ctl_apply_check(struct ctl *c, const struct impair *d, unsigned sides,
		    bool force, char *warn, size_t len, struct ll_err *err);

/* Apply as ctl_apply, first checking (ctl_apply_check) unless confirmed:
 * a warning or a refusal puts the request in view.confirm (pending) and
 * returns -EAGAIN without applying; confirmed applies it, with force
 * passed to B's safety for this apply only. After B's apply, view
 * b_warning gets ops->session->warning. While B's apply runs, view revert_deadline
 * is now + revert_s. When B could not arm its revert timer (-ENOLCK from
 * B's apply, also when that result comes back later) view.confirm asks;
 * confirmed after that question, B's job carries peer_safety.unarmed_ok
 * for that apply only. Inline, that question returns -EAGAIN. */
int ctl_apply_safe(struct ctl *c, const struct impair *d, unsigned sides,
		   bool confirmed, bool force, struct ll_err *err);

/* B's session socket for poll(), -1 when there is no B, it is lost, or
 * the backend has none. After ctl_set_async: the eventfd of B's finished
 * requests instead (POLLIN: call ctl_peer_pump; keepalives are the
 * worker's). */
int ctl_peer_fd(const struct ctl *c);

/* Keep B's session alive (ops->session->keepalive): call on POLLIN of ctl_peer_fd
 * or when *next_s seconds have passed; hup true when poll reported
 * POLLHUP/POLLRDHUP/POLLERR on it (the peer closed the connection: lost
 * without asking). *next_s gets the seconds until the next call is due
 * (0 = none needed). A failing keepalive marks B lost (view b_lost,
 * b_lost_msg, status) and returns 1 (view changed); 0 otherwise. After
 * that B is skipped by apply, clear, tick and quit. */
int ctl_keepalive(struct ctl *c, bool hup, int *next_s);

/* --- B without waiting (the console's loop) --- */

/* From now on every operation on B runs on a worker thread that owns B's
 * session (peerq.h): ctl_apply, ctl_clear, ctl_refresh, ctl_select,
 * ctl_tick, ctl_test_start, ctl_sysctl_set return at once for B (0; B's
 * result lands later: poll ctl_peer_fd and call ctl_peer_pump), and the
 * status line says "waiting for B (N s): WHAT" (view b_wait, updated by
 * ctl_peer_tick) while a request runs for more than a second. Every
 * command on B is bounded by peer_safety.timeout_s (ctl_set_safety); a
 * request that finds no answer marks B gone (view b_lost, "peer B gone: no
 * answer within N s ..."), the session is closed, and nothing more waits on
 * B: ctl_quit then restores A at once. Before this call (the default, and
 * the unit tests) B's operations run inline, their results known on
 * return. Fetches B's control-session route first (one round trip) so that
 * ctl_apply_check asks nothing of B later. 0 or -errno (thread). */
int ctl_set_async(struct ctl *c, struct ll_err *err);

/* Take B's finished requests into the view (never waits). 1 if the view
 * changed. */
int ctl_peer_pump(struct ctl *c);

/* Once a second: view b_wait for a request running longer than 1 s (and,
 * far past the bound, B marked gone). 1 if the view changed. */
int ctl_peer_tick(struct ctl *c);

/* B's requests queued or running (0 without B, or when B is gone). */
int ctl_peer_busy(const struct ctl *c);

/* ctl_quit waits for a B that has not answered yet at most the command
 * bound (+2 s); it stops waiting as soon as one of fds (up to 2, e.g. the
 * terminal and a signal pipe) is readable: B is then left to restore
 * itself ("B not answering (restores itself)"). */
void ctl_set_quit_cancel(struct ctl *c, const int *fds, int n);

/* Set sysctl name to value on side (CTL_IDX_A/B) through ops->tune->sysctl_set
 * (journalled on that peer); ctl_quit then calls ops->tune->tune_restore on
 * that side. -ENOTSUP when the backend has no sysctl_set, -ENOTCONN when B
 * is lost. */
int ctl_sysctl_set(struct ctl *c, int side, const char *name,
		   const char *value, struct ll_err *err);

/* --- added for the middle box (--middle HOST) --- */

/* Give the controller the middle box's session m (ctl takes ownership;
 * ctl_free closes it) and attach to its bridge (middle_attach; after
 * middle_set_start that STARTS the bridge, view middle.engine_asked set,
 * and quit stops it). A failure
 * to attach is kept in view middle.err (retried by ctl_middle_tick every
 * 3 s), not returned. label: "M (HOST)". */
void ctl_set_middle(struct ctl *c, struct middle *m, const char *label);

/* Periodic work for the middle (call about once a second, on every
 * screen: it also keeps the session in use): at most once a second a get
 * is sent (counters, rates) without waiting for its reply (middle_get_send;
 * the reply is taken by ctl_middle_pump), or an attach retry every 3 s when
 * no bridge runs. While a get waits, the tick pumps instead: after
 * MIDDLE_SLOW_MS without a reply view middle.stall_s counts the seconds
 * ("not answering"); after MIDDLE_LOST_MS, or when the session fails, it is
 * marked lost (view middle.lost, "middle lost: ...") and the console goes on
 * with A and B. Returns 1 if the view changed. Does not wait for a stalled
 * middle host; what still waits: an attach retry (up to 10 s, as before)
 * and, once, closing the attach channel when the middle is declared lost
 * (ssh_spawn_close, up to 2 s when the middle's sshd itself is stalled).
 * Declared lost, the session is closed as well (middle_close: its
 * disconnect is bounded by 1 s and does not wait for a reply), so a middle
 * host that only stalled ends the attach process, and the lease, as soon as
 * it answers again; "middle lost: ... (session closed; the bridge restores
 * its dials when its lease ends (now, or when the middle host answers
 * again))". */
int ctl_middle_tick(struct ctl *c);

/* The middle session's socket while a get waits for its reply (put it in
 * the poll set, POLLIN, and call ctl_middle_pump when it is readable), -1
 * otherwise. */
int ctl_middle_fd(const struct ctl *c);

/* Take the waiting get's reply if it has come (never waits; see
 * ctl_middle_tick for the stall and lost rules). 1 if the view changed. */
int ctl_middle_pump(struct ctl *c);

/* Apply dial d to the bridge directions in sides (CTL_M_AB, CTL_M_BA; an
 * empty dial clears them). Validates first (impair_validate: -EINVAL, all
 * problems); the bridge's own refusal is -EINVAL with every one of its
 * errors in err and in view middle.set_err (nothing applied). -ENOTCONN
 * when not attached. ctl_apply/ctl_apply_safe/ctl_clear pass the M bits
 * here. */
int ctl_middle_apply(struct ctl *c, const struct impair *d, unsigned sides,
		     struct ll_err *err);

/* Free everything and close the peers (call ctl_quit first to restore). */
/* The command line of the `linklab verify -J` child (argv[0] an absolute
 * path; NULL-terminated; copied). Without it V says verify is not
 * available. */
int ctl_set_verify_argv(struct ctl *c, char *const argv[]);
/* Start verify in a child process; -EBUSY while one runs or a test runs
 * (both would load the path). */
int ctl_verify_start(struct ctl *c, struct ll_err *err);
/* The fd to poll while verify runs, -1 otherwise. */
int ctl_verify_fd(const struct ctl *c);
/* Read the child's output; 1 when it finished (the view has the table). */
int ctl_verify_pump(struct ctl *c);

void ctl_free(struct ctl *c);

#endif
