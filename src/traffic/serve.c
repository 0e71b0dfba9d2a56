/* SPDX-License-Identifier: MIT */
/* serve.c - iperf3-compatible server (include/linklab/traffic/serve.h).
 *
 * Order of the protocol as iperf3 src/iperf_server_api.c: read the 37-byte
 * cookie, PARAM_EXCHANGE, read params, CREATE_STREAMS, accept the streams on
 * the same listening socket (each sends the cookie; a wrong one gets
 * ACCESS_DENIED), TEST_START, TEST_RUNNING, wait for TEST_END,
 * EXCHANGE_RESULTS (client's first, then ours), DISPLAY_RESULTS, wait for
 * IPERF_DONE. One test at a time: a connection during a test gets
 * ACCESS_DENIED. Streams run on worker threads (iperf3.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linklab/traffic/iperf3.h"
#include "linklab/traffic/rttprobe.h"
#include "linklab/traffic/serve.h"

#define SRV_TIMEOUT_MS 10000
/* A new connection has this long in all (not per byte) to send its 37-byte
 * cookie; meanwhile the server keeps accepting and serving others. */
#define SRV_COOKIE_MS  5000
#define SRV_MAX_PENDING 32   /* connections waiting for their cookie */

/* A connection that has not sent its whole cookie yet. */
struct pend {
	int fd;
	size_t got;
	char cookie[IPERF3_COOKIE_SIZE];
	double deadline;   /* iperf3_now() */
};

struct pendset {
	int n;
	struct pend p[SRV_MAX_PENDING];
};

struct srv {
	const struct serve_opts *o;
	volatile sig_atomic_t *stop;
	serve_log_fn log;
	void *ctx;
	int lfd, cfd;
	bool lfd_tuned;    /* listener got -w buffers: recreate it after */
	bool lfd_mss;      /* listener got -M: reset to 0 (default) after */
	struct pendset pend;     /* accepted, cookie not complete yet */
	struct pendset spend;    /* the same for stream connections */
	char cookie[IPERF3_COOKIE_SIZE];   /* the client's (serve_one) */
	struct rtt_echo *echo;   /* RTT probe echo on the same port (UDP) */
	bool real_client;  /* the connection sent a cookie and parameters */
};

static void logf_(struct srv *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logf_(struct srv *s, const char *fmt, ...)
{
	char line[LL_ERR_MAX + 64];
	va_list ap;

	if (!s->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->log(s->ctx, line);
}

static void addr_text(const struct sockaddr *sa, socklen_t len, char *host,
		      size_t hlen, int *port)
{
	char serv[16];

	if (getnameinfo(sa, len, host, (socklen_t)hlen, serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(host, hlen, "?");
		*port = 0;
		return;
	}
	*port = atoi(serv);
	if (!strncmp(host, "::ffff:", 7) && strchr(host + 7, '.'))
		memmove(host, host + 7, strlen(host + 7) + 1);   /* v4-mapped */
}

static int listen_on(const struct serve_opts *o, int *port, struct ll_err *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res, *ai;
	char ps[16];
	int fd = -1, r, one = 1, zero = 0;

	snprintf(ps, sizeof(ps), "%d", o->port);
	if (!o->bind[0])
		hints.ai_family = AF_INET6;   /* dual-stack any, falls back below */
	r = getaddrinfo(o->bind[0] ? o->bind : NULL, ps, &hints, &res);
	if (r && !o->bind[0]) {
		hints.ai_family = AF_INET;
		r = getaddrinfo(NULL, ps, &hints, &res);
	}
	if (r)
		return ll_err_set(err, -EINVAL, "bind address \"%s\": %s",
				  o->bind, gai_strerror(r));
	r = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			r = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6 && !o->bind[0])
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 128) == 0) {
			r = 0;
			break;
		}
		r = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (r == -EAFNOSUPPORT && !o->bind[0]) {
		struct serve_opts o4 = *o;
		snprintf(o4.bind, sizeof(o4.bind), "0.0.0.0");
		return listen_on(&o4, port, err);
	}
	if (r < 0)
		return ll_err_set(err, r, "listen on %s port %d: %s",
				  o->bind[0] ? o->bind : "*", o->port, strerror(-r));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char h[INET6_ADDRSTRLEN];
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	addr_text((struct sockaddr *)&ss, sl, h, sizeof(h), port);
	return fd;
}

/* Refuse fd (busy): send ACCESS_DENIED, end our side with a FIN, drop
 * whatever the client sent (its cookie left unread would make close()
 * send a RST), close. */
static void deny_fd(struct srv *s, int fd)
{
	char c[IPERF3_COOKIE_SIZE];
	signed char b = IPERF3_ACCESS_DENIED;

	/* never wait for it: this runs in the loop of a running test (a
	 * blocked loop would delay that test's samples and TEST_END); what
	 * has come is drained below, and the client reads our -2 first */
	if (send(fd, &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* it left already */
	}
	shutdown(fd, SHUT_WR);
	while (recv(fd, c, sizeof(c), MSG_DONTWAIT) > 0)
		;
	close(fd);
	logf_(s, "refused a connection: a test is running (ACCESS_DENIED)");
}

/* Accept one pending connection on the listener and refuse it (busy). */
static void deny_one(struct srv *s)
{
	int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd >= 0)
		deny_fd(s, fd);
}

