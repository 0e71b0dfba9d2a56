/* SPDX-License-Identifier: MIT */
/* cmd_bridge.c - `linklab bridge IF_A IF_B`: middle-box mode in the
 * foreground. The dial (as for apply) goes to both directions; options
 * prefixed --a-to-b-/--b-to-a- or a profile's [a]/[b] sections set one
 * direction. SIGINT/SIGTERM (or -t SEC) stop forwarding and put the
 * interfaces back; -J prints the counters as JSON at exit. With
 * --stdin-lease (what `linklab console --bridge` runs over SSH) it is also
 * its own --attach client: STATE and replies on stdout, requests on stdin,
 * and the end of stdin stops it as SIGTERM does. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "linklab/bridge/bridge.h"
#include "linklab/bridge/bridgectl.h"
#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/bridge/emu.h"
#include "linklab/model/dialopt.h"
#include "linklab/model/profile.h"
#include "linklab/base/units.h"

#define DIRS 2
static const char *const dir_name[DIRS] = { "a_to_b", "b_to_a" };
static const char *const dir_text[DIRS] = { "A->B", "B->A" };

struct bopts {
	const char *if_a, *if_b, *engine, *profile, *brname;
	bool json, discard;
	bool force;                      /* --force: a port with an address */
	bool lease;                      /* --stdin-lease: stdout is the lease's
					  * JSON lines, stdin's end stops it */
	double seconds;                  /* 0 = until a signal */
	double interval;                 /* -i: counters every SEC, 0 = none */
	int rt_priority;                 /* --rt-priority N (SCHED_FIFO) */
	unsigned workers;                /* --workers N, 0: by the CPUs */
	struct impair dial[DIRS];        /* the dial options of each direction:
					  * plain ones with its own on top */
	bool clear[DIRS];                /* --clear: no profile dial under it */
	char dist_file[DIRS][PATH_MAX];  /* --distribution FILE (user engine) */
};

static void bridge_usage(FILE *f)
{
	fprintf(f,
		"usage: linklab bridge IF_A IF_B [--engine auto|kernel|user] [dial options]\n"
		"         [--a-to-b-OPTION V] [--b-to-a-OPTION V] [--profile NAME] [-t SEC] [-i SEC] [-J]\n"
		"  dial options as for apply (both directions; A->B leaves IF_B, B->A leaves IF_A):\n"
		"  --rate --burst --tbf-limit --latency --delay --jitter --delay-corr\n"
		"  --distribution uniform|normal|pareto|paretonormal --loss --loss-corr\n"
		"  --loss-gemodel P[,R[,1-H[,1-K]]] --loss-state P13[,P31[,P32[,P23[,P14]]]]\n"
		"  --duplicate --corrupt --reorder --gap --limit --ecn on|off --netem-rate\n"
		"  --packet-overhead --cell-size --cell-overhead --seed N ... (linklab apply -h\n"
		"  lists them all)\n"
		"  aliases: --overhead N = --packet-overhead N; --cell SIZE[,OVERHEAD] =\n"
		"  --cell-size SIZE --cell-overhead OVERHEAD\n"
		"  user engine only: --distribution FILE (a table file, as iproute2's *.dist)\n"
		"  --discard (drop the queue at exit)\n"
		"  --rt-priority N (SCHED_FIFO forwarding threads: releases on time on a busy host)\n"
		"  --workers 1|2 reading threads per direction, a flow's frames to one of them\n"
		"      (default 2 when this process may use 2 or more CPUs, else 1)\n"
		"  --bridge-name BR (kernel engine, default llbr0)\n"
		"  --force  use a port that has an IP address (refused by default: a bridge port\n"
		"      has none; lo and a port of another bridge are always refused)\n"
		"  --engine auto: kernel when this kernel has netem, else user (a FILE table: user)\n"
		"  -t SEC stop after SEC seconds; -i SEC counters on stderr every SEC\n"
		"  --stdin-lease  once forwarding, act as its own --attach client: stdout gets the\n"
		"      STATE line then one reply line per request line read on stdin; when stdin\n"
		"      ends (EOF, the SSH session gone) the bridge stops and restores its\n"
		"      interfaces as on SIGTERM (what `linklab console --bridge` runs; no -J, the\n"
		"      exit summary goes to stderr; only errors and warnings on stderr)\n"
		"  while it runs: linklab bridge --status | --set [dial options] | --attach [--pid N]\n");
}

/* Is option a (its '=' at eq, or NULL) one of the bridge's own that take a
 * value? */
static bool known_opt(const char *a, const char *eq)
{
	static const char *const own[] = { "engine", "profile", "rt-priority", "workers",
					   "bridge-name", NULL };
	char name[64];
	int k;

	if (!strcmp(a, "-i") || !strncmp(a, "-i=", 3) || !strcmp(a, "-t") || !strncmp(a, "-t=", 3))
		return true;
	if (strncmp(a, "--", 2))
		return false;
	snprintf(name, sizeof(name), "%.*s",
		 (int)(eq ? (size_t)(eq - a - 2) : strlen(a + 2)), a + 2);
	for (k = 0; own[k]; k++)
		if (!strcmp(name, own[k]))
			return true;
	return false;
}

/* Every word of argv: the bridge's own options and interfaces into b, the
 * dial options into dial; every problem to diag. 1 for -h. */
