/* SPDX-License-Identifier: MIT */
/* cmd_console.c - `linklab console [--peer HOST] [options]`, the default
 * command: one poll() loop over stdin, the test's event fd and a signal
 * self-pipe and B's SSH session (keepalives; a lost session is shown and the
 * console goes on with A); redraws coalesced to at most one per 100 ms (mtr's
 * MIN_DISPLAY_REDRAW_USEC); quit, Ctrl-C, Ctrl-\, SIGTERM and SIGHUP restore both
 * peers before curses ends. With --middle HOST it also holds the lease of the
 * `linklab bridge` on that host (middle.h), asked once a second from the
 * tick without waiting: the reply is read when the middle's socket is
 * readable (in the poll set while a get waits), so a stalled middle host
 * never freezes keys or bars; quit puts the bridge's dials back too. With
 * --bridge IF_A,IF_B [--middle-engine E] it starts that bridge itself (`bridge
 * --stdin-lease`), which stops when the console quits, dies or loses the
 * session. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <limits.h>
#include <unistd.h>

#include "linklab/cli/cli.h"
#include "linklab/peer/enghook.h"
#include "linklab/cli/safeout.h"
#include "linklab/console/console.h"
#include "linklab/console/console_middle.h"
#include "linklab/console/console_peer.h"
#include "linklab/console/console_safety.h"
#include "linklab/console/console_test.h"
#include "linklab/console/console_verify.h"
#include "linklab/console/middle.h"
#include "linklab/peer/peerset.h"
#include "linklab/remote/sshcfg.h"
#include "../tui/tui.h"

/* exit status of a quit that left B to restore itself (B gone or not
 * answering): A is restored, B's restore was not seen from here */
#define CMD_CONSOLE_EXIT_B_LEFT 3
#define CMD_CONSOLE_REDRAW_MS 100
#define CMD_CONSOLE_TICK_MS 1000        /* live qdisc counters on A (netlink) */
#define CMD_CONSOLE_REMOTE_TICKS 5      /* B's counters every 5th tick (SSH) */
#define CMD_CONSOLE_KEY_BURST 256
#define CMD_CONSOLE_PEER_QUIET_MS 200   /* B's socket: at most 5 reads/s */
#define CMD_CONSOLE_MID_QUIET_MS 100    /* M's socket after a read without the
				     * whole reply: at most 10 reads/s */

static int cmd_console_sigpipe[2] = { -1, -1 };

/* Signal handlers only write one byte (the signal number). */
static void cmd_console_on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;

	if (write(cmd_console_sigpipe[1], &b, 1) < 0) {
		/* pipe full: a byte is already pending */
	}
	errno = saved;
}

static long long cmd_console_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void cmd_console_usage(FILE *f)
{
	fprintf(f,
		"usage: linklab [console] [--peer HOST] [--dev IF] [--peer-dev IF] [-F FILE]\n"
		"                [--ssh-key FILE] [--known-hosts FILE] [--accept-new]\n"
		"                [--peer-data ADDR] [-c ADDR] [-p PORT]\n"
		"                [--force] [--exclude-ssh] [--revert-after SEC] [--peer-timeout SEC]\n"
		"                [--engine auto|kernel|user]\n"
		"                [--middle HOST [--bridge IF_A,IF_B [--middle-engine auto|kernel|user]]]\n"
		"  -c ADDR   test target when there is no --peer (an iperf3 -s server)\n"
		"  --engine auto|kernel|user  which engine holds the endpoints' dials (as\n"
		"            apply --engine): auto (default) netem where the kernel has it, else\n"
		"            linklab's endpoint engine; kernel: netem only; user: linklab's engine\n"
		"  -p PORT   its port (default 5201)\n"
		"  --peer-timeout SEC  bound on each command run on B (1..300, default 10):\n"
		"            the console never waits on B; a request without an answer by\n"
		"            then marks B gone (it restores itself) and quit restores A at once\n"
		"  --middle HOST  the middle box running `linklab bridge` (ssh_config alias or\n"
		"            [user@]host[:port], reached like --peer): shown and driven by the\n"
		"            console, which holds its lease (its dials come back at quit)\n"
		"  --bridge IF_A,IF_B  start the bridge on the middle box instead (its interfaces\n"
		"            towards A and towards B): `linklab bridge IF_A IF_B --stdin-lease`,\n"
		"            plain forwarding; it stops and restores its ports when the console\n"
		"            quits, dies or loses the session (needs --middle)\n"
		"  --middle-engine auto|kernel|user  the started bridge's engine (default auto:\n"
		"            kernel when the middle's kernel has netem, else user; needs --bridge)\n");
}

