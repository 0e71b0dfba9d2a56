/* SPDX-License-Identifier: MIT */
/* units.h - tc-compatible parsing and printing of rates, times, sizes and
 * probabilities (rules from iproute2 tc/tc_util.c get_rate64, get_time64,
 * get_size and lib/utils_math.c; man tc(8) "PARAMETERS").
 *
 * Base units everywhere in linklab: rate in bit/s (uint64_t), time in ns
 * (int64_t), size in bytes (uint64_t), probability as a uint32_t fraction of
 * UINT32_MAX (0 = never, UINT32_MAX = always), exactly as netem stores it.
 * Printing round-trips: what units_format_* prints parses back to the same
 * value.
 */
#ifndef LINKLAB_UNITS_H
#define LINKLAB_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"

/* Rate: "50mbit" (SI bit/s: bit kbit mbit gbit tbit), "6mbps" (bytes/s: bps
 * kbps mbps gbps tbps, so mbps = 8 x mbit), IEC forms "kibit", "mibps" ...
 * A unit is mandatory. Result in bit/s, > 0. -EINVAL (err names the value and
 * the accepted units) on junk, a missing or unknown unit, or overflow. */
int units_parse_rate(const char *s, uint64_t *bps, struct ll_err *err);

/* A plain decimal number: digits, an optional sign and dot, an exponent
 * ("12", "-1.5", "2e3"); no unit, no blanks. Hex ("0x10"), "inf" and "nan"
 * are refused (strtod alone would take them). 0, or -1. */
int units_parse_number(const char *s, double *out);

/* iperf3's number with an optional K/M/G/T suffix (either case), k-based
 * (1000 for bit rates, 1024 for byte sizes, as iperf3's units.c): "10M",
 * "1.5G", "100000". *out >= 0. 0, or -1 on junk, a negative or non-finite
 * value. */
int units_parse_suffixed(const char *s, double k, double *out);

/* Time: "100ms", "1.5s", "250us", "10ns" (s sec secs ms msec usec us ns).
 * A unit is mandatory (a bare number means us to tc's get_time but ns to
 * get_time64, so we refuse it). Negative values allowed only if allow_neg.
 * Result in ns. -EINVAL on error. */
int units_parse_time(const char *s, int64_t *ns, int allow_neg,
		     struct ll_err *err);

/* Size: "1514b", "64kb", "1mb", "1gb" (1024-based as tc get_size), also
 * "kbit"/"mbit" sizes (bits / 8). A bare number is bytes. -EINVAL on error. */
int units_parse_size(const char *s, uint64_t *bytes, struct ll_err *err);

/* Percent: "1%", "0.1%", "100%", "0%" -> probability scaled to UINT32_MAX as
 * tc set_percent does (round(p/100 * UINT32_MAX)): 1% -> 42949673,
 * 75% -> 3221225471, 100% -> 4294967295. The % sign is mandatory; values
 * outside 0..100 are -EINVAL. */
int units_parse_percent(const char *s, uint32_t *prob, struct ll_err *err);

/* Conversions between percent (double, 0..100) and the u32 fraction. */
uint32_t units_percent_to_prob(double pct);
double units_prob_to_percent(uint32_t prob);

/* Exact printers (round-trip): the largest unit that keeps the value exact.
 * rate: "50mbit", "1500kbit", "12345bit"; time: "100ms", "1500us", "7ns";
 * size: "1514b", "64kb"; percent: shortest "%g"-style text that parses back
 * to the same u32 ("1%", "0.1%", "75%"). Return buf. */
char *units_format_rate(uint64_t bps, char *buf, size_t len);
char *units_format_time(int64_t ns, char *buf, size_t len);
char *units_format_size(uint64_t bytes, char *buf, size_t len);
char *units_format_percent(uint32_t prob, char *buf, size_t len);

/* Human printers for meters: three significant figures, SI,
 * e.g. "47.8 Mbit/s", "912 kbit/s", "1.02 Gbit/s"; time "100 ms", "1.23 s";
 * size "1.50 MB" (SI bytes, like iperf3's MBytes uses 1024: see iperf3
 * units.c; here IEC "MiB" for 1024-based). Return buf. */
char *units_human_rate(double bps, char *buf, size_t len);
char *units_human_time(double ns, char *buf, size_t len);
char *units_human_bytes(double bytes, char *buf, size_t len);

#endif
