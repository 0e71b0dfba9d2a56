/* SPDX-License-Identifier: MIT */
/* testrun.c - one client test run to its end (testrun.h). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/traffic/testrun.h"

static int run_once(const struct client_opts *o, testrun_interval_fn fn,
		    void *ctx, struct client_summary *sum, const atomic_bool *stop,
		    struct ll_err *err)
{
	struct client_event *ev = malloc(sizeof(*ev));
	struct client *t = NULL;
	int rc, done = 0, stopped = 0;

	if (!ev)
		return ll_err_set(err, -ENOMEM, "test: out of memory");
	rc = client_start(o, &t, err);
	while (!rc && !done) {
		struct pollfd p = { .fd = client_event_fd(t), .events = POLLIN };
		if (poll(&p, 1, 200) < 0 && errno != EINTR) {
			rc = ll_err_set(err, -errno, "test: poll: %s", strerror(errno));
			break;
		}
		if (stop && atomic_load(stop) && !stopped) {
			client_stop(t);
			stopped = 1;
		}
		while (!done && !rc && client_next_event(t, ev) == 1) {
			if (ev->kind == CLIENT_EV_INTERVAL && fn)
				fn(ctx, &ev->interval);
			else if (ev->kind == CLIENT_EV_DONE) {
				if (sum)
					*sum = *client_summary(t);
				done = 1;
			} else if (ev->kind == CLIENT_EV_ERROR) {
				if (err)
					*err = ev->err;
				rc = ev->err.code ? ev->err.code : -EIO;
			}
		}
	}
	client_free(t);
	free(ev);
	return rc;
}

int testrun_sync(const struct client_opts *o, testrun_interval_fn fn,
		 void *ctx, struct client_summary *sum, const atomic_bool *stop,
		 struct ll_err *err)
{
	for (int tries = 0;; tries++) {
		int rc = run_once(o, fn, ctx, sum, stop, err);
		if (rc != -EBUSY || tries >= 15 || (stop && atomic_load(stop)))
			return rc;
		poll(NULL, 0, 200);
	}
}
