/* SPDX-License-Identifier: MIT */
/* cmd_apply.c - `linklab apply`: check everything first - the dial, the
 * profile, the interfaces on both peers - and report every problem at once;
 * then apply on this host and/or the peer, all or nothing: if the peer fails,
 * this host is put back as it was. */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/cli/cmd_apply_check.h"
#include "linklab/model/dialopt.h"
#include "linklab/model/qdisc.h"
#include "linklab/peer/enghook.h"
#include "linklab/peer/journal.h"
#include "linklab/peer/peer_lock.h"
#include "linklab/model/profile.h"
#include "linklab/base/units.h"

struct apply_args {
	struct cmd_common c;
	struct impair d;          /* dial from the command line */
	const char *profile;
	bool dry, split;
	bool check;               /* --check: compare only (cmd_apply_check.c) */
	int engine;               /* enum enghook_mode (--engine) */
};

/* True if field name appears in text as a word ("reorder needs delay"). */
static bool mentions(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = strstr(text, name); p; p = strstr(p + 1, name)) {
		bool left = p == text || !(p[-1] == '-' || (p[-1] >= 'a' && p[-1] <= 'z'));
		bool right = !(p[n] == '-' || (p[n] >= 'a' && p[n] <= 'z'));

		if (left && right)
			return true;
	}
	return false;
}

/* Validate d into diag, leaving out cross-field messages about fields whose
 * value was already refused (a bad --delay must not also read "reorder needs
 * delay"). */
static void validate_into(const struct impair *d, struct ll_diag *diag)
{
	struct ll_diag v;
	int i, k;

	ll_diag_clear(&v);
	impair_validate(d, &v);
	for (i = 0; i < v.n; i++) {
		bool skip = false;

		for (k = 0; k < diag->n && !skip; k++)
			if (diag->e[k].level == LL_DIAG_ERROR && diag->e[k].field[0] &&
			    mentions(v.e[i].text, diag->e[k].field))
				skip = true;
		if (!skip)
			ll_diag_add(diag, v.e[i].level, v.e[i].field, "%s", v.e[i].text);
	}
}

/* Parse argv into a; every problem goes to diag. */
static void parse_args(struct apply_args *a, int argc, char **argv,
		       struct ll_diag *diag)
{
	struct dialopt *dial = calloc(1, sizeof(*dial));
	struct ll_err err = { 0 };
	int i, rc;

	if (!dial) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "out of memory");
		return;
	}
	dialopt_init(dial, 0);
	for (i = 1; i < argc; i++) {
		const char *name = argv[i];

		rc = cmd_common_opt(&a->c, argc, argv, &i, &err);
		if (rc < 0) {
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
			continue;
		}
		if (rc > 0)
			continue;
		if (!strcmp(name, "--dry-run")) {
			a->dry = true;
			continue;
		}
		if (!strcmp(name, "--check")) {
			a->check = true;
			continue;
		}
		if (!strcmp(name, "--split")) {
			a->split = true;
			continue;
		}
		if (!strcmp(name, "--engine")) {
			if (i + 1 >= argc || (a->engine = enghook_mode_parse(argv[i + 1])) < 0)
				ll_diag_add(diag, LL_DIAG_ERROR, "engine",
					    "--engine '%s': auto, kernel or user",
					    i + 1 < argc ? argv[i + 1] : "");
			i += i + 1 < argc;
			continue;
		}
		if (!strcmp(name, "--profile")) {
			if (i + 1 >= argc)
				ll_diag_add(diag, LL_DIAG_ERROR, NULL,
					    "--profile needs a NAME (see linklab profile list)");
			else if (a->profile)
				ll_diag_add(diag, LL_DIAG_ERROR, "profile",
					    "option --profile given twice ('%s', then '%s'): give it once",
					    a->profile, argv[++i]);
			else
				a->profile = argv[++i];
			continue;
		}
		if (dialopt_take(dial, argc, argv, &i, diag))
			continue;
		if (name[0] != '-' || !name[1])
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "unexpected argument '%s'", name);
		else
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "unknown option '%s' (see linklab apply -h)", name);
	}
	a->d = dial->lvl[DIALOPT_BOTH];
	free(dial);
	if (a->dry && a->check)
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "--dry-run and --check exclude each other (--dry-run shows what "
			    "would change, --check compares what is there): give one");
	if (a->split && (a->c.local_only || a->c.remote_only))
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "--split halves the dial between both peers: it cannot be "
			    "combined with %s", a->c.local_only ? "--local" : "--remote");
}

