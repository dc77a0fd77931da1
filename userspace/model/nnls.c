// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Lawson-Hanson non-negative least squares (see nnls.h). Our own: Debian ships no small,
 * maintained C library for NNLS (the reference code is Lawson and Hanson's Fortran, SciPy's
 * nnls is Python around a Fortran port, and GSL, Eigen or Ceres would bring a large dependency
 * for a hundred lines); the cost models need only a handful of columns, so the passive set's
 * least-squares problem is solved afresh each step by modified Gram-Schmidt QR (m k^2 flops,
 * k <= NNLS_MAX_COLS). Columns are scaled to unit norm first (n^2 and 1 differ by 10^9), which
 * keeps x >= 0 and makes one tolerance fit all columns.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nnls.h"

#define DEPENDENT 1e-9 /* a unit column whose part outside the others is this small */

struct nnls {
	const double *A; /* scaled, m x n row-major */
	const double *b;
	size_t m, n;
	double *Q; /* m x k, column c at Q + c * m */
	size_t P[NNLS_MAX_COLS], k;
};

static double dot_col(const struct nnls *s, size_t col, const double *v)
{
	double d = 0;

	for (size_t i = 0; i < s->m; i++)
		d += s->A[i * s->n + col] * v[i];
	return d;
}

/* The least-squares solution on the passive columns P (z elsewhere 0); -EDOM when a column of
 * P is a combination of the ones before it. */
static int solve_passive(struct nnls *s, double *z)
{
	double R[NNLS_MAX_COLS][NNLS_MAX_COLS] = {{0}}, y[NNLS_MAX_COLS];
	size_t m = s->m;

	for (size_t c = 0; c < s->k; c++) {
		double *q = s->Q + c * m, nrm = 0;

		for (size_t i = 0; i < m; i++)
			q[i] = s->A[i * s->n + s->P[c]];
		for (size_t d = 0; d < c; d++) {
			const double *qd = s->Q + d * m;
			double r = 0;

			for (size_t i = 0; i < m; i++)
				r += qd[i] * q[i];
			R[d][c] = r;
			for (size_t i = 0; i < m; i++)
				q[i] -= r * qd[i];
		}
		for (size_t i = 0; i < m; i++)
			nrm += q[i] * q[i];
		nrm = sqrt(nrm);
		if (nrm < DEPENDENT)
			return -EDOM;
		R[c][c] = nrm;
		y[c] = 0;
		for (size_t i = 0; i < m; i++) {
			q[i] /= nrm;
			y[c] += q[i] * s->b[i];
		}
	}
	memset(z, 0, s->n * sizeof(*z));
	for (size_t c = s->k; c-- > 0;) {
		double v = y[c];

		for (size_t d = c + 1; d < s->k; d++)
			v -= R[c][d] * z[s->P[d]];
		z[s->P[c]] = v / R[c][c];
	}
	return 0;
}

static void drop_passive(struct nnls *s, size_t col)
{
	for (size_t c = 0; c < s->k; c++) {
		if (s->P[c] == col) {
			memmove(&s->P[c], &s->P[c + 1], (s->k - c - 1) * sizeof(s->P[0]));
			s->k--;
			return;
		}
	}
}

/* Lawson and Hanson's inner loop: from feasible x, move towards the passive solution until it
 * is feasible, dropping the columns that reach zero. -EDOM: P is not independent. */
static int inner_loop(struct nnls *s, double *x, double *z)
{
	for (size_t it = 0; it < 3 * s->n + 3; it++) {
		double alpha = INFINITY;
		int err = solve_passive(s, z);

		if (err)
			return err;
		for (size_t c = 0; c < s->k; c++) {
			size_t j = s->P[c];

			if (z[j] <= 0)
				alpha = fmin(alpha, x[j] / (x[j] - z[j]));
		}
		if (alpha == INFINITY) {
			memcpy(x, z, s->n * sizeof(*x));
			return 0;
		}
		for (size_t j = 0; j < s->n; j++)
			x[j] += alpha * (z[j] - x[j]);
		for (size_t c = s->k; c-- > 0;) {
			if (x[s->P[c]] <= 1e-15) {
				x[s->P[c]] = 0;
				drop_passive(s, s->P[c]);
			}
		}
	}
	return -ERANGE;
}

