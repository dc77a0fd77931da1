#!/usr/bin/env python3
"""The system metrics of one process (named NAME) in a chrome export (perch report --format=chrome), for
tests/integration/metrics.sh: per counter named "NAME UNIT" under its pid, its maximum and its
integral over time (value x duration, the duration up to the counter's next event: a rate
integrates to the amount, a percentage of a CPU to CPU time x 100). Prints "NAME max integral"
lines (NAME: the counter's name less its unit, spaces as "_": "cpu_user", "gpu0_gpu_util"); "system" counters (each CPU's busy share) are counted: "cpus N". The process is named as the export's
process_name metadata names it (the workload's comm).
"""
import json
import sys


def main():
    trace = json.load(open(sys.argv[1]))
    pids = [e["pid"] for e in trace["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"]["name"] == sys.argv[2]]
    if not pids:
        sys.exit("metrics_sum: no process named " + sys.argv[2])
    pid = pids[0]
    series = {}
    cpus = set()
    for e in trace["traceEvents"]:
        if e.get("ph") != "C" or e.get("cat") != "metrics":
            continue
        if e["pid"] != pid:
            if e["name"].startswith("cpu"):
                cpus.add(e["name"].split()[0])
            continue
        series.setdefault(e["name"], []).append((e["ts"] / 1e6, e["args"]["value"]))
    for name, pts in sorted(series.items()):
        pts.sort()
        integral = sum(v * (pts[i + 1][0] - t) for i, (t, v) in enumerate(pts[:-1]))
        print("_".join(name.split()[:-1]), max(v for _, v in pts), integral)
    print("cpus", len(cpus), 0)


main()
