/* SPDX-License-Identifier: MIT */
/* peer_remote.c - the remote peer backend: ip/tc commands over the SSH
 * session, output read as JSON (ip -j, tc -j) through tcjson.c. Every word of
 * every command goes through tccmd_quote(); interface names are validated
 * first (kernel dev_valid_name rules: 1..15 chars, not "." or "..", no '/',
 * ':' or whitespace). The original root qdisc of a device is journalled in
 * memory and on the peer under /run/linklab/ before the first change. */
#include "linklab/peer/peer.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <linux/pkt_sched.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "linklab/netlink/flowfilter.h"
#include "linklab/peer/enghook.h"
#include "linklab/peer/hosttune.h"
#include "linklab/peer/peer_lock.h"
#include "linklab/model/impair.h"
#include "linklab/remote/ssh.h"
#include "linklab/remote/sshcfg.h"
#include "linklab/remote/tccmd.h"
#include "linklab/remote/tcjson.h"
#include "linklab/remote/tctree.h"

#define RJ_MAX 8
#define CMD_MAX 8192
#define JOURNAL_DIR "/run/linklab"

struct rjournal {
	char dev[IF_NAMESIZE];
	char *orig;               /* tc -j qdisc show dev X before linklab */
};

struct remote {
	struct ssh_session *s;
	struct ssh_target t;
	unsigned hz;              /* peer's CONFIG_HZ, 0 = not probed yet */
	struct rjournal j[RJ_MAX];
	char nsid[24];            /* peer's netns inode: journals per netns */
	char probe_err[768];      /* why the netns probe failed ("" = fine) */
	char notes[2048];         /* for the user after clear (peer_ops.notes) */
	struct ssh_proc *srv;
	long srv_pid;
	int srv_port;
	/* the session's safety (--force, --exclude-ssh, revert timers) */
	struct peer_safety safety;
	struct peer_sshflow sshflow;
	bool sshflow_known;
	long armed[RJ_MAX];       /* revert timers not yet disarmed */
	char armed_dev[RJ_MAX][IF_NAMESIZE];  /* ... and their devices */
	struct ssh_proc *guard;   /* safety.hold: restores on session loss */
	struct ssh_proc *keeper;  /* owner record holder (peer_lock.h) */
	bool tuned;               /* offloads/sysctls changed in this session */
	bool abandoned;           /* closed as lost (remote_abandon): the
				   * guard is left to restore */
	char warn[512];
	int engine_mode;          /* enum enghook_mode */
	int exclude_port;         /* --exclude-ssh: the engine skips this TCP port */
	bool no_netem;            /* the peer's kernel refused netem */
	bool engine_used;         /* an endpoint engine was started this session */
	char engine_dev[RJ_MAX][IF_NAMESIZE];  /* ... on these interfaces */
};

static struct remote *remote_of(struct peer *p)
{
	return p->priv;
}

static int valid_ifname(const char *dev, struct ll_err *err)
{
	size_t n = dev ? strlen(dev) : 0, i;

	if (n == 0 || n >= IF_NAMESIZE || strcmp(dev, ".") == 0 ||
	    strcmp(dev, "..") == 0)
		return ll_err_set(err, -EINVAL,
				  "interface name \"%s\" is invalid (1..%d characters)",
				  dev ? dev : "", IF_NAMESIZE - 1);
	for (i = 0; i < n; i++)
		if (dev[i] == '/' || dev[i] == ':' || isspace((unsigned char)dev[i]) ||
		    !isprint((unsigned char)dev[i]))
			return ll_err_set(err, -EINVAL,
					  "interface name \"%s\" is invalid (no '/', ':', whitespace or control characters)",
					  dev);
	return 0;
}

/* Append the quoted word to cmd (space-separated). */
static int addw(char *cmd, size_t len, const char *word)
{
	size_t u = strlen(cmd);
	int rc;

	if (u && u + 1 < len)
		cmd[u++] = ' ', cmd[u] = '\0';
	rc = tccmd_quote(word, cmd + u, len - u);
	return rc < 0 ? -ENOSPC : 0;
}

/* Append raw shell text (operators, redirections we wrote ourselves). */
static int addraw(char *cmd, size_t len, const char *raw)
{
	size_t u = strlen(cmd);

	if ((size_t)snprintf(cmd + u, len - u, "%s%s", u ? " " : "", raw) >= len - u)
		return -ENOSPC;
	return 0;
}

/* First line of text (for messages). */
static const char *first_line(const char *s, char *buf, size_t len)
{
	size_t n;

	while (s && (*s == '\n' || *s == ' '))
		s++;
	if (!s || !*s)
		return "no message";
	n = strcspn(s, "\n");
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), s);
	return buf;
}

/* The bound on one remote command, seconds (peer_safety.timeout_s). */
static int peer_timeout_s(const struct remote *r)
{
	return r->safety.timeout_s > 0 ? r->safety.timeout_s : PEER_TIMEOUT_S;
}

/* Run cmd on the peer; a non-zero exit is -EIO with its stderr. *out (if
 * given) gets stdout; *errt (if given) gets stderr even on failure. */
static int run(struct remote *r, const char *cmd, const char *what,
	       char **out, char **errt, struct ll_err *err)
{
	char *o = NULL, *e = NULL, line[300];
	int st = -1, rc;

	if (out)
		*out = NULL;
	if (errt)
		*errt = NULL;
	if (ssh_stalled(r->s))
		return ll_err_set(err, -ETIMEDOUT,
				  "peer %s did not answer within %d s: %s not run (raise the bound with --peer-timeout SEC)",
				  r->t.alias, peer_timeout_s(r), what);
	rc = ssh_exec(r->s, cmd, &o, &e, &st, peer_timeout_s(r) * 1000, err);
	/* the session answers: a beat for the hold guard (guard_refresh) */
	if (rc == 0 && r->guard)
		ssh_spawn_write(r->guard, "beat\n", 5, 1000, NULL);
	if (rc == -ETIMEDOUT)
		return ll_err_set(err, -ETIMEDOUT,
				  "peer %s did not answer within %d s (%s; raise the bound with --peer-timeout SEC)",
				  r->t.alias, peer_timeout_s(r), what);
	if (rc < 0)
		return rc;
	if (st != 0) {
		rc = ll_err_set(err, st == 127 ? -ENOENT : -EIO,
				"peer %s: %s failed (exit %d): %s", r->t.alias, what,
				st, first_line(e && *e ? e : o, line, sizeof(line)));
		free(o);
		if (errt)
			*errt = e;
		else
			free(e);
		return rc;
	}
	if (out)
		*out = o;
	else
		free(o);
	if (errt)
		*errt = e;
	else
		free(e);
	return 0;
}

static int remote_list_links(struct peer *p, struct link_list *out,
			     struct ll_err *err)
{
	struct remote *r = remote_of(p);
	char *o = NULL;
	int rc;

	char *nl, *line;
	int k;

	/* the JSON on one line, then "/sys/class/net/NAME/speed:MBPS" lines */
	rc = run(r, "ip -j addr show && { grep -H . /sys/class/net/*/speed 2>/dev/null; true; }",
		 "ip -j addr show", &o, NULL, err);
	if (rc < 0)
		return rc;
	nl = strchr(o, '\n');
	if (nl)
		*nl++ = '\0';
	rc = tcjson_links(o, out, err);
	for (line = nl; rc == 0 && line && *line; line = nl) {
		char *colon, *name;
		long mbps;

		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		colon = strrchr(line, ':');
		if (strncmp(line, "/sys/class/net/", 15) != 0 || !colon ||
		    colon - line < 21 || strncmp(colon - 6, "/speed", 6) != 0)
			continue;
		name = line + 15;
		colon[-6] = '\0';
		mbps = strtol(colon + 1, NULL, 10);
		for (k = 0; k < out->n; k++)
			if (mbps > 0 && strcmp(out->l[k].name, name) == 0)
				out->l[k].speed_mbps = (uint64_t)mbps;
	}
	free(o);
	if (rc < 0)
		ll_err_prefix(err, "peer %s: ", r->t.alias);
	return rc;
}

static int remote_route_dev(struct peer *p, const char *addr, char *dev,
			    size_t len, struct ll_err *err)
{
	struct remote *r = remote_of(p);
	unsigned char a[16];
	char cmd[256] = "ip -j route get", *o = NULL;
	int rc;

	if (!addr || (inet_pton(AF_INET, addr, a) != 1 &&
		      inet_pton(AF_INET6, addr, a) != 1))
		return ll_err_set(err, -EINVAL, "route: \"%s\" is not an IPv4/IPv6 address",
				  addr ? addr : "");
	if (addw(cmd, sizeof(cmd), addr) < 0)
		return ll_err_set(err, -ENOSPC, "route: address too long");
	rc = run(r, cmd, "ip route get", &o, NULL, err);
	if (rc < 0)
		return rc;
	rc = tcjson_route_dev(o, dev, len, err);
	free(o);
	if (rc < 0)
		ll_err_prefix(err, "peer %s: ", r->t.alias);
	return rc;
}

#define RS_SEP "@@linklab@@"

/* The qdisc tree of dev as the netlink reader sees it, in one round trip:
 * tc -j [-s] qdisc show, then (for linklab's htb root) tc class show for
 * class 1:1's rate/burst and tc -j filter show parent 1: for the scope.
 * *session_err: the failure was the session, not tc (may be NULL). */
static int read_state(struct remote *r, const char *dev, bool stats,
		      struct qdisc_state *out, bool *session_err,
		      struct ll_err *err)
{
	char cmd[512] = "", *o = NULL, *cls, *flt;
	int rc;

	if (session_err)
		*session_err = false;
	rc = addraw(cmd, sizeof(cmd), stats ? "tc -j -s qdisc show dev" : "tc -j qdisc show dev");
	rc |= addw(cmd, sizeof(cmd), dev);
	rc |= addraw(cmd, sizeof(cmd), "&& { echo " RS_SEP "; tc class show dev");
	rc |= addw(cmd, sizeof(cmd), dev);
	rc |= addraw(cmd, sizeof(cmd), "2>/dev/null; echo " RS_SEP "; tc -j filter show dev");
	rc |= addw(cmd, sizeof(cmd), dev);
	rc |= addraw(cmd, sizeof(cmd), "parent 1: 2>/dev/null; true; }");
	if (rc)
		return ll_err_set(err, -ENOSPC, "command too long");
	rc = run(r, cmd, "tc qdisc show", &o, NULL, err);
	if (rc < 0) {
		if (session_err && err && !strstr(err->msg, "failed (exit"))
			*session_err = true;
		return rc;
	}
	cls = strstr(o, RS_SEP);
	flt = cls ? strstr(cls + strlen(RS_SEP), RS_SEP) : NULL;
	if (cls)
		*cls = '\0';
	rc = tcjson_qdiscs(o, dev, out, err);
	if (rc == 0 && flt) {
		*flt = '\0';
		rc = tcjson_htb_class(cls + strlen(RS_SEP), out, err);
		if (rc == 0 && out->n > 0 && out->q[0].handle == 0x00010000u &&
		    strcmp(out->q[0].kind, "htb") == 0)
			rc = tcjson_scope(flt + strlen(RS_SEP), out, err);
	}
	free(o);
	if (rc < 0)
		ll_err_prefix(err, "peer %s: ", r->t.alias);
	return rc;
}

static int remote_read_qdiscs(struct peer *p, const char *dev,
			      struct qdisc_state *out, struct ll_err *err)
{
	int rc;

	rc = valid_ifname(dev, err);
	if (rc < 0)
		return rc;
	return read_state(remote_of(p), dev, true, out, NULL, err);
}

/* One round trip, once per session: the peer's CONFIG_HZ (from
 * /proc/config.gz or /boot/config-*, else 250) and the inode of its network
 * namespace (journal names). */
static void remote_probe(struct remote *r)
{
	struct ll_err e = { 0 };
	char *o = NULL, *at;
	unsigned hz = 0;
	int rc;

	if (r->hz)
		return;
	rc = run(r, "{ zcat /proc/config.gz 2>/dev/null || cat \"/boot/config-$(uname -r)\" 2>/dev/null; } | sed -n 's/^CONFIG_HZ=//p'; echo @; stat -L -c %i /proc/self/ns/net",
		 "probe CONFIG_HZ and netns", &o, NULL, &e);
	if (rc == 0 && o) {
		hz = (unsigned)strtoul(o, NULL, 10);
		at = strchr(o, '@');
		if (at && strspn(at + 2, "0123456789") > 0)
			snprintf(r->nsid, sizeof(r->nsid), "%.*s",
				 (int)strspn(at + 2, "0123456789"), at + 2);
	}
	free(o);
	r->hz = (hz >= 24 && hz <= 10000) ? hz : 250;
	if (!r->nsid[0]) {
		/* never a shared "0": another namespace's records would be
		 * taken for this one's */
		snprintf(r->nsid, sizeof(r->nsid), "unknown");
		/* the probe itself failed (a timeout, a lost session): say
		 * that, not that stat did */
		if (rc < 0 && e.msg[0])
			snprintf(r->probe_err, sizeof(r->probe_err),
				 "peer %.200s: cannot tell the peer's network namespace (%.300s); its journal cannot be named, nothing changed",
				 r->t.alias, e.msg);
		else
			snprintf(r->probe_err, sizeof(r->probe_err),
				 "peer %.200s: cannot tell the peer's network namespace (stat -L -c %%i /proc/self/ns/net failed); its journal cannot be named, nothing changed",
				 r->t.alias);
	}
}

/* The netns probe worked (journal names are sound). 0 or -EIO. */
static int need_nsid(struct remote *r, struct ll_err *err)
{
	remote_probe(r);
	return r->probe_err[0] ? ll_err_set(err, -EIO, "%s", r->probe_err) : 0;
}

