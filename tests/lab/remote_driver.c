/* SPDX-License-Identifier: MIT */
/* remote_driver.c - drive the remote peer backend from tests/lab/ssh.sh.
 *   remote_driver [-F CFG] [--known-hosts F] [--ssh-key K] [--accept-new] PEER CMD [ARGS]
 * CMD: connect | links | route ADDR | show DEV | apply DEV RATE |
 *      apply-netem DEV DELAY | apply-loss DEV PCT | dry DEV RATE | clear DEV |
 *      server | server-hold SEC | apply-server DEV RATE | ctl |
 *      exec TIMEOUT_MS SHELL_CMD (ssh.h directly) | alive
 *      apply-wait DEV RATE SEC | apply-again DEV RATE1 RATE2 | sysctl-wait NAME VALUE SEC | check a|b DEV LOSS (peerset_ssh_check)
 * Options: --force, --exclude-ssh, --hold, --revert-after SEC; the prompt
 * answers $LL_ANSWER (cancels when unset) and logs "PROMPT: text" on
 * stderr. --no-prompt: no prompt callback at all.
 * Prints results on stdout; on failure "ERROR: <message>" and exit 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "linklab/model/impair.h"
#include "linklab/peer/peer.h"
#include "linklab/peer/peerset.h"
#include "linklab/remote/ssh.h"
#include "linklab/remote/sshcfg.h"

static int prompts;

static int env_prompt(void *ctx, const char *prompt, bool echo, char *buf,
		      size_t len)
{
	const char *a = getenv("LL_ANSWER");

	(void)ctx;
	prompts++;
	fprintf(stderr, "PROMPT%s: %s\n", echo ? "(echo)" : "", prompt);
	if (!a)
		return -1;
	snprintf(buf, len, "%s", a);
	return 0;
}

static int fail(const struct ll_err *e)
{
	printf("ERROR: %s\n", e->msg);
	return 1;
}

int main(int argc, char **argv)
{
	struct sshcfg_opts o = {0};
	struct ssh_target t;
	struct peer p;
	struct ll_err e = {0};
	struct ll_diag diag;
	struct impair d;
	int i = 1, rc = 0;
	const char *peer, *cmd;
	struct peer_safety sf = {0};
	bool use_prompt = true;

	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "-F") == 0 && i + 1 < argc)
			o.config_file = argv[++i];
		else if (strcmp(argv[i], "--known-hosts") == 0 && i + 1 < argc)
			o.known_hosts = argv[++i];
		else if (strcmp(argv[i], "--ssh-key") == 0 && i + 1 < argc)
			o.key_file = argv[++i];
		else if (strcmp(argv[i], "--accept-new") == 0)
			o.accept_new = true;
		else if (strcmp(argv[i], "--force") == 0)
			sf.force = true;
		else if (strcmp(argv[i], "--exclude-ssh") == 0)
			sf.exclude_ssh = true;
		else if (strcmp(argv[i], "--hold") == 0)
			sf.hold = true;
		else if (strcmp(argv[i], "--no-prompt") == 0)
			use_prompt = false;
		else if (strcmp(argv[i], "--revert-after") == 0 && i + 1 < argc)
			sf.revert_s = atoi(argv[++i]);
		else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 2;
		}
		i++;
	}
	if (i + 2 > argc) {
		fprintf(stderr, "usage: remote_driver [opts] PEER CMD [ARGS]\n");
		return 2;
	}
	peer = argv[i++];
	cmd = argv[i++];
	if (strcmp(cmd, "check") == 0 && i + 2 < argc) {
		/* peerset_ssh_check SIDE(a|b) DEV LOSS */
		struct peerset_opts po = {0};
		struct peerset ps;
		char warn[512];

		po.peer = peer;
		po.ssh = o;
		memset(&d, 0, sizeof(d));
		ll_diag_clear(&diag);
		if (peerset_open(&ps, &po, &e) < 0)
			return fail(&e);
		impair_set(&d, "loss", argv[i + 2], &diag);
		rc = peerset_ssh_check(&ps, argv[i][0] == 'b', argv[i + 1], &d, sf.force,
				       warn, sizeof(warn), &e);
		if (rc == 0)
			printf("ok%s%s\n", warn[0] ? " warn: " : "", warn);
		else
			fail(&e);
		peerset_close(&ps);
		return rc < 0 ? 1 : 0;
	}
	if (use_prompt) {
		o.prompt = env_prompt;
		o.prompt_ctx = NULL;
	}
	if (sshcfg_resolve(peer, &o, &t, &e) < 0)
		return fail(&e);
	if (strcmp(cmd, "exec") == 0 || strcmp(cmd, "alive") == 0 ||
	    strcmp(cmd, "idle") == 0) {
		struct ssh_session *s;
		char *out = NULL, *et = NULL;
		int st = -1;

		if (ssh_open(&s, &t, 0, &e) < 0)
			return fail(&e);
		if (strcmp(cmd, "idle") == 0 && i < argc) {
			/* a console's loop: one command, SEC s of keepalives
			 * only, one more command */
			int k, next = 0, secs = atoi(argv[i]);

			rc = ssh_alive(s, &e);
			for (k = 0; rc == 0 && k < secs; k++) {
				sleep(1);
				rc = ssh_keepalive(s, &next, &e);
			}
			if (rc == 0)
				rc = ssh_alive(s, &e);
			if (rc == 0)
				printf("alive after %d s idle\n", secs);
		} else if (strcmp(cmd, "alive") == 0) {
			int next = 0;

			rc = ssh_alive(s, &e);
			if (rc == 0)
				rc = ssh_keepalive(s, &next, &e);
			if (rc == 0)
				printf("alive fd %d keepalive-in %d\n", ssh_fd(s) >= 0, next);
		} else if (i + 1 < argc) {
			rc = ssh_exec(s, argv[i + 1], &out, &et, &st, atoi(argv[i]), &e);
			if (rc == 0)
				printf("status %d out %zu err %zu first-out \"%.*s\" first-err \"%.*s\"\n",
				       st, strlen(out), strlen(et), (int)strcspn(out, "\n"),
				       out, (int)strcspn(et, "\n"), et);
			free(out);
			free(et);
		}
		if (rc < 0)
			fail(&e);
		ssh_close(s);
		return rc < 0 ? 1 : 0;
	}
	if (peer_remote_open(&p, &t, &e) < 0)
		return fail(&e);
	p.ops->set_safety(&p, &sf);
	memset(&d, 0, sizeof(d));
	ll_diag_clear(&diag);
	if (strcmp(cmd, "connect") == 0) {
		printf("connected %s\n", p.label);
	} else if (strcmp(cmd, "links") == 0) {
		struct link_list *ll = calloc(1, sizeof(*ll));
		int k, a;

		rc = p.ops->list_links(&p, ll, &e);
		for (k = 0; rc == 0 && k < ll->n; k++) {
			printf("%s|%s|%u|%s", ll->l[k].name, ll->l[k].qdisc,
			       ll->l[k].mtu, ll->l[k].state);
			for (a = 0; a < ll->l[k].naddrs; a++)
				printf("|%s", ll->l[k].addrs[a]);
			printf("\n");
		}
		free(ll);
	} else if (strcmp(cmd, "route") == 0 && i < argc) {
		char dev[IF_NAMESIZE];

		rc = p.ops->route_dev(&p, argv[i], dev, sizeof(dev), &e);
		if (rc == 0)
			printf("%s\n", dev);
	} else if (strcmp(cmd, "show") == 0 && i < argc) {
		struct qdisc_state qs;
		int k;

		rc = p.ops->read_qdiscs(&p, argv[i], &qs, &e);
		for (k = 0; rc == 0 && k < qs.n; k++)
			printf("%s handle %x: rate %llu burst %u limit %u\n", qs.q[k].kind,
			       qs.q[k].handle >> 16, (unsigned long long)qs.q[k].rate,
			       qs.q[k].burst, qs.q[k].limit);
	} else if (strcmp(cmd, "ctl") == 0) {
		struct peer_sshflow c;

		rc = p.ops->session->sshflow(&p, &c, &e);
		if (rc == 0)
			printf("%s:%d -> %s:%d dev %s\n", c.client, c.client_port,
			       c.server, c.server_port, c.dev);
	} else if (strcmp(cmd, "apply-wait") == 0 && i + 2 < argc) {
		/* apply, say so, stay connected SEC seconds, close normally */
		rc = impair_set(&d, "rate", argv[i + 1], &diag);
		if (rc == 0)
			rc = p.ops->apply(&p, argv[i], &d, &e);
		if (rc == 0) {
			printf("applied\n");
			fflush(stdout);
			sleep((unsigned)atoi(argv[i + 2]));
		}
	} else if (strcmp(cmd, "apply-again") == 0 && i + 2 < argc) {
		/* apply RATE1 (may be left unconfirmed by a test hold), then,
		 * without the hold, RATE2 over the same session */
		struct ll_err e1 = {0};

		rc = impair_set(&d, "rate", argv[i + 1], &diag);
		if (rc == 0) {
			rc = p.ops->apply(&p, argv[i], &d, &e1);
			printf("first: %s\n", rc == 0 ? "applied" : e1.msg);
			fflush(stdout);
		}
		unsetenv("LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS");
		memset(&d, 0, sizeof(d));
		rc = impair_set(&d, "rate", argv[i + 2], &diag);
		if (rc == 0)
			rc = p.ops->apply(&p, argv[i], &d, &e);
		if (rc == 0)
			printf("second: applied\n");
	} else if (strcmp(cmd, "sysctl-wait") == 0 && i + 2 < argc) {
		/* set one sysctl, say so, stay connected SEC seconds */
		rc = p.ops->tune->sysctl_set(&p, argv[i], argv[i + 1], &e);
		if (rc == 0) {
			printf("set\n");
			fflush(stdout);
			sleep((unsigned)atoi(argv[i + 2]));
		}
	} else if (strcmp(cmd, "server-hold") == 0 && i < argc) {
		int port = 0;

		rc = p.ops->server_start(&p, &port, &e);
		if (rc == 0) {
			printf("port %d\n", port);
			fflush(stdout);
			sleep((unsigned)atoi(argv[i]));
		}
	} else if (strcmp(cmd, "apply-time") == 0 && i + 2 < argc) {
		struct link_list *ll = calloc(1, sizeof(*ll));
		struct timespec t0, t1;
		int k, n = atoi(argv[i + 2]);

		/* apply, then time n list_links round trips on the SAME
		 * session (the one an --exclude-ssh filter protects) */
		rc = impair_set(&d, "rate", argv[i + 1], &diag);
		if (rc == 0)
			rc = p.ops->apply(&p, argv[i], &d, &e);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (k = 0; rc == 0 && k < n; k++)
			rc = p.ops->list_links(&p, ll, &e);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (rc == 0)
			printf("ms %ld\n", (long)((t1.tv_sec - t0.tv_sec) * 1000 +
						  (t1.tv_nsec - t0.tv_nsec) / 1000000));
		free(ll);
	} else if (strcmp(cmd, "apply-server") == 0 && i + 1 < argc) {
		int port = 0;

		/* a normal session: apply, start and stop a server, quit */
		rc = impair_set(&d, "rate", argv[i + 1], &diag);
		if (rc == 0)
			rc = p.ops->apply(&p, argv[i], &d, &e);
		if (rc == 0)
			rc = p.ops->server_start(&p, &port, &e);
		if (rc == 0)
			rc = p.ops->server_stop(&p, &e);
		if (rc == 0)
			printf("applied, server on %d stopped\n", port);
	} else if ((strcmp(cmd, "apply") == 0 || strcmp(cmd, "dry") == 0 ||
		    strcmp(cmd, "apply-netem") == 0 || strcmp(cmd, "apply-loss") == 0) &&
		   i + 1 < argc) {
		const char *field = strcmp(cmd, "apply-netem") == 0 ? "delay" :
				    strcmp(cmd, "apply-loss") == 0 ? "loss" : "rate";

		if (impair_set(&d, field, argv[i + 1], &diag) < 0) {
			ll_diag_to_err(&diag, &e);
			rc = -EINVAL;
		} else if (strcmp(cmd, "dry") == 0) {
			char lines[4096];

			rc = p.ops->dry_run(&p, argv[i], &d, lines, sizeof(lines), &e);
			if (rc == 0)
				fputs(lines, stdout);
		} else {
			rc = p.ops->apply(&p, argv[i], &d, &e);
			if (rc == 0)
				printf("applied\n");
			if (rc == 0 && p.ops->session->warning(&p)[0])
				fprintf(stderr, "WARNING: %s\n", p.ops->session->warning(&p));
		}
	} else if (strcmp(cmd, "clear") == 0 && i < argc) {
		rc = p.ops->clear(&p, argv[i], &e);
		if (rc == 0)
			printf("cleared\n");
	} else if (strcmp(cmd, "server") == 0) {
		int port = 0;

		rc = p.ops->server_start(&p, &port, &e);
		if (rc == 0) {
			printf("port %d\n", port);
			rc = p.ops->server_stop(&p, &e);
		}
	} else {
		fprintf(stderr, "unknown command %s\n", cmd);
		rc = -EINVAL;
	}
	if (rc < 0)
		fail(&e);
	p.ops->close(&p);
	return rc < 0 ? 1 : 0;
}
