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
 * restores the dials it had when the lease began.
 * Engine rules: never prints, never exits; 0 or -errno with err filled. */
#ifndef LINKLAB_MIDDLE_H
#define LINKLAB_MIDDLE_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/err.h"
#include "linklab/impair.h"
#include "linklab/sshcfg.h"

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

struct middle;

/* Open the SSH session to the middle host t (host key and authentication
 * exactly as for the peer: ssh_open), timeout_ms bounds the connect (0 ->
 * 10000). Does not attach yet. */
int middle_open(struct middle **out, const struct ssh_target *t,
		int timeout_ms, struct ll_err *err);

/* Spawn `linklab bridge --attach` on the session (found on the middle's
 * PATH) and read its STATE into st within 10 s. -ESRCH when no bridge runs
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

/* {"op":"get"}: the bridge's STATE now, within 5 s. -ENOTCONN when not
 * attached; -ENODATA when the attach process ended (the bridge stopped:
 * not attached any more, the session kept); -EIO/-ETIMEDOUT when the
 * session failed (lost). */
int middle_get(struct middle *m, struct middle_state *st, struct ll_err *err);

/* Set the directions given (see middle_set_request) and return the STATE
 * after it. The bridge's refusal: -EINVAL with all its errors in err
 * ("loss: 150% is out of range (0% .. 100%); ..."), nothing applied. Other
 * errors as middle_get. */
int middle_set(struct middle *m, const struct impair *ab,
	       const struct impair *ba, struct middle_state *st,
	       struct ll_err *err);

/* Close the attach process's stdin (the lease ends: the bridge restores
 * the dials it had when the lease began). The session stays open. */
void middle_detach(struct middle *m);

/* "user@host:port" of the session. */
const char *middle_name(const struct middle *m);

/* Detach and close the session; NULL is a no-op. */
void middle_close(struct middle *m);

#endif
