/* SPDX-License-Identifier: MIT */
/* qdisc.c - fold a read-back qdisc tree into dial terms, and summarize it. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "linklab/model/qdisc.h"
#include "linklab/base/units.h"

static const struct qdisc_info *find_kind(const struct qdisc_state *s,
					  const char *kind)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->q[i].kind, kind) == 0)
			return &s->q[i];
	return NULL;
}

#define PROB(field, bit) do { if (n->field) { d->field = n->field; d->set |= (bit); } } while (0)

/* The netem model fields (the distribution table is never dumped). */
static void fold_more(const struct qdisc_info *n, struct impair *d)
{
	if (n->loss_model == IMP_LOSSM_STATE) {
		d->loss_state[0] = n->gi[0];
		d->loss_state[1] = n->gi[1];
		d->loss_state[2] = n->gi[2];
		d->loss_state[3] = n->gi[4];     /* CLI p23 */
		d->loss_state[4] = n->gi[3];     /* CLI p14 */
		d->loss_state_n = 5;
		d->set |= IMP_LOSS_STATE;
	} else if (n->loss_model == IMP_LOSSM_GE) {
		d->loss_ge[0] = n->ge[0];
		d->loss_ge[1] = n->ge[1];
		d->loss_ge[2] = UINT32_MAX - n->ge[2];   /* 1-h */
		d->loss_ge[3] = n->ge[3];
		d->loss_ge_n = 4;
		d->set |= IMP_LOSS_GE;
	}
	if (n->ecn) {
		d->ecn = true;
		d->set |= IMP_ECN;
	}
	if (n->netem_rate) {
		d->netem_rate = n->netem_rate;
		d->set |= IMP_NETEM_RATE;
		if (n->packet_overhead) {
			d->packet_overhead = n->packet_overhead;
			d->set |= IMP_PKT_OVERHEAD;
		}
		if (n->cell_size) {
			d->cell_size = n->cell_size;
			d->set |= IMP_CELL_SIZE;
		}
		if (n->cell_overhead) {
			d->cell_overhead = n->cell_overhead;
			d->set |= IMP_CELL_OVERHEAD;
		}
	}
	if (n->slot_min || n->slot_max) {
		d->slot_min = n->slot_min;
		d->slot_max = n->slot_max;
		d->set |= IMP_SLOT;
		if (n->slot_packets > 0) {
			d->slot_packets = n->slot_packets;
			d->set |= IMP_SLOT_PACKETS;
		}
		if (n->slot_bytes > 0) {
			d->slot_bytes = n->slot_bytes;
			d->set |= IMP_SLOT_BYTES;
		}
	}
	if (n->has_seed) {
		d->seed = n->seed;
		d->set |= IMP_SEED;
	}
}

void qdisc_state_to_impair(const struct qdisc_state *s, struct impair *d)
{
	const struct qdisc_info *root, *t, *n;

	memset(d, 0, sizeof(*d));
	if (!s || s->n == 0)
		return;
	root = &s->q[0];
	/* kernel defaults (handle 0:) and anything not ours carry no dial */
	if ((root->handle >> 16) == 0)
		return;
	t = strcmp(root->kind, "tbf") == 0 ? root : NULL;
	/* linklab's per-flow layout: htb 1: whose class 1:1 carries the rate
	 * (100 Gbit/s means unshaped) and the netem child */
	if (strcmp(root->kind, "htb") == 0) {
		if (root->rate && root->rate < QDISC_UNSHAPED_BPS) {
			d->rate = root->rate;
			d->burst = root->burst;
			d->set |= IMP_RATE | IMP_BURST;
		}
		if (s->scoped && s->dst_plen) {
			d->dst_plen = s->dst_plen;
			d->dst_family = s->dst_family == AF_INET6 ? AF_INET6 : AF_INET;
			memcpy(d->dst_addr, s->dst_addr, 4);
			memcpy(d->dst6, s->dst6, 16);
			d->set |= IMP_DST;
		}
		if (s->scoped && s->dport) {
			d->dport = s->dport;
			d->set |= IMP_DPORT;
		}
	}
	n = strcmp(root->kind, "netem") == 0 ? root :
	    (t || strcmp(root->kind, "htb") == 0 ? find_kind(s, "netem") : NULL);
	if (t) {
		d->rate = t->rate;
		d->burst = t->burst;
		d->tbf_limit = t->limit;
		d->set |= IMP_RATE | IMP_BURST | IMP_TBF_LIMIT;
	}
	if (n) {
		if (n->delay) {
			d->delay = n->delay;
			d->set |= IMP_DELAY;
		}
		if (n->jitter) {
			d->jitter = n->jitter;
			d->set |= IMP_JITTER;
		}
		PROB(delay_corr, IMP_DELAY_CORR);
		PROB(loss, IMP_LOSS);
		PROB(loss_corr, IMP_LOSS_CORR);
		PROB(duplicate, IMP_DUP);
		PROB(dup_corr, IMP_DUP_CORR);
		PROB(corrupt, IMP_CORRUPT);
		PROB(corrupt_corr, IMP_CORRUPT_CORR);
		PROB(reorder, IMP_REORDER);
		PROB(reorder_corr, IMP_REORDER_CORR);
		/* gap 1 is what tc and linklab add for a bare reorder */
		if (n->gap > 1 || (n->gap == 1 && !n->reorder)) {
			d->gap = n->gap;
			d->set |= IMP_GAP;
		}
		d->limit = n->limit;
		d->set |= IMP_LIMIT;
		fold_more(n, d);
	}
}

