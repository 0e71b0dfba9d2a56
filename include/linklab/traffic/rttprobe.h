/* SPDX-License-Identifier: MIT */
/* rttprobe.h - round-trip time probes beside a throughput test: a UDP echo
 * that linklab serve runs on its own port number, the client's prober
 * (idle RTT before a test, RTT under load during it), summarised like
 * ping(8): min/avg/max/mdev in ms, mdev = sqrt(mean(x^2) - mean(x)^2) as
 * iputils ping computes it. Plus the mean and 95 % confidence interval of
 * repeated runs (Student's t, as netperf -i/-I reports confidence).
 *
 * Probe datagram (32 bytes, network order): "LLRT" magic, u32 flags (0),
 * u64 sequence, u64 send time (ns, the prober's CLOCK_MONOTONIC), u64 0.
 * The echo sends each valid probe back unchanged; anything else is
 * ignored. Never prints, never exits.
 */
#ifndef LINKLAB_RTTPROBE_H
#define LINKLAB_RTTPROBE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "linklab/base/err.h"

#define RTTPROBE_LEN 32
#define RTTPROBE_MAGIC "LLRT"

/* ping-style summary; all ms; valid only when received > 0 */
struct rtt_stats {
	int sent, received;
	double min_ms, avg_ms, max_ms, mdev_ms;
};

/* --- echo (server side) --- */
struct rtt_echo;

/* Bind a UDP socket to addr (the server's TCP listening address and port,
 * SO_REUSEADDR) and answer probes on a thread. -errno with err. */
int rtt_echo_start(struct rtt_echo **e, const struct sockaddr *addr,
		   socklen_t len, struct ll_err *err);
/* Pause (close the socket) while a UDP test creates its streams on the same
 * port, resume after. Returns once the socket is closed / bound again. */
void rtt_echo_pause(struct rtt_echo *e, bool paused);
/* Stop the thread, close, free. NULL is fine. */
void rtt_echo_stop(struct rtt_echo *e);

/* --- prober (client side) --- */
struct rtt_prober;

/* A UDP socket connected to addr (the server's address and port). */
int rtt_prober_open(struct rtt_prober **p, const struct sockaddr *addr,
		    socklen_t len, struct ll_err *err);
/* Send count probes every interval_s, wait up to timeout_s after the last
 * for the replies; fills st (sent, received, min/avg/max/mdev). Returns 0
 * (received may be 0: no echo there, e.g. a stock iperf3 server) or
 * -errno. Stops early when *stop becomes true (stop may be NULL). */
int rtt_prober_run(struct rtt_prober *p, int count, double interval_s,
		   double timeout_s, const atomic_bool *stop,
		   struct rtt_stats *st, struct ll_err *err);
/* As rtt_prober_run, and the RTT of each answered probe in ms, in arrival
 * order, into out_ms[0 .. st->received) (out_ms holds count values). */
int rtt_prober_samples(struct rtt_prober *p, int count, double interval_s,
		       double timeout_s, const atomic_bool *stop,
		       struct rtt_stats *st, double *out_ms, struct ll_err *err);
void rtt_prober_close(struct rtt_prober *p);

/* ping's summary of n RTT samples in ms into st (sent/received untouched). */
void rtt_stats_compute(const double *ms, int n, struct rtt_stats *st);

/* Mean and half-width of the two-sided 95 % confidence interval of x[0..n)
 * (Student's t with n-1 degrees of freedom; half = 0 for n < 2). */
void rtt_mean_ci95(const double *x, int n, double *mean, double *half);

#endif
