// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch model --format=svg` and the HTML report's cost-model section (see model.h): a panel
 * per region with the sampled calls (culled ones as red crosses), the chosen model's curve, and
 * below it the relative residuals, so a size regime where the model departs shows as a bend.
 * Axes are labelled with units; an axis whose values span more than a decade is logarithmic.
 * Names go through lib/escape.h's XML rule.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "common.h"
#include "lib/escape.h"
#include "model.h"

#define W	    820.0
#define PLOT_H	    320.0
#define RES_H	    130.0
#define ML	    78.0 /* margins of the plot area */
#define MR	    44.0
#define MT	    74.0
#define GAP	    52.0
#define MB	    52.0
#define PANEL_H	    (MT + PLOT_H + GAP + RES_H + MB)
#define CURVE_STEPS 240

struct axis {
	double lo, hi; /* data values */
	bool log;
	double px0, px1; /* pixels of lo and hi */
};

static double ax_px(const struct axis *a, double v)
{
	double f = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
			  : (v - a->lo) / (a->hi - a->lo);

	return a->px0 + f * (a->px1 - a->px0);
}

static void ax_range(struct axis *a, double lo, double hi, bool allow_log)
{
	a->log = allow_log && lo > 0 && hi / lo > 10;
	if (a->log) {
		a->lo = pow(10, floor(log10(lo)));
		a->hi = pow(10, ceil(log10(hi)));
	} else {
		a->lo = lo > 0 && allow_log ? 0 : lo;
		a->hi = hi > a->lo ? hi : a->lo + 1;
	}
}

/* A time with the unit that suits the axis's top value (on a log axis, the value's own). */
static void time_label(double ns, double top, char *buf, size_t len)
{
	if (top < 1e3)
		snprintf(buf, len, "%g ns", ns);
	else if (top < 1e6)
		snprintf(buf, len, "%g µs", ns / 1e3);
	else if (top < 1e9)
		snprintf(buf, len, "%g ms", ns / 1e6);
	else
		snprintf(buf, len, "%g s", ns / 1e9);
}

