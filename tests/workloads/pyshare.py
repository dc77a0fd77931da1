# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Ground truth for perch's Python frames (tests/integration/python.sh).

    python3 pyshare.py SEC

Runs for SEC seconds of wall time, round after round: work_a, work_b and work_c spin in pure
Python for 3, 2 and 1 units of work, work_z compresses with zlib (C code under a Python
function), and rec recurses 40 deep before it spins. Each measures the CPU time it took with
time.thread_time() (the one thread runs them all), and at the end the workload prints one
"truth NAME SECONDS" line per function and the process's CPU time (cpu), so the test sets
perch's shares against what the program measured of itself.
"""
import sys
import time
import zlib

spent = {}


def truth(name, value):
    print(f"truth {name} {value:.9f}", flush=True)


def timed(fn):
    def run(*args):
        t = time.thread_time()
        fn(*args)
        spent[fn.__name__] = spent.get(fn.__name__, 0.0) + time.thread_time() - t
    return run


def spin(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


@timed
def work_a(unit):
    spin(3 * unit)


@timed
def work_b(unit):
    spin(2 * unit)


@timed
def work_c(unit):
    spin(unit)


BLOB = bytes(range(256)) * 4096


@timed
def work_z(unit):
    for _ in range(max(1, unit // 20000)):
        zlib.compress(BLOB, 9)


def rec_down(depth, unit):
    if depth:
        rec_down(depth - 1, unit)
    else:
        spin(unit)


@timed
def rec(unit):
    rec_down(39, unit)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    unit = 20000
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        work_a(unit)
        work_b(unit)
        work_c(unit)
        work_z(unit)
        rec(unit)
    for name in ("work_a", "work_b", "work_c", "work_z", "rec"):
        truth(name, spent.get(name, 0.0))
    truth("cpu", time.process_time())


main()
