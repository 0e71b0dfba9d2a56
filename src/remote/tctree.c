/* SPDX-License-Identifier: MIT */
/* tctree.c - record a peer interface's whole tc state with the peer's tc,
 * rebuild it as tc commands, compare read-backs (tctree.h). */
#include "linklab/remote/tctree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linklab/netlink/nlqdisc.h"
#include "linklab/remote/tccmd.h"

struct sb {
	char *p;
	size_t len, cap;
	bool over;
};

static void sb_add(struct sb *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_add(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->over)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len) {
		b->over = true;
		b->p[b->len] = '\0';
		return;
	}
	b->len += (size_t)n;
}

/* --- record --------------------------------------------------------------- */

int tctree_record_cmd(const char *dev, char *out, size_t len)
{
	char q[64], jdev[40];
	struct sb b = { out, 0, len, false };
	size_t i, k = 0;

	if (tccmd_quote(dev, q, sizeof(q)) < 0)
		return -ENOSPC;
	/* the name as a JSON string (valid names hold no control bytes) */
	for (i = 0; dev[i] && k + 3 < sizeof(jdev); i++) {
		if (dev[i] == '"' || dev[i] == '\\')
			jdev[k++] = '\\';
		jdev[k++] = dev[i];
	}
	jdev[k] = '\0';
	sb_add(&b, "D=%s; ", q);
	if (tccmd_quote(jdev, q, sizeof(q)) < 0)
		return -ENOSPC;
	sb_add(&b, "J=%s; ", q);
	sb_add(&b, "%s",
	       "L() { sed 's/\\\\/\\\\\\\\/g; s/\"/\\\\\"/g; s/.*/\"&\"/' | paste -sd, -; }; "
	       "set -- $(ip -o link show dev \"$D\" | awk '{i=$1; sub(\":\",\"\",i); m=\"\"; "
	       "for (k = 1; k < NF; k++) if ($k ~ /^link\\//) m = $(k+1); print i, m}'); "
	       "c=$(" TCTREE_COOKIE_SH "); "
	       "printf '{\"version\":2,\"dev\":\"%s\",\"identity\":{\"ifindex\":%s,\"mac\":\"%s\",\"cookie\":\"%s\"},"
	       "\"parts\":[{\"type\":\"tc\",\"qdiscs\":' \"$J\" \"${1:-0}\" \"$2\" \"$c\" && "
	       "tc -j -raw qdisc show dev \"$D\" && "
	       "printf ',\"qdisc_text\":[' && tc -d -raw qdisc show dev \"$D\" | L && "
	       "printf '],\"classes\":[' && tc -d -raw class show dev \"$D\" | L && "
	       "printf '],\"filters\":[' && s= && "
	       "for p in $(tc qdisc show dev \"$D\" | awk '{print $2, $3}' | while read k h; do "
	       "case $k in ingress) echo ffff:;; clsact) echo ffff:fff2 ffff:fff3;; "
	       "htb) echo $h;; esac; done) "
	       "$(tc class show dev \"$D\" | awk '$2==\"htb\"{print $3}'); do "
	       "o=$(tc -j filter show dev \"$D\" parent $p 2>/dev/null) || o='[]'; "
	       "printf '%s{\"parent\":\"%s\",\"list\":%s}' \"$s\" \"$p\" \"${o:-[]}\"; s=,; done && "
	       "printf ']}]}\\n'");
	return b.over ? -ENOSPC : 0;
}

/* --- helpers -------------------------------------------------------------- */

static const cJSON *part_tc(const cJSON *rec)
{
	const cJSON *parts = cJSON_GetObjectItemCaseSensitive(rec, "parts"), *p;

	cJSON_ArrayForEach(p, parts) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "type");

		if (cJSON_IsString(t) && !strcmp(t->valuestring, "tc"))
			return p;
	}
	return NULL;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *k, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : def;
}

/* Words of a tc text line: the value after key ("" if absent). */
static bool word_after(const char *line, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[kl] == ' ') {
			p += kl + 1;
			snprintf(out, len, "%.*s", (int)strcspn(p, " \n"), p);
			return true;
		}
		p += kl;
	}
	out[0] = '\0';
	return false;
}

