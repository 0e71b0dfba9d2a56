/* SPDX-License-Identifier: MIT */
/* udpstats.h - receiver statistics of one UDP test stream: loss, reordering,
 * duplicates and inter-arrival jitter, computed from the iperf3 datagram
 * header (sender's sec, usec, sequence number starting at 1; iperf3
 * src/iperf_udp.c). Pure arithmetic, no I/O; one owner thread per object.
 *
 * Rules:
 *  - sequence numbers are unwrapped to 64 bits (a 32-bit counter that wraps
 *    past 2^32 keeps counting up; a number more than 2^31 behind the highest
 *    seen is taken as from the next lap);
 *  - a datagram whose number was already received (within the last
 *    UDPSTATS_WINDOW numbers) is a duplicate: it counts neither as received
 *    nor as out of order nor as lost (its bytes are the caller's: iperf3
 *    counts every datagram's bytes, and so does src/traffic/iperf3.c);
 *  - lost = highest number seen - distinct numbers received, never below 0:
 *    a reordered datagram is never lost once it arrives;
 *  - settled loss (for interval reports): only the numbers that were
 *    overtaken at least UDPSTATS_SETTLE_US ago (by the receiver's clock) and
 *    are still missing; a gap that a late datagram fills within that time is
 *    never reported as lost. Checkpoints of (highest, received) are taken on
 *    arrivals every UDPSTATS_SETTLE_US; the older of the two checkpoints
 *    gives the settled count, so a loss shows 0.2 to 0.4 s after the
 *    overtaking datagram arrived. The end total is udpstats_lost();
 *  - jitter: RFC 3550 section 6.4.1 (J += (|D| - J) / 16) with D the change
 *    in relative transit time, computed in integer microseconds so that any
 *    constant offset between the sender's and the receiver's clocks cancels
 *    exactly. Duplicates are left out of the jitter.
 */
#ifndef LINKLAB_UDPSTATS_H
#define LINKLAB_UDPSTATS_H

#include <stdbool.h>
#include <stdint.h>

#define UDPSTATS_WINDOW 4096   /* datagrams remembered for duplicate checks */
#define UDPSTATS_SETTLE_US 200000  /* us a gap may stay open before it is lost */

struct udpstats {
	uint64_t highest;      /* highest (unwrapped) sequence number seen */
	uint64_t received;     /* distinct sequence numbers received */
	uint64_t dups;         /* duplicates */
	uint64_t ooo;          /* out of order: below highest, first copy */
	uint64_t late;         /* older than the window: counted as received */
	int64_t prev_transit_us;
	bool have_transit;
	double jitter_s;       /* smoothed jitter, seconds */
	uint64_t seen[UDPSTATS_WINDOW / 64];   /* bitmap of highest-WINDOW+1..highest */
	/* settle checkpoints: [0] older, [1] newer; mark = highest then,
	 * got = distinct numbers <= mark received so far (late ones too) */
	struct { uint64_t mark, got; } ck[2];
	int64_t ck_us;         /* arrival time of the newer checkpoint */
	bool have_ck;
};

void udpstats_init(struct udpstats *u);

/* Account one datagram: seq as carried on the wire (seq_bits 32 or 64),
 * the sender's timestamp (sent_us, any clock) and the arrival time (now_us,
 * any clock). Returns 1 new in order, 2 reordered (late but new), 0
 * duplicate, -1 ignored (sequence 0). */
int udpstats_packet(struct udpstats *u, uint64_t seq, int seq_bits,
		    int64_t sent_us, int64_t now_us);

/* Datagrams lost so far: highest - received, clamped to >= 0. */
uint64_t udpstats_lost(const struct udpstats *u);

/* Settled loss so far (see the rules above): never above udpstats_lost()
 * of the same moment plus later-filled gaps, never above highest. */
uint64_t udpstats_settled_lost(const struct udpstats *u);

/* One interval's loss out of the cumulative settled count `settled`:
 * *reported is what earlier intervals reported; the result is at most
 * `packets` (the interval's datagram count) so that 0 <= lost <= total, and
 * what did not fit is carried into the next interval. *reported grows by the
 * result. The test's last interval passes udpstats_lost() as `settled`: what
 * is still missing at the end is lost. */
uint64_t udpstats_interval_lost(uint64_t settled, uint64_t *reported,
				uint64_t packets);

/* Loss in percent of highest (0 when nothing was expected; never NaN). */
double udpstats_loss_percent(uint64_t lost, uint64_t expected);

#endif
