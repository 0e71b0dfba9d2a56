/* SPDX-License-Identifier: MIT */
/* test_peer_remote.c - the remote backend against a scripted fake of ssh.h
 * (this file defines ssh_open/ssh_exec/..., so ssh.o is not linked): checks
 * the exact commands sent - quoting of hostile names, the journal, one
 * &&-joined tc command, restore on failure, the netem hint, read-back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/netlink/flowfilter.h"
#include "linklab/model/impair.h"
#include "linklab/peer/peer.h"
#include "linklab/remote/ssh.h"
#include "linklab/remote/sshcfg.h"

/* the revert timer's command: its own session (setsid when the peer has
 * it), SIGHUP ignored (nohup) */
#define ARM_HEAD "S=; command -v setsid"
#define ARM ARM_HEAD " >/dev/null 2>&1 && S=setsid; $S nohup sh -c "

/* ---- the fake peer ------------------------------------------------------ */
#define MAXC 64
static char *cmds[MAXC];
static int ncmds;
static const char *orig_json;      /* what tc -j qdisc show returns before */
static const char *after_json;     /* ... after the apply */
static bool applied;
static int tc_status;              /* exit status of the tc apply command */
static const char *tc_stderr;
static char journal[4096];         /* the peer's journal file ("" = none) */
static const char *sshflow_dev;        /* the peer's route back to the client */
static const char *timer_state;    /* answer to the disarm round trip */
/* scoped / ingress dials on the remote peer */
static const char *class_text;     /* tc class show (plain text in tc 6.1) */
static const char *filter_json;    /* tc -j filter show parent 1: */
static const char *dev_json;       /* the device itself in an ingress dial */
static const char *ingress_answer; /* answer to the ingress check */
static const char *probe_answer;   /* CONFIG_HZ and netns probe */
static char statebuf[8192];

static void reset(void)
{
	int i;

	for (i = 0; i < ncmds; i++)
		free(cmds[i]);
	ncmds = 0;
	orig_json = "[{\"kind\":\"noqueue\",\"handle\":\"0:\",\"root\":true,\"options\":{}}]";
	after_json = "[{\"kind\":\"tbf\",\"handle\":\"1:\",\"root\":true,\"options\":"
		     "{\"rate\":6250000,\"burst\":25000,\"lat\":50000}}]";
	applied = false;
	tc_status = 0;
	tc_stderr = "";
	journal[0] = '\0';
	sshflow_dev = "eth9";
	timer_state = "disarmed\n";
	class_text = "";
	filter_json = "";
	dev_json = NULL;
	ingress_answer = "none\n";
	probe_answer = "250\n@\n4026531840\n";
}

/* s begins with p, past the guard a change carries ("{ kill -0 TIMER ||
 * { ...; exit 75; }; } && ": it runs only while its revert timer is
 * armed) */
static int started(const char *s, const char *p)
{
	const char *g = strstr(s, "exit 75; }; } && ");

	if (!strncmp(s, "{ kill -0 ", 10) && g && strncmp(p, "{ kill -0 ", 10))
		s = g + strlen("exit 75; }; } && ");
	return strncmp(s, p, strlen(p)) == 0;
}

int ssh_open(struct ssh_session **out, const struct ssh_target *t,
	     int timeout_ms, struct ll_err *err)
{
	(void)t; (void)timeout_ms; (void)err;
	*out = (struct ssh_session *)&ncmds;   /* any non-NULL token */
	return 0;
}

void ssh_close(struct ssh_session *s)
{
	(void)s;
}

int ssh_addrs(const struct ssh_session *s, char *local, size_t llen,
	      int *lport, char *peer, size_t plen, int *pport)
{
	(void)s;
	snprintf(local, llen, "192.0.2.1");
	*lport = 40123;
	snprintf(peer, plen, "192.0.2.9");
	*pport = 22;
	return 0;
}

int ssh_keepalive(struct ssh_session *s, int *next_s, struct ll_err *err)
{
	(void)s; (void)err;
	*next_s = 15;
	return 0;
}

int ssh_fd(const struct ssh_session *s)
{
	(void)s;
	return 7;
}

bool ssh_stalled(const struct ssh_session *s)
{
	(void)s;
	return false;
}

int ssh_spawn(struct ssh_session *s, const char *cmd, struct ssh_proc **out,
	      struct ll_err *err)
{
	(void)s; (void)cmd; (void)out;
	return ll_err_set(err, -EIO, "fake: no spawn");
}

int ssh_spawn_readline(struct ssh_proc *p, char *line, size_t len,
		       int timeout_ms, struct ll_err *err)
{
	(void)p; (void)line; (void)len; (void)timeout_ms;
	return ll_err_set(err, -EIO, "fake");
}

