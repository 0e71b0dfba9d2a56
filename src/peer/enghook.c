/* SPDX-License-Identifier: MIT */
/* enghook.c - start, record and remove the endpoint engine's hooks
 * (enghook.h): iptables rules in this namespace and the detached
 * `linklab engine` process. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <cjson/cJSON.h>

#include "linklab/base/fdio.h"
#include "linklab/peer/enghook.h"
#include "linklab/peer/journal.h"
#include "linklab/peer/peer_lock.h"

#define SCOPE_BITS (IMP_DIRECTION | IMP_DST | IMP_DPORT)
#define MARK_MATCH "0x4c4c0000/0xffff0000"   /* engine.h ENGINE_MARK */
#define MAX_ARGS 160

int enghook_mode_parse(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "auto"))
		return ENGHOOK_AUTO;
	if (!strcmp(s, "kernel"))
		return ENGHOOK_KERNEL;
	if (!strcmp(s, "user"))
		return ENGHOOK_USER;
	return -1;
}

const char *enghook_mode_name(int mode)
{
	return mode == ENGHOOK_KERNEL ? "kernel" : mode == ENGHOOK_USER ? "user" : "auto";
}

int enghook_check(const struct impair *eng, const char *dev, struct ll_err *err)
{
	char bad[256] = "";
	static const struct { uint32_t bit; const char *name; } no[] = {
		{ IMP_SLOT, "slot" }, { IMP_SLOT_PACKETS, "slot-packets" },
		{ IMP_SLOT_BYTES, "slot-bytes" }, { IMP_ECN, "ecn" },
	};
	size_t i;

	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (eng->set & no[i].bit)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%s",
				 bad[0] ? ", " : "", no[i].name);
	if ((eng->set & IMP_DIRECTION) && eng->direction == IMP_INGRESS)
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%sdirection ingress",
			 bad[0] ? ", " : "");
	if (bad[0])
		return ll_err_set(err, -EOPNOTSUPP, "%s: linklab's endpoint engine cannot do %s "
				  "(use --engine kernel on a kernel with sch_netem); nothing changed",
				  dev, bad);
	return 0;
}

/* --- running commands ---------------------------------------------------- */

/* --dry-run: the commands run() would run, one line each, instead. */
struct dry_sink {
	char *buf;
	size_t len, used;
};

static _Thread_local struct dry_sink *dry;

static void dry_line(char *const argv[])
{
	int i;

	for (i = 0; argv[i] && dry->used + 1 < dry->len; i++) {
		int n = snprintf(dry->buf + dry->used, dry->len - dry->used, "%s%s",
				 i ? " " : "", argv[i]);

		dry->used += n > 0 ? (size_t)n : 0;
		if (dry->used >= dry->len)
			dry->used = dry->len - 1;
	}
	if (dry->used + 1 < dry->len) {
		dry->buf[dry->used++] = '\n';
		dry->buf[dry->used] = '\0';
	}
}

