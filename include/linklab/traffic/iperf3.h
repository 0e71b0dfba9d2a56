/* SPDX-License-Identifier: MIT */
/* iperf3.h - the pieces of iperf3's wire protocol shared by the client
 * (client.c) and the server (serve.c): state codes, the cookie, u32-BE
 * length-prefixed JSON framing, the parameter and results objects, TCP_INFO
 * sampling and the stream worker threads.
 *
 * Sources of the rules: iperf3 src/iperf_api.h (state codes), src/iperf.h
 * (COOKIE_SIZE 37, MAX_STREAMS 128, MAX_BLOCKSIZE 1 MiB, MAX_TIME 86400),
 * src/iperf_util.c make_cookie(), src/iperf_api.c JSON_write/JSON_read,
 * send_parameters/get_parameters, send_results/get_results, src/tcp_info.c.
 * See also shared/research/throughput-anchors.md section 2.
 * Never prints, never exits.
 */
#ifndef LINKLAB_IPERF3_H
#define LINKLAB_IPERF3_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "linklab/base/err.h"

/* One signed byte on the control socket (iperf3 src/iperf_api.h). */
enum iperf3_state {
	IPERF3_TEST_START       = 1,
	IPERF3_TEST_RUNNING     = 2,
	IPERF3_TEST_END         = 4,
	IPERF3_PARAM_EXCHANGE   = 9,
	IPERF3_CREATE_STREAMS   = 10,
	IPERF3_SERVER_TERMINATE = 11,
	IPERF3_CLIENT_TERMINATE = 12,
	IPERF3_EXCHANGE_RESULTS = 13,
	IPERF3_DISPLAY_RESULTS  = 14,
	IPERF3_IPERF_DONE       = 16,
	IPERF3_ACCESS_DENIED    = -1,   /* 0xFF: server busy / bad cookie */
	IPERF3_SERVER_ERROR     = -2,   /* 0xFE + int32be i_errno + int32be errno */
};

/* iperf3 i_errno values used in SERVER_ERROR (iperf3 src/iperf_api.h, 3.12). */
enum iperf3_ierrno {
	IPERF3_IEDURATION   = 5,
	IPERF3_IENUMSTREAMS = 6,
	IPERF3_IEBLOCKSIZE  = 7,
	IPERF3_IEBUFSIZE    = 8,
	IPERF3_IEMSS        = 10,
	IPERF3_IEOMIT       = 12,
	IPERF3_IEUNIMP      = 13,
};

#define IPERF3_COOKIE_SIZE   37            /* 36 chars [a-z2-7] + NUL */
#define IPERF3_DEFAULT_PORT  5201
#define IPERF3_MAX_STREAMS   128
#define IPERF3_MAX_BLOCKSIZE (1024u * 1024u)   /* bytes, TCP -l max */
#define IPERF3_DEFAULT_TCP_BLKSIZE (128u * 1024u)
#define IPERF3_MAX_TIME      86400         /* seconds */
#define IPERF3_MAX_WINDOW    (512u * 1024u * 1024u)  /* bytes, -w max */
#define IPERF3_MAX_JSON      (1024u * 1024u)  /* our cap on one JSON message */

/* Human name of a state code ("TEST_END", "unknown"). */
const char *iperf3_state_name(int state);

/* Text for an iperf3 i_errno received in SERVER_ERROR (the common ones;
 * "iperf3 error N" otherwise). Returns a static string. */
const char *iperf3_ierrno_text(int ierrno);

/* Fill cookie with 36 random chars from [a-z2-7] and a NUL (getrandom(2)).
 * Returns 0 or -errno with err filled. */
int iperf3_make_cookie(char cookie[IPERF3_COOKIE_SIZE], struct ll_err *err);

/* True if c is 36 chars of [a-z2-7] followed by NUL. */
bool iperf3_cookie_valid(const char cookie[IPERF3_COOKIE_SIZE]);

/* Read / write exactly n bytes. timeout_ms bounds each wait for progress
 * (poll(2)); < 0 = no timeout. Returns 0, -ETIMEDOUT, -ECONNRESET (EOF
 * before n bytes) or -errno; err names what and why. */
int iperf3_read_full(int fd, void *buf, size_t n, int timeout_ms,
		     struct ll_err *err);
int iperf3_write_full(int fd, const void *buf, size_t n, int timeout_ms,
		      struct ll_err *err);

