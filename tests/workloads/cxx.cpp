// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Ground truth for C++ names: the time goes to work::spin<3>(), reported demangled by default
// and as _ZN4work4spinILi3EEEvv with --no-demangle.
#include "burn.h"

namespace work
{
template <int N> __attribute__((noinline)) void spin()
{
	BURN(N * 30000);
}
} // namespace work

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 1.0);

	while (now_s() < end)
		work::spin<3>();
	return 0;
}
