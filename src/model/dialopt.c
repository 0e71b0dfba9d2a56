/* SPDX-License-Identifier: MIT */
/* dialopt.c - the one command-line parser of dial options (dialopt.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "linklab/model/dialopt.h"

static const char *const level_prefix[DIALOPT_LEVELS] = { "a_to_b: ", "b_to_a: ", "" };

void dialopt_init(struct dialopt *o, unsigned flags)
{
	memset(o, 0, sizeof(*o));
	o->flags = flags;
}

/* Parse value v of field f onto level lvl; problems prefixed by the level. */
static void put(struct dialopt *o, int lvl, const char *opt, const struct impair_field *f,
		const char *v, struct ll_diag *diag)
{
	unsigned b = (unsigned)__builtin_ctz(f->bit);
	struct ll_diag one;
	int k;

	if (o->seen[lvl] & f->bit) {
		ll_diag_add(diag, LL_DIAG_ERROR, f->name,
			    "option %s given twice ('%s', then '%s'): give it once",
			    opt, o->first[lvl][b], v);
		return;
	}
	o->seen[lvl] |= f->bit;
	snprintf(o->first[lvl][b], sizeof(o->first[lvl][b]), "%s", v);
	if ((o->flags & DIALOPT_DIST_FILE) && f->bit == IMP_DIST && strchr(v, '/')) {
		snprintf(o->dist_file[lvl], sizeof(o->dist_file[lvl]), "%s", v);
		o->lvl[lvl].set &= ~(uint32_t)IMP_DIST;
		return;
	}
	ll_diag_clear(&one);
	impair_set(&o->lvl[lvl], f->name, v, &one);
	for (k = 0; k < one.n; k++)
		ll_diag_add(diag, one.e[k].level, one.e[k].field, "%s%s",
			    level_prefix[lvl], one.e[k].text);
}

/* The alias name with value v as up to two (field, value) pairs; 0 when
 * name is no alias. */
static int alias(const char *name, const char *v, const struct impair_field *f[2],
		 char val[2][DIALOPT_VALUE_MAX])
{
	const char *comma = strchr(v, ',');

	if (!strcmp(name, "overhead")) {
		f[0] = impair_field_find("packet-overhead");
		snprintf(val[0], DIALOPT_VALUE_MAX, "%s", v);
		return 1;
	}
	if (strcmp(name, "cell"))
		return 0;
	f[0] = impair_field_find("cell-size");
	snprintf(val[0], DIALOPT_VALUE_MAX, "%.*s",
		 (int)(comma ? (size_t)(comma - v) : strlen(v)), v);
	if (!comma)
		return 1;
	f[1] = impair_field_find("cell-overhead");
	snprintf(val[1], DIALOPT_VALUE_MAX, "%s", comma + 1);
	return 2;
}

int dialopt_take(struct dialopt *o, int argc, char *const *argv, int *i,
		 struct ll_diag *diag)
{
	const struct impair_field *f[2] = { NULL, NULL };
	char opt[80], val[2][DIALOPT_VALUE_MAX];
	const char *a = argv[*i], *eq, *name, *v;
	int lvl = DIALOPT_BOTH, n, k;
	bool is_alias;

	if (strncmp(a, "--", 2))
		return 0;
	eq = strchr(a, '=');
	snprintf(opt, sizeof(opt), "%.*s", (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
	name = opt + 2;
	if ((o->flags & DIALOPT_DIRS) && !strncmp(name, "a-to-b-", 7)) {
		lvl = DIALOPT_A_TO_B;
		name += 7;
	} else if ((o->flags & DIALOPT_DIRS) && !strncmp(name, "b-to-a-", 7)) {
		lvl = DIALOPT_B_TO_A;
		name += 7;
	}
	is_alias = (o->flags & DIALOPT_ALIASES) &&
		   (!strcmp(name, "overhead") || !strcmp(name, "cell"));
	f[0] = impair_field_find(name);
	if (!f[0] && !is_alias)
		return 0;
	if (eq) {
		v = eq + 1;
	} else if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
		/* the next word is the value unless it is the next option
		 * (no dial value starts with "--") */
		v = argv[++*i];
	} else {
		ll_diag_add(diag, LL_DIAG_ERROR, f[0] ? f[0]->name : name,
			    "%s: missing value (%s)", opt, f[0] ? f[0]->range :
			    !strcmp(name, "cell") ? "SIZE[,OVERHEAD]" : "bytes per packet");
		return 1;
	}
	if (strlen(v) >= DIALOPT_VALUE_MAX) {
		ll_diag_add(diag, LL_DIAG_ERROR, f[0] ? f[0]->name : name,
			    "%s: value of %zu characters ('%.24s...'): at most %d (%s)", opt,
			    strlen(v), v, DIALOPT_VALUE_MAX - 1, f[0] ? f[0]->range : "SIZE[,OVERHEAD]");
		return 1;
	}
	if (is_alias) {
		n = alias(name, v, f, val);
	} else {
		n = 1;
		snprintf(val[0], sizeof(val[0]), "%s", v);
	}
	for (k = 0; k < n; k++)
		put(o, lvl, opt, f[k], val[k], diag);
	return 1;
}

int dialopt_parse(struct dialopt *o, int argc, char *const *argv, struct ll_diag *diag)
{
	int i, before = diag->nerrors;

	for (i = 0; i < argc; i++)
		if (!dialopt_take(o, argc, argv, &i, diag))
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "unknown option '%s'", argv[i]);
	return diag->nerrors - before;
}

void dialopt_dial(const struct dialopt *o, enum dialopt_level level, struct impair *out,
		  char *file, size_t flen)
{
	const char *fl;

	*out = o->lvl[DIALOPT_BOTH];
	if (level != DIALOPT_BOTH)
		impair_overlay(out, &o->lvl[level]);
	if (o->dist_file[level][0])             /* its own FILE over a plain name */
		fl = o->dist_file[level];
	else if (level != DIALOPT_BOTH && (o->seen[level] & IMP_DIST))
		fl = "";                        /* its own name over a plain FILE */
	else
		fl = o->dist_file[DIALOPT_BOTH];
	if (fl[0])
		out->set &= ~(uint32_t)IMP_DIST;
	if (file && flen)
		snprintf(file, flen, "%s", fl);
}
