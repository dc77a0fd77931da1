// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Cost models: fitting and choosing (see costmodel.h). A fit minimises the relative error,
 * sum ((f(n_i) - t_i) / f(n_i))^2: rows weighted by 1/t_i at first, then by 1/f(n_i) of the
 * fit before (iteratively reweighted), so a 300 ns call and a 100 us one weigh alike and the
 * constant term is as well determined as the slope. Culling drops the points whose relative
 * residual passes NSIGMA robust sigmas (from the median absolute residual) and fits again,
 * until none does. The choice
 * is by k-fold held-out error, not R^2 (more terms always raise R^2): each fold is fitted (and
 * culled) without its points and scored on them, held-out points past NSIGMA of the training
 * RMS left out of the score as the fit left them out.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "costmodel.h"
#include "nnls.h"

#define MAX_PASSES 25 /* culling and reweighting passes */
#define MIN_PASSES 3  /* reweighting settles in a few */
#define SIMPLER	   1.02
/* Timing jitter this small is never an outlier: a very regular run (MAD 0.1 %) would otherwise
 * cull a third of its calls for being 0.4 % off. */
#define MIN_SIGMA 0.01

struct fitwork {
	const struct cm_point *p;
	size_t n;
	const struct cm_model *m;
	uint8_t *use; /* 1: in the fit, 0: culled, 2: not in this fit's set (held out) */
	double *w, *A, *b, *tmp;
	double floor;
	double sigma; /* the last pass's robust sigma of the relative residuals */
};

/* One weighted NNLS over the points in use. */
static int fit_once(struct fitwork *f, double *coef)
{
	size_t rows = 0, k = f->m->nterms;

	for (size_t i = 0; i < f->n; i++) {
		if (f->use[i] != 1)
			continue;
		for (size_t j = 0; j < k; j++)
			f->A[rows * k + j] = cm_basis(&f->m->terms[j], f->p[i].n) * f->w[i];
		f->b[rows++] = f->p[i].t * f->w[i];
	}
	if (rows < k)
		return -EDOM;
	return nnls_solve(f->A, rows, k, f->b, coef, NULL) == -ENOMEM ? -ENOMEM : 0;
}

