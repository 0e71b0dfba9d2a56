/* SPDX-License-Identifier: MIT */
/* cmd_test.c - `linklab test -c ADDR [-p PORT] [-P N] [-t SEC] [-i SEC] [-R]
 * [-l LEN] [-w SIZE] [-b RATE] [-u] [-J] [--connect-timeout SEC]`: run an
 * iperf3-compatible client test and print it like iperf3 (text, or -J). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linklab/cli/cli.h"
#include "linklab/cli/cmd.h"
#include "linklab/base/units.h"
#include "linklab/traffic/csvout.h"
#include "linklab/traffic/iperf3.h"
#include "linklab/traffic/plot.h"
#include "linklab/traffic/client.h"

/* Output choices of one run beyond -J (set by cmd_test before
 * cmd_test_run; the --peer path keeps the defaults). */
static struct {
	bool json_stream;          /* --json-stream: one JSON line per event */
	const char *csv;           /* --csv FILE */
	const char *plot;          /* --plot FILE.svg */
	bool csv_stdout;           /* --format csv: intervals as CSV on stdout */
	int repeat;                /* --repeat N (0/1 = once) */
	bool quiet;                /* repeat runs: no per-run text */
	double last_bps;           /* the finished run's receiver bit/s */
	struct rtt_stats last_idle, last_load;
	char last_err[LL_ERR_MAX]; /* why the last run failed ("" = it did not) */
} out_opts;

static int gso_given;   /* bit 0: --gso, bit 1: --no-gso */

static volatile sig_atomic_t test_sig;

static void on_sig(int sig)
{
	test_sig = sig;
}

static const char *test_signame(int sig)
{
	return sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGINT";
}

/* Print one option problem (option, value, accepted range); returns 1 so
 * the parser counts them and reports every one before exiting 2, like tc. */
static int bad_opt(const char *opt, const char *val, const char *range)
{
	fprintf(stderr, "linklab test: invalid %s '%s': %s\n", opt, val, range);
	return 1;
}

/* a plain decimal number (units_parse_number: no hex, inf or nan) */
static int parse_num(const char *s, double *out)
{
	return units_parse_number(s, out);
}

/* iperf3 units.c style: bytes 1024-based "12.3 MBytes", bits 1000-based. */
static void fmt_bytes(double b, char *buf, size_t len)
{
	static const char *const u[] = { "Bytes", "KBytes", "MBytes", "GBytes",
					 "TBytes" };
	int i = 0;

	while (b >= 1024 && i < 4) {
		b /= 1024;
		i++;
	}
	snprintf(buf, len, b < 9.995 ? "%4.2f %s" : b < 99.95 ? "%4.1f %s" :
		 "%4.0f %s", b, u[i]);
}

static void fmt_bits(double b, char *buf, size_t len)
{
	static const char *const u[] = { "bits/sec", "Kbits/sec", "Mbits/sec",
					 "Gbits/sec", "Tbits/sec" };
	int i = 0;

	while (b >= 1000 && i < 4) {
		b /= 1000;
		i++;
	}
	snprintf(buf, len, b < 9.995 ? "%4.2f %s" : b < 99.95 ? "%4.1f %s" :
		 "%4.0f %s", b, u[i]);
}

static void print_sample(const char *tag, const struct client_stream_sample *s,
			 bool cols, const char *role)
{
	char by[32], bi[32], cw[32];

	fmt_bytes((double)s->bytes, by, sizeof(by));
	fmt_bits(s->bps, bi, sizeof(bi));
	printf("[%s] %6.2f-%-6.2f sec  %s  %s", tag, s->start, s->end, by, bi);
	/* an interval of -O: iperf3 ends the line with "(omitted)" after the
	 * padding of its format (iperf_locale.c report_bw_*_format, the last
	 * %s is report_omitted) */
	const char *om = !role && s->omitted ? "(omitted)" : "";
	if (s->packets >= 0) {   /* UDP, as iperf3's UDP report lines */
		if (s->sender && !role)
			printf("  %lld%s%s\n", (long long)s->packets,
			       *om ? "  " : "", om);
		else if (s->sender)
			printf("  %.3f ms  0/%lld (0%%)  %s\n", 0.0,
			       (long long)s->packets, role);
		else if (s->lost < 0)   /* the peer's omitted loss unknown */
			printf("  %.3f ms  ?/%lld (loss unknown: the server's count "
			       "includes -O)%s%s\n", s->jitter_ms, (long long)s->packets,
			       role || *om ? "  " : "", role ? role : om);
		else
			printf("  %.3f ms  %lld/%lld (%.2g%%)%s%s\n", s->jitter_ms,
			       (long long)s->lost, (long long)s->packets,
			       s->packets > 0 ? 100.0 * (double)s->lost / (double)s->packets : 0.0,
			       role || *om ? "  " : "", role ? role : om);
		return;
	}
	if (role) {
		if (s->sender && s->retransmits >= 0)
			printf("  %4lld", (long long)s->retransmits);
		else
			printf("      ");
		printf("             %s\n", role);
		return;
	}
	if (cols && s->retransmits >= 0) {
		printf("  %4lld", (long long)s->retransmits);
		if (s->snd_cwnd >= 0) {
			fmt_bytes((double)s->snd_cwnd, cw, sizeof(cw));
			printf("   %s", cw);
			if (*om)
				printf("       %s", om);
		} else if (*om) {
			printf("             %s", om);
		}
	} else if (*om) {
		printf("                  %s", om);
	}
	printf("\n");
}

