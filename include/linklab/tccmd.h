/* SPDX-License-Identifier: MIT */
/* tccmd.h - the tc command lines equivalent to a qdisc plan. The remote
 * backend runs exactly these over SSH, `linklab apply --dry-run` prints them.
 * Every word is shell-quoted, so hostile interface names ("a;b", "x$(id)")
 * cannot inject anything. */
#ifndef LINKLAB_TCCMD_H
#define LINKLAB_TCCMD_H

#include <stddef.h>

#include "linklab/err.h"
#include "linklab/impair.h"

/* Quote one word for a POSIX shell (single quotes, ' as '\''), into out.
 * Returns 0, or -ENOSPC if out is too small. */
int tccmd_quote(const char *word, char *out, size_t len);

/* Command lines (one per line, '\n'-terminated) that install plan p on dev
 * with replace semantics: "tc qdisc replace dev 'veth0' root handle 1: tbf
 * rate 50000000bit burst 6250b limit 318750b" [+ netem child line].
 * Returns 0 or -ENOSPC. */
int tccmd_apply(const char *dev, const struct impair_plan *p, char *out,
		size_t len, struct ll_err *err);

/* The command that removes linklab's root qdisc from dev (the kernel then
 * reinstalls its default): "tc qdisc del dev 'veth0' root". */
int tccmd_clear(const char *dev, char *out, size_t len, struct ll_err *err);

#endif