/* tc's sprint_rate text ("5Mbit", "1234Kbit", "800bit") to bit/s; false if
 * not a rate or ambiguous (a unit and four or more digits: tc divided a
 * rate of >= 1000 units that was not a multiple of 1000). */
static bool exact_rate(const char *w, unsigned long long *bps)
{
	static const char units[] = "KMGT";
	char *end;
	unsigned long long v = strtoull(w, &end, 10);
	const char *u = strchr(units, *end);

	if (end == w)
		return false;
	if (*end && u) {
		int i = (int)(u - units);

		if (end[1] != 'b' || strcmp(end + 1, "bit") || v >= 1000)
			return false;
		while (i-- >= 0)
			v *= 1000;
	} else if (strcmp(end, "bit")) {
		return false;
	}
	*bps = v;
	return true;
}

/* psched_ratecfg_precompute + psched_l2t_ns (net/sched/sch_generic.c) for an
 * ethernet rate without overhead. */
static unsigned long long l2t_ns(unsigned long long rate, unsigned long long bytes)
{
	unsigned long long factor = 1000000000ULL, mult = 1;
	unsigned shift = 0;

	if (!rate)
		return 0;
	for (;;) {
		mult = factor / rate;
		if ((mult & (1ULL << 31)) || (factor & (1ULL << 63)))
			break;
		factor <<= 1;
		shift++;
	}
	return (bytes * mult) >> shift;
}

unsigned tctree_tbf_burst(unsigned long long rate_Bps, unsigned ticks,
			  unsigned near)
{
	unsigned b = near > 1100 ? near - 1100 : 1, end = near + 4096;

	for (; b < end; b++)
		if ((l2t_ns(rate_Bps, b) >> 6) == ticks)
			return b;
	return 0;
}

/* tc's sprint_size text ("1600b", "15Kb", "1.5Mb") to bytes. */
static unsigned size_word(const char *w)
{
	char *end;
	double v = strtod(w, &end);

	if (*end == 'K')
		v *= 1024;
	else if (*end == 'M')
		v *= 1024 * 1024;
	return v > 0 && v < 4e9 ? (unsigned)v : 0;
}

/* htb: the burst tc turns into exactly ticks (tc_calc_xmittime). */
static unsigned htb_burst(unsigned long long rate_Bps, unsigned ticks, unsigned near)
{
	unsigned b = near > 1100 ? near - 1100 : 1, end = near + 4096;

	for (; b < end; b++)
		if (nlqdisc_xmittime(rate_Bps, b) == ticks)
			return b;
	return 0;
}

static unsigned hexval(const char *s)
{
	return (unsigned)strtoul(s, NULL, 16);
}

/* "[0002ee00]" after key in a -raw line. */
static bool raw_after(const char *line, const char *key, unsigned *v)
{
	const char *p = strstr(line, key);

	if (!p || !(p = strchr(p, '[')))
		return false;
	*v = hexval(p + 1);
	return true;
}

/* --- restore -------------------------------------------------------------- */

struct rb {
	struct sb b;
	const char *dev;        /* shell-quoted */
	struct ll_err *err;
	int rc;
};

