/* SPDX-License-Identifier: MIT */
/* cmd_apply_check.h - `linklab apply --check` (src/cli/cmd_apply_check.c):
 * compare what the kernels hold, read back, with a dial; nothing written.
 * The -J document is described in doc/json.md. */
#ifndef LINKLAB_CMD_APPLY_CHECK_H
#define LINKLAB_CMD_APPLY_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "linklab/model/impair.h"
#include "linklab/model/qdisc.h"
#include "linklab/peer/peer.h"
#include "linklab/peer/peerset.h"

/* For each side in sides (enum cmd_sides) with a non-empty dial: read the
 * tree back, and report whether applying dial[i] would change it, with the
 * before/after summaries in tc words (text, or the -J document when json).
 * Burst and limits compare within 1 % (tc rounds them through ticks), times
 * within 1 us; the delay distribution is never dumped by the kernel and is
 * not compared. Returns 0 (changed or not), or the exit status of a side
 * that could not be read (its message on stderr). */
int cmd_apply_check(struct peerset *ps, unsigned sides, const struct impair dial[2],
		    bool json);

/* The dial qs holds, {"rate": "50mbit", ...} in exact tc units, without the
 * burst/limits derived from its rate (mtu as for impair_plan). */
cJSON *cmd_apply_check_dial_json(const struct qdisc_state *qs, unsigned mtu);

/* 1 if linklab's journal holds the original of dev (linklab changed it and
 * `linklab clear` would restore it; orig, if not NULL, gets its root kind,
 * "noqueue (kernel default)"), 0 if not; -ENOTSUP for a remote peer,
 * -ENODEV for an unknown interface, or -errno. */
int cmd_apply_check_journalled(struct peer *p, const char *dev, char *orig,
			       size_t len);

/* Add "journalled" and, when true, "original" to side (the local peer
 * only; nothing for a remote one). */
void cmd_apply_check_journal_json(cJSON *side, struct peer *p, const char *dev);

#endif
