/* SPDX-License-Identifier: MIT */
/* client.h - the traffic engine: an iperf3-compatible client (this file) and
 * server (serve.h). Wire protocol: iperf3's (control connection, 37-byte
 * cookie, one-byte states, u32-BE length-prefixed JSON params/results; see
 * iperf3 src/iperf_api.c, iperf_client_api.c, iperf_tcp.c). Streams run on
 * worker threads; the caller's event loop sees a pipe fd that becomes readable
 * when an event (interval, end, error) is queued. Never prints, never exits.
 */
#ifndef LINKLAB_CLIENT_H
#define LINKLAB_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/traffic/rttprobe.h"

#define CLIENT_MAX_STREAMS 128

struct client_opts {
	char host[256];        /* server address or name */
	int port;              /* default 5201 */
	int streams;           /* -P, 1..128 */
	double duration;       /* -t seconds, 1..86400 (default 10) */
	double interval;       /* -i seconds, 0.1..60 (default 1); 0 = no
	                        * periodic reports, one interval for the whole
	                        * test (iperf3 -i 0) */
	bool reverse;          /* -R: server sends */
	bool udp;              /* -u (UDP) */
	uint64_t bitrate;      /* -b bit/s, 0 = unlimited (TCP) */
	                       /* (per stream, as iperf3; 0 is unlimited for
	                        * UDP too: `linklab test -u` puts iperf3's UDP
	                        * default 1048576 here when -b is not given) */
	uint64_t window;       /* -w bytes, 0 = default */
	uint32_t blksize;      /* -l bytes, 0 = default (TCP 128 KiB) */
	double connect_timeout;/* seconds, default 10 */
	bool bidir;            /* --bidir: -P streams each way at once (iperf3
	                        * 3.7+); streams 1..64, not with -R */
	/* iperf3's further options; client_opts_init() sets them to "off" */
	double omit;           /* -O seconds 0..600: left out of the totals,
	                        * reported as omitted intervals; the test runs
	                        * omit + duration */
	uint64_t bytes;        /* -n bytes to send (all streams), 0 = by time */
	uint64_t blocks;       /* -k blocks of blksize, 0 = by time */
	uint32_t mss;          /* -M TCP_MAXSEG bytes, 0 = default (1..65535) */
	bool nodelay;          /* -N TCP_NODELAY */
	char congestion[32];   /* -C TCP congestion control ("" = default) */
	bool zerocopy;         /* -Z sendfile(2) on sending streams */
	bool udp64;            /* --udp-counters-64bit: 16-byte UDP header */
	double live;           /* ask linklab serve for live server-side
	                        * interval samples every `live` s (0 = no; a
	                        * stock iperf3 server ignores the request) */
	bool gso;              /* UDP: send GSO batches (UDP_SEGMENT) here and
	                        * ask linklab serve to (param linklab_gso);
	                        * client_opts_init leaves it off (an impairment on
	                        * the path acts on whole batches), linklab test
	                        * turns it on unless --no-gso. Receivers always
	                        * use UDP_GRO when the kernel has it */
	bool rtt;              /* RTT probes (UDP echo of linklab serve on the
	                        * same port): 10 idle before the test, one per
	                        * 100 ms under load during it */
};

/* Fill defaults (port 5201, 1 stream, 10 s, 1 s interval). */
void client_opts_init(struct client_opts *o);

/* Check ranges; every problem in diag; -EINVAL if any. */
int client_opts_validate(const struct client_opts *o, struct ll_diag *diag);

/* One stream's figures for one interval, or for the whole test. */
struct client_stream_sample {
	int id;                /* iperf3 stream id: 1, 3, 4, ... */
	bool sender;           /* this side sent on it */
	double start, end;     /* seconds since test start */
	uint64_t bytes;
	double bps;            /* bit/s */
	/* TCP_INFO (sender side only; -1 when unknown) */
	int64_t retransmits;   /* delta over the interval (total at the end) */
	int64_t snd_cwnd;      /* bytes */
	int64_t rtt_us, rttvar_us;
	int64_t pmtu;
	/* UDP (added for -u; -1 / 0 for TCP): datagrams sent or, at the
	 * receiver, the highest sequence number seen (iperf3 packet_count);
	 * lost = sequence gaps (iperf3 cnt_error); jitter RFC 1889 smoothed,
	 * ms (receiver only). */
	int64_t packets;
	int64_t lost;
	double jitter_ms;
	/* omitted intervals, UDP order, the peer's own samples */
	bool omitted;          /* inside the -O period (not in the totals) */
	int64_t outoforder;    /* UDP receiver: reordered datagrams (-1 n/a) */
	int64_t dups;          /* UDP receiver: duplicate datagrams (-1 n/a) */
	bool remote;           /* measured by the peer (live server samples) */
	int64_t snd_wnd;       /* bytes, TCP_INFO tcpi_snd_wnd (-1 unknown) */
};

