/* SPDX-License-Identifier: MIT */
/* emu.h - linklab's own impairment model with netem's semantics, for kernels
 * without sch_netem (the userspace engine of `linklab bridge`).
 *
 * Pure and deterministic: no I/O, no clock reads, no threads. The caller
 * passes "now" (ns, any monotonic origin) and the PRNG is seeded, so a seed
 * and a packet sequence give the same fates every time (unit tests).
 *
 * Rules follow the kernel's net/sched/sch_netem.c (netem_enqueue, tabledist,
 * get_crandom, loss_4state, loss_gilb_ell, packet_time_ns) and man tc-netem(8):
 *  - per packet, in this order: duplicate? (the copy re-enters the model
 *    with duplication off, as netem re-enqueues it at the root), loss (random
 *    with correlation, Gilbert-Elliott or 4-state Markov), corrupt (one bit),
 *    queue limit (packets; tail drop counted), then the schedule:
 *  - reorder: with gap G > 0, the first G-1 packets after each reordered one
 *    are delayed; later ones go out at once with probability `reorder`
 *    (tc sets G = 1 when reorder is given without gap). Sent-at-once packets
 *    go to the head of the queue (released before any delayed packet);
 *  - delay: time_to_send = now + tabledist(delay, jitter): uniform in
 *    [delay - jitter, delay + jitter) without a table, else
 *    delay + jitter * table[rnd % size] / 8192 (NETEM_DIST_SCALE);
 *  - rate (netem's `rate RATE OVERHEAD CELLSIZE CELLOVERHEAD`): each packet
 *    occupies (len + overhead, rounded up to cells) * 8 / rate seconds after
 *    the later of (its delayed time, the previous packet's release), so the
 *    output is serialised at the rate; rate_backlog_ns > 0 adds tbf's rule
 *    (drop when the serialisation backlog exceeds that latency; counted as
 *    rate_drops), 0 keeps netem's unbounded-by-time behaviour;
 *  - the queue is ordered by time to send (netem's tfifo): jitter reorders;
 *  - then the token bucket (the dial's `rate`, tbf in the kernel layout
 *    "tbf root, netem child"; net/sched/sch_tbf.c, tc-tbf(8)): a packet that
 *    netem releases (time to send reached) leaves when the bucket holds its
 *    length; the bucket holds at most tbf_burst bytes, starts full and fills
 *    at tbf_rate. A packet longer than EMU_TBF_FRAME (a GSO super-packet,
 *    which the kernel segments and sends segment by segment) leaves when
 *    the bucket holds one frame, as its first segment would, and borrows
 *    the rest: the bucket goes negative and the next packet waits until it
 *    is repaid, so the long-run rate is exact. A late dequeue is made up:
 *    tokens keep accumulating (up to the bucket) while nobody asks. tbf_limit bounds the
 *    bytes queued (tbf's bfifo: the whole queue when no netem field is set),
 *    drops counted as rate_drops.
 * Units: ns, bytes, bytes/s, u32 probability fraction (UINT32_MAX = 100%).
 */
#ifndef LINKLAB_EMU_H
#define LINKLAB_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"
#include "linklab/model/impair.h"

#define EMU_DIST_SCALE 8192     /* NETEM_DIST_SCALE (include/uapi pkt_sched.h) */
#define EMU_DIST_MAX   16384    /* NETEM_DIST_MAX: at most this many entries */
#define EMU_TBF_FRAME  1514     /* bytes: the bucket must hold this much (or
				 * the whole packet if shorter) for a packet to leave */

enum emu_loss_model {
	EMU_LOSS_RANDOM = 0,    /* loss + loss_corr */
	EMU_LOSS_GE,            /* Gilbert-Elliott: tc `loss gemodel P R 1-H 1-K` */
	EMU_LOSS_4STATE,        /* tc `loss state P13 P31 P32 P23 P14` */
};

