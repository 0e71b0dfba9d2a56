/* SPDX-License-Identifier: MIT */
/* bar.h - horizontal meter bars as text: Unicode eighth blocks in UTF-8
 * locales, '#' and '.' otherwise. Pure string building (no curses) so it can
 * be unit-tested; the screens addstr() the result. */
#ifndef LINKLAB_TUI_BAR_H
#define LINKLAB_TUI_BAR_H

#include <stdbool.h>
#include <stddef.h>

/* Fill out with a bar of width cells showing value/full (clamped to 0..1;
 * full <= 0 draws an empty bar). utf8: use U+2588..U+258F partial blocks and
 * U+2591 for the empty part (up to 3 bytes per cell), else '#' and '.'.
 * Returns the number of cells filled (rounded down). out needs
 * width * 3 + 1 bytes for UTF-8, width + 1 for ASCII. */
int bar_render(char *out, size_t len, double value, double full, int width,
	       bool utf8);

/* Fill out with a sparkline of n values, one cell each, scaled to full:
 * U+2581..U+2588 (eight heights) in UTF-8, " .-:=+*#" style ASCII
 * otherwise; a value <= 0 is a blank cell. Returns cells written (n, or
 * fewer if out is too small). out needs n * 3 + 1 bytes for UTF-8. */
int bar_spark(char *out, size_t len, const double *vals, int n, double full,
	      bool utf8);

#endif
