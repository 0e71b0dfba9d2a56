/* SPDX-License-Identifier: MIT */
/* cmd_rpm.c - `linklab rpm (--peer HOST | -c ADDR [-p PORT]) [-P N] [-t SEC]
 * [-R | --bidir] [-J]`: responsiveness under load (traffic/rpm.h), one
 * direction or both, as a text block or one JSON document. With --peer the
 * server (linklab serve) is started on the peer over SSH for the run. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linklab/base/units.h"
#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/peer/peerset.h"
#include "linklab/traffic/iperf3.h"
#include "linklab/traffic/rpm.h"

static atomic_bool rpm_stop;

static void rpm_on_signal(int sig)
{
	(void)sig;
	atomic_store(&rpm_stop, true);
}

struct rpm_cli {
	struct rpm_opts o;
	struct peerset_opts po;
	int json, bidir, nbad;
};

static int num_opt(int argc, char **argv, int *i, double lo, double hi,
		   double *out)
{
	if (*i + 1 >= argc) {
		fprintf(stderr, "linklab rpm: %s needs a value\n", argv[*i]);
		return -1;
	}
	if (units_parse_number(argv[++*i], out) || !(*out >= lo && *out <= hi)) {
		fprintf(stderr, "linklab rpm: %s '%s': need a number in %g..%g\n",
			argv[*i - 1], argv[*i], lo, hi);
		return -1;
	}
	return 0;
}

static int parse(struct rpm_cli *c, int argc, char **argv)
{
	struct ll_err err = { 0 };
	double v;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc = peerset_parse_opt(&c->po, argc, argv, &i, &err);
		if (rc < 0) {
			fprintf(stderr, "linklab rpm: %s\n", err.msg);
			c->nbad++;
		} else if (rc > 0) {
			continue;
		} else if (!strcmp(a, "-c") && i + 1 < argc) {
			snprintf(c->o.host, sizeof(c->o.host), "%s", argv[++i]);
		} else if (!strcmp(a, "-p")) {
			if (num_opt(argc, argv, &i, 1, 65535, &v) < 0)
				c->nbad++;
			else
				c->o.port = (int)v;
		} else if (!strcmp(a, "-P")) {
			if (num_opt(argc, argv, &i, 1, 128, &v) < 0)
				c->nbad++;
			else
				c->o.max_streams = (int)v;
		} else if (!strcmp(a, "-t")) {
			if (num_opt(argc, argv, &i, 6, 600, &v) < 0)
				c->nbad++;
			else
				c->o.duration = v;
		} else if (!strcmp(a, "--round")) {
			if (num_opt(argc, argv, &i, 1, 10, &v) < 0)
				c->nbad++;
			else
				c->o.round = v;
		} else if (!strcmp(a, "-C") && i + 1 < argc) {
			if (strlen(argv[++i]) >= sizeof(c->o.congestion)) {
				fprintf(stderr, "linklab rpm: -C: name longer than %zu "
					"characters\n", sizeof(c->o.congestion) - 1);
				c->nbad++;
			} else {
				snprintf(c->o.congestion, sizeof(c->o.congestion),
					 "%s", argv[i]);
			}
		} else if (!strcmp(a, "-R") || !strcmp(a, "--reverse")) {
			c->o.reverse = true;
		} else if (!strcmp(a, "--bidir")) {
			c->bidir = 1;
		} else if (!strcmp(a, "-J") || !strcmp(a, "--json")) {
			c->json = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_print_usage("rpm", stdout);
			return 1;
		} else {
			fprintf(stderr, "linklab rpm: unknown option '%s'\n", a);
			c->nbad++;
		}
	}
	if (c->bidir && c->o.reverse) {
		fprintf(stderr, "linklab rpm: -R and --bidir exclude each other\n");
		c->nbad++;
	}
	if (c->o.congestion[0]) {
		struct ll_err e = { 0 };
		if (iperf3_cc_check(c->o.congestion, &e) < 0) {
			fprintf(stderr, "linklab rpm: %s\n", e.msg);
			c->nbad++;
		}
	}
	if (c->po.peer && c->o.host[0]) {
		fprintf(stderr, "linklab rpm: -c cannot be combined with --peer "
			"(the server is started on the peer)\n");
		c->nbad++;
	}
	if (!c->po.peer && !c->o.host[0]) {
		fprintf(stderr, "linklab rpm: give --peer HOST or -c ADDR\n");
		c->nbad++;
	}
	return 0;
}

static void print_text(const struct rpm_result *r)
{
	printf("%s: %d stream%s, goodput %.2f Mbit/s (%s)\n",
	       r->reverse ? "download (server sends)" : "upload (client sends)",
	       r->streams, r->streams == 1 ? "" : "s", r->goodput_bps / 1e6,
	       r->ramp_end == RPM_RAMP_SATURATED ? "saturated: more streams "
	       "added less than 5 %" : r->ramp_end == RPM_RAMP_MAX_STREAMS ?
	       "not saturated: -P streams reached" : "not saturated: half of -t "
	       "spent ramping; a longer -t ramps further");
	if (r->idle_n)
		printf("  idle RTT     %.2f ms (%d probes, 95 %% trimmed mean)\n",
		       r->idle_rtt_ms, r->idle_n);
	else
		printf("  idle RTT     not measured\n");
	printf("  working RTT  %.2f ms (foreign %.2f ms n=%d, self %.2f ms n=%d)\n",
	       r->working_rtt_ms, r->foreign_ms, r->foreign_n, r->self_ms,
	       r->self_n);
	printf("               p50 %.2f  p90 %.2f  p99 %.2f  max %.2f ms\n",
	       r->p50_ms, r->p90_ms, r->p99_ms, r->max_ms);
	printf("  RPM          %.0f (confidence %s%s)\n", r->rpm,
	       rpm_confidence_name(r->confidence),
	       r->stable ? "" : "; working RTT not stable within 5 %");
	if (r->note[0])
		printf("  note: %s\n", r->note);
}

static cJSON *result_json(const struct rpm_result *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "direction", r->reverse ? "download" : "upload");
	cJSON_AddNumberToObject(o, "rpm", r->rpm);
	if (r->idle_n)
		cJSON_AddNumberToObject(o, "idle_rtt_ms", r->idle_rtt_ms);
	else
		cJSON_AddNullToObject(o, "idle_rtt_ms");
	cJSON_AddNumberToObject(o, "working_rtt_ms", r->working_rtt_ms);
	cJSON_AddNumberToObject(o, "goodput_bps", r->goodput_bps);
	cJSON_AddStringToObject(o, "confidence", rpm_confidence_name(r->confidence));
	cJSON_AddNumberToObject(o, "streams", r->streams);
	cJSON_AddBoolToObject(o, "saturated", r->saturated);
	cJSON_AddStringToObject(o, "ramp_end", r->ramp_end == RPM_RAMP_SATURATED ?
				"saturated" : r->ramp_end == RPM_RAMP_MAX_STREAMS ?
				"max_streams" : "time");
	cJSON_AddBoolToObject(o, "stable", r->stable);
	cJSON_AddNumberToObject(o, "idle_samples", r->idle_n);
	cJSON_AddNumberToObject(o, "foreign_rtt_ms", r->foreign_ms);
	cJSON_AddNumberToObject(o, "foreign_samples", r->foreign_n);
	cJSON_AddNumberToObject(o, "self_rtt_ms", r->self_ms);
	cJSON_AddNumberToObject(o, "self_samples", r->self_n);
	cJSON_AddNumberToObject(o, "p50_ms", r->p50_ms);
	cJSON_AddNumberToObject(o, "p90_ms", r->p90_ms);
	cJSON_AddNumberToObject(o, "p99_ms", r->p99_ms);
	cJSON_AddNumberToObject(o, "max_ms", r->max_ms);
	if (r->note[0])
		cJSON_AddStringToObject(o, "note", r->note);
	return o;
}

/* -J: the keys of the worse direction at the top level (the only one
 * without --bidir), each direction's object under its name. */
