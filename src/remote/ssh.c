/* SPDX-License-Identifier: MIT */
/* ssh.c - the libssh2 session to a peer. Non-blocking session; every wait is
 * a poll() on the socket in the directions libssh2_session_block_directions()
 * asks for (libssh2 manual), bounded by a deadline - never a spin on EAGAIN.
 * Only this file includes <libssh2.h>. */
#include "linklab/remote/ssh.h"

#include <errno.h>
#include <fcntl.h>
#include <libssh2.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define SSH_OUT_MAX (4u << 20)
#define SSH_KEEPALIVE_S 15

#define RC_MARK "__linklab_rc="

/* POSIX shell single-quoting of one word ('"'"' as '\''). */
static int quote_word(const char *w, char *out, size_t len)
{
	size_t o = 0;

	if (len < 3)
		return -ENOSPC;
	out[o++] = '\'';
	for (; *w; w++) {
		if (o + 5 >= len)
			return -ENOSPC;
		if (*w == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else {
			out[o++] = *w;
		}
	}
	if (o + 2 > len)
		return -ENOSPC;
	out[o++] = '\'';
	out[o] = '\0';
	return 0;
}

struct ssh_session {
	LIBSSH2_SESSION *ss;
	int sock;
	char name[384];
	char host[256];
	int port;
	struct ssh_proc *procs;   /* open spawn channels */
	LIBSSH2_CHANNEL *sh;      /* the persistent shell (NULL: none yet) */
	unsigned seq;             /* command number in that shell */
	bool no_shell;            /* the shell could not be started: one
				   * channel per command */
	pid_t jump_pid;           /* ProxyJump helper (ssh -W), 0 = direct */
	bool stalled;             /* a command timed out: nothing more is
				   * sent, closes do not wait for replies */
	int stall_ms;             /* the bound that command had */
};

struct ssh_proc {
	struct ssh_session *s;
	LIBSSH2_CHANNEL *ch;
	struct ssh_proc *next;
	char buf[4096];
	size_t nbuf;
	char errbuf[1024];
	size_t nerr;
	bool eof;
};

static void shell_drop(struct ssh_session *s);

/* A command timed out: the peer may be stopped (sshd, or a command that
 * hangs). Nothing more is sent on the session, and closing it no longer
 * waits for the peer's replies. */
static void ssh_mark_stalled(struct ssh_session *s, int timeout_ms)
{
	s->stalled = true;
	s->stall_ms = timeout_ms;
}

/* -ETIMEDOUT for a request on a stalled session. */
static int stalled_err(const struct ssh_session *s, struct ll_err *err)
{
	return ll_err_set(err, -ETIMEDOUT,
			  "ssh %s: not answering (a command found no answer within %d ms; nothing more is sent)",
			  s->name, s->stall_ms);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc;

static void do_init(void)
{
	init_rc = libssh2_init(0);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* libssh2's last error text for the session. */
static const char *last_err(LIBSSH2_SESSION *ss)
{
	char *msg = NULL;

	if (!ss)
		return "no session";
	libssh2_session_last_error(ss, &msg, NULL, 0);
	return msg && *msg ? msg : "unknown libssh2 error";
}

/* Wait until the socket is ready in the direction libssh2 wants, or the
 * deadline passes (-ETIMEDOUT). */
static int wait_io(struct ssh_session *s, int64_t deadline)
{
	struct pollfd pf = {s->sock, 0, 0};
	int dir = libssh2_session_block_directions(s->ss), left, rc;

	if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
		pf.events |= POLLIN;
	if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		pf.events |= POLLOUT;
	if (!pf.events)
		pf.events = POLLIN;
	for (;;) {
		left = (int)(deadline - now_ms());
		if (left <= 0)
			return -ETIMEDOUT;
		rc = poll(&pf, 1, left);
		if (rc > 0)
			return 0;
		if (rc == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/* TCP connect to host:port within the deadline, trying every address. */
static int tcp_connect(const char *host, int port, int64_t deadline,
		       struct ll_err *err)
{
	struct addrinfo hints = {0}, *res = NULL, *ai;
	char ports[16], why[200] = "";
	int rc, fd = -1, last = -EHOSTUNREACH;

	hints.ai_socktype = SOCK_STREAM;
	hints.ai_family = AF_UNSPEC;
	snprintf(ports, sizeof(ports), "%d", port);
	rc = getaddrinfo(host, ports, &hints, &res);
	if (rc != 0)
		return ll_err_set(err, -EHOSTUNREACH, "ssh %s:%d: cannot resolve: %s",
				  host, port, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		struct pollfd pf;
		int soerr = 0, left;
		socklen_t sl = sizeof(soerr);

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
		if (fd < 0) {
			last = -errno;
			snprintf(why, sizeof(why), "socket: %s", strerror(errno));
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
			last = -errno;
			snprintf(why, sizeof(why), "%s", strerror(errno));
			close(fd);
			fd = -1;
			continue;
		}
		pf.fd = fd;
		pf.events = POLLOUT;
		left = (int)(deadline - now_ms());
		rc = left > 0 ? poll(&pf, 1, left) : 0;
		if (rc <= 0) {
			last = -ETIMEDOUT;
			snprintf(why, sizeof(why), "connect timed out");
			close(fd);
			fd = -1;
			continue;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr) {
			last = -soerr;
			snprintf(why, sizeof(why), "%s", strerror(soerr));
			close(fd);
			fd = -1;
			continue;
		}
		break;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return ll_err_set(err, last, "ssh %s:%d: cannot connect: %s", host,
				  port, why[0] ? why : "no address");
	rc = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &rc, sizeof(rc));
	return fd;
}

/* ProxyJump: the byte stream to host:port comes from OpenSSH's own
 * `ssh [-F FILE] -W host:port -J JUMP` (ssh(1) -W, -J: the jump hosts
 * authenticate as the user's ssh would, their prompts on the tty), over a
 * socketpair; the session itself (host key check, authentication) is ours,
 * end to end. Returns our end of the pair, or -errno. */
static int jump_connect(struct ssh_session *s, const struct ssh_target *t,
			struct ll_err *err)
{
	int sv[2];
	char hp[300];
	pid_t pid;

	if (t->proxyjump[0] == '-' || strpbrk(t->proxyjump, " \t\n"))
		return ll_err_set(err, -EINVAL, "ssh %s: bad ProxyJump \"%s\"", t->alias,
				  t->proxyjump);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return ll_err_set(err, -errno, "ssh %s: socketpair: %s", t->alias,
				  strerror(errno));
	ssh_host_name(NULL, s->host, s->port, hp, sizeof(hp));
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return ll_err_set(err, -errno, "ssh %s: fork: %s", t->alias, strerror(errno));
	}
	if (pid == 0) {
		const char *argv[12];
		int n = 0;

		int devnull = open("/dev/null", O_WRONLY);

		dup2(sv[1], 0);
		dup2(sv[1], 1);
		if (devnull >= 0)
			dup2(devnull, 2);   /* keep the console's screen clean */
		/* the last jump connects to host:port (-W); earlier ones -J */
		argv[n++] = "ssh";
		if (t->config_file[0]) {
			argv[n++] = "-F";
			argv[n++] = t->config_file;
		}
		argv[n++] = "-W";
		argv[n++] = hp;
		{
			/* the last jump is the one that connects to host:port;
			 * earlier ones go to -J */
			char *chain = strdup(t->proxyjump), *last = chain ? strrchr(chain, ',') : NULL;

			if (last) {
				*last++ = '\0';
				argv[n++] = "-J";
				argv[n++] = chain;
			} else {
				last = chain;
			}
			if (last && strchr(last, ':')) {
				/* [user@]host:port -> ssh://[user@]host:port */
				char *uri = malloc(strlen(last) + 7);

				if (uri) {
					sprintf(uri, "ssh://%s", last);
					last = uri;
				}
			}
			argv[n++] = "--";
			argv[n++] = last;
		}
		argv[n] = NULL;
		execvp("ssh", (char *const *)argv);
		_exit(127);
	}
	close(sv[1]);
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	s->jump_pid = pid;
	return sv[0];
}

/* OpenSSH-style "SHA256:<base64 without padding>" of the host key. */
static void fingerprint(LIBSSH2_SESSION *ss, char *buf, size_t len)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *h =
		(const unsigned char *)libssh2_hostkey_hash(ss, LIBSSH2_HOSTKEY_HASH_SHA256);
	size_t i, o = 0;

	if (!h) {
		snprintf(buf, len, "SHA256:?");
		return;
	}
	o = (size_t)snprintf(buf, len, "SHA256:");
	for (i = 0; i < 32 && o + 5 < len; i += 3) {
		uint32_t v = (uint32_t)h[i] << 16;
		int n = 32 - (int)i >= 3 ? 3 : 32 - (int)i;

		if (n > 1)
			v |= (uint32_t)h[i + 1] << 8;
		if (n > 2)
			v |= h[i + 2];
		buf[o++] = b64[(v >> 18) & 63];
		buf[o++] = b64[(v >> 12) & 63];
		if (n > 1)
			buf[o++] = b64[(v >> 6) & 63];
		if (n > 2)
			buf[o++] = b64[v & 63];
	}
	buf[o] = '\0';
}

static int keytype_bit(int hktype, const char **name)
{
	switch (hktype) {
	case LIBSSH2_HOSTKEY_TYPE_RSA: *name = "ssh-rsa"; return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
	case LIBSSH2_HOSTKEY_TYPE_DSS: *name = "ssh-dss"; return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: *name = "ecdsa-sha2-nistp256"; return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: *name = "ecdsa-sha2-nistp384"; return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: *name = "ecdsa-sha2-nistp521"; return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
	case LIBSSH2_HOSTKEY_TYPE_ED25519: *name = "ssh-ed25519"; return LIBSSH2_KNOWNHOST_KEY_ED25519;
	default: *name = "unknown"; return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
	}
}

/* Markers (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT") found while loading:
 * the host key is refused if it is on a @revoked line; @cert-authority
 * lines are counted (host certificates are not supported). */
struct known_marks {
	bool revoked;               /* the session's host key is revoked */
	char revoked_at[PATH_MAX + 16];   /* FILE:LINE of that line */
	int ncert;                  /* @cert-authority lines seen */
	char cert_at[PATH_MAX + 16];      /* FILE:LINE of the first */
};

static int b64val(int c);

/* Decode the base64 text w (up to its first blank) into out; length or -1. */
static long b64_decode(const char *w, unsigned char *out, size_t cap)
{
	unsigned acc = 0, bits = 0;
	size_t n = 0;

	for (; *w && *w != ' ' && *w != '\t' && *w != '\n' && *w != '\r'; w++) {
		int v = *w == '=' ? -2 : b64val((unsigned char)*w);

		if (v == -2)
			break;
		if (v < 0)
			return -1;
		acc = acc << 6 | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == cap)
				return -1;
			out[n++] = (unsigned char)(acc >> bits);
		}
	}
	return (long)n;
}

/* "@revoked PATTERNS TYPE BASE64": 1 if its key is the host key. The host
 * patterns are not consulted: a revoked key is never accepted for any host. */
static int revoked_match(const char *line, const char *key, size_t klen)
{
	char pat[1024], type[128], b64[8192];
	unsigned char *blob;
	long n;
	int hit;

	if (sscanf(line, "@revoked %1023s %127s %8191s", pat, type, b64) != 3)
		return 0;
	blob = malloc(sizeof(b64));
	if (!blob)
		return 0;
	n = b64_decode(b64, blob, sizeof(b64));
	hit = n > 0 && (size_t)n == klen && memcmp(blob, key, klen) == 0;
	free(blob);
	return hit;
}

/* Read every known_hosts file line by line (a line libssh2 cannot parse,
 * e.g. an sk- key, is skipped, not fatal). Marker lines are not given to
 * libssh2 (it would read "@revoked host key" as a trusted entry or not at
 * all): @revoked is checked against the host key, @cert-authority counted. */
static void load_known(LIBSSH2_KNOWNHOSTS *kh, const struct ssh_target *t,
		       const char *key, size_t klen, struct known_marks *mk)
{
	int i;

	memset(mk, 0, sizeof(*mk));
	for (i = 0; i < t->nknown; i++) {
		FILE *f = fopen(t->known_hosts[i], "r");
		char *line = NULL, *p;
		size_t cap = 0;
		ssize_t n;
		int lineno = 0;

		if (!f)
			continue;
		while ((n = getline(&line, &cap, f)) > 0) {
			lineno++;
			for (p = line; *p == ' ' || *p == '\t'; p++)
				;
			if (*p == '#' || *p == '\n' || *p == '\0')
				continue;
			if (*p == '@') {
				if (!strncmp(p, "@revoked", 8) && (p[8] == ' ' || p[8] == '\t') &&
				    revoked_match(p, key, klen) && !mk->revoked) {
					mk->revoked = true;
					snprintf(mk->revoked_at, sizeof(mk->revoked_at), "%s:%d",
						 t->known_hosts[i], lineno);
				} else if (!strncmp(p, "@cert-authority", 15) && mk->ncert++ == 0) {
					snprintf(mk->cert_at, sizeof(mk->cert_at), "%s:%d",
						 t->known_hosts[i], lineno);
				}
				continue;
			}
			libssh2_knownhost_readline(kh, p, strlen(p),
						   LIBSSH2_KNOWNHOST_FILE_OPENSSH);
		}
		free(line);
		fclose(f);
	}
}

/* Append the host key to t->known_hosts[0] in OpenSSH format. */
static int known_append(struct ssh_session *s, LIBSSH2_KNOWNHOSTS *kh,
			const struct ssh_target *t, const char *key, size_t klen,
			int typemask, struct ll_err *err)
{
	struct libssh2_knownhost *store = NULL;
	char host[300], line[8192];
	size_t outlen = 0;
	int fd, rc;
	ssize_t w;

	if (t->nknown < 1)
		return ll_err_set(err, -ENOENT, "ssh %s: no known_hosts file to add the key to",
				  s->name);
	ssh_known_host(s->host, s->port, host, sizeof(host));
	rc = libssh2_knownhost_addc(kh, host, NULL, key, klen, NULL, 0,
				    LIBSSH2_KNOWNHOST_TYPE_PLAIN |
				    LIBSSH2_KNOWNHOST_KEYENC_RAW | typemask, &store);
	if (rc == 0)
		rc = libssh2_knownhost_writeline(kh, store, line, sizeof(line) - 1,
						 &outlen, LIBSSH2_KNOWNHOST_FILE_OPENSSH);
	if (rc != 0)
		return ll_err_set(err, -EIO, "ssh %s: cannot format known_hosts line: %s",
				  s->name, last_err(s->ss));
	if (outlen == 0 || line[outlen - 1] != '\n')
		line[outlen++] = '\n';
	{
		/* like ssh(1): create the file's directory (~/.ssh) if missing */
		char dir[PATH_MAX], *slash;

		snprintf(dir, sizeof(dir), "%s", t->known_hosts[0]);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			if (mkdir(dir, 0700) < 0 && errno != EEXIST)
				return ll_err_set(err, -errno, "ssh %s: cannot create %s: %s",
						  s->name, dir, strerror(errno));
		}
	}
	fd = open(t->known_hosts[0], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return ll_err_set(err, -errno, "ssh %s: cannot write %s: %s", s->name,
				  t->known_hosts[0], strerror(errno));
	w = write(fd, line, outlen);
	rc = (w == (ssize_t)outlen) ? 0 : -EIO;
	if (close(fd) < 0 || rc < 0)
		return ll_err_set(err, -EIO, "ssh %s: cannot write %s", s->name,
				  t->known_hosts[0]);
	return 0;
}

void ssh_known_host(const char *host, int port, char *buf, size_t len)
{
	if (port > 0 && port != 22)
		snprintf(buf, len, "[%s]:%d", host, port);
	else
		snprintf(buf, len, "%s", host);
}

void ssh_host_name(const char *user, const char *host, int port, char *buf,
		   size_t len)
{
	bool v6 = strchr(host, ':') != NULL;

	snprintf(buf, len, "%s%s%s%s%s:%d", user && *user ? user : "",
		 user && *user ? "@" : "", v6 ? "[" : "", host, v6 ? "]" : "",
		 port > 0 ? port : 22);
}

void ssh_unknown_hint(const struct ssh_target *t, char *buf, size_t len)
{
	int port = t->port > 0 ? t->port : 22;
	char p[16] = "", f[PATH_MAX + 8] = "";
	/* an ssh_config alias (a name ssh -G mapped to another HostName, no
	 * user@ or :port in it) is what the user's ssh takes as it is */
	bool alias = strcmp(t->alias, t->hostname) && !strpbrk(t->alias, "@:[");

	if (port != 22)
		snprintf(p, sizeof(p), "-p %d ", port);
	if (t->config_file[0])
		snprintf(f, sizeof(f), "-F %s ", t->config_file);
	if (alias)
		snprintf(buf, len, "Check the fingerprint (ssh-keyscan %s%s | ssh-keygen -lf -), "
			 "then connect once with --accept-new (or ssh %s%s)", p, t->hostname,
			 f, t->alias);
	else
		snprintf(buf, len, "Check the fingerprint (ssh-keyscan %s%s | ssh-keygen -lf -), "
			 "then connect once with --accept-new (or ssh %s%s%s%s)", p, t->hostname,
			 p, t->user[0] ? t->user : "", t->user[0] ? "@" : "", t->hostname);
}

static int check_hostkey(struct ssh_session *s, const struct ssh_target *t,
			 struct ll_err *err)
{
	LIBSSH2_KNOWNHOSTS *kh;
	struct libssh2_knownhost *found = NULL;
	const char *key, *kname;
	size_t klen = 0;
	int ktype = 0, bit, rc, ret = 0;
	char fp[80], khost[300], hint[700], certnote[PATH_MAX + 160] = "";
	struct known_marks mk;
	bool accept = t->accept_new || strcmp(t->strict, "accept-new") == 0 ||
		      strcmp(t->strict, "no") == 0 || strcmp(t->strict, "off") == 0;

	key = libssh2_session_hostkey(s->ss, &klen, &ktype);
	if (!key)
		return ll_err_set(err, -EPROTO, "ssh %s: no host key: %s", s->name,
				  last_err(s->ss));
	bit = keytype_bit(ktype, &kname);
	fingerprint(s->ss, fp, sizeof(fp));
	ssh_known_host(s->host, s->port, khost, sizeof(khost));
	kh = libssh2_knownhost_init(s->ss);
	if (!kh)
		return ll_err_set(err, -ENOMEM, "ssh %s: knownhost_init: %s", s->name,
				  last_err(s->ss));
	load_known(kh, t, key, klen, &mk);
	if (mk.revoked) {
		libssh2_knownhost_free(kh);
		return ll_err_set(err, -EPERM,
				  "ssh %s: the host key of %s (%s %s) is marked @revoked in %s; refusing to connect (and never adding it)",
				  s->name, khost, kname, fp, mk.revoked_at);
	}
	if (mk.ncert)
		snprintf(certnote, sizeof(certnote),
			 " (%d @cert-authority line%s, first at %s, ignored: host certificates are not supported, only plain host keys)",
			 mk.ncert, mk.ncert == 1 ? "" : "s", mk.cert_at);
	rc = libssh2_knownhost_checkp(kh, s->host, s->port, key, klen,
				      LIBSSH2_KNOWNHOST_TYPE_PLAIN |
				      LIBSSH2_KNOWNHOST_KEYENC_RAW | bit, &found);
	switch (rc) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		break;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
		ret = ll_err_set(err, -EPERM,
				 "ssh %s: REMOTE HOST IDENTIFICATION HAS CHANGED - HOST KEY FOR %s HAS CHANGED (now %s %s); refusing to connect. If the peer was really re-installed, remove its old line: ssh-keygen -R '%s' -f '%s'",
				 s->name, s->host, kname, fp, khost,
				 t->nknown ? t->known_hosts[0] : "~/.ssh/known_hosts");
		break;
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		if (accept) {
			ret = known_append(s, kh, t, key, klen, bit, err);
			break;
		}
		ssh_unknown_hint(t, hint, sizeof(hint));
		ret = ll_err_set(err, -EPERM,
				 "ssh %s: host key for %s is not known (%s %s); refusing to connect. %s, to add it to %s%s",
				 s->name, khost, kname, fp, hint,
				 t->nknown ? t->known_hosts[0] : "~/.ssh/known_hosts", certnote);
		break;
	default:
		ret = ll_err_set(err, -EIO, "ssh %s: host key check failed: %s", s->name,
				 last_err(s->ss));
		break;
	}
	libssh2_knownhost_free(kh);
	return ret;
}

/* Process-wide default prompt (the CLI's tty reader), used when the target
 * carries none. */
static ssh_prompt_fn default_prompt;
static void *default_prompt_ctx;

void ssh_set_default_prompt(ssh_prompt_fn fn, void *ctx)
{
	default_prompt = fn;
	default_prompt_ctx = ctx;
}

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '+') return 62;
	if (c == '/') return 63;
	return -1;
}

