/* SPDX-License-Identifier: MIT */
/* cmd_apply.c - `linklab apply`: validate the whole dial first (every problem
 * at once), then apply on this host and/or the peer; all or nothing: if the
 * peer fails, this host is put back as it was. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/cli.h"
#include "linklab/cmd.h"
#include "linklab/flowfilter.h"
#include "linklab/profile.h"
#include "linklab/units.h"

/* Halve a dial so that two peers together give the end-to-end target:
 * delay and jitter rtt/2 each way is not what --split means: the dial is
 * one-way end to end, so each side gets delay/2 and loss 1-(1-p)^(1/2). */
static void split_dial(struct impair *d)
{
	double p;

	d->delay /= 2;
	d->jitter /= 2;
	if (d->set & IMP_LOSS) {
		p = units_prob_to_percent(d->loss) / 100.0;
		d->loss = units_percent_to_prob(100.0 * (1.0 - sqrt(1.0 - p)));
	}
}

/* Copy every field given in src onto dst (command line over profile). */
static void overlay(struct impair *dst, const struct impair *src,
		    struct ll_diag *diag)
{
	const struct impair_field *f;
	char v[64];

	for (f = impair_fields; f->name; f++)
		if (src->set & f->bit)
			impair_set(dst, f->name, impair_get(src, f, v, sizeof(v)), diag);
}

static int apply_usage_error(const struct ll_diag *diag)
{
	int i;

	for (i = 0; i < diag->n; i++)
		fprintf(stderr, "linklab apply: %s%s\n",
			diag->e[i].level == LL_DIAG_WARN ? "warning: " : "",
			diag->e[i].text);
	if (diag->truncated)
		fprintf(stderr, "linklab apply: (more problems not shown)\n");
	fprintf(stderr, "linklab apply: nothing was changed\n");
	return 2;
}

