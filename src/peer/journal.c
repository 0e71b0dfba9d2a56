/* SPDX-License-Identifier: MIT */
/* journal.c - on-disk record of each interface's original root qdisc
 * (cJSON), keyed by network-namespace inode and ifindex. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static char *to_json(const struct journal_entry *e)
{
	char hex[2 * JOURNAL_OPTS_MAX + 1];
	char num[32];
	cJSON *o = cJSON_CreateObject();
	char *s;
	size_t i;

	if (!o)
		return NULL;
	for (i = 0; i < e->optlen && i < JOURNAL_OPTS_MAX; i++)
		snprintf(hex + 2 * i, 3, "%02x", e->opts[i]);
	hex[2 * i] = '\0';
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
	s = cJSON_Print(o);
	cJSON_Delete(o);
	return s;
}

static int from_json(const char *text, struct journal_entry *e)
{
	cJSON *o = cJSON_Parse(text), *v;
	const char *hex;
	size_t i, n;
	int rc = -EINVAL;

	memset(e, 0, sizeof(*e));
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
	hex = v->valuestring;
	n = strlen(hex);
	if (n % 2 || n / 2 > JOURNAL_OPTS_MAX)
		goto out;
	for (i = 0; i < n / 2; i++) {
		unsigned b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			goto out;
		e->opts[i] = (unsigned char)b;
	}
	e->optlen = n / 2;
	v = cJSON_GetObjectItemCaseSensitive(o, "ifb");
	if (cJSON_IsString(v))
		snprintf(e->ifb, sizeof(e->ifb), "%s", v->valuestring);
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
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || n > 65536 ||
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

int journal_set_ifb(uint64_t netns, int ifindex, const char *ifb,
		    struct ll_err *err)
{
	struct journal_entry e;
	char path[512], tmp[560];
	int rc;

	rc = journal_lookup(netns, ifindex, &e, err);
	if (rc < 0)
		return rc;
	snprintf(e.ifb, sizeof(e.ifb), "%s", ifb ? ifb : "");
	entry_path(path, sizeof(path), netns, ifindex);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	rc = write_tmp(&e, tmp, err);
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