/* The dial for each side: profile [a]/[b] overlaid by the command line. */
static void build_dials(struct apply_args *a, struct impair dial[2],
			struct ll_diag *diag)
{
	struct profile *prof;
	struct ll_err err = { 0 };
	char path[PATH_MAX];

	dial[0] = dial[1] = a->d;
	if (!a->profile) {
		validate_into(&a->d, diag);
		if (impair_is_empty(&a->d) && !diag->nerrors)
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "nothing to apply: give at least one of --rate, "
				    "--delay, --jitter, --loss, ... or --profile NAME "
				    "(linklab clear removes an impairment)");
		return;
	}
	prof = calloc(1, sizeof(*prof));
	if (!prof)
		return;
	if (profile_find(a->profile, path, sizeof(path), &err) < 0) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
	} else if (profile_load(path, prof, diag) == 0) {
		dial[0] = prof->a;
		dial[1] = prof->b;
		impair_overlay(&dial[0], &a->d);
		impair_overlay(&dial[1], &a->d);
		validate_into(&dial[0], diag);
		if (prof->per_side)
			validate_into(&dial[1], diag);
		if (impair_is_empty(&dial[0]) && impair_is_empty(&dial[1]))
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "profile %s (%s) dials nothing", a->profile, path);
	}
	free(prof);
}

/* -J: one document even on failure, with "error" (every error joined) and
 * each problem in "problems" ({level, field, text}). */
static void json_failure(const struct ll_diag *diag, const char *extra, bool restored)
{
	cJSON *doc = cJSON_CreateObject(), *arr = cJSON_CreateArray();
	struct ll_err e = { 0 };
	int i;

	if (diag) {
		ll_diag_to_err(diag, &e);
		for (i = 0; i < diag->n; i++) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "level", diag->e[i].level == LL_DIAG_WARN ?
						"warning" : "error");
			if (diag->e[i].field[0])
				cJSON_AddStringToObject(o, "field", diag->e[i].field);
			cJSON_AddStringToObject(o, "text", diag->e[i].text);
			cJSON_AddItemToArray(arr, o);
		}
	}
	if (!diag && extra) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "level", "error");
		cJSON_AddStringToObject(o, "text", extra);
		cJSON_AddItemToArray(arr, o);
	}
	cJSON_AddStringToObject(doc, "error", extra ? extra : e.msg);
	cJSON_AddItemToObject(doc, "problems", arr);
	cJSON_AddBoolToObject(doc, "changed", false);
	if (restored)
		cJSON_AddBoolToObject(doc, "restored", true);
	cmd_print_json(doc);
}

static int report(const struct ll_diag *diag, bool json)
{
	int i;

	if (json && diag->nerrors)
		json_failure(diag, NULL, false);

	for (i = 0; i < diag->n; i++)
		fprintf(stderr, "linklab apply: %s%s\n",
			diag->e[i].level == LL_DIAG_WARN ? "warning: " : "",
			diag->e[i].text);
	if (diag->truncated)
		fprintf(stderr, "linklab apply: (more problems not shown)\n");
	if (diag->nerrors)
		fprintf(stderr, "linklab apply: nothing was changed\n");
	return diag->nerrors ? 2 : 0;
}

