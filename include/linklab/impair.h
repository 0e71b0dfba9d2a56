/* SPDX-License-Identifier: MIT */
/* impair.h - the impairment dial: one struct in base units, its field schema,
 * validation (every problem at once, as tc reports them) and the derivation of
 * the qdisc plan (tbf burst/limit, netem limit) from the dial, the interface
 * MTU and the kernel's HZ.
 *
 * Qdisc layout chosen by linklab (documented in doc/impairment.md):
 *   rate only        -> root tbf (handle 1:)
 *   netem only       -> root netem (handle 1:)
 *   rate + netem     -> root tbf (handle 1:), netem child (parent 1:1,
 *                       handle 10:) - the rate is enforced on what netem
 *                       releases, so the delay does not eat tbf's bucket and
 *                       netem's limit is the only queue that must hold the BDP.
 */
#ifndef LINKLAB_IMPAIR_H
#define LINKLAB_IMPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linklab/err.h"

/* Which fields were given (a 0 value can be meaningful, e.g. loss 0%). */
enum impair_bit {
	IMP_RATE        = 1u << 0,
	IMP_BURST       = 1u << 1,
	IMP_TBF_LIMIT   = 1u << 2,
	IMP_DELAY       = 1u << 3,
	IMP_JITTER      = 1u << 4,
	IMP_DELAY_CORR  = 1u << 5,
	IMP_LOSS        = 1u << 6,
	IMP_LOSS_CORR   = 1u << 7,
	IMP_DUP         = 1u << 8,
	IMP_DUP_CORR    = 1u << 9,
	IMP_CORRUPT     = 1u << 10,
	IMP_CORRUPT_CORR= 1u << 11,
	IMP_REORDER     = 1u << 12,
	IMP_REORDER_CORR= 1u << 13,
	IMP_GAP         = 1u << 14,
	IMP_LIMIT       = 1u << 15,
	IMP_LATENCY     = 1u << 16,
};

/* The dial. Units: bit/s, bytes, ns, u32 probability fraction, packets. */
struct impair {
	uint32_t set;            /* enum impair_bit mask of given fields */
	uint64_t rate;           /* bit/s, tbf rate; 0 = unlimited */
	uint64_t burst;          /* bytes, tbf bucket; 0 = derive */
	uint64_t tbf_limit;      /* bytes, tbf queue; 0 = derive from latency */
	int64_t tbf_latency;     /* ns, tbf max queueing latency (default 50ms) */
	int64_t delay;           /* ns, netem one-way delay */
	int64_t jitter;          /* ns, netem jitter (uniform unless dist) */
	uint32_t delay_corr;     /* probability fraction */
	uint32_t loss;           /* probability fraction, random loss */
	uint32_t loss_corr;
	uint32_t duplicate;
	uint32_t dup_corr;
	uint32_t corrupt;
	uint32_t corrupt_corr;
	uint32_t reorder;
	uint32_t reorder_corr;
	uint32_t gap;            /* packets */
	uint32_t limit;          /* netem queue in packets; 0 = derive */
};

/* Field kinds for the schema table. */
enum impair_kind { IMPK_RATE, IMPK_TIME, IMPK_SIZE, IMPK_PERCENT, IMPK_COUNT };

/* One dial field: name as on the command line (--NAME) and in profiles. */
struct impair_field {
	const char *name;       /* "rate", "delay", "loss", ... */
	uint32_t bit;           /* enum impair_bit */
	enum impair_kind kind;
	const char *range;      /* human text of the accepted range */
	const char *help;       /* one line of help */
};

/* The schema table, terminated by an entry with name == NULL. */
extern const struct impair_field impair_fields[];

/* Look a field up by name; NULL if unknown. */
const struct impair_field *impair_field_find(const char *name);

/* Parse "value" for field "name" into d (sets the bit). On a bad value or an
 * unknown field, add one message to diag naming field, value and accepted
 * range and return -EINVAL; d is then unchanged for that field. */
int impair_set(struct impair *d, const char *name, const char *value,
	       struct ll_diag *diag);

/* Print one field of d in exact tc units into buf ("" if not set). */
char *impair_get(const struct impair *d, const struct impair_field *f,
		 char *buf, size_t len);

/* Check ranges and cross-field rules (tc's: reorder needs delay, gap needs
 * reorder, correlations need their probability, jitter needs delay; rate 0
 * refused; delay <= 274s (32-bit ticks), jitter <= INT32_MAX ns). Adds every
 * problem to diag (warnings too, e.g. jitter > delay). Returns -EINVAL if any
 * error was found, else 0. */
int impair_validate(const struct impair *d, struct ll_diag *diag);

bool impair_needs_tbf(const struct impair *d);
bool impair_needs_netem(const struct impair *d);
bool impair_is_empty(const struct impair *d);

/* The concrete qdisc parameters to install, derived from the dial. */
struct impair_plan {
	bool tbf, netem;
	/* tbf */
	uint64_t rate_Bps;       /* bytes/s */
	uint32_t burst;          /* bytes */
	uint32_t tbf_limit;      /* bytes */
	uint32_t mtu;            /* bytes, device MTU used for sizing */
	/* netem (kernel units) */
	int64_t latency_ns, jitter_ns;
	uint32_t limit;          /* packets */
	uint32_t loss, loss_corr, delay_corr, duplicate, dup_corr;
	uint32_t corrupt, corrupt_corr, reorder, reorder_corr, gap;
};

/* Derive the plan. mtu: device MTU in bytes (0 -> 1500). hz: kernel HZ (0 ->
 * 250). Rules: burst >= max(mtu + 14, rate/HZ, 1 ms of rate) bytes (man
 * tc-tbf: "at least rate/HZ"); tbf limit = rate * latency + burst; netem limit
 * >= max(1000, ceil(1.5 * rate * (delay + jitter) / (8 * mtu))). Returns 0, or
 * -EINVAL (diag filled) if the dial does not validate. */
int impair_plan(const struct impair *d, unsigned mtu, unsigned hz,
		struct impair_plan *p, struct ll_diag *diag);

/* The running kernel's HZ (from /proc/config.gz CONFIG_HZ, else
 * sysconf-derived guess 250). */
unsigned impair_kernel_hz(void);

/* One-line summary of a dial in tc words: "rate 50mbit delay 100ms loss 1%";
 * "none" if empty. */
char *impair_summary(const struct impair *d, char *buf, size_t len);

#endif