/* "[  1]" or, with --bidir, "[  1][TX-C]" as iperf3 marks the roles */
static void tag_of(int id, bool bidir, bool we_send, char *buf, size_t len)
{
	if (id < 0)
		snprintf(buf, len, bidir ? "SUM][%s" : "SUM%.0s",
			 we_send ? "TX-C" : "RX-C");
	else if (bidir)
		snprintf(buf, len, "%3d][%s", id, we_send ? "TX-C" : "RX-C");
	else
		snprintf(buf, len, "%3d", id);
}

static void print_interval(const struct client_interval *iv,
			   const struct client_opts *o)
{
	char tag[32];
	int nfwd = o->bidir ? o->streams : iv->nstreams;

	if (iv->remote) {
		/* live samples of the server's sending streams */
		for (int i = 0; i < iv->nstreams; i++) {
			snprintf(tag, sizeof(tag), "%3d][TX-S", iv->s[i].id);
			print_sample(tag, &iv->s[i], true, NULL);
		}
		if (iv->nstreams > 1)
			print_sample("SUM][TX-S", &iv->sum, true, NULL);
		fflush(stdout);
		return;
	}
	for (int i = 0; i < iv->nstreams; i++) {
		tag_of(iv->s[i].id, o->bidir, iv->s[i].sender, tag, sizeof(tag));
		print_sample(tag, &iv->s[i], iv->s[i].sender, NULL);
	}
	if (nfwd > 1) {
		tag_of(-1, o->bidir, iv->sum.sender, tag, sizeof(tag));
		print_sample(tag, &iv->sum, iv->sum.sender, NULL);
	}
	if (o->bidir && o->streams > 1) {
		tag_of(-1, true, false, tag, sizeof(tag));
		print_sample(tag, &iv->sum_reverse, false, NULL);
	}
	if (iv->nstreams > 1)
		printf("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
	fflush(stdout);
}

static void print_summary(const struct client_summary *S,
			  const struct client_opts *o)
{
	char tag[32];
	int nfwd = o->bidir ? o->streams : S->nstreams;

	printf("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
	if (S->sum_sent.packets >= 0)
		printf("[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n");
	else
		printf("[ ID] Interval           Transfer     Bitrate         Retr\n");
	for (int i = 0; i < S->nstreams; i++) {
		bool we_send = o->bidir ? i < o->streams : !o->reverse;
		tag_of(S->sent[i].id, o->bidir, we_send, tag, sizeof(tag));
		print_sample(tag, &S->sent[i], true, "sender");
		print_sample(tag, &S->received[i], true, "receiver");
	}
	if (nfwd > 1 || o->bidir) {
		tag_of(-1, o->bidir, !o->reverse, tag, sizeof(tag));
		print_sample(tag, &S->sum_sent, true, "sender");
		print_sample(tag, &S->sum_received, true, "receiver");
	}
	if (o->bidir) {
		tag_of(-1, true, false, tag, sizeof(tag));
		print_sample(tag, &S->sum_sent_reverse, true, "sender");
		print_sample(tag, &S->sum_received_reverse, true, "receiver");
	}
	/* iperf3's receiver line "N datagrams received out-of-order" (from
	 * linklab serve's results when it received; iperf3 -s sends none),
	 * and linklab's duplicates, each on its own line */
	for (int i = 0; i < S->nstreams; i++) {
		const struct client_stream_sample *r = &S->received[i];
		if (r->outoforder > 0)
			printf("[%3d] %.2f-%.2f sec  %lld datagrams received out-of-order\n",
			       r->id, r->start, r->end, (long long)r->outoforder);
		if (r->dups > 0)
			printf("[%3d] %.2f-%.2f sec  %lld duplicates\n", r->id, r->start,
			       r->end, (long long)r->dups);
	}
	if (S->sum_sent.packets >= 0)
		printf("(jitter: the receiver's last smoothed RFC 3550 estimate, "
		       "J += (|D| - J)/16, not a mean over the run)\n");
	if (S->partial)
		printf("(partial: the test failed before the peer's results arrived)\n");
	if (o->rtt) {
		const struct rtt_stats *rs[2] = { &S->rtt_idle, &S->rtt_load };
		const char *nm[2] = { "idle", "under load" };
		for (int k = 0; k < 2; k++) {
			if (rs[k]->received)
				printf("RTT %s: %d/%d probes answered, rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n",
				       nm[k], rs[k]->received, rs[k]->sent, rs[k]->min_ms,
				       rs[k]->avg_ms, rs[k]->max_ms, rs[k]->mdev_ms);
			else
				printf("RTT %s: 0/%d probes answered (no UDP echo: the server is not linklab serve?)\n",
				       nm[k], rs[k]->sent);
		}
	}
	printf("\nlinklab test done.\n");
	fflush(stdout);
}

static void stream_line(const struct client *t, const char *event,
			const struct client_interval *iv)
{
	char *s = cmd_json_text_safe(client_json_event(t, event, iv), false);

	if (s) {
		printf("%s\n", s);
		free(s);
	}
	fflush(stdout);
}

static void csv_rows(const struct client_interval *iv)
{
	struct ll_err e = { 0 };
	FILE *f = tmpfile();
	char line[1024];
	bool first = true;

	if (!f)
		return;
	/* csvout writes a header then the rows: keep the rows only */
	if (csvout_write(f, iv, 1, NULL, NULL, &e) == 0) {
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			if (first) {
				first = false;
				continue;
			}
			fputs(line, stdout);
		}
	}
	fclose(f);
	fflush(stdout);
}

/* Report a test that could not start: as JSON (-J, unless quiet) or a
 * stream error event (--json-stream), then on stderr; kept as last_err. */
static void cmd_test_start_failed(const struct ll_err *err, int json)
{
	if (json && !out_opts.quiet) {
		char *es = NULL;
		cJSON *j = cJSON_CreateObject();
		if (j) {
			cJSON_AddStringToObject(j, "error", err->msg);
			cmd_json_sanitize(j);
			es = cJSON_Print(j);
			cJSON_Delete(j);
		}
		if (es)
			printf("%s\n", es);
		free(es);
	} else if (out_opts.json_stream) {
		cJSON *j = cJSON_CreateObject();
		char *es = NULL;
		if (j) {
			cJSON_AddStringToObject(j, "event", "error");
			cJSON_AddStringToObject(j, "data", err->msg);
			cmd_json_sanitize(j);
			es = cJSON_PrintUnformatted(j);
			cJSON_Delete(j);
		}
		if (es)
			printf("%s\n", es);
		free(es);
	}
	fprintf(stderr, "linklab test: %s\n", err->msg);
	snprintf(out_opts.last_err, sizeof(out_opts.last_err), "%s", err->msg);
}

/* Print the connected streams and the interval table's header (text). */
static void cmd_test_print_connected(struct client *t, const struct client_event *ev,
				     const struct client_opts *o)
{
	for (int i = 0; i < ev->interval.nstreams; i++) {
		char lh[64], rh[64];
		int lp, rp, id = client_stream_addr(t, i, lh, sizeof(lh),
						  &lp, rh, sizeof(rh), &rp);
		if (id > 0)
			printf("[%3d] local %s port %d connected to %s port %d\n",
			       id, lh, lp, rh, rp);
	}
	if (o->reverse)
		printf("Reverse mode, remote host %s is sending\n", o->host);
	if (o->udp && o->reverse)
		printf("[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n");
	else if (o->udp)
		printf("[ ID] Interval           Transfer     Bitrate         Total Datagrams\n");
	else if (o->reverse)
		printf("[ ID] Interval           Transfer     Bitrate\n");
	else
		printf("[ ID] Interval           Transfer     Bitrate         Retr  Cwnd\n");
}

/* Handle one event of the run in every output asked for; returns 1 when
 * the run is finished (rc set to 0 on a completed run), else 0. */
static int cmd_test_event(struct client *t, const struct client_event *ev,
			  const struct client_opts *o, int json, bool text, int *rc)
{
	switch (ev->kind) {
	case CLIENT_EV_CONNECTED:
		if (out_opts.json_stream)
			stream_line(t, "start", NULL);
		if (text)
			cmd_test_print_connected(t, ev, o);
		break;
	case CLIENT_EV_INTERVAL:
		if (out_opts.json_stream)
			stream_line(t, "interval", &ev->interval);
		if (out_opts.csv_stdout && !ev->interval.remote)
			csv_rows(&ev->interval);
		if (text)
			print_interval(&ev->interval, o);
		break;
	case CLIENT_EV_DONE:
		out_opts.last_bps = client_summary(t)->sum_received.bps;
		out_opts.last_idle = client_summary(t)->rtt_idle;
		out_opts.last_load = client_summary(t)->rtt_load;
		if (out_opts.json_stream)
			stream_line(t, "end", NULL);
		if (text)
			print_summary(client_summary(t), o);
		*rc = 0;
		return 1;
	case CLIENT_EV_ERROR:
		if (out_opts.json_stream) {
			if (client_summary(t)->partial)
				stream_line(t, "end", NULL);
			stream_line(t, "error", NULL);
		}
		if (text && client_summary(t)->partial)
			print_summary(client_summary(t), o);
		if (!json || !out_opts.quiet)
			fprintf(stderr, "linklab test: error - %s\n",
				ev->err.msg);
		snprintf(out_opts.last_err, sizeof(out_opts.last_err),
			 "%s", ev->err.msg);
		return 1;
	}
	return 0;
}

/* Write the finished run's intervals and summary to the --csv and --plot
 * files; returns rc, or 1 when a file could not be written. */
static int cmd_test_write_files(struct client *t, const struct client_opts *o,
				int rc, struct ll_err *err)
{
	const struct client_interval *ivs;
	int niv = client_intervals(t, &ivs);
	const struct client_summary *S = rc == 0 || client_summary(t)->partial ?
				       client_summary(t) : NULL;
	char cap[300];
	snprintf(cap, sizeof(cap), "linklab test -c %s -P %d%s%s%s", o->host,
		 o->streams, o->udp ? " -u" : "", o->reverse ? " -R" : "",
		 o->bidir ? " --bidir" : "");
	if (out_opts.csv &&
	    csvout_write_file(out_opts.csv, ivs, niv, S, cap, err) < 0) {
		fprintf(stderr, "linklab test: --csv: %s\n", err->msg);
		rc = 1;
	}
	if (out_opts.plot &&
	    plot_svg_write(out_opts.plot, ivs, niv, S, cap, err) < 0) {
		fprintf(stderr, "linklab test: --plot: %s\n", err->msg);
		rc = 1;
	}
	return rc;
}

int cmd_test_run(const struct client_opts *o, int json)
{
	struct sigaction sa, old_int, old_term, old_hup;
	struct client *t = NULL;
	struct client_event *ev;
	struct ll_err err = { 0 };
	int rc = 1, stopped = 0, finished = 0;

	ev = malloc(sizeof(*ev));
	if (!ev) {
		fprintf(stderr, "linklab test: out of memory\n");
		return 1;
	}
	if (client_start(o, &t, &err) < 0) {
		cmd_test_start_failed(&err, json);
		free(ev);
		return 1;
	}
	bool text = !json && !out_opts.json_stream && !out_opts.csv_stdout &&
		    !out_opts.quiet;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;   /* only sets a flag; no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	test_sig = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);   /* the terminal gone: stop as on TERM */
	if (text) {
		printf("Connecting to host %s, port %d\n", o->host, o->port);
		fflush(stdout);
	}
	if (out_opts.csv_stdout) {
		printf("%s\n", csvout_header);
		fflush(stdout);
	}
	while (!finished) {
		struct pollfd p = { .fd = client_event_fd(t), .events = POLLIN };
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		if (test_sig && !stopped) {
			stopped = 1;
			client_stop(t);
		}
		while (!finished && client_next_event(t, ev) == 1)
			finished = cmd_test_event(t, ev, o, json, text, &rc);
	}
	if (json && !out_opts.quiet) {
		char *s = cmd_json_text_safe(client_json(t), true);
		if (s) {
			printf("%s\n", s);
			free(s);
		}
		fflush(stdout);
	}
	/* the finished run: intervals and summary, for files (--csv, --plot) */
	if (finished && (out_opts.csv || out_opts.plot))
		rc = cmd_test_write_files(t, o, rc, &err);
	if (stopped) {
		/* like iperf3: the totals cover the run so far, the exit
		 * status says it did not run its course */
		fprintf(stderr, "linklab test: interrupt - stopped by %s; the summary "
			"covers the run so far\n", test_signame(test_sig));
		snprintf(out_opts.last_err, sizeof(out_opts.last_err),
			 "stopped by %s", test_signame(test_sig));
		rc = 1;
	}
	client_free(t);
	free(ev);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	return rc;
}

/* --repeat N: N runs, one line each, then the mean receiver bit rate with
 * its 95 % confidence interval (netperf -i/-I style reporting). */
static int run_repeated(const struct client_opts *o, int json, int n)
{
	double *bps = calloc((size_t)n, sizeof(*bps));
	double *lat = calloc((size_t)n, sizeof(*lat));
	int ok = 0, nlat = 0, rc = 0;
	char b1[32], b2[32];

	if (!bps || !lat) {
		free(bps);
		free(lat);
		fprintf(stderr, "linklab test: out of memory\n");
		return 1;
	}
	out_opts.quiet = true;
	cJSON *why = cJSON_CreateArray();   /* each failed run's reason (-J) */
	char first[LL_ERR_MAX] = "";
	for (int i = 0; i < n; i++) {
		out_opts.last_bps = 0;
		out_opts.last_err[0] = '\0';
		memset(&out_opts.last_load, 0, sizeof(out_opts.last_load));
		int r = cmd_test_run(o, json ? 2 : 0);
		if (r != 0) {
			const char *e = out_opts.last_err[0] ? out_opts.last_err :
					"failed (no reason given)";
			rc = 1;
			if (!first[0])
				snprintf(first, sizeof(first), "%s", e);
			if (why) {
				char line[LL_ERR_MAX + 32];
				snprintf(line, sizeof(line), "run %d: %s", i + 1, e);
				cJSON_AddItemToArray(why, cJSON_CreateString(line));
			}
			if (!json)
				printf("run %d/%d: failed: %s\n", i + 1, n, e);
			continue;
		}
		bps[ok++] = out_opts.last_bps;
		if (out_opts.last_load.received)
			lat[nlat++] = out_opts.last_load.avg_ms;
		if (!json) {
			fmt_bits(out_opts.last_bps, b1, sizeof(b1));
			printf("run %d/%d: %s received", i + 1, n, b1);
			if (out_opts.last_load.received)
				printf(", RTT under load avg %.3f ms", out_opts.last_load.avg_ms);
			printf("\n");
			fflush(stdout);
		}
	}
	double m, h, lm = 0, lh = 0;
	rtt_mean_ci95(bps, ok, &m, &h);
	rtt_mean_ci95(lat, nlat, &lm, &lh);
	if (json) {
		cJSON *j = cJSON_CreateObject(), *a;
		a = cJSON_AddArrayToObject(j, "runs_bits_per_second");
		for (int i = 0; i < ok; i++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(bps[i]));
		cJSON_AddNumberToObject(j, "runs", n);
		cJSON_AddNumberToObject(j, "runs_ok", ok);
		if (ok) {   /* no mean of nothing */
			cJSON_AddNumberToObject(j, "mean_bits_per_second", m);
			cJSON_AddNumberToObject(j, "ci95_bits_per_second", h);
		}
		if (nlat) {
			cJSON_AddNumberToObject(j, "mean_rtt_load_ms", lm);
			cJSON_AddNumberToObject(j, "ci95_rtt_load_ms", lh);
		}
		if (ok < n) {
			char e[LL_ERR_MAX + 64];
			if (ok == 0)
				snprintf(e, sizeof(e), "all %d runs failed: %s", n, first);
			else
				snprintf(e, sizeof(e), "%d of %d runs failed: %s%s", n - ok,
					 n, first, n - ok > 1 ? " (each run's reason in run_errors)" : "");
			cJSON_AddStringToObject(j, "error", e);
			cJSON_AddItemToObject(j, "run_errors", why);
			why = NULL;
		}
		cmd_json_sanitize(j);
		char *s = cJSON_Print(j);
		if (s)
			printf("%s\n", s);
		free(s);
		cJSON_Delete(j);
	} else if (ok == 0) {
		/* no mean of nothing: the reason instead */
		fprintf(stderr, "linklab test: all %d runs failed: %s\n", n, first);
	} else {
		fmt_bits(m, b1, sizeof(b1));
		fmt_bits(h, b2, sizeof(b2));
		printf("mean of %d runs: %s +/- %s (95%% confidence, %.1f%% of the mean)\n",
		       ok, b1, b2, m > 0 ? 100 * h / m : 0);
		if (nlat)
			printf("RTT under load: mean %.3f +/- %.3f ms (95%% confidence)\n",
			       lm, lh);
	}
	cJSON_Delete(why);
	free(bps);
	free(lat);
	return rc;
}

static void test_usage(FILE *f)
{
	fprintf(f,
		"usage: linklab test -c ADDR [-p PORT] [-P N] [-t SEC] [-i SEC] [-R] [--bidir] [-u]\n"
		"                    [-l LEN] [-w SIZE] [-b RATE] [-J] [--connect-timeout SEC]\n"
		"  -c ADDR   server (linklab serve or iperf3 -s)\n"
		"  -p PORT   server port, 1..65535 (default 5201)\n"
		"  -P N      parallel streams, 1..128 (default 1)\n"
		"  -t SEC    duration, 1..86400 (default 10)\n"
		"  -i SEC    report interval, 0.1..60 (default 1); 0: one report at the end\n"
		"  -R        reverse: the server sends\n"
		"  --bidir   both directions at once, -P streams each way (1..64)\n"
		"  -l LEN    block size in bytes, K/M suffixes 1024-based, 1..1M (TCP default 128K)\n"
		"  -w SIZE   socket buffer size, K/M suffixes, up to 512M\n"
		"  -b RATE   target bit/s per stream: 10M (K/M/G 1000-based) or 10mbit\n"
		"            (tc units); default unlimited\n"
		"  -u        UDP (default -b 1M per stream; -l 16..65507, default the\n"
		"            control connection's TCP MSS as iperf3: 1448 on a 1500 MTU\n"
		"            path with TCP timestamps, 1460 when the MSS is unknown)\n"
		"  -J        print an iperf3 -J style JSON document (errors in \"error\")\n"
		"  -O SEC    omit the first SEC seconds from the totals (0..600)\n"
		"  -n BYTES  send this many bytes (all streams) instead of -t, 1..10^18;\n"
		"            K/M/G/T suffixes 1024-based\n"
		"  -k BLOCKS send this many blocks of -l instead of -t, 1..10^15;\n"
		"            K/M/G/T suffixes 1024-based\n"
		"  -M MSS    TCP maximum segment size, 1..65535 bytes\n"
		"  -N        TCP_NODELAY on the data streams\n"
		"  -C ALGO   TCP congestion control on the data streams (both ends)\n"
		"  -Z        zero-copy send (sendfile)\n"
		"  --udp-counters-64bit  64-bit UDP sequence numbers\n"
		"  --no-gso  UDP: one datagram per system call. By default the sender\n"
		"            (linklab serve too with -R/--bidir) sends batches with UDP GSO\n"
		"            (UDP_SEGMENT) where the kernel has it: much faster, the same\n"
		"            datagrams on the wire, but a netem or bridge impairment on the\n"
		"            path acts on whole batches (at most 1 ms of the -b rate each)\n"
		"  --gso     UDP GSO batches (the default)\n"
		"  --json-stream         one JSON line per event (start, interval, end, error)\n"
		"  --format csv          intervals as CSV on stdout\n"
		"  --csv FILE            write the intervals and the summary as CSV\n"
		"  --plot FILE.svg       write an SVG chart of the run\n"
		"  --rtt                 RTT probes (linklab serve's UDP echo): idle before,\n"
		"                        under load during the test; min/avg/max/mdev\n"
		"  --repeat N            N runs: mean bit rate with its 95%% confidence interval\n"
		"  --server-live         ask linklab serve for live server-side samples\n"
		"                        (shows the remote sender's TCP_INFO in -R tests)\n");
}

/* An output file (--csv, --plot) can be written: opened for writing now,
 * before the test runs (created and removed again if it did not exist).
 * Prints "OPT PATH: cannot write: strerror" and returns 1, else 0. */
static int check_out_path(const char *opt, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	bool made = fd >= 0;

	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "linklab test: %s %s: cannot write: %s\n", opt, path,
			strerror(errno));
		return 1;
	}
	close(fd);
	if (made)
		unlink(path);
	return 0;
}