static int parse_words(int argc, char **argv, struct bopts *b, struct dialopt *dial,
		       struct ll_diag *diag)
{
	struct cmd_seen seen = { 0 };
	int i, npos = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val, *eq, *name;
		char fname[64];

		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return 1;
		if (!strcmp(a, "-J")) {
			b->json = true;
			continue;
		}
		if (!strcmp(a, "--discard")) {
			b->discard = true;
			continue;
		}
		if (!strcmp(a, "--force")) {
			b->force = true;
			continue;
		}
		if (!strcmp(a, "--stdin-lease")) {
			b->lease = true;
			continue;
		}
		if (!strcmp(a, "--clear") || !strcmp(a, "--a-to-b-clear") ||
		    !strcmp(a, "--b-to-a-clear")) {
			b->clear[0] |= strcmp(a, "--b-to-a-clear") != 0;     /* anywhere on the line */
			b->clear[1] |= strcmp(a, "--a-to-b-clear") != 0;
			continue;
		}
		if (a[0] != '-') {
			if (npos == 0)
				b->if_a = a;
			else if (npos == 1)
				b->if_b = a;
			else
				ll_diag_add(diag, LL_DIAG_ERROR, NULL, "unexpected argument '%s'", a);
			npos++;
			continue;
		}
		if (dialopt_take(dial, argc, argv, &i, diag))
			continue;
		eq = strchr(a, '=');
		if (!known_opt(a, eq)) {
			/* name it and go on; its value (a next word that is
			 * not an option) goes with it */
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "unknown option '%.*s'",
				    (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
			if (!eq && i + 1 < argc && (argv[i + 1][0] != '-' ||
						       isdigit((unsigned char)argv[i + 1][1])))
				i++;
			continue;
		}
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[i + 1];
		} else {
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s: missing value", a);
			continue;
		}
		if (!eq)
			i++;
		if (cmd_seen_twice(&seen, a, eq ? (size_t)(eq - a) : strlen(a), val, diag))
			continue;
		if (!strcmp(a, "-i") || !strncmp(a, "-i=", 3)) {
			if (units_parse_number(val, &b->interval) || b->interval < 0.1 ||
			    b->interval > 3600)
				ll_diag_add(diag, LL_DIAG_ERROR, NULL, "-i '%s': seconds, 0.1..3600", val);
			continue;
		}
		if (!strcmp(a, "-t") || !strncmp(a, "-t=", 3)) {
			if (units_parse_number(val, &b->seconds) || b->seconds <= 0)
				ll_diag_add(diag, LL_DIAG_ERROR, NULL, "-t '%s': seconds > 0", val);
			continue;
		}

		snprintf(fname, sizeof(fname), "%.*s",
			 (int)(eq ? (size_t)(eq - a - 2) : strlen(a + 2)), a + 2);
		name = fname;
		if (!strcmp(name, "engine")) {
			b->engine = val;
			continue;
		}
		if (!strcmp(name, "profile")) {
			b->profile = val;
			continue;
		}
		if (!strcmp(name, "rt-priority")) {
			char *end;
			long v = strtol(val, &end, 10);

			if (*end || v < 1 || v > 99)
				ll_diag_add(diag, LL_DIAG_ERROR, NULL,
					    "--rt-priority '%s': SCHED_FIFO priority 1..99", val);
			else
				b->rt_priority = (int)v;
			continue;
		}
		if (!strcmp(name, "workers")) {
			if (!strcmp(val, "1") || !strcmp(val, "2"))
				b->workers = (unsigned)(val[0] - '0');
			else
				ll_diag_add(diag, LL_DIAG_ERROR, NULL,
					    "--workers '%s': reading threads per direction 1..2", val);
			continue;
		}
		if (!strcmp(name, "bridge-name")) {
			b->brname = val;
			continue;
		}
	}
	if (npos < 2)
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "need two interfaces: IF_A IF_B");
	if (!b->engine)
		b->engine = "auto";
	if (strcmp(b->engine, "auto") && strcmp(b->engine, "kernel") && strcmp(b->engine, "user"))
		ll_diag_add(diag, LL_DIAG_ERROR, "engine",
			    "--engine '%s': auto, kernel or user", b->engine);
	if (b->lease && b->json)
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "-J with --stdin-lease: stdout carries the lease's JSON lines");
	return 0;
}

/* The command line into b; the dial options (dialopt: plain, --a-to-b-,
 * --b-to-a-, the aliases, --distribution FILE) become b->dial and
 * b->dist_file per direction. 1 for -h. */
static int parse_args(int argc, char **argv, struct bopts *b, struct ll_diag *diag)
{
	struct dialopt *dial = calloc(1, sizeof(*dial));
	int rc = 0, d;

	if (!dial) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "out of memory");
		return 0;
	}
	dialopt_init(dial, DIALOPT_DIRS | DIALOPT_ALIASES | DIALOPT_DIST_FILE);
	rc = parse_words(argc, argv, b, dial, diag);
	for (d = 0; d < DIRS; d++)
		dialopt_dial(dial, d == 0 ? DIALOPT_A_TO_B : DIALOPT_B_TO_A, &b->dial[d],
			     b->dist_file[d], sizeof(b->dist_file[d]));
	free(dial);
	return rc;
}

static int64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Wait for SIGINT/SIGTERM/SIGHUP (blocked in every thread) or the duration
 * (0 = none); call tick(arg) every interval seconds (0 = never). */
