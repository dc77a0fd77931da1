# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The rows of tests/test_pyline.c: real location tables and the line of every code unit (see there)."""
import sys, zlib, json

def f_simple(n):
    x = 0
    for i in range(n):
        x += i * i
    return x

def f_multi(a,
            b):
    if a:
        return (a +
                b)
    try:
        raise ValueError(
            "x")
    except ValueError:
        pass
    return [i for i in range(3)]

class K:
    def m(self):
        def inner():
            return 1
        return inner()

def f_long():
    y = 1
    # many blank lines to force long deltas



















    z = 2
    return y + z

out = []
for fn in (f_simple, f_multi, K.m, f_long, json.dumps):
    c = fn.__code__
    units = {}
    for start, end, line in c.co_lines():
        for off in range(start, end, 2):
            units[off // 2] = -1 if line is None else line
    n = len(c.co_code) // 2
    exp = [units.get(u, -1) for u in range(n)]
    print(f"/* {sys.version.split()[0]} {c.co_qualname} */")
    print("{%d, \"%s\", %d, (const int[]){%s}, %d}," % (c.co_firstlineno, "".join("\\x%02x" % b for b in c.co_linetable), len(c.co_linetable), ",".join(map(str, exp)), n))
