/* SPDX-License-Identifier: MIT */
/* test_peer_local.c - the local (netlink) peer, the journal and the read-back
 * folding. The netlink cases need root: each runs in a forked child in a network
 * namespace of its own (NETNS_CASE, fixture.h) with a veth pair llA0/llA1,
 * so no host interface is touched and no case sees another's qdiscs.
 * Without root those cases skip with the reason printed. */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "fixture.h"

#include <cjson/cJSON.h>
#include <linux/pkt_sched.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "linklab/model/impair.h"
#include "linklab/peer/journal.h"
#include "linklab/netlink/nlqdisc.h"
#include "linklab/peer/peer.h"
#include "linklab/peer/hostinfo.h"

static char rundir[] = "/tmp/linklab-A-test-XXXXXX";

static void rm_rundir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rundir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", rundir);
}

static int sh(const char *cmd)
{
	int rc = system(cmd);

	return rc == 0 ? 0 : -1;
}

/* the namespace of each netlink case (NETNS_CASE) */
#define VETH_SETUP "ip link add llA0 type veth peer name llA1 && ip link set lo up && " \
	"ip link set llA0 up && ip link set llA1 up && " \
	"ip addr add 10.9.0.1/24 dev llA0 && ip addr add 10.9.0.2/24 dev llA1"

static int group_setup(void **state)
{
	(void)state;
	if (!mkdtemp(rundir))
		return -1;
	setenv("LINKLAB_RUN_DIR", rundir, 1);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	rm_rundir();
	return 0;
}

static void set_dial(struct impair *d, const char *const *kv)
{
	struct ll_diag dg;

	memset(d, 0, sizeof(*d));
	ll_diag_clear(&dg);
	for (; kv[0]; kv += 2)
		assert_int_equal(impair_set(d, kv[0], kv[1], &dg), 0);
}

/* rate (bytes/s) and burst of the root qdisc according to `tc -j`. */
static int tc_json_root(const char *dev, char *kind, size_t klen,
			double *rate, double *burst)
{
	char cmd[128], buf[8192];
	cJSON *a, *it;
	size_t n;
	FILE *f;
	int rc = -1;

	snprintf(cmd, sizeof(cmd), "tc -j qdisc show dev %s", dev);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	pclose(f);
	a = cJSON_Parse(buf);
	cJSON_ArrayForEach(it, a) {
		cJSON *root = cJSON_GetObjectItem(it, "root");
		cJSON *k = cJSON_GetObjectItem(it, "kind");
		cJSON *o = cJSON_GetObjectItem(it, "options");

		if (!cJSON_IsTrue(root) || !cJSON_IsString(k))
			continue;
		snprintf(kind, klen, "%s", k->valuestring);
		*rate = *burst = 0;
		if (o && cJSON_GetObjectItem(o, "rate"))
			*rate = cJSON_GetObjectItem(o, "rate")->valuedouble;
		if (o && cJSON_GetObjectItem(o, "burst"))
			*burst = cJSON_GetObjectItem(o, "burst")->valuedouble;
		rc = 0;
	}
	cJSON_Delete(a);
	return rc;
}