/* Big-endian length-prefixed string at *off of the decoded key blob. */
static int blob_str(const unsigned char *b, size_t n, size_t *off,
		    const unsigned char **str, size_t *slen)
{
	uint32_t l;

	if (*off + 4 > n)
		return -1;
	l = (uint32_t)b[*off] << 24 | (uint32_t)b[*off + 1] << 16 |
	    (uint32_t)b[*off + 2] << 8 | b[*off + 3];
	*off += 4;
	if (l > n - *off)
		return -1;
	*str = b + *off;
	*slen = l;
	*off += l;
	return 0;
}

/* the key type and cipher of a decoded "openssh-key-v1" blob: 0, or
 * -EINVAL when it is not one */
static int key_blob_type(const unsigned char *blob, size_t nb, char *type,
			 size_t len, bool *encrypted)
{
	/* PROTOCOL.key: "openssh-key-v1\0", string ciphername, string
	 * kdfname, string kdfoptions, uint32 nkeys, string publickey
	 * (whose first field is the key type) */
	static const char magic[] = "openssh-key-v1";
	const unsigned char *str, *pk;
	size_t off = sizeof(magic), sl, pl, poff = 0;

	if (nb > sizeof(magic) && memcmp(blob, magic, sizeof(magic)) == 0 &&
	    blob_str(blob, nb, &off, &str, &sl) == 0) {
		*encrypted = !(sl == 4 && memcmp(str, "none", 4) == 0);
		if (blob_str(blob, nb, &off, &str, &sl) == 0 &&
		    blob_str(blob, nb, &off, &str, &sl) == 0 && off + 4 <= nb) {
			off += 4;
			if (blob_str(blob, nb, &off, &pk, &pl) == 0 &&
			    blob_str(pk, pl, &poff, &str, &sl) == 0) {
				snprintf(type, len, "%.*s", (int)sl, (const char *)str);
				return 0;
			}
		}
	}
	return -EINVAL;
}

