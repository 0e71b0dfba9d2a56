/* SPDX-License-Identifier: MIT */
/* hostinfo.c - this host's kernel HZ from its config (hostinfo.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "linklab/peer/hostinfo.h"

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
