/* SPDX-License-Identifier: MIT */
/* verify.c - dialled vs measured rows and their tolerances (verify.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "linklab/base/stats.h"
#include "linklab/model/theory.h"
#include "linklab/model/verify.h"

struct verify_row *verify_add(struct verify_report *rep, const char *quantity,
			      const char *direction, const char *unit)
{
	struct verify_row *r;

	if (rep->n >= VERIFY_MAX_ROWS)
		return NULL;
	r = &rep->r[rep->n++];
	memset(r, 0, sizeof(*r));
	snprintf(r->quantity, sizeof(r->quantity), "%s", quantity);
	snprintf(r->direction, sizeof(r->direction), "%s", direction);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	r->measurable = true;
	return r;
}

static void judge(struct verify_row *r)
{
	r->error = r->measured - r->dialled;
	r->ok = r->measurable && r->error >= r->tol_lo && r->error <= r->tol_hi;
}

void verify_rate(struct verify_row *r, uint64_t rate, uint32_t burst,
		 double seconds, double goodput_bps)
{
	struct theory_in in = { .rate = rate, .streams = 1 };
	struct theory_out out;
	double bucket;

	theory_compute(&in, &out);
	r->dialled = out.frame_bps;
	r->measured = goodput_bps;
	bucket = seconds > 0 && rate ? (double)burst * 8 / ((double)rate * seconds) : 0;
	r->tol_lo = -0.05 * r->dialled;
	r->tol_hi = (0.01 + bucket) * r->dialled;
	snprintf(r->detail, sizeof(r->detail), "frame ceiling of %.3f Mbit/s "
		 "(x 1448/1514); bucket %u b over %.0f s", rate / 1e6, burst, seconds);
	judge(r);
}

void verify_rate_udp(struct verify_row *r, uint64_t rate, uint32_t burst,
		     double seconds, double loss, double goodput_bps)
{
	double bucket = seconds > 0 && rate ?
			(double)burst * 8 / ((double)rate * seconds) : 0;

	r->dialled = (double)rate * 1448.0 / 1490.0;
	r->measured = goodput_bps;
	r->tol_lo = -(0.02 + loss) * r->dialled;
	r->tol_hi = (0.01 + bucket) * r->dialled;
	snprintf(r->detail, sizeof(r->detail), "UDP at 1.2 x %.3f Mbit/s, payload "
		 "ceiling x 1448/1490; bucket %u b over %.0f s", rate / 1e6, burst,
		 seconds);
	judge(r);
}

void verify_rtt(struct verify_row *r, double dialled_ms, double median_ms,
		double sd_ms, int n)
{
	double se = n > 0 ? sd_ms / sqrt((double)n) : 0;
	double tol = 0.01 * dialled_ms + 3 * se + 0.2;

	r->dialled = dialled_ms;
	r->measured = median_ms;
	r->tol_lo = -tol;
	r->tol_hi = tol;
	snprintf(r->detail, sizeof(r->detail), "median of %d probes, sd %.3f ms",
		 n, sd_ms);
	judge(r);
}

void verify_jitter(struct verify_row *r, double jitter_ms, double measured_ms)
{
	double tol = 0.25 * jitter_ms + 0.1;

	r->dialled = 2.0 * jitter_ms / 3.0;
	r->measured = measured_ms;
	r->tol_lo = -tol;
	r->tol_hi = tol;
	snprintf(r->detail, sizeof(r->detail), "RFC 3550 estimate; uniform "
		 "jitter %.3f ms -> 2J/3", jitter_ms);
	judge(r);
}

void verify_fraction(struct verify_row *r, double dialled, uint64_t k,
		     uint64_t n)
{
	double lo, hi;

	stats_wilson(k, n, VERIFY_Z999, &lo, &hi);
	r->dialled = dialled;
	r->measured = n ? (double)k / (double)n : 0;
	/* ok when the dialled value lies in the measured interval:
	 * lo <= dialled <= hi, i.e. -(hi - m) <= m - d <= m - lo */
	r->error = r->measured - r->dialled;
	r->ok = n > 0 && dialled >= lo && dialled <= hi;
	r->tol_lo = -(hi - r->measured);
	r->tol_hi = r->measured - lo;
	snprintf(r->detail, sizeof(r->detail), "%llu of %llu datagrams; 99.9 %% "
		 "interval %.4f .. %.4f", (unsigned long long)k,
		 (unsigned long long)n, lo, hi);
	if (!n)
		r->measurable = false;
}

void verify_unmeasurable(struct verify_row *r, double dialled,
			 const char *reason)
{
	r->measurable = false;
	r->ok = false;
	r->dialled = dialled;
	snprintf(r->detail, sizeof(r->detail), "not measurable here: %s", reason);
}

bool verify_all_ok(const struct verify_report *rep)
{
	if (!rep->n)
		return false;
	for (int i = 0; i < rep->n; i++)
		if (!rep->r[i].ok)
			return false;
	return true;
}

/* 1 - (1 - a)(1 - b) of two u32 probability fractions. */
static uint32_t frac_combine(uint32_t a, uint32_t b)
{
	double fa = a / 4294967295.0, fb = b / 4294967295.0;
	double p = 1 - (1 - fa) * (1 - fb);

	return p >= 1 ? UINT32_MAX : (uint32_t)llround(p * 4294967295.0);
}

void verify_path_add(struct impair *path, uint32_t *burst,
		     const struct impair *hop, uint32_t hop_burst,
		     unsigned *both)
{
	path->delay += hop->delay;
	path->loss = frac_combine(path->loss, hop->loss);
	path->corrupt = frac_combine(path->corrupt, hop->corrupt);
	if (hop->rate && (!path->rate || hop->rate < path->rate)) {
		path->rate = hop->rate;
		*burst = hop_burst;
	}
	if (hop->jitter && path->jitter)
		*both |= VERIFY_BOTH_JITTER;
	if (hop->duplicate && path->duplicate)
		*both |= VERIFY_BOTH_DUPLICATE;
	if (hop->reorder && path->reorder)
		*both |= VERIFY_BOTH_REORDER;
	path->jitter += hop->jitter;
	path->duplicate = frac_combine(path->duplicate, hop->duplicate);
	path->reorder = frac_combine(path->reorder, hop->reorder);
}
