/* SPDX-License-Identifier: MIT */
/* test_plot.c - the SVG chart and the interval CSV of a run, and the
 * results directory: what a handout and a spreadsheet get. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linklab/traffic/csvout.h"
#include "linklab/traffic/plot.h"

#include <cmocka.h>

/* n intervals of 2 streams ramping up like slow start, 1 s each. */
static struct client_interval *ramp(int n)
{
	struct client_interval *iv = calloc((size_t)n, sizeof(*iv));
	int i, k;

	assert_non_null(iv);
	for (i = 0; i < n; i++) {
		iv[i].nstreams = 2;
		for (k = 0; k < 2; k++) {
			struct client_stream_sample *s = &iv[i].s[k];

			s->id = k ? 3 : 1;
			s->sender = true;
			s->start = i;
			s->end = i + 1;
			s->bps = 10e6 * (i + 1);
			s->bytes = (uint64_t)(s->bps / 8);
			s->retransmits = i;
			s->snd_cwnd = 10000 * (i + 1);
			s->rtt_us = 20000 + 1000 * i;
			s->rttvar_us = 500;
			s->packets = -1;
			s->lost = -1;
		}
		iv[i].sum = iv[i].s[0];
		iv[i].sum.id = 0;
		iv[i].sum.bps = 20e6 * (i + 1);
		iv[i].sum.bytes = (uint64_t)(iv[i].sum.bps / 8);
		iv[i].sum.rtt_us = -1;
	}
	return iv;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The "points" attribute of the first polyline with class cls. */
static void points_of(const char *svg, const char *cls, double *xs, double *ys,
		      int *n)
{
	char key[64];
	const char *p, *q;

	snprintf(key, sizeof(key), "class=\"%s\" points=\"", cls);
	p = strstr(svg, key);
	assert_non_null(p);
	p += strlen(key);
	q = strchr(p, '"');
	*n = 0;
	while (p < q) {
		char *end;

		xs[*n] = strtod(p, &end);
		assert_int_equal(*end, ',');
		ys[*n] = strtod(end + 1, &end);
		(*n)++;
		p = end;
		while (*p == ' ')
			p++;
	}
}

static void svg_sum_streams_rtt_lines(void **state)
{
	struct client_interval *iv = ramp(6);
	struct client_summary sum;
	struct plot_opts o = { .caption = "dial: rate 100mbit <A&B>\npeers: A, B",
			       .dial_bps = 100e6, .ceiling_bps = 95.6e6,
			       .ceiling_label = "rate-limited" };
	double xs[16], ys[16];
	char *svg = NULL;
	struct ll_err err = { 0 };
	int n, i;

	(void)state;
	memset(&sum, 0, sizeof(sum));
	sum.nstreams = 2;
	sum.duration = 6;
	sum.sum_sent.bps = 70e6;
	sum.sum_received.bps = 69e6;
	assert_int_equal(plot_svg(&svg, iv, 6, &sum, &o, &err), 0);
	assert_non_null(svg);
	assert_true(!strncmp(svg, "<?xml", 5));
	assert_non_null(strstr(svg, "</svg>"));
	/* self-contained: no scripts, no external references */
	assert_null(strstr(svg, "<script"));
	assert_null(strstr(svg, "href"));
	/* one SUM line, one line per stream, the RTT line */
	assert_int_equal(count(svg, "class=\"sum\""), 1);
	assert_int_equal(count(svg, "class=\"stream\""), 2);
	assert_int_equal(count(svg, "class=\"rtt\""), 1);
	/* the SUM rises (slow start): y falls, x advances */
	points_of(svg, "sum", xs, ys, &n);
	assert_int_equal(n, 6);
	for (i = 1; i < n; i++) {
		assert_true(xs[i] > xs[i - 1]);
		assert_true(ys[i] < ys[i - 1]);
	}
	/* dialled rate and theory ceiling as labelled lines */
	assert_non_null(strstr(svg, "dialled 100 Mbit/s"));
	assert_non_null(strstr(svg, "rate-limited 95.6 Mbit/s"));
	/* caption lines, XML-escaped; totals */
	assert_non_null(strstr(svg, "dial: rate 100mbit &lt;A&amp;B&gt;"));
	assert_non_null(strstr(svg, ">peers: A, B<"));
	assert_non_null(strstr(svg, "receiver 69.0 Mbit/s"));
	assert_null(strstr(svg, "<A&B>"));
	free(svg);
	/* no intervals: still a valid document; bad arguments refused */
	assert_int_equal(plot_svg(&svg, NULL, 0, NULL, NULL, &err), 0);
	assert_non_null(strstr(svg, "</svg>"));
	assert_int_equal(count(svg, "class=\"sum\""), 0);
	free(svg);
	assert_int_equal(plot_svg(&svg, NULL, 3, NULL, NULL, &err), -EINVAL);
	assert_null(svg);
	free(iv);
}

/* The last x tick label of svg (the time axis labels: text-anchor middle,
 * plain numbers). */
static double last_time_tick(const char *svg)
{
	const char *p = svg, *q;
	double last = -1;

	while ((q = strstr(p, "text-anchor=\"middle\">"))) {
		char *end;
		double v;

		q += strlen("text-anchor=\"middle\">");
		v = strtod(q, &end);
		if (end > q && *end == '<')
			last = v;
		p = q;
	}
	return last;
}

/* The time axis fits the run: a 10 s run (its last interval ending a
 * little after 10 s, as real runs do) ends at 10 s, not 15 s. */
static void svg_time_axis_fits_run(void **state)
{
	static const struct { int n; double end; double last_tick; } c[] = {
		{ 10, 10.0003, 10 }, { 10, 10.0, 10 }, { 6, 6.0, 6 }, { 7, 7.3, 6 },
		{ 30, 30.02, 30 },
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		struct client_interval *iv = ramp(c[k].n);
		char *svg = NULL;
		struct ll_err err = { 0 };
		double xs[64], ys[64];
		int n;

		iv[c[k].n - 1].sum.end = c[k].end;
		assert_int_equal(plot_svg(&svg, iv, c[k].n, NULL, NULL, &err), 0);
		assert_true(last_time_tick(svg) == c[k].last_tick);
		/* the frame's right edge (x0 + w) is the run's end */
		points_of(svg, "sum", xs, ys, &n);
		assert_int_equal(n, c[k].n);
		{
			const char *r = strstr(svg, "fill=\"none\" stroke=\"#444444\"");
			const char *rx = NULL, *p;
			double x0, w;

			assert_non_null(r);
			for (p = strstr(svg, "<rect x=\""); p && p < r; p = strstr(p + 1, "<rect x=\""))
				rx = p;
			assert_non_null(rx);
			assert_int_equal(sscanf(rx, "<rect x=\"%lf\" y=\"%*f\" width=\"%lf\"", &x0, &w), 2);
			/* points sit mid-interval; the axis ends at the run's end */
			assert_true(fabs(xs[n - 1] - (x0 + (c[k].n - 1 + c[k].end) / 2 /
						      c[k].end * w)) < 1.0);
		}
		free(svg);
		free(iv);
	}
}

static void svg_write_file_and_error(void **state)
{
	struct client_interval *iv = ramp(3);
	char dir[] = "/tmp/llD2-plot-XXXXXX", path[128], buf[256];
	struct ll_err err = { 0 };
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/run.svg", dir);
	assert_int_equal(plot_svg_write(path, iv, 3, NULL, "caption", &err), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	assert_non_null(strstr(buf, "<?xml"));
	fclose(f);
	unlink(path);
	snprintf(path, sizeof(path), "%s/no/such/dir/run.svg", dir);
	assert_true(plot_svg_write(path, iv, 3, NULL, NULL, &err) < 0);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "No such file"));
	rmdir(dir);
	free(iv);
}