static void rnote(struct remote *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rnote(struct remote *r, const char *fmt, ...)
{
	size_t n = strlen(r->notes);
	va_list ap;

	if (n + 2 >= sizeof(r->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(r->notes + n, sizeof(r->notes) - n - 1, fmt, ap);
	va_end(ap);
	n = strlen(r->notes);
	r->notes[n] = '\n';
	r->notes[n + 1] = '\0';
}

static unsigned remote_hz(struct remote *r)
{
	remote_probe(r);
	return r->hz;
}

/* MTU of dev on the peer (also checks that dev exists). */
static int remote_mtu(struct remote *r, const char *dev, unsigned *mtu,
		      struct ll_err *err)
{
	char cmd[128] = "ip -j link show dev", *o = NULL;
	struct link_list *ll;
	int rc;

	if (addw(cmd, sizeof(cmd), dev) < 0)
		return ll_err_set(err, -ENOSPC, "command too long");
	rc = run(r, cmd, "ip link show", &o, NULL, err);
	if (rc < 0)
		return rc == -EIO ? (ll_err_prefix(err, "no interface %s? ", dev), -ENODEV) : rc;
	ll = calloc(1, sizeof(*ll));
	if (!ll) {
		free(o);
		return ll_err_set(err, -ENOMEM, "out of memory");
	}
	rc = tcjson_links(o, ll, err);
	free(o);
	if (rc == 0 && ll->n < 1)
		rc = ll_err_set(err, -ENODEV, "peer %s: no interface %s", r->t.alias, dev);
	if (rc == 0)
		*mtu = ll->l[0].mtu;
	free(ll);
	return rc;
}

static int plan_lines(struct remote *r, const char *dev, const struct impair *d,
		      char *lines, size_t len, struct impair_plan *plan,
		      struct ll_err *err)
{
	struct ll_diag diag;
	unsigned mtu = 0;
	int rc;

	rc = valid_ifname(dev, err);
	if (rc < 0)
		return rc;
	rc = remote_mtu(r, dev, &mtu, err);
	if (rc < 0)
		return rc;
	ll_diag_clear(&diag);
	memset(plan, 0, sizeof(*plan));
	rc = impair_plan(d, mtu, remote_hz(r), plan, &diag);
	if (rc < 0) {
		ll_diag_to_err(&diag, err);
		return -EINVAL;
	}
	return tccmd_apply(dev, plan, lines, len, err);
}

/* d goes to the endpoint engine: --engine user, or auto on a peer found
 * to have no netem (unknown until an apply was refused for it). */
static bool remote_would_engine(struct peer *p, const struct impair *d)
{
	struct remote *r = remote_of(p);

	return impair_needs_netem(d) && (r->engine_mode == ENGHOOK_USER ||
					 (r->engine_mode == ENGHOOK_AUTO && r->no_netem));
}

static int remote_dry_run(struct peer *p, const char *dev,
			  const struct impair *d, char *lines, size_t len,
			  struct ll_err *err)
{
	struct remote *r = remote_of(p);
	struct impair_plan plan;
	size_t n;
	int rc;

	if (remote_would_engine(p, d)) {
		rc = enghook_check(d, dev, err);
		if (rc == 0)
			enghook_dry_remote(dev, d, lines, len);
		return rc;
	}
	rc = plan_lines(r, dev, d, lines, len, &plan, err);
	n = strlen(lines);
	if (rc == 0 && impair_needs_netem(d) && r->engine_mode == ENGHOOK_AUTO && n < len)
		snprintf(lines + n, len - n, "# (auto: on a peer kernel without sch_netem, "
			 "linklab's endpoint engine holds the dial instead)\n");
	return rc;
}

static struct rjournal *jfind(struct remote *r, const char *dev, bool create)
{
	int i;

	for (i = 0; i < RJ_MAX; i++)
		if (r->j[i].dev[0] && strcmp(r->j[i].dev, dev) == 0)
			return &r->j[i];
	if (!create)
		return NULL;
	for (i = 0; i < RJ_MAX; i++)
		if (!r->j[i].dev[0]) {
			snprintf(r->j[i].dev, sizeof(r->j[i].dev), "%s", dev);
			return &r->j[i];
		}
	return NULL;
}

/* /run/linklab/remote-<netns inode>-<dev>.tc.json: /run is usually shared
 * between network namespaces, so two labs with the same device names on one
 * machine must not share a journal. */
static void journal_path(struct remote *r, const char *dev, char *buf, size_t len)
{
	remote_probe(r);
	snprintf(buf, len, JOURNAL_DIR "/remote-%s-%s.tc.json", r->nsid, dev);
}

/* /run/linklab/remote-<netns inode>-<dev>.EXT: the files beside a record
 * (.applied, .revert; arm_revert). */
static void side_path(struct remote *r, const char *dev, const char *ext,
		      char *buf, size_t len)
{
	remote_probe(r);
	snprintf(buf, len, JOURNAL_DIR "/remote-%s-%s.%s", r->nsid, dev, ext);
}

/* /run/linklab/remote-<netns inode>-<dev>.ifb: written (holding the IFB
 * name) before an ingress apply creates the IFB device; its presence makes
 * every restore (clear, failed apply, revert timer, hold guard) remove the
 * ingress qdisc of dev and the IFB device. */
static void ifb_path(struct remote *r, const char *dev, char *buf, size_t len)
{
	remote_probe(r);
	snprintf(buf, len, JOURNAL_DIR "/remote-%s-%s.ifb", r->nsid, dev);
}

/* Shell text: if the IFB marker of dev is there, undo the ingress side
 * (tccmd_clear_ingress) and drop the marker; always succeeds. */
static int ingress_undo_cmd(struct remote *r, const char *dev, char *cmd,
			    size_t len)
{
	char path[128], lines[512], *nl;
	int rc;

	if (tccmd_clear_ingress(dev, lines, sizeof(lines), NULL) < 0)
		return -ENOSPC;
	while ((nl = strchr(lines, '\n')) != NULL)
		*nl = ';';
	ifb_path(r, dev, path, sizeof(path));
	rc = addraw(cmd, len, "{ [ ! -e");
	rc |= addw(cmd, len, path);
	rc |= addraw(cmd, len, "] || {");
	rc |= addraw(cmd, len, lines);
	rc |= addraw(cmd, len, "rm -f");
	rc |= addw(cmd, len, path);
	rc |= addraw(cmd, len, "; }; true; }");
	return rc ? -ENOSPC : 0;
}

static int clear_check(struct remote *r, const char *dev, const char *orig,
		       bool identity_only, struct ll_err *err);

/* Record the whole tc state of dev (in memory and in the peer's journal
 * file, tctree.h). A journal file left by an earlier run wins: it holds the
 * real original. An empty or damaged file, or a state linklab could not
 * rebuild (unless --force), refuses the apply before anything changes. */
/* the one-round-trip journal command into cmd (CMD_MAX): record dev's tc
 * state to path through tmp unless path exists, then print path; rec is
 * scratch (CMD_MAX); nonzero when it does not fit */
static int journal_take_cmd(const char *dev, const char *path,
			    const char *tmp, char *cmd, char *rec)
{
	int rc;

	/* umask 077; mkdir -p DIR && { [ -e F ] || { { RECORD; } > F.tmp &&
	 * [ -s F.tmp ] && mv F.tmp F && echo new || { rm -f F.tmp; exit 1; };
	 * }; } && cat F      (one round trip; a full disk leaves no file) */
	rc = tctree_record_cmd(dev, rec, CMD_MAX);
	rc |= addraw(cmd, CMD_MAX, "umask 077; mkdir -p");
	rc |= addw(cmd, CMD_MAX, JOURNAL_DIR);
	rc |= addraw(cmd, CMD_MAX, "&& { [ -e");
	rc |= addw(cmd, CMD_MAX, path);
	rc |= addraw(cmd, CMD_MAX, "] || { e=$( {");
	rc |= addraw(cmd, CMD_MAX, rec);
	rc |= addraw(cmd, CMD_MAX, "; } 2>&1 >");
	rc |= addw(cmd, CMD_MAX, tmp);
	rc |= addraw(cmd, CMD_MAX, ") && [ -s");
	rc |= addw(cmd, CMD_MAX, tmp);
	rc |= addraw(cmd, CMD_MAX, "] && mv");
	rc |= addw(cmd, CMD_MAX, tmp);
	rc |= addw(cmd, CMD_MAX, path);
	rc |= addraw(cmd, CMD_MAX, "&& echo new || { rm -f");
	rc |= addw(cmd, CMD_MAX, tmp);
	/* a full directory: the shell's write error ("I/O error") does not
	 * say why; df does */
	rc |= addraw(cmd, CMD_MAX, "; a=$(df -Pk " JOURNAL_DIR " 2>/dev/null | awk 'NR==2{print $4}');"
		     " if [ \"$a\" = 0 ]; then echo 'no space left on device (0 KiB free)' >&2;"
		     " else printf '%s\\n' \"${e:-cannot record the tc state}\" >&2; fi;");
	rc |= addraw(cmd, CMD_MAX, "exit 1; }; }; } && cat");
	rc |= addw(cmd, CMD_MAX, path);
	return rc;
}

/* --force over a record with parts tc cannot restore: those parts are
 * dropped from *o and from the record at path (written through tmp), and
 * noted; 0, or < 0 with err set */
static int journal_force_strip(struct remote *r, const char *dev, char **o,
			       char *cmd, const char *tmp, const char *path,
			       struct ll_err *err)
{
	/* the user accepts losing those parts: the record keeps
	 * the rest, which is restored and verified */
	char dropped[400], *st = NULL;
	int rc;

	rc = tctree_strip(*o, &st, dropped, sizeof(dropped));
	if (rc == 0) {
		snprintf(cmd, CMD_MAX, "umask 077; printf '%%s\\n'");
		rc = addw(cmd, CMD_MAX, st) | addraw(cmd, CMD_MAX, ">") |
		     addw(cmd, CMD_MAX, tmp) | addraw(cmd, CMD_MAX, "&& mv") |
		     addw(cmd, CMD_MAX, tmp) | addw(cmd, CMD_MAX, path);
		rc = rc ? ll_err_set(err, -ENOSPC, "journal command too long")
			: run(r, cmd, "write journal " JOURNAL_DIR, NULL, NULL, err);
	}
	if (rc == 0) {
		free(*o);
		*o = st;
		st = NULL;
		rnote(r, "%s: --force: %.300s will not come back on clear", dev, dropped);
	}
	free(st);
	return rc;
}

static int journal_take_once(struct remote *r, const char *dev, bool again,
			     struct ll_err *err)
{
	struct rjournal *j = jfind(r, dev, false);
	char path[128], tmp[140], *o = NULL, *rec;
	char *cmd;
	bool fresh;
	int rc;

	if (j && j->orig)
		return 0;
	rc = need_nsid(r, err);
	if (rc < 0)
		return rc;
	cmd = calloc(1, CMD_MAX);
	rec = calloc(1, CMD_MAX);
	if (!cmd || !rec) {
		free(cmd);
		free(rec);
		return ll_err_set(err, -ENOMEM, "out of memory");
	}
	journal_path(r, dev, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	rc = journal_take_cmd(dev, path, tmp, cmd, rec);
	free(rec);
	if (rc) {
		free(cmd);
		return ll_err_set(err, -ENOSPC, "journal command too long");
	}
	rc = run(r, cmd, "write journal " JOURNAL_DIR, &o, NULL, err);
	if (rc < 0) {
		free(cmd);
		if (err && strcasestr(err->msg, "no space left"))
			return ll_err_set(err, -ENOSPC,
					  "peer %s: %s: cannot write its record %s: no space left on device (%s is full); nothing changed",
					  r->t.alias, dev, path, JOURNAL_DIR);
		ll_err_prefix(err, "nothing changed: ");
		return rc;
	}
	fresh = strncmp(o, "new\n", 4) == 0;
	if (fresh)
		memmove(o, o + 4, strlen(o + 4) + 1);
	/* a record left by an interface that recycled these numbers: dropped
	 * (noted), then this one's state is recorded */
	if (!fresh && o[0] == '{' && !again) {
		rc = clear_check(r, dev, o, true, err);
		if (rc <= 0) {
			free(o);
			free(cmd);
			return rc < 0 ? rc : journal_take_once(r, dev, true, err);
		}
	}
	/* a v1 record is one line; a v2 record spans lines */
	if (o[0] != '{')
		o[strcspn(o, "\n")] = '\0';
	if (o[0] == '{') {
		struct ll_err cerr = {0};

		rc = tctree_restore_cmd(dev, o, cmd, CMD_MAX, &cerr);
		if (rc == -ENOTSUP && r->safety.force)
			rc = journal_force_strip(r, dev, &o, cmd, tmp, path, err);
		if (rc < 0) {
			rc = ll_err_set(err, rc, "peer %s: %s: linklab could not put back what is there now (%s); nothing changed%s",
					r->t.alias, dev, cerr.msg,
					rc == -ENOTSUP ? " (--force applies anyway and loses it)" : "");
		}
	} else if (o[0] != '[') {
		rc = ll_err_set(err, -EINVAL, "peer %s: %s: its record %s is empty or damaged; nothing changed (linklab clear --forget --peer-dev %s drops it)",
				r->t.alias, dev, path, dev);
		fresh = false;
	}
	if (rc < 0) {
		if (fresh) {
			snprintf(cmd, CMD_MAX, "rm -f");
			addw(cmd, CMD_MAX, path);
			run(r, cmd, "remove journal", NULL, NULL, NULL);
		}
		free(cmd);
		free(o);
		return rc;
	}
	free(cmd);
	j = jfind(r, dev, true);
	if (!j) {
		free(o);
		return ll_err_set(err, -ENOSPC, "too many journalled interfaces");
	}
	free(j->orig);
	j->orig = o;
	return 0;
}

static int journal_take(struct remote *r, const char *dev, struct ll_err *err)
{
	return journal_take_once(r, dev, false, err);
}

/* Command that puts the original (JSON) back on dev. -ENOTSUP for kinds we
 * cannot rebuild. */
static int restore_cmd(struct remote *r, const char *dev, const char *orig,
		       char *cmd, size_t len, struct ll_err *err)
{
	struct qdisc_state qs;
	const struct qdisc_info *q;
	char h[32], v[64];
	int rc, i;

	if (orig[0] == '{') {
		/* a whole-tree record: the ingress side linklab made first */
		cmd[0] = '\0';
		if (ingress_undo_cmd(r, dev, cmd, len) || addraw(cmd, len, "&&"))
			return -ENOSPC;
		rc = tctree_restore_cmd(dev, orig, cmd + strlen(cmd), len - strlen(cmd), err);
		if (rc < 0)
			ll_err_prefix(err, "peer %s: %s: ", r->t.alias, dev);
		return rc;
	}
	rc = tcjson_qdiscs(orig, dev, &qs, err);
	if (rc < 0)
		return rc;
	cmd[0] = '\0';
	if (qs.n == 0 || qs.q[0].handle == 0) {
		/* kernel default (handle 0:): deleting ours brings it back;
		 * "handle of zero" means nothing of ours is there any more */
		rc = addraw(cmd, len, "out=$(tc qdisc del dev");
		rc |= addw(cmd, len, dev);
		rc |= addraw(cmd, len, "root 2>&1) || { s=$?; case $out in *\"handle of zero\"*) ;; *) echo \"$out\" >&2; exit $s;; esac; }");
		/* then the ingress side (an IFB linklab created, if any) */
		rc |= addraw(cmd, len, "&&");
		rc |= ingress_undo_cmd(r, dev, cmd, len);
		return rc ? -ENOSPC : 0;
	}
	for (i = 0; i < qs.n; i++) {
		q = &qs.q[i];
		if (i > 0 && (q->parent >> 16) != (qs.q[0].handle >> 16))
			continue;
		rc = i ? addraw(cmd, len, "&&") : 0;
		rc |= addraw(cmd, len, "tc qdisc replace dev");
		rc |= addw(cmd, len, dev);
		if (i == 0) {
			rc |= addraw(cmd, len, "root");
		} else {
			snprintf(h, sizeof(h), "%x:%x", q->parent >> 16, q->parent & 0xffff);
			rc |= addraw(cmd, len, "parent");
			rc |= addw(cmd, len, h);
		}
		snprintf(h, sizeof(h), "%x:", q->handle >> 16);
		rc |= addraw(cmd, len, "handle");
		rc |= addw(cmd, len, h);
		if (strcmp(q->kind, "tbf") == 0) {
			rc |= addraw(cmd, len, "tbf rate");
			snprintf(v, sizeof(v), "%llubit", (unsigned long long)q->rate);
			rc |= addw(cmd, len, v);
			snprintf(v, sizeof(v), "burst %ub limit %ub", q->burst, q->limit);
			rc |= addraw(cmd, len, v);
		} else if (strcmp(q->kind, "pfifo") == 0) {
			snprintf(v, sizeof(v), "pfifo limit %u", q->limit);
			rc |= addraw(cmd, len, v);
		} else if (strcmp(q->kind, "bfifo") == 0) {
			snprintf(v, sizeof(v), "bfifo limit %ub", q->limit);
			rc |= addraw(cmd, len, v);
		} else if (strcmp(q->kind, "fq_codel") == 0) {
			snprintf(v, sizeof(v), "fq_codel limit %u", q->limit);
			rc |= addraw(cmd, len, q->limit ? v : "fq_codel");
		} else {
			return ll_err_set(err, -ENOTSUP,
					  "peer %s: cannot rebuild the original %s qdisc on %s (only tbf, pfifo, bfifo, fq_codel); journal kept in %s",
					  r->t.alias, q->kind, dev, JOURNAL_DIR);
		}
		if (rc)
			return -ENOSPC;
	}
	if (addraw(cmd, len, "&&") || ingress_undo_cmd(r, dev, cmd, len))
		return -ENOSPC;
	return 0;
}

/* Put the journalled original back and drop the journal. */
static int restore(struct remote *r, const char *dev, const char *orig,
		   struct ll_err *err)
{
	char *cmd = calloc(1, CMD_MAX), path[128], *back = NULL, why[320];
	struct rjournal *j;
	bool v2 = orig[0] == '{';
	int rc;

	if (!cmd)
		return ll_err_set(err, -ENOMEM, "out of memory");
	journal_path(r, dev, path, sizeof(path));
	rc = restore_cmd(r, dev, orig, cmd, CMD_MAX, err);
	if (rc == 0 && v2) {
		/* then read it back in the same round trip */
		rc = addraw(cmd, CMD_MAX, "&& echo " RS_SEP " && { ");
		rc |= tctree_record_cmd(dev, cmd + strlen(cmd), CMD_MAX - strlen(cmd));
		rc |= addraw(cmd, CMD_MAX, "; }");
		rc = rc ? ll_err_set(err, -ENOSPC, "command too long")
			: run(r, cmd, "restore original tc state", &back, NULL, err);
		if (rc == 0) {
			char *at = strstr(back, RS_SEP);

			if (!at || tctree_diff(orig, at + strlen(RS_SEP), why, sizeof(why)) != 0)
				rc = ll_err_set(err, -EIO, "peer %s: %s: the restored tc state does not read back as recorded: %s; record kept in %s",
						r->t.alias, dev, at ? why : "no read-back", path);
		}
		free(back);
		if (rc == 0) {
			char ap[128];

			char pat[160];

			side_path(r, dev, "applied", ap, sizeof(ap));
			snprintf(cmd, CMD_MAX, "rm -f");
			addw(cmd, CMD_MAX, path);
			addw(cmd, CMD_MAX, ap);
			/* the original is back: a revert timer still pending for
			 * this record (left by a killed apply) has nothing to do */
			snprintf(pat, sizeof(pat), "%s.* linklab-revert$", path);
			addraw(cmd, CMD_MAX, "; for p in $(pgrep -f --");
			addw(cmd, CMD_MAX, pat);
			addraw(cmd, CMD_MAX, "); do kill $p 2>/dev/null; done; true");
			rc = run(r, cmd, "remove journal", NULL, NULL, err);
		}
		if (rc == 0) {
			tctree_lost(orig, why, sizeof(why));
			if (why[0])
				rnote(r, "%s: restored, except what apply --force accepted losing: %.250s",
				      dev, why);
		}
	} else if (rc == 0) {
		rc = addraw(cmd, CMD_MAX, "&& rm -f") | addw(cmd, CMD_MAX, path);
		rc = rc ? ll_err_set(err, -ENOSPC, "command too long")
			: run(r, cmd, "restore original qdisc", NULL, NULL, err);
	}
	free(cmd);
	if (rc == 0 && (j = jfind(r, dev, false)) != NULL) {
		free(j->orig);
		memset(j, 0, sizeof(*j));
	}
	return rc;
}

/* Commit confirmed (like a router's "commit confirmed"): before dev is
 * changed, a detached process is armed on the peer that restores the
 * journalled original after revert_s seconds (default 30) unless killed. It
 * is disarmed only by a separate round trip after the read-back, which proves
 * the peer still answers over this session; if the session dies in between,
 * the peer restores itself. Returns the timer's pid, or 0 when it cannot be
 * armed (an original linklab cannot rebuild). */
#ifndef REVERT_AFTER_S
#define REVERT_AFTER_S 30
#endif
static int revert_after(const struct remote *r)
{
	return r->safety.revert_s > 0 ? r->safety.revert_s : REVERT_AFTER_S;
}

static void armed_add(struct remote *r, long pid, const char *dev)
{
	int i;

	for (i = 0; i < RJ_MAX; i++)
		if (!r->armed[i]) {
			r->armed[i] = pid;
			snprintf(r->armed_dev[i], IF_NAMESIZE, "%s", dev);
			return;
		}
}

static void armed_del(struct remote *r, long pid)
{
	int i;

	for (i = 0; i < RJ_MAX; i++)
		if (r->armed[i] == pid)
			r->armed[i] = 0;
}

/* /run/linklab/remote-<netns>-<dev>.applied: "<timer pid> <cksum of tc
 * qdisc show>" written by an apply with its change; a revert timer restores
 * only while the line is its own and the qdiscs are as that apply left
 * them, so a stale timer never undoes a later dial or a change by hand.
 * .revert: what the last revert timer or hold guard did, with the record
 * and the read-back after its restore (compared by show --journal/clear). */

/* between the parts of a .revert verdict (not RS_SEP: each_record splits
 * listings at that) */
#define VSEP "@@linklab-verdict@@"
#define SNAP_SH(dev) "tc qdisc show dev " dev " | sed 's/direct_packets_stat [0-9]*//' | cksum"

/* Shell text: restore dev from orig, then write the .revert verdict
 * ("<epoch> <pid> restored <status>", the record, the read-back) and drop
 * the record if the restore ran through. who: "timer" or "guard". */
static int revert_script(struct remote *r, const char *dev, const char *orig,
			 const char *who, char *out, size_t len)
{
	char jp[128], ap[128], vp[128], *rec = calloc(1, CMD_MAX / 2);
	int rc;

	if (!rec)
		return -ENOMEM;
	journal_path(r, dev, jp, sizeof(jp));
	side_path(r, dev, "applied", ap, sizeof(ap));
	side_path(r, dev, "revert", vp, sizeof(vp));
	rc = tctree_record_cmd(dev, rec, CMD_MAX / 2);
	rc |= addraw(out, len, "{");
	if (rc == 0 && restore_cmd(r, dev, orig, out + strlen(out) + 1,
				   len - strlen(out) - 1, NULL) < 0)
		rc = -ENOSPC;
	if (rc == 0)
		out[strlen(out)] = ' ';
	rc |= addraw(out, len, "; }; st=$?; { printf '%s %s");
	rc |= addraw(out, len, who);
	rc |= addraw(out, len, "restored %s\\n' \"$(date +%s)\" $$ $st; echo " VSEP "; cat");
	rc |= addw(out, len, jp);
	rc |= addraw(out, len, "; echo; echo " VSEP "; (");
	rc |= addraw(out, len, rec);
	rc |= addraw(out, len, "); } >");
	rc |= addw(out, len, vp);
	rc |= addraw(out, len, "2>/dev/null; [ $st != 0 ] || rm -f");
	rc |= addw(out, len, jp);
	rc |= addw(out, len, ap);
	rc |= addraw(out, len, ";");
	free(rec);
	return rc ? -ENOSPC : 0;
}

static long arm_revert(struct remote *r, const char *dev, const char *orig,
		       struct ll_err *err)
{
	char *inner = calloc(1, CMD_MAX), *cmd = calloc(1, CMD_MAX), *o = NULL;
	char jp[128], ap[128], vp[128], head[600], q[64], jq[160];
	long pid = 0;
	int rc;

	if (!inner || !cmd || tccmd_quote(dev, q, sizeof(q)) < 0)
		goto out;
	journal_path(r, dev, jp, sizeof(jp));
	if (tccmd_quote(jp, jq, sizeof(jq)) < 0)
		goto out;
	side_path(r, dev, "applied", ap, sizeof(ap));
	side_path(r, dev, "revert", vp, sizeof(vp));
	/* TERM (disarm) kills the sleep and exits without restoring; the
	 * process is named by its argv ("linklab-revert") for ps. It runs in
	 * its own session (setsid: no signal to the channel's process group
	 * reaches it) and ignores SIGHUP (nohup), so it outlives the channel,
	 * the SSH session and linklab. setsid execs in place (a background
	 * job of a non-interactive shell is no group leader): $! is its pid.
	 * When it fires it restores only if its record is still there, the
	 * same file it was armed with (cksum), and dev is as its own apply
	 * left it (.applied), or - no .applied: the apply died mid-way -
	 * changed since it was armed; else it notes "kept". */
	snprintf(head, sizeof(head),
		 "trap 'kill $s 2>/dev/null; exit 0' TERM; snap() { " SNAP_SH("%s") "; }; B0=$(snap);"
		 " J0=$(cksum < %s 2>/dev/null); sleep %d & s=$!; wait $s || exit 0;", q, jq, revert_after(r));
	rc = addraw(inner, CMD_MAX, head);
	rc |= addraw(inner, CMD_MAX, "[ \"$(cksum <");
	rc |= addw(inner, CMD_MAX, jp);
	rc |= addraw(inner, CMD_MAX, "2>/dev/null)\" = \"$J0\" ] || exit 0; if [ -e");
	rc |= addw(inner, CMD_MAX, ap);
	rc |= addraw(inner, CMD_MAX, "]; then [ \"$(cat");
	rc |= addw(inner, CMD_MAX, ap);
	rc |= addraw(inner, CMD_MAX, ")\" = \"$$ $(snap)\" ]; else [ \"$(snap)\" != \"$B0\" ]; fi ||"
		     " { printf '%s %s timer kept: changed since its apply (a later dial or by hand), not restored\\n' \"$(date +%s)\" $$ >");
	rc |= addw(inner, CMD_MAX, vp);
	rc |= addraw(inner, CMD_MAX, "; exit 0; };");
	if (rc || revert_script(r, dev, orig, "timer", inner, CMD_MAX) < 0)
		goto out;
	if (addraw(cmd, CMD_MAX, "S=; command -v setsid >/dev/null 2>&1 && S=setsid;"
		   " $S nohup sh -c") || addw(cmd, CMD_MAX, inner) ||
	    addraw(cmd, CMD_MAX, "linklab-revert >/dev/null 2>&1 </dev/null & echo $!"))
		goto out;
	if (run(r, cmd, "arm revert timer", &o, NULL, err) == 0 && o)
		pid = strtol(o, NULL, 10);
out:
	free(o);
	free(inner);
	free(cmd);
	if (pid > 1)
		armed_add(r, pid, dev);
	return pid > 1 ? pid : 0;
}

/* Shell text appended to an apply's tc lines: the .applied line of the
 * timer guarding it (pid, 0 for none) and of the qdiscs it leaves. */
static int applied_line(struct remote *r, const char *dev, long timer, char *cmd,
			size_t len)
{
	char ap[128], q[64], t[300];

	if (tccmd_quote(dev, q, sizeof(q)) < 0)
		return -ENOSPC;
	side_path(r, dev, "applied", ap, sizeof(ap));
	snprintf(t, sizeof(t), "&& { printf '%%s %%s\\n' %ld \"$(" SNAP_SH("%s") ")\" >", timer, q);
	if (addraw(cmd, len, t) || addw(cmd, len, ap) || addraw(cmd, len, "; true; }"))
		return -ENOSPC;
	return 0;
}

static int verdict(const char *text, char *out, size_t len, char **orig);
static void verdict_consume(struct remote *r, const char *dev, const char *vpath,
			    const char *text);

/* A timer of dev fired during its apply: what its .revert says (msg), the
 * file then dropped (a differing read-back puts the record back). */
static void fired_verdict(struct remote *r, const char *dev, char *msg, size_t len)
{
	char cmd[300] = "[ ! -e", vp[128], *o = NULL, *orig = NULL;

	side_path(r, dev, "revert", vp, sizeof(vp));
	if (addw(cmd, sizeof(cmd), vp) || addraw(cmd, sizeof(cmd), "] || cat") ||
	    addw(cmd, sizeof(cmd), vp) ||
	    run(r, cmd, "read revert verdict", &o, NULL, NULL) < 0 || !o || !o[0]) {
		free(o);
		return;
	}
	if (verdict(o, msg, len, &orig) == 1) {
		verdict_consume(r, dev, vp, o);
	} else {
		snprintf(cmd, sizeof(cmd), "rm -f");
		addw(cmd, sizeof(cmd), vp);
		run(r, cmd, "remove revert verdict", NULL, NULL, NULL);
	}
	free(orig);
	free(o);
}

/* The confirming round trip: kill the timer if it is still pending.
 * 0 = disarmed, -ETIME = it had already fired (the original is back),
 * other negative = the peer did not answer (it will revert by itself). */
static int disarm_revert(struct remote *r, long pid, struct ll_err *err)
{
	char cmd[128], *o = NULL;
	int rc;

	if (pid <= 1)
		return 0;
	snprintf(cmd, sizeof(cmd), "kill %ld 2>/dev/null && echo disarmed || echo fired", pid);
	rc = run(r, cmd, "disarm revert timer (commit confirmed)", &o, NULL, err);
	if (rc == 0) {
		char dev[IF_NAMESIZE] = "", msg[400] = "";
		int i;

		for (i = 0; i < RJ_MAX; i++)
			if (r->armed[i] == pid)
				snprintf(dev, sizeof(dev), "%s", r->armed_dev[i]);
		armed_del(r, pid);
		if (strncmp(o, "disarmed", 8) != 0) {
			if (dev[0])
				fired_verdict(r, dev, msg, sizeof(msg));
			rc = ll_err_set(err, -ETIME,
					"peer %s: the revert timer fired before the change was confirmed: the original is back%s%s%s",
					r->t.alias, msg[0] ? " (" : "", msg, msg[0] ? ")" : "");
		}
	}
	free(o);
	return rc;
}

/* An older timer of dev left by an apply that could not be confirmed
 * (its channel lost, the session still up) would undo what follows: once a
 * newer timer guards dev (keep, 0 after a confirmed clear), the older ones
 * are disarmed. */
static void supersede_timers(struct remote *r, const char *dev, long keep)
{
	int i;

	for (i = 0; i < RJ_MAX; i++)
		if (r->armed[i] > 1 && r->armed[i] != keep &&
		    !strcmp(r->armed_dev[i], dev))
			disarm_revert(r, r->armed[i], NULL);
}

/* The peer's interface that carries the SSH session (one round trip, then
 * cached): the session's client address as the peer routes it. */
static int find_sshflow(struct remote *r, struct peer_sshflow *out, struct ll_err *err)
{
	char cmd[160] = "ip -j route get", *o = NULL;
	int rc;

	if (!r->sshflow_known) {
		memset(&r->sshflow, 0, sizeof(r->sshflow));
		rc = ssh_addrs(r->s, r->sshflow.client, sizeof(r->sshflow.client),
			       &r->sshflow.client_port, r->sshflow.server,
			       sizeof(r->sshflow.server), &r->sshflow.server_port);
		if (rc < 0)
			return ll_err_set(err, rc, "peer %s: session addresses: %s",
					  r->t.alias, strerror(-rc));
		if (addw(cmd, sizeof(cmd), r->sshflow.client) < 0)
			return ll_err_set(err, -ENOSPC, "command too long");
		rc = run(r, cmd, "ip route get (SSH client)", &o, NULL, err);
		if (rc == 0)
			rc = tcjson_route_dev(o, r->sshflow.dev, sizeof(r->sshflow.dev), err);
		free(o);
		if (rc < 0)
			return rc;
		r->sshflow_known = true;
	}
	if (out)
		*out = r->sshflow;
	return 0;
}

static int remote_sshflow(struct peer *p, struct peer_sshflow *out,
			   struct ll_err *err)
{
	return find_sshflow(remote_of(p), out, err);
}

/* Keep the SSH session's own flow out of the impairment: the scoped layout
 * of tccmd (htb 1:, shaped 1:1, unshaped 1:2) turned around - default 1:1,
 * and a u32 filter sending the session's packets (to the client's port, from
 * sshd's port) to 1:2. */
static int exclude_lines(struct remote *r, const char *dev,
			 const struct impair_plan *plan, char *lines, size_t len,
			 struct ll_err *err)
{
	struct impair_plan p2 = *plan;
	char *tmp, *f, portm[64], sportm[64], portm6[64], sportm6[64], both[128];
	size_t o;
	int rc;

	if (strchr(r->sshflow.client, ':'))
		return ll_err_set(err, -ENOTSUP,
				  "peer %s: cannot exclude an IPv6 SSH session from the impairment (u32 match ip is IPv4)",
				  r->t.alias);
	if (plan->ingress || plan->scoped)
		return ll_err_set(err, -ENOTSUP,
				  "peer %s: --exclude-ssh cannot be combined with a direction/dst/dport scope",
				  r->t.alias);
	p2.scoped = true;
	p2.dst_plen = 0;
	p2.dport = (uint16_t)r->sshflow.client_port;
	tmp = calloc(1, len);
	if (!tmp)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = tccmd_apply(dev, &p2, tmp, len, err);
	if (rc < 0) {
		free(tmp);
		return rc;
	}
	/* every layout line of tccmd turned around: default class 1:1,
	 * filters to 1:2, each dport match narrowed by sshd's source port */
	snprintf(portm, sizeof(portm), " match ip dport %d 0xffff", r->sshflow.client_port);
	snprintf(sportm, sizeof(sportm), " match ip sport %d 0xffff", r->sshflow.server_port);
	snprintf(portm6, sizeof(portm6), " match ip6 dport %d 0xffff", r->sshflow.client_port);
	snprintf(sportm6, sizeof(sportm6), " match ip6 sport %d 0xffff", r->sshflow.server_port);
	if (!strstr(tmp, "htb default 2") || !strstr(tmp, portm) ||
	    !strstr(tmp, " flowid 1:1")) {
		free(tmp);
		return ll_err_set(err, -ENOTSUP,
				  "peer %s: cannot build the SSH exclusion from the tc lines", r->t.alias);
	}
	lines[0] = '\0';
	for (o = 0, f = tmp; *f; ) {
		const char *add = NULL;
		size_t skip = 1;

		if (strncmp(f, "htb default 2", 13) == 0) {
			add = "htb default 1";
			skip = 13;
		} else if (strncmp(f, " flowid 1:1", 11) == 0 && !isdigit((unsigned char)f[11])) {
			add = " flowid 1:2";
			skip = 11;
		} else if (strncmp(f, portm, strlen(portm)) == 0) {
			snprintf(both, sizeof(both), "%s%s", portm, sportm);
			add = both;
			skip = strlen(portm);
		} else if (strncmp(f, portm6, strlen(portm6)) == 0) {
			snprintf(both, sizeof(both), "%s%s", portm6, sportm6);
			add = both;
			skip = strlen(portm6);
		}
		if (o + (add ? strlen(add) : 1) + 1 >= len) {
			free(tmp);
			return ll_err_set(err, -ENOSPC, "tc command too long");
		}
		if (add) {
			memcpy(lines + o, add, strlen(add));
			o += strlen(add);
		} else {
			lines[o++] = *f;
		}
		f += skip;
	}
	lines[o] = '\0';
	free(tmp);
	return 0;
}


/* safety.hold: a guard channel on the peer that reads its stdin:
 * "disarm" (a normal close, or before a newer guard replaces it) ends it
 * quietly; EOF - the session died (kill, SIGHUP of the console, network) -
 * or no line for guard_silence_s (the session hangs: B's sshd stopped, the
 * network cut without a FIN) runs the restore of every journalled device. */
static void guard_disarm(struct remote *r)
{
	if (!r->guard)
		return;
	/* a stalled or abandoned peer is not closed normally: no "disarm", so
	 * the guard restores it once it sees the session gone */
	if (!ssh_stalled(r->s) && !r->abandoned)
		ssh_spawn_write(r->guard, "disarm\n", 7, 2000, NULL);
	ssh_spawn_close(r->guard);
	r->guard = NULL;
}

static void tune_jpath(struct remote *r, char *buf, size_t len);

/* Seconds without a line from this side after which B's hold guard takes
 * the session for dead: 4 command bounds, at least 60 s (each command run
 * over the session is a beat, and so is each keepalive of an idle session,
 * every 5 s). */
static int guard_silence_s(const struct remote *r)
{
	const char *t = getenv("LINKLAB_TEST_GUARD_SILENCE_S");   /* tests */
	int s = 4 * peer_timeout_s(r);

	if (t && atoi(t) >= 2 && atoi(t) <= 3600)
		return atoi(t);
	return s < 60 ? 60 : s;
}

static int guard_refresh(struct remote *r, struct ll_err *err)
{
	char *inner, *cmd;
	int i, n = 0, rc = 0;

	if (!r->safety.hold)
		return 0;
	inner = calloc(1, CMD_MAX);
	cmd = calloc(1, CMD_MAX);
	if (!inner || !cmd) {
		free(inner);
		free(cmd);
		return ll_err_set(err, -ENOMEM, "out of memory");
	}
	/* a reader takes the lines ("disarm" ends the guard quietly, any
	 * other line is a beat; its stdin through fd 3: dash gives a
	 * background job /dev/null otherwise); a watchdog ends the reader when
	 * no line came for guard_silence_s: a session that hangs (B's sshd
	 * stopped, the network cut without a FIN) restores B as a closed one
	 * does */
	snprintf(inner, CMD_MAX,
		 "exec 3<&0; B=$(mktemp \"${TMPDIR:-/tmp}/linklab-guard.XXXXXX\") || exit 1;"
		 " date +%%s > \"$B\";"
		 " ( while read x; do case \"$x\" in disarm) rm -f \"$B\"; exit 0;; esac;"
		 " date +%%s > \"$B\"; done; exit 1 ) <&3 2>/dev/null & R=$!;"
		 " while kill -0 $R 2>/dev/null; do sleep 1; t=$(cat \"$B\" 2>/dev/null) || break;"
		 " [ $(( $(date +%%s) - t )) -gt %d ] && { kill $R 2>/dev/null; break; }; done;"
		 " wait $R; rc=$?; rm -f \"$B\"; [ $rc = 0 ] || {", guard_silence_s(r));
	for (i = 0; i < RJ_MAX; i++) {
		size_t u = strlen(inner);

		if (!r->j[i].dev[0] || !r->j[i].orig)
			continue;
		/* restore, read back, verdict in .revert (revert_script) */
		if (revert_script(r, r->j[i].dev, r->j[i].orig, "guard", inner, CMD_MAX) < 0) {
			inner[u] = '\0';
			continue;
		}
		n++;
	}
	if (rc == 0 && r->tuned) {
		/* the offload/sysctl journal, replayed on the peer itself:
		 * "offload DEV FEATURE on|off", "sysctl NAME VALUE..." */
		char jp[128], snip[700];

		tune_jpath(r, jp, sizeof(jp));
		snprintf(snip, sizeof(snip),
			 "F=%s; [ -e \"$F\" ] && { while read k a b c; do case \"$k\" in "
			 "offload) ethtool -K \"$a\" \"$b\" \"$c\";; "
			 "sysctl) printf '%%s\\n' \"$b${c:+ $c}\" > \"/proc/sys/$(printf %%s \"$a\" | tr . /)\";; "
			 "esac; done < \"$F\"; rm -f \"$F\"; };", jp);
		if (addraw(inner, CMD_MAX, snip))
			rc = ll_err_set(err, -ENOSPC, "guard command too long");
		n++;
	}
	/* the endpoint engines this session started stop with it */
	for (i = 0; rc == 0 && i < RJ_MAX; i++) {
		if (!r->engine_dev[i][0])
			continue;
		if (addraw(inner, CMD_MAX, "command -v linklab >/dev/null 2>&1 && linklab engine --stop --dev") ||
		    addw(inner, CMD_MAX, r->engine_dev[i]) || addraw(inner, CMD_MAX, ";"))
			rc = ll_err_set(err, -ENOSPC, "guard command too long");
		n++;
	}
	if (rc == 0 && addraw(inner, CMD_MAX, "true; }"))
		rc = ll_err_set(err, -ENOSPC, "guard command too long");
	guard_disarm(r);
	if (rc == 0 && n > 0) {
		if (addraw(cmd, CMD_MAX, "exec sh -c") || addw(cmd, CMD_MAX, inner) ||
		    addraw(cmd, CMD_MAX, "linklab-guard"))
			rc = ll_err_set(err, -ENOSPC, "guard command too long");
		else
			rc = ssh_spawn(r->s, cmd, &r->guard, err);
	}
	free(inner);
	free(cmd);
	return rc;
}

static int remote_clear_dev(struct peer *p, const char *dev, struct ll_err *err);
static void verdict_consume(struct remote *r, const char *dev, const char *vpath,
			    const char *text);

static int engine_stop_remote(struct remote *r, const char *dev, struct ll_err *err);
static void engine_dev_mark(struct remote *r, const char *dev, bool on);

static int remote_clear(struct peer *p, const char *dev, struct ll_err *err)
{
	int rc = valid_ifname(dev, err);

	remote_of(p)->notes[0] = '\0';
	if (rc == 0)
		rc = engine_stop_remote(remote_of(p), dev, err);
	if (rc == 0)
		engine_dev_mark(remote_of(p), dev, false);
	if (rc == 0)
		rc = remote_clear_dev(p, dev, err);

	if (rc == 0)
		supersede_timers(remote_of(p), dev, 0);   /* the original is back */
	if (rc == 0)
		rc = guard_refresh(remote_of(p), err);
	return rc;
}

/* Before a clear restores dev from record orig: is it still the recorded
 * device (ifindex, link address), and does it hold what linklab put there
 * (one of linklab's roots - tbf, netem, htb at 1: - or the recorded root)?
 * 1 go on, 0 record dropped (another device; noted), <0 refused. */
static int clear_check(struct remote *r, const char *dev, const char *orig,
		       bool identity_only, struct ll_err *err)
{
	char cmd[1024] = "", mac[40] = "", path[128], *o = NULL, kind[24] = "", h[24] = "";
	char nowmac[40] = "", rk[24] = "", rh[24] = "", ck[24], nowck[24] = "", *at;
	int idx = 0, nowidx = 0, rc;
	cJSON *rec;
	const cJSON *parts, *q;

	journal_path(r, dev, path, sizeof(path));
	if (tctree_identity(orig, &idx, mac, sizeof(mac)) < 0)
		return 1;
	tctree_cookie(orig, ck, sizeof(ck));
	/* the namespace's cookie first ("c<digits>"), when the record has one */
	rc = addraw(cmd, sizeof(cmd), ck[0] ? "printf 'c%s\\n' \"$(" TCTREE_COOKIE_SH ")\";" : "");
	rc |= addraw(cmd, sizeof(cmd), "ip -o link show dev");
	rc |= addw(cmd, sizeof(cmd), dev);
	rc |= addraw(cmd, sizeof(cmd), "| awk '{i=$1; sub(\":\",\"\",i); m=\"-\"; for (k = 1; k < NF; k++) if ($k ~ /^link\\//) m = $(k+1); print i, m}'; tc qdisc show dev");
	rc |= addw(cmd, sizeof(cmd), dev);
	rc |= addraw(cmd, sizeof(cmd), "| awk '$4==\"root\"{print $2, $3}'");
	if (rc)
		return ll_err_set(err, -ENOSPC, "command too long");
	rc = run(r, cmd, "read link identity", &o, NULL, err);
	if (rc < 0)
		return rc;
	at = o;
	if (at[0] == 'c') {
		snprintf(nowck, sizeof(nowck), "%.*s", (int)strspn(at + 1, "0123456789"), at + 1);
		at += strcspn(at, "\n");
	}
	if (sscanf(at, "%d %39s %23s %23s", &nowidx, nowmac, kind, h) < 2) {
		free(o);
		return 1;
	}
	free(o);
	if (nowidx != idx || (mac[0] && strcmp(nowmac, mac)) ||
	    (ck[0] && nowck[0] && strcmp(ck, nowck))) {
		rnote(r, "%s: record %s is of an interface that no longer exists (ifindex %d, address %s, netns cookie %s; now %d, %s, %s): dropped, nothing restored",
		      dev, path, idx, mac, ck[0] ? ck : "-", nowidx, nowmac, nowck[0] ? nowck : "-");
		snprintf(cmd, sizeof(cmd), "rm -f");
		addw(cmd, sizeof(cmd), path);
		side_path(r, dev, "applied", path, sizeof(path));
		addw(cmd, sizeof(cmd), path);
		rc = run(r, cmd, "remove journal", NULL, NULL, err);
		return rc < 0 ? rc : 0;
	}
	if (identity_only || r->safety.force || (!strcmp(h, "1:") && (!strcmp(kind, "tbf") ||
	    !strcmp(kind, "netem") || !strcmp(kind, "htb"))))
		return 1;
	rec = cJSON_Parse(orig);
	parts = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec, "parts"), 0);
	cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(parts, "qdiscs"))
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q, "root"))) {
			const cJSON *k = cJSON_GetObjectItemCaseSensitive(q, "kind");
			const cJSON *hh = cJSON_GetObjectItemCaseSensitive(q, "handle");

			snprintf(rk, sizeof(rk), "%s", cJSON_IsString(k) ? k->valuestring : "");
			snprintf(rh, sizeof(rh), "%s", cJSON_IsString(hh) ? hh->valuestring : "");
		}
	cJSON_Delete(rec);
	if (!strcmp(rk, kind) && !strcmp(rh, h))
		return 1;
	return ll_err_set(err, -EBUSY,
			  "peer %s: %s holds qdisc %s %s, not what linklab applied (tbf/netem/htb 1:); not restoring over it: record %s kept (--force restores it anyway, linklab clear --forget --peer-dev %s drops it)",
			  r->t.alias, dev, kind[0] ? kind : "none", h, path, dev);
}