static void test_apply_tbf_replace_clear(void **state)
{
	static const char *const r50[] = { "rate", "50mbit", NULL };
	static const char *const r20[] = { "rate", "20mbit", "latency", "20ms", NULL };
	struct peer p;
	struct impair d;
	struct qdisc_state st;
	struct journal_entry je;
	struct ll_err e = { 0 };
	uint64_t ns;
	char kind[32];
	double rate, burst;
	unsigned hz = hostinfo_kernel_hz();

	(void)state;
	assert_int_equal(peer_local_open(&p, &e), 0);
	assert_string_equal(p.ops->name, "local");
	assert_int_equal(p.ops->read_qdiscs(&p, "llA0", &st, &e), 0);
	assert_true(st.n >= 1);
	assert_string_equal(st.q[0].kind, "noqueue");

	set_dial(&d, r50);
	if (p.ops->apply(&p, "llA0", &d, &e) != 0)
		fail_msg("apply: %s", e.msg);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA0", &st, &e), 0);
	assert_string_equal(st.q[0].kind, "tbf");
	assert_int_equal(st.q[0].handle, 0x00010000);
	assert_true(st.q[0].rate == 50000000ULL);
	assert_int_equal(st.q[0].burst, 6250000 / hz);
	assert_int_equal(st.q[0].limit, 312500 + 6250000 / hz);
	/* the same state through iproute2's eyes */
	assert_int_equal(tc_json_root("llA0", kind, sizeof(kind), &rate, &burst), 0);
	assert_string_equal(kind, "tbf");
	assert_true(rate == 6250000.0);
	assert_true(burst == (double)st.q[0].burst);

	/* the journal holds the kernel's default */
	assert_int_equal(journal_netns(&ns, &e), 0);
	assert_int_equal(journal_lookup(ns, st.q[0].handle ? (int)if_nametoindex("llA0") : 0, &je, &e), 0);
	assert_string_equal(je.kind, "noqueue");
	assert_true(je.is_default);

	/* second dial: replace, no "File exists"; the first original stays */
	set_dial(&d, r20);
	if (p.ops->apply(&p, "llA0", &d, &e) != 0)
		fail_msg("second apply: %s", e.msg);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA0", &st, &e), 0);
	assert_true(st.q[0].rate == 20000000ULL);
	assert_int_equal(st.q[0].limit, 50000 + st.q[0].burst);
	assert_int_equal(journal_lookup(ns, (int)if_nametoindex("llA0"), &je, &e), 0);
	assert_string_equal(je.kind, "noqueue");

	/* clear: noqueue back, journal entry gone; clearing again is a no-op */
	if (p.ops->clear(&p, "llA0", &e) != 0)
		fail_msg("clear: %s", e.msg);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA0", &st, &e), 0);
	assert_string_equal(st.q[0].kind, "noqueue");
	assert_int_equal(journal_lookup(ns, (int)if_nametoindex("llA0"), &je, &e), -ENOENT);
	assert_int_equal(p.ops->clear(&p, "llA0", &e), 0);
	p.ops->close(&p);
}

/* clear --all after a "crash": a fresh peer restores both veth ends from the
 * journal alone, and drops the entry of an interface that is gone. */
static void test_clear_all(void **state)
{
	static const char *const r[] = { "rate", "5mbit", NULL };
	struct peer p, q;
	struct impair d;
	struct qdisc_state st;
	struct journal_entry gone, list[8];
	struct ll_err e = { 0 };
	int n;

	(void)state;
	assert_int_equal(peer_local_open(&p, &e), 0);
	set_dial(&d, r);
	assert_int_equal(p.ops->apply(&p, "llA0", &d, &e), 0);
	assert_int_equal(p.ops->apply(&p, "llA1", &d, &e), 0);
	p.ops->close(&p);               /* "crash": no clear */
	memset(&gone, 0, sizeof(gone));
	assert_int_equal(journal_netns(&gone.netns, &e), 0);
	gone.ifindex = 999;
	gone.is_default = true;
	snprintf(gone.kind, sizeof(gone.kind), "noqueue");
	assert_int_equal(journal_record(&gone, &e), 1);
	assert_int_equal(journal_list(list, 8, &n, &e), 0);
	assert_int_equal(n, 3);

	assert_int_equal(peer_local_open(&q, &e), 0);
	assert_non_null(q.ops->clear_all);
	if (q.ops->clear_all(&q, &e) != 0)
		fail_msg("clear_all: %s", e.msg);
	assert_int_equal(q.ops->read_qdiscs(&q, "llA0", &st, &e), 0);
	assert_string_equal(st.q[0].kind, "noqueue");
	assert_int_equal(q.ops->read_qdiscs(&q, "llA1", &st, &e), 0);
	assert_string_equal(st.q[0].kind, "noqueue");
	assert_int_equal(journal_list(list, 8, &n, &e), 0);
	assert_int_equal(n, 0);
	q.ops->close(&q);
}