/* --split: each side's half of the dial (impair_split) in place, checked
 * again: a half that breaks a cross-field rule (B's delay 0ns under a
 * jitter, from --delay 1ns) is refused naming the side and what was given. */
static void split_checked(struct impair dial[2], struct ll_diag *diag)
{
	struct ll_diag v;
	int i, k;

	impair_split(&dial[0], &dial[1]);
	for (i = 0; i < 2; i++) {
		ll_diag_clear(&v);
		impair_validate(&dial[i], &v);
		for (k = 0; k < v.n; k++)
			ll_diag_add(diag, v.e[k].level, v.e[k].field,
				    "--split: %s's half of the dial: %s (halves are whole ns, "
				    "A taking the odd one: split a delay or jitter of 2ns or more)",
				    i ? "B" : "A", v.e[k].text);
	}
}

/* The engine choice to each side that can take it; a side that cannot
 * (no set_engine) keeps the kernel. */
static void set_engines(const struct apply_args *a, struct peerset *ps, unsigned sides)
{
	int port = a->c.po.exclude_ssh ? 22 : 0;

	if ((sides & CMD_SIDE_A) && ps->a.ops->engine)
		ps->a.ops->engine->set_engine(&ps->a, a->engine, port);
	if ((sides & CMD_SIDE_B) && ps->has_b && ps->b.ops->engine)
		ps->b.ops->engine->set_engine(&ps->b, a->engine, port);
}

/* Print what the kernels hold now on the sides in done (and, for an
 * ingress dial, on the interface's IFB device). */
