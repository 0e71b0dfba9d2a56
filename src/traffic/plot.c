/* SPDX-License-Identifier: MIT */
/* plot.c - a self-contained SVG chart of a test run (see plot.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linklab/traffic/plot.h"
#include "linklab/base/units.h"

#define PLOT_ML 84      /* left margin: rate labels */
#define PLOT_MR 70      /* right margin: RTT labels */
#define PLOT_MT 56      /* title and legend */
#define PLOT_MB 44      /* time axis */
#define PLOT_LINE 17    /* caption line height */

static const char *const plot_palette[] = {
	"#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2",
	"#17becf", "#bcbd22", "#7f7f7f", "#aec7e8", "#98df8a",
};

char *plot_xml_escape(const char *s, char *buf, size_t len)
{
	size_t o = 0;
	const char *rep;
	char one[2] = { 0, 0 };

	if (!len)
		return buf;
	for (; s && *s; s++) {
		switch (*s) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&apos;"; break;
		default:
			one[0] = (unsigned char)*s < 0x20 ? ' ' : *s;
			rep = one;
			break;
		}
		if (o + strlen(rep) + 1 > len)
			break;
		memcpy(buf + o, rep, strlen(rep));
		o += strlen(rep);
	}
	buf[o] = '\0';
	return buf;
}

/* A "nice" axis maximum and step (1, 2, 5 x 10^k) for about 5 ticks. */
static void plot_nice(double max, double *top, double *step)
{
	double raw, mag, f;

	if (!(max > 0))
		max = 1;
	raw = max / 5.0;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	*step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
	*top = ceil(max / *step - 1e-9) * *step;
	if (*top < max)
		*top += *step;
}

/* Mean sender RTT of an interval in ms, 0 if unknown. */
static double plot_rtt_ms(const struct client_interval *iv)
{
	double s = 0;
	int k, n = 0;

	for (k = 0; k < iv->nstreams && k < CLIENT_MAX_STREAMS; k++)
		if (iv->s[k].rtt_us > 0) {
			s += (double)iv->s[k].rtt_us;
			n++;
		}
	if (!n && iv->sum.rtt_us > 0)
		return (double)iv->sum.rtt_us / 1000.0;
	return n ? s / n / 1000.0 : 0;
}

static double plot_mid(const struct client_stream_sample *s)
{
	return (s->start + s->end) / 2.0;
}

struct plot_geo {
	double x0, y0, w, h;     /* plot area, y0 = top */
	double tmax, ymax, rmax; /* axis tops: s, bit/s, ms */
};

static double gx(const struct plot_geo *g, double t)
{
	return g->x0 + (g->tmax > 0 ? t / g->tmax : 0) * g->w;
}

static double gy(const struct plot_geo *g, double bps)
{
	double f = g->ymax > 0 ? bps / g->ymax : 0;

	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	return g->y0 + g->h - f * g->h;
}

static double gr(const struct plot_geo *g, double ms)
{
	double f = g->rmax > 0 ? ms / g->rmax : 0;

	if (f > 1)
		f = 1;
	return g->y0 + g->h - f * g->h;
}

/* One polyline through stream k's (k < 0: SUM) midpoints. */
static void plot_series(FILE *f, const struct plot_geo *g,
			const struct client_interval *iv, int n, int k,
			const char *color, double width, const char *extra)
{
	int i, pts = 0;

	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s points=\"",
		color, width, extra);
	for (i = 0; i < n; i++) {
		const struct client_stream_sample *s;

		if (k >= 0) {
			if (k >= iv[i].nstreams)
				continue;
			s = &iv[i].s[k];
		} else {
			s = &iv[i].sum;
		}
		fprintf(f, "%s%.1f,%.1f", pts++ ? " " : "", gx(g, plot_mid(s)),
			gy(g, s->bps));
	}
	fprintf(f, "\"/>\n");
}

static void plot_hline(FILE *f, const struct plot_geo *g, double bps,
		       const char *color, const char *dash, const char *label,
		       bool below)
{
	char esc[256];
	double y = gy(g, bps);

	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"%s\"/>\n",
		g->x0, y, g->x0 + g->w, y, color, dash);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" text-anchor=\"end\">%s</text>\n",
		g->x0 + g->w - 4, below ? y + 14 : y - 4, color,
		plot_xml_escape(label, esc, sizeof(esc)));
}

/* Scan the intervals for the highest rate of SUM or any stream (bit/s),
 * the highest RTT (ms), the most streams and whether any RTT was seen. */
static void plot_scan(const struct client_interval *iv, int n, double *ymax,
		      double *rmax, int *nstreams, bool *have_rtt)
{
	double v;
	int i, k;

	for (i = 0; i < n; i++) {
		if (iv[i].sum.bps > *ymax)
			*ymax = iv[i].sum.bps;
		if (iv[i].nstreams > *nstreams)
			*nstreams = iv[i].nstreams;
		for (k = 0; k < iv[i].nstreams && k < CLIENT_MAX_STREAMS; k++)
			if (iv[i].s[k].bps > *ymax)
				*ymax = iv[i].s[k].bps;
		v = plot_rtt_ms(&iv[i]);
		if (v > 0) {
			*have_rtt = true;
			if (v > *rmax)
				*rmax = v;
		}
	}
}