/* An option with a value (getopt code c, long name or NULL) given a second
 * time: say so, naming it and both values, and return true. seen holds the
 * first value by code (short codes < 128, long-only codes 1000.. at 128..). */
#define TEST_SEEN_MAX (128 + 16)

static bool repeated(int c, const char *lname, const char *seen[TEST_SEEN_MAX])
{
	int k = c < 128 ? c : c - 1000 + 128;
	char nm[40];

	if (!optarg || c <= 0 || k < 0 || k >= TEST_SEEN_MAX)
		return false;
	if (!seen[k]) {
		seen[k] = optarg;
		return false;
	}
	if ((c < 128 && strchr("cpPtilwbOnkMC", c)) || !lname)
		snprintf(nm, sizeof(nm), "-%c", c);
	else
		snprintf(nm, sizeof(nm), "--%s", lname);
	fprintf(stderr, "linklab test: option %s given twice ('%s', then '%s'): give it once\n",
		nm, seen[k], optarg);
	return true;
}

/* Take one of the main options (-c -p -P -t -i -R -l -w -b -u -J --bidir
 * --connect-timeout) into o: 0 taken, 1 refused (said on stderr), -1 not
 * one of these. */
static int cmd_test_opt_main(int c, struct client_opts *o, int *json,
			     bool *b_given)
{
	double v;

	switch (c) {
	case 'c':
		if (!optarg[0] || strlen(optarg) >= sizeof(o->host))
			return bad_opt("-c", optarg, "a host name or address");
		snprintf(o->host, sizeof(o->host), "%s", optarg);
		return 0;
	case 'p':
		if (parse_num(optarg, &v) || v < 1 || v > 65535 || v != floor(v))
			return bad_opt("-p", optarg, "an integer 1..65535");
		o->port = (int)v;
		return 0;
	case 'P':
		if (parse_num(optarg, &v) || v < 1 || v > CLIENT_MAX_STREAMS ||
		    v != floor(v))
			return bad_opt("-P", optarg, "an integer 1..128");
		o->streams = (int)v;
		return 0;
	case 't':
		if (!parse_num(optarg, &v) && v == 0) {
			/* iperf3 3.12: -t 0 runs until interrupted */
			return bad_opt("-t", optarg,
					"seconds, 1..86400 (iperf3's -t 0, run until "
					"interrupted, is not supported: the engine and "
					"linklab serve work to a fixed duration; use "
					"-t 86400 and Ctrl-C, the summary covers the run "
					"so far)");
		}
		if (parse_num(optarg, &v) || v < 1 || v > IPERF3_MAX_TIME)
			return bad_opt("-t", optarg, "seconds, 1..86400");
		o->duration = v;
		return 0;
	case 'i':
		if (parse_num(optarg, &v) || (v != 0 && (v < 0.1 || v > 60)))
			return bad_opt("-i", optarg,
					"seconds, 0.1..60, or 0 (no periodic reports, as iperf3)");
		o->interval = v;
		return 0;
	case 'R':
		o->reverse = true;
		return 0;
	case 'l':
		if (units_parse_suffixed(optarg, 1024, &v) || v < 1 ||
		    v > IPERF3_MAX_BLOCKSIZE)
			return bad_opt("-l", optarg,
				       "bytes, 1..1M (K/M suffixes are 1024-based)");
		o->blksize = (uint32_t)v;
		return 0;
	case 'w':
		if (units_parse_suffixed(optarg, 1024, &v) || v < 1 ||
		    v > IPERF3_MAX_WINDOW)
			return bad_opt("-w", optarg,
				       "bytes, 1..512M (K/M suffixes are 1024-based)");
		o->window = (uint64_t)v;
		return 0;
	case 'b': {
		/* iperf3's form (10M, 1.5G: 1000-based) or tc's units, as apply
		 * and the console's test form take them (10mbit, 1gbit) */
		struct ll_err re = { 0 };
		uint64_t bps;

		if (units_parse_suffixed(optarg, 1000, &v) == 0 && v <= 1e15)
			o->bitrate = (uint64_t)v;
		else if (units_parse_rate(optarg, &bps, &re) == 0 && bps <= 1000000000000000ULL)
			o->bitrate = bps;
		else
			return bad_opt("-b", optarg,
				       "bit/s, 0 (unlimited) .. 1000T: iperf3's 10M, 1.5G (1000-based) or tc's 10mbit, 1gbit");
		*b_given = true;
		return 0;
	}
	case 'u':
		o->udp = true;
		return 0;
	case 'J':
		*json = 1;
		return 0;
	case 'D':
		o->bidir = true;
		return 0;
	case 'T':
		if (parse_num(optarg, &v) || v <= 0 || v > 3600)
			return bad_opt("--connect-timeout", optarg,
				       "seconds, (0..3600]");
		o->connect_timeout = v;
		return 0;
	}
	return -1;
}