static void test_netem_refused_cleanly(void **state)
{
	static const char *const net[] = { "delay", "100ms", "loss", "1%", NULL };
	static const char *const both[] = { "rate", "10mbit", "delay", "20ms", NULL };
	struct peer p;
	struct impair d;
	struct qdisc_state st;
	struct journal_entry je;
	struct ll_err e = { 0 };
	uint64_t ns;
	int rc;

	(void)state;
	assert_int_equal(peer_local_open(&p, &e), 0);
	assert_int_equal(journal_netns(&ns, &e), 0);
	set_dial(&d, net);
	rc = p.ops->apply(&p, "llA0", &d, &e);
	if (rc == 0) {
		/* a kernel with netem: check the read-back, then clear */
		printf("note: this kernel has netem; checking read-back instead\n");
		assert_int_equal(p.ops->read_qdiscs(&p, "llA0", &st, &e), 0);
		assert_string_equal(st.q[0].kind, "netem");
		assert_true(st.q[0].delay == 100000000LL);
		assert_int_equal(st.q[0].loss, 42949673U);
		assert_int_equal(p.ops->clear(&p, "llA0", &e), 0);
		p.ops->close(&p);
		return;
	}
	assert_int_equal(rc, -ENOTSUP);
	assert_non_null(strstr(e.msg, "modprobe sch_netem"));
	assert_int_equal(p.ops->read_qdiscs(&p, "llA0", &st, &e), 0);
	assert_string_equal(st.q[0].kind, "noqueue");
	assert_int_equal(journal_lookup(ns, (int)if_nametoindex("llA0"), &je, &e), -ENOENT);
	/* tbf + netem: refused before the tbf step, interface untouched */
	set_dial(&d, both);
	assert_int_equal(p.ops->apply(&p, "llA0", &d, &e), -ENOTSUP);
	/* the probe answered: no tbf was installed and rolled back */
	assert_null(strstr(e.msg, "restored"));
	assert_int_equal(p.ops->read_qdiscs(&p, "llA0", &st, &e), 0);
	assert_string_equal(st.q[0].kind, "noqueue");
	assert_int_equal(st.n, 1);
	p.ops->close(&p);
}

/* A non-default original (someone's own tbf at 5:) is replayed on clear. */
static void test_replay_original(void **state)
{
	static const char *const r50[] = { "rate", "50mbit", NULL };
	struct peer p;
	struct impair d;
	struct qdisc_state st;
	struct ll_err e = { 0 };

	(void)state;
	assert_int_equal(sh("tc qdisc add dev llA1 root handle 5: tbf rate 1mbit burst 1600b limit 10000b"), 0);
	assert_int_equal(peer_local_open(&p, &e), 0);
	set_dial(&d, r50);
	if (p.ops->apply(&p, "llA1", &d, &e) != 0)
		fail_msg("apply: %s", e.msg);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &st, &e), 0);
	assert_int_equal(st.q[0].handle, 0x00010000);
	if (p.ops->clear(&p, "llA1", &e) != 0)
		fail_msg("clear: %s", e.msg);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &st, &e), 0);
	assert_string_equal(st.q[0].kind, "tbf");
	assert_int_equal(st.q[0].handle, 0x00050000);
	assert_true(st.q[0].rate == 1000000ULL);
	assert_int_equal(st.q[0].limit, 10000);
	assert_int_equal(sh("tc qdisc del dev llA1 root"), 0);
	p.ops->close(&p);
}

/* All or nothing: with the probe off, tbf goes in, the netem child is
 * refused by the kernel, and the original (tbf 5: 1mbit) is put back. */
