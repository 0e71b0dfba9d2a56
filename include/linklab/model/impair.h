/* SPDX-License-Identifier: MIT */
/* impair.h - the impairment dial: one struct in base units, its field schema,
 * validation (every problem at once, as tc reports them) and the derivation of
 * the qdisc plan (tbf burst/limit, netem limit) from the dial, the interface
 * MTU and the kernel's HZ (both given by the caller: the model reads no
 * host state; hostinfo_kernel_hz() in the peer layer reads HZ).
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

#include "linklab/base/err.h"

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
	/* netem model fields: distribution, loss models, ecn, rate, slot, seed */
	IMP_DIST        = 1u << 17,
	IMP_LOSS_STATE  = 1u << 18,
	IMP_LOSS_GE     = 1u << 19,
	IMP_ECN         = 1u << 20,
	IMP_NETEM_RATE  = 1u << 21,
	IMP_PKT_OVERHEAD= 1u << 22,
	IMP_CELL_SIZE   = 1u << 23,
	IMP_CELL_OVERHEAD=1u << 24,
	IMP_SLOT        = 1u << 25,
	IMP_SLOT_PACKETS= 1u << 26,
	IMP_SLOT_BYTES  = 1u << 27,
	IMP_SEED        = 1u << 28,
	/* scope: where the dial applies (not an impairment by itself) */
	IMP_DIRECTION   = 1u << 29,
	IMP_DST         = 1u << 30,
};
/* the last bit; a #define because enumerators must fit an int */
#define IMP_DPORT (1u << 31)

/* Direction of the dial on an interface. */
enum impair_direction {
	IMP_EGRESS = 0,         /* the interface's own root qdisc */
	IMP_INGRESS,            /* incoming packets, redirected to an IFB */
};

/* netem delay distribution (tc-netem "distribution"). UNIFORM is the
 * kernel's own default when no table is loaded (sch_netem.c tabledist);
 * the others upload iproute2's <name>.dist table. */
enum impair_dist {
	IMP_DIST_UNIFORM = 0,
	IMP_DIST_NORMAL,
	IMP_DIST_PARETO,
	IMP_DIST_PARETONORMAL,
};

/* Which loss model a plan uses (uapi NETEM_LOSS_*). */
enum impair_loss_model {
	IMP_LOSSM_RANDOM = 0,   /* qopt.loss (+ loss-corr) */
	IMP_LOSSM_STATE,        /* 4-state Markov, NETEM_LOSS_GI */
	IMP_LOSSM_GE,           /* Gilbert-Elliott, NETEM_LOSS_GE */
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
	/* --- netem model fields (tc-netem(8) names in comments) --- */
	uint8_t dist;            /* enum impair_dist ("distribution") */
	uint8_t loss_state_n;    /* values given in loss_state (1..5) */
	uint8_t loss_ge_n;       /* values given in loss_ge (1..4) */
	/* "loss state P13 [P31 [P32 [P23 [P14]]]]" in CLI order, u32
	 * fractions; missing ones take tc's defaults (p31 = 1-p13, p32 = 0,
	 * p23 = 1, p14 = 0) */
	uint32_t loss_state[5];
	/* "loss gemodel P [R [1-H [1-K]]]" in CLI order, u32 fractions;
	 * defaults r = 1-p, 1-h = 1 (h = 0), 1-k = 0 */
	uint32_t loss_ge[4];
	bool ecn;                /* mark CE instead of dropping (needs loss) */
	uint64_t netem_rate;     /* bit/s, netem's own shaper; 0 = none */
	int32_t packet_overhead; /* bytes per packet added (may be < 0) */
	uint32_t cell_size;      /* bytes, 0 = no cells */
	int32_t cell_overhead;   /* bytes per cell (may be < 0) */
	int64_t slot_min, slot_max;  /* ns, "slot MIN [MAX]" */
	int32_t slot_packets;    /* max packets per slot, 0 = unlimited */
	int32_t slot_bytes;      /* max bytes per slot, 0 = unlimited */
	uint64_t seed;           /* netem PRNG seed (kernel >= 6.6) */
	/* scope: "direction egress|ingress", "dst ADDR[/N]", "dport N" */
	uint8_t direction;       /* enum impair_direction */
	uint16_t dport;          /* TCP/UDP destination port, 1..65535 */
	/* dst: these four members are one span of the field table */
	uint8_t dst_family;      /* AF_INET6 for dst6; else IPv4 (dst_addr) */
	uint8_t dst_plen;        /* 0..32 (IPv4) or 0..128 (IPv6) */
	uint8_t dst_addr[4];     /* IPv4, network order */
	uint8_t dst6[16];        /* IPv6 prefix, network order */
};

