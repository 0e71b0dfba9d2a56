/* SPDX-License-Identifier: MIT */
/* bridgectl.h - live control of a running `linklab bridge`: a Unix stream
 * socket served from a thread, one JSON object per line both ways
 * (doc/bridge.md "Live control" is the contract):
 *
 *   path   <journal_dir()>/bridge-<netns inode>-<pid>.sock, mode 0600,
 *          removed by bridgectl_stop
 *   {"op":"get"}                      -> {"ok":true,"state":STATE}
 *   {"op":"set","a_to_b":{FIELD:VALUE,...},"b_to_a":{...}}
 *          FIELD/VALUE as impair_fields[] names and tc texts ("50ms", "1%");
 *          a direction omitted stays as it is, a direction given is replaced
 *          as a whole ({} = plain forwarding). Both directions are validated
 *          first (impair_set + impair_validate + the engine's check: every
 *          problem, each prefixed "a_to_b: " / "b_to_a: "), then applied
 *          both or neither (the first is put back when the second fails).
 *                                     -> {"ok":true,"state":STATE} or
 *          {"ok":false,"invalid":true|false,"errors":[TEXT,...]}
 *          (invalid: a validation error, nothing was tried)
 *   {"op":"lease"}                    -> {"ok":true,"state":STATE}; when this
 *          connection closes, each direction last set THROUGH this connection
 *          gets back its dial of the lease's start (a later set by another
 *          connection stands), and a last line {"ok":true,"lease_ended":true,
 *          "restored":{DIR:impair_summary,...}} is sent. One lease at a time:
 *          {"ok":false,"errors":["bridge is leased by another console (pid N)"]}
 *   STATE = {"pid","engine","if_a","if_b","leased_by"(pid, 0 = none),
 *            "a_to_b":DIR,"b_to_a":DIR}  (counters: the engine's; the
 *            kernel engine's as bridgectl_kstats below)
 *   DIR   = {"dial":impair_summary,"fields":{FIELD:VALUE},"rx_packets",
 *            "rx_bytes","tx_packets","tx_bytes","lost","duplicated",
 *            "corrupted","reordered","drops"}
 *
 * The engine plugs in through struct bridgectl_ops; the server never prints.
 */
#ifndef LINKLAB_BRIDGECTL_H
#define LINKLAB_BRIDGECTL_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/bridge/bridge.h"
#include "linklab/base/err.h"
#include "linklab/model/impair.h"

struct peer;                            /* peer.h */

#define BRIDGECTL_MAX_CLIENTS 16
#define BRIDGECTL_LINE_MAX 65536       /* bytes in one request/reply line */

/* One direction's counters as the state reports them. */
struct bridgectl_counters {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t lost, duplicated, corrupted, reordered;
	uint64_t drops;                 /* limit + rate + socket drops */
};

/* How the server reaches the engine; every callback runs on the server
 * thread (apply never concurrently with itself). */
struct bridgectl_ops {
	/* Put dial d on direction dir (an empty dial = plain forwarding).
	 * 0, or -errno with err filled; on failure the direction must hold
	 * what it held before. Required. */
	int (*apply)(void *arg, enum bridge_dir dir, const struct impair *d,
		     struct ll_err *err);
	/* Engine-specific validation of d (e.g. the kernel engine without
	 * netem): add errors to diag. Optional. */
	void (*check)(void *arg, enum bridge_dir dir, const struct impair *d,
		      struct ll_diag *diag);
	/* Direction dir's counters now. Optional (zeros). */
	void (*counters)(void *arg, enum bridge_dir dir,
			 struct bridgectl_counters *c);
};

/* What the state names. */
struct bridgectl_info {
	int pid;                        /* the bridge process */
	char engine[8];                 /* "user" or "kernel" */
	char if_a[IF_NAMESIZE], if_b[IF_NAMESIZE];
	unsigned workers;               /* the user engine's reading threads per
					 * direction; 0: the kernel engine */
};