int ssh_key_info(const char *path, char *type, size_t len, bool *encrypted)
{
	FILE *f;
	char line[4096], pub[PATH_MAX + 8];
	unsigned char *blob = NULL;
	size_t nb = 0, cap = 0;
	int in = 0, rc = -EINVAL;
	unsigned acc = 0, bits = 0;

	snprintf(type, len, "unknown");
	*encrypted = false;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!in) {
			if (strstr(line, "-----BEGIN OPENSSH PRIVATE KEY-----")) {
				in = 1;
			} else if (strstr(line, "-----BEGIN ")) {
				/* PEM: the type is in the armour line */
				snprintf(type, len, "%s",
					 strstr(line, " RSA ") ? "ssh-rsa" :
					 strstr(line, " EC ") ? "ecdsa" :
					 strstr(line, " DSA ") ? "ssh-dss" : "unknown");
				if (strstr(line, "ENCRYPTED"))
					*encrypted = true;
				in = 2;
				rc = 0;
			}
			continue;
		}
		if (in == 2) {
			if (strstr(line, "ENCRYPTED"))
				*encrypted = true;
			continue;
		}
		if (strstr(line, "-----END "))
			break;
		for (char *c = line; *c; c++) {
			int v = b64val((unsigned char)*c);

			if (v < 0)
				continue;
			acc = acc << 6 | (unsigned)v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				if (nb == cap) {
					unsigned char *nbuf;

					cap = cap ? cap * 2 : 1024;
					nbuf = realloc(blob, cap);
					if (!nbuf) {
						free(blob);
						fclose(f);
						return -ENOMEM;
					}
					blob = nbuf;
				}
				blob[nb++] = (unsigned char)(acc >> bits);
			}
		}
	}
	fclose(f);
	if (in == 1)
		rc = key_blob_type(blob, nb, type, len, encrypted);
	free(blob);
	if (rc == 0 && strcmp(type, "ecdsa") == 0) {
		/* PEM EC key: the .pub names the curve */
		FILE *pf;

		snprintf(pub, sizeof(pub), "%s.pub", path);
		pf = fopen(pub, "r");
		if (pf) {
			if (fscanf(pf, "%63s", line) == 1)
				snprintf(type, len, "%s", line);
			fclose(pf);
		}
	}
	return rc;
}

