/* SPDX-License-Identifier: MIT */
/* tcjson.c - parse `ip -j` / `tc -j` output (iproute2 6.1) with cJSON. */
#include "linklab/remote/tcjson.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <linux/pkt_sched.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy a string item of obj into buf (truncating); "" if absent. */
static void get_str(const cJSON *obj, const char *key, char *buf, size_t len)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (len == 0)
		return;
	buf[0] = '\0';
	if (cJSON_IsString(it) && it->valuestring)
		snprintf(buf, len, "%s", it->valuestring);
}

/* A number item of obj, or def if absent / not a number. */
static double get_num(const cJSON *obj, const char *key, double def)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(it) ? it->valuedouble : def;
}

/* A non-negative number clamped into u32. */
static uint32_t get_u32(const cJSON *obj, const char *key)
{
	double v = get_num(obj, key, 0);

	if (!(v > 0))
		return 0;
	if (v >= (double)UINT32_MAX)
		return UINT32_MAX;
	return (uint32_t)llround(v);
}

static uint64_t get_u64(const cJSON *obj, const char *key)
{
	double v = get_num(obj, key, 0);

	if (!(v > 0))
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)llround(v);
}

/* Fraction 0..1 as printed by tc's print_percent -> u32 probability. */
static uint32_t frac_to_prob(double f)
{
	if (!(f > 0))
		return 0;
	if (f >= 1.0)
		return UINT32_MAX;
	return (uint32_t)llround(f * (double)UINT32_MAX);
}

static cJSON *parse_array(const char *json, const char *what,
			  struct ll_err *err)
{
	cJSON *root;

	if (!json)
		return NULL;
	root = cJSON_Parse(json);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();

		ll_err_set(err, -EINVAL, "%s: not JSON (near \"%.20s\")", what,
			   at ? at : "?");
		return NULL;
	}
	if (!cJSON_IsArray(root)) {
		cJSON_Delete(root);
		ll_err_set(err, -EINVAL, "%s: expected a JSON array", what);
		return NULL;
	}
	return root;
}

int tcjson_links(const char *json, struct link_list *out, struct ll_err *err)
{
	cJSON *root, *ln;

	memset(out, 0, sizeof(*out));
	root = parse_array(json, "ip -j addr show", err);
	if (!root)
		return -EINVAL;
	cJSON_ArrayForEach(ln, root) {
		struct link_info *l;
		const cJSON *flags, *fl, *ai, *a;

		if (!cJSON_IsObject(ln))
			continue;
		if (out->n >= PEER_MAX_LINKS)
			break;
		l = &out->l[out->n];
		memset(l, 0, sizeof(*l));
		get_str(ln, "ifname", l->name, sizeof(l->name));
		if (!l->name[0])
			continue;
		l->ifindex = (int)get_num(ln, "ifindex", 0);
		l->mtu = get_u32(ln, "mtu");
		get_str(ln, "operstate", l->state, sizeof(l->state));
		get_str(ln, "qdisc", l->qdisc, sizeof(l->qdisc));
		flags = cJSON_GetObjectItemCaseSensitive(ln, "flags");
		cJSON_ArrayForEach(fl, flags) {
			if (cJSON_IsString(fl) && strcmp(fl->valuestring, "UP") == 0)
				l->up = true;
		}
		ai = cJSON_GetObjectItemCaseSensitive(ln, "addr_info");
		cJSON_ArrayForEach(a, ai) {
			char local[48], scope[16];
			int plen;

			get_str(a, "local", local, sizeof(local));
			get_str(a, "scope", scope, sizeof(scope));
			if (!local[0])
				continue;
			if (l->naddrs >= PEER_MAX_ADDRS)
				break;
			/* the local lister's form (libnl nl_addr2str): link-scope
			 * addresses listed too, no "/len" for a full-length
			 * prefix (/32, /128) */
			plen = (int)get_num(a, "prefixlen", -1);
			if (plen == (strchr(local, ':') ? 128 : 32))
				plen = -1;
			if (plen >= 0)
				snprintf(l->addrs[l->naddrs], sizeof(l->addrs[0]),
					 "%s/%d", local, plen);
			else
				snprintf(l->addrs[l->naddrs], sizeof(l->addrs[0]),
					 "%s", local);
			l->naddrs++;
		}
		out->n++;
	}
	cJSON_Delete(root);
	return 0;
}