static void print_json(const struct rpm_result *r, int n, const char *error)
{
	cJSON *doc, *dirs;
	int worst = 0;

	if (n == 2 && r[1].rpm < r[0].rpm)
		worst = 1;
	doc = n ? result_json(&r[worst]) : cJSON_CreateObject();
	dirs = cJSON_AddObjectToObject(doc, "directions");
	for (int i = 0; i < n; i++)
		cJSON_AddItemToObject(dirs, r[i].reverse ? "download" : "upload",
				      result_json(&r[i]));
	cJSON_AddStringToObject(doc, "method", "draft-ietf-ippm-responsiveness-09 "
				"adapted: UDP echo probes (foreign) and TCP_INFO RTT of "
				"the load streams (self), 95 % trimmed means");
	if (error)
		cJSON_AddStringToObject(doc, "error", error);
	cmd_print_json(doc);
}

static int run_dirs(struct rpm_cli *c, struct rpm_result *res, int *n,
		    struct ll_err *err)
{
	int ndir = c->bidir ? 2 : 1;

	*n = 0;
	for (int d = 0; d < ndir && !atomic_load(&rpm_stop); d++) {
		struct rpm_opts o = c->o;
		if (c->bidir)
			o.reverse = d == 1;
		if (rpm_run(&o, &res[*n], &rpm_stop, err) < 0)
			return -1;
		(*n)++;
	}
	return 0;
}