/* Take one of the other options (-O -n -k -M -N -C -Z and the long-only
 * ones) into o or out_opts: 0 taken, 1 refused (said on stderr), -1 not
 * one of these. */
static int cmd_test_opt_more(int c, struct client_opts *o)
{
	double v;

	switch (c) {
	case 'O':
		if (parse_num(optarg, &v) || v < 0 || v > 600)
			return bad_opt("-O", optarg, "seconds, 0..600");
		o->omit = v;
		return 0;
	case 'n':
		if (units_parse_suffixed(optarg, 1024, &v) || v < 1 || v > 1e18) {
			return bad_opt("-n", optarg,
				       "1 byte .. 10^18 bytes; K/M/G/T suffixes, 1024-based");
		}
		o->bytes = (uint64_t)v;
		return 0;
	case 'k':
		if (units_parse_suffixed(optarg, 1024, &v) || v < 1 || v > 1e15) {
			return bad_opt("-k", optarg,
				       "1 .. 10^15 blocks; K/M/G/T suffixes, 1024-based");
		}
		o->blocks = (uint64_t)v;
		return 0;
	case 'M':
		if (parse_num(optarg, &v) || v < 1 || v > 65535 || v != floor(v))
			return bad_opt("-M", optarg, "bytes, 1..65535");
		o->mss = (uint32_t)v;
		return 0;
	case 'N':
		o->nodelay = true;
		return 0;
	case 'C':
		if (!optarg[0] || strlen(optarg) >= sizeof(o->congestion))
			return bad_opt("-C", optarg,
				       "a congestion control name (cubic, bbr, reno ...)");
		snprintf(o->congestion, sizeof(o->congestion), "%s", optarg);
		return 0;
	case 'Z':
		o->zerocopy = true;
		return 0;
	case 1001:
		o->udp64 = true;
		return 0;
	case 1002:
		out_opts.json_stream = true;
		return 0;
	case 1003:
		out_opts.csv = optarg;
		return 0;
	case 1004:
		out_opts.plot = optarg;
		return 0;
	case 1005:
		if (!strcmp(optarg, "csv"))
			out_opts.csv_stdout = true;
		else if (strcmp(optarg, "text"))
			return bad_opt("--format", optarg, "text or csv");
		return 0;
	case 1006:
		o->live = o->interval;
		return 0;
	case 1007:
		o->rtt = true;
		return 0;
	case 1009:
		o->gso = true;
		gso_given |= 1;
		return 0;
	case 1010:
		o->gso = false;
		gso_given |= 2;
		return 0;
	case 1008:
		if (parse_num(optarg, &v) || v < 1 || v > 1000 || v != floor(v))
			return bad_opt("--repeat", optarg, "an integer 1..1000");
		out_opts.repeat = (int)v;
		return 0;
	}
	return -1;
}