static void wait_stop(sigset_t *set, double seconds, double interval,
		      void (*tick)(void *), void *arg)
{
	int64_t start = mono_now(), end = seconds > 0 ? start + (int64_t)(seconds * 1e9) : INT64_MAX;
	int64_t step = interval > 0 ? (int64_t)(interval * 1e9) : 0, next;

	next = step ? start + step : INT64_MAX;
	for (;;) {
		int64_t now = mono_now(), until = end < next ? end : next, ns;
		struct timespec left;

		if (now >= end)
			return;
		if (now >= next) {
			tick(arg);
			next += step;
			continue;
		}
		if (until == INT64_MAX) {
			int sig;

			sigwait(set, &sig);
			return;
		}
		ns = until - now;
		left.tv_sec = ns / 1000000000LL;
		left.tv_nsec = ns % 1000000000LL;
		if (sigtimedwait(set, NULL, &left) > 0)
			return;
	}
}

/* -i SEC: one line per direction on stderr with the rates since the last. */
struct ticker {
	struct bridge *br;              /* user engine, NULL: kernel engine */
	struct bridgectl_kstats *ks;    /* kernel engine's counters (NULL: none) */
	struct bridgectl_counters kprev[DIRS];  /* kernel: at the last -i line */
	struct bridgectl *ctl;          /* control socket (NULL if it failed) */
	bool quiet;                     /* --stdin-lease: no dial-change lines */
	uint64_t gen;                   /* its dials' generation shown */
	struct bridge_status st;        /* status file contents */
	double interval;                /* -i, 0 = no lines */
	int64_t t0, last;               /* last: last -i line */
	struct bridge_stats prev[DIRS];
};

/* Every second: refresh the status file; every -i SEC: one line per
 * direction on stderr with the rates since the previous line. */
static void tick(void *arg)
{
	struct ticker *t = arg;
	int64_t now = mono_now();
	double dt = (now - t->last) / 1e9;
	bool line = t->interval > 0 && dt >= t->interval - 0.01;
	char r1[32], r2[32];
	int d;

	if (t->ctl) {                   /* dials changed through the socket */
		struct impair cur[DIRS];
		uint64_t g = bridgectl_dials(t->ctl, cur);

		for (d = 0; d < DIRS && g != t->gen; d++) {
			if (bridgectl_dial_equal(&t->st.held[d], &cur[d]))
				continue;
			t->st.held[d] = cur[d];
			impair_summary(&cur[d], t->st.dial[d], sizeof(t->st.dial[d]));
			if (!t->quiet)
				fprintf(stderr, "linklab bridge: %s now %s (control socket)\n",
					dir_text[d], t->st.dial[d]);
		}
		t->gen = g;
	}
	for (d = 0; d < DIRS && t->br; d++) {
		struct bridge_stats s;

		bridge_get_stats(t->br, (enum bridge_dir)d, &s);
		t->st.c[d].rx_pkts = s.rx_pkts;
		t->st.c[d].tx_pkts = s.tx_pkts;
		t->st.c[d].rx_bytes = s.rx_bytes;
		t->st.c[d].tx_bytes = s.tx_bytes;
		t->st.c[d].lost = s.emu.lost;
		t->st.c[d].duplicated = s.emu.duplicated;
		t->st.c[d].corrupted = s.emu.corrupted;
		t->st.c[d].reordered = s.emu.reordered;
		t->st.c[d].drops = s.emu.limit_drops + s.emu.rate_drops + s.sock_drops;
		if (!line)
			continue;
		fprintf(stderr, "%7.1fs %s rx %s tx %s  lost %llu dup %llu corrupt %llu "
			"reordered %llu drops %llu queue %u\n", (now - t->t0) / 1e9, dir_text[d],
			units_human_rate((double)(s.rx_bytes - t->prev[d].rx_bytes) * 8 / dt, r1, sizeof(r1)),
			units_human_rate((double)(s.tx_bytes - t->prev[d].tx_bytes) * 8 / dt, r2, sizeof(r2)),
			(unsigned long long)s.emu.lost, (unsigned long long)s.emu.duplicated,
			(unsigned long long)s.emu.corrupted, (unsigned long long)s.emu.reordered,
			(unsigned long long)(s.emu.limit_drops + s.emu.rate_drops + s.sock_drops),
			s.emu.qlen);
		t->prev[d] = s;
	}
	for (d = 0; d < DIRS && t->ks; d++) {
		struct bridgectl_counters c;

		bridgectl_kstats_read(t->ks, (enum bridge_dir)d, &c, NULL);
		t->st.c[d].rx_pkts = c.rx_packets;
		t->st.c[d].tx_pkts = c.tx_packets;
		t->st.c[d].rx_bytes = c.rx_bytes;
		t->st.c[d].tx_bytes = c.tx_bytes;
		t->st.c[d].drops = c.drops;
		if (!line)
			continue;
		fprintf(stderr, "%7.1fs %s rx %s tx %s  rx %llu pkts tx %llu pkts drops %llu\n",
			(now - t->t0) / 1e9, dir_text[d],
			units_human_rate((double)(c.rx_bytes - t->kprev[d].rx_bytes) * 8 / dt, r1, sizeof(r1)),
			units_human_rate((double)(c.tx_bytes - t->kprev[d].tx_bytes) * 8 / dt, r2, sizeof(r2)),
			(unsigned long long)c.rx_packets, (unsigned long long)c.tx_packets,
			(unsigned long long)c.drops);
		t->kprev[d] = c;
	}
	if (line)
		t->last = now;
	t->st.updated = (int64_t)time(NULL);
	bridge_status_write(&t->st, NULL);      /* best effort: show reads it */
}

