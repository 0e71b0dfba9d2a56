/* SPDX-License-Identifier: MIT */
/* cmd.c - option handling and printing shared by the commands. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>

#include "linklab/cli/cmd.h"
#include "linklab/base/text.h"
#include "linklab/base/units.h"
#include "linklab/peer/journal.h"
#include "linklab/peer/enghook.h"
#include "linklab/peer/peer_lock.h"

int cmd_common_opt(struct cmd_common *c, int argc, char **argv, int *i,
		   struct ll_err *err)
{
	if (!strcmp(argv[*i], "-h") || !strcmp(argv[*i], "--help")) {
		c->help = true;
		return 1;
	}
	if (!strcmp(argv[*i], "-J") || !strcmp(argv[*i], "--json")) {
		c->json = true;
		return 1;
	}
	if (!strcmp(argv[*i], "--local")) {
		c->local_only = true;
		return 1;
	}
	if (!strcmp(argv[*i], "--remote")) {
		c->remote_only = true;
		return 1;
	}
	return peerset_parse_opt(&c->po, argc, argv, i, err);
}

unsigned cmd_sides(const struct cmd_common *c, const struct peerset *ps,
		   struct ll_err *err)
{
	if (c->local_only && c->remote_only) {
		ll_err_set(err, -EINVAL, "--local and --remote exclude each other");
		return 0;
	}
	if (c->remote_only && !ps->has_b) {
		ll_err_set(err, -EINVAL, "--remote needs --peer HOST");
		return 0;
	}
	if (c->remote_only)
		return CMD_SIDE_B;
	if (c->local_only || !ps->has_b)
		return CMD_SIDE_A;
	return CMD_SIDE_A | CMD_SIDE_B;
}

cJSON *cmd_json_links(const struct link_list *ll, const char *selected)
{
	cJSON *arr = cJSON_CreateArray();
	int i, k;

	for (i = 0; i < ll->n; i++) {
		const struct link_info *l = &ll->l[i];
		cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray();

		cJSON_AddStringToObject(o, "name", l->name);
		cJSON_AddNumberToObject(o, "ifindex", l->ifindex);
		cJSON_AddStringToObject(o, "state", l->state);
		cJSON_AddBoolToObject(o, "up", l->up);
		cJSON_AddNumberToObject(o, "mtu", l->mtu);
		for (k = 0; k < l->naddrs; k++)
			cJSON_AddItemToArray(a, cJSON_CreateString(l->addrs[k]));
		cJSON_AddItemToObject(o, "addresses", a);
		cJSON_AddStringToObject(o, "qdisc", l->qdisc);
		if (l->speed_mbps)
			cJSON_AddNumberToObject(o, "speed_mbps", (double)l->speed_mbps);
		cJSON_AddBoolToObject(o, "to_peer",
				      selected && !strcmp(selected, l->name));
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

cJSON *cmd_json_qdiscs(const struct qdisc_state *s)
{
	cJSON *arr = cJSON_CreateArray();
	char buf[64];
	int i;

	for (i = 0; i < s->n; i++) {
		const struct qdisc_info *q = &s->q[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "kind", q->kind);
		snprintf(buf, sizeof(buf), "%x:", q->handle >> 16);
		cJSON_AddStringToObject(o, "handle", buf);
		if (q->parent == 0xFFFFFFFFu)
			cJSON_AddStringToObject(o, "parent", "root");
		else {
			snprintf(buf, sizeof(buf), "%x:%x", q->parent >> 16,
				 q->parent & 0xFFFF);
			cJSON_AddStringToObject(o, "parent", buf);
		}
		if (!strcmp(q->kind, "tbf")) {
			cJSON_AddNumberToObject(o, "rate_bps", (double)q->rate);
			cJSON_AddNumberToObject(o, "burst_bytes", q->burst);
			cJSON_AddNumberToObject(o, "limit_bytes", q->limit);
		} else if (!strcmp(q->kind, "netem")) {
			cJSON_AddNumberToObject(o, "delay_ns", (double)q->delay);
			cJSON_AddNumberToObject(o, "jitter_ns", (double)q->jitter);
			cJSON_AddNumberToObject(o, "loss_percent",
						units_prob_to_percent(q->loss));
			cJSON_AddNumberToObject(o, "limit_packets", q->limit);
			if (q->rate)
				cJSON_AddNumberToObject(o, "rate_bps", (double)q->rate);
		}
		cJSON_AddNumberToObject(o, "bytes", (double)q->bytes);
		cJSON_AddNumberToObject(o, "packets", (double)q->packets);
		cJSON_AddNumberToObject(o, "drops", q->drops);
		cJSON_AddNumberToObject(o, "overlimits", q->overlimits);
		cJSON_AddNumberToObject(o, "backlog", q->backlog);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

void cmd_print_links(FILE *f, const char *label, const struct link_list *ll,
		     const char *selected)
{
	int i, k, wname = 15, wstate = 8;
	char name[4 * IF_NAMESIZE + 1];

	/* columns as wide as the widest name and state of the list
	 * (LOWERLAYERDOWN, an escaped name) */
	for (i = 0; i < ll->n; i++) {
		text_sanitize(ll->l[i].name, name, sizeof(name));
		if ((int)strlen(name) > wname)
			wname = (int)strlen(name);
		if ((int)strlen(ll->l[i].state) > wstate)
			wstate = (int)strlen(ll->l[i].state);
	}
	fprintf(f, "%s\n", label);
	for (i = 0; i < ll->n; i++) {
		const struct link_info *l = &ll->l[i];
		int sel = selected && !strcmp(selected, l->name);

		/* escaped before the padding, so that a name with control
		 * bytes (shown as \xNN) keeps the columns */
		text_sanitize(l->name, name, sizeof(name));
		/* no padding after the last column (no trailing blanks) */
		fprintf(f, " %c %-*s %-*s mtu %-5u qdisc %-*s", sel ? '*' : ' ',
			wname, name, wstate, l->state, l->mtu, l->naddrs ? 10 : 0,
			l->qdisc[0] ? l->qdisc : "-");
		for (k = 0; k < l->naddrs; k++)
			fprintf(f, " %s", l->addrs[k]);
		fprintf(f, "\n");
	}
}