void ssh_spawn_close(struct ssh_proc *p)
{
	(void)p;
}

int ssh_spawn_write(struct ssh_proc *p, const char *data, size_t len,
		    int timeout_ms, struct ll_err *err)
{
	(void)p; (void)data; (void)len; (void)timeout_ms;
	return ll_err_set(err, -EIO, "fake");
}

int ssh_exec(struct ssh_session *s, const char *cmd, char **out,
	     char **err_text, int *exit_status, int timeout_ms,
	     struct ll_err *err)
{
	const char *o = "", *e = "";
	int st = 0;

	(void)s; (void)timeout_ms; (void)err;
	if (ncmds < MAXC)
		cmds[ncmds++] = strdup(cmd);
	if (started(cmd, ARM)) {
		o = "4242\n";
	} else if (started(cmd, "kill 4242 2>/dev/null && echo disarmed")) {
		o = timer_state;
	} else if (started(cmd, "ip -j route get '192.0.2.1'")) {
		static char rt[160];

		snprintf(rt, sizeof(rt), "[{\"dst\":\"192.0.2.1\",\"dev\":\"%s\","
			 "\"prefsrc\":\"192.0.2.9\",\"flags\":[],\"uid\":0,\"cache\":[]}]",
			 sshflow_dev);
		o = rt;
	} else if (started(cmd, "umask 077; mkdir -p ")) {
		if (!journal[0])
			snprintf(journal, sizeof(journal), "%s", orig_json);
		o = journal;
	} else if (started(cmd, "ip -j addr show")) {
		o = "[{\"ifindex\":1,\"ifname\":\"lo\",\"flags\":[\"UP\"],\"mtu\":65536},"
		    "{\"ifindex\":2,\"ifname\":\"a:b/speed\",\"flags\":[],\"mtu\":1500},"
		    "{\"ifindex\":3,\"ifname\":\"eth0\",\"flags\":[\"UP\"],\"mtu\":9000}]\n"
		    "/sys/class/net/eth0/speed:25000\n"
		    "/sys/class/net/a:b/speed/speed:-1\n"
		    "junk line\n";
	} else if (started(cmd, "ip -j link show dev ")) {
		o = "[{\"ifindex\":5,\"ifname\":\"x\",\"flags\":[\"UP\"],\"mtu\":1500,"
		    "\"qdisc\":\"noqueue\",\"operstate\":\"UP\"}]";
	} else if (strstr(cmd, "CONFIG_HZ")) {
		o = probe_answer;
	} else if (started(cmd, "if [ -e '/run/linklab/")) {
		o = ingress_answer;
	} else if (strstr(cmd, "@@linklab@@")) {
		/* read_state: qdiscs, class show, filter show in one trip */
		const char *q = applied ? after_json : orig_json;

		if (dev_json && !strstr(cmd, "dev 'llifb"))
			q = applied ? dev_json : orig_json;
		snprintf(statebuf, sizeof(statebuf), "%s\n@@linklab@@\n%s\n@@linklab@@\n%s\n",
			 q, applied ? class_text : "", applied ? filter_json : "");
		o = statebuf;
	} else if (strstr(cmd, "tc -j qdisc show dev ") ||
		   strstr(cmd, "tc -j -s qdisc show dev ")) {
		o = applied ? after_json : orig_json;
	} else if (started(cmd, "cat ")) {
		o = journal;
	} else if (strstr(cmd, "tc qdisc replace ") && !strstr(cmd, "rm -f") &&
		   !started(cmd, ARM_HEAD)) {
		st = tc_status;
		e = tc_stderr;
		applied = st == 0;
	} else if (strstr(cmd, "rm -f '/run/linklab/")) {
		applied = false;
		journal[0] = '\0';
	} else {
		o = "";
	}
	if (out)
		*out = strdup(o);
	if (err_text)
		*err_text = strdup(e);
	if (exit_status)
		*exit_status = st;
	return 0;
}

/* ---- helpers ---------------------------------------------------------------- */
static struct peer P;

static int setup(void **state)
{
	struct ssh_target t;
	struct ll_err err = {0};

	(void)state;
	memset(&t, 0, sizeof(t));
	snprintf(t.alias, sizeof(t.alias), "peer-x");
	snprintf(t.hostname, sizeof(t.hostname), "192.0.2.9");
	reset();
	return peer_remote_open(&P, &t, &err);
}

static int teardown(void **state)
{
	(void)state;
	P.ops->close(&P);
	reset();
	return 0;
}

static const char *find_cmd(const char *prefix)
{
	int i;

	for (i = 0; i < ncmds; i++)
		if (started(cmds[i], prefix))
			return cmds[i];
	return NULL;
}

