// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for kernel symbols that are gone by the drain: loads a BPF program named
 * perch_burn (a socket filter of a few thousand ALU instructions, no BTF, no clang), runs it in
 * the kernel through BPF_PROG_TEST_RUN for about SECONDS (default 0.03), then closes it (the
 * kernel unloads it) and exits, all before the recorder's first drain 100 ms in. Its ticks land
 * in bpf_prog_<tag>_perch_burn, which /proc/kallsyms no longer lists by then. Prints "loaded
 * PROG_MS CPU_MS" (the time the kernel measured inside the program's runs, and the process's
 * CPU time from its exec to its exit: the share of its ticks the program should get) and exits
 * 0, or exits 2 when the kernel refuses the program (not root, no BPF).
 */
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "burn.h"

#define BODY 4000 /* ALU instructions: the run is spent in them, not in the test-run loop */

static struct bpf_insn insns[BODY + 2];

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int load(void)
{
	union bpf_attr a;

	insns[0] = (struct bpf_insn){.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1};
	for (int i = 1; i <= BODY; i++)
		insns[i] = (struct bpf_insn){.code = BPF_ALU64 | BPF_MUL | BPF_K, .imm = 3};
	insns[BODY + 1] = (struct bpf_insn){.code = BPF_JMP | BPF_EXIT};
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (unsigned long)insns;
	a.insn_cnt = BODY + 2;
	a.license = (unsigned long)"GPL";
	strcpy(a.prog_name, "perch_burn");
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

static double prog_ns; /* the kernel's measure of the time in the program's runs */

/* One run of the program, repeated `repeat` times in the kernel. */
static int run(int fd, unsigned int repeat)
{
	static char pkt[64];
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = fd;
	a.test.data_in = (unsigned long)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = repeat;
	if (sys_bpf(BPF_PROG_TEST_RUN, &a))
		return -1;
	prog_ns += (double)a.test.duration * repeat; /* duration: mean ns per repeat */
	return 0;
}

int main(int argc, char **argv)
{
	int fd = load();
	/* From the load on: the verifier's time on a loaded machine must not eat the runs (it took
	 * all 30 ms once: no run, no tick in the program). */
	double end = now_s() + arg_seconds(argc, argv, 0.03);

	if (fd < 0)
		return 2;
	while (now_s() < end)
		if (run(fd, 200))
			return 2;
	close(fd);
	printf("loaded %.3f %.3f\n", prog_ns / 1e6, clock_s(CLOCK_PROCESS_CPUTIME_ID) * 1e3);
	return 0;
}
