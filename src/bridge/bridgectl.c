/* SPDX-License-Identifier: MIT */
/* bridgectl.c - the control socket of a running `linklab bridge`: server
 * thread, JSON line protocol, lease, the two engines behind it (user:
 * bridge_reconfigure with emu_config_build; kernel: the local peer's apply
 * on the egress port), and the client side (bridgectl.h). */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cjson/cJSON.h>

#include "linklab/base/fdio.h"
#include "linklab/bridge/bridgectl.h"
#include "linklab/bridge/emu.h"
#include "linklab/peer/journal.h"
#include "linklab/peer/peer.h"

static const char *const dir_key[2] = { "a_to_b", "b_to_a" };

struct conn {
	int fd;                 /* -1 = free slot */
	int pid;                /* SO_PEERCRED, 0 if unknown */
	size_t n;
	bool skip;              /* discarding an over-long line up to its '\n' */
	char *buf;              /* BRIDGECTL_LINE_MAX bytes */
};

struct bridgectl {
	struct bridgectl_ops ops;
	void *arg;
	struct bridgectl_info info;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd, stopfd;
	pthread_t th;
	pthread_mutex_t mu;     /* cur, gen, lease_* (read by other threads) */
	struct impair cur[2];
	uint64_t gen;
	int lease;              /* index into conns holding it, -1 none */
	int lease_pid;
	struct impair lease_dial[2];    /* the dials when the lease began */
	bool lease_touched[2];          /* last set through the lease conn */
	struct conn conns[BRIDGECTL_MAX_CLIENTS];
	void *glue;             /* bridgectl_serve_*: freed by bridgectl_stop */
};

/* --- pure protocol pieces ------------------------------------------------------ */

bool bridgectl_dial_equal(const struct impair *a, const struct impair *b)
{
	const struct impair_field *f;
	char va[128], vb[128];

	if (a->set != b->set)
		return false;
	for (f = impair_fields; f->name; f++)
		if ((a->set & f->bit) &&
		    strcmp(impair_get(a, f, va, sizeof(va)), impair_get(b, f, vb, sizeof(vb))))
			return false;
	return true;
}

/* Copy diag entries of src into dst, each text prefixed with "DIR: ". */
static void diag_merge(struct ll_diag *dst, const struct ll_diag *src, const char *dir)
{
	int i;

	for (i = 0; i < src->n; i++)
		ll_diag_add(dst, src->e[i].level, src->e[i].field[0] ? src->e[i].field : NULL,
			    "%s: %s", dir, src->e[i].text);
	if (src->truncated)
		dst->truncated = 1;
}

static int parse_set_doc(const cJSON *doc, const struct impair cur[2], struct impair want[2],
			 unsigned *dirs, struct ll_diag *diag)
{
	int d, nerr0 = diag->nerrors;

	*dirs = 0;
	want[0] = cur[0];
	want[1] = cur[1];
	if (!cJSON_IsObject(doc)) {
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "request is not a JSON object");
		return -EINVAL;
	}
	{
		const cJSON *it;

		/* a misspelt direction must not be a silent no-op */
		cJSON_ArrayForEach(it, doc)
			if (it->string && strcmp(it->string, "op") &&
			    strcmp(it->string, dir_key[0]) && strcmp(it->string, dir_key[1]))
				ll_diag_add(diag, LL_DIAG_ERROR, NULL,
					    "set: unknown key \"%.40s\" (op, a_to_b, b_to_a)",
					    it->string);
	}
	for (d = 0; d < 2; d++) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(doc, dir_key[d]);
		struct ll_diag one;

		if (!o)
			continue;
		*dirs |= 1u << d;
		if (!cJSON_IsObject(o)) {
			ll_diag_add(diag, LL_DIAG_ERROR, NULL,
				    "%s: want an object of dial fields ({\"delay\":\"50ms\"}; {} clears)",
				    dir_key[d]);
			continue;
		}
		ll_diag_clear(&one);
		bridge_fields_parse(o, &want[d], &one);
		if (one.nerrors == 0 && want[d].set)    /* {} is plain forwarding */
			impair_validate(&want[d], &one);
		diag_merge(diag, &one, dir_key[d]);
	}
	if (*dirs == 0 && diag->nerrors == nerr0)
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "set: give \"a_to_b\" and/or \"b_to_a\" (objects of dial fields)");
	return diag->nerrors > nerr0 ? -EINVAL : 0;
}

int bridgectl_parse_set(const char *line, const struct impair cur[2], struct impair want[2],
			unsigned *dirs, struct ll_diag *diag)
{
	cJSON *doc = cJSON_Parse(line);
	int rc = parse_set_doc(doc, cur, want, dirs, diag);

	cJSON_Delete(doc);
	return rc;
}

/* --- server ----------------------------------------------------------------------- */

