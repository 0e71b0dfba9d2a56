/* SPDX-License-Identifier: MIT */
/* emu.c - the userspace impairment model (see emu.h for the rules and their
 * source in the kernel's sch_netem.c). Pure: time comes from the caller. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linklab/bridge/emu.h"
#include "linklab/peer/hostinfo.h"

struct crnd {                   /* correlated random state (get_crandom) */
	uint32_t rho, last;
};

struct emu_item {
	int64_t tts;
	uint64_t seq;
	void *pkt;
	uint32_t len;
};

struct emu {
	struct emu_config cfg;
	uint64_t prng;
	struct crnd delay_c, loss_c, dup_c, corrupt_c, reorder_c;
	int lstate;                  /* loss model state: 1..4 (GE: 1 good, 2 bad) */
	uint32_t counter;            /* packets since the last reordered one */
	/* time-ordered queue: binary min-heap on (tts, seq) */
	struct emu_item *heap;
	uint32_t nheap, cap;
	uint64_t seq;
	int64_t tail_tts;            /* largest tts in the heap (valid if nheap) */
	/* head queue: reordered packets, FIFO ring */
	struct emu_item *direct;
	uint32_t dhead, dn;
	uint64_t qbytes;             /* bytes queued (heap + direct) */
	uint64_t out_seq;            /* highest arrival number released */
	bool out_any;
	/* token bucket: tokens in bytes x 1e9 (dt ns x rate B/s adds exactly) */
	int64_t tb_toks, tb_burst;
	int64_t tb_t;                /* time of tb_toks; INT64_MIN = full, unused */
	struct emu_stats st;
};

#define NS 1000000000LL

/* --- PRNG: splitmix64 seeding, xorshift64* output ------------------------ */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t emu_rand_u32(struct emu *e)
{
	uint64_t x = e->prng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	e->prng = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dULL) >> 32);
}

/* netem's get_crandom(): next = (value * (2^32 - rho) + last * rho) >> 32 */
static uint32_t crandom(struct emu *e, struct crnd *c)
{
	uint64_t value, rho;
	uint32_t answer;

	if (c->rho == 0)
		return emu_rand_u32(e);
	value = emu_rand_u32(e);
	rho = (uint64_t)c->rho + 1;
	answer = (uint32_t)((value * ((1ULL << 32) - rho) + (uint64_t)c->last * rho) >> 32);
	c->last = answer;
	return answer;
}

/* --- construction --------------------------------------------------------- */

/* The checks emu_new and emu_reconfigure share. */
static int config_check(const struct emu_config *cfg, struct ll_err *err)
{
	if (cfg->delay < 0)
		return ll_err_set(err, -EINVAL, "emu: delay %lld ns is negative",
				  (long long)cfg->delay);
	if (cfg->jitter < 0 || cfg->jitter > INT32_MAX)
		return ll_err_set(err, -EINVAL,
				  "emu: jitter %lld ns outside 0..%d ns (netem caps it to INT_MAX)",
				  (long long)cfg->jitter, INT32_MAX);
	if (cfg->dist && (cfg->dist->n < 1 || cfg->dist->n > EMU_DIST_MAX))
		return ll_err_set(err, -EINVAL, "emu: distribution table has %d entries (1..%d)",
				  cfg->dist->n, EMU_DIST_MAX);
	if (cfg->loss_model > EMU_LOSS_4STATE)
		return ll_err_set(err, -EINVAL, "emu: unknown loss model %d", (int)cfg->loss_model);
	return 0;
}

