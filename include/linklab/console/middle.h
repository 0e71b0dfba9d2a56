/* SPDX-License-Identifier: MIT */
/* middle.h - the console's link to a middle box running `linklab bridge`
 * (doc/bridge.md): one SSH session to the middle host, and on it one
 * `linklab bridge --attach` process that holds the bridge's LEASE for as long
 * as its stdin stays open. Protocol (one JSON object per line): the attach
 * process prints the bridge STATE first; each request line
 * {"op":"get"} or {"op":"set","a_to_b":{FIELD:VALUE},"b_to_a":{...}} gets
 * one reply {"ok":true,"state":STATE} or {"ok":false,"errors":[TEXT...]}.
 * STATE = {"pid","engine","if_a","if_b","a_to_b":DIR,"b_to_a":DIR}, DIR =
 * {"dial","fields":{FIELD:VALUE},"rx_packets","rx_bytes","tx_packets",
 * "tx_bytes","lost","duplicated","corrupted","reordered","drops"}. FIELD and
 * VALUE are the dial field names and texts of impair_get()/impair_set(). When
 * the attach process's stdin closes (quit, crash, lost session) the bridge
 * restores the dials it had when the lease began. After middle_set_start
 * the process on the session is instead a bridge the console STARTS
 * (`linklab bridge IF_A IF_B --engine E --stdin-lease`): same protocol, and
 * when its stdin closes it stops and restores its interfaces.
 * Engine rules: never prints, never exits; 0 or -errno with err filled. */
#ifndef LINKLAB_MIDDLE_H
#define LINKLAB_MIDDLE_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"
#include "linklab/remote/sshcfg.h"

/* Index of a bridge direction in middle_state.dir[]. */
#define MIDDLE_AB 0                   /* enters IF_A, leaves IF_B */
#define MIDDLE_BA 1                   /* enters IF_B, leaves IF_A */

/* One direction of the bridge as STATE reports it. */
struct middle_dir {
	char dial[256];               /* the bridge's summary text */
	struct impair fields;         /* "fields" parsed with impair_set */
	int nfields;                  /* members of "fields" */
	char unparsed[160];           /* "FIELD=VALUE ..." impair_set refused
				       * ("" = every field parsed) */
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t lost, duplicated, corrupted, reordered;
	uint64_t drops;               /* a number, or the sum of an object's
				       * numbers ({"limit":N,"rate":M}) */
};

/* The bridge as STATE reports it. */
struct middle_state {
	long pid;                     /* the bridge process */
	char engine[16];              /* "user" | "kernel" */
	char if_a[IF_NAMESIZE];
	char if_b[IF_NAMESIZE];
	struct middle_dir dir[2];     /* [MIDDLE_AB], [MIDDLE_BA] */
	long leased_by;               /* the lease holder's pid, 0 = none */
	char warnings[256];           /* a set reply's "warnings", "; "-joined
				       * ("" = none) */
};

/* Parse a STATE object (text json, one line). Missing counters read 0;
 * "engine", "if_a", "if_b", "a_to_b" and "b_to_a" are required (-EPROTO
 * naming the missing member; -EPROTO also for text that is not JSON). Pure:
 * for the unit tests. */
int middle_parse_state(const char *json, struct middle_state *st,
		       struct ll_err *err);

/* Parse one reply line. {"ok":true,"state":S[,"warnings":[...]]}: st
 * filled (warnings joined into st->warnings), 0.
 * {"ok":false,"errors":[...]}: -EINVAL, err gets every error joined with
 * "; " (truncated to LL_ERR_MAX), st untouched. Anything else: -EPROTO. */
int middle_parse_reply(const char *line, struct middle_state *st,
		       struct ll_err *err);

/* Build a set request line (malloc'ed, no newline; caller frees) for the
 * directions given: ab/ba NULL = that direction omitted (left as it is); an
 * empty dial = {} (the bridge clears that direction). Every set field is
 * sent as impair_get() text. NULL on out of memory. */