/* The checks after parsing: a stray argument, -c missing, the defaults
 * that follow from other options, the options that exclude each other, the
 * engine's own rules, the congestion control and the output files. All
 * are said on stderr; returns how many problems. */
static int cmd_test_check_across(struct client_opts *o, int json, bool b_given,
				 int argc, char **argv)
{
	int nbad = 0;

	if (optind < argc) {
		fprintf(stderr, "linklab test: unexpected argument '%s'\n", argv[optind]);
		nbad++;
	}
	if (!o->host[0]) {
		fprintf(stderr, "linklab test: -c ADDR is required (the server to test against)\n");
		nbad++;
	}
	/* the checks across options run on what parsed (a value refused
	 * above keeps its default), so every problem is listed at once */
	if (o->udp && !b_given)
		o->bitrate = IPERF3_UDP_DEFAULT_RATE;   /* iperf3's UDP default */
	if (o->live > 0)
		o->live = o->interval;   /* live samples at the report interval */
	if (gso_given == 3) {
		fprintf(stderr, "linklab test: --gso and --no-gso: give one of them\n");
		nbad++;
	}
	if ((json != 0) + out_opts.json_stream + out_opts.csv_stdout > 1) {
		fprintf(stderr, "linklab test: -J, --json-stream and --format csv are mutually exclusive\n");
		nbad++;
	}
	struct ll_diag d = { 0 };
	if (client_opts_validate(o, &d) < 0) {
		for (int i = 0; i < d.n; i++)
			if (strcmp(d.e[i].field, "host"))   /* -c: said above */
				fprintf(stderr, "linklab test: %s\n", d.e[i].text);
		nbad += d.nerrors;
	}
	if (out_opts.repeat > 1 && (out_opts.json_stream || out_opts.csv_stdout ||
				    out_opts.csv || out_opts.plot)) {
		fprintf(stderr, "linklab test: --repeat prints a summary (text or -J) only\n");
		nbad++;
	}
	if (o->congestion[0]) {   /* before connecting: this host's list */
		struct ll_err ce = { 0 };
		if (iperf3_cc_check(o->congestion, &ce) < 0) {
			fprintf(stderr, "linklab test: %s\n", ce.msg);
			nbad++;
		}
	}
	if (out_opts.csv)
		nbad += check_out_path("--csv", out_opts.csv);
	if (out_opts.plot)
		nbad += check_out_path("--plot", out_opts.plot);
	return nbad;
}

