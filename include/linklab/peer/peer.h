/* SPDX-License-Identifier: MIT */
/* peer.h - one table of operations on a peer (list links, read qdiscs, apply,
 * clear, start/stop the test server), implemented twice: local (netlink, in
 * peer_local.c) and remote (commands over the SSH session, in peer_remote.c).
 * Both fill the same structs, so a test can apply through either and compare.
 */
#ifndef LINKLAB_PEER_H
#define LINKLAB_PEER_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"
#include "linklab/model/link.h"
#include "linklab/model/qdisc.h"

struct peer;

/* The control session (SSH) to a peer, as that peer sees it. */
struct peer_sshflow {
	char client[64];          /* this host's address (the SSH client) */
	int client_port;
	char server[64];          /* the peer's address (sshd) */
	int server_port;
	char dev[IF_NAMESIZE];    /* the peer's interface whose route carries
				   * the session back to the client */
};

/* Safety settings of a remote peer (--force, --exclude-ssh,
 * --revert-after). */
struct peer_safety {
	bool force;               /* allow 100 % loss on the interface that
				   * carries the session */
	bool exclude_ssh;         /* keep the session's own flow out of the
				   * impairment (u32 filter to an unshaped
				   * htb class; IPv4 sessions) */
	int revert_s;             /* commit-confirmed timer, 0 -> 30 s */
	int timeout_s;            /* bound on each remote command, seconds
				   * (--peer-timeout; 0 -> PEER_TIMEOUT_S): a
				   * command without an answer by then fails
				   * with -ETIMEDOUT, and so does every later
				   * one on that session at once (ssh_stalled) */
	bool hold;                /* console mode: while the session lives, a
				   * guard on the peer restores every
				   * journalled qdisc the moment the session
				   * dies (SIGHUP, kill, network); a normal
				   * close disarms it */
	bool ask_unarmed;         /* console mode: an apply whose revert timer
				   * cannot be armed is not made (-ENOLCK, err
				   * says why) so the user can be asked */
	bool unarmed_ok;          /* the user said yes: apply without a timer
				   * (even on the session's interface) */
};

/* Default bound on one remote command, seconds: a stalled peer (its sshd
 * stopped, a tc that hangs) costs at most this before the error. */
#define PEER_TIMEOUT_S 10

struct offload_state;     /* hosttune.h */
struct peer_record;
struct enghook_info;      /* enghook.h */
struct peer_lock_owner;   /* peer_lock.h */
struct sysctl_state;

/* The SSH session to a remote peer (peer_ops.session; NULL for the local
 * peer, which has none). */
struct peer_session_ops {
	/* The control session and the peer's interface that carries it. */
	int (*sshflow)(struct peer *p, struct peer_sshflow *out, struct ll_err *err);
	/* Warning of the last apply ("" if none), e.g. "veth-b carries this SSH
	 * session: a heavy impairment may cut it". Valid until the next call. */
	const char *(*warning)(struct peer *p);
	/* For the console's loop: send an SSH keepalive if due; *next_s gets
	 * the seconds until the next is due. 0, or -EIO/-ENOTCONN when the
	 * session is gone (the peer's armed revert timers then restore it). */
	int (*keepalive)(struct peer *p, int *next_s, struct ll_err *err);
	/* The session's socket to add to poll() (POLLIN: call keepalive or
	 * any op; POLLHUP/POLLERR: session lost), -1 if none. */
	int (*poll_fd)(struct peer *p);
	/* Release everything as a lost session does, in place of close: the
	 * hold guard (peer_safety.hold) is not disarmed, so the peer restores
	 * every interface journalled there once the session ends. For a
	 * caller that gives up on work it queued (restores that never ran). */
	void (*abandon)(struct peer *p);
};

/* NIC offloads and TCP sysctls (hosttune.h; peer_ops.tune): read, set (the
 * original journalled on that peer first, read back), restore every
 * journalled original. Local: ethtool ioctls and /proc/sys; remote:
 * ethtool -k/-K and /proc/sys over SSH. A member may return -ENOTSUP. */
struct peer_tune_ops {
	int (*offload_get)(struct peer *p, const char *dev,
			   struct offload_state *out, struct ll_err *err);
	int (*offload_set)(struct peer *p, const char *dev,
			   const struct offload_state *want, struct ll_err *err);
	int (*sysctl_get)(struct peer *p, struct sysctl_state *out,
			  struct ll_err *err);
	int (*sysctl_set)(struct peer *p, const char *name, const char *value,
			  struct ll_err *err);
	int (*tune_restore)(struct peer *p, struct ll_err *err);
};

/* Link counters (peer_ops.counters; NULL for the remote peer). */
struct peer_counter_ops {
	/* dev's link counters (struct link_stats). -ENODEV (no such
	 * interface), -EIO (netlink). */
	int (*link_stats)(struct peer *p, const char *dev, struct link_stats *out,
			  struct ll_err *err);
};

/* The endpoint engine (enghook.h; peer_ops.engine; NULL = kernel only). */
struct peer_engine_ops {
	/* Engine choice for the following applies (enum enghook_mode) and the
	 * TCP port whose packets skip the engine (0 = none; --exclude-ssh). */
	void (*set_engine)(struct peer *p, int mode, int exclude_port);
	/* The endpoint engine holding dev's dial: 0 and *out filled, -ENOENT
	 * when the kernel holds it (or nothing). */
	int (*engine_get)(struct peer *p, const char *dev, struct enghook_info *out,
			  struct ll_err *err);
	/* Whether an apply of d would go to the endpoint engine (--engine
	 * user, or auto where the kernel has no netem, as far as known). */
	bool (*would_engine)(struct peer *p, const struct impair *d);
};

