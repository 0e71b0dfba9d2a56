/* SPDX-License-Identifier: MIT */
/* cmd_verify.c - `linklab verify (--peer HOST | -c ADDR [-p PORT]) [--dev IF]
 * [--peer-dev IF] [--middle HOST] [-t SEC] [--base-rtt MS] [-J]`: read back
 * what the kernels hold on both peers (and what the bridge of a middle box
 * holds, `linklab bridge --status -J` over SSH), measure the path (RTT
 * probes, UDP above the rate, UDP at wide spacing) and print one row per
 * quantity: dialled, measured, error, tolerance, ok (model/verify.h). Exit 0
 * when every row is ok, 1 when one is not (named), 2 on bad input or a
 * middle box whose dials cannot be read. */
#include <errno.h>
#include <time.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <sys/socket.h>

#include <cjson/cJSON.h>

#include "linklab/peer/hostinfo.h"
#include "linklab/base/stats.h"
#include "linklab/base/text.h"
#include "linklab/base/units.h"
#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/console/middle.h"
#include "linklab/model/verify.h"
#include "linklab/peer/enghook.h"
#include "linklab/peer/peerset.h"
#include "linklab/traffic/rttprobe.h"
#include "linklab/traffic/testrun.h"

#define VERIFY_PROBES 50

struct verify_cli {
	struct peerset_opts po;
	char host[256];
	int port, json, nbad;
	double seconds, base_rtt_ms;
	const char *middle;          /* --middle HOST, NULL = none */
	bool has_mid;                /* mid was read */
	struct middle_state mid;     /* the bridge's dials, read before measuring */
};

/* What one direction of the path holds, in dial terms: the sender's egress
 * (and the bridge's direction after it, with --middle). */
struct side_dial {
	bool known;
	struct impair d;
	uint32_t burst;       /* the binding bucket, bytes */
	bool engine;          /* the dial is held by linklab's endpoint engine */
	unsigned both;        /* VERIFY_BOTH_*: fields held by the peer and
			       * by the bridge both (not compared) */
	char via[160];        /* "; + bridge A->B delay 10ms" ("" = none) */
};

static int parse(struct verify_cli *c, int argc, char **argv)
{
	struct ll_err err = { 0 };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc = peerset_parse_opt(&c->po, argc, argv, &i, &err);
		if (rc < 0) {
			fprintf(stderr, "linklab verify: %s\n", err.msg);
			c->nbad++;
		} else if (rc > 0) {
			continue;
		} else if (!strcmp(a, "-c") && i + 1 < argc) {
			snprintf(c->host, sizeof(c->host), "%s", argv[++i]);
		} else if (!strcmp(a, "--middle") && i + 1 < argc) {
			c->middle = argv[++i];
		} else if ((!strcmp(a, "-p") || !strcmp(a, "-t") ||
			    !strcmp(a, "--base-rtt")) && i + 1 < argc) {
			double v = 0;
			int okv = units_parse_number(argv[++i], &v) == 0;
			if (!strcmp(a, "-p") && okv && v >= 1 && v <= 65535)
				c->port = (int)v;
			else if (!strcmp(a, "-t") && okv && v >= 2 && v <= 300)
				c->seconds = v;
			else if (!strcmp(a, "--base-rtt") && okv && v >= 0 && v <= 10000)
				c->base_rtt_ms = v;
			else {
				fprintf(stderr, "linklab verify: %s '%s': %s (%s)\n", a,
					argv[i], okv ? "out of range" : "not a number",
					!strcmp(a, "-p") ? "1..65535" :
					!strcmp(a, "-t") ? "2..300 s" : "0..10000 ms");
				c->nbad++;
			}
		} else if (!strcmp(a, "-J") || !strcmp(a, "--json")) {
			c->json = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_print_usage("verify", stdout);
			return 1;
		} else {
			fprintf(stderr, "linklab verify: unknown option or missing "
				"value '%s'\n", a);
			c->nbad++;
		}
	}
	if (c->po.peer && c->host[0]) {
		fprintf(stderr, "linklab verify: -c cannot be combined with --peer\n");
		c->nbad++;
	}
	if (!c->po.peer && !c->host[0]) {
		fprintf(stderr, "linklab verify: give --peer HOST or -c ADDR\n");
		c->nbad++;
	}
	return 0;
}

