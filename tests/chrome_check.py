#!/usr/bin/env python3
# tests/chrome_check.py TRACE DURATION_NS FOLDED CSV SPEEDSCOPE exact|- [atmost]: a --format=chrome
# trace held to the Trace Event Format and to perch's own numbers (tests/chrome.sh says what it
# checks; tests/integration/exports.sh runs it on live recordings). Prints "ok", or exits with
# what differs (exact: the recording's timeline holds every sample; atmost: the region table may
# count more calls than the spans hold, see the end).
import codecs, collections, json, re, sys

codecs.register_error("perbyte", lambda e: ("\ufffd" * (e.end - e.start), e.end))
trace, duration_ns, folded_path, csv_path, speedscope_path, exact_ticks = sys.argv[1:7]
regions_at_most = sys.argv[7:8] == ["atmost"]
exact_ticks = exact_ticks == "exact"
duration_ns = int(duration_ns)
num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)

def need(ok, what):
    if not ok:
        sys.exit("chrome: " + what)

d = json.load(open(trace, encoding="utf-8"))
need(isinstance(d, dict) and isinstance(d.get("traceEvents"), list), "an object with traceEvents")
need(d.get("displayTimeUnit", "ms") in ("ms", "ns"), "displayTimeUnit")
limit = duration_ns / 1000 + 0.001
open_spans = collections.defaultdict(list)
counters, ticks, slices = collections.Counter(), collections.Counter(), collections.Counter()
spans = collections.defaultdict(lambda: [0, 0])  # (tid, name) -> [calls, outermost time in ns]
tables = {}  # (tid, name) -> (calls, total_ns) from the slices of a recording with no time axis
flows = collections.defaultdict(dict)  # GPU launch flows: id -> {"s": event, "f": event}
rates = collections.defaultdict(list)  # pid -> its sample-rate counter events
for e in d["traceEvents"]:
    need(isinstance(e, dict) and e.get("ph") in tuple("MCiBEXsf"), "ph is one this exporter writes")
    need(all(isinstance(e.get(k), int) for k in ("pid", "tid")), "pid, tid")
    need(num(e.get("ts")) and 0 <= e["ts"] <= limit, "ts within the recording: %r" % e)
    ph, tid = e["ph"], e["tid"]
    if ph == "M":
        need(e["name"] in ("process_name", "thread_name"), "metadata names")
        need(isinstance(e["args"]["name"], str), "metadata name is a string")
    elif ph == "C" and e.get("cat") == "metrics":  # system metrics: one value, not samples
        need(list(e["args"]) == ["value"] and num(e["args"]["value"]) and e["args"]["value"] >= 0,
             "metric counter: %r" % e)
    elif ph == "C":  # samples per second from ts to the process's next counter event
        for k, v in e["args"].items():
            need(re.fullmatch(r"tid \d+", k) and num(v) and v >= 0, "counter series")
        need(e["name"].endswith("/s"), "counters are rates: %r" % e["name"])
        rates[e["pid"]].append(e)
    elif ph == "i":
        need(e.get("s") == "t" and e.get("cat") in ("cpu", "mark"), "instants on the thread")
        if e["cat"] == "cpu":
            need(isinstance(e["args"]["stack"], str) and e["name"], "ticks have a stack")
            ticks[tid] += 1
    elif ph in "sf":
        need(e.get("cat") == "launch" and isinstance(e.get("id"), int), "flows are GPU launches")
        need(ph not in flows[e["id"]], "one %s per flow id" % ph)
        flows[e["id"]][ph] = e
    elif ph == "X":
        need(num(e.get("dur")) and e["ts"] + e["dur"] <= limit, "slice within the recording")
        slices[tid] += e["args"].get("samples", 0)
        for name, row in e["args"].get("regions", {}).items():
            tables[(tid, name)] = (row["calls"], row["total_ns"])
    elif ph == "B":
        need(e.get("cat") == "region" and isinstance(e.get("name"), str), "B names a region")
        open_spans[(e["pid"], tid)].append(e)
    else:
        stack = open_spans[(e["pid"], tid)]
        need(stack and stack[-1]["name"] == e["name"], "E ends the innermost B: %r" % e)
        b = stack.pop()
        need(e["ts"] >= b["ts"], "E after its B")
        if e.get("args", {}).get("open_at_end"):
            continue
        s = spans[(tid, e["name"])]
        s[0] += 1
        if all(o["name"] != e["name"] for o in stack):  # the outermost of a recursion
            s[1] += round(e["ts"] * 1000) - round(b["ts"] * 1000)
