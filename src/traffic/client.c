/* SPDX-License-Identifier: MIT */
/* client.c - iperf3-compatible client (include/linklab/traffic/client.h).
 *
 * One control thread runs the protocol (iperf3 src/iperf_client_api.c order:
 * cookie, PARAM_EXCHANGE, CREATE_STREAMS, TEST_START, TEST_RUNNING, TEST_END,
 * EXCHANGE_RESULTS, DISPLAY_RESULTS, IPERF_DONE); one worker thread per data
 * stream does blocking send()/recv() of len-byte blocks. The control thread
 * wakes on a CLOCK_MONOTONIC timerfd at every interval boundary, snapshots
 * the per-stream byte counters and TCP_INFO, and queues a CLIENT_EV_INTERVAL event;
 * the caller learns about queued events through a pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "linklab/traffic/iperf3.h"
#include "linklab/traffic/client.h"
#include "linklab/traffic/udpstats.h"

struct evnode {
	struct client_event ev;
	struct evnode *next;
};

struct conn_info {
	int fd;
	char lhost[INET6_ADDRSTRLEN];
	int lport;
	char rhost[INET6_ADDRSTRLEN];
	int rport;
};

/* per-stream running statistics for the end summary */
struct stream_acc {
	uint64_t last_bytes, last_packets;
	uint64_t lost_reported;         /* UDP receiver: loss in intervals */
	int64_t last_ooo;               /* UDP receiver: at the last interval */
	int64_t omit_retr;              /* counter at the end of -O */
	int64_t max_snd_wnd;
	int64_t last_retr;
	int64_t max_cwnd, min_rtt, max_rtt;
	double rtt_sum;
	long rtt_n;
};

struct client {
	struct client_opts o;
	int evpipe[2];
	int stoppipe[2];
	atomic_bool stop_req;
	atomic_bool streams_stop;   /* senders */
	atomic_bool rx_stop;        /* receivers (they drain first) */
	atomic_bool abandon;        /* client_free: give up waiting */
	_Atomic uint64_t budget_used;
	uint64_t budget;            /* -n/-k bytes, 0 = by time */
	uint32_t len;               /* block / datagram length in use */
	int donepipe[2];            /* workers: 1 byte when they end */
	double t_count;             /* monotonic start of the counted part */
	struct rtt_prober *prober;  /* client_opts.rtt */
	struct rtt_stats rtt_idle, rtt_load;
	pthread_t probe_th;
	bool probe_started;
	atomic_bool probe_stop;
	struct iperf3_gate gate;
	pthread_t control;
	bool control_started;
	pthread_mutex_t mu;
	struct evnode *head, *tail;

	/* protocol state (control thread; read by others after it ended) */
	int ctrl_fd;
	char cookie[IPERF3_COOKIE_SIZE];
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int n;
	struct iperf3_stream st[CLIENT_MAX_STREAMS];
	struct conn_info conn[CLIENT_MAX_STREAMS];
	struct stream_acc acc[CLIENT_MAX_STREAMS];
	int mss, sndbuf, rcvbuf;
	double t0;
	time_t wall_start;
	double cpu_u0, cpu_s0;
	double t_end;
	int64_t retr[CLIENT_MAX_STREAMS];
	bool running;               /* streams were released */

	/* results (under mu) */
	struct client_interval *iv;
	size_t niv, caiv;
	bool connected, done, failed;
	struct ll_err err;
	struct client_summary sum;
	double cpu_total, cpu_user, cpu_system;
	struct iperf3_results remote;
	bool have_remote;
};

void client_opts_init(struct client_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = IPERF3_DEFAULT_PORT;
	o->streams = 1;
	o->duration = 10;
	o->interval = 1;
	o->connect_timeout = 10;
	o->omit = 0;
	o->bytes = o->blocks = 0;
	o->mss = 0;
	o->nodelay = o->zerocopy = o->udp64 = false;
	o->congestion[0] = '\0';
	o->live = 0;
	o->rtt = false;
}

int client_opts_validate(const struct client_opts *o, struct ll_diag *diag)
{
	if (!o->host[0])
		ll_diag_add(diag, LL_DIAG_ERROR, "host",
			    "server address missing (-c ADDR)");
	if (o->port < 1 || o->port > 65535)
		ll_diag_add(diag, LL_DIAG_ERROR, "port",
			    "port %d out of range 1..65535", o->port);
	if (o->streams < 1 || o->streams > CLIENT_MAX_STREAMS)
		ll_diag_add(diag, LL_DIAG_ERROR, "streams",
			    "-P %d out of range 1..%d", o->streams, CLIENT_MAX_STREAMS);
	else if (o->bidir && o->streams > CLIENT_MAX_STREAMS / 2)
		ll_diag_add(diag, LL_DIAG_ERROR, "streams",
			    "-P %d out of range 1..%d with --bidir (streams each way)",
			    o->streams, CLIENT_MAX_STREAMS / 2);
	if (o->bidir && o->reverse)
		ll_diag_add(diag, LL_DIAG_ERROR, "bidir",
			    "--bidir and -R are mutually exclusive (as in iperf3)");
	if (!(o->duration >= 1 && o->duration <= IPERF3_MAX_TIME))
		ll_diag_add(diag, LL_DIAG_ERROR, "duration",
			    "-t %g out of range 1..%d seconds", o->duration,
			    IPERF3_MAX_TIME);
	if (o->interval != 0 && !(o->interval >= 0.1 && o->interval <= 60))
		ll_diag_add(diag, LL_DIAG_ERROR, "interval",
			    "-i %g out of range: 0 (no periodic reports) or 0.1..60 seconds",
			    o->interval);
	if (o->udp && o->blksize && (o->blksize < 16 || o->blksize > 65507))
		ll_diag_add(diag, LL_DIAG_ERROR, "blksize",
			    "-l %u out of range 16..65507 bytes (UDP)", o->blksize);
	else if (!o->udp && o->blksize > IPERF3_MAX_BLOCKSIZE)
		ll_diag_add(diag, LL_DIAG_ERROR, "blksize",
			    "-l %u out of range 1..%u bytes (TCP)", o->blksize,
			    IPERF3_MAX_BLOCKSIZE);
	if (o->window > IPERF3_MAX_WINDOW)
		ll_diag_add(diag, LL_DIAG_ERROR, "window",
			    "-w %llu out of range 0..%u bytes",
			    (unsigned long long)o->window, IPERF3_MAX_WINDOW);
	if (!(o->omit >= 0 && o->omit <= 600))
		ll_diag_add(diag, LL_DIAG_ERROR, "omit",
			    "-O %g out of range 0..600 seconds", o->omit);
	if (o->bytes && o->blocks)
		ll_diag_add(diag, LL_DIAG_ERROR, "bytes",
			    "-n %llu and -k %llu are mutually exclusive (as in iperf3): give one",
			    (unsigned long long)o->bytes, (unsigned long long)o->blocks);
	if (o->mss > 65535)
		ll_diag_add(diag, LL_DIAG_ERROR, "mss",
			    "-M %u out of range 1..65535 bytes", o->mss);
	if (o->udp && o->mss)
		ll_diag_add(diag, LL_DIAG_ERROR, "mss", "-M applies to TCP only");
	if (!(o->live == 0 || (o->live >= 0.1 && o->live <= 60)))
		ll_diag_add(diag, LL_DIAG_ERROR, "live",
			    "live sample interval %g out of range 0.1..60 s", o->live);
	if (!(o->connect_timeout > 0 && o->connect_timeout <= 3600))
		ll_diag_add(diag, LL_DIAG_ERROR, "connect_timeout",
			    "connect timeout %g out of range (0..3600] seconds",
			    o->connect_timeout);
	return diag->nerrors ? -EINVAL : 0;
}

/* ---- event queue ------------------------------------------------------- */

static void queue_event(struct client *t, const struct client_event *ev)
{
	struct evnode *n = malloc(sizeof(*n));
	char b = 'e';

	if (!n)
		return;
	n->ev = *ev;
	n->next = NULL;
	pthread_mutex_lock(&t->mu);
	if (t->tail)
		t->tail->next = n;
	else
		t->head = n;
	t->tail = n;
	pthread_mutex_unlock(&t->mu);
	if (write(t->evpipe[1], &b, 1) < 0) {
		/* pipe full: the reader still finds the queued events */
	}
}

int client_event_fd(const struct client *t)
{
	return t->evpipe[0];
}

int client_next_event(struct client *t, struct client_event *ev)
{
	struct evnode *n;
	char b;

	pthread_mutex_lock(&t->mu);
	n = t->head;
	if (n) {
		t->head = n->next;
		if (!t->head)
			t->tail = NULL;
	}
	pthread_mutex_unlock(&t->mu);
	if (!n)
		return 0;
	if (read(t->evpipe[0], &b, 1) < 0) {
		/* nothing to drain */
	}
	*ev = n->ev;
	free(n);
	return 1;
}

int client_stream_addr(const struct client *tc, int i, char *local, size_t llen,
		     int *lport, char *remote, size_t rlen, int *rport)
{
	struct client *t = (struct client *)tc;
	int id = -ENOENT;

	pthread_mutex_lock(&t->mu);
	if (t->connected && i >= 0 && i < t->n) {
		snprintf(local, llen, "%s", t->conn[i].lhost);
		snprintf(remote, rlen, "%s", t->conn[i].rhost);
		*lport = t->conn[i].lport;
		*rport = t->conn[i].rport;
		id = t->st[i].id;
	}
	pthread_mutex_unlock(&t->mu);
	return id;
}

void client_stop(struct client *t)
{
	char b = 's';

	atomic_store(&t->stop_req, true);
	if (write(t->stoppipe[1], &b, 1) < 0) {
		/* already signalled */
	}
}

const struct client_summary *client_summary(const struct client *t)
{
	return &t->sum;
}

/* ---- connection helpers -------------------------------------------------- */

/* Wait for ev on fd or for the stop pipe until timeout_ms. 1 ready, 0
 * timeout, -ECANCELED when stop was requested, -errno. */