static int cmd_console_signals(void)
{
	struct sigaction sa;

	if (pipe2(cmd_console_sigpipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cmd_console_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);  /* Ctrl-\: restore like Ctrl-C */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	return 0;
}

/* The `linklab verify -J` command line the console's v key runs: this
 * binary, the same peer and SSH options, the interfaces selected now, and
 * the middle box the console drives (its bridge's dials are part of the
 * path). */
static void cmd_console_verify_argv(struct console *c, const struct peerset_opts *po,
				    const struct peerset *ps, const char *target,
				    int port, const char *middle_host)
{
	char exe[PATH_MAX], portbuf[16];
	const char *av[24];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int k = 0;

	if (n <= 0 || (!po->peer && !(target && *target)))
		return;
	exe[n] = '\0';
	av[k++] = exe;
	av[k++] = "verify";
	av[k++] = "-J";
	if (po->peer) {
		av[k++] = "--peer";
		av[k++] = po->peer;
		av[k++] = "--peer-dev";
		av[k++] = ps->dev_b;
	} else {
		snprintf(portbuf, sizeof(portbuf), "%d", port);
		av[k++] = "-c";
		av[k++] = target;
		av[k++] = "-p";
		av[k++] = portbuf;
	}
	av[k++] = "--dev";
	av[k++] = ps->dev_a;
	if (po->peer_data) {
		av[k++] = "--peer-data";
		av[k++] = po->peer_data;
	}
	if (po->ssh.config_file) {
		av[k++] = "-F";
		av[k++] = po->ssh.config_file;
	}
	if (po->ssh.key_file) {
		av[k++] = "--ssh-key";
		av[k++] = po->ssh.key_file;
	}
	if (po->ssh.known_hosts) {
		av[k++] = "--known-hosts";
		av[k++] = po->ssh.known_hosts;
	}
	if (middle_host) {
		av[k++] = "--middle";
		av[k++] = middle_host;
	}
	av[k] = NULL;
	console_set_verify_argv(c, (char *const *)av);
}

/* Once a second: the middle box, the live counters, B's wait. true if the
 * view changed. */
static bool cmd_console_tick(struct tui *t, struct console *c, unsigned *ticks,
			     bool countdown)
{
	enum console_test_state ts = console_view(c)->test.state;
	bool dirty = false;

	/* the middle box: counters once a second on every
	 * screen (keeps its session in use), attach retries;
	 * before B's read: with --bridge, B may be reachable
	 * only through the bridge a retry starts again */
	if (console_middle_tick(c))
		dirty = true;
	/* counters only matter on the peers screen; B's read is
	 * one SSH round trip, so only every few ticks. While a test
	 * runs, on any screen: a dial that changes under the run
	 * (an engine gone) is noted on it */
	if ((t->screen == TS_PEERS || ts == CONSOLE_TEST_STARTING || ts == CONSOLE_TEST_RUNNING) &&
	    console_tick(c, ++*ticks % CMD_CONSOLE_REMOTE_TICKS == 0))
		dirty = true;
	if (countdown)
		dirty = true;
	/* "waiting for B (N s)" while a request to B runs */
	if (console_peer_tick(c))
		dirty = true;
	return dirty;
}

/* Take the keys waiting (at most CMD_CONSOLE_KEY_BURST) to the screens and
 * their intents to the controller. Returns how many keys were read, -1
 * when one of them quits. */
static int cmd_console_keys(struct tui *t, struct console *c, bool *dirty)
{
	struct console_intent in;
	struct ll_err e;
	int k, key, res;

	for (k = 0; k < CMD_CONSOLE_KEY_BURST; k++) {
		key = tui_getkey();
		if (key == TUI_NOKEY)
			break;
		res = tui_key(t, key, console_view(c), &in);
		if (res & TR_QUIT)
			return -1;
		if (res & TR_INTENT) {
			static const char *const busy[] = {
				[CI_APPLY] = "applying ...",
				[CI_CLEAR] = "clearing ...",
				[CI_REFRESH] = "reading links and qdiscs ...",
				[CI_TEST_START] = "starting the test ...",
				[CI_PROFILE_APPLY] = "applying the profile ...",
				[CI_TEST_SAVE] = "saving the run ...",
			};

			/* B's part runs on its worker: console_do returns
			 * at once, the status line follows it */
			if ((size_t)in.kind < sizeof(busy) / sizeof(busy[0]) &&
			    busy[in.kind])
				tui_flash(t, busy[in.kind]);
			ll_err_clear(&e);
			console_do(c, &in, &e);
		}
		if (res)
			*dirty = true;
	}
	return k;
}

/* Run the loop until quit; returns the signal that ended it (0 = key). */
static int cmd_console_loop(struct tui *t, struct console *c, bool async)
{
	struct pollfd pfd[6];
	long long last_draw = 0, now, next_tick = cmd_console_now_ms() + CMD_CONSOLE_TICK_MS;
	long long next_ka = cmd_console_now_ms() + 1000, peer_quiet = 0, mid_quiet = 0;
	unsigned ticks = 0;
	bool dirty = true, countdown = false;
	int nfd, timeout, k, tfd, pfdi, mfdi, vfdi, next_s;
	const struct console_view *v;
	unsigned char sb[16];
	ssize_t n;

	for (;;) {
		now = cmd_console_now_ms();
		if (now >= next_tick) {
			if (cmd_console_tick(t, c, &ticks, countdown))
				dirty = true;
			next_tick = now + CMD_CONSOLE_TICK_MS;
		}
		/* B's session: keepalive when due (threaded: the worker's) */
		if (!async && console_peer_fd(c) >= 0 && now >= next_ka) {
			if (console_keepalive(c, false, &next_s))
				dirty = true;
			next_ka = now + 1000LL * (next_s > 0 ? next_s : 5);
		}
		v = console_view(c);
		/* B's revert countdown on the status line ticks each second */
		countdown = v->revert_deadline > 0 &&
			    now < (long long)(v->revert_deadline * 1000) + 1000;
		if (dirty && now - last_draw >= CMD_CONSOLE_REDRAW_MS) {
			tui_draw(t, console_view(c));
			dirty = false;
			last_draw = now;
		}
		timeout = dirty ? (int)(CMD_CONSOLE_REDRAW_MS - (now - last_draw)) : -1;
		if (dirty && timeout < 0)
			timeout = 0;
		if ((t->screen == TS_PEERS || countdown || v->middle.present ||
		     console_peer_busy(c) || v->b_wait[0]) &&
		    (timeout < 0 || timeout > next_tick - now))
			timeout = (int)(next_tick - now);
		if (!async && console_peer_fd(c) >= 0 && (timeout < 0 || timeout > next_ka - now))
			timeout = next_ka > now ? (int)(next_ka - now) : 0;
		nfd = 0;
		pfd[nfd++] = (struct pollfd){ .fd = 0, .events = POLLIN };
		pfd[nfd++] = (struct pollfd){ .fd = cmd_console_sigpipe[0], .events = POLLIN };
		tfd = console_test_fd(c);
		if (tfd >= 0)
			pfd[nfd++] = (struct pollfd){ .fd = tfd, .events = POLLIN };
		pfdi = -1;
		if (async && console_peer_fd(c) >= 0) {
			/* B's finished requests */
			pfdi = nfd;
			pfd[nfd++] = (struct pollfd){ .fd = console_peer_fd(c), .events = POLLIN };
		} else if (console_peer_fd(c) >= 0 && now >= peer_quiet) {
			pfdi = nfd;
			pfd[nfd++] = (struct pollfd){ .fd = console_peer_fd(c),
						      .events = POLLIN | POLLRDHUP };
		} else if (console_peer_fd(c) >= 0 &&
			   (timeout < 0 || timeout > peer_quiet - now)) {
			timeout = (int)(peer_quiet - now);
		}
		/* the middle: its socket while a get waits for the reply */
		mfdi = -1;
		if (console_middle_fd(c) >= 0 && now >= mid_quiet) {
			mfdi = nfd;
			pfd[nfd++] = (struct pollfd){ .fd = console_middle_fd(c),
						      .events = POLLIN };
		} else if (console_middle_fd(c) >= 0 &&
			   (timeout < 0 || timeout > mid_quiet - now)) {
			timeout = (int)(mid_quiet - now);
		}
		/* a verify child's output; its clock on the table each tick */
		vfdi = -1;
		if (console_verify_fd(c) >= 0) {
			vfdi = nfd;
			pfd[nfd++] = (struct pollfd){ .fd = console_verify_fd(c),
						      .events = POLLIN };
			if (timeout < 0 || timeout > next_tick - now)
				timeout = next_tick > now ? (int)(next_tick - now) : 0;
		}
		if (poll(pfd, (nfds_t)nfd, timeout) < 0 && errno != EINTR)
			return 0;
		if (vfdi >= 0 && (console_verify_pump(c) || pfd[vfdi].revents || v->verify.running))
			dirty = true;
		if (pfd[1].revents & POLLIN) {
			n = read(cmd_console_sigpipe[0], sb, sizeof(sb));
			if (n > 0)
				return sb[0];
		}
		if (tfd >= 0 && (pfd[2].revents & (POLLIN | POLLHUP | POLLERR)))
			if (console_test_pump(c))
				dirty = true;
		if (async && pfdi >= 0 && pfd[pfdi].revents) {
			if (console_peer_pump(c))
				dirty = true;
		} else if (pfdi >= 0 && pfd[pfdi].revents) {
			bool hup = pfd[pfdi].revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL);

			if (console_keepalive(c, hup, &next_s))
				dirty = true;
			peer_quiet = cmd_console_now_ms() + CMD_CONSOLE_PEER_QUIET_MS;
		}
		if (mfdi >= 0 && pfd[mfdi].revents) {
			if (console_middle_pump(c))
				dirty = true;
			/* part of it, or other traffic: look again a bit later */
			if (console_middle_fd(c) >= 0)
				mid_quiet = cmd_console_now_ms() + CMD_CONSOLE_MID_QUIET_MS;
		}
		/* Drain keys (also after EINTR: SIGWINCH becomes KEY_RESIZE). */
		k = cmd_console_keys(t, c, &dirty);
		if (k < 0)
			return 0;
		if ((pfd[0].revents & (POLLHUP | POLLERR)) && k == 0)
			return SIGHUP;    /* terminal gone */
	}
}