/* Parse and check argv; every problem is printed before anything runs.
 * check_only: stop there (0 fine, 1 -h printed, 2 problems); nbad: problems
 * the caller already printed. */
static int test_cmd(int argc, char **argv, int nbad, bool check_only)
{
	static const struct option lo[] = {
		{ "client", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "parallel", required_argument, NULL, 'P' },
		{ "time", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "reverse", no_argument, NULL, 'R' },
		{ "length", required_argument, NULL, 'l' },
		{ "window", required_argument, NULL, 'w' },
		{ "bitrate", required_argument, NULL, 'b' },
		{ "udp", no_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'J' },
		{ "connect-timeout", required_argument, NULL, 'T' },
		{ "bidir", no_argument, NULL, 'D' },
		{ "omit", required_argument, NULL, 'O' },
		{ "bytes", required_argument, NULL, 'n' },
		{ "blockcount", required_argument, NULL, 'k' },
		{ "set-mss", required_argument, NULL, 'M' },
		{ "no-delay", no_argument, NULL, 'N' },
		{ "congestion", required_argument, NULL, 'C' },
		{ "zerocopy", no_argument, NULL, 'Z' },
		{ "udp-counters-64bit", no_argument, NULL, 1001 },
		{ "json-stream", no_argument, NULL, 1002 },
		{ "csv", required_argument, NULL, 1003 },
		{ "plot", required_argument, NULL, 1004 },
		{ "format", required_argument, NULL, 1005 },
		{ "server-live", no_argument, NULL, 1006 },
		{ "rtt", no_argument, NULL, 1007 },
		{ "repeat", required_argument, NULL, 1008 },
		{ "gso", no_argument, NULL, 1009 },
		{ "no-gso", no_argument, NULL, 1010 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct client_opts o;
	const char *seen[TEST_SEEN_MAX] = { 0 };   /* first value by option code */
	int json = 0, c, li = -1;
	bool b_given = false;
	int r;

	client_opts_init(&o);
	o.gso = true;   /* UDP GSO batches unless --no-gso (falls back by itself) */
	gso_given = 0;
	memset(&out_opts, 0, sizeof(out_opts));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+c:p:P:t:i:Rl:w:b:uJhO:n:k:M:NC:Z", lo, &li)) != -1) {
		if (repeated(c, li >= 0 ? lo[li].name : NULL, seen)) {
			nbad++;
			li = -1;
			continue;
		}
		li = -1;
		if (c == 'h') {
			test_usage(stdout);
			return check_only ? 1 : 0;
		}
		r = cmd_test_opt_main(c, &o, &json, &b_given);
		if (r < 0)
			r = cmd_test_opt_more(c, &o);
		if (r >= 0) {
			nbad += r;
			continue;
		}
		if (optopt && strchr("cpPtilwbTOnkMC", optopt))
			fprintf(stderr, "linklab test: option -%c needs a value\n",
				optopt);
		else
			fprintf(stderr, "linklab test: unknown option '%s'\n",
				argv[optind - 1]);
		test_usage(stderr);
		return 2;
	}
	nbad += cmd_test_check_across(&o, json, b_given, argc, argv);
	if (nbad)   /* every problem above was printed; nothing was run */
		return 2;
	if (check_only)
		return 0;
	if (out_opts.repeat > 1)
		return run_repeated(&o, json, out_opts.repeat);
	return cmd_test_run(&o, json);
}

int cmd_test(int argc, char **argv)
{
	return test_cmd(argc, argv, 0, false);
}

int cmd_test_check(int argc, char **argv, int nbad)
{
	return test_cmd(argc, argv, nbad, true);
}
