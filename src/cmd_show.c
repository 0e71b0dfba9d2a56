/* SPDX-License-Identifier: MIT */
/* cmd_show.c - `linklab show`: what the kernels hold now on the interfaces,
 * with each qdisc's live counters (sent, drops, overlimits, backlog) and the
 * TCP goodput ceiling of the rate limit (rate x MSS/(MSS+66): tbf and netem
 * rate count whole Ethernet frames). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/cli.h"
#include "linklab/cmd.h"
#include "linklab/flowfilter.h"
#include "linklab/units.h"

/* MTU of dev on p (0 if unknown). */
static unsigned dev_mtu(struct peer *p, const char *dev)
{
	struct link_list *ll = calloc(1, sizeof(*ll));
	struct ll_err err = { 0 };
	unsigned mtu = 0;
	int i;

	if (!ll)
		return 0;
	if (p->ops->list_links(p, ll, &err) == 0)
		for (i = 0; i < ll->n; i++)
			if (!strcmp(ll->l[i].name, dev))
				mtu = ll->l[i].mtu;
	free(ll);
	return mtu;
}

/* The slowest rate limit in the tree (tbf rate or netem rate), bit/s. */
static uint64_t tree_rate(const struct qdisc_state *qs)
{
	uint64_t r = 0;
	int i;

	for (i = 0; i < qs->n; i++) {
		uint64_t v = !strcmp(qs->q[i].kind, "tbf") ? qs->q[i].rate :
			     !strcmp(qs->q[i].kind, "netem") ? qs->q[i].netem_rate :
			     /* linklab's scoped htb: class 1:1's rate */
			     !strcmp(qs->q[i].kind, "htb") && qs->q[i].rate < FF_UNSHAPED_BPS ?
			     qs->q[i].rate : 0;

		if (v && (!r || v < r))
			r = v;
	}
	return r;
}

static void print_counters(const struct qdisc_state *qs, unsigned mtu)
{
	uint64_t rate = tree_rate(qs);
	char a[32], b[32];
	int i;

	for (i = 0; i < qs->n; i++) {
		const struct qdisc_info *q = &qs->q[i];

		printf("  %-6s %x: sent %" PRIu64 " bytes %" PRIu64 " pkt, dropped %" PRIu32
		       ", overlimits %" PRIu32 ", backlog %" PRIu32 "b %" PRIu32 "p\n",
		       q->kind, q->handle >> 16, q->bytes, q->packets, q->drops,
		       q->overlimits, q->backlog, q->qlen);
	}
	if (rate) {
		unsigned m = mtu ? mtu : 1500;

		printf("  goodput ceiling: %s (TCP MSS %u: %s x %u/%u, whole frames)\n",
		       units_human_rate(impair_goodput_ceiling(rate, m, 0), a, sizeof(a)),
		       m - 52, units_human_rate((double)rate, b, sizeof(b)), m - 52,
		       m - 52 + 66);
	}
}

int cmd_show(int argc, char **argv)
{
	struct cmd_common c = { 0 };
	struct ll_err err = { 0 };
	struct peerset ps;
	struct qdisc_state *qs;
	cJSON *doc = NULL;
	unsigned sides, mtu;
	int i, rc, status = 0;

	for (i = 1; i < argc; i++) {
		rc = cmd_common_opt(&c, argc, argv, &i, &err);
		if (rc < 0)
			return cmd_fail("show", &err);
		if (rc == 0) {
			fprintf(stderr, "linklab show: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (c.help) {
		cli_print_usage("show", stdout);
		return 0;
	}
	if (peerset_open(&ps, &c.po, &err) < 0)
		return cmd_fail("show", &err);
	sides = cmd_sides(&c, &ps, &err);
	qs = calloc(1, sizeof(*qs));
	if (!sides || !qs) {
		peerset_close(&ps);
		free(qs);
		return cmd_fail("show", &err);
	}
	if (c.json)
		doc = cJSON_CreateObject();
	for (i = 0; i < 2; i++) {
		struct peer *p = i == 0 ? &ps.a : &ps.b;
		const char *dev = i == 0 ? ps.dev_a : ps.dev_b;

		if (!(sides & (i == 0 ? CMD_SIDE_A : CMD_SIDE_B)))
			continue;
		if (!dev[0]) {
			fprintf(stderr, "linklab show: %s: no interface: give %s IF\n",
				p->label, i == 0 ? "--dev" : "--peer-dev");
			status = 1;
			continue;
		}
		memset(qs, 0, sizeof(*qs));
		if (p->ops->read_qdiscs(p, dev, qs, &err) < 0) {
			fprintf(stderr, "linklab show: %s: %s\n", p->label, err.msg);
			status = 1;
			continue;
		}
		mtu = dev_mtu(p, dev);
		if (doc) {
			cJSON *side = cJSON_CreateObject();
			uint64_t rate = tree_rate(qs);
			char sum[1024];

			cJSON_AddStringToObject(side, "label", p->label);
			cJSON_AddStringToObject(side, "dev", dev);
			cJSON_AddItemToObject(side, "qdiscs", cmd_json_qdiscs(qs));
			cJSON_AddStringToObject(side, "summary",
						qdisc_state_summary(qs, sum, sizeof(sum)));
			if (mtu)
				cJSON_AddNumberToObject(side, "mtu", mtu);
			if (rate) {
				cJSON_AddNumberToObject(side, "rate_bps", (double)rate);
				cJSON_AddNumberToObject(side, "goodput_ceiling_bps",
							impair_goodput_ceiling(rate, mtu, 0));
			}
			cJSON_AddItemToObject(doc, i == 0 ? "a" : "b", side);
		} else {
			cmd_print_qdiscs(stdout, p->label, qs);
			print_counters(qs, mtu);
		}
		/* ingress shaping lives on the interface's IFB device */
		if (qs->has_ingress) {
			char ifb[IF_NAMESIZE];

			ff_ifb_name(dev, ifb, sizeof(ifb));
			memset(qs, 0, sizeof(*qs));
			if (p->ops->read_qdiscs(p, ifb, qs, &err) == 0) {
				if (doc) {
					cJSON *side = cJSON_GetObjectItem(doc, i == 0 ? "a" : "b");
					uint64_t rate = tree_rate(qs);
					cJSON *in = cJSON_CreateObject();

					cJSON_AddStringToObject(in, "ifb", ifb);
					cJSON_AddItemToObject(in, "qdiscs", cmd_json_qdiscs(qs));
					if (rate)
						cJSON_AddNumberToObject(in, "goodput_ceiling_bps",
									impair_goodput_ceiling(rate, mtu, 0));
					cJSON_AddItemToObject(side, "ingress", in);
				} else {
					char lbl[128];

					snprintf(lbl, sizeof(lbl), "%s %s ingress via", p->label, dev);
					cmd_print_qdiscs(stdout, lbl, qs);
					print_counters(qs, mtu);
				}
			}
		}
	}
	if (doc)
		cmd_print_json(doc);
	free(qs);
	peerset_close(&ps);
	return status;
}