int emu_new(const struct emu_config *cfg, struct emu **out, struct ll_err *err)
{
	struct emu *e;
	uint64_t s;
	int rc;

	*out = NULL;
	rc = config_check(cfg, err);
	if (rc < 0)
		return rc;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ll_err_set(err, -ENOMEM, "emu: out of memory");
	e->cfg = *cfg;
	if (e->cfg.limit == 0)
		e->cfg.limit = 1000;
	e->cap = e->cfg.limit;
	e->heap = calloc(e->cap, sizeof(*e->heap));
	e->direct = calloc(e->cap, sizeof(*e->direct));
	if (!e->heap || !e->direct) {
		uint32_t cap = e->cap;

		emu_free(e);
		return ll_err_set(err, -ENOMEM, "emu: out of memory for a %u-packet queue",
				  cap);
	}
	s = cfg->seed;
	e->prng = splitmix64(&s);
	if (e->prng == 0)
		e->prng = 1;
	e->delay_c.rho = cfg->delay_corr;
	e->loss_c.rho = cfg->loss_corr;
	e->dup_c.rho = cfg->dup_corr;
	e->corrupt_c.rho = cfg->corrupt_corr;
	e->reorder_c.rho = cfg->reorder_corr;
	e->lstate = 1;
	if (e->cfg.tbf_rate && e->cfg.tbf_burst == 0)
		e->cfg.tbf_burst = 1514;
	e->tb_burst = (int64_t)e->cfg.tbf_burst * NS;
	e->tb_toks = e->tb_burst;       /* tbf_change(): the bucket starts full */
	e->tb_t = INT64_MIN;
	*out = e;
	return 0;
}

void emu_free(struct emu *e)
{
	if (!e)
		return;
	free(e->heap);
	free(e->direct);
	free(e);
}

const struct emu_config *emu_get_config(const struct emu *e)
{
	return &e->cfg;
}

void emu_get_stats(const struct emu *e, struct emu_stats *s)
{
	*s = e->st;
	s->qlen = e->nheap + e->dn;
}

/* --- loss models ------------------------------------------------------------ */

/* 4-state Markov (GI) model: lost when the chain enters state 3 or 4. */
static bool loss_4state(struct emu *e)
{
	const struct emu_config *c = &e->cfg;
	uint32_t r = emu_rand_u32(e);

	switch (e->lstate) {
	case 1:
		if (r < c->p14) {
			e->lstate = 4;
			return true;
		}
		if ((uint64_t)r < (uint64_t)c->p14 + c->p13) {
			e->lstate = 3;
			return true;
		}
		return false;
	case 2:
		if (r < c->p23) {
			e->lstate = 3;
			return true;
		}
		return false;
	case 3:
		if (r < c->p32) {
			e->lstate = 2;
			return false;
		}
		if ((uint64_t)r < (uint64_t)c->p32 + c->p31) {
			e->lstate = 1;
			return false;
		}
		return true;
	default:        /* 4: isolated loss, back to good */
		e->lstate = 1;
		return false;
	}
}

/* Gilbert-Elliott as the kernel's loss_gilb_ell(): move between the good and
 * bad state, then lose with the rate of the state the packet arrived in
 * (1-k in good, 1-h in bad). */
static bool loss_ge(struct emu *e)
{
	const struct emu_config *c = &e->cfg;

	if (e->lstate == 1) {
		if (emu_rand_u32(e) < c->ge_p)
			e->lstate = 2;
		return c->ge_1k && emu_rand_u32(e) < c->ge_1k;
	}
	if (emu_rand_u32(e) < c->ge_r)
		e->lstate = 1;
	return c->ge_1h == UINT32_MAX || (c->ge_1h && emu_rand_u32(e) < c->ge_1h);
}

static bool loss_event(struct emu *e)
{
	const struct emu_config *c = &e->cfg;

	switch (c->loss_model) {
	case EMU_LOSS_GE:
		return loss_ge(e);
	case EMU_LOSS_4STATE:
		return loss_4state(e);
	default:
		/* netem: q->loss && q->loss >= get_crandom() */
		return c->loss && c->loss >= crandom(e, &e->loss_c);
	}
}

void emu_fate(struct emu *e, uint32_t len, bool is_dup, struct emu_fate *f)
{
	emu_fate_ect(e, len, is_dup, false, f);
}

