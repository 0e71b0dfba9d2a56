/* SPDX-License-Identifier: MIT */
/* remote_record.h - on the host that was B, the record an `apply --peer` from
 * another host left: /run/linklab/remote-<netns inode>-<dev>.tc.json (the
 * whole tc tree of dev before that apply, peer_remote.c). When the SSH
 * session is gone - cut by the dial itself - `linklab clear --dev IF` run on
 * B puts that tree back with the same tc commands the revert timer runs. */
#ifndef LINKLAB_REMOTE_RECORD_H
#define LINKLAB_REMOTE_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"

/* Whether a remote apply's record of dev exists in network namespace netns
 * (its inode, journal_netns). */
int remote_record_exists(uint64_t netns, const char *dev);

/* Put the record of dev back: tc commands from the record (tctree), read
 * back and compared; then the record, its .applied/.ifb/.revert files and any
 * revert timer still pending for it go. A record of another interface that
 * reused the name (ifindex or link address differ; mac "" or ifindex <= 0:
 * unknown, not compared) is dropped, nothing restored. note (nlen bytes)
 * says what was done. 0, or <0 with err (the record is kept). */
int remote_record_restore(uint64_t netns, const char *dev, int ifindex, const char *mac,
			  char *note, size_t nlen, struct ll_err *err);

#endif
