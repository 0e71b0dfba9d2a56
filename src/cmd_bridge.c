/* SPDX-License-Identifier: MIT */
/* cmd_bridge.c - `linklab bridge IF_A IF_B`: middle-box mode in the
 * foreground. The dial (as for apply) goes to both directions; options
 * prefixed --a-to-b-/--b-to-a- or a profile's [a]/[b] sections set one
 * direction. SIGINT/SIGTERM (or -t SEC) stop forwarding and put the
 * interfaces back; -J prints the counters as JSON at exit. */
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

#include "linklab/bridge.h"
#include "linklab/cli.h"
#include "linklab/cmd.h"
#include "linklab/emu.h"
#include "linklab/profile.h"
#include "linklab/units.h"

#define DIRS 2
static const char *const dir_name[DIRS] = { "a_to_b", "b_to_a" };
static const char *const dir_text[DIRS] = { "A->B", "B->A" };

struct bopts {
	const char *if_a, *if_b, *engine, *profile, *brname;
	bool json, discard;
	double seconds;                  /* 0 = until a signal */
	double interval;                 /* -i: counters every SEC, 0 = none */
	int rt_priority;                 /* --rt-priority N (SCHED_FIFO) */
	struct impair dial[DIRS];        /* from options */
	struct emu_config extra[DIRS];   /* model-only options */
	bool has_extra[DIRS];
	char dist[DIRS][PATH_MAX];
};

static void bridge_usage(FILE *f)
{
	fprintf(f,
		"usage: linklab bridge IF_A IF_B [--engine auto|kernel|user] [dial options]\n"
		"         [--a-to-b-OPTION V] [--b-to-a-OPTION V] [--profile NAME] [-t SEC] [-i SEC] [-J]\n"
		"  dial options as for apply: --rate --delay --jitter --loss --duplicate --corrupt\n"
		"  --reorder --gap --limit ... (both directions; A->B leaves IF_B, B->A leaves IF_A)\n"
		"  user engine only: --distribution uniform|normal|pareto|paretonormal|FILE\n"
		"  --loss-gemodel P[,R[,1-H[,1-K]]]  --loss-state P13[,P31[,P32[,P23[,P14]]]]\n"
		"  --overhead BYTES  --cell SIZE[,OVERHEAD]  --seed N  --discard (drop queue at exit)\n"
		"  --rt-priority N (SCHED_FIFO forwarding threads: releases on time on a busy host)\n"
		"  --bridge-name BR (kernel engine, default llbr0)\n"
		"  -t SEC stop after SEC seconds; -i SEC counters on stderr every SEC (user engine)\n");
}

/* Parse "a%,b%,..." into up to max u32 fractions; returns the count or -1. */
static int parse_probs(const char *s, uint32_t *v, int max, struct ll_err *err)
{
	char buf[256], *tok, *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n >= max || units_parse_percent(tok, &v[n], err) < 0)
			return -1;
		n++;
	}
	return n;
}

/* A model-only option for direction mask dirs; 1 consumed, 0 not ours, -1 bad. */
static int extra_opt(struct bopts *b, unsigned dirs, const char *name, const char *val,
		     struct ll_diag *diag)
{
	struct ll_err err = { 0 };
	uint32_t v[5] = { 0 };
	int i, n;