/* B's safety settings, then its worker: from here on nothing waits on B.
 * false when B's requests stay inline (no thread could be started). */
static bool cmd_console_start_b(struct console *c, const struct peerset_opts *po)
{
	struct peer_safety sf = { .force = po->force,
				  .exclude_ssh = po->exclude_ssh,
				  .revert_s = po->revert_after,
				  .timeout_s = po->peer_timeout,
				  .hold = true, .ask_unarmed = true };
	struct ll_err e = { 0 };

	console_set_safety(c, &sf);
	if (console_set_async(c, &e) == 0)
		return true;
	console_note(c, e.msg);
	return false;
}

/* No usable terminal: print what the peers screen would show, as lines
 * (what each side holds, the path, the theory line), and return 2 so that
 * scripts still see that no console ran. */
static int cmd_console_plain(const struct peerset_opts *po, const char *target,
			     int port, const char *middle_host, const char *const bridge[3])
{
	struct peerset ps;
	struct ll_err err = { 0 }, merr = { 0 };
	struct console *c = NULL;
	struct middle *m = NULL;
	struct middle_state mst;
	const struct console_view *v;
	int i;

	/* the middle first: B may be reachable only through a bridge that
	 * --bridge starts */
	if (middle_host) {
		struct ssh_target mt;

		if (sshcfg_resolve(middle_host, &po->ssh, &mt, &merr) == 0 &&
		    middle_open(&m, &mt, 10000, &merr) == 0 && bridge[0] &&
		    (middle_set_start(m, bridge[0], bridge[1], bridge[2], &merr) < 0 ||
		     middle_attach(m, &mst, &merr) < 0) && middle_lost(m)) {
			middle_close(m);
			m = NULL;
		}
	}
	memset(&ps, 0, sizeof(ps));
	if (peerset_open(&ps, po, &err) < 0) {
		middle_close(m);
		if (merr.msg[0])
			fprintf(stderr, "linklab console: middle %s: %s\n", middle_host, merr.msg);
		fprintf(stderr, "linklab console: %s\n", err.msg);
		return 2;
	}
	if (console_new(&c, &ps, target, port, &err) < 0) {
		peerset_close(&ps);
		middle_close(m);
		fprintf(stderr, "linklab console: %s\n", err.msg);
		return 2;
	}
	v = console_view(c);
	printf("session: %s\n", v->session);
	for (i = 0; i < 2; i++) {
		const struct console_side_view *sv = &v->side[i];

		if (!sv->present)
			continue;
		printf("%s %s: %s%s%s\n", sv->label, sv->dev[0] ? sv->dev : "-",
		       sv->qd_valid ? sv->held_text : "(not read)",
		       sv->err[0] ? "; error: " : "", sv->err);
	}
	if (middle_host) {
		if (m) {
			console_set_middle(c, m, "M");      /* the controller owns m now */
			v = console_view(c);
		}
		if (v->middle.attached)
			printf("middle %s: bridge %s engine%s%s%s, %s <-> %s; A->B: %s; B->A: %s\n",
			       middle_host, v->middle.engine,
			       bridge[0] ? " (--middle-engine " : "", bridge[0] ? bridge[2] : "",
			       bridge[0] ? ", started for this run)" : "",
			       v->middle.if_a, v->middle.if_b,
			       v->middle.dir[MIDDLE_AB].dial[0] ? v->middle.dir[MIDDLE_AB].dial : "none",
			       v->middle.dir[MIDDLE_BA].dial[0] ? v->middle.dir[MIDDLE_BA].dial : "none");
		else
			printf("middle %s: %s\n", middle_host,
			       v->middle.err[0] ? v->middle.err : merr.msg);
	}
	printf("path: %s\n", v->path.line);
	printf("theory (1 stream, A->B): %s\n", v->theory.line);
	console_free(c);
	return 2;
}