/* One state byte. recv: *state gets the signed value. */
int iperf3_send_state(int fd, int state, struct ll_err *err);
int iperf3_recv_state(int fd, int *state, int timeout_ms, struct ll_err *err);

/* Read the 8 bytes after SERVER_ERROR (int32be i_errno, int32be errno) and
 * fill err with "server error: <iperf3 text>: <strerror>". Returns -EIO (or
 * the read error). */
int iperf3_read_server_error(int fd, int timeout_ms, struct ll_err *err);
/* Send SERVER_ERROR + i_errno + errno (both int32 big-endian). */
int iperf3_send_server_error(int fd, int ierrno, int err_no, struct ll_err *err);

/* u32 big-endian length + that many bytes of unformatted JSON, no NUL
 * (iperf3 JSON_write/JSON_read). read: *out gets a parsed object (caller
 * cJSON_Delete); messages over max bytes are refused with -EMSGSIZE;
 * trailing bytes after the first JSON value are ignored as iperf3 does. */
int iperf3_json_write(int fd, const cJSON *j, int timeout_ms,
		      struct ll_err *err);
int iperf3_json_read(int fd, cJSON **out, size_t max, int timeout_ms,
		     struct ll_err *err);

/* The parameter object (client -> server). */
struct iperf3_params {
	bool udp;              /* else tcp */
	bool reverse;          /* "reverse" present */
	bool bidir;            /* "bidirectional" present */
	bool nodelay;          /* "nodelay" present */
	bool udp_counters_64bit; /* "udp_counters_64bit" present: 64-bit seq */
	double omit;           /* s */
	double time;           /* s, 0 = unlimited */
	uint64_t num;          /* bytes, 0 = unused */
	uint64_t blockcount;   /* blocks, 0 = unused */
	int parallel;          /* streams */
	uint64_t window;       /* bytes, 0 = default */
	uint32_t len;          /* bytes per block */
	uint64_t bandwidth;    /* bit/s, 0 (absent) = unlimited */
	uint32_t mss;          /* bytes, 0 = default */
	int pacing_timer;      /* us (sent as iperf3 does, default 1000) */
	char congestion[32];   /* "" = absent */
	char client_version[32];
	bool zerocopy;         /* "zerocopy" present: -Z, sendfile(2) (3.11+) */
	bool get_server_output;/* "get_server_output" present */
	/* linklab extension, ignored by stock iperf3: the client asks the
	 * server for live interval samples over the control connection
	 * ("linklab_live": interval in seconds, 0 = not asked) */
	double live_interval;
	/* the server's UDP senders use GSO batches: "linklab_gso" present
	 * (a linklab extension: linklab test without --no-gso) or "gso" > 0
	 * (iperf3 3.21 --gsro) */
	bool gso;
};

/* linklab extension on the control connection: only when the client asked
 * with IPERF3_LINKLAB_LIVE_KEY, the server interleaves this state byte
 * followed by one u32-BE length-prefixed JSON object
 * {"start":s,"end":s,"streams":[{"id","bytes","retransmits","snd_cwnd",
 * "rtt","rttvar","pmtu","sender"}]} (units as iperf3 -J: bytes, us). */
#define IPERF3_LINKLAB_SAMPLE 100

/* Param key of the live-sample extension (stock iperf3 ignores unknown keys). */
#define IPERF3_LINKLAB_LIVE_KEY "linklab_live"

/* Defaults as iperf3 3.12 sends them: tcp, time 10, parallel 1, len 128 KiB,
 * pacing_timer 1000, client_version "linklab". */
void iperf3_params_init(struct iperf3_params *p);

/* Build the JSON object. Booleans are sent by presence only ("reverse":true
 * or no key - never false: 3.12 tests presence); "bandwidth" only when
 * non-zero. Returns NULL on allocation failure. */
cJSON *iperf3_params_build(const struct iperf3_params *p);

/* Parse a received object into p (defaults for absent keys; a boolean key
 * counts when present with any value other than false/null). Unknown keys are
 * ignored. -EINVAL (err filled) if the value is not an object or a number key
 * holds a non-number. */
int iperf3_params_parse(const cJSON *j, struct iperf3_params *p,
			struct ll_err *err);