static int remote_clear_dev(struct peer *p, const char *dev, struct ll_err *err)
{
	struct remote *r = remote_of(p);
	struct rjournal *j;
	char path[128], cmd[256] = "", *o = NULL;
	int rc;

	rc = valid_ifname(dev, err);
	if (rc == 0)
		rc = need_nsid(r, err);
	if (rc < 0)
		return rc;
	/* what a revert timer or hold guard did meanwhile (.revert) */
	side_path(r, dev, "revert", path, sizeof(path));
	addraw(cmd, sizeof(cmd), "[ ! -e");
	addw(cmd, sizeof(cmd), path);
	addraw(cmd, sizeof(cmd), "] || cat");
	addw(cmd, sizeof(cmd), path);
	if (run(r, cmd, "read revert verdict", &o, NULL, NULL) == 0 && o && o[0])
		verdict_consume(r, dev, path, o);
	free(o);
	o = NULL;
	cmd[0] = '\0';
	j = jfind(r, dev, false);
	if (j && j->orig) {
		rc = j->orig[0] == '{' ? clear_check(r, dev, j->orig, false, err) : 1;
		if (rc == 0) {
			free(j->orig);
			memset(j, 0, sizeof(*j));
		}
		return rc <= 0 ? rc : restore(r, dev, j->orig, err);
	}
	/* not touched in this session: a journal left on the peer by an
	 * earlier run (crash, kill -9) is restored; none means a no-op */
	journal_path(r, dev, path, sizeof(path));
	addraw(cmd, sizeof(cmd), "if [ -e");
	addw(cmd, sizeof(cmd), path);
	addraw(cmd, sizeof(cmd), "]; then echo X; cat");
	addw(cmd, sizeof(cmd), path);
	addraw(cmd, sizeof(cmd), "; fi");
	rc = run(r, cmd, "read journal", &o, NULL, err);
	if (rc < 0)
		return rc;
	if (!o[0]) {
		free(o);
		return 0;
	}
	memmove(o, o + 2, strlen(o + 2) + 1);
	if (o[0] != '{')
		o[strcspn(o, "\n")] = '\0';
	if (o[0] != '{' && o[0] != '[') {
		free(o);
		return ll_err_set(err, -EINVAL, "peer %s: %s: record %s is empty or damaged: nothing restored (linklab clear --forget --peer-dev %s drops it)",
				  r->t.alias, dev, path, dev);
	}
	rc = o[0] == '{' ? clear_check(r, dev, o, false, err) : 1;
	if (rc > 0)
		rc = restore(r, dev, o, err);
	free(o);
	return rc;
}