int bridgectl_sock_path(int pid, char *buf, size_t len, struct ll_err *err)
{
	uint64_t ns;
	int rc = journal_netns(&ns, err), n;

	if (rc < 0)
		return rc;
	n = snprintf(buf, len, "%s/bridge-%llu-%d.sock", journal_dir(),
		     (unsigned long long)ns, pid);
	if (n < 0 || (size_t)n >= len ||
	    (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return ll_err_set(err, -ENAMETOOLONG,
				  "control socket path %s/bridge-%llu-%d.sock is longer than "
				  "a Unix socket allows (%zu bytes): use a shorter LINKLAB_RUN_DIR",
				  journal_dir(), (unsigned long long)ns, pid,
				  sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	return 0;
}

static cJSON *state_json(struct bridgectl *s)
{
	cJSON *st = cJSON_CreateObject();
	struct impair cur[2];
	int d, lease_pid;

	pthread_mutex_lock(&s->mu);
	cur[0] = s->cur[0];
	cur[1] = s->cur[1];
	lease_pid = s->lease_pid;
	pthread_mutex_unlock(&s->mu);
	cJSON_AddNumberToObject(st, "pid", s->info.pid);
	cJSON_AddStringToObject(st, "engine", s->info.engine);
	cJSON_AddStringToObject(st, "if_a", s->info.if_a);
	cJSON_AddStringToObject(st, "if_b", s->info.if_b);
	if (s->info.workers)
		cJSON_AddNumberToObject(st, "workers", s->info.workers);
	cJSON_AddNumberToObject(st, "leased_by", lease_pid);
	for (d = 0; d < 2; d++) {
		struct bridgectl_counters c;
		cJSON *o = cJSON_AddObjectToObject(st, dir_key[d]);
		char sum[256];

		memset(&c, 0, sizeof(c));
		if (s->ops.counters)
			s->ops.counters(s->arg, (enum bridge_dir)d, &c);
		cJSON_AddStringToObject(o, "dial", impair_summary(&cur[d], sum, sizeof(sum)));
		cJSON_AddItemToObject(o, "fields", bridge_fields_json(&cur[d]));
		cJSON_AddNumberToObject(o, "rx_packets", (double)c.rx_packets);
		cJSON_AddNumberToObject(o, "rx_bytes", (double)c.rx_bytes);
		cJSON_AddNumberToObject(o, "tx_packets", (double)c.tx_packets);
		cJSON_AddNumberToObject(o, "tx_bytes", (double)c.tx_bytes);
		cJSON_AddNumberToObject(o, "lost", (double)c.lost);
		cJSON_AddNumberToObject(o, "duplicated", (double)c.duplicated);
		cJSON_AddNumberToObject(o, "corrupted", (double)c.corrupted);
		cJSON_AddNumberToObject(o, "reordered", (double)c.reordered);
		cJSON_AddNumberToObject(o, "drops", (double)c.drops);
	}
	return st;
}

/* Apply want[] on the directions in dirs that differ from s->cur; both or
 * neither: when the second fails the first is put back. Updates cur/gen. */
static int apply_pair(struct bridgectl *s, const struct impair want[2], struct ll_err *err)
{
	struct impair cur[2];
	int d, done = -1, rc = 0;

	pthread_mutex_lock(&s->mu);
	cur[0] = s->cur[0];
	cur[1] = s->cur[1];
	pthread_mutex_unlock(&s->mu);
	for (d = 0; d < 2; d++) {
		if (bridgectl_dial_equal(&cur[d], &want[d]))
			continue;
		rc = s->ops.apply(s->arg, (enum bridge_dir)d, &want[d], err);
		if (rc < 0) {
			ll_err_prefix(err, "%s: ", dir_key[d]);
			break;
		}
		done = d;
		pthread_mutex_lock(&s->mu);
		s->cur[d] = want[d];
		s->gen++;
		pthread_mutex_unlock(&s->mu);
	}
	if (rc < 0 && done >= 0) {
		struct ll_err e2 = { 0 };

		if (s->ops.apply(s->arg, (enum bridge_dir)done, &cur[done], &e2) == 0) {
			pthread_mutex_lock(&s->mu);
			s->cur[done] = cur[done];
			s->gen++;
			pthread_mutex_unlock(&s->mu);
		} else if (err) {
			size_t l = strlen(err->msg);

			snprintf(err->msg + l, sizeof(err->msg) - l,
				 "; putting %s back failed too: %s", dir_key[done], e2.msg);
		}
	}
	return rc;
}

static char *reply_error(const struct ll_diag *diag, const char *one, bool invalid)
{
	cJSON *r = cJSON_CreateObject(), *a;
	char *txt;
	int i;

	cJSON_AddBoolToObject(r, "ok", 0);
	cJSON_AddBoolToObject(r, "invalid", invalid);
	a = cJSON_AddArrayToObject(r, "errors");
	if (one)
		cJSON_AddItemToArray(a, cJSON_CreateString(one));
	for (i = 0; diag && i < diag->n; i++)
		if (diag->e[i].level == LL_DIAG_ERROR)
			cJSON_AddItemToArray(a, cJSON_CreateString(diag->e[i].text));
	if (diag && diag->truncated)
		cJSON_AddItemToArray(a, cJSON_CreateString("(more problems not listed)"));
	txt = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	return txt;
}

static char *reply_state(struct bridgectl *s, const struct ll_diag *warn)
{
	cJSON *r = cJSON_CreateObject();
	char *txt;
	int i;

	cJSON_AddBoolToObject(r, "ok", 1);
	cJSON_AddItemToObject(r, "state", state_json(s));
	if (warn && warn->n > warn->nerrors) {
		cJSON *a = cJSON_AddArrayToObject(r, "warnings");

		for (i = 0; i < warn->n; i++)
			if (warn->e[i].level == LL_DIAG_WARN)
				cJSON_AddItemToArray(a, cJSON_CreateString(warn->e[i].text));
	}
	txt = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	return txt;
}

static char *do_set(struct bridgectl *s, int ci, const cJSON *doc)
{
	struct impair cur[2], want[2];
	struct ll_diag diag;
	struct ll_err err = { 0 };
	unsigned dirs;
	int d;

	ll_diag_clear(&diag);
	pthread_mutex_lock(&s->mu);
	cur[0] = s->cur[0];
	cur[1] = s->cur[1];
	pthread_mutex_unlock(&s->mu);
	if (parse_set_doc(doc, cur, want, &dirs, &diag) == 0 && s->ops.check)
		for (d = 0; d < 2; d++) {
			struct ll_diag one;

			if (!(dirs & (1u << d)) || !want[d].set)
				continue;
			ll_diag_clear(&one);
			s->ops.check(s->arg, (enum bridge_dir)d, &want[d], &one);
			diag_merge(&diag, &one, dir_key[d]);
		}
	if (diag.nerrors)
		return reply_error(&diag, NULL, true);
	if (apply_pair(s, want, &err) < 0)
		return reply_error(NULL, err.msg, false);
	/* the lease gives back only what was last set through it */
	pthread_mutex_lock(&s->mu);
	for (d = 0; d < 2 && s->lease >= 0; d++)
		if (dirs & (1u << d))
			s->lease_touched[d] = s->lease == ci;
	pthread_mutex_unlock(&s->mu);
	return reply_state(s, &diag);
}

static char *do_lease(struct bridgectl *s, int ci)
{
	char msg[128];
	int holder;

	pthread_mutex_lock(&s->mu);
	holder = s->lease;
	if (holder < 0) {
		s->lease = ci;
		s->lease_pid = s->conns[ci].pid;
		s->lease_dial[0] = s->cur[0];
		s->lease_dial[1] = s->cur[1];
		s->lease_touched[0] = s->lease_touched[1] = false;
	}
	pthread_mutex_unlock(&s->mu);
	if (holder >= 0 && holder != ci) {
		snprintf(msg, sizeof(msg), "bridge is leased by another console (pid %d)",
			 s->conns[holder].pid);
		return reply_error(NULL, msg, false);
	}
	return reply_state(s, NULL);
}

/* One request line -> one reply line (malloc'd, no '\n'). */
static char *handle_line(struct bridgectl *s, int ci, const char *line)
{
	cJSON *doc = cJSON_Parse(line);
	const cJSON *op = cJSON_GetObjectItemCaseSensitive(doc, "op");
	char msg[160];
	char *r;

	if (!cJSON_IsObject(doc) || !cJSON_IsString(op)) {
		cJSON_Delete(doc);
		return reply_error(NULL, "request: want one JSON object per line with \"op\": "
				   "\"get\", \"set\" or \"lease\"", true);
	}
	if (!strcmp(op->valuestring, "get"))
		r = reply_state(s, NULL);
	else if (!strcmp(op->valuestring, "set"))
		r = do_set(s, ci, doc);
	else if (!strcmp(op->valuestring, "lease"))
		r = do_lease(s, ci);
	else {
		snprintf(msg, sizeof(msg), "op '%.40s': unknown (get, set, lease)", op->valuestring);
		r = reply_error(NULL, msg, true);
	}
	cJSON_Delete(doc);
	return r;
}

static int send_line(int fd, char *txt)
{
	int rc;

	if (!txt)
		return -1;
	rc = fdio_write_all(fd, txt, strlen(txt), true);
	if (rc == 0)
		rc = fdio_write_all(fd, "\n", 1, true);
	free(txt);
	return rc;
}

/* Close connection ci; a lease it held ends: each direction last set
 * through it gets back its dial of the lease's start (one set by another
 * connection later stands). The connection is told in a last line
 * {"ok":true,"lease_ended":true,"restored":{DIR:dial,...}} (best effort:
 * after EOF from the client it still reads; after kill -9 nobody does). */
static void conn_close(struct bridgectl *s, int ci)
{
	struct conn *c = &s->conns[ci];
	bool leased = false;
	struct impair want[2];
	bool back[2] = { false, false };
	int d;

	pthread_mutex_lock(&s->mu);
	if (s->lease == ci) {
		leased = true;
		for (d = 0; d < 2; d++) {
			back[d] = s->lease_touched[d] &&
				  !bridgectl_dial_equal(&s->cur[d], &s->lease_dial[d]);
			want[d] = back[d] ? s->lease_dial[d] : s->cur[d];
		}
		s->lease = -1;
		s->lease_pid = 0;
	}
	pthread_mutex_unlock(&s->mu);
	if (leased) {
		struct ll_err err = { 0 };
		cJSON *r = cJSON_CreateObject(), *o;
		char sum[256];
		int rc = back[0] || back[1] ? apply_pair(s, want, &err) : 0;

		cJSON_AddBoolToObject(r, "ok", rc == 0);
		cJSON_AddBoolToObject(r, "lease_ended", 1);
		o = cJSON_AddObjectToObject(r, "restored");
		for (d = 0; d < 2 && rc == 0; d++)
			if (back[d])
				cJSON_AddStringToObject(o, dir_key[d],
							impair_summary(&want[d], sum, sizeof(sum)));
		if (rc < 0)
			cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "errors"),
					     cJSON_CreateString(err.msg));
		send_line(c->fd, cJSON_PrintUnformatted(r));
		cJSON_Delete(r);
	}
	close(c->fd);
	c->fd = -1;
	c->n = 0;
	free(c->buf);
	c->buf = NULL;
}

static void conn_accept(struct bridgectl *s)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);
	struct timeval tv = { .tv_sec = 2 };
	int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC), i;

	if (fd < 0)
		return;
	for (i = 0; i < BRIDGECTL_MAX_CLIENTS; i++)
		if (s->conns[i].fd < 0)
			break;
	if (i == BRIDGECTL_MAX_CLIENTS) {
		send_line(fd, reply_error(NULL, "too many control connections", false));
		close(fd);
		return;
	}
	s->conns[i].buf = malloc(BRIDGECTL_LINE_MAX);
	if (!s->conns[i].buf) {
		close(fd);
		return;
	}
	/* a client that stops reading cannot stall the server for long */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	s->conns[i].fd = fd;
	s->conns[i].n = 0;
	s->conns[i].skip = false;
	s->conns[i].pid = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0 ? (int)cr.pid : 0;
}