static int wait_or_stop(struct client *t, int fd, short ev, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = fd, .events = ev },
			       { .fd = t->stoppipe[0], .events = POLLIN } };
	int r;

	do
		r = poll(p, 2, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (p[1].revents)
		return -ECANCELED;
	return r > 0;
}

static int timeout_ms(const struct client *t)
{
	return (int)(t->o.connect_timeout * 1000);
}

static void addr_text(const struct sockaddr *sa, socklen_t len, char *host,
		      size_t hlen, int *port)
{
	char serv[16];

	if (getnameinfo(sa, len, host, (socklen_t)hlen, serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(host, hlen, "?");
		*port = 0;
		return;
	}
	*port = atoi(serv);
}

/* Non-blocking connect to sa with the connect timeout; fd returned blocking. */
static int connect_addr(struct client *t, const struct sockaddr *sa,
			socklen_t len, bool data, int *out, struct ll_err *err)
{
	char host[INET6_ADDRSTRLEN];
	int port, r, fd, one = 1;

	addr_text(sa, len, host, sizeof(host), &port);
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ll_err_set(err, -errno, "socket: %s", strerror(errno));
	if (data) {
		r = iperf3_tune_socket(fd, true, t->o.mss, t->o.nodelay,
				       t->o.congestion, t->o.window, err);
		if (r < 0) {
			close(fd);
			return r;
		}
	}
	if (!data)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, sa, len) < 0 && errno != EINPROGRESS) {
		r = -errno;
		close(fd);
		return ll_err_set(err, r, "connect to %s port %d: %s", host, port,
				  strerror(-r));
	}
	r = wait_or_stop(t, fd, POLLOUT, timeout_ms(t));
	if (r <= 0) {
		close(fd);
		if (r == 0)
			return ll_err_set(err, -ETIMEDOUT,
					  "connect to %s port %d: no answer within %g s",
					  host, port, t->o.connect_timeout);
		if (r == -ECANCELED)
			return ll_err_set(err, r, "connect to %s port %d: stopped",
					  host, port);
		return ll_err_set(err, r, "connect to %s port %d: %s", host, port,
				  strerror(-r));
	}
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
	if (soerr) {
		close(fd);
		return ll_err_set(err, -soerr, "connect to %s port %d: %s", host,
				  port, strerror(soerr));
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	*out = fd;
	return 0;
}

static int connect_control(struct client *t, struct ll_err *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM }, *res, *ai;
	char port[16];
	int r;

	snprintf(port, sizeof(port), "%d", t->o.port);
	r = getaddrinfo(t->o.host, port, &hints, &res);
	if (r)
		return ll_err_set(err, -EHOSTUNREACH, "resolve %s: %s", t->o.host,
				  gai_strerror(r));
	r = -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		r = connect_addr(t, ai->ai_addr, ai->ai_addrlen, false,
				 &t->ctrl_fd, err);
		if (r == 0) {
			memcpy(&t->addr, ai->ai_addr, ai->ai_addrlen);
			t->addrlen = ai->ai_addrlen;
			break;
		}
		if (r == -ECANCELED)
			break;
	}
	freeaddrinfo(res);
	return r;
}

/* Read one state byte, honouring stop and the connect timeout (< 0: none). */
static int read_state(struct client *t, int *state, int tmo, struct ll_err *err)
{
	int r = wait_or_stop(t, t->ctrl_fd, POLLIN, tmo);

	if (r == 0)
		return ll_err_set(err, -ETIMEDOUT,
				  "server %s port %d silent for %g s (no protocol answer)",
				  t->o.host, t->o.port, (double)tmo / 1000);
	if (r == -ECANCELED)
		return ll_err_set(err, r, "test stopped");
	if (r < 0)
		return ll_err_set(err, r, "poll: %s", strerror(-r));
	return iperf3_recv_state(t->ctrl_fd, state, 1000, err);
}

/* Turn an unexpected state into an error (busy, server error, terminate). */
static int bad_state(struct client *t, int state, const char *waiting,
		     struct ll_err *err)
{
	switch (state) {
	case IPERF3_ACCESS_DENIED:
		return ll_err_set(err, -EBUSY,
				  "server %s port %d is busy running a test (ACCESS_DENIED); try later",
				  t->o.host, t->o.port);
	case IPERF3_SERVER_ERROR:
		return iperf3_read_server_error(t->ctrl_fd, 5000, err);
	case IPERF3_SERVER_TERMINATE:
		return ll_err_set(err, -ECONNABORTED,
				  "the server has terminated the test (SERVER_TERMINATE)");
	default:
		if (!strcmp(iperf3_state_name(state), "unknown"))
			return ll_err_set(err, -EPROTO,
					  "%s port %d does not speak iperf3: it sent byte 0x%02x%s%c%s while linklab waited for %s",
					  t->o.host, t->o.port, state & 0xff,
					  state > 32 && state < 127 ? " ('" : "",
					  state > 32 && state < 127 ? state : ' ',
					  state > 32 && state < 127 ? "')" : "", waiting);
		return ll_err_set(err, -EPROTO,
				  "protocol error: got state %d (%s) while waiting for %s",
				  state, iperf3_state_name(state), waiting);
	}
}

static uint32_t blksize(const struct client *t)
{
	if (t->len)
		return t->len;
	if (t->o.blksize)
		return t->o.blksize;
	return t->o.udp ? IPERF3_UDP_DEFAULT_LEN : IPERF3_DEFAULT_TCP_BLKSIZE;
}

/* iperf3_udp_connect: connect()ed UDP socket, "9876" out, 4-byte reply in
 * (in -R data may arrive first: skipped). The hello is one datagram: on a
 * lossy path (the dial under test) it or its reply may be lost, so it is
 * sent again every UDP_HELLO_RESEND_MS until the reply or the connect
 * timeout. A server that got both takes the second as a short datagram:
 * linklab's receiver skips it, iperf3's counts it as one out of order. */
#define UDP_HELLO_RESEND_MS 1000
static int udp_connect(struct client *t, int *out, struct ll_err *err)
{
	const struct sockaddr *sa = (const struct sockaddr *)&t->addr;
	char host[INET6_ADDRSTRLEN], buf[64];
	int port, fd, r;
	double until = iperf3_now() + t->o.connect_timeout;

	addr_text(sa, t->addrlen, host, sizeof(host), &port);
	fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ll_err_set(err, -errno, "UDP socket: %s", strerror(errno));
	if (t->o.window) {
		int w = (int)t->o.window;
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &w, sizeof(w));
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &w, sizeof(w));
	}
	if (connect(fd, sa, t->addrlen) < 0 ||
	    send(fd, IPERF3_UDP_HELLO, 4, 0) != 4) {
		r = -errno;
		close(fd);
		return ll_err_set(err, r, "UDP to %s port %d: %s", host, port,
				  strerror(-r));
	}
	for (;;) {
		int left = (int)((until - iperf3_now()) * 1000);

		r = wait_or_stop(t, fd, POLLIN, left > UDP_HELLO_RESEND_MS ? UDP_HELLO_RESEND_MS :
				 left > 0 ? left : 0);
		if (r == 0 && left > UDP_HELLO_RESEND_MS) {
			if (send(fd, IPERF3_UDP_HELLO, 4, 0) == 4)
				continue;
			r = -errno;
		}
		if (r <= 0) {
			close(fd);
			if (r == -ECANCELED)
				return ll_err_set(err, r, "stopped");
			return ll_err_set(err, r ? r : -ETIMEDOUT,
					  "UDP to %s port %d: no reply to the stream hello within %g s",
					  host, port, t->o.connect_timeout);
		}
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			r = -errno;
			close(fd);
			return ll_err_set(err, r, "UDP to %s port %d: %s", host, port,
					  strerror(-r));
		}
		if (n == 4)
			break;   /* "6789" (or a legacy 987654321) */
	}
	*out = fd;
	return 0;
}

static int nstreams_total(const struct client *t)
{
	return t->o.bidir ? 2 * t->o.streams : t->o.streams;
}

static int create_streams(struct client *t, struct ll_err *err)
{
	/* --bidir: our N sending streams first, then N receiving (iperf3
	 * iperf_create_streams order; the server labels them the same way) */
	for (int i = 0; i < nstreams_total(t); i++) {
		struct iperf3_stream *s = &t->st[i];
		struct conn_info *c = &t->conn[i];
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd, r;

		if (t->o.udp)
			r = udp_connect(t, &fd, err);
		else
			r = connect_addr(t, (struct sockaddr *)&t->addr, t->addrlen,
					 true, &fd, err);
		if (r < 0) {
			ll_err_prefix(err, "stream %d: ", i + 1);
			return r;
		}
		s->fd = fd;
		s->id = iperf3_stream_id(i);
		s->sender = t->o.bidir ? i < t->o.streams : !t->o.reverse;
		s->len = blksize(t);
		s->udp = t->o.udp;
		s->rate = t->o.bitrate;   /* per stream, as iperf3 -b (man iperf3) */
		s->stop = s->sender ? &t->streams_stop : &t->rx_stop;
		s->seq64 = t->o.udp64;
		s->gso = t->o.gso;
		s->rcvbuf_boost = t->o.udp && !t->o.window;
		s->zerocopy = t->o.zerocopy && !t->o.udp;
		s->budget = t->budget;
		s->budget_used = &t->budget_used;
		s->notify_fd = &t->donepipe[1];
		t->n = i + 1;
		r = t->o.udp ? 0 : iperf3_write_full(fd, t->cookie,
						      IPERF3_COOKIE_SIZE, 10000, err);
		if (r < 0) {
			ll_err_prefix(err, "stream %d: sending cookie: ", i + 1);
			return r;
		}
		c->fd = fd;
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		addr_text((struct sockaddr *)&ss, sl, c->lhost, sizeof(c->lhost),
			  &c->lport);
		sl = sizeof(ss);
		getpeername(fd, (struct sockaddr *)&ss, &sl);
		addr_text((struct sockaddr *)&ss, sl, c->rhost, sizeof(c->rhost),
			  &c->rport);
		t->acc[i].min_rtt = -1;
		t->acc[i].max_rtt = -1;
		t->acc[i].max_cwnd = -1;
		t->acc[i].last_retr = -1;
		t->acc[i].max_snd_wnd = -1;
	}
	if (t->n && !t->o.udp) {
		int v;
		socklen_t sl = sizeof(v);
		if (getsockopt(t->st[0].fd, IPPROTO_TCP, TCP_MAXSEG, &v, &sl) == 0)
			t->mss = v;
		sl = sizeof(v);
		if (getsockopt(t->st[0].fd, SOL_SOCKET, SO_SNDBUF, &v, &sl) == 0)
			t->sndbuf = v;
		sl = sizeof(v);
		if (getsockopt(t->st[0].fd, SOL_SOCKET, SO_RCVBUF, &v, &sl) == 0)
			t->rcvbuf = v;
	}
	return 0;
}

