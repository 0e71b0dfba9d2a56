/* SPDX-License-Identifier: MIT */
/* rpm.c - responsiveness under working conditions (see rpm.h). */
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "linklab/base/stats.h"
#include "linklab/traffic/rpm.h"
#include "linklab/traffic/rttprobe.h"
#include "linklab/traffic/client.h"
#include "linklab/traffic/testrun.h"

#define RPM_TRIM          0.05   /* the draft's 95 % trimmed mean */
#define RPM_GROWTH        1.05   /* a round must add 5 % goodput */
#define RPM_PROBE_GAP     0.05   /* s between foreign probes */
#define RPM_IDLE_PROBES   20
#define RPM_INTERVAL      0.25   /* s, working-phase interval */
#define RPM_STABLE_WINDOW 4
#define RPM_MIN_SAMPLES   40

struct samples {
	double *v;
	int n, cap;
};

static int samples_add(struct samples *s, double x)
{
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 256;
		double *v = realloc(s->v, (size_t)cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

void rpm_opts_init(struct rpm_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = 5201;
	o->max_streams = 16;
	o->duration = 20;
	o->round = 2;
	o->connect_timeout = 10;
}

int rpm_opts_validate(const struct rpm_opts *o, struct ll_diag *diag)
{
	if (!o->host[0])
		ll_diag_add(diag, LL_DIAG_ERROR, "host",
			    "server address missing (-c ADDR or --peer HOST)");
	if (o->port < 1 || o->port > 65535)
		ll_diag_add(diag, LL_DIAG_ERROR, "port",
			    "-p %d out of range 1..65535", o->port);
	if (o->max_streams < 1 || o->max_streams > CLIENT_MAX_STREAMS)
		ll_diag_add(diag, LL_DIAG_ERROR, "streams",
			    "-P %d out of range 1..%d", o->max_streams,
			    CLIENT_MAX_STREAMS);
	if (!(o->duration >= 6 && o->duration <= 600))
		ll_diag_add(diag, LL_DIAG_ERROR, "time",
			    "-t %g out of range 6..600 s (idle probes, the ramp "
			    "and a working phase need at least 6 s)", o->duration);
	if (!(o->round >= 1 && o->round <= 10))
		ll_diag_add(diag, LL_DIAG_ERROR, "round",
			    "--round %g out of range 1..10 s", o->round);
	return diag->nerrors ? -EINVAL : 0;
}

const char *rpm_confidence_name(enum rpm_confidence c)
{
	return c == RPM_HIGH ? "high" : c == RPM_MEDIUM ? "medium" : "low";
}

static int resolve(const char *host, int port, struct sockaddr_storage *ss,
		   socklen_t *len, struct ll_err *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai = NULL;
	char ps[16];
	int rc;

	snprintf(ps, sizeof(ps), "%d", port);
	rc = getaddrinfo(host, ps, &hints, &ai);
	if (rc || !ai)
		return ll_err_set(err, -EHOSTUNREACH, "%s: %s", host,
				  rc ? gai_strerror(rc) : "no address");
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

/* What one load test gathers. */
struct load {
	struct samples self;      /* tcpi_rtt of sending streams, ms */
	struct samples iv_self;   /* per interval: mean of self samples */
	struct samples iv_bps;    /* per interval: SUM bit/s */
	double goodput_bps;       /* end: receiver SUM */
};

static void load_interval(struct load *l, const struct client_interval *iv)
{
	double sum = 0;
	int n = 0;

	for (int i = 0; i < iv->nstreams; i++) {
		const struct client_stream_sample *s = &iv->s[i];
		if (s->sender && s->rtt_us > 0) {
			samples_add(&l->self, s->rtt_us / 1000.0);
			sum += s->rtt_us / 1000.0;
			n++;
		}
	}
	if (n)
		samples_add(&l->iv_self, sum / n);
	if (!iv->remote)
		samples_add(&l->iv_bps, iv->sum.bps);
}

static void load_free(struct load *l)
{
	free(l->self.v);
	free(l->iv_self.v);
	free(l->iv_bps.v);
	memset(l, 0, sizeof(*l));
}

static void load_on_interval(void *ctx, const struct client_interval *iv)
{
	load_interval(ctx, iv);
}

/* Run one test of `streams` load streams for `seconds`; fills l. */
static int load_run(const struct rpm_opts *o, int streams, double seconds,
		    double interval, struct load *l, const atomic_bool *stop,
		    struct ll_err *err)
{
	struct client_summary *sum = malloc(sizeof(*sum));
	struct client_opts to;
	int rc;

	if (!sum)
		return ll_err_set(err, -ENOMEM, "rpm: out of memory");
	client_opts_init(&to);
	snprintf(to.host, sizeof(to.host), "%s", o->host);
	to.port = o->port;
	to.streams = streams;
	to.duration = seconds;
	to.interval = interval;
	to.reverse = o->reverse;
	to.connect_timeout = o->connect_timeout;
	to.live = o->reverse ? interval : 0;   /* the server's TCP_INFO */
	snprintf(to.congestion, sizeof(to.congestion), "%s", o->congestion);
	rc = testrun_sync(&to, load_on_interval, l, sum, stop, err);
	/* a stock iperf3 -s listens again only after it has reset from the
	 * previous round's test: a refused connect is retried for up to 2 s
	 * (20 x 100 ms, poll as the wait) */
	for (int k = 0; rc == -ECONNREFUSED && k < 20 && !(stop && atomic_load(stop)); k++) {
		poll(NULL, 0, 100);
		rc = testrun_sync(&to, load_on_interval, l, sum, stop, err);
	}
	if (rc == 0)
		l->goodput_bps = sum->sum_received.bps;
	free(sum);
	return rc;
}

/* A round's goodput: the receiver's SUM over the round (the sender's
 * interval figures count bytes written into socket buffers, which grow with
 * the streams even when the path is full). */
static double round_goodput(const struct load *l)
{
	return l->goodput_bps;
}

/* The ramp: 1, 2, 4, ... streams, one round each, while a round adds at
 * least 5 % goodput and half the budget is left. Returns the streams for
 * the working phase; *saturated when growth stopped before the maximum. */
static int ramp(const struct rpm_opts *o, double budget, struct rpm_result *r,
		double *used_s, const atomic_bool *stop, struct ll_err *err)
{
	double prev = 0, used = 0;
	int p = 1;

	r->saturated = false;
	r->ramp_end = RPM_RAMP_TIME;
	*used_s = 0;
	while (used + o->round <= budget / 2 && !(stop && atomic_load(stop))) {
		struct load l = { 0 };
		int rc = load_run(o, p, o->round, o->round / 4, &l, stop, err);
		double g = round_goodput(&l);

		load_free(&l);
		if (rc < 0)
			return rc;
		used += o->round;
		*used_s = used;
		if (prev > 0 && g < prev * RPM_GROWTH) {
			r->saturated = true;
			r->ramp_end = RPM_RAMP_SATURATED;
			return p;
		}
		prev = g;
		if (p >= o->max_streams) {
			r->ramp_end = RPM_RAMP_MAX_STREAMS;
			return p;
		}
		p = p * 2 > o->max_streams ? o->max_streams : p * 2;
	}
	return p;
}

struct prober_job {
	struct rtt_prober *pr;
	int count;
	const atomic_bool *stop;
	double *ms;
	struct rtt_stats st;
	struct ll_err err;
};

static void *prober_main(void *arg)
{
	struct prober_job *j = arg;

	rtt_prober_samples(j->pr, j->count, RPM_PROBE_GAP, 1.0, j->stop,
			   &j->st, j->ms, &j->err);
	return NULL;
}

static void fill_working(struct rpm_result *r, const double *fms, int fn,
			 const struct load *l)
{
	struct samples all = { 0 };

	r->foreign_n = fn;
	r->self_n = l->self.n;
	r->foreign_ms = stats_trimmed_mean(fms, fn, RPM_TRIM);
	r->self_ms = stats_trimmed_mean(l->self.v, l->self.n, RPM_TRIM);
	if (fn && l->self.n)
		r->working_rtt_ms = (r->foreign_ms + r->self_ms) / 2;
	else
		r->working_rtt_ms = fn ? r->foreign_ms : r->self_ms;
	r->rpm = r->working_rtt_ms > 0 ? 60000.0 / r->working_rtt_ms : 0;
	for (int i = 0; i < fn; i++)
		samples_add(&all, fms[i]);
	for (int i = 0; i < l->self.n; i++)
		samples_add(&all, l->self.v[i]);
	r->p50_ms = stats_percentile(all.v, all.n, 50);
	r->p90_ms = stats_percentile(all.v, all.n, 90);
	r->p99_ms = stats_percentile(all.v, all.n, 99);
	r->max_ms = stats_percentile(all.v, all.n, 100);
	free(all.v);
}

/* Stability of the working RTT: per interval, the mean of that interval's
 * self samples and of the foreign probes sent in it, averaged. */
static bool working_stable(const double *fms, int fn, const struct load *l)
{
	int per = (int)lround(RPM_INTERVAL / RPM_PROBE_GAP);
	int niv = l->iv_self.n ? l->iv_self.n : fn / per;
	struct samples ma = { 0 };
	bool ok;

	for (int i = 0; i < niv; i++) {
		double f = 0, m, sd;
		int k = 0;
		if (i * per < fn) {
			k = fn - i * per < per ? fn - i * per : per;
			stats_mean_sd(fms + i * per, k, &f, &sd);
		}
		if (l->iv_self.n && k)
			m = (f + l->iv_self.v[i]) / 2;
		else
			m = l->iv_self.n ? l->iv_self.v[i] : f;
		samples_add(&ma, m);
	}
	ok = stats_stable(ma.v, ma.n, RPM_STABLE_WINDOW, 0.05);
	free(ma.v);
	return ok;
}

static void set_confidence(struct rpm_result *r)
{
	int score = (r->saturated ? 1 : 0) + (r->stable ? 1 : 0) +
		    (r->foreign_n >= RPM_MIN_SAMPLES &&
		     r->self_n >= RPM_MIN_SAMPLES ? 1 : 0);

	r->confidence = score == 3 ? RPM_HIGH : score == 2 ? RPM_MEDIUM : RPM_LOW;
}

/* The working phase: `streams` load streams for `seconds` with foreign
 * probes on a thread beside them. */
static int working(const struct rpm_opts *o, struct rtt_prober *pr,
		   int streams, double seconds, struct rpm_result *r,
		   const atomic_bool *stop, struct ll_err *err)
{
	struct prober_job j = { .pr = pr, .stop = NULL };
	atomic_bool done = false;
	struct load l = { 0 };
	pthread_t th;
	int rc, have_th = 0;

	j.count = (int)(seconds / RPM_PROBE_GAP);
	j.ms = calloc((size_t)j.count + 1, sizeof(*j.ms));
	j.stop = &done;
	if (!j.ms)
		return ll_err_set(err, -ENOMEM, "rpm: out of memory");
	if (pr && r->idle_n && !pthread_create(&th, NULL, prober_main, &j))
		have_th = 1;
	rc = load_run(o, streams, seconds, RPM_INTERVAL, &l, stop, err);
	atomic_store(&done, true);
	if (have_th)
		pthread_join(th, NULL);
	if (rc == 0) {
		int fn = have_th ? j.st.received : 0;
		r->streams = streams;
		r->goodput_bps = l.goodput_bps;
		fill_working(r, j.ms, fn, &l);
		r->stable = working_stable(j.ms, fn, &l);
		if (!fn && !l.self.n)
			rc = ll_err_set(err, -ENOTSUP, "rpm: no working latency "
					"sample: %s", r->note[0] ? r->note :
					"neither probe kind answered");
	}
	free(j.ms);
	load_free(&l);
	return rc;
}

int rpm_run(const struct rpm_opts *o, struct rpm_result *r,
	    const atomic_bool *stop, struct ll_err *err)
{
	struct sockaddr_storage ss;
	struct rtt_prober *pr = NULL;
	struct rtt_stats st;
	double idle[RPM_IDLE_PROBES];
	socklen_t len = 0;
	double used = 0, left;
	int rc, streams;

	memset(r, 0, sizeof(*r));
	r->reverse = o->reverse;
	rc = resolve(o->host, o->port, &ss, &len, err);
	if (rc < 0)
		return rc;
	if (rtt_prober_open(&pr, (struct sockaddr *)&ss, len, err) == 0 &&
	    rtt_prober_samples(pr, RPM_IDLE_PROBES, 0.02, 1.0, stop, &st, idle,
			       err) == 0) {
		r->idle_n = st.received;
		r->idle_rtt_ms = stats_trimmed_mean(idle, st.received, RPM_TRIM);
	}
	if (!r->idle_n)
		snprintf(r->note, sizeof(r->note), "no RTT echo on %s port %d "
			 "(a stock iperf3 server): idle RTT and foreign probes "
			 "not measured; run linklab serve there", o->host, o->port);
	ll_err_clear(err);
	streams = ramp(o, o->duration - 1, r, &used, stop, err);
	if (streams < 0) {
		rtt_prober_close(pr);
		return streams;
	}
	left = o->duration - 1 - used;
	rc = working(o, pr, streams, left > 3 ? left : 3, r, stop, err);
	rtt_prober_close(pr);
	if (rc < 0)
		return rc;
	if (o->reverse && !r->self_n && !r->note[0])
		snprintf(r->note, sizeof(r->note), "the server sent no live "
			 "TCP_INFO (not linklab serve): self probes not measured");
	set_confidence(r);
	return 0;
}
