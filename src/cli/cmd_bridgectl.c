/* SPDX-License-Identifier: MIT */
/* cmd_bridgectl.c - `linklab bridge --status|--set|--attach`: talk to the
 * `linklab bridge` running in this network namespace through its control
 * socket (bridgectl.h; doc/bridge.md "Live control").
 *   --status [--pid N] [-J]             its state
 *   --set [--pid N] [DIAL] [-J]         a permanent change (no lease): exit 0
 *                                       and the new state, 2 with every
 *                                       problem (nothing changed), 1 when no
 *                                       bridge runs / several and no --pid /
 *                                       the socket fails
 *   --attach [--pid N]                  take the lease, print the state as
 *                                       one JSON line, then relay stdin lines
 *                                       (requests) and replies (one stdout
 *                                       line each); EOF, SIGHUP, SIGTERM or
 *                                       kill -9 end it and the bridge puts
 *                                       back the dials of the lease's start */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>

#include <cjson/cJSON.h>

#include "linklab/base/fdio.h"
#include "linklab/bridge/bridgectl.h"
#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/model/dialopt.h"
#include "linklab/model/profile.h"

#define CALL_TIMEOUT_MS 15000
static const char *const dir_key[2] = { "a_to_b", "b_to_a" };
static const char *const dir_text[2] = { "A->B", "B->A" };

/* Every error said on stderr, kept for -J's {"error","errors"} document. */
static cJSON *said;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "linklab bridge: %s\n", msg);
	if (said)
		cJSON_AddItemToArray(said, cJSON_CreateString(msg));
}

static void cmd_bridgectl_usage(FILE *f)
{
	fprintf(f,
		"usage: linklab bridge --status [--pid N] [-J]\n"
		"       linklab bridge --set [--pid N] [dial options] [--a-to-b-OPTION V] [--b-to-a-OPTION V]\n"
		"                      [--profile NAME] [--clear] [--a-to-b-clear] [--b-to-a-clear] [-J]\n"
		"       linklab bridge --attach [--pid N]\n"
		"  talk to the linklab bridge running in this network namespace (--pid N when several).\n"
		"  --set replaces each direction it names as a whole (options without a prefix name\n"
		"  both; --clear: plain forwarding); the change stays. --attach takes the lease:\n"
		"  stdin lines are JSON requests, stdout lines the replies; when it ends (EOF, a\n"
		"  signal, kill -9, the SSH session gone) the bridge puts back the dials it had.\n");
}

struct copts {
	int mode;               /* 's' status, 'S' set, 'a' attach */
	int pid;
	bool json;
	const char *profile;
	bool clear[2];
	struct dialopt *dial;   /* the dial options: plain, --a-to-b-, --b-to-a-
				 * (a direction's own win over plain ones in
				 * any order) */
	struct ll_diag values;  /* their problems, said after the others */
};

static int parse(int argc, char **argv, struct copts *o, struct ll_diag *diag)
{
	struct cmd_seen seen = { 0 };
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val, *eq;
		char fname[64];

		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return 1;
		if (!strcmp(a, "--status") || !strcmp(a, "--set") || !strcmp(a, "--attach")) {
			int m = !strcmp(a, "--status") ? 's' : !strcmp(a, "--set") ? 'S' : 'a';

			if (o->mode && o->mode != m)
				ll_diag_add(diag, LL_DIAG_ERROR, NULL,
					    "one of --status, --set, --attach");
			o->mode = m;
			continue;
		}
		if (!strcmp(a, "-J")) {
			o->json = true;
			continue;
		}
		if (!strcmp(a, "--clear") || !strcmp(a, "--a-to-b-clear") ||
		    !strcmp(a, "--b-to-a-clear")) {
			o->clear[0] |= strcmp(a, "--b-to-a-clear") != 0;
			o->clear[1] |= strcmp(a, "--a-to-b-clear") != 0;
			continue;
		}
		if (strncmp(a, "--", 2)) {
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "unexpected argument '%s'", a);
			continue;
		}
		if (dialopt_take(o->dial, argc, argv, &i, &o->values))
			continue;
		eq = strchr(a, '=');
		snprintf(fname, sizeof(fname), "%.*s",
			 (int)(eq ? (size_t)(eq - a - 2) : strlen(a + 2)), a + 2);
		if (strcmp(fname, "pid") && strcmp(fname, "profile")) {
			/* name it and go on; its value (a next word not an
			 * option) goes with it */
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "unknown option '--%s' (dial fields as for apply)", fname);
			if (!eq && i + 1 < argc && (argv[i + 1][0] != '-' ||
						       isdigit((unsigned char)argv[i + 1][1])))
				i++;
			continue;
		}
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s: missing value", a);
			continue;
		}
		if (cmd_seen_twice(&seen, a, eq ? (size_t)(eq - a) : strlen(a), val, diag))
			continue;
		if (!strcmp(fname, "pid")) {
			char *end;
			long v = strtol(val, &end, 10);

			if (*end || v < 1 || v > INT_MAX)
				ll_diag_add(diag, LL_DIAG_ERROR, NULL,
					    "--pid '%s': the bridge's process id, 1..%d", val, INT_MAX);
			else
				o->pid = (int)v;
			continue;
		}
		o->profile = val;
	}
	if (o->mode != 'S' && (o->profile || o->clear[0] || o->clear[1] ||
			       o->dial->seen[0] || o->dial->seen[1] || o->dial->seen[2]))
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "dial options go with --set");
	if (o->mode == 'a' && o->json)
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "--attach always speaks JSON lines (no -J)");
	return 0;
}

