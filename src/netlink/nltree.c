/* SPDX-License-Identifier: MIT */
/* nltree.c - dump, check, replay and compare the whole tc state of one
 * interface (qdiscs, classes, filters) over rtnetlink. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_mirred.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "linklab/netlink/nlqdisc.h"
#include "linklab/netlink/nltree.h"

#define H_CLSACT_IN  0xfffffff2u
#define H_CLSACT_OUT 0xfffffff3u

static void fmt_handle(uint32_t h, char *buf, size_t len)
{
	if (h == TC_H_ROOT)
		snprintf(buf, len, "root");
	else if (TC_H_MIN(h))
		snprintf(buf, len, "%x:%x", TC_H_MAJ(h) >> 16, TC_H_MIN(h));
	else
		snprintf(buf, len, "%x:", TC_H_MAJ(h) >> 16);
}

const char *nltree_describe(const struct nltree_obj *o, char *buf, size_t len)
{
	char h[16], p[16];

	fmt_handle(o->handle, h, sizeof(h));
	fmt_handle(o->parent, p, sizeof(p));
	if (o->type == NLT_FILTER)
		snprintf(buf, len, "filter %s parent %s prio %u handle %x%s", o->kind,
			 p, o->info >> 16, o->handle, o->chain ? " (chain)" : "");
	else if (o->type == NLT_CLASS)
		snprintf(buf, len, "class %s %s parent %s", o->kind, h, p);
	else if (o->parent == TC_H_ROOT)
		snprintf(buf, len, "qdisc %s %s root", o->kind, h);
	else
		snprintf(buf, len, "qdisc %s %s parent %s", o->kind, h, p);
	return buf;
}

const struct nltree_obj *nltree_root(const struct nltree *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->o[i].type == NLT_QDISC && t->o[i].parent == TC_H_ROOT)
			return &t->o[i];
	return NULL;
}

/* --- dump ----------------------------------------------------------------- */

struct tree_ctx {
	struct nltree *t;
	int ifindex;
	char type;
	uint32_t parent;         /* filters: the block asked for */
};

static void set_bad(struct nltree *t, const char *what, const char *why)
{
	if (!t->bad[0])
		snprintf(t->bad, sizeof(t->bad), "%s%s", what, why);
}

static int on_obj(struct nl_msg *m, void *arg)
{
	struct tree_ctx *c = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(m);
	struct tcmsg *tcm = nlmsg_data(nlh);
	struct nlattr *tb[TCA_MAX + 1];
	struct nltree_obj *o;
	char d[96];

	if (nlh->nlmsg_type != RTM_NEWQDISC && nlh->nlmsg_type != RTM_NEWTCLASS &&
	    nlh->nlmsg_type != RTM_NEWTFILTER)
		return NL_OK;
	if (tcm->tcm_ifindex != c->ifindex ||
	    nlmsg_parse(nlh, sizeof(*tcm), tb, TCA_MAX, NULL) < 0 || !tb[TCA_KIND])
		return NL_OK;
	if (c->t->n >= NLTREE_MAX) {
		set_bad(c->t, "more than 48 tc objects", "");
		return NL_OK;
	}
	o = &c->t->o[c->t->n];
	memset(o, 0, sizeof(*o));
	o->type = c->type;
	nla_strlcpy(o->kind, tb[TCA_KIND], sizeof(o->kind));
	o->parent = c->type == NLT_FILTER ? c->parent : tcm->tcm_parent;
	o->handle = tcm->tcm_handle;
	o->info = c->type == NLT_FILTER ? tcm->tcm_info : 0;
	if (tb[TCA_CHAIN])
		o->chain = nla_get_u32(tb[TCA_CHAIN]);
	if (tb[TCA_OPTIONS]) {
		if (nla_len(tb[TCA_OPTIONS]) > NLTREE_OPTS_MAX) {
			set_bad(c->t, nltree_describe(o, d, sizeof(d)),
				": options too long to keep");
			return NL_OK;
		}
		o->optlen = (uint16_t)nla_len(tb[TCA_OPTIONS]);
		memcpy(o->opts, nla_data(tb[TCA_OPTIONS]), o->optlen);
	}
	if (tb[TCA_STAB])
		set_bad(c->t, nltree_describe(o, d, sizeof(d)), " has a size table (stab)");
	if ((tb[TCA_INGRESS_BLOCK] && nla_get_u32(tb[TCA_INGRESS_BLOCK])) ||
	    (tb[TCA_EGRESS_BLOCK] && nla_get_u32(tb[TCA_EGRESS_BLOCK])))
		set_bad(c->t, nltree_describe(o, d, sizeof(d)), " uses a shared filter block");
	c->t->n++;
	return NL_OK;
}

