/* SPDX-License-Identifier: MIT */
/* journal.c - on-disk record of each interface's original root qdisc
 * (cJSON), keyed by network-namespace inode and ifindex. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "linklab/peer/journal.h"

const char *journal_dir(void)
{
	const char *d = getenv("LINKLAB_RUN_DIR");

	return d && *d ? d : "/run/linklab";
}

int journal_netns(uint64_t *ino, struct ll_err *err)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st) < 0)
		return ll_err_set(err, -errno, "stat /proc/self/ns/net: %s",
				  strerror(errno));
	*ino = (uint64_t)st.st_ino;
	return 0;
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

uint64_t journal_netns_cookie(void)
{
	uint64_t c = 0;
	socklen_t l = sizeof(c);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &l) < 0 || l != sizeof(c))
		c = 0;
	close(fd);
	return c;
}

static void entry_path(char *buf, size_t len, uint64_t netns, int ifindex)
{
	snprintf(buf, len, "%s/%" PRIu64 "-%d.json", journal_dir(), netns, ifindex);
}

static int ensure_dir(struct ll_err *err)
{
	const char *d = journal_dir();

	if (mkdir(d, 0700) < 0 && errno != EEXIST)
		return ll_err_set(err, -errno, "journal: cannot create %s: %s", d,
				  strerror(errno));
	return 0;
}

static void hex_of(const unsigned char *b, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	out[2 * n] = '\0';
}

static int unhex(const char *hex, unsigned char *out, size_t max, size_t *n)
{
	size_t i, l = strlen(hex);

	if (l % 2 || l / 2 > max)
		return -EINVAL;
	for (i = 0; i < l / 2; i++) {
		unsigned b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -EINVAL;
		out[i] = (unsigned char)b;
	}
	*n = l / 2;
	return 0;
}

/* Part "tc": every object of the tree. */
static cJSON *tree_to_json(const struct nltree *t)
{
	static char hex[2 * NLTREE_OPTS_MAX + 1];
	cJSON *p = cJSON_CreateObject(), *arr;
	char tp[2] = "";
	int i;

	cJSON_AddStringToObject(p, "type", "tc");
	if (t->bad[0])
		cJSON_AddStringToObject(p, "bad", t->bad);
	arr = cJSON_AddArrayToObject(p, "objects");
	for (i = 0; i < t->n; i++) {
		const struct nltree_obj *x = &t->o[i];
		cJSON *o = cJSON_CreateObject();

		tp[0] = x->type;
		cJSON_AddStringToObject(o, "t", tp);
		cJSON_AddStringToObject(o, "kind", x->kind);
		cJSON_AddNumberToObject(o, "parent", x->parent);
		cJSON_AddNumberToObject(o, "handle", x->handle);
		cJSON_AddNumberToObject(o, "info", x->info);
		cJSON_AddNumberToObject(o, "chain", x->chain);
		hex_of(x->opts, x->optlen, hex);
		cJSON_AddStringToObject(o, "opts", hex);
		cJSON_AddItemToArray(arr, o);
	}
	return p;
}

static bool get_u32(const cJSON *o, const char *k, uint32_t *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > 4294967295.0)
		return false;
	*v = (uint32_t)x->valuedouble;
	return true;
}

static int tree_from_json(const cJSON *p, struct nltree *t)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(p, "objects"), *o;
	const cJSON *bad = cJSON_GetObjectItemCaseSensitive(p, "bad");

	memset(t, 0, offsetof(struct nltree, o));
	if (cJSON_IsString(bad))
		snprintf(t->bad, sizeof(t->bad), "%s", bad->valuestring);
	if (!cJSON_IsArray(arr))
		return -EINVAL;
	cJSON_ArrayForEach(o, arr) {
		struct nltree_obj *x;
		const cJSON *tp = cJSON_GetObjectItemCaseSensitive(o, "t");
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kind");
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "opts");
		size_t n = 0;

		if (t->n >= NLTREE_MAX)
			return -EINVAL;
		x = &t->o[t->n];
		memset(x, 0, sizeof(*x));
		if (!cJSON_IsString(tp) || !strchr("qcf", tp->valuestring[0]) ||
		    !tp->valuestring[0] || !cJSON_IsString(k) || !cJSON_IsString(h) ||
		    !get_u32(o, "parent", &x->parent) || !get_u32(o, "handle", &x->handle) ||
		    !get_u32(o, "info", &x->info) || !get_u32(o, "chain", &x->chain) ||
		    unhex(h->valuestring, x->opts, sizeof(x->opts), &n) < 0)
			return -EINVAL;
		x->type = tp->valuestring[0];
		snprintf(x->kind, sizeof(x->kind), "%s", k->valuestring);
		x->optlen = (uint16_t)n;
		t->n++;
	}
	return 0;
}

