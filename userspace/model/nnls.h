/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Non-negative least squares: min ||A x - b|| subject to x >= 0, by Lawson and Hanson's active
 * set method (Solving Least Squares Problems, 1974, chapter 23), for the few basis functions of
 * a cost model (perch model) over up to some thousands of points.
 */
#ifndef PERCH_MODEL_NNLS_H
#define PERCH_MODEL_NNLS_H

#include <stddef.h>

#define NNLS_MAX_COLS 16

/*
 * A is m rows of n columns, row-major (n <= NNLS_MAX_COLS); x gets n coefficients, each >= 0.
 * A column that is (numerically) a combination of the columns already in the solution never
 * enters it (collinear bases: the first one kept carries their weight). Returns 0, -EINVAL for
 * bad sizes, -ENOMEM, -ERANGE when the iteration limit (3n outer steps, as Lawson and Hanson
 * bound it in practice) was reached (x holds the last feasible point). *rnorm (if not NULL):
 * the residual's norm.
 */
int nnls_solve(const double *A, size_t m, size_t n, const double *b, double *x, double *rnorm);

#endif /* PERCH_MODEL_NNLS_H */