/* ---- measurement ---------------------------------------------------------- */

/* Is stream i in the client-to-server direction's sums (all streams unless
 * --bidir, where the first half is)? */
static bool forward_dir(const struct client *t, int i)
{
	return !t->o.bidir || i < t->o.streams;
}

static void sum_init(struct client_stream_sample *sum, bool sender, bool udp,
		     double start, double end)
{
	memset(sum, 0, sizeof(*sum));
	sum->id = -1;
	sum->sender = sender;
	sum->start = start;
	sum->end = end;
	sum->retransmits = sender && !udp ? 0 : -1;
	sum->snd_cwnd = sum->rtt_us = sum->rttvar_us = sum->pmtu = -1;
	sum->snd_wnd = -1;
	sum->packets = udp ? 0 : -1;
	sum->lost = udp && !sender ? 0 : -1;
	sum->outoforder = sum->dups = -1;   /* per stream, end only */
}

/* Keep a local interval (for client_json) and queue it as an event. */
static void record_interval(struct client *t, struct client_event *ev)
{
	pthread_mutex_lock(&t->mu);
	if (t->niv == t->caiv) {
		size_t nc = t->caiv ? t->caiv * 2 : 16;
		struct client_interval *p = realloc(t->iv, nc * sizeof(*p));
		if (p) {
			t->iv = p;
			t->caiv = nc;
		}
	}
	if (t->niv < t->caiv)
		t->iv[t->niv++] = ev->interval;
	pthread_mutex_unlock(&t->mu);
	queue_event(t, ev);
}

/* A live sample from linklab serve: queue it as a remote interval. */
static int live_sample(struct client *t, struct ll_err *err)
{
	cJSON *j = NULL;
	int r = iperf3_json_read(t->ctrl_fd, &j, IPERF3_MAX_JSON, 5000, err);

	if (r < 0) {
		ll_err_prefix(err, "live sample: ");
		return r;
	}
	struct client_event *ev = calloc(1, sizeof(*ev));
	if (!ev) {
		cJSON_Delete(j);
		return ll_err_set(err, -ENOMEM, "live sample: out of memory");
	}
	struct client_interval *iv = &ev->interval;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "streams"), *o;
	double st = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "start"));
	double en = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "end"));

	if (!isfinite(st) || !isfinite(en) || en < st)
		st = en = 0;
	ev->kind = CLIENT_EV_INTERVAL;
	iv->remote = true;
	sum_init(&iv->sum, true, t->o.udp, st, en);
	sum_init(&iv->sum_reverse, false, t->o.udp, st, en);
	iv->sum.remote = true;
	cJSON_ArrayForEach(o, a) {
		if (iv->nstreams >= CLIENT_MAX_STREAMS)
			break;
		struct client_stream_sample *s = &iv->s[iv->nstreams++];
		memset(s, 0, sizeof(*s));
		s->id = (int)iperf3_json_int(cJSON_GetObjectItemCaseSensitive(o, "id"));
		s->sender = true;
		s->remote = true;
		s->start = st;
		s->end = en;
		int64_t b = iperf3_json_int(cJSON_GetObjectItemCaseSensitive(o, "bytes"));
		s->bytes = b > 0 ? (uint64_t)b : 0;
		s->bps = en > st ? (double)s->bytes * 8 / (en - st) : 0;
#define GETI(f, key) do { \
		const cJSON *v_ = cJSON_GetObjectItemCaseSensitive(o, key); \
		s->f = cJSON_IsNumber(v_) ? iperf3_json_int(v_) : -1; } while (0)
		GETI(retransmits, "retransmits");
		GETI(snd_cwnd, "snd_cwnd");
		GETI(rtt_us, "rtt");
		GETI(rttvar_us, "rttvar");
		GETI(pmtu, "pmtu");
#undef GETI
		s->packets = s->lost = s->outoforder = s->dups = -1;
		s->snd_wnd = -1;
		iv->sum.bytes += s->bytes;
		if (s->retransmits > 0)
			iv->sum.retransmits += s->retransmits;
	}
	iv->sum.bps = en > st ? (double)iv->sum.bytes * 8 / (en - st) : 0;
	cJSON_Delete(j);
	queue_event(t, ev);
	free(ev);
	return 0;
}

/* Read the control connection during the test: 1 = a live sample was
 * handled, 0 = *st holds a state byte, < 0 error. */
static int live_or_state(struct client *t, int *st, struct ll_err *err)
{
	int r = iperf3_recv_state(t->ctrl_fd, st, 1000, err);

	if (r < 0)
		return r;
	if (*st == IPERF3_LINKLAB_SAMPLE && t->o.live > 0) {
		r = live_sample(t, err);
		return r < 0 ? r : 1;
	}
	return 0;
}

/* One interval of every stream. last: the test's final interval, where a
 * gap still open is lost (earlier intervals count only settled gaps,
 * udpstats.h). */
static void take_interval(struct client *t, double start, double end,
			  bool omitted, bool last)
{
	struct client_event *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return;
	struct client_interval *iv = &ev->interval;
	double secs = end - start;
	int nfwd = t->o.bidir ? t->o.streams : t->n;
	int nrev = t->n - nfwd;

	ev->kind = CLIENT_EV_INTERVAL;
	iv->nstreams = t->n;
	sum_init(&iv->sum, t->n ? t->st[0].sender : !t->o.reverse, t->o.udp,
		 start, end);
	sum_init(&iv->sum_reverse, false, t->o.udp, start, end);
	iv->sum.omitted = iv->sum_reverse.omitted = omitted;
	for (int i = 0; i < t->n; i++) {
		struct client_stream_sample *s = &iv->s[i];
		struct stream_acc *a = &t->acc[i];
		bool sender = t->st[i].sender;
		struct client_stream_sample *sum = forward_dir(t, i) ? &iv->sum :
						 &iv->sum_reverse;
		int nsum = forward_dir(t, i) ? nfwd : nrev;
		uint64_t b = atomic_load_explicit(&t->st[i].bytes,
						  memory_order_relaxed);

		s->id = t->st[i].id;
		s->sender = sender;
		s->start = start;
		s->end = end;
		s->omitted = omitted;
		s->bytes = b - a->last_bytes;
		a->last_bytes = b;
		s->bps = secs > 0 ? (double)s->bytes * 8 / secs : 0;
		s->retransmits = s->snd_cwnd = s->rtt_us = s->rttvar_us = -1;
		s->pmtu = s->snd_wnd = -1;
		s->packets = s->lost = -1;
		s->outoforder = s->dups = -1;
		if (t->o.udp) {
			uint64_t pk = atomic_load(&t->st[i].packets);
			int64_t lo = last ? atomic_load(&t->st[i].lost) :
				     (int64_t)atomic_load(&t->st[i].settled_lost);
			s->packets = pk > a->last_packets ?
				     (int64_t)(pk - a->last_packets) : 0;
			a->last_packets = pk;
			sum->packets += s->packets;
			if (!sender) {
				/* a gap counts once it is settled (or at the
				 * end), at most the interval's datagrams: 0 <=
				 * lost <= total, the rest carried over */
				s->lost = (int64_t)udpstats_interval_lost(
					lo > 0 ? (uint64_t)lo : 0, &a->lost_reported,
					(uint64_t)s->packets);
				s->jitter_ms = iperf3_stream_jitter(&t->st[i]) * 1000;
				int64_t oo = atomic_load(&t->st[i].outoforder);
				s->outoforder = oo > a->last_ooo ? oo - a->last_ooo : 0;
				a->last_ooo = oo;
				s->dups = (int64_t)atomic_load(&t->st[i].dups);
				sum->lost += s->lost;
				sum->jitter_ms += s->jitter_ms / nsum;
			}
		} else if (sender) {
			struct iperf3_tcpinfo ti;
			if (iperf3_tcp_info(t->st[i].fd, &ti) == 0) {
				int64_t prev = a->last_retr < 0 ? 0 : a->last_retr;
				s->retransmits = ti.total_retrans - prev;
				a->last_retr = ti.total_retrans;
				s->snd_cwnd = ti.snd_cwnd;
				s->rtt_us = ti.rtt_us;
				s->rttvar_us = ti.rttvar_us;
				s->pmtu = ti.pmtu;
				s->snd_wnd = ti.snd_wnd;
				if (ti.snd_wnd > a->max_snd_wnd)
					a->max_snd_wnd = ti.snd_wnd;
				if (!omitted) {
					if (ti.snd_cwnd > a->max_cwnd)
						a->max_cwnd = ti.snd_cwnd;
					if (a->min_rtt < 0 || ti.rtt_us < a->min_rtt)
						a->min_rtt = ti.rtt_us;
					if (ti.rtt_us > a->max_rtt)
						a->max_rtt = ti.rtt_us;
					a->rtt_sum += (double)ti.rtt_us;
					a->rtt_n++;
				}
				sum->retransmits += s->retransmits;
			}
		}
		sum->bytes += s->bytes;
	}
	iv->sum.bps = secs > 0 ? (double)iv->sum.bytes * 8 / secs : 0;
	iv->sum_reverse.bps = secs > 0 ? (double)iv->sum_reverse.bytes * 8 / secs : 0;
	record_interval(t, ev);
	free(ev);
}