/* Read what is there; answer every complete line. A line longer than
 * BRIDGECTL_LINE_MAX gets an error reply and is skipped up to its '\n'; the
 * connection (and its lease) stays. Returns -1 to close. */
static int conn_read(struct bridgectl *s, int ci)
{
	struct conn *c = &s->conns[ci];
	ssize_t r = recv(c->fd, c->buf + c->n, BRIDGECTL_LINE_MAX - c->n, MSG_DONTWAIT);
	char *nl;

	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r <= 0)
		return -1;
	c->n += (size_t)r;
	while ((nl = memchr(c->buf, '\n', c->n))) {
		size_t len = (size_t)(nl - c->buf);

		*nl = 0;
		if (len && c->buf[len - 1] == '\r')
			c->buf[len - 1] = 0;
		if (c->skip)
			c->skip = false;        /* the tail of the long line */
		else if (c->buf[strspn(c->buf, " \t")] &&
			 send_line(c->fd, handle_line(s, ci, c->buf)) < 0)
			return -1;
		memmove(c->buf, nl + 1, c->n - len - 1);
		c->n -= len + 1;
	}
	if (c->n == BRIDGECTL_LINE_MAX) {
		if (!c->skip && send_line(c->fd, reply_error(NULL, "request line longer than "
							     "65536 bytes", true)) < 0)
			return -1;
		c->skip = true;
		c->n = 0;
	}
	return 0;
}