/* keyboard-interactive: each question goes to the prompt callback. */
struct kbd_ctx {
	ssh_prompt_fn fn;
	void *ctx;
	int asked;
	bool cancelled;
};

static struct kbd_ctx *kbd_cur;   /* one authentication at a time */

static void kbd_cb(const char *name, int name_len, const char *instruction,
		   int instruction_len, int num_prompts,
		   const LIBSSH2_USERAUTH_KBDINT_PROMPT *prompts,
		   LIBSSH2_USERAUTH_KBDINT_RESPONSE *responses, void **abstract)
{
	int i;

	(void)name; (void)name_len; (void)instruction; (void)instruction_len;
	(void)abstract;
	for (i = 0; i < num_prompts; i++) {
		char q[512], a[512] = "";

		responses[i].text = NULL;
		responses[i].length = 0;
		if (!kbd_cur || !kbd_cur->fn || kbd_cur->cancelled)
			continue;
		snprintf(q, sizeof(q), "%.*s", (int)prompts[i].length,
			 (const char *)prompts[i].text);
		kbd_cur->asked++;
		if (kbd_cur->fn(kbd_cur->ctx, q, prompts[i].echo != 0, a, sizeof(a)) < 0) {
			kbd_cur->cancelled = true;
			continue;
		}
		responses[i].text = strdup(a);
		responses[i].length = responses[i].text ? (unsigned)strlen(a) : 0;
		explicit_bzero(a, sizeof(a));
	}
}

/* Append "; " + text to the list of methods tried. */
__attribute__((format(printf, 4, 5)))
static void note(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*used + 3 >= len)
		return;
	if (*used) {
		memcpy(buf + *used, "; ", 3);
		*used += 2;
	}
	va_start(ap, fmt);
	w = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (w > 0)
		*used += (size_t)w < len - *used ? (size_t)w : len - *used - 1;
}

/* libssh2 signs RSA keys with rsa-sha2-256/512 (RFC 8332, chosen from the
 * server's server-sig-algs) from 1.11.0 on; 1.10 and older only with SHA-1
 * "ssh-rsa", which OpenSSH 8.8 and later refuse by default. */
static bool rsa_sha2_ok(void)
{
	return libssh2_version(0x010b00) != NULL;
}

/* Append why an RSA key was refused and what works to why (len bytes). */
static void rsa_hint(char *why, size_t len)
{
	size_t u = strlen(why);

	snprintf(why + u, len - u,
		 "%slibssh2 %s signs RSA only with SHA-1 ssh-rsa, refused by OpenSSH >= 8.8: "
		 "use an ed25519/ECDSA key or libssh2 >= 1.11",
		 u ? "; " : "", libssh2_version(0));
}

/* The public key blob of identity file priv, from priv.pub or else from
 * the unencrypted public part of an OpenSSH-format private key
 * (PROTOCOL.key). Length, or -1. */
static long identity_blob(const char *priv, unsigned char *out, size_t cap)
{
	char pub[PATH_MAX + 8], *line = NULL, *b64 = NULL, *sp;
	size_t lcap = 0, bl = 0;
	long n = -1;
	FILE *f;

	snprintf(pub, sizeof(pub), "%s.pub", priv);
	f = fopen(pub, "r");
	if (f) {
		if (getline(&line, &lcap, f) > 0 && (sp = strchr(line, ' ')))
			n = b64_decode(sp + 1, out, cap);
		fclose(f);
		free(line);
		return n;
	}
	f = fopen(priv, "r");
	if (!f)
		return -1;
	while (getline(&line, &lcap, f) > 0) {
		size_t l = strcspn(line, "\r\n");
		char *nb;

		if (strstr(line, "-----"))
			continue;
		nb = realloc(b64, bl + l + 1);
		if (!nb)
			break;
		b64 = nb;
		memcpy(b64 + bl, line, l);
		bl += l;
		b64[bl] = '\0';
	}
	fclose(f);
	free(line);
	if (b64) {
		static const char magic[] = "openssh-key-v1";
		unsigned char *k = malloc(bl);
		const unsigned char *str;
		size_t off = sizeof(magic), sl, i;
		long kn = k ? b64_decode(b64, k, bl) : -1;

		for (i = 0; kn > (long)sizeof(magic) && !memcmp(k, magic, sizeof(magic)) && i < 3; i++)
			if (blob_str(k, (size_t)kn, &off, &str, &sl) < 0)
				break;
		if (i == 3 && off + 4 <= (size_t)kn) {
			off += 4;       /* nkeys */
			if (blob_str(k, (size_t)kn, &off, &str, &sl) == 0 && sl <= cap) {
				memcpy(out, str, sl);
				n = (long)sl;
			}
		}
		free(k);
		free(b64);
	}
	return n;
}

/* IdentitiesOnly: true if the agent key blob is one of t's IdentityFiles. */
static bool agent_key_listed(const struct ssh_target *t, const unsigned char *blob,
			     size_t len)
{
	unsigned char pk[4096];
	int i;

	for (i = 0; i < t->nidentity; i++) {
		long n = identity_blob(t->identity[i], pk, sizeof(pk));

		if (n > 0 && (size_t)n == len && memcmp(pk, blob, len) == 0)
			return true;
	}
	return false;
}

/* The agent's keys (IdentitiesOnly: only those of an IdentityFile), each
 * offered in turn. 0 when one is accepted, else -1 with what was tried
 * noted in tried. */
static int auth_agent(struct ssh_session *s, const struct ssh_target *t,
		      int64_t deadline, char *tried, size_t tlen, size_t *used)
{
	LIBSSH2_AGENT *ag = libssh2_agent_init(s->ss);
	struct libssh2_agent_publickey *id = NULL, *prev = NULL;
	char types[160] = "";
	int nids = 0, nskip = 0, rc = -1;

	if (ag && libssh2_agent_connect(ag) == 0 &&
	    libssh2_agent_list_identities(ag) == 0) {
		while (libssh2_agent_get_identity(ag, &id, prev) == 0) {
			size_t tl = strlen(types);
			const unsigned char *kt;
			size_t kl, off = 0;

			prev = id;
			if (t->identities_only &&
			    !agent_key_listed(t, id->blob, id->blob_len)) {
				nskip++;
				continue;
			}
			nids++;
			if (blob_str(id->blob, id->blob_len, &off, &kt, &kl) == 0 &&
			    tl + kl + 3 < sizeof(types))
				snprintf(types + tl, sizeof(types) - tl, "%s%.*s",
					 tl ? " " : "", (int)kl, (const char *)kt);
			while ((rc = libssh2_agent_userauth(ag, t->user, id)) ==
			       LIBSSH2_ERROR_EAGAIN)
				if (wait_io(s, deadline) < 0)
					break;
			if (rc == 0) {
				libssh2_agent_disconnect(ag);
				libssh2_agent_free(ag);
				return 0;
			}
		}
		if (nids) {
			char hint[200] = "";

			if (strstr(types, "ssh-rsa") && !rsa_sha2_ok())
				rsa_hint(hint, sizeof(hint));
			note(tried, tlen, used, "agent (%d key%s refused: %s%s%s)", nids,
			     nids == 1 ? "" : "s", types, hint[0] ? "; " : "", hint);
		} else if (!nskip) {
			note(tried, tlen, used, "agent (no keys)");
		}
		if (nskip)
			note(tried, tlen, used,
			     "agent (%d key%s not offered: IdentitiesOnly yes and not an IdentityFile)",
			     nskip, nskip == 1 ? "" : "s");
	} else {
		note(tried, tlen, used, "agent (cannot connect to %s)",
		     getenv("SSH_AUTH_SOCK"));
	}
	if (ag) {
		libssh2_agent_disconnect(ag);
		libssh2_agent_free(ag);
	}
	return -1;
}

/* publickey authentication with the key file priv, asking for its
 * passphrase (3 tries) when it is protected: 0 when accepted, 1 when not
 * (the reason noted in tried), < 0 on a timeout (err set) */