/* The set request: per direction the profile's dial (if any), emptied by a
 * clear, then the options on top, in tc units. Directions nothing names are
 * left out. */
static cJSON *build_set(const struct copts *o, struct ll_diag *diag)
{
	cJSON *req = cJSON_CreateObject();
	struct profile prof;
	bool have_prof = false;
	int d;

	cJSON_AddStringToObject(req, "op", "set");
	if (o->profile) {
		struct ll_err err = { 0 };
		char path[PATH_MAX];

		memset(&prof, 0, sizeof(prof));
		if (profile_find(o->profile, path, sizeof(path), &err) < 0)
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
		else if (profile_load(path, &prof, diag) == 0)
			have_prof = true;
	}
	for (d = 0; d < 2; d++) {
		struct impair want;

		if (!have_prof && !o->clear[d] && !o->dial->seen[DIALOPT_BOTH] &&
		    !o->dial->seen[d])
			continue;
		memset(&want, 0, sizeof(want));
		if (have_prof && !o->clear[d])
			want = d ? prof.b : prof.a;
		impair_overlay(&want, &o->dial->lvl[DIALOPT_BOTH]);
		impair_overlay(&want, &o->dial->lvl[d]);
		cJSON_AddItemToObject(req, dir_key[d], bridge_fields_json(&want));
	}
	if (!cJSON_GetObjectItem(req, "a_to_b") && !cJSON_GetObjectItem(req, "b_to_a") &&
	    diag->nerrors == 0)
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "--set: nothing to set (dial options, --profile or --clear)");
	return req;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void print_state(const cJSON *st)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(st, "engine");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(st, "if_a");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(st, "if_b");
	int d, lease = (int)num(st, "leased_by"), workers = (int)num(st, "workers");

	printf("bridge %s <-> %s (pid %d): %s engine", cJSON_IsString(a) ? a->valuestring : "?",
	       cJSON_IsString(b) ? b->valuestring : "?", (int)num(st, "pid"),
	       cJSON_IsString(e) ? e->valuestring : "?");
	if (workers > 0)
		printf(", %d reading thread%s per direction", workers, workers == 1 ? "" : "s");
	if (lease)
		printf(", leased by pid %d", lease);
	printf("\n");
	for (d = 0; d < 2; d++) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(st, dir_key[d]);
		const cJSON *dial = cJSON_GetObjectItemCaseSensitive(o, "dial");

		printf("  %s: %s  rx %.0f pkts, tx %.0f pkts, lost %.0f, dup %.0f, corrupt %.0f, "
		       "reordered %.0f, drops %.0f\n", dir_text[d],
		       cJSON_IsString(dial) ? dial->valuestring : "?", num(o, "rx_packets"),
		       num(o, "tx_packets"), num(o, "lost"), num(o, "duplicated"),
		       num(o, "corrupted"), num(o, "reordered"), num(o, "drops"));
	}
}

/* One request, one parsed reply. 0 ok; otherwise the exit status. */
static int call(struct bridgectl_client *c, const char *req, cJSON **reply)
{
	struct ll_err err = { 0 };
	char *line = NULL;

	*reply = NULL;
	if (bridgectl_client_send(c, req, &err) < 0 ||
	    bridgectl_client_recv(c, &line, CALL_TIMEOUT_MS, &err) < 0) {
		say("%s", err.msg);
		return 1;
	}
	*reply = cJSON_Parse(line);
	free(line);
	if (!cJSON_IsObject(*reply)) {
		say("the bridge's reply is not JSON");
		cJSON_Delete(*reply);
		*reply = NULL;
		return 1;
	}
	return 0;
}

/* Print a failed reply's errors; 2 when it was a validation error. */
static int reply_fail(const cJSON *r)
{
	const cJSON *errs = cJSON_GetObjectItemCaseSensitive(r, "errors"), *e;

	cJSON_ArrayForEach(e, errs)
		if (cJSON_IsString(e))
			say("%s", e->valuestring);
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "invalid")) ? 2 : 1;
}

/* --attach: relay stdin -> socket, socket -> stdout, until either ends;
 * 1 with "the bridge (pid N) stopped" when the bridge closes first. */