static void test_rollback(void **state)
{
	static const char *const both[] = { "rate", "10mbit", "delay", "20ms", NULL };
	struct peer p;
	struct impair d;
	struct qdisc_state st;
	struct journal_entry je;
	struct ll_err e = { 0 };
	uint64_t ns;
	int rc;

	(void)state;
	assert_int_equal(sh("tc qdisc add dev llA1 root handle 5: tbf rate 1mbit burst 1600b limit 10000b"), 0);
	setenv("LINKLAB_NO_NETEM_PROBE", "1", 1);
	assert_int_equal(peer_local_open(&p, &e), 0);
	set_dial(&d, both);
	rc = p.ops->apply(&p, "llA1", &d, &e);
	unsetenv("LINKLAB_NO_NETEM_PROBE");
	if (rc == 0) {
		printf("note: this kernel has netem; roll-back not exercised\n");
		assert_int_equal(p.ops->clear(&p, "llA1", &e), 0);
	} else {
		printf("apply: %s\n", e.msg);
		assert_int_equal(rc, -ENOTSUP);
		assert_non_null(strstr(e.msg, "modprobe sch_netem"));
		assert_non_null(strstr(e.msg, "the original qdisc was restored"));
	}
	assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &st, &e), 0);
	assert_string_equal(st.q[0].kind, "tbf");
	assert_int_equal(st.q[0].handle, 0x00050000);
	assert_true(st.q[0].rate == 1000000ULL);
	assert_int_equal(journal_netns(&ns, &e), 0);
	assert_int_equal(journal_lookup(ns, (int)if_nametoindex("llA1"), &je, &e), -ENOENT);
	assert_int_equal(sh("tc qdisc del dev llA1 root"), 0);
	p.ops->close(&p);
}

/* The tc lines of dry_run, run by tc, give the same kernel state. */
static void test_dry_run_same_state(void **state)
{
	static const char *const r[] = { "rate", "30mbit", "latency", "10ms", NULL };
	struct peer p;
	struct impair d;
	struct qdisc_state a, b;
	struct ll_err e = { 0 };
	char lines[512];

	(void)state;
	assert_int_equal(peer_local_open(&p, &e), 0);
	set_dial(&d, r);
	assert_int_equal(p.ops->dry_run(&p, "llA1", &d, lines, sizeof(lines), &e), 0);
	assert_non_null(strstr(lines, "tc qdisc replace dev 'llA1' root handle 1: tbf rate 30mbit"));
	assert_int_equal(sh(lines), 0);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &b, &e), 0);
	assert_int_equal(sh("tc qdisc del dev llA1 root"), 0);
	assert_int_equal(p.ops->apply(&p, "llA1", &d, &e), 0);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &a, &e), 0);
	assert_string_equal(a.q[0].kind, b.q[0].kind);
	assert_true(a.q[0].rate == b.q[0].rate);
	assert_int_equal(a.q[0].burst, b.q[0].burst);
	assert_int_equal(a.q[0].limit, b.q[0].limit);
	assert_int_equal(p.ops->clear(&p, "llA1", &e), 0);
	p.ops->close(&p);
}

/* Per-flow scope and ingress through the netlink path; read back
 * folds into the same dial; clear removes everything (IFB included). */
