/* SPDX-License-Identifier: MIT */
/* console_safety.h - the console controller (console.h):
 * the safety ops: B's baseline safety, the checked apply, keepalive, sysctl. */
#ifndef LINKLAB_CONSOLE_SAFETY_H
#define LINKLAB_CONSOLE_SAFETY_H

#include "linklab/console/console.h"

/* Baseline safety of B (peer_safety: --force, --exclude-ssh,
 * --revert-after, hold) as peerset_open set it: the controller re-sets it around a
 * forced apply and puts this back after. revert_s 0 means 30 s. */
void console_set_safety(struct console *c, const struct peer_safety *s);

/* Check an apply of d to sides before doing it (peerset_ssh_check per
 * side on its selected interface). warn gets the warning lines ("" if
 * none, '\n'-separated). Returns 0, or -EPERM when 100 % loss would go on
 * the interface carrying the SSH session and force is false (err names
 * --force). Sides not open, and B when lost, are skipped. */
int console_apply_check(struct console *c, const struct impair *d, unsigned sides,
			bool force, char *warn, size_t len, struct ll_err *err);

/* Apply as console_apply, first checking (console_apply_check) unless confirmed:
 * a warning or a refusal puts the request in view.confirm (pending) and
 * returns -EAGAIN without applying; confirmed applies it, with force
 * passed to B's safety for this apply only. After B's apply, view
 * b_warning gets ops->session->warning. While B's apply runs, view revert_deadline
 * is now + revert_s. When B could not arm its revert timer (-ENOLCK from
 * B's apply, also when that result comes back later) view.confirm asks;
 * confirmed after that question, B's job carries peer_safety.unarmed_ok
 * for that apply only. Inline, that question returns -EAGAIN. */
int console_apply_safe(struct console *c, const struct impair *d, unsigned sides,
		       bool confirmed, bool force, struct ll_err *err);

/* Keep B's session alive (ops->session->keepalive): call on POLLIN of console_peer_fd
 * or when *next_s seconds have passed; hup true when poll reported
 * POLLHUP/POLLRDHUP/POLLERR on it (the peer closed the connection: lost
 * without asking). *next_s gets the seconds until the next call is due
 * (0 = none needed). A failing keepalive marks B lost (view b_lost,
 * b_lost_msg, status) and returns 1 (view changed); 0 otherwise. After
 * that B is skipped by apply, clear, tick and quit. */
int console_keepalive(struct console *c, bool hup, int *next_s);

/* Set sysctl name to value on side (CONSOLE_IDX_A/B) through ops->tune->sysctl_set
 * (journalled on that peer); console_quit then calls ops->tune->tune_restore on
 * that side. -ENOTSUP when the backend has no sysctl_set, -ENOTCONN when B
 * is lost. */
int console_sysctl_set(struct console *c, int side, const char *name,
		       const char *value, struct ll_err *err);

#endif
