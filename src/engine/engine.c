/* SPDX-License-Identifier: MIT */
/* engine.c - the endpoint engine's loop (engine.h): netfilter queue in,
 * emu model, verdicts and raw re-sends out. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "linklab/bridge/emu.h"
#include "linklab/engine/engine.h"
#include "linklab/engine/nfqueue.h"

#define SEND_BATCH 64

struct held {
	uint32_t len;
	unsigned char data[];
};

struct eng {
	struct emu *e;
	struct nfqueue *q;
	int raw;
	uint16_t queue;
	const char *stat_path;
	bool run_open;          /* packets decided, their verdict not yet sent */
	bool run_accept;        /* ... all accept, or all drop */
	uint32_t run_last;      /* ... up to this id */
	int nout;               /* copies waiting for sendmmsg */
	struct held *out[SEND_BATCH];
	struct held *now_pkt;   /* the packet being decided, if still queued */
	bool now_accept;        /* it left at once: accept its own skb */
	uint64_t send_errors, overruns, accepted, resent;
	uint64_t late_ns, released;     /* sum of (release - time to send) */
	int64_t lead_ns;                /* wake this much before a release */
};

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Send the copies collected by release() (one sendmmsg) and free them. */
static void flush_sends(struct eng *g)
{
	struct mmsghdr m[SEND_BATCH];
	struct iovec iov[SEND_BATCH];
	struct sockaddr_in to[SEND_BATCH];
	int i, n = 0, k, sent = 0;

	for (i = 0; i < g->nout; i++) {
		struct held *h = g->out[i];
		const struct iphdr *ip = (const struct iphdr *)h->data;

		if (h->len < sizeof(*ip) || ip->version != 4) {
			g->send_errors++;
			continue;
		}
		memset(&to[n], 0, sizeof(to[n]));
		to[n].sin_family = AF_INET;
		to[n].sin_addr.s_addr = ip->daddr;
		iov[n].iov_base = h->data;
		iov[n].iov_len = h->len;
		memset(&m[n], 0, sizeof(m[n]));
		m[n].msg_hdr.msg_name = &to[n];
		m[n].msg_hdr.msg_namelen = sizeof(to[n]);
		m[n].msg_hdr.msg_iov = &iov[n];
		m[n].msg_hdr.msg_iovlen = 1;
		n++;
	}
	while (sent < n) {
		k = sendmmsg(g->raw, m + sent, (unsigned)(n - sent), MSG_DONTWAIT);
		if (k <= 0) {
			/* this one failed (queue full, no route): count it, go on */
			g->send_errors++;
			sent++;
			continue;
		}
		sent += k;
		g->resent += (uint64_t)k;
	}
	for (i = 0; i < g->nout; i++)
		free(g->out[i]);
	g->nout = 0;
}

static void send_raw(struct eng *g, struct held *h)
{
	g->out[g->nout++] = h;
	if (g->nout == SEND_BATCH)
		flush_sends(g);
}

/* One verdict for a run of packets decided alike (nfq_set_verdict_batch). */
static void decide(struct eng *g, uint32_t id, bool accept)
{
	if (g->run_open && g->run_accept != accept)
		nfqueue_verdict_upto(g->q, g->run_last, g->run_accept);
	g->run_open = true;
	g->run_accept = accept;
	g->run_last = id;
}

static void flush_verdicts(struct eng *g)
{
	if (g->run_open)
		nfqueue_verdict_upto(g->q, g->run_last, g->run_accept);
	g->run_open = false;
}

/* Everything due at now: the packet being decided leaves as itself. */
static void release(struct eng *g, int64_t now)
{
	struct held *h;
	uint32_t len;
	int64_t due = emu_next_time(g->e);

	while (due <= now && (h = emu_dequeue(g->e, now, &len))) {
		g->late_ns += (uint64_t)(now - due);
		g->released++;
		due = emu_next_time(g->e);
		if (h == g->now_pkt) {
			g->now_accept = true;
			g->now_pkt = NULL;
			free(h);
		} else {
			send_raw(g, h);
		}
	}
	flush_sends(g);
}

static struct held *hold_copy(const unsigned char *data, uint32_t len)
{
	struct held *h = malloc(sizeof(*h) + len);

