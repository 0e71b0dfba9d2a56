/* SPDX-License-Identifier: MIT */
/* test_console.c - the console controller against fake peers: preselection,
 * apply/clear with read-back (what the fake kernel holds, not what was
 * asked), error text, quit restoring only what was changed, test start
 * errors and a failing test pumped through the real engine. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "linklab/console/console.h"
#include "linklab/console/console_dial.h"
#include "linklab/console/console_peer.h"
#include "linklab/console/console_profile.h"
#include "linklab/console/console_safety.h"
#include "linklab/console/console_test.h"
#include "linklab/peer/hostinfo.h"
#include "linklab/peer/hosttune.h"
#include "linklab/traffic/serve.h"
#include "linklab/base/units.h"

#include <cmocka.h>

/* One fake host: a link list and one root qdisc per link. */
struct fake {
	struct link_list links;
	uint64_t rate[4];        /* tbf rate held per link (0 = noqueue) */
	int64_t delay[4];        /* netem root delay held (ns) when no rate */
	int napply, nclear, nclose, nserver;
	char cleared[8][IF_NAMESIZE];
	int apply_rc;            /* forced apply result (0 = ok) */
	bool no_timer;           /* apply: -ENOLCK unless safety.unarmed_ok */
	int nunarmed;            /* applies made with safety.unarmed_ok */
	const char *rmem;        /* tcp_rmem for sysctl_get, NULL = -ENOTSUP */
	const char *cc;          /* tcp_congestion_control for sysctl_get */
	int server_rc;           /* forced server_start result */
	/* the SSH safety ops (remote peer only) */
	char route[IF_NAMESIZE]; /* route_dev answer ("" = -ENOTSUP) */
	char sshflow_dev[IF_NAMESIZE];  /* sshflow: interface carrying the session */
	int keepalive_rc;        /* forced keepalive result */
	int nkeepalive, nsafety, nforced, ntune_restore, nsysctl_set;
	struct peer_safety safety;  /* last set_safety */
	int fd;                  /* poll_fd answer */
	int read_sleep_ms;       /* read_qdiscs takes this long (a slow peer) */
	int read_rc;             /* forced read_qdiscs result */
};

static int fake_idx(struct fake *f, const char *dev)
{
	int k;

	for (k = 0; k < f->links.n; k++)
		if (!strcmp(f->links.l[k].name, dev))
			return k;
	return -1;
}

static int fake_list(struct peer *p, struct link_list *out, struct ll_err *err)
{
	struct fake *f = p->priv;

	(void)err;
	*out = f->links;
	return 0;
}

static int fake_route(struct peer *p, const char *addr, char *dev, size_t len,
		      struct ll_err *err)
{
	struct fake *f = p->priv;

	(void)addr; (void)err;
	if (!f->route[0])
		return -ENOTSUP;
	snprintf(dev, len, "%s", f->route);
	return 0;
}

static int fake_read(struct peer *p, const char *dev, struct qdisc_state *out,
		     struct ll_err *err)
{
	struct fake *f = p->priv;
	int k = fake_idx(f, dev);

