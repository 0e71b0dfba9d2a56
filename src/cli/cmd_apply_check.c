/* SPDX-License-Identifier: MIT */
/* cmd_apply_check.c - `linklab apply --check`: would this dial change what
 * the kernel holds? Read each side's qdisc tree back, fold it into a dial,
 * derive both qdisc plans with the interface's MTU and the kernel's HZ and
 * compare them (burst and limits within tc's 1 % rounding, times within
 * 1 us). Nothing is written. Also the read-back dial and the journal flag
 * that `show -J` reports. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <net/if.h>
#include <netinet/in.h>

#include "linklab/cli/cmd.h"
#include "linklab/cli/cmd_apply_check.h"
#include "linklab/peer/enghook.h"
#include "linklab/model/qdisc.h"
#include "linklab/peer/journal.h"
#include "linklab/peer/hostinfo.h"

/* x and y within 1 % (or 2 units) of each other. */
static bool near(uint64_t x, uint64_t y)
{
	uint64_t d = x > y ? x - y : y - x;

	return d <= 2 || d * 100 <= (x > y ? x : y);
}

static bool near_ns(int64_t x, int64_t y)
{
	int64_t d = x > y ? x - y : y - x;

	return d <= 1000;
}

/* The netem part of two plans: every field the kernel dumps (the delay
 * distribution table is never dumped, so dist is not compared). */
static bool netem_same(const struct impair_plan *x, const struct impair_plan *y)
{
	return near_ns(x->latency_ns, y->latency_ns) &&
	       near_ns(x->jitter_ns, y->jitter_ns) && near(x->limit, y->limit) &&
	       x->loss == y->loss && x->loss_corr == y->loss_corr &&
	       x->delay_corr == y->delay_corr && x->duplicate == y->duplicate &&
	       x->dup_corr == y->dup_corr && x->corrupt == y->corrupt &&
	       x->corrupt_corr == y->corrupt_corr && x->reorder == y->reorder &&
	       x->reorder_corr == y->reorder_corr && x->gap == y->gap &&
	       x->loss_model == y->loss_model &&
	       !memcmp(x->gi, y->gi, sizeof(x->gi)) &&
	       !memcmp(x->ge, y->ge, sizeof(x->ge)) && x->ecn == y->ecn &&
	       x->netem_rate_Bps == y->netem_rate_Bps &&
	       x->packet_overhead == y->packet_overhead &&
	       x->cell_size == y->cell_size && x->cell_overhead == y->cell_overhead &&
	       x->slot == y->slot && near_ns(x->slot_min_ns, y->slot_min_ns) &&
	       near_ns(x->slot_max_ns, y->slot_max_ns) &&
	       x->slot_packets == y->slot_packets && x->slot_bytes == y->slot_bytes &&
	       x->has_seed == y->has_seed && (!x->has_seed || x->seed == y->seed);
}

/* True if installing plan y where plan x is would change nothing. */
static bool plan_same(const struct impair_plan *x, const struct impair_plan *y)
{
	if (x->tbf != y->tbf || x->netem != y->netem || x->ingress != y->ingress ||
	    x->scoped != y->scoped)
		return false;
	if (x->tbf && (x->rate_Bps != y->rate_Bps || !near(x->burst, y->burst) ||
		       /* the scoped layout's htb class has no byte queue */
		       (!x->scoped && !near(x->tbf_limit, y->tbf_limit))))
		return false;
	if (x->netem && !netem_same(x, y))
		return false;
	if (x->scoped) {
		if (x->dport != y->dport || x->dst_plen != y->dst_plen)
			return false;
		if (x->dst_plen && (x->dst_family != y->dst_family ||
				    (x->dst_family == AF_INET6 ?
				     memcmp(x->dst6, y->dst6, 16) :
				     memcmp(x->dst_addr, y->dst_addr, 4))))
			return false;
	}
	return true;
}

/* The tree plan p installs, in read-back terms (for the "after" summary):
 * linklab's layouts of impair.h and doc/impairment.md. */