static void *server_thread(void *arg)
{
	struct bridgectl *s = arg;
	struct pollfd pfd[2 + BRIDGECTL_MAX_CLIENTS];
	int map[2 + BRIDGECTL_MAX_CLIENTS];

	for (;;) {
		int n = 0, i;

		pfd[n].fd = s->stopfd;
		pfd[n++].events = POLLIN;
		pfd[n].fd = s->lfd;
		pfd[n++].events = POLLIN;
		for (i = 0; i < BRIDGECTL_MAX_CLIENTS; i++)
			if (s->conns[i].fd >= 0) {
				map[n] = i;
				pfd[n].fd = s->conns[i].fd;
				pfd[n++].events = POLLIN;
			}
		if (poll(pfd, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents)
			break;
		for (i = 2; i < n; i++)
			if (pfd[i].revents && conn_read(s, map[i]) < 0)
				conn_close(s, map[i]);
		if (pfd[1].revents)
			conn_accept(s);
	}
	return NULL;
}

/* Remove control sockets of this network namespace whose bridge process is
 * gone (a bridge killed with -9 cannot remove its own). */
static void sweep_stale(void)
{
	char prefix[64], path[1024];
	struct dirent *de;
	uint64_t ns;
	DIR *d;

	if (journal_netns(&ns, NULL) < 0 || !(d = opendir(journal_dir())))
		return;
	snprintf(prefix, sizeof(prefix), "bridge-%llu-", (unsigned long long)ns);
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name), pl = strlen(prefix);
		char *end;
		long pid;

		if (strncmp(de->d_name, prefix, pl) || l < pl + 6 ||
		    strcmp(de->d_name + l - 5, ".sock"))
			continue;
		pid = strtol(de->d_name + pl, &end, 10);
		if (pid <= 0 || strcmp(end, ".sock") || !bridge_pid_dead((int)pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", journal_dir(), de->d_name);
		unlink(path);
	}
	closedir(d);
}

int bridgectl_start(const struct bridgectl_ops *ops, void *arg,
		    const struct bridgectl_info *info, const struct impair dial[2],
		    struct bridgectl **out, struct ll_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct bridgectl *s;
	int rc, i;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ll_err_set(err, -ENOMEM, "control socket: out of memory");
	s->ops = *ops;
	s->arg = arg;
	s->info = *info;
	s->cur[0] = dial[0];
	s->cur[1] = dial[1];
	s->lease = -1;
	s->lfd = s->stopfd = -1;
	for (i = 0; i < BRIDGECTL_MAX_CLIENTS; i++)
		s->conns[i].fd = -1;
	pthread_mutex_init(&s->mu, NULL);
	rc = bridgectl_sock_path(info->pid, s->path, sizeof(s->path), err);
	if (rc < 0)
		goto fail;
	mkdir(journal_dir(), 0700);
	sweep_stale();
	unlink(s->path);                /* a stale file of a dead process of this pid */
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		rc = ll_err_set(err, -errno, "control socket: %s", strerror(errno));
		goto fail;
	}
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(s->path, 0600) < 0 || listen(s->lfd, 8) < 0) {
		rc = ll_err_set(err, -errno, "control socket %s: %s", s->path, strerror(errno));
		goto fail;
	}
	s->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stopfd < 0) {
		rc = ll_err_set(err, -errno, "control socket: eventfd: %s", strerror(errno));
		goto fail;
	}
	rc = pthread_create(&s->th, NULL, server_thread, s);
	if (rc) {
		rc = ll_err_set(err, -rc, "control socket: thread: %s", strerror(rc));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s->lfd >= 0) {
		close(s->lfd);
		if (s->path[0])
			unlink(s->path);
	}
	if (s->stopfd >= 0)
		close(s->stopfd);
	pthread_mutex_destroy(&s->mu);
	free(s);
	return rc;
}