/* An interval report: every stream plus the SUM. */
struct client_interval {
	int nstreams;
	struct client_stream_sample s[CLIENT_MAX_STREAMS];
	struct client_stream_sample sum;
	/* --bidir: s[] holds the client-to-server streams first, then the
	 * server-to-client ones (sample.sender tells); sum covers the first
	 * direction, sum_reverse the second (iperf3 sum_bidir_reverse). */
	struct client_stream_sample sum_reverse;
	/* addition: live samples from the peer (linklab serve, asked for with
	 * client_opts.live): s[] are the server's streams with sender=true and
	 * remote=true; not kept in client_json()'s intervals */
	bool remote;
};

/* End summary as iperf3 prints it: per stream and SUM, sender and receiver
 * totals (one side's are measured here, the other's come from the peer's
 * results JSON). */
struct client_summary {
	int nstreams;
	struct client_stream_sample sent[CLIENT_MAX_STREAMS];
	struct client_stream_sample received[CLIENT_MAX_STREAMS];
	struct client_stream_sample sum_sent, sum_received;
	double duration;
	char sender_cc[32], receiver_cc[32];
	/* --bidir: the server-to-client direction's totals (iperf3
	 * sum_sent_bidir_reverse / sum_received_bidir_reverse) */
	struct client_stream_sample sum_sent_reverse, sum_received_reverse;
	/* addition: the test failed after it started; the totals hold only
	 * what this side measured (the peer's half is missing) */
	bool partial;
	/* addition: client_opts.rtt results (received 0: no echo answered) */
	struct rtt_stats rtt_idle, rtt_load;
};

enum client_event_kind {
	CLIENT_EV_CONNECTED,  /* control connected, streams up */
	CLIENT_EV_INTERVAL,   /* ev.interval valid */
	CLIENT_EV_DONE,       /* summary available via client_summary() */
	CLIENT_EV_ERROR,      /* ev.err valid; partial results kept */
};

struct client_event {
	enum client_event_kind kind;
	struct client_interval interval;
	struct ll_err err;
};

struct client;

/* Start a test in the background (connect, exchange params, run). Returns 0
 * and *t, or a negative code (bad opts) with err filled. Connection errors
 * arrive later as CLIENT_EV_ERROR. */
int client_start(const struct client_opts *o, struct client **t, struct ll_err *err);

/* fd readable when events are queued (poll it in the caller's loop). */
int client_event_fd(const struct client *t);

/* Pop the next event; returns 1 if one was popped, 0 if none queued. */
int client_next_event(struct client *t, struct client_event *ev);

/* Addresses of stream i (0-based, < streams) after CLIENT_EV_CONNECTED: numeric
 * local and remote host and ports, as iperf3's "[ ID] local A port P
 * connected to B port Q" line. Returns its iperf3 stream id (1, 3, 4, ...),
 * or -ENOENT before the streams exist or when i is out of range. */
int client_stream_addr(const struct client *t, int i, char *local, size_t llen,
		     int *lport, char *remote, size_t rlen, int *rport);

/* Ask the test to end now (sends TEST_END as at the end of -t). */
void client_stop(struct client *t);

/* The end summary (valid after CLIENT_EV_DONE). */
const struct client_summary *client_summary(const struct client *t);

/* iperf3 -J style JSON document of the whole run (start, intervals[],
 * end.sum_sent/sum_received, error when failed). Caller frees. */
char *client_json(const struct client *t);

/* Join threads and free. Bounded: a test still running is stopped and its
 * control connection shut down, so this returns within about a second. */
void client_free(struct client *t);

/* The intervals recorded so far (oldest first); *iv points into the test
 * and stays valid until the next interval or client_free. Returns the count. */
int client_intervals(const struct client *t, const struct client_interval **iv);

/* iperf3 --json-stream (3.17) lines: one compact JSON object
 * {"event":"start"|"interval"|"end"|"error","data":...} without newline.
 * "interval" needs iv; "start" is valid after CLIENT_EV_CONNECTED, "end" after
 * CLIENT_EV_DONE, "error" after CLIENT_EV_ERROR. Caller frees; NULL on ENOMEM. */
char *client_json_event(const struct client *t, const char *event,
		      const struct client_interval *iv);

/* The error of a failed test ("" when none). */
const char *client_error(const struct client *t);

#endif
