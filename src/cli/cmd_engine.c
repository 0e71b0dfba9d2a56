/* SPDX-License-Identifier: MIT */
/* cmd_engine.c - `linklab engine`: the endpoint engine process (engine.h),
 * started detached by apply (enghook.c); not for users. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>

#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/peer/enghook.h"
#include "linklab/peer/journal.h"
#include "linklab/peer/peer.h"
#include "linklab/engine/engine.h"
#include "linklab/model/impair.h"

/* The hook as JSON on stdout (remote peers read it over SSH). */
static void print_hook(const struct enghook_info *h)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "dev", h->dev);
	cJSON_AddNumberToObject(o, "pid", (double)h->pid);
	cJSON_AddBoolToObject(o, "running", h->alive);
	cJSON_AddBoolToObject(o, "stopped", h->stopped);
	if (h->hooked >= 0)
		cJSON_AddBoolToObject(o, "hooked", h->hooked);
	cJSON_AddNumberToObject(o, "queue", h->queue);
	cJSON_AddStringToObject(o, "iptables", h->iptables);
	cJSON_AddStringToObject(o, "chain", h->chain);
	cJSON_AddStringToObject(o, "dial", h->dial);
	cJSON_AddBoolToObject(o, "have_counters", h->have_counters);
	cJSON_AddNumberToObject(o, "in", (double)h->in);
	cJSON_AddNumberToObject(o, "out", (double)h->out);
	cJSON_AddNumberToObject(o, "lost", (double)h->lost);
	cJSON_AddNumberToObject(o, "duplicated", (double)h->duplicated);
	cJSON_AddNumberToObject(o, "reordered", (double)h->reordered);
	cJSON_AddNumberToObject(o, "corrupted", (double)h->corrupted);
	cJSON_AddNumberToObject(o, "queue_drops", (double)h->queue_drops);
	cJSON_AddNumberToObject(o, "queued", h->queued);
	cmd_print_json(o);
}

/* `engine --start|--stop|--status --dev DEV [--exclude-port N] [DIAL]`
 * and `engine --stop-all`: the hooks of this namespace (what a remote peer
 * runs over SSH; enghook.h). */
static int engine_hooks(int argc, char **argv)
{
	const char *op = argv[1], *dev = NULL;
	struct impair d = { 0 };
	struct enghook_info h;
	struct ll_err err = { 0 };
	struct ll_diag diag;
	uint64_t netns = 0;
	int i, rc, port = 0, ifindex = 0;

	ll_diag_clear(&diag);
	for (i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--dev"))
			dev = argv[i + 1];
		else if (!strcmp(argv[i], "--exclude-port"))
			port = (int)strtol(argv[i + 1], NULL, 10);
		else if (!strncmp(argv[i], "--", 2))
			impair_set(&d, argv[i] + 2, argv[i + 1], &diag);
	}
	if (diag.nerrors) {
		fprintf(stderr, "linklab engine: %s\n", diag.e[0].text);
		return 2;
	}
	if (journal_netns(&netns, &err) < 0)
		return cmd_fail("engine", &err);
	if (!strcmp(op, "--stop-all"))
		return enghook_stop_all(netns, &err) < 0 ? cmd_fail("engine", &err) : 0;
	if (!dev || !(ifindex = (int)if_nametoindex(dev))) {
		fprintf(stderr, "linklab engine: %s: no such interface\n", dev ? dev : "--dev");
		return 2;
	}
	if (!strcmp(op, "--stop"))
		return enghook_stop(netns, ifindex, &err) < 0 ? cmd_fail("engine", &err) : 0;
	if (!strcmp(op, "--status")) {
		if (enghook_get(netns, ifindex, &h) < 0) {
			fprintf(stderr, "linklab engine: %s: no endpoint engine\n", dev);
			return 3;
		}
		if (h.alive)
			enghook_probe(&h);
		print_hook(&h);
		return 0;
	}
	rc = enghook_start(netns, dev, ifindex, &d, port, &err);
	if (rc < 0)
		return cmd_fail("engine", &err);
	if (enghook_get(netns, ifindex, &h) == 0)
		printf("ok %ld\n", h.pid);
	return 0;
}

static const char engine_usage[] =
	"linklab engine --dev DEV --queue 0..65535 --stat PATH "
	"[--tcp-queue 0|1 (TCP on queue + 1, then 0..65534)] [--gso 0|1] "
	"[--ready-fd FD] DIAL";

int cmd_engine(int argc, char **argv)
{
	struct engine_opts o = { .ready_fd = -1, .rt_priority = 10 };
	struct impair d = { 0 };
	struct ll_diag diag;
	struct ll_err err = { 0 };
	int i, rc;
	long q = -1;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s\n", engine_usage);
			return 0;
		}
	if (argc > 1 && (!strcmp(argv[1], "--start") || !strcmp(argv[1], "--stop") ||
			 !strcmp(argv[1], "--status") || !strcmp(argv[1], "--stop-all")))
		return engine_hooks(argc, argv);
	ll_diag_clear(&diag);
	for (i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--dev"))
			o.dev = v;
		else if (!strcmp(k, "--queue"))
			q = strtol(v, NULL, 10);
		else if (!strcmp(k, "--stat"))
			o.stat_path = v;
		else if (!strcmp(k, "--rt-priority"))
			o.rt_priority = (int)strtol(v, NULL, 10);
		else if (!strcmp(k, "--ready-fd"))
			o.ready_fd = (int)strtol(v, NULL, 10);
		else if (!strcmp(k, "--tcp-queue"))
			o.tcp_queue = !strcmp(v, "1");
		else if (!strcmp(k, "--gso"))
			o.no_gso = !strcmp(v, "0");
		else if (!strncmp(k, "--", 2))
			impair_set(&d, k + 2, v, &diag);
		else
			ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "unexpected argument '%s'", k);
	}
	if (i < argc)
		ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "'%s' needs a value", argv[i]);
	if (!o.dev || !o.stat_path || q < 0 || q > (o.tcp_queue ? 65534 : 65535))
		ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "usage: %s", engine_usage);
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