void bridgectl_stop(struct bridgectl *s)
{
	uint64_t one = 1;
	int i;

	if (!s)
		return;
	if (write(s->stopfd, &one, sizeof(one)) < 0)
		one = 0;
	pthread_join(s->th, NULL);
	for (i = 0; i < BRIDGECTL_MAX_CLIENTS; i++)
		if (s->conns[i].fd >= 0) {
			close(s->conns[i].fd);
			free(s->conns[i].buf);
		}
	close(s->lfd);
	close(s->stopfd);
	unlink(s->path);
	pthread_mutex_destroy(&s->mu);
	free(s->glue);
	free(s);
}

uint64_t bridgectl_dials(struct bridgectl *s, struct impair out[2])
{
	uint64_t g;

	pthread_mutex_lock(&s->mu);
	out[0] = s->cur[0];
	out[1] = s->cur[1];
	g = s->gen;
	pthread_mutex_unlock(&s->mu);
	return g;
}

int bridgectl_lease_pid(struct bridgectl *s)
{
	int p;

	pthread_mutex_lock(&s->mu);
	p = s->lease_pid;
	pthread_mutex_unlock(&s->mu);
	return p;
}

/* --- kernel engine counters ------------------------------------------------------------ */

struct bridgectl_kstats {
	struct peer *p;
	char port[2][IF_NAMESIZE];      /* [0] IF_A, [1] IF_B */
	pthread_mutex_t mu;             /* every use of p while the object lives */
	struct link_stats base[2];      /* per port, at open */
	struct link_stats last[2];      /* per port, the last read */
	uint64_t qd_last[2];            /* per direction: egress root drops, last read */
	uint64_t qd_acc[2];             /* per direction: drops counted so far */
};

/* Port index (into port[]) where direction dir enters / leaves. */
static int ingress_port(enum bridge_dir dir)
{
	return dir == BRIDGE_A_TO_B ? 0 : 1;
}

static int egress_port(enum bridge_dir dir)
{
	return 1 - ingress_port(dir);
}

/* Drops of dev's root qdisc now (0 for a kernel default without stats). */
static int root_drops(struct peer *p, const char *dev, uint64_t *drops, struct ll_err *err)
{
	struct qdisc_state st;
	int rc = p->ops->read_qdiscs(p, dev, &st, err), i;

	*drops = 0;
	if (rc < 0)
		return rc;
	for (i = 0; i < st.n; i++)
		if (st.q[i].parent == 0xFFFFFFFFu) {    /* TC_H_ROOT */
			*drops = st.q[i].drops;
			break;
		}
	return 0;
}