/* Add an accepted connection; a full set drops its oldest entry (a real
 * client sends its cookie within a round trip, an idle one waits). */
static void pend_add(struct srv *s, struct pendset *ps, int fd)
{
	if (ps->n == SRV_MAX_PENDING) {
		close(ps->p[0].fd);
		memmove(ps->p, ps->p + 1, (size_t)--ps->n * sizeof(ps->p[0]));
		logf_(s, "closed the oldest of %d connections waiting for a cookie",
		      SRV_MAX_PENDING);
	}
	struct pend *p = &ps->p[ps->n++];
	p->fd = fd;
	p->got = 0;
	p->deadline = iperf3_now() + SRV_COOKIE_MS / 1000.0;
}

static void pend_remove(struct pendset *ps, int i)
{
	memmove(ps->p + i, ps->p + i + 1, (size_t)(ps->n - i - 1) * sizeof(ps->p[0]));
	ps->n--;
}

/* Read what connection i has sent, without waiting: 1 = cookie complete,
 * 0 = not yet, -1 = closed or failed (the caller drops it). */
static int pend_read(struct pend *p)
{
	for (;;) {
		ssize_t r = recv(p->fd, p->cookie + p->got, sizeof(p->cookie) - p->got,
				 MSG_DONTWAIT);
		if (r > 0) {
			p->got += (size_t)r;
			if (p->got == sizeof(p->cookie))
				return 1;
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		return -1;
	}
}

/* Poll entries for the set from pf[0]; returns how many were added. */
static int pend_pollfds(const struct pendset *ps, struct pollfd *pf)
{
	for (int i = 0; i < ps->n; i++) {
		pf[i].fd = ps->p[i].fd;
		pf[i].events = POLLIN;
		pf[i].revents = 0;
	}
	return ps->n;
}

/* ms until the earliest cookie deadline, at most cap (0 when one passed). */
static int pend_timeout(const struct pendset *ps, int cap)
{
	double now = iperf3_now();
	int t = cap;

	for (int i = 0; i < ps->n; i++) {
		double left = (ps->p[i].deadline - now) * 1000 + 1;
		if (left < t)
			t = left < 0 ? 0 : (int)left;
	}
	return t;
}

/* After a poll whose entries for ps are pf[0..npf): read the ready ones,
 * drop the closed and those past their deadline. Returns the index of one
 * whose cookie is complete (still in the set), or -1; other complete ones
 * are found by the next poll (their data stays readable). */
static int pend_service(struct srv *s, struct pendset *ps,
			const struct pollfd *pf, int npf)
{
	double now = iperf3_now();

	for (int k = 0; k < npf; k++) {
		if (!pf[k].revents)
			continue;
		int i = 0;
		while (i < ps->n && ps->p[i].fd != pf[k].fd)
			i++;
		if (i == ps->n)
			continue;
		int r = pend_read(&ps->p[i]);
		if (r == 1)
			return i;
		if (r < 0) {
			close(ps->p[i].fd);
			pend_remove(ps, i);
		}
	}
	for (int i = 0; i < ps->n; i++)
		if (now >= ps->p[i].deadline) {
			logf_(s, "closed a connection that sent %zu of the %d cookie "
			      "bytes in %d s", ps->p[i].got, IPERF3_COOKIE_SIZE,
			      SRV_COOKIE_MS / 1000);
			close(ps->p[i].fd);
			pend_remove(ps, i--);
		}
	return -1;
}

/* A test starts: every other connection waiting for its cookie is refused
 * at once (busy), as iperf3 refuses a connection during a test. */
static void pend_deny_all(struct srv *s, struct pendset *ps)
{
	while (ps->n) {
		deny_fd(s, ps->p[0].fd);
		pend_remove(ps, 0);
	}
}

static void human_bytes(double b, char *buf, size_t len)
{
	const char *u[] = { "Bytes", "KBytes", "MBytes", "GBytes", "TBytes" };
	int i = 0;

	while (b >= 1024 * 1024 && i < 4) {   /* same thresholds as iperf3 'A' */
		b /= 1024;
		i++;
	}
	if (b >= 1024 && i < 4) {
		b /= 1024;
		i++;
	}
	snprintf(buf, len, b < 9.995 ? "%.2f %s" : b < 99.95 ? "%.1f %s" : "%.0f %s",
		 b, u[i]);
}

static void human_bits(double b, char *buf, size_t len)
{
	const char *u[] = { "bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec",
			    "Tbits/sec" };
	int i = 0;

	while (b >= 1000 && i < 4) {
		b /= 1000;
		i++;
	}
	snprintf(buf, len, b < 9.995 ? "%.2f %s" : b < 99.95 ? "%.1f %s" : "%.0f %s",
		 b, u[i]);
}

/* A UDP socket on the listener's address and port (iperf3 netannounce with
 * SO_REUSEADDR: one per stream, the previous one is connect()ed). */
static int udp_listener(struct srv *s, struct ll_err *err)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd, one = 1, zero = 0;

	getsockname(s->lfd, (struct sockaddr *)&ss, &sl);
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ll_err_set(err, -errno, "UDP socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		int e = errno;
		close(fd);
		return ll_err_set(err, -e, "UDP bind: %s", strerror(e));
	}
	return fd;
}

