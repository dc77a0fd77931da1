// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mkrec: writes a synthetic recording through the real writer (format/recording.h), for the
 * exporters' tests and memory measurements (tests/chrome.sh, docs/BENCHMARKS.md "Exports:
 * memory"). Deterministic: the same arguments give the same file.
 *
 *   mkrec [-n SAMPLES] [-s STACKS] [-t THREADS] [-d DEPTH] [-w WINDOW_MS] [--timeline]
 *         [--regions] [--hostile] OUT
 *
 * Process 1000 ("mkrec-app") with THREADS threads (tids 1000, 1001, ...; "worker-N" but the
 * first), each ticking every millisecond (frequency 1000), interleaved: tick i is thread
 * i % THREADS's, at 1 s + (i + 1/2) ms / THREADS; the recording spans 1 s to 1 s + SAMPLES ms /
 * THREADS. Tick i's stack is stack (i * 2654435761) % STACKS:
 * main, DEPTH - 3 frames lvl_N, mid_(k % 16), leaf_k, all in /usr/bin/mkrec-app (build-id
 * 00112233445566778899aabbccddeeff00112233).
 *
 * --regions: per thread, region "outer" opens before each tenth tick (j % 10 == 0) and closes
 * before tick j % 10 == 8, "inner" from before j % 10 == 2 to before j % 10 == 5, a mark "tick"
 * before j % 10 == 5 of every fiftieth; a quarter tick early each. Samples carry the open
 * regions; the REGIONS block holds the exact table (calls and times of the completed spans, the
 * ones open at the end counted open).
 *
 * Counts per window of WINDOW_MS (100); --timeline adds every tick as an event and, with
 * --regions, every begin, end and mark as a span.
 *
 * --hostile: every name the target controls (functions, module, threads, regions, the command
 * and the event) starts with HOSTILE: terminal escapes, XML and JSON specials, bytes that are no
 * UTF-8 (overlong, surrogate, cut short), a C1 control and U+FFFE; the regions' names start with
 * '=', '+' and '@' (spreadsheet formulas). For tests/integration/hostile-names.sh.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/recording.h"

#define PID	 1000u
#define TICK_NS	 1000000ull /* per thread */
#define START_NS 1000000000ull
#define BUILD_ID "00112233445566778899aabbccddeeff00112233"
#define NREGIONS 3 /* region states of a sample: none, outer, outer > inner */
#define HOSTILE                                                                                  \
	"\x1b[31m\x1b]0;title\x07\x1b[2J<b>&amp;'\",;\t\xff\xc0\xaf\xed\xa0\x80\xc2\x9b\xef\xbf" \
	"\xbe\xe2\x82"

#define HOSTILE_EVENT                                     \
	"\x1b[31m<b>&'\"\xff\xc0\xaf\xed\xa0\x80\xc2\x9b" \
	"evt" /* ',' lists events */

static const char *pre = ""; /* HOSTILE with --hostile */

struct opts {
	uint64_t samples;
	uint32_t stacks, threads, depth;
	uint64_t window_ns;
	bool timeline, regions;
	const char *out;
};

struct gen {
	struct opts o;
	struct rec_writer *w;
	uint32_t mod, s_outer, s_inner, s_tick;
	uint32_t *frames; /* stack k's frames: depth each */
	uint32_t *comms;  /* per thread */
	uint64_t *counts; /* (thread, stack, region state) -> count in the current window */
	struct rec_region_node (*nodes)[NREGIONS];	      /* per thread: root, outer, inner */
	uint64_t *outer_begin, *inner_begin, *inner_in_outer; /* per thread, ns */
};

/* The frame of function "prefix_n" ("main" for prefix "main"). */
static uint32_t frame(struct gen *g, const char *prefix, uint32_t n, uint64_t offset)
{
	char name[128];

	if (strcmp(prefix, "main"))
		snprintf(name, sizeof(name), "%s%s_%u", pre, prefix, n);
	else
		snprintf(name, sizeof(name), "%smain", pre);
	return rec_writer__frame(g->w, REC_FRAME_USER, g->mod, rec_writer__string(g->w, name),
				 offset);
}

