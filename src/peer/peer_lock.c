/* SPDX-License-Identifier: MIT */
/* peer_lock.c - owner records of the sides a console drives (flock(2) on a
 * file per local interface in the journal directory). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "linklab/peer/journal.h"
#include "linklab/peer/peer_lock.h"
#include "linklab/remote/ssh.h"
#include "linklab/remote/tccmd.h"

struct peer_lock {
	int fd;
	char path[512];
	char dev[IF_NAMESIZE];
};

/* Keep [A-Za-z0-9._-] of s, at most len - 1 bytes, "?" when empty. */
static void safe_word(char *dst, size_t len, const char *s)
{
	size_t n = 0;

	for (; s && *s && n + 1 < len; s++)
		if (isalnum((unsigned char)*s) || *s == '.' || *s == '_' || *s == '-')
			dst[n++] = *s;
	if (!n && len > 1)
		dst[n++] = '?';
	dst[n] = '\0';
}

void peer_lock_self(struct peer_lock_owner *o)
{
	struct passwd *pw = getpwuid(geteuid());
	char h[128] = "";

	memset(o, 0, sizeof(*o));
	o->pid = (long)getpid();
	o->uid = (unsigned)geteuid();
	safe_word(o->user, sizeof(o->user), pw ? pw->pw_name : "");
	if (gethostname(h, sizeof(h) - 1) < 0)
		h[0] = '\0';
	safe_word(o->host, sizeof(o->host), h);
	o->since = (long long)time(NULL);
}

int peer_lock_format(const struct peer_lock_owner *o, char *buf, size_t len)
{
	size_t u;
	int i, n;

	n = snprintf(buf, len, "pid %ld\nuid %u\nuser %s\nhost %s\nsince %lld\nifindex %d\n",
		     o->pid, o->uid, o->user, o->host, o->since, o->ifindex);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	for (i = 0; i < o->ndev; i++) {
		u = strlen(buf);
		n = snprintf(buf + u, len - u, "dev %s\n", o->dev[i]);
		if (n < 0 || (size_t)n >= len - u)
			return -ENOSPC;
	}
	return 0;
}

void peer_lock_owner_add(struct peer_lock_owner *o, const char *dev)
{
	int i;

	if (!dev || !*dev || strlen(dev) >= IF_NAMESIZE)
		return;
	for (i = 0; i < o->ndev; i++)
		if (!strcmp(o->dev[i], dev))
			return;
	if (o->ndev < PEER_LOCK_DEVS)
		snprintf(o->dev[o->ndev++], IF_NAMESIZE, "%s", dev);
}

int peer_lock_parse(const char *text, struct peer_lock_owner *o)
{
	const char *l = text;
	bool have_pid = false;

	memset(o, 0, sizeof(*o));
	while (l && *l) {
		char key[16], val[128];
		size_t n = strcspn(l, "\n");
		char line[160];

		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), l);
		if (sscanf(line, "%15s %127s", key, val) == 2) {
			if (!strcmp(key, "pid")) {
				o->pid = strtol(val, NULL, 10);
				have_pid = o->pid > 0;
			} else if (!strcmp(key, "uid")) {
				o->uid = (unsigned)strtoul(val, NULL, 10);
			} else if (!strcmp(key, "user")) {
				safe_word(o->user, sizeof(o->user), val);
			} else if (!strcmp(key, "host")) {
				safe_word(o->host, sizeof(o->host), val);
			} else if (!strcmp(key, "since")) {
				o->since = strtoll(val, NULL, 10);
			} else if (!strcmp(key, "kpid")) {
				o->kpid = strtol(val, NULL, 10);
			} else if (!strcmp(key, "ifindex")) {
				o->ifindex = (int)strtol(val, NULL, 10);
			} else if (!strcmp(key, "dev")) {
				char d[IF_NAMESIZE];

				/* an interface name as the kernel allows it */
				safe_word(d, sizeof(d), val);
				if (!strcmp(d, val))
					peer_lock_owner_add(o, val);
			}
		}
		l += n;
		if (*l == '\n')
			l++;
	}
	return have_pid ? 0 : -EINVAL;
}