static void ticker_init(struct ticker *t, struct bridge *br, struct bridgectl_kstats *ks,
			struct bridgectl *ctl, const struct bopts *b,
			const struct impair dial[DIRS], const char *engine)
{
	int d;

	memset(t, 0, sizeof(*t));
	t->br = br;
	t->ks = ks;
	t->ctl = ctl;
	t->interval = b->interval;
	t->quiet = b->lease;
	t->t0 = t->last = mono_now();
	t->st.pid = (int)getpid();
	snprintf(t->st.engine, sizeof(t->st.engine), "%s", engine);
	snprintf(t->st.if_a, sizeof(t->st.if_a), "%s", b->if_a);
	snprintf(t->st.if_b, sizeof(t->st.if_b), "%s", b->if_b);
	for (d = 0; d < DIRS; d++) {
		t->st.held[d] = dial[d];
		impair_summary(&dial[d], t->st.dial[d], sizeof(t->st.dial[d]));
	}
	tick(t);
}

/* status refresh period: 1 s, or -i when shorter */
static double tick_period(const struct bopts *b)
{
	return b->interval > 0 && b->interval < 1 ? b->interval : 1;
}

static cJSON *json_dir(const struct bridge_stats *s)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "rx_packets", (double)s->rx_pkts);
	cJSON_AddNumberToObject(o, "rx_bytes", (double)s->rx_bytes);
	cJSON_AddNumberToObject(o, "rx_gso_packets", (double)s->gso_pkts);
	cJSON_AddNumberToObject(o, "wire_bytes", (double)s->wire_bytes);
	cJSON_AddNumberToObject(o, "tx_packets", (double)s->tx_pkts);
	cJSON_AddNumberToObject(o, "tx_bytes", (double)s->tx_bytes);
	cJSON_AddNumberToObject(o, "tx_errors", (double)s->tx_errors);
	cJSON_AddNumberToObject(o, "lost", (double)s->emu.lost);
	cJSON_AddNumberToObject(o, "duplicated", (double)s->emu.duplicated);
	cJSON_AddNumberToObject(o, "corrupted", (double)s->emu.corrupted);
	cJSON_AddNumberToObject(o, "reordered", (double)s->emu.reordered);
	cJSON_AddNumberToObject(o, "sent_ahead", (double)s->emu.sent_ahead);
	cJSON_AddNumberToObject(o, "limit_drops", (double)s->emu.limit_drops);
	cJSON_AddNumberToObject(o, "rate_drops", (double)s->emu.rate_drops);
	cJSON_AddNumberToObject(o, "ecn_marked", (double)s->emu.ecn_marked);
	cJSON_AddNumberToObject(o, "socket_drops", (double)s->sock_drops);
	cJSON_AddNumberToObject(o, "rx_truncated", (double)s->rx_truncated);
	cJSON_AddNumberToObject(o, "queue_max", (double)s->emu.qlen_max);
	return o;
}

/* The kernel engine's counters of a direction at exit (bridgectl_kstats:
 * link counters of the ports, the egress root qdisc's drops; lost and the
 * other model counts are 0 there, the kernel cannot tell them apart). */
static cJSON *json_kernel_dir(const struct bridgectl_counters *c)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "rx_packets", (double)c->rx_packets);
	cJSON_AddNumberToObject(o, "rx_bytes", (double)c->rx_bytes);
	cJSON_AddNumberToObject(o, "tx_packets", (double)c->tx_packets);
	cJSON_AddNumberToObject(o, "tx_bytes", (double)c->tx_bytes);
	cJSON_AddNumberToObject(o, "lost", (double)c->lost);
	cJSON_AddNumberToObject(o, "drops", (double)c->drops);
	return o;
}

/* The dial in tc words, with a --distribution FILE named. */
static char *dial_text(const struct bopts *b, const struct impair dial[DIRS], int d,
		       char *buf, size_t len)
{
	size_t n;

	impair_summary(&dial[d], buf, len);
	n = strlen(buf);
	if (b->dist_file[d][0] && n < len)
		snprintf(buf + n, len - n, " distribution %s", b->dist_file[d]);
	return buf;
}

/* Build both directions' model configs; every problem goes to diag. */
static void build_configs(const struct bopts *b, const struct impair dial[DIRS],
			  struct emu_config cfg[DIRS], struct emu_dist dists[DIRS],
			  struct ll_diag *diag)
{
	uint64_t seed = (uint64_t)time(NULL) * 2654435761u + (uint64_t)getpid();
	int d;

	for (d = 0; d < DIRS; d++) {
		struct ll_err err = { 0 };

		if (emu_config_build(&cfg[d], &dial[d], seed + (uint64_t)d, &dists[d], &err) < 0) {
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s: %s", dir_text[d], err.msg);
			continue;
		}
		if (b->dist_file[d][0]) {
			if (emu_dist_find(b->dist_file[d], &dists[d], &err) < 0)
				ll_diag_add(diag, LL_DIAG_ERROR, "distribution", "%s: %s",
					    dir_text[d], err.msg);
			else
				cfg[d].dist = &dists[d];
		}
	}
}

/* What the control socket's state names. */
static void ctl_info(struct bridgectl_info *info, const struct bopts *b, const char *engine)
{
	memset(info, 0, sizeof(*info));
	info->pid = (int)getpid();
	snprintf(info->engine, sizeof(info->engine), "%s", engine);
	snprintf(info->if_a, sizeof(info->if_a), "%s", b->if_a);
	snprintf(info->if_b, sizeof(info->if_b), "%s", b->if_b);
}

/* Stop the control socket; final[] gets the dials it left in force. */
static void ctl_stop(struct bridgectl *ctl, const struct impair dial[DIRS],
		     struct impair final[DIRS])
{
	final[0] = dial[0];
	final[1] = dial[1];
	if (ctl)
		bridgectl_dials(ctl, final);
	bridgectl_stop(ctl);
}

