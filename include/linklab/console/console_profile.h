/* SPDX-License-Identifier: MIT */
/* console_profile.h - the console controller (console.h):
 * the profiles: list, apply, save, rename, delete. */
#ifndef LINKLAB_CONSOLE_PROFILE_H
#define LINKLAB_CONSOLE_PROFILE_H

#include "linklab/console/console.h"

/* (Re)list every profile (profile_list) and load each one for preview;
 * load problems are kept per profile with file:line. */
int console_profiles_reload(struct console *c, struct ll_err *err);

/* Apply profile idx: its [a] dial to A and [b] dial to B (sides limits
 * which). An invalid profile is refused with its first problem (-EINVAL). */
int console_profile_apply(struct console *c, int idx, unsigned sides,
			  struct ll_err *err);

/* Save what both sides hold now (else the dial) as user profile NAME. */
int console_profile_save(struct console *c, const char *name, struct ll_err *err);

/* Rename / delete user profile idx (-EPERM for shipped ones). */
int console_profile_rename(struct console *c, int idx, const char *name,
			   struct ll_err *err);
int console_profile_delete(struct console *c, int idx, struct ll_err *err);

#endif