/* Field kinds for the schema table: the unit of the value and how it is
 * written (tc's words, iproute2 tc/tc_util.c). */
enum impair_kind {
	IMPK_RATE,      /* bit/s: "50mbit", "1gbit", "125kbps" */
	IMPK_TIME,      /* ns: "50ms", "1.5s", "250us" */
	IMPK_SIZE,      /* bytes: "1514b", "64kb", "1mb" */
	IMPK_PERCENT,   /* u32 probability fraction: "1%", "0.25%" */
	IMPK_COUNT,     /* unsigned whole number: "5", "65535" */
	IMPK_CHOICE,    /* one word of a fixed list ("normal") */
	IMPK_PLIST,     /* 1..N percents, "1%,30%" (commas or blanks) */
	IMPK_FLAG,      /* on/off (also yes/no, true/false, 1/0) */
	IMPK_INT,       /* signed whole number: "-14" */
	IMPK_U64,       /* unsigned 64-bit number (decimal, 0x hex) */
	IMPK_TIMEPAIR,  /* "MIN" or "MIN,MAX" times */
	IMPK_PREFIX,    /* IPv4 or IPv6 address with optional /N */
};

/* Field flags: how the value is stored and which qdisc it asks for. */
enum impair_flag {
	IMPF_SIGNED = 1u << 0,  /* storage is a signed integer */
	IMPF_TBF    = 1u << 1,  /* a tbf parameter */
	IMPF_NETEM  = 1u << 2,  /* a netem parameter */
	IMPF_SCOPE  = 1u << 3,  /* where the dial applies, no impairment itself */
};

/* One dial field: name as on the command line (--NAME) and in profiles,
 * where its value lives in struct impair and what it accepts. */
