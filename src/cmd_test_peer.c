/* SPDX-License-Identifier: MIT */
/* cmd_test_peer.c - `linklab test --peer HOST ...`: start the server on the
 * peer over SSH (linklab serve if it has it, else iperf3 -s -1) on a free
 * port, run the test against it with cmd_test, stop the server. Without
 * --peer this is plain cmd_test (-c ADDR). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/cli.h"
#include "linklab/peerset.h"

int cmd_test_peer(int argc, char **argv)
{
	struct peerset_opts po = { 0 };
	struct ll_err err = { 0 };
	struct peerset ps;
	char **nargv, portbuf[16];
	int i, n = 0, rc, port = 0;

	nargv = calloc((size_t)argc + 5, sizeof(*nargv));
	if (!nargv)
		return 1;
	for (i = 0; i < argc; i++) {
		if (i > 0) {
			rc = peerset_parse_opt(&po, argc, argv, &i, &err);
			if (rc < 0) {
				fprintf(stderr, "linklab test: %s\n", err.msg);
				free(nargv);
				return 2;
			}
			if (rc > 0)
				continue;
		}
		nargv[n++] = argv[i];
	}
	if (!po.peer) {
		free(nargv);
		return cmd_test(argc, argv);
	}
	if (peerset_open(&ps, &po, &err) < 0) {
		fprintf(stderr, "linklab test: %s\n", err.msg);
		free(nargv);
		return 1;
	}
	if (ps.b.ops->server_start(&ps.b, &port, &err) < 0) {
		fprintf(stderr, "linklab test: %s: starting the test server: %s\n",
			ps.b.label, err.msg);
		peerset_close(&ps);
		free(nargv);
		return 1;
	}
	snprintf(portbuf, sizeof(portbuf), "%d", port);
	nargv[n++] = (char *)"-c";
	nargv[n++] = ps.addr_b;
	nargv[n++] = (char *)"-p";
	nargv[n++] = portbuf;
	nargv[n] = NULL;
	rc = cmd_test(n, nargv);
	if (ps.b.ops->server_stop(&ps.b, &err) < 0)
		fprintf(stderr, "linklab test: %s: stopping the test server: %s\n",
			ps.b.label, err.msg);
	peerset_close(&ps);
	free(nargv);
	return rc;
}
