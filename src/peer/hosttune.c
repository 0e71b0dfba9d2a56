/* SPDX-License-Identifier: MIT */
/* hosttune.c - offloads (ethtool ioctls) and TCP sysctls (/proc/sys) of this
 * host, with a journal of originals; parsers shared with the remote side. */
#include "linklab/peer/hosttune.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const off_names[HOSTTUNE_NOFF] = { "tso", "gso", "gro" };
static const char *const off_ethtool[HOSTTUNE_NOFF] = {
	"tcp-segmentation-offload", "generic-segmentation-offload",
	"generic-receive-offload" };
static const unsigned off_get[HOSTTUNE_NOFF] = { ETHTOOL_GTSO, ETHTOOL_GGSO, ETHTOOL_GGRO };
static const unsigned off_set[HOSTTUNE_NOFF] = { ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO };
static const char *const sc_names[HOSTTUNE_NSYSCTL] = {
	"net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem", "net.ipv4.tcp_adv_win_scale",
	"net.ipv4.tcp_congestion_control" };

const char *hosttune_offload_name(int i)
{
	return i >= 0 && i < HOSTTUNE_NOFF ? off_names[i] : NULL;
}

int hosttune_offload_index(const char *name)
{
	int i;

	for (i = 0; name && i < HOSTTUNE_NOFF; i++)
		if (strcmp(name, off_names[i]) == 0)
			return i;
	return -1;
}

const char *hosttune_sysctl_name(int i)
{
	return i >= 0 && i < HOSTTUNE_NSYSCTL ? sc_names[i] : NULL;
}

int hosttune_sysctl_index(const char *name)
{
	int i;

	for (i = 0; name && i < HOSTTUNE_NSYSCTL; i++) {
		const char *dot = strrchr(sc_names[i], '.');

		if (strcmp(name, sc_names[i]) == 0 || strcmp(name, dot + 1) == 0)
			return i;
	}
	return -1;
}

static int parse_long(const char **p, long long *v)
{
	char *end;

	while (**p == ' ' || **p == ',' || **p == '\t')
		(*p)++;
	if (!**p)
		return -1;
	errno = 0;
	*v = strtoll(*p, &end, 10);
	if (errno || end == *p)
		return -1;
	*p = end;
	return 0;
}

int hosttune_sysctl_check(int i, const char *value, char *out, size_t len,
		      struct ll_err *err)
{
	const char *p = value ? value : "";
	long long a, b, c;

	switch (i) {
	case 0: case 1:
		if (parse_long(&p, &a) < 0 || *p || a < 1 || a > 2147483647LL)
			return ll_err_set(err, -EINVAL, "%s: \"%s\" is not a byte count 1..2147483647",
					  sc_names[i], value ? value : "");
		snprintf(out, len, "%lld", a);
		return 0;
	case 2: case 3:
		if (parse_long(&p, &a) < 0 || parse_long(&p, &b) < 0 ||
		    parse_long(&p, &c) < 0 || *p || a < 1 || a > b || b > c ||
		    c > 2147483647LL)
			return ll_err_set(err, -EINVAL,
					  "%s: \"%s\" must be three byte counts \"min default max\", min <= default <= max (tcp(7))",
					  sc_names[i], value ? value : "");
		snprintf(out, len, "%lld %lld %lld", a, b, c);
		return 0;
	case 4:
		if (parse_long(&p, &a) < 0 || *p || a < -31 || a > 31)
			return ll_err_set(err, -EINVAL, "%s: \"%s\" must be -31..31 (tcp(7))",
					  sc_names[i], value ? value : "");
		snprintf(out, len, "%lld", a);
		return 0;
	case 5: {
		size_t n = strlen(p), k;

		if (n < 1 || n > 15)
			return ll_err_set(err, -EINVAL, "%s: \"%s\" is not a congestion control name",
					  sc_names[i], p);
		for (k = 0; k < n; k++)
			if (!islower((unsigned char)p[k]) && !isdigit((unsigned char)p[k]) &&
			    p[k] != '_')
				return ll_err_set(err, -EINVAL,
						  "%s: \"%s\" is not a congestion control name ([a-z0-9_])",
						  sc_names[i], p);
		snprintf(out, len, "%s", p);
		return 0;
	}
	default:
		return ll_err_set(err, -EINVAL,
				  "unknown sysctl (linklab sets net.core.rmem_max, net.core.wmem_max, net.ipv4.tcp_rmem, net.ipv4.tcp_wmem, net.ipv4.tcp_adv_win_scale, net.ipv4.tcp_congestion_control)");
	}
}

