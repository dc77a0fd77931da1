# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Ground truth for perch's Python frames (tests/integration/python.sh).

    python3 pyshare.py SEC     (SIGUSR1: a mark of the clocks; at the second, it ends)
    python3 pyshare.py off SEC
    python3 pyshare.py many SEC

Runs for SEC seconds of wall time, round after round: work_a, work_b and work_c spin in pure
Python for 3, 2 and 1 units of work, work_z compresses with zlib (C code under a Python
function), and rec recurses 40 deep before it spins. Each measures the CPU time it took with
time.thread_time() (the one thread runs them all), and at the end the workload prints one
"truth NAME SECONDS" line per function and the process's CPU time (cpu), so the test sets
perch's shares against what the program measured of itself.

With "off", the main thread blocks instead, round after round: nap sleeps 20 ms, wait_lock
waits 10 ms for a lock a helper thread holds, read_sock 5 ms for a socket a helper thread
writes; each measures its wall time (time.monotonic()) and prints it as its truth.

With "many", a forked child (as multiprocessing's fork start method makes one) runs work_forked
while four threads run work_t0 to work_t3, each its own CPU time; every one prints its truth
(the child its own cpu too, under "forked_cpu").
"""
import os
import signal
import socket
import sys
import threading
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


def walled(fn):
    def run(*args):
        t = time.monotonic()
        fn(*args)
        spent[fn.__name__] = spent.get(fn.__name__, 0.0) + time.monotonic() - t
    return run


@walled
def nap():
    time.sleep(0.02)


@walled
def wait_lock(lock, held):
    held.wait()
    lock.acquire()
    lock.release()


@walled
def read_sock(sock):
    sock.recv(1)


def holder(lock, held, go):
    while go.wait() and not stop.is_set():
        go.clear()
        with lock:
            held.set()
            time.sleep(0.01)


def writer(sock, ask):
    while ask.wait() and not stop.is_set():
        ask.clear()
        time.sleep(0.005)
        sock.send(b"x")


stop = threading.Event()


def blocking(seconds):
    lock, held, go, ask = threading.Lock(), threading.Event(), threading.Event(), threading.Event()
    mine, theirs = socket.socketpair()
    threads = [threading.Thread(target=holder, args=(lock, held, go)),
               threading.Thread(target=writer, args=(theirs, ask))]
    for t in threads:
        t.start()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        nap()
        held.clear()
        go.set()
        wait_lock(lock, held)
        ask.set()
        read_sock(mine)
    stop.set()
    go.set()
    ask.set()
    for t in threads:
        t.join()
    for name in ("nap", "wait_lock", "read_sock"):
        truth(name, spent.get(name, 0.0))


def threaded(i, seconds):
    def work():
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            spin(20000)
    work.__name__ = work.__qualname__ = f"work_t{i}"
    work.__code__ = work.__code__.replace(co_name=f"work_t{i}", co_qualname=f"work_t{i}")
    t = time.thread_time()
    work()
    spent[f"work_t{i}"] = time.thread_time() - t


def many(seconds):
    child = os.fork()
    if child == 0:
        t = time.thread_time()
        work_forked(seconds)
        truth("work_forked", time.thread_time() - t)
        truth("forked_cpu", time.process_time())
        os._exit(0)
    threads = [threading.Thread(target=threaded, args=(i, seconds)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os.waitpid(child, 0)
    for i in range(4):
        truth(f"work_t{i}", spent[f"work_t{i}"])
    truth("cpu", time.process_time())


def work_forked(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        spin(20000)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "many":
        many(float(sys.argv[2]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "off":
        blocking(float(sys.argv[2]))
        return
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    unit = 20000
    end = time.monotonic() + seconds
    marks = []
    signal.signal(signal.SIGUSR1, lambda *_: marks.append((dict(spent), time.process_time())))
    while time.monotonic() < end and len(marks) < 2:
        work_a(unit)
        work_b(unit)
        work_c(unit)
        work_z(unit)
        rec(unit)
    names = ("work_a", "work_b", "work_c", "work_z", "rec")
    for name in names:
        truth(name, spent.get(name, 0.0))
    truth("cpu", time.process_time())
    for k, (then, cpu) in enumerate(marks, 1):
        for name in names:
            truth(f"mark{k}.{name}", then.get(name, 0.0))
        truth(f"mark{k}.cpu", cpu)


main()