/* Strings, frames, threads and the module's build-id. */
static int define(struct gen *g)
{
	uint32_t d = g->o.depth, fmain, *lvl = calloc(d, sizeof(*lvl));
	char comm[128];

	if (!lvl)
		return -ENOMEM;
	snprintf(comm, sizeof(comm), "/usr/bin/%smkrec-app", pre);
	g->mod = rec_writer__string(g->w, comm);
	snprintf(comm, sizeof(comm), "%s%souter", *pre ? "=" : "", pre);
	g->s_outer = rec_writer__string(g->w, comm);
	snprintf(comm, sizeof(comm), "%s%sinner", *pre ? "+" : "", pre);
	g->s_inner = rec_writer__string(g->w, comm);
	snprintf(comm, sizeof(comm), "%s%stick", *pre ? "@" : "", pre);
	g->s_tick = rec_writer__string(g->w, comm);
	fmain = frame(g, "main", 0, 0x1000);
	for (uint32_t l = 1; l + 2 < d; l++)
		lvl[l] = frame(g, "lvl", l, 0x2000 + 0x10 * l);
	for (uint32_t k = 0; k < g->o.stacks; k++) {
		uint32_t *f = &g->frames[(size_t)k * d];

		f[0] = fmain;
		for (uint32_t l = 1; l + 2 < d; l++)
			f[l] = lvl[l];
		f[d - 2] = frame(g, "mid", k % 16, 0x4000 + 0x10 * (k % 16));
		f[d - 1] = frame(g, "leaf", k, 0x100000 + 0x10 * (uint64_t)k);
	}
	free(lvl);
	for (uint32_t t = 0; t < g->o.threads; t++) {
		g->nodes[t][1] = (struct rec_region_node){.name = g->s_outer, .parent = 0};
		g->nodes[t][2] = (struct rec_region_node){.name = g->s_inner, .parent = 1};
		if (t)
			snprintf(comm, sizeof(comm), "%sworker-%u", pre, t);
		else
			snprintf(comm, sizeof(comm), "%smkrec-app", pre);
		g->comms[t] = rec_writer__string(g->w, comm);
		if (rec_writer__thread(g->w, PID, PID + t, 1, g->comms[t]))
			return -EIO;
	}
	return rec_writer__module(g->w, g->mod, BUILD_ID);
}

/* The region state of a thread's j-th tick: 0 none, 1 in outer, 2 in outer > inner. */
static uint32_t region_state(const struct gen *g, uint64_t j)
{
	if (!g->o.regions || j % 10 >= 8)
		return 0;
	return j % 10 >= 2 && j % 10 < 5 ? 2 : 1;
}

static int span(struct gen *g, uint32_t t, uint64_t ns, uint8_t kind, uint32_t name)
{
	struct rec_span s = {.pid = PID, .tid = PID + t, .time_ns = ns, .kind = kind, .name = name};

	if (!g->o.timeline)
		return 0;
	return rec_writer__span(g->w, &s);
}