need(not any(open_spans.values()), "every B has its E")
sums = collections.defaultdict(float)  # the rates times their windows' lengths: samples
for evs in rates.values():
    evs.sort(key=lambda e: e["ts"])
    need(all(v == 0 for v in evs[-1]["args"].values()), "the last counter is 0")
    for e, nxt in zip(evs, evs[1:]):
        for k, v in e["args"].items():
            sums[int(k[4:])] += v * (nxt["ts"] - e["ts"]) / 1e6
for t, v in sums.items():
    need(abs(v - round(v)) < 0.01, "tid %d: rates x windows give %r samples" % (t, v))
    counters[t] += round(v)
need(all(set(f) == {"s", "f"} and f["s"]["ts"] <= f["f"]["ts"] and f["f"].get("bp") == "e"
         and f["f"]["pid"] >= 0x40000000 for f in flows.values()),
     "each GPU flow: launch thread to a GPU track, forward in time")
# each tick is a sample its window counts; all of them when the timeline dropped none
need(all(n <= counters[t] for t, n in ticks.items()), "more ticks than samples")
need(not exact_ticks or ticks == counters, "ticks per thread: %r, counters %r" % (ticks, counters))

# per thread: speedscope's profiles ("comm (pid/tid)", their weights folded's lines, which
# tests/speedscope.sh checks); in all: folded's
got = collections.Counter({k: v for k, v in (counters + slices).items() if v})
want = collections.Counter()
for p in json.load(open(speedscope_path, encoding="utf-8"))["profiles"]:
    if p["type"] == "sampled":
        want[int(re.fullmatch(r".* \((\d+)/(\d+)\)", p["name"], re.S).group(2))] += p["endValue"]
if got != want:
    sys.exit("samples per thread: chrome %r, speedscope %r" % (dict(got), dict(want)))
text = open(folded_path, "rb").read().decode("utf-8", "perbyte")
folded = sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines())
if sum(got.values()) != folded:
    sys.exit("samples: chrome %d, folded %d" % (sum(got.values()), folded))

table = {}
rows = list(open(csv_path))
for row in rows[1:]:  # the columns after the name as the header lists them (gpu_s or not)
    f = row.rstrip("\n").rsplit(",", rows[0].count(","))
    if f[1]:
        table[(int(f[1]), f[0])] = (int(f[2]), round(float(f[3]) * 1e9))
shown = {k: tuple(v) for k, v in spans.items()} if spans else tables
# a recording with spans but no REGIONS block has no table; one without spans, no timeline
# calls exactly; times to 0.1 % and a microsecond a call: a live recording's spans are the
# runtime's clock readings converted one by one to CLOCK_MONOTONIC, its table their sums. atmost:
# a program that did not answer perch's exit handshake (region_processes_no_handshake) keeps the
# table of perch's last read, which counts the ends between that drain's window end and the read
# of the table, spans no read took: at most as many calls and as much time in the spans.
def close(a, b):
    if regions_at_most:
        return a[0] <= b[0] and a[1] <= b[1] * 1.001 + b[0] * 1000
    return a[0] == b[0] and abs(a[1] - b[1]) <= b[1] * 0.001 + b[0] * 1000
if table and (spans or tables) and (shown.keys() != table.keys()
                                    or not all(close(shown[k], table[k]) for k in table)):
    sys.exit("regions: chrome %r, csv %r" % (shown, table))
print("ok")
