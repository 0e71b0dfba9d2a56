/* SPDX-License-Identifier: MIT */
/* cmd_bench_apply.c - `linklab-bench apply --dev IF [-n N]` (make bench):
 * N times apply a tbf (alternating 50mbit / 60mbit so every round changes the
 * kernel) and read the tree back, in this process over netlink; prints the
 * mean microseconds per apply+read-back. scripts/bench.sh times the same
 * with spawned tc processes and prints the ratio. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linklab/cli/bench.h"
#include "linklab/model/impair.h"
#include "linklab/peer/peer.h"

int cmd_bench_apply(int argc, char **argv)
{
	struct ll_err err = { 0 };
	struct ll_diag diag;
	struct impair d[2];
	struct qdisc_state *qs = calloc(1, sizeof(*qs));
	struct peer p;
	struct timespec t0, t1;
	const char *dev = NULL;
	long n = 200, i;
	double us;
	int rc = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dev") && i + 1 < argc)
			dev = argv[++i];
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtol(argv[++i], NULL, 10);
	}
	if (!dev || n < 1 || !qs) {
		fprintf(stderr, "usage: linklab-bench apply --dev IF [-n N]\n");
		free(qs);
		return 2;
	}
	memset(d, 0, sizeof(d));
	ll_diag_clear(&diag);
	impair_set(&d[0], "rate", "50mbit", &diag);
	impair_set(&d[1], "rate", "60mbit", &diag);
	if (peer_local_open(&p, &err) < 0) {
		fprintf(stderr, "linklab-bench apply: %s\n", err.msg);
		free(qs);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n && rc == 0; i++) {
		rc = p.ops->apply(&p, dev, &d[i & 1], &err);
		if (rc == 0)
			rc = p.ops->read_qdiscs(&p, dev, qs, &err);
		if (rc == 0 && (qs->n < 1 || qs->q[0].rate != d[i & 1].rate)) {
			ll_err_set(&err, -EIO, "read back %llu bit/s, applied %llu",
				   (unsigned long long)(qs->n ? qs->q[0].rate : 0),
				   (unsigned long long)d[i & 1].rate);
			rc = -5;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc == 0)
		rc = p.ops->clear(&p, dev, &err);
	p.ops->close(&p);
	free(qs);
	if (rc < 0) {
		fprintf(stderr, "linklab-bench apply: %s\n", err.msg);
		return 1;
	}
	us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 +
	      (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / (double)n;
	printf("%.1f\n", us);
	return 0;
}