struct impair_field {
	const char *name;       /* "rate", "delay", "loss", ... */
	uint32_t bit;           /* enum impair_bit */
	enum impair_kind kind;
	size_t off, size;       /* storage in struct impair: offset and bytes
				 * (a list or pair: all its elements) */
	unsigned count;         /* elements in the storage: PLIST at most this
				 * many values, TIMEPAIR 2, else 1 (0 = 1) */
	size_t n_off;           /* PLIST: offset of the uint8_t count given */
	unsigned flags;         /* enum impair_flag */
	int64_t lo;             /* accepted range of each element, in the  */
	uint64_t hi;            /* storage's unit (bit/s, ns, bytes, u32
				 * fraction, count); CHOICE: index; PREFIX:
				 * unused */
	const char *const *names;  /* CHOICE: the words by index; FLAG: "off",
				    * "on"; NULL-terminated */
	const char *range;      /* human text of the accepted range; its ends
				 * are lo and hi (test_impair checks it) */
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

/* Copy every field given in src onto dst (its storage and its bit): the
 * fields of src win, dst keeps the others. */
void impair_overlay(struct impair *dst, const struct impair *src);

/* Split an end-to-end target between the two peers' dials (apply --split):
 * delay and jitter halve in whole ns, A taking the odd ns, so that A's and
 * B's add back to the value given (1ns: A 1ns, B 0ns); loss p becomes
 * 1-(1-p)^(1/2) on each side (both compound back to p). */
void impair_split(struct impair *a, struct impair *b);

/* The IMP_* bits of every field whose flags include all of flags
 * (enum impair_flag), e.g. IMPF_NETEM: the fields netem takes. */
uint32_t impair_bits_with(unsigned flags);

/* Print one field of d in exact tc units into buf ("" if not set). */
char *impair_get(const struct impair *d, const struct impair_field *f,
		 char *buf, size_t len);

/* Check ranges and cross-field rules (tc's: reorder needs delay, gap needs
 * reorder, correlations need their probability, jitter needs delay; rate 0
 * refused; delay <= 274s (32-bit ticks), jitter <= INT32_MAX ns). Adds every
 * problem to diag (warnings too, e.g. jitter > delay). Returns -EINVAL if any
 * error was found, else 0. */
int impair_validate(const struct impair *d, struct ll_diag *diag);

/* Datagram length the jitter warning assumes: iperf3 -u's default on a
 * 1500-byte MTU path (the control connection's MSS with TCP timestamps). */
#define IMPAIR_REORDER_LEN 1448

/* The warning that jitter reorders a flow: netem (and the bridge's user
 * engine) draws each packet's delay on its own in [delay - jitter,
 * delay + jitter), so once that 2 x jitter window exceeds the time between
 * two packets of a flow (len x 8 / bitrate), later packets overtake earlier
 * ones (tc-netem(8): "reordering ... with jitter"). bitrate_bps: the
 * flow's rate (a test's -b), or 0 when unknown (dial time): the text then
 * names the rate above which len-byte packets reorder. len 0 =
 * IMPAIR_REORDER_LEN. Writes the text into buf and returns its length; 0
 * (buf "") when there is no jitter or the spacing is wider. */
size_t impair_jitter_reorder_warning(const struct impair *d, uint64_t bitrate_bps,
				     unsigned len, char *buf, size_t n);

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
	/* --- netem model fields, in the kernel's encoding --- */
	uint8_t dist;            /* enum impair_dist: table to upload */
	uint8_t loss_model;      /* enum impair_loss_model */
	uint32_t gi[5];          /* kernel order: p13 p31 p32 p14 p23 */
	uint32_t ge[4];          /* kernel: p r h k1, h = UINT32_MAX - (1-h) */
	bool ecn;
	uint64_t netem_rate_Bps; /* bytes/s, 0 = none (RATE64 >= 2^32) */
	int32_t packet_overhead;
	uint32_t cell_size;
	int32_t cell_overhead;
	bool slot;
	int64_t slot_min_ns, slot_max_ns;
	int32_t slot_packets, slot_bytes;
	bool has_seed;
	uint64_t seed;
	uint32_t limit_need;     /* packets rate x (delay + jitter) needs,
				  * ceil(rate * t / (8 * mtu)), no margin */
	/* scope */
	bool ingress;            /* install on the IFB device of the interface */
	bool scoped;             /* htb 1: + u32 filter(s) to class 1:1 */
	uint8_t dst_plen;
	uint8_t dst_addr[4];
	uint16_t dport;
	uint8_t dst_family;      /* AF_INET6: dst6; AF_INET: dst_addr; 0: none */
	uint8_t dst6[16];
};

/* Derive the plan. mtu: device MTU in bytes (0 -> 1500). hz: kernel HZ (0 ->
 * 250). Rules: burst >= max(mtu + 14, rate/HZ, 1 ms of rate) bytes (man
 * tc-tbf: "at least rate/HZ"); tbf limit = rate * latency + burst; netem limit
 * >= max(1000, ceil(1.5 * rate * (delay + jitter) / (8 * mtu))). Returns 0, or
 * -EINVAL (diag filled) if the dial does not validate. */
int impair_plan(const struct impair *d, unsigned mtu, unsigned hz,
		struct impair_plan *p, struct ll_diag *diag);

/* Goodput ceiling of a tbf-shaped TCP flow: tbf counts whole Ethernet
 * frames, so payload <= rate * mss / (mss + 66) (66 = 12 TCP options + 20
 * TCP + 20 IP + 14 Ethernet header; e.g. 50 Mbit/s x 1448/1514 = 47.82
 * Mbit/s). rate in bit/s; mss in bytes (0 -> mtu - 52, mtu 0 -> 1500).
 * Returns bit/s (0 if rate is 0). */
double impair_goodput_ceiling(uint64_t rate, unsigned mtu, unsigned mss);

/* Unset burst, tbf limit and netem limit in d where they equal (within tc's
 * rounding, 1%) what impair_plan derives for the rest of d - so a dial read
 * back from the kernel does not pin the sizes of its old rate when the rate
 * changes. mtu/hz as for impair_plan. */
void impair_drop_derived(struct impair *d, unsigned mtu, unsigned hz);

/* One-line summary of a dial in tc words: "rate 50mbit delay 100ms loss 1%";
 * "none" if empty. */
char *impair_summary(const struct impair *d, char *buf, size_t len);

#endif