/* every occurrence of name in every command must sit inside '...' */
static void assert_always_quoted(const char *name)
{
	char q[64];
	int i;

	snprintf(q, sizeof(q), "'%s'", name);
	for (i = 0; i < ncmds; i++) {
		const char *s = cmds[i];

		while ((s = strstr(s, name)) != NULL) {
			bool ok = s > cmds[i] && s[-1] == '\'' &&
				  s[strlen(name)] == '\'';
			bool in_path = s > cmds[i] && s[-1] == '-' &&
				       (strncmp(s + strlen(name), ".tc.json", 8) == 0 ||
					strncmp(s + strlen(name), ".ifb'", 5) == 0 ||
					strncmp(s + strlen(name), ".applied'", 9) == 0 ||
					strncmp(s + strlen(name), ".revert'", 8) == 0);

			if (!ok && !in_path) {
				print_error("unquoted %s in: %s\n", q, cmds[i]);
				fail();
			}
			s += strlen(name);
		}
	}
}

static void dial_rate(struct impair *d, const char *rate)
{
	struct ll_diag diag;

	memset(d, 0, sizeof(*d));
	ll_diag_clear(&diag);
	assert_int_equal(impair_set(d, "rate", rate, &diag), 0);
}

/* ---- tests ---------------------------------------------------------------- */
static void test_apply_hostile_name(void **state)
{
	struct impair d;
	struct ll_err err = {0};
	const char *c;

	(void)state;
	dial_rate(&d, "50mbit");
	assert_int_equal(P.ops->apply(&P, "x$(id);b", &d, &err), 0);
	c = find_cmd("ip -j link show dev ");
	assert_non_null(c);
	assert_string_equal(c, "ip -j link show dev 'x$(id);b'");
	/* journal: directory and file quoted, original JSON quoted */
	/* (the whole tc tree, tctree_record_cmd; only a non-empty record
	 * replaces the file) */
	c = find_cmd("umask 077; mkdir -p '/run/linklab' && { [ -e '/run/linklab/remote-4026531840-x$(id);b.tc.json' ] || { e=$( { D='x$(id);b'; J='x$(id);b'; ");
	assert_non_null(c);
	assert_non_null(strstr(c, "; } 2>&1 > '/run/linklab/remote-4026531840-x$(id);b.tc.json.tmp' ) && [ -s '/run/linklab/remote-4026531840-x$(id);b.tc.json.tmp' ] && mv '/run/linklab/remote-4026531840-x$(id);b.tc.json.tmp' '/run/linklab/remote-4026531840-x$(id);b.tc.json' && echo new || { rm -f '/run/linklab/remote-4026531840-x$(id);b.tc.json.tmp' ; a=$(df -Pk /run/linklab"));
	assert_non_null(strstr(c, "exit 1; }; }; } && cat '/run/linklab/remote-4026531840-x$(id);b.tc.json'"));
	/* one tc command, the device quoted */
	c = NULL;
	for (int i = 0; i < ncmds && !c; i++)
		if (strstr(cmds[i], "tc qdisc replace dev 'x$(id);b' root handle 1: tbf rate ") &&
		    !started(cmds[i], ARM_HEAD))
			c = cmds[i];
	assert_non_null(c);
	/* read back, then disarm in its own round trip (commit confirmed) */
	assert_non_null(find_cmd("tc -j -s qdisc show dev 'x$(id);b'"));
	assert_non_null(find_cmd("kill 4242 2>/dev/null && echo disarmed || echo fired"));
	assert_always_quoted("x$(id);b");
	assert_true(strstr(journal, "noqueue") != NULL);
	/* revert timer armed before the change, disarmed after the read-back */
	c = find_cmd(ARM "'trap '\\''kill $s 2>/dev/null; exit 0'\\'' TERM; snap() { tc qdisc show dev '\\''x$(id);b'\\''");
	assert_non_null(c);
	/* it restores only from the record it was armed with, and only while
	 * the interface is as its own apply left it */
	assert_non_null(strstr(c, "sleep 30 & s=$!; wait $s || exit 0; [ \"$(cksum < '\\''/run/linklab/remote-4026531840-x$(id);b.tc.json'\\'' 2>/dev/null)\" = \"$J0\" ] || exit 0;"));
	assert_non_null(strstr(c, "= \"$$ $(snap)\" ]; else [ \"$(snap)\" != \"$B0\" ]; fi ||"));
	assert_non_null(strstr(c, "{ out=$(tc qdisc del dev '\\''x$(id);b'\\'' root 2>&1)"));
	/* the change runs only while its timer (4242) is armed */
	assert_non_null(find_cmd("{ kill -0 4242 2>/dev/null || { echo 'revert timer 4242 is "
				 "gone: not applied' >&2; exit 75; }; } && tc qdisc replace dev 'x$(id);b' root"));
	/* the change writes the .applied line of its timer (4242) */
	assert_non_null(strstr(find_cmd("tc qdisc replace dev 'x$(id);b' root") ? find_cmd("tc qdisc replace dev 'x$(id);b' root") : "",
			       "&& { printf '%s %s\\n' 4242 \"$(tc qdisc show dev 'x$(id);b' | sed"));
	assert_non_null(strstr(c, "' linklab-revert >/dev/null 2>&1 </dev/null & echo $!"));
	{
		int i, arm = -1, tc = -1, rb = -1, disarm = -1;

		for (i = 0; i < ncmds; i++) {
			if (started(cmds[i], ARM))
				arm = i;
			if (strstr(cmds[i], "tc qdisc replace dev 'x$(id);b' root handle 1:") &&
			    !started(cmds[i], ARM_HEAD))
				tc = i;
			if (started(cmds[i], "tc -j -s qdisc show dev 'x$(id);b'"))
				rb = i;
			if (started(cmds[i], "kill 4242"))
				disarm = i;
		}
		/* arm, apply, read back, disarm: four separate round trips */
		assert_true(arm >= 0 && arm < tc && tc < rb && rb < disarm);
	}
}

