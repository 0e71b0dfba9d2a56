/* SPDX-License-Identifier: MIT */
/* impair.c - the impairment dial: field schema, parsing, validation (every
 * problem at once), derivation of the qdisc plan, summary.
 * Rules: man tc-tbf ("burst ... at least rate/HZ"), man tc-netem, iproute2
 * tc/q_netem.c (reorder needs delay, gap defaults to 1 with reorder) and
 * tc/q_tbf.c (limit = rate * latency + burst).
 * Each field of the table carries its storage, limits, unit kind and flags:
 * setting, printing and checking a value are one routine per kind. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "linklab/model/impair.h"
#include "linklab/base/units.h"

#define NS_PER_S 1000000000LL
/* netem's legacy 32-bit tick fields (64 ns ticks) top out at 274.877 s */
#define DELAY_MAX_NS (274LL * NS_PER_S)
/* jitter: INT32_MAX ns, shown as 2.147483647s (which parses back to it) */
#define JITTER_MAX_NS ((int64_t)INT32_MAX)
/* rates reach tbf and netem in whole bytes/s: 8bit is the smallest one */
#define RATE_MIN_BPS 8ULL
#define RATE_MAX_BPS 4000000000000ULL   /* 4tbit */
#define TBF_LATENCY_DEFAULT_NS (50LL * 1000000LL)
/* link rate assumed for the netem limit when no rate is dialled */
#define ASSUMED_LINK_BPS 1000000000ULL

/* storage of member m of struct impair; of members a .. b as one span */
#define AT(m) .off = offsetof(struct impair, m), .size = sizeof(((struct impair *)0)->m)
#define SPAN(a, b) .off = offsetof(struct impair, a), \
	.size = offsetof(struct impair, b) + sizeof(((struct impair *)0)->b) - \
		offsetof(struct impair, a)
#define PCT .lo = 0, .hi = UINT32_MAX, .range = "0% .. 100%"
#define NETEM .flags = IMPF_NETEM

static const char *const dir_names[] = { "egress", "ingress", NULL };

static const char *const flag_names[] = { "off", "on", NULL };

static const char *const dist_names[] = { "uniform", "normal", "pareto",
					  "paretonormal", NULL };

const struct impair_field impair_fields[] = {
	{ "rate", IMP_RATE, IMPK_RATE, AT(rate), .flags = IMPF_TBF,
	  .lo = RATE_MIN_BPS, .hi = RATE_MAX_BPS, .range = "8bit .. 4tbit",
	  .help = "tbf shaping rate (bit/s units: kbit mbit gbit; bytes/s: kbps mbps)" },
	{ "burst", IMP_BURST, IMPK_SIZE, AT(burst), .flags = IMPF_TBF,
	  .lo = 1, .hi = UINT32_MAX, .range = "1b .. 4294967295b",
	  .help = "tbf bucket size; default max(MTU+14, rate/HZ, 1 ms of rate)" },
	{ "tbf-limit", IMP_TBF_LIMIT, IMPK_SIZE, AT(tbf_limit), .flags = IMPF_TBF,
	  .lo = 1, .hi = UINT32_MAX, .range = "1b .. 4294967295b",
	  .help = "tbf queue size in bytes; default rate * latency + burst" },
	{ "latency", IMP_LATENCY, IMPK_TIME, AT(tbf_latency),
	  .flags = IMPF_TBF | IMPF_SIGNED, .lo = 1000, .hi = DELAY_MAX_NS,
	  .range = "1us .. 274s",
	  .help = "tbf queueing latency target used to size its queue (default 50ms)" },
	{ "delay", IMP_DELAY, IMPK_TIME, AT(delay), .flags = IMPF_NETEM | IMPF_SIGNED,
	  .lo = 0, .hi = DELAY_MAX_NS, .range = "0ns .. 274s",
	  .help = "netem one-way delay added on egress" },
	{ "jitter", IMP_JITTER, IMPK_TIME, AT(jitter), .flags = IMPF_NETEM | IMPF_SIGNED,
	  .lo = 0, .hi = JITTER_MAX_NS, .range = "0ns .. 2.147483647s",
	  .help = "netem delay variation (uniform +/- jitter)" },
	{ "delay-corr", IMP_DELAY_CORR, IMPK_PERCENT, AT(delay_corr), NETEM, PCT,
	  .help = "correlation of successive delays" },
	{ "loss", IMP_LOSS, IMPK_PERCENT, AT(loss), NETEM, PCT,
	  .help = "netem random loss probability" },
	{ "loss-corr", IMP_LOSS_CORR, IMPK_PERCENT, AT(loss_corr), NETEM, PCT,
	  .help = "correlation of successive losses" },
	{ "duplicate", IMP_DUP, IMPK_PERCENT, AT(duplicate), NETEM, PCT,
	  .help = "netem duplication probability" },
	{ "dup-corr", IMP_DUP_CORR, IMPK_PERCENT, AT(dup_corr), NETEM, PCT,
	  .help = "correlation of successive duplications" },
	{ "corrupt", IMP_CORRUPT, IMPK_PERCENT, AT(corrupt), NETEM, PCT,
	  .help = "netem single-bit corruption probability" },
	{ "corrupt-corr", IMP_CORRUPT_CORR, IMPK_PERCENT, AT(corrupt_corr), NETEM, PCT,
	  .help = "correlation of successive corruptions" },
	{ "reorder", IMP_REORDER, IMPK_PERCENT, AT(reorder), NETEM, PCT,
	  .help = "probability a packet skips the delay (needs delay)" },
	{ "reorder-corr", IMP_REORDER_CORR, IMPK_PERCENT, AT(reorder_corr), NETEM, PCT,
	  .help = "correlation of successive reorders" },
	{ "gap", IMP_GAP, IMPK_COUNT, AT(gap), NETEM,
	  .lo = 1, .hi = UINT32_MAX, .range = "1 .. 4294967295",
	  .help = "reorder every Nth packet (needs reorder)" },
	{ "limit", IMP_LIMIT, IMPK_COUNT, AT(limit), NETEM,
	  .lo = 1, .hi = UINT32_MAX, .range = "1 .. 4294967295",
	  .help = "netem queue in packets; default max(1000, 1.5 x BDP in packets)" },
	{ "distribution", IMP_DIST, IMPK_CHOICE, AT(dist), NETEM,
	  .lo = 0, .hi = IMP_DIST_PARETONORMAL, .names = dist_names,
	  .range = "uniform | normal | pareto | paretonormal",
	  .help = "shape of the jitter (needs jitter; uniform = no table)" },
	{ "loss-state", IMP_LOSS_STATE, IMPK_PLIST, AT(loss_state), .count = 5,
	  .n_off = offsetof(struct impair, loss_state_n), NETEM,
	  .lo = 0, .hi = UINT32_MAX, .range = "P13[,P31[,P32[,P23[,P14]]]] each 0% .. 100%",
	  .help = "4-state Markov loss (tc loss state); defaults p31=1-p13 p32=0 p23=1 p14=0" },
	{ "loss-gemodel", IMP_LOSS_GE, IMPK_PLIST, AT(loss_ge), .count = 4,
	  .n_off = offsetof(struct impair, loss_ge_n), NETEM,
	  .lo = 0, .hi = UINT32_MAX, .range = "P[,R[,1-H[,1-K]]] each 0% .. 100%",
	  .help = "Gilbert-Elliott loss (tc loss gemodel); defaults r=1-p 1-h=100% 1-k=0%" },
	{ "ecn", IMP_ECN, IMPK_FLAG, AT(ecn), NETEM, .lo = 0, .hi = 1, .names = flag_names,
	  .range = "on | off",
	  .help = "mark ECN-capable packets CE instead of dropping them (needs a loss)" },
	{ "netem-rate", IMP_NETEM_RATE, IMPK_RATE, AT(netem_rate), NETEM,
	  .lo = RATE_MIN_BPS, .hi = RATE_MAX_BPS, .range = "8bit .. 4tbit",
	  .help = "netem's own rate limit (tc netem rate), counts packet/cell overheads" },
	{ "packet-overhead", IMP_PKT_OVERHEAD, IMPK_INT, AT(packet_overhead),
	  .flags = IMPF_NETEM | IMPF_SIGNED, .lo = INT32_MIN, .hi = INT32_MAX,
	  .range = "-2147483648 .. 2147483647",
	  .help = "bytes added to each packet for netem-rate (e.g. -14 strips Ethernet)" },
	{ "cell-size", IMP_CELL_SIZE, IMPK_COUNT, AT(cell_size), NETEM,
	  .lo = 1, .hi = UINT32_MAX, .range = "1 .. 4294967295",
	  .help = "netem-rate counts whole cells of this many bytes (ATM: 48)" },
	{ "cell-overhead", IMP_CELL_OVERHEAD, IMPK_INT, AT(cell_overhead),
	  .flags = IMPF_NETEM | IMPF_SIGNED, .lo = INT32_MIN, .hi = INT32_MAX,
	  .range = "-2147483648 .. 2147483647",
	  .help = "bytes added to each cell for netem-rate (ATM: 5)" },
	{ "slot", IMP_SLOT, IMPK_TIMEPAIR, SPAN(slot_min, slot_max), .count = 2,
	  .flags = IMPF_NETEM | IMPF_SIGNED, .lo = 0, .hi = DELAY_MAX_NS,
	  .range = "MIN[,MAX] each 0ns .. 274s, MAX >= MIN",
	  .help = "release packets in slots every MIN..MAX (Wi-Fi/DOCSIS-like bursts)" },
	{ "slot-packets", IMP_SLOT_PACKETS, IMPK_INT, AT(slot_packets),
	  .flags = IMPF_NETEM | IMPF_SIGNED, .lo = 1, .hi = INT32_MAX,
	  .range = "1 .. 2147483647",
	  .help = "at most this many packets per slot (needs slot)" },
	{ "slot-bytes", IMP_SLOT_BYTES, IMPK_SIZE, AT(slot_bytes),
	  .flags = IMPF_NETEM | IMPF_SIGNED, .lo = 1, .hi = INT32_MAX,
	  .range = "1b .. 2147483647b",
	  .help = "at most this many bytes per slot (needs slot)" },
	{ "seed", IMP_SEED, IMPK_U64, AT(seed), NETEM, .lo = 0, .hi = UINT64_MAX,
	  .range = "0 .. 18446744073709551615",
	  .help = "netem PRNG seed for repeatable loss/corruption (kernel >= 6.6)" },
	{ "direction", IMP_DIRECTION, IMPK_CHOICE, AT(direction), .flags = IMPF_SCOPE,
	  .lo = 0, .hi = IMP_INGRESS, .names = dir_names, .range = "egress | ingress",
	  .help = "egress: packets leaving the interface; ingress: arriving ones (via an IFB device)" },
	{ "dst", IMP_DST, IMPK_PREFIX, SPAN(dst_family, dst6), .flags = IMPF_SCOPE,
	  .range = "A.B.C.D[/0..32] or IPv6[/0..128]",
	  .help = "impair only packets to this destination prefix (htb + u32; rest untouched)" },
	{ "dport", IMP_DPORT, IMPK_COUNT, AT(dport), .flags = IMPF_SCOPE,
	  .lo = 1, .hi = 65535, .range = "1 .. 65535",
	  .help = "impair only TCP/UDP packets to this destination port (IPv4 and IPv6)" },
	{ NULL, 0, IMPK_COUNT, .range = NULL, .help = NULL }
};

