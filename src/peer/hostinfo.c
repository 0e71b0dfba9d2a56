/* SPDX-License-Identifier: MIT */
/* hostinfo.c - this host's kernel HZ from its config (hostinfo.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "linklab/peer/hostinfo.h"
#include "linklab/model/theory.h"

#define HZ_DEFAULT 250

unsigned hostinfo_hz_from_config(FILE *f)
{
	char line[256];

	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "CONFIG_HZ=", 10) == 0)
			return (unsigned)strtoul(line + 10, NULL, 10);
	return 0;
}

unsigned hostinfo_kernel_hz(void)
{
	static unsigned cached;
	struct utsname u;
	char path[128 + sizeof(u.release)];
	unsigned hz = 0;
	FILE *f;

	if (cached)
		return cached;
	if (uname(&u) == 0) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		f = fopen(path, "re");
		if (f) {
			hz = hostinfo_hz_from_config(f);
			fclose(f);
		}
	}
	if (!hz) {
		f = fopen("/proc/config.gz", "re");
		if (f) {
			fclose(f);
			f = popen("gzip -dc /proc/config.gz 2>/dev/null", "r");
			if (f) {
				hz = hostinfo_hz_from_config(f);
				pclose(f);
			}
		}
	}
	if (hz < 24 || hz > 10000)
		hz = HZ_DEFAULT;
	cached = hz;
	return hz;
}

/* Read up to n integers from a /proc/sys file; how many were read. */
static int hostinfo_read_ints(const char *path, long long *v, int n)
{
	FILE *f = fopen(path, "r");
	int k = 0;

	if (!f)
		return 0;
	while (k < n && fscanf(f, "%lld", &v[k]) == 1)
		k++;
	fclose(f);
	return k;
}

uint64_t hostinfo_local_window(void)
{
	long long rmem[3], scale[1];

	if (hostinfo_read_ints("/proc/sys/net/ipv4/tcp_rmem", rmem, 3) != 3 || rmem[2] < 0)
		return 0;
	if (hostinfo_read_ints("/proc/sys/net/ipv4/tcp_adv_win_scale", scale, 1) != 1)
		scale[0] = 1;
	return theory_window_from_space((uint64_t)rmem[2], (int)scale[0]);
}