static char *to_json(const struct journal_entry *e)
{
	char hex[2 * JOURNAL_OPTS_MAX + 1];
	char num[32];
	cJSON *o = cJSON_CreateObject();
	char *s;

	if (!o)
		return NULL;
	hex_of(e->opts, e->optlen < JOURNAL_OPTS_MAX ? e->optlen : JOURNAL_OPTS_MAX, hex);
	/* u64 inode as a string: JSON numbers are doubles */
	snprintf(num, sizeof(num), "%" PRIu64, e->netns);
	cJSON_AddStringToObject(o, "dev", e->dev);
	cJSON_AddNumberToObject(o, "ifindex", e->ifindex);
	cJSON_AddStringToObject(o, "netns", num);
	cJSON_AddStringToObject(o, "kind", e->kind);
	cJSON_AddNumberToObject(o, "handle", e->handle);
	cJSON_AddBoolToObject(o, "default", e->is_default);
	cJSON_AddStringToObject(o, "options", hex);
	if (e->ifb[0])
		cJSON_AddStringToObject(o, "ifb", e->ifb);
	if (e->lost[0])
		cJSON_AddStringToObject(o, "lost", e->lost);
	cJSON_AddNumberToObject(o, "version", 2);
	{
		cJSON *id = cJSON_AddObjectToObject(o, "identity");
		cJSON *ap = cJSON_AddObjectToObject(o, "applied");
		cJSON *parts = cJSON_AddArrayToObject(o, "parts");

		snprintf(num, sizeof(num), "%" PRIu64, e->cookie);
		cJSON_AddStringToObject(id, "cookie", num);
		cJSON_AddStringToObject(id, "mac", e->mac);
		cJSON_AddStringToObject(ap, "kind", e->applied_kind);
		cJSON_AddNumberToObject(ap, "handle", e->applied_handle);
		if (e->has_tree)
			cJSON_AddItemToArray(parts, tree_to_json(&e->tree));
	}
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

static int from_json(const char *text, struct journal_entry *e)
{
	cJSON *o = cJSON_Parse(text), *v;
	size_t n;
	int rc = -EINVAL;

	memset(e, 0, offsetof(struct journal_entry, tree));
	e->tree.n = 0;
	if (!o)
		return -EINVAL;
	v = cJSON_GetObjectItemCaseSensitive(o, "ifindex");
	if (!cJSON_IsNumber(v) || v->valuedouble < 1)
		goto out;
	e->ifindex = v->valueint;
	v = cJSON_GetObjectItemCaseSensitive(o, "netns");
	if (!cJSON_IsString(v))
		goto out;
	e->netns = strtoull(v->valuestring, NULL, 10);
	v = cJSON_GetObjectItemCaseSensitive(o, "dev");
	if (cJSON_IsString(v))
		snprintf(e->dev, sizeof(e->dev), "%s", v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "kind");
	if (!cJSON_IsString(v))
		goto out;
	snprintf(e->kind, sizeof(e->kind), "%s", v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "handle");
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 4294967295.0)
		goto out;
	e->handle = (uint32_t)v->valuedouble;
	v = cJSON_GetObjectItemCaseSensitive(o, "default");
	if (!cJSON_IsBool(v))
		goto out;
	e->is_default = cJSON_IsTrue(v);
	v = cJSON_GetObjectItemCaseSensitive(o, "options");
	if (!cJSON_IsString(v))
		goto out;
	if (unhex(v->valuestring, e->opts, JOURNAL_OPTS_MAX, &n) < 0)
		goto out;
	e->optlen = n;
	v = cJSON_GetObjectItemCaseSensitive(o, "ifb");
	if (cJSON_IsString(v))
		snprintf(e->ifb, sizeof(e->ifb), "%s", v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "lost");
	if (cJSON_IsString(v))
		snprintf(e->lost, sizeof(e->lost), "%s", v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "identity");
	if (cJSON_IsObject(v)) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(v, "cookie");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, "mac");

		if (cJSON_IsString(c))
			e->cookie = strtoull(c->valuestring, NULL, 10);
		if (cJSON_IsString(m))
			snprintf(e->mac, sizeof(e->mac), "%s", m->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "applied");
	if (cJSON_IsObject(v)) {
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(v, "kind");

		if (cJSON_IsString(k))
			snprintf(e->applied_kind, sizeof(e->applied_kind), "%s", k->valuestring);
		if (!get_u32(v, "handle", &e->applied_handle))
			e->applied_handle = 0;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "parts");
	if (v && !cJSON_IsArray(v))
		goto out;
	{
		const cJSON *p;

		cJSON_ArrayForEach(p, v) {
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "type");

			/* parts of other types belong to other engines */
			if (!cJSON_IsString(t) || strcmp(t->valuestring, "tc") != 0)
				continue;
			if (tree_from_json(p, &e->tree) < 0)
				goto out;
			e->has_tree = true;
		}
	}
	rc = 0;