static void test_apply_then_clear(void **state)
{
	struct impair d;
	struct ll_err err = {0};
	const char *c;

	(void)state;
	dial_rate(&d, "50mbit");
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), 0);
	assert_int_equal(P.ops->clear(&P, "eth1", &err), 0);
	/* original was the kernel default: del root, then drop the journal */
	c = find_cmd("out=$(tc qdisc del dev 'eth1' root 2>&1)");
	assert_non_null(c);
	assert_non_null(strstr(c, "&& rm -f '/run/linklab/remote-4026531840-eth1.tc.json'"));
	assert_string_equal(journal, "");
}

static void test_rebuild_tbf_original(void **state)
{
	struct impair d;
	struct ll_err err = {0};
	const char *c;

	(void)state;
	orig_json = "[{\"kind\":\"tbf\",\"handle\":\"7:\",\"root\":true,\"options\":"
		    "{\"rate\":1250000,\"burst\":5000,\"lat\":50000}},{\"kind\":\"pfifo\","
		    "\"handle\":\"20:\",\"parent\":\"7:1\",\"options\":{\"limit\":33}}]";
	dial_rate(&d, "50mbit");
	if (P.ops->apply(&P, "eth1", &d, &err) != 0)
		print_error("apply: %s\n", err.msg);
	assert_int_equal(err.code, 0);
	assert_int_equal(P.ops->clear(&P, "eth1", &err), 0);
	c = find_cmd("tc qdisc replace dev 'eth1' root handle '7:' tbf rate '10000000bit' burst 5000b limit 67500b && tc qdisc replace dev 'eth1' parent '7:1' handle '20:' pfifo limit 33 && { [ ! -e '/run/linklab/remote-4026531840-eth1.ifb' ] ||");
	if (!c) {
		int i;

		for (i = 0; i < ncmds; i++)
			print_message("cmd: %s\n", cmds[i]);
	}
	assert_non_null(c);
}

static void test_unrebuildable_original(void **state)
{
	struct impair d;
	struct ll_err err = {0};

	(void)state;
	orig_json = "[{\"kind\":\"htb\",\"handle\":\"1:\",\"root\":true,\"options\":{}}]";
	dial_rate(&d, "50mbit");
	if (P.ops->apply(&P, "eth1", &d, &err) != 0)
		print_error("apply: %s\n", err.msg);
	assert_int_equal(err.code, 0);
	assert_int_equal(P.ops->clear(&P, "eth1", &err), -ENOTSUP);
	assert_non_null(strstr(err.msg, "cannot rebuild the original htb"));
	/* the journal is kept for a later attempt */
	assert_non_null(strstr(journal, "htb"));
}

static void test_netem_missing(void **state)
{
	struct impair d;
	struct ll_diag diag;
	struct ll_err err = {0};
	const char *c;

	(void)state;
	memset(&d, 0, sizeof(d));
	ll_diag_clear(&diag);
	assert_int_equal(impair_set(&d, "delay", "100ms", &diag), 0);
	tc_status = 2;
	tc_stderr = "Error: Specified qdisc kind is unknown.\n";
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), -ENOTSUP);
	assert_non_null(strstr(err.msg, "no netem (CONFIG_NET_SCH_NETEM); try modprobe sch_netem"));
	/* the original is put back and the journal removed */
	c = find_cmd("out=$(tc qdisc del dev 'eth1' root 2>&1)");
	assert_non_null(c);
	assert_string_equal(journal, "");
}

