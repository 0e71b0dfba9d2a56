/* SPDX-License-Identifier: MIT */
/* sshcfg.c - resolve a peer the way OpenSSH does: run `ssh -G` (fork/exec, no
 * shell) and read the effective options it prints (ssh(1) -G, ssh_config(5)). */
#include "linklab/remote/sshcfg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SSHG_MAX_OUT (256 * 1024)
#define SSHG_TIMEOUT_MS 10000

/* Run argv, capture stdout into *out and stderr into *errt (both
 * NUL-terminated, malloc'ed). Returns the exit status (>= 0) or -errno. */
static int run_capture(char *const argv[], char **out, char **errt)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, st = 0, rc = 0;
	size_t nb[2] = {0, 0};
	char *buf[2] = {NULL, NULL};
	pid_t pid;
	struct timespec t0, t1;

	*out = *errt = NULL;
	buf[0] = calloc(1, SSHG_MAX_OUT + 1);
	buf[1] = calloc(1, SSHG_MAX_OUT + 1);
	if (!buf[0] || !buf[1]) {
		free(buf[0]);
		free(buf[1]);
		return -ENOMEM;
	}
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		rc = -errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		goto fail;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execvp(argv[0], argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pf[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
		int i, open_fds = 0, left;

		for (i = 0; i < 2; i++)
			if (pf[i].fd < 0)
				pf[i].events = 0;
			else
				open_fds++;
		if (!open_fds)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = SSHG_TIMEOUT_MS - (int)((t1.tv_sec - t0.tv_sec) * 1000 +
					       (t1.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			kill(pid, SIGKILL);
			rc = -ETIMEDOUT;
			break;
		}
		if (poll(pf, 2, left) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		for (i = 0; i < 2; i++) {
			int *fd = i == 0 ? &po[0] : &pe[0];
			ssize_t n;
			char sink[4096];

			if (*fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (nb[i] < SSHG_MAX_OUT)
				n = read(*fd, buf[i] + nb[i], SSHG_MAX_OUT - nb[i]);
			else
				n = read(*fd, sink, sizeof(sink));
			if (n > 0 && nb[i] < SSHG_MAX_OUT)
				nb[i] += (size_t)n;
			else if (n == 0 || (n < 0 && errno != EINTR)) {
				close(*fd);
				*fd = -1;
			}
		}
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (rc == 0)
		rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
fail:
	if (po[0] >= 0) close(po[0]);
	if (po[1] >= 0) close(po[1]);
	if (pe[0] >= 0) close(pe[0]);
	if (pe[1] >= 0) close(pe[1]);
	if (rc < 0) {
		free(buf[0]);
		free(buf[1]);
		return rc;
	}
	*out = buf[0];
	*errt = buf[1];
	return rc;
}

/* Expand a leading "~/" (or "~") with $HOME, else the passwd entry. */
static void expand_tilde(const char *in, char *out, size_t len)
{
	const char *home;

	if (in[0] != '~' || (in[1] != '/' && in[1] != '\0')) {
		snprintf(out, len, "%s", in);
		return;
	}
	home = getenv("HOME");
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());

		home = pw ? pw->pw_dir : "/";
	}
	snprintf(out, len, "%s%s", home, in + 1);
}

/* Expand ssh_config(5) TOKENS in an IdentityFile (ssh -G prints them
 * unexpanded): %% %d %h %i %L %l %n %p %r %u, then a leading ~. */
static void expand_tokens(const char *in, const struct ssh_target *t,
			  const char *home, char *out, size_t len)
{
	char host[256] = "", tmp[PATH_MAX];
	size_t o = 0;
	const char *s;

	gethostname(host, sizeof(host) - 1);
	for (s = in; *s && o + 1 < sizeof(tmp); s++) {
		char v[PATH_MAX];

		if (*s != '%' || !s[1]) {
			tmp[o++] = *s;
			continue;
		}
		s++;
		switch (*s) {
		case '%': snprintf(v, sizeof(v), "%%"); break;
		case 'd': snprintf(v, sizeof(v), "%s", home); break;
		case 'h': snprintf(v, sizeof(v), "%s", t->hostname); break;
		case 'i': snprintf(v, sizeof(v), "%u", (unsigned)getuid()); break;
		case 'l': snprintf(v, sizeof(v), "%s", host); break;
		case 'L': snprintf(v, sizeof(v), "%.*s", (int)strcspn(host, "."), host); break;
		case 'n': snprintf(v, sizeof(v), "%s", t->alias); break;
		case 'p': snprintf(v, sizeof(v), "%d", t->port); break;
		case 'r': snprintf(v, sizeof(v), "%s", t->user); break;
		case 'u': {
			struct passwd *pw = getpwuid(getuid());

			snprintf(v, sizeof(v), "%s", pw ? pw->pw_name : "");
			break;
		}
		default: snprintf(v, sizeof(v), "%%%c", *s); break;
		}
		o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, "%s", v);
		if (o >= sizeof(tmp))
			o = sizeof(tmp) - 1;
	}
	tmp[o] = '\0';
	expand_tilde(tmp, out, len);
}

/* Append path to a list unless already there. */
static void list_add(char list[][PATH_MAX], int *n, const char *path)
{
	char exp[PATH_MAX];
	int i;

	if (!path || !*path || *n >= SSHCFG_MAX_FILES)
		return;
	expand_tilde(path, exp, sizeof(exp));
	for (i = 0; i < *n; i++)
		if (strcmp(list[i], exp) == 0)
			return;
	snprintf(list[*n], PATH_MAX, "%s", exp);
	(*n)++;
}

/* First meaningful stderr line(s) of ssh, joined, for error messages. */
static void ssh_stderr_text(const char *errt, char *buf, size_t len)
{
	const char *p = errt;
	size_t used = 0;

	buf[0] = '\0';
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		/* ssh ends its lines with \r\n when it thinks it has a tty */
		while (n && p[n - 1] == '\r')
			n--;
		if (n && strncmp(p, "Pseudo-terminal", 15) != 0 && used + 3 < len) {
			int w = snprintf(buf + used, len - used, "%s%.*s",
					 used ? "; " : "", (int)n, p);
			if (w > 0)
				used += (size_t)w < len - used ? (size_t)w : len - used - 1;
		}
		p = nl ? nl + 1 : NULL;
	}
	if (!buf[0])
		snprintf(buf, len, "no message");
}