int cmd_apply(int argc, char **argv)
{
	struct cmd_common c = { 0 };
	struct ll_err err = { 0 };
	struct ll_diag diag;
	struct impair d = { 0 }, dial[2];
	struct profile prof;
	const char *profile = NULL;
	struct peerset ps;
	struct qdisc_state *qs;
	bool dry = false, split = false;
	unsigned sides, done = 0;
	int i, rc, status = 0;
	char lines[4096];

	ll_diag_clear(&diag);
	for (i = 1; i < argc; i++) {
		const struct impair_field *f;
		const char *name = argv[i], *val, *eq;
		char fname[64];

		rc = cmd_common_opt(&c, argc, argv, &i, &err);
		if (rc < 0) {
			ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
			continue;
		}
		if (rc > 0)
			continue;
		if (!strcmp(name, "--dry-run")) {
			dry = true;
			continue;
		}
		if (!strcmp(name, "--split")) {
			split = true;
			continue;
		}
		if (!strcmp(name, "--profile")) {
			if (i + 1 >= argc)
				ll_diag_add(&diag, LL_DIAG_ERROR, NULL,
					    "--profile needs a NAME (see linklab profile list)");
			else
				profile = argv[++i];
			continue;
		}
		if (strncmp(name, "--", 2) != 0) {
			ll_diag_add(&diag, LL_DIAG_ERROR, NULL,
				    "unexpected argument '%s'", name);
			continue;
		}
		eq = strchr(name, '=');
		snprintf(fname, sizeof(fname), "%.*s",
			 (int)(eq ? (size_t)(eq - name - 2) : strlen(name + 2)),
			 name + 2);
		f = impair_field_find(fname);
		if (!f) {
			ll_diag_add(&diag, LL_DIAG_ERROR, NULL,
				    "unknown option '%s' (see linklab help)", name);
			continue;
		}
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			ll_diag_add(&diag, LL_DIAG_ERROR, f->name,
				    "%s: missing value (%s)", f->name, f->range);
			continue;
		}
		impair_set(&d, f->name, val, &diag);
	}
	dial[0] = dial[1] = d;
	if (profile && diag.nerrors == 0) {
		char path[PATH_MAX];

		if (profile_find(profile, path, sizeof(path), &err) < 0)
			ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
		else if (profile_load(path, &prof, &diag) == 0) {
			dial[0] = prof.a;
			dial[1] = prof.b;
			overlay(&dial[0], &d, &diag);
			overlay(&dial[1], &d, &diag);
		}
	}
	if (diag.nerrors == 0 && impair_is_empty(&dial[0]) && impair_is_empty(&dial[1]))
		ll_diag_add(&diag, LL_DIAG_ERROR, NULL,
			    "nothing to apply: give at least one of --rate, --delay, "
			    "--jitter, --loss, ... (linklab clear removes an impairment)");
	if (diag.nerrors == 0 && !profile)
		impair_validate(&d, &diag);
	else if (diag.nerrors == 0 && (d.set || prof.per_side)) {
		impair_validate(&dial[0], &diag);
		if (prof.per_side)
			impair_validate(&dial[1], &diag);
	}
	if (diag.nerrors)
		return apply_usage_error(&diag);
	for (i = 0; i < diag.n; i++)
		fprintf(stderr, "linklab apply: warning: %s\n", diag.e[i].text);

	if (peerset_open(&ps, &c.po, &err) < 0)
		return cmd_fail("apply", &err);
	sides = cmd_sides(&c, &ps, &err);
	if (!sides) {
		peerset_close(&ps);
		return cmd_fail("apply", &err), 2;
	}
	if (split && sides == (CMD_SIDE_A | CMD_SIDE_B)) {
		split_dial(&dial[0]);
		split_dial(&dial[1]);
	}
	if (((sides & CMD_SIDE_A) && !ps.dev_a[0]) ||
	    ((sides & CMD_SIDE_B) && !ps.dev_b[0])) {
		if (!ps.has_b)
			fprintf(stderr, "linklab apply: which interface? give --dev IF "
				"(or --peer HOST to pick the one that routes to it)\n");
		else
			fprintf(stderr, "linklab apply: no interface found that routes "
				"to the other peer: give %s\n",
				(sides & CMD_SIDE_A) && !ps.dev_a[0] ? "--dev IF" : "--peer-dev IF");
		peerset_close(&ps);
		return 2;
	}
	qs = calloc(1, sizeof(*qs));
	for (i = 0; i < 2 && qs; i++) {
		unsigned side = i == 0 ? CMD_SIDE_A : CMD_SIDE_B;
		struct peer *p = i == 0 ? &ps.a : &ps.b;
		const char *dev = i == 0 ? ps.dev_a : ps.dev_b;

		if (!(sides & side) || impair_is_empty(&dial[i]))
			continue;
		if (dry) {
			rc = p->ops->dry_run(p, dev, &dial[i], lines, sizeof(lines), &err);
			if (rc < 0) {
				fprintf(stderr, "linklab apply: %s: %s\n", p->label, err.msg);
				status = 1;
				break;
			}
			printf("# %s\n%s", p->label, lines);
			continue;
		}
		rc = p->ops->apply(p, dev, &dial[i], &err);
		if (rc < 0) {
			fprintf(stderr, "linklab apply: %s %s: %s\n", p->label, dev, err.msg);
			status = 1;
			break;
		}
		done |= side;
	}
	if (status && (done & CMD_SIDE_A)) {
		/* All or nothing: the peer failed, put this host back. */
		if (ps.a.ops->clear(&ps.a, ps.dev_a, &err) < 0)
			fprintf(stderr, "linklab apply: could not restore %s: %s\n",
				ps.dev_a, err.msg);
		else
			fprintf(stderr, "linklab apply: %s restored; nothing applied\n",
				ps.dev_a);
		done = 0;
	}
	if (!status && !dry && qs) {
		cJSON *doc = c.json ? cJSON_CreateObject() : NULL;

		for (i = 0; i < 2; i++) {
			struct peer *p = i == 0 ? &ps.a : &ps.b;
			const char *dev = i == 0 ? ps.dev_a : ps.dev_b;

			if (!(done & (i == 0 ? CMD_SIDE_A : CMD_SIDE_B)))
				continue;
			memset(qs, 0, sizeof(*qs));
			if (p->ops->read_qdiscs(p, dev, qs, &err) < 0) {
				fprintf(stderr, "linklab apply: %s: read back: %s\n",
					p->label, err.msg);
				status = 1;
				continue;
			}
			if (doc) {
				cJSON *side = cJSON_CreateObject();

				cJSON_AddStringToObject(side, "dev", dev);
				cJSON_AddItemToObject(side, "qdiscs", cmd_json_qdiscs(qs));
				cJSON_AddItemToObject(doc, i == 0 ? "a" : "b", side);
			} else {
				cmd_print_qdiscs(stdout, p->label, qs);
			}
			/* an ingress dial lives on the interface's IFB device */
			if ((dial[i].set & IMP_DIRECTION) && dial[i].direction == IMP_INGRESS) {
				char ifb[IF_NAMESIZE], lbl[128];

				ff_ifb_name(dev, ifb, sizeof(ifb));
				memset(qs, 0, sizeof(*qs));
				if (p->ops->read_qdiscs(p, ifb, qs, &err) < 0) {
					fprintf(stderr, "linklab apply: %s: read back %s: %s\n",
						p->label, ifb, err.msg);
					status = 1;
				} else if (doc) {
					cJSON *side = cJSON_GetObjectItem(doc, i == 0 ? "a" : "b");
					cJSON *in = cJSON_CreateObject();

					cJSON_AddStringToObject(in, "ifb", ifb);
					cJSON_AddItemToObject(in, "qdiscs", cmd_json_qdiscs(qs));
					cJSON_AddItemToObject(side, "ingress", in);
				} else {
					snprintf(lbl, sizeof(lbl), "%s %s ingress via", p->label, dev);
					cmd_print_qdiscs(stdout, lbl, qs);
				}
			}
		}
		if (doc)
			cmd_print_json(doc);
	}
	free(qs);
	peerset_close(&ps);
	return status;
}