/* Count dir's egress drops since the last read; a root qdisc whose counter
 * went back is a new one (counted from 0). Under k->mu. */
static int kstats_sync_drops(struct bridgectl_kstats *k, enum bridge_dir dir,
			     struct ll_err *err)
{
	uint64_t cur;
	int rc = root_drops(k->p, k->port[egress_port(dir)], &cur, err);

	if (rc < 0)
		return rc;
	k->qd_acc[dir] += cur >= k->qd_last[dir] ? cur - k->qd_last[dir] : cur;
	k->qd_last[dir] = cur;
	return 0;
}

static uint64_t since(uint64_t now, uint64_t base)
{
	return now >= base ? now - base : 0;     /* a recreated link: not ours */
}

int bridgectl_kstats_open(struct peer *p, const char *if_a, const char *if_b,
			  struct bridgectl_kstats **out, struct ll_err *err)
{
	struct bridgectl_kstats *k;
	int rc = 0, i;

	*out = NULL;
	if (!p->ops->counters)
		return ll_err_set(err, -ENOTSUP, "bridge counters: the %s peer cannot read "
				  "link counters", p->ops->name);
	k = calloc(1, sizeof(*k));
	if (!k)
		return ll_err_set(err, -ENOMEM, "bridge counters: out of memory");
	k->p = p;
	snprintf(k->port[0], sizeof(k->port[0]), "%s", if_a);
	snprintf(k->port[1], sizeof(k->port[1]), "%s", if_b);
	for (i = 0; i < 2 && rc == 0; i++) {
		rc = p->ops->counters->link_stats(p, k->port[i], &k->base[i], err);
		k->last[i] = k->base[i];
	}
	for (i = 0; i < 2 && rc == 0; i++)
		rc = root_drops(p, k->port[egress_port((enum bridge_dir)i)], &k->qd_last[i], err);
	if (rc < 0) {
		free(k);
		return rc;
	}
	pthread_mutex_init(&k->mu, NULL);
	*out = k;
	return 0;
}

int bridgectl_kstats_read(struct bridgectl_kstats *k, enum bridge_dir dir,
			  struct bridgectl_counters *c, struct ll_err *err)
{
	int in = ingress_port(dir), eg = egress_port(dir), rc, r2;
	struct link_stats ls;

	memset(c, 0, sizeof(*c));
	pthread_mutex_lock(&k->mu);
	rc = k->p->ops->counters->link_stats(k->p, k->port[in], &ls, err);
	if (rc == 0)
		k->last[in] = ls;
	r2 = k->p->ops->counters->link_stats(k->p, k->port[eg], &ls, rc < 0 ? NULL : err);
	if (r2 == 0)
		k->last[eg] = ls;
	else if (rc == 0)
		rc = r2;
	r2 = kstats_sync_drops(k, dir, rc < 0 ? NULL : err);
	if (r2 < 0 && rc == 0)
		rc = r2;
	c->rx_packets = since(k->last[in].rx_packets, k->base[in].rx_packets);
	c->rx_bytes = since(k->last[in].rx_bytes, k->base[in].rx_bytes);
	c->tx_packets = since(k->last[eg].tx_packets, k->base[eg].tx_packets);
	c->tx_bytes = since(k->last[eg].tx_bytes, k->base[eg].tx_bytes);
	c->drops = k->qd_acc[dir];
	pthread_mutex_unlock(&k->mu);
	return rc;
}

void bridgectl_kstats_close(struct bridgectl_kstats *k)
{
	if (!k)
		return;
	pthread_mutex_destroy(&k->mu);
	free(k);
}

/* --- the engines behind the socket ------------------------------------------------- */

#define SCOPE_FIELDS (IMP_DIRECTION | IMP_DST | IMP_DPORT)

struct glue {
	struct bridge *br;              /* user engine */
	struct peer *p;                 /* kernel engine */
	struct bridgectl_kstats *ks;    /* kernel: its counters (NULL: zeros) */
	char egress[2][IF_NAMESIZE];    /* kernel: A->B leaves IF_B */
	bool applied[2];                /* kernel: a dial of ours is on egress[d] */
	int has_netem;                  /* kernel: bridge_kernel_has_netem() */
	struct impair start[2];         /* the dials at start */
	struct emu_config start_cfg[2]; /* user: their models as the command built
					 * them (a --distribution FILE table too) */
	/* user: delay tables of live dials, two per direction: a new one is
	 * loaded into the slot the running model does not use */
	struct emu_dist dist[2][2];
	int next[2];
	struct emu_dist scratch;        /* check's trial build */
};

static void user_check(void *arg, enum bridge_dir dir, const struct impair *d,
		       struct ll_diag *diag)
{
	struct glue *g = arg;
	struct emu_config c;
	struct ll_err err = { 0 };

	if (bridgectl_dial_equal(d, &g->start[dir]))
		return;
	if (emu_config_build(&c, d, 1, &g->scratch, &err) < 0)
		ll_diag_add(diag, LL_DIAG_ERROR, NULL, "%s", err.msg);
}

