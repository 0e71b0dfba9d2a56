/* SPDX-License-Identifier: MIT */
/* console_profile.c - the controller's profiles: list, apply, save, rename, delete.
 * No curses here; the screens only see struct console_view. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "console_int.h"

static int console_prof_cmp(const void *x, const void *y)
{
	const struct console_profile *a = x, *b = y;

	if (a->user != b->user)
		return a->user ? -1 : 1;     /* the user's own first */
	return strcmp(a->name, b->name);
}

int console_profiles_reload(struct console *c, struct ll_err *err)
{
	struct profile_entry *e = NULL;
	struct console_profile *v;
	struct ll_err le = { 0 };
	int n = 0, i, k, rc;

	rc = profile_list(&e, &n, &le);
	if (rc < 0) {
		console_fmt(c->v.error, sizeof(c->v.error), "profiles: %s", le.msg);
		if (err)
			*err = le;
		return rc;
	}
	v = calloc((size_t)(n > 0 ? n : 1), sizeof(*v));
	if (!v) {
		free(e);
		return ll_err_set(err, -ENOMEM, "profiles: out of memory");
	}
	for (i = 0; i < n; i++) {
		struct profile *p = malloc(sizeof(*p));
		struct ll_diag *d = malloc(sizeof(*d));

		console_fmt(v[i].name, sizeof(v[i].name), "%s", e[i].name);
		console_fmt(v[i].path, sizeof(v[i].path), "%s", e[i].path);
		v[i].user = e[i].user;
		if (!p || !d) {
			free(p);
			free(d);
			console_fmt(v[i].problems[0], LL_DIAG_LEN, "out of memory");
			v[i].nproblems = 1;
			continue;
		}
		ll_diag_clear(d);
		v[i].valid = profile_load(e[i].path, p, d) == 0;
		console_fmt(v[i].title, sizeof(v[i].title), "%s", p->name);
		console_fmt(v[i].description, sizeof(v[i].description), "%s",
			    p->description);
		v[i].per_side = p->per_side;
		v[i].a = p->a;
		v[i].b = p->b;
		/* errors first, then warnings */
		v[i].nproblems_all = d->n;
		for (k = 0; k < d->n && v[i].nproblems < 4; k++)
			if (d->e[k].level == LL_DIAG_ERROR)
				console_fmt(v[i].problems[v[i].nproblems++], LL_DIAG_LEN,
					    "%s", d->e[k].text);
		for (k = 0; k < d->n && v[i].nproblems < 4; k++)
			if (d->e[k].level != LL_DIAG_ERROR)
				console_fmt(v[i].problems[v[i].nproblems++], LL_DIAG_LEN,
					    "warning: %s", d->e[k].text);
		free(p);
		free(d);
	}
	free(e);
	qsort(v, (size_t)n, sizeof(*v), console_prof_cmp);
	free(c->prof);
	c->prof = v;
	c->v.profiles = v;
	c->v.nprofiles = n;
	return 0;
}

/* The profile idx, or NULL with err set. */
static const struct console_profile *console_prof_at(struct console *c, int idx,
						     struct ll_err *err)
{
	if (idx < 0 || idx >= c->v.nprofiles) {
		ll_err_set(err, -EINVAL, "profile %d out of range (%d listed)", idx,
			   c->v.nprofiles);
		if (err)
			console_fmt(c->v.error, sizeof(c->v.error), "%s", err->msg);
		return NULL;
	}
	return &c->prof[idx];
}

int console_profile_apply(struct console *c, int idx, unsigned sides,
			  struct ll_err *err)
{
	const struct console_profile *p = console_prof_at(c, idx, err);
	struct ll_err e = { 0 };
	char st[2][256] = { "", "" };
	int rc, first = 0, i;
	bool both, taken;
	struct console_prior pa;