int hosttune_other_netns(int have_core, int have_init_only)
{
	return !have_core ? -1 : !have_init_only;
}

/* True if word is one of the blank-separated words of list. */
static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while (n && (p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

int hosttune_sysctl_precheck(const struct sysctl_state *s, int i, const char *value,
			     struct ll_err *err)
{
	if (i < 0 || i >= HOSTTUNE_NSYSCTL)
		return hosttune_sysctl_check(i, value, NULL, 0, err);
	if (!s->v[i][0])
		return ll_err_set(err, -ENOENT, "%s: not on this kernel", sc_names[i]);
	if (i == 5 && s->cc_available[0] && !word_in(s->cc_available, value))
		return ll_err_set(err, -EINVAL,
				  "%s: \"%s\" is not in this kernel's "
				  "tcp_available_congestion_control (%s); load its module "
				  "first (modprobe tcp_%s)", sc_names[i], value,
				  s->cc_available, value);
	if (i == 5 && s->other_netns == 1 && s->cc_allowed[0] &&
	    !word_in(s->cc_allowed, value))
		return ll_err_set(err, -EPERM,
				  "%s: \"%s\" is not in tcp_allowed_congestion_control (%s): "
				  "in a network namespace other than the host's the kernel "
				  "sets only those; add it there on the host first", sc_names[i],
				  value, s->cc_allowed);
	return 0;
}

int hosttune_parse_ethtool_k(const char *text, struct offload_state *o,
			 struct ll_err *err)
{
	int i, found = 0;

	for (i = 0; i < HOSTTUNE_NOFF; i++) {
		char key[64];
		const char *at;

		o->v[i] = -1;
		snprintf(key, sizeof(key), "\n%s: ", off_ethtool[i]);
		at = text ? strstr(text, key) : NULL;
		if (!at && text && strncmp(text, key + 1, strlen(key + 1)) == 0)
			at = text - 1;
		if (!at)
			continue;
		at += strlen(key);
		if (strncmp(at, "on", 2) == 0)
			o->v[i] = 1;
		else if (strncmp(at, "off", 3) == 0)
			o->v[i] = 0;
		found++;
	}
	if (!found)
		return ll_err_set(err, -EINVAL, "ethtool -k: no tso/gso/gro lines in its output");
	return 0;
}

int hosttune_parse_jline(const char *line, struct hosttune_jline *out)
{
	char a[64], b[16], c[16];
	const char *v;

	memset(out, 0, sizeof(*out));
	if (sscanf(line, "offload %15s %15s %15s", a, b, c) == 3) {
		out->kind = 'o';
		snprintf(out->dev, sizeof(out->dev), "%s", a);
		out->idx = hosttune_offload_index(b);
		out->on = strcmp(c, "on") == 0 ? 1 : strcmp(c, "off") == 0 ? 0 : -1;
		return out->idx >= 0 && out->on >= 0 ? 0 : -EINVAL;
	}
	if (strncmp(line, "sysctl ", 7) == 0 && sscanf(line + 7, "%63s", a) == 1 &&
	    hosttune_sysctl_index(a) >= 0) {
		out->kind = 's';
		out->idx = hosttune_sysctl_index(a);
		v = line + 7 + strlen(a);
		while (*v == ' ')
			v++;
		snprintf(out->value, sizeof(out->value), "%.*s", (int)strcspn(v, "\n"), v);
		return out->value[0] ? 0 : -EINVAL;
	}
	return -EINVAL;
}

/* ---- this host ---------------------------------------------------------- */

static void journal_file(char *buf, size_t len)
{
	struct stat st;
	const char *dir = getenv("LINKLAB_RUN_DIR");

	if (stat("/proc/self/ns/net", &st) != 0)
		st.st_ino = 0;
	snprintf(buf, len, "%s/tune-%llu.txt", dir && *dir ? dir : "/run/linklab",
		 (unsigned long long)st.st_ino);
}

/* Append "line" unless a line with the same key (all but the value) is
 * there already: the first original wins. */
static int journal_add(const char *key, const char *value, struct ll_err *err)
{
	char path[512], dir[512], *slash, buf[256];
	FILE *f;

	journal_file(path, sizeof(path));
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		mkdir(dir, 0700);
	}
	f = fopen(path, "r");
	if (f) {
		while (fgets(buf, sizeof(buf), f))
			if (strncmp(buf, key, strlen(key)) == 0 && buf[strlen(key)] == ' ') {
				fclose(f);
				return 0;
			}
		fclose(f);
	}
	f = fopen(path, "a");
	if (!f)
		return ll_err_set(err, -errno, "tune journal %s: %s", path, strerror(errno));
	fprintf(f, "%s %s\n", key, value);
	if (fclose(f) != 0)
		return ll_err_set(err, -EIO, "tune journal %s: write failed", path);
	return 0;
}

static int eth_ioctl(int fd, const char *dev, unsigned cmd, uint32_t *val)
{
	struct ethtool_value ev = { .cmd = cmd, .data = val ? *val : 0 };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&ev;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		return -errno;
	if (val)
		*val = ev.data;
	return 0;
}


/* The feature-bit interface (ETHTOOL_GFEATURES/SFEATURES, as ethtool(8)
 * uses): the legacy ETHTOOL_[GS]TSO misses newer TSO bits (e.g.
 * tx-tcp-accecn-segmentation), which ethtool -k still counts as "tso".
 * Groups as ethtool -k shows them: tso = every tx-tcp*segmentation bit,
 * gso = tx-generic-segmentation, gro = rx-gro. */
static bool in_group(int g, const char *name)
{
	size_t n = strlen(name);

	switch (g) {
	case HOSTTUNE_TSO:
		return strncmp(name, "tx-tcp", 6) == 0 && n > 12 &&
		       strcmp(name + n - 12, "segmentation") == 0;
	case HOSTTUNE_GSO:
		return strcmp(name, "tx-generic-segmentation") == 0;
	default:
		return strcmp(name, "rx-gro") == 0;
	}
}

struct featset {
	uint32_t n;
	char *names;                       /* n x ETH_GSTRING_LEN */
	struct ethtool_gfeatures *g;
};

static void featset_free(struct featset *f)
{
	free(f->names);
	free(f->g);
	memset(f, 0, sizeof(*f));
}

static int feat_ioctl(int fd, const char *dev, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

static int featset_read(int fd, const char *dev, struct featset *f)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t buf[1];
	} si;
	struct ethtool_gstrings *gs;
	uint32_t blocks;
	int rc;

	memset(f, 0, sizeof(*f));
	memset(&si, 0, sizeof(si));
	si.hdr.cmd = ETHTOOL_GSSET_INFO;
	si.hdr.sset_mask = 1ULL << ETH_SS_FEATURES;
	rc = feat_ioctl(fd, dev, &si);
	if (rc < 0)
		return rc;
	if (!(si.hdr.sset_mask & (1ULL << ETH_SS_FEATURES)) || si.buf[0] == 0 ||
	    si.buf[0] > 4096)
		return -EOPNOTSUPP;
	f->n = si.buf[0];
	gs = calloc(1, sizeof(*gs) + (size_t)f->n * ETH_GSTRING_LEN);
	blocks = (f->n + 31) / 32;
	f->g = calloc(1, sizeof(*f->g) + blocks * sizeof(f->g->features[0]));
	if (!gs || !f->g) {
		free(gs);
		featset_free(f);
		return -ENOMEM;
	}
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_FEATURES;
	gs->len = f->n;
	rc = feat_ioctl(fd, dev, gs);
	if (rc == 0) {
		f->names = malloc((size_t)f->n * ETH_GSTRING_LEN);
		if (f->names)
			memcpy(f->names, gs->data, (size_t)f->n * ETH_GSTRING_LEN);
		else
			rc = -ENOMEM;
	}
	free(gs);
	if (rc == 0) {
		f->g->cmd = ETHTOOL_GFEATURES;
		f->g->size = blocks;
		rc = feat_ioctl(fd, dev, f->g);
	}
	if (rc < 0)
		featset_free(f);
	return rc;
}

