// SPDX-License-Identifier: MIT
/* wake.c - stepwise wake-up times for timed releases (see wake.h). */
#include "linklab/base/wake.h"

int64_t wake_at(const struct wake_lead *lead, int64_t due, int64_t now, bool *last)
{
	int64_t rem = due - now, step;

	*last = false;
	if (due == INT64_MAX)
		return INT64_MAX;
	if (rem <= lead->ns)
		return now;
	if (rem - lead->ns <= WAKE_LAST_NS) {
		*last = true;
		return due - lead->ns;
	}
	/* far: sleep 3/4 of what is left, at least down to the last step */
	step = rem / 4;
	if (step < WAKE_LAST_NS)
		step = WAKE_LAST_NS;
	return due - step;
}

void wake_lead_track(struct wake_lead *lead, int64_t late)
{
	if (late < 0)
		late = 0;
	if (late > 1000000)
		return;
	lead->ns += (late - lead->ns) / 8;
	if (lead->ns > WAKE_LEAD_MAX_NS)
		lead->ns = WAKE_LEAD_MAX_NS;
}
