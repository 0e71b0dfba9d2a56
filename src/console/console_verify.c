/* SPDX-License-Identifier: MIT */
/* console_verify.c - the controller's linklab verify job, run as a child process.
 * No curses here; the screens only see struct console_view. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "console_int.h"

/* --- linklab verify from the console -------------------------------------- */

int console_set_verify_argv(struct console *c, char *const argv[])
{
	int n = 0;

	while (argv[n])
		n++;
	c->verify_argv = calloc((size_t)n + 1, sizeof(*c->verify_argv));
	if (!c->verify_argv)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		if (!(c->verify_argv[i] = strdup(argv[i])))
			return -ENOMEM;
	return 0;
}

int console_verify_start(struct console *c, struct ll_err *err)
{
	int rc;

	if (!c->verify_argv)
		rc = ll_err_set(err, -ENOTSUP, "verify: needs a peer to measure "
				"against (start the console with --peer HOST)");
	else if (c->vjob)
		rc = ll_err_set(err, -EBUSY, "verify: already running (%.0f s)",
				verify_job_age(c->vjob));
	else if (c->test || c->v.test.state == CONSOLE_TEST_RUNNING)
		rc = ll_err_set(err, -EBUSY, "verify: a test is running; stop it "
				"first (both would load the path)");
	else
		rc = verify_job_start(&c->vjob, c->verify_argv, err);
	if (rc < 0) {
		console_fmt(c->v.error, sizeof(c->v.error), "%s", err ? err->msg : "verify");
		return rc;
	}
	memset(&c->v.verify, 0, sizeof(c->v.verify));
	c->v.verify.running = true;
	c->v.verify.shown = true;
	console_fmt(c->v.status, sizeof(c->v.status), "verify: measuring the path "
		    "against the dials both peers %shold (about 30 s)",
		    c->mid ? "and the middle box's bridge " : "");
	return 0;
}

int console_verify_fd(const struct console *c)
{
	return c->vjob ? verify_job_fd(c->vjob) : -1;
}

int console_verify_pump(struct console *c)
{
	struct console_verify_view *vv = &c->v.verify;
	int bad = 0;

	if (!c->vjob)
		return 0;
	vv->age_s = verify_job_age(c->vjob);
	if (verify_job_pump(c->vjob, &vv->res) == 0)
		return 0;
	free(c->verify_json);
	c->verify_json = strdup(verify_job_output(c->vjob));
	verify_job_free(c->vjob);
	c->vjob = NULL;
	vv->running = false;
	vv->have = true;
	vv->shown = true;
	for (int i = 0; i < vv->res.rep.n; i++)
		bad += !vv->res.rep.r[i].ok;
	if (vv->res.error[0])
		console_fmt(c->v.error, sizeof(c->v.error), "verify: %s", vv->res.error);
	else
		console_fmt(c->v.status, sizeof(c->v.status), "verify: %s (%d of %d rows ok)",
			    vv->res.ok ? "the path holds the dial" : "the path does NOT hold the dial",
			    vv->res.rep.n - bad, vv->res.rep.n);
	return 1;
}
