/* SPDX-License-Identifier: MIT */
/* udpstats.c - UDP receiver statistics (include/linklab/traffic/udpstats.h). */
#include <stdlib.h>
#include <string.h>

#include "linklab/traffic/udpstats.h"

void udpstats_init(struct udpstats *u)
{
	memset(u, 0, sizeof(*u));
}

static bool bit_get(const struct udpstats *u, uint64_t seq)
{
	uint64_t b = seq % UDPSTATS_WINDOW;
	return u->seen[b / 64] >> (b % 64) & 1;
}

static void bit_set(struct udpstats *u, uint64_t seq, bool v)
{
	uint64_t b = seq % UDPSTATS_WINDOW;
	if (v)
		u->seen[b / 64] |= (uint64_t)1 << (b % 64);
	else
		u->seen[b / 64] &= ~((uint64_t)1 << (b % 64));
}

/* Clear the bits of [from, to) (fewer than UDPSTATS_WINDOW numbers): a
 * word at a time where it can, so a long gap costs little. */
static void bits_clear(struct udpstats *u, uint64_t from, uint64_t to)
{
	while (from < to && from % 64)
		bit_set(u, from++, false);
	while (to - from >= 64) {
		u->seen[(from % UDPSTATS_WINDOW) / 64] = 0;
		from += 64;
	}
	while (from < to)
		bit_set(u, from++, false);
}

static uint64_t unwrap32(uint64_t highest, uint64_t seq)
{
	const uint64_t lap = (uint64_t)1 << 32;
	uint64_t base = highest & ~(lap - 1);
	uint64_t s = base | (seq & (lap - 1));

	if (s + lap / 2 < highest)          /* far behind: next lap */
		s += lap;
	else if (s > highest + lap / 2 && s >= lap)   /* far ahead: last lap */
		s -= lap;
	return s;
}

int udpstats_packet(struct udpstats *u, uint64_t seq, int seq_bits,
		    int64_t sent_us, int64_t now_us)
{
	int kind;

	if (seq_bits == 32)
		seq = unwrap32(u->highest, seq);
	if (seq == 0)
		return -1;
	bool fresh = seq > u->highest || u->highest - seq >= UDPSTATS_WINDOW ||
		     !bit_get(u, seq);
	if (fresh && u->have_ck)
		for (int k = 0; k < 2; k++)
			if (seq <= u->ck[k].mark)
				u->ck[k].got++;
	if (seq > u->highest) {
		/* clear the bits of the numbers now entering the window */
		uint64_t gap = seq - u->highest;
		if (gap >= UDPSTATS_WINDOW) {
			memset(u->seen, 0, sizeof(u->seen));
		} else {
			bits_clear(u, u->highest + 1, seq);
		}
		bit_set(u, seq, true);
		u->highest = seq;
		u->received++;
		kind = 1;
	} else if (u->highest - seq >= UDPSTATS_WINDOW) {
		u->late++;          /* too old to tell: a late original */
		u->received++;
		u->ooo++;
		kind = 2;
	} else if (bit_get(u, seq)) {
		u->dups++;
		return 0;
	} else {
		bit_set(u, seq, true);
		u->received++;
		u->ooo++;
		kind = 2;
	}
	/* RFC 3550 6.4.1: D(i-1,i) = (Rj - Ri) - (Sj - Si), J += (|D| - J)/16 */
	int64_t transit = now_us - sent_us;
	if (u->have_transit) {
		int64_t d = transit - u->prev_transit_us;
		if (d < 0)
			d = -d;
		u->jitter_s += ((double)d / 1e6 - u->jitter_s) / 16.0;
	}
	u->prev_transit_us = transit;
	u->have_transit = true;
	if (!u->have_ck || now_us - u->ck_us >= UDPSTATS_SETTLE_US ||
	    now_us < u->ck_us) {
		if (u->have_ck) {
			u->ck[0] = u->ck[1];
		} else {
			u->ck[0].mark = 0;
			u->ck[0].got = 0;
		}
		u->ck[1].mark = u->highest;
		u->ck[1].got = u->received;
		u->ck_us = now_us;
		u->have_ck = true;
	}
	return kind;
}

uint64_t udpstats_lost(const struct udpstats *u)
{
	return u->highest > u->received ? u->highest - u->received : 0;
}

uint64_t udpstats_settled_lost(const struct udpstats *u)
{
	if (!u->have_ck)
		return 0;
	return u->ck[0].mark > u->ck[0].got ? u->ck[0].mark - u->ck[0].got : 0;
}

uint64_t udpstats_interval_lost(uint64_t settled, uint64_t *reported,
				uint64_t packets)
{
	uint64_t l = settled > *reported ? settled - *reported : 0;

	if (l > packets)
		l = packets;
	*reported += l;
	return l;
}

double udpstats_loss_percent(uint64_t lost, uint64_t expected)
{
	if (!expected)
		return 0;
	double p = 100.0 * (double)lost / (double)expected;
	return p > 100 ? 100 : p;
}