static int read_back(struct peerset *ps, const struct impair dial[2],
		     unsigned done, bool json)
{
	struct qdisc_state *qs = calloc(1, sizeof(*qs));
	cJSON *doc = json ? cJSON_CreateObject() : NULL;
	struct ll_err err = { 0 };
	int i, status = 0;

	for (i = 0; i < 2 && qs; i++) {
		struct peer *p = i == 0 ? &ps->a : &ps->b;
		const char *dev = i == 0 ? ps->dev_a : ps->dev_b;

		if (!(done & (i == 0 ? CMD_SIDE_A : CMD_SIDE_B)))
			continue;
		memset(qs, 0, sizeof(*qs));
		if (p->ops->read_qdiscs(p, dev, qs, &err) < 0) {
			fprintf(stderr, "linklab apply: %s %s: read back: %s\n",
				p->label, dev, cmd_errtext(dev, &err));
			if (doc && !cJSON_GetObjectItem(doc, "error"))
				cJSON_AddStringToObject(doc, "error", err.msg);
			status = 1;
			continue;
		}
		if (doc) {
			cJSON *side = cmd_json_side(doc, i, p, dev);

			cJSON_AddItemToObject(side, "qdiscs", cmd_json_qdiscs(qs));
			cmd_engine_report(stdout, side, p, dev);
		} else {
			cmd_print_qdiscs(stdout, p->label, qs);
			cmd_engine_report(stdout, NULL, p, dev);
		}
		if ((dial[i].set & IMP_DIRECTION) && dial[i].direction == IMP_INGRESS) {
			char ifb[IF_NAMESIZE], lbl[128];

			qdisc_ifb_name(dev, ifb, sizeof(ifb));
			memset(qs, 0, sizeof(*qs));
			if (p->ops->read_qdiscs(p, ifb, qs, &err) < 0) {
				fprintf(stderr, "linklab apply: %s: read back %s: %s\n",
					p->label, ifb, err.msg);
				if (doc && !cJSON_GetObjectItem(doc, "error"))
					cJSON_AddStringToObject(doc, "error", err.msg);
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
	free(qs);
	return status;
}

/* A live console that drives side i: an apply from here is refused naming
 * it (diag). True when it is refused. */
static bool cmd_apply_holder(struct peerset *ps, int i, const char *dev,
			     struct ll_diag *diag)
{
	char desc[200], werr[LL_DIAG_LEN];
	int rc = cmd_side_holder(ps, i, dev, desc, sizeof(desc), werr, sizeof(werr));

	if (rc < 0)
		ll_diag_add(diag, LL_DIAG_WARN, NULL,
			    "B: could not tell whether a console drives the peer: %s", werr);
	if (rc != 1)
		return false;
	ll_diag_add(diag, LL_DIAG_ERROR, NULL,
		    "%s %s is driven by %s: its dial is that console's (dial it there, "
		    "or quit that console first); nothing changed",
		    i == 0 ? "A" : "B", dev, desc);
	return true;
}

/* The interfaces each side needs, a console that drives a side (each such
 * refusal counted in *nheld), and on the interface that carries the SSH
 * session to B a warning (or 100 % loss refused without --force); problems
 * go to diag. */
static void cmd_apply_preflight(const struct apply_args *a, struct peerset *ps,
				unsigned sides, const struct impair dial[2],
				struct ll_diag *diag, int *nheld)
{
	struct ll_err err = { 0 };
	int i, before;

	if ((sides & CMD_SIDE_A) && !ps->dev_a[0])
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, ps->has_b ?
			    "no interface on this host routes to the peer: give --dev IF" :
			    "which interface? give --dev IF (or --peer HOST to "
			    "pick the one that routes to it)");
	if ((sides & CMD_SIDE_B) && !ps->dev_b[0])
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "no interface on the peer routes to this host: give --peer-dev IF");
	/* a console on either side, then the interface that carries the SSH
	 * session to B: warn, and refuse 100 % loss on it without --force */
	before = diag->nerrors;
	for (i = 0; i < 2; i++) {
		const char *dev = i == 0 ? ps->dev_a : ps->dev_b;
		char warn[LL_DIAG_LEN];

		if (!(sides & (i == 0 ? CMD_SIDE_A : CMD_SIDE_B)) || !dev[0] ||
		    impair_is_empty(&dial[i]))
			continue;
		if (cmd_apply_holder(ps, i, dev, diag))
			(*nheld)++;
		if (i == 0 && a->c.po.exclude_ssh && a->engine == ENGHOOK_KERNEL)
			ll_diag_add(diag, LL_DIAG_ERROR, "engine",
				    "--exclude-ssh with --engine kernel: on this host only "
				    "linklab's engine keeps the SSH port out of the dial (the "
				    "qdisc tree here has no such filter); use --engine auto or "
				    "user, or leave out --exclude-ssh");
		if (before)
			continue;
		if (peerset_ssh_check(ps, i, dev, &dial[i], a->c.po.force, warn,
				      sizeof(warn), &err) < 0)
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
		else if (warn[0] && !a->c.po.exclude_ssh)
			ll_diag_add(diag, LL_DIAG_WARN, NULL, "%s", warn);
	}
}

/* --dry-run on one side: its commands printed, or into doc (-J); on
 * failure the message is said, kept in failmsg and the status returned. */
static int cmd_apply_dry_side(struct peer *p, const char *dev, int i,
			      const struct impair *dial, cJSON *doc,
			      char *failmsg, size_t fmlen)
{
	struct ll_err err = { 0 };
	char lines[4096];

	if (p->ops->dry_run(p, dev, dial, lines, sizeof(lines), &err) < 0) {
		fprintf(stderr, "linklab apply: %s %s: %s\n", p->label,
			dev, cmd_errtext(dev, &err));
		snprintf(failmsg, fmlen, "%s %s: %s", p->label,
			 dev, cmd_errtext(dev, &err));
		return cmd_status(&err);
	}
	if (doc) {
		cJSON *cmds = cJSON_CreateArray();
		char *line, *save = NULL;

		for (line = strtok_r(lines, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			cJSON_AddItemToArray(cmds, cJSON_CreateString(line));
		cJSON_AddItemToObject(cmd_json_side(doc, i, p, dev),
				      "commands", cmds);
	} else {
		printf("# %s\n%s", p->label, lines);
	}
	return 0;
}

/* Say the records a peer dropped on the way (another device's numbers),
 * one line each, control characters shown as '?'. */
static void cmd_apply_print_notes(struct peer *p)
{
	/* records dropped on the way (another device's numbers) */
	if (p->ops->journal && p->ops->journal->notes(p)[0]) {
		const char *s = p->ops->journal->notes(p);

		while (*s) {
			size_t n = strcspn(s, "\n"), k;

			fprintf(stderr, "linklab apply: %s: ", p->label);
			for (k = 0; k < n; k++)
				fputc((unsigned char)s[k] < 0x20 ? '?' : s[k], stderr);
			fputc('\n', stderr);
			s += n + (s[n] == '\n');
		}
	}
}

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT while the dial is being applied: the
 * handler only records the signal. The side being changed finishes (its
 * waits stay bounded by --peer-timeout: cut short, a change on the peer
 * could be confirmed there while this host puts its side back), no further
 * side starts, and what was applied is put back, as when the peer fails.
 * A signal after the last side leaves the whole dial in place. */
static volatile sig_atomic_t apply_sig;
static const int apply_sigs[4] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void apply_on_signal(int sig)
{
	apply_sig = sig;
}

static void apply_signals(struct sigaction old[4], bool on)
{
	struct sigaction sa;
	int k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = apply_on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (k = 0; k < 4; k++)
		if (on)
			sigaction(apply_sigs[k], &sa, &old[k]);
		else
			sigaction(apply_sigs[k], &old[k], NULL);
}

static const char *apply_signame(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	case SIGQUIT: return "SIGQUIT";
	}
	return "a signal";
}

/* The exit status 128 + signal, with the message. */
static int apply_stopped(char *failmsg, size_t len)
{
	fprintf(stderr, "linklab apply: stopped by %s\n", apply_signame(apply_sig));
	snprintf(failmsg, len, "stopped by %s", apply_signame(apply_sig));
	return 128 + apply_sig;
}

int cmd_apply(int argc, char **argv)
{
	struct apply_args a = { 0 };
	struct ll_err err = { 0 };
	struct ll_diag diag;
	struct impair dial[2];
	struct peerset ps;
	cJSON *doc = NULL;
	unsigned sides = 0, done = 0;
	bool opened = false, restored = false;
	int i, rc, status = 0, nheld = 0, nrun = 0;
	char failmsg[LL_ERR_MAX + 64] = "";
	struct sigaction old[4];

	ll_diag_clear(&diag);
	apply_sig = 0;
	parse_args(&a, argc, argv, &diag);
	if (a.c.help) {
		cli_print_usage("apply", stdout);
		return 0;
	}
	build_dials(&a, dial, &diag);

	/* Open the peers even when the dial is wrong, so that a wrong
	 * interface is reported in the same run. */
	if (peerset_open(&ps, &a.c.po, &err) < 0) {
		ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
		/* a peer that cannot be reached is a failure (1), not a
		 * mistake of the command line (2: a bad name or interface) */
		if (err.code != -EINVAL && err.code != -ENODEV)
			nrun++;
	} else
		opened = true;
	if (opened)
		cmd_leftovers("apply");
	if (opened) {
		sides = cmd_sides(&a.c, &ps, &err);
		if (!sides)
			ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
		else if (a.split && sides != (CMD_SIDE_A | CMD_SIDE_B) &&
			 !a.c.local_only && !a.c.remote_only)
			ll_diag_add(&diag, LL_DIAG_ERROR, NULL,
				    "--split halves the dial between two peers: it needs --peer HOST");
		cmd_apply_preflight(&a, &ps, sides, dial, &diag, &nheld);
	}
	if (a.split && sides == (CMD_SIDE_A | CMD_SIDE_B) && !diag.nerrors)
		split_checked(dial, &diag);
	for (i = 0; i < 2; i++) {
		char jw[LL_DIAG_LEN];
		/* a dial refused is not applied: no warning about it */
		if (!diag.nerrors && (sides & (i == 0 ? CMD_SIDE_A : CMD_SIDE_B)) &&
		    impair_jitter_reorder_warning(&dial[i], 0, 0, jw, sizeof(jw)))
			ll_diag_add(&diag, LL_DIAG_WARN, "jitter", "%s: %s",
				    i == 0 ? "A" : "B", jw);
	}
	if (report(&diag, a.c.json)) {
		if (opened)
			peerset_close(&ps);
		/* refused only because a console drives a side or the peer
		 * cannot be reached: 1, as a second console is; any problem
		 * of the command line: 2 */
		return diag.nerrors > nheld + nrun ? 2 : 1;
	}
	set_engines(&a, &ps, sides);
	if (a.check) {
		status = cmd_apply_check(&ps, sides, dial, a.c.json);
		peerset_close(&ps);
		return status;
	}
	if (a.dry && a.c.json)
		doc = cJSON_CreateObject();
	apply_signals(old, true);
	for (i = 0; i < 2; i++) {
		unsigned side = i == 0 ? CMD_SIDE_A : CMD_SIDE_B;
		struct peer *p = i == 0 ? &ps.a : &ps.b;
		const char *dev = i == 0 ? ps.dev_a : ps.dev_b;

		if (!(sides & side) || impair_is_empty(&dial[i]))
			continue;
		if (apply_sig) {        /* stopped before this side: none of it */
			status = apply_stopped(failmsg, sizeof(failmsg));
			break;
		}
		if (a.dry) {
			status = cmd_apply_dry_side(p, dev, i, &dial[i], doc, failmsg,
						    sizeof(failmsg));
			if (status)
				break;
			continue;
		}
		rc = p->ops->apply(p, dev, &dial[i], &err);
		cmd_apply_print_notes(p);
		if (rc < 0) {
			fprintf(stderr, "linklab apply: %s %s: %s\n", p->label, dev,
				cmd_errtext(dev, &err));
			snprintf(failmsg, sizeof(failmsg), "%s %s: %s", p->label, dev,
				 cmd_errtext(dev, &err));
			if (apply_sig)
				fprintf(stderr, "linklab apply: stopped by %s\n",
					apply_signame(apply_sig));
			status = apply_sig ? 128 + apply_sig : cmd_status(&err);
			break;
		}
		done |= side;
	}
	if (doc && status)
		cJSON_AddStringToObject(doc, "error", failmsg);
	if (doc)
		cmd_print_json(doc);
	if (status && (done & CMD_SIDE_A)) {
		/* All or nothing: the peer failed, put this host back. */
		if (ps.a.ops->clear(&ps.a, ps.dev_a, &err) < 0)
			fprintf(stderr, "linklab apply: could not restore %s: %s\n",
				ps.dev_a, err.msg);
		else
			fprintf(stderr, "linklab apply: %s restored; nothing applied\n",
				ps.dev_a);
		done = 0;
		restored = true;
	}
	if (status && !done && !restored && !a.dry && !a.c.json &&
	    !strstr(failmsg, "nothing changed") && !strstr(failmsg, "nothing was changed"))
		/* each side's apply is all or nothing: none of it happened */
		fprintf(stderr, "linklab apply: nothing was changed\n");
	if (status && a.c.json && !a.dry)
		json_failure(NULL, failmsg, restored);
	if (!status && !a.dry)
		status = read_back(&ps, dial, done, a.c.json);
	if (done && apply_sig)
		/* every side finished before the signal was seen: the dial is
		 * whole, and stays */
		fprintf(stderr, "linklab apply: %s came when the dial was applied: "
			"it stays (linklab clear removes it)\n", apply_signame(apply_sig));
	peerset_close(&ps);
	apply_signals(old, false);
	return status;
}
