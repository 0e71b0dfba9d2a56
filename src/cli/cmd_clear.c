/* SPDX-License-Identifier: MIT */
/* cmd_clear.c - `linklab clear`: restore what was on the interfaces before
 * linklab touched them. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>

#include "linklab/bridge/bridge.h"
#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/peer/enghook.h"
#include "linklab/peer/journal.h"
#include "linklab/peer/peer_lock.h"
#include "linklab/peer/remote_record.h"

/* --all here: bridge devices that a killed `linklab bridge --engine kernel`
 * left (bridge_kernel_stale) go too, after their ports' dials. */
static void reap_bridges(struct peer *p, FILE *out)
{
	struct bridge_stale st[8];
	struct ll_err err = { 0 };
	int n = 0, i;

	if (bridge_kernel_stale(st, 8, &n, &err) < 0) {
		fprintf(stderr, "linklab clear: %s: %s\n", p->label, err.msg);
		return;
	}
	for (i = 0; i < n; i++) {
		if (bridge_kernel_reap(p, &st[i], &err) < 0)
			fprintf(stderr, "linklab clear: %s: bridge %s left by pid %d: %s\n",
				p->label, st[i].name, st[i].pid, err.msg);
		else
			fprintf(out, "%s: bridge %s left by a killed linklab bridge (pid %d) "
				"removed\n", p->label, st[i].name, st[i].pid);
	}
}

/* A, after a clear: the owner records that dead consoles (kill -9) left on
 * dev (NULL: every interface), so later commands stop naming them. A live
 * console's record stays (peer_lock_drop_stale skips a held flock). */
static void drop_dead_owners(const char *dev)
{
	struct peer_lock_owner st[16];
	uint64_t ns;
	unsigned idx = dev ? if_nametoindex(dev) : 0;
	int n = 0, k;

	if (journal_netns(&ns, NULL) < 0)
		return;
	if (dev) {
		if (idx)
			peer_lock_drop_stale(ns, (int)idx);
		return;
	}
	if (peer_lock_stale(ns, st, 16, &n, NULL) < 0)
		return;
	for (k = 0; k < n; k++)
		peer_lock_drop_stale(ns, st[k].ifindex);
}

/* The peer's notes of the last clear (records dropped or not restored),
 * one "LABEL: line" each, sanitized. */
static void print_notes(struct peer *p, FILE *out)
{
	const char *s = p->ops->journal ? p->ops->journal->notes(p) : "";

	while (s && *s) {
		size_t n = strcspn(s, "\n"), k;

		fprintf(out, "%s: ", p->label);
		for (k = 0; k < n; k++)
			fputc((unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k], out);
		fputc('\n', out);
		s += n + (s[n] == '\n');
	}
}

/* Whether dev on p has anything to restore: a record (damaged ones too) or
 * an endpoint engine holding its dial. true when it cannot be told. */
/* Whether clear --all has anything to put back on p: a record (of any
 * kind, damaged ones too) or, here, an engine hook record. True when it
 * cannot tell. */
static bool has_any_record(struct peer *p)
{
	struct peer_record *r = calloc(64, sizeof(*r));
	struct ll_err err = { 0 };
	struct dirent *de;
	DIR *d;
	int n = 0;
	bool found;

	if (!r || !p->ops->journal || p->ops->journal->records(p, r, 64, &n, &err) < 0) {
		free(r);
		return true;
	}
	free(r);
	found = n > 0;
	if (found || strcmp(p->ops->name, "local"))
		return found || strcmp(p->ops->name, "local");
	d = opendir(journal_dir());
	while (d && !found && (de = readdir(d)))
		found = !strncmp(de->d_name, "engine-", 7) || !strncmp(de->d_name, "remote-", 7);
	if (d)
		closedir(d);
	return found;
}

static bool has_record(struct peer *p, const char *dev)
{
	struct peer_record *r = calloc(64, sizeof(*r));
	struct enghook_info h;
	struct ll_err err = { 0 };
	bool found = false;
	uint64_t ns;
	int n = 0, k;

	if (!r || !p->ops->journal || p->ops->journal->records(p, r, 64, &n, &err) < 0) {
		free(r);
		return true;
	}
	for (k = 0; k < n && !found; k++)
		found = !strcmp(r[k].dev, dev);
	free(r);
	if (!found && !strcmp(p->ops->name, "local") && journal_netns(&ns, NULL) == 0)
		found = remote_record_exists(ns, dev);   /* left by an apply --peer */
	if (!found && p->ops->engine)
		found = p->ops->engine->engine_get(p, dev, &h, &err) == 0;
	return found;
}

/* clear --forget without --all drops only what was named: A's record with
 * --dev, B's with --peer-dev (a preselected interface is not a name). */
static bool forget_named(const struct cmd_common *c, int side, bool all)
{
	return all || (side == 0 ? c->po.dev != NULL : c->po.peer_dev != NULL);
}

/* B could not be reached: why, what restores it on its own, and how to
 * restore it by hand. */
static void b_unreached(const struct peerset *ps, const struct cmd_common *c, bool all)
{
	fprintf(stderr, "linklab clear: B (%s) could not be reached, nothing changed there: %s\n",
		c->po.peer, ps->b_err.msg);
	fprintf(stderr, "linklab clear: B's revert timer (--revert-after) or its guard restores "
		"B's dial by itself if one was armed; to restore B by hand, run on B: "
		"linklab clear %s%s\n", all ? "--all" : "--dev ",
		all ? "" : (c->po.peer_dev ? c->po.peer_dev : "IF"));
}

/* A live console drives a side to be cleared: its dial is that console's
 * and it restores it on quit; refused naming it (both sides at once)
 * unless --force. True when refused. */