/* Server-side range checks (iperf3 master's get_parameters limits):
 * parallel 1..128 (1..64 with bidirectional), TCP len 1..1 MiB (UDP
 * 16..65507), time 0..86400, window <= 512 MiB, omit 0..600, MSS
 * 0..65535 (TCP_MAXSEG range; 3.21 allows up to 32767). Every problem in
 * diag; returns 0, or the iperf3 i_errno of the first problem (positive) for
 * SERVER_ERROR. */
int iperf3_params_check(const struct iperf3_params *p, struct ll_diag *diag);

/* One stream in a results object. */
struct iperf3_stream_result {
	int id;                /* 1, 3, 4, ... */
	uint64_t bytes;
	int64_t retransmits;   /* -1 = not a sender / unknown */
	double jitter;         /* s (UDP) */
	int64_t errors, packets;
	int64_t omitted_errors, omitted_packets;   /* -1 when absent (< 3.14) */
	double start_time, end_time;               /* s; has_times if present */
	bool has_times;
	/* UDP receiver's duplicate datagrams: linklab's extra per-stream key
	 * "duplicates" (stock iperf3's get_results ignores unknown keys, and
	 * sends none: has_dups false) */
	bool has_dups;
	uint64_t dups;
	/* UDP receiver's out-of-order datagrams after the -O period: linklab's
	 * extra key "out_of_order" (stock iperf3 sends none: has_ooo false) */
	bool has_ooo;
	uint64_t ooo;
};

/* The counted (after -O) datagrams and losses of a UDP stream from a
 * results entry, as iperf3 3.14+ computes them: "packets" and "errors" are
 * totals including the omitted period, "omitted_packets"/"omitted_errors"
 * that period's share. When the peer sent no omitted_* (iperf3 < 3.14),
 * own_omit_packets (this side's count at the end of -O) is taken off the
 * packets, as iperf3 3.12 does; its errors then include the omitted
 * period's, and *lost is -1 (unknown, as iperf3 3.14+ says) when there was
 * an omitted period and errors > 0, else the errors. Clamped:
 * 0 <= *lost <= *packets (or -1). */
void iperf3_udp_counted(const struct iperf3_stream_result *r,
			int64_t own_omit_packets, int64_t *packets,
			int64_t *lost);

/* The results object (both directions, iperf3 send_results/get_results). */
struct iperf3_results {
	double cpu_total, cpu_user, cpu_system;   /* percent */
	int sender_has_retransmits;               /* 1, 0 or -1 */
	char congestion_used[32];
	int nstreams;
	struct iperf3_stream_result s[IPERF3_MAX_STREAMS];
};

/* A JSON number as int64, mapping 3.12's unsigned printing of negatives
 * (18446744073709551615 for -1) back to the negative value. */
int64_t iperf3_json_int(const cJSON *n);

cJSON *iperf3_results_build(const struct iperf3_results *r);
/* Requires cpu_util_*, sender_has_retransmits, streams[] with id, bytes,
 * retransmits, jitter, errors, packets (as 3.12's get_results does);
 * omitted_* and start_time/end_time are optional. -EINVAL with err. */
int iperf3_results_parse(const cJSON *j, struct iperf3_results *r,
			 struct ll_err *err);

/* TCP_INFO of a socket (linux/tcp.h struct tcp_info; iperf3 src/tcp_info.c):
 * total_retrans, snd_cwnd in bytes (cwnd x snd_mss), rtt/rttvar in us, pmtu
 * in bytes. Fields unknown are -1. Returns 0 or -errno. */
struct iperf3_tcpinfo {
	int64_t total_retrans, snd_cwnd, rtt_us, rttvar_us, pmtu, snd_mss;
	int64_t snd_wnd;      /* bytes, tcpi_snd_wnd (Linux 6.2+), -1 unknown */
	int64_t reord_seen;   /* tcpi_reord_seen (Linux 4.19+), -1 unknown */
};
int iperf3_tcp_info(int fd, struct iperf3_tcpinfo *ti);

/* Stream id of the i-th stream (0-based): 1, 3, 4, 5 ... (iperf3
 * iperf_add_stream keeps id 2 unused). */
int iperf3_stream_id(int index);

/* A start gate: workers are created blocked on it and released together,
 * so that starting 128 threads does not eat into the measured time. Paced
 * senders wait on its condition for gaps over 5 ms, so iperf3_gate_open()
 * after setting *stop also ends such a wait at once. */