	if (h) {
		h->len = len;
		memcpy(h->data, data, len);
	}
	return h;
}

static void flip(struct held *h, uint32_t bit)
{
	/* skip the IPv4 header so the packet still routes (netem flips a
	 * bit anywhere in the frame; a broken IP header would not leave) */
	uint32_t ihl = h->len > 0 ? (uint32_t)(h->data[0] & 0x0f) * 4 : 0;

	if (h->len <= ihl)
		return;
	bit = ihl * 8 + bit % ((h->len - ihl) * 8);
	h->data[bit / 8] ^= (unsigned char)(1u << (bit % 8));
}

static void enqueue(struct eng *g, struct held *h, int64_t now)
{
	if (emu_enqueue(g->e, now, h->len + ETH_HLEN, h, NULL) < 0) {
		if (g->now_pkt == h)
			g->now_pkt = NULL;
		free(h);
	}
}

static void on_packet(void *arg, uint32_t id, unsigned char *data, uint32_t len)
{
	struct eng *g = arg;
	struct emu_fate f, fd;
	int64_t now = mono_ns();
	struct held *h, *dup = NULL;

	emu_fate(g->e, len + ETH_HLEN, false, &f);
	if (f.dup) {
		emu_fate(g->e, len + ETH_HLEN, true, &fd);
		if (!fd.lost && (dup = hold_copy(data, len)) && fd.corrupt)
			flip(dup, fd.corrupt_bit);
	}
	if (!f.lost && (h = hold_copy(data, len))) {
		if (f.corrupt)
			flip(h, f.corrupt_bit);
		else
			g->now_pkt = h;
		g->now_accept = false;
		enqueue(g, h, now);
		if (dup)
			enqueue(g, dup, now);
		release(g, now);
		if (g->now_accept)
			g->accepted++;
		decide(g, id, g->now_accept);
		g->now_pkt = NULL;
		return;
	}
	if (dup) {
		enqueue(g, dup, now);
		release(g, now);
	}
	decide(g, id, false);
}

static void write_stats(struct eng *g)
{
	struct emu_stats s;
	uint64_t qd = 0, ud = 0;
	char tmp[4200];
	FILE *f;

	emu_get_stats(g->e, &s);
	nfqueue_kstats(g->queue, &qd, &ud);
	snprintf(tmp, sizeof(tmp), "%s.tmp", g->stat_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "{\"pid\": %ld, \"queue\": %u, \"in\": %" PRIu64 ", \"out\": %" PRIu64
		", \"lost\": %" PRIu64 ", \"duplicated\": %" PRIu64 ", \"corrupted\": %" PRIu64
		", \"reordered\": %" PRIu64 ", \"queue_drops\": %" PRIu64
		", \"queued\": %u, \"accepted\": %" PRIu64 ", \"resent\": %" PRIu64
		", \"send_errors\": %" PRIu64 ", \"late_us_avg\": %.1f}\n",
		(long)getpid(), g->queue, s.in_pkts, s.out_pkts, s.lost, s.duplicated,
		s.corrupted, s.reordered, s.limit_drops + s.rate_drops + qd + ud + g->overruns,
		s.qlen, g->accepted, g->resent, g->send_errors,
		g->released ? (double)g->late_ns / (double)g->released / 1000.0 : 0.0);
	if (fclose(f) == 0)
		rename(tmp, g->stat_path);
	else
		unlink(tmp);
}

static int open_raw(const char *dev, struct ll_err *err)
{
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	unsigned mark = ENGINE_MARK;
	int sz = 8 * 1024 * 1024;

	if (fd < 0)
		return ll_err_set(err, errno == EPERM ? -EPERM : -EIO,
				  "raw socket: %s (needs CAP_NET_RAW)", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, (socklen_t)strlen(dev)) < 0) {
		int e = errno;

		close(fd);
		return ll_err_set(err, -EIO, "raw socket on %s: %s", dev, strerror(e));
	}
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	return fd;
}

static void say_ready(int fd, const struct ll_err *err)
{
	char line[600];
	int n;

	if (fd < 0)
		return;
	n = err ? snprintf(line, sizeof(line), "error: %s\n", err->msg) :
		  snprintf(line, sizeof(line), "ok %ld\n", (long)getpid());
	if (write(fd, line, (size_t)n) < 0) {
		/* the starter went away: it will find the record */
	}
	close(fd);
}