char *middle_set_request(const struct impair *ab, const struct impair *ba);

/* Bounds on a request's reply (ms). A set, or a blocking middle_get, waits
 * MIDDLE_REQ_MS for its reply; a get sent by middle_get_send counts as
 * slow after MIDDLE_SLOW_MS without a reply (sets are then refused, -EBUSY,
 * so that they do not freeze the caller too) and the session as lost after
 * MIDDLE_LOST_MS (a stalled middle host may recover in between). */
#define MIDDLE_REQ_MS 5000
#define MIDDLE_SLOW_MS 5000
#define MIDDLE_LOST_MS 15000

/* --- reply matching (pure: for the unit tests) --- */

/* What a request line asked for. */
enum middle_req { MIDDLE_REQ_NONE = 0, MIDDLE_REQ_GET, MIDDLE_REQ_SET };

#define MIDDLE_INFLIGHT_MAX 4
/* The requests sent and not answered yet, oldest first. The attach process
 * answers every request line with exactly one reply line, in order
 * (doc/bridge.md, "--attach"), so each reply line belongs to the oldest. */
struct middle_inflight {
	unsigned char kind[MIDDLE_INFLIGHT_MAX];   /* enum middle_req */
	int n;
};

/* Note a request sent last. 0, or -EBUSY when MIDDLE_INFLIGHT_MAX wait. */
int middle_inflight_push(struct middle_inflight *q, enum middle_req kind);

/* A reply line came: the request it answers (removed), MIDDLE_REQ_NONE
 * when none waits (a line nobody asked for). */
enum middle_req middle_inflight_pop(struct middle_inflight *q);

/* Does a request of this kind wait for its reply? */
bool middle_inflight_has(const struct middle_inflight *q, enum middle_req kind);

/* Line assembly: ssh_spawn_readline hands a long line out in pieces of at
 * most 4096 bytes, cut at its buffer's size. line[0..n) (NUL-terminated) is
 * what was read so far, chunk the length of the last piece. True when the
 * line is complete: the last piece was shorter than 4096 bytes, or exactly
 * 4096 and line is whole JSON already, or line fills cap (n + 1 >= cap:
 * the rest is not read into it). */
bool middle_line_complete(const char *line, size_t n, int chunk, size_t cap);

struct middle;

/* Open the SSH session to the middle host t (host key and authentication
 * exactly as for the peer: ssh_open), timeout_ms bounds the connect (0 ->
 * 10000). Does not attach yet. */
int middle_open(struct middle **out, const struct ssh_target *t,
		int timeout_ms, struct ll_err *err);

/* Make middle_attach START the bridge instead of attaching to a running
 * one: it then spawns `linklab bridge IF_A IF_B --engine ENGINE
 * --stdin-lease` (doc/bridge.md), which forwards plain, speaks the same
 * protocol on its stdin/stdout and STOPS (interfaces restored) when its
 * stdin closes: when the console detaches, quits, dies or loses the
 * session. if_a/if_b: the middle's interface names (1..15 characters,
 * different; shell-quoted); engine: "auto" (kernel when the middle's kernel
 * has netem, else user), "kernel" or "user". -EINVAL naming the bad value.
 * Call before middle_attach. */
int middle_set_start(struct middle *m, const char *if_a, const char *if_b,
		     const char *engine, struct ll_err *err);

/* The engine middle_set_start was given, NULL when m attaches. */
const char *middle_start_engine(const struct middle *m);

/* Spawn `linklab bridge --attach` on the session (found on the middle's
 * PATH; the start command instead after middle_set_start) and read its
 * STATE into st within 10 s. A start that fails: -EPROTO, err "middle H:
 * starting the bridge: " and the bridge's first stderr line (no such
 * interface, a bridge already forwards those ports, not root). -ESRCH when no bridge runs
 * in the middle's network namespace (the remote text in err), -ENOENT when
 * the middle has no linklab, -EPROTO on a line that is not STATE, -EIO /
 * -ETIMEDOUT when the session fails (middle_lost() then true). An earlier
 * attach is closed first. */
