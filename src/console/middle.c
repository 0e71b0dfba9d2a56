/* SPDX-License-Identifier: MIT */
/* middle.c - the middle box behind the console: an SSH session and one
 * `linklab bridge --attach` process on it (the lease), STATE parsing and
 * set/get requests (protocol in middle.h). */
#include "linklab/console/middle.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linklab/base/text.h"
#include "linklab/remote/ssh.h"
#include "linklab/remote/tccmd.h"

#define MIDDLE_ATTACH_MS 10000
#define MIDDLE_SEND_MS 1000           /* writing a get line */
#define MIDDLE_LINE_MAX 65536
#define MIDDLE_CHUNK 4096             /* ssh_spawn_readline's buffer */

struct middle {
	struct ssh_session *s;
	struct ssh_proc *p;           /* the attach process, NULL = detached */
	bool lost;                    /* the session failed */
	char *line;                   /* reply buffer (MIDDLE_LINE_MAX) */
	size_t nline;                 /* bytes of a line still coming */
	struct middle_inflight q;     /* requests awaiting their reply */
	long long get_ms;             /* when the waiting get was sent */
	char cmd[256];                /* what middle_attach spawns */
	char engine[8];               /* middle_set_start's engine, "" = attach */
};

static long long middle_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int middle_inflight_push(struct middle_inflight *q, enum middle_req kind)
{
	if (q->n >= MIDDLE_INFLIGHT_MAX)
		return -EBUSY;
	q->kind[q->n++] = (unsigned char)kind;
	return 0;
}

enum middle_req middle_inflight_pop(struct middle_inflight *q)
{
	enum middle_req k;

	if (q->n <= 0)
		return MIDDLE_REQ_NONE;
	k = (enum middle_req)q->kind[0];
	memmove(q->kind, q->kind + 1, (size_t)(q->n - 1));
	q->n--;
	return k;
}

bool middle_inflight_has(const struct middle_inflight *q, enum middle_req kind)
{
	int i;

	for (i = 0; i < q->n; i++)
		if (q->kind[i] == kind)
			return true;
	return false;
}

bool middle_line_complete(const char *line, size_t n, int chunk, size_t cap)
{
	cJSON *o;

	if (chunk < MIDDLE_CHUNK || n + 1 >= cap)
		return true;
	/* a full chunk: the line goes on, unless it is whole already
	 * (exactly 4096 bytes and its newline) */
	o = cJSON_Parse(line);
	if (!o)
		return false;
	cJSON_Delete(o);
	return true;
}

static uint64_t middle_u64(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	const cJSON *k;
	uint64_t sum = 0;

	if (cJSON_IsNumber(v))
		return v->valuedouble > 0 ? (uint64_t)v->valuedouble : 0;
	if (cJSON_IsObject(v)) {
		cJSON_ArrayForEach(k, v)
			if (cJSON_IsNumber(k) && k->valuedouble > 0)
				sum += (uint64_t)k->valuedouble;
	}
	return sum;
}

static void middle_str(const cJSON *o, const char *name, char *dst, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	dst[0] = '\0';
	if (cJSON_IsString(v) && v->valuestring)
		snprintf(dst, len, "%s", v->valuestring);
}

static int middle_parse_dir(const cJSON *o, const char *name,
			    struct middle_dir *d, struct ll_err *err)
{
	const cJSON *dir = cJSON_GetObjectItemCaseSensitive(o, name);
	const cJSON *fields, *f;

	memset(d, 0, sizeof(*d));
	if (!cJSON_IsObject(dir))
		return ll_err_set(err, -EPROTO, "bridge state: no \"%s\" object", name);
	middle_str(dir, "dial", d->dial, sizeof(d->dial));
	fields = cJSON_GetObjectItemCaseSensitive(dir, "fields");
	if (fields && !cJSON_IsObject(fields))
		return ll_err_set(err, -EPROTO, "bridge state: %s.fields is not an object",
				  name);
	cJSON_ArrayForEach(f, fields) {
		struct ll_diag diag;
		char val[128];

		if (cJSON_IsString(f) && f->valuestring)
			snprintf(val, sizeof(val), "%s", f->valuestring);
		else if (cJSON_IsNumber(f))
			snprintf(val, sizeof(val), "%.17g", f->valuedouble);
		else if (cJSON_IsBool(f))
			snprintf(val, sizeof(val), "%s", cJSON_IsTrue(f) ? "on" : "off");
		else
			val[0] = '\0';
		d->nfields++;
		ll_diag_clear(&diag);
		if (impair_set(&d->fields, f->string, val, &diag) < 0) {
			size_t l = strlen(d->unparsed);

			snprintf(d->unparsed + l, sizeof(d->unparsed) - l, "%s%s=%s",
				 l ? " " : "", f->string, val);
		}
	}
	d->rx_packets = middle_u64(dir, "rx_packets");
	d->rx_bytes = middle_u64(dir, "rx_bytes");
	d->tx_packets = middle_u64(dir, "tx_packets");
	d->tx_bytes = middle_u64(dir, "tx_bytes");
	d->lost = middle_u64(dir, "lost");
	d->duplicated = middle_u64(dir, "duplicated");
	d->corrupted = middle_u64(dir, "corrupted");
	d->reordered = middle_u64(dir, "reordered");
	d->drops = middle_u64(dir, "drops");
	return 0;
}