	if (strcmp(name, "distribution") && strcmp(name, "loss-gemodel") &&
	    strcmp(name, "loss-state") && strcmp(name, "overhead") &&
	    strcmp(name, "cell") && strcmp(name, "seed"))
		return 0;
	for (i = 0; i < DIRS; i++) {
		struct emu_config *c = &b->extra[i];

		if (!(dirs & (1u << i)))
			continue;
		b->has_extra[i] = true;
		if (!strcmp(name, "distribution")) {
			snprintf(b->dist[i], sizeof(b->dist[i]), "%s", val);
		} else if (!strcmp(name, "loss-gemodel")) {
			n = parse_probs(val, v, 4, &err);
			if (n < 1) {
				ll_diag_add(diag, LL_DIAG_ERROR, name,
					    "--loss-gemodel '%s': want P[,R[,1-H[,1-K]]] in %% (%s)",
					    val, err.msg);
				return -1;
			}
			c->loss_model = EMU_LOSS_GE;
			c->ge_p = v[0];
			c->ge_r = n > 1 ? v[1] : UINT32_MAX - v[0];
			c->ge_1h = n > 2 ? v[2] : UINT32_MAX;
			c->ge_1k = n > 3 ? v[3] : 0;
		} else if (!strcmp(name, "loss-state")) {
			n = parse_probs(val, v, 5, &err);
			if (n < 1) {
				ll_diag_add(diag, LL_DIAG_ERROR, name,
					    "--loss-state '%s': want P13[,P31[,P32[,P23[,P14]]]] in %% (%s)",
					    val, err.msg);
				return -1;
			}
			c->loss_model = EMU_LOSS_4STATE;
			c->p13 = v[0];
			c->p31 = n > 1 ? v[1] : UINT32_MAX - v[0];
			c->p32 = n > 2 ? v[2] : 0;
			c->p23 = n > 3 ? v[3] : UINT32_MAX;
			c->p14 = n > 4 ? v[4] : 0;
		} else if (!strcmp(name, "overhead")) {
			char *end;
			long o = strtol(val, &end, 10);

			if (*end || o < -1500 || o > 1500) {
				ll_diag_add(diag, LL_DIAG_ERROR, name,
					    "--overhead '%s': bytes per packet, -1500..1500", val);
				return -1;
			}
			c->overhead = (int32_t)o;
		} else if (!strcmp(name, "cell")) {
			unsigned long cs = 0;
			long co = 0;
			char *end;

			cs = strtoul(val, &end, 10);
			if (*end == ',')
				co = strtol(end + 1, &end, 10);
			if (*end || cs == 0 || cs > 65535 || co < -1500 || co > 1500) {
				ll_diag_add(diag, LL_DIAG_ERROR, name,
					    "--cell '%s': SIZE[,OVERHEAD] bytes (as tc-netem rate's CELLSIZE CELLOVERHEAD)",
					    val);
				return -1;
			}
			c->cell_size = (uint32_t)cs;
			c->cell_overhead = (int32_t)co;
		} else {
			char *end;

			c->seed = strtoull(val, &end, 0);
			if (*end) {
				ll_diag_add(diag, LL_DIAG_ERROR, name, "--seed '%s': an integer", val);
				return -1;
			}
		}
	}
	return 1;
}

static int parse_args(int argc, char **argv, struct bopts *b, struct ll_diag *diag)
{
	int i, npos = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val, *eq, *name;
		const struct impair_field *f;
		unsigned dirs = 3;
		char fname[64];
		int d, r;

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
		eq = strchr(a, '=');
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
		if (!strcmp(a, "-i") || !strncmp(a, "-i=", 3)) {
			char *end;

			b->interval = strtod(val, &end);
			if (*end || b->interval < 0.1 || b->interval > 3600)
				ll_diag_add(diag, LL_DIAG_ERROR, NULL, "-i '%s': seconds, 0.1..3600", val);
			continue;
		}
		if (!strcmp(a, "-t") || !strncmp(a, "-t=", 3)) {
			char *end;

			b->seconds = strtod(val, &end);
			if (*end || b->seconds <= 0)
				ll_diag_add(diag, LL_DIAG_ERROR, NULL, "-t '%s': seconds > 0", val);
			continue;
		}
		if (strncmp(a, "--", 2)) {
			ll_diag_add(diag, LL_DIAG_ERROR, NULL, "unknown option '%s'", a);
			if (!eq)
				i--;
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
		if (!strcmp(name, "bridge-name")) {
			b->brname = val;
			continue;
		}
		if (!strncmp(name, "a-to-b-", 7)) {
			dirs = 1;
			name += 7;
		} else if (!strncmp(name, "b-to-a-", 7)) {
			dirs = 2;
			name += 7;
		}
		r = extra_opt(b, dirs, name, val, diag);
		if (r != 0)
			continue;
		f = impair_field_find(name);
		if (!f) {
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "unknown option '--%s' (see linklab bridge -h)", fname);
			if (!eq)
				i--;
			continue;
		}
		for (d = 0; d < DIRS; d++) {
			struct ll_diag quiet;

			ll_diag_clear(&quiet);
			if (dirs & (1u << d))  /* one message for both directions */
				impair_set(&b->dial[d], f->name, val,
					   d == 1 && dirs == 3 ? &quiet : diag);
		}
	}
	if (npos < 2)
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "need two interfaces: IF_A IF_B");
	if (!b->engine)
		b->engine = "auto";
	if (strcmp(b->engine, "auto") && strcmp(b->engine, "kernel") && strcmp(b->engine, "user"))
		ll_diag_add(diag, LL_DIAG_ERROR, "engine",
			    "--engine '%s': auto, kernel or user", b->engine);
	return 0;
}

/* Copy every field given in src onto dst (command line over profile). */
static void overlay(struct impair *dst, const struct impair *src, struct ll_diag *diag)
{
	const struct impair_field *f;
	char v[64];

	for (f = impair_fields; f->name; f++)
		if (src->set & f->bit)
			impair_set(dst, f->name, impair_get(src, f, v, sizeof(v)), diag);
}