int middle_attach(struct middle *m, struct middle_state *st,
		  struct ll_err *err);

/* The lease is held (attached and no failure since). */
bool middle_attached(const struct middle *m);

/* The SSH session itself failed (not only the attach process): nothing
 * more can be done with m except middle_close. */
bool middle_lost(const struct middle *m);

/* {"op":"get"}: the bridge's STATE now, within MIDDLE_REQ_MS (blocking;
 * a get already sent by middle_get_send is waited for, not sent again).
 * -ENOTCONN when not attached; -ENODATA when the attach process ended (the
 * bridge stopped: not attached any more, the session kept); -EIO/-ETIMEDOUT
 * when the session failed (lost). */
int middle_get(struct middle *m, struct middle_state *st, struct ll_err *err);

/* The asynchronous get (for a loop that must not wait): send {"op":"get"}
 * and return at once (the write of the 13-byte line is bounded by 1 s).
 * At most one get waits at a time: -EALREADY when one does. -ENOTCONN when
 * not attached; -EIO/-ETIMEDOUT (lost) when the write fails. */
int middle_get_send(struct middle *m, struct ll_err *err);

/* Take the reply of the get sent by middle_get_send if it has come, never
 * waiting: reads what the session has (call when middle_fd() is readable,
 * or from a periodic tick). 0 with st filled; -EAGAIN when it has not come
 * yet (still within MIDDLE_LOST_MS); -ENOENT when no get waits; -ETIMEDOUT
 * when it has waited MIDDLE_LOST_MS (the session is then lost); other
 * errors as middle_get. */
int middle_get_poll(struct middle *m, struct middle_state *st,
		    struct ll_err *err);

/* Milliseconds since the waiting get was sent, -1 when none waits. */
long middle_get_wait_ms(const struct middle *m);

/* The session's socket (for the caller's poll set), -1 when closed. */
int middle_fd(const struct middle *m);

/* Set the directions given (see middle_set_request) and return the STATE
 * after it, within MIDDLE_REQ_MS (blocking: the user waits for it). A get
 * still waiting for its reply is answered first: that reply is read and
 * dropped (the set's STATE is newer), so replies never mix. -EBUSY, nothing
 * sent, when that get has waited MIDDLE_SLOW_MS already (the middle is not
 * answering). The bridge's refusal: -EINVAL with all its errors in err
 * ("loss: 150% is out of range (0% .. 100%); ..."), nothing applied. Other
 * errors as middle_get. */
int middle_set(struct middle *m, const struct impair *ab,
	       const struct impair *ba, struct middle_state *st,
	       struct ll_err *err);

/* Close the attach process's stdin (the lease ends: the bridge restores
 * the dials it had when the lease began). The session stays open. */
void middle_detach(struct middle *m);

/* `linklab bridge --status -J` on the session: the bridge's STATE now,
 * without a lease (so also while a console holds it; nothing is changed),
 * within MIDDLE_REQ_MS. Errors as middle_parse_status ("middle H: " in
 * front), -EIO/-ETIMEDOUT when the session fails (middle_lost() then
 * true). Works attached or not. */
int middle_status(struct middle *m, struct middle_state *st, struct ll_err *err);

/* What `linklab bridge --status -J` left: stdout out, stderr errtext, exit
 * status. 0 with st filled (middle_parse_state); -ENOENT when the shell
 * found no linklab (exit 127, "linklab: not found"); -ESRCH when no bridge
 * runs in that network namespace ("no linklab bridge ..."); -EPROTO with
 * the bridge's first error for another failure, or for a STATE that does
 * not parse. Pure: for the unit tests. */
int middle_parse_status(const char *out, const char *errtext, int status,
			struct middle_state *st, struct ll_err *err);

/* "user@host:port" of the session. */
const char *middle_name(const struct middle *m);

/* Detach and close the session; NULL is a no-op. */
void middle_close(struct middle *m);

#endif