static void refuse(struct rb *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void refuse(struct rb *r, const char *fmt, ...)
{
	char m[300];
	va_list ap;

	if (r->rc)
		return;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	r->rc = ll_err_set(r->err, -ENOTSUP, "%s", m);
}

static const char *text_line(const cJSON *lines, const char *prefix)
{
	const cJSON *l;

	cJSON_ArrayForEach(l, lines)
		if (cJSON_IsString(l) && !strncmp(l->valuestring, prefix, strlen(prefix)))
			return l->valuestring;
	return NULL;
}

/* The tc words of qdisc q ("pfifo limit 77"). */
static void qdisc_words(struct rb *r, const cJSON *q, const cJSON *qtext)
{
	const char *kind = str(q, "kind"), *h = str(q, "handle");
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(q, "options");

	if (!strcmp(kind, "pfifo") || !strcmp(kind, "pfifo_head_drop")) {
		sb_add(&r->b, " %s limit %.0f", kind, num(o, "limit", 0));
	} else if (!strcmp(kind, "bfifo")) {
		sb_add(&r->b, " bfifo limit %.0fb", num(o, "limit", 0));
	} else if (!strcmp(kind, "pfifo_fast") || !strcmp(kind, "noqueue") ||
		   !strcmp(kind, "mq")) {
		sb_add(&r->b, " %s", kind);
	} else if (!strcmp(kind, "htb")) {
		const char *def = str(o, "default");

		sb_add(&r->b, " htb r2q %.0f default %s direct_qlen %.0f",
		       num(o, "r2q", 10), def[0] ? (strncmp(def, "0x", 2) ? def : def + 2) : "0",
		       num(o, "direct_qlen", 1000));
	} else if (!strcmp(kind, "tbf")) {
		unsigned long long Bps = (unsigned long long)num(o, "rate", 0);
		unsigned ticks = hexval(str(o, "burst_raw"));
		const cJSON *bw = cJSON_GetObjectItemCaseSensitive(o, "burst");
		unsigned b = tctree_tbf_burst(Bps, ticks, cJSON_IsString(bw) ?
					      size_word(bw->valuestring) :
					      (unsigned)num(o, "burst", 0));
		char pre[40], w[40], line[64];
		const char *t;

		snprintf(pre, sizeof(pre), "qdisc tbf %s", h);
		t = text_line(qtext, pre);
		if (!b || !t || num(o, "limit", -1) < 0) {
			refuse(r, "qdisc tbf %s: its burst or limit cannot be read back exactly", h);
			return;
		}
		sb_add(&r->b, " tbf rate %llubit burst %u limit %.0f", Bps * 8, b,
		       num(o, "limit", 0));
		if (word_after(t, "peakrate", w, sizeof(w))) {
			unsigned long long pbps;
			unsigned mt, pb;

			snprintf(line, sizeof(line), "%s", w);
			if (!exact_rate(line, &pbps) || !raw_after(strstr(t, "peakrate"), "mtu", &mt) ||
			    !(pb = tctree_tbf_burst(pbps / 8, mt, 1500))) {
				refuse(r, "qdisc tbf %s: tc prints its peakrate rounded (%s)", h, w);
				return;
			}
			sb_add(&r->b, " peakrate %llubit mtu %u", pbps, pb);
		}
	} else {
		refuse(r, "qdisc %s %s", kind, h);
	}
}

/* tc words of one htb class text line. */
static void class_words(struct rb *r, const char *line)
{
	char id[24], parent[24], rate[32], ceil[32], burst[32], cburst[32], prio[16], q[16];
	unsigned long long rb, cb;
	unsigned bt, ct, bb, cbb;

	if (sscanf(line, "class htb %23s", id) != 1)
		return;
	if (!word_after(line, "parent", parent, sizeof(parent)))
		snprintf(parent, sizeof(parent), "%.*s:", (int)strcspn(id, ":"), id);
	word_after(line, "rate", rate, sizeof(rate));
	word_after(line, "ceil", ceil, sizeof(ceil));
	word_after(line, "burst", burst, sizeof(burst));
	word_after(line, "cburst", cburst, sizeof(cburst));
	if (!exact_rate(rate, &rb) || !exact_rate(ceil, &cb)) {
		refuse(r, "class htb %s: tc prints its rate/ceil rounded (%s/%s)", id, rate, ceil);
		return;
	}
	if (!raw_after(line, "buffer", &bt) || !raw_after(line, "cbuffer", &ct) ||
	    !(bb = htb_burst(rb / 8, bt, size_word(burst))) ||
	    !(cbb = htb_burst(cb / 8, ct, size_word(cburst))) ||
	    (strstr(line, " mpu ") && !strstr(line, "mpu 0b")) || strstr(line, "overhead") ||
	    !strstr(line, "linklayer ethernet")) {
		refuse(r, "class htb %s: its burst, overhead or link layer cannot be rebuilt", id);
		return;
	}
	sb_add(&r->b, " && tc class add dev %s parent %s classid %s htb rate %llubit ceil %llubit burst %u cburst %u",
	       r->dev, parent, id, rb, cb, bb, cbb);
	if (word_after(line, "prio", prio, sizeof(prio)))
		sb_add(&r->b, " prio %s", prio);
	if (word_after(line, "quantum", q, sizeof(q)))
		sb_add(&r->b, " quantum %s", q);
}

/* One u32 key node (or a hash table of its own) of list l at parent. */
static void filter_words(struct rb *r, const char *parent, const cJSON *f, bool ht)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(f, "options"), *k, *acts, *a;
	const char *fh = str(o, "fh");
	char qp[40];

	if (tccmd_quote(str(f, "protocol"), qp, sizeof(qp)) < 0)
		return;
	sb_add(&r->b, " && tc filter add dev %s parent %s protocol %s prio %.0f handle %s u32",
	       r->dev, parent, qp, num(f, "pref", 0), fh);
	if (ht) {
		sb_add(&r->b, " divisor %.0f", num(o, "ht_divisor", 1));
		return;
	}
	cJSON_ArrayForEach(k, o) {
		if (!k->string)
			continue;
		if (!strcmp(k->string, "match")) {
			if (str(k, "offmask")[0]) {
				refuse(r, "filter u32 parent %s prio %.0f handle %s: an offmask key",
				       parent, num(f, "pref", 0), fh);
				return;
			}
			sb_add(&r->b, " match u32 0x%s 0x%s at %.0f", str(k, "value"),
			       str(k, "mask"), num(k, "off", 0));
		} else if (!strcmp(k->string, "flowid") || !strcmp(k->string, "classid")) {
			sb_add(&r->b, " flowid %s", k->valuestring);
		} else if (strcmp(k->string, "fh") && strcmp(k->string, "order") &&
			   strcmp(k->string, "key_ht") && strcmp(k->string, "bkt") &&
			   strcmp(k->string, "not_in_hw") && strcmp(k->string, "actions") &&
			   strcmp(k->string, "in_hw")) {
			refuse(r, "filter u32 parent %s prio %.0f handle %s: option %s",
			       parent, num(f, "pref", 0), fh, k->string);
			return;
		}
	}
	acts = cJSON_GetObjectItemCaseSensitive(o, "actions");
	cJSON_ArrayForEach(a, acts) {
		const cJSON *ca = cJSON_GetObjectItemCaseSensitive(a, "control_action");
		const char *m = str(a, "mirred_action"), *t = str(ca, "type");
		char qd[40];

		if (strcmp(str(a, "kind"), "mirred") || (strcmp(m, "redirect") && strcmp(m, "mirror")) ||
		    tccmd_quote(str(a, "to_dev"), qd, sizeof(qd)) < 0) {
			refuse(r, "filter u32 parent %s prio %.0f handle %s: action %s",
			       parent, num(f, "pref", 0), fh, str(a, "kind"));
			return;
		}
		/* tc's defaults: redirect stolen, mirror pipe (no word for stolen) */
		sb_add(&r->b, " action mirred %s %s dev %s%s%s", str(a, "direction"), m, qd,
		       t[0] && strcmp(t, "stolen") ? " " : "",
		       t[0] && strcmp(t, "stolen") ? t : "");
	}
}