void peer_lock_describe(const struct peer_lock_owner *o, char *buf, size_t len)
{
	time_t t = (time_t)o->since, now = time(NULL);
	struct tm tm, tn;
	char when[40] = "?";

	if (o->since > 0 && localtime_r(&t, &tm) && localtime_r(&now, &tn))
		strftime(when, sizeof(when),
			 tm.tm_yday == tn.tm_yday && tm.tm_year == tn.tm_year ?
			 "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "console pid %ld (user %s, uid %u, on host %s) since %s",
		 o->pid, o->user, o->uid, o->host, when);
}

static void lock_path(char *buf, size_t len, uint64_t netns, int ifindex)
{
	snprintf(buf, len, "%s/owner-%" PRIu64 "-%d.lock", journal_dir(), netns,
		 ifindex);
}

/* The whole file (at most PEER_LOCK_TEXT - 1 bytes) into buf. */
static void read_all(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
}

int peer_lock_take(uint64_t netns, int ifindex, const char *dev,
		   struct peer_lock **out, struct peer_lock_owner *prev,
		   bool *prev_stale, struct ll_err *err)
{
	struct peer_lock *l;
	struct peer_lock_owner me;
	char text[PEER_LOCK_TEXT];
	struct stat a, b;
	int tries;

	*out = NULL;
	*prev_stale = false;
	memset(prev, 0, sizeof(*prev));
	if (mkdir(journal_dir(), 0700) < 0 && errno != EEXIST)
		return ll_err_set(err, -errno, "owner lock: cannot create %s: %s",
				  journal_dir(), strerror(errno));
	l = calloc(1, sizeof(*l));
	if (!l)
		return ll_err_set(err, -ENOMEM, "out of memory");
	lock_path(l->path, sizeof(l->path), netns, ifindex);
	snprintf(l->dev, sizeof(l->dev), "%s", dev);
	/* a releasing owner unlinks the file while it holds the flock: a
	 * flock won on an unlinked file is retried on the new one */
	for (tries = 0; tries < 5; tries++) {
		l->fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (l->fd < 0) {
			int e = errno;

			free(l);
			return ll_err_set(err, -e, "owner lock %s: %s", dev, strerror(e));
		}
		if (flock(l->fd, LOCK_EX | LOCK_NB) < 0) {
			char who[200];

			read_all(l->fd, text, sizeof(text));
			close(l->fd);
			free(l);
			if (peer_lock_parse(text, prev) < 0)
				snprintf(prev->user, sizeof(prev->user), "?");
			peer_lock_describe(prev, who, sizeof(who));
			return ll_err_set(err, -EBUSY,
					  "%s is driven by %s; quit that console first (or pick another interface with --dev)",
					  dev, who);
		}
		if (fstat(l->fd, &a) == 0 && stat(l->path, &b) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			break;
		close(l->fd);
		l->fd = -1;
	}
	if (l->fd < 0) {
		free(l);
		return ll_err_set(err, -EBUSY, "owner lock %s: changes under us", dev);
	}
	read_all(l->fd, text, sizeof(text));
	if (text[0] && peer_lock_parse(text, prev) == 0)
		*prev_stale = true;
	peer_lock_self(&me);
	me.ifindex = ifindex;
	peer_lock_owner_add(&me, dev);
	if (peer_lock_format(&me, text, sizeof(text)) < 0 ||
	    ftruncate(l->fd, 0) < 0 ||
	    pwrite(l->fd, text, strlen(text), 0) != (ssize_t)strlen(text)) {
		int e = errno ? errno : ENOSPC;

		close(l->fd);
		free(l);
		return ll_err_set(err, -e, "owner lock %s: cannot write %s: %s", dev,
				  journal_dir(), strerror(e));
	}
	*out = l;
	return 0;
}

void peer_lock_release(struct peer_lock *l, bool remove)
{
	if (!l)
		return;
	if (remove)
		unlink(l->path);   /* while the flock is still held */
	close(l->fd);
	free(l);
}

const char *peer_lock_dev(const struct peer_lock *l)
{
	return l ? l->dev : "";
}

int peer_lock_stale(uint64_t netns, struct peer_lock_owner *out, int max,
		    int *n, struct ll_err *err)
{
	char prefix[40], path[768], text[PEER_LOCK_TEXT];
	struct dirent *de;
	DIR *dir;

	*n = 0;
	dir = opendir(journal_dir());
	if (!dir)
		return errno == ENOENT ? 0 :
			ll_err_set(err, -errno, "owner locks: %s: %s", journal_dir(),
				   strerror(errno));
	snprintf(prefix, sizeof(prefix), "owner-%" PRIu64 "-", netns);
	while ((de = readdir(dir)) && *n < max) {
		size_t l = strlen(de->d_name);
		int fd;

		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 || l < 6 ||
		    strcmp(de->d_name + l - 5, ".lock") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", journal_dir(), de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		/* a live owner holds the flock: not stale */
		if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
			read_all(fd, text, sizeof(text));
			if (text[0] && peer_lock_parse(text, &out[*n]) == 0)
				(*n)++;
		}
		close(fd);
	}
	closedir(dir);
	return 0;
}

