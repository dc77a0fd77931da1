/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch model`'s outputs (report/model.c: text, csv of points, fits; report/model_svg.c: the
 * plots), and the HTML report's cost-model section, which embeds the same SVG.
 */
#ifndef PERCH_REPORT_MODEL_H
#define PERCH_REPORT_MODEL_H

#include <stdio.h>
#include "model/sizedata.h"

/* Per region: chosen model with coefficients and units, R^2, relative RMS and held-out error,
 * points used and culled, the runner-up, every candidate's held-out error, and the per log2(n)
 * bucket means against the model (where a size regime departs from it). */
void model_report_text(const struct size_set *s, const struct size_fit *f, size_t n, FILE *out);
/* region,n,t_ns,fit_ns,residual_ns,culled: every point with the chosen model's value. */
void model_report_csv(const struct size_fit *f, size_t n, FILE *out);
/* region,model,chosen,terms,coefficients,units,r2,rel_rms,heldout,used,culled,calls,recordings:
 * every candidate of every region (terms, coefficients, units ';'-separated; chosen 1 for the
 * choice, 2 for the runner-up, else 0; calls: the region's sized calls pooled, recordings: how
 * many of the inputs had it). */
void model_report_fits(const struct size_fit *f, size_t n, FILE *out);
/* One SVG document, a panel per region: points (culled ones marked), the fitted curve, the
 * relative residuals below; log-scale x where n spans more than a decade. */
void model_report_svg(const struct size_fit *f, size_t n, FILE *out);
/* The same panels without the XML prolog, to embed in HTML. */
void model_report_svg_inline(const struct size_fit *f, size_t n, FILE *out);

#endif /* PERCH_REPORT_MODEL_H */