/* Is this apply a hazard for the session? Fills r->warn; -EPERM when it
 * must be refused (100 % loss on the session's interface without --force). */
static int guard(struct remote *r, const char *dev, const struct impair_plan *plan,
		 bool *carries, struct ll_err *err)
{
	struct ll_err cerr = {0};

	*carries = false;
	if (find_sshflow(r, NULL, &cerr) < 0)
		return 0;   /* unknown: nothing to warn about (never blocks) */
	if (strcmp(r->sshflow.dev, dev) != 0)
		return 0;
	*carries = true;
	if (r->safety.exclude_ssh)
		return 0;
	if (plan->netem && plan->loss == UINT32_MAX && !r->safety.force)
		return ll_err_set(err, -EPERM,
				  "peer %s: %s carries this SSH session (%s:%d -> %s:%d): 100%% loss would cut it; refused. Use --exclude-ssh to keep the session out of the impairment, or --force (the peer then restores the original %d s later by its revert timer)",
				  r->t.alias, dev, r->sshflow.client, r->sshflow.client_port,
				  r->sshflow.server, r->sshflow.server_port, revert_after(r));
	snprintf(r->warn, sizeof(r->warn),
		 "%s on %s carries this SSH session (%s:%d -> %s:%d): the impairment slows the console's own link; --exclude-ssh keeps the session out of it",
		 dev, r->t.alias, r->sshflow.client, r->sshflow.client_port, r->sshflow.server,
		 r->sshflow.server_port);
	return 0;
}

