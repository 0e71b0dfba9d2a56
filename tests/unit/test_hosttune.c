/* SPDX-License-Identifier: MIT */
/* test_hosttune.c - offload/sysctl names, value rules, `ethtool -k` and
 * journal line parsing; the local sysctl path in a private network namespace
 * (root only: skipped otherwise) with its journal and restore; the kernel's
 * HZ read from a config text and from this host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixture.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linklab/peer/hostinfo.h"
#include "linklab/peer/hosttune.h"

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(hosttune_offload_index("tso"), HOSTTUNE_TSO);
	assert_int_equal(hosttune_offload_index("gro"), HOSTTUNE_GRO);
	assert_int_equal(hosttune_offload_index("lro"), -1);
	assert_string_equal(hosttune_sysctl_name(2), "net.ipv4.tcp_rmem");
	assert_int_equal(hosttune_sysctl_index("net.ipv4.tcp_wmem"), 3);
	assert_int_equal(hosttune_sysctl_index("tcp_congestion_control"), 5);
	assert_int_equal(hosttune_sysctl_index("rmem_max"), 0);
	assert_int_equal(hosttune_sysctl_index("net.ipv4.tcp_mem"), -1);
	assert_null(hosttune_sysctl_name(6));
}

static void test_check(void **state)
{
	char v[64];
	struct ll_err err = {0};

	(void)state;
	assert_int_equal(hosttune_sysctl_check(2, "4096,65536, 1000000", v, sizeof(v), &err), 0);
	assert_string_equal(v, "4096 65536 1000000");
	assert_int_equal(hosttune_sysctl_check(2, "4096 65536", v, sizeof(v), &err), -EINVAL);
	assert_non_null(strstr(err.msg, "min default max"));
	assert_int_equal(hosttune_sysctl_check(3, "9000 100 200", v, sizeof(v), &err), -EINVAL);
	assert_int_equal(hosttune_sysctl_check(0, "8388608", v, sizeof(v), &err), 0);
	assert_string_equal(v, "8388608");
	assert_int_equal(hosttune_sysctl_check(0, "0", v, sizeof(v), &err), -EINVAL);
	assert_int_equal(hosttune_sysctl_check(0, "12;reboot", v, sizeof(v), &err), -EINVAL);
	assert_int_equal(hosttune_sysctl_check(4, "-2", v, sizeof(v), &err), 0);
	assert_string_equal(v, "-2");
	assert_int_equal(hosttune_sysctl_check(4, "32", v, sizeof(v), &err), -EINVAL);
	assert_int_equal(hosttune_sysctl_check(5, "cubic", v, sizeof(v), &err), 0);
	assert_int_equal(hosttune_sysctl_check(5, "$(id)", v, sizeof(v), &err), -EINVAL);
	assert_int_equal(hosttune_sysctl_check(5, "", v, sizeof(v), &err), -EINVAL);
	assert_int_equal(hosttune_sysctl_check(-1, "1", v, sizeof(v), &err), -EINVAL);
	assert_non_null(strstr(err.msg, "net.ipv4.tcp_congestion_control"));
}

/* A value checked against what the kernel has before anything is written:
 * a sysctl the kernel lacks, a congestion control not available, one not
 * allowed outside the host's network namespace. */
