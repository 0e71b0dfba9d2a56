/* SPDX-License-Identifier: MIT */
/* wake.h - when to wake for a timed release (CLOCK_MONOTONIC, ns).
 *
 * A sleep on an idle (virtual) CPU comes back late by an amount that grows
 * with its length: on the 2-core lab VM the median/max lateness was 35/180 us
 * for 1 ms sleeps and 280/1600 us for 50 ms ones. A far deadline is therefore
 * approached in steps: each sleep covers at most 3/4 of what is left, until a
 * last sleep of at most WAKE_LAST_NS that ends `lead` before the deadline;
 * from there the caller spins (or acts at once). The lead is the moving
 * average of how late the last steps came (struct wake_lead).
 */
#ifndef LINKLAB_WAKE_H
#define LINKLAB_WAKE_H

#include <stdbool.h>
#include <stdint.h>

#define WAKE_LAST_NS 1000000            /* longest last step */
#define WAKE_LEAD_MAX_NS 300000         /* cap of the lead */

struct wake_lead {
	int64_t ns;                     /* 0..WAKE_LEAD_MAX_NS */
};

/* The time to wake for deadline `due` at time `now`, waking lead->ns early on
 * the last step. Returns INT64_MAX for due == INT64_MAX (nothing to wait
 * for), and `now` when due - lead has come (spin or act now). *last is set
 * to whether the sleep to the returned time is a last step (its lateness is
 * what wake_lead_track wants). */
int64_t wake_at(const struct wake_lead *lead, int64_t due, int64_t now, bool *last);

/* Feed how late (ns, may be negative) a last-step wake-up came into the lead.
 * Lateness over 1 ms is a preemption, not the usual wake-up cost: ignored. */
void wake_lead_track(struct wake_lead *lead, int64_t late);

#endif
