/* SPDX-License-Identifier: MIT */
/* cmd_test_peer.c - `linklab test --peer HOST ...`: start the server on the
 * peer over SSH (linklab serve if it has it, else iperf3 -s -1) on a free
 * port, run the test against it with cmd_test, stop the server. Without
 * --peer this is plain cmd_test (-c ADDR). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/peer/peerset.h"

int cmd_test_peer(int argc, char **argv)
{
	struct peerset_opts po = { 0 };
	struct ll_err err = { 0 };
	struct peerset ps;
	char **nargv, portbuf[16];
	int i, n = 0, rc, port = 0, json = 0, userport = 0, nbad = 0;

	nargv = calloc((size_t)argc + 5, sizeof(*nargv));
	if (!nargv)
		return 1;
	for (i = 0; i < argc; i++) {
		if (i > 0) {
			rc = peerset_parse_opt(&po, argc, argv, &i, &err);
			if (rc < 0) {
				/* counted: the test options are checked too */
				fprintf(stderr, "linklab test: %s\n", err.msg);
				nbad++;
				continue;
			}
			if (rc > 0)
				continue;
			if (!strcmp(argv[i], "-J") || !strcmp(argv[i], "--json"))
				json = 1;
			if (!strncmp(argv[i], "-p", 2) || !strncmp(argv[i], "--port", 6))
				userport |= 2;
			if (!strncmp(argv[i], "-c", 2) || !strncmp(argv[i], "--client", 8))
				userport |= 1;
		}
		nargv[n + 4] = argv[i];  /* leave room for -c ADDR -p PORT */
		n++;
	}
	if (!po.peer && !nbad) {
		free(nargv);
		return cmd_test(argc, argv);
	}
	if (po.peer && (userport & 1)) {
		fprintf(stderr, "linklab test: --peer and -c both name the server: give one\n");
		nbad++;
	}
	if (po.peer && (userport & 2)) {
		fprintf(stderr, "linklab test: --peer and -p cannot be combined "
			"(the server is started on the peer on a free port)\n");
		nbad++;
	}
	/* every problem of every option before anything connects: the test
	 * options with a stand-in server address (the peer's comes later) */
	nargv[n + 4] = NULL;
	if (!po.peer) {   /* no stand-in: -c is the user's to give */
		rc = cmd_test_check(n, nargv + 4, nbad);
	} else {
		/* the stand-in for what the user gave (already refused) is left
		 * out, so the check does not call it given twice */
		int k = 4;

		if (!(userport & 2)) {
			nargv[k--] = (char *)"5201";
			nargv[k--] = (char *)"-p";
		}
		if (!(userport & 1)) {
			nargv[k--] = (char *)"peer";
			nargv[k--] = (char *)"-c";
		}
		nargv[k] = argv[0];
		rc = cmd_test_check(n + 4 - k, nargv + k, nbad);
	}
	if (rc) {
		free(nargv);
		return rc == 1 ? 0 : 2;
	}
	if (peerset_open(&ps, &po, &err) < 0) {
		rc = 1;
		goto fail;
	}
	if (ps.b.ops->server_start(&ps.b, &port, &err) < 0) {
		ll_err_prefix(&err, "%s: starting the test server: ", ps.b.label);
		peerset_close(&ps);
		rc = 1;
		goto fail;
	}
	/* Our -c/-p go first, so a trailing option without its value is
	 * reported as such instead of swallowing them. */
	snprintf(portbuf, sizeof(portbuf), "%d", port);
	nargv[0] = argv[0];
	nargv[1] = (char *)"-c";
	nargv[2] = ps.addr_b;
	nargv[3] = (char *)"-p";
	nargv[4] = portbuf;
	n += 4;
	nargv[n] = NULL;
	rc = cmd_test(n, nargv);
	if (ps.b.ops->server_stop(&ps.b, &err) < 0)
		fprintf(stderr, "linklab test: %s: stopping the test server: %s\n",
			ps.b.label, err.msg);
	peerset_close(&ps);
	free(nargv);
	return rc;
fail:
	if (json) {
		/* iperf3 -J reports failures in an "error" field. */
		cJSON *doc = cJSON_CreateObject();
		char *txt;

		cJSON_AddItemToObject(doc, "start", cJSON_CreateObject());
		cJSON_AddItemToObject(doc, "intervals", cJSON_CreateArray());
		cJSON_AddItemToObject(doc, "end", cJSON_CreateObject());
		cJSON_AddStringToObject(doc, "error", err.msg);
		cmd_json_sanitize(doc);
		txt = cJSON_Print(doc);
		if (txt)
			puts(txt);
		free(txt);
		cJSON_Delete(doc);
	}
	fprintf(stderr, "linklab test: %s\n", err.msg);
	free(nargv);
	return rc;
}
