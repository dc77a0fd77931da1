#!/bin/bash
# --format=speedscope checked against the file format's rules and against perch's own folded
# stacks, on the recordings of tests/golden/ and tests/corpus/ that load cleanly:
#   - `python3 -m json.tool` parses it;
#   - the checker below holds it to https://www.speedscope.app/file-format-schema.json (required
#     keys and their types, units, frame indices in range, as many weights as samples; evented
#     profiles of region spans and of off-CPU blocks (tests/corpus/offcpu-timeline.data): opens
#     and closes in time order, nested) and to
#     perch's choices (unit "none", endValue - startValue the profile's weight, names
#     "comm (pid/tid)", activeProfileIndex the heaviest sampled profile);
#   - the folded stacks recomputed from it (the profile's comm, then each frame's name, ';'
#     between them, weights summed over equal stacks) are `perch report --format=folded`'s lines,
#     exactly, by function, with --lines, with --no-demangle and with --region=NAME for each region.
# Recordings need nothing from this machine, and neither does this test (no BPF, no root).
#   bash tests/speedscope.sh [BUILD]
set -u
cd "$(dirname "$0")/.." || exit 1
PERCH=${1:-build}/perch
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

check() { # check WHAT GOT WANT
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL speedscope: $1: got '$2', want '$3'"
	fi
}

# refold JSON: the speedscope file's samples as folded lines (after checking its form), sorted;
# names that are not UTF-8 compare as speedscope gets them, one U+FFFD
# per byte of each bad sequence.
cat >"$T/refold.py" <<'PY'
import codecs, collections, json, re, sys

codecs.register_error("perbyte", lambda e: ("\ufffd" * (e.end - e.start), e.end))
UNITS = {"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}
num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)

def need(ok, what):
    if not ok:
        sys.exit("speedscope schema: " + what)

def fold(s):  # folded's separators in names (report/folded.c)
    return s.replace(";", ":").replace("\r", " ").replace("\n", " ")

d = json.load(open(sys.argv[1], encoding="utf-8"))
need(isinstance(d, dict), "top level is an object")
need(d.get("$schema") == "https://www.speedscope.app/file-format-schema.json", "$schema")
for k in ("name", "exporter"):
    need(isinstance(d.get(k, ""), str), k + " is a string")
frames = d.get("shared", {}).get("frames")
need(isinstance(frames, list), "shared.frames is an array")
for f in frames:
    need(isinstance(f, dict) and isinstance(f.get("name"), str), "frame has a name")
    need(isinstance(f.get("file", ""), str), "frame file is a string")
    need(num(f.get("line", 0)) and num(f.get("col", 0)), "frame line/col are numbers")
    need(set(f) <= {"name", "file", "line", "col"}, "frame keys")
profiles = d.get("profiles")
need(isinstance(profiles, list), "profiles is an array")
if "activeProfileIndex" in d:
    need(num(d["activeProfileIndex"]) and 0 <= d["activeProfileIndex"] < len(profiles),
         "activeProfileIndex in range")
def evented(p):  # region spans or off-CPU blocks: opens and closes in time order, nested
    need(p.get("unit") in UNITS and num(p.get("startValue")) and num(p.get("endValue")), "unit")
    m = re.fullmatch(r"(regions|off-CPU) of (.*) \((\d+)/(\d+)\)", p.get("name", ""), re.S)
    need(m, "name")
    need(isinstance(p.get("events"), list), "events is an array")
    at, stack = p["startValue"], []
    for e in p["events"]:
        need(isinstance(e, dict) and e.get("type") in ("O", "C"), "event type O or C")
        need(isinstance(e.get("frame"), int) and 0 <= e["frame"] < len(frames), "event frame")
        need(num(e.get("at")) and at <= e["at"] <= p["endValue"], "events in order, in range")
        need(m.group(1) == "off-CPU" or frames[e["frame"]]["name"].startswith("region:"),
             "region events' frames are regions")
        at = e["at"]
        if e["type"] == "O":
            stack.append(e["frame"])
        else:
            need(stack and stack.pop() == e["frame"], "a close ends the innermost open frame")
    need(not stack, "every open frame closes")