struct iperf3_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool open;
};
void iperf3_gate_init(struct iperf3_gate *g);
void iperf3_gate_open(struct iperf3_gate *g);   /* idempotent */
void iperf3_gate_destroy(struct iperf3_gate *g);

/* A data stream worker: one thread, blocking send() or recv() of len-byte
 * blocks, counting bytes in an atomic counter the control thread snapshots.
 * Sender optionally paced to rate bit/s (0 = unlimited). The worker stops when
 * *stop becomes true (checked after every block), on EOF or on an error; it
 * blocks all signals so that they reach the main thread. To end a worker
 * blocked in send()/recv(), set *stop, then shutdown(fd, SHUT_RDWR) (this
 * wakes connected UDP sockets too), then iperf3_stream_join(). */
struct iperf3_stream {
	int fd;
	int id;
	bool sender;
	uint32_t len;                  /* bytes per block */
	uint64_t rate;                 /* bit/s, 0 = unlimited (sender) */
	const atomic_bool *stop;
	struct iperf3_gate *gate;      /* NULL: start at once */
	_Atomic uint64_t bytes;        /* bytes sent or received so far */
	_Atomic int error;             /* 0 or errno that ended it */
	/* UDP (iperf3 src/iperf_udp.c): 12-byte header sec, usec, seq
	 * (u32 BE each, seq from 1), receiver statistics as iperf3 keeps them */
	bool udp;
	bool seq64;                    /* --udp-counters-64bit: 16-byte header */
	_Atomic uint64_t packets;      /* sent; receiver: highest seq seen */
	_Atomic int64_t lost;          /* receiver: sequence gaps */
	_Atomic int64_t outoforder;    /* receiver */
	_Atomic uint64_t jitter_bits;  /* receiver: jitter in s, double bits */
	double prev_transit;           /* receiver thread only */
	uint64_t omit_bytes, omit_packets;  /* counts at the end of -O (owner) */
	int64_t omit_lost, omit_ooo;   /* receiver: the same for lost and
	                                * out-of-order (iperf3_stream_end_omit) */
	_Atomic uint64_t settled_lost; /* receiver: udpstats_settled_lost() */
	pthread_t thread;
	bool running;
	unsigned char *buf;
	/* zerocopy, -n/-k budgets, completion */
	bool zerocopy;                 /* TCP sender: sendfile(2) from a memfd */
	_Atomic uint64_t *budget_used; /* -n/-k: bytes claimed by all senders */
	uint64_t budget;               /* -n/-k: byte limit (0 = none) */
	_Atomic bool finished;         /* set when the worker returns */
	const int *notify_fd;          /* NULL, or a pipe: 1 byte when finished */
	_Atomic uint64_t dups;         /* UDP receiver: duplicate datagrams */
	_Atomic int64_t last_lost;     /* owner: lost at the previous interval */
	int mfd;                       /* zerocopy memfd (worker owned) */
	bool rcvbuf_boost;             /* UDP receiver without -w: raise the
	                                * socket buffer to 16 MiB (root may
	                                * exceed rmem_max) so that bursts at
	                                * Gbit/s rates are not dropped by us */
	bool gso;                      /* UDP sender: GSO batches (receivers
	                                * always ask for UDP_GRO) */
	_Atomic unsigned gso_segs;     /* UDP: most datagrams in one GSO send
	                                * or one GRO receive (1 = none) */
	bool buf_shared;               /* TCP: buf is the process-wide block
	                                * (senders: one random 1 MiB block read
	                                * by all; receivers: one scratch area
	                                * the kernel writes) - a small cache and
	                                * RSS footprint with 128 streams */
};

/* UDP stream setup (iperf3 iperf_udp_connect/accept): the client sends the
 * 4 bytes "9876", the server answers "6789" from a socket connect()ed to
 * the client. */
#define IPERF3_UDP_HELLO "9876"
#define IPERF3_UDP_REPLY "6789"
#define IPERF3_UDP_HDR   12            /* bytes: sec, usec, seq */
#define IPERF3_UDP_DEFAULT_LEN 1460    /* bytes (iperf3: control MSS) */
#define IPERF3_UDP_HDR64 16            /* bytes with --udp-counters-64bit */
#define IPERF3_UDP_DEFAULT_RATE 1048576 /* bit/s (iperf3 UDP default) */
#define IPERF3_UDP_GRO_BUF 65536       /* bytes: a receiver's buffer with GRO */

