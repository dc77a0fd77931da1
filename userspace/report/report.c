// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The table of `perch report` outputs (report.h: one row and one file each), the region lookups
 * the CLI's --region checks use, and the summary printed when `perch record` ends.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "lib/escape.h"

#define REPORT_ROW(id, name, help) [id] = {#name, help, report_##name},
const struct report_output report_outputs[REPORT_NR] = {REPORT_OUTPUTS(REPORT_ROW)};
#undef REPORT_ROW

const struct report_output *report__output(const char *name)
{
	for (size_t i = 0; name && i < REPORT_NR; i++) {
		if (!strcmp(report_outputs[i].name, name))
			return &report_outputs[i];
	}
	return NULL;
}

/* The outputs of lines a person reads on a terminal (the callers table but as CSV): written
 * through lib/escape.h's terminal rule, so that no name sends the terminal a control sequence. */
static bool terminal_output(const struct report_opts *o)
{
	if (query__has_focus(o->query, NULL))
		return o->format != REPORT_CSV;
	return o->format == REPORT_TEXT || o->format == REPORT_FOLDED || o->format == REPORT_STATS;
}

/* The output o asks for, of the samples its event and view keep and weigh. */
static int print_output(const struct recording *r, const char *path, const struct report_opts *o,
			FILE *out)
{
	struct sampleset_opts so = {.event = o->event, .view = (enum sample_view)o->view};
	struct sampleset *set = sampleset__new(r, &so);
	int err;

	if (!set)
		return -errno;
	r = sampleset__recording(set);
	if (query__has_focus(o->query, NULL)) {
		err = report_callers(r, path, o, out);
	} else {
		if (o->format == REPORT_TEXT)
			report__view_header(r, o->view, out);
		err = report_outputs[o->format].print(r, path, o, out);
	}
	sampleset__free(set);
	return err;
}

int report__print(const struct recording *r, const char *path, const struct report_opts *o,
		  FILE *out)
{
	FILE *term = NULL;
	int err;

	if ((unsigned int)o->format >= REPORT_NR)
		return -EINVAL;
	if (terminal_output(o) && !(term = esc_term_stream(out)))
		return -errno;
	err = print_output(r, path, o, term ?: out);
	if (term && fclose(term) && !err)
		err = -EIO;
	return err;
}

int report__check_query(const struct recording *r, const struct report_opts *o)
{
	struct profile_opts po = {.lines = o->lines,
				  .no_demangle = o->no_demangle,
				  .no_inline = o->no_inline,
				  .region = o->region,
				  .query = o->query};

	return o->query ? profile__check_query(r, &po) : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int report__find_region(const struct recording *r, const char *name)
{
	struct regiontab *t = regiontab__new(r);
	int found;

	if (!t)
		return -errno;
	found = regiontab__find(t, name) >= 0;
	regiontab__free(t);
	return found ? 0 : -ENOENT;
}

char *report__region_names(const struct recording *r)
{
	struct regiontab *t = regiontab__new(r);
	uint32_t n = t ? regiontab__count(t) : 0;
	const char **names = t ? malloc((n + 1) * sizeof(*names)) : NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = names ? open_memstream(&buf, &len) : NULL;

	if (f) {
		for (uint32_t i = 0; i < n; i++)
			names[i] = regiontab__name(t, i);
		qsort(names, n, sizeof(*names), by_name);
		for (uint32_t i = 0; i < n; i++)
			fprintf(f, "%s%s", i ? ", " : "", names[i]);
		if (fclose(f)) {
			free(buf);
			buf = NULL;
		}
	}
	free(names);
	regiontab__free(t);
	return buf;
}

/* The summary's region lines: the five regions with the most time. */
static void summary_regions(const struct recording *r, FILE *out)
{
	struct regiontab *t = r->nrthreads ? regiontab__new(r) : NULL;
	uint32_t n = t ? regiontab__count(t) : 0;
	char tot[24], mean[24];

	if (n)
		fprintf(out,
			"\nRegions (exact, all threads; %u in all)\n       calls       total"
			"        mean  region\n",
			n);
	for (uint32_t i = 0; i < n && i < 5; i++) {
		const struct region_stat *s = regiontab__all(t, i);
		uint64_t timed = region_stat__timed(s);

		report_fmt_time(tot, s->total_ns);
		if (timed)
			report_fmt_time(mean, report_mean_ns(s));
		else
			snprintf(mean, sizeof(mean), "%10s", "-");
		fprintf(out, "  %10" PRIu64 "  %s  %s  %s\n", s->calls, tot, mean,
			regiontab__name(t, i));
	}
	regiontab__free(t);
}

void report__summary(const struct recording *r, const char *path, FILE *out)
{
	report__summary_of(r, path, 0, out);
}

static void summary(const struct recording *r, const char *path, uint32_t event, FILE *out)
{
	struct profile *p = profile__build(r, NULL);
	uint64_t dur = 0, lost = report_stat(r, REC_STAT_lost_count_map_full);
	char sampling[512];

	if (!p)
		return;
	report_end(r, REC_END_duration_ns, &dur);
	report_sampling(r, event, false, sampling, sizeof(sampling));
	fprintf(out, "\nperch: %" PRIu64 " samples in %.2f s (%s)", report_sample_total(r),
		dur / 1e9, sampling);
	fprintf(out, "; lost %" PRIu64 ", truncated %" PRIu64 ", user stacks missing %" PRIu64 "\n",
		lost, report_stat(r, REC_STAT_truncated_stacks),
		report_stat(r, REC_STAT_lost_user_stack_map_full) +
			report_stat(r, REC_STAT_user_stack_unreadable));
	report_print_top(p, true, 10, out);
	summary_regions(r, out);
	for (size_t i = 0; i < r->ngpu_notes; i++)
		fprintf(out, "\nGPU: %s\n", recording__string(r, r->gpu_notes[i]));
	if (r->ngpu)
		fprintf(out,
			"\nGPU: %" PRIu64 " activities, %" PRIu64
			" joined to their launch (perch report %s: the GPU section)\n",
			report_stat(r, REC_STAT_gpu_activities),
			report_stat(r, REC_STAT_gpu_activities_joined), path);
	fprintf(out, "\nrecording: %s (%.1f KiB); full report: perch report %s\n", path,
		r->good_size / 1024.0, path);
	profile__free(p);
}

/* Through the terminal rule, as the report's text (report__print()). */
void report__summary_of(const struct recording *r, const char *path, uint32_t event, FILE *out)
{
	struct sampleset *set = sampleset__new(r, &(struct sampleset_opts){.event = event});
	FILE *term = set ? esc_term_stream(out) : NULL;

	if (term) /* else out of memory: no summary rather than none kept, or names raw */
		summary(sampleset__recording(set), path, event, term);
	if (term)
		fclose(term);
	sampleset__free(set);
}