static int read_side(struct peer *p, const char *dev, struct side_dial *s,
		     struct ll_err *err)
{
	struct qdisc_state *qs = calloc(1, sizeof(*qs));
	int rc;

	if (!qs)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = p->ops->read_qdiscs(p, dev, qs, err);
	if (rc == 0) {
		struct enghook_info h;

		qdisc_state_to_impair(qs, &s->d);
		for (int i = 0; i < qs->n; i++)
			if (!strcmp(qs->q[i].kind, "tbf") || !strcmp(qs->q[i].kind, "htb"))
				s->burst = qs->q[i].burst;
		/* linklab's endpoint engine holds the netem fields (and the
		 * rate, in its token bucket) where the kernel has no netem */
		if (p->ops->engine && p->ops->engine->engine_get(p, dev, &h, NULL) == 0 &&
		    h.alive) {
			enghook_dial(&h, &s->d);
			s->engine = true;
		}
		s->known = true;
	}
	free(qs);
	return rc;
}

/* The bridge's dials on the middle host (`linklab bridge --status -J` over
 * SSH: no lease, nothing changed), read before anything is measured. 0, or
 * -1 with the reason in err (exit 2: nothing measured). */
static int read_middle(struct verify_cli *c, struct ll_err *err)
{
	struct ssh_target t;
	struct middle *m = NULL;
	int rc = sshcfg_resolve(c->middle, &c->po.ssh, &t, err);

	if (rc == 0)
		rc = middle_open(&m, &t, 10000, err);
	if (rc == 0)
		rc = middle_status(m, &c->mid, err);
	middle_close(m);
	if (rc < 0) {
		ll_err_prefix(err, "--middle %s: ", c->middle);
		return -1;
	}
	for (int k = 0; k < 2; k++)
		if (c->mid.dir[k].unparsed[0]) {
			char safe[4 * sizeof(c->mid.dir[k].unparsed)];

			ll_err_set(err, -EPROTO, "--middle %s: the bridge's %s dial holds "
				   "fields verify cannot read (%.300s)", c->middle,
				   k == MIDDLE_AB ? "A->B" : "B->A",
				   text_sanitize(c->mid.dir[k].unparsed, safe, sizeof(safe)));
			return -1;
		}
	c->has_mid = true;
	return 0;
}

/* Add the bridge's direction k (MIDDLE_AB after A's egress, MIDDLE_BA
 * after B's) to what the path holds. */
static void add_middle(const struct verify_cli *c, int k, struct side_dial *s)
{
	struct impair hop = c->mid.dir[k].fields;
	uint32_t burst = (uint32_t)hop.burst;
	char sum[128];

	if (hop.rate && !burst) {
		/* the engine's own default bucket (emu_config_build) */
		struct impair_plan p;
		struct ll_diag dg;

		ll_diag_clear(&dg);
		if (impair_plan(&hop, 1500, hostinfo_kernel_hz(), &p, &dg) == 0)
			burst = p.burst;
	}
	verify_path_add(&s->d, &s->burst, &hop, burst, &s->both);
	s->known = true;
	snprintf(s->via, sizeof(s->via), "; + bridge %s %s", k == MIDDLE_AB ?
		 "A->B" : "B->A", impair_summary(&hop, sum, sizeof(sum)));
}

/* Append text to a row's detail (cut at its size). */
static void detail_add(struct verify_row *r, const char *text)
{
	size_t n = strlen(r->detail);

	snprintf(r->detail + n, sizeof(r->detail) - n, "%s", text);
}

/* A row of a field the peer and the bridge both hold: not compared. */
static void both_row(struct verify_report *rep, const char *q, const char *dir,
		     const char *unit, double dialled)
{
	struct verify_row *r = verify_add(rep, q, dir, unit);

	if (r)
		verify_unmeasurable(r, dialled, "dialled on the peer and on the bridge "
				    "both: no expected value for the two in series");
}