/* The command line of `linklab console`. */
struct cmd_console_args {
	struct peerset_opts po;
	const char *target;           /* -c ADDR, NULL = none */
	int port;                     /* -p PORT, 0 = default */
	const char *middle_host;      /* --middle HOST, NULL = none */
	const char *bridge[3];        /* IF_A, IF_B, engine (--bridge, --middle-engine) */
	int engine;                   /* the endpoints' engine (--engine), enum enghook_mode */
	char bridge_if[2][64];        /* bridge[0], bridge[1] point here */
};

/* --middle, --bridge or --middle-engine at argv[*i]. Returns 0, or -1 (said). */
static int cmd_console_parse_middle(struct cmd_console_args *a, int argc, char **argv,
				    int *i, const char **bridge_opt, const char **engine)
{
	static const char *const need[] = {
		"a HOST (ssh_config alias or [user@]host[:port])",
		"IF_A,IF_B (the middle's interfaces towards A and towards B)",
		"auto, kernel or user" };
	int k = !strcmp(argv[*i], "--middle") ? 0 : !strcmp(argv[*i], "--bridge") ? 1 : 2;

	if (*i + 1 >= argc) {
		fprintf(stderr, "linklab console: %s needs %s\n", argv[*i], need[k]);
		return -1;
	}
	if (k == 0)
		a->middle_host = argv[++*i];
	else if (k == 1)
		*bridge_opt = argv[++*i];
	else
		*engine = argv[++*i];
	return 0;
}