/* Write the grid and axes: rate ticks every step (bit/s), time ticks every
 * tstep (s), the frame, and the RTT ticks every rstep (ms) when drawn. */
static void plot_axes(FILE *f, const struct plot_geo *g, double step,
		      double tstep, double rstep, bool have_rtt)
{
	char a[32];
	double v;

	for (v = 0; v <= g->ymax + step / 2; v += step) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n",
			g->x0, gy(g, v), g->x0 + g->w, gy(g, v));
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			g->x0 - 6, gy(g, v) + 4, units_human_rate(v, a, sizeof(a)));
	}
	for (v = 0; v <= g->tmax * 1.001 + 1e-9; v += tstep) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>\n",
			gx(g, v), g->y0, gx(g, v), g->y0 + g->h);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
			gx(g, v), g->y0 + g->h + 16, v);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (s)</text>\n",
		g->x0 + g->w / 2, g->y0 + g->h + 34);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"none\" stroke=\"#444444\"/>\n", g->x0, g->y0, g->w, g->h);
	if (have_rtt)
		for (v = 0; v <= g->rmax + rstep / 2; v += rstep)
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#d62728\">%g ms</text>\n",
				g->x0 + g->w + 6, gr(g, v) + 4, v);
}

/* Write the dashed RTT line over the intervals that carry an RTT. */
static void plot_rtt_line(FILE *f, const struct plot_geo *g,
			  const struct client_interval *iv, int n)
{
	int i, pts = 0;
	double v;

	fprintf(f, "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" "
		"stroke-dasharray=\"2,3\" class=\"rtt\" points=\"");
	for (i = 0; i < n; i++) {
		v = plot_rtt_ms(&iv[i]);
		if (v > 0)
			fprintf(f, "%s%.1f,%.1f", pts++ ? " " : "",
				gx(g, plot_mid(&iv[i].sum)), gr(g, v));
	}
	fprintf(f, "\"/>\n");
}

/* Write the dialled rate and the ceiling as labelled horizontal lines. */
static void plot_marks(FILE *f, const struct plot_geo *g,
		       const struct plot_opts *o)
{
	char a[32], b[32], label[160];

	if (o->dial_bps > 0) {
		snprintf(label, sizeof(label), "dialled %s",
			 units_human_rate(o->dial_bps, a, sizeof(a)));
		plot_hline(f, g, o->dial_bps, "#ff7f0e", "8,4", label, false);
	}
	if (o->ceiling_bps > 0) {
		snprintf(label, sizeof(label), "%s %s",
			 o->ceiling_label ? o->ceiling_label : "theory",
			 units_human_rate(o->ceiling_bps, b, sizeof(b)));
		plot_hline(f, g, o->ceiling_bps, "#8c564b", "3,3", label,
			   o->dial_bps > o->ceiling_bps);
	}
}

/* Write the legend: SUM, the streams (maxs of them drawn) and the RTT. */
static void plot_legend(FILE *f, int nstreams, int maxs, bool have_rtt)
{
	fprintf(f, "<g font-size=\"11\">"
		"<line x1=\"%d\" y1=\"38\" x2=\"%d\" y2=\"38\" stroke=\"#000000\" stroke-width=\"2.5\"/>"
		"<text x=\"%d\" y=\"42\">SUM</text>", PLOT_ML, PLOT_ML + 20, PLOT_ML + 24);
	if (nstreams > 1)
		fprintf(f, "<line x1=\"%d\" y1=\"38\" x2=\"%d\" y2=\"38\" stroke=\"%s\"/>"
			"<text x=\"%d\" y=\"42\">%d streams%s</text>", PLOT_ML + 70,
			PLOT_ML + 90, plot_palette[0], PLOT_ML + 94, nstreams,
			nstreams > maxs ? " (first drawn)" : "");
	if (have_rtt)
		fprintf(f, "<line x1=\"%d\" y1=\"38\" x2=\"%d\" y2=\"38\" stroke=\"#d62728\" "
			"stroke-dasharray=\"2,3\"/><text x=\"%d\" y=\"42\">RTT (right axis)</text>",
			PLOT_ML + 230, PLOT_ML + 250, PLOT_ML + 254);
	fprintf(f, "</g>\n");
}

/* Write the caption lines under the plot, then the summary line if any. */
static void plot_caption(FILE *f, const struct plot_geo *g,
			 const struct plot_opts *o, const struct client_summary *sum)
{
	int y = (int)(g->y0 + g->h) + PLOT_MB + 4;
	const char *p = o->caption;
	char line[512], esc[1024], a[32], b[32];

	while (p && *p) {
		size_t l = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)l, p);
		fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", PLOT_ML, y,
			plot_xml_escape(line, esc, sizeof(esc)));
		y += PLOT_LINE;
		p += l;
		if (*p == '\n')
			p++;
	}
	if (sum) {
		snprintf(line, sizeof(line), "%d stream%s, %.1f s: sender %s, receiver %s",
			 sum->nstreams, sum->nstreams == 1 ? "" : "s", sum->duration,
			 units_human_rate(sum->sum_sent.bps, a, sizeof(a)),
			 units_human_rate(sum->sum_received.bps, b, sizeof(b)));
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n",
			PLOT_ML, y, plot_xml_escape(line, esc, sizeof(esc)));
	}
}

