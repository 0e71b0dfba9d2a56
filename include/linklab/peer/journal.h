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
 */
#ifndef LINKLAB_JOURNAL_H
#define LINKLAB_JOURNAL_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"

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
};

/* The journal directory ($LINKLAB_RUN_DIR or /run/linklab). */
const char *journal_dir(void);

/* Inode of this process's network namespace. 0 or -errno. */
int journal_netns(uint64_t *ino, struct ll_err *err);

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