/* --bridge IF_A,IF_B and --middle-engine, checked together. Returns the number of
 * problems (each said). */
static int cmd_console_check_bridge(struct cmd_console_args *a, const char *bridge_opt,
				    const char *engine)
{
	int bad = 0;

	if (bridge_opt) {
		const char *comma = strchr(bridge_opt, ',');
		size_t la = comma ? (size_t)(comma - bridge_opt) : 0;

		if (!comma || la == 0 || la >= IF_NAMESIZE || !comma[1] ||
		    strlen(comma + 1) >= IF_NAMESIZE || strchr(comma + 1, ',') ||
		    (strlen(comma + 1) == la && !strncmp(bridge_opt, comma + 1, la))) {
			fprintf(stderr, "linklab console: --bridge '%s': two different interface "
				"names IF_A,IF_B of 1..%d characters (the middle's ports towards "
				"A and towards B)\n", bridge_opt, IF_NAMESIZE - 1);
			bad++;
		} else {
			snprintf(a->bridge_if[0], sizeof(a->bridge_if[0]), "%.*s", (int)la,
				 bridge_opt);
			snprintf(a->bridge_if[1], sizeof(a->bridge_if[1]), "%s", comma + 1);
			a->bridge[0] = a->bridge_if[0];
			a->bridge[1] = a->bridge_if[1];
		}
		if (!a->middle_host) {
			fprintf(stderr, "linklab console: --bridge needs --middle HOST (the host "
				"that runs the bridge)\n");
			bad++;
		}
	}
	if (engine && strcmp(engine, "auto") && strcmp(engine, "kernel") &&
	    strcmp(engine, "user")) {
		fprintf(stderr, "linklab console: --middle-engine '%s': auto, kernel or user\n",
			engine);
		bad++;
	}
	if (engine && !bridge_opt) {
		fprintf(stderr, "linklab console: --middle-engine goes with --bridge IF_A,IF_B "
			"(the console starts that bridge; an attached one keeps its engine)\n");
		bad++;
	}
	a->bridge[2] = engine ? engine : "auto";
	return bad;
}