void emu_fate_ect(struct emu *e, uint32_t len, bool is_dup, bool ect, struct emu_fate *f)
{
	const struct emu_config *c = &e->cfg;

	memset(f, 0, sizeof(*f));
	if (!is_dup) {
		e->st.in_pkts++;
		e->st.in_bytes += len;
		if (c->duplicate && c->duplicate >= crandom(e, &e->dup_c)) {
			f->dup = true;
			e->st.duplicated++;
		}
	}
	if (loss_event(e)) {
		if (c->ecn && ect) {            /* netem: INET_ECN_set_ce */
			f->mark_ce = true;
			e->st.ecn_marked++;
		} else {
			f->lost = true;
			e->st.lost++;
			return;
		}
	}
	if (c->corrupt && c->corrupt >= crandom(e, &e->corrupt_c) && len) {
		f->corrupt = true;
		f->corrupt_bit = emu_rand_u32(e) % (len * 8u);
		e->st.corrupted++;
	}
}

/* --- ECN in the frame ------------------------------------------------------- */

/* Offset of the IP header and its version (4/6), or -1. */
static int ip_off(const unsigned char *f, uint32_t len, int *ver)
{
	uint32_t off = 12;
	unsigned type;

	if (len < 14)
		return -1;
	type = (unsigned)f[off] << 8 | f[off + 1];
	if (type == 0x8100 || type == 0x88a8) {         /* one VLAN tag */
		off += 4;
		if (len < off + 2)
			return -1;
		type = (unsigned)f[off] << 8 | f[off + 1];
	}
	off += 2;
	if (type == 0x0800 && len >= off + 20 && (f[off] >> 4) == 4)
		*ver = 4;
	else if (type == 0x86dd && len >= off + 40 && (f[off] >> 4) == 6)
		*ver = 6;
	else
		return -1;
	return (int)off;
}

int emu_frame_ecn(const unsigned char *frame, uint32_t len)
{
	int ver, off = ip_off(frame, len, &ver);

	if (off < 0)
		return -1;
	if (ver == 4)
		return frame[off + 1] & 3;
	return (frame[off + 1] >> 4) & 3;       /* traffic class bits 0-1 */
}

bool emu_frame_set_ce(unsigned char *frame, uint32_t len)
{
	int ver, off = ip_off(frame, len, &ver);
	unsigned char *ip;

	if (off < 0)
		return false;
	ip = frame + off;
	if (ver == 4) {
		/* include/net/inet_ecn.h IP_ECN_set_ce */
		uint32_t ecn = ((uint32_t)ip[1] + 1) & 3, check;

		if (!(ecn & 2))
			return ecn == 0;        /* 0: already CE; 1: not-ECT */
		check = (uint32_t)ip[10] << 8 | ip[11];
		check += 0xfffb + ecn;
		check = (check & 0xffff) + (check >> 16);
		ip[10] = (unsigned char)(check >> 8);
		ip[11] = (unsigned char)check;
		ip[1] |= 3;
		return true;
	}
	if (((ip[1] >> 4) & 3) == 0)
		return false;
	ip[1] |= 0x30;
	return true;
}

/* --- schedule ---------------------------------------------------------------- */

/* netem's tabledist(): mu +- sigma, uniform without a table. */
static int64_t tabledist(struct emu *e, int64_t mu, int64_t sigma)
{
	const struct emu_dist *d = e->cfg.dist;
	uint32_t rnd;
	int64_t t, x;

	if (sigma == 0)
		return mu;
	rnd = crandom(e, &e->delay_c);
	if (!d)
		return (int64_t)(rnd % (2u * (uint32_t)sigma)) + mu - sigma;
	t = d->t[rnd % (uint32_t)d->n];
	x = (sigma % EMU_DIST_SCALE) * t;
	if (x >= 0)
		x += EMU_DIST_SCALE / 2;
	else
		x -= EMU_DIST_SCALE / 2;
	return x / EMU_DIST_SCALE + (sigma / EMU_DIST_SCALE) * t + mu;
}

