/* SPDX-License-Identifier: MIT */
/* units.c - tc-compatible parsing and exact printing of rates, times, sizes
 * and probabilities. Suffix tables follow iproute2 tc/tc_util.c (get_rate64,
 * get_time64, get_size) and lib/utils_math.c; percent scaling follows tc's
 * set_percent/get_percent (rint(p * UINT32_MAX)). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "linklab/base/units.h"

struct unit { const char *name; double mult; };

/* bit/s multipliers; names compared case-insensitively, as tc does. */
static const struct unit rate_units[] = {
	{ "bit", 1. },
	{ "kibit", 1024. }, { "kbit", 1000. },
	{ "mibit", 1024. * 1024. }, { "mbit", 1000000. },
	{ "gibit", 1024. * 1024. * 1024. }, { "gbit", 1000000000. },
	{ "tibit", 1024. * 1024. * 1024. * 1024. }, { "tbit", 1000000000000. },
	{ "bps", 8. },
	{ "kibps", 8. * 1024. }, { "kbps", 8000. },
	{ "mibps", 8. * 1024. * 1024. }, { "mbps", 8000000. },
	{ "gibps", 8. * 1024. * 1024. * 1024. }, { "gbps", 8000000000. },
	{ "tibps", 8. * 1024. * 1024. * 1024. * 1024. }, { "tbps", 8000000000000. },
	{ NULL, 0 }
};
#define RATE_UNITS "bit kbit mbit gbit tbit, bps kbps mbps gbps tbps (bytes/s), kibit mibit gibit tibit kibps mibps gibps tibps"

/* ns multipliers */
static const struct unit time_units[] = {
	{ "s", 1e9 }, { "sec", 1e9 }, { "secs", 1e9 },
	{ "ms", 1e6 }, { "msec", 1e6 }, { "msecs", 1e6 },
	{ "us", 1e3 }, { "usec", 1e3 }, { "usecs", 1e3 },
	{ "ns", 1. }, { "nsec", 1. }, { "nsecs", 1. },
	{ NULL, 0 }
};
#define TIME_UNITS "s ms us ns (also sec msec usec nsec)"

/* byte multipliers (tc get_size: 1024-based) */
static const struct unit size_units[] = {
	{ "", 1. }, { "b", 1. },
	{ "k", 1024. }, { "kb", 1024. },
	{ "m", 1024. * 1024. }, { "mb", 1024. * 1024. },
	{ "g", 1024. * 1024. * 1024. }, { "gb", 1024. * 1024. * 1024. },
	{ "kbit", 1024. / 8. }, { "mbit", 1024. * 1024. / 8. },
	{ "gbit", 1024. * 1024. * 1024. / 8. },
	{ NULL, 0 }
};
#define SIZE_UNITS "b kb mb gb (1024-based), kbit mbit gbit"

static const struct unit *find_unit(const struct unit *t, const char *s)
{
	for (; t->name; t++)
		if (strcasecmp(t->name, s) == 0)
			return t;
	return NULL;
}

/* Split "12.5mbit" into number and suffix. Returns 0 or -EINVAL. */
static int split_num(const char *s, double *v, const char **suffix)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	/* refuse hex, inf, nan and leading blanks: digits, sign and dot only */
	if (!strchr("+-.0123456789", s[0]))
		return -EINVAL;
	{
		const char *d = s + (s[0] == '+' || s[0] == '-');

		if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
			return -EINVAL;     /* strtod would read 0x10 as 16 */
	}
	errno = 0;
	*v = strtod(s, &end);
	if (end == s || errno == ERANGE || !isfinite(*v))
		return -EINVAL;
	if (end[0] == 'x' || end[0] == 'X')
		return -EINVAL;
	*suffix = end;
	return 0;
}

static int rate_parse(const char *s, uint64_t *bps, struct ll_err *err)
{
	const struct unit *u;
	const char *suf;
	double v;

	if (split_num(s, &v, &suf) < 0)
		return ll_err_set(err, -EINVAL,
				  "'%s' is not a rate (a number and a unit: %s)",
				  s ? s : "", RATE_UNITS);
	if (!*suf)
		return ll_err_set(err, -EINVAL,
				  "'%s' has no unit; accepted units: %s", s, RATE_UNITS);
	u = find_unit(rate_units, suf);
	if (!u)
		return ll_err_set(err, -EINVAL,
				  "'%s': unknown rate unit '%s'; accepted units: %s",
				  s, suf, RATE_UNITS);
	if (v < 0)
		return ll_err_set(err, -EINVAL, "'%s' must not be negative", s);
	v *= u->mult;
	if (v >= 18446744073709549568.0)
		return ll_err_set(err, -EINVAL, "'%s' is too large", s);
	*bps = (uint64_t)llrint(v) ;
	if (v > 9.2e18)
		*bps = (uint64_t)v;
	return 0;
}