	if (f->read_sleep_ms > 0) {
		struct timespec ts = { f->read_sleep_ms / 1000,
				       (f->read_sleep_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
	if (f->read_rc)
		return ll_err_set(err, f->read_rc, "peer peer-b did not answer within 6 s (tc qdisc show)");
	if (k < 0)
		return ll_err_set(err, -ENODEV, "%s: no such device", dev);
	memset(out, 0, sizeof(*out));
	snprintf(out->dev, sizeof(out->dev), "%s", dev);
	out->n = 1;
	out->q[0].parent = 0xffffffffu;
	if (f->rate[k]) {
		snprintf(out->q[0].kind, sizeof(out->q[0].kind), "tbf");
		out->q[0].handle = 0x10000;
		out->q[0].rate = f->rate[k];
		out->q[0].burst = 6250;
		out->q[0].limit = 318750;
	} else if (f->delay[k]) {
		snprintf(out->q[0].kind, sizeof(out->q[0].kind), "netem");
		out->q[0].handle = 0x10000;
		out->q[0].delay = f->delay[k];
		out->q[0].limit = 1000;
	} else {
		snprintf(out->q[0].kind, sizeof(out->q[0].kind), "noqueue");
	}
	return 0;
}

static int fake_apply(struct peer *p, const char *dev, const struct impair *d,
		      struct ll_err *err)
{
	struct fake *f = p->priv;
	int k = fake_idx(f, dev);

	f->napply++;
	if (f->apply_rc)
		return ll_err_set(err, f->apply_rc, "tbf on %s: Operation not permitted",
				  dev);
	if (k < 0)
		return ll_err_set(err, -ENODEV, "%s: no such device", dev);
	/* the "kernel" keeps a rounded rate: what it holds differs */
	f->rate[k] = (d->set & IMP_RATE) ? d->rate - d->rate % 1000000 + 8 : 0;
	f->delay[k] = (d->set & IMP_DELAY) ? d->delay : 0;
	return 0;
}

static int fake_clear(struct peer *p, const char *dev, struct ll_err *err)
{
	struct fake *f = p->priv;
	int k = fake_idx(f, dev);

	if (k < 0)
		return ll_err_set(err, -ENODEV, "%s: no such device", dev);
	if (f->nclear < 8)
		snprintf(f->cleared[f->nclear], IF_NAMESIZE, "%s", dev);
	f->nclear++;
	f->rate[k] = 0;
	f->delay[k] = 0;
	return 0;
}

static int fake_server_start(struct peer *p, int *port, struct ll_err *err)
{
	struct fake *f = p->priv;

	f->nserver++;
	if (f->server_rc)
		return ll_err_set(err, f->server_rc, "linklab serve: not found");
	*port = 5299;
	return 0;
}

static int fake_server_stop(struct peer *p, struct ll_err *err)
{
	(void)p; (void)err;
	return 0;
}

static void fake_close(struct peer *p)
{
	struct fake *f = p->priv;

	f->nclose++;
}

static int fake_sysctl_get(struct peer *p, struct sysctl_state *out,
			   struct ll_err *err)
{
	struct fake *f = p->priv;

	memset(out, 0, sizeof(*out));
	if (!f->rmem)
		return ll_err_set(err, -ENOTSUP, "no sysctls here");
	snprintf(out->v[hosttune_sysctl_index("tcp_rmem")], 64, "%s", f->rmem);
	snprintf(out->v[hosttune_sysctl_index("tcp_adv_win_scale")], 64, "1");
	if (f->cc)
		snprintf(out->v[hosttune_sysctl_index("tcp_congestion_control")], 64, "%s", f->cc);
	return 0;
}

/* The local fake reads sysctls only: the rest of its tuning refuses. */
static int fake_offload_get(struct peer *p, const char *dev, struct offload_state *out,
			    struct ll_err *err)
{
	(void)p; (void)dev; (void)out;
	return ll_err_set(err, -ENOTSUP, "offloads not supported here");
}

static int fake_offload_set(struct peer *p, const char *dev,
			    const struct offload_state *want, struct ll_err *err)
{
	(void)p; (void)dev; (void)want;
	return ll_err_set(err, -ENOTSUP, "offloads not supported here");
}

static int fake_sysctl_refuse(struct peer *p, const char *name, const char *value,
			      struct ll_err *err)
{
	(void)p; (void)name; (void)value;
	return ll_err_set(err, -ENOTSUP, "setting sysctls not supported here");
}

static int fake_restore_none(struct peer *p, struct ll_err *err)
{
	(void)p; (void)err;
	return 0;
}

static const struct peer_tune_ops fake_tune_ops = {
	.offload_get = fake_offload_get,
	.offload_set = fake_offload_set,
	.sysctl_get = fake_sysctl_get,
	.sysctl_set = fake_sysctl_refuse,
	.tune_restore = fake_restore_none,
};

static const struct peer_ops fake_ops = {
	.name = "fake",
	.list_links = fake_list,
	.route_dev = fake_route,
	.read_qdiscs = fake_read,
	.apply = fake_apply,
	.clear = fake_clear,
	.server_start = fake_server_start,
	.server_stop = fake_server_stop,
	.close = fake_close,
	.tune = &fake_tune_ops,
};

/* The SSH safety ops of a remote peer (peer.h). */
static int fake_sshflow(struct peer *p, struct peer_sshflow *out, struct ll_err *err)
{
	struct fake *f = p->priv;

	if (!f->sshflow_dev[0])
		return ll_err_set(err, -ENOTSUP, "no session addresses");
	memset(out, 0, sizeof(*out));
	snprintf(out->client, sizeof(out->client), "10.77.0.1");
	out->client_port = 40000;
	snprintf(out->server, sizeof(out->server), "10.77.0.2");
	out->server_port = 22;
	snprintf(out->dev, sizeof(out->dev), "%s", f->sshflow_dev);
	return 0;
}

static void fake_set_safety(struct peer *p, const struct peer_safety *sf)
{
	struct fake *f = p->priv;

	f->nsafety++;
	f->safety = *sf;
}

static int fake_apply_ssh(struct peer *p, const char *dev, const struct impair *d,
			  struct ll_err *err)
{
	struct fake *f = p->priv;

	if (f->safety.force)
		f->nforced++;
	if (f->safety.unarmed_ok)
		f->nunarmed++;
	else if (f->no_timer)
		return ll_err_set(err, -ENOLCK,
				  "peer peer-b: no revert timer could be armed for %s", dev);
	return fake_apply(p, dev, d, err);
}

static const char *fake_warning(struct peer *p)
{
	struct fake *f = p->priv;

	return f->sshflow_dev[0] ? "veth-b carries this SSH session" : "";
}

static int fake_keepalive(struct peer *p, int *next_s, struct ll_err *err)
{
	struct fake *f = p->priv;

	f->nkeepalive++;
	*next_s = 15;
	if (f->keepalive_rc)
		return ll_err_set(err, f->keepalive_rc, "ssh peer-b: session lost: Connection reset by peer");
	return 0;
}

static int fake_poll_fd(struct peer *p)
{
	return ((struct fake *)p->priv)->fd;
}

static int fake_sysctl_set(struct peer *p, const char *name, const char *value,
			   struct ll_err *err)
{
	struct fake *f = p->priv;

	(void)name; (void)value; (void)err;
	f->nsysctl_set++;
	return 0;
}

static int fake_tune_restore(struct peer *p, struct ll_err *err)
{
	struct fake *f = p->priv;

	(void)err;
	f->ntune_restore++;
	return 0;
}

static const struct peer_session_ops fake_session_ops = {
	.sshflow = fake_sshflow,
	.warning = fake_warning,
	.keepalive = fake_keepalive,
	.poll_fd = fake_poll_fd,
	.abandon = fake_close,
};

static const struct peer_tune_ops fake_ssh_tune_ops = {
	.offload_get = fake_offload_get,
	.offload_set = fake_offload_set,
	.sysctl_get = fake_sysctl_get,
	.sysctl_set = fake_sysctl_set,
	.tune_restore = fake_tune_restore,
};

static const struct peer_ops fake_ssh_ops = {
	.name = "ssh",
	.list_links = fake_list,
	.route_dev = fake_route,
	.read_qdiscs = fake_read,
	.apply = fake_apply_ssh,
	.clear = fake_clear,
	.server_start = fake_server_start,
	.server_stop = fake_server_stop,
	.close = fake_close,
	.set_safety = fake_set_safety,
	.session = &fake_session_ops,
	.tune = &fake_ssh_tune_ops,
};

static void fake_add(struct fake *f, const char *name, const char *addr)
{
	struct link_info *l = &f->links.l[f->links.n++];

	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	snprintf(l->state, sizeof(l->state), "UP");
	l->up = true;
	l->mtu = strcmp(name, "lo") ? 1500 : 65536;
	l->naddrs = 1;
	snprintf(l->addrs[0], sizeof(l->addrs[0]), "%s", addr);
	snprintf(l->qdisc, sizeof(l->qdisc), "noqueue");
}

struct fix {
	struct fake fa, fb;
	struct peerset ps;
	struct console *c;
};

static struct fix *fix_new(bool with_b, const char *target)
{
	struct fix *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	struct ll_err err = { 0 };

	fake_add(&x->fa, "lo", "127.0.0.1/8");
	fake_add(&x->fa, "veth-a", "10.77.0.1/24");
	fake_add(&x->fb, "lo", "127.0.0.1/8");
	fake_add(&x->fb, "veth-b", "10.77.0.2/24");
	x->ps.a.ops = &fake_ops;
	x->ps.a.priv = &x->fa;
	snprintf(x->ps.a.label, sizeof(x->ps.a.label), "A (this host)");
	snprintf(x->ps.dev_a, sizeof(x->ps.dev_a), "veth-a");
	if (with_b) {
		x->ps.has_b = true;
		x->ps.b.ops = &fake_ops;
		x->ps.b.priv = &x->fb;
		snprintf(x->ps.b.label, sizeof(x->ps.b.label), "B (peer-b)");
		snprintf(x->ps.dev_b, sizeof(x->ps.dev_b), "veth-b");
		snprintf(x->ps.addr_b, sizeof(x->ps.addr_b), "10.77.0.2");
		snprintf(x->ps.target.alias, sizeof(x->ps.target.alias), "peer-b");
	}
	assert_int_equal(console_new(&x->c, &x->ps, target, 0, &err), 0);
	return x;
}

static void fix_free(struct fix *x)
{
	console_free(x->c);
	free(x);
}

static struct impair rate_dial(uint64_t bps)
{
	struct impair d;

	memset(&d, 0, sizeof(d));
	d.set = IMP_RATE;
	d.rate = bps;
	return d;
}

static void new_preselects_and_reads_back(void **state)
{
	struct fix *x = fix_new(true, NULL);
	const struct console_view *v = console_view(x->c);

	(void)state;
	assert_true(v->side[CONSOLE_IDX_A].present);
	assert_true(v->side[CONSOLE_IDX_B].present);
	assert_int_equal(v->side[CONSOLE_IDX_A].links.n, 2);
	assert_int_equal(v->side[CONSOLE_IDX_A].sel, 1);
	assert_string_equal(v->side[CONSOLE_IDX_A].dev, "veth-a");
	assert_string_equal(v->side[CONSOLE_IDX_A].route_dev, "veth-a");
	assert_string_equal(v->side[CONSOLE_IDX_B].dev, "veth-b");
	assert_true(v->side[CONSOLE_IDX_A].qd_valid);
	assert_string_equal(v->side[CONSOLE_IDX_A].qd.q[0].kind, "noqueue");
	assert_non_null(strstr(v->session, "peer-b"));
	assert_int_equal(v->dial_sides, CONSOLE_BOTH);
	console_free(x->c);
	assert_int_equal(x->fa.nclose, 1);
	assert_int_equal(x->fb.nclose, 1);
	free(x);
}

static void apply_keeps_what_kernel_holds(void **state)
{
	struct fix *x = fix_new(true, NULL);
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(50123456);
	struct ll_err err = { 0 };

	(void)state;
	assert_int_equal(console_apply(x->c, &d, CONSOLE_BOTH, &err), 0);
	assert_int_equal(x->fa.napply, 1);
	assert_int_equal(x->fb.napply, 1);
	/* the fake kernel holds 50000008 bit/s, not the 50123456 asked */
	assert_string_equal(v->side[CONSOLE_IDX_A].qd.q[0].kind, "tbf");
	assert_int_equal(v->side[CONSOLE_IDX_A].qd.q[0].rate, 50000008);
	assert_int_equal(v->side[CONSOLE_IDX_B].qd.q[0].rate, 50000008);
	assert_int_equal(v->side[CONSOLE_IDX_A].held.rate, 50000008);
	assert_string_equal(v->side[CONSOLE_IDX_A].links.l[1].qdisc, "tbf");
	assert_int_equal(v->dial.rate, 50123456);
	assert_non_null(strstr(v->status, "applied on A veth-a, B veth-b"));
	assert_string_equal(v->error, "");
	fix_free(x);
}

static void apply_one_side_only(void **state)
{
	struct fix *x = fix_new(true, NULL);
	struct impair d = rate_dial(10000000);

	(void)state;
	assert_int_equal(console_apply(x->c, &d, CONSOLE_B, NULL), 0);
	assert_int_equal(x->fa.napply, 0);
	assert_int_equal(x->fb.napply, 1);
	assert_string_equal(console_view(x->c)->side[CONSOLE_IDX_A].qd.q[0].kind, "noqueue");
	fix_free(x);
}

static void apply_eperm_says_needs_root(void **state)
{
	struct fix *x = fix_new(true, NULL);
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(50000000);
	struct ll_err err = { 0 };

	(void)state;
	x->fa.apply_rc = -EPERM;
	assert_int_equal(console_apply(x->c, &d, CONSOLE_BOTH, &err), -EPERM);
	assert_non_null(strstr(err.msg, "needs root"));
	assert_non_null(strstr(err.msg, "A: "));
	assert_non_null(strstr(v->side[CONSOLE_IDX_A].err, "needs root"));
	assert_non_null(strstr(v->error, "needs root"));
	/* all or nothing: B is not applied, A shows what it holds */
	assert_int_equal(x->fb.napply, 0);
	assert_non_null(strstr(err.msg, "B: not applied (A failed: all or nothing)"));
	assert_string_equal(v->side[CONSOLE_IDX_A].qd.q[0].kind, "noqueue");
	assert_string_equal(v->side[CONSOLE_IDX_B].qd.q[0].kind, "noqueue");
	fix_free(x);
}

/* A dial to both sides whose B part fails: A is put back, and said. */
static void apply_b_fails_rolls_a_back(void **state)
{
	struct fix *x = fix_new(true, NULL);
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(50000000);
	struct ll_err err = { 0 };
	char sum[128];

	(void)state;
	x->fb.apply_rc = -EINVAL;
	assert_int_equal(console_apply(x->c, &d, CONSOLE_BOTH, &err), -EINVAL);
	assert_int_equal(x->fa.napply, 1);
	assert_int_equal(x->fa.nclear, 1);          /* the rollback */
	assert_string_equal(x->fa.cleared[0], "veth-a");
	assert_string_equal(v->side[CONSOLE_IDX_A].qd.q[0].kind, "noqueue");
	assert_non_null(strstr(err.msg, "B failed, A rolled back (veth-a: "));
	assert_non_null(strstr(v->status, "nothing applied: B failed, A rolled back"));
	/* nothing left for quit */
	assert_int_equal(console_quit(x->c, sum, sizeof(sum), NULL), 0);
	assert_string_equal(sum, "nothing to restore");
	fix_free(x);
}

/* The rollback puts back what A held before (an earlier dial), not the
 * kernel default. */
static void apply_b_fails_restores_earlier_dial(void **state)
{
	struct fix *x = fix_new(true, NULL);
	const struct console_view *v = console_view(x->c);
	struct impair d1 = rate_dial(20000000), d2 = rate_dial(50000000);
	struct ll_err err = { 0 };

	(void)state;
	assert_int_equal(console_apply(x->c, &d1, CONSOLE_A, &err), 0);
	x->fb.apply_rc = -EIO;
	assert_true(console_apply(x->c, &d2, CONSOLE_BOTH, &err) < 0);
	assert_int_equal(x->fa.napply, 3);          /* d1, d2, d1 again */
	assert_true(v->side[CONSOLE_IDX_A].qd.q[0].rate / 1000000 == 20000000 / 1000000);
	assert_non_null(strstr(err.msg, "A rolled back"));
	fix_free(x);
}

static void apply_invalid_dial_touches_nothing(void **state)
{
	struct fix *x = fix_new(true, NULL);
	struct impair d;
	struct ll_err err = { 0 };

	(void)state;
	memset(&d, 0, sizeof(d));
	d.set = IMP_RATE;
	d.rate = 0;    /* rate 0 is refused by impair_validate */
	assert_int_equal(console_apply(x->c, &d, CONSOLE_BOTH, &err), -EINVAL);
	assert_true(err.msg[0] != '\0');
	assert_int_equal(x->fa.napply, 0);
	assert_int_equal(x->fb.napply, 0);
	assert_non_null(strstr(console_view(x->c)->error, "dial"));
	fix_free(x);
}

static void quit_restores_only_changed(void **state)
{
	struct fix *x = fix_new(true, NULL);
	struct impair d = rate_dial(20000000);
	char sum[256];
	struct ll_err err = { 0 };

	(void)state;
	assert_int_equal(console_apply(x->c, &d, CONSOLE_BOTH, NULL), 0);
	/* select lo on A and apply there too */
	assert_int_equal(console_select(x->c, CONSOLE_IDX_A, 0, NULL), 0);
	assert_string_equal(console_view(x->c)->side[CONSOLE_IDX_A].dev, "lo");
	assert_int_equal(console_apply(x->c, &d, CONSOLE_A, NULL), 0);
	assert_int_equal(console_quit(x->c, sum, sizeof(sum), &err), 0);
	assert_int_equal(x->fa.nclear, 2);
	assert_int_equal(x->fb.nclear, 1);
	assert_string_equal(x->fa.cleared[0], "veth-a");
	assert_string_equal(x->fa.cleared[1], "lo");
	assert_string_equal(x->fb.cleared[0], "veth-b");
	assert_string_equal(sum, "restored A veth-a, A lo, B veth-b");
	assert_int_equal(x->fa.rate[1], 0);
	/* a second quit has nothing left */
	assert_int_equal(console_quit(x->c, sum, sizeof(sum), &err), 0);
	assert_string_equal(sum, "nothing to restore");
	assert_int_equal(x->fa.nclear, 2);
	fix_free(x);
}

/* An impairment already there when the console opened (a `linklab apply`
 * before it) is put back on quit, not left at the kernel default. */
static void quit_puts_back_what_it_found(void **state)
{
	struct fix *x = fix_new(true, NULL);
	struct impair d = rate_dial(50000000);
	char sum[256];

	(void)state;
	x->fa.rate[1] = 20000008;   /* veth-a held tbf 20 Mbit/s before */
	assert_int_equal(console_refresh(x->c, NULL), 0);
	assert_int_equal(console_apply(x->c, &d, CONSOLE_BOTH, NULL), 0);
	assert_int_equal(x->fa.rate[1], 50000008);
	assert_int_equal(console_quit(x->c, sum, sizeof(sum), NULL), 0);
	/* A: the journal's prior state first (clear), then - as that reads
	 * as nothing, not the 20 Mbit/s it held - that dial re-applied */
	assert_int_equal(x->fa.nclear, 1);
	assert_int_equal(x->fa.napply, 2);
	assert_int_equal(x->fa.rate[1], 20000008);
	assert_int_equal(x->fb.nclear, 1);          /* B held noqueue: cleared */
	assert_int_equal(x->fb.rate[1], 0);
	fix_free(x);
}

static void clear_intent_unmarks(void **state)
{
	struct fix *x = fix_new(true, NULL);
	struct console_intent in;
	char sum[128];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.kind = CI_APPLY;
	in.dial = rate_dial(1000000);
	in.sides = CONSOLE_BOTH;
	assert_int_equal(console_do(x->c, &in, NULL), 0);
	in.kind = CI_CLEAR;
	assert_int_equal(console_do(x->c, &in, NULL), 0);
	assert_int_equal(x->fa.nclear, 1);
	assert_string_equal(console_view(x->c)->side[CONSOLE_IDX_A].qd.q[0].kind, "noqueue");
	assert_non_null(strstr(console_view(x->c)->status, "cleared"));
	assert_int_equal(console_quit(x->c, sum, sizeof(sum), NULL), 0);
	assert_string_equal(sum, "nothing to restore");
	assert_int_equal(x->fa.nclear, 1);
	fix_free(x);
}

static void select_out_of_range(void **state)
{
	struct fix *x = fix_new(false, NULL);
	struct ll_err err = { 0 };

	(void)state;
	assert_int_equal(console_select(x->c, CONSOLE_IDX_A, 5, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "out of range"));
	assert_int_equal(console_select(x->c, CONSOLE_IDX_B, 0, &err), -ENODEV);
	assert_false(console_view(x->c)->side[CONSOLE_IDX_B].present);
	fix_free(x);
}

static void test_start_errors(void **state)
{
	struct fix *x = fix_new(false, NULL);
	struct console_test_req r = { .streams = 2, .duration = 3, .interval = 1 };
	struct ll_err err = { 0 };

	(void)state;
	assert_int_equal(console_test_start(x->c, &r, &err), -EDESTADDRREQ);
	assert_non_null(strstr(err.msg, "-c ADDR"));
	assert_int_equal(console_test_fd(x->c), -1);
	fix_free(x);

	x = fix_new(true, NULL);
	r.streams = 0;
	assert_int_equal(console_test_start(x->c, &r, &err), -EINVAL);
	assert_int_equal(x->fb.nserver, 0);
	r.streams = 2;
	x->fb.server_rc = -ENOENT;
	assert_int_equal(console_test_start(x->c, &r, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "start test server"));
	assert_int_equal(x->fb.nserver, 1);
	assert_int_equal(console_test_fd(x->c), -1);
	fix_free(x);
}

/* A port on loopback with nothing listening. */
static int closed_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static void test_failure_is_pumped(void **state)
{
	struct fix *x;
	struct console_test_req r = { .streams = 1, .duration = 2, .interval = 1 };
	struct ll_err err = { 0 };
	struct pollfd pfd;
	struct console *c;
	int k, fd;

	(void)state;
	x = calloc(1, sizeof(*x));
	assert_non_null(x);
	fake_add(&x->fa, "lo", "127.0.0.1/8");
	x->ps.a.ops = &fake_ops;
	x->ps.a.priv = &x->fa;
	assert_int_equal(console_new(&c, &x->ps, "127.0.0.1", closed_port(), &err), 0);
	x->c = c;
	assert_non_null(strstr(console_view(c)->session, "127.0.0.1"));
	r.bitrate = 3000000;
	assert_int_equal(console_test_start(c, &r, &err), 0);
	/* -b caps the senders: theory says sender-limited, streams x -b */
	assert_non_null(strstr(console_view(c)->theory.line, "sender-limited"));
	assert_true(console_view(c)->theory.expect_bps == 3000000.0 * r.streams);
	assert_int_equal(console_view(c)->test.opts.bitrate, 3000000);
	assert_int_equal(console_test_start(c, &r, &err), -EBUSY);
	for (k = 0; k < 100 && console_view(c)->test.state != CONSOLE_TEST_FAILED; k++) {
		fd = console_test_fd(c);
		if (fd < 0)
			break;
		pfd.fd = fd;
		pfd.events = POLLIN;
		poll(&pfd, 1, 100);
		console_test_pump(c);
	}
	assert_int_equal(console_view(c)->test.state, CONSOLE_TEST_FAILED);
	assert_true(console_view(c)->test.err[0] != '\0');
	assert_non_null(strstr(console_view(c)->error, "test: "));
	assert_int_equal(console_test_fd(c), -1);
	fix_free(x);
}

/* A one-off linklab server on loopback in a thread. */
struct srv {
	pthread_t th;
	volatile sig_atomic_t stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int port;
	int rc;
};

static void srv_listen(void *ctx, int port)
{
	struct srv *s = ctx;

	pthread_mutex_lock(&s->mu);
	s->port = port;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void *srv_main(void *arg)
{
	struct srv *s = arg;
	struct serve_opts o = { .port = 0, .one_off = true };
	struct ll_err err = { 0 };

	snprintf(o.bind, sizeof(o.bind), "127.0.0.1");
	s->rc = serve_run(&o, &s->stop, srv_listen, NULL, s, &err);
	srv_listen(s, -1);    /* wake the waiter if it never listened */
	return NULL;
}

/* A one-off linklab server on loopback in a thread: s->port once it listens. */
static void srv_start(struct srv *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	assert_int_equal(pthread_create(&s->th, NULL, srv_main, s), 0);
	pthread_mutex_lock(&s->mu);
	while (s->port == 0)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	assert_true(s->port > 0);
}

/* A fixture whose A is a fake with lo, its console testing 127.0.0.1:port. */
static struct fix *fix_loopback(int port)
{
	struct fix *x = calloc(1, sizeof(*x));
	struct ll_err err = { 0 };

	assert_non_null(x);
	fake_add(&x->fa, "lo", "127.0.0.1/8");
	x->ps.a.ops = &fake_ops;
	x->ps.a.priv = &x->fa;
	assert_int_equal(console_new(&x->c, &x->ps, "127.0.0.1", port, &err), 0);
	return x;
}

static void test_runs_and_scales_to_held_rate(void **state)
{
	struct fix *x;
	struct srv s;
	struct console_test_req r = { .streams = 2, .duration = 1, .interval = 0.5 };
	struct ll_err err = { 0 };
	struct impair d = rate_dial(40000000);
	const struct console_test_view *tv;
	struct pollfd pfd;
	struct console *c;
	int k, fd;
	char xdg[] = "/tmp/llD2-xdg-XXXXXX", cmdbuf[128];

	(void)state;
	assert_non_null(mkdtemp(xdg));
	setenv("XDG_DATA_HOME", xdg, 1);
	srv_start(&s);
	x = fix_loopback(s.port);
	c = x->c;
	/* the fake A holds 40000008 bit/s after this */
	assert_int_equal(console_apply(c, &d, CONSOLE_A, &err), 0);
	assert_int_equal(console_test_start(c, &r, &err), 0);
	tv = &console_view(c)->test;
	for (k = 0; k < 200 && tv->state != CONSOLE_TEST_DONE &&
		    tv->state != CONSOLE_TEST_FAILED; k++) {
		fd = console_test_fd(c);
		if (fd < 0)
			break;
		pfd.fd = fd;
		pfd.events = POLLIN;
		poll(&pfd, 1, 100);
		console_test_pump(c);
	}
	assert_string_equal(tv->err, "");
	assert_int_equal(tv->state, CONSOLE_TEST_DONE);
	assert_true(tv->nintervals >= 2);
	assert_int_equal(tv->nhist, tv->nintervals);
	assert_int_equal(tv->last.nstreams, 2);
	assert_true(tv->max_sum_bps > 0);
	assert_true(tv->have_summary);
	assert_int_equal(tv->summary.nstreams, 2);
	assert_true(tv->summary.sum_received.bytes > 0);
	/* bars scale to the rate the sender holds, not to what was seen */
	assert_true(tv->scale_dialled);
	assert_true(tv->scale_bps == 40000008.0);
	assert_int_equal(console_test_fd(c), -1);
	/* the run was saved with its chart, CSV and the dial held */
	{
		char p[PATH_MAX + 32], line[256];
		const struct client_interval *ivs;
		int n, rows = 0;
		FILE *f;

		ivs = console_test_intervals(c, &n);
		assert_non_null(ivs);
		assert_int_equal(n, tv->nintervals);
		assert_int_equal(strncmp(tv->saved_dir, xdg, strlen(xdg)), 0);
		snprintf(p, sizeof(p), "%s/run.svg", tv->saved_dir);
		assert_int_equal(access(p, R_OK), 0);
		snprintf(p, sizeof(p), "%s/intervals.csv", tv->saved_dir);
		f = fopen(p, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "interval,", 9))
				rows++;
		fclose(f);
		assert_int_equal(rows, 3 * n);
		snprintf(p, sizeof(p), "%s/profile.ini", tv->saved_dir);
		f = fopen(p, "r");
		assert_non_null(f);
		rows = 0;
		while (fgets(line, sizeof(line), f))
			if (!strcmp(line, "rate = 40000008bit\n"))
				rows++;
		fclose(f);
		assert_int_equal(rows, 1);
		/* w saves again into a new directory */
		snprintf(p, sizeof(p), "%s", tv->saved_dir);
		assert_int_equal(console_test_save(c, &err), 0);
		assert_string_not_equal(p, tv->saved_dir);
	}
	/* the measured RTT counts only under the dials it was
	 * measured with; a dial changed since gives dialled + measured base */
	{
		const struct console_view *v = console_view(c);
		struct impair dd = { 0 };
		double rtt = tv->rtt_s;

		assert_true(rtt > 0);
		assert_true(v->theory_rtt_measured);
		assert_true(v->theory_rtt == rtt);
		assert_true(v->theory_comparable);
		dd.set = IMP_DELAY;
		dd.delay = 840000000;       /* 840 ms, as the edge profile */
		assert_int_equal(console_apply(c, &dd, CONSOLE_A, &err), 0);
		assert_int_equal(v->path.rtt_added, 840000000);
		assert_false(v->theory_rtt_measured);
		/* no rate dialled: nothing to compare a run with, and no -P
		 * advice */
		assert_false(v->theory_comparable);
		assert_null(strstr(v->theory.line, "try -P"));
		/* loopback's base: at most the run's smallest RTT */
		assert_true(v->theory_rtt_base >= 0);
		assert_true(v->theory_rtt_base <= tv->rtt_min_s + 1e-9);
		assert_true(fabs(v->theory_rtt - 0.840 - v->theory_rtt_base) < 1e-9);
		/* cleared: no stale 840 ms either */
		assert_int_equal(console_clear(c, CONSOLE_A, &err), 0);
		assert_false(v->theory_rtt_measured);
		assert_true(v->theory_rtt == v->theory_rtt_base);
		assert_false(v->theory_comparable);
		/* back to the dials it was measured under: measured again */
		assert_int_equal(console_apply(c, &d, CONSOLE_A, &err), 0);
		assert_true(v->theory_rtt_measured);
		assert_true(v->theory_rtt == rtt);
	}
	snprintf(cmdbuf, sizeof(cmdbuf), "rm -rf %s", xdg);
	assert_int_equal(system(cmdbuf), 0);
	pthread_join(s.th, NULL);
	assert_int_equal(s.rc, 0);
	fix_free(x);
}


/* A dial that changes while a run goes on (here A's rate removed, as when
 * linklab's engine dies): the run says so, with when, and its saved
 * profile.ini holds the dial it started under, described as not held
 * throughout. */
static void test_dial_change_during_run_is_said(void **state)
{
	struct fix *x;
	struct srv s;
	struct console_test_req r = { .streams = 1, .duration = 2, .interval = 0.5 };
	struct ll_err err = { 0 };
	struct impair d = rate_dial(40000000);
	const struct console_test_view *tv;
	struct pollfd pfd;
	struct console *c;
	int k, fd, rows = 0, said = 0;
	bool changed = false;
	char xdg[] = "/tmp/llD2-xdg-XXXXXX", cmdbuf[128], p[PATH_MAX + 32], line[512];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(xdg));
	setenv("XDG_DATA_HOME", xdg, 1);
	srv_start(&s);
	x = fix_loopback(s.port);
	c = x->c;
	assert_int_equal(console_apply(c, &d, CONSOLE_A, &err), 0);
	assert_int_equal(console_test_start(c, &r, &err), 0);
	tv = &console_view(c)->test;
	assert_string_equal(tv->dial_note, "");
	for (k = 0; k < 200 && tv->state != CONSOLE_TEST_DONE &&
		    tv->state != CONSOLE_TEST_FAILED; k++) {
		fd = console_test_fd(c);
		if (fd < 0)
			break;
		pfd.fd = fd;
		pfd.events = POLLIN;
		poll(&pfd, 1, 100);
		console_test_pump(c);
		/* the same dial read back: nothing to say */
		assert_int_equal(console_tick(c, false), 1);
		if (tv->nintervals >= 1 && !changed) {
			assert_string_equal(tv->dial_note, "");
			x->fa.rate[0] = 0;       /* lo holds nothing any more */
			changed = true;
			assert_int_equal(console_tick(c, false), 1);
		}
	}
	assert_int_equal(tv->state, CONSOLE_TEST_DONE);
	assert_true(changed);
	assert_non_null(strstr(tv->dial_note, "s into the run: A's dial changed: was 'rate 40000008bit"));
	assert_non_null(strstr(tv->dial_note, "now 'none'"));
	/* saved: the dial the run started under, and that it did not hold */
	snprintf(p, sizeof(p), "%s/profile.ini", tv->saved_dir);
	f = fopen(p, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strcmp(line, "rate = 40000008bit\n"))
			rows++;
		if (strstr(line, "NOT held throughout: ") && strstr(line, "A's dial changed"))
			said++;
	}
	fclose(f);
	assert_int_equal(rows, 1);
	assert_int_equal(said, 1);
	snprintf(cmdbuf, sizeof(cmdbuf), "rm -rf %s", xdg);
	assert_int_equal(system(cmdbuf), 0);
	pthread_join(s.th, NULL);
	assert_int_equal(s.rc, 0);
	fix_free(x);
}


static void path_sums_delay_and_combines_loss(void **state)
{
	struct impair a = { 0 }, b = { 0 };
	struct console_path p;

	(void)state;
	a.set = IMP_RATE | IMP_DELAY | IMP_LOSS;
	a.rate = 50000000;
	a.delay = 50000000;
	a.loss = units_percent_to_prob(1);
	b.set = IMP_DELAY | IMP_LOSS;
	b.delay = 30000000;
	b.loss = units_percent_to_prob(2);
	console_path_compute(&a, &b, &p);
	assert_true(p.valid);
	assert_int_equal(p.rate_ab, 50000000);
	assert_int_equal(p.rate_ba, 0);
	assert_int_equal(p.rtt_added, 80000000);
	/* a round trip survives only if neither direction drops: 1-(.99)(.98) */
	assert_true(fabs(p.loss_rt - 0.0298) < 1e-6);
	assert_non_null(strstr(p.line, "A->B 50mbit/50ms/1%"));
	assert_non_null(strstr(p.line, "B->A unshaped/30ms/2%"));
	assert_non_null(strstr(p.line, "RTT +80ms, loss 2.98%"));
	/* one side only */
	console_path_compute(NULL, &b, &p);
	assert_true(p.valid);
	assert_int_equal(p.rtt_added, 30000000);
	console_path_compute(NULL, NULL, &p);
	assert_false(p.valid);
}

static void theory_follows_what_is_held(void **state)
{
	struct fix *x = fix_new(true, NULL);
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(50000000);
	struct ll_err err = { 0 };

	(void)state;
	assert_int_equal(v->theory.bound, THEORY_NONE);
	assert_int_equal(console_apply(x->c, &d, CONSOLE_A, &err), 0);
	/* the fake kernel holds 50000008 bit/s: theory uses what is held */
	assert_int_equal(v->path.rate_ab, 50000008);
	assert_int_equal(v->theory.bound, THEORY_RATE);
	assert_true(fabs(v->theory.expect_bps - 50000008.0 * 1448 / 1514) < 1);
	assert_non_null(strstr(v->theory.line, "rate-limited"));
	assert_false(v->theory_rtt_measured);
	/* no sysctls from the receiver (B): this host's window */
	assert_true(v->window == hostinfo_local_window());
	/* B's tcp_rmem max 6 MiB, adv_win_scale 1: a 3 MiB window; 100 ms
	 * of dialled RTT (as seed 000) makes one stream window-limited */
	x->fb.rmem = "4096 131072 6291456";
	x->fb.cc = "bbr";
	assert_int_equal(console_refresh(x->c, &err), 0);
	assert_int_equal(v->side[1].rcv_window, 3145728);
	/* its congestion control too, for the theory's loss ceiling */
	assert_string_equal(v->side[1].cc, "bbr");
	assert_int_equal(v->window, 3145728);
	/* live counters: a tick re-reads A only (B is an SSH round trip) */
	x->fb.rate[1] = 7000000;
	assert_int_equal(console_tick(x->c, false), 1);
	assert_string_equal(v->side[1].held_text, "noqueue");
	assert_int_equal(console_tick(x->c, true), 1);
	assert_non_null(strstr(v->side[1].held_text, "tbf"));
	assert_int_equal(v->path.rate_ba, 7000000);
	fix_free(x);
}

/* Write a profile file into dir. */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int prof_idx(const struct console_view *v, const char *name)
{
	int k;

	for (k = 0; k < v->nprofiles; k++)
		if (!strcmp(v->profiles[k].name, name))
			return k;
	return -1;
}

static void profiles_apply_save_rename_delete(void **state)
{
	char dir[] = "/tmp/llD2-prof-XXXXXX", path[512], cmd[600];
	struct fix *x;
	const struct console_view *v;
	struct ll_err err = { 0 };
	int k;

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("LINKLAB_PROFILE_PATH", dir, 1);
	put_file(dir, "updown.ini",
		 "[profile]\nname = Up/Down\ndescription = asymmetric\n"
		 "[a]\nrate = 10mbit\n[b]\nrate = 20mbit\n");
	put_file(dir, "broken.ini", "[dial]\nrate = 10mbit\nspeed = 3\n");
	x = fix_new(true, NULL);
	v = console_view(x->c);
	assert_int_equal(console_profiles_reload(x->c, &err), 0);
	assert_true(v->nprofiles >= 2);
	k = prof_idx(v, "updown");
	assert_true(k >= 0);
	assert_true(v->profiles[k].valid);
	assert_true(v->profiles[k].user);
	assert_true(v->profiles[k].per_side);
	assert_string_equal(v->profiles[k].title, "Up/Down");
	/* [a] goes to A, [b] to B */
	assert_int_equal(console_profile_apply(x->c, k, CONSOLE_BOTH, &err), 0);
	assert_int_equal(x->fa.rate[1], 10000008);
	assert_int_equal(x->fb.rate[1], 20000008);
	assert_string_equal(v->profile_name, "updown");
	assert_non_null(strstr(v->status, "profile updown"));
	/* a broken profile: refused with file:line, nothing applied */
	k = prof_idx(v, "broken");
	assert_false(v->profiles[k].valid);
	snprintf(path, sizeof(path), "%s/broken.ini:3:", dir);
	assert_non_null(strstr(v->profiles[k].problems[0], path));
	x->fa.napply = 0;
	assert_int_equal(console_profile_apply(x->c, k, CONSOLE_BOTH, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "speed"));
	assert_int_equal(x->fa.napply, 0);
	assert_int_equal(console_profile_apply(x->c, 99, CONSOLE_BOTH, &err), -EINVAL);
	/* save what both sides hold, per side; it loads back the same */
	assert_int_equal(console_profile_save(x->c, "held", &err), 0);
	k = prof_idx(v, "held");
	assert_true(k >= 0);
	assert_true(v->profiles[k].valid);
	assert_true(v->profiles[k].per_side);
	assert_int_equal(v->profiles[k].a.rate, 10000008);
	assert_int_equal(v->profiles[k].b.rate, 20000008);
	assert_int_equal(console_profile_save(x->c, "bad/name", &err), -EINVAL);
	assert_non_null(strstr(v->error, "bad/name"));
	/* nothing held on either side (cleared): the dial as set is saved,
	 * for both sides, and the status says it is not what the peers hold */
	{
		struct console_intent in;

		memset(&in, 0, sizeof(in));
		in.kind = CI_CLEAR;
		in.sides = CONSOLE_BOTH;
		assert_int_equal(console_do(x->c, &in, &err), 0);
		in.kind = CI_SET_DIAL;
		in.dial = rate_dial(3000000);
		in.sides = CONSOLE_BOTH;
		assert_int_equal(console_do(x->c, &in, &err), 0);
		assert_int_equal(console_profile_save(x->c, "dialonly", &err), 0);
		assert_non_null(strstr(v->status, "nothing is held: the dial's values"));
		k = prof_idx(v, "dialonly");
		assert_true(k >= 0);
		assert_int_equal(v->profiles[k].a.rate, 3000000);
		assert_int_equal(v->profiles[k].b.rate, 3000000);
		assert_int_equal(console_profile_delete(x->c, k, &err), 0);
	}
	/* apply one side only */
	x->fa.rate[1] = 0;
	x->fb.rate[1] = 0;
	assert_int_equal(console_profile_apply(x->c, prof_idx(v, "held"), CONSOLE_B, &err), 0);
	assert_int_equal(x->fa.rate[1], 0);
	assert_int_equal(x->fb.rate[1], 20000000 + 8);
	/* rename keeps the dials and sets the name; delete removes it */
	assert_int_equal(console_profile_rename(x->c, prof_idx(v, "held"), "kept", &err), 0);
	assert_int_equal(prof_idx(v, "held"), -1);
	k = prof_idx(v, "kept");
	assert_true(k >= 0);
	assert_string_equal(v->profiles[k].title, "kept");
	assert_int_equal(v->profiles[k].b.rate, 20000008);
	assert_int_equal(console_profile_rename(x->c, k, "updown", &err), -EEXIST);
	assert_int_equal(console_profile_delete(x->c, prof_idx(v, "kept"), &err), 0);
	assert_int_equal(prof_idx(v, "kept"), -1);
	snprintf(path, sizeof(path), "%s/kept.ini", dir);
	assert_int_not_equal(access(path, F_OK), 0);
	/* shipped profiles are read-only */
	assert_int_equal(profile_delete("profiles/3g.ini", &err), -EPERM);
	assert_int_equal(access("profiles/3g.ini", F_OK), 0);
	fix_free(x);
	unsetenv("LINKLAB_PROFILE_PATH");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* A fixture whose B has the SSH safety ops; veth-a (A's route to B's sshd)
 * and veth-b (B's route back to the client) carry the session. */
static struct fix *fix_ssh(void)
{
	struct fix *x = calloc(1, sizeof(*x));
	struct ll_err err = { 0 };
	struct peer_safety sf = { .revert_s = 7, .hold = true };

	assert_non_null(x);
	fake_add(&x->fa, "lo", "127.0.0.1/8");
	fake_add(&x->fa, "veth-a", "10.77.0.1/24");
	fake_add(&x->fb, "lo", "127.0.0.1/8");
	fake_add(&x->fb, "veth-b", "10.77.0.2/24");
	snprintf(x->fa.route, sizeof(x->fa.route), "veth-a");
	snprintf(x->fb.sshflow_dev, sizeof(x->fb.sshflow_dev), "veth-b");
	x->fb.fd = 42;
	x->ps.a.ops = &fake_ops;
	x->ps.a.priv = &x->fa;
	snprintf(x->ps.a.label, sizeof(x->ps.a.label), "A (this host)");
	snprintf(x->ps.dev_a, sizeof(x->ps.dev_a), "veth-a");
	x->ps.has_b = true;
	x->ps.b.ops = &fake_ssh_ops;
	x->ps.b.priv = &x->fb;
	snprintf(x->ps.b.label, sizeof(x->ps.b.label), "B (peer-b)");
	snprintf(x->ps.dev_b, sizeof(x->ps.dev_b), "veth-b");
	snprintf(x->ps.addr_b, sizeof(x->ps.addr_b), "10.77.0.2");
	snprintf(x->ps.target.alias, sizeof(x->ps.target.alias), "peer-b");
	assert_int_equal(console_new(&x->c, &x->ps, NULL, 0, &err), 0);
	console_set_safety(x->c, &sf);
	return x;
}

static struct console_intent apply_intent(const struct impair *d, unsigned sides)
{
	struct console_intent in;

	memset(&in, 0, sizeof(in));
	in.kind = CI_APPLY;
	in.dial = *d;
	in.sides = sides;
	return in;
}

/* The dial touches the session's interfaces: nothing is applied until the
 * user says y; then both sides get it and B's warning is shown. */
static void apply_on_session_link_asks_first(void **state)
{
	struct fix *x = fix_ssh();
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(10000000);
	struct console_intent in = apply_intent(&d, CONSOLE_BOTH);
	struct ll_err err = { 0 };

	(void)state;
	assert_int_equal(v->revert_s, 7);
	assert_int_equal(console_do(x->c, &in, &err), -EAGAIN);
	assert_true(v->confirm.pending);
	assert_false(v->confirm.need_force);
	assert_int_equal(x->fa.napply, 0);
	assert_int_equal(x->fb.napply, 0);
	/* one warning line per side, naming the interface and the session */
	assert_non_null(strstr(v->confirm.text, "A (this host) veth-a carries the SSH session"));
	assert_non_null(strstr(v->confirm.text, "\nB (peer-b) veth-b carries the SSH session"));
	assert_non_null(strstr(v->confirm.text, "10.77.0.1:40000 -> 10.77.0.2:22"));
	assert_non_null(strstr(v->status, "y applies"));
	/* y */
	in.confirmed = true;
	assert_int_equal(console_do(x->c, &in, &err), 0);
	assert_false(v->confirm.pending);
	assert_int_equal(x->fa.napply, 1);
	assert_int_equal(x->fb.napply, 1);
	assert_int_equal(x->fb.nforced, 0);
	assert_string_equal(v->b_warning, "veth-b carries this SSH session");
	assert_non_null(strstr(v->status, "applied on A veth-a, B veth-b"));
	assert_non_null(strstr(v->status, "B: veth-b carries this SSH session"));
	assert_true(v->revert_deadline == 0);     /* confirmed: nothing armed */
	fix_free(x);
}

/* An interface that does not carry the session applies at once. */
static void apply_elsewhere_does_not_ask(void **state)
{
	struct fix *x = fix_ssh();
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(10000000);
	struct console_intent in = apply_intent(&d, CONSOLE_B);
	char warn[256];

	(void)state;
	assert_int_equal(console_select(x->c, CONSOLE_IDX_B, 0, NULL), 0);   /* lo */
	assert_int_equal(console_apply_check(x->c, &d, CONSOLE_B, false, warn, sizeof(warn), NULL), 0);
	assert_string_equal(warn, "");
	assert_int_equal(console_do(x->c, &in, NULL), 0);
	assert_false(v->confirm.pending);
	assert_int_equal(x->fb.napply, 1);
	fix_free(x);
}

/* 100 % loss on the session's interface is refused without force; y
 * forces it on B for that apply only, n leaves everything alone. */
static void full_loss_needs_force(void **state)
{
	struct fix *x = fix_ssh();
	const struct console_view *v = console_view(x->c);
	struct impair d;
	struct console_intent in;
	struct ll_err err = { 0 };
	char warn[512];

	(void)state;
	memset(&d, 0, sizeof(d));
	d.set = IMP_LOSS;
	d.loss = UINT32_MAX;
	assert_int_equal(console_apply_check(x->c, &d, CONSOLE_B, false, warn, sizeof(warn), &err),
			 -EPERM);
	assert_non_null(strstr(err.msg, "100% loss would cut it"));
	assert_non_null(strstr(err.msg, "--force"));
	assert_int_equal(console_apply_check(x->c, &d, CONSOLE_B, true, warn, sizeof(warn), &err), 0);
	assert_non_null(strstr(warn, "veth-b carries the SSH session"));
	in = apply_intent(&d, CONSOLE_B);
	assert_int_equal(console_do(x->c, &in, &err), -EAGAIN);
	assert_true(v->confirm.pending);
	assert_true(v->confirm.need_force);
	assert_non_null(strstr(v->confirm.text, "refused"));
	/* n */
	in.kind = CI_CONFIRM_CANCEL;
	assert_int_equal(console_do(x->c, &in, NULL), 0);
	assert_false(v->confirm.pending);
	assert_int_equal(x->fb.napply, 0);
	assert_non_null(strstr(v->status, "cancelled"));
	/* again, then y with force */
	in = apply_intent(&d, CONSOLE_B);
	assert_int_equal(console_do(x->c, &in, NULL), -EAGAIN);
	in.confirmed = true;
	in.force = v->confirm.need_force;
	assert_int_equal(console_do(x->c, &in, NULL), 0);
	assert_int_equal(x->fb.napply, 1);
	assert_int_equal(x->fb.nforced, 1);
	/* the baseline (no force, revert 7 s, hold) is back afterwards */
	assert_false(x->fb.safety.force);
	assert_int_equal(x->fb.safety.revert_s, 7);
	assert_true(x->fb.safety.hold);
	fix_free(x);
}

/* B's session dies: the console says so, keeps working on A, and quitting
 * restores A only (B restores itself). */
static void lost_session_keeps_a_usable(void **state)
{
	struct fix *x = fix_ssh();
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(20000000);
	struct console_intent in = apply_intent(&d, CONSOLE_BOTH);
	char sum[256];
	int next = -1;

	(void)state;
	in.confirmed = true;
	assert_int_equal(console_do(x->c, &in, NULL), 0);
	assert_int_equal(console_peer_fd(x->c), 42);
	assert_int_equal(console_keepalive(x->c, false, &next), 0);
	assert_int_equal(next, 15);
	assert_false(v->b_lost);
	x->fb.keepalive_rc = -EIO;
	assert_int_equal(console_keepalive(x->c, false, &next), 1);
	assert_true(v->b_lost);
	assert_non_null(strstr(v->b_lost_msg, "peer B lost: it restores itself within 7 s"));
	assert_non_null(strstr(v->b_lost_msg, "Connection reset by peer"));
	assert_non_null(strstr(v->status, "peer B lost"));
	assert_int_equal(console_peer_fd(x->c), -1);
	/* no more keepalives on a dead session */
	assert_int_equal(console_keepalive(x->c, false, &next), 0);
	assert_int_equal(x->fb.nkeepalive, 2);
	/* A still applies; B is not touched */
	d = rate_dial(30000000);
	in = apply_intent(&d, CONSOLE_BOTH);
	in.confirmed = true;
	assert_int_equal(console_do(x->c, &in, NULL), 0);
	assert_int_equal(x->fa.napply, 2);
	assert_int_equal(x->fb.napply, 1);
	assert_int_equal(x->fa.rate[1], 30000008);
	/* B alone: refused with the lost message */
	in.sides = CONSOLE_B;
	assert_int_equal(console_do(x->c, &in, NULL), -ENOTCONN);
	assert_non_null(strstr(v->error, "peer B lost"));
	assert_int_equal(console_tick(x->c, true), 1);
	assert_int_equal(console_quit(x->c, sum, sizeof(sum), NULL), 0);
	assert_string_equal(sum, "restored A veth-a, B lost (restores itself)");
	assert_int_equal(x->fa.nclear, 1);
	assert_int_equal(x->fb.nclear, 0);
	fix_free(x);
}

/* POLLHUP on the session socket: lost without a keepalive round trip. */
static void hangup_marks_lost(void **state)
{
	struct fix *x = fix_ssh();
	int next = -1;

	(void)state;
	assert_int_equal(console_keepalive(x->c, true, &next), 1);
	assert_true(console_view(x->c)->b_lost);
	assert_int_equal(x->fb.nkeepalive, 0);
	assert_non_null(strstr(console_view(x->c)->b_lost_msg, "closed"));
	fix_free(x);
}

/* The session dies during B's apply: the armed revert deadline stays in
 * the view for the countdown. */
static void lost_during_apply_keeps_countdown(void **state)
{
	struct fix *x = fix_ssh();
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(20000000);
	struct console_intent in = apply_intent(&d, CONSOLE_B);
	struct timespec ts;
	double now;

	(void)state;
	x->fb.apply_rc = -EIO;
	x->fb.keepalive_rc = -EIO;
	in.confirmed = true;
	assert_int_equal(console_do(x->c, &in, NULL), -EIO);
	assert_true(v->b_lost);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	assert_true(v->revert_deadline > now + 5 && v->revert_deadline <= now + 7.5);
	assert_non_null(strstr(v->b_lost_msg, "within 7 s"));
	fix_free(x);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Threaded: the worker polls B's session socket while idle; the fake's is
 * a pipe that never becomes readable. */
static void fake_socket(struct fix *x, int pp[2])
{
	assert_int_equal(pipe(pp), 0);
	x->fb.fd = pp[0];
}

static void fake_socket_close(int pp[2])
{
	close(pp[0]);
	close(pp[1]);
}

/* Wait (at most ms) for B's results and take them. */
static int pump_within(struct console *c, int ms)
{
	struct pollfd pf = { .fd = console_peer_fd(c), .events = POLLIN };

	assert_true(pf.fd >= 0);
	if (poll(&pf, 1, ms) <= 0)
		return 0;
	return console_peer_pump(c);
}

/* Threaded: a slow B never holds the caller; "waiting for B (N s)" while
 * it works, the read-back when it answers. */
static void async_slow_peer_never_waits(void **state)
{
	struct fix *x = fix_ssh();
	const struct console_view *v = console_view(x->c);
	double t0;
	int pp[2];

	(void)state;
	fake_socket(x, pp);
	assert_int_equal(console_set_async(x->c, NULL), 0);
	x->fb.rate[1] = 30000000;
	x->fb.read_sleep_ms = 1500;
	t0 = mono_s();
	console_tick(x->c, true);                       /* B's read-back */
	assert_true(mono_s() - t0 < 0.3);           /* returned at once */
	assert_int_equal(console_peer_busy(x->c), 1);
	usleep(1100 * 1000);
	assert_int_equal(console_peer_tick(x->c), 1);
	assert_non_null(strstr(v->b_wait, "waiting for B (1 s): read qdiscs"));
	assert_int_equal(v->b_wait_s, 1);
	/* no second read queued behind a waiting one */
	console_tick(x->c, true);
	assert_int_equal(console_peer_busy(x->c), 1);
	x->fb.read_sleep_ms = 0;
	assert_int_equal(pump_within(x->c, 2000), 1);
	assert_true(v->side[CONSOLE_IDX_B].qd_valid);
	assert_string_equal(v->side[CONSOLE_IDX_B].qd.q[0].kind, "tbf");
	console_peer_tick(x->c);
	assert_string_equal(v->b_wait, "");
	assert_false(v->b_lost);
	fix_free(x);
	fake_socket_close(pp);
}

/* Threaded: an apply on both returns after A; the status waits for B, then
 * names both; a rename meanwhile keeps its own status. */
static void async_apply_finishes_later(void **state)
{
	struct fix *x = fix_ssh();
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(20000000);
	int pp[2];

	(void)state;
	fake_socket(x, pp);
	assert_int_equal(console_set_async(x->c, NULL), 0);
	assert_int_equal(console_apply(x->c, &d, CONSOLE_BOTH, NULL), 0);
	assert_int_equal(x->fa.napply, 1);
	assert_non_null(strstr(v->status, "waiting for B to apply on veth-b (done: A veth-a)"));
	assert_true(v->revert_deadline > 0);
	assert_int_equal(pump_within(x->c, 3000), 1);
	assert_int_equal(x->fb.napply, 1);
	assert_non_null(strstr(v->status, "applied on A veth-a, B veth-b; read back shown"));
	assert_true(v->revert_deadline == 0);
	assert_true(v->side[CONSOLE_IDX_B].qd_valid);
	/* a newer status is not overwritten by B's late result */
	x->fb.read_sleep_ms = 300;
	assert_int_equal(console_apply(x->c, &d, CONSOLE_B, NULL), 0);
	console_note(x->c, "something else happened");
	assert_int_equal(pump_within(x->c, 3000), 1);
	assert_string_equal(v->status, "something else happened");
	fix_free(x);
	fake_socket_close(pp);
}

/* Threaded: a B that does not answer within the bound is gone: said so
 * without a revert countdown, and quit restores A at once. */
static void async_timeout_marks_gone(void **state)
{
	struct fix *x = fix_ssh();
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(20000000);
	char sum[256];
	double t0;
	int pp[2];

	(void)state;
	fake_socket(x, pp);
	assert_int_equal(console_set_async(x->c, NULL), 0);
	assert_int_equal(console_apply(x->c, &d, CONSOLE_A, NULL), 0);
	x->fb.read_rc = -ETIMEDOUT;
	assert_int_equal(console_refresh(x->c, NULL), 0);
	/* the list answers, its read-back times out */
	t0 = mono_s();
	while (!v->b_lost && mono_s() - t0 < 3)
		pump_within(x->c, 500);
	assert_true(v->b_lost);
	assert_non_null(strstr(v->b_lost_msg, "peer B gone: no answer within 10 s (read qdiscs)"));
	assert_true(v->revert_deadline == 0);
	/* what B holds is unknown, not "unshaped" */
	assert_non_null(strstr(v->path.line, "B->A ? (B not read back)"));
	assert_non_null(strstr(v->path.line, "or more"));
	assert_null(strstr(v->path.line, "B->A unshaped"));
	assert_int_equal(console_peer_fd(x->c), -1);
	assert_int_equal(console_peer_busy(x->c), 0);
	t0 = mono_s();
	assert_int_equal(console_quit(x->c, sum, sizeof(sum), NULL), 0);
	assert_true(mono_s() - t0 < 0.5);
	assert_string_equal(sum, "restored A veth-a, B lost (restores itself)");
	fix_free(x);
	fake_socket_close(pp);
}

/* A sysctl set from the console is journalled and put back on quit (on
 * that side only); a side never tuned is left alone. */
static void tune_restore_on_quit(void **state)
{
	struct fix *x = fix_ssh();
	struct ll_err err = { 0 };
	char sum[128];

	(void)state;
	assert_int_equal(console_sysctl_set(x->c, CONSOLE_IDX_A, "tcp_rmem", "4096 131072 6291456", &err),
			 -ENOTSUP);
	assert_non_null(strstr(err.msg, "not supported"));
	assert_int_equal(console_sysctl_set(x->c, CONSOLE_IDX_B, "tcp_rmem", "4096 131072 6291456", &err), 0);
	assert_int_equal(x->fb.nsysctl_set, 1);
	assert_non_null(strstr(console_view(x->c)->status, "restored on quit"));
	assert_int_equal(console_quit(x->c, sum, sizeof(sum), NULL), 0);
	assert_int_equal(x->fb.ntune_restore, 1);
	assert_int_equal(console_quit(x->c, sum, sizeof(sum), NULL), 0);
	assert_int_equal(x->fb.ntune_restore, 1);
	fix_free(x);
}

/* Threaded: B's failed result comes back later and only then rolls A
 * back (all or nothing), said on the status line. */
static void async_b_fails_rolls_a_back(void **state)
{
	struct fix *x = fix_ssh();
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(20000000);
	char sum[256];
	int pp[2];

	(void)state;
	fake_socket(x, pp);
	assert_int_equal(console_set_async(x->c, NULL), 0);
	x->fb.apply_rc = -EINVAL;
	assert_int_equal(console_apply(x->c, &d, CONSOLE_BOTH, NULL), 0);
	assert_int_equal(x->fa.napply, 1);
	assert_int_equal(x->fa.nclear, 0);          /* B has not answered */
	assert_int_equal(pump_within(x->c, 3000), 1);
	assert_int_equal(x->fb.napply, 1);
	assert_int_equal(x->fa.nclear, 1);          /* the rollback */
	assert_string_equal(v->side[CONSOLE_IDX_A].qd.q[0].kind, "noqueue");
	assert_non_null(strstr(v->status, "nothing applied: B failed, A rolled back (veth-a: "));
	assert_non_null(strstr(v->error, "B failed, A rolled back"));
	assert_int_equal(console_quit(x->c, sum, sizeof(sum), NULL), 0);
	assert_string_equal(sum, "nothing to restore");
	fix_free(x);
	fake_socket_close(pp);
}

/* Threaded: B cannot arm its revert timer (-ENOLCK): the question is
 * raised when B's result comes back (A rolled back meanwhile); y applies
 * with unarmed_ok carried by B's job, for that apply only. */
static void async_unarmed_asks_then_applies(void **state)
{
	struct fix *x = fix_ssh();
	const struct console_view *v = console_view(x->c);
	struct impair d = rate_dial(20000000);
	int pp[2];

	(void)state;
	fake_socket(x, pp);
	assert_int_equal(console_set_async(x->c, NULL), 0);
	x->fb.no_timer = true;
	assert_int_equal(console_apply_safe(x->c, &d, CONSOLE_BOTH, true, false, NULL), 0);
	assert_false(v->confirm.pending);
	assert_int_equal(pump_within(x->c, 3000), 1);
	assert_true(v->confirm.pending);
	assert_non_null(strstr(v->confirm.text, "no revert timer could be armed for veth-b"));
	assert_non_null(strstr(v->status, "B could not arm its revert timer: y applies without it"));
	assert_string_equal(v->error, "");
	assert_string_equal(v->side[CONSOLE_IDX_B].err, "");
	assert_int_equal(x->fa.nclear, 1);          /* A rolled back while asking */
	assert_int_equal(x->fb.nunarmed, 0);
	/* y (as the TUI does: the question's dial and sides, confirmed) */
	d = v->confirm.dial;
	assert_int_equal(v->confirm.sides, CONSOLE_BOTH);
	assert_int_equal(console_apply_safe(x->c, &d, CONSOLE_BOTH, true, false, NULL), 0);
	assert_int_equal(pump_within(x->c, 3000), 1);
	assert_int_equal(x->fb.nunarmed, 1);
	assert_false(x->fb.safety.unarmed_ok);      /* the baseline again */
	assert_false(v->confirm.pending);
	assert_non_null(strstr(v->status, "applied on A veth-a, B veth-b"));
	fix_free(x);
	fake_socket_close(pp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(new_preselects_and_reads_back),
		cmocka_unit_test(apply_keeps_what_kernel_holds),
		cmocka_unit_test(apply_one_side_only),
		cmocka_unit_test(apply_eperm_says_needs_root),
		cmocka_unit_test(apply_invalid_dial_touches_nothing),
		cmocka_unit_test(quit_restores_only_changed),
		cmocka_unit_test(quit_puts_back_what_it_found),
		cmocka_unit_test(clear_intent_unmarks),
		cmocka_unit_test(select_out_of_range),
		cmocka_unit_test(test_start_errors),
		cmocka_unit_test(test_failure_is_pumped),
		cmocka_unit_test(test_runs_and_scales_to_held_rate),
		cmocka_unit_test(test_dial_change_during_run_is_said),
		cmocka_unit_test(path_sums_delay_and_combines_loss),
		cmocka_unit_test(theory_follows_what_is_held),
		cmocka_unit_test(profiles_apply_save_rename_delete),
		cmocka_unit_test(apply_on_session_link_asks_first),
		cmocka_unit_test(apply_elsewhere_does_not_ask),
		cmocka_unit_test(full_loss_needs_force),
		cmocka_unit_test(lost_session_keeps_a_usable),
		cmocka_unit_test(hangup_marks_lost),
		cmocka_unit_test(lost_during_apply_keeps_countdown),
		cmocka_unit_test(tune_restore_on_quit),
		cmocka_unit_test(async_slow_peer_never_waits),
		cmocka_unit_test(async_apply_finishes_later),
		cmocka_unit_test(async_timeout_marks_gone),
		cmocka_unit_test(apply_b_fails_rolls_a_back),
		cmocka_unit_test(apply_b_fails_restores_earlier_dial),
		cmocka_unit_test(async_b_fails_rolls_a_back),
		cmocka_unit_test(async_unarmed_asks_then_applies),
	};

	return cmocka_run_group_tests_name("console", tests, NULL, NULL);
}