/* End of -O: the counted part starts now (iperf3 iperf_reset_stats). */
static void end_omit(struct client *t)
{
	for (int i = 0; i < t->n; i++) {
		struct iperf3_stream *s = &t->st[i];
		iperf3_stream_end_omit(s);
		struct iperf3_tcpinfo ti;
		if (s->sender && !t->o.udp && iperf3_tcp_info(s->fd, &ti) == 0)
			t->acc[i].omit_retr = ti.total_retrans;
	}
	t->t_count = iperf3_now();
}

static bool all_senders_finished(struct client *t)
{
	bool any = false;

	for (int i = 0; i < t->n; i++)
		if (t->st[i].sender) {
			any = true;
			if (!atomic_load(&t->st[i].finished))
				return false;
		}
	return any;
}

static uint64_t received_total(struct client *t)
{
	uint64_t b = 0;

	for (int i = 0; i < t->n; i++)
		if (!t->st[i].sender)
			b += atomic_load(&t->st[i].bytes);
	return b;
}

/* -n/-k reached: our senders spent the budget, or (-R) we received it */
static bool budget_done(struct client *t)
{
	if (!t->budget)
		return false;
	if (all_senders_finished(t))
		return true;
	return t->o.reverse && received_total(t) >= t->budget;
}

static void stop_receivers(struct client *t);
static void finish_senders(struct client *t);

/* The end of the test: our workers stop moving bytes before the last
 * interval is taken, so that the intervals add up to the end totals (bytes
 * sent while the control thread waited for a core went into the end total
 * and no interval: 3.7 % of a 1 s loopback test on a loaded machine).
 * By time, the receivers stop counting too (as iperf3); with -n/-k they
 * drain later. Returns the time the streams stopped. */
static double halt_streams(struct client *t)
{
	if (!t->budget)
		stop_receivers(t);
	finish_senders(t);
	return iperf3_now();
}

/* Run from TEST_RUNNING until -t elapses or stop; returns 0 or error. */
/* arms the interval timer for the absolute time wake (s, CLOCK_MONOTONIC);
 * an infinite wake disarms it */
