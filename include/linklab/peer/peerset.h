/* SPDX-License-Identifier: MIT */
/* peerset.h - the two peers of a session: A (this host, netlink) and, when
 * --peer is given, B (over SSH). Shared by the console and the commands:
 * parses the common peer options, opens both backends and finds the
 * interface on each side that routes to the other peer. */
#ifndef LINKLAB_PEERSET_H
#define LINKLAB_PEERSET_H

#include <stdbool.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"
#include "linklab/peer/peer.h"
#include "linklab/remote/sshcfg.h"

struct peerset_opts {
	const char *peer;         /* --peer HOST, NULL = this host only */
	const char *peer_data;    /* --peer-data ADDR (test traffic address) */
	const char *dev;          /* --dev IF (this host) */
	const char *peer_dev;     /* --peer-dev IF (peer) */
	struct sshcfg_opts ssh;   /* -F, --ssh-key, --known-hosts, --accept-new */
	/* B's safety settings (struct peer_safety) */
	bool force;               /* --force: allow 100 % loss on the interface
				   * carrying the SSH session */
	bool exclude_ssh;         /* --exclude-ssh: keep the session's flow
				   * out of the impairment */
	int revert_after;         /* --revert-after SEC (1..3600), 0 -> 30 */
	int peer_timeout;         /* --peer-timeout SEC (1..300), 0 ->
				   * PEER_TIMEOUT_S: bound on the SSH
				   * connection (handshake included) and on
				   * each command run on B */
	bool hold;                /* not an option: the console sets it so
				   * that B restores itself if the session
				   * dies (peer_safety.hold) */
	bool b_optional;          /* not an option: when B cannot be reached,
				   * open A alone (has_b false, b_failed
				   * true, b_err says why) instead of failing */
};

struct peerset {
	struct peer a;            /* always open */
	struct peer b;            /* open when has_b */
	bool has_b;
	char dev_a[IF_NAMESIZE];  /* preselected: routes to B (or --dev) */
	char dev_b[IF_NAMESIZE];  /* preselected: routes to A (or --peer-dev) */
	char addr_b[256];         /* B's address for test traffic */
	char addr_a[64];          /* A's address on dev_a (first IPv4/IPv6) */
	struct ssh_target target;
	bool b_failed;            /* b_optional and B could not be reached */
	struct ll_err b_err;      /* why (when b_failed) */
};

/* Try to consume one common option at argv[*i] (and its value). Returns 1 if
 * consumed (advancing *i), 0 if not a peer option, -EINVAL (err filled) if
 * its value is missing. Options: --peer, --peer-data, --dev, --peer-dev, -F,
 * --ssh-key, --known-hosts, --accept-new, --force, --exclude-ssh,
 * --revert-after SEC, --peer-timeout SEC. An option with a value given
 * twice is -EINVAL naming it and both values (tc refuses a duplicate
 * parameter too). */
int peerset_parse_opt(struct peerset_opts *o, int argc, char **argv, int *i,
		      struct ll_err *err);

/* Open A, and B if o->peer; preselect the interfaces. On failure nothing is
 * left open. */
int peerset_open(struct peerset *ps, const struct peerset_opts *o,
		 struct ll_err *err);

/* Before applying dial d to dev on side (0 = A, 1 = B): does dev carry the
 * SSH session to B? (B: the interface B routes the session's client
 * address through, peer op sshflow; A: the interface A routes B's sshd
 * address through.) If so, warn gets one line naming the session and the
 * --exclude-ssh remedy, and 100 % loss without force is refused with
 * -EPERM (err names --force). 0 with warn "" when it does not, or when
 * there is no B / the session addresses are unknown (ProxyJump). For the
 * console and `apply` (peer_remote's apply makes the same check for B
 * itself). */
int peerset_ssh_check(struct peerset *ps, int side, const char *dev,
		      const struct impair *d, bool force, char *warn,
		      size_t len, struct ll_err *err);

/* The same check with B's control session already known (flow, from
 * ops->session->sshflow earlier): asks nothing of B, for a caller that must not
 * wait on it (the console). */
int peerset_ssh_check_flow(struct peerset *ps, const struct peer_sshflow *flow,
			   int side, const char *dev, const struct impair *d,
			   bool force, char *warn, size_t len, struct ll_err *err);

/* Close both (does not restore: call peer clear first). */
void peerset_close(struct peerset *ps);

#endif