static void test_tc_failure_reports_stderr(void **state)
{
	struct impair d;
	struct ll_err err = {0};

	(void)state;
	dial_rate(&d, "50mbit");
	tc_status = 2;
	tc_stderr = "Error: Exclusivity flag on, cannot modify.\n";
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), -EIO);
	assert_non_null(strstr(err.msg, "Exclusivity flag on"));
	assert_non_null(find_cmd("out=$(tc qdisc del dev 'eth1' root 2>&1)"));
}

static void test_readback_mismatch(void **state)
{
	struct impair d;
	struct ll_err err = {0};

	(void)state;
	dial_rate(&d, "50mbit");
	after_json = "[{\"kind\":\"tbf\",\"handle\":\"1:\",\"root\":true,\"options\":"
		     "{\"rate\":125000,\"burst\":25000,\"lat\":50000}}]";
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), -EIO);
	assert_non_null(strstr(err.msg, "read-back"));
	/* all or nothing: the original is put back */
	assert_non_null(find_cmd("out=$(tc qdisc del dev 'eth1' root 2>&1)"));
	assert_string_equal(journal, "");
}

static void test_bad_names_send_nothing(void **state)
{
	static const char *bad[] = {"", "bad/name", "a b", "tab\tx", "waytoolongname16",
				    ".", "..", "a:b"};
	struct impair d;
	struct ll_err err = {0};
	struct qdisc_state qs;
	char lines[512], dev[IF_NAMESIZE];
	size_t i;

	(void)state;
	dial_rate(&d, "50mbit");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(P.ops->apply(&P, bad[i], &d, &err), -EINVAL);
		assert_int_equal(P.ops->clear(&P, bad[i], &err), -EINVAL);
		assert_int_equal(P.ops->read_qdiscs(&P, bad[i], &qs, &err), -EINVAL);
		assert_int_equal(P.ops->dry_run(&P, bad[i], &d, lines, sizeof(lines), &err),
				 -EINVAL);
	}
	assert_int_equal(P.ops->route_dev(&P, "10.0.0.1; reboot", dev, sizeof(dev), &err),
			 -EINVAL);
	assert_int_equal(ncmds, 0);
}

static void test_links_with_speed(void **state)
{
	struct link_list *ll = calloc(1, sizeof(*ll));
	struct ll_err err = {0};

	(void)state;
	assert_int_equal(P.ops->list_links(&P, ll, &err), 0);
	assert_int_equal(ll->n, 3);
	assert_string_equal(ll->l[2].name, "eth0");
	assert_int_equal(ll->l[2].mtu, 9000);
	assert_int_equal(ll->l[2].speed_mbps, 25000);
	assert_int_equal(ll->l[1].speed_mbps, 0);    /* -1: unknown */
	assert_int_equal(ll->l[0].speed_mbps, 0);
	free(ll);
}

static void test_dry_run_lines(void **state)
{
	struct impair d;
	struct ll_err err = {0};
	char lines[1024];

	(void)state;
	dial_rate(&d, "50mbit");
	assert_int_equal(P.ops->dry_run(&P, "a;b", &d, lines, sizeof(lines), &err), 0);
	assert_true(started(lines, "tc qdisc replace dev 'a;b' root handle 1: tbf rate "));
	/* dry run changes nothing: no journal, no tc replace */
	assert_null(find_cmd("umask"));
	assert_null(find_cmd("tc qdisc replace"));
}

static void dial_loss(struct impair *d, const char *loss)
{
	struct ll_diag diag;

	memset(d, 0, sizeof(*d));
	ll_diag_clear(&diag);
	assert_int_equal(impair_set(d, "loss", loss, &diag), 0);
}

static void test_ctl_flow_and_ops(void **state)
{
	struct peer_sshflow sshflow;
	struct ll_err err = {0};
	int next = 0;

	(void)state;
	sshflow_dev = "eth1";
	assert_non_null(P.ops->session);
	assert_int_equal(P.ops->session->sshflow(&P, &sshflow, &err), 0);
	assert_string_equal(sshflow.client, "192.0.2.1");
	assert_int_equal(sshflow.client_port, 40123);
	assert_int_equal(sshflow.server_port, 22);
	assert_string_equal(sshflow.dev, "eth1");
	assert_non_null(find_cmd("ip -j route get '192.0.2.1'"));
	/* cached: one round trip per session */
	for (int i = 0; i < ncmds; i++)
		free(cmds[i]);
	ncmds = 0;
	assert_int_equal(P.ops->session->sshflow(&P, &sshflow, &err), 0);
	assert_int_equal(ncmds, 0);
	assert_int_equal(P.ops->session->keepalive(&P, &next, &err), 0);
	assert_int_equal(next, 15);
	assert_int_equal(P.ops->session->poll_fd(&P), 7);
}