/* The column of the largest positive gradient not yet passive nor banned, or n when none. */
static size_t entering(const struct nnls *s, const double *x, const bool *banned, double *r,
		       double tol)
{
	size_t best = s->n;
	double wmax = tol;

	for (size_t i = 0; i < s->m; i++) {
		r[i] = s->b[i];
		for (size_t j = 0; j < s->n; j++)
			r[i] -= s->A[i * s->n + j] * x[j];
	}
	for (size_t j = 0; j < s->n; j++) {
		bool passive = false;
		double w;

		for (size_t c = 0; c < s->k; c++)
			passive |= s->P[c] == j;
		if (passive || banned[j])
			continue;
		w = dot_col(s, j, r);
		if (w > wmax) {
			wmax = w;
			best = j;
		}
	}
	return best;
}

static int active_set(struct nnls *s, double *x, double *r, bool *banned)
{
	double z[NNLS_MAX_COLS], bn = 0, tol;

	for (size_t i = 0; i < s->m; i++)
		bn += s->b[i] * s->b[i];
	tol = 1e-12 * (sqrt(bn) + 1e-300);
	for (size_t outer = 0; outer < 3 * s->n + 3; outer++) {
		size_t t = entering(s, x, banned, r, tol);
		int err;

		if (t == s->n)
			return 0;
		s->P[s->k++] = t;
		err = inner_loop(s, x, z);
		if (err == -EDOM || (!err && x[t] <= 0)) {
			/* collinear with the passive set (or rounding refused it): never again */
			banned[t] = true;
			drop_passive(s, t);
			x[t] = 0;
			err = 0;
		}
		if (err)
			return err;
	}
	return -ERANGE;
}

int nnls_solve(const double *A, size_t m, size_t n, const double *b, double *x, double *rnorm)
{
	double scale[NNLS_MAX_COLS], *As = NULL, *r = NULL;
	bool banned[NNLS_MAX_COLS] = {0};
	struct nnls s = {.b = b, .m = m, .n = n};
	int err = -ENOMEM;

	if (!A || !b || !x || !m || !n || n > NNLS_MAX_COLS || m > SIZE_MAX / (n * sizeof(double)))
		return -EINVAL;
	memset(x, 0, n * sizeof(*x));
	As = malloc(m * n * sizeof(*As));
	s.Q = malloc(m * n * sizeof(*s.Q));
	r = malloc(m * sizeof(*r));
	if (!As || !s.Q || !r)
		goto out;
	for (size_t j = 0; j < n; j++) {
		scale[j] = 0;
		for (size_t i = 0; i < m; i++)
			scale[j] += A[i * n + j] * A[i * n + j];
		scale[j] = sqrt(scale[j]);
		banned[j] = !(scale[j] > 0) || !isfinite(scale[j]);
		for (size_t i = 0; i < m; i++)
			As[i * n + j] = banned[j] ? 0 : A[i * n + j] / scale[j];
	}
	s.A = As;
	err = active_set(&s, x, r, banned);
	for (size_t j = 0; j < n; j++)
		x[j] = banned[j] || x[j] <= 0 ? 0 : x[j] / scale[j];
	if (rnorm) {
		double rr = 0;

		for (size_t i = 0; i < m; i++) {
			double v = b[i];

			for (size_t j = 0; j < n; j++)
				v -= A[i * n + j] * x[j];
			rr += v * v;
		}
		*rnorm = sqrt(rr);
	}
out:
	free(As);
	free(s.Q);
	free(r);
	return err;
}