static void test_scope_and_ingress(void **state)
{
	static const char *const sc[] = { "rate", "10mbit", "dst", "10.9.0.0/24",
		"dport", "5201", NULL };
	static const char *const in[] = { "direction", "ingress", "rate", "20mbit", NULL };
	struct peer p;
	struct impair d, back;
	struct qdisc_state st;
	struct journal_entry je;
	struct ll_err e = { 0 };
	uint64_t ns = 0;
	int idx = (int)if_nametoindex("llA1");

	(void)state;
	assert_int_equal(peer_local_open(&p, &e), 0);
	set_dial(&d, sc);
	assert_int_equal(p.ops->apply(&p, "llA1", &d, &e), 0);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &st, &e), 0);
	assert_string_equal(st.q[0].kind, "htb");
	assert_true(st.q[0].rate == 10000000ULL);
	assert_true(st.scoped && st.dst_plen == 24 && st.dport == 5201);
	qdisc_state_to_impair(&st, &back);
	assert_true((back.set & IMP_RATE) && back.rate == 10000000ULL);
	assert_true((back.set & IMP_DPORT) && back.dport == 5201);
	assert_true((back.set & IMP_DST) && back.dst_plen == 24);
	assert_memory_equal(back.dst_addr, d.dst_addr, 4);
	assert_int_equal(st.dst_family, AF_INET);
	/* port only: IPv4 and IPv6 filters; then an IPv6 prefix alone (the
	 * IPv4 filter of the previous scope must go) */
	{
		static const char *const dp[] = { "rate", "10mbit", "dport", "443", NULL };
		static const char *const d6[] = { "rate", "10mbit", "dst", "fd00:1::/48", NULL };

		set_dial(&d, dp);
		assert_int_equal(p.ops->apply(&p, "llA1", &d, &e), 0);
		assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &st, &e), 0);
		assert_true(st.scoped && st.dport == 443 && st.dst_plen == 0);
		assert_int_equal(sh("tc filter show dev llA1 | grep -q 'protocol ipv6 pref 2' && "
				    "tc filter show dev llA1 | grep -q 'protocol ip pref 1'"), 0);
		set_dial(&d, d6);
		assert_int_equal(p.ops->apply(&p, "llA1", &d, &e), 0);
		assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &st, &e), 0);
		assert_true(st.scoped && st.dport == 0 && st.dst_plen == 48);
		assert_int_equal(st.dst_family, AF_INET6);
		assert_memory_equal(st.dst6, d.dst6, 16);
		assert_int_equal(sh("! tc filter show dev llA1 | grep -q 'protocol ip pref 1'"), 0);
		qdisc_state_to_impair(&st, &back);
		assert_true(back.set & IMP_DST);
		{
			char buf[64];

			impair_get(&back, impair_field_find("dst"), buf, sizeof(buf));
			assert_string_equal(buf, "fd00:1::/48");
		}
	}
	/* a second apply without scope replaces the htb tree by a plain tbf */
	{
		static const char *const r5[] = { "rate", "5mbit", NULL };

		set_dial(&d, r5);
	}
	assert_int_equal(p.ops->apply(&p, "llA1", &d, &e), 0);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &st, &e), 0);
	assert_string_equal(st.q[0].kind, "tbf");
	assert_false(st.scoped);

	/* ingress on top: IFB + ingress qdisc + mirred; journal names the IFB */
	set_dial(&d, in);
	assert_int_equal(p.ops->apply(&p, "llA1", &d, &e), 0);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &st, &e), 0);
	assert_true(st.has_ingress);
	assert_string_equal(st.q[0].kind, "tbf");          /* egress kept */
	assert_int_equal(journal_netns(&ns, &e), 0);
	assert_int_equal(journal_lookup(ns, idx, &je, &e), 0);
	assert_int_equal(strncmp(je.ifb, "llifb", 5), 0);
	assert_true(if_nametoindex(je.ifb) > 0);
	assert_int_equal(p.ops->read_qdiscs(&p, je.ifb, &st, &e), 0);
	assert_string_equal(st.q[0].kind, "tbf");
	assert_true(st.q[0].rate == 20000000ULL);
	/* an ingress qdisc we did not make is refused, nothing changed */
	assert_int_equal(sh("tc qdisc add dev llA0 ingress"), 0);
	assert_int_equal(p.ops->apply(&p, "llA0", &d, &e), -EBUSY);
	assert_non_null(strstr(e.msg, "has an ingress qdisc linklab did not create"));
	assert_int_equal(journal_lookup(ns, (int)if_nametoindex("llA0"), &je, NULL), -ENOENT);
	assert_int_equal(sh("tc qdisc del dev llA0 ingress"), 0);
	/* clear: egress back to noqueue, ingress qdisc and IFB gone */
	assert_int_equal(journal_lookup(ns, idx, &je, &e), 0);
	assert_int_equal(p.ops->clear(&p, "llA1", &e), 0);
	assert_int_equal(p.ops->read_qdiscs(&p, "llA1", &st, &e), 0);
	assert_false(st.has_ingress);
	assert_string_equal(st.q[0].kind, "noqueue");
	assert_int_equal(if_nametoindex(je.ifb), 0);
	assert_int_equal(journal_lookup(ns, idx, &je, NULL), -ENOENT);
	p.ops->close(&p);
}

