/* SPDX-License-Identifier: MIT */
/* engine.c - the endpoint engine's loop (engine.h): netfilter queue in,
 * emu model, verdicts and raw re-sends out. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
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

#include "linklab/base/wake.h"
#include "linklab/bridge/emu.h"
#include "linklab/engine/engine.h"
#include "linklab/engine/nfqueue.h"
#include "linklab/engine/pktout.h"

#define SEND_BATCH 64
#define NQ 2    /* queue Q: all but TCP; Q + 1: TCP, GSO packets whole */

struct held {
	uint32_t len;
	uint32_t flags;                         /* PKTOUT_GSO, PKTOUT_CSUM */
	unsigned char room[PKTOUT_HEADROOM];    /* pktout's headers */
	unsigned char data[];
};

struct run {                    /* packets decided, their verdict not yet sent */
	bool open;
	bool accept;            /* ... all accept, or all drop */
	uint32_t last;          /* ... up to this id */
};

struct eng {
	struct emu *e;
	struct nfqueue *q[NQ];
	struct run run[NQ];
	struct pktout *po;
	uint32_t mtu;
	uint16_t queue;
	const char *stat_path;
	int nout;               /* copies waiting for sendmmsg */
	struct held *out[SEND_BATCH];
	struct held *now_pkt;   /* the packet being decided, if still queued */
	bool now_accept;        /* it left at once: accept its own skb */
	uint64_t overruns, accepted;
	uint64_t late_ns, released;     /* sum of (release - time to send) */
	struct wake_lead lead;          /* wake this much before a release */
	int64_t arrive_ns;              /* arrival time of what is read now (0: now) */
	bool may_batch;                 /* the dial delays every packet long enough */
	uint64_t win_pkts;              /* packets read in the current 10 ms window */
	int64_t win_start;
	bool busy;                      /* the last window was busy: batch reads */
	int64_t last_read;              /* when the queues were last read empty */
	int64_t last_stamp;             /* the last arrival time given to the model */
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

/* Send the copies collected by release() and free them. */
static void flush_sends(struct eng *g)
{
	struct pktout_pkt pk[SEND_BATCH];
	int i;

	for (i = 0; i < g->nout; i++) {
		pk[i].data = g->out[i]->data;
		pk[i].len = g->out[i]->len;
		pk[i].flags = g->out[i]->flags;
	}
	pktout_send(g->po, pk, g->nout);
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
static void decide(struct eng *g, int qi, uint32_t id, bool accept)
{
	struct run *r = &g->run[qi];

	if (r->open && r->accept != accept)
		nfqueue_verdict_upto(g->q[qi], r->last, r->accept);
	r->open = true;
	r->accept = accept;
	r->last = id;
}

static void flush_verdicts(struct eng *g, int qi)
{
	struct run *r = &g->run[qi];

	if (r->open)
		nfqueue_verdict_upto(g->q[qi], r->last, r->accept);
	r->open = false;
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

static struct held *hold_copy(const unsigned char *data, uint32_t len, uint32_t flags)
{
	struct held *h = malloc(sizeof(*h) + len);

	if (h) {
		h->len = len;
		h->flags = flags;
		memcpy(h->data, data, len);
	}
	return h;
}

/* Bytes on the wire as the rate counts them: a GSO packet as its segments
 * (IP + TCP headers and an Ethernet header each, cut at the MTU). */
static uint32_t wire_len(const struct eng *g, const unsigned char *ip, uint32_t len,
			 uint32_t flags)
{
	uint32_t l3, l4, mss, nseg;

	if (!(flags & PKTOUT_GSO) || len <= g->mtu)
		return len + ETH_HLEN;
	l3 = (ip[0] >> 4) == 4 ? (uint32_t)(ip[0] & 0x0f) * 4 : 40;
	if (len < l3 + 20)
		return len + ETH_HLEN;
	l4 = (uint32_t)(ip[l3 + 12] >> 4) * 4;
	if (g->mtu <= l3 + l4 + 64 || len < l3 + l4)
		return len + ETH_HLEN;
	mss = g->mtu - l3 - l4;
	nseg = (len - l3 - l4 + mss - 1) / mss;
	return len + (nseg - 1) * (l3 + l4) + nseg * ETH_HLEN;
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

static void enqueue(struct eng *g, struct held *h, uint32_t wlen, int64_t now)
{
	if (emu_enqueue(g->e, now, wlen, h, NULL) < 0) {
		if (g->now_pkt == h)
			g->now_pkt = NULL;
		free(h);
	}
}

static void on_packet(void *arg, struct nfqueue *q, uint32_t id, unsigned char *data,
		      uint32_t len, uint32_t info)
{
	struct eng *g = arg;
	struct emu_fate f, fd;
	int64_t now = g->arrive_ns ? g->arrive_ns : mono_ns();
	struct held *h, *dup = NULL;

	/* the model's clock never goes back */
	if (now < g->last_stamp)
		now = g->last_stamp;
	g->last_stamp = now;
	int qi = q == g->q[1];
	uint32_t flags = ((info & NFQUEUE_GSO) ? PKTOUT_GSO : 0) |
			 ((info & NFQUEUE_CSUM) ? PKTOUT_CSUM : 0);
	uint32_t wlen = wire_len(g, data, len, flags);

	g->win_pkts++;
	emu_fate(g->e, wlen, false, &f);
	if (f.dup) {
		emu_fate(g->e, wlen, true, &fd);
		if (!fd.lost && (dup = hold_copy(data, len, flags)) && fd.corrupt)
			flip(dup, fd.corrupt_bit);
	}
	if (!f.lost && (h = hold_copy(data, len, flags))) {
		if (f.corrupt)
			flip(h, f.corrupt_bit);
		else
			g->now_pkt = h;
		g->now_accept = false;
		enqueue(g, h, wlen, now);
		if (dup)
			enqueue(g, dup, wlen, now);
		release(g, now);
		if (g->now_accept)
			g->accepted++;
		decide(g, qi, id, g->now_accept);
		g->now_pkt = NULL;
		return;
	}
	if (dup) {
		enqueue(g, dup, wlen, now);
		release(g, now);
	}
	decide(g, qi, id, false);
}

static void write_stats(struct eng *g)
{
	struct emu_stats s;
	struct pktout_stats ps;
	uint64_t qd = 0, ud = 0, qd1 = 0, ud1 = 0;
	char tmp[4200];
	FILE *f;

	emu_get_stats(g->e, &s);
	pktout_get_stats(g->po, &ps);
	nfqueue_kstats(g->queue, &qd, &ud);
	if (g->q[1] && nfqueue_kstats((uint16_t)(g->queue + 1), &qd1, &ud1) == 0) {
		qd += qd1;
		ud += ud1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", g->stat_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "{\"pid\": %ld, \"queue\": %u, \"in\": %" PRIu64 ", \"out\": %" PRIu64
		", \"lost\": %" PRIu64 ", \"duplicated\": %" PRIu64 ", \"corrupted\": %" PRIu64
		", \"reordered\": %" PRIu64 ", \"queue_drops\": %" PRIu64
		", \"queued\": %u, \"accepted\": %" PRIu64 ", \"resent\": %" PRIu64
		", \"resent_packet\": %" PRIu64 ", \"send_errors\": %" PRIu64
		", \"passed_whole\": %" PRIu64 ", \"late_us_avg\": %.1f}\n",
		(long)getpid(), g->queue, s.in_pkts, s.out_pkts, s.lost, s.duplicated,
		s.corrupted, s.reordered, s.limit_drops + s.rate_drops + qd + ud + g->overruns,
		s.qlen, g->accepted, ps.sent_packet + ps.sent_raw, ps.sent_packet, ps.errors,
		nfqueue_truncated(g->q[0]) + nfqueue_truncated(g->q[1]),
		g->released ? (double)g->late_ns / (double)g->released / 1000.0 : 0.0);
	if (fclose(f) == 0)
		rename(tmp, g->stat_path);
	else
		unlink(tmp);
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
	rc = pktout_open(o->dev, ENGINE_MARK, &g->po, err);
	if (rc < 0)
		return rc;
	g->mtu = pktout_mtu(g->po);
	rc = nfqueue_open(o->queue, 65536, false, on_packet, g, &g->q[0], err);
	/* TCP whole (GSO) where the packets can leave whole and the dial
	 * decides nothing per packet: loss, duplicate, reorder and corrupt
	 * are drawn per wire packet (segment), so 5 % loss costs TCP 5 % of
	 * its segments, not 5 % of its up-to-64 KB GSO packets */
	if (rc == 0 && o->tcp_queue)
		rc = nfqueue_open((uint16_t)(o->queue + 1), 65536,
				  pktout_offload(g->po) && !(o->dial->set & ENGINE_PER_SEGMENT) &&
				  !o->no_gso, on_packet, g, &g->q[1], err);
	return rc;
}

static void teardown(struct eng *g, struct emu_dist *dist)
{
	struct held *h;
	uint32_t len;

	nfqueue_close(g->q[0]);
	nfqueue_close(g->q[1]);
	if (g->e) {
		while ((h = emu_drain(g->e, &len)))
			free(h);
		emu_free(g->e);
	}
	pktout_close(g->po);
	free(dist);
}

/* Few packets waiting: spinning to a release costs little. */
static bool spin_ok(const struct eng *g)
{
	struct emu_stats s;

	emu_get_stats(g->e, &s);
	return s.qlen < 64;
}

/* Under load (more than BUSY_PKTS packets in 10 ms) and a dial that delays
 * every packet by at least BATCH_MIN_DELAY: sleep past arrivals up to
 * BATCH_NS after the last read (but not past the next release), then read
 * all that came and give it the middle of that time as its arrival (a
 * packet's delay is off by at most BATCH_NS / 2, unbiased). One wake-up
 * then serves many packets. Returns the time after the sleep. */
#define BATCH_NS 1000000
#define BATCH_MIN_DELAY 5000000
#define BUSY_PKTS 5
static int64_t batch_wait(struct eng *g, int64_t now, int64_t next)
{
	int64_t until = g->last_read + BATCH_NS;
	struct timespec ts;

	if (next != INT64_MAX && next - g->lead.ns < until)
		until = next - g->lead.ns;
	if (until > now) {
		ts.tv_sec = until / 1000000000;
		ts.tv_nsec = until % 1000000000;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		now = mono_ns();
	}
	/* only a sleep of ours hides the arrival times; after a longer gap
	 * (a busy spell ended, the host was slow) the packets are as of now */
	g->arrive_ns = now - g->last_read <= BATCH_NS + BATCH_NS / 2 ?
		       g->last_read + (now - g->last_read) / 2 : 0;
	return now;
}

static void track_busy(struct eng *g)
{
	int64_t now = mono_ns();

	if (now - g->win_start < 10000000)
		return;
	/* a window that ended long ago says nothing about now */
	g->busy = g->win_pkts >= BUSY_PKTS && now - g->win_start < 20000000;
	g->win_pkts = 0;
	g->win_start = now;
}

int engine_run(const struct engine_opts *o, struct ll_err *err)
{
	struct eng g = { .queue = o->queue, .stat_path = o->stat_path };
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
	/* held packets come and go by the thousand a second, up to 64 KiB
	 * each: keep freed memory in the heap (no mmap/munmap, no page faults
	 * on reuse) */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
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
	g.may_batch = !getenv("LINKLAB_ENGINE_NOBATCH") && (o->dial->set & IMP_DELAY) &&
		      !(o->dial->set & IMP_REORDER) &&
		      o->dial->delay - 4 * ((o->dial->set & IMP_JITTER) ? o->dial->jitter : 0) >=
		      BATCH_MIN_DELAY;
	g.last_read = mono_ns();
	while (!stop_flag) {
		struct pollfd pfd[NQ] = { { nfqueue_fd(g.q[0]), POLLIN, 0 },
					  { g.q[1] ? nfqueue_fd(g.q[1]) : -1, POLLIN, 0 } };
		int64_t now = mono_ns(), next = emu_next_time(g.e), wait, target;
		bool last;
		struct timespec ts;
		int n, qi;

		if (g.may_batch && g.busy)
			now = batch_wait(&g, now, next);
		/* approach the release in steps (a long sleep comes back late),
		 * the last ending by the usual lateness early, then spin to the
		 * time to send (few packets queued: the release time matters
		 * more than the CPU; a full queue keeps the engine awake anyway) */
		target = wake_at(&g.lead, next, now, &last);
		if (target == now && !spin_ok(&g))
			target = next;
		if (target > next_stat)
			target = next_stat, last = false;
		wait = target > now ? target - now : 0;
		ts.tv_sec = wait / 1000000000;
		ts.tv_nsec = wait % 1000000000;
		n = ppoll(pfd, NQ, &ts, NULL);
		if (n == 0 && last)
			wake_lead_track(&g.lead, mono_ns() - target);
		/* the poll slept: what woke it arrived just now */
		if (g.arrive_ns && mono_ns() - now > 100000)
			g.arrive_ns = 0;
		for (qi = 0; n > 0 && qi < NQ; qi++) {
			if (!(pfd[qi].revents & POLLIN))
				continue;
			rc = nfqueue_read(g.q[qi], 64, &g.overruns, err);
			if (rc < 0)
				break;
			flush_verdicts(&g, qi);
		}
		if (rc < 0)
			break;
		g.arrive_ns = 0;
		if (n > 0)
			g.last_read = mono_ns();
		track_busy(&g);
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