static void plan_to_state(const struct impair_plan *p, struct qdisc_state *s)
{
	struct qdisc_info *root = &s->q[0], *n = NULL;

	memset(s, 0, sizeof(*s));
	s->n = 1;
	root->handle = 1u << 16;
	root->parent = 0xFFFFFFFFu;
	if (p->scoped) {
		snprintf(root->kind, sizeof(root->kind), "htb");
		root->rate = p->tbf ? p->rate_Bps * 8 : QDISC_UNSHAPED_BPS;
		root->burst = p->burst;
		s->scoped = true;
		s->dst_plen = p->dst_plen;
		s->dst_family = p->dst_family;
		memcpy(s->dst_addr, p->dst_addr, 4);
		memcpy(s->dst6, p->dst6, 16);
		s->dport = p->dport;
		n = p->netem ? &s->q[s->n++] : NULL;
	} else if (p->tbf) {
		snprintf(root->kind, sizeof(root->kind), "tbf");
		root->rate = p->rate_Bps * 8;
		root->burst = p->burst;
		root->limit = p->tbf_limit;
		n = p->netem ? &s->q[s->n++] : NULL;
	} else {
		n = root;
	}
	if (!n)
		return;
	if (n != root) {
		n->handle = 10u << 16;
		n->parent = (1u << 16) | 1;
	}
	snprintf(n->kind, sizeof(n->kind), "netem");
	n->limit = p->limit;
	n->delay = p->latency_ns;
	n->jitter = p->jitter_ns;
	n->loss = p->loss;
	n->loss_corr = p->loss_corr;
	n->delay_corr = p->delay_corr;
	n->duplicate = p->duplicate;
	n->dup_corr = p->dup_corr;
	n->corrupt = p->corrupt;
	n->corrupt_corr = p->corrupt_corr;
	n->reorder = p->reorder;
	n->reorder_corr = p->reorder_corr;
	n->gap = p->gap;
	n->ecn = p->ecn;
	n->loss_model = p->loss_model;
	memcpy(n->gi, p->gi, sizeof(n->gi));
	memcpy(n->ge, p->ge, sizeof(n->ge));
	n->netem_rate = p->netem_rate_Bps * 8;
	n->packet_overhead = p->packet_overhead;
	n->cell_size = p->cell_size;
	n->cell_overhead = p->cell_overhead;
	n->slot_min = p->slot ? p->slot_min_ns : 0;
	n->slot_max = p->slot ? p->slot_max_ns : 0;
	n->slot_packets = p->slot_packets;
	n->slot_bytes = p->slot_bytes;
	n->has_seed = p->has_seed;
	n->seed = p->seed;
}

/* MTU of dev on p (0 if unknown: impair_plan then takes 1500). */
static unsigned dev_mtu(struct peer *p, const char *dev)
{
	struct link_list *ll = calloc(1, sizeof(*ll));
	struct ll_err err = { 0 };
	unsigned mtu = 0;
	int i;

	if (ll && p->ops->list_links(p, ll, &err) == 0)
		for (i = 0; i < ll->n; i++)
			if (!strcmp(ll->l[i].name, dev))
				mtu = ll->l[i].mtu;
	free(ll);
	return mtu;
}

static cJSON *dial_json(const struct impair *d)
{
	const struct impair_field *f;
	cJSON *o = cJSON_CreateObject();
	char v[128];

	for (f = impair_fields; f->name; f++)
		if (d->set & f->bit)
			cJSON_AddStringToObject(o, f->name, impair_get(d, f, v, sizeof(v)));
	return o;
}

/* What qs holds, as a dial without the burst/limits derived from its rate. */
static void held_dial(const struct qdisc_state *qs, unsigned mtu, struct impair *d)
{
	qdisc_state_to_impair(qs, d);
	impair_drop_derived(d, mtu, hostinfo_kernel_hz());
}

cJSON *cmd_apply_check_dial_json(const struct qdisc_state *qs, unsigned mtu)
{
	struct impair d;

	held_dial(qs, mtu, &d);
	return dial_json(&d);
}