/* Filters of one parent: u32 lists in the order of their root hash
 * tables, each list's own tables first (reverse listing), key nodes next. */
static void filters_of(struct rb *r, const cJSON *blk)
{
	const char *parent = str(blk, "parent");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(blk, "list"), *f;
	unsigned done_keys[64];
	int nd = 0;

	for (;;) {
		unsigned best = 0, key;
		double pref = 0;
		bool any = false;
		int i, n = cJSON_GetArraySize(list);

		/* the root ht of a list: the last "X:" fh listed for its pref */
		cJSON_ArrayForEach(f, list) {
			const cJSON *o = cJSON_GetObjectItemCaseSensitive(f, "options");
			const char *fh = str(o, "fh");
			bool seen = false;

			if (!o)
				continue;
			if (strcmp(str(f, "kind"), "u32")) {
				refuse(r, "filter %s parent %s prio %.0f", str(f, "kind"), parent,
				       num(f, "pref", 0));
				return;
			}
			if (num(f, "chain", 0) != 0) {
				refuse(r, "filter u32 parent %s: chain %.0f", parent, num(f, "chain", 0));
				return;
			}
			if (strstr(fh, "::") || !fh[0])
				continue;
			key = hexval(fh);
			for (i = 0; i < nd; i++)
				seen |= done_keys[i] == (unsigned)num(f, "pref", 0);
			if (!seen && (!any || key < best)) {
				best = key;
				pref = num(f, "pref", 0);
				any = true;
			}
		}
		if (!any || nd >= 64)
			return;
		done_keys[nd++] = (unsigned)pref;
		/* hash tables of the list but its root (the last listed) */
		for (i = n - 1; i >= 0; i--) {
			const cJSON *x = cJSON_GetArrayItem(list, i);
			const cJSON *o = cJSON_GetObjectItemCaseSensitive(x, "options");
			const char *fh = str(o, "fh");
			int k, later = 0;

			if (!o || num(x, "pref", 0) != pref || strstr(fh, "::"))
				continue;
			for (k = i + 1; k < n; k++) {
				const cJSON *y = cJSON_GetArrayItem(list, k);
				const cJSON *yo = cJSON_GetObjectItemCaseSensitive(y, "options");

				if (yo && num(y, "pref", 0) == pref && !strstr(str(yo, "fh"), "::"))
					later = 1;
			}
			if (later)
				filter_words(r, parent, x, true);
		}
		cJSON_ArrayForEach(f, list) {
			const cJSON *o = cJSON_GetObjectItemCaseSensitive(f, "options");

			if (o && num(f, "pref", 0) == pref && strstr(str(o, "fh"), "::"))
				filter_words(r, parent, f, false);
		}
	}
}