static void csv_rows_and_summary(void **state)
{
	struct client_interval *iv = ramp(3);
	struct client_summary sum;
	char *buf = NULL, line[256];
	size_t len = 0;
	FILE *f;
	int lines = 0, intervals = 0, sums = 0;
	struct ll_err err = { 0 };

	(void)state;
	memset(&sum, 0, sizeof(sum));
	sum.nstreams = 2;
	sum.sent[0].id = 1;
	sum.sent[1].id = 3;
	sum.received[0].id = 1;
	sum.received[1].id = 3;
	f = open_memstream(&buf, &len);
	assert_int_equal(csvout_write(f, iv, 3, &sum, "dial: rate 50mbit\npeers", &err), 0);
	fclose(f);
	f = fmemopen(buf, len, "r");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "# dial: rate 50mbit\n");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "# peers\n");
	assert_non_null(fgets(line, sizeof(line), f));
	line[strcspn(line, "\n")] = '\0';
	assert_string_equal(line, csvout_header);
	while (fgets(line, sizeof(line), f)) {
		lines++;
		if (!strncmp(line, "interval,", 9))
			intervals++;
		if (strstr(line, ",SUM,"))
			sums++;
	}
	fclose(f);
	/* 3 intervals x (2 streams + SUM), then 2 x (sent + received) + 2 SUM */
	assert_int_equal(intervals, 9);
	assert_int_equal(lines, 9 + 4 + 2);
	assert_int_equal(sums, 3 + 2);
	/* one exact row: stream 3 of the second interval */
	assert_non_null(strstr(buf,
		"interval,1.000,2.000,3,1,2500000,20000000,1,20000,21000,500,-1,-1,0.000\n"));
	free(buf);
	free(iv);
}

