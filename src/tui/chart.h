/* SPDX-License-Identifier: MIT */
/* chart.h - a multi-row column chart as text (the test screen's SUM
 * history: one column per interval, so slow start shows as a ramp). Pure
 * string building, no curses, unit-tested. */
#ifndef LINKLAB_TUI_CHART_H
#define LINKLAB_TUI_CHART_H

#include <stdbool.h>
#include <stddef.h>

/* Fill rows strings (out[0] is the top row), each of width cells, with
 * columns for the last min(n, width) values of vals scaled to full (a value
 * >= full fills the column). UTF-8: U+2581..U+2588 eighth blocks for the
 * partial top cell; ASCII: '#' for a full cell, '.'/':' for partial ones.
 * mark > 0 draws a horizontal rule ('-' or U+2504) in the empty cells of
 * the row holding that value (the dialled rate or the theory ceiling).
 * Each out[r] needs width * 3 + 1 bytes (UTF-8) or width + 1 (ASCII).
 * Returns the columns drawn. */
int chart_render(char **out, size_t len, int rows, int width,
		 const double *vals, int n, double full, double mark,
		 bool utf8);

#endif