/* UDP datagram length iperf3 picks when -l is not given: the control
 * connection's TCP_MAXSEG if 16..65507, else 1460 (iperf3 iperf_api.c
 * iperf_connect: "blksize = ctrl_sck_mss"). */
uint32_t iperf3_udp_default_len(int ctrl_fd);

/* Data-socket options both ends apply (iperf3 iperf_tcp.c): TCP_MAXSEG
 * (mss bytes, 0 = leave), TCP_NODELAY, TCP_CONGESTION (cc "" = leave),
 * SO_SNDBUF/SO_RCVBUF (window bytes, 0 = leave). Returns 0 or -errno with
 * err naming the option and the strerror text (an unknown congestion
 * control gives -ENOENT: "TCP_CONGESTION cubicx: No such file...").*/
int iperf3_tune_socket(int fd, bool tcp, uint32_t mss, bool nodelay,
		       const char *cc, uint64_t window, struct ll_err *err);

/* -C NAME can be used on this host: it is in
 * /proc/sys/net/ipv4/tcp_available_congestion_control (as root, after a
 * TCP_CONGESTION setsockopt on a throwaway socket has let the kernel load
 * the module tcp_NAME), and for non-root also in
 * tcp_allowed_congestion_control (tcp(7)). 0 (also for "" and when /proc
 * cannot be read), -ENOENT "-C 'NAME': not available here (available:
 * cubic reno ...)", or -EPERM naming the allowed list. */
int iperf3_cc_check(const char *name, struct ll_err *err);

/* Congestion control of a TCP socket into buf ("" if unknown). */
void iperf3_socket_cc(int fd, char *buf, size_t len);

/* End of the -O period: snapshot bytes, packets, lost and out-of-order
 * (iperf3 iperf_reset_stats keeps the omitted counts the same way). */
void iperf3_stream_end_omit(struct iperf3_stream *s);

/* This side's results entry for stream s after the test (UDP fields as
 * iperf3 3.14+ sends them: totals plus omitted_*; the receiver adds
 * jitter, "duplicates" and "out_of_order"). retransmits, times and id are
 * the caller's. */
void iperf3_stream_udp_result(const struct iperf3_stream *s,
			      struct iperf3_stream_result *r);

/* What one side (client or server) knows at EXCHANGE_RESULTS. */
struct iperf3_side {
	const struct iperf3_stream *st;   /* its n streams */
	int n;
	const int64_t *retr;      /* per stream: the sender's TCP retransmits
				   * (tcpi_total_retrans), -1 receiver/unknown */
	bool sends;               /* this side sends on some stream */
	bool udp;
	int cc_fd;                /* socket whose TCP_CONGESTION is reported
				   * (-1: none) */
	double wall;              /* s of CPU accounting since cpu_user0/sys0 */
	double cpu_user0, cpu_sys0;   /* iperf3_cpu_times at the start */
	double dur;               /* s counted after -O: end_time */
};

/* This side's results object, as iperf3's send_results fills it: CPU use
 * in percent of side->wall, sender_has_retransmits (1 TCP sender, 0 UDP
 * sender, -1 receiver only), the congestion control, and per stream id,
 * bytes after -O, retransmits, times [0, dur] and for UDP
 * iperf3_stream_udp_result. Client and server both send this. */
void iperf3_results_fill(const struct iperf3_side *side, struct iperf3_results *res);

/* The entry of stream id in r (the other side's results), NULL if none. */
const struct iperf3_stream_result *iperf3_results_stream(const struct iperf3_results *r,
							 int id);

/* Receiver jitter of a UDP stream in seconds. */
double iperf3_stream_jitter(const struct iperf3_stream *s);

/* Start the worker (allocates buf of len random bytes). -errno with err. */
int iperf3_stream_start(struct iperf3_stream *s, struct ll_err *err);
/* Join the worker (if running) and free buf. The fd is not closed. */
void iperf3_stream_join(struct iperf3_stream *s);

/* CLOCK_MONOTONIC now, in seconds. */
double iperf3_now(void);

/* CPU time of this process (user, system) in seconds (getrusage). */
void iperf3_cpu_times(double *user, double *sys);

#endif