static void results_dir_xdg_and_home(void **state)
{
	char tmp[] = "/tmp/llD2-res-XXXXXX", d[4096], r1[4096], r2[4096], want[4200];
	struct ll_err err = { 0 };
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	setenv("XDG_DATA_HOME", tmp, 1);
	assert_int_equal(csvout_results_dir(d, sizeof(d), false, &err), 0);
	snprintf(want, sizeof(want), "%s/linklab/results", tmp);
	assert_string_equal(d, want);
	assert_int_not_equal(stat(d, &st), 0);      /* not created */
	/* two runs in the same second get distinct directories */
	assert_int_equal(csvout_new_run_dir(r1, sizeof(r1), &err), 0);
	assert_int_equal(csvout_new_run_dir(r2, sizeof(r2), &err), 0);
	assert_string_not_equal(r1, r2);
	assert_int_equal(stat(r1, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(strncmp(r1, want, strlen(want)), 0);
	rmdir(r1);
	rmdir(r2);
	/* a relative XDG_DATA_HOME is ignored (XDG spec): HOME is used */
	setenv("XDG_DATA_HOME", "relative/dir", 1);
	setenv("HOME", tmp, 1);
	assert_int_equal(csvout_results_dir(d, sizeof(d), false, &err), 0);
	snprintf(want, sizeof(want), "%s/.local/share/linklab/results", tmp);
	assert_string_equal(d, want);
	unsetenv("XDG_DATA_HOME");
	unsetenv("HOME");
	assert_int_equal(csvout_results_dir(d, sizeof(d), false, &err), -ENOENT);
	snprintf(want, sizeof(want), "rm -rf %s", tmp);
	assert_int_equal(system(want), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(svg_sum_streams_rtt_lines),
		cmocka_unit_test(svg_time_axis_fits_run),
		cmocka_unit_test(svg_write_file_and_error),
		cmocka_unit_test(csv_rows_and_summary),
		cmocka_unit_test(results_dir_xdg_and_home),
	};

	return cmocka_run_group_tests_name("plot", tests, NULL, NULL);
}
