// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Cost models (model/nnls.c, costexpr.c, costmodel.c, sizedata.c; format/sizes.c): the NNLS
 * solver against solutions worked out by hand (an exact fit, a coefficient clamped at zero,
 * collinear bases, one point), the --model parser, the choice of model on data of known shape
 * (right model, coefficients, outliers culled, the simpler model preferred over one with a
 * useless term), and the SIZES block through the real writer and reader.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/recording.h"
#include "model/costmodel.h"
#include "model/nnls.h"
#include "model/sizedata.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static void nnls_solves_exact_fit(void **state)
{
	double A[10 * 2], b[10], x[2], rn;

	(void)state;
	for (int i = 0; i < 10; i++) {
		A[i * 2] = 1;
		A[i * 2 + 1] = i + 1;
		b[i] = 3 + 2 * (i + 1);
	}
	assert_int_equal(nnls_solve(A, 10, 2, b, x, &rn), 0);
	NEAR(x[0], 3, 1e-9);
	NEAR(x[1], 2, 1e-9);
	NEAR(rn, 0, 1e-9);
}

/* b = 10 - n: the slope would be negative; clamped at 0 the best constant is the mean, 4.5. And
 * A = [1 0; 0 1; 1 1], b = (1, -1, 0): x2 clamped, x1 = 0.5 (the gradient of x2 is -1.5 < 0). */
static void nnls_clamps_coefficient_at_zero(void **state)
{
	double A[10 * 2], b[10], x[2], rn;
	double A2[] = {1, 0, 0, 1, 1, 1}, b2[] = {1, -1, 0};

	(void)state;
	for (int i = 0; i < 10; i++) {
		A[i * 2] = 1;
		A[i * 2 + 1] = i + 1;
		b[i] = 10 - (i + 1);
	}
	assert_int_equal(nnls_solve(A, 10, 2, b, x, &rn), 0);
	NEAR(x[0], 4.5, 1e-9);
	assert_true(x[1] == 0);
	NEAR(rn, sqrt(82.5), 1e-9); /* sum of (5.5 - i)^2, i = 1..10 */
	assert_int_equal(nnls_solve(A2, 3, 2, b2, x, NULL), 0);
	NEAR(x[0], 0.5, 1e-12);
	assert_true(x[1] == 0);
}

/* Columns 1, n, 2n: any split of the slope between the last two fits; the fit is exact and
 * non-negative, and its slope is the data's. */
static void nnls_handles_collinear_bases(void **state)
{
	double A[10 * 3], b[10], x[3], rn;

	(void)state;
	for (int i = 0; i < 10; i++) {
		A[i * 3] = 1;
		A[i * 3 + 1] = i + 1;
		A[i * 3 + 2] = 2 * (i + 1);
		b[i] = 3 + 2 * (i + 1);
	}
	assert_int_equal(nnls_solve(A, 10, 3, b, x, &rn), 0);
	NEAR(rn, 0, 1e-9);
	NEAR(x[0], 3, 1e-9);
	NEAR(x[1] + 2 * x[2], 2, 1e-9);
	assert_true(x[0] >= 0 && x[1] >= 0 && x[2] >= 0);
}

/* One point, two unknowns: an exact, non-negative fit. */
static void nnls_fits_one_point(void **state)
{
	double A[] = {1, 50}, b[] = {400}, x[2], rn;

	(void)state;
	assert_int_equal(nnls_solve(A, 1, 2, b, x, &rn), 0);
	NEAR(rn, 0, 1e-9);
	NEAR(x[0] + 50 * x[1], 400, 1e-9);
	assert_true(x[0] >= 0 && x[1] >= 0);
	assert_int_equal(nnls_solve(A, 0, 2, b, x, &rn), -EINVAL);
}

static void parser_reads_terms(void **state)
{
	struct cm_model m;
	size_t bad = 0;
	char name[64];

	(void)state;
	assert_int_equal(cm_parse("1, n, n*log2(n)", &m, &bad), 0);
	assert_int_equal(m.nterms, 3);
	assert_true(m.terms[0].p == 0 && m.terms[0].q == 0);
	assert_true(m.terms[1].p == 1 && m.terms[1].q == 0);
	assert_true(m.terms[2].p == 1 && m.terms[2].q == 1);
	assert_int_equal(cm_parse("n**2,sqrt(n)*log2(n)^2,n^1.5", &m, &bad), 0);
	assert_true(m.terms[0].p == 2);
	assert_true(m.terms[1].p == 0.5 && m.terms[1].q == 2);
	cm_term_name(&m.terms[1], name, sizeof(name));
	assert_string_equal(name, "sqrt(n)*log2(n)^2");
	cm_term_unit(&m.terms[0], name, sizeof(name));
	assert_string_equal(name, "ns/(n^2)");
	assert_int_equal(cm_parse("n^^2", &m, &bad), -EINVAL);
	assert_int_equal(bad, 2);
	assert_int_equal(cm_parse("1,m", &m, &bad), -EINVAL);
	assert_int_equal(bad, 2);
	assert_int_equal(cm_parse("", &m, &bad), -EINVAL);
	assert_int_equal(cm_parse("n,", &m, &bad), -EINVAL);
	assert_int_equal(cm_parse("nn", &m, &bad), -EINVAL);
}

static uint64_t lcg = 12345;

static double unit_random(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(lcg >> 11) / 9007199254740992.0;
}

