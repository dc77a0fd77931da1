// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch model`'s text and CSV outputs (see model.h): the fits of model/sizedata.c as people
 * read them (coefficients with their units, how well they fit, what came second, and per size
 * bucket how the calls depart from the chosen model) and as spreadsheets and gnuplot read them.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "perch_abi.h"
#include "common.h"
#include "lib/escape.h"
#include "model.h"

static void coefficients(const struct cm_model *m, const struct cm_fit *fit, FILE *out)
{
	for (uint32_t j = 0; j < m->nterms; j++) {
		char unit[80];

		cm_term_unit(&m->terms[j], unit, sizeof(unit));
		fprintf(out, "%s%c = %.4g %s", j ? ", " : "", 'a' + j, fit->coef[j], unit);
	}
}

/* The model as a formula of its terms: "t(n) = a + b*n". */
static void formula(const struct cm_model *m, FILE *out)
{
	fputs("t(n) = ", out);
	for (uint32_t j = 0; j < m->nterms; j++) {
		char name[64];

		cm_term_name(&m->terms[j], name, sizeof(name));
		if (!strcmp(name, "1"))
			fprintf(out, "%s%c", j ? " + " : "", 'a' + j);
		else
			fprintf(out, "%s%c*%s", j ? " + " : "", 'a' + j, name);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median relative residual of the sampled calls the fit kept in bucket b (n in [2^(b-1),
 * 2^b)); NAN when it has none. tmp: room for every point. */
static double bucket_residual(const struct size_fit *f, size_t b, double *tmp)
{
	const struct cm_model *m = &f->models[f->best];
	double lo = ldexp(1, (int)b - 1), hi = ldexp(1, (int)b);
	size_t k = 0;

	for (size_t i = 0; i < f->g->npoints; i++) {
		const struct cm_point *p = &f->g->points[i];
		double v;

		if (f->culled[i] || p->n < lo || p->n >= hi)
			continue;
		v = cm_eval(m, f->fits[f->best].coef, p->n);
		if (v > 0)
			tmp[k++] = p->t / v - 1;
	}
	if (!k)
		return NAN;
	qsort(tmp, k, sizeof(*tmp), cmp_double);
	return k % 2 ? tmp[k / 2] : (tmp[k / 2 - 1] + tmp[k / 2]) / 2;
}

static void bucket_row(const struct size_fit *f, size_t b, double *tmp, FILE *out)
{
	const struct rec_size_bucket *k = &f->g->buckets[b];
	const struct cm_model *m = &f->models[f->best];
	double mean = k->sum_t / (double)k->count, res = bucket_residual(f, b, tmp);
	double model = cm_eval(m, f->fits[f->best].coef, k->sum_n / (double)k->count);
	char b1[24], b2[24], b3[24], b4[24], range[48], fit[16] = "-";

	snprintf(range, sizeof(range), "%llu-%llu", 1ull << (b - 1),
		 b == 64 ? UINT64_MAX : (1ull << b) - 1);
	if (!isnan(res))
		snprintf(fit, sizeof(fit), "%+.1f%%", 100 * res);
	fprintf(out, "  %-17s %10llu %s %s %s %s %+9.1f%% %9s\n", range,
		(unsigned long long)k->count, report_fmt_time(b1, (uint64_t)llround(mean)),
		report_fmt_time(b2, k->min_ns), report_fmt_time(b3, k->max_ns),
		report_fmt_time(b4, (uint64_t)llround(model > 0 ? model : 0)),
		model > 0 ? 100 * (mean / model - 1) : 0.0, fit);
}

/* Per log2(n) bucket: every call's mean, min and max against the model at the bucket's mean n
 * (outliers included), and the median residual of the sampled calls the fit kept (where a size
 * regime departs from the model, outliers aside). */
static void buckets(const struct size_fit *f, FILE *out)
{
	double *tmp = malloc((f->g->npoints ? f->g->npoints : 1) * sizeof(*tmp));

	if (!tmp)
		return;
	fprintf(out, "  %-17s %10s %11s %11s %11s %11s %10s %9s\n", "n (all calls)", "calls",
		"mean", "min", "max", "model", "departure", "kept");
	for (size_t b = 1; b < SIZE_BUCKETS; b++) {
		if (f->g->buckets[b].count)
			bucket_row(f, b, tmp, out);
	}
	free(tmp);
}

static void candidates(const struct size_fit *f, FILE *out)
{
	fputs("  held-out error of each candidate:", out);
	for (size_t i = 0; i < f->nmodels; i++) {
		if (f->fits[i].err || isnan(f->fits[i].heldout))
			fprintf(out, "%s %s (not fitted)", i ? "," : "", f->models[i].name);
		else
			fprintf(out, "%s %s %.2f%%", i ? "," : "", f->models[i].name,
				100 * f->fits[i].heldout);
	}
	fputc('\n', out);
}

static void region_text(const struct size_fit *f, FILE *out)
{
	const struct cm_fit *b = &f->fits[f->best];

	fputs("\nregion ", out);
	esc_term(out, f->g->name);
	fprintf(out,
		": %llu sized calls in %zu thread%s of %zu recording%s, %zu in the "
		"sample; %zu used, %zu culled\n",
		(unsigned long long)f->g->seen, f->g->nthreads, f->g->nthreads == 1 ? "" : "s",
		f->g->nfiles, f->g->nfiles == 1 ? "" : "s", f->g->npoints, b->used, b->culled);
	fprintf(out, "  chosen     %-20s ", f->models[f->best].name);
	coefficients(&f->models[f->best], b, out);
	fputs("\n             ", out);
	formula(&f->models[f->best], out);
	fprintf(out, ", R^2 %.5f, relative RMS error %.2f%%, held-out %.2f%%\n", b->r2,
		100 * b->rel_rms, 100 * b->heldout);
	if (f->runner != SIZE_MAX) {
		fprintf(out, "  runner-up  %-20s ", f->models[f->runner].name);
		coefficients(&f->models[f->runner], &f->fits[f->runner], out);
		fprintf(out, "; held-out %.2f%%\n", 100 * f->fits[f->runner].heldout);
	}
	candidates(f, out);
	buckets(f, out);
}

void model_report_text(const struct size_set *s, const struct size_fit *f, size_t n, FILE *out)
{
	double nsigma = n ? f[0].nsigma : 0;

	fprintf(out, "Cost models (time per call against perch_region_begin_n's n; non-negative "
		     "least squares on relative error; ");
	if (nsigma > 0)
		fprintf(out, "outliers culled at %g sigma; ", nsigma);
	else
		fputs("no culling; ", out);
	fprintf(out, "chosen by %d-fold held-out error)\n", CM_FOLDS);
	if (s->over)
		fprintf(out,
			"note: %llu sized calls found no model slot in their thread (%d nodes "
			"per thread keep one): not in the fits\n",
			(unsigned long long)s->over, PERCH_MODEL_SLOTS);
	for (size_t i = 0; i < n; i++) {
		if (!f[i].err)
			region_text(&f[i], out);
	}
}

void model_report_csv(const struct size_fit *f, size_t n, FILE *out)
{
	fputs("region,n,t_ns,fit_ns,residual_ns,culled\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct cm_model *m = &f[i].models[f[i].best];

		for (size_t k = 0; !f[i].err && k < f[i].g->npoints; k++) {
			const struct cm_point *p = &f[i].g->points[k];
			double v = cm_eval(m, f[i].fits[f[i].best].coef, p->n);

			report_csv_field(f[i].g->name, out);
			fprintf(out, ",%.0f,%.0f,%.3f,%.3f,%d\n", p->n, p->t, v, p->t - v,
				f[i].culled[k]);
		}
	}
}

static void fit_row(const struct size_fit *f, size_t i, FILE *out)
{
	const struct cm_model *m = &f->models[i];
	const struct cm_fit *fit = &f->fits[i];
	char buf[80];

	report_csv_field(f->g->name, out);
	fputc(',', out);
	report_csv_field(m->name, out);
	fprintf(out, ",%d,", i == f->best ? 1 : i == f->runner ? 2 : 0);
	for (uint32_t j = 0; j < m->nterms; j++) {
		cm_term_name(&m->terms[j], buf, sizeof(buf));
		fprintf(out, "%s%s", j ? ";" : "", buf);
	}
	fputc(',', out);
	for (uint32_t j = 0; j < m->nterms; j++)
		fprintf(out, "%s%.6g", j ? ";" : "", fit->coef[j]);
	fputc(',', out);
	for (uint32_t j = 0; j < m->nterms; j++) {
		cm_term_unit(&m->terms[j], buf, sizeof(buf));
		fprintf(out, "%s%s", j ? ";" : "", buf);
	}
	fprintf(out, ",%.6f,%.6f,%.6f,%zu,%zu,%llu,%zu\n", fit->r2, fit->rel_rms, fit->heldout,
		fit->used, fit->culled, (unsigned long long)f->g->seen, f->g->nfiles);
}

void model_report_fits(const struct size_fit *f, size_t n, FILE *out)
{
	fputs("region,model,chosen,terms,coefficients,units,r2,rel_rms,heldout,used,culled,calls,"
	      "recordings\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; !f[i].err && k < f[i].nmodels; k++) {
			if (!f[i].fits[k].err)
				fit_row(&f[i], k, out);
		}
	}
}
