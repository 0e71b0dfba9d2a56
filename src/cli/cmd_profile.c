/* SPDX-License-Identifier: MIT */
/* cmd_profile.c - `linklab profile list | show NAME | save NAME [dial options] |
 * rename NAME NEWNAME | delete NAME`. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/base/text.h"
#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/model/dialopt.h"
#include "linklab/model/profile.h"

/* One side's dial as [label] and its keys in schema order (impair_fields),
 * whatever order the file gave them in. */
static void print_dial(const char *label, const struct impair *d)
{
	const struct impair_field *f;
	char v[64];

	printf("[%s]\n", label);
	for (f = impair_fields; f->name; f++)
		if (d->set & f->bit)
			printf("%s = %s\n", f->name, impair_get(d, f, v, sizeof(v)));
}

static int profile_show(const char *name)
{
	char path[PATH_MAX];
	struct ll_err err = { 0 };
	struct ll_diag diag;
	struct profile p;
	int i, rc;

	if (profile_find(name, path, sizeof(path), &err) < 0) {
		fprintf(stderr, "linklab profile: %s\n", err.msg);
		return 1;
	}
	ll_diag_clear(&diag);
	rc = profile_load(path, &p, &diag);
	for (i = 0; i < diag.n; i++)
		fprintf(stderr, "%s%s\n", diag.e[i].level == LL_DIAG_WARN ?
			"warning: " : "", diag.e[i].text);
	if (rc < 0)
		return 1;
	printf("; %s\n; %s\n", p.path, p.description);
	if (p.per_side) {
		print_dial("a", &p.a);
		print_dial("b", &p.b);
	} else {
		print_dial("dial", &p.a);
	}
	return 0;
}

static int profile_do_save(int argc, char **argv)
{
	struct ll_err err = { 0 };
	struct ll_diag diag;
	struct impair d = { 0 };
	struct dialopt *dial = calloc(1, sizeof(*dial));
	const char *desc = NULL;
	char path[PATH_MAX], old[PATH_MAX];
	struct cmd_seen seen = { 0 };
	bool force = false;
	int i;

	if (!dial) {
		fprintf(stderr, "linklab profile save: out of memory\n");
		return 1;
	}
	dialopt_init(dial, 0);
	ll_diag_clear(&diag);
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--description") && i + 1 < argc) {
			if (!cmd_seen_twice(&seen, argv[i], strlen(argv[i]), argv[i + 1], &diag))
				desc = argv[i + 1];
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--force")) {
			force = true;
			continue;
		}
		if (!dialopt_take(dial, argc, argv, &i, &diag))
			ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "unknown option '%s'", argv[i]);
	}
	d = dial->lvl[DIALOPT_BOTH];
	free(dial);
	if (profile_name_check(argv[1], &err) < 0)
		ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
	if (!diag.nerrors)
		impair_validate(&d, &diag);
	if (!diag.nerrors && impair_is_empty(&d))
		ll_diag_add(&diag, LL_DIAG_ERROR, NULL,
			    "nothing to save: give dial options (--rate 50mbit --delay 50ms ...)");
	for (i = 0; i < diag.n; i++)
		fprintf(stderr, "linklab profile save: %s\n", diag.e[i].text);
	if (diag.nerrors)
		return 2;
	if (profile_find(argv[1], old, sizeof(old), NULL) == 0) {
		if (profile_is_user_path(old) && !force) {
			fprintf(stderr, "linklab profile save: profile %s exists (%s): "
				"add --force to overwrite it\n", argv[1], old);
			return 2;
		}
		if (!profile_is_user_path(old))
			fprintf(stderr, "linklab profile save: note: your %s will be "
				"used instead of the shipped %s\n", argv[1], old);
	}
	if (profile_save(argv[1], desc, &d, path, sizeof(path), &err) < 0) {
		fprintf(stderr, "linklab profile save: %s\n", err.msg);
		return 1;
	}
	printf("saved %s\n", path);
	return 0;
}

static void profile_usage(FILE *f)
{
	fprintf(f, "usage: linklab profile list | show NAME | fields | save NAME "
		"[--force] [--description TEXT] [--rate R] [--delay T] ...\n"
		"       linklab profile rename NAME NEWNAME | delete NAME  (user profiles)\n"
		"show prints the dial each side gets: [dial] when both get the same, else [a]\n"
		"and [b] (each [dial] with the side's own keys on top), one key a line in the\n"
		"order of `linklab profile fields` (the schema's), whatever the file's order.\n");
}

int cmd_profile(int argc, char **argv)
{
	struct profile_entry *v = NULL;
	struct ll_err err = { 0 };
	int n = 0, i;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		profile_usage(stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "list")) {
		if (profile_list(&v, &n, &err) < 0) {
			fprintf(stderr, "linklab profile: %s\n", err.msg);
			return 1;
		}
		for (i = 0; i < n; i++) {
			struct profile p;
			struct ll_diag diag;
			char name[4 * sizeof(v[i].name)];
			size_t w;

			/* the name as it is shown (escapes made visible),
			 * padded to 22 columns by what it takes on screen */
			text_sanitize(v[i].name, name, sizeof(name));
			w = text_width(name);
			printf("%s%*s %-5s ", name, w < 22 ? (int)(22 - w) : 0, "",
			       v[i].user ? "user" : "built");
			ll_diag_clear(&diag);
			if (profile_load(v[i].path, &p, &diag) < 0)
				printf("(invalid: %s)\n", diag.e[0].text);
			else
				printf("%s\n", p.description);
		}
		free(v);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "show"))
		return profile_show(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "fields")) {
		/* every dial field a profile (and --NAME) takes: one line each */
		const struct impair_field *f;

		for (f = impair_fields; f->name; f++)
			printf("%-18s %s\n", f->name, f->range);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "save"))
		return profile_do_save(argc - 1, argv + 1);
	if ((argc == 4 && !strcmp(argv[1], "rename")) ||
	    (argc == 3 && !strcmp(argv[1], "delete"))) {
		char path[PATH_MAX], npath[PATH_MAX];

		if (profile_find(argv[2], path, sizeof(path), &err) < 0) {
			fprintf(stderr, "linklab profile: %s\n", err.msg);
			return 1;
		}
		if (argc == 4 ? profile_rename(path, argv[3], npath, sizeof(npath), &err) < 0
			      : profile_delete(path, &err) < 0) {
			fprintf(stderr, "linklab profile %s: %s\n", argv[1], err.msg);
			return 1;
		}
		if (argc == 4)
			printf("renamed %s -> %s\n", path, npath);
		else
			printf("deleted %s\n", path);
		return 0;
	}
	profile_usage(stderr);
	return 2;
}
