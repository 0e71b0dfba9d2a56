/* SPDX-License-Identifier: MIT */
/* cmd_serve.c - `linklab serve [-p PORT] [-B ADDR] [-1]`: iperf3-compatible
 * server. First stdout line, once bound: "Server listening on PORT" (the
 * remote backend reads it over SSH to learn an ephemeral port, -p 0). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/cli.h"
#include "linklab/serve.h"

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
	(void)ctx;
	printf("%s\n", line);
	fflush(stdout);
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
	int c, r;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:B:1sh", lo, NULL)) != -1) {
		switch (c) {
		case 'p': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || v < 0 || v > 65535) {
				fprintf(stderr, "linklab serve: invalid -p '%s': an integer 0..65535\n",
					optarg);
				return 2;
			}
			o.port = (int)v;
			break;
		}
		case 'B':
			if (!optarg[0] || strlen(optarg) >= sizeof(o.bind)) {
				fprintf(stderr, "linklab serve: invalid -B '%s': a local address\n",
					optarg);
				return 2;
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
				fprintf(stderr, "linklab serve: unknown option '%s'\n",
					argv[optind - 1]);
			serve_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "linklab serve: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
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