static int setup(struct eng *g, const struct engine_opts *o, struct emu_dist **dist,
		 struct ll_err *err)
{
	struct emu_config c;
	int rc;

	*dist = calloc(1, sizeof(**dist));
	if (!*dist)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = emu_config_build(&c, o->dial, (uint64_t)mono_ns() ^ (uint64_t)getpid(),
			      *dist, err);
	if (rc < 0)
		return rc;
	rc = emu_new(&c, &g->e, err);
	if (rc < 0)
		return rc;
	g->raw = open_raw(o->dev, err);
	if (g->raw < 0)
		return g->raw;
	return nfqueue_open(o->queue, 65536, on_packet, g, &g->q, err);
}

static void teardown(struct eng *g, struct emu_dist *dist)
{
	struct held *h;
	uint32_t len;

	nfqueue_close(g->q);
	if (g->e) {
		while ((h = emu_drain(g->e, &len)))
			free(h);
		emu_free(g->e);
	}
	if (g->raw >= 0)
		close(g->raw);
	free(dist);
}

/* Few packets waiting: spinning to a release costs little. */
static bool spin_ok(const struct eng *g)
{
	struct emu_stats s;

	emu_get_stats(g->e, &s);
	return s.qlen < 64;
}

/* Moving average of how late a timed wake-up comes (ns, 0..300 us). */
static void track_lateness(struct eng *g, int64_t late)
{
	if (late < 0)
		late = 0;
	if (late > 1000000)
		return;         /* preempted for long: not the usual lateness */
	g->lead_ns += (late - g->lead_ns) / 8;
	if (g->lead_ns > 300000)
		g->lead_ns = 300000;
}

int engine_run(const struct engine_opts *o, struct ll_err *err)
{
	struct eng g = { .raw = -1, .queue = o->queue, .stat_path = o->stat_path };
	struct emu_dist *dist = NULL;
	struct sigaction sa;
	int64_t next_stat = 0;
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	prctl(PR_SET_TIMERSLACK, 1UL);
	/* releases on time on a busy host, as netem's hrtimer (best effort:
	 * without the privilege the engine runs at normal priority) */
	if (o->rt_priority > 0) {
		struct sched_param sp = { .sched_priority = o->rt_priority };

		sched_setscheduler(0, SCHED_FIFO, &sp);
	}
	rc = setup(&g, o, &dist, err);
	if (rc < 0) {
		say_ready(o->ready_fd, err);
		teardown(&g, dist);
		return rc;
	}
	say_ready(o->ready_fd, NULL);
	while (!stop_flag) {
		struct pollfd pfd = { nfqueue_fd(g.q), POLLIN, 0 };
		int64_t now = mono_ns(), next = emu_next_time(g.e), wait, target;
		struct timespec ts;
		int n;

		wait = next == INT64_MAX ? 250000000 : next - now;
		if (wait > next_stat - now)
			wait = next_stat - now;
		/* wake early by the usual wake-up lateness, then spin to the
		 * time to send (few packets queued: the release time matters
		 * more than the CPU; a full queue keeps the engine awake anyway) */
		if (wait > g.lead_ns)
			wait -= g.lead_ns;
		else if (spin_ok(&g))
			wait = 0;
		if (wait < 0)
			wait = 0;
		target = now + wait;
		ts.tv_sec = wait / 1000000000;
		ts.tv_nsec = wait % 1000000000;
		n = ppoll(&pfd, 1, &ts, NULL);
		if (n == 0 && wait > 0)
			track_lateness(&g, mono_ns() - target);
		if (n > 0 && (pfd.revents & POLLIN)) {
			rc = nfqueue_read(g.q, 64, &g.overruns, err);
			if (rc < 0)
				break;
			flush_verdicts(&g);
		}
		now = mono_ns();
		release(&g, now);
		if (now >= next_stat) {
			write_stats(&g);
			next_stat = now + 250000000;
		}
	}
	rc = rc < 0 ? rc : 0;
	write_stats(&g);
	teardown(&g, dist);
	return rc;
}
