/* SPDX-License-Identifier: MIT */
/* owner.h - the console's hold on what it drives (peer_lock.h): each local
 * interface it changes (a lock per interface on A) and the whole remote
 * peer B (a keeper on B). A second console is refused, naming the holder;
 * what a dead console (kill -9) left impaired is found at start and handed
 * to this console, whose quit then restores it. Never prints. */
#ifndef LINKLAB_OWNER_H
#define LINKLAB_OWNER_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/peer/peer_lock.h"
#include "linklab/peer/peerset.h"

#define OWNER_MAX_LOCAL 8
#define OWNER_MAX_LEFT 16

struct owner_left {
	int side;                      /* 0 = A, 1 = B */
	char dev[IF_NAMESIZE];
};

struct owner {
	struct peer *b;                /* B while held, else NULL */
	uint64_t netns;                /* this host's namespace (A) */
	bool local;                    /* A's locks can be taken (root) */
	int nl;
	struct peer_lock *l[OWNER_MAX_LOCAL];
	int nleft;                     /* leftovers of dead consoles, taken */
	struct owner_left left[OWNER_MAX_LEFT];
	char note[512];                /* "leftovers found: A veth-a, B
					* veth-b, quit restores them (left by
					* console pid N ...)" and/or why B is
					* not held; "" if nothing to say */
};

/* Take A's preselected interface (ps->dev_a) and peer B (when ps->has_b
 * and its backend can be held), after taking over the records of dead
 * consoles on A and on B: their devices (still journalled) land in
 * left[]. -EBUSY when a live console holds either (err names it: pid,
 * user, host, since when; nothing is held then). Other failures (not root,
 * no flock(1) on B) are said in note, not returned. */
int owner_take(struct owner *o, struct peerset *ps, struct ll_err *err);

/* Before changing dev on A: hold its lock (0 at once if held already).
 * -EBUSY naming the live holder. 0 when locks cannot be taken (not
 * root). */
int owner_local(struct owner *o, const char *dev, struct ll_err *err);

/* dev on side (0 = A, 1 = B) was changed: B's keeper records it. */
void owner_changed(struct owner *o, int side, const char *dev);

/* Let everything go: clean (all restored) drops the records, else they
 * stay for the next run to find. */
void owner_release(struct owner *o, bool clean);

#endif