static int auth_identity(struct ssh_session *s, const struct ssh_target *t,
			 const char *priv, ssh_prompt_fn ask, void *ask_ctx,
			 int64_t *deadline, int timeout_ms, char *tried,
			 size_t tlen, size_t *used, struct ll_err *err)
{
	char pub[PATH_MAX + 8], ktype[64], pass[512] = "", q[PATH_MAX + 64];
	char why[320];
	bool enc = false, key_unread;
	struct stat st;
	int attempt, rc;

	if (stat(priv, &st) != 0)
		return 1;        /* ssh -G lists defaults that may not exist */
	ssh_key_info(priv, ktype, sizeof(ktype), &enc);
	snprintf(pub, sizeof(pub), "%s.pub", priv);
	why[0] = '\0';
	for (attempt = 0; attempt < 3; attempt++) {
		if (enc) {
			if (!ask) {
				snprintf(why, sizeof(why),
					 "passphrase-protected and no way to ask for it: add it to ssh-agent");
				break;
			}
			snprintf(q, sizeof(q), "Enter passphrase for key '%s': ", priv);
			if (ask(ask_ctx, q, false, pass, sizeof(pass)) < 0) {
				snprintf(why, sizeof(why), "passphrase not given");
				break;
			}
			*deadline = now_ms() + timeout_ms;   /* typing time does not count */
		}
		while ((rc = libssh2_userauth_publickey_fromfile_ex(
				s->ss, t->user, (unsigned)strlen(t->user),
				access(pub, R_OK) == 0 ? pub : NULL, priv,
				enc ? pass : NULL)) == LIBSSH2_ERROR_EAGAIN)
			if (wait_io(s, *deadline) < 0) {
				explicit_bzero(pass, sizeof(pass));
				return ll_err_set(err, -ETIMEDOUT,
						  "ssh %s: timed out during publickey authentication with %s",
						  s->name, priv);
			}
		if (rc == 0) {
			explicit_bzero(pass, sizeof(pass));
			return 0;
		}
		/* the private key could not be read: FILE without a
		 * .pub; "Callback returned error" (PUBLICKEY_UNVERIFIED)
		 * when the .pub was accepted but signing failed */
		key_unread = rc == LIBSSH2_ERROR_FILE ||
			     rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED;
		if (key_unread && !enc && ask && strcmp(ktype, "unknown") == 0) {
			enc = true;   /* not readable as a plain key: ask */
			attempt--;
			continue;
		}
		if (key_unread && enc) {
			snprintf(why, sizeof(why), "wrong passphrase, 3 tries");
			continue;
		}
		snprintf(why, sizeof(why), "%s", rc == LIBSSH2_ERROR_AUTHENTICATION_FAILED ?
			 "refused by the server" : last_err(s->ss));
		if (!strcmp(ktype, "ssh-rsa") && !rsa_sha2_ok())
			rsa_hint(why, sizeof(why));
		break;
	}
	explicit_bzero(pass, sizeof(pass));
	note(tried, tlen, used, "publickey %s %s (%s)", ktype, priv,
	     why[0] ? why : "refused");
	return 1;
}

/* Authenticate: agent (if SSH_AUTH_SOCK), each identity file (passphrase
 * asked through the prompt when the key is encrypted), keyboard-interactive,
 * password - each only when the server offers it (ssh(1) order). */
static int authenticate(struct ssh_session *s, const struct ssh_target *t,
			int64_t *deadline, int timeout_ms, struct ll_err *err)
{
	char tried[LL_ERR_MAX - 128] = "";
	size_t used = 0;
	char *methods, offered[256];
	ssh_prompt_fn ask = t->prompt ? t->prompt : default_prompt;
	void *ask_ctx = t->prompt ? t->prompt_ctx : default_prompt_ctx;
	int rc = -1, i;

#define NOTE(...) note(tried, sizeof(tried), &used, __VA_ARGS__)
/* a human answered: the time spent typing does not count */
#define REARM() (*deadline = now_ms() + timeout_ms)

	for (;;) {
		methods = libssh2_userauth_list(s->ss, t->user, (unsigned)strlen(t->user));
		if (methods || libssh2_userauth_authenticated(s->ss))
			break;
		if (libssh2_session_last_errno(s->ss) != LIBSSH2_ERROR_EAGAIN)
			return ll_err_set(err, -EACCES, "ssh %s: cannot list auth methods: %s",
					  s->name, last_err(s->ss));
		if (wait_io(s, *deadline) < 0)
			return ll_err_set(err, -ETIMEDOUT, "ssh %s: timed out during authentication",
					  s->name);
	}
	if (libssh2_userauth_authenticated(s->ss))
		return 0;
	snprintf(offered, sizeof(offered), "%s", methods);

	if (strstr(offered, "publickey") && getenv("SSH_AUTH_SOCK") &&
	    *getenv("SSH_AUTH_SOCK") &&
	    auth_agent(s, t, *deadline, tried, sizeof(tried), &used) == 0)
		return 0;
	for (i = 0; strstr(offered, "publickey") && i < t->nidentity; i++) {
		rc = auth_identity(s, t, t->identity[i], ask, ask_ctx, deadline,
				   timeout_ms, tried, sizeof(tried), &used, err);
		if (rc <= 0)
			return rc;
	}
	if (strstr(offered, "keyboard-interactive")) {
		struct kbd_ctx kc = {ask, ask_ctx, 0, false};

		if (!ask) {
			NOTE("keyboard-interactive (no way to ask)");
		} else {
			kbd_cur = &kc;
			while ((rc = libssh2_userauth_keyboard_interactive_ex(
					s->ss, t->user, (unsigned)strlen(t->user), kbd_cb)) ==
			       LIBSSH2_ERROR_EAGAIN) {
				if (kc.asked)
					REARM();
				if (wait_io(s, *deadline) < 0)
					break;
			}
			kbd_cur = NULL;
			if (rc == 0)
				return 0;
			NOTE("keyboard-interactive (%s)", kc.cancelled ? "cancelled" :
			     rc == LIBSSH2_ERROR_EAGAIN ? "timed out" : "rejected");
		}
	}
	if (strstr(offered, "password")) {
		char q[400], pass[512] = "";

		snprintf(q, sizeof(q), "%s@%s's password: ", t->user, s->host);
		if (!ask) {
			NOTE("password (no way to ask)");
		} else if (ask(ask_ctx, q, false, pass, sizeof(pass)) < 0) {
			NOTE("password (not given)");
		} else {
			REARM();
			while ((rc = libssh2_userauth_password_ex(
					s->ss, t->user, (unsigned)strlen(t->user), pass,
					(unsigned)strlen(pass), NULL)) == LIBSSH2_ERROR_EAGAIN)
				if (wait_io(s, *deadline) < 0)
					break;
			explicit_bzero(pass, sizeof(pass));
			if (rc == 0)
				return 0;
			NOTE("password (%s)", rc == LIBSSH2_ERROR_PASSWORD_EXPIRED ?
			     "expired" : rc == LIBSSH2_ERROR_EAGAIN ? "timed out" : "rejected");
		}
	}
#undef NOTE
#undef REARM
	return ll_err_set(err, -EACCES, "ssh %s: authentication failed as %s (server offers %s); tried: %s",
			  s->name, t->user, offered,
			  used ? tried : "no agent and no readable IdentityFile");
}

int ssh_open(struct ssh_session **out, const struct ssh_target *t,
	     int timeout_ms, struct ll_err *err)
{
	struct ssh_session *s;
	int64_t deadline;
	int rc;

	*out = NULL;
	pthread_once(&init_once, do_init);
	if (init_rc != 0)
		return ll_err_set(err, -EIO, "ssh: libssh2_init failed (%d)", init_rc);
	if (timeout_ms <= 0)
		timeout_ms = 10000;
	deadline = now_ms() + timeout_ms;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ll_err_set(err, -ENOMEM, "ssh: out of memory");
	snprintf(s->host, sizeof(s->host), "%s", t->hostname);
	s->port = t->port > 0 ? t->port : 22;
	ssh_host_name(t->user, s->host, s->port, s->name, sizeof(s->name));
	if (t->proxyjump[0] && strcmp(t->proxyjump, "none") != 0)
		s->sock = jump_connect(s, t, err);
	else
		s->sock = tcp_connect(s->host, s->port, deadline, err);
	if (s->sock < 0) {
		rc = s->sock;
		free(s);
		return rc;
	}
	s->ss = libssh2_session_init_ex(NULL, NULL, NULL, s);
	if (!s->ss) {
		close(s->sock);
		free(s);
		return ll_err_set(err, -ENOMEM, "ssh: libssh2_session_init failed");
	}
	libssh2_session_set_blocking(s->ss, 0);
#ifdef LIBSSH2_METHOD_SIGN
	/* libssh2 >= 1.11: RSA user keys sign with SHA-2 when the server's
	 * server-sig-algs allows it (RFC 8332), SHA-1 ssh-rsa last */
	libssh2_session_method_pref(s->ss, LIBSSH2_METHOD_SIGN,
				    "rsa-sha2-512,rsa-sha2-256,ssh-rsa");
#endif
	while ((rc = libssh2_session_handshake(s->ss, s->sock)) == LIBSSH2_ERROR_EAGAIN)
		if (wait_io(s, deadline) < 0)
			break;
	if (rc != 0) {
		rc = rc == LIBSSH2_ERROR_EAGAIN
			? ll_err_set(err, -ETIMEDOUT, "ssh %s: handshake timed out", s->name)
			: ll_err_set(err, -EPROTO, "ssh %s: handshake failed: %s%s%s%s", s->name,
				     last_err(s->ss),
				     s->jump_pid ? " (through ProxyJump " : "",
				     s->jump_pid ? t->proxyjump : "",
				     s->jump_pid ? ": the jump failed? try ssh -J JUMP HOST to see why)" : "");
		ssh_close(s);
		return rc;
	}
	rc = check_hostkey(s, t, err);
	if (rc == 0)
		rc = authenticate(s, t, &deadline, timeout_ms, err);
	if (rc < 0) {
		ssh_close(s);
		return rc;
	}
	libssh2_keepalive_config(s->ss, 1, SSH_KEEPALIVE_S);
	*out = s;
	return 0;
}