static int relay(struct bridgectl_client *c, int pid)
{
	int fd = bridgectl_client_fd(c);
	bool in_open = true;
	char buf[16384];

	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = in_open ? 0 : -1, .events = POLLIN } };
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (p[0].revents) {
			n = read(fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 && !in_open)
				return 0;       /* the bridge closed (after our EOF) */
			if (n <= 0) {           /* it closed on its own: it stopped */
				say("the bridge (pid %d) stopped", pid);
				return 1;
			}
			if (fdio_write_all(1, buf, (size_t)n, false) < 0)
				return 1;       /* stdout gone: closing ends the lease */
		}
		if (p[1].revents) {
			n = read(0, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				/* EOF: no more requests; the bridge answers what it
				 * has, restores, and closes - then we exit */
				shutdown(fd, SHUT_WR);
				in_open = false;
				continue;
			}
			if (fdio_write_all(fd, buf, (size_t)n, true) < 0)
				return 1;
		}
	}
}

/* Take the lease on c (bridge pid), print its STATE as one line, relay. */
static int attach_on(struct bridgectl_client *c, int pid)
{
	cJSON *reply = NULL, *st;
	char *txt;
	int rc = call(c, "{\"op\":\"lease\"}", &reply);

	if (rc)
		return rc;
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "ok"))) {
		rc = reply_fail(reply);
		cJSON_Delete(reply);
		return rc;
	}
	st = cJSON_GetObjectItemCaseSensitive(reply, "state");
	txt = cJSON_PrintUnformatted(st);
	printf("%s\n", txt ? txt : "{}");
	fflush(stdout);
	free(txt);
	cJSON_Delete(reply);
	return relay(c, pid);
}

int cmd_bridge_attach(int pid)
{
	struct bridgectl_client *c = NULL;
	struct ll_err err = { 0 };
	int rc;

	if (bridgectl_client_open(pid, &c, &err) < 0) {
		say("%s", err.msg);
		return 1;
	}
	rc = attach_on(c, pid);
	bridgectl_client_close(c);
	return rc;
}

int cmd_bridgectl(int argc, char **argv)
{
	struct copts o;
	struct ll_diag diag;
	struct ll_err err = { 0 };
	struct bridgectl_client *c = NULL;
	cJSON *req = NULL, *reply = NULL;
	char *txt;
	int i, pid, rc;

	memset(&o, 0, sizeof(o));
	ll_diag_clear(&diag);
	said = cJSON_CreateArray();
	ll_diag_clear(&o.values);
	o.dial = calloc(1, sizeof(*o.dial));
	if (!o.dial) {
		say("out of memory");
		rc = 1;
		goto out;
	}
	dialopt_init(o.dial, DIALOPT_DIRS | DIALOPT_ALIASES);
	if (parse(argc, argv, &o, &diag) > 0) {
		cmd_bridgectl_usage(stdout);
		rc = 0;
		goto out;
	}
	for (i = 0; i < o.values.n; i++)        /* the values' problems after the rest */
		ll_diag_add(&diag, o.values.e[i].level, o.values.e[i].field, "%s",
			    o.values.e[i].text);
	if (o.mode == 'S' && diag.nerrors == 0)
		req = build_set(&o, &diag);
	if (diag.nerrors) {
		for (i = 0; i < diag.n; i++)
			if (diag.e[i].level == LL_DIAG_ERROR)
				say("%s", diag.e[i].text);
		fprintf(stderr, "linklab bridge: see `linklab bridge -h`\n");
		rc = 2;
		goto out;
	}
	if (bridgectl_find(o.pid, &pid, &err) < 0 || bridgectl_client_open(pid, &c, &err) < 0) {
		say("%s", err.msg);
		rc = 1;
		goto out;
	}
	if (o.mode == 'a') {
		rc = attach_on(c, pid);
		goto out;
	}
	if (o.mode == 'S') {
		txt = cJSON_PrintUnformatted(req);
		rc = call(c, txt, &reply);
		free(txt);
	} else {
		rc = call(c, "{\"op\":\"get\"}", &reply);
	}
	if (rc)
		goto out;
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "ok"))) {
		rc = reply_fail(reply);
		goto out;
	}
	{
		cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(reply, "state");
		const cJSON *w;

		cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(reply, "warnings"))
			if (cJSON_IsString(w))
				fprintf(stderr, "linklab bridge: warning: %s\n", w->valuestring);
		if (o.json) {
			cmd_print_json(st);
		} else {
			print_state(st);
			cJSON_Delete(st);
		}
	}
out:
	if (rc && o.json && cJSON_GetArraySize(said) > 0) {
		cJSON *doc = cJSON_CreateObject();

		cJSON_AddStringToObject(doc, "error", cJSON_GetArrayItem(said, 0)->valuestring);
		cJSON_AddItemToObject(doc, "errors", said);
		said = NULL;
		cmd_print_json(doc);
	}
	cJSON_Delete(said);
	said = NULL;
	bridgectl_client_close(c);
	cJSON_Delete(reply);
	cJSON_Delete(req);
	free(o.dial);
	return rc;
}
