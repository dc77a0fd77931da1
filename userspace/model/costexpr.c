// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Cost models: the basis terms (see costmodel.h). Every term is n^p * log2(n)^q, so the
 * built-in candidates, the user's --model expression, the names and the units are one form:
 * a product of factors adds their powers.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "costmodel.h"

static const struct {
	const char *name;
	uint32_t n;
	struct cm_term t[2];
} builtins[] = {
	{"a", 1, {{0, 0}}},
	{"a + b*n", 2, {{0, 0}, {1, 0}}},
	{"a + b*n*log2(n)", 2, {{0, 0}, {1, 1}}},
	{"a + b*n^2", 2, {{0, 0}, {2, 0}}},
	{"a + b*log2(n)", 2, {{0, 0}, {0, 1}}},
};

size_t cm_builtin(struct cm_model *out, size_t cap)
{
	size_t n = sizeof(builtins) / sizeof(builtins[0]);

	for (size_t i = 0; i < n && i < cap; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		snprintf(out[i].name, sizeof(out[i].name), "%s", builtins[i].name);
		out[i].nterms = builtins[i].n;
		memcpy(out[i].terms, builtins[i].t, builtins[i].n * sizeof(builtins[i].t[0]));
	}
	return n < cap ? n : cap;
}

double cm_basis(const struct cm_term *t, double n)
{
	double v = t->p == 0 ? 1 : t->p == 1 ? n : t->p == 2 ? n * n : pow(n, t->p);
	double l = log2(n > 1 ? n : 1);

	for (int k = 0; k < t->q; k++)
		v *= l;
	return v;
}

double cm_eval(const struct cm_model *m, const double *coef, double n)
{
	double v = 0;

	for (uint32_t j = 0; j < m->nterms; j++)
		v += coef[j] * cm_basis(&m->terms[j], n);
	return v;
}

/* n's factor: "", "n", "n^2", "sqrt(n)", "n^1.5". */
static void n_part(double p, char *buf, size_t len)
{
	if (p == 0)
		buf[0] = '\0';
	else if (p == 1)
		snprintf(buf, len, "n");
	else if (p == 0.5)
		snprintf(buf, len, "sqrt(n)");
	else
		snprintf(buf, len, "n^%g", p);
}

void cm_term_name(const struct cm_term *t, char *buf, size_t len)
{
	char np[32], lp[32] = "";

	n_part(t->p, np, sizeof(np));
	if (t->q == 1)
		snprintf(lp, sizeof(lp), "log2(n)");
	else if (t->q > 1)
		snprintf(lp, sizeof(lp), "log2(n)^%d", t->q);
	if (!np[0] && !lp[0])
		snprintf(buf, len, "1");
	else
		snprintf(buf, len, "%s%s%s", np, np[0] && lp[0] ? "*" : "", lp);
}

void cm_term_unit(const struct cm_term *t, char *buf, size_t len)
{
	char name[64];

	cm_term_name(t, name, sizeof(name));
	if (!strcmp(name, "1"))
		snprintf(buf, len, "ns");
	else if (strchr(name, '*') || strchr(name, '^') || strchr(name, '('))
		snprintf(buf, len, "ns/(%s)", name);
	else
		snprintf(buf, len, "ns/%s", name);
}

static const char *skip_ws(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* An exponent after ^ or **: a finite number (1 when there is none). NULL with *bad where the
 * number should have been. */
static const char *exponent(const char *s, double *e, const char **bad)
{
	char *end;

	s = skip_ws(s);
	if (!strncmp(s, "**", 2))
		s += 2;
	else if (*s == '^')
		s++;
	else {
		*e = 1;
		return s;
	}
	s = skip_ws(s);
	*e = strtod(s, &end);
	if (end == s || !isfinite(*e)) {
		*bad = s;
		return NULL;
	}
	return end;
}

/* One factor into t (powers added); NULL with *bad at what it does not know. */
static const char *factor(const char *s, struct cm_term *t, const char **bad)
{
	const char *end;
	double e;

	s = skip_ws(s);
	*bad = s;
	if (*s == '1' && !isdigit((unsigned char)s[1]) && s[1] != '.')
		return s + 1;
	if (!strncmp(s, "log2(n)", 7) || !strncmp(s, "sqrt(n)", 7)) {
		int is_log = s[0] == 'l';

		end = exponent(s + 7, &e, bad);
		if (!end || (is_log && (e != floor(e) || e < 0 || e > 8)))
			return NULL;
		if (is_log)
			t->q += (int)e;
		else
			t->p += 0.5 * e;
		return end;
	}
	if (*s != 'n' || isalnum((unsigned char)s[1]) || s[1] == '_')
		return NULL;
	end = exponent(s + 1, &e, bad);
	if (end)
		t->p += e;
	return end;
}

/* One term into t; NULL with *bad where the factor it could not read starts. */
static const char *term(const char *s, struct cm_term *t, const char **bad)
{
	*t = (struct cm_term){0, 0};
	for (;;) {
		const char *next = factor(s, t, bad);

		if (!next)
			return NULL;
		s = next;
		s = skip_ws(s);
		if (*s != '*' || s[1] == '*')
			return s;
		s++;
	}
}

int cm_parse(const char *expr, struct cm_model *m, size_t *bad)
{
	const char *s = expr;

	memset(m, 0, sizeof(*m));
	m->user = 1;
	snprintf(m->name, sizeof(m->name), "%s", expr);
	for (;;) {
		const char *next;

		if (m->nterms == CM_MAX_TERMS)
			break;
		next = term(s, &m->terms[m->nterms], &s);
		if (!next)
			break;
		m->nterms++;
		s = skip_ws(next);
		if (!*s)
			return 0;
		if (*s != ',')
			break;
		s++;
	}
	*bad = (size_t)(skip_ws(s) - expr);
	return -EINVAL;
}