void ssh_close(struct ssh_session *s)
{
	struct ssh_proc *p;

	if (!s)
		return;
	for (p = s->procs; p; p = p->next) {
		p->s = NULL;     /* channel is freed with the session */
		p->ch = NULL;
	}
	if (s->sh)
		shell_drop(s);
	if (s->ss) {
		int64_t deadline = now_ms() + (s->stalled ? 0 : 1000);

		while (libssh2_session_disconnect(s->ss, "linklab done") ==
		       LIBSSH2_ERROR_EAGAIN)
			if (wait_io(s, deadline) < 0)
				break;
		libssh2_session_free(s->ss);
	}
	if (s->sock >= 0)
		close(s->sock);
	if (s->jump_pid > 0) {
		/* the helper ends at EOF on its stdin; make sure */
		int st;

		kill(s->jump_pid, SIGTERM);
		waitpid(s->jump_pid, &st, 0);
	}
	free(s);
}

const char *ssh_name(const struct ssh_session *s)
{
	return s ? s->name : "(no session)";
}

bool ssh_stalled(const struct ssh_session *s)
{
	return s && s->stalled;
}

int ssh_fd(const struct ssh_session *s)
{
	return s ? s->sock : -1;
}

int ssh_addrs(const struct ssh_session *s, char *local, size_t llen,
	      int *lport, char *peer, size_t plen, int *pport)
{
	struct sockaddr_storage a;
	socklen_t sl;
	int i;

	if (!s || s->sock < 0)
		return -ENOTCONN;
	for (i = 0; i < 2; i++) {
		char *buf = i ? peer : local;
		size_t len = i ? plen : llen;
		int *port = i ? pport : lport;
		char serv[16];

		sl = sizeof(a);
		if ((i ? getpeername(s->sock, (struct sockaddr *)&a, &sl)
		       : getsockname(s->sock, (struct sockaddr *)&a, &sl)) < 0)
			return -errno;
		if (getnameinfo((struct sockaddr *)&a, sl, buf, (socklen_t)len, serv,
				sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
			return -EINVAL;
		/* IPv4-mapped IPv6 reads as the IPv4 address */
		if (strncmp(buf, "::ffff:", 7) == 0 && strchr(buf, '.'))
			memmove(buf, buf + 7, strlen(buf + 7) + 1);
		if (port)
			*port = atoi(serv);
	}
	return 0;
}

/* Open a session channel and exec cmd on it. */
static LIBSSH2_CHANNEL *open_exec(struct ssh_session *s, const char *cmd,
				  int64_t deadline, struct ll_err *err)
{
	LIBSSH2_CHANNEL *ch;
	int rc;

	while (!(ch = libssh2_channel_open_session(s->ss))) {
		if (libssh2_session_last_errno(s->ss) != LIBSSH2_ERROR_EAGAIN) {
			ll_err_set(err, -EIO, "ssh %s: cannot open a channel: %s", s->name,
				   last_err(s->ss));
			return NULL;
		}
		if (wait_io(s, deadline) < 0) {
			ll_err_set(err, -ETIMEDOUT, "ssh %s: timed out opening a channel",
				   s->name);
			return NULL;
		}
	}
	while ((rc = libssh2_channel_exec(ch, cmd)) == LIBSSH2_ERROR_EAGAIN)
		if (wait_io(s, deadline) < 0)
			break;
	if (rc != 0) {
		ll_err_set(err, rc == LIBSSH2_ERROR_EAGAIN ? -ETIMEDOUT : -EIO,
			   "ssh %s: cannot run command: %s", s->name,
			   rc == LIBSSH2_ERROR_EAGAIN ? "timed out" : last_err(s->ss));
		libssh2_channel_free(ch);
		return NULL;
	}
	return ch;
}

struct growbuf {
	char *p;
	size_t n, cap;
	bool over;                /* more than SSH_OUT_MAX arrived */
	char tail[64];            /* the last bytes, kept even when over */
	size_t ntail;
	size_t total;             /* bytes seen */
};

/* Keep the last sizeof(tail) bytes seen (the exit-status marker). */
static void gb_tail(struct growbuf *b, const char *d, size_t n)
{
	size_t keep;

	if (n >= sizeof(b->tail)) {
		memcpy(b->tail, d + n - sizeof(b->tail), sizeof(b->tail));
		b->ntail = sizeof(b->tail);
		return;
	}
	keep = b->ntail + n > sizeof(b->tail) ? sizeof(b->tail) - n : b->ntail;
	memmove(b->tail, b->tail + b->ntail - keep, keep);
	memcpy(b->tail + keep, d, n);
	b->ntail = keep + n;
}

static int gb_add(struct growbuf *b, const char *d, size_t n)
{
	gb_tail(b, d, n);
	b->total += n;
	if (b->n + n > SSH_OUT_MAX) {
		b->over = true;
		n = SSH_OUT_MAX - b->n;
	}
	if (b->n + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 4096;
		char *np;

		while (nc < b->n + n + 1)
			nc *= 2;
		np = realloc(b->p, nc);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
	b->p[b->n] = '\0';
	return 0;
}

/* Drop the persistent shell (after a timeout or an error: its state is
 * unknown); the next command starts a new one. */
static void shell_drop(struct ssh_session *s)
{
	int64_t deadline = now_ms() + (s->stalled ? 0 : 500);

	if (!s->sh)
		return;
	while (libssh2_channel_close(s->sh) == LIBSSH2_ERROR_EAGAIN)
		if (wait_io(s, deadline) < 0)
			break;
	libssh2_channel_free(s->sh);
	s->sh = NULL;
}

/* Cut what b keeps back to the first at bytes of the stream (a tag at its
 * end; at counts every byte seen, kept or not). */
static void gb_cut(struct growbuf *b, size_t at)
{
	if (at < b->n) {
		b->n = at;
		b->p[b->n] = '\0';
	}
}

/* The stream ends in "\n" RC_MARK "N" TAG (TAG ends in '\n'): 0, *st = N
 * and the marker cut off what is kept; -1 if it does not (yet). Looks at
 * the last bytes (b->tail), so a marker after SSH_OUT_MAX is found too. */
static int gb_rc_marker(struct growbuf *b, const char *tag, int *st)
{
	size_t ml = strlen("\n" RC_MARK), tl = strlen(tag);
	const char *end = b->tail + b->ntail, *x;

	for (x = b->tail; x + ml + 1 + tl <= end; x++) {
		const char *d = x + ml;
		long v = 0;
		bool neg = false;

		if (memcmp(x, "\n" RC_MARK, ml) != 0)
			continue;
		if (*d == '-') {
			neg = true;
			d++;
		}
		if (d >= end || *d < '0' || *d > '9')
			continue;
		while (d < end && *d >= '0' && *d <= '9' && v < 100000)
			v = v * 10 + (*d++ - '0');
		if (d + tl != end || memcmp(d, tag, tl) != 0)
			continue;
		*st = (int)(neg ? -v : v);
		gb_cut(b, b->total - (size_t)(end - x));
		return 0;
	}
	return -1;
}

/* The stream ends in tag: true, and the tag cut off what is kept. */
static bool gb_end_tag(struct growbuf *b, const char *tag)
{
	size_t tl = strlen(tag);

	if (b->ntail < tl || memcmp(b->tail + b->ntail - tl, tag, tl) != 0)
		return false;
	gb_cut(b, b->total - tl);
	return true;
}

/* How reading a command's output ends. otag set (the persistent shell):
 * when stdout ends in the status marker with that tag and stderr in etag.
 * otag NULL (a channel of its own): at EOF. */
struct exec_end {
	const char *otag, *etag;
	int status;               /* the marker's exit status (otag set) */
};

/* Read ch's stdout into bo and its stderr into be until the end e says.
 * 0: both tags seen; 1: EOF (with tags: the shell ended first); -EIO, or
 * -ETIMEDOUT past deadline (the session then marked stalled), with err. */
static int exec_read(struct ssh_session *s, LIBSSH2_CHANNEL *ch, struct growbuf *bo,
		     struct growbuf *be, struct exec_end *e, int64_t deadline,
		     int timeout_ms, const char *cmd, struct ll_err *err)
{
	bool got_o = false, got_e = false;
	char buf[16384];

	for (;;) {
		if (e->otag && got_o && got_e)
			return 0;
		ssize_t n1 = libssh2_channel_read(ch, buf, sizeof(buf));

		if (n1 > 0) {
			if (gb_add(bo, buf, (size_t)n1) < 0)
				return ll_err_set(err, -ENOMEM, "ssh: out of memory");
			if (e->otag && !got_o)
				got_o = gb_rc_marker(bo, e->otag, &e->status) == 0;
			continue;
		}
		ssize_t n2 = libssh2_channel_read_stderr(ch, buf, sizeof(buf));

		if (n2 > 0) {
			if (gb_add(be, buf, (size_t)n2) < 0)
				return ll_err_set(err, -ENOMEM, "ssh: out of memory");
			if (e->etag && !got_e)
				got_e = gb_end_tag(be, e->etag);
			continue;
		}
		if (libssh2_channel_eof(ch))
			return 1;
		if ((n1 < 0 && n1 != LIBSSH2_ERROR_EAGAIN) ||
		    (n2 < 0 && n2 != LIBSSH2_ERROR_EAGAIN))
			return ll_err_set(err, -EIO, "ssh %s: reading command output: %s",
					  s->name, last_err(s->ss));
		if (n1 == 0 && n2 == 0)
			return 1;
		if (wait_io(s, deadline) < 0) {
			ssh_mark_stalled(s, timeout_ms);
			return ll_err_set(err, -ETIMEDOUT,
					  "ssh %s: command did not finish within %d ms: %.80s",
					  s->name, timeout_ms, cmd);
		}
	}
}

/* The channel reports the command killed by a signal: -EPROTO with err
 * (*exit_status 128); 0 if not. */
static int exec_killed(struct ssh_session *s, LIBSSH2_CHANNEL *ch, const char *cmd,
		       int *exit_status, struct ll_err *err)
{
	char *sig = NULL;
	size_t siglen = 0;
	int rc = 0;

	libssh2_channel_get_exit_signal(ch, &sig, &siglen, NULL, NULL, NULL, NULL);
	if (sig && siglen) {
		rc = ll_err_set(err, -EPROTO,
				"ssh %s: command killed by signal %.*s, no exit status: %.80s",
				s->name, (int)siglen, sig, cmd);
		if (exit_status)
			*exit_status = 128;
	}
	free(sig);
	return rc;
}

/* The shell line that runs cmd under sh -c and then prints the status
 * marker "\n" RC_MARK "N" TAG on stdout. shell (the persistent shell):
 * stdin from /dev/null, etag printed on stderr after it, the shell stays;
 * else the channel's shell exits with the command's status. NULL: out of
 * memory. tag and etag without their '\n'. */
static char *exec_line(const char *cmd, bool shell, const char *tag, const char *etag)
{
	size_t ql = strlen(cmd) * 4 + 3, ll = ql + 160;
	char *q = malloc(ql), *line = malloc(ll);

	if (!q || !line || quote_word(cmd, q, ql) < 0) {
		free(q);
		free(line);
		return NULL;
	}
	if (shell)
		snprintf(line, ll, "sh -c %s </dev/null; printf '\\n" RC_MARK "%%d%s\\n' $?; "
			 "printf '%s\\n' >&2\n", q, tag, etag);
	else
		snprintf(line, ll, "sh -c %s; s=$?; printf '\\n" RC_MARK "%%d%s\\n' \"$s\"; "
			 "exit \"$s\"", q, tag);
	free(q);
	return line;
}

/* Write all of line to the persistent shell. 0, or -ETIMEDOUT / -EIO with
 * err (the shell dropped). */
static int shell_send(struct ssh_session *s, const char *line, int64_t deadline,
		      int timeout_ms, struct ll_err *err)
{
	size_t off = 0, len = strlen(line);

	while (off < len) {
		ssize_t n = libssh2_channel_write(s->sh, line + off, len - off);

		if (n > 0) {
			off += (size_t)n;
		} else if (n == LIBSSH2_ERROR_EAGAIN) {
			if (wait_io(s, deadline) < 0) {
				ssh_mark_stalled(s, timeout_ms);
				shell_drop(s);
				return ll_err_set(err, -ETIMEDOUT, "ssh %s: cannot send the command within %d ms",
						  s->name, timeout_ms);
			}
		} else {
			shell_drop(s);
			return ll_err_set(err, -EIO, "ssh %s: sending a command: %s", s->name,
					  last_err(s->ss));
		}
	}
	return 0;
}

/* Run cmd through the persistent shell: one round trip, no channel or
 * login-shell start-up per command. The shell gets
 *   sh -c 'CMD' </dev/null; printf '\n__linklab_rc=%d_SEQ\n' $?; printf '_end_SEQ\n' >&2
 * and both streams are read until their end tag (the command's output
 * never hides a tag: SEQ changes every command). 1 = the shell is not
 * usable (caller falls back to a channel), 0 or negative errno. */
static int shell_exec(struct ssh_session *s, const char *cmd, struct growbuf *bo,
		      struct growbuf *be, int *exit_status, int64_t deadline,
		      int timeout_ms, struct ll_err *err)
{
	char tag[40], etag[48], *line;
	struct exec_end e = { tag, etag, -1 };
	int rc;

	if (s->no_shell)
		return 1;
	if (!s->sh) {
		s->sh = open_exec(s, "exec /bin/sh", deadline, NULL);
		if (!s->sh) {
			s->no_shell = true;
			return 1;
		}
	}
	s->seq++;
	snprintf(tag, sizeof(tag), "_%u_%lx", s->seq, (unsigned long)(uintptr_t)s & 0xffffff);
	snprintf(etag, sizeof(etag), "_end%s", tag);
	line = exec_line(cmd, true, tag, etag);
	if (!line)
		return ll_err_set(err, -ENOMEM, "ssh: out of memory");
	strcat(tag, "\n");
	strcat(etag, "\n");
	rc = shell_send(s, line, deadline, timeout_ms, err);
	free(line);
	if (rc < 0)
		return rc;
	rc = exec_read(s, s->sh, bo, be, &e, deadline, timeout_ms, cmd, err);
	if (rc == 1) {
		rc = exec_killed(s, s->sh, cmd, exit_status, err);
		if (rc == 0)
			rc = ll_err_set(err, -EPROTO,
					"ssh %s: the peer sent no exit status (shell ended): %.80s",
					s->name, cmd);
	}
	if (rc < 0) {
		shell_drop(s);
		return rc;
	}
	if (exit_status)
		*exit_status = e.status;
	return 0;
}

/* Run cmd on a channel of its own (when the persistent shell cannot be
 * started): its login shell runs it under sh -c and prints the status
 * marker, which tells a missing exit-status (libssh2 1.10 reports it as 0)
 * from a real 0. 0 or negative errno with err. */
static int channel_exec(struct ssh_session *s, const char *cmd, struct growbuf *bo,
			struct growbuf *be, int *exit_status, int64_t deadline,
			int timeout_ms, struct ll_err *err)
{
	struct exec_end e = { NULL, NULL, -1 };
	LIBSSH2_CHANNEL *ch;
	char *line = exec_line(cmd, false, "", "");
	int rc, st;

	if (!line)
		return ll_err_set(err, -ENOMEM, "ssh: out of memory");
	ch = open_exec(s, line, deadline, err);
	free(line);
	if (!ch)
		return err ? err->code : -EIO;
	rc = exec_read(s, ch, bo, be, &e, deadline, timeout_ms, cmd, err);
	if (rc == 1) {
		while (libssh2_channel_close(ch) == LIBSSH2_ERROR_EAGAIN)
			if (wait_io(s, deadline) < 0)
				break;
		while (libssh2_channel_wait_closed(ch) == LIBSSH2_ERROR_EAGAIN)
			if (wait_io(s, deadline) < 0)
				break;
		rc = exec_killed(s, ch, cmd, exit_status, err);
		if (rc == 0 && gb_rc_marker(bo, "\n", &st) < 0)
			rc = ll_err_set(err, -EPROTO, "ssh %s: the peer sent no exit status: %.80s",
					s->name, cmd);
		else if (rc == 0 && exit_status)
			*exit_status = st;
	}
	libssh2_channel_free(ch);
	return rc;
}

/* ssh_exec's outputs emptied; 0, or why no command can run on s. */
static int exec_begin(struct ssh_session *s, char **out, char **err_text,
		      int *exit_status, struct ll_err *err)
{
	if (out)
		*out = NULL;
	if (err_text)
		*err_text = NULL;
	if (exit_status)
		*exit_status = -1;
	if (!s || !s->ss)
		return ll_err_set(err, -ENOTCONN, "ssh: not connected");
	return s->stalled ? stalled_err(s, err) : 0;
}

int ssh_exec(struct ssh_session *s, const char *cmd, char **out,
	     char **err_text, int *exit_status, int timeout_ms,
	     struct ll_err *err)
{
	struct growbuf bo = {0}, be = {0};
	int64_t deadline;
	int rc;

	rc = exec_begin(s, out, err_text, exit_status, err);
	if (rc < 0)
		return rc;
	if (timeout_ms <= 0)
		timeout_ms = 30000;
	deadline = now_ms() + timeout_ms;
	if (gb_add(&bo, "", 0) < 0 || gb_add(&be, "", 0) < 0)
		rc = ll_err_set(err, -ENOMEM, "ssh: out of memory");
	else
		rc = shell_exec(s, cmd, &bo, &be, exit_status, deadline, timeout_ms, err);
	if (rc == 1)
		rc = channel_exec(s, cmd, &bo, &be, exit_status, deadline, timeout_ms, err);
	if (rc < 0) {
		free(bo.p);
		free(be.p);
		return rc;
	}
	if (out)
		*out = bo.p;
	else
		free(bo.p);
	if (err_text)
		*err_text = be.p;
	else
		free(be.p);
	return 0;
}

int ssh_spawn(struct ssh_session *s, const char *cmd, struct ssh_proc **out,
	      struct ll_err *err)
{
	struct ssh_proc *p;

	*out = NULL;
	if (!s || !s->ss)
		return ll_err_set(err, -ENOTCONN, "ssh: not connected");
	if (s->stalled)
		return stalled_err(s, err);
	p = calloc(1, sizeof(*p));
	if (!p)
		return ll_err_set(err, -ENOMEM, "ssh: out of memory");
	p->ch = open_exec(s, cmd, now_ms() + 10000, err);
	if (!p->ch) {
		free(p);
		return err ? err->code : -EIO;
	}
	p->s = s;
	p->next = s->procs;
	s->procs = p;
	*out = p;
	return 0;
}

int ssh_spawn_readline(struct ssh_proc *p, char *line, size_t len,
		       int timeout_ms, struct ll_err *err)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);

	if (!p || !p->s || !p->ch)
		return ll_err_set(err, -ENOTCONN, "ssh: spawned command is closed");
	for (;;) {
		char *nl = memchr(p->buf, '\n', p->nbuf);
		ssize_t n;

		if (nl || (p->eof && p->nbuf) || p->nbuf == sizeof(p->buf)) {
			size_t l = nl ? (size_t)(nl - p->buf) : p->nbuf;
			size_t c = l < len - 1 ? l : len - 1;

			memcpy(line, p->buf, c);
			line[c] = '\0';
			if (c && line[c - 1] == '\r')
				line[--c] = '\0';
			l += nl ? 1 : 0;
			memmove(p->buf, p->buf + l, p->nbuf - l);
			p->nbuf -= l;
			return (int)c;
		}
		if (p->eof)
			return ll_err_set(err, -ENODATA, "ssh %s: command ended%s%.*s",
					  p->s->name, p->nerr ? ": " : "",
					  (int)strcspn(p->errbuf, "\n"), p->errbuf);
		n = libssh2_channel_read(p->ch, p->buf + p->nbuf, sizeof(p->buf) - p->nbuf);
		if (n > 0) {
			p->nbuf += (size_t)n;
			continue;
		}
		if (p->nerr < sizeof(p->errbuf) - 1) {
			ssize_t m = libssh2_channel_read_stderr(
				p->ch, p->errbuf + p->nerr, sizeof(p->errbuf) - 1 - p->nerr);

			if (m > 0) {
				p->nerr += (size_t)m;
				p->errbuf[p->nerr] = '\0';
				continue;
			}
		}
		if (n == 0 || libssh2_channel_eof(p->ch)) {
			p->eof = true;
			continue;
		}
		if (n != LIBSSH2_ERROR_EAGAIN)
			return ll_err_set(err, -EIO, "ssh %s: reading from command: %s",
					  p->s->name, last_err(p->s->ss));
		if (wait_io(p->s, deadline) < 0)
			return ll_err_set(err, -ETIMEDOUT,
					  "ssh %s: no line from the command within %d ms",
					  p->s->name, timeout_ms);
	}
}

int ssh_spawn_write(struct ssh_proc *p, const char *data, size_t len,
		    int timeout_ms, struct ll_err *err)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 5000);
	size_t off = 0;

	if (!p || !p->s || !p->ch)
		return ll_err_set(err, -ENOTCONN, "ssh: spawned command is closed");
	while (off < len) {
		ssize_t n = libssh2_channel_write(p->ch, data + off, len - off);

		if (n > 0) {
			off += (size_t)n;
		} else if (n == LIBSSH2_ERROR_EAGAIN) {
			if (wait_io(p->s, deadline) < 0)
				return ll_err_set(err, -ETIMEDOUT, "ssh %s: writing to a command timed out",
						  p->s->name);
		} else {
			return ll_err_set(err, -EIO, "ssh %s: writing to a command: %s",
					  p->s->name, last_err(p->s->ss));
		}
	}
	return 0;
}