/* A delay distribution table, as iproute2's *.dist files: values of a
 * unit-sigma variate scaled by EMU_DIST_SCALE. */
struct emu_dist {
	int n;                  /* entries, 1..EMU_DIST_MAX */
	int16_t t[EMU_DIST_MAX];
};

struct emu_config {
	int64_t delay;          /* ns, >= 0 */
	int64_t jitter;         /* ns, 0..INT32_MAX */
	uint32_t delay_corr;    /* u32 fraction */
	const struct emu_dist *dist;   /* NULL = uniform (kernel default) */

	enum emu_loss_model loss_model;
	uint32_t loss, loss_corr;      /* EMU_LOSS_RANDOM */
	/* EMU_LOSS_GE, CLI meaning: p good->bad, r bad->good, loss 1-h in bad,
	 * loss 1-k in good (tc defaults: r = 1-p, 1-h = 100%, 1-k = 0). */
	uint32_t ge_p, ge_r, ge_1h, ge_1k;
	/* EMU_LOSS_4STATE (tc defaults: p31 = 1-p13, p32 = 0, p23 = 100%,
	 * p14 = 0). States: 1 good, 2 good in burst, 3 burst loss, 4 isolated
	 * loss; a packet is lost when the chain enters 3 or 4. */
	uint32_t p13, p31, p32, p23, p14;

	uint32_t duplicate, dup_corr;
	uint32_t corrupt, corrupt_corr;
	uint32_t reorder, reorder_corr;
	uint32_t gap;           /* packets; 0 = no reordering */

	uint64_t rate;          /* bytes/s, 0 = no serialisation */
	int32_t overhead;       /* bytes added per packet (may be negative) */
	uint32_t cell_size;     /* bytes, 0 = no cells */
	int32_t cell_overhead;  /* bytes per cell */
	int64_t rate_backlog_ns;/* drop beyond this serialisation backlog; 0 = none */

	uint32_t limit;         /* packets queued at most (0 -> 1000, as tc) */
	uint64_t seed;          /* PRNG seed */

	/* token bucket after netem (the dial's `rate`; tbf semantics) */
	uint64_t tbf_rate;      /* bytes/s, 0 = no bucket */
	uint32_t tbf_burst;     /* bytes, bucket size (0 -> one frame: 1514) */
	uint32_t tbf_limit;     /* bytes queued at most, 0 = no byte limit */

	bool ecn;               /* a frame the loss model picks is marked CE
				 * instead of dropped when it is ECN-capable
				 * (netem's ecn: INET_ECN_set_ce) */
};

/* Per-instance counters. */
struct emu_stats {
	uint64_t in_pkts, in_bytes;     /* offered to emu_fate */
	uint64_t out_pkts, out_bytes;   /* released by emu_dequeue */
	uint64_t lost;                  /* dropped by the loss model */
	uint64_t duplicated;            /* extra copies made */
	uint64_t corrupted;             /* packets with a bit flipped */
	uint64_t reordered;             /* released after a frame that arrived
					 * later, for any reason (jitter, the
					 * reorder dial, a duplicate): what a
					 * receiver counts as out of order */
	uint64_t sent_ahead;            /* sent at once by the reorder dial */
	uint64_t limit_drops;           /* queue full (limit packets) */
	uint64_t rate_drops;            /* rate backlog beyond rate_backlog_ns */
	uint64_t ecn_marked;            /* picked by the loss model, marked CE */
	uint32_t qlen, qlen_max;        /* packets queued now / at most */
};

/* What happens to one arriving packet (from emu_fate). */
struct emu_fate {
	bool lost;
	bool dup;               /* make one copy and pass it to emu_fate(.., true) */
	bool corrupt;           /* flip bit corrupt_bit (0 .. 8*len-1) */
	bool mark_ce;           /* lost in the model, but ECN-capable and cfg
				 * ecn: set CE (emu_frame_set_ce), send it */
	uint32_t corrupt_bit;
};

