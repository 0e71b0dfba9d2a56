/* SPDX-License-Identifier: MIT */
/* cmd_bench_ssh.c - `linklab-bench ssh`: one dial applied to both peers N
 * times through the persistent session (make bench compares it with one ssh
 * process per command, the seeds' helper). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linklab/cli/bench.h"
#include "linklab/model/impair.h"
#include "linklab/peer/peer.h"
#include "linklab/peer/peerset.h"

static int round_one(struct peer *p, const char *dev, const struct impair *d,
		     struct qdisc_state *qs, struct ll_err *err)
{
	int rc = p->ops->apply(p, dev, d, err);

	if (rc == 0)
		rc = p->ops->read_qdiscs(p, dev, qs, err);
	if (rc == 0 && (qs->n < 1 || qs->q[0].rate != d->rate))
		rc = ll_err_set(err, -EIO, "%s %s: read back %llu bit/s, applied %llu",
				p->label, dev,
				(unsigned long long)(qs->n ? qs->q[0].rate : 0),
				(unsigned long long)d->rate);
	return rc;
}

int cmd_bench_ssh(int argc, char **argv)
{
	struct peerset_opts po;
	struct peerset ps;
	struct ll_err err = { 0 };
	struct ll_diag diag;
	struct impair d[2];
	struct qdisc_state *qs = calloc(1, sizeof(*qs));
	struct timespec t0, t1;
	long n = 20, i;
	int rc = 0;

	memset(&po, 0, sizeof(po));
	for (i = 1; i < argc; i++) {
		int k = (int)i;

		rc = peerset_parse_opt(&po, argc, argv, &k, &err);
		if (rc < 0) {
			fprintf(stderr, "linklab-bench ssh: %s\n", err.msg);
			free(qs);
			return 2;
		}
		i = k;
		if (rc > 0)
			continue;
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			n = strtol(argv[++i], NULL, 10);
			continue;
		}
		fprintf(stderr, "linklab-bench ssh: unexpected argument '%s'\n", argv[i]);
		free(qs);
		return 2;
	}
	if (!po.peer || n < 1 || !qs) {
		fprintf(stderr, "usage: linklab-bench ssh --peer HOST [-F FILE] [--dev IF] [--peer-dev IF] [-n N]\n");
		free(qs);
		return 2;
	}
	memset(d, 0, sizeof(d));
	ll_diag_clear(&diag);
	impair_set(&d[0], "rate", "50mbit", &diag);
	impair_set(&d[1], "rate", "60mbit", &diag);
	if (peerset_open(&ps, &po, &err) < 0) {
		fprintf(stderr, "linklab-bench ssh: %s\n", err.msg);
		free(qs);
		return 1;
	}
	if (!ps.dev_a[0] || !ps.dev_b[0]) {
		fprintf(stderr, "linklab-bench ssh: no interface between the peers (give --dev and --peer-dev)\n");
		peerset_close(&ps);
		free(qs);
		return 1;
	}
	rc = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n && rc == 0; i++) {
		rc = round_one(&ps.a, ps.dev_a, &d[i & 1], qs, &err);
		if (rc == 0)
			rc = round_one(&ps.b, ps.dev_b, &d[i & 1], qs, &err);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	{
		struct ll_err e2 = { 0 };

		ps.a.ops->clear(&ps.a, ps.dev_a, &e2);
		ps.b.ops->clear(&ps.b, ps.dev_b, &e2);
	}
	peerset_close(&ps);
	free(qs);
	if (rc < 0) {
		fprintf(stderr, "linklab-bench ssh: %s\n", err.msg);
		return 1;
	}
	printf("%.2f\n", ((double)(t1.tv_sec - t0.tv_sec) * 1e3 +
			  (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / (double)n);
	return 0;
}