static const char *feat_name(const struct featset *f, uint32_t i, char *buf)
{
	memcpy(buf, f->names + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
	buf[ETH_GSTRING_LEN] = '\0';
	return buf;
}

/* o->v[g]: 1 if any bit of the group is active, 0 if none, -1 if the
 * device has none of them. */
static void featset_state(const struct featset *f, struct offload_state *o)
{
	char nb[ETH_GSTRING_LEN + 1];
	uint32_t i;
	int g;

	for (g = 0; g < HOSTTUNE_NOFF; g++)
		o->v[g] = -1;
	for (i = 0; i < f->n; i++) {
		uint32_t bit = 1u << (i % 32);
		const struct ethtool_get_features_block *b = &f->g->features[i / 32];

		feat_name(f, i, nb);
		for (g = 0; g < HOSTTUNE_NOFF; g++)
			if (in_group(g, nb)) {
				if (o->v[g] < 0)
					o->v[g] = 0;
				if (b->active & bit)
					o->v[g] = 1;
			}
	}
}

/* Request want for every changeable bit of each group given. */
static int featset_set(int fd, const char *dev, const struct featset *f,
		       const struct offload_state *want)
{
	uint32_t blocks = (f->n + 31) / 32, i;
	struct ethtool_sfeatures *sf;
	char nb[ETH_GSTRING_LEN + 1];
	int rc, g;

	sf = calloc(1, sizeof(*sf) + blocks * sizeof(sf->features[0]));
	if (!sf)
		return -ENOMEM;
	sf->cmd = ETHTOOL_SFEATURES;
	sf->size = blocks;
	for (i = 0; i < f->n; i++) {
		uint32_t bit = 1u << (i % 32);

		feat_name(f, i, nb);
		for (g = 0; g < HOSTTUNE_NOFF; g++)
			if (want->v[g] >= 0 && in_group(g, nb) &&
			    (f->g->features[i / 32].available & bit)) {
				sf->features[i / 32].valid |= bit;
				if (want->v[g])
					sf->features[i / 32].requested |= bit;
			}
	}
	rc = feat_ioctl(fd, dev, sf);
	free(sf);
	return rc < 0 ? rc : 0;
}

int hosttune_local_offload_get(const char *dev, struct offload_state *o,
			   struct ll_err *err)
{
	int fd, i, rc = 0;

	if (!dev || !*dev || strlen(dev) >= IF_NAMESIZE)
		return ll_err_set(err, -EINVAL, "offload: bad interface name");
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ll_err_set(err, -errno, "offload: socket: %s", strerror(errno));
	{
		struct featset f;
		int r = featset_read(fd, dev, &f);

		if (r == 0) {
			featset_state(&f, o);
			featset_free(&f);
			close(fd);
			return 0;
		}
		if (r == -ENODEV) {
			close(fd);
			return ll_err_set(err, -ENODEV, "offload %s: no such interface", dev);
		}
	}
	for (i = 0; i < HOSTTUNE_NOFF; i++) {
		uint32_t v = 0;
		int r = eth_ioctl(fd, dev, off_get[i], &v);

		o->v[i] = r == 0 ? (v ? 1 : 0) : -1;
		if (r == -ENODEV) {
			rc = ll_err_set(err, -ENODEV, "offload %s: no such interface", dev);
			break;
		}
	}
	close(fd);
	return rc;
}

int hosttune_local_offload_set(const char *dev, const struct offload_state *want,
			   struct ll_err *err)
{
	struct offload_state cur, now;
	int fd, i, rc;

	rc = hosttune_local_offload_get(dev, &cur, err);
	if (rc < 0)
		return rc;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ll_err_set(err, -errno, "offload: socket: %s", strerror(errno));
	for (i = 0; i < HOSTTUNE_NOFF && rc == 0; i++) {
		char key[64];

		if (want->v[i] < 0 || want->v[i] == cur.v[i])
			continue;
		snprintf(key, sizeof(key), "offload %s %s", dev, off_names[i]);
		rc = journal_add(key, cur.v[i] ? "on" : "off", err);
	}
	if (rc == 0) {
		struct featset f;

		if (featset_read(fd, dev, &f) == 0) {
			rc = featset_set(fd, dev, &f, want);
			featset_free(&f);
			if (rc < 0)
				rc = ll_err_set(err, rc, "offload %s: ETHTOOL_SFEATURES: %s", dev,
						strerror(-rc));
			close(fd);
			goto readback;
		}
	}
	for (i = 0; i < HOSTTUNE_NOFF && rc == 0; i++) {
		uint32_t v;
		char key[64];

		if (want->v[i] < 0 || want->v[i] == cur.v[i])
			continue;
		if (cur.v[i] < 0) {
			rc = ll_err_set(err, -ENOTSUP, "offload %s: %s cannot be read on this driver",
					dev, off_names[i]);
			break;
		}
		snprintf(key, sizeof(key), "offload %s %s", dev, off_names[i]);
		rc = journal_add(key, cur.v[i] ? "on" : "off", err);
		if (rc < 0)
			break;
		v = (uint32_t)want->v[i];
		rc = eth_ioctl(fd, dev, off_set[i], &v);
		if (rc < 0)
			rc = ll_err_set(err, rc, "offload %s: set %s %s: %s", dev, off_names[i],
					want->v[i] ? "on" : "off", strerror(-rc));
	}
	close(fd);
readback:
	if (rc < 0)
		return rc;
	rc = hosttune_local_offload_get(dev, &now, err);
	for (i = 0; rc == 0 && i < HOSTTUNE_NOFF; i++)
		if (want->v[i] >= 0 && now.v[i] != want->v[i])
			rc = ll_err_set(err, -EIO, "offload %s: %s is still %s (fixed by the driver?)",
					dev, off_names[i], now.v[i] ? "on" : "off");
	return rc;
}

/* /proc/sys path of sysctl i; i == HOSTTUNE_NSYSCTL (+ 1): the list of
 * available (allowed) congestion controls. */
static void proc_path(int i, char *buf, size_t len)
{
	char *c;

	snprintf(buf, len, "/proc/sys/%s", i < HOSTTUNE_NSYSCTL ? sc_names[i] :
		 i == HOSTTUNE_NSYSCTL ? "net.ipv4.tcp_available_congestion_control" :
		 "net.ipv4.tcp_allowed_congestion_control");
	for (c = buf + 10; *c; c++)
		if (*c == '.')
			*c = '/';
}

/* Read /proc/sys value, whitespace collapsed. */
static int proc_read(int i, char *out, size_t len)
{
	char path[128], raw[256];
	size_t n, o = 0, k;
	int fd;
	ssize_t r;

	proc_path(i, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	out[0] = '\0';
	if (fd < 0)
		return -errno;
	r = read(fd, raw, sizeof(raw) - 1);
	close(fd);
	if (r < 0)
		return -errno;
	n = (size_t)r;
	raw[n] = '\0';
	for (k = 0; k < n && o + 1 < len; k++) {
		if (isspace((unsigned char)raw[k])) {
			if (o && out[o - 1] != ' ')
				out[o++] = ' ';
		} else {
			out[o++] = raw[k];
		}
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	return 0;
}

int hosttune_local_sysctl_get(struct sysctl_state *s, struct ll_err *err)
{
	int i;

	(void)err;
	for (i = 0; i < HOSTTUNE_NSYSCTL; i++)
		proc_read(i, s->v[i], sizeof(s->v[i]));
	proc_read(HOSTTUNE_NSYSCTL, s->cc_available, sizeof(s->cc_available));
	proc_read(HOSTTUNE_NSYSCTL + 1, s->cc_allowed, sizeof(s->cc_allowed));
	s->other_netns = hosttune_other_netns(access("/proc/sys/net/core", F_OK) == 0,
					      access(NETNS_INIT_ONLY, F_OK) == 0);
	return 0;
}

static int proc_write(int i, const char *val, struct ll_err *err)
{
	char path[128], now[64];
	int fd, rc = 0;

	proc_path(i, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return ll_err_set(err, -errno, "sysctl %s: %s", sc_names[i], strerror(errno));
	if (write(fd, val, strlen(val)) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		return ll_err_set(err, rc, "sysctl %s = %s: %s", sc_names[i], val, strerror(-rc));
	proc_read(i, now, sizeof(now));
	if (strcmp(now, val) != 0)
		return ll_err_set(err, -EIO, "sysctl %s: wrote \"%s\", reads back \"%s\"",
				  sc_names[i], val, now);
	return 0;
}

int hosttune_local_sysctl_set(const char *name, const char *value,
			  struct ll_err *err)
{
	int i = hosttune_sysctl_index(name), rc;
	char val[64], cur[64], key[64];

	rc = hosttune_sysctl_check(i, value, val, sizeof(val), err);
	if (rc < 0)
		return rc;
	rc = proc_read(i, cur, sizeof(cur));
	if (rc < 0)
		return ll_err_set(err, rc, "sysctl %s: not on this kernel (%s)", sc_names[i],
				  strerror(-rc));
	if (strcmp(cur, val) == 0)
		return 0;
	snprintf(key, sizeof(key), "sysctl %s", sc_names[i]);
	rc = journal_add(key, cur, err);
	if (rc == 0)
		rc = proc_write(i, val, err);
	return rc;
}

int hosttune_local_restore(struct ll_err *err)
{
	char path[512], line[256], keep[4096] = "";
	FILE *f;
	int rc = 0;

	journal_file(path, sizeof(path));
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct hosttune_jline j;
		int r = 0;

		if (hosttune_parse_jline(line, &j) < 0)
			continue;
		if (j.kind == 's') {
			r = proc_write(j.idx, j.value, err);
			/* a sysctl that is gone or cannot be written (read-only
			 * /proc/sys) never will be: reported once, then dropped,
			 * so clear --all does not fail for ever */
			if (r == -ENOENT || r == -EROFS || r == -EACCES || r == -EPERM ||
			    r == -EINVAL) {
				if (err)
					ll_err_prefix(err, "(record dropped) ");
			} else if (r < 0 && strlen(keep) + strlen(line) < sizeof(keep)) {
				strcat(keep, line);
			}
		} else {
			int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			uint32_t v = (uint32_t)j.on;
			struct offload_state w = { { -1, -1, -1 } };
			struct featset fs;

			w.v[j.idx] = (int8_t)j.on;
			if (fd >= 0) {
				if (featset_read(fd, j.dev, &fs) == 0) {
					r = featset_set(fd, j.dev, &fs, &w);
					featset_free(&fs);
				} else {
					r = eth_ioctl(fd, j.dev, off_set[j.idx], &v);
				}
				close(fd);
			}
			if (r == -ENODEV)
				r = 0;   /* the interface is gone: nothing to restore */
			else if (r < 0)
				ll_err_set(err, r, "offload %s: restore %s: %s", j.dev,
					   off_names[j.idx], strerror(-r));
			if (r < 0 && strlen(keep) + strlen(line) < sizeof(keep))
				strcat(keep, line);
		}
		if (r < 0 && rc == 0)
			rc = r;
	}
	fclose(f);
	if (!keep[0]) {
		unlink(path);
	} else {
		/* only the lines that may still be restored later */
		f = fopen(path, "w");
		if (f) {
			fputs(keep, f);
			fclose(f);
		}
	}
	return rc;
}

int hosttune_op_offload_get(struct peer *p, const char *dev, struct offload_state *o,
			struct ll_err *err)
{
	(void)p;
	return hosttune_local_offload_get(dev, o, err);
}

int hosttune_op_offload_set(struct peer *p, const char *dev,
			const struct offload_state *want, struct ll_err *err)
{
	(void)p;
	return hosttune_local_offload_set(dev, want, err);
}

int hosttune_op_sysctl_get(struct peer *p, struct sysctl_state *s, struct ll_err *err)
{
	(void)p;
	return hosttune_local_sysctl_get(s, err);
}

int hosttune_op_sysctl_set(struct peer *p, const char *name, const char *value,
		       struct ll_err *err)
{
	(void)p;
	return hosttune_local_sysctl_set(name, value, err);
}

int hosttune_op_restore(struct peer *p, struct ll_err *err)
{
	(void)p;
	return hosttune_local_restore(err);
}
