/* SPDX-License-Identifier: MIT */
/* cmd_show.c - `linklab show`: what the kernels hold now on the interfaces,
 * with each qdisc's live counters (sent, drops, overlimits, backlog) and the
 * TCP goodput ceiling of the rate limit (rate x MSS/(MSS+66): tbf and netem
 * rate count whole Ethernet frames). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/cli/cli.h"
#include "linklab/bridge/bridge.h"
#include "linklab/cli/cmd.h"
#include "linklab/cli/cmd_apply_check.h"
#include "linklab/model/qdisc.h"
#include "linklab/base/units.h"

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
			     !strcmp(qs->q[i].kind, "htb") && qs->q[i].rate < QDISC_UNSHAPED_BPS ?
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

/* Middle-box bridges running in this network namespace (linklab bridge):
 * which engine, the ports, each direction's dial and counters. */
static void show_bridges(cJSON *doc)
{
	struct bridge_status st[8];
	int n = 0, i, dir;

	if (bridge_status_list(st, 8, &n, NULL) < 0 || n == 0)
		return;
	for (i = 0; i < n; i++) {
		if (doc) {
			cJSON *arr = cJSON_GetObjectItem(doc, "bridges"), *o, *dirs;

			if (!arr)
				cJSON_AddItemToObject(doc, "bridges", arr = cJSON_CreateArray());
			o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "pid", st[i].pid);
			cJSON_AddStringToObject(o, "engine", st[i].engine);
			cJSON_AddStringToObject(o, "if_a", st[i].if_a);
			cJSON_AddStringToObject(o, "if_b", st[i].if_b);
			dirs = cJSON_CreateArray();
			for (dir = 0; dir < 2; dir++) {
				cJSON *d = cJSON_CreateObject();

				cJSON_AddStringToObject(d, "direction", dir ? "b_to_a" : "a_to_b");
				cJSON_AddStringToObject(d, "dial", st[i].dial[dir]);
				cJSON_AddItemToObject(d, "fields",
						      bridge_fields_json(&st[i].held[dir]));
				cJSON_AddNumberToObject(d, "packets", (double)st[i].c[dir].tx_pkts);
				cJSON_AddNumberToObject(d, "bytes", (double)st[i].c[dir].tx_bytes);
				cJSON_AddNumberToObject(d, "lost", (double)st[i].c[dir].lost);
				cJSON_AddNumberToObject(d, "duplicated", (double)st[i].c[dir].duplicated);
				cJSON_AddNumberToObject(d, "corrupted", (double)st[i].c[dir].corrupted);
				cJSON_AddNumberToObject(d, "reordered", (double)st[i].c[dir].reordered);
				cJSON_AddNumberToObject(d, "drops", (double)st[i].c[dir].drops);
				cJSON_AddItemToArray(dirs, d);
			}
			cJSON_AddItemToObject(o, "directions", dirs);
			cJSON_AddItemToArray(arr, o);
			continue;
		}
		printf("bridge %s <-> %s (pid %d): %s engine\n", st[i].if_a, st[i].if_b,
		       st[i].pid, st[i].engine);
		for (dir = 0; dir < 2; dir++)
			printf("  %s: %s  sent %llu pkts, lost %llu, dup %llu, corrupt %llu, "
			       "reordered %llu, drops %llu\n", dir ? "B->A" : "A->B",
			       st[i].dial[dir][0] ? st[i].dial[dir] : "none",
			       (unsigned long long)st[i].c[dir].tx_pkts,
			       (unsigned long long)st[i].c[dir].lost,
			       (unsigned long long)st[i].c[dir].duplicated,
			       (unsigned long long)st[i].c[dir].corrupted,
			       (unsigned long long)st[i].c[dir].reordered,
			       (unsigned long long)st[i].c[dir].drops);
	}
}