void cmd_print_qdiscs(FILE *f, const char *label, const struct qdisc_state *s)
{
	char sum[512];

	qdisc_state_summary(s, sum, sizeof(sum));
	fprintf(f, "%s %s: %s\n", label, s->dev, sum);
}

bool cmd_seen_twice(struct cmd_seen *s, const char *name, size_t nlen,
		    const char *val, struct ll_diag *diag)
{
	char nm[48];
	int i;

	snprintf(nm, sizeof(nm), "%.*s", (int)nlen, name);
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->e[i].name, nm)) {
			ll_diag_add(diag, LL_DIAG_ERROR, nm + strspn(nm, "-"),
				    "option %s given twice ('%s', then '%s'): give it once",
				    nm, s->e[i].val, val);
			return true;
		}
	if (s->n < (int)(sizeof(s->e) / sizeof(s->e[0]))) {
		snprintf(s->e[s->n].name, sizeof(s->e[s->n].name), "%s", nm);
		s->e[s->n++].val = val;
	}
	return false;
}

void cmd_json_sanitize(cJSON *node)
{
	char safe[2048];

	for (; node; node = node->next) {
		if (cJSON_IsString(node) && node->valuestring &&
		    !text_is_safe(node->valuestring, TEXT_KEEP_C0)) {
			text_sanitize_n(node->valuestring, strlen(node->valuestring),
					safe, sizeof(safe), TEXT_KEEP_C0);
			cJSON_SetValuestring(node, safe);
		}
		if (node->string && !text_is_safe(node->string, TEXT_KEEP_C0)) {
			char *k;

			text_sanitize_n(node->string, strlen(node->string), safe,
					sizeof(safe), TEXT_KEEP_C0);
			k = strdup(safe);

			if (k && !(node->type & cJSON_StringIsConst))
				free(node->string);
			if (k) {
				node->string = k;
				node->type &= ~cJSON_StringIsConst;
			}
		}
		if (node->child)
			cmd_json_sanitize(node->child);
	}
}