int cmd_apply_check_journalled(struct peer *p, const char *dev, char *orig,
			       size_t len)
{
	struct journal_entry *je;
	uint64_t ns = 0;
	unsigned idx;
	int rc;

	if (orig && len)
		orig[0] = '\0';
	if (strcmp(p->ops->name, "local") != 0)
		return -ENOTSUP;
	idx = if_nametoindex(dev);
	if (!idx || journal_netns(&ns, NULL) < 0)
		return -ENODEV;
	je = calloc(1, sizeof(*je));
	if (!je)
		return -ENOMEM;
	rc = journal_lookup(ns, (int)idx, je, NULL);
	if (rc == 0 && orig && len)
		snprintf(orig, len, "%s%s", je->kind[0] ? je->kind : "none",
			 je->is_default ? " (kernel default)" : "");
	free(je);
	return rc == 0 ? 1 : rc == -ENOENT ? 0 : rc;
}

/* Add "journalled" (and "original", the root qdisc linklab clear puts
 * back) to side when the journal can be read here (the local peer). */
void cmd_apply_check_journal_json(cJSON *side, struct peer *p, const char *dev)
{
	char orig[64];
	int j = cmd_apply_check_journalled(p, dev, orig, sizeof(orig));

	if (j < 0)
		return;
	cJSON_AddBoolToObject(side, "journalled", j == 1);
	if (j == 1)
		cJSON_AddStringToObject(side, "original", orig);
}

/* The tree the dial acts on: dev's own, or its IFB's for an ingress dial
 * (none yet when linklab never shaped dev's ingress). */
static int read_target(struct peer *p, const char *dev, const struct impair *want,
		       struct qdisc_state *qs, struct ll_err *err)
{
	char ifb[IF_NAMESIZE];
	int rc;

	memset(qs, 0, sizeof(*qs));
	rc = p->ops->read_qdiscs(p, dev, qs, err);
	if (rc < 0 || !((want->set & IMP_DIRECTION) && want->direction == IMP_INGRESS))
		return rc;
	if (!qs->has_ingress) {
		memset(qs, 0, sizeof(*qs));
		return 0;
	}
	qdisc_ifb_name(dev, ifb, sizeof(ifb));
	memset(qs, 0, sizeof(*qs));
	if (p->ops->read_qdiscs(p, ifb, qs, err) < 0)
		memset(qs, 0, sizeof(*qs));
	return 0;
}

/* One side: fill side (JSON) or print a line; *changed gets the answer.
 * 0, or <0 with err filled (the side could not be read or planned). */