static void test_full_loss_on_session_dev_refused(void **state)
{
	struct impair d;
	struct ll_err err = {0};
	struct peer_safety sf = {0};

	(void)state;
	sshflow_dev = "eth1";
	after_json = "[{\"kind\":\"netem\",\"handle\":\"1:\",\"root\":true,\"options\":"
		     "{\"limit\":1000,\"loss-random\":{\"loss\":1,\"correlation\":0}}}]";
	dial_loss(&d, "100%");
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), -EPERM);
	assert_non_null(strstr(err.msg, "eth1 carries this SSH session (192.0.2.1:40123 -> 192.0.2.9:22)"));
	assert_non_null(strstr(err.msg, "--force"));
	assert_non_null(strstr(err.msg, "--exclude-ssh"));
	/* refused before anything changed: no journal, no timer, no tc */
	assert_null(find_cmd("umask"));
	assert_null(find_cmd(ARM_HEAD));
	/* another interface: allowed */
	assert_int_equal(P.ops->apply(&P, "eth2", &d, &err), 0);
	assert_string_equal(P.ops->session->warning(&P), "");
	/* --force: allowed, with the timer armed first */
	sf.force = true;
	sf.revert_s = 7;
	P.ops->set_safety(&P, &sf);
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), 0);
	assert_non_null(find_cmd(ARM "'trap '\\''kill $s 2>/dev/null; exit 0'\\'' TERM; snap() {"));
	{
		bool seven = false;

		for (int i = 0; i < ncmds; i++)
			seven |= started(cmds[i], ARM) && strstr(cmds[i], "2>/dev/null); sleep 7 & s=$!");
		assert_true(seven);
	}
	assert_non_null(strstr(P.ops->session->warning(&P), "carries this SSH session"));
}

static void test_exclude_ssh_flow(void **state)
{
	struct impair d;
	struct ll_err err = {0};
	struct peer_safety sf = {.exclude_ssh = true};
	const char *c = NULL;
	int i;

	(void)state;
	sshflow_dev = "eth1";
	after_json = "[{\"kind\":\"htb\",\"handle\":\"1:\",\"root\":true,\"options\":{}}]";
	P.ops->set_safety(&P, &sf);
	dial_rate(&d, "10mbit");
	if (P.ops->apply(&P, "eth1", &d, &err) != 0)
		print_error("apply: %s\n", err.msg);
	assert_int_equal(err.code, 0);
	for (i = 0; i < ncmds && !c; i++)
		if (strstr(cmds[i], "htb default 1") && !started(cmds[i], ARM_HEAD))
			c = cmds[i];
	assert_non_null(c);
	print_message("exclusion: %s\n", c ? c : "-");
	/* everything shaped (default 1:1) but the session: to the client's
	 * port from sshd's port -> the unshaped 1:2 */
	assert_non_null(strstr(c, "match ip dport 40123 0xffff match ip sport 22 0xffff flowid 1:2"));
	assert_null(strstr(c, "flowid 1:1"));
	assert_null(strstr(c, "default 2"));
	assert_non_null(strcasestr(c, "classid 1:1 htb rate 10mbit"));
}

static void test_timer_fired_before_confirm(void **state)
{
	struct impair d;
	struct ll_err err = {0};

	(void)state;
	timer_state = "fired\n";
	dial_rate(&d, "50mbit");
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), -ETIME);
	assert_non_null(strstr(err.msg, "revert timer fired before the change was confirmed"));
}

static void dial_set(struct impair *d, const char *key, const char *val)
{
	struct ll_diag diag;

	ll_diag_clear(&diag);
	assert_int_equal(impair_set(d, key, val, &diag), 0);
}

static const char *find_sub(const char *sub)
{
	int i;

	for (i = 0; i < ncmds; i++)
		if (strstr(cmds[i], sub))
			return cmds[i];
	return NULL;
}

static const char htb_after[] =
	"[{\"kind\":\"htb\",\"handle\":\"1:\",\"root\":true,\"options\":{\"r2q\":10,\"default\":\"0x2\"}}]";
static const char htb_classes[] =
	"class htb 1:1 root prio 0 rate 10Mbit ceil 10Mbit burst 5000b cburst 5000b \n"
	"class htb 1:2 root prio 0 rate 100Gbit ceil 100Gbit burst 50000000b cburst 50000000b \n";
static const char dport_filters[] =
	"[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"u32\",\"chain\":0,\"options\":{\"fh\":\"800:\",\"ht_divisor\":1}},"
	"{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"u32\",\"chain\":0,\"options\":{\"fh\":\"800::800\",\"order\":2048,"
	"\"key_ht\":\"800\",\"bkt\":\"0\",\"flowid\":\"1:1\",\"match\":{\"value\":\"1451\",\"mask\":\"ffff\",\"offmask\":\"\",\"off\":20}}},"
	"{\"protocol\":\"ipv6\",\"pref\":2,\"kind\":\"u32\",\"chain\":0,\"options\":{\"fh\":\"801::800\",\"order\":2048,"
	"\"key_ht\":\"801\",\"bkt\":\"0\",\"flowid\":\"1:1\",\"match\":{\"value\":\"1451\",\"mask\":\"ffff\",\"offmask\":\"\",\"off\":40}}}]";