/* kill -9 after an ingress apply, then the interface vanished: clear --all
 * still removes the IFB device (it outlives the interface) and the entry. */
static void test_clear_all_vanished_ingress(void **state)
{
	static const char *const in[] = { "direction", "ingress", "rate", "20mbit", NULL };
	struct peer p;
	struct impair d;
	struct journal_entry je;
	struct ll_err e = { 0 };
	uint64_t ns = 0;
	int idx;
	char ifb[IF_NAMESIZE];

	(void)state;
	assert_int_equal(sh("ip link add llV0 type veth peer name llV1 && ip link set llV0 up"), 0);
	idx = (int)if_nametoindex("llV0");
	assert_int_equal(peer_local_open(&p, &e), 0);
	set_dial(&d, in);
	assert_int_equal(p.ops->apply(&p, "llV0", &d, &e), 0);
	assert_int_equal(journal_netns(&ns, &e), 0);
	assert_int_equal(journal_lookup(ns, idx, &je, &e), 0);
	snprintf(ifb, sizeof(ifb), "%s", je.ifb);
	assert_true(if_nametoindex(ifb) > 0);
	p.ops->close(&p);                      /* the process "dies" */
	assert_int_equal(sh("ip link del llV0"), 0);
	assert_int_equal(peer_local_open(&p, &e), 0);
	assert_int_equal(p.ops->clear_all(&p, &e), 0);
	assert_int_equal(if_nametoindex(ifb), 0);
	assert_int_equal(journal_lookup(ns, idx, &je, NULL), -ENOENT);
	p.ops->close(&p);
}

static void test_links_routes_errors(void **state)
{
	static const char *const r[] = { "rate", "1mbit", NULL };
	struct link_list *ll = calloc(1, sizeof(*ll));
	struct peer p;
	struct impair d;
	struct qdisc_state st;
	struct ll_err e = { 0 };
	char dev[IF_NAMESIZE];
	int i, found = 0;

	(void)state;
	assert_non_null(ll);
	assert_int_equal(peer_local_open(&p, &e), 0);
	assert_int_equal(p.ops->list_links(&p, ll, &e), 0);
	for (i = 0; i < ll->n; i++) {
		if (strcmp(ll->l[i].name, "llA0") != 0)
			continue;
		found = 1;
		assert_int_equal(ll->l[i].mtu, 1500);
		assert_true(ll->l[i].up);
		assert_string_equal(ll->l[i].qdisc, "noqueue");
		assert_true(ll->l[i].naddrs >= 1);   /* + IPv6 link-local */
		assert_string_equal(ll->l[i].addrs[0], "10.9.0.1/24");
		assert_string_equal(ll->l[i].state, "UP");
		assert_true(ll->l[i].speed_mbps == 10000);   /* veth reports 10G */
	}
	assert_true(found);
	free(ll);
	assert_int_equal(p.ops->route_dev(&p, "10.9.0.7", dev, sizeof(dev), &e), 0);
	assert_string_equal(dev, "llA0");
	assert_int_equal(p.ops->route_dev(&p, "bogus", dev, sizeof(dev), &e), -EINVAL);
	set_dial(&d, r);
	assert_int_equal(p.ops->apply(&p, "nosuchdev0", &d, &e), -ENODEV);
	assert_non_null(strstr(e.msg, "no such interface"));
	assert_int_equal(p.ops->read_qdiscs(&p, "x;y", &st, &e), -ENODEV);
	memset(&d, 0, sizeof(d));
	assert_int_equal(p.ops->apply(&p, "llA0", &d, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "empty dial"));
	assert_int_equal(p.ops->server_start(&p, &i, &e), -ENOTSUP);
	p.ops->close(&p);
}