static int check_side(struct peer *p, const char *dev, const struct impair *want,
		      cJSON *side, bool *changed, struct ll_err *err)
{
	struct qdisc_state *qs = calloc(2, sizeof(*qs));
	struct impair_plan pw, ph;
	struct impair held;
	struct enghook_info eng;
	struct ll_diag dg;
	bool by_engine, have_eng;
	char before[1024], after[1024], lines[4096];
	unsigned mtu, hz = hostinfo_kernel_hz();
	int rc;

	if (!qs)
		return ll_err_set(err, -ENOMEM, "out of memory");
	mtu = dev_mtu(p, dev);
	ll_diag_clear(&dg);
	rc = read_target(p, dev, want, &qs[0], err);
	if (rc == 0 && impair_plan(want, mtu, hz, &pw, &dg) < 0)
		rc = ll_diag_to_err(&dg, err);
	if (rc == 0)
		rc = p->ops->dry_run(p, dev, want, lines, sizeof(lines), err);
	if (rc < 0) {
		free(qs);
		return rc;
	}
	qdisc_state_to_impair(&qs[0], &held);
	/* linklab's endpoint engine, where it runs, holds the whole dial (the
	 * netem fields and, with them, the rate): the qdisc under it is what
	 * was there before, not part of the dial */
	/* an engine stopped, or whose rule is gone, does not hold the dial:
	 * an apply replaces it */
	have_eng = p->ops->engine && p->ops->engine->engine_get(p, dev, &eng, NULL) == 0;
	if (have_eng && eng.alive && eng.hooked < 0 && !strcmp(p->ops->name, "local"))
		enghook_probe(&eng);        /* its rule may be gone */
	if (have_eng && eng.alive && !eng.stopped && eng.hooked != 0) {
		memset(&held, 0, sizeof(held));
		enghook_dial(&eng, &held);
	} else {
		eng.alive = false;
	}
	/* the apply would start (or keep) the engine: the qdisc stays */
	by_engine = p->ops->engine && p->ops->engine->would_engine(p, want);
	if (pw.ingress) {
		held.direction = IMP_INGRESS;
		held.set |= IMP_DIRECTION;
	}
	ll_diag_clear(&dg);
	*changed = impair_is_empty(&held) ||
		   impair_plan(&held, mtu, hz, &ph, &dg) < 0 || !plan_same(&ph, &pw);
	qdisc_state_summary(&qs[0], before, sizeof(before));
	if (eng.alive) {
		size_t l = strlen(before);

		snprintf(before + l, sizeof(before) - l, "; user engine: %.200s", eng.dial);
	}
	plan_to_state(&pw, &qs[1]);
	if (*changed && by_engine) {
		char sum[256];

		qdisc_state_summary(&qs[0], after, sizeof(after));
		impair_summary(want, sum, sizeof(sum));
		snprintf(after + strlen(after), sizeof(after) - strlen(after),
			 "; user engine: %s", sum);
	} else if (*changed) {
		qdisc_state_summary(&qs[1], after, sizeof(after));
	} else {
		snprintf(after, sizeof(after), "%s", before);
	}
	if (side) {
		cJSON *b = cJSON_CreateObject(), *a = cJSON_CreateObject();
		cJSON *cmds = cJSON_CreateArray();
		char *line, *save = NULL;

		cJSON_AddBoolToObject(side, "changed", *changed);
		cmd_apply_check_journal_json(side, p, dev);
		cJSON_AddStringToObject(b, "summary", before);
		impair_drop_derived(&held, mtu, hz);
		cJSON_AddItemToObject(b, "dial", dial_json(&held));
		cJSON_AddItemToObject(b, "qdiscs", cmd_json_qdiscs(&qs[0]));
		cJSON_AddItemToObject(side, "before", b);
		cJSON_AddStringToObject(a, "summary", after);
		cJSON_AddItemToObject(a, "dial", dial_json(want));
		for (line = strtok_r(lines, "\n", &save); line && *changed;
		     line = strtok_r(NULL, "\n", &save))
			cJSON_AddItemToArray(cmds, cJSON_CreateString(line));
		cJSON_AddItemToObject(a, "commands", cmds);
		cJSON_AddItemToObject(side, "after", a);
	} else if (*changed) {
		printf("%s %s: would change: %s -> %s\n", p->label, dev, before, after);
	} else {
		printf("%s %s: no change: %s\n", p->label, dev, before);
	}
	free(qs);
	return 0;
}

int cmd_apply_check(struct peerset *ps, unsigned sides, const struct impair dial[2],
		    bool json)
{
	cJSON *doc = json ? cJSON_CreateObject() : NULL;
	struct ll_err err = { 0 };
	bool any = false, changed;
	int i, status = 0;

	for (i = 0; i < 2; i++) {
		struct peer *p = i == 0 ? &ps->a : &ps->b;
		const char *dev = i == 0 ? ps->dev_a : ps->dev_b;
		cJSON *side = NULL;

		if (!(sides & (i == 0 ? CMD_SIDE_A : CMD_SIDE_B)) ||
		    impair_is_empty(&dial[i]))
			continue;
		if (doc)
			side = cmd_json_side(doc, i, p, dev);
		if (check_side(p, dev, &dial[i], side, &changed, &err) < 0) {
			fprintf(stderr, "linklab apply: %s %s: %s\n", p->label, dev,
				cmd_errtext(dev, &err));
			if (side)
				cJSON_AddStringToObject(side, "error", err.msg);
			status = cmd_status(&err);
			continue;
		}
		any |= changed;
	}
	if (doc) {
		cJSON_AddBoolToObject(doc, "check", true);
		cJSON_AddBoolToObject(doc, "changed", any);
		cmd_print_json(doc);
	}
	return status;
}