out:
	cJSON_Delete(o);
	return rc;
}

/* Write e as JSON to tmp (fsync'd), the first step of journal_record and
 * journal_set_ifb; tmp is removed again on failure. */
static int write_tmp(const struct journal_entry *e, const char *tmp,
		     struct ll_err *err)
{
	char *s = to_json(e);
	size_t len;
	int fd, rc;

	if (!s)
		return ll_err_set(err, -ENOMEM, "journal: cannot encode entry");
	len = strlen(s);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = ll_err_set(err, -errno, "journal: cannot write %s: %s", tmp,
				strerror(errno));
		free(s);
		return rc;
	}
	if (write(fd, s, len) != (ssize_t)len || fsync(fd) < 0) {
		rc = ll_err_set(err, -EIO, "journal: write %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		free(s);
		return rc;
	}
	close(fd);
	free(s);
	return 0;
}

int journal_record(const struct journal_entry *e, struct ll_err *err)
{
	char path[512], tmp[560];
	int rc;

	if (!e || e->ifindex < 1)
		return ll_err_set(err, -EINVAL, "journal: bad entry");
	rc = ensure_dir(err);
	if (rc < 0)
		return rc;
	entry_path(path, sizeof(path), e->netns, e->ifindex);
	if (access(path, F_OK) == 0)
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	rc = write_tmp(e, tmp, err);
	if (rc < 0)
		return rc;
	/* link() fails with EEXIST if someone recorded first: first one wins */
	if (link(tmp, path) < 0) {
		int e2 = errno;

		unlink(tmp);
		if (e2 == EEXIST)
			return 0;
		return ll_err_set(err, -e2, "journal: cannot create %s: %s", path,
				  strerror(e2));
	}
	unlink(tmp);
	return 1;
}

static int read_file(const char *path, char **out, struct ll_err *err)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	if (!f) {
		if (errno == ENOENT)
			return -ENOENT;
		return ll_err_set(err, -errno, "journal: cannot read %s: %s", path,
				  strerror(errno));
	}
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || n > (1 << 20) ||
	    fseek(f, 0, SEEK_SET) < 0) {
		fclose(f);
		return ll_err_set(err, -EINVAL, "journal: %s is not a journal file", path);
	}
	buf = malloc((size_t)n + 1);
	if (!buf) {
		fclose(f);
		return ll_err_set(err, -ENOMEM, "journal: out of memory");
	}
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return ll_err_set(err, -EIO, "journal: short read on %s", path);
	}
	buf[n] = '\0';
	fclose(f);
	*out = buf;
	return 0;
}

int journal_lookup(uint64_t netns, int ifindex, struct journal_entry *out,
		   struct ll_err *err)
{
	char path[512];
	char *text = NULL;
	int rc;

	entry_path(path, sizeof(path), netns, ifindex);
	rc = read_file(path, &text, err);
	if (rc == -ENOENT)
		return ll_err_set(err, -ENOENT, "journal: no entry for ifindex %d",
				  ifindex);
	if (rc < 0)
		return rc;
	rc = from_json(text, out);
	free(text);
	if (rc < 0 || out->ifindex != ifindex || out->netns != netns)
		return ll_err_set(err, -EINVAL, "journal: %s is damaged", path);
	return 0;
}

int journal_remove(uint64_t netns, int ifindex, struct ll_err *err)
{
	char path[512];

	entry_path(path, sizeof(path), netns, ifindex);
	if (unlink(path) < 0 && errno != ENOENT)
		return ll_err_set(err, -errno, "journal: cannot remove %s: %s", path,
				  strerror(errno));
	return 0;
}

int journal_list(struct journal_entry *out, int max, int *n,
		 struct ll_err *err)
{
	const char *d = journal_dir();
	struct dirent *de;
	DIR *dir;

	*n = 0;
	dir = opendir(d);
	if (!dir) {
		if (errno == ENOENT)
			return 0;
		return ll_err_set(err, -errno, "journal: cannot open %s: %s", d,
				  strerror(errno));
	}
	while ((de = readdir(dir)) && *n < max) {
		char path[768];
		char *text = NULL;
		size_t l = strlen(de->d_name);

		if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0 ||
		    strchr(de->d_name, '/'))
			continue;
		snprintf(path, sizeof(path), "%s/%s", d, de->d_name);
		if (read_file(path, &text, NULL) < 0)
			continue;
		if (from_json(text, &out[*n]) == 0)
			(*n)++;
		free(text);
	}
	closedir(dir);
	return 0;
}