static void cat(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void cat(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off + 1 >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n < len - *off ? (size_t)n : len - *off - 1;
}

static void prob(char *buf, size_t len, size_t *off, const char *w,
		 uint32_t p, uint32_t c)
{
	char a[32], b[32];

	if (!p)
		return;
	cat(buf, len, off, " %s %s", w, units_format_percent(p, a, sizeof(a)));
	if (c)
		cat(buf, len, off, " %s", units_format_percent(c, b, sizeof(b)));
}

static void summary_more(char *buf, size_t len, size_t *off,
			 const struct qdisc_info *q)
{
	char a[32], b[32], c[32], e[32], f[32];

	if (q->loss_model == IMP_LOSSM_STATE)
		cat(buf, len, off, " loss state %s %s %s %s %s",
		    units_format_percent(q->gi[0], a, sizeof(a)),
		    units_format_percent(q->gi[1], b, sizeof(b)),
		    units_format_percent(q->gi[2], c, sizeof(c)),
		    units_format_percent(q->gi[4], e, sizeof(e)),
		    units_format_percent(q->gi[3], f, sizeof(f)));
	else if (q->loss_model == IMP_LOSSM_GE)
		cat(buf, len, off, " loss gemodel %s %s %s %s",
		    units_format_percent(q->ge[0], a, sizeof(a)),
		    units_format_percent(q->ge[1], b, sizeof(b)),
		    units_format_percent(UINT32_MAX - q->ge[2], c, sizeof(c)),
		    units_format_percent(q->ge[3], e, sizeof(e)));
	if (q->ecn)
		cat(buf, len, off, " ecn");
	if (q->netem_rate) {
		cat(buf, len, off, " rate %s", units_format_rate(q->netem_rate, a, sizeof(a)));
		if (q->packet_overhead || q->cell_size || q->cell_overhead)
			cat(buf, len, off, " %" PRId32 " %" PRIu32 " %" PRId32,
			    q->packet_overhead, q->cell_size, q->cell_overhead);
	}
	if (q->slot_min || q->slot_max) {
		cat(buf, len, off, " slot %s %s",
		    units_format_time(q->slot_min, a, sizeof(a)),
		    units_format_time(q->slot_max, b, sizeof(b)));
		if (q->slot_packets > 0)
			cat(buf, len, off, " packets %" PRId32, q->slot_packets);
		if (q->slot_bytes > 0)
			cat(buf, len, off, " bytes %s",
			    units_format_size((uint64_t)q->slot_bytes, c, sizeof(c)));
	}
	if (q->has_seed)
		cat(buf, len, off, " seed %" PRIu64, q->seed);
}

char *qdisc_state_summary(const struct qdisc_state *s, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (!s || s->n == 0) {
		snprintf(buf, len, "none");
		return buf;
	}
	for (i = 0; i < s->n; i++) {
		const struct qdisc_info *q = &s->q[i];
		char a[32], b[32], c[32];

		if (i)
			cat(buf, len, &off, " / ");
		cat(buf, len, &off, "%s", q->kind[0] ? q->kind : "?");
		if (strcmp(q->kind, "htb") == 0 && i == 0 && q->rate) {
			if (q->rate < QDISC_UNSHAPED_BPS)
				cat(buf, len, &off, " rate %s burst %s",
				    units_format_rate(q->rate, a, sizeof(a)),
				    units_format_size(q->burst, b, sizeof(b)));
			if (s->scoped) {
				char ip[INET6_ADDRSTRLEN];

				cat(buf, len, &off, " (only");
				if (s->dst_plen) {
					if (s->dst_family == AF_INET6)
						inet_ntop(AF_INET6, s->dst6, ip, sizeof(ip));
					else
						inet_ntop(AF_INET, s->dst_addr, ip, sizeof(ip));
					cat(buf, len, &off, " dst %s/%u", ip, s->dst_plen);
				}
				if (s->dport)
					cat(buf, len, &off, " dport %u", s->dport);
				cat(buf, len, &off, ")");
			}
		} else if (strcmp(q->kind, "tbf") == 0) {
			cat(buf, len, &off, " rate %s burst %s limit %s",
			    units_format_rate(q->rate, a, sizeof(a)),
			    units_format_size(q->burst, b, sizeof(b)),
			    units_format_size(q->limit, c, sizeof(c)));
		} else if (strcmp(q->kind, "netem") == 0) {
			cat(buf, len, &off, " limit %" PRIu32, q->limit);
			if (q->delay || q->jitter) {
				cat(buf, len, &off, " delay %s",
				    units_format_time(q->delay, a, sizeof(a)));
				if (q->jitter)
					cat(buf, len, &off, " %s",
					    units_format_time(q->jitter, b, sizeof(b)));
				if (q->jitter && q->delay_corr)
					cat(buf, len, &off, " %s",
					    units_format_percent(q->delay_corr, c, sizeof(c)));
			}
			prob(buf, len, &off, "loss", q->loss, q->loss_corr);
			prob(buf, len, &off, "duplicate", q->duplicate, q->dup_corr);
			prob(buf, len, &off, "corrupt", q->corrupt, q->corrupt_corr);
			prob(buf, len, &off, "reorder", q->reorder, q->reorder_corr);
			if (q->reorder && q->gap > 1)
				cat(buf, len, &off, " gap %" PRIu32, q->gap);
			summary_more(buf, len, &off, q);
		}
	}
	return buf;
}

void qdisc_ifb_name(const char *dev, char *out, size_t len)
{
	uint32_t h = 2166136261u;          /* FNV-1a */
	const char *s;

	for (s = dev ? dev : ""; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	snprintf(out, len, "llifb%08x", h);
}
