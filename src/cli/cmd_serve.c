/* SPDX-License-Identifier: MIT */
/* cmd_serve.c - `linklab serve [-p PORT] [-B ADDR] [-1]`: iperf3-compatible
 * server. First stdout line, once bound: "Server listening on PORT" (the
 * remote backend reads it over SSH to learn an ephemeral port, -p 0). */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <unistd.h>
#include <sys/socket.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/base/text.h"
#include "linklab/cli/cli.h"
#include "linklab/traffic/serve.h"

static volatile sig_atomic_t serve_stop;

static void on_sig(int sig)
{
	(void)sig;
	serve_stop = 1;
}

static void on_listen(void *ctx, int port)
{
	(void)ctx;
	printf("Server listening on %d\n", port);
	fflush(stdout);
}

static void on_log(void *ctx, const char *line)
{
	char safe[1024];

	(void)ctx;
	/* a line may quote what a client sent */
	printf("%s\n", text_sanitize(line, safe, sizeof(safe)));
	fflush(stdout);
}

/* -B ADDR: an address of this host (numeric IPv4/IPv6, or a name that
 * resolves to one); 0, or a message naming why not into why. */
static int check_bind(const char *a, char *why, size_t len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST };
	struct addrinfo *res = NULL;
	int r = getaddrinfo(a, NULL, &hints, &res);

	if (r && (strspn(a, "0123456789.") == strlen(a) || strchr(a, ':'))) {
		/* looks numeric but is not an address: no resolver query */
		snprintf(why, len, "not an IPv4 or IPv6 address");
		return -1;
	}
	if (r) {
		hints.ai_flags = AI_PASSIVE;
		r = getaddrinfo(a, NULL, &hints, &res);
		if (r) {
			snprintf(why, len, "not an address or a host name that resolves (%s)",
				 gai_strerror(r));
			return -1;
		}
	}
	/* an address of this host: bind(2) says so (port 0, nothing listens) */
	int fd = socket(res->ai_family, SOCK_STREAM, 0), e = 0;
	if (fd >= 0 && bind(fd, res->ai_addr, res->ai_addrlen) < 0)
		e = errno;
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	if (e == EADDRNOTAVAIL) {
		snprintf(why, len, "not an address of this host");
		return -1;
	}
	return 0;
}

static void serve_usage(FILE *f)
{
	fprintf(f, "usage: linklab serve [-p PORT] [-B ADDR] [-1]\n"
		"  -p PORT   port to listen on, 0..65535 (default 5201; 0 = any free port)\n"
		"  -B ADDR   bind to this local address (default: all)\n"
		"  -1        serve one test, then exit (a bare port probe does not count)\n"
		"Also answers `linklab test --rtt` probes (UDP echo on the same port) and,\n"
		"when a linklab client asks (--server-live), sends live server-side interval\n"
		"samples; stock iperf3 clients never ask and see a plain iperf3 server.\n");
}

int cmd_serve(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'B' },
		{ "one-off", no_argument, NULL, '1' },
		{ "server", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct serve_opts o = { .port = 5201 };
	struct sigaction sa, oi, ot, op;
	struct ll_err err = { 0 };
	int c, r, nbad = 0;
	char why[160];
	const char *seen[2] = { NULL, NULL };   /* -p, -B as first given */

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:B:1sh", lo, NULL)) != -1) {
		if ((c == 'p' || c == 'B') && seen[c == 'B']) {
			fprintf(stderr, "linklab serve: option -%c given twice ('%s', then '%s'): give it once\n",
				c, seen[c == 'B'], optarg);
			nbad++;
			continue;
		}
		if (c == 'p' || c == 'B')
			seen[c == 'B'] = optarg;
		switch (c) {
		case 'p': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || v < 0 || v > 65535) {
				fprintf(stderr, "linklab serve: invalid -p '%s': an integer 0..65535\n",
					optarg);
				nbad++;   /* the other options are checked too */
				break;
			}
			o.port = (int)v;
			break;
		}
		case 'B':
			if (!optarg[0] || strlen(optarg) >= sizeof(o.bind)) {
				fprintf(stderr, "linklab serve: invalid -B '%s': a local address\n",
					optarg);
				nbad++;
				break;
			}
			if (check_bind(optarg, why, sizeof(why)) < 0) {
				fprintf(stderr, "linklab serve: invalid -B '%s': %s (an address "
					"of this host, IPv4 or IPv6, or a name of one)\n",
					optarg, why);
				nbad++;
				break;
			}
			snprintf(o.bind, sizeof(o.bind), "%s", optarg);
			break;
		case '1':
			o.one_off = true;
			break;
		case 's':
			break;   /* accepted for iperf3 muscle memory */
		case 'h':
			serve_usage(stdout);
			return 0;
		default:
			if (optopt == 'p' || optopt == 'B')
				fprintf(stderr, "linklab serve: option -%c needs a value\n",
					optopt);
			else
				fprintf(stderr, "linklab serve: unknown option '%s' "
					"(accepted: -p PORT, -B ADDR, -1, -s, -h)\n",
					argv[optind - 1]);
			nbad++;
			break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "linklab serve: unexpected argument '%s'\n", argv[optind]);
		nbad++;
	}
	if (nbad)   /* every problem above was printed; nothing was started */
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;   /* only sets the flag */
	sigemptyset(&sa.sa_mask);
	serve_stop = 0;
	sigaction(SIGINT, &sa, &oi);
	sigaction(SIGTERM, &sa, &ot);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &op);
	r = serve_run(&o, &serve_stop, on_listen, on_log, NULL, &err);
	sigaction(SIGINT, &oi, NULL);
	sigaction(SIGTERM, &ot, NULL);
	sigaction(SIGPIPE, &op, NULL);
	if (r < 0) {
		fprintf(stderr, "linklab serve: %s\n", err.msg);
		return 1;
	}
	return 0;
}
