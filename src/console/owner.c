/* SPDX-License-Identifier: MIT */
/* owner.c - the console's hold on its peers (owner.h over peer_lock.h). */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "linklab/console/owner.h"
#include "linklab/peer/enghook.h"
#include "linklab/peer/journal.h"

static void owner_left_add(struct owner *o, int side, const char *dev)
{
	int i;

	for (i = 0; i < o->nleft; i++)
		if (o->left[i].side == side && !strcmp(o->left[i].dev, dev))
			return;
	if (o->nleft < OWNER_MAX_LEFT && dev[0]) {
		o->left[o->nleft].side = side;
		snprintf(o->left[o->nleft++].dev, IF_NAMESIZE, "%s", dev);
	}
}

static void owner_note_add(struct owner *o, const char *text)
{
	size_t u = strlen(o->note);

	snprintf(o->note + u, sizeof(o->note) - u, "%s%s", u ? "; " : "", text);
}

int owner_local(struct owner *o, const char *dev, struct ll_err *err)
{
	struct peer_lock_owner prev;
	struct peer_lock *l;
	bool stale;
	int i, rc;
	unsigned idx;

	if (!o->local || !dev || !dev[0])
		return 0;
	for (i = 0; i < o->nl; i++)
		if (!strcmp(peer_lock_dev(o->l[i]), dev))
			return 0;
	if (o->nl >= OWNER_MAX_LOCAL)
		return ll_err_set(err, -ENOSPC, "%s: more than %d interfaces held",
				  dev, OWNER_MAX_LOCAL);
	idx = if_nametoindex(dev);
	if (!idx)
		return 0;     /* no such interface: the apply says so */
	rc = peer_lock_take(o->netns, (int)idx, dev, &l, &prev, &stale, err);
	if (rc == -EBUSY)
		return rc;
	if (rc < 0) {
		/* cannot record the owner (e.g. /run/linklab not writable):
		 * go on without a hold, and say it once */
		if (!strstr(o->note, "not held"))
			owner_note_add(o, "A: not held (another console is not kept off it)");
		return 0;
	}
	o->l[o->nl++] = l;
	if (stale)
		owner_left_add(o, 0, dev);
	return 0;
}

/* A: the records of dead consoles in this namespace. The interface must
 * still be the one recorded (same name at the same ifindex) and still
 * journalled or hooked to the endpoint engine; records without either are
 * dropped. */
static void owner_take_stale_a(struct owner *o, char *who, size_t wlen)
{
	struct peer_lock_owner st[OWNER_MAX_LOCAL];
	struct journal_entry *je = NULL;
	int n = 0, i;

	if (peer_lock_stale(o->netns, st, OWNER_MAX_LOCAL, &n, NULL) < 0)
		return;
	for (i = 0; i < n; i++) {
		const char *dev = st[i].ndev ? st[i].dev[0] : "";
		unsigned idx = dev[0] ? if_nametoindex(dev) : 0;
		static struct journal_entry e;

		je = &e;
		struct enghook_info hook;

		if (!idx || (int)idx != st[i].ifindex ||
		    (journal_lookup(o->netns, st[i].ifindex, je, NULL) < 0 &&
		     enghook_get(o->netns, st[i].ifindex, &hook) < 0)) {
			peer_lock_drop_stale(o->netns, st[i].ifindex);
			continue;
		}
		if (owner_local(o, dev, NULL) == 0) {
			owner_left_add(o, 0, dev);
			if (!who[0])
				peer_lock_describe(&st[i], who, wlen);
		}
	}
}

int owner_take(struct owner *o, struct peerset *ps, struct ll_err *err)
{
	struct peer_lock_owner prev;
	char who[200] = "", whob[200] = "", list[200] = "", part[64];
	bool stale = false;
	int rc, i;

	memset(o, 0, sizeof(*o));
	/* A's locks are for this host's real interfaces (the netlink
	 * backend), not for a stand-in */
	o->local = geteuid() == 0 && ps->a.ops && ps->a.ops->name &&
		   !strcmp(ps->a.ops->name, "local") &&
		   journal_netns(&o->netns, NULL) == 0;
	if (o->local)
		owner_take_stale_a(o, who, sizeof(who));
	rc = owner_local(o, ps->dev_a, err);
	if (rc < 0)
		goto fail;
	if (ps->has_b && ps->b.ops->lock) {
		struct ll_err e = { 0 };

		rc = ps->b.ops->lock->lock_take(&ps->b, &prev, &stale, &e);
		if (rc == -EBUSY) {
			if (err)
				*err = e;
			goto fail;
		}
		if (rc < 0) {
			char m[300];

			snprintf(m, sizeof(m), "B: not held (%.240s)", e.msg);
			owner_note_add(o, m);
		} else {
			o->b = &ps->b;
			if (stale && prev.ndev) {
				peer_lock_describe(&prev, whob, sizeof(whob));
				for (i = 0; i < prev.ndev; i++) {
					owner_left_add(o, 1, prev.dev[i]);
					/* still this console's to restore */
					owner_changed(o, 1, prev.dev[i]);
				}
			}
		}
	}
	for (i = 0; i < o->nleft; i++) {
		snprintf(part, sizeof(part), "%s%s %s", i ? ", " : "",
			 o->left[i].side ? "B" : "A", o->left[i].dev);
		strncat(list, part, sizeof(list) - strlen(list) - 1);
	}
	if (o->nleft) {
		char m[512], rest[sizeof(o->note)];

		snprintf(m, sizeof(m), "leftovers found: %.150s, quit restores them (left by %.200s, which ended without restoring)",
			 list, who[0] ? who : whob);
		/* the leftovers first */
		memcpy(rest, o->note, sizeof(rest));
		snprintf(o->note, sizeof(o->note), "%s", m);
		if (rest[0])
			owner_note_add(o, rest);
	}
	return 0;
fail:
	/* refused: this console changed nothing; only a dead console's
	 * leftovers keep their records */
	for (i = 0; i < o->nl; i++) {
		bool left = false;
		int k;

		for (k = 0; k < o->nleft; k++)
			left |= o->left[k].side == 0 &&
				!strcmp(o->left[k].dev, peer_lock_dev(o->l[i]));
		peer_lock_release(o->l[i], !left);
	}
	o->nl = 0;
	o->b = NULL;
	return rc;
}

void owner_changed(struct owner *o, int side, const char *dev)
{
	if (side == 1 && o->b && o->b->ops->lock)
		o->b->ops->lock->lock_note(o->b, dev);
}

void owner_release(struct owner *o, bool clean)
{
	int i;

	for (i = 0; i < o->nl; i++)
		peer_lock_release(o->l[i], clean);
	o->nl = 0;
	if (o->b && o->b->ops->lock)
		o->b->ops->lock->lock_release(o->b, clean);
	o->b = NULL;
}