/* Accept one UDP stream: wait for the 4-byte hello, connect to its sender,
 * answer "6789". *ufd becomes the stream; a fresh listener replaces it. */
static int udp_accept(struct srv *s, int *ufd, int *out, struct ll_err *err)
{
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	char buf[64];

	ssize_t n = recvfrom(*ufd, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &pl);
	if (n < 0)
		return ll_err_set(err, -errno, "UDP recvfrom: %s", strerror(errno));
	if (connect(*ufd, (struct sockaddr *)&peer, pl) < 0)
		return ll_err_set(err, -errno, "UDP connect: %s", strerror(errno));
	/* the next listener must exist before the reply: the client sends
	 * the next stream's hello as soon as it has the reply */
	*out = *ufd;
	*ufd = udp_listener(s, err);
	if (*ufd < 0) {
		close(*out);
		return *ufd;
	}
	if (send(*out, IPERF3_UDP_REPLY, 4, 0) != 4) {
		close(*out);
		return ll_err_set(err, -errno, "UDP stream reply: %s", strerror(errno));
	}
	return 0;
}

static uint64_t rx_bytes(struct iperf3_stream *st, int n)
{
	uint64_t b = 0;

	for (int i = 0; i < n; i++)
		if (!st[i].sender)
			b += atomic_load(&st[i].bytes);
	return b;
}

/* Receivers read what is in flight: until each saw EOF, or 100 ms pass
 * without a byte (a stock iperf3 client does not close first); at most 2 s. */
