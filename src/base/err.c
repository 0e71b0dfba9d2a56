/* SPDX-License-Identifier: MIT */
/* err.c - error and diagnostic carriers. */
#include <stdio.h>
#include <string.h>

#include "linklab/base/err.h"
#include "linklab/base/text.h"

int ll_err_set(struct ll_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (code > 0)
		code = -code;
	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void ll_err_prefix(struct ll_err *err, const char *fmt, ...)
{
	char pre[LL_ERR_MAX], old[LL_ERR_MAX];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	{
		size_t np = strnlen(pre, sizeof(err->msg) - 1);
		size_t no = strnlen(old, sizeof(err->msg) - 1 - np);

		memcpy(err->msg, pre, np);
		memcpy(err->msg + np, old, no);
		err->msg[np + no] = '\0';
	}
}

void ll_err_clear(struct ll_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}

void ll_diag_add(struct ll_diag *d, enum ll_diag_level lvl, const char *field,
		 const char *fmt, ...)
{
	char raw[LL_DIAG_LEN];
	va_list ap;

	if (!d)
		return;
	if (lvl == LL_DIAG_ERROR)
		d->nerrors++;
	if (d->n >= LL_DIAG_MAX) {
		d->truncated = 1;
		return;
	}
	d->e[d->n].level = lvl;
	snprintf(d->e[d->n].field, sizeof(d->e[d->n].field), "%s",
		 field ? field : "");
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* one line per problem: a value quoted in it ("--rate '5mbit\n'") is
	 * shown escaped, never as a line break or a terminal control */
	text_sanitize(raw, d->e[d->n].text, sizeof(d->e[d->n].text));
	d->n++;
}

void ll_diag_clear(struct ll_diag *d)
{
	if (d)
		memset(d, 0, sizeof(*d));
}

int ll_diag_to_err(const struct ll_diag *d, struct ll_err *err)
{
	size_t off = 0;
	int i;

	if (!d || d->nerrors == 0)
		return 0;
	if (err) {
		err->code = -22;
		err->msg[0] = '\0';
		for (i = 0; i < d->n; i++) {
			if (d->e[i].level != LL_DIAG_ERROR)
				continue;
			off += (size_t)snprintf(err->msg + off,
				off < sizeof(err->msg) ? sizeof(err->msg) - off : 0,
				"%s%s", off ? "; " : "", d->e[i].text);
			if (off >= sizeof(err->msg))
				break;
		}
	}
	return -22;
}