/* The journal's records (journal.h; peer_ops.journal). */
struct peer_journal_ops {
	/* Every record on this peer (damaged ones too), up to max. */
	int (*records)(struct peer *p, struct peer_record *out, int max, int *n,
		       struct ll_err *err);
	/* Drop the record of dev (NULL: every record, damaged ones too)
	 * without restoring anything. */
	int (*forget)(struct peer *p, const char *dev, struct ll_err *err);
	/* Lines the last clear/clear_all/apply left for the user (records
	 * dropped, records not restored and why); "" if none. */
	const char *(*notes)(struct peer *p);
};

/* The console's hold on a remote peer (peer_lock.h; peer_ops.lock; NULL for
 * the local peer, which takes peer_lock_take per interface). */
struct peer_lock_ops {
	/* Take the peer for this process: 0 (*prev, *prev_stale: a dead
	 * owner's record and what it left), -EBUSY (err names the live
	 * holder), -ENOTSUP (cannot be locked), other -errno. */
	int (*lock_take)(struct peer *p, struct peer_lock_owner *prev,
			 bool *prev_stale, struct ll_err *err);
	/* Record that dev was changed under the hold. */
	void (*lock_note)(struct peer *p, const char *dev);
	/* End the hold; remove: drop the record (all restored). */
	void (*lock_release)(struct peer *p, bool remove);
	/* Another console's live hold on the peer, without taking it: 1 and
	 * *who, 0 none, -errno (err) when it could not be asked. */
	int (*lock_holder)(struct peer *p, struct peer_lock_owner *who,
			   struct ll_err *err);
};

/* What every peer does, then the optional parts as sub-tables: a NULL
 * sub-table means "not supported by this backend"; a caller checks the
 * sub-table, never a single member (every member of a sub-table is set). */
struct peer_ops {
	const char *name;   /* "local" or "ssh" */
	/* Interfaces with addresses and root qdisc kind. */
	int (*list_links)(struct peer *p, struct link_list *out,
			  struct ll_err *err);
	/* The interface whose route reaches addr (an IPv4/IPv6 literal). */
	int (*route_dev)(struct peer *p, const char *addr, char *dev,
			 size_t len, struct ll_err *err);
	/* Read the qdisc tree of dev. */
	int (*read_qdiscs)(struct peer *p, const char *dev,
			   struct qdisc_state *out, struct ll_err *err);
	/* Replace whatever is on dev by the plan for d (journalling the
	 * original first). All or nothing: on failure the original is put
	 * back. -ENOTSUP with a "modprobe sch_netem" hint when netem is needed
	 * and missing. */
	int (*apply)(struct peer *p, const char *dev, const struct impair *d,
		     struct ll_err *err);
	/* Restore the journalled original root qdisc of dev (no-op if linklab
	 * never touched it). */
	int (*clear)(struct peer *p, const char *dev, struct ll_err *err);
	/* Restore every interface that has a journal entry on this peer
	 * (after a crash or kill -9: `linklab clear --all`). May be NULL. */
	int (*clear_all)(struct peer *p, struct ll_err *err);
	/* Print the tc command lines apply would run (remote runs exactly
	 * these). lines: buffer of len bytes, one command per line. */
	int (*dry_run)(struct peer *p, const char *dev, const struct impair *d,
		       char *lines, size_t len, struct ll_err *err);
	/* Start a one-shot iperf3-compatible server (linklab serve if present,
	 * else iperf3 -s -1) on a free port; *port gets the port. */
	int (*server_start)(struct peer *p, int *port, struct ll_err *err);
	/* Stop the server started by server_start (no-op if it ended). */
	int (*server_stop)(struct peer *p, struct ll_err *err);
	/* Release everything (not restoring: call clear first). */
	void (*close)(struct peer *p);
	/* Set force / exclude_ssh / revert_s for the following applies. May be
	 * NULL. */
	void (*set_safety)(struct peer *p, const struct peer_safety *s);
	const struct peer_session_ops *session;
	const struct peer_tune_ops *tune;
	const struct peer_counter_ops *counters;
	const struct peer_engine_ops *engine;
	const struct peer_journal_ops *journal;
	const struct peer_lock_ops *lock;
};

/* One journal record of a peer, as `linklab show --journal` lists it. */
struct peer_record {
	char dev[IF_NAMESIZE];
	int ifindex;
	char path[160];           /* the record file on that peer */
	char what[200];           /* "htb 1: + 6 objects; linklab applied tbf 1:",
				   * or why it is damaged */
	bool damaged;
};

struct peer {
	const struct peer_ops *ops;
	char label[64];           /* "A (this host)", "B (peer-b)" */
	char host[256];           /* address for test traffic ("" = local) */
	void *priv;               /* backend state */
	bool server_many;         /* server_start: a server for several tests
	                           * in a row (rpm, verify) until server_stop
	                           * or the session ends; false = one test
	                           * (linklab serve -1 / iperf3 -s -1) */
};

/* Local backend: netlink on this host (needs CAP_NET_ADMIN to change). */
int peer_local_open(struct peer *p, struct ll_err *err);

/* Options to reach a remote peer (filled by sshcfg_resolve from ssh -G). */
struct ssh_target;
/* Remote backend: one libssh2 session to the peer. */
int peer_remote_open(struct peer *p, const struct ssh_target *t,
		     struct ll_err *err);

#endif
