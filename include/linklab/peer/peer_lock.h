/* SPDX-License-Identifier: MIT */
/* peer_lock.h - which console drives a peer: an owner record ("lock") per
 * side in the journal directory, so that a second console refuses to take
 * a peer (or a local interface) another live console holds, naming it, and
 * the next run finds what a killed console (kill -9) left impaired.
 *
 * Local side: one file per interface, journal_dir()/owner-<netns
 * inode>-<ifindex>.lock, held with flock(2) by the console for its life (the
 * kernel drops the flock when the process dies, even by kill -9). A file
 * whose flock can be taken but that still holds a record is "stale": its
 * owner died without releasing it. The remote side keeps the same record in
 * /run/linklab/owner-remote-<netns>.lock on the peer, held by flock(1) of a
 * keeper process on the peer that lives as long as the console's SSH
 * session (peer_remote.c).
 *
 * Record text, one "key value" per line: pid, uid, user, host, since (epoch
 * seconds), then one "dev NAME" line per interface the owner changed.
 * Interface names hold no white space (the kernel's dev_valid_name); user
 * and host are reduced to [A-Za-z0-9._-].
 */
#ifndef LINKLAB_PEER_LOCK_H
#define LINKLAB_PEER_LOCK_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"

#define PEER_LOCK_DEVS 8
#define PEER_LOCK_TEXT 512        /* bytes enough for a formatted record */

struct peer_lock_owner {
	long pid;                 /* the console's pid on its own host */
	unsigned uid;
	char user[32];
	char host[64];            /* the console's host name */
	long long since;          /* when it took the lock, epoch seconds */
	int ifindex;              /* local lock: the interface's ifindex */
	long kpid;                /* remote record: the keeper's pid on the
				   * peer */
	int ndev;                 /* interfaces it changed on this side */
	char dev[PEER_LOCK_DEVS][IF_NAMESIZE];
};

/* This process as an owner (pid, uid, user, host, since = now). */
void peer_lock_self(struct peer_lock_owner *o);

/* Record o as text (see above). 0, or -ENOSPC if len is too small. */
int peer_lock_format(const struct peer_lock_owner *o, char *buf, size_t len);

/* Parse a record; unknown lines are skipped. 0, or -EINVAL when there is
 * no pid line. */
int peer_lock_parse(const char *text, struct peer_lock_owner *o);

/* "console pid 1234 (user root on host lab) since 18:40:12" (local time;
 * the date too when not today). */
void peer_lock_describe(const struct peer_lock_owner *o, char *buf,
			size_t len);

/* Add dev to o's list (no duplicates, at most PEER_LOCK_DEVS). */
void peer_lock_owner_add(struct peer_lock_owner *o, const char *dev);

struct peer_lock;

/* Take the local lock of interface (netns, ifindex) named dev. 0 when
 * taken: *prev_stale tells whether a dead owner's record was found there,
 * *prev gets it (its dev list names what it changed). -EBUSY when a live
 * process holds it: *prev gets the holder and err names it ("veth-a is
 * driven by console pid ..."). Other -errno (journal directory). */
int peer_lock_take(uint64_t netns, int ifindex, const char *dev,
		   struct peer_lock **out, struct peer_lock_owner *prev,
		   bool *prev_stale, struct ll_err *err);

/* Release: the record is removed when remove is true (everything the owner
 * changed was restored), else left as a stale record for the next run;
 * the flock ends either way. NULL is a no-op. */
void peer_lock_release(struct peer_lock *l, bool remove);

/* The lock's interface (as given to peer_lock_take). */
const char *peer_lock_dev(const struct peer_lock *l);

/* Every stale local record of namespace netns (owner dead): up to max in
 * out, *n the count. The records are left in place. 0 or -errno (a missing
 * directory is 0 records). */
int peer_lock_stale(uint64_t netns, struct peer_lock_owner *out, int max,
		    int *n, struct ll_err *err);

/* The live owner of interface (netns, ifindex) when it is another process
 * than this one: 1 and *out (the record; user "?" when it does not parse),
 * else 0 (no record, a stale one, or this process holds it). */
int peer_lock_holder(uint64_t netns, int ifindex, struct peer_lock_owner *out);

/* Drop a stale local record (no-op when a live process holds it). */
void peer_lock_drop_stale(uint64_t netns, int ifindex);

/* --- the remote side (over the peer's SSH session) --- */
struct ssh_session;
struct ssh_proc;

/* Take the peer's owner record /run/linklab/owner-remote-<nsid>.lock: a
 * keeper on the peer (its own channel, *keeper) holds flock(1) on it while
 * the session lives and records the devices given to peer_lock_remote_note.
 * 0 when taken (*prev_stale and *prev as for peer_lock_take; a stale
 * record lists only the devices whose journal or endpoint-engine hook is
 * still on the peer);
 * -EBUSY when a live keeper holds it (err names the holder). A keeper
 * whose console ran on this host (same host name) and is gone (no linklab
 * process at its pid) - its session to the peer cut without a FIN, sshd
 * not aware yet - is ended and the record taken over. -ENOTSUP when
 * the peer has no flock(1) (not locked); other -errno (the session). */
int peer_lock_remote_take(struct ssh_session *s, const char *nsid,
			  struct ssh_proc **keeper, struct peer_lock_owner *prev,
			  bool *prev_stale, struct ll_err *err);

/* The live holder of the peer's owner record (a console's keeper holds its
 * flock), looked at without taking it: 1 and *out (user "?" when the record
 * does not parse), 0 when no live keeper holds it (or the peer has no
 * flock(1)), -errno when the peer could not be asked (err says why). */
int peer_lock_remote_holder(struct ssh_session *s, const char *nsid,
			    struct peer_lock_owner *out, struct ll_err *err);

/* Tell the keeper that dev was changed (a name as valid_ifname allows). */
void peer_lock_remote_note(struct ssh_proc *keeper, const char *dev);

/* End the keeper: remove true drops the record, false leaves it for the
 * next run (the flock ends either way). NULL is a no-op. */
void peer_lock_remote_release(struct ssh_proc *keeper, bool remove);

#endif