static int middle_parse_obj(const cJSON *o, struct middle_state *st,
			    struct ll_err *err)
{
	struct middle_state s;
	const cJSON *pid;
	static const char *const need[] = { "engine", "if_a", "if_b" };
	size_t k;
	int rc;

	memset(&s, 0, sizeof(s));
	if (!cJSON_IsObject(o))
		return ll_err_set(err, -EPROTO, "bridge state: not a JSON object");
	for (k = 0; k < sizeof(need) / sizeof(need[0]); k++)
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, need[k])))
			return ll_err_set(err, -EPROTO, "bridge state: no \"%s\" text",
					  need[k]);
	pid = cJSON_GetObjectItemCaseSensitive(o, "pid");
	s.pid = cJSON_IsNumber(pid) ? (long)pid->valuedouble : 0;
	pid = cJSON_GetObjectItemCaseSensitive(o, "leased_by");
	s.leased_by = cJSON_IsNumber(pid) ? (long)pid->valuedouble : 0;
	middle_str(o, "engine", s.engine, sizeof(s.engine));
	middle_str(o, "if_a", s.if_a, sizeof(s.if_a));
	middle_str(o, "if_b", s.if_b, sizeof(s.if_b));
	rc = middle_parse_dir(o, "a_to_b", &s.dir[MIDDLE_AB], err);
	if (rc == 0)
		rc = middle_parse_dir(o, "b_to_a", &s.dir[MIDDLE_BA], err);
	if (rc < 0)
		return rc;
	*st = s;
	return 0;
}

int middle_parse_state(const char *json, struct middle_state *st,
		       struct ll_err *err)
{
	cJSON *o = cJSON_Parse(json ? json : "");
	int rc;

	if (!o)
		return ll_err_set(err, -EPROTO, "bridge state: not JSON: \"%.80s\"",
				  json ? json : "");
	rc = middle_parse_obj(o, st, err);
	cJSON_Delete(o);
	return rc;
}

/* Join the strings of array a into buf with "; ". */
static void middle_join(const cJSON *a, char *buf, size_t len)
{
	const cJSON *e;
	size_t l = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(e, a) {
		if (!cJSON_IsString(e) || !e->valuestring || l >= len - 1)
			continue;
		snprintf(buf + l, len - l, "%s%s", l ? "; " : "", e->valuestring);
		l = strlen(buf);
	}
}

int middle_parse_reply(const char *line, struct middle_state *st,
		       struct ll_err *err)
{
	cJSON *o = cJSON_Parse(line ? line : "");
	const cJSON *ok;
	char msg[LL_ERR_MAX];
	int rc;

	if (!o)
		return ll_err_set(err, -EPROTO, "bridge reply: not JSON: \"%.80s\"",
				  line ? line : "");
	ok = cJSON_GetObjectItemCaseSensitive(o, "ok");
	if (cJSON_IsTrue(ok)) {
		rc = middle_parse_obj(cJSON_GetObjectItemCaseSensitive(o, "state"), st, err);
		if (rc == 0)
			middle_join(cJSON_GetObjectItemCaseSensitive(o, "warnings"),
				    st->warnings, sizeof(st->warnings));
	} else if (cJSON_IsFalse(ok)) {
		middle_join(cJSON_GetObjectItemCaseSensitive(o, "errors"), msg, sizeof(msg));
		rc = ll_err_set(err, -EINVAL, "%s",
				msg[0] ? msg : "the bridge refused the request (no reason given)");
	} else {
		rc = ll_err_set(err, -EPROTO, "bridge reply: no \"ok\": \"%.80s\"", line);
	}
	cJSON_Delete(o);
	return rc;
}