/* The kernel's extended-ack text reaches the message: replacing tbf 1: by
 * another kind at the same handle is refused with "Invalid qdisc name". */
static void test_extack_text(void **state)
{
	static const char *const r[] = { "rate", "5mbit", NULL };
	struct nlqdisc_target t = { 0, TC_H_ROOT, 0x00010000, NLQ_REPLACE };
	struct qdisc_state st;
	struct impair_plan plan;
	struct impair d;
	struct ll_diag dg;
	struct nl_sock *sk;
	struct nl_msg *m = NULL;
	struct ll_err e = { 0 };

	(void)state;
	t.ifindex = (int)if_nametoindex("llA1");
	sk = nl_socket_alloc();
	assert_non_null(sk);
	assert_int_equal(nl_connect(sk, NETLINK_ROUTE), 0);
	set_dial(&d, r);
	ll_diag_clear(&dg);
	assert_int_equal(impair_plan(&d, 1500, 250, &plan, &dg), 0);
	assert_int_equal(nlqdisc_build_tbf(&t, &plan, &m, &e), 0);
	assert_int_equal(nlqdisc_talk(sk, m, "replace tbf on llA1", "tbf", &e), 0);
	nlmsg_free(m);
	assert_int_equal(nlqdisc_build_raw(&t, "htb", NULL, 0, &m, &e), 0);
	assert_int_equal(nlqdisc_talk(sk, m, "replace htb on llA1", "htb", &e), -EINVAL);
	nlmsg_free(m);
	printf("kernel said: %s\n", e.msg);
	assert_non_null(strstr(e.msg, "replace htb on llA1: Invalid argument"));
	assert_non_null(strstr(e.msg, "kernel says: "));
	/* the dump still parses, then remove our tbf */
	assert_int_equal(nlqdisc_dump(sk, t.ifindex, &st, NULL, &e), 0);
	assert_string_equal(st.q[0].kind, "tbf");
	t.handle = 0;
	assert_int_equal(nlqdisc_build_del(&t, &m, &e), 0);
	assert_int_equal(nlqdisc_talk(sk, m, "delete", NULL, &e), 0);
	nlmsg_free(m);
	/* deleting again: the kernel default cannot be deleted */
	assert_int_equal(nlqdisc_build_del(&t, &m, &e), 0);
	assert_true(nlqdisc_talk(sk, m, "delete again", NULL, &e) < 0);
	printf("second delete: %s\n", e.msg);
	nlmsg_free(m);
	nl_socket_free(sk);
}

/* --- no privileges needed ------------------------------------------------ */