/* Parse the command line; every problem of the line is said. Returns -1 to
 * go on, else the exit status (0 after -h, 2 on bad options). */
static int cmd_console_parse(struct cmd_console_args *a, int argc, char **argv)
{
	const char *bridge_opt = NULL, *engine = NULL;
	struct ll_err err = { 0 };
	int i, rc, bad = 0;
	bool unknown = false;

	memset(a, 0, sizeof(*a));
	for (i = 1; i < argc; i++) {
		rc = peerset_parse_opt(&a->po, argc, argv, &i, &err);
		if (rc < 0) {
			fprintf(stderr, "linklab console: %s\n", err.msg);
			bad++;
			continue;
		}
		if (rc > 0)
			continue;
		if (!strcmp(argv[i], "-c") && i + 1 < argc) {
			a->target = argv[++i];
		} else if (!strcmp(argv[i], "--middle") || !strcmp(argv[i], "--bridge") ||
			   !strcmp(argv[i], "--middle-engine")) {
			if (cmd_console_parse_middle(a, argc, argv, &i, &bridge_opt, &engine) < 0)
				bad++;
		} else if (!strcmp(argv[i], "--engine")) {
			const char *v = i + 1 < argc ? argv[++i] : "";

			a->engine = enghook_mode_parse(v);
			if (a->engine < 0) {
				fprintf(stderr, "linklab console: --engine '%s': auto, kernel or user "
					"(the endpoints' engine; the started bridge's is "
					"--middle-engine)\n", v);
				bad++;
			}
		} else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			char *end;
			long p = strtol(argv[++i], &end, 10);

			if (*end || p < 1 || p > 65535) {
				fprintf(stderr, "linklab console: -p '%s': need a port 1..65535\n",
					argv[i]);
				bad++;
				continue;
			}
			a->port = (int)p;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cmd_console_usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "linklab console: unknown option '%s'\n", argv[i]);
			bad++;
			unknown = true;
		}
	}
	bad += cmd_console_check_bridge(a, bridge_opt, engine);
	if (a->po.exclude_ssh && a->engine == ENGHOOK_KERNEL) {
		fprintf(stderr, "linklab console: --exclude-ssh with --engine kernel: on this "
			"host only linklab's engine keeps the SSH port out of the dial (the "
			"qdisc tree here has no such filter); use --engine auto or user, or "
			"leave out --exclude-ssh\n");
		bad++;
	}
	if (bad) {
		if (unknown)
			cmd_console_usage(stderr);
		else
			fprintf(stderr, "linklab console: see `linklab console -h`\n");
		return 2;
	}
	if (!a->bridge[0])
		a->bridge[2] = NULL;
	return -1;
}