/* n log-uniform in [16, 65536], t = cost(n) with +-1 % noise, every 50th call 10x. */
static size_t make_points(struct cm_point *p, size_t n, double (*cost)(double))
{
	size_t slow = 0;

	for (size_t i = 0; i < n; i++) {
		double x = floor(16 * pow(4096, unit_random()));

		p[i].n = x;
		p[i].t = cost(x) * (1 + 0.02 * (unit_random() - 0.5));
		if (i % 50 == 7) {
			p[i].t *= 10;
			slow++;
		}
	}
	return slow;
}

static double linear(double n)
{
	return 300 + 2 * n;
}
static double nlogn(double n)
{
	return 40 * n * log2(n);
}
static double quadratic(double n)
{
	return 0.5 * n * n;
}

static void choose_case(double (*cost)(double), size_t want, double a, double b)
{
	struct cm_point p[500];
	struct cm_model m[8];
	struct cm_fit f[8];
	size_t nm = cm_builtin(m, 8), best, runner, slow = make_points(p, 500, cost);

	assert_int_equal(cm_choose(p, 500, m, nm, 3, f, &best, &runner), 0);
	assert_int_equal(best, want);
	assert_true(runner != best && runner < nm);
	NEAR(f[best].coef[0], a, 0.02 * fmax(a, 300));
	NEAR(f[best].coef[1], b, 0.01 * b);
	assert_true(f[best].culled >= slow && f[best].culled < 3 * slow);
	assert_true(f[best].heldout < 0.02 && f[best].r2 > 0.999);
	/* unculled: the outliers pull the fit (2 % of calls 10x: about +18 % on average) */
	assert_int_equal(cm_fit(p, 500, &m[want], 0, &f[0], NULL), 0);
	assert_int_equal(f[0].culled, 0);
	assert_true(f[0].rel_rms > 0.5);
}

static void choice_finds_each_shape(void **state)
{
	(void)state;
	choose_case(linear, 1, 300, 2);
	choose_case(nlogn, 2, 0, 40);
	choose_case(quadratic, 3, 0, 0.5);
}

/* A user model with a useless n^2 term fits as well as a + b*n (its coefficient goes to ~0, its
 * R^2 is no lower) but is not chosen: the simpler model within 2 % of the held-out error is. */
static void choice_prefers_simpler_model(void **state)
{
	struct cm_point p[300];
	struct cm_model m[8];
	struct cm_fit f[8];
	size_t nm = cm_builtin(m, 7), best, runner, bad;

	(void)state;
	make_points(p, 300, linear);
	assert_int_equal(cm_parse("1,n,n^2", &m[nm], &bad), 0);
	nm++;
	assert_int_equal(cm_choose(p, 300, m, nm, 3, f, &best, &runner), 0);
	assert_int_equal(best, 1);
	assert_true(f[nm - 1].r2 >= f[1].r2 - 1e-6);
	/* too few points for the model: -EDOM, nothing fitted */
	assert_int_equal(cm_fit(p, 2, &m[nm - 1], 3, &f[0], NULL), -EDOM);
}

/* A SIZES block written and loaded: the same models; a later entry of a thread replaces it. */
static void sizes_round_trip(void **state)
{
	char path[] = "/tmp/perch-test-model.XXXXXX", old[64];
	struct rec_size_bucket bk[2] = {{5, 3, 20, 40, 60, 90, 2900, 1800},
					{7, 1, 100, 100, 100, 100, 10000, 10000}};
	struct rec_size_point pt[2] = {{17, 25}, {100, 100}};
	struct rec_size_model m = {0, 1, 4, 2, 2, bk, pt};
	struct rec_size_thread t = {10, 11, 5, 1, &m};
	struct size_set s = {0};
	struct recording *r;
	struct rec_writer *w;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	snprintf(old, sizeof(old), "%s.old", path);
	unlink(old);
	assert_non_null(w);
	m.name = rec_writer__string(w, "solve");
	m.npoints = 5; /* more points than calls */
	assert_int_equal(rec_writer__sizes(w, &t, 1), -EINVAL);
	m.npoints = 2;
	assert_int_equal(rec_writer__sizes(w, &t, 1), 0);
	m.seen = 5;
	assert_int_equal(rec_writer__sizes(w, &t, 1), 0); /* replaces the first */
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	unlink(path);
	assert_int_equal(r->nsthreads, 1);
	assert_int_equal(r->sthreads[0].over, 5);
	assert_int_equal(r->sthreads[0].models[0].seen, 5);
	assert_int_equal(r->sthreads[0].models[0].nbuckets, 2);
	NEAR(r->sthreads[0].models[0].buckets[0].sum_nt, 1800, 0);
	assert_int_equal(r->sthreads[0].models[0].points[1].t_ns, 100);
	assert_int_equal(size_set__add(&s, r), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.regions[0].name, "solve");
	assert_int_equal(s.regions[0].npoints, 2);
	assert_int_equal(s.regions[0].buckets[7].count, 1);
	size_set__free(&s);
	recording__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nnls_solves_exact_fit),
		cmocka_unit_test(nnls_clamps_coefficient_at_zero),
		cmocka_unit_test(nnls_handles_collinear_bases),
		cmocka_unit_test(nnls_fits_one_point),
		cmocka_unit_test(parser_reads_terms),
		cmocka_unit_test(choice_finds_each_shape),
		cmocka_unit_test(choice_prefers_simpler_model),
		cmocka_unit_test(sizes_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
