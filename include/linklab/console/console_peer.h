/* SPDX-License-Identifier: MIT */
/* console_peer.h - the console controller (ctl.h):
 * the peers: refresh, selection, B's session and its worker thread. */
#ifndef LINKLAB_CONSOLE_PEER_H
#define LINKLAB_CONSOLE_PEER_H

#include "linklab/console/ctl.h"

/* Re-list both peers' links and re-read the selected interfaces' qdiscs. */
int ctl_refresh(struct ctl *c, struct ll_err *err);

/* Select interface index idx (into view side[side].links) on side
 * CTL_IDX_A or CTL_IDX_B and read its qdiscs back. -EINVAL if out of
 * range. */
int ctl_select(struct ctl *c, int side, int idx, struct ll_err *err);

/* B's session socket for poll(), -1 when there is no B, it is lost, or
 * the backend has none. After ctl_set_async: the eventfd of B's finished
 * requests instead (POLLIN: call ctl_peer_pump; keepalives are the
 * worker's). */
int ctl_peer_fd(const struct ctl *c);

/* From now on every operation on B runs on a worker thread that owns B's
 * session (peerq.h): ctl_apply, ctl_clear, ctl_refresh, ctl_select,
 * ctl_tick, ctl_test_start, ctl_sysctl_set return at once for B (0; B's
 * result lands later: poll ctl_peer_fd and call ctl_peer_pump), and the
 * status line says "waiting for B (N s): WHAT" (view b_wait, updated by
 * ctl_peer_tick) while a request runs for more than a second. Every
 * command on B is bounded by peer_safety.timeout_s (ctl_set_safety); a
 * request that finds no answer marks B gone (view b_lost, "peer B gone: no
 * answer within N s ..."), the session is closed, and nothing more waits on
 * B: ctl_quit then restores A at once. Before this call (the default, and
 * the unit tests) B's operations run inline, their results known on
 * return. Fetches B's control-session route first (one round trip) so that
 * ctl_apply_check asks nothing of B later. 0 or -errno (thread). */
int ctl_set_async(struct ctl *c, struct ll_err *err);

/* Take B's finished requests into the view (never waits). 1 if the view
 * changed. */
int ctl_peer_pump(struct ctl *c);

/* Once a second: view b_wait for a request running longer than 1 s (and,
 * far past the bound, B marked gone). 1 if the view changed. */
int ctl_peer_tick(struct ctl *c);

/* B's requests queued or running (0 without B, or when B is gone). */
int ctl_peer_busy(const struct ctl *c);

#endif