int peer_lock_holder(uint64_t netns, int ifindex, struct peer_lock_owner *out)
{
	char path[512], text[PEER_LOCK_TEXT];
	int fd, held = 0;

	memset(out, 0, sizeof(*out));
	lock_path(path, sizeof(path), netns, ifindex);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	/* a live owner holds the flock (this process too: a flock of another
	 * open file conflicts with its own) */
	if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
		read_all(fd, text, sizeof(text));
		if (peer_lock_parse(text, out) < 0)
			snprintf(out->user, sizeof(out->user), "?");
		held = out->pid != (long)getpid();
	}
	close(fd);
	return held;
}

void peer_lock_drop_stale(uint64_t netns, int ifindex)
{
	char path[512];
	int fd;

	lock_path(path, sizeof(path), netns, ifindex);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		unlink(path);
	close(fd);
}

/* The keeper on the peer: $1 = netns id, $2 = our record, $3 = the pid of
 * a dead console's keeper to end first ("" = none): its sshd session
 * process is ended (as if the console's FIN had come: the hold guard of
 * that session restores, its channels end), else the keeper alone. Prints
 * "noflock",
 * or "held"/"stale"/"free" + record lines + "end" (a stale record lists
 * only devices whose journal is still there), then "ok" and serves stdin:
 * "dev NAME" adds a device, "release" drops the record and ends; EOF (the
 * session gone) ends leaving the record, the flock ending with the
 * process. */
#define KEEPER_SH \
	"D=/run/linklab; F=\"$D/owner-remote-$1.lock\"; umask 077; mkdir -p \"$D\" || exit 1; " \
	"command -v flock >/dev/null 2>&1 || { echo noflock; exit 0; }; " \
	"exec 9<>\"$F\" || exit 1; W=-n; " \
	"if [ -n \"$3\" ]; then case \"$(tr '\\0' ' ' < /proc/$3/cmdline 2>/dev/null)\" in " \
	"*linklab-owner*) P=$(awk '/^PPid:/{print $2}' /proc/$3/status 2>/dev/null); " \
	"if [ -n \"$P\" ] && [ \"$(cat /proc/$P/comm 2>/dev/null)\" = sshd ]; then kill \"$P\"; " \
	"else kill \"$3\"; fi; W='-w 5';; esac; fi; " \
	"if ! flock $W 9; then echo held; cat \"$F\"; echo end; exit 0; fi; " \
	"if [ -s \"$F\" ]; then echo stale; while read -r k v; do " \
	"if [ \"$k\" = dev ]; then { [ -e \"$D/remote-$1-$v.tc.json\" ] || " \
	"[ -e \"$D/engine-$1-$(cat /sys/class/net/$v/ifindex 2>/dev/null).hook\" ]; } && echo \"dev $v\"; " \
	"else echo \"$k $v\"; fi; done < \"$F\"; else echo free; fi; echo end; " \
	"{ printf '%s' \"$2\"; echo \"kpid $$\"; } > \"$F\"; echo ok; " \
	"while read -r k v; do case \"$k\" in " \
	"dev) grep -qx \"dev $v\" \"$F\" || printf 'dev %s\\n' \"$v\" >> \"$F\";; " \
	"release) rm -f \"$F\"; exit 0;; esac; done"

