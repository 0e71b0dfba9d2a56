/* SPDX-License-Identifier: MIT */
/* cmd_engine.c - `linklab engine`: the endpoint engine process (engine.h),
 * started detached by apply (enghook.c); not for users. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linklab/cli/cli.h"
#include "linklab/engine/engine.h"
#include "linklab/model/impair.h"

int cmd_engine(int argc, char **argv)
{
	struct engine_opts o = { .ready_fd = -1 };
	struct impair d = { 0 };
	struct ll_diag diag;
	struct ll_err err = { 0 };
	int i, rc;
	long q = -1;

	ll_diag_clear(&diag);
	for (i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--dev"))
			o.dev = v;
		else if (!strcmp(k, "--queue"))
			q = strtol(v, NULL, 10);
		else if (!strcmp(k, "--stat"))
			o.stat_path = v;
		else if (!strcmp(k, "--ready-fd"))
			o.ready_fd = (int)strtol(v, NULL, 10);
		else if (!strncmp(k, "--", 2))
			impair_set(&d, k + 2, v, &diag);
		else
			ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "unexpected argument '%s'", k);
	}
	if (i < argc)
		ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "'%s' needs a value", argv[i]);
	if (!o.dev || !o.stat_path || q < 0 || q > 65535)
		ll_diag_add(&diag, LL_DIAG_ERROR, NULL,
			    "usage: linklab engine --dev DEV --queue 0..65535 --stat PATH "
			    "[--ready-fd FD] DIAL");
	if (diag.nerrors) {
		char line[600];
		int n = snprintf(line, sizeof(line), "error: %s\n", diag.e[0].text);

		if (o.ready_fd >= 0 && write(o.ready_fd, line, (size_t)n) < 0)
			n = 0;
		fprintf(stderr, "linklab engine: %s", line + 7);
		return 2;
	}
	o.queue = (uint16_t)q;
	o.dial = &d;
	rc = engine_run(&o, &err);
	if (rc < 0) {
		fprintf(stderr, "linklab engine: %s\n", err.msg);
		return rc == -EINVAL || rc == -EOPNOTSUPP ? 2 : 1;
	}
	return 0;
}
