/* SPDX-License-Identifier: MIT */
/* console_dial.h - the console controller (console.h):
 * the dial: apply and clear on A and B (all or nothing), the path they make. */
#ifndef LINKLAB_CONSOLE_DIAL_H
#define LINKLAB_CONSOLE_DIAL_H

#include "linklab/console/console.h"

/* Fold two egress dials (a: A's, b: B's; either may be NULL = nothing)
 * into a path. Pure; for the screens and tests. */
void console_path_compute(const struct impair *a, const struct impair *b,
			  struct console_path *out);

/* The same with the middle box's dials in the path: mab is what the bridge
 * does to A->B, mba to B->A (NULL = no bridge). Per direction the rates
 * give the lowest, the delays add up and the losses combine as
 * 1 - (1 - p1)(1 - p2); the line ends in " (bridge included)" when a
 * bridge dial was given. With mab = mba = NULL it is console_path_compute. */
void console_path_compute_mid(const struct impair *a, const struct impair *b,
			      const struct impair *mab, const struct impair *mba,
			      struct console_path *out);


/* Apply dial d on the selected interface of each side in sides (a mask of
 * enum console_side), then read back. Validates first (impair_validate: every
 * problem joined in err, -EINVAL). Side A without root: -EPERM "needs
 * root". Sides not open are skipped. An empty dial means clear. A dial
 * to both A and B is all or nothing: A first; A failing leaves B
 * untouched ("B: not applied (A failed: all or nothing)"); B failing -
 * when its result comes back, later when threaded - puts A back as it
 * was ("nothing applied: B failed, A rolled back (veth-a: ...)"). */
int console_apply(struct console *c, const struct impair *d, unsigned sides,
		  struct ll_err *err);

/* Restore the original qdisc (peer ops clear) on the selected interface of
 * each side in sides, then read back. */
int console_clear(struct console *c, unsigned sides, struct ll_err *err);

#endif