/* Is the parent of a qdisc/class ("1:10", "1:") there yet? */
static bool have(char (*made)[24], int n, const char *parent)
{
	int i;
	size_t maj = strcspn(parent, ":");

	for (i = 0; i < n; i++) {
		if (!strcmp(made[i], parent))
			return true;
		/* a qdisc "1:" makes its own classes' parents "1:N" for mq/tbf */
		if (made[i][strlen(made[i]) - 1] == ':' && made[i][0] == '!' &&
		    !strncmp(made[i] + 1, parent, maj + 1))
			return true;
	}
	return false;
}

static void rebuild(struct rb *r, const cJSON *tc)
{
	const cJSON *qs = cJSON_GetObjectItemCaseSensitive(tc, "qdiscs"), *q;
	const cJSON *qt = cJSON_GetObjectItemCaseSensitive(tc, "qdisc_text");
	const cJSON *cls = cJSON_GetObjectItemCaseSensitive(tc, "classes"), *c;
	const cJSON *fl = cJSON_GetObjectItemCaseSensitive(tc, "filters"), *b;
	char made[128][24];
	bool used[128] = { false };
	int nm = 0, progress, idx;

	/* what linklab put there (and an ingress side) goes first */
	sb_add(&r->b, "{ tc qdisc del dev %s root 2>/dev/null; tc qdisc del dev %s ingress 2>/dev/null; tc qdisc del dev %s clsact 2>/dev/null; true; }",
	       r->dev, r->dev, r->dev);
	cJSON_ArrayForEach(q, qs) {
		const char *h = str(q, "handle"), *kind = str(q, "kind");

		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q, "root")))
			continue;
		if (nm < 128)
			snprintf(made[nm++], sizeof(made[0]), "%s", h);
		if (!strcmp(kind, "mq") || !strcmp(kind, "tbf")) {
			if (nm < 128)
				snprintf(made[nm++], sizeof(made[0]), "!%s", h);
		}
		if (!strncmp(h, "0:", 2))
			continue;   /* the kernel's default comes back by itself */
		sb_add(&r->b, " && tc qdisc add dev %s root handle %s", r->dev, h);
		qdisc_words(r, q, qt);
	}
	do {
		progress = 0;
		idx = 0;
		cJSON_ArrayForEach(q, qs) {
			const char *h = str(q, "handle"), *p = str(q, "parent"), *kind = str(q, "kind");

			if (idx++ >= 64 || used[idx - 1] ||
			    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q, "root")))
				continue;
			if (!strcmp(kind, "ingress") || !strcmp(kind, "clsact")) {
				sb_add(&r->b, " && tc qdisc add dev %s %s", r->dev, kind);
			} else {
				if (!have(made, nm, p))
					continue;
				if (strncmp(h, "0:", 2)) {
					sb_add(&r->b, " && tc qdisc replace dev %s parent %s handle %s",
					       r->dev, p, h);
					qdisc_words(r, q, qt);
				}
			}
			used[idx - 1] = true;
			progress++;
			if (nm < 127) {
				snprintf(made[nm++], sizeof(made[0]), "%s", h);
				if (!strcmp(kind, "tbf"))
					snprintf(made[nm++], sizeof(made[0]), "!%s", h);
			}
		}
		idx = 0;
		cJSON_ArrayForEach(c, cls) {
			char id[24], parent[24];
			const char *line = cJSON_IsString(c) ? c->valuestring : "";

			if (idx++ >= 64 || used[64 + idx - 1])
				continue;
			if (sscanf(line, "class %*s %23s", id) != 1 || strncmp(line, "class htb ", 10)) {
				used[64 + idx - 1] = true;   /* implicit classes of tbf, mq */
				if (strncmp(line, "class tbf ", 10) && strncmp(line, "class mq ", 9) &&
				    line[0])
					refuse(r, "%.60s", line);
				continue;
			}
			if (!word_after(line, "parent", parent, sizeof(parent)))
				snprintf(parent, sizeof(parent), "%.*s:", (int)strcspn(id, ":"), id);
			if (!have(made, nm, parent))
				continue;
			class_words(r, line);
			used[64 + idx - 1] = true;
			progress++;
			if (nm < 128)
				snprintf(made[nm++], sizeof(made[0]), "%s", id);
		}
	} while (progress && !r->rc);
	cJSON_ArrayForEach(b, fl)
		filters_of(r, b);
}

