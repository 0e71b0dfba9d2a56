/* SPDX-License-Identifier: MIT */
/* peerset.c - open peer A (local) and B (ssh) and preselect the interfaces
 * that route to each other. */
#include <errno.h>
#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "linklab/peer/peerset.h"

/* The value of an option "--name VALUE" or "--name=VALUE" at argv[*i]. */
static int opt_value(const char *name, int argc, char **argv, int *i,
		     const char **val, struct ll_err *err)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '=') {
		*val = a + n + 1;
		return 1;
	}
	if (a[n] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return ll_err_set(err, -EINVAL, "option %s needs a value", name);
	*val = argv[++*i];
	return 1;
}

int peerset_parse_opt(struct peerset_opts *o, int argc, char **argv, int *i,
		      struct ll_err *err)
{
	static const struct {
		const char *name;
		size_t off;
	} opts[] = {
		{ "--peer-data", offsetof(struct peerset_opts, peer_data) },
		{ "--peer-dev", offsetof(struct peerset_opts, peer_dev) },
		{ "--peer", offsetof(struct peerset_opts, peer) },
		{ "--dev", offsetof(struct peerset_opts, dev) },
		{ "-F", offsetof(struct peerset_opts, ssh.config_file) },
		{ "--ssh-key", offsetof(struct peerset_opts, ssh.key_file) },
		{ "--known-hosts", offsetof(struct peerset_opts, ssh.known_hosts) },
	};
	size_t k;
	int rc;

	if (!strcmp(argv[*i], "--accept-new")) {
		o->ssh.accept_new = true;
		return 1;
	}
	if (!strcmp(argv[*i], "--force")) {
		o->force = true;
		return 1;
	}
	if (!strcmp(argv[*i], "--exclude-ssh")) {
		o->exclude_ssh = true;
		return 1;
	}
	{
		const char *val = NULL;
		char *end;
		long n;

		rc = opt_value("--revert-after", argc, argv, i, &val, err);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			if (o->revert_after)
				return ll_err_set(err, -EINVAL,
						  "option --revert-after given twice ('%d', then '%s'): give it once",
						  o->revert_after, val);
			n = strtol(val, &end, 10);
			if (*end || end == val || n < 1 || n > 3600)
				return ll_err_set(err, -EINVAL,
						  "--revert-after %s: expected seconds, 1..3600", val);
			o->revert_after = (int)n;
			return 1;
		}
	}
	{
		const char *val = NULL;
		char *end;
		long n;

		rc = opt_value("--peer-timeout", argc, argv, i, &val, err);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			n = strtol(val, &end, 10);
			if (*end || end == val || n < 1 || n > 300)
				return ll_err_set(err, -EINVAL,
						  "--peer-timeout %s: expected seconds, 1..300", val);
			o->peer_timeout = (int)n;
			return 1;
		}
	}
	for (k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		const char *val = NULL;

		rc = opt_value(opts[k].name, argc, argv, i, &val, err);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		if (!*val)
			return ll_err_set(err, -EINVAL, "option %s: empty value",
					  opts[k].name);
		if (*(const char **)((char *)o + opts[k].off))
			return ll_err_set(err, -EINVAL,
					  "option %s given twice ('%s', then '%s'): give it once",
					  opts[k].name,
					  *(const char **)((char *)o + opts[k].off), val);
		*(const char **)((char *)o + opts[k].off) = val;
		return 1;
	}
	return 0;
}

/* The SSH session itself failed (ssh.c's "ssh NAME: ..." errors: timeout,
 * no exit status, connection lost), not the command it ran on B. */
static bool session_failed(const struct ll_err *e)
{
	return e->code < 0 && strncmp(e->msg, "ssh ", 4) == 0 &&
	       !strstr(e->msg, "failed (exit");
}

/* Report B's session error as the reason (not "no interface"). */
static int b_failed(struct ll_err *err, const struct ll_err *berr, const char *peer)
{
	ll_err_set(err, berr->code, "peer %s: the SSH session failed: %s", peer,
		   berr->msg);
	return berr->code;
}

/* Resolve name to a numeric address literal (first result). */
static int to_literal(const char *name, char *out, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	int rc;

	rc = getaddrinfo(name, NULL, &hints, &res);
	if (rc != 0 || !res)
		return -ENOENT;
	rc = getnameinfo(res->ai_addr, res->ai_addrlen, out, (socklen_t)len,
			 NULL, 0, NI_NUMERICHOST);
	freeaddrinfo(res);
	return rc ? -ENOENT : 0;
}