int64_t emu_packet_time(const struct emu_config *c, uint32_t len)
{
	int64_t l = (int64_t)len + c->overhead;

	if (!c->rate)
		return 0;
	if (l < 0)
		l = 0;
	if (c->cell_size) {
		int64_t cells = l / c->cell_size;

		if (l > cells * (int64_t)c->cell_size)
			cells++;
		l = cells * ((int64_t)c->cell_size + c->cell_overhead);
	}
	return (int64_t)(((unsigned __int128)l * 1000000000u) / c->rate);
}

static bool item_less(const struct emu_item *a, const struct emu_item *b)
{
	return a->tts < b->tts || (a->tts == b->tts && a->seq < b->seq);
}

static void heap_push(struct emu *e, struct emu_item it)
{
	uint32_t i = e->nheap++;

	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (!item_less(&it, &e->heap[p]))
			break;
		e->heap[i] = e->heap[p];
		i = p;
	}
	e->heap[i] = it;
}

static struct emu_item heap_pop(struct emu *e)
{
	struct emu_item top = e->heap[0], last = e->heap[--e->nheap];
	uint32_t i = 0, n = e->nheap;

	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		const struct emu_item *mv = &last;

		if (l < n && item_less(&e->heap[l], mv)) {
			m = l;
			mv = &e->heap[l];
		}
		if (r < n && item_less(&e->heap[r], mv))
			m = r;
		if (m == i)
			break;
		e->heap[i] = e->heap[m];
		i = m;
	}
	if (n)
		e->heap[i] = last;
	return top;
}

int emu_enqueue(struct emu *e, int64_t now, uint32_t len, void *pkt, int64_t *tts)
{
	const struct emu_config *c = &e->cfg;
	struct emu_item it = { .seq = e->seq++, .pkt = pkt, .len = len };
	uint32_t qlen = e->nheap + e->dn;

	if (qlen >= c->limit) {
		e->st.limit_drops++;
		return -ENOBUFS;
	}
	/* tbf's bfifo: backlog + len <= limit (sch_fifo.c bfifo_enqueue) */
	if (c->tbf_rate && c->tbf_limit && e->qbytes + len > c->tbf_limit) {
		e->st.rate_drops++;
		return -ENOBUFS;
	}
	if (c->gap == 0 || e->counter < c->gap - 1 ||
	    c->reorder < crandom(e, &e->reorder_c)) {
		int64_t delay = tabledist(e, c->delay, c->jitter), t = now;

		if (c->rate) {
			if (e->nheap) {
				if (c->rate_backlog_ns > 0 &&
				    e->tail_tts - now - delay > c->rate_backlog_ns) {
					e->st.rate_drops++;
					return -ENOBUFS;
				}
				delay -= e->tail_tts - now;
				if (delay < 0)
					delay = 0;
				t = e->tail_tts;
			}
			delay += emu_packet_time(c, len);
		}
		it.tts = t + delay;
		e->counter++;
		if (!e->nheap || it.tts > e->tail_tts)
			e->tail_tts = it.tts;
		heap_push(e, it);
	} else {
		it.tts = now;
		e->counter = 0;
		e->direct[(e->dhead + e->dn) % e->cap] = it;
		e->dn++;
		e->st.sent_ahead++;
	}
	qlen++;
	e->qbytes += len;
	if (qlen > e->st.qlen_max)
		e->st.qlen_max = qlen;
	if (tts)
		*tts = it.tts;
	return 0;
}

/* The packet netem would release next (head queue first, then the earliest
 * time to send): false when the queue is empty. */
