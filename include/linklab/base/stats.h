/* SPDX-License-Identifier: MIT */
/* stats.h - small sample statistics for latency and loss figures: trimmed
 * mean, percentiles, a binomial confidence interval and a stability test.
 * Pure functions; never print, never exit. */
#ifndef LINKLAB_STATS_H
#define LINKLAB_STATS_H

#include <stdbool.h>
#include <stdint.h>

/* Mean of x[0..n) after dropping the largest `trim` fraction (0 <= trim <
 * 1) of the values: trim 0.05 is the "95 % trimmed mean" of
 * draft-ietf-ippm-responsiveness-09 section 4.4 (the top 5 % go). x is not
 * changed. Returns 0 for n <= 0; -1 on allocation failure. */
double stats_trimmed_mean(const double *x, int n, double trim);

/* The p-th percentile (0..100) of x[0..n) by linear interpolation between
 * closest ranks (the "R-7" / numpy default). x is not changed. 0 for n <= 0. */
double stats_percentile(const double *x, int n, double p);

/* Wilson score interval of k successes in n trials at the two-sided
 * confidence given by z (2.5758 for 99 %, 1.96 for 95 %): *lo and *hi are
 * fractions in 0..1. n = 0 gives 0..1. */
void stats_wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi);

/* The draft's stability rule (section 4.1): the last `window` values of
 * x[0..n) (moving averages, one per interval) have a standard deviation
 * within `tol` (0.05 = 5 %) of their mean. False when n < window. */
bool stats_stable(const double *x, int n, int window, double tol);

/* Mean and population standard deviation of x[0..n) (0, 0 for n <= 0). */
void stats_mean_sd(const double *x, int n, double *mean, double *sd);

#endif
