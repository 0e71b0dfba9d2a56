/* SPDX-License-Identifier: MIT */
/* err.h - error and diagnostic carriers shared by every engine.
 *
 * Engines never print and never exit: they return 0 on success or a negative
 * errno-style code (-EINVAL, -ENODEV, -EPERM, -ENOTSUP, -EIO, -ETIMEDOUT ...)
 * and, when given a non-NULL struct ll_err, fill it with one readable line that
 * names what failed and why (the libnl / libssh2 / errno text included).
 * Validators that can find several problems fill a struct ll_diag instead, so
 * that every problem is reported at once, as tc does.
 */
#ifndef LINKLAB_ERR_H
#define LINKLAB_ERR_H

#include <stdarg.h>
#include <stddef.h>

#define LL_ERR_MAX 512

struct ll_err {
	int code;               /* negative errno-style code, 0 = no error */
	char msg[LL_ERR_MAX];   /* one line, no trailing newline */
};

/* Set err (if non-NULL) to code and a printf-style message. Returns code, so
 * callers can write `return ll_err_set(err, -EINVAL, "...")`. code should be
 * negative; a positive value is negated. */
int ll_err_set(struct ll_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix an existing message with context ("peer B: " + old text). */
void ll_err_prefix(struct ll_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Clear err to "no error". */
void ll_err_clear(struct ll_err *err);

#define LL_DIAG_MAX 48
#define LL_DIAG_LEN 256

enum ll_diag_level { LL_DIAG_ERROR, LL_DIAG_WARN };

/* A list of problems found at once (errors and warnings). */
struct ll_diag {
	int n;          /* entries used */
	int nerrors;    /* entries with level LL_DIAG_ERROR */
	int truncated;  /* more problems than LL_DIAG_MAX were found */
	struct {
		enum ll_diag_level level;
		char field[32];          /* dial field or option name, "" if none */
		char text[LL_DIAG_LEN];  /* full message, names field, value, range */
	} e[LL_DIAG_MAX];
};

/* Append one problem. field may be NULL. */
void ll_diag_add(struct ll_diag *d, enum ll_diag_level lvl, const char *field,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void ll_diag_clear(struct ll_diag *d);
/* Join every error (not warnings) into err as "a; b; c"; returns -EINVAL if
 * there was at least one error, else 0. */
int ll_diag_to_err(const struct ll_diag *d, struct ll_err *err);

#endif
