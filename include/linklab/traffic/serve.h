/* SPDX-License-Identifier: MIT */
/* serve.h - iperf3-compatible server (linklab serve). */
#ifndef LINKLAB_SERVE_H
#define LINKLAB_SERVE_H

#include <signal.h>
#include <stdbool.h>

#include "linklab/base/err.h"

struct serve_opts {
	int port;            /* 0 = pick a free port (reported via on_listen) */
	char bind[64];       /* "" = any */
	bool one_off;        /* -1: serve one test then return */
};

/* Log sink: the CLI prints these lines; the engine never prints. */
typedef void (*serve_log_fn)(void *ctx, const char *line);

/* Run the server until *stop becomes non-zero (set from a signal handler) or,
 * with one_off, after one test. on_listen (may be NULL) is called once with
 * the bound port. Returns 0 or a negative code with err filled. */
int serve_run(const struct serve_opts *o, volatile sig_atomic_t *stop,
	      void (*on_listen)(void *ctx, int port), serve_log_fn log,
	      void *ctx, struct ll_err *err);

#endif
