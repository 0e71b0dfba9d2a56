/* SPDX-License-Identifier: MIT */
/* enghook.h - the endpoint engine's hooks on one interface of this host's
 * network namespace: the `linklab engine` process (engine.h) and the
 * iptables rule that feeds it (mangle POSTROUTING `-o DEV -j LLENG-<ifindex>-<q>`;
 * that chain skips the engine's own re-sent packets (fwmark), the SSH port
 * when asked, and sends the rest - or the dial's dst/dport scope - to
 * `NFQUEUE --queue-num q --queue-bypass` (TCP to q + 1), so a dead engine
 * means packets pass). The same chain in ip6tables for IPv6 when there is
 * an ip6tables; a dst scope hooks its own family only.
 *
 * Each hook is recorded before the rule exists in
 * journal_dir()/engine-<netns inode>-<ifindex>.hook (JSON: dev, ifindex,
 * netns, pid, queue, iptables, ip6tables, table, chain, stat, dial), so clear, clear --all
 * and the next apply remove a rule and stop an engine left by kill -9.
 */
#ifndef LINKLAB_ENGHOOK_H
#define LINKLAB_ENGHOOK_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"

/* Which engine holds a dial's netem fields (--engine). */
enum enghook_mode {
	ENGHOOK_AUTO = 0,       /* netem when the kernel has it, else user */
	ENGHOOK_KERNEL,         /* sch_netem only */
	ENGHOOK_USER,           /* linklab's engine */
};

/* "auto", "kernel", "user" -> mode; -1 for anything else. */
int enghook_mode_parse(const char *s);
const char *enghook_mode_name(int mode);

/* A running (or left) hook, with the engine's last counters. */
struct enghook_info {
	char dev[IF_NAMESIZE];
	int ifindex;
	long pid;
	bool alive;              /* the engine process runs */
	bool stopped;            /* ... but is stopped (SIGSTOP, a debugger):
				  * packets wait in its queue */
	int hooked;              /* its POSTROUTING jump is there: 1, gone
				  * (removed by hand): 0, not checked: -1
				  * (enghook_probe checks) */
	unsigned queue;
	char iptables[64];       /* the iptables binary the rule was set with */
	char ip6tables[64];      /* ... and ip6tables ("": IPv4 only) */
	char chain[32];
	char dial[512];          /* the dial it runs, "--delay 25ms --loss 1%" */
	bool have_counters;
	uint64_t in, out, lost, duplicated, corrupted, reordered, queue_drops;
	uint32_t queued;
};

/* Every field of eng the endpoint engine cannot do, named, in one message
 * (-EOPNOTSUPP): slot, slot-packets, slot-bytes, ecn, direction ingress.
 * 0 when it can. */
int enghook_check(const struct impair *eng, const char *dev, struct ll_err *err);

/* Start the engine for the dial eng on dev (its netem fields, and its rate
 * as the model's token bucket after them; the scope goes to the rule) (ifindex, in this namespace netns) and
 * hook it in; a hook already on ifindex is replaced after the new one runs
 * (the old rule and engine are removed last); a detached engine on
 * ifindex's queues that no record names (its record lost) is ended first.
 * Starts are serialised per run directory (flock). exclude_port > 0: TCP
 * packets from or to that port skip the engine (--exclude-ssh). Nothing
 * changes on failure: -ENOENT (no iptables), -EPERM, -EBUSY (queue in use:
 * a linklab engine run by hand that holds it is named; or another live
 * console holds ifindex's owner lock (peer_lock.h): err names it),
 * -EOPNOTSUPP/-EINVAL (the dial, by name), -EIO; err says why. */
int enghook_start(uint64_t netns, const char *dev, int ifindex,
		  const struct impair *eng, int exclude_port, struct ll_err *err);

/* What enghook_start would do, as text into lines (len bytes): the dial,
 * the engine's command line and the iptables/ip6tables commands, one a
 * line, "# " before the notes. Nothing runs or changes. The same refusals
 * as enghook_start (the dial by name, no iptables). */
int enghook_dry_run(uint64_t netns, const char *dev, int ifindex, const struct impair *eng,
		    int exclude_port, char *lines, size_t len, struct ll_err *err);

/* The same for a peer over SSH (its queue numbers and iptables binary are
 * the peer's): the dial and the command the peer runs. */
void enghook_dry_remote(const char *dev, const struct impair *eng, char *lines, size_t len);

/* Remove the hook on ifindex (rule first, then the engine: SIGTERM, SIGKILL
 * after 1 s) and its record. 0 also when there is none: then the chains
 * and the detached engines of ifindex that no record names are removed. */
int enghook_stop(uint64_t netns, int ifindex, struct ll_err *err);

/* Every hook recorded for netns (clear --all), then every LLENG chain and
 * detached linklab engine of netns no record names. 0 or the first
 * error. */
int enghook_stop_all(uint64_t netns, struct ll_err *err);

/* Check that h's POSTROUTING jump (-o dev -j chain) is still in place
 * in each table that holds its chain (iptables, ip6tables -S/-C): sets
 * h->hooked to 1 or 0; -1 when h names no chain
 * or no iptables. A hook whose rule was removed by hand passes traffic
 * unimpaired while its record and engine stay. */
void enghook_probe(struct enghook_info *h);

/* The hook on ifindex: 0, or -ENOENT when there is none. */
int enghook_get(uint64_t netns, int ifindex, struct enghook_info *out);

/* The dial of a hook (its "--FIELD VALUE" text) onto d's fields; 0 or
 * -EINVAL (a field that does not parse is left out). */
int enghook_dial(const struct enghook_info *h, struct impair *d);

#endif
