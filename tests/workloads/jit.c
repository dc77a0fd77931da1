// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for JIT symbolization: two functions that exist only as machine code copied into
 * an anonymous executable mapping, named by /tmp/perf-PID.map the way JITs name theirs. jit_hot
 * and jit_cold run the same counted loop, 3x as many rounds in jit_hot, and are called equally
 * often in a random order, so they burn about 75% and 25% of the CPU time; the CPU time each took
 * is measured around its calls and printed at exit. Both are frameless leaves, called from main,
 * unless MODE is "framed": then each sets up a frame (push rbp; mov rbp, rsp), as V8's and the
 * JVM's compiled code does, and is called through a third JIT function, jit_entry, that has one
 * too, so nothing on top of the stack tells a leaf's caller: only frame pointers do, up to main
 * (issue 23: node's JIT stacks). The map file is left behind for the profiler to read; the test
 * that runs this deletes it.
 *
 *   jit [SECONDS [MODE]]   MODE: "at-exit": the map is written only as the program ends, as
 *                          java -XX:+DumpPerfMapAtExit writes it; "symlink=PATH": the map is a
 *                          symlink to PATH (a file the profiler must not copy into its recording);
 *                          "framed": as above
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "burn.h"

#define COLD_ROUNDS 150000u /* dec+jnz runs about one round a cycle: some 50 us a call at 3 GHz */
#define HOT_ROUNDS  (3 * COLD_ROUNDS)
/* each function at the start of its own cache line, so both loops have the same alignment */
#define FN_SLOT 64

typedef void (*jit_fn)(void);
typedef void (*jit_entry_fn)(jit_fn leaf);

/* mov ecx, ROUNDS (b9 imm32); 1: dec ecx (ff c9); jnz 1b (75 fc); ret (c3) */
static const unsigned char loop_code[] = {0xb9, 0, 0, 0, 0, 0xff, 0xc9, 0x75, 0xfc, 0xc3};
#define ROUNDS_AT 1
/* framed: push rbp (55); mov rbp, rsp (48 89 e5); the loop above without its ret; pop rbp (5d);
 * ret (c3) */
static const unsigned char framed_code[] = {0x55, 0x48, 0x89, 0xe5, 0xb9, 0,	0,   0,
					    0,	  0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3};
#define FRAMED_ROUNDS_AT 5
/* jit_entry(leaf): push rbp; mov rbp, rsp; call *rdi (ff d7); pop rbp; ret */
static const unsigned char entry_code[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3};

static bool framed;

static size_t fn_size(void)
{
	return framed ? sizeof(framed_code) : sizeof(loop_code);
}

static void emit(unsigned char *slot, uint32_t rounds)
{
	size_t at = framed ? FRAMED_ROUNDS_AT : ROUNDS_AT;

	memcpy(slot, framed ? framed_code : loop_code, fn_size());
	memcpy(slot + at, &rounds, sizeof(rounds)); /* x86 is little-endian, like imm32 */
}

static int write_perf_map(const unsigned char *hot, const unsigned char *cold, const char *mode)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!strncmp(mode, "symlink=", 8)) {
		if (symlink(mode + 8, path)) {
			perror(path);
			return -1;
		}
		return 0;
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return -1;
	}
	fprintf(f, "%lx %zx jit_hot\n", (unsigned long)(uintptr_t)hot, fn_size());
	fprintf(f, "%lx %zx jit_cold\n", (unsigned long)(uintptr_t)cold, fn_size());
	if (framed)
		fprintf(f, "%lx %zx jit_entry\n", (unsigned long)(uintptr_t)(cold + FN_SLOT),
			sizeof(entry_code));
	if (fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *code;
	jit_fn hot, cold;
	jit_entry_fn entry;
	double end, spent_hot = 0, spent_cold = 0;
	const char *mode = argc > 2 ? argv[2] : "";
	bool at_exit = !strcmp(mode, "at-exit");

	framed = !strcmp(mode, "framed");
	/* written while writable, then made executable: some kernels refuse W+X at once */
	code = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(code, 0xcc, len); /* int3 between the functions */
	emit(code, HOT_ROUNDS);
	emit(code + FN_SLOT, COLD_ROUNDS);
	memcpy(code + 2 * FN_SLOT, entry_code, sizeof(entry_code));
	if (mprotect(code, len, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		return 1;
	}
	if (!at_exit && write_perf_map(code, code + FN_SLOT, mode))
		return 1;
	hot = (jit_fn)(uintptr_t)code;
	cold = (jit_fn)(uintptr_t)(code + FN_SLOT);
	entry = (jit_entry_fn)(uintptr_t)(code + 2 * FN_SLOT);
	end = now_s() + arg_seconds(argc, argv, 2.0);
	/* In an order drawn at random (xorshift), not hot, cold, hot, cold: a loop of a fixed period
	 * beats with the sampler's fixed period, so runs of samples would land in one function. */
	for (uint32_t x = 2463534242u; now_s() < end;) {
		double t0 = thread_cpu_s(), t1;
		bool is_hot;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		is_hot = x & 1;
		if (framed)
			entry(is_hot ? hot : cold);
		else
			(is_hot ? hot : cold)();
		t1 = thread_cpu_s();
		if (is_hot)
			spent_hot += t1 - t0;
		else
			spent_cold += t1 - t0;
	}
	truth("jit_hot", spent_hot);
	truth("jit_cold", spent_cold);
	truth("cpu", process_cpu_s());
	if (at_exit && write_perf_map(code, code + FN_SLOT, mode))
		return 1;
	return 0;
}