/* One attempt: spawn the keeper (evict: a dead console's keeper pid to end
 * first, 0 = none) and read its answer. */
static int keeper_try(struct ssh_session *s, const char *nsid, const char *rec,
		      long evict, struct ssh_proc **keeper,
		      struct peer_lock_owner *prev, bool *prev_stale,
		      struct ll_err *err)
{
	char text[PEER_LOCK_TEXT] = "", line[200], ev[24] = "";
	char cmd[4096] = "sh -c ", *q;
	const char *arg[3] = { nsid && *nsid ? nsid : "0", rec, ev };
	struct ssh_proc *k = NULL;
	int rc, state = 0, i;  /* state: 1 held, 2 stale, 3 free, 4 after end */

	if (evict > 1)
		snprintf(ev, sizeof(ev), "%ld", evict);
	q = cmd + strlen(cmd);
	if (tccmd_quote(KEEPER_SH, q, sizeof(cmd) - (size_t)(q - cmd)) < 0)
		return ll_err_set(err, -ENOSPC, "keeper command too long");
	strncat(cmd, " linklab-owner", sizeof(cmd) - strlen(cmd) - 1);
	for (i = 0; i < 3; i++) {
		strncat(cmd, " ", sizeof(cmd) - strlen(cmd) - 1);
		q = cmd + strlen(cmd);
		if (tccmd_quote(arg[i], q, sizeof(cmd) - (size_t)(q - cmd)) < 0)
			return ll_err_set(err, -ENOSPC, "keeper command too long");
	}
	rc = ssh_spawn(s, cmd, &k, err);
	if (rc < 0)
		return rc;
	for (;;) {
		rc = ssh_spawn_readline(k, line, sizeof(line), 10000, err);
		if (rc < 0)
			break;
		if (!state) {
			if (!strcmp(line, "noflock")) {
				rc = ll_err_set(err, -ENOTSUP,
						"the peer has no flock(1) (util-linux): another console is not kept off it");
				break;
			}
			state = !strcmp(line, "held") ? 1 : !strcmp(line, "stale") ? 2 :
				!strcmp(line, "free") ? 3 : 0;
			if (!state) {
				rc = ll_err_set(err, -EPROTO, "owner keeper on the peer: \"%.60s\"", line);
				break;
			}
			continue;
		}
		if (state < 4 && !strcmp(line, "end")) {
			if (state == 1) {
				char who[200];

				if (peer_lock_parse(text, prev) < 0)
					snprintf(prev->user, sizeof(prev->user), "?");
				peer_lock_describe(prev, who, sizeof(who));
				rc = ll_err_set(err, -EBUSY,
						"the peer is driven by %s; quit that console first", who);
				break;
			}
			if (state == 2 && peer_lock_parse(text, prev) == 0)
				*prev_stale = true;
			state = 4;
			continue;
		}
		if (state == 4) {
			rc = strcmp(line, "ok") ? ll_err_set(err, -EPROTO,
				"owner keeper on the peer: \"%.60s\"", line) : 0;
			break;
		}
		if (strlen(text) + strlen(line) + 2 < sizeof(text)) {
			strcat(text, line);
			strcat(text, "\n");
		}
	}
	if (rc < 0) {
		ssh_spawn_close(k);
		return rc;
	}
	*keeper = k;
	return 0;
}

