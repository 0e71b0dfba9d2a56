/* SPDX-License-Identifier: MIT */
/* theory.h - the expected TCP goodput ceilings for a dial and a measured RTT,
 * and which one binds (the console's theory line, the classroom guide):
 *  - frame ceiling: tbf counts whole frames, so goodput <= rate x MSS /
 *    (MSS + 66) (66 = 14 Ethernet + 20 IPv4 + 32 TCP with timestamps);
 *    50 Mbit/s -> 47.8 Mbit/s;
 *  - window: streams x window / RTT (window = receive buffer max from
 *    tcp_rmem, less the tcp_adv_win_scale share kept for overhead);
 *  - Mathis et al. 1997: streams x MSS / RTT x 1.22 / sqrt(p), for a
 *    loss-based congestion control (Reno, CUBIC: one window halving per
 *    loss); BBR paces to its model of the bottleneck and does not back off
 *    per loss, so no loss ceiling applies to it.
 */
#include <stdbool.h>
#ifndef LINKLAB_THEORY_H
#define LINKLAB_THEORY_H

#include <stddef.h>
#include <stdint.h>

enum theory_bound { THEORY_NONE, THEORY_RATE, THEORY_WINDOW, THEORY_LOSS };

struct theory_in {
	uint64_t rate;     /* dialled tbf rate, bit/s; 0 = none */
	double rtt;        /* seconds, measured (or dialled); 0 = unknown */
	double loss;       /* packet loss probability 0..1 on the data path */
	uint32_t mss;      /* bytes; 0 -> 1448 */
	uint64_t window;   /* bytes per stream; 0 = unknown */
	int streams;       /* >= 1 */
	const char *cc;    /* the sender's TCP congestion control
			    * (net.ipv4.tcp_congestion_control or -C);
			    * NULL or "" = unknown, taken as loss-based */
};

struct theory_out {
	double frame_bps;  /* rate ceiling after header overhead (0 = none) */
	double window_bps; /* 0 = not applicable */
	double mathis_bps; /* 0 = not applicable */
	double expect_bps; /* the smallest of those that apply */
	enum theory_bound bound;
	char line[256];    /* "window-limited: 3.0 MB / 100 ms = 252 Mbit/s; ..." */
};

/* Does congestion control cc back off per loss, so that Mathis' ceiling
 * holds? false for bbr (any version: "bbr", "bbr2", "bbr3"); true for the
 * others (reno, cubic, htcp, ...) and for an unknown one (NULL, ""). */
bool theory_cc_loss_based(const char *cc);

/* Compute the ceilings and the one-line explanation. A window-limited line
 * advises "try -P N" (N streams reach the rate ceiling) only when a rate is
 * given; without one it ends "; no rate dialled". */
void theory_compute(const struct theory_in *in, struct theory_out *out);

/* Bandwidth-delay product in bytes: rate (bit/s) x rtt (s) / 8. */
uint64_t theory_bdp(uint64_t rate, double rtt);

/* The receive window, bytes, that a socket buffer of space bytes gives:
 * space less its 1/2^adv_win_scale overhead share (the kernel's
 * tcp_win_from_space(), sysctl net.ipv4.tcp_adv_win_scale, -31..31;
 * 0 outside that range). */
uint64_t theory_window_from_space(uint64_t space, int adv_win_scale);

#endif