/* "; original put back" after a failed read-back's message. */
static void err_append_orig(struct ll_err *err)
{
	size_t n;

	if (!err)
		return;
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, "; original put back");
}

/* Before an ingress apply: refuse (-EBUSY, nothing changed) when dev has
 * an ingress/clsact qdisc that linklab did not create (no IFB marker), as
 * the local backend does. */
static int ingress_check(struct remote *r, const char *dev, struct ll_err *err)
{
	char cmd[512] = "", path[128], *o = NULL;
	int rc;

	ifb_path(r, dev, path, sizeof(path));
	rc = addraw(cmd, sizeof(cmd), "if [ -e");
	rc |= addw(cmd, sizeof(cmd), path);
	rc |= addraw(cmd, sizeof(cmd), "]; then echo ours; elif tc qdisc show dev");
	rc |= addw(cmd, sizeof(cmd), dev);
	rc |= addraw(cmd, sizeof(cmd), "| grep -Eq '^qdisc (ingress|clsact) '; then echo busy; else echo none; fi");
	if (rc)
		return ll_err_set(err, -ENOSPC, "command too long");
	rc = run(r, cmd, "check ingress qdisc", &o, NULL, err);
	if (rc < 0)
		return rc;
	if (strncmp(o, "busy", 4) == 0)
		rc = ll_err_set(err, -EBUSY,
				"peer %s: %s has an ingress qdisc linklab did not create; nothing changed (remove it with: tc qdisc del dev %s ingress)",
				r->t.alias, dev, dev);
	free(o);
	return rc;
}

/* First line of an ingress apply: the IFB marker (journal) on the peer,
 * written before the IFB device is created, so clear, clear --all, the
 * revert timer and the hold guard remove it even after a kill -9. */
static int ingress_mark_line(struct remote *r, const char *dev, char *cmd,
			     size_t len, struct ll_err *err)
{
	char path[128], ifb[IF_NAMESIZE];
	int rc;

	ifb_path(r, dev, path, sizeof(path));
	qdisc_ifb_name(dev, ifb, sizeof(ifb));
	rc = addraw(cmd, len, "{ umask 077; printf '%s\\n'");
	rc |= addw(cmd, len, ifb);
	rc |= addraw(cmd, len, ">");
	rc |= addw(cmd, len, path);
	rc |= addraw(cmd, len, "; }");
	return rc ? ll_err_set(err, -ENOSPC, "tc command too long") : 0;
}

/* Step 1 of an apply: arm dev's revert timer (*timer its pid, 0 if none).
 * Without one: the console's apply is not made (-ENOLCK, so it can ask),
 * an interface carrying the session is refused (-EPERM), unless the user
 * said yes (safety.unarmed_ok). A newer timer supersedes older ones. */
static int arm_step(struct remote *r, const char *dev, bool carries,
		    long *timer, struct ll_err *err)
{
	struct rjournal *j = jfind(r, dev, false);
	struct ll_err aerr = {0};

	*timer = 0;
	if (!j || !j->orig)
		return 0;
	if (getenv("LINKLAB_TEST_ARM_FAIL"))   /* fault injection (tests) */
		ll_err_set(&aerr, -EIO, "LINKLAB_TEST_ARM_FAIL set");
	else
		*timer = arm_revert(r, dev, j->orig, &aerr);
	if (*timer) {
		supersede_timers(r, dev, *timer);
		return 0;
	}
	if (r->safety.unarmed_ok)
		return 0;
	/* the console asks (its hold guard still restores the peer when
	 * the session dies); without it, an interface that carries the
	 * session is refused */
	if (r->safety.ask_unarmed)
		return ll_err_set(err, -ENOLCK,
				  "peer %s: no revert timer could be armed for %s (%s)%s: if the session dies during the apply, %s keeps the change until the hold guard or `linklab clear` restores it; nothing changed",
				  r->t.alias, dev, aerr.msg[0] ? aerr.msg : "unknown",
				  carries ? ", and it carries this SSH session" : "", dev);
	if (carries)
		return ll_err_set(err, -EPERM,
				  "peer %s: %s carries this SSH session and no revert timer could be armed (%s); refused",
				  r->t.alias, dev, aerr.msg[0] ? aerr.msg : "unknown");
	return 0;
}

/* One kernel apply on the peer, step by step (remote_apply_kernel). */
struct rapply {
	struct remote *r;
	const char *dev;
	struct impair_plan plan;
	struct qdisc_state qs;
	char *lines, *cmd, *errt;
	long timer;
	bool carries, excluded, ingress_ok;
	int lost_rc;            /* the read-back's error when the session went */
};

/* Put dev's journalled original back after a failed step; a restore that
 * fails too is said in err. */
static void apply_undo(struct rapply *a, struct ll_err *err, bool say_back)
{
	struct rjournal *j = jfind(a->r, a->dev, false);
	struct ll_err rerr = {0};

	if (j && j->orig && restore(a->r, a->dev, j->orig, &rerr) < 0)
		ll_err_prefix(err, "restoring the original failed too (%s); ", rerr.msg);
	else if (say_back)
		err_append_orig(err);
}

/* Step 0: plan, session hazards, ingress check, the journal (nothing
 * changed yet). */
static int apply_prepare(struct rapply *a, const struct impair *d, struct ll_err *err)
{
	struct remote *r = a->r;
	int rc;

	rc = plan_lines(r, a->dev, d, a->lines, CMD_MAX, &a->plan, err);
	if (rc == 0)
		rc = guard(r, a->dev, &a->plan, &a->carries, err);
	if (rc == 0 && a->carries && r->safety.exclude_ssh) {
		rc = exclude_lines(r, a->dev, &a->plan, a->lines, CMD_MAX, err);
		a->excluded = rc == 0;
	}
	if (rc == 0 && a->plan.ingress)
		rc = ingress_check(r, a->dev, err);
	if (rc == 0)
		rc = journal_take(r, a->dev, err);
	if (rc == 0 && a->plan.ingress)
		rc = ingress_mark_line(r, a->dev, a->cmd, CMD_MAX, err);
	return rc;
}

/* Step 2a: the lines as ONE shell command joined with &&, then the
 * .applied line of this apply's timer. */
static int apply_join(struct rapply *a, struct ll_err *err)
{
	char *s;

	/* a change that reaches the peer only after its revert timer gave up
	 * (the session stalled that long) would stay for good: it runs only
	 * while the timer that undoes it is armed */
	if (a->timer > 1) {
		char g[160];
		size_t u = strlen(a->cmd);
		int gl = snprintf(g, sizeof(g), "{ kill -0 %ld 2>/dev/null || { echo "
				  "'revert timer %ld is gone: not applied' >&2; exit 75; }; }%s",
				  a->timer, a->timer, u ? " && " : "");

		if (gl < 0 || (size_t)gl >= sizeof(g) || u + (size_t)gl >= CMD_MAX)
			return ll_err_set(err, -ENOSPC, "tc command too long");
		memmove(a->cmd + gl, a->cmd, u + 1);     /* first, before all */
		memcpy(a->cmd, g, (size_t)gl);
	}
	for (s = a->lines; *s; ) {
		size_t n = strcspn(s, "\n"), u = strlen(a->cmd);

		if (n && (size_t)snprintf(a->cmd + u, CMD_MAX - u, "%s%.*s", u ? " && " : "",
					  (int)n, s) >= CMD_MAX - u)
			return ll_err_set(err, -ENOSPC, "tc command too long");
		s += n + (s[n] == '\n');
	}
	if (applied_line(a->r, a->dev, a->timer, a->cmd, CMD_MAX) < 0)
		return ll_err_set(err, -ENOSPC, "tc command too long");
	return 0;
}

/* Step 3a: read dev back (its own round trip; an ingress dial: dev's
 * ingress qdisc and the plan on the IFB device). 1 when the session was
 * lost, 0 read, <0 tc answered but the state cannot be read (the original
 * is put back then; a revert timer that already fired explains it). */
static int apply_read(struct rapply *a, struct ll_err *err)
{
	struct ll_err rberr = {0};
	bool session_err = false, fired = false;
	char ifb[IF_NAMESIZE];
	int rc;

	qdisc_ifb_name(a->dev, ifb, sizeof(ifb));
	rc = read_state(a->r, a->plan.ingress ? ifb : a->dev, true, &a->qs, &session_err, &rberr);
	if (rc == 0 && a->plan.ingress) {
		struct qdisc_state *ds = calloc(1, sizeof(*ds));

		rc = ds ? read_state(a->r, a->dev, false, ds, &session_err, &rberr)
			: ll_err_set(&rberr, -ENOMEM, "out of memory");
		a->ingress_ok = rc == 0 && ds->has_ingress;
		free(ds);
	}
	if (rc < 0 && err)
		*err = rberr;
	if (rc < 0 && session_err) {
		a->lost_rc = rc;
		return 1;
	}
	if (rc < 0) {
		if (a->timer) {
			struct ll_err derr = {0};

			fired = disarm_revert(a->r, a->timer, &derr) == -ETIME;
			if (fired && err)
				*err = derr;
			a->timer = 0;
		}
		apply_undo(a, err, !fired);
	}
	return rc;
}

/* Step 3b: does the read-back hold the plan? If not, the original goes
 * back (-EIO). */
static int apply_verify(struct rapply *a, struct ll_err *err)
{
	const struct impair_plan *pl = &a->plan;
	const char *want = (pl->scoped || a->excluded) ? "htb" : pl->tbf ? "tbf" : "netem";
	const char *tdev = a->dev;
	char ifb[IF_NAMESIZE];
	uint64_t got = a->qs.n ? a->qs.q[0].rate / 8 : 0;
	bool rate_bad = false;
	int rc;

	if (pl->ingress) {
		qdisc_ifb_name(a->dev, ifb, sizeof(ifb));
		tdev = ifb;
	}
	if (pl->tbf && !a->excluded && pl->scoped)
		/* tc class show prints a rounded rate (< 0.1 %) */
		rate_bad = got + pl->rate_Bps / 1000 + 1 < pl->rate_Bps ||
			   got > pl->rate_Bps + pl->rate_Bps / 1000 + 1;
	else if (pl->tbf && !a->excluded)
		rate_bad = got != pl->rate_Bps;
	if (a->qs.n >= 1 && strcmp(a->qs.q[0].kind, want) == 0 && !rate_bad &&
	    (!pl->scoped || (a->qs.scoped && a->qs.dport == pl->dport &&
			     a->qs.dst_plen == pl->dst_plen)) &&
	    (!pl->ingress || a->ingress_ok))
		return 0;
	rc = ll_err_set(err, -EIO,
			"peer %s: read-back of %s does not match (root %s, rate %llu bit/s%s%s); original put back",
			a->r->t.alias, tdev, a->qs.n ? a->qs.q[0].kind : "none",
			a->qs.n ? (unsigned long long)a->qs.q[0].rate : 0ULL,
			pl->scoped && !a->qs.scoped ? ", no scope filter" : "",
			pl->ingress && !a->ingress_ok ? ", no ingress qdisc" : "");
	apply_undo(a, err, false);
	return rc;
}

