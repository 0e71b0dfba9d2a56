/* SPDX-License-Identifier: MIT */
/* testrun.h - run one client test (client.h) to its end in the calling thread:
 * the event loop of a command that needs the figures, not a live screen
 * (rpm, verify). Never prints, never exits. */
#ifndef LINKLAB_TESTRUN_H
#define LINKLAB_TESTRUN_H

#include <stdatomic.h>

#include "linklab/base/err.h"
#include "linklab/traffic/client.h"

/* Called for each interval report (local and live remote ones). */
typedef void (*testrun_interval_fn)(void *ctx, const struct client_interval *iv);

/* Start the test, pass each interval to on_interval (may be NULL), copy the
 * end summary into *sum (may be NULL). *stop (may be NULL) ends the test
 * early (it still ends with results). A server busy with a previous test
 * (ACCESS_DENIED) is asked again every 200 ms for up to 3 s. 0, or -errno
 * with err (the test's own error text). */
int testrun_sync(const struct client_opts *o, testrun_interval_fn on_interval,
		 void *ctx, struct client_summary *sum, const atomic_bool *stop,
		 struct ll_err *err);

#endif
