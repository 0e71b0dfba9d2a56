/* SPDX-License-Identifier: MIT */
/* console_test.h - the console controller (ctl.h):
 * the traffic test: start, events, stop, the saved run. */
#ifndef LINKLAB_CONSOLE_TEST_H
#define LINKLAB_CONSOLE_TEST_H

#include "linklab/console/ctl.h"

/* Start a test: with peer B, start its server (b.ops->server_start) and
 * connect to peerset.addr_b:port; without, connect to the -c target.
 * TCP with more than 16 streams writes 2 MiB / streams (>= 16 KiB) per
 * send (-l) instead of iperf3's 128 KiB, to bound the console's memory.
 * -EBUSY if one runs, -EINVAL on bad request (test_opts_validate text),
 * -EDESTADDRREQ if there is no peer and no target. */
int ctl_test_start(struct ctl *c, const struct ctl_test_req *r,
		   struct ll_err *err);

/* The running test's event fd, -1 when none (poll it for POLLIN). */
int ctl_test_fd(const struct ctl *c);

/* Drain the test's queued events into the view. Returns 1 if the view
 * changed, 0 if not. Stops B's server when the test ends or fails. */
int ctl_test_pump(struct ctl *c);

/* Ask the running test to end now (results so far are kept). */
void ctl_test_stop(struct ctl *c);

/* Save the last run under the results directory (csvout_new_run_dir):
 * run.svg (plot.h), intervals.csv (csvout.h), profile.ini (the dials each
 * side held, profile_write). view test.saved_dir gets the directory.
 * -ENODATA if no interval was received. Done automatically when a test
 * ends. */
int ctl_test_save(struct ctl *c, struct ll_err *err);

/* The intervals of the current/last run kept for saving (at most
 * CTL_HISTORY, oldest first); *n gets the count. */
const struct test_interval *ctl_test_intervals(const struct ctl *c, int *n);

/* The caption of the last run: dial per side, peers, test options and the
 * theory line, '\n'-separated. */
void ctl_test_caption(const struct ctl *c, char *buf, size_t len);

#endif