/* The middle box first: with --bridge, B may be reachable only through the
 * bridge this console starts. *mid stays NULL without --middle. Returns 0,
 * or the exit status 1 (said; curses ended). */
static int cmd_console_open_middle(struct tui *t, struct cmd_console_args *a,
				   struct middle **mid, struct ll_err *merr)
{
	const char *const *bridge = a->bridge;
	struct middle_state mst;
	struct ssh_target mt;
	struct ll_err err = { 0 };
	char m[300];
	int rc;

	if (!a->middle_host)
		return 0;
	snprintf(m, sizeof(m), "connecting to the middle box %.200s%s ...", a->middle_host,
		 bridge[0] ? " and starting its bridge" : "");
	tui_flash(t, m);
	/* resolved and authenticated exactly like --peer */
	rc = sshcfg_resolve(a->middle_host, &a->po.ssh, &mt, &err);
	if (rc == 0)
		rc = middle_open(mid, &mt, 10000, &err);
	/* --bridge: start it now (a failure is shown in the middle
	 * section, where console_set_middle tries again) */
	if (rc == 0 && bridge[0])
		rc = middle_set_start(*mid, bridge[0], bridge[1], bridge[2], &err);
	if (rc < 0) {
		tui_done();
		middle_close(*mid);
		fprintf(stderr, "linklab console: middle %s: %s\n", a->middle_host, err.msg);
		return 1;
	}
	if (bridge[0] && middle_attach(*mid, &mst, merr) < 0 && middle_lost(*mid)) {
		tui_done();
		middle_close(*mid);
		fprintf(stderr, "linklab console: %s\n", merr->msg);
		return 1;
	}
	return 0;
}

/* Open A and B and the controller on them; it takes the middle's session
 * mid. Returns 0, or the exit status 1 (said; curses ended, mid closed). */
static int cmd_console_open_peers(struct tui *t, struct cmd_console_args *a,
				  struct middle *mid, const struct ll_err *merr,
				  struct peerset *ps, struct console **c)
{
	struct ll_err err = { 0 };
	int rc;

	if (a->po.peer) {
		char m[300];

		snprintf(m, sizeof(m), "connecting to %.250s ...", a->po.peer);
		tui_flash(t, m);
	}
	memset(ps, 0, sizeof(*ps));
	rc = peerset_open(ps, &a->po, &err);
	if (rc < 0) {
		tui_done();
		middle_close(mid);      /* a bridge started here stops */
		if (merr->msg[0])       /* B may be behind the bridge that failed */
			fprintf(stderr, "linklab console: %s\n", merr->msg);
		fprintf(stderr, "linklab console: %s\n", err.msg);
		return 1;
	}
	/* the endpoints' dials (--engine): auto is netem where the kernel has
	 * it, else linklab's endpoint engine */
	if (ps->a.ops->engine)
		ps->a.ops->engine->set_engine(&ps->a, a->engine, a->po.exclude_ssh ? 22 : 0);
	if (ps->has_b && ps->b.ops->engine)
		ps->b.ops->engine->set_engine(&ps->b, a->engine, a->po.exclude_ssh ? 22 : 0);
	rc = console_new(c, ps, a->target, a->port, &err);
	if (rc < 0) {
		tui_done();
		peerset_close(ps);
		middle_close(mid);
		fprintf(stderr, "linklab console: %s\n", err.msg);
		return 1;
	}
	if (mid) {
		char label[64];

		snprintf(label, sizeof(label), "M (%.55s)", a->middle_host);
		console_set_middle(*c, mid, label);
	}
	return 0;
}

/* Restore while the screen is still ours, then end curses and free the
 * controller. Returns the exit status. */
