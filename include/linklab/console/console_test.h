/* SPDX-License-Identifier: MIT */
/* console_test.h - the console controller (console.h):
 * the traffic test: start, events, stop, the saved run. */
#ifndef LINKLAB_CONSOLE_TEST_H
#define LINKLAB_CONSOLE_TEST_H

#include "linklab/console/console.h"

/* Start a test: with peer B, start its server (b.ops->server_start) and
 * connect to peerset.addr_b:port; without, connect to the -c target.
 * TCP with more than 16 streams writes 2 MiB / streams (>= 16 KiB) per
 * send (-l) instead of iperf3's 128 KiB, to bound the console's memory.
 * -EBUSY if one runs, -EINVAL on bad request (client_opts_validate text),
 * -EDESTADDRREQ if there is no peer and no target. */
int console_test_start(struct console *c, const struct console_test_req *r,
		       struct ll_err *err);

/* The running test's event fd, -1 when none (poll it for POLLIN). */
int console_test_fd(const struct console *c);

/* Drain the test's queued events into the view. Returns 1 if the view
 * changed, 0 if not. Stops B's server when the test ends or fails. */
int console_test_pump(struct console *c);

/* Ask the running test to end now (results so far are kept). */
void console_test_stop(struct console *c);

/* Save the last run under the results directory (csvout_new_run_dir):
 * run.svg (plot.h), intervals.csv (csvout.h), profile.ini (the dials each
 * side held, profile_write). view test.saved_dir gets the directory.
 * -ENODATA if no interval was received. Done automatically when a test
 * ends. */
int console_test_save(struct console *c, struct ll_err *err);

/* The intervals of the current/last run kept for saving (at most
 * CONSOLE_HISTORY, oldest first); *n gets the count. */
const struct client_interval *console_test_intervals(const struct console *c, int *n);

/* The caption of the last run: dial per side, peers, test options and the
 * theory line, '\n'-separated. */
void console_test_caption(const struct console *c, char *buf, size_t len);

#endif