stacks = collections.Counter()
sampled = [p["endValue"] - p["startValue"] if p.get("type") == "sampled" else -1 for p in profiles]
if sampled and max(sampled) >= 0:  # opens on the heaviest sampled profile, the first of equals
    need(d.get("activeProfileIndex") == sampled.index(max(sampled)),
         "activeProfileIndex is the heaviest sampled profile")
for p in profiles:
    if isinstance(p, dict) and p.get("type") == "evented":
        evented(p)
        continue
    need(isinstance(p, dict) and p.get("type") == "sampled", "profile type sampled")
    need(isinstance(p.get("name"), str), "profile name is a string")
    need(p.get("unit") in UNITS and p["unit"] == "none", "unit none")
    need(num(p.get("startValue")) and num(p.get("endValue")), "start/endValue numbers")
    samples, weights = p.get("samples"), p.get("weights")
    need(isinstance(samples, list) and isinstance(weights, list), "samples, weights arrays")
    need(len(samples) == len(weights), "as many weights as samples")
    need(all(num(w) and w >= 0 for w in weights), "weights are numbers")
    need(p["endValue"] - p["startValue"] == sum(weights), "endValue - startValue is the weight")
    m = re.fullmatch(r"(.*) \((\d+)/(\d+)\)", p["name"], re.S)
    need(m is not None, "profile name is comm (pid/tid)")
    for s, w in zip(samples, weights):
        need(isinstance(s, list) and s, "a sample is a non-empty array")
        need(all(isinstance(i, int) and 0 <= i < len(frames) for i in s), "frame index in range")
        stacks[";".join([fold(m.group(1))] + [fold(frames[i]["name"]) for i in s])] += w
sys.stdout.write("".join(sorted(f"{k} {v}\n" for k, v in stacks.items())))
PY

# folded ARGS...: perch's folded lines, decoded as refold.py decodes names, sorted as it sorts
folded() {
	"$PERCH" report --format=folded "$@" | python3 -c '
import codecs, sys
codecs.register_error("perbyte", lambda e: ("\ufffd" * (e.end - e.start), e.end))
text = sys.stdin.buffer.read().decode("utf-8", "perbyte")
sys.stdout.write("".join(sorted(text.splitlines(keepends=True))))'
}

# compare WHAT ARGS...: the speedscope export with ARGS against folded's
compare() {
	local what=$1 err
	shift
	"$PERCH" report --format=speedscope -o "$T/s.json" "$@" || { check "$what: export" failed ok; return; }
	err=$(python3 -m json.tool "$T/s.json" 2>&1 >/dev/null)
	check "$what: json.tool" "${err:-parses}" parses
	err=$(diff <(python3 "$T/refold.py" "$T/s.json" 2>&1) <(folded "$@"))
	check "$what: schema, and stacks equal folded" "${err:-same}" same
}

# and a version 4 recording with region spans (tests/mkrec): its evented profiles
recordings=(tests/golden/*.data tests/corpus/*.data)
if [ -x "${1:-build}/tests/mkrec" ]; then
	"${1:-build}/tests/mkrec" -n 3000 -s 20 -t 2 --timeline --regions "$T/v4-timeline.data"
	recordings+=("$T/v4-timeline.data")
fi
for data in "${recordings[@]}"; do
	base=$(basename "$data" .data)
	"$PERCH" report --format=stats "$data" >/dev/null 2>&1 || continue # loads cleanly only
	for opts in "" "--lines" "--no-demangle"; do
		# shellcheck disable=SC2086
		compare "$base ${opts:-by function}" $opts "$data"
	done
	for r in $("$PERCH" report --format=csv "$data" | awk -F, 'NR > 1 && $2 == "" { print $1 }' | sort -u); do
		compare "$base --region=$r" --region="$r" "$data"
	done
done
# stdout is the default, and the same bytes as -o
"$PERCH" report --format=speedscope -o "$T/o.json" tests/corpus/shares.data
check "stdout equals -o" "$("$PERCH" report --format=speedscope tests/corpus/shares.data | cmp - "$T/o.json" && echo same)" same
echo "speedscope: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