int tcjson_route_dev(const char *json, char *dev, size_t len,
		     struct ll_err *err)
{
	cJSON *root, *first;
	const cJSON *d;
	int rc = 0;

	root = parse_array(json, "ip -j route get", err);
	if (!root)
		return -EINVAL;
	first = cJSON_GetArrayItem(root, 0);
	d = first ? cJSON_GetObjectItemCaseSensitive(first, "dev") : NULL;
	if (!cJSON_IsString(d) || !d->valuestring[0])
		rc = ll_err_set(err, -ENOENT, "ip -j route get: no \"dev\" in the reply");
	else if (strlen(d->valuestring) >= len)
		rc = ll_err_set(err, -ENOSPC, "ip -j route get: dev name too long");
	else
		snprintf(dev, len, "%s", d->valuestring);
	cJSON_Delete(root);
	return rc;
}

int tcjson_parse_handle(const char *s, uint32_t *h)
{
	char *end;
	unsigned long maj, min = 0;

	if (!s || !*s)
		return -EINVAL;
	if (strcmp(s, "root") == 0) {
		*h = TC_H_ROOT;
		return 0;
	}
	errno = 0;
	maj = strtoul(s, &end, 16);
	if (errno || end == s || *end != ':' || maj > 0xffff)
		return -EINVAL;
	s = end + 1;
	if (*s) {
		min = strtoul(s, &end, 16);
		if (errno || *end || min > 0xffff)
			return -EINVAL;
	}
	*h = (uint32_t)((maj << 16) | min);
	return 0;
}

/* Fill the kind-specific fields of q from "options". */
static void parse_options(struct qdisc_info *q, const cJSON *opt)
{
	const cJSON *o;

	if (!cJSON_IsObject(opt))
		return;
	if (strcmp(q->kind, "tbf") == 0) {
		uint64_t Bps = get_u64(opt, "rate");
		double lat_us = get_num(opt, "lat", -1);

		q->rate = Bps * 8;
		q->burst = get_u32(opt, "burst");
		if (cJSON_GetObjectItemCaseSensitive(opt, "limit"))
			q->limit = get_u32(opt, "limit");
		else if (lat_us >= 0)
			/* q_tbf.c: lat = 1e6 * limit / rate - burst time */
			q->limit = (uint32_t)llround(lat_us * (double)Bps / 1e6) +
				   q->burst;
		return;
	}
	if (strcmp(q->kind, "netem") == 0) {
		q->limit = get_u32(opt, "limit");
		q->gap = get_u32(opt, "gap");
		o = cJSON_GetObjectItemCaseSensitive(opt, "delay");
		if (cJSON_IsObject(o)) {
			q->delay = llround(get_num(o, "delay", 0) * 1e9);
			q->jitter = llround(get_num(o, "jitter", 0) * 1e9);
			q->delay_corr = frac_to_prob(get_num(o, "correlation", 0));
		}
		o = cJSON_GetObjectItemCaseSensitive(opt, "loss-random");
		if (cJSON_IsObject(o)) {
			q->loss = frac_to_prob(get_num(o, "loss", 0));
			q->loss_corr = frac_to_prob(get_num(o, "correlation", 0));
		}
		o = cJSON_GetObjectItemCaseSensitive(opt, "duplicate");
		if (cJSON_IsObject(o)) {
			q->duplicate = frac_to_prob(get_num(o, "duplicate", 0));
			q->dup_corr = frac_to_prob(get_num(o, "correlation", 0));
		}
		o = cJSON_GetObjectItemCaseSensitive(opt, "reorder");
		if (cJSON_IsObject(o)) {
			q->reorder = frac_to_prob(get_num(o, "reorder", 0));
			q->reorder_corr = frac_to_prob(get_num(o, "correlation", 0));
		}
		o = cJSON_GetObjectItemCaseSensitive(opt, "corrupt");
		if (cJSON_IsObject(o)) {
			q->corrupt = frac_to_prob(get_num(o, "corrupt", 0));
			q->corrupt_corr = frac_to_prob(get_num(o, "correlation", 0));
		}
		return;
	}
	/* pfifo (packets), bfifo (bytes), fq_codel ... */
	q->limit = get_u32(opt, "limit");
}