const struct impair_field *impair_field_find(const char *name)
{
	const struct impair_field *f;

	if (!name)
		return NULL;
	for (f = impair_fields; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* The field of one IMP_* bit (every bit has one). */
static const struct impair_field *field_of(uint32_t bit)
{
	const struct impair_field *f;

	for (f = impair_fields; f->name; f++)
		if (f->bit == bit)
			return f;
	return NULL;
}

uint32_t impair_bits_with(unsigned flags)
{
	const struct impair_field *f;
	uint32_t m = 0;

	for (f = impair_fields; f->name; f++)
		if ((f->flags & flags) == flags)
			m |= f->bit;
	return m;
}

/* --- storage: element k of a field, by its size and signedness ---------- */

static unsigned elems(const struct impair_field *f)
{
	return f->count ? f->count : 1;
}

static size_t elem_size(const struct impair_field *f)
{
	return f->size / elems(f);
}

static uint64_t load_u(const struct impair *d, const struct impair_field *f, unsigned k)
{
	const unsigned char *p = (const unsigned char *)d + f->off + k * elem_size(f);
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (elem_size(f)) {
	case 1: memcpy(&v8, p, 1); return v8;
	case 2: memcpy(&v16, p, 2); return v16;
	case 4: memcpy(&v32, p, 4); return v32;
	default: memcpy(&v64, p, 8); return v64;
	}
}

static int64_t load_s(const struct impair *d, const struct impair_field *f, unsigned k)
{
	uint64_t u = load_u(d, f, k);

	switch (elem_size(f)) {
	case 1: return (int8_t)(uint8_t)u;
	case 2: return (int16_t)(uint16_t)u;
	case 4: return (int32_t)(uint32_t)u;
	default: return (int64_t)u;
	}
}

/* Store v (two's complement for a signed field) in element k. */
static void store(struct impair *d, const struct impair_field *f, unsigned k, uint64_t v)
{
	unsigned char *p = (unsigned char *)d + f->off + k * elem_size(f);
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (elem_size(f)) {
	case 1: memcpy(p, &v8, 1); break;
	case 2: memcpy(p, &v16, 2); break;
	case 4: memcpy(p, &v32, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

/* Element k within the field's limits? */
static bool elem_ok(const struct impair *d, const struct impair_field *f, unsigned k)
{
	if (f->flags & IMPF_SIGNED) {
		int64_t s = load_s(d, f, k);

		return s >= f->lo && (s < 0 || (uint64_t)s <= f->hi);
	}
	return (f->lo <= 0 || load_u(d, f, k) >= (uint64_t)f->lo) && load_u(d, f, k) <= f->hi;
}

static bool sval_ok(const struct impair_field *f, int64_t s)
{
	return s >= f->lo && (s < 0 || (uint64_t)s <= f->hi);
}

static bool uval_ok(const struct impair_field *f, uint64_t u)
{
	return (f->lo <= 0 || u >= (uint64_t)f->lo) && u <= f->hi;
}

/* Element k in the field's unit, exactly as tc prints it. */
static char *elem_text(const struct impair *d, const struct impair_field *f, unsigned k,
		       char *buf, size_t len)
{
	int64_t s = load_s(d, f, k);
	uint64_t u = (f->flags & IMPF_SIGNED) ? (s < 0 ? 0 : (uint64_t)s) : load_u(d, f, k);

	switch (f->kind) {
	case IMPK_RATE: return units_format_rate(u, buf, len);
	case IMPK_TIME:
	case IMPK_TIMEPAIR: return units_format_time(s, buf, len);
	case IMPK_SIZE: return units_format_size(u, buf, len);
	case IMPK_PERCENT:
	case IMPK_PLIST: return units_format_percent((uint32_t)u, buf, len);
	case IMPK_FLAG:
	case IMPK_CHOICE:
		snprintf(buf, len, "%s", u <= f->hi ? f->names[u] : "?");
		return buf;
	case IMPK_INT: snprintf(buf, len, "%" PRId64, s); return buf;
	default: snprintf(buf, len, "%" PRIu64, u); return buf;
	}
}

/* Half of *v, the odd ns to the first side (first true). */
static void halve_ns(int64_t *v, bool first)
{
	*v = first ? *v - *v / 2 : *v / 2;
}

static void split_one(struct impair *d, bool first)
{
	double p;

	halve_ns(&d->delay, first);
	halve_ns(&d->jitter, first);
	if (d->set & IMP_LOSS) {
		p = units_prob_to_percent(d->loss) / 100.0;
		d->loss = units_percent_to_prob(100.0 * (1.0 - sqrt(1.0 - p)));
	}
}

void impair_split(struct impair *a, struct impair *b)
{
	split_one(a, true);
	split_one(b, false);
}

void impair_overlay(struct impair *dst, const struct impair *src)
{
	const struct impair_field *f;

	for (f = impair_fields; f->name; f++) {
		if (!(src->set & f->bit))
			continue;
		memcpy((char *)dst + f->off, (const char *)src + f->off, f->size);
		if (f->kind == IMPK_PLIST)
			memcpy((char *)dst + f->n_off, (const char *)src + f->n_off, 1);
		dst->set |= f->bit;
	}
}

/* --- parsing one value: a routine per kind, each range from the table --- */

static int refuse(struct ll_diag *diag, const struct impair_field *f,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Add "NAME: <text>" to diag; -EINVAL. */
static int refuse(struct ll_diag *diag, const struct impair_field *f, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ll_diag_add(diag, LL_DIAG_ERROR, f->name, "%s: %s", f->name, text);
	return -EINVAL;
}

/* A parser's or a sign's refusal, with the accepted range when it does not
 * say it already. */
static int refuse_ranged(struct ll_diag *diag, const struct impair_field *f, const char *text)
{
	if (strstr(text, f->range))
		return refuse(diag, f, "%s", text);
	return refuse(diag, f, "%s; accepted: %s", text, f->range);
}

static int negative(struct ll_diag *diag, const struct impair_field *f, const char *value)
{
	return refuse(diag, f, "'%s' must not be negative (%s)", value, f->range);
}

static int out_of_range(struct ll_diag *diag, const struct impair_field *f,
			const char *shown)
{
	return refuse(diag, f, "%s is out of range (%s)", shown, f->range);
}

static int set_rate(struct impair *d, const struct impair_field *f,
		    const char *value, struct ll_diag *diag)
{
	struct ll_err e = { 0 };
	char b[32];
	uint64_t v;

	if (value[0] == '-')
		return negative(diag, f, value);
	if (units_parse_rate(value, &v, &e) < 0) {
		/* "0bit" parses as a number but is out of range */
		char *end;
		double z = strtod(value, &end);

		if (end != value && z == 0 && *end && strstr(e.msg, "out of range"))
			return out_of_range(diag, f, units_format_rate(0, b, sizeof(b)));
		return refuse_ranged(diag, f, e.msg);
	}
	if (!uval_ok(f, v)) {
		char shown[200];

		/* what was typed, and what it means when that reads otherwise */
		units_format_rate(v, b, sizeof(b));
		if (strcmp(b, value))
			snprintf(shown, sizeof(shown), "'%.120s' (= %s)", value, b);
		else
			snprintf(shown, sizeof(shown), "%s", b);
		return out_of_range(diag, f, shown);
	}
	store(d, f, 0, v);
	return 0;
}

/* One time (no sign) within the limits into *v. */
static int parse_time_in(const struct impair_field *f, const char *value, int64_t *v,
			 struct ll_diag *diag)
{
	struct ll_err e = { 0 };
	char b[32];

	if (value[0] == '-')
		return negative(diag, f, value);
	if (units_parse_time(value, v, 1, &e) < 0)
		return refuse_ranged(diag, f, e.msg);
	if (*v < 0)
		return negative(diag, f, value);
	if (!sval_ok(f, *v))
		return out_of_range(diag, f, units_format_time(*v, b, sizeof(b)));
	return 0;
}

static int set_time(struct impair *d, const struct impair_field *f,
		    const char *value, struct ll_diag *diag)
{
	int64_t v;

	if (parse_time_in(f, value, &v, diag) < 0)
		return -EINVAL;
	store(d, f, 0, (uint64_t)v);
	return 0;
}

static int set_size(struct impair *d, const struct impair_field *f,
		    const char *value, struct ll_diag *diag)
{
	struct ll_err e = { 0 };
	char b[32];
	uint64_t v;

	if (value[0] == '-')
		return negative(diag, f, value);
	if (units_parse_size(value, &v, &e) < 0)
		return refuse_ranged(diag, f, e.msg);
	if (!uval_ok(f, v))
		return out_of_range(diag, f, units_format_size(v, b, sizeof(b)));
	store(d, f, 0, v);
	return 0;
}

/* One percentage into *v: a well-formed number with a % sign but out of
 * range gets the range message; anything else gets the parser's text. */
static int parse_percent_in(const struct impair_field *f, const char *value,
			    uint32_t *v, struct ll_diag *diag, const char *what)
{
	struct ll_err e = { 0 };
	const char *pct = strchr(value, '%');
	char *end;
	double x = strtod(value, &end);

	if (pct && end == pct && pct[1] == '\0' && end != value && (x < 0 || x > 100))
		return refuse(diag, f, "%s%s is out of range (%s)", what, value, f->range);
	if (units_parse_percent(value, v, &e) < 0) {
		char text[sizeof(e.msg) + 32];

		snprintf(text, sizeof(text), "%s%s", what, e.msg);
		return refuse_ranged(diag, f, text);
	}
	return 0;
}

static int set_percent(struct impair *d, const struct impair_field *f,
		       const char *value, struct ll_diag *diag)
{
	uint32_t v;

	if (parse_percent_in(f, value, &v, diag, "") < 0)
		return -EINVAL;
	store(d, f, 0, v);
	return 0;
}

static int set_count(struct impair *d, const struct impair_field *f,
		     const char *value, struct ll_diag *diag)
{
	char *end;
	unsigned long long v = 0;

	errno = 0;
	if (value[0] >= '0' && value[0] <= '9')
		v = strtoull(value, &end, 10);
	if (value[0] < '0' || value[0] > '9' || *end || errno || !uval_ok(f, v))
		return refuse(diag, f, "'%s' is not a count in range (%s)", value, f->range);
	store(d, f, 0, v);
	return 0;
}

static int set_int(struct impair *d, const struct impair_field *f,
		   const char *value, struct ll_diag *diag)
{
	char *end;
	long long v = 0;
	bool num = value[0] == '-' || (value[0] >= '0' && value[0] <= '9');

	errno = 0;
	if (num)
		v = strtoll(value, &end, 10);
	if (!num || *end || errno || end == value || !sval_ok(f, v))
		return refuse(diag, f, "'%s' is not a whole number in range (%s)",
			      value, f->range);
	store(d, f, 0, (uint64_t)v);
	return 0;
}

static int set_u64(struct impair *d, const struct impair_field *f,
		   const char *value, struct ll_diag *diag)
{
	char *end;
	unsigned long long v = 0;
	bool num = value[0] >= '0' && value[0] <= '9';

	errno = 0;
	if (num)
		v = strtoull(value, &end, 0);
	if (!num || *end || errno || !uval_ok(f, v))
		return refuse(diag, f, "'%s' is not a number in range (%s)", value, f->range);
	store(d, f, 0, v);
	return 0;
}

static int set_choice(struct impair *d, const struct impair_field *f,
		      const char *value, struct ll_diag *diag)
{
	unsigned i;

	for (i = 0; f->names[i]; i++)
		if (strcmp(value, f->names[i]) == 0) {
			store(d, f, 0, i);
			return 0;
		}
	return refuse(diag, f, "'%s' is not one of %s", value, f->range);
}

static int set_flag(struct impair *d, const struct impair_field *f,
		    const char *value, struct ll_diag *diag)
{
	static const struct { const char *word; bool on; } words[] = {
		{ "on", true }, { "yes", true }, { "true", true }, { "1", true },
		{ "off", false }, { "no", false }, { "false", false }, { "0", false },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(value, words[i].word)) {
			store(d, f, 0, words[i].on);
			return 0;
		}
	return refuse(diag, f, "'%s' is not on or off (%s; also yes | no, true | false, 1 | 0)",
		      value, f->range);
}

/* Split a list on commas and blanks: up to max words into w (each < 64).
 * -1 when there are more or one is too long; SPLIT_EMPTY when a comma has
 * no item before or after it ("1%,,3%": a value would move to the next
 * slot). */
#define SPLIT_EMPTY (-2)
static int split_list(const char *value, char w[][64], int max)
{
	int n = 0;
	const char *s = value;

	if (!value[strspn(value, ", \t")])
		return 0;               /* no item at all */
	for (;;) {
		size_t k;

		s += strspn(s, " \t");
		if (!*s)
			break;
		if (*s == ',')
			return SPLIT_EMPTY;
		k = strcspn(s, ", \t");
		if (n >= max || k >= 64)
			return -1;
		memcpy(w[n], s, k);
		w[n][k] = '\0';
		n++;
		s += k;
		s += strspn(s, " \t");
		if (*s == ',' && !s[1 + strspn(s + 1, " \t")])
			return SPLIT_EMPTY;
		if (*s == ',')
			s++;
	}
	return n;
}

/* A list of 1..count percentages and how many were given. */
static int set_plist(struct impair *d, const struct impair_field *f,
		     const char *value, struct ll_diag *diag)
{
	int max = (int)elems(f), n, i;
	char w[8][64], what[32];
	uint32_t v[8];
	uint8_t given;

	n = split_list(value, w, max);
	if (n == SPLIT_EMPTY)
		return refuse(diag, f, "'%s' has an empty item between commas (each of up to %d "
			      "percentages in its place: %s)", value, max, f->range);
	if (n < 1)
		return refuse(diag, f, "'%s' needs 1 to %d percentages (%s)", value, max,
			      f->range);
	for (i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "value %d: ", i + 1);
		if (parse_percent_in(f, w[i], &v[i], diag, what) < 0)
			return -EINVAL;
	}
	for (i = 0; i < max; i++)
		store(d, f, (unsigned)i, i < n ? v[i] : 0);
	given = (uint8_t)n;
	memcpy((char *)d + f->n_off, &given, 1);
	return 0;
}

/* One or two times (min, max = min when one). */
static int set_timepair(struct impair *d, const struct impair_field *f,
			const char *value, struct ll_diag *diag)
{
	int64_t t[2] = { 0, 0 };
	char w[2][64], b1[32], b2[32];
	int n, i;

	n = split_list(value, w, 2);
	if (n == SPLIT_EMPTY)
		return refuse(diag, f, "'%s' has an empty item between commas (%s)", value, f->range);
	if (n < 1)
		return refuse(diag, f, "'%s' needs one or two times (%s)", value, f->range);
	for (i = 0; i < n; i++)
		if (parse_time_in(f, w[i], &t[i], diag) < 0)
			return -EINVAL;
	if (n == 1)
		t[1] = t[0];
	if (t[1] < t[0])
		return refuse(diag, f, "max %s is below min %s (tc-netem: slot MIN MAX)",
			      units_format_time(t[1], b2, sizeof(b2)),
			      units_format_time(t[0], b1, sizeof(b1)));
	store(d, f, 0, (uint64_t)t[0]);
	store(d, f, 1, (uint64_t)t[1]);
	return 0;
}

/* An IPv4 or IPv6 address or prefix (no host bits set). */
static int set_prefix(struct impair *d, const struct impair_field *f,
		      const char *value, struct ll_diag *diag)
{
	char a[64], *slash;
	unsigned char buf[16];
	int fam = strchr(value, ':') ? AF_INET6 : AF_INET;
	unsigned long max = fam == AF_INET6 ? 128 : 32, plen = max, k;

	snprintf(a, sizeof(a), "%s", value);
	slash = strchr(a, '/');
	if (slash) {
		char *end;

		*slash = '\0';
		errno = 0;
		plen = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || errno || plen > max)
			return refuse(diag, f, "'%s' has a bad prefix length (%s)", value,
				      f->range);
	}
	if (inet_pton(fam, a, buf) != 1)
		return refuse(diag, f, "'%s' is not an IPv4 or IPv6 address or prefix (%s)",
			      value, f->range);
	for (k = plen; k < max; k++)
		if (buf[k / 8] & (0x80 >> (k % 8)))
			return refuse(diag, f, "'%s' has host bits set past /%lu", value, plen);
	memset(d->dst6, 0, 16);
	memset(d->dst_addr, 0, 4);
	memcpy(fam == AF_INET6 ? d->dst6 : d->dst_addr, buf, fam == AF_INET6 ? 16 : 4);
	d->dst_family = (uint8_t)fam;
	d->dst_plen = (uint8_t)plen;
	return 0;
}

typedef int (*field_setter)(struct impair *, const struct impair_field *, const char *,
			    struct ll_diag *);

static const field_setter setters[] = {
	[IMPK_RATE] = set_rate, [IMPK_TIME] = set_time, [IMPK_SIZE] = set_size,
	[IMPK_PERCENT] = set_percent, [IMPK_COUNT] = set_count,
	[IMPK_CHOICE] = set_choice, [IMPK_PLIST] = set_plist, [IMPK_FLAG] = set_flag,
	[IMPK_INT] = set_int, [IMPK_U64] = set_u64, [IMPK_TIMEPAIR] = set_timepair,
	[IMPK_PREFIX] = set_prefix,
};

int impair_set(struct impair *d, const char *name, const char *value,
	       struct ll_diag *diag)
{
	const struct impair_field *f = impair_field_find(name);

	if (!f) {
		ll_diag_add(diag, LL_DIAG_ERROR, name,
			    "unknown field '%s' (see `linklab apply --help`)",
			    name ? name : "");
		return -EINVAL;
	}
	if (!value || !*value)
		return refuse(diag, f, "missing value (%s)", f->range);
	if (setters[f->kind](d, f, value, diag) < 0)
		return -EINVAL;
	d->set |= f->bit;
	return 0;
}

/* dst as "ADDR" (a host) or "ADDR/N". */
static char *prefix_text(const struct impair *d, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	bool v6 = d->dst_family == AF_INET6;

	inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (const void *)d->dst6 :
		  (const void *)d->dst_addr, a, sizeof(a));
	if (d->dst_plen == (v6 ? 128 : 32))
		snprintf(buf, len, "%s", a);
	else
		snprintf(buf, len, "%s/%u", a, d->dst_plen);
	return buf;
}

char *impair_get(const struct impair *d, const struct impair_field *f,
		 char *buf, size_t len)
{
	unsigned n = 1, i;
	size_t off = 0;
	char e[48];

	if (!len)
		return buf;
	buf[0] = '\0';
	if (!f || !(d->set & f->bit))
		return buf;
	if (f->kind == IMPK_PREFIX)
		return prefix_text(d, buf, len);
	if (f->kind == IMPK_PLIST)
		n = *((const uint8_t *)d + f->n_off);
	else if (f->kind == IMPK_TIMEPAIR)
		n = load_s(d, f, 1) != load_s(d, f, 0) ? 2 : 1;
	for (i = 0; i < n && i < elems(f); i++) {
		int k = snprintf(buf + off, len - off, "%s%s", i ? "," : "",
				 elem_text(d, f, i, e, sizeof(e)));

		if (k < 0 || (size_t)k >= len - off)
			break;
		off += (size_t)k;
	}
	return buf;
}

static bool has(const struct impair *d, uint32_t bit);

size_t impair_jitter_reorder_warning(const struct impair *d, uint64_t bitrate_bps,
				     unsigned len, char *buf, size_t n)
{
	char jt[32], wt[32], sp[32], rt[32];

	if (n)
		buf[0] = '\0';
	if (!has(d, IMP_JITTER) || d->jitter <= 0 || !n)
		return 0;
	if (!len)
		len = IMPAIR_REORDER_LEN;
	double window_s = 2.0 * (double)d->jitter / 1e9;
	double above = (double)len * 8 / window_s;   /* bit/s where spacing = window */
	units_format_time(d->jitter, jt, sizeof(jt));
	units_human_time(window_s * 1e9, wt, sizeof(wt));
	units_human_rate(above, rt, sizeof(rt));
	int w;
	if (bitrate_bps) {
		double spacing_s = (double)len * 8 / (double)bitrate_bps;
		if (spacing_s >= window_s)
			return 0;
		units_human_time(spacing_s * 1e9, sp, sizeof(sp));
		w = snprintf(buf, n, "jitter %s reorders the test's packets: its %s "
			     "window is wider than the %s between %u-byte packets "
			     "at %.4g Mbit/s (order kept below %s)", jt, wt, sp,
			     len, (double)bitrate_bps / 1e6, rt);
	} else {
		w = snprintf(buf, n, "jitter %s reorders packets of a flow above %s: "
			     "%u-byte packets closer than its %s window overtake "
			     "each other (UDP tests report out-of-order)", jt, rt,
			     len, wt);
	}
	return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
}

static bool has(const struct impair *d, uint32_t bit)
{
	return (d->set & bit) != 0;
}

/* value given and, for a time or a probability, non-zero */
static bool nz(const struct impair *d, uint32_t bit)
{
	const struct impair_field *f = field_of(bit);

	if (!has(d, bit))
		return false;
	if (f && f->kind == IMPK_TIME)
		return load_s(d, f, 0) > 0;
	if (f && f->kind == IMPK_PERCENT)
		return load_u(d, f, 0) != 0;
	return true;
}

/* Check one given field's value against its limits; problems go to diag. */
static void impair_check_field(const struct impair *d,
			       const struct impair_field *f, struct ll_diag *diag)
{
	char b[48], b2[48];
	unsigned k, n = elems(f);

	switch (f->kind) {
	case IMPK_PREFIX:
		if (d->dst_plen > (d->dst_family == AF_INET6 ? 128 : 32))
			refuse(diag, f, "prefix length %u is out of range (%s)",
			       d->dst_plen, f->range);
		return;
	case IMPK_PLIST:
		n = *((const uint8_t *)d + f->n_off);
		if (n < 1 || n > elems(f)) {
			refuse(diag, f, "needs 1 to %u values (%s)", elems(f), f->range);
			return;
		}
		break;
	case IMPK_TIMEPAIR:
		if (!elem_ok(d, f, 0) || !elem_ok(d, f, 1) || load_s(d, f, 1) < load_s(d, f, 0))
			refuse(diag, f, "%s,%s is out of range (%s)",
			       elem_text(d, f, 0, b, sizeof(b)),
			       elem_text(d, f, 1, b2, sizeof(b2)), f->range);
		return;
	case IMPK_CHOICE:
		if (!elem_ok(d, f, 0))
			refuse(diag, f, "%" PRIu64 " is not one of %s", load_u(d, f, 0), f->range);
		return;
	default:
		break;
	}
	for (k = 0; k < n; k++) {
		if (elem_ok(d, f, k))
			continue;
		if (f->kind == IMPK_TIME && load_s(d, f, k) < 0)
			negative(diag, f, elem_text(d, f, k, b, sizeof(b)));
		else
			out_of_range(diag, f, elem_text(d, f, k, b, sizeof(b)));
		return;
	}
}

/* Check the rules between fields (the model fields': tc q_netem.c
 * netem_parse_opt; tbf's: tc-tbf); problems and warnings go to diag. */
static void impair_check_model(const struct impair *d, struct ll_diag *diag)
{
	if (has(d, IMP_DIST) && d->dist != IMP_DIST_UNIFORM && !nz(d, IMP_JITTER))
		ll_diag_add(diag, LL_DIAG_ERROR, "distribution",
			    "distribution needs jitter (tc-netem: distribution needs delay and jitter)");
	if (has(d, IMP_LOSS_STATE) && has(d, IMP_LOSS_GE))
		ll_diag_add(diag, LL_DIAG_ERROR, "loss-state",
			    "loss-state and loss-gemodel exclude each other (one loss model)");
	if ((has(d, IMP_LOSS_STATE) || has(d, IMP_LOSS_GE)) && nz(d, IMP_LOSS))
		ll_diag_add(diag, LL_DIAG_ERROR, "loss",
			    "loss and %s exclude each other (one loss model; tc: duplicate loss argument)",
			    has(d, IMP_LOSS_STATE) ? "loss-state" : "loss-gemodel");
	if (has(d, IMP_ECN) && d->ecn && !nz(d, IMP_LOSS) &&
	    !has(d, IMP_LOSS_STATE) && !has(d, IMP_LOSS_GE))
		ll_diag_add(diag, LL_DIAG_ERROR, "ecn",
			    "ecn needs loss, loss-state or loss-gemodel (tc-netem: ecn requested without loss model)");
	if (has(d, IMP_PKT_OVERHEAD) && !has(d, IMP_NETEM_RATE))
		ll_diag_add(diag, LL_DIAG_ERROR, "packet-overhead",
			    "packet-overhead needs netem-rate");
	if (has(d, IMP_CELL_SIZE) && !has(d, IMP_NETEM_RATE))
		ll_diag_add(diag, LL_DIAG_ERROR, "cell-size", "cell-size needs netem-rate");
	if (has(d, IMP_CELL_OVERHEAD) && !has(d, IMP_NETEM_RATE))
		ll_diag_add(diag, LL_DIAG_ERROR, "cell-overhead",
			    "cell-overhead needs netem-rate");
	else if (has(d, IMP_CELL_OVERHEAD) && !has(d, IMP_CELL_SIZE))
		ll_diag_add(diag, LL_DIAG_WARN, "cell-overhead",
			    "cell-overhead without cell-size is ignored by the kernel");
	if (has(d, IMP_SLOT_PACKETS) && !has(d, IMP_SLOT))
		ll_diag_add(diag, LL_DIAG_ERROR, "slot-packets", "slot-packets needs slot");
	if (has(d, IMP_SLOT_BYTES) && !has(d, IMP_SLOT))
		ll_diag_add(diag, LL_DIAG_ERROR, "slot-bytes", "slot-bytes needs slot");
	if (has(d, IMP_RATE) && has(d, IMP_NETEM_RATE))
		ll_diag_add(diag, LL_DIAG_WARN, "netem-rate",
			    "both rate (tbf) and netem-rate are set: the lower one limits");
	if (has(d, IMP_TBF_LIMIT) && has(d, IMP_LATENCY))
		ll_diag_add(diag, LL_DIAG_ERROR, "tbf-limit",
			    "tbf-limit and latency are exclusive (tc-tbf: limit or latency)");
	if (nz(d, IMP_JITTER) && nz(d, IMP_DELAY) && d->jitter > d->delay)
		ll_diag_add(diag, LL_DIAG_WARN, "jitter",
			    "jitter is larger than delay: delays are clamped at 0 and packets reorder");
	if (has(d, IMP_LOSS) && d->loss == UINT32_MAX)
		ll_diag_add(diag, LL_DIAG_WARN, "loss",
			    "loss 100%% drops everything, including an SSH session on this interface");
}

/* One field set without the field it modifies: "jitter 10ms needs a delay (--delay > 0)". */
static void needs_base(const struct impair *d, uint32_t dep, uint32_t base,
		       struct ll_diag *diag)
{
	const struct impair_field *fd = field_of(dep), *fb = field_of(base);
	char v[96];

	if (!fd || !fb)
		return;
	impair_get(d, fd, v, sizeof(v));
	ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s %s needs a %s (--%s > 0)",
		    fd->name, v, fb->name, fb->name);
}

int impair_validate(const struct impair *d, struct ll_diag *diag)
{
	static const struct { uint32_t dep, base; } needs[] = {
		{ IMP_LOSS_CORR, IMP_LOSS }, { IMP_DUP_CORR, IMP_DUP },
		{ IMP_CORRUPT_CORR, IMP_CORRUPT }, { IMP_REORDER_CORR, IMP_REORDER },
		{ IMP_DELAY_CORR, IMP_JITTER }, { IMP_JITTER, IMP_DELAY },
		{ IMP_REORDER, IMP_DELAY }, { IMP_GAP, IMP_REORDER },
		{ IMP_BURST, IMP_RATE }, { IMP_TBF_LIMIT, IMP_RATE },
		{ IMP_LATENCY, IMP_RATE },
	};
	const struct impair_field *f;
	int before = diag ? diag->nerrors : 0;
	struct ll_diag local;
	size_t i;

	if (!diag) {
		ll_diag_clear(&local);
		diag = &local;
		before = 0;
	}
	for (f = impair_fields; f->name; f++) {
		if (!has(d, f->bit))
			continue;
		impair_check_field(d, f, diag);
	}
	for (i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if (nz(d, needs[i].dep) && !nz(d, needs[i].base))
			needs_base(d, needs[i].dep, needs[i].base, diag);
	impair_check_model(d, diag);
	return diag->nerrors > before ? -EINVAL : 0;
}

bool impair_needs_tbf(const struct impair *d)
{
	return has(d, IMP_RATE);
}

bool impair_needs_netem(const struct impair *d)
{
	/* "ecn off" alone asks for nothing */
	return (d->set & impair_bits_with(IMPF_NETEM) & ~(uint32_t)IMP_ECN) != 0 ||
	       (has(d, IMP_ECN) && d->ecn);
}

bool impair_is_empty(const struct impair *d)
{
	return !impair_needs_tbf(d) && !impair_needs_netem(d);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* tbf's buffer is the time to send burst at rate, passed to the kernel as
 * a u32 count of 64 ns psched ticks (struct tc_tbf_qopt.buffer; iproute2
 * tc/tc_core.c tc_calc_xmittime, kernel PSCHED_SHIFT 6): at most 2^32 x 64 ns
 * = 274.88 s. Longer wraps the field (read back as a tiny or huge burst):
 * refuse it with the accepted burst at this rate and rate for this burst. */
#define TBF_BUFFER_MAX_S (4294967296.0 * 64e-9)

/* A tbf size (burst, limit) below one full-size frame: every such packet is
 * dropped by the kernel. Said as an error naming field; true then. */
static bool below_frame(struct ll_diag *diag, const char *field, uint64_t bytes,
			uint64_t frame)
{
	char b1[32], b2[32];

	if (bytes >= frame)
		return false;
	ll_diag_add(diag, LL_DIAG_ERROR, field,
		    "%s: %s is smaller than MTU + 14 (%s): the kernel drops every full-size packet",
		    field, units_format_size(bytes, b1, sizeof(b1)),
		    units_format_size(frame, b2, sizeof(b2)));
	return true;
}

static int tbf_buffer_fits(const struct impair *d, uint64_t rate_Bps,
			   uint64_t burst, struct ll_diag *diag)
{
	char b1[32], b2[32], b3[32], b4[32];
	uint64_t max_burst, min_Bps;

	if ((double)burst <= (double)rate_Bps * TBF_BUFFER_MAX_S)
		return 0;
	max_burst = (uint64_t)floor((double)rate_Bps * TBF_BUFFER_MAX_S);
	min_Bps = (uint64_t)ceil((double)burst / TBF_BUFFER_MAX_S);
	units_format_size(burst, b1, sizeof(b1));
	units_format_rate(d->rate, b2, sizeof(b2));
	if (has(d, IMP_BURST))
		ll_diag_add(diag, LL_DIAG_ERROR, "burst",
			    "burst: %s at rate %s takes %.1f s to send, over the %.2f s "
			    "tbf's buffer field holds (32-bit count of 64 ns ticks): "
			    "accepted at this rate: burst up to %s, or rate %s or more",
			    b1, b2, (double)burst / (double)rate_Bps, TBF_BUFFER_MAX_S,
			    units_format_size(max_burst, b3, sizeof(b3)),
			    units_format_rate(min_Bps * 8, b4, sizeof(b4)));
	else
		ll_diag_add(diag, LL_DIAG_ERROR, "rate",
			    "rate: %s is too low for tbf: its smallest bucket (%s) takes "
			    "%.1f s to send, over the %.2f s tbf's buffer field holds "
			    "(32-bit count of 64 ns ticks): accepted: rate %s .. 4tbit",
			    b2, b1, (double)burst / (double)rate_Bps, TBF_BUFFER_MAX_S,
			    units_format_rate(min_Bps * 8, b3, sizeof(b3)));
	return -EINVAL;
}

/* Plan the scope: the destination prefix and port a filter is to match,
 * when either is given. */
static void impair_plan_scope(const struct impair *d, struct impair_plan *p)
{
	if ((has(d, IMP_DST) && d->dst_plen > 0) || (has(d, IMP_DPORT) && d->dport)) {
		p->scoped = true;
		if (has(d, IMP_DST) && d->dst_plen) {
			p->dst_plen = d->dst_plen;
			p->dst_family = d->dst_family == AF_INET6 ? AF_INET6 : AF_INET;
			memcpy(p->dst_addr, d->dst_addr, 4);
			memcpy(p->dst6, d->dst6, 16);
		}
		p->dport = has(d, IMP_DPORT) ? d->dport : 0;
	}
}

/* Plan tbf: the rate in bytes/s, the burst (at least MTU + 14, rate/HZ and
 * 1 ms of rate; warned when short or long), the limit from latency unless
 * given; -EINVAL with the problem in diag. */
static int impair_plan_tbf(const struct impair *d, unsigned mtu, unsigned hz,
			   struct impair_plan *p, struct ll_diag *diag)
{
	uint64_t min_burst, by_hz, by_ms, floor_mtu = (uint64_t)mtu + 14;
	int64_t lat = has(d, IMP_LATENCY) ? d->tbf_latency :
		      TBF_LATENCY_DEFAULT_NS;
	char b1[32], b2[32];

	p->rate_Bps = d->rate / 8;
	if (!p->rate_Bps)
		p->rate_Bps = 1;
	by_hz = ceil_div(p->rate_Bps, hz);
	by_ms = ceil_div(p->rate_Bps, 1000);
	min_burst = floor_mtu;
	if (by_hz > min_burst)
		min_burst = by_hz;
	if (by_ms > min_burst)
		min_burst = by_ms;
	if (has(d, IMP_BURST)) {
		if (below_frame(diag, "burst", d->burst, floor_mtu))
			return -EINVAL;
		if (d->burst < min_burst)
			ll_diag_add(diag, LL_DIAG_WARN, "burst",
				    "burst: %s is below max(rate/HZ, 1 ms of rate) = %s; throughput will fall short of the rate",
				    units_format_size(d->burst, b1, sizeof(b1)),
				    units_format_size(min_burst, b2, sizeof(b2)));
		/* ~100 ms of rate: probes and slow start see line rate
		 * for that long (tcconfig#193) */
		if ((double)d->burst > (double)p->rate_Bps * 0.1 &&
		    d->burst > floor_mtu)
			ll_diag_add(diag, LL_DIAG_WARN, "burst",
				    "burst: %s is more than 100 ms of rate (%s): bursts that long pass unshaped",
				    units_format_size(d->burst, b1, sizeof(b1)),
				    units_format_size((uint64_t)((double)p->rate_Bps * 0.1),
						      b2, sizeof(b2)));
		p->burst = clamp32(d->burst);
	} else {
		p->burst = clamp32(min_burst);
	}
	if (tbf_buffer_fits(d, p->rate_Bps, p->burst, diag) < 0)
		return -EINVAL;
	if (has(d, IMP_TBF_LIMIT)) {
		/* a queue that cannot hold one full-size packet drops them all,
		 * as a burst that small does */
		if (below_frame(diag, "tbf-limit", d->tbf_limit, floor_mtu))
			return -EINVAL;
		p->tbf_limit = clamp32(d->tbf_limit);
		if (p->tbf_limit < p->burst)
			ll_diag_add(diag, LL_DIAG_WARN, "tbf-limit",
				    "tbf-limit is smaller than burst");
	} else {
		double lim = (double)p->rate_Bps * (double)lat / 1e9 +
			     (double)p->burst;
		p->tbf_limit = lim >= (double)UINT32_MAX ? UINT32_MAX :
			       (uint32_t)lim;
	}
	return 0;
}

/* Plan the loss model: loss-state's four-state or loss-gemodel's
 * Gilbert-Elliott probabilities in the kernel's order and sense. */
static void impair_plan_loss_model(const struct impair *d,
				   struct impair_plan *p)
{
	if (has(d, IMP_LOSS_STATE)) {
		const uint32_t *v = d->loss_state;
		int n = d->loss_state_n;

		/* tc q_netem.c defaults; kernel order p13 p31 p32 p14 p23 */
		p->loss_model = IMP_LOSSM_STATE;
		p->gi[0] = v[0];
		p->gi[1] = n > 1 ? v[1] : UINT32_MAX - v[0];
		p->gi[2] = n > 2 ? v[2] : 0;
		p->gi[4] = n > 3 ? v[3] : UINT32_MAX;
		p->gi[3] = n > 4 ? v[4] : 0;
	} else if (has(d, IMP_LOSS_GE)) {
		const uint32_t *v = d->loss_ge;
		int n = d->loss_ge_n;

		/* the CLI takes 1-h, the kernel wants h */
		p->loss_model = IMP_LOSSM_GE;
		p->ge[0] = v[0];
		p->ge[1] = n > 1 ? v[1] : UINT32_MAX - v[0];
		p->ge[2] = n > 2 ? UINT32_MAX - v[2] : 0;
		p->ge[3] = n > 3 ? v[3] : 0;
}
}

/* Plan netem: the limit from rate x delay of the slowest shaper (warned
 * when a given one is short), the loss model and the other fields as the
 * kernel takes them; warnings go to diag. */
static void impair_plan_netem(const struct impair *d, unsigned mtu,
			      struct impair_plan *p, struct ll_diag *diag)
{
	uint64_t rate = ASSUMED_LINK_BPS;
	double t, bdp, strict;
	uint64_t need;

	/* the slowest shaper decides how many packets wait in netem */
	if (has(d, IMP_RATE) && d->rate)
		rate = d->rate;
	if (has(d, IMP_NETEM_RATE) && d->netem_rate &&
	    (!has(d, IMP_RATE) || d->netem_rate < rate))
		rate = d->netem_rate;
	t = (double)((has(d, IMP_DELAY) ? d->delay : 0) +
		     (has(d, IMP_JITTER) ? d->jitter : 0) +
		     (has(d, IMP_SLOT) ? d->slot_max : 0)) / 1e9;
	strict = ceil((double)rate * t / (8.0 * mtu));
	bdp = ceil(1.5 * (double)rate * t / (8.0 * mtu));
	need = bdp > 1000 ? (uint64_t)bdp : 1000;
	p->limit_need = strict >= (double)UINT32_MAX ? UINT32_MAX :
			(uint32_t)strict;

	p->latency_ns = has(d, IMP_DELAY) ? d->delay : 0;
	p->jitter_ns = has(d, IMP_JITTER) ? d->jitter : 0;
	if (has(d, IMP_LIMIT)) {
		p->limit = d->limit;
		if (d->limit < p->limit_need)
			ll_diag_add(diag, LL_DIAG_WARN, "limit",
				    "LIMIT TOO SMALL: limit %" PRIu32 " packets cannot hold rate x delay = %" PRIu32 " packets: netem WILL tail-drop (auto-size would use %llu)",
				    d->limit, p->limit_need, (unsigned long long)need);
		else if (d->limit < need)
			ll_diag_add(diag, LL_DIAG_WARN, "limit",
				    "limit: %" PRIu32 " packets is below 1.5 x rate x delay (%llu packets): expect tail drops on bursts",
				    d->limit, (unsigned long long)need);
	} else {
		p->limit = clamp32(need);
	}
	if (has(d, IMP_DIST))
		p->dist = d->dist;
	impair_plan_loss_model(d, p);
	p->ecn = has(d, IMP_ECN) && d->ecn;
	if (has(d, IMP_NETEM_RATE)) {
		p->netem_rate_Bps = d->netem_rate / 8;
		if (!p->netem_rate_Bps)
			p->netem_rate_Bps = 1;
		p->packet_overhead = has(d, IMP_PKT_OVERHEAD) ? d->packet_overhead : 0;
		p->cell_size = has(d, IMP_CELL_SIZE) ? d->cell_size : 0;
		p->cell_overhead = has(d, IMP_CELL_OVERHEAD) ? d->cell_overhead : 0;
	}
	if (has(d, IMP_SLOT)) {
		p->slot = true;
		p->slot_min_ns = d->slot_min;
		p->slot_max_ns = d->slot_max;
		p->slot_packets = has(d, IMP_SLOT_PACKETS) ? d->slot_packets : 0;
		p->slot_bytes = has(d, IMP_SLOT_BYTES) ? d->slot_bytes : 0;
	}
	if (has(d, IMP_SEED)) {
		p->has_seed = true;
		p->seed = d->seed;
	}
	p->loss = d->loss;
	p->loss_corr = d->loss_corr;
	p->delay_corr = d->delay_corr;
	p->duplicate = d->duplicate;
	p->dup_corr = d->dup_corr;
	p->corrupt = d->corrupt;
	p->corrupt_corr = d->corrupt_corr;
	p->reorder = d->reorder;
	p->reorder_corr = d->reorder_corr;
	p->gap = d->gap;
	/* tc q_netem.c: reorder without gap means gap 1 (otherwise the
	 * kernel never reorders) */
	if (p->reorder && !p->gap)
		p->gap = 1;
}

int impair_plan(const struct impair *d, unsigned mtu, unsigned hz,
		struct impair_plan *p, struct ll_diag *diag)
{
	memset(p, 0, sizeof(*p));
	if (impair_validate(d, diag) < 0)
		return -EINVAL;
	if (!mtu)
		mtu = 1500;
	if (!hz)
		hz = 250;
	p->mtu = mtu;
	p->tbf = impair_needs_tbf(d);
	p->netem = impair_needs_netem(d);
	p->ingress = has(d, IMP_DIRECTION) && d->direction == IMP_INGRESS;
	impair_plan_scope(d, p);
	if (p->tbf && impair_plan_tbf(d, mtu, hz, p, diag) < 0)
		return -EINVAL;
	if (p->netem)
		impair_plan_netem(d, mtu, p, diag);
	return 0;
}

double impair_goodput_ceiling(uint64_t rate, unsigned mtu, unsigned mss)
{
	if (!mtu)
		mtu = 1500;
	if (!mss)
		mss = mtu > 52 ? mtu - 52 : 1;
	return (double)rate * (double)mss / ((double)mss + 66.0);
}

static void cat(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void cat(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n < len - *off ? (size_t)n : len - *off - 1;
}

char *impair_summary(const struct impair *d, char *buf, size_t len)
{
	const struct impair_field *f;
	size_t off = 0;
	char v[48];

	if (!len)
		return buf;
	buf[0] = '\0';
	if (impair_is_empty(d)) {
		snprintf(buf, len, "none");
		return buf;
	}
	for (f = impair_fields; f->name; f++) {
		if (!(d->set & f->bit))
			continue;
		impair_get(d, f, v, sizeof(v));
		cat(buf, len, &off, "%s%s %s", off ? " " : "", f->name, v);
	}
	return buf;
}

/* True if a and b differ by at most 1% (tc rounds burst/limit through
 * ticks, so a read-back value is rarely the exact one derived). */
static bool near(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;

	return d <= 2 || d * 100 <= (a > b ? a : b);
}

void impair_drop_derived(struct impair *d, unsigned mtu, unsigned hz)
{
	struct impair base = *d;
	struct impair_plan p;
	struct ll_diag diag;

	base.set &= ~(uint32_t)(IMP_BURST | IMP_TBF_LIMIT | IMP_LIMIT);
	ll_diag_clear(&diag);
	if (impair_plan(&base, mtu, hz, &p, &diag) < 0)
		return;
	if (has(d, IMP_BURST) && p.tbf && near(d->burst, p.burst)) {
		d->set &= ~(uint32_t)IMP_BURST;
		d->burst = 0;
	}
	if (has(d, IMP_TBF_LIMIT) && p.tbf && near(d->tbf_limit, p.tbf_limit)) {
		d->set &= ~(uint32_t)IMP_TBF_LIMIT;
		d->tbf_limit = 0;
	}
	if (has(d, IMP_LIMIT) && p.netem && near(d->limit, p.limit)) {
		d->set &= ~(uint32_t)IMP_LIMIT;
		d->limit = 0;
	}
}