static int load_dist(const char *name, struct emu_dist *d, struct ll_err *err)
{
	static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu/tc", "/usr/lib/tc",
					    "/usr/lib64/tc", "/usr/local/lib/tc", NULL };
	char path[PATH_MAX];
	int i;

	if (strchr(name, '/'))
		return emu_dist_load(name, d, err);
	for (i = 0; dirs[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s.dist", dirs[i], name);
		if (access(path, R_OK) == 0)
			return emu_dist_load(path, d, err);
	}
	if (!strcmp(name, "normal")) {
		emu_dist_normal(d, 4096);
		return 0;
	}
	return ll_err_set(err, -ENOENT,
			  "distribution '%s': no %s.dist in iproute2's tc directories (give a FILE)",
			  name, name);
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
	struct bridge *br;              /* NULL: kernel engine (no counters) */
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
	if (line)
		t->last = now;
	t->st.updated = (int64_t)time(NULL);
	bridge_status_write(&t->st, NULL);      /* best effort: show reads it */
}

static void ticker_init(struct ticker *t, struct bridge *br, const struct bopts *b,
			const struct impair dial[DIRS], const char *engine)
{
	int d;

	memset(t, 0, sizeof(*t));
	t->br = br;
	t->interval = b->interval;
	t->t0 = t->last = mono_now();
	t->st.pid = (int)getpid();
	snprintf(t->st.engine, sizeof(t->st.engine), "%s", engine);
	snprintf(t->st.if_a, sizeof(t->st.if_a), "%s", b->if_a);
	snprintf(t->st.if_b, sizeof(t->st.if_b), "%s", b->if_b);
	for (d = 0; d < DIRS; d++)
		impair_summary(&dial[d], t->st.dial[d], sizeof(t->st.dial[d]));
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
	cJSON_AddNumberToObject(o, "limit_drops", (double)s->emu.limit_drops);
	cJSON_AddNumberToObject(o, "rate_drops", (double)s->emu.rate_drops);
	cJSON_AddNumberToObject(o, "socket_drops", (double)s->sock_drops);
	cJSON_AddNumberToObject(o, "rx_truncated", (double)s->rx_truncated);
	cJSON_AddNumberToObject(o, "queue_max", (double)s->emu.qlen_max);
	return o;
}