int tctree_restore_cmd(const char *dev, const char *record, char *out,
		       size_t len, struct ll_err *err)
{
	char qd[64];
	struct rb r = { { out, 0, len, false }, qd, err, 0 };
	cJSON *rec;
	const cJSON *tc;

	if (tccmd_quote(dev, qd, sizeof(qd)) < 0)
		return ll_err_set(err, -ENOSPC, "interface name too long");
	out[0] = '\0';
	rec = record ? cJSON_Parse(record) : NULL;
	tc = rec ? part_tc(rec) : NULL;
	if (!tc) {
		cJSON_Delete(rec);
		return ll_err_set(err, -EINVAL, "not a tc record");
	}
	rebuild(&r, tc);
	cJSON_Delete(rec);
	if (r.rc)
		return r.rc;
	if (r.b.over)
		return ll_err_set(err, -ENOSPC, "restore command too long");
	return 0;
}

/* --- strip (apply --force) ------------------------------------------------- */

static void strip_note(char *dropped, size_t len, const char *what)
{
	size_t n = strlen(dropped);

	if (strstr(dropped, what))
		return;   /* tc lists a filter's head and its handle apart */
	snprintf(dropped + n, len - n, "%s%s", n ? "; " : "", what);
}

/* Ids ("1:10", "2:") of the parts stripped so far: what hangs below them
 * (child qdiscs, their classes, filter blocks) goes too, or the rebuilt
 * tree would never read back as the stripped record. */
struct gone {
	char id[64][24];
	int n;
};

static void gone_add(struct gone *g, const char *id)
{
	if (g->n < 64 && id[0])
		snprintf(g->id[g->n++], sizeof(g->id[0]), "%s", id);
}

static bool gone_has(const struct gone *g, const char *id)
{
	size_t maj = strcspn(id, ":");
	int i;

	for (i = 0; i < g->n; i++) {
		const char *x = g->id[i];

		/* a class id itself, or any class of a gone qdisc "N:" */
		if (!strcmp(x, id) || (x[strlen(x) - 1] == ':' && strlen(x) == maj + 1 &&
				       !strncmp(x, id, maj + 1)))
			return true;
	}
	return false;
}

/* The class id and parent of a "class htb 1:10 parent 1:1 ..." line. */
static void class_ids(const char *line, char *id, char *parent, size_t len)
{
	id[0] = parent[0] = '\0';
	if (sscanf(line, "class %*s %23s", id) != 1)
		id[0] = '\0';
	if (!word_after(line, "parent", parent, len))
		snprintf(parent, len, "%.*s:", (int)strcspn(id, ":"), id);
}