/* Step 4: the peer answered the read-back; this round trip disarms the
 * timer (commit confirmed). Then the hold guard follows the journal (a
 * failed apply put the original back and dropped it). */
static int apply_confirm(struct rapply *a, int rc, struct ll_err *err)
{
	struct ll_err gerr = {0};
	int grc;

	if (a->timer) {
		struct ll_err derr = {0};
		int drc = disarm_revert(a->r, a->timer, &derr);

		if (drc < 0 && rc == 0) {
			rc = drc;
			if (err)
				*err = derr;
			if (drc != -ETIME)
				ll_err_prefix(err, "peer %s: session lost before the change to %s was confirmed; the peer restores the original within %d s by its armed revert timer (pid %ld): ",
					      a->r->t.alias, a->dev, revert_after(a->r), a->timer);
		}
	}
	grc = guard_refresh(a->r, &gerr);
	if (grc < 0 && rc == 0) {
		rc = grc;
		if (err)
			*err = gerr;
	}
	return rc;
}

/* Fault injection for tests/lab/ssh.sh: hold between the change and its
 * confirmation so the test can kill the session there. */
static void test_hold(void)
{
	const char *v = getenv("LINKLAB_TEST_HOLD_BEFORE_CONFIRM_MS");
	long ms = v ? strtol(v, NULL, 10) : 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (ms > 0 && ms <= 60000)
		nanosleep(&ts, NULL);
}

static int remote_apply_kernel(struct peer *p, const char *dev, const struct impair *d,
			       struct ll_err *err)
{
	struct rapply a = { .r = remote_of(p), .dev = dev };
	struct ll_err aerr = {0};
	int rc;

	a.r->warn[0] = '\0';
	a.r->notes[0] = '\0';
	if (impair_is_empty(d))
		return remote_clear(p, dev, err);
	a.lines = calloc(1, CMD_MAX);
	a.cmd = calloc(1, CMD_MAX);
	rc = a.lines && a.cmd ? apply_prepare(&a, d, err)
			      : ll_err_set(err, -ENOMEM, "out of memory");
	/* 1. arm (a separate round trip, before any change) */
	if (rc == 0)
		rc = arm_step(a.r, dev, a.carries, &a.timer, err);
	if (rc < 0)
		goto out;
	/* 2. apply */
	rc = apply_join(&a, err);
	if (rc < 0) {
		if (a.timer)   /* nothing changed: the timer must not fire */
			disarm_revert(a.r, a.timer, NULL);
		goto out;
	}
	rc = run(a.r, a.cmd, "tc", NULL, &a.errt, &aerr);
	if (rc < 0 && err)
		*err = aerr;
	if (rc < 0 && !strstr(aerr.msg, "failed (exit"))
		goto lost;   /* the session, not tc */
	if (rc < 0) {
		if (a.errt && strstr(a.errt, "Specified qdisc kind is unknown") && a.plan.netem)
			rc = ll_err_set(err, -ENOTSUP,
					"peer %s: peer's kernel has no netem (CONFIG_NET_SCH_NETEM); try modprobe sch_netem",
					a.r->t.alias);
		apply_undo(&a, err, false);
		rc = apply_confirm(&a, rc, err);
		goto out;
	}
	test_hold();
	/* 3. read back and compare */
	rc = apply_read(&a, err);
	if (rc == 1)
		goto lost;
	if (rc == 0)
		rc = apply_verify(&a, err);
	rc = apply_confirm(&a, rc, err);
	goto out;
lost:
	/* the session died mid-apply: the peer restores itself */
	rc = rc == 1 ? a.lost_rc : rc;
	if (a.timer)
		ll_err_prefix(err, "peer %s: session lost while applying to %s; the peer restores the original within %d s by its armed revert timer (pid %ld): ",
			      a.r->t.alias, dev, revert_after(a.r), a.timer);
out:
	free(a.errt);
	free(a.lines);
	free(a.cmd);
	return rc;
}

/* Kill the remembered server pid if it still runs; close its channel. */
static int stop_server(struct remote *r, struct ll_err *err)
{
	char cmd[128];
	int rc = 0;

	if (r->srv_pid > 1) {
		snprintf(cmd, sizeof(cmd), "kill -0 %ld 2>/dev/null && kill %ld; true",
			 r->srv_pid, r->srv_pid);
		rc = run(r, cmd, "stop test server", NULL, NULL, err);
	}
	ssh_spawn_close(r->srv);
	r->srv = NULL;
	r->srv_pid = 0;
	r->srv_port = 0;
	return rc;
}

static int remote_server_stop(struct peer *p, struct ll_err *err)
{
	return stop_server(remote_of(p), err);
}

/* Start cmd (it must print its pid first), wait for "Server listening on". */
static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Start cmd (it prints its pid first) and wait, 10 s in all, for the line
 * "Server listening on PORT" (iperf3 3.12 and linklab serve print it). */
static int try_server(struct remote *r, const char *cmd, int *port,
		      struct ll_err *err)
{
	char line[512], *end;
	int64_t deadline = mono_ms() + 10000;
	int rc, i;

	rc = ssh_spawn(r->s, cmd, &r->srv, err);
	if (rc < 0)
		return rc;
	rc = ssh_spawn_readline(r->srv, line, sizeof(line), 10000, err);
	if (rc < 0)
		goto fail;
	r->srv_pid = strtol(line, &end, 10);
	if (end == line || r->srv_pid <= 1) {
		rc = ll_err_set(err, -EPROTO, "test server: expected a pid, got \"%.60s\"", line);
		goto fail;
	}
	for (i = 0; i < 50; i++) {
		int left = (int)(deadline - mono_ms());

		if (left <= 0) {
			rc = ll_err_set(err, -ETIMEDOUT,
					"test server not listening within 10 s");
			goto fail;
		}
		rc = ssh_spawn_readline(r->srv, line, sizeof(line), left, err);
		if (rc < 0)
			goto fail;
		if (strncmp(line, "Server listening on ", 20) == 0) {
			long pt = strtol(line + 20, &end, 10);

			if (pt > 0 && pt < 65536) {
				r->srv_port = (int)pt;
				*port = (int)pt;
				return 0;
			}
		}
	}
	rc = ll_err_set(err, -EPROTO, "test server printed no \"Server listening on\" line");
fail:
	stop_server(r, NULL);
	return rc;
}

/* The server must not outlive the session: a watchdog reads the channel's
 * stdin (saved on fd 3: an asynchronous list gets /dev/null) and kills the
 * server ($$: exec keeps the pid) at EOF - the channel closed, or sshd gone
 * with the session. */
#define SRV_WATCHDOG "exec 3<&0; { cat <&3 >/dev/null 2>&1; kill $$ 2>/dev/null; } >/dev/null 2>&1 & "

static int remote_server_start(struct peer *p, int *port, struct ll_err *err)
{
	struct remote *r = remote_of(p);
	char *o = NULL, cmd[320];
	int rc, pt;

	if (r->srv)
		remote_server_stop(p, NULL);
	rc = run(r, "command -v linklab >/dev/null 2>&1 && echo yes || echo no",
		 "command -v linklab", &o, NULL, err);
	if (rc < 0)
		return rc;
	if (strncmp(o, "yes", 3) == 0) {
		rc = try_server(r, p->server_many ?
				"sh -c 'echo $$; " SRV_WATCHDOG "exec linklab serve -p 0'" :
				"sh -c 'echo $$; " SRV_WATCHDOG "exec linklab serve -1 -p 0'",
				port, err);
		if (rc == 0) {
			free(o);
			return 0;
		}
	}
	free(o);
	for (pt = 5201; pt <= 5210; pt++) {
		snprintf(cmd, sizeof(cmd), "sh -c 'echo $$; " SRV_WATCHDOG "exec iperf3 -s %s-p %d --forceflush' 2>&1",
			 p->server_many ? "" : "-1 ", pt);
		rc = try_server(r, cmd, port, err);
		if (rc == 0 || rc == -ETIMEDOUT || rc == -EIO)
			break;
	}
	if (rc < 0)
		ll_err_prefix(err, "peer %s: cannot start a test server (linklab serve or iperf3 -s): ",
			      r->t.alias);
	return rc;
}

static void remote_close(struct peer *p)
{
	struct remote *r = remote_of(p);
	int i;

	if (!r)
		return;
	if (r->srv)
		remote_server_stop(p, NULL);
	/* a normal close keeps what was applied (like tc): the guard is
	 * disarmed */
	guard_disarm(r);
	/* not released by the console: the record stays for the next run */
	peer_lock_remote_release(r->keeper, false);
	r->keeper = NULL;
	/* every confirmed apply disarmed its timer; a timer still armed
	 * belongs to an apply that could not be confirmed (the session or
	 * its channel was lost): it stays armed and restores the peer */
	for (i = 0; i < RJ_MAX; i++)
		free(r->j[i].orig);
	ssh_close(r->s);
	free(r);
	p->priv = NULL;
}

/* Closed as a lost session: the guard keeps what it holds to restore. */
static void remote_abandon(struct peer *p)
{
	struct remote *r = remote_of(p);

	if (!r)
		return;
	r->abandoned = true;
	remote_close(p);
}


/* ---- offloads and TCP sysctls (hosttune.h) ------------------------------- */

static void tune_jpath(struct remote *r, char *buf, size_t len)
{
	remote_probe(r);
	snprintf(buf, len, JOURNAL_DIR "/tune-remote-%s.txt", r->nsid);
}

static int remote_offload_get(struct peer *p, const char *dev,
			      struct offload_state *o, struct ll_err *err)
{
	struct remote *r = remote_of(p);
	char cmd[128] = "ethtool -k", *out = NULL;
	int rc = valid_ifname(dev, err);

	if (rc < 0)
		return rc;
	addw(cmd, sizeof(cmd), dev);
	rc = run(r, cmd, "ethtool -k", &out, NULL, err);
	if (rc == -ENOENT)
		return ll_err_set(err, -ENOENT,
				  "peer %s: ethtool is not installed (needed for offloads; apt install ethtool)",
				  r->t.alias);
	if (rc < 0)
		return rc;
	rc = hosttune_parse_ethtool_k(out, o, err);
	free(out);
	if (rc < 0)
		ll_err_prefix(err, "peer %s: ", r->t.alias);
	return rc;
}

/* Shell text that appends "KEY VALUE" to the journal unless KEY is there:
 * grep -q "^KEY " F 2>/dev/null || printf '%s\n' "KEY VALUE" >> F */
static int jadd(char *cmd, size_t len, const char *path, const char *key,
		const char *value_shell)
{
	char line[256];
	int rc;

	rc = addraw(cmd, len, "{ umask 077; mkdir -p");
	rc |= addw(cmd, len, JOURNAL_DIR);
	rc |= addraw(cmd, len, "; grep -qF -e");
	rc |= addw(cmd, len, key + 0);
	rc |= addw(cmd, len, path);
	rc |= addraw(cmd, len, "2>/dev/null || printf '%s %s\\n'");
	snprintf(line, sizeof(line), "%s", key);
	rc |= addw(cmd, len, line);
	rc |= addraw(cmd, len, value_shell);
	rc |= addraw(cmd, len, ">>");
	rc |= addw(cmd, len, path);
	rc |= addraw(cmd, len, "; }");
	return rc ? -ENOSPC : 0;
}

static int remote_offload_set(struct peer *p, const char *dev,
			      const struct offload_state *want,
			      struct ll_err *err)
{
	struct remote *r = remote_of(p);
	struct offload_state cur, now;
	char path[128], key[64], *cmd;
	int rc, i, changes = 0;

	rc = remote_offload_get(p, dev, &cur, err);
	if (rc < 0)
		return rc;
	cmd = calloc(1, CMD_MAX);
	if (!cmd)
		return ll_err_set(err, -ENOMEM, "out of memory");
	tune_jpath(r, path, sizeof(path));
	for (i = 0; i < HOSTTUNE_NOFF; i++) {
		if (want->v[i] < 0 || want->v[i] == cur.v[i])
			continue;
		snprintf(key, sizeof(key), "offload %s %s", dev, hosttune_offload_name(i));
		if (changes)
			addraw(cmd, CMD_MAX, "&&");
		if (jadd(cmd, CMD_MAX, path, key, cur.v[i] ? "on" : "off") < 0) {
			free(cmd);
			return ll_err_set(err, -ENOSPC, "command too long");
		}
		changes++;
	}
	if (!changes) {
		free(cmd);
		return 0;
	}
	addraw(cmd, CMD_MAX, "&& ethtool -K");
	addw(cmd, CMD_MAX, dev);
	for (i = 0; i < HOSTTUNE_NOFF; i++)
		if (want->v[i] >= 0 && want->v[i] != cur.v[i]) {
			addraw(cmd, CMD_MAX, hosttune_offload_name(i));
			addraw(cmd, CMD_MAX, want->v[i] ? "on" : "off");
		}
	rc = run(r, cmd, "ethtool -K", NULL, NULL, err);
	free(cmd);
	if (rc == 0)
		rc = remote_offload_get(p, dev, &now, err);
	for (i = 0; rc == 0 && i < HOSTTUNE_NOFF; i++)
		if (want->v[i] >= 0 && now.v[i] != want->v[i])
			rc = ll_err_set(err, -EIO, "peer %s: offload %s: %s is still %s (fixed by the driver?)",
					r->t.alias, dev, hosttune_offload_name(i),
					now.v[i] ? "on" : "off");
	r->tuned = true;
	if (rc == 0)
		rc = guard_refresh(r, err);
	return rc;
}

static void sysctl_proc(int i, char *buf, size_t len)
{
	char *c;

	snprintf(buf, len, "/proc/sys/%s", hosttune_sysctl_name(i));
	for (c = buf + 10; *c; c++)
		if (*c == '.')
			*c = '/';
}

static int remote_sysctl_get(struct peer *p, struct sysctl_state *s,
			     struct ll_err *err)
{
	struct remote *r = remote_of(p);
	char cmd[2048] = "", path[96], *out = NULL, *line, *save = NULL;
	int i, rc;

