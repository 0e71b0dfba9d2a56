/* SPDX-License-Identifier: MIT */
/* console_verify.h - the console controller (console.h):
 * linklab verify run from the console as a child process. */
#ifndef LINKLAB_CONSOLE_VERIFY_H
#define LINKLAB_CONSOLE_VERIFY_H

#include "linklab/console/console.h"

/* The command line of the `linklab verify -J` child (argv[0] an absolute
 * path; NULL-terminated; copied). Without it V says verify is not
 * available. */
int console_set_verify_argv(struct console *c, char *const argv[]);

/* Start verify in a child process; -EBUSY while one runs or a test runs
 * (both would load the path). */
int console_verify_start(struct console *c, struct ll_err *err);

/* The fd to poll while verify runs, -1 otherwise. */
int console_verify_fd(const struct console *c);

/* Read the child's output; 1 when it finished (the view has the table). */
int console_verify_pump(struct console *c);

#endif
