/* SPDX-License-Identifier: MIT */
/* cmd_links.c - `linklab links [--peer HOST] [-J]`: interfaces of both peers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"

int cmd_links(int argc, char **argv)
{
	struct cmd_common c = { 0 };
	struct ll_err err = { 0 };
	struct peerset ps;
	struct link_list *ll;
	cJSON *doc = NULL;
	int i, rc, status = 0, nbad = 0;

	for (i = 1; i < argc; i++) {
		rc = cmd_common_opt(&c, argc, argv, &i, &err);
		if (rc < 0) {
			cmd_fail("links", &err);     /* every problem at once */
			nbad++;
		} else if (rc == 0) {
			fprintf(stderr, "linklab links: unknown option '%s'\n", argv[i]);
			nbad++;
		}
	}
	if (nbad)
		return 2;
	if (c.help) {
		cli_print_usage("links", stdout);
		return 0;
	}
	if (peerset_open(&ps, &c.po, &err) < 0)
		return cmd_fail("links", &err);
	cmd_leftovers("links");
	ll = calloc(1, sizeof(*ll));
	if (!ll) {
		peerset_close(&ps);
		return 1;
	}
	if (c.json)
		doc = cJSON_CreateObject();
	for (i = 0; i < 2; i++) {
		struct peer *p = i == 0 ? &ps.a : &ps.b;
		const char *sel = i == 0 ? ps.dev_a : ps.dev_b;

		if (i == 1 && !ps.has_b)
			break;
		memset(ll, 0, sizeof(*ll));
		if (p->ops->list_links(p, ll, &err) < 0) {
			fprintf(stderr, "linklab links: %s: %s\n", p->label, err.msg);
			status = 1;
			continue;
		}
		if (doc) {
			cJSON *side = cJSON_CreateObject();

			cJSON_AddStringToObject(side, "label", p->label);
			cJSON_AddStringToObject(side, "to_peer", sel);
			cJSON_AddItemToObject(side, "links", cmd_json_links(ll, sel));
			cJSON_AddItemToObject(doc, i == 0 ? "a" : "b", side);
		} else {
			cmd_print_links(stdout, p->label, ll, sel);
		}
	}
	if (doc)
		cmd_print_json(doc);
	free(ll);
	peerset_close(&ps);
	return status;
}
