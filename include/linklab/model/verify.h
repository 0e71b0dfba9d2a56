/* SPDX-License-Identifier: MIT */
/* verify.h - one row of `linklab verify`: a quantity the dial sets, what the
 * kernels/engines hold (read back), what the wire did (measured), the error
 * and the tolerance it is judged by. Every tolerance comes from the
 * measurement's own sampling error (doc/verify.md):
 *   rate      UDP goodput of a stream sent at 1.2 x the rate, against the
 *             UDP frame ceiling rate x 1448/1490 (1448-byte datagrams in
 *             1490-byte frames, what tbf counts): -(2 % + the dialled loss)
 *             .. +1 % + the bucket's share, burst x 8 / (rate x seconds)
 *             (tbf may pass a full bucket above the rate, man tc-tbf);
 *   rtt       dialled delays + base RTT vs the probes' median: 1 % of the
 *             dialled value + 3 standard errors of the probes + 0.2 ms
 *             (timer and scheduling granularity);
 *   jitter    uniform jitter J: RFC 3550's estimate of E|D_i - D_i-1| is
 *             2J/3; the estimator (gain 1/16) has a standard deviation of
 *             about 0.085 J, so 3 of them: 0.25 J, + 0.1 ms;
 *   loss, duplicate, reorder   k events in n datagrams: ok when the dialled
 *             fraction lies in the 99.9 % Wilson interval of k/n (a run
 *             has up to six such rows: at 99 % a dial held exactly showed
 *             NOT OK somewhere in about one run in 17, at 99.9 % in one
 *             in 170; the interval is about 28 % wider).
 * Pure; never prints. */
#ifndef LINKLAB_VERIFY_H
#define LINKLAB_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "linklab/model/impair.h"

#define VERIFY_MAX_ROWS 12
#define VERIFY_Z999 3.2905   /* two-sided 99.9 % normal quantile */

struct verify_row {
	char quantity[16];      /* "rate", "rtt", "jitter", "loss", ... */
	char direction[8];      /* "a-to-b", "b-to-a", "both" */
	char unit[12];          /* "bit/s", "ms", "fraction" */
	bool measurable;        /* false: `reason` says why; ok is false too */
	double dialled, measured, error;  /* error = measured - dialled */
	double tol_lo, tol_hi;  /* ok when tol_lo <= error <= tol_hi */
	bool ok;
	char detail[200];       /* e.g. "n=20000 k=201, 99 % 0.0086..0.0118" */
};

struct verify_report {
	int n;
	struct verify_row r[VERIFY_MAX_ROWS];
};

/* Append a row (NULL when full). */
struct verify_row *verify_add(struct verify_report *rep, const char *quantity,
			      const char *direction, const char *unit);

/* rate: dialled tbf rate (bit/s), its burst (bytes), the run's seconds and
 * the receiver goodput measured (bit/s). */
void verify_rate(struct verify_row *r, uint64_t rate, uint32_t burst,
		 double seconds, double goodput_bps);

/* rate, measured with UDP above the rate: dialled tbf rate (bit/s), its
 * burst (bytes), the run's seconds, the dialled loss fraction on the way
 * and the receiver's payload goodput (bit/s). */
void verify_rate_udp(struct verify_row *r, uint64_t rate, uint32_t burst,
		     double seconds, double loss, double goodput_bps);

/* rtt: dialled round trip (ms: delays + base), the probes' median, their
 * standard deviation and count. */
void verify_rtt(struct verify_row *r, double dialled_ms, double median_ms,
		double sd_ms, int n);

/* jitter: dialled uniform jitter J (ms) -> expected 2J/3; measured RFC 3550
 * estimate (ms). */
void verify_jitter(struct verify_row *r, double jitter_ms, double measured_ms);

/* loss / duplicate / reorder: dialled fraction, k events in n datagrams. */
void verify_fraction(struct verify_row *r, double dialled, uint64_t k,
		     uint64_t n);

/* A row that cannot be measured here: why (ok = false). */
void verify_unmeasurable(struct verify_row *r, double dialled,
			 const char *reason);

/* Fields two hops of one direction both hold, for which verify_path_add has
 * no rule (their rows are then not compared). */
#define VERIFY_BOTH_JITTER    1u
#define VERIFY_BOTH_DUPLICATE 2u
#define VERIFY_BOTH_REORDER   4u

/* Add a hop in series to one direction's path dial (a peer's egress, then
 * the middle box's direction of the bridge): delays add; loss and corrupt
 * combine as 1 - (1 - p1)(1 - p2) (independent draws); the lower rate binds,
 * and *burst becomes that hop's bucket (bytes); jitter, duplicate and
 * reorder are exact when one hop holds them; when both do, its
 * VERIFY_BOTH_* bit is set in *both and the path gets the jitters' sum and
 * 1 - (1 - p1)(1 - p2) for the others, for show only (the sum of two
 * uniform jitters is not uniform, a duplicate may be duplicated again: no
 * expected value here). Pure. */
void verify_path_add(struct impair *path, uint32_t *burst,
		     const struct impair *hop, uint32_t hop_burst,
		     unsigned *both);

/* True when every row is measurable and ok (an empty report is not ok). */
bool verify_all_ok(const struct verify_report *rep);

#endif