struct bridgectl;

/* The control socket path of bridge process pid in this network
 * namespace. 0, -ENAMETOOLONG (sun_path holds 107 bytes: shorten
 * $LINKLAB_RUN_DIR), or journal_netns's error. */
int bridgectl_sock_path(int pid, char *buf, size_t len, struct ll_err *err);

/* Serve the socket of info->pid (journal directory created 0700 if
 * missing; socket files of this namespace whose process is gone, e.g. a
 * bridge killed with -9, are removed first) from a new thread.
 * dial: what both directions hold now. -errno with err (socket, bind,
 * thread); nothing left behind on failure. */
int bridgectl_start(const struct bridgectl_ops *ops, void *arg,
		    const struct bridgectl_info *info, const struct impair dial[2],
		    struct bridgectl **out, struct ll_err *err);

/* Close every connection (a lease is NOT restored here: the bridge is
 * stopping and puts its ports back itself), join the thread, remove the
 * socket file, free. NULL is fine. */
void bridgectl_stop(struct bridgectl *s);

/* --- kernel engine counters ------------------------------------------------
 * The Linux bridge counts nothing per direction, so a direction's counters
 * are read from its ports, relative to bridgectl_kstats_open (a fresh bridge
 * starts at 0 on old veths):
 *   A->B rx_packets/rx_bytes: IF_A's link rx counters (frames that entered
 *        IF_A; a frame the bridge does not forward, e.g. STP, counts too);
 *        tx_packets/tx_bytes: IF_B's link tx counters (frames that left IF_B,
 *        after its qdisc); B->A the other way round (struct link_stats,
 *        peer.h link_stats op). Packets as the kernel counts skbs: a GSO
 *        super-packet (TSO from a veth peer) is one; bytes are exact.
 *   drops: the egress port's root qdisc drops (TCA_STATS2 qstats.drops via
 *        the peer's read_qdiscs: tbf's queue overflow; a tbf root also
 *        counts the drops of a netem under it, so the root alone is summed;
 *        overlimits - tbf throttling a packet - are not drops). A qdisc
 *        replaced through the control socket starts again at 0: drops are
 *        accumulated across such changes (read before, re-based after).
 *   lost, duplicated, corrupted, reordered: always 0. netem (sch_netem.c)
 *        counts a random loss and a queue-limit overflow in the same
 *        qstats.drops, so the kernel cannot tell netem loss from queue drops:
 *        both are in drops; it keeps no count of duplicates, corruptions or
 *        reorders. (This host's kernel has no netem at all.)
 * Every read goes through p (the local peer, whose netlink socket the kernel
 * engine's apply uses too): a mutex in the object serialises them, so read
 * from any thread; the kernel engine's control socket applies under it. */
struct bridgectl_kstats;

/* Take the baseline of if_a/if_b (link counters, egress root qdisc drops)
 * through p (p->ops->counters->link_stats required: -ENOTSUP otherwise). p must
 * outlive the object. -ENODEV, -EIO (netlink), -ENOMEM; err says which. */
int bridgectl_kstats_open(struct peer *p, const char *if_a, const char *if_b,
			  struct bridgectl_kstats **out, struct ll_err *err);

/* Direction dir's counters since open (the rules above). On a failed read
 * c gets the last values read and -errno is returned with err filled (err
 * may be NULL). Any thread. */
int bridgectl_kstats_read(struct bridgectl_kstats *k, enum bridge_dir dir,
			  struct bridgectl_counters *c, struct ll_err *err);

/* Free (NULL is fine). Stop the control socket that uses k first. */
void bridgectl_kstats_close(struct bridgectl_kstats *k);