static void test_journal(void **state)
{
	struct journal_entry a, b, c, list[8];
	struct ll_err e = { 0 };
	char path[512];
	struct stat sb;
	int n;

	(void)state;
	assert_string_equal(journal_dir(), rundir);
	memset(&a, 0, sizeof(a));
	a.netns = 4026531992ULL;
	a.ifindex = 42;
	snprintf(a.dev, sizeof(a.dev), "../x;$(id)");
	snprintf(a.kind, sizeof(a.kind), "tbf");
	a.handle = 0x00050000;
	a.optlen = 3;
	a.opts[0] = 0xde; a.opts[1] = 0xad; a.opts[2] = 0x01;
	assert_int_equal(journal_record(&a, &e), 1);
	/* the name never reaches the path */
	snprintf(path, sizeof(path), "%s/4026531992-42.json", rundir);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	/* the first original wins */
	b = a;
	snprintf(b.kind, sizeof(b.kind), "netem");
	assert_int_equal(journal_record(&b, &e), 0);
	assert_int_equal(journal_lookup(a.netns, 42, &c, &e), 0);
	assert_string_equal(c.kind, "tbf");
	assert_string_equal(c.dev, "../x;$(id)");
	assert_int_equal(c.handle, 0x00050000);
	assert_false(c.is_default);
	assert_int_equal(c.optlen, 3);
	assert_memory_equal(c.opts, a.opts, 3);
	/* a second interface, default original */
	b.ifindex = 7;
	b.is_default = true;
	b.optlen = 0;
	snprintf(b.kind, sizeof(b.kind), "noqueue");
	assert_int_equal(journal_record(&b, &e), 1);
	assert_int_equal(journal_list(list, 8, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(journal_remove(a.netns, 42, &e), 0);
	assert_int_equal(journal_lookup(a.netns, 42, &c, &e), -ENOENT);
	assert_int_equal(journal_remove(a.netns, 42, &e), 0);
	/* a damaged file is reported, and skipped by list */
	snprintf(path, sizeof(path), "%s/4026531992-9.json", rundir);
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs("{\"ifindex\": \"nope\"", f);
		fclose(f);
	}
	assert_int_equal(journal_lookup(a.netns, 9, &c, &e), -EINVAL);
	assert_int_equal(journal_list(list, 8, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_true(list[0].is_default);
	unlink(path);
	assert_int_equal(journal_remove(a.netns, 7, &e), 0);
}

static void test_state_fold(void **state)
{
	struct qdisc_state s;
	struct impair d;
	char buf[256];

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_string_equal(qdisc_state_summary(&s, buf, sizeof(buf)), "none");
	s.n = 1;
	snprintf(s.q[0].kind, sizeof(s.q[0].kind), "noqueue");
	s.q[0].parent = 0xffffffff;
	qdisc_state_to_impair(&s, &d);
	assert_true(impair_is_empty(&d));
	assert_string_equal(qdisc_state_summary(&s, buf, sizeof(buf)), "noqueue");

	s.n = 2;
	snprintf(s.q[0].kind, sizeof(s.q[0].kind), "tbf");
	s.q[0].handle = 0x00010000;
	s.q[0].rate = 50000000;
	s.q[0].burst = 25000;
	s.q[0].limit = 337500;
	snprintf(s.q[1].kind, sizeof(s.q[1].kind), "netem");
	s.q[1].handle = 0x000a0000;
	s.q[1].parent = 0x00010001;
	s.q[1].delay = 100000000;
	s.q[1].jitter = 10000000;
	s.q[1].delay_corr = 1073741824U;
	s.q[1].loss = 42949673U;
	s.q[1].reorder = 1073741824U;
	s.q[1].gap = 1;
	s.q[1].limit = 1000;
	qdisc_state_to_impair(&s, &d);
	assert_true(d.rate == 50000000ULL);
	assert_true(d.burst == 25000);
	assert_true(d.delay == 100000000LL);
	assert_int_equal(d.loss, 42949673U);
	assert_int_equal(d.limit, 1000);
	assert_false(d.set & IMP_GAP);
	assert_true(d.set & IMP_REORDER);
	assert_string_equal(impair_summary(&d, buf, sizeof(buf)),
			    "rate 50mbit burst 25000b tbf-limit 337500b delay 100ms jitter 10ms "
			    "delay-corr 25% loss 1% reorder 25% limit 1000");
	assert_string_equal(qdisc_state_summary(&s, buf, sizeof(buf)),
			    "tbf rate 50mbit burst 25000b limit 337500b / netem limit 1000 "
			    "delay 100ms 10ms 25% loss 1% reorder 25%");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal),
		cmocka_unit_test(test_state_fold),
		NETNS_CASE(test_apply_tbf_replace_clear, VETH_SETUP),
		NETNS_CASE(test_clear_all, VETH_SETUP),
		NETNS_CASE(test_netem_refused_cleanly, VETH_SETUP),
		NETNS_CASE(test_replay_original, VETH_SETUP),
		NETNS_CASE(test_rollback, VETH_SETUP),
		NETNS_CASE(test_dry_run_same_state, VETH_SETUP),
		NETNS_CASE(test_scope_and_ingress, VETH_SETUP),
		NETNS_CASE(test_clear_all_vanished_ingress, VETH_SETUP),
		NETNS_CASE(test_links_routes_errors, VETH_SETUP),
		NETNS_CASE(test_extack_text, VETH_SETUP),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
