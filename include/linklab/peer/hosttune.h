/* SPDX-License-Identifier: MIT */
/* hosttune.h - NIC offloads (TSO/GSO/GRO) and TCP sysctls of a peer, shown,
 * set and restored. The seeds switch offloads off because they distort
 * tbf/netem (a 64 KB GSO super-packet leaves as one dequeue), and tune the
 * socket buffers to lift window-limited throughput (seeds 002/004).
 * Local side: ethtool ioctls (linux/ethtool.h ETHTOOL_[GS]{TSO,GSO,GRO}) and
 * /proc/sys; the remote side runs `ethtool -k/-K` and reads/writes /proc/sys
 * over SSH (peer_remote.c). Before the first change of a setting its
 * original is journalled (one line per setting, the first original kept):
 * "offload DEV tso|gso|gro on|off" and "sysctl NAME VALUE" in
 * /run/linklab/tune-<netns inode>.txt; restore puts every line back and
 * removes the file. Engines: 0 or negative errno, err filled. */
#ifndef LINKLAB_HOSTTUNE_H
#define LINKLAB_HOSTTUNE_H

#include <stddef.h>
#include <stdint.h>

#include "linklab/base/err.h"

enum hosttune_offload { HOSTTUNE_TSO, HOSTTUNE_GSO, HOSTTUNE_GRO, HOSTTUNE_NOFF };

/* 1 = on, 0 = off, -1 = unknown / leave as is. */
struct offload_state {
	int8_t v[HOSTTUNE_NOFF];
};

#define HOSTTUNE_NSYSCTL 6

/* Values as /proc/sys prints them (tabs/spaces collapsed to one space);
 * "" = not present on that kernel. cc_available, cc_allowed: that kernel's
 * net.ipv4.tcp_available_congestion_control and
 * tcp_allowed_congestion_control ("" = could not be read); other_netns: 1
 * when the peer runs in a network namespace other than the host's (the
 * kernel then sets only an allowed congestion control), 0 in the host's,
 * -1 unknown (hosttune_other_netns). */
struct sysctl_state {
	char v[HOSTTUNE_NSYSCTL][64];
	char cc_available[256];
	char cc_allowed[256];
	int other_netns;
};

/* "tso", "gso", "gro" (i < HOSTTUNE_NOFF), else NULL. */
const char *hosttune_offload_name(int i);
/* Index of "tso"/"gso"/"gro", -1 if unknown. */
int hosttune_offload_index(const char *name);

/* "net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_rmem",
 * "net.ipv4.tcp_wmem", "net.ipv4.tcp_adv_win_scale",
 * "net.ipv4.tcp_congestion_control" (i < HOSTTUNE_NSYSCTL), else NULL. */
const char *hosttune_sysctl_name(int i);
/* Index of a full name or its last part ("tcp_rmem"), -1 if not one of
 * the six. */
int hosttune_sysctl_index(const char *name);

/* Check and normalise a value for sysctl i into out (len bytes): rmem_max/
 * wmem_max one integer 1..2^31-1 (bytes); tcp_rmem/tcp_wmem three integers
 * "min default max" (spaces or commas), min <= default <= max (bytes,
 * tcp(7)); tcp_adv_win_scale -31..31 (tcp(7)); tcp_congestion_control a
 * name of [a-z0-9_], 1..15 characters. -EINVAL with the rule in err. */
int hosttune_sysctl_check(int i, const char *value, char *out, size_t len,
		      struct ll_err *err);

/* A sysctl the kernel shows only in the initial network namespace
 * (net_core_table, registered for init_net alone). */
#define NETNS_INIT_ONLY "/proc/sys/net/core/netdev_max_backlog"

/* sysctl_state.other_netns from whether /proc/sys/net/core exists and
 * whether NETNS_INIT_ONLY does: -1 without the first, else 1 without the
 * second, else 0. */
int hosttune_other_netns(int have_core, int have_init_only);

/* Whether value (checked by hosttune_sysctl_check) can be set on the
 * kernel whose sysctls s holds, before anything is written: -ENOENT when
 * sysctl i is not on that kernel; for tcp_congestion_control -EINVAL when
 * value is not in s->cc_available, -EPERM when s->other_netns and value is
 * not in s->cc_allowed (an empty list is not checked); each with the value
 * and what is accepted in err; else 0. */
int hosttune_sysctl_precheck(const struct sysctl_state *s, int i, const char *value,
			     struct ll_err *err);

/* Read `ethtool -k` output into o (lines "tcp-segmentation-offload: on",
 * "generic-segmentation-offload: off [fixed]", "generic-receive-offload:
 * on"). 0, or -EINVAL if none of the three is there. */
int hosttune_parse_ethtool_k(const char *text, struct offload_state *o,
			 struct ll_err *err);

/* One line of a tune journal: kind 'o' (offload: dev, feature index, value
 * in *on) or 's' (sysctl: index, value text). 0, or -EINVAL for a line that
 * is not one (skipped by restore). */
struct hosttune_jline {
	char kind;
	char dev[16];
	int idx;
	int on;
	char value[64];
};
int hosttune_parse_jline(const char *line, struct hosttune_jline *out);

/* --- this host --- */
int hosttune_local_offload_get(const char *dev, struct offload_state *o,
			   struct ll_err *err);
/* Set the features of want that are not -1 (journalling each original
 * first); reads back and fails with -EIO if the driver kept another value
 * ("[fixed]" features). */
int hosttune_local_offload_set(const char *dev, const struct offload_state *want,
			   struct ll_err *err);
int hosttune_local_sysctl_get(struct sysctl_state *s, struct ll_err *err);
/* name: full or short; value checked by hosttune_sysctl_check; journalled,
 * written, read back. */
int hosttune_local_sysctl_set(const char *name, const char *value,
			  struct ll_err *err);
/* Put every journalled original back, remove the journal (no-op without
 * one). */
int hosttune_local_restore(struct ll_err *err);

/* The same as peer ops of the local peer (peer_local.c's table). */
struct peer;
int hosttune_op_offload_get(struct peer *p, const char *dev, struct offload_state *o,
			struct ll_err *err);
int hosttune_op_offload_set(struct peer *p, const char *dev,
			const struct offload_state *want, struct ll_err *err);
int hosttune_op_sysctl_get(struct peer *p, struct sysctl_state *s, struct ll_err *err);
int hosttune_op_sysctl_set(struct peer *p, const char *name, const char *value,
		       struct ll_err *err);
int hosttune_op_restore(struct peer *p, struct ll_err *err);

#endif
