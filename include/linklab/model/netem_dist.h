/* SPDX-License-Identifier: MIT */
/* netem_dist.h - netem delay distribution tables: iproute2's <name>.dist
 * files (made by iproute2 netem/{normal,pareto,paretonormal}.c), read the
 * way tc/q_netem.c get_distribution() does: '#' and blank lines skipped,
 * whitespace-separated integers (strtol base 0), each an s16 in units of
 * NETEM_DIST_SCALE (8192), at most NETEM_DIST_MAX (16384) values. */
#ifndef LINKLAB_NETEM_DIST_H
#define LINKLAB_NETEM_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"

#define NETEM_DIST_ENTRIES_MAX 16384   /* kernel NETEM_DIST_MAX */

/* Name of table dist (enum impair_dist): "normal", "pareto", "paretonormal";
 * NULL for uniform (no table: the kernel's default). */
const char *netem_dist_name(int dist);

/* Find <name>.dist: $TC_LIB_DIR, then /usr/lib/<triplet>/tc (Debian's
 * multiarch path, any triplet), /usr/lib/tc, /usr/lib64/tc,
 * /usr/local/lib/tc. path gets the file. 0 or -ENOENT (err lists where it
 * looked). */
int netem_dist_find(const char *name, char *path, size_t len,
		    struct ll_err *err);

/* Load table dist into out (up to max entries); *n gets the count (> 0).
 * 0, -ENOENT (no file), -EINVAL (junk, a value outside s16, empty table or
 * more than max values: err names file and line), -EIO. */
int netem_dist_load(int dist, int16_t *out, size_t max, size_t *n,
		    struct ll_err *err);

#endif
