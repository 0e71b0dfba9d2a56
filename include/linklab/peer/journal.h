/* SPDX-License-Identifier: MIT */
/* journal.h - what was on an interface before linklab first changed it, kept
 * on disk so quit, Ctrl-C, SIGTERM, a lost session and even kill -9 (at the
 * next start or `linklab clear --all`) can put it back.
 *
 * One JSON file per interface in journal_dir() (/run/linklab, or
 * $LINKLAB_RUN_DIR), named "<netns inode>-<ifindex>.json" - never the
 * interface name, which can be hostile. Fields: dev, ifindex, netns, kind,
 * handle, default (true when the original root was the kernel's own, handle
 * 0:, e.g. noqueue, pfifo_fast, mq, fq_codel), options (hex of the raw
 * TCA_OPTIONS payload, so a non-default original can be replayed).
 *
 * Version 2 (written now) is an extensible object: "version": 2, the fields
 * above, "identity" {"cookie": SO_NETNS_COOKIE of the namespace as a
 * string, "mac": link address} so a record never goes onto another device
 * that recycled the netns inode and ifindex, "applied" {"kind", "handle"}:
 * the root linklab's last apply left (clear refuses to overwrite anything
 * else), and "parts": a list of {"type": ...} objects. Part "tc" holds
 * "objects": every qdisc, class and filter (nltree.h) with "t" q/c/f, kind,
 * parent, handle, info, chain, opts (hex TCA_OPTIONS). Readers skip parts of
 * a type they do not know; a version-1 file (no parts) restores its root.
 */
#ifndef LINKLAB_JOURNAL_H
#define LINKLAB_JOURNAL_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/netlink/nltree.h"

#define JOURNAL_OPTS_MAX 2048
#define JOURNAL_LIST_MAX 64

struct journal_entry {
	uint64_t netns;          /* st_ino of /proc/self/ns/net */
	int ifindex;
	char dev[IF_NAMESIZE];   /* for display only */
	char kind[16];           /* original root qdisc kind */
	uint32_t handle;         /* original root handle (TC_H value) */
	bool is_default;         /* kernel default: restore = delete root */
	size_t optlen;           /* bytes in opts */
	unsigned char opts[JOURNAL_OPTS_MAX];
	/* ingress shaping: the IFB device linklab created for this
	 * interface ("" = none) - clear deletes it and the ingress qdisc */
	char ifb[IF_NAMESIZE];
	/* identity of the device (version 2; 0 / "" = unknown) */
	uint64_t cookie;         /* SO_NETNS_COOKIE of its namespace */
	char mac[24];            /* link address, "aa:bb:cc:dd:ee:ff" */
	/* root qdisc linklab's last successful apply left ("" = none yet) */
	char applied_kind[16];
	uint32_t applied_handle;
	/* what apply --force accepted losing ("" = nothing): clear says so */
	char lost[300];
	bool has_tree;           /* part "tc" present */
	struct nltree tree;      /* every qdisc, class, filter before linklab */
};

/* The journal directory ($LINKLAB_RUN_DIR or /run/linklab). */
const char *journal_dir(void);

/* Inode of this process's network namespace. 0 or -errno. */
int journal_netns(uint64_t *ino, struct ll_err *err);

/* SO_NETNS_COOKIE of this process's network namespace (kernel >= 5.14),
 * 0 when the kernel cannot tell. */
uint64_t journal_netns_cookie(void);

/* Whether the network namespace of inode ino (as journal_netns gives) still
 * exists: a process is in it (/proc/PID/ns/net) or a name in /run/netns
 * holds it. A record of a gone namespace can never be restored. */
bool journal_netns_alive(uint64_t ino);

/* Record what linklab's apply left on the device (root kind and handle).
 * 0, -ENOENT, or -errno. */
int journal_set_applied(uint64_t netns, int ifindex, const char *kind,
			uint32_t handle, struct ll_err *err);

#define JOURNAL_PATH_MAX 512

/* Files in journal_dir() that look like interface records (*.json of the
 * "<netns>-<ifindex>" form) but cannot be read as one (empty, not JSON,
 * fields missing): their paths, up to max. 0 or -errno. */
int journal_list_damaged(char (*paths)[JOURNAL_PATH_MAX], int max, int *n,
			 struct ll_err *err);

/* Remove one record file by path (a damaged one, reported by
 * journal_list_damaged). 0 or -errno. */
int journal_remove_path(const char *path, struct ll_err *err);

/* Record e unless an entry for (e->netns, e->ifindex) exists: the FIRST
 * original wins. Creates the directory (0700). Returns 1 if recorded, 0 if
 * an entry already existed (left untouched), or -errno. */
int journal_record(const struct journal_entry *e, struct ll_err *err);

/* Set (or with ifb "" drop) the IFB device name of an existing entry,
 * keeping the journalled original. Written before the IFB is created, so a
 * kill -9 in between still leaves a trace for clear --all. 0, -ENOENT if
 * there is no entry, or -errno. */
int journal_set_ifb(uint64_t netns, int ifindex, const char *ifb,
		    struct ll_err *err);

/* Read the entry for (netns, ifindex). 0, -ENOENT if none, -EINVAL if the
 * file is damaged, or -errno. */
int journal_lookup(uint64_t netns, int ifindex, struct journal_entry *out,
		   struct ll_err *err);

/* Remove the entry (no error if there is none). 0 or -errno. */
int journal_remove(uint64_t netns, int ifindex, struct ll_err *err);

/* All entries (every namespace), up to max. *n gets the count. Damaged
 * files are skipped. 0 or -errno (a missing directory is 0 entries). */
int journal_list(struct journal_entry *out, int max, int *n,
		 struct ll_err *err);

#endif