int tcjson_qdiscs(const char *json, const char *dev, struct qdisc_state *out,
		  struct ll_err *err)
{
	cJSON *root, *it;
	int pass;

	memset(out, 0, sizeof(*out));
	snprintf(out->dev, sizeof(out->dev), "%s", dev ? dev : "");
	root = parse_array(json, "tc -j qdisc show", err);
	if (!root)
		return -EINVAL;
	/* pass 0: the root qdisc, pass 1: the rest, so root comes first */
	for (pass = 0; pass < 2; pass++) {
		cJSON_ArrayForEach(it, root) {
			struct qdisc_info *q;
			const cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "root");
			bool is_root = cJSON_IsTrue(r);
			char hs[32];

			if (!cJSON_IsObject(it) || is_root != (pass == 0))
				continue;
			if (out->n >= PEER_MAX_QDISCS)
				break;
			q = &out->q[out->n];
			memset(q, 0, sizeof(*q));
			get_str(it, "kind", q->kind, sizeof(q->kind));
			if (!q->kind[0])
				continue;
			get_str(it, "handle", hs, sizeof(hs));
			if (tcjson_parse_handle(hs, &q->handle) < 0)
				q->handle = 0;
			if (is_root) {
				q->parent = TC_H_ROOT;
			} else {
				get_str(it, "parent", hs, sizeof(hs));
				if (tcjson_parse_handle(hs, &q->parent) < 0)
					q->parent = 0;
				/* ingress / clsact: a flag, not a tree member */
				if (q->parent == TC_H_INGRESS) {
					out->has_ingress = true;
					continue;
				}
			}
			q->bytes = get_u64(it, "bytes");
			q->packets = get_u64(it, "packets");
			q->drops = get_u32(it, "drops");
			q->overlimits = get_u32(it, "overlimits");
			q->backlog = get_u32(it, "backlog");
			q->qlen = get_u32(it, "qlen");
			parse_options(q, cJSON_GetObjectItemCaseSensitive(it, "options"));
			out->n++;
		}
	}
	cJSON_Delete(root);
	return 0;
}

/* "10Mbit", "12345Kbit", "1Gibit" -> bit/s; false if not a rate. */
static bool parse_rate_word(const char *w, uint64_t *bps)
{
	static const char *const pre = "KMGT";
	char *end;
	double v, mult = 1;
	const char *u;

	errno = 0;
	v = strtod(w, &end);
	if (errno || end == w || v < 0)
		return false;
	u = end;
	if (*u && strchr(pre, *u)) {
		int i = (int)(strchr(pre, *u) - pre);
		double k = u[1] == 'i' ? 1024 : 1000;

		mult = k;
		while (i-- > 0)
			mult *= k;
		u += u[1] == 'i' ? 2 : 1;
	}
	if (strcmp(u, "bit") != 0)
		return false;
	*bps = (uint64_t)llround(v * mult);
	return true;
}

/* "5000b", "16Kb", "1Mb" -> bytes; false if not a size. */
static bool parse_size_word(const char *w, uint32_t *bytes)
{
	char *end;
	double v, mult = 1;

	errno = 0;
	v = strtod(w, &end);
	if (errno || end == w || v < 0)
		return false;
	if (*end == 'K')
		mult = 1024, end++;
	else if (*end == 'M')
		mult = 1024.0 * 1024, end++;
	else if (*end == 'G')
		mult = 1024.0 * 1024 * 1024, end++;
	if (strcmp(end, "b") != 0)
		return false;
	v *= mult;
	*bytes = v >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)llround(v);
	return true;
}

int tcjson_htb_class(const char *text, struct qdisc_state *st,
		     struct ll_err *err)
{
	const char *line;