/* --stdin-lease: the --attach relay (cmd_bridge_attach) on this bridge's
 * own control socket, in a thread; when it ends (stdin closed, or the
 * socket closed by a stop) it raises SIGTERM: the main thread's wait_stop
 * returns and the bridge stops and restores its interfaces. */
static pthread_t lease_thread;
static bool lease_running;

static void *lease_main(void *arg)
{
	(void)arg;
	cmd_bridge_attach((int)getpid());
	kill(getpid(), SIGTERM);        /* blocked everywhere: wait_stop takes it */
	return NULL;
}

/* Start the relay once the control socket serves (ctl NULL: it failed,
 * and a lease cannot be had: 1, the caller stops). */
static int lease_begin(const struct bopts *b, struct bridgectl *ctl, const struct ll_err *why)
{
	int rc;

	if (!b->lease)
		return 0;
	if (!ctl) {
		fprintf(stderr, "linklab bridge: --stdin-lease: no control socket: %s\n", why->msg);
		return 1;
	}
	rc = pthread_create(&lease_thread, NULL, lease_main, NULL);
	if (rc) {
		fprintf(stderr, "linklab bridge: --stdin-lease: thread: %s\n", strerror(rc));
		return 1;
	}
	lease_running = true;
	return 0;
}

/* After ctl_stop (which closes the relay's connection): wait for the
 * relay, then send what is left of stdout (the exit summary) to stderr,
 * off the lease's protocol channel. */
static void lease_end(void)
{
	if (!lease_running)
		return;
	pthread_join(lease_thread, NULL);
	lease_running = false;
	fflush(stdout);
	dup2(STDERR_FILENO, STDOUT_FILENO);
}

static int run_user(struct bopts *b, const struct impair dial[DIRS],
		    const struct emu_config cfg[DIRS], sigset_t *set)
{
	struct bridge_opts o;
	struct bridge *br = NULL;
	struct ll_err err = { 0 };
	struct bridge_stats st[DIRS];
	struct ticker tk;
	struct bridgectl_info info;
	struct bridgectl *ctl = NULL;
	struct impair final[DIRS];
	char sum[512];
	int d, rc;

	memset(&o, 0, sizeof(o));
	snprintf(o.if_a, sizeof(o.if_a), "%s", b->if_a);
	snprintf(o.if_b, sizeof(o.if_b), "%s", b->if_b);
	o.rt_priority = b->rt_priority;
	o.workers = b->workers;
	for (d = 0; d < DIRS; d++)
		o.dir[d] = cfg[d];
	rc = bridge_open(&o, &br, &err);
	if (rc == 0)
		rc = bridge_start(br, &err);
	if (rc < 0) {
		bridge_close(br);
		return cmd_fail("bridge", &err);
	}
	for (d = 0; d < DIRS && !b->lease; d++) /* A->B enters IF_A and leaves IF_B */
		fprintf(stderr, "linklab bridge: user engine %s (in %s, out %s): %s\n",
			dir_text[d], d == 0 ? b->if_a : b->if_b, d == 0 ? b->if_b : b->if_a,
			dial_text(b, dial, d, sum, sizeof(sum)));
	if (!b->lease)
		fprintf(stderr, "linklab bridge: memory bound %.1f MB (queue limit A->B %u, "
			"B->A %u frames, + receive buffers)\n", (double)bridge_mem_bound(&o) / 1e6,
			o.dir[0].limit ? o.dir[0].limit : 1000, o.dir[1].limit ? o.dir[1].limit : 1000);
	ctl_info(&info, b, "user");
	info.workers = bridge_workers(&o);
	if (bridgectl_serve_user(br, &info, dial, o.dir, &ctl, &err) < 0 && !b->lease)
		fprintf(stderr, "linklab bridge: warning: no live control: %s\n", err.msg);
	if (!b->lease)
		fprintf(stderr, "linklab bridge: forwarding %s <-> %s (%u reading thread%s per "
			"direction); Ctrl-C stops\n", b->if_a, b->if_b, info.workers,
			info.workers == 1 ? "" : "s");
	ticker_init(&tk, br, NULL, ctl, b, dial, "user");
	if (lease_begin(b, ctl, &err) == 0)
		wait_stop(set, b->seconds, tick_period(b), tick, &tk);
	else
		rc = 1;
	ctl_stop(ctl, dial, final);
	lease_end();
	bridge_status_remove(tk.st.pid);
	bridge_stop(br, b->discard);
	for (d = 0; d < DIRS; d++)
		bridge_get_stats(br, (enum bridge_dir)d, &st[d]);
	bridge_close(br);
	if (rc)
		return rc;              /* --stdin-lease without its lease */
	if (b->json) {
		cJSON *doc = cJSON_CreateObject();

		cJSON_AddStringToObject(doc, "engine", "user");
		cJSON_AddStringToObject(doc, "if_a", b->if_a);
		cJSON_AddStringToObject(doc, "if_b", b->if_b);
		for (d = 0; d < DIRS; d++) {
			cJSON *j = json_dir(&st[d]);

			cJSON_AddStringToObject(j, "dial", dial_text(b, final, d, sum, sizeof(sum)));
			cJSON_AddItemToObject(doc, dir_name[d], j);
		}
		cmd_print_json(doc);
	} else {
		for (d = 0; d < DIRS; d++)
			printf("%s: rx %llu pkts %llu bytes, tx %llu pkts, lost %llu, dup %llu, "
			       "corrupt %llu, reordered %llu, limit drops %llu, rate drops %llu, "
			       "socket drops %llu, tx errors %llu\n", dir_text[d],
			       (unsigned long long)st[d].rx_pkts, (unsigned long long)st[d].rx_bytes,
			       (unsigned long long)st[d].tx_pkts, (unsigned long long)st[d].emu.lost,
			       (unsigned long long)st[d].emu.duplicated,
			       (unsigned long long)st[d].emu.corrupted,
			       (unsigned long long)st[d].emu.reordered,
			       (unsigned long long)st[d].emu.limit_drops,
			       (unsigned long long)st[d].emu.rate_drops,
			       (unsigned long long)st[d].sock_drops,
			       (unsigned long long)st[d].tx_errors);
	}
	return 0;
}