struct emu;

/* Create a model for cfg (copied; cfg->dist must outlive the model).
 * -EINVAL (err names the field) on a jitter > INT32_MAX ns, a negative
 * delay, a dist with n outside 1..EMU_DIST_MAX; -ENOMEM. */
int emu_new(const struct emu_config *cfg, struct emu **out, struct ll_err *err);
void emu_free(struct emu *e);

/* Decide duplicate / loss / corrupt for a packet of len bytes (frame
 * length as seen on the wire side of the forwarder). is_dup: this is the
 * copy made for a previous fate->dup (never duplicated again). Counts
 * in_pkts/in_bytes (not for copies), lost, duplicated, corrupted. */
void emu_fate(struct emu *e, uint32_t len, bool is_dup, struct emu_fate *f);

/* emu_fate for a frame whose IP header says ECN-capable (ect: ECT(0),
 * ECT(1) or already CE, see emu_frame_ecn): with cfg ecn, a loss becomes
 * f->mark_ce (counted as ecn_marked, not lost) and the frame goes on to the
 * corrupt draw, as in netem_enqueue. */
void emu_fate_ect(struct emu *e, uint32_t len, bool is_dup, bool ect, struct emu_fate *f);

/* The ECN field (RFC 3168: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE) of an
 * Ethernet frame carrying IPv4 or IPv6 (one 802.1Q tag allowed); -1 when it
 * is not IP or too short. */
int emu_frame_ecn(const unsigned char *frame, uint32_t len);

/* Set CE in an ECN-capable IPv4/IPv6 frame (the IPv4 header checksum is
 * updated incrementally, RFC 1624, as the kernel's IP_ECN_set_ce). Returns
 * true when the frame is now CE (it was ECT or CE), false for a not-ECT or
 * non-IP frame (left as it was). */
bool emu_frame_set_ce(unsigned char *frame, uint32_t len);

/* Queue a packet that survived emu_fate at time now (ns). pkt is the
 * caller's handle, returned by emu_dequeue. Returns 0, or -ENOBUFS when
 * the queue holds limit packets (limit_drops) or the rate backlog is over
 * rate_backlog_ns (rate_drops): the caller still owns pkt. *tts (may be
 * NULL) gets the time to send. */
int emu_enqueue(struct emu *e, int64_t now, uint32_t len, void *pkt,
		int64_t *tts);

/* The next packet due at now (head-queued first, then earliest time to
 * send, FIFO among equal times), or NULL. *len gets its length. */
void *emu_dequeue(struct emu *e, int64_t now, uint32_t *len);

/* Remove any queued packet regardless of time (flush at stop); NULL when
 * empty. Not counted as output. */
void *emu_drain(struct emu *e, uint32_t *len);

/* Earliest time to send of the queue (ns), INT64_MAX when empty. */
int64_t emu_next_time(const struct emu *e);

/* Serialisation time of len bytes at cfg's rate (ns, 0 when no rate):
 * (len + overhead, in cells if cell_size) * 1e9 / rate, as packet_time_ns. */
int64_t emu_packet_time(const struct emu_config *cfg, uint32_t len);

void emu_get_stats(const struct emu *e, struct emu_stats *s);
const struct emu_config *emu_get_config(const struct emu *e);

/* The next 32-bit value of a seeded PRNG (exposed for tests). */
uint32_t emu_rand_u32(struct emu *e);

/* Superseded by emu_config_build() (which gives `rate` tbf's bucket).
 * Map a dial onto a config: delay, jitter, correlations, loss, duplicate,
 * corrupt, reorder (gap 1 when reorder has no gap, as tc), the tbf rate as
 * the serialisation rate (bit/s -> bytes/s, overhead 0 so a 1514-byte frame
 * costs 1514 bytes like tbf's L2 length) with tbf's latency (default 50 ms)
 * as rate_backlog_ns, limit. Other fields of cfg are left as they are. */