static double rel_residual(const struct fitwork *f, const double *coef, size_t i, double *fit)
{
	double v = cm_eval(f->m, coef, f->p[i].n);

	*fit = v > f->floor ? v : f->floor;
	return (f->p[i].t - v) / *fit;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Reweight from the fit; cull past nsigma (if > 0) robust sigmas of the relative residuals
 * (1.4826 x their median absolute value, the standard deviation were they normal; at least
 * MIN_SIGMA): a plain
 * RMS is inflated by the very outliers it should find (a preempted call is 10x off), so on a
 * busy machine it would keep them. *sigma gets the robust sigma. The number culled. */
static size_t reweight_cull(struct fitwork *f, const double *coef, double nsigma, double *sigma)
{
	double fit;
	size_t used = 0, culled = 0;

	for (size_t i = 0; i < f->n; i++) {
		double r = rel_residual(f, coef, i, &fit);

		f->w[i] = 1 / fit;
		if (f->use[i] == 1)
			f->tmp[used++] = fabs(r);
	}
	if (used)
		qsort(f->tmp, used, sizeof(*f->tmp), cmp_double);
	*sigma = used ? fmax(1.4826 * f->tmp[used / 2], MIN_SIGMA) : 0;
	if (nsigma <= 0 || *sigma == 0)
		return 0;
	for (size_t i = 0; i < f->n; i++) {
		if (f->use[i] == 1 && fabs(rel_residual(f, coef, i, &fit)) > nsigma * *sigma) {
			f->use[i] = 0;
			culled++;
		}
	}
	return culled;
}

static void fit_stats(const struct fitwork *f, struct cm_fit *out)
{
	double mean = 0, ss_tot = 0, ss_res = 0, rel = 0, fit;

	out->used = out->culled = 0;
	for (size_t i = 0; i < f->n; i++) {
		out->used += f->use[i] == 1;
		out->culled += f->use[i] == 0;
		if (f->use[i] == 1)
			mean += f->p[i].t;
	}
	mean /= out->used ? (double)out->used : 1;
	for (size_t i = 0; i < f->n; i++) {
		double r;

		if (f->use[i] != 1)
			continue;
		r = rel_residual(f, out->coef, i, &fit);
		rel += r * r;
		ss_res += (f->p[i].t - cm_eval(f->m, out->coef, f->p[i].n)) *
			  (f->p[i].t - cm_eval(f->m, out->coef, f->p[i].n));
		ss_tot += (f->p[i].t - mean) * (f->p[i].t - mean);
	}
	out->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
	out->rel_rms = out->used ? sqrt(rel / (double)out->used) : 0;
}

/* Fit over the points f->use marks 1 (culling turns some to 0). */
static int fit_work(struct fitwork *f, double nsigma, struct cm_fit *out)
{
	double tmax = 0;
	int err = 0;

	for (size_t i = 0; i < f->n; i++) {
		tmax = fmax(tmax, f->p[i].t);
		f->w[i] = 0;
	}
	f->floor = fmax(tmax * 1e-9, 1e-6);
	for (size_t i = 0; i < f->n; i++)
		f->w[i] = 1 / fmax(f->p[i].t, f->floor);
	memset(out, 0, sizeof(*out));
	out->heldout = NAN;
	for (int pass = 0; !err && pass < MAX_PASSES; pass++) {
		err = fit_once(f, out->coef);
		if (!err && !reweight_cull(f, out->coef, nsigma, &f->sigma) &&
		    pass + 1 >= MIN_PASSES)
			break;
	}
	if (!err)
		fit_stats(f, out);
	out->err = err;
	return err;
}

static int work_new(struct fitwork *f, const struct cm_point *p, size_t n, const struct cm_model *m)
{
	*f = (struct fitwork){.p = p, .n = n, .m = m};
	f->use = calloc(n ? n : 1, 1);
	f->w = calloc(n ? n : 1, sizeof(*f->w));
	f->b = calloc(n ? n : 1, sizeof(*f->b));
	f->A = calloc((n ? n : 1) * CM_MAX_TERMS, sizeof(*f->A));
	f->tmp = calloc(n ? n : 1, sizeof(*f->tmp));
	return f->use && f->w && f->b && f->A && f->tmp ? 0 : -ENOMEM;
}

static void work_free(struct fitwork *f)
{
	free(f->use);
	free(f->w);
	free(f->b);
	free(f->A);
	free(f->tmp);
}

int cm_fit(const struct cm_point *p, size_t n, const struct cm_model *m, double nsigma,
	   struct cm_fit *out, uint8_t *culled)
{
	struct fitwork f;
	int err = work_new(&f, p, n, m);

	memset(out, 0, sizeof(*out));
	out->heldout = NAN;
	if (!err && (n < m->nterms || !m->nterms))
		err = -EDOM;
	if (!err) {
		memset(f.use, 1, n);
		err = fit_work(&f, nsigma, out);
	}
	for (size_t i = 0; !err && culled && i < n; i++)
		culled[i] = f.use[i] == 0;
	out->err = err;
	work_free(&f);
	return err;
}

static size_t fold_of(size_t i, size_t folds)
{
	return (size_t)(((uint64_t)i * 2654435761u) >> 7) % folds;
}

/* The held-out relative RMS error of m over folds; NAN when a fold cannot be fitted. */
static double heldout(struct fitwork *f, double nsigma, size_t folds)
{
	double ss = 0, fit;
	size_t cnt = 0;
	struct cm_fit tr;

	for (size_t k = 0; k < folds; k++) {
		for (size_t i = 0; i < f->n; i++)
			f->use[i] = fold_of(i, folds) == k ? 2 : 1;
		if (fit_work(f, nsigma, &tr))
			return NAN;
		for (size_t i = 0; i < f->n; i++) {
			double r;

			if (f->use[i] != 2)
				continue;
			r = rel_residual(f, tr.coef, i, &fit);
			if (nsigma > 0 && fabs(r) > nsigma * f->sigma)
				continue; /* an outlier to this fold's fit, as culling would judge it */
			ss += r * r;
			cnt++;
		}
	}
	return cnt ? sqrt(ss / (double)cnt) : NAN;
}

static void pick(const struct cm_model *models, size_t nm, const struct cm_fit *fits, size_t *best,
		 size_t *runner)
{
	size_t lo = SIZE_MAX;

	*best = *runner = SIZE_MAX;
	for (size_t i = 0; i < nm; i++) {
		if (!fits[i].err && !isnan(fits[i].heldout) &&
		    (lo == SIZE_MAX || fits[i].heldout < fits[lo].heldout))
			lo = i;
	}
	if (lo == SIZE_MAX)
		return;
	*best = lo;
	for (size_t i = 0; i < nm; i++) {
		if (fits[i].err || isnan(fits[i].heldout) ||
		    fits[i].heldout > fits[lo].heldout * SIMPLER)
			continue;
		if (models[i].nterms < models[*best].nterms)
			*best = i;
	}
	for (size_t i = 0; i < nm; i++) {
		if (i != *best && !fits[i].err && !isnan(fits[i].heldout) &&
		    (*runner == SIZE_MAX || fits[i].heldout < fits[*runner].heldout))
			*runner = i;
	}
}

int cm_choose(const struct cm_point *p, size_t n, const struct cm_model *models, size_t nm,
	      double nsigma, struct cm_fit *fits, size_t *best, size_t *runner)
{
	size_t folds = n < CM_FOLDS ? n : CM_FOLDS;
	struct fitwork f;

	for (size_t i = 0; i < nm; i++) {
		int err = cm_fit(p, n, &models[i], nsigma, &fits[i], NULL);

		if (err == -ENOMEM)
			return err;
		if (err || folds < 2)
			continue;
		if (!work_new(&f, p, n, &models[i]))
			fits[i].heldout = heldout(&f, nsigma, folds);
		work_free(&f);
	}
	pick(models, nm, fits, best, runner);
	return *best == SIZE_MAX ? -EDOM : 0;
}