static int dump_one(struct nl_sock *sk, struct tree_ctx *c, int type,
		    uint32_t parent, const char *what, struct ll_err *err)
{
	struct nl_msg *m = NULL;
	int rc;

	rc = nlqdisc_msg_start(type, NLM_F_DUMP, c->ifindex, 0, parent, 0, NULL,
			       256, &m, err);
	if (rc < 0)
		return rc;
	c->parent = parent;
	rc = nlqdisc_request(sk, m, on_obj, c, what, err);
	nlmsg_free(m);
	return rc;
}

int nltree_dump(struct nl_sock *sk, int ifindex, struct nltree *t,
		struct ll_err *err)
{
	struct tree_ctx c = { t, ifindex, NLT_QDISC, 0 };
	uint32_t parents[NLTREE_MAX + 2];
	int i, np = 0, nbase, rc;

	memset(t, 0, offsetof(struct nltree, o));
	rc = dump_one(sk, &c, RTM_GETQDISC, 0, "dump qdiscs", err);
	if (rc == 0) {
		c.type = NLT_CLASS;
		rc = dump_one(sk, &c, RTM_GETTCLASS, 0, "dump classes", err);
	}
	if (rc < 0)
		return rc;
	/* filter blocks: every classful qdisc and htb class, ingress, clsact */
	for (i = 0; i < t->n && np < NLTREE_MAX; i++) {
		const struct nltree_obj *o = &t->o[i];

		if (o->type == NLT_QDISC && !strcmp(o->kind, "clsact")) {
			parents[np++] = H_CLSACT_IN;
			parents[np++] = H_CLSACT_OUT;
		} else if (o->type == NLT_QDISC && !strcmp(o->kind, "ingress")) {
			parents[np++] = TC_H_MAJ(o->handle);
		} else if (!strcmp(o->kind, "htb") && (o->handle >> 16)) {
			parents[np++] = o->handle;
		}
	}
	c.type = NLT_FILTER;
	nbase = t->n;
	for (i = 0; i < np; i++) {
		rc = dump_one(sk, &c, RTM_GETTFILTER, parents[i], "dump filters", err);
		if (rc < 0)
			return rc;
	}
	/* the per-block tp headers (handle 0, no options) carry nothing to
	 * replay: drop them */
	for (i = nbase; i < t->n; ) {
		if (t->o[i].handle == 0 && t->o[i].optlen == 0) {
			memmove(&t->o[i], &t->o[i + 1], (size_t)(t->n - i - 1) * sizeof(t->o[0]));
			t->n--;
		} else {
			i++;
		}
	}
	return 0;
}

/* --- attribute rewriting -------------------------------------------------- */

struct abuf {
	unsigned char *p;
	size_t len, cap;
	bool over;
};

static size_t put_attr(struct abuf *b, int type, const void *data, size_t dlen)
{
	size_t at = b->len, total = NLA_ALIGN(NLA_HDRLEN + dlen);
	struct nlattr *a;

	if (b->len + total > b->cap) {
		b->over = true;
		return at;
	}
	a = (struct nlattr *)(b->p + b->len);
	a->nla_type = (uint16_t)type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + dlen);
	if (dlen)
		memcpy(b->p + b->len + NLA_HDRLEN, data, dlen);
	memset(b->p + b->len + NLA_HDRLEN + dlen, 0, total - NLA_HDRLEN - dlen);
	b->len += total;
	return at;
}