	if (!text)
		return ll_err_set(err, -EINVAL, "tc class show: no output");
	if (st->n < 1 || st->q[0].handle != 0x00010000u ||
	    strcmp(st->q[0].kind, "htb") != 0)
		return 0;
	for (line = text; *line; ) {
		size_t n = strcspn(line, "\n");
		char buf[512], *w, *save = NULL, *prev = NULL;
		uint64_t rate = 0;
		uint32_t burst = 0;
		bool ours = false, have_rate = false, have_burst = false;

		snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) ? n : sizeof(buf) - 1), line);
		line += n + (line[n] == '\n');
		w = strtok_r(buf, " \t", &save);
		if (!w || strcmp(w, "class") != 0)
			continue;
		w = strtok_r(NULL, " \t", &save);
		if (!w || strcmp(w, "htb") != 0)
			continue;
		w = strtok_r(NULL, " \t", &save);
		if (!w || strcmp(w, "1:1") != 0)
			continue;
		ours = true;
		while ((w = strtok_r(NULL, " \t", &save)) != NULL) {
			if (prev && strcmp(prev, "rate") == 0 && !have_rate)
				have_rate = parse_rate_word(w, &rate);
			else if (prev && strcmp(prev, "burst") == 0 && !have_burst)
				have_burst = parse_size_word(w, &burst);
			prev = w;
		}
		if (ours && have_rate) {
			st->q[0].rate = rate;
			if (have_burst)
				st->q[0].burst = burst;
		}
		break;
	}
	return 0;
}

/* A hex string item ("ac70000") -> u32; false if absent or bad. */
static bool get_hex(const cJSON *obj, const char *key, uint32_t *v)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	char *end;
	unsigned long x;

	if (!cJSON_IsString(it) || !it->valuestring[0])
		return false;
	errno = 0;
	x = strtoul(it->valuestring, &end, 16);
	if (errno || *end || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

int tcjson_scope(const char *json, struct qdisc_state *st, struct ll_err *err)
{
	cJSON *root, *f;
	const char *p = json;

	st->scoped = false;
	st->dst_plen = 0;
	st->dport = 0;
	st->dst_family = 0;
	memset(st->dst_addr, 0, sizeof(st->dst_addr));
	memset(st->dst6, 0, sizeof(st->dst6));
	while (p && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	if (p && !*p)
		return 0;       /* no filter at all */
	root = parse_array(json, "tc -j filter show", err);
	if (!root)
		return -EINVAL;
	cJSON_ArrayForEach(f, root) {
		const cJSON *opt = cJSON_GetObjectItemCaseSensitive(f, "options");
		const cJSON *k;
		char kind[16], proto[16], fh[32], flow[16];
		bool v6;

		if (!cJSON_IsObject(opt))
			continue;
		get_str(f, "kind", kind, sizeof(kind));
		get_str(f, "protocol", proto, sizeof(proto));
		get_str(opt, "fh", fh, sizeof(fh));
		get_str(opt, "flowid", flow, sizeof(flow));
		/* a key node "800::800" (hash tables "800:" carry no keys) */
		if (strcmp(kind, "u32") != 0 || strcmp(flow, "1:1") != 0 ||
		    !strstr(fh, "::") || strcmp(strstr(fh, "::") + 2, "0") == 0 ||
		    !strstr(fh, "::")[2])
			continue;
		v6 = strcmp(proto, "ipv6") == 0;
		st->scoped = true;
		cJSON_ArrayForEach(k, opt) {
			uint32_t val, mask;
			int off, bits = 0;

			if (!k->string || strcmp(k->string, "match") != 0 ||
			    !cJSON_IsObject(k) || !get_hex(k, "value", &val) ||
			    !get_hex(k, "mask", &mask))
				continue;
			off = (int)get_num(k, "off", -1);
			while (bits < 32 && (mask & (0x80000000u >> bits)))
				bits++;
			if (!v6 && off == 16) {
				uint32_t be = htonl(val);

				memcpy(st->dst_addr, &be, 4);
				st->dst_plen = (uint8_t)bits;
				st->dst_family = AF_INET;
			} else if (v6 && off >= 24 && off <= 36 && off % 4 == 0) {
				uint32_t be = htonl(val);

				memcpy(st->dst6 + (off - 24), &be, 4);
				if (st->dst_family != AF_INET6) {
					st->dst_family = AF_INET6;
					st->dst_plen = 0;
				}
				st->dst_plen = (uint8_t)(st->dst_plen + bits);
			} else if (off == (v6 ? 40 : 20) && mask == 0xffffu) {
				st->dport = (uint16_t)(val & 0xffff);
			}
		}
	}
	cJSON_Delete(root);
	return 0;
}
