/* SPDX-License-Identifier: MIT */
/* middle.c - the middle box behind the console: an SSH session and one
 * `linklab bridge --attach` process on it (the lease), STATE parsing and
 * set/get requests (protocol in middle.h). */
#include "linklab/middle.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/ssh.h"

#define MIDDLE_ATTACH_MS 10000
#define MIDDLE_REQ_MS 5000
#define MIDDLE_LINE_MAX 65536

struct middle {
	struct ssh_session *s;
	struct ssh_proc *p;           /* the attach process, NULL = detached */
	bool lost;                    /* the session failed */
	char *line;                   /* reply buffer (MIDDLE_LINE_MAX) */
};

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
	rc = ssh_open(&m->s, t, timeout_ms > 0 ? timeout_ms : 10000, err);
	if (rc < 0) {
		free(m->line);
		free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* A failure of the session (not of the remote command). */
static int middle_fail(struct middle *m, int rc)
{
	if (rc == -EIO || rc == -ETIMEDOUT || rc == -ENOTCONN) {
		m->lost = true;
		ssh_spawn_close(m->p);
		m->p = NULL;
	}
	return rc;
}

/* Read one line of any length (ssh_spawn_readline hands out at most its
 * 4 KiB buffer at a time) into m->line. */
static int middle_readline(struct middle *m, int timeout_ms, struct ll_err *err)
{
	size_t n = 0;
	int rc;

	for (;;) {
		rc = ssh_spawn_readline(m->p, m->line + n, MIDDLE_LINE_MAX - n,
					timeout_ms, err);
		if (rc < 0)
			return rc;
		n += (size_t)rc;
		/* a full 4 KiB chunk without its newline: the line goes on */
		if (rc < 4096 || n + 1 >= MIDDLE_LINE_MAX)
			return (int)n;
		{
			/* complete after all if it parses (exactly 4 KiB) */
			cJSON *o = cJSON_Parse(m->line);

			if (o) {
				cJSON_Delete(o);
				return (int)n;
			}
		}
	}
}

int middle_attach(struct middle *m, struct middle_state *st,
		  struct ll_err *err)
{
	struct ll_err e = { 0 };
	int rc;

	if (m->lost)
		return ll_err_set(err, -ENOTCONN, "middle %s: session lost", ssh_name(m->s));
	middle_detach(m);
	rc = ssh_spawn(m->s, "linklab bridge --attach", &m->p, err);
	if (rc < 0) {
		m->p = NULL;
		return middle_fail(m, rc);
	}
	rc = middle_readline(m, MIDDLE_ATTACH_MS, &e);
	if (rc == -ENODATA) {
		ssh_spawn_close(m->p);
		m->p = NULL;
		if (strstr(e.msg, "no linklab bridge"))
			return ll_err_set(err, -ESRCH, "middle %s: no linklab bridge runs there",
					  ssh_name(m->s));
		if (strstr(e.msg, "not found"))
			return ll_err_set(err, -ENOENT,
					  "middle %s: linklab not found on its PATH (%.200s)",
					  ssh_name(m->s), e.msg);
		{
			/* the remote command's own words, without ssh's prefix */
			const char *why = strstr(e.msg, "command ended: ");

			why = why ? why + strlen("command ended: ") : e.msg;
			return ll_err_set(err, -EPROTO, "middle %s: %.300s", ssh_name(m->s),
					  why);
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

/* Send one request line, read one reply. */
static int middle_request(struct middle *m, const char *req,
			  struct middle_state *st, struct ll_err *err)
{
	int rc;

	if (m->lost)
		return ll_err_set(err, -ENOTCONN, "middle %s: session lost", ssh_name(m->s));
	if (!m->p)
		return ll_err_set(err, -ENOTCONN, "middle %s: not attached to a bridge",
				  ssh_name(m->s));
	rc = ssh_spawn_write(m->p, req, strlen(req), MIDDLE_REQ_MS, err);
	if (rc == 0)
		rc = ssh_spawn_write(m->p, "\n", 1, MIDDLE_REQ_MS, err);
	if (rc == 0)
		rc = middle_readline(m, MIDDLE_REQ_MS, err);
	if (rc == -ENODATA) {
		/* the attach process ended: the bridge stopped */
		char why[LL_ERR_MAX];

		snprintf(why, sizeof(why), "%s", err ? err->msg : "");
		ssh_spawn_close(m->p);
		m->p = NULL;
		return ll_err_set(err, -ENODATA, "middle %s: the bridge stopped (%.300s)",
				  ssh_name(m->s), why);
	}
	if (rc < 0)
		return middle_fail(m, rc);
	return middle_parse_reply(m->line, st, err);
}

int middle_get(struct middle *m, struct middle_state *st, struct ll_err *err)
{
	return middle_request(m, "{\"op\":\"get\"}", st, err);
}

int middle_set(struct middle *m, const struct impair *ab,
	       const struct impair *ba, struct middle_state *st,
	       struct ll_err *err)
{
	char *req = middle_set_request(ab, ba);
	int rc;

	if (!req)
		return ll_err_set(err, -ENOMEM, "middle: out of memory");
	rc = middle_request(m, req, st, err);
	free(req);
	return rc;
}

void middle_detach(struct middle *m)
{
	if (m && m->p) {
		ssh_spawn_close(m->p);
		m->p = NULL;
	}
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