/* Is pid a linklab process on this host? */
static bool local_linklab(long pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return !strcmp(comm, "linklab");
}

int peer_lock_remote_take(struct ssh_session *s, const char *nsid,
			  struct ssh_proc **keeper, struct peer_lock_owner *prev,
			  bool *prev_stale, struct ll_err *err)
{
	struct peer_lock_owner me;
	char rec[PEER_LOCK_TEXT];
	int rc;

	*keeper = NULL;
	*prev_stale = false;
	memset(prev, 0, sizeof(*prev));
	peer_lock_self(&me);
	if (peer_lock_format(&me, rec, sizeof(rec)) < 0)
		return ll_err_set(err, -ENOSPC, "owner record too long");
	rc = keeper_try(s, nsid, rec, 0, keeper, prev, prev_stale, err);
	/* held by a console of this host that is gone (its session to the
	 * peer cut without a FIN, sshd not aware yet): end that session
	 * and take over */
	if (rc == -EBUSY && prev->kpid > 1 && prev->pid > 1 &&
	    !strcmp(prev->host, me.host) && prev->pid != me.pid &&
	    !local_linklab(prev->pid)) {
		long evict = prev->kpid;

		memset(prev, 0, sizeof(*prev));
		rc = keeper_try(s, nsid, rec, evict, keeper, prev, prev_stale, err);
	}
	return rc;
}

/* $1 = netns id: the record, when a keeper holds its flock (a shared
 * flock cannot be had); nothing otherwise. */
#define HOLDER_SH \
	"F=\"/run/linklab/owner-remote-$1.lock\"; [ -s \"$F\" ] || exit 0; " \
	"command -v flock >/dev/null 2>&1 || exit 0; exec 9<\"$F\" || exit 0; " \
	"flock -n -s 9 && exit 0; echo held; cat \"$F\""

int peer_lock_remote_holder(struct ssh_session *s, const char *nsid,
			    struct peer_lock_owner *out, struct ll_err *err)
{
	char cmd[1024] = "sh -c ", *q, *text = NULL;
	int rc, status = 0;

	memset(out, 0, sizeof(*out));
	q = cmd + strlen(cmd);
	if (tccmd_quote(HOLDER_SH, q, sizeof(cmd) - (size_t)(q - cmd)) < 0)
		return ll_err_set(err, -ENOSPC, "owner check command too long");
	strncat(cmd, " linklab-owner-check ", sizeof(cmd) - strlen(cmd) - 1);
	q = cmd + strlen(cmd);
	if (tccmd_quote(nsid && *nsid ? nsid : "0", q, sizeof(cmd) - (size_t)(q - cmd)) < 0)
		return ll_err_set(err, -ENOSPC, "owner check command too long");
	rc = ssh_exec(s, cmd, &text, NULL, &status, 10000, err);
	if (rc < 0)
		return rc;
	rc = 0;
	if (text && !strncmp(text, "held\n", 5)) {
		if (peer_lock_parse(text + 5, out) < 0)
			snprintf(out->user, sizeof(out->user), "?");
		rc = 1;
	}
	free(text);
	return rc;
}

void peer_lock_remote_note(struct ssh_proc *keeper, const char *dev)
{
	char line[IF_NAMESIZE + 8];

	if (!keeper || !dev || !*dev || strlen(dev) >= IF_NAMESIZE ||
	    strpbrk(dev, " \t\n\r/:"))
		return;
	snprintf(line, sizeof(line), "dev %s\n", dev);
	ssh_spawn_write(keeper, line, strlen(line), 2000, NULL);
}

void peer_lock_remote_release(struct ssh_proc *keeper, bool remove)
{
	if (!keeper)
		return;
	if (remove)
		ssh_spawn_write(keeper, "release\n", 8, 2000, NULL);
	ssh_spawn_close(keeper);
}