/* One direction as {FIELD: VALUE, ...}. */
static cJSON *middle_dir_json(const struct impair *d)
{
	cJSON *o = cJSON_CreateObject();
	const struct impair_field *f;
	char buf[128];

	if (!o)
		return NULL;
	for (f = impair_fields; f->name; f++) {
		if (!(d->set & f->bit))
			continue;
		impair_get(d, f, buf, sizeof(buf));
		if (!cJSON_AddStringToObject(o, f->name, buf)) {
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

char *middle_set_request(const struct impair *ab, const struct impair *ba)
{
	cJSON *o = cJSON_CreateObject(), *d;
	char *s = NULL;

	if (!o || !cJSON_AddStringToObject(o, "op", "set"))
		goto out;
	if (ab) {
		d = middle_dir_json(ab);
		if (!d)
			goto out;
		cJSON_AddItemToObject(o, "a_to_b", d);
	}
	if (ba) {
		d = middle_dir_json(ba);
		if (!d)
			goto out;
		cJSON_AddItemToObject(o, "b_to_a", d);
	}
	s = cJSON_PrintUnformatted(o);
out:
	cJSON_Delete(o);
	return s;
}

int middle_open(struct middle **out, const struct ssh_target *t,
		int timeout_ms, struct ll_err *err)
{
	struct middle *m;
	int rc;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (m)
		m->line = malloc(MIDDLE_LINE_MAX);
	if (!m || !m->line) {
		if (m)
			free(m);
		return ll_err_set(err, -ENOMEM, "middle: out of memory");
	}
	snprintf(m->cmd, sizeof(m->cmd), "linklab bridge --attach");
	rc = ssh_open(&m->s, t, timeout_ms > 0 ? timeout_ms : 10000, err);
	if (rc < 0) {
		free(m->line);
		free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* Forget a partial line and the requests waiting (the attach process they
 * went to is gone). */
static void middle_reset(struct middle *m)
{
	m->nline = 0;
	memset(&m->q, 0, sizeof(m->q));
	m->get_ms = 0;
}

/* A failure of the session (not of the remote command). */
static int middle_fail(struct middle *m, int rc)
{
	if (rc == -EIO || rc == -ETIMEDOUT || rc == -ENOTCONN) {
		m->lost = true;
		ssh_spawn_close(m->p);
		m->p = NULL;
		middle_reset(m);
	}
	return rc;
}

/* Read one line of any length (ssh_spawn_readline hands out at most its
 * 4 KiB buffer at a time) into m->line, within timeout_ms. timeout_ms 0:
 * only what has come already, -EAGAIN when the line is not complete yet.
 * A line cut by a timeout is kept (m->nline) and continued next time. */
static int middle_readline(struct middle *m, int timeout_ms, struct ll_err *err)
{
	long long deadline = middle_now_ms() + timeout_ms;
	struct ll_err e = { 0 };
	int rc, left;
	size_t n;

	for (;;) {
		left = (int)(deadline - middle_now_ms());
		if (timeout_ms > 0 && left <= 0)
			left = 1;     /* one more look: what has come already */
		rc = ssh_spawn_readline(m->p, m->line + m->nline,
					MIDDLE_LINE_MAX - m->nline,
					timeout_ms > 0 ? left : 0, &e);
		if (rc == -ETIMEDOUT && timeout_ms == 0)
			return -EAGAIN;
		if (rc < 0) {
			if (err)
				*err = e;
			return rc;
		}
		m->nline += (size_t)rc;
		if (middle_line_complete(m->line, m->nline, rc, MIDDLE_LINE_MAX)) {
			n = m->nline;
			m->nline = 0;
			return (int)n;
		}
	}
}

/* A read or write on the attach process failed with rc: the process ended
 * (-ENODATA: the bridge stopped, the session kept) or the session failed. */
static int middle_io_failed(struct middle *m, int rc, struct ll_err *err)
{
	if (rc == -ENODATA) {
		char why[LL_ERR_MAX];

		snprintf(why, sizeof(why), "%s", err ? err->msg : "");
		middle_detach(m);
		return ll_err_set(err, -ENODATA, "middle %s: the bridge stopped (%.300s)",
				  ssh_name(m->s), why);
	}
	return middle_fail(m, rc);
}

/* Read the next reply line within timeout_ms (0: -EAGAIN unless it has
 * come) and say which request it answers (*kind). Length or -errno. */
static int middle_next_reply(struct middle *m, int timeout_ms,
			     enum middle_req *kind, struct ll_err *err)
{
	int rc = middle_readline(m, timeout_ms, err);

	if (rc == -EAGAIN)
		return rc;
	if (rc < 0)
		return middle_io_failed(m, rc, err);
	*kind = middle_inflight_pop(&m->q);
	if (*kind == MIDDLE_REQ_GET)
		m->get_ms = 0;
	return rc;
}

int middle_set_start(struct middle *m, const char *if_a, const char *if_b,
		     const char *engine, struct ll_err *err)
{
	char qa[4 * IF_NAMESIZE + 4], qb[4 * IF_NAMESIZE + 4];

	if (!if_a || !if_b || !*if_a || !*if_b || strlen(if_a) >= IF_NAMESIZE ||
	    strlen(if_b) >= IF_NAMESIZE || !strcmp(if_a, if_b))
		return ll_err_set(err, -EINVAL,
				  "bridge ports '%s,%s': two different interface names of 1..%d characters",
				  if_a ? if_a : "", if_b ? if_b : "", IF_NAMESIZE - 1);
	if (!engine || (strcmp(engine, "auto") && strcmp(engine, "kernel") &&
			strcmp(engine, "user")))
		return ll_err_set(err, -EINVAL, "engine '%s': auto, kernel or user",
				  engine ? engine : "");
	if (tccmd_quote(if_a, qa, sizeof(qa)) < 0 || tccmd_quote(if_b, qb, sizeof(qb)) < 0)
		return ll_err_set(err, -EINVAL, "bridge ports '%s,%s': cannot quote", if_a, if_b);
	snprintf(m->cmd, sizeof(m->cmd), "linklab bridge %s %s --engine %s --stdin-lease",
		 qa, qb, engine);
	snprintf(m->engine, sizeof(m->engine), "%s", engine);
	return 0;
}

const char *middle_start_engine(const struct middle *m)
{
	return m && m->engine[0] ? m->engine : NULL;
}

int middle_attach(struct middle *m, struct middle_state *st,
		  struct ll_err *err)
{
	struct ll_err e = { 0 };
	int rc;

	if (m->lost)
		return ll_err_set(err, -ENOTCONN, "middle %s: session lost", ssh_name(m->s));
	middle_detach(m);
	rc = ssh_spawn(m->s, m->cmd, &m->p, err);
	if (rc < 0) {
		m->p = NULL;
		return middle_fail(m, rc);
	}
	rc = middle_readline(m, MIDDLE_ATTACH_MS, &e);
	if (rc == -ENODATA) {
		ssh_spawn_close(m->p);
		m->p = NULL;
		if (strstr(e.msg, "no linklab bridge") && !m->engine[0])
			return ll_err_set(err, -ESRCH, "middle %s: no linklab bridge runs there",
					  ssh_name(m->s));
		/* sh: "linklab: not found", bash: "linklab: command not found"
		 * (a started bridge's own errors may say "not found" too) */
		if (m->engine[0] ? strstr(e.msg, "linklab: not found") ||
				   strstr(e.msg, "linklab: command not found")
				 : strstr(e.msg, "not found") != NULL)
			return ll_err_set(err, -ENOENT,
					  "middle %s: linklab not found on its PATH (%.200s)",
					  ssh_name(m->s), e.msg);
		{
			/* the remote command's own words, without ssh's prefix */
			const char *why = strstr(e.msg, "command ended: ");

			why = why ? why + strlen("command ended: ") : e.msg;
			return ll_err_set(err, -EPROTO, "middle %s: %s%.300s", ssh_name(m->s),
					  m->engine[0] ? "starting the bridge: " : "", why);
		}
	}
	if (rc < 0) {
		if (err)
			*err = e;
		return middle_fail(m, rc);
	}
	/* the first line is STATE itself (or an error reply) */
	if (strstr(m->line, "\"ok\""))
		rc = middle_parse_reply(m->line, st, err);
	else
		rc = middle_parse_state(m->line, st, err);
	if (rc < 0) {
		ssh_spawn_close(m->p);
		m->p = NULL;
		ll_err_prefix(err, "middle %s: ", ssh_name(m->s));
	}
	return rc;
}

bool middle_attached(const struct middle *m)
{
	return m && m->p && !m->lost;
}

bool middle_lost(const struct middle *m)
{
	return m && m->lost;
}

/* Attached and the session alive, else -ENOTCONN. */
static int middle_usable(struct middle *m, struct ll_err *err)
{
	if (m->lost)
		return ll_err_set(err, -ENOTCONN, "middle %s: session lost", ssh_name(m->s));
	if (!m->p)
		return ll_err_set(err, -ENOTCONN, "middle %s: not attached to a bridge",
				  ssh_name(m->s));
	return 0;
}

/* Send one request line of this kind (noted in m->q before it leaves). */
static int middle_send(struct middle *m, const char *req, enum middle_req kind,
		       int timeout_ms, struct ll_err *err)
{
	int rc = middle_inflight_push(&m->q, kind);

	if (rc < 0)
		return ll_err_set(err, rc, "middle %s: %d requests wait for replies",
				  ssh_name(m->s), m->q.n);
	rc = ssh_spawn_write(m->p, req, strlen(req), timeout_ms, err);
	if (rc == 0)
		rc = ssh_spawn_write(m->p, "\n", 1, timeout_ms, err);
	/* a line cut half-way leaves the stream unusable: a failed write
	 * fails the session (middle_fail) */
	return rc < 0 ? middle_io_failed(m, rc, err) : 0;
}

/* Read replies until the one to the oldest waiting request of kind want,
 * within timeout_ms (0: never wait, -EAGAIN); replies to earlier requests
 * are read and dropped. Its length, or -errno. */
static int middle_wait_reply(struct middle *m, enum middle_req want,
			     int timeout_ms, struct ll_err *err)
{
	long long deadline = middle_now_ms() + timeout_ms;
	enum middle_req kind = MIDDLE_REQ_NONE;
	int rc, left;

	for (;;) {
		left = (int)(deadline - middle_now_ms());
		if (timeout_ms > 0 && left <= 0)
			left = 1;
		rc = middle_next_reply(m, timeout_ms > 0 ? left : 0, &kind, err);
		if (rc < 0)
			return rc;
		if (kind == want)
			return rc;
		/* an earlier request's reply (a get overtaken by a set), or
		 * a line nobody asked for: dropped */
	}
}

int middle_get_send(struct middle *m, struct ll_err *err)
{
	int rc = middle_usable(m, err);

	if (rc < 0)
		return rc;
	if (middle_inflight_has(&m->q, MIDDLE_REQ_GET))
		return ll_err_set(err, -EALREADY, "middle %s: a get waits for its reply",
				  ssh_name(m->s));
	rc = middle_send(m, "{\"op\":\"get\"}", MIDDLE_REQ_GET, MIDDLE_SEND_MS, err);
	if (rc == 0)
		m->get_ms = middle_now_ms();
	return rc;
}

long middle_get_wait_ms(const struct middle *m)
{
	if (!m || !middle_inflight_has(&m->q, MIDDLE_REQ_GET))
		return -1;
	return (long)(middle_now_ms() - m->get_ms);
}

int middle_fd(const struct middle *m)
{
	return m && m->s ? ssh_fd(m->s) : -1;
}

/* The waiting get's reply within timeout_ms (0: never wait). */
static int middle_get_take(struct middle *m, int timeout_ms,
			   struct middle_state *st, struct ll_err *err)
{
	long waited;
	int rc = middle_usable(m, err);

	if (rc < 0)
		return rc;
	if (!middle_inflight_has(&m->q, MIDDLE_REQ_GET))
		return ll_err_set(err, -ENOENT, "middle %s: no get waits for a reply",
				  ssh_name(m->s));
	rc = middle_wait_reply(m, MIDDLE_REQ_GET, timeout_ms, err);
	if (rc == -EAGAIN) {
		waited = middle_get_wait_ms(m);
		if (waited < MIDDLE_LOST_MS)
			return ll_err_set(err, -EAGAIN, "middle %s: no reply yet (%ld ms)",
					  ssh_name(m->s), waited);
		ll_err_set(err, -ETIMEDOUT, "middle %s: no reply within %d s",
			   ssh_name(m->s), MIDDLE_LOST_MS / 1000);
		return middle_fail(m, -ETIMEDOUT);
	}
	if (rc < 0)
		return rc;
	return middle_parse_reply(m->line, st, err);
}

int middle_get_poll(struct middle *m, struct middle_state *st,
		    struct ll_err *err)
{
	return middle_get_take(m, 0, st, err);
}

int middle_get(struct middle *m, struct middle_state *st, struct ll_err *err)
{
	int rc = middle_usable(m, err);

	if (rc == 0 && !middle_inflight_has(&m->q, MIDDLE_REQ_GET))
		rc = middle_get_send(m, err);
	if (rc < 0)
		return rc;
	return middle_get_take(m, MIDDLE_REQ_MS, st, err);
}

int middle_set(struct middle *m, const struct impair *ab,
	       const struct impair *ba, struct middle_state *st,
	       struct ll_err *err)
{
	char *req;
	long waited;
	int rc = middle_usable(m, err);

	if (rc < 0)
		return rc;
	waited = middle_get_wait_ms(m);
	if (waited >= MIDDLE_SLOW_MS)
		return ll_err_set(err, -EBUSY,
				  "middle %s: not answering (no reply for %ld s): not sent",
				  ssh_name(m->s), waited / 1000);
	req = middle_set_request(ab, ba);
	if (!req)
		return ll_err_set(err, -ENOMEM, "middle: out of memory");
	rc = middle_send(m, req, MIDDLE_REQ_SET, MIDDLE_REQ_MS, err);
	free(req);
	/* a get sent before is answered first: middle_wait_reply drops it */
	if (rc == 0)
		rc = middle_wait_reply(m, MIDDLE_REQ_SET, MIDDLE_REQ_MS, err);
	if (rc < 0)
		return rc;
	return middle_parse_reply(m->line, st, err);
}

void middle_detach(struct middle *m)
{
	if (m && m->p) {
		ssh_spawn_close(m->p);
		m->p = NULL;
	}
	if (m)
		middle_reset(m);
}

const char *middle_name(const struct middle *m)
{
	return m && m->s ? ssh_name(m->s) : "";
}

void middle_close(struct middle *m)
{
	if (!m)
		return;
	middle_detach(m);
	ssh_close(m->s);
	free(m->line);
	free(m);
}

int middle_parse_status(const char *out, const char *errtext, int status,
			struct middle_state *st, struct ll_err *err)
{
	const char *e = errtext ? errtext : "";
	char first[200], safe[4 * 200 + 1];
	cJSON *o;
	int rc;

	/* the shell's words for a command it cannot find (sh: "linklab: not
	 * found", bash: "linklab: command not found"), exit 127 */
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(e, "\n"), e);
	if (status == 127 || strstr(e, "linklab: not found") ||
	    strstr(e, "linklab: command not found"))
		return ll_err_set(err, -ENOENT, "linklab not found on its PATH (%.200s)",
				  first[0] ? text_sanitize(first, safe, sizeof(safe)) : "exit 127");
	if (status != 0) {
		/* -J: {"error": FIRST, "errors": [ALL]} on stdout; else stderr */
		const cJSON *m;

		o = cJSON_Parse(out ? out : "");
		m = cJSON_GetObjectItemCaseSensitive(o, "error");
		if (cJSON_IsString(m))
			snprintf(first, sizeof(first), "%s", m->valuestring);
		cJSON_Delete(o);
		if (strstr(first, "no linklab bridge") || strstr(e, "no linklab bridge"))
			return ll_err_set(err, -ESRCH, "no linklab bridge runs there");
		return ll_err_set(err, -EPROTO, "linklab bridge --status: exit %d: %.300s",
				  status, first[0] ? text_sanitize(first, safe, sizeof(safe)) :
				  "(no message)");
	}
	rc = middle_parse_state(out, st, err);
	return rc;
}

int middle_status(struct middle *m, struct middle_state *st, struct ll_err *err)
{
	char *out = NULL, *etext = NULL;
	int status = -1, rc;

	if (m->lost)
		return ll_err_set(err, -ENOTCONN, "middle %s: session lost", ssh_name(m->s));
	rc = ssh_exec(m->s, "linklab bridge --status -J", &out, &etext, &status,
		      MIDDLE_REQ_MS, err);
	if (rc < 0) {
		free(out);
		free(etext);
		return middle_fail(m, rc);
	}
	rc = middle_parse_status(out, etext, status, st, err);
	free(out);
	free(etext);
	if (rc < 0)
		ll_err_prefix(err, "middle %s: ", ssh_name(m->s));
	return rc;
}