static int user_apply(void *arg, enum bridge_dir dir, const struct impair *d,
		      struct ll_err *err)
{
	struct glue *g = arg;
	struct emu_dist *slot = &g->dist[dir][g->next[dir]];
	struct emu_config c;
	int rc;

	if (bridgectl_dial_equal(d, &g->start[dir]))
		return bridge_reconfigure(g->br, dir, &g->start_cfg[dir], err);
	rc = emu_config_build(&c, d, g->start_cfg[dir].seed, slot, err);
	if (rc == 0)
		rc = bridge_reconfigure(g->br, dir, &c, err);
	if (rc == 0 && c.dist == slot)
		g->next[dir] ^= 1;              /* that slot is in use now */
	return rc;
}

static void user_counters(void *arg, enum bridge_dir dir, struct bridgectl_counters *c)
{
	struct glue *g = arg;
	struct bridge_stats s;

	bridge_get_stats(g->br, dir, &s);
	c->rx_packets = s.rx_pkts;
	c->rx_bytes = s.rx_bytes;
	c->tx_packets = s.tx_pkts;
	c->tx_bytes = s.tx_bytes;
	c->lost = s.emu.lost;
	c->duplicated = s.emu.duplicated;
	c->corrupted = s.emu.corrupted;
	c->reordered = s.emu.reordered;
	c->drops = s.emu.limit_drops + s.emu.rate_drops + s.sock_drops;
}

static void kernel_check(void *arg, enum bridge_dir dir, const struct impair *d,
			 struct ll_diag *diag)
{
	struct glue *g = arg;
	const struct impair_field *f;

	(void)dir;
	for (f = impair_fields; f->name; f++)
		if (d->set & SCOPE_FIELDS & f->bit)
			ll_diag_add(diag, LL_DIAG_ERROR, f->name,
				    "%s: a bridge direction is the whole egress port (no scope)",
				    f->name);
	if (g->has_netem == 0 && impair_needs_netem(d))
		ll_diag_add(diag, LL_DIAG_ERROR, NULL,
			    "kernel engine: this kernel has no netem (CONFIG_NET_SCH_NETEM), so only "
			    "rate, burst, tbf-limit and latency; restart the bridge with --engine user");
}

static int kernel_apply_locked(struct glue *g, enum bridge_dir dir, const struct impair *d,
			       struct ll_err *err)
{
	int rc;

	if (impair_is_empty(d)) {
		if (!g->applied[dir])
			return 0;
		rc = g->p->ops->clear(g->p, g->egress[dir], err);
		if (rc == 0)
			g->applied[dir] = false;
		return rc;
	}
	rc = g->p->ops->apply(g->p, g->egress[dir], d, err);
	if (rc == 0)
		g->applied[dir] = true;
	return rc;
}

/* Under the counters' mutex (p is shared with their reads): the drops of
 * the qdisc about to be replaced are counted first, and the new one's
 * counter (0 for a new qdisc, kept by a change of the same kind) is the new
 * base. */
static int kernel_apply(void *arg, enum bridge_dir dir, const struct impair *d,
			struct ll_err *err)
{
	struct glue *g = arg;
	struct bridgectl_kstats *k = g->ks;
	uint64_t now;
	int rc;

	if (!k)
		return kernel_apply_locked(g, dir, d, err);
	pthread_mutex_lock(&k->mu);
	kstats_sync_drops(k, dir, NULL);
	rc = kernel_apply_locked(g, dir, d, err);
	if (root_drops(k->p, k->port[egress_port(dir)], &now, NULL) == 0)
		k->qd_last[dir] = now;          /* else the next read decides */
	pthread_mutex_unlock(&k->mu);
	return rc;
}

static void kernel_counters(void *arg, enum bridge_dir dir, struct bridgectl_counters *c)
{
	struct glue *g = arg;

	memset(c, 0, sizeof(*c));
	if (g->ks)
		bridgectl_kstats_read(g->ks, dir, c, NULL);
}

static int serve(const struct bridgectl_ops *ops, struct glue *g,
		 const struct bridgectl_info *info, const struct impair dial[2],
		 struct bridgectl **out, struct ll_err *err)
{
	int rc;

	g->start[0] = dial[0];
	g->start[1] = dial[1];
	rc = bridgectl_start(ops, g, info, dial, out, err);
	if (rc < 0)
		free(g);
	else
		(*out)->glue = g;
	return rc;
}

int bridgectl_serve_user(struct bridge *br, const struct bridgectl_info *info,
			 const struct impair dial[2], const struct emu_config cfg[2],
			 struct bridgectl **out, struct ll_err *err)
{
	static const struct bridgectl_ops ops = { user_apply, user_check, user_counters };
	struct glue *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return ll_err_set(err, -ENOMEM, "control socket: out of memory");
	g->br = br;
	g->start_cfg[0] = cfg[0];
	g->start_cfg[1] = cfg[1];
	return serve(&ops, g, info, dial, out, err);
}

