/* SPDX-License-Identifier: MIT */
/* console.h - the console's controller: owns the two peers (struct peerset), the
 * dial being edited, what each kernel holds now (read back after every
 * change, never what was asked), the link lists, the running test with its
 * interval history, and the status/error text. The screens read a snapshot
 * (struct console_view) and hand back intents (struct console_intent); the main loop
 * passes those to console_do(). Never includes curses, never prints, never exits.
 */
#ifndef LINKLAB_CONSOLE_H
#define LINKLAB_CONSOLE_H

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
#include "linklab/traffic/client.h"
#include "linklab/model/theory.h"

/* Sides, as a bit mask for apply/clear. */
enum console_side {
	CONSOLE_A = 1u << 0,        /* this host (netlink) */
	CONSOLE_B = 1u << 1,        /* the peer (SSH) */
	CONSOLE_BOTH = CONSOLE_A | CONSOLE_B,
	/* added for the middle box (--middle): the bridge's directions */
	CONSOLE_M_AB = 1u << 2,     /* bridge A->B (enters IF_A, leaves IF_B) */
	CONSOLE_M_BA = 1u << 3,     /* bridge B->A */
	CONSOLE_M_BOTH = CONSOLE_M_AB | CONSOLE_M_BA,
};

/* Index of a side in console_view.side[]: 0 = A, 1 = B. */
#define CONSOLE_IDX_A 0
#define CONSOLE_IDX_B 1

enum console_test_state {
	CONSOLE_TEST_IDLE,          /* never started */
	CONSOLE_TEST_STARTING,      /* server asked, client connecting */
	CONSOLE_TEST_RUNNING,       /* connected, intervals arriving */
	CONSOLE_TEST_DONE,          /* summary valid */
	CONSOLE_TEST_FAILED,        /* test.err says why; partial results kept */
};

/* Number of SUM samples kept (one per interval; older ones are dropped). */
#define CONSOLE_HISTORY 512

/* What one side looks like now. */
struct console_side_view {
	bool present;                 /* peer open (B only with --peer) */
	char label[64];               /* "A (this host)", "B (peer-b)" */
	struct link_list links;       /* last list_links result */
	int sel;                      /* index into links.l, -1 if none */
	char dev[IF_NAMESIZE];        /* selected interface name */
	char route_dev[IF_NAMESIZE];  /* preselected: routes to the other peer */
	bool qd_valid;                /* qd holds a successful read-back */
	struct qdisc_state qd;        /* what the kernel holds on dev now */
	struct impair held;           /* qd folded into dial terms */
	struct impair ours;           /* the part of held that is linklab's
				       * dial: all of it when linklab applied
				       * the qdisc (A: its journal says so), the
				       * engine's dial when its engine runs,
				       * none for a qdisc set by hand */
	bool held_ours;               /* A's journal: linklab applied dev's qdisc */
	char held_ours_dev[IF_NAMESIZE]; /* the dev held_ours was read for */
	char held_text[256];          /* qdisc_state_summary(qd) */
	/* linklab's endpoint engine on dev, as the last read-back found it */
	enum console_engine_state {
		CONSOLE_ENG_NONE,         /* none hooks dev */
		CONSOLE_ENG_HOLDS,        /* it holds the dial */
		CONSOLE_ENG_GONE,         /* its process ended: traffic passes */
		CONSOLE_ENG_STOPPED,      /* stopped (SIGSTOP): traffic stalls */
		CONSOLE_ENG_UNHOOKED,     /* its rule removed: traffic passes */
	} engine;
	char err[LL_ERR_MAX];         /* last error on this side, "" if none */
	/* live counters (console_tick): root qdisc bytes sent per second x 8
	 * between the last two reads, bit/s; < 0 = unknown yet */
	double tx_bps;
	/* the receive window one TCP socket can get on this side, bytes:
	 * tcp_rmem max less its 1/2^tcp_adv_win_scale share (the kernel's
	 * tcp_win_from_space), read with ops->tune->sysctl_get; 0 = unknown */
	uint64_t rcv_window;
	/* the side's net.ipv4.tcp_congestion_control (sysctl_get), "" =
	 * unknown: the theory line's loss ceiling holds for loss-based ones */
	char cc[32];
};