/* Split "user@host:port", "[v6]:port", "host" into parts. -EINVAL if bad. */
static int split_host(const char *in, char *user, size_t ulen, char *host,
		      size_t hlen, int *port)
{
	const char *at = strrchr(in, '@'), *h = in, *colon;
	char tmp[256];

	user[0] = '\0';
	*port = 0;
	if (at) {
		if ((size_t)(at - in) >= ulen || at == in)
			return -EINVAL;
		snprintf(user, ulen, "%.*s", (int)(at - in), in);
		h = at + 1;
	}
	if (*h == '[') {
		const char *rb = strchr(h, ']');

		if (!rb)
			return -EINVAL;
		snprintf(tmp, sizeof(tmp), "%.*s", (int)(rb - h - 1), h + 1);
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (rb[1] && !colon)
			return -EINVAL;
	} else {
		colon = strchr(h, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL;       /* bare IPv6 literal */
		snprintf(tmp, sizeof(tmp), "%.*s",
			 (int)(colon ? (size_t)(colon - h) : strlen(h)), h);
	}
	if (colon) {
		char *end;
		long p;

		errno = 0;
		p = strtol(colon + 1, &end, 10);
		if (errno || *end || end == colon + 1 || p < 1 || p > 65535)
			return -ERANGE;
		*port = (int)p;
	}
	if (!tmp[0] || strlen(tmp) >= hlen)
		return -EINVAL;
	snprintf(host, hlen, "%s", tmp);
	return 0;
}

/* one "key value" line of ssh -G into t; IdentityFile values are kept in
 * id_from_g (*n_id_g of them) to be expanded once user and host are known */
static void sshcfg_apply_line(const char *key, char *val,
			      const struct sshcfg_opts *o, struct ssh_target *t,
			      char id_from_g[][PATH_MAX], int *n_id_g)
{
	if (strcasecmp(key, "hostname") == 0) {
		snprintf(t->hostname, sizeof(t->hostname), "%s", val);
	} else if (strcasecmp(key, "user") == 0) {
		snprintf(t->user, sizeof(t->user), "%s", val);
	} else if (strcasecmp(key, "port") == 0) {
		int p = atoi(val);

		if (p > 0 && p < 65536)
			t->port = p;
	} else if (strcasecmp(key, "identityfile") == 0) {
		list_add(id_from_g, n_id_g, val);
	} else if (strcasecmp(key, "userknownhostsfile") == 0 ||
		   strcasecmp(key, "globalknownhostsfile") == 0) {
		char *w, *s2 = NULL;

		if (o->known_hosts)
			return;
		for (w = strtok_r(val, " \t", &s2); w;
		     w = strtok_r(NULL, " \t", &s2)) {
			/* global files only if they exist: read-only */
			if (tolower((unsigned char)key[0]) == 'g' &&
			    access(w, R_OK) != 0)
				continue;
			list_add(t->known_hosts, &t->nknown, w);
		}
	} else if (strcasecmp(key, "stricthostkeychecking") == 0) {
		const char *v = val;

		if (strcasecmp(v, "true") == 0)
			v = "yes";
		else if (strcasecmp(v, "false") == 0)
			v = "no";
		snprintf(t->strict, sizeof(t->strict), "%s", v);
	} else if (strcasecmp(key, "identitiesonly") == 0) {
		t->identities_only = strcasecmp(val, "yes") == 0 ||
				     strcasecmp(val, "true") == 0;
	} else if (strcasecmp(key, "proxyjump") == 0) {
		snprintf(t->proxyjump, sizeof(t->proxyjump), "%s", val);
	}
}

/* the defaults ssh -G left open (host name, local user) and the
 * IdentityFile paths with their %-tokens expanded */
static void sshcfg_finish(struct ssh_target *t, const char *h,
			  char id_from_g[][PATH_MAX], int n_id_g)
{
	int i;

	if (!t->hostname[0])
		snprintf(t->hostname, sizeof(t->hostname), "%s", h);
	if (!t->user[0]) {
		struct passwd *pw = getpwuid(getuid());

		snprintf(t->user, sizeof(t->user), "%s", pw ? pw->pw_name : "root");
	}
	{
		char home[PATH_MAX];

		expand_tilde("~", home, sizeof(home));
		for (i = 0; i < n_id_g; i++) {
			char exp[PATH_MAX];

			expand_tokens(id_from_g[i], t, home, exp, sizeof(exp));
			list_add(t->identity, &t->nidentity, exp);
		}
	}
}

int sshcfg_resolve(const char *host, const struct sshcfg_opts *o,
		   struct ssh_target *t, struct ll_err *err)
{
	char user[64], h[256], portbuf[16], msg[400];
	char *argv[12], *out = NULL, *errt = NULL, *line, *save = NULL;
	char id_from_g[SSHCFG_MAX_FILES][PATH_MAX];
	int n_id_g = 0, port, argc = 0, rc;
	struct sshcfg_opts none = {0};

	if (!o)
		o = &none;
	memset(t, 0, sizeof(*t));
	if (!host || !*host)
		return ll_err_set(err, -EINVAL, "ssh: empty peer name");
	rc = split_host(host, user, sizeof(user), h, sizeof(h), &port);
	if (rc == -ERANGE)
		return ll_err_set(err, -EINVAL,
				  "ssh: peer \"%s\": the port after ':' must be a number 1..65535",
				  host);
	if (rc < 0 || h[0] == '-')
		return ll_err_set(err, -EINVAL,
				  "ssh: cannot read peer \"%s\" (expected alias, user@host or user@host:port)",
				  host);
	if (o->key_file) {
		char kp[PATH_MAX];

		expand_tilde(o->key_file, kp, sizeof(kp));
		if (access(kp, R_OK) != 0)
			return ll_err_set(err, -ENOENT, "--ssh-key %s: cannot read: %s",
					  o->key_file, strerror(errno));
	}
	snprintf(t->alias, sizeof(t->alias), "%s", host);
	argv[argc++] = (char *)"ssh";
	argv[argc++] = (char *)"-G";
	if (o->config_file) {
		argv[argc++] = (char *)"-F";
		argv[argc++] = (char *)o->config_file;
	}
	if (port) {
		snprintf(portbuf, sizeof(portbuf), "%d", port);
		argv[argc++] = (char *)"-p";
		argv[argc++] = portbuf;
	}
	if (user[0]) {
		argv[argc++] = (char *)"-l";
		argv[argc++] = user;
	}
	argv[argc++] = (char *)"--";
	argv[argc++] = h;
	argv[argc] = NULL;

	rc = run_capture(argv, &out, &errt);
	if (rc < 0)
		return ll_err_set(err, rc, "ssh -G %s: %s", h, strerror(-rc));
	if (rc == 127) {
		free(out);
		free(errt);
		return ll_err_set(err, -ENOENT,
				  "ssh -G: ssh is not installed (OpenSSH client needed to read ssh_config)");
	}
	if (rc != 0) {
		ssh_stderr_text(errt, msg, sizeof(msg));
		free(out);
		free(errt);
		return ll_err_set(err, -EINVAL, "ssh -G %s%s%s%s failed (exit %d): %s",
				  o->config_file ? "-F " : "",
				  o->config_file ? o->config_file : "",
				  o->config_file ? " " : "", h, rc, msg);
	}

	t->port = 22;
	snprintf(t->strict, sizeof(t->strict), "ask");
	t->accept_new = o->accept_new;
	t->prompt = o->prompt;
	t->prompt_ctx = o->prompt_ctx;
	if (o->config_file)
		snprintf(t->config_file, sizeof(t->config_file), "%s", o->config_file);
	if (o->key_file)
		list_add(t->identity, &t->nidentity, o->key_file);
	if (o->known_hosts)
		list_add(t->known_hosts, &t->nknown, o->known_hosts);

	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *key = line, *val = line;

		while (*val && !isspace((unsigned char)*val))
			val++;
		if (*val)
			*val++ = '\0';
		while (isspace((unsigned char)*val))
			val++;
		val[strcspn(val, "\r")] = '\0';
		sshcfg_apply_line(key, val, o, t, id_from_g, &n_id_g);
	}
	free(out);
	free(errt);
	sshcfg_finish(t, h, id_from_g, n_id_g);
	return 0;
}