static void end_nest(struct abuf *b, size_t at)
{
	struct nlattr *a;

	if (b->over)
		return;
	a = (struct nlattr *)(b->p + at);
	a->nla_len = (uint16_t)(b->len - at);
}

/* One action nest (TCA_ACT_KIND, TCA_ACT_OPTIONS, TCA_ACT_COOKIE) with the
 * counters dropped and, for mirred, the index and reference counts zeroed. */
static int rewrite_action(struct nlattr *act, struct abuf *b, int order)
{
	struct nlattr *tb[TCA_ACT_MAX + 1], *mt[TCA_MIRRED_MAX + 1];
	char kind[16] = "";
	size_t nest, on;

	if (nla_parse_nested(tb, TCA_ACT_MAX, act, NULL) < 0 || !tb[TCA_ACT_KIND])
		return -EINVAL;
	nla_strlcpy(kind, tb[TCA_ACT_KIND], sizeof(kind));
	if (strcmp(kind, "mirred") != 0)
		return -ENOTSUP;
	nest = put_attr(b, order | NLA_F_NESTED, NULL, 0);
	put_attr(b, TCA_ACT_KIND, kind, strlen(kind) + 1);
	if (tb[TCA_ACT_COOKIE])
		put_attr(b, TCA_ACT_COOKIE, nla_data(tb[TCA_ACT_COOKIE]),
			 (size_t)nla_len(tb[TCA_ACT_COOKIE]));
	if (tb[TCA_ACT_OPTIONS]) {
		if (nla_parse_nested(mt, TCA_MIRRED_MAX, tb[TCA_ACT_OPTIONS], NULL) < 0 ||
		    !mt[TCA_MIRRED_PARMS] ||
		    nla_len(mt[TCA_MIRRED_PARMS]) < (int)sizeof(struct tc_mirred))
			return -EINVAL;
		{
			struct tc_mirred p;

			memcpy(&p, nla_data(mt[TCA_MIRRED_PARMS]), sizeof(p));
			p.index = 0;
			p.refcnt = 0;
			p.bindcnt = 0;
			on = put_attr(b, TCA_ACT_OPTIONS | NLA_F_NESTED, NULL, 0);
			put_attr(b, TCA_MIRRED_PARMS, &p, sizeof(p));
			end_nest(b, on);
		}
	}
	end_nest(b, nest);
	return 0;
}

/* Options of o as they are replayed (replay) or compared (!replay): htb's
 * version written as 3 and its direct_pkts counter zeroed, u32's counters
 * dropped and its flags reduced to what a request may carry, actions
 * rewritten. -ENOTSUP for an attribute or action linklab does not know. */