static void test_scoped_readback(void **state)
{
	struct impair d;
	struct ll_err err = {0};
	struct qdisc_state qs;

	(void)state;
	dial_rate(&d, "10mbit");
	dial_set(&d, "dport", "5201");
	after_json = htb_after;
	class_text = htb_classes;
	filter_json = dport_filters;
	if (P.ops->apply(&P, "eth1", &d, &err) != 0)
		print_error("apply: %s\n", err.msg);
	assert_int_equal(err.code, 0);
	/* read back: class 1:1 and the filters in the same round trip */
	assert_non_null(find_sub("tc -j -s qdisc show dev 'eth1' && { echo @@linklab@@; tc class show dev 'eth1'"));
	assert_non_null(find_sub("tc -j filter show dev 'eth1' parent 1:"));
	assert_int_equal(P.ops->read_qdiscs(&P, "eth1", &qs, &err), 0);
	assert_string_equal(qs.q[0].kind, "htb");
	assert_int_equal(qs.q[0].rate, 10000000);
	assert_int_equal(qs.q[0].burst, 5000);
	assert_true(qs.scoped);
	assert_int_equal(qs.dport, 5201);
	assert_false(qs.has_ingress);
	/* egress only: no IFB marker written, the clear still checks for one */
	assert_null(find_sub("printf '%s\\n' 'llifb"));
	assert_int_equal(P.ops->clear(&P, "eth1", &err), 0);
	assert_non_null(find_sub("&& { [ ! -e '/run/linklab/remote-4026531840-eth1.ifb' ] ||"));
	assert_string_equal(journal, "");
}

static void test_scoped_readback_without_filter(void **state)
{
	struct impair d;
	struct ll_err err = {0};

	(void)state;
	dial_rate(&d, "10mbit");
	dial_set(&d, "dport", "5201");
	after_json = htb_after;
	class_text = htb_classes;
	filter_json = "";            /* the scope filter did not stick */
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), -EIO);
	assert_non_null(strstr(err.msg, "no scope filter"));
	assert_non_null(find_cmd("out=$(tc qdisc del dev 'eth1' root 2>&1)"));
	assert_string_equal(journal, "");
	/* a wrong class rate is a mismatch too */
	reset();
	dial_rate(&d, "20mbit");
	dial_set(&d, "dport", "5201");
	after_json = htb_after;
	class_text = htb_classes;    /* 10Mbit */
	filter_json = dport_filters;
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), -EIO);
	assert_non_null(strstr(err.msg, "rate 10000000 bit/s"));
}

static void test_ingress_apply_clear(void **state)
{
	struct impair d;
	struct ll_err err = {0};
	char ifb[IF_NAMESIZE], want[256];
	const char *c, *mark, *link;
	int i, tc = -1, rb_ifb = -1, rb_dev = -1;

	(void)state;
	qdisc_ifb_name("eth1", ifb, sizeof(ifb));
	dial_rate(&d, "10mbit");
	dial_set(&d, "direction", "ingress");
	dev_json = "[{\"kind\":\"noqueue\",\"handle\":\"0:\",\"root\":true,\"options\":{}},"
		   "{\"kind\":\"ingress\",\"handle\":\"ffff:\",\"parent\":\"ffff:fff1\",\"options\":{}}]";
	after_json = "[{\"kind\":\"tbf\",\"handle\":\"1:\",\"root\":true,\"options\":"
		     "{\"rate\":1250000,\"burst\":5000,\"lat\":50000}}]";
	if (P.ops->apply(&P, "eth1", &d, &err) != 0)
		print_error("apply: %s\n", err.msg);
	assert_int_equal(err.code, 0);
	/* the IFB is journalled on the peer before it is created, in the
	 * same command */
	snprintf(want, sizeof(want), "{ umask 077; printf '%%s\\n' '%s' > '/run/linklab/remote-4026531840-eth1.ifb' ; } && { ip link add '%s' type ifb", ifb, ifb);
	c = find_cmd(want);
	if (!c)
		for (i = 0; i < ncmds; i++)
			print_message("cmd: %s\n", cmds[i]);
	assert_non_null(c);
	mark = strstr(c, "remote-4026531840-eth1.ifb");
	link = strstr(c, "ip link add");
	assert_true(mark && link && mark < link);
	/* the check for a foreign ingress qdisc came before the journal */
	assert_non_null(find_cmd("if [ -e '/run/linklab/remote-4026531840-eth1.ifb' ]; then echo ours; elif tc qdisc show dev 'eth1' | grep -Eq '^qdisc (ingress|clsact) '"));
	/* read back: the plan on the IFB, the ingress qdisc on eth1 */
	snprintf(want, sizeof(want), "tc -j -s qdisc show dev '%s' && {", ifb);
	for (i = 0; i < ncmds; i++) {
		if (started(cmds[i], want))
			rb_ifb = i;
		if (started(cmds[i], "tc -j qdisc show dev 'eth1' && {"))
			rb_dev = i;
		if (cmds[i] == c)
			tc = i;
	}
	assert_true(tc >= 0 && tc < rb_ifb && rb_ifb < rb_dev);
	/* the revert timer also removes the ingress side */
	c = find_cmd(ARM);
	assert_non_null(c);
	assert_non_null(strstr(c, "ingress"));
	assert_non_null(strstr(c, ifb));
	/* clear: root restored, ingress qdisc and IFB removed, marker dropped */
	assert_int_equal(P.ops->clear(&P, "eth1", &err), 0);
	snprintf(want, sizeof(want), "{ [ ! -e '/run/linklab/remote-4026531840-eth1.ifb' ] || { { tc qdisc del dev 'eth1' ingress 2>/dev/null || true; };{ ip link del '%s' type ifb 2>/dev/null || true; }; rm -f '/run/linklab/remote-4026531840-eth1.ifb' ; }; true; }", ifb);
	c = find_sub(want);
	if (!c)
		for (i = 0; i < ncmds; i++)
			print_message("cmd: %s\n", cmds[i]);
	assert_non_null(c);
	assert_true(started(c, "out=$(tc qdisc del dev 'eth1' root 2>&1)"));
	assert_string_equal(journal, "");
}