/* Which engine holds dev's dial on p, with the endpoint engine's counters:
 * into side (JSON) when given, else one line on f. */
/* A running engine holds the side's dial: "dial" is the engine's (its
 * options as {"rate": "30mbit", "delay": "10ms"}), the kernel's tree after it
 * moves to "kernel_dial", and rate_bps is the lower of the two rates. */
static void engine_dial_json(cJSON *side, const struct enghook_info *h)
{
	char text[sizeof(h->dial)], *save = NULL, *k, *v;
	cJSON *kd = cJSON_DetachItemFromObjectCaseSensitive(side, "dial");
	cJSON *dj = cJSON_CreateObject(), *kr;
	struct impair d = { 0 };

	if (kd)
		cJSON_AddItemToObject(side, "kernel_dial", kd);
	snprintf(text, sizeof(text), "%s", h->dial);
	for (k = strtok_r(text, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
		v = strtok_r(NULL, " ", &save);
		if (!v || strncmp(k, "--", 2) != 0)
			break;
		cJSON_AddStringToObject(dj, k + 2, v);
	}
	cJSON_AddItemToObject(side, "dial", dj);
	if (enghook_dial(h, &d) < 0 || !(d.set & IMP_RATE) || !d.rate)
		return;
	kr = cJSON_GetObjectItemCaseSensitive(side, "rate_bps");
	if (cJSON_IsNumber(kr) && kr->valuedouble > 0 && kr->valuedouble < (double)d.rate)
		return;   /* the kernel's tree after the engine is the slower */
	cJSON_DeleteItemFromObjectCaseSensitive(side, "rate_bps");
	cJSON_DeleteItemFromObjectCaseSensitive(side, "goodput_ceiling_bps");
	cJSON_AddNumberToObject(side, "rate_bps", (double)d.rate);
	kr = cJSON_GetObjectItemCaseSensitive(side, "mtu");
	if (cJSON_IsNumber(kr) && kr->valuedouble > 0)
		cJSON_AddNumberToObject(side, "goodput_ceiling_bps",
					impair_goodput_ceiling(d.rate, (unsigned)kr->valuedouble, 0));
}

void cmd_engine_report(FILE *f, cJSON *side, struct peer *p, const char *dev)
{
	struct enghook_info h;
	struct ll_err err = { 0 };
	cJSON *o;

	if (!p->ops->engine || p->ops->engine->engine_get(p, dev, &h, &err) < 0) {
		if (side)
			cJSON_AddStringToObject(side, "engine", "kernel");
		return;
	}
	/* its rule may be gone (removed by hand): checked here, on demand,
	 * not on every read-back (a peer's status has checked it there) */
	if (h.alive && h.hooked < 0 && !strcmp(p->ops->name, "local"))
		enghook_probe(&h);
	if (!side) {
		if (!h.alive)
			fprintf(f, "  engine: user, but its process (pid %ld) is gone: packets "
				"pass unimpaired; linklab clear removes the rule\n", h.pid);
		else if (h.stopped)
			fprintf(f, "  engine: user, but its process (pid %ld) is stopped (SIGSTOP "
				"or a debugger): packets wait in its queue, traffic on %s "
				"stalls; kill -CONT %ld resumes it, linklab clear removes it\n",
				h.pid, dev, h.pid);
		else if (h.hooked == 0)
			fprintf(f, "  engine: user (pid %ld), but its iptables rule (%s) is "
				"gone: packets pass unimpaired; linklab apply puts it back, "
				"linklab clear removes the engine\n", h.pid, h.chain);
		else
			fprintf(f, "  engine: user (linklab engine pid %ld, queue %u): %s\n"
				"    in %" PRIu64
				", out %" PRIu64 ", lost %" PRIu64 ", duplicated %" PRIu64
				", reordered %" PRIu64 ", corrupted %" PRIu64 ", queue drops %"
				PRIu64 ", queued %u\n", h.pid, h.queue, h.dial, h.in, h.out, h.lost,
				h.duplicated, h.reordered, h.corrupted, h.queue_drops, h.queued);
		return;
	}
	cJSON_AddStringToObject(side, "engine", "user");
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "pid", (double)h.pid);
	cJSON_AddBoolToObject(o, "running", h.alive);
	cJSON_AddBoolToObject(o, "stopped", h.stopped);
	if (h.hooked >= 0)
		cJSON_AddBoolToObject(o, "hooked", h.hooked);
	cJSON_AddNumberToObject(o, "queue", h.queue);
	cJSON_AddStringToObject(o, "iptables", h.iptables);
	cJSON_AddStringToObject(o, "chain", h.chain);
	cJSON_AddStringToObject(o, "dial", h.dial);
	if (h.have_counters) {
		cJSON_AddNumberToObject(o, "in", (double)h.in);
		cJSON_AddNumberToObject(o, "out", (double)h.out);
		cJSON_AddNumberToObject(o, "lost", (double)h.lost);
		cJSON_AddNumberToObject(o, "duplicated", (double)h.duplicated);
		cJSON_AddNumberToObject(o, "reordered", (double)h.reordered);
		cJSON_AddNumberToObject(o, "corrupted", (double)h.corrupted);
		cJSON_AddNumberToObject(o, "queue_drops", (double)h.queue_drops);
		cJSON_AddNumberToObject(o, "queued", h.queued);
	}
	cJSON_AddItemToObject(side, "user_engine", o);
	if (h.alive)
		engine_dial_json(side, &h);
}