static int rewrite(const struct nltree_obj *o, bool replay, struct abuf *b)
{
	struct nlattr *pos;
	int rem;

	b->len = 0;
	b->over = false;
	if (!strcmp(o->kind, "htb") && o->type == NLT_QDISC) {
		nla_for_each_attr(pos, (struct nlattr *)o->opts, o->optlen, rem) {
			if (nla_type(pos) == TCA_HTB_INIT &&
			    nla_len(pos) >= (int)sizeof(struct tc_htb_glob)) {
				struct tc_htb_glob g;

				memcpy(&g, nla_data(pos), sizeof(g));
				g.direct_pkts = 0;
				if (replay)
					g.version = 3;
				put_attr(b, TCA_HTB_INIT, &g, sizeof(g));
			} else {
				put_attr(b, pos->nla_type, nla_data(pos), (size_t)nla_len(pos));
			}
		}
	} else if (!strcmp(o->kind, "u32") && o->type == NLT_FILTER) {
		nla_for_each_attr(pos, (struct nlattr *)o->opts, o->optlen, rem) {
			int t = nla_type(pos);

			if (t == TCA_U32_PCNT || t == TCA_U32_PAD)
				continue;
			if (t == TCA_U32_POLICE)
				return -ENOTSUP;
			if (t == TCA_U32_FLAGS && nla_len(pos) >= 4) {
				uint32_t f = nla_get_u32(pos);

				if (replay)
					f &= TCA_CLS_FLAGS_SKIP_HW | TCA_CLS_FLAGS_SKIP_SW;
				if (f)
					put_attr(b, TCA_U32_FLAGS, &f, 4);
			} else if (t == TCA_U32_ACT) {
				struct nlattr *a;
				int r2, order = 1;
				size_t nest = put_attr(b, TCA_U32_ACT | NLA_F_NESTED, NULL, 0);

				nla_for_each_nested(a, pos, r2) {
					int rc = rewrite_action(a, b, order++);

					if (rc < 0)
						return rc;
				}
				end_nest(b, nest);
			} else if (t >= TCA_U32_CLASSID && t <= TCA_U32_FLAGS) {
				put_attr(b, t, nla_data(pos), (size_t)nla_len(pos));
			} else {
				return -ENOTSUP;
			}
		}
	} else {
		if (o->optlen > b->cap)
			return -ENOSPC;
		memcpy(b->p, o->opts, o->optlen);
		b->len = o->optlen;
	}
	return b->over ? -ENOSPC : 0;
}

/* --- check ---------------------------------------------------------------- */

static bool in_list(const char *kind, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(kind, *list))
			return true;
	return false;
}

static const char *const known_qdisc[] = {
	"pfifo", "bfifo", "pfifo_head_drop", "pfifo_fast", "noqueue", "mq", "tbf",
	"htb", "ingress", "clsact", NULL
};
/* classes a qdisc has by itself (no RTM_NEWTCLASS needed) */
static const char *const implicit_class[] = {
	"tbf", "mq", "ingress", "clsact", NULL
};

static bool obj_known(const struct nltree_obj *o)
{
	unsigned char buf[NLTREE_OPTS_MAX * 2];
	struct abuf b = { buf, 0, sizeof(buf), false };
	bool ok;

	if (o->type == NLT_QDISC)
		ok = in_list(o->kind, known_qdisc);
	else if (o->type == NLT_CLASS)
		ok = !strcmp(o->kind, "htb") || in_list(o->kind, implicit_class);
	else
		ok = !strcmp(o->kind, "u32") && o->chain == 0;
	return ok && rewrite(o, true, &b) == 0;
}

int nltree_check(const struct nltree *t, struct ll_err *err)
{
	char d[96];
	int i;

	if (t->bad[0])
		return ll_err_set(err, -ENOTSUP, "%s", t->bad);
	for (i = 0; i < t->n; i++)
		if (!obj_known(&t->o[i]))
			return ll_err_set(err, -ENOTSUP, "%s",
					  nltree_describe(&t->o[i], d, sizeof(d)));
	return 0;
}

void nltree_drop_unknown(struct nltree *t, char *dropped, size_t len)
{
	char d[96];
	int i = 0;

	dropped[0] = '\0';
	while (i < t->n) {
		if (obj_known(&t->o[i])) {
			i++;
			continue;
		}
		snprintf(dropped + strlen(dropped), len - strlen(dropped), "%s%s",
			 dropped[0] ? "; " : "", nltree_describe(&t->o[i], d, sizeof(d)));
		memmove(&t->o[i], &t->o[i + 1], (size_t)(t->n - i - 1) * sizeof(t->o[0]));
		t->n--;
	}
}

/* --- compare -------------------------------------------------------------- */