/* First address of dev in the link list, without its /prefix. */
static void first_addr(const struct link_list *ll, const char *dev, char *out,
		       size_t len)
{
	int i, k;

	out[0] = '\0';
	for (i = 0; i < ll->n; i++) {
		if (strcmp(ll->l[i].name, dev))
			continue;
		for (k = 0; k < ll->l[i].naddrs; k++) {
			const char *a = ll->l[i].addrs[k];
			char *slash;

			if (!strncmp(a, "fe80", 4))
				continue;
			snprintf(out, len, "%s", a);
			slash = strchr(out, '/');
			if (slash)
				*slash = '\0';
			return;
		}
	}
}

static bool has_link(const struct link_list *ll, const char *dev)
{
	int i;

	for (i = 0; i < ll->n; i++)
		if (!strcmp(ll->l[i].name, dev))
			return true;
	return false;
}

/* "--dev nosuchif0: no such interface on A (this host) (have: veth-a, lo)" */
static int no_such_dev(struct ll_err *err, const char *opt, const char *dev,
		       const struct peer *p, const struct link_list *ll)
{
	char have[256] = "";
	size_t off = 0;
	int i;

	for (i = 0; i < ll->n && off < sizeof(have) - 20; i++)
		off += (size_t)snprintf(have + off, sizeof(have) - off, "%s%s",
					i ? ", " : "", ll->l[i].name);
	if (err && err->code == -ENODEV) {
		/* both --dev and --peer-dev are wrong: report both */
		size_t n = strlen(err->msg);

		snprintf(err->msg + n, sizeof(err->msg) - n,
			 "; %s %s: no such interface on %s (it has: %s)", opt, dev,
			 p->label, have);
		return -ENODEV;
	}
	return ll_err_set(err, -ENODEV, "%s %s: no such interface on %s (it has: %s)",
			  opt, dev, p->label, have);
}

int peerset_open(struct peerset *ps, const struct peerset_opts *o,
		 struct ll_err *err)
{
	struct link_list *ll;
	char lit[256];
	struct ll_err berr;
	int rc;

	memset(ps, 0, sizeof(*ps));
	ll_err_clear(err);
	ll_err_clear(&berr);
	/* a peer-only option without --peer would be ignored */
	if (!o->peer && o->peer_dev)
		return ll_err_set(err, -EINVAL,
				  "--peer-dev '%s' names the peer's interface: it needs --peer HOST",
				  o->peer_dev);
	if (!o->peer && o->peer_data)
		return ll_err_set(err, -EINVAL,
				  "--peer-data '%s' names an address of the peer: it needs --peer HOST",
				  o->peer_data);
	rc = peer_local_open(&ps->a, err);
	if (rc < 0)
		return rc;
	snprintf(ps->a.label, sizeof(ps->a.label), "A (this host)");
	if (ps->a.ops->set_safety) {
		struct peer_safety sa = { .force = o->force };

		ps->a.ops->set_safety(&ps->a, &sa);
	}
	if (o->peer) {
		rc = sshcfg_resolve(o->peer, &o->ssh, &ps->target, err);
		/* --peer-timeout bounds the connection's handshake too */
		ps->target.connect_timeout_ms = o->peer_timeout * 1000;
		if (rc == 0)
			rc = peer_remote_open(&ps->b, &ps->target, err);
		if (rc < 0) {
			ll_err_prefix(err, "peer %s: ", o->peer);
			if (!o->b_optional) {
				ps->a.ops->close(&ps->a);
				return rc;
			}
			ps->b_failed = true;
			ps->b_err = *err;
			ll_err_clear(err);
			snprintf(ps->addr_b, sizeof(ps->addr_b), "%s",
				 ps->target.hostname[0] ? ps->target.hostname : o->peer);
		}
	}
	if (o->peer && !ps->b_failed) {
		ps->has_b = true;
		if (ps->b.ops->set_safety) {
			struct peer_safety sf = { .force = o->force,
						  .exclude_ssh = o->exclude_ssh,
						  .revert_s = o->revert_after,
						  .timeout_s = o->peer_timeout,
						  .hold = o->hold };

			ps->b.ops->set_safety(&ps->b, &sf);
		}
		snprintf(ps->b.label, sizeof(ps->b.label), "B (%s)", o->peer);
		snprintf(ps->addr_b, sizeof(ps->addr_b), "%s",
			 o->peer_data ? o->peer_data : ps->target.hostname);
	}
	if (o->dev)
		snprintf(ps->dev_a, sizeof(ps->dev_a), "%s", o->dev);
	else if ((ps->has_b || ps->b_failed) && to_literal(ps->addr_b, lit, sizeof(lit)) == 0)
		ps->a.ops->route_dev(&ps->a, lit, ps->dev_a, sizeof(ps->dev_a), NULL);

