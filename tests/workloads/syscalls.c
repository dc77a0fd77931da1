// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ground truth: do_syscalls spends its time in write(2) and getppid(2), i.e. in the kernel. */
#include <fcntl.h>
#include <unistd.h>
#include "burn.h"

static char buf[65536];

__attribute__((noinline)) void do_syscalls(int fd)
{
	for (int i = 0; i < 64; i++) {
		if (write(fd, buf, sizeof(buf)) < 0)
			_exit(1);
		getppid();
	}
}

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 2.0);
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return 1;
	while (now_s() < end)
		do_syscalls(fd);
	return 0;
}