/* Sanitized copy of untrusted text (a device name, a path) for a terminal. */
static const char *clean(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/* show --journal: every record on each side (damaged ones too). */
static int show_journal(struct peerset *ps, unsigned sides, cJSON *doc)
{
	struct peer_record *r = calloc(64, sizeof(*r));
	struct ll_err err = { 0 };
	int i, k, n, status = 0;

	if (!r)
		return 1;
	for (i = 0; i < 2; i++) {
		struct peer *p = i == 0 ? &ps->a : &ps->b;
		cJSON *arr = NULL;
		char b1[200], b2[200], b3[220];

		if (!(sides & (i == 0 ? CMD_SIDE_A : CMD_SIDE_B)))
			continue;
		if (!p->ops->journal) {
			fprintf(stderr, "linklab show: %s: records not supported\n", p->label);
			status = 1;
			continue;
		}
		n = 0;
		if (p->ops->journal->records(p, r, 64, &n, &err) < 0) {
			fprintf(stderr, "linklab show: %s: %s\n", p->label, err.msg);
			status = 1;
			continue;
		}
		if (doc) {
			cJSON *side = cJSON_CreateObject();

			cJSON_AddStringToObject(side, "label", p->label);
			arr = cJSON_AddArrayToObject(side, "records");
			cJSON_AddItemToObject(doc, i == 0 ? "a" : "b", side);
		} else {
			printf("%s: %d record%s\n", p->label, n, n == 1 ? "" : "s");
		}
		for (k = 0; k < n; k++) {
			if (arr) {
				cJSON *o = cJSON_CreateObject();

				cJSON_AddStringToObject(o, "dev", r[k].dev);
				cJSON_AddNumberToObject(o, "ifindex", r[k].ifindex);
				cJSON_AddStringToObject(o, "path", r[k].path);
				cJSON_AddStringToObject(o, "state", r[k].what);
				cJSON_AddBoolToObject(o, "damaged", r[k].damaged);
				cJSON_AddItemToArray(arr, o);
			} else {
				printf("  %s%s %s: %s\n", r[k].damaged ? "DAMAGED " : "",
				       clean(r[k].dev[0] ? r[k].dev : "?", b1, sizeof(b1)),
				       clean(r[k].path, b2, sizeof(b2)),
				       clean(r[k].what, b3, sizeof(b3)));
			}
		}
	}
	free(r);
	return status;
}


/* -J: a failure is JSON too, {"error": TEXT} (as apply -J): into doc when
 * given (the first error only), else printed alone on stdout. */
static void show_json_error(bool json, cJSON *doc, const char *text)
{
	if (!json)
		return;
	if (doc) {
		if (!cJSON_GetObjectItem(doc, "error"))
			cJSON_AddStringToObject(doc, "error", text);
		return;
	}
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "error", text);
	cmd_print_json(doc);
}

/* show --journal when the peer cannot be reached: A's records, then why
 * B's could not be read (exit 1). */
static int show_journal_a_only(struct cmd_common *c, struct ll_err *berr)
{
	struct peerset_opts po = c->po;
	struct ll_err err = { 0 };
	struct peerset ps;
	cJSON *doc = c->json ? cJSON_CreateObject() : NULL;
	char label[300], b1[300], b2[sizeof(berr->msg) + 1];

	snprintf(label, sizeof(label), "B (%s)", c->po.peer);
	po.peer = NULL;
	po.peer_dev = NULL;
	if (peerset_open(&ps, &po, &err) < 0) {
		cJSON_Delete(doc);
		cmd_fail("show", &err);
		return cmd_fail("show", berr);
	}
	show_journal(&ps, CMD_SIDE_A, doc);
	peerset_close(&ps);
	if (doc) {
		cJSON *side = cJSON_CreateObject();

		cJSON_AddStringToObject(side, "label", label);
		cJSON_AddStringToObject(side, "error", berr->msg);
		cJSON_AddItemToObject(doc, "b", side);
		cmd_print_json(doc);
	}
	fprintf(stderr, "linklab show: %s: its records could not be read: %s\n",
		clean(label, b1, sizeof(b1)), clean(berr->msg, b2, sizeof(b2)));
	return 1;
}