/* The two engines behind the socket (what `linklab bridge` starts; the
 * struct bridgectl_ops of each is built here):
 * user: a direction's model is swapped by bridge_reconfigure with the
 *   config emu_config_build makes of the new dial (its delay table loaded
 *   into one of two slots per direction, the one the running model does not
 *   use); a dial equal to the start dial gets back cfg[] (the models the
 *   command built, e.g. a --distribution FILE table, which must outlive the
 *   server). Validation: what emu_config_build refuses.
 * kernel: the local peer's apply on the egress port (egress[BRIDGE_A_TO_B]
 *   is IF_B), clear for an empty dial; a port whose start dial is not empty
 *   counts as ours. Validation: no scope fields (direction, dst, dport), and
 *   with has_netem == 0 nothing that needs netem. Counters from ks
 *   (bridgectl_kstats_*, opened on the same p; NULL: zeros); every apply
 *   runs under ks's mutex, so the command may read ks meanwhile.
 * p and br must outlive the server (bridgectl_stop first). Errors as
 * bridgectl_start. */
int bridgectl_serve_user(struct bridge *br, const struct bridgectl_info *info,
			 const struct impair dial[2], const struct emu_config cfg[2],
			 struct bridgectl **out, struct ll_err *err);
int bridgectl_serve_kernel(struct peer *p, struct bridgectl_kstats *ks,
			   const char *const egress[2], int has_netem,
			   const struct bridgectl_info *info, const struct impair dial[2],
			   struct bridgectl **out, struct ll_err *err);

/* What both directions hold now (out[2]); returns a generation number that
 * changes whenever a set or a lease restore changed them. Any thread. */
uint64_t bridgectl_dials(struct bridgectl *s, struct impair out[2]);

/* Pid of the connection holding the lease, 0 if none. Any thread. */
int bridgectl_lease_pid(struct bridgectl *s);

/* --- the protocol, pure (tests, the server) -------------------------------- */

/* Parse a "set" request (a JSON object text): want[] gets cur[] with each
 * direction given replaced by its fields; *dirs the mask of directions given
 * (1 << BRIDGE_A_TO_B | 1 << BRIDGE_B_TO_A). Every problem (not an object, a
 * direction that is not an object, unknown field, bad value, tc's
 * cross-field rules via impair_validate) goes to diag, prefixed with the
 * direction; warnings too. 0, or -EINVAL if any error. */
int bridgectl_parse_set(const char *line, const struct impair cur[2],
			struct impair want[2], unsigned *dirs,
			struct ll_diag *diag);

/* Are two dials the same (same fields set, same values as tc text)? */
bool bridgectl_dial_equal(const struct impair *a, const struct impair *b);

/* --- client -------------------------------------------------------------------- */

/* Which bridge to talk to: pid > 0 that one (it must run in this network
 * namespace), else the only one running here. *found gets its pid.
 * -ESRCH "no linklab bridge runs in this network namespace", -ENOENT
 * (pid not running here), -EEXIST "several ... give --pid" (err lists the
 * pids), or bridge_status_list's error. */
int bridgectl_find(int pid, int *found, struct ll_err *err);

struct bridgectl_client;

/* Connect to bridge pid's socket (bridgectl_find first). -errno with err. */
int bridgectl_client_open(int pid, struct bridgectl_client **out,
			  struct ll_err *err);
/* The socket (for poll in a relay). */
int bridgectl_client_fd(const struct bridgectl_client *c);
/* Send one line (a '\n' is added). -errno (EPIPE: the bridge went away). */
int bridgectl_client_send(struct bridgectl_client *c, const char *line,
			  struct ll_err *err);
/* Read one reply line (without '\n') into a malloc'd string, waiting at
 * most timeout_ms (< 0 forever). -ETIMEDOUT, -ECONNRESET (EOF), -EMSGSIZE,
 * -errno. */
int bridgectl_client_recv(struct bridgectl_client *c, char **line,
			  int timeout_ms, struct ll_err *err);
void bridgectl_client_close(struct bridgectl_client *c);

#endif
