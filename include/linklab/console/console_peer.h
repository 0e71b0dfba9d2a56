/* SPDX-License-Identifier: MIT */
/* console_peer.h - the console controller (console.h):
 * the peers: refresh, selection, B's session and its worker thread. */
#ifndef LINKLAB_CONSOLE_PEER_H
#define LINKLAB_CONSOLE_PEER_H

#include "linklab/console/console.h"

/* Re-list both peers' links and re-read the selected interfaces' qdiscs. */
int console_refresh(struct console *c, struct ll_err *err);

/* Select interface index idx (into view side[side].links) on side
 * CONSOLE_IDX_A or CONSOLE_IDX_B and read its qdiscs back. -EINVAL if out of
 * range. */
int console_select(struct console *c, int side, int idx, struct ll_err *err);

/* B's session socket for poll(), -1 when there is no B, it is lost, or
 * the backend has none. After console_set_async: the eventfd of B's finished
 * requests instead (POLLIN: call console_peer_pump; keepalives are the
 * worker's). */
int console_peer_fd(const struct console *c);

/* From now on every operation on B runs on a worker thread that owns B's
 * session (peerq.h): console_apply, console_clear, console_refresh, console_select,
 * console_tick, console_test_start, console_sysctl_set return at once for B (0; B's
 * result lands later: poll console_peer_fd and call console_peer_pump), and the
 * status line says "waiting for B (N s): WHAT" (view b_wait, updated by
 * console_peer_tick) while a request runs for more than a second. Every
 * command on B is bounded by peer_safety.timeout_s (console_set_safety); a
 * request that finds no answer marks B gone (view b_lost, "peer B gone: no
 * answer within N s ..."), the session is closed, and nothing more waits on
 * B: console_quit then restores A at once. Before this call (the default, and
 * the unit tests) B's operations run inline, their results known on
 * return. Fetches B's control-session route first (one round trip) so that
 * console_apply_check asks nothing of B later. 0 or -errno (thread). */
int console_set_async(struct console *c, struct ll_err *err);

/* Take B's finished requests into the view (never waits). 1 if the view
 * changed. */
int console_peer_pump(struct console *c);

/* Once a second: view b_wait for a request running longer than 1 s (and,
 * far past the bound, B marked gone). 1 if the view changed. */
int console_peer_tick(struct console *c);

/* B's requests queued or running (0 without B, or when B is gone). */
int console_peer_busy(const struct console *c);

#endif