int bridgectl_serve_kernel(struct peer *p, struct bridgectl_kstats *ks,
			   const char *const egress[2], int has_netem,
			   const struct bridgectl_info *info, const struct impair dial[2],
			   struct bridgectl **out, struct ll_err *err)
{
	static const struct bridgectl_ops ops = { kernel_apply, kernel_check, kernel_counters };
	struct glue *g = calloc(1, sizeof(*g));
	int d;

	*out = NULL;
	if (ks && ks->p != p) {
		free(g);
		return ll_err_set(err, -EINVAL, "control socket: the counters read another peer "
				  "than the engine applies on");
	}
	if (!g)
		return ll_err_set(err, -ENOMEM, "control socket: out of memory");
	g->p = p;
	g->ks = ks;
	g->has_netem = has_netem;
	for (d = 0; d < 2; d++) {
		snprintf(g->egress[d], sizeof(g->egress[d]), "%s", egress[d]);
		g->applied[d] = !impair_is_empty(&dial[d]);
	}
	return serve(&ops, g, info, dial, out, err);
}

/* --- client ------------------------------------------------------------------------ */

struct bridgectl_client {
	int fd;
	size_t n;
	char buf[BRIDGECTL_LINE_MAX];
};

int bridgectl_find(int pid, int *found, struct ll_err *err)
{
	struct bridge_status st[16];
	char list[128] = "";
	int n = 0, i, rc;

	*found = 0;
	rc = bridge_status_list(st, 16, &n, err);
	if (rc < 0)
		return rc;
	if (n == 0)
		return ll_err_set(err, -ESRCH, "no linklab bridge runs in this network namespace");
	for (i = 0; i < n; i++) {
		size_t l = strlen(list);

		if (pid > 0 && st[i].pid == pid) {
			*found = pid;
			return 0;
		}
		snprintf(list + l, sizeof(list) - l, "%s%d (%s-%s)", i ? ", " : "", st[i].pid,
			 st[i].if_a, st[i].if_b);
	}
	if (pid > 0)
		return ll_err_set(err, -ENOENT, "no linklab bridge with pid %d runs in this "
				  "network namespace (running: %s)", pid, list);
	if (n > 1)
		return ll_err_set(err, -EEXIST, "%d linklab bridges run in this network "
				  "namespace (pids %s): give --pid", n, list);
	*found = st[0].pid;
	return 0;
}

int bridgectl_client_open(int pid, struct bridgectl_client **out, struct ll_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct bridgectl_client *c;
	char path[sizeof(sa.sun_path)];
	int rc;

	*out = NULL;
	rc = bridgectl_sock_path(pid, path, sizeof(path), err);
	if (rc < 0)
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ll_err_set(err, -ENOMEM, "control socket: out of memory");
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = ll_err_set(err, -errno, "bridge pid %d: control socket %s: %s%s", pid, path,
				strerror(errno), errno == ENOENT ?
				" (a linklab bridge older than live control?)" : "");
		if (c->fd >= 0)
			close(c->fd);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int bridgectl_client_fd(const struct bridgectl_client *c)
{
	return c->fd;
}

int bridgectl_client_send(struct bridgectl_client *c, const char *line, struct ll_err *err)
{
	if (fdio_write_all(c->fd, line, strlen(line), true) < 0 ||
	    fdio_write_all(c->fd, "\n", 1, true) < 0)
		return ll_err_set(err, -errno ? -errno : -EPIPE, "control socket: send: %s",
				  strerror(errno ? errno : EPIPE));
	return 0;
}

int bridgectl_client_recv(struct bridgectl_client *c, char **line, int timeout_ms,
			  struct ll_err *err)
{
	*line = NULL;
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->n);
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		ssize_t r;
		int pr;

		if (nl) {
			size_t len = (size_t)(nl - c->buf);

			*line = malloc(len + 1);
			if (!*line)
				return ll_err_set(err, -ENOMEM, "control socket: out of memory");
			memcpy(*line, c->buf, len);
			(*line)[len] = 0;
			memmove(c->buf, nl + 1, c->n - len - 1);
			c->n -= len + 1;
			return 0;
		}
		if (c->n == sizeof(c->buf))
			return ll_err_set(err, -EMSGSIZE, "control socket: reply longer than %zu bytes",
					  sizeof(c->buf));
		pr = poll(&p, 1, timeout_ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return ll_err_set(err, -errno, "control socket: poll: %s", strerror(errno));
		if (pr == 0)
			return ll_err_set(err, -ETIMEDOUT, "control socket: no reply within %d ms",
					  timeout_ms);
		r = recv(c->fd, c->buf + c->n, sizeof(c->buf) - c->n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return ll_err_set(err, -errno, "control socket: recv: %s", strerror(errno));
		if (r == 0)
			return ll_err_set(err, -ECONNRESET, "control socket: the bridge closed the "
					  "connection");
		c->n += (size_t)r;
	}
}

void bridgectl_client_close(struct bridgectl_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}