/* A bridge device a killed kernel-engine bridge left (its name is br, or it
 * holds IF_A or IF_B): its ports' dials undone and the device removed,
 * saying so; then this start goes on as on a clean host. */
static void reap_stale(struct peer *p, const char *br, const char *if_a, const char *if_b,
		       bool quiet)
{
	struct bridge_stale st[8];
	struct ll_err err = { 0 };
	int n = 0, i, k;

	if (bridge_kernel_stale(st, 8, &n, &err) < 0) {
		fprintf(stderr, "linklab bridge: warning: %s\n", err.msg);
		return;
	}
	for (i = 0; i < n; i++) {
		bool ours = !strcmp(st[i].name, br);

		for (k = 0; k < st[i].nports; k++)
			ours |= !strcmp(st[i].ports[k], if_a) || !strcmp(st[i].ports[k], if_b);
		if (!ours)
			continue;
		if (bridge_kernel_reap(p, &st[i], &err) < 0)
			fprintf(stderr, "linklab bridge: warning: bridge %s left by pid %d: %s\n",
				st[i].name, st[i].pid, err.msg);
		else if (!quiet)   /* --stdin-lease: stderr only for problems */
			fprintf(stderr, "linklab bridge: removed bridge %s left by a killed "
				"linklab bridge (pid %d); %s%s%s restored\n", st[i].name,
				st[i].pid, st[i].nports ? st[i].ports[0] : "no ports",
				st[i].nports > 1 ? ", " : "", st[i].nports > 1 ? st[i].ports[1] : "");
	}
}

/* Before either engine starts: a bridge a killed kernel-engine bridge left on
 * these ports goes (reap_stale); then each port must be no loopback, no port
 * of another bridge or bond (two paths would duplicate every frame) and, but
 * with --force, hold no address (a port has none: the kernel engine takes it
 * off the network, the user engine forwards its traffic too). Every problem
 * printed; 0 to go on, else the exit status. */
static int check_ports(const struct bopts *b)
{
	const char *br = b->brname ? b->brname : "llbr0";
	const char *port[2] = { b->if_a, b->if_b };
	struct ll_err err = { 0 };
	struct peer p;
	int i, status = 0;

	if (peer_local_open(&p, &err) == 0) {
		reap_stale(&p, br, b->if_a, b->if_b, b->lease);
		p.ops->close(&p);
	}
	for (i = 0; i < 2; i++) {
		struct bridge_port_info pi;

		if (i == 1 && !strcmp(port[0], port[1]))
			break;          /* one problem, said once */
		if (bridge_port_info(port[i], &pi, &err) < 0) {
			if (err.code == -ENODEV) {
				fprintf(stderr, "linklab bridge: %s\n", err.msg);
				status = 1;
			}
			continue;       /* cannot tell: the engine's own checks */
		}
		if (pi.loopback) {
			fprintf(stderr, "linklab bridge: %s: the loopback interface cannot be a "
				"bridge port\n", port[i]);
			status = 2;
		} else if (pi.is_bridge) {
			fprintf(stderr, "linklab bridge: %s is a Linux bridge itself: give the "
				"interfaces to join (a bridge cannot be a port)\n", port[i]);
			status = 2;
		} else if (pi.master[0]) {
			fprintf(stderr, "linklab bridge: %s is already a port of %s: a second "
				"path would duplicate every frame (stop what made %s, or `ip link "
				"set %s nomaster`)\n", port[i], pi.master, pi.master, port[i]);
			status = status ? status : 1;
		} else if (pi.addr[0] && !b->force) {
			fprintf(stderr, "linklab bridge: %s has address %s: a bridge port has "
				"none (the kernel engine takes it off the network, the user engine "
				"forwards its traffic too; an SSH session over it may drop); "
				"--force to use it anyway\n", port[i], pi.addr);
			status = status ? status : 1;
		}
	}
	return status;
}