static bool netem_head(const struct emu *e, struct emu_item *it)
{
	if (e->dn) {
		*it = e->direct[e->dhead];
		return true;
	}
	if (e->nheap) {
		*it = e->heap[0];
		return true;
	}
	return false;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* Tokens after dt ns at the bucket's rate, at most the bucket (no overflow). */
static int64_t tb_fill(const struct emu *e, int64_t toks, int64_t dt)
{
	__int128 t = (__int128)toks + (__int128)dt * (__int128)e->cfg.tbf_rate;

	return t > e->tb_burst ? e->tb_burst : (int64_t)t;
}

/* Tokens a packet of len bytes must find in the bucket: its length, or for
 * a GSO super-packet longer than one frame the first segment's (the kernel
 * segments it and the segments leave one by one; here it leaves whole and
 * the rest of its length is borrowed: the bucket goes negative). */
static int64_t tb_need(const struct emu *e, uint32_t len)
{
	uint32_t n = len < EMU_TBF_FRAME ? len : EMU_TBF_FRAME;

	if (n > e->cfg.tbf_burst)
		n = e->cfg.tbf_burst;
	return (int64_t)n * NS;
}

/* tbf_dequeue()'s refill at now: tokens accumulate up to the bucket. */
static void tb_refill(struct emu *e, int64_t now)
{
	if (e->tb_t == INT64_MIN) {      /* never used: full */
		e->tb_t = now;
		return;
	}
	if (now <= e->tb_t)
		return;
	e->tb_toks = tb_fill(e, e->tb_toks, now - e->tb_t);
	e->tb_t = now;
}

/* When the bucket will hold what a packet of len bytes due at due needs. */
static int64_t tb_ready(const struct emu *e, int64_t due, uint32_t len)
{
	int64_t need = tb_need(e, len), toks = e->tb_toks, base = due;

	if (e->tb_t != INT64_MIN) {
		if (due > e->tb_t)
			toks = tb_fill(e, toks, due - e->tb_t);
		else
			base = e->tb_t;
	}
	if (toks >= need)
		return base;
	return sat_add(base, (int64_t)(((uint64_t)(need - toks) + e->cfg.tbf_rate - 1) /
				       e->cfg.tbf_rate));
}

int64_t emu_next_time(const struct emu *e)
{
	struct emu_item it;

	if (!netem_head(e, &it))
		return INT64_MAX;
	if (!e->cfg.tbf_rate)
		return it.tts;
	return tb_ready(e, it.tts, it.len);
}

static void *take_direct(struct emu *e, uint32_t *len)
{
	struct emu_item it = e->direct[e->dhead];

	e->dhead = (e->dhead + 1) % e->cap;
	e->dn--;
	e->qbytes -= it.len;
	if (len)
		*len = it.len;
	return it.pkt;
}

static struct emu_item take_heap(struct emu *e)
{
	struct emu_item it = heap_pop(e);

	e->qbytes -= it.len;
	return it;
}

void *emu_dequeue(struct emu *e, int64_t now, uint32_t *len)
{
	struct emu_item it;
	void *p;

	if (!netem_head(e, &it) || (!e->dn && it.tts > now))
		return NULL;
	if (e->cfg.tbf_rate) {
		tb_refill(e, now);
		if (e->tb_toks < tb_need(e, it.len))
			return NULL;
		e->tb_toks -= (int64_t)it.len * NS;
	}
	if (e->dn)
		p = take_direct(e, NULL);
	else
		p = take_heap(e).pkt;
	/* out of order: an earlier arrival leaves after a later one */
	if (e->out_any && it.seq < e->out_seq)
		e->st.reordered++;
	else
		e->out_seq = it.seq;
	e->out_any = true;
	e->st.out_pkts++;
	e->st.out_bytes += it.len;
	if (len)
		*len = it.len;
	return p;
}

void *emu_drain(struct emu *e, uint32_t *len)
{
	struct emu_item it;

	if (e->dn)
		return take_direct(e, len);
	if (!e->nheap)
		return NULL;
	it = take_heap(e);
	if (len)
		*len = it.len;
	return it.pkt;
}

/* --- dial mapping and tables ------------------------------------------------ */

void emu_config_from_impair(struct emu_config *c, const struct impair *d)
{
	if (d->set & IMP_DELAY)
		c->delay = d->delay;
	if (d->set & IMP_JITTER)
		c->jitter = d->jitter;
	if (d->set & IMP_DELAY_CORR)
		c->delay_corr = d->delay_corr;
	if (d->set & IMP_LOSS) {
		c->loss_model = EMU_LOSS_RANDOM;
		c->loss = d->loss;
	}
	if (d->set & IMP_LOSS_CORR)
		c->loss_corr = d->loss_corr;
	if (d->set & IMP_DUP)
		c->duplicate = d->duplicate;
	if (d->set & IMP_DUP_CORR)
		c->dup_corr = d->dup_corr;
	if (d->set & IMP_CORRUPT)
		c->corrupt = d->corrupt;
	if (d->set & IMP_CORRUPT_CORR)
		c->corrupt_corr = d->corrupt_corr;
	if (d->set & IMP_REORDER) {
		c->reorder = d->reorder;
		c->gap = 1;
	}
	if (d->set & IMP_REORDER_CORR)
		c->reorder_corr = d->reorder_corr;
	if (d->set & IMP_GAP)
		c->gap = d->gap;
	if (d->set & IMP_RATE) {
		c->rate = d->rate / 8;
		if (c->rate == 0)
			c->rate = 1;
		c->rate_backlog_ns = (d->set & IMP_LATENCY) && d->tbf_latency > 0 ?
				     d->tbf_latency : 50000000;
	}
	if (d->set & IMP_LIMIT)
		c->limit = d->limit;
}

static bool has(const struct impair *d, uint32_t bit)
{
	return (d->set & bit) != 0;
}

/* Every dial field the model does not implement, listed in one message. */
static int unsupported(const struct impair *d, struct ll_err *err)
{
	static const struct { uint32_t bit; const char *name; } no[] = {
		{ IMP_SLOT, "slot" }, { IMP_SLOT_PACKETS, "slot-packets" },
		{ IMP_SLOT_BYTES, "slot-bytes" },
		{ IMP_DIRECTION, "direction" }, { IMP_DST, "dst" }, { IMP_DPORT, "dport" },
	};
	char list[128] = "";
	size_t i, n = 0;

	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (!has(d, no[i].bit))
			continue;
		/* harmless values: direction egress, an empty scope */
		if ((no[i].bit == IMP_DIRECTION && d->direction == IMP_EGRESS) ||
		    (no[i].bit == IMP_DST && d->dst_plen == 0) ||
		    (no[i].bit == IMP_DPORT && d->dport == 0))
			continue;
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "",
				      no[i].name);
		if (n >= sizeof(list))
			break;
	}
	if (!n)
		return 0;
	return ll_err_set(err, -EOPNOTSUPP,
			  "%s: not implemented by the user engine (it impairs every frame of a "
			  "direction; slot needs the kernel's netem)", list);
}

