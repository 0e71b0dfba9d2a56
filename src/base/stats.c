/* SPDX-License-Identifier: MIT */
/* stats.c - trimmed mean, percentiles, Wilson interval, stability (stats.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/base/stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A sorted copy of x (caller frees), NULL on ENOMEM. */
static double *sorted_copy(const double *x, int n)
{
	double *s = malloc((size_t)n * sizeof(*s));

	if (!s)
		return NULL;
	memcpy(s, x, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return s;
}

double stats_trimmed_mean(const double *x, int n, double trim)
{
	double sum = 0;
	double *s;
	int keep;

	if (n <= 0)
		return 0;
	if (trim < 0)
		trim = 0;
	if (trim >= 1)
		trim = 0.99;
	s = sorted_copy(x, n);
	if (!s)
		return -1;
	keep = n - (int)floor(trim * n);
	if (keep < 1)
		keep = 1;
	for (int i = 0; i < keep; i++)
		sum += s[i];
	free(s);
	return sum / keep;
}

double stats_percentile(const double *x, int n, double p)
{
	double *s, h, v;
	int lo;

	if (n <= 0)
		return 0;
	s = sorted_copy(x, n);
	if (!s)
		return 0;
	if (p < 0)
		p = 0;
	if (p > 100)
		p = 100;
	h = (n - 1) * p / 100.0;
	lo = (int)floor(h);
	v = lo + 1 < n ? s[lo] + (h - lo) * (s[lo + 1] - s[lo]) : s[n - 1];
	free(s);
	return v;
}

void stats_wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi)
{
	if (n == 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	double nn = (double)n, ph = (double)k / nn, z2 = z * z;
	double den = 1 + z2 / nn;
	double mid = (ph + z2 / (2 * nn)) / den;
	double half = z * sqrt(ph * (1 - ph) / nn + z2 / (4 * nn * nn)) / den;

	*lo = k == 0 || mid - half < 0 ? 0 : mid - half;
	*hi = k == n || mid + half > 1 ? 1 : mid + half;
}

void stats_mean_sd(const double *x, int n, double *mean, double *sd)
{
	double s = 0, ss = 0;

	*mean = *sd = 0;
	if (n <= 0)
		return;
	for (int i = 0; i < n; i++)
		s += x[i];
	*mean = s / n;
	for (int i = 0; i < n; i++)
		ss += (x[i] - *mean) * (x[i] - *mean);
	*sd = sqrt(ss / n);
}

bool stats_stable(const double *x, int n, int window, double tol)
{
	double mean, sd;

	if (window < 2 || n < window)
		return false;
	stats_mean_sd(x + n - window, window, &mean, &sd);
	return mean > 0 && sd <= tol * mean;
}
