/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a recording run is asked for (`perch record`'s options, and perch top's): struct
 * record_opts, read by the run and every part of it, filled by the CLI.
 */
#ifndef PERCH_RECORD_OPTS_H
#define PERCH_RECORD_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rec_writer;

/* How user stacks are walked (--unwind). */
enum record_unwind {
	RECORD_UNWIND_AUTO = 0, /* in the kernel from DWARF tables where a module has them, frame
				 * pointers elsewhere */
	RECORD_UNWIND_FP,	/* frame pointers only */
	RECORD_UNWIND_DWARF,	/* DWARF tables only: code without CFI ends the stack */
};

struct record_opts {
	unsigned int freq;  /* samples per second per CPU */
	const char *output; /* recording file */
	char *const *argv;  /* command to launch, or NULL when attaching */
	const pid_t *pids;  /* processes to attach to */
	size_t npids;
	double duration_s; /* 0: until Ctrl-C or every target exited */
	bool quiet;	   /* no progress notes (the CLI also skips its summary) */
	bool no_lines;	   /* skip source lines and inline chains (no DWARF index builds) */
	bool no_python;	   /* CPython processes: native frames only (no walk of Python frames) */
	enum record_unwind unwind;
	bool timeline;	       /* every sample's time and thread, and region spans (--timeline) */
	uint64_t max_size;     /* --max-size: bytes the timeline may take the file to (0: no cap) */
	bool gpu;	       /* --gpu: CUDA activity (launch: CUPTI; -p: libcuda uprobes) */
	double delay_s;	       /* --delay: sampling starts this long after the targets start */
	double max_duration_s; /* --max-duration: sampling stops for good after this (0: none) */
	const char *control;   /* --control=fifo:CTL[,ACK], or NULL (see control.h) */
	unsigned int metrics_ms; /* --metrics: system metrics every so many ms (0: off) */
	bool off_cpu;		 /* --off-cpu: blocked time of target threads, with its stacks */
	uint64_t off_cpu_min_ns; /* --off-cpu-min: shorter blocks are not kept */
	/* -e: the events to sample on (format/events.h names), NULL: cycles where the machine has
	 * a PMU, else cpu-clock. */
	const char *const *events;
	size_t nevents;
	uint64_t period;  /* -c: events per sample for every event (0: see freq_given) */
	bool freq_given;  /* -F was given: every event at freq Hz; else clocks at freq Hz, other
			  * events every event */
	bool all_cpus;	  /* -a: every process, kernel threads and idle too */
	const char *cpus; /* -C: the CPUs to sample on (a list checked by cpulist_parse()), NULL:
			   * all */
	bool steps;	  /* --steps=FIRST:LAST: only those steps (perch_step()) */
	uint64_t steps_first, steps_last;
	const char *only_region; /* --only-region=NAME: only ticks inside region NAME */
	/* perch top and agent: called at every drain with the writer, before the drain's counts
	 * become the window [start_ns, end_ns) (CLOCK_MONOTONIC; format/writer_peek.h reads them);
	 * returns 0 to go on, or a signal number to stop as if perch had got it (a launched command
	 * gets it too). NULL: none. */
	int (*on_drain)(void *ctx, const struct rec_writer *w, uint64_t start_ns, uint64_t end_ns);
	void *drain_ctx;
	/* perch agent and top: forget each exited process (its image, tables, caches) some seconds
	 * after its exit (procs__sweep()), so memory follows the live processes; a recording keeps
	 * them all to its end. */
	bool forget_exited;
};

#endif /* PERCH_RECORD_OPTS_H */