static const struct nltree_obj *find(const struct nltree *t,
				     const struct nltree_obj *o)
{
	int i;

	for (i = 0; i < t->n; i++) {
		const struct nltree_obj *x = &t->o[i];

		if (x->type == o->type && x->parent == o->parent &&
		    x->handle == o->handle && x->info == o->info && x->chain == o->chain)
			return x;
	}
	return NULL;
}

static bool same(const struct nltree_obj *a, const struct nltree_obj *b)
{
	unsigned char ba[NLTREE_OPTS_MAX * 2], bb[NLTREE_OPTS_MAX * 2];
	struct abuf xa = { ba, 0, sizeof(ba), false }, xb = { bb, 0, sizeof(bb), false };
	int ra, rb;

	if (strcmp(a->kind, b->kind))
		return false;
	ra = rewrite(a, false, &xa);
	rb = rewrite(b, false, &xb);
	if (ra < 0 || rb < 0)
		return a->optlen == b->optlen && !memcmp(a->opts, b->opts, a->optlen);
	return xa.len == xb.len && !memcmp(ba, bb, xa.len);
}

int nltree_diff(const struct nltree *want, const struct nltree *got,
		char *why, size_t len)
{
	const struct nltree_obj *x;
	char d[96];
	int i;

	for (i = 0; i < want->n; i++) {
		x = find(got, &want->o[i]);
		if (!x) {
			snprintf(why, len, "%s is missing",
				 nltree_describe(&want->o[i], d, sizeof(d)));
			return 1;
		}
		if (!same(&want->o[i], x)) {
			snprintf(why, len, "%s differs (now %s)",
				 nltree_describe(&want->o[i], d, sizeof(d)), x->kind);
			return 1;
		}
	}
	for (i = 0; i < got->n; i++)
		if (!find(want, &got->o[i])) {
			snprintf(why, len, "%s is there in addition",
				 nltree_describe(&got->o[i], d, sizeof(d)));
			return 1;
		}
	if (why && len)
		why[0] = '\0';
	return 0;
}

/* --- restore -------------------------------------------------------------- */

static int send_obj(struct nl_sock *sk, int ifindex, const char *dev,
		    const struct nltree_obj *o, int flags, struct ll_err *err)
{
	unsigned char buf[NLTREE_OPTS_MAX * 2];
	struct abuf b = { buf, 0, sizeof(buf), false };
	int type = o->type == NLT_QDISC ? RTM_NEWQDISC :
		   o->type == NLT_CLASS ? RTM_NEWTCLASS : RTM_NEWTFILTER;
	struct nl_msg *m = NULL;
	char what[160], d[96];
	int rc;

	rc = rewrite(o, true, &b);
	if (rc < 0)
		return ll_err_set(err, rc, "%s: cannot rebuild %s", dev,
				  nltree_describe(o, d, sizeof(d)));
	rc = nlqdisc_msg_start(type, flags, ifindex, o->handle, o->parent, o->info,
			       o->kind, b.len + 512, &m, err);
	if (rc < 0)
		return rc;
	if ((o->type == NLT_FILTER && nla_put_u32(m, TCA_CHAIN, o->chain) < 0) ||
	    ((o->optlen || b.len) && nla_put(m, TCA_OPTIONS, (int)b.len, buf) < 0)) {
		nlmsg_free(m);
		return ll_err_set(err, -ENOMEM, "netlink message too small");
	}
	snprintf(what, sizeof(what), "restore %s on %s", nltree_describe(o, d, sizeof(d)), dev);
	rc = nlqdisc_talk(sk, m, what, o->kind, err);
	nlmsg_free(m);
	return rc;
}

static int del_qdisc(struct nl_sock *sk, int ifindex, const char *dev,
		     uint32_t parent, struct ll_err *err)
{
	struct nlqdisc_target tg = { ifindex, parent, 0, 0 };
	struct nl_msg *m = NULL;
	char what[64];
	int rc;

	snprintf(what, sizeof(what), "delete qdisc on %s", dev);
	rc = nlqdisc_build_del(&tg, &m, err);
	if (rc < 0)
		return rc;
	rc = nlqdisc_talk(sk, m, what, NULL, err);
	nlmsg_free(m);
	return rc;
}