static double nice_step(double span, int ticks)
{
	double raw = span / ticks, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* Grid lines and labels of a vertical (y) axis; is_time: values are ns. */
static void y_ticks(const struct axis *a, bool is_time, FILE *out)
{
	double step = a->log ? 10 : nice_step(a->hi - a->lo, 5);

	for (double v = a->log ? a->lo : ceil(a->lo / step) * step; v <= a->hi * 1.0001;
	     v = a->log ? v * step : v + step) {
		double y = ax_px(a, v);
		char lab[32];

		if (is_time)
			time_label(v, a->log ? v * 1.001 : a->hi, lab, sizeof(lab));
		else
			snprintf(lab, sizeof(lab), "%+g%%", fabs(v) < 1e-12 ? 0 : v);
		fprintf(out,
			"<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' class='grid'/>"
			"<text x='%.1f' y='%.1f' class='yl'>%s</text>\n",
			ML, W - MR, y, y, ML - 6, y + 4, lab);
	}
}

static void x_ticks(const struct axis *a, double y0, double y1, FILE *out)
{
	double step = a->log ? 10 : nice_step(a->hi - a->lo, 8);

	for (double v = a->log ? a->lo : ceil(a->lo / step) * step; v <= a->hi * 1.0001;
	     v = a->log ? v * step : v + step) {
		double x = ax_px(a, v);

		fprintf(out,
			"<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' class='grid'/>"
			"<text x='%.1f' y='%.1f' class='xl'>%g</text>\n",
			x, x, y0, y1, x, y1 + 16, v);
	}
}

static void title(const struct size_fit *f, double y, FILE *out)
{
	const struct cm_model *m = &f->models[f->best];
	const struct cm_fit *b = &f->fits[f->best];

	fputs("<text x='12' y='", out);
	fprintf(out, "%.1f' class='title'>region ", y);
	esc_xml(out, f->g->name);
	fputs(": ", out);
	for (uint32_t j = 0; j < m->nterms; j++) {
		char name[64];

		cm_term_name(&m->terms[j], name, sizeof(name));
		fprintf(out, "%s%.4g %s", j ? " + " : "t(n) = ", b->coef[j],
			strcmp(name, "1") ? "ns·" : "ns");
		esc_xml(out, strcmp(name, "1") ? name : "");
	}
	fprintf(out, "</text>\n<text x='12' y='%.1f' class='sub'>model ", y + 18);
	esc_xml(out, m->name);
	fprintf(out,
		" · R² %.4f · "
		"relative RMS %.2f%% · held-out %.2f%% · %zu points, %zu culled",
		b->r2, 100 * b->rel_rms, 100 * b->heldout, b->used, b->culled);
	fputs("</text>\n", out);
	if (f->runner == SIZE_MAX)
		return;
	fprintf(out, "<text x='12' y='%.1f' class='sub'>runner-up ", y + 34);
	esc_xml(out, f->models[f->runner].name);
	fprintf(out, " (held-out %.2f%%); %llu calls in all, %zu sampled</text>\n",
		100 * f->fits[f->runner].heldout, (unsigned long long)f->g->seen, f->g->npoints);
}

/* The data's ranges: n over every point, t over the used points and the curve. */
static void ranges(const struct size_fit *f, struct axis *x, struct axis *y)
{
	double nlo = INFINITY, nhi = 0, tlo = INFINITY, thi = 0;
	const struct cm_model *m = &f->models[f->best];

	for (size_t k = 0; k < f->g->npoints; k++) {
		const struct cm_point *p = &f->g->points[k];

		nlo = fmin(nlo, p->n);
		nhi = fmax(nhi, p->n);
		if (f->culled[k] || p->t <= 0)
			continue;
		tlo = fmin(tlo, p->t);
		thi = fmax(thi, p->t);
	}
	if (nhi <= 0)
		nlo = 1, nhi = 2;
	ax_range(x, nlo, nhi, true);
	thi = fmax(thi, cm_eval(m, f->fits[f->best].coef, nhi));
	ax_range(y, isfinite(tlo) ? tlo : 1, thi > 0 ? thi * 1.05 : 1, true);
}

static void curve(const struct size_fit *f, const struct axis *x, const struct axis *y, FILE *out)
{
	const struct cm_model *m = &f->models[f->best];

	fputs("<polyline class='fit' points='", out);
	for (int s = 0; s <= CURVE_STEPS; s++) {
		double fr = (double)s / CURVE_STEPS;
		double n = x->log ? x->lo * pow(x->hi / x->lo, fr) : x->lo + fr * (x->hi - x->lo);
		double t = cm_eval(m, f->fits[f->best].coef, n);

		if (t < y->lo || t > y->hi || (x->log && n <= 0))
			continue;
		fprintf(out, "%.1f,%.1f ", ax_px(x, n), ax_px(y, t));
	}
	fputs("'/>\n", out);
}

static void point(double px, double py, bool culled, FILE *out)
{
	if (culled)
		fprintf(out, "<path class='cull' d='M%.1f %.1fl6 6m0 -6l-6 6'/>", px - 3, py - 3);
	else
		fprintf(out, "<circle class='pt' cx='%.1f' cy='%.1f' r='2.6'/>", px, py);
}

static void points(const struct size_fit *f, const struct axis *x, const struct axis *y,
		   const struct axis *r, FILE *out)
{
	const struct cm_model *m = &f->models[f->best];

	for (size_t k = 0; k < f->g->npoints; k++) {
		const struct cm_point *p = &f->g->points[k];
		double v = cm_eval(m, f->fits[f->best].coef, p->n), rel;

		if (p->n <= 0 && x->log)
			continue;
		/* off the plot (culled outliers above it): on its edge */
		point(ax_px(x, p->n), ax_px(y, fmin(fmax(p->t, y->lo), y->hi)), f->culled[k], out);
		rel = v > 0 ? 100 * (p->t - v) / v : 0;
		point(ax_px(x, p->n), ax_px(r, fmin(fmax(rel, r->lo), r->hi)), f->culled[k], out);
		fputc('\n', out);
	}
}

static void panel(const struct size_fit *f, double top, FILE *out)
{
	struct axis x = {.px0 = ML, .px1 = W - MR}, y = {.px0 = top + MT + PLOT_H, .px1 = top + MT};
	double r_top = top + MT + PLOT_H + GAP, lim = 3 * 100 * f->fits[f->best].rel_rms;
	struct axis r = {.px0 = r_top + RES_H, .px1 = r_top};

	ranges(f, &x, &y);
	lim = fmax(nice_step(fmax(lim, 1), 2) * 2, 1);
	r.lo = -lim;
	r.hi = lim;
	title(f, top + 24, out);
	y_ticks(&y, true, out);
	y_ticks(&r, false, out);
	x_ticks(&x, top + MT, top + MT + PLOT_H, out);
	x_ticks(&x, r_top, r_top + RES_H, out);
	fprintf(out,
		"<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' class='frame'/>"
		"<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' class='frame'/>\n",
		ML, top + MT, W - ML - MR, PLOT_H, ML, r_top, W - ML - MR, RES_H);
	fprintf(out, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' class='zero'/>\n", ML, W - MR,
		ax_px(&r, 0), ax_px(&r, 0));
	points(f, &x, &y, &r, out);
	curve(f, &x, &y, out);
	fprintf(out,
		"<text x='16' y='%.1f' class='axis' transform='rotate(-90 16 %.1f)'>time per "
		"call%s</text>\n<text x='16' y='%.1f' class='axis' transform='rotate(-90 16 "
		"%.1f)'>residual (of model)</text>\n<text x='%.1f' y='%.1f' class='axis'>n "
		"(perch_region_begin_n size%s)</text>\n",
		top + MT + PLOT_H / 2, top + MT + PLOT_H / 2, y.log ? ", log scale" : "",
		r_top + RES_H / 2, r_top + RES_H / 2, (ML + W - MR) / 2, r_top + RES_H + 38,
		x.log ? ", log scale" : "");
	fprintf(out,
		"<g class='legend'><rect x='%.1f' y='%.1f' width='270' height='22'/><circle class='pt' cx='%.1f' cy='%.1f' r='3'/><text x='%.1f' "
		"y='%.1f'>call (sampled)</text><path class='cull' d='M%.1f %.1fl6 6m0 -6l-6 6'/>"
		"<text x='%.1f' y='%.1f'>culled</text><line class='fit' x1='%.1f' x2='%.1f' "
		"y1='%.1f' y2='%.1f'/><text x='%.1f' y='%.1f'>model</text></g>\n",
		ML + 6, top + MT + 3, ML + 14, top + MT + 14, ML + 22, top + MT + 18, ML + 125,
		top + MT + 11, ML + 140, top + MT + 18, ML + 200, ML + 222, top + MT + 14,
		top + MT + 14, ML + 228, top + MT + 18);
}

static size_t fitted(const struct size_fit *f, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += !f[i].err;
	return k;
}

void model_report_svg_inline(const struct size_fit *f, size_t n, FILE *out)
{
	double top = 0;

	fprintf(out,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' viewBox='0 0 "
		"%.0f %.0f' font-family='sans-serif' font-size='12'>\n<style>"
		".title{font-size:15px;font-weight:bold}.sub{fill:#444}.grid{stroke:#e4e4e4}"
		".frame{fill:none;stroke:#888}.zero{stroke:#555;stroke-dasharray:4 3}"
		".yl{text-anchor:end;fill:#333}.xl{text-anchor:middle;fill:#333}"
		".axis{text-anchor:middle;fill:#222;font-size:13px}"
		".pt{fill:#1f77b4;fill-opacity:.55}.cull{stroke:#d62728;stroke-width:1.6;fill:none}"
		".fit{fill:none;stroke:#ff7f0e;stroke-width:2.5}.legend text{fill:#222}.legend rect{fill:white;fill-opacity:.85;stroke:#ccc}</style>\n"
		"<rect width='100%%' height='100%%' fill='white'/>\n",
		W, PANEL_H * (double)fitted(f, n), W, PANEL_H * (double)fitted(f, n));
	for (size_t i = 0; i < n; i++) {
		if (f[i].err)
			continue;
		panel(&f[i], top, out);
		top += PANEL_H;
	}
	fputs("</svg>\n", out);
}

void model_report_svg(const struct size_fit *f, size_t n, FILE *out)
{
	fputs("<?xml version='1.0' encoding='UTF-8'?>\n", out);
	model_report_svg_inline(f, n, out);
}