/* Run argv (no shell), stdout+stderr into out. Exit status, or -errno. */
static int run(char *const argv[], char *out, size_t outlen)
{
	int pfd[2], st = 0;
	size_t n = 0;
	pid_t pid;

	if (dry) {
		dry_line(argv);
		if (out && outlen)
			out[0] = '\0';
		return 0;
	}

	if (out && outlen)
		out[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		/* a hang-up or Ctrl-C that ends the console must not end the
		 * iptables it runs while restoring */
		fdio_child_detach(pfd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		char tmp[512];
		ssize_t r = read(pfd[0], tmp, sizeof(tmp));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (out && n + 1 < outlen) {
			size_t k = (size_t)r < outlen - 1 - n ? (size_t)r : outlen - 1 - n;

			memcpy(out + n, tmp, k);
			n += k;
			out[n] = '\0';
		}
	}
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (out && n && out[n - 1] == '\n')
		out[n - 1] = '\0';
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* iptables -w -t mangle ARGS... (NULL-terminated list). */
static int ipt(const char *bin, char *out, size_t outlen, ...)
{
	char *argv[32];
	int n = 0;
	va_list ap;
	char *a;

	argv[n++] = (char *)bin;
	argv[n++] = (char *)"-w";
	argv[n++] = (char *)"-t";
	argv[n++] = (char *)"mangle";
	va_start(ap, outlen);
	while ((a = va_arg(ap, char *)) && n < 31)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return run(argv, out, outlen);
}

/* The first iptables that can list the mangle table here ($LINKLAB_IPTABLES
 * alone when set). */
static int pick_iptables(char *bin, size_t len, struct ll_err *err)
{
	static const char *const cand[] = { "iptables", "iptables-nft", "iptables-legacy",
		"/usr/sbin/iptables", "/sbin/iptables", NULL };
	const char *force = getenv("LINKLAB_IPTABLES");
	char out[400], first[512] = "";
	int i, rc;

	for (i = 0; cand[i]; i++) {
		const char *c = force && *force ? force : cand[i];

		if (force && *force && i > 0)
			break;
		rc = ipt(c, out, sizeof(out), "-S", "POSTROUTING", (char *)NULL);
		if (rc == 0) {
			snprintf(bin, len, "%s", c);
			return 0;
		}
		if (rc != 127 && !first[0])
			snprintf(first, sizeof(first), "%s: %s", c, out);
	}
	if (first[0])
		return ll_err_set(err, -EIO, "the endpoint engine's iptables rule cannot be "
				  "set: %s", first);
	return ll_err_set(err, -ENOENT, "the endpoint engine needs iptables (with the NFQUEUE "
			  "target): install it (Debian/Ubuntu: apt-get install iptables)");
}

/* The ip6tables beside iptables bin (iptables-nft -> ip6tables-nft), when it
 * can list the mangle table here; "" when there is none (no IPv6). */
static void pick_ip6tables(const char *bin, char *out, size_t len)
{
	const char *base = strrchr(bin, '/');
	char cand[64], msg[200];

	base = base ? base + 1 : bin;
	out[0] = '\0';
	if (strncmp(base, "iptables", 8) != 0)
		return;
	if ((size_t)snprintf(cand, sizeof(cand), "%.*sip6tables%s", (int)(base - bin), bin,
			     base + 8) >= sizeof(cand))
		return;
	if (ipt(cand, msg, sizeof(msg), "-S", "POSTROUTING", (char *)NULL) == 0)
		snprintf(out, len, "%s", cand);
}

/* --- the record ---------------------------------------------------------- */

static void rec_path(uint64_t netns, int ifindex, char *buf, size_t len)
{
	snprintf(buf, len, "%s/engine-%" PRIu64 "-%d.hook", journal_dir(), netns, ifindex);
}

static void stat_path(uint64_t netns, int ifindex, unsigned q, char *buf, size_t len)
{
	snprintf(buf, len, "%s/engine-%" PRIu64 "-%d-%u.stat", journal_dir(), netns,
		 ifindex, q);
}

static int rec_write(uint64_t netns, const struct enghook_info *h, struct ll_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], sp[PATH_MAX];
	cJSON *o = cJSON_CreateObject();
	char *text;
	FILE *f;
	int ok;

	if (!o)
		return ll_err_set(err, -ENOMEM, "out of memory");
	stat_path(netns, h->ifindex, h->queue, sp, sizeof(sp));
	cJSON_AddStringToObject(o, "part", "engine");
	cJSON_AddStringToObject(o, "dev", h->dev);
	cJSON_AddNumberToObject(o, "ifindex", h->ifindex);
	cJSON_AddNumberToObject(o, "netns", (double)netns);
	cJSON_AddNumberToObject(o, "pid", (double)h->pid);
	cJSON_AddNumberToObject(o, "queue", h->queue);
	cJSON_AddStringToObject(o, "iptables", h->iptables);
	cJSON_AddStringToObject(o, "ip6tables", h->ip6tables);
	cJSON_AddStringToObject(o, "table", "mangle");
	cJSON_AddStringToObject(o, "chain", h->chain);
	cJSON_AddStringToObject(o, "stat", sp);
	cJSON_AddStringToObject(o, "dial", h->dial);
	text = cJSON_Print(o);
	cJSON_Delete(o);
	if (!text)
		return ll_err_set(err, -ENOMEM, "out of memory");
	mkdir(journal_dir(), 0700);
	rec_path(netns, h->ifindex, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	ok = f && fputs(text, f) >= 0;
	if (f && fclose(f) != 0)
		ok = 0;
	free(text);
	if (!ok || rename(tmp, path) < 0) {
		int e = errno;

		unlink(tmp);
		return ll_err_set(err, -e, "engine record %s: %s", path, strerror(e));
	}
	return 0;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void str(const cJSON *o, const char *k, char *dst, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	snprintf(dst, len, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

/* /proc/PID/WHAT into buf (NUL-terminated, NULs inside kept): bytes read,
 * 0 when it cannot be read. */
static size_t proc_read(long pid, const char *what, char *buf, size_t len)
{
	char path[64];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/%s", pid, what);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n;
}

/* The state letter of /proc/PID/stat (R, S, T, Z, ...), or 0. */
static char proc_state(long pid)
{
	char st[512], *p;

	if (!proc_read(pid, "stat", st, sizeof(st)))
		return 0;
	p = strrchr(st, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* The queue a process's argv names if it is a linklab engine
 * ("... engine ... --queue Q"), else 0. */
static unsigned engine_queue_of(long pid)
{
	char buf[1024];
	size_t n = proc_read(pid, "cmdline", buf, sizeof(buf)), i;
	unsigned q = 0;
	bool is_engine = false;

	for (i = 0; i < n; i += strlen(buf + i) + 1) {
		if (!strcmp(buf + i, "engine"))
			is_engine = true;
		if (!strcmp(buf + i, "--queue") && i + 8 < n)
			q = (unsigned)strtoul(buf + i + 8, NULL, 10);
	}
	return is_engine ? q : 0;
}

/* A pid that is a linklab engine on queue q (not a recycled pid). */
static bool engine_alive(long pid, unsigned q)
{
	char s;

	if (pid <= 0)
		return false;
	s = proc_state(pid);
	return s && s != 'Z' && s != 'X' && engine_queue_of(pid) == q;
}

static void read_counters(const char *sp, struct enghook_info *h)
{
	char *text = fdio_read_file(sp, 8192, false);
	cJSON *o = text ? cJSON_Parse(text) : NULL;

	free(text);
	if (!o)
		return;
	h->have_counters = true;
	h->in = (uint64_t)num(o, "in");
	h->out = (uint64_t)num(o, "out");
	h->lost = (uint64_t)num(o, "lost");
	h->duplicated = (uint64_t)num(o, "duplicated");
	h->corrupted = (uint64_t)num(o, "corrupted");
	h->reordered = (uint64_t)num(o, "reordered");
	h->queue_drops = (uint64_t)num(o, "queue_drops");
	h->queued = (uint32_t)num(o, "queued");
	cJSON_Delete(o);
}

int enghook_get(uint64_t netns, int ifindex, struct enghook_info *h)
{
	char path[PATH_MAX], sp[PATH_MAX];
	char *text;
	cJSON *o;

	memset(h, 0, sizeof(*h));
	rec_path(netns, ifindex, path, sizeof(path));
	text = fdio_read_file(path, 8192, false);
	o = text ? cJSON_Parse(text) : NULL;
	free(text);
	if (!o)
		return -ENOENT;
	str(o, "dev", h->dev, sizeof(h->dev));
	h->ifindex = ifindex;
	h->pid = (long)num(o, "pid");
	h->queue = (unsigned)num(o, "queue");
	str(o, "iptables", h->iptables, sizeof(h->iptables));
	str(o, "ip6tables", h->ip6tables, sizeof(h->ip6tables));
	str(o, "chain", h->chain, sizeof(h->chain));
	str(o, "dial", h->dial, sizeof(h->dial));
	cJSON_Delete(o);
	{
		/* one read of its state for both: alive, and stopped */
		char s = h->pid > 0 ? proc_state(h->pid) : 0;

		h->alive = s && s != 'Z' && s != 'X' && engine_queue_of(h->pid) == h->queue;
		h->stopped = h->alive && (s == 'T' || s == 't');
	}
	h->hooked = -1;
	stat_path(netns, ifindex, h->queue, sp, sizeof(sp));
	if (h->alive)
		read_counters(sp, h);
	return 0;
}

/* --- rules ---------------------------------------------------------------- */

/* In one table: 1 the chain and its jump are there, 0 the chain is there
 * without its jump, -1 no chain (that family is not hooked). */
static int probe_one(const char *bin, const struct enghook_info *h)
{
	if (!bin[0] || ipt(bin, NULL, 0, "-S", h->chain, (char *)NULL) != 0)
		return -1;
	return ipt(bin, NULL, 0, "-C", "POSTROUTING", "-o", h->dev, "-j", h->chain,
		   (char *)NULL) == 0;
}

void enghook_probe(struct enghook_info *h)
{
	int a, b;

	h->hooked = -1;
	if (!h->iptables[0] || !h->chain[0] || !h->dev[0])
		return;
	/* a dst scope of one family hooks that family only: each table that
	 * holds the chain must also hold its jump */
	a = probe_one(h->iptables, h);
	b = probe_one(h->ip6tables, h);
	h->hooked = a != 0 && b != 0 && (a == 1 || b == 1);
}

/* The chain and its jumps from POSTROUTING in one table. Returns 0 when the
 * chain is gone (or never was), -1 when it is still there. */
static int rules_remove_one(const char *bin, const struct enghook_info *h)
{
	int i;

	if (!bin[0] || !h->chain[0])
		return 0;
	for (i = 0; i < 8; i++)
		if (ipt(bin, NULL, 0, "-D", "POSTROUTING", "-o", h->dev, "-j",
			h->chain, (char *)NULL) != 0)
			break;
	ipt(bin, NULL, 0, "-F", h->chain, (char *)NULL);
	ipt(bin, NULL, 0, "-X", h->chain, (char *)NULL);
	return ipt(bin, NULL, 0, "-S", h->chain, (char *)NULL) == 0 ? -1 : 0;
}

/* The rules in both tables (IPv4, IPv6); -1 when a chain is left. */
static int rules_remove(const struct enghook_info *h)
{
	int a = rules_remove_one(h->iptables, h);
	int b = rules_remove_one(h->ip6tables, h);

	return a < 0 || b < 0 ? -1 : 0;
}

/* Chains LLENG-<ifindex>-* (ifindex < 0: every LLENG chain) in one table
 * that no record names (keep: the chain of the record there, or ""), with
 * their POSTROUTING jumps: what a restore cut short left behind. */
static void orphans_remove_one(const char *bin, int ifindex, const char *keep)
{
	char out[8192], pre[32], *line, *save = NULL;
	struct enghook_info o;

	if (!bin[0] || ipt(bin, out, sizeof(out), "-S", "POSTROUTING", (char *)NULL) != 0)
		return;
	if (ifindex >= 0)
		snprintf(pre, sizeof(pre), "LLENG-%d-", ifindex);
	else
		snprintf(pre, sizeof(pre), "LLENG-");
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char dev[IF_NAMESIZE], chain[sizeof(o.chain)];

		/* -A POSTROUTING -o DEV -j LLENG-<ifindex>-<queue> */
		if (sscanf(line, "-A POSTROUTING -o %15s -j %31s", dev, chain) != 2 ||
		    strncmp(chain, pre, strlen(pre)) != 0 || (keep && !strcmp(chain, keep)))
			continue;
		memset(&o, 0, sizeof(o));
		snprintf(o.dev, sizeof(o.dev), "%s", dev);
		snprintf(o.chain, sizeof(o.chain), "%s", chain);
		rules_remove_one(bin, &o);
	}
}

/* Orphan chains in both tables (see orphans_remove_one); bin/bin6 the
 * tools picked already, or NULL to pick them. */
static void orphans_remove(int ifindex, const char *keep, const char *bin, const char *bin6)
{
	char b[64] = "", b6[64] = "";

	if (!bin) {
		if (pick_iptables(b, sizeof(b), NULL) < 0)
			return;
		pick_ip6tables(b, b6, sizeof(b6));
		bin = b;
		bin6 = b6;
	}
	orphans_remove_one(bin, ifindex, keep);
	orphans_remove_one(bin6, ifindex, keep);
}

/* The chain's queue rules: NFQUEUE for the dial's scope, TCP to queue + 1
 * (where GSO packets come whole), the rest to the queue. */
static int rule_queue(const char *bin, const struct enghook_info *h, const struct impair *d,
		      char *out, size_t outlen)
{
	char q[2][16], dst[64] = "", port[8] = "";
	char *argv[24];
	int n = 0, rc = 0, pass;

	snprintf(q[0], sizeof(q[0]), "%u", h->queue + 1);
	snprintf(q[1], sizeof(q[1]), "%u", h->queue);
	if ((d->set & IMP_DST) && d->dst_plen) {
		char a[INET6_ADDRSTRLEN];

		bool v6 = d->dst_family == AF_INET6;

		inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (const void *)d->dst6 :
			  (const void *)d->dst_addr, a, sizeof(a));
		snprintf(dst, sizeof(dst), "%s/%u", a, d->dst_plen);
	}
	if ((d->set & IMP_DPORT) && d->dport)
		snprintf(port, sizeof(port), "%u", d->dport);
	for (pass = 0; pass < 2 && rc == 0; pass++) {
		n = 0;
		argv[n++] = (char *)bin;
		argv[n++] = (char *)"-w";
		argv[n++] = (char *)"-t";
		argv[n++] = (char *)"mangle";
		argv[n++] = (char *)"-A";
		argv[n++] = (char *)h->chain;
		if (dst[0]) {
			argv[n++] = (char *)"-d";
			argv[n++] = dst;
		}
		if (pass == 0 || port[0]) {
			argv[n++] = (char *)"-p";
			argv[n++] = (char *)(pass == 0 ? "tcp" : "udp");
		}
		if (port[0]) {
			argv[n++] = (char *)"--dport";
			argv[n++] = port;
		}
		argv[n++] = (char *)"-j";
		argv[n++] = (char *)"NFQUEUE";
		argv[n++] = (char *)"--queue-num";
		argv[n++] = q[pass];
		argv[n++] = (char *)"--queue-bypass";
		argv[n] = NULL;
		rc = run(argv, out, outlen);
	}
	return rc;
}

/* The chain and its jump in one table (bin: iptables or ip6tables). */
static int rules_install_one(const char *bin, const struct enghook_info *h,
			     const struct impair *d, int exclude_port, char *out, size_t outlen)
{
	char port[8];
	int rc;

	snprintf(port, sizeof(port), "%d", exclude_port);
	ipt(bin, NULL, 0, "-F", h->chain, (char *)NULL);
	ipt(bin, NULL, 0, "-X", h->chain, (char *)NULL);
	rc = ipt(bin, out, outlen, "-N", h->chain, (char *)NULL);
	if (rc == 0)
		rc = ipt(bin, out, outlen, "-A", h->chain, "-m", "mark", "--mark",
			 MARK_MATCH, "-j", "RETURN", (char *)NULL);
	if (rc == 0 && exclude_port > 0)
		rc = ipt(bin, out, outlen, "-A", h->chain, "-p", "tcp", "--sport",
			 port, "-j", "RETURN", (char *)NULL);
	if (rc == 0 && exclude_port > 0)
		rc = ipt(bin, out, outlen, "-A", h->chain, "-p", "tcp", "--dport",
			 port, "-j", "RETURN", (char *)NULL);
	if (rc == 0)
		rc = rule_queue(bin, h, d, out, outlen);
	if (rc == 0)
		rc = ipt(bin, out, outlen, "-I", "POSTROUTING", "1", "-o", h->dev,
			 "-j", h->chain, (char *)NULL);
	return rc;
}

/* IPv4 (iptables) and IPv6 (ip6tables, when there is one) rules; a dst
 * scope of one family hooks that family only. */
static int rules_install(const struct enghook_info *h, const struct impair *d,
			 int exclude_port, struct ll_err *err)
{
	bool scoped = (d->set & IMP_DST) && d->dst_plen;
	bool v6 = scoped && d->dst_family == AF_INET6;
	const char *bin = h->iptables;
	char out[512] = "";
	int rc = 0;

	if (!scoped || !v6)
		rc = rules_install_one(bin, h, d, exclude_port, out, sizeof(out));
	if (rc == 0 && (!scoped || v6)) {
		bin = h->ip6tables;
		if (!bin[0] && v6) {
			snprintf(out, sizeof(out), "no ip6tables for an IPv6 dst");
			rc = -1;
		} else if (bin[0]) {
			rc = rules_install_one(bin, h, d, exclude_port, out, sizeof(out));
		}
	}
	if (rc == 0)
		return 0;
	rules_remove(h);
	return ll_err_set(err, -EIO, "%s: setting the engine's iptables rule failed (%s): %s",
			  h->dev, bin[0] ? bin : "ip6tables", out[0] ? out : "no message");
}

/* --- the engine process -------------------------------------------------- */

static void engine_kill(long pid, unsigned q)
{
	int i;

	if (!engine_alive(pid, q))
		return;
	kill((pid_t)pid, SIGTERM);
	for (i = 0; i < 100 && engine_alive(pid, q); i++) {
		struct timespec ts = { 0, 10000000 };

		nanosleep(&ts, NULL);
	}
	if (engine_alive(pid, q))
		kill((pid_t)pid, SIGKILL);
}

/* The first linklab engine in namespace netns on a queue in [lo, hi), not
 * pid keep, that no record names (detached: only one an apply started,
 * its own session leader, not one run by hand); 0 if none. *q gets its
 * queue. */
static long engine_unrecorded(uint64_t netns, unsigned lo, unsigned hi, long keep,
			      bool detached, unsigned *q)
{
	struct dirent *de;
	long found = 0;
	DIR *dir = opendir("/proc");

	while (dir && !found && (de = readdir(dir))) {
		char path[80];
		struct stat st;
		struct enghook_info r;
		long pid = strtol(de->d_name, NULL, 10);

		if (pid <= 0 || pid == keep || pid == (long)getpid())
			continue;
		*q = engine_queue_of(pid);
		if (*q < lo || *q >= hi || (detached && getsid((pid_t)pid) != (pid_t)pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
		if (stat(path, &st) < 0 || (uint64_t)st.st_ino != netns)
			continue;
		/* named by the record of its interface: not an orphan */
		if (enghook_get(netns, (int)((*q - 20000u) / 4u), &r) == 0 && r.pid == pid)
			continue;
		found = pid;
	}
	if (dir)
		closedir(dir);
	return found;
}

/* The queues of ifindex (ifindex < 0: every linklab queue). */
static void engine_queues(int ifindex, unsigned *lo, unsigned *hi)
{
	*lo = 20000u;
	*hi = 60000u;
	if (ifindex >= 0) {
		*lo = 20000u + (unsigned)(ifindex % 10000) * 4u;
		*hi = *lo + 4u;
	}
}

/* Detached linklab engines in namespace netns that no record names (their
 * record lost: /run wiped, another LINKLAB_RUN_DIR) on ifindex's queues,
 * except pid keep, are ended: such an engine holds its queue, so a new one
 * could not start there. */
static void orphan_engines_kill(uint64_t netns, int ifindex, long keep)
{
	unsigned lo, hi, q;
	long pid;
	int n = 0;

	engine_queues(ifindex, &lo, &hi);
	while (n++ < 16 && (pid = engine_unrecorded(netns, lo, hi, keep, true, &q)) > 0)
		engine_kill(pid, q);
}

/* argv of `linklab engine --dev DEV --queue Q --stat PATH --ready-fd 3 DIAL`. */
static int engine_argv(const char *dev, unsigned q, const char *sp, const struct impair *d,
		       char *store, size_t storelen, char **argv, struct ll_err *err)
{
	const struct impair_field *f;
	size_t used = 0;
	int n = 0;
	char v[128];
	const char *bin = getenv("LINKLAB_BIN");
	static char self[PATH_MAX];
	ssize_t sl;

#define PUT(s) do { size_t l_ = strlen(s) + 1; \
	if (used + l_ > storelen || n >= MAX_ARGS - 2) \
		return ll_err_set(err, -E2BIG, "engine arguments too long"); \
	memcpy(store + used, (s), l_); argv[n++] = store + used; used += l_; } while (0)
	if (!bin || !*bin) {
		sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (sl <= 0)
			return ll_err_set(err, -ENOENT, "cannot find the linklab binary");
		self[sl] = '\0';
		bin = self;
	}
	PUT(bin);
	PUT("engine");
	PUT("--dev");
	PUT(dev);
	snprintf(v, sizeof(v), "%u", q);
	PUT("--queue");
	PUT(v);
	PUT("--stat");
	PUT(sp);
	PUT("--ready-fd");
	PUT("3");
	PUT("--tcp-queue");
	PUT("1");
	if (getenv("LINKLAB_ENGINE_GSO")) {
		PUT("--gso");
		PUT(getenv("LINKLAB_ENGINE_GSO"));
	}
	for (f = impair_fields; f->name; f++) {
		if (!(d->set & f->bit) || (f->bit & SCOPE_BITS))
			continue;
		snprintf(v, sizeof(v), "--%s", f->name);
		PUT(v);
		impair_get(d, f, v, sizeof(v));
		PUT(v);
	}
#undef PUT
	argv[n] = NULL;
	return 0;
}

/* Fork a detached engine (double fork, setsid) and wait for its "ok PID". */
static int engine_spawn(char **argv, long *pid_out, struct ll_err *err)
{
	int pfd[2], st;
	char line[700] = "";
	size_t n = 0;
	pid_t pid;
	struct timespec t0, t1;
	bool eof = false;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return ll_err_set(err, -errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return ll_err_set(err, -errno, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int nul;

		if (fork() != 0)
			_exit(0);
		setsid();
		nul = open("/dev/null", O_RDWR);
		if (dup2(pfd[1], 3) < 0)
			_exit(126);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
		}
		for (st = 4; st < 1024; st++)
			close(st);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* 5 s for its word; a signal meanwhile (the caller's SIGTERM, whose
	 * handler only sets a flag) does not shorten the wait */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { pfd[0], POLLIN, 0 };
		ssize_t r;
		int left;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = 5000 - (int)((t1.tv_sec - t0.tv_sec) * 1000 +
				    (t1.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			break;
		r = poll(&p, 1, left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		r = read(pfd[0], line + n, sizeof(line) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			eof = r == 0;
			break;
		}
		n += (size_t)r;
		line[n] = '\0';
		if (strchr(line, '\n') || n + 1 >= sizeof(line))
			break;
	}
	close(pfd[0]);
	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "ok %ld", pid_out) == 1)
		return 0;
	if (!strncmp(line, "error: ", 7))
		return ll_err_set(err, strstr(line, "cannot do") || strstr(line, "not implement") ?
				  -EOPNOTSUPP : strstr(line, "CAP_NET_ADMIN") ? -EPERM :
				  strstr(line, "in use") ? -EBUSY : -EINVAL,
				  "the endpoint engine did not start: %s", line + 7);
	return ll_err_set(err, -EIO, "the endpoint engine (%s) did not start%s", argv[0],
			  n ? "" : eof ? " (it ended without a word)" : " (no answer in 5 s)");
}

/* --- start / stop --------------------------------------------------------- */

/* "--delay 25ms --loss 1%": every field given (the scope too). */
static void dial_text(const struct impair *d, char *buf, size_t len)
{
	const struct impair_field *f;
	char v[128];
	size_t u = 0;

	buf[0] = '\0';
	for (f = impair_fields; f->name && u + 1 < len; f++) {
		if (!(d->set & f->bit))
			continue;
		impair_get(d, f, v, sizeof(v));
		u += (size_t)snprintf(buf + u, len - u, "%s--%s %s", u ? " " : "", f->name, v);
		if (u >= len)
			u = len - 1;
	}
}

int enghook_dial(const struct enghook_info *h, struct impair *d)
{
	char text[sizeof(h->dial)], *save = NULL, *k, *v;
	struct ll_diag dg;
	int rc = 0;

	snprintf(text, sizeof(text), "%s", h->dial);
	ll_diag_clear(&dg);
	for (k = strtok_r(text, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
		v = strtok_r(NULL, " ", &save);
		if (!v || strncmp(k, "--", 2) != 0)
			return -EINVAL;
		if (impair_set(d, k + 2, v, &dg) < 0)
			rc = -EINVAL;
	}
	return rc;
}

/* The hook's rules, then its engine (rules first: traffic never waits on
 * a queue nobody reads). -1 when a chain could not be removed. */
static int remove_hook(uint64_t netns, const struct enghook_info *h)
{
	char sp[PATH_MAX];
	int rc = rules_remove(h);

	engine_kill(h->pid, h->queue);
	stat_path(netns, h->ifindex, h->queue, sp, sizeof(sp));
	unlink(sp);
	return rc;
}

/* The new hook's names (queue pair, chain, dial) beside the old one, if
 * any (*old). Whether there is an old one. */
static bool hook_new(uint64_t netns, const char *dev, int ifindex, const struct impair *eng,
		     struct enghook_info *old, struct enghook_info *h)
{
	bool had_old = enghook_get(netns, ifindex, old) == 0;

	memset(h, 0, sizeof(*h));
	snprintf(h->dev, sizeof(h->dev), "%s", dev);
	h->ifindex = ifindex;
	/* two pairs of queues per interface (Q: all but TCP, Q + 1: TCP), so
	 * the new engine runs before the old stops */
	h->queue = 20000u + (unsigned)(ifindex % 10000) * 4u;
	if (had_old && old->queue == h->queue)
		h->queue += 2;
	snprintf(h->chain, sizeof(h->chain), "LLENG-%d-%u", ifindex, h->queue);
	dial_text(eng, h->dial, sizeof(h->dial));
	return had_old;
}

int enghook_dry_run(uint64_t netns, const char *dev, int ifindex, const struct impair *eng,
		    int exclude_port, char *lines, size_t len, struct ll_err *err)
{
	struct dry_sink sink = { lines, len, 0 };
	struct enghook_info old, h;
	char *argv[MAX_ARGS], store[8192], sp[PATH_MAX];
	bool had_old;
	int rc, n;

	lines[0] = '\0';
	rc = enghook_check(eng, dev, err);
	if (rc < 0)
		return rc;
	had_old = hook_new(netns, dev, ifindex, eng, &old, &h);
	rc = pick_iptables(h.iptables, sizeof(h.iptables), err);
	if (rc < 0)
		return rc;
	pick_ip6tables(h.iptables, h.ip6tables, sizeof(h.ip6tables));
	stat_path(netns, ifindex, h.queue, sp, sizeof(sp));
	rc = engine_argv(dev, h.queue, sp, eng, store, sizeof(store), argv, err);
	if (rc < 0)
		return rc;
	n = snprintf(lines, len, "# the endpoint engine holds the dial (linklab's netem-semantics "
		     "engine; netfilter queues %u and %u with bypass: packets pass if it dies)\n"
		     "# dial: %s\n# start, detached:\n", h.queue, h.queue + 1, h.dial);
	sink.used = n > 0 && (size_t)n < len ? (size_t)n : 0;
	dry = &sink;
	dry_line(argv);
	rc = rules_install(&h, eng, exclude_port, err);
	dry = NULL;
	if (had_old && sink.used + 1 < len)
		snprintf(lines + sink.used, len - sink.used, "# then the engine before it (pid %ld, "
			 "chain %s) and its rules go\n", old.pid, old.chain);
	return rc;
}

void enghook_dry_remote(const char *dev, const struct impair *eng, char *lines, size_t len)
{
	char d[512];

	dial_text(eng, d, sizeof(d));
	snprintf(lines, len, "# the endpoint engine on the peer holds the dial (linklab's "
		 "netem-semantics engine; netfilter queues with bypass: packets pass if it dies)\n"
		 "# dial: %s\nlinklab engine --start --dev %s %s\n"
		 "# (on the peer: iptables/ip6tables mangle POSTROUTING -o %s -> NFQUEUE "
		 "--queue-bypass, and the detached `linklab engine`)\n", d, dev, d, dev);
}

/* Starts are one at a time per run directory (flock on the directory: no
 * file of its own): two applies at once must not take each other's new
 * engine, not yet recorded, for an orphan. -1 when it cannot be opened. */
static int start_lock(void)
{
	int fd = open(journal_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0)
		while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
			;
	return fd;
}

static int enghook_start_locked(uint64_t netns, const char *dev, int ifindex,
				const struct impair *eng, int exclude_port,
				struct ll_err *err);

int enghook_start(uint64_t netns, const char *dev, int ifindex,
		  const struct impair *eng, int exclude_port, struct ll_err *err)
{
	int fd, rc;

	mkdir(journal_dir(), 0700);
	fd = start_lock();
	rc = enghook_start_locked(netns, dev, ifindex, eng, exclude_port, err);
	if (fd >= 0)
		close(fd);
	return rc;
}

static int enghook_start_locked(uint64_t netns, const char *dev, int ifindex,
				const struct impair *eng, int exclude_port,
				struct ll_err *err)
{
	struct enghook_info old, h;
	struct peer_lock_owner who;
	char *argv[MAX_ARGS], store[8192], sp[PATH_MAX], path[PATH_MAX];
	bool had_old;
	int rc;

	rc = enghook_check(eng, dev, err);
	if (rc < 0)
		return rc;
	if (peer_lock_holder(netns, ifindex, &who) == 1) {
		char desc[200];

		peer_lock_describe(&who, desc, sizeof(desc));
		return ll_err_set(err, -EBUSY, "%s is driven by %s: its dial is that console's "
				  "(dial it there, or quit that console first); nothing changed",
				  dev, desc);
	}
	had_old = hook_new(netns, dev, ifindex, eng, &old, &h);
	rc = pick_iptables(h.iptables, sizeof(h.iptables), err);
	if (rc < 0)
		goto fail;
	pick_ip6tables(h.iptables, h.ip6tables, sizeof(h.ip6tables));
	mkdir(journal_dir(), 0700);
	stat_path(netns, ifindex, h.queue, sp, sizeof(sp));
	/* an engine of this interface no record names holds a queue */
	orphan_engines_kill(netns, ifindex, had_old ? old.pid : 0);
	rc = engine_argv(dev, h.queue, sp, eng, store, sizeof(store), argv, err);
	if (rc < 0)
		goto fail;
	rc = engine_spawn(argv, &h.pid, err);
	if (rc < 0) {
		unsigned lo, hi, q;
		long holder;

		engine_queues(ifindex, &lo, &hi);
		holder = err && strstr(err->msg, "in use") ?
			 engine_unrecorded(netns, lo, hi, 0, false, &q) : 0;
		if (holder > 0) {
			size_t n = strlen(err->msg);

			snprintf(err->msg + n, sizeof(err->msg) - n, " (a linklab engine "
				 "run by hand holds it: pid %ld, queue %u; end it with "
				 "kill %ld)", holder, q, holder);
		}
		goto fail;
	}
	/* recorded before the rule exists: kill -9 from here on is cleaned up */
	rc = rec_write(netns, &h, err);
	if (rc == 0) {
		/* a chain of this interface no record names is a leftover */
		orphans_remove(ifindex, had_old ? old.chain : NULL, h.iptables, h.ip6tables);
		rc = rules_install(&h, eng, exclude_port, err);
	}
	if (rc < 0) {
		engine_kill(h.pid, h.queue);
		unlink(sp);
		if (had_old)
			rec_write(netns, &old, NULL);
		else {
			rec_path(netns, ifindex, path, sizeof(path));
			unlink(path);
		}
		goto fail;
	}
	if (had_old)
		remove_hook(netns, &old);
	return 0;
fail:
	ll_err_prefix(err, "%s: ", dev);
	if (err && !strstr(err->msg, "nothing changed")) {
		size_t n = strlen(err->msg);

		snprintf(err->msg + n, sizeof(err->msg) - n, "; nothing changed");
	}
	return rc;
}

int enghook_stop(uint64_t netns, int ifindex, struct ll_err *err)
{
	struct enghook_info h;
	char path[PATH_MAX];

	if (enghook_get(netns, ifindex, &h) < 0) {
		/* no record: chains of this interface a cut-short restore left,
		 * and an engine whose record was lost */
		orphans_remove(ifindex, NULL, NULL, NULL);
		orphan_engines_kill(netns, ifindex, 0);
		return 0;
	}
	rec_path(netns, ifindex, path, sizeof(path));
	if (remove_hook(netns, &h) < 0)
		/* the record stays: the next clear or start finds the rules */
		return ll_err_set(err, -EIO, "%s: the engine's iptables chain %s could not be "
				  "removed; its record %s is kept (linklab clear retries)",
				  h.dev, h.chain, path);
	if (unlink(path) < 0 && errno != ENOENT)
		return ll_err_set(err, -errno, "engine record %s: %s", path, strerror(errno));
	return 0;
}

int enghook_stop_all(uint64_t netns, struct ll_err *err)
{
	char dirp[PATH_MAX], prefix[64];
	struct dirent *de;
	DIR *dir;
	int rc = 0, one, idx[256], n = 0, i;

	snprintf(dirp, sizeof(dirp), "%s", journal_dir());
	snprintf(prefix, sizeof(prefix), "engine-%" PRIu64 "-", netns);
	dir = opendir(dirp);
	while (dir && (de = readdir(dir)) && n < 256) {
		size_t l = strlen(de->d_name);
		int ifi;
		char tail[8];

		if (strncmp(de->d_name, prefix, strlen(prefix)) || l < 6 ||
		    strcmp(de->d_name + l - 5, ".hook"))
			continue;
		if (sscanf(de->d_name + strlen(prefix), "%d%7s", &ifi, tail) == 2 &&
		    !strcmp(tail, ".hook"))
			idx[n++] = ifi;
	}
	if (dir)
		closedir(dir);
	for (i = 0; i < n; i++) {
		one = enghook_stop(netns, idx[i], err);
		if (one < 0 && !rc)
			rc = one;
	}
	if (rc == 0) {
		orphans_remove(-1, NULL, NULL, NULL);
		orphan_engines_kill(netns, -1, 0);
	}
	return rc;
}