static void drain(struct iperf3_stream *st, int n)
{
	double until = iperf3_now() + 2.0, quiet = iperf3_now();
	uint64_t last = rx_bytes(st, n);

	for (;;) {
		bool open_rx = false;
		for (int i = 0; i < n; i++)
			if (!st[i].sender && st[i].running &&
			    !atomic_load(&st[i].finished))
				open_rx = true;
		double now = iperf3_now();
		if (!open_rx || now >= until)
			return;
		uint64_t b = rx_bytes(st, n);
		if (b != last) {
			last = b;
			quiet = now;
		} else if (now - quiet >= 0.1) {
			return;
		}
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* linklab extension: one live sample of our sending streams (TCP_INFO) on
 * the control connection, only when the client asked for it. */
static int send_live(struct srv *s, struct iperf3_stream *st, int n,
		     uint64_t *last, int64_t *last_retr, double start,
		     double end, struct ll_err *err)
{
	cJSON *j = cJSON_CreateObject(), *a;
	int r;

	if (!j)
		return ll_err_set(err, -ENOMEM, "out of memory");
	cJSON_AddNumberToObject(j, "start", start);
	cJSON_AddNumberToObject(j, "end", end);
	a = cJSON_AddArrayToObject(j, "streams");
	for (int i = 0; a && i < n; i++) {
		if (!st[i].sender)
			continue;
		cJSON *o = cJSON_CreateObject();
		uint64_t b = atomic_load(&st[i].bytes);
		struct iperf3_tcpinfo ti;
		cJSON_AddNumberToObject(o, "id", st[i].id);
		cJSON_AddNumberToObject(o, "bytes", (double)(b - last[i]));
		last[i] = b;
		if (!st[i].udp && iperf3_tcp_info(st[i].fd, &ti) == 0) {
			cJSON_AddNumberToObject(o, "retransmits",
						(double)(ti.total_retrans - last_retr[i]));
			last_retr[i] = ti.total_retrans;
			cJSON_AddNumberToObject(o, "snd_cwnd", (double)ti.snd_cwnd);
			cJSON_AddNumberToObject(o, "rtt", (double)ti.rtt_us);
			cJSON_AddNumberToObject(o, "rttvar", (double)ti.rttvar_us);
			cJSON_AddNumberToObject(o, "pmtu", (double)ti.pmtu);
		}
		cJSON_AddTrueToObject(o, "sender");
		cJSON_AddItemToArray(a, o);
	}
	r = iperf3_send_state(s->cfd, IPERF3_LINKLAB_SAMPLE, err);
	if (r == 0)
		r = iperf3_json_write(s->cfd, j, SRV_TIMEOUT_MS, err);
	cJSON_Delete(j);
	return r;
}

/* The end of a test in the log, as iperf3 -s prints it: the SUM of both
 * sides and, for UDP, each stream's receiver figures (from whichever side
 * received it) with its out-of-order count. */
static void log_summary(struct srv *s, const struct iperf3_stream *st, int n,
			const struct iperf3_results *res,
			const struct iperf3_results *theirs,
			const struct iperf3_params *p, double dur)
{
	uint64_t sent = 0, rcvd = 0;
	char b1[32], b2[64];

	for (int i = 0; i < n; i++) {
		const struct iperf3_stream_result *o = iperf3_results_stream(theirs, st[i].id);
		uint64_t th = o ? o->bytes : 0;

		sent += st[i].sender ? res->s[i].bytes : th;
		rcvd += st[i].sender ? th : res->s[i].bytes;
	}
	human_bytes((double)sent, b1, sizeof(b1));
	human_bits(dur > 0 ? (double)sent * 8 / dur : 0, b2, sizeof(b2));
	logf_(s, "[SUM]   0.00-%-5.2f sec  %s  %s  sender  (%d stream%s%s)",
	      dur, b1, b2, n, n == 1 ? "" : "s",
	      p->bidir ? ", bidir" : p->reverse ? ", reverse" : "");
	human_bytes((double)rcvd, b1, sizeof(b1));
	human_bits(dur > 0 ? (double)rcvd * 8 / dur : 0, b2, sizeof(b2));
	logf_(s, "[SUM]   0.00-%-5.2f sec  %s  %s  receiver", dur, b1, b2);
	if (!p->udp)
		return;
	for (int i = 0; i < n; i++) {
		const struct iperf3_stream_result *e =
			st[i].sender ? iperf3_results_stream(theirs, st[i].id) : &res->s[i];

		if (!e)
			continue;
		int64_t pk, lo;
		iperf3_udp_counted(e, (int64_t)st[i].omit_packets, &pk, &lo);
		human_bytes((double)e->bytes, b1, sizeof(b1));
		if (lo < 0)
			snprintf(b2, sizeof(b2), "?/%lld (loss unknown)", (long long)pk);
		else
			snprintf(b2, sizeof(b2), "%lld/%lld (%.2g%%)", (long long)lo,
				 (long long)pk,
				 pk > 0 ? 100.0 * (double)lo / (double)pk : 0.0);
		logf_(s, "[%3d]   0.00-%-5.2f sec  %s  jitter %.3f ms (last smoothed "
		      "RFC 3550 estimate)  %s  receiver%s", e->id, dur, b1,
		      e->jitter * 1000, b2, st[i].sender ? " (the client's)" : "");
		if (e->has_ooo && e->ooo)
			logf_(s, "[%3d]   0.00-%-5.2f sec  %llu datagrams received "
			      "out-of-order", e->id, dur, (unsigned long long)e->ooo);
		if (e->has_dups && e->dups)
			logf_(s, "[%3d]   0.00-%-5.2f sec  %llu duplicates", e->id, dur,
			      (unsigned long long)e->dups);
	}
}

/* After CREATE_STREAMS: accept the test's total streams into st[] (*n of
 * them so far): TCP connections that send the client's cookie (polled
 * together, so one slow with its cookie holds up none), or UDP hellos on
 * *ufd. 10 s in all. Returns 0 or a negative code with err filled. */
static int accept_streams(struct srv *s, const struct iperf3_params *p,
			  const char *cookie, struct iperf3_stream *st, int total,
			  int *n, int *ufd, atomic_bool *sstop, atomic_bool *rstop,
			  _Atomic uint64_t *budget_used, struct ll_err *err)
{
	int r, state;

	double streams_until = iperf3_now() + SRV_TIMEOUT_MS / 1000.0;
	while (*n < total) {
		struct pollfd pf[2 + SRV_MAX_PENDING] = {
			{ .fd = p->udp ? *ufd : s->lfd, .events = POLLIN },
			{ .fd = s->cfd, .events = POLLIN } };
		int np = 2 + pend_pollfds(&s->spend, pf + 2);
		double left = (streams_until - iperf3_now()) * 1000 + 1;
		r = poll(pf, (nfds_t)np, pend_timeout(&s->spend, left < 0 ? 0 : (int)left));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || iperf3_now() >= streams_until) {
			r = ll_err_set(err, -ETIMEDOUT,
				       "only %d of %d streams connected within %d s",
				       *n, total, SRV_TIMEOUT_MS / 1000);
			return r;
		}
		if (pf[1].revents) {
			r = iperf3_recv_state(s->cfd, &state, 1000, err);
			if (r == 0)
				r = ll_err_set(err, -ECONNABORTED,
					       "client sent %s while creating streams",
					       iperf3_state_name(state));
			return r;
		}
		int fd = -1;
		if (p->udp) {
			if (!pf[0].revents)
				continue;
			r = udp_accept(s, ufd, &fd, err);
			if (r < 0)
				return r;
			goto accepted;
		}
		int k = pend_service(s, &s->spend, pf + 2, np - 2);
		if (k < 0) {
			if (pf[0].revents) {
				fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
				if (fd >= 0)
					pend_add(s, &s->spend, fd);
			}
			continue;
		}
		fd = s->spend.p[k].fd;
		bool same = !memcmp(s->spend.p[k].cookie, cookie, IPERF3_COOKIE_SIZE);
		pend_remove(&s->spend, k);
		if (!same) {
			deny_fd(s, fd);
			continue;
		}
		if (iperf3_tune_socket(fd, true, 0, p->nodelay, p->congestion, 0,
				       err) < 0) {
			r = err ? err->code : -EINVAL;
			iperf3_send_server_error(s->cfd, IPERF3_IEUNIMP,
						 err ? -err->code : EINVAL, NULL);
			close(fd);
			ll_err_prefix(err, "stream %d: ", *n + 1);
			return r;
		}
accepted:
		st[*n].fd = fd;
		st[*n].udp = p->udp;
		st[*n].seq64 = p->udp_counters_64bit;
		st[*n].rcvbuf_boost = p->udp && !p->window;
		st[*n].id = iperf3_stream_id(*n);
		st[*n].sender = p->bidir ? *n >= p->parallel : p->reverse;
		st[*n].len = p->len;
		st[*n].rate = p->bandwidth;   /* per stream, as iperf3 -b */
		st[*n].stop = st[*n].sender ? sstop : rstop;
		st[*n].zerocopy = p->zerocopy && !p->udp && st[*n].sender;
		st[*n].gso = p->gso && p->udp && st[*n].sender;
		st[*n].budget = p->num ? p->num : p->blockcount * p->len;
		st[*n].budget_used = budget_used;
		(*n)++;
	}
	return 0;
}

/* The test runs: wait for TEST_END (safety net duration + omit + 40 s, as
 * iperf3), end the -O period on time, send live samples when asked
 * (live_last/live_retr non-NULL), refuse other connections at once.
 * *t_count: when counting began. 0 on TEST_END, else negative with err. */
static int run_test(struct srv *s, const struct iperf3_params *p,
		    struct iperf3_stream *st, int n, double t0, uint64_t *live_last,
		    int64_t *live_retr, double *t_count, struct ll_err *err)
{
	int r, state;

	/* wait for TEST_END; safety net: duration + omit + 40 s as iperf3.
	 * -O: the first omit seconds are left out of the counts (snapshot) */
	double limit = p->time > 0 && !(p->num || p->blockcount) ?
		       p->time + p->omit + 40 : 0;
	double tc = t0 + p->omit;
	bool omitting = p->omit > 0;
	double live_next = t0 + p->live_interval, live_prev = t0;
	for (;;) {
		struct pollfd pf[2] = { { .fd = s->cfd, .events = POLLIN },
					{ .fd = s->lfd, .events = POLLIN } };
		int tmo = 500;
		double now = iperf3_now();
		if (omitting) {
			double left = (tc - now) * 1000 + 1;
			tmo = left < 0 ? 0 : left < 500 ? (int)left : 500;
		}
		if (live_last && live_retr) {
			double left = (live_next - now) * 1000 + 1;
			if (left < tmo)
				tmo = left < 0 ? 0 : (int)left;
		}
		r = poll(pf, 2, tmo);
		if (omitting && iperf3_now() >= tc) {
			for (int i = 0; i < n; i++)
				iperf3_stream_end_omit(&st[i]);
			tc = iperf3_now();
			omitting = false;
		}
		if (live_last && live_retr && iperf3_now() >= live_next) {
			r = send_live(s, st, n, live_last, live_retr,
				      live_prev - t0, iperf3_now() - t0, err);
			live_prev = iperf3_now();
			while (live_next <= live_prev)
				live_next += p->live_interval;
			if (r < 0)
				return r;
			continue;
		}
		if (r < 0 && errno != EINTR) {
			r = ll_err_set(err, -errno, "poll: %s", strerror(errno));
			return r;
		}
		if (*s->stop) {
			iperf3_send_state(s->cfd, IPERF3_SERVER_TERMINATE, NULL);
			r = ll_err_set(err, -EINTR, "server interrupted during a test");
			return r;
		}
		if (limit > 0 && iperf3_now() - t0 > limit) {
			r = ll_err_set(err, -ETIMEDOUT,
				       "test ran %g s past its %g s duration; closing",
				       limit - p->time, p->time);
			return r;
		}
		if (r <= 0)
			continue;
		if (pf[1].revents)
			deny_one(s);
		if (pf[0].revents) {
			r = iperf3_recv_state(s->cfd, &state, 1000, err);
			if (r < 0) {
				ll_err_prefix(err, "client gone during the test: ");
				return r;
			}
			if (state == IPERF3_TEST_END)
				break;
			if (state == IPERF3_CLIENT_TERMINATE) {
				r = ll_err_set(err, -ECONNABORTED,
					       "the client has terminated the test");
				return r;
			}
			r = ll_err_set(err, -EPROTO,
				       "protocol error: client sent state %d (%s) during the test",
				       state, iperf3_state_name(state));
			return r;
		}
	}
	if (omitting)   /* ended inside the omit period: count it all */
		tc = t0;
	*t_count = tc;
	return 0;
}

/* TEST_END came: stop and join every stream, the receivers first by time
 * (-n/-k: after the bytes in flight); the senders' TCP retransmits into
 * retr[] (-1: receiver, UDP or unknown). */
static void stop_streams(const struct iperf3_params *p, struct iperf3_stream *st,
			 int n, atomic_bool *sstop, atomic_bool *rstop,
			 struct iperf3_gate *gate, int64_t *retr)
{
	/* by time: the receivers stop counting at TEST_END (as iperf3);
	 * -n/-k: senders stop and send FIN after their last byte and the
	 * receivers read what is still in flight before they are stopped */
	if (!(p->num || p->blockcount)) {
		atomic_store(rstop, true);
		for (int i = 0; i < n; i++)
			if (!st[i].sender)
				shutdown(st[i].fd, p->udp ? SHUT_RDWR : SHUT_RD);
	}
	atomic_store(sstop, true);
	iperf3_gate_open(gate);   /* wakes senders in a long -b pacing wait */
	for (int i = 0; i < n; i++)
		if (st[i].sender) {
			struct iperf3_tcpinfo ti;
			if (p->udp)
				shutdown(st[i].fd, SHUT_RDWR);
			else if (!atomic_load(&st[i].finished))
				shutdown(st[i].fd, SHUT_WR);
			iperf3_stream_join(&st[i]);
			retr[i] = -1;
			if (!p->udp && iperf3_tcp_info(st[i].fd, &ti) == 0)
				retr[i] = ti.total_retrans;
			if (!p->udp)
				shutdown(st[i].fd, SHUT_WR);
		} else {
			retr[i] = -1;
		}
	if (p->num || p->blockcount)
		drain(st, n);   /* -n/-k: every byte sent is received */
	atomic_store(rstop, true);
	for (int i = 0; i < n; i++)
		shutdown(st[i].fd, SHUT_RDWR);
	for (int i = 0; i < n; i++)
		iperf3_stream_join(&st[i]);
}

/* PARAM_EXCHANGE: read and check the client's parameters into p; a bad
 * one is answered with SERVER_ERROR. 0 or negative with err. */
static int get_params(struct srv *s, struct iperf3_params *p, struct ll_err *err)
{
	cJSON *j = NULL;
	int r;

	r = iperf3_send_state(s->cfd, IPERF3_PARAM_EXCHANGE, err);
	if (r < 0)
		return r;
	r = iperf3_json_read(s->cfd, &j, 64 * 1024, SRV_TIMEOUT_MS, err);
	if (r < 0) {
		ll_err_prefix(err, "parameters: ");
		return r;
	}
	r = iperf3_params_parse(j, p, err);
	cJSON_Delete(j);
	s->real_client = true;
	if (r < 0) {
		iperf3_send_server_error(s->cfd, IPERF3_IEUNIMP, EINVAL, NULL);
		return r;
	}
	{
		struct ll_diag *d = calloc(1, sizeof(*d));
		if (!d)
			return ll_err_set(err, -ENOMEM, "out of memory");
		int ie = iperf3_params_check(p, d);
		if (ie) {
			iperf3_send_server_error(s->cfd, ie, 0, NULL);
			r = ll_diag_to_err(d, err);
			ll_err_prefix(err, "client parameters refused: ");
			free(d);
			return r;
		}
		free(d);
	}
	return 0;
}

/* The test's -w and -M on the listener, so that the accepted streams
 * inherit them before the handshake (window scale; iperf3 uses a fresh
 * listener and sets the MSS on it too). reset_listener undoes them. */
static void tune_listener(struct srv *s, const struct iperf3_params *p)
{
	if (p->window) {
		int w = (int)p->window;

		setsockopt(s->lfd, SOL_SOCKET, SO_SNDBUF, &w, sizeof(w));
		setsockopt(s->lfd, SOL_SOCKET, SO_RCVBUF, &w, sizeof(w));
		s->lfd_tuned = true;
	}
	if (p->mss && !p->udp) {
		int m = (int)p->mss;

		if (setsockopt(s->lfd, IPPROTO_TCP, TCP_MAXSEG, &m, sizeof(m)) < 0)
			logf_(s, "warning: TCP_MAXSEG %d: %s", m, strerror(errno));
		s->lfd_mss = true;
	}
}

/* the stream phase: listeners tuned, CREATE_STREAMS, the client's streams
 * accepted (*n of them; a UDP listener in *ufd until then), TEST_START,
 * TEST_RUNNING and each stream's thread started behind gate */
static int open_streams(struct srv *s, struct iperf3_params *p,
			struct iperf3_stream *st, int total_streams, int *n,
			int *ufd, atomic_bool *sstop, atomic_bool *rstop,
			_Atomic uint64_t *budget_used, struct iperf3_gate *gate,
			struct ll_err *err)
{
	int r;

	tune_listener(s, p);
	if (p->udp) {
		/* the stream hellos must reach the stream listener */
		rtt_echo_pause(s->echo, true);
		*ufd = udp_listener(s, err);
		if (*ufd < 0)
			return *ufd;
	}
	r = iperf3_send_state(s->cfd, IPERF3_CREATE_STREAMS, err);
	if (r < 0)
		return r;
	r = accept_streams(s, p, s->cookie, st, total_streams, n, ufd, sstop,
			   rstop, budget_used, err);
	if (r < 0)
		return r;
	if (*ufd >= 0) {
		close(*ufd);
		*ufd = -1;
	}
	rtt_echo_pause(s->echo, false);
	r = iperf3_send_state(s->cfd, IPERF3_TEST_START, err);
	if (r == 0)
		r = iperf3_send_state(s->cfd, IPERF3_TEST_RUNNING, err);
	if (r < 0)
		return r;
	for (int i = 0; i < *n; i++) {
		st[i].gate = gate;
		r = iperf3_stream_start(&st[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* the results exchange: EXCHANGE_RESULTS, the client's results into
 * theirs, ours (res) sent, DISPLAY_RESULTS */
static int exchange_results(struct srv *s, const struct iperf3_results *res,
			    struct iperf3_results *theirs, struct ll_err *err)
{
	cJSON *j = NULL;
	int r;

	r = iperf3_send_state(s->cfd, IPERF3_EXCHANGE_RESULTS, err);
	if (r < 0)
		return r;
	r = iperf3_json_read(s->cfd, &j, IPERF3_MAX_JSON, SRV_TIMEOUT_MS, err);
	if (r < 0) {
		ll_err_prefix(err, "client results: ");
		cJSON_Delete(j);
		return r;
	}
	r = iperf3_results_parse(j, theirs, err);
	cJSON_Delete(j);
	if (r < 0)
		return r;
	j = iperf3_results_build(res);
	if (!j)
		return ll_err_set(err, -ENOMEM, "out of memory");
	r = iperf3_json_write(s->cfd, j, SRV_TIMEOUT_MS, err);
	cJSON_Delete(j);
	if (r < 0)
		return r;
	return iperf3_send_state(s->cfd, IPERF3_DISPLAY_RESULTS, err);
}

static int serve_one(struct srv *s, struct ll_err *err)
{
	char peer[INET6_ADDRSTRLEN];
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct iperf3_params p;
	struct iperf3_stream *st = NULL;
	int n = 0, r, state, pport, ufd = -1;
	atomic_bool sstop = false, rstop = false;
	_Atomic uint64_t budget_used = 0;
	uint64_t *live_last = NULL;
	int64_t *live_retr = NULL;
	struct iperf3_gate gate;
	struct iperf3_results *res = NULL, *theirs = NULL;

	getpeername(s->cfd, (struct sockaddr *)&ss, &sl);
	addr_text((struct sockaddr *)&ss, sl, peer, sizeof(peer), &pport);
	logf_(s, "Accepted connection from %s, port %d", peer, pport);
	r = get_params(s, &p, err);
	if (r < 0)
		return r;
	iperf3_gate_init(&gate);
	/* --bidir: the first N streams are the client's senders (we receive),
	 * the next N ours (iperf3 rec_streams_accepted / send_streams_accepted) */
	int total_streams = p.bidir ? 2 * p.parallel : p.parallel;
	st = calloc((size_t)total_streams, sizeof(*st));
	res = calloc(1, sizeof(*res));
	theirs = calloc(1, sizeof(*theirs));
	if (!st || !res || !theirs) {
		r = ll_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	r = open_streams(s, &p, st, total_streams, &n, &ufd, &sstop, &rstop,
			 &budget_used, &gate, err);
	if (r < 0)
		goto out;
	double t0 = iperf3_now(), cu0, cs0;
	iperf3_cpu_times(&cu0, &cs0);
	iperf3_gate_open(&gate);
	if (p.live_interval > 0) {
		live_last = calloc((size_t)n, sizeof(*live_last));
		live_retr = calloc((size_t)n, sizeof(*live_retr));
	}
	double t_count = t0;
	r = run_test(s, &p, st, n, t0, live_last, live_retr, &t_count, err);
	if (r < 0)
		goto out;
	double dur = iperf3_now() - t_count;
	int64_t retr[IPERF3_MAX_STREAMS];
	stop_streams(&p, st, n, &sstop, &rstop, &gate, retr);
	struct iperf3_side side = {
		.st = st, .n = n, .retr = retr, .sends = p.reverse || p.bidir,
		.udp = p.udp, .cc_fd = n && !p.udp ? st[0].fd : s->cfd,
		.wall = dur, .cpu_user0 = cu0, .cpu_sys0 = cs0, .dur = dur,
	};
	iperf3_results_fill(&side, res);
	r = exchange_results(s, res, theirs, err);
	if (r < 0)
		goto out;
	/* IPERF_DONE; EOF instead is tolerated (old clients just close) */
	if (iperf3_recv_state(s->cfd, &state, SRV_TIMEOUT_MS, NULL) == 0 &&
	    state != IPERF3_IPERF_DONE)
		logf_(s, "note: client ended with state %d (%s) instead of IPERF_DONE",
		      state, iperf3_state_name(state));
	log_summary(s, st, n, res, theirs, &p, dur);
	r = 0;
out:
	atomic_store(&sstop, true);
	atomic_store(&rstop, true);
	iperf3_gate_open(&gate);
	for (int i = 0; st && i < n; i++) {
		shutdown(st[i].fd, SHUT_RDWR);
		iperf3_stream_join(&st[i]);
		close(st[i].fd);
	}
	if (ufd >= 0)
		close(ufd);
	pend_deny_all(s, &s->spend);   /* late stream attempts */
	rtt_echo_pause(s->echo, false);
	free(live_last);
	free(live_retr);
	free(st);
	free(res);
	free(theirs);
	iperf3_gate_destroy(&gate);
	return r;
}

/* Back to default listener options for the next test. TCP_MAXSEG 0 resets
 * the user MSS (tcp(7): 0 = no user MSS); buffers set with SO_RCVBUF stay
 * locked, so that listener is replaced - after taking the connections
 * already in its backlog (a client that connected meanwhile must not see a
 * reset). The listener is made non-blocking for that: accept4's
 * SOCK_NONBLOCK only applies to the accepted socket, and a blocking accept
 * on an empty backlog would hang here and swallow the next client. */
static int reset_listener(struct srv *s, int *port, struct ll_err *err)
{
	if (s->lfd_mss) {
		int zero = 0;
		if (setsockopt(s->lfd, IPPROTO_TCP, TCP_MAXSEG, &zero, sizeof(zero)) < 0)
			logf_(s, "warning: TCP_MAXSEG reset: %s", strerror(errno));
		s->lfd_mss = false;
	}
	if (!s->lfd_tuned)
		return 0;
	struct serve_opts o2 = *s->o;
	o2.port = *port;
	int fl = fcntl(s->lfd, F_GETFL);
	if (fl < 0 || fcntl(s->lfd, F_SETFL, fl | O_NONBLOCK) < 0)
		return ll_err_set(err, -errno, "listener O_NONBLOCK: %s",
				  strerror(errno));
	for (int i = 0; i < SRV_MAX_PENDING; i++) {
		/* accepted sockets do not inherit O_NONBLOCK (accept(2)) */
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			break;   /* EAGAIN: backlog empty */
		pend_add(s, &s->pend, fd);
	}
	close(s->lfd);
	s->lfd_tuned = false;
	s->lfd = listen_on(&o2, port, err);
	return s->lfd < 0 ? s->lfd : 0;
}

/* Wait (at most 500 ms, so that a stop flag is seen) for a connection that
 * has sent its whole cookie, accepting and reading every connection at
 * once. 1: s->cfd and s->cookie are the client's; 0: none yet. */
static int wait_client(struct srv *s)
{
	struct pollfd pf[1 + SRV_MAX_PENDING] = { { .fd = s->lfd, .events = POLLIN } };
	int np = 1 + pend_pollfds(&s->pend, pf + 1);

	if (poll(pf, (nfds_t)np, pend_timeout(&s->pend, 500)) < 0)
		return 0;
	int k = pend_service(s, &s->pend, pf + 1, np - 1);
	if (k >= 0) {
		s->cfd = s->pend.p[k].fd;
		memcpy(s->cookie, s->pend.p[k].cookie, sizeof(s->cookie));
		pend_remove(&s->pend, k);
		return 1;
	}
	if (pf[0].revents) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			pend_add(s, &s->pend, fd);
	}
	return 0;
}

int serve_run(const struct serve_opts *o, volatile sig_atomic_t *stop,
	      void (*on_listen)(void *ctx, int port), serve_log_fn log,
	      void *ctx, struct ll_err *err)
{
	struct srv s = { .o = o, .stop = stop, .log = log, .ctx = ctx, .cfd = -1 };
	int port = 0, rc = 0;

	if (o->port < 0 || o->port > 65535)
		return ll_err_set(err, -EINVAL, "port %d out of range 0..65535",
				  o->port);
	s.lfd = listen_on(o, &port, err);
	if (s.lfd < 0)
		return s.lfd;
	{
		struct sockaddr_storage la;
		socklen_t ll = sizeof(la);
		struct ll_err e2 = { 0 };
		if (getsockname(s.lfd, (struct sockaddr *)&la, &ll) == 0 &&
		    rtt_echo_start(&s.echo, (struct sockaddr *)&la, ll, &e2) < 0)
			logf_(&s, "warning: no RTT echo: %s", e2.msg);
	}
	if (on_listen)
		on_listen(ctx, port);
	while (!*stop) {
		int r;
		if (!wait_client(&s))
			continue;
		/* one test at a time: the others waiting are refused now */
		pend_deny_all(&s, &s.pend);
		int one = 1;
		setsockopt(s.cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct ll_err e = { 0 };
		s.real_client = false;
		r = serve_one(&s, &e);
		close(s.cfd);
		s.cfd = -1;
		if (r < 0)
			logf_(&s, "error: %s", e.msg);
		if (!o->one_off || !s.real_client) {
			r = reset_listener(&s, &port, err);
			if (r < 0)
				break;
		}
		/* -1 ends after a real test or client, not after a bare port
		 * probe (a connection that closed before its parameters) */
		if (o->one_off && !s.real_client) {
			logf_(&s, "(a connection without a test: still waiting)");
			continue;
		}
		if (o->one_off) {
			if (r < 0) {
				if (err)
					*err = e;
				rc = r;
			}
			break;
		}
	}
	for (int i = 0; i < s.pend.n; i++)
		close(s.pend.p[i].fd);
	rtt_echo_stop(s.echo);
	if (s.lfd >= 0)
		close(s.lfd);
	else if (rc == 0)
		rc = s.lfd;
	return rc;
}