/* Drop every qdisc and class below a gone id until nothing more goes. */
static void strip_below(cJSON *tc, struct gone *g)
{
	cJSON *sec, *it, *next;
	char id[24], parent[24];
	int more;

	do {
		more = 0;
		sec = cJSON_GetObjectItemCaseSensitive(tc, "qdiscs");
		for (it = sec ? sec->child : NULL; it; it = next) {
			next = it->next;
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "root")) ||
			    !gone_has(g, str(it, "parent")))
				continue;
			gone_add(g, str(it, "handle"));
			cJSON_Delete(cJSON_DetachItemViaPointer(sec, it));
			more++;
		}
		sec = cJSON_GetObjectItemCaseSensitive(tc, "classes");
		for (it = sec ? sec->child : NULL; it; it = next) {
			next = it->next;
			class_ids(cJSON_IsString(it) ? it->valuestring : "", id, parent,
				  sizeof(parent));
			if (!gone_has(g, id) && !gone_has(g, parent))
				continue;
			gone_add(g, id);
			cJSON_Delete(cJSON_DetachItemViaPointer(sec, it));
			more++;
		}
	} while (more);
	sec = cJSON_GetObjectItemCaseSensitive(tc, "filters");
	for (it = sec ? sec->child : NULL; it; it = next) {
		next = it->next;
		if (gone_has(g, str(it, "parent")))
			cJSON_Delete(cJSON_DetachItemViaPointer(sec, it));
	}
}

int tctree_strip(const char *record, char **out, char *dropped, size_t len)
{
	cJSON *rec = record ? cJSON_Parse(record) : NULL;
	cJSON *tc = rec ? (cJSON *)part_tc(rec) : NULL, *sec, *it, *next, *b;
	char scratch[4096], id[24], parent[24];
	struct ll_err e = { 0 };
	struct gone g = { .n = 0 };

	dropped[0] = '\0';
	*out = NULL;
	if (!tc) {
		cJSON_Delete(rec);
		return -EINVAL;
	}
	sec = cJSON_GetObjectItemCaseSensitive(tc, "qdiscs");
	for (it = sec ? sec->child : NULL; it; it = next) {
		struct rb r = { { scratch, 0, sizeof(scratch), false }, "x", &e, 0 };
		const char *k = str(it, "kind");

		next = it->next;
		if (!strcmp(k, "ingress") || !strcmp(k, "clsact"))
			continue;
		qdisc_words(&r, it, cJSON_GetObjectItemCaseSensitive(tc, "qdisc_text"));
		if (r.rc) {
			strip_note(dropped, len, e.msg);
			gone_add(&g, str(it, "handle"));
			cJSON_Delete(cJSON_DetachItemViaPointer(sec, it));
		}
	}
	sec = cJSON_GetObjectItemCaseSensitive(tc, "classes");
	for (it = sec ? sec->child : NULL; it; it = next) {
		struct rb r = { { scratch, 0, sizeof(scratch), false }, "x", &e, 0 };
		const char *line = cJSON_IsString(it) ? it->valuestring : "";

		next = it->next;
		if (!strncmp(line, "class htb ", 10))
			class_words(&r, line);
		else if (strncmp(line, "class tbf ", 10) && strncmp(line, "class mq ", 9))
			r.rc = ll_err_set(&e, -ENOTSUP, "%.60s", line);
		if (r.rc) {
			strip_note(dropped, len, e.msg);
			class_ids(line, id, parent, sizeof(parent));
			gone_add(&g, id);
			cJSON_Delete(cJSON_DetachItemViaPointer(sec, it));
		}
	}
	strip_below(tc, &g);
	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(tc, "filters")) {
		cJSON *list = cJSON_GetObjectItemCaseSensitive(b, "list");

		for (it = list ? list->child : NULL; it; it = next) {
			struct rb r = { { scratch, 0, sizeof(scratch), false }, "x", &e, 0 };
			const cJSON *o = cJSON_GetObjectItemCaseSensitive(it, "options");
			const char *fh = str(o, "fh");

			next = it->next;
			if (strcmp(str(it, "kind"), "u32") || num(it, "chain", 0) != 0)
				r.rc = ll_err_set(&e, -ENOTSUP, "filter %s parent %s prio %.0f",
						  str(it, "kind"), str(b, "parent"), num(it, "pref", 0));
			else if (o && strstr(fh, "::"))
				filter_words(&r, str(b, "parent"), it, false);
			if (r.rc) {
				strip_note(dropped, len, e.msg);
				cJSON_Delete(cJSON_DetachItemViaPointer(list, it));
			}
		}
	}
	/* what clear will say it could not bring back */
	cJSON_DeleteItemFromObjectCaseSensitive(rec, "lost");
	if (dropped[0])
		cJSON_AddStringToObject(rec, "lost", dropped);
	*out = cJSON_PrintUnformatted(rec);
	cJSON_Delete(rec);
	return *out ? 0 : -ENOMEM;
}

