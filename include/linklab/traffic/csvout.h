/* SPDX-License-Identifier: MIT */
/* csvout.h - a test run's interval data as CSV for spreadsheets, and the
 * results directory where the console keeps each run (chart, CSV, the
 * profile it ran under). Never prints.
 *
 * CSV (RFC 4180, comma separated, '\n' line ends), after optional comment
 * lines "# caption" (pandas comment='#', gnuplot skip them):
 *   kind,start,end,stream,sender,bytes,bits_per_second,retransmits,
 *   snd_cwnd,rtt_us,rttvar_us,packets,lost,jitter_ms
 * kind "interval" rows: one per stream then one with stream "SUM" (and
 * "SUM_REVERSE" for --bidir) per interval; then "sent"/"received" rows of
 * the end summary (per stream and SUM) when a summary is given. Units:
 * seconds since test start, bytes, bit/s, bytes (cwnd), microseconds (RTT),
 * datagrams, milliseconds (jitter); -1 = unknown (as in client.h).
 */
#ifndef LINKLAB_CSVOUT_H
#define LINKLAB_CSVOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "linklab/base/err.h"
#include "linklab/traffic/client.h"

/* The CSV header line (without '\n'). */
extern const char csvout_header[];

/* Write the CSV to f. caption may be NULL (else each line becomes "# ..."
 * comment). sum may be NULL. Returns 0 or -EIO. */
int csvout_write(FILE *f, const struct client_interval *iv, int n,
		 const struct client_summary *sum, const char *caption,
		 struct ll_err *err);

/* Write the CSV to path: what `linklab test --csv FILE` calls. Returns 0 or
 * -errno with err naming the file. */
int csvout_write_file(const char *path, const struct client_interval *iv, int n,
		      const struct client_summary *sum, const char *caption,
		      struct ll_err *err);

/* The results directory: $XDG_DATA_HOME/linklab/results, else
 * ~/.local/share/linklab/results (XDG Base Directory spec). create: mkdir
 * -p it (mode 0755). Returns 0, -ENOENT (neither XDG_DATA_HOME nor HOME
 * set), or -errno from mkdir. */
int csvout_results_dir(char *buf, size_t len, bool create, struct ll_err *err);

/* Create a new run directory under the results directory named
 * YYYYmmdd-HHMMSS (local time), with -2, -3 ... appended when it exists.
 * dir gets its path. Returns 0 or -errno. */
int csvout_new_run_dir(char *dir, size_t len, struct ll_err *err);

#endif