/* The spans before a thread's j-th tick (at ns) and the region table they make. */
static int regions_before(struct gen *g, uint32_t t, uint64_t j, uint64_t ns)
{
	struct rec_region_node *n = g->nodes[t];
	uint64_t d;
	int err = 0;

	if (!g->o.regions)
		return 0;
	if (j % 10 == 0) {
		g->outer_begin[t] = ns;
		g->inner_in_outer[t] = 0;
		n[1].open = 1;
		err = span(g, t, ns, REC_SPAN_BEGIN, g->s_outer);
	} else if (j % 10 == 2) {
		g->inner_begin[t] = ns;
		n[2].open = 1;
		err = span(g, t, ns, REC_SPAN_BEGIN, g->s_inner);
	} else if (j % 10 == 5) {
		d = ns - g->inner_begin[t];
		n[2] = (struct rec_region_node){
			g->s_inner, 1, n[2].calls + 1, n[2].total_ns + d, n[2].self_ns + d, d, d, 0,
			0,	    0, n[2].sum_ns + d};
		g->inner_in_outer[t] += d;
		err = span(g, t, ns, REC_SPAN_END, g->s_inner);
		if (!err && j % 50 == 25)
			err = span(g, t, ns + 1, REC_SPAN_MARK, g->s_tick);
	} else if (j % 10 == 8) {
		d = ns - g->outer_begin[t];
		n[1] = (struct rec_region_node){g->s_outer,
						0,
						n[1].calls + 1,
						n[1].total_ns + d,
						n[1].self_ns + d - g->inner_in_outer[t],
						d,
						d,
						0,
						0,
						0,
						n[1].sum_ns + d};
		err = span(g, t, ns, REC_SPAN_END, g->s_outer);
	}
	return err;
}

/* The window's counts as samples (each key once), then the window itself. */
static int flush_window(struct gen *g, uint64_t start, uint64_t end)
{
	uint32_t regions[2] = {g->s_outer, g->s_inner};
	size_t n = (size_t)g->o.threads * g->o.stacks * NREGIONS;
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		uint32_t rs = i % NREGIONS, k = (i / NREGIONS) % g->o.stacks;
		uint32_t t = (uint32_t)(i / NREGIONS / g->o.stacks);
		struct rec_sample s = {.pid = PID,
				       .tid = PID + t,
				       .count = g->counts[i],
				       .comm = g->comms[t],
				       .nregions = rs,
				       .regions = regions,
				       .nframes = g->o.depth,
				       .frames = &g->frames[(size_t)k * g->o.depth]};

		if (g->counts[i])
			err = rec_writer__add_sample(g->w, &s);
		g->counts[i] = 0;
	}
	if (!err)
		err = rec_writer__window(g->w, start, end);
	return err ? err : rec_writer__flush(g->w);
}

/* One tick: its region spans, its count, and with --timeline its event. */
static int tick(struct gen *g, uint64_t i, uint64_t ns)
{
	uint32_t t = (uint32_t)(i % g->o.threads), k = (uint32_t)((i * 2654435761u) % g->o.stacks);
	uint64_t j = i / g->o.threads;
	uint32_t rs = region_state(g, j), key, regions[2] = {g->s_outer, g->s_inner};
	struct rec_sample s = {.pid = PID,
			       .tid = PID + t,
			       .comm = g->comms[t],
			       .nregions = rs,
			       .regions = regions,
			       .nframes = g->o.depth,
			       .frames = &g->frames[(size_t)k * g->o.depth]};
	int err = regions_before(g, t, j, ns - TICK_NS / g->o.threads / 4);

	g->counts[((size_t)t * g->o.stacks + k) * NREGIONS + rs]++;
	if (err || !g->o.timeline)
		return err;
	err = rec_writer__key(g->w, &s, &key);
	return err ? err : rec_writer__event(g->w, ns, key);
}

static int write_regions(struct gen *g)
{
	struct rec_region_thread *rt = calloc(g->o.threads, sizeof(*rt));
	int err;

	if (!rt)
		return -ENOMEM;
	for (uint32_t t = 0; t < g->o.threads; t++)
		rt[t] = (struct rec_region_thread){PID, PID + t, 0, NREGIONS, g->nodes[t]};
	err = rec_writer__regions(g->w, rt, g->o.threads);
	free(rt);
	return err;
}

