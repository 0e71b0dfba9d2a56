/* SPDX-License-Identifier: MIT */
/* emu.c - the userspace impairment model (see emu.h for the rules and their
 * source in the kernel's sch_netem.c). Pure: time comes from the caller. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/emu.h"

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
	struct emu_stats st;
};

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

int emu_new(const struct emu_config *cfg, struct emu **out, struct ll_err *err)
{
	struct emu *e;
	uint64_t s;

	*out = NULL;
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
		f->lost = true;
		e->st.lost++;
		return;
	}
	if (c->corrupt && c->corrupt >= crandom(e, &e->corrupt_c) && len) {
		f->corrupt = true;
		f->corrupt_bit = emu_rand_u32(e) % (len * 8u);
		e->st.corrupted++;
	}
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
		e->st.reordered++;
	}
	qlen++;
	if (qlen > e->st.qlen_max)
		e->st.qlen_max = qlen;
	if (tts)
		*tts = it.tts;
	return 0;
}

int64_t emu_next_time(const struct emu *e)
{
	if (e->dn)
		return e->direct[e->dhead].tts;
	if (e->nheap)
		return e->heap[0].tts;
	return INT64_MAX;
}

static void *take_direct(struct emu *e, uint32_t *len)
{
	struct emu_item it = e->direct[e->dhead];

	e->dhead = (e->dhead + 1) % e->cap;
	e->dn--;
	if (len)
		*len = it.len;
	return it.pkt;
}

void *emu_dequeue(struct emu *e, int64_t now, uint32_t *len)
{
	struct emu_item it;
	void *p;

	if (e->dn) {
		uint32_t l;

		p = take_direct(e, &l);
		e->st.out_pkts++;
		e->st.out_bytes += l;
		if (len)
			*len = l;
		return p;
	}
	if (!e->nheap || e->heap[0].tts > now)
		return NULL;
	it = heap_pop(e);
	e->st.out_pkts++;
	e->st.out_bytes += it.len;
	if (len)
		*len = it.len;
	return it.pkt;
}

void *emu_drain(struct emu *e, uint32_t *len)
{
	struct emu_item it;

	if (e->dn)
		return take_direct(e, len);
	if (!e->nheap)
		return NULL;
	it = heap_pop(e);
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