static int run_kernel(struct bopts *b, const struct impair dial[DIRS], int has_netem,
		      sigset_t *set)
{
	const char *br = b->brname ? b->brname : "llbr0";
	const char *egress[DIRS] = { b->if_b, b->if_a };  /* A->B leaves IF_B */
	struct ll_err err = { 0 };
	struct peer p;
	struct qdisc_state qs[DIRS];
	struct impair final[DIRS];
	struct bridgectl_kstats *ks = NULL;
	struct bridgectl_counters kc[DIRS];
	int d, rc, status = 0;

	memset(qs, 0, sizeof(qs));
	memset(kc, 0, sizeof(kc));
	rc = peer_local_open(&p, &err);
	if (rc < 0)
		return cmd_fail("bridge", &err);
	rc = bridge_kernel_up(br, b->if_a, b->if_b, &err);
	if (rc < 0) {
		p.ops->close(&p);
		return cmd_fail("bridge", &err);
	}
	for (d = 0; d < DIRS && rc == 0; d++)
		if (!impair_is_empty(&dial[d]))
			rc = p.ops->apply(&p, egress[d], &dial[d], &err);
	final[0] = dial[0];
	final[1] = dial[1];
	if (rc == 0) {
		struct ticker tk;
		struct bridgectl_info info;
		struct bridgectl *ctl = NULL;

		/* the baseline: counters are relative to this bridge's start */
		if (bridgectl_kstats_open(&p, b->if_a, b->if_b, &ks, &err) < 0)
			fprintf(stderr, "linklab bridge: warning: no counters: %s\n", err.msg);
		ctl_info(&info, b, "kernel");
		if (bridgectl_serve_kernel(&p, ks, egress, has_netem, &info, dial, &ctl, &err) < 0 &&
		    !b->lease)
			fprintf(stderr, "linklab bridge: warning: no live control: %s\n", err.msg);
		for (d = 0; d < DIRS && !b->lease; d++) {
			char sum[512];

			fprintf(stderr, "linklab bridge: kernel engine %s (in %s, out %s): %s\n",
				dir_text[d], egress[1 - d], egress[d],
				impair_summary(&dial[d], sum, sizeof(sum)));
		}
		if (!b->lease)
			fprintf(stderr, "linklab bridge: kernel engine, bridge %s (%s, %s); "
				"Ctrl-C stops\n", br, b->if_a, b->if_b);
		ticker_init(&tk, NULL, ks, ctl, b, dial, "kernel");
		if (lease_begin(b, ctl, &err) == 0)
			wait_stop(set, b->seconds, tick_period(b), tick, &tk);
		else
			status = 1;
		ctl_stop(ctl, dial, final);     /* no apply runs after this */
		lease_end();
		bridge_status_remove(tk.st.pid);
		for (d = 0; d < DIRS; d++) {    /* before clear takes the qdiscs away */
			if (ks)
				bridgectl_kstats_read(ks, (enum bridge_dir)d, &kc[d], NULL);
			p.ops->read_qdiscs(&p, egress[d], &qs[d], NULL);
		}
		bridgectl_kstats_close(ks);
	} else {
		status = cmd_fail("bridge", &err);
	}
	for (d = 0; d < DIRS; d++) {
		struct ll_err e2 = { 0 };

		/* ours: the start dial, or one the control socket left there */
		if ((!impair_is_empty(&dial[d]) || !impair_is_empty(&final[d])) &&
		    p.ops->clear(&p, egress[d], &e2) < 0)
			status = cmd_fail("bridge", &e2);
	}
	if (bridge_kernel_down(br, &err) < 0)
		status = cmd_fail("bridge", &err);
	p.ops->close(&p);
	if (status == 0 && b->json) {
		cJSON *doc = cJSON_CreateObject();

		cJSON_AddStringToObject(doc, "engine", "kernel");
		cJSON_AddStringToObject(doc, "bridge", br);
		cJSON_AddStringToObject(doc, "if_a", b->if_a);
		cJSON_AddStringToObject(doc, "if_b", b->if_b);
		for (d = 0; d < DIRS; d++) {
			cJSON *j = json_kernel_dir(&kc[d]);
			char sum[512];

			cJSON_AddStringToObject(j, "dial", impair_summary(&final[d], sum, sizeof(sum)));
			cJSON_AddItemToObject(j, "qdiscs", cmd_json_qdiscs(&qs[d]));
			cJSON_AddItemToObject(doc, dir_name[d], j);
		}
		cmd_print_json(doc);
	} else if (status == 0) {
		for (d = 0; d < DIRS; d++) {
			cmd_print_qdiscs(stdout, dir_text[d], &qs[d]);
			printf("%s: rx %llu pkts %llu bytes, tx %llu pkts %llu bytes, drops %llu\n",
			       dir_text[d], (unsigned long long)kc[d].rx_packets,
			       (unsigned long long)kc[d].rx_bytes, (unsigned long long)kc[d].tx_packets,
			       (unsigned long long)kc[d].tx_bytes, (unsigned long long)kc[d].drops);
		}
	}
	return status;
}

/* impair_validate one direction; a message both directions share is given
 * once (the dial options without a prefix set both). */
static void validate_dir(const struct impair *d, int dir, struct ll_diag *diag)
{
	struct ll_diag one;
	int i, j;

	ll_diag_clear(&one);
	impair_validate(d, &one);
	for (i = 0; i < one.n; i++) {
		bool dup = false;

		for (j = 0; j < diag->n && dir == 1; j++)
			dup |= !strcmp(diag->e[j].text, one.e[i].text);
		if (!dup)
			ll_diag_add(diag, one.e[i].level, one.e[i].field, "%s", one.e[i].text);
	}
}

/* A live bridge of this netns already on IF_A or IF_B (status files):
 * exit 1 naming its pid and ports; a second one would duplicate frames. */
static int busy_ports(const struct bopts *b)
{
	struct bridge_status st[16];
	struct ll_err err = { 0 };
	int n = 0, i;

	if (bridge_status_list(st, 16, &n, &err) < 0)
		return 0;               /* no status dir readable: nothing known */
	for (i = 0; i < n; i++) {
		if (st[i].pid == (int)getpid())
			continue;
		if (strcmp(st[i].if_a, b->if_a) && strcmp(st[i].if_b, b->if_a) &&
		    strcmp(st[i].if_a, b->if_b) && strcmp(st[i].if_b, b->if_b))
			continue;
		fprintf(stderr, "linklab bridge: a bridge (pid %d) already forwards %s <-> %s "
			"in this network namespace; stop it first (a second one would "
			"duplicate every frame)\n", st[i].pid, st[i].if_a, st[i].if_b);
		return 1;
	}
	return 0;
}