	/* the six sysctls, then (as numbers 6, 7) the available and allowed
	 * congestion controls, (8) whether the peer is in another netns than the
	 * host's */
	for (i = 0; i <= HOSTTUNE_NSYSCTL + 1; i++) {
		if (i < HOSTTUNE_NSYSCTL)
			sysctl_proc(i, path, sizeof(path));
		else
			snprintf(path, sizeof(path), "/proc/sys/net/ipv4/tcp_%s_congestion_control",
				 i == HOSTTUNE_NSYSCTL ? "available" : "allowed");
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd),
			 "printf '%d '; tr -s ' \\t' '  ' < %s 2>/dev/null || echo; ", i, path);
	}
	snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd),
		 "printf '%d '; [ -d /proc/sys/net/core ] && "
		 "{ [ -e %s ] && echo 0 || echo 1; } || echo; ",
		 HOSTTUNE_NSYSCTL + 2, NETNS_INIT_ONLY);
	memset(s, 0, sizeof(*s));
	s->other_netns = -1;
	rc = run(r, cmd, "read sysctls", &out, NULL, err);
	if (rc < 0)
		return rc;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *v;

		char *to;
		size_t tolen;

		i = atoi(line);
		v = strchr(line, ' ');
		if (i < 0 || i > HOSTTUNE_NSYSCTL + 2 || !v)
			continue;
		v++;
		if (i == HOSTTUNE_NSYSCTL + 2) {
			s->other_netns = *v == '1' ? 1 : *v == '0' ? 0 : -1;
			continue;
		}
		to = i < HOSTTUNE_NSYSCTL ? s->v[i] : i == HOSTTUNE_NSYSCTL ?
		     s->cc_available : s->cc_allowed;
		tolen = i < HOSTTUNE_NSYSCTL ? sizeof(s->v[i]) : sizeof(s->cc_available);
		snprintf(to, tolen, "%s", v);
		/* the tabs collapsed to spaces; trailing space dropped */
		while (to[0] && to[strlen(to) - 1] == ' ')
			to[strlen(to) - 1] = '\0';
	}
	free(out);
	return 0;
}

static int remote_sysctl_write(struct remote *r, int i, const char *val,
			       bool journal, struct ll_err *err)
{
	char *cmd = calloc(1, CMD_MAX), path[96], jp[128], key[64], cur[160];
	char *out = NULL;
	int rc = 0;

	if (!cmd)
		return ll_err_set(err, -ENOMEM, "out of memory");
	sysctl_proc(i, path, sizeof(path));
	if (journal) {
		tune_jpath(r, jp, sizeof(jp));
		snprintf(key, sizeof(key), "sysctl %s", hosttune_sysctl_name(i));
		snprintf(cur, sizeof(cur), "\"$(tr -s ' \\t' '  ' < %s)\"", path);
		rc = jadd(cmd, CMD_MAX, jp, key, cur);
		rc |= addraw(cmd, CMD_MAX, "&&");
	}
	rc |= addraw(cmd, CMD_MAX, "printf '%s\\n'");
	rc |= addw(cmd, CMD_MAX, val);
	rc |= addraw(cmd, CMD_MAX, ">");
	rc |= addw(cmd, CMD_MAX, path);
	rc |= addraw(cmd, CMD_MAX, "&& tr -s ' \\t' '  ' <");
	rc |= addw(cmd, CMD_MAX, path);
	if (rc) {
		free(cmd);
		return ll_err_set(err, -ENOSPC, "command too long");
	}
	rc = run(r, cmd, "write sysctl", &out, NULL, err);
	free(cmd);
	if (rc == 0) {
		size_t n = strcspn(out, "\n");

		while (n && out[n - 1] == ' ')
			n--;
		out[n] = '\0';
		if (strcmp(out, val) != 0)
			rc = ll_err_set(err, -EIO, "peer %s: sysctl %s: wrote \"%s\", reads back \"%s\"",
					r->t.alias, hosttune_sysctl_name(i), val, out);
	} else {
		ll_err_prefix(err, "sysctl %s = %s: ", hosttune_sysctl_name(i), val);
	}
	free(out);
	return rc;
}

static int remote_sysctl_set(struct peer *p, const char *name, const char *value,
			     struct ll_err *err)
{
	struct remote *r = remote_of(p);
	struct sysctl_state s;
	char val[64];
	int i = hosttune_sysctl_index(name), rc;

	rc = hosttune_sysctl_check(i, value, val, sizeof(val), err);
	if (rc < 0)
		return rc;
	rc = remote_sysctl_get(p, &s, err);
	if (rc < 0)
		return rc;
	if (!s.v[i][0])
		return ll_err_set(err, -ENOENT, "peer %s: sysctl %s is not on that kernel",
				  r->t.alias, hosttune_sysctl_name(i));
	if (strcmp(s.v[i], val) == 0)
		return 0;
	rc = remote_sysctl_write(r, i, val, true, err);
	r->tuned = true;
	if (rc == 0)
		rc = guard_refresh(r, err);
	return rc;
}

static int remote_tune_restore(struct peer *p, struct ll_err *err)
{
	struct remote *r = remote_of(p);
	char jp[128], cmd[256] = "cat", *out = NULL, *line, *save = NULL;
	int rc, first = 0;

	tune_jpath(r, jp, sizeof(jp));
	addw(cmd, sizeof(cmd), jp);
	addraw(cmd, sizeof(cmd), "2>/dev/null || true");
	rc = run(r, cmd, "read tune journal", &out, NULL, err);
	if (rc < 0)
		return rc;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct hosttune_jline j;
		int e = 0;

		if (hosttune_parse_jline(line, &j) < 0)
			continue;
		if (j.kind == 's') {
			char val[64];

			if (hosttune_sysctl_check(j.idx, j.value, val, sizeof(val), NULL) == 0)
				e = remote_sysctl_write(r, j.idx, val, false, err);
		} else if (valid_ifname(j.dev, NULL) == 0) {
			char c2[128] = "ethtool -K";

			addw(c2, sizeof(c2), j.dev);
			addraw(c2, sizeof(c2), hosttune_offload_name(j.idx));
			addraw(c2, sizeof(c2), j.on ? "on" : "off");
			e = run(r, c2, "ethtool -K (restore)", NULL, NULL, err);
		}
		if (e < 0 && !first)
			first = e;
	}
	free(out);
	if (first)
		return first;
	snprintf(cmd, sizeof(cmd), "rm -f");
	addw(cmd, sizeof(cmd), jp);
	rc = run(r, cmd, "remove tune journal", NULL, NULL, err);
	if (rc == 0) {
		r->tuned = false;
		rc = guard_refresh(r, err);
	}
	return rc;
}


/* The record files on the peer (every namespace), each as "PATH\n" then its
 * text, separated by RS_SEP lines. */
#define LIST_RECORDS "for f in " JOURNAL_DIR "/remote-*.tc.json " JOURNAL_DIR "/remote-*.revert; do [ -e \"$f\" ] || continue; " \
	"echo " RS_SEP "; printf '%s\\n' \"$f\"; cat \"$f\"; echo; done; true"

/* Walk the records listed by LIST_RECORDS: fn(path, text) for each. */
static int each_record(struct remote *r, int (*fn)(struct remote *, const char *,
						    char *, void *),
		       void *arg, struct ll_err *err)
{
	char *out = NULL, *at, *next;
	int rc;

	rc = run(r, LIST_RECORDS, "list journals", &out, NULL, err);
	if (rc < 0)
		return rc;
	for (at = strstr(out, RS_SEP); at; at = next) {
		char *path = at + strlen(RS_SEP) + 1, *text;

		next = strstr(path, RS_SEP);
		if (next)
			*next = '\0';
		text = strchr(path, '\n');
		if (!text)
			break;
		*text++ = '\0';
		while (*text == ' ' || *text == '\n')
			text++;
		rc = fn(r, path, text, arg);
		if (rc < 0)
			break;
	}
	free(out);
	return rc < 0 ? rc : 0;
}

static bool is_verdict(const char *path)
{
	size_t n = strlen(path);

	return n > 7 && !strcmp(path + n - 7, ".revert");
}

/* dev of a record path (or .revert verdict) of this namespace ("" if
 * another namespace's). */
static void record_dev(struct remote *r, const char *path, char *dev, size_t len)
{
	char pre[96];
	size_t n = strlen(path), pl, ext = is_verdict(path) ? 7 : 8;

	snprintf(pre, sizeof(pre), JOURNAL_DIR "/remote-%s-", r->nsid);
	pl = strlen(pre);
	dev[0] = '\0';
	if (strncmp(path, pre, pl) || n < pl + ext + 1 ||
	    strcmp(path + n - ext, ext == 7 ? ".revert" : ".tc.json"))
		return;
	snprintf(dev, len, "%.*s", (int)(n - ext - pl), path + pl);
	if (valid_ifname(dev, NULL) < 0)
		dev[0] = '\0';
}

/* What a revert timer or hold guard did (its .revert file, arm_revert):
 * out says it ("revert timer pid 12 at 18:42:07: restored, read back
 * equal to the record"); 1 when its read-back differs from the record
 * (*orig then the record, malloc'd), 0 otherwise. */
static int verdict(const char *text, char *out, size_t len, char **orig)
{
	long long at = 0;
	long pid = 0;
	int st = -1, n = 0;
	char who[16] = "", word[16] = "", tm[16] = "?", why[320] = "";
	char *sep1 = strstr(text, VSEP), *sep2 = sep1 ? strstr(sep1 + 1, VSEP) : NULL;
	time_t t;
	struct tm lt;

	*orig = NULL;
	sscanf(text, "%lld %ld %15s %15s %d%n", &at, &pid, who, word, &st, &n);
	t = (time_t)at;
	if (at > 0 && localtime_r(&t, &lt))
		strftime(tm, sizeof(tm), "%H:%M:%S", &lt);
	if (strcmp(word, "restored")) {
		const char *w = word[0] && strstr(text, word) ? strstr(text, word) : text;

		snprintf(out, len, "revert %s pid %ld at %s: %.*s", who, pid, tm,
			 (int)strcspn(w, "\n"), w);
		return 0;
	}
	if (st != 0) {
		snprintf(out, len, "revert %s pid %ld at %s: its restore failed (exit %d); record kept",
			 who, pid, tm, st);
		return 0;
	}
	if (sep1 && sep2) {
		const char *from = sep1 + strlen(VSEP) + strspn(sep1 + strlen(VSEP), " \n");
		char *a = strndup(from, (size_t)(sep2 - from));
		int d = a ? tctree_diff(a, sep2 + strlen(VSEP), why, sizeof(why)) : -ENOMEM;

		if (d == 0) {
			snprintf(out, len, "revert %s pid %ld at %s: restored, read back equal to the record",
				 who, pid, tm);
			free(a);
			return 0;
		}
		snprintf(out, len, "revert %s pid %ld at %s: restored, but the read-back differs from the record: %.200s",
			 who, pid, tm, d < 0 ? "no read-back" : why);
		*orig = a;
		return 1;
	}
	snprintf(out, len, "revert %s pid %ld at %s: restored, no read-back", who, pid, tm);
	return 0;
}

/* clear: report dev's .revert verdict and drop it; a read-back that
 * differed puts the record back (if none is there) so clear restores it
 * again and compares. */
static void verdict_consume(struct remote *r, const char *dev, const char *vpath,
			    const char *text)
{
	char msg[400], jp[128], *orig = NULL, *cmd = calloc(1, CMD_MAX);

	if (!cmd)
		return;
	journal_path(r, dev, jp, sizeof(jp));
	if (verdict(text, msg, sizeof(msg), &orig) == 1 && orig) {
		rnote(r, "%s: %s: record put back in %s", dev, msg, jp);
		snprintf(cmd, CMD_MAX, "umask 077; [ -e");
		if (!(addw(cmd, CMD_MAX, jp) | addraw(cmd, CMD_MAX, "] || printf '%s\\n'") |
		      addw(cmd, CMD_MAX, orig) | addraw(cmd, CMD_MAX, ">") | addw(cmd, CMD_MAX, jp)))
			run(r, cmd, "put back record", NULL, NULL, NULL);
	} else {
		rnote(r, "%s: %s", dev, msg);
	}
	snprintf(cmd, CMD_MAX, "rm -f");
	addw(cmd, CMD_MAX, vpath);
	run(r, cmd, "remove revert verdict", NULL, NULL, NULL);
	free(orig);
	free(cmd);
}

struct clear_all_ctx {
	struct peer *p;
	int failed, nfail;
};

static int clear_one(struct remote *r, const char *path, char *text, void *arg)
{
	struct clear_all_ctx *c = arg;
	char dev[IF_NAMESIZE + 8], cmd[256] = "ip link show dev", *o = NULL;
	struct ll_err e2 = {0};
	int e;

	record_dev(r, path, dev, sizeof(dev));
	if (!dev[0])
		return 0;   /* another namespace's: left for a linklab there */
	if (is_verdict(path)) {
		verdict_consume(r, dev, path, text);
		return 0;
	}
	if (text[0] != '{' && text[0] != '[') {
		rnote(r, "record %s is empty or damaged: nothing restored from it (linklab clear --all --forget drops it)",
		      path);
		c->nfail++;
		c->failed = c->failed ? c->failed : -EINVAL;
		return 0;
	}
	addw(cmd, sizeof(cmd), dev);
	addraw(cmd, sizeof(cmd), ">/dev/null 2>&1 && echo yes || echo no");
	if (run(r, cmd, "check interface", &o, NULL, NULL) == 0 && !strncmp(o, "no", 2)) {
		snprintf(cmd, sizeof(cmd), "rm -f");
		addw(cmd, sizeof(cmd), path);
		if (run(r, cmd, "remove journal", NULL, NULL, NULL) == 0)
			rnote(r, "%s: record %s dropped: the interface no longer exists", dev, path);
		free(o);
		return 0;
	}
	free(o);
	e = remote_clear_dev(c->p, dev, &e2);
	if (e < 0) {
		rnote(r, "%s", e2.msg);
		c->nfail++;
		c->failed = c->failed ? c->failed : e;
	}
	return 0;
}

/* After a crash or kill -9: restore every interface with a journal of this
 * network namespace on the peer (each failing record noted; records of
 * interfaces that no longer exist dropped with a note), then the
 * offload/sysctl journal. */
static int remote_clear_all(struct peer *p, struct ll_err *err)
{
	struct remote *r = remote_of(p);
	struct clear_all_ctx c = { p, 0, 0 };
	int rc;

	r->notes[0] = '\0';
	rc = need_nsid(r, err);
	if (rc == 0)
		rc = each_record(r, clear_one, &c, err);
	if (rc < 0)
		return rc;
	if (c.nfail)
		ll_err_set(err, c.failed, "peer %s: %d record%s not restored (each named above)",
			   r->t.alias, c.nfail, c.nfail == 1 ? "" : "s");
	rc = engine_stop_remote(r, NULL, c.failed ? NULL : err);
	if (!c.failed && rc < 0)
		c.failed = rc;
	rc = remote_tune_restore(p, c.failed ? NULL : err);
	if (!c.failed && rc < 0)
		c.failed = rc;
	rc = guard_refresh(r, c.failed ? NULL : err);
	return c.failed ? c.failed : rc;
}

struct rec_ctx {
	struct peer_record *out;
	int max, n;
};

