/* SPDX-License-Identifier: MIT */
/* profile.h - impairment profiles as INI files (iniparser 4.1).
 *
 * Format (doc in README/profiles): a [profile] section with name and
 * description, a [dial] section applied to both peers' egress, and optional
 * [a] / [b] sections that override it per side (A's egress carries A->B).
 * Keys in [dial]/[a]/[b] are the dial fields of impair.h (rate, delay, loss,
 * ...) with values in tc units. Unknown keys, duplicate keys, sections that
 * differ only in case, values cut by an inline '#'/';' and lines over 1024
 * bytes are each reported with file:line - never silently dropped.
 * iniparser's own stderr messages are captured (never reach the screen).
 *
 * Search path for NAME: $LINKLAB_PROFILE_PATH (':'-separated), then
 * $XDG_CONFIG_HOME/linklab/profiles (or ~/.config/linklab/profiles), then
 * the shipped profiles (<binary>/../profiles, PREFIX/share/linklab/profiles).
 */
#ifndef LINKLAB_PROFILE_H
#define LINKLAB_PROFILE_H

#include <limits.h>
#include <stdbool.h>

#include "linklab/err.h"
#include "linklab/impair.h"

struct profile {
	char name[64];
	char description[256];
	char path[PATH_MAX];
	struct impair a;          /* dial for peer A's egress */
	struct impair b;          /* dial for peer B's egress */
	bool per_side;            /* [a] or [b] present: sides differ */
};

/* Load and validate a profile file. Every problem goes to diag as
 * "FILE:LINE: message". Returns 0, -ENOENT (file missing), -EINVAL (diag
 * has errors). */
int profile_load(const char *path, struct profile *p, struct ll_diag *diag);

/* Find NAME (file NAME.ini, case-sensitive) in the search path. */
int profile_find(const char *name, char *path, size_t len, struct ll_err *err);

/* Names and paths of every profile in the search path (first wins on
 * duplicate names). *out is malloc'd; caller frees. */
struct profile_entry {
	char name[64];
	char path[PATH_MAX];
	bool user;                /* from the user's directory */
};
int profile_list(struct profile_entry **out, int *n, struct ll_err *err);

/* Save dial d as the user profile NAME ([dial] section) in the user dir,
 * creating the directory. NAME: letters, digits, '-', '_', '.' only.
 * path_out (may be NULL) gets the written path. */
int profile_save(const char *name, const char *description,
		 const struct impair *d, char *path_out, size_t len,
		 struct ll_err *err);

#endif
