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
 * iniparser's own stderr messages are captured (never reach the screen) and
 * name the user's file. A UTF-8 byte order mark at the start is read past;
 * UTF-16 text is refused naming the file.
 *
 * Search path for NAME: $LINKLAB_PROFILE_PATH (':'-separated), then
 * $XDG_CONFIG_HOME/linklab/profiles (or ~/.config/linklab/profiles), then
 * the shipped profiles (<binary>/../profiles, PREFIX/share/linklab/profiles).
 */
#ifndef LINKLAB_PROFILE_H
#define LINKLAB_PROFILE_H

#include <limits.h>
#include <stdbool.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"

struct profile {
	char name[64];
	char description[256];
	char path[PATH_MAX];
	struct impair a;          /* dial for peer A's egress */
	struct impair b;          /* dial for peer B's egress */
	bool per_side;            /* [a] or [b] present: sides differ */
};

/* Load and validate a profile file. Every problem goes to diag as
 * "FILE:LINE: message". A file that is not a regular file (FIFO, device,
 * directory: never opened blocking), over 1 MiB or over 512 lines is
 * skipped unread with "FILE: skipped: why". Returns 0, -ENOENT (file
 * missing), -EINVAL (diag has errors). */
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

/* Check a profile name: 1 to 48 of letters, digits, '-', '_', '.', not
 * starting with '.'. 0 fine, -EINVAL with the name (sanitized) in err. */
int profile_name_check(const char *name, struct ll_err *err);

/* Save dial d as the user profile NAME ([dial] section) in the user dir,
 * creating the directory. NAME: letters, digits, '-', '_', '.' only.
 * path_out (may be NULL) gets the written path. */
int profile_save(const char *name, const char *description,
		 const struct impair *d, char *path_out, size_t len,
		 struct ll_err *err);

/* Write a profile file at path: [profile] name/description, then [dial]
 * when b is NULL or holds the same dial as a, else [a] and [b] sections.
 * Values in exact tc units (impair_get), so profile_load reads back the
 * same dials. Written to a temporary file in the same directory and
 * renamed over path, so a symlink at path is replaced, never followed.
 * Returns 0 or -errno with err naming the file. */
int profile_write(const char *path, const char *name, const char *description,
		  const struct impair *a, const struct impair *b,
		  struct ll_err *err);

/* profile_save with a dial per side (b NULL: same as profile_save). */
int profile_save_sides(const char *name, const char *description,
		       const struct impair *a, const struct impair *b,
		       char *path_out, size_t len, struct ll_err *err);

/* Rename the user profile file at path to NEWNAME.ini in the same
 * directory and set its [profile] name line (other lines, comments
 * included, are kept). NEWNAME as for profile_save. -EEXIST if the target
 * exists, -EPERM if path is not in a user directory (shipped profiles are
 * read-only), -ENOENT if missing. path_out (may be NULL) gets the new
 * path. */
int profile_rename(const char *path, const char *newname, char *path_out,
		   size_t len, struct ll_err *err);

/* Delete the user profile file at path. -EPERM for shipped profiles
 * (not in a user directory), -ENOENT if missing. */
int profile_delete(const char *path, struct ll_err *err);

/* True if path lies in one of the user profile directories
 * ($LINKLAB_PROFILE_PATH entries, $XDG_CONFIG_HOME/linklab/profiles). */
bool profile_is_user_path(const char *path);

#endif