char *cmd_json_text_safe(char *txt, bool formatted)
{
	cJSON *j;
	char *out;

	if (!txt || text_is_safe(txt, TEXT_KEEP_C0))
		return txt;
	j = cJSON_Parse(txt);
	if (!j)
		return txt;
	cmd_json_sanitize(j);
	out = formatted ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!out)
		return txt;
	free(txt);
	return out;
}

void cmd_print_json(cJSON *doc)
{
	char *txt;

	cmd_json_sanitize(doc);
	txt = cJSON_Print(doc);

	if (txt) {
		fputs(txt, stdout);
		fputc('\n', stdout);
		free(txt);
	}
	cJSON_Delete(doc);
}

int cmd_fail(const char *cmd, const struct ll_err *err)
{
	fprintf(stderr, "linklab %s: %s\n", cmd,
		err->msg[0] ? err->msg : "failed");
	return cmd_status(err);
}

int cmd_status(const struct ll_err *err)
{
	return err->code == -EINVAL || err->code == -ENODEV ? 2 : 1;
}

const char *cmd_errtext(const char *dev, const struct ll_err *err)
{
	size_t n = dev ? strlen(dev) : 0;

	if (n && !strncmp(err->msg, dev, n) && err->msg[n] == ':' &&
	    err->msg[n + 1] == ' ')
		return err->msg + n + 2;
	return err->msg;
}

cJSON *cmd_json_side(cJSON *doc, int i, const struct peer *p, const char *dev)
{
	cJSON *side = cJSON_CreateObject();

	cJSON_AddStringToObject(side, "label", p->label);
	if (dev)
		cJSON_AddStringToObject(side, "dev", dev);
	cJSON_AddItemToObject(doc, i == 0 ? "a" : "b", side);
	return side;
}

void cmd_leftovers(const char *cmd)
{
	struct peer_lock_owner st[8];
	static struct journal_entry je;
	char who[200];
	uint64_t ns;
	int n = 0, i;

	if (journal_netns(&ns, NULL) < 0 ||
	    peer_lock_stale(ns, st, 8, &n, NULL) < 0)
		return;
	for (i = 0; i < n; i++) {
		struct enghook_info hook;

		if (!st[i].ndev || (journal_lookup(ns, st[i].ifindex, &je, NULL) < 0 &&
				    enghook_get(ns, st[i].ifindex, &hook) < 0))
			continue;
		peer_lock_describe(&st[i], who, sizeof(who));
		fprintf(stderr,
			"linklab %s: leftovers: %s on this host is still as %s left it (that console ended without restoring); `linklab clear --dev %s` or the next console's quit restores it\n",
			cmd, st[i].dev[0], who, st[i].dev[0]);
	}
}

int cmd_side_holder(struct peerset *ps, int i, const char *dev, char *desc, size_t len,
		    char *werr, size_t wlen)
{
	struct peer_lock_owner who;
	struct ll_err err = { 0 };
	uint64_t ns;
	unsigned idx;
	int rc = 0;

	if (werr && wlen)
		werr[0] = '\0';
	if (i == 0) {
		idx = dev && dev[0] ? if_nametoindex(dev) : 0;
		if (idx && journal_netns(&ns, NULL) == 0)
			rc = peer_lock_holder(ns, (int)idx, &who);
	} else if (ps->has_b && ps->b.ops->lock) {
		rc = ps->b.ops->lock->lock_holder(&ps->b, &who, &err);
		if (rc < 0 && werr && wlen)
			snprintf(werr, wlen, "%s", err.msg);
	}
	if (rc == 1)
		peer_lock_describe(&who, desc, len);
	return rc;
}
