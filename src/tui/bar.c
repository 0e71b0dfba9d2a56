/* SPDX-License-Identifier: MIT */
/* bar.c - meter bars as text (Unicode eighths or ASCII). */
#include <string.h>

#include "bar.h"

/* U+2588 full block, then U+2589..U+258F: 7/8 down to 1/8. */
static const char *const bar_eighth[9] = {
	"", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a",
	"\u2589", "\u2588",
};

static const char bar_empty_utf8[] = "\u2591";   /* light shade */

/* Append s to out (len bytes) at *pos if it fits. */
static void bar_put(char *out, size_t len, size_t *pos, const char *s)
{
	size_t n = strlen(s);

	if (*pos + n + 1 > len)
		return;
	memcpy(out + *pos, s, n);
	*pos += n;
	out[*pos] = '\0';
}

int bar_render(char *out, size_t len, double value, double full, int width,
	       bool utf8)
{
	size_t pos = 0;
	double frac;
	int eighths, cells, k, part;

	if (!len)
		return 0;
	out[0] = '\0';
	if (width <= 0)
		return 0;
	frac = full > 0 ? value / full : 0;
	if (!(frac > 0))      /* also catches NaN */
		frac = 0;
	if (frac > 1)
		frac = 1;
	eighths = (int)(frac * width * 8 + 0.5);
	cells = eighths / 8;
	part = eighths % 8;
	for (k = 0; k < cells; k++)
		bar_put(out, len, &pos, utf8 ? bar_eighth[8] : "#");
	if (part && cells < width) {
		bar_put(out, len, &pos, utf8 ? bar_eighth[part] : (part >= 4 ? "#" : "."));
		k++;
	}
	for (; k < width; k++)
		bar_put(out, len, &pos, utf8 ? bar_empty_utf8 : ".");
	return cells;
}

int bar_spark(char *out, size_t len, const double *vals, int n, double full,
	      bool utf8)
{
	static const char *const up[8] = {
		"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586",
		"\u2587", "\u2588",
	};
	static const char *const ascii[8] = { "_", ".", "-", ":", "=", "+", "*", "#" };
	size_t pos = 0, before;
	int k, lvl, done = 0;

	if (!len)
		return 0;
	out[0] = '\0';
	for (k = 0; k < n; k++) {
		before = pos;
		if (!(vals[k] > 0) || !(full > 0)) {
			bar_put(out, len, &pos, " ");
		} else {
			lvl = (int)(vals[k] / full * 8.0);
			if (lvl > 7)
				lvl = 7;
			if (lvl < 0)
				lvl = 0;
			bar_put(out, len, &pos, utf8 ? up[lvl] : ascii[lvl]);
		}
		if (pos == before)
			break;
		done++;
	}
	return done;
}
