/* SPDX-License-Identifier: MIT */
/* csvout.c - interval CSV and the results directory (see csvout.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "linklab/traffic/csvout.h"

const char csvout_header[] =
	"kind,start,end,stream,sender,bytes,bits_per_second,retransmits,"
	"snd_cwnd,rtt_us,rttvar_us,packets,lost,jitter_ms";

static void csv_row(FILE *f, const char *kind, const char *stream,
		    const struct client_stream_sample *s)
{
	fprintf(f, "%s,%.3f,%.3f,%s,%d,%llu,%.0f,%lld,%lld,%lld,%lld,%lld,%lld,%.3f\n",
		kind, s->start, s->end, stream, s->sender ? 1 : 0,
		(unsigned long long)s->bytes, s->bps, (long long)s->retransmits,
		(long long)s->snd_cwnd, (long long)s->rtt_us,
		(long long)s->rttvar_us, (long long)s->packets,
		(long long)s->lost, s->jitter_ms);
}

/* A stream column: its iperf3 id. */
static const char *csv_id(const struct client_stream_sample *s, char *buf,
			  size_t len)
{
	snprintf(buf, len, "%d", s->id);
	return buf;
}

int csvout_write(FILE *f, const struct client_interval *iv, int n,
		 const struct client_summary *sum, const char *caption,
		 struct ll_err *err)
{
	const char *p = caption;
	char id[16];
	int i, k;

	if (n < 0 || (n > 0 && !iv))
		return ll_err_set(err, -EINVAL, "csv: bad interval array (n = %d)", n);
	while (p && *p) {
		size_t l = strcspn(p, "\n");

		fprintf(f, "# %.*s\n", (int)l, p);
		p += l;
		if (*p == '\n')
			p++;
	}
	fprintf(f, "%s\n", csvout_header);
	for (i = 0; i < n; i++) {
		bool bidir = false;

		/* --bidir: streams of both directions (sample.sender differs) */
		for (k = 1; k < iv[i].nstreams && k < CLIENT_MAX_STREAMS; k++)
			if (iv[i].s[k].sender != iv[i].s[0].sender)
				bidir = true;

		for (k = 0; k < iv[i].nstreams && k < CLIENT_MAX_STREAMS; k++)
			csv_row(f, "interval", csv_id(&iv[i].s[k], id, sizeof(id)),
				&iv[i].s[k]);
		csv_row(f, "interval", "SUM", &iv[i].sum);
		if (bidir)
			csv_row(f, "interval", "SUM_REVERSE", &iv[i].sum_reverse);
	}
	if (sum) {
		for (k = 0; k < sum->nstreams && k < CLIENT_MAX_STREAMS; k++) {
			csv_row(f, "sent", csv_id(&sum->sent[k], id, sizeof(id)),
				&sum->sent[k]);
			csv_row(f, "received", csv_id(&sum->received[k], id, sizeof(id)),
				&sum->received[k]);
		}
		csv_row(f, "sent", "SUM", &sum->sum_sent);
		csv_row(f, "received", "SUM", &sum->sum_received);
	}
	if (ferror(f))
		return ll_err_set(err, -EIO, "csv: write error");
	return 0;
}

int csvout_write_file(const char *path, const struct client_interval *iv, int n,
		      const struct client_summary *sum, const char *caption,
		      struct ll_err *err)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f)
		return ll_err_set(err, -errno, "cannot write %s: %s", path,
				  strerror(errno));
	rc = csvout_write(f, iv, n, sum, caption, err);
	if (rc < 0)
		ll_err_prefix(err, "%s: ", path);
	if (fclose(f) != 0 && rc == 0)
		rc = ll_err_set(err, -errno, "cannot write %s: %s", path,
				strerror(errno));
	return rc;
}

/* mkdir -p (mode 0755). */
static int csv_mkdir_p(const char *dir)
{
	char tmp[4096], *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int csvout_results_dir(char *buf, size_t len, bool create, struct ll_err *err)
{
	const char *x = getenv("XDG_DATA_HOME"), *h = getenv("HOME");
	int rc;

	if (x && *x == '/')
		snprintf(buf, len, "%s/linklab/results", x);
	else if (h && *h)
		snprintf(buf, len, "%s/.local/share/linklab/results", h);
	else
		return ll_err_set(err, -ENOENT,
				  "results: neither XDG_DATA_HOME nor HOME is set");
	if (!create)
		return 0;
	rc = csv_mkdir_p(buf);
	if (rc < 0)
		return ll_err_set(err, rc, "results: cannot create %s: %s", buf,
				  strerror(-rc));
	return 0;
}

int csvout_new_run_dir(char *dir, size_t len, struct ll_err *err)
{
	char base[4000], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int rc, k;

	rc = csvout_results_dir(base, sizeof(base), true, err);
	if (rc < 0)
		return rc;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (k = 1; k < 100; k++) {
		if (k == 1)
			snprintf(dir, len, "%s/%s", base, stamp);
		else
			snprintf(dir, len, "%s/%s-%d", base, stamp, k);
		if (mkdir(dir, 0755) == 0)
			return 0;
		if (errno != EEXIST)
			return ll_err_set(err, -errno, "results: cannot create %s: %s",
					  dir, strerror(errno));
	}
	return ll_err_set(err, -EEXIST, "results: too many runs named %s", stamp);
}
