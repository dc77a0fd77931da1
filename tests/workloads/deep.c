// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for deep stacks, built without frame pointers (-O2 -fomit-frame-pointer): main
 * calls f001, which calls f002, ... down to f120, which burns the CPU. Every sample taken in f120
 * must show all 120 functions between main and it. None of them is a tail call (each does work
 * after its call returns), so each keeps its frame.
 *
 *   deep [SECONDS]          the 120-deep chain
 *   deep SECONDS recurse    one function recursing 300 deep: deeper than the 127-frame limit,
 *                           so every sample at the bottom is truncated (and counted)
 */
#include <string.h>
#include "burn.h"

static volatile unsigned long after;

__attribute__((noinline)) void f120(void)
{
	BURN(200000);
	after++;
}

#define F(n, next)                             \
	void next(void);                       \
	__attribute__((noinline)) void n(void) \
	{                                      \
		next();                        \
		after++;                       \
	}

F(f001, f002)
F(f002, f003)
F(f003, f004)
F(f004, f005)
F(f005, f006)
F(f006, f007)
F(f007, f008)
F(f008, f009)
F(f009, f010)
F(f010, f011)
F(f011, f012)
F(f012, f013)
F(f013, f014)
F(f014, f015)
F(f015, f016)
F(f016, f017)
F(f017, f018)
F(f018, f019)
F(f019, f020)
F(f020, f021)
F(f021, f022)
F(f022, f023)
F(f023, f024)
F(f024, f025)
F(f025, f026)
F(f026, f027)
F(f027, f028)
F(f028, f029)
F(f029, f030)
F(f030, f031)
F(f031, f032)
F(f032, f033)
F(f033, f034)
F(f034, f035)
F(f035, f036)
F(f036, f037)
F(f037, f038)
F(f038, f039)
F(f039, f040)
F(f040, f041)
F(f041, f042)
F(f042, f043)
F(f043, f044)
F(f044, f045)
F(f045, f046)
F(f046, f047)
F(f047, f048)
F(f048, f049)
F(f049, f050)
F(f050, f051)
F(f051, f052)
F(f052, f053)
F(f053, f054)
F(f054, f055)
F(f055, f056)
F(f056, f057)
F(f057, f058)
F(f058, f059)
F(f059, f060)
F(f060, f061)
F(f061, f062)
F(f062, f063)
F(f063, f064)
F(f064, f065)
F(f065, f066)
F(f066, f067)
F(f067, f068)
F(f068, f069)
F(f069, f070)
F(f070, f071)
F(f071, f072)
F(f072, f073)
F(f073, f074)
F(f074, f075)
F(f075, f076)
F(f076, f077)
F(f077, f078)
F(f078, f079)
F(f079, f080)
F(f080, f081)
F(f081, f082)
F(f082, f083)
F(f083, f084)
F(f084, f085)
F(f085, f086)
F(f086, f087)
F(f087, f088)
F(f088, f089)
F(f089, f090)
F(f090, f091)
F(f091, f092)
F(f092, f093)
F(f093, f094)
F(f094, f095)
F(f095, f096)
F(f096, f097)
F(f097, f098)
F(f098, f099)
F(f099, f100)
F(f100, f101)
F(f101, f102)
F(f102, f103)
F(f103, f104)
F(f104, f105)
F(f105, f106)
F(f106, f107)
F(f107, f108)
F(f108, f109)
F(f109, f110)
F(f110, f111)
F(f111, f112)
F(f112, f113)
F(f113, f114)
F(f114, f115)
F(f115, f116)
F(f116, f117)
F(f117, f118)
F(f118, f119)
F(f119, f120)

__attribute__((noinline)) void recurse(int depth)
{
	if (depth > 0)
		recurse(depth - 1);
	else
		BURN(200000);
	after++;
}

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 2.0);
	int deep_recursion = argc > 2 && !strcmp(argv[2], "recurse");

	while (now_s() < end) {
		if (deep_recursion)
			recurse(300);
		else
			f001();
	}
	truth("cpu", process_cpu_s());
	return 0;
}