int cmd_rpm(int argc, char **argv)
{
	struct rpm_cli c = { .json = 0 };
	struct ll_diag diag = { 0 };
	struct ll_err err = { 0 };
	struct rpm_result res[2];
	struct peerset ps;
	int n = 0, rc, port = 0, peer_open = 0;

	rpm_opts_init(&c.o);
	if (parse(&c, argc, argv))
		return 0;
	if (c.po.peer)   /* a stand-in: the peer's address comes later */
		snprintf(c.o.host, sizeof(c.o.host), "peer");
	rpm_opts_validate(&c.o, &diag);
	for (int i = 0; i < diag.n; i++)
		fprintf(stderr, "linklab rpm: %s\n", diag.e[i].text);
	if (c.nbad || diag.nerrors)
		return 2;
	signal(SIGINT, rpm_on_signal);
	signal(SIGTERM, rpm_on_signal);
	if (c.po.peer) {
		if (peerset_open(&ps, &c.po, &err) < 0)
			goto fail;
		peer_open = 1;
		ps.b.server_many = true;     /* the ramp runs a test per round */
		if (ps.b.ops->server_start(&ps.b, &port, &err) < 0) {
			ll_err_prefix(&err, "%s: starting the test server: ", ps.b.label);
			goto fail;
		}
		snprintf(c.o.host, sizeof(c.o.host), "%s", ps.addr_b);
		c.o.port = port;
	}
	rc = run_dirs(&c, res, &n, &err);
	if (peer_open) {
		struct ll_err e2 = { 0 };
		if (port && ps.b.ops->server_stop(&ps.b, &e2) < 0)
			fprintf(stderr, "linklab rpm: stopping the test server: %s\n",
				e2.msg);
		peerset_close(&ps);
		peer_open = 0;
	}
	if (rc < 0)
		goto fail;
	if (c.json)
		print_json(res, n, NULL);
	else
		for (int i = 0; i < n; i++)
			print_text(&res[i]);
	return atomic_load(&rpm_stop) ? 130 : 0;
fail:
	if (peer_open)
		peerset_close(&ps);
	if (c.json)
		print_json(res, n, err.msg);
	fprintf(stderr, "linklab rpm: %s\n", err.msg);
	return 1;
}