static void test_precheck(void **state)
{
	struct sysctl_state s;
	struct ll_err err = {0};
	int i;

	(void)state;
	memset(&s, 0, sizeof(s));
	for (i = 0; i < HOSTTUNE_NSYSCTL; i++)
		snprintf(s.v[i], sizeof(s.v[i]), "1");
	snprintf(s.cc_available, sizeof(s.cc_available), "reno bbr cubic");
	snprintf(s.cc_allowed, sizeof(s.cc_allowed), "reno bbr");
	s.other_netns = 0;
	assert_int_equal(hosttune_sysctl_precheck(&s, 5, "cubic", &err), 0);
	assert_int_equal(hosttune_sysctl_precheck(&s, 5, "bbr", &err), 0);
	assert_int_equal(hosttune_sysctl_precheck(&s, 5, "vegas", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "net.ipv4.tcp_congestion_control: \"vegas\" is not in "
			       "this kernel's tcp_available_congestion_control (reno bbr cubic)"));
	assert_non_null(strstr(err.msg, "modprobe tcp_vegas"));
	/* a word, not a part of one */
	assert_int_equal(hosttune_sysctl_precheck(&s, 5, "bb", &err), -EINVAL);
	assert_int_equal(hosttune_sysctl_precheck(&s, 5, "cubi", &err), -EINVAL);
	s.other_netns = 1;
	assert_int_equal(hosttune_sysctl_precheck(&s, 5, "reno", &err), 0);
	assert_int_equal(hosttune_sysctl_precheck(&s, 5, "cubic", &err), -EPERM);
	assert_non_null(strstr(err.msg, "\"cubic\" is not in tcp_allowed_congestion_control (reno bbr)"));
	/* lists that could not be read are not checked */
	s.cc_allowed[0] = '\0';
	assert_int_equal(hosttune_sysctl_precheck(&s, 5, "cubic", &err), 0);
	s.cc_available[0] = '\0';
	assert_int_equal(hosttune_sysctl_precheck(&s, 5, "vegas", &err), 0);
	s.v[0][0] = '\0';
	assert_int_equal(hosttune_sysctl_precheck(&s, 0, "4096", &err), -ENOENT);
	assert_non_null(strstr(err.msg, "net.core.rmem_max: not on this kernel"));
	assert_int_equal(hosttune_sysctl_precheck(&s, 4, "2", &err), 0);
	assert_int_equal(hosttune_other_netns(0, 0), -1);
	assert_int_equal(hosttune_other_netns(1, 0), 1);
	assert_int_equal(hosttune_other_netns(1, 1), 0);
}

static void test_ethtool_k(void **state)
{
	struct offload_state o;
	struct ll_err err = {0};
	const char *txt =
		"Features for veth-b:\n"
		"rx-checksumming: on\n"
		"tcp-segmentation-offload: on\n"
		"\ttx-tcp-segmentation: on\n"
		"generic-segmentation-offload: off [fixed]\n"
		"generic-receive-offload: on\n";

	(void)state;
	assert_int_equal(hosttune_parse_ethtool_k(txt, &o, &err), 0);
	assert_int_equal(o.v[HOSTTUNE_TSO], 1);
	assert_int_equal(o.v[HOSTTUNE_GSO], 0);
	assert_int_equal(o.v[HOSTTUNE_GRO], 1);
	assert_int_equal(hosttune_parse_ethtool_k("tcp-segmentation-offload: off\n", &o, &err), 0);
	assert_int_equal(o.v[HOSTTUNE_TSO], 0);
	assert_int_equal(o.v[HOSTTUNE_GRO], -1);
	assert_int_equal(hosttune_parse_ethtool_k("Cannot get device features\n", &o, &err), -EINVAL);
}

static void test_jline(void **state)
{
	struct hosttune_jline j;

	(void)state;
	assert_int_equal(hosttune_parse_jline("offload veth-b gso off\n", &j), 0);
	assert_int_equal(j.kind, 'o');
	assert_string_equal(j.dev, "veth-b");
	assert_int_equal(j.idx, HOSTTUNE_GSO);
	assert_int_equal(j.on, 0);
	assert_int_equal(hosttune_parse_jline("sysctl net.ipv4.tcp_congestion_control bbr\n", &j), 0);
	assert_int_equal(j.kind, 's');
	assert_int_equal(j.idx, 5);
	assert_string_equal(j.value, "bbr");
	assert_int_equal(hosttune_parse_jline("sysctl net.ipv4.tcp_rmem 4096 131072 6291456", &j), 0);
	assert_string_equal(j.value, "4096 131072 6291456");
	assert_int_equal(hosttune_parse_jline("sysctl net.ipv4.tcp_rmem", &j), -EINVAL);
	assert_int_equal(hosttune_parse_jline("offload veth-b lro off", &j), -EINVAL);
	assert_int_equal(hosttune_parse_jline("garbage", &j), -EINVAL);
}