int emu_config_build(struct emu_config *c, const struct impair *d, uint64_t seed_fallback,
		     struct emu_dist *dist_storage, struct ll_err *err)
{
	static const char *const dist_file[] = { NULL, "normal", "pareto", "paretonormal" };
	struct impair_plan p;
	struct ll_diag diag;
	int i, rc;

	memset(c, 0, sizeof(*c));
	ll_diag_clear(&diag);
	if (impair_plan(d, 1500, hostinfo_kernel_hz(), &p, &diag) < 0) {
		for (i = 0; i < diag.n; i++)
			if (diag.e[i].level == LL_DIAG_ERROR)
				return ll_err_set(err, -EINVAL, "%s", diag.e[i].text);
		return ll_err_set(err, -EINVAL, "the dial does not validate");
	}
	rc = unsupported(d, err);
	if (rc < 0)
		return rc;

	/* netem */
	c->delay = has(d, IMP_DELAY) ? d->delay : 0;
	c->jitter = has(d, IMP_JITTER) ? d->jitter : 0;
	c->delay_corr = has(d, IMP_DELAY_CORR) ? d->delay_corr : 0;
	switch (p.loss_model) {
	case IMP_LOSSM_STATE:   /* plan: kernel order p13 p31 p32 p14 p23 */
		c->loss_model = EMU_LOSS_4STATE;
		c->p13 = p.gi[0];
		c->p31 = p.gi[1];
		c->p32 = p.gi[2];
		c->p14 = p.gi[3];
		c->p23 = p.gi[4];
		break;
	case IMP_LOSSM_GE:      /* plan: kernel p r h 1-k; the model wants 1-h */
		c->loss_model = EMU_LOSS_GE;
		c->ge_p = p.ge[0];
		c->ge_r = p.ge[1];
		c->ge_1h = UINT32_MAX - p.ge[2];
		c->ge_1k = p.ge[3];
		break;
	default:
		c->loss_model = EMU_LOSS_RANDOM;
		c->loss = has(d, IMP_LOSS) ? d->loss : 0;
		c->loss_corr = has(d, IMP_LOSS_CORR) ? d->loss_corr : 0;
		break;
	}
	c->duplicate = has(d, IMP_DUP) ? d->duplicate : 0;
	c->dup_corr = has(d, IMP_DUP_CORR) ? d->dup_corr : 0;
	c->corrupt = has(d, IMP_CORRUPT) ? d->corrupt : 0;
	c->corrupt_corr = has(d, IMP_CORRUPT_CORR) ? d->corrupt_corr : 0;
	if (has(d, IMP_REORDER)) {
		c->reorder = d->reorder;
		c->reorder_corr = has(d, IMP_REORDER_CORR) ? d->reorder_corr : 0;
		c->gap = has(d, IMP_GAP) ? d->gap : 1;
	}
	if (p.netem_rate_Bps) {
		c->rate = p.netem_rate_Bps;
		c->overhead = p.packet_overhead;
		c->cell_size = p.cell_size;
		c->cell_overhead = p.cell_overhead;
	}
	c->seed = has(d, IMP_SEED) ? d->seed : seed_fallback;
	c->ecn = p.ecn;