/* The path A -> B as dialled: each side's egress read back (A's egress
 * carries A->B data, B's egress B->A data and A's ACKs). */
struct console_path {
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

struct console_middle_dir {
	char dial[256];               /* the bridge's dial text ("" = none) */
	struct impair fields;         /* its fields (seed for the editor) */
	double rx_bps, tx_bps;        /* bit/s from the rx/tx byte counters
				       * between the last two reads; < 0 =
				       * unknown yet */
	uint64_t rx_packets, tx_packets;
	uint64_t lost, duplicated, corrupted, reordered, drops;
};

/* The middle box (--middle HOST running `linklab bridge`). */
struct console_middle_view {
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
	struct console_middle_dir dir[2]; /* [MIDDLE_AB], [MIDDLE_BA] */
	char err[LL_ERR_MAX];         /* why not attached / last failure
				       * ("no linklab bridge runs ...; retry
				       * in 3 s", "middle lost: ...") */
	char set_err[LL_ERR_MAX];     /* the bridge's errors for the last
				       * apply/clear, "" when it took */
	bool changed;                 /* the console changed the bridge's
				       * dial (quit puts it back) */
};

/* One profile as the profiles screen lists it. */
struct console_profile {
	char name[64];                /* file name without .ini */
	char path[PATH_MAX];
	bool user;                    /* from a user directory (writable) */
	bool valid;                   /* loaded without errors */
	char title[64];               /* [profile] name */
	char description[256];
	int nproblems;                /* problems[] used (errors, warnings) */
	char problems[4][LL_DIAG_LEN];/* "FILE:LINE: message" */
	int nproblems_all;            /* all the file has (more than shown) */
	bool per_side;
	struct impair a, b;           /* dials for A's and B's egress */
};

/* The test as the screens see it. */
struct console_test_view {
	enum console_test_state state;
	struct client_opts opts;        /* what was started */
	int nintervals;               /* intervals received so far */
	struct client_interval last;    /* the latest interval (valid if > 0) */
	int nhist;                    /* SUM samples in hist[] (<= CONSOLE_HISTORY) */
	struct client_stream_sample hist[CONSOLE_HISTORY];  /* oldest first */
	double max_stream_bps;        /* max per-stream bit/s seen */
	double max_sum_bps;           /* max SUM bit/s seen */
	double scale_bps;             /* bar full scale: held tbf rate on the
					 sending side, else max SUM seen */
	bool scale_dialled;           /* scale_bps is the held tbf rate */
	bool have_summary;
	struct client_summary summary;  /* valid when have_summary */
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
	struct console_rpm {
		bool valid;
		bool foreign;             /* the echo probes answered */
		double idle_ms;           /* 0 = not measured (no echo) */
		double working_ms;
		double rpm;
	} rpm;
	/* the dials the run started under (each side's read-back when it
	 * started) and, once a read-back during the run differs (a dial
	 * changed, linklab's engine gone or stopped), what changed and when:
	 * "" = the same dials throughout (A is read every second, B every
	 * 5 s) */
	struct impair held_start[2];
	bool held_start_valid[2];
	char held_start_text[2][128];
	double start_mono;            /* monotonic seconds at the start */
	char dial_note[320];
};

/* The last `linklab verify` run from the console (V on the peers screen):
 * the dial read back on both peers against what the wire did. */
struct console_verify_view {
	bool running;                 /* the verify child is measuring */
	double age_s;                 /* seconds since it started */
	bool have;                    /* res holds a finished run */
	bool shown;                   /* the peers screen shows the table */
	struct verify_job_result res;
};

struct console_view {
	struct console_side_view side[2]; /* [CONSOLE_IDX_A], [CONSOLE_IDX_B] */
	struct impair dial;           /* the dial being edited */
	unsigned dial_sides;          /* enum console_side target of the dial */
	struct console_test_view test;
	bool is_root;                 /* euid 0: apply possible on A */
	char session[160];            /* "peer-b via ssh (10.0.0.2)" or
					 "no peer, test target ADDR" */
	char status[256];             /* last thing that happened */
	char error[LL_ERR_MAX];       /* last error, "" if none */
	/* the path and its ceilings */
	struct console_path path;         /* A->B as held now */
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
				       * else hostinfo_local_window() */
	int nprofiles;                /* profiles[] (console_profiles_reload) */
	const struct console_profile *profiles;
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
	struct console_confirm {
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
	struct console_middle_view middle;
	struct console_verify_view verify;
	/* B's requests run asynchronously (console_set_async) */
	int b_wait_s;                 /* > 0: B's running request has waited
				       * this many seconds */
	char b_wait[96];              /* "waiting for B (3 s): apply", "" when
				       * B answers within a second */
};

/* A test request from the test screen. */
struct console_test_req {
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

enum console_intent_kind {
	CI_NONE,
	CI_APPLY,       /* dial + sides */
	CI_CLEAR,       /* sides */
	CI_REFRESH,     /* re-list links, re-read qdiscs */
	CI_SELECT,      /* side (CONSOLE_IDX_*) + index into its links */
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
	/* CI_APPLY, CI_CLEAR and CI_PROFILE_APPLY also take CONSOLE_M_AB /
	 * CONSOLE_M_BA in sides: the bridge on the middle box */
};

struct console_intent {
	enum console_intent_kind kind;
	unsigned sides;               /* enum console_side mask */
	int side;                     /* CONSOLE_IDX_A / CONSOLE_IDX_B (CI_SELECT) */
	int index;                    /* link index (CI_SELECT) */
	struct impair dial;
	struct console_test_req test;
	char name[64];                /* profile name (save, rename) */
	/* CI_APPLY: the y/n answer and the safety overrides */
	bool confirmed;               /* the user said y to view.confirm:
				       * apply without asking again */
	bool force;                   /* allow 100 % loss on the interface
				       * carrying the SSH session */
};

struct console;

/* Create the controller on an opened peerset. Takes ownership of ps's
 * contents (copied; the caller's struct must not be closed afterwards).
 * target: test address when there is no peer B ("-c ADDR"), may be NULL.
 * port: server port for -c targets (0 = 5201). Lists links and reads back
 * both sides once; failures there are kept as side errors, not returned.
 * Returns 0, or -ENOMEM. */
int console_new(struct console **out, const struct peerset *ps, const char *target,
		int port, struct ll_err *err);

/* The snapshot the screens draw from; valid until the next console_* call. */
const struct console_view *console_view(const struct console *c);

/* Carry out one intent. Returns 0 or a negative code; the error text is in
 * err and in the view's error line. CI_QUIT behaves as console_quit(). */
int console_do(struct console *c, const struct console_intent *in, struct ll_err *err);

/* Quit: stop the test, restore (ops->clear) every interface linklab changed
 * on both sides, stop B's server. A first (at once); B's restores go through
 * its queue and are waited for at most the command bound + 2 s (less after
 * console_set_quit_cancel): a B gone, or not answering by then, is left to
 * restore itself ("B lost (restores itself)" / "B not answering (restores
 * itself)"), which is not an error. summary gets one line ("restored A
 * veth-a, B veth-b" / "nothing to restore"; a lost middle box adds its own
 * sentence "middle box lost: the bridge's lease restores its dials (now,
 * or when the middle host answers again)"). Returns 0 or the first error
 * (every restore is still attempted). Idempotent. */
int console_quit(struct console *c, char *summary, size_t len, struct ll_err *err);

/* After console_quit: true when B was left to restore itself (gone, or not
 * answering within the bound): its restore was not seen from here. */
bool console_quit_b_left(const struct console *c);

/* Put msg on the view's status line (a console-side note). */
void console_note(struct console *c, const char *msg);

/* Periodic work from the loop (call about once a second): re-read side
 * A's qdiscs (netlink, no blocking I/O) for the live counters, and side B's
 * too when remote is true (one SSH round trip: call it rarely). Returns 1
 * if the view changed. */
int console_tick(struct console *c, bool remote);

/* console_quit waits for a B that has not answered yet at most the command
 * bound (+2 s); it stops waiting as soon as one of fds (up to 2, e.g. the
 * terminal and a signal pipe) is readable: B is then left to restore
 * itself ("B not answering (restores itself)"; its hold guard stays armed).
 * An fd that is hung up or failed (a terminal gone) no longer counts. */
void console_set_quit_cancel(struct console *c, const int *fds, int n);

/* Free everything and close the peers (call console_quit first to restore). */
void console_free(struct console *c);

#endif
