/* SPDX-License-Identifier: MIT */
/* cmd_show.c - `linklab show`: what the kernels hold now on the interfaces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/cli.h"
#include "linklab/cmd.h"

int cmd_show(int argc, char **argv)
{
	struct cmd_common c = { 0 };
	struct ll_err err = { 0 };
	struct peerset ps;
	struct qdisc_state *qs;
	cJSON *doc = NULL;
	unsigned sides;
	int i, rc, status = 0;

	for (i = 1; i < argc; i++) {
		rc = cmd_common_opt(&c, argc, argv, &i, &err);
		if (rc < 0)
			return cmd_fail("show", &err), 2;
		if (rc == 0) {
			fprintf(stderr, "linklab show: unknown option '%s'\n", argv[i]);
			return 2;
		}
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
		if (doc) {
			cJSON *side = cJSON_CreateObject();

			cJSON_AddStringToObject(side, "label", p->label);
			cJSON_AddStringToObject(side, "dev", dev);
			cJSON_AddItemToObject(side, "qdiscs", cmd_json_qdiscs(qs));
			cJSON_AddItemToObject(doc, i == 0 ? "a" : "b", side);
		} else {
			cmd_print_qdiscs(stdout, p->label, qs);
		}
	}
	if (doc)
		cmd_print_json(doc);
	free(qs);
	peerset_close(&ps);
	return status;
}