int units_parse_rate(const char *s, uint64_t *bps, struct ll_err *err)
{
	uint64_t v = 0;
	int rc = rate_parse(s, &v, err);

	if (rc < 0)
		return rc;
	if (v == 0)
		return ll_err_set(err, -EINVAL, "'%s' is out of range (must be > 0bit)", s);
	*bps = v;
	return 0;
}

int units_parse_time(const char *s, int64_t *ns, int allow_neg,
		     struct ll_err *err)
{
	const struct unit *u;
	const char *suf;
	double v;

	if (split_num(s, &v, &suf) < 0)
		return ll_err_set(err, -EINVAL,
				  "'%s' is not a time (a number and a unit: %s)",
				  s ? s : "", TIME_UNITS);
	if (!*suf)
		return ll_err_set(err, -EINVAL,
				  "'%s' has no unit; accepted units: %s", s, TIME_UNITS);
	u = find_unit(time_units, suf);
	if (!u)
		return ll_err_set(err, -EINVAL,
				  "'%s': unknown time unit '%s'; accepted units: %s",
				  s, suf, TIME_UNITS);
	if (v < 0 && !allow_neg)
		return ll_err_set(err, -EINVAL, "'%s' must not be negative", s);
	v *= u->mult;
	if (fabs(v) >= 9.2e18)
		return ll_err_set(err, -EINVAL, "'%s' is too large", s);
	*ns = (int64_t)llrint(v);
	return 0;
}

int units_parse_size(const char *s, uint64_t *bytes, struct ll_err *err)
{
	const struct unit *u;
	const char *suf;
	double v;

	if (split_num(s, &v, &suf) < 0)
		return ll_err_set(err, -EINVAL,
				  "'%s' is not a size (a number and a unit: %s)",
				  s ? s : "", SIZE_UNITS);
	u = find_unit(size_units, suf);
	if (!u)
		return ll_err_set(err, -EINVAL,
				  "'%s': unknown size unit '%s'; accepted units: %s",
				  s, suf, SIZE_UNITS);
	if (v < 0)
		return ll_err_set(err, -EINVAL, "'%s' must not be negative", s);
	v *= u->mult;
	if (v >= 9.2e18)
		return ll_err_set(err, -EINVAL, "'%s' is too large", s);
	*bytes = (uint64_t)llrint(v);
	return 0;
}