void emu_config_from_impair(struct emu_config *cfg, const struct impair *d);

/* Turn ONE dial into a complete model config (c is zeroed first):
 *  - netem fields: delay, jitter, delay-corr, distribution (iproute2's
 *    <name>.dist from the tc directories, `normal` computed when no file;
 *    uniform = no table), loss + loss-corr, loss-gemodel, loss-state (tc's
 *    defaults for missing values), duplicate, corrupt (+ corr), reorder
 *    (+ corr; gap 1 when not given, as tc), gap, limit (impair_plan()'s
 *    derived netem limit when not given: max(1000, 1.5 x BDP)), seed
 *    (seed_fallback when not given), netem-rate with packet-overhead,
 *    cell-size, cell-overhead (netem serialisation, no bucket);
 *  - the dial's rate: tbf_rate, tbf_burst (given, else impair_plan()'s
 *    max(MTU + 14, rate/HZ, 1 ms of rate) with MTU 1500 and the running
 *    kernel's HZ), tbf_limit (given, else rate * latency + burst; latency
 *    default 50 ms) when no netem field is set - with netem fields the
 *    kernel's netem child replaces tbf's byte fifo, so the netem limit is
 *    the queue, here too. Without netem fields the packet limit is
 *    max(1000, tbf_limit / 64), at most 1048576, so the byte limit decides.
 * dist_storage receives a loaded table (c->dist points to it; it must
 * outlive the model); it may be NULL when the dial has no distribution.
 * Errors (c then undefined): -EINVAL when the dial does not validate
 * (the first error of impair_validate/impair_plan) or a table is needed
 * and dist_storage is NULL; -EOPNOTSUPP naming every field the model does
 * not implement (slot, slot-packets, slot-bytes, direction ingress, dst,
 * dport); ecn maps to cfg ecn; -ENOENT/-EIO/-EINVAL from the table file. */
int emu_config_build(struct emu_config *c, const struct impair *d, uint64_t seed_fallback,
		     struct emu_dist *dist_storage, struct ll_err *err);

/* Find and load a delay table: NAME (normal, pareto, paretonormal, ...) is
 * iproute2's NAME.dist in /usr/lib/<arch>/tc, /usr/lib/tc, /usr/lib64/tc or
 * /usr/local/lib/tc; `normal` is computed (emu_dist_normal, 4096 entries)
 * when no file exists. A name with a '/' is a file path. Errors as
 * emu_dist_load, -ENOENT when no file is found. */
int emu_dist_find(const char *name, struct emu_dist *d, struct ll_err *err);

/* Fill a table with the unit normal quantiles (n entries, clamped to
 * +-4 sigma like iproute2's normal.dist). */
void emu_dist_normal(struct emu_dist *d, int n);

/* Load an iproute2 distribution file ("# comment" lines, whitespace
 * separated integers; /usr/lib/<arch>/tc/normal.dist ...). -ENOENT/-EIO
 * with strerror text, -EINVAL on a bad number or no/too many entries. */
int emu_dist_load(const char *path, struct emu_dist *d, struct ll_err *err);

/* Replace the model parameters of a running instance with c (copied;
 * c->dist must outlive the model), between two packets: frames already
 * queued keep their time to send and their order, the counters, the PRNG
 * stream (c->seed is ignored), the correlation memories, the reorder gap
 * counter and the rate serialisation tail (new frames queue after the ones
 * waiting) and the bytes queued stay. A smaller limit drops nothing:
 * enqueue refuses until the queue is below it. The loss model state
 * restarts in "good" when the loss model kind changes; the token bucket
 * (tbf_rate) starts full, as tc's change of a tbf qdisc does
 * (sch_tbf.c tbf_change). -EINVAL as emu_new (nothing changed), -ENOMEM
 * when the queue cannot grow to the new limit (nothing changed). */
int emu_reconfigure(struct emu *e, const struct emu_config *c, struct ll_err *err);

#endif