static int run_user(struct bopts *b, const struct impair dial[DIRS], sigset_t *set)
{
	static struct emu_dist dists[DIRS];
	struct bridge_opts o;
	struct bridge *br = NULL;
	struct ll_err err = { 0 };
	struct bridge_stats st[DIRS];
	struct ticker tk;
	char sum[256];
	int d, rc;

	memset(&o, 0, sizeof(o));
	snprintf(o.if_a, sizeof(o.if_a), "%s", b->if_a);
	snprintf(o.if_b, sizeof(o.if_b), "%s", b->if_b);
	o.rt_priority = b->rt_priority;
	for (d = 0; d < DIRS; d++) {
		struct emu_config *c = &o.dir[d];
		struct impair_plan p;
		struct ll_diag pd;

		*c = b->extra[d];
		if (!c->seed)
			c->seed = (uint64_t)time(NULL) * 2654435761u + (uint64_t)getpid() + (uint64_t)d;
		emu_config_from_impair(c, &dial[d]);
		if (!(dial[d].set & IMP_LIMIT)) {
			ll_diag_clear(&pd);
			c->limit = impair_plan(&dial[d], 1500, 0, &p, &pd) == 0 && p.limit ?
				   p.limit : 1000;
		}
		if (b->dist[d][0] && strcmp(b->dist[d], "uniform")) {
			rc = load_dist(b->dist[d], &dists[d], &err);
			if (rc < 0)
				return cmd_fail("bridge", &err);
			c->dist = &dists[d];
		}
	}
	rc = bridge_open(&o, &br, &err);
	if (rc == 0)
		rc = bridge_start(br, &err);
	if (rc < 0) {
		bridge_close(br);
		return cmd_fail("bridge", &err);
	}
	for (d = 0; d < DIRS; d++)
		fprintf(stderr, "linklab bridge: user engine %s %s: %s%s\n", dir_text[d],
			d == 0 ? b->if_a : b->if_b, impair_summary(&dial[d], sum, sizeof(sum)),
			b->extra[d].loss_model ? " (loss model)" : "");
	fprintf(stderr, "linklab bridge: forwarding %s <-> %s; Ctrl-C stops\n", b->if_a, b->if_b);
	ticker_init(&tk, br, b, dial, "user");
	wait_stop(set, b->seconds, tick_period(b), tick, &tk);
	bridge_status_remove(tk.st.pid);
	bridge_stop(br, b->discard);
	for (d = 0; d < DIRS; d++)
		bridge_get_stats(br, (enum bridge_dir)d, &st[d]);
	bridge_close(br);
	if (b->json) {
		cJSON *doc = cJSON_CreateObject();

		cJSON_AddStringToObject(doc, "engine", "user");
		cJSON_AddStringToObject(doc, "if_a", b->if_a);
		cJSON_AddStringToObject(doc, "if_b", b->if_b);
		for (d = 0; d < DIRS; d++) {
			cJSON *j = json_dir(&st[d]);

			cJSON_AddStringToObject(j, "dial", impair_summary(&dial[d], sum, sizeof(sum)));
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

static int run_kernel(struct bopts *b, const struct impair dial[DIRS], sigset_t *set)
{
	const char *br = b->brname ? b->brname : "llbr0";
	const char *egress[DIRS] = { b->if_b, b->if_a };  /* A->B leaves IF_B */
	struct ll_err err = { 0 };
	struct peer p;
	struct qdisc_state qs[DIRS];
	int d, rc, status = 0;

	memset(qs, 0, sizeof(qs));
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
	if (rc == 0) {
		struct ticker tk;

		fprintf(stderr, "linklab bridge: kernel engine, bridge %s (%s, %s); Ctrl-C stops\n",
			br, b->if_a, b->if_b);
		ticker_init(&tk, NULL, b, dial, "kernel");
		wait_stop(set, b->seconds, tick_period(b), tick, &tk);
		bridge_status_remove(tk.st.pid);
		for (d = 0; d < DIRS; d++)
			p.ops->read_qdiscs(&p, egress[d], &qs[d], NULL);
	} else {
		status = cmd_fail("bridge", &err);
	}
	for (d = 0; d < DIRS; d++) {
		struct ll_err e2 = { 0 };

		if (!impair_is_empty(&dial[d]) && p.ops->clear(&p, egress[d], &e2) < 0)
			status = cmd_fail("bridge", &e2);
	}
	if (bridge_kernel_down(br, &err) < 0)
		status = cmd_fail("bridge", &err);
	p.ops->close(&p);
	if (status == 0 && b->json) {
		cJSON *doc = cJSON_CreateObject();

		cJSON_AddStringToObject(doc, "engine", "kernel");
		cJSON_AddStringToObject(doc, "bridge", br);
		for (d = 0; d < DIRS; d++)
			cJSON_AddItemToObject(doc, dir_name[d], cmd_json_qdiscs(&qs[d]));
		cmd_print_json(doc);
	} else if (status == 0) {
		for (d = 0; d < DIRS; d++)
			cmd_print_qdiscs(stdout, dir_text[d], &qs[d]);
	}
	return status;
}

int cmd_bridge(int argc, char **argv)
{
	struct bopts b;
	struct ll_diag diag;
	struct ll_err err = { 0 };
	struct profile prof;
	struct impair dial[DIRS];
	sigset_t set;
	int d, i, has_netem, rc;
	bool user;

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
			dial[0] = prof.a;
			dial[1] = prof.b;
			overlay(&dial[0], &b.dial[0], &diag);
			overlay(&dial[1], &b.dial[1], &diag);
		}
	}
	if (diag.nerrors == 0)
		for (d = 0; d < DIRS; d++)
			if (!impair_is_empty(&dial[d]))
				impair_validate(&dial[d], &diag);
	if (diag.nerrors) {
		for (i = 0; i < diag.n; i++)
			fprintf(stderr, "linklab bridge: %s%s\n",
				diag.e[i].level == LL_DIAG_WARN ? "warning: " : "", diag.e[i].text);
		bridge_usage(stderr);
		return 2;
	}
	for (i = 0; i < diag.n; i++)
		fprintf(stderr, "linklab bridge: warning: %s\n", diag.e[i].text);

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
			user = has_netem != 1 || b.has_extra[0] || b.has_extra[1];
			fprintf(stderr, "linklab bridge: engine auto -> %s (%s)\n",
				user ? "user" : "kernel",
				has_netem == 1 ? (user ? "netem present, but model-only options given"
						 : "netem present")
				: has_netem == 0 ? "this kernel has no netem" : "netem probe failed");
		}
	}
	if (!user && (b.has_extra[0] || b.has_extra[1])) {
		fprintf(stderr, "linklab bridge: --distribution/--loss-gemodel/--loss-state/"
			"--overhead/--cell/--seed are user-engine options\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);  /* threads inherit the mask */
	rc = user ? run_user(&b, dial, &set) : run_kernel(&b, dial, &set);
	return rc;
}
