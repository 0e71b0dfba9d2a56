/* SPDX-License-Identifier: MIT */
/* peer_restore.h - put an interface back as it was before a change (the
 * console's quit and its all-or-nothing rollback). */
#ifndef LINKLAB_PEER_RESTORE_H
#define LINKLAB_PEER_RESTORE_H

#include "linklab/base/err.h"
#include "linklab/model/impair.h"
#include "linklab/peer/peer.h"

/* Put dev on p back to what it held before: first clear (the journal puts
 * the exact prior tc tree back and compares), then, when before is a dial
 * (what dev held, read in dial terms) and the restored state does not read
 * as that dial - a dial linklab applied earlier, whose journal holds the
 * state before it - apply before. A state of the user's own (a tbf with
 * peakrate, an htb tree) thus comes back exactly, not as linklab's version
 * of it. 0 or the failing step's -errno (err filled). */
int peer_restore_to(struct peer *p, const char *dev, const struct impair *before,
		    struct ll_err *err);

#endif
