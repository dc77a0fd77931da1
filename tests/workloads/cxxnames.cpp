// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Ground truth for querying C++ names that hold commas (perch report's --select, --exclude,
// --fold, --callers, --callees; the HTML viewer's filter box): main -> q::drive(int, int), which
// calls the one leaf, void q::leaf<int, long>(q::Pair<int, long>&, int), through three callers
// with commas in their names: q::Acc::operator()(int, int), q::operator,(q::Acc&, int) and
// q::operator<(q::Acc const&, q::Acc const&) (an unbalanced '<'). Each burns a little itself.
#include "burn.h"

namespace q
{
template <typename A, typename B> struct Pair {
	A a;
	B b;
};

template <typename A, typename B> __attribute__((noinline)) void leaf(Pair<A, B> &p, int n)
{
	BURN(n * 1000);
	p.a++;
}

struct Acc {
	Pair<int, long> p;
	__attribute__((noinline)) void operator()(int n, int m)
	{
		BURN(m * 1000);
		leaf(p, n);
	}
};

__attribute__((noinline)) Acc &operator,(Acc &a, int n)
{
	BURN(n * 500);
	leaf(a.p, 2 * n);
	return a;
}

__attribute__((noinline)) bool operator<(const Acc &x, const Acc &y)
{
	Pair<int, long> p = x.p;

	leaf(p, 3);
	return p.a < y.p.a;
}

__attribute__((noinline)) void drive(int n, int m)
{
	static Acc acc;

	BURN(500);
	acc(n, m);
	(void)(acc, n);
	burn_sink += acc < acc;
}
} // namespace q

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 1.0);

	while (now_s() < end)
		q::drive(4, 2);
	return 0;
}