	ll = calloc(1, sizeof(*ll));
	if (!ll) {
		peerset_close(ps);
		return ll_err_set(err, -ENOMEM, "out of memory");
	}
	rc = 0;
	if (ps->dev_a[0] && ps->a.ops->list_links(&ps->a, ll, NULL) == 0) {
		if (o->dev && !has_link(ll, o->dev))
			rc = no_such_dev(err, "--dev", o->dev, &ps->a, ll);
		else
			first_addr(ll, ps->dev_a, ps->addr_a, sizeof(ps->addr_a));
	}
	if (o->peer_dev)
		snprintf(ps->dev_b, sizeof(ps->dev_b), "%s", o->peer_dev);
	else if (rc == 0 && ps->has_b && ps->addr_a[0] &&
		 ps->b.ops->route_dev(&ps->b, ps->addr_a, ps->dev_b,
				      sizeof(ps->dev_b), &berr) < 0 &&
		 session_failed(&berr))
		rc = b_failed(err, &berr, o->peer);
	if (rc == 0 && ps->has_b && o->peer_dev) {
		memset(ll, 0, sizeof(*ll));
		if (ps->b.ops->list_links(&ps->b, ll, &berr) == 0) {
			if (!has_link(ll, o->peer_dev))
				rc = no_such_dev(err, "--peer-dev", o->peer_dev, &ps->b, ll);
		} else if (session_failed(&berr)) {
			rc = b_failed(err, &berr, o->peer);
		}
	}
	if (rc < 0)
		goto fail;
	free(ll);
	return 0;
fail:
	free(ll);
	peerset_close(ps);
	return rc;
}

int peerset_ssh_check(struct peerset *ps, int side, const char *dev,
		      const struct impair *d, bool force, char *warn,
		      size_t len, struct ll_err *err)
{
	struct peer_sshflow sshflow;

	if (warn && len)
		warn[0] = '\0';
	if (!ps->has_b || !ps->b.ops->session || !dev ||
	    ps->b.ops->session->sshflow(&ps->b, &sshflow, NULL) < 0)
		return 0;
	return peerset_ssh_check_flow(ps, &sshflow, side, dev, d, force, warn, len, err);
}

int peerset_ssh_check_flow(struct peerset *ps, const struct peer_sshflow *flow,
			   int side, const char *dev, const struct impair *d,
			   bool force, char *warn, size_t len, struct ll_err *err)
{
	struct peer_sshflow sshflow = *flow;
	char cdev[IF_NAMESIZE] = "";

	if (warn && len)
		warn[0] = '\0';
	if (!dev)
		return 0;
	if (side == 0) {
		if (ps->a.ops->route_dev(&ps->a, sshflow.server, cdev, sizeof(cdev), NULL) < 0)
			return 0;
	} else {
		snprintf(cdev, sizeof(cdev), "%s", sshflow.dev);
	}
	if (strcmp(cdev, dev) != 0)
		return 0;
	if (d && (d->set & IMP_LOSS) && d->loss == UINT32_MAX && !force)
		return ll_err_set(err, -EPERM,
				  "%s %s carries the SSH session to B (%s:%d -> %s:%d): 100%% loss would cut it; refused (use --exclude-ssh, or --force and let the revert timer restore B)",
				  side ? ps->b.label : ps->a.label, dev, sshflow.client,
				  sshflow.client_port, sshflow.server, sshflow.server_port);
	if (warn && len)
		snprintf(warn, len,
			 "%s %s carries the SSH session to B (%s:%d -> %s:%d): the impairment also slows linklab's own SSH session to B; --exclude-ssh keeps that session out of it",
			 side ? ps->b.label : ps->a.label, dev, sshflow.client, sshflow.client_port,
			 sshflow.server, sshflow.server_port);
	return 0;
}

void peerset_close(struct peerset *ps)
{
	if (ps->has_b && ps->b.ops)
		ps->b.ops->close(&ps->b);
	if (ps->a.ops)
		ps->a.ops->close(&ps->a);
	ps->has_b = false;
}
