/* SPDX-License-Identifier: MIT */
/* rttprobe.c - UDP echo and prober for RTT beside a test
 * (include/linklab/traffic/rttprobe.h). */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#include "linklab/traffic/rttprobe.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void put64(unsigned char *b, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		b[i] = (unsigned char)v;
}

static uint64_t get64(const unsigned char *b)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

/* ---- echo ---------------------------------------------------------------- */

struct rtt_echo {
	struct sockaddr_storage addr;
	socklen_t len;
	pthread_t th;
	pthread_mutex_t mu;
	int fd;
	atomic_bool quit;
	int wake[2];
};

static int echo_bind(struct rtt_echo *e, struct ll_err *err)
{
	int one = 1, zero = 0;
	int fd = socket(e->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return ll_err_set(err, -errno, "RTT echo: socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (e->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&e->addr, e->len) < 0) {
		int r = -errno;
		close(fd);
		return ll_err_set(err, r, "RTT echo: bind: %s", strerror(-r));
	}
	return fd;
}

static void *echo_main(void *arg)
{
	struct rtt_echo *e = arg;
	sigset_t all;
	unsigned char b[512];

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (!atomic_load(&e->quit)) {
		pthread_mutex_lock(&e->mu);
		int fd = e->fd;
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = e->wake[0], .events = POLLIN } };
		pthread_mutex_unlock(&e->mu);
		if (fd < 0)
			p[0].fd = -1;
		int r = poll(p, 2, 200);
		if (r <= 0)
			continue;
		if (p[1].revents) {
			char c[16];
			if (read(e->wake[0], c, sizeof(c)) < 0) {
				/* drained */
			}
		}
		pthread_mutex_lock(&e->mu);
		if (p[0].revents && e->fd == fd && fd >= 0) {
			struct sockaddr_storage from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(fd, b, sizeof(b), MSG_DONTWAIT,
					     (struct sockaddr *)&from, &fl);
			if (n == RTTPROBE_LEN && !memcmp(b, RTTPROBE_MAGIC, 4))
				sendto(fd, b, (size_t)n, MSG_DONTWAIT,
				       (struct sockaddr *)&from, fl);
		}
		pthread_mutex_unlock(&e->mu);
	}
	return NULL;
}

int rtt_echo_start(struct rtt_echo **out, const struct sockaddr *addr,
		   socklen_t len, struct ll_err *err)
{
	struct rtt_echo *e = calloc(1, sizeof(*e));
	int r;

	*out = NULL;
	if (!e)
		return ll_err_set(err, -ENOMEM, "RTT echo: out of memory");
	if (len > sizeof(e->addr)) {
		free(e);
		return ll_err_set(err, -EINVAL, "RTT echo: address too long");
	}
	memcpy(&e->addr, addr, len);
	e->len = len;
	pthread_mutex_init(&e->mu, NULL);
	if (pipe(e->wake) < 0) {
		r = ll_err_set(err, -errno, "RTT echo: pipe: %s", strerror(errno));
		pthread_mutex_destroy(&e->mu);
		free(e);
		return r;
	}
	e->fd = echo_bind(e, err);
	if (e->fd < 0) {
		r = e->fd;
		close(e->wake[0]);
		close(e->wake[1]);
		pthread_mutex_destroy(&e->mu);
		free(e);
		return r;
	}
	r = pthread_create(&e->th, NULL, echo_main, e);
	if (r) {
		close(e->fd);
		close(e->wake[0]);
		close(e->wake[1]);
		pthread_mutex_destroy(&e->mu);
		free(e);
		return ll_err_set(err, -r, "RTT echo: pthread_create: %s", strerror(r));
	}
	*out = e;
	return 0;
}

void rtt_echo_pause(struct rtt_echo *e, bool paused)
{
	if (!e)
		return;
	if (write(e->wake[1], "p", 1) < 0) {
		/* the thread wakes within 200 ms anyway */
	}
	pthread_mutex_lock(&e->mu);
	if (paused && e->fd >= 0) {
		close(e->fd);
		e->fd = -1;
	} else if (!paused && e->fd < 0) {
		e->fd = echo_bind(e, NULL);
	}
	pthread_mutex_unlock(&e->mu);
}

void rtt_echo_stop(struct rtt_echo *e)
{
	if (!e)
		return;
	atomic_store(&e->quit, true);
	if (write(e->wake[1], "q", 1) < 0) {
		/* it polls with a timeout */
	}
	pthread_join(e->th, NULL);
	if (e->fd >= 0)
		close(e->fd);
	close(e->wake[0]);
	close(e->wake[1]);
	pthread_mutex_destroy(&e->mu);
	free(e);
}

/* ---- prober -------------------------------------------------------------- */

struct rtt_prober {
	int fd;
	uint64_t seq;
};

