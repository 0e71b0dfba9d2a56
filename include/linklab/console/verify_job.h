/* SPDX-License-Identifier: MIT */
/* verify_job.h - `linklab verify -J` run for the console as a child process
 * (its own SSH session to the peer, so the console's session and loop are
 * never blocked by it). The console polls verify_job_fd() and calls
 * verify_job_pump() when it is readable; the child's JSON document becomes
 * a verify_report. Never prints, never exits. */
#ifndef LINKLAB_VERIFY_JOB_H
#define LINKLAB_VERIFY_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "linklab/base/err.h"
#include "linklab/model/verify.h"

struct verify_job;

/* What a finished job left. */
struct verify_job_result {
	bool ok;                     /* the child's "ok" (every row ok) */
	struct verify_report rep;    /* its rows */
	char error[LL_ERR_MAX];      /* its "error", or why it failed ("" ) */
};

/* Start argv[0] (an absolute path, e.g. /proc/self/exe's target) with
 * argv, stdout and stderr to pipes, stdin from /dev/null. 0 or -errno. */
int verify_job_start(struct verify_job **out, char *const argv[],
		     struct ll_err *err);

/* The fd to poll for input (-1 when finished). */
int verify_job_fd(const struct verify_job *j);

/* Read what the child wrote. 0: still running; 1: finished, *res filled
 * (the child reaped). */
int verify_job_pump(struct verify_job *j, struct verify_job_result *res);

/* What the child printed on stdout so far ("" when nothing). */
const char *verify_job_output(const struct verify_job *j);

/* Seconds since the start. */
double verify_job_age(const struct verify_job *j);

/* End the child (SIGTERM, then SIGKILL after 1 s) if it still runs, reap
 * it, free. NULL is fine. */
void verify_job_free(struct verify_job *j);

/* Parse a `linklab verify -J` document into res (exposed for tests).
 * 0, or -EINVAL with res->error saying what is wrong. */
int verify_job_parse(const char *json, struct verify_job_result *res);

#endif
