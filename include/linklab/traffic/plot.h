/* SPDX-License-Identifier: MIT */
/* plot.h - a self-contained SVG chart of one test run, for handouts:
 * SUM and per-stream bit rate over time (bit/s, from each interval's
 * bytes / seconds as iperf3 reports them), the senders' mean TCP RTT on a
 * right-hand axis (ms, TCP_INFO tcpi_rtt, when known), the dialled rate and
 * the theory ceiling (theory.h) as horizontal lines, and a caption (dial
 * and peers) under the chart. No scripts, no external fonts or links: the
 * file opens in any browser and pastes into documents. Never prints.
 */
#ifndef LINKLAB_PLOT_H
#define LINKLAB_PLOT_H

#include <stddef.h>

#include "linklab/base/err.h"
#include "linklab/traffic/client.h"

struct plot_opts {
	const char *title;        /* first line; NULL -> "linklab test" */
	const char *caption;      /* dial and peers; '\n' separates lines;
				   * may be NULL */
	double dial_bps;          /* dialled rate line, bit/s; 0 = none */
	double ceiling_bps;       /* theory ceiling line, bit/s; 0 = none */
	const char *ceiling_label;/* e.g. "window-limited"; NULL -> "theory" */
	int width, height;        /* pixels of the plot area; 0 -> 900 x 420 */
	int max_streams;          /* per-stream lines drawn; 0 -> 32 (SUM
				   * is always drawn) */
};

/* Build the SVG document into *out (malloc'd, NUL-terminated; caller
 * frees). iv: n intervals, oldest first (n may be 0: an empty chart with
 * the caption). sum may be NULL (no totals line). Returns 0, -EINVAL (n < 0
 * or iv NULL with n > 0), -ENOMEM. */
int plot_svg(char **out, const struct client_interval *iv, int n,
	     const struct client_summary *sum, const struct plot_opts *o,
	     struct ll_err *err);

/* Write the chart to path (created or truncated). Returns 0 or -errno with
 * err naming the file and strerror text. */
int plot_svg_write_opts(const char *path, const struct client_interval *iv,
			int n, const struct client_summary *sum,
			const struct plot_opts *o, struct ll_err *err);

/* The same with defaults and only a caption: what `linklab test --plot
 * FILE.svg` calls. */
int plot_svg_write(const char *path, const struct client_interval *iv, int n,
		   const struct client_summary *sum, const char *caption,
		   struct ll_err *err);

/* Escape s for XML text/attributes into buf (&, <, >, ", ' ; control bytes
 * become spaces). Returns buf. */
char *plot_xml_escape(const char *s, char *buf, size_t len);

#endif