/* Print every message of diag (errors and warnings) and where the usage is: exit 2. */
static int report(const struct ll_diag *diag)
{
	int i;

	for (i = 0; i < diag->n; i++)
		fprintf(stderr, "linklab bridge: %s%s\n",
			diag->e[i].level == LL_DIAG_WARN ? "warning: " : "", diag->e[i].text);
	fprintf(stderr, "linklab bridge: see `linklab bridge -h`\n");
	return 2;
}

int cmd_bridge(int argc, char **argv)
{
	struct bopts b;
	struct ll_diag diag;
	struct ll_err err = { 0 };
	struct profile prof;
	struct impair dial[DIRS];
	struct emu_config cfg[DIRS];
	static struct emu_dist dists[DIRS];     /* the tables outlive the models */
	sigset_t set;
	int d, i, has_netem = -1, rc;
	bool user, user_only = false;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--status") || !strcmp(argv[i], "--set") ||
		    !strcmp(argv[i], "--attach"))
			return cmd_bridgectl(argc, argv);
	memset(&b, 0, sizeof(b));
	memset(&prof, 0, sizeof(prof));
	ll_diag_clear(&diag);
	if (parse_args(argc, argv, &b, &diag) > 0) {
		bridge_usage(stdout);
		return 0;
	}
	for (d = 0; d < DIRS; d++)
		dial[d] = b.dial[d];
	if (b.profile && diag.nerrors == 0) {
		char path[PATH_MAX];

		if (profile_find(b.profile, path, sizeof(path), &err) < 0)
			ll_diag_add(&diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
		else if (profile_load(path, &prof, &diag) == 0) {
			if (!b.clear[0])
				dial[0] = prof.a;
			if (!b.clear[1])
				dial[1] = prof.b;
			impair_overlay(&dial[0], &b.dial[0]);
			impair_overlay(&dial[1], &b.dial[1]);
		}
	}
	for (d = 0; d < DIRS; d++) {
		if (b.dist_file[d][0]) {
			dial[d].set &= ~(uint32_t)IMP_DIST;     /* the FILE wins */
			user_only = true;
			if (!(dial[d].set & IMP_JITTER) || dial[d].jitter == 0)
				ll_diag_add(&diag, LL_DIAG_ERROR, "distribution",
					    "%s: distribution %s needs jitter (tc-netem: distribution needs delay and jitter)",
					    dir_text[d], b.dist_file[d]);
		}
	}
	/* what the kernel engine cannot do, with the other problems */
	if (!strcmp(b.engine, "kernel") && user_only)
		ll_diag_add(&diag, LL_DIAG_ERROR, "distribution",
			    "--engine kernel: --distribution FILE is a user-engine option (the "
			    "kernel takes iproute2's named tables: normal, pareto, paretonormal)");
	if (!strcmp(b.engine, "kernel") && b.workers)
		ll_diag_add(&diag, LL_DIAG_ERROR, "workers",
			    "--engine kernel: --workers is a user-engine option (the Linux bridge "
			    "forwards in the kernel's softirqs)");
	/* cross-field rules too, even after a bad value: every problem at once */
	for (d = 0; d < DIRS; d++)
		if (!impair_is_empty(&dial[d]))
			validate_dir(&dial[d], d, &diag);
	if (diag.nerrors)
		return report(&diag);
	for (d = 0; d < DIRS; d++) {
		char jw[LL_DIAG_LEN];
		if (impair_jitter_reorder_warning(&dial[d], 0, 0, jw, sizeof(jw)))
			ll_diag_add(&diag, LL_DIAG_WARN, "jitter", "%s: %s", dir_text[d], jw);
	}
	if (busy_ports(&b))
		return 1;
	rc = check_ports(&b);
	if (rc)
		return rc;

	if (!strcmp(b.engine, "user")) {
		user = true;
	} else {
		has_netem = bridge_kernel_has_netem();
		if (!strcmp(b.engine, "kernel")) {
			if (has_netem == 0 && (impair_needs_netem(&dial[0]) ||
					       impair_needs_netem(&dial[1]))) {
				fprintf(stderr, "linklab bridge: --engine kernel: this kernel has no "
					"netem (CONFIG_NET_SCH_NETEM; try modprobe sch_netem); "
					"--engine user emulates it\n");
				return 1;
			}
			user = false;
		} else {
			user = has_netem != 1 || user_only;
			if (!b.lease)
				fprintf(stderr, "linklab bridge: engine auto -> %s (%s)\n",
					user ? "user" : "kernel",
					has_netem == 1 ? (user ? "netem present, but a distribution FILE given"
							 : "netem present")
					: has_netem == 0 ? "this kernel has no netem" : "netem probe failed");
		}
	}
	if (user) {
		build_configs(&b, dial, cfg, dists, &diag);
		if (diag.nerrors)
			return report(&diag);
	}
	for (i = 0; i < diag.n; i++)
		fprintf(stderr, "linklab bridge: warning: %s\n", diag.e[i].text);
	if (b.lease)    /* stdout gone (the console's session): EPIPE, not death */
		signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);  /* threads inherit the mask */
	rc = user ? run_user(&b, dial, cfg, &set) : run_kernel(&b, dial, has_netem, &set);
	return rc;
}