	/* tbf: the netem child replaces tbf's byte fifo in the kernel layout */
	if (p.tbf) {
		c->tbf_rate = p.rate_Bps;
		c->tbf_burst = p.burst;
		if (!p.netem)
			c->tbf_limit = p.tbf_limit;
	}
	if (p.netem)
		c->limit = p.limit ? p.limit : 1000;
	else if (p.tbf) {
		uint64_t n = p.tbf_limit / 64;

		c->limit = n < 1000 ? 1000 : n > 1048576 ? 1048576 : (uint32_t)n;
	} else
		c->limit = 1000;

	if (has(d, IMP_DIST) && d->dist > IMP_DIST_UNIFORM &&
	    d->dist < sizeof(dist_file) / sizeof(dist_file[0])) {
		if (!dist_storage)
			return ll_err_set(err, -EINVAL,
					  "distribution %s: no storage for the table",
					  dist_file[d->dist]);
		rc = emu_dist_find(dist_file[d->dist], dist_storage, err);
		if (rc < 0)
			return rc;
		c->dist = dist_storage;
	}
	return 0;
}

int emu_dist_find(const char *name, struct emu_dist *d, struct ll_err *err)
{
	static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu/tc",
					    "/usr/lib/aarch64-linux-gnu/tc", "/usr/lib/tc",
					    "/usr/lib64/tc", "/usr/local/lib/tc", NULL };
	char path[4096];
	int i;

	if (strchr(name, '/'))
		return emu_dist_load(name, d, err);
	for (i = 0; dirs[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s.dist", dirs[i], name);
		if (access(path, R_OK) == 0)
			return emu_dist_load(path, d, err);
	}
	if (!strcmp(name, "normal")) {
		emu_dist_normal(d, 4096);
		return 0;
	}
	return ll_err_set(err, -ENOENT,
			  "distribution '%s': no %s.dist in iproute2's tc directories (give a FILE)",
			  name, name);
}

void emu_dist_normal(struct emu_dist *d, int n)
{
	int i;

	if (n < 1)
		n = 1;
	if (n > EMU_DIST_MAX)
		n = EMU_DIST_MAX;
	d->n = n;
	for (i = 0; i < n; i++) {
		double q = (i + 0.5) / n, lo = -8, hi = 8, x, v;
		int k;

		/* bisection on Phi(x) = erfc(-x/sqrt 2)/2 */
		for (k = 0; k < 60; k++) {
			x = (lo + hi) / 2;
			if (0.5 * erfc(-x / M_SQRT2) < q)
				lo = x;
			else
				hi = x;
		}
		v = lround((lo + hi) / 2 * EMU_DIST_SCALE);
		if (v > INT16_MAX)
			v = INT16_MAX;
		if (v < INT16_MIN)
			v = INT16_MIN;
		d->t[i] = (int16_t)v;
	}
}