/* Rewrite the entry of (netns, ifindex) through edit, atomically. */
static int rewrite_entry(uint64_t netns, int ifindex,
			 void (*edit)(struct journal_entry *, const void *),
			 const void *arg, struct ll_err *err)
{
	struct journal_entry *e = malloc(sizeof(*e));
	char path[512], tmp[560];
	int rc;

	if (!e)
		return ll_err_set(err, -ENOMEM, "out of memory");
	rc = journal_lookup(netns, ifindex, e, err);
	if (rc < 0) {
		free(e);
		return rc;
	}
	edit(e, arg);
	entry_path(path, sizeof(path), netns, ifindex);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	rc = write_tmp(e, tmp, err);
	free(e);
	if (rc < 0)
		return rc;
	/* atomic replace keeps the first original (copied from the entry) */
	if (rename(tmp, path) < 0) {
		rc = ll_err_set(err, -errno, "journal: cannot replace %s: %s", path,
				strerror(errno));
		unlink(tmp);
		return rc;
	}
	return 0;
}

static void edit_ifb(struct journal_entry *e, const void *arg)
{
	snprintf(e->ifb, sizeof(e->ifb), "%s", arg ? (const char *)arg : "");
}

int journal_set_ifb(uint64_t netns, int ifindex, const char *ifb,
		    struct ll_err *err)
{
	return rewrite_entry(netns, ifindex, edit_ifb, ifb, err);
}

struct applied { const char *kind; uint32_t handle; };

static void edit_applied(struct journal_entry *e, const void *arg)
{
	const struct applied *a = arg;

	snprintf(e->applied_kind, sizeof(e->applied_kind), "%s", a->kind);
	e->applied_handle = a->handle;
}

int journal_set_applied(uint64_t netns, int ifindex, const char *kind,
			uint32_t handle, struct ll_err *err)
{
	struct applied a = { kind ? kind : "", handle };

	return rewrite_entry(netns, ifindex, edit_applied, &a, err);
}

int journal_list_damaged(char (*paths)[JOURNAL_PATH_MAX], int max, int *n,
			 struct ll_err *err)
{
	const char *d = journal_dir();
	struct journal_entry *e;
	struct dirent *de;
	DIR *dir;

	*n = 0;
	dir = opendir(d);
	if (!dir) {
		if (errno == ENOENT)
			return 0;
		return ll_err_set(err, -errno, "journal: cannot open %s: %s", d,
				  strerror(errno));
	}
	e = malloc(sizeof(*e));
	if (!e) {
		closedir(dir);
		return ll_err_set(err, -ENOMEM, "out of memory");
	}
	while ((de = readdir(dir)) && *n < max) {
		char path[JOURNAL_PATH_MAX], *text = NULL;
		size_t l = strlen(de->d_name);
		unsigned long long ns;
		int idx, used = 0;

		/* interface records only: "<netns inode>-<ifindex>.json" */
		if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0 ||
		    sscanf(de->d_name, "%llu-%d.json%n", &ns, &idx, &used) != 2 ||
		    (size_t)used != l)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", d, de->d_name) >= sizeof(path))
			continue;
		if (read_file(path, &text, NULL) == 0 && from_json(text, e) == 0) {
			free(text);
			continue;
		}
		free(text);
		snprintf(paths[(*n)++], JOURNAL_PATH_MAX, "%s", path);
	}
	free(e);
	closedir(dir);
	return 0;
}

int journal_remove_path(const char *path, struct ll_err *err)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return ll_err_set(err, -errno, "journal: cannot remove %s: %s", path,
				  strerror(errno));
	return 0;
}

/* ino is the namespace of path (a /proc/PID/ns/net or a /run/netns name) */
static bool netns_is(const char *path, uint64_t ino)
{
	struct stat st;

	return stat(path, &st) == 0 && (uint64_t)st.st_ino == ino;
}

static bool netns_held_in(const char *dir, const char *suffix, uint64_t ino)
{
	char path[300];
	struct dirent *e;
	bool found = false;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.' || (suffix[0] && (e->d_name[0] < '0' || e->d_name[0] > '9')))
			continue;
		snprintf(path, sizeof(path), "%s/%s%s", dir, e->d_name, suffix);
		found = netns_is(path, ino);
	}
	closedir(d);
	return found;
}

bool journal_netns_alive(uint64_t ino)
{
	return netns_held_in("/run/netns", "", ino) ||
	       netns_held_in("/proc", "/ns/net", ino);
}
