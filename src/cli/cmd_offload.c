/* SPDX-License-Identifier: MIT */
/* cmd_offload.c - `linklab offload`: the NIC offloads (TSO/GSO/GRO) of both
 * peers, shown, set (journalled) and restored. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/peer/hosttune.h"
#include "linklab/peer/peerset.h"

static void print_offloads(const struct peer *p, const char *dev,
			   const struct offload_state *o)
{
	int i;

	printf("%s %s:", p->label, dev);
	for (i = 0; i < HOSTTUNE_NOFF; i++)
		printf(" %s %s", hosttune_offload_name(i),
		       o->v[i] < 0 ? "?" : o->v[i] ? "on" : "off");
	printf("\n");
}

/* Every side can take the command (tune ops; an interface unless it only
 * restores): else each problem is said and 1/2 returned, nothing changed. */
static int offload_preflight(struct peerset *ps, unsigned sides, bool restore)
{
	int i, ret = 0;

	for (i = 0; i < 2; i++) {
		struct peer *p = i ? &ps->b : &ps->a;
		const char *dev = i ? ps->dev_b : ps->dev_a;

		if (!(sides & (i ? CMD_SIDE_B : CMD_SIDE_A)))
			continue;
		if (!p->ops->tune) {
			fprintf(stderr, "linklab offload: %s: not supported\n", p->label);
			ret = ret ? ret : 1;
		} else if (!dev[0] && !restore) {
			fprintf(stderr, "linklab offload: %s: which interface? (--dev / --peer-dev)\n",
				p->label);
			ret = 2;
		}
	}
	if (ret)
		fprintf(stderr, "linklab offload: nothing was changed\n");
	return ret;
}

/* Set want on each side, all or nothing: when B fails after A was set, A
 * is put back as it was. 0 or the exit status. */
static int offload_set_both(struct peerset *ps, unsigned sides,
			    const struct offload_state *want)
{
	struct offload_state before[2];
	struct ll_err err = { 0 }, e2 = { 0 };
	bool done[2] = { false, false };
	int i;

	for (i = 0; i < 2; i++) {
		struct peer *p = i ? &ps->b : &ps->a;
		const char *dev = i ? ps->dev_b : ps->dev_a;

		if (!(sides & (i ? CMD_SIDE_B : CMD_SIDE_A)))
			continue;
		if (p->ops->tune->offload_get(p, dev, &before[i], &err) == 0 &&
		    p->ops->tune->offload_set(p, dev, want, &err) == 0) {
			done[i] = true;
			continue;
		}
		fprintf(stderr, "linklab offload: %s %s: %s\n", p->label, dev, err.msg);
		if (i == 1 && done[0]) {
			if (ps->a.ops->tune->offload_set(&ps->a, ps->dev_a, &before[0], &e2) < 0)
				fprintf(stderr, "linklab offload: could not put %s back: %s\n",
					ps->dev_a, e2.msg);
			else
				fprintf(stderr, "linklab offload: %s put back; nothing changed\n",
					ps->dev_a);
		}
		return cmd_status(&err);
	}
	return 0;
}

int cmd_offload(int argc, char **argv)
{
	struct cmd_common c;
	struct peerset ps;
	struct offload_state want = { { -1, -1, -1 } };
	struct ll_err err = { 0 };
	bool restore = false, set = false, stop;
	unsigned sides;
	int i, rc, ret = 0;

	memset(&c, 0, sizeof(c));
	for (i = 1; i < argc; i++) {
		rc = cmd_common_opt(&c, argc, argv, &i, &err);
		if (rc < 0)
			return cmd_fail("offload", &err);
		if (rc > 0)
			continue;
		if (!strcmp(argv[i], "--restore")) {
			restore = true;
		} else if ((hosttune_offload_index(argv[i]) >= 0 || !strcmp(argv[i], "all")) &&
			   i + 1 < argc && (!strcmp(argv[i + 1], "on") || !strcmp(argv[i + 1], "off"))) {
			int v = !strcmp(argv[i + 1], "on"), k = hosttune_offload_index(argv[i]);

			if (k >= 0)
				want.v[k] = (int8_t)v;
			else
				want.v[0] = want.v[1] = want.v[2] = (int8_t)v;
			set = true;
			i++;
		} else if (hosttune_offload_index(argv[i]) >= 0 || !strcmp(argv[i], "all")) {
			if (i + 1 < argc)
				fprintf(stderr, "linklab offload: %s '%s': give on or off\n",
					argv[i], argv[i + 1]);
			else
				fprintf(stderr, "linklab offload: %s needs on or off\n", argv[i]);
			return 2;
		} else {
			fprintf(stderr, "linklab offload: unexpected argument '%s' (tso|gso|gro|all on|off, --restore)\n",
				argv[i]);
			return 2;
		}
	}
	if (c.help) {
		printf("usage: linklab offload [--peer HOST] [--dev IF] [--peer-dev IF] [--local|--remote]\n"
		       "                       [tso|gso|gro|all on|off]... [--restore]\n"
		       "TSO/GSO/GRO distort tbf/netem (one dequeue per 64 KB super-packet); the\n"
		       "originals are journalled and put back by --restore.\n");
		return 0;
	}
	if (peerset_open(&ps, &c.po, &err) < 0)
		return cmd_fail("offload", &err);
	sides = cmd_sides(&c, &ps, &err);
	if (!sides) {
		peerset_close(&ps);
		return cmd_fail("offload", &err);
	}
	ret = offload_preflight(&ps, sides, restore);
	if (ret == 0 && set)
		ret = offload_set_both(&ps, sides, &want);
	stop = ret != 0;
	for (i = 0; i < 2 && !stop; i++) {
		struct peer *p = i ? &ps.b : &ps.a;
		const char *dev = i ? ps.dev_b : ps.dev_a;
		struct offload_state o;

		if (!(sides & (i ? CMD_SIDE_B : CMD_SIDE_A)))
			continue;
		rc = 0;
		if (restore)
			rc = p->ops->tune->tune_restore(p, &err);
		if (rc == 0 && dev[0])
			rc = p->ops->tune->offload_get(p, dev, &o, &err);
		if (rc == 0 && dev[0])
			print_offloads(p, dev, &o);
		if (rc < 0) {
			fprintf(stderr, "linklab offload: %s: %s\n", p->label, err.msg);
			ret = cmd_status(&err);
		} else if (restore) {
			printf("%s: originals restored\n", p->label);
		}
	}
	peerset_close(&ps);
	return ret;
}