	if (!p)
		return -EINVAL;
	if (!p->valid) {
		rc = ll_err_set(err, -EINVAL, "profile %s: %s", p->name,
				p->nproblems ? p->problems[0] : "does not load");
		if (err)
			console_fmt(c->v.error, sizeof(c->v.error), "%s", err->msg);
		return rc;
	}
	if (sides & CONSOLE_M_BOTH) {
		/* [a] is A->B traffic, [b] is B->A: the bridge's directions */
		rc = console_middle_set2(c, (sides & CONSOLE_M_AB) ? &p->a : NULL,
					 (sides & CONSOLE_M_BA) ? &p->b : NULL, err);
		if (rc == 0) {
			console_fmt(c->v.profile_name, sizeof(c->v.profile_name), "%s", p->name);
			console_fmt(st[0], sizeof(st[0]), "%s", c->v.status);
			console_fmt(c->v.status, sizeof(c->v.status), "profile %s: %.200s",
				    p->name, st[0]);
		}
		if (!(sides & CONSOLE_BOTH) || rc < 0)
			return rc;
		sides &= CONSOLE_BOTH;
	}
	if (!c->ps.has_b)
		sides &= CONSOLE_A;
	/* 100 % loss on the interface that carries the SSH session would cut
	 * it: refused here as on the Dial screen (where y can force it) */
	for (i = 0; i < 2; i++) {
		char warn[256];

		if ((sides & (1u << i)) &&
		    console_apply_check(c, i ? &p->b : &p->a, 1u << i, false, warn,
					sizeof(warn), &e) == -EPERM) {
			rc = ll_err_set(err, -EPERM, "profile %s: %s; nothing applied (the Dial "
					"screen can force it with y)", p->name, e.msg);
			if (err)
				console_fmt(c->v.error, sizeof(c->v.error), "%s", err->msg);
			return rc;
		}
	}
	/* both sides: all or nothing - [a] first; [b] failing rolls A back */
	both = (sides & CONSOLE_BOTH) == CONSOLE_BOTH && console_peer(c, CONSOLE_IDX_B);
	if (both)
		console_prior_take(c, CONSOLE_IDX_A, &pa);
	for (i = 0; i < 2; i++) {
		if (!(sides & (1u << i)))
			continue;
		if (both && i == CONSOLE_IDX_B && first) {
			console_fmt(st[i], sizeof(st[i]), "[b] not applied to B ([a] failed on A: all or nothing)");
			continue;
		}
		ll_err_clear(&e);
		/* B's result (now or later) rolls A back if it fails */
		c->b_roll_next = both && i == CONSOLE_IDX_B;
		if (c->b_roll_next) {
			c->b_prior_next = pa;
			console_fmt(c->b_prof_next, sizeof(c->b_prof_next), "%s", p->name);
		}
		rc = console_apply(c, i ? &p->b : &p->a, 1u << i, &e);
		taken = !c->b_roll_next;
		c->b_roll_next = false;
		if (rc < 0 && both && i == CONSOLE_IDX_B && taken) {
			/* rolled back and said by console_change_b_done */
			if (err)
				*err = e;
			return rc;
		}
		if (rc < 0 && both && i == CONSOLE_IDX_B) {
			char note[300];

			/* refused before reaching B: A goes back here */
			console_rollback(c, CONSOLE_IDX_A, &pa, note, sizeof(note));
			console_fmt(st[0], sizeof(st[0]), "[b] failed on B, %s", note);
		}
		console_fmt(st[i], sizeof(st[i]), "%s", rc < 0 ? e.msg : c->v.status);
		if (rc < 0 && !first) {
			first = rc;
			if (err)
				*err = e;
		}
	}
	c->v.dial = (sides & CONSOLE_A) ? p->a : p->b;
	c->v.dial_sides = sides;
	console_fmt(c->v.profile_name, sizeof(c->v.profile_name), "%s", p->name);
	console_fmt(c->v.status, sizeof(c->v.status), "profile %s: %s%s%s", p->name,
		    st[0], st[0][0] && st[1][0] ? "; " : "", st[1]);
	/* B's part still on its way: its status keeps the profile's name and
	 * A's part in front */
	for (i = 0; c->b_async && (sides & CONSOLE_B) && c->chg_last && i < (int)(sizeof(c->chg) / sizeof(c->chg[0])); i++) {
		struct console_bchg *r = &c->chg[i];

		if (r->id != c->chg_last)
			continue;
		console_fmt(r->head, sizeof(r->head), "profile %.60s: %.150s%s",
			    p->name, (sides & CONSOLE_A) ? st[0] : "", (sides & CONSOLE_A) ? "; " : "");
		console_fmt(c->v.status, sizeof(c->v.status), "profile %.60s: waiting for B%s%.150s%s",
			    p->name, (sides & CONSOLE_A) ? " (" : "", (sides & CONSOLE_A) ? st[0] : "",
			    (sides & CONSOLE_A) ? ")" : "");
		console_fmt(r->left, sizeof(r->left), "%s", c->v.status);
	}
	if (first && err)
		console_fmt(c->v.error, sizeof(c->v.error), "profile %s: %s", p->name,
			    err->msg);
	else if (!first)
		c->v.error[0] = '\0';
	return first;
}