static void arm_interval_timer(int tfd, double wake)
{
	struct itimerspec its = { 0 };
	if (isfinite(wake)) {   /* else (-i 0 with -n/-k): disarmed */
		its.it_value.tv_sec = (time_t)wake;
		its.it_value.tv_nsec = (long)((wake - floor(wake)) * 1e9);
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* a control-channel byte during the test: *cont is set when the test goes
 * on (a live sample, or a repeated TEST_RUNNING); else the error to stop on */
static int interval_ctrl(struct client *t, bool *cont, struct ll_err *err)
{
	int st;
	int r = live_or_state(t, &st, err);

	*cont = false;
	if (r < 0)
		return r;
	if (r == 1 || st == IPERF3_TEST_RUNNING) {
		*cont = true;   /* live sample, or repeated: no-op */
		return 0;
	}
	return bad_state(t, st, "the end of the test", err);
}

static int run_intervals(struct client *t, struct ll_err *err)
{
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	bool omitting = t->o.omit > 0;
	double t_base = t->t0;   /* interval times count from here */
	double omit_end = t->t0 + t->o.omit;
	double deadline = t->budget ? INFINITY : omit_end + t->o.duration;
	/* -i 0 (iperf3): no periodic reports, one interval for the whole test */
	double every = t->o.interval > 0 ? t->o.interval : INFINITY;
	double next = t->t0 + every, prev = 0;
	int rc = 0;

	if (tfd < 0)
		return ll_err_set(err, -errno, "timerfd_create: %s", strerror(errno));
	t->t_count = t->t0;
	for (;;) {
		double wake = next < deadline ? next : deadline;
		if (omitting && omit_end < wake)
			wake = omit_end;
		arm_interval_timer(tfd, wake);

		struct pollfd p[4] = {
			{ .fd = tfd, .events = POLLIN },
			{ .fd = t->ctrl_fd, .events = POLLIN },
			{ .fd = t->stoppipe[0], .events = POLLIN },
			{ .fd = t->donepipe[0], .events = POLLIN },
		};
		/* -R -n: the received count is polled every 20 ms */
		int r = poll(p, 4, t->budget && t->o.reverse ? 20 : -1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = ll_err_set(err, -errno, "poll: %s", strerror(errno));
			break;
		}
		if (p[1].revents) {
			bool cont;

			rc = interval_ctrl(t, &cont, err);
			if (cont)
				continue;
			break;
		}
		if (p[3].revents) {
			char b[64];
			if (read(t->donepipe[0], b, sizeof(b)) < 0) {
				/* drained */
			}
		}
		double now = iperf3_now();
		if (p[2].revents || atomic_load(&t->stop_req) || budget_done(t)) {
			now = halt_streams(t);
			if (now - t_base - prev > 0.01 || prev == 0)
				take_interval(t, prev, now - t_base, omitting, true);
			break;
		}
		if (p[0].revents) {
			uint64_t exp;
			if (read(tfd, &exp, sizeof(exp)) < 0) {
				/* spurious */
			}
		}
		if (omitting && now >= omit_end) {
			/* the omitted interval ends here; counting starts at 0 */
			if (now - t_base - prev > 0.001)
				take_interval(t, prev, now - t_base, true, false);
			end_omit(t);
			omitting = false;
			t_base = t->t_count;
			prev = 0;
			next = t_base + every;
			deadline = t->budget ? INFINITY : t_base + t->o.duration;
			continue;
		}
		if (now >= deadline) {
			now = halt_streams(t);
			if (now - t_base - prev > 0.01)
				take_interval(t, prev, now - t_base, omitting, true);
			break;
		}
		if (now >= next) {
			take_interval(t, prev, now - t_base, omitting, false);
			prev = now - t_base;
			while (next <= now)
				next += every;
		}
	}
	close(tfd);
	return rc;
}

static void stop_streams(struct client *t)
{
	atomic_store(&t->streams_stop, true);
	atomic_store(&t->rx_stop, true);
	iperf3_gate_open(&t->gate);   /* gated workers then see stop and end */
}

static void join_streams(struct client *t)
{
	atomic_store(&t->streams_stop, true);
	atomic_store(&t->rx_stop, true);
	iperf3_gate_open(&t->gate);
	for (int i = 0; i < t->n; i++)
		if (t->st[i].fd >= 0)
			shutdown(t->st[i].fd, SHUT_RDWR);
	for (int i = 0; i < t->n; i++)
		iperf3_stream_join(&t->st[i]);
}

static void fill_sample(struct client_stream_sample *s, int id, bool sender,
			double dur, uint64_t bytes, int64_t retr)
{
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->sender = sender;
	s->start = 0;
	s->end = dur;
	s->bytes = bytes;
	s->bps = dur > 0 ? (double)bytes * 8 / dur : 0;
	s->retransmits = retr;
	s->snd_cwnd = s->rtt_us = s->rttvar_us = s->pmtu = -1;
	s->snd_wnd = -1;
	s->packets = s->lost = -1;
	s->outoforder = s->dups = -1;
}

/* Totals of one direction over streams [from, to) into sum_sent/sum_received. */
static void sum_dir(struct client *t, int from, int to, double dur,
		    struct client_stream_sample *ss, struct client_stream_sample *sr)
{
	struct client_summary *S = &t->sum;
	uint64_t ts = 0, tr = 0;
	int64_t rs = 0, pk_s = 0, pk_r = 0, lost = 0, dups = -1;
	double jit = 0;
	int n = to - from;

	for (int i = from; i < to; i++) {
		ts += S->sent[i].bytes;
		tr += S->received[i].bytes;
		if (S->sent[i].retransmits > 0)
			rs += S->sent[i].retransmits;
		if (t->o.udp) {
			pk_s += S->sent[i].packets;
			pk_r += S->received[i].packets;
			if (S->received[i].lost < 0 || lost < 0)
				lost = -1;   /* one unknown: the sum too */
			else
				lost += S->received[i].lost;
			jit += S->received[i].jitter_ms / n;
			if (S->received[i].dups >= 0)
				dups = (dups < 0 ? 0 : dups) + S->received[i].dups;
		}
	}
	double sdur = n ? S->sent[from].end : dur, rdur = n ? S->received[from].end : dur;
	fill_sample(ss, -1, true, sdur, ts, t->o.udp ? -1 : rs);
	fill_sample(sr, -1, false, rdur, tr, -1);
	if (t->o.udp) {
		ss->packets = pk_s;
		sr->packets = pk_r;
		sr->lost = lost;
		sr->jitter_ms = jit;
		sr->dups = dups;
	}
}

static void build_summary(struct client *t, double dur, const int64_t *retr)
{
	struct client_summary *S = &t->sum;
	bool rev = t->o.reverse;

	memset(S, 0, sizeof(*S));
	S->nstreams = t->n;
	S->duration = dur;
	for (int i = 0; i < t->n; i++) {
		bool mine_sent = t->st[i].sender;
		uint64_t mine = atomic_load(&t->st[i].bytes) - t->st[i].omit_bytes,
			 theirs = 0;
		int64_t their_retr = -1, their_pk = 0, their_err = 0, their_dups = -1;
		int64_t their_ooo = -1;
		double their_jit = 0;
		double their_dur = dur;
		const struct iperf3_stream_result *o = iperf3_results_stream(&t->remote,
									    t->st[i].id);
		if (o) {
			theirs = o->bytes;
			their_retr = o->retransmits;
			iperf3_udp_counted(o, (int64_t)t->st[i].omit_packets,
					   &their_pk, &their_err);
			their_jit = o->jitter;
			if (o->has_dups)
				their_dups = (int64_t)o->dups;
			if (o->has_ooo)
				their_ooo = (int64_t)o->ooo;
			if (o->has_times && o->end_time > o->start_time)
				their_dur = o->end_time - o->start_time;
		}
		if (mine_sent) {
			fill_sample(&S->sent[i], t->st[i].id, true, dur, mine, retr[i]);
			fill_sample(&S->received[i], t->st[i].id, false, their_dur,
				    theirs, -1);
			S->sent[i].snd_cwnd = t->acc[i].max_cwnd;
			S->sent[i].rtt_us = t->acc[i].rtt_n ?
				(int64_t)(t->acc[i].rtt_sum / (double)t->acc[i].rtt_n) : -1;
		} else {
			fill_sample(&S->sent[i], t->st[i].id, true, their_dur, theirs,
				    their_retr);
			fill_sample(&S->received[i], t->st[i].id, false, dur, mine, -1);
		}
		if (t->o.udp) {
			struct client_stream_sample *snd = &S->sent[i], *rcv = &S->received[i];
			int64_t my_pk = (int64_t)(atomic_load(&t->st[i].packets) -
						  t->st[i].omit_packets);
			int64_t my_lost = atomic_load(&t->st[i].lost) -
					  t->st[i].omit_lost;
			snd->packets = mine_sent ? my_pk : their_pk;
			rcv->packets = mine_sent ? their_pk : my_pk;
			rcv->lost = mine_sent ? their_err : my_lost;
			if (rcv->lost < 0 && !(mine_sent && their_err == -1))
				rcv->lost = 0;   /* -1: the peer's omitted loss unknown */
			if (rcv->lost > rcv->packets)   /* 0 <= lost <= total */
				rcv->lost = rcv->packets > 0 ? rcv->packets : 0;
			if (!mine_sent) {
				int64_t oo = atomic_load(&t->st[i].outoforder) -
					     t->st[i].omit_ooo;
				rcv->outoforder = oo > 0 ? oo : 0;
				rcv->dups = (int64_t)atomic_load(&t->st[i].dups);
			} else {
				/* linklab serve passes its counts; iperf3 -s none */
				rcv->outoforder = their_ooo;
				rcv->dups = their_dups;
			}
			rcv->jitter_ms = (mine_sent ? their_jit :
					  iperf3_stream_jitter(&t->st[i])) * 1000;
			snd->retransmits = -1;
		}
	}
	int nfwd = t->o.bidir ? t->o.streams : t->n;
	sum_dir(t, 0, nfwd, dur, &S->sum_sent, &S->sum_received);
	if (t->o.bidir)
		sum_dir(t, nfwd, t->n, dur, &S->sum_sent_reverse,
			&S->sum_received_reverse);
	if (!rev && t->remote.congestion_used[0])
		snprintf(S->receiver_cc, sizeof(S->receiver_cc), "%s",
			 t->remote.congestion_used);
	if (rev && t->remote.congestion_used[0])
		snprintf(S->sender_cc, sizeof(S->sender_cc), "%s",
			 t->remote.congestion_used);
	char cc[32];
	iperf3_socket_cc(t->n && t->st[0].fd >= 0 ? t->st[0].fd : t->ctrl_fd,
			 cc, sizeof(cc));
	if (cc[0])
		snprintf(rev ? S->receiver_cc : S->sender_cc, sizeof(S->sender_cc),
			 "%s", cc);
	S->rtt_idle = t->rtt_idle;
	S->rtt_load = t->rtt_load;
}

/* Wait for the receiving workers to read what is still in flight: until
 * each ended (EOF: the peer closed its side after its last byte) or none
 * got a byte for 100 ms; at most 2 s. */
static void drain_receivers(struct client *t)
{
	double until = iperf3_now() + 2.0, quiet_since = iperf3_now();
	uint64_t last = received_total(t);

	for (;;) {
		bool open_rx = false;
		for (int i = 0; i < t->n; i++)
			if (!t->st[i].sender && t->st[i].running &&
			    !atomic_load(&t->st[i].finished))
				open_rx = true;
		double now = iperf3_now();
		if (!open_rx || now >= until || atomic_load(&t->abandon))
			return;
		uint64_t b = received_total(t);
		if (b != last) {
			last = b;
			quiet_since = now;
		} else if (now - quiet_since >= 0.1) {
			return;
		}
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* -n/-k: before TEST_END, let the peer's receivers take the last bytes:
 * an iperf3 server stops reading streams as soon as TEST_END arrives, so
 * wait until every byte we sent is acknowledged (SIOCOUTQ 0), then two
 * smoothed RTTs more (at least 20 ms) for its application to read them.
 * At most 2 s. */
static void wait_acked(struct client *t)
{
	double until = iperf3_now() + 2.0;
	int64_t rtt = 0;

	for (int i = 0; i < t->n; i++) {
		if (!t->st[i].sender || t->st[i].fd < 0)
			continue;
		for (;;) {
			int q = 0;
			if (ioctl(t->st[i].fd, SIOCOUTQ, &q) < 0 || q == 0 ||
			    iperf3_now() >= until || atomic_load(&t->abandon))
				break;
			struct timespec ts = { 0, 2 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		struct iperf3_tcpinfo ti;
		if (iperf3_tcp_info(t->st[i].fd, &ti) == 0 && ti.rtt_us > rtt)
			rtt = ti.rtt_us;
	}
	double extra = 0.02 + 2.0 * (double)rtt / 1e6;
	if (extra > 0.2)
		extra = 0.2;
	struct timespec ts = { 0, (long)(extra * 1e9) };
	nanosleep(&ts, NULL);
}

/* Time mode: the receivers stop counting at the end of the test (bytes
 * still in flight or queued belong to no interval; iperf3 stops reading
 * when it sends TEST_END). */
static void stop_receivers(struct client *t)
{
	atomic_store(&t->rx_stop, true);
	for (int i = 0; i < t->n; i++)
		if (!t->st[i].sender && t->st[i].fd >= 0 && t->st[i].running) {
			shutdown(t->st[i].fd, t->o.udp ? SHUT_RDWR : SHUT_RD);
			iperf3_stream_join(&t->st[i]);
		}
}

/* Our sending workers end; TCP streams then send FIN after their last byte
 * so that the receiver can drain up to it. */
static void finish_senders(struct client *t)
{
	atomic_store(&t->streams_stop, true);
	iperf3_gate_open(&t->gate);
	for (int i = 0; i < t->n; i++)
		if (t->st[i].sender && t->st[i].fd >= 0 && t->st[i].running) {
			if (t->o.udp)
				shutdown(t->st[i].fd, SHUT_RDWR);   /* wakes it */
			else if (!atomic_load(&t->st[i].finished))
				shutdown(t->st[i].fd, SHUT_WR);
			iperf3_stream_join(&t->st[i]);
		}
	for (int i = 0; i < t->n; i++)
		if (t->st[i].sender && t->st[i].fd >= 0 && !t->o.udp)
			shutdown(t->st[i].fd, SHUT_WR);
}

static void *probe_main(void *arg)
{
	struct client *t = arg;
	sigset_t all;
	int count = (int)((t->o.omit + t->o.duration) * 10) + 50;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (t->budget)
		count = 36000;   /* -n/-k: until the end, at most an hour */
	rtt_prober_run(t->prober, count, 0.1, 0.5, &t->probe_stop,
		       &t->rtt_load, NULL);
	return NULL;
}

/* A state byte the server sent before our cookie (only a refusal comes
 * that early): 0 if none is waiting, else bad_state()'s error (-EBUSY for
 * ACCESS_DENIED). */
static int early_state(struct client *t, struct ll_err *err)
{
	struct pollfd pf = { .fd = t->ctrl_fd, .events = POLLIN };
	signed char b;

	if (poll(&pf, 1, 0) != 1 || !(pf.revents & POLLIN))
		return 0;
	if (recv(t->ctrl_fd, &b, 1, MSG_DONTWAIT | MSG_PEEK) != 1)
		return 0;
	if (b != IPERF3_ACCESS_DENIED)
		return 0;   /* not a refusal: the normal path reads it */
	(void)recv(t->ctrl_fd, &b, 1, MSG_DONTWAIT);
	return bad_state(t, b, "PARAM_EXCHANGE", err);
}

/* Connect the control connection, measure the idle RTT (--rtt), settle the
 * block length and the -n/-k budget, and send our cookie (a busy server's
 * early refusal taken first: -EBUSY). */
static int client_proto_hello(struct client *t, struct ll_err *err)
{
	int r;

	r = connect_control(t, err);
	if (r < 0)
		return r;
	if (t->o.rtt && rtt_prober_open(&t->prober, (struct sockaddr *)&t->addr,
					t->addrlen, NULL) == 0)
		/* idle RTT: 10 probes, 20 ms apart, before the test loads the path */
		rtt_prober_run(t->prober, 10, 0.02, 0.5, &t->stop_req,
			       &t->rtt_idle, NULL);
	if (!t->o.blksize)
		t->len = t->o.udp ? iperf3_udp_default_len(t->ctrl_fd) :
			 IPERF3_DEFAULT_TCP_BLKSIZE;
	else
		t->len = t->o.blksize;
	t->budget = t->o.bytes ? t->o.bytes : t->o.blocks * t->len;
	/* a busy server may refuse before our cookie arrives (ACCESS_DENIED,
	 * then its close): take that byte first, so the reset our cookie
	 * would cause cannot hide it. "busy" only if -2 was read. */
	r = early_state(t, err);
	if (r < 0)
		return r;
	r = iperf3_write_full(t->ctrl_fd, t->cookie, IPERF3_COOKIE_SIZE,
			      timeout_ms(t), err);
	if (r < 0) {
		struct ll_err e2 = { 0 };

		if (early_state(t, &e2) == -EBUSY) {
			*err = e2;
			return -EBUSY;
		}
		ll_err_prefix(err, "sending cookie: ");
		return r;
	}
	return 0;
}

/* PARAM_EXCHANGE: send the test's parameters as iperf3's JSON. */
static int client_proto_send_params(struct client *t, struct ll_err *err)
{
	struct iperf3_params p;
	int r;

	iperf3_params_init(&p);
	p.time = t->o.duration;
	p.omit = t->o.omit;
	p.num = t->o.bytes;
	p.blockcount = t->o.blocks;
	p.parallel = t->o.streams;
	p.reverse = t->o.reverse;
	p.bidir = t->o.bidir;
	p.window = t->o.window;
	p.udp = t->o.udp;
	p.len = blksize(t);
	p.bandwidth = t->o.bitrate;
	p.mss = t->o.mss;
	p.nodelay = t->o.nodelay;
	p.zerocopy = t->o.zerocopy;
	p.udp_counters_64bit = t->o.udp64;
	p.gso = t->o.gso && t->o.udp;
	p.live_interval = t->o.live;
	snprintf(p.congestion, sizeof(p.congestion), "%s",
		 t->o.congestion);
	cJSON *j = iperf3_params_build(&p);
	if (!j)
		return ll_err_set(err, -ENOMEM, "params: out of memory");
	r = iperf3_json_write(t->ctrl_fd, j, timeout_ms(t), err);
	cJSON_Delete(j);
	return r < 0 ? r : 0;
}

/* Follow the server's states up to TEST_RUNNING: parameters sent,
 * streams created; anything else is a protocol error. */
static int client_proto_setup(struct client *t, struct ll_err *err)
{
	int state, r;

	for (;;) {
		r = read_state(t, &state, timeout_ms(t), err);
		if (r < 0)
			return r;
		if (state == IPERF3_PARAM_EXCHANGE) {
			r = client_proto_send_params(t, err);
			if (r < 0)
				return r;
		} else if (state == IPERF3_CREATE_STREAMS) {
			r = create_streams(t, err);
			if (r < 0)
				return r;
		} else if (state == IPERF3_TEST_START) {
			continue;
		} else if (state == IPERF3_TEST_RUNNING) {
			break;
		} else {
			return bad_state(t, state, "TEST_RUNNING", err);
		}
	}
	if (t->n != nstreams_total(t))
		return ll_err_set(err, -EPROTO,
				  "protocol error: TEST_RUNNING before CREATE_STREAMS");
	return 0;
}

/* TEST_RUNNING: start the workers behind the gate, release them at t0,
 * start the RTT prober and say CLIENT_EV_CONNECTED. */
static int client_proto_start(struct client *t, struct ll_err *err)
{
	int r;

	/* running: workers created behind the gate, then released at t0 */
	for (int i = 0; i < t->n; i++) {
		t->st[i].gate = &t->gate;
		r = iperf3_stream_start(&t->st[i], err);
		if (r < 0) {
			stop_streams(t);
			return r;
		}
	}
	t->t0 = iperf3_now();
	t->wall_start = time(NULL);
	iperf3_cpu_times(&t->cpu_u0, &t->cpu_s0);
	iperf3_gate_open(&t->gate);
	if (t->prober && pthread_create(&t->probe_th, NULL, probe_main, t) == 0)
		t->probe_started = true;
	pthread_mutex_lock(&t->mu);
	t->connected = true;
	t->running = true;
	pthread_mutex_unlock(&t->mu);
	{
		struct client_event *ev = calloc(1, sizeof(*ev));
		if (ev) {
			ev->kind = CLIENT_EV_CONNECTED;
			ev->interval.nstreams = t->n;
			queue_event(t, ev);
			free(ev);
		}
	}
	return 0;
}

/* After the intervals: stop the receivers and senders and the prober, wait
 * for the -n/-k bytes to be acked, and take each sender's retransmits. */
static void client_proto_wind_down(struct client *t)
{
	int64_t *retr = t->retr;

	/* the streams stopped in run_intervals before its last interval (here
	 * again after an error); the RTT prober may sit in a reply wait of up
	 * to 0.5 s, so it is joined after them */
	if (t->probe_started)
		atomic_store(&t->probe_stop, true);
	if (!t->budget)
		stop_receivers(t);
	finish_senders(t);
	if (t->probe_started) {
		pthread_join(t->probe_th, NULL);
		t->probe_started = false;
	}
	if (t->budget && !t->o.udp)
		wait_acked(t);
	for (int i = 0; i < t->n; i++) {
		struct iperf3_tcpinfo ti;
		retr[i] = -1;
		if (t->st[i].sender && !t->o.udp &&
		    iperf3_tcp_info(t->st[i].fd, &ti) == 0)
			retr[i] = ti.total_retrans - t->acc[i].omit_retr;
	}
}

/* TEST_END: say it, then wait for EXCHANGE_RESULTS (live samples in
 * between taken; a second stop still finishes politely). */
static int client_proto_end(struct client *t, struct ll_err *err)
{
	int state, r;

	r = iperf3_send_state(t->ctrl_fd, IPERF3_TEST_END, err);
	if (r < 0)
		return r;
	for (;;) {
		r = read_state(t, &state, timeout_ms(t) + 10000, err);
		if (r == -ECANCELED && !atomic_load(&t->abandon))
			/* a second stop: still finish politely */
			r = iperf3_recv_state(t->ctrl_fd, &state, timeout_ms(t), err);
		if (r < 0)
			return r;
		if (state == IPERF3_LINKLAB_SAMPLE && t->o.live > 0) {
			r = live_sample(t, err);
			if (r < 0)
				return r;
			continue;
		}
		break;
	}
	if (state != IPERF3_EXCHANGE_RESULTS)
		return bad_state(t, state, "EXCHANGE_RESULTS", err);
	return 0;
}

/* EXCHANGE_RESULTS: our CPU use and per-stream results over dur seconds
 * sent as iperf3's JSON, the server's read back. */
static int client_proto_exchange(struct client *t, double t_end, double dur,
				struct ll_err *err)
{
	int r;

	struct iperf3_results *res = calloc(1, sizeof(*res));
	if (!res)
		return ll_err_set(err, -ENOMEM, "results: out of memory");
	struct iperf3_side side = {
		.st = t->st, .n = t->n, .retr = t->retr,
		.sends = !t->o.reverse, .udp = t->o.udp,
		.cc_fd = t->n ? t->st[0].fd : -1,
		.wall = t_end - t->t0, .cpu_user0 = t->cpu_u0, .cpu_sys0 = t->cpu_s0,
		.dur = dur,
	};
	iperf3_results_fill(&side, res);
	t->cpu_user = res->cpu_user;
	t->cpu_system = res->cpu_system;
	t->cpu_total = res->cpu_total;
	cJSON *j = iperf3_results_build(res);
	free(res);
	if (!j)
		return ll_err_set(err, -ENOMEM, "results: out of memory");
	r = iperf3_json_write(t->ctrl_fd, j, timeout_ms(t), err);
	cJSON_Delete(j);
	if (r < 0)
		return r;
	r = iperf3_json_read(t->ctrl_fd, &j, IPERF3_MAX_JSON, timeout_ms(t), err);
	if (r < 0)
		return r;
	r = iperf3_results_parse(j, &t->remote, err);
	cJSON_Delete(j);
	if (r < 0)
		return r;
	t->have_remote = true;
	return 0;
}

/* The client's side of the iperf3 control protocol, from connect to
 * IPERF_DONE; the summary is built on DISPLAY_RESULTS. */
static int client_run(struct client *t, struct ll_err *err)
{
	int state, r;

	r = client_proto_hello(t, err);
	if (r < 0)
		return r;
	r = client_proto_setup(t, err);
	if (r < 0)
		return r;
	r = client_proto_start(t, err);
	if (r < 0)
		return r;
	r = run_intervals(t, err);
	double t_end = iperf3_now();
	client_proto_wind_down(t);
	t->t_end = t_end;
	if (r < 0)
		return r;
	r = client_proto_end(t, err);
	if (r < 0)
		return r;
	/* the peer stopped sending: read what is still in flight */
	drain_receivers(t);
	join_streams(t);

	double dur = t_end - t->t_count;
	r = client_proto_exchange(t, t_end, dur, err);
	if (r < 0)
		return r;
	r = iperf3_recv_state(t->ctrl_fd, &state, timeout_ms(t), err);
	if (r < 0)
		return r;
	if (state != IPERF3_DISPLAY_RESULTS)
		return bad_state(t, state, "DISPLAY_RESULTS", err);
	pthread_mutex_lock(&t->mu);
	build_summary(t, dur, t->retr);
	pthread_mutex_unlock(&t->mu);
	/* IPERF_DONE last; an old peer may already have closed (tolerated) */
	iperf3_send_state(t->ctrl_fd, IPERF3_IPERF_DONE, NULL);
	return 0;
}

static void *control_main(void *arg)
{
	struct client *t = arg;
	struct client_event *ev = calloc(1, sizeof(*ev));
	struct ll_err e = { 0 };
	sigset_t all;
	int r;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	r = client_run(t, &e);
	if (r < 0 && t->running) {
		/* the peer's half is missing: keep what this side measured */
		if (t->t_end == 0) {
			t->t_end = iperf3_now();
			for (int i = 0; i < t->n; i++)
				t->retr[i] = -1;
		}
		pthread_mutex_lock(&t->mu);
		t->have_remote = false;
		t->remote.nstreams = 0;
		build_summary(t, t->t_end - t->t_count, t->retr);
		t->sum.partial = true;
		pthread_mutex_unlock(&t->mu);
	}
	if (t->probe_started) {
		atomic_store(&t->probe_stop, true);
		pthread_join(t->probe_th, NULL);
		t->probe_started = false;
	}
	stop_streams(t);
	if (r < 0 && t->ctrl_fd >= 0 && r != -EBUSY && r != -ECONNRESET)
		iperf3_send_state(t->ctrl_fd, IPERF3_CLIENT_TERMINATE, NULL);
	join_streams(t);
	for (int i = 0; i < t->n; i++)
		if (t->st[i].fd >= 0) {
			close(t->st[i].fd);
			t->st[i].fd = -1;
		}
	pthread_mutex_lock(&t->mu);
	if (r < 0) {
		t->failed = true;
		t->err = e;
	} else {
		t->done = true;
	}
	pthread_mutex_unlock(&t->mu);
	if (ev) {
		ev->kind = r < 0 ? CLIENT_EV_ERROR : CLIENT_EV_DONE;
		ev->err = e;
		queue_event(t, ev);
		free(ev);
	}
	return NULL;
}

int client_start(const struct client_opts *o, struct client **out, struct ll_err *err)
{
	struct ll_diag *d = calloc(1, sizeof(*d));
	struct client *t;
	int r;

	*out = NULL;
	if (!d)
		return ll_err_set(err, -ENOMEM, "test: out of memory");
	if (client_opts_validate(o, d) < 0) {
		r = ll_diag_to_err(d, err);
		free(d);
		return r;
	}
	free(d);
	t = calloc(1, sizeof(*t));
	if (!t)
		return ll_err_set(err, -ENOMEM, "test: out of memory");
	t->o = *o;
	t->ctrl_fd = -1;
	for (int i = 0; i < CLIENT_MAX_STREAMS; i++)
		t->st[i].fd = t->conn[i].fd = -1;
	pthread_mutex_init(&t->mu, NULL);
	iperf3_gate_init(&t->gate);
	t->donepipe[0] = t->donepipe[1] = -1;
	if (pipe2(t->evpipe, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pipe2(t->stoppipe, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pipe2(t->donepipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = ll_err_set(err, -errno, "pipe: %s", strerror(errno));
		client_free(t);
		return r;
	}
	r = iperf3_make_cookie(t->cookie, err);
	if (r < 0) {
		client_free(t);
		return r;
	}
	r = pthread_create(&t->control, NULL, control_main, t);
	if (r) {
		client_free(t);
		return ll_err_set(err, -r, "test: pthread_create: %s", strerror(r));
	}
	t->control_started = true;
	*out = t;
	return 0;
}

void client_free(struct client *t)
{
	if (!t)
		return;
	if (t->control_started) {
		pthread_mutex_lock(&t->mu);
		bool ended = t->done || t->failed;
		pthread_mutex_unlock(&t->mu);
		if (!ended) {
			/* bounded: every wait of the control thread is on the
			 * control socket or the stop pipe */
			atomic_store(&t->abandon, true);
			client_stop(t);
			if (t->ctrl_fd >= 0)
				shutdown(t->ctrl_fd, SHUT_RDWR);
		}
		pthread_join(t->control, NULL);
	}
	while (t->head) {
		struct evnode *n = t->head;
		t->head = n->next;
		free(n);
	}
	if (t->ctrl_fd >= 0)
		close(t->ctrl_fd);
	for (int i = 0; i < 2; i++) {
		if (t->evpipe[i] > 0)
			close(t->evpipe[i]);
		if (t->stoppipe[i] > 0)
			close(t->stoppipe[i]);
		if (t->donepipe[i] > 0)
			close(t->donepipe[i]);
	}
	free(t->iv);
	rtt_prober_close(t->prober);
	iperf3_gate_destroy(&t->gate);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* ---- iperf3 -J document ---------------------------------------------------- */

static cJSON *sample_json(const struct client *t, const struct client_stream_sample *s,
			  int sock, bool sum)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if (!sum)
		cJSON_AddNumberToObject(o, "socket", sock);
	cJSON_AddNumberToObject(o, "start", s->start);
	cJSON_AddNumberToObject(o, "end", s->end);
	cJSON_AddNumberToObject(o, "seconds", s->end - s->start);
	cJSON_AddNumberToObject(o, "bytes", (double)s->bytes);
	cJSON_AddNumberToObject(o, "bits_per_second", s->bps);
	if (s->sender && s->retransmits >= 0)
		cJSON_AddNumberToObject(o, "retransmits", (double)s->retransmits);
	if (!sum && s->sender && s->snd_cwnd >= 0) {
		cJSON_AddNumberToObject(o, "snd_cwnd", (double)s->snd_cwnd);
		if (s->snd_wnd >= 0)
			cJSON_AddNumberToObject(o, "snd_wnd", (double)s->snd_wnd);
		cJSON_AddNumberToObject(o, "rtt", (double)s->rtt_us);
		cJSON_AddNumberToObject(o, "rttvar", (double)s->rttvar_us);
		cJSON_AddNumberToObject(o, "pmtu", (double)s->pmtu);
	}
	(void)t;
	if (s->packets >= 0) {   /* UDP */
		/* a receiver's lost -1: unknown (an iperf3 < 3.14 server's
		 * loss includes the -O period): no lost_* keys, as a number
		 * there would be made up */
		bool lk = s->sender || s->lost >= 0;
		if (!s->sender) {
			cJSON_AddNumberToObject(o, "jitter_ms", s->jitter_ms);
			if (lk)
				cJSON_AddNumberToObject(o, "lost_packets",
							(double)(s->lost > 0 ? s->lost : 0));
		}
		cJSON_AddNumberToObject(o, "packets", (double)s->packets);
		if (!s->sender && lk)
			cJSON_AddNumberToObject(o, "lost_percent",
				udpstats_loss_percent(s->lost > 0 ? (uint64_t)s->lost : 0,
						      s->packets > 0 ? (uint64_t)s->packets : 0));
		/* linklab's extra key: duplicate datagrams received (counted
		 * in bytes, not in loss); iperf3 readers ignore it. End
		 * objects only: an interval sample holds the running count */
		if (sum && !s->sender && s->dups >= 0)
			cJSON_AddNumberToObject(o, "duplicates", (double)s->dups);
	}
	cJSON_AddBoolToObject(o, "omitted", s->omitted);
	cJSON_AddBoolToObject(o, "sender", s->sender);
	return o;
}

static cJSON *start_json(const struct client *t)
{
	cJSON *start = cJSON_CreateObject(), *arr, *o;

	if (!start)
		return NULL;
	arr = cJSON_AddArrayToObject(start, "connected");
	for (int i = 0; i < t->n; i++) {
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "socket", t->conn[i].fd);
		cJSON_AddStringToObject(o, "local_host", t->conn[i].lhost);
		cJSON_AddNumberToObject(o, "local_port", t->conn[i].lport);
		cJSON_AddStringToObject(o, "remote_host", t->conn[i].rhost);
		cJSON_AddNumberToObject(o, "remote_port", t->conn[i].rport);
		cJSON_AddItemToArray(arr, o);
	}
	cJSON_AddStringToObject(start, "version", "linklab (iperf3 protocol)");
	{
		struct utsname u;
		char sys[400];
		if (uname(&u) == 0) {
			snprintf(sys, sizeof(sys), "%s %s %s %s %s", u.sysname,
				 u.nodename, u.release, u.version, u.machine);
			cJSON_AddStringToObject(start, "system_info", sys);
		}
	}
	o = cJSON_AddObjectToObject(start, "timestamp");
	{
		char tb[64];
		struct tm tm;
		time_t w = t->wall_start ? t->wall_start : time(NULL);
		gmtime_r(&w, &tm);
		strftime(tb, sizeof(tb), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		cJSON_AddStringToObject(o, "time", tb);
		cJSON_AddNumberToObject(o, "timesecs", (double)w);
	}
	o = cJSON_AddObjectToObject(start, "connecting_to");
	cJSON_AddStringToObject(o, "host", t->o.host);
	cJSON_AddNumberToObject(o, "port", t->o.port);
	cJSON_AddStringToObject(start, "cookie", t->cookie);
	cJSON_AddNumberToObject(start, "target_bitrate", (double)t->o.bitrate);
	cJSON_AddNumberToObject(start, "tcp_mss_default", t->mss);
	cJSON_AddNumberToObject(start, "sock_bufsize", (double)t->o.window);
	cJSON_AddNumberToObject(start, "sndbuf_actual", t->sndbuf);
	cJSON_AddNumberToObject(start, "rcvbuf_actual", t->rcvbuf);
	o = cJSON_AddObjectToObject(start, "test_start");
	cJSON_AddStringToObject(o, "protocol", t->o.udp ? "UDP" : "TCP");
	cJSON_AddNumberToObject(o, "num_streams", t->o.streams);
	cJSON_AddNumberToObject(o, "blksize", t->len ? t->len :
				t->o.blksize ? t->o.blksize : IPERF3_DEFAULT_TCP_BLKSIZE);
	cJSON_AddNumberToObject(o, "omit", t->o.omit);
	cJSON_AddNumberToObject(o, "duration", t->budget ? 0 : t->o.duration);
	cJSON_AddNumberToObject(o, "bytes", (double)t->o.bytes);
	cJSON_AddNumberToObject(o, "blocks", (double)t->o.blocks);
	cJSON_AddNumberToObject(o, "reverse", t->o.reverse);
	cJSON_AddNumberToObject(o, "tos", 0);
	cJSON_AddNumberToObject(o, "target_bitrate", (double)t->o.bitrate);
	cJSON_AddNumberToObject(o, "bidir", t->o.bidir);
	cJSON_AddNumberToObject(o, "fqrate", 0);
	cJSON_AddNumberToObject(o, "interval", t->o.interval);
	return start;
}

static cJSON *interval_json(const struct client *t, const struct client_interval *iv)
{
	cJSON *ivo = cJSON_CreateObject();
	if (!ivo)
		return NULL;
	cJSON *sa = cJSON_AddArrayToObject(ivo, "streams");
	for (int i = 0; i < iv->nstreams; i++) {
		cJSON *so = sample_json(t, &iv->s[i],
					i < t->n ? t->conn[i].fd : -1, false);
		if (iv->remote && so)
			cJSON_AddTrueToObject(so, "remote");
		cJSON_AddItemToArray(sa, so);
	}
	cJSON_AddItemToObject(ivo, "sum", sample_json(t, &iv->sum, 0, true));
	if (t->o.bidir && !iv->remote)
		cJSON_AddItemToObject(ivo, "sum_bidir_reverse",
				      sample_json(t, &iv->sum_reverse, 0, true));
	return ivo;
}

/* iperf3 3.12's UDP sum_sent also has jitter_ms, lost_packets and
 * lost_percent, written as 0 (iperf_print_results: the sender knows none) */
static void udp_sent_fields(cJSON *o, const struct client_stream_sample *rcv)
{
	(void)rcv;
	cJSON_AddNumberToObject(o, "jitter_ms", 0);
	cJSON_AddNumberToObject(o, "lost_packets", 0);
	cJSON_AddNumberToObject(o, "lost_percent", 0);
}

/* the "sender" flag of an end object: iperf3 3.12 iperf_print_results
 * writes the role of the streams the object summarises
 * (stream_must_be_sender), in the sender, receiver and udp entries alike;
 * only UDP sum_sent(_bidir_reverse) / sum_received(_bidir_reverse) are
 * fixed true / false */
static cJSON *with_sender(cJSON *o, bool sender)
{
	if (o)
		cJSON_ReplaceItemInObject(o, "sender", cJSON_CreateBool(sender));
	return o;
}

/* one entry of "end.streams": sender, receiver and (UDP) udp objects */
static cJSON *end_stream_json(const struct client *t, int i)
{
	const struct client_summary *S = &t->sum;
	cJSON *so = cJSON_CreateObject();
	cJSON *snd = sample_json(t, &S->sent[i], t->conn[i].fd, true);
	cJSON_AddNumberToObject(snd, "socket", t->conn[i].fd);
	if (!t->o.udp && !(t->st[i].sender && t->acc[i].rtt_n)) {
		/* not measured here (the peer sent): the keys as iperf3
		 * prints them, 0 */
		cJSON_AddNumberToObject(snd, "max_snd_cwnd", 0);
		cJSON_AddNumberToObject(snd, "max_snd_wnd", 0);
		cJSON_AddNumberToObject(snd, "max_rtt", 0);
		cJSON_AddNumberToObject(snd, "min_rtt", 0);
		cJSON_AddNumberToObject(snd, "mean_rtt", 0);
	} else if (t->st[i].sender && t->acc[i].rtt_n) {
		cJSON_AddNumberToObject(snd, "max_snd_cwnd",
					(double)t->acc[i].max_cwnd);
		if (t->acc[i].max_snd_wnd >= 0)
			cJSON_AddNumberToObject(snd, "max_snd_wnd",
						(double)t->acc[i].max_snd_wnd);
		cJSON_AddNumberToObject(snd, "max_rtt",
					(double)t->acc[i].max_rtt);
		cJSON_AddNumberToObject(snd, "min_rtt",
					(double)t->acc[i].min_rtt);
		cJSON_AddNumberToObject(snd, "mean_rtt",
					t->acc[i].rtt_sum / (double)t->acc[i].rtt_n);
	}
	cJSON *rcv = sample_json(t, &S->received[i], t->conn[i].fd, true);
	cJSON_AddNumberToObject(rcv, "socket", t->conn[i].fd);
	if (t->o.udp) {
		/* iperf3 puts the UDP figures in one "udp" object */
		cJSON *u = sample_json(t, &S->received[i], t->conn[i].fd, true);
		cJSON_AddNumberToObject(u, "socket", t->conn[i].fd);
		cJSON_AddNumberToObject(u, "out_of_order",
			(double)(S->received[i].outoforder > 0 ?
				 S->received[i].outoforder : 0));
		/* linklab's extra key: most datagrams this side moved
		 * in one system call (UDP GSO send / GRO receive) */
		cJSON_AddNumberToObject(u, "gso_segs",
			(double)atomic_load(&t->st[i].gso_segs));
		cJSON_AddItemToObject(so, "udp", u);
	}
	with_sender(snd, t->st[i].sender);
	with_sender(rcv, t->st[i].sender);
	if (cJSON_GetObjectItem(so, "udp"))
		with_sender(cJSON_GetObjectItem(so, "udp"), t->st[i].sender);
	cJSON_AddItemToObject(so, "sender", snd);
	cJSON_AddItemToObject(so, "receiver", rcv);
	return so;
}

/* the "sum*" objects of "end", in iperf3's order */
static void end_sums_json(const struct client *t, cJSON *end, bool fwd_sender)
{
	const struct client_summary *S = &t->sum;
	cJSON *ssj;

	if (t->o.udp) {
		/* iperf3's UDP "sum": the sender's bytes and rate with the
		 * receiver's jitter, loss and datagram count */
		struct client_stream_sample u = S->sum_sent;
		u.sender = false;
		u.packets = S->sum_received.packets;
		u.lost = S->sum_received.lost;
		u.jitter_ms = S->sum_received.jitter_ms;
		u.dups = S->sum_received.dups;
		cJSON *uj = sample_json(t, &u, 0, true);
		cJSON_AddItemToObject(end, "sum", with_sender(uj, fwd_sender));
	}
	ssj = sample_json(t, &S->sum_sent, 0, true);
	if (t->o.udp && ssj)
		udp_sent_fields(ssj, &S->sum_received);
	cJSON_AddItemToObject(end, "sum_sent",
			      with_sender(ssj, t->o.udp || fwd_sender));
	cJSON_AddItemToObject(end, "sum_received",
			      with_sender(sample_json(t, &S->sum_received, 0, true),
					  !t->o.udp && fwd_sender));
	if (t->o.bidir) {
		/* the second pass: the server's streams, sender false */
		if (t->o.udp)
			cJSON_AddItemToObject(end, "sum_bidir_reverse",
				with_sender(sample_json(t, &S->sum_received_reverse, 0, true),
					    false));
		ssj = sample_json(t, &S->sum_sent_reverse, 0, true);
		if (t->o.udp && ssj)
			udp_sent_fields(ssj, &S->sum_received_reverse);
		cJSON_AddItemToObject(end, "sum_sent_bidir_reverse",
				      with_sender(ssj, t->o.udp));
		cJSON_AddItemToObject(end, "sum_received_bidir_reverse",
			with_sender(sample_json(t, &S->sum_received_reverse, 0, true),
				    false));
	}
}

/* cpu, congestion control, partial flag and RTT probes of "end" */
static void end_extras_json(const struct client *t, cJSON *end)
{
	const struct client_summary *S = &t->sum;
	cJSON *o;

	o = cJSON_AddObjectToObject(end, "cpu_utilization_percent");
	cJSON_AddNumberToObject(o, "host_total", t->cpu_total);
	cJSON_AddNumberToObject(o, "host_user", t->cpu_user);
	cJSON_AddNumberToObject(o, "host_system", t->cpu_system);
	cJSON_AddNumberToObject(o, "remote_total", t->remote.cpu_total);
	cJSON_AddNumberToObject(o, "remote_user", t->remote.cpu_user);
	cJSON_AddNumberToObject(o, "remote_system", t->remote.cpu_system);
	if (S->sender_cc[0])
		cJSON_AddStringToObject(end, "sender_tcp_congestion", S->sender_cc);
	if (S->receiver_cc[0])
		cJSON_AddStringToObject(end, "receiver_tcp_congestion",
					S->receiver_cc);
	if (S->partial)
		cJSON_AddTrueToObject(end, "partial");
	if (t->o.rtt) {
		const struct rtt_stats *rs[2] = { &S->rtt_idle, &S->rtt_load };
		const char *nm[2] = { "rtt_idle", "rtt_load" };
		for (int k = 0; k < 2; k++) {
			cJSON *ro = cJSON_AddObjectToObject(end, nm[k]);
			cJSON_AddNumberToObject(ro, "sent", rs[k]->sent);
			cJSON_AddNumberToObject(ro, "received", rs[k]->received);
			if (rs[k]->received) {
				cJSON_AddNumberToObject(ro, "min_ms", rs[k]->min_ms);
				cJSON_AddNumberToObject(ro, "avg_ms", rs[k]->avg_ms);
				cJSON_AddNumberToObject(ro, "max_ms", rs[k]->max_ms);
				cJSON_AddNumberToObject(ro, "mdev_ms", rs[k]->mdev_ms);
			}
		}
	}
}

static cJSON *end_json(const struct client *t)
{
	cJSON *end = cJSON_CreateObject(), *arr;

	if (!end || !(t->done || t->sum.partial))
		return end;
	const struct client_summary *S = &t->sum;
	/* the client's first pass: its own streams send unless -R */
	bool fwd_sender = t->o.bidir || !t->o.reverse;
	arr = cJSON_AddArrayToObject(end, "streams");
	for (int i = 0; i < S->nstreams; i++)
		cJSON_AddItemToArray(arr, end_stream_json(t, i));
	end_sums_json(t, end, fwd_sender);
	end_extras_json(t, end);
	return end;
}

char *client_json(const struct client *tc)
{
	struct client *t = (struct client *)tc;
	cJSON *root = cJSON_CreateObject(), *arr;
	char *out;

	if (!root)
		return NULL;
	pthread_mutex_lock(&t->mu);
	cJSON_AddItemToObject(root, "start", start_json(t));
	arr = cJSON_AddArrayToObject(root, "intervals");
	for (size_t k = 0; k < t->niv; k++)
		cJSON_AddItemToArray(arr, interval_json(t, &t->iv[k]));
	cJSON_AddItemToObject(root, "end", end_json(t));
	if (t->failed)
		cJSON_AddStringToObject(root, "error", t->err.msg);
	pthread_mutex_unlock(&t->mu);
	out = cJSON_Print(root);
	cJSON_Delete(root);
	return out;
}

char *client_json_event(const struct client *tc, const char *event,
		      const struct client_interval *iv)
{
	struct client *t = (struct client *)tc;
	cJSON *root = cJSON_CreateObject(), *data = NULL;
	char *out;

	if (!root)
		return NULL;
	cJSON_AddStringToObject(root, "event", event);
	pthread_mutex_lock(&t->mu);
	if (!strcmp(event, "start"))
		data = start_json(t);
	else if (!strcmp(event, "interval") && iv)
		data = interval_json(t, iv);
	else if (!strcmp(event, "end"))
		data = end_json(t);
	else if (!strcmp(event, "error"))
		data = cJSON_CreateString(t->err.msg);
	pthread_mutex_unlock(&t->mu);
	if (data)
		cJSON_AddItemToObject(root, "data", data);
	else
		cJSON_AddNullToObject(root, "data");
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return out;
}

int client_intervals(const struct client *tc, const struct client_interval **iv)
{
	struct client *t = (struct client *)tc;
	int n;

	pthread_mutex_lock(&t->mu);
	*iv = t->iv;
	n = (int)t->niv;
	pthread_mutex_unlock(&t->mu);
	return n;
}

const char *client_error(const struct client *t)
{
	return t->failed ? t->err.msg : "";
}
