/* SPDX-License-Identifier: MIT */
/* theory.c - expected TCP ceilings: frame overhead, window/RTT, Mathis. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "linklab/model/theory.h"
#include "linklab/base/units.h"

#define THEORY_MAX_STREAMS 128   /* the -P limit (iperf3 and linklab test) */

uint64_t theory_bdp(uint64_t rate, double rtt)
{
	if (rtt <= 0)
		return 0;
	return (uint64_t)((double)rate * rtt / 8.0 + 0.5);
}

uint64_t theory_window_from_space(uint64_t space, int adv_win_scale)
{
	/* tcp_win_from_space(): space - space/2^scale (scale > 0),
	 * space/2^-scale (scale <= 0). */
	if (adv_win_scale > 31 || adv_win_scale < -31)
		return 0;
	if (adv_win_scale > 0)
		return space - (space >> adv_win_scale);
	return space >> -adv_win_scale;
}

bool theory_cc_loss_based(const char *cc)
{
	return !cc || strncmp(cc, "bbr", 3) != 0;
}

void theory_compute(const struct theory_in *in, struct theory_out *out)
{
	double mss = in->mss ? in->mss : 1448, best = 0;
	int n = in->streams > 0 ? in->streams : 1;
	char a[32], b[32], c[32];
	int len = 0;

	*out = (struct theory_out){ 0 };
	if (in->rate) {
		out->frame_bps = (double)in->rate * mss / (mss + 66.0);
		best = out->frame_bps;
		out->bound = THEORY_RATE;
	}
	if (in->window && in->rtt > 0) {
		out->window_bps = n * (double)in->window * 8.0 / in->rtt;
		if (!best || out->window_bps < best) {
			best = out->window_bps;
			out->bound = THEORY_WINDOW;
		}
	}
	if (in->loss > 0 && in->rtt > 0 && theory_cc_loss_based(in->cc)) {
		out->mathis_bps = n * mss * 8.0 / in->rtt * 1.22 / sqrt(in->loss);
		if (!best || out->mathis_bps < best) {
			best = out->mathis_bps;
			out->bound = THEORY_LOSS;
		}
	}
	out->expect_bps = best;
	switch (out->bound) {
	case THEORY_RATE:
		len = snprintf(out->line, sizeof(out->line),
			       "rate-limited: %s x %.0f/%.0f (frame headers) = %s",
			       units_human_rate((double)in->rate, a, sizeof(a)), mss,
			       mss + 66, units_human_rate(best, b, sizeof(b)));
		break;
	case THEORY_WINDOW:
		len = snprintf(out->line, sizeof(out->line), "window-limited: %d x %s / %s = %s",
			       n, units_human_bytes((double)in->window, a, sizeof(a)),
			       units_human_time(in->rtt * 1e9, b, sizeof(b)),
			       units_human_rate(best, c, sizeof(c)));
		/* streams to reach the dialled rate; without a rate there
		 * is nothing to reach */
		if (out->frame_bps > 0 && len > 0 && (size_t)len < sizeof(out->line)) {
			double need = ceil(out->frame_bps / (best / n));

			/* -P stops at 128 (iperf3's and linklab's limit) */
			if (need <= THEORY_MAX_STREAMS)
				len += snprintf(out->line + len, sizeof(out->line) - (size_t)len,
						"; try -P %d or raise tcp_rmem", (int)need);
			else
				len += snprintf(out->line + len, sizeof(out->line) - (size_t)len,
						"; %.0f streams would be needed (over -P %d): "
						"raise tcp_rmem", need, THEORY_MAX_STREAMS);
		} else if (len > 0 && (size_t)len < sizeof(out->line))
			len += snprintf(out->line + len, sizeof(out->line) - (size_t)len,
					"; no rate dialled");
		break;
	case THEORY_LOSS:
		len = snprintf(out->line, sizeof(out->line),
			       "loss-limited (Mathis, %s): %d x MSS/RTT x 1.22/sqrt(%.3g%%) = %s",
			       in->cc && in->cc[0] ? in->cc : "loss-based CC assumed", n,
			       in->loss * 100, units_human_rate(best, a, sizeof(a)));
		break;
	case THEORY_NONE:
		len = snprintf(out->line, sizeof(out->line),
			       "no ceiling known (dial a rate or measure the RTT)");
		break;
	}
	/* a loss the sender's CC does not answer with a back-off: said, so
	 * that the missing loss ceiling is not taken for an oversight */
	if (in->loss > 0 && !theory_cc_loss_based(in->cc) && len > 0 &&
	    (size_t)len < sizeof(out->line))
		snprintf(out->line + len, sizeof(out->line) - (size_t)len,
			 "; %.3g%% loss sets no ceiling for %s (Mathis holds for loss-based CC: cubic, reno)",
			 in->loss * 100, in->cc);
}