int console_profile_save(struct console *c, const char *name, struct ll_err *err)
{
	const struct console_side_view *A = &c->v.side[CONSOLE_IDX_A];
	const struct console_side_view *B = &c->v.side[CONSOLE_IDX_B];
	static const struct impair none;
	const struct impair *a, *b;
	char desc[256], sa[96], sb[96], path[PATH_MAX], old[PATH_MAX];
	struct ll_err e = { 0 };
	bool shipped, a_held, b_held;
	int rc;

	/* what the kernels hold, both sides as they are (a side that holds
	 * nothing saves nothing); only when neither holds anything, the dial
	 * as set on the Dial screen (not applied), for both sides */
	a_held = A->qd_valid && !impair_is_empty(&A->held);
	b_held = B->present && B->qd_valid && !impair_is_empty(&B->held);
	if (a_held || b_held) {
		a = A->qd_valid ? &A->held : &none;
		b = B->present ? (B->qd_valid ? &B->held : &none) : a;
	} else {
		a = b = &c->v.dial;
	}
	console_fmt(desc, sizeof(desc), "saved from the console (%s): A %s, B %s",
		    a_held || b_held ? "held" : "the dial, not applied",
		    impair_summary(a, sa, sizeof(sa)), impair_summary(b, sb, sizeof(sb)));
	if (impair_is_empty(a) && impair_is_empty(b)) {
		rc = ll_err_set(&e, -EINVAL,
				"save profile: nothing dialled or held to save");
		goto fail;
	}
	/* a shipped profile of that name: the saved one hides it from now on */
	shipped = profile_find(name, old, sizeof(old), NULL) == 0 && !profile_is_user_path(old);
	rc = profile_save_sides(name, desc, a, b, path, sizeof(path), &e);
	if (rc < 0)
		goto fail;
	console_profiles_reload(c, NULL);
	console_fmt(c->v.profile_name, sizeof(c->v.profile_name), "%s", name);
	console_fmt(c->v.status, sizeof(c->v.status), "saved profile %s (%s): %s%s%s", name, path,
		    a_held || b_held ? "what the peers hold" :
		    "nothing is held: the dial's values (not applied)",
		    shipped ? "; it is used instead of the shipped " : "", shipped ? old : "");
	c->v.error[0] = '\0';
	return 0;
fail:
	console_fmt(c->v.error, sizeof(c->v.error), "%s", e.msg);
	if (err)
		*err = e;
	return rc;
}

int console_profile_rename(struct console *c, int idx, const char *name,
			   struct ll_err *err)
{
	const struct console_profile *p = console_prof_at(c, idx, err);
	struct ll_err e = { 0 };
	char old[64], npath[PATH_MAX];
	int rc;

	if (!p)
		return -EINVAL;
	console_fmt(old, sizeof(old), "%s", p->name);
	rc = profile_rename(p->path, name, npath, sizeof(npath), &e);
	if (rc < 0) {
		console_fmt(c->v.error, sizeof(c->v.error), "rename %s: %s", old, e.msg);
		if (err)
			*err = e;
		return rc;
	}
	console_profiles_reload(c, NULL);
	console_fmt(c->v.status, sizeof(c->v.status), "renamed profile %s to %s", old, name);
	c->v.error[0] = '\0';
	return 0;
}

int console_profile_delete(struct console *c, int idx, struct ll_err *err)
{
	const struct console_profile *p = console_prof_at(c, idx, err);
	struct ll_err e = { 0 };
	char old[64];
	int rc;

	if (!p)
		return -EINVAL;
	console_fmt(old, sizeof(old), "%s", p->name);
	rc = profile_delete(p->path, &e);
	if (rc < 0) {
		console_fmt(c->v.error, sizeof(c->v.error), "delete %s: %s", old, e.msg);
		if (err)
			*err = e;
		return rc;
	}
	console_profiles_reload(c, NULL);
	console_fmt(c->v.status, sizeof(c->v.status), "deleted profile %s", old);
	c->v.error[0] = '\0';
	return 0;
}
