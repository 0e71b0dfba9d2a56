/* SPDX-License-Identifier: MIT */
/* console_middle.h - the console controller (console.h):
 * the middle box: its session, its bridge's dials and counters. */
#ifndef LINKLAB_CONSOLE_MIDDLE_H
#define LINKLAB_CONSOLE_MIDDLE_H

#include "linklab/console/console.h"

/* Give the controller the middle box's session m (the controller takes ownership;
 * console_free closes it) and attach to its bridge (middle_attach; after
 * middle_set_start that STARTS the bridge, view middle.engine_asked set,
 * and quit stops it). A failure
 * to attach is kept in view middle.err (retried by console_middle_tick every
 * 3 s), not returned. label: "M (HOST)". */
void console_set_middle(struct console *c, struct middle *m, const char *label);

/* Periodic work for the middle (call about once a second, on every
 * screen: it also keeps the session in use): at most once a second a get
 * is sent (counters, rates) without waiting for its reply (middle_get_send;
 * the reply is taken by console_middle_pump), or an attach retry every 3 s when
 * no bridge runs. While a get waits, the tick pumps instead: after
 * MIDDLE_SLOW_MS without a reply view middle.stall_s counts the seconds
 * ("not answering"); after MIDDLE_LOST_MS, or when the session fails, it is
 * marked lost (view middle.lost, "middle lost: ...") and the console goes on
 * with A and B. Returns 1 if the view changed. Does not wait for a stalled
 * middle host; what still waits: an attach retry (up to 10 s, as before)
 * and, once, closing the attach channel when the middle is declared lost
 * (ssh_spawn_close, up to 2 s when the middle's sshd itself is stalled).
 * Declared lost, the session is closed as well (middle_close: its
 * disconnect is bounded by 1 s and does not wait for a reply), so a middle
 * host that only stalled ends the attach process, and the lease, as soon as
 * it answers again; "middle lost: ... (session closed; the bridge restores
 * its dials when its lease ends (now, or when the middle host answers
 * again))". */
int console_middle_tick(struct console *c);

/* The middle session's socket while a get waits for its reply (put it in
 * the poll set, POLLIN, and call console_middle_pump when it is readable), -1
 * otherwise. */
int console_middle_fd(const struct console *c);

/* Take the waiting get's reply if it has come (never waits; see
 * console_middle_tick for the stall and lost rules). 1 if the view changed. */
int console_middle_pump(struct console *c);

/* Apply dial d to the bridge directions in sides (CONSOLE_M_AB, CONSOLE_M_BA; an
 * empty dial clears them). Validates first (impair_validate: -EINVAL, all
 * problems); the bridge's own refusal is -EINVAL with every one of its
 * errors in err and in view middle.set_err (nothing applied). -ENOTCONN
 * when not attached. console_apply/console_apply_safe/console_clear pass the M bits
 * here. */
int console_middle_apply(struct console *c, const struct impair *d, unsigned sides,
			 struct ll_err *err);

#endif