static int cmd_console_restore(struct tui *t, struct console *c, int sig)
{
	struct ll_err err = { 0 };
	char summary[512];
	bool b_left;
	int rc;

	/* a key or a later SIGINT/SIGTERM/SIGQUIT stops waiting for a B that
	 * has not answered. Not a hangup: the terminal going away (its
	 * SIGHUPs, its fd 0 hung up) leaves nobody to ask, so B's restore is
	 * waited for, within its bound; signals that came with the one that
	 * ended the loop are part of that same request */
	{
		int fds[2] = { 0, cmd_console_sigpipe[0] };
		struct sigaction sa;
		unsigned char sb[16];

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_IGN;
		sigaction(SIGHUP, &sa, NULL);
		while (read(cmd_console_sigpipe[0], sb, sizeof(sb)) > 0)
			;
		console_set_quit_cancel(c, fds, 2);
	}
	tui_flash(t, console_peer_busy(c) ?
		  "restoring both peers ... A done; B has not answered yet: waiting (any key: stop waiting, B restores itself)" :
		  "restoring both peers ...");
	ll_err_clear(&err);
	rc = console_quit(c, summary, sizeof(summary), &err);
	b_left = console_quit_b_left(c);
	tui_done();
	if (sig)
		printf("linklab: %s: %s\n", strsignal(sig), summary);
	else
		printf("linklab: %s\n", summary);
	if (rc < 0)
		fprintf(stderr, "linklab: restore failed: %s\n", err.msg);
	console_free(c);
	if (rc < 0)
		return 1;
	/* after restoring, a signal's exit status as shells expect:
	 * 128 + signal (SIGINT 130, SIGQUIT 131, SIGTERM 143, SIGHUP 129);
	 * else 3 when B's restore was left to B (not seen here) */
	return sig ? 128 + sig : b_left ? CMD_CONSOLE_EXIT_B_LEFT : 0;
}

int cmd_console(int argc, char **argv)
{
	struct cmd_console_args a;
	struct peerset ps;
	struct ll_err err = { 0 }, merr = { 0 };
	struct console *c = NULL;
	struct middle *mid = NULL;
	struct tui t;
	const char *term;
	int rc, sig;
	bool async;

	rc = cmd_console_parse(&a, argc, argv);
	if (rc >= 0)
		return rc;
	term = getenv("TERM");
	if (!isatty(1) || !isatty(0) || !term || !*term || !strcmp(term, "dumb")) {
		fprintf(stderr,
			"linklab: the console needs a terminal (%s); plain output follows, or use the\n"
			"  plain commands: linklab links | apply | show | clear | test   (see linklab help)\n",
			!isatty(1) || !isatty(0) ? "stdin/stdout is not a tty" : "TERM is dumb or unset");
		safeout_install(1);   /* no curses: peer text made visible (safeout.h) */
		return cmd_console_plain(&a.po, a.target, a.port, a.middle_host, a.bridge);
	}
	if (cmd_console_signals() < 0) {
		fprintf(stderr, "linklab console: signal pipe: %s\n", strerror(errno));
		return 1;
	}
	/* curses first: a passphrase or password is asked on its screen */
	rc = tui_init(&t, &err);
	if (rc < 0) {
		fprintf(stderr, "linklab console: %s\n", err.msg);
		return 1;
	}
	/* B restores itself if the session dies (peer_safety.hold) */
	a.po.hold = true;
	a.po.ssh.prompt = tui_prompt;
	a.po.ssh.prompt_ctx = &t;
	rc = cmd_console_open_middle(&t, &a, &mid, &merr);
	if (rc)
		return rc;
	rc = cmd_console_open_peers(&t, &a, mid, &merr, &ps, &c);
	if (rc)
		return rc;
	async = cmd_console_start_b(c, &a.po);
	cmd_console_verify_argv(c, &a.po, &ps, a.target, a.port, a.middle_host);
	if (t.term_fallback)
		console_note(c, "terminal type unknown: running as vt100");
	sig = cmd_console_loop(&t, c, async);
	return cmd_console_restore(&t, c, sig);
}
