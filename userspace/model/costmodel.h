/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Cost models of sized regions (perch model): time(n) = sum of coefficient x basis term, each
 * term n^p * log2(n)^q, fitted with non-negative least squares (nnls.h) on relative error (a
 * call of 300 ns and one of 100 us count alike), outliers culled iteratively on the relative
 * residuals at NSIGMA, and the model chosen among candidates by k-fold held-out error.
 */
#ifndef PERCH_MODEL_COSTMODEL_H
#define PERCH_MODEL_COSTMODEL_H

#include <stddef.h>
#include <stdint.h>

#define CM_MAX_TERMS 8
#define CM_FOLDS     5

struct cm_term {
	double p; /* power of n */
	int q;	  /* power of log2(n) */
};

struct cm_model {
	char name[96]; /* "a + b*n", or the user's expression */
	uint32_t nterms;
	struct cm_term terms[CM_MAX_TERMS];
	int user; /* from --model */
};

struct cm_point {
	double n, t; /* size; time in ns */
};

struct cm_fit {
	int err;		     /* 0, or -EDOM: fewer points than coefficients */
	double coef[CM_MAX_TERMS];   /* ns per unit of each term */
	double r2, rel_rms, heldout; /* heldout: k-fold relative RMS error (NAN: not computed) */
	size_t used, culled;
};

/* The built-in candidates (constant, a + b*n, a + b*n*log2(n), a + b*n^2, a + b*log2(n)). */
size_t cm_builtin(struct cm_model *out, size_t cap);
/* A list of terms: "1,n,n*log2(n)"; factors 1, n, log2(n), sqrt(n), n^K or n**K (K a number),
 * log2(n)^K (K an integer), joined by '*'. 0, or -EINVAL with *bad the offset it stopped at. */
int cm_parse(const char *expr, struct cm_model *m, size_t *bad);
double cm_basis(const struct cm_term *t, double n);
double cm_eval(const struct cm_model *m, const double *coef, double n);
/* The term as written ("n*log2(n)") and the unit of its coefficient ("ns/(n*log2(n))"). */
void cm_term_name(const struct cm_term *t, char *buf, size_t len);
void cm_term_unit(const struct cm_term *t, char *buf, size_t len);

/* Fit m to the points (nsigma <= 0: no culling); culled (n entries, or NULL) gets 1 for each
 * point culled. 0, -EDOM (fewer points than coefficients), -ENOMEM. */
int cm_fit(const struct cm_point *p, size_t n, const struct cm_model *m, double nsigma,
	   struct cm_fit *out, uint8_t *culled);
/* Every model fitted (fits[i] for models[i], with its held-out error) and the choice: the
 * lowest held-out error, a simpler model preferred within 2 % of it; *runner the best other
 * (SIZE_MAX when none). -EDOM when no model could be fitted. */
int cm_choose(const struct cm_point *p, size_t n, const struct cm_model *models, size_t nm,
	      double nsigma, struct cm_fit *fits, size_t *best, size_t *runner);

#endif /* PERCH_MODEL_COSTMODEL_H */
