/* SPDX-License-Identifier: MIT */
/* hostinfo.h - facts about this host's kernel that the model takes as
 * parameters (the model reads no host state): the tick rate HZ, which sizes
 * tbf's minimum burst (impair_plan: burst >= rate/HZ, man tc-tbf). */
#ifndef LINKLAB_HOSTINFO_H
#define LINKLAB_HOSTINFO_H

#include <stdint.h>
#include <stdio.h>

/* CONFIG_HZ from a kernel config text (one "CONFIG_HZ=N" line among
 * others); 0 when the stream has none. */
unsigned hostinfo_hz_from_config(FILE *f);

/* This host's kernel HZ: CONFIG_HZ of /boot/config-$(uname -r), else of
 * /proc/config.gz (through gzip -dc); 250 (the x86 default) when neither
 * says or the value is outside 24..10000. Read once, then cached. */
unsigned hostinfo_kernel_hz(void);

/* The effective maximum receive window of one TCP socket on this host,
 * bytes: tcp_rmem[2] through theory_window_from_space() with
 * tcp_adv_win_scale (1 when unreadable). 0 if tcp_rmem cannot be read. */
uint64_t hostinfo_local_window(void);

#endif