void ssh_spawn_close(struct ssh_proc *p)
{
	struct ssh_proc **pp;

	if (!p)
		return;
	if (p->s) {
		int64_t deadline = now_ms() + (p->s->stalled ? 0 : 2000);

		for (pp = &p->s->procs; *pp; pp = &(*pp)->next)
			if (*pp == p) {
				*pp = p->next;
				break;
			}
		if (p->ch) {
			while (libssh2_channel_close(p->ch) == LIBSSH2_ERROR_EAGAIN)
				if (wait_io(p->s, deadline) < 0)
					break;
			libssh2_channel_free(p->ch);
		}
	}
	free(p);
}

int ssh_alive(struct ssh_session *s, struct ll_err *err)
{
	int st = -1, rc;

	rc = ssh_exec(s, "true", NULL, NULL, &st, 5000, err);
	if (rc < 0)
		return rc;
	if (st != 0)
		return ll_err_set(err, -EIO, "ssh %s: `true` exited %d", s->name, st);
	return 0;
}

int ssh_keepalive(struct ssh_session *s, int *next_s, struct ll_err *err)
{
	int next = SSH_KEEPALIVE_S, rc;

	if (!s || !s->ss)
		return ll_err_set(err, -ENOTCONN, "ssh: not connected");
	rc = libssh2_keepalive_send(s->ss, &next);
	if (s->sh) {
		/* pump the transport: replies to the server's own keepalives
		 * (sshd ClientAliveInterval) are sent only while libssh2 reads;
		 * between commands the shell has nothing to say */
		char sink[512];
		ssize_t n;

		while ((n = libssh2_channel_read_stderr(s->sh, sink, sizeof(sink))) > 0)
			;
		if (n < 0 && n != LIBSSH2_ERROR_EAGAIN)
			return ll_err_set(err, -EIO, "ssh %s: session lost: %s", s->name,
					  last_err(s->ss));
		if (libssh2_channel_eof(s->sh))
			shell_drop(s);
	}
	if (next_s)
		*next_s = next;
	if (rc != 0 && rc != LIBSSH2_ERROR_EAGAIN)
		return ll_err_set(err, -EIO, "ssh %s: keepalive failed: %s", s->name,
				  last_err(s->ss));
	return 0;
}