uint32_t units_percent_to_prob(double pct)
{
	double v;

	if (!(pct > 0))
		return 0;
	if (pct >= 100.)
		return UINT32_MAX;
	v = rint(pct / 100. * (double)UINT32_MAX);
	return v >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

double units_prob_to_percent(uint32_t prob)
{
	return (double)prob / (double)UINT32_MAX * 100.;
}

int units_parse_percent(const char *s, uint32_t *prob, struct ll_err *err)
{
	const char *suf;
	double v;

	if (split_num(s, &v, &suf) < 0)
		return ll_err_set(err, -EINVAL,
				  "'%s' is not a percentage (e.g. 1%% or 0.1%%)",
				  s ? s : "");
	if (suf[0] == '%' && suf[1])
		return ll_err_set(err, -EINVAL,
				  "'%s' has '%s' after the number: a percentage ends "
				  "in one %% sign (e.g. 1%% or 0.1%%)", s, suf + 1);
	if (strcmp(suf, "%") != 0)
		return ll_err_set(err, -EINVAL,
				  "'%s' needs a %% sign (e.g. 1%% or 0.1%%)", s);
	if (v < 0 || v > 100)
		return ll_err_set(err, -EINVAL,
				  "%s is out of range (0%% .. 100%%)", s);
	*prob = units_percent_to_prob(v);
	/* the kernel's step is 1 in 2^32 (about 0.0000000233%): a value
	 * that rounds to 0 would silently mean none */
	if (v > 0 && *prob == 0)
		return ll_err_set(err, -EINVAL,
				  "%s is below the smallest step, 1 in 2^32 "
				  "(0.0000000233%%); 0%% means none", s);
	return 0;
}

/* --- exact printers ------------------------------------------------------ */

char *units_format_rate(uint64_t bps, char *buf, size_t len)
{
	static const struct { const char *n; uint64_t m; } t[] = {
		{ "tbit", 1000000000000ULL }, { "gbit", 1000000000ULL },
		{ "mbit", 1000000ULL }, { "kbit", 1000ULL },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (bps && bps % t[i].m == 0) {
			snprintf(buf, len, "%llu%s",
				 (unsigned long long)(bps / t[i].m), t[i].n);
			return buf;
		}
	}
	snprintf(buf, len, "%llubit", (unsigned long long)bps);
	return buf;
}

char *units_format_time(int64_t ns, char *buf, size_t len)
{
	static const struct { const char *n; int64_t m; } t[] = {
		{ "s", 1000000000LL }, { "ms", 1000000LL }, { "us", 1000LL },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (ns && ns % t[i].m == 0) {
			snprintf(buf, len, "%lld%s", (long long)(ns / t[i].m), t[i].n);
			return buf;
		}
	}
	snprintf(buf, len, "%lldns", (long long)ns);
	return buf;
}

char *units_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const struct { const char *n; uint64_t m; } t[] = {
		{ "gb", 1024ULL * 1024 * 1024 }, { "mb", 1024ULL * 1024 },
		{ "kb", 1024ULL },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (bytes && bytes % t[i].m == 0) {
			snprintf(buf, len, "%llu%s",
				 (unsigned long long)(bytes / t[i].m), t[i].n);
			return buf;
		}
	}
	snprintf(buf, len, "%llub", (unsigned long long)bytes);
	return buf;
}

char *units_format_percent(uint32_t prob, char *buf, size_t len)
{
	double pct = units_prob_to_percent(prob);
	int prec;

	for (prec = 0; prec <= 17; prec++) {
		char tmp[64];
		double back;

		snprintf(tmp, sizeof(tmp), "%.*f", prec, pct);
		back = strtod(tmp, NULL);
		if (units_percent_to_prob(back) == prob) {
			snprintf(buf, len, "%s%%", tmp);
			return buf;
		}
	}
	snprintf(buf, len, "%.17g%%", pct);
	return buf;
}

/* --- human printers (three significant figures) -------------------------- */

static void sig3(double v, const char *unit, char *buf, size_t len)
{
	if (v >= 99.95 || v == 0)
		snprintf(buf, len, "%.0f %s", v, unit);
	else if (v >= 9.995)
		snprintf(buf, len, "%.1f %s", v, unit);
	else
		snprintf(buf, len, "%.2f %s", v, unit);
}

static char *human(double v, const char *const *names, double step,
		   char *buf, size_t len)
{
	int i = 0;
	double a = fabs(v);

	while (names[i + 1] && a >= step * 0.9995) {
		a /= step;
		v /= step;
		i++;
	}
	sig3(v < 0 ? -a : a, names[i], buf, len);
	return buf;
}

char *units_human_rate(double bps, char *buf, size_t len)
{
	static const char *const n[] = { "bit/s", "kbit/s", "Mbit/s", "Gbit/s",
					  "Tbit/s", NULL };
	return human(bps, n, 1000., buf, len);
}

char *units_human_time(double ns, char *buf, size_t len)
{
	static const char *const n[] = { "ns", "us", "ms", "s", NULL };
	return human(ns, n, 1000., buf, len);
}

char *units_human_bytes(double bytes, char *buf, size_t len)
{
	static const char *const n[] = { "B", "kB", "MB", "GB", "TB", NULL };
	return human(bytes, n, 1000., buf, len);
}

int units_parse_number(const char *s, double *out)
{
	const char *end;
	double v;

	if (split_num(s, &v, &end) || *end)
		return -1;
	*out = v;
	return 0;
}

int units_parse_suffixed(const char *s, double k, double *out)
{
	const char *end;
	double v;

	if (split_num(s, &v, &end) || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': v *= k; end++; break;
	case 'm': case 'M': v *= k * k; end++; break;
	case 'g': case 'G': v *= k * k * k; end++; break;
	case 't': case 'T': v *= k * k * k * k; end++; break;
	default: break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}