static bool clear_held(struct peerset *ps, const struct cmd_common *c, unsigned sides,
		       bool all)
{
	char desc[200], werr[300];
	bool held = false;
	int i;

	for (i = 0; i < 2 && !c->po.force; i++) {
		const char *dev = i == 0 ? ps->dev_a : ps->dev_b;

		if (!(sides & (i == 0 ? CMD_SIDE_A : CMD_SIDE_B)) ||
		    (i == 0 && all) || cmd_side_holder(ps, i, dev, desc, sizeof(desc), werr,
							 sizeof(werr)) != 1)
			continue;
		fprintf(stderr, "linklab clear: %s %s is driven by %s: quit that console "
			"(it restores what it applied), or --force to clear under it; "
			"nothing changed\n", i == 0 ? "A" : "B", dev, desc);
		held = true;
	}
	return held;
}

int cmd_clear(int argc, char **argv)
{
	struct cmd_common c = { 0 };
	struct ll_err err = { 0 };
	struct peerset ps;
	bool all = false, forget = false, had = true;
	cJSON *doc = NULL;
	unsigned sides;
	int i, rc, status = 0, nbad = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all")) {
			all = true;
			continue;
		}
		if (!strcmp(argv[i], "--forget")) {
			forget = true;
			continue;
		}
		rc = cmd_common_opt(&c, argc, argv, &i, &err);
		if (rc < 0) {
			cmd_fail("clear", &err);     /* every problem at once */
			nbad++;
		} else if (rc == 0) {
			fprintf(stderr, "linklab clear: unknown option '%s'\n", argv[i]);
			nbad++;
		}
	}
	if (nbad)
		return 2;
	if (c.help) {
		cli_print_usage("clear", stdout);
		return 0;
	}
	c.po.b_optional = !c.remote_only;    /* A is restored even when B is gone */
	if (peerset_open(&ps, &c.po, &err) < 0)
		return cmd_fail("clear", &err);
	sides = cmd_sides(&c, &ps, &err);
	if (!sides) {
		peerset_close(&ps);
		return cmd_fail("clear", &err);
	}
	if (!forget && clear_held(&ps, &c, sides, all)) {
		peerset_close(&ps);
		return 1;
	}
	if (c.json)
		doc = cJSON_CreateObject();
	for (i = 0; i < 2; i++) {
		struct peer *p = i == 0 ? &ps.a : &ps.b;
		const char *dev = i == 0 ? ps.dev_a : ps.dev_b;

		if (!(sides & (i == 0 ? CMD_SIDE_A : CMD_SIDE_B)))
			continue;
		if (forget) {
			if (!p->ops->journal) {
				fprintf(stderr, "linklab clear: %s: --forget is not supported here\n",
					p->label);
				status = 2;
				continue;
			}
			if (!forget_named(&c, i, all)) {
				if (c.po.dev || c.po.peer_dev)
					continue;   /* only the side named */
				fprintf(stderr, "linklab clear --forget: %s: give %s IF (or --all)\n",
					p->label, i == 0 ? "--dev" : "--peer-dev");
				status = 2;
				continue;
			}
			rc = p->ops->journal->forget(p, all ? NULL : dev, &err);
			print_notes(p, doc ? stderr : stdout);
			if (rc < 0) {
				fprintf(stderr, "linklab clear: %s: %s\n", p->label, err.msg);
				status = cmd_status(&err);
			}
			continue;
		}
		if (all && p->ops->clear_all) {
			had = has_any_record(p);
			rc = p->ops->clear_all(p, &err);
			if (rc >= 0 && !strcmp(p->ops->name, "local"))
				reap_bridges(p, doc ? stderr : stdout);
		} else if (!dev[0]) {
			fprintf(stderr, "linklab clear: %s: no interface: give %s IF "
				"(or --all)\n", p->label, i == 0 ? "--dev" : "--peer-dev");
			status = 1;
			continue;
		} else {
			had = has_record(p, dev);
			rc = p->ops->clear(p, dev, &err);
		}
		if (rc >= 0 && i == 0 && !strcmp(p->ops->name, "local"))
			drop_dead_owners(all ? NULL : dev);
		/* offloads and sysctls linklab changed (linklab offload/sysctl) */
		if (rc >= 0 && p->ops->tune) {
			struct ll_err terr = { 0 };

			if (p->ops->tune->tune_restore(p, &terr) < 0) {
				fprintf(stderr, "linklab clear: %s: offloads/sysctls: %s\n",
					p->label, terr.msg);
				status = 1;
			}
		}
		print_notes(p, doc || rc < 0 ? stderr : stdout);
		if (rc < 0) {
			fprintf(stderr, "linklab clear: %s: %s\n", p->label, err.msg);
			status = cmd_status(&err);
		} else if (doc) {
			cJSON *side = cmd_json_side(doc, i, p, all ? NULL : dev);

			cJSON_AddBoolToObject(side, "all", all);
			cJSON_AddBoolToObject(side, "restored", all || had);
		} else if (!all && (!had || (p->ops->journal && strstr(p->ops->journal->notes(p),
								     "nothing restored")))) {
			printf("%s: nothing to restore on %s\n", p->label, dev);
		} else if (all && !had) {
			printf("%s: nothing to restore (no records)\n", p->label);
		} else {
			printf("%s: %s restored\n", p->label, all ? "all interfaces" : dev);
		}
	}
	if (ps.b_failed) {
		b_unreached(&ps, &c, all);
		status = 1;
	}
	if (doc)
		cmd_print_json(doc);
	peerset_close(&ps);
	return status;
}
