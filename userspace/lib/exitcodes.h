/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * perch's exit statuses: each failure a user can cause has its own (README, "Exit status").
 * `perch record -- CMD` otherwise exits with CMD's status (128+signal when it was killed).
 */
#ifndef PERCH_EXITCODES_H
#define PERCH_EXITCODES_H

enum perch_exit {
	PERCH_EXIT_OK = 0,
	PERCH_EXIT_USAGE = 64,	   /* unknown option, bad argument */
	PERCH_EXIT_BADFILE = 65,   /* damaged recording (bad magic, CRC, malformed block) */
	PERCH_EXIT_NOFILE = 66,	   /* recording cannot be opened */
	PERCH_EXIT_TRUNCATED = 67, /* recording cut mid-block: complete blocks were reported */
	PERCH_EXIT_NOPID = 68,	   /* no such process */
	PERCH_EXIT_PIDGONE = 69,   /* a target exited while perch attached to it */
	PERCH_EXIT_NOBTF = 70,	   /* kernel has no BTF */
	PERCH_EXIT_BPF = 71,	   /* the kernel refused the BPF program or perf events */
	PERCH_EXIT_INTERNAL = 72,  /* out of memory, unexpected failure */
	PERCH_EXIT_OUTPUT = 73,	   /* output file cannot be written */
	PERCH_EXIT_NOGPU = 74,	   /* --gpu: perch was built without CUDA (no libperch_cuda.so) */
	PERCH_EXIT_BUSY = 75,	   /* another perch is recording the target's region markers */
	PERCH_EXIT_NOSERVER =
		76,	      /* push: the server cannot be reached (refused, no route, timeout) */
	PERCH_EXIT_PERM = 77, /* missing CAP_BPF / CAP_PERFMON */
	PERCH_EXIT_REJECTED = 78, /* push: the server answered an HTTP status >= 300, or not HTTP */
	PERCH_EXIT_NOPMU = 79,	  /* record -e cycles|instructions: the machine has no PMU */
	PERCH_EXIT_NOSIZES = 81,  /* model: a region (or the recording) has no sizes */
	PERCH_EXIT_FEWPOINTS = 82, /* model: fewer points than a model's coefficients */
	PERCH_EXIT_BADMODEL = 83,  /* model: --model does not parse */
	PERCH_EXIT_UNSAFE = 84,	   /* a path perch was to open is a symlink, the wrong kind of file,
				    * or the input it reads (-o X X) */
	PERCH_EXIT_NOTEXEC = 126,  /* CMD found but not executable */
	PERCH_EXIT_NOTFOUND = 127, /* CMD not found */
};

#endif /* PERCH_EXITCODES_H */
