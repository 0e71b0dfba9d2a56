/* SPDX-License-Identifier: MIT */
/* cmd_sysctl.c - `linklab sysctl`: the TCP sysctls of both peers, shown, set
 * (journalled) and restored. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/peer/hosttune.h"
#include "linklab/peer/peerset.h"

/* Each NAME=VALUE of sets checked against what each side's kernel has (the
 * sysctl there, the congestion control available) before anything is
 * written: every problem said, naming the side; how many. */
static int precheck(struct peerset *ps, unsigned sides, const char *const *sets,
		    int nsets)
{
	struct ll_err err = { 0 };
	int i, k, nbad = 0;

	for (i = 0; i < 2; i++) {
		struct peer *p = i ? &ps->b : &ps->a;
		struct sysctl_state s;

		if (!(sides & (i ? CMD_SIDE_B : CMD_SIDE_A)) || !p->ops->tune || !nsets)
			continue;
		if (p->ops->tune->sysctl_get(p, &s, &err) < 0) {
			fprintf(stderr, "linklab sysctl: %s: %s\n", p->label, err.msg);
			nbad++;
			continue;
		}
		for (k = 0; k < nsets; k++) {
			char name[64], val[64];
			const char *eq = strchr(sets[k], '=');
			int idx;

			snprintf(name, sizeof(name), "%.*s", (int)(eq - sets[k]), sets[k]);
			idx = hosttune_sysctl_index(name);
			if (hosttune_sysctl_check(idx, eq + 1, val, sizeof(val), &err) < 0 ||
			    hosttune_sysctl_precheck(&s, idx, val, &err) < 0) {
				fprintf(stderr, "linklab sysctl: %s: '%s': %s\n", p->label,
					sets[k], err.msg);
				nbad++;
			}
		}
	}
	return nbad;
}

int cmd_sysctl(int argc, char **argv)
{
	struct cmd_common c;
	struct peerset ps;
	struct ll_err err = { 0 };
	const char *sets[16];
	int nsets = 0, nbad = 0, i, k, rc, ret = 0;
	bool restore = false;
	unsigned sides;

	memset(&c, 0, sizeof(c));
	for (i = 1; i < argc; i++) {
		rc = cmd_common_opt(&c, argc, argv, &i, &err);
		if (rc < 0)
			return cmd_fail("sysctl", &err);
		if (rc > 0)
			continue;
		if (!strcmp(argv[i], "--restore")) {
			restore = true;
		} else if (strchr(argv[i], '=') && nsets < 16) {
			char name[64], val[64];
			const char *eq = strchr(argv[i], '=');

			snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[i]), argv[i]);
			if (hosttune_sysctl_check(hosttune_sysctl_index(name), eq + 1, val, sizeof(val),
					      &err) < 0) {
				/* every problem at once, each naming its argument */
				fprintf(stderr, "linklab sysctl: '%s': %s\n", argv[i], err.msg);
				nbad++;
				continue;
			}
			sets[nsets++] = argv[i];
		} else {
			fprintf(stderr, "linklab sysctl: unexpected argument '%s' (NAME=VALUE, --restore)\n",
				argv[i]);
			return 2;
		}
	}
	if (nbad) {
		fprintf(stderr, "linklab sysctl: nothing was changed\n");
		return 2;
	}
	if (c.help) {
		printf("usage: linklab sysctl [--peer HOST] [--local|--remote] [NAME=VALUE]... [--restore]\n"
		       "NAME: net.core.rmem_max net.core.wmem_max net.ipv4.tcp_rmem net.ipv4.tcp_wmem\n"
		       "      net.ipv4.tcp_adv_win_scale net.ipv4.tcp_congestion_control (or the last part)\n"
		       "Each value is checked on both peers first (tcp_congestion_control against\n"
		       "the kernel's tcp_available_congestion_control): a problem changes nothing.\n"
		       "Originals are journalled on each peer and put back by --restore.\n");
		return 0;
	}
	if (peerset_open(&ps, &c.po, &err) < 0)
		return cmd_fail("sysctl", &err);
	sides = cmd_sides(&c, &ps, &err);
	if (!sides) {
		peerset_close(&ps);
		return cmd_fail("sysctl", &err);
	}
	if (precheck(&ps, sides, sets, nsets)) {
		fprintf(stderr, "linklab sysctl: nothing was changed\n");
		peerset_close(&ps);
		return 2;
	}
	for (i = 0; i < 2; i++) {
		struct peer *p = i ? &ps.b : &ps.a;
		struct sysctl_state s;

		if (!(sides & (i ? CMD_SIDE_B : CMD_SIDE_A)))
			continue;
		if (!p->ops->tune) {
			fprintf(stderr, "linklab sysctl: %s: not supported\n", p->label);
			ret = 1;
			continue;
		}
		rc = restore ? p->ops->tune->tune_restore(p, &err) : 0;
		for (k = 0; rc == 0 && k < nsets; k++) {
			char name[64];
			const char *eq = strchr(sets[k], '=');

			snprintf(name, sizeof(name), "%.*s", (int)(eq - sets[k]), sets[k]);
			rc = p->ops->tune->sysctl_set(p, name, eq + 1, &err);
		}
		if (rc == 0)
			rc = p->ops->tune->sysctl_get(p, &s, &err);
		if (rc < 0) {
			fprintf(stderr, "linklab sysctl: %s: %s\n", p->label, err.msg);
			ret = cmd_status(&err);
			continue;
		}
		printf("%s%s\n", p->label, restore ? " (originals restored)" : "");
		for (k = 0; k < HOSTTUNE_NSYSCTL; k++)
			printf("  %-32s %s\n", hosttune_sysctl_name(k), s.v[k][0] ? s.v[k] : "(not on this kernel)");
	}
	peerset_close(&ps);
	return ret;
}