static int generate(struct gen *g)
{
	uint64_t step = TICK_NS / g->o.threads, start = START_NS, ns = START_NS + step / 2;
	uint64_t end = START_NS + g->o.samples * step;
	char cmd[128], event[128];
	struct rec_kv meta[] = {{.key = "command", .str = cmd},
				{.key = "pids", .str = "1000"},
				{.key = "event", .str = event},
				{.key = "frequency", .str = "1000"}};
	struct rec_kv stats = {.key = "samples", .value = g->o.samples};
	struct rec_kv fin = {.key = "duration_ns", .value = end - START_NS};
	int err;

	snprintf(cmd, sizeof(cmd), "%smkrec-app %" PRIu64, pre, g->o.samples);
	snprintf(event, sizeof(event), "%s", *pre ? HOSTILE_EVENT : "cpu-clock");
	err = rec_writer__meta(g->w, meta, 4);
	err = err ? err : define(g);
	for (uint64_t i = 0; !err && i < g->o.samples; i++, ns += step) {
		if (ns >= start + g->o.window_ns) {
			err = flush_window(g, start, start + g->o.window_ns);
			start += g->o.window_ns;
		}
		err = err ? err : tick(g, i, ns);
	}
	err = err ? err : flush_window(g, start, end > start ? end : start + 1);
	err = err || !g->o.regions ? err : write_regions(g);
	err = err ? err : rec_writer__stats(g->w, &stats, 1);
	return err ? err : rec_writer__end(g->w, &fin, 1);
}

static int usage(void)
{
	fputs("usage: mkrec [-n SAMPLES] [-s STACKS] [-t THREADS] [-d DEPTH] [-w WINDOW_MS] "
	      "[--timeline] [--regions] [--hostile] OUT\n",
	      stderr);
	return 64;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {{"timeline", no_argument, NULL, 'T'},
						 {"regions", no_argument, NULL, 'R'},
						 {"hostile", no_argument, NULL, 'H'},
						 {0}};
	int c;

	*o = (struct opts){1000, 10, 1, 8, 100 * 1000000ull, false, false, NULL};
	while ((c = getopt_long(argc, argv, "n:s:t:d:w:", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->samples = strtoull(optarg, NULL, 10);
			break;
		case 's':
			o->stacks = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 't':
			o->threads = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'd':
			o->depth = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			o->window_ns = strtoull(optarg, NULL, 10) * 1000000ull;
			break;
		case 'T':
			o->timeline = true;
			break;
		case 'R':
			o->regions = true;
			break;
		case 'H':
			pre = HOSTILE;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind + 1 != argc || !o->stacks || !o->threads || o->depth < 3 || !o->window_ns)
		return -EINVAL;
	o->out = argv[optind];
	return 0;
}

int main(int argc, char **argv)
{
	struct gen g = {0};
	int err;

	if (parse(argc, argv, &g.o))
		return usage();
	g.frames = calloc((size_t)g.o.stacks * g.o.depth, sizeof(*g.frames));
	g.comms = calloc(g.o.threads, sizeof(*g.comms));
	g.counts = calloc((size_t)g.o.threads * g.o.stacks * NREGIONS, sizeof(*g.counts));
	g.nodes = calloc(g.o.threads, sizeof(*g.nodes));
	g.outer_begin = calloc(g.o.threads, sizeof(uint64_t));
	g.inner_begin = calloc(g.o.threads, sizeof(uint64_t));
	g.inner_in_outer = calloc(g.o.threads, sizeof(uint64_t));
	g.w = rec_writer__open(g.o.out);
	if (!g.frames || !g.comms || !g.counts || !g.nodes || !g.outer_begin || !g.inner_begin ||
	    !g.inner_in_outer || !g.w) {
		fprintf(stderr, "mkrec: %s: %s\n", g.o.out, strerror(errno));
		return 1;
	}
	err = generate(&g);
	if (rec_writer__close(g.w) && !err)
		err = -EIO;
	if (err)
		fprintf(stderr, "mkrec: %s: %s\n", g.o.out, strerror(-err));
	free(g.frames);
	free(g.comms);
	free(g.counts);
	free(g.nodes);
	free(g.outer_begin);
	free(g.inner_begin);
	free(g.inner_in_outer);
	return err ? 1 : 0;
}
