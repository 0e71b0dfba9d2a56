/* SPDX-License-Identifier: MIT */
/* rpm.h - responsiveness under working conditions, after
 * draft-ietf-ippm-responsiveness-09 adapted to linklab's own protocol (no
 * HTTP): idle RTT first, then load the path with parallel TCP streams of the
 * iperf3 protocol, adding streams round by round (1, 2, 4, ... up to
 * max_streams) until goodput stops growing by 5 %; then keep that load and
 * measure the working latency on two kinds of probe at once:
 *   foreign - UDP echo probes on a separate socket (linklab serve's RTT echo,
 *             rttprobe.h), every 50 ms;
 *   self    - the smoothed RTT (TCP_INFO tcpi_rtt) of the loaded streams'
 *             sending sockets, every interval (for -R the server's, sent as
 *             linklab serve's live samples).
 * working RTT = (TM(foreign) + TM(self)) / 2 with TM the 95 % trimmed mean
 * (the draft's section 4.4), RPM = 60000 / working RTT in ms. The
 * distribution of every working sample (p50/p90/p99/max) is reported too.
 * Never prints, never exits.
 */
#ifndef LINKLAB_RPM_H
#define LINKLAB_RPM_H

#include <stdatomic.h>
#include <stdbool.h>

#include "linklab/base/err.h"

struct rpm_opts {
	char host[256];        /* server address (linklab serve or iperf3 -s) */
	int port;              /* default 5201 */
	int max_streams;       /* -P: the most load streams, 1..128 (16) */
	double duration;       /* -t: seconds per direction, 6..600 (20) */
	bool reverse;          /* download: the server sends */
	double round;          /* seconds per ramp round, 1..10 (2) */
	double connect_timeout;/* seconds (10) */
	char congestion[32];   /* -C: TCP congestion control of the load
	                        * streams ("" = the host's default) */
};

enum rpm_confidence { RPM_LOW, RPM_MEDIUM, RPM_HIGH };

/* Why the ramp stopped adding streams. */
enum rpm_ramp_end {
	RPM_RAMP_SATURATED,    /* a round added less than 5 % goodput */
	RPM_RAMP_MAX_STREAMS,  /* -P reached */
	RPM_RAMP_TIME,         /* half of -t spent ramping */
};

/* One direction's result; every figure is measured. */
struct rpm_result {
	bool reverse;
	int streams;           /* load streams of the working phase */
	bool saturated;        /* goodput stopped growing (ramp_end) */
	enum rpm_ramp_end ramp_end;
	bool stable;           /* the working RTT's last 4 interval means lie
	                        * within 5 % of their mean (draft 4.1) */
	double goodput_bps;    /* receiver SUM of the working phase */
	int idle_n;            /* answered idle probes (0: no echo) */
	double idle_rtt_ms;    /* TM of the idle probes */
	int foreign_n, self_n; /* working samples of each kind */
	double foreign_ms, self_ms;   /* their TMs (0 when n = 0) */
	double working_rtt_ms; /* (TM(foreign) + TM(self)) / 2, or the one
	                        * that was measured */
	double rpm;            /* 60000 / working_rtt_ms */
	double p50_ms, p90_ms, p99_ms, max_ms;  /* every working sample */
	enum rpm_confidence confidence;  /* high: saturated, stable and >= 40
	                        * samples of each kind; medium: two of those */
	char note[512];        /* what could not be measured, and why */
};

/* Fill defaults. */
void rpm_opts_init(struct rpm_opts *o);

/* Check ranges; every problem in diag; -EINVAL if any. */
int rpm_opts_validate(const struct rpm_opts *o, struct ll_diag *diag);

/* Run one direction (o->reverse). Blocks for about o->duration seconds;
 * *stop (may be NULL) ends it early with what was measured. 0, or -errno
 * with err (cannot connect; neither kind of working probe answered). */
int rpm_run(const struct rpm_opts *o, struct rpm_result *r,
	    const atomic_bool *stop, struct ll_err *err);

/* "low", "medium", "high". */
const char *rpm_confidence_name(enum rpm_confidence c);

#endif