/* What apply --force accepted losing ("" if nothing). */
void tctree_lost(const char *record, char *out, size_t len)
{
	cJSON *rec = record ? cJSON_Parse(record) : NULL;

	snprintf(out, len, "%s", rec ? str(rec, "lost") : "");
	cJSON_Delete(rec);
}

/* --- compare -------------------------------------------------------------- */

static const char *const counters[] = {
	"bytes", "packets", "drops", "overlimits", "requeues", "backlog", "qlen",
	"refcnt", "direct_packets_stat", "ref", "bind", "index", "installed",
	"last_used", "first_used", "expires", "stats", "stats64", "not_in_hw", NULL
};

static void strip(cJSON *x)
{
	cJSON *c, *next;
	int i;

	for (c = x ? x->child : NULL; c; c = next) {
		next = c->next;
		for (i = 0; counters[i]; i++)
			if (c->string && !strcmp(c->string, counters[i])) {
				cJSON_Delete(cJSON_DetachItemViaPointer(x, c));
				break;
			}
		if (!counters[i])
			strip(c);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The tc part as sorted lines of canonical JSON (one per object). */
static int canon(const char *record, char ***lines, int *n)
{
	cJSON *rec = cJSON_Parse(record), *tc, *sec, *it;
	static const char *const keys[] = { "qdiscs", "classes", "filters" };
	int k, cap = 256;

	*n = 0;
	*lines = calloc((size_t)cap, sizeof(char *));
	tc = rec ? (cJSON *)part_tc(rec) : NULL;
	if (!tc || !*lines) {
		cJSON_Delete(rec);
		free(*lines);
		*lines = NULL;
		return -EINVAL;
	}
	strip(tc);
	for (k = 0; k < 3; k++) {
		sec = cJSON_GetObjectItemCaseSensitive(tc, keys[k]);
		cJSON_ArrayForEach(it, sec) {
			char *s = cJSON_PrintUnformatted(it);

			if (s && *n < cap) {
				char *t = malloc(strlen(s) + 3);

				if (t) {
					snprintf(t, strlen(s) + 3, "%d %s", k, s);
					(*lines)[(*n)++] = t;
				}
			}
			free(s);
		}
	}
	cJSON_Delete(rec);
	qsort(*lines, (size_t)*n, sizeof(char *), cmp_str);
	return 0;
}

static void free_lines(char **l, int n)
{
	int i;

	for (i = 0; l && i < n; i++)
		free(l[i]);
	free(l);
}

int tctree_diff(const char *want, const char *got, char *why, size_t len)
{
	char **a = NULL, **b = NULL;
	int na = 0, nb = 0, i, rc = 0;

	if (canon(want, &a, &na) < 0 || canon(got, &b, &nb) < 0) {
		free_lines(a, na);
		return -EINVAL;
	}
	for (i = 0; i < na || i < nb; i++) {
		if (i < na && i < nb && !strcmp(a[i], b[i]))
			continue;
		snprintf(why, len, "recorded %.150s, now %.150s", i < na ? a[i] + 2 : "nothing",
			 i < nb ? b[i] + 2 : "nothing");
		rc = 1;
		break;
	}
	free_lines(a, na);
	free_lines(b, nb);
	return rc;
}

void tctree_cookie(const char *record, char *out, size_t len)
{
	cJSON *rec = record ? cJSON_Parse(record) : NULL;
	const char *c = str(cJSON_GetObjectItemCaseSensitive(rec, "identity"), "cookie");

	snprintf(out, len, "%s", strspn(c, "0123456789") == strlen(c) ? c : "");
	cJSON_Delete(rec);
}

int tctree_identity(const char *record, int *ifindex, char *mac, size_t len)
{
	cJSON *rec = record ? cJSON_Parse(record) : NULL;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(rec, "identity");

	if (!cJSON_IsObject(id)) {
		cJSON_Delete(rec);
		return -EINVAL;
	}
	*ifindex = (int)num(id, "ifindex", 0);
	snprintf(mac, len, "%s", str(id, "mac"));
	cJSON_Delete(rec);
	return 0;
}