int emu_dist_load(const char *path, struct emu_dist *d, struct ll_err *err)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int lineno = 0, rc = 0;

	d->n = 0;
	if (!f)
		return ll_err_set(err, -errno, "distribution %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		lineno++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#')
			continue;
		for (;;) {
			long v;

			while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
				p++;
			if (!*p)
				break;
			errno = 0;
			v = strtol(p, &end, 10);
			if (end == p || errno || v < INT16_MIN || v > INT16_MAX) {
				rc = ll_err_set(err, -EINVAL,
						"distribution %s:%d: '%.20s' is not a 16-bit integer",
						path, lineno, p);
				goto out;
			}
			if (d->n >= EMU_DIST_MAX) {
				rc = ll_err_set(err, -EINVAL,
						"distribution %s: more than %d entries (NETEM_DIST_MAX)",
						path, EMU_DIST_MAX);
				goto out;
			}
			d->t[d->n++] = (int16_t)v;
			p = end;
		}
	}
	if (ferror(f))
		rc = ll_err_set(err, -EIO, "distribution %s: read error", path);
	else if (d->n == 0)
		rc = ll_err_set(err, -EINVAL, "distribution %s: no entries", path);
out:
	fclose(f);
	return rc;
}

/* --- live reconfiguration (bridge control socket) -------------------------- */

/* Move the queue into arrays of cap entries (the ring unrolled to start at
 * 0); the heap keeps its order. */
static int resize_queue(struct emu *e, uint32_t cap, struct ll_err *err)
{
	struct emu_item *heap = calloc(cap, sizeof(*heap));
	struct emu_item *direct = calloc(cap, sizeof(*direct));
	uint32_t i;

	if (!heap || !direct) {
		free(heap);
		free(direct);
		return ll_err_set(err, -ENOMEM, "emu: out of memory for a %u-packet queue", cap);
	}
	memcpy(heap, e->heap, (size_t)e->nheap * sizeof(*heap));
	for (i = 0; i < e->dn; i++)
		direct[i] = e->direct[(e->dhead + i) % e->cap];
	free(e->heap);
	free(e->direct);
	e->heap = heap;
	e->direct = direct;
	e->dhead = 0;
	e->cap = cap;
	return 0;
}

int emu_reconfigure(struct emu *e, const struct emu_config *c, struct ll_err *err)
{
	uint32_t limit = c->limit ? c->limit : 1000, qlen = e->nheap + e->dn, cap;
	uint64_t seed = e->cfg.seed;
	int rc = config_check(c, err);

	if (rc < 0)
		return rc;
	/* room for the new limit and for every frame queued now */
	cap = limit > qlen ? limit : qlen;
	if (cap != e->cap && (rc = resize_queue(e, cap, err)) < 0)
		return rc;
	if (c->loss_model != e->cfg.loss_model)
		e->lstate = 1;
	e->cfg = *c;
	e->cfg.limit = limit;
	e->cfg.seed = seed;             /* the PRNG stream goes on */
	e->delay_c.rho = c->delay_corr;
	e->loss_c.rho = c->loss_corr;
	e->dup_c.rho = c->dup_corr;
	e->corrupt_c.rho = c->corrupt_corr;
	e->reorder_c.rho = c->reorder_corr;
	/* the token bucket starts full again, as the kernel's tbf_change() */
	if (e->cfg.tbf_rate && e->cfg.tbf_burst == 0)
		e->cfg.tbf_burst = 1514;
	e->tb_burst = (int64_t)e->cfg.tbf_burst * NS;
	e->tb_toks = e->tb_burst;
	e->tb_t = INT64_MIN;
	return 0;
}