int plot_svg(char **out, const struct client_interval *iv, int n,
	     const struct client_summary *sum, const struct plot_opts *o,
	     struct ll_err *err)
{
	struct plot_opts def = { 0 };
	struct plot_geo g;
	char *buf = NULL, esc[1024];
	size_t blen = 0;
	FILE *f;
	double ymax = 0, rmax = 0, step, rstep, tstep, v, top;
	int k, ncap = 0, W, H, maxs, nstreams = 0;
	bool have_rtt = false;
	const char *c;

	*out = NULL;
	if (n < 0 || (n > 0 && !iv))
		return ll_err_set(err, -EINVAL, "plot: bad interval array (n = %d)", n);
	if (!o)
		o = &def;
	maxs = o->max_streams > 0 ? o->max_streams : 32;
	plot_scan(iv, n, &ymax, &rmax, &nstreams, &have_rtt);
	if (o->dial_bps > ymax)
		ymax = o->dial_bps;
	if (o->ceiling_bps > ymax)
		ymax = o->ceiling_bps;
	plot_nice(ymax * 1.05, &top, &step);
	g.ymax = top;
	/* the time axis ends with the run (a 10.0003 s run is not drawn to
	 * 15 s): only the tick step is a nice number */
	g.tmax = n > 0 ? iv[n - 1].sum.end : 0;
	if (!(g.tmax > 0))
		g.tmax = 1;
	plot_nice(g.tmax * 0.999, &v, &tstep);
	plot_nice(rmax * 1.05, &g.rmax, &rstep);
	g.w = o->width > 0 ? o->width : 900;
	g.h = o->height > 0 ? o->height : 420;
	g.x0 = PLOT_ML;
	g.y0 = PLOT_MT;
	for (c = o->caption; c && *c; c++)
		if (*c == '\n')
			ncap++;
	if (o->caption && *o->caption)
		ncap++;
	if (sum)
		ncap++;
	W = (int)g.w + PLOT_ML + PLOT_MR;
	H = (int)g.h + PLOT_MT + PLOT_MB + ncap * PLOT_LINE + 10;

	f = open_memstream(&buf, &blen);
	if (!f)
		return ll_err_set(err, -ENOMEM, "plot: out of memory");
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H, W, H);
	fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"15\" font-weight=\"bold\">%s</text>\n",
		PLOT_ML, plot_xml_escape(o->title ? o->title : "linklab test",
					 esc, sizeof(esc)));
	plot_axes(f, &g, step, tstep, rstep, have_rtt);
	/* per-stream lines, then SUM on top */
	if (nstreams > 1)
		for (k = 0; k < nstreams && k < maxs; k++)
			plot_series(f, &g, iv, n, k,
				    plot_palette[k % (int)(sizeof(plot_palette) /
							  sizeof(plot_palette[0]))],
				    1.0, " stroke-opacity=\"0.8\" class=\"stream\"");
	if (n > 0)
		plot_series(f, &g, iv, n, -1, "#000000", 2.5, " class=\"sum\"");
	if (have_rtt)
		plot_rtt_line(f, &g, iv, n);
	plot_marks(f, &g, o);
	plot_legend(f, nstreams, maxs, have_rtt);
	plot_caption(f, &g, o, sum);
	fprintf(f, "</svg>\n");
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return ll_err_set(err, -ENOMEM, "plot: out of memory");
	}
	*out = buf;
	return 0;
}

int plot_svg_write_opts(const char *path, const struct client_interval *iv,
			int n, const struct client_summary *sum,
			const struct plot_opts *o, struct ll_err *err)
{
	char *svg;
	FILE *f;
	int rc;

	rc = plot_svg(&svg, iv, n, sum, o, err);
	if (rc < 0)
		return rc;
	f = fopen(path, "w");
	if (!f) {
		rc = -errno;
		free(svg);
		return ll_err_set(err, rc, "cannot write %s: %s", path,
				  strerror(-rc));
	}
	fputs(svg, f);
	free(svg);
	if (fclose(f) != 0) {
		rc = -errno;
		return ll_err_set(err, rc ? rc : -EIO, "cannot write %s: %s",
				  path, rc ? strerror(-rc) : "I/O error");
	}
	return 0;
}

int plot_svg_write(const char *path, const struct client_interval *iv, int n,
		   const struct client_summary *sum, const char *caption,
		   struct ll_err *err)
{
	struct plot_opts o = { .caption = caption };

	return plot_svg_write_opts(path, iv, n, sum, &o, err);
}