static char rundir[64];

/* In a network namespace of its own (NETNS_CASE): set two sysctls, the journal keeps the first
 * original, restore puts both back and removes it. */
static void test_local_set_restore(void **state)
{
	struct sysctl_state s0, s1, s2;
	struct ll_err err = {0};
	char path[128];

	(void)state;
	snprintf(rundir, sizeof(rundir), "/tmp/ll-tune-XXXXXX");
	assert_non_null(mkdtemp(rundir));
	setenv("LINKLAB_RUN_DIR", rundir, 1);
	assert_int_equal(hosttune_local_sysctl_get(&s0, &err), 0);
	assert_true(s0.v[2][0] != '\0');
	assert_int_equal(hosttune_local_sysctl_set("tcp_rmem", "4096 65536 1000000", &err), 0);
	assert_int_equal(hosttune_local_sysctl_set("tcp_rmem", "4096 70000 1000000", &err), 0);
	assert_int_equal(hosttune_local_sysctl_set("tcp_adv_win_scale", "2", &err), 0);
	assert_int_equal(hosttune_local_sysctl_set("tcp_congestion_control", "reno", &err), 0);
	assert_int_equal(hosttune_local_sysctl_get(&s1, &err), 0);
	assert_string_equal(s1.v[2], "4096 70000 1000000");
	assert_string_equal(s1.v[4], "2");
	assert_string_equal(s1.v[5], "reno");
	assert_int_equal(hosttune_local_sysctl_set("tcp_rmem", "1 2", &err), -EINVAL);
	assert_int_equal(hosttune_local_offload_get("lo", &(struct offload_state){0}, &err), 0);
	assert_int_equal(hosttune_local_offload_get("nosuch0", &(struct offload_state){0}, &err),
			 -ENODEV);
	assert_int_equal(hosttune_local_restore(&err), 0);
	assert_int_equal(hosttune_local_sysctl_get(&s2, &err), 0);
	assert_string_equal(s2.v[2], s0.v[2]);   /* the first original */
	assert_string_equal(s2.v[4], s0.v[4]);
	assert_string_equal(s2.v[5], s0.v[5]);
	snprintf(path, sizeof(path), "%s", rundir);
	assert_int_equal(rmdir(path), 0);        /* journal removed: dir empty */
}

/* CONFIG_HZ from a config text; this host's HZ is one of the kernel's
 * choices (kernel/Kconfig.hz) and cached. */
static void test_kernel_hz(void **state)
{
	static char cfg[] = "# CONFIG_HZ_100 is not set\nCONFIG_HZ_1000=y\nCONFIG_HZ=1000\n";
	static char none[] = "CONFIG_HZ_PERIODIC=y\n";
	FILE *f;
	unsigned hz;

	(void)state;
	f = fmemopen(cfg, strlen(cfg), "r");
	assert_non_null(f);
	assert_int_equal(hostinfo_hz_from_config(f), 1000);
	fclose(f);
	f = fmemopen(none, strlen(none), "r");
	assert_non_null(f);
	assert_int_equal(hostinfo_hz_from_config(f), 0);
	fclose(f);
	hz = hostinfo_kernel_hz();
	assert_true(hz == 100 || hz == 250 || hz == 300 || hz == 1000);
	assert_int_equal(hostinfo_kernel_hz(), hz);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_precheck),
		cmocka_unit_test(test_ethtool_k),
		cmocka_unit_test(test_jline),
		cmocka_unit_test(test_kernel_hz),
		NETNS_CASE(test_local_set_restore, NULL),
	};
	return cmocka_run_group_tests_name("hosttune", tests, NULL, NULL);
}