/* Does the parent of o exist yet (the root, a qdisc or class created so
 * far, or a queue of a multi-queue root)? */
static bool parent_ready(const struct nltree *t, const bool *done,
			 const struct nltree_obj *o)
{
	uint32_t p = o->parent;
	int i;

	if (p == TC_H_ROOT || p == TC_H_INGRESS)
		return true;
	for (i = 0; i < t->n; i++) {
		const struct nltree_obj *x = &t->o[i];

		if (!done[i] || x == o)
			continue;
		if (x->type == NLT_QDISC && TC_H_MAJ(x->handle) == TC_H_MAJ(p) &&
		    (TC_H_MIN(p) == 0 || !strcmp(x->kind, "mq") ||
		     in_list(x->kind, implicit_class) || o->type == NLT_FILTER))
			return true;
		if (x->type == NLT_CLASS && x->handle == p)
			return true;
	}
	return false;
}

/* Which of t's objects to create, in order; skip those already there
 * (kernel defaults: a mq root's per-queue children, implicit classes, the
 * root hash table of each u32 filter list). */
static bool skip_obj(const struct nltree *t, const struct nltree *now,
		     const struct nltree_obj *o, int idx)
{
	const struct nltree_obj *x = find(now, o);
	int i;

	if (x && same(o, x))
		return true;
	if (o->type == NLT_CLASS && strcmp(o->kind, "htb"))
		return true;
	if (o->type == NLT_FILTER && !strcmp(o->kind, "u32") &&
	    (o->handle & 0xfffff) == 0) {
		/* a hash table: the last one listed for its prio is the one
		 * the kernel makes with the list */
		for (i = idx + 1; i < t->n; i++)
			if (t->o[i].type == NLT_FILTER && t->o[i].parent == o->parent &&
			    t->o[i].info == o->info && (t->o[i].handle & 0xfffff) == 0)
				return false;
		return true;
	}
	return false;
}

/* The handle of the root hash table of o's filter list (the last hash
 * table listed for its parent and prio; u32 lists only), for ordering. */
static uint32_t list_key(const struct nltree *t, int idx)
{
	const struct nltree_obj *o = &t->o[idx];
	uint32_t key = 0;
	int i;

	for (i = 0; i < t->n; i++)
		if (t->o[i].type == NLT_FILTER && t->o[i].parent == o->parent &&
		    t->o[i].info == o->info && !strcmp(t->o[i].kind, "u32") &&
		    (t->o[i].handle & 0xfffff) == 0)
			key = t->o[i].handle;
	return key;
}

static int replay(struct nl_sock *sk, int ifindex, const char *dev,
		  const struct nltree *t, struct nltree *now,
		  struct ll_err *err)
{
	bool done[NLTREE_MAX] = { false }, dirty = false;
	int i, left, progress, rc;

