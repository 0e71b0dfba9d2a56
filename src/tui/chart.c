/* SPDX-License-Identifier: MIT */
/* chart.c - multi-row column chart as text (see chart.h). */
#include <string.h>

#include "chart.h"

static void chart_put(char *out, size_t len, size_t *pos, const char *s)
{
	size_t n = strlen(s);

	if (*pos + n + 1 > len)
		return;
	memcpy(out + *pos, s, n);
	*pos += n;
	out[*pos] = '\0';
}

int chart_render(char **out, size_t len, int rows, int width,
		 const double *vals, int n, double full, double mark,
		 bool utf8)
{
	static const char *const up[9] = {
		" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586",
		"\u2587", "\u2588",
	};
	static const char *const ascii[9] = { " ", ".", ".", ".", ":", ":", ":",
					      ":", "#" };
	int r, k, cols, from, mark_row = -1;
	size_t pos;

	if (rows <= 0 || width <= 0 || !len)
		return 0;
	cols = n < width ? n : width;
	if (cols < 0)
		cols = 0;
	from = n - cols;
	if (mark > 0 && full > 0 && mark <= full) {
		/* row (from the bottom) whose band holds mark */
		mark_row = (int)(mark / full * rows - 1e-9);
		if (mark_row >= rows)
			mark_row = rows - 1;
		if (mark_row < 0)
			mark_row = 0;
		mark_row = rows - 1 - mark_row;    /* from the top */
	}
	for (r = 0; r < rows; r++) {
		int base = (rows - 1 - r) * 8;     /* eighths below this row */

		pos = 0;
		out[r][0] = '\0';
		for (k = 0; k < width; k++) {
			int lvl = 0, fill;
			double v = k < cols ? vals[from + k] : 0;

			if (k < cols && full > 0 && v > 0) {
				double f = v / full;

				if (f > 1)
					f = 1;
				lvl = (int)(f * rows * 8 + 0.5);
			}
			fill = lvl - base;
			if (fill < 0)
				fill = 0;
			if (fill > 8)
				fill = 8;
			if (!fill && r == mark_row)
				chart_put(out[r], len, &pos, utf8 ? "\u2504" : "-");
			else
				chart_put(out[r], len, &pos, utf8 ? up[fill] : ascii[fill]);
		}
	}
	return cols;
}