static void test_ingress_busy_and_failed_readback(void **state)
{
	struct impair d;
	struct ll_err err = {0};

	(void)state;
	dial_rate(&d, "10mbit");
	dial_set(&d, "direction", "ingress");
	/* someone else's ingress qdisc: refused before anything is written */
	ingress_answer = "busy\n";
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), -EBUSY);
	assert_non_null(strstr(err.msg, "ingress qdisc linklab did not create"));
	assert_null(find_sub("umask 077"));
	assert_null(find_sub("ip link add"));
	assert_string_equal(journal, "");
	/* the IFB holds the plan but eth1 shows no ingress qdisc: all of it
	 * is removed again (root, ingress, IFB, marker) */
	reset();
	dev_json = "[{\"kind\":\"noqueue\",\"handle\":\"0:\",\"root\":true,\"options\":{}}]";
	after_json = "[{\"kind\":\"tbf\",\"handle\":\"1:\",\"root\":true,\"options\":"
		     "{\"rate\":1250000,\"burst\":5000,\"lat\":50000}}]";
	assert_int_equal(P.ops->apply(&P, "eth1", &d, &err), -EIO);
	assert_non_null(strstr(err.msg, "no ingress qdisc"));
	assert_non_null(find_sub("|| true; }; rm -f '/run/linklab/remote-4026531840-eth1.ifb' ; }; true; } && rm -f '/run/linklab/remote-4026531840-eth1.tc.json'"));
	assert_string_equal(journal, "");
}

/* No netns from the probe: refused with the reason, never a shared
 * "remote-0-" journal that another namespace's records could be taken for. */
static void test_probe_failure(void **state)
{
	struct impair d;
	struct ll_err err = {0};
	int i;

	(void)state;
	probe_answer = "250\n@\nstat: cannot stat\n";
	dial_rate(&d, "50mbit");
	assert_int_equal(P.ops->apply(&P, "eth0", &d, &err), -EIO);
	assert_non_null(strstr(err.msg, "cannot tell the peer's network namespace"));
	for (i = 0; i < ncmds; i++) {
		assert_null(strstr(cmds[i], "remote-0-"));
		assert_null(strstr(cmds[i], "tc qdisc replace"));
	}
	assert_int_equal(P.ops->clear(&P, "eth0", &err), -EIO);
	assert_int_equal(P.ops->clear_all(&P, &err), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_apply_hostile_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_then_clear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rebuild_tbf_original, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unrebuildable_original, setup, teardown),
		cmocka_unit_test_setup_teardown(test_netem_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tc_failure_reports_stderr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readback_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_names_send_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dry_run_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links_with_speed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ctl_flow_and_ops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_loss_on_session_dev_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exclude_ssh_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timer_fired_before_confirm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scoped_readback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scoped_readback_without_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ingress_apply_clear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ingress_busy_and_failed_readback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_failure, setup, teardown),
	};
	return cmocka_run_group_tests_name("peer_remote", tests, NULL, NULL);
}