	for (i = 0; i < t->n; i++)
		if (skip_obj(t, now, &t->o[i], i))
			done[i] = true;
	/* the root ht of each u32 list comes with its first filter: lists in
	 * the order of those hts (800:, 801:, ...), knodes after their hts */
	do {
		progress = 0;
		left = 0;
		for (i = 0; i < t->n; i++) {
			const struct nltree_obj *o = &t->o[i];

			if (done[i])
				continue;
			if (o->type == NLT_FILTER) {
				left++;
				continue;   /* after every qdisc and class */
			}
			if (!parent_ready(t, done, o)) {
				left++;
				continue;
			}
			/* what the kernel made by itself with the last object
			 * (a mq root's per-queue children) stays */
			if (dirty) {
				rc = nltree_dump(sk, ifindex, now, err);
				if (rc < 0)
					return rc;
				dirty = false;
			}
			if (skip_obj(t, now, o, i)) {
				done[i] = true;
				progress++;
				continue;
			}
			dirty = true;
			rc = send_obj(sk, ifindex, dev, o, o->type == NLT_QDISC ?
				      NLM_F_CREATE | NLM_F_REPLACE : NLM_F_CREATE | NLM_F_EXCL,
				      err);
			if (rc < 0)
				return rc;
			done[i] = true;
			progress++;
		}
	} while (progress && left);
	for (i = 0; i < t->n; i++)
		if (!done[i] && t->o[i].type != NLT_FILTER) {
			char d[96];

			return ll_err_set(err, -EIO, "%s: cannot rebuild %s: its parent is gone",
					  dev, nltree_describe(&t->o[i], d, sizeof(d)));
		}
	/* filters: one list (parent, prio, protocol) at a time, lists in the
	 * order of their root hash tables (the kernel numbers each new list's
	 * table 800:, 801:, ... as it makes it); in a list its own hash
	 * tables first (reverse listing = creation order), then key nodes */
	for (;;) {
		uint32_t key = 0, parent = 0, info = 0;
		bool any = false;

		for (i = 0; i < t->n; i++) {
			uint32_t k;

			if (done[i] || t->o[i].type != NLT_FILTER)
				continue;
			k = list_key(t, i);
			if (!any || k < key) {
				key = k;
				parent = t->o[i].parent;
				info = t->o[i].info;
				any = true;
			}
		}
		if (!any)
			break;
		for (int pass = 0; pass < 2; pass++)
			for (int k = 0; k < t->n; k++) {
				int j = pass == 0 ? t->n - 1 - k : k;
				const struct nltree_obj *o = &t->o[j];
				bool ht = (o->handle & 0xfffff) == 0;

				if (done[j] || o->type != NLT_FILTER || o->parent != parent ||
				    o->info != info || ht != (pass == 0))
					continue;
				rc = send_obj(sk, ifindex, dev, o, NLM_F_CREATE | NLM_F_EXCL, err);
				if (rc < 0)
					return rc;
				done[j] = true;
			}
		for (i = 0; i < t->n; i++)   /* a list of another kind: one pass */
			if (!done[i] && t->o[i].type == NLT_FILTER && t->o[i].parent == parent &&
			    t->o[i].info == info)
				done[i] = true;
	}
	return 0;
}

int nltree_restore(struct nl_sock *sk, int ifindex, const char *dev,
		   const struct nltree *t, struct ll_err *err)
{
	struct nltree *now = malloc(sizeof(*now)), *want = malloc(sizeof(*want));
	char why[200];
	int i, rc;

	if (!now || !want) {
		free(now);
		free(want);
		return ll_err_set(err, -ENOMEM, "out of memory");
	}
	rc = nltree_dump(sk, ifindex, now, err);
	if (rc == 0 && nltree_diff(t, now, why, sizeof(why)) == 0)
		goto out;       /* already as it was */
	for (i = 0; rc == 0 && i < now->n; i++) {
		const struct nltree_obj *o = &now->o[i];

		if (o->type != NLT_QDISC)
			continue;
		if (o->parent == TC_H_INGRESS)
			rc = del_qdisc(sk, ifindex, dev, TC_H_INGRESS, err);
		else if (o->parent == TC_H_ROOT && (o->handle >> 16))
			rc = del_qdisc(sk, ifindex, dev, TC_H_ROOT, err);
	}
	if (rc == 0)
		rc = nltree_dump(sk, ifindex, now, err);
	if (rc < 0)
		goto out;
	*want = *t;
	rc = replay(sk, ifindex, dev, want, now, err);
	if (rc == 0)
		rc = nltree_dump(sk, ifindex, now, err);
	if (rc == 0 && nltree_diff(t, now, why, sizeof(why)))
		rc = ll_err_set(err, -EIO, "%s: the restored tc state does not read back as recorded: %s",
				dev, why);
out:
	free(now);
	free(want);
	return rc;
}