/* RTT probes: median and sd of VERIFY_PROBES answers (0 answers: no echo). */
static int probe_rtt(const char *host, int port, double *median, double *sd,
		     int *n, struct ll_err *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai = NULL;
	double ms[VERIFY_PROBES], mean;
	struct rtt_prober *pr = NULL;
	struct rtt_stats st;
	char ps[16];

	*n = 0;
	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(host, ps, &hints, &ai) || !ai)
		return ll_err_set(err, -EHOSTUNREACH, "%s: cannot resolve", host);
	int rc = rtt_prober_open(&pr, ai->ai_addr, ai->ai_addrlen, err);
	freeaddrinfo(ai);
	if (rc < 0)
		return rc;
	rc = rtt_prober_samples(pr, VERIFY_PROBES, 0.02, 1.0, NULL, &st, ms, err);
	rtt_prober_close(pr);
	if (rc < 0)
		return rc;
	*n = st.received;
	*median = stats_percentile(ms, st.received, 50);
	stats_mean_sd(ms, st.received, &mean, sd);
	return 0;
}

#define VERIFY_OMIT_S 1.0     /* each UDP run's first second, left out */

static int run(const struct verify_cli *c, bool reverse, bool udp,
	       uint64_t bitrate, int streams, struct client_summary *sum,
	       struct ll_err *err)
{
	struct client_opts o;

	client_opts_init(&o);
	snprintf(o.host, sizeof(o.host), "%s", c->host);
	o.port = c->port;
	o.duration = c->seconds;
	o.reverse = reverse;
	o.udp = udp;
	o.bitrate = bitrate;
	o.streams = streams;
	if (udp) {
		o.blksize = 1448;
		/* the first second is left out (iperf3's -O): with -R the
		 * server sends from its TEST_RUNNING on, which the dial under
		 * test may delay by a TCP retransmission (200 ms and more)
		 * while the client, not reading yet, drops what overflows its
		 * socket buffer; counted, that would be the dial's loss */
		o.omit = VERIFY_OMIT_S;
	}
	return testrun_sync(&o, NULL, NULL, sum, NULL, err);
}