int cmd_show(int argc, char **argv)
{
	bool journal = false;
	struct cmd_common c = { 0 };
	struct ll_err err = { 0 };
	struct peerset ps;
	struct qdisc_state *qs;
	cJSON *doc = NULL;
	unsigned sides, mtu;
	int i, rc, status = 0, nbad = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--journal")) {
			journal = true;
			continue;
		}
		rc = cmd_common_opt(&c, argc, argv, &i, &err);
		if (rc < 0) {
			cmd_fail("show", &err);     /* every problem at once */
			nbad++;
		} else if (rc == 0) {
			fprintf(stderr, "linklab show: unknown option '%s'\n", argv[i]);
			nbad++;
		}
	}
	if (nbad) {
		show_json_error(c.json, NULL, "bad options (each named on stderr)");
		return 2;
	}
	if (c.help) {
		cli_print_usage("show", stdout);
		return 0;
	}
	if (peerset_open(&ps, &c.po, &err) < 0) {
		if (journal && c.po.peer && !c.remote_only)
			return show_journal_a_only(&c, &err);
		show_json_error(c.json, NULL, err.msg);
		return cmd_fail("show", &err);
	}
	cmd_leftovers("show");
	sides = cmd_sides(&c, &ps, &err);
	qs = calloc(1, sizeof(*qs));
	if (!sides || !qs) {
		peerset_close(&ps);
		free(qs);
		show_json_error(c.json, NULL, err.msg);
		return cmd_fail("show", &err);
	}
	if (c.json)
		doc = cJSON_CreateObject();
	if (journal) {
		status = show_journal(&ps, sides, doc);
		if (doc)
			cmd_print_json(doc);
		free(qs);
		peerset_close(&ps);
		return status;
	}
	for (i = 0; i < 2; i++) {
		struct peer *p = i == 0 ? &ps.a : &ps.b;
		const char *dev = i == 0 ? ps.dev_a : ps.dev_b;

		if (!(sides & (i == 0 ? CMD_SIDE_A : CMD_SIDE_B)))
			continue;
		if (!dev[0]) {
			struct bridge_status bs[1];
			int nb = 0;

			/* on a middle box, show alone lists the bridges */
			if (i == 0 && !ps.has_b &&
			    bridge_status_list(bs, 1, &nb, NULL) == 0 && nb > 0)
				continue;
			fprintf(stderr, "linklab show: %s: no interface: give %s IF\n",
				p->label, i == 0 ? "--dev" : "--peer-dev");
			show_json_error(doc != NULL, doc, i == 0 ? "no interface: give --dev IF" :
					"no interface: give --peer-dev IF");
			status = 2;
			continue;
		}
		memset(qs, 0, sizeof(*qs));
		if (p->ops->read_qdiscs(p, dev, qs, &err) < 0) {
			fprintf(stderr, "linklab show: %s: %s\n", p->label, err.msg);
			show_json_error(doc != NULL, doc, err.msg);
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
			cJSON_AddItemToObject(side, "dial", cmd_apply_check_dial_json(qs, mtu));
			cmd_apply_check_journal_json(side, p, dev);
			if (mtu)
				cJSON_AddNumberToObject(side, "mtu", mtu);
			if (rate) {
				cJSON_AddNumberToObject(side, "rate_bps", (double)rate);
				cJSON_AddNumberToObject(side, "goodput_ceiling_bps",
							impair_goodput_ceiling(rate, mtu, 0));
			}
			cmd_engine_report(stdout, side, p, dev);
			cJSON_AddItemToObject(doc, i == 0 ? "a" : "b", side);
		} else {
			cmd_print_qdiscs(stdout, p->label, qs);
			print_counters(qs, mtu);
			cmd_engine_report(stdout, NULL, p, dev);
		}
		/* ingress shaping lives on the interface's IFB device */
		if (qs->has_ingress) {
			char ifb[IF_NAMESIZE];

			qdisc_ifb_name(dev, ifb, sizeof(ifb));
			memset(qs, 0, sizeof(*qs));
			if (p->ops->read_qdiscs(p, ifb, qs, &err) == 0) {
				if (doc) {
					cJSON *side = cJSON_GetObjectItem(doc, i == 0 ? "a" : "b");
					uint64_t rate = tree_rate(qs);
					cJSON *in = cJSON_CreateObject();

					cJSON_AddStringToObject(in, "ifb", ifb);
					cJSON_AddItemToObject(in, "qdiscs", cmd_json_qdiscs(qs));
					cJSON_AddItemToObject(in, "dial",
							      cmd_apply_check_dial_json(qs, mtu));
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
	show_bridges(doc);
	if (doc)
		cmd_print_json(doc);
	free(qs);
	peerset_close(&ps);
	return status;
}