static int list_one(struct remote *r, const char *path, char *text, void *arg)
{
	struct rec_ctx *c = arg;
	struct peer_record *pr;
	char dev[IF_NAMESIZE + 8], mac[40] = "";
	int idx = 0;

	if (c->n >= c->max)
		return 0;
	pr = &c->out[c->n++];
	memset(pr, 0, sizeof(*pr));
	snprintf(pr->path, sizeof(pr->path), "%s", path);
	record_dev(r, path, dev, sizeof(dev));
	snprintf(pr->dev, sizeof(pr->dev), "%.15s", dev);
	if (is_verdict(path)) {
		char *orig = NULL;

		verdict(text, pr->what, sizeof(pr->what), &orig);
		free(orig);
		return 0;
	}
	if (text[0] == '{' && tctree_identity(text, &idx, mac, sizeof(mac)) == 0) {
		cJSON *rec = cJSON_Parse(text);
		const cJSON *tc = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec, "parts"), 0);
		const cJSON *q, *root = NULL, *rk, *rh;
		int nq = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(tc, "qdiscs"));
		int nc = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(tc, "classes"));

		cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(tc, "qdiscs"))
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q, "root")))
				root = q;
		rk = cJSON_GetObjectItemCaseSensitive(root, "kind");
		rh = cJSON_GetObjectItemCaseSensitive(root, "handle");
		pr->ifindex = idx;
		snprintf(pr->what, sizeof(pr->what), "%s%s %s root, %d qdiscs, %d classes; address %s",
			 dev[0] ? "" : "other namespace; ",
			 cJSON_IsString(rk) ? rk->valuestring : "?",
			 cJSON_IsString(rh) ? rh->valuestring : "", nq, nc, mac);
		cJSON_Delete(rec);
	} else if (text[0] == '[') {
		snprintf(pr->what, sizeof(pr->what), "%sroot qdisc only (older record)",
			 dev[0] ? "" : "other namespace; ");
	} else {
		snprintf(pr->what, sizeof(pr->what), "empty or damaged");
		pr->damaged = true;
	}
	return 0;
}

static int remote_records(struct peer *p, struct peer_record *out, int max,
			  int *n, struct ll_err *err)
{
	struct rec_ctx c = { out, max, 0 };
	int rc = need_nsid(remote_of(p), err);

	if (rc == 0)
		rc = each_record(remote_of(p), list_one, &c, err);
	*n = c.n;
	return rc;
}

static int forget_one(struct remote *r, const char *path, char *text, void *arg)
{
	char dev[IF_NAMESIZE + 8], cmd[256] = "rm -f";
	const char *want = arg;

	record_dev(r, path, dev, sizeof(dev));
	/* this namespace's records, and damaged ones of any */
	if (!dev[0] && (text[0] == '{' || text[0] == '[' || is_verdict(path)))
		return 0;
	if (want && strcmp(dev, want))
		return 0;
	addw(cmd, sizeof(cmd), path);
	if (run(r, cmd, "remove journal", NULL, NULL, NULL) == 0)
		rnote(r, "record %s dropped, nothing restored", path);
	if (dev[0]) {
		struct rjournal *j = jfind(r, dev, false);

		if (j) {
			free(j->orig);
			memset(j, 0, sizeof(*j));
		}
	}
	return 0;
}

static int remote_forget(struct peer *p, const char *dev, struct ll_err *err)
{
	struct remote *r = remote_of(p);
	int rc;

	r->notes[0] = '\0';
	if (dev && valid_ifname(dev, err) < 0)
		return -EINVAL;
	rc = need_nsid(r, err);
	if (rc == 0)
		rc = each_record(r, forget_one, (void *)dev, err);
	if (rc == 0)
		rc = guard_refresh(r, err);
	return rc;
}

static const char *remote_notes(struct peer *p)
{
	return remote_of(p)->notes;
}

/* --- the endpoint engine on the peer (`linklab engine --start|--stop|
 * --status`, enghook.h, run there over the session) --- */

/* `linklab engine OP --dev DEV [...]` on the peer; out gets stdout. */
static int engine_run_remote(struct remote *r, const char *op, const char *dev,
			     const struct impair *d, char **out, struct ll_err *err)
{
	const struct impair_field *f;
	char cmd[4096] = "", v[128];
	int rc = addraw(cmd, sizeof(cmd), "linklab engine");

	rc |= addw(cmd, sizeof(cmd), op);
	if (dev) {
		rc |= addw(cmd, sizeof(cmd), "--dev");
		rc |= addw(cmd, sizeof(cmd), dev);
	}
	if (d && r->exclude_port > 0) {
		snprintf(v, sizeof(v), "%d", r->exclude_port);
		rc |= addw(cmd, sizeof(cmd), "--exclude-port");
		rc |= addw(cmd, sizeof(cmd), v);
	}
	for (f = impair_fields; d && f->name; f++) {
		if (!(d->set & f->bit))
			continue;
		snprintf(v, sizeof(v), "--%s", f->name);
		rc |= addw(cmd, sizeof(cmd), v);
		rc |= addw(cmd, sizeof(cmd), impair_get(d, f, v, sizeof(v)));
	}
	if (rc)
		return ll_err_set(err, -ENOSPC, "engine command too long");
	return run(r, cmd, "linklab engine", out, NULL, err);
}

static int engine_installed(struct remote *r, struct ll_err *err)
{
	char *o = NULL;
	int rc = run(r, "command -v linklab >/dev/null 2>&1 && echo yes || echo no",
		     "command -v linklab", &o, NULL, err);

	if (rc == 0 && strncmp(o, "yes", 3) != 0)
		rc = ll_err_set(err, -ENOENT, "peer %s: linklab's endpoint engine needs linklab "
				"installed on the peer (its kernel has no netem): install it there "
				"(make && sudo make install, or put build/linklab on its PATH); "
				"nothing changed", r->t.alias);
	free(o);
	return rc;
}

/* Remember (on) or forget dev as running an engine of this session. */
static void engine_dev_mark(struct remote *r, const char *dev, bool on)
{
	int i, free_i = -1;

	for (i = 0; i < RJ_MAX; i++) {
		if (!strcmp(r->engine_dev[i], dev)) {
			if (!on)
				r->engine_dev[i][0] = '\0';
			return;
		}
		if (!r->engine_dev[i][0] && free_i < 0)
			free_i = i;
	}
	if (on && free_i >= 0)
		snprintf(r->engine_dev[free_i], IF_NAMESIZE, "%s", dev);
}

/* The whole dial to the peer's endpoint engine, its original qdisc back. */
static int remote_apply_engine(struct peer *p, const char *dev, const struct impair *d,
			       struct ll_err *err)
{
	struct remote *r = remote_of(p);
	struct ll_err e2 = { 0 };
	int rc = engine_installed(r, err);

	if (rc < 0)
		return rc;
	rc = enghook_check(d, dev, err);
	if (rc < 0) {
		ll_err_prefix(err, "peer %s: ", r->t.alias);
		return rc;
	}
	rc = engine_run_remote(r, "--start", dev, d, NULL, err);
	if (rc < 0)
		return rc;
	r->engine_used = true;
	engine_dev_mark(r, dev, true);
	rc = remote_clear_dev(p, dev, err);
	if (rc == 0)
		rc = guard_refresh(r, err);
	if (rc < 0) {
		engine_run_remote(r, "--stop", dev, NULL, NULL, &e2);
		engine_dev_mark(r, dev, false);
	}
	return rc;
}

static int remote_apply(struct peer *p, const char *dev, const struct impair *d,
			struct ll_err *err)
{
	struct remote *r = remote_of(p);
	struct ll_err e2 = { 0 };
	bool netem = impair_needs_netem(d);
	int rc;

	if (remote_would_engine(p, d))
		return remote_apply_engine(p, dev, d, err);
	rc = remote_apply_kernel(p, dev, d, err);
	if (rc == -ENOTSUP && netem && r->engine_mode == ENGHOOK_AUTO) {
		r->no_netem = true;
		return remote_apply_engine(p, dev, d, err);
	}
	if (rc == 0 && r->engine_used) {
		engine_run_remote(r, "--stop", dev, NULL, NULL, &e2);
		engine_dev_mark(r, dev, false);
	}
	return rc;
}

static void remote_set_engine(struct peer *p, int mode, int exclude_port)
{
	struct remote *r = remote_of(p);

	r->engine_mode = mode;
	/* the session's own port when it is known */
	r->exclude_port = exclude_port > 0 && r->sshflow_known ? r->sshflow.server_port : exclude_port;
}

static int remote_engine_get(struct peer *p, const char *dev, struct enghook_info *h,
			     struct ll_err *err)
{
	struct remote *r = remote_of(p);
	struct ll_err e2 = { 0 };
	char *o = NULL;
	cJSON *j, *v;

	(void)err;
	memset(h, 0, sizeof(*h));
	if (engine_run_remote(r, "--status", dev, NULL, &o, &e2) < 0)
		return -ENOENT;
	j = cJSON_Parse(o);
	free(o);
	if (!j)
		return -ENOENT;
#define NUM(k) ((v = cJSON_GetObjectItemCaseSensitive(j, k)) && cJSON_IsNumber(v) ? v->valuedouble : 0)
	snprintf(h->dev, sizeof(h->dev), "%s", dev);
	h->pid = (long)NUM("pid");
	h->queue = (unsigned)NUM("queue");
	h->alive = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "running"));
	h->stopped = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "stopped"));
	v = cJSON_GetObjectItemCaseSensitive(j, "hooked");
	h->hooked = cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
	h->have_counters = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "have_counters"));
	h->in = (uint64_t)NUM("in");
	h->out = (uint64_t)NUM("out");
	h->lost = (uint64_t)NUM("lost");
	h->duplicated = (uint64_t)NUM("duplicated");
	h->reordered = (uint64_t)NUM("reordered");
	h->corrupted = (uint64_t)NUM("corrupted");
	h->queue_drops = (uint64_t)NUM("queue_drops");
	h->queued = (uint32_t)NUM("queued");
#undef NUM
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "iptables")) && cJSON_IsString(v))
		snprintf(h->iptables, sizeof(h->iptables), "%s", v->valuestring);
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "chain")) && cJSON_IsString(v))
		snprintf(h->chain, sizeof(h->chain), "%s", v->valuestring);
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "dial")) && cJSON_IsString(v))
		snprintf(h->dial, sizeof(h->dial), "%s", v->valuestring);
	cJSON_Delete(j);
	return 0;
}

/* Stop the peer's endpoint engine on dev, if linklab is there and runs one. */
static int engine_stop_remote(struct remote *r, const char *dev, struct ll_err *err)
{
	char cmd[256] = "command -v linklab >/dev/null 2>&1 || exit 0; linklab engine";
	int rc = addw(cmd, sizeof(cmd), dev ? "--stop" : "--stop-all");

	if (dev) {
		rc |= addw(cmd, sizeof(cmd), "--dev");
		rc |= addw(cmd, sizeof(cmd), dev);
	}
	if (rc)
		return ll_err_set(err, -ENOSPC, "engine command too long");
	return run(r, cmd, "linklab engine --stop", NULL, NULL, err);
}

static void remote_set_safety(struct peer *p, const struct peer_safety *sf)
{
	remote_of(p)->safety = *sf;
}

static const char *remote_warning(struct peer *p)
{
	return remote_of(p)->warn;
}

static int remote_keepalive(struct peer *p, int *next_s, struct ll_err *err)
{
	struct remote *r = remote_of(p);
	int rc = ssh_keepalive(r->s, next_s, err);

	/* the session is idle but alive: a beat for the hold guard too */
	if (rc == 0 && r->guard)
		ssh_spawn_write(r->guard, "beat\n", 5, 1000, NULL);
	return rc;
}

static int remote_poll_fd(struct peer *p)
{
	return ssh_fd(remote_of(p)->s);
}

/* ---- the console's hold on the peer (peer_lock.h) ----------------------- */

static int remote_lock_take(struct peer *p, struct peer_lock_owner *prev,
			    bool *prev_stale, struct ll_err *err)
{
	struct remote *r = remote_of(p);

	if (r->keeper)
		return 0;
	remote_probe(r);
	return peer_lock_remote_take(r->s, r->nsid, &r->keeper, prev, prev_stale,
				     err);
}

static void remote_lock_note(struct peer *p, const char *dev)
{
	if (valid_ifname(dev, NULL) == 0)
		peer_lock_remote_note(remote_of(p)->keeper, dev);
}

static void remote_lock_release(struct peer *p, bool remove)
{
	struct remote *r = remote_of(p);

	peer_lock_remote_release(r->keeper, remove);
	r->keeper = NULL;
}

static int remote_lock_holder(struct peer *p, struct peer_lock_owner *who,
			      struct ll_err *err)
{
	struct remote *r = remote_of(p);
	int rc = need_nsid(r, err);

	return rc < 0 ? rc : peer_lock_remote_holder(r->s, r->nsid, who, err);
}

static const struct peer_session_ops remote_session_ops = {
	.sshflow = remote_sshflow,
	.warning = remote_warning,
	.keepalive = remote_keepalive,
	.poll_fd = remote_poll_fd,
	.abandon = remote_abandon,
};

static const struct peer_tune_ops remote_tune_ops = {
	.offload_get = remote_offload_get,
	.offload_set = remote_offload_set,
	.sysctl_get = remote_sysctl_get,
	.sysctl_set = remote_sysctl_set,
	.tune_restore = remote_tune_restore,
};

static const struct peer_engine_ops remote_engine_ops = {
	.set_engine = remote_set_engine,
	.engine_get = remote_engine_get,
	.would_engine = remote_would_engine,
};

static const struct peer_journal_ops remote_journal_ops = {
	.records = remote_records,
	.forget = remote_forget,
	.notes = remote_notes,
};

static const struct peer_lock_ops remote_lock_ops = {
	.lock_take = remote_lock_take,
	.lock_note = remote_lock_note,
	.lock_release = remote_lock_release,
	.lock_holder = remote_lock_holder,
};

static const struct peer_ops remote_ops = {
	.name = "ssh",
	.list_links = remote_list_links,
	.route_dev = remote_route_dev,
	.read_qdiscs = remote_read_qdiscs,
	.apply = remote_apply,
	.clear = remote_clear,
	.clear_all = remote_clear_all,
	.dry_run = remote_dry_run,
	.server_start = remote_server_start,
	.server_stop = remote_server_stop,
	.close = remote_close,
	.set_safety = remote_set_safety,
	.session = &remote_session_ops,
	.tune = &remote_tune_ops,
	.engine = &remote_engine_ops,
	.journal = &remote_journal_ops,
	.lock = &remote_lock_ops,
};

int peer_remote_open(struct peer *p, const struct ssh_target *t,
		     struct ll_err *err)
{
	struct remote *r;
	int rc;

	memset(p, 0, sizeof(*p));
	r = calloc(1, sizeof(*r));
	if (!r)
		return ll_err_set(err, -ENOMEM, "out of memory");
	r->t = *t;
	/* the kernel's qdiscs unless the caller picks an engine (set_engine) */
	r->engine_mode = ENGHOOK_KERNEL;
	rc = ssh_open(&r->s, t, t->connect_timeout_ms > 0 ? t->connect_timeout_ms : 10000,
		      err);
	if (rc < 0) {
		free(r);
		return rc;
	}
	p->ops = &remote_ops;
	p->priv = r;
	snprintf(p->label, sizeof(p->label), "B (%.58s)", t->alias);
	snprintf(p->host, sizeof(p->host), "%s", t->hostname);
	return 0;
}