/* Wait s seconds (the path's queues drain between two runs). */
static void verify_settle(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double frac(uint32_t p)
{
	return (double)p / 4294967295.0;
}

/* One direction's rows: rate (TCP), then loss/duplicate/reorder/jitter
 * (UDP at a spacing wider than 4 x the jitter). */
static int measure_dir(const struct verify_cli *c, const struct side_dial *s,
		       bool reverse, struct verify_report *rep,
		       struct client_summary *sum, struct ll_err *err)
{
	const char *dir = reverse ? "b-to-a" : "a-to-b";
	const struct impair *d = &s->d;
	double jit_ms = d->jitter / 1e6;
	uint64_t b = 20000000;
	struct verify_row *r;
	int rc, n0 = rep->n;

	if (d->rate) {
		/* UDP a fifth above the rate: the bucket, not TCP's dynamics,
		 * sets what arrives (works under delay and loss too) */
		if ((rc = run(c, reverse, true, d->rate + d->rate / 5, 1, sum, err)) < 0)
			return rc;
		if ((r = verify_add(rep, "rate", dir, "bit/s")))
			verify_rate_udp(r, d->rate, s->burst, c->seconds, frac(d->loss),
					sum->sum_received.bps);
		if (d->rate / 2 < b)
			b = d->rate / 2;
		/* the rate run left the bucket's queue full (a fifth over the
		 * rate for the whole run): the loss run must not start into it,
		 * or its first datagrams are dropped there and counted as the
		 * dial's loss. Wait for the backlog (at most a fifth of the run
		 * at the rate) and the delay to pass. */
		verify_settle((double)c->seconds / 5 + 2 * (d->delay + 4 * d->jitter) / 1e9 + 0.1);
	}
	if (jit_ms > 0 && 1448.0 * 8 / (4 * jit_ms / 1000) < (double)b)
		b = (uint64_t)(1448.0 * 8 / (4 * jit_ms / 1000));
	if ((rc = run(c, reverse, true, b, 1, sum, err)) < 0)
		return rc;
	const struct client_stream_sample *rx = &sum->sum_received;
	uint64_t n = rx->packets > 0 ? (uint64_t)rx->packets : 0;
	double lossd = 1 - (1 - frac(d->loss)) * (1 - frac(d->corrupt));
	if ((r = verify_add(rep, "loss", dir, "fraction")))
		verify_fraction(r, lossd, rx->lost > 0 ? (uint64_t)rx->lost : 0, n);
	if (d->duplicate && (s->both & VERIFY_BOTH_DUPLICATE))
		both_row(rep, "duplicate", dir, "fraction", frac(d->duplicate));
	else if (d->duplicate && (r = verify_add(rep, "duplicate", dir, "fraction"))) {
		if (rx->dups >= 0)
			verify_fraction(r, frac(d->duplicate), (uint64_t)rx->dups, n);
		else
			verify_unmeasurable(r, frac(d->duplicate), "the receiver "
					    "did not report duplicates");
	}
	if (d->reorder && (s->both & VERIFY_BOTH_REORDER))
		both_row(rep, "reorder", dir, "fraction", frac(d->reorder));
	else if (d->reorder && (r = verify_add(rep, "reorder", dir, "fraction"))) {
		if (rx->outoforder >= 0)
			verify_fraction(r, frac(d->reorder), (uint64_t)rx->outoforder, n);
		else
			verify_unmeasurable(r, frac(d->reorder), "the receiver did "
					    "not report out-of-order datagrams");
	}
	if (jit_ms > 0 && (s->both & VERIFY_BOTH_JITTER))
		both_row(rep, "jitter", dir, "ms", jit_ms);
	else if (jit_ms > 0 && (r = verify_add(rep, "jitter", dir, "ms")))
		verify_jitter(r, jit_ms, rx->jitter_ms);
	if (d->corrupt && (r = verify_add(rep, "corrupt", dir, "fraction")))
		verify_unmeasurable(r, frac(d->corrupt), "a corrupted datagram "
				    "fails its checksum and counts in the loss row");
	for (int i = n0; i < rep->n && s->via[0]; i++)
		detail_add(&rep->r[i], s->via);
	return 0;
}

/* The bridge's dials as verify added them (sanitized: remote text). */
static void print_middle(const struct verify_cli *c)
{
	char eng[64], ia[80], ib[80], ab[128], ba[128];

	printf("middle %s: bridge %s engine, %s <-> %s; A->B %s, B->A %s "
	       "(added to the path)\n", c->middle,
	       text_sanitize(c->mid.engine, eng, sizeof(eng)),
	       text_sanitize(c->mid.if_a, ia, sizeof(ia)),
	       text_sanitize(c->mid.if_b, ib, sizeof(ib)),
	       impair_summary(&c->mid.dir[MIDDLE_AB].fields, ab, sizeof(ab)),
	       impair_summary(&c->mid.dir[MIDDLE_BA].fields, ba, sizeof(ba)));
}

static void print_text(const struct verify_cli *c, const struct verify_report *rep)
{
	if (c->has_mid)
		print_middle(c);
	printf("%-9s %-7s %14s %14s %12s %21s  %s\n", "quantity", "dir",
	       "dialled", "measured", "error", "tolerance", "ok");
	for (int i = 0; i < rep->n; i++) {
		const struct verify_row *r = &rep->r[i];
		double k = !strcmp(r->unit, "bit/s") ? 1e6 : 1;
		const char *u = !strcmp(r->unit, "bit/s") ? "Mbit/s" : r->unit;
		if (!r->measurable) {
			printf("%-9s %-7s %14.4g %14s %12s %21s  %s\n", r->quantity,
			       r->direction, r->dialled / k, "-", "-", "-", "SKIP");
		} else {
			char tol[48];
			snprintf(tol, sizeof(tol), "%+.4g..%+.4g", r->tol_lo / k,
				 r->tol_hi / k);
			printf("%-9s %-7s %14.4g %14.4g %+12.4g %21s  %s\n",
			       r->quantity, r->direction, r->dialled / k,
			       r->measured / k, r->error / k, tol,
			       r->ok ? "ok" : "NOT OK");
		}
		printf("          (%s; %s)\n", u, r->detail);
	}
}

static void print_json(const struct verify_cli *c, const struct verify_report *rep,
		       const char *error)
{
	cJSON *doc = cJSON_CreateObject(), *a;

	cJSON_AddBoolToObject(doc, "ok", !error && verify_all_ok(rep));
	if (c->has_mid) {
		cJSON *m = cJSON_AddObjectToObject(doc, "middle");
		char ab[128], ba[128];

		cJSON_AddStringToObject(m, "host", c->middle);
		cJSON_AddStringToObject(m, "engine", c->mid.engine);
		cJSON_AddStringToObject(m, "a_to_b", impair_summary(
			&c->mid.dir[MIDDLE_AB].fields, ab, sizeof(ab)));
		cJSON_AddStringToObject(m, "b_to_a", impair_summary(
			&c->mid.dir[MIDDLE_BA].fields, ba, sizeof(ba)));
	}
	a = cJSON_AddArrayToObject(doc, "checks");
	for (int i = 0; i < rep->n; i++) {
		const struct verify_row *r = &rep->r[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "quantity", r->quantity);
		cJSON_AddStringToObject(o, "direction", r->direction);
		cJSON_AddNumberToObject(o, "dialled", r->dialled);
		if (r->measurable) {
			cJSON_AddNumberToObject(o, "measured", r->measured);
			cJSON_AddNumberToObject(o, "error", r->error);
			cJSON *t = cJSON_AddArrayToObject(o, "tolerance");
			cJSON_AddItemToArray(t, cJSON_CreateNumber(r->tol_lo));
			cJSON_AddItemToArray(t, cJSON_CreateNumber(r->tol_hi));
		} else {
			cJSON_AddNullToObject(o, "measured");
		}
		cJSON_AddStringToObject(o, "unit", r->unit);
		cJSON_AddBoolToObject(o, "measurable", r->measurable);
		cJSON_AddBoolToObject(o, "ok", r->ok);
		cJSON_AddStringToObject(o, "detail", r->detail);
		cJSON_AddItemToArray(a, o);
	}
	if (error)
		cJSON_AddStringToObject(doc, "error", error);
	cmd_print_json(doc);
}

/* The rtt row: the dialled delays of both sides + the base RTT. */
static int rtt_row(const struct verify_cli *c, const struct side_dial *sa,
		   const struct side_dial *sb, struct verify_report *rep,
		   struct ll_err *err)
{
	double med = 0, sd = 0, dialled = c->base_rtt_ms;
	struct verify_row *r = verify_add(rep, "rtt", "both", "ms");
	int n, rc = probe_rtt(c->host, c->port, &med, &sd, &n, err);

	if (rc < 0 || !r)
		return rc;
	dialled += sa->d.delay / 1e6 + (sb->known ? sb->d.delay / 1e6 : 0);
	if (!n) {
		verify_unmeasurable(r, dialled, "no RTT echo on the server (stock "
				    "iperf3?): run linklab serve there");
		return 0;
	}
	verify_rtt(r, dialled, med, sd, n);
	if (!c->base_rtt_ms)
		detail_add(r, "; base RTT taken as 0 (give --base-rtt MS)");
	if (c->has_mid)
		detail_add(r, "; + the bridge's delays");
	return 0;
}

/* "linklab verify: measuring WHAT ..." on a terminal's stderr (the whole
 * table comes only at the end, after a minute or more), never with -J. */
static void progress(const struct verify_cli *c, const char *what)
{
	if (!c->json && isatty(STDERR_FILENO))
		fprintf(stderr, "linklab verify: measuring %s ...\n", what);
}

/* Does addr (numeric) fall in d's dst prefix? */
static bool in_dst(const struct impair *d, const char *addr)
{
	uint8_t a[16];
	unsigned i, plen = d->dst_plen;
	const uint8_t *want = d->dst_family == AF_INET6 ? d->dst6 : d->dst_addr;
	int fam = d->dst_family == AF_INET6 ? AF_INET6 : AF_INET;

	if (inet_pton(fam, addr, a) != 1)
		return false;
	for (i = 0; i < plen; i++)
		if (((a[i / 8] ^ want[i / 8]) >> (7 - i % 8)) & 1)
			return false;
	return true;
}

/* A dial scoped to a destination or port (apply --dst/--dport) shapes only
 * the flows it matches: verify's flows must be among them, or the numbers
 * would be of an unimpaired path. A->B flows go to host:port; B->A flows to
 * this host's address on an ephemeral port (never a dport scope). 0, or -1
 * with the reason in err. */
static int scope_check(const struct verify_cli *c, const struct side_dial *s, int side,
		       const char *to, struct ll_err *err)
{
	const struct impair *d = &s->d;
	const char *who = side ? "B" : "A", *dir = side ? "B->A" : "A->B";

	if (!s->known || !(d->set & (IMP_DPORT | IMP_DST)))
		return 0;
	if ((d->set & IMP_DPORT) && side == 1)
		return ll_err_set(err, -ENOTSUP, "B's dial is scoped to dport %u: verify's "
				  "B->A flows go to ephemeral ports of this host, outside it, "
				  "and would measure an unimpaired path; nothing measured "
				  "(verify a dport-scoped dial on A only, with -p %u)",
				  d->dport, d->dport);
	if ((d->set & IMP_DPORT) && d->dport != c->port)
		return ll_err_set(err, -ENOTSUP, "A's dial is scoped to dport %u: verify's "
				  "A->B flows go to port %d, outside it, and would measure an "
				  "unimpaired path; nothing measured (give -p %u, a linklab serve "
				  "on that port)", d->dport, c->port, d->dport);
	if ((d->set & IMP_DST) && d->dst_plen && to && to[0] && !in_dst(d, to))
		return ll_err_set(err, -ENOTSUP, "%s's dial is scoped to a destination that "
				  "does not hold %s (verify's %s flows): nothing measured",
				  who, to, dir);
	return 0;
}

static int verify_measure(struct verify_cli *c, struct peerset *ps,
			  struct verify_report *rep, struct ll_err *err)
{
	struct side_dial sa = { 0 }, sb = { 0 };
	struct client_summary *sum = malloc(sizeof(*sum));
	int rc;

	if (!sum)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = read_side(&ps->a, ps->dev_a, &sa, err);
	if (!rc && ps->has_b)
		rc = read_side(&ps->b, ps->dev_b, &sb, err);
	if (!rc)
		rc = scope_check(c, &sa, 0, c->host, err);
	if (!rc && ps->has_b)
		rc = scope_check(c, &sb, 1, ps->addr_a, err);
	if (!rc && c->has_mid) {
		add_middle(c, MIDDLE_AB, &sa);
		add_middle(c, MIDDLE_BA, &sb);
	}
	if (!rc) {
		progress(c, "the RTT");
		rc = rtt_row(c, &sa, &sb, rep, err);
	}
	if (!rc) {
		progress(c, "A->B (rate, loss, jitter as dialled)");
		rc = measure_dir(c, &sa, false, rep, sum, err);
	}
	if (!rc && ps->has_b) {
		progress(c, "B->A (rate, loss, jitter as dialled)");
		rc = measure_dir(c, &sb, true, rep, sum, err);
	}
	free(sum);
	return rc;
}

/* host as a numeric address (the first getaddrinfo gives); -1 when it
 * does not resolve. */
static int numeric_host(char *host, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai = NULL;
	char num[NI_MAXHOST];
	int ok;

	if (getaddrinfo(host, NULL, &hints, &ai) || !ai)
		return -1;
	ok = getnameinfo(ai->ai_addr, ai->ai_addrlen, num, sizeof(num), NULL, 0,
			 NI_NUMERICHOST) == 0;
	freeaddrinfo(ai);
	if (ok)
		snprintf(host, len, "%.*s", (int)(len - 1), num);
	return ok ? 0 : -1;
}

/* --dev IF: the test traffic must leave through IF, or the rows would
 * measure another interface's dial. */
static int path_dev_check(struct peerset *ps, const char *addr)
{
	char via[IF_NAMESIZE] = "";
	struct ll_err e = { 0 };

	if (ps->a.ops->route_dev(&ps->a, addr, via, sizeof(via), &e) < 0 ||
	    !strcmp(via, ps->dev_a))
		return 0;
	fprintf(stderr, "linklab verify: the test traffic to %s leaves through %s, "
		"not --dev %s: it would measure %s's dial (give --peer-data ADDR, an "
		"address of the peer reached through %s)\n", addr, via, ps->dev_a,
		via, ps->dev_a);
	return -1;
}

int cmd_verify(int argc, char **argv)
{
	struct verify_cli c = { .port = 5201, .seconds = 10 };
	struct verify_report rep = { 0 };
	struct ll_err err = { 0 };
	struct peerset ps;
	int rc, port = 0, open_ = 0;

	if (parse(&c, argc, argv))
		return 0;
	if (c.nbad)
		return 2;
	if (c.middle && read_middle(&c, &err) < 0) {
		if (c.json)
			print_json(&c, &rep, err.msg);
		fprintf(stderr, "linklab verify: %s; nothing measured\n", err.msg);
		return 2;
	}
	if (!c.po.peer && numeric_host(c.host, sizeof(c.host)) < 0) {
		fprintf(stderr, "linklab verify: -c '%s': not an address or a name "
			"that resolves\n", c.host);
		return 2;
	}
	if (peerset_open(&ps, &c.po, &err) < 0)
		goto fail;
	open_ = 1;
	if (!c.po.peer && !c.po.dev &&
	    ps.a.ops->route_dev(&ps.a, c.host, ps.dev_a, sizeof(ps.dev_a), &err) < 0)
		goto fail;
	if (c.po.dev && path_dev_check(&ps, c.po.peer ? ps.addr_b : c.host) < 0) {
		peerset_close(&ps);
		return 2;
	}
	if (c.po.peer) {
		ps.b.server_many = true;     /* one server for every measurement */
		if (ps.b.ops->server_start(&ps.b, &port, &err) < 0) {
			ll_err_prefix(&err, "%s: starting the test server: ", ps.b.label);
			goto fail;
		}
		snprintf(c.host, sizeof(c.host), "%s", ps.addr_b);
		c.port = port;
	}
	rc = verify_measure(&c, &ps, &rep, &err);
	if (port) {
		struct ll_err e2 = { 0 };
		if (ps.b.ops->server_stop(&ps.b, &e2) < 0)
			fprintf(stderr, "linklab verify: stopping the test server: %s\n",
				e2.msg);
	}
	peerset_close(&ps);
	open_ = 0;
	if (rc < 0)
		goto fail;
	if (c.json)
		print_json(&c, &rep, NULL);
	else
		print_text(&c, &rep);
	for (int i = 0; i < rep.n; i++) {
		const struct verify_row *r = &rep.r[i];
		bool rate = !strcmp(r->unit, "bit/s");
		double k = rate ? 1e6 : 1;

		if (r->ok)
			continue;
		if (!r->measurable)
			fprintf(stderr, "linklab verify: %s %s: %s\n", r->quantity,
				r->direction, r->detail);
		else
			fprintf(stderr, "linklab verify: %s %s: measured %.4g, dialled "
				"%.4g %s: outside the tolerance\n", r->quantity,
				r->direction, r->measured / k, r->dialled / k,
				rate ? "Mbit/s" : r->unit);
	}
	return verify_all_ok(&rep) ? 0 : 1;
fail:
	if (open_)
		peerset_close(&ps);
	/* a row left unmeasured before the failure is unmeasured because of
	 * it (no echo from a server that is not there): said so, not guessed */
	for (int i = 0; i < rep.n; i++)
		if (!rep.r[i].measurable)
			snprintf(rep.r[i].detail, sizeof(rep.r[i].detail),
				 "not measured: %.180s", err.msg);
	if (c.json)
		print_json(&c, &rep, err.msg);
	fprintf(stderr, "linklab verify: %s\n", err.msg);
	return 1;
}
