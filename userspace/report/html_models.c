// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=html's cost-model section (report/html.h): when the recording has sized regions
 * (SIZES), the fits `perch model` makes by default, as its SVG plot and its text, for the
 * viewer's "Cost models" tab.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "model/sizedata.h"
#include "common.h"
#include "html.h"
#include "model.h"

#define DEFAULT_NSIGMA 3.0

/* Every region with enough points fitted into f (*n of them); -ENOMEM. */
static int fit_all(const struct size_set *s, struct size_fit *f, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < s->n; i++) {
		int err = size_fit__run(&f[*n], &s->regions[i], NULL, DEFAULT_NSIGMA);

		if (err == -ENOMEM) {
			size_fit__free(&f[*n]);
			return err;
		}
		if (err) {
			size_fit__free(&f[*n]); /* too few points: left out, as perch model says */
			continue;
		}
		(*n)++;
	}
	return 0;
}

static int put_strings(const struct size_set *s, const struct size_fit *f, size_t n, FILE *out)
{
	char *svg = NULL, *text = NULL;
	size_t len = 0, tlen = 0;
	FILE *a = open_memstream(&svg, &len), *b = open_memstream(&text, &tlen);
	int err = 0;

	if (a)
		model_report_svg_inline(f, n, a);
	if (b)
		model_report_text(s, f, n, b);
	if (!a || !b || fclose(a) || fclose(b))
		err = -ENOMEM;
	if (!err) {
		fputs(",\n\"models\":{\"svg\":", out);
		report_json_str(out, svg);
		fputs(",\"text\":", out);
		report_json_str(out, text);
		fputs("}", out);
	}
	free(svg);
	free(text);
	return err;
}

int html_put_models(const struct recording *r, FILE *out)
{
	struct size_set s = {0};
	struct size_fit *f = NULL;
	size_t n = 0;
	int err;

	if (!r->nsthreads)
		return 0;
	err = size_set__add(&s, r);
	if (!err && s.n) {
		f = calloc(s.n, sizeof(*f));
		err = f ? fit_all(&s, f, &n) : -ENOMEM;
	}
	if (!err && n)
		err = put_strings(&s, f, n, out);
	for (size_t i = 0; i < n; i++)
		size_fit__free(&f[i]);
	free(f);
	size_set__free(&s);
	return err;
}