int rtt_prober_open(struct rtt_prober **out, const struct sockaddr *addr,
		    socklen_t len, struct ll_err *err)
{
	struct rtt_prober *p = calloc(1, sizeof(*p));
	int r;

	*out = NULL;
	if (!p)
		return ll_err_set(err, -ENOMEM, "RTT probe: out of memory");
	p->fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0 || connect(p->fd, addr, len) < 0) {
		r = -errno;
		if (p->fd >= 0)
			close(p->fd);
		free(p);
		return ll_err_set(err, r, "RTT probe: %s", strerror(-r));
	}
	*out = p;
	return 0;
}

void rtt_prober_close(struct rtt_prober *p)
{
	if (!p)
		return;
	close(p->fd);
	free(p);
}

int rtt_prober_run(struct rtt_prober *p, int count, double interval_s,
		   double timeout_s, const atomic_bool *stop,
		   struct rtt_stats *st, struct ll_err *err)
{
	return rtt_prober_samples(p, count, interval_s, timeout_s, stop, st,
				  NULL, err);
}

int rtt_prober_samples(struct rtt_prober *p, int count, double interval_s,
		       double timeout_s, const atomic_bool *stop,
		       struct rtt_stats *st, double *out_ms, struct ll_err *err)
{
	double *ms = out_ms ? out_ms :
		calloc((size_t)(count > 0 ? count : 1), sizeof(*ms));
	uint64_t first = p->seq + 1;
	unsigned char b[RTTPROBE_LEN];
	int nrx = 0, sent = 0;
	uint64_t next = mono_ns(), end = 0;

	memset(st, 0, sizeof(*st));
	if (!ms)
		return ll_err_set(err, -ENOMEM, "RTT probe: out of memory");
	for (;;) {
		uint64_t now = mono_ns();
		if (stop && atomic_load(stop) && sent)
			break;
		if (sent < count && now >= next) {
			memset(b, 0, sizeof(b));
			memcpy(b, RTTPROBE_MAGIC, 4);
			put64(b + 8, ++p->seq);
			put64(b + 16, now);
			if (send(p->fd, b, sizeof(b), MSG_DONTWAIT) == (ssize_t)sizeof(b))
				sent++;
			else
				p->seq--, sent++;   /* counts as sent and lost */
			next += (uint64_t)(interval_s * 1e9);
			if (sent == count)
				end = now + (uint64_t)(timeout_s * 1e9);
		}
		if (sent == count && (now >= end || nrx == count))
			break;
		uint64_t until = sent < count ? next : end;
		int tmo = until > now ? (int)((until - now) / 1000000) + 1 : 0;
		struct pollfd pf = { .fd = p->fd, .events = POLLIN };
		if (poll(&pf, 1, tmo) <= 0)
			continue;
		ssize_t n = recv(p->fd, b, sizeof(b), MSG_DONTWAIT);
		if (n != RTTPROBE_LEN || memcmp(b, RTTPROBE_MAGIC, 4))
			continue;   /* ECONNREFUSED (no echo) or junk */
		uint64_t seq = get64(b + 8), t = get64(b + 16);
		if (seq < first || seq > p->seq || nrx >= count)
			continue;   /* a late answer to an earlier round */
		ms[nrx++] = (double)(mono_ns() - t) / 1e6;
	}
	rtt_stats_compute(ms, nrx, st);
	st->sent = sent;
	st->received = nrx;
	if (!out_ms)
		free(ms);
	return 0;
}

void rtt_stats_compute(const double *ms, int n, struct rtt_stats *st)
{
	double sum = 0, sum2 = 0;

	st->min_ms = st->avg_ms = st->max_ms = st->mdev_ms = 0;
	if (n <= 0)
		return;
	st->min_ms = st->max_ms = ms[0];
	for (int i = 0; i < n; i++) {
		sum += ms[i];
		sum2 += ms[i] * ms[i];
		if (ms[i] < st->min_ms)
			st->min_ms = ms[i];
		if (ms[i] > st->max_ms)
			st->max_ms = ms[i];
	}
	st->avg_ms = sum / n;
	double v = sum2 / n - st->avg_ms * st->avg_ms;
	st->mdev_ms = v > 0 ? sqrt(v) : 0;
}

void rtt_mean_ci95(const double *x, int n, double *mean, double *half)
{
	/* t(0.975, df) for df = 1..30; beyond, 1.96 + a small correction */
	static const double t975[30] = {
		12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
		2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
		2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
		2.048, 2.045, 2.042 };
	double s = 0, ss = 0;

	*mean = *half = 0;
	if (n <= 0)
		return;
	for (int i = 0; i < n; i++)
		s += x[i];
	*mean = s / n;
	if (n < 2)
		return;
	for (int i = 0; i < n; i++)
		ss += (x[i] - *mean) * (x[i] - *mean);
	double sd = sqrt(ss / (n - 1));
	int df = n - 1;
	double t = df <= 30 ? t975[df - 1] : 1.96 + 2.4 / df;
	*half = t * sd / sqrt((double)n);
}
